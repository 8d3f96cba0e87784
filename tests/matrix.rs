//! The capability matrix: every forced strategy (GroupAlgo x CrossAlgo) and the automatic one,
//! in both forms, over all 9 ops and all 6 reducible types, with and without
//! initialize_to_identity, on every OpenCL device found; plus the automatic strategy under
//! capability masks. One test per (strategy, form) and per (mask, form), each looping over
//! devices, ops, types and sizes; test names come from the same identifiers as the strategies
//! and masks they run.
//!
//! A combination a device cannot run is reported as `SKIP <device> <case>: <reason>` (run with
//! `--nocapture` to see them) and counted; every test ends with a `passed/failed/skipped`
//! summary per device (`SUMMARY <test> [<device>]: ...`). The verdict (`MatrixTally` in
//! `tests/common`):
//! - any failed case fails the test;
//! - a device that passed nothing is fine only if every one of its skips is explained by a
//!   missing capability (`capability_gap`: the type, the forced steps, the work-group size
//!   limit), as on NVIDIA's OpenCL, which has no work-group collectives, under `wg_reduce+*`;
//!   otherwise it could have run them and the test fails;
//! - every device must record exactly the cases it was given, and some device must be given
//!   cases: a case silently not run, or a loop that ran nothing, fails the test;
//! - a test no device can run passes with a `SKIP <test>: ...` line saying so.
//!
//! No OpenCL device at all fails every test, with the setup hint (`common::queues`).
//!
//! Coverage per (device, strategy), chosen to keep program builds (the cost that dominates on
//! PoCL) low; see `Level` for which (op, type) pairs each test takes (every op and every type
//! in each):
//! - range: n = 0 (both init modes), 1, 2, 255, 256, 257, 4097 (one init mode per pair,
//!   alternating), plus n = 1000003 for plus and min;
//! - nd_range: one work-group size per pair from {1, 3, 96, 256, 1000} (rotating, so every
//!   size is met), init modes alternating, plus every size for plus on i32 and f64 under the
//!   automatic strategy; 1 to 700 work-groups, and 0 work-items for local 1.
//!
//! Oclgrind (a slow simulator) gets a quarter of the pairs, n <= 4097.
//!
//! A run takes a seeded half of the pairs in the range form under the automatic and the forced
//! strategies (still every op and every type per test), unless `CLREDUCE_FULL_MATRIX=1` (scripts/gpu.sh sets it); each test prints its seed
//! (`SAMPLE ...`, `CLREDUCE_SAMPLE_SEED` replays it). See `Sample`.

use crate::common;

use clreduce::plan::{CrossAlgo, GroupAlgo, Strategy};
use clreduce::{ElemType, Mask, Op, Queue};
use common::*;

/// Work-group sizes of the nd_range form; `DEVICE_MAX` stands for the device's maximum
/// (resolved per device by `locals`).
const DEVICE_MAX: usize = 0;
const LOCALS: [usize; 8] = [1, 3, 7, 64, 96, 256, 1000, DEVICE_MAX];

/// `LOCALS` with the device's maximum work-group size filled in.
fn locals(max_local: usize) -> [usize; 8] {
    LOCALS.map(|l| if l == DEVICE_MAX { max_local } else { l })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FormKind {
    Range,
    NdRange,
}

/// How much of the matrix a test runs on a device. Program builds dominate: about 1 s each on
/// PoCL, and PoCL builds one program at a time per process. Each (strategy, op, type, init,
/// work-group size) is one program (any n of the range form reuses it), so the levels differ in
/// which (op, type) pairs they take; every subset still holds every op and every type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// The automatic strategy: every pair in the range form, a third in nd_range (plus every
    /// work-group size for plus on i32 and f64).
    Auto,
    /// A forced strategy: half the pairs in the range form, a sixth in nd_range.
    Forced,
    /// A mask (automatic strategy): a sixth of the pairs in each form.
    Masked,
    /// Oclgrind, a slow simulator: a quarter of the pairs, n <= 4097.
    Sim,
}

