//! Segmented and axis reductions: which plan runs a launch with one result per segment
//! ([`SegmentAlgo`]), chosen by segment length from the device's capabilities
//! ([`plan_segments`]); design/segments.md.
//!
//! The per-variable parts of the plan (accumulator, identity, the work-group tree) are the
//! ordinary planner's; this step decides the segment algorithm, the work-group size, the tile
//! or row-chunk size and the number of passes, and records why.

use super::model::Plan;
use super::segment_cpu::{
    aligned, block_width, blocks, folds, lone_work_item, panels, CPU_STREAM_MIN, PANEL_ROWS,
};
use super::segment_model::{Geometry, SegmentAlgo, SegmentLayout, SegmentPlan, SegmentRequest};
use super::segment_runs::{
    runs_checks, runs_lean, runs_local, runs_notes, runs_pre, runs_scan, runs_warp,
    runs_work_items, runs_wscan, warp_ranges, wscan_local,
};
use super::strategy::CrossAlgo;
use crate::caps::{DeviceCaps, DeviceKind};
use crate::error::{Error, Result};

/// Room for the longer segments of one tile (local memory, 8 bytes each).
pub(crate) const TILE_LONGS: u64 = 256;
/// Local memory of `tiles` beside the trees: the long-segment list and its count.
const TILES_LOCAL: u64 = TILE_LONGS * 8 + 4;

