//! Unit tests of the segment planner (`segment.rs`): the rules by segment length, the
//! geometry of each plan and the refusals.
use super::*;
use crate::caps::fixtures;
use crate::ops::Op;
use crate::plan::{
    plan, FormRequest, GroupAlgo, Request, SegmentTune, Shape, Strategy, VarRequest,
};
use crate::types::ElemType;

/// The ordinary plan of one f32 sum over `n` elements, forced to an extra pass: what
/// `plan_segments` rewrites (the CPU rules' tests use it too).
pub(in crate::plan) fn base(caps: &DeviceCaps, n: u64) -> Plan {
    let req = Request {
        form: FormRequest::Range { n },
        shape: Shape::linear(n, 1),
        vars: vec![VarRequest::new(Op::Plus, ElemType::F32)],
        strategy: Strategy::new(GroupAlgo::Tree, CrossAlgo::ExtraPass),
        determinism: Default::default(),
        tuning: None,
        pure_body: true,
        narrow_reads: false,
    };
    plan(caps, &req).unwrap()
}

fn algo(caps: &DeviceCaps, layout: SegmentLayout, segments: u64, n: u64) -> SegmentAlgo {
    let req = SegmentRequest {
        layout,
        segments,
        elements: n,
        force: None,
        tune: Default::default(),
        longest: 0,
        read_bytes: 0,
    };
    let p = plan_segments(caps, base(caps, n), &req, None).unwrap();
    let s = p.segment.clone().unwrap();
    assert!(!s.reason.is_empty());
    assert!(p.to_string().contains(&format!("plan {}", s.algo)));
    s.algo
}

#[test]
fn h200_chooses_by_segment_length() {
    let c = fixtures::nvidia_h200();
    let n = 1 << 28;
    let u = |len| SegmentLayout::Uniform { len };
    assert_eq!(algo(&c, u(4), n / 4, n), SegmentAlgo::Staged);
    assert_eq!(algo(&c, u(16), n / 16, n), SegmentAlgo::Staged);
    assert_eq!(algo(&c, u(256), n / 256, n), SegmentAlgo::Lanes);
    assert_eq!(algo(&c, u(16384), n / 16384, n), SegmentAlgo::Group);
    // Few long rows: group split over several work-groups per row (decision 58).
    assert_eq!(algo(&c, u(1 << 20), 256, n), SegmentAlgo::Group);
    assert_eq!(algo(&c, u(n), 1, n), SegmentAlgo::Group);
    assert_eq!(algo(&c, u(1 << 17), 2048, n), SegmentAlgo::Group);
    // CSR up to mean 16384: runs (decision 62).
    for mean in [8, 256, 4096, 16384] {
        assert_eq!(
            algo(&c, SegmentLayout::Offsets, n / mean, n),
            SegmentAlgo::Runs
        );
    }
    assert_eq!(
        algo(&c, SegmentLayout::Offsets, n / 65536, n),
        SegmentAlgo::Tiles
    );
    let cols = SegmentLayout::Columns {
        rows: 256,
        cols: 1 << 20,
    };
    assert_eq!(algo(&c, cols, 1 << 20, n), SegmentAlgo::Columns);
    let few = SegmentLayout::Columns {
        rows: n / 16,
        cols: 16,
    };
    assert_eq!(algo(&c, few, 16, n), SegmentAlgo::Stripes);
    // Stripes reach a work-group of columns (256 on the H200), columns take more.
    let at = |cols: u64| SegmentLayout::Columns {
        rows: n / cols,
        cols,
    };
    assert_eq!(algo(&c, at(256), 256, n), SegmentAlgo::Stripes);
    assert_eq!(algo(&c, at(512), 512, n), SegmentAlgo::Columns);
}

