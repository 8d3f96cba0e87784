//! Turns a [`Plan`] and a user body into OpenCL C source plus `-D` build options. The kernels
//! themselves live in `kernels/*.cl`; this module only writes the defines, the per-variable
//! inclusion and the user body wrapper.

use crate::caps::DeviceCaps;
use crate::ops::Operator;
use crate::plan::{
    AccShape, CrossAlgo, FormRequest, GroupAlgo, IndexOrder, Plan, SpanStore, VarPlan,
};
use crate::types::ElemType;

pub(crate) const COMMON_CL: &str = include_str!("../kernels/common.cl");
pub(crate) const VAR_CL: &str = include_str!("../kernels/var.cl");
pub(crate) const REDUCE_CL: &str = include_str!("../kernels/reduce.cl");
pub(crate) const ITEM_CL: &str = include_str!("../kernels/item.cl");

/// The kernel source `name` (`common.cl`, `var.cl`, `reduce.cl`): the embedded copy, or the file
/// of that name in the directory `CLREDUCE_KERNELS` when that variable is set (kernel
/// development, and the race tier's broken-kernel check, without rebuilding the crate).
fn kernel_source(name: &str, embedded: &'static str) -> std::borrow::Cow<'static, str> {
    match std::env::var_os("CLREDUCE_KERNELS") {
        Some(dir) => match std::fs::read_to_string(std::path::Path::new(&dir).join(name)) {
            Ok(s) => s.into(),
            Err(e) => {
                tracing::warn!(dir = ?dir, name, error = %e, "CLREDUCE_KERNELS: using the embedded kernel");
                embedded.into()
            }
        },
        None => embedded.into(),
    }
}

/// A user kernel parameter as the generated signature declares it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ParamKind {
    /// `__global const T* restrict name` (read-only) or `__global T* name`.
    Buffer { ty: ElemType, writable: bool },
    /// A scalar passed by value.
    Scalar { ty: ElemType },
}

/// Generated source and options, plus where the user body starts (for mapping build logs).
pub(crate) struct Generated {
    pub source: String,
    pub options: String,
    pub body_first_line: usize,
    pub body_lines: usize,
}

fn kind(ty: ElemType) -> &'static str {
    match ty {
        ElemType::I32 | ElemType::U32 => "CLR_KIND_INT32",
        ElemType::I64 | ElemType::U64 => "CLR_KIND_INT64",
        ElemType::F32 | ElemType::F16 => "CLR_KIND_F32",
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
    d(
        "CLR_HAS_LAST",
        (plan.uses(CrossAlgo::LastGroup) as u8).to_string(),
    );
    d(
        "CLR_I64_ATOMICS",
        (caps.atomics.int64_base as u8).to_string(),
    );
    d("CLR_SG_PTX", (caps.sg_via_ptx() as u8).to_string());
    d(
        "CLR_SERIAL_FINISH",
        (caps.workarounds.serial_last_group_tree as u8).to_string(),
    );
    for (k, v) in plan.vars.iter().enumerate() {
        d(&format!("R{k}_T"), v.ty.cl_name().into());
        d(&format!("R{k}_A"), acc_type(k, v));
        d(
            &format!("R{k}_SHAPE"),
            match v.shape {
                AccShape::Plain => "CLR_SHAPE_PLAIN",
                AccShape::Flagged => "CLR_SHAPE_FLAGGED",
                AccShape::Pair => "CLR_SHAPE_PAIR",
            }
            .into(),
        );
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
        d(
            &format!("R{k}_SPAN"),
            v.span.map_or(0, |s| s.len).to_string(),
        );
        d(
            &format!("R{k}_SSTORE"),
            v.span.map_or("0", |s| s.store.cl_id()).into(),
        );
    }
    o.join(" ")
}

