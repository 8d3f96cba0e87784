//! The one error type of clreduce. Every variant carries the values involved, so a message can
//! say what went wrong and what to do, and a program can match on it.

use crate::types::{ElemType, Value};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, with the data needed to understand it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// An OpenCL API call returned an error code.
    #[error("OpenCL call {call} failed with {code} ({})", cl_error_name(*.code))]
    Cl { call: &'static str, code: i32 },

    /// No OpenCL platform or device could be found at all.
    #[error("no OpenCL device found ({detail}); run scripts/setup.sh and `source scripts/env.sh`, or set OCL_ICD_VENDORS")]
    NoDevices { detail: String },

    /// A device was asked for (by index or name) that does not exist.
    #[error("no OpenCL device matches {wanted:?}; devices found:\n{}", .found.join("\n"))]
    DeviceNotFound { wanted: String, found: Vec<String> },

    /// A device name that matches more than one device at the first rule that matches any
    /// (`rule`: "exact name", "platform name", "device name" or "platform / name"); `matches`
    /// lists them as "  INDEX: platform / name" lines.
    #[error("device {wanted:?} is ambiguous: its {rule} matches {} devices; give an index or more of the name:\n{}", .matches.len(), .matches.join("\n"))]
    AmbiguousDevice {
        wanted: String,
        rule: &'static str,
        matches: Vec<String>,
    },

    /// An OpenCL C program failed to build. `log` is the compiler's full build log; `generated` is
    /// the generated source (numbered by [`Error::source_listing`]).
    #[error("OpenCL build failed on {device} with options `{options}`:\n{log}")]
    Build {
        device: String,
        options: String,
        log: String,
        generated: String,
    },

    /// A user kernel body failed to compile: the log's line numbers are mapped back to the body.
    #[error("kernel body does not compile on {device}:\n{log}")]
    BodyBuild {
        device: String,
        options: String,
        log: String,
        generated: String,
    },

    /// An nd_range whose global size is not a multiple of its local size (SYCL errc::nd_range).
    #[error("nd_range global size {global:?} is not a multiple of local size {local:?} (SYCL errc::nd_range)")]
    NdRangeNotDivisible {
        global: Vec<usize>,
        local: Vec<usize>,
    },

    /// A work-group size the device or this kernel cannot run (SYCL errc::nd_range).
    #[error("work-group size {local} is too large: {limit_name} is {limit} on {device} (SYCL errc::nd_range)")]
    WorkGroupTooLarge {
        local: usize,
        limit: usize,
        limit_name: &'static str,
        device: String,
    },

    /// A zero-sized work-group, or a dimension mismatch.
    #[error("invalid range: {reason}")]
    InvalidRange { reason: String },

    /// The local memory the plan needs exceeds the device's local memory (SYCL errc::nd_range).
    #[error("work-group of {local} items needs {need} bytes of local memory for its reductions ({detail}), but {device} has {have} (SYCL errc::nd_range)")]
    LocalMemory {
        local: usize,
        need: u64,
        have: u64,
        detail: String,
        device: String,
    },

    /// A buffer's element type does not match what the reduction or argument needs.
    #[error("type mismatch for {name}: expected {expected}, found {found}")]
    TypeMismatch {
        name: String,
        expected: ElemType,
        found: ElemType,
    },

    /// A result buffer is too short for the reduction (span length or at least one element).
    #[error("buffer {name} has {len} elements but the reduction needs {need}")]
    BufferTooShort {
        name: String,
        len: usize,
        need: usize,
    },

    /// The op has no identity for this type and none was given, but one is required.
    #[error("{op} has no known identity for {ty} and none was given; {needed_for}")]
    NoIdentity {
        op: String,
        ty: ElemType,
        needed_for: &'static str,
    },

    /// A forced strategy (or type) that the device cannot run; names what is missing.
    #[error("{what} cannot run on {device}: {missing}")]
    Unsupported {
        what: String,
        missing: String,
        device: String,
    },

    /// `CLREDUCE_MASK` or the mask API named a capability that does not exist.
    #[error("unknown capability mask {name:?}; known masks: {}", .known.join(", "))]
    UnknownMask {
        name: String,
        known: Vec<&'static str>,
    },

    /// `CLREDUCE_STRATEGY` or the strategy API named a strategy that does not exist.
    #[error("unknown strategy {name:?}; expected GROUP+CROSS with GROUP one of {} and CROSS one of {}, or auto", .groups.join(", "), .crosses.join(", "))]
    UnknownStrategy {
        name: String,
        groups: Vec<&'static str>,
        crosses: Vec<&'static str>,
    },

    /// An op or type name that does not exist (CLI and string parsing).
    #[error("unknown {kind} {name:?}; known: {}", .known.join(", "))]
    UnknownName {
        kind: &'static str,
        name: String,
        known: Vec<&'static str>,
    },

    /// A kernel argument name is bound twice, clashes with a reserved name, or is not a valid identifier.
    #[error("kernel argument {name:?}: {problem}")]
    BadArgument { name: String, problem: String },

    /// A reducer was used with an operator its op does not allow (SYCL's reducer interface).
    #[error("reducer {name} uses `{operator}`, which {op} does not allow; use combine({name}, v)")]
    ReducerOperator {
        name: String,
        operator: String,
        op: String,
    },

    /// A buffer belongs to another device, or another queue, than the launch that uses it.
    #[error("buffer {name} belongs to {buffer_device}, not to {queue_device}: create it with the queue that runs the launch")]
    ForeignBuffer {
        name: String,
        buffer_device: String,
        queue_device: String,
    },

    /// Device memory could not be allocated.
    #[error("could not allocate {bytes} bytes on {device}: {} ({code})", cl_error_name(*.code))]
    Alloc {
        bytes: usize,
        device: String,
        code: i32,
    },

    /// A buffer (or the queue's scratch memory) larger than the device can hold, refused
    /// before anything is allocated: above `CL_DEVICE_MAX_MEM_ALLOC_SIZE` on its own, or above
    /// `CL_DEVICE_GLOBAL_MEM_SIZE` together with the `in_use` bytes this process already holds
    /// in buffers on that device. `bytes` saturates at `u64::MAX` when the size overflows.
    #[error("{}", alloc_too_large(*.bytes, *.limit, .limit_name, *.in_use, .device))]
    AllocTooLarge {
        bytes: u64,
        limit: u64,
        limit_name: &'static str,
        in_use: u64,
        device: String,
    },

    /// The device ran out of memory while it ran or moved data: an OpenCL call returned
    /// `CL_MEM_OBJECT_ALLOCATION_FAILURE` (-4), or `CL_OUT_OF_RESOURCES` (-5) from a command
    /// that moves buffer memory (read, write, fill, copy). Drivers that allocate at first use
    /// (NVIDIA) report it here rather than at buffer creation. `in_use`: the bytes this process
    /// holds in buffers on the device; `global_mem`: `CL_DEVICE_GLOBAL_MEM_SIZE`.
    #[error("out of device memory on {device}: {call} failed with {code} ({}); this process holds {in_use} bytes in buffers there, of CL_DEVICE_GLOBAL_MEM_SIZE {global_mem}", cl_error_name(*.code))]
    OutOfDeviceMemory {
        call: &'static str,
        code: i32,
        in_use: u64,
        global_mem: u64,
        device: String,
    },

    /// A custom combiner's declared identity is not neutral: the combiner over `a` and `b`,
    /// one of them the identity and the other `want`, a sample value of the type, gives `got`
    /// instead of `want` (checked with the host evaluator, `clreduce::check::expr`).
    #[error("{identity} is not an identity of the combiner `{expr}` on {ty}: with a = {a}, b = {b} it gives {got}, not {want}")]
    NotAnIdentity {
        expr: String,
        ty: ElemType,
        identity: Value,
        a: Value,
        b: Value,
        got: Value,
        want: Value,
    },

    /// Device time was asked of a reduction whose queue records no profiling timestamps.
    #[error("device time needs profiling, which the queue on {device} was created without: use Queue::with_profiling()")]
    ProfilingDisabled { device: String },

    /// A host slice length does not match the device buffer it is read into or written from.
    #[error("length mismatch: buffer has {buffer} elements, host slice has {host}")]
    LengthMismatch { buffer: usize, host: usize },

    /// An exact-sum accumulator (`exact::Superacc`) was given limbs, a value or a type it cannot
    /// hold: a limb array of the wrong length or with a negative counter, a deposit off its
    /// grid or beyond its digits, a merge of two formats, or an integer type.
    #[error("exact accumulator: {reason}")]
    Superacc { reason: String },

    /// An MPI reduction (feature `mpi`) could not combine: a rank failed before the exchange
    /// (every rank returns this error, naming the first rank that failed and its error), or the
    /// ranks' reductions disagree (different variables, ops or types).
    #[error("MPI reduction: rank {rank}: {reason}")]
    Mpi { rank: i32, reason: String },
}