#[test]
fn cpus_take_a_work_item_per_segment_when_there_are_many() {
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        let lanes = c.sub_groups.is_some();
        let n = 1 << 20;
        let u = |len| SegmentLayout::Uniform { len };
        // Many short rows (decision 77): aligned where work-items are SIMD lanes, and where
        // they are loops from 32 on (rows of 4 and 16 keep item).
        let short = if lanes {
            SegmentAlgo::Aligned
        } else {
            SegmentAlgo::Item
        };
        assert_eq!(algo(&c, u(4), n / 4, n), short);
        assert_eq!(algo(&c, u(16), n / 16, n), short);
        assert_eq!(algo(&c, u(32), n / 32, n), SegmentAlgo::Aligned);
        let long = if lanes {
            SegmentAlgo::Chunks
        } else {
            SegmentAlgo::Item
        };
        assert_eq!(algo(&c, u(191), n / 191, n), SegmentAlgo::Aligned);
        assert_eq!(algo(&c, u(192), n / 192, n), long);
        assert_eq!(algo(&c, u(256), n / 256, n), long);
        // Few long rows: chunks (decision 66; on Intel from decision 73 on, streamed by
        // work-groups of one); few short ones where work-items are SIMD lanes: tiles.
        assert_eq!(algo(&c, u(n), 1, n), SegmentAlgo::Chunks);
        assert_eq!(algo(&c, u(n / 2), 2, n), SegmentAlgo::Chunks);
        let few_short = if lanes {
            SegmentAlgo::Tiles
        } else {
            SegmentAlgo::Chunks
        };
        assert_eq!(algo(&c, u(191), 2, 382), few_short);
        // CSR: aligned below mean 192 and chunks from it with sub-groups (decisions 73, 77);
        // without, aligned below 192 (the scan walk below 16, decision 87), a work-item per
        // segment up to mean 4096, chunks beyond.
        let off = SegmentLayout::Offsets;
        let csr = |mean: u64| algo(&c, off, n / mean, n);
        if lanes {
            for mean in [1, 4, 16, 17, 64, 191] {
                assert_eq!(csr(mean), SegmentAlgo::Aligned, "mean {mean}");
            }
            assert_eq!(csr(192), SegmentAlgo::Chunks);
            assert_eq!(csr(65536), SegmentAlgo::Chunks);
        } else {
            for mean in [1, 4, 8, 9, 15, 16, 31, 64, 191] {
                assert_eq!(csr(mean), SegmentAlgo::Aligned, "mean {mean}");
            }
            assert_eq!(csr(192), SegmentAlgo::Item);
            assert_eq!(csr(4096), SegmentAlgo::Item);
            assert_eq!(csr(8192), SegmentAlgo::Chunks);
        }
        let cols = SegmentLayout::Columns {
            rows: 16,
            cols: n / 16,
        };
        assert_eq!(algo(&c, cols, n / 16, n), SegmentAlgo::Panels);
    }
}

/// Column sums on CPUs take panels of contiguous columns per work-item at every column count
/// (decision 91; blocks before it, decision 68); GPUs keep stripes and columns.
#[test]
fn cpu_columns_take_panels_of_columns() {
    let n = 1u64 << 22;
    let at = |cols: u64| SegmentLayout::Columns {
        rows: n / cols,
        cols,
    };
    for cols in [1, 2, 4, 7, 8, 15, 16, 31, 32, 33, 64, 256, 1024, 16384] {
        let pocl = algo(&fixtures::pocl_cpu(), at(cols), cols, n);
        assert_eq!(pocl, SegmentAlgo::Panels, "PoCL, {cols} columns");
        let intel = algo(&fixtures::intel_cpu(), at(cols), cols, n);
        assert_eq!(intel, SegmentAlgo::Panels, "Intel, {cols} columns");
        let h200 = algo(&fixtures::nvidia_h200(), at(cols), cols, n);
        let want = if cols <= 256 {
            SegmentAlgo::Stripes
        } else {
            SegmentAlgo::Columns
        };
        assert_eq!(h200, want, "H200, {cols} columns");
    }
}

