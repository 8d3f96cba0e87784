//! The exact sum's tail forms (`Tuning::tail`, design/exact.md "The tail"), forced on every
//! device here so the CPUs run the code the GPU's plans may take: the published limbs summed in
//! local memory, one per work-item, and rounded there in place (`ExactTail::Local`),
//! work-groups publishing without normalizing (`ExactTail::Lean`, the default of f32 sums and
//! small f64 ones), and work-item 0 rounding private copies (`ExactTail::Private`). Bit equality with the host's
//! correctly rounded sum on the adversarial patterns, under every cross-group step (atomic,
//! last-group rows, the extra pass), in ranges and nd_ranges, with two exact sums and other
//! variables in one launch, and in a split across devices (raw mode: the shares' normalized
//! limbs merged on the host).

use crate::common;

#[path = "common/multi.rs"]
mod multi_common;

use clreduce::check::adversarial::{f32s, f64s, Pattern};
use clreduce::exact::{sum_f32, sum_f64};
use clreduce::plan::{ExactTail, Strategy, Tuning};
use clreduce::{reduction, Error, Form, Kernel, NdRange, Op, Options, Queue, Range};
use common::*;
use multi_common::{configs, splits};

/// The strategies whose last step differs: 64-bit atomics onto one superaccumulator, rows
/// summed by the last work-group, rows summed by the extra pass.
const STRATEGIES: [&str; 3] = ["auto", "tree+last-group", "tree+extra-pass"];

fn opts(tail: ExactTail, strategy: &str) -> Options {
    Options {
        tuning: Some(Tuning {
            tail: Some(tail),
            ..Tuning::default()
        }),
        ..Options::default()
    }
    .exact()
    .strategy(Strategy::parse(strategy).expect("strategy"))
}

fn skip_reason(e: &Error) -> Option<String> {
    match e {
        Error::Unsupported { .. } | Error::LocalMemory { .. } | Error::WorkGroupTooLarge { .. } => {
            Some(e.to_string())
        }
        _ => None,
    }
}

/// One exact sum of `data` after `init`: the result's bits and the plan's tail.
fn run<T: clreduce::Element + Copy>(
    q: &Queue,
    data: &[T],
    init: T,
    form: Form,
    o: Options,
    bits: impl Fn(T) -> u64,
) -> Result<(u64, Option<ExactTail>), Error> {
    let x = q.buffer_from(data)?;
    let s = q.buffer_from(&[init])?;
    let ev = q.parallel_for_reduce_with(
        form,
        reduction(&s, Op::Plus),
        Kernel::new("sum += x[i];").arg("x", &x),
        o,
    )?;
    let tail = ev.plan().and_then(|p| p.vars[0].exact).map(|e| e.tail);
    Ok((bits(s.get(0)?), tail))
}

fn outcome(got: Result<(u64, Option<ExactTail>), Error>, want: u64, tail: ExactTail) -> Outcome {
    match got {
        Err(e) => match skip_reason(&e) {
            Some(r) => Outcome::Skip(r),
            None => Outcome::Fail(format!("launch: {e}")),
        },
        Ok((_, t)) if t != Some(tail) => {
            Outcome::Fail(format!("the plan's tail is {t:?}, not {tail:?}"))
        }
        Ok((b, _)) if b != want => Outcome::Fail(format!(
            "got bits {b:#x}, the exact sum rounds to {want:#x}"
        )),
        Ok(_) => Outcome::Pass,
    }
}

