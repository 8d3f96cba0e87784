//! Kernel bodies as Rust closures: the run-time side of [`kernel!`](crate::kernel).
//!
//! `kernel!(|i, sum| *sum += x[i] * 2.0)` checks at compile time that the closure stays inside
//! the subset below, and expands to a [`Closure`]: the body as a compact IR, the captured
//! values, and the same closure as ordinary Rust over host views and host reducers, which
//! rustc type-checks (a type error is a compile error at your line) and which
//! [`Closure::run_on_host`] runs. Passed to `parallel_for_reduce` it becomes a [`Kernel`]
//! whose OpenCL C body ([`Closure::source`]) is what you would have written by hand:
//!
//! ```no_run
//! use clreduce::{kernel, reduction, Op, Queue, Range};
//! # fn main() -> clreduce::Result<()> {
//! let queue = Queue::default()?;
//! let data: Vec<f32> = (0..1000).map(|k| (k % 7) as f32).collect();
//! let x = queue.buffer_from(&data)?;
//! let sum = queue.buffer_from(&[0.0f32])?;
//! let k = kernel!(|i, sum| *sum += x[i] * 2.0);
//! assert!(k.source()?.contains("sum += x[i] * 2.0f;"));
//! queue.parallel_for_reduce(Range::new(1000), reduction(&sum, Op::Plus), &k)?;
//! let host = k.run_on_host(&queue, Range::new(1000), reduction(&sum, Op::Plus))?;
//! println!("device {} host {:?}", sum.get(0)?, host.results[0].value());
//! # Ok(()) }
//! ```
//!
//! Every feature in closure form (these compile; `no_run`: they need a device):
//!
//! ```no_run
//! use clreduce::closure::Reducer;
//! use clreduce::{kernel, reduction, reduction_argmin, reduction_span, CustomOp, NdRange, Op, Queue, Range};
//! # fn main() -> clreduce::Result<()> {
//! let queue = Queue::default()?;
//! let x = queue.buffer_from(&[3u32, 1, 4, 1, 5, 9, 2, 6])?;
//! let f = queue.buffer_from(&[0.5f32, -1.0, 2.0, 0.25])?;
//! let (s, lo) = (queue.buffer_from(&[0u32])?, queue.buffer_from(&[u32::MAX])?);
//! // several reductions in one launch
//! queue.parallel_for_reduce(
//!     Range::new(8),
//!     vec![reduction(&s, Op::Plus), reduction(&lo, Op::Minimum)],
//!     kernel!(|i, s, lo| {
//!         *s += x[i];
//!         lo.combine(x[i]);
//!     }),
//! )?;
//! // argmin / argmax: the value and the lowest index holding it
//! let (v, ix) = (queue.buffer::<f32>(1)?, queue.buffer::<u64>(1)?);
//! queue.parallel_for_reduce(Range::new(4), reduction_argmin(&v, &ix).initialize_to_identity(),
//!     kernel!(|i, best| best.combine(f[i], i)))?;
//! // a custom combiner, identity-less
//! let m = queue.buffer_from(&[f32::NEG_INFINITY])?;
//! queue.parallel_for_reduce(Range::new(4), reduction(&m, CustomOp::new("max(a, b)")),
//!     kernel!(|i, m| m.combine(f[i].abs())))?;
//! // a span: a histogram of 256 bins
//! let hist = queue.buffer_from(&[0u32; 256])?;
//! queue.parallel_for_reduce(Range::new(8), reduction_span(&hist, 256, Op::Plus),
//!     kernel!(|i, hist| hist[(x[i] & 255) as usize] += 1u32))?;
//! // a 2-D range with an item, a captured scalar
//! let cols = 4usize;
//! queue.parallel_for([2, 4], reduction(&s, Op::Plus),
//!     kernel!(|item, s| *s += x[item.id[0] * cols + item.id[1]]))?;
//! // the nd_range form with an nd-item; an annotated reducer
//! let t = queue.buffer_from(&[0.0f32])?;
//! queue.parallel_for(NdRange::new(4, 2), reduction(&t, Op::Plus),
//!     kernel!(|it, t: &mut Reducer<f32>| *t += it.local_id(0) as f32 * f[it.global_linear_id()]))?;
//! // locals, loops, casts, math
//! queue.parallel_for_reduce(Range::new(4), reduction(&t, Op::Plus), kernel!(|i, t| {
//!     let mut acc = 0.0;
//!     for k in 0..=i {
//!         acc += f[k].abs().sqrt();
//!     }
//!     *t += if acc > 1.0 { acc.ln() } else { acc * 0.5 };
//! }))?;
//! # Ok(()) }
//! ```
//!
//! # Parameters
//!
//! - The id first: `i` (a `usize`: the linear id, the string form's `i`), an [`Item`]
//!   (`item.id[d]`, `item.range[d]`, `item.linear_id`; ranges of any rank) or an [`NdItem`]
//!   (`it.global_id(d)`, `it.local_id(d)`, `it.group_id(d)`, `it.global_range(d)`,
//!   `it.local_range(d)`, `it.group_range(d)`, `it.global_linear_id()`,
//!   `it.local_linear_id()`, `it.group_linear_id()`; the nd_range form only). The kind
//!   follows from how the body uses it, or from an annotation (`i: usize`, `item: Item`,
//!   `it: NdItem`).
//! - Then one reducer per reduction, in order: a [`Reducer`] (`*sum += v` and the other
//!   shorthands the op allows: `*=`, `&=`, `|=`, `^=`; `sum.combine(v)` for every op), an
//!   [`ArgReducer`] (`best.combine(value, index)`, argmin/argmax) or a [`SpanReducer`]
//!   (`hist[k] += v`, `hist[k].combine(v)`). The element type is what rustc infers from the
//!   body (`*sum += 1` makes it `i32`, `*sum += 1.0` `f64`, as in any Rust code) or an
//!   annotation (`sum: &mut Reducer<u32>`); it must be the reduction's element type (a
//!   launch with another fails to build, the host run returns `TypeMismatch`).
//!
//! # Captures
//!
//! Every other free variable is captured (`Capture`): a `Buffer<T>` (T: i32, u32, i64, u64,
//! f32, f64) becomes a read-only argument (`__global const T* restrict`), or a writable one
//! when the body assigns to its elements (`y[i] = v`, `y[i] += v`); a scalar (those types and
//! `usize`) becomes a scalar argument. Captures keep their Rust names in the OpenCL C unless a
//! name clashes (`n`, `float`, ...; see design/closures.md).
//!
//! # The subset
//!
//! - literals (`1`, `2.5`, `1u64`, `0.5f32`, `true`), typed as Rust types them;
//! - `+ - * / %` (`%` on floats is `fmod`), `== != < <= > >=`, `& | ^ << >> !`, `&& ||`,
//!   unary `-`;
//! - `as` between `i32 u32 i64 u64 usize f32 f64` (and from `bool`), with Rust's semantics
//!   (float to integer saturates);
//! - `let` and `let mut`, typed or inferred (also `let v = if c { ..; a } else { ..; b };`),
//!   assignment and compound assignment to locals and to captured buffer elements;
//! - `if` / `else if` / `else`, `if` as a value, `for k in a..b` / `a..=b` /
//!   `(a..b).step_by(s)`, `while`, `loop`, `break`, `continue`, `return`;
//! - indexing captured buffers (`x[k]`, `k: usize`);
//! - math methods on floats: `sqrt cbrt exp exp2 exp_m1 ln ln_1p log2 log10 powf powi sin cos
//!   tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh floor ceil round trunc abs min
//!   max clamp mul_add hypot recip to_degrees to_radians copysign is_nan is_finite
//!   is_infinite`, on integers: `abs min max clamp count_ones leading_zeros rotate_left`, as
//!   methods (`x.sqrt()`) or paths (`f32::sqrt(x)`, `std::cmp::max(a, b)`), mapped to the
//!   OpenCL built-ins (`ln` is `log`, `min` on floats `fmin`, ...; their precision is
//!   OpenCL's, not Rust's);
//! - constants `T::MAX`, `T::MIN`, `T::BITS`, `f32::INFINITY`, `NEG_INFINITY`, `NAN`,
//!   `EPSILON`, `MIN_POSITIVE`, `std::f32::consts::PI` and the other `consts`.
//!
//! Anything else is a compile error at its span that says so; use [`Kernel::new`] with an
//! OpenCL C string for it. Arithmetic wraps on the device where Rust's debug builds would
//! panic, an index out of range is undefined on the device (the host run returns an error),
//! and `for` over `a..=T::MAX` does not end on the device.
//!
//! # What does not compile
//!
//! Syntax outside the subset:
//! ```compile_fail
//! # use clreduce::{kernel, Buffer};
//! # fn f(x: &Buffer<f32>) {
//! let k = kernel!(|i, sum| *sum += x.iter().sum::<f32>());
//! # }
//! ```
//! A reducer read as a value (reducers are write-only):
//! ```compile_fail
//! # use clreduce::{kernel, Buffer};
//! # fn f(x: &Buffer<f32>) {
//! let k = kernel!(|i, sum| { let s = *sum; *sum += x[i] + s; });
//! # }
//! ```
//! A type error, found by rustc in the host form (`f32 * {integer}`):
//! ```compile_fail,E0277
//! # use clreduce::{kernel, Buffer};
//! # fn f(x: &Buffer<f32>) {
//! let k = kernel!(|i, sum| *sum += x[i] * 2);
//! # }
//! ```
//! A capture of a type a kernel cannot take:
//! ```compile_fail,E0277
//! # use clreduce::kernel;
//! let v = vec![1.0f32, 2.0];
//! let k = kernel!(|i, sum| *sum += v[i]);
//! ```
//! The same closure, well-typed:
//! ```
//! # use clreduce::{kernel, Buffer};
//! # fn f(x: &Buffer<f32>) {
//! let k = kernel!(|i, sum| *sum += x[i] * 2.0);
//! # }
//! ```

