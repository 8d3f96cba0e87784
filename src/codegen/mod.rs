//! Code generation: turns a [`Plan`] and a user body into OpenCL C source plus `-D` build
//! options. The kernels themselves live in `kernels/*.cl` (embedded with `include_str!`); this
//! room writes the defines (`options.rs`), the per-variable inclusion, the generated glue and
//! the user body wrapper (here), reads names in the body (`names.rs`), turns reads of f16 and
//! bf16 buffers into loads (`loads.rs`) and maps build logs back to the body (`log.rs`). It imports `plan`, `caps`, `ops` and `types`, never the runtime.

mod loads;
mod log;
pub(crate) mod names;
mod options;
mod segment;

pub(crate) use loads::{reads_at_i, rewrite_loads};
pub(crate) use log::map_log;
pub(crate) use names::mentions;
pub(crate) use options::options;

use crate::caps::DeviceCaps;
use crate::ops::Operator;
use crate::plan::{
    AccShape, CrossAlgo, ExactFormat, Expansion, FormRequest, GroupAlgo, Plan, SaccStore,
    SpanStore, VarPlan,
};
use crate::types::ElemType;

pub(crate) const COMMON_CL: &str = include_str!("../../kernels/common.cl");
pub(crate) const VAR_CL: &str = include_str!("../../kernels/var.cl");
pub(crate) const REDUCE_CL: &str = include_str!("../../kernels/reduce.cl");
pub(crate) const ITEM_CL: &str = include_str!("../../kernels/item.cl");
pub(crate) const EXACT_CL: &str = include_str!("../../kernels/exact.cl");
pub(crate) const VAR_EXACT_CL: &str = include_str!("../../kernels/var_exact.cl");
/// The second half of `var_exact.cl` (the steps after the loop and the tail), appended to it.
pub(crate) const VAR_EXACT_FINISH_CL: &str = include_str!("../../kernels/var_exact_finish.cl");
/// CSR offsets checked on the device before a segmented launch (src/api/segment_check.rs).
pub(crate) const SEGMENT_CHECK_CL: &str = include_str!("../../kernels/segment_check.cl");
use segment::{
    SEGMENT_CL, SEGMENT_COLUMNS_CL, SEGMENT_CPU_CL, SEGMENT_GROUP_CL, SEGMENT_ITEM_CL,
    SEGMENT_LANES_CL, SEGMENT_MERGE_CL, SEGMENT_RUNS_CL, SEGMENT_SCAN_CL, SEGMENT_STAGED_CL,
    SEGMENT_TILES_CL, SEGMENT_WARP_CL, VAR_SEGEXACT_CL,
};
/// Every embedded kernel, for the tuning cache's fingerprint (`tune_cache::clreduce_id`): a
/// new kernel file belongs here too.
pub(crate) const KERNEL_SOURCES: [&str; 21] = [
    SEGMENT_CHECK_CL,
    VAR_SEGEXACT_CL,
    SEGMENT_CL,
    SEGMENT_ITEM_CL,
    SEGMENT_GROUP_CL,
    SEGMENT_TILES_CL,
    SEGMENT_STAGED_CL,
    SEGMENT_LANES_CL,
    SEGMENT_COLUMNS_CL,
    SEGMENT_MERGE_CL,
    SEGMENT_RUNS_CL,
    SEGMENT_WARP_CL,
    SEGMENT_SCAN_CL,
    SEGMENT_CPU_CL,
    COMMON_CL,
    VAR_CL,
    REDUCE_CL,
    ITEM_CL,
    EXACT_CL,
    VAR_EXACT_CL,
    VAR_EXACT_FINISH_CL,
];

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