impl Error {
    /// The generated OpenCL C source behind a build failure, with line numbers, if any.
    pub fn source_listing(&self) -> Option<String> {
        match self {
            Error::Build { generated, .. } | Error::BodyBuild { generated, .. } => Some(
                generated
                    .lines()
                    .enumerate()
                    .map(|(i, l)| format!("{:5} | {l}\n", i + 1))
                    .collect(),
            ),
            _ => None,
        }
    }

    pub(crate) fn cl(call: &'static str) -> impl FnOnce(opencl3::error_codes::ClError) -> Error {
        move |e| Error::Cl { call, code: e.0 }
    }
}

/// The message of [`Error::AllocTooLarge`].
fn alloc_too_large(bytes: u64, limit: u64, limit_name: &str, in_use: u64, device: &str) -> String {
    let what = if bytes == u64::MAX {
        "a buffer whose size overflows 64 bits".to_string()
    } else {
        format!("{bytes} bytes")
    };
    if in_use > 0 && limit_name == "CL_DEVICE_GLOBAL_MEM_SIZE" {
        format!(
            "cannot allocate {what} on {device}: with the {in_use} bytes this process already holds there, that is more than {limit_name} ({limit})"
        )
    } else {
        format!("cannot allocate {what} on {device}: {limit_name} is {limit}")
    }
}

