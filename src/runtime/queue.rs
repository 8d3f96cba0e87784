//! `DeviceQueue`: what the runtime keeps of a queue: a device, its shared context, one in-order
//! OpenCL command queue (profiling on request), the masked capabilities, the scratch memory
//! launches reuse, and a pool of 8-byte result buffers. It knows nothing of plans or kernels: the
//! API's `Queue` (`src/api/queue.rs`) holds one, adds the launch cache, and hands it sizes
//! (`Scratch::prepare`) and programs (`launch::enqueue_kernel`).

use super::device::Device;
use super::launch::{self, ClQueue, DeviceContext, Mem};
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
        let queue = launch::create_queue(
            &context,
            device.id(),
            profiling,
            // CLREDUCE_NO_WAIT_BEFORE_READ: off, for measuring it (examples/latency.rs).
            caps.workarounds.wait_before_read
                && std::env::var_os("CLREDUCE_NO_WAIT_BEFORE_READ").is_none(),
            poll_read_budget(caps.workarounds.poll_read),
        )?;
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

/// How long a read polls its event before it blocks (`Workarounds::poll_read`);
/// `CLREDUCE_POLL_READ_US` overrides it for measuring (examples/latency.rs).
fn poll_read_budget(workaround: bool) -> Option<std::time::Duration> {
    poll_budget(
        workaround,
        std::env::var("CLREDUCE_POLL_READ_US").ok().as_deref(),
    )
}

/// The polling budget from the workaround and the override: a number of microseconds, 0 for
/// a plain blocking read (also on a device with the workaround); an override that is not a
/// number is ignored.
fn poll_budget(workaround: bool, over: Option<&str>) -> Option<std::time::Duration> {
    let us = match over.and_then(|v| v.trim().parse::<u64>().ok()) {
        Some(us) => us,
        None if workaround => crate::caps::POLL_READ_BUDGET_US,
        None => return None,
    };
    (us > 0).then(|| std::time::Duration::from_micros(us))
}

#[cfg(test)]
mod poll_tests {
    use super::poll_budget;
    use std::time::Duration;

    #[test]
    fn poll_budget_follows_the_workaround_and_the_override() {
        let dflt = Some(Duration::from_micros(crate::caps::POLL_READ_BUDGET_US));
        assert_eq!(poll_budget(true, None), dflt);
        assert_eq!(poll_budget(false, None), None);
        assert_eq!(poll_budget(true, Some("0")), None);
        assert_eq!(
            poll_budget(false, Some(" 250 ")),
            Some(Duration::from_micros(250))
        );
        assert_eq!(poll_budget(true, Some("soon")), dflt);
        assert_eq!(poll_budget(false, Some("soon")), None);
    }
}
