//! Exact (correctly rounded) float sums on the host: the superaccumulator ([`Superacc`]) in the
//! layout the device kernels use (`kernels/exact.cl`), its merge, normalization and the single
//! rounding to f32 or f64, the correctly rounded sums [`sum_f32`], [`sum_f64`] and [`sum_f16`],
//! and the constants of the device's per-element fast path (exponent windows and caps) that the
//! planner must enforce. design/exact.md explains the algorithm and why it is exact.
//!
//! # The representation
//! A superaccumulator for a result [`Format`] is `L = D + 3` signed 64-bit limbs: `D` digit
//! limbs, digit `j` weighing `2^(B + 32 j)`, then the counts of NaN, +inf and -inf values seen.
//! The value is `sum(limb_j * 2^(B + 32 j))`; limbs are carry-save (any value in about `±2^62`
//! between normalizations), so merging two accumulators is limb-wise integer addition: exact,
//! associative and commutative. Every finite f32 is a multiple of `2^-149` and every finite f64
//! a multiple of `2^-1074` (the weights of their smallest subnormals), so with `B` equal to that
//! weight every value and every exact sum of values is an integer number of `2^B` units.
//!
//! The host keeps its limbs as `i128` (no overflow for any realistic number of deposits or
//! merges); [`Superacc::limbs`] and [`Superacc::from_limbs`] convert to and from the device's
//! `i64` layout.

mod round;

// The accumulator layout, its constants and `accumulate_*` are `#[doc(hidden)]`: the device
// kernels, `multi`, `mpi`, the exact-sum tests (tests/exact_kit.rs) and the bench's native peer
// use them, a user calls `sum_f32` / `sum_f64` / `sum_f16` or `Queue::sum_exact`.

use crate::error::{Error, Result};
use crate::types::{ElemType, Half};

#[doc(hidden)]
/// Bits per digit limb: digit `j` weighs `2^(B + DIGIT_BITS * j)`.
pub const DIGIT_BITS: u32 = 32;

#[doc(hidden)]
/// Offsets of the three counter limbs after the `D` digit limbs: NaN, +inf, -inf.
pub const COUNTER_NAN: usize = 0;
#[doc(hidden)]
/// Offset of the +inf counter after the digit limbs.
pub const COUNTER_PINF: usize = 1;
#[doc(hidden)]
/// Offset of the -inf counter after the digit limbs.
pub const COUNTER_NINF: usize = 2;

#[doc(hidden)]
/// The most contributions one device superaccumulator may take between normalizations. A
/// contribution is one deposit (it adds less than `2^32` in magnitude to each limb it touches) or
/// the merge of one normalized superaccumulator (every limb below `2^32` in magnitude); with at
/// most `2^30` of them every limb stays within `±2^62`, so a normalization's carries (at most
/// `2^31`) cannot overflow an `i64`. Merging unnormalized accumulators adds their counts.
pub const MAX_CONTRIBUTIONS: u64 = 1 << 30;

#[doc(hidden)]
/// The result format of an exact sum: which superaccumulator layout, which rounding target.
/// f16 storage is summed in the f32 format (every f16 value is an f32 value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// f32 results (f32 and f16 data): `B = -149`, `D = 11`, `L = 14`.
    F32,
    /// f64 results: `B = -1074`, `D = 68`, `L = 71`.
    F64,
}

impl Format {
    /// The number of digit limbs `D`.
    pub const fn digits(self) -> usize {
        match self {
            Format::F32 => 11,
            Format::F64 => 68,
        }
    }
    /// The weight exponent `B` of digit 0 (the smallest subnormal of the type).
    pub const fn base_exp(self) -> i32 {
        match self {
            Format::F32 => -149,
            Format::F64 => -1074,
        }
    }
    /// The number of limbs `L = D + 3` (digits, then the NaN, +inf and -inf counters).
    pub const fn limbs(self) -> usize {
        self.digits() + 3
    }
    /// The format that sums elements of `ty` exactly: f32 and f16 data give f32 results, f64
    /// data f64 results. Integer types are not covered ([`Error::Superacc`]).
    pub fn for_type(ty: ElemType) -> Result<Format> {
        match ty {
            ElemType::F32 | ElemType::F16 => Ok(Format::F32),
            ElemType::F64 => Ok(Format::F64),
            other => Err(Error::Superacc {
                reason: format!(
                    "exact sums cover f32, f64 and f16 (summed into f32), not {}",
                    other.name()
                ),
            }),
        }
    }
    /// "f32" or "f64".
    pub fn name(self) -> &'static str {
        match self {
            Format::F32 => "f32",
            Format::F64 => "f64",
        }
    }
}