/// The blocks geometry: 64 bytes of a row per work-item (at most the column count, a power of
/// two), row chunks that fill the device, one pass with one chunk; tuning overrides.
#[test]
fn blocks_geometry() {
    let c = fixtures::pocl_cpu();
    let fill = c.compute_units as u64 * 4;
    let plan = |rows: u64, cols: u64, read_bytes: u64, tune: SegmentTune| {
        let layout = SegmentLayout::Columns { rows, cols };
        let p = forced(
            &c,
            layout,
            cols,
            rows * cols,
            (SegmentAlgo::Blocks, read_bytes, tune),
        )
        .unwrap();
        let s = p.segment.clone().unwrap();
        assert_eq!(s.algo, SegmentAlgo::Blocks);
        (p, s)
    };
    // f32 (4-byte reads): 16 columns per work-item; f64: 8; no reads at [i]: 4.
    for (bytes, width) in [(4, 16), (8, 8), (2, 16), (0, 4)] {
        let (_, s) = plan(1 << 18, 16, bytes, SegmentTune::default());
        assert_eq!(s.unroll, width, "{bytes}-byte reads");
    }
    // Narrow arrays: at most the largest power of two not above the column count, or the
    // whole width where the column count divides it (several rows per block).
    for (cols, width) in [
        (1, 16),
        (2, 16),
        (3, 2),
        (4, 16),
        (7, 4),
        (8, 16),
        (13, 8),
        (17, 16),
    ] {
        assert_eq!(plan(1000, cols, 4, SegmentTune::default()).1.unroll, width);
    }
    // Where work-items are SIMD lanes (Intel), no rows folded into a block.
    let intel = fixtures::intel_cpu();
    for (cols, width) in [(1, 1), (2, 2), (3, 2), (8, 8), (17, 16)] {
        let layout = SegmentLayout::Columns { rows: 1000, cols };
        let tune = SegmentTune::default();
        let p = forced(
            &intel,
            layout,
            cols,
            1000 * cols,
            (SegmentAlgo::Blocks, 4, tune),
        );
        assert_eq!(
            p.unwrap().segment.unwrap().unroll,
            width,
            "Intel, {cols} columns"
        );
    }
    // 262144 x 16: one block, rows in chunks so that blocks x chunks work-items fill `fill`
    // work-groups of 64, a second pass.
    let (p, s) = plan(1 << 18, 16, 4, SegmentTune::default());
    let chunks = (1u64 << 18).div_ceil(s.tile);
    assert_eq!(
        (chunks, p.groups, p.passes, p.local),
        (fill * 64, fill, 2, 64)
    );
    // 64-bit indices (a row's block is then consecutive addresses to the compiler).
    assert!(p.wide_index);
    // 256 x 16384: 1024 blocks fill the device alone: one chunk, one pass.
    let (p, s) = plan(256, 1 << 14, 4, SegmentTune::default());
    assert_eq!((s.tile, p.passes, p.groups), (256, 1, 1024 / 64));
    // At least 16 rows per chunk.
    let (_, s) = plan(100, 3, 4, SegmentTune::default());
    assert!(s.tile >= 16, "{}", s.tile);
    // Tuned: the width and the chunks.
    let tune = SegmentTune {
        unroll: Some(4),
        chunks: Some(7),
        ..Default::default()
    };
    let (p, s) = plan(1 << 12, 1 << 10, 4, tune);
    assert_eq!(
        ((1u64 << 12).div_ceil(s.tile), s.unroll, p.passes),
        (7, 4, 2)
    );
    // Rows and CSR segments: refused.
    for layout in [SegmentLayout::Uniform { len: 16 }, SegmentLayout::Offsets] {
        let e = forced(
            &c,
            layout,
            64,
            1024,
            (SegmentAlgo::Blocks, 4, SegmentTune::default()),
        );
        assert!(matches!(e, Err(Error::Unsupported { .. })), "{layout:?}");
    }
}

/// Exact sums keep columns by the rules (a superaccumulator per column of a block); forced,
/// blocks of one column.
#[test]
fn exact_column_sums_keep_columns_on_cpus() {
    use crate::plan::segment_exact::segment_exact;
    use crate::Determinism;
    let c = fixtures::pocl_cpu();
    let (rows, cols) = (1u64 << 12, 256u64);
    let n = rows * cols;
    for force in [None, Some(SegmentAlgo::Blocks)] {
        let mut b = base(&c, n);
        segment_exact(&c, &mut b, Determinism::Exact, None, rows).unwrap();
        let req = SegmentRequest {
            layout: SegmentLayout::Columns { rows, cols },
            segments: cols,
            elements: n,
            force,
            tune: Default::default(),
            longest: rows,
            read_bytes: 4,
        };
        let p = plan_segments(&c, b, &req, None).unwrap();
        let s = p.segment.unwrap();
        match force {
            None => {
                assert_eq!(s.algo, SegmentAlgo::Columns);
                assert!(s.reason.starts_with("exact sums"), "{}", s.reason);
            }
            Some(_) => assert_eq!((s.algo, s.unroll), (SegmentAlgo::Blocks, 1)),
        }
    }
}

#[test]
fn few_columns_split_rows_and_take_two_passes() {
    let c = fixtures::nvidia_h200();
    let n = 1u64 << 28;
    let req = |rows: u64, cols: u64| SegmentRequest {
        layout: SegmentLayout::Columns { rows, cols },
        segments: cols,
        elements: rows * cols,
        force: None,
        tune: Default::default(),
        longest: 0,
        read_bytes: 0,
    };
    let few = plan_segments(&c, base(&c, n), &req(n / 4, 4), None).unwrap();
    assert_eq!(few.passes, 2);
    assert!(few.segment.unwrap().tile < n / 4);
    let many = plan_segments(&c, base(&c, n), &req(16, n / 16), None).unwrap();
    assert_eq!(many.passes, 1);
    // Row chunks fill whole rounds of 8 work-groups per compute unit: 64 blocks of 256
    // columns x 16 chunks = 1024 work-groups <= 1056 (17 chunks left 32 for a second round).
    let c132 = c.compute_units as u64 * 8;
    for (rows, cols) in [
        (1u64 << 14, 1u64 << 14),
        (n / 1000, 1000),
        (n / 150_000, 150_000),
    ] {
        let p = plan_segments(&c, base(&c, n), &req(rows, cols), None).unwrap();
        let s = p.segment.unwrap();
        assert_eq!(s.algo, SegmentAlgo::Columns, "{rows} x {cols}");
        let (blocks, chunks) = (cols.div_ceil(256), rows.div_ceil(s.tile));
        assert_eq!(p.groups, blocks * chunks, "{rows} x {cols}");
        let rounds = p.groups.div_ceil(c132);
        // At most an eighth of the last round idle, or one chunk per block.
        assert!(
            chunks == 1 || p.groups * 8 >= rounds * c132 * 7,
            "{rows} x {cols}: {}",
            p.groups
        );
        if (rows, cols) == (1 << 14, 1 << 14) {
            assert_eq!((chunks, p.groups, p.passes), (16, 1024, 2));
        }
    }
}

