//! # clreduce
//!
//! SYCL 2020-style reductions on any OpenCL device, with the algorithm picked from what the
//! device can actually do.
//!
//! ```no_run
//! use clreduce::{reduction, Kernel, Queue, Range, Op};
//! # fn main() -> clreduce::Result<()> {
//! let queue = Queue::default()?;
//! let data: Vec<f32> = (0..1_000_000).map(|i| (i % 7) as f32).collect();
//! let x = queue.buffer_from(&data)?;
//! let sum = queue.buffer_from(&[0.0f32])?;
//! let ev = queue.parallel_for_reduce(
//!     Range::new(data.len() as u64),
//!     reduction(&sum, Op::Plus),
//!     Kernel::new("sum += x[i];").arg("x", &x),
//! )?;
//! println!("{}", ev.plan().unwrap());
//! println!("sum = {}", sum.get(0)?);
//! # Ok(()) }
//! ```
//!
//! The layers: [`caps`] (capabilities as plain data), [`plan`] (a pure function from
//! capabilities and a request to a [`Plan`]), `codegen` (kernels in `kernels/*.cl`
//! specialized by `-D` defines), `launch` (every `unsafe` OpenCL call; the only other `unsafe` is
//! the byte view of element slices in `buffer`), and [`Queue`] tying them together.

#![warn(missing_docs)]

/// Declares a module or re-export that is no part of the API: `pub` and hidden from the docs
/// with the `testkit` feature (the tests, the CLI and the benches enable it), `pub(crate)`
/// without it (where the library may not use all of it).
macro_rules! testkit {
    ($(#[$m:meta])* mod $name:ident;) => {
        $(#[$m])*
        #[cfg(feature = "testkit")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$m])*
        #[cfg(not(feature = "testkit"))]
        #[allow(dead_code, unused_imports)]
        pub(crate) mod $name;
    };
    ($(#[$m:meta])* use $($path:tt)*) => {
        $(#[$m])*
        #[cfg(feature = "testkit")]
        #[doc(hidden)]
        pub use $($path)*
        $(#[$m])*
        #[cfg(not(feature = "testkit"))]
        #[allow(unused_imports)]
        pub(crate) use $($path)*
    };
}

mod api;
pub mod caps;
testkit! { mod cases; }
testkit! { mod check; }
pub mod closure;
mod codegen;
mod error;
pub mod exact;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod multi;
mod ops;
pub mod plan;
mod runtime;
pub mod tune;
testkit! { use tune::cache as tune_cache; }
mod types;

testkit! { use runtime::device; }
testkit! { use ops::expr; }

pub use api::dynbuf::DynBuffer;
pub use api::{
    reduction, reduction_argmax, reduction_argmin, reduction_span, Axis, Form, Kernel, NdRange,
    Options, Queue, Range, ReduceEvent, Reduction, Reductions, Segments,
};
pub use caps::{DeviceCaps, Mask};
pub use device::{devices, Device};
pub use error::{Error, Result};
pub use ops::{CustomOp, Op, Operator};
pub use plan::{CrossAlgo, Determinism, GroupAlgo, Plan, SegmentAlgo, Strategy};
pub use runtime::buffer::{AnyBuffer, Buffer};
testkit! { use runtime::health::Fault; }
pub use types::{Bf16, ElemType, Element, Half, HostVec, Value};

/// README.md's code blocks, compiled and run as doctests (`cargo test --doc`) so the front
/// page cannot drift from the library.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// How many programs this process has built (every device, every queue; compiled from source,
/// or loaded from the program cache on disk, [`programs_from_disk`]): a repeated launch builds
/// nothing, so tests and benchmarks check "compile once" with it.
pub fn compiled_programs() -> u64 {
    runtime::program::compiled_count()
}

/// How many of [`compiled_programs`] this process loaded from the program cache on disk
/// instead of compiling them (README, "The program cache on disk": `CLREDUCE_PROGRAM_CACHE`).
pub fn programs_from_disk() -> u64 {
    runtime::disk_cache::loaded_count()
}

/// The plumbing `kernel!`'s expansion names: it must be reachable from the user's crate, but
/// it is no API to call by hand (hidden from the docs; its contents may change in any release).
#[doc(hidden)]
pub mod __private {
    pub use crate::closure::host::{
        BufBind, CapDesc, Capture, ClosureElem, Geometry, HostEnv, HostId, Num, Sink,
    };
    pub use crate::closure::ir::Ty;
    pub use crate::closure::reducers::{typed, HostRed, RedInput};
    pub use crate::closure::site::{RedsInput, Site};
}

/// A kernel body as a Rust closure (see [`closure`]).
pub use clreduce_macros::kernel;

// `::clreduce::...` paths in `kernel!`'s expansion also work inside this crate.
extern crate self as clreduce;