#[doc(hidden)]
/// The device's per-element fast paths: a work-item keeps a short floating-point expansion and
/// updates it with error-free TwoSums; see [`ExpansionSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpansionKind {
    /// f32 (or f16) data into two doubles (devices with fp64).
    F32InDouble,
    /// f32 (or f16) data into three floats (devices without fp64).
    F32InFloat,
    /// f64 data into two doubles.
    F64InDouble,
}

#[doc(hidden)]
/// The exponent window and the cap of one fast path. An element whose biased exponent field
/// lies in `exp_lo..=exp_hi` goes into the expansion; every other element (zero, subnormal,
/// too large, inf, NaN) is deposited into a superaccumulator directly. One expansion, counting
/// everything merged into it, may absorb at most `cap` elements before it must be flushed
/// (deposited) into a superaccumulator: then no TwoSum can overflow, no result is subnormal, and
/// the flush fits the superaccumulator. These numbers equal the `CLR_X_*` defines of
/// `kernels/exact.cl` (tests/exact_kit.rs checks it on every device).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpansionSpec {
    /// Which fast path.
    pub kind: ExpansionKind,
    /// Components of the expansion (2 doubles or 3 floats).
    pub components: usize,
    /// Lowest biased exponent field taken by the fast path.
    pub exp_lo: u32,
    /// Highest biased exponent field taken by the fast path.
    pub exp_hi: u32,
    /// The most elements one expansion (with all expansions merged into it) may absorb.
    pub cap: u64,
}

impl ExpansionKind {
    /// The window and cap of this fast path (design/exact.md derives them).
    pub const fn spec(self) -> ExpansionSpec {
        match self {
            // Every finite normal f32; |sum| <= 2^62 * 2^128 = 2^190 stays inside the f32
            // superaccumulator's deposit range (< 2^191) and far from double overflow; every
            // value is a multiple of 2^-149, far above double's subnormals.
            ExpansionKind::F32InDouble => ExpansionSpec {
                kind: self,
                components: 2,
                exp_lo: 1,
                exp_hi: 254,
                cap: 1 << 62,
            },
            // |x| in [2^-103, 2^101): every value a multiple of 2^-126 (no subnormal result),
            // |sum| <= 2^24 * 2^101 = 2^125, every TwoSum intermediate below 7 * 2^125 < FLT_MAX.
            ExpansionKind::F32InFloat => ExpansionSpec {
                kind: self,
                components: 3,
                exp_lo: 24,
                exp_hi: 227,
                cap: 1 << 24,
            },
            // |x| in [2^-970, 2^990): every value a multiple of 2^-1022 (no subnormal result),
            // |sum| <= 2^30 * 2^990 = 2^1020, every TwoSum intermediate below 7 * 2^1020.
            ExpansionKind::F64InDouble => ExpansionSpec {
                kind: self,
                components: 2,
                exp_lo: 53,
                exp_hi: 2012,
                cap: 1 << 30,
            },
        }
    }
}

#[doc(hidden)]
/// An exact accumulator of f32 or f64 values (a superaccumulator), in the layout of
/// `kernels/exact.cl`. Adding, merging and rounding never lose a bit; the result of
/// [`round_f32`](Superacc::round_f32) / [`round_f64`](Superacc::round_f64) is the exact sum
/// rounded once to nearest-even, whatever the order of the additions and merges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superacc {
    format: Format,
    /// `D` digits, carry-save (the host's are `i128`: they cannot overflow in practice).
    digits: Vec<i128>,
    /// Counts of NaN, +inf and -inf.
    counters: [u64; 3],
}

