//! The one error type of clreduce. Every variant carries the values involved, so a message can
//! say what went wrong and what to do, and a program can match on it.

use crate::types::{ElemType, Value};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, with the data needed to understand it.
///
/// The message (`Display`) says what went wrong and, where there is one, what to do; a program
/// matches on the variant and reads its fields.
///
/// ```
/// use clreduce::caps::fixtures;
/// use clreduce::plan::{plan, FormRequest, Request, Shape, VarRequest};
/// use clreduce::{Determinism, ElemType, Error, Op, Strategy};
/// match Op::parse("median") {
///     Err(Error::UnknownName { kind, known, .. }) => {
///         assert_eq!(kind, "op");
///         assert!(known.contains(&"sum"));
///     }
///     other => panic!("{other:?}"),
/// }
/// // A work-group larger than the device allows.
/// let req = Request {
///     form: FormRequest::NdRange { global: 4096, local: 2048 },
///     shape: Shape::linear(4096, 2048),
///     vars: vec![VarRequest::new(Op::Plus, ElemType::I32)],
///     strategy: Strategy::AUTO,
///     determinism: Determinism::Deterministic,
///     tuning: None,
///     pure_body: true,
///     narrow_reads: false,
/// };
/// match plan(&fixtures::nvidia_h200(), &req) {
///     Err(e @ Error::WorkGroupTooLarge { limit, .. }) => {
///         assert_eq!(limit, 1024);
///         // "work-group size 2048 is too large: CL_DEVICE_MAX_WORK_GROUP_SIZE is 1024 on ..."
///         println!("{e}");
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// An OpenCL API call returned an error code.
    #[error("OpenCL call {call} failed with {code} ({})", cl_error_name(*.code))]
    Cl {
        /// The OpenCL function that failed, e.g. `"clEnqueueNDRangeKernel"`.
        call: &'static str,
        /// The OpenCL error code it returned (negative; the message gives its `CL_...` name).
        code: i32,
    },

    /// No OpenCL platform or device could be found at all.
    #[error("no OpenCL device found ({detail}); run scripts/setup.sh and `source scripts/env.sh`, or set OCL_ICD_VENDORS")]
    NoDevices {
        /// What the ICD loader said: the failed `clGetPlatformIDs` code, or that no platform
        /// has a device, with each platform whose device query failed.
        detail: String,
    },

    /// A device was asked for (by index or name) that does not exist.
    #[error("no OpenCL device matches {wanted:?}; devices found:\n{}", .found.join("\n"))]
    DeviceNotFound {
        /// The index or name as given.
        wanted: String,
        /// Every device found, as `"  INDEX: platform / name"` lines, then a line for each
        /// platform whose device query failed.
        found: Vec<String>,
    },

    /// A device name that matches more than one device at the first rule that matches any
    /// (`rule`: "exact name", "platform name", "device name" or "platform / name"); `matches`
    /// lists them as "  INDEX: platform / name" lines.
    #[error("device {wanted:?} is ambiguous: its {rule} matches {} devices; give an index or more of the name:\n{}", .matches.len(), .matches.join("\n"))]
    AmbiguousDevice {
        /// The name as given.
        wanted: String,
        /// The matching rule that found more than one device.
        rule: &'static str,
        /// The devices it matched, as `"  INDEX: platform / name"` lines.
        matches: Vec<String>,
    },

    /// An OpenCL C program failed to build. `log` is the compiler's full build log; `generated` is
    /// the generated source (numbered by [`Error::source_listing`]).
    #[error("OpenCL build failed on {device} with options `{options}`:\n{log}")]
    Build {
        /// The device it was built for (its label).
        device: String,
        /// The build options passed to `clBuildProgram`.
        options: String,
        /// The compiler's build log, as the driver gave it.
        log: String,
        /// The OpenCL C source that was built.
        generated: String,
    },

    /// A user kernel body failed to compile: the log's line numbers are mapped back to the body.
    #[error("kernel body does not compile on {device}:\n{log}")]
    BodyBuild {
        /// The device it was built for (its label).
        device: String,
        /// The build options passed to `clBuildProgram`.
        options: String,
        /// The compiler's build log, with its line numbers rewritten to lines of the body.
        log: String,
        /// The whole generated OpenCL C source, the body inside it.
        generated: String,
    },

    /// An nd_range whose global size is not a multiple of its local size (SYCL errc::nd_range).
    #[error("nd_range global size {global:?} is not a multiple of local size {local:?} (SYCL errc::nd_range)")]
    NdRangeNotDivisible {
        /// The global size, one entry per dimension.
        global: Vec<usize>,
        /// The local (work-group) size, one entry per dimension.
        local: Vec<usize>,
    },

    /// A work-group size the device or this kernel cannot run (SYCL errc::nd_range).
    #[error("work-group size {local} is too large: {limit_name} is {limit} on {device} (SYCL errc::nd_range)")]
    WorkGroupTooLarge {
        /// The work-group size asked for, in work-items.
        local: usize,
        /// The largest work-group size allowed, in work-items.
        limit: usize,
        /// Where the limit comes from: `"CL_DEVICE_MAX_WORK_GROUP_SIZE"`,
        /// `"CL_DEVICE_MAX_WORK_ITEM_SIZES[0]"` or `"CL_KERNEL_WORK_GROUP_SIZE of this kernel"`.
        limit_name: &'static str,
        /// The device (its label).
        device: String,
    },

    /// A zero-sized work-group, or a dimension mismatch.
    #[error("invalid range: {reason}")]
    InvalidRange {
        /// What is wrong, in words.
        reason: String,
    },

    /// The local memory the plan needs exceeds the device's local memory (SYCL errc::nd_range).
    #[error("work-group of {local} items needs {need} bytes of local memory for its reductions ({detail}), but {device} has {have} (SYCL errc::nd_range)")]
    LocalMemory {
        /// The work-group size, in work-items.
        local: usize,
        /// The local memory the plan needs, in bytes.
        need: u64,
        /// `CL_DEVICE_LOCAL_MEM_SIZE`, in bytes.
        have: u64,
        /// What the bytes are for, per reduction.
        detail: String,
        /// The device (its label).
        device: String,
    },

    /// A buffer's element type does not match what the reduction or argument needs.
    #[error("type mismatch for {name}: expected {expected}, found {found}")]
    TypeMismatch {
        /// What has the wrong type (a reducer, a custom op's identity, a value).
        name: String,
        /// The type it needs.
        expected: ElemType,
        /// The type it has.
        found: ElemType,
    },

    /// A result buffer is too short for the reduction (span length or at least one element).
    #[error("buffer {name} has {len} elements but the reduction needs {need}")]
    BufferTooShort {
        /// The reducer's name (`"NAME (index buffer)"` for an argmin/argmax index buffer).
        name: String,
        /// The buffer's length, in elements.
        len: usize,
        /// The elements the reduction needs.
        need: usize,
    },

    /// The op has no identity for this type and none was given, but one is required.
    #[error("{op} has no known identity for {ty} and none was given; {needed_for}")]
    NoIdentity {
        /// The op, e.g. `"custom(a * b)"`.
        op: String,
        /// The element type.
        ty: ElemType,
        /// What needed the identity, e.g. `"initialize_to_identity"`.
        needed_for: &'static str,
    },

    /// A forced strategy (or type) that the device cannot run; names what is missing.
    #[error("{what} cannot run on {device}: {missing}")]
    Unsupported {
        /// What was asked for, e.g. `"cross-group step atomic for sum on f64"`.
        what: String,
        /// What the device lacks, or why it cannot be done there.
        missing: String,
        /// The device (its label).
        device: String,
    },

    /// `CLREDUCE_MASK` or the mask API named a capability that does not exist.
    #[error("unknown capability mask {name:?}; known masks: {}", .known.join(", "))]
    UnknownMask {
        /// The name as given.
        name: String,
        /// Every mask name there is ([`Mask::NAMES`](crate::Mask::NAMES)).
        known: Vec<&'static str>,
    },

    /// `CLREDUCE_STRATEGY` or the strategy API named a strategy that does not exist.
    #[error("unknown strategy {name:?}; expected GROUP+CROSS with GROUP one of {} and CROSS one of {}, or auto", .groups.join(", "), .crosses.join(", "))]
    UnknownStrategy {
        /// The strategy as given.
        name: String,
        /// Every work-group step name ([`GroupAlgo`](crate::GroupAlgo)).
        groups: Vec<&'static str>,
        /// Every cross-group step name ([`CrossAlgo`](crate::CrossAlgo)).
        crosses: Vec<&'static str>,
    },

    /// An op or type name that does not exist (CLI and string parsing).
    #[error("unknown {kind} {name:?}; known: {}", .known.join(", "))]
    UnknownName {
        /// What kind of name: `"op"`, `"type"`, `"determinism"`, `"tuning key"`, ...
        kind: &'static str,
        /// The name as given.
        name: String,
        /// The names that exist.
        known: Vec<&'static str>,
    },

    /// A kernel argument name is bound twice, clashes with a reserved name, or is not a valid identifier.
    #[error("kernel argument {name:?}: {problem}")]
    BadArgument {
        /// The argument (or reducer) name.
        name: String,
        /// What is wrong with it.
        problem: String,
    },

    /// A reducer was used with an operator its op does not allow (SYCL's reducer interface).
    #[error("reducer {name} uses `{operator}`, which {op} does not allow; use combine({name}, v)")]
    ReducerOperator {
        /// The reducer's name.
        name: String,
        /// The operator used, e.g. `"+="`.
        operator: String,
        /// The reduction's op.
        op: String,
    },

    /// A buffer lives on another device than the launch that uses it (buffers move freely
    /// between the queues of one device, never between devices).
    #[error("buffer {name} belongs to {buffer_device}, not to {queue_device}: create it with a queue on the device that runs the launch")]
    ForeignBuffer {
        /// The argument or reducer the buffer is bound to.
        name: String,
        /// Where the buffer belongs.
        buffer_device: String,
        /// Where the launch runs.
        queue_device: String,
    },

    /// Device memory could not be allocated.
    #[error("could not allocate {bytes} bytes on {device}: {} ({code})", cl_error_name(*.code))]
    Alloc {
        /// The size asked for, in bytes.
        bytes: usize,
        /// The device (its label).
        device: String,
        /// The OpenCL error code of `clCreateBuffer`.
        code: i32,
    },

    /// A buffer (or the queue's scratch memory) larger than the device can hold, refused
    /// before anything is allocated: above `CL_DEVICE_MAX_MEM_ALLOC_SIZE` on its own, or above
    /// `CL_DEVICE_GLOBAL_MEM_SIZE` together with the `in_use` bytes this process already holds
    /// in buffers on that device. `bytes` saturates at `u64::MAX` when the size overflows.
    #[error("{}", alloc_too_large(*.bytes, *.limit, .limit_name, *.in_use, .device))]
    AllocTooLarge {
        /// The size asked for, in bytes (`u64::MAX` when it overflows).
        bytes: u64,
        /// The limit it exceeds, in bytes.
        limit: u64,
        /// `"CL_DEVICE_MAX_MEM_ALLOC_SIZE"` or `"CL_DEVICE_GLOBAL_MEM_SIZE"`.
        limit_name: &'static str,
        /// Bytes this process held in buffers on the device at the time.
        in_use: u64,
        /// The device (its label).
        device: String,
    },

    /// The device ran out of memory while it ran or moved data: an OpenCL call returned
    /// `CL_MEM_OBJECT_ALLOCATION_FAILURE` (-4), or `CL_OUT_OF_RESOURCES` (-5) from a command
    /// that moves buffer memory (read, write, fill, copy). Drivers that allocate at first use
    /// (NVIDIA) report it here rather than at buffer creation. `in_use`: the bytes this process
    /// holds in buffers on the device; `global_mem`: `CL_DEVICE_GLOBAL_MEM_SIZE`.
    #[error("out of device memory on {device}: {call} failed with {code} ({}); this process holds {in_use} bytes in buffers there, of CL_DEVICE_GLOBAL_MEM_SIZE {global_mem}", cl_error_name(*.code))]
    OutOfDeviceMemory {
        /// The OpenCL function that failed.
        call: &'static str,
        /// Its error code: -4 or -5.
        code: i32,
        /// Bytes this process held in buffers on the device at the time.
        in_use: u64,
        /// `CL_DEVICE_GLOBAL_MEM_SIZE`, in bytes (0 when the device did not say).
        global_mem: u64,
        /// The device (its label).
        device: String,
    },

    /// A custom combiner's declared identity is not neutral: the combiner over `a` and `b`,
    /// one of them the identity and the other `want`, a sample value of the type, gives `got`
    /// instead of `want` (checked with the host evaluator, `clreduce::expr`).
    #[error("{identity} is not an identity of the combiner `{expr}` on {ty}: with a = {a}, b = {b} it gives {got}, not {want}")]
    NotAnIdentity {
        /// The combiner, as given to [`CustomOp::new`](crate::CustomOp::new).
        expr: String,
        /// The element type.
        ty: ElemType,
        /// The declared identity.
        identity: Value,
        /// The combiner's `a`.
        a: Value,
        /// The combiner's `b`.
        b: Value,
        /// What the combiner gave.
        got: Value,
        /// What a neutral identity would have given (the sample value).
        want: Value,
    },

    /// Device time was asked of a reduction whose queue records no profiling timestamps.
    #[error("device time needs profiling, which the queue on {device} was created without: use Queue::with_profiling()")]
    ProfilingDisabled {
        /// The queue's device (its label).
        device: String,
    },

    /// A host slice length does not match the device buffer it is read into or written from.
    #[error("length mismatch: buffer has {buffer} elements, host slice has {host}")]
    LengthMismatch {
        /// The buffer's length, in elements.
        buffer: usize,
        /// The end of the range asked for, in elements: the offset plus the host slice's length.
        host: usize,
    },

    /// An exact-sum accumulator (`exact::Superacc`) was given limbs, a value or a type it cannot
    /// hold: a limb array of the wrong length or with a negative counter, a deposit off its
    /// grid or beyond its digits, a merge of two formats, or an integer type.
    #[error("exact accumulator: {reason}")]
    Superacc {
        /// What is wrong, in words.
        reason: String,
    },

    /// An MPI reduction (feature `mpi`) could not combine: a rank failed before the exchange
    /// (every rank returns this error, naming the first rank that failed and its error), or the
    /// ranks' reductions disagree (different variables, ops or types).
    #[error("MPI reduction: rank {rank}: {reason}")]
    Mpi {
        /// The first rank that failed (or that disagreed).
        rank: i32,
        /// Its error, or how the ranks disagree.
        reason: String,
    },

    /// The tuning cache could not be written (`clreduce tune`), or no path is known for it.
    /// Reading never fails: a missing, corrupt or stale cache is ignored with a warning.
    #[error("tuning cache {path}: {problem}")]
    TuneCache {
        /// The cache file.
        path: String,
        /// What went wrong, in words.
        problem: String,
    },

    /// A segmented or axis reduction whose segments are invalid: a zero segment length, a
    /// range that is not a whole number of segments, an extent product that overflows, fewer
    /// than two offsets, offsets that descend or pass the end of the range. Nothing is written.
    #[error("bad segments for {name}: {problem}")]
    BadSegments {
        /// The reducer whose segmentation is invalid.
        name: String,
        /// What is wrong, with the numbers.
        problem: String,
    },
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
