//! OpenCL platforms and devices: enumeration, selection, one shared context per device, the
//! capability query (raw answers handed to [`caps::translate`]) and probe kernels that verify what
//! the driver advertises.

use crate::caps::{self, ClStd, DeviceCaps, RawDeviceInfo};
use crate::error::{Error, Result};
use crate::launch::Serial;
use opencl3::context::Context;
use opencl3::device::Device as ClDevice;
use opencl3::platform::get_platforms;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, OnceLock};

/// One OpenCL device, as found at enumeration. Cheap to clone.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

pub(crate) struct DeviceInner {
    pub index: usize,
    pub cl: ClDevice,
    pub platform: String,
    pub name: String,
    context: OnceLock<Result<Arc<Context>>>,
    caps: OnceLock<Result<DeviceCaps>>,
    /// The process-wide command lock, used only when the device's capabilities carry
    /// `Workarounds::serialize_device` (see [`Device::serial`]).
    serial: Arc<Mutex<()>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Device({}: {} / {})",
            self.inner.index, self.inner.name, self.inner.platform
        )
    }
}

static DEVICES: OnceLock<Result<Vec<Device>>> = OnceLock::new();

/// Platforms whose device query failed during enumeration, as "name: error" lines (shown with
/// `Error::DeviceNotFound` and `Error::NoDevices`, and logged at warn).
static PLATFORM_ERRORS: OnceLock<Vec<String>> = OnceLock::new();

/// The platforms whose device query failed while devices were enumerated ("name: error").
pub fn platform_errors() -> &'static [String] {
    PLATFORM_ERRORS.get().map(Vec::as_slice).unwrap_or(&[])
}

/// `OCL_ICD_FILENAMES` as it was before the process's first OpenCL call, kept only when the
/// ICD loader changed it during enumeration (see [`env_for_children`]).
static ICD_FILENAMES_LOST: OnceLock<Option<OsString>> = OnceLock::new();

/// Environment variables to give a child process so that it finds the devices this process
/// found; empty unless the ICD loader altered the environment.
///
/// ocl-icd 2.3.2 (Ubuntu 24.04) cuts `OCL_ICD_FILENAMES` in place at its first `:` while it
/// loads the vendors (`libpocl.so.2:libnvidia-opencl.so.1` becomes `libpocl.so.2`), so every
/// process started after the first OpenCL call inherits a shorter list and sees fewer devices.
/// clreduce does not write the process environment; it remembers the value it saw before it
/// enumerated and hands it back here: `Command::new(..).envs(clreduce::device::env_for_children())`.
/// `clreduce bench` does so for its Python peers.
pub fn env_for_children() -> Vec<(&'static str, OsString)> {
    match ICD_FILENAMES_LOST.get() {
        Some(Some(v)) => vec![("OCL_ICD_FILENAMES", v.clone())],
        _ => Vec::new(),
    }
}

