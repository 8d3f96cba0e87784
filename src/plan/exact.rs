//! Exact sums (`Determinism::Exact`): which variables are exact, what the launch must otherwise
//! be, and the exact plan of each (result format, expansion, where the work-group's
//! superaccumulator lives, the work-group and cross-group steps). design/exact.md explains the
//! algorithm; kernels/exact.cl and kernels/var_exact.cl run it.

use super::model::{ExactFormat, ExactPlan, Expansion, IndexOrder, SaccStore};
use super::request::{ExactTail, FormRequest, HotLoop, Request, VarRequest};
use super::strategy::{CrossAlgo, Determinism, GroupAlgo};
use crate::caps::{DeviceCaps, DeviceKind};
use crate::error::{Error, Result};
use crate::types::ElemType;

/// What `Determinism::Exact` covers, for error messages.
const COVERED: &str = "Determinism::Exact computes float sums exactly (Op::Plus on f32 and f64 variables, f16 data summed into f32), and allows order-independent variables beside them (integers, min, max, argmin, argmax, bitwise and logical ops)";

/// Whether variable `v` of a request with determinism `det` is an exact sum.
pub(super) fn is_exact(v: &VarRequest, det: Determinism) -> bool {
    super::exact_sum(&v.op, v.ty, det)
}

/// The determinism the other variables of an exact launch are planned with: they are
/// order-independent (checked by `check_coverage`), so exactly as in the deterministic mode.
pub(super) fn for_others(det: Determinism) -> Determinism {
    match det {
        Determinism::Exact => Determinism::Deterministic,
        d => d,
    }
}

/// Under `Determinism::Exact`, every variable that is not an exact sum must be order-independent.
pub(super) fn check_coverage(caps: &DeviceCaps, req: &Request) -> Result<()> {
    if req.determinism != Determinism::Exact {
        return Ok(());
    }
    for v in &req.vars {
        if !is_exact(v, req.determinism) && v.op.order_sensitive(v.ty) {
            return Err(Error::Unsupported {
                what: format!("an exact {} on {}", v.op, v.ty),
                missing: format!("an exact algorithm for it: {COVERED}"),
                device: caps.label(),
            });
        }
    }
    Ok(())
}

/// The exact plan of an exact variable: the format from its type, two doubles where the device
/// has fp64 (else three floats, f32 only), and a local superaccumulator with 64-bit local
/// atomics where the device has them (else one row per work-item).
pub(super) fn exact_plan(caps: &DeviceCaps, v: &VarRequest) -> Result<ExactPlan> {
    let format = match v.ty {
        ElemType::F32 => ExactFormat::F32,
        _ => ExactFormat::F64,
    };
    let expansion = if caps.fp64 {
        Expansion::TwoDouble
    } else if format == ExactFormat::F32 {
        Expansion::ThreeFloat
    } else {
        return Err(Error::Unsupported {
            what: "an exact f64 sum".into(),
            missing: "the device lacks double precision (cl_khr_fp64)".into(),
            device: caps.label(),
        });
    };
    let store = if caps.atomics.int64_base && caps.atomics.int32_local_base {
        SaccStore::LocalAtomic
    } else {
        SaccStore::LocalRows
    };
    Ok(ExactPlan {
        format,
        expansion,
        store,
        speculative: false,
        hot: HotLoop::Off,
        tail: ExactTail::Private,
    })
}

