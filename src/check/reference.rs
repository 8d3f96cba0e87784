//! Host references and test data: seeded random inputs per (op, type), exact integer results,
//! float64 references for floats with an error bound derived from the plan's combination depth.

use crate::ops::{wrap_to, Op};
use crate::plan::{CrossAlgo, GroupAlgo, Plan};
pub use crate::types::HostVec;
use crate::types::{ElemType, Value};

/// SplitMix64: small, seedable, good enough for test inputs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (the same seed gives the same sequence).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// The next 64 random bits.
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

impl HostVec {
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
        ElemType::F64 | ElemType::F16 | ElemType::BF16 => {
            HostVec::F64((0..n).map(|_| gen_f(&mut r)).collect())
        }
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
        ElemType::F64 | ElemType::F16 | ElemType::BF16 => Value::F64(i as f64 * 0.25),
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
    /// Number of elements combined (the initial value not counted).
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

// ---------------------------------------------------------------------------------------------
// References beyond one built-in scalar: argmin/argmax, custom combiners (through
// `crate::expr`), span reductions (per-bin folds) and the float bounds their checks use. The CLI
// (`clreduce reduce --op argmin`, `--custom`, `--span`) and tests use them.

use crate::ops::expr::Expr;

impl HostVec {
    /// Element `i` as a typed value.
    pub fn value(&self, i: usize) -> Value {
        match self {
            HostVec::I32(v) => Value::I32(v[i]),
            HostVec::U32(v) => Value::U32(v[i]),
            HostVec::I64(v) => Value::I64(v[i]),
            HostVec::U64(v) => Value::U64(v[i]),
            HostVec::F32(v) => Value::F32(v[i]),
            HostVec::F64(v) => Value::F64(v[i]),
        }
    }

