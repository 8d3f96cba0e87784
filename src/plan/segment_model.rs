//! The segment part of a plan as data: the layout ([`SegmentLayout`]), the algorithm
//! ([`SegmentAlgo`]), what the segment step is asked ([`SegmentRequest`]) and what it decided
//! ([`SegmentPlan`]). `segment.rs` makes the decision; `model.rs` holds the result in
//! `Plan::segment`. Imports nothing of the planner's (no cycle with `model.rs`).

use crate::error::{Error, Result};
use serde::Serialize;
use std::fmt;

/// How the segments of a segmented reduction are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentLayout {
    /// Segment k is `k*len .. (k+1)*len` (`Segments::uniform`, `Axis::Last`).
    Uniform {
        /// Elements per segment.
        len: u64,
    },
    /// Segment k is `offsets[k] .. offsets[k+1]` (`Segments::offsets`, CSR).
    Offsets,
    /// `Axis::First`: segment k is column k of a row-major `rows x cols` array.
    Columns {
        /// Rows (the reduced extent).
        rows: u64,
        /// Columns (the number of results).
        cols: u64,
    },
}

/// The algorithm of a segmented reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentAlgo {
    /// A work-item per segment: each loops its own segment (very short segments; CPUs with
    /// many segments).
    Item,
    /// A work-group per segment: coalesced strided reads and a work-group tree per segment.
    Group,
    /// Tiles of a fixed element count whatever the segment lengths: short segments to one
    /// work-item each, long ones to the work-group, segments cut by tile boundaries finished by
    /// a second pass. Several work-groups per long segment, and no huge segment on one
    /// work-group (CSR with heavy-tailed lengths, the single-segment case).
    Tiles,
    /// `Axis::First`: a work-item per column, rows split into chunks across work-groups (whole
    /// rounds of them) when there are few column blocks, chunks combined by a second pass.
    Columns,
    /// Equal chunks of consecutive elements, one per work-item, each walked in one flat loop
    /// that finishes a segment whenever it reaches its end; pieces cut by chunk boundaries
    /// finished by a second pass, as in `Tiles`. Balanced whatever the lengths, and every
    /// work-item runs the same number of iterations. Only when forced: on Intel's CPU runtime
    /// its lanes gather from chunks far apart (4.8-11x the plain sum at 2^22, against 0.9-1.3x
    /// for `item` on uniform rows; examples/segment_bench.rs, a shared 2-core machine).
    Chunks,
    /// A work-group stages `local * per_item` consecutive elements in local memory,
    /// consecutive work-items taking consecutive indices (coalesced reads). Uniform rows: a
    /// stage holds whole rows and one work-item per row combines them in index order. CSR
    /// offsets: each work-item combines `per_item` consecutive elements of the stage, a segment
    /// that crosses work-items is folded by the one where it starts, one that crosses stages
    /// by a second pass.
    Staged,
    /// `lanes` consecutive work-items per segment (a warp's worth or less), several segments
    /// per work-group: strided coalesced reads within the segment, then a tree over the
    /// segment's lanes in local memory.
    Lanes,
    /// `Axis::First` with at most a work-group of columns (the GPU rule; decision 53): a plain
    /// strided loop whose stride is a multiple of the column count, so each work-item keeps
    /// one column; the work-group combines its work-items of each column, and a second pass
    /// combines the work-groups' partials.
    Stripes,
    /// CSR offsets through merge path (Merrill & Garland 2016): the elements and the segment
    /// ends are one list of items cut into tiles of `local * per_item`, so an empty or tiny
    /// segment costs one item and a long one many tiles; values read coalesced into local
    /// memory, each work-item walks `per_item` consecutive items, a segmented scan across the
    /// work-group joins the pieces of segments cut between work-items, and a second pass those
    /// cut between tiles (a work-item per cut segment, the work-group for very long ones).
    Merge,
    /// CSR offsets in runs: tiles of `local * per_item` consecutive elements, each work-item
    /// combining its run of `per_item` elements in registers (several loaded at once where the
    /// body reads at `[i]`), segment starts marked in a local bit mask, the pieces cut between
    /// runs joined by the work-item where the segment starts (segment ends come from the
    /// offsets), those cut between tiles by a second pass (decision 62).
    Runs,
    /// `Axis::First` on CPUs (decision 68): each work-item streams the rows of a row chunk for
    /// a block of `unroll` contiguous columns held in private accumulators (one per column),
    /// writes its chunk's partial per column, and the columns' second pass combines each
    /// column's chunks in chunk order. A work-item reads whole cache lines of a row where
    /// `columns` reads one element of each.
    Blocks,
    /// CPUs, short segments (decision 77): chunks of consecutive elements aligned to whole
    /// segments, one per work-item (a chunk owns the segments that begin in it, found by a
    /// binary search of the offsets), each segment walked by a plain loop into one accumulator
    /// and stored at its end: one pass, no partials, the bits of `item`.
    Aligned,
    /// `Axis::First` on CPUs (decision 91): each work-item (a work-group of one) walks a row
    /// chunk for a panel of `per_item` contiguous columns (1 KiB of a row's reads, or all the
    /// columns), adding each row's panel into that many private partial column sums with a
    /// loop the compiler vectorizes (contiguous loads, contiguous adds); the chunks' partials
    /// are combined in chunk order by a second pass, a panel per work-item.
    Panels,
}

