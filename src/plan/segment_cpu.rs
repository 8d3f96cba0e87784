//! The CPU side of the segment planner (design/segments.md, decisions 66, 68 and 73): which
//! plan a CPU runs a segmented launch with (rows and CSR offsets; column sums are
//! `choose_columns`'), the work-group size of its streaming plans, and the `blocks` geometry.
//! Pure functions of the capabilities and the request, as the rest of `plan`.

use super::segment_model::{Geometry, SegmentAlgo, SegmentLayout, SegmentRequest};
use crate::caps::{DeviceCaps, DeviceKind};
use crate::error::{Error, Result};

/// The algorithm for a CPU's rows or CSR offsets when none is forced (not columns), and why.
/// CPUs whose compiler runs work-items as SIMD lanes (sub-groups: Intel's runtime) want
/// neighbouring work-items on neighbouring elements, or work-groups of one that stream; those
/// whose work-items are loops (PoCL, Oclgrind) want each work-item to stream (decision 66).
pub(super) fn choose(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (mean, fill): (u64, u64),
    exact: bool,
) -> (SegmentAlgo, String) {
    if let Some(short) = choose_short(caps, req, (mean, fill), exact) {
        return short;
    }
    let offsets = req.layout == SegmentLayout::Offsets;
    let uniform = matches!(req.layout, SegmentLayout::Uniform { .. });
    if caps.sub_groups.is_some() && mean >= CPU_STREAM_MIN {
        // Intel, 2^22 f32 (decision 73): rows of 256 chunks 1126-1734 us against item 1309-7006
        // and tiles 2066-2303; one row 983 against tiles 9882; rows of 16384 1748 against lanes
        // 2072; CSR mean 253 2401 against lanes 9269, mean 1024 1769 against tiles 2422.
        (
            SegmentAlgo::Chunks,
            format!("segments of mean length {mean} >= {CPU_STREAM_MIN} on a CPU with sub-groups (work-items are SIMD lanes): work-groups of one work-item per chunk of elements, each segment's piece streamed with 16 accumulators that the compiler loads as vectors, pieces cut by chunk boundaries finished by a second pass (decision 73; Intel, 2^22 f32: 1.2-10x faster than item, lanes and tiles)"),
        )
    } else if offsets && caps.sub_groups.is_some() {
        // A CPU whose compiler runs work-items as SIMD lanes (sub-groups: Intel's runtime).
        // Neighbouring work-items must read neighbouring elements, so a few work-items per
        // segment (lanes) or runs of a tile. Intel here, 2^22 f32, heavy-tailed CSR, the
        // tuner's interleaved medians of two runs (decision 66): mean 16 runs 3495 / 3451 us
        // against item 4264 / 4224; means 64, 256, 4096, 65536 lanes 1.06-1.25x faster than
        // tiles (mean 1024: tiles 1170 against lanes in one run, lanes 1350 against 1424 in
        // the other). From mean 192 on chunks, above.
        if mean <= 16 {
            (
                SegmentAlgo::Runs,
                format!("CSR offsets of mean length {mean} <= 16 on a CPU with sub-groups (work-items are SIMD lanes): runs of consecutive elements per work-item with segment starts from a bit mask, so neighbouring lanes read neighbouring elements (Intel, mean 16: 1.22x faster than a work-item per segment)"),
            )
        } else {
            (
                SegmentAlgo::Lanes,
                format!("CSR offsets of mean length {mean} (17 to {}) on a CPU with sub-groups (work-items are SIMD lanes): a few neighbouring work-items per segment read it together (Intel, mean 64: 1.06-1.25x faster than tiles)", CPU_STREAM_MIN - 1),
            )
        }
    } else if offsets && mean <= 4096 {
        // A CPU whose work-items are loops (PoCL, Oclgrind): each work-item streams its own
        // segment. PoCL here, 2^22 f32, heavy-tailed CSR, two tuner runs (decision 66): item
        // 1.20-1.70x faster than tiles at means 64, 256, 1024 and 4096 (1328-1710 us).
        (
            SegmentAlgo::Item,
            format!("CSR offsets of mean length {mean} <= 4096 on a CPU without sub-groups: a work-item per segment streams it contiguously (PoCL, means 64 to 4096: 1.2-1.7x faster than tiles)"),
        )
    } else if offsets {
        // PoCL, mean 65536 (64 segments of 2^22): chunks 1776 / 2366 us against tiles 2854 /
        // 5342 (decision 66).
        (
            SegmentAlgo::Chunks,
            format!("CSR offsets of mean length {mean} > 4096 on a CPU without sub-groups: each work-item streams one chunk of elements, pieces cut by chunk boundaries finished by a second pass (PoCL, mean 65536: 1.6-2.3x faster than tiles)"),
        )
    } else if mean <= 16 && req.segments >= fill {
        (
            SegmentAlgo::Item,
            format!(
                "{} segments of mean length {mean} <= 16: a work-item per segment",
                req.segments
            ),
        )
    } else if req.segments >= fill {
        (
            SegmentAlgo::Item,
            format!("CPU with {} segments >= {fill} work-groups' worth: a work-item per segment streams it contiguously", req.segments),
        )
    } else if uniform && caps.sub_groups.is_none() {
        // PoCL, 2^22 f32, 1 and 4 rows: chunks 1585-2155 / 1542-1579 us against tiles 2733-2747
        // / 2754-2770 in two tuner runs (decision 66). Intel: chunks from mean 192, tiles below.
        (
            SegmentAlgo::Chunks,
            format!("{} uniform segment(s) of {mean}, fewer than {fill} work-groups' worth, on a CPU without sub-groups: each work-item streams one chunk of elements, pieces cut by chunk boundaries finished by a second pass (PoCL, 1 and 4 rows: 1.3-1.8x faster than tiles)", req.segments),
        )
    } else {
        (
            SegmentAlgo::Tiles,
            format!("{} segment(s) of mean length {mean}, fewer than {fill} work-groups' worth or very long: several work-groups per segment (tiles)", req.segments),
        )
    }
}