/// Which slice of the matrix a run takes (`tests/common/sample.rs`): `every` 1 is the full
/// matrix; `every` 2 halves the (op, type) pairs of the range form's subsets with k <= 3
/// (`pairs`: the automatic and the forced strategies' range tests, where the time goes),
/// taking the pairs with (op + type) % 2k == `offset` k: a subset of the full run's pairs that
/// still holds every op and every type (k <= 6 leaves each residue class with all 9 ops and all
/// 6 types). The nd_range subsets (their work-group sizes rotate through the pairs) and those
/// that already take a sixth (or a quarter, on the simulator) are not cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    every: usize,
    offset: usize,
}

impl Sample {
    const FULL: Sample = Sample {
        every: 1,
        offset: 0,
    };
    /// The sample of one test: the full matrix with `CLREDUCE_FULL_MATRIX=1`, otherwise half,
    /// the half chosen by the run's seed and the test's name.
    fn of(test: &str) -> Sample {
        announce_sample(test);
        if full_matrix() {
            Sample::FULL
        } else {
            Sample {
                every: 2,
                offset: (sample_hash(test) % 2) as usize,
            }
        }
    }
}

/// The (op, type) pairs a level takes in a form: those with (op + type) % k == 0 (in a sample,
/// the slice `Sample` says).
fn pairs(level: Level, form: FormKind, sample: Sample) -> Vec<(Op, ElemType)> {
    let k = match (level, form) {
        (Level::Auto, FormKind::Range) => 1,
        (Level::Forced, FormKind::Range) => 2,
        (Level::Auto, FormKind::NdRange) => 3,
        (Level::Forced, FormKind::NdRange) | (Level::Masked, _) => 6,
        (Level::Sim, _) => 4,
    };
    let (k, r) = if sample.every > 1 && form == FormKind::Range && k * sample.every <= 6 {
        (k * sample.every, (sample.offset % sample.every) * k)
    } else {
        (k, 0)
    };
    valid_pairs()
        .into_iter()
        .filter(|&(op, ty)| (op_index(op) + ty_index(ty)) % k == r)
        .collect()
}

/// The init mode of the pair at `pos` in its subset: alternating so that, in the full list,
/// every op and every type meets both modes; the nd_range form uses the other one.
fn init_for(pos: usize, op: Op, form: FormKind) -> bool {
    (pos + pos / 2 + op_index(op)).is_multiple_of(2) == (form == FormKind::Range)
}

/// Work-group counts per work-group size (`max`: the size is the device's maximum).
fn nd_groups(local: usize, max: bool, sim: bool) -> &'static [u64] {
    match (local, max, sim) {
        (_, true, false) => &[1, 2, 5],
        (_, true, true) => &[1],
        (1, _, false) => &[0, 1, 2, 7, 700],
        (3, _, false) => &[1, 2, 7, 400],
        (7, _, false) => &[1, 2, 7, 300],
        (64, _, false) => &[1, 2, 7, 200],
        (96, _, false) => &[1, 2, 7, 150],
        (256, _, false) => &[1, 2, 7, 300],
        (_, _, false) => &[1, 2, 7, 40],
        (1, _, true) => &[0, 1, 2, 300],
        (3, _, true) => &[1, 2, 100],
        (7, _, true) => &[1, 2, 60],
        (64, _, true) => &[1, 2, 30],
        (96, _, true) => &[1, 2, 40],
        (256, _, true) => &[1, 16],
        (_, _, true) => &[1, 4],
    }
}

/// Range sizes every pair meets (n = 0 runs in both init modes besides).
const SIZES: [u64; 9] = [1, 2, 3, 31, 255, 256, 257, 4097, 65537];
const SIM_SIZES: [u64; 5] = [1, 3, 31, 257, 4097];
/// Range sizes of the feature rows.
const FEATURE_SIZES: [u64; 5] = [0, 1, 31, 4097, 65537];
const SIM_FEATURE_SIZES: [u64; 3] = [0, 3, 257];
/// 2^24 + 1: plus on every type under the automatic strategy (the input is read from more than
/// the last-level cache; the result crosses 2^24, where f32 stops counting exactly).
const HUGE: u64 = (1 << 24) + 1;

