//! `DeviceQueue`: what the runtime keeps of a queue: a device, its shared context, one in-order
//! OpenCL command queue (profiling on request), the masked capabilities, the scratch memory
//! launches reuse, and a pool of 8-byte result buffers. It knows nothing of plans or kernels: the
//! API's `Queue` (`src/api/queue.rs`) holds one, adds the launch cache, and hands it sizes
//! (`Scratch::prepare`) and programs (`launch::enqueue_kernel`).

use super::device::Device;
use super::launch::{self, ClQueue, DeviceContext, Mem};
use super::readpath::ReadPath;
use super::scratch::Scratch;
use crate::caps::{DeviceCaps, Mask};
use crate::error::Result;
use std::sync::{Arc, Mutex};

/// A queue as the runtime sees it. Shared (`Arc`) by the API's `Queue` and its clones and by
/// every buffer the queue made.
pub(crate) struct DeviceQueue {
    pub device: Device,
    /// The device's shared context and in-order queue, each with the device's command lock
    /// where the device needs one (`Workarounds::serialize_device`, Oclgrind).
    pub context: DeviceContext,
    pub queue: Arc<ClQueue>,
    pub caps: DeviceCaps,
    pub mask: Mask,
    /// Whether the OpenCL queue records profiling timestamps (`Queue::with_profiling`).
    pub profiling: bool,
    pub scratch: Mutex<Scratch>,
    /// 8-byte buffers the shortcuts (`Queue::sum`, ...) take their results in and give back
    /// (`api/shortcuts.rs`): no allocation or zero-fill per call.
    pub results: Mutex<Vec<Arc<Mem>>>,
}

impl DeviceQueue {
    /// Opens a queue on `device` with its capabilities narrowed by `mask`; its commands record
    /// profiling timestamps when `profiling`.
    pub fn open(device: &Device, mask: Mask, profiling: bool) -> Result<DeviceQueue> {
        let caps = mask.apply(&device.caps()?);
        let context = DeviceContext::new(device.context()?, device.serial()?, device.memory()?);
        let path = ReadPath::from_env(&caps.workarounds, profiling)?;
        let queue = launch::create_queue(&context, device.id(), profiling, path)?;
        Ok(DeviceQueue {
            device: device.clone(),
            context,
            queue,
            caps,
            mask,
            profiling,
            scratch: Mutex::new(Scratch::default()),
            results: Mutex::new(Vec::new()),
        })
    }

    /// Reads `out.len()` bytes of `mem` from byte `offset`, through this queue (after the
    /// buffer's commands on any other queue of the device).
    pub fn read(&self, mem: &Mem, offset: usize, out: &mut [u8]) -> Result<()> {
        launch::read_bytes(&self.queue, mem, offset, out)
    }

    /// Writes `data` into `mem` from byte `offset`, through this queue.
    pub fn write(&self, mem: &Mem, offset: usize, data: &[u8]) -> Result<()> {
        launch::write_bytes(&self.queue, mem, offset, data)
    }
}
