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
        .or_else(|| cpu_tree_over_local_atomics(caps, base))
}

/// Scalar variables on a CPU: the local-memory tree, not local atomics, as the work-group step.
/// A CPU runs a work-group's work-items one after another on one thread; the atomic
/// read-modify-write per work-item measured slower than the tree's plain steps, up to 2x.
///
/// PoCL 3.1 (2 compute units, 64 work-items per group, 2-core Xeon with AVX-512), medians of
/// device time over 11-15 interleaved rounds (`clreduce tune --verbose`, 2026-11-23):
/// - i32 sum: tree+atomic 11.6 / 63.1 / 248.6 / 1010 us at 2^14 / 2^18 / 2^20 / 2^22 against
///   local-atomic+atomic 15.8 / 129.8 / 507.8 / 2034 us (1.4-2.0x);
/// - i32 max: 7.5 / 72.8 / 294.6 / 1199 against 12.1 / 137.0 / 514.5 / 2038 us (1.6-1.9x);
/// - i64 sum: 11.8 / 89.9 / 408.1 / 1530 against 15.4 / 111.1 / 475.7 / 1767 us (1.2-1.3x).
///
/// The session-4 bench on a 2-core EPYC (design/bench/2026-11-23-cpu-cases.txt, one sequential
/// run per strategy, where the same plan measured 0.4-2.0x itself) has tree+atomic within
/// 0.8-1.5x of local-atomic+atomic for i32 sum. Devices with work-group collectives or
/// sub-groups (Intel's CPU runtime) do not choose local atomics for these ops anyway.
fn cpu_tree_over_local_atomics(caps: &DeviceCaps, base: &Plan) -> Option<Hint> {
    let steps_ok = base
        .vars
        .iter()
        .all(|v| v.span.is_none() && matches!(v.group, GroupAlgo::LocalAtomic | GroupAlgo::Tree));
    if caps.kind != DeviceKind::Cpu
        || !steps_ok
        || !base.vars.iter().any(|v| v.group == GroupAlgo::LocalAtomic)
    {
        return None;
    }
    Some(Hint {
        strategy: Strategy {
            group: Some(GroupAlgo::Tree),
            cross: None,
        },
        geometry: None,
        why: "first-use rule (no measurements for this device): on a CPU the local-memory tree, not local atomics (a CPU thread runs the work-items one after another; PoCL i32 sum tree+atomic 63 us vs local-atomic+atomic 130 us at 2^18, 1010 vs 2034 at 2^22)".into(),
    })
}

/// A span on a CPU: private copies (`local-private`) cost a fold of `groups x local x len`
/// local reads and writes at the end, shared copies (`local-shared`) one local atomic per
/// element. Where the fold has more steps than there are elements, the shared copy wins.
///
/// PoCL 3.1 (2 compute units, 64 work-items per group, 2-core EPYC), u32-hist256, median device
/// time (design/bench/2026-11-23-cpu-cases.txt; the 2-core Xeon of 2026-11-23 agrees, interleaved
/// tuner medians: 2^10 12.4 us shared vs 46.0 private, 2^14 107.8 vs 171.5, 2^18 446 private vs
/// 1601 shared):
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