/// Every pattern in a range (automatic strategy), three under each forced strategy and in
/// nd_ranges of 1, 96 and 256 work-items per group, f32 and f64, the local and lean tails
/// forced; the private one with three patterns in the range.
#[test]
fn tail_forms_are_exact() {
    let mut tally = Tally::new("exact_tail::tail_forms_are_exact");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let sim = q.device().is_simulator();
        let n = if sim { 3001 } else { 200_003 };
        let mut forms: Vec<(String, Form, usize, Vec<Pattern>)> = vec![(
            format!("range {n}"),
            Range::new(n as u64).into(),
            n,
            Pattern::ALL.to_vec(),
        )];
        for (local, groups) in [(1usize, 5u64), (96, 3), (256, 3)] {
            if local <= q.caps().max_local_1d() {
                let g = local as u64 * groups;
                forms.push((
                    format!("nd {g}/{local}"),
                    NdRange::new(g, local).into(),
                    g as usize,
                    vec![Pattern::Cancel, Pattern::Spread, Pattern::NaNs],
                ));
            }
        }
        for tail in [ExactTail::Private, ExactTail::Local, ExactTail::Lean] {
            for strategy in STRATEGIES {
                // Every pattern in the range under the automatic strategy; three in the range
                // under each forced one and in the nd_ranges (automatic). The private tail (the
                // default of f64 sums above 2^20; session 11's, which tests/exact.rs covered) with
                // the three in the range, automatic strategy, only.
                let few = [Pattern::Cancel, Pattern::Spread, Pattern::NaNs];
                for (k, (label, form, len, patterns)) in forms.iter().enumerate() {
                    let patterns: &[Pattern] = match (k, strategy) {
                        (0, "auto") if tail == ExactTail::Private => &few,
                        (0, "auto") => patterns,
                        _ if tail == ExactTail::Private => &[],
                        (0, _) => &few,
                        (_, "auto") => patterns,
                        _ => &[],
                    };
                    for &p in patterns {
                        let case = format!("{tail:?} {strategy} {label} {}", p.name());
                        let d = f32s(p, *len, 11);
                        let want = sum_f32(&[&[0.25f32][..], &d].concat()).to_bits() as u64;
                        let got = run(q, &d, 0.25f32, *form, opts(tail, strategy), |v| {
                            v.to_bits() as u64
                        });
                        tally.record(&dev, &format!("{case} f32"), outcome(got, want, tail));
                        if !q.caps().fp64 {
                            tally.skip(&dev, &format!("{case} f64"), "no fp64 on the device");
                            continue;
                        }
                        let d = f64s(p, *len, 11);
                        let want = sum_f64(&[&[-0.75f64][..], &d].concat()).to_bits();
                        let got = run(q, &d, -0.75f64, *form, opts(tail, strategy), |v| {
                            v.to_bits()
                        });
                        tally.record(&dev, &format!("{case} f64"), outcome(got, want, tail));
                    }
                }
            }
        }
    }
    tally.finish();
}

/// A launch too large for the lean bound (every deposit within 2^30) plans the local tail
/// instead, on every device (planning only: nothing runs).
#[test]
fn lean_only_within_its_bound() {
    let mut tally = Tally::new("exact_tail::lean_only_within_its_bound");
    for q in queues() {
        let dev = short(q.device());
        for (n, want) in [
            (1u64 << 20, ExactTail::Lean),
            (3u64 << 30, ExactTail::Local),
        ] {
            let s = q.buffer_from(&[0.0f32]).expect("result");
            let plan = q.explain(
                Range::new(n),
                reduction(&s, Op::Plus),
                opts(ExactTail::Lean, "auto"),
            );
            let o = match plan {
                Err(e) => Outcome::Fail(format!("plan: {e}")),
                Ok(p) => match p.vars[0].exact.map(|e| e.tail) {
                    Some(t) if t == want => Outcome::Pass,
                    t => Outcome::Fail(format!("n {n}: tail {t:?}, want {want:?}")),
                },
            };
            tally.record(&dev, &format!("n {n}"), o);
        }
    }
    tally.finish();
}

