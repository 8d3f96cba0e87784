//! Scratch memory a queue reuses across launches: partial results per variable slot, the
//! work-group counter of last-work-group detection, and the backup of result values.
//! architecture.md, "Scratch buffers and why reusing them is safe", gives the invariants.

use super::launch::{self, DeviceContext, Mem};
use crate::error::{Error, Result};
use crate::plan::{CrossAlgo, Plan, SpanStore, VarPlan};

/// Scratch memory reused across launches: partial results per variable slot, the work-group
/// counter of last-group detection, and a backup of result values that a launch overwrites
/// before its kernel runs. A launch holds the lock while it enqueues; the queue is in-order, so
/// the next launch's kernels run only after this one's have finished.
#[derive(Default)]
pub(crate) struct Scratch {
    pub partials: Vec<Option<Mem>>,
    pub counter: Option<Mem>,
    pub backup: Option<Mem>,
}

impl Scratch {
    /// Grows the scratch buffers to what `plan` needs (they only grow): partials for every
    /// variable, the counter, and `backup_bytes` of backup.
    pub fn prepare(
        &mut self,
        ctx: &DeviceContext,
        label: &str,
        plan: &Plan,
        backup_bytes: usize,
    ) -> Result<()> {
        while self.partials.len() < plan.vars.len() {
            self.partials.push(None);
        }
        for (k, v) in plan.vars.iter().enumerate() {
            let bytes = partial_bytes(plan, v).max(8);
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

/// Bytes of variable `v`'s partials: per work-group (last-group, extra pass) or per work-item
/// (a span in global scratch) copies of its accumulator; an exact sum's superaccumulators (one,
/// one per element of a span, or one row per work-group).
fn partial_bytes(plan: &Plan, v: &VarPlan) -> u64 {
    let elems = v.span.map_or(1, |s| s.len) as u64;
    if let Some(e) = v.exact {
        let sacc = (e.limbs() * 8) as u64;
        return match (v.span, v.cross) {
            (Some(_), _) | (None, CrossAlgo::Atomic) => elems * sacc,
            (None, _) => plan.groups * sacc,
        };
    }
    let rows = match v.span.map(|s| s.store) {
        Some(SpanStore::GlobalPrivate) => plan.groups * plan.local as u64,
        _ if matches!(v.cross, CrossAlgo::LastGroup | CrossAlgo::ExtraPass) => plan.groups,
        _ => 0,
    };
    rows * elems * v.acc_bytes as u64
}
