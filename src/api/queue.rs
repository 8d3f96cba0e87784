//! `Queue`, the handle a user launches on, in one place: the type, its constructors, buffers,
//! the launch cache, and (in the other files of this folder) every method a launch calls
//! (`parallel_for.rs`, `checks.rs`, `run.rs`, `segment.rs`, `shortcuts.rs`). Below it the
//! runtime's `DeviceQueue` (`src/runtime/queue.rs`) holds the device, the OpenCL queue, the
//! capabilities and the scratch memory, and knows nothing of plans or kernels.

use crate::caps::{DeviceCaps, Mask};
use crate::codegen::ParamKind;
use crate::error::Result;
use crate::plan::{Plan, Request};
use crate::runtime::buffer::Buffer;
use crate::runtime::device::{self, Device};
#[cfg(feature = "testkit")]
use crate::runtime::health::Fault;
use crate::runtime::launch::{self, Compiled, Mem};
use crate::runtime::queue::DeviceQueue;
use crate::types::Element;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a queue remembers between launches (shared by its clones; a queue made by
/// [`Queue::with_profiling`] starts its own).
#[derive(Default)]
pub(crate) struct LaunchCache {
    /// Compiled programs of this queue's launches, keyed by (options, names, params, body):
    /// a repeated launch skips code generation and the process-wide cache lookup.
    pub compiled: Mutex<HashMap<String, Arc<Compiled>>>,
    /// Plans and programs of recent launches, keyed by everything they depend on: a repeated
    /// launch (same request, names, parameters and body) skips validation, planning and code
    /// generation. Cleared when it grows past `LAUNCH_CACHE_MAX` entries.
    pub launches: Mutex<HashMap<LaunchKey, Launchable>>,
}

pub(crate) const LAUNCH_CACHE_MAX: usize = 4096;

/// Everything a launch's plan and program depend on: the key of the queue's launch cache.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct LaunchKey {
    pub req: Request,
    pub names: Vec<String>,
    pub params: Vec<(String, ParamKind)>,
    pub body: String,
    /// Whether the device's measurements (the tuning cache) were consulted.
    pub measured: bool,
    /// Which variables run in raw mode (multi-device shares, `Reduction::raw_into`).
    pub raw: Vec<bool>,
}

/// A cached plan with its compiled program.
#[derive(Clone)]
pub(crate) struct Launchable {
    pub plan: Arc<Plan>,
    pub compiled: Arc<Compiled>,
}

/// A device plus an in-order command queue. Profiling is off unless asked for
/// ([`Queue::with_profiling`]), as in SYCL: on NVIDIA's OpenCL a profiling queue costs about
/// 6 us more per enqueue (design/decisions.md). `Send + Sync`: share it between
/// threads freely (launches from several threads are serialized at enqueue; on a device with
/// `Workarounds::serialize_device`, such as Oclgrind, every command of every queue on that
/// device runs under one process-wide lock).
#[derive(Clone)]
pub struct Queue {
    /// The runtime's part: device, context, OpenCL queue, capabilities, scratch memory.
    pub(crate) inner: Arc<DeviceQueue>,
    /// The API's part: plans and programs of earlier launches.
    pub(crate) cache: Arc<LaunchCache>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Queue({})", self.inner.device.label())
    }
}

