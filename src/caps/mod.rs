//! Capabilities: what a device can do, as plain data.
//!
//! [`DeviceCaps`] is filled in exactly one place, `translate`, from a [`RawDeviceInfo`] (the
//! raw answers of OpenCL's `clGetDeviceInfo` queries), then checked by probe kernels
//! (`runtime::probe`) and narrowed by a [`Mask`]. It is an ordinary value: tests build it by
//! hand ([`fixtures`]) so planning can be tested without a device.
//!
//! This room owns the capability types; it imports only `ops` and `types`.

testkit! { mod fixtures; }
mod mask;
mod translate;

pub use mask::Mask;
testkit! { use translate::{translate, RawDeviceInfo}; }

use crate::ops::{Atomic, Op};
use crate::types::ElemType;
use serde::Serialize;

/// What kind of device this is (`CL_DEVICE_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// `CL_DEVICE_TYPE_CPU`.
    Cpu,
    /// `CL_DEVICE_TYPE_GPU`.
    Gpu,
    /// `CL_DEVICE_TYPE_ACCELERATOR`.
    Accelerator,
    /// None of the above (e.g. `CL_DEVICE_TYPE_CUSTOM`).
    Other,
}

/// Address space of an atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    /// `__global` memory: the result and partials, shared by all work-groups.
    Global,
    /// `__local` memory: shared by the work-items of one work-group.
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
///
/// A device's capabilities come from [`Device::caps`](crate::Device::caps) (no mask) or
/// [`Queue::caps`](crate::Queue::caps) (the queue's mask applied); [`fixtures`] holds those of
/// real devices, for planning without one.
///
/// ```
/// use clreduce::caps::{fixtures, Space};
/// use clreduce::{ElemType, Op};
/// let h200 = fixtures::nvidia_h200();
/// assert!(h200.fast_atomic(Op::Plus, ElemType::U32, Space::Global));
/// assert!(!h200.fast_atomic(Op::Plus, ElemType::F32, Space::Global)); // no float atomics
/// assert!(h200.supports_type(ElemType::F64).is_ok());
/// assert!(fixtures::pocl_cpu().supports_type(ElemType::F16).is_ok()); // vload_half is core
/// ```
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
    /// Half precision arithmetic: `cl_khr_fp16` (not needed for f16 buffers, which are read
    /// as float with `vload_half`).
    pub fp16: bool,
    /// Fast atomics per operation, type and address space.
    pub atomics: AtomicCaps,
    /// Capabilities that were advertised but removed, each with the reason (failed probe or mask).
    pub removed: Vec<String>,
    /// Named driver workarounds in force for this device.
    pub workarounds: Workarounds,
    /// Consecutive 16-bit elements a work-item loads at once where a body reads them at `[i]`
    /// in grid-stride order: the planner's default for `Plan::vec` (design/decisions.md
    /// section 49). GPUs 2 (one warp load then moves as many bytes as the f32 sum's), CPUs 1
    /// (their work-items stream contiguous chunks the compiler vectorizes).
    /// `CLREDUCE_VEC=1|2|4|8` overrides it for every device of a process, for measuring.
    pub narrow_vec: usize,
}

/// The widths of the vector step the kernels are built for (`DeviceCaps::narrow_vec`,
/// `CLREDUCE_VEC`, `CLREDUCE_TUNE=vec=N`).
pub(crate) const NARROW_VECS: [usize; 4] = [1, 2, 4, 8];