/// A finite value split as `(negative, m, o)`: `±m * 2^(B + o)` with `m < 2^64`, `o >= 0`.
type Split = (bool, u64, u32);

impl Superacc {
    /// An empty accumulator (exact zero, no special values) of the given format.
    pub fn new(format: Format) -> Superacc {
        Superacc {
            format,
            digits: vec![0; format.digits()],
            counters: [0; 3],
        }
    }

    /// An empty accumulator for summing elements of `ty` (f32 and f16: [`Format::F32`]; f64:
    /// [`Format::F64`]); integer types give [`Error::Superacc`].
    pub fn for_type(ty: ElemType) -> Result<Superacc> {
        Ok(Superacc::new(Format::for_type(ty)?))
    }

    /// The format (layout and default rounding target) of this accumulator.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Adds the finite value `v` exactly. `v` must be a multiple of `2^B` (always true for an
    /// f64 accumulator; for an f32 accumulator: every f32 value, and every double the device's
    /// expansions produce from f32 data) and small enough for the digits (`|v| < 2^191` for
    /// f32 accumulators, every finite double for f64). Otherwise [`Error::Superacc`], and
    /// nothing is added. Infinities and NaN are refused here: [`add_f64`](Self::add_f64)
    /// counts them.
    pub fn deposit(&mut self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(Error::Superacc {
                reason: format!("deposit takes finite values only, not {v}"),
            });
        }
        let split = split_f64(v, self.format.base_exp()).ok_or_else(|| Error::Superacc {
            reason: format!(
                "{v:e} is not a multiple of 2^{} (the {} accumulator's smallest unit)",
                self.format.base_exp(),
                self.format.name()
            ),
        })?;
        if !self.fits(split) {
            return Err(Error::Superacc {
                reason: format!(
                    "{v:e} is beyond the {} accumulator's digits (its top bit must be below 2^{})",
                    self.format.name(),
                    self.format.base_exp() + 32 * self.format.digits() as i32
                ),
            });
        }
        self.add_split(split);
        Ok(())
    }

    /// Adds one f32 element: finite values exactly, NaN and infinities to their counters.
    /// Works on both formats (every f32 is an f64 and a multiple of `2^-149`).
    pub fn add_f32(&mut self, x: f32) {
        let bits = x.to_bits();
        let exp = (bits >> 23) & 0xff;
        if exp == 0xff {
            self.count_special(bits & 0x7f_ffff != 0, bits >> 31 == 1);
            return;
        }
        let mant = bits & 0x7f_ffff;
        let (m, e) = if exp == 0 {
            (mant as u64, -149)
        } else {
            ((mant | 0x80_0000) as u64, exp as i32 - 150)
        };
        // e >= -149 >= B for both formats.
        self.add_split((bits >> 31 == 1, m, (e - self.format.base_exp()) as u32));
    }

    /// Adds one f64 element: finite values exactly, NaN and infinities to their counters. On an
    /// f32 accumulator a finite value must be one [`deposit`](Self::deposit) accepts (else
    /// [`Error::Superacc`], nothing added).
    pub fn add_f64(&mut self, x: f64) -> Result<()> {
        if x.is_nan() || x.is_infinite() {
            self.count_special(x.is_nan(), x.is_sign_negative());
            return Ok(());
        }
        self.deposit(x)
    }

    /// Adds one f16 element (an f32 value; usually on an f32 accumulator).
    pub fn add_f16(&mut self, h: Half) {
        // Exact: every f16 value is an f32 value.
        self.add_f32(crate::types::half_to_f64(h.0) as f32);
    }

    /// Adds every limb of `other` (the same format) to this one: the sum of both accumulated
    /// multisets, exactly. Errors: another format, or a limb or counter overflow (beyond any
    /// real use: `2^64` merges of extreme limbs).
    pub fn merge(&mut self, other: &Superacc) -> Result<()> {
        if other.format != self.format {
            return Err(Error::Superacc {
                reason: format!(
                    "cannot merge a {} accumulator into a {} one",
                    other.format.name(),
                    self.format.name()
                ),
            });
        }
        let overflow = || Error::Superacc {
            reason: "merge overflows the accumulator's limbs".to_string(),
        };
        let mut digits = self.digits.clone();
        for (d, o) in digits.iter_mut().zip(&other.digits) {
            *d = d.checked_add(*o).ok_or_else(overflow)?;
        }
        let mut counters = self.counters;
        for (c, o) in counters.iter_mut().zip(&other.counters) {
            *c = c.checked_add(*o).ok_or_else(overflow)?;
        }
        self.digits = digits;
        self.counters = counters;
        Ok(())
    }

    /// An accumulator from limbs in the device layout (`L` limbs: `D` carry-save digits, then
    /// the NaN, +inf and -inf counts), normalized or not. Errors ([`Error::Superacc`]): a length
    /// other than `L`, or a negative counter.
    pub fn from_limbs(format: Format, limbs: &[i64]) -> Result<Superacc> {
        let d = format.digits();
        if limbs.len() != format.limbs() {
            return Err(Error::Superacc {
                reason: format!(
                    "an {} accumulator has {} limbs ({d} digits and 3 counters), not {}",
                    format.name(),
                    format.limbs(),
                    limbs.len()
                ),
            });
        }
        let mut counters = [0u64; 3];
        for (k, c) in counters.iter_mut().enumerate() {
            let v = limbs[d + k];
            *c = u64::try_from(v).map_err(|_| Error::Superacc {
                reason: format!(
                    "counter limb {} ({}) is {v}; counts cannot be negative",
                    d + k,
                    ["NaN", "+inf", "-inf"][k]
                ),
            })?;
        }
        Ok(Superacc {
            format,
            digits: limbs[..d].iter().map(|&v| v as i128).collect(),
            counters,
        })
    }

    /// The limbs in the device layout, normalized: digits `0..D-1` in `[0, 2^32)`, the top digit
    /// signed (it carries the sign of the value), then the three counters. The normalized form
    /// is unique for a value, so two accumulators of the same multiset give the same limbs
    /// whatever their order of deposits and merges (the device's `clr_x_normalize_*` give the
    /// same). [`Error::Superacc`] if the top digit or a counter does not fit an `i64` (only
    /// accumulators merged from extreme limbs can get there).
    pub fn limbs(&self) -> Result<Vec<i64>> {
        let norm = normalize(&self.digits);
        let mut out = Vec::with_capacity(self.format.limbs());
        for (j, &d) in norm.iter().enumerate() {
            out.push(i64::try_from(d).map_err(|_| Error::Superacc {
                reason: format!("normalized digit {j} does not fit 64 bits"),
            })?);
        }
        for &c in &self.counters {
            out.push(i64::try_from(c).map_err(|_| Error::Superacc {
                reason: "a counter does not fit 63 bits".to_string(),
            })?);
        }
        Ok(out)
    }

    /// Propagates the carries so that digits `0..D-1` are in `[0, 2^32)` (the value and the
    /// counters do not change).
    pub fn normalize(&mut self) {
        self.digits = normalize(&self.digits);
    }

    /// The counts of NaN, +inf and -inf values added so far.
    pub fn specials(&self) -> [u64; 3] {
        self.counters
    }

    /// Whether the exact value of the finite values is zero (specials aside).
    pub fn is_zero(&self) -> bool {
        normalize(&self.digits).iter().all(|&d| d == 0)
    }

    /// The exact sum rounded once to the nearest f32, ties to even (src/exact/round.rs): NaN if a
    /// NaN was added or both infinities, else the infinity added, else the rounded value (an
    /// exact result with `|x| >= 2^127 * (2 - 2^-24)` rounds to ±inf); an exact zero is `+0.0`.
    pub fn round_f32(&self) -> f32 {
        f32::from_bits(self.round_bits(round::Target::F32) as u32)
    }

    /// The exact sum rounded once to the nearest f64, ties to even (same rules as
    /// [`round_f32`](Self::round_f32) with f64's range).
    pub fn round_f64(&self) -> f64 {
        f64::from_bits(self.round_bits(round::Target::F64))
    }

    fn round_bits(&self, t: round::Target) -> u64 {
        round::round_bits(
            &normalize(&self.digits),
            self.counters,
            self.format.base_exp(),
            t,
        )
    }

    fn count_special(&mut self, nan: bool, negative: bool) {
        let k = if nan {
            COUNTER_NAN
        } else if negative {
            COUNTER_NINF
        } else {
            COUNTER_PINF
        };
        self.counters[k] = self.counters[k].saturating_add(1);
    }

    /// Whether a split value's chunks all land on digits `< D`.
    fn fits(&self, (_, m, o): Split) -> bool {
        let top = o as u64 + 64 - m.leading_zeros() as u64; // one past the top bit
        m == 0 || top <= 32 * self.format.digits() as u64
    }

    /// Adds `±m * 2^(B + o)` as 32-bit chunks on digits `o/32 ..` (the device adds the same
    /// chunks, so the carry-save digits match deposit for deposit).
    fn add_split(&mut self, (neg, m, o): Split) {
        if m == 0 {
            return;
        }
        let j = (o / 32) as usize;
        let wide = (m as u128) << (o % 32);
        for k in 0..3 {
            let chunk = ((wide >> (32 * k)) & 0xffff_ffff) as i128;
            if chunk != 0 {
                self.digits[j + k] += if neg { -chunk } else { chunk };
            }
        }
    }
}