/// The offsets check's program source (`CLREDUCE_KERNELS`' copy where that is set).
pub(crate) fn segment_check_source() -> String {
    kernel_source("segment_check.cl", SEGMENT_CHECK_CL).into_owned()
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

/// Whether variable `v` is an exact sum that carries its superaccumulator in every accumulator
/// (segmented launches: kernels/var_segexact.cl).
fn carried(v: &VarPlan) -> bool {
    v.exact.is_some_and(|e| e.store == SaccStore::Carried)
}

/// The accumulator type of variable `k`: its element type, or a struct generated in the source.
pub(super) fn acc_type(k: usize, v: &VarPlan) -> String {
    if carried(v) {
        return format!("clr_xs_{k}");
    }
    match (v.shape, v.exact) {
        (AccShape::Plain, _) => v.ty.cl_name().into(),
        (AccShape::Exact, Some(e)) if e.expansion == Expansion::ThreeFloat => "clr_x_e3f".into(),
        // f32 data with fp64: blocks summed in a double before the expansion (var_exact.cl),
        // except in the speculative loop.
        (AccShape::Exact, Some(e)) if e.format == ExactFormat::F32 && !e.speculative => {
            "clr_xb".into()
        }
        (AccShape::Exact, _) => "clr_x_e2d".into(),
        _ => format!("clr_acc_{k}"),
    }
}

/// How the body reaches variable `k`'s accumulator: a private scalar, or a span copy in local or
/// global memory.
fn reducer_param(k: usize, v: &VarPlan) -> String {
    let t = v.ty.cl_name();
    if carried(v) {
        // Private, as the deposits into its superaccumulator need (no generic pointer).
        return format!("__private {}* clr_r{k}", acc_type(k, v));
    }
    if v.exact.is_some() {
        // An exact sum: its expansion and the work-group's superaccumulator(s); an exact span:
        // the superaccumulators of its elements.
        return match v.span.map(|s| s.store) {
            None => format!("{}* clr_r{k}, __local long* clr_s{k}", acc_type(k, v)),
            Some(SpanStore::LocalShared) => format!("__local long* clr_r{k}"),
            Some(_) => format!("__global long* clr_r{k}"),
        };
    }
    match v.span.map(|s| s.store) {
        None => format!("{}* clr_r{k}", acc_type(k, v)),
        Some(SpanStore::LocalShared | SpanStore::LocalPrivate) => format!("__local {t}* clr_r{k}"),
        Some(SpanStore::GlobalAtomic | SpanStore::GlobalPrivate | SpanStore::GlobalCopies) => {
            format!("__global {t}* clr_r{k}")
        }
        // Planned with an exact plan (its digits are a superaccumulator): the arm above.
        Some(SpanStore::GlobalDigits) => format!("__global long* clr_r{k}"),
    }
}

/// The argument CLR_CALL passes for variable `k`.
fn reducer_arg(k: usize, v: &VarPlan) -> String {
    if carried(v) {
        return format!("&clr_a{k}[clr_cu]");
    }
    if v.exact.is_some() {
        return match v.span.map(|s| s.store) {
            None => format!("&clr_a{k}[clr_cu], clr_ls{k}"),
            Some(SpanStore::LocalShared) => format!("clr_ls{k}"),
            Some(_) => format!("clr_part_{k}"),
        };
    }
    match v.span.map(|s| s.store) {
        None => format!("&clr_a{k}[clr_cu]"),
        Some(SpanStore::LocalShared) => format!("clr_lm{k}"),
        Some(SpanStore::LocalPrivate) => format!("(clr_lm{k} + clr_lid * (size_t)R{k}_SPAN)"),
        Some(SpanStore::GlobalAtomic) => format!("clr_res_{k}"),
        Some(SpanStore::GlobalPrivate) => {
            format!("(clr_part_{k} + get_global_id(0) * (size_t)R{k}_SPAN)")
        }
        Some(SpanStore::GlobalDigits | SpanStore::GlobalCopies) => format!("clr_part_{k}"),
    }
}

/// The reducer macros the body sees for variable `k` named `name`.
fn reducer_macros(k: usize, v: &VarPlan, name: &str, try_mode: bool) -> String {
    if try_mode && carried(v) {
        // The speculative loop per segment (kernels/var_segexact.cl): the try through the
        // accumulator's pointer (its limbs are never copied).
        return format!(
            "#define {name}_combine(v) clr_xstry_{k}(clr_r{k}, clr_b{k}, (v), clr_bad)\n"
        );
    }
    if try_mode && v.exact.is_some() {
        // The speculative loop's body: the expansion's branch-free try, flagging the chunk.
        return format!(
            "#define {name}_combine(v) ((*clr_r{k}) = clr_xtry_{k}((*clr_r{k}), clr_b{k}, (v), clr_bad))\n"
        );
    }
    if v.span.is_some() {
        // Span subscripts were rewritten to NAME_combine(index, value) (see rewrite_spans).
        return format!("#define {name}_combine(e, x) clr_supd_{k}(clr_r{k}, (size_t)(e), (x))\n");
    }
    match v.shape {
        AccShape::Exact if carried(v) => {
            format!("#define {name}_combine(v) clr_xspush_{k}(clr_r{k}, (v))\n")
        }
        // The body's `sum += v` was rewritten to sum_combine((v)) (see rewrite_exact).
        AccShape::Exact => format!(
            "#define {name}_combine(v) ((*clr_r{k}) = clr_xpush_{k}((*clr_r{k}), (v), clr_xmine_{k}(clr_s{k})))\n"
        ),
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

/// Generates the full program for a plan, reducer names and user body: extensions, common.cl,
/// the accumulator types, var.cl once per variable, item.cl, the generated glue, the body
/// wrapper and reduce.cl.
pub(crate) fn generate(
    plan: &Plan,
    caps: &DeviceCaps,
    names: &[String],
    body: &str,
    params: &[(String, ParamKind)],
) -> Generated {
    let mut s = extensions(plan, caps, params);
    s.push_str(&kernel_source("common.cl", COMMON_CL));
    s.push_str(&exact_kit(plan, caps));
    s.push_str(&accumulator_types(plan));
    let var_cl = kernel_source("var.cl", VAR_CL);
    let var_exact_cl = format!(
        "{}{}",
        kernel_source("var_exact.cl", VAR_EXACT_CL),
        kernel_source("var_exact_finish.cl", VAR_EXACT_FINISH_CL)
    );
    let var_segexact_cl = kernel_source("var_segexact.cl", VAR_SEGEXACT_CL);
    for (k, v) in plan.vars.iter().enumerate() {
        s.push_str(&format!("#define CLR_V {k}\n"));
        s.push_str(if carried(v) {
            &var_segexact_cl
        } else if v.exact.is_some() {
            &var_exact_cl
        } else {
            &var_cl
        });
        s.push_str("#undef CLR_V\n");
    }
    s.push_str(&kernel_source("item.cl", ITEM_CL));
    // The vector step (Plan::vec): reads at [i] of 16-bit buffers (in the segmented item
    // plan, of every read-only buffer) become body parameters that CLR_CALL loads one at a
    // time and CLR_CALL_V several at once.
    let (body, loaded) = if plan.vec > 1 {
        let storage: Vec<(&str, ElemType, bool)> = params
            .iter()
            .filter_map(|(n, p)| match p {
                ParamKind::Buffer { ty, writable } => Some((n.as_str(), *ty, *writable)),
                _ => None,
            })
            .collect();
        loads::preload(body, &storage, plan.segment.is_some())
    } else {
        (body.to_string(), Vec::new())
    };
    let body = body.as_str();
    let user_params = user_params(caps, params);
    s.push_str(&glue(plan, params, &user_params, &loaded));
    let pre_params: String = loaded
        .iter()
        .map(|(name, ty)| {
            format!(
                ", const {} {}",
                loads::preloaded_type(*ty),
                loads::preloaded_name(name)
            )
        })
        .collect();
    let user_params = format!("{user_params}{pre_params}");
    let body_first_line = push_body(&mut s, plan, names, body, &user_params, false);
    if options::speculative(plan) {
        push_body(&mut s, plan, names, body, &user_params, true);
    }
    match &plan.segment {
        Some(sp) => {
            s.push_str(&segment::glue(plan, sp));
            s.push_str(&kernel_source("segment.cl", SEGMENT_CL));
            let (name, text) = segment::plan_source(sp.algo);
            s.push_str(&kernel_source(name, text));
            if sp.algo == crate::plan::SegmentAlgo::Runs && sp.wscan {
                s.push_str(&kernel_source("segment_scan.cl", SEGMENT_SCAN_CL));
            } else if sp.algo == crate::plan::SegmentAlgo::Runs && sp.warp > 0 {
                s.push_str(&kernel_source("segment_warp.cl", SEGMENT_WARP_CL));
            }
        }
        None => s.push_str(&kernel_source("reduce.cl", REDUCE_CL)),
    }
    Generated {
        source: s,
        options: options(plan, caps),
        body_first_line,
        body_lines: body.lines().count().max(1),
    }
}

/// The `#pragma OPENCL EXTENSION` lines the program needs.
fn extensions(plan: &Plan, caps: &DeviceCaps, params: &[(String, ParamKind)]) -> String {
    let mut s = String::new();
    let any_ty = |t: ElemType| {
        plan.vars.iter().any(|v| v.ty == t)
            || params.iter().any(|(_, p)| {
                matches!(p, ParamKind::Buffer { ty, .. } | ParamKind::Scalar { ty } if *ty == t)
            })
    };
    if any_ty(ElemType::F64) && caps.has_extension("cl_khr_fp64") {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    if any_ty(ElemType::F16) && caps.has_extension("cl_khr_fp16") {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
    }
    let exact = plan.vars.iter().filter_map(|v| v.exact);
    if exact.clone().any(|e| e.expansion == Expansion::TwoDouble)
        && !any_ty(ElemType::F64)
        && caps.has_extension("cl_khr_fp64")
    {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    let int64_atomics = exact.clone().next().is_some()
        || plan.vars.iter().any(|v| {
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
    s
}

/// kernels/exact.cl, once per result format the plan's exact sums use, with its switches: the
/// double expansions where the device has fp64, the atomic flavors where it has 64-bit atomics.
fn exact_kit(plan: &Plan, caps: &DeviceCaps) -> String {
    let formats: Vec<ExactFormat> = [ExactFormat::F32, ExactFormat::F64]
        .into_iter()
        .filter(|f| {
            plan.vars
                .iter()
                .any(|v| v.exact.is_some_and(|e| e.format == *f))
        })
        .collect();
    if formats.is_empty() {
        return String::new();
    }
    let kit = kernel_source("exact.cl", EXACT_CL);
    let mut s = format!(
        "#define CLR_X_FP64 {}\n#define CLR_X_I64A {}\n",
        caps.fp64 as u8, caps.atomics.int64_base as u8
    );
    for f in formats {
        let bits = match f {
            ExactFormat::F32 => 32,
            ExactFormat::F64 => 64,
        };
        s.push_str(&format!("#define CLR_X_F {bits}\n"));
        s.push_str(&kit);
        s.push_str("#undef CLR_X_F\n");
    }
    s
}

/// The structs of identity-less and (value, index) accumulators, the pad flag, and the macro of
/// a custom combiner, per variable.
fn accumulator_types(plan: &Plan) -> String {
    let mut s = String::new();
    for (k, v) in plan.vars.iter().enumerate() {
        let t = v.ty.cl_name();
        // No implicit padding (the flag is as wide as the value; a 4-byte value before a ulong
        // index gets an explicit pad, Rk_PAD), so copies of an accumulator never carry
        // uninitialised bytes (Oclgrind checks).
        let pad = v.shape == AccShape::Pair && !v.ty.is_64bit();
        match (v.shape, v.exact) {
            // A segmented exact sum: its expansion, the state word of its lazy limbs (0:
            // untouched, else a bound on their contributions; kernels/var_segexact.cl) and its
            // superaccumulator.
            (AccShape::Exact, Some(e)) if carried(v) => s.push_str(&format!(
                "typedef struct {{ {} long l[{}]; }} clr_xs_{k};\n",
                if e.expansion == Expansion::TwoDouble {
                    "clr_x_e2d e; ulong t;"
                } else {
                    "clr_x_e3f e; uint t;"
                },
                e.limbs()
            )),
            (AccShape::Plain | AccShape::Exact, _) => {}
            (AccShape::Flagged, _) => s.push_str(&format!(
                "typedef struct {{ {t} v; {} has; }} clr_acc_{k};\n",
                if v.ty.is_64bit() { "ulong" } else { "uint" }
            )),
            (AccShape::Pair, _) if pad => s.push_str(&format!(
                "typedef struct {{ {t} v; uint pad; ulong i; }} clr_acc_{k};\n"
            )),
            (AccShape::Pair, _) => s.push_str(&format!(
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
    s
}

/// The user's parameters as the kernel signature declares them, each preceded by a comma.
fn user_params(caps: &DeviceCaps, params: &[(String, ParamKind)]) -> String {
    let restrict = if caps.workarounds.no_restrict {
        ""
    } else {
        "restrict "
    };
    params
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
        .collect()
}

/// The generated macros kernels/reduce.cl expects: CLR_FOR_VARS, CLR_VAR_PARAMS,
/// CLR_USER_PARAMS and CLR_CALL, and with `Plan::vec` > 1 CLR_CALL_V (`loaded`: the buffers
/// whose reads at [i] the body takes as parameters, with their one-element load macros).
fn glue(
    plan: &Plan,
    params: &[(String, ParamKind)],
    user_params: &str,
    loaded: &[(String, ElemType)],
) -> String {
    let mut s = String::new();
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
                // An exact sum's partials are its superaccumulators.
                a = if v.exact.is_some() && !carried(v) { "long".to_string() } else { acc_type(k, v) }
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
    let one: String = loaded
        .iter()
        .map(|(name, ty)| format!(", {}", loads::load_one(name, *ty, "clr_ci")))
        .collect();
    s.push_str(&format!(
        "#define CLR_CALL(clr_ci, clr_cu) clr_body((clr_ci), clr_n{accs}{user_args}{one})\n"
    ));
    if plan.vec > 1 {
        s.push_str(&vec_glue(
            plan.vec,
            &accs,
            &user_args,
            loaded,
            plan.segment.is_some(),
        ));
    }
    if options::speculative(plan) {
        s.push_str(&spec_glue(plan, &user_args));
    }
    s
}

/// CLR_CALL_V(ci, cu): the body for the `w` consecutive indices ci..ci+w-1 (ci a multiple of
/// `w`), into accumulator cu, in index order; each preloaded buffer's `w` elements come from
/// one load (`clr_vld_f16` / `clr_vld_bf16`, kernels/common.cl; one aligned vector load of the
/// other types, src/codegen/loads.rs).
fn vec_glue(
    w: usize,
    accs: &str,
    user_args: &str,
    loaded: &[(String, ElemType)],
    hooks: bool,
) -> String {
    let mut s =
        String::from("#define CLR_CALL_V(clr_ci, clr_cu) { const CLR_IDX clr_vi = (clr_ci);");
    for (name, ty) in loaded {
        s.push(' ');
        s.push_str(&loads::load_vector(name, *ty, w, "clr_vi"));
    }
    let head = s.replace(
        "CLR_CALL_V(clr_ci, clr_cu)",
        "CLR_CALL_VH(clr_ci, clr_cu, H)",
    );
    let mut hooked = head;
    for lane in 0..w {
        let pre: String = loaded
            .iter()
            .map(|(name, _)| format!(", clr_vx_{name}.s{lane}"))
            .collect();
        let call = format!(" clr_body(clr_vi + {lane}, clr_n{accs}{user_args}{pre});");
        s.push_str(&call);
        hooked.push_str(&format!(" H({lane}){call}"));
    }
    s.push_str(" }\n");
    hooked.push_str(" }\n");
    // Segmented plans also get CLR_CALL_VH(ci, cu, H): the same, running H(lane) before each
    // lane's body (the runs plan's segment starts).
    if hooks {
        s.push_str(&hooked);
        s.push_str(&prefetch_glue(w, accs, user_args, loaded));
    }
    s
}

/// The runs plan's loads ahead of their use (decision 65): CLR_VPDECL(P) declares a register
/// per preloaded buffer (`P##_NAME`), CLR_VPLOAD(P, ci) fills them with the `w` elements from
/// `ci` (one aligned load each), CLR_CALL_VP(P, ci, cu, H) runs the body on them as
/// CLR_CALL_VH does on its own loads.
fn prefetch_glue(w: usize, accs: &str, user_args: &str, loaded: &[(String, ElemType)]) -> String {
    let mut decl = String::from("#define CLR_VPDECL(P)");
    let mut load = String::from("#define CLR_VPLOAD(P, clr_ci)");
    for (name, ty) in loaded {
        let v = loads::load_vector(name, *ty, w, "(clr_ci)");
        // "const T clr_vx_NAME = LOAD;" -> the type, and the load.
        let (lhs, rhs) = v.split_once(" = ").expect("a declaration");
        let t = lhs
            .trim_start_matches("const ")
            .trim_end_matches(&format!(" clr_vx_{name}"));
        decl.push_str(&format!(" {t} P##_{name};"));
        load.push_str(&format!(" P##_{name} = {rhs}"));
    }
    let mut call = String::from(
        "#define CLR_CALL_VP(P, clr_ci, clr_cu, H) { const CLR_IDX clr_vi = (clr_ci);",
    );
    for lane in 0..w {
        let pre: String = loaded
            .iter()
            .map(|(name, _)| format!(", P##_{name}.s{lane}"))
            .collect();
        call.push_str(&format!(
            " H({lane}) clr_body(clr_vi + {lane}, clr_n{accs}{user_args}{pre});"
        ));
    }
    format!("{decl}\n{load}\n{call} }}\n")
}

/// The speculative loop's macros (kernels/reduce.cl CLR_SPEC): CLR_FOR_SPEC lists the exact
/// variables (saved before a chunk, restored for its redo, renormalized after it); CLR_CALL_TRY
/// calls `clr_body_try` (exact sums through the branch-free try, flagging `clr_bad`, the other
/// variables as usual); CLR_CALL_REDO runs the body exactly for the exact sums, the other
/// variables into CLR_REDO_DECL's throwaway accumulators (the try already counted them).
fn spec_glue(plan: &Plan, user_args: &str) -> String {
    let exact: Vec<usize> = (0..plan.vars.len())
        .filter(|&k| plan.vars[k].exact.is_some())
        .collect();
    let fors: String = exact.iter().map(|k| format!(" X({k})")).collect();
    let mut s = format!("#define CLR_FOR_SPEC(X){fors}\n");
    // CLR_SPEC_ONE 1 (Plan::spec_one; a -D through CLREDUCE_EXTRA_OPTIONS overrides it): the
    // other scalar variables take every unrolled step into their first accumulator (fewer
    // registers beside the exact sum's).
    s.push_str(&format!(
        "#ifndef CLR_SPEC_ONE\n#define CLR_SPEC_ONE {}\n#endif\n",
        plan.spec_one as u8
    ));
    let accs: String = plan
        .vars
        .iter()
        .enumerate()
        .map(|(k, v)| match v.exact {
            Some(_) => format!(", &clr_a{k}[clr_cu], &clr_xbs{k}[clr_xnbs_{k} > 1 ? clr_cu : 0]"),
            None if v.span.is_none() => format!(", &clr_a{k}[CLR_SPEC_ONE ? 0 : clr_cu]"),
            None => format!(", {}", reducer_arg(k, v)),
        })
        .collect();
    s.push_str(&format!(
        "#define CLR_CALL_TRY(clr_ci, clr_cu) clr_body_try((clr_ci), clr_n{accs}, &clr_bad{user_args})\n"
    ));
    // The hot f32 loop redoes into accumulator 0 (clr_xone_k, kernels/var_exact.cl).
    let redo: String = plan
        .vars
        .iter()
        .enumerate()
        .map(|(k, v)| match v.exact {
            Some(_) => format!(", &clr_a{k}[clr_xone_{k} ? 0 : clr_cu], clr_ls{k}"),
            None => format!(", &clr_t{k}"),
        })
        .collect();
    let decl: String = plan
        .vars
        .iter()
        .enumerate()
        .filter(|(_, v)| v.exact.is_none())
        .map(|(k, _)| format!(" R{k}_A clr_t{k} = clr_identity_{k}();"))
        .collect();
    s.push_str(&format!("#define CLR_REDO_DECL{decl}\n"));
    s.push_str(&format!(
        "#define CLR_CALL_REDO(clr_ci, clr_cu) clr_body((clr_ci), clr_n{redo}{user_args})\n"
    ));
    s
}

/// The body in a block of its own, after `item` where the body uses it. Returns the source
/// line where the body starts.
fn push_body_block(s: &mut String, body: &str) -> usize {
    s.push_str("{\n");
    if mentions(body, "item") {
        s.push_str("const clr_item item = clr_make_item((ulong)i, (ulong)n);\n");
    }
    let first_line = s.lines().count() + 1;
    s.push_str(body);
    if !body.ends_with('\n') {
        s.push('\n');
    }
    s.push_str("}\n");
    first_line
}

/// The user body inside `clr_body`, with each reducer visible under its name (and, for a
/// multi-dimensional nd_range, OpenCL's id functions in the user's dimensions). Returns the
/// source line where the body starts. `try_mode`: the body once more as `clr_body_try` for the
/// speculative loop, its exact sums through the branch-free try flagging `clr_bad`.
fn push_body(
    s: &mut String,
    plan: &Plan,
    names: &[String],
    body: &str,
    user_params: &str,
    try_mode: bool,
) -> usize {
    let idx = if plan.wide_index { "ulong" } else { "uint" };
    let reducer_params: String = plan
        .vars
        .iter()
        .enumerate()
        .map(|(k, v)| match v.exact {
            // The speculative body's exact sum: its expansion and the step's block state.
            Some(_) if try_mode => format!(
                ", {}{}* clr_r{k}, __private clr_xbs_t_{k}* clr_b{k}",
                if carried(v) { "__private " } else { "" },
                acc_type(k, v)
            ),
            _ => format!(", {}", reducer_param(k, v)),
        })
        .collect();
    // With an exact sum the body is forced inline, as every function of kernels/exact.cl is:
    // PoCL's LLVM 15 crashes in the inliner's cost analysis (llvm::getInlineCost) on a call of
    // the body that pushes into an expansion; forced inlining skips that analysis.
    let inline = if plan.vars.iter().any(|v| v.exact.is_some()) {
        "static inline __attribute__((always_inline))"
    } else {
        "static inline"
    };
    let (fname, bad) = if try_mode {
        ("clr_body_try", ", __private uint* clr_bad")
    } else {
        ("clr_body", "")
    };
    s.push_str(&format!(
        "{inline} void {fname}(const {idx} i, const {idx} n{reducer_params}{bad}{user_params}) {{\n"
    ));
    for (k, (name, v)) in names.iter().zip(&plan.vars).enumerate() {
        s.push_str(&reducer_macros(k, v, name, try_mode));
    }
    let nd_multi = plan.shape.rank > 1 && matches!(plan.form, FormRequest::NdRange { .. });
    if nd_multi {
        // The body sees the user's dimensions (kernels/item.cl maps the 1-D launch).
        for (f, to) in ND_IDS {
            s.push_str(&format!("#define {f} {to}\n"));
        }
    }
    let body_first_line = push_body_block(s, body);
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
    body_first_line
}
