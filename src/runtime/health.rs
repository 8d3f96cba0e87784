//! What a queue knows about its own failures: a flag set when one of its commands failed
//! (an enqueue error in the middle of a launch, a wait or read that reported an error, a
//! launch whose event status went negative), the status of each launch that leaves state in
//! the queue's scratch memory, and the test-only fault injection ([`Fault`]).
//!
//! The scratch memory (`scratch.rs`) reads the flag before each launch: after a failure its
//! counter and partial slots may not be 0 any more, so they are rebuilt (design/decisions.md,
//! "A launch that died").

use super::memory::DeviceMemory;
use opencl3::event::Event;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A fault to inject into the next launch (or read) on one queue, for tests of the failure
/// paths on devices that never fail by themselves. Armed only by
/// [`Queue::__inject_fault`](crate::Queue::__inject_fault), hidden from the docs and there
/// only with the `testkit` feature; nothing else (no environment variable, no input) arms one.
/// Each fault strikes once. `code` is the OpenCL error code the failing call reports.
#[doc(hidden)]
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The enqueue of the launch's main kernel fails with `code`: the commands before it (a
    /// backup, identity fills) ran, the kernel did not.
    MainKernelEnqueue(i32),
    /// The main kernel is enqueued and runs, then the queue's scratch is left as a kernel
    /// that died mid-run leaves it (the work-group counter and the partial slots not 0), and
    /// the launch's next enqueue fails with `code`: a failed enqueue after some commands ran.
    AfterMainKernel(i32),
    /// As `AfterMainKernel`, but the launch returns normally and its commands report the
    /// execution status `code` when waited on or polled: a kernel that died on the device.
    KernelDied(i32),
    /// The next read on the queue transfers its data, then reports `code`.
    Read(i32),
    /// The launch runs normally, then leaves the scratch as `AfterMainKernel` does, and no
    /// failure is reported to anyone: the control that shows what a launch on stale scratch
    /// computes when the queue does not know it must rebuild it.
    StaleScratch,
}

/// The failure state of one command queue, shared by the queue, its launches' events and its
/// scratch memory.
pub(crate) struct QueueHealth {
    pub memory: Arc<DeviceMemory>,
    /// A command of this queue failed since the scratch memory last checked.
    failed: AtomicBool,
    /// Whether `fault` holds a fault (a cheap check on every launch and read).
    armed: AtomicBool,
    fault: Mutex<Option<Fault>>,
}

impl QueueHealth {
    pub(crate) fn new(memory: Arc<DeviceMemory>) -> QueueHealth {
        QueueHealth {
            memory,
            failed: AtomicBool::new(false),
            armed: AtomicBool::new(false),
            fault: Mutex::new(None),
        }
    }

    /// Records that a command of this queue failed.
    pub(crate) fn mark_failed(&self) {
        self.failed.store(true, Ordering::Release);
    }

    /// Whether a command failed since the last call; clears the flag.
    pub(crate) fn take_failed(&self) -> bool {
        self.failed.swap(false, Ordering::AcqRel)
    }

    #[cfg_attr(not(feature = "testkit"), allow(dead_code))]
    pub(crate) fn arm(&self, f: Fault) {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
        self.armed.store(true, Ordering::Release);
    }

    /// Takes the armed fault if `wanted` accepts it.
    pub(crate) fn take_fault(&self, wanted: impl Fn(Fault) -> bool) -> Option<Fault> {
        if !self.armed.load(Ordering::Acquire) {
            return None;
        }
        let mut slot = self.fault.lock().unwrap_or_else(|p| p.into_inner());
        let f = (*slot).filter(|&f| wanted(f))?;
        *slot = None;
        self.armed.store(false, Ordering::Release);
        Some(f)
    }
}

/// The commands of one launch, shared by its `ReduceEvent` and by the queue's scratch memory,
/// which looks at them before the next launch.
pub(crate) struct LaunchStatus {
    pub events: Vec<Event>,
    /// `Fault::KernelDied`: the status every look at these commands reports.
    pub injected: Option<i32>,
}

impl LaunchStatus {
    /// `Ok(true)` once every command has completed, `Ok(false)` while one still runs,
    /// `Err(status)` when one failed (a negative execution status, or the query itself
    /// failed). The commands are looked at in order and the look stops at the first one still
    /// running (the queue is in order): one `clGetEventInfo` per command at most.
    pub(crate) fn poll(&self) -> Result<bool, i32> {
        if let Some(code) = self.injected {
            return Err(code);
        }
        for e in &self.events {
            match e.command_execution_status().map_err(|e| e.0)?.0 {
                s if s < 0 => return Err(s),
                0 => {}
                _ => return Ok(false),
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_strikes_once_and_only_where_it_was_aimed() {
        let h = QueueHealth::new(Arc::new(DeviceMemory::new("x".into(), 0, 0)));
        assert_eq!(h.take_fault(|_| true), None);
        h.arm(Fault::Read(-4));
        assert_eq!(
            h.take_fault(|f| matches!(f, Fault::MainKernelEnqueue(_))),
            None
        );
        assert_eq!(
            h.take_fault(|f| matches!(f, Fault::Read(_))),
            Some(Fault::Read(-4))
        );
        assert_eq!(h.take_fault(|_| true), None);
        assert!(!h.take_failed());
        h.mark_failed();
        assert!(h.take_failed());
        assert!(!h.take_failed());
    }

    #[test]
    fn an_injected_status_is_a_failure() {
        let s = LaunchStatus {
            events: Vec::new(),
            injected: Some(-5),
        };
        assert_eq!(s.poll(), Err(-5));
        let ok = LaunchStatus {
            events: Vec::new(),
            injected: None,
        };
        assert_eq!(ok.poll(), Ok(true));
    }
}