/// Splits a finite double into `(negative, m, o)` with `v = ±m * 2^(b + o)`, `o >= 0`; `None`
/// if `v` is not a multiple of `2^b`.
fn split_f64(v: f64, b: i32) -> Option<Split> {
    let bits = v.to_bits();
    let neg = bits >> 63 == 1;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = bits & ((1u64 << 52) - 1);
    let (mut m, mut e) = if exp == 0 {
        (mant, -1074)
    } else {
        (mant | (1u64 << 52), exp - 1075)
    };
    if m == 0 {
        return Some((neg, 0, 0));
    }
    if e < b {
        let sh = (b - e) as u32;
        if sh >= 64 || m & ((1u64 << sh) - 1) != 0 {
            return None;
        }
        m >>= sh;
        e = b;
    }
    Some((neg, m, (e - b) as u32))
}

/// Carry propagation: digits `0..D-1` end in `[0, 2^32)`, the top digit keeps the rest.
fn normalize(digits: &[i128]) -> Vec<i128> {
    let mut out = digits.to_vec();
    let n = out.len();
    for j in 0..n - 1 {
        let carry = out[j] >> 32;
        out[j] -= carry << 32;
        out[j + 1] += carry;
    }
    out
}

/// Elements per parallel chunk of the host sums (each chunk gets its own accumulator).
const CHUNK: usize = 1 << 16;

