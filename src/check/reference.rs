//! Host references: what a reduction of a [`HostVec`] must give, folded by the ops' own host
//! combine (`ops::host`): built-in ops and custom combiners ([`reference`], [`reference_with`]),
//! argmin/argmax ([`reference_arg`]), span reductions (per-bin folds, [`reference_span`]) and
//! the correctly rounded sums of exact plans ([`reference_exact`]). Integers exactly with
//! wrapping, floats in float64. The inputs and the bounds the checks use are in `inputs` and
//! `bounds`, re-exported here so that `check::reference::*` names every oracle.

pub use super::bounds::{check, check_within, combination_depth, float_bound, unit_roundoff};
pub use super::inputs::{random_initial, random_input, random_input_ties, value_of, Rng};
pub use crate::ops::host::{HostOp, Reference};
use crate::ops::expr::Expr;
use crate::ops::host::{arg_wins, compare, int_value, Fold};
use crate::ops::{identity_counterexample, Op};
pub use crate::types::HostVec;
use crate::types::{ElemType, Value};

/// The reduction of `data` with `op`, starting from `init` (the variable's initial value, or
/// `None` under initialize_to_identity). Integers exactly with wrapping; floats in float64.
pub fn reference(op: Op, data: &HostVec, init: Option<Value>) -> Reference {
    reference_with(HostOp::Builtin(op), data, init).expect("a built-in op folds every input")
}

/// The built-in op a custom combiner computes on sample operand pairs of `ty` (evaluated in
/// `ty` with [`Expr::eval`], against [`Op::combine`]), if any: `a*b` is prod, `max(a,b)` and `a > b ? a : b` are max.
/// Used to pick test data and the float error bound of a custom reduction; it is a sample, not
/// a proof.
pub fn custom_behaves_as(expr: &Expr, ty: ElemType) -> Option<Op> {
    let ints: [(i64, i64); 8] = [
        (2, 3),
        (-7, 5),
        (0, 9),
        (12, 10),
        (6, 6),
        (-4, -9),
        (1, 0),
        (255, 256),
    ];
    let floats: [(f64, f64); 8] = [
        (2.0, 3.0),
        (-1.5, 0.25),
        (0.0, 5.0),
        (4.0, -4.0),
        (-3.0, -2.5),
        (6.5, 6.5),
        (1.0, 0.0),
        (0.125, 64.0),
    ];
    let pairs: Vec<(Value, Value)> = if ty.is_float() {
        let typed = |x: f64| match ty {
            ElemType::F32 => Value::F32(x as f32),
            _ => Value::F64(x),
        };
        floats.map(|(a, b)| (typed(a), typed(b))).to_vec()
    } else {
        ints.map(|(a, b)| (int_value(ty, a as i128), int_value(ty, b as i128)))
            .to_vec()
    };
    Op::ALL
        .into_iter()
        .filter(|op| op.valid_for(ty))
        .find(|&op| {
            pairs.iter().all(|&(a, b)| {
                matches!((op.combine(a, b), expr.eval(ty, a, b)), (Ok(want), Ok(got)) if got == want)
            })
        })
}

/// Checks that `identity` is neutral for `expr` on `samples` (both operand orders, evaluated in
/// the identity's type): the device combines the identity into partial results any number of
/// times, so a value that is not neutral gives a wrong result. The error says which operands
/// show it, or why the host could not evaluate the combiner on a sample. The CLI checks
/// `--identity` with this on its input; the library checks every declared identity with
/// `identity_counterexample` on `identity_samples` (`ops::custom`) at plan time.
pub fn check_custom_identity(
    expr: &Expr,
    identity: Value,
    samples: &[Value],
) -> Result<(), String> {
    let ty = identity.ty();
    for &x in samples {
        if let Some(c) = identity_counterexample(expr, identity, &[x])? {
            return Err(format!(
                "{identity} is not an identity on {ty}: with a = {}, b = {} the combiner gives {}, not {x}",
                c.a, c.b, c.got
            ));
        }
    }
    Ok(())
}

/// The reduction of `data` with a built-in op or a custom combiner, folded left to right from
/// `init` (the variable's initial value, or `None` under initialize_to_identity, which needs an
/// identity). Integers exactly with wrapping, floats in float64, like [`reference()`]. An error
/// names what the host could not evaluate.
pub fn reference_with(
    op: HostOp,
    data: &HostVec,
    init: Option<Value>,
) -> Result<Reference, String> {
    reference_indices(op, data, 0..data.len(), init)
}

/// [`reference_with`] over the elements at `idx` only: the host's [`Fold`] from `init` or the
/// identity.
fn reference_indices(
    op: HostOp,
    data: &HostVec,
    idx: impl Iterator<Item = usize>,
    init: Option<Value>,
) -> Result<Reference, String> {
    let mut fold = Fold::start(data.ty(), init.or_else(|| op.identity(data.ty())));
    for i in idx {
        fold.push(op, data.value(i))?;
    }
    fold.finish()
        .ok_or_else(|| "an identity-less reduction of nothing has no value".to_string())
}

