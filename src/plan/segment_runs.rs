//! The `runs` segmented plan's switches and local memory (kernels/segment_runs.cl;
//! design/segments.md, "`runs`"): which of its variants a launch takes, from the mean
//! segment length and the device, each rule with the measurement behind it.

use super::segment_model::SegmentRequest;
use crate::caps::{DeviceCaps, DeviceKind};

/// `runs`: whether the heads of the runs a segment covers are joined by a segmented scan over
/// the work-group (`SegmentPlan::scan`) rather than by the work-item where the segment starts,
/// one head after another; `scan=0|1` overrides. The scan costs log2(local) steps with two
/// barriers each in every tile where a segment starts, the serial fold one step per run the
/// segment covers: the scan from mean length 32 on. H200, 2^28 f32, heavy-tailed CSR of means
/// 32, 64, 128, 256, 1024, 4096 and 16384: 497.8, 455.6, 422.8, 399.2, 362.9, 337.6 and 331.8
/// us with the scan against 504.1, 481.1, 457.6, 436.0, 380.6, 350.6 and 337.5 without; mean
/// 16: 551.1 against 543.8 (decision 65).
pub(super) fn runs_scan(req: &SegmentRequest, mean: u64) -> bool {
    req.tune.scan.unwrap_or(mean >= 32)
}

/// `runs` with vector loads: whether a work-item issues its whole run's loads before the marks
/// (`SegmentPlan::pre`, kernels/segment_runs.cl `CLR_RUNS_PRE`); `pre=0|1` overrides. Where
/// few segments start in a run the marks and their barrier are the loads' wait: from mean
/// length 256 on (with 64 work-items up to 1024, [`runs_work_items`]). H200, 2^28 f32,
/// heavy-tailed CSR of means 16, 64, 256, 1024, 4096 and 16384 with 128 work-items: 595.9,
/// 481.7, 398.5, 346.0, 316.8 and 304.2 us with the early loads against 546.6, 458.3, 402.4,
/// 361.5, 336.4 and 332.7 without (design/bench/2026-11-25-h200-session13-csr.txt, decision
/// 71); with 64 work-items means 64, 256 and 1024 463.5, 379.4 and 335.3 against 456.6, 401.2
/// and 363.9 with the rules of then (design/bench/2026-11-25-h200-session16-csr3.txt, decision
/// 78). Not with the lean kernel (it has no such path).
/// The warp kernel (decision 81) takes them only where forced; the lean kernel never.
pub(super) fn runs_pre(req: &SegmentRequest, mean: u64, lean: bool, warp: u64) -> bool {
    match (warp > 0, lean) {
        (true, _) => req.tune.pre == Some(true),
        (false, true) => false,
        (false, false) => req.tune.pre.unwrap_or(mean >= 256),
    }
}

/// `runs`' work-items per work-group on GPUs: 64 where the early loads run at mean lengths
/// 256 to 4096 (one wave: 4224 work-groups of 64 are 32 per H200 SM, its resident limit), 128
/// elsewhere (`local=N` overrides). H200, 2^28 f32, heavy-tailed CSR (decision 78): 64 with
/// the early loads 379.4 / 335.3 us at means 256 / 1024 against 401.2 / 363.9 with 128 (and
/// the early loads at 1024); 64 without them 485.6 / 457.6, and 654.2 / 572.8 at 16 / 64
/// (decision 62: 128 against 256 and 512, 437.3 against 511.6 and 673.1 at mean 256). Above
/// 1024 (session 17, two alternating rounds, scripts/gpu/csr_wi_probe.sh): 64 took 322.0 /
/// 324.9 us at mean 2048 and 314.1 / 318.8 at 4096 against 330.1 / 330.5 and 319.0 / 320.7
/// with 128, but 310.0 / 311.4 at 16384 against 306.8 / 306.8; 256 lost everywhere.
/// The register scan kernel (decision 84) takes 64 wherever it runs: 456.8 / 347.6 / 311.9 us
/// at means 16 / 64 / 256 against 470.8 / 357.2 / 318.4 with 128 and 500.6 / 377.9 / 330.9
/// with 256 (call 1); 289.1 / 278.6 at 1024 / 4096 (call 2) against 296.1 / 285.1 with 128
/// (call 1; the second form measured in call 2, removed, ran 325.5 / 307.9 with 128 against
/// 330.5 / 312.9 with 64 there).
pub(super) fn runs_work_items(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    mean: u64,
    vectors: bool,
) -> usize {
    let warp = runs_warp_on(caps, req, mean);
    let wscan = warp && runs_wscan(caps, req, mean);
    if wscan || vectors && (256..=4096).contains(&mean) && runs_pre(req, mean, false, 0) && !warp {
        64
    } else {
        128
    }
}

