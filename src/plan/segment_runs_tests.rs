//! Unit tests of `runs`' switches (`segment_runs.rs`): the work-items, early loads and start
//! checks of decision 78, the warp kernel (decision 81), its barriers by device and its ranges.
use super::super::segment::plan_segments;
use super::super::segment::tests::base;
use super::*;
use crate::caps::fixtures;
use crate::plan::model::Plan;
use crate::plan::{SegmentAlgo, SegmentLayout, SegmentTune};

/// `runs` forced on `c` over `n` elements in `n / mean` CSR segments, one f32 sum read at
/// `[i]` (4 bytes), with `tune`.
fn runs(c: &DeviceCaps, n: u64, mean: u64, tune: SegmentTune) -> Plan {
    runs_reading(c, n, mean, 4, tune)
}

/// The same where the body reads `read_bytes` at `[i]` (0: nothing there).
fn runs_reading(c: &DeviceCaps, n: u64, mean: u64, read_bytes: u64, tune: SegmentTune) -> Plan {
    let req = SegmentRequest {
        layout: SegmentLayout::Offsets,
        segments: n / mean,
        elements: n,
        force: Some(SegmentAlgo::Runs),
        tune,
        longest: 0,
        read_bytes,
    };
    plan_segments(c, base(c, n), &req, None).unwrap()
}

/// The warp kernel forced (`warp=w`), without the register scan kernel over its ranges
/// (decision 84's rule takes that where it runs).
fn warp(w: u8) -> SegmentTune {
    SegmentTune {
        warp: Some(w),
        wscan: Some(false),
        ..SegmentTune::default()
    }
}

/// The warp kernel forced: warps of 32 on the H200 (PTX warp barriers) in work-groups of 128,
/// 64 or 256; the work-group's barriers with `warp=2`, on a work-group of 32, and on every
/// device without PTX warp barriers; always the lean walk, never the scan, the early loads
/// only where forced (`pre=1`); `warp=0` leaves it off.
#[test]
fn warp_kernel_barriers_by_device() {
    let n = 1u64 << 28;
    let h = fixtures::nvidia_h200();
    let sp = |p: &Plan| p.segment.clone().unwrap();
    for mean in [16, 64, 256, 4096] {
        let p = runs(&h, n, mean, warp(1));
        let s = sp(&p);
        assert_eq!((p.local, s.warp), (128, 32), "mean {mean}");
        assert!(s.lean && !s.scan && !s.pre, "mean {mean}");
        assert!(
            p.to_string().contains("warp kernel: barriers over 32"),
            "{p}"
        );
        assert_eq!(sp(&runs(&h, n, mean, warp(0))).warp, 0);
    }
    for (local, ws) in [(64, 32), (256, 32), (32, 32)] {
        let t = SegmentTune {
            local: Some(local),
            ..warp(1)
        };
        assert_eq!(sp(&runs(&h, n, 16, t)).warp, ws, "local {local}");
    }
    assert_eq!(sp(&runs(&h, n, 16, warp(2))).warp, 128);
    // The early loads only where forced (pre=1).
    let pre = SegmentTune {
        pre: Some(true),
        ..warp(1)
    };
    assert!(sp(&runs(&h, n, 16, pre)).pre && sp(&runs(&h, n, 16, pre)).lean);
    let mut no_ptx = h.clone();
    no_ptx.warp_shuffle_ptx = false;
    assert_eq!(sp(&runs(&no_ptx, n, 16, warp(1))).warp, 128);
    for (name, c) in fixtures::all() {
        if c.warp_shuffle_ptx {
            continue;
        }
        let p = runs(&c, n >> 8, 16, warp(1));
        assert_eq!(sp(&p).warp, p.local as u64, "{name}");
        assert!(sp(&p).lean, "{name}");
    }
}