/// The mean length from which `item` and `chunks` on CPUs use 16 accumulators (decision 73).
pub(super) const CPU_STREAM_MIN: u64 = 192;

/// `blocks`: columns per work-item (`SegmentPlan::unroll`, one accumulator each): 64 bytes of
/// the body's reads at `[i]` (16 f32, 8 f64; 16 bytes' worth where it reads none), 4 to 16,
/// at most the largest power of two not above the column count unless the column count
/// divides it and `fold` (CPUs without sub-groups: 1, 2, 4 or 8 columns, a block then holds
/// several rows); one for exact sums (a superaccumulator per column); `unroll=N` overrides.
pub(super) fn block_width(req: &SegmentRequest, exact: bool, fold: bool) -> u64 {
    if let Some(u) = req.tune.unroll {
        return u;
    }
    let cols = match req.layout {
        SegmentLayout::Columns { cols, .. } => cols.max(1),
        _ => 1,
    };
    let w = match req.read_bytes {
        _ if exact => 1,
        0 => 4,
        b => (64 / b).clamp(4, 16),
    };
    // A narrower array whose column count divides the width: several rows per block where
    // work-items are loops. PoCL, 2^22 f32: one column 674 us against 2876-2879 with a block
    // of one, 8 columns 493 / 795 against 852 / 867 with blocks of 8; Intel (sub-groups), one
    // column 1435 / 1468 against 1277 / 1329 (decision 68).
    if fold && cols < w && w.is_multiple_of(cols) {
        w
    } else {
        w.min(1 << cols.ilog2())
    }
}

/// `blocks`: whether an array narrower than a block puts several rows in it (CPUs whose
/// work-items are loops: no sub-groups).
pub(super) fn folds(caps: &DeviceCaps) -> bool {
    caps.kind != DeviceKind::Gpu && caps.sub_groups.is_none()
}

/// `blocks` (decision 68): `Axis::First` only; blocks of `block_width` columns, the rows in chunks
/// (at least 16 rows each) so that blocks x chunks work-items fill `fill` work-groups of
/// `local`; a second pass combines the chunks where there are several.
pub(super) fn blocks(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (local, exact): (usize, bool),
    fill: u64,
) -> Result<Geometry> {
    let width = block_width(req, exact, folds(caps));
    let SegmentLayout::Columns { rows, cols } = req.layout else {
        return Err(Error::Unsupported {
            what: "segment plan blocks".into(),
            missing: "blocks runs Axis::First (columns) only".into(),
            device: caps.label(),
        });
    };
    let l = local as u64;
    let nb = cols.div_ceil(width).max(1);
    let chunks = match req.tune.chunks {
        Some(c) => c.min(rows),
        None => (fill * l).div_ceil(nb).min(rows / 16),
    }
    .max(1);
    let chunk_rows = rows.div_ceil(chunks).max(1);
    let chunks = rows.div_ceil(chunk_rows).max(1);
    let groups = (nb * chunks).div_ceil(l).min(fill * 8);
    let passes = if chunks > 1 { 2 } else { 1 };
    Ok(Geometry::new(groups, passes, chunk_rows, format!("{nb} blocks of {width} columns x {chunks} chunks of {chunk_rows} rows, a work-item each, on {groups} work-groups of {local}{}", if passes > 1 { ", chunks combined in order by a second pass" } else { "" })))
}

