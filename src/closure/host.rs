//! The host side of captures and ids: the `Capture` trait (what a closure may capture, how the
//! launch binds it and what the host form sees), host buffer views, the error sink of a host
//! run, and the ids the host form passes (`usize`, [`Item`], [`NdItem`]).

use super::ir::{IdKind, Ty};
use crate::types::HostVec;
use crate::{Buffer, ElemType, Element, Error, Form, Kernel, Result, Value};
use std::cell::RefCell;
use std::rc::Rc;

/// A number as the host folds it: integers exactly, floats in float64.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum Num {
    /// An integer, exactly.
    Int(i128),
    /// A float, in float64.
    Float(f64),
}

impl Num {
    pub(crate) fn of(v: Value) -> Num {
        match v {
            Value::I32(x) => Num::Int(x as i128),
            Value::U32(x) => Num::Int(x as i128),
            Value::I64(x) => Num::Int(x as i128),
            Value::U64(x) => Num::Int(x as i128),
            Value::F32(x) => Num::Float(x as f64),
            Value::F64(x) => Num::Float(x),
        }
    }
    /// The value in type `ty` (integers wrap, f32 rounds).
    pub(crate) fn value(self, ty: ElemType) -> Value {
        match (self, ty) {
            (Num::Float(f), ElemType::F32) => Value::F32(f as f32),
            (Num::Float(f), _) => Value::F64(f),
            (Num::Int(x), ElemType::I32) => Value::I32(x as i32),
            (Num::Int(x), ElemType::U32) => Value::U32(x as u32),
            (Num::Int(x), ElemType::I64) => Value::I64(x as i64),
            (Num::Int(x), _) => Value::U64(x as u64),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The element types a kernel closure computes with: i32, u32, i64, u64, f32, f64 (`Half` is a
/// storage type: use a string kernel with `vload_half`).
#[diagnostic::on_unimplemented(
    message = "a kernel closure does not compute with `{Self}`",
    label = "not an element type of kernel closures",
    note = "kernel! closures compute with i32, u32, i64, u64, f32 and f64; f16 (Half) is a storage type: read it with vload_half in a string Kernel"
)]
pub trait ClosureElem: Element + sealed::Sealed {
    #[doc(hidden)]
    const TY: Ty;
    #[doc(hidden)]
    fn num(self) -> Num;
    #[doc(hidden)]
    fn value(self) -> Value;
    #[doc(hidden)]
    fn from_le(b: &[u8]) -> Self;
    #[doc(hidden)]
    fn host_vec(v: Vec<Self>) -> HostVec;
}

macro_rules! elem {
    ($t:ty, $ty:ident, $num:ident, $hv:ident, $n:literal) => {
        impl sealed::Sealed for $t {}
        impl ClosureElem for $t {
            const TY: Ty = Ty::$ty;
            fn num(self) -> Num {
                Num::$num(self as _)
            }
            fn value(self) -> Value {
                Value::from(self)
            }
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; $n];
                a.copy_from_slice(&b[..$n]);
                <$t>::from_le_bytes(a)
            }
            fn host_vec(v: Vec<Self>) -> HostVec {
                HostVec::$hv(v)
            }
        }
    };
}
elem!(i32, I32, Int, I32, 4);
elem!(u32, U32, Int, U32, 4);
elem!(i64, I64, Int, I64, 8);
elem!(u64, U64, Int, U64, 8);
elem!(f32, F32, Float, F32, 4);
elem!(f64, F64, Float, F64, 8);

/// Where a host run records the first misuse (an index out of range, an operator the op does
/// not allow): the run stops after the call and returns it.
#[derive(Clone, Default)]
pub struct Sink(Rc<RefCell<Option<Error>>>);

impl Sink {
    pub(crate) fn fail(&self, e: Error) {
        let mut s = self.0.borrow_mut();
        if s.is_none() {
            *s = Some(e);
        }
    }
    pub(crate) fn take(&self) -> Option<Error> {
        self.0.borrow_mut().take()
    }
}

/// Where a written buffer's final contents land when its host view is dropped.
type Slot = Rc<RefCell<Option<HostVec>>>;

/// The environment of one host run: the error sink and the written buffers' contents.
#[derive(Default)]
pub struct HostEnv {
    pub(crate) sink: Sink,
    outputs: RefCell<Vec<(usize, Slot)>>,
    pub(crate) names: Vec<String>,
}

impl HostEnv {
    pub(crate) fn new(names: Vec<String>) -> HostEnv {
        HostEnv {
            names,
            ..HostEnv::default()
        }
    }
    fn name(&self, k: usize) -> String {
        self.names
            .get(k)
            .cloned()
            .unwrap_or_else(|| format!("capture {k}"))
    }
    /// The final contents of every buffer the body writes, by capture name.
    pub(crate) fn outputs(&self) -> Vec<(String, HostVec)> {
        self.outputs
            .borrow()
            .iter()
            .filter_map(|(k, slot)| slot.borrow_mut().take().map(|v| (self.name(*k), v)))
            .collect()
    }
}

