//! Seeded, deterministic adversarial inputs for exact sums, in f32 and f64: heavy cancellation
//! of values near the type's maximum with small values between, exponents over the whole range,
//! subnormals only, alternating signs, infinity and NaN mixes, sums that overflow (and sums whose
//! partial sums overflow while the exact result does not), exact rounding ties, signed zeros and
//! plain random data. Tests and the CLI draw from here; the same (pattern, n, seed) gives the
//! same values everywhere.

use super::reference::Rng;
use crate::error::{Error, Result};

/// One kind of adversarial input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Uniform in `[-1, 1)`: the common case.
    Random,
    /// Pairs `+b, -b` with `b` near the type's maximum, shuffled among small values: every
    /// naive order loses the small values (or overflows); the exact sum is theirs.
    Cancel,
    /// Random sign, exponent field and fraction over the whole finite range (subnormals too).
    Spread,
    /// Subnormals only (and a few signed zeros).
    Subnormal,
    /// Values of one magnitude with alternating signs, with tiny values every 17th element.
    Alternating,
    /// Finite values with a few +inf: the result is +inf.
    PosInf,
    /// Finite values with a few -inf: the result is -inf.
    NegInf,
    /// Finite values with +inf and -inf: the result is NaN.
    BothInf,
    /// Finite values with a few NaNs of random payload and sign: the result is the canonical NaN.
    NaNs,
    /// Values near the maximum of one sign, a few small ones: the exact sum overflows to inf.
    Overflow,
    /// Large positive values first, then their negations, then a little more: the running sum
    /// overflows in any naive order that follows the input, the exact sum is finite.
    OverflowCancel,
    /// An exact sum on a rounding midpoint (the seed picks: exactly on it, a hair above or a
    /// hair below), built from a value, four quarter half-ulps and cancelling noise.
    Ties,
    /// +0.0 and -0.0 mixed.
    Zeros,
    /// -0.0 only (an exact zero: the result is +0.0, see design/exact.md).
    NegZeros,
}

impl Pattern {
    /// Every pattern.
    pub const ALL: [Pattern; 14] = [
        Pattern::Random,
        Pattern::Cancel,
        Pattern::Spread,
        Pattern::Subnormal,
        Pattern::Alternating,
        Pattern::PosInf,
        Pattern::NegInf,
        Pattern::BothInf,
        Pattern::NaNs,
        Pattern::Overflow,
        Pattern::OverflowCancel,
        Pattern::Ties,
        Pattern::Zeros,
        Pattern::NegZeros,
    ];

    /// The pattern's name (as [`Pattern::parse`] reads it).
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Cancel => "cancel",
            Pattern::Spread => "spread",
            Pattern::Subnormal => "subnormal",
            Pattern::Alternating => "alternating",
            Pattern::PosInf => "pos-inf",
            Pattern::NegInf => "neg-inf",
            Pattern::BothInf => "both-inf",
            Pattern::NaNs => "nan",
            Pattern::Overflow => "overflow",
            Pattern::OverflowCancel => "overflow-cancel",
            Pattern::Ties => "ties",
            Pattern::Zeros => "zeros",
            Pattern::NegZeros => "neg-zeros",
        }
    }

    /// The pattern named `s` ([`Error::UnknownName`] lists the names).
    pub fn parse(s: &str) -> Result<Pattern> {
        Pattern::ALL
            .iter()
            .copied()
            .find(|p| p.name() == s)
            .ok_or_else(|| Error::UnknownName {
                kind: "input pattern",
                name: s.to_string(),
                known: Pattern::ALL.iter().map(|p| p.name()).collect(),
            })
    }
}

/// `n` f32 values of pattern `p` from `seed`.
pub fn f32s(p: Pattern, n: usize, seed: u64) -> Vec<f32> {
    generate(Fmt::F32, p, n, seed)
        .into_iter()
        .map(|b| f32::from_bits(b as u32))
        .collect()
}