/// A number per strategy (the forced ones in `Strategy::all_forced` order, then the automatic
/// one), so that the feature rows rotate through the types across the tests.
fn salt(strategy: Strategy) -> usize {
    let forced = Strategy::all_forced();
    forced
        .iter()
        .position(|&s| s == strategy)
        .unwrap_or(forced.len())
}

/// The cases of one (strategy, form) on one device whose largest work-group is `max_local`.
/// `extra` rotates the feature rows' types (mask tests pass their position).
fn cases(
    strategy: Strategy,
    form: FormKind,
    level: Level,
    max_local: usize,
    extra: usize,
    sample: Sample,
) -> Vec<Case> {
    let sim = level == Level::Sim;
    let sizes = locals(max_local);
    let mut out = Vec::new();
    let mut push = |op, ty, f, init: bool, seed: u64, feature: Option<Feature>| {
        let mut c = Case {
            op,
            ty,
            form: f,
            init_to_identity: init,
            strategy,
            relaxed: false,
            seed,
            feature,
        };
        // Forcing float atomics under plus/multiplies needs relaxed determinism (the
        // deterministic refusal is checked in tests/errors.rs).
        c.relaxed = forces_order_dependence(&c);
        out.push(c)
    };
    // Positions in the full subset (init modes and work-group sizes rotate with them), so a
    // sample's cases are cases of the full run.
    let taken = pairs(level, form, sample);
    let full = pairs(level, form, Sample::FULL).into_iter().enumerate();
    for (pos, (op, ty)) in full.filter(|(_, p)| taken.contains(p)) {
        let init = init_for(pos, op, form);
        match form {
            FormKind::Range => {
                for init0 in [false, true] {
                    push(op, ty, range(0), init0, 1, None);
                }
                let sizes: &[u64] = if sim { &SIM_SIZES } else { &SIZES };
                for &n in sizes {
                    push(op, ty, range(n), init, n + 11, None);
                }
                if !sim && matches!(op, Op::Plus | Op::Minimum) {
                    push(op, ty, range(1_000_003), init, 5, None);
                }
                if level == Level::Auto && op == Op::Plus {
                    push(op, ty, range(HUGE), init, 9, None);
                }
            }
            FormKind::NdRange => {
                // Rotating through the subset's order gives every op and every type several
                // work-group sizes; plus on i32 and f64 meets all of them.
                let primary = pos % sizes.len();
                let all_sizes = level == Level::Auto
                    && op == Op::Plus
                    && matches!(ty, ElemType::I32 | ElemType::F64);
                for (k, &local) in sizes.iter().enumerate() {
                    if k != primary && !all_sizes {
                        continue;
                    }
                    for &g in nd_groups(local, LOCALS[k] == DEVICE_MAX, sim) {
                        push(
                            op,
                            ty,
                            nd(g * local as u64, local),
                            init,
                            g + local as u64,
                            None,
                        );
                    }
                }
            }
        }
    }
    // The feature rows: each feature on one type (rotating with the strategy), one init mode
    // (alternating; an identity-less op has no initialize_to_identity), and in nd_range one
    // work-group size (rotating).
    let s = salt(strategy) + extra;
    for (fi, f) in Feature::ALL.into_iter().enumerate() {
        let ty = ElemType::REDUCIBLE[(fi + s) % ElemType::REDUCIBLE.len()];
        let init =
            f.has_identity() && (fi + s + (form == FormKind::NdRange) as usize).is_multiple_of(2);
        match form {
            FormKind::Range => {
                let sizes: &[u64] = if sim {
                    &SIM_FEATURE_SIZES
                } else {
                    &FEATURE_SIZES
                };
                for &n in sizes {
                    push(f.op(), ty, range(n), init, n + 17 + fi as u64, Some(f));
                }
            }
            FormKind::NdRange => {
                let k = (fi + s) % sizes.len();
                for &g in nd_groups(sizes[k], LOCALS[k] == DEVICE_MAX, sim) {
                    let local = sizes[k];
                    push(
                        f.op(),
                        ty,
                        nd(g * local as u64, local),
                        init,
                        g + local as u64,
                        Some(f),
                    );
                }
            }
        }
    }
    out
}

