//! The segmented launch's part of code generation: kernels/segment.cl in place of
//! kernels/reduce.cl, its `-D` defines and the per-variable index-in-segment macros.

use crate::plan::{
    stage_slots, AccShape, Plan, SegmentAlgo, SegmentLayout, SegmentPlan, TILE_LONGS,
};

pub(crate) const SEGMENT_CL: &str = include_str!("../../kernels/segment.cl");
/// The `merge` plan's kernels, appended after segment.cl (whose macros they use).
pub(crate) const SEGMENT_MERGE_CL: &str = include_str!("../../kernels/segment_merge.cl");
/// The `runs` plan's kernels, appended after segment.cl (whose macros they use).
pub(crate) const SEGMENT_RUNS_CL: &str = include_str!("../../kernels/segment_runs.cl");
/// The `runs` plan's warp kernel, appended after segment_runs.cl (decision 81).
pub(crate) const SEGMENT_WARP_CL: &str = include_str!("../../kernels/segment_warp.cl");
/// The `runs` plan's register scan kernel, appended after segment_runs.cl (decision 84).
pub(crate) const SEGMENT_SCAN_CL: &str = include_str!("../../kernels/segment_scan.cl");
/// The `aligned` plan's kernel (CPUs), appended after segment.cl (whose macros it uses).
pub(crate) const SEGMENT_CPU_CL: &str = include_str!("../../kernels/segment_cpu.cl");
/// The plans' kernels (clr_main and, with partials, clr_finish), one file per plan (or family),
/// appended after segment.cl (whose macros they use): `plan_source` picks one.
pub(crate) const SEGMENT_ITEM_CL: &str = include_str!("../../kernels/segment_item.cl");
pub(crate) const SEGMENT_GROUP_CL: &str = include_str!("../../kernels/segment_group.cl");
/// `tiles` and `chunks` (the same slots and finishing pass).
pub(crate) const SEGMENT_TILES_CL: &str = include_str!("../../kernels/segment_tiles.cl");
pub(crate) const SEGMENT_STAGED_CL: &str = include_str!("../../kernels/segment_staged.cl");
pub(crate) const SEGMENT_LANES_CL: &str = include_str!("../../kernels/segment_lanes.cl");
/// `columns`, `stripes` and `blocks` (Axis::First).
pub(crate) const SEGMENT_COLUMNS_CL: &str = include_str!("../../kernels/segment_columns.cl");
/// `panels` (Axis::First on CPUs, decision 91).
pub(crate) const SEGMENT_PANELS_CL: &str = include_str!("../../kernels/segment_panels.cl");
/// An exact sum of a segmented launch (in place of var.cl / var_exact.cl for that variable).
pub(crate) const VAR_SEGEXACT_CL: &str = include_str!("../../kernels/var_segexact.cl");

/// The kernel file (name, embedded text) of plan `algo`, appended after segment.cl.
pub(crate) fn plan_source(algo: SegmentAlgo) -> (&'static str, &'static str) {
    match algo {
        SegmentAlgo::Item => ("segment_item.cl", SEGMENT_ITEM_CL),
        SegmentAlgo::Group => ("segment_group.cl", SEGMENT_GROUP_CL),
        SegmentAlgo::Tiles | SegmentAlgo::Chunks => ("segment_tiles.cl", SEGMENT_TILES_CL),
        SegmentAlgo::Staged => ("segment_staged.cl", SEGMENT_STAGED_CL),
        SegmentAlgo::Lanes => ("segment_lanes.cl", SEGMENT_LANES_CL),
        SegmentAlgo::Columns | SegmentAlgo::Stripes | SegmentAlgo::Blocks => {
            ("segment_columns.cl", SEGMENT_COLUMNS_CL)
        }
        SegmentAlgo::Merge => ("segment_merge.cl", SEGMENT_MERGE_CL),
        SegmentAlgo::Runs => ("segment_runs.cl", SEGMENT_RUNS_CL),
        SegmentAlgo::Aligned => ("segment_cpu.cl", SEGMENT_CPU_CL),
        SegmentAlgo::Panels => ("segment_panels.cl", SEGMENT_PANELS_CL),
    }
}

/// The segment defines of kernels/segment.cl.
pub(super) fn defines(sp: &SegmentPlan, local: usize, d: &mut impl FnMut(&str, String)) {
    d("CLR_SEG_ALGO", sp.algo.cl_id().into());
    d(
        "CLR_SEG_OFFSETS",
        ((sp.layout == SegmentLayout::Offsets) as u8).to_string(),
    );
    d("CLR_SEG_LONGS", TILE_LONGS.to_string());
    let e = sp.per_item.max(1);
    d("CLR_SEG_E", e.to_string());
    d("CLR_SEG_STAGE", stage_slots(local, e).to_string());
    d("CLR_SEG_S", sp.lanes.max(1).to_string());
    d("CLR_SEG_U", sp.unroll.max(1).to_string());
    d("CLR_RUNS_SCAN", (sp.scan as u8).to_string());
    d("CLR_RUNS_PRE", (sp.pre as u8).to_string());
    // Only where it runs (the other programs' options, and their cached builds, unchanged).
    if sp.algo == SegmentAlgo::Aligned {
        d("CLR_ALIGNED_MASK", sp.per_item.to_string());
        if sp.scan {
            d("CLR_ALIGNED_SCAN", sp.unroll.max(1).to_string());
        }
    }
    if sp.algo == SegmentAlgo::Panels {
        d("CLR_PANEL", sp.per_item.max(1).to_string());
    }
    if sp.lean {
        d("CLR_RUNS_LEAN", "1".into());
    }
    if sp.checks {
        d("CLR_RUNS_SPLIT", "0".into());
    }
    if sp.warp > 0 {
        d("CLR_RUNS_WS", sp.warp.to_string());
    }
}

/// `CLR_INSEG_k(g)` per variable: an argmin/argmax index made relative to its segment
/// (`clr_sb` its first index, `clr_ss` the stride between its elements), or nothing.
pub(super) fn glue(plan: &Plan, sp: &SegmentPlan) -> String {
    let mut s = String::new();
    for (k, v) in plan.vars.iter().enumerate() {
        let rel = v.shape == AccShape::Pair && sp.index_in_segment.get(k) == Some(&true);
        if rel {
            s.push_str(&format!(
                "#define CLR_INSEG_{k}(g) if (g.i != ULONG_MAX) g.i = (g.i - clr_sb) / clr_ss;\n"
            ));
        } else {
            s.push_str(&format!("#define CLR_INSEG_{k}(g)\n"));
        }
    }
    s
}
