//! Planning tests of exact sums (design/exact.md, design/exact_perf.md) on the capability
//! fixtures: no device needed.

use super::tests::{req, N};
use super::*;
use crate::caps::{fixtures, Mask};
use crate::error::Error;
use crate::ops::Op;

fn exact_req(form: FormRequest, op: Op, ty: ElemType) -> Request {
    let mut r = req(form, op, ty);
    r.determinism = Determinism::Exact;
    r
}

#[test]
fn exact_sums_plan_per_device() {
    let p = plan(
        &fixtures::nvidia_h200(),
        &exact_req(N, Op::Plus, ElemType::F32),
    )
    .unwrap();
    let v = &p.vars[0];
    assert_eq!(v.shape, AccShape::Exact);
    assert_eq!((v.group, v.cross), (GroupAlgo::SgReduce, CrossAlgo::Atomic));
    let e = v.exact.unwrap();
    assert_eq!(
        (e.format, e.expansion, e.store),
        (
            ExactFormat::F32,
            Expansion::TwoDouble,
            SaccStore::LocalAtomic
        )
    );
    assert!(p.deterministic && p.takes_tickets());
    assert!(p.to_string().contains("exact sum"), "{p}");
    // On a GPU the speculative loop in its shared hot form for a single exact sum whose body
    // only reads, with the plain sum's 8 accumulators (one expansion: H200 2^28 1.03x the plain
    // sum at 8, 1.55x at 4).
    assert_eq!(p.unroll, 8);
    assert!(e.speculative && e.hot == HotLoop::Shared);
    let p = plan(
        &fixtures::oclgrind(),
        &exact_req(N, Op::Plus, ElemType::F64),
    )
    .unwrap();
    assert_eq!(
        (p.vars[0].group, p.vars[0].cross),
        (GroupAlgo::Tree, CrossAlgo::Atomic)
    );
    assert_eq!(p.vars[0].exact.unwrap().format, ExactFormat::F64);
    // Integers and min/max are exact anyway: planned as in the deterministic mode.
    let p = plan(
        &fixtures::intel_cpu(),
        &exact_req(N, Op::Minimum, ElemType::F32),
    )
    .unwrap();
    assert_eq!(p.vars[0].shape, AccShape::Plain);
    assert_eq!(p.vars[0].group, GroupAlgo::WgReduce);
}

#[test]
fn exact_fallbacks_follow_the_masks() {
    let caps = Mask::parse("no-int64-atomics")
        .unwrap()
        .apply(&fixtures::pocl_cpu());
    let p = plan(&caps, &exact_req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].exact.unwrap().store, SaccStore::LocalRows);
    assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
    assert_eq!(p.passes, 2);
    // The rows fit local memory: the work-group shrinks where it must.
    assert!(p.local_bytes <= caps.local_mem_size);
    let caps = Mask::parse("no-fp64").unwrap().apply(&fixtures::pocl_cpu());
    let p = plan(&caps, &exact_req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].exact.unwrap().expansion, Expansion::ThreeFloat);
    // Three floats absorb at most 2^24 elements each: more work-groups for a large range.
    let big = FormRequest::Range { n: 1 << 34 };
    let p = plan(&caps, &exact_req(big, Op::Plus, ElemType::F32)).unwrap();
    assert!(p.groups >= 1 << 10, "{} groups", p.groups);
}

#[test]
fn exact_refuses_what_it_cannot_make_exact() {
    let caps = fixtures::intel_cpu();
    let e = plan(&caps, &exact_req(N, Op::Multiplies, ElemType::F32)).unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported { missing, .. } if missing.contains("Op::Plus on f32 and f64")),
        "{e}"
    );
    for forced in ["wg-reduce", "local-atomic", "sg-reduce"] {
        let mut r = exact_req(N, Op::Plus, ElemType::F32);
        r.strategy = Strategy::parse(forced).unwrap();
        assert!(
            matches!(plan(&caps, &r), Err(Error::Unsupported { .. })),
            "{forced} on Intel"
        );
    }
    let caps = Mask::parse("no-int64-atomics").unwrap().apply(&caps);
    let mut r = exact_req(N, Op::Plus, ElemType::F32);
    r.strategy = Strategy::parse("tree+atomic").unwrap();
    assert!(matches!(plan(&caps, &r), Err(Error::Unsupported { .. })));
    let caps = Mask::parse("no-fp64")
        .unwrap()
        .apply(&fixtures::intel_cpu());
    assert!(plan(&caps, &exact_req(N, Op::Plus, ElemType::F64)).is_err());
}

