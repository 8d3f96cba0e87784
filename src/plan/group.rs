//! The work-group step of one variable: what the device can run for it and which one to use.

use super::request::VarRequest;
use super::strategy::{CrossAlgo, Determinism, GroupAlgo};
use crate::caps::{DeviceCaps, Space};
use crate::error::{Error, Result};

/// Whether the device's sub-group functions (or NVIDIA's PTX shuffles) can reduce this operator.
pub(super) fn sg_capable(caps: &DeviceCaps, v: &VarRequest) -> bool {
    match v.op.builtin() {
        Some(op) => caps.sg_reduce(op, v.ty),
        // Shuffles move bits, so any combiner works; sub_group_reduce_* only knows built-ins.
        None => caps.sg_via_ptx() && !v.ty.is_storage(),
    }
}

pub(super) fn wg_capable(caps: &DeviceCaps, v: &VarRequest) -> bool {
    v.op.builtin().is_some_and(|op| caps.wg_reduce(op, v.ty))
}

pub(super) fn atomic_capable(caps: &DeviceCaps, v: &VarRequest, space: Space) -> bool {
    v.op.atomic_op()
        .is_some_and(|op| caps.fast_atomic(op, v.ty, space))
}

pub(super) fn group_supported(
    caps: &DeviceCaps,
    g: GroupAlgo,
    v: &VarRequest,
) -> std::result::Result<(), String> {
    match g {
        GroupAlgo::Tree => Ok(()),
        GroupAlgo::WgReduce => {
            if !caps.work_group_collectives {
                Err(
                    "work-group collective functions (__opencl_c_work_group_collective_functions)"
                        .into(),
                )
            } else if !wg_capable(caps, v) {
                Err(format!(
                    "a work-group collective for {} (only add, min, max, all, any exist)",
                    v.op
                ))
            } else {
                Ok(())
            }
        }
        GroupAlgo::SgReduce => {
            if caps.sub_groups.is_none() && !caps.warp_shuffle_ptx {
                Err("sub-groups (cl_khr_subgroups / __opencl_c_subgroups)".into())
            } else if !sg_capable(caps, v) {
                Err(format!(
                    "a sub-group reduce for {} on {} (cl_khr_subgroup_non_uniform_arithmetic; custom operators and argmin/argmax need NVIDIA's PTX shuffles)",
                    v.op, v.ty
                ))
            } else {
                Ok(())
            }
        }
        GroupAlgo::LocalAtomic => {
            if v.op.atomic_op().is_none() {
                Err(format!(
                    "an atomic for {} (custom operators use atomics only when declared with CustomOp::atomic)",
                    v.op
                ))
            } else if !atomic_capable(caps, v, Space::Local) {
                Err(format!("fast local atomics for {} on {}", v.op, v.ty))
            } else {
                Ok(())
            }
        }
    }
}

pub(super) fn var_deterministic(g: GroupAlgo, c: CrossAlgo, v: &VarRequest) -> bool {
    !(v.op.order_sensitive(v.ty) && (g == GroupAlgo::LocalAtomic || c == CrossAlgo::Atomic))
}

/// Forcing an order-dependent float atomic in deterministic mode is refused, not run silently.
pub(super) fn nondeterministic(caps: &DeviceCaps, what: &str) -> Error {
    Error::Unsupported {
        what: what.to_string(),
        missing: "run-to-run determinism: float atomics combine in a varying order; ask for relaxed determinism (Options::relaxed, --relaxed) to force it".into(),
        device: caps.label(),
    }
}

pub(super) fn choose_group(
    caps: &DeviceCaps,
    v: &VarRequest,
    det: Determinism,
    forced: Option<GroupAlgo>,
) -> Result<(GroupAlgo, String)> {
    if let Some(g) = forced {
        group_supported(caps, g, v).map_err(|missing| Error::Unsupported {
            what: format!("work-group step {g} for {} on {}", v.op, v.ty),
            missing: format!("the device lacks {missing}"),
            device: caps.label(),
        })?;
        if g == GroupAlgo::LocalAtomic
            && v.op.order_sensitive(v.ty)
            && det == Determinism::Deterministic
        {
            return Err(nondeterministic(
                caps,
                &format!("work-group step {g} for {} on {}", v.op, v.ty),
            ));
        }
        return Ok((g, "forced".into()));
    }
    if wg_capable(caps, v) {
        return Ok((
            GroupAlgo::WgReduce,
            format!(
                "the device has work-group collectives for {} on {} (seed variants A/C)",
                v.op, v.ty
            ),
        ));
    }
    if sg_capable(caps, v) {
        return Ok((
            GroupAlgo::SgReduce,
            format!(
                "no work-group collective for {}; {} reduce in registers",
                v.op,
                if caps.sg_via_ptx() {
                    "warps (PTX shfl.sync, NVIDIA)"
                } else {
                    "sub-groups"
                }
            ),
        ));
    }
    let relaxed_ok = det == Determinism::Relaxed || !v.op.order_sensitive(v.ty);
    if atomic_capable(caps, v, Space::Local) && relaxed_ok {
        return Ok((
            GroupAlgo::LocalAtomic,
            format!(
                "no group reduce; fast local atomics for {} on {} (seed variant B, TODO #2)",
                v.op, v.ty
            ),
        ));
    }
    let why = if atomic_capable(caps, v, Space::Local) {
        "local float atomics would make the result order-dependent (deterministic mode)"
    } else if v.op.builtin().is_none() {
        "a custom or (value, index) combiner: no group function or atomic computes it"
    } else {
        "no group reduce and no fast local atomic for this op and type"
    };
    Ok((
        GroupAlgo::Tree,
        format!("{why}: local-memory tree (seed variant D)"),
    ))
}
