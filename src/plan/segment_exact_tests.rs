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
    let (n, longest) = match layout {
        SegmentLayout::Uniform { len } => (len * segments, len),
        SegmentLayout::Columns { rows, cols } => (rows * cols, rows),
        SegmentLayout::Offsets => (segments * 16, 16),
    };
    let req = Request {
        form: FormRequest::Range { n },
        shape: Shape::linear(n, 1),
        vars: vec![VarRequest::new(Op::Plus, ty)],
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