impl SegmentAlgo {
    /// Every algorithm, in declaration order.
    pub const ALL: [SegmentAlgo; 13] = [
        SegmentAlgo::Item,
        SegmentAlgo::Group,
        SegmentAlgo::Tiles,
        SegmentAlgo::Columns,
        SegmentAlgo::Chunks,
        SegmentAlgo::Staged,
        SegmentAlgo::Lanes,
        SegmentAlgo::Stripes,
        SegmentAlgo::Merge,
        SegmentAlgo::Runs,
        SegmentAlgo::Blocks,
        SegmentAlgo::Aligned,
        SegmentAlgo::Panels,
    ];
    /// Its name in plans and `CLREDUCE_SEGMENT`: `item`, `group`, `tiles`, `columns`,
    /// `chunks`, `staged`, `lanes`, `stripes`, `merge`, `runs`, `blocks`, `aligned` or `panels`.
    pub fn name(self) -> &'static str {
        match self {
            SegmentAlgo::Item => "item",
            SegmentAlgo::Group => "group",
            SegmentAlgo::Tiles => "tiles",
            SegmentAlgo::Columns => "columns",
            SegmentAlgo::Chunks => "chunks",
            SegmentAlgo::Staged => "staged",
            SegmentAlgo::Lanes => "lanes",
            SegmentAlgo::Stripes => "stripes",
            SegmentAlgo::Merge => "merge",
            SegmentAlgo::Runs => "runs",
            SegmentAlgo::Blocks => "blocks",
            SegmentAlgo::Aligned => "aligned",
            SegmentAlgo::Panels => "panels",
        }
    }
    /// Parses a name of [`SegmentAlgo::name`] (`multi` is accepted for `tiles`); `auto` or an
    /// empty string is `None`. Anything else is [`Error::UnknownName`].
    pub fn parse(s: &str) -> Result<Option<SegmentAlgo>> {
        let s = s.trim();
        if s.is_empty() || s == "auto" {
            return Ok(None);
        }
        let s = if s == "multi" { "tiles" } else { s };
        SegmentAlgo::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .map(Some)
            .ok_or_else(|| Error::UnknownName {
                kind: "segment plan",
                name: s.to_string(),
                known: vec![
                    "auto",
                    "item",
                    "group",
                    "tiles (or multi)",
                    "columns",
                    "chunks",
                    "staged",
                    "lanes",
                    "stripes",
                    "merge",
                    "runs",
                    "blocks",
                    "aligned",
                    "panels",
                ],
            })
    }
    /// `CLREDUCE_SEGMENT`, or `None` (automatic) where unset.
    pub fn from_env() -> Result<Option<SegmentAlgo>> {
        match std::env::var("CLREDUCE_SEGMENT") {
            Ok(s) => SegmentAlgo::parse(&s),
            Err(_) => Ok(None),
        }
    }
    pub(crate) fn cl_id(self) -> &'static str {
        match self {
            SegmentAlgo::Item => "CLR_SEG_ITEM",
            SegmentAlgo::Group => "CLR_SEG_GROUP",
            SegmentAlgo::Tiles => "CLR_SEG_TILES",
            SegmentAlgo::Columns => "CLR_SEG_COLUMNS",
            SegmentAlgo::Chunks => "CLR_SEG_CHUNKS",
            SegmentAlgo::Staged => "CLR_SEG_STAGED",
            SegmentAlgo::Lanes => "CLR_SEG_LANES",
            SegmentAlgo::Stripes => "CLR_SEG_STRIPES",
            SegmentAlgo::Merge => "CLR_SEG_MERGE",
            SegmentAlgo::Runs => "CLR_SEG_RUNS",
            SegmentAlgo::Blocks => "CLR_SEG_BLOCKS",
            SegmentAlgo::Aligned => "CLR_SEG_ALIGNED",
            SegmentAlgo::Panels => "CLR_SEG_PANELS",
        }
    }
}

