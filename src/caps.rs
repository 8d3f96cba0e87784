//! Device capabilities as plain data.
//!
//! [`DeviceCaps`] is filled in exactly one place, [`translate`], from a [`RawDeviceInfo`] (the
//! raw answers of OpenCL's `clGetDeviceInfo` queries), then checked by probe kernels
//! (`crate::device::probe`) and narrowed by a [`Mask`]. It is an ordinary value: tests build it by
//! hand ([`fixtures`]) so planning can be tested without a device.

use crate::ops::Op;
use crate::types::ElemType;
use serde::Serialize;

/// What kind of device this is (`CL_DEVICE_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Cpu,
    Gpu,
    Accelerator,
    Other,
}

/// Address space of an atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Global,
    Local,
}

/// Atomic operations the device runs in hardware ("fast atomics").
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct AtomicCaps {
    /// 32-bit `atomic_add`/`atomic_inc`/`atomic_cmpxchg` on `__global`: `cl_khr_global_int32_base_atomics`, core since OpenCL 1.1.
    pub int32_global_base: bool,
    /// 32-bit `atomic_min/max/and/or/xor` on `__global`: `cl_khr_global_int32_extended_atomics`, core since OpenCL 1.1.
    pub int32_global_ext: bool,
    /// 32-bit base atomics on `__local`: `cl_khr_local_int32_base_atomics`, core since OpenCL 1.1.
    pub int32_local_base: bool,
    /// 32-bit extended atomics on `__local`: `cl_khr_local_int32_extended_atomics`, core since OpenCL 1.1.
    pub int32_local_ext: bool,
    /// 64-bit `atom_add`/`atom_cmpxchg` (global and local): `cl_khr_int64_base_atomics`.
    pub int64_base: bool,
    /// 64-bit `atom_min/max/and/or/xor` (global and local): `cl_khr_int64_extended_atomics`.
    pub int64_ext: bool,
    /// `atomic_fetch_add` on `atomic_float` in `__global`: `cl_ext_float_atomics`,
    /// `CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT` bit `GLOBAL_FP_ATOMIC_ADD`, macro `__opencl_c_ext_fp32_global_atomic_add`.
    pub f32_global_add: bool,
    /// fp32 add on `__local` (`__opencl_c_ext_fp32_local_atomic_add`).
    pub f32_local_add: bool,
    /// fp32 min/max on `__global` (`__opencl_c_ext_fp32_global_atomic_min_max`).
    pub f32_global_minmax: bool,
    /// fp32 min/max on `__local` (`__opencl_c_ext_fp32_local_atomic_min_max`).
    pub f32_local_minmax: bool,
    /// fp64 add on `__global`: `CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT` (`__opencl_c_ext_fp64_global_atomic_add`).
    pub f64_global_add: bool,
    /// fp64 add on `__local` (`__opencl_c_ext_fp64_local_atomic_add`).
    pub f64_local_add: bool,
    /// fp64 min/max on `__global` (`__opencl_c_ext_fp64_global_atomic_min_max`).
    pub f64_global_minmax: bool,
    /// fp64 min/max on `__local` (`__opencl_c_ext_fp64_local_atomic_min_max`).
    pub f64_local_minmax: bool,
    /// OpenCL C 2.0/3.0 atomics with `memory_order_acq_rel`: `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`
    /// bit `CL_DEVICE_ATOMIC_ORDER_ACQ_REL` (macro `__opencl_c_atomic_order_acq_rel`); always on OpenCL 2.x.
    pub order_acq_rel: bool,
    /// `memory_scope_device` for atomics and fences: `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES` bit
    /// `CL_DEVICE_ATOMIC_SCOPE_DEVICE` (macro `__opencl_c_atomic_scope_device`).
    pub scope_device: bool,
}

