//! Scratch memory a queue reuses across launches: partial results per variable slot, the
//! work-group counter of last-work-group detection, and the backup of result values; and the
//! status of the launches that rely on it, so that a launch that died (its counter and slots
//! possibly not 0) is followed by fresh scratch, not stale counters and partials.
//! architecture.md, "Scratch buffers and why reusing them is safe", gives the invariants.

use super::health::{LaunchStatus, QueueHealth};
use super::launch::{self, ClQueue, DeviceContext, Mem};
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::sync::Arc;

/// At most this many launches' statuses are kept while their commands still run (a program
/// that launches without ever reading); older ones are forgotten unchecked.
const PENDING_MAX: usize = 256;

/// Scratch memory reused across launches: partial results per variable slot, the work-group
/// counter of last-group detection, and a backup of result values that a launch overwrites
/// before its kernel runs. A launch holds the lock while it enqueues; the queue is in-order, so
/// the next launch's kernels run only after this one's have finished.
#[derive(Default)]
pub(crate) struct Scratch {
    pub partials: Vec<Option<Mem>>,
    pub counter: Option<Mem>,
    pub backup: Option<Mem>,
    /// Launches that use the counter or the partial slots and were not yet seen complete,
    /// oldest first (the queue is in order).
    pending: VecDeque<Arc<LaunchStatus>>,
}

impl Scratch {
    /// Before a launch: looks at the launches still pending (oldest first, stopping at the
    /// first still running), and when one of them failed, or any command of the queue failed
    /// since the last look (`health`), drops the counter and the partial slots so that
    /// [`Scratch::prepare`] makes them again from zeros. A launch that died may have left them
    /// anything but 0 (design/decisions.md, "A launch that died").
    pub fn check(&mut self, health: &QueueHealth, label: impl Fn() -> String) {
        while let Some(front) = self.pending.front() {
            match front.poll() {
                Ok(true) => {
                    self.pending.pop_front();
                }
                Ok(false) => break,
                Err(code) => {
                    tracing::warn!(device = %label(), status = code, "a launch on this queue failed on the device");
                    health.mark_failed();
                    break;
                }
            }
        }
        if health.take_failed() {
            tracing::warn!(
                device = %label(),
                "a command of this queue failed: its scratch counter and partials are rebuilt"
            );
            self.pending.clear();
            self.counter = None;
            self.partials.clear();
        }
    }

    /// Records a launch that uses the counter or the partial slots, to be checked by the next
    /// [`Scratch::check`].
    pub fn track(&mut self, status: Arc<LaunchStatus>) {
        if self.pending.len() >= PENDING_MAX {
            self.pending.pop_front();
        }
        self.pending.push_back(status);
    }

    /// Test-only (`Fault::AfterMainKernel`, `Fault::KernelDied`): enqueues fills that leave the
    /// counter and every partial slot as a launch that died mid-run leaves them, not 0. The
    /// counter gets a ticket count past any work-group count, so no work-group of a launch
    /// that reuses it would ever see itself as the last one.
    pub fn poison(&self, q: &ClQueue) -> Result<()> {
        if let Some(c) = &self.counter {
            launch::fill(q, c, &0x4000_0000u32.to_le_bytes(), 0, 4)?;
        }
        for p in self.partials.iter().flatten() {
            launch::fill(q, p, &[0xA5], 0, p.bytes)?;
        }
        Ok(())
    }

    /// Grows the scratch buffers to what a launch needs (they only grow): `partial_bytes[k]`
    /// (at least 8) of partials for variable slot `k`, the counter, and `backup_bytes` of
    /// backup.
    pub fn prepare(
        &mut self,
        ctx: &DeviceContext,
        label: &str,
        partial_bytes: &[u64],
        backup_bytes: usize,
    ) -> Result<()> {
        while self.partials.len() < partial_bytes.len() {
            self.partials.push(None);
        }
        for (k, &bytes) in partial_bytes.iter().enumerate() {
            let bytes = bytes.max(8);
            let ok = self.partials[k]
                .as_ref()
                .is_some_and(|m| m.bytes as u64 >= bytes);
            if !ok {
                // Zeroed once at allocation (kernels leave every slot at 0 again). Created from
                // host zeros rather than filled: Oclgrind's uninitialised-value checker does not
                // see clEnqueueFillBuffer.
                let bytes = usize::try_from(bytes).map_err(|_| Error::InvalidRange {
                    reason: format!("{bytes} bytes of partials exceed the address space"),
                })?;
                let zeros = vec![0u8; bytes];
                self.partials[k] = None;
                self.partials[k] = Some(launch::create_mem(ctx, zeros.len(), Some(&zeros), label)?);
            }
        }
        if self.counter.is_none() {
            self.counter = Some(launch::create_mem(ctx, 4, Some(&[0u8; 4]), label)?);
        }
        if self.backup.as_ref().is_none_or(|m| m.bytes < backup_bytes) {
            self.backup = None;
            self.backup = Some(launch::create_mem(ctx, backup_bytes, None, label)?);
        }
        Ok(())
    }
}
