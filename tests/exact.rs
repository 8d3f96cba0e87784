//! Exact sums (`Determinism::Exact`) on every device: bit equality with the host's correctly
//! rounded sum (`clreduce::exact`) on adversarial inputs (one named case per pattern), across
//! strategies, work-group sizes (1, 3, 96, 256 and the device's maximum) and both forms, and so
//! bit equality across devices; the fallbacks under masks (no 64-bit atomics: rows and an extra
//! pass; no fp64: three-float expansions); several variables in one launch; spans; f16 data;
//! the queue shortcut; what Exact refuses; and proptest over random shapes. The speculative
//! loop and its hot forms, forced on every device, are in tests/exact_spec.rs.

use crate::common;

use clreduce::check::adversarial::{f32s, f64s, Pattern};
use clreduce::exact::{sum_f32, sum_f64};
use clreduce::plan::Strategy;
use clreduce::{
    reduction, reduction_span, Error, Form, Half, Kernel, Mask, NdRange, Op, Options, Queue, Range,
    Reductions,
};
use common::*;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Mutex;

/// The strategies an exact sum can run under (sg-reduce: NVIDIA's PTX shuffles only).
const STRATEGIES: [&str; 5] = [
    "auto",
    "tree+atomic",
    "tree+last-group",
    "tree+extra-pass",
    "sg-reduce+atomic",
];

/// One launch's iteration space.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    Range(u64),
    Nd { local: usize, groups: u64 },
}

impl Shape {
    fn form(self) -> Form {
        match self {
            Shape::Range(n) => Range::new(n).into(),
            Shape::Nd { local, groups } => NdRange::new(local as u64 * groups, local).into(),
        }
    }
    fn n(self) -> usize {
        match self {
            Shape::Range(n) => n as usize,
            Shape::Nd { local, groups } => local * groups as usize,
        }
    }
}

/// The shapes a device gets: ranges of several sizes (small ones on the simulator) and
/// nd_ranges with work-groups of 1, 3, 96, 256 and the device's maximum.
fn shapes(q: &Queue) -> Vec<Shape> {
    let sim = q.device().is_simulator();
    let max = q.caps().max_local_1d();
    let mut v = vec![Shape::Range(1), Shape::Range(3), Shape::Range(4097)];
    if !sim {
        v.push(Shape::Range(300_007));
    }
    for local in [1, 3, 96, 256, max] {
        if local <= max {
            let groups = if sim || local >= 256 { 3 } else { 17 };
            v.push(Shape::Nd { local, groups });
        }
    }
    v
}

/// The bits every device got for one case, to compare devices with each other.
static SEEN: Mutex<Option<HashMap<String, (String, u64)>>> = Mutex::new(None);

fn same_on_every_device(key: &str, dev: &str, bits: u64) -> Result<(), String> {
    let mut g = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let map = g.get_or_insert_with(HashMap::new);
    match map.get(key) {
        Some((other, b)) if *b != bits => {
            Err(format!("{key}: {dev} gave {bits:#x}, {other} gave {b:#x}"))
        }
        Some(_) => Ok(()),
        None => {
            map.insert(key.to_string(), (dev.to_string(), bits));
            Ok(())
        }
    }
}

/// A device refusal the plan explains (missing capability, local memory): a skip.
pub(crate) fn skip_reason(e: &Error) -> Option<String> {
    match e {
        Error::Unsupported { .. } | Error::LocalMemory { .. } | Error::WorkGroupTooLarge { .. } => {
            Some(e.to_string())
        }
        _ => None,
    }
}

/// Runs one exact f32 or f64 sum of `data` (plus the variable's initial value) and compares
/// the bits with the host's correctly rounded sum.
fn run_one<T: clreduce::Element + Copy + Into<f64>>(
    q: &Queue,
    data: &[T],
    init: T,
    shape: Shape,
    strategy: &str,
    host: impl Fn(&[T]) -> u64,
    bits: impl Fn(T) -> u64,
) -> Outcome {
    let opts = Options::default()
        .exact()
        .strategy(Strategy::parse(strategy).expect("strategy"));
    run_with(q, data, init, shape, opts, host, bits).0
}