/// Chooses the segment algorithm and geometry, and rewrites `base` (the ordinary plan of the
/// same variables, forced to an extra pass) into the segmented plan.
/// Pure. A forced algorithm the layout cannot run is [`Error::Unsupported`].
/// `measured` is the device's measurement for this launch (`clreduce tune`'s segmented entry:
/// the algorithm and the reason with its figures), followed where nothing is forced and the
/// layout can run it.
pub fn plan_segments(
    caps: &DeviceCaps,
    mut base: Plan,
    req: &SegmentRequest,
    measured: Option<(SegmentAlgo, String)>,
) -> Result<Plan> {
    let segments = req.segments.max(1);
    let mean = req.elements / segments;
    let gpu = caps.kind == DeviceKind::Gpu;
    let cus = caps.compute_units.max(1) as u64;
    // Work-groups that keep the device busy: 8 per compute unit on a GPU, 4 on a CPU (its
    // compute units are threads that take work-groups one after another).
    let fill = cus * req.tune.groups_per_cu.unwrap_or(if gpu { 8 } else { 4 });
    // The device's measurement is followed where this layout can run the measured plan (a
    // forced plan, or one the layout cannot run, falls back to the rules).
    let runnable = |a: SegmentAlgo| {
        let forced = SegmentRequest {
            force: Some(a),
            ..*req
        };
        choose(caps, &forced, (mean, fill), false).is_ok()
    };
    // Exact sums per segment carry a superaccumulator in every accumulator: no staged plan,
    // work-groups whose trees fit the local memory, one accumulator per work-item.
    let exact = super::segment_exact::carries_exact(&base);
    let (algo, why) = match measured {
        Some((a, why)) if req.force.is_none() && runnable(a) => (a, why),
        _ => choose(caps, req, (mean, fill), exact)?,
    };
    let (algo, why) = if exact {
        super::segment_exact::exact_algo(caps, req, algo, why)?
    } else {
        (algo, why)
    };
    let (algo, why) = exact_keeps_columns(req, exact, (algo, why));
    let max_local = caps.max_work_group_size.max(1);
    let local = match (algo, req.tune.local) {
        (_, Some(l)) => l,
        // A full warp per segment at least on a GPU, at least 8 elements per work-item before
        // the tree (fewer barriers per element); more work-items only for longer segments.
        (SegmentAlgo::Group, _) if gpu => (mean / 8).next_power_of_two().clamp(32, 256) as usize,
        (SegmentAlgo::Group, _) => (mean / 8).next_power_of_two().clamp(8, 64) as usize,
        // merge: 128 work-items of 16 items each on GPUs (see merge()).
        (SegmentAlgo::Merge, _) if gpu => 128,
        // runs on GPUs: 128 work-items, 64 with the early loads (decisions 62, 78).
        (SegmentAlgo::Runs, _) if gpu => {
            let vectors = vec_width(caps, req, algo, false, 16) > 1;
            runs_work_items(caps, req, mean, vectors)
        }
        // staged uniform rows: 128 work-items on GPUs. H200, 2^28 f32, rows of 16 / 4 / 32:
        // 299.0-299.8 / 331.1-331.8 / 301.2-302.5 us against 303.1-304.9 / 337.0-340.9 /
        // 304.1-304.9 with 256, in two runs (decision 58).
        (SegmentAlgo::Staged, _) if gpu && matches!(req.layout, SegmentLayout::Uniform { .. }) => {
            128
        }
        _ if gpu => 256,
        // item and chunks streaming with accumulators where work-items are SIMD lanes (Intel):
        // work-groups of one, so that the work-item's own loop is vectorized (decision 73).
        (a, _) if lone_work_item(caps, req, a, exact, mean) => 1,
        _ => 64,
    }
    .min(max_local);
    let local = if exact {
        super::segment_exact::fit_local(caps, &base, local, TILES_LOCAL)
    } else {
        local
    };
    let (algo, why) = super::segment_exact::stripes_fit(req, exact, local, (algo, why));
    let acc_bytes: usize = base.vars.iter().map(|v| v.acc_bytes).sum();
    let g = geometry(caps, req, (algo, exact), (local, acc_bytes), segments, fill)?;
    let passes = g.passes;
    for v in &mut base.vars {
        // The work-group step is the ordinary plan's (every one of them runs with any of the
        // segment plans' work-group sizes); one more local slot than work-items covers each.
        v.cross = CrossAlgo::ExtraPass;
        v.local_slots = local + 1;
        v.group_reason = format!("per segment: {}", v.group_reason);
        v.cross_reason = cross_reason(algo, passes);
        v.deterministic = true;
    }
    let acc: usize = base.vars.iter().map(|v| v.acc_bytes * (local + 1)).sum();
    let stage: usize = base.vars.iter().map(|v| v.acc_bytes).sum::<usize>()
        * stage_slots(local, g.per_item) as usize;
    base.local_bytes = acc as u64
        + match algo {
            SegmentAlgo::Tiles => TILES_LOCAL,
            SegmentAlgo::Staged if req.layout == SegmentLayout::Offsets => {
                stage as u64 + 4 * (local as u64) * (g.per_item + 1) + 4
            }
            SegmentAlgo::Staged => stage as u64,
            SegmentAlgo::Merge => stage as u64 + merge_local(local, g.per_item),
            SegmentAlgo::Runs if g.wscan => wscan_local(local, g.warp, g.per_item, acc_bytes),
            SegmentAlgo::Runs => runs_local(local, g.per_item, g.lean.then_some(acc_bytes)),
            _ => 0,
        };
    if base.local_bytes > caps.local_mem_size {
        return Err(Error::LocalMemory {
            local,
            need: base.local_bytes,
            have: caps.local_mem_size,
            detail: "segmented: one tree per variable".into(),
            device: caps.label(),
        });
    }
    let vec = vec_width(caps, req, algo, exact, g.per_item);
    let unroll = match algo {
        SegmentAlgo::Blocks => block_width(req, exact, folds(caps)),
        _ => loop_unroll(caps, req, algo, (gpu, exact, mean), vec, base.unroll),
    };
    let g = match algo {
        SegmentAlgo::Item if vec > 1 => item_vec_geometry(local, segments, vec, unroll),
        _ => g,
    };
    // blocks: 64-bit indices, so that the compiler sees a row's block as consecutive addresses
    // (a 32-bit index may wrap) and loads it as vectors; with 32-bit ones PoCL turned the 16
    // loads of an f32 row into two gathers (decision 68).
    base.wide_index |= matches!(algo, SegmentAlgo::Blocks | SegmentAlgo::Panels)
        || (matches!(
            algo,
            SegmentAlgo::Item | SegmentAlgo::Chunks | SegmentAlgo::Aligned
        ) && !gpu
            && unroll > 1);
    base.local = local;
    base.groups = g.groups;
    base.passes = passes;
    base.unroll = 1;
    base.vec = vec as usize;
    base.deterministic = true;
    base.items_per_work_item = match algo {
        SegmentAlgo::Item => mean.max(1),
        _ => (req.elements.div_ceil(g.groups * local as u64)).max(1),
    };
    base.geometry_reason = g.reason;
    let scan = algo == SegmentAlgo::Runs && g.warp == 0 && runs_scan(req, mean)
        || algo == SegmentAlgo::Aligned
            && super::segment_cpu::aligned_scan(caps, req, mean, exact).is_some();
    let pre = algo == SegmentAlgo::Runs && vec > 1 && runs_pre(req, mean, g.lean, g.warp);
    let checks = algo == SegmentAlgo::Runs
        && vec > 1
        && runs_checks(caps, req, (g.lean, g.warp > 0, g.wscan), (pre, mean));
    base.geometry_reason += &runs_notes(
        scan && algo == SegmentAlgo::Runs,
        g.lean,
        pre,
        checks,
        (g.warp, g.wscan),
    );
    base.segment = Some(SegmentPlan {
        layout: req.layout,
        segments: req.segments,
        mean_len: mean,
        algo,
        tile: g.tile,
        short: g.short,
        per_item: g.per_item,
        lanes: g.lanes,
        unroll,
        vec,
        scan,
        pre,
        lean: g.lean,
        checks,
        warp: g.warp,
        wscan: g.wscan,
        index_in_segment: vec![false; base.vars.len()],
        span_idiom: false,
        reason: why,
    });
    Ok(base)
}

/// The segmented plan's cross-group reason: partials combined by a second pass, or each
/// segment written where it is reduced.
fn cross_reason(algo: SegmentAlgo, passes: usize) -> String {
    match algo {
        SegmentAlgo::Tiles
        | SegmentAlgo::Group
        | SegmentAlgo::Columns
        | SegmentAlgo::Chunks
        | SegmentAlgo::Stripes
        | SegmentAlgo::Merge
        | SegmentAlgo::Runs
        | SegmentAlgo::Blocks
        | SegmentAlgo::Panels
            if passes > 1 =>
        {
            "segmented: partials per piece, combined in a fixed order by a second pass".into()
        }
        _ => {
            "segmented: each segment written by the work-item or work-group that reduces it".into()
        }
    }
}