/// The work-group step of an exact sum: expansions merge through a local-memory tree, or
/// through NVIDIA's PTX warp shuffles; collectives and atomics on floats cannot be exact.
pub(super) fn choose_group(
    caps: &DeviceCaps,
    v: &VarRequest,
    forced: Option<GroupAlgo>,
) -> Result<(GroupAlgo, String)> {
    match forced {
        Some(g @ GroupAlgo::Tree) => Ok((g, "forced".into())),
        Some(g @ GroupAlgo::SgReduce) if caps.sg_via_ptx() => Ok((g, "forced".into())),
        Some(g) => Err(Error::Unsupported {
            what: format!("work-group step {g} for an exact {} sum", v.ty),
            missing: if g == GroupAlgo::SgReduce {
                "NVIDIA's PTX warp shuffles: an exact sum merges its expansions through shuffles of their bits, which sub_group_reduce_* cannot do".to_string()
            } else {
                format!("an exact {g}: work-group collectives and atomics round floats; an exact sum runs its work-group step as tree (or sg-reduce on NVIDIA)")
            },
            device: caps.label(),
        }),
        None if caps.sg_via_ptx() => Ok((
            GroupAlgo::SgReduce,
            "exact: expansions merge through warp shuffles (PTX shfl.sync, NVIDIA), residues into the work-group's superaccumulator".into(),
        )),
        None => Ok((
            GroupAlgo::Tree,
            "exact: expansions merge through a local-memory tree, residues into the work-group's superaccumulator".into(),
        )),
    }
}

/// Why the device cannot run cross-group step `c` for an exact sum, if it cannot.
pub(super) fn cross_missing(caps: &DeviceCaps, c: CrossAlgo) -> Option<&'static str> {
    let a = &caps.atomics;
    match c {
        CrossAlgo::Atomic if !(a.int64_base && a.int32_global_base) => Some(
            "64-bit global atomics (cl_khr_int64_base_atomics) to add the work-groups' superaccumulators, and 32-bit ones for the counter",
        ),
        CrossAlgo::LastGroup if !(a.int64_base && a.int32_global_base) => Some(
            "64-bit global atomics (cl_khr_int64_base_atomics) to publish the superaccumulator rows, and 32-bit ones for the counter",
        ),
        _ => None,
    }
}

/// The cross-group step of an exact sum: every work-group adds its normalized superaccumulator
/// to one in global memory with 64-bit atomics and the last one rounds it (integer additions:
/// exact in any order); without those atomics, rows and one extra pass.
pub(super) fn choose_cross(
    caps: &DeviceCaps,
    v: &VarRequest,
    forced: Option<CrossAlgo>,
) -> Result<(CrossAlgo, String)> {
    if let Some(c) = forced {
        if let Some(missing) = cross_missing(caps, c) {
            return Err(Error::Unsupported {
                what: format!("cross-group step {c} for an exact {} sum", v.ty),
                missing: format!("the device lacks {missing}"),
                device: caps.label(),
            });
        }
        return Ok((c, "forced".into()));
    }
    if cross_missing(caps, CrossAlgo::Atomic).is_none() {
        return Ok((
            CrossAlgo::Atomic,
            "exact: each work-group adds its normalized superaccumulator to one in global memory with 64-bit atomics (integer adds, exact in any order); the last work-group rounds it once".into(),
        ));
    }
    Ok((
        CrossAlgo::ExtraPass,
        "exact: no 64-bit global atomics: each work-group writes its superaccumulator as a row; one extra pass sums the rows limb by limb and rounds once".into(),
    ))
}

/// The fewest work-groups a range of `n` indices needs so that no work-group's expansion or
/// superaccumulator takes more than its cap.
pub(super) fn min_groups(n: u64, exact: &[ExactPlan]) -> u64 {
    exact
        .iter()
        .map(|e| n.div_ceil(e.per_group_cap()))
        .max()
        .unwrap_or(1)
        .max(1)
}

/// An nd_range's work-groups must stay within the global superaccumulator's contributions
/// (2^30 between normalizations).
pub(super) fn check_nd_groups(caps: &DeviceCaps, form: FormRequest, any_exact: bool) -> Result<()> {
    if let FormRequest::NdRange { global, local } = form {
        let groups = global / (local.max(1) as u64);
        if any_exact && groups > 1 << 30 {
            return Err(Error::Unsupported {
                what: format!("an exact sum over {groups} work-groups"),
                missing: "at most 2^30 work-groups per exact launch (each adds one normalized superaccumulator to the global one)".into(),
                device: caps.label(),
            });
        }
    }
    Ok(())
}