/// The queues, starting at a device that depends on the test name: PoCL builds one program at
/// a time per process, so tests running side by side should not all start on the same device.
fn rotated(test: &str) -> Vec<&'static Queue> {
    let qs: Vec<&Queue> = queues().iter().collect();
    let h = test
        .bytes()
        .fold(7usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
    if qs.is_empty() {
        return qs; // MatrixTally then fails the test: no case was given to any device
    }
    let k = h % qs.len();
    qs[k..].iter().chain(&qs[..k]).copied().collect()
}

/// Runs the cases of one (strategy, form) on every device, through `queue_for`.
fn run_matrix(test: &str, strategy: Strategy, form: FormKind, queue_for: impl Fn(&Queue) -> Queue) {
    let mut tally = MatrixTally::new(test);
    let sample = Sample::of(test);
    for base in rotated(test) {
        let q = queue_for(base);
        let dev = short(q.device());
        let level = if q.device().is_simulator() {
            Level::Sim
        } else if strategy == Strategy::AUTO {
            Level::Auto
        } else {
            Level::Forced
        };
        let _serial = sim_lock(q.device());
        let t = std::time::Instant::now();
        let cases = cases(strategy, form, level, q.caps().max_local_1d(), 0, sample);
        tally.expect(&dev, cases.len());
        for c in cases {
            let o = run_case(&q, &c);
            tally.record(&dev, q.caps(), &c, o);
        }
        tally.time(&dev, t.elapsed().as_secs_f64());
    }
    tally.finish();
}

/// One module per work-group step, one per cross-group step inside it, with a `range` and an
/// `nd_range` test each: `tree::last_group::nd_range` runs tree+last-group. Also defines
/// `FORCED`, the list the macro was given, which `forced_list_is_complete` compares with
/// `Strategy::all_forced()`.
macro_rules! forced_matrix {
    ($( $g:ident = $G:ident : [ $( $c:ident = $C:ident ),* $(,)? ] ; )*) => {
        const FORCED: &[(&str, &str, GroupAlgo, CrossAlgo)] = &[
            $($( (stringify!($g), stringify!($c), GroupAlgo::$G, CrossAlgo::$C), )*)*
        ];
        $(
            mod $g {
                $(
                    mod $c {
                        use super::super::*;
                        const STRATEGY: Strategy = Strategy {
                            group: Some(GroupAlgo::$G),
                            cross: Some(CrossAlgo::$C),
                        };
                        #[test]
                        fn range() {
                            run_matrix(
                                concat!(stringify!($g), "::", stringify!($c), "::range"),
                                STRATEGY,
                                FormKind::Range,
                                Queue::clone,
                            );
                        }
                        #[test]
                        fn nd_range() {
                            run_matrix(
                                concat!(stringify!($g), "::", stringify!($c), "::nd_range"),
                                STRATEGY,
                                FormKind::NdRange,
                                Queue::clone,
                            );
                        }
                    }
                )*
            }
        )*
    };
}

forced_matrix! {
    tree = Tree: [atomic = Atomic, last_group = LastGroup, extra_pass = ExtraPass];
    wg_reduce = WgReduce: [atomic = Atomic, last_group = LastGroup, extra_pass = ExtraPass];
    sg_reduce = SgReduce: [atomic = Atomic, last_group = LastGroup, extra_pass = ExtraPass];
    local_atomic = LocalAtomic: [atomic = Atomic, last_group = LastGroup, extra_pass = ExtraPass];
}

