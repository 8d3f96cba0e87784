//! Tests of the host superaccumulator against an independent oracle: the exact sum as a big
//! integer (num-bigint) and IEEE rounding done the textbook way (quotient and remainder by the
//! quantum, half-even, the value built by exact float scaling); plus known cases, order and
//! merge independence, the limb layout and the typed errors.

use super::*;
use crate::check::adversarial::{f32s, f64s, Pattern};
use num_bigint::BigInt;
use proptest::prelude::*;

/// The exact value of a multiset of f64 values, in units of 2^-1074, and its special counts.
#[derive(Default)]
struct Exact {
    n: BigInt,
    nan: bool,
    pinf: bool,
    ninf: bool,
}

impl Exact {
    fn add(&mut self, x: f64) {
        if x.is_nan() {
            self.nan = true;
        } else if x == f64::INFINITY {
            self.pinf = true;
        } else if x == f64::NEG_INFINITY {
            self.ninf = true;
        } else {
            let bits = x.to_bits();
            let e = ((bits >> 52) & 0x7ff) as i64;
            let f = bits & ((1 << 52) - 1);
            let (m, sh) = if e == 0 { (f, 0) } else { (f | 1 << 52, e - 1) };
            let v = BigInt::from(m) << sh as usize;
            self.n += if bits >> 63 == 1 { -v } else { v };
        }
    }
    fn of(xs: impl IntoIterator<Item = f64>) -> Exact {
        let mut e = Exact::default();
        for x in xs {
            e.add(x);
        }
        e
    }
}

/// `k * 2^q` as an f64, exactly (the caller guarantees it is representable).
fn scale(k: u64, q: i64) -> f64 {
    let pow2 = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    if q >= -1022 {
        let (a, b) = (q / 2, q - q / 2);
        k as f64 * pow2(a) * pow2(b)
    } else {
        k as f64 * pow2(q + 200) * pow2(-200)
    }
}

/// The textbook rounding of the exact value to a format of precision `p` and exponent range
/// `emin..=emax`: `None` is NaN.
fn oracle(x: &Exact, p: i64, emin: i64, emax: i64) -> Option<f64> {
    if x.nan || (x.pinf && x.ninf) {
        return None;
    }
    if x.pinf {
        return Some(f64::INFINITY);
    }
    if x.ninf {
        return Some(f64::NEG_INFINITY);
    }
    if x.n == BigInt::from(0) {
        return Some(0.0);
    }
    let neg = x.n < BigInt::from(0);
    let a = if neg { -x.n.clone() } else { x.n.clone() };
    let e = a.bits() as i64 - 1 - 1074;
    let q = (e - (p - 1)).max(emin - (p - 1));
    let unit = BigInt::from(1) << (q + 1074) as usize;
    let (mut k, r) = (&a / &unit, &a % &unit);
    let twice = r * 2;
    if twice > unit || (twice == unit && k.bit(0)) {
        k += 1;
    }
    let k: u64 = k.try_into().expect("k < 2^54");
    let top = 63 - k.leading_zeros() as i64 + q;
    let v = if top > emax {
        f64::INFINITY
    } else {
        scale(k, q)
    };
    Some(if neg { -v } else { v })
}

fn oracle_f64(x: &Exact) -> u64 {
    oracle(x, 53, -1022, 1023).map_or(0x7ff8_0000_0000_0000, f64::to_bits)
}

fn oracle_f32(x: &Exact) -> u32 {
    oracle(x, 24, -126, 127).map_or(0x7fc0_0000, |v| (v as f32).to_bits())
}

fn check_f64(xs: &[f64]) {
    let want = oracle_f64(&Exact::of(xs.iter().copied()));
    let got = sum_f64(xs).to_bits();
    assert_eq!(
        got,
        want,
        "f64 sum of {} values: got {got:#x}, want {want:#x}",
        xs.len()
    );
}