#[test]
fn tiles_bound_the_long_segment_list() {
    for (_, c) in fixtures::all() {
        for n in [1u64, 1000, 1 << 20, 1 << 28] {
            let req = SegmentRequest {
                layout: SegmentLayout::Offsets,
                segments: 3,
                elements: n,
                force: Some(SegmentAlgo::Tiles),
                tune: Default::default(),
                longest: 0,
                read_bytes: 0,
            };
            let p = plan_segments(&c, base(&c, n.max(1)), &req, None).unwrap();
            let s = p.segment.unwrap();
            assert!(s.tile / (s.short + 1) < TILE_LONGS, "{n}: {s:?}");
            assert_eq!(s.tile % p.local as u64, 0);
            assert_eq!(p.passes, 2);
        }
    }
}

#[test]
fn forcing_checks_the_layout() {
    let c = fixtures::pocl_cpu();
    let req = SegmentRequest {
        layout: SegmentLayout::Columns { rows: 4, cols: 4 },
        segments: 4,
        elements: 16,
        force: Some(SegmentAlgo::Item),
        tune: Default::default(),
        longest: 0,
        read_bytes: 0,
    };
    let e = plan_segments(&c, base(&c, 16), &req, None).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let req = SegmentRequest {
        layout: SegmentLayout::Uniform { len: 4 },
        force: Some(SegmentAlgo::Stripes),
        ..req
    };
    assert!(plan_segments(&c, base(&c, 16), &req, None).is_err());
    let req = SegmentRequest {
        layout: SegmentLayout::Columns { rows: 4, cols: 4 },
        force: Some(SegmentAlgo::Staged),
        ..req
    };
    assert!(plan_segments(&c, base(&c, 16), &req, None).is_err());
    let req = SegmentRequest {
        layout: SegmentLayout::Uniform { len: 4 },
        force: Some(SegmentAlgo::Columns),
        tune: Default::default(),
        longest: 0,
        read_bytes: 0,
        ..req
    };
    assert!(plan_segments(&c, base(&c, 16), &req, None).is_err());
    assert_eq!(
        SegmentAlgo::parse("multi").unwrap(),
        Some(SegmentAlgo::Tiles)
    );
    assert_eq!(SegmentAlgo::parse("auto").unwrap(), None);
    assert!(SegmentAlgo::parse("warp").is_err());
}

#[test]
fn new_plans_geometry() {
    let c = fixtures::nvidia_h200();
    let n = 1u64 << 28;
    let plan = |layout, segments, tune: SegmentTune| {
        let req = SegmentRequest {
            layout,
            segments,
            elements: n,
            force: None,
            tune,
            longest: 0,
            read_bytes: 0,
        };
        plan_segments(&c, base(&c, n), &req, None).unwrap()
    };
    // staged: whole rows per stage, the stage in the local memory budget.
    let p = plan(
        SegmentLayout::Uniform { len: 16 },
        n / 16,
        SegmentTune::default(),
    );
    let s = p.segment.clone().unwrap();
    assert_eq!(
        (s.algo, s.per_item, s.tile),
        (SegmentAlgo::Staged, 8, 128 * 8 / 16)
    );
    assert!(p.local_bytes <= c.local_mem_size);
    // lanes: 16 elements per lane, a tuned count wins.
    let rows = SegmentLayout::Uniform { len: 256 };
    let s = plan(rows, n / 256, SegmentTune::default()).segment.unwrap();
    assert_eq!((s.algo, s.lanes), (SegmentAlgo::Lanes, 16));
    let tune = SegmentTune {
        lanes: Some(4),
        unroll: Some(2),
        ..Default::default()
    };
    let s = plan(rows, n / 256, tune).segment.unwrap();
    assert_eq!((s.lanes, s.unroll), (4, 2));
    // stripes: two passes, the first pass's work-groups in `tile`.
    let cols = SegmentLayout::Columns {
        rows: n / 16,
        cols: 16,
    };
    let p = plan(cols, 16, SegmentTune::default());
    let s = p.segment.clone().unwrap();
    assert_eq!(
        (s.algo, p.passes, s.tile, s.unroll),
        (SegmentAlgo::Stripes, 2, p.groups, 4)
    );
    // columns: a tuned chunk count wins (at most one chunk per row).
    let square = SegmentLayout::Columns {
        rows: 1 << 14,
        cols: 1 << 14,
    };
    for (chunks, want) in [(32, 32), (1, 1), (1 << 16, 1 << 14)] {
        let tune = SegmentTune {
            chunks: Some(chunks),
            ..Default::default()
        };
        let p = plan(square, 1 << 14, tune);
        let s = p.segment.unwrap();
        assert_eq!(s.algo, SegmentAlgo::Columns);
        assert_eq!(
            ((1u64 << 14).div_ceil(s.tile), p.passes),
            (want, if want > 1 { 2 } else { 1 })
        );
    }
    // staged over CSR offsets when forced: stages of local x per_item, two passes.
    let req = SegmentRequest {
        layout: SegmentLayout::Offsets,
        segments: n / 16,
        elements: n,
        force: Some(SegmentAlgo::Staged),
        tune: SegmentTune::default(),
        longest: 400,
        read_bytes: 0,
    };
    let p = plan_segments(&c, base(&c, n), &req, None).unwrap();
    let s = p.segment.unwrap();
    assert_eq!((s.tile, p.passes), (256 * s.per_item, 2));
    assert!(p.local_bytes <= c.local_mem_size);
}