/// `runs` with vector loads: whether every load runs the segment-start checks
/// (`SegmentPlan::checks`, `CLR_RUNS_SPLIT=0`) rather than only the loads that hold a start,
/// `checks=0|1` overrides: on GPUs in the other kernel without the early loads (mean lengths
/// 17 to 255, and 16 and less with 8-byte accumulators). H200, 2^28, heavy-tailed CSR,
/// interleaved medians of two (decision 78): f32 means 64 / 256 / 1024 436.0 / 387.9 / 351.9
/// us against 456.6 / 401.2 / 363.9; i32 256 387.5 against 403.2; f64 (2^27) 16 / 256 465.2 /
/// 373.7 against 477.9 / 383.9 (one round each); the lean kernel at mean 16 lost (f32 524.7
/// against 493.0, i32 525.3 against 492.9), as did lean with the checks at 64 (479.2). From
/// mean 256 on 64 work-items with the early loads won by more (379.4 / 335.3 at 256 / 1024);
/// the checks with them together were not measured (scripts/gpu/csr3_ab.sh's second call).
/// One path per load keeps a warp's work-items together where the split path diverges.
/// The warp kernel (decision 81) takes them on GPUs without the early loads.
/// The register scan kernel (decision 84) takes them below mean 256 and not from 256 on (H200,
/// 128 work-items, call 1: 318.4 / 296.1 us at 256 / 1024 with them against 314.2 / 289.2
/// without, 470.8 / 357.2 at 16 / 64 against 493.2 / 364.2).
pub(super) fn runs_checks(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    (lean, warp, wscan): (bool, bool, bool),
    (pre, mean): (bool, u64),
) -> bool {
    let gpu = caps.kind == DeviceKind::Gpu;
    let rule = if wscan {
        gpu && mean < 256
    } else {
        gpu && (!lean || warp) && !pre
    };
    req.tune.checks.unwrap_or(rule)
}

/// `runs`: whether the lean kernel runs (`SegmentPlan::lean`, `CLR_RUNS_LEAN`, decision 72):
/// the walk stores each piece of a run to local memory, and the work-item that marked a
/// segment finishes and stores it, so that a segment start in the walk costs no global store
/// and no local read, and a tile's results are written by consecutive work-items; `lean=0|1`
/// overrides. On GPUs at mean length 16 and less with 4-byte accumulators (one f32 or i32
/// variable): H200, 2^28 elements, heavy-tailed CSR of mean 16: f32 489.9 us against 556.2 in
/// the same call; mean 64: 471.9 against 455.4. With the store under the start's branch (the
/// form measured for them): i32 of mean 16 525.8 us (542.6 with the other kernel in session
/// 13), f64 (8-byte accumulators, 2^27) 583.5 against 492.1 (design/bench/
/// 2026-11-25-h200-session15-csr.txt). CPUs keep the other kernel (not measured there).
pub(super) fn runs_lean(caps: &DeviceCaps, req: &SegmentRequest, mean: u64, acc: usize) -> bool {
    let gpu = caps.kind == DeviceKind::Gpu;
    req.tune.lean.unwrap_or(gpu && mean <= 16 && acc <= 4)
}