#[test]
fn subsets_cover_every_op_type_and_size() {
    use std::collections::BTreeSet;
    const MAX: usize = 4096;
    let samples = [
        Sample::FULL,
        Sample {
            every: 2,
            offset: 0,
        },
        Sample {
            every: 2,
            offset: 1,
        },
    ];
    for (level, form, sample) in [Level::Auto, Level::Forced, Level::Masked, Level::Sim]
        .into_iter()
        .flat_map(|l| [FormKind::Range, FormKind::NdRange].map(|f| (l, f)))
        .flat_map(|(l, f)| samples.map(|s| (l, f, s)))
    {
        // A sample is a subset of the full run.
        let full: Vec<String> = cases(Strategy::AUTO, form, level, MAX, 0, Sample::FULL)
            .iter()
            .map(|c| format!("{c:?}"))
            .collect();
        {
            let all = cases(Strategy::AUTO, form, level, MAX, 0, sample);
            assert!(
                all.iter().all(|c| full.contains(&format!("{c:?}"))),
                "{level:?} {form:?} {sample:?}: a case outside the full matrix"
            );
            let cut = form == FormKind::Range && matches!(level, Level::Auto | Level::Forced);
            if sample != Sample::FULL && cut {
                assert!(all.len() < full.len(), "{level:?} {form:?} {sample:?}");
            }
            let cs: Vec<&Case> = all.iter().filter(|c| c.feature.is_none()).collect();
            let ops: BTreeSet<_> = cs.iter().map(|c| op_index(c.op)).collect();
            let tys: BTreeSet<_> = cs.iter().map(|c| ty_index(c.ty)).collect();
            assert_eq!(ops.len(), Op::ALL.len(), "{level:?} {form:?}");
            assert_eq!(tys.len(), ElemType::REDUCIBLE.len(), "{level:?} {form:?}");
            let inits: BTreeSet<_> = cs.iter().map(|c| c.init_to_identity).collect();
            assert_eq!(inits.len(), 2, "{level:?} {form:?}");
            let local_of = |c: &Case| match c.form {
                clreduce::Form::NdRange(r) => r.local,
                _ => unreachable!(),
            };
            if form == FormKind::NdRange {
                let locals: BTreeSet<_> = cs.iter().map(|c| local_of(c)).collect();
                assert_eq!(locals.len(), LOCALS.len(), "{level:?}");
                assert!(locals.contains(&MAX), "{level:?}: the device maximum");
            } else if level != Level::Sim {
                let ns: BTreeSet<_> = cs.iter().map(|c| c.size()).collect();
                for n in [0, 1, 2, 3, 31, 255, 256, 257, 4097, 65537, 1_000_003] {
                    assert!(ns.contains(&n), "{level:?}: n = {n}");
                }
                assert_eq!(
                    ns.contains(&HUGE),
                    level == Level::Auto,
                    "{level:?}: 2^24 + 1"
                );
            }
            if level == Level::Sim {
                assert!(all.iter().all(|c| c.size() <= 4097));
            }
            // Every feature row, in each test.
            let fs: BTreeSet<String> = all
                .iter()
                .filter_map(|c| c.feature)
                .map(|f| f.name())
                .collect();
            assert_eq!(fs.len(), Feature::ALL.len(), "{level:?} {form:?}");
        }
    }
    // Across the tests (strategies and masks), every feature meets every type, both init modes
    // (when it has an identity) and, in nd_range, every work-group size.
    for f in Feature::ALL {
        let mut tys = BTreeSet::new();
        let mut inits = BTreeSet::new();
        let mut locals = BTreeSet::new();
        let forced = Strategy::all_forced();
        for s in forced.iter().copied().chain([Strategy::AUTO]) {
            for form in [FormKind::Range, FormKind::NdRange] {
                for c in cases(s, form, Level::Forced, MAX, 0, Sample::FULL) {
                    if c.feature == Some(f) {
                        tys.insert(ty_index(c.ty));
                        inits.insert(c.init_to_identity);
                        if let clreduce::Form::NdRange(r) = c.form {
                            locals.insert(r.local);
                        }
                    }
                }
            }
        }
        assert_eq!(tys.len(), ElemType::REDUCIBLE.len(), "{f:?}");
        assert_eq!(inits.len(), 1 + f.has_identity() as usize, "{f:?}");
        assert_eq!(locals.len(), LOCALS.len(), "{f:?}");
    }
}