/// [`run_one`] with any options; also returns the plan that ran.
pub(crate) fn run_with<T: clreduce::Element + Copy + Into<f64>>(
    q: &Queue,
    data: &[T],
    init: T,
    shape: Shape,
    opts: Options,
    host: impl Fn(&[T]) -> u64,
    bits: impl Fn(T) -> u64,
) -> (Outcome, Option<clreduce::Plan>) {
    let x = q.buffer_from(data).expect("input");
    let sum = q.buffer_from(&[init]).expect("result");
    let ev = q.parallel_for_reduce_with(
        shape.form(),
        reduction(&sum, Op::Plus),
        Kernel::new("sum += x[i];").arg("x", &x),
        opts,
    );
    match ev {
        Err(e) => match skip_reason(&e) {
            Some(r) => (Outcome::Skip(r), None),
            None => (Outcome::Fail(format!("launch: {e}")), None),
        },
        Ok(ev) => {
            let got = bits(sum.get(0).expect("read"));
            let mut all = vec![init];
            all.extend_from_slice(data);
            let want = host(&all);
            let o = if got == want {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "got bits {got:#x}, the exact sum rounds to {want:#x}"
                ))
            };
            (o, ev.plan().cloned())
        }
    }
}

/// One pattern on every device, f32 and f64, every strategy and shape (with
/// `CLREDUCE_FULL_MATRIX=1`; otherwise every shape under the automatic strategy and one forced
/// strategy, rotating with the shape from a seeded start, so each forced strategy meets at
/// least two shapes per pattern: `taken`). The start is the same for every pattern of a run:
/// program builds, not launches, are what an exact case costs, and the patterns then share
/// their programs.
fn pattern_case(p: Pattern) {
    let name = format!("exact::{}", p.name());
    announce_sample(&name);
    let start = sample_hash("exact::adversarial") as usize;
    let mut tally = Tally::new(&name);
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        for (j, shape) in shapes(q).into_iter().enumerate() {
            let n = shape.n();
            let seed = 0x5eed ^ n as u64;
            let d32 = f32s(p, n, seed);
            let d64 = f64s(p, n, seed);
            for (k, strategy) in STRATEGIES.into_iter().enumerate() {
                if !taken(k, j, start) {
                    continue;
                }
                if q.device().is_simulator() && strategy == "tree+last-group" && n > 4097 {
                    continue;
                }
                let case = format!("{} f32 {strategy} {shape:?}", p.name());
                let o = run_one(
                    q,
                    &d32,
                    0.5f32,
                    shape,
                    strategy,
                    |v| sum_f32(v).to_bits() as u64,
                    |v| v.to_bits() as u64,
                );
                let o = cross_check(&case, &dev, o, || {
                    sum_f32(&[&[0.5f32][..], &d32].concat()).to_bits() as u64
                });
                tally.record(&dev, &case, o);
                if !q.caps().fp64 {
                    tally.skip(&dev, &format!("{} f64", p.name()), "no fp64 on the device");
                    continue;
                }
                let case = format!("{} f64 {strategy} {shape:?}", p.name());
                let o = run_one(
                    q,
                    &d64,
                    -0.25f64,
                    shape,
                    strategy,
                    |v| sum_f64(v).to_bits(),
                    |v| v.to_bits(),
                );
                let o = cross_check(&case, &dev, o, || {
                    sum_f64(&[&[-0.25f64][..], &d64].concat()).to_bits()
                });
                tally.record(&dev, &case, o);
            }
        }
    }
    tally.finish();
}

/// Whether a sampled run takes `STRATEGIES[k]` for the `j`-th shape: the automatic strategy
/// always, and the forced one `(j + start) % 4`; all of them with `CLREDUCE_FULL_MATRIX=1`.
fn taken(k: usize, j: usize, start: usize) -> bool {
    full_matrix() || k == 0 || k - 1 == (j + start) % (STRATEGIES.len() - 1)
}

/// A passing case also records its bits for the comparison across devices.
fn cross_check(case: &str, dev: &str, o: Outcome, bits: impl Fn() -> u64) -> Outcome {
    match o {
        Outcome::Pass => match same_on_every_device(case, dev, bits()) {
            Ok(()) => Outcome::Pass,
            Err(m) => Outcome::Fail(m),
        },
        other => other,
    }
}

#[rstest::rstest]
#[case::random(Pattern::Random)]
#[case::cancel(Pattern::Cancel)]
#[case::spread(Pattern::Spread)]
#[case::subnormal(Pattern::Subnormal)]
#[case::alternating(Pattern::Alternating)]
#[case::pos_inf(Pattern::PosInf)]
#[case::neg_inf(Pattern::NegInf)]
#[case::both_inf(Pattern::BothInf)]
#[case::nan(Pattern::NaNs)]
#[case::overflow(Pattern::Overflow)]
#[case::overflow_cancel(Pattern::OverflowCancel)]
#[case::ties(Pattern::Ties)]
#[case::zeros(Pattern::Zeros)]
#[case::neg_zeros(Pattern::NegZeros)]
fn adversarial(#[case] p: Pattern) {
    pattern_case(p);
}