/// The warp kernel's ranges: whole sub-tiles (32 runs of 16 on the H200), at most one range
/// per warp of the launch's work-groups (at most 4 fills), every element covered; a small
/// launch gets fewer work-groups, one sub-tile each.
#[test]
fn warp_kernel_ranges_cover_the_elements() {
    let h = fixtures::nvidia_h200();
    let fill4 = h.compute_units as u64 * 8 * 4;
    for n in [1u64 << 28, 100_003, 513, 17] {
        let p = runs(&h, n, 16, warp(1));
        let s = p.segment.clone().unwrap();
        let sub = 32 * s.per_item;
        assert_eq!(s.per_item, 16);
        assert_eq!(s.tile % sub, 0, "n {n}");
        let ranges = n.div_ceil(s.tile);
        let warps = p.groups * (p.local as u64 / 32);
        assert!(
            p.groups <= fill4 && ranges <= warps,
            "n {n}: {ranges} ranges, {warps} warps"
        );
        // As few sub-tiles per range as cover the elements with one range per warp.
        assert_eq!(s.tile, n.div_ceil(sub).div_ceil(warps) * sub, "n {n}");
    }
    // 2^28: 4224 work-groups of 4 warps, ranges of 32 sub-tiles of 512.
    assert_eq!(warp_ranges(1 << 28, (128, 32, 16), fill4), (16384, fill4));
    assert_eq!(warp_ranges(1000, (128, 32, 16), fill4), (512, 1));
    assert_eq!(warp_ranges(1 << 20, (64, 64, 16), 8), (1 << 17, 8));
}

/// The rule (decision 81): the warp kernel on GPUs with PTX warp barriers where the body reads
/// at `[i]`, at mean lengths up to 64 (4-byte reads) or 16 (8-byte reads), with the checks on
/// every load (not with forced early loads); the other kernels elsewhere, on other GPUs and on
/// CPUs. (Without the register scan kernel, `wscan=0`: its rule is tested below.)
#[test]
fn warp_kernel_rule_by_mean_and_device() {
    let n = 1u64 << 28;
    let h = fixtures::nvidia_h200();
    let none = wscan(false);
    let plan = |c: &DeviceCaps, mean: u64, bytes: u64, tune: SegmentTune| {
        let s = runs_reading(c, n, mean, bytes, tune).segment.unwrap();
        (s.warp, s.checks, s.lean)
    };
    for (mean, bytes, want) in [
        (1, 4, (32, true, true)),
        (16, 4, (32, true, true)),
        (64, 4, (32, true, true)),
        (16, 8, (32, true, true)),
        (17, 8, (0, true, false)),
        (64, 8, (0, true, false)),
        (65, 4, (0, true, false)),
        (256, 4, (0, false, false)),
        (16, 0, (0, false, true)),
    ] {
        assert_eq!(
            plan(&h, mean, bytes, none),
            want,
            "mean {mean}, {bytes} bytes"
        );
    }
    let pre = SegmentTune {
        pre: Some(true),
        ..none
    };
    assert_eq!(plan(&h, 16, 4, pre), (32, false, true));
    let no_checks = SegmentTune {
        checks: Some(false),
        ..none
    };
    assert_eq!(plan(&h, 16, 4, no_checks), (32, false, true));
    let mut no_ptx = h.clone();
    no_ptx.warp_shuffle_ptx = false;
    assert_eq!(plan(&no_ptx, 16, 4, none).0, 0);
    for (name, c) in fixtures::all() {
        if c.kind != DeviceKind::Gpu || !c.warp_shuffle_ptx {
            assert_eq!(plan(&c, 16, 4, none).0, 0, "{name}");
        }
    }
}