/// The host's argmin/argmax: the extreme value and the lowest index holding it, starting from
/// the variable's initial (value, index) pair or, under initialize_to_identity (`None`), from
/// (the type's largest value for argmin / smallest for argmax, u64::MAX).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArgReference {
    /// The winning value.
    pub value: Value,
    /// Its index: the lowest one holding the value, the start's index included.
    pub index: u64,
    /// How many elements of the input equal the winning value (ties resolved to the lowest
    /// index).
    pub ties: usize,
}

/// See [`ArgReference`]. Exact for every type. Follows the device's rule (`clr_push` in
/// kernels/var.cl): an element replaces the running pair when it is strictly better, or equal
/// with a lower index; every comparison with NaN is false, so a NaN element never wins (it is
/// skipped, as `fmin`/`fmax` skip it) and an all-NaN input gives the starting pair (the
/// identity pair with index `u64::MAX` under initialize_to_identity). design/algorithms.md,
/// "NaN in min, max, argmin and argmax".
pub fn reference_arg(max: bool, data: &HostVec, init: Option<(Value, u64)>) -> ArgReference {
    let (mut best, mut best_i) = init.unwrap_or_else(|| {
        let op = if max { Op::Maximum } else { Op::Minimum };
        (op.identity(data.ty()).expect("min/max have identities"), u64::MAX)
    });
    for j in 0..data.len() {
        let x = data.value(j);
        if arg_wins(max, x, j as u64, best, best_i) {
            (best, best_i) = (x, j as u64);
        }
    }
    let ties = (0..data.len())
        .filter(|&j| compare(data.value(j), best) == Some(std::cmp::Ordering::Equal))
        .count();
    ArgReference {
        value: best,
        index: best_i,
        ties,
    }
}

/// Multiplier of the span bin hash (see [`span_bin`]).
const BIN_MUL: u64 = 131;

/// The bin element `j` of a span reduction of `len` bins goes to, from its value and its index:
/// `(key(x[j]) * 131 + j) mod len` in wrapping u64 arithmetic, where `key` is `(ulong)x` for
/// integers and the bit pattern for floats. [`span_bin_cl`] is the same in OpenCL C.
pub fn span_bin(data: &HostVec, j: usize, len: usize) -> usize {
    (data.key(j).wrapping_mul(BIN_MUL).wrapping_add(j as u64) % len.max(1) as u64) as usize
}

/// [`span_bin`] as an OpenCL C expression over the element `x` (of type `ty`) and its index
/// `i`, for a kernel body.
pub fn span_bin_cl(ty: ElemType, x: &str, len: usize) -> String {
    let key = match ty {
        ElemType::F32 => format!("(ulong)as_uint({x})"),
        ElemType::F64 => format!("as_ulong({x})"),
        _ => format!("(ulong)({x})"),
    };
    format!("(({key} * {BIN_MUL}ul + (ulong)i) % {}ul)", len.max(1))
}

/// The host's span reduction: bin `b` folds, in index order, the elements `j` with
/// `span_bin(data, j, len) == b`, starting from `init[b]` (or the identity under
/// initialize_to_identity, `None`).
pub fn reference_span(
    op: HostOp,
    data: &HostVec,
    len: usize,
    init: Option<&[Value]>,
) -> Result<Vec<Reference>, String> {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); len];
    for j in 0..data.len() {
        members[span_bin(data, j, len)].push(j);
    }
    members
        .into_iter()
        .enumerate()
        .map(|(b, m)| reference_indices(op, data, m.into_iter(), init.map(|v| v[b])))
        .collect()
}

/// The exact sum of the elements at `idx` (and `init`), rounded once to nearest-even in the
/// data's float type: what `Determinism::Exact` must give, bit for bit. `None` for integer data.
fn exact_indices(
    data: &HostVec,
    idx: impl Iterator<Item = usize>,
    init: Option<Value>,
) -> Option<Value> {
    let mut acc = crate::exact::Superacc::for_type(data.ty()).ok()?;
    let mut add = |x: f64| match data.ty() {
        ElemType::F32 => acc.add_f32(x as f32),
        _ => acc
            .add_f64(x)
            .expect("an f64 superaccumulator takes every f64"),
    };
    if let Some(v) = init {
        add(v.to_f64());
    }
    for i in idx {
        add(data.float(i));
    }
    Some(match data.ty() {
        ElemType::F32 => Value::F32(acc.round_f32()),
        _ => Value::F64(acc.round_f64()),
    })
}

/// The correctly rounded sum of every element of float `data` (and `init`): the exact
/// reference of an exact sum (`Determinism::Exact`). `None` for integer data.
pub fn reference_exact(data: &HostVec, init: Option<Value>) -> Option<Value> {
    exact_indices(data, 0..data.len(), init)
}

/// [`reference_exact`] per bin of a span (bins as [`span_bin`] assigns them).
pub fn reference_exact_span(
    data: &HostVec,
    len: usize,
    init: Option<&[Value]>,
) -> Option<Vec<Value>> {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); len];
    for j in 0..data.len() {
        members[span_bin(data, j, len)].push(j);
    }
    members
        .into_iter()
        .enumerate()
        .map(|(b, m)| exact_indices(data, m.into_iter(), init.map(|v| v[b])))
        .collect()
}

#[cfg(test)]
#[path = "reference_tests.rs"]
mod tests;