/// Exact sums keep `columns` by the rules: `blocks` and `panels` would hold a superaccumulator
/// per column of a block or panel in private memory (forced, `blocks` runs blocks of one
/// column; `panels` is refused).
fn exact_keeps_columns(
    req: &SegmentRequest,
    exact: bool,
    (algo, why): (SegmentAlgo, String),
) -> (SegmentAlgo, String) {
    match algo {
        SegmentAlgo::Blocks | SegmentAlgo::Panels if exact && req.force.is_none() => (
            SegmentAlgo::Columns,
            format!("exact sums: {algo} would keep a superaccumulator per column of a {}, so a work-item per column ({why})", if algo == SegmentAlgo::Panels { "panel" } else { "block" }),
        ),
        _ => (algo, why),
    }
}

/// Accumulators per work-item in the strided loops (`SegmentPlan::unroll`), or `item`'s rows
/// per work-item with vector loads; `base_unroll` is the plain plan's.
fn loop_unroll(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    algo: SegmentAlgo,
    (gpu, exact, mean): (bool, bool, u64),
    vec: u64,
    base_unroll: usize,
) -> u64 {
    // Loads in flight per work-item in the strided loops: the plain plan's unroll on a GPU
    // (a strided loop with one accumulator waits for each load before the next), 1 on CPUs,
    // whose rules were measured that way.
    // Columns and stripes keep 4 on GPUs. H200, 2^28 f32: stripes on 16..256 columns 260-262
    // us with 4 against 295-297 with 8 (the plain plan's) and 306-308 with 2; columns on
    // 256 x 2^20 255 us with 4 against 260 with 8 (torch 258), on 16384 x 16384 (16 chunks)
    // 260 against 256 (design/bench/2026-11-24-h200-session10-segcols.txt).
    req.tune.unroll.unwrap_or(match algo {
        // Exact sums keep one accumulator (a superaccumulator each, decision 55).
        _ if exact => 1,
        // panels: rows per step of the walk (decision 91).
        SegmentAlgo::Panels => PANEL_ROWS,
        // aligned's scan walk: its chains (decision 87), forced on a GPU too.
        SegmentAlgo::Aligned => match super::segment_cpu::aligned_scan(caps, req, mean, exact) {
            Some(chains) => chains,
            None if gpu => 1,
            None => super::segment_cpu::aligned_unroll(caps, req, mean, exact),
        },
        // item with vector loads: rows per work-item and step, 32 bytes of rows (1 to 4). H200,
        // 2^28 f32, rows of 16: 266 us with 1 row, 327 with 2, 651 with 4; rows of 8: 277 with
        // 1 or 2; rows of 4: 339, 307, 312 and 314 us with 1, 2, 4 and 8 rows; rows of 2: 554,
        // 407 and 376 with 1, 2 and 4 (decision 62).
        SegmentAlgo::Item if vec > 1 => {
            let row_bytes = match req.layout {
                SegmentLayout::Uniform { len } => len * req.read_bytes.max(1),
                _ => 32,
            };
            (32 / row_bytes.max(1)).clamp(1, 4)
        }
        // item without vector loads: one accumulator on GPUs (a work-item per short segment);
        // on CPUs the accumulators within a segment (decision 73).
        SegmentAlgo::Item | SegmentAlgo::Chunks if gpu => 1,
        SegmentAlgo::Item | SegmentAlgo::Chunks if mean >= CPU_STREAM_MIN => 16,
        SegmentAlgo::Stripes | SegmentAlgo::Columns if gpu => 4,
        _ if gpu => base_unroll.max(1) as u64,
        _ => 1,
    })
}

/// Consecutive elements loaded at once (`SegmentPlan::vec`) by `item` on uniform rows, by
/// `runs` and by `tiles`' work-group pieces (decision 65): 16 bytes on GPUs (a float4 of f32,
/// a double2 of f64) where the body reads its buffers at `[i]` (`SegmentRequest::read_bytes`),
/// halved until it divides the row length (the run of `per_item` elements; tiles load the
/// unaligned ends of a piece one element at a time); `vec=N` overrides; 1 elsewhere (CPUs,
/// exact sums, other plans and layouts). H200, 2^28 f32, CSR of mean 65536 under tiles: 293.3
/// us with float4 loads against 328.4 one at a time (313.7 with float2).
fn vec_width(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    algo: SegmentAlgo,
    exact: bool,
    per_item: u64,
) -> u64 {
    let len = match (algo, req.layout) {
        (SegmentAlgo::Item, SegmentLayout::Uniform { len }) => len,
        (SegmentAlgo::Runs, _) => per_item.max(1),
        // tiles' work-group pieces: any length (the unaligned ends one element at a time).
        (SegmentAlgo::Tiles, _) => 8,
        _ => return 1,
    };
    if exact || req.read_bytes == 0 {
        return 1;
    }
    let auto = match caps.kind {
        DeviceKind::Gpu => (16 / req.read_bytes).clamp(1, 8),
        _ => 1,
    };
    let mut w = req.tune.vec.unwrap_or(auto).clamp(1, 8);
    while w > 1 && !len.is_multiple_of(w) {
        w /= 2;
    }
    w
}

