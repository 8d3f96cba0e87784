//! Reduction variables: [`reduction`] and friends (SYCL's `sycl::reduction`), with names,
//! `initialize_to_identity`, spans, argmin/argmax index buffers and segmentations ([`Segments`],
//! [`Axis`]); [`Reductions`] for several in one launch.

use crate::ops::Operator;
use crate::runtime::buffer::{AnyBuffer, Buffer};
use crate::runtime::launch::Mem;
use crate::types::ElemType;
use std::sync::Arc;

/// The buffer a reduction writes, as the launch needs it.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) mem: Arc<Mem>,
    pub(crate) ty: ElemType,
    pub(crate) len: usize,
    pub(crate) device: usize,
    pub(crate) device_label: String,
}

impl Target {
    pub(crate) fn of<B: AnyBuffer>(buf: &B) -> Target {
        Target {
            mem: buf.mem(),
            ty: buf.elem_type(),
            len: buf.len(),
            device: buf.device_index(),
            device_label: buf.device_label(),
        }
    }
}

/// One reduction variable: a device buffer whose first element (or first `span` elements) is
/// the result, an operator, and the reducer's name in the kernel body (default `sum` for the
/// first variable, `sum1`, `sum2`, ... for later ones).
#[derive(Clone)]
pub struct Reduction {
    pub(crate) target: Target,
    /// argmin/argmax: the u64 buffer that receives the index.
    pub(crate) index: Option<Target>,
    pub(crate) op: Operator,
    pub(crate) span: Option<usize>,
    pub(crate) name: Option<String>,
    pub(crate) init_to_identity: bool,
    /// Raw mode (crate-internal, the multi-device layer's shares): the buffer the last
    /// work-group writes the raw partial to (an exact sum's limbs as `i64`, an identity-less
    /// accumulator's `has` flag as `u64`), passed as the variable's aux argument.
    pub(crate) raw: Option<Target>,
    /// A segmented or axis reduction: one result per segment (`src/api/segment.rs`).
    pub(crate) seg: Option<SegSpec>,
    /// argmin/argmax per segment: the index within the segment instead of the global one.
    pub(crate) index_in_segment: bool,
}

/// Creates a reduction of `buf[0]` with `op` (SYCL's `sycl::reduction(buf, op)`): a built-in
/// [`Op`](crate::Op) or a [`CustomOp`](crate::CustomOp).
///
/// The buffer's first element is the initial value and is part of the result (SYCL 2020),
/// unless [`Reduction::initialize_to_identity`]. Several reductions run in one launch (a `Vec`
/// or a tuple of them); the body names them `sum`, `sum1`, ... or as [`Reduction::name`] says.
///
/// ```
/// use clreduce::{reduction, Kernel, Op, Queue, Range};
/// # fn main() -> clreduce::Result<()> {
/// let queue = Queue::default()?;
/// let x = queue.buffer_from(&[4i32, -2, 7])?;
/// let s = queue.buffer_from(&[100i32])?; // the initial value is included
/// let lo = queue.buffer_from(&[0i32])?;
/// queue.parallel_for_reduce(
///     Range::new(3),
///     vec![
///         reduction(&s, Op::Plus),
///         reduction(&lo, Op::Minimum).name("lo").initialize_to_identity(),
///     ],
///     Kernel::new("sum += x[i]; combine(lo, x[i]);").arg("x", &x),
/// )?;
/// assert_eq!((s.get(0)?, lo.get(0)?), (109, -2));
/// # Ok(()) }
/// ```
pub fn reduction<B: AnyBuffer>(buf: &B, op: impl Into<Operator>) -> Reduction {
    Reduction {
        target: Target::of(buf),
        index: None,
        op: op.into(),
        span: None,
        name: None,
        init_to_identity: false,
        raw: None,
        seg: None,
        index_in_segment: false,
    }
}

/// A span reduction (SYCL's `reduction(span<T>(buf, len), op)`): `len` independent
/// reductions into `buf[0..len]`. The body combines element `j` with `hist[j] += v` (for ops
/// with that shorthand), `combine(hist[j], v)` or `hist_combine(j, v)`.
///
/// `len` 0 is [`Error::InvalidRange`](crate::Error::InvalidRange), a buffer shorter than `len`
/// [`Error::BufferTooShort`](crate::Error::BufferTooShort). The device does not check the
/// body's indices: one outside `0..len` writes out of bounds.
///
/// ```
/// use clreduce::{reduction_span, Kernel, Op, Queue, Range};
/// # fn main() -> clreduce::Result<()> {
/// let queue = Queue::default()?;
/// let keys = queue.buffer_from(&[1u32, 3, 1, 0, 1])?;
/// let hist = queue.buffer_from(&[0u32; 4])?;
/// queue.parallel_for_reduce(
///     Range::new(5),
///     reduction_span(&hist, 4, Op::Plus).name("hist"),
///     Kernel::new("hist[keys[i]] += 1;").arg("keys", &keys),
/// )?;
/// assert_eq!(hist.to_vec()?, [1, 3, 0, 1]);
/// # Ok(()) }
/// ```
pub fn reduction_span<B: AnyBuffer>(buf: &B, len: usize, op: impl Into<Operator>) -> Reduction {
    Reduction {
        span: Some(len),
        ..reduction(buf, op)
    }
}