/// `CLREDUCE_VEC`: the [`DeviceCaps::narrow_vec`] every device of this process takes instead
/// of its own, for measuring (the bench reads no per-launch override); `None` when unset or
/// empty, [`Error::UnknownName`](crate::Error::UnknownName) when not 1, 2, 4 or 8.
pub(crate) fn vec_override() -> crate::Result<Option<usize>> {
    match std::env::var("CLREDUCE_VEC") {
        Ok(v) if !v.trim().is_empty() => match v.trim().parse::<usize>() {
            Ok(w) if NARROW_VECS.contains(&w) => Ok(Some(w)),
            _ => Err(crate::Error::UnknownName {
                kind: "CLREDUCE_VEC",
                name: v,
                known: vec!["1", "2", "4", "8"],
            }),
        },
        _ => Ok(None),
    }
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
    /// NVIDIA's OpenCL (driver 580.159.04, H200), session 4: on a queue without profiling, a
    /// blocking 4-byte read enqueued behind a running kernel returned later than waiting for
    /// the kernel and then reading on the idle queue (2^20 f32 sum 23.2-24.0 us with the wait vs
    /// 27.2-28.0 us without, design/bench/2026-11-23-h200-2e20-repeats.txt). Off since session 9:
    /// with the read polled into pinned memory (`spin_poll_read`, `pinned_reads`) the wait
    /// costs 5.5 us at 2^10 and saves about 1 us at 2^20 (design/decisions.md section 49). No
    /// device sets it now; `CLREDUCE_READ_PATH=wait=1` still waits (queues without profiling).
    pub wait_before_read: bool,
    /// NVIDIA's OpenCL (driver 580.159.04, H200): reads and waits poll their event spinning
    /// (`std::hint::spin_loop`, up to 1 ms, then block) instead of blocking at once; with
    /// `pinned_reads`, `queue.sum` at 2^10 took 18.9-19.6 us call to result against 25.5-26.6
    /// us blocking (examples/read_path_ab.rs, medians of 500, design/decisions.md section 49).
    /// A GPU's runtime needs no host core, so spinning costs only the waiting thread's.
    pub spin_poll_read: bool,
    /// NVIDIA's OpenCL: reads of up to 64 bytes land in pinned host memory (a mapped
    /// `CL_MEM_ALLOC_HOST_PTR` buffer of the queue) and are copied out; a read into pageable
    /// memory was polled no faster than a blocking one (35-38 us at 2^10) and pinned
    /// reads 0.96-0.97x the blocking path even alone (section 49).
    pub pinned_reads: bool,
    /// NVIDIA's OpenCL: a launch of at least `readpath::FLUSH_MIN_ITEMS` work-items is flushed
    /// right after its enqueue, so the device starts it while the host enqueues the read:
    /// `queue.sum` at 2^20 23.2-25.3 us with the flush vs 27.0-27.2 us without, while at 2^10
    /// (one work-group) the flush costs 2.3-2.9 us (section 49).
    pub flush_long_launches: bool,
    /// NVIDIA's OpenCL (driver 580.159.04, H200): a shortcut's result comes back with no read
    /// command. The launch's last work-group stores the result, a system-scope fence
    /// (`membar.sys`) and a sequence number into a host mailbox (a slot of a pinned, mapped
    /// `CL_MEM_ALLOC_HOST_PTR` page of the queue, passed as an address: the device reaches
    /// pinned memory through unified addressing), and the host spins on the sequence number,
    /// falling back to the read after the poll budget. Outside the OpenCL memory model, so a
    /// queue's first mailbox is checked against the read, and a mismatch turns them off.
    /// A raw sum at 2^10: 10.5-11.9 us against 18.5-23.2 us for the pinned spin-polled read
    /// (examples/mailbox_probe.rs); `queue.sum` 15.6-16.4 us at 2^10..2^20 against 20.5-21.5
    /// us with `mailbox=0` (examples/read_path_ab.rs, design/decisions.md section 56).
    pub host_mailbox: bool,
    /// PoCL (3.1, pthread driver): a blocking read, or a wait on an event, returns late: a
    /// 4-byte blocking read on an idle queue takes 99 us, and after a 1-work-item kernel,
    /// enqueue + blocking read takes 112 us against 34 us when the read is non-blocking and
    /// its event is polled (examples/latency.rs on the 2-core dev machine). A read, and
    /// `ReduceEvent::wait`, poll the event (yielding the thread between polls) for up to
    /// `POLL_READ_BUDGET_US` and then block; `CLREDUCE_POLL_READ_US` overrides the budget
    /// (0: off). design/decisions.md section 26.
    pub poll_read: bool,
    /// PoCL keeps its own kernel cache (`~/.cache/pocl`), keyed by the program's source: a
    /// program made from a binary misses it and compiles its kernels again at their first
    /// launch, so clreduce's program cache on disk (`runtime/disk_cache.rs`) would double a
    /// first run's compiles there instead of saving any (design/decisions.md section 63).
    /// The disk cache is not used on such a device.
    pub own_program_cache: bool,
}