fn check_f32(xs: &[f32]) {
    let want = oracle_f32(&Exact::of(xs.iter().map(|&x| x as f64)));
    let got = sum_f32(xs).to_bits();
    assert_eq!(
        got,
        want,
        "f32 sum of {} values: got {got:#x}, want {want:#x}",
        xs.len()
    );
}

#[test]
fn known_cases() {
    assert_eq!(sum_f64(&[1e308, 1e308, -1e308]), 1e308);
    assert_eq!(sum_f32(&[f32::MAX, f32::MAX]), f32::INFINITY);
    assert_eq!(sum_f32(&[-f32::MAX, -f32::MAX]), f32::NEG_INFINITY);
    assert_eq!(sum_f32(&[f32::MAX, f32::MAX, -f32::MAX]), f32::MAX);
    let tiny = f32::from_bits(1);
    for k in [1u32, 2, 3, 1000, (1 << 23) - 1, 1 << 23, (1 << 24) + 1] {
        let v = vec![tiny; k as usize];
        assert_eq!(sum_f32(&v), k as f32 * tiny, "{k} x 2^-149");
    }
    let eps = 2f64.powi(-53);
    assert_eq!(sum_f64(&[1.0, eps]), 1.0, "a tie rounds to even");
    assert_eq!(sum_f64(&[1.0, eps, eps]), 1.0 + 2.0 * eps);
    assert_eq!(
        sum_f64(&[1.0, eps, 2f64.powi(-106)]),
        1.0 + 2.0 * eps,
        "sticky"
    );
    assert_eq!(
        sum_f64(&[1.0 + 2.0 * eps, eps]),
        1.0 + 4.0 * eps,
        "odd tie up"
    );
    assert_eq!(sum_f64(&[1.0, 1e100, 1.0, -1e100]), 2.0);
    // The largest finite bound: 2^1023 (2 - 2^-53) rounds to inf, just below it to MAX.
    let half_ulp = 2f64.powi(970);
    assert_eq!(sum_f64(&[f64::MAX, half_ulp]), f64::INFINITY);
    assert_eq!(sum_f64(&[f64::MAX, half_ulp, -f64::from_bits(1)]), f64::MAX);
    // Subnormal results are exact.
    let d = f64::from_bits(1);
    assert_eq!(
        sum_f64(&[f64::MIN_POSITIVE, -d]).to_bits(),
        0x000f_ffff_ffff_ffff
    );
    // Specials.
    assert!(sum_f64(&[1.0, f64::NAN]).is_nan());
    assert_eq!(sum_f64(&[1.0, f64::NAN]).to_bits(), 0x7ff8_0000_0000_0000);
    assert_eq!(
        sum_f32(&[f32::INFINITY, f32::NEG_INFINITY]).to_bits(),
        0x7fc0_0000
    );
    assert_eq!(
        sum_f32(&[f32::INFINITY, -f32::MAX, -f32::MAX]),
        f32::INFINITY
    );
    assert_eq!(sum_f64(&[f64::NEG_INFINITY, 1.0]), f64::NEG_INFINITY);
    // Zeros: every exact zero is +0.0, -0.0 inputs included.
    assert_eq!(sum_f32(&[-0.0, -0.0]).to_bits(), 0);
    assert_eq!(sum_f64(&[-0.0]).to_bits(), 0);
    assert_eq!(sum_f64(&[]).to_bits(), 0);
    assert_eq!(sum_f64(&[1.5, -1.5]).to_bits(), 0);
    // f16 storage into f32: 65504 (f16 max) * 3 and the smallest f16 subnormal.
    let h = |b: u16| Half(b);
    assert_eq!(sum_f16(&[h(0x7bff), h(0x7bff), h(0x7bff)]), 65504.0 * 3.0);
    assert_eq!(sum_f16(&[h(0x0001), h(0x8001), h(0x0001)]), 2f32.powi(-24));
    assert!(sum_f16(&[h(0x7c00), h(0xfc00)]).is_nan());
}