/// Every OpenCL device on every platform, in a stable order (platform order, then device order).
/// Enumerated once per process.
pub fn devices() -> Result<&'static [Device]> {
    DEVICES
        .get_or_init(|| {
            let icd_before = std::env::var_os("OCL_ICD_FILENAMES");
            let platforms = get_platforms();
            let icd_after = std::env::var_os("OCL_ICD_FILENAMES");
            let lost = if icd_after != icd_before { icd_before } else { None };
            if let Some(v) = &lost {
                tracing::debug!(
                    before = ?v,
                    after = ?icd_after,
                    "the ICD loader changed OCL_ICD_FILENAMES; child processes get the original (device::env_for_children)"
                );
            }
            let _ = ICD_FILENAMES_LOST.set(lost);
            let platforms = platforms.map_err(|e| Error::NoDevices {
                detail: format!(
                    "clGetPlatformIDs failed with {} ({})",
                    e.0,
                    crate::error::cl_error_name(e.0)
                ),
            })?;
            let mut out = Vec::new();
            let mut failed = Vec::new();
            for p in platforms {
                let pname = p.name().unwrap_or_default();
                // CL_DEVICE_TYPE_ALL
                let ids = match p.get_devices(0xFFFF_FFFF) {
                    Ok(ids) => ids,
                    Err(e) => {
                        let line = format!(
                            "{pname}: clGetDeviceIDs failed with {} ({})",
                            e.0,
                            crate::error::cl_error_name(e.0)
                        );
                        tracing::warn!(platform = %pname, error = e.0, "platform skipped: its device query failed");
                        failed.push(line);
                        continue;
                    }
                };
                for id in ids {
                    let cl = ClDevice::new(id);
                    let name = cl.name().unwrap_or_default().trim().to_string();
                    out.push(Device {
                        inner: Arc::new(DeviceInner {
                            index: out.len(),
                            cl,
                            platform: pname.clone(),
                            name,
                            context: OnceLock::new(),
                            caps: OnceLock::new(),
                            serial: Arc::new(Mutex::new(())),
                        }),
                    });
                }
            }
            let _ = PLATFORM_ERRORS.set(failed.clone());
            if out.is_empty() {
                let mut detail = "the ICD loader found no platform with a device".to_string();
                for f in &failed {
                    detail.push_str(&format!("; platform {f}"));
                }
                return Err(Error::NoDevices { detail });
            }
            Ok(out)
        })
        .as_ref()
        .map(|v| v.as_slice())
        .map_err(Clone::clone)
}

/// Picks a device: `spec` is an index from `clreduce devices` or a case-insensitive substring of
/// "platform / device name". `None` picks the default: `CLREDUCE_DEVICE` if set, else the first
/// GPU, else the first CPU that is not a simulator, else the first device.
pub fn select(spec: Option<&str>) -> Result<Device> {
    let all = devices()?;
    let env = std::env::var("CLREDUCE_DEVICE")
        .ok()
        .filter(|s| !s.is_empty());
    let spec = spec.map(str::to_string).or(env);
    match spec {
        Some(s) => find(all, &s),
        None => Ok(default_device(all)),
    }
}

fn find(all: &[Device], s: &str) -> Result<Device> {
    if let Ok(i) = s.trim().parse::<usize>() {
        if let Some(d) = all.get(i) {
            return Ok(d.clone());
        }
    } else {
        let needle = s.to_lowercase();
        if let Some(d) = all
            .iter()
            .find(|d| d.label().to_lowercase().contains(&needle))
        {
            return Ok(d.clone());
        }
    }
    Err(Error::DeviceNotFound {
        wanted: s.to_string(),
        found: all
            .iter()
            .map(|d| format!("  {}: {}", d.index(), d.label()))
            .chain(
                platform_errors()
                    .iter()
                    .map(|f| format!("  (no devices from platform {f})")),
            )
            .collect(),
    })
}

fn default_device(all: &[Device]) -> Device {
    let ty = |d: &Device| d.inner.cl.dev_type().unwrap_or(0);
    let is_sim = |d: &Device| d.inner.platform.contains("Oclgrind");
    all.iter()
        .find(|d| ty(d) & (1 << 2) != 0 && !is_sim(d))
        .or_else(|| all.iter().find(|d| ty(d) & (1 << 1) != 0 && !is_sim(d)))
        .unwrap_or(&all[0])
        .clone()
}

impl Device {
    pub fn index(&self) -> usize {
        self.inner.index
    }
    pub fn name(&self) -> &str {
        &self.inner.name
    }
    pub fn platform(&self) -> &str {
        &self.inner.platform
    }
    /// "platform / name", as listed by `clreduce devices`.
    pub fn label(&self) -> String {
        format!("{} / {}", self.inner.platform, self.inner.name)
    }
    pub fn is_simulator(&self) -> bool {
        self.inner.platform.contains("Oclgrind")
    }

    pub(crate) fn id(&self) -> opencl3::types::cl_device_id {
        self.inner.cl.id()
    }

    /// The context shared by every queue on this device (created on first use).
    pub(crate) fn context(&self) -> Result<Arc<Context>> {
        self.inner
            .context
            .get_or_init(|| {
                Context::from_device(&self.inner.cl)
                    .map(Arc::new)
                    .map_err(Error::cl("clCreateContext"))
            })
            .clone()
    }

