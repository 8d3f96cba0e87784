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
/// length 1024 on. H200, 2^28 f32, heavy-tailed CSR of means 16, 64, 256, 1024, 4096 and
/// 16384: 595.9, 481.7, 398.5, 346.0, 316.8 and 304.2 us with the early loads against 546.6,
/// 458.3, 402.4, 361.5, 336.4 and 332.7 without (design/bench/2026-11-25-h200-session13-csr.txt,
/// decision 71). Not with the lean kernel (it has no such path).
pub(super) fn runs_pre(req: &SegmentRequest, mean: u64) -> bool {
    req.tune.pre.unwrap_or(mean >= 1024)
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

/// `runs`' local memory beside the trees: the start mask (a bit per element of a tile; two,
/// used by turns, in the lean kernel), the segment bounds of a batch of tiles (8 bytes per
/// work-item and one), the scan's flags (4 bytes per work-item), and either the segment
/// numbers at the starts (4 bytes per element) or, in the lean kernel (`lean`: the
/// accumulators' bytes of all variables), a piece per element and one more per run.
pub(super) fn runs_local(local: usize, per_item: u64, lean: Option<usize>) -> u64 {
    let (l, t) = (local as u64, local as u64 * per_item);
    let fixed = 8 * (l + 1) + 4 * l;
    match lean {
        None => 4 * t.div_ceil(32) + 4 * t + fixed,
        Some(acc) => 8 * t.div_ceil(32) + acc as u64 * l * (per_item + 1) + fixed,
    }
}
