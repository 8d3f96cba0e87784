//! Exact sums per segment (`Determinism::Exact` on a segmented launch, issues 26 and 28): the
//! exact variables of the ordinary plan of a segmented launch become accumulators that carry
//! their own superaccumulator ([`SaccStore::Carried`], kernels/var_segexact.cl), so every
//! segment plan that combines accumulators combines them exactly and rounds once per segment.
//! design/exact.md, "Exact sums per segment"; decision 55.

use super::model::{AccShape, ExactFormat, ExactPlan, Expansion, Plan, SaccStore};
use super::segment_model::{SegmentAlgo, SegmentLayout, SegmentRequest};
use super::strategy::{Determinism, GroupAlgo};
use crate::caps::{DeviceCaps, DeviceKind};
use crate::error::{Error, Result};

/// The longest segment an exact sum takes: one accumulator receives at most one deposit per
/// element it pushes and a few per merge, so 2^29 elements keep every limb below the 2^30
/// contributions between normalizations (design/exact.md, "The numbers the planner must
/// enforce"); a three-float expansion absorbs at most 2^24 elements.
pub(crate) fn longest_segment(e: Expansion) -> u64 {
    match e {
        Expansion::TwoDouble => 1 << 29,
        Expansion::ThreeFloat => 1 << 24,
    }
}

/// Whether a plan holds exact sums carried per accumulator (a segmented exact plan).
pub(crate) fn carries_exact(plan: &Plan) -> bool {
    plan.vars
        .iter()
        .any(|v| v.exact.is_some_and(|e| e.store == SaccStore::Carried))
}

/// Turns the exact sums of `base` (the ordinary deterministic plan of a segmented launch's
/// variables) into carried exact accumulators; the other variables must be order-independent.
/// `forced`: the work-group step the options force (an exact sum runs the tree); `longest`:
/// the longest segment. Pure.
pub(crate) fn segment_exact(
    caps: &DeviceCaps,
    base: &mut Plan,
    det: Determinism,
    forced: Option<GroupAlgo>,
    longest: u64,
) -> Result<()> {
    if det != Determinism::Exact {
        return Ok(());
    }
    for v in &mut base.vars {
        if !super::exact_sum(&v.op, v.ty, det) {
            if v.op.order_sensitive(v.ty) {
                return Err(Error::Unsupported {
                    what: format!("an exact {} on {} per segment", v.op, v.ty),
                    missing: "an exact algorithm for it: Determinism::Exact computes float sums exactly and allows order-independent variables beside them (integers, min, max, argmin, argmax, bitwise and logical ops)".into(),
                    device: caps.label(),
                });
            }
            continue;
        }
        let format = match v.ty.size() {
            4 => ExactFormat::F32,
            _ => ExactFormat::F64,
        };
        let expansion = match (caps.fp64, format) {
            (true, _) => Expansion::TwoDouble,
            (false, ExactFormat::F32) => Expansion::ThreeFloat,
            (false, ExactFormat::F64) => {
                return Err(Error::Unsupported {
                    what: "an exact f64 sum per segment".into(),
                    missing: "the device lacks double precision (cl_khr_fp64)".into(),
                    device: caps.label(),
                })
            }
        };
        if let Some(g) = forced.filter(|g| *g != GroupAlgo::Tree) {
            return Err(Error::Unsupported {
                what: format!("work-group step {g} for an exact {} sum per segment", v.ty),
                missing: "an exact combine in it: a segmented exact sum combines its accumulators (superaccumulators) through the local-memory tree".into(),
                device: caps.label(),
            });
        }
        if longest > longest_segment(expansion) {
            return Err(Error::Unsupported {
                what: format!("an exact {} sum over a segment of {longest} elements", v.ty),
                missing: format!(
                    "segments of at most {} elements: one accumulator's superaccumulator takes at most 2^30 deposits between normalizations{}",
                    longest_segment(expansion),
                    if expansion == Expansion::ThreeFloat {
                        " and a three-float expansion (no fp64) at most 2^24 elements"
                    } else {
                        ""
                    }
                ),
                device: caps.label(),
            });
        }
        let e = ExactPlan {
            format,
            expansion,
            store: SaccStore::Carried,
            speculative: false,
            hot: super::HotLoop::Off,
            tail: super::ExactTail::Private,
        };
        v.shape = AccShape::Exact;
        v.exact = Some(e);
        v.acc_bytes = e.acc_bytes();
        v.group = GroupAlgo::Tree;
        v.group_reason = "exact: accumulators (an expansion and a superaccumulator each) combine exactly through a local-memory tree".into();
        v.deterministic = true;
    }
    Ok(())
}

