//! The exact sum's tail forms (`Tuning::tail`, design/exact.md "The tail"), forced on every
//! device here so the CPUs run the code the GPU's plans may take: the published limbs summed in
//! local memory, one per work-item, and rounded there in place (`ExactTail::Local`),
//! work-groups publishing without normalizing (`ExactTail::Lean`), the lazy finish on top of it
//! (`ExactTail::Lazy`, decision 74: the work-groups' expansions merged by the last one and rounded
//! directly where no limb was touched; under the atomic step only, Lean under the others), and
//! work-item 0 rounding private copies (`ExactTail::Private`). Lean is the default of f32 sums and
//! small f64 ones. Bit equality with the host's
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
use common::rng::Rng;
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

/// The tail a launch forced to `tail` plans under `strategy`: the lazy finish needs the atomic
/// cross step (the automatic one on every device here and the H200), else it runs as Lean.
fn planned(tail: ExactTail, strategy: &str) -> ExactTail {
    match tail {
        ExactTail::Lazy if strategy != "auto" => ExactTail::Lean,
        t => t,
    }
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
        let tails = [
            ExactTail::Private,
            ExactTail::Local,
            ExactTail::Lean,
            ExactTail::Lazy,
        ];
        for tail in tails {
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
                        let planned = planned(tail, strategy);
                        tally.record(&dev, &format!("{case} f32"), outcome(got, want, planned));
                        if !q.caps().fp64 {
                            tally.skip(&dev, &format!("{case} f64"), "no fp64 on the device");
                            continue;
                        }
                        let d = f64s(p, *len, 11);
                        let want = sum_f64(&[&[-0.75f64][..], &d].concat()).to_bits();
                        let got = run(q, &d, -0.75f64, *form, opts(tail, strategy), |v| {
                            v.to_bits()
                        });
                        tally.record(&dev, &format!("{case} f64"), outcome(got, want, planned));
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

/// Two exact sums (f32, f64) beside a minimum and a count in one launch, the local, lean and lazy tails: each exact
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
        for tail in [ExactTail::Local, ExactTail::Lean, ExactTail::Lazy] {
            for strategy in STRATEGIES {
                let planned = Some(planned(tail, strategy));
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
                        Ok((_, t)) if t != [planned, None, planned, None] => {
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
/// them, the host merges and rounds), the local, lean and lazy tails (raw mode runs lazy as lean), f32 and f64: the host's exact sum, bit for bit.
#[test]
fn tail_forms_in_a_split() {
    use clreduce::multi::MultiKernel;
    let n = 20_011usize;
    for (name, mq) in configs("exact_tail::tail_forms_in_a_split") {
        for tail in [ExactTail::Local, ExactTail::Lean, ExactTail::Lazy] {
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
        println!("PASS exact_tail::tail_forms_in_a_split {name}: 3 tails x 4 patterns x f32/f64, bit-identical to the host's exact sums");
    }
}

/// The hand-made sums of `lazy_finish_decides_from_the_expansions`, in f64 values (exact in the
/// element type `f64` says): ties broken to even both ways, hairs above and below a tie, a tie
/// of another binade, cancellation over a wide range and beyond the type's range, exact zeros,
/// a TwoSum residue that has to be deposited, one deposited element (a subnormal) that breaks a
/// tie, a special value, and at the edges of the formats (f64: the window's lower edge and its
/// largest sum; f32: a subnormal result from normal elements and the overflow threshold).
fn crafted(f64: bool) -> Vec<Vec<f64>> {
    let p = |e: i32| 2f64.powi(e);
    let (u, tiny, max) = if f64 {
        (p(-53), p(-1074), f64::MAX)
    } else {
        (p(-24), p(-149), f32::MAX as f64)
    };
    let mut cases = vec![
        vec![1.0, u],
        vec![1.0 + 2.0 * u, u],
        vec![1.0, u, u * p(-46)],
        vec![1.0, u, -u * p(-46)],
        vec![3.0, 2.0 * u, u * p(-70)],
        vec![p(100), 1.0, -p(100)],
        vec![p(100), p(-100), -p(100)],
        vec![max, max, -max],
        vec![0.75, -0.75],
        vec![-0.0, -0.0],
        vec![p(120), p(60), 1.0, -p(120), -p(60)],
        vec![1.0, u, tiny],
        vec![1.0, u, -tiny],
        vec![1.0, f64::INFINITY],
    ];
    if f64 {
        cases.push(vec![1.5 * p(-969), -p(-969)]);
        cases.push(vec![p(989), p(989)]);
    } else {
        cases.push(vec![1.5 * p(-126), -p(-126)]);
        cases.push(vec![max, p(103)]);
        cases.push(vec![max, p(103), -p(50)]);
    }
    cases
}

/// The lazy finish (`ExactTail::Lazy`, decision 74): sums whose correctly rounded value the
/// merged expansion alone decides (the last work-group rounds it directly) or one deposit in
/// one work-group decides (the limbs' way). Each hand-made case (negated for every other seed)
/// is scattered over an nd_range of many work-groups among cancelling pairs, so that work-groups'
/// expansions meet only in the last step, after an initial value that sometimes decides a tie
/// itself; bit for bit against the host's exact sum under the automatic strategy (the lazy
/// finish) and, in turn, the last-group and extra-pass steps (where it plans the lean tail).
#[test]
fn lazy_finish_decides_from_the_expansions() {
    let mut tally = Tally::new("exact_tail::lazy_finish_decides_from_the_expansions");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let sim = q.device().is_simulator();
        let local = if sim { 16 } else { 64 }.min(q.caps().max_local_1d());
        let groups = if sim { 10 } else { 40 };
        let n = local * groups;
        for f64 in [false, true] {
            if f64 && !q.caps().fp64 {
                tally.skip(&dev, "f64", "no fp64 on the device");
                continue;
            }
            let p = |e: i32| 2f64.powi(e);
            let (u, tiny) = if f64 {
                (p(-53), p(-1074))
            } else {
                (p(-24), p(-149))
            };
            let mut rng = Rng(0x1a27 + f64 as u64);
            for (ci, case) in crafted(f64).into_iter().enumerate() {
                let sign = if ci % 2 == 1 { -1.0 } else { 1.0 };
                // The case's elements at random places, cancelling pairs everywhere else.
                let mut xs: Vec<f64> = case.iter().map(|v| v * sign).collect();
                while xs.len() + 1 < n {
                    let v = (1 + rng.below(16)) as f64 * 0.5;
                    xs.extend([v, -v]);
                }
                xs.resize(n, 0.0);
                for j in (1..n).rev() {
                    xs.swap(j, rng.below(j as u64 + 1) as usize);
                }
                let init = [0.0, -0.0, u, -u, 0.25, tiny][rng.below(6) as usize];
                let form: Form = NdRange::new(n as u64, local).into();
                let forced = STRATEGIES[1 + ci % 2];
                let strategies: &[&str] = if sim { &["auto"] } else { &["auto", forced] };
                for &strategy in strategies {
                    let want_tail = if strategy == "auto" {
                        ExactTail::Lazy
                    } else {
                        ExactTail::Lean
                    };
                    let label = format!("case {ci} {strategy} init {init:e}");
                    let o = if f64 {
                        let want = sum_f64(&[&[init][..], &xs].concat()).to_bits();
                        let got = run(q, &xs, init, form, opts(ExactTail::Lazy, strategy), |v| {
                            v.to_bits()
                        });
                        outcome(got, want, want_tail)
                    } else {
                        let d: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
                        let i = init as f32;
                        let want = sum_f32(&[&[i][..], &d].concat()).to_bits() as u64;
                        let got = run(q, &d, i, form, opts(ExactTail::Lazy, strategy), |v| {
                            v.to_bits() as u64
                        });
                        outcome(got, want, want_tail)
                    };
                    let ty = if f64 { "f64" } else { "f32" };
                    tally.record(&dev, &format!("{ty} {label}"), o);
                }
            }
        }
    }
    tally.finish();
}

/// Sums whose superaccumulator carries or borrows across many limbs: a large value and a tiny
/// one of the other sign (a run of ones between them), their negations (a negative sum: the
/// borrow reaches the top digit), ties and near ties at the ends of such runs, values at both
/// ends of the format. Each case's elements sit in different work-groups among cancelling pairs.
fn carry_chains(f64: bool) -> Vec<Vec<f64>> {
    let p = |e: i32| 2f64.powi(e);
    let (hi, lo, u) = if f64 {
        (1000, -1060, p(-53))
    } else {
        (120, -140, p(-24))
    };
    vec![
        vec![p(hi), -p(lo)],
        vec![-p(hi), p(lo)],
        vec![p(hi), -p(lo), -p(lo)],
        vec![p(hi) * (1.0 + 2.0 * u), p(hi) * u, -p(lo)],
        vec![p(hi) * (1.0 + 2.0 * u), -p(hi) * u, p(lo)],
        vec![-p(hi) * (1.0 + 2.0 * u), -p(hi) * u, p(lo)],
        vec![p(hi), p(hi - 30), -p(hi - 30), -p(lo), p(lo + 1)],
        vec![1.0, -p(lo), p(hi), -p(hi)],
        vec![-1.0, p(lo), -u, u * 0.5],
        vec![p(40), -p(-40), -p(40)],
        vec![p(lo), -p(lo + 40)],
    ]
}

/// The last step's rounding by the work-group (kernels/var_exact.cl clr_xround_par, decision
/// 85; Intel and Oclgrind here: PoCL rounds serially): sums whose limbs carry and borrow across
/// the whole superaccumulator (carry_chains) and the lazy test's hand-made cases, each
/// (negated for every other seed) scattered over an nd_range of many work-groups among
/// cancelling pairs, after an initial value; bit for bit against the host under the lean tail
/// with the atomic, last-group and extra-pass steps.
#[test]
fn group_rounding_resolves_carries() {
    let mut tally = Tally::new("exact_tail::group_rounding_resolves_carries");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let sim = q.device().is_simulator();
        let local = if sim { 16 } else { 64 }.min(q.caps().max_local_1d());
        let groups = if sim { 6 } else { 24 };
        let n = local * groups;
        for f64 in [false, true] {
            if f64 && !q.caps().fp64 {
                tally.skip(&dev, "f64", "no fp64 on the device");
                continue;
            }
            let mut rng = Rng(0x85c0 + f64 as u64);
            let cases = [carry_chains(f64), crafted(f64)].concat();
            for (ci, case) in cases.into_iter().enumerate() {
                let sign = if ci % 2 == 1 { -1.0 } else { 1.0 };
                let mut xs: Vec<f64> = case.iter().map(|v| v * sign).collect();
                while xs.len() + 1 < n {
                    let v = (1 + rng.below(16)) as f64 * 0.25;
                    xs.extend([v, -v]);
                }
                xs.resize(n, 0.0);
                for j in (1..n).rev() {
                    xs.swap(j, rng.below(j as u64 + 1) as usize);
                }
                let init = [0.0, -0.0, 0.25, -1.5][rng.below(4) as usize];
                let form: Form = NdRange::new(n as u64, local).into();
                let strategies: &[&str] = if sim { &["auto"] } else { &STRATEGIES };
                for &strategy in strategies {
                    let label = format!("case {ci} {strategy} init {init:e}");
                    let o = if f64 {
                        let want = sum_f64(&[&[init][..], &xs].concat()).to_bits();
                        let got = run(q, &xs, init, form, opts(ExactTail::Lean, strategy), |v| {
                            v.to_bits()
                        });
                        outcome(got, want, ExactTail::Lean)
                    } else {
                        let d: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
                        let i = init as f32;
                        let want = sum_f32(&[&[i][..], &d].concat()).to_bits() as u64;
                        let got = run(q, &d, i, form, opts(ExactTail::Lean, strategy), |v| {
                            v.to_bits() as u64
                        });
                        outcome(got, want, ExactTail::Lean)
                    };
                    let ty = if f64 { "f64" } else { "f32" };
                    tally.record(&dev, &format!("{ty} {label}"), o);
                }
            }
        }
    }
    tally.finish();
}

/// The warp merge tried without deposits (NVIDIA's PTX warp merge, `CLR_XMTRY`, decisions 85 and
/// 88) must redo a warp whose merges leave a residue: three values of one work-group whose
/// exponents lie more than 53 apart (big, mid, small, each in its own work-item) leave `small` as
/// a TwoSum residue of whichever merge brings the three together (the expansion holds big and
/// mid), and `-big`, `-mid` in another work-group cancel the rest, so the residue is the whole
/// sum. In nd_ranges of 64 work-items (two warps: the residue arises in a warp's merge or in
/// warp 0's merge of the warps' expansions) and in ranges (the values 1-128 indices apart), f32
/// and f64, after an initial value; bit for bit against the host under the automatic strategy.
/// Elsewhere (trees, sub-groups) it is one more exact sum.
#[test]
fn warp_merges_keep_their_residues() {
    let mut tally = Tally::new("exact_tail::warp_merges_keep_their_residues");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let sim = q.device().is_simulator();
        let local = 64.min(q.caps().max_local_1d());
        if local < 8 {
            tally.skip(&dev, "all", "work-groups of fewer than 8 work-items");
            continue;
        }
        let groups = if sim { 3 } else { 8 };
        let n = local * groups;
        for f64 in [false, true] {
            if f64 && !q.caps().fp64 {
                tally.skip(&dev, "f64", "no fp64 on the device");
                continue;
            }
            let mut rng = Rng(0x88a0 + f64 as u64);
            let cases = if sim { 6 } else { 24 };
            for ci in 0..cases {
                // Exponents: f32 data in [-126, 127], f64 data within the expansion's window.
                let top = if f64 { 900 } else { 127 };
                let e1 = top - rng.below(if f64 { 400 } else { 20 }) as i32;
                let e2 = e1 - 54 - rng.below(10) as i32;
                let e3 = e2 - 54 - rng.below(10) as i32;
                let sign = if rng.below(2) == 1 { -1.0 } else { 1.0 };
                let [big, mid, small] = [e1, e2, e3].map(|e| sign * 2f64.powi(e));
                let mut xs = vec![0.0f64; n];
                let nd = ci % 2 == 0;
                let form: Form = if nd {
                    // Three distinct work-items of work-group g, the cancelling pair in g + 1.
                    let g = rng.below(groups as u64 - 1) as usize;
                    let mut lanes = Vec::new();
                    while lanes.len() < 5 {
                        let l = rng.below(local as u64) as usize;
                        if !lanes.contains(&l) {
                            lanes.push(l);
                        }
                    }
                    xs[g * local + lanes[0]] = big;
                    xs[g * local + lanes[1]] = mid;
                    xs[g * local + lanes[2]] = small;
                    xs[(g + 1) * local + lanes[3]] = -big;
                    xs[(g + 1) * local + lanes[4]] = -mid;
                    NdRange::new(n as u64, local).into()
                } else {
                    let gap = 1 + rng.below(128.min(n as u64 / 2 - 2)) as usize;
                    xs[0] = big;
                    xs[gap] = mid;
                    xs[2 * gap] = small;
                    xs[n - 1] = -big;
                    xs[n - 2] = -mid;
                    Range::new(n as u64).into()
                };
                let init = [0.0, -0.0, small, -small * 0.5][rng.below(4) as usize];
                let label = format!(
                    "case {ci} {} 2^{e1} 2^{e2} 2^{e3} sign {sign} init {init:e}",
                    if nd { "nd_range" } else { "range" }
                );
                let o = if f64 {
                    let want = sum_f64(&[&[init][..], &xs].concat()).to_bits();
                    let got = run(q, &xs, init, form, Options::default().exact(), |v| {
                        v.to_bits()
                    });
                    plain_outcome(got, want)
                } else {
                    let d: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
                    let i = init as f32;
                    let want = sum_f32(&[&[i][..], &d].concat()).to_bits() as u64;
                    let got = run(q, &d, i, form, Options::default().exact(), |v| {
                        v.to_bits() as u64
                    });
                    plain_outcome(got, want)
                };
                let ty = if f64 { "f64" } else { "f32" };
                tally.record(&dev, &format!("{ty} {label}"), o);
            }
        }
    }
    tally.finish();
}

/// `outcome` without a tail to check (the automatic plan's).
fn plain_outcome(got: Result<(u64, Option<ExactTail>), Error>, want: u64) -> Outcome {
    match got {
        Err(e) => match skip_reason(&e) {
            Some(r) => Outcome::Skip(r),
            None => Outcome::Fail(format!("launch: {e}")),
        },
        Ok((b, _)) if b != want => Outcome::Fail(format!(
            "got bits {b:#x}, the exact sum rounds to {want:#x}"
        )),
        Ok(_) => Outcome::Pass,
    }
}
