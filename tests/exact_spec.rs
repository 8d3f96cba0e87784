//! The exact sums' speculative loop (design/exact.md "The library's speculative loop", "The hot
//! loop", "The f64 loop"), forced on every device here whatever the device's default: the
//! branchy try and its hot forms (shared, lanes; the vector form in tests/exact_vector.rs through
//! [`speculative_loop_in`]) in the grid-stride and contiguous orders, blocks at the edge of the
//! exponent span they may hold, the bound checked per block of steps, and an exact sum beside
//! other variables; bit for bit against the host's correctly rounded sum.

use crate::common;
use crate::exact::{run_with, skip_reason, Shape};

use clreduce::check::adversarial::{f32s, f64s, Pattern};
use clreduce::exact::{sum_f32, sum_f64};
use clreduce::{reduction, Error, Kernel, Op, Options, Range};
use common::*;

/// The speculative loop (on by default on GPUs only), forced on every device here, in the
/// grid-stride order (GPUs) and the contiguous one (CPUs): random data takes the branch-free
/// path; adversarial data flags chunks, which run again exactly.
#[test]
fn speculative_loop_is_exact() {
    use clreduce::plan::{HotLoop, IndexOrder};
    speculative_loop_in(IndexOrder::GridStride, HotLoop::Off);
}

/// [`speculative_loop_is_exact`] in the contiguous order.
#[test]
fn speculative_loop_is_exact_contiguous() {
    use clreduce::plan::{HotLoop, IndexOrder};
    speculative_loop_in(IndexOrder::Contiguous, HotLoop::Off);
}

/// The speculative loop's hot forms (`Tuning::hot`, design/exact.md "The hot loop": range
/// checks once per chunk; f32 blocks into one expansion, or per accumulator), forced on every
/// device here in the grid-stride order the GPUs run, over every adversarial pattern and blocks
/// at the edge of the exponent span they may hold.
#[test]
fn hot_loop_is_exact() {
    use clreduce::plan::{HotLoop, IndexOrder};
    speculative_loop_in(IndexOrder::GridStride, HotLoop::Shared);
    speculative_loop_in(IndexOrder::GridStride, HotLoop::Lanes);
}

/// [`hot_loop_is_exact`] in the contiguous order (the CPUs').
#[test]
fn hot_loop_is_exact_contiguous() {
    use clreduce::plan::{HotLoop, IndexOrder};
    speculative_loop_in(IndexOrder::Contiguous, HotLoop::Shared);
    speculative_loop_in(IndexOrder::Contiguous, HotLoop::Lanes);
}

