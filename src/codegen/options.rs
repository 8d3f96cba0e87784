//! The `-D` build options of a plan: the one place plan decisions become kernel defines
//! (kernels/common.cl lists every define and what it means).

use crate::caps::DeviceCaps;
use crate::plan::{
    AccShape, ExactFormat, ExactTail, Expansion, FormRequest, HotLoop, IndexOrder, Plan, SaccStore,
    SpanStore, VarPlan,
};
use crate::types::ElemType;

use super::acc_type;

/// Whether the main loop is the exact sum's speculative one (kernels/reduce.cl CLR_SPEC).
pub(super) fn speculative(plan: &Plan) -> bool {
    plan.vars
        .iter()
        .any(|v| v.exact.is_some_and(|e| e.speculative))
}

/// An exact sum's defines (kernels/var_exact.cl), and every variable's `Rk_XLS`.
fn exact_defines(d: &mut impl FnMut(&str, String), k: usize, v: &VarPlan, local: usize) {
    let Some(e) = v.exact else {
        d(&format!("R{k}_XLS"), "1".into());
        return;
    };
    d(
        &format!("R{k}_XF"),
        match e.format {
            ExactFormat::F32 => "32",
            ExactFormat::F64 => "64",
        }
        .into(),
    );
    d(
        &format!("R{k}_XE"),
        match e.expansion {
            Expansion::TwoDouble => "CLR_XE_E2D",
            Expansion::ThreeFloat => "CLR_XE_E3F",
        }
        .into(),
    );
    d(
        &format!("R{k}_XST"),
        match e.store {
            SaccStore::LocalAtomic => "CLR_XST_LA",
            SaccStore::LocalRows => "CLR_XST_ROWS",
            SaccStore::Carried => "CLR_XST_CARRIED",
        }
        .into(),
    );
    d(&format!("R{k}_XL"), e.limbs().to_string());
    // 0: the element loop; 1: the speculative loop; 2, 3, 4: its hot forms, shared, lanes and
    // vector (kernels/var_exact.cl).
    let spec = match (e.speculative, e.hot) {
        (false, _) => 0,
        (true, HotLoop::Off) => 1,
        (true, HotLoop::Shared) => 2,
        (true, HotLoop::Lanes) => 3,
        (true, HotLoop::Vector) => 4,
    };
    d(&format!("R{k}_XSPEC"), spec.to_string());
    // The fixed tail (kernels/var_exact.cl VXTAIL): 0 private, 1 local, 2 lean, 3 lazy.
    let tail = match e.tail {
        ExactTail::Private => 0,
        ExactTail::Local => 1,
        ExactTail::Lean => 2,
        ExactTail::Lazy => 3,
    };
    d(&format!("R{k}_XTAIL"), tail.to_string());
    let longs = match v.span {
        Some(sp) if sp.store == SpanStore::LocalShared => sp.len * e.limbs(),
        Some(_) => 1,
        None => e.local_longs(local),
    };
    d(&format!("R{k}_XLS"), longs.to_string());
}

pub(super) fn kind(ty: ElemType) -> &'static str {
    match ty {
        ElemType::I32 | ElemType::U32 => "CLR_KIND_INT32",
        ElemType::I64 | ElemType::U64 => "CLR_KIND_INT64",
        ElemType::F32 | ElemType::F16 | ElemType::BF16 => "CLR_KIND_F32",
        ElemType::F64 => "CLR_KIND_F64",
    }
}

