//! Element types: the Rust types a buffer can hold and their OpenCL C spellings.

use std::fmt;

mod parse;

/// The element types clreduce can reduce and hold in buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    /// 32-bit signed integer (`i32`, OpenCL `int`).
    I32,
    /// 32-bit unsigned integer (`u32`, OpenCL `uint`).
    U32,
    /// 64-bit signed integer (`i64`, OpenCL `long`).
    I64,
    /// 64-bit unsigned integer (`u64`, OpenCL `ulong`).
    U64,
    /// 32-bit float (`f32`, OpenCL `float`).
    F32,
    /// 64-bit float (`f64`, OpenCL `double`); only where the device has `cl_khr_fp64`.
    F64,
    /// IEEE half precision ([`Half`], OpenCL `half`): a storage type. Buffers and kernel
    /// arguments on every device, read as `float` with core OpenCL's `vload_half` (no
    /// `cl_khr_fp16` needed); reductions over it run in an f32 variable.
    F16,
    /// bfloat16 ([`Bf16`], the upper 16 bits of an f32; stored as OpenCL `ushort`): a storage
    /// type like [`ElemType::F16`], read as `float` by a 16-bit shift.
    BF16,
}

impl ElemType {
    /// Every type a reduction can run on (f16 and bf16 are storage types only).
    pub const REDUCIBLE: [ElemType; 6] = [
        ElemType::I32,
        ElemType::U32,
        ElemType::I64,
        ElemType::U64,
        ElemType::F32,
        ElemType::F64,
    ];