/// `panels` (decision 91): elements per panel row (`SegmentPlan::per_item`, the private
/// partial column sums of a work-item): `PANEL_BYTES` of the body's reads at `[i]` (1024 f32,
/// 512 f64; 1024 where it reads none); `panel=N` overrides. An array of at most half as many
/// columns takes a panel row of several whole rows.
pub(super) fn panel_width(req: &SegmentRequest) -> u64 {
    let bytes = match req.read_bytes {
        0 => 4,
        b => b,
    };
    req.tune.panel.unwrap_or((PANEL_BYTES / bytes).max(1))
}

/// `panels`: bytes of a panel row's reads (decision 91).
pub(super) const PANEL_BYTES: u64 = 4096;

/// `panels`' rows per step of the walk (`SegmentPlan::unroll`, `unroll=N` overrides): each
/// element's rows in row order, so the partials are loaded and stored once per step.
pub(super) const PANEL_ROWS: u64 = 16;

/// `panels` (decision 91): `Axis::First` only, not exact sums (a superaccumulator per column
/// of a panel); panels of `panel_width` columns (one panel of `width / cols` whole rows per
/// panel row where `2 cols <= width`), the rows in chunks (at least 16 rows each, whole panel rows) so
/// that panels x chunks work-items fill `2 fill` work-groups of `local` (one on CPUs), a second
/// pass (a work-item per panel) combining the chunks where there are several.
pub(super) fn panels(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (local, exact): (usize, bool),
    fill: u64,
) -> Result<Geometry> {
    let width = panel_width(req);
    let unsupported = |missing: &str| Error::Unsupported {
        what: "segment plan panels".into(),
        missing: missing.into(),
        device: caps.label(),
    };
    let SegmentLayout::Columns { rows, cols } = req.layout else {
        return Err(unsupported("panels runs Axis::First (columns) only"));
    };
    if exact {
        return Err(unsupported(
            "panels keeps a panel's partial column sums in private memory, not a superaccumulator per column (exact sums: columns or blocks)",
        ));
    }
    let cols = cols.max(1);
    let l = local as u64;
    let np = cols.div_ceil(width).max(1);
    // Whole rows per panel row (a narrow array), so chunks of whole panel rows.
    let kk = if 2 * cols <= width { width / cols } else { 1 };
    let chunks = match req.tune.chunks {
        Some(c) => c.min(rows),
        None => (2 * fill * l).div_ceil(np).min(rows / 16),
    }
    .max(1);
    let chunk_rows = rows.div_ceil(chunks).next_multiple_of(kk).max(1);
    let chunks = rows.div_ceil(chunk_rows).max(1);
    let groups = (np * chunks).div_ceil(l).min(fill * 64);
    let passes = if chunks > 1 { 2 } else { 1 };
    let shape = if kk > 1 {
        format!(
            "one panel of {cols} columns read {kk} rows ({} elements) a panel row",
            kk * cols
        )
    } else {
        format!("{np} panels of {} columns", width.min(cols))
    };
    let mut g = Geometry::new(groups, passes, chunk_rows, format!("{shape} x {chunks} chunks of {chunk_rows} rows, a work-item each (its panel's partial column sums in private memory), on {groups} work-groups of {local}{}", if passes > 1 { ", chunks combined in order by a second pass, a panel per work-item" } else { "" }));
    g.per_item = width;
    Ok(g)
}

