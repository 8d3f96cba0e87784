//! Unit tests of the CPU segment rules (`segment_cpu.rs`): `aligned` (decision 77), its
//! geometry, and exact sums keeping the plans they had before it.
use super::super::segment::plan_segments;
use super::super::segment::tests::base as plain_base;
use super::*;
use crate::caps::fixtures;
use crate::plan::model::Plan;
use crate::plan::segment_exact::segment_exact;
use crate::plan::SegmentTune;
use crate::Determinism;

fn base(caps: &DeviceCaps, n: u64, exact: bool, longest: u64) -> Plan {
    let mut b = plain_base(caps, n);
    if exact {
        segment_exact(caps, &mut b, Determinism::Exact, None, longest).unwrap();
    }
    b
}

fn req(layout: SegmentLayout, segments: u64, n: u64, force: Option<SegmentAlgo>) -> SegmentRequest {
    SegmentRequest {
        layout,
        segments,
        elements: n,
        force,
        tune: SegmentTune::default(),
        longest: 0,
        read_bytes: 4,
    }
}

/// `aligned`'s geometry: one pass, work-groups of one on Intel (64 on PoCL), at least 8
/// chunks per `fill`, the masked steps (4) below mean 16 and 1, 4 or 16 accumulators by mean;
/// 64-bit indices with several accumulators (CSR below mean 16: the scan walk, below).
#[test]
fn aligned_geometry_by_mean() {
    let n = 1u64 << 22;
    let off = SegmentLayout::Offsets;
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        let lanes = c.sub_groups.is_some();
        let fill = c.compute_units as u64 * 4;
        for (mean, unroll) in [(16, 4), (127, 4), (128, 16), (4096, 16)] {
            let r = req(off, n / mean, n, Some(SegmentAlgo::Aligned));
            let p = plan_segments(&c, base(&c, n, false, 0), &r, None).unwrap();
            let s = p.segment.clone().unwrap();
            assert_eq!(s.algo, SegmentAlgo::Aligned);
            assert_eq!((s.unroll, p.passes), (unroll, 1), "mean {mean}");
            assert_eq!(p.local, if lanes { 1 } else { 64 }, "mean {mean}");
            assert_eq!(p.wide_index, unroll > 1, "mean {mean}");
            assert_eq!(s.per_item, 4);
            let chunks = n.div_ceil(s.tile);
            assert!(chunks >= 8 * fill, "mean {mean}: {chunks} chunks");
            assert_eq!(p.groups * p.local as u64, chunks, "mean {mean}");
        }
    }
    // GPUs run it forced, one accumulator.
    let h = fixtures::nvidia_h200();
    let r = req(off, n / 4096, n, Some(SegmentAlgo::Aligned));
    let p = plan_segments(&h, base(&h, n, false, 0), &r, None).unwrap();
    assert_eq!((p.segment.unwrap().unroll, p.passes), (1, 1));
}

/// Forced on columns it is refused; tuning overrides the mask, the chunks and the work-group.
#[test]
fn aligned_refuses_columns_and_follows_tuning() {
    let c = fixtures::intel_cpu();
    let n = 1u64 << 20;
    let cols = SegmentLayout::Columns {
        rows: n / 16,
        cols: 16,
    };
    let r = req(cols, 16, n, Some(SegmentAlgo::Aligned));
    let e = plan_segments(&c, base(&c, n, false, 0), &r, None);
    assert!(matches!(e, Err(Error::Unsupported { .. })));
    let mut r = req(SegmentLayout::Offsets, n / 4, n, Some(SegmentAlgo::Aligned));
    r.tune = SegmentTune {
        per_item: Some(8),
        chunks: Some(32),
        local: Some(4),
        scan: Some(false),
        ..SegmentTune::default()
    };
    let p = plan_segments(&c, base(&c, n, false, 0), &r, None).unwrap();
    let s = p.segment.unwrap();
    assert_eq!((s.per_item, n.div_ceil(s.tile), p.local), (8, 32, 4));
}

