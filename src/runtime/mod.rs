//! The runtime: everything that talks to an OpenCL device. Devices (enumeration, selection,
//! shared contexts, capability queries and probes), programs (build, the process-wide cache and
//! the binaries on disk),
//! launching (`launch.rs`: every `unsafe` OpenCL call), `DeviceQueue` (`queue.rs`: a device's
//! OpenCL queue with its capabilities, scratch memory and result-buffer pool), and typed
//! buffers. It is handed sizes and programs: it imports `caps`, `types` and `error`, never
//! `plan`, `codegen` or `api`.

pub(crate) mod buffer;
mod build;
pub mod device;
pub(crate) mod disk_cache;
pub(crate) mod gate;
pub(crate) mod health;
pub(crate) mod launch;
pub(crate) mod memory;
mod probe;
pub(crate) mod program;
mod query;
pub(crate) mod queue;
pub(crate) mod readpath;
pub(crate) mod scratch;