#[test]
fn adversarial_patterns_match_the_oracle() {
    for p in Pattern::ALL {
        for (n, seed) in [
            (1, 1),
            (2, 2),
            (7, 3),
            (64, 4),
            (1000, 5),
            (4097, 6),
            (70000, 7),
        ] {
            check_f32(&f32s(p, n, seed));
            check_f64(&f64s(p, n, seed));
        }
    }
}

#[test]
fn patterns_do_what_they_say() {
    let n = 1000;
    assert_eq!(sum_f64(&f64s(Pattern::PosInf, n, 1)), f64::INFINITY);
    assert_eq!(sum_f32(&f32s(Pattern::NegInf, n, 1)), f32::NEG_INFINITY);
    assert!(sum_f64(&f64s(Pattern::BothInf, n, 1)).is_nan());
    assert!(sum_f32(&f32s(Pattern::NaNs, n, 1)).is_nan());
    assert_eq!(sum_f64(&f64s(Pattern::Overflow, n, 2)), f64::INFINITY);
    assert_eq!(sum_f32(&f32s(Pattern::Overflow, n, 3)), f32::NEG_INFINITY);
    assert_eq!(sum_f32(&f32s(Pattern::NegZeros, n, 1)).to_bits(), 0);
    assert!(f64s(Pattern::Subnormal, n, 1)
        .iter()
        .all(|x| !x.is_normal()));
    // The naive sum of OverflowCancel overflows; the exact one is finite.
    let v = f64s(Pattern::OverflowCancel, n, 1);
    assert!(v.iter().sum::<f64>().is_infinite());
    assert!(sum_f64(&v).is_finite());
    // Cancel: the naive sum is far from the exact one.
    let v = f32s(Pattern::Cancel, n, 9);
    assert_ne!(v.iter().sum::<f32>(), sum_f32(&v));
    // Same input for the same seed.
    assert_eq!(f64s(Pattern::Spread, 100, 5), f64s(Pattern::Spread, 100, 5));
    assert_eq!(Pattern::parse("ties").unwrap(), Pattern::Ties);
    assert!(matches!(
        Pattern::parse("nope"),
        Err(Error::UnknownName { .. })
    ));
}

#[test]
fn ties_land_on_midpoints() {
    // Seeds 0 mod 3 are exact midpoints: the f64 sum then differs from the sum without the
    // four quarter half-ulps by one ulp or none (to even); the oracle check covers the rest.
    for seed in 0..60 {
        check_f64(&f64s(Pattern::Ties, 40, seed));
        check_f32(&f32s(Pattern::Ties, 40, seed));
    }
}

#[test]
fn order_and_merges_do_not_change_the_limbs() {
    let v = f64s(Pattern::Spread, 3000, 11);
    let whole = accumulate_f64(&v);
    let mut rev = Superacc::new(Format::F64);
    for &x in v.iter().rev() {
        rev.add_f64(x).unwrap();
    }
    let mut parts = Superacc::new(Format::F64);
    for c in v.chunks(77) {
        parts.merge(&accumulate_f64(c)).unwrap();
    }
    let l = whole.limbs().unwrap();
    assert_eq!(rev.limbs().unwrap(), l);
    assert_eq!(parts.limbs().unwrap(), l);
    assert_eq!(l.len(), 71);
    // Normalized: digits 0..D-1 in [0, 2^32).
    assert!(l[..67].iter().all(|&d| (0..1 << 32).contains(&d)));
    let back = Superacc::from_limbs(Format::F64, &l).unwrap();
    assert_eq!(back.round_f64().to_bits(), whole.round_f64().to_bits());
}

#[test]
fn parallel_chunks_match_one_accumulator() {
    let v = f32s(Pattern::Cancel, 300_000, 3);
    let mut one = Superacc::new(Format::F32);
    for &x in &v {
        one.add_f32(x);
    }
    assert_eq!(accumulate_f32(&v).limbs().unwrap(), one.limbs().unwrap());
    check_f32(&v);
}

