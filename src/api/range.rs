//! Iteration spaces: SYCL's `range` ([`Range`]) and `nd_range` ([`NdRange`]) in 1, 2 or 3
//! dimensions, and [`Form`], either of them, as the planner sees it.

use crate::error::{Error, Result};
use crate::plan::{FormRequest, Shape};

/// A SYCL `range` in 1, 2 or 3 dimensions: `n` work-items (the product of the extents), each
/// with a linear id `i` in `0..n` and, through `item`, its id per dimension (row-major: the
/// last dimension varies fastest, as in SYCL); clreduce picks the geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Total work-items (read-only: build ranges with the constructors).
    pub n: u64,
    shape: Shape,
}

impl Range {
    /// `range<1>(n)`: `n` work-items with ids `0..n`. `u64` and arrays convert too:
    /// `Range::from(1000u64)`, `Range::from([3, 4])`.
    pub fn new(n: u64) -> Range {
        Range {
            n,
            shape: Shape::linear(n, 1),
        }
    }
    /// `range<2>(a, b)`.
    pub fn new_2d(a: u64, b: u64) -> Range {
        Range::dims(&[a, b])
    }
    /// `range<3>(a, b, c)`.
    pub fn new_3d(a: u64, b: u64, c: u64) -> Range {
        Range::dims(&[a, b, c])
    }
    fn dims(e: &[u64]) -> Range {
        let mut global = [1u64; 3];
        global[..e.len()].copy_from_slice(e);
        Range {
            n: e.iter().product(),
            shape: Shape {
                rank: e.len(),
                global,
                local: [1; 3],
            },
        }
    }
    /// The extents, one per dimension.
    pub fn extents(&self) -> &[u64] {
        &self.shape.global[..self.shape.rank]
    }
}

impl From<u64> for Range {
    fn from(n: u64) -> Range {
        Range::new(n)
    }
}
impl From<[u64; 2]> for Range {
    fn from(e: [u64; 2]) -> Range {
        Range::dims(&e)
    }
}
impl From<[u64; 3]> for Range {
    fn from(e: [u64; 3]) -> Range {
        Range::dims(&e)
    }
}

/// A SYCL `nd_range` in 1, 2 or 3 dimensions: a global and a work-group (local) extent per
/// dimension. The body sees OpenCL's `get_global_id(d)`, `get_local_id(d)`, `get_group_id(d)`,
/// `get_global_size(d)`, `get_local_size(d)`, `get_num_groups(d)` with the user's dimensions
/// (clreduce launches the equivalent 1-D geometry and maps the ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdRange {
    /// Total work-items.
    pub global: u64,
    /// Work-items per work-group.
    pub local: usize,
    shape: Shape,
}

impl NdRange {
    /// `nd_range<1>(global, local)`: `global` work-items in work-groups of `local`. The launch
    /// fails with [`Error::NdRangeNotDivisible`] when `local` does not divide `global`,
    /// [`Error::InvalidRange`] when it is 0, and [`Error::WorkGroupTooLarge`] above the device's
    /// limit.
    pub fn new(global: u64, local: usize) -> NdRange {
        NdRange {
            global,
            local,
            shape: Shape::linear(global, local),
        }
    }
    /// `nd_range<2>(range<2>(g0, g1), range<2>(l0, l1))`.
    pub fn new_2d(global: [u64; 2], local: [usize; 2]) -> NdRange {
        NdRange::dims(&global, &local)
    }
    /// `nd_range<3>(...)`.
    pub fn new_3d(global: [u64; 3], local: [usize; 3]) -> NdRange {
        NdRange::dims(&global, &local)
    }
    fn dims(g: &[u64], l: &[usize]) -> NdRange {
        let mut shape = Shape {
            rank: g.len(),
            global: [1; 3],
            local: [1; 3],
        };
        shape.global[..g.len()].copy_from_slice(g);
        shape.local[..l.len()].copy_from_slice(l);
        NdRange {
            global: g.iter().product(),
            local: l.iter().product(),
            shape,
        }
    }
    /// The global extents, one per dimension.
    pub fn global_extents(&self) -> &[u64] {
        &self.shape.global[..self.shape.rank]
    }
    /// The work-group extents, one per dimension.
    pub fn local_extents(&self) -> &[usize] {
        &self.shape.local[..self.shape.rank]
    }
}

/// Either form of iteration space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A `range`: clreduce picks the geometry.
    Range(Range),
    /// An `nd_range`: the user's geometry.
    NdRange(NdRange),
}

impl From<Range> for Form {
    fn from(r: Range) -> Form {
        Form::Range(r)
    }
}
impl From<NdRange> for Form {
    fn from(r: NdRange) -> Form {
        Form::NdRange(r)
    }
}
impl From<u64> for Form {
    fn from(n: u64) -> Form {
        Form::Range(Range::new(n))
    }
}
impl From<[u64; 2]> for Form {
    fn from(e: [u64; 2]) -> Form {
        Form::Range(e.into())
    }
}
impl From<[u64; 3]> for Form {
    fn from(e: [u64; 3]) -> Form {
        Form::Range(e.into())
    }
}

impl Form {
    pub(crate) fn request(&self) -> FormRequest {
        match *self {
            Form::Range(r) => FormRequest::Range { n: r.n },
            Form::NdRange(r) => FormRequest::NdRange {
                global: r.global,
                local: r.local,
            },
        }
    }
    pub(crate) fn shape(&self) -> Shape {
        match *self {
            Form::Range(r) => r.shape,
            Form::NdRange(r) => r.shape,
        }
    }
    /// Per-dimension checks of an nd_range (the planner sees only the linear sizes).
    pub(crate) fn validate(&self) -> Result<()> {
        let Form::NdRange(r) = *self else {
            return Ok(());
        };
        let sh = r.shape;
        if sh.rank > 1 {
            let (g, l) = (&sh.global[..sh.rank], &sh.local[..sh.rank]);
            if l.contains(&0) {
                return Err(Error::InvalidRange {
                    reason: format!("local size {l:?} has a zero extent"),
                });
            }
            if g.iter().zip(l).any(|(&g, &l)| g % l as u64 != 0) {
                return Err(Error::NdRangeNotDivisible {
                    global: g.iter().map(|&x| x as usize).collect(),
                    local: l.to_vec(),
                });
            }
        }
        Ok(())
    }
    pub(crate) fn size(&self) -> u64 {
        match *self {
            Form::Range(r) => r.n,
            Form::NdRange(r) => r.global,
        }
    }
}
