//! Unit tests of exact sums per segment in the planner (`segment_exact.rs`): the accumulators
//! per work-item of the strided loops, and `stripes` where the work-group shrank.
use super::*;
use crate::caps::fixtures;
use crate::ops::Op;
use crate::plan::{
    plan, CrossAlgo, FormRequest, GroupAlgo, Request, SegmentAlgo, SegmentLayout, SegmentRequest,
    Shape, Strategy, VarRequest,
};
use crate::types::ElemType;
use crate::Determinism;

/// The plan of an exact sum of `ty` data on `layout` (`force`: the plan forced).
fn exact_plan(
    c: &DeviceCaps,
    ty: ElemType,
    layout: SegmentLayout,
    segments: u64,
    force: Option<SegmentAlgo>,
) -> Result<Plan> {
    vars_plan(
        c,
        vec![VarRequest::new(Op::Plus, ty)],
        layout,
        segments,
        force,
    )
}

/// The plan of variables `vars` (exact where they are float sums) on `layout`.
fn vars_plan(
    c: &DeviceCaps,
    vars: Vec<VarRequest>,
    layout: SegmentLayout,
    segments: u64,
    force: Option<SegmentAlgo>,
) -> Result<Plan> {
    let ty = vars[0].ty;
    let (n, longest) = match layout {
        SegmentLayout::Uniform { len } => (len * segments, len),
        SegmentLayout::Columns { rows, cols } => (rows * cols, rows),
        SegmentLayout::Offsets => (segments * 16, 16),
    };
    let req = Request {
        form: FormRequest::Range { n },
        shape: Shape::linear(n, 1),
        vars,
        strategy: Strategy::new(GroupAlgo::Tree, CrossAlgo::ExtraPass),
        determinism: Default::default(),
        tuning: None,
        pure_body: true,
        narrow_reads: false,
    };
    let mut b = plan(c, &req).unwrap();
    segment_exact(c, &mut b, Determinism::Exact, None, longest).unwrap();
    let req = SegmentRequest {
        layout,
        segments,
        elements: n,
        force,
        tune: Default::default(),
        longest,
        read_bytes: ty.size() as u64,
    };
    crate::plan::segment::plan_segments(c, b, &req, None)
}

/// The strided loops keep one accumulator per work-item for exact sums, GPUs included: on the
/// H200 (2^28 f32, session 17) the deterministic plans' accumulators (8 for group and lanes)
/// made the exact plans 2.7-5.6x slower (group 1223 -> 3724 us, lanes 3570 -> 13276).
#[test]
fn exact_strided_loops_keep_one_accumulator() {
    let h = fixtures::nvidia_h200();
    let u = |len| SegmentLayout::Uniform { len };
    let cols = |rows, cols| SegmentLayout::Columns { rows, cols };
    let cases = [
        (u(1 << 14), 1 << 14, SegmentAlgo::Group),
        (u(1 << 28), 1, SegmentAlgo::Group),
        (u(256), 1 << 20, SegmentAlgo::Lanes),
        (cols(1 << 14, 1 << 14), 1 << 14, SegmentAlgo::Columns),
        (cols(1 << 20, 256), 256, SegmentAlgo::Stripes),
    ];
    for (layout, segments, want) in cases {
        let p = exact_plan(&h, ElemType::F32, layout, segments, None).unwrap();
        let s = p.segment.clone().unwrap();
        assert_eq!((s.algo, s.unroll), (want, 1), "{layout:?}");
        assert!(carries_exact(&p));
    }
}

/// f64 exact sums keep 64 work-items on the H200 (their trees), so 256 columns take `columns`
/// instead of the rules' `stripes` (which keeps a work-item per column; session 17 found it
/// refused at launch); f32 keeps 256 work-items and `stripes`; 64 f64 columns still fit; a
/// forced `stripes` over 256 f64 columns stays refused.
#[test]
fn exact_stripes_only_where_the_columns_fit_the_work_group() {
    let h = fixtures::nvidia_h200();
    let cols = |c| SegmentLayout::Columns {
        rows: 1 << 20,
        cols: c,
    };
    let p = exact_plan(&h, ElemType::F64, cols(256), 256, None).unwrap();
    let s = p.segment.clone().unwrap();
    assert_eq!((s.algo, p.local), (SegmentAlgo::Columns, 64));
    assert!(
        s.reason.contains("fewer than the 256 columns"),
        "{}",
        s.reason
    );
    let p = exact_plan(&h, ElemType::F64, cols(64), 64, None).unwrap();
    assert_eq!(p.segment.unwrap().algo, SegmentAlgo::Stripes);
    let p = exact_plan(&h, ElemType::F32, cols(256), 256, None).unwrap();
    assert_eq!(
        (p.segment.unwrap().algo, p.local),
        (SegmentAlgo::Stripes, 256)
    );
    let forced = exact_plan(
        &h,
        ElemType::F64,
        cols(256),
        256,
        Some(SegmentAlgo::Stripes),
    );
    assert!(forced.is_err());
}