#[test]
fn the_cases_cover_every_pattern() {
    assert_eq!(
        Pattern::ALL.len(),
        14,
        "a new pattern needs an rstest case above"
    );
}

/// A sampled run of a pattern still takes the automatic strategy for every shape and every
/// forced strategy for at least two shapes, whatever the seed (8 shapes on the simulator, 9 on
/// the other devices).
#[test]
fn samples_take_every_strategy() {
    for shapes in [8, 9] {
        for start in 0..STRATEGIES.len() * 3 {
            for (k, name) in STRATEGIES.iter().enumerate() {
                let n = (0..shapes).filter(|&j| taken(k, j, start)).count();
                let want = if k == 0 { shapes } else { 2 };
                assert!(n >= want, "{name}: {n} of {shapes} shapes");
            }
        }
    }
}

/// The fallbacks: without 64-bit atomics (superaccumulator rows, an extra pass), without fp64
/// (three-float expansions), without any atomics, on every device.
#[test]
fn masked_fallbacks_are_exact() {
    let mut tally = Tally::new("exact::masked_fallbacks_are_exact");
    for base in queues() {
        let _serial = sim_lock(base.device());
        for mask in [
            "no-int64-atomics",
            "no-fp64",
            "no-atomics",
            "no-c11-atomics",
        ] {
            let q = Queue::with_mask(base.device(), Mask::parse(mask).unwrap()).unwrap();
            let dev = format!("{} {mask}", short(q.device()));
            for p in [
                Pattern::Random,
                Pattern::Cancel,
                Pattern::Spread,
                Pattern::Ties,
            ] {
                for shape in [
                    Shape::Range(4097),
                    Shape::Nd {
                        local: 96,
                        groups: 5,
                    },
                ] {
                    let n = shape.n();
                    let d = f32s(p, n, 7);
                    let case = format!("{} f32 auto {shape:?}", p.name());
                    let o = run_one(
                        &q,
                        &d,
                        1.0f32,
                        shape,
                        "auto",
                        |v| sum_f32(v).to_bits() as u64,
                        |v| v.to_bits() as u64,
                    );
                    tally.record(&dev, &case, o);
                    if q.caps().fp64 {
                        let d = f64s(p, n, 7);
                        let case = format!("{} f64 auto {shape:?}", p.name());
                        let o = run_one(
                            &q,
                            &d,
                            1.0f64,
                            shape,
                            "auto",
                            |v| sum_f64(v).to_bits(),
                            |v| v.to_bits(),
                        );
                        tally.record(&dev, &case, o);
                    }
                }
            }
        }
    }
    tally.finish();
}

/// Several variables in one launch: exact f32 and f64 sums beside an integer sum and a float
/// maximum (order-independent, allowed), with initialize_to_identity on one.
#[test]
fn several_variables_in_one_launch() {
    let mut tally = Tally::new("exact::several_variables_in_one_launch");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        if !q.caps().fp64 {
            tally.skip(&dev, "f32+f64", "no fp64");
            continue;
        }
        let n = 5003;
        let d = f64s(Pattern::Cancel, n, 11);
        let f: Vec<f32> = d.iter().map(|&v| v as f32).collect();
        let ints: Vec<i32> = (0..n as i32).map(|i| i * 7 - 3000).collect();
        let x = q.buffer_from(&d).unwrap();
        let xf = q.buffer_from(&f).unwrap();
        let xi = q.buffer_from(&ints).unwrap();
        let s64 = q.buffer_from(&[3.0f64]).unwrap();
        let s32 = q.buffer_from(&[-7.0f32]).unwrap();
        let si = q.buffer_from(&[0i32]).unwrap();
        let mx = q.buffer_from(&[0.0f32]).unwrap();
        let r = q.parallel_for_reduce_with(
            Range::new(n as u64),
            vec![
                reduction(&s64, Op::Plus),
                reduction(&s32, Op::Plus).initialize_to_identity(),
                reduction(&si, Op::Plus),
                reduction(&mx, Op::Maximum).initialize_to_identity(),
            ],
            Kernel::new("sum += x[i]; sum1 += xf[i]; sum2 += xi[i]; combine(sum3, xf[i]);")
                .arg("x", &x)
                .arg("xf", &xf)
                .arg("xi", &xi),
            Options::default().exact(),
        );
        if let Err(e) = r {
            tally.fail(&dev, "launch", &e.to_string());
            continue;
        }
        let want64 = sum_f64(&[&[3.0f64][..], &d].concat());
        let want32 = sum_f32(&f);
        let wanti = ints.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        let wantmx = f.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let got = (
            s64.get(0).unwrap(),
            s32.get(0).unwrap(),
            si.get(0).unwrap(),
            mx.get(0).unwrap(),
        );
        let ok = got.0.to_bits() == want64.to_bits()
            && got.1.to_bits() == want32.to_bits()
            && got.2 == wanti
            && got.3 == wantmx;
        let o = if ok {
            Outcome::Pass
        } else {
            Outcome::Fail(format!(
                "got {got:?}, want ({want64}, {want32}, {wanti}, {wantmx})"
            ))
        };
        tally.record(&dev, "f64+f32+i32+max", o);
    }
    tally.finish();
}