    /// The OpenCL C type name.
    pub fn cl_name(self) -> &'static str {
        match self {
            ElemType::I32 => "int",
            ElemType::U32 => "uint",
            ElemType::I64 => "long",
            ElemType::U64 => "ulong",
            ElemType::F32 => "float",
            ElemType::F64 => "double",
            ElemType::F16 => "half",
            ElemType::BF16 => "ushort",
        }
    }
    /// The short name used on the command line and in plans.
    pub fn name(self) -> &'static str {
        match self {
            ElemType::I32 => "i32",
            ElemType::U32 => "u32",
            ElemType::I64 => "i64",
            ElemType::U64 => "u64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
            ElemType::F16 => "f16",
            ElemType::BF16 => "bf16",
        }
    }
    /// Size of one element, in bytes.
    pub fn size(self) -> usize {
        match self {
            ElemType::I32 | ElemType::U32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::U64 | ElemType::F64 => 8,
            ElemType::F16 | ElemType::BF16 => 2,
        }
    }
    /// Whether it is a floating-point type (f16, bf16, f32, f64).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F32 | ElemType::F64 | ElemType::F16 | ElemType::BF16
        )
    }
    /// Whether it is a 16-bit storage type (f16, bf16): held in buffers and read as `float` in
    /// a body (`x[i]`), never the type of a reduction variable.
    pub fn is_storage(self) -> bool {
        matches!(self, ElemType::F16 | ElemType::BF16)
    }
    /// The type a shortcut's result has for an input of this type: f32 for the storage types,
    /// the type itself otherwise (as [`Element::Acc`]).
    pub fn acc(self) -> ElemType {
        if self.is_storage() {
            ElemType::F32
        } else {
            self
        }
    }
    /// Whether an element is 8 bytes (i64, u64, f64).
    pub fn is_64bit(self) -> bool {
        self.size() == 8
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An IEEE half-precision value stored as its bit pattern (Rust has no stable `f16`). A
/// buffer of `Half` works on every device; a body reads its elements as `float` (`x[i]`), and
/// reductions over it give f32 ([`Element::Acc`]).
///
/// ```
/// use clreduce::Half;
/// assert_eq!(Half::from_f32(1.5).to_f32(), 1.5);
/// assert_eq!(Half::from_f32(2049.0).to_f32(), 2048.0); // 11 significant bits, ties to even
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct Half(pub u16);

impl Half {
    /// The nearest half to `x` (ties to even; beyond 65504 rounds to infinity; NaN stays NaN).
    pub fn from_f32(x: f32) -> Half {
        Half(f32_to_half(x))
    }
    /// Its value as an f32 (exact).
    pub fn to_f32(self) -> f32 {
        half_to_f64(self.0) as f32
    }
}

/// A bfloat16 value stored as its bit pattern: the upper 16 bits of an f32 (8 exponent bits,
/// 7 mantissa bits). A buffer of `Bf16` works on every device; a body reads its elements as
/// `float` (`x[i]`), and reductions over it give f32 ([`Element::Acc`]).
///
/// ```
/// use clreduce::Bf16;
/// assert_eq!(Bf16::from_f32(1.5).to_f32(), 1.5);
/// assert_eq!(Bf16::from_f32(257.0).to_f32(), 256.0); // 8 significant bits, ties to even
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// The nearest bfloat16 to `x` (ties to even; NaN stays NaN).
    pub fn from_f32(x: f32) -> Bf16 {
        let b = x.to_bits();
        if x.is_nan() {
            return Bf16(((b >> 16) | 0x40) as u16);
        }
        let rounded = b.wrapping_add(0x7fff + ((b >> 16) & 1));
        Bf16((rounded >> 16) as u16)
    }
    /// Its value as an f32 (exact).
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// f32 to IEEE half, rounding to nearest even.
fn f32_to_half(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        let nan = if man != 0 {
            0x200 | (man >> 13) as u16
        } else {
            0
        };
        return sign | 0x7c00 | nan;
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    // Rounds `v >> shift` to nearest even; a carry may run into the exponent (to infinity).
    let round = |v: u32, shift: u32| -> u32 {
        let (h, rem, half) = (v >> shift, v & ((1 << shift) - 1), 1 << (shift - 1));
        if rem > half || (rem == half && h & 1 == 1) {
            h + 1
        } else {
            h
        }
    };
    if e <= 0 {
        // A half subnormal (or zero): units of 2^-24.
        if e < -10 {
            return sign;
        }
        return sign | round(man | 0x80_0000, (14 - e) as u32) as u16;
    }
    sign | round(((e as u32) << 23) | man, 13) as u16
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can live in a device buffer. Sealed: implemented for i32, u32, i64, u64,
/// f32, f64, [`Half`] and [`Bf16`].
pub trait Element: sealed::Sealed + Copy + Send + Sync + Default + fmt::Debug + 'static {
    /// The [`ElemType`] of this Rust type.
    const TYPE: ElemType;
    /// What a whole-buffer reduction of this type gives (`Queue::sum`, ...): the type itself,
    /// or f32 for the 16-bit storage types, which are accumulated in f32.
    type Acc: Element;
    /// The value as a float64 (for host references and printing).
    fn to_f64(self) -> f64;
    /// The OpenCL C literal spelling this exact value.
    fn cl_literal(self) -> String;
}

macro_rules! element {
    ($t:ty, $e:ident, $lit:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElemType = ElemType::$e;
            type Acc = $t;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn cl_literal(self) -> String {
                let f: fn($t) -> String = $lit;
                f(self)
            }
        }
    };
}
element!(i32, I32, |v| if v == i32::MIN {
    "INT_MIN".into()
} else {
    format!("({v})")
});
element!(u32, U32, |v| format!("{v}u"));
element!(i64, I64, |v| if v == i64::MIN {
    "LONG_MIN".into()
} else {
    format!("({v}L)")
});
element!(u64, U64, |v| format!("{v}UL"));
element!(f32, F32, |v| float_literal(v as f64, "f"));
element!(f64, F64, |v| float_literal(v, ""));

impl sealed::Sealed for Half {}
impl Element for Half {
    const TYPE: ElemType = ElemType::F16;
    type Acc = f32;
    fn to_f64(self) -> f64 {
        half_to_f64(self.0)
    }
    /// As a `float` literal: a body reads f16 elements as `float`, and `half` arithmetic
    /// would need `cl_khr_fp16`.
    fn cl_literal(self) -> String {
        float_literal(half_to_f64(self.0), "f")
    }
}