/// `item` with vector loads: `unroll` rows per work-item (rows `e, e + G, ...`, G the
/// work-items of the launch, so that a warp's loads of each row cover consecutive rows), one
/// step per work-item.
fn item_vec_geometry(local: usize, segments: u64, vec: u64, unroll: u64) -> Geometry {
    let groups = segments.div_ceil(local as u64 * unroll).max(1);
    Geometry::new(
        groups,
        1,
        0,
        format!("{groups} work-groups of {local}, a work-item per row ({unroll} rows per work-item, a warp's rows consecutive), {vec} consecutive elements loaded at once"),
    )
}

/// Local slots of a `staged` stage of `local * per_item` elements: one more every 32 (the
/// skew that keeps a work-item per row off a single bank), and one spare.
pub(crate) fn stage_slots(local: usize, per_item: u64) -> u64 {
    let e = local as u64 * per_item;
    e + e / 32 + 1
}

/// The work-groups, passes, tile and reason of `algo` with work-groups of `local`.
fn geometry(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (algo, exact): (SegmentAlgo, bool),
    (local, acc_bytes): (usize, usize),
    segments: u64,
    fill: u64,
) -> Result<Geometry> {
    let l = local as u64;
    let unsupported = |missing: String| Error::Unsupported {
        what: format!("segment plan {algo}"),
        missing,
        device: caps.label(),
    };
    Ok(match algo {
        SegmentAlgo::Item => {
            let groups = segments.div_ceil(l);
            Geometry::new(
                groups,
                1,
                0,
                format!("{groups} work-groups of {local}, one segment per work-item"),
            )
        }
        SegmentAlgo::Group => {
            // Fewer segments than the device's work-groups: `split` work-groups per segment
            // (two rounds of `fill` in all), each the plain sum's grid-stride loop over its
            // share of the segment, their partials combined in order by a second pass; one
            // pass otherwise. H200, 2^28 f32: 256 rows 253.3 us with 8 per row (2048
            // work-groups) against 256.7 with 4 (1024), 313.0 with 2; one row 252.9 with 2112
            // work-groups against 256.4 with 1056; tiles 275-276 (decision 58).
            let split = req
                .tune
                .split
                .unwrap_or(if segments < fill {
                    2 * fill / segments
                } else {
                    1
                })
                .max(1);
            if split > 1 {
                let groups = (segments * split).min(fill * 4);
                return Ok(Geometry::new(groups, 2, split, format!("{split} work-groups of {local} per segment ({groups} work-groups), each a grid-stride loop over its share of the segment as in the plain sum; the partials combined in order by a second pass")));
            }
            let groups = segments.min(fill * 4);
            Geometry::new(
                groups,
                1,
                1,
                format!("{groups} work-groups of {local} taking segments in turn"),
            )
        }
        SegmentAlgo::Staged => staged(caps, req, (local, acc_bytes), segments, fill)?,
        SegmentAlgo::Merge => merge(caps, req, (local, acc_bytes), segments, fill)?,
        SegmentAlgo::Runs => runs(caps, req, (local, acc_bytes), segments, fill)?,
        SegmentAlgo::Lanes => {
            if matches!(req.layout, SegmentLayout::Columns { .. }) {
                return Err(unsupported(
                    "lanes runs rows and CSR segments, not columns".into(),
                ));
            }
            let mean = req.elements / segments;
            let lanes = req
                .tune
                .lanes
                // At least 16 elements per lane: H200, rows 2^20 x 256 (2^28 f32): 16 lanes
                // 273 us, 8 lanes 274 us, 32 lanes 306 us, 64 lanes 428 us
                // (design/bench/2026-11-24-h200-segperf.txt).
                .unwrap_or((mean / 16).next_power_of_two().clamp(1, 32))
                .min(l);
            let per = l / lanes;
            let rounds = segments.div_ceil(per);
            let groups = rounds.min(fill * 4);
            let mut g = Geometry::new(groups, 1, 0, format!("{lanes} work-items per segment, {per} segments per work-group of {local} at a time, {groups} work-groups"));
            g.lanes = lanes;
            g
        }
        SegmentAlgo::Stripes => {
            let SegmentLayout::Columns { rows, cols } = req.layout else {
                return Err(unsupported(
                    "stripes runs Axis::First (columns) only".into(),
                ));
            };
            if cols > l {
                return Err(unsupported(format!(
                    "{cols} columns: stripes needs at most a work-group ({local}) of them"
                )));
            }
            let act = l / cols * cols;
            // At least 16 rows per work-item.
            let groups = fill.min(rows.div_ceil(16 * (act / cols)));
            Geometry::new(groups, 2, groups.max(1), format!("{groups} work-groups of {local}, {act} of them active: work-item t keeps column t % {cols} over a grid stride that is a multiple of {cols} (coalesced); the work-group combines each column, a second pass the work-groups"))
        }
        SegmentAlgo::Tiles => {
            // Tiles: at least 16 elements per work-item, and no more tiles than 4 rounds of
            // the device's work-groups need; each tile lists at most TILE_LONGS long segments.
            // Tiles per work-group: 2 on GPUs (H200, CSR mean 65536: 326 us against 335 with
            // 4, 353 with 1, 360 with 8; decision 58), 4 on CPUs.
            let rounds =
                req.tune
                    .rounds
                    .unwrap_or(if caps.kind == DeviceKind::Gpu { 2 } else { 4 });
            let per_group = req.elements.div_ceil(fill * rounds).max(1);
            let tile = per_group.next_multiple_of(l).max(16 * l);
            let short = (tile / TILE_LONGS).max(32);
            let tiles = req.elements.div_ceil(tile).max(1);
            let groups = tiles.min(fill);
            let mut g = Geometry::new(groups, 2, tile, format!("{tiles} tiles of {tile} elements on {groups} work-groups of {local}; segments up to {short} long to one work-item, longer ones to the work-group, tile-crossing pieces finished by a second pass"));
            g.short = short;
            g
        }
        SegmentAlgo::Chunks => {
            // One chunk per work-item of `fill` work-groups, at least 16 elements each.
            let tile = req.elements.div_ceil(fill * l).max(16);
            let tiles = req.elements.div_ceil(tile).max(1);
            let groups = tiles.div_ceil(l);
            Geometry::new(groups, 2, tile, format!("{tiles} chunks of {tile} elements, one per work-item of {groups} work-groups of {local}; chunk-crossing pieces finished by a second pass"))
        }
        SegmentAlgo::Blocks => blocks(caps, req, (local, exact), fill)?,
        SegmentAlgo::Aligned => aligned(caps, req, (local, exact), fill)?,
        SegmentAlgo::Panels => panels(caps, req, (local, exact), fill)?,
        SegmentAlgo::Columns => {
            let SegmentLayout::Columns { rows, cols } = req.layout else {
                unreachable!("choose() gives columns for the columns layout only")
            };
            let blocks = cols.div_ceil(l).max(1);
            // Split the rows only when the columns alone leave the device idle, into whole
            // rounds of `fill` work-groups: `k` rounds, enough that whole chunks per block
            // leave at most an eighth of them idle, at least 16 rows per chunk. Work-groups
            // past a round run alone at the end: H200, 16384 x 16384 f32 (64 blocks), 17
            // chunks (1088 work-groups, 32 past the 1056 of a round) 348-475 us, 16 chunks
            // (1024) 256-260 us, 32 or 64 chunks 255-261 us (decision 53).
            let chunks = match req.tune.chunks {
                Some(c) => c.min(rows),
                None if blocks >= fill => 1,
                None => {
                    let k = (8 * blocks).div_ceil(fill);
                    (k * fill / blocks).min(rows.div_ceil(16)).max(1)
                }
            };
            let chunk_rows = rows.div_ceil(chunks).max(1);
            let chunks = rows.div_ceil(chunk_rows).max(1);
            // At most 8 rounds with row chunks (k <= 8), 4 of column blocks alone.
            let groups = (blocks * chunks).min(fill * if blocks >= fill { 4 } else { 8 });
            let passes = if chunks > 1 { 2 } else { 1 };
            Geometry::new(groups, passes, chunk_rows, format!("{blocks} blocks of {local} columns x {chunks} chunks of {chunk_rows} rows on {groups} work-groups{}", if passes > 1 { ", chunks combined in order by a second pass" } else { "" }))
        }
    })
}

