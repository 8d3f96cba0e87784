//! Hand-built capability sets of real devices, for planning tests without a device. Each is
//! written from the device's documented or `clinfo`-reported capabilities.

use super::*;
fn base(name: &str, platform: &str, kind: DeviceKind) -> DeviceCaps {
    DeviceCaps {
        platform: platform.into(),
        name: name.into(),
        vendor: String::new(),
        vendor_id: 0,
        driver: "fixture".into(),
        kind,
        opencl_version: (3, 0),
        opencl_c_version: (1, 2),
        opencl_c_features: vec![],
        extensions: vec![],
        compute_units: 1,
        max_work_group_size: 1024,
        max_work_item_sizes: vec![1024, 1024, 1024],
        local_mem_size: 32 * 1024,
        global_mem_size: 1 << 30,
        max_alloc: 1 << 28,
        preferred_wg_multiple: 1,
        sub_groups: None,
        work_group_collectives: false,
        warp_shuffle_ptx: false,
        acq_rel_ptx: false,
        fp64: true,
        fp16: false,
        atomics: AtomicCaps {
            int32_global_base: true,
            int32_global_ext: true,
            int32_local_base: true,
            int32_local_ext: true,
            int64_base: true,
            int64_ext: true,
            ..Default::default()
        },
        removed: vec![],
        workarounds: Workarounds::default(),
        narrow_vec: if kind == DeviceKind::Gpu { 2 } else { 1 },
    }
}

/// Debian's PoCL 3.1 on a 2-core x86 CPU: int32/int64 atomics, no float atomics, no
/// collectives, no sub-groups; OpenCL C 1.2 with 3.0 atomic features.
pub fn pocl_cpu() -> DeviceCaps {
    let mut c = base(
        "pthread-haswell-AMD EPYC",
        "Portable Computing Language",
        DeviceKind::Cpu,
    );
    c.vendor_id = 0x6c636f70;
    c.compute_units = 2;
    c.max_work_group_size = 4096;
    c.max_work_item_sizes = vec![4096, 4096, 4096];
    c.local_mem_size = 512 * 1024;
    c.preferred_wg_multiple = 8;
    c.opencl_c_version = (3, 0);
    c.atomics.order_acq_rel = true;
    c.atomics.scope_device = true;
    c.workarounds.serial_last_group_tree = true;
    c
}

/// Intel's CPU OpenCL runtime 2026 (OpenCL 3.1): collectives, sub-groups 4..64, float atomics.
pub fn intel_cpu() -> DeviceCaps {
    let mut c = base("AMD EPYC", "Intel(R) OpenCL", DeviceKind::Cpu);
    c.vendor_id = 0x8086;
    c.compute_units = 2;
    c.max_work_group_size = 8192;
    c.max_work_item_sizes = vec![8192, 8192, 8192];
    c.local_mem_size = 256 * 1024;
    c.preferred_wg_multiple = 128;
    c.opencl_c_version = (3, 0);
    c.work_group_collectives = true;
    c.sub_groups = Some(SubGroupCaps {
        sizes: vec![4, 8, 16, 32, 64],
        max_sub_groups: 2048,
        non_uniform_arithmetic: true,
    });
    c.fp16 = true;
    c.atomics.f32_global_add = true;
    c.atomics.f32_local_add = true;
    c.atomics.f32_global_minmax = true;
    c.atomics.f32_local_minmax = true;
    c.atomics.f64_global_add = true;
    c.atomics.f64_local_add = true;
    c.atomics.f64_global_minmax = true;
    c.atomics.f64_local_minmax = true;
    c.atomics.order_acq_rel = true;
    c.atomics.scope_device = true;
    c
}

/// Oclgrind 21.10: OpenCL 1.2 simulator, int32/int64 atomics only, one compute unit.
pub fn oclgrind() -> DeviceCaps {
    // Oclgrind reports CL_DEVICE_TYPE = ACCELERATOR | GPU | CPU | DEFAULT; GPU wins in translate.
    let mut c = base("Oclgrind Simulator", "Oclgrind", DeviceKind::Gpu);
    c.opencl_version = (1, 2);
    c.max_work_group_size = 1024;
    c.local_mem_size = 32 * 1024;
    c.max_alloc = 128 << 20;
    c.workarounds.no_restrict = true;
    c.workarounds.serialize_device = true;
    c
}