/// Whether `item`, `chunks`, `aligned` and `panels` run in work-groups of one work-item:
/// `panels` on every CPU (its work-item's loop over a panel is what the compiler vectorizes,
/// and panels x chunks are few: decision 91); on a CPU whose
/// work-items are SIMD lanes (Intel), `item` and `chunks` where they stream with accumulators,
/// so that the compiler vectorizes the work-item's own loop instead of running segments as
/// lanes (decision 73), `aligned` always (decision 77: Intel, 2^22 f32, CSR mean 4 3080 us
/// in work-groups of one against 9449 in work-groups of 64).
pub(super) fn lone_work_item(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    algo: SegmentAlgo,
    exact: bool,
    mean: u64,
) -> bool {
    let streams = matches!(algo, SegmentAlgo::Item | SegmentAlgo::Chunks)
        && !exact
        && req.tune.unroll.map_or(mean >= CPU_STREAM_MIN, |u| u > 1);
    // aligned: always (a work-item walks its chunk's segments one after the other); on CPUs
    // without sub-groups (PoCL) its scan walk (decision 87: in work-groups of 64 PoCL's
    // compiler runs the work-items' chunks as SIMD lanes, with gathers).
    let scan = algo == SegmentAlgo::Aligned && aligned_scan(caps, req, mean, exact).is_some();
    caps.kind != DeviceKind::Gpu
        && (caps.sub_groups.is_some() && (streams || algo == SegmentAlgo::Aligned)
            || scan
            || algo == SegmentAlgo::Panels)
}

/// Short segments on CPUs (decision 77): `aligned` where it measured faster than the plans
/// before it; exact sums keep those (not measured with it). `None`: the other rules decide.
fn choose_short(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (mean, fill): (u64, u64),
    exact: bool,
) -> Option<(SegmentAlgo, String)> {
    let offsets = req.layout == SegmentLayout::Offsets;
    let many_rows = matches!(req.layout, SegmentLayout::Uniform { .. }) && req.segments >= fill;
    if exact || mean >= CPU_STREAM_MIN {
        return None;
    }
    if caps.sub_groups.is_some() && (offsets || many_rows) {
        return Some((
            SegmentAlgo::Aligned,
            format!("segments of mean length {mean} < {CPU_STREAM_MIN} on a CPU with sub-groups (work-items are SIMD lanes): work-groups of one work-item, each walking the whole segments that begin in its chunk of elements, {} (decision 77)", if aligned_scan(caps, req, mean, exact).is_some() { "several chunks in lock step by a segmented scan over their elements (CSR below mean 16; decision 87: means 4 to 15 1.3-1.6x faster than the walk)" } else { "the first elements of each without a branch on its length" }),
        ));
    }
    // PoCL (work-items are loops): CSR below mean 16 by the scan walk (decision 87: mean 4
    // 4916 us against the walk's 7463, means 11 and 15 3495 / 3342 against item's 4589 / 3985),
    // CSR from 16 and rows from 32, where 4 or 16 accumulators per segment beat item's one
    // (CSR mean 31 2379 us against 3302, decision 77); rows of 16 keep item (999 against 791
    // in one run, 1186 against 1539 in another: PoCL runs a work-group's rows of one trip count
    // as vector lanes).
    let loops = offsets || many_rows && mean >= 32;
    if caps.sub_groups.is_none() && loops {
        return Some((
            SegmentAlgo::Aligned,
            format!("segments of mean length {mean} (CSR up to {0}, rows 32 to {0}) on a CPU without sub-groups: each work-item walks the whole segments that begin in its chunk of elements, {1} (decision 77; PoCL, 2^22 f32: CSR mean 31 1.4x, 64 1.9x, rows of 128 2.8-5x faster than item)", CPU_STREAM_MIN - 1, if aligned_scan(caps, req, mean, exact).is_some() { "several chunks in lock step by a segmented scan over their elements (CSR below mean 16, in work-groups of one; decision 87: means 4 to 15 1.2-1.5x faster than the walk and item)" } else { "with several accumulators per segment" }),
        ));
    }
    None
}

/// `aligned`'s accumulators per segment below `CPU_STREAM_MIN` (decision 77): 1 (and the masked
/// first elements) below mean 16, 4 from 16, 16 from 128. 2^22 f32, interleaved A/B, against
/// one: Intel, CSR mean 64 1115 us with 4 against 3058 (1534 with 16), mean 126 1072 / 1085
/// with 4 / 16 against 3127, rows of 128 462 with 16 against 836 with 4 and 2193 with one;
/// PoCL, CSR mean 64 1619 with 4 against 3214, rows of 128 817 / 881 with 16 / 4 against
/// 2168, rows of 16 1240 with 4 against 1679 (5940 with 16).
pub(super) fn aligned_unroll(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    mean: u64,
    exact: bool,
) -> u64 {
    if let Some(chains) = aligned_scan(caps, req, mean, exact) {
        return chains;
    }
    match mean {
        0..16 => 1,
        16..128 => 4,
        // From CPU_STREAM_MIN on item's and chunks' 16 too (decision 73).
        _ => 16,
    }
}