#[test]
fn group_splits_few_segments_over_the_device() {
    let c = fixtures::nvidia_h200();
    let (n, fill) = (1u64 << 28, c.compute_units as u64 * 8);
    let plan = |segments: u64, tune: SegmentTune| {
        let req = SegmentRequest {
            layout: SegmentLayout::Uniform { len: n / segments },
            segments,
            elements: n,
            force: Some(SegmentAlgo::Group),
            tune,
            longest: 0,
            read_bytes: 0,
        };
        let p = plan_segments(&c, base(&c, n), &req, None).unwrap();
        (p.segment.clone().unwrap().tile, p.groups, p.passes)
    };
    // Parts per segment fill two rounds of work-groups; enough segments take one pass.
    assert_eq!(plan(256, Default::default()), (8, 2048, 2));
    assert_eq!(plan(1, Default::default()), (2 * fill, 2 * fill, 2));
    assert_eq!(plan(1 << 14, Default::default()), (1, fill * 4, 1));
    let split = |s| SegmentTune {
        split: Some(s),
        ..Default::default()
    };
    assert_eq!(plan(256, split(2)), (2, 512, 2));
    assert_eq!(plan(1 << 14, split(1)).2, 1);
    // tiles: tiles per work-group.
    let req = SegmentRequest {
        layout: SegmentLayout::Uniform { len: n },
        segments: 1,
        elements: n,
        force: Some(SegmentAlgo::Tiles),
        tune: SegmentTune {
            rounds: Some(1),
            ..Default::default()
        },
        longest: 0,
        read_bytes: 0,
    };
    let s = plan_segments(&c, base(&c, n), &req, None)
        .unwrap()
        .segment
        .unwrap();
    assert_eq!(n.div_ceil(s.tile), fill);
}

#[test]
fn merge_geometry_and_layouts() {
    for (name, c) in fixtures::all() {
        let n = 1u64 << 24;
        let req = |layout, tune| SegmentRequest {
            layout,
            segments: n / 16,
            elements: n,
            force: Some(SegmentAlgo::Merge),
            tune,
            longest: 0,
            read_bytes: 0,
        };
        let p = plan_segments(
            &c,
            base(&c, n),
            &req(SegmentLayout::Offsets, Default::default()),
            None,
        )
        .unwrap();
        let s = p.segment.clone().unwrap();
        assert_eq!((s.algo, p.passes), (SegmentAlgo::Merge, 2), "{name}");
        assert_eq!(s.tile, p.local as u64 * s.per_item, "{name}");
        assert!(
            p.local_bytes <= c.local_mem_size,
            "{name}: {}",
            p.local_bytes
        );
        if c.kind == DeviceKind::Gpu {
            assert_eq!((p.local, s.per_item), (128, 16), "{name}");
        }
        let tune = SegmentTune {
            per_item: Some(4),
            local: Some(64),
            ..Default::default()
        };
        let s = plan_segments(&c, base(&c, n), &req(SegmentLayout::Offsets, tune), None)
            .unwrap()
            .segment
            .unwrap();
        assert_eq!((s.tile, s.per_item), (256, 4), "{name}");
        for layout in [
            SegmentLayout::Uniform { len: 16 },
            SegmentLayout::Columns {
                rows: n / 16,
                cols: 16,
            },
        ] {
            let e =
                plan_segments(&c, base(&c, n), &req(layout, Default::default()), None).unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }), "{name}: {e}");
        }
    }
}