impl fmt::Display for SegmentAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the segment step is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct SegmentRequest {
    /// The layout.
    pub layout: SegmentLayout,
    /// Number of segments (results per variable).
    pub segments: u64,
    /// Elements covered by the segments (the offsets' `last - first`; `n` otherwise).
    pub elements: u64,
    /// A forced algorithm; `None` chooses by segment length.
    pub force: Option<SegmentAlgo>,
    /// Expert geometry overrides (`CLREDUCE_SEGMENT_TUNE`); the default is automatic.
    pub tune: SegmentTune,
    /// The longest segment (CSR offsets are read on the host anyway); 0 where unknown.
    pub longest: u64,
    /// The widest element (bytes) of the read-only buffers the body reads at exactly `[i]`,
    /// each holding at least the range's elements: those reads may be loaded several at once
    /// (`vec`, uniform rows on `item`); 0 where there are none, or one is shorter.
    pub read_bytes: u64,
}

/// Geometry overrides of the segmented plans, for tuning experiments:
/// `CLREDUCE_SEGMENT_TUNE=local=256,groups_per_cu=8,per_item=8,lanes=32,unroll=8,chunks=16,split=4,rounds=4,vec=4,scan=1`
/// (any subset). Values
/// out of range are refused, never clamped; a value a plan does not use is ignored by it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct SegmentTune {
    /// Work-group size (`local=N`, a power of two 1..=1024).
    pub local: Option<usize>,
    /// Work-groups per compute unit (`groups_per_cu=N`, 1..=1024): the `fill` of every plan.
    pub groups_per_cu: Option<u64>,
    /// `staged`, `merge` and `runs`: elements (items) per work-item (`per_item=N`, 1..=64;
    /// `runs` takes at most 32); `aligned`: the masked steps per segment (decision 77).
    pub per_item: Option<u64>,
    /// `lanes`: work-items per segment (`lanes=N`, a power of two 1..=1024).
    pub lanes: Option<u64>,
    /// Accumulators per work-item in the strided loops (`unroll=N`, 1, 2, 4, 8 or 16);
    /// `blocks`: columns per work-item; `panels`: rows per step.
    pub unroll: Option<u64>,
    /// `panels`: columns per panel (`panel=N`, 1..=8192), in place of the rule's.
    pub panel: Option<u64>,
    /// `columns`, `blocks` and `panels`: the row chunks (`chunks=N`, 1..=65536; at most the rows), in
    /// place of the rule's; `aligned`: its chunks of elements.
    pub chunks: Option<u64>,
    /// `group`: work-groups per segment (`split=N`, 1..=65536), in place of the rule's (as
    /// many as fill the device when there are fewer segments than `fill`; decision 58).
    pub split: Option<u64>,
    /// `tiles`: tiles per work-group (`rounds=N`, 1..=64), in place of the rule's.
    pub rounds: Option<u64>,
    /// `item` on uniform rows: consecutive elements loaded at once (`vec=N`, 1, 2, 4 or 8; 1
    /// is one at a time), where the rows' length is a multiple and the body's reads at `[i]`
    /// allow it ([`SegmentRequest::read_bytes`]).
    pub vec: Option<u64>,
    /// `runs`: the runs' heads joined by a segmented scan over the work-group (`scan=1`) or
    /// by the work-item where a segment starts (`scan=0`), in place of the rule's
    /// ([`SegmentPlan::scan`]); `aligned`: its scan walk (`scan=1`, the chains `unroll=N`) or
    /// the walk of decision 77 (`scan=0`).
    pub scan: Option<bool>,
    /// `runs` with vector loads: a run's loads issued before the marks (`pre=1`) or where the
    /// walk reads them (`pre=0`), in place of the rule's ([`SegmentPlan::pre`]).
    pub pre: Option<bool>,
    /// `runs`: the lean kernel (`lean=1`) or the other (`lean=0`), in place of the rule's
    /// ([`SegmentPlan::lean`]).
    pub lean: Option<bool>,
    /// `runs` with vector loads: the segment-start checks on every load (`checks=1`) or only
    /// on loads whose elements hold a start (`checks=0`), in place of the rule's
    /// ([`SegmentPlan::checks`]).
    pub checks: Option<bool>,
    /// `runs`: the warp kernel (`warp=1`: barriers over a warp where the device has them,
    /// else over the work-group; `warp=2`: over the work-group), or not (`warp=0`), in place
    /// of the rule's ([`SegmentPlan::warp`]).
    pub warp: Option<u8>,
    /// `runs`: the warp kernel's ranges walked by the register scan kernel (`wscan=1`: each
    /// element combined once in registers, the runs joined by a segmented scan over the warp)
    /// or not (`wscan=0`), in place of the rule's ([`SegmentPlan::wscan`]).
    pub wscan: Option<bool>,
    /// Exact sums per segment in `group` and `lanes`: the speculative loop (`xspec=1`) or the
    /// push loop (`xspec=0`), in place of the rule's (decision 90,
    /// `segment_exact::speculate`).
    pub xspec: Option<bool>,
}

