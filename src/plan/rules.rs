//! First-use rules: cheap corrections of the capability rules where measurements show them
//! slower, for a device with no measurements (no tuning cache). Each rule keys on the
//! capabilities (kind, atomics), the request and the capability rules' own plan, never on hidden
//! state, and carries beside it the figures that justify it (as CUB's tuning files do). A rule
//! gives soft hints (`hint::follow`), tried in order: where a hinted plan does not plan (a
//! mask, a determinism), the next one is tried, and in the end the capability rules' plan
//! stands. A forced strategy skips the rules; an expert geometry (`CLREDUCE_TUNE`) keeps its
//! geometry.
//!
//! The figures are medians of device time from `clreduce tune --verbose` (candidates timed
//! round by round, interleaved) on the 2-core Xeon (AVX-512) development machine, PoCL 3.1,
//! 2026-11-23 (design/bench/2026-11-23-cpu-tune-pocl.txt), and the session-4 bench on a 2-core
//! EPYC (design/bench/2026-11-23-cpu-cases.txt).

use super::hint::{Hint, Steps};
use super::model::{Plan, SpanStore};
use super::request::{FormRequest, Request, Tuning};
use super::strategy::{CrossAlgo, GroupAlgo, Strategy};
use crate::caps::{DeviceCaps, DeviceKind};

/// Bytes of private span copies per work-group that stay in a CPU core's L1 data cache (half of
/// a 32 KiB L1d).
const CPU_PRIVATE_COPIES_BYTES: usize = 16 << 10;

/// Up to this many indices, CPU work-groups (where the rules give more) have 16 work-items.
const CPU_SMALL_N: u64 = 1 << 16;

/// One part a rule changes: the work-group step, the cross-group step or the geometry, with
/// the reason it gives.
#[derive(Clone)]
enum Part {
    Group(GroupAlgo, String),
    Cross(CrossAlgo, String),
    Geometry(Tuning, String),
}

/// The hint that makes all of `parts`.
fn hint(parts: &[&Part]) -> Hint {
    let mut h = Hint::default();
    let mut s = Strategy::AUTO;
    for p in parts {
        match p {
            Part::Group(g, why) => (s.group, h.why_group) = (Some(*g), why.clone()),
            Part::Cross(c, why) => (s.cross, h.why_cross) = (Some(*c), why.clone()),
            Part::Geometry(t, why) => (h.geometry, h.why_geo) = (Some(*t), why.clone()),
        }
    }
    h.steps = Steps::Forced(s);
    h
}

/// Hints for `req`, given the capability rules' plan `base`, in the order to try them: every
/// combination of the rules' alternatives, the fullest first.
pub(super) fn first_use(caps: &DeviceCaps, req: &Request, base: &Plan) -> Vec<Hint> {
    if caps.kind != DeviceKind::Cpu {
        return Vec::new();
    }
    let n = match req.form {
        FormRequest::Range { n } => n,
        FormRequest::NdRange { global, .. } => global,
    };
    // Each entry: the alternatives for one dimension, in preference order (no entry: no
    // change there).
    let dims: Vec<Vec<Part>> = if base.vars.iter().any(|v| v.span.is_some()) {
        let range = matches!(req.form, FormRequest::Range { .. });
        vec![cpu_span_copies(base, n, range), cpu_span_cross(base)]
    } else {
        vec![
            cpu_tree_for_scalars(base).into_iter().collect(),
            cpu_small_groups_for_small_n(req, base, n)
                .into_iter()
                .collect(),
        ]
    };
    // Combinations: each dimension takes one of its alternatives or stays as the rules have it.
    let mut combos: Vec<Vec<&Part>> = vec![Vec::new()];
    for alts in &dims {
        let mut next = Vec::new();
        for c in &combos {
            for a in alts {
                let mut with = c.clone();
                with.push(a);
                next.push(with);
            }
            next.push(c.clone());
        }
        combos = next;
    }
    combos
        .iter()
        .filter(|c| !c.is_empty())
        .map(|c| hint(c))
        .collect()
}

