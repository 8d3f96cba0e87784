//! Large spans with arbitrary keys (issue 26, decision 59): 2^16 and more bins, beyond local
//! memory, keys read from a buffer of random u32. Deterministic f32 sums (the `global-digits`
//! store: narrow-digit superaccumulators, one 64-bit atomic per update) must come out as the
//! correctly rounded sum of each bin, bit for bit, on every run and under `Determinism::Exact`
//! alike, over values of every exponent (subnormals and infinities and NaN included), with and
//! without initialize_to_identity, in both forms; integer spans (plus, min, max, and, or, xor)
//! exactly. Small n on the simulator.

use crate::common;

use clreduce::exact::sum_f32;
use clreduce::plan::SpanStore;
use clreduce::{reduction_span, Error, Form, Kernel, NdRange, Op, Options, Queue, Range};
use common::rng::Rng;
use common::*;

/// A launch the device cannot plan is a skip (with its reason), anything else a failure.
fn skip_reason(e: &Error) -> Option<String> {
    match e {
        Error::Unsupported { .. } | Error::LocalMemory { .. } | Error::WorkGroupTooLarge { .. } => {
            Some(e.to_string())
        }
        _ => None,
    }
}

/// Elements per launch: fewer on the simulator.
/// The smallest power of two of 4-byte elements the device's local memory cannot hold a copy
/// of, and 2^16 at least: a span the planner must keep outside local memory.
fn bins_beyond_local(q: &Queue) -> usize {
    ((q.caps().local_mem_size as usize / 4) + 1)
        .next_power_of_two()
        .max(1 << 16)
}

fn n_for(q: &Queue) -> usize {
    if q.device().is_simulator() {
        3000
    } else {
        200_003
    }
}

/// Random keys below `bins` and f32 values of every kind: mostly normal values of a few
/// binades, some tiny and subnormal ones, some near 2^120, zeros of both signs; with
/// `specials`, one +inf, one -inf and one NaN in bins of their own and +inf with -inf in a
/// fourth (NaN). Values stay below 2^121, so no finite bin overflows.
fn keyed_values(n: usize, bins: usize, seed: u64, specials: bool) -> (Vec<u32>, Vec<f32>) {
    let mut r = Rng(seed);
    let keys: Vec<u32> = (0..n).map(|_| r.below(bins as u64) as u32).collect();
    let mut x: Vec<f32> = (0..n)
        .map(|_| {
            let b = r.next();
            let sign = (b >> 63) as u32;
            let frac = (b as u32) & 0x7f_ffff;
            let exp = match (b >> 32) % 100 {
                0..=79 => 120 + (b >> 40) as u32 % 12,
                80..=89 => (b >> 40) as u32 % 8,
                90..=94 => 230 + (b >> 40) as u32 % 17,
                _ => return if b & 1 == 0 { 0.0 } else { -0.0 },
            };
            f32::from_bits(sign << 31 | exp << 23 | frac)
        })
        .collect();
    if specials && n >= 8 {
        x[1] = f32::INFINITY;
        x[3] = f32::NEG_INFINITY;
        x[5] = f32::NAN;
        x[6] = f32::INFINITY;
        x[7] = f32::NEG_INFINITY;
        let mut k = keys;
        k[6] = k[1] ^ 1;
        k[7] = k[1] ^ 1;
        return (k, x);
    }
    (keys, x)
}

/// Each bin's correctly rounded sum (its initial value first, when it has one).
fn exact_bins(keys: &[u32], x: &[f32], init: Option<&[f32]>, bins: usize) -> Vec<f32> {
    let mut per: Vec<Vec<f32>> = (0..bins)
        .map(|b| init.map(|i| vec![i[b]]).unwrap_or_default())
        .collect();
    for (&k, &v) in keys.iter().zip(x) {
        per[k as usize].push(v);
    }
    per.iter().map(|v| sum_f32(v)).collect()
}

/// The first bins whose bits differ ("" when none do; NaN matches NaN).
fn differ(got: &[f32], want: &[f32]) -> String {
    let bad: Vec<String> = got
        .iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (g, w))| !(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan())))
        .take(4)
        .map(|(b, (g, w))| format!("bin {b}: {g:e} ({:08x}) vs {w:e}", g.to_bits()))
        .collect();
    bad.join("; ")
}