/// The correctly rounded sum of f32 values (the exact sum rounded once to nearest-even; NaN if
/// any NaN or both infinities, an exact zero is `+0.0`). Large inputs are summed in parallel
/// chunks whose accumulators merge exactly.
pub fn sum_f32(xs: &[f32]) -> f32 {
    accumulate_f32(xs).round_f32()
}

/// The correctly rounded sum of f64 values (see [`sum_f32`]).
pub fn sum_f64(xs: &[f64]) -> f64 {
    accumulate_f64(xs).round_f64()
}

/// The correctly rounded f32 sum of f16 values (f16 storage summed into f32).
pub fn sum_f16(xs: &[Half]) -> f32 {
    fold(xs, Format::F32, |chunk| {
        let mut a = Superacc::new(Format::F32);
        for &h in chunk {
            a.add_f16(h);
        }
        a
    })
    .round_f32()
}

#[doc(hidden)]
/// An accumulator of every element of `xs` (in parallel chunks for large inputs).
pub fn accumulate_f32(xs: &[f32]) -> Superacc {
    fold(xs, Format::F32, |chunk| {
        let mut a = Superacc::new(Format::F32);
        let mut e = Expansion::default();
        for &x in chunk {
            let b = x.to_bits();
            // Finite normal f32 values (and zeros) go through the expansion, the rest directly.
            if ((b >> 23) & 0xff).wrapping_sub(1) < 254 || b << 1 == 0 {
                e.push(x as f64, &mut a);
            } else {
                a.add_f32(x);
            }
        }
        e.flush(&mut a);
        a
    })
}