/// A forced plan on the H200 or a CPU with the body's read width `read_bytes` and `tune`.
fn forced(
    c: &DeviceCaps,
    layout: SegmentLayout,
    segments: u64,
    n: u64,
    (algo, read_bytes, tune): (SegmentAlgo, u64, SegmentTune),
) -> Result<Plan> {
    let req = SegmentRequest {
        layout,
        segments,
        elements: n,
        force: Some(algo),
        tune,
        longest: 0,
        read_bytes,
    };
    plan_segments(c, base(c, n), &req, None)
}

#[test]
fn item_loads_vectors_on_gpu_rows() {
    let h = fixtures::nvidia_h200();
    let n = 1u64 << 28;
    let u = |len| SegmentLayout::Uniform { len };
    let item = |c: &DeviceCaps, len: u64, bytes: u64, tune: SegmentTune| {
        let p = forced(c, u(len), n / len, n, (SegmentAlgo::Item, bytes, tune)).unwrap();
        let s = p.segment.clone().unwrap();
        (s.vec, s.unroll, p.vec, p.groups)
    };
    let none = SegmentTune::default();
    // f32 rows of 16: float4 loads, one row per step (4 loads in flight); rows of 4: 4 rows.
    assert_eq!(item(&h, 16, 4, none), (4, 1, 4, (n / 16).div_ceil(256)));
    assert_eq!(item(&h, 4, 4, none), (4, 2, 4, (n / 4).div_ceil(512)));
    assert_eq!(item(&h, 8, 4, none).1, 1);
    assert_eq!(item(&h, 2, 4, none).1, 4);
    // f64: double2; a row of 6 f32 takes float2; no read at [i] (0 bytes): one at a time.
    assert_eq!(item(&h, 4, 8, none).0, 2);
    assert_eq!(item(&h, 6, 4, none).0, 2);
    assert_eq!(item(&h, 16, 0, none).0, 1);
    assert_eq!(item(&h, 7, 4, none).0, 1);
    let tune = SegmentTune {
        vec: Some(8),
        unroll: Some(2),
        ..none
    };
    assert_eq!(item(&h, 16, 4, tune).0, 8);
    assert_eq!(item(&h, 16, 4, tune).1, 2);
    assert_eq!(item(&h, 12, 4, tune).0, 4);
    // CPUs keep one element at a time unless told otherwise; other plans never take it.
    let cpu = fixtures::pocl_cpu();
    assert_eq!(item(&cpu, 16, 4, none).0, 1);
    let four = SegmentTune {
        vec: Some(4),
        ..none
    };
    assert_eq!(item(&cpu, 16, 4, four).0, 4);
    let staged = forced(&h, u(16), n / 16, n, (SegmentAlgo::Staged, 4, four)).unwrap();
    assert_eq!((staged.vec, staged.segment.unwrap().vec), (1, 1));
}

#[test]
fn runs_geometry_and_layouts() {
    let n = 1u64 << 28;
    for (name, c) in fixtures::all() {
        let p = forced(
            &c,
            SegmentLayout::Offsets,
            n / 16,
            n,
            (SegmentAlgo::Runs, 4, SegmentTune::parse("warp=0").unwrap()),
        )
        .unwrap();
        let s = p.segment.clone().unwrap();
        assert_eq!((s.algo, p.passes), (SegmentAlgo::Runs, 2), "{name}");
        assert!(s.per_item.is_power_of_two() && s.per_item <= 32, "{name}");
        assert_eq!(s.tile, p.local as u64 * s.per_item, "{name}");
        assert!(p.local_bytes <= c.local_mem_size, "{name}");
        if c.kind != DeviceKind::Gpu {
            assert_eq!(s.vec, 1, "{name}");
        }
        for layout in [
            SegmentLayout::Uniform { len: 16 },
            SegmentLayout::Columns {
                rows: 16,
                cols: n / 16,
            },
        ] {
            let e = forced(
                &c,
                layout,
                16,
                n,
                (SegmentAlgo::Runs, 4, SegmentTune::default()),
            );
            assert!(matches!(e, Err(Error::Unsupported { .. })), "{name}");
        }
    }
    // The H200: 256 work-items of 16 elements, float4 loads; a run length that is no power of
    // two is lowered to one.
    let h = fixtures::nvidia_h200();
    let p = forced(
        &h,
        SegmentLayout::Offsets,
        n / 16,
        n,
        (SegmentAlgo::Runs, 4, SegmentTune::parse("warp=0").unwrap()),
    )
    .unwrap();
    let s = p.segment.unwrap();
    assert_eq!((p.local, s.per_item, s.vec, s.tile), (128, 16, 4, 2048));
    // f64: runs of 64 bytes (8 elements), double2 loads.
    let p = forced(
        &h,
        SegmentLayout::Offsets,
        n / 16,
        n,
        (SegmentAlgo::Runs, 8, SegmentTune::default()),
    )
    .unwrap();
    let s = p.segment.unwrap();
    assert_eq!((s.per_item, s.vec), (8, 2));
    let tune = SegmentTune {
        per_item: Some(24),
        ..SegmentTune::default()
    };
    let p = forced(
        &h,
        SegmentLayout::Offsets,
        n / 16,
        n,
        (SegmentAlgo::Runs, 4, tune),
    )
    .unwrap();
    assert_eq!(p.segment.unwrap().per_item, 16);
}