    /// A host vector of type `ty` from values of that type (`None` if one has another type).
    pub fn from_values(ty: ElemType, vals: &[Value]) -> Option<HostVec> {
        macro_rules! collect {
            ($variant:ident) => {
                vals.iter()
                    .map(|v| match *v {
                        Value::$variant(x) => Some(x),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(HostVec::$variant)
            };
        }
        match ty {
            ElemType::I32 => collect!(I32),
            ElemType::U32 => collect!(U32),
            ElemType::I64 => collect!(I64),
            ElemType::U64 => collect!(U64),
            ElemType::F32 => collect!(F32),
            ElemType::F64 => collect!(F64),
            ElemType::F16 | ElemType::BF16 => None,
        }
    }

    /// The bits of element `i` as a u64 key: integers converted as OpenCL C's `(ulong)x`
    /// (sign-extended for signed types), floats as their bit pattern (`as_uint` / `as_ulong`).
    fn key(&self, i: usize) -> u64 {
        match self {
            HostVec::I32(v) => v[i] as i64 as u64,
            HostVec::U32(v) => v[i] as u64,
            HostVec::I64(v) => v[i] as u64,
            HostVec::U64(v) => v[i],
            HostVec::F32(v) => v[i].to_bits() as u64,
            HostVec::F64(v) => v[i].to_bits(),
        }
    }
}

/// Seeded random input with many ties (for argmin/argmax): values in a small range,
/// `-r..=r` (unsigned `0..=2r`) with `r = max(4, n / 64)`, so the extreme values occur about 32
/// times each; floats are k/4, exactly representable. Never all zeros for n >= 2.
pub fn random_input_ties(ty: ElemType, n: usize, seed: u64) -> HostVec {
    let mut rng = Rng::new(seed ^ 0x0A46_0000_0000 ^ ((ty as u64) << 48));
    let r = (n as i64 / 64).max(4);
    let signed = !matches!(ty, ElemType::U32 | ElemType::U64);
    let mut k = || {
        let v = rng.range(-r, r);
        if signed {
            v
        } else {
            v + r
        }
    };
    match ty {
        ElemType::I32 => HostVec::I32((0..n).map(|_| k() as i32).collect()),
        ElemType::U32 => HostVec::U32((0..n).map(|_| k() as u32).collect()),
        ElemType::I64 => HostVec::I64((0..n).map(|_| k()).collect()),
        ElemType::U64 => HostVec::U64((0..n).map(|_| k() as u64).collect()),
        ElemType::F32 => HostVec::F32((0..n).map(|_| k() as f32 * 0.25).collect()),
        ElemType::F64 | ElemType::F16 | ElemType::BF16 => {
            HostVec::F64((0..n).map(|_| k() as f64 * 0.25).collect())
        }
    }
}

/// The integer of a value (exact for integer types).
fn to_int(v: Value) -> i128 {
    value_int(v)
}

/// An integer of type `ty` as a value (wrapping to the type's width).
fn int_value(ty: ElemType, v: i128) -> Value {
    match ty {
        ElemType::I32 => Value::I32(v as i32),
        ElemType::U32 => Value::U32(v as u32),
        ElemType::I64 => Value::I64(v as i64),
        ElemType::U64 => Value::U64(v as u64),
        ElemType::F32 => Value::F32(v as f32),
        ElemType::F64 | ElemType::F16 | ElemType::BF16 => Value::F64(v as f64),
    }
}

/// A host combiner: a built-in op, or a custom expression over `a` and `b` (evaluated by
/// [`Expr::eval`]) with its identity, if it has one.
#[derive(Debug, Clone, Copy)]
pub enum HostOp<'a> {
    /// A built-in op.
    Builtin(Op),
    /// A custom combiner.
    Custom {
        /// The combiner, parsed.
        expr: &'a Expr,
        /// Its identity; `None` for an identity-less combiner.
        identity: Option<Value>,
    },
}

impl HostOp<'_> {
    /// The identity for `ty`, if there is one.
    pub fn identity(&self, ty: ElemType) -> Option<Value> {
        match *self {
            HostOp::Builtin(op) => op.identity(ty),
            HostOp::Custom { identity, .. } => identity,
        }
    }
    /// Combines two integers of type `ty` exactly (wrapping to the type).
    fn combine_int(&self, ty: ElemType, a: i128, b: i128) -> Result<i128, String> {
        match *self {
            HostOp::Builtin(op) => Ok(op.combine_int(ty, a, b)),
            HostOp::Custom { expr, .. } => expr
                .eval(ty, int_value(ty, a), int_value(ty, b))
                .map(to_int),
        }
    }
    /// Combines two floats in float64 (custom expressions are evaluated as f64).
    fn combine_f64(&self, a: f64, b: f64) -> Result<f64, String> {
        match *self {
            HostOp::Builtin(op) => Ok(op.combine_f64(a, b)),
            HostOp::Custom { expr, .. } => expr
                .eval(ElemType::F64, Value::F64(a), Value::F64(b))
                .map(|v| v.to_f64()),
        }
    }
}

/// The built-in op a custom combiner computes on sample operand pairs of `ty` (evaluated in
/// `ty` with [`Expr::eval`]), if any: `a*b` is prod, `max(a,b)` and `a > b ? a : b` are max.
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
    let typed = |x: f64| match ty {
        ElemType::F32 => Value::F32(x as f32),
        _ => Value::F64(x),
    };
    Op::ALL
        .into_iter()
        .filter(|op| op.valid_for(ty))
        .find(|&op| {
            if ty.is_float() {
                floats.iter().all(|&(a, b)| {
                    let want = typed(op.combine_f64(a, b));
                    expr.eval(ty, typed(a), typed(b))
                        .is_ok_and(|got| got == want)
                })
            } else {
                ints.iter().all(|&(a, b)| {
                    let (a, b) = (wrap_to(ty, a as i128), wrap_to(ty, b as i128));
                    let want = int_value(ty, op.combine_int(ty, a, b));
                    expr.eval(ty, int_value(ty, a), int_value(ty, b))
                        .is_ok_and(|got| got == want)
                })
            }
        })
}

/// Checks that `identity` is neutral for `expr` on `samples` (both operand orders, evaluated in
/// the identity's type): the device combines the identity into partial results any number of
/// times, so a value that is not neutral gives a wrong result. The error says which operands
/// show it, or why the host could not evaluate the combiner on a sample. The CLI checks
/// `--identity` with this on its input; the library checks every declared identity with
/// [`identity_counterexample`] on [`identity_samples`] at plan time.
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

