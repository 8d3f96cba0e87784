//! Probe kernels: every capability a driver advertises must compile a tiny kernel that uses it
//! before a plan relies on it; what does not compile is removed and noted in
//! `DeviceCaps::removed`.

use super::build::build_cached;
use crate::caps::{ClStd, DeviceCaps};
use crate::error::{Error, Result};
use opencl3::context::Context;
use opencl3::types::cl_device_id;

/// One advertised capability and the tiny kernel that must compile for it to be trusted.
struct Probe {
    name: &'static str,
    std: ClStd,
    source: String,
    remove: fn(&mut DeviceCaps),
}

/// Every advertised capability with its probe kernel.
fn probes(c: &DeviceCaps) -> Vec<Probe> {
    let mut v = Vec::new();
    atomic_probes(c, &mut v);
    float_atomic_probes(c, &mut v);
    group_probes(c, &mut v);
    nvidia_and_fp64_probes(c, &mut v);
    v
}

/// 64-bit integer atomics and OpenCL C 2.0 acquire/release atomics.
fn atomic_probes(c: &DeviceCaps, v: &mut Vec<Probe>) {
    let a = &c.atomics;
    if a.int64_base {
        v.push(Probe {
            name: "int64 base atomics (cl_khr_int64_base_atomics)",
            std: ClStd::Cl12,
            source: "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\
                     __kernel void p_i64b(__global long* g) { __local long l; l = 0; barrier(CLK_LOCAL_MEM_FENCE); atom_add(&l, 1L); atom_add(g, l); }\n".into(),
            remove: |c| {
                c.atomics.int64_base = false;
                c.atomics.int64_ext = false;
            },
        });
    }
    if a.int64_ext {
        v.push(Probe {
            name: "int64 extended atomics (cl_khr_int64_extended_atomics)",
            std: ClStd::Cl12,
            source:
                "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n\
                     __kernel void p_i64e(__global long* g) { atom_min(g, 1L); atom_xor(g, 2L); }\n"
                    .into(),
            remove: |c| c.atomics.int64_ext = false,
        });
    }
    if c.c11_atomics() {
        v.push(Probe {
            name: "OpenCL C 2.0 atomics with acq_rel order at device scope",
            std: c.cl_std(),
            source: "__kernel void p_c11(__global uint* g) {\n\
                     atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);\n\
                     uint o = atomic_fetch_add_explicit((volatile __global atomic_uint*)g, 1u, memory_order_acq_rel, memory_scope_device);\n\
                     atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire, memory_scope_device);\n\
                     g[1] = o; }\n".into(),
            remove: |c| {
                c.atomics.order_acq_rel = false;
                c.atomics.scope_device = false;
            },
        });
    }
}

