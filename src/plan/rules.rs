//! First-use rules: cheap corrections of the capability rules where the committed benches show
//! them slower, for a device with no measurements (no tuning cache). Each rule keys on the
//! capabilities (kind, atomics), the request and the rules' own plan, never on hidden state,
//! and carries beside it the figures that justify it (as CUB's tuning files do). A rule is a
//! soft hint (`tuning::follow`): where its plan does not plan (a mask, a determinism), the
//! capability rules' plan stands. A forced strategy skips the rules.

use super::model::{Plan, SpanStore};
use super::request::{FormRequest, Request};
use super::strategy::{GroupAlgo, Strategy};
use super::tuning::Hint;
use crate::caps::{DeviceCaps, DeviceKind};

/// The first rule that applies to `req`, given the capability rules' plan `base`.
pub(super) fn first_use(caps: &DeviceCaps, req: &Request, base: &Plan) -> Option<Hint> {
    span_shared_while_fold_dominates(caps, req, base)
}

/// A span on a CPU: private copies (`local-private`) cost a fold of `groups x local x len`
/// local reads and writes at the end, shared copies (`local-shared`) one local atomic per
/// element. Where the fold has more steps than there are elements, the shared copy wins.
///
/// PoCL 3.1 (2 compute units, 64 work-items per group, 2-core EPYC), u32-hist256, median device
/// time (design/bench/2026-11-23-cpu-cases.txt):
/// - 2^10 (1 group, fold 16384 > n): local-shared 4.9 us (local-atomic+last-group) vs
///   local-private 43.4 us (auto), 8.9x;
/// - 2^14 (4 groups, fold 65536 > n): local-shared 41.2 us vs local-private 113-161 us, 3.4x;
/// - 2^18 (8 groups, fold 131072 < n): local-private 236 us vs local-shared 390-431 us, so the
///   rule keeps the private copies there, and above.
///
/// Intel's CPU runtime runs one work-item per group (fold 256 x groups, below n from 2^10 on):
/// private copies at every size, as measured (2^10 2.0-2.2 us vs 2.3-2.6 shared).
fn span_shared_while_fold_dominates(caps: &DeviceCaps, req: &Request, base: &Plan) -> Option<Hint> {
    if caps.kind == DeviceKind::Gpu || req.vars.len() != 1 {
        return None;
    }
    let span = base.vars[0].span?;
    if span.store != SpanStore::LocalPrivate {
        return None;
    }
    let n = match req.form {
        FormRequest::Range { n } => n,
        FormRequest::NdRange { global, .. } => global,
    };
    let fold = base.groups * base.local as u64 * span.len as u64;
    if n >= fold {
        return None;
    }
    Some(Hint {
        strategy: Strategy {
            group: Some(GroupAlgo::LocalAtomic),
            cross: None,
        },
        geometry: None,
        why: format!(
            "first-use rule (no measurements for this device): on a CPU, private copies cost a fold of {} groups x {} work-items x {} elements = {fold} steps, more than the {n} elements; one shared copy per work-group with local atomics instead (PoCL u32-hist256: 4.9 us vs 43.4 us at 2^10, 41 vs 113 at 2^14)",
            base.groups, base.local, span.len
        ),
    })
}