/// A captured buffer in the host form: its contents, read from the device when the host run
/// starts. Indexing out of range records an error (the run returns it) instead of panicking.
pub struct HostBuf<T: ClosureElem> {
    data: Vec<T>,
    spare: T,
    name: String,
    sink: Sink,
    back: Option<Slot>,
}

impl<T: ClosureElem> HostBuf<T> {
    fn out_of_range(&self, k: usize) {
        self.sink.fail(Error::BadArgument {
            name: self.name.clone(),
            problem: format!(
                "index {k} out of range 0..{} in the host form (on the device it would read or write out of bounds)",
                self.data.len()
            ),
        });
    }
}

impl<T: ClosureElem> std::ops::Index<usize> for HostBuf<T> {
    type Output = T;
    fn index(&self, k: usize) -> &T {
        match self.data.get(k) {
            Some(v) => v,
            None => {
                self.out_of_range(k);
                &self.spare
            }
        }
    }
}

impl<T: ClosureElem> std::ops::IndexMut<usize> for HostBuf<T> {
    fn index_mut(&mut self, k: usize) -> &mut T {
        if k >= self.data.len() {
            self.out_of_range(k);
            return &mut self.spare;
        }
        &mut self.data[k]
    }
}

impl<T: ClosureElem> Drop for HostBuf<T> {
    fn drop(&mut self) {
        if let Some(back) = &self.back {
            *back.borrow_mut() = Some(T::host_vec(std::mem::take(&mut self.data)));
        }
    }
}

/// A buffer bound to a kernel as an argument, whatever its element type.
pub trait BufBind {
    #[doc(hidden)]
    fn bind(&self, k: Kernel, name: &str, writable: bool) -> Kernel;
    #[doc(hidden)]
    fn elem(&self) -> ElemType;
}

impl<T: Element> BufBind for Buffer<T> {
    fn bind(&self, k: Kernel, name: &str, writable: bool) -> Kernel {
        if writable {
            k.arg_mut(name, self)
        } else {
            k.arg(name, self)
        }
    }
    fn elem(&self) -> ElemType {
        T::TYPE
    }
}

/// What the launch needs of a capture.
pub enum CapDesc<'a> {
    /// A buffer argument.
    Buffer(&'a (dyn BufBind + Sync)),
    /// A scalar argument: its type in the closure and its value.
    Scalar(Ty, Value),
}

/// A value a kernel closure can capture: a [`Buffer<T>`] (an argument; writable when the body
/// assigns to its elements) or a scalar of an element type or `usize` (a scalar argument).
#[diagnostic::on_unimplemented(
    message = "a kernel closure cannot capture `{Self}`",
    label = "captured by the kernel closure here",
    note = "kernel! closures capture clreduce::Buffer<T> and scalars, T one of i32, u32, i64, u64, f32, f64 (scalars also usize); bind anything else to a string Kernel"
)]
pub trait Capture {
    /// What the host form sees.
    type Host;
    #[doc(hidden)]
    fn describe(&self) -> CapDesc<'_>;
    #[doc(hidden)]
    fn host(&self, env: &HostEnv, index: usize, writable: bool) -> Result<Self::Host>;
}

impl<T: ClosureElem> Capture for Buffer<T> {
    type Host = HostBuf<T>;
    fn describe(&self) -> CapDesc<'_> {
        CapDesc::Buffer(self)
    }
    fn host(&self, env: &HostEnv, index: usize, writable: bool) -> Result<HostBuf<T>> {
        let back = writable.then(|| {
            let slot = Rc::new(RefCell::new(None));
            env.outputs.borrow_mut().push((index, slot.clone()));
            slot
        });
        Ok(HostBuf {
            data: self.to_vec()?,
            spare: T::default(),
            name: env.name(index),
            sink: env.sink.clone(),
            back,
        })
    }
}

impl<T: Capture + ?Sized> Capture for &T {
    type Host = T::Host;
    fn describe(&self) -> CapDesc<'_> {
        (**self).describe()
    }
    fn host(&self, env: &HostEnv, index: usize, writable: bool) -> Result<T::Host> {
        (**self).host(env, index, writable)
    }
}

macro_rules! scalar {
    ($t:ty, $ty:ident, $conv:expr) => {
        impl Capture for $t {
            type Host = $t;
            fn describe(&self) -> CapDesc<'_> {
                let conv: fn($t) -> Value = $conv;
                CapDesc::Scalar(Ty::$ty, conv(*self))
            }
            fn host(&self, _: &HostEnv, _: usize, _: bool) -> Result<$t> {
                Ok(*self)
            }
        }
    };
}
scalar!(i32, I32, Value::I32);
scalar!(u32, U32, Value::U32);
scalar!(i64, I64, Value::I64);
scalar!(u64, U64, Value::U64);
scalar!(f32, F32, Value::F32);
scalar!(f64, F64, Value::F64);
scalar!(usize, Usize, |v| Value::U64(v as u64));