/// `n` f64 values of pattern `p` from `seed`.
pub fn f64s(p: Pattern, n: usize, seed: u64) -> Vec<f64> {
    generate(Fmt::F64, p, n, seed)
        .into_iter()
        .map(f64::from_bits)
        .collect()
}

/// A binary format described by its field widths; values are built as bit patterns.
#[derive(Clone, Copy)]
struct Fmt {
    mbits: u32,
    ebits: u32,
}

impl Fmt {
    const F32: Fmt = Fmt {
        mbits: 23,
        ebits: 8,
    };
    const F64: Fmt = Fmt {
        mbits: 52,
        ebits: 11,
    };
    /// The all-ones exponent field (inf and NaN).
    fn emax_field(self) -> u64 {
        (1 << self.ebits) - 1
    }
    /// The exponent field of 1.0.
    fn bias(self) -> u64 {
        (1 << (self.ebits - 1)) - 1
    }
    fn bits(self, neg: bool, exp: u64, mant: u64) -> u64 {
        ((neg as u64) << (self.mbits + self.ebits))
            | (exp << self.mbits)
            | (mant & ((1 << self.mbits) - 1))
    }
    fn negate(self, b: u64) -> u64 {
        b ^ (1 << (self.mbits + self.ebits))
    }
    fn inf(self, neg: bool) -> u64 {
        self.bits(neg, self.emax_field(), 0)
    }
}

struct Gen {
    f: Fmt,
    rng: Rng,
}