impl SegmentTune {
    /// Parses `key=value` pairs separated by commas; an unknown key or a value out of range is
    /// [`Error::UnknownName`].
    pub fn parse(s: &str) -> Result<SegmentTune> {
        let mut t = SegmentTune::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || Error::UnknownName {
                kind: "segment tuning",
                name: part.to_string(),
                known: vec![
                    "local=1|2|4..1024 (a power of two)",
                    "groups_per_cu=1..1024",
                    "per_item=1..64",
                    "lanes=1|2|4..1024 (a power of two)",
                    "unroll=1|2|4|8|16",
                    "chunks=1..65536",
                    "panel=1..8192",
                    "split=1..65536",
                    "rounds=1..64",
                    "vec=1|2|4|8",
                    "scan=0|1",
                    "pre=0|1",
                    "lean=0|1",
                    "checks=0|1",
                    "warp=0|1|2",
                    "wscan=0|1",
                    "xspec=0|1",
                ],
            };
            let (k, v) = part.split_once('=').ok_or_else(bad)?;
            let v: u64 = v.trim().parse().map_err(|_| bad())?;
            let pow2 = v.is_power_of_two() && v <= 1024;
            match k.trim() {
                "local" if pow2 => t.local = Some(v as usize),
                "groups_per_cu" if (1..=1024).contains(&v) => t.groups_per_cu = Some(v),
                "per_item" if (1..=64).contains(&v) => t.per_item = Some(v),
                "lanes" if pow2 => t.lanes = Some(v),
                "unroll" if pow2 && v <= 16 => t.unroll = Some(v),
                "chunks" if (1..=65536).contains(&v) => t.chunks = Some(v),
                "panel" if (1..=8192).contains(&v) => t.panel = Some(v),
                "split" if (1..=65536).contains(&v) => t.split = Some(v),
                "rounds" if (1..=64).contains(&v) => t.rounds = Some(v),
                "vec" if pow2 && v <= 8 => t.vec = Some(v),
                "scan" if v <= 1 => t.scan = Some(v == 1),
                "pre" if v <= 1 => t.pre = Some(v == 1),
                "lean" if v <= 1 => t.lean = Some(v == 1),
                "checks" if v <= 1 => t.checks = Some(v == 1),
                "warp" if v <= 2 => t.warp = Some(v as u8),
                "wscan" if v <= 1 => t.wscan = Some(v == 1),
                "xspec" if v <= 1 => t.xspec = Some(v == 1),
                _ => return Err(bad()),
            }
        }
        Ok(t)
    }
    /// The overrides in `CLREDUCE_SEGMENT_TUNE` (none where unset).
    pub fn from_env() -> Result<SegmentTune> {
        match std::env::var("CLREDUCE_SEGMENT_TUNE") {
            Ok(s) => SegmentTune::parse(&s),
            Err(_) => Ok(SegmentTune::default()),
        }
    }
}

