//! `Queue`: a device, its shared context, one in-order command queue (profiling on request, as
//! SYCL's `property::queue::enable_profiling`), the masked capabilities, and the scratch
//! buffers reductions reuse.

use super::device::{self, Device};
#[cfg(feature = "testkit")]
use super::health::Fault;
use super::launch::{self, Compiled, DeviceContext, DeviceQueue};
use super::readpath::ReadPath;
use super::scratch::Scratch;
use crate::caps::{DeviceCaps, Mask};
use crate::codegen::ParamKind;
use crate::error::Result;
use crate::plan::{Plan, Request};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(crate) struct QueueInner {
    pub device: Device,
    /// The device's shared context and in-order queue, each with the device's command lock
    /// where the device needs one (`Workarounds::serialize_device`, Oclgrind).
    pub context: DeviceContext,
    pub queue: Arc<DeviceQueue>,
    pub caps: DeviceCaps,
    pub mask: Mask,
    /// Whether the OpenCL queue records profiling timestamps (`Queue::with_profiling`).
    pub profiling: bool,
    pub scratch: Mutex<Scratch>,
    /// Compiled programs of this queue's launches, keyed by (options, names, params, body):
    /// a repeated launch skips code generation and the process-wide cache lookup.
    pub compiled: Mutex<HashMap<String, Arc<launch::Compiled>>>,
    /// Plans and programs of recent launches, keyed by everything they depend on: a repeated
    /// launch (same request, names, parameters and body) skips validation, planning and code
    /// generation. Cleared when it grows past `LAUNCH_CACHE_MAX` entries.
    pub launches: Mutex<HashMap<LaunchKey, Launchable>>,
    /// 8-byte buffers the shortcuts (`Queue::sum`, ...) take their results in and give back
    /// (`api/shortcuts.rs`): no allocation or zero-fill per call.
    pub results: Mutex<Vec<Arc<launch::Mem>>>,
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
    pub(crate) inner: Arc<QueueInner>,
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
        let caps = mask.apply(&device.caps()?);
        let context = DeviceContext::new(device.context()?, device.serial()?, device.memory()?);
        let path = ReadPath::from_env(&caps.workarounds, profiling)?;
        let queue = launch::create_queue(&context, device.id(), profiling, path)?;
        Ok(Queue {
            inner: Arc::new(QueueInner {
                device: device.clone(),
                context,
                queue,
                caps,
                mask,
                profiling,
                scratch: Mutex::new(Scratch::default()),
                compiled: Mutex::new(HashMap::new()),
                launches: Mutex::new(HashMap::new()),
                results: Mutex::new(Vec::new()),
            }),
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
}