/// How long a read polls its event before it blocks, where `Workarounds::poll_read` is on.
/// The polling thread competes with the runtime's worker threads for the CPU's cores: with a
/// budget of 1000 us, PoCL's 2^20-2^22 f32 sums on 2 cores took up to 1.5x longer, while
/// kernels shorter than this budget return as soon as they end (design/decisions.md
/// section 26).
pub(crate) const POLL_READ_BUDGET_US: u64 = 100;

/// The `-cl-std` an OpenCL C dialect needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClStd {
    /// OpenCL C 1.2.
    Cl12,
    /// OpenCL C 2.0.
    Cl20,
    /// OpenCL C 3.0.
    Cl30,
}

impl ClStd {
    /// The build option that selects it, e.g. `-cl-std=CL2.0`.
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

    /// Whether `CL_DEVICE_EXTENSIONS` lists `ext` (exact name, e.g. `cl_khr_fp64`).
    pub fn has_extension(&self, ext: &str) -> bool {
        self.extensions.iter().any(|e| e == ext)
    }

    /// Whether the sub-group step runs on PTX warp shuffles (NVIDIA) rather than OpenCL sub-groups.
    pub fn sg_via_ptx(&self) -> bool {
        self.sub_groups.is_none() && self.warp_shuffle_ptx
    }

    /// Whether this is NVIDIA's OpenCL: vendor id 0x10de, or "NVIDIA" in the platform name.
    pub fn is_nvidia(&self) -> bool {
        self.vendor_id == 0x10de || self.platform.contains("NVIDIA")
    }

    /// Whether the device has a hardware atomic for `op` on `ty` in `space`: the family the op
    /// needs is the op's (`Op::atomic`: logical and/or map to and/or on values normalised to
    /// 0/1, integers only; multiplies has no atomic anywhere), its presence the device's.
    pub fn fast_atomic(&self, op: Op, ty: ElemType, space: Space) -> bool {
        let a = &self.atomics;
        let local = space == Space::Local;
        let Some(kind) = op.atomic(ty) else {
            return false;
        };
        match (kind, ty) {
            (Atomic::IntAdd, ElemType::I64 | ElemType::U64) => a.int64_base,
            (Atomic::IntExtended, ElemType::I64 | ElemType::U64) => a.int64_ext,
            (Atomic::IntAdd, _) if local => a.int32_local_base,
            (Atomic::IntAdd, _) => a.int32_global_base,
            (Atomic::IntExtended, _) if local => a.int32_local_ext,
            (Atomic::IntExtended, _) => a.int32_global_ext,
            (Atomic::FloatAdd, ElemType::F64) if local => a.f64_local_add,
            (Atomic::FloatAdd, ElemType::F64) => a.f64_global_add,
            (Atomic::FloatMinMax, ElemType::F64) if local => a.f64_local_minmax,
            (Atomic::FloatMinMax, ElemType::F64) => a.f64_global_minmax,
            (Atomic::FloatAdd, _) if local => a.f32_local_add,
            (Atomic::FloatAdd, _) => a.f32_global_add,
            (Atomic::FloatMinMax, _) if local => a.f32_local_minmax,
            (Atomic::FloatMinMax, _) => a.f32_global_minmax,
        }
    }

    /// Whether `work_group_reduce_*`/`work_group_all/any` can compute this op on this type.
    pub fn wg_reduce(&self, op: Op, ty: ElemType) -> bool {
        self.work_group_collectives
            && !ty.is_storage()
            && matches!(
                op,
                Op::Plus | Op::Minimum | Op::Maximum | Op::LogicalAnd | Op::LogicalOr
            )
    }

    /// Whether `sub_group_reduce_*` (or the non-uniform arithmetic variants) can compute this op.
    pub fn sg_reduce(&self, op: Op, ty: ElemType) -> bool {
        if ty.is_storage() {
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

    /// Whether the type can be used on the device at all; `Err` names what the device lacks
    /// (`cl_khr_fp64` for f64). The 16-bit storage types work everywhere: f16 is read with core
    /// OpenCL's `vload_half`, bf16 by a shift, neither needs `cl_khr_fp16`.
    pub fn supports_type(&self, ty: ElemType) -> Result<(), &'static str> {
        match ty {
            ElemType::F64 if !self.fp64 => Err("double precision (cl_khr_fp64)"),
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
