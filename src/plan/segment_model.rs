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
    /// `Axis::First`: a work-item per column, rows split into chunks across work-groups when
    /// there are few columns, chunks combined by a second pass.
    Columns,
    /// Equal chunks of consecutive elements, one per work-item, each walked in one flat loop
    /// that finishes a segment whenever it reaches its end; pieces cut by chunk boundaries
    /// finished by a second pass, as in `Tiles`. Balanced whatever the lengths, and every
    /// work-item runs the same number of iterations. Only when forced: on Intel's CPU runtime
    /// its lanes gather from chunks far apart (4.8-11x the plain sum at 2^22, against 0.9-1.3x
    /// for `item` on uniform rows; examples/segment_bench.rs, a shared 2-core machine).
    Chunks,
}

impl SegmentAlgo {
    /// Every algorithm, in declaration order.
    pub const ALL: [SegmentAlgo; 5] = [
        SegmentAlgo::Item,
        SegmentAlgo::Group,
        SegmentAlgo::Tiles,
        SegmentAlgo::Columns,
        SegmentAlgo::Chunks,
    ];
    /// Its name in plans and `CLREDUCE_SEGMENT`: `item`, `group`, `tiles`, `columns` or
    /// `chunks`.
    pub fn name(self) -> &'static str {
        match self {
            SegmentAlgo::Item => "item",
            SegmentAlgo::Group => "group",
            SegmentAlgo::Tiles => "tiles",
            SegmentAlgo::Columns => "columns",
            SegmentAlgo::Chunks => "chunks",
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
    /// Tiles: elements per tile; columns: rows per chunk; 0 otherwise.
    pub tile: u64,
    /// Tiles: the longest segment one work-item reduces alone; 0 otherwise.
    pub short: u64,
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
