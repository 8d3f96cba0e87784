//! The body of a multi-device launch: [`MultiKernel`], a [`Kernel`] whose buffers are
//! [`MultiBuffer`]s, turned into one `Kernel` per share (each device binds its own part, and
//! optionally the share's first global index as a scalar).

use super::buffer::{Layout, MultiBuffer};
use super::split::Split;
use crate::api::Kernel;
use crate::error::{Error, Result};
use crate::runtime::buffer::AnyBuffer;
use crate::runtime::launch::Mem;
use crate::types::{ElemType, Element, Value};
use std::sync::Arc;

/// One device's buffer of a [`MultiBuffer`], its element type erased.
#[derive(Clone)]
pub(crate) struct Part {
    mem: Arc<Mem>,
    ty: ElemType,
    len: usize,
    device: usize,
    label: String,
}

impl Part {
    pub(crate) fn of<B: AnyBuffer>(b: &B) -> Part {
        Part {
            mem: b.mem(),
            ty: b.elem_type(),
            len: b.len(),
            device: b.device_index(),
            label: b.device_label(),
        }
    }
}

impl AnyBuffer for Part {
    fn elem_type(&self) -> ElemType {
        self.ty
    }
    fn len(&self) -> usize {
        self.len
    }
    fn mem(&self) -> Arc<Mem> {
        self.mem.clone()
    }
    fn device_index(&self) -> usize {
        self.device
    }
    fn device_label(&self) -> String {
        self.label.clone()
    }
}

/// A bound argument, per device.
#[derive(Clone)]
enum MultiArg {
    /// `arg` / `arg_mut` of one buffer per device.
    Buffers {
        parts: Vec<Part>,
        writable: bool,
        layout: Layout,
    },
    Scalar(Value),
}

/// A kernel body (OpenCL C, as [`Kernel::new`]) for a [`MultiQueue`](super::MultiQueue).
///
/// In a share the body sees the share's own index space: `i` runs over `0..n` where `n` is the
/// share's size, and a scattered [`MultiBuffer`] holds exactly that share, so `x[i]` is the
/// element of global index `offset + i`. Where the body needs the global index (argmin's
/// index is mapped for you; see [`MultiQueue`](super::MultiQueue)), bind the share's first
/// global index with [`MultiKernel::offset`].
#[derive(Clone)]
pub struct MultiKernel {
    body: String,
    args: Vec<(String, MultiArg)>,
    offset: Option<String>,
    reducers: Option<Vec<String>>,
}

impl MultiKernel {
    /// A body in OpenCL C, as [`Kernel::new`]; bind its buffers with [`arg`](Self::arg).
    pub fn new(body: &str) -> MultiKernel {
        MultiKernel {
            body: body.to_string(),
            args: Vec::new(),
            offset: None,
            reducers: None,
        }
    }
    /// Binds a read-only buffer per device (`__global const T* restrict name`).
    pub fn arg<T: Element>(self, name: &str, buf: &MultiBuffer<T>) -> MultiKernel {
        self.bind(name, buf, false)
    }
    /// Binds a buffer per device that the body may write (`__global T* name`).
    pub fn arg_mut<T: Element>(self, name: &str, buf: &MultiBuffer<T>) -> MultiKernel {
        self.bind(name, buf, true)
    }
    fn bind<T: Element>(mut self, name: &str, buf: &MultiBuffer<T>, writable: bool) -> Self {
        self.args.push((
            name.to_string(),
            MultiArg::Buffers {
                parts: buf.parts.iter().map(Part::of).collect(),
                writable,
                layout: buf.layout.clone(),
            },
        ));
        self
    }
    /// Binds a scalar (the same on every device).
    pub fn scalar(mut self, name: &str, v: impl Into<Value>) -> MultiKernel {
        self.args
            .push((name.to_string(), MultiArg::Scalar(v.into())));
        self
    }
    /// Binds the share's first global index as the `ulong` scalar `name`: the body's global
    /// index is then `name + i` (a 1-D range; for other forms, the first linear index of the
    /// share).
    pub fn offset(mut self, name: &str) -> MultiKernel {
        self.offset = Some(name.to_string());
        self
    }
    /// Names the reducers by position, as [`Kernel::reducers`].
    pub fn reducers<S: AsRef<str>>(mut self, names: &[S]) -> MultiKernel {
        self.reducers = Some(names.iter().map(|s| s.as_ref().to_string()).collect());
        self
    }
    /// The body.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The split the scattered arguments agree on (`None` if there is none), checked against
    /// the number of devices and units.
    pub(crate) fn split(&self, devices: usize) -> Result<Option<(Split, u64)>> {
        let mut found: Option<(Split, u64, &str)> = None;
        for (name, a) in &self.args {
            let MultiArg::Buffers { parts, layout, .. } = a else {
                continue;
            };
            if parts.len() != devices {
                return Err(Error::BadArgument {
                    name: name.clone(),
                    problem: format!(
                        "{} parts for a multi-device queue of {devices} devices",
                        parts.len()
                    ),
                });
            }
            let Layout::Scattered { split, per_unit } = layout else {
                continue;
            };
            match &found {
                None => found = Some((split.clone(), *per_unit, name)),
                Some((s, _, first)) if s.counts() != split.counts() => {
                    return Err(Error::BadArgument {
                        name: name.clone(),
                        problem: format!(
                            "scattered with shares {:?}, but {first} with {:?}: every scattered buffer of a launch has the launch's split",
                            split.counts(),
                            s.counts()
                        ),
                    })
                }
                Some(_) => {}
            }
        }
        Ok(found.map(|(s, p, _)| (s, p)))
    }

    /// The kernel of device `k`'s share, whose first global linear index is `first`.
    pub(crate) fn share(&self, k: usize, first: u64) -> Kernel {
        let mut kernel = Kernel::new(&self.body);
        for (name, a) in &self.args {
            kernel = match a {
                MultiArg::Buffers {
                    parts, writable, ..
                } => {
                    if *writable {
                        kernel.arg_mut(name, &parts[k])
                    } else {
                        kernel.arg(name, &parts[k])
                    }
                }
                MultiArg::Scalar(v) => kernel.scalar(name, *v),
            };
        }
        if let Some(name) = &self.offset {
            kernel = kernel.scalar(name, first);
        }
        if let Some(r) = &self.reducers {
            kernel = kernel.reducers(r);
        }
        kernel
    }
}
