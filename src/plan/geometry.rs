//! Geometry: work-group size, number of work-groups, indices per work-item, index order and
//! accumulators, within the device's local memory.

use super::exact;
use super::model::{
    acc_bytes, shape_of, AccShape, ExactPlan, IndexOrder, SpanPlan, SpanStore, VarPlan,
};
use super::request::{Request, VarRequest};
use super::span::private_rows_cap;
use super::strategy::GroupAlgo;
use crate::caps::{DeviceCaps, DeviceKind};
use crate::error::{Error, Result};

fn pow2_floor(x: usize) -> usize {
    if x == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - x.leading_zeros())
    }
}

/// What one variable needs in local memory.
#[derive(Debug, Clone, Copy)]
pub(super) struct Need {
    pub group: GroupAlgo,
    /// Bytes of one accumulator.
    pub acc: usize,
    pub span: Option<(usize, SpanStore)>,
    /// An exact sum's plan: its superaccumulator(s) in local memory.
    pub exact: Option<ExactPlan>,
}

impl Need {
    pub fn of(
        group: GroupAlgo,
        v: &VarRequest,
        span: Option<SpanPlan>,
        exact: Option<ExactPlan>,
    ) -> Need {
        let shape = if exact.is_some() {
            AccShape::Exact
        } else {
            shape_of(&v.op)
        };
        Need {
            group,
            acc: acc_bytes(shape, v.ty, exact),
            span: span.map(|s| (s.len, s.store)),
            exact,
        }
    }
    pub fn of_plan(v: &VarPlan) -> Need {
        Need {
            group: v.group,
            acc: v.acc_bytes,
            span: v.span.map(|s| (s.len, s.store)),
            exact: v.exact,
        }
    }
    /// Bytes of local memory beyond the group step's slots: an exact sum's superaccumulators
    /// (one per work-group, one row per work-item, or one per span element).
    fn extra_bytes(&self, local: usize) -> u64 {
        match (self.exact, self.span) {
            (Some(e), Some((len, SpanStore::LocalShared))) => (len * e.limbs() * 8) as u64,
            (Some(_), Some(_)) => 0,
            (Some(e), None) => (e.local_longs(local) * 8) as u64,
            (None, _) => 0,
        }
    }
}

/// The geometry of a launch and why.
pub(super) struct Geometry {
    /// Work-group size.
    pub local: usize,
    /// Work-groups of the main kernel.
    pub groups: u64,
    /// Indices per work-item (at most).
    pub per_item: u64,
    pub order: IndexOrder,
    /// Consecutive indices per work-item and step (16-bit loads at once), 1 for none.
    pub vec: usize,
    /// Independent accumulators per work-item.
    pub unroll: usize,
    /// Indices in all.
    pub total: u64,
    pub reason: String,
}

pub(super) fn local_slots(caps: &DeviceCaps, n: &Need, local: usize) -> usize {
    if n.exact.is_some() && n.span.is_some() {
        // An exact span deposits every update into its superaccumulators: no group step.
        return 1;
    }
    match n.span {
        Some((len, SpanStore::LocalShared)) => len,
        Some((len, SpanStore::LocalPrivate)) => len * local,
        Some((_, _)) => 1,
        None => match n.group {
            GroupAlgo::Tree => local,
            GroupAlgo::WgReduce => 1,
            GroupAlgo::SgReduce => local.div_ceil(caps.min_sub_group_size()) + 1,
            GroupAlgo::LocalAtomic => 1,
        },
    }
}

pub(super) fn local_bytes(caps: &DeviceCaps, vars: &[Need], local: usize) -> u64 {
    vars.iter()
        .map(|n| (local_slots(caps, n, local) * n.acc) as u64 + n.extra_bytes(local))
        .sum::<u64>()
        + 4
}