/// A span on a CPU. Private per-work-item copies (`local-private`) are updated with plain
/// stores, but cost a fold of `groups x local x len` steps at the end, and run from L2 once a
/// work-group's copies outgrow L1; one shared copy (`local-shared`) costs a local atomic per
/// element. So: private copies with the work-group shrunk until they fit
/// [`CPU_PRIVATE_COPIES_BYTES`], unless even then the fold has more steps than there are
/// elements; then the shared copy.
///
/// PoCL, u32-hist256 (64 work-items by the rules: 64 KiB of copies per group; 16 fit):
/// - local 64 -> 16: 2^12 10.6 us (private, local 16) vs 27.0 (shared) vs 42.7 (private, 64);
///   2^16 54.7 vs 402.7 (shared) vs 334.1 (private, 64); 2^18 137 (local 32) vs 429 (64);
///   2^22 1892 (16) vs 2224 (64);
/// - the fold at 2^10 (1 group x 16 x 256 = 4096 > n): shared 7.6-8.1 us vs private 40.8 at
///   64 work-items; on the EPYC 4.9 us vs 43.4 (8.9x), and 41 vs 113-161 at 2^14 (3.4x).
///
/// Intel's CPU runtime runs one work-item per group: 1 KiB of copies, a fold of 256 x groups,
/// unchanged (2^10 2.0-2.2 us private vs 2.3-2.6 shared on the EPYC).
/// In the nd_range form the work-group is the caller's: only the store can change.
fn cpu_span_copies(base: &Plan, n: u64, range: bool) -> Vec<Part> {
    let [v] = &base.vars[..] else {
        return Vec::new();
    };
    let Some(span) = v.span.filter(|s| s.store == SpanStore::LocalPrivate) else {
        return Vec::new();
    };
    let mut local = base.local;
    while range && local > 1 && local * span.len * v.acc_bytes > CPU_PRIVATE_COPIES_BYTES {
        local /= 2;
    }
    let fold = base.groups * local as u64 * span.len as u64;
    let mut parts = Vec::new();
    if n < fold {
        parts.push(Part::Group(
            GroupAlgo::LocalAtomic,
            format!(
                "first-use rule (no measurements for this device): on a CPU, private copies cost a fold of {} groups x {local} work-items x {} elements = {fold} steps, more than the {n} elements; one shared copy per work-group with local atomics instead (PoCL u32-hist256 at 2^10: 7.6 us vs 40.8)",
                base.groups, span.len
            ),
        ));
    }
    if local < base.local {
        parts.push(Part::Geometry(
            Tuning {
                local: Some(local),
                ..Tuning::default()
            },
            format!(
                "first-use rule (no measurements for this device): on a CPU, {local} work-items per group so that their private copies of the span ({} bytes) stay in L1 (PoCL u32-hist256 at 2^16: 54.7 us with 16 work-items vs 334.1 with 64)",
                local * span.len * v.acc_bytes
            ),
        ));
    }
    parts
}

/// A span on a CPU whose rules combine the work-groups' copies with global atomics, element by
/// element: partials and last-work-group detection instead.
///
/// Intel's CPU runtime, u32-hist256 (one work-item per group): tree+last-group 9.7 / 32.3 /
/// 122.1 us at 2^14 / 2^16 / 2^18 against tree+atomic 16.0 / 54.4 / 143.7 (1.2-1.7x); 4096 bins:
/// 18.1 vs 107.1 us at 2^14. PoCL (64 work-items): equal within 3% (2^16 334.1 vs 334.1, 2^18
/// 446.3 vs 458.8).
fn cpu_span_cross(base: &Plan) -> Vec<Part> {
    let [v] = &base.vars[..] else {
        return Vec::new();
    };
    if v.cross != CrossAlgo::Atomic
        || !v
            .span
            .is_some_and(|s| matches!(s.store, SpanStore::LocalPrivate | SpanStore::LocalShared))
    {
        return Vec::new();
    }
    vec![Part::Cross(
        CrossAlgo::LastGroup,
        "first-use rule (no measurements for this device): on a CPU, a span's work-group copies combine through partials and the last work-group, not a global atomic per element (Intel u32-hist256 at 2^16: 32.3 us vs 54.4)".into(),
    )]
}

