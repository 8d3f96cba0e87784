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

mod common;

use clreduce::plan::{CrossAlgo, GroupAlgo, Strategy};
use clreduce::{ElemType, Mask, Op, Queue};
use common::*;

const LOCALS: [usize; 5] = [1, 3, 96, 256, 1000];

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

/// The (op, type) pairs a level takes in a form: those with (op + type) % k == 0.
fn pairs(level: Level, form: FormKind) -> Vec<(Op, ElemType)> {
    let k = match (level, form) {
        (Level::Auto, FormKind::Range) => 1,
        (Level::Forced, FormKind::Range) => 2,
        (Level::Auto, FormKind::NdRange) => 3,
        (Level::Forced, FormKind::NdRange) | (Level::Masked, _) => 6,
        (Level::Sim, _) => 4,
    };
    valid_pairs()
        .into_iter()
        .filter(|&(op, ty)| (op_index(op) + ty_index(ty)).is_multiple_of(k))
        .collect()
}

/// The init mode of the pair at `pos` in its subset: alternating so that, in the full list,
/// every op and every type meets both modes; the nd_range form uses the other one.
fn init_for(pos: usize, op: Op, form: FormKind) -> bool {
    (pos + pos / 2 + op_index(op)).is_multiple_of(2) == (form == FormKind::Range)
}

fn nd_groups(local: usize, sim: bool) -> &'static [u64] {
    match (local, sim) {
        (1, false) => &[0, 1, 2, 7, 700],
        (3, false) => &[1, 2, 7, 400],
        (96, false) => &[1, 2, 7, 150],
        (256, false) => &[1, 2, 7, 300],
        (_, false) => &[1, 2, 7, 40],
        (1, true) => &[0, 1, 2, 300],
        (3, true) => &[1, 2, 100],
        (96, true) => &[1, 2, 40],
        (256, true) => &[1, 16],
        (_, true) => &[1, 4],
    }
}

/// The cases of one (strategy, form) on one device.
fn cases(strategy: Strategy, form: FormKind, level: Level) -> Vec<Case> {
    let sim = level == Level::Sim;
    let mut out = Vec::new();
    for (pos, (op, ty)) in pairs(level, form).into_iter().enumerate() {
        let mut push = |f, init: bool, seed: u64| {
            let mut c = Case {
                op,
                ty,
                form: f,
                init_to_identity: init,
                strategy,
                relaxed: false,
                seed,
            };
            // Forcing float atomics under plus/multiplies needs relaxed determinism (the
            // deterministic refusal is checked in tests/errors.rs).
            c.relaxed = forces_order_dependence(&c);
            out.push(c)
        };
        match form {
            FormKind::Range => {
                let init = init_for(pos, op, form);
                for init0 in [false, true] {
                    push(range(0), init0, 1);
                }
                let sizes: &[u64] = if sim {
                    &[1, 257, 4097]
                } else {
                    &[1, 2, 255, 256, 257, 4097]
                };
                for &n in sizes {
                    push(range(n), init, n + 11);
                }
                if !sim && matches!(op, Op::Plus | Op::Minimum) {
                    push(range(1_000_003), init, 5);
                }
            }
            FormKind::NdRange => {
                let init = init_for(pos, op, form);
                // Rotating through the subset's order gives every op and every type several
                // work-group sizes; plus on i32 and f64 meets all of them.
                let primary = LOCALS[pos % LOCALS.len()];
                let all_sizes = level == Level::Auto
                    && op == Op::Plus
                    && matches!(ty, ElemType::I32 | ElemType::F64);
                for local in LOCALS {
                    if local != primary && !all_sizes {
                        continue;
                    }
                    for &g in nd_groups(local, sim) {
                        push(nd(g * local as u64, local), init, g + local as u64);
                    }
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
        let cases = cases(strategy, form, level);
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
    for level in [Level::Auto, Level::Forced, Level::Masked, Level::Sim] {
        for form in [FormKind::Range, FormKind::NdRange] {
            let cs = cases(Strategy::AUTO, form, level);
            let ops: BTreeSet<_> = cs.iter().map(|c| op_index(c.op)).collect();
            let tys: BTreeSet<_> = cs.iter().map(|c| ty_index(c.ty)).collect();
            assert_eq!(ops.len(), Op::ALL.len(), "{level:?} {form:?}");
            assert_eq!(tys.len(), ElemType::REDUCIBLE.len(), "{level:?} {form:?}");
            let inits: BTreeSet<_> = cs.iter().map(|c| c.init_to_identity).collect();
            assert_eq!(inits.len(), 2, "{level:?} {form:?}");
            if form == FormKind::NdRange {
                let locals: BTreeSet<_> = cs
                    .iter()
                    .map(|c| match c.form {
                        clreduce::Form::NdRange(r) => r.local,
                        _ => unreachable!(),
                    })
                    .collect();
                assert_eq!(locals.len(), LOCALS.len(), "{level:?}");
            }
            if level == Level::Sim {
                assert!(cs.iter().all(|c| c.size() <= 4097));
            }
        }
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
        let cases = cases(Strategy::AUTO, form, level);
        tally.expect(&dev, cases.len());
        for c in cases {
            let o = run_case(&q, &c);
            let o = match o {
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
        || ((mask.no_c11_atomics || mask.no_atomics) && c.c11_atomics())
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
    if (mask.no_c11_atomics || mask.no_atomics) && p.c11_atomics {
        return Err(format!("plan {} uses OpenCL C 2.0 atomics", p.summary()));
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