/// NVIDIA H200 through NVIDIA's OpenCL 3.0: int32/int64 atomics; no float atomics, no
/// sub-groups, no collectives; 132 SMs, 48 KiB local memory per work-group, warps of 32.
pub fn nvidia_h200() -> DeviceCaps {
    let mut c = base("NVIDIA H200", "NVIDIA CUDA", DeviceKind::Gpu);
    c.vendor_id = 0x10de;
    c.compute_units = 132;
    c.max_work_group_size = 1024;
    c.max_work_item_sizes = vec![1024, 1024, 64];
    c.local_mem_size = 48 * 1024;
    c.global_mem_size = 143 << 30;
    c.max_alloc = 35 << 30;
    c.preferred_wg_multiple = 32;
    c.opencl_c_version = (3, 0);
    c.warp_shuffle_ptx = true;
    // As the driver reports (`clreduce devices` on the H200, driver 580.159.04): no
    // OpenCL C 2.0 acquire/release; PTX acquire/release instead.
    c.acq_rel_ptx = true;
    c.atomics.order_acq_rel = false;
    c.atomics.scope_device = false;
    // How results come back (design/decisions.md section 49).
    c.workarounds.spin_poll_read = true;
    c.workarounds.pinned_reads = true;
    c.workarounds.flush_long_launches = true;
    c.workarounds.host_mailbox = true;
    c
}

/// An AMD Instinct/Radeon GPU through ROCm OpenCL 2.x as AMD documents it: 64-wide
/// wavefronts, OpenCL 2.0 work-group collectives, int32/int64 atomics, no float atomics
/// advertised through cl_ext_float_atomics, sub-groups through cl_khr_subgroups.
pub fn amd_gpu() -> DeviceCaps {
    let mut c = base(
        "gfx90a",
        "AMD Accelerated Parallel Processing",
        DeviceKind::Gpu,
    );
    c.vendor_id = 0x1002;
    c.opencl_version = (2, 0);
    c.opencl_c_version = (2, 0);
    c.compute_units = 104;
    c.max_work_group_size = 256;
    c.max_work_item_sizes = vec![1024, 1024, 1024];
    c.local_mem_size = 64 * 1024;
    c.global_mem_size = 64 << 30;
    c.preferred_wg_multiple = 64;
    c.work_group_collectives = true;
    c.sub_groups = Some(SubGroupCaps {
        sizes: vec![64],
        max_sub_groups: 16,
        non_uniform_arithmetic: false,
    });
    c.atomics.order_acq_rel = true;
    c.atomics.scope_device = true;
    c
}

/// PoCL 6/7 on the GPU machine's 16-core CPU: sub-groups and float atomics, no collectives.
pub fn pocl_new_cpu() -> DeviceCaps {
    let mut c = pocl_cpu();
    c.compute_units = 16;
    c.sub_groups = Some(SubGroupCaps {
        sizes: vec![],
        max_sub_groups: 1,
        non_uniform_arithmetic: false,
    });
    c.atomics.f32_global_add = true;
    c.atomics.f32_local_add = true;
    c.atomics.f64_global_add = true;
    c.atomics.f64_local_add = true;
    c
}

/// Every fixture above, each with its function's name (`"pocl_cpu"`, `"nvidia_h200"`, ...).
pub fn all() -> Vec<(&'static str, DeviceCaps)> {
    vec![
        ("pocl_cpu", pocl_cpu()),
        ("intel_cpu", intel_cpu()),
        ("oclgrind", oclgrind()),
        ("nvidia_h200", nvidia_h200()),
        ("amd_gpu", amd_gpu()),
        ("pocl_new_cpu", pocl_new_cpu()),
    ]
}
