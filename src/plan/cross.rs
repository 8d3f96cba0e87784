//! The cross-group step of one variable: how the work-groups' values reach the result.

use super::group::{atomic_capable, nondeterministic};
use super::model::{shape_of, AccShape};
use super::request::VarRequest;
use super::strategy::{CrossAlgo, Determinism};
use crate::caps::{DeviceCaps, Space};
use crate::error::{Error, Result};
use crate::ops::Op;

pub(super) fn cross_supported(
    caps: &DeviceCaps,
    c: CrossAlgo,
    v: &VarRequest,
) -> std::result::Result<(), String> {
    match c {
        CrossAlgo::Atomic => {
            if v.op.atomic_op().is_none() {
                Err(format!(
                    "an atomic for {} (custom operators use atomics only when declared with CustomOp::atomic)",
                    v.op
                ))
            } else if !atomic_capable(caps, v, Space::Global) {
                Err(format!("fast global atomics for {} on {}", v.op, v.ty))
            } else if matches!(v.op.atomic_op(), Some(Op::LogicalAnd | Op::LogicalOr))
                && !v.init_to_identity
            {
                Err(format!(
                    "an atomic for {} that normalises the variable's initial value (use initialize_to_identity)",
                    v.op
                ))
            } else {
                Ok(())
            }
        }
        CrossAlgo::LastGroup => {
            if !caps.atomics.int32_global_base {
                Err("32-bit global atomics for the work-group counter (cl_khr_global_int32_base_atomics)".into())
            } else if shape_of(&v.op) != AccShape::Plain && !caps.acq_rel() {
                Err(format!(
                    "acquire/release atomics (OpenCL C 2.0, or NVIDIA inline PTX), to publish {} partials (structures) to the last work-group",
                    v.op
                ))
            } else {
                Ok(())
            }
        }
        CrossAlgo::ExtraPass => Ok(()),
    }
}

/// Above this many indices, structured partials (argmin/argmax, identity-less) on NVIDIA's PTX
/// acquire/release path finish with an extra pass instead of last-group detection. Measured on
/// the H200 (f32 argmin, device time, design/bench/): last-group 17.7 us vs extra pass 22.6 us
/// at 2^22, 34.1 vs 31.4 at 2^24, 94.4 vs 77.4 at 2^26, 344 vs 267 at 2^28. The kernel with the
/// last-group tail uses 40 registers per work-item instead of 32 (`-cl-nv-verbose`), so 6
/// instead of 8 work-groups of 256 fit an SM; `-cl-nv-maxrregcount=32` did not lower it.
pub(super) const PTX_STRUCT_LAST_MAX: u64 = 1 << 23;

pub(super) fn choose_cross(
    caps: &DeviceCaps,
    v: &VarRequest,
    det: Determinism,
    forced: Option<CrossAlgo>,
    groups: u64,
    total: u64,
) -> Result<(CrossAlgo, String)> {
    if let Some(c) = forced {
        cross_supported(caps, c, v).map_err(|missing| Error::Unsupported {
            what: format!("cross-group step {c} for {} on {}", v.op, v.ty),
            missing: format!("the device lacks {missing}"),
            device: caps.label(),
        })?;
        if c == CrossAlgo::Atomic && v.op.order_sensitive(v.ty) && det == Determinism::Deterministic
        {
            return Err(nondeterministic(
                caps,
                &format!("cross-group step {c} for {} on {}", v.op, v.ty),
            ));
        }
        return Ok((c, "forced".into()));
    }
    let relaxed_ok = det == Determinism::Relaxed || !v.op.order_sensitive(v.ty);
    if groups > 1 && relaxed_ok && cross_supported(caps, CrossAlgo::Atomic, v).is_ok() {
        return Ok((
            CrossAlgo::Atomic,
            format!(
                "fast global atomics for {} on {}{}",
                v.op,
                v.ty,
                if v.op.order_sensitive(v.ty) {
                    " (relaxed mode: the order of float additions varies)"
                } else {
                    ", exact in any order"
                }
            ),
        ));
    }
    if groups > 1
        && total > PTX_STRUCT_LAST_MAX
        && shape_of(&v.op) != AccShape::Plain
        && caps.acq_rel_ptx_path()
    {
        return Ok((
            CrossAlgo::ExtraPass,
            format!(
                "{} partials are structures: on NVIDIA's PTX path their last-group tail costs registers (40 vs 32 per work-item on the H200) and with them occupancy, which outweighs the extra launch above {} elements: partials + one extra pass by one work-group",
                v.op, PTX_STRUCT_LAST_MAX
            ),
        ));
    }
    if cross_supported(caps, CrossAlgo::LastGroup, v).is_ok() {
        let why = if groups == 1 {
            "a single work-group: its ticket is the last, so it finishes in the same launch"
                .to_string()
        } else if atomic_capable(caps, v, Space::Global) && !relaxed_ok {
            "float atomics would be order-dependent (deterministic mode): partials + last-work-group detection, one launch".to_string()
        } else {
            format!("no usable global atomic for {} on {}: partials + last-work-group detection, one launch", v.op, v.ty)
        };
        return Ok((CrossAlgo::LastGroup, why));
    }
    Ok((
        CrossAlgo::ExtraPass,
        if caps.atomics.int32_global_base {
            "no OpenCL C 2.0 atomics to publish structured partials: partials + one extra pass by one work-group"
        } else {
            "no global atomics at all: partials + one extra pass by one work-group"
        }
        .into(),
    ))
}
