//! Planning: a pure function from (device capabilities, request) to a [`Plan`]. No device is
//! touched here, so every choice is unit-tested with capability fixtures.
//!
//! The choices follow seed 003 (DPC++'s reduction notes) and improve on it:
//! - work-group step per variable (TODO #3, `group.rs`): work-group collectives where the device
//!   has them for the op and type, else sub-group reduce, else local atomics where fast local
//!   atomics exist (seed variant B, TODO #2) and the result stays deterministic, else the tree;
//! - cross-group step per variable (`cross.rs`): global atomics where fast and deterministic
//!   (integers, and float min/max), else last-work-group detection (one launch), else one extra
//!   pass (TODO #1: a single pass, never a chain);
//! - spans (`span.rs`): where the copies of a span live;
//! - geometry (`geometry.rs`): the number and size of work-groups from the device, many indices
//!   per work-item, grid-stride on GPUs and contiguous chunks on CPUs (TODO #4);
//! - measured data (the tuning table, `tuning.rs`, through [`plan_tuned`]) and the first-use
//!   rules (`rules.rs`), which correct the capability rules where measurements show them
//!   slower, both as soft hints (`hint.rs`); `planned` below walks them in order.
//!
//! This room imports only `caps`, `ops`, `types` and `error`.

mod cross;
mod exact;
#[cfg(test)]
mod exact_tests;
mod explain;
mod geometry;
mod group;
mod hint;
mod model;
mod request;
mod rules;
mod segment;
mod segment_cpu;
pub(crate) mod segment_exact;
mod segment_model;
mod segment_runs;
mod span;
mod strategy;
#[cfg(test)]
mod tests;
mod tuning;
#[cfg(test)]
mod tuning_tests;

pub use model::{
    AccShape, ExactFormat, ExactPlan, Expansion, IndexOrder, Plan, SaccStore, SpanPlan, SpanStore,
    VarPlan,
};
pub(crate) use segment::{stage_slots, TILE_LONGS};
pub(crate) use segment_exact::segment_exact;
pub use segment_model::{SegmentAlgo, SegmentLayout, SegmentPlan};
pub(crate) use span::DIGITS_LONGS;
testkit! { use segment::plan_segments; }
testkit! { use segment_model::SegmentRequest; }
pub use request::{ExactTail, HotLoop};
pub use segment_model::SegmentTune;
pub use strategy::{CrossAlgo, Determinism, GroupAlgo, Strategy};
testkit! { use request::{FormRequest, Request, Shape, Tuning, VarRequest}; }
testkit! {
    use tuning::{
        plan_tuned, segment_layout_key, strategy_of, DeviceKey, LaunchClass, OpClass,
        SegmentEntry, TuneEntry, TuneTable, TunedGeometry, TABLE_FORMAT,
    };
}

pub(crate) use model::shape_of;
testkit! { use model::ClStdName; }

/// Whether a variable with this op and type is an exact sum under `det` (the body's reducer is
/// then rewritten: its accumulator is not a scalar).
pub(crate) fn exact_sum(op: &Operator, ty: ElemType, det: Determinism) -> bool {
    det == Determinism::Exact
        && op.builtin() == Some(crate::ops::Op::Plus)
        && ty.is_float()
        && !ty.is_storage()
}

use crate::caps::{ClStd, DeviceCaps};
use crate::error::{Error, Result};
use crate::ops::Operator;
use crate::types::ElemType;
use geometry::{Geometry, Need};
use hint::{follow, Hint, Steps};

/// Plans a launch without measured data: the capability rules, corrected by the first-use
/// rules (`rules.rs`) unless a strategy is forced. Pure: depends only on its arguments.
/// [`plan_tuned`] plans with a device's measurements.
///
/// Errors are those a launch reports before it runs: [`Error::Unsupported`] for what the
/// device cannot do, [`Error::NoIdentity`], [`Error::WorkGroupTooLarge`],
/// [`Error::LocalMemory`], [`Error::NdRangeNotDivisible`], [`Error::InvalidRange`].
///
/// ```
/// use clreduce::caps::fixtures;
/// use clreduce::plan::{plan, FormRequest, Request, Shape, VarRequest};
/// use clreduce::{CrossAlgo, Determinism, ElemType, Error, GroupAlgo, Op, Strategy};
/// # fn main() -> clreduce::Result<()> {
/// let n = 1 << 20;
/// let mut req = Request {
///     form: FormRequest::Range { n },
///     shape: Shape::linear(n, 1),
///     vars: vec![VarRequest::new(Op::Plus, ElemType::F32)],
///     strategy: Strategy::AUTO,
///     determinism: Determinism::Deterministic,
///     tuning: None,
///     pure_body: true,
///     narrow_reads: false,
/// };
/// let p = plan(&fixtures::nvidia_h200(), &req)?;
/// assert!(p.deterministic);
/// println!("{p}"); // the plan and the reason for each choice
///
/// // NVIDIA's OpenCL has no work-group collectives: forcing them is an error.
/// req.strategy = Strategy::new(GroupAlgo::WgReduce, CrossAlgo::LastGroup);
/// assert!(matches!(plan(&fixtures::nvidia_h200(), &req), Err(Error::Unsupported { .. })));
/// # Ok(()) }
/// ```
pub fn plan(caps: &DeviceCaps, req: &Request) -> Result<Plan> {
    planned(caps, None, req)
}