/// Two exact sums (f32, f64) beside a minimum and a count in one launch, both tails: each exact
/// sum's last step runs in the same last work-group (each with its own local memory and
/// barriers); the exact sums' bits are the host's and the count is n (the minimum rides along,
/// tests/exact.rs checks it).
#[test]
fn tail_forms_with_several_variables() {
    let mut tally = Tally::new("exact_tail::tail_forms_with_several_variables");
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
        for tail in [ExactTail::Local, ExactTail::Lean] {
            for strategy in STRATEGIES {
                for p in [
                    Pattern::Random,
                    Pattern::Cancel,
                    Pattern::Spread,
                    Pattern::NaNs,
                ] {
                    let case = format!("{tail:?} {strategy} {}", p.name());
                    let f = f32s(p, n, 23);
                    let d = f64s(p, n, 29);
                    let run = || -> Result<(Vec<u64>, Vec<Option<ExactTail>>), Error> {
                        let x = q.buffer_from(&f)?;
                        let y = q.buffer_from(&d)?;
                        let s32 = q.buffer_from(&[0.5f32])?;
                        let mn = q.buffer_from(&[0.0f32])?;
                        let s64 = q.buffer_from(&[-0.25f64])?;
                        let cnt = q.buffer_from(&[0u32])?;
                        let ev = q.parallel_for_reduce_with(
                            Range::new(n as u64),
                            vec![
                                reduction(&s32, Op::Plus),
                                reduction(&mn, Op::Minimum).initialize_to_identity(),
                                reduction(&s64, Op::Plus),
                                reduction(&cnt, Op::Plus),
                            ],
                            Kernel::new(
                                "sum += x[i]; combine(sum1, x[i]); sum2 += y[i]; sum3 += 1u;",
                            )
                            .arg("x", &x)
                            .arg("y", &y),
                            opts(tail, strategy),
                        )?;
                        let tails = ev
                            .plan()
                            .map(|p| p.vars.iter().map(|v| v.exact.map(|e| e.tail)).collect())
                            .unwrap_or_default();
                        Ok((
                            vec![
                                s32.get(0)?.to_bits() as u64,
                                mn.get(0)?.to_bits() as u64,
                                s64.get(0)?.to_bits(),
                                cnt.get(0)? as u64,
                            ],
                            tails,
                        ))
                    };
                    let want = [
                        sum_f32(&[&[0.5f32][..], &f].concat()).to_bits() as u64,
                        sum_f64(&[&[-0.25f64][..], &d].concat()).to_bits(),
                        n as u64,
                    ];
                    let o = match run() {
                        Err(e) => match skip_reason(&e) {
                            Some(r) => Outcome::Skip(r),
                            None => Outcome::Fail(format!("launch: {e}")),
                        },
                        Ok((_, t)) if t != [Some(tail), None, Some(tail), None] => {
                            Outcome::Fail(format!("the plan's tails are {t:?}"))
                        }
                        Ok((b, _)) if [b[0], b[2], b[3]] != want => Outcome::Fail(format!(
                            "got {:x?} (exact f32, exact f64, count), want {want:x?}",
                            [b[0], b[2], b[3]]
                        )),
                        Ok(_) => Outcome::Pass,
                    };
                    tally.record(&dev, &case, o);
                }
            }
        }
    }
    tally.finish();
}

/// A split across the devices (raw mode: each share's last step normalizes its limbs and writes
/// them, the host merges and rounds), both tails, f32 and f64: the host's exact sum, bit for bit.
#[test]
fn tail_forms_in_a_split() {
    use clreduce::multi::MultiKernel;
    let n = 20_011usize;
    for (name, mq) in configs("exact_tail::tail_forms_in_a_split") {
        for tail in [ExactTail::Local, ExactTail::Lean] {
            for p in [
                Pattern::Random,
                Pattern::Cancel,
                Pattern::Spread,
                Pattern::NaNs,
            ] {
                let f = f32s(p, n, 0x7a11);
                let d = f64s(p, n, 0x7a12);
                let want32 = sum_f32(&[&[0.5f32][..], &f].concat());
                let want64 = sum_f64(&[&[0.5f64][..], &d].concat());
                for split in splits(n as u64, mq.len(), false) {
                    let x = mq.scatter_with(&f, &split, 1).unwrap();
                    let y = mq.scatter_with(&d, &split, 1).unwrap();
                    let s = mq.queue(0).buffer_from(&[0.5f32]).unwrap();
                    let t = mq.queue(0).buffer_from(&[0.5f64]).unwrap();
                    mq.parallel_for_reduce_with(
                        Range::new(n as u64),
                        vec![reduction(&s, Op::Plus), reduction(&t, Op::Plus)],
                        MultiKernel::new("sum += x[i]; sum1 += y[i];")
                            .arg("x", &x)
                            .arg("y", &y),
                        opts(tail, "auto"),
                    )
                    .unwrap();
                    let (got32, got64) = (s.get(0).unwrap(), t.get(0).unwrap());
                    assert_eq!(
                        (got32.to_bits(), got64.to_bits()),
                        (want32.to_bits(), want64.to_bits()),
                        "{name} {tail:?} {} {:?}: {got32:e} {got64:e} vs {want32:e} {want64:e}",
                        p.name(),
                        split.counts()
                    );
                }
            }
        }
        println!("PASS exact_tail::tail_forms_in_a_split {name}: 2 tails x 4 patterns x f32/f64, bit-identical to the host's exact sums");
    }
}
