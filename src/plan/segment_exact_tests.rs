//! Unit tests of exact sums per segment in the planner (`segment_exact.rs`, decision 80): the
//! accumulators per work-item of the strided loops, and the accumulator's size.
use super::*;
use crate::caps::fixtures;
use crate::plan::segment::tests::base;
use crate::plan::{SegmentAlgo, SegmentLayout, SegmentRequest};
use crate::Determinism;

/// The plan of an exact f32 sum under `force` (None: the rules) on `layout`.
fn exact_plan(c: &DeviceCaps, layout: SegmentLayout, segments: u64, n: u64) -> Plan {
    let longest = match layout {
        SegmentLayout::Uniform { len } => len,
        SegmentLayout::Columns { rows, .. } => rows,
        _ => n,
    };
    let mut b = base(c, n);
    segment_exact(c, &mut b, Determinism::Exact, None, longest).unwrap();
    let req = SegmentRequest {
        layout,
        segments,
        elements: n,
        force: None,
        tune: Default::default(),
        longest,
        read_bytes: 4,
    };
    crate::plan::segment::plan_segments(c, b, &req, None).unwrap()
}

/// On a GPU the strided loops keep the deterministic plan's accumulators per work-item (the
/// exact combine gives the same bits in any order); a work-item per segment keeps one; CPUs
/// keep one everywhere.
#[test]
fn exact_strided_loops_keep_their_accumulators_on_gpus() {
    let h = fixtures::nvidia_h200();
    let n = 1u64 << 28;
    let u = |len| SegmentLayout::Uniform { len };
    let cases = [
        (u(1 << 14), n >> 14, SegmentAlgo::Group),
        (u(n), 1, SegmentAlgo::Group),
        (u(256), n >> 8, SegmentAlgo::Lanes),
        (
            SegmentLayout::Columns {
                rows: 1 << 14,
                cols: 1 << 14,
            },
            1 << 14,
            SegmentAlgo::Columns,
        ),
        (
            SegmentLayout::Columns {
                rows: 1 << 20,
                cols: 256,
            },
            256,
            SegmentAlgo::Stripes,
        ),
    ];
    for (layout, segments, want) in cases {
        let p = exact_plan(&h, layout, segments, n);
        let s = p.segment.clone().unwrap();
        assert_eq!(s.algo, want, "{layout:?}");
        assert!(s.unroll > 1, "{layout:?}: {} accumulators", s.unroll);
        assert!(carries_exact(&p));
    }
    // A work-item per segment (staged becomes item for exact sums): one accumulator.
    let p = exact_plan(&h, u(16), n >> 4, n);
    let s = p.segment.unwrap();
    assert_eq!((s.algo, s.unroll), (SegmentAlgo::Item, 1));
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        let p = exact_plan(&c, u(1 << 14), n >> 14, n);
        assert_eq!(p.segment.unwrap().unroll, 1);
    }
}

/// f32 data in doubles carries the block pre-sum (a double and two uints) beside the
/// expansion, the state word and the limbs; f64 data does not.
#[test]
fn exact_accumulator_bytes_hold_the_block() {
    let h = fixtures::nvidia_h200();
    let p = exact_plan(
        &h,
        SegmentLayout::Uniform { len: 1 << 14 },
        1 << 14,
        1 << 28,
    );
    let e = p.vars[0].exact.unwrap();
    assert_eq!(e.format, ExactFormat::F32);
    assert_eq!(p.vars[0].acc_bytes, 40 + 8 * e.limbs());
    let f64e = ExactPlan {
        format: ExactFormat::F64,
        ..e
    };
    assert_eq!(f64e.acc_bytes(), 24 + 8 * f64e.limbs());
}
