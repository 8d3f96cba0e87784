//! The single rounding of an exact accumulator value to f32 or f64 (round to nearest, ties to
//! even, IEEE 754 overflow and subnormals), on normalized digits. `kernels/exact.cl`
//! (`clr_x_round_*`) runs the same steps with 32-bit digits in private memory; the results are
//! the same bits (tests/exact_kit.rs).

use super::{COUNTER_NAN, COUNTER_NINF, COUNTER_PINF};

/// A binary IEEE 754 rounding target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    /// Precision in bits, the hidden bit included.
    p: i64,
    /// Exponent of the smallest normal.
    emin: i64,
    /// Exponent of the largest finite.
    emax: i64,
    /// The canonical quiet NaN.
    nan: u64,
    /// +inf.
    inf: u64,
    /// The sign bit.
    sign: u64,
}

impl Target {
    pub(crate) const F32: Target = Target {
        p: 24,
        emin: -126,
        emax: 127,
        nan: 0x7fc0_0000,
        inf: 0x7f80_0000,
        sign: 1 << 31,
    };
    pub(crate) const F64: Target = Target {
        p: 53,
        emin: -1022,
        emax: 1023,
        nan: 0x7ff8_0000_0000_0000,
        inf: 0x7ff0_0000_0000_0000,
        sign: 1 << 63,
    };
}

/// The bits of the correctly rounded value of `norm` (normalized digits of weight
/// `2^(b + 32 j)`: all but the top in `[0, 2^32)`, the top signed) with the special-value
/// `counters` (NaN, +inf, -inf):
/// 1. any NaN, or +inf and -inf together: the canonical quiet NaN; else an infinity seen: it.
/// 2. the magnitude `N` (the value is `±N * 2^b`) and its top bit `p`; `N = 0`: `+0.0`.
/// 3. the quantum `2^(b + s)` of the result: `s = max(p - (P - 1), emin - P + 1 - b)` (the
///    second term is the subnormal quantum); `s <= 0`: the value is exact, `N << -s`.
/// 4. `mant = N >> s`, rounded up when the first dropped bit is set and either a later dropped
///    bit is set or `mant` is odd; a carry out to `2^P` shifts once more.
/// 5. a normal result whose top exponent `b + s + P - 1` exceeds `emax`: infinity. Otherwise
///    the bits are `((b + s - (emin - P + 1)) << (P - 1)) + mant`, which is the biased exponent
///    and the fraction for normal results and the subnormal encoding for `mant < 2^(P-1)`.
pub(crate) fn round_bits(norm: &[i128], counters: [u64; 3], b: i32, t: Target) -> u64 {
    let (nan, pinf, ninf) = (
        counters[COUNTER_NAN] > 0,
        counters[COUNTER_PINF] > 0,
        counters[COUNTER_NINF] > 0,
    );
    if nan || (pinf && ninf) {
        return t.nan;
    }
    if pinf {
        return t.inf;
    }
    if ninf {
        return t.sign | t.inf;
    }
    let (neg, mag) = magnitude(norm);
    let Some(p) = top_bit(&mag) else {
        return 0;
    };
    let (b, big_p) = (b as i64, t.p);
    let mut s = (p - (big_p - 1)).max(t.emin - big_p + 1 - b);
    let mut mant;
    if s <= 0 {
        mant = window(&mag, 0, p + 1) << (-s);
    } else {
        mant = window(&mag, s, p - s + 1);
        let half = window(&mag, s - 1, 1) == 1;
        let sticky = any_below(&mag, s - 1);
        if half && (sticky || mant & 1 == 1) {
            mant += 1;
            if mant == 1 << big_p {
                mant >>= 1;
                s += 1;
            }
        }
    }
    let sign = if neg { t.sign } else { 0 };
    if mant >= 1 << (big_p - 1) && b + s + big_p - 1 > t.emax {
        return sign | t.inf;
    }
    let z = (b + s - (t.emin - big_p + 1)) as u64;
    sign | ((z << (big_p - 1)) + mant)
}

/// The sign and the magnitude (32-bit digits, least significant first) of normalized digits.
fn magnitude(norm: &[i128]) -> (bool, Vec<u32>) {
    let d = norm.len();
    let top = norm[d - 1];
    let neg = top < 0;
    let mut mag = Vec::with_capacity(d + 3);
    let mut borrow = 0i128;
    for &x in &norm[..d - 1] {
        if neg {
            let mut t = -x - borrow;
            borrow = 0;
            if t < 0 {
                t += 1 << 32;
                borrow = 1;
            }
            mag.push(t as u32);
        } else {
            mag.push(x as u32);
        }
    }
    // The top digit may exceed 32 bits: four more digits hold any i128 magnitude.
    let top_mag = if neg {
        (top as u128).wrapping_neg() - borrow as u128
    } else {
        top as u128
    };
    for k in 0..4 {
        mag.push((top_mag >> (32 * k)) as u32);
    }
    (neg, mag)
}

/// The index of the highest set bit of `mag`, if any.
fn top_bit(mag: &[u32]) -> Option<i64> {
    let j = mag.iter().rposition(|&x| x != 0)?;
    Some(32 * j as i64 + 31 - mag[j].leading_zeros() as i64)
}

/// `count` (at most 64) bits of `mag` starting at bit `lo`; none when `count` is not positive
/// (a value below half the target's smallest subnormal, rounded to another format's target).
fn window(mag: &[u32], lo: i64, count: i64) -> u64 {
    if count <= 0 {
        return 0;
    }
    let j = (lo / 32) as usize;
    let r = lo % 32;
    let digit = |k: usize| mag.get(j + k).copied().unwrap_or(0) as u128;
    let w = (digit(0) | digit(1) << 32 | digit(2) << 64 | digit(3) << 96) >> r;
    (w & ((1u128 << count) - 1)) as u64
}

/// Whether any bit of `mag` below bit `lo` is set.
fn any_below(mag: &[u32], lo: i64) -> bool {
    let j = (lo / 32) as usize;
    let r = lo % 32;
    mag[..j].iter().any(|&x| x != 0) || (r > 0 && mag[j] & ((1u32 << r) - 1) != 0)
}