/// The rules of decision 78 for the other kernels: work-items, early loads and start checks.
#[test]
fn runs_work_items_and_checks_follow_the_rules() {
    let n = 1u64 << 28;
    let h = fixtures::nvidia_h200();
    // The other kernels (the warp kernel, decision 81: the tests below).
    let none = SegmentTune::parse("warp=0").unwrap();
    let get = |c: &DeviceCaps, mean: u64, bytes: u64, tune: SegmentTune| {
        let p = runs_reading(c, n, mean, bytes, tune);
        let s = p.segment.unwrap();
        (p.local, s.pre, s.checks, s.lean)
    };
    // The H200 (decisions 78 and 83): 64 work-items with the early loads at means 256 to 4096, 128
    // elsewhere (the early loads from 256); the start checks on every load outside the lean
    // kernel (mean 16 and less) and the early loads.
    assert_eq!(get(&h, 16, 4, none), (128, false, false, true));
    assert_eq!(get(&h, 64, 4, none), (128, false, true, false));
    assert_eq!(get(&h, 255, 4, none), (128, false, true, false));
    assert_eq!(get(&h, 256, 4, none), (64, true, false, false));
    assert_eq!(get(&h, 1024, 4, none), (64, true, false, false));
    assert_eq!(get(&h, 4096, 4, none), (64, true, false, false));
    assert_eq!(get(&h, 4097, 4, none), (128, true, false, false));
    assert_eq!(get(&h, 16384, 4, none), (128, true, false, false));
    // 8-byte reads (double2 loads) the same.
    assert_eq!(get(&h, 256, 8, none), (64, true, false, false));
    assert_eq!(get(&h, 64, 8, none), (128, false, true, false));
    // No vector loads (a body that reads nothing at [i]): 128, neither switch.
    assert_eq!(get(&h, 256, 0, none), (128, false, false, false));
    // Overrides: pre=0 keeps 128 and takes the checks; local=N wins; checks=0|1; lean=0 at 16
    // takes the checks.
    let t = |pre, local, checks, lean| SegmentTune {
        pre,
        local,
        checks,
        lean,
        ..none
    };
    assert_eq!(
        get(&h, 256, 4, t(Some(false), None, None, None)),
        (128, false, true, false)
    );
    assert_eq!(
        get(&h, 256, 4, t(None, Some(128), None, None)),
        (128, true, false, false)
    );
    assert!(!get(&h, 64, 4, t(None, None, Some(false), None)).2);
    assert_eq!(
        get(&h, 256, 4, t(None, None, Some(true), None)),
        (64, true, true, false)
    );
    assert!(get(&h, 16, 4, t(None, None, Some(true), None)).2);
    assert!(get(&h, 16, 4, t(None, None, None, Some(false))).2);
    // CPUs: no vector loads unless forced, and no checks unless forced.
    for (name, c) in fixtures::all() {
        if c.kind == DeviceKind::Gpu {
            continue;
        }
        let (_, pre, checks, _) = get(&c, 256, 4, none);
        assert!(!pre && !checks, "{name}");
        let vec = SegmentTune {
            vec: Some(4),
            ..none
        };
        assert!(!get(&c, 256, 4, vec).2, "{name}");
        let forced_checks = SegmentTune {
            checks: Some(true),
            ..vec
        };
        assert!(get(&c, 256, 4, forced_checks).2, "{name}");
    }
}

fn wscan(on: bool) -> SegmentTune {
    SegmentTune {
        wscan: Some(on),
        ..SegmentTune::default()
    }
}