/// `staged`: uniform rows (a stage of whole rows) or CSR offsets (stages of `local *
/// per_item` elements, pieces cut by stage boundaries finished by a second pass).
fn staged(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (local, acc_bytes): (usize, usize),
    segments: u64,
    fill: u64,
) -> Result<Geometry> {
    let l = local as u64;
    let unsupported = |missing: String| Error::Unsupported {
        what: "segment plan staged".into(),
        missing,
        device: caps.label(),
    };
    let len = match req.layout {
        SegmentLayout::Uniform { len } => len,
        SegmentLayout::Offsets if segments < u32::MAX as u64 => 1,
        SegmentLayout::Offsets => {
            return Err(unsupported("2^32 or more CSR segments".into()));
        }
        SegmentLayout::Columns { .. } => {
            return Err(unsupported(
                "staged runs rows and CSR segments, not columns".into(),
            ));
        }
    };
    let offsets = req.layout == SegmentLayout::Offsets;
    // Enough elements per work-item that a stage holds whole rows; 8 by default (a stage of
    // 2048 elements with 256 work-items), fewer where the variables' accumulators (and for
    // CSR the segment marks) would not fit the local memory beside their trees.
    let tree = (acc_bytes * (local + 1)) as u64;
    let room = caps.local_mem_size.saturating_sub(tree);
    let need = |e: u64| {
        stage_slots(local, e) * acc_bytes as u64 + if offsets { 4 * l * e + 4 * l + 4 } else { 0 }
    };
    let fits = (1..=64u64).rev().find(|&e| need(e) <= room).unwrap_or(0);
    let per_item = req
        .tune
        .per_item
        .unwrap_or(8)
        .min(fits)
        .max(len.div_ceil(l));
    if per_item > 64 || per_item > fits {
        return Err(unsupported(format!(
            "rows of {len} do not fit a stage of {local} x {} elements",
            fits.min(64)
        )));
    }
    let mut g = if offsets {
        let tile = l * per_item;
        let tiles = req.elements.div_ceil(tile).max(1);
        let groups = tiles.min(fill * 4);
        Geometry::new(groups, 2, tile, format!("{tiles} stages of {tile} elements ({per_item} per work-item, read coalesced into local memory), consecutive stages per work-group on {groups} work-groups of {local}; each work-item combines {per_item} consecutive elements of the stage, segments that cross work-items are folded by the work-item where they start, those that cross stages by a second pass"))
    } else {
        let rows = l * per_item / len;
        let stages = segments.div_ceil(rows);
        let groups = stages.min(fill * 4);
        Geometry::new(groups, 1, rows, format!("{stages} stages of {rows} rows ({per_item} elements per work-item, read coalesced into local memory) on {groups} work-groups of {local}; a work-item per row combines it in index order"))
    };
    g.per_item = per_item;
    Ok(g)
}