mod emit;
pub(crate) mod host;
mod infer;
pub(crate) mod ir;
mod names;
pub(crate) mod reducers;
pub(crate) mod site;
#[cfg(test)]
mod tests;

// What a user's closure sees: its id types and its reducers.
pub use host::{HostBuf, Item, NdItem};
pub use reducers::{ArgReducer, HostResult, Reducer, SpanReducer};
// The plumbing `kernel!`'s expansion names is re-exported by `crate::__private` (reachable
// from the user's crate, hidden from the docs, not an API to call by hand).
use host::{CapDesc, Geometry, HostEnv, HostId, Sink};
use ir::Ty;
use reducers::{HostRed, RedInput};
use site::{RedsInput, Site};

use crate::types::HostVec;
use crate::{ElemType, Error, Form, Kernel, Queue, Reductions, Result};
use emit::Emitted;
use infer::CapTy;
use ir::{CapUse, IdKind};
use std::marker::PhantomData;
use std::sync::Arc;

/// The kind of a reducer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedKind {
    /// [`Reducer`]: a plain reduction.
    Plain,
    /// [`ArgReducer`]: argmin / argmax.
    Arg,
    /// [`SpanReducer`]: a span.
    Span,
}

impl RedKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RedKind::Plain => "plain reducer",
            RedKind::Arg => "argmin/argmax reducer",
            RedKind::Span => "span reducer",
        }
    }
    pub(crate) fn article(self) -> &'static str {
        match self {
            RedKind::Arg => "an",
            _ => "a",
        }
    }
}