/// The symbolic name of an OpenCL error code.
pub fn cl_error_name(code: i32) -> &'static str {
    match code {
        0 => "CL_SUCCESS",
        -1 => "CL_DEVICE_NOT_FOUND",
        -2 => "CL_DEVICE_NOT_AVAILABLE",
        -3 => "CL_COMPILER_NOT_AVAILABLE",
        -4 => "CL_MEM_OBJECT_ALLOCATION_FAILURE",
        -5 => "CL_OUT_OF_RESOURCES",
        -6 => "CL_OUT_OF_HOST_MEMORY",
        -7 => "CL_PROFILING_INFO_NOT_AVAILABLE",
        -11 => "CL_BUILD_PROGRAM_FAILURE",
        -13 => "CL_MISALIGNED_SUB_BUFFER_OFFSET",
        -14 => "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
        -30 => "CL_INVALID_VALUE",
        -32 => "CL_INVALID_PLATFORM",
        -33 => "CL_INVALID_DEVICE",
        -34 => "CL_INVALID_CONTEXT",
        -36 => "CL_INVALID_COMMAND_QUEUE",
        -38 => "CL_INVALID_MEM_OBJECT",
        -42 => "CL_INVALID_BINARY",
        -43 => "CL_INVALID_BUILD_OPTIONS",
        -44 => "CL_INVALID_PROGRAM",
        -45 => "CL_INVALID_PROGRAM_EXECUTABLE",
        -46 => "CL_INVALID_KERNEL_NAME",
        -48 => "CL_INVALID_KERNEL",
        -49 => "CL_INVALID_ARG_INDEX",
        -50 => "CL_INVALID_ARG_VALUE",
        -51 => "CL_INVALID_ARG_SIZE",
        -52 => "CL_INVALID_KERNEL_ARGS",
        -53 => "CL_INVALID_WORK_DIMENSION",
        -54 => "CL_INVALID_WORK_GROUP_SIZE",
        -55 => "CL_INVALID_WORK_ITEM_SIZE",
        -56 => "CL_INVALID_GLOBAL_OFFSET",
        -57 => "CL_INVALID_EVENT_WAIT_LIST",
        -58 => "CL_INVALID_EVENT",
        -59 => "CL_INVALID_OPERATION",
        -61 => "CL_INVALID_BUFFER_SIZE",
        -63 => "CL_INVALID_GLOBAL_WORK_SIZE",
        -1001 => "CL_PLATFORM_NOT_FOUND_KHR",
        _ => "unknown OpenCL error",
    }
}