#[test]
fn exact_spans_keep_their_superaccumulators_where_they_fit() {
    // 128 f32 superaccumulators (14 KiB) fit half of the H200's 48 KiB of local memory.
    let mut r = exact_req(N, Op::Plus, ElemType::F32);
    r.vars[0].span = Some(128);
    let p = plan(&fixtures::nvidia_h200(), &r).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::LocalShared);
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
    r.vars[0].ty = ElemType::F64;
    r.vars[0].span = Some(4096);
    let p = plan(&fixtures::nvidia_h200(), &r).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalAtomic);
    let caps = Mask::parse("no-int64-atomics")
        .unwrap()
        .apply(&fixtures::nvidia_h200());
    assert!(matches!(plan(&caps, &r), Err(Error::Unsupported { .. })));
}

#[test]
fn every_exact_sum_of_a_launch_speculates_beside_other_variables() {
    // Exact sum + min + max, and a second exact sum beside an integer sum: every exact variable
    // takes the speculative loop on a GPU, the others stay plain.
    let mut r = exact_req(N, Op::Plus, ElemType::F32);
    r.vars.push(VarRequest::new(Op::Minimum, ElemType::F32));
    r.vars.push(VarRequest::new(Op::Maximum, ElemType::F32));
    r.vars.push(VarRequest::new(Op::Plus, ElemType::F64));
    r.vars.push(VarRequest::new(Op::Plus, ElemType::I32));
    let p = plan(&fixtures::nvidia_h200(), &r).unwrap();
    let spec: Vec<Option<bool>> = p
        .vars
        .iter()
        .map(|v| v.exact.map(|e| e.speculative))
        .collect();
    assert_eq!(spec, [Some(true), None, None, Some(true), None]);
    // A span anywhere in the launch keeps the exact sums on the branchy loop.
    r.vars[1].span = Some(4);
    let p = plan(&fixtures::nvidia_h200(), &r).unwrap();
    assert!(p
        .vars
        .iter()
        .all(|v| v.exact.is_none_or(|e| !e.speculative)));
    // A body that writes memory cannot run a chunk twice.
    r.vars[1].span = None;
    r.pure_body = false;
    let p = plan(&fixtures::nvidia_h200(), &r).unwrap();
    assert!(p
        .vars
        .iter()
        .all(|v| v.exact.is_none_or(|e| !e.speculative)));
}