/// Sub-group support (`cl_khr_subgroups` or the OpenCL 3.0 feature `__opencl_c_subgroups`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct SubGroupCaps {
    /// Sub-group sizes the device may use: `CL_DEVICE_SUB_GROUP_SIZES_INTEL`
    /// (`cl_intel_required_subgroup_size`); empty when the driver does not say.
    pub sizes: Vec<usize>,
    /// `CL_DEVICE_MAX_NUM_SUB_GROUPS`.
    pub max_sub_groups: u32,
    /// `sub_group_non_uniform_reduce_{mul,and,or,xor,logical_and,logical_or}`:
    /// `cl_khr_subgroup_non_uniform_arithmetic`.
    pub non_uniform_arithmetic: bool,
}

/// Everything clreduce needs to know about a device to plan a reduction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct DeviceCaps {
    /// `CL_PLATFORM_NAME`.
    pub platform: String,
    /// `CL_DEVICE_NAME`.
    pub name: String,
    /// `CL_DEVICE_VENDOR`.
    pub vendor: String,
    /// `CL_DEVICE_VENDOR_ID` (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel).
    pub vendor_id: u32,
    /// `CL_DRIVER_VERSION`.
    pub driver: String,
    /// `CL_DEVICE_TYPE`.
    pub kind: DeviceKind,
    /// `CL_DEVICE_VERSION`, parsed (major, minor).
    pub opencl_version: (u32, u32),
    /// Highest OpenCL C version the compiler accepts: `CL_DEVICE_OPENCL_C_ALL_VERSIONS` (3.0+),
    /// else `CL_DEVICE_OPENCL_C_VERSION`.
    pub opencl_c_version: (u32, u32),
    /// `CL_DEVICE_OPENCL_C_FEATURES` (OpenCL 3.0) names, e.g. `__opencl_c_subgroups`.
    pub opencl_c_features: Vec<String>,
    /// `CL_DEVICE_EXTENSIONS`, split.
    pub extensions: Vec<String>,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub compute_units: u32,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`.
    pub max_work_item_sizes: Vec<usize>,
    /// `CL_DEVICE_LOCAL_MEM_SIZE` in bytes.
    pub local_mem_size: u64,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE` in bytes.
    pub global_mem_size: u64,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE` in bytes.
    pub max_alloc: u64,
    /// `CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE` (OpenCL 3.0), else the probe kernel's
    /// `CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE`; the warp/wavefront/SIMD width in practice.
    pub preferred_wg_multiple: usize,
    /// Sub-groups, if the device has them.
    pub sub_groups: Option<SubGroupCaps>,
    /// `work_group_reduce_{add,min,max}` and `work_group_all/any` ("fast group reduce"):
    /// `CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT` / `__opencl_c_work_group_collective_functions`
    /// on OpenCL 3.0, always on OpenCL 2.x.
    pub work_group_collectives: bool,
    /// Warp shuffles through inline PTX (`shfl.sync.down.b32`, warps of 32): NVIDIA's OpenCL
    /// accepts inline PTX but exposes no sub-groups. Set for vendor 0x10de, verified by a probe
    /// kernel. An explicitly NVIDIA-gated path: the sub-group step uses it where the
    /// work-group size is a multiple of 32.
    pub warp_shuffle_ptx: bool,
    /// Acquire/release through inline PTX (`atom.acq_rel.gpu`, `fence.acq_rel.gpu`; sm_70 and
    /// later): NVIDIA's OpenCL has neither OpenCL C 2.0 acquire/release nor device-scope
    /// fences. Set for vendor 0x10de, verified by a probe kernel. An explicitly NVIDIA-gated
    /// path: last-work-group detection then uses the OpenCL C 2.0 protocol (plain partials,
    /// an acq_rel ticket), so structured partials (argmin/argmax, identity-less) can use it.
    pub acq_rel_ptx: bool,
    /// Double precision: `cl_khr_fp64` / `__opencl_c_fp64`.
    pub fp64: bool,
    /// Half precision: `cl_khr_fp16`.
    pub fp16: bool,
    /// Fast atomics per operation, type and address space.
    pub atomics: AtomicCaps,
    /// Capabilities that were advertised but removed, each with the reason (failed probe or mask).
    pub removed: Vec<String>,
    /// Named driver workarounds in force for this device.
    pub workarounds: Workarounds,
}

/// Driver bugs worked around, by name (see design/decisions.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Workarounds {
    /// Oclgrind 21.10's LLVM cannot link kernels whose pointers are `restrict`
    /// ("Undefined external function: llvm.experimental.noalias.scope.decl"): omit `restrict`.
    pub no_restrict: bool,
    /// PoCL 3.1 (pthread): a local-memory tree (a loop of barriers) run by the last work-group
    /// of last-group detection gives wrong results in about 1 of 10 runs of
    /// `clreduce reduce --device 0 --type i32 --n 100003 --strategy tree+last-group`, while
    /// the same tree in the main phase or in the extra pass does not: the last work-group
    /// combines its values with one barrier and a serial loop instead. The same region lost
    /// the result on the OpenCL 1.2 path (mask no-c11-atomics, every case of
    /// tests/matrix.rs masks::no_c11_atomics) when the counter was reset before the partials
    /// were taken, so under this workaround it is reset at the end (kernels/reduce.cl).
    pub serial_last_group_tree: bool,
    /// Oclgrind 21.10 keeps its runtime state (the simulated global memory, the bookkeeping of
    /// queued commands, reference counts) without locks, and runs queued commands inside
    /// whichever thread calls `clFinish`, a blocking read or `clWaitForEvents`. Two host
    /// threads using one queue, or one queue each, crash the process (SIGSEGV in
    /// `oclgrind::Memory::store`, or the abort `Context::notifyKernelBegin: Assertion
    /// m_kernelInvocation == NULL`). clreduce runs every command of such a device (buffer
    /// creation and release, reads, writes, fills, copies, kernel enqueues, `clFinish`) under
    /// one process-wide lock per device, and finishes each enqueued command before releasing
    /// it, so no command is left for an unlocked wait to run. Other devices take no lock.
    pub serialize_device: bool,
    /// NVIDIA's OpenCL (driver 580.159.04) reports `CL_KERNEL_WORK_GROUP_SIZE` 256 for every
    /// kernel, even an empty one with `reqd_work_group_size(1024)`, yet runs and computes
    /// correctly with 512 and 1024 work-items per group (`scripts/nv_wg_probe.py`). The value
    /// is advisory there: work-groups up to the device maximum are launched (codegen caps the
    /// registers with `-cl-nv-maxrregcount` so they fit), and a launch the driver does refuse
    /// returns its error with the variables restored.
    pub kernel_wg_size_advisory: bool,
    /// NVIDIA's OpenCL (driver 580.159.04, H200): on a queue without profiling, a blocking
    /// 4-byte read enqueued behind a running kernel returns later than waiting for the kernel
    /// and then reading on the idle queue: 2^20 f32 sum, launch to result 23.2-24.0 us with
    /// the wait vs 27.2-28.0 us without (examples/latency.rs, medians of 300, two runs,
    /// design/bench/2026-11-23-h200-2e20-repeats.txt). Such a queue waits for the last kernel
    /// it enqueued before a blocking read. Not on a profiling queue, where the order is
    /// reversed (design/decisions.md section 25). `CLREDUCE_NO_WAIT_BEFORE_READ` turns it off.
    pub wait_before_read: bool,
    /// PoCL (3.1, pthread driver): a blocking read, or a wait on an event, returns late: a
    /// 4-byte blocking read on an idle queue takes 99 us, and after a 1-work-item kernel,
    /// enqueue + blocking read takes 112 us against 34 us when the read is non-blocking and
    /// its event is polled (examples/latency.rs on the 2-core dev machine). A read, and
    /// `ReduceEvent::wait`, poll the event (yielding the thread between polls) for up to
    /// [`POLL_READ_BUDGET_US`] and then block; `CLREDUCE_POLL_READ_US` overrides the budget
    /// (0: off). design/decisions.md section 26.
    pub poll_read: bool,
}