/// The hot form a launch's speculative exact sums ask for: `CLREDUCE_TUNE=hot=0|1|2|3`, else
/// [`HotLoop::Shared`] on GPUs (H200, 2^28, unroll 8: f32 exact 1.70x the plain sum before,
/// 1.03x after; f64 1.57x before, 1.20x; design/bench/2026-11-24-h200-session11-exact.txt
/// round 2) and [`HotLoop::Vector`] on CPUs (decision 69: several times faster than the push
/// loop on PoCL and Intel's runtime in two interleaved runs at 2^20-2^24, random mantissas and
/// the bench's data; design/bench/2026-11-25-cpu-session14-xcpu.txt).
fn hot_wanted(caps: &DeviceCaps, req: &Request) -> HotLoop {
    req.tuning
        .and_then(|t| t.hot)
        .unwrap_or(if caps.kind == DeviceKind::Gpu {
            HotLoop::Shared
        } else {
            HotLoop::Vector
        })
}

/// Whether variable `v` is an exact sum in the speculative loop's vector form.
pub(super) fn vector_form(v: &super::model::VarPlan) -> bool {
    v.exact.is_some_and(|e| e.runs_hot(HotLoop::Vector))
}

/// Whether a speculative exact sum runs the loop's hot form (design/exact.md "The hot loop"):
/// the two-double expansions only (f32 data in blocks, f64 data).
pub(super) fn hot(caps: &DeviceCaps, req: &Request, e: &ExactPlan) -> HotLoop {
    if e.expansion == Expansion::TwoDouble {
        hot_wanted(caps, req)
    } else {
        HotLoop::Off
    }
}

/// The geometry of a launch whose one exact sum (alone or beside other variables) will run the
/// shared hot loop: its accumulators per work-item and, where it differs from the default, its
/// work-groups per compute unit. `None` where the launch keeps the default.
/// - Several variables (an f32-result exact sum + min + max) on GPUs: 8 with the other
///   variables in one accumulator each ([`others_one`]), 6 work-groups per compute unit, one
///   wave (decisions 70 and 76).
/// - f32 data (one expansion: the unroll is only the block's size and the loads in flight): 8,
///   as the plain f32 sum's loop. H200, 2^28 (design/bench/2026-11-24-h200-session11-exact.txt
///   round 2): 373.7 us at unroll 4, 249.1 us at 8 (plain 241.9).
/// - f64 data (an expansion per accumulator, every element through its cascade): 4, in blocks of
///   [`steps`] unrolled steps, and 4 work-groups per compute unit, as many as stay resident with
///   its registers (design/exact.md "The f64 loop"); on GPUs from [`F64_WIDE_FROM`] indices 8 at
///   2 work-groups per compute unit (decision 88).
///
/// In the vector form (CPUs), f64 data takes 8 lanes (one AVX-512 vector of doubles per step;
/// faster than 4 in 12 of 18 interleaved points on PoCL and Intel's runtime, equal at 2^24),
/// f32 data keeps 4 (faster than 8 in 13 of 18; design/bench/2026-11-25-cpu-session14-xcpu.txt).
pub(super) fn hot_geometry(
    caps: &DeviceCaps,
    req: &Request,
    exacts: &[ExactPlan],
    order: IndexOrder,
) -> Option<(usize, Option<u64>)> {
    let fits = req.vars.iter().all(|v| v.span.is_none())
        && exacts.len() == 1
        && exacts[0].expansion == Expansion::TwoDouble
        && req.pure_body
        && matches!(order, IndexOrder::GridStride | IndexOrder::Contiguous)
        && matches!(req.form, FormRequest::Range { .. })
        && spec_wanted(caps, req);
    let single = fits && req.vars.len() == 1;
    if single && hot_wanted(caps, req) == HotLoop::Vector && exacts[0].format == ExactFormat::F64 {
        return Some((F64_VECTOR_UNROLL, None));
    }
    if !(fits && hot_wanted(caps, req) == HotLoop::Shared) {
        return None;
    }
    if req.vars.len() > 1 {
        // Beside other variables (exact sum + min + max), on GPUs with f32 results: the single
        // sum's unroll of 8 with the other variables in one accumulator each ([`others_one`]),
        // and one wave of work-groups (its 40 registers leave 6 of 256 resident per SM; 8 ran
        // as two waves). H200, 2^28 (design/exact.md "Several variables"): unroll 4 with an
        // accumulator per step, 8 per SM 399 us, 6 per SM 317-321 (decision 70); unroll 8 with
        // one accumulator, 6 per SM 266.8, 7 326.3, 8 299.9 (decision 76).
        return match exacts[0].format {
            ExactFormat::F32 if caps.kind == DeviceKind::Gpu => {
                Some((SEVERAL_HOT_UNROLL, Some(SEVERAL_HOT_GROUPS_PER_CU)))
            }
            _ => None,
        };
    }
    Some(match exacts[0].format {
        ExactFormat::F32 => (8, None),
        ExactFormat::F64 if caps.kind == DeviceKind::Gpu && wide_f64(req) => {
            (F64_WIDE_UNROLL, Some(F64_WIDE_GROUPS_PER_CU))
        }
        ExactFormat::F64 if caps.kind == DeviceKind::Gpu => {
            (F64_HOT_UNROLL, Some(F64_HOT_GROUPS_PER_CU))
        }
        ExactFormat::F64 => (F64_HOT_UNROLL, None),
    })
}

