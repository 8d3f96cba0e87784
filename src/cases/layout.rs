//! Where a case's results go: one value per variable (`Flat`), or one per segment (issue 26):
//! the rows or the columns of a row-major R x C array (`TYPE-rows-RxC`, `TYPE-cols-RxC`), or
//! CSR segments of seeded heavy-tailed lengths over the bench's n (`TYPE-ragged-MEAN`, the
//! lengths of `clreduce reduce --ragged`). The launch range, the result count, the offsets and
//! each segment's elements for the host reference.

use crate::check::ragged::ragged_offsets;
use crate::types::HostVec;
use crate::{Range, SegmentAlgo};

/// The seed of a ragged case's segment lengths (that of `examples/segment_bench.rs`).
pub const RAGGED_SEED: u64 = 0x5E6;

/// A case's segment layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One result per variable: the ordinary reductions.
    Flat,
    /// One result per row of a row-major `rows x cols` array (`Axis::Last`).
    Rows {
        /// Rows: the results.
        rows: u64,
        /// Columns: the segment length.
        cols: u64,
    },
    /// One result per column (`Axis::First`).
    Cols {
        /// Rows: the reduced extent.
        rows: u64,
        /// Columns: the results.
        cols: u64,
    },
    /// CSR offsets of heavy-tailed lengths of this mean over n, a quarter of them empty
    /// (`Segments::offsets`).
    Ragged {
        /// The mean segment length.
        mean: u64,
    },
}

/// `N` or `2^K`.
fn parse_num(s: &str) -> Option<u64> {
    match s.split_once('^') {
        Some(("2", e)) => e.parse::<u32>().ok().and_then(|e| 1u64.checked_shl(e)),
        Some(_) => None,
        None => s.replace('_', "").parse().ok(),
    }
}

impl Layout {
    /// Splits `PREFIX-rows-RxC`, `PREFIX-cols-RxC` or `PREFIX-ragged-MEAN` into the prefix
    /// and the layout (`None` without such a suffix; `Err` for a malformed one).
    pub fn split(s: &str) -> Result<Option<(&str, Layout)>, String> {
        for kind in ["rows", "cols", "ragged"] {
            let Some((prefix, shape)) = s.split_once(&format!("-{kind}-")) else {
                continue;
            };
            if kind == "ragged" {
                let mean = parse_num(shape).filter(|&m| m >= 1).ok_or_else(|| {
                    format!("bad case {s:?} (expected TYPE-ragged-MEAN, MEAN at least 1)")
                })?;
                return Ok(Some((prefix, Layout::Ragged { mean })));
            }
            let rc = shape.split_once('x').and_then(|(r, c)| {
                let (r, c) = (parse_num(r)?, parse_num(c)?);
                (r >= 1 && c >= 1 && r.checked_mul(c).is_some()).then_some((r, c))
            });
            let (rows, cols) = rc.ok_or_else(|| {
                format!("bad case {s:?} (expected TYPE-{kind}-RxC, R and C at least 1, N or 2^K)")
            })?;
            let l = match kind {
                "rows" => Layout::Rows { rows, cols },
                _ => Layout::Cols { rows, cols },
            };
            return Ok(Some((prefix, l)));
        }
        Ok(None)
    }

    /// The name's suffix (`-rows-16384x16384`, `-ragged-16`), empty for `Flat`.
    pub fn suffix(&self) -> String {
        match self {
            Layout::Flat => String::new(),
            Layout::Rows { rows, cols } => format!("-rows-{rows}x{cols}"),
            Layout::Cols { rows, cols } => format!("-cols-{rows}x{cols}"),
            Layout::Ragged { mean } => format!("-ragged-{mean}"),
        }
    }

    /// Whether results are per segment.
    pub fn is_segmented(&self) -> bool {
        *self != Layout::Flat
    }

    /// The element count a shape fixes (R x C), whatever the bench's sizes.
    pub fn fixed_n(&self) -> Option<u64> {
        match self {
            Layout::Rows { rows, cols } | Layout::Cols { rows, cols } => Some(rows * cols),
            _ => None,
        }
    }

    /// The launch range over `n` elements: 2-D for rows and columns.
    pub fn range(&self, n: u64) -> Range {
        match self {
            Layout::Rows { rows, cols } | Layout::Cols { rows, cols } => Range::new_2d(*rows, *cols),
            _ => Range::new(n),
        }
    }

    /// The CSR offsets of a ragged layout over `n` (`None` for the others).
    pub fn offsets(&self, n: u64) -> Option<Vec<u64>> {
        match self {
            Layout::Ragged { mean } => Some(ragged_offsets(n, *mean, RAGGED_SEED)),
            _ => None,
        }
    }