/// Spans: each bin an exact sum (bin = i mod LEN), with the bins' initial values included.
#[test]
fn spans_sum_each_bin_exactly() {
    let mut tally = Tally::new("exact::spans_sum_each_bin_exactly");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        for len in [7usize, 256] {
            let n = if q.device().is_simulator() {
                2000
            } else {
                40_000
            };
            let d = f32s(Pattern::Cancel, n, len as u64);
            let init: Vec<f32> = (0..len).map(|b| b as f32 * 0.5).collect();
            let x = q.buffer_from(&d).unwrap();
            let hist = q.buffer_from(&init).unwrap();
            let r = q.parallel_for_reduce_with(
                Range::new(n as u64),
                reduction_span(&hist, len, Op::Plus).name("hist"),
                Kernel::new("hist[i % nb] += x[i];")
                    .arg("x", &x)
                    .scalar("nb", len as u32),
                Options::default().exact(),
            );
            let case = format!("span {len}");
            if let Err(e) = r {
                match skip_reason(&e) {
                    Some(r) => tally.skip(&dev, &case, &r),
                    None => tally.fail(&dev, &case, &e.to_string()),
                }
                continue;
            }
            let got = hist.to_vec().unwrap();
            let bad: Vec<String> = (0..len)
                .filter_map(|b| {
                    let mut vals = vec![init[b]];
                    vals.extend(
                        d.iter()
                            .enumerate()
                            .filter(|(i, _)| i % len == b)
                            .map(|(_, v)| *v),
                    );
                    let want = sum_f32(&vals);
                    (got[b].to_bits() != want.to_bits())
                        .then(|| format!("bin {b}: {} vs {want}", got[b]))
                })
                .collect();
            let o = if bad.is_empty() {
                Outcome::Pass
            } else {
                Outcome::Fail(bad.join("; "))
            };
            tally.record(&dev, &case, o);
        }
    }
    tally.finish();
}

/// f16 storage summed into an f32 variable: the f16 values are exact in f32 (read with
/// `vload_half`, which needs no cl_khr_fp16).
#[test]
fn f16_data_into_an_f32_variable() {
    let mut tally = Tally::new("exact::f16_data_into_an_f32_variable");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let h: Vec<Half> = (0..3001u16)
            .map(|i| Half((i.wrapping_mul(2654) % 0x7c00) | if i % 3 == 0 { 0x8000 } else { 0 }))
            .collect();
        let want = clreduce::exact::sum_f16(&h);
        // The halves travel packed in 32-bit words and are read with vload_half (core OpenCL,
        // no cl_khr_fp16 needed): storage only, as clreduce treats f16.
        let words: Vec<u32> = h
            .chunks(2)
            .map(|c| c[0].0 as u32 | (c.get(1).map_or(0, |x| x.0) as u32) << 16)
            .collect();
        let x = q.buffer_from(&words).unwrap();
        let s = q.buffer_from(&[0.0f32]).unwrap();
        let r = q.parallel_for_reduce_with(
            Range::new(h.len() as u64),
            reduction(&s, Op::Plus),
            Kernel::new("sum += vload_half(i, (__global const half*)x);").arg("x", &x),
            Options::default().exact(),
        );
        let o = match r {
            Err(e) => match skip_reason(&e) {
                Some(r) => Outcome::Skip(r),
                None => Outcome::Fail(e.to_string()),
            },
            Ok(_) => {
                let got = s.get(0).unwrap();
                if got.to_bits() == want.to_bits() {
                    Outcome::Pass
                } else {
                    Outcome::Fail(format!("{got} vs {want}"))
                }
            }
        };
        tally.record(&dev, "f16", o);
    }
    tally.finish();
}