/// `runs`: the warp kernel's work-items per barrier (`SegmentPlan::warp`, kernels/
/// segment_warp.cl, decision 81), 0 where it does not run; `warp=0|1|2` overrides (2: the
/// work-group's barriers). Each warp (32 work-items) runs on its own where the device orders a
/// warp's local memory by its own barrier (PTX `bar.warp.sync`: `DeviceCaps::warp_shuffle_ptx`,
/// NVIDIA) and the work-group holds several warps; elsewhere the work-group is the warp.
pub(super) fn runs_warp(caps: &DeviceCaps, req: &SegmentRequest, mean: u64, local: usize) -> u64 {
    if !runs_warp_on(caps, req, mean) {
        0
    } else if req.tune.warp != Some(2)
        && caps.warp_shuffle_ptx
        && local > 32
        && local.is_multiple_of(32)
    {
        32
    } else {
        local as u64
    }
}

/// Whether `runs` takes the warp kernel ([`runs_warp`]; `warp=0|1|2` overrides): on GPUs with
/// PTX warp barriers where the body reads at `[i]` (vector loads) at mean lengths up to 64
/// with reads of 4 bytes or less, up to 16 with wider ones, with the start checks on every
/// load ([`runs_checks`]). H200, 2^28 f32, heavy-tailed CSR (design/bench/
/// 2026-11-25-h200-session17-csr4.txt): call 1 (medians of two interleaved rounds), means 16 /
/// 64 481.6 / 428.4 us against the rules' 489.4 / 435.8 (without the checks 505.4 / 429.4; with
/// the work-group's barriers 485.9 / 428.5); 256 / 1024 / 4096 lost (403.8 / 398.6 / 355.3
/// against 386.5 / 335.9 / 319.7: no scan, a serial fold per run a segment covers). Call 2 (the
/// rule against warp=0, three rounds): f32 481.9 / 427.5 against 489.0 / 434.6, i32 480.2 /
/// 427.6 against 488.5 / 434.1; f64 (2^27, one round each) 448.1 against 464.2 at 16 (call 1:
/// 438.0 against 466.0) but 425.3 against 402.6 at 64, hence 16 for 8-byte reads.
pub(super) fn runs_warp_on(caps: &DeviceCaps, req: &SegmentRequest, mean: u64) -> bool {
    let longest = if req.read_bytes > 4 { 16 } else { 64 };
    let rule = caps.kind == DeviceKind::Gpu
        && caps.warp_shuffle_ptx
        && mean <= longest
        && req.read_bytes > 0;
    // The register scan kernel (decision 84) walks the warp kernel's ranges.
    req.tune
        .warp
        .map_or(rule || runs_wscan(caps, req, mean), |w| w > 0)
}

/// Whether the warp kernel's ranges are walked by the register scan kernel
/// (`SegmentPlan::wscan`, kernels/segment_scan.cl, decision 84; `wscan=0|1` overrides): each
/// element combined once in registers, the offsets read in order, the runs joined by a
/// segmented scan over the warp. On GPUs with PTX warp shuffles where the body reads at `[i]`,
/// at mean lengths up to 4096, with 64 work-items ([`runs_work_items`]) and the start checks
/// below mean 256 ([`runs_checks`]). H200, 2^28 f32, heavy-tailed CSR, medians of two
/// interleaved rounds (design/bench/2026-11-25-h200-session18-csr5.txt): call 2, this rule
/// against the rules before, means 16 / 64 / 256 / 1024 / 4096 456.2 / 346.6 / 310.5 / 289.1 /
/// 278.6 us against 480.1 / 428.8 / 385.2 / 335.5 / 315.5 (1.84x / 1.40x / 1.25x / 1.17x /
/// 1.12x of the plain sum against 1.94x / 1.73x / 1.56x / 1.36x / 1.27x); call 1 (128
/// work-items) 470.8 / 357.2 / 318.4 / 296.1 / 285.1 (64 work-items 456.8 / 347.6 / 311.9 at
/// 16 / 64 / 256, 256 work-items lost), i32 471.9 / 358.5 / 318.8 against 480.3 / 426.8 /
/// 387.3, f64 (2^27) 388.8 / 346.8 / 318.7 against 447.2 / 406.9 / 375.1 at 16 / 64 / 256.
/// Above 4096 nothing to gain (16384: 305.4 forced against 307.6).
pub(super) fn runs_wscan(caps: &DeviceCaps, req: &SegmentRequest, mean: u64) -> bool {
    let rule =
        caps.kind == DeviceKind::Gpu && caps.warp_shuffle_ptx && req.read_bytes > 0 && mean <= 4096;
    req.tune.wscan.unwrap_or(rule)
}