/// The verdict rule of `MatrixTally` on hand-made records against capability fixtures (no
/// device): what may pass and what must fail.
#[test]
fn verdict_rule() {
    use clreduce::caps::fixtures;
    let (nvidia, intel) = (fixtures::nvidia_h200(), fixtures::intel_cpu());
    let wg = Strategy::new(GroupAlgo::WgReduce, CrossAlgo::Atomic);
    let tree = Strategy::new(GroupAlgo::Tree, CrossAlgo::Atomic);
    let case = |strategy| Case {
        op: Op::Plus,
        ty: ElemType::I32,
        form: range(1000),
        init_to_identity: false,
        strategy,
        relaxed: false,
        seed: 1,
        feature: None,
    };
    let skip = || Outcome::Skip("cannot run on this device: some reason".into());
    let verdict = |t: &MatrixTally| t.verdict().1;

    // NVIDIA has no work-group collectives: every wg_reduce case skipped there, and run on
    // Intel. Passes.
    let mut t = MatrixTally::new("nvidia_and_intel");
    t.expect("3:NVIDIA", 2);
    t.record("3:NVIDIA", &nvidia, &case(wg), skip());
    t.record("3:NVIDIA", &nvidia, &case(wg), skip());
    t.expect("2:Intel", 1);
    t.record("2:Intel", &intel, &case(wg), Outcome::Pass);
    assert_eq!(verdict(&t), Ok(String::new()));
    let lines = t.verdict().0;
    assert!(
        lines.iter().any(|l| l
            .starts_with("SUMMARY nvidia_and_intel [3:NVIDIA]: 0 passed/0 failed/2 skipped")
            && l.ends_with("every skip for a missing capability)")),
        "{lines:#?}"
    );

    // NVIDIA alone: nothing can run anywhere, for a missing capability. Passes, saying so.
    let mut t = MatrixTally::new("nvidia_only");
    t.expect("3:NVIDIA", 1);
    t.record("3:NVIDIA", &nvidia, &case(wg), skip());
    let note = verdict(&t).expect("a capability skip everywhere passes");
    assert!(note.starts_with("SKIP nvidia_only: no device found has the capabilities"));

    // A device that has the capability but skipped everything could have run it. Fails, even
    // when another device passed.
    let mut t = MatrixTally::new("intel_skips");
    t.expect("2:Intel", 1);
    t.record("2:Intel", &intel, &case(wg), skip());
    t.expect("0:PoCL", 1);
    t.record("0:PoCL", &fixtures::pocl_cpu(), &case(tree), Outcome::Pass);
    let problems = verdict(&t).unwrap_err();
    assert!(
        problems[0].contains("2:Intel: nothing passed"),
        "{problems:?}"
    );

    // A case given to a device but never recorded fails, even with a pass elsewhere.
    let mut t = MatrixTally::new("silent");
    t.expect("2:Intel", 2);
    t.record("2:Intel", &intel, &case(tree), Outcome::Pass);
    let problems = verdict(&t).unwrap_err();
    assert!(
        problems[0].contains("given 2 case(s) but 1 were"),
        "{problems:?}"
    );

    // No device looped over, or no case generated: fails.
    assert!(verdict(&MatrixTally::new("no_devices")).is_err());
    let mut t = MatrixTally::new("no_cases");
    t.expect("2:Intel", 0);
    assert!(verdict(&t).is_err());

    // A failed case fails.
    let mut t = MatrixTally::new("failed");
    t.expect("2:Intel", 2);
    t.record("2:Intel", &intel, &case(tree), Outcome::Pass);
    t.record("2:Intel", &intel, &case(wg), Outcome::Fail("wrong".into()));
    assert!(verdict(&t).unwrap_err()[0].starts_with("1 case(s) failed"));
}