fn reduction_arg<B: AnyBuffer>(value: &B, index: &Buffer<u64>, op: Operator) -> Reduction {
    Reduction {
        index: Some(Target::of(index)),
        ..reduction(value, op)
    }
}

/// The smallest value and its index (the lowest index among equal values): the body calls
/// `combine(r, value, index)`; the value lands in `value[0]` and the index in `index[0]`. With
/// `initialize_to_identity` an empty range gives (the type's maximum or +inf, u64::MAX).
///
/// ```
/// use clreduce::{reduction_argmin, Kernel, Queue, Range};
/// # fn main() -> clreduce::Result<()> {
/// let queue = Queue::default()?;
/// let x = queue.buffer_from(&[3.5f32, -1.0, 8.0, -1.0])?;
/// let (value, index) = (queue.buffer_from(&[0.0f32])?, queue.buffer_from(&[0u64])?);
/// queue.parallel_for_reduce(
///     Range::new(4),
///     reduction_argmin(&value, &index).name("best").initialize_to_identity(),
///     Kernel::new("combine(best, x[i], i);").arg("x", &x),
/// )?;
/// assert_eq!((value.get(0)?, index.get(0)?), (-1.0, 1));
/// # Ok(()) }
/// ```
pub fn reduction_argmin<B: AnyBuffer>(value: &B, index: &Buffer<u64>) -> Reduction {
    reduction_arg(value, index, Operator::ArgMin)
}

/// The largest value and its index (the lowest index among equal values); see
/// [`reduction_argmin`].
pub fn reduction_argmax<B: AnyBuffer>(value: &B, index: &Buffer<u64>) -> Reduction {
    reduction_arg(value, index, Operator::ArgMax)
}

impl Reduction {
    /// The reducer's name in the kernel body.
    pub fn name(mut self, name: &str) -> Reduction {
        self.name = Some(name.to_string());
        self
    }
    /// SYCL's `property::reduction::initialize_to_identity`: the variable's initial value is
    /// not part of the result.
    pub fn initialize_to_identity(mut self) -> Reduction {
        self.init_to_identity = true;
        self
    }
    /// Its operator.
    pub fn op(&self) -> &Operator {
        &self.op
    }
    /// The element type of its result buffer.
    pub fn elem_type(&self) -> ElemType {
        self.target.ty
    }
    /// The span length, for span reductions.
    pub fn span(&self) -> Option<usize> {
        self.span
    }
    pub(crate) fn elems(&self) -> usize {
        self.span.unwrap_or(1)
    }
    /// Raw mode (crate-internal): the last work-group writes the raw partial into `raw`
    /// instead of combining it into the variable (kernels/var_exact.cl, kernels/var.cl
    /// `Rk_XRAW`). Only exact sums and identity-less variables take it (`BadArgument`
    /// otherwise).
    pub(crate) fn raw_into<B: AnyBuffer>(mut self, raw: &B) -> Reduction {
        self.raw = Some(Target::of(raw));
        self
    }
}

/// How a segmented reduction cuts the range `0..n` into segments: one result per segment, the
/// body unchanged (`sum += x[i]` contributes `x[i]` to the segment that holds `i`), result `k`
/// in `buf[k]`.
///
/// ```
/// use clreduce::{reduction, Kernel, Op, Queue, Range, Segments};
/// # fn main() -> clreduce::Result<()> {
/// let queue = Queue::default()?;
/// let x = queue.buffer_from(&[1i32, 2, 3, 4, 5, 6])?;
/// let rows = queue.buffer_from(&[0i32; 2])?;
/// queue.parallel_for_reduce(
///     Range::new(6),
///     reduction(&rows, Op::Plus).segments(Segments::uniform(3)),
///     Kernel::new("sum += x[i];").arg("x", &x),
/// )?;
/// assert_eq!(rows.to_vec()?, [6, 15]);
/// // CSR offsets: segment k is begin[k]..begin[k+1]; empty segments are allowed.
/// let begin = queue.buffer_from(&[0u64, 1, 1, 6])?;
/// let parts = queue.buffer_from(&[0i32; 3])?;
/// queue.parallel_for_reduce(
///     Range::new(6),
///     reduction(&parts, Op::Plus).segments(Segments::offsets(&begin)).initialize_to_identity(),
///     Kernel::new("sum += x[i];").arg("x", &x),
/// )?;
/// assert_eq!(parts.to_vec()?, [1, 0, 20]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Segments(SegSpec);