/// Float atomics (cl_ext_float_atomics), per type, space and op.
fn float_atomic_probes(c: &DeviceCaps, v: &mut Vec<Probe>) {
    let a = &c.atomics;
    let fa = |t: &str, space: &str, f: &str| -> String {
        let (decl, ptr) = if space == "local" {
            (
                format!("__local {t} l; l = 0; barrier(CLK_LOCAL_MEM_FENCE);"),
                "&l".to_string(),
            )
        } else {
            (String::new(), "g".to_string())
        };
        let pragma = if t == "double" {
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        } else {
            ""
        };
        format!(
            "{pragma}__kernel void p(__global {t}* g) {{ {decl} {f}((volatile __{space} atomic_{t}*){ptr}, ({t})1, memory_order_relaxed, memory_scope_work_group); }}\n"
        )
    };
    /// (name, advertised, type, address space, atomic function, how to remove it)
    type FloatProbe = (
        &'static str,
        bool,
        &'static str,
        &'static str,
        &'static str,
        fn(&mut DeviceCaps),
    );
    let float_probes: [FloatProbe; 8] = [
        (
            "fp32 global atomic add",
            a.f32_global_add,
            "float",
            "global",
            "atomic_fetch_add_explicit",
            |c| c.atomics.f32_global_add = false,
        ),
        (
            "fp32 local atomic add",
            a.f32_local_add,
            "float",
            "local",
            "atomic_fetch_add_explicit",
            |c| c.atomics.f32_local_add = false,
        ),
        (
            "fp32 global atomic min/max",
            a.f32_global_minmax,
            "float",
            "global",
            "atomic_fetch_min_explicit",
            |c| c.atomics.f32_global_minmax = false,
        ),
        (
            "fp32 local atomic min/max",
            a.f32_local_minmax,
            "float",
            "local",
            "atomic_fetch_max_explicit",
            |c| c.atomics.f32_local_minmax = false,
        ),
        (
            "fp64 global atomic add",
            a.f64_global_add,
            "double",
            "global",
            "atomic_fetch_add_explicit",
            |c| c.atomics.f64_global_add = false,
        ),
        (
            "fp64 local atomic add",
            a.f64_local_add,
            "double",
            "local",
            "atomic_fetch_add_explicit",
            |c| c.atomics.f64_local_add = false,
        ),
        (
            "fp64 global atomic min/max",
            a.f64_global_minmax,
            "double",
            "global",
            "atomic_fetch_min_explicit",
            |c| c.atomics.f64_global_minmax = false,
        ),
        (
            "fp64 local atomic min/max",
            a.f64_local_minmax,
            "double",
            "local",
            "atomic_fetch_max_explicit",
            |c| c.atomics.f64_local_minmax = false,
        ),
    ];
    for (name, on, t, space, f, remove) in float_probes {
        if on {
            v.push(Probe {
                name,
                std: c.cl_std().max(ClStd::Cl20),
                source: fa(t, space, f),
                remove,
            });
        }
    }
}

/// Work-group collectives and sub-groups.
fn group_probes(c: &DeviceCaps, v: &mut Vec<Probe>) {
    if c.work_group_collectives {
        v.push(Probe {
            name: "work-group collective functions",
            std: c.cl_std().max(ClStd::Cl20),
            source: "__kernel void p_wg(__global int* g) { int x = work_group_reduce_add(g[get_local_id(0)]); \
                     x += work_group_reduce_min(x) + work_group_reduce_max(x) + work_group_all(x != 0) + work_group_any(x != 0); g[0] = x; }\n".into(),
            remove: |c| c.work_group_collectives = false,
        });
    }
    if let Some(sg) = &c.sub_groups {
        let pragma = if c.has_extension("cl_khr_subgroups") {
            "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n"
        } else {
            ""
        };
        v.push(Probe {
            name: "sub-groups",
            std: c.cl_std().max(ClStd::Cl20),
            source: format!(
                "{pragma}__kernel void p_sg(__global int* g) {{ int x = sub_group_reduce_add(g[get_local_id(0)]); \
                 x += sub_group_reduce_min(x) + sub_group_reduce_max(x); \
                 g[get_sub_group_id()] = x + (int)get_num_sub_groups() + (int)get_sub_group_local_id() + (int)get_sub_group_size(); }}\n"
            ),
            remove: |c| c.sub_groups = None,
        });
        if sg.non_uniform_arithmetic {
            v.push(Probe {
                name: "sub-group non-uniform arithmetic (cl_khr_subgroup_non_uniform_arithmetic)",
                std: c.cl_std().max(ClStd::Cl20),
                source: format!(
                    "{pragma}#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable\n\
                     __kernel void p_sgn(__global int* g) {{ int x = g[get_local_id(0)]; \
                     g[0] = sub_group_non_uniform_reduce_mul(x) + sub_group_non_uniform_reduce_and(x) + sub_group_non_uniform_reduce_or(x) \
                     + sub_group_non_uniform_reduce_xor(x) + sub_group_non_uniform_reduce_logical_and(x) + sub_group_non_uniform_reduce_logical_or(x); }}\n"
                ),
                remove: |c| {
                    if let Some(s) = &mut c.sub_groups {
                        s.non_uniform_arithmetic = false
                    }
                },
            });
        }
    }
}

