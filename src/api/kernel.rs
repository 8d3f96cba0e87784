//! Kernel bodies: OpenCL C source with the buffers and scalars it uses by name ([`Kernel`]).

use crate::runtime::buffer::AnyBuffer;
use crate::runtime::launch::Mem;
use crate::types::{ElemType, Value};
use std::sync::Arc;

#[derive(Clone)]
pub(crate) enum ArgKind {
    Buffer {
        mem: Arc<Mem>,
        ty: ElemType,
        writable: bool,
        device: usize,
        label: String,
    },
    Scalar(Value),
}

/// A kernel body in OpenCL C and the buffers and scalars it uses by name.
///
/// The body runs once per id. It sees `i` (the id) and `n` (the range size), each reducer under
/// its name (`sum += x[i];`, `combine(lo, x[i]);`, `lo_combine(x[i]);`), the bound arguments, and
/// in the nd_range form OpenCL's own `get_local_id()` and friends.
#[derive(Clone)]
pub struct Kernel {
    body: String,
    pub(crate) args: Vec<(String, ArgKind)>,
    /// How the body names the reducers, by position (`Kernel::reducers`); `None`: each
    /// reduction's own name or the default.
    pub(crate) reducers: Option<Vec<String>>,
}

impl Kernel {
    /// A body in OpenCL C; bind what it uses with [`arg`](Kernel::arg),
    /// [`arg_mut`](Kernel::arg_mut) and [`scalar`](Kernel::scalar). The launch checks it: a name
    /// bound twice, reserved (`i`, `n`, `item`, `combine`, `clr_*`) or not an identifier is
    /// [`Error::BadArgument`](crate::Error::BadArgument), a shorthand the op does not allow
    /// (`lo += v` for a minimum) is [`Error::ReducerOperator`](crate::Error::ReducerOperator), and
    /// a body that does not compile is [`Error::BodyBuild`](crate::Error::BodyBuild), its log's
    /// line numbers those of the body.
    ///
    /// ```
    /// use clreduce::{reduction, Kernel, Op, Queue, Range};
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = Queue::default()?;
    /// let x = queue.buffer_from(&[1.0f32, 2.0, 3.0])?;
    /// let y = queue.buffer::<f32>(3)?; // zero-filled
    /// let sum = queue.buffer_from(&[0.0f32])?;
    /// let k = Kernel::new("y[i] = a * x[i]; sum += y[i];")
    ///     .arg("x", &x)
    ///     .arg_mut("y", &y)
    ///     .scalar("a", 2.0f32);
    /// queue.parallel_for_reduce(Range::new(3), reduction(&sum, Op::Plus), k)?;
    /// assert_eq!(sum.get(0)?, 12.0);
    /// assert_eq!(y.to_vec()?, [2.0, 4.0, 6.0]);
    /// # Ok(()) }
    /// ```
    pub fn new(body: &str) -> Kernel {
        Kernel {
            body: body.to_string(),
            args: Vec::new(),
            reducers: None,
        }
    }
    /// Names the reducers as this body refers to them, by position: reduction `k` is
    /// `names[k]` in the body, whatever its own [`Reduction::name`](crate::Reduction::name) or the default (`sum`,
    /// `sum1`, ...). A body written apart from its reductions (closures, generated code) uses
    /// this so that it does not depend on how the caller named them. The count must match the
    /// reductions of the launch (`Error::BadArgument` otherwise).
    pub fn reducers<S: AsRef<str>>(mut self, names: &[S]) -> Kernel {
        self.reducers = Some(names.iter().map(|s| s.as_ref().to_string()).collect());
        self
    }
    /// Binds a read-only buffer (`__global const T* restrict name`).
    pub fn arg<B: AnyBuffer>(mut self, name: &str, buf: &B) -> Kernel {
        self.args.push((name.to_string(), Self::buf(buf, false)));
        self
    }
    /// Binds a buffer the body may write (`__global T* name`).
    pub fn arg_mut<B: AnyBuffer>(mut self, name: &str, buf: &B) -> Kernel {
        self.args.push((name.to_string(), Self::buf(buf, true)));
        self
    }
    /// Binds a scalar passed by value.
    pub fn scalar(mut self, name: &str, v: impl Into<Value>) -> Kernel {
        self.args
            .push((name.to_string(), ArgKind::Scalar(v.into())));
        self
    }
    fn buf<B: AnyBuffer>(b: &B, writable: bool) -> ArgKind {
        ArgKind::Buffer {
            mem: b.mem(),
            ty: b.elem_type(),
            writable,
            device: b.device_index(),
            label: b.device_label(),
        }
    }
    /// Whether the body may write memory (some buffer is bound with `arg_mut`).
    pub(crate) fn writes(&self) -> bool {
        self.args
            .iter()
            .any(|(_, a)| matches!(a, ArgKind::Buffer { writable: true, .. }))
    }
    /// The OpenCL C body, as given.
    pub fn body(&self) -> &str {
        &self.body
    }
}