#[test]
fn forced_list_is_complete() {
    let listed: Vec<Strategy> = FORCED
        .iter()
        .map(|&(_, _, g, c)| Strategy::new(g, c))
        .collect();
    assert_eq!(
        listed,
        Strategy::all_forced(),
        "the matrix must list every forced strategy"
    );
    for &(g, c, gv, cv) in FORCED {
        // The test names are the strategies' own names.
        assert_eq!(g.replace('_', "-"), gv.name());
        assert_eq!(c.replace('_', "-"), cv.name());
        assert_eq!(
            clreduce::plan::Strategy::parse(&format!("{}+{}", gv.name(), cv.name())).unwrap(),
            Strategy::new(gv, cv)
        );
    }
}

mod auto {
    use super::*;
    #[test]
    fn range() {
        run_matrix("auto::range", Strategy::AUTO, FormKind::Range, Queue::clone);
    }
    #[test]
    fn nd_range() {
        run_matrix(
            "auto::nd_range",
            Strategy::AUTO,
            FormKind::NdRange,
            Queue::clone,
        );
    }
}

/// The automatic strategy on every device under a capability mask: one module per mask, named
/// by the mask (`__` separates masks, `_` stands for `-`), with `range` and `nd_range` tests.
/// Besides the results, `check_plan` verifies that the plan only uses what the masked
/// capabilities allow, and `mask_effect` what each mask must change.
macro_rules! mask_matrix {
    ($( $m:ident ),* $(,)?) => {
        const MASKS: &[&str] = &[$(stringify!($m)),*];
        mod masks {
            $(
                #[allow(non_snake_case)]
                mod $m {
                    use super::super::*;
                    fn mask() -> Mask {
                        Mask::parse(&mask_spec(stringify!($m))).expect("known mask")
                    }
                    #[test]
                    fn range() {
                        mask_test(concat!("masks::", stringify!($m), "::range"), mask(), FormKind::Range);
                    }
                    #[test]
                    fn nd_range() {
                        mask_test(concat!("masks::", stringify!($m), "::nd_range"), mask(), FormKind::NdRange);
                    }
                }
            )*
        }
    };
}

mask_matrix! {
    no_atomics,
    no_group_reduce__no_subgroups,
    no_c11_atomics,
    no_global_atomics,
    no_float_atomics,
}

/// `no_group_reduce__no_subgroups` -> `no-group-reduce,no-subgroups`.
fn mask_spec(ident: &str) -> String {
    ident.replace("__", ",").replace('_', "-")
}

#[test]
fn mask_names_parse() {
    for m in MASKS {
        let spec = mask_spec(m);
        let mask = Mask::parse(&spec).unwrap_or_else(|e| panic!("{m}: {e}"));
        assert_eq!(mask.names().join(","), spec, "{m}");
    }
}

fn mask_test(test: &str, mask: Mask, form: FormKind) {
    let mut tally = MatrixTally::new(test);
    let sample = Sample::of(test);
    for base in rotated(test) {
        let _serial = sim_lock(base.device());
        let q = match Queue::with_mask(base.device(), mask) {
            Ok(q) => q,
            Err(e) => {
                tally.fail(&short(base.device()), "Queue::with_mask", &e.to_string());
                continue;
            }
        };
        let dev = short(q.device());
        if let Err(m) = mask_effect(mask, base, &q) {
            tally.fail(&dev, "mask effect on capabilities", &m);
        }
        let level = if q.device().is_simulator() {
            Level::Sim
        } else {
            Level::Masked
        };
        let t = std::time::Instant::now();
        // Each mask's feature rows take other types than the automatic strategy's.
        let extra = 1 + MASKS
            .iter()
            .position(|m| test.starts_with(&format!("masks::{m}::")))
            .unwrap_or(0);
        let cases = cases(
            Strategy::AUTO,
            form,
            level,
            q.caps().max_local_1d(),
            extra,
            sample,
        );
        tally.expect(&dev, cases.len());
        for c in cases {
            let o = run_case(&q, &c);
            let o = match o {
                // Feature rows check their chosen steps against the masked capabilities
                // themselves (`feat::chosen_steps_allowed`).
                Outcome::Pass if c.feature.is_some() => Outcome::Pass,
                Outcome::Pass => match mask_plan_check(mask, &q, &c) {
                    Ok(()) => Outcome::Pass,
                    Err(m) => Outcome::Fail(m),
                },
                other => other,
            };
            tally.record(&dev, q.caps(), &c, o);
        }
        tally.time(&dev, t.elapsed().as_secs_f64());
    }
    tally.finish();
}

