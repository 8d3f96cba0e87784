//! Segmented and axis reductions: which plan runs a launch with one result per segment
//! ([`SegmentAlgo`]), chosen by segment length from the device's capabilities
//! ([`plan_segments`]); design/algorithms.md, "Segmented reductions".
//!
//! The per-variable parts of the plan (accumulator, identity, the work-group tree) are the
//! ordinary planner's; this step decides the segment algorithm, the work-group size, the tile
//! or row-chunk size and the number of passes, and records why.

use super::model::Plan;
use super::segment_model::{SegmentAlgo, SegmentLayout, SegmentPlan, SegmentRequest};
use super::strategy::CrossAlgo;
use crate::caps::{DeviceCaps, DeviceKind};
use crate::error::{Error, Result};

/// Room for the longer segments of one tile (local memory, 8 bytes each).
pub(crate) const TILE_LONGS: u64 = 256;

/// Chooses the segment algorithm and geometry, and rewrites `base` (the ordinary plan of the
/// same variables, forced to an extra pass) into the segmented plan.
/// Pure. A forced algorithm the layout cannot run is [`Error::Unsupported`].
pub fn plan_segments(caps: &DeviceCaps, mut base: Plan, req: &SegmentRequest) -> Result<Plan> {
    let segments = req.segments.max(1);
    let mean = req.elements / segments;
    let gpu = caps.kind == DeviceKind::Gpu;
    let cus = caps.compute_units.max(1) as u64;
    // Work-groups that keep the device busy: 8 per compute unit on a GPU, 4 on a CPU (its
    // compute units are threads that take work-groups one after another).
    let fill = cus * if gpu { 8 } else { 4 };
    let (algo, why) = choose(caps, req, mean, fill)?;
    let max_local = caps.max_work_group_size.max(1);
    let local = match algo {
        // A full warp per segment at least on a GPU, at least 8 elements per work-item before
        // the tree (fewer barriers per element); more work-items only for longer segments.
        SegmentAlgo::Group if gpu => (mean / 8).next_power_of_two().clamp(32, 256) as usize,
        SegmentAlgo::Group => (mean / 8).next_power_of_two().clamp(8, 64) as usize,
        _ if gpu => 256,
        _ => 64,
    }
    .min(max_local);
    let (tile, short, groups, passes, geo) = match algo {
        SegmentAlgo::Item => {
            let groups = segments.div_ceil(local as u64).max(1);
            (
                0,
                0,
                groups,
                1,
                format!("{groups} work-groups of {local}, one segment per work-item"),
            )
        }
        SegmentAlgo::Group => {
            let groups = segments.min(fill * 4).max(1);
            (
                0,
                0,
                groups,
                1,
                format!("{groups} work-groups of {local} taking segments in turn"),
            )
        }
        SegmentAlgo::Tiles => {
            // Tiles: at least 16 elements per work-item, and no more tiles than 4 rounds of
            // the device's work-groups need; each tile lists at most TILE_LONGS long segments.
            let per_group = req.elements.div_ceil(fill * 4).max(1);
            let tile = per_group
                .next_multiple_of(local as u64)
                .max(16 * local as u64);
            let short = (tile / TILE_LONGS).max(32);
            let tiles = req.elements.div_ceil(tile).max(1);
            let groups = tiles.min(fill).max(1);
            (
                tile,
                short,
                groups,
                2,
                format!("{tiles} tiles of {tile} elements on {groups} work-groups of {local}; segments up to {short} long to one work-item, longer ones to the work-group, tile-crossing pieces finished by a second pass"),
            )
        }
        SegmentAlgo::Chunks => {
            // One chunk per work-item of `fill` work-groups, at least 16 elements each.
            let items = fill * local as u64;
            let tile = req.elements.div_ceil(items).max(16);
            let tiles = req.elements.div_ceil(tile).max(1);
            let groups = tiles.div_ceil(local as u64).max(1);
            (
                tile,
                0,
                groups,
                2,
                format!("{tiles} chunks of {tile} elements, one per work-item of {groups} work-groups of {local}; chunk-crossing pieces finished by a second pass"),
            )
        }
        SegmentAlgo::Columns => {
            let SegmentLayout::Columns { rows, cols } = req.layout else {
                unreachable!("choose() gives columns for the columns layout only")
            };
            let blocks = cols.div_ceil(local as u64).max(1);
            // Split the rows only when the columns alone leave the device idle.
            let chunks = if blocks >= fill {
                1
            } else {
                fill.div_ceil(blocks).min(rows.div_ceil(16)).max(1)
            };
            let chunk_rows = rows.div_ceil(chunks).max(1);
            let chunks = rows.div_ceil(chunk_rows).max(1);
            let groups = (blocks * chunks).min(fill * 4).max(1);
            let passes = if chunks > 1 { 2 } else { 1 };
            (
                chunk_rows,
                0,
                groups,
                passes,
                format!("{blocks} blocks of {local} columns x {chunks} chunks of {chunk_rows} rows on {groups} work-groups{}", if passes > 1 { ", chunks combined in order by a second pass" } else { "" }),
            )
        }
    };
    for v in &mut base.vars {
        // The work-group step is the ordinary plan's (every one of them runs with any of the
        // segment plans' work-group sizes); one more local slot than work-items covers each.
        v.cross = CrossAlgo::ExtraPass;
        v.local_slots = local + 1;
        v.group_reason = format!("per segment: {}", v.group_reason);
        v.cross_reason = match algo {
            SegmentAlgo::Tiles | SegmentAlgo::Columns if passes > 1 => {
                "segmented: partials per piece, combined in a fixed order by a second pass".into()
            }
            _ => "segmented: each segment written by the work-item or work-group that reduces it"
                .into(),
        };
        v.deterministic = true;
    }
    let acc: usize = base.vars.iter().map(|v| v.acc_bytes * (local + 1)).sum();
    base.local_bytes = acc as u64
        + if algo == SegmentAlgo::Tiles {
            TILE_LONGS * 8 + 4
        } else {
            0
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
    base.local = local;
    base.groups = groups;
    base.passes = passes;
    base.unroll = 1;
    base.vec = 1;
    base.deterministic = true;
    base.items_per_work_item = match algo {
        SegmentAlgo::Item => mean.max(1),
        _ => (req.elements.div_ceil(groups * local as u64)).max(1),
    };
    base.geometry_reason = geo;
    base.segment = Some(SegmentPlan {
        layout: req.layout,
        segments: req.segments,
        mean_len: mean,
        algo,
        tile,
        short,
        index_in_segment: vec![false; base.vars.len()],
        span_idiom: false,
        reason: why,
    });
    Ok(base)
}

/// The algorithm for a request, and why.
fn choose(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    mean: u64,
    fill: u64,
) -> Result<(SegmentAlgo, String)> {
    let columns = matches!(req.layout, SegmentLayout::Columns { .. });
    if let Some(a) = req.force {
        if columns != (a == SegmentAlgo::Columns) {
            return Err(Error::Unsupported {
                what: format!("segment plan {a}"),
                missing: if columns {
                    "Axis::First (column sums) runs only the columns plan".into()
                } else {
                    "the columns plan runs only Axis::First".into()
                },
                device: caps.label(),
            });
        }
        return Ok((a, format!("forced (mean segment length {mean})")));
    }
    if columns {
        return Ok((
            SegmentAlgo::Columns,
            "Axis::First: a work-item per column keeps reads coalesced".into(),
        ));
    }
    let gpu = caps.kind == DeviceKind::Gpu;
    let offsets = req.layout == SegmentLayout::Offsets;
    Ok(if offsets && gpu {
        // H200, 2^28 f32, CSR of mean 16 (heavy-tailed): tiles 1428 us, a work-item per
        // segment 2863 us (design/bench/2026-11-24-h200-segment-first.txt).
        (
            SegmentAlgo::Tiles,
            format!("CSR offsets of mean length {mean} on a GPU: lengths live on the device and may be heavy-tailed, so fixed tiles keep the work balanced (H200, mean 16: tiles 2.0x faster than a work-item per segment)"),
        )
    } else if offsets && mean > 16 {
        (
            SegmentAlgo::Tiles,
            format!("CSR offsets of mean length {mean} > 16: lengths live on the device and may be heavy-tailed, so fixed tiles keep the work balanced"),
        )
    } else if mean <= 16 && req.segments >= fill {
        (
            SegmentAlgo::Item,
            format!(
                "{} segments of mean length {mean} <= 16: a work-item per segment",
                req.segments
            ),
        )
    } else if !gpu && req.segments >= fill && !offsets {
        (
            SegmentAlgo::Item,
            format!("CPU with {} segments >= {fill} work-groups' worth: a work-item per segment streams it contiguously", req.segments),
        )
    } else if gpu && req.segments >= fill && mean <= 1 << 16 {
        (
            SegmentAlgo::Group,
            format!("{} segments >= {fill} resident work-groups, mean length {mean}: a work-group per segment", req.segments),
        )
    } else {
        (
            SegmentAlgo::Tiles,
            format!("{} segment(s) of mean length {mean}, fewer than {fill} work-groups' worth or very long: several work-groups per segment (tiles)", req.segments),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::fixtures;
    use crate::ops::Op;
    use crate::plan::{plan, FormRequest, GroupAlgo, Request, Shape, Strategy, VarRequest};
    use crate::types::ElemType;

    fn base(caps: &DeviceCaps, n: u64) -> Plan {
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
        };
        let p = plan_segments(caps, base(caps, n), &req).unwrap();
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
        assert_eq!(algo(&c, u(4), n / 4, n), SegmentAlgo::Item);
        assert_eq!(algo(&c, u(16), n / 16, n), SegmentAlgo::Item);
        assert_eq!(algo(&c, u(256), n / 256, n), SegmentAlgo::Group);
        assert_eq!(algo(&c, u(16384), n / 16384, n), SegmentAlgo::Group);
        assert_eq!(algo(&c, u(1 << 20), 256, n), SegmentAlgo::Tiles);
        assert_eq!(algo(&c, u(n), 1, n), SegmentAlgo::Tiles);
        assert_eq!(
            algo(&c, SegmentLayout::Offsets, n / 256, n),
            SegmentAlgo::Tiles
        );
        assert_eq!(
            algo(&c, SegmentLayout::Offsets, n / 8, n),
            SegmentAlgo::Tiles
        );
        let cols = SegmentLayout::Columns {
            rows: 256,
            cols: 1 << 20,
        };
        assert_eq!(algo(&c, cols, 1 << 20, n), SegmentAlgo::Columns);
    }

    #[test]
    fn cpus_take_a_work_item_per_segment_when_there_are_many() {
        for c in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
            let n = 1 << 20;
            let u = |len| SegmentLayout::Uniform { len };
            assert_eq!(algo(&c, u(4), n / 4, n), SegmentAlgo::Item);
            assert_eq!(algo(&c, u(256), n / 256, n), SegmentAlgo::Item);
            assert_eq!(algo(&c, u(n), 1, n), SegmentAlgo::Tiles);
            assert_eq!(algo(&c, u(n / 2), 2, n), SegmentAlgo::Tiles);
            let off = SegmentLayout::Offsets;
            assert_eq!(algo(&c, off, n / 256, n), SegmentAlgo::Tiles);
            let cols = SegmentLayout::Columns {
                rows: 16,
                cols: n / 16,
            };
            assert_eq!(algo(&c, cols, n / 16, n), SegmentAlgo::Columns);
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
        };
        let few = plan_segments(&c, base(&c, n), &req(n / 4, 4)).unwrap();
        assert_eq!(few.passes, 2);
        assert!(few.segment.unwrap().tile < n / 4);
        let many = plan_segments(&c, base(&c, n), &req(16, n / 16)).unwrap();
        assert_eq!(many.passes, 1);
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
                };
                let p = plan_segments(&c, base(&c, n.max(1)), &req).unwrap();
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
        };
        let e = plan_segments(&c, base(&c, 16), &req).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        let req = SegmentRequest {
            layout: SegmentLayout::Uniform { len: 4 },
            force: Some(SegmentAlgo::Columns),
            ..req
        };
        assert!(plan_segments(&c, base(&c, 16), &req).is_err());
        assert_eq!(
            SegmentAlgo::parse("multi").unwrap(),
            Some(SegmentAlgo::Tiles)
        );
        assert_eq!(SegmentAlgo::parse("auto").unwrap(), None);
        assert!(SegmentAlgo::parse("warp").is_err());
    }
}
