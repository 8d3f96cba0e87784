//! [`ReduceEvent`]: a launched reduction, its events, its plan and what it keeps alive.

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::runtime::health::{LaunchStatus, QueueHealth};
use crate::runtime::launch::{self, Mem};
use crate::runtime::queue::DeviceQueue;
use opencl3::event::Event;
use std::sync::Arc;

/// A launched reduction: its events, its plan, and what it must keep alive. The results are on
/// the device until read (`Buffer::to_vec`, `get`), which waits for them.
pub struct ReduceEvent {
    /// The launch's commands (shared with the queue's scratch memory, which looks at their
    /// status before the next launch).
    status: Arc<LaunchStatus>,
    /// The queue's failure record: a failed wait marks it.
    health: Arc<QueueHealth>,
    /// The device label when the queue records no profiling timestamps.
    unprofiled: Option<String>,
    /// How the queue polls (`Workarounds::poll_read`, `ReadPath::poll`): `wait` polls
    /// before it blocks.
    poll: Option<crate::runtime::readpath::Poll>,
    plan: Option<Arc<Plan>>,
    _keep: Vec<Arc<Mem>>,
}

impl std::fmt::Debug for ReduceEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReduceEvent")
            .field("commands", &self.commands())
            .field("plan", &self.plan.as_ref().map(|p| p.summary()))
            .finish()
    }
}

impl ReduceEvent {
    /// The event of a launch on `q`: its commands' events, the plan that ran and the buffers
    /// its commands use (kept alive until the event is dropped).
    pub(crate) fn new(
        q: &DeviceQueue,
        events: Vec<Event>,
        plan: Option<Arc<Plan>>,
        keep: Vec<Arc<Mem>>,
    ) -> ReduceEvent {
        ReduceEvent::with_status(q, events, None, plan, keep)
    }

    /// [`ReduceEvent::new`] with an injected execution status (`Fault::KernelDied`).
    pub(crate) fn with_status(
        q: &DeviceQueue,
        events: Vec<Event>,
        injected: Option<i32>,
        plan: Option<Arc<Plan>>,
        keep: Vec<Arc<Mem>>,
    ) -> ReduceEvent {
        ReduceEvent {
            status: Arc::new(LaunchStatus { events, injected }),
            health: q.queue.health.clone(),
            unprofiled: (!q.profiling).then(|| q.device.label()),
            poll: q.queue.poll_read(),
            plan,
            _keep: keep,
        }
    }
    /// Blocks until the reduction has finished. A command that failed on the device is an
    /// error (`Error::OutOfDeviceMemory` when it ran out of memory, else `Error::Cl` with the
    /// command's execution status); the queue then rebuilds its scratch memory before its
    /// next launch.
    pub fn wait(&self) -> Result<()> {
        if let Some(code) = self.status.injected {
            self.health.mark_failed();
            return Err(self.health.memory.error("clEnqueueNDRangeKernel", code));
        }
        for e in &self.status.events {
            launch::wait_event(e, self.poll, "clEnqueueNDRangeKernel", &self.health)?;
        }
        Ok(())
    }

    /// The launch's commands and their status, for the queue's scratch memory.
    pub(crate) fn status(&self) -> Arc<LaunchStatus> {
        self.status.clone()
    }
    /// The plan that ran (`None` when nothing had to run, e.g. n = 0).
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_deref()
    }
    /// Device time in nanoseconds from the first command's start to the last one's end
    /// (OpenCL profiling events). Waits first. Needs a queue made by
    /// [`Queue::with_profiling`](crate::Queue::with_profiling); on any other it is
    /// `Error::ProfilingDisabled`.
    pub fn device_time_ns(&self) -> Result<u64> {
        self.wait()?;
        if let Some(device) = &self.unprofiled {
            return Err(Error::ProfilingDisabled {
                device: device.clone(),
            });
        }
        let (Some(first), Some(last)) = (self.status.events.first(), self.status.events.last())
        else {
            return Ok(0);
        };
        let start = first
            .profiling_command_start()
            .map_err(Error::cl("clGetEventProfilingInfo"))?;
        let end = last
            .profiling_command_end()
            .map_err(Error::cl("clGetEventProfilingInfo"))?;
        Ok(end.saturating_sub(start))
    }
    /// Number of device commands this reduction enqueued.
    pub fn commands(&self) -> usize {
        self.status.events.len()
    }
}