/// Operands on which a combiner does not give back the value combined with its identity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NotNeutral {
    /// The combiner's `a`.
    pub a: Value,
    /// The combiner's `b`.
    pub b: Value,
    /// What the combiner gives for (a, b).
    pub got: Value,
    /// The operand that is not the identity, which it should have given.
    pub want: Value,
}

/// The first sample `x` (in order, `(identity, x)` before `(x, identity)`) on which `expr`
/// does not give `x` back (NaN counts as NaN), or `None` when the identity is neutral on every
/// sample. `Err`: the host evaluator cannot evaluate the combiner on a sample (the message
/// says why).
pub fn identity_counterexample(
    expr: &Expr,
    identity: Value,
    samples: &[Value],
) -> Result<Option<NotNeutral>, String> {
    let ty = identity.ty();
    for &x in samples {
        for (a, b) in [(identity, x), (x, identity)] {
            let got = expr.eval(ty, a, b)?;
            let same = got == x || (got.to_f64().is_nan() && x.to_f64().is_nan());
            if !same {
                return Ok(Some(NotNeutral { a, b, got, want: x }));
            }
        }
    }
    Ok(None)
}

/// Finite sample values of `ty` on which the library checks a declared identity: 0, small
/// values of both signs, fractions for floats, large magnitudes, and the type's extremes
/// (the largest finite values for floats; infinities and NaN are left out, so an identity
/// such as `FLT_MAX` for a minimum over finite data is accepted).
pub fn identity_samples(ty: ElemType) -> Vec<Value> {
    match ty {
        ElemType::I32 => [0, 1, -1, 2, 3, -7, 100, -12345, 1 << 20, i32::MIN, i32::MAX]
            .map(Value::I32)
            .to_vec(),
        ElemType::U32 => [0, 1, 2, 3, 7, 100, 12345, 1 << 31, u32::MAX]
            .map(Value::U32)
            .to_vec(),
        ElemType::I64 => [0, 1, -1, 2, 3, -7, 100, -12345, 1 << 40, i64::MIN, i64::MAX]
            .map(Value::I64)
            .to_vec(),
        ElemType::U64 => [0, 1, 2, 3, 7, 100, 12345, 1 << 63, u64::MAX]
            .map(Value::U64)
            .to_vec(),
        ElemType::F32 => [
            0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            -2.25,
            1e-5,
            1e20,
            -1e20,
            f32::MAX,
            f32::MIN,
        ]
        .map(Value::F32)
        .to_vec(),
        ElemType::F64 | ElemType::F16 | ElemType::BF16 => [
            0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            -2.25,
            1e-5,
            1e20,
            -1e20,
            f64::MAX,
            f64::MIN,
        ]
        .map(Value::F64)
        .to_vec(),
    }
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

/// [`reference_with`] over the elements at `idx` only.
fn reference_indices(
    op: HostOp,
    data: &HostVec,
    idx: impl Iterator<Item = usize>,
    init: Option<Value>,
) -> Result<Reference, String> {
    let ty = data.ty();
    let start = init.or_else(|| op.identity(ty));
    let mut n = 0;
    if ty.is_float() {
        let mut acc: Option<f64> = start.map(|v| v.to_f64());
        let mut sum_abs = acc.map_or(0.0, f64::abs);
        for i in idx {
            let x = data.float(i);
            sum_abs += x.abs();
            acc = Some(match acc {
                Some(a) => op.combine_f64(a, x)?,
                None => x,
            });
            n += 1;
        }
        let value = acc.ok_or("an identity-less reduction of nothing has no value")?;
        Ok(Reference {
            exact: None,
            value,
            sum_abs,
            n,
        })
    } else {
        let mut acc: Option<i128> = start.map(to_int);
        for i in idx {
            let x = data.int(i);
            acc = Some(match acc {
                Some(a) => op.combine_int(ty, a, x)?,
                None => x,
            });
            n += 1;
        }
        let acc = wrap_to(
            ty,
            acc.ok_or("an identity-less reduction of nothing has no value")?,
        );
        Ok(Reference {
            exact: Some(acc),
            value: acc as f64,
            sum_abs: 0.0,
            n,
        })
    }
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
    let ty = data.ty();
    let (mut best, mut best_i) = init.unwrap_or_else(|| {
        let op = if max { Op::Maximum } else { Op::Minimum };
        (op.identity(ty).expect("min/max have identities"), u64::MAX)
    });
    // How x compares with b, IEEE's way for floats (NaN: unordered, None); Less is better.
    let cmp = |x: Value, b: Value| match ty.is_float() {
        true => x
            .to_f64()
            .partial_cmp(&b.to_f64())
            .map(|o| if max { o.reverse() } else { o }),
        false => Some(to_int(x).cmp(&to_int(b))).map(|o| if max { o.reverse() } else { o }),
    };
    use std::cmp::Ordering::{Equal, Less};
    for j in 0..data.len() {
        let x = data.value(j);
        let o = cmp(x, best);
        if o == Some(Less) || (o == Some(Equal) && (j as u64) < best_i) {
            (best, best_i) = (x, j as u64);
        }
    }
    let ties = (0..data.len())
        .filter(|&j| cmp(data.value(j), best) == Some(Equal))
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
            v => Some(to_int(v)),
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

#[cfg(test)]
mod feature_reference_tests {
    use super::*;

    #[test]
    fn argmin_ties_go_to_the_lowest_index() {
        let d = HostVec::I32(vec![4, -2, 7, -2, 9, -2]);
        let r = reference_arg(false, &d, None);
        assert_eq!((r.value, r.index, r.ties), (Value::I32(-2), 1, 3));
        // The initial pair takes part with its own index.
        let r = reference_arg(false, &d, Some((Value::I32(-2), 0)));
        assert_eq!((r.value, r.index), (Value::I32(-2), 0));
        let r = reference_arg(true, &d, Some((Value::I32(9), 5)));
        assert_eq!((r.value, r.index), (Value::I32(9), 4));
        let r = reference_arg(true, &HostVec::F32(vec![]), None);
        assert_eq!(
            (r.value, r.index),
            (Value::F32(f32::NEG_INFINITY), u64::MAX)
        );
    }

    #[test]
    fn ties_input_has_ties() {
        for ty in ElemType::REDUCIBLE {
            let d = random_input_ties(ty, 5000, 3);
            assert_eq!(d, random_input_ties(ty, 5000, 3));
            let lo = reference_arg(false, &d, None);
            let hi = reference_arg(true, &d, None);
            assert!(lo.ties > 1 && hi.ties > 1, "{ty}: {lo:?} {hi:?}");
            assert!(lo.value != hi.value, "{ty}");
        }
    }

    #[test]
    fn custom_ops_are_classified_and_folded() {
        let mul = Expr::parse("a*b").unwrap();
        let max = Expr::parse("a > b ? a : b").unwrap();
        let odd = Expr::parse("a + b + 1").unwrap();
        for ty in ElemType::REDUCIBLE {
            assert_eq!(custom_behaves_as(&mul, ty), Some(Op::Multiplies), "{ty}");
            assert_eq!(custom_behaves_as(&max, ty), Some(Op::Maximum), "{ty}");
            assert_eq!(custom_behaves_as(&odd, ty), None, "{ty}");
        }
        assert_eq!(
            custom_behaves_as(&Expr::parse("max(a,b)").unwrap(), ElemType::U32),
            Some(Op::Maximum)
        );
        let d = HostVec::I32(vec![3, -1, 5, 1, 1]);
        let op = HostOp::Custom {
            expr: &mul,
            identity: Some(Value::I32(1)),
        };
        let r = reference_with(op, &d, Some(Value::I32(2))).unwrap();
        assert_eq!(r.exact, Some(-30));
        assert_eq!(reference_with(op, &d, None).unwrap().exact, Some(-15));
        // Identity-less: folded from the first element.
        let op = HostOp::Custom {
            expr: &max,
            identity: None,
        };
        assert_eq!(reference_with(op, &d, None).unwrap().exact, Some(5));
        assert!(reference_with(op, &HostVec::I32(vec![]), None).is_err());
        // Floats in float64.
        let f = HostVec::F32(vec![2.0, 0.5, -1.0, 4.0]);
        let op = HostOp::Custom {
            expr: &mul,
            identity: Some(Value::F32(1.0)),
        };
        assert_eq!(reference_with(op, &f, None).unwrap().value, -4.0);
    }

    #[test]
    fn identities_are_checked() {
        let mul = Expr::parse("a*b").unwrap();
        let s = [Value::I32(3), Value::I32(-7)];
        assert!(check_custom_identity(&mul, Value::I32(1), &s).is_ok());
        let e = check_custom_identity(&mul, Value::I32(0), &s).unwrap_err();
        assert!(e.contains("0 is not an identity on i32"), "{e}");
        // The library's samples: the issue's `a + b` with 5, and the usual identities.
        let add = Expr::parse("a + b").unwrap();
        let c = identity_counterexample(&add, Value::I32(5), &identity_samples(ElemType::I32))
            .unwrap()
            .unwrap();
        assert_eq!(
            c,
            NotNeutral {
                a: Value::I32(5),
                b: Value::I32(0),
                got: Value::I32(5),
                want: Value::I32(0)
            }
        );
        let fine = [
            ("a + b", Value::I32(0)),
            ("a * b", Value::U64(1)),
            ("max(a, b)", Value::I64(i64::MIN)),
            ("min(a, b)", Value::U32(u32::MAX)),
            ("a & b", Value::I32(-1)),
            ("a ^ b", Value::U64(0)),
            ("a * b", Value::F32(1.0)),
            ("a + b", Value::F64(0.0)),
            ("fmax(a, b)", Value::F32(f32::NEG_INFINITY)),
            ("fmin(a, b)", Value::F64(f64::MAX)),
        ];
        for (src, id) in fine {
            let e = Expr::parse(src).unwrap();
            let c = identity_counterexample(&e, id, &identity_samples(id.ty()));
            assert_eq!(c, Ok(None), "{src} with {id}");
        }
        let c = identity_counterexample(&mul, Value::F64(2.0), &identity_samples(ElemType::F64));
        assert_eq!(c.unwrap().unwrap().want, Value::F64(1.0));
        // A combiner the host cannot evaluate on a sample is an Err, not a verdict.
        let div = Expr::parse("b / a").unwrap();
        assert!(identity_counterexample(&div, Value::I32(0), &[Value::I32(3)]).is_err());
    }

    #[test]
    fn span_bins_and_references() {
        let d = HostVec::U32((0..1000).map(|j| j * 7 % 13).collect());
        let r = reference_span(HostOp::Builtin(Op::Plus), &d, 16, None).unwrap();
        let total: i128 = r.iter().map(|b| b.exact.unwrap()).sum();
        assert_eq!(
            total,
            (0..1000u32).map(|j| (j * 7 % 13) as i128).sum::<i128>()
        );
        assert_eq!(r.iter().map(|b| b.n).sum::<usize>(), 1000);
        assert!(r.iter().all(|b| b.n > 0));
        // Keys: sign extension for signed integers, bit patterns for floats.
        assert_eq!(HostVec::I32(vec![-1]).key(0), u64::MAX);
        assert_eq!(HostVec::F32(vec![1.0]).key(0), 0x3f80_0000);
        assert_eq!(
            span_bin_cl(ElemType::F32, "x[i]", 256),
            "(((ulong)as_uint(x[i]) * 131ul + (ulong)i) % 256ul)"
        );
    }

    #[test]
    fn bounds_and_checks() {
        let r = reference(Op::Plus, &HostVec::F32(vec![1.0, 2.0]), None);
        assert!(check_within(Value::F32(3.0), &r, 0.0).is_ok());
        assert!(check_within(Value::F32(3.5), &r, 0.1).is_err());
        assert!(float_bound(Some(Op::Maximum), ElemType::F32, &r, 10.0) == 0.0);
        assert!(
            float_bound(None, ElemType::F32, &r, 10.0)
                > float_bound(Some(Op::Plus), ElemType::F32, &r, 10.0)
        );
        let r = reference(Op::Plus, &HostVec::I32(vec![1, 2]), None);
        assert!(check_within(Value::I32(3), &r, 0.0).is_ok());
        assert!(check_within(Value::I32(4), &r, 0.0).is_err());
    }
}