/// OpenCL's id functions as a multi-dimensional nd_range body sees them (kernels/item.cl).
const ND_IDS: [(&str, &str); 9] = [
    ("get_global_id(d)", "clr_global_id(d)"),
    ("get_local_id(d)", "clr_local_id(d)"),
    ("get_group_id(d)", "clr_group_id(d)"),
    ("get_global_size(d)", "clr_global_size(d)"),
    ("get_local_size(d)", "clr_local_size(d)"),
    ("get_num_groups(d)", "clr_num_groups(d)"),
    ("get_global_linear_id()", "((size_t)i)"),
    ("get_local_linear_id()", "clr_local_linear_id()"),
    ("get_work_dim()", "CLR_RANK"),
];

/// Whether `word` occurs in `body` as a whole identifier.
pub(crate) fn mentions(body: &str, word: &str) -> bool {
    let b = body.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    body.match_indices(word).any(|(p, _)| {
        (p == 0 || !is_word(b[p - 1])) && b.get(p + word.len()).is_none_or(|&c| !is_word(c))
    })
}

/// The accumulator type of variable `k`: its element type, or a struct generated in the source.
fn acc_type(k: usize, v: &VarPlan) -> String {
    match v.shape {
        AccShape::Plain => v.ty.cl_name().into(),
        _ => format!("clr_acc_{k}"),
    }
}

/// How the body reaches variable `k`'s accumulator: a private scalar, or a span copy in local or
/// global memory.
fn reducer_param(k: usize, v: &VarPlan) -> String {
    let t = v.ty.cl_name();
    match v.span.map(|s| s.store) {
        None => format!("{}* clr_r{k}", acc_type(k, v)),
        Some(SpanStore::LocalShared | SpanStore::LocalPrivate) => format!("__local {t}* clr_r{k}"),
        Some(SpanStore::GlobalAtomic | SpanStore::GlobalPrivate) => {
            format!("__global {t}* clr_r{k}")
        }
    }
}

/// The argument CLR_CALL passes for variable `k`.
fn reducer_arg(k: usize, v: &VarPlan) -> String {
    match v.span.map(|s| s.store) {
        None => format!("&acc_{k}[u]"),
        Some(SpanStore::LocalShared) => format!("lm_{k}"),
        Some(SpanStore::LocalPrivate) => format!("(lm_{k} + clr_lid * (size_t)R{k}_SPAN)"),
        Some(SpanStore::GlobalAtomic) => format!("clr_res_{k}"),
        Some(SpanStore::GlobalPrivate) => {
            format!("(clr_part_{k} + get_global_id(0) * (size_t)R{k}_SPAN)")
        }
    }
}

/// The reducer macros the body sees for variable `k` named `name`.
fn reducer_macros(k: usize, v: &VarPlan, name: &str) -> String {
    if v.span.is_some() {
        // Span subscripts were rewritten to NAME_combine(index, value) (see rewrite_spans).
        return format!("#define {name}_combine(e, x) clr_supd_{k}(clr_r{k}, (size_t)(e), (x))\n");
    }
    match v.shape {
        AccShape::Plain => format!(
            "#define {name} (*clr_r{k})\n#define {name}_combine(v) ((*clr_r{k}) = clr_op_{k}((*clr_r{k}), (v)))\n"
        ),
        AccShape::Flagged => format!(
            "#define {name}_combine(v) ((*clr_r{k}) = clr_op_{k}((*clr_r{k}), clr_mk_{k}(v)))\n"
        ),
        AccShape::Pair => format!(
            "#define {name}_combine(v, j) ((*clr_r{k}) = clr_push_{k}((*clr_r{k}), (v), (ulong)(j)))\n"
        ),
    }
}

fn pow2_floor(x: usize) -> usize {
    1 << (usize::BITS - 1 - x.max(1).leading_zeros())
}