/// Scalar variables on a CPU: the local-memory tree, not local atomics or sub-group reduce, as
/// the work-group step, for every variable of a launch where the rules chose one of those. A
/// CPU runs a work-group's work-items one after another on one thread: an atomic
/// read-modify-write per work-item measured slower than the tree's plain steps, and Intel's
/// sub-group reduce (with one work-item per group) 10x slower.
///
/// PoCL (64 work-items per group), local-atomic+atomic against tree+atomic:
/// - i32 sum: tree+atomic 11.6 / 63.1 / 248.6 / 1010 us at 2^14 / 2^18 / 2^20 / 2^22 against
///   local-atomic+atomic 15.8 / 129.8 / 507.8 / 2034 us (1.4-2.0x);
/// - i32 max: 7.5 / 72.8 / 294.6 / 1199 against 12.1 / 137.0 / 514.5 / 2038 us (1.6-1.9x);
/// - i64 sum: 11.8 / 89.9 / 408.1 / 1530 against 15.4 / 111.1 / 475.7 / 1767 us (1.2-1.3x).
///
/// The session-4 EPYC bench (one sequential run per strategy, where the same plan measured
/// 0.4-2.0x itself) has tree+atomic within 0.8-1.5x of local-atomic+atomic for i32 sum.
///
/// Intel (one work-item per group), u32 bit_or, sg-reduce+atomic (the rules' plan: no
/// work-group collective for bitwise ops) against tree+atomic: 49.7 / 750.7 / 3140 us at 2^14 /
/// 2^18 / 2^20 against 4.2 / 55.3 / 241.0 (12-14x); the session-4 EPYC bench had forced
/// sg-reduce 10-15x slower than every other step for i32 sum and f32 sum+min+max.
fn cpu_tree_for_scalars(base: &Plan) -> Option<Part> {
    let slow = base
        .vars
        .iter()
        .find(|v| matches!(v.group, GroupAlgo::LocalAtomic | GroupAlgo::SgReduce))?;
    Some(Part::Group(
        GroupAlgo::Tree,
        format!(
            "first-use rule (no measurements for this device): on a CPU the local-memory tree, not {} (a CPU thread runs the work-items one after another; PoCL i32 sum tree+atomic 63 us vs local-atomic+atomic 130 us at 2^18; Intel u32 or tree+atomic 55 us vs sg-reduce+atomic 751 us at 2^18)",
            slow.group
        ),
    ))
}

/// Small launches on a CPU whose rules give many work-items per group (PoCL: 64): 16. Up to
/// [`CPU_SMALL_N`] indices the few work-groups (1 to 16) spend more on the work-group step
/// and on running many short work-items than on the indices.
///
/// PoCL, rules' plan with 64 work-items vs the tuner's best (16 unless said):
/// - f32 sum 2.1 / 3.4 / 8.2 / 22.1 us at 2^10 / 2^12 / 2^14 / 2^16 vs 1.5 (32) / 2.0 / 5.5 / 16.8;
/// - f32 max 2.3 / 3.7 / 14.2 vs 1.1 / 2.4 / 9.7 at 2^10 / 2^12 / 2^14;
/// - f32 sum+min+max 16.x / 44.x vs 8.7 / 31.4 at 2^14 / 2^16; f32 argmin 26.3 vs 11.3 at 2^14;
/// - at 2^18 and above the work-group size measured within 10% either way: the rule stops at
///   2^16.
fn cpu_small_groups_for_small_n(req: &Request, base: &Plan, n: u64) -> Option<Part> {
    if !matches!(req.form, FormRequest::Range { .. })
        || req.tuning.is_some()
        || base.local <= 16
        || n > CPU_SMALL_N
    {
        return None;
    }
    Some(Part::Geometry(
        Tuning {
            local: Some(16),
            ..Tuning::default()
        },
        format!("first-use rule (no measurements for this device): on a CPU, 16 work-items per group up to 2^16 indices (PoCL f32 sum at 2^14: 5.5 us vs 8.2 with 64, f32 argmin 11.3 vs 26.3); here n = {n}"),
    ))
}
