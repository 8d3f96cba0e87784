//! Host references and test data: seeded random inputs per (op, type), exact integer results,
//! float64 references for floats with an error bound derived from the plan's combination depth.

use crate::ops::{wrap_to, Op};
use crate::plan::{CrossAlgo, GroupAlgo, Plan};
use crate::types::{ElemType, Value};

/// SplitMix64: small, seedable, good enough for test inputs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo) as u64 + 1)) as i64
    }
}

/// A typed host vector.
#[derive(Debug, Clone, PartialEq)]
pub enum HostVec {
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl HostVec {
    pub fn len(&self) -> usize {
        match self {
            HostVec::I32(v) => v.len(),
            HostVec::U32(v) => v.len(),
            HostVec::I64(v) => v.len(),
            HostVec::U64(v) => v.len(),
            HostVec::F32(v) => v.len(),
            HostVec::F64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn ty(&self) -> ElemType {
        match self {
            HostVec::I32(_) => ElemType::I32,
            HostVec::U32(_) => ElemType::U32,
            HostVec::I64(_) => ElemType::I64,
            HostVec::U64(_) => ElemType::U64,
            HostVec::F32(_) => ElemType::F32,
            HostVec::F64(_) => ElemType::F64,
        }
    }
    /// Element `i` as an exact integer (integers) — floats are not representable this way.
    fn int(&self, i: usize) -> i128 {
        match self {
            HostVec::I32(v) => v[i] as i128,
            HostVec::U32(v) => v[i] as i128,
            HostVec::I64(v) => v[i] as i128,
            HostVec::U64(v) => v[i] as i128,
            _ => unreachable!("int() on floats"),
        }
    }
    fn float(&self, i: usize) -> f64 {
        match self {
            HostVec::F32(v) => v[i] as f64,
            HostVec::F64(v) => v[i],
            _ => self.int(i) as f64,
        }
    }
}

/// Seeded random input for (op, type): never all zeros, chosen so that results stay
/// meaningful (products do not collapse to 0 or overflow to infinity, logical ops are not
/// decided by the first element) and float values are exactly representable (k/64).
pub fn random_input(op: Op, ty: ElemType, n: usize, seed: u64) -> HostVec {
    let mut r = Rng::new(seed ^ ((op as u64) << 40) ^ ((ty as u64) << 48));
    let rare = |r: &mut Rng| n > 0 && r.next_u64() % (n as u64).max(1) < 24;
    let gen_i = |r: &mut Rng| -> i64 {
        match op {
            Op::Plus => r.range(-1_000_000, 1_000_000),
            Op::Multiplies => {
                if rare(r) {
                    [3, -1, 5, -3][r.range(0, 3) as usize]
                } else {
                    1
                }
            }
            Op::LogicalAnd => {
                if rare(r) {
                    0
                } else {
                    r.range(1, 9)
                }
            }
            Op::LogicalOr => {
                if rare(r) {
                    r.range(1, 9)
                } else {
                    0
                }
            }
            _ => r.next_u64() as i64,
        }
    };
    let gen_f = |r: &mut Rng| -> f64 {
        match op {
            Op::Multiplies => {
                if rare(r) {
                    [2.0, 0.5, -1.0, 4.0][r.range(0, 3) as usize]
                } else {
                    1.0
                }
            }
            Op::LogicalAnd => {
                if rare(r) {
                    0.0
                } else {
                    r.range(1, 64) as f64 / 64.0
                }
            }
            Op::LogicalOr => {
                if rare(r) {
                    r.range(1, 64) as f64 / 64.0
                } else {
                    0.0
                }
            }
            _ => r.range(-64 * 64, 64 * 64) as f64 / 64.0,
        }
    };
    match ty {
        ElemType::I32 => HostVec::I32((0..n).map(|_| gen_i(&mut r) as i32).collect()),
        ElemType::U32 => HostVec::U32((0..n).map(|_| gen_i(&mut r) as u32).collect()),
        ElemType::I64 => HostVec::I64((0..n).map(|_| gen_i(&mut r)).collect()),
        ElemType::U64 => HostVec::U64((0..n).map(|_| gen_i(&mut r) as u64).collect()),
        ElemType::F32 => HostVec::F32((0..n).map(|_| gen_f(&mut r) as f32).collect()),
        ElemType::F64 | ElemType::F16 => HostVec::F64((0..n).map(|_| gen_f(&mut r)).collect()),
    }
}

/// A non-identity initial value for the result variable.
pub fn random_initial(op: Op, ty: ElemType, seed: u64) -> Value {
    let mut r = Rng::new(seed.wrapping_mul(31).wrapping_add(7));
    let i = match op {
        Op::Multiplies => 3,
        // Not the identity (1 for logical_and), so the initial value's inclusion is checked.
        Op::LogicalAnd | Op::LogicalOr => 5,
        Op::Minimum => r.range(1 << 20, 1 << 30),
        Op::Maximum => -r.range(1 << 20, 1 << 30),
        _ => r.range(1, 1000),
    };
    value_of(ty, i)
}

/// A value of type `ty` from an integer; floats get i/4, exactly representable.
pub fn value_of(ty: ElemType, i: i64) -> Value {
    match ty {
        ElemType::I32 => Value::I32(i as i32),
        ElemType::U32 => Value::U32(i as u32),
        ElemType::I64 => Value::I64(i),
        ElemType::U64 => Value::U64(i as u64),
        ElemType::F32 => Value::F32(i as f32 * 0.25),
        ElemType::F64 | ElemType::F16 => Value::F64(i as f64 * 0.25),
    }
}

/// The host's answer for one reduction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// Exact result for integer types.
    pub exact: Option<i128>,
    /// Float64 result (also set for integers, for printing).
    pub value: f64,
    /// Sum of absolute values of everything combined (for float error bounds).
    pub sum_abs: f64,
    pub n: usize,
}

fn value_int(v: Value) -> i128 {
    match v {
        Value::I32(x) => x as i128,
        Value::U32(x) => x as i128,
        Value::I64(x) => x as i128,
        Value::U64(x) => x as i128,
        Value::F32(x) => x as i128,
        Value::F64(x) => x as i128,
    }
}

/// The reduction of `data` with `op`, starting from `init` (the variable's initial value, or
/// `None` under initialize_to_identity). Integers exactly with wrapping; floats in float64.
pub fn reference(op: Op, data: &HostVec, init: Option<Value>) -> Reference {
    let ty = data.ty();
    let n = data.len();
    let id = op.identity(ty).expect("built-in ops have identities");
    if ty.is_float() {
        let mut acc = init.unwrap_or(id).to_f64();
        let mut sum_abs = acc.abs();
        for i in 0..n {
            let x = data.float(i);
            sum_abs += x.abs();
            acc = op.combine_f64(acc, x);
        }
        Reference {
            exact: None,
            value: acc,
            sum_abs,
            n,
        }
    } else {
        let mut acc = value_int(init.unwrap_or(id));
        for i in 0..n {
            acc = op.combine_int(ty, acc, data.int(i));
        }
        let acc = wrap_to(ty, acc);
        Reference {
            exact: Some(acc),
            value: acc as f64,
            sum_abs: 0.0,
            n,
        }
    }
}

/// Unit roundoff of a float type.
pub fn unit_roundoff(ty: ElemType) -> f64 {
    match ty {
        ElemType::F32 => f32::EPSILON as f64 / 2.0,
        ElemType::F16 => 0.000_488_281_25,
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
    if err <= bound || (got.is_nan() && r.value.is_nan()) || got == r.value {
        Ok(())
    } else {
        Err(format!(
            "got {got:e}, expected {:e} within {bound:e} (error {err:e})",
            r.value
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn random_is_seeded_and_not_all_zero() {
        for op in Op::ALL {
            for ty in ElemType::REDUCIBLE {
                let a = random_input(op, ty, 1000, 1);
                assert_eq!(a, random_input(op, ty, 1000, 1));
                let nz = (0..a.len()).filter(|&i| a.float(i) != 0.0).count();
                assert!(nz > 0, "{op} {ty}");
            }
        }
    }
    #[test]
    fn reference_wraps_integers() {
        let r = reference(Op::Plus, &HostVec::I32(vec![i32::MAX, 1]), None);
        assert_eq!(r.exact, Some(i32::MIN as i128));
        let r = reference(
            Op::Minimum,
            &HostVec::U32(vec![5, 3, 9]),
            Some(Value::U32(4)),
        );
        assert_eq!(r.exact, Some(3));
    }
}
