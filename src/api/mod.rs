//! The public reduction API: iteration spaces (`range.rs`), reduction variables
//! (`reduction.rs`), kernel bodies (`kernel.rs`), options, the launched event, and
//! `Queue::parallel_for_reduce` (`parallel_for.rs`: prepare and plan; `run.rs`: compile and
//! enqueue) with the whole-buffer shortcuts (`shortcuts.rs`). Imports `runtime`, `codegen`,
//! `plan`, `ops`, `types`, `error`; nothing imports it but the crate root.

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