#[test]
fn h200_rows_of_64_bytes_take_item_with_vector_loads() {
    let h = fixtures::nvidia_h200();
    let n = 1u64 << 28;
    let auto = |len: u64, bytes: u64| {
        let req = SegmentRequest {
            layout: SegmentLayout::Uniform { len },
            segments: n / len,
            elements: n,
            force: None,
            tune: SegmentTune::default(),
            longest: 0,
            read_bytes: bytes,
        };
        let p = plan_segments(&h, base(&h, n), &req, None).unwrap();
        let s = p.segment.unwrap();
        (s.algo, s.vec)
    };
    // f32 / i32 rows of 2..16, f64 rows of 2..8: item with 16-byte loads (8 bytes for rows of 2).
    assert_eq!(auto(16, 4), (SegmentAlgo::Item, 4));
    assert_eq!(auto(4, 4), (SegmentAlgo::Item, 4));
    assert_eq!(auto(2, 4), (SegmentAlgo::Item, 2));
    assert_eq!(auto(8, 8), (SegmentAlgo::Item, 2));
    // Rows of 128 bytes, odd rows (no vector divides them) and bodies that read nothing at
    // [i] stay with staged.
    assert_eq!(auto(32, 4).0, SegmentAlgo::Staged);
    assert_eq!(auto(16, 8).0, SegmentAlgo::Staged);
    assert_eq!(auto(7, 4).0, SegmentAlgo::Staged);
    assert_eq!(auto(16, 0).0, SegmentAlgo::Staged);
    // CPUs keep their rules.
    let cpu = fixtures::pocl_cpu();
    let req = SegmentRequest {
        layout: SegmentLayout::Uniform { len: 16 },
        segments: n / 16,
        elements: n,
        force: None,
        tune: SegmentTune::default(),
        longest: 0,
        read_bytes: 4,
    };
    let p = plan_segments(&cpu, base(&cpu, n), &req, None).unwrap();
    assert_eq!(p.segment.unwrap().vec, 1);
}