/// NVIDIA's inline PTX (shuffles, acquire/release) and double precision.
fn nvidia_and_fp64_probes(c: &DeviceCaps, v: &mut Vec<Probe>) {
    if c.warp_shuffle_ptx {
        v.push(Probe {
            name: "warp shuffles through inline PTX (shfl.sync)",
            std: ClStd::Cl12,
            source: "__kernel void p_ptx(__global uint* g) { uint v = g[get_local_id(0)], r; \
                     asm volatile(\"shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;\" : \"=r\"(r) : \"r\"(v), \"r\"(1u)); g[0] = r; }\n"
                .into(),
            remove: |c| c.warp_shuffle_ptx = false,
        });
    }
    if c.acq_rel_ptx {
        v.push(Probe {
            name: "acquire/release through inline PTX (atom.acq_rel.gpu, fence.acq_rel.gpu)",
            std: ClStd::Cl12,
            source: "__kernel void p_acq(__global uint* g) { uint prev; \
                     asm volatile(\"atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\" : \"=r\"(prev) : \"l\"(g) : \"memory\"); \
                     asm volatile(\"fence.acq_rel.gpu;\" ::: \"memory\"); g[1] = prev; }\n"
                .into(),
            remove: |c| c.acq_rel_ptx = false,
        });
    }
    if c.fp64 {
        v.push(Probe {
            name: "double precision (cl_khr_fp64)",
            std: ClStd::Cl12,
            source: "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n__kernel void p_f64(__global double* g) { g[0] = g[1] * 2.0 + 1.0; }\n".into(),
            remove: |c| c.fp64 = false,
        });
    }
}

/// Compiles a probe kernel for every advertised capability; a capability whose probe does not
/// compile is removed and noted in `removed` with the first line of the build log.
pub(super) fn probe(
    ctx: &Context,
    id: cl_device_id,
    label: &str,
    identity: Option<&str>,
    mut caps: DeviceCaps,
) -> Result<DeviceCaps> {
    // Through the disk cache as well: a probe that compiled once on this driver compiles.
    let build = |src: &str, options: &str| {
        build_cached(id, label, identity, ctx, src, options).map(|b| b.0)
    };
    // Preferred work-group multiple from a trivial kernel where the device query was missing.
    let plain = "__kernel void p_plain(__global int* g) { g[get_global_id(0)] += 1; }\n";
    let program = build(plain, ClStd::Cl12.option())?;
    if caps.preferred_wg_multiple <= 1 {
        if let Ok(k) = opencl3::kernel::Kernel::create(&program, "p_plain") {
            if let Ok(m) = k.get_work_group_size_multiple(id) {
                caps.preferred_wg_multiple = m.max(1);
            }
        }
    }
    let list: Vec<(Probe, String)> = probes(&caps)
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let src = p
                .source
                .replace("__kernel void p", &format!("__kernel void q{i}_p"));
            (p, src)
        })
        .collect();
    if list.is_empty() {
        return Ok(caps);
    }
    // Usually everything advertised compiles: one build checks all of it.
    let std = list.iter().map(|(p, _)| p.std).max().unwrap_or(ClStd::Cl12);
    let all: String = list.iter().map(|(_, s)| s.as_str()).collect();
    if build(&all, std.option()).is_ok() {
        return Ok(caps);
    }
    for (p, src) in list {
        if let Err(err) = build(&src, p.std.option()) {
            let first = match &err {
                Error::Build { log, .. } => log
                    .lines()
                    .find(|l| l.contains("error"))
                    .unwrap_or("")
                    .trim()
                    .to_string(),
                other => other.to_string(),
            };
            (p.remove)(&mut caps);
            caps.removed.push(format!(
                "{}: advertised, but its probe kernel does not compile ({first})",
                p.name
            ));
        }
    }
    tracing::debug!(device = %label, removed = ?caps.removed, "capabilities probed");
    Ok(caps)
}