/// The id of a work-item in a 1-, 2- or 3-D range (SYCL's `item`): `id[d]`, `range[d]` (1 beyond
/// the rank) and the row-major `linear_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// The id per dimension (0 beyond the rank).
    pub id: [usize; 3],
    /// The extent per dimension (1 beyond the rank).
    pub range: [usize; 3],
    /// The row-major linear id, `i` of the string form.
    pub linear_id: usize,
}

/// The id of a work-item in the nd_range form (SYCL's `nd_item`), in the user's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdItem {
    id: [usize; 3],
    global: [usize; 3],
    local: [usize; 3],
    linear: usize,
}

fn dim(a: &[usize; 3], d: usize, beyond: usize) -> usize {
    a.get(d).copied().unwrap_or(beyond)
}

impl NdItem {
    /// The global id in dimension `d` (OpenCL `get_global_id(d)`).
    pub fn global_id(&self, d: usize) -> usize {
        dim(&self.id, d, 0)
    }
    /// The id within the work-group (`get_local_id(d)`).
    pub fn local_id(&self, d: usize) -> usize {
        self.global_id(d) % self.local_range(d)
    }
    /// The work-group's id (`get_group_id(d)`).
    pub fn group_id(&self, d: usize) -> usize {
        self.global_id(d) / self.local_range(d)
    }
    /// The global size (`get_global_size(d)`).
    pub fn global_range(&self, d: usize) -> usize {
        dim(&self.global, d, 1)
    }
    /// The work-group size (`get_local_size(d)`).
    pub fn local_range(&self, d: usize) -> usize {
        dim(&self.local, d, 1)
    }
    /// The number of work-groups (`get_num_groups(d)`).
    pub fn group_range(&self, d: usize) -> usize {
        self.global_range(d) / self.local_range(d)
    }
    /// The row-major linear global id (the string form's `i`).
    pub fn global_linear_id(&self) -> usize {
        self.linear
    }
    /// The row-major linear id within the work-group.
    pub fn local_linear_id(&self) -> usize {
        (self.local_id(0) * self.local_range(1) + self.local_id(1)) * self.local_range(2)
            + self.local_id(2)
    }
    /// The row-major linear id of the work-group.
    pub fn group_linear_id(&self) -> usize {
        (self.group_id(0) * self.group_range(1) + self.group_id(1)) * self.group_range(2)
            + self.group_id(2)
    }
}

/// The iteration space of a host run: the global extents (1 beyond the rank) and, in the
/// nd_range form, the work-group extents.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// Number of work-items.
    pub n: u64,
    global: [usize; 3],
    local: Option<[usize; 3]>,
}

impl Geometry {
    pub(crate) fn of(form: &Form) -> Result<Geometry> {
        let pad = |e: &[u64]| {
            let mut a = [1usize; 3];
            for (d, &x) in e.iter().enumerate().take(3) {
                a[d] = x as usize;
            }
            a
        };
        Ok(match form {
            Form::Range(r) => Geometry {
                n: r.n,
                global: pad(r.extents()),
                local: None,
            },
            Form::NdRange(r) => {
                let g = pad(r.global_extents());
                let l: Vec<u64> = r.local_extents().iter().map(|&x| x as u64).collect();
                let l = pad(&l);
                if l.contains(&0) || g.iter().zip(&l).any(|(g, l)| g % l != 0) {
                    return Err(Error::NdRangeNotDivisible {
                        global: g[..r.global_extents().len()].to_vec(),
                        local: r.local_extents().to_vec(),
                    });
                }
                Geometry {
                    n: r.global,
                    global: g,
                    local: Some(l),
                }
            }
        })
    }
    /// The per-dimension ids of linear id `lin` (row-major).
    fn ids(&self, lin: usize) -> [usize; 3] {
        let [_, e1, e2] = self.global;
        [lin / (e1 * e2), (lin / e2) % e1, lin % e2]
    }
}

/// An id parameter type of the host form: `usize`, [`Item`] or [`NdItem`].
pub trait HostId: Sized {
    #[doc(hidden)]
    fn kind() -> IdKind;
    #[doc(hidden)]
    fn make(g: &Geometry, linear: usize) -> Self;
}

impl HostId for usize {
    fn kind() -> IdKind {
        IdKind::Linear
    }
    fn make(_: &Geometry, linear: usize) -> usize {
        linear
    }
}

impl HostId for Item {
    fn kind() -> IdKind {
        IdKind::Item
    }
    fn make(g: &Geometry, linear: usize) -> Item {
        Item {
            id: g.ids(linear),
            range: g.global,
            linear_id: linear,
        }
    }
}

impl HostId for NdItem {
    fn kind() -> IdKind {
        IdKind::Nd
    }
    fn make(g: &Geometry, linear: usize) -> NdItem {
        NdItem {
            id: g.ids(linear),
            global: g.global,
            local: g.local.unwrap_or([1; 3]),
            linear,
        }
    }
}