/// The `-D` options of a plan.
pub(crate) fn options(plan: &Plan, caps: &DeviceCaps) -> String {
    let mut o = vec![caps.cl_std().option().to_string()];
    if plan.local > 256 && caps.has_extension("cl_nv_compiler_options") {
        // NVIDIA's compiler budgets registers for 256 work-items regardless of
        // reqd_work_group_size (CL_KERNEL_WORK_GROUP_SIZE came back 256 for local 1000 on the
        // H200); cap them so the whole work-group fits the 64 Ki-register file.
        let regs = (65536 / plan.local.next_multiple_of(32)).min(255) / 8 * 8;
        o.push(format!("-cl-nv-maxrregcount={regs}"));
    }
    if let Ok(extra) = std::env::var("CLREDUCE_EXTRA_OPTIONS") {
        // Developer knob: more build options (e.g. -cl-nv-verbose with CLREDUCE_LOG=debug).
        o.push(extra);
    }
    let mut d = |k: &str, v: String| o.push(format!("-D {k}={v}"));
    d("CLR_WG", plan.local.to_string());
    d("CLR_WG_POW2", pow2_floor(plan.local).to_string());
    d(
        "CLR_IDX",
        if plan.wide_index { "ulong" } else { "uint" }.into(),
    );
    d(
        "CLR_FORM",
        if matches!(plan.form, FormRequest::NdRange { .. }) {
            "CLR_FORM_ND"
        } else {
            "CLR_FORM_RANGE"
        }
        .into(),
    );
    d(
        "CLR_ORDER",
        match plan.order {
            IndexOrder::Blocked => "CLR_ORDER_BLOCKED",
            IndexOrder::Contiguous => "CLR_ORDER_CONTIG",
            _ => "CLR_ORDER_GRID",
        }
        .into(),
    );
    d("CLR_UNROLL", plan.unroll.to_string());
    d("CLR_VEC", plan.vec.to_string());
    d("CLR_RANK", plan.shape.rank.to_string());
    if plan.shape.rank > 1 {
        // Multi-dimensional ids need the extents at compile time (a rank-1 launch does not, so
        // its program serves every n).
        for k in 0..3 {
            d(&format!("CLR_E{k}"), format!("{}UL", plan.shape.global[k]));
            d(&format!("CLR_L{k}"), format!("{}UL", plan.shape.local[k]));
        }
    }
    d("CLR_C11", (plan.c11_atomics as u8).to_string());
    d("CLR_PTX_ACQREL", (plan.ptx_acq_rel as u8).to_string());
    d("CLR_HAS_LAST", (plan.takes_tickets() as u8).to_string());
    d("CLR_SPEC", (speculative(plan) as u8).to_string());
    // The hot loop's lanes form: blocks of CLR_XBLK steps per accumulator (kernels/var_exact.cl).
    let any_hot = |form| {
        plan.vars
            .iter()
            .any(|v| v.exact.is_some_and(|e| e.runs_hot(form)))
    };
    d("CLR_XLANES", (any_hot(HotLoop::Lanes) as u8).to_string());
    // The vector form: one block (the lanes' merge into accumulator 0) per chunk of 64 steps.
    if any_hot(HotLoop::Vector) {
        d("CLR_XVEC", "1".into());
    }
    // The shared hot loop's unrolled steps per bound check (kernels/reduce.cl CLR_SPEC_WHOLE):
    // blocks of CLR_XBLK steps (for f32 data the block pre-sum's block).
    if speculative(plan) && plan.spec_steps > 1 {
        d("CLR_SPEC_WHOLE", "1".into());
        d("CLR_XBLK", plan.spec_steps.to_string());
    }
    d(
        "CLR_I64_ATOMICS",
        (caps.atomics.int64_base as u8).to_string(),
    );
    d("CLR_SG_PTX", (caps.sg_via_ptx() as u8).to_string());
    d(
        "CLR_MBOX_PTX",
        (caps.workarounds.host_mailbox as u8).to_string(),
    );
    d(
        "CLR_SERIAL_FINISH",
        (caps.workarounds.serial_last_group_tree as u8).to_string(),
    );
    if let Some(sp) = &plan.segment {
        super::segment::defines(sp, plan.local, &mut d);
    }
    for (k, v) in plan.vars.iter().enumerate() {
        d(&format!("R{k}_T"), v.ty.cl_name().into());
        d(&format!("R{k}_A"), acc_type(k, v));
        d(
            &format!("R{k}_SHAPE"),
            match v.shape {
                AccShape::Plain => "CLR_SHAPE_PLAIN",
                AccShape::Flagged => "CLR_SHAPE_FLAGGED",
                AccShape::Pair => "CLR_SHAPE_PAIR",
                AccShape::Exact => "CLR_SHAPE_EXACT",
            }
            .into(),
        );
        exact_defines(&mut d, k, v, plan.local);
        d(&format!("R{k}_KIND"), kind(v.ty).into());
        d(&format!("R{k}_OPID"), v.op.cl_id().into());
        d(
            &format!("R{k}_AOPID"),
            v.op.atomic_op().map_or("0", |op| op.cl_id()).into(),
        );
        d(
            &format!("R{k}_ID"),
            v.identity.map_or("0".into(), |id| id.cl_literal()),
        );
        d(&format!("R{k}_GS"), v.group.cl_id().into());
        d(&format!("R{k}_XS"), v.cross.cl_id().into());
        d(
            &format!("R{k}_INIT"),
            (!v.init_to_identity as u8).to_string(),
        );
        d(&format!("R{k}_LSLOTS"), v.local_slots.to_string());
        d(&format!("R{k}_XRAW"), (v.raw as u8).to_string());
        d(
            &format!("R{k}_SPAN"),
            v.span.map_or(0, |s| s.len).to_string(),
        );
        d(
            &format!("R{k}_SSTORE"),
            v.span.map_or("0", |s| s.store.cl_id()).into(),
        );
        d(
            &format!("R{k}_SCOPIES"),
            v.span.map_or(1, |s| s.copies).to_string(),
        );
    }
    o.join(" ")
}

pub(super) fn pow2_floor(x: usize) -> usize {
    1 << (usize::BITS - 1 - x.max(1).leading_zeros())
}