/// `merge`'s local memory beside the stage and the trees: the tile's offsets (4 bytes per
/// item and one), the splits of a batch of tiles (8 bytes per work-item and one) and the scan's
/// flags (4 bytes per work-item).
fn merge_local(local: usize, per_item: u64) -> u64 {
    let l = local as u64;
    4 * (l * per_item + 1) + 8 * (l + 1) + 4 * l
}

/// `merge`: CSR offsets only; tiles of `local * per_item` items (elements and segment ends),
/// consecutive tiles per work-group, the pieces cut between tiles finished by a second pass.
fn merge(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (local, acc_bytes): (usize, usize),
    segments: u64,
    fill: u64,
) -> Result<Geometry> {
    if req.layout != SegmentLayout::Offsets {
        return Err(Error::Unsupported {
            what: "segment plan merge".into(),
            missing: "merge runs CSR offsets only".into(),
            device: caps.label(),
        });
    }
    let l = local as u64;
    let tree = (acc_bytes * (local + 1)) as u64;
    let room = caps.local_mem_size.saturating_sub(tree);
    let need = |e: u64| stage_slots(local, e) * acc_bytes as u64 + merge_local(local, e);
    let fits = (1..=64u64).rev().find(|&e| need(e) <= room).unwrap_or(0);
    // Items per work-item: 16 on GPUs (tiles of 2048 items with 128 work-items), 8 on CPUs.
    // H200, 2^28 f32, CSR means 16 and 256: 128 x 16 took 1038 and 724 us against 1116 and
    // 807 for 256 x 8, 1113 and 793 for 256 x 16, 1547-1787 and 1083-1303 for 256 x 4 or
    // 32, 1560 and 1141 for 512 x 8 (design/bench/2026-11-24-h200-session10-segcsr.txt, run 1).
    let gpu = caps.kind == DeviceKind::Gpu;
    let per_item = req
        .tune
        .per_item
        .unwrap_or(if gpu { 16 } else { 8 })
        .min(fits);
    if per_item == 0 {
        return Err(Error::Unsupported {
            what: "segment plan merge".into(),
            missing: format!("a tile of {local} items in local memory"),
            device: caps.label(),
        });
    }
    let tile = l * per_item;
    let tiles = (req.elements + segments).div_ceil(tile).max(1);
    let groups = tiles.min(fill * 4);
    let mut g = Geometry::new(groups, 2, tile, format!("{tiles} tiles of {tile} items (elements and segment ends, merge path; {per_item} per work-item, values read coalesced into local memory), consecutive tiles per work-group on {groups} work-groups of {local}; a segmented scan joins the pieces cut between work-items, a second pass those cut between tiles"));
    g.per_item = per_item;
    Ok(g)
}