/// `Queue::sum_exact`, and what Exact refuses.
#[test]
fn shortcut_and_refusals() {
    for q in queues() {
        let _serial = sim_lock(q.device());
        let d = f32s(Pattern::Cancel, 1001, 3);
        let x = q.buffer_from(&d).unwrap();
        assert_eq!(
            q.sum_exact(&x).unwrap().to_bits(),
            sum_f32(&d).to_bits(),
            "{}",
            short(q.device())
        );
        let empty = q.buffer_from::<f32>(&[]).unwrap();
        assert_eq!(q.sum_exact(&empty).unwrap().to_bits(), 0);
        // An order-dependent float op has no exact algorithm: a typed error naming what is covered.
        let p = q.buffer_from(&[1.0f32]).unwrap();
        let e = q
            .parallel_for_reduce_with(
                Range::new(d.len() as u64),
                reduction(&p, Op::Multiplies),
                Kernel::new("sum *= x[i];").arg("x", &x),
                Options::default().exact(),
            )
            .unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported { missing, .. } if missing.contains("Op::Plus on f32 and f64")),
            "{e}"
        );
        assert_eq!(p.get(0).unwrap(), 1.0, "the variable keeps its value");
        // An exact reducer is only combined into.
        let s = q.buffer_from(&[0.0f32]).unwrap();
        let e = q
            .parallel_for_reduce_with(
                Range::new(4),
                reduction(&s, Op::Plus),
                Kernel::new("float t = sum; sum += x[i] + t;").arg("x", &x),
                Options::default().exact(),
            )
            .unwrap_err();
        assert!(matches!(e, Error::BadArgument { .. }), "{e}");
        // Work-group collectives round: forcing one is refused.
        let e = q
            .parallel_for_reduce_with(
                Range::new(4),
                reduction(&s, Op::Plus),
                Kernel::new("sum += x[i];").arg("x", &x),
                Options::default()
                    .exact()
                    .strategy(Strategy::parse("wg-reduce").unwrap()),
            )
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    }
}

/// Several reductions: the test helper's `Reductions` from a vector (used above) also take a
/// tuple; exact sums over an nd_range of 2-D shape use the same path as 1-D.
#[test]
fn two_dimensional_nd_range() {
    for q in queues() {
        let _serial = sim_lock(q.device());
        let d = f32s(Pattern::Spread, 24 * 8, 5);
        let x = q.buffer_from(&d).unwrap();
        let s = q.buffer_from(&[0.0f32]).unwrap();
        let reds: Reductions = reduction(&s, Op::Plus).into();
        q.parallel_for_reduce_with(
            NdRange::new_2d([24, 8], [4, 8]),
            reds,
            Kernel::new("sum += x[get_global_id(0) * 8 + get_global_id(1)];").arg("x", &x),
            Options::default().exact(),
        )
        .unwrap();
        assert_eq!(
            s.get(0).unwrap().to_bits(),
            sum_f32(&d).to_bits(),
            "{}",
            short(q.device())
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, .. ProptestConfig::default() })]
    /// Random shapes, strategies, patterns and seeds, on a CPU device (not the simulator).
    #[test]
    fn random_shapes(
        dev in 0usize..8,
        n in 0usize..20_000,
        local in prop::sample::select(vec![1usize, 2, 3, 7, 32, 64, 96, 128, 256]),
        nd in any::<bool>(),
        strat in 0usize..4,
        pat in 0usize..14,
        seed in any::<u64>(),
    ) {
        let qs: Vec<&Queue> = queues().iter().filter(|q| !q.device().is_simulator()).collect();
        if qs.is_empty() {
            // Only the simulator is installed (its sizes are too small for these shapes).
            eprintln!("SKIP random_shapes: no device but the simulator");
            return Ok(());
        }
        let q = qs[dev % qs.len()];
        let shape = if nd {
            Shape::Nd { local: local.min(q.caps().max_local_1d()), groups: (n / local.max(1)).max(1) as u64 }
        } else {
            Shape::Range(n as u64)
        };
        let p = Pattern::ALL[pat];
        let d = f32s(p, shape.n(), seed);
        let o = run_one(q, &d, 2.0f32, shape, STRATEGIES[strat], |v| sum_f32(v).to_bits() as u64, |v| v.to_bits() as u64);
        prop_assert!(!matches!(o, Outcome::Fail(_)), "{} {:?} {} {} seed {}: {:?}", short(q.device()), shape, STRATEGIES[strat], p.name(), seed, o);
    }
}