/// The segment part of a [`Plan`](super::Plan) (`Plan::segment`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentPlan {
    /// The layout.
    pub layout: SegmentLayout,
    /// Number of segments.
    pub segments: u64,
    /// Mean segment length (elements / segments), what the choice was made on.
    pub mean_len: u64,
    /// The algorithm.
    pub algo: SegmentAlgo,
    /// Tiles and chunks: elements per tile; columns and blocks: rows per chunk; staged: rows
    /// per stage;
    /// stripes: the first pass's work-groups; group: work-groups per segment (1: one pass);
    /// 0 otherwise.
    pub tile: u64,
    /// Tiles: the longest segment one work-item reduces alone; 0 otherwise.
    pub short: u64,
    /// `staged`: elements per work-item in a stage; `merge`: items per work-item; `runs`:
    /// elements per run; 0 otherwise.
    pub per_item: u64,
    /// `lanes`: work-items per segment; 0 otherwise.
    pub lanes: u64,
    /// Accumulators per work-item in the strided loops (loads in flight); `item` with `vec`:
    /// rows per work-item and step; `blocks`: columns per work-item (one accumulator each).
    pub unroll: u64,
    /// `item` on uniform rows and `runs`: consecutive elements each read at `[i]` loads at
    /// once (`Plan::vec`); 1 otherwise.
    pub vec: u64,
    /// `runs`: the heads of the runs a segment covers are joined by a segmented scan over the
    /// work-group (log2 of its size steps, every work-item at once) instead of one work-item
    /// folding them in turn (decision 65); `aligned`: the scan walk, `unroll` chunks per
    /// work-item in lock step (decision 87); false for the other plans.
    pub scan: bool,
    /// `runs` with vector loads: each work-item issues its whole run's loads before the marks,
    /// so their latency overlaps the offsets' reads and the barrier (decision 71); false for
    /// the other plans.
    pub pre: bool,
    /// `runs`: the lean kernel: the walk writes each piece of a run to local memory and stores
    /// nothing, the work-item that marked a segment finishes and stores it (decision 72);
    /// false for the other plans.
    pub lean: bool,
    /// `runs` with vector loads: every load of a run runs the segment-start checks, one code
    /// path for the warp, instead of a check-free path for loads where no segment starts
    /// (kernels/segment_runs.cl `CLR_RUNS_SPLIT=0`, decision 78); false for the other plans.
    pub checks: bool,
    /// `runs`: the warp kernel's work-items per barrier (kernels/segment_warp.cl, decision 81):
    /// the lean kernel's walk with each warp on its own (32 where the device has PTX warp
    /// barriers, else the work-group), the segments cut between its sub-tiles joined in the
    /// first pass (`tile` is then a warp's range); 0 where it does not run.
    pub warp: u64,
    /// `runs` with the warp kernel's ranges: the register scan kernel (kernels/segment_scan.cl,
    /// decision 84) walks them: each element combined once in registers, the offsets read in
    /// order (no search per sub-tile), the runs joined by a segmented scan over the warp (PTX
    /// shuffles where `warp` is 32 below the work-group, local memory elsewhere); false for the
    /// other plans.
    pub wscan: bool,
    /// Per variable: argmin/argmax indices within the segment instead of global ones.
    pub index_in_segment: Vec<bool>,
    /// Whether the launch was a span reduction whose subscript is `i / C` (the span idiom),
    /// planned as uniform segments of `C`.
    pub span_idiom: bool,
    /// Why this algorithm and geometry.
    pub reason: String,
}