/// The planner's walk, in order of precedence: a forced strategy (`Request::strategy`) wins
/// over the table and the rules (they are not consulted); an expert geometry
/// (`Request::tuning`, `CLREDUCE_TUNE`) wins over the table's geometry; then the table, where
/// it covers the request (range form only: it is measured there); then the first-use rules;
/// then the capability rules.
fn planned(caps: &DeviceCaps, table: Option<&TuneTable>, req: &Request) -> Result<Plan> {
    if req.strategy != Strategy::AUTO {
        return plan_caps(caps, req);
    }
    let entry = table
        .filter(|t| t.key.is_for(caps))
        .and_then(|t| t.lookup(req));
    if let (Some(e), FormRequest::Range { n }) = (entry, req.form) {
        let why = e.reason(n);
        let hint = Hint {
            steps: match e.strategy {
                Strategy::AUTO => Steps::Rules,
                s => Steps::Forced(s),
            },
            geometry: Some(e.geometry.tuning()),
            why_group: why.clone(),
            why_cross: why.clone(),
            why_geo: why,
        };
        if let Some(p) = follow(caps, req, &hint) {
            return Ok(p);
        }
    }
    let base = plan_caps(caps, req)?;
    for hint in rules::first_use(caps, req, &base) {
        if let Some(p) = follow(caps, req, &hint) {
            return Ok(p);
        }
    }
    Ok(base)
}

/// The capability rules alone (a forced strategy applied as given).
fn plan_caps(caps: &DeviceCaps, req: &Request) -> Result<Plan> {
    validate(caps, req)?;
    // Group steps first: they do not depend on the geometry (the local-memory budget does).
    let steps = group_steps(caps, req)?;
    let needs: Vec<Need> = steps
        .iter()
        .zip(&req.vars)
        .map(|(s, v)| Need::of(s.group, v, s.span, s.exact))
        .collect();
    let exacts: Vec<ExactPlan> = steps.iter().filter_map(|s| s.exact).collect();
    exact::check_nd_groups(caps, req.form, !exacts.is_empty())?;
    let geo = match req.form {
        FormRequest::NdRange { global, local } => geometry::nd_range(caps, &needs, global, local)?,
        FormRequest::Range { n } => {
            let spans: Vec<Option<SpanPlan>> = steps.iter().map(|s| s.span).collect();
            geometry::range(caps, req, &needs, &spans, &exacts, n)?
        }
    };
    let vars = var_plans(caps, req, &geo, steps)?;
    assemble(caps, req, geo, vars)
}

/// What no device can run, whatever the strategy: an empty launch, types the device lacks,
/// f16 variables, bitwise ops on floats, identities that are missing or of the wrong type.
fn validate(caps: &DeviceCaps, req: &Request) -> Result<()> {
    if req.vars.is_empty() {
        return Err(Error::InvalidRange {
            reason: "a reduction launch needs at least one reduction variable".into(),
        });
    }
    exact::check_coverage(caps, req)?;
    for v in &req.vars {
        if let Err(missing) = caps.supports_type(v.ty) {
            return Err(Error::Unsupported {
                what: format!("a {} reduction on {}", v.op, v.ty),
                missing: format!("the device lacks {missing}"),
                device: caps.label(),
            });
        }
        if v.ty.is_storage() {
            return Err(Error::Unsupported {
                what: format!("a {} reduction on {}", v.op, v.ty),
                missing: format!(
                    "{} is a storage type in clreduce: reduce it into an f32 variable",
                    v.ty
                ),
                device: caps.label(),
            });
        }
        if !v.op.valid_for(v.ty) {
            return Err(Error::Unsupported {
                what: format!("{} on {}", v.op, v.ty),
                missing: "SYCL defines bitwise ops for integer types only".into(),
                device: caps.label(),
            });
        }
        if v.init_to_identity && v.op.identity(v.ty).is_none() {
            return Err(Error::NoIdentity {
                op: v.op.to_string(),
                ty: v.ty,
                needed_for: "initialize_to_identity",
            });
        }
        if let (Operator::Custom(c), Some(id)) = (&v.op, v.op.identity(v.ty)) {
            if id.ty() != v.ty {
                return Err(Error::TypeMismatch {
                    name: format!("the identity of custom({})", c.expr()),
                    expected: v.ty,
                    found: id.ty(),
                });
            }
        }
    }
    Ok(())
}

