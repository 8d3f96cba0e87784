//! Reduction variables: [`reduction`] and friends (SYCL's `sycl::reduction`), with names,
//! `initialize_to_identity`, spans and argmin/argmax index buffers; [`Reductions`] for several
//! in one launch.

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
    pub(crate) queue: usize,
}

impl Target {
    pub(crate) fn of<B: AnyBuffer>(buf: &B) -> Target {
        Target {
            mem: buf.mem(),
            ty: buf.elem_type(),
            len: buf.len(),
            device: buf.device_index(),
            device_label: buf.device_label(),
            queue: buf.queue_id(),
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
}

/// Creates a reduction of `buf[0]` with `op` (SYCL's `sycl::reduction(buf, op)`): a built-in
/// [`Op`](crate::Op) or a [`CustomOp`](crate::CustomOp).
pub fn reduction<B: AnyBuffer>(buf: &B, op: impl Into<Operator>) -> Reduction {
    Reduction {
        target: Target::of(buf),
        index: None,
        op: op.into(),
        span: None,
        name: None,
        init_to_identity: false,
        raw: None,
    }
}

/// A span reduction (SYCL's `reduction(span<T>(buf, len), op)`): `len` independent
/// reductions into `buf[0..len]`. The body combines element `j` with `hist[j] += v` (for ops
/// with that shorthand), `combine(hist[j], v)` or `hist_combine(j, v)`.
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
    pub fn op(&self) -> &Operator {
        &self.op
    }
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