fn internal(problem: String) -> Error {
    Error::BadArgument {
        name: "kernel!".into(),
        problem: format!("{problem} (a clreduce bug: please report it with the closure)"),
    }
}

/// The parameter types of a closure's host form: `(Id, Reducer0, Reducer1, ...)`.
pub trait Args {
    #[doc(hidden)]
    type Id: HostId;
    #[doc(hidden)]
    type Reds;
    #[doc(hidden)]
    fn sig() -> Vec<(RedKind, ElemType)>;
    #[doc(hidden)]
    fn make(reds: RedsInput<'_>, sink: &Sink, names: &[String]) -> Result<Self::Reds>;
    #[doc(hidden)]
    fn finish(reds: Self::Reds) -> Result<Vec<HostResult>>;
}

/// The host form of a closure body: a Rust closure over the id and the host reducers.
pub trait HostBody<A: Args> {
    #[doc(hidden)]
    fn call(&mut self, id: A::Id, reds: &mut A::Reds);
}

macro_rules! arity {
    ($($r:ident $k:tt),*) => {
        impl<I: HostId, $($r: HostRed),*> Args for (I, $($r,)*) {
            type Id = I;
            type Reds = ($($r,)*);
            fn sig() -> Vec<(RedKind, ElemType)> {
                vec![$(($r::KIND, $r::elem())),*]
            }
            #[allow(unused_variables)]
            fn make(reds: RedsInput<'_>, sink: &Sink, names: &[String]) -> Result<Self::Reds> {
                Ok(($($r::make(RedInput(&reds.0[$k]), sink, &names[$k])?,)*))
            }
            #[allow(unused_variables)]
            fn finish(reds: Self::Reds) -> Result<Vec<HostResult>> {
                Ok(vec![$(reds.$k.finish()?),*])
            }
        }
        impl<F, I: HostId, $($r: HostRed),*> HostBody<(I, $($r,)*)> for F
        where
            F: FnMut(I, $(&mut $r),*),
        {
            #[allow(unused_variables)]
            fn call(&mut self, id: I, reds: &mut ($($r,)*)) {
                self(id, $(&mut reds.$k),*)
            }
        }
    };
}
arity!();
arity!(R0 0);
arity!(R0 0, R1 1);
arity!(R0 0, R1 1, R2 2);
arity!(R0 0, R1 1, R2 2, R3 3);
arity!(R0 0, R1 1, R2 2, R3 3, R4 4);
arity!(R0 0, R1 1, R2 2, R3 3, R4 4, R5 5);
arity!(R0 0, R1 1, R2 2, R3 3, R4 4, R5 5, R6 6);
arity!(R0 0, R1 1, R2 2, R3 3, R4 4, R5 5, R6 6, R7 7);

/// What a host run computed: one result per reducer, and the final contents of every buffer the
/// body writes (by the capture's Rust name).
#[derive(Debug, Clone)]
pub struct HostRun {
    /// One result per reducer, in the launch's order.
    pub results: Vec<HostResult>,
    /// Each written buffer's final contents, with the capture's Rust name.
    pub outputs: Vec<(String, HostVec)>,
}

/// A kernel body written as a Rust closure (made by [`kernel!`](crate::kernel)): the IR of the
/// body, the captured values, and the host form.
pub struct Closure<'a, F, B, A> {
    site: &'static Site,
    caps: Vec<CapDesc<'a>>,
    host: F,
    _p: PhantomData<fn() -> (B, A)>,
}