impl Queue {
    /// A queue on the default device (`CLREDUCE_DEVICE`, else the first GPU, else a CPU), with
    /// the mask from `CLREDUCE_MASK`.
    ///
    /// ```
    /// use clreduce::Queue;
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = Queue::default()?;
    /// println!("running on {}", queue.device().label());
    /// let x = queue.buffer_from(&[1u32, 2, 3])?;
    /// assert_eq!(queue.sum(&x)?, 6);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn default() -> Result<Queue> {
        Queue::new(&device::select(None)?)
    }

    /// A queue on a device picked by index or name substring (see [`device::select`]).
    ///
    /// A name that matches several devices is
    /// [`Error::AmbiguousDevice`](crate::Error::AmbiguousDevice), one that matches none
    /// [`Error::DeviceNotFound`](crate::Error::DeviceNotFound).
    ///
    /// ```
    /// use clreduce::{Error, Queue};
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = Queue::with_device("0")?; // the first device `clreduce devices` lists
    /// assert_eq!(queue.device().index(), 0);
    /// assert!(matches!(
    ///     Queue::with_device("no such device"),
    ///     Err(Error::DeviceNotFound { .. })
    /// ));
    /// # Ok(()) }
    /// ```
    pub fn with_device(spec: &str) -> Result<Queue> {
        Queue::new(&device::select(Some(spec))?)
    }

    /// A queue on `device` with the mask from `CLREDUCE_MASK`.
    ///
    /// ```
    /// use clreduce::{devices, Queue};
    /// # fn main() -> clreduce::Result<()> {
    /// let device = &devices()?[0];
    /// let queue = Queue::new(device)?;
    /// assert_eq!(queue.device().label(), device.label());
    /// # Ok(()) }
    /// ```
    pub fn new(device: &Device) -> Result<Queue> {
        Queue::with_mask(device, Mask::from_env()?)
    }

    /// A queue on `device` whose capabilities are narrowed by `mask` (a mask only removes).
    pub fn with_mask(device: &Device, mask: Mask) -> Result<Queue> {
        Queue::build(device, mask, false)
    }

    /// A new queue on the same device with the same mask whose commands record profiling
    /// timestamps, so that [`crate::ReduceEvent::device_time_ns`] works (SYCL's
    /// `property::queue::enable_profiling`). It shares the device's context: buffers of either
    /// queue work on both (see [`crate::Buffer`]).
    pub fn with_profiling(&self) -> Result<Queue> {
        Queue::build(&self.inner.device, self.inner.mask, true)
    }

    /// Whether this queue records profiling timestamps.
    pub fn is_profiling(&self) -> bool {
        self.inner.profiling
    }

    fn build(device: &Device, mask: Mask, profiling: bool) -> Result<Queue> {
        Ok(Queue {
            inner: Arc::new(DeviceQueue::open(device, mask, profiling)?),
            cache: Arc::new(LaunchCache::default()),
        })
    }

    /// The device this queue runs on.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The capabilities plans are made from (after probes and the mask).
    pub fn caps(&self) -> &DeviceCaps {
        &self.inner.caps
    }

    /// The capability mask this queue was made with (empty for none).
    pub fn mask(&self) -> Mask {
        self.inner.mask
    }

    /// Waits for everything enqueued on this queue.
    pub fn finish(&self) -> Result<()> {
        self.inner.queue.finish()
    }

    /// Test-only: makes the next launch (or read) on this queue fail as `fault` says, once.
    /// For tests of the failure paths (errors that lose nothing, scratch memory rebuilt after a
    /// launch died) on devices that never fail by themselves; not part of the API.
    #[doc(hidden)]
    #[cfg(feature = "testkit")]
    pub fn __inject_fault(&self, fault: Fault) {
        self.inner.queue.health.arm(fault);
    }

    /// Test-only: whether this queue's shortcuts take their results from host mailboxes
    /// (one has matched its read, none has failed; design/decisions.md section 56).
    #[doc(hidden)]
    #[cfg(feature = "testkit")]
    pub fn __mailbox_proven(&self) -> bool {
        crate::runtime::launch::mailbox_proven(&self.inner.queue)
    }
}

impl Queue {
    /// A device buffer holding a copy of `data`.
    ///
    /// A type the device lacks (f64 without `cl_khr_fp64`) is
    /// [`Error::Unsupported`](crate::Error::Unsupported), a size the device cannot hold
    /// [`Error::AllocTooLarge`](crate::Error::AllocTooLarge). See [`Buffer`].
    pub fn buffer_from<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        Buffer::create(&self.inner, Some(data), data.len())
    }

    /// A device buffer of `len` elements, zero-filled.
    pub fn buffer<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        let b = Buffer::create(&self.inner, None, len)?;
        if len > 0 {
            launch::fill(
                &self.inner.queue,
                &b.mem,
                &[0u8; 8][..std::mem::size_of::<T>()],
                0,
                b.mem.bytes,
            )?;
        }
        Ok(b)
    }

    /// Reads `out.len()` bytes of `mem` (a buffer of this queue's device) from byte `offset`,
    /// through this queue: how `multi` and a closure's host form read variables.
    pub(crate) fn read_bytes(&self, mem: &Mem, offset: usize, out: &mut [u8]) -> Result<()> {
        self.inner.read(mem, offset, out)
    }

    /// Writes `data` into `mem` (a buffer of this queue's device) from byte `offset`, through
    /// this queue: how `multi` writes combined results.
    pub(crate) fn write_bytes(&self, mem: &Mem, offset: usize, data: &[u8]) -> Result<()> {
        self.inner.write(mem, offset, data)
    }

    /// Submits what was enqueued without waiting for it (`clFlush`): a multi-device launch
    /// starts every device's share before it blocks on any of them.
    pub(crate) fn flush(&self) -> Result<()> {
        self.inner.queue.flush()
    }
}