/// `runs`: CSR offsets only; tiles of `local * per_item` consecutive elements (`per_item` a
/// power of two up to 32: a run's starts are in one word of the mask), consecutive tiles per
/// work-group, the pieces cut between tiles finished by a second pass.
fn runs(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (local, acc_bytes): (usize, usize),
    segments: u64,
    fill: u64,
) -> Result<Geometry> {
    let unsupported = |missing: String| Error::Unsupported {
        what: "segment plan runs".into(),
        missing,
        device: caps.label(),
    };
    if req.layout != SegmentLayout::Offsets {
        return Err(unsupported("runs runs CSR offsets only".into()));
    }
    if segments >= u32::MAX as u64 {
        return Err(unsupported("2^32 or more CSR segments".into()));
    }
    let l = local as u64;
    let room = caps
        .local_mem_size
        .saturating_sub((acc_bytes * (local + 1)) as u64);
    // Elements per run: 64 bytes of the body's reads at [i] (16 f32: four float4 loads; 8 f64),
    // 16 where it reads none; a power of two (the largest one at most the request), so a run's
    // starts lie in one word of the mask. H200, 2^28 f32, CSR means 16 / 256: 16 elements
    // 547 / 512 us against 799 / 823 with 8 and 986 / 829 with 32 (decision 62).
    let want = req.tune.per_item.unwrap_or(match req.read_bytes {
        0 => 16,
        b => (64 / b).clamp(4, 32),
    });
    // The lean kernel where the rule takes it and the run length it would have without fits
    // (its pieces take the accumulators' bytes per element).
    let fits = |lean: bool| {
        (1..=32u64)
            .rev()
            .find(|&e| runs_local(local, e, lean.then_some(acc_bytes)) <= room)
            .unwrap_or(0)
    };
    // The warp kernel (decision 81) runs the lean kernel's walk and local memory.
    let warp = runs_warp(caps, req, req.elements / segments.max(1), local);
    let lean = warp > 0
        || runs_lean(caps, req, req.elements / segments.max(1), acc_bytes)
            && fits(true) >= want.min(fits(false));
    let wscan = warp > 0 && runs_wscan(caps, req, req.elements / segments.max(1));
    let per_item = if wscan {
        let fits = (1..=32u64)
            .rev()
            .find(|&e| wscan_local(local, warp, e, acc_bytes) <= room)
            .unwrap_or(0);
        want.min(fits)
    } else {
        want.min(fits(lean))
    };
    let per_item = match per_item {
        0 => 0,
        e => 1 << e.ilog2(),
    };
    if per_item == 0 {
        return Err(unsupported(format!(
            "a tile of {local} runs in local memory"
        )));
    }
    if warp > 0 {
        let (tile, groups) = warp_ranges(req.elements, (l, warp, per_item), fill * 4);
        let mut g = Geometry::new(groups, 2, tile, format!("ranges of {tile} elements per warp of {warp} (sub-tiles of {}), runs of {per_item} per work-item, {groups} work-groups of {local}; a segment cut between ranges joined by a second pass", warp * per_item));
        g.per_item = per_item;
        (g.lean, g.warp, g.wscan) = (!wscan, warp, wscan);
        return Ok(g);
    }
    let tile = l * per_item;
    let tiles = req.elements.div_ceil(tile).max(1);
    let groups = tiles.min(fill * 4);
    let mut g = Geometry::new(groups, 2, tile, format!("{tiles} tiles of {tile} elements, runs of {per_item} per work-item combined in registers (segment starts from a local bit mask), consecutive tiles per work-group on {groups} work-groups of {local}; a segment cut between runs joined by the work-item where it starts, one cut between tiles by a second pass"));
    g.per_item = per_item;
    g.lean = lean;
    Ok(g)
}

/// A forced plan: refused where it cannot run the layout (columns against rows and CSR).
fn check_forced(
    caps: &DeviceCaps,
    a: SegmentAlgo,
    columns: bool,
    mean: u64,
) -> Result<(SegmentAlgo, String)> {
    let for_columns = matches!(
        a,
        SegmentAlgo::Columns | SegmentAlgo::Stripes | SegmentAlgo::Blocks | SegmentAlgo::Panels
    );
    if columns != for_columns {
        return Err(Error::Unsupported {
            what: format!("segment plan {a}"),
            missing: if columns {
                "Axis::First (column sums) runs only the columns, stripes, blocks and panels plans"
                    .into()
            } else {
                "the columns, stripes, blocks and panels plans run only Axis::First".into()
            },
            device: caps.label(),
        });
    }
    Ok((a, format!("forced (mean segment length {mean})")))
}