/// `aligned`'s scan walk (decision 87, kernels/segment_cpu.cl `CLR_ALIGNED_SCAN`): the chunks
/// (chains) each work-item walks in lock step by a segmented scan over their elements, loop
/// trip counts that do not depend on the segments' lengths; `None`: the walk of decision 77.
/// CSR offsets of mean length below `ALIGNED_SCAN_MAX` on CPUs, 4 chains with sub-groups
/// (Intel), 8 without (PoCL); `scan=0|1` and `unroll=N` (the chains) override. Not for exact
/// sums (a superaccumulator per element's step). 2^22 f32, alternating A/B rounds on this
/// shared 2-core machine, medians (design/bench/2026-11-25-cpu-session19-cpuseg.txt): CSR mean
/// 4 PoCL 4916 us against the walk's 7463 (8 chains in work-groups of one; 4 chains 6051; in
/// work-groups of 64 its compiler runs the chunks as SIMD lanes: 5630 against 2896 in one run),
/// Intel 3816 against 6104 (8 chains 5316); mean 7 3855 / 3330 against 5431 / 4632; mean 11
/// PoCL 3495 against `item` 4589, Intel 1512 against 2099; mean 15 PoCL 3342 against `item`
/// 3985, Intel 1455 against 1955; mean 23 slower (Intel 1442 against 1281, PoCL 3403 against
/// 2584): from 16 the walk with 4 accumulators.
pub(super) fn aligned_scan(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    mean: u64,
    exact: bool,
) -> Option<u64> {
    let auto = caps.kind != DeviceKind::Gpu
        && req.layout == SegmentLayout::Offsets
        && mean < ALIGNED_SCAN_MAX;
    let chains = if caps.sub_groups.is_some() { 4 } else { 8 };
    (!exact && req.tune.scan.unwrap_or(auto)).then(|| req.tune.unroll.unwrap_or(chains))
}

/// The mean CSR length below which `aligned` takes the scan walk on CPUs.
const ALIGNED_SCAN_MAX: u64 = 16;

/// `aligned`: the elements of a segment combined before its loop by masked steps.
const ALIGNED_MASK: u64 = 4;

/// `aligned` (decision 77): rows and CSR offsets; `chunks=N` chunks of consecutive elements
/// (by default one per work-item of `fill` work-groups of `local`), each owning the segments
/// that begin in it; one pass.
pub(super) fn aligned(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (local, exact): (usize, bool),
    fill: u64,
) -> Result<Geometry> {
    if matches!(req.layout, SegmentLayout::Columns { .. }) {
        return Err(Error::Unsupported {
            what: "segment plan aligned".into(),
            missing: "aligned runs rows and CSR segments, not columns".into(),
            device: caps.label(),
        });
    }
    let l = local as u64;
    let mean = req.elements / req.segments.max(1);
    // The scan walk: `q` chunks per work-item (its chains).
    let scan = aligned_scan(caps, req, mean, exact);
    let q = scan.unwrap_or(1);
    // At least 8 chunks per `fill` (work-groups of one on Intel), so that heavy-tailed lengths
    // spread over the threads.
    let chunks = req.tune.chunks.unwrap_or(fill * l.max(8) * q).max(1);
    let tile = req.elements.div_ceil(chunks).max(16);
    let tiles = req.elements.div_ceil(tile).max(1);
    let groups = tiles.div_ceil(l * q);
    if scan.is_some() {
        let mut g = Geometry::new(groups, 1, tile, format!("{tiles} chunks of {tile} elements aligned to whole segments (a chunk owns the segments that begin in it), {q} per work-item of {groups} work-groups of {local}, walked in lock step by a segmented scan over their elements ({q} chains), each segment's value gathered at its end"));
        g.per_item = 0;
        return Ok(g);
    }
    // The first `mask` elements of a segment without a branch on its length (per_item=N); none
    // for exact sums (each step would copy a superaccumulator).
    let mask = req
        .tune
        .per_item
        .unwrap_or(if exact { 0 } else { ALIGNED_MASK });
    let mut g = Geometry::new(groups, 1, tile, format!("{tiles} chunks of {tile} elements aligned to whole segments (a chunk owns the segments that begin in it), one per work-item of {groups} work-groups of {local}; each segment walked whole and stored by its chunk's work-item, its first {mask} elements by steps without a branch on the length"));
    g.per_item = mask;
    Ok(g)
}

#[cfg(test)]
#[path = "segment_cpu_tests.rs"]
mod tests;