#[test]
fn layout_and_errors() {
    assert_eq!((Format::F32.digits(), Format::F32.base_exp()), (11, -149));
    assert_eq!((Format::F64.digits(), Format::F64.base_exp()), (68, -1074));
    assert_eq!((Format::F32.limbs(), Format::F64.limbs()), (14, 71));
    assert_eq!(Format::for_type(ElemType::F16).unwrap(), Format::F32);
    assert!(matches!(
        Superacc::for_type(ElemType::I32),
        Err(Error::Superacc { .. })
    ));
    let e = Superacc::from_limbs(Format::F32, &[0; 13]).unwrap_err();
    assert!(e.to_string().contains("has 14 limbs"), "{e}");
    let mut bad = [0i64; 14];
    bad[12] = -1;
    let e = Superacc::from_limbs(Format::F32, &bad).unwrap_err();
    assert!(e.to_string().contains("+inf"), "{e}");
    let mut a = Superacc::new(Format::F32);
    assert!(matches!(a.deposit(f64::NAN), Err(Error::Superacc { .. })));
    assert!(matches!(a.deposit(1e-300), Err(Error::Superacc { .. })));
    assert!(matches!(a.deposit(1e300), Err(Error::Superacc { .. })));
    assert!(matches!(a.add_f64(1e-40), Err(Error::Superacc { .. })));
    a.add_f64(0.1).unwrap(); // 0.1 (f64) is a multiple of 2^-149
    a.add_f64(-0.1).unwrap();
    assert!(a.is_zero(), "refused deposits add nothing");
    a.deposit(2f64.powi(190) * 1.5).unwrap();
    a.deposit(2f64.powi(-149) * 3.0).unwrap();
    assert!(matches!(
        a.deposit(2f64.powi(203)),
        Err(Error::Superacc { .. })
    ));
    let b = Superacc::new(Format::F64);
    assert!(matches!(a.merge(&b), Err(Error::Superacc { .. })));
    a.add_f32(f32::NAN);
    a.add_f32(f32::INFINITY);
    assert_eq!(a.specials(), [1, 1, 0]);
    let l = a.limbs().unwrap();
    assert_eq!(&l[11..], &[1, 1, 0]);
}

/// An f64-format accumulator rounded to f32 and an f32-format one rounded to f64: one rounding
/// of the exact value to the other type.
#[test]
fn cross_format_rounding() {
    for seed in 0..20 {
        let v = f64s(Pattern::Spread, 50, seed);
        let ex = Exact::of(v.iter().copied());
        let acc = accumulate_f64(&v);
        assert_eq!(acc.round_f32().to_bits(), oracle_f32(&ex), "seed {seed}");
        let w = f32s(Pattern::Spread, 50, seed);
        let ex = Exact::of(w.iter().map(|&x| x as f64));
        assert_eq!(accumulate_f32(&w).round_f64().to_bits(), oracle_f64(&ex));
    }
}

/// The exact value of raw limbs (carry-save digits) in units of 2^-1074.
fn exact_of_limbs(f: Format, limbs: &[i64]) -> Exact {
    let mut n = BigInt::from(0);
    for (j, &l) in limbs[..f.digits()].iter().enumerate() {
        n += BigInt::from(l) << (32 * j + (f.base_exp() + 1074) as usize);
    }
    let d = f.digits();
    Exact {
        n,
        nan: limbs[d] > 0,
        pinf: limbs[d + 1] > 0,
        ninf: limbs[d + 2] > 0,
    }
}

fn limb_strategy(f: Format) -> impl Strategy<Value = Vec<i64>> {
    let digit = prop_oneof![
        3 => Just(0i64),
        3 => -(1i64 << 32)..(1i64 << 32),
        1 => -(1i64 << 62)..(1i64 << 62),
    ];
    (
        proptest::collection::vec(digit, f.digits()),
        proptest::collection::vec(prop_oneof![8 => Just(0i64), 1 => 1i64..4], 3),
        0..f.digits(),
    )
        .prop_map(|(mut d, c, cut)| {
            // Often only the low digits are set: small and subnormal values.
            if cut % 3 == 0 {
                for x in &mut d[cut..] {
                    *x = 0;
                }
            }
            d.extend(c);
            d
        })
}