    /// Results per variable over `n` elements (`offsets`: [`Layout::offsets`]).
    pub fn results(&self, offsets: Option<&[u64]>) -> usize {
        match (self, offsets) {
            (Layout::Flat, _) => 1,
            (Layout::Rows { rows, .. }, _) => *rows as usize,
            (Layout::Cols { cols, .. }, _) => *cols as usize,
            (Layout::Ragged { .. }, Some(off)) => off.len().saturating_sub(1),
            (Layout::Ragged { .. }, None) => 0,
        }
    }

    /// The segment plans a bench forces in turn on this layout (every one that applies).
    pub fn algos(&self) -> Vec<SegmentAlgo> {
        match self {
            Layout::Flat => Vec::new(),
            Layout::Cols { .. } => vec![
                SegmentAlgo::Columns,
                SegmentAlgo::Stripes,
                SegmentAlgo::Blocks,
                SegmentAlgo::Panels,
            ],
            Layout::Rows { .. } => vec![
                SegmentAlgo::Item,
                SegmentAlgo::Group,
                SegmentAlgo::Tiles,
                SegmentAlgo::Chunks,
                SegmentAlgo::Staged,
                SegmentAlgo::Lanes,
                SegmentAlgo::Aligned,
            ],
            // Merge and runs take CSR offsets only.
            Layout::Ragged { .. } => vec![
                SegmentAlgo::Item,
                SegmentAlgo::Group,
                SegmentAlgo::Tiles,
                SegmentAlgo::Chunks,
                SegmentAlgo::Staged,
                SegmentAlgo::Lanes,
                SegmentAlgo::Merge,
                SegmentAlgo::Runs,
                SegmentAlgo::Aligned,
            ],
        }
    }

    /// The global indices of segment `k`'s elements, in order.
    pub fn members(&self, offsets: Option<&[u64]>, k: usize) -> Vec<usize> {
        match (self, offsets) {
            (Layout::Rows { cols, .. }, _) => {
                let c = *cols as usize;
                (k * c..(k + 1) * c).collect()
            }
            (Layout::Cols { rows, cols }, _) => {
                (0..*rows as usize).map(|r| r * *cols as usize + k).collect()
            }
            (Layout::Ragged { .. }, Some(off)) => (off[k] as usize..off[k + 1] as usize).collect(),
            _ => Vec::new(),
        }
    }
}

/// The elements of `data` at `idx`, in order.
pub fn gather(data: &HostVec, idx: &[usize]) -> HostVec {
    fn pick<T: Copy>(v: &[T], idx: &[usize]) -> Vec<T> {
        idx.iter().map(|&i| v[i]).collect()
    }
    match data {
        HostVec::I32(v) => HostVec::I32(pick(v, idx)),
        HostVec::U32(v) => HostVec::U32(pick(v, idx)),
        HostVec::I64(v) => HostVec::I64(pick(v, idx)),
        HostVec::U64(v) => HostVec::U64(pick(v, idx)),
        HostVec::F32(v) => HostVec::F32(pick(v, idx)),
        HostVec::F64(v) => HostVec::F64(pick(v, idx)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_parse() {
        assert_eq!(
            Layout::split("f32-rows-2^4x3").unwrap(),
            Some(("f32", Layout::Rows { rows: 16, cols: 3 }))
        );
        assert_eq!(
            Layout::split("i32-max-cols-5x7").unwrap(),
            Some(("i32-max", Layout::Cols { rows: 5, cols: 7 }))
        );
        assert_eq!(
            Layout::split("f64-ragged-256").unwrap(),
            Some(("f64", Layout::Ragged { mean: 256 }))
        );
        assert_eq!(Layout::split("f32-sum").unwrap(), None);
        for bad in ["f32-rows-0x4", "f32-rows-4", "f32-cols-2^70x1", "f32-ragged-0", "f32-rows-3x2^64"] {
            assert!(Layout::split(bad).is_err(), "{bad}");
        }
        let c = Layout::Cols { rows: 3, cols: 4 };
        assert_eq!(c.members(None, 1), vec![1, 5, 9]);
        assert_eq!(c.results(None), 4);
        let r = Layout::Ragged { mean: 16 };
        let off = r.offsets(10_000).unwrap();
        assert_eq!((off[0], *off.last().unwrap()), (0, 10_000));
        let sizes: Vec<usize> = (0..r.results(Some(&off)))
            .map(|k| r.members(Some(&off), k).len())
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), 10_000);
        assert!(sizes.contains(&0), "a quarter of the segments are empty");
    }
}