/// The register scan kernel forced (decision 84): the warp kernel's ranges and warps (32 on the
/// H200, the work-group elsewhere), not the lean kernel's walk, its own local memory (masks and
/// segment numbers per warp, the scan's slots without PTX shuffles), named by `explain`;
/// `wscan=0` leaves the warp kernel as it was.
#[test]
fn wscan_forced_takes_the_warp_ranges() {
    let n = 1u64 << 28;
    let h = fixtures::nvidia_h200();
    let sp = |p: &Plan| p.segment.clone().unwrap();
    for mean in [1, 16, 64, 256, 4096, 65536] {
        let p = runs(&h, n, mean, wscan(true));
        let s = sp(&p);
        assert_eq!((p.local, s.warp, s.wscan, s.lean), (64, 32, true, false));
        assert_eq!(s.per_item, 16, "mean {mean}");
        assert_eq!(
            (s.tile, p.groups),
            warp_ranges(n, (64, 32, 16), h.compute_units as u64 * 32)
        );
        assert!(p.to_string().contains("register scan kernel: warps of 32"));
        assert!(!p.to_string().contains("warp kernel: barriers"));
    }
    let off = sp(&runs(&h, n, 16, wscan(false)));
    assert_eq!((off.warp, off.wscan, off.lean), (32, false, true));
    // The warp kernel forced off takes the scan kernel off with it (it walks its ranges).
    let no_warp = SegmentTune {
        warp: Some(0),
        ..wscan(true)
    };
    assert_eq!(sp(&runs(&h, n, 16, no_warp)).warp, 0);
    for (name, c) in fixtures::all() {
        let p = runs(&c, n >> 8, 16, wscan(true));
        let s = sp(&p);
        let ws = if c.warp_shuffle_ptx && p.local > 32 {
            32
        } else {
            p.local as u64
        };
        assert_eq!((s.warp, s.wscan), (ws, true), "{name}");
        assert!(
            p.local_bytes >= wscan_local(p.local, ws, s.per_item, 4),
            "{name}"
        );
    }
    // Per warp: 3 masks and 2 lists of segment numbers; the portable form's scan slots.
    assert_eq!(wscan_local(128, 32, 16, 4), 4 * (12 * 16 + 8 * 512));
    assert_eq!(
        wscan_local(64, 64, 16, 8),
        12 * 32 + 8 * 1024 + 12 * 65 + 24
    );
}

/// The rule (decision 84): the register scan kernel on GPUs with PTX warp shuffles where the
/// body reads at `[i]`, at mean lengths up to 4096 (4- and 8-byte reads), with 64 work-items
/// and the start checks below mean 256; the rules before elsewhere (above 4096, no reads at
/// `[i]`, other GPUs, CPUs).
#[test]
fn wscan_rule_by_mean_and_device() {
    let n = 1u64 << 28;
    let h = fixtures::nvidia_h200();
    let none = SegmentTune::default();
    let plan = |c: &DeviceCaps, mean: u64, bytes: u64, tune: SegmentTune| {
        let p = runs_reading(c, n, mean, bytes, tune);
        let s = p.segment.unwrap();
        (s.wscan, p.local, s.warp, s.checks)
    };
    for (mean, bytes, want) in [
        (1, 4, (true, 64, 32, true)),
        (16, 4, (true, 64, 32, true)),
        (64, 4, (true, 64, 32, true)),
        (255, 4, (true, 64, 32, true)),
        (256, 4, (true, 64, 32, false)),
        (1024, 4, (true, 64, 32, false)),
        (4096, 4, (true, 64, 32, false)),
        (16, 8, (true, 64, 32, true)),
        (256, 8, (true, 64, 32, false)),
        (4097, 4, (false, 128, 0, false)),
        (16384, 8, (false, 128, 0, false)),
        (16, 0, (false, 128, 0, false)),
    ] {
        assert_eq!(
            plan(&h, mean, bytes, none),
            want,
            "mean {mean}, {bytes} bytes"
        );
    }
    // Overrides: checks, local, and wscan=0 (the rules before: the warp kernel up to 64).
    let t = SegmentTune::parse("checks=0,local=128").unwrap();
    assert_eq!(plan(&h, 16, 4, t), (true, 128, 32, false));
    assert_eq!(plan(&h, 64, 4, wscan(false)), (false, 128, 32, true));
    assert!(!plan(&h, 256, 4, wscan(false)).0);
    let mut no_ptx = h.clone();
    no_ptx.warp_shuffle_ptx = false;
    assert!(!plan(&no_ptx, 16, 4, none).0);
    for (name, c) in fixtures::all() {
        if c.kind != DeviceKind::Gpu || !c.warp_shuffle_ptx {
            assert!(!plan(&c, 16, 4, none).0, "{name}");
        }
    }
}