/// Exact sums keep the plans the rules gave them before `aligned` (not measured with it); forced,
/// `aligned` runs them without the masked steps (a superaccumulator per step otherwise).
#[test]
fn exact_sums_keep_their_plans() {
    let n = 1u64 << 20;
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        for (layout, segments) in [
            (SegmentLayout::Offsets, n / 4),
            (SegmentLayout::Offsets, n / 64),
            (SegmentLayout::Uniform { len: 128 }, n / 128),
        ] {
            let r = req(layout, segments, n, None);
            let plain = plan_segments(&c, base(&c, n, false, 0), &r, None).unwrap();
            assert_eq!(plain.segment.unwrap().algo, SegmentAlgo::Aligned);
            let exact = plan_segments(&c, base(&c, n, true, 4096), &r, None).unwrap();
            assert_ne!(
                exact.segment.unwrap().algo,
                SegmentAlgo::Aligned,
                "{layout:?}"
            );
        }
        let r = req(SegmentLayout::Offsets, n / 4, n, Some(SegmentAlgo::Aligned));
        let p = plan_segments(&c, base(&c, n, true, 4096), &r, None).unwrap();
        let s = p.segment.unwrap();
        assert_eq!((s.algo, s.per_item, s.unroll), (SegmentAlgo::Aligned, 0, 1));
    }
}

/// The scan walk (decision 87): CSR offsets below mean 16 on CPUs, 8 chunks (chains) per
/// work-item on PoCL and 4 on Intel, in work-groups of one on both, one pass, no masked steps,
/// at least 8 `fill` chunks; the walk from mean 16, for rows, for exact sums and on GPUs (there
/// only with `scan=1`); `scan=0|1` and `unroll=N` (the chains) override.
#[test]
fn aligned_scan_below_mean_16() {
    let n = 1u64 << 22;
    let off = SegmentLayout::Offsets;
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        let q = if c.sub_groups.is_some() { 4 } else { 8 };
        let fill = c.compute_units as u64 * 4;
        for (mean, force) in [
            (1, None),
            (4, None),
            (7, None),
            (4, Some(SegmentAlgo::Aligned)),
        ] {
            let r = req(off, n / mean, n, force);
            let p = plan_segments(&c, base(&c, n, false, 0), &r, None).unwrap();
            let s = p.segment.clone().unwrap();
            assert_eq!(s.algo, SegmentAlgo::Aligned, "mean {mean}");
            assert!(s.scan, "mean {mean}");
            assert!(
                p.geometry_reason.contains("segmented scan"),
                "{}",
                p.geometry_reason
            );
            assert_eq!(
                (s.unroll, p.local, p.passes, s.per_item),
                (q, 1, 1, 0),
                "mean {mean}"
            );
            let chunks = n.div_ceil(s.tile);
            assert!(chunks >= 8 * fill * q, "mean {mean}: {chunks} chunks");
            assert_eq!(p.groups, chunks.div_ceil(q), "mean {mean}");
        }
        for (layout, segments) in [
            (off, n / 16),
            (off, n / 40),
            (SegmentLayout::Uniform { len: 4 }, n / 4),
        ] {
            let r = req(layout, segments, n, Some(SegmentAlgo::Aligned));
            let s = plan_segments(&c, base(&c, n, false, 0), &r, None)
                .unwrap()
                .segment
                .unwrap();
            assert!(!s.scan, "{layout:?}");
        }
        // Exact sums: the walk, one accumulator.
        let r = req(off, n / 4, n, Some(SegmentAlgo::Aligned));
        let s = plan_segments(&c, base(&c, n, true, 4096), &r, None)
            .unwrap()
            .segment
            .unwrap();
        assert_eq!((s.scan, s.unroll), (false, 1));
        // Overrides: scan=0 at mean 4, scan=1 at mean 64, unroll=2 chains.
        let mut r = req(off, n / 4, n, Some(SegmentAlgo::Aligned));
        r.tune.scan = Some(false);
        let p = plan_segments(&c, base(&c, n, false, 0), &r, None).unwrap();
        let s = p.segment.unwrap();
        assert_eq!((s.scan, s.per_item, s.unroll), (false, 4, 1));
        assert_eq!(p.local, if c.sub_groups.is_some() { 1 } else { 64 });
        r = req(off, n / 64, n, Some(SegmentAlgo::Aligned));
        r.tune.scan = Some(true);
        r.tune.unroll = Some(2);
        let p = plan_segments(&c, base(&c, n, false, 0), &r, None).unwrap();
        let s = p.segment.unwrap();
        assert_eq!((s.scan, s.unroll, p.local), (true, 2, 1));
    }
    // GPUs: the walk unless forced.
    let h = fixtures::nvidia_h200();
    let mut r = req(off, n / 4, n, Some(SegmentAlgo::Aligned));
    let s = plan_segments(&h, base(&h, n, false, 0), &r, None)
        .unwrap()
        .segment
        .unwrap();
    assert_eq!((s.scan, s.unroll), (false, 1));
    r.tune.scan = Some(true);
    let s = plan_segments(&h, base(&h, n, false, 0), &r, None)
        .unwrap()
        .segment
        .unwrap();
    assert_eq!((s.scan, s.unroll), (true, 8));
}