/// The speculative loop per segment (decision 90): planned for `group` and `lanes` where every
/// variable is a two-double exact sum and the body only reads, by default on GPUs (but f64
/// sums in `lanes`, measured slower), as `xspec` asks elsewhere; declined, with the reason in the plan, beside another variable, for
/// a body that writes, without fp64 and where asked off; other plans neither take it nor say
/// anything. `explain` names it.
#[test]
fn exact_speculative_loop_in_group_and_lanes() {
    let h = fixtures::nvidia_h200();
    let u = |len| SegmentLayout::Uniform { len };
    let spec = |p: &Plan| {
        p.vars
            .iter()
            .all(|v| v.exact.is_some_and(|e| e.speculative))
    };
    let reason = |p: &Plan| p.segment.as_ref().unwrap().reason.clone();
    let run = |c: &DeviceCaps, ty, layout, segments, pure, asked| {
        let mut p = exact_plan(c, ty, layout, segments, None).unwrap();
        speculate(c, &mut p, pure, asked);
        p
    };
    for (layout, segments, algo) in [
        (u(1 << 14), 1 << 14, SegmentAlgo::Group),
        (u(1 << 28), 1, SegmentAlgo::Group),
        (u(256), 1 << 20, SegmentAlgo::Lanes),
    ] {
        for ty in [ElemType::F32, ElemType::F64] {
            let p = run(&h, ty, layout, segments, true, None);
            assert_eq!(p.segment.as_ref().unwrap().algo, algo);
            if algo == SegmentAlgo::Lanes && ty == ElemType::F64 {
                // Measured slower there: asked only.
                assert!(!spec(&p) && reason(&p).contains("f64 sums in lanes"));
                assert!(spec(&run(&h, ty, layout, segments, true, Some(true))));
            } else {
                assert!(spec(&p), "{layout:?} {ty}");
                assert!(reason(&p).contains("the speculative loop (each"));
                assert!(p.to_string().contains("speculative loop"), "{p}");
            }
            let off = run(&h, ty, layout, segments, true, Some(false));
            assert!(!spec(&off) && reason(&off).contains("xspec=0"));
            let writes = run(&h, ty, layout, segments, false, None);
            assert!(!spec(&writes) && reason(&writes).contains("the body writes"));
        }
    }
    // Rows of 16 (`item`) and columns: no strided loop of the kind, nothing said.
    let p = run(&h, ElemType::F32, u(16), 1 << 24, true, Some(true));
    assert_eq!(p.segment.as_ref().unwrap().algo, SegmentAlgo::Item);
    assert!(!spec(&p) && !reason(&p).contains("speculative"));
    let cols = SegmentLayout::Columns {
        rows: 1 << 14,
        cols: 1 << 14,
    };
    let p = run(&h, ElemType::F32, cols, 1 << 14, true, Some(true));
    assert!(!spec(&p) && !reason(&p).contains("speculative"));
    // CPUs: off unless asked.
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        let p = run(&c, ElemType::F32, u(1 << 20), 1, true, None);
        let algo = p.segment.as_ref().unwrap().algo;
        if matches!(algo, SegmentAlgo::Group | SegmentAlgo::Lanes) {
            assert!(!spec(&p) && reason(&p).contains("on GPUs only"));
        }
        let mut p = exact_plan(&c, ElemType::F32, u(1 << 20), 1, Some(SegmentAlgo::Group)).unwrap();
        speculate(&c, &mut p, true, Some(true));
        assert!(spec(&p), "{}", reason(&p));
    }
    // Another variable beside the exact sum: declined (a redo would count it twice).
    let mut p = vars_plan(
        &h,
        vec![
            VarRequest::new(Op::Plus, ElemType::F32),
            VarRequest::new(Op::Minimum, ElemType::F32),
        ],
        u(1 << 14),
        1 << 14,
        None,
    )
    .unwrap();
    speculate(&h, &mut p, true, Some(true));
    assert!(p
        .vars
        .iter()
        .all(|v| v.exact.is_none_or(|e| !e.speculative)));
    assert!(reason(&p).contains("a variable beside the exact sums"));
    // Without fp64: three-float expansions keep the push.
    let mut nofp64 = fixtures::nvidia_h200();
    nofp64.fp64 = false;
    let p = run(
        &nofp64,
        ElemType::F32,
        u(1 << 14),
        1 << 14,
        true,
        Some(true),
    );
    assert!(!spec(&p) && reason(&p).contains("three-float"));
}