impl fmt::Display for SegmentPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = match self.layout {
            SegmentLayout::Uniform { len } => format!("uniform segments of {len}"),
            SegmentLayout::Offsets => "CSR offsets".to_string(),
            SegmentLayout::Columns { rows, cols } => format!("columns of a {rows} x {cols} array"),
        };
        writeln!(
            f,
            "  segmented: {} segments ({layout}, mean length {}), plan {}",
            self.segments, self.mean_len, self.algo
        )?;
        writeln!(f, "    because {}", self.reason)
    }
}

/// The geometry of one segment plan: what `plan_segments` writes into the plan.
pub(super) struct Geometry {
    pub(super) groups: u64,
    pub(super) passes: usize,
    /// Tiles and chunks: elements per tile; columns: rows per chunk; staged: rows per stage;
    /// stripes: the first pass's work-groups.
    pub(super) tile: u64,
    pub(super) short: u64,
    pub(super) per_item: u64,
    pub(super) lanes: u64,
    /// `runs`: the lean kernel.
    pub(super) lean: bool,
    /// `runs`: the warp kernel's work-items per barrier (0: not).
    pub(super) warp: u64,
    /// `runs`: the register scan kernel over the warp kernel's ranges.
    pub(super) wscan: bool,
    pub(super) reason: String,
}

impl Geometry {
    pub(super) fn new(groups: u64, passes: usize, tile: u64, reason: String) -> Geometry {
        Geometry {
            groups: groups.max(1),
            passes,
            tile,
            short: 0,
            per_item: 0,
            lanes: 0,
            lean: false,
            warp: 0,
            wscan: false,
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_tune_parses_and_refuses() {
        let t = SegmentTune::parse(
            "local=512, groups_per_cu=16,per_item=4,lanes=8,unroll=2,chunks=33,vec=4,scan=1,lean=0,checks=1,warp=2,wscan=1",
        )
        .unwrap();
        assert_eq!(
            (t.vec, t.scan, t.lean, t.checks),
            (Some(4), Some(true), Some(false), Some(true))
        );
        assert_eq!(t.warp, Some(2));
        assert_eq!(t.wscan, Some(true));
        assert_eq!(
            (
                t.local,
                t.groups_per_cu,
                t.per_item,
                t.lanes,
                t.unroll,
                t.chunks
            ),
            (Some(512), Some(16), Some(4), Some(8), Some(2), Some(33))
        );
        assert_eq!(SegmentTune::parse("").unwrap(), SegmentTune::default());
        for bad in [
            "local=300",
            "lanes=0",
            "per_item=65",
            "unroll=32",
            "groups_per_cu=0",
            "chunks=0",
            "chunks=65537",
            "split=0",
            "rounds=65",
            "vec=16",
            "vec=3",
            "scan=2",
            "lean=2",
            "checks=2",
            "warp=3",
            "wg=256",
            "local",
        ] {
            assert!(SegmentTune::parse(bad).is_err(), "{bad}");
        }
    }
}