/// The f64 hot loop's accumulators per work-item and (on GPUs) work-groups per compute unit.
const F64_HOT_UNROLL: usize = 4;
const F64_HOT_GROUPS_PER_CU: u64 = 4;
/// The same from [`F64_WIDE_FROM`] indices on GPUs: 8 expansions per work-item (116 registers,
/// two work-groups of 256 resident per SM), one wave of them. H200, f64 exact, medians of 20
/// (decision 88, design/bench/2026-11-25-h200-session19-x29.txt call 1): 2^28 565.3 / 566.1 us
/// against 576.3 / 575.0 at unroll 4 with 4 per SM (session 13: 561.4 against 577.6); 2^24
/// 49.1 / 49.9 against 48.2 / 48.4, hence the threshold.
const F64_WIDE_UNROLL: usize = 8;
const F64_WIDE_GROUPS_PER_CU: u64 = 2;
/// Its unrolled steps per bound check ([`steps`]).
const F64_WIDE_STEPS: usize = 4;
/// The range size from which a single f64 exact sum on a GPU takes [`F64_WIDE_UNROLL`].
pub(super) const F64_WIDE_FROM: u64 = 1 << 26;

/// Whether a range is long enough for the f64 hot loop's unroll of 8 on GPUs.
fn wide_f64(req: &Request) -> bool {
    matches!(req.form, FormRequest::Range { n } if n >= F64_WIDE_FROM)
}
/// The same for an f32-result exact sum beside other variables.
const SEVERAL_HOT_UNROLL: usize = 8;
const SEVERAL_HOT_GROUPS_PER_CU: u64 = 6;
/// The vector form's lanes for a single f64 exact sum (CPUs).
const F64_VECTOR_UNROLL: usize = 8;

/// Unrolled steps per bound check of the launch's speculative loop (kernels/reduce.cl
/// `CLR_SPEC_WHOLE`, `CLR_XBLK`), where every exact sum runs the shared hot loop (else 1):
/// `CLREDUCE_TUNE=steps=1|2|4`, else 2 where they are all of f64 data, else 1. The steps of one
/// check run as a block with their loads together (for f32 data the block pre-sum's block);
/// fewer indices than a block go through the exact loop after it.
/// H200, f64 (design/exact.md "The f64 loop"): with one check per step NVIDIA's compiler ran
/// the loop at half speed under the local tails (1315 us at 2^28 against 573 with blocks of
/// 2). f32 keeps 1: its block is the step (blocks of 2 steps: 357 against 256 us at 2^28).
/// f64 data at an unroll of 8 from [`F64_WIDE_FROM`] indices (the GPUs' wide f64 loop,
/// [`hot_geometry`]) takes blocks of 4: H200 (decision 88, design/bench/
/// 2026-11-25-h200-session19-x29.txt call 2, one round) 2^28 549.9 us against 564.6 / 565.4
/// with blocks of 2, 2^26 148.1 against 151.7 / 152.8; at 2^24 blocks of 4 at unroll 8 ran
/// 53.1 us against 49.1-49.9 with 2 (call 1), so smaller ranges keep 2.
pub(super) fn steps(req: &Request, vars: &[super::model::VarPlan], unroll: usize) -> usize {
    let exacts = || vars.iter().filter_map(|v| v.exact);
    if !exacts().all(|e| e.runs_hot(HotLoop::Shared)) {
        return 1;
    }
    let all_f64 = exacts().all(|e| e.format == ExactFormat::F64);
    let auto = match all_f64 {
        true if unroll >= F64_WIDE_UNROLL && wide_f64(req) => F64_WIDE_STEPS,
        true => 2,
        false => 1,
    };
    req.tuning.and_then(|t| t.steps).unwrap_or(auto)
}