proptest! {
    #[test]
    fn random_f64_bits(bits in proptest::collection::vec(any::<u64>(), 0..40)) {
        let xs: Vec<f64> = bits.into_iter().map(f64::from_bits).collect();
        check_f64(&xs);
    }

    #[test]
    fn random_f32_bits(bits in proptest::collection::vec(any::<u32>(), 0..40)) {
        let xs: Vec<f32> = bits.into_iter().map(f32::from_bits).collect();
        check_f32(&xs);
    }

    #[test]
    fn finite_mixed_magnitudes(
        xs in proptest::collection::vec(
            prop_oneof![any::<f64>().prop_filter("finite", |x| x.is_finite()), -1e3..1e3f64, -1e-300..1e-300f64],
            0..60),
    ) {
        check_f64(&xs);
        let ys: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        check_f32(&ys);
    }

    #[test]
    fn carry_save_limbs_f32(l in limb_strategy(Format::F32)) {
        let acc = Superacc::from_limbs(Format::F32, &l).unwrap();
        let ex = exact_of_limbs(Format::F32, &l);
        prop_assert_eq!(acc.round_f32().to_bits(), oracle_f32(&ex));
        prop_assert_eq!(acc.round_f64().to_bits(), oracle_f64(&ex));
        // Normalizing keeps the value.
        let n = Superacc::from_limbs(Format::F32, &acc.limbs().unwrap()).unwrap();
        prop_assert_eq!(n.round_f64().to_bits(), acc.round_f64().to_bits());
    }

    #[test]
    fn carry_save_limbs_f64(l in limb_strategy(Format::F64)) {
        let acc = Superacc::from_limbs(Format::F64, &l).unwrap();
        let ex = exact_of_limbs(Format::F64, &l);
        prop_assert_eq!(acc.round_f64().to_bits(), oracle_f64(&ex));
        prop_assert_eq!(acc.round_f32().to_bits(), oracle_f32(&ex));
    }

    #[test]
    fn merge_is_order_free(a in proptest::collection::vec(any::<u64>(), 0..30), b in proptest::collection::vec(any::<u64>(), 0..30)) {
        let fa: Vec<f64> = a.iter().map(|&x| f64::from_bits(x)).collect();
        let fb: Vec<f64> = b.iter().map(|&x| f64::from_bits(x)).collect();
        let (mut x, y) = (accumulate_f64(&fa), accumulate_f64(&fb));
        let mut z = y.clone();
        x.merge(&y).unwrap();
        z.merge(&accumulate_f64(&fa)).unwrap();
        prop_assert_eq!(x.limbs().unwrap(), z.limbs().unwrap());
        let all: Vec<f64> = fa.iter().chain(&fb).copied().collect();
        prop_assert_eq!(x.round_f64().to_bits(), oracle_f64(&Exact::of(all)));
    }
}

/// Host throughput of the exact sums (ignored: `cargo test --release --lib -- --ignored
/// host_sum_throughput --nocapture`).
#[test]
#[ignore = "timing"]
fn host_sum_throughput() {
    let n = 1 << 24;
    let x32 = f32s(Pattern::Random, n, 1);
    let x64 = f64s(Pattern::Random, n, 1);
    let t = std::time::Instant::now();
    let a = sum_f32(&x32);
    let t32 = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let b = sum_f64(&x64);
    let t64 = t.elapsed().as_secs_f64();
    eprintln!(
        "host exact sums of 2^24 values on up to {} threads: f32 {:.1} ms ({:.2} ns/value, {a}), f64 {:.1} ms ({:.2} ns/value, {b})",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        t32 * 1e3,
        t32 * 1e9 / n as f64,
        t64 * 1e3,
        t64 * 1e9 / n as f64
    );
}