/// What the mask must have removed from the queue's capabilities.
fn mask_effect(mask: Mask, base: &Queue, q: &Queue) -> Result<(), String> {
    use clreduce::caps::Space;
    let c = q.caps();
    let b = base.caps();
    if q.mask() != mask {
        return Err(format!("queue mask {:?}, asked {:?}", q.mask(), mask));
    }
    for name in mask.names() {
        if !c.removed.iter().any(|r| r.starts_with(name)) {
            return Err(format!("{name} not noted in caps.removed: {:?}", c.removed));
        }
    }
    for op in Op::ALL {
        for ty in ElemType::REDUCIBLE {
            for sp in [Space::Global, Space::Local] {
                let now = c.fast_atomic(op, ty, sp);
                if now && !b.fast_atomic(op, ty, sp) {
                    return Err(format!("mask added an atomic: {op} {ty} {sp:?}"));
                }
                let gone = (mask.no_atomics)
                    || (mask.no_global_atomics && sp == Space::Global)
                    || (mask.no_float_atomics && ty.is_float());
                if gone && now {
                    return Err(format!("{op} {ty} {sp:?} atomic survived the mask"));
                }
            }
        }
    }
    if (mask.no_group_reduce && c.work_group_collectives)
        || (mask.no_subgroups && c.sub_groups.is_some())
        || ((mask.no_c11_atomics || mask.no_atomics) && (c.c11_atomics() || c.acq_rel_ptx))
    {
        return Err("a masked capability is still present".into());
    }
    Ok(())
}

/// Re-plans a passed case and checks what the mask implies for the plan.
fn mask_plan_check(mask: Mask, q: &Queue, c: &Case) -> Result<(), String> {
    let res = clreduce::DynBuffer::scalar(q, val(c.ty, 1)).map_err(|e| e.to_string())?;
    let mut red = clreduce::reduction(&res, c.op);
    if c.init_to_identity {
        red = red.initialize_to_identity();
    }
    let p = q
        .explain(c.form, red, clreduce::Options::default())
        .map_err(|e| e.to_string())?;
    let v = &p.vars[0];
    if mask.no_atomics && (v.group == GroupAlgo::LocalAtomic || v.cross != CrossAlgo::ExtraPass) {
        return Err(format!(
            "no-atomics plan {} (expected no atomics and the extra pass)",
            p.summary()
        ));
    }
    if (mask.no_group_reduce && v.group == GroupAlgo::WgReduce)
        || (mask.no_subgroups && v.group == GroupAlgo::SgReduce)
    {
        return Err(format!("masked group step in plan {}", p.summary()));
    }
    if (mask.no_c11_atomics || mask.no_atomics) && (p.c11_atomics || p.ptx_acq_rel) {
        return Err(format!(
            "plan {} uses acquire/release atomics (OpenCL C 2.0 or PTX)",
            p.summary()
        ));
    }
    if mask.no_global_atomics && v.cross == CrossAlgo::Atomic {
        return Err(format!("no-global-atomics plan {}", p.summary()));
    }
    if mask.no_float_atomics
        && c.ty.is_float()
        && (v.group == GroupAlgo::LocalAtomic || v.cross == CrossAlgo::Atomic)
    {
        return Err(format!("no-float-atomics plan {}", p.summary()));
    }
    Ok(())
}