#[doc(hidden)]
/// An accumulator of every element of `xs` (in parallel chunks for large inputs).
pub fn accumulate_f64(xs: &[f64]) -> Superacc {
    let w = ExpansionKind::F64InDouble.spec();
    fold(xs, Format::F64, |chunk| {
        let mut a = Superacc::new(Format::F64);
        let mut e = Expansion::default();
        for &x in chunk {
            let ex = ((x.to_bits() >> 52) & 0x7ff) as u32;
            if (w.exp_lo..=w.exp_hi).contains(&ex) || x == 0.0 {
                e.push(x, &mut a);
            } else {
                // Specials and values outside the window; an f64 accumulator takes them all.
                let _ = a.add_f64(x);
            }
        }
        e.flush(&mut a);
        a
    })
}

/// The host's copy of the device's two-double expansion (design/exact.md): `s + c` plus what
/// it deposited is the exact sum of what it absorbed. A chunk (at most [`CHUNK`] elements)
/// stays far inside the windows' caps, and every value here is a multiple of the format's
/// `2^B` below its deposit range, so the deposits cannot be refused.
#[derive(Default)]
struct Expansion {
    s: f64,
    c: f64,
}

/// Knuth's TwoSum: `(s, e)` with `s = fl(a + b)` and `e = (a + b) - s` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

impl Expansion {
    fn push(&mut self, x: f64, acc: &mut Superacc) {
        let (s, t) = two_sum(self.s, x);
        self.s = s;
        if t != 0.0 {
            let (c, r) = two_sum(self.c, t);
            self.c = c;
            if r != 0.0 {
                let ok = acc.deposit(r).is_ok();
                debug_assert!(ok, "expansion residue {r:e} refused");
            }
        }
    }
    fn flush(self, acc: &mut Superacc) {
        for v in [self.s, self.c] {
            let ok = acc.deposit(v).is_ok();
            debug_assert!(ok, "expansion component {v:e} refused");
        }
    }
}

/// Folds `xs` in [`CHUNK`]-element pieces, one accumulator per piece, on up to
/// [`std::thread::available_parallelism`] scoped threads (each takes a contiguous run of
/// pieces). The merges are exact integer additions, so the result does not depend on how the
/// pieces are spread over threads. No thread pool: the library needs no dependency for this.
fn fold<T: Sync>(xs: &[T], format: Format, one: impl Fn(&[T]) -> Superacc + Sync) -> Superacc {
    if xs.len() <= CHUNK {
        return one(xs);
    }
    // Same format; i128 digits of at most 2^16 deposits each cannot overflow.
    let merge = |mut a: Superacc, b: Superacc| {
        let _ = a.merge(&b);
        a
    };
    let pieces = xs.len().div_ceil(CHUNK);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, pieces);
    let one = &one;
    let run = |part: &[T]| {
        part.chunks(CHUNK)
            .map(one)
            .fold(Superacc::new(format), merge)
    };
    if threads == 1 {
        return run(xs);
    }
    let per_thread = pieces.div_ceil(threads) * CHUNK;
    std::thread::scope(|s| {
        let handles: Vec<_> = xs
            .chunks(per_thread)
            .map(|part| s.spawn(move || run(part)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("an exact-sum worker thread panicked"))
            .fold(Superacc::new(format), merge)
    })
}

#[cfg(test)]
mod tests;
