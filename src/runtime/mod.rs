//! The runtime: everything that talks to an OpenCL device. Devices (enumeration, selection,
//! shared contexts, capability queries and probes), programs (build and the process-wide cache),
//! launching (`launch.rs`: every `unsafe` OpenCL call), queues with their scratch memory and
//! launch caches, and typed buffers. Imports `caps`, `plan`, `codegen` (types only), `types`,
//! `error`; never `api`.

pub(crate) mod buffer;
mod build;
pub mod device;
pub(crate) mod dynbuf;
pub(crate) mod health;
pub(crate) mod launch;
pub(crate) mod memory;
mod probe;
pub(crate) mod program;
mod query;
pub(crate) mod queue;
pub(crate) mod readpath;
pub(crate) mod scratch;