/// The algorithm for a request, and why.
fn choose(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (mean, fill): (u64, u64),
    exact: bool,
) -> Result<(SegmentAlgo, String)> {
    let columns = matches!(req.layout, SegmentLayout::Columns { .. });
    let gpu = caps.kind == DeviceKind::Gpu;
    if let Some(a) = req.force {
        return check_forced(caps, a, columns, mean);
    }
    if let SegmentLayout::Columns { cols, .. } = req.layout {
        return Ok(choose_columns(caps, req, cols));
    }
    if !gpu {
        return Ok(super::segment_cpu::choose(caps, req, (mean, fill), exact));
    }
    let offsets = req.layout == SegmentLayout::Offsets;
    let uniform = matches!(req.layout, SegmentLayout::Uniform { .. });
    // Vector loads on short rows: a work-item per row where a row is at most 64 bytes of the
    // body's reads at [i] and at least 2 elements per load (decision 62).
    let row_vec = match req.layout {
        SegmentLayout::Uniform { len } if gpu && len * req.read_bytes <= 64 => {
            vec_width(caps, req, SegmentAlgo::Item, false, 0)
        }
        _ => 1,
    };
    Ok(if offsets && gpu && mean <= 16384 {
        // H200, 2^28 f32, heavy-tailed CSR (decision 62, design/bench/
        // 2026-11-25-h200-session12-segfast.txt, round 2): runs 548, 444, 386, 356 and 340 us
        // at means 16, 256, 1024, 4096 and 16384 against merge's 1041 and 728 at 16 and 256
        // and tiles' 552, 455 and 369 at 1024, 4096 and 16384; at mean 65536 tiles won (322
        // us against 331).
        (
            SegmentAlgo::Runs,
            format!("CSR offsets of mean length {mean} <= 16384 on a GPU: fixed runs of elements per work-item in registers, read {} at a time, segment starts from a local bit mask, so an element costs a load share, an add and a bit test whatever the lengths (H200, mean 16: 1.9x faster than merge, 2.6x than tiles)", vec_width(caps, req, SegmentAlgo::Runs, false, 16)),
        )
    } else if offsets && gpu {
        // H200, 2^28 f32, CSR of mean 16 (heavy-tailed): tiles 1428 us, a work-item per
        // segment 2863 us (design/bench/2026-11-24-h200-segment-first.txt).
        (
            SegmentAlgo::Tiles,
            format!("CSR offsets of mean length {mean} on a GPU: lengths live on the device and may be heavy-tailed, so fixed tiles keep the work balanced (H200, mean 16: tiles 2.0x faster than a work-item per segment)"),
        )
    } else if gpu && uniform && mean <= 32 && req.segments >= fill && row_vec > 1 {
        // H200, 2^28 f32 (decision 62): rows of 16 263.5 us against staged's 297.8, rows of
        // 4 307.1 against 330.0, of 8 276.7 against 303.5, of 2 375.7 against 396.1; i32 the
        // same; f64 rows of 4 310.0 against 320.9. Rows of 128 bytes lost (f32 rows of 32:
        // 316.9 against 300.7; f64 rows of 16: 320.5 against 271.4): a warp's load then
        // touches 32 lines.
        (
            SegmentAlgo::Item,
            format!("{} rows of {mean} <= 64 bytes on a GPU, the body reading at [i]: a work-item per row loading {row_vec} elements at once, a warp's rows consecutive", req.segments),
        )
    } else if gpu && uniform && mean <= 32 && req.segments >= fill {
        (
            SegmentAlgo::Staged,
            format!("{} rows of {mean} <= 32 on a GPU: a work-item per row would read {mean} elements apart, so work-groups stage whole rows in local memory with coalesced reads", req.segments),
        )
    } else if mean <= 16 && req.segments >= fill {
        (
            SegmentAlgo::Item,
            format!(
                "{} segments of mean length {mean} <= 16: a work-item per segment",
                req.segments
            ),
        )
    } else if gpu && req.segments >= fill && mean <= 1024 {
        (
            SegmentAlgo::Lanes,
            format!("{} segments of mean length {mean} <= 1024 on a GPU: a few work-items per segment and several segments per work-group (a work-group per segment would be too small to fill the device)", req.segments),
        )
    } else if gpu && req.segments >= fill && (mean <= 1 << 16 || uniform) {
        (
            SegmentAlgo::Group,
            format!("{} segments >= {fill} resident work-groups, mean length {mean}: a work-group per segment", req.segments),
        )
    } else if gpu && uniform {
        // H200, 2^28 f32: 256 rows 253 us, one row 253 us, 16 rows 252 us (1.02-1.03x the
        // plain sum) against 274-278 us for tiles (decision 58).
        let split = req
            .tune
            .split
            .unwrap_or(2 * fill / req.segments.max(1))
            .max(1);
        (
            SegmentAlgo::Group,
            format!("{} uniform segment(s) of {mean}, fewer than {fill} work-groups' worth, on a GPU: {split} work-groups per segment, each the plain sum's grid-stride loop over its share, a second pass per segment (1.02-1.04x the plain sum on the H200; tiles 1.11x)", req.segments),
        )
    } else {
        (
            SegmentAlgo::Tiles,
            format!("{} segment(s) of mean length {mean}, fewer than {fill} work-groups' worth or very long: several work-groups per segment (tiles)", req.segments),
        )
    })
}

/// The plan of a column sum (`Axis::First`) when none is forced: `stripes` up to a work-group of
/// columns and `columns` beyond on GPUs; `panels` on CPUs (decision 91).
fn choose_columns(caps: &DeviceCaps, req: &SegmentRequest, cols: u64) -> (SegmentAlgo, String) {
    let gpu = caps.kind == DeviceKind::Gpu;
    // Stripes up to a work-group of columns: H200, 2^28 f32, 16, 64, 128 and 256 columns:
    // stripes 260-262 us, columns 1688, 499, 346 and 297 us (a block of 256 columns
    // idles most work-items below 256; at 256 its second pass folds 1056 chunks per
    // column with one work-item each; decision 53).
    let reach = req
        .tune
        .local
        .unwrap_or(256)
        .min(caps.max_work_group_size.max(1)) as u64;
    if gpu && cols <= reach {
        (
            SegmentAlgo::Stripes,
            format!("Axis::First with {cols} <= {reach} columns (a work-group) on a GPU: a work-item per column would leave work-items idle or fold many row chunks in its second pass, so every work-item keeps one column of a grid stride"),
        )
    } else if !gpu {
        // CPUs (decision 91): a work-item per panel of 4 KiB of a row (or of several whole
        // rows), its partial column sums in private memory. 2^22 f32, alternating rounds
        // (design/bench/2026-11-25-cpu-session20-cols.txt): Intel 0.5-1.0x the plain sum at 1
        // to 16384 columns against blocks' 2.5-16x (columns' 6.8-16x at 16); PoCL 0.58-0.81x
        // against blocks' 0.64-2.2x (even at 1 to 16 columns).
        (
            SegmentAlgo::Panels,
            format!("Axis::First with {cols} columns on a CPU: each work-item (a work-group of one) walks a chunk of rows for a panel of 4 KiB of contiguous columns (or of whole rows where a row is shorter), adding each row's panel into private partial column sums in a loop the compiler vectorizes (2^22 f32: Intel 0.5-1.0x the plain sum, 2.5-16x faster than blocks; PoCL 0.6-0.8x, up to 3.6x faster than blocks)"),
        )
    } else {
        (
            SegmentAlgo::Columns,
            "Axis::First: a work-item per column keeps reads coalesced".into(),
        )
    }
}

#[cfg(test)]
#[path = "segment_tests.rs"]
pub(super) mod tests;