impl Gen {
    fn coin(&mut self) -> bool {
        self.rng.next_u64() & 1 == 1
    }
    fn mant(&mut self) -> u64 {
        self.rng.next_u64()
    }
    /// Exponent field uniform in `lo..=hi`.
    fn exp(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng.range(lo as i64, hi as i64) as u64
    }
    /// A value with a random sign and fraction and an exponent field in `lo..=hi`.
    fn value(&mut self, lo: u64, hi: u64) -> u64 {
        let (neg, e, m) = (self.coin(), self.exp(lo, hi), self.mant());
        self.f.bits(neg, e, m)
    }
    /// A value of moderate size (exponent within 2^-20 .. 2^20).
    fn moderate(&mut self) -> u64 {
        let b = self.f.bias();
        self.value(b - 20, b + 20)
    }
    fn shuffle(&mut self, v: &mut [u64]) {
        for i in (1..v.len()).rev() {
            let j = (self.rng.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
    /// `n` values of `one`, with `k` of them (random positions) replaced by `special`.
    fn sprinkle(
        &mut self,
        n: usize,
        k: usize,
        mut special: impl FnMut(&mut Gen) -> u64,
    ) -> Vec<u64> {
        let mut v: Vec<u64> = (0..n).map(|_| self.moderate()).collect();
        for _ in 0..k.min(n) {
            let i = (self.rng.next_u64() % n as u64) as usize;
            v[i] = special(self);
        }
        v
    }
}

fn generate(f: Fmt, p: Pattern, n: usize, seed: u64) -> Vec<u64> {
    let mut g = Gen {
        f,
        rng: Rng::new(seed ^ (p as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)),
    };
    let top = f.emax_field() - 1;
    let few = (n / 64).max(1);
    match p {
        Pattern::Random => (0..n)
            .map(|_| {
                let u = (g.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
                if f.mbits == 23 {
                    (u as f32).to_bits() as u64
                } else {
                    u.to_bits()
                }
            })
            .collect(),
        Pattern::Cancel => cancel(&mut g, n),
        Pattern::Spread => (0..n).map(|_| g.value(0, top)).collect(),
        Pattern::Subnormal => (0..n)
            .map(|i| {
                let m = if i % 31 == 0 { 0 } else { g.mant() };
                let neg = g.coin();
                f.bits(neg, 0, m)
            })
            .collect(),
        Pattern::Alternating => {
            let e0 = g.exp(f.bias() - 4, f.bias() + 4);
            (0..n)
                .map(|i| {
                    if i % 17 == 16 {
                        let e = e0 - f.mbits as u64 - g.exp(1, 20);
                        g.value(e, e)
                    } else {
                        let m = g.mant();
                        f.bits(i % 2 == 1, e0, m)
                    }
                })
                .collect()
        }
        Pattern::PosInf => g.sprinkle(n, few, |g| g.f.inf(false)),
        Pattern::NegInf => g.sprinkle(n, few, |g| g.f.inf(true)),
        Pattern::BothInf => {
            let mut v = g.sprinkle(n, few, |g| g.f.inf(false));
            if n >= 2 {
                v[n / 2] = f.inf(true);
                v[0] = f.inf(false);
            }
            v
        }
        Pattern::NaNs => g.sprinkle(n, few, |g| {
            let (neg, m) = (g.coin(), g.mant() | 1);
            g.f.bits(neg, g.f.emax_field(), m)
        }),
        Pattern::Overflow => {
            let neg = seed & 1 == 1;
            (0..n)
                .map(|i| {
                    if i % 8 == 7 {
                        g.moderate()
                    } else {
                        let (e, m) = (g.exp(top - 1, top), g.mant());
                        f.bits(neg, e, m)
                    }
                })
                .collect()
        }
        Pattern::OverflowCancel => overflow_cancel(&mut g, n),
        Pattern::Ties => ties(&mut g, n, seed),
        Pattern::Zeros => (0..n).map(|_| f.bits(g.coin(), 0, 0)).collect(),
        Pattern::NegZeros => (0..n).map(|_| f.bits(true, 0, 0)).collect(),
    }
}

/// Pairs of large values that cancel, shuffled among small ones of any normal exponent below
/// the middle of the range.
fn cancel(g: &mut Gen, n: usize) -> Vec<u64> {
    let f = g.f;
    let top = f.emax_field() - 1;
    let pairs = n / 4;
    let mut v = Vec::with_capacity(n);
    for _ in 0..pairs {
        let b = g.value(top - 2, top);
        v.push(b);
        v.push(f.negate(b));
    }
    while v.len() < n {
        let x = g.value(1, f.bias());
        v.push(x);
    }
    g.shuffle(&mut v);
    v
}

/// Large positive values, a few small ones, then the large values negated: in input order the
/// running sum exceeds the type's range; the exact sum is the small values.
fn overflow_cancel(g: &mut Gen, n: usize) -> Vec<u64> {
    let f = g.f;
    let top = f.emax_field() - 1;
    let bigs = n / 2 - n / 8;
    let big: Vec<u64> = (0..bigs)
        .map(|_| {
            let (e, m) = (g.exp(top - 1, top), g.mant());
            f.bits(false, e, m)
        })
        .collect();
    let mut v = big.clone();
    while v.len() + bigs < n {
        v.push(g.moderate());
    }
    v.extend(big.iter().map(|&b| f.negate(b)));
    v
}

/// A value `x`, four quarters of half its ulp (so the exact sum is a midpoint between two
/// neighbours), cancelling noise pairs, and by the seed nothing, a tiny positive or a tiny
/// negative value (just above or below the midpoint).
fn ties(g: &mut Gen, n: usize, seed: u64) -> Vec<u64> {
    let f = g.f;
    let b = f.bias();
    let e = g.exp(b - 30, b + 30);
    let m = g.mant();
    let neg = g.coin();
    let mut v = vec![f.bits(neg, e, m)];
    // ulp(x) = 2^(e - bias - mbits); a quarter of half of it has exponent field e - mbits - 3.
    let q = f.bits(neg, e - f.mbits as u64 - 3, 0);
    v.extend([q; 4]);
    match seed % 3 {
        1 => v.push(f.bits(false, e - 2 * f.mbits as u64 - 10, g.mant())),
        2 => v.push(f.bits(true, e - 2 * f.mbits as u64 - 10, g.mant())),
        _ => {}
    }
    while v.len() + 1 < n {
        let w = g.value(b - 40, b + 40);
        v.push(w);
        v.push(f.negate(w));
    }
    if v.len() < n {
        v.push(f.bits(g.coin(), 0, 0));
    }
    v.truncate(n);
    g.shuffle(&mut v);
    v
}