/// Two runs' results and the store the plan chose.
type TwoRuns = (Vec<f32>, Vec<f32>, Option<SpanStore>);

/// One launch of `hist[k[i]] += x[i]` over `form` into `hist` (starting at `start`), twice; the
/// two results and the store the plan chose.
fn run_twice(
    q: &Queue,
    form: Form,
    data: (&[u32], &[f32]),
    start: &[f32],
    identity: bool,
    opts: Options,
) -> Result<TwoRuns, Error> {
    let bins = start.len();
    let kb = q.buffer_from(data.0)?;
    let xb = q.buffer_from(data.1)?;
    let mut out = Vec::new();
    let mut store = None;
    for _ in 0..2 {
        let hist = q.buffer_from(start)?;
        let mut r = reduction_span(&hist, bins, Op::Plus).name("hist");
        if identity {
            r = r.initialize_to_identity();
        }
        let k = Kernel::new("hist[k[i]] += x[i];")
            .arg("k", &kb)
            .arg("x", &xb);
        let ev = q.parallel_for_reduce_with(form, r, k, opts)?;
        store = ev.plan().and_then(|p| p.vars[0].span).map(|s| s.store);
        out.push(hist.to_vec()?);
    }
    let second = out.pop().expect("two runs");
    Ok((out.pop().expect("two runs"), second, store))
}

/// Deterministic f32 spans beyond local memory: global-digits, exact and repeatable.
#[test]
fn large_f32_spans_are_exact_and_repeatable() {
    let mut tally = Tally::new("span_large::large_f32_spans_are_exact_and_repeatable");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let n = n_for(q);
        let big = bins_beyond_local(q);
        let sizes = [big];
        for (s, &bins) in sizes.iter().enumerate() {
            // The simulator rounds 2^16 elements in about 9 s a launch: one variant there.
            let variants: &[(bool, bool, bool)] = if q.device().is_simulator() {
                &[(false, false, false)]
            } else {
                &[
                    (true, false, false),
                    (false, false, false),
                    (true, true, false),
                    (false, false, true),
                ]
            };
            for &(identity, exact, nd) in variants {
                let case = format!(
                    "{bins} bins{}{}{}",
                    if identity {
                        ", identity"
                    } else {
                        ", initial values"
                    },
                    if exact { ", exact" } else { "" },
                    if nd { ", nd_range" } else { "" }
                );
                let seed = 0x5a17 ^ (bins as u64) << 8 ^ s as u64;
                let (keys, x) = keyed_values(n, bins, seed, !nd);
                let (form, used) = if nd {
                    // 64 work-items per group; the last partial group's indices are dropped.
                    let groups = (n / 64) as u64;
                    (NdRange::new(groups * 64, 64).into(), groups as usize * 64)
                } else {
                    (Range::new(n as u64).into(), n)
                };
                let start: Vec<f32> = (0..bins).map(|b| (b % 7) as f32 * 0.375 - 1.0).collect();
                let opts = if exact {
                    Options::default().exact()
                } else {
                    Options::default()
                };
                let got = run_twice(q, form, (&keys, &x), &start, identity, opts);
                let (a, b, store) = match got {
                    Ok(v) => v,
                    Err(e) => {
                        match skip_reason(&e) {
                            Some(r) => tally.skip(&dev, &case, &r),
                            None => tally.fail(&dev, &case, &e.to_string()),
                        }
                        continue;
                    }
                };
                if store != Some(SpanStore::GlobalDigits) {
                    tally.fail(
                        &dev,
                        &case,
                        &format!("planned {store:?}, not global-digits"),
                    );
                    continue;
                }
                let init = (!identity).then_some(&start[..]);
                let want = exact_bins(&keys[..used], &x[..used], init, bins);
                let o = match (differ(&a, &want), differ(&a, &b)) {
                    (w, r) if w.is_empty() && r.is_empty() => Outcome::Pass,
                    (w, r) if w.is_empty() => Outcome::Fail(format!("second run differs: {r}")),
                    (w, _) => Outcome::Fail(format!("not the correctly rounded sums: {w}")),
                };
                tally.record(&dev, &case, o);
            }
        }
    }
    tally.finish();
}