/// The speculative loop's hot forms (`Tuning::hot`, design/exact.md "The hot loop"): planned for
/// speculative two-double expansions as the override says (the shared form by default on GPUs,
/// the vector form on CPUs with fp64), never for three floats or a launch that does not
/// speculate; `hot=0|1|2|3` parse, `hot=4` is refused; a single exact sum in the shared form takes 8 accumulators, several keep 4.
#[test]
fn the_hot_loop_follows_the_override() {
    let hot = |caps: &DeviceCaps, t: &str| {
        let mut r = exact_req(N, Op::Plus, ElemType::F32);
        r.vars.push(VarRequest::new(Op::Plus, ElemType::F64));
        r.tuning = Some(Tuning::parse(t).unwrap());
        plan(caps, &r)
            .unwrap()
            .vars
            .iter()
            .map(|v| v.exact.map(|e| e.hot))
            .collect::<Vec<_>>()
    };
    let h200 = fixtures::nvidia_h200();
    assert_eq!(hot(&h200, ""), [Some(HotLoop::Shared); 2]);
    assert_eq!(hot(&h200, "hot=0"), [Some(HotLoop::Off); 2]);
    assert_eq!(hot(&h200, "hot=1"), [Some(HotLoop::Shared); 2]);
    assert_eq!(hot(&h200, "hot=2"), [Some(HotLoop::Lanes); 2]);
    assert_eq!(hot(&h200, "hot=1,spec=0"), [Some(HotLoop::Off); 2]);
    // CPUs with fp64 speculate by default, in the vector form (decision 69), or as told.
    let pocl = fixtures::pocl_cpu();
    assert!(pocl.fp64);
    assert_eq!(hot(&pocl, ""), [Some(HotLoop::Vector); 2]);
    assert_eq!(hot(&pocl, "spec=0"), [Some(HotLoop::Off); 2]);
    assert_eq!(hot(&pocl, "hot=2"), [Some(HotLoop::Lanes); 2]);
    assert_eq!(hot(&h200, "hot=3"), [Some(HotLoop::Vector); 2]);
    // The vector form alone takes 64-bit indices (its step's loads are one vector load).
    let wide = |caps: &DeviceCaps, t: &str| {
        let mut r = exact_req(N, Op::Plus, ElemType::F32);
        r.tuning = Some(Tuning::parse(t).unwrap());
        plan(caps, &r).unwrap().wide_index
    };
    assert!(wide(&pocl, "") && !wide(&pocl, "spec=0") && !wide(&pocl, "hot=1"));
    assert!(!wide(&h200, "") && wide(&h200, "hot=3"));
    // A single f64 exact sum in the vector form takes 8 lanes, f32 4.
    let unroll = |ty: ElemType| plan(&pocl, &exact_req(N, Op::Plus, ty)).unwrap().unroll;
    assert_eq!((unroll(ElemType::F64), unroll(ElemType::F32)), (8, 4));
    // Three floats (no fp64; the f64 sum is then refused, so f32 alone) keep the element checks,
    // and on a CPU the push loop unless told.
    let caps = Mask::parse("no-fp64").unwrap().apply(&pocl);
    let mut r = exact_req(N, Op::Plus, ElemType::F32);
    assert!(!plan(&caps, &r).unwrap().vars[0].exact.unwrap().speculative);
    r.tuning = Some(Tuning::parse("hot=1,spec=1").unwrap());
    let e = plan(&caps, &r).unwrap().vars[0].exact.unwrap();
    assert!(e.speculative && e.expansion == Expansion::ThreeFloat && e.hot == HotLoop::Off);
    assert!(Tuning::parse("hot=4").is_err());
    // A single f32 exact sum in the shared form takes 8 accumulators (f64: 4, in
    // the_steps_follow_the_format_and_the_override), and so does one beside other variables
    // (theirs in one accumulator each: an_exact_sum_beside_min_and_max_runs_one_wave_on_gpus);
    // the other forms 4.
    let one = plan(&h200, &exact_req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(one.unroll, 8);
    let mut r = exact_req(N, Op::Plus, ElemType::F32);
    r.tuning = Some(Tuning::parse("hot=0").unwrap());
    assert_eq!(plan(&h200, &r).unwrap().unroll, 4);
    r.tuning = None;
    r.vars.push(VarRequest::new(Op::Minimum, ElemType::F32));
    assert_eq!(plan(&h200, &r).unwrap().unroll, 8);
    r.tuning = Some(Tuning::parse("hot=2").unwrap());
    assert_eq!(plan(&h200, &r).unwrap().unroll, 4);
}

/// An f32 exact sum beside a minimum and a maximum (the bench's `f32-sum-min-max-exact`) runs
/// on GPUs at the single sum's unroll of 8 with min and max in one accumulator each
/// (`Plan::spec_one`) and one wave of work-groups (6 per SM: design/exact.md "Several
/// variables", decisions 70 and 76), the default elsewhere; `groups_per_cu`, `unroll` and `one`
/// override it. Two exact sums, or an f64 one, keep an accumulator per step for the others.
#[test]
fn an_exact_sum_beside_min_and_max_runs_one_wave_on_gpus() {
    let smm = |caps: &DeviceCaps, ty: ElemType, t: &str| {
        let mut r = exact_req(FormRequest::Range { n: 1 << 28 }, Op::Plus, ty);
        r.vars.push(VarRequest::new(Op::Minimum, ty));
        r.vars.push(VarRequest::new(Op::Maximum, ty));
        r.tuning = Some(Tuning::parse(t).unwrap());
        plan(caps, &r).unwrap()
    };
    let gpu = fixtures::nvidia_h200();
    let cus = gpu.compute_units as u64;
    let p = smm(&gpu, ElemType::F32, "");
    assert_eq!((p.unroll, p.groups, p.spec_one), (8, 6 * cus, true));
    assert_eq!(p.vars[0].exact.unwrap().hot, HotLoop::Shared);
    assert_eq!(smm(&gpu, ElemType::F32, "groups_per_cu=8").groups, 8 * cus);
    let u4 = smm(&gpu, ElemType::F32, "unroll=4,one=0");
    assert_eq!((u4.unroll, u4.groups, u4.spec_one), (4, 6 * cus, false));
    let f64s = smm(&gpu, ElemType::F64, "");
    assert_eq!((f64s.groups, f64s.spec_one), (8 * cus, false));
    // Without speculation (spec=0) there is no loop for it to change.
    assert!(!smm(&gpu, ElemType::F32, "spec=0,one=1").spec_one);
    let two = {
        let mut r = exact_req(FormRequest::Range { n: 1 << 28 }, Op::Plus, ElemType::F32);
        r.vars.push(VarRequest::new(Op::Plus, ElemType::F64));
        r.vars.push(VarRequest::new(Op::Minimum, ElemType::F32));
        plan(&gpu, &r).unwrap()
    };
    assert!(!two.spec_one);
    let cpu = fixtures::pocl_cpu();
    let c = smm(&cpu, ElemType::F32, "");
    assert!(!c.spec_one);
    assert!(smm(&cpu, ElemType::F32, "one=1").spec_one);
    let plain = {
        let mut r = req(FormRequest::Range { n: 1 << 28 }, Op::Plus, ElemType::F32);
        r.vars.push(VarRequest::new(Op::Minimum, ElemType::F32));
        r.vars.push(VarRequest::new(Op::Maximum, ElemType::F32));
        plan(&cpu, &r).unwrap()
    };
    assert_eq!((c.unroll, c.groups), (plain.unroll, plain.groups));
}

/// The exact sum's tail (`Tuning::tail`, design/exact.md "The tail"): by default lean for f32
/// results and f64 results up to 2^20 indices, private for larger f64 sums; private, local and
/// lean as the override says, lean only where every deposit of the launch stays within 2^30
/// (else local), for every scalar exact sum of a launch; `tail=3` is refused.
#[test]
fn the_tail_follows_the_override() {
    let tails = |caps: &DeviceCaps, n: u64, t: &str| {
        let mut r = exact_req(FormRequest::Range { n }, Op::Plus, ElemType::F32);
        r.vars.push(VarRequest::new(Op::Plus, ElemType::F64));
        r.vars.push(VarRequest::new(Op::Minimum, ElemType::F32));
        r.tuning = Some(Tuning::parse(t).unwrap());
        plan(caps, &r)
            .unwrap()
            .vars
            .iter()
            .map(|v| v.exact.map(|e| e.tail))
            .collect::<Vec<_>>()
    };
    for caps in [fixtures::nvidia_h200(), fixtures::pocl_cpu()] {
        let p = Some(ExactTail::Private);
        let l = Some(ExactTail::Local);
        let e = Some(ExactTail::Lean);
        let z = Some(ExactTail::Lazy);
        assert_eq!(tails(&caps, 1 << 20, ""), [e, e, None]);
        assert_eq!(tails(&caps, (1 << 20) + 1, ""), [e, p, None]);
        assert_eq!(tails(&caps, 1 << 31, ""), [l, p, None]);
        assert_eq!(tails(&caps, 1 << 20, "tail=0"), [p, p, None]);
        assert_eq!(tails(&caps, 1 << 20, "tail=1"), [l, l, None]);
        assert_eq!(tails(&caps, 1 << 20, "tail=2"), [e, e, None]);
        assert_eq!(tails(&caps, 1 << 31, "tail=2"), [l, l, None]);
        assert_eq!(tails(&caps, 1 << 20, "tail=3"), [z, z, None]);
        assert_eq!(tails(&caps, 1 << 31, "tail=3"), [l, l, None]);
        // The lazy finish needs the atomic cross step: Lean under the others.
        for forced in ["tree+last-group", "tree+extra-pass"] {
            let mut r = exact_req(FormRequest::Range { n: 1 << 20 }, Op::Plus, ElemType::F32);
            r.strategy = Strategy::parse(forced).unwrap();
            r.tuning = Some(Tuning::parse("tail=3").unwrap());
            let t = plan(&caps, &r).unwrap().vars[0].exact.unwrap().tail;
            assert_eq!(t, ExactTail::Lean, "{forced}");
        }
    }
    // Without fp64 (three-float expansions) the lazy finish does not apply: Lean.
    let mut nofp64 = fixtures::pocl_cpu();
    nofp64.fp64 = false;
    let mut r = exact_req(FormRequest::Range { n: 1 << 20 }, Op::Plus, ElemType::F32);
    r.tuning = Some(Tuning::parse("tail=3").unwrap());
    let t = plan(&nofp64, &r).unwrap().vars[0].exact.unwrap().tail;
    assert_eq!(t, ExactTail::Lean);
    // f64 data: only within the expansion's cap for the whole launch (2^30 elements and the
    // initial value), which the lean bound implies.
    let e64 = ExactPlan {
        format: ExactFormat::F64,
        expansion: Expansion::TwoDouble,
        store: SaccStore::LocalAtomic,
        speculative: true,
        hot: HotLoop::Shared,
        tail: ExactTail::Lean,
    };
    assert!(super::exact::lazy_applies(
        &e64,
        CrossAlgo::Atomic,
        (1 << 30) - 1
    ));
    assert!(!super::exact::lazy_applies(
        &e64,
        CrossAlgo::Atomic,
        1 << 30
    ));
    assert!(!super::exact::lazy_applies(
        &e64,
        CrossAlgo::LastGroup,
        1 << 20
    ));
    let rows = ExactPlan {
        store: SaccStore::LocalRows,
        ..e64
    };
    assert!(!super::exact::lazy_applies(
        &rows,
        CrossAlgo::Atomic,
        1 << 20
    ));
    assert!(Tuning::parse("tail=4").is_err());
    // The bound: n + 4 (unroll + 1) items + 4 groups + 1 <= 2^30.
    assert!(super::exact::lean_fits(
        (1 << 30) - 4 * 9 * 256 - 4 - 1,
        1,
        256,
        8
    ));
    assert!(!super::exact::lean_fits(
        (1 << 30) - 4 * 9 * 256 - 4,
        1,
        256,
        8
    ));
}

/// The shared hot loop's steps per bound check (`Plan::spec_steps`, design/exact.md "The f64
/// loop"): a single f64 exact sum on a GPU runs blocks of 2 steps at unroll 4, 4 work-groups per
/// compute unit and the lean tail at any size it fits; f32 keeps 1 step at unroll 8; a launch
/// with an f32 and an f64 exact sum keeps 1; `steps=N` overrides it (with 1 the f64 sum above
/// 2^20 takes the private tail again); the CPUs, which do not speculate by default, run 1, and
/// the GPU's rule where the hot loop is forced; `steps=3` is refused.
#[test]
fn the_steps_follow_the_format_and_the_override() {
    let one = |caps: &DeviceCaps, ty: ElemType, n: u64, t: &str| {
        let mut r = exact_req(FormRequest::Range { n }, Op::Plus, ty);
        r.tuning = Some(Tuning::parse(t).unwrap());
        plan(caps, &r).unwrap()
    };
    let gpu = fixtures::nvidia_h200();
    let cus = gpu.compute_units as u64;
    let p = one(&gpu, ElemType::F64, 1 << 24, "");
    let e = p.vars[0].exact.unwrap();
    assert_eq!((p.spec_steps, p.unroll, p.groups), (2, 4, 4 * cus));
    assert_eq!((e.hot, e.tail), (HotLoop::Shared, ExactTail::Lean));
    // From 2^26 indices (super::exact::F64_WIDE_FROM) 8 expansions per work-item, 2 work-groups
    // per SM, in blocks of 4 steps (decision 88); the override still decides.
    let p = one(&gpu, ElemType::F64, 1 << 28, "");
    let e = p.vars[0].exact.unwrap();
    assert_eq!((p.spec_steps, p.unroll, p.groups), (4, 8, 2 * cus));
    assert_eq!((e.hot, e.tail), (HotLoop::Shared, ExactTail::Lean));
    let p = one(&gpu, ElemType::F64, super::exact::F64_WIDE_FROM - 1, "");
    assert_eq!((p.spec_steps, p.unroll, p.groups), (2, 4, 4 * cus));
    let p = one(&gpu, ElemType::F64, super::exact::F64_WIDE_FROM, "");
    assert_eq!((p.spec_steps, p.unroll, p.groups), (4, 8, 2 * cus));
    let p = one(&gpu, ElemType::F64, 1 << 28, "unroll=4,groups_per_cu=4");
    assert_eq!((p.spec_steps, p.unroll, p.groups), (2, 4, 4 * cus));
    assert_eq!(one(&gpu, ElemType::F64, 1 << 28, "steps=2").spec_steps, 2);
    assert_eq!(one(&gpu, ElemType::F64, 1 << 24, "unroll=8").spec_steps, 2);
    // CPUs keep the vector form's 8 lanes at every size.
    assert_eq!(
        one(&fixtures::pocl_cpu(), ElemType::F64, 1 << 28, "").unroll,
        8
    );
    let p = one(&gpu, ElemType::F32, 1 << 28, "");
    assert_eq!((p.spec_steps, p.unroll, p.groups), (1, 8, 8 * cus));
    let p = one(&gpu, ElemType::F64, 1 << 28, "steps=1");
    assert_eq!(p.spec_steps, 1);
    assert_eq!(p.vars[0].exact.unwrap().tail, ExactTail::Private);
    assert_eq!(
        one(&gpu, ElemType::F64, 1 << 20, "steps=1").vars[0]
            .exact
            .unwrap()
            .tail,
        ExactTail::Lean
    );
    assert_eq!(one(&gpu, ElemType::F64, 1 << 28, "steps=4").spec_steps, 4);
    assert_eq!(one(&gpu, ElemType::F32, 1 << 28, "steps=4").spec_steps, 4);
    assert_eq!(one(&gpu, ElemType::F64, 1 << 28, "hot=2").spec_steps, 1);
    let mut both = exact_req(FormRequest::Range { n: 1 << 28 }, Op::Plus, ElemType::F32);
    both.vars.push(VarRequest::new(Op::Plus, ElemType::F64));
    assert_eq!(plan(&gpu, &both).unwrap().spec_steps, 1);
    let cpu = fixtures::pocl_cpu();
    assert_eq!(one(&cpu, ElemType::F64, 1 << 24, "").spec_steps, 1);
    assert_eq!(
        one(&cpu, ElemType::F64, 1 << 24, "spec=1,hot=1").spec_steps,
        2
    );
    assert!(Tuning::parse("steps=3").is_err());
}
