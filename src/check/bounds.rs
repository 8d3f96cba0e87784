//! How close a device result must be to its host reference: the unit roundoff of each float
//! type, the combination depth of a plan (Higham's bound), and the checks of a result against a
//! [`Reference`] (exact for integers, within a bound for floats).

use crate::ops::host::Reference;
use crate::ops::Op;
use crate::plan::{CrossAlgo, GroupAlgo, Plan};
use crate::types::{ElemType, Value};

/// Unit roundoff of a float type.
pub fn unit_roundoff(ty: ElemType) -> f64 {
    match ty {
        ElemType::F32 => f32::EPSILON as f64 / 2.0,
        ElemType::F16 => 0.000_488_281_25,
        ElemType::BF16 => 0.003_906_25,
        _ => f64::EPSILON / 2.0,
    }
}

/// The longest chain of combinations any input passes through under `plan` (var `k`): the
/// per-work-item loop, the work-group step and the cross-group step. Higham's bound for any
/// summation tree of depth d is d·u·Σ|x| (to first order).
pub fn combination_depth(plan: &Plan, k: usize) -> f64 {
    let v = &plan.vars[k];
    let log2 = |x: f64| x.max(1.0).log2().ceil();
    let group = match v.group {
        GroupAlgo::LocalAtomic => plan.local as f64,
        _ => log2(plan.local as f64) + 1.0,
    };
    let cross = match v.cross {
        CrossAlgo::Atomic => plan.groups as f64,
        _ => (plan.groups as f64 / plan.local as f64).ceil() + log2(plan.local as f64) + 1.0,
    };
    plan.items_per_work_item as f64 + plan.unroll as f64 + group + cross + 2.0
}

/// Checks a device result against the reference: exact for integers and for float
/// min/max/logical ops; for float plus, |err| <= depth·u·Σ|x| (plus one ulp of the result);
/// for float multiplies, |err| <= (n+1)·u·|ref|.
pub fn check(
    op: Op,
    ty: ElemType,
    got: f64,
    got_int: Option<i128>,
    r: &Reference,
    depth: f64,
) -> Result<(), String> {
    if let Some(exact) = r.exact {
        let g = got_int.unwrap_or(i128::MIN);
        return if g == exact {
            Ok(())
        } else {
            Err(format!("got {g}, expected exactly {exact}"))
        };
    }
    let u = unit_roundoff(ty);
    let bound = match op {
        Op::Plus => depth * u * r.sum_abs + 2.0 * u * r.value.abs(),
        Op::Multiplies => (r.n as f64 + 2.0) * u * r.value.abs(),
        _ => 0.0,
    };
    let err = (got - r.value).abs();
    if err <= bound
        || (got.is_nan() && r.value.is_nan())
        || got == r.value
        || super::overflow::sum_overflow(Some(op), ty, got, r.sum_abs, bound).is_some()
    {
        Ok(())
    } else {
        Err(format!(
            "got {got:e}, expected {:e} within {bound:e} (error {err:e})",
            r.value
        ))
    }
}

/// How a float result is bounded, by what the combiner computes: `Some(Plus)` depth·u·Σ|x|
/// (plus 2u·|ref|), `Some(Multiplies)` (n+2)·u·|ref|, other built-in ops exactly (they select
/// an operand), and `None` (a custom combiner that matches no built-in op) the sum of the plus
/// and product bounds, a heuristic that holds for associative combiners built of + and *.
pub fn float_bound(behaves_as: Option<Op>, ty: ElemType, r: &Reference, depth: f64) -> f64 {
    let u = unit_roundoff(ty);
    let plus = depth * u * r.sum_abs + 2.0 * u * r.value.abs();
    let prod = (r.n as f64 + 2.0) * u * r.value.abs();
    match behaves_as {
        Some(Op::Plus) => plus,
        Some(Op::Multiplies) => prod,
        Some(_) => 0.0,
        None => plus + prod,
    }
}

/// Checks a result against a reference: integers exactly, floats within `bound` (equal NaNs
/// and equal infinities match).
pub fn check_within(got: Value, r: &Reference, bound: f64) -> Result<(), String> {
    if let Some(exact) = r.exact {
        let g = match got {
            Value::F32(_) | Value::F64(_) => None,
            v => v.as_int(),
        };
        return if g == Some(exact) {
            Ok(())
        } else {
            Err(format!("got {got}, expected exactly {exact}"))
        };
    }
    let g = got.to_f64();
    let err = (g - r.value).abs();
    if err <= bound || (g.is_nan() && r.value.is_nan()) || g == r.value {
        Ok(())
    } else {
        Err(format!(
            "got {g:e}, expected {:e} within {bound:e} (error {err:e})",
            r.value
        ))
    }
}