impl<'a, F, B, A> Closure<'a, F, B, A>
where
    F: Fn(&HostEnv) -> Result<B>,
    B: HostBody<A>,
    A: Args,
{
    #[doc(hidden)]
    pub fn new(site: &'static Site, caps: Vec<CapDesc<'a>>, host: F) -> Self {
        Closure {
            site,
            caps,
            host,
            _p: PhantomData,
        }
    }

    fn generated(&self) -> Result<Arc<std::result::Result<Emitted, String>>> {
        let ir = self.site.ir()?;
        if self.caps.len() != ir.caps.len() {
            return Err(internal("the captures do not match the IR".into()));
        }
        let mut caps = Vec::new();
        for (d, (name, use_)) in self.caps.iter().zip(&ir.caps) {
            caps.push(match (d, use_) {
                (CapDesc::Scalar(t, _), CapUse::Scalar) => CapTy::Scalar(*t),
                (CapDesc::Buffer(b), CapUse::Read | CapUse::Write) => CapTy::Buffer(
                    Ty::of_elem(b.elem())
                        .ok_or_else(|| internal(format!("buffer {name} of {}", b.elem())))?,
                ),
                _ => {
                    return Err(internal(format!(
                        "`{name}` is captured as another kind than it is used"
                    )))
                }
            });
        }
        let reds = A::sig()
            .into_iter()
            .map(|(k, t)| Ty::of_elem(t).map(|t| (k, t)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| internal("a reducer of f16".into()))?;
        self.site.body(&caps, &reds)
    }

    /// The generated OpenCL C body (what [`Kernel::body`] of the launch's kernel is).
    pub fn source(&self) -> Result<String> {
        match &*self.generated()? {
            Ok(e) => Ok(e.body.clone()),
            Err(m) => Err(internal(m.clone())),
        }
    }

    /// The [`Kernel`]: the generated body, every capture bound under its OpenCL C name and the
    /// reducers named after the closure's parameters.
    pub fn kernel(&self) -> Result<Kernel> {
        let g = self.generated()?;
        let e = g.as_ref().as_ref().map_err(|m| internal(m.clone()))?;
        let ir = self.site.ir()?;
        let mut k = Kernel::new(&e.body);
        for ((d, name), (_, use_)) in self.caps.iter().zip(&e.caps).zip(&ir.caps) {
            k = match d {
                CapDesc::Buffer(b) => b.bind(k, name, *use_ == CapUse::Write),
                CapDesc::Scalar(_, v) => k.scalar(name, *v),
            };
        }
        Ok(k.reducers(&e.reds))
    }

    /// Runs the host form over `range` with `reductions`, as a launch on `queue` would, without
    /// changing anything on the device: the captured buffers and the reductions' current values
    /// are read through `queue`, and the results come back as [`HostRun`]. Misuse the device
    /// would refuse or leave undefined is an error.
    pub fn run_on_host(
        &self,
        queue: &Queue,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
    ) -> Result<HostRun> {
        let form = range.into();
        let reds = reductions.into();
        let ir = self.site.ir()?;
        let names: Vec<String> = ir.reds.iter().map(|(n, _)| n.clone()).collect();
        if reds.0.len() != names.len() {
            return Err(Error::BadArgument {
                name: names.join(", "),
                problem: format!(
                    "the kernel names {} reducer(s) but the launch has {} reduction(s)",
                    names.len(),
                    reds.0.len()
                ),
            });
        }
        let geom = Geometry::of(&form)?;
        if A::Id::kind() == IdKind::Nd && matches!(form, Form::Range(_)) {
            return Err(Error::InvalidRange {
                reason: "the closure's id is an NdItem: run it over an NdRange".into(),
            });
        }
        let host_reds = reds
            .0
            .iter()
            .zip(&names)
            .map(|(r, n)| r.read_for_host(queue, n))
            .collect::<Result<Vec<_>>>()?;
        let env = HostEnv::new(ir.caps.iter().map(|(n, _)| n.clone()).collect());
        let mut rs = A::make(RedsInput(&host_reds), &env.sink, &names)?;
        let mut body = (self.host)(&env)?;
        for lin in 0..geom.n as usize {
            body.call(A::Id::make(&geom, lin), &mut rs);
            if let Some(e) = env.sink.take() {
                return Err(e);
            }
        }
        drop(body);
        Ok(HostRun {
            results: A::finish(rs)?,
            outputs: env.outputs(),
        })
    }
}

/// A kernel whose body names its own error: a closure that cannot be translated becomes a
/// launch that fails to build with this message (the conversion into `Kernel` cannot fail).
fn failing(e: Error) -> Kernel {
    let msg = e.to_string().replace(['"', '\n'], "'");
    Kernel::new(&format!("#error \"{msg}\"\n"))
}

impl<F, B, A> From<&Closure<'_, F, B, A>> for Kernel
where
    F: Fn(&HostEnv) -> Result<B>,
    B: HostBody<A>,
    A: Args,
{
    fn from(c: &Closure<'_, F, B, A>) -> Kernel {
        c.kernel().unwrap_or_else(failing)
    }
}

impl<F, B, A> From<Closure<'_, F, B, A>> for Kernel
where
    F: Fn(&HostEnv) -> Result<B>,
    B: HostBody<A>,
    A: Args,
{
    fn from(c: Closure<'_, F, B, A>) -> Kernel {
        Kernel::from(&c)
    }
}