/// Integer spans beyond local memory (global atomics where the device has them): every op the
/// span plans allow, each bin exactly.
#[test]
fn large_integer_spans_are_exact() {
    let mut tally = Tally::new("span_large::large_integer_spans_are_exact");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let n = n_for(q);
        let bins = bins_beyond_local(q);
        let mut r = Rng(0x1a7e ^ bins as u64);
        let keys: Vec<u32> = (0..n).map(|_| r.below(bins as u64) as u32).collect();
        let vals: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
        type Fold = fn(u32, u32) -> u32;
        let ops: [(Op, u32, Fold); 6] = [
            (Op::Plus, 0, u32::wrapping_add),
            (Op::Minimum, u32::MAX, u32::min),
            (Op::Maximum, 0, u32::max),
            (Op::BitAnd, u32::MAX, |a, b| a & b),
            (Op::BitOr, 0, |a, b| a | b),
            (Op::BitXor, 0, |a, b| a ^ b),
        ];
        for (op, id, fold) in ops {
            let case = format!("u32 {op} over {bins} bins");
            let run = || -> Result<(Vec<u32>, Option<SpanStore>), Error> {
                let kb = q.buffer_from(&keys)?;
                let vb = q.buffer_from(&vals)?;
                let hist = q.buffer_from(&vec![0u32; bins])?;
                let body = match op {
                    Op::Plus => "hist[k[i]] += v[i];",
                    _ => "combine(hist[k[i]], v[i]);",
                };
                let ev = q.parallel_for_reduce_with(
                    Range::new(n as u64),
                    reduction_span(&hist, bins, op)
                        .name("hist")
                        .initialize_to_identity(),
                    Kernel::new(body).arg("k", &kb).arg("v", &vb),
                    Options::default(),
                )?;
                let store = ev.plan().and_then(|p| p.vars[0].span).map(|s| s.store);
                Ok((hist.to_vec()?, store))
            };
            let (got, store) = match run() {
                Ok(v) => v,
                Err(e) => {
                    match skip_reason(&e) {
                        Some(r) => tally.skip(&dev, &case, &r),
                        None => tally.fail(&dev, &case, &e.to_string()),
                    }
                    continue;
                }
            };
            let mut want = vec![id; bins];
            for (&k, &v) in keys.iter().zip(&vals) {
                want[k as usize] = fold(want[k as usize], v);
            }
            let bad: Vec<String> = (0..bins)
                .filter(|&b| got[b] != want[b])
                .take(4)
                .map(|b| format!("bin {b}: {} vs {}", got[b], want[b]))
                .collect();
            let o = if bad.is_empty() {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("{store:?}: {}", bad.join("; ")))
            };
            tally.record(&dev, &case, o);
        }
    }
    tally.finish();
}

/// Random keys below `bins` and f64 values over many binades (tiny, subnormal and huge ones,
/// zeros of both signs), with +inf, -inf and NaN in bins of their own when `specials`. Values
/// stay below 2^1000, so no finite bin overflows.
fn keyed_f64(n: usize, bins: usize, seed: u64, specials: bool) -> (Vec<u32>, Vec<f64>) {
    let mut r = Rng(seed);
    let keys: Vec<u32> = (0..n).map(|_| r.below(bins as u64) as u32).collect();
    let mut x: Vec<f64> = (0..n)
        .map(|_| {
            let b = r.next();
            let sign = b >> 63;
            let frac = r.next() & ((1 << 52) - 1);
            let exp = match (b >> 32) % 100 {
                0..=79 => 1015 + (b >> 40) % 16,
                80..=89 => (b >> 40) % 8,
                90..=94 => 1900 + (b >> 40) % 100,
                _ => return if b & 1 == 0 { 0.0 } else { -0.0 },
            };
            f64::from_bits(sign << 63 | exp << 52 | frac)
        })
        .collect();
    if specials && n >= 8 {
        x[1] = f64::INFINITY;
        x[3] = f64::NEG_INFINITY;
        x[5] = f64::NAN;
    }
    (keys, x)
}