/// The segment plan of a launch with carried exact sums: `staged` and `merge` keep one
/// accumulator per element of a stage or tile in local memory, which a superaccumulator (136 or
/// 592 bytes) does not fit, so the rules' `staged` becomes `item`, their `merge` becomes `tiles`
/// (decision 55), and either one forced is unsupported; so does `runs` (decision 62).
pub(super) fn exact_algo(
    caps: &DeviceCaps,
    req: &SegmentRequest,
    algo: SegmentAlgo,
    why: String,
) -> Result<(SegmentAlgo, String)> {
    let (instead, unit, keeps, reason) = match algo {
        SegmentAlgo::Staged => (
            SegmentAlgo::Item,
            "element of a stage",
            "staged keeps one accumulator per element",
            "staged would keep a superaccumulator per element in local memory, so a work-item per segment instead of staged",
        ),
        SegmentAlgo::Merge => (
            SegmentAlgo::Tiles,
            "item of a tile",
            "merge stages one accumulator per element",
            "merge would stage a superaccumulator per element in local memory, so tiles instead of merge",
        ),
        SegmentAlgo::Runs => (
            SegmentAlgo::Tiles,
            "work-item of a tile",
            "runs keeps a head piece per work-item beside the trees and a second piece in registers",
            "runs would keep two superaccumulators per work-item, so tiles instead of runs",
        ),
        _ => return Ok((algo, why)),
    };
    if req.force == Some(algo) {
        return Err(Error::Unsupported {
            what: format!("segment plan {algo} for an exact sum"),
            missing: format!("room for a superaccumulator per {unit} in local memory ({keeps})"),
            device: caps.label(),
        });
    }
    Ok((instead, format!("exact sums: {reason} ({why})")))
}

/// The rules' `stripes` for an exact sum whose work-group shrank below the columns (the trees
/// of f64 accumulators fit 64 work-items of a 48 KiB GPU, and `stripes` keeps a work-item per
/// column): `columns` instead, which runs any number of columns in the same work-groups. A
/// forced `stripes` keeps its refusal. H200, 2^28 f64, 256 columns: the rules' `stripes` was
/// refused at launch ("256 columns: stripes needs at most a work-group (64) of them"; session
/// 17, design/bench/2026-11-25-h200-session17-segspec.txt).
pub(super) fn stripes_fit(
    req: &SegmentRequest,
    exact: bool,
    local: usize,
    (algo, why): (SegmentAlgo, String),
) -> (SegmentAlgo, String) {
    match req.layout {
        SegmentLayout::Columns { cols, .. }
            if exact
                && algo == SegmentAlgo::Stripes
                && req.force.is_none()
                && cols > local as u64 =>
        {
            (
                SegmentAlgo::Columns,
                format!("exact sums: the trees of superaccumulators fit {local} work-items, fewer than the {cols} columns stripes keeps one each, so a work-item per column ({why})"),
            )
        }
        _ => (algo, why),
    }
}