    /// The device's capabilities, queried, translated and verified by probe kernels once per
    /// process. No mask applied.
    pub fn caps(&self) -> Result<DeviceCaps> {
        self.inner
            .caps
            .get_or_init(|| {
                let raw = query(self)?;
                let caps = caps::translate(&raw);
                // The probe builds run under the device lock too where the device needs it.
                let _g = caps
                    .workarounds
                    .serialize_device
                    .then(|| self.inner.serial.lock().unwrap_or_else(|p| p.into_inner()));
                probe(self, caps)
            })
            .clone()
    }

    /// The device's process-wide command lock if its capabilities carry
    /// `Workarounds::serialize_device` (Oclgrind), else none: every queue, buffer and kernel
    /// object on such a device runs its OpenCL calls under this one lock (`launch::Serial`).
    pub(crate) fn serial(&self) -> Result<Serial> {
        let on = match self.inner.caps.get() {
            Some(Ok(c)) => c.workarounds.serialize_device,
            _ => self.caps()?.workarounds.serialize_device,
        };
        Ok(Serial::new(on.then(|| self.inner.serial.clone())))
    }
}

/// The command lock of the enumerated device with this id (see [`Device::serial`]); none for
/// an unknown id or a device whose capabilities are not known (yet).
pub(crate) fn serial_of(id: opencl3::types::cl_device_id) -> Serial {
    let Some(Ok(all)) = DEVICES.get() else {
        return Serial::default();
    };
    match all.iter().find(|d| d.id() == id) {
        Some(d) if matches!(d.inner.caps.get(), Some(Ok(c)) if c.workarounds.serialize_device) => {
            Serial::new(Some(d.inner.serial.clone()))
        }
        _ => Serial::default(),
    }
}

// --- raw queries -------------------------------------------------------------------------------

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

fn query(d: &Device) -> Result<RawDeviceInfo> {
    let cl = &d.inner.cl;
    let e = |call| Error::cl(call);
    let opt = |p: u32| cl.get_data(p).ok().filter(|b| !b.is_empty());
    let version = cl
        .version()
        .map_err(e("clGetDeviceInfo(CL_DEVICE_VERSION)"))?;
    let is3 = version.starts_with("OpenCL 3");
    let mut raw = RawDeviceInfo {
        platform: d.inner.platform.clone(),
        name: d.inner.name.clone(),
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

// --- probes ------------------------------------------------------------------------------------

/// One advertised capability and the tiny kernel that must compile for it to be trusted.
struct Probe {
    name: &'static str,
    std: ClStd,
    source: String,
    remove: fn(&mut DeviceCaps),
}

fn probes(c: &DeviceCaps) -> Vec<Probe> {
    let mut v = Vec::new();
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
    v
}

/// Compiles a probe kernel for every advertised capability; a capability whose probe does not
/// compile is removed and noted in `removed` with the first line of the build log.
fn probe(d: &Device, mut caps: DeviceCaps) -> Result<DeviceCaps> {
    let ctx = d.context()?;
    // Preferred work-group multiple from a trivial kernel where the device query was missing.
    let plain = "__kernel void p_plain(__global int* g) { g[get_global_id(0)] += 1; }\n";
    let program = crate::program::build_uncached(d, &ctx, plain, ClStd::Cl12.option())?;
    if caps.preferred_wg_multiple <= 1 {
        if let Ok(k) = opencl3::kernel::Kernel::create(&program, "p_plain") {
            if let Ok(m) = k.get_work_group_size_multiple(d.id()) {
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
    if crate::program::build_uncached(d, &ctx, &all, std.option()).is_ok() {
        return Ok(caps);
    }
    for (p, src) in list {
        if let Err(err) = crate::program::build_uncached(d, &ctx, &src, p.std.option()) {
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
    tracing::debug!(device = %d.label(), removed = ?caps.removed, "capabilities probed");
    Ok(caps)
}