/// Deterministic and exact f64 sum spans beyond local memory (decision 79). Exact ones keep the
/// exact kit's superaccumulator per element in global memory and round every element in the
/// span pass (an extra pass, one work-item per element) on every device: each bin must be the
/// correctly rounded sum, bit for bit, twice. Deterministic ones take the same store on GPUs
/// (then bit for bit too) and per-work-item copies on CPUs (then the same bits twice and within
/// (count + 1) x 2^-52 x the bin's sum of magnitudes of the exact sum).
#[test]
fn large_f64_spans_round_each_bin_once() {
    use clreduce::exact::sum_f64;
    use clreduce::plan::CrossAlgo;
    let mut tally = Tally::new("span_large::large_f64_spans_round_each_bin_once");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let n = n_for(q);
        let bins = ((q.caps().local_mem_size as usize / 8) + 1)
            .next_power_of_two()
            .max(1 << 16);
        // The simulator rounds 2^16 superaccumulators slowly: one variant there.
        let variants: &[(bool, bool)] = if q.device().is_simulator() {
            &[(true, true)]
        } else {
            &[(true, true), (false, true), (true, false), (false, false)]
        };
        for &(identity, exact) in variants {
            let case = format!(
                "f64, {bins} bins{}{}",
                if identity {
                    ", identity"
                } else {
                    ", initial values"
                },
                if exact { ", exact" } else { "" }
            );
            let (keys, x) = keyed_f64(n, bins, 0xf64 ^ bins as u64 ^ (exact as u64) << 4, true);
            let start: Vec<f64> = (0..bins).map(|b| (b % 5) as f64 * 0.625 - 1.25).collect();
            let run = || -> Result<(Vec<f64>, clreduce::plan::VarPlan), Error> {
                let kb = q.buffer_from(&keys)?;
                let xb = q.buffer_from(&x)?;
                let hist = q.buffer_from(&start)?;
                let mut r = reduction_span(&hist, bins, Op::Plus).name("hist");
                if identity {
                    r = r.initialize_to_identity();
                }
                let opts = if exact {
                    Options::default().exact()
                } else {
                    Options::default()
                };
                let ev = q.parallel_for_reduce_with(
                    Range::new(n as u64),
                    r,
                    Kernel::new("hist[k[i]] += x[i];")
                        .arg("k", &kb)
                        .arg("x", &xb),
                    opts,
                )?;
                let v = ev.plan().expect("a plan").vars[0].clone();
                Ok((hist.to_vec()?, v))
            };
            let (a, b, v) = match run().and_then(|(a, v)| Ok((a, run()?.0, v))) {
                Ok(t) => t,
                Err(e) => {
                    match skip_reason(&e) {
                        Some(r) => tally.skip(&dev, &case, &r),
                        None => tally.fail(&dev, &case, &e.to_string()),
                    }
                    continue;
                }
            };
            let store = v.span.map(|s| s.store);
            let global_exact = store == Some(SpanStore::GlobalAtomic) && v.exact.is_some();
            let gpu = q.caps().kind == clreduce::caps::DeviceKind::Gpu;
            if (exact || gpu) && !(global_exact && v.cross == CrossAlgo::ExtraPass) {
                let why = format!(
                    "planned {store:?} with {}, not global superaccumulators and the span pass",
                    v.cross
                );
                tally.fail(&dev, &case, &why);
                continue;
            }
            let mut per: Vec<Vec<f64>> = (0..bins)
                .map(|b| if identity { vec![] } else { vec![start[b]] })
                .collect();
            for (&k, &v) in keys.iter().zip(&x) {
                per[k as usize].push(v);
            }
            let same = |g: f64, w: f64| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
            let bad: Vec<String> = per
                .iter()
                .enumerate()
                .filter(|(b, vals)| {
                    let want = sum_f64(vals);
                    if v.exact.is_some() || !want.is_finite() {
                        return !same(a[*b], want);
                    }
                    let mag: f64 = vals.iter().map(|v| v.abs()).sum();
                    (a[*b] - want).abs() > (vals.len() + 1) as f64 * f64::EPSILON * mag
                })
                .take(4)
                .map(|(b, vals)| format!("bin {b}: {:e} vs {:e}", a[b], sum_f64(vals)))
                .collect();
            let rerun = (0..bins).filter(|&i| !same(a[i], b[i])).count();
            let o = match (bad.is_empty(), rerun) {
                (true, 0) => Outcome::Pass,
                (true, r) => Outcome::Fail(format!("{r} bins differ on the second run")),
                (false, _) => Outcome::Fail(format!("{store:?}: {}", bad.join("; "))),
            };
            tally.record(&dev, &case, o);
        }
    }
    tally.finish();
}