/// f32 data at the edge of the exponent span a block of the hot loop may hold (29 - lb fields
/// for blocks of 2^lb elements): equally many `+B` and `-B` (`B` the largest fraction at field
/// `e`), and a sixteenth of small pairs `s = (2^23 + 1) u`, `t = -(2^23 + 2) u` (field
/// `e - w`, `u = 2^(e - w - 150)`), shuffled; the exact sum is `-u` per pair, a float. A block
/// holding two or three same-signed `B` and an `s` needs `w + 25` or `w + 26` bits: exact up
/// to `w = 29 - lb`; beyond it the plain double addition drops the odd unit (downward: the
/// partial sum is 1 mod 8 units), so a block bound one or two fields too wide moves the sum by
/// about a unit per such block, and the result's bits.
fn f32_edge(n: usize, w: u32, seed: u64) -> Vec<f32> {
    let mut st = seed;
    let mut next = move || {
        st = st.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = st;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let e = 100u32;
    let big = f32::from_bits(e << 23 | 0x7f_ffff);
    let odd = f32::from_bits((e - w) << 23 | 1);
    let small = f32::from_bits((e - w) << 23 | 2);
    let pairs = n / 32;
    let bigs = (n - 2 * pairs) / 2;
    let mut v: Vec<f32> = std::iter::repeat_n(big, bigs)
        .chain(std::iter::repeat_n(-big, bigs))
        .chain(std::iter::repeat_n(odd, pairs))
        .chain(std::iter::repeat_n(-small, pairs))
        .chain(std::iter::repeat_n(odd, n - 2 * pairs - 2 * bigs))
        .collect();
    for i in (1..v.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

/// The shared hot loop with its bound checked once per block of 1 and 4 unrolled steps at
/// unroll 4, and of 4 at unroll 8 (`Tuning::steps`; f64 data runs 2 by default, which
/// [`hot_loop_is_exact`] covers, and 4 at unroll 8 on GPUs from 2^26 indices; f32 1), in
/// the grid-stride order (the GPUs'): adversarial f32 and f64 data, and f32 blocks of 4 steps at
/// the edge of their exponent span (16 elements at unroll 4: 25 fields, then one and two more,
/// which the chunk's check must flag). Each result is the host's correctly rounded sum, and the
/// plan ran the steps asked for.
#[test]
fn hot_loop_steps_are_exact() {
    use clreduce::plan::{HotLoop, IndexOrder, Tuning};
    let mut tally = Tally::new("exact_spec::hot_loop_steps_are_exact");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        if !q.caps().fp64 {
            tally.skip(
                &dev,
                "steps",
                "no fp64 on the device (the hot loop needs two doubles)",
            );
            continue;
        }
        let n = if q.device().is_simulator() {
            3001
        } else {
            100_003
        };
        let shape = Shape::Range(n as u64);
        // Unroll 8 in blocks of 4: the GPUs' f64 loop from 2^26 indices (decision 88).
        for (unroll, steps) in [(4usize, 1usize), (4, 4), (8, 4)] {
            let tuning = Tuning {
                spec: Some(true),
                hot: Some(HotLoop::Shared),
                order: Some(IndexOrder::GridStride),
                unroll: Some(unroll),
                steps: Some(steps),
                ..Tuning::default()
            };
            let opts = Options {
                tuning: Some(tuning),
                ..Options::default()
            }
            .exact();
            let took = |o: Outcome, p: &Option<clreduce::Plan>| match (o, p) {
                (Outcome::Pass, Some(p)) if p.spec_steps != steps => {
                    Outcome::Fail(format!("the plan ran {} steps per check", p.spec_steps))
                }
                (o, _) => o,
            };
            let u = if unroll == 4 {
                String::new()
            } else {
                format!(" unroll {unroll}")
            };
            if (unroll, steps) == (4, 4) {
                for w in 25..=27u32 {
                    let d = f32_edge(n, w, 0x57e9 + w as u64);
                    let (o, p) = run_with(
                        q,
                        &d,
                        0.0f32,
                        shape,
                        opts,
                        |v| sum_f32(v).to_bits() as u64,
                        |v| v.to_bits() as u64,
                    );
                    tally.record(&dev, &format!("steps 4 edge span {w} f32"), took(o, &p));
                }
            }
            for p in [
                Pattern::Random,
                Pattern::Cancel,
                Pattern::Spread,
                Pattern::NaNs,
            ] {
                let d = f32s(p, n, 11);
                let (o, pl) = run_with(
                    q,
                    &d,
                    0.25f32,
                    shape,
                    opts,
                    |v| sum_f32(v).to_bits() as u64,
                    |v| v.to_bits() as u64,
                );
                tally.record(
                    &dev,
                    &format!("steps {steps}{u} {} f32", p.name()),
                    took(o, &pl),
                );
                let d = f64s(p, n, 11);
                let (o, pl) = run_with(
                    q,
                    &d,
                    0.25f64,
                    shape,
                    opts,
                    |v| sum_f64(v).to_bits(),
                    |v| v.to_bits(),
                );
                tally.record(
                    &dev,
                    &format!("steps {steps}{u} {} f64", p.name()),
                    took(o, &pl),
                );
            }
        }
    }
    tally.finish();
}

pub(crate) fn speculative_loop_in(
    order: clreduce::plan::IndexOrder,
    form: clreduce::plan::HotLoop,
) {
    use clreduce::plan::{Expansion, HotLoop, Tuning};
    let hot = form != HotLoop::Off;
    let name = if hot {
        "hot_loop_is_exact"
    } else {
        "speculative_loop_is_exact"
    };
    let mut tally = Tally::new(&format!("exact_spec::{name} {order:?} {form:?}"));
    let tuning = Tuning {
        spec: Some(true),
        hot: Some(form),
        order: Some(order),
        ..Tuning::default()
    };
    let opts = Options {
        tuning: Some(tuning),
        ..Options::default()
    }
    .exact();
    // The hot form is planned for two-double expansions only (a device with fp64).
    let spec = |p: &Option<clreduce::Plan>| {
        p.as_ref().and_then(|p| p.vars[0].exact).is_some_and(|e| {
            let want = if e.expansion == Expansion::TwoDouble {
                form
            } else {
                HotLoop::Off
            };
            e.speculative && e.hot == want
        })
    };
    let patterns: Vec<Pattern> = if hot {
        Pattern::ALL.to_vec()
    } else {
        vec![
            Pattern::Random,
            Pattern::Cancel,
            Pattern::Spread,
            Pattern::Ties,
            Pattern::NaNs,
        ]
    };
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let n = if q.device().is_simulator() {
            3001
        } else {
            200_003
        };
        let shape = Shape::Range(n as u64);
        if hot {
            // Spans at a block's limit 29 - lb and one and two fields past it (blocks of
            // unroll elements in the shared form, 8 per accumulator in the lanes form).
            for unroll in [4usize, 16] {
                // (the vector form: 64 per lane, one element per step of a chunk)
                let lb = match form {
                    HotLoop::Lanes => 3,
                    HotLoop::Vector => 6,
                    _ => unroll.trailing_zeros(),
                };
                for w in 29 - lb..=31 - lb {
                    let d = f32_edge(n, w, 0xed9e + w as u64);
                    // No initial value: the sum is a few units u, far below 0.25's ulp.
                    let o16 = Options {
                        tuning: Some(Tuning {
                            unroll: Some(unroll),
                            ..tuning
                        }),
                        ..opts
                    };
                    let (o, plan) = run_with(
                        q,
                        &d,
                        0.0f32,
                        shape,
                        o16,
                        |v| sum_f32(v).to_bits() as u64,
                        |v| v.to_bits() as u64,
                    );
                    let o = if matches!(o, Outcome::Pass) && !spec(&plan) {
                        Outcome::Fail("the plan did not take the hot loop".into())
                    } else {
                        o
                    };
                    tally.record(&dev, &format!("edge span {w} unroll {unroll} f32"), o);
                }
            }
        }
        for &p in &patterns {
            let d = f32s(p, n, 9);
            let (o, plan) = run_with(
                q,
                &d,
                0.25f32,
                shape,
                opts,
                |v| sum_f32(v).to_bits() as u64,
                |v| v.to_bits() as u64,
            );
            let o = if matches!(o, Outcome::Pass) && !spec(&plan) {
                Outcome::Fail("the plan did not take the speculative loop".into())
            } else {
                o
            };
            tally.record(&dev, &format!("{} f32", p.name()), o);
            if !q.caps().fp64 {
                tally.skip(&dev, &format!("{} f64", p.name()), "no fp64 on the device");
                continue;
            }
            let d = f64s(p, n, 9);
            let (o, plan) = run_with(
                q,
                &d,
                0.25f64,
                shape,
                opts,
                |v| sum_f64(v).to_bits(),
                |v| v.to_bits(),
            );
            let o = if matches!(o, Outcome::Pass) && !spec(&plan) {
                Outcome::Fail("the plan did not take the speculative loop".into())
            } else {
                o
            };
            tally.record(&dev, &format!("{} f64", p.name()), o);
        }
    }
    tally.finish();
}

/// One launch of an exact f32 sum beside min, max, an exact f64 sum and an integer count
/// (`cnt += 1` per element: a redone chunk must not count twice), the speculative loop forced
/// on every device here, in the grid-stride and the contiguous orders: the exact sums' bits equal the single-variable exact sums' (the host's
/// correctly rounded sums, which `speculative_loop_is_exact` holds the one-variable launch to),
/// the others equal the same launch without the speculative loop, and the count is n. The
/// shared and the vector form also run with the other variables in one accumulator each
/// (`Tuning::others_one`, the GPUs' rule for an exact sum beside min and max).
#[test]
fn speculative_loop_beside_other_variables() {
    use clreduce::plan::{HotLoop, IndexOrder, Tuning};
    let mut tally = Tally::new("exact_spec::speculative_loop_beside_other_variables");
    let opts = |spec: bool, order: IndexOrder, hot: HotLoop, one: bool| {
        Options {
            tuning: Some(Tuning {
                spec: Some(spec),
                hot: Some(hot),
                order: Some(order),
                others_one: Some(one),
                ..Tuning::default()
            }),
            ..Options::default()
        }
        .exact()
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(5, |d| d.as_secs());
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        if !q.caps().fp64 {
            tally.skip(
                &dev,
                "all",
                "no fp64 on the device (the launch holds an f64 sum)",
            );
            continue;
        }
        let n = if q.device().is_simulator() {
            3001
        } else {
            200_003
        };
        // Both orders, in the speculative loop and in its hot forms (Tuning::hot): the GPUs'
        // shared one in the grid-stride order, the CPUs' lanes and vector form in the
        // contiguous one.
        let orders = [
            (IndexOrder::GridStride, HotLoop::Off, false),
            (IndexOrder::Contiguous, HotLoop::Off, false),
            (IndexOrder::GridStride, HotLoop::Shared, false),
            (IndexOrder::Contiguous, HotLoop::Lanes, false),
            (IndexOrder::Contiguous, HotLoop::Vector, false),
            (IndexOrder::GridStride, HotLoop::Shared, true),
            (IndexOrder::Contiguous, HotLoop::Vector, true),
        ];
        for (p, (order, hot, one)) in [
            Pattern::Random,
            Pattern::Cancel,
            Pattern::Spread,
            Pattern::Ties,
            Pattern::NaNs,
        ]
        .into_iter()
        .flat_map(|p| orders.map(|o| (p, o)))
        {
            let case = format!("{} {order:?} {hot:?} one {one} seed {seed}", p.name());
            let f = f32s(p, n, seed);
            let d = f64s(p, n, seed ^ 0x5eed);
            let run = |spec: bool| -> Result<(Vec<u64>, Option<clreduce::Plan>), Error> {
                let x = q.buffer_from(&f)?;
                let y = q.buffer_from(&d)?;
                let s32 = q.buffer_from(&[0.5f32])?;
                let mn = q.buffer_from(&[0.0f32])?;
                let mx = q.buffer_from(&[0.0f32])?;
                let s64 = q.buffer_from(&[-0.25f64])?;
                let cnt = q.buffer_from(&[0u32])?;
                let ev = q.parallel_for_reduce_with(
                    Range::new(n as u64),
                    vec![
                        reduction(&s32, Op::Plus),
                        reduction(&mn, Op::Minimum).initialize_to_identity(),
                        reduction(&mx, Op::Maximum).initialize_to_identity(),
                        reduction(&s64, Op::Plus),
                        reduction(&cnt, Op::Plus),
                    ],
                    Kernel::new(
                        "sum += x[i]; combine(sum1, x[i]); combine(sum2, x[i]); sum3 += y[i]; sum4 += 1u;",
                    )
                    .arg("x", &x)
                    .arg("y", &y),
                    opts(spec, order, hot, one),
                )?;
                let bits = vec![
                    s32.get(0)?.to_bits() as u64,
                    mn.get(0)?.to_bits() as u64,
                    mx.get(0)?.to_bits() as u64,
                    s64.get(0)?.to_bits(),
                    cnt.get(0)? as u64,
                ];
                Ok((bits, ev.plan().cloned()))
            };
            let (on, off) = match (run(true), run(false)) {
                (Ok(on), Ok(off)) => (on, off),
                (Err(e), _) | (_, Err(e)) => {
                    match skip_reason(&e) {
                        Some(r) => tally.skip(&dev, &case, &r),
                        None => tally.fail(&dev, &case, &format!("launch: {e}")),
                    }
                    continue;
                }
            };
            let speculated = on.1.as_ref().is_some_and(|p| {
                p.spec_one == one
                    && p.vars.iter().filter_map(|v| v.exact).count() == 2
                    && p.vars
                        .iter()
                        .filter_map(|v| v.exact)
                        .all(|e| e.speculative && e.hot == hot)
            });
            let want32 = sum_f32(&[&[0.5f32][..], &f].concat()).to_bits() as u64;
            let want64 = sum_f64(&[&[-0.25f64][..], &d].concat()).to_bits();
            let want = [want32, off.0[1], off.0[2], want64, n as u64];
            let o = if !speculated {
                Outcome::Fail(format!(
                    "the plan did not take the speculative loop for both exact sums (one accumulator for the others: {one})"
                ))
            } else if on.0 != want {
                Outcome::Fail(format!(
                    "got bits {:x?}, want {want:x?} (exact f32, min, max, exact f64, count)",
                    on.0
                ))
            } else if off.0[0] != want32 || off.0[3] != want64 {
                Outcome::Fail(format!("without the speculative loop: {:x?}", off.0))
            } else {
                Outcome::Pass
            };
            tally.record(&dev, &case, o);
        }
    }
    tally.finish();
}