/// The speculative loop per segment (decision 90; kernels/segment.cl `CLR_XSTRIDED`,
/// kernels/var_segexact.cl `clr_xstry`): the strided loops of `group` (long rows, one row) and
/// `lanes` (rows of 32..2048) read each work-item's elements in chunks of 8-load steps through
/// a branch-free try into the expansions, check the chunk once, and redo a flagged chunk from
/// memory through the push. It applies where every variable of the launch is a carried exact
/// sum in two doubles (a redo restores only the exact sums' expansions: another variable would
/// count the chunk twice; three floats keep the push) whose body only reads (a redo runs it
/// again), with one accumulator per work-item and no vector loads; it runs where `asked`
/// (`CLREDUCE_SEGMENT_TUNE=xspec=0|1`) says, else on GPUs but for f64 sums in `lanes`. H200,
/// 2^28 (session 20, design/bench/2026-11-25-h200-session20-segx.txt, medians, push against
/// speculative): f32 one row 965 -> 376 us, rows 2^14 x 2^14 1168 -> 704, rows of 256
/// (`lanes`) 3277 -> 2772; f64 one row 3505 -> 884, rows 2^14 x 2^14 3457 -> 1244, rows of
/// 256 17174 -> 18471 (slower: left out). The choice, or why not, is added to the segment
/// plan's reason (`explain`). Pure.
pub(crate) fn speculate(caps: &DeviceCaps, plan: &mut Plan, pure_body: bool, asked: Option<bool>) {
    let Some(sp) = plan.segment.as_ref() else {
        return;
    };
    if !carries_exact(plan) || !matches!(sp.algo, SegmentAlgo::Group | SegmentAlgo::Lanes) {
        return;
    }
    let carried =
        |v: &super::model::VarPlan| v.exact.is_some_and(|e| e.store == SaccStore::Carried);
    let f64_sum = |v: &super::model::VarPlan| v.exact.is_some_and(|e| e.format == ExactFormat::F64);
    let declined = if !plan.vars.iter().all(carried) {
        Some("a variable beside the exact sums (a redo restores only the exact sums: it would count that variable twice)")
    } else if plan
        .vars
        .iter()
        .any(|v| v.exact.is_some_and(|e| e.expansion != Expansion::TwoDouble))
    {
        Some("three-float expansions (no fp64) keep the push")
    } else if !pure_body {
        Some("the body writes (a redo would run it twice)")
    } else if sp.unroll > 1 || plan.vec > 1 {
        Some("several accumulators or vector loads per work-item")
    } else if asked == Some(false) {
        Some("off (CLREDUCE_SEGMENT_TUNE=xspec=0)")
    } else if asked.is_none() && caps.kind != DeviceKind::Gpu {
        Some("on GPUs only unless asked (CLREDUCE_SEGMENT_TUNE=xspec=1)")
    } else if asked.is_none() && sp.algo == SegmentAlgo::Lanes && plan.vars.iter().any(f64_sum) {
        // H200, rows 2^20 x 256 f64 (2^28): 18471 against 17174 us with the push (session 20,
        // design/bench/2026-11-25-h200-session20-segx.txt); f32 gains (3277 -> 2772 us).
        Some("f64 sums in lanes measured slower with it (CLREDUCE_SEGMENT_TUNE=xspec=1 asks)")
    } else {
        None
    };
    let note = match declined {
        Some(why) => format!("; exact sums: the push loop (the speculative loop declined: {why})"),
        None => {
            for v in &mut plan.vars {
                if let Some(e) = v.exact.as_mut() {
                    e.speculative = true;
                }
            }
            "; exact sums: the speculative loop (each work-item's loads in chunks of 8-load steps through the branch-free try, one check per chunk, a flagged chunk redone exactly from memory; decision 90)".to_string()
        }
    };
    if let Some(sp) = plan.segment.as_mut() {
        sp.reason.push_str(&note);
    }
}

/// The largest work-group size, at most `local`, whose trees (one accumulator slot per
/// work-item and one more, per variable) and `extra` bytes (the tile list) fit the device's
/// local memory.
pub(super) fn fit_local(caps: &DeviceCaps, base: &Plan, local: usize, extra: u64) -> usize {
    let per_slot: u64 = base.vars.iter().map(|v| v.acc_bytes as u64).sum();
    let need = |l: usize| per_slot * (l as u64 + 1) + extra;
    let mut l = local.max(1);
    while l > 1 && need(l) > caps.local_mem_size {
        l /= 2;
    }
    l
}

#[cfg(test)]
#[path = "segment_exact_tests.rs"]
mod segment_exact_tests;