#[test]
fn runs_scan_and_tiles_vectors_follow_the_rules() {
    let n = 1u64 << 28;
    let h = fixtures::nvidia_h200();
    let off = SegmentLayout::Offsets;
    let plan = |c: &DeviceCaps, algo, segments, tune| {
        forced(c, off, segments, n, (algo, 4, tune))
            .unwrap()
            .segment
            .unwrap()
    };
    // The other kernels (the warp kernel, decision 81: segment_runs_tests.rs).
    let none = SegmentTune::parse("warp=0").unwrap();
    // runs: the serial joins below mean 32, the scan from 32 on; scan=0|1 overrides.
    for (mean, scan) in [
        (16, false),
        (31, false),
        (32, true),
        (256, true),
        (16384, true),
    ] {
        let s = plan(&h, SegmentAlgo::Runs, n / mean, none);
        assert_eq!(s.scan, scan, "mean {mean}");
    }
    for (mean, want) in [(16, true), (256, false)] {
        let tune = SegmentTune {
            scan: Some(want),
            ..none
        };
        assert_eq!(plan(&h, SegmentAlgo::Runs, n / mean, tune).scan, want);
    }
    // Only runs scans.
    assert!(!plan(&h, SegmentAlgo::Tiles, n / 256, none).scan);
    // runs with vector loads: the early loads from mean 256 on (decision 78); pre=0|1
    // overrides; never without vector loads (CPUs) or outside runs.
    for (mean, pre) in [
        (16, false),
        (255, false),
        (256, true),
        (1024, true),
        (16384, true),
    ] {
        assert_eq!(
            plan(&h, SegmentAlgo::Runs, n / mean, none).pre,
            pre,
            "mean {mean}"
        );
    }
    for (mean, want) in [(16, true), (4096, false)] {
        let tune = SegmentTune {
            pre: Some(want),
            lean: Some(false),
            ..none
        };
        assert_eq!(plan(&h, SegmentAlgo::Runs, n / mean, tune).pre, want);
    }
    assert!(!plan(&h, SegmentAlgo::Tiles, n / 4096, none).pre);
    let cpu = fixtures::intel_cpu();
    assert!(!plan(&cpu, SegmentAlgo::Runs, n / 4096, none).pre);
    // runs' lean kernel (decision 72): on GPUs up to mean 16 (one f32 variable here), never
    // with the early loads; lean=0|1 overrides; CPUs only where forced; only runs.
    for (mean, lean) in [(1, true), (16, true), (17, false), (256, false)] {
        let p = plan(&h, SegmentAlgo::Runs, n / mean, none);
        assert_eq!((p.lean, p.lean && p.pre), (lean, false), "mean {mean}");
    }
    for (mean, want) in [(16, false), (4096, true)] {
        let tune = SegmentTune {
            lean: Some(want),
            ..none
        };
        assert_eq!(plan(&h, SegmentAlgo::Runs, n / mean, tune).lean, want);
        assert!(!plan(&h, SegmentAlgo::Runs, n / mean, tune).pre || !want);
    }
    assert!(!plan(&cpu, SegmentAlgo::Runs, n / 16, none).lean);
    let forced_lean = SegmentTune {
        lean: Some(true),
        ..none
    };
    assert!(plan(&cpu, SegmentAlgo::Runs, n / 16, forced_lean).lean);
    assert!(!plan(&h, SegmentAlgo::Tiles, n / 16, forced_lean).lean);
    // tiles: float4 work-group pieces on the H200 (double2 for 8-byte reads), one element at
    // a time on CPUs unless vec=N; none where the body reads nothing at [i].
    assert_eq!(plan(&h, SegmentAlgo::Tiles, n / 65536, none).vec, 4);
    let f64_tiles = forced(&h, off, n / 65536, n, (SegmentAlgo::Tiles, 8, none)).unwrap();
    assert_eq!(f64_tiles.segment.unwrap().vec, 2);
    let no_reads = forced(&h, off, n / 65536, n, (SegmentAlgo::Tiles, 0, none)).unwrap();
    assert_eq!(no_reads.segment.unwrap().vec, 1);
    let auto = algo(&h, off, n / 65536, n);
    assert_eq!(auto, SegmentAlgo::Tiles);
    for (name, c) in fixtures::all() {
        if c.kind != DeviceKind::Gpu {
            assert_eq!(
                plan(&c, SegmentAlgo::Tiles, n / 65536, none).vec,
                1,
                "{name}"
            );
            let tune = SegmentTune {
                vec: Some(4),
                ..none
            };
            assert_eq!(
                plan(&c, SegmentAlgo::Tiles, n / 65536, tune).vec,
                4,
                "{name}"
            );
        }
    }
}

/// item and chunks on CPUs (decision 73): 16 accumulators and 64-bit indices from mean length
/// 192 on, one accumulator below it, on GPUs and for a forced `unroll=1`; Intel (sub-groups)
/// streams in work-groups of one.
#[test]
fn cpus_stream_long_segments_with_accumulators() {
    let n = 1u64 << 22;
    let tune = SegmentTune::default();
    let get = |c: &DeviceCaps, layout, segments, algo, tune: SegmentTune| {
        let p = forced(c, layout, segments, n, (algo, 4, tune)).unwrap();
        let s = p.segment.clone().unwrap();
        (s.unroll, p.wide_index, p.local)
    };
    let u = |len| SegmentLayout::Uniform { len };
    let off = SegmentLayout::Offsets;
    for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        let local = if c.sub_groups.is_some() { 1 } else { 64 };
        for a in [SegmentAlgo::Item, SegmentAlgo::Chunks] {
            assert_eq!(get(&c, u(192), n / 192, a, tune), (16, true, local));
            assert_eq!(get(&c, off, n / 4096, a, tune), (16, true, local));
            assert_eq!(get(&c, u(191), n / 191, a, tune).0, 1);
            assert_eq!(get(&c, off, n / 64, a, tune), (1, false, 64));
            let one = SegmentTune {
                unroll: Some(1),
                ..tune
            };
            assert_eq!(get(&c, u(4096), n / 4096, a, one), (1, false, 64));
        }
    }
    // GPUs: item without vector loads keeps one accumulator (its loop is unchanged).
    let h = fixtures::nvidia_h200();
    let p = forced(&h, off, n / 4096, n, (SegmentAlgo::Item, 4, tune)).unwrap();
    assert_eq!((p.segment.unwrap().unroll, p.wide_index), (1, false));
}