/// The register scan kernel's local memory (kernels/segment_scan.cl) beside the trees: per
/// warp of `ws` work-items, three start masks (a bit per element of a sub-tile of
/// `ws * per_item`) and two lists of segment numbers (4 bytes per element); without PTX
/// shuffles (`ws` the work-group) the scan's slots (the accumulators' bytes and 4 per
/// work-item and one), two counts and two longs.
pub(super) fn wscan_local(local: usize, ws: u64, per_item: u64, acc: usize) -> u64 {
    let (l, t) = (local as u64, ws * per_item);
    let warps = l / ws.max(1);
    let per_warp = 12 * t.div_ceil(32) + 8 * t;
    let portable = if ws >= l {
        (acc as u64 + 4) * (l + 1) + 8 + 16
    } else {
        0
    };
    warps * per_warp + portable
}

/// The warp kernel's range per warp (the plan's tile): whole sub-tiles of `ws * per_item`
/// elements, as many ranges as warps on `groups` work-groups where the elements allow.
/// Returns (tile, groups).
pub(super) fn warp_ranges(
    elements: u64,
    (local, ws, per_item): (u64, u64, u64),
    max_groups: u64,
) -> (u64, u64) {
    let sub = ws * per_item;
    let subs = elements.div_ceil(sub).max(1);
    let groups = subs.div_ceil(local / ws).clamp(1, max_groups.max(1));
    let warps = groups * (local / ws);
    (subs.div_ceil(warps) * sub, groups)
}

/// What `runs`' switches add to the plan's geometry reason (`explain`).
pub(super) fn runs_notes(
    scan: bool,
    lean: bool,
    pre: bool,
    checks: bool,
    (warp, wscan): (u64, bool),
) -> String {
    let mut s = String::new();
    if wscan {
        s += &format!("; register scan kernel: warps of {warp} work-items, each its own range of sub-tiles, every element combined once in registers, the offsets read in order, the runs joined by a segmented scan over the warp (GPUs with PTX warp shuffles: mean length 4096 and less)");
    } else if warp > 0 {
        s += &format!("; warp kernel: barriers over {warp} work-items, each its own range of sub-tiles walked as the lean kernel's runs, the segments cut between them joined in the first pass (GPUs with PTX warp barriers: mean length 64 and less, 16 with 8-byte reads)");
    }
    if scan {
        s += "; the runs' heads first combined by a segmented scan over the work-group (mean length 32 and up)";
    }
    if lean && warp == 0 {
        s += "; lean: the walk's pieces to local memory, each segment finished and stored by the work-item that marked it (GPUs: mean length 16 and less, 4-byte accumulators)";
    }
    if pre {
        s += "; each run's vector loads issued before the marks (mean length 256 and up)";
    }
    if checks {
        s += "; the segment-start checks on every vector load, one path for the warp (GPUs: the warp kernel, or neither the lean kernel nor the early loads)";
    }
    s
}

/// `runs`' local memory beside the trees: the start mask (a bit per element of a tile; two,
/// used by turns, in the lean kernel), the segment bounds of a batch of tiles (8 bytes per
/// work-item and one), the scan's flags (4 bytes per work-item), and either the segment
/// numbers at the starts (4 bytes per element) or, in the lean kernel (`lean`: the
/// accumulators' bytes of all variables), a piece per element and one more per run. The warp
/// kernel (decision 81) takes the lean kernel's count: its bounds (8 bytes per warp more) and
/// carry slots (the accumulators' bytes per warp) fit in the scan flags it does not use.
pub(super) fn runs_local(local: usize, per_item: u64, lean: Option<usize>) -> u64 {
    let (l, t) = (local as u64, local as u64 * per_item);
    let fixed = 8 * (l + 1) + 4 * l;
    match lean {
        None => 4 * t.div_ceil(32) + 4 * t + fixed,
        Some(acc) => 8 * t.div_ceil(32) + acc as u64 * l * (per_item + 1) + fixed,
    }
}

#[cfg(test)]
#[path = "segment_runs_tests.rs"]
mod tests;