/// How long a read polls its event before it blocks, where `Workarounds::poll_read` is on.
/// The polling thread competes with the runtime's worker threads for the CPU's cores: with a
/// budget of 1000 us, PoCL's 2^20-2^22 f32 sums on 2 cores took up to 1.5x longer, while
/// kernels shorter than this budget return as soon as they end (design/decisions.md
/// section 26).
pub const POLL_READ_BUDGET_US: u64 = 100;

/// The `-cl-std` an OpenCL C dialect needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClStd {
    Cl12,
    Cl20,
    Cl30,
}

impl ClStd {
    pub fn option(self) -> &'static str {
        match self {
            ClStd::Cl12 => "-cl-std=CL1.2",
            ClStd::Cl20 => "-cl-std=CL2.0",
            ClStd::Cl30 => "-cl-std=CL3.0",
        }
    }
}

impl DeviceCaps {
    /// The largest work-group of a 1-D launch: `CL_DEVICE_MAX_WORK_GROUP_SIZE`, capped by
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES[0]`.
    pub fn max_local_1d(&self) -> usize {
        self.max_work_group_size.min(
            self.max_work_item_sizes
                .first()
                .copied()
                .unwrap_or(usize::MAX),
        )
    }
    /// The newest OpenCL C dialect the device's compiler accepts.
    pub fn cl_std(&self) -> ClStd {
        match self.opencl_c_version {
            (3, _) => ClStd::Cl30,
            (2, _) => ClStd::Cl20,
            _ => ClStd::Cl12,
        }
    }

    /// Whether OpenCL C 2.0-style atomics (`atomic_fetch_add_explicit`, fences with scopes) can be
    /// used with acquire/release order at device scope.
    pub fn c11_atomics(&self) -> bool {
        self.cl_std() >= ClStd::Cl20 && self.atomics.order_acq_rel && self.atomics.scope_device
    }

    /// Whether last-work-group detection can order plain partials through an acquire/release
    /// ticket: OpenCL C 2.0 atomics, else NVIDIA's inline PTX (`acq_rel_ptx`).
    pub fn acq_rel(&self) -> bool {
        self.c11_atomics() || self.acq_rel_ptx_path()
    }

    /// Whether last-work-group detection takes the PTX acquire/release path (no OpenCL C 2.0
    /// atomics, PTX available).
    pub fn acq_rel_ptx_path(&self) -> bool {
        !self.c11_atomics() && self.acq_rel_ptx
    }

    pub fn has_extension(&self, ext: &str) -> bool {
        self.extensions.iter().any(|e| e == ext)
    }

    /// Whether the sub-group step runs on PTX warp shuffles (NVIDIA) rather than OpenCL sub-groups.
    pub fn sg_via_ptx(&self) -> bool {
        self.sub_groups.is_none() && self.warp_shuffle_ptx
    }

    pub fn is_nvidia(&self) -> bool {
        self.vendor_id == 0x10de || self.platform.contains("NVIDIA")
    }

    /// Whether the device has a hardware atomic for `op` on `ty` in `space`.
    /// Logical and/or map to and/or on values normalised to 0/1 (integers only);
    /// multiplies has no atomic anywhere.
    pub fn fast_atomic(&self, op: Op, ty: ElemType, space: Space) -> bool {
        let a = &self.atomics;
        let local = space == Space::Local;
        match ty {
            ElemType::I32 | ElemType::U32 => {
                let (base, ext) = if local {
                    (a.int32_local_base, a.int32_local_ext)
                } else {
                    (a.int32_global_base, a.int32_global_ext)
                };
                match op {
                    Op::Plus => base,
                    Op::Multiplies => false,
                    _ => ext,
                }
            }
            ElemType::I64 | ElemType::U64 => match op {
                Op::Plus => a.int64_base,
                Op::Multiplies => false,
                _ => a.int64_ext,
            },
            ElemType::F32 => match (op, local) {
                (Op::Plus, false) => a.f32_global_add,
                (Op::Plus, true) => a.f32_local_add,
                (Op::Minimum | Op::Maximum, false) => a.f32_global_minmax,
                (Op::Minimum | Op::Maximum, true) => a.f32_local_minmax,
                _ => false,
            },
            ElemType::F64 => match (op, local) {
                (Op::Plus, false) => a.f64_global_add,
                (Op::Plus, true) => a.f64_local_add,
                (Op::Minimum | Op::Maximum, false) => a.f64_global_minmax,
                (Op::Minimum | Op::Maximum, true) => a.f64_local_minmax,
                _ => false,
            },
            ElemType::F16 => false,
        }
    }

    /// Whether `work_group_reduce_*`/`work_group_all/any` can compute this op on this type.
    pub fn wg_reduce(&self, op: Op, ty: ElemType) -> bool {
        self.work_group_collectives
            && ty != ElemType::F16
            && matches!(
                op,
                Op::Plus | Op::Minimum | Op::Maximum | Op::LogicalAnd | Op::LogicalOr
            )
    }

    /// Whether `sub_group_reduce_*` (or the non-uniform arithmetic variants) can compute this op.
    pub fn sg_reduce(&self, op: Op, ty: ElemType) -> bool {
        if ty == ElemType::F16 {
            return false;
        }
        let Some(sg) = &self.sub_groups else {
            // PTX shuffles move bits; the kernel combines them with any op.
            return self.warp_shuffle_ptx;
        };
        match op {
            Op::Plus | Op::Minimum | Op::Maximum => true,
            // Logical ops use sub_group_reduce_min/max on values normalised to 0/1.
            Op::LogicalAnd | Op::LogicalOr => true,
            Op::Multiplies => sg.non_uniform_arithmetic,
            Op::BitAnd | Op::BitOr | Op::BitXor => sg.non_uniform_arithmetic && !ty.is_float(),
        }
    }

    /// Whether the type can be used on the device at all.
    pub fn supports_type(&self, ty: ElemType) -> Result<(), &'static str> {
        match ty {
            ElemType::F64 if !self.fp64 => Err("double precision (cl_khr_fp64)"),
            ElemType::F16 if !self.fp16 => Err("half precision (cl_khr_fp16)"),
            _ => Ok(()),
        }
    }

    /// The smallest sub-group size the device may pick (for local-memory budgeting).
    pub fn min_sub_group_size(&self) -> usize {
        if self.sub_groups.is_none() && self.warp_shuffle_ptx {
            return 32;
        }
        self.sub_groups
            .as_ref()
            .and_then(|s| s.sizes.iter().copied().min())
            .unwrap_or(1)
            .max(1)
    }

    /// A one-line summary of the device for messages.
    pub fn label(&self) -> String {
        format!("{} ({})", self.name, self.platform)
    }
}

/// The raw answers of the device queries, before interpretation. Filled by `crate::device`.
#[derive(Debug, Clone, Default)]
pub struct RawDeviceInfo {
    pub platform: String,
    pub name: String,
    pub vendor: String,
    pub vendor_id: u32,
    pub driver: String,
    /// `CL_DEVICE_TYPE` bits.
    pub device_type: u64,
    pub version: String,
    pub opencl_c_version: String,
    /// `CL_DEVICE_OPENCL_C_ALL_VERSIONS` as (major, minor); empty before OpenCL 3.0.
    pub opencl_c_all_versions: Vec<(u32, u32)>,
    pub opencl_c_features: Vec<String>,
    pub extensions: String,
    pub compute_units: u32,
    pub max_work_group_size: usize,
    pub max_work_item_sizes: Vec<usize>,
    pub local_mem_size: u64,
    pub global_mem_size: u64,
    pub max_alloc: u64,
    /// `CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE` (3.0) or 0 when unknown.
    pub preferred_wg_multiple: usize,
    /// `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`, or `None` before OpenCL 3.0.
    pub atomic_memory_capabilities: Option<u64>,
    /// `CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT`, or `None` before OpenCL 3.0.
    pub wg_collectives: Option<bool>,
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
            wait_before_read: raw.vendor_id == 0x10de,
            poll_read: raw.platform.contains("Portable Computing Language"),
        },
    }
}

/// A capability mask: names capabilities to remove so every algorithm path can run on any device.
/// A mask only removes; it never adds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Mask {
    /// `no-atomics`: no atomics of any kind (int or float, global or local).
    pub no_atomics: bool,
    /// `no-local-atomics`: no atomics on `__local`.
    pub no_local_atomics: bool,
    /// `no-global-atomics`: no atomics on `__global` (last-work-group detection then needs none either: it is removed too).
    pub no_global_atomics: bool,
    /// `no-int64-atomics`: no 64-bit integer atomics.
    pub no_int64_atomics: bool,
    /// `no-float-atomics`: no cl_ext_float_atomics.
    pub no_float_atomics: bool,
    /// `no-group-reduce`: no work-group collective functions.
    pub no_group_reduce: bool,
    /// `no-subgroups`: no sub-groups.
    pub no_subgroups: bool,
    /// `no-c11-atomics`: no OpenCL C 2.0 atomics/fences (forces the OpenCL 1.2 last-group path).
    pub no_c11_atomics: bool,
    /// `no-fp64`: no double precision.
    pub no_fp64: bool,
}

impl Mask {
    pub const NAMES: [&'static str; 9] = [
        "no-atomics",
        "no-local-atomics",
        "no-global-atomics",
        "no-int64-atomics",
        "no-float-atomics",
        "no-group-reduce",
        "no-subgroups",
        "no-c11-atomics",
        "no-fp64",
    ];

    /// Parses a comma-separated list (`no-atomics,no-subgroups`); empty or `none` is no mask.
    pub fn parse(s: &str) -> crate::Result<Mask> {
        let mut m = Mask::default();
        for part in s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "none")
        {
            match part {
                "no-atomics" => m.no_atomics = true,
                "no-local-atomics" => m.no_local_atomics = true,
                "no-global-atomics" => m.no_global_atomics = true,
                "no-int64-atomics" => m.no_int64_atomics = true,
                "no-float-atomics" => m.no_float_atomics = true,
                "no-group-reduce" => m.no_group_reduce = true,
                "no-subgroups" => m.no_subgroups = true,
                "no-c11-atomics" => m.no_c11_atomics = true,
                "no-fp64" => m.no_fp64 = true,
                other => {
                    return Err(crate::Error::UnknownMask {
                        name: other.to_string(),
                        known: Mask::NAMES.to_vec(),
                    })
                }
            }
        }
        Ok(m)
    }

    /// The mask named by `CLREDUCE_MASK`, or no mask.
    pub fn from_env() -> crate::Result<Mask> {
        match std::env::var("CLREDUCE_MASK") {
            Ok(s) => Mask::parse(&s),
            Err(_) => Ok(Mask::default()),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Mask::default()
    }

    pub fn names(&self) -> Vec<&'static str> {
        let flags = [
            self.no_atomics,
            self.no_local_atomics,
            self.no_global_atomics,
            self.no_int64_atomics,
            self.no_float_atomics,
            self.no_group_reduce,
            self.no_subgroups,
            self.no_c11_atomics,
            self.no_fp64,
        ];
        Mask::NAMES
            .iter()
            .zip(flags)
            .filter(|(_, f)| *f)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Returns `caps` with the masked capabilities removed (and noted in `removed`).
    pub fn apply(&self, caps: &DeviceCaps) -> DeviceCaps {
        let mut c = caps.clone();
        let a = &mut c.atomics;
        let note = |removed: &mut Vec<String>, what: &str| removed.push(format!("{what}: masked"));
        if self.no_atomics || self.no_global_atomics {
            a.int32_global_base = false;
            a.int32_global_ext = false;
            a.f32_global_add = false;
            a.f32_global_minmax = false;
            a.f64_global_add = false;
            a.f64_global_minmax = false;
        }
        if self.no_atomics || self.no_local_atomics {
            a.int32_local_base = false;
            a.int32_local_ext = false;
            a.f32_local_add = false;
            a.f32_local_minmax = false;
            a.f64_local_add = false;
            a.f64_local_minmax = false;
        }
        if self.no_atomics
            || self.no_int64_atomics
            || self.no_global_atomics
            || self.no_local_atomics
        {
            // 64-bit atomics cover both spaces with one extension; removing either space removes them.
            a.int64_base = false;
            a.int64_ext = false;
        }
        if self.no_float_atomics {
            a.f32_global_add = false;
            a.f32_local_add = false;
            a.f32_global_minmax = false;
            a.f32_local_minmax = false;
            a.f64_global_add = false;
            a.f64_local_add = false;
            a.f64_global_minmax = false;
            a.f64_local_minmax = false;
        }
        if self.no_atomics || self.no_c11_atomics {
            a.order_acq_rel = false;
            a.scope_device = false;
            c.acq_rel_ptx = false;
        }
        if self.no_group_reduce {
            c.work_group_collectives = false;
        }
        if self.no_subgroups {
            c.sub_groups = None;
            c.warp_shuffle_ptx = false;
        }
        if self.no_fp64 {
            c.fp64 = false;
            c.atomics.f64_global_add = false;
            c.atomics.f64_local_add = false;
            c.atomics.f64_global_minmax = false;
            c.atomics.f64_local_minmax = false;
        }
        for name in self.names() {
            note(&mut c.removed, name);
        }
        c
    }
}

/// Hand-built capability sets of real devices, for planning tests without a device. Each is
/// written from the device's documented or `clinfo`-reported capabilities.
pub mod fixtures {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn mask_only_removes() {
        for (_, caps) in fixtures::all() {
            for name in Mask::NAMES {
                let m = Mask::parse(name).unwrap();
                let masked = m.apply(&caps);
                for op in Op::ALL {
                    for ty in ElemType::REDUCIBLE {
                        for sp in [Space::Global, Space::Local] {
                            assert!(
                                !masked.fast_atomic(op, ty, sp) || caps.fast_atomic(op, ty, sp)
                            );
                        }
                        assert!(!masked.wg_reduce(op, ty) || caps.wg_reduce(op, ty));
                        assert!(!masked.sg_reduce(op, ty) || caps.sg_reduce(op, ty));
                    }
                }
                assert!(!masked.c11_atomics() || caps.c11_atomics());
                assert!(masked.removed.iter().any(|r| r.starts_with(name)));
            }
        }
        let m = Mask::parse("no-atomics")
            .unwrap()
            .apply(&fixtures::intel_cpu());
        assert!(!m.fast_atomic(Op::Plus, ElemType::I32, Space::Global));
        assert!(!m.fast_atomic(Op::Plus, ElemType::F32, Space::Local));
    }

    #[test]
    fn mask_parse_rejects_unknown() {
        assert!(matches!(
            Mask::parse("no-atomics,bogus"),
            Err(crate::Error::UnknownMask { .. })
        ));
        assert!(Mask::parse("").unwrap().is_empty());
        assert!(
            Mask::parse("no-subgroups, no-group-reduce")
                .unwrap()
                .no_group_reduce
        );
    }
}