/// Whether the speculative loop's other scalar variables (min, max, counts beside the exact
/// sums) take every unrolled step into their first accumulator (kernels/reduce.cl through the
/// generated glue's `CLR_SPEC_ONE`): `CLREDUCE_TUNE=one=0|1`, else on GPUs where one f32-result
/// exact sum runs the shared hot loop beside them (exact sum + min + max: with an accumulator
/// per unrolled step its `clr_main` held 40 registers at unroll 4 and 48 at unroll 8, with one
/// 32 and 40; H200, 2^28, at unroll 8 and 6 work-groups per SM 266.8 us against the old
/// default's 317.4-318.4, design/exact.md "Several variables", decision 76). Only where the
/// launch runs the speculative loop and has such a variable.
pub(super) fn others_one(caps: &DeviceCaps, req: &Request, vars: &[super::model::VarPlan]) -> bool {
    let spec = vars.iter().any(|v| v.exact.is_some_and(|e| e.speculative));
    let others = vars.iter().any(|v| v.exact.is_none() && v.span.is_none());
    let mut exacts = vars.iter().filter_map(|v| v.exact);
    let one_f32_hot = match (exacts.next(), exacts.next()) {
        (Some(e), None) => e.format == ExactFormat::F32 && e.runs_hot(HotLoop::Shared),
        _ => false,
    };
    spec && others
        && req
            .tuning
            .and_then(|t| t.others_one)
            .unwrap_or(caps.kind == DeviceKind::Gpu && one_f32_hot)
}

/// Whether the speculative loop is wanted: `CLREDUCE_TUNE=spec=0|1`, else on GPUs, and on
/// other devices with fp64, whose two-double expansions run its vector form (decision 69;
/// without fp64 the three-float speculative loop has no hot form and the push loop stays).
fn spec_wanted(caps: &DeviceCaps, req: &Request) -> bool {
    req.tuning
        .and_then(|t| t.spec)
        .unwrap_or(caps.kind == DeviceKind::Gpu || caps.fp64)
}

/// Whether the launch's exact sums run the speculative loop: every exact variable a scalar, no
/// variable a span, a body that only reads (a flagged chunk runs again), the grid-stride order
/// (GPUs) or the contiguous one (CPUs: each work-item's chunks of consecutive elements);
/// on GPUs by default, where the branch-free loop is what keeps the double-precision units fed
/// (design/exact.md), on CPUs with fp64 in its vector form (decision 69), or as
/// `CLREDUCE_TUNE=spec=0|1` says. The other variables (min, max,
/// integers, ...) ride along: the chunk's try runs them once, and a redo runs them into
/// accumulators it throws away (kernels/reduce.cl), so each element still counts once.
pub(super) fn speculate(
    caps: &DeviceCaps,
    req: &Request,
    order: IndexOrder,
    vars: &[super::model::VarPlan],
) -> bool {
    let applies = vars.iter().any(|v| v.exact.is_some())
        && vars.iter().all(|v| v.span.is_none())
        && req.pure_body
        && matches!(order, IndexOrder::GridStride | IndexOrder::Contiguous)
        && matches!(req.form, FormRequest::Range { .. });
    applies && spec_wanted(caps, req)
}