pub(super) fn describe_local(caps: &DeviceCaps, needs: &[Need], local: usize) -> String {
    needs
        .iter()
        .enumerate()
        .map(|(k, n)| {
            format!(
                "var {k}: {} needs {} x {} bytes",
                match n.span {
                    Some((len, store)) => format!("span of {len} ({})", store.name()),
                    None => n.group.to_string(),
                },
                local_slots(caps, n, local),
                n.acc
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The nd_range form: the caller's geometry, checked against the device.
pub(super) fn nd_range(
    caps: &DeviceCaps,
    needs: &[Need],
    global: u64,
    local: usize,
) -> Result<Geometry> {
    let max_wg = caps.max_local_1d().max(1);
    if local == 0 {
        return Err(Error::InvalidRange {
            reason: "local size 0".into(),
        });
    }
    if !global.is_multiple_of(local as u64) {
        return Err(Error::NdRangeNotDivisible {
            global: vec![global as usize],
            local: vec![local],
        });
    }
    if local > caps.max_work_group_size {
        return Err(Error::WorkGroupTooLarge {
            local,
            limit: caps.max_work_group_size,
            limit_name: "CL_DEVICE_MAX_WORK_GROUP_SIZE",
            device: caps.label(),
        });
    }
    if local > max_wg {
        return Err(Error::WorkGroupTooLarge {
            local,
            limit: max_wg,
            limit_name: "CL_DEVICE_MAX_WORK_ITEM_SIZES[0]",
            device: caps.label(),
        });
    }
    let need = local_bytes(caps, needs, local);
    if need > caps.local_mem_size {
        return Err(Error::LocalMemory {
            local,
            need,
            have: caps.local_mem_size,
            detail: describe_local(caps, needs, local),
            device: caps.label(),
        });
    }
    let groups = global / local as u64;
    if groups > u32::MAX as u64 {
        return Err(Error::InvalidRange {
            reason: format!("{groups} work-groups exceed 2^32"),
        });
    }
    Ok(Geometry {
        local,
        groups,
        per_item: 1,
        order: IndexOrder::OnePerItem,
        vec: 1,
        unroll: 1,
        total: global,
        reason: "nd_range: the caller's geometry".to_string(),
    })
}

/// Consecutive 16-bit elements a work-item loads at once (`Plan::vec`, design/decisions.md
/// section 49): only where the body reads a 16-bit buffer at `[i]` (`Request::narrow_reads`),
/// in grid-stride order (consecutive work-items then read consecutive blocks) and outside an
/// exact sum's speculative loop; the override `vec=N` where that holds, else the device's
/// `DeviceCaps::narrow_vec`. Why: a warp's load of 2-byte elements one at a time moves 64
/// bytes, half of what the f32 sum's loads move (H200, session 8: f16 2^28 184 us against f32
/// 2^27 127 us, the same bytes, 1.45x).
fn vec_width(caps: &DeviceCaps, req: &Request, exacts: &[ExactPlan], order: IndexOrder) -> usize {
    let usable = req.narrow_reads && order == IndexOrder::GridStride && exacts.is_empty();
    match req.tuning.and_then(|t| t.vec) {
        Some(w) if usable => w,
        _ if usable => caps.narrow_vec.max(1),
        _ => 1,
    }
}

/// The range form: work-group size, count, order and accumulators chosen for the device.
pub(super) fn range(
    caps: &DeviceCaps,
    req: &Request,
    needs: &[Need],
    spans: &[Option<SpanPlan>],
    exacts: &[ExactPlan],
    n: u64,
) -> Result<Geometry> {
    let max_wg = caps.max_local_1d().max(1);
    // An exact sum loads elements of its type; its wider expansion stays in registers.
    let widest = needs
        .iter()
        .zip(&req.vars)
        .map(|(n, v)| {
            if n.exact.is_some() {
                v.ty.size()
            } else {
                n.acc
            }
        })
        .max()
        .unwrap_or(4);
    let gpu = caps.kind == DeviceKind::Gpu;
    let mult = caps.preferred_wg_multiple.max(1);
    // GPUs: 256 work-items (8 warps / 4 wavefronts) keeps occupancy high with little
    // local memory. CPUs: each work-item streams its own contiguous chunk (TODO #4). A
    // CPU compiler that vectorizes across work-items (it asks for a work-group multiple
    // of 16 or more, as Intel's asks for 128) would turn those streams into gathers, so it
    // gets one work-item per group and vectorizes the work-item's own loop instead.
    // Measured with examples/sweep at 2^22 f32 on the 2-core dev machine (loaded):
    // Intel local 128 interleaved 1 GB/s, contiguous local 1 x 8 groups/core 17 GB/s;
    // PoCL interleaved 1 GB/s, contiguous local 64 x 4 groups/core unroll 8 20 GB/s.
    let lanes_vectorized = !gpu && mult >= 16;
    let tune = req.tuning.unwrap_or_default();
    let want = tune.local.unwrap_or(if gpu {
        256
    } else if lanes_vectorized {
        1
    } else {
        64
    });
    if let Some(why) = tune.problem() {
        return Err(Error::InvalidRange {
            reason: format!("geometry override: {why}"),
        });
    }
    // An explicit work-group size is refused where the device cannot run it, never clamped.
    if tune.local.is_some() && want > max_wg {
        return Err(Error::WorkGroupTooLarge {
            local: want,
            limit: max_wg,
            limit_name: "CL_DEVICE_MAX_WORK_GROUP_SIZE",
            device: caps.label(),
        });
    }
    let mut local = if tune.local.is_some() {
        want
    } else {
        pow2_floor(want.min(max_wg)).max(1)
    };
    while tune.local.is_none() && local > 1 && local_bytes(caps, needs, local) > caps.local_mem_size
    {
        local /= 2;
    }
    if local_bytes(caps, needs, local) > caps.local_mem_size {
        return Err(Error::LocalMemory {
            local,
            need: local_bytes(caps, needs, local),
            have: caps.local_mem_size,
            detail: describe_local(caps, needs, local),
            device: caps.label(),
        });
    }
    // 8 loads in flight per work-item for one 4-byte variable; several variables (or
    // 8-byte ones) keep 4, or the extra registers cost more than they hide. Measured on
    // the H200 (examples/sweep, 2^28 f32): 1 var unroll 8 = 4351 GB/s vs unroll 4 = 4257;
    // sum+min+max unroll 8 = 2734 GB/s vs unroll 4 = 4200 (design/bench/).
    // Exact sums keep 4 where every accumulator is an expansion (measured on the H200, 2^28 f32
    // exact, the branchy loop with blocks: unroll 8 1410 us, 4 961 us, 2 942 us;
    // design/bench/2026-11-23-h200-exact-exp.txt).
    // A single exact sum in the shared hot loop takes the plain sum's 8 for f32 data (one
    // expansion; H200 f32 2^28 1.55x at 4, 1.03x at 8), 4 and fewer work-groups for f64 data
    // (super::exact::hot_geometry).
    let order = tune.order.unwrap_or(if gpu {
        IndexOrder::GridStride
    } else {
        IndexOrder::Contiguous
    });
    let hot = exact::hot_geometry(caps, req, exacts, order);
    let default_unroll = if !exacts.is_empty() {
        hot.map_or(4, |h| h.0)
    } else if widest < 8 && req.vars.len() == 1 {
        8
    } else {
        4
    };
    let unroll = tune.unroll.unwrap_or(default_unroll);
    let vec = vec_width(caps, req, exacts, order);
    // Enough work-groups to fill the device: GPUs 8 per compute unit (2048 resident
    // work-items per SM / 256), CPUs 4 per core for load balance; an f64 exact sum's hot loop
    // on GPUs as many as its registers leave resident (one wave).
    let per_cu = tune.groups_per_cu.unwrap_or(match hot.and_then(|h| h.1) {
        Some(g) => g,
        None if gpu || lanes_vectorized => 8,
        None => 4,
    });
    let max_groups = caps.compute_units as u64 * per_cu;
    // CPUs: at least 4096 indices per work-group, or launching groups costs more than
    // they save.
    let per_group_min = if gpu {
        (local * unroll * vec) as u64
    } else {
        ((local * unroll * vec * 4) as u64).max(4096)
    };
    let mut groups = n.div_ceil(per_group_min).clamp(1, max_groups.max(1));
    // A span kept in global scratch has one copy per work-item: cap the work-items.
    for sp in spans.iter().flatten() {
        if sp.store == SpanStore::GlobalPrivate {
            let rows = (private_rows_cap(caps) / (sp.len * 8) as u64).max(1);
            while local > 1 && local as u64 > rows {
                local /= 2;
            }
            groups = groups.min((rows / local as u64).max(1));
        }
    }
    // An exact sum's work-group takes at most its expansion's and superaccumulator's cap.
    groups = groups.max(exact::min_groups(n, exacts));
    if groups > u32::MAX as u64 {
        return Err(Error::InvalidRange {
            reason: format!("{groups} work-groups exceed 2^32"),
        });
    }
    let per_item = n.div_ceil(groups * local as u64).max(1);
    let mut reason = format!(
            "{} device with {} compute units: {} work-items per group (preferred multiple {mult}), up to {max_groups} groups, {unroll} accumulators per work-item",
            if gpu { "GPU" } else { "CPU" },
            caps.compute_units,
            local
        );
    if vec > 1 {
        reason.push_str(&format!(
            ", {vec} consecutive indices per step (the body's 16-bit reads at [i] loaded {} bytes at once)",
            2 * vec
        ));
    }
    Ok(Geometry {
        local,
        groups,
        per_item,
        order,
        vec,
        unroll,
        total: n,
        reason,
    })
}