impl sealed::Sealed for Bf16 {}
impl Element for Bf16 {
    const TYPE: ElemType = ElemType::BF16;
    type Acc = f32;
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
    /// As a `float` literal (a body reads bf16 elements as `float`).
    fn cl_literal(self) -> String {
        float_literal(self.to_f64(), "f")
    }
}

fn float_literal(v: f64, suffix: &str) -> String {
    if v.is_nan() {
        "NAN".into()
    } else if v == f64::INFINITY {
        "INFINITY".into()
    } else if v == f64::NEG_INFINITY {
        "(-INFINITY)".into()
    } else {
        // Hex float literals are exact for every finite value.
        format!("({}{suffix})", hex_float(v))
    }
}

/// Exact hexadecimal floating literal (C99 `%a`), e.g. 0x1.8p+1 for 3.0.
pub(crate) fn hex_float(v: f64) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0x0p+0".into()
        } else {
            "0x0p+0".into()
        };
    }
    let bits = v.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        format!("{sign}0x0.{mant:013x}p-1022")
    } else {
        format!("{sign}0x1.{mant:013x}p{:+}", exp - 1023)
    }
}

pub(crate) fn half_to_f64(h: u16) -> f64 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let mant = (h & 0x3ff) as f64;
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        31 => {
            if mant == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    }
}

/// A typed scalar value, for identities, scalar kernel arguments and results read as data.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Value {
    /// An `i32`.
    I32(i32),
    /// A `u32`.
    U32(u32),
    /// An `i64`.
    I64(i64),
    /// A `u64`.
    U64(u64),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
}

impl Value {
    /// The value as an exact integer, when it is an integer.
    pub fn as_int(self) -> Option<i128> {
        match self {
            Value::I32(x) => Some(x as i128),
            Value::U32(x) => Some(x as i128),
            Value::I64(x) => Some(x as i128),
            Value::U64(x) => Some(x as i128),
            _ => None,
        }
    }

