//! The one translation from raw OpenCL query answers ([`RawDeviceInfo`]) to [`DeviceCaps`].
//! Pure: tests call it with hand-made answers.

use super::{AtomicCaps, DeviceCaps, DeviceKind, SubGroupCaps, Workarounds};

/// The raw answers of the device queries, before interpretation. Filled by `crate::runtime::device`.
#[derive(Debug, Clone, Default)]
pub struct RawDeviceInfo {
    /// `CL_PLATFORM_NAME`.
    pub platform: String,
    /// `CL_DEVICE_NAME`.
    pub name: String,
    /// `CL_DEVICE_VENDOR`; empty when the query failed.
    pub vendor: String,
    /// `CL_DEVICE_VENDOR_ID`; 0 when the query failed.
    pub vendor_id: u32,
    /// `CL_DRIVER_VERSION`; empty when the query failed.
    pub driver: String,
    /// `CL_DEVICE_TYPE` bits.
    pub device_type: u64,
    /// `CL_DEVICE_VERSION`, e.g. "OpenCL 3.0 PoCL ...".
    pub version: String,
    /// `CL_DEVICE_OPENCL_C_VERSION`, e.g. "OpenCL C 1.2 PoCL"; empty when the query failed.
    pub opencl_c_version: String,
    /// `CL_DEVICE_OPENCL_C_ALL_VERSIONS` as (major, minor); empty before OpenCL 3.0.
    pub opencl_c_all_versions: Vec<(u32, u32)>,
    /// `CL_DEVICE_OPENCL_C_FEATURES` names; empty before OpenCL 3.0.
    pub opencl_c_features: Vec<String>,
    /// `CL_DEVICE_EXTENSIONS`, space-separated as the driver gives it.
    pub extensions: String,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub compute_units: u32,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`, in work-items.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`, one entry per dimension; empty when the query failed.
    pub max_work_item_sizes: Vec<usize>,
    /// `CL_DEVICE_LOCAL_MEM_SIZE`, in bytes.
    pub local_mem_size: u64,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`, in bytes; 0 when the query failed.
    pub global_mem_size: u64,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, in bytes; 0 when the query failed.
    pub max_alloc: u64,
    /// `CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE` (3.0) or 0 when unknown.
    pub preferred_wg_multiple: usize,
    /// `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`, or `None` before OpenCL 3.0.
    pub atomic_memory_capabilities: Option<u64>,
    /// `CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT`, or `None` before OpenCL 3.0.
    pub wg_collectives: Option<bool>,
    /// `CL_DEVICE_MAX_NUM_SUB_GROUPS`; 0 on OpenCL 1.x or when the query failed.
    pub max_num_sub_groups: u32,
    /// `CL_DEVICE_SUB_GROUP_SIZES_INTEL`.
    pub sub_group_sizes: Vec<usize>,
    /// `CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT` bits (cl_ext_float_atomics), 0 when absent.
    pub fp32_atomic_caps: u64,
    /// `CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT` bits, 0 when absent.
    pub fp64_atomic_caps: u64,
}

// CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES bits.
const ATOMIC_ORDER_ACQ_REL: u64 = 1 << 1;
const ATOMIC_SCOPE_DEVICE: u64 = 1 << 5;
// cl_ext_float_atomics capability bits.
const FP_GLOBAL_ADD: u64 = 1 << 1;
const FP_GLOBAL_MIN_MAX: u64 = 1 << 2;
const FP_LOCAL_ADD: u64 = 1 << 17;
const FP_LOCAL_MIN_MAX: u64 = 1 << 18;

fn parse_version(s: &str) -> (u32, u32) {
    // "OpenCL 3.0 PoCL ...", "OpenCL C 1.2 PoCL"
    s.split_whitespace()
        .find_map(|w| {
            let mut it = w.split('.');
            let a = it.next()?.parse().ok()?;
            let b = it
                .next()?
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>();
            Some((a, b.parse().ok()?))
        })
        .unwrap_or((1, 0))
}

/// The one translation from raw OpenCL answers to [`DeviceCaps`]. Pure: tests call it with
/// hand-made [`RawDeviceInfo`] values.
pub fn translate(raw: &RawDeviceInfo) -> DeviceCaps {
    let extensions: Vec<String> = raw
        .extensions
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let ext_list = extensions.clone();
    let has_ext = |e: &str| ext_list.iter().any(|x| x == e);
    let has_feat = |f: &str| raw.opencl_c_features.iter().any(|x| x == f);
    let version = parse_version(&raw.version);
    let mut c_version = parse_version(&raw.opencl_c_version);
    for v in &raw.opencl_c_all_versions {
        c_version = c_version.max(*v);
    }
    let kind = if raw.device_type & (1 << 2) != 0 {
        DeviceKind::Gpu
    } else if raw.device_type & (1 << 1) != 0 {
        DeviceKind::Cpu
    } else if raw.device_type & (1 << 3) != 0 {
        DeviceKind::Accelerator
    } else {
        DeviceKind::Other
    };
    let core_int32 = version >= (1, 1);
    let ocl2 = version.0 == 2;
    let (acq_rel, scope_device) = match raw.atomic_memory_capabilities {
        Some(bits) => (
            bits & ATOMIC_ORDER_ACQ_REL != 0,
            bits & ATOMIC_SCOPE_DEVICE != 0,
        ),
        None => (ocl2, ocl2),
    };
    let fp32 = raw.fp32_atomic_caps;
    let fp64_caps = raw.fp64_atomic_caps;
    let fp64 = has_ext("cl_khr_fp64") || has_feat("__opencl_c_fp64");
    let atomics = AtomicCaps {
        int32_global_base: core_int32 || has_ext("cl_khr_global_int32_base_atomics"),
        int32_global_ext: core_int32 || has_ext("cl_khr_global_int32_extended_atomics"),
        int32_local_base: core_int32 || has_ext("cl_khr_local_int32_base_atomics"),
        int32_local_ext: core_int32 || has_ext("cl_khr_local_int32_extended_atomics"),
        int64_base: has_ext("cl_khr_int64_base_atomics"),
        int64_ext: has_ext("cl_khr_int64_extended_atomics"),
        f32_global_add: fp32 & FP_GLOBAL_ADD != 0,
        f32_local_add: fp32 & FP_LOCAL_ADD != 0,
        f32_global_minmax: fp32 & FP_GLOBAL_MIN_MAX != 0,
        f32_local_minmax: fp32 & FP_LOCAL_MIN_MAX != 0,
        f64_global_add: fp64 && fp64_caps & FP_GLOBAL_ADD != 0,
        f64_local_add: fp64 && fp64_caps & FP_LOCAL_ADD != 0,
        f64_global_minmax: fp64 && fp64_caps & FP_GLOBAL_MIN_MAX != 0,
        f64_local_minmax: fp64 && fp64_caps & FP_LOCAL_MIN_MAX != 0,
        order_acq_rel: acq_rel,
        scope_device,
    };
    let sub_groups_present = has_ext("cl_khr_subgroups")
        || has_feat("__opencl_c_subgroups")
        || (ocl2 && version >= (2, 1) && raw.max_num_sub_groups > 0);
    let sub_groups = (sub_groups_present && raw.max_num_sub_groups > 0).then(|| SubGroupCaps {
        sizes: raw.sub_group_sizes.clone(),
        max_sub_groups: raw.max_num_sub_groups,
        non_uniform_arithmetic: has_ext("cl_khr_subgroup_non_uniform_arithmetic"),
    });
    let work_group_collectives = match raw.wg_collectives {
        Some(b) => b || has_feat("__opencl_c_work_group_collective_functions"),
        None => ocl2,
    };
    DeviceCaps {
        platform: raw.platform.clone(),
        name: raw.name.trim().to_string(),
        vendor: raw.vendor.clone(),
        vendor_id: raw.vendor_id,
        driver: raw.driver.clone(),
        kind,
        opencl_version: version,
        opencl_c_version: c_version,
        opencl_c_features: raw.opencl_c_features.clone(),
        extensions,
        compute_units: raw.compute_units.max(1),
        max_work_group_size: raw.max_work_group_size.max(1),
        max_work_item_sizes: raw.max_work_item_sizes.clone(),
        local_mem_size: raw.local_mem_size,
        global_mem_size: raw.global_mem_size,
        max_alloc: raw.max_alloc,
        preferred_wg_multiple: raw.preferred_wg_multiple.max(1),
        sub_groups,
        work_group_collectives,
        warp_shuffle_ptx: raw.vendor_id == 0x10de,
        acq_rel_ptx: raw.vendor_id == 0x10de,
        fp64,
        fp16: has_ext("cl_khr_fp16"),
        atomics,
        removed: Vec::new(),
        workarounds: Workarounds {
            no_restrict: raw.platform.contains("Oclgrind"),
            serialize_device: raw.platform.contains("Oclgrind"),
            serial_last_group_tree: raw.platform.contains("Portable Computing Language")
                && raw.driver.starts_with("3."),
            kernel_wg_size_advisory: raw.vendor_id == 0x10de,
            wait_before_read: false,
            spin_poll_read: raw.vendor_id == 0x10de,
            pinned_reads: raw.vendor_id == 0x10de,
            flush_long_launches: raw.vendor_id == 0x10de,
            host_mailbox: raw.vendor_id == 0x10de,
            poll_read: raw.platform.contains("Portable Computing Language"),
            own_program_cache: raw.platform.contains("Portable Computing Language"),
        },
        narrow_vec: if kind == DeviceKind::Gpu { 2 } else { 1 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Space;
    use crate::ops::Op;
    use crate::types::ElemType;

    fn raw_intel() -> RawDeviceInfo {
        RawDeviceInfo {
            platform: "Intel(R) OpenCL".into(),
            name: "AMD EPYC".into(),
            vendor_id: 0x8086,
            device_type: 1 << 1,
            version: "OpenCL 3.1 (Build 0)".into(),
            opencl_c_version: "OpenCL C 3.1 ".into(),
            opencl_c_all_versions: vec![(1, 2), (2, 0), (3, 0), (3, 1)],
            opencl_c_features: vec![
                "__opencl_c_subgroups".into(),
                "__opencl_c_work_group_collective_functions".into(),
                "__opencl_c_fp64".into(),
            ],
            extensions: "cl_khr_fp64 cl_khr_fp16 cl_khr_int64_base_atomics cl_khr_int64_extended_atomics cl_ext_float_atomics cl_khr_subgroup_non_uniform_arithmetic".into(),
            compute_units: 2,
            max_work_group_size: 8192,
            max_work_item_sizes: vec![8192; 3],
            local_mem_size: 32768,
            preferred_wg_multiple: 128,
            atomic_memory_capabilities: Some(0b111_1111),
            wg_collectives: Some(true),
            max_num_sub_groups: 2048,
            sub_group_sizes: vec![4, 8, 16, 32, 64],
            fp32_atomic_caps: FP_GLOBAL_ADD | FP_LOCAL_ADD | FP_GLOBAL_MIN_MAX | FP_LOCAL_MIN_MAX | 1 | (1 << 16),
            fp64_atomic_caps: FP_GLOBAL_ADD,
            ..Default::default()
        }
    }

    #[test]
    fn translate_intel_like() {
        let c = translate(&raw_intel());
        assert_eq!(c.kind, DeviceKind::Cpu);
        assert_eq!(c.opencl_version, (3, 1));
        assert_eq!(c.opencl_c_version, (3, 1));
        assert!(c.work_group_collectives);
        assert!(c.sub_groups.as_ref().unwrap().non_uniform_arithmetic);
        assert!(c.fast_atomic(Op::Plus, ElemType::F32, Space::Local));
        assert!(c.fast_atomic(Op::Plus, ElemType::F64, Space::Global));
        assert!(!c.fast_atomic(Op::Plus, ElemType::F64, Space::Local));
        assert!(c.fast_atomic(Op::Maximum, ElemType::I64, Space::Global));
        assert!(c.c11_atomics());
        assert!(c.fp16 && c.fp64);
    }

    #[test]
    fn translate_opencl12_without_extensions() {
        let raw = RawDeviceInfo {
            device_type: 1 << 2,
            version: "OpenCL 1.2 CUDA".into(),
            opencl_c_version: "OpenCL C 1.2 ".into(),
            extensions: "cl_khr_global_int32_base_atomics".into(),
            ..Default::default()
        };
        let c = translate(&raw);
        assert_eq!(c.kind, DeviceKind::Gpu);
        assert!(c.fast_atomic(Op::Plus, ElemType::I32, Space::Global));
        assert!(!c.fast_atomic(Op::Plus, ElemType::I64, Space::Global));
        assert!(!c.fast_atomic(Op::Plus, ElemType::F32, Space::Global));
        assert!(!c.work_group_collectives);
        assert!(c.sub_groups.is_none());
        assert!(!c.c11_atomics());
        assert!(!c.fp64);
    }

    #[test]
    fn opencl2_implies_collectives_and_c11_atomics() {
        let raw = RawDeviceInfo {
            version: "OpenCL 2.0 AMD-APP".into(),
            opencl_c_version: "OpenCL C 2.0".into(),
            ..Default::default()
        };
        let c = translate(&raw);
        assert!(c.work_group_collectives);
        assert!(c.c11_atomics());
    }
}