/// Generates the full program for a plan, reducer names and user body.
pub(crate) fn generate(
    plan: &Plan,
    caps: &DeviceCaps,
    names: &[String],
    body: &str,
    params: &[(String, ParamKind)],
) -> Generated {
    let mut s = String::new();
    // Extensions the program needs.
    let any_ty = |t: ElemType| {
        plan.vars.iter().any(|v| v.ty == t) || params.iter().any(|(_, p)| matches!(p, ParamKind::Buffer { ty, .. } | ParamKind::Scalar { ty } if *ty == t))
    };
    if any_ty(ElemType::F64) && caps.has_extension("cl_khr_fp64") {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    if any_ty(ElemType::F16) && caps.has_extension("cl_khr_fp16") {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
    }
    let int64_atomics = plan.vars.iter().any(|v| {
        v.ty.is_64bit()
            && ((!v.ty.is_float()
                && (v.group == GroupAlgo::LocalAtomic || v.cross == CrossAlgo::Atomic))
                || (v.cross == CrossAlgo::LastGroup && !plan.c11_atomics && !plan.ptx_acq_rel))
    });
    if int64_atomics && caps.atomics.int64_base {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n");
        if caps.atomics.int64_ext {
            s.push_str("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n");
        }
    }
    if plan.vars.iter().any(|v| v.group == GroupAlgo::SgReduce) {
        if caps.has_extension("cl_khr_subgroups") {
            s.push_str("#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n");
        }
        if caps.has_extension("cl_khr_subgroup_non_uniform_arithmetic") {
            s.push_str(
                "#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable\n",
            );
        }
    }
    s.push_str(&kernel_source("common.cl", COMMON_CL));
    for (k, v) in plan.vars.iter().enumerate() {
        let t = v.ty.cl_name();
        // No implicit padding (the flag is as wide as the value; a 4-byte value before a ulong
        // index gets an explicit pad, Rk_PAD), so copies of an accumulator never carry
        // uninitialised bytes (Oclgrind checks).
        let pad = v.shape == AccShape::Pair && !v.ty.is_64bit();
        match v.shape {
            AccShape::Plain => {}
            AccShape::Flagged => s.push_str(&format!(
                "typedef struct {{ {t} v; {} has; }} clr_acc_{k};\n",
                if v.ty.is_64bit() { "ulong" } else { "uint" }
            )),
            AccShape::Pair if pad => s.push_str(&format!(
                "typedef struct {{ {t} v; uint pad; ulong i; }} clr_acc_{k};\n"
            )),
            AccShape::Pair => s.push_str(&format!(
                "typedef struct {{ {t} v; ulong i; }} clr_acc_{k};\n"
            )),
        }
        s.push_str(&format!("#define R{k}_PAD {}\n", pad as u8));
        if let Operator::Custom(c) = &v.op {
            s.push_str(&format!(
                "#define R{k}_CUSTOM(a, b) ({})\n",
                c.expr().replace('\n', " ")
            ));
        }
    }
    let var_cl = kernel_source("var.cl", VAR_CL);
    for k in 0..plan.vars.len() {
        s.push_str(&format!("#define CLR_V {k}\n"));
        s.push_str(&var_cl);
        s.push_str("#undef CLR_V\n");
    }
    s.push_str(&kernel_source("item.cl", ITEM_CL));
    // Generated glue.
    let restrict = if caps.workarounds.no_restrict {
        ""
    } else {
        "restrict "
    };
    let idx = if plan.wide_index { "ulong" } else { "uint" };
    let user_params: String = params
        .iter()
        .map(|(name, p)| match p {
            ParamKind::Buffer {
                ty,
                writable: false,
            } => format!(", __global const {}* {restrict}{name}", ty.cl_name()),
            ParamKind::Buffer { ty, writable: true } => {
                format!(", __global {}* {name}", ty.cl_name())
            }
            ParamKind::Scalar { ty } => format!(", const {} {name}", ty.cl_name()),
        })
        .collect();
    let user_args: String = params.iter().map(|(name, _)| format!(", {name}")).collect();
    let fors: String = (0..plan.vars.len()).map(|k| format!(" X({k})")).collect();
    s.push_str(&format!("#define CLR_FOR_VARS(X){fors}\n"));
    let var_params: String = plan
        .vars
        .iter()
        .enumerate()
        .map(|(k, v)| {
            format!(
                "__global {t}* clr_res_{k}, __global ulong* clr_aux_{k}, __global {a}* clr_part_{k}, ",
                t = v.ty.cl_name(),
                a = acc_type(k, v)
            )
        })
        .collect();
    s.push_str(&format!("#define CLR_VAR_PARAMS {var_params}\n"));
    s.push_str(&format!("#define CLR_USER_PARAMS {user_params}\n"));
    let accs: String = plan
        .vars
        .iter()
        .enumerate()
        .map(|(k, v)| format!(", {}", reducer_arg(k, v)))
        .collect();
    s.push_str(&format!(
        "#define CLR_CALL(i, u) clr_body((i), clr_n{accs}{user_args})\n"
    ));
    // The user body, with each reducer visible under its name.
    let reducer_params: String = plan
        .vars
        .iter()
        .enumerate()
        .map(|(k, v)| format!(", {}", reducer_param(k, v)))
        .collect();
    s.push_str(&format!(
        "static inline void clr_body(const {idx} i, const {idx} n{reducer_params}{user_params}) {{\n"
    ));
    for (k, (name, v)) in names.iter().zip(&plan.vars).enumerate() {
        s.push_str(&reducer_macros(k, v, name));
    }
    let nd_multi = plan.shape.rank > 1 && matches!(plan.form, FormRequest::NdRange { .. });
    if nd_multi {
        // The body sees the user's dimensions (kernels/item.cl maps the 1-D launch).
        for (f, to) in ND_IDS {
            s.push_str(&format!("#define {f} {to}\n"));
        }
    }
    s.push_str("{\n");
    if mentions(body, "item") {
        s.push_str("const clr_item item = clr_make_item((ulong)i, (ulong)n);\n");
    }
    let body_first_line = s.lines().count() + 1;
    s.push_str(body);
    if !body.ends_with('\n') {
        s.push('\n');
    }
    s.push_str("}\n");
    if nd_multi {
        for (f, _) in ND_IDS {
            let name = &f[..f.find('(').unwrap_or(f.len())];
            s.push_str(&format!("#undef {name}\n"));
        }
    }
    for (name, v) in names.iter().zip(&plan.vars) {
        if v.span.is_none() && v.shape == AccShape::Plain {
            s.push_str(&format!("#undef {name}\n"));
        }
        s.push_str(&format!("#undef {name}_combine\n"));
    }
    s.push_str("}\n");
    s.push_str(&kernel_source("reduce.cl", REDUCE_CL));
    Generated {
        source: s,
        options: options(plan, caps),
        body_first_line,
        body_lines: body.lines().count().max(1),
    }
}

/// Rewrites `file:LINE:COL` locations inside the body to `body:LINE:COL`, so a build log points
/// at the user's own lines. Returns the mapped log and whether any location fell in the body.
pub(crate) fn map_log(log: &str, first: usize, lines: usize) -> (String, bool) {
    let mut hit = false;
    let mapped = log
        .lines()
        .map(|l| {
            // Find the first ":<digits>:" and map it when inside the body.
            let bytes = l.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b':' {
                    let start = i + 1;
                    let mut j = start;
                    while j < bytes.len() && bytes[j].is_ascii_digit() {
                        j += 1;
                    }
                    if j > start && j < bytes.len() && bytes[j] == b':' {
                        if let Ok(n) = l[start..j].parse::<usize>() {
                            if n >= first && n < first + lines {
                                hit = true;
                                let prefix_end = l[..i]
                                    .rfind(|c: char| c.is_whitespace())
                                    .map(|p| p + 1)
                                    .unwrap_or(0);
                                return format!(
                                    "{}body:{}{}",
                                    &l[..prefix_end],
                                    n - first + 1,
                                    &l[j..]
                                );
                            }
                        }
                        break;
                    }
                }
                i += 1;
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    (mapped, hit)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn log_lines_map_to_the_body() {
        let (m, hit) = map_log(
            "<source>:120:5: error: use of undeclared identifier 'y'\nother",
            118,
            3,
        );
        assert!(hit);
        assert!(m.starts_with("body:3:5: error"), "{m}");
        let (_, hit) = map_log("<source>:10:5: error: x", 118, 3);
        assert!(!hit);
    }
}
