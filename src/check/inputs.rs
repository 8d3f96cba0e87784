//! Test inputs: a seeded generator ([`Rng`]), seeded random inputs per (op, type) that keep
//! results meaningful, inputs with many ties for argmin/argmax, initial values, and the element
//! access of a [`HostVec`] the references read.

use crate::ops::Op;
use crate::types::{ElemType, HostVec, Value};

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
    pub(crate) fn int(&self, i: usize) -> i128 {
        match self {
            HostVec::I32(v) => v[i] as i128,
            HostVec::U32(v) => v[i] as i128,
            HostVec::I64(v) => v[i] as i128,
            HostVec::U64(v) => v[i] as i128,
            _ => unreachable!("int() on floats"),
        }
    }
    pub(crate) fn float(&self, i: usize) -> f64 {
        match self {
            HostVec::F32(v) => v[i] as f64,
            HostVec::F64(v) => v[i],
            _ => self.int(i) as f64,
        }
    }

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
    pub(crate) fn key(&self, i: usize) -> u64 {
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