/// A variable's work-group step with its reason, and its span or exact plan.
struct GroupStep {
    group: GroupAlgo,
    reason: String,
    span: Option<SpanPlan>,
    exact: Option<ExactPlan>,
}

fn group_steps(caps: &DeviceCaps, req: &Request) -> Result<Vec<GroupStep>> {
    let det = exact::for_others(req.determinism);
    let mut steps = Vec::new();
    for v in &req.vars {
        let exact_sum = exact::is_exact(v, req.determinism);
        let step = match v.span {
            Some(len) if exact_sum => {
                let (store, why) = span::choose_exact_span(caps, v, len, req.strategy, req.form)?;
                GroupStep {
                    // Digits have no group step (see span::choose_span); the others deposit
                    // with 64-bit atomics.
                    group: if store == SpanStore::GlobalDigits {
                        GroupAlgo::Tree
                    } else {
                        GroupAlgo::LocalAtomic
                    },
                    reason: why.to_string(),
                    span: Some(SpanPlan {
                        len,
                        store,
                        copies: span::copies(caps, store, len, v.ty),
                        reason: why,
                    }),
                    exact: Some(exact::exact_plan(caps, v)?),
                }
            }
            Some(len) => {
                let (store, g, why) = span::choose_span(caps, v, len, det, req.strategy, req.form)?;
                GroupStep {
                    group: g,
                    reason: why.to_string(),
                    span: Some(SpanPlan {
                        len,
                        store,
                        copies: span::copies(caps, store, len, v.ty),
                        reason: why,
                    }),
                    // Digits, and a deterministic float sum's superaccumulators in global memory
                    // (decision 79), are exact: the exact kit's rounding.
                    exact: span::store_is_exact(caps, store, v, det)
                        .then(|| exact::exact_plan(caps, v))
                        .transpose()?,
                }
            }
            None if exact_sum => {
                let ep = exact::exact_plan(caps, v)?;
                let (group, reason) = exact::choose_group(caps, v, req.strategy.group)?;
                GroupStep {
                    group,
                    reason,
                    span: None,
                    exact: Some(ep),
                }
            }
            None => {
                let (group, reason) = group::choose_group(caps, v, det, req.strategy.group)?;
                GroupStep {
                    group,
                    reason,
                    span: None,
                    exact: None,
                }
            }
        };
        steps.push(step);
    }
    Ok(steps)
}

/// Each variable's plan once the geometry is known: the cross-group step (it depends on the
/// number of work-groups), and the fallback from warp shuffles to the tree where the work-group
/// is not made of whole warps.
fn var_plans(
    caps: &DeviceCaps,
    req: &Request,
    geo: &Geometry,
    steps: Vec<GroupStep>,
) -> Result<Vec<VarPlan>> {
    let local = geo.local;
    let det = exact::for_others(req.determinism);
    let mut vars = Vec::new();
    for (v, step) in req.vars.iter().zip(steps) {
        let GroupStep {
            group: mut g,
            reason: mut g_reason,
            span: sp,
            exact: ep,
        } = step;
        if sp.is_none()
            && g == GroupAlgo::SgReduce
            && caps.sg_via_ptx()
            && !local.is_multiple_of(32)
        {
            // PTX shuffles with a full mask need whole warps.
            if req.strategy.group.is_some() {
                return Err(Error::Unsupported {
                    what: format!("work-group step sg-reduce with {local} work-items per group"),
                    missing:
                        "warp shuffles (inline PTX) need a work-group size that is a multiple of 32"
                            .into(),
                    device: caps.label(),
                });
            }
            g = GroupAlgo::Tree;
            g_reason = format!(
                "work-group size {local} is not a multiple of the 32-wide warp: local-memory tree"
            );
        }
        let (c, c_reason) = match (sp.map(|s| s.store), ep) {
            (Some(SpanStore::GlobalAtomic), Some(_)) if req.strategy.cross.is_none() => (
                CrossAlgo::ExtraPass,
                span::GLOBAL_EXACT_PASS.to_string(),
            ),
            (Some(store), _) if store.cross_is_fixed() => {
                span::fixed_cross(caps, req.strategy, store)?
            }
            (Some(_), Some(_)) => (
                CrossAlgo::Atomic,
                "exact span: each element's superaccumulator is added to in global memory with 64-bit atomics; the last work-group rounds every element".to_string(),
            ),
            (None, Some(_)) => exact::choose_cross(caps, v, req.strategy.cross)?,
            _ => cross::choose_cross(caps, v, det, req.strategy.cross, geo.groups, geo.total)?,
        };
        let shape = if ep.is_some() {
            AccShape::Exact
        } else {
            shape_of(&v.op)
        };
        let need = Need::of(g, v, sp, ep);
        vars.push(VarPlan {
            op: v.op.clone(),
            ty: v.ty,
            identity: v.op.identity(v.ty),
            shape,
            acc_bytes: need.acc,
            span: sp,
            init_to_identity: v.init_to_identity,
            group: g,
            cross: c,
            group_reason: g_reason,
            cross_reason: c_reason,
            local_slots: geometry::local_slots(caps, &need, local),
            deterministic: ep.is_some() || group::var_deterministic(g, c, v),
            exact: ep,
            raw: false,
        });
    }
    Ok(vars)
}