impl Segments {
    /// Segments of `len` consecutive indices: `n / len` results. `len` 0, or an `n` that is not
    /// a multiple of `len`, is [`Error::BadSegments`](crate::Error::BadSegments).
    pub fn uniform(len: u64) -> Segments {
        Segments(SegSpec::Uniform(len))
    }
    /// CSR offsets: `r + 1` ascending `u64` entries; segment `k` is `begin[k]..begin[k+1]`
    /// (empty when equal), `r` results. Indices outside `begin[0]..begin[r]` belong to no
    /// segment and are not run. The offsets are read and checked on the host before anything
    /// runs: fewer than 2 entries, a descending pair or an entry past `n` is
    /// [`Error::BadSegments`](crate::Error::BadSegments), with nothing written.
    pub fn offsets(begin: &Buffer<u64>) -> Segments {
        Segments(SegSpec::Offsets(Target::of(begin)))
    }
}

/// Which axis of a 2-D or 3-D [`Range`](crate::Range) an axis reduction removes (row-major,
/// the last dimension varies fastest; `item` in the body as in any launch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// Reduce along the last dimension: `[r, c]` gives `r` results (row sums), `[a, b, c]`
    /// gives `a * b`.
    Last,
    /// Reduce along the first dimension: `[r, c]` gives `c` results (column sums), `[a, b, c]`
    /// gives `b * c` (result `j * c + k` for `item.id = [_, j, k]`).
    First,
}

/// A reduction's segmentation as given.
#[derive(Clone)]
pub(crate) enum SegSpec {
    Uniform(u64),
    /// The span idiom's `i / C` (`src/api/span_idiom.rs`): uniform segments of C.
    Span(u64),
    Offsets(Target),
    Axis(Axis),
}

impl SegSpec {
    pub(super) fn same(&self, other: &SegSpec) -> bool {
        match (self, other) {
            (SegSpec::Uniform(a), SegSpec::Uniform(b)) | (SegSpec::Span(a), SegSpec::Span(b)) => {
                a == b
            }
            (SegSpec::Offsets(a), SegSpec::Offsets(b)) => Arc::ptr_eq(&a.mem, &b.mem),
            (SegSpec::Axis(a), SegSpec::Axis(b)) => a == b,
            _ => false,
        }
    }
}

impl Reduction {
    /// One result per segment (`buf[k]` for segment `k`) instead of one in all: see
    /// [`Segments`]. Every variable of the launch must have the same segmentation.
    pub fn segments(mut self, s: Segments) -> Reduction {
        self.seg = Some(s.0);
        self
    }
    /// One result per row (`Axis::Last`) or per column (`Axis::First`) of the launch's 2-D or
    /// 3-D range; see [`Axis`].
    ///
    /// ```
    /// use clreduce::{reduction, Axis, Kernel, Op, Queue, Range};
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = Queue::default()?;
    /// let a = queue.buffer_from(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?; // 2 x 3
    /// let cols = queue.buffer_from(&[0.0f32; 3])?;
    /// queue.parallel_for_reduce(
    ///     Range::new_2d(2, 3),
    ///     reduction(&cols, Op::Plus).axis(Axis::First).initialize_to_identity(),
    ///     Kernel::new("sum += a[item.linear_id];").arg("a", &a),
    /// )?;
    /// assert_eq!(cols.to_vec()?, [5.0, 7.0, 9.0]);
    /// # Ok(()) }
    /// ```
    pub fn axis(mut self, axis: Axis) -> Reduction {
        self.seg = Some(SegSpec::Axis(axis));
        self
    }
    /// argmin/argmax of a segmented reduction: the index buffer gets the index within the
    /// segment (`i - begin(k)`; for `Axis::First` the row) instead of the global index the
    /// body passed.
    pub fn index_in_segment(mut self) -> Reduction {
        self.index_in_segment = true;
        self
    }
}

/// One or more reductions for one launch.
pub struct Reductions(pub Vec<Reduction>);

impl From<Reduction> for Reductions {
    fn from(r: Reduction) -> Self {
        Reductions(vec![r])
    }
}
impl From<Vec<Reduction>> for Reductions {
    fn from(v: Vec<Reduction>) -> Self {
        Reductions(v)
    }
}
impl From<(Reduction, Reduction)> for Reductions {
    fn from(v: (Reduction, Reduction)) -> Self {
        Reductions(vec![v.0, v.1])
    }
}
impl From<(Reduction, Reduction, Reduction)> for Reductions {
    fn from(v: (Reduction, Reduction, Reduction)) -> Self {
        Reductions(vec![v.0, v.1, v.2])
    }
}