    /// Its element type.
    pub fn ty(&self) -> ElemType {
        match self {
            Value::I32(_) => ElemType::I32,
            Value::U32(_) => ElemType::U32,
            Value::I64(_) => ElemType::I64,
            Value::U64(_) => ElemType::U64,
            Value::F32(_) => ElemType::F32,
            Value::F64(_) => ElemType::F64,
        }
    }
    /// The OpenCL C literal spelling this exact value (hex floats; `INFINITY`, `NAN`).
    pub fn cl_literal(&self) -> String {
        match *self {
            Value::I32(v) => v.cl_literal(),
            Value::U32(v) => v.cl_literal(),
            Value::I64(v) => v.cl_literal(),
            Value::U64(v) => v.cl_literal(),
            Value::F32(v) => v.cl_literal(),
            Value::F64(v) => v.cl_literal(),
        }
    }
    /// The value as a float64 (64-bit integers beyond 2^53 in magnitude are rounded).
    pub fn to_f64(&self) -> f64 {
        match *self {
            Value::I32(v) => v as f64,
            Value::U32(v) => v as f64,
            Value::I64(v) => v as f64,
            Value::U64(v) => v as f64,
            Value::F32(v) => v as f64,
            Value::F64(v) => v,
        }
    }
    /// Little-endian bytes, as the device stores the value.
    pub fn to_bytes(&self) -> Vec<u8> {
        match *self {
            Value::I32(v) => v.to_le_bytes().to_vec(),
            Value::U32(v) => v.to_le_bytes().to_vec(),
            Value::I64(v) => v.to_le_bytes().to_vec(),
            Value::U64(v) => v.to_le_bytes().to_vec(),
            Value::F32(v) => v.to_le_bytes().to_vec(),
            Value::F64(v) => v.to_le_bytes().to_vec(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::I32(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v:e}"),
            Value::F64(v) => write!(f, "{v:e}"),
        }
    }
}

macro_rules! value_from {
    ($t:ty, $e:ident) => {
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::$e(v)
            }
        }
    };
}
value_from!(i32, I32);
value_from!(u32, U32);
value_from!(i64, I64);
value_from!(u64, U64);
value_from!(f32, F32);
value_from!(f64, F64);

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn hex_float_is_exact() {
        assert_eq!(hex_float(3.0), "0x1.8000000000000p+1");
        assert_eq!(hex_float(-0.5), "-0x1.0000000000000p-1");
        assert_eq!(hex_float(0.0), "0x0p+0");
    }
    #[test]
    fn half_decodes() {
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0xc000), -2.0);
        assert!(half_to_f64(0x7c00).is_infinite());
    }
    /// Every half and every bfloat16 survives f32 and back; values between two neighbours
    /// round to the nearer one, a tie to the even one.
    #[test]
    fn sixteen_bit_conversions_round_to_nearest_even() {
        for bits in 0..=u16::MAX {
            let h = Half(bits);
            if h.to_f32().is_nan() {
                assert!(Half::from_f32(h.to_f32()).to_f32().is_nan());
            } else {
                assert_eq!(Half::from_f32(h.to_f32()), h, "{bits:#x}");
            }
            let b = Bf16(bits);
            if b.to_f32().is_nan() {
                assert!(Bf16::from_f32(b.to_f32()).to_f32().is_nan());
            } else {
                assert_eq!(Bf16::from_f32(b.to_f32()), b, "{bits:#x}");
            }
        }
        // Positive finite neighbours (a, b): just above the midpoint goes up, just below down,
        // the midpoint to the one with an even last bit.
        for bits in 0..0x7bffu16 {
            let (a, b) = (Half(bits).to_f32() as f64, Half(bits + 1).to_f32() as f64);
            let mid = ((a + b) / 2.0) as f32;
            let even = if bits % 2 == 0 { bits } else { bits + 1 };
            assert_eq!(Half::from_f32(mid).0, even, "{bits:#x}");
            assert_eq!(
                Half::from_f32(f32::from_bits(mid.to_bits() + 1)).0,
                bits + 1
            );
            assert_eq!(Half::from_f32(f32::from_bits(mid.to_bits() - 1)).0, bits);
        }
        for bits in 0..0x7f7fu16 {
            let (a, b) = (Bf16(bits).to_f32() as f64, Bf16(bits + 1).to_f32() as f64);
            let mid = ((a + b) / 2.0) as f32;
            let even = if bits % 2 == 0 { bits } else { bits + 1 };
            assert_eq!(Bf16::from_f32(mid).0, even, "{bits:#x}");
        }
        assert_eq!(Half::from_f32(65520.0).0, 0x7c00, "rounds up to infinity");
        assert_eq!(Half::from_f32(65519.0).0, 0x7bff);
        assert_eq!(Half::from_f32(-1e-10).0, 0x8000);
    }
}

/// A host vector whose element type is known at run time (the CLI, file input, tests).
#[derive(Debug, Clone, PartialEq)]
pub enum HostVec {
    /// `i32` elements.
    I32(Vec<i32>),
    /// `u32` elements.
    U32(Vec<u32>),
    /// `i64` elements.
    I64(Vec<i64>),
    /// `u64` elements.
    U64(Vec<u64>),
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
}

impl HostVec {
    /// `len` zeros of `ty`; `None` for the 16-bit storage types, which have no variant here.
    pub fn zeros(ty: ElemType, len: usize) -> Option<HostVec> {
        Some(match ty {
            ElemType::I32 => HostVec::I32(vec![0; len]),
            ElemType::U32 => HostVec::U32(vec![0; len]),
            ElemType::I64 => HostVec::I64(vec![0; len]),
            ElemType::U64 => HostVec::U64(vec![0; len]),
            ElemType::F32 => HostVec::F32(vec![0.0; len]),
            ElemType::F64 => HostVec::F64(vec![0.0; len]),
            ElemType::F16 | ElemType::BF16 => return None,
        })
    }
    /// Number of elements.
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
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Its element type.
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
}
