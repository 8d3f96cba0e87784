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

/// `panels` (decision 91): the rule's plan for column sums on both CPUs, work-groups of one,
/// 4 KiB of a row's reads per panel row (1024 f32, 512 f64), 16 rows per step, 64-bit indices,
/// whole rows per panel row for narrow arrays (chunks of whole panel rows), panels x chunks
/// work-items filling `2 fill`, a second pass only with several chunks; the reason names it;
/// tuning overrides; rows, CSR and exact sums refused.
#[test]
fn panels_geometry_and_rule() {
    let n = 1u64 << 22;
    let cols = |rows: u64, cols: u64| SegmentLayout::Columns { rows, cols };
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        let fill = c.compute_units as u64 * 4;
        let plan = |rows: u64, cs: u64, read_bytes: u64, tune: SegmentTune| {
            let mut r = req(cols(rows, cs), cs, rows * cs, None);
            r.read_bytes = read_bytes;
            r.tune = tune;
            plan_segments(&c, base(&c, rows * cs, false, 0), &r, None).unwrap()
        };
        // The rule's plan at 1 to 16384 columns, its reason naming the panels.
        for cs in [1, 3, 16, 20, 32, 256, 2048, 16384] {
            let p = plan(n / cs, cs, 4, SegmentTune::default());
            let s = p.segment.clone().unwrap();
            assert_eq!(s.algo, SegmentAlgo::Panels, "{cs} columns");
            assert!(s.reason.contains("panel of 4 KiB"), "{}", s.reason);
            assert!(p.geometry_reason.contains("panel"), "{}", p.geometry_reason);
            assert_eq!(
                (p.local, s.unroll, s.per_item),
                (1, 16, 1024),
                "{cs} columns"
            );
            assert!(p.wide_index);
        }
        // f64: 512 per panel row; no reads at [i]: 1024.
        for (bytes, width) in [(8, 512), (0, 1024), (2, 2048)] {
            let s = plan(1 << 12, 1 << 10, bytes, SegmentTune::default())
                .segment
                .unwrap();
            assert_eq!(s.per_item, width, "{bytes}-byte reads");
        }
        // 256 x 16384: 16 panels, `2 fill` work-items, so one chunk and one pass.
        let p = plan(256, 16384, 4, SegmentTune::default());
        assert_eq!(p.groups, 16.max(2 * fill).div_ceil(16) * 16);
        assert_eq!((p.passes, p.segment.unwrap().tile), (1, 256));
        // 16384 x 256: one panel of 4 rows, `2 fill` chunks of whole panel rows, two passes.
        let p = plan(16384, 256, 4, SegmentTune::default());
        let s = p.segment.clone().unwrap();
        assert_eq!((p.groups, p.passes), (2 * fill, 2));
        assert_eq!(s.tile % 4, 0);
        assert_eq!(16384u64.div_ceil(s.tile), 2 * fill);
        // Narrow: 3 columns, 341 rows per panel row: chunks of whole panel rows.
        let s = plan(100_000, 3, 4, SegmentTune::default()).segment.unwrap();
        assert_eq!(s.tile % 341, 0, "{}", s.tile);
        // At least 16 rows per chunk: 24 rows one chunk, 40 two.
        let s = plan(24, 2048, 4, SegmentTune::default()).segment.unwrap();
        assert_eq!(s.tile, 24);
        let s = plan(40, 2048, 4, SegmentTune::default()).segment.unwrap();
        assert_eq!(s.tile, 20);
        // Tuned: the panel, the rows per step, the chunks, the work-group.
        let tune = SegmentTune {
            panel: Some(256),
            unroll: Some(4),
            chunks: Some(7),
            local: Some(4),
            ..Default::default()
        };
        let p = plan(1 << 12, 1 << 10, 4, tune);
        let s = p.segment.unwrap();
        assert_eq!((s.per_item, s.unroll, p.local), (256, 4, 4));
        assert_eq!(
            ((1u64 << 12).div_ceil(s.tile), p.passes, p.groups),
            (7, 2, 7)
        );
    }
    // Rows, CSR and exact sums forced: refused; exact sums by the rules: columns.
    let c = fixtures::intel_cpu();
    for layout in [SegmentLayout::Uniform { len: 16 }, SegmentLayout::Offsets] {
        let r = req(layout, 64, 1024, Some(SegmentAlgo::Panels));
        let e = plan_segments(&c, base(&c, 1024, false, 0), &r, None);
        assert!(matches!(e, Err(Error::Unsupported { .. })), "{layout:?}");
    }
    let r = req(cols(4096, 256), 256, 1 << 20, Some(SegmentAlgo::Panels));
    let e = plan_segments(&c, base(&c, 1 << 20, true, 4096), &r, None);
    assert!(matches!(e, Err(Error::Unsupported { .. })), "{e:?}");
    let r = req(cols(4096, 256), 256, 1 << 20, None);
    let p = plan_segments(&c, base(&c, 1 << 20, true, 4096), &r, None).unwrap();
    assert_eq!(p.segment.unwrap().algo, SegmentAlgo::Columns);
    // GPUs: unchanged (stripes, columns).
    let h = fixtures::nvidia_h200();
    for (cs, want) in [(256, SegmentAlgo::Stripes), (4096, SegmentAlgo::Columns)] {
        let r = req(cols(n / cs, cs), cs, n, None);
        let p = plan_segments(&h, base(&h, n, false, 0), &r, None).unwrap();
        assert_eq!(p.segment.unwrap().algo, want, "H200, {cs} columns");
    }
}
