//! The public reduction API, and the one home of [`Queue`] (`queue.rs`: the type, its
//! constructors, buffers and launch cache; every method of it is in this folder). Bottom up:
//! iteration spaces (`range.rs`), options, kernel bodies (`kernel.rs`), the launched event,
//! reduction variables with their segmentations (`reduction.rs`), the queue, the checks every
//! launch makes (`checks.rs`), compile and enqueue (`run.rs`), segmented launches
//! (`segment.rs`, `span_idiom.rs`), `Queue::parallel_for_reduce` (`parallel_for.rs`) and the
//! whole-buffer shortcuts (`shortcuts.rs`). Imports `runtime`, `tune/cache.rs`, `codegen`,
//! `plan`, `check` (the identity check), `caps`, `ops`, `types`, `error`; `closure`, `multi`,
//! `mpi` and the tuner import it.

mod checks;
pub(crate) mod dynbuf;
mod event;
pub(crate) mod host;
mod kernel;
mod options;
mod parallel_for;
pub(crate) mod queue;
mod range;
pub(crate) mod reduction;
mod run;
mod segment;
mod segment_check;
mod shortcuts;
mod span_idiom;

pub use event::ReduceEvent;
pub use kernel::Kernel;
pub use options::Options;
pub use queue::Queue;
pub use range::{Form, NdRange, Range};
pub use reduction::{
    reduction, reduction_argmax, reduction_argmin, reduction_span, Axis, Reduction, Reductions,
    Segments,
};