/// Whether every deposit of a launch of `total` indices over `groups` work-groups of `local`
/// work-items with `unroll` accumulators each stays within the 2^30 contributions of the one
/// superaccumulator its work-groups' unnormalized superaccumulators add up to: at most one
/// deposit per index (a residue or the element itself, as the per-group cap assumes), at most
/// four per merge of two accumulators (the work-item's `unroll - 1` folds and about one
/// work-group merge per work-item, counted as `unroll + 1` per work-item), four per
/// work-group's flush, and the initial value.
pub(super) fn lean_fits(total: u64, groups: u64, local: usize, unroll: usize) -> bool {
    let items = groups.saturating_mul(local as u64);
    let merges = items.saturating_mul(unroll as u64 + 1);
    let deposits = total
        .saturating_add(merges.saturating_mul(4))
        .saturating_add(groups.saturating_mul(4))
        .saturating_add(1);
    deposits <= 1 << 30
}

/// The largest f64 launch whose loop checks its bound every step that takes the lean tail by
/// default (see [`tail`]).
const LEAN_F64_MAX: u64 = 1 << 20;

/// Whether the lazy finish ([`ExactTail::Lazy`], kernels/var_exact.cl `VX_LAZY`) applies to
/// exact plan `e` with cross-group step `cross` over `total` indices: two-double expansions (the
/// merged expansion is rounded directly), the atomic cross step into one global
/// superaccumulator with a local atomic one per work-group, and the whole launch's elements and
/// the initial value within the expansion's cap (the last work-group merges every work-group's
/// expansion into one: f64 data 2^30).
pub(super) fn lazy_applies(e: &ExactPlan, cross: CrossAlgo, total: u64) -> bool {
    e.expansion == Expansion::TwoDouble
        && cross == CrossAlgo::Atomic
        && e.store == SaccStore::LocalAtomic
        && total < e.expansion.cap(e.format)
}

/// The fixed tail of a scalar exact sum (design/exact.md "The tail", "The lazy finish"):
/// `CLREDUCE_TUNE=tail=0|1|2|3`, else [`ExactTail::Lean`], except [`ExactTail::Private`] for
/// f64 results of more than 2^20 indices whose loop checks its bound every step (`steps` 1);
/// [`ExactTail::Lazy`] (only asked for: on the H200 it ran f64's loop at 1.4x Lean's time and
/// won nothing for f32, design/bench/2026-11-25-h200-session15-xtail.txt round 2) only where
/// `lazy` ([`lazy_applies`]), else Lean; Lean and Lazy only where [`lean_fits`] (their
/// work-groups publish unnormalized), else [`ExactTail::Local`]. Measured on the H200 (design/bench/2026-11-25-h200-session12-exact.txt
/// round 2, device time, the same process): f32 the same at 2^24 and 2^28 (31.1 / 31.2 us,
/// 256.0 / 256.6 us), 12.8 / 12.2 us at 2^20; f64 2^20 20.3 us private, 17.9 lean; but f64's loop
/// with a bound check per step ran at about half speed under either local form from 2^24 (69.7
/// against 108.0 us, 575 against 1321 us at 2^28), and at full speed in blocks of 2 steps
/// (design/exact.md "The f64 loop"). The CPUs measured the forms within their noise.
pub(super) fn tail(
    req: &Request,
    (total, groups, local, unroll): (u64, u64, usize, usize),
    format: ExactFormat,
    steps: usize,
    lazy: bool,
) -> ExactTail {
    let auto = if format == ExactFormat::F64 && total > LEAN_F64_MAX && steps == 1 {
        ExactTail::Private
    } else {
        ExactTail::Lean
    };
    match req.tuning.and_then(|t| t.tail).unwrap_or(auto) {
        ExactTail::Lean | ExactTail::Lazy if !lean_fits(total, groups, local, unroll) => {
            ExactTail::Local
        }
        ExactTail::Lazy if !lazy => ExactTail::Lean,
        t => t,
    }
}
