//! The raw capability queries of one device (`clGetDeviceInfo`), answered as a
//! [`RawDeviceInfo`]; `caps::translate` interprets them.

use crate::caps::RawDeviceInfo;
use crate::error::{Error, Result};
use opencl3::device::Device as ClDevice;

const CL_DEVICE_MAX_NUM_SUB_GROUPS: u32 = 0x105C;
const CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: u32 = 0x1063;
const CL_DEVICE_OPENCL_C_ALL_VERSIONS: u32 = 0x1066;
const CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: u32 = 0x1067;
const CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT: u32 = 0x1068;
const CL_DEVICE_OPENCL_C_FEATURES: u32 = 0x106F;
const CL_DEVICE_SUB_GROUP_SIZES_INTEL: u32 = 0x4108;
const CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT: u32 = 0x4231;
const CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT: u32 = 0x4232;

fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    let n = b.len().min(8);
    a[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(a)
}

/// `cl_name_version` arrays: a 4-byte version then a 64-byte name.
fn name_versions(b: &[u8]) -> Vec<(String, (u32, u32))> {
    b.chunks_exact(68)
        .map(|c| {
            let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let name: Vec<u8> = c[4..].iter().copied().take_while(|&x| x != 0).collect();
            (
                String::from_utf8_lossy(&name).into_owned(),
                (v >> 22, (v >> 12) & 0x3ff),
            )
        })
        .collect()
}

/// The raw answers of one device's queries.
pub(super) fn query(cl: &ClDevice, platform: &str, name: &str) -> Result<RawDeviceInfo> {
    let e = |call| Error::cl(call);
    let opt = |p: u32| cl.get_data(p).ok().filter(|b| !b.is_empty());
    let version = cl
        .version()
        .map_err(e("clGetDeviceInfo(CL_DEVICE_VERSION)"))?;
    let is3 = version.starts_with("OpenCL 3");
    let mut raw = RawDeviceInfo {
        platform: platform.to_string(),
        name: name.to_string(),
        vendor: cl.vendor().unwrap_or_default(),
        vendor_id: cl.vendor_id().unwrap_or(0),
        driver: cl.driver_version().unwrap_or_default(),
        device_type: cl
            .dev_type()
            .map_err(e("clGetDeviceInfo(CL_DEVICE_TYPE)"))?,
        version: version.clone(),
        opencl_c_version: cl.opencl_c_version().unwrap_or_default(),
        extensions: cl.extensions().unwrap_or_default(),
        compute_units: cl
            .max_compute_units()
            .map_err(e("clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)"))?,
        max_work_group_size: cl
            .max_work_group_size()
            .map_err(e("clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)"))?,
        max_work_item_sizes: cl.max_work_item_sizes().unwrap_or_default(),
        local_mem_size: cl
            .local_mem_size()
            .map_err(e("clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)"))?,
        global_mem_size: cl.global_mem_size().unwrap_or(0),
        max_alloc: cl.max_mem_alloc_size().unwrap_or(0),
        ..Default::default()
    };
    if is3 {
        raw.opencl_c_all_versions = opt(CL_DEVICE_OPENCL_C_ALL_VERSIONS)
            .map(|b| name_versions(&b).into_iter().map(|(_, v)| v).collect())
            .unwrap_or_default();
        raw.opencl_c_features = opt(CL_DEVICE_OPENCL_C_FEATURES)
            .map(|b| name_versions(&b).into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default();
        raw.atomic_memory_capabilities =
            opt(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES).map(|b| le_u64(&b));
        raw.wg_collectives =
            opt(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT).map(|b| le_u64(&b) != 0);
        raw.preferred_wg_multiple = opt(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
            .map(|b| le_u64(&b) as usize)
            .unwrap_or(0);
    }
    if !version.starts_with("OpenCL 1") {
        raw.max_num_sub_groups = opt(CL_DEVICE_MAX_NUM_SUB_GROUPS)
            .map(|b| le_u64(&b) as u32)
            .unwrap_or(0);
    }
    if raw.extensions.contains("cl_intel_required_subgroup_size") {
        raw.sub_group_sizes = opt(CL_DEVICE_SUB_GROUP_SIZES_INTEL)
            .map(|b| {
                b.chunks_exact(std::mem::size_of::<usize>())
                    .map(|c| le_u64(c) as usize)
                    .collect()
            })
            .unwrap_or_default();
    }
    if raw.extensions.contains("cl_ext_float_atomics") {
        raw.fp32_atomic_caps = opt(CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT)
            .map(|b| le_u64(&b))
            .unwrap_or(0);
        raw.fp64_atomic_caps = opt(CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT)
            .map(|b| le_u64(&b))
            .unwrap_or(0);
    }
    Ok(raw)
}