/// The whole plan: local memory checked again (a step that fell back to the tree needs more),
/// passes, determinism, index width and the memory model of last-group detection.
fn assemble(
    caps: &DeviceCaps,
    req: &Request,
    geo: Geometry,
    mut vars: Vec<VarPlan>,
) -> Result<Plan> {
    if exact::speculate(caps, req, geo.order, &vars) {
        for v in vars.iter_mut() {
            if let Some(e) = v.exact.as_mut() {
                e.speculative = true;
                e.hot = exact::hot(caps, req, e);
                v.acc_bytes = e.acc_bytes();
            }
        }
    }
    // The speculative loop's unrolled steps per bound check (one for the launch).
    let spec_steps = exact::steps(req, &vars, geo.unroll);
    let spec_one = exact::others_one(caps, req, &vars);
    // The tail of every scalar exact sum (a span's and a segmented sum's keep Private).
    let geo4 = (geo.total, geo.groups, geo.local, geo.unroll);
    for v in vars.iter_mut().filter(|v| v.span.is_none()) {
        let cross = v.cross;
        if let Some(e) = v.exact.as_mut().filter(|e| e.store != SaccStore::Carried) {
            let lazy = exact::lazy_applies(e, cross, geo.total);
            e.tail = exact::tail(req, geo4, e.format, spec_steps, lazy);
        }
    }
    let needs: Vec<Need> = vars.iter().map(Need::of_plan).collect();
    let local_need = geometry::local_bytes(caps, &needs, geo.local);
    if local_need > caps.local_mem_size {
        return Err(Error::LocalMemory {
            local: geo.local,
            need: local_need,
            have: caps.local_mem_size,
            detail: geometry::describe_local(caps, &needs, geo.local),
            device: caps.label(),
        });
    }
    let passes = if vars.iter().any(|v| v.cross == CrossAlgo::ExtraPass) {
        2
    } else {
        1
    };
    let deterministic = vars.iter().all(|v| v.deterministic);
    // Indices stay below 2^32 with room for the unrolled look-ahead. The exact sums' vector
    // form takes 64-bit indices anyway: a step's loads x[i], x[i + 1], ... are then provably
    // consecutive and become one vector load (with 32-bit ones, which may wrap, a gather).
    let reach = geo
        .total
        .saturating_add((geo.unroll as u64 + 1) * geo.groups * geo.local as u64 * geo.vec as u64);
    let wide_index = reach > u32::MAX as u64 || vars.iter().any(exact::vector_form);
    // Only where a structured partial needs it: plain partials keep the OpenCL 1.2 atomic
    // publish, measured no slower on the H200 (2^20 f32 sum 7.8-7.9 us vs 8.0-8.7 us with
    // the PTX ticket, medians of 500; design/bench/).
    let ptx_acq_rel = caps.acq_rel_ptx_path()
        && vars
            .iter()
            .any(|v| v.cross == CrossAlgo::LastGroup && v.shape != AccShape::Plain);
    Ok(Plan {
        device: caps.label(),
        form: req.form,
        shape: req.shape,
        local: geo.local,
        groups: geo.groups,
        items_per_work_item: geo.per_item,
        order: geo.order,
        unroll: geo.unroll,
        vec: geo.vec,
        wide_index,
        spec_steps,
        spec_one,
        local_bytes: local_need,
        vars,
        passes,
        deterministic,
        c11_atomics: caps.c11_atomics(),
        ptx_acq_rel,
        cl_std: ClStdName(match caps.cl_std() {
            ClStd::Cl12 => "OpenCL C 1.2",
            ClStd::Cl20 => "OpenCL C 2.0",
            ClStd::Cl30 => "OpenCL C 3.0",
        }),
        geometry_reason: geo.reason,
        segment: None,
    })
}
