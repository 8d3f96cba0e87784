//! `clreduce bench`: device time, wall time and GB/s of clreduce reductions per device, case,
//! strategy and size, against a streaming-read reference measured in the same run, a native
//! multi-threaded Rust peer (CPU devices), and optionally PyOpenCL and torch/cupy (`--peers`)
//! and the classic reduction optimization ladder (`--ladder`, benches/ladder/ladder.py).
//!
//! Cases: scalar reductions TYPE-OP (`sum += x[i];`, `combine(sum, x[i]);`), three variables in
//! one launch (f32-sum-min-max), a span histogram u32-histN (`hist[(uint)x[i] & (N-1)] += 1u;`
//! into `reduction_span` of N u32 counters) and TYPE-argmin (`combine(best, x[i], i);` into
//! `reduction_argmin`). Every result is checked against a serial host reference: integers,
//! histograms and argmin exactly (argmin: the lowest index of the minimum), float sums within
//! the plan's combination-depth bound.
//!
//! What is measured, per point:
//! - device time: `ReduceEvent::device_time_ns` (first command's start to last command's end)
//!   on a queue with profiling, median and min..max over the repetitions after `--warmup`
//!   untimed ones;
//! - wall time: from just before `parallel_for_reduce_with` to the result read on the host
//!   (`DynBuffer::value`), median, in separate repetitions on the default queue, which has no
//!   profiling (as a user's; profiling costs enqueue time on some drivers);
//! - GB/s: input bytes (n x element size) / median device time;
//! - % stream: that GB/s over the device's streaming-read reference, which is clreduce itself:
//!   the fastest single repetition of a u32 bit_or reduction over the largest size benched on
//!   that device, over every strategy that plans. It is the best this library reads memory on
//!   that device, not an independent roofline (small warm sizes can exceed 100%).
//!
//! Cache state (`--cache`), stated on every point:
//! - `auto` (default): inputs up to LLC/4 rotate among K <= 16 copies that together fit in half
//!   the last-level cache (warm: the state of data a previous kernel just wrote); larger inputs
//!   are read cold, from one buffer above 2x LLC or rotating among copies that together exceed
//!   2x LLC, so no repetition finds its input in the cache;
//! - `cold`: as auto for large inputs; the warm sizes instead read one buffer after an untimed
//!   flush (a reduction over a 2x LLC scratch buffer) before every repetition.
//!
//! Repetitions: `--reps` exactly when given; else 20, and 100 for inputs up to 16 MiB, whose
//! few-microsecond medians need more samples to settle.

use clap::Args;
use clreduce::caps::{DeviceCaps, DeviceKind};
use clreduce::check::reference::{self, combination_depth, HostVec, Reference};
use clreduce::plan::{Determinism, Plan, Strategy};
use clreduce::DynBuffer;
use clreduce::{
    devices, reduction, reduction_argmin, reduction_span, Buffer, Device, ElemType, Kernel, Mask,
    Op, Options, Queue, Range, Reduction, Result, Value,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Options of `clreduce bench`.
#[derive(Args, Clone, Debug)]
pub struct BenchArgs {
    /// Device index or name substring, or `all` (default: every device that is not a simulator).
    #[arg(long)]
    device: Option<String>,
    /// Sizes: comma list of N, 2^K, or 2^A..2^B (every power of two between). Default
    /// 2^10..2^28, capped per device at max_alloc/4 and by --max-n.
    #[arg(long)]
    sizes: Option<String>,
    /// Largest n to run (N or 2^K).
    #[arg(long)]
    max_n: Option<String>,
    /// Cases: comma list of TYPE-OP (f32-sum, u32-or, i64-min, ...), f32-sum-min-max (three
    /// variables sum, lo, hi in one launch), u32-histN (a span of N u32 bins, N a power of two
    /// up to 65536: `hist[(uint)x[i] & (N-1)] += 1u;`) and TYPE-argmin (value and lowest index,
    /// `combine(best, x[i], i);`). Default:
    /// f32-sum,f64-sum,i32-sum,f32-max,f32-sum-min-max,u32-hist256,f32-argmin.
    #[arg(long)]
    cases: Option<String>,
    /// Strategies: comma list of auto and GROUP+CROSS (e.g. tree+last-group), or `all`.
    /// Default (all): auto plus every forced strategy that plans on the device; the others are
    /// listed with the reason.
    #[arg(long)]
    strategies: Option<String>,
    /// Timed repetitions per point (median reported). Default 20, 5 with --quick.
    #[arg(long)]
    reps: Option<usize>,
    /// Untimed repetitions before the timed ones (the first compiles the program).
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Write every point, the devices and the skipped strategies as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Plot GB/s against n (log2) per strategy, one panel per device and case, as SVG.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// A few sizes only (2^12, 2^16, 2^20, 2^24, capped), 5 repetitions unless --reps.
    #[arg(long)]
    quick: bool,
    /// Also run the peers and report clreduce/peer per size: PyOpenCL's ReductionKernel (f32 sum,
    /// benches/peers/pyopencl_reduction.py) on CPU devices; on an NVIDIA GPU
    /// (benches/peers/torch_cupy_sum.py) torch.sum and cupy.sum, torch sum+min+max,
    /// torch.bincount, torch.histc and cupy.bincount (u32-histN), torch.argmin and cupy.argmin.
    #[arg(long)]
    peers: bool,
    /// Instead of the sweep: the classic reduction optimization ladder (benches/ladder/ladder.py,
    /// PyOpenCL) at 2^22 and 2^26 f32 on each device, next to clreduce's auto plan.
    #[arg(long)]
    ladder: bool,
    /// Allow order-dependent float atomics (strategies that need them then plan).
    #[arg(long)]
    relaxed: bool,
    /// Capability mask for every queue (default: CLREDUCE_MASK).
    #[arg(long)]
    mask: Option<String>,
    /// Last-level cache size for the cache-state rule, e.g. 50M (default: the host CPU's from
    /// sysfs for CPU devices; CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, at least 64 MiB, for GPUs).
    #[arg(long)]
    llc: Option<String>,
    /// Skip the native Rust peer.
    #[arg(long)]
    no_native: bool,
    /// Cache state of the inputs: `auto` (warm up to LLC/4, cold above) or `cold` (also the
    /// small sizes, by an untimed flush of the LLC before every repetition).
    #[arg(long, default_value = "auto")]
    cache: String,
}

/// `--cache`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CacheMode {
    Auto,
    Cold,
}

/// Repetitions for a point of `bytes` input: `--reps` when given, else 20 (100 up to 16 MiB).
fn reps_for(given: Option<usize>, quick: bool, bytes: u64) -> usize {
    match given {
        Some(r) => r.max(1),
        None if quick => 5,
        None if bytes <= 16 << 20 => 100,
        None => 20,
    }
}

// --- sizes, cases, strategies ------------------------------------------------------------------

fn parse_n(s: &str) -> std::result::Result<u64, String> {
    let s = s.trim();
    let bad = || format!("bad size {s:?} (expected N or 2^K)");
    if let Some(k) = s.strip_prefix("2^") {
        let k: u32 = k.parse().map_err(|_| bad())?;
        if k > 40 {
            return Err(bad());
        }
        Ok(1u64 << k)
    } else {
        s.replace('_', "").parse().map_err(|_| bad())
    }
}

fn parse_sizes(s: &str) -> std::result::Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        if let Some((a, b)) = part.split_once("..") {
            let (a, b) = (parse_n(a)?, parse_n(b)?);
            if !a.is_power_of_two() || !b.is_power_of_two() || a > b {
                return Err(format!(
                    "bad size range {part:?} (expected 2^A..2^B with A <= B)"
                ));
            }
            let mut x = a;
            while x <= b {
                out.push(x);
                x <<= 1;
            }
        } else {
            out.push(parse_n(part)?);
        }
    }
    out.retain(|&n| n > 0);
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err("no sizes".into());
    }
    Ok(out)
}

fn fmt_n(n: u64) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

fn fmt_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", b as f64 / 1024.0)
    }
}

/// How a case's result variables are shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// One scalar result per entry of `vars`.
    Scalars,
    /// One span variable (`vars[0]`, op plus) of this many u32 counters: a histogram.
    Span(usize),
    /// One argmin variable (`vars[0]`, op minimum): the value in the element type and the
    /// lowest index holding it in a u64 buffer.
    ArgMin,
}

/// One benchmark case: an element type, one or more reduction variables and the body.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    ty: ElemType,
    /// The op the input data is generated for (reference::random_input).
    data_op: Op,
    vars: Vec<(Op, &'static str)>,
    shape: Shape,
    body: String,
}

const DEFAULT_CASES: &str =
    "f32-sum,f64-sum,i32-sum,f32-max,f32-sum-min-max,u32-hist256,f32-argmin";

/// Most bins a `u32-histN` case may have.
const MAX_BINS: usize = 1 << 16;

fn parse_case(s: &str) -> std::result::Result<Case, String> {
    let s = s.trim();
    if s == "f32-sum-min-max" {
        return Ok(Case {
            name: s.into(),
            ty: ElemType::F32,
            data_op: Op::Plus,
            vars: vec![(Op::Plus, "sum"), (Op::Minimum, "lo"), (Op::Maximum, "hi")],
            shape: Shape::Scalars,
            body: "sum += x[i]; combine(lo, x[i]); combine(hi, x[i]);".into(),
        });
    }
    if let Some(bins) = s.strip_prefix("u32-hist") {
        let bins: usize = bins
            .parse()
            .ok()
            .filter(|b: &usize| b.is_power_of_two() && *b <= MAX_BINS)
            .ok_or_else(|| {
                format!("bad case {s:?} (expected u32-histN, N a power of two up to {MAX_BINS})")
            })?;
        return Ok(Case {
            name: s.into(),
            ty: ElemType::U32,
            // Full-range random u32: the low bits are uniform over the bins.
            data_op: Op::BitOr,
            vars: vec![(Op::Plus, "hist")],
            shape: Shape::Span(bins),
            body: format!("hist[(uint)x[i] & {}u] += 1u;", bins - 1),
        });
    }
    if let Some(t) = s.strip_suffix("-argmin") {
        let ty = ElemType::parse(t).map_err(|e| e.to_string())?;
        return Ok(Case {
            name: format!("{ty}-argmin"),
            ty,
            // Values on a grid of 1/64 in [-64, 64): large inputs hold the minimum many times,
            // so the lowest-index rule is exercised.
            data_op: Op::Minimum,
            vars: vec![(Op::Minimum, "best")],
            shape: Shape::ArgMin,
            body: "combine(best, x[i], i);".into(),
        });
    }
    let (t, o) = s
        .split_once('-')
        .ok_or_else(|| format!("bad case {s:?} (expected TYPE-OP such as f32-sum)"))?;
    let ty = ElemType::parse(t).map_err(|e| e.to_string())?;
    let op = Op::parse(o).map_err(|e| e.to_string())?;
    let body = match op {
        Op::Plus => "sum += x[i];",
        Op::BitOr => "sum |= x[i];",
        _ => "combine(sum, x[i]);",
    };
    Ok(Case {
        name: format!("{ty}-{op}"),
        ty,
        data_op: op,
        vars: vec![(op, "sum")],
        shape: Shape::Scalars,
        body: body.into(),
    })
}

fn identity(op: Op, ty: ElemType) -> Value {
    op.identity(ty).unwrap_or(Value::I32(0))
}

/// The result buffers of one case on one queue.
struct Outs {
    /// One per variable: a scalar, a span of `len` counters, or argmin's value.
    vars: Vec<DynBuffer>,
    /// argmin's index.
    index: Option<Buffer<u64>>,
}

/// The results read back after a launch.
#[derive(Debug, Clone, PartialEq)]
enum Got {
    Scalars(Vec<Value>),
    Span(Vec<u32>),
    ArgMin(Value, u64),
}

impl Case {
    /// Allocates the result buffers, at the identity.
    fn outs(&self, q: &Queue) -> Result<Outs> {
        match self.shape {
            Shape::Scalars => Ok(Outs {
                vars: self
                    .vars
                    .iter()
                    .map(|(op, _)| DynBuffer::scalar(q, identity(*op, self.ty)))
                    .collect::<Result<Vec<_>>>()?,
                index: None,
            }),
            Shape::Span(len) => Ok(Outs {
                vars: vec![DynBuffer::U32(q.buffer_from(&vec![0u32; len])?)],
                index: None,
            }),
            Shape::ArgMin => Ok(Outs {
                vars: vec![DynBuffer::scalar(q, identity(Op::Minimum, self.ty))?],
                index: Some(q.buffer_from(&[u64::MAX])?),
            }),
        }
    }

    /// Puts the results back at the identity (a host write, untimed).
    fn reset(&self, o: &Outs) -> Result<()> {
        match (self.shape, &o.vars[..]) {
            (Shape::Span(len), [DynBuffer::U32(b)]) => b.write(0, &vec![0u32; len]),
            _ => {
                for (r, (op, _)) in o.vars.iter().zip(&self.vars) {
                    r.set(0, identity(*op, self.ty))?;
                }
                if let Some(ix) = &o.index {
                    ix.write(0, &[u64::MAX])?;
                }
                Ok(())
            }
        }
    }

    /// The reductions of one launch over `o`.
    fn reductions(&self, o: &Outs) -> Vec<Reduction> {
        match (self.shape, &o.index) {
            (Shape::Span(len), _) => vec![reduction_span(&o.vars[0], len, Op::Plus).name("hist")],
            (Shape::ArgMin, Some(ix)) => {
                vec![reduction_argmin(&o.vars[0], ix).name(self.vars[0].1)]
            }
            _ => o
                .vars
                .iter()
                .zip(&self.vars)
                .map(|(r, (op, name))| reduction(r, *op).name(name))
                .collect(),
        }
    }

    /// Reads the results (blocking).
    fn read(&self, o: &Outs) -> Result<Got> {
        match (self.shape, &o.vars[..], &o.index) {
            (Shape::Span(_), [DynBuffer::U32(b)], _) => Ok(Got::Span(b.to_vec()?)),
            (Shape::ArgMin, [v], Some(ix)) => Ok(Got::ArgMin(v.value(0)?, ix.get(0)?)),
            _ => Ok(Got::Scalars(
                o.vars
                    .iter()
                    .map(|r| r.value(0))
                    .collect::<Result<Vec<Value>>>()?,
            )),
        }
    }
}

// --- cache state -------------------------------------------------------------------------------

/// The last-level cache of the host CPU from sysfs (largest data or unified cache of cpu0).
fn sysfs_llc() -> Option<u64> {
    let mut best: Option<(u32, u64)> = None;
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    for e in dir.flatten() {
        let p = e.path();
        if !p
            .file_name()
            .is_some_and(|f| f.to_string_lossy().starts_with("index"))
        {
            continue;
        }
        let rd = |f: &str| std::fs::read_to_string(p.join(f)).ok();
        let (Some(level), Some(size), Some(ty)) = (rd("level"), rd("size"), rd("type")) else {
            continue;
        };
        if ty.trim() == "Instruction" {
            continue;
        }
        let Ok(level) = level.trim().parse::<u32>() else {
            continue;
        };
        let size = size.trim();
        let bytes = if let Some(k) = size.strip_suffix('K') {
            k.parse::<u64>().ok().map(|x| x << 10)
        } else if let Some(m) = size.strip_suffix('M') {
            m.parse::<u64>().ok().map(|x| x << 20)
        } else {
            size.parse::<u64>().ok()
        };
        if let Some(b) = bytes {
            if best.is_none_or(|(l, _)| level > l) {
                best = Some((level, b));
            }
        }
    }
    best.map(|(_, b)| b)
}

/// CL_DEVICE_GLOBAL_MEM_CACHE_SIZE of clreduce's device `index` (same enumeration order: platform
/// order, then device order; the name is checked).
fn cl_cache_size(index: usize, name: &str) -> Option<u64> {
    let mut k = 0;
    for p in opencl3::platform::get_platforms().ok()? {
        let Ok(ids) = p.get_devices(0xFFFF_FFFF) else {
            continue;
        };
        for id in ids {
            if k == index {
                let d = opencl3::device::Device::new(id);
                if d.name().ok()?.trim() != name {
                    return None;
                }
                return d.global_mem_cache_size().ok().filter(|&b| b > 0);
            }
            k += 1;
        }
    }
    None
}

const GPU_MIN_LLC: u64 = 64 << 20;

/// Bytes: N, 2^K, or N with a K, M or G suffix (binary).
fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim().trim_end_matches("iB").trim_end_matches('B');
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    parse_n(num)
        .map(|x| x * mult)
        .map_err(|_| format!("bad byte count {s:?} (expected N, 2^K, or N with K, M or G)"))
}

/// The device's last-level cache in bytes and where the number comes from.
fn llc_of(d: &Device, caps: &DeviceCaps) -> (u64, String) {
    let cl = cl_cache_size(d.index(), d.name());
    match caps.kind {
        DeviceKind::Cpu => match (sysfs_llc(), cl) {
            (Some(s), Some(c)) if c > s => (c, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".into()),
            (Some(s), _) => (s, "host CPU's last-level cache (sysfs)".into()),
            (None, Some(c)) => (c, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".into()),
            (None, None) => (32 << 20, "assumed (no cache size found)".into()),
        },
        // Drivers report less than the L2 here (NVIDIA's OpenCL reports 4.1 MiB on an H200,
        // whose L2 is 50 MB): assume at least 64 MiB, so mid sizes rotate rather than
        // pass for cold.
        _ => match cl {
            Some(c) if c >= GPU_MIN_LLC => (c, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".into()),
            Some(c) => (
                GPU_MIN_LLC,
                format!(
                    "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE says {}; at least {} assumed for a GPU's L2, --llc to set",
                    fmt_bytes(c),
                    fmt_bytes(GPU_MIN_LLC)
                ),
            ),
            None => (GPU_MIN_LLC, "assumed (no cache size found), --llc to set".into()),
        },
    }
}

/// How the inputs of a point meet the cache: how many copies to rotate among, whether to flush
/// the LLC before each repetition, and the state to print.
struct CachePlan {
    copies: usize,
    flush: bool,
    state: String,
}

fn rotation(bytes: u64, llc: u64, mode: CacheMode) -> CachePlan {
    let bytes = bytes.max(1);
    if bytes > 2 * llc {
        CachePlan {
            copies: 1,
            flush: false,
            state: "cold (> 2x LLC)".into(),
        }
    } else if bytes * 4 > llc {
        let k = (2 * llc / bytes + 1) as usize;
        CachePlan {
            copies: k,
            flush: false,
            state: format!("cold: rotating {k} buffers (together > 2x LLC)"),
        }
    } else if mode == CacheMode::Cold {
        CachePlan {
            copies: 1,
            flush: true,
            state: "cold: LLC flushed before each repetition".into(),
        }
    } else {
        let k = (llc / (2 * bytes)).clamp(1, 16) as usize;
        CachePlan {
            copies: k,
            flush: false,
            state: format!("warm: rotating {k} buffers (together <= LLC/2)"),
        }
    }
}

// --- measuring ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Serialize)]
struct Spread {
    median: u64,
    min: u64,
    max: u64,
}

fn spread(v: &mut [u64]) -> Spread {
    v.sort_unstable();
    Spread {
        median: if v.is_empty() {
            0
        } else if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2
        },
        min: v.first().copied().unwrap_or(0),
        max: v.last().copied().unwrap_or(0),
    }
}

struct Measured {
    device_ns: Spread,
    wall_ns: Spread,
    plan: Plan,
    got: Got,
    /// The interleaved peer's times (`Between::native`), when one ran.
    native_ns: Option<Spread>,
}

/// Untimed work between the repetitions of a point.
#[derive(Default)]
struct Between<'a> {
    /// Read before every repetition to evict the input from the LLC (`--cache cold`).
    flush: Option<&'a Buffer<u32>>,
    /// A peer timed right after every repetition (the native Rust sum on CPU devices), so that
    /// both see the same state of a noisy machine; returns its wall time in ns.
    native: Option<&'a mut dyn FnMut() -> Option<u64>>,
}

/// The plan's summary (`Plan::summary` names where a span keeps its copies).
fn plan_label(p: &Plan) -> String {
    p.summary()
}

/// Runs `case` over inputs[rep % K], `warmup` untimed then `reps` timed repetitions. Each
/// repetition resets the results to the identity first (untimed).
#[allow(clippy::too_many_arguments)]
fn measure(
    q: &Queue,
    case: &Case,
    n: u64,
    inputs: &[DynBuffer],
    outs: &Outs,
    opts: Options,
    warmup: usize,
    reps: usize,
    between: &mut Between,
) -> Result<Measured> {
    let mut dev = Vec::with_capacity(reps);
    let mut wall = Vec::with_capacity(reps);
    let mut native = Vec::new();
    let mut plan = None;
    let mut got = None;
    for rep in 0..warmup + reps {
        if let Some(f) = between.flush {
            q.sum(f)?;
        }
        case.reset(outs)?;
        let reds = case.reductions(outs);
        let kernel = Kernel::new(&case.body).arg("x", &inputs[rep % inputs.len()]);
        let t0 = Instant::now();
        let ev = q.parallel_for_reduce_with(Range::new(n), reds, kernel, opts)?;
        let g = case.read(outs)?;
        let w = t0.elapsed().as_nanos() as u64;
        if rep >= warmup {
            if q.is_profiling() {
                dev.push(ev.device_time_ns()?);
            }
            wall.push(w);
        }
        if let Some(peer) = between.native.as_mut() {
            if let Some(t) = peer() {
                if rep >= warmup {
                    native.push(t);
                }
            }
        }
        if plan.is_none() {
            plan = ev.plan().cloned();
        }
        got = Some(g);
    }
    Ok(Measured {
        device_ns: spread(&mut dev),
        wall_ns: spread(&mut wall),
        plan: plan.expect("n > 0 runs a plan"),
        got: got.expect("at least one repetition"),
        native_ns: (!native.is_empty()).then(|| spread(&mut native)),
    })
}

/// A point's buffers on one queue: `copies` uploads of the input (primed), the results, and the
/// flush buffer of `flush_words` u32 (`--cache cold`).
fn point_buffers(
    q: &Queue,
    case: &Case,
    n: u64,
    data: &HostVec,
    copies: usize,
    flush_words: Option<usize>,
) -> Result<(Vec<DynBuffer>, Outs, Option<Buffer<u32>>)> {
    let inputs = (0..copies)
        .map(|_| DynBuffer::upload(q, data))
        .collect::<Result<Vec<_>>>()?;
    let res = case.outs(q)?;
    prime(q, case, n, &inputs, &res)?;
    let flush = match flush_words {
        Some(w) => Some(q.buffer_from(&vec![1u32; w])?),
        None => None,
    };
    Ok((inputs, res, flush))
}

/// One untimed launch over every input copy: drivers that allocate or copy a buffer's storage
/// on its first use by a kernel would otherwise charge that to the first strategy timed.
fn prime(q: &Queue, case: &Case, n: u64, inputs: &[DynBuffer], outs: &Outs) -> Result<()> {
    for x in inputs {
        let kernel = Kernel::new(&case.body).arg("x", x);
        q.parallel_for_reduce_with(
            Range::new(n),
            case.reductions(outs),
            kernel,
            Options::default(),
        )?
        .wait()?;
    }
    Ok(())
}

/// What the host expects of a case over one input.
enum Expect {
    /// One reference per variable.
    Scalars(Vec<Reference>),
    /// The histogram.
    Span(Vec<u32>),
    /// The smallest value (None over no input) and the lowest index holding it.
    ArgMin(Option<Value>, u64),
}

/// The host's result for `case` over `data`: serial and in float64 or exact integers,
/// independent of the native peer.
fn expect(case: &Case, data: &HostVec) -> Expect {
    match case.shape {
        Shape::Scalars => Expect::Scalars(
            case.vars
                .iter()
                .map(|(op, _)| reference::reference(*op, data, None))
                .collect(),
        ),
        Shape::Span(len) => {
            let mut h = vec![0u32; len];
            if let HostVec::U32(v) = data {
                for &x in v {
                    h[x as usize & (len - 1)] += 1;
                }
            }
            Expect::Span(h)
        }
        Shape::ArgMin => {
            let (v, at) = match data {
                HostVec::I32(v) => first_min(v),
                HostVec::U32(v) => first_min(v),
                HostVec::I64(v) => first_min(v),
                HostVec::U64(v) => first_min(v),
                HostVec::F32(v) => first_min(v),
                HostVec::F64(v) => first_min(v),
            };
            Expect::ArgMin(v, at)
        }
    }
}

/// The smallest value and the lowest index holding it, serially; (the type's identity,
/// u64::MAX) for an empty slice.
fn first_min<T: Copy + PartialOrd + Into<Value>>(v: &[T]) -> (Option<Value>, u64) {
    let mut best: Option<(T, usize)> = None;
    for (i, &x) in v.iter().enumerate() {
        if best.is_none_or(|(b, _)| x < b) {
            best = Some((x, i));
        }
    }
    match best {
        Some((x, i)) => (Some(x.into()), i as u64),
        None => (None, u64::MAX),
    }
}

fn check_all(case: &Case, m: &Measured, want: &Expect) -> String {
    let mut problems = Vec::new();
    match (&m.got, want) {
        (Got::Scalars(values), Expect::Scalars(refs)) => {
            for (k, ((op, name), r)) in case.vars.iter().zip(refs).enumerate() {
                let got = values[k];
                if let Err(e) = reference::check(
                    *op,
                    case.ty,
                    got.to_f64(),
                    got.as_int(),
                    r,
                    combination_depth(&m.plan, k),
                ) {
                    problems.push(format!("{name}: {e}"));
                }
            }
        }
        (Got::Span(got), Expect::Span(want)) => {
            let bad: Vec<usize> = (0..want.len())
                .filter(|&b| got.get(b) != Some(&want[b]))
                .collect();
            if let Some(&b) = bad.first() {
                problems.push(format!(
                    "{} of {} bins differ; bin {b}: got {}, expected {}",
                    bad.len(),
                    want.len(),
                    got.get(b).map_or("nothing".into(), |v| v.to_string()),
                    want[b]
                ));
            }
        }
        (Got::ArgMin(v, at), Expect::ArgMin(wv, wat)) => {
            if wv.is_some_and(|w| w != *v) || at != wat {
                problems.push(format!(
                    "got ({}, index {at}), expected ({}, index {wat})",
                    v.to_f64(),
                    wv.map_or("identity".into(), |w| w.to_f64().to_string())
                ));
            }
        }
        (g, _) => problems.push(format!("result of the wrong shape: {g:?}")),
    }
    if problems.is_empty() {
        "ok".into()
    } else {
        format!("MISMATCH {}", problems.join("; "))
    }
}

// --- native peer -------------------------------------------------------------------------------

/// `f` over a chunk with 8 independent accumulators.
#[inline(always)]
fn chunk8<T: Copy>(c: &[T], id: T, f: impl Fn(T, T) -> T + Copy) -> T {
    let mut a = [id; 8];
    let mut it = c.chunks_exact(8);
    for ch in &mut it {
        for k in 0..8 {
            a[k] = f(a[k], ch[k]);
        }
    }
    let mut s = id;
    for x in a {
        s = f(s, x);
    }
    for &x in it.remainder() {
        s = f(s, x);
    }
    s
}

fn par_chunk(n: usize) -> usize {
    (n / (rayon::current_num_threads() * 4)).max(1 << 14)
}

fn par8<T: Copy + Send + Sync>(v: &[T], id: T, f: impl Fn(T, T) -> T + Copy + Send + Sync) -> T {
    v.par_chunks(par_chunk(v.len()))
        .map(|c| chunk8(c, id, f))
        .reduce(|| id, f)
}

fn sum_min_max8(c: &[f32]) -> (f32, f32, f32) {
    let mut s = [0f32; 8];
    let mut lo = [f32::INFINITY; 8];
    let mut hi = [f32::NEG_INFINITY; 8];
    let mut it = c.chunks_exact(8);
    for ch in &mut it {
        for k in 0..8 {
            s[k] += ch[k];
            lo[k] = lo[k].min(ch[k]);
            hi[k] = hi[k].max(ch[k]);
        }
    }
    let (mut a, mut b, mut d) = (s.iter().sum::<f32>(), f32::INFINITY, f32::NEG_INFINITY);
    for k in 0..8 {
        b = b.min(lo[k]);
        d = d.max(hi[k]);
    }
    for &x in it.remainder() {
        a += x;
        b = b.min(x);
        d = d.max(x);
    }
    (a, b, d)
}

/// Histogram of `x & (len - 1)` (len a power of two): per rayon job (about one per thread) a
/// private histogram, then merged. Up to 4096 bins it is kept as 4 interleaved copies, so that
/// runs of equal bins do not serialize on one counter; larger ones have a single copy.
fn native_hist(v: &[u32], len: usize) -> Vec<u32> {
    let mask = len - 1;
    let copies = if len <= 4096 { 4 } else { 1 };
    let merge = |mut a: Vec<u32>, b: Vec<u32>| {
        for (x, y) in a.iter_mut().zip(&b) {
            *x = x.wrapping_add(*y);
        }
        a
    };
    let all = v
        .par_chunks(par_chunk(v.len()))
        .fold(
            || vec![0u32; copies * len],
            |mut h, c| {
                if copies == 4 {
                    let (h0, rest) = h.split_at_mut(len);
                    let (h1, rest) = rest.split_at_mut(len);
                    let (h2, h3) = rest.split_at_mut(len);
                    let mut it = c.chunks_exact(4);
                    for q in &mut it {
                        h0[q[0] as usize & mask] += 1;
                        h1[q[1] as usize & mask] += 1;
                        h2[q[2] as usize & mask] += 1;
                        h3[q[3] as usize & mask] += 1;
                    }
                    for &x in it.remainder() {
                        h0[x as usize & mask] += 1;
                    }
                } else {
                    for &x in c {
                        h[x as usize & mask] += 1;
                    }
                }
                h
            },
        )
        .reduce(|| vec![0u32; copies * len], merge);
    all.chunks_exact(len)
        .fold(vec![0u32; len], |a, b| merge(a, b.to_vec()))
}

/// Block size of the native argmin: the block's minimum is found with 8 independent
/// accumulators (vectorizable), and only a block that beats the best so far is searched for
/// its first index.
const ARGMIN_BLOCK: usize = 4096;

/// The smallest value and the lowest index holding it (`None` for no input); ties between
/// chunks go to the lower index.
fn native_argmin(v: &[f32]) -> Option<(f32, usize)> {
    let chunk = par_chunk(v.len()).div_ceil(ARGMIN_BLOCK) * ARGMIN_BLOCK;
    v.par_chunks(chunk)
        .enumerate()
        .map(|(k, c)| {
            let mut best: Option<(f32, usize)> = None;
            for (b, blk) in c.chunks(ARGMIN_BLOCK).enumerate() {
                let m = chunk8(blk, f32::INFINITY, f32::min);
                if best.is_none_or(|(bv, _)| m < bv) {
                    if let Some(j) = blk.iter().position(|&x| x == m) {
                        best = Some((m, k * chunk + b * ARGMIN_BLOCK + j));
                    }
                }
            }
            best
        })
        .reduce(
            || None,
            |a, b| match (a, b) {
                (Some(x), Some(y)) => Some(if y.0 < x.0 || (y.0 == x.0 && y.1 < x.1) {
                    y
                } else {
                    x
                }),
                (x, None) => x,
                (None, y) => y,
            },
        )
}

/// The native multi-threaded Rust reduction of `case` over `data` (rayon; 8 independent
/// accumulators per chunk in the element type; per-thread histograms for a span; block minima
/// for argmin), or None where there is none for the case. The number returned only keeps the
/// work from being optimized away.
fn native(case: &Case, data: &HostVec) -> Option<f64> {
    let ops: Vec<Op> = case.vars.iter().map(|v| v.0).collect();
    Some(match (case.shape, data, ops.as_slice()) {
        (Shape::Span(len), HostVec::U32(v), _) => native_hist(v, len)[0] as f64,
        (Shape::ArgMin, HostVec::F32(v), _) => native_argmin(v).map_or(-1.0, |(_, i)| i as f64),
        (Shape::Span(_) | Shape::ArgMin, _, _) => return None,
        (_, HostVec::F32(v), [Op::Plus]) => par8(v, 0f32, |a, b| a + b) as f64,
        (_, HostVec::F64(v), [Op::Plus]) => par8(v, 0f64, |a, b| a + b),
        (_, HostVec::I32(v), [Op::Plus]) => par8(v, 0i32, |a, b| a.wrapping_add(b)) as f64,
        (_, HostVec::I64(v), [Op::Plus]) => par8(v, 0i64, |a, b| a.wrapping_add(b)) as f64,
        (_, HostVec::F32(v), [Op::Maximum]) => par8(v, f32::NEG_INFINITY, f32::max) as f64,
        (_, HostVec::F32(v), [Op::Minimum]) => par8(v, f32::INFINITY, f32::min) as f64,
        (_, HostVec::F64(v), [Op::Maximum]) => par8(v, f64::NEG_INFINITY, f64::max),
        (_, HostVec::F64(v), [Op::Minimum]) => par8(v, f64::INFINITY, f64::min),
        (_, HostVec::F32(v), [Op::Plus, Op::Minimum, Op::Maximum]) => {
            let (s, _, _) = v.par_chunks(par_chunk(v.len())).map(sum_min_max8).reduce(
                || (0.0, f32::INFINITY, f32::NEG_INFINITY),
                |x, y| (x.0 + y.0, x.1.min(y.1), x.2.max(y.2)),
            );
            s as f64
        }
        _ => return None,
    })
}

// --- results -----------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize)]
struct Point {
    device: String,
    device_index: usize,
    case: String,
    strategy: String,
    plan: String,
    n: u64,
    bytes: u64,
    cache: String,
    reps: usize,
    device_ns: Spread,
    wall_ns: Spread,
    gbps: f64,
    pct_stream: Option<f64>,
    /// Native Rust peer, wall time (CPU devices).
    native_ns: Option<u64>,
    native_gbps: Option<f64>,
    /// clreduce wall GB/s / native wall GB/s.
    native_ratio: Option<f64>,
    /// The peer of this point (--peers): pyopencl on CPUs (f32-sum), torch on NVIDIA GPUs
    /// (f32-sum: torch.sum; f32-sum-min-max: torch.sum, torch.min, torch.max; u32-histN:
    /// torch.bincount; f32-argmin: torch.argmin). The other peers are in `peers`.
    peer: Option<String>,
    /// The peer's GB/s: input bytes (once) / its device time.
    peer_gbps: Option<f64>,
    /// clreduce device GB/s / peer device GB/s.
    peer_ratio: Option<f64>,
    check: String,
}

#[derive(Debug, Clone, Serialize)]
struct StreamRef {
    what: String,
    n: u64,
    plan: String,
    cache: String,
    device_ns: Spread,
    gbps: f64,
}

#[derive(Debug, Clone, Serialize)]
struct DevInfo {
    index: usize,
    label: String,
    kind: String,
    nvidia: bool,
    driver: String,
    compute_units: u32,
    max_alloc: u64,
    llc_bytes: u64,
    llc_source: String,
    sizes: Vec<u64>,
    stream: Option<StreamRef>,
}

#[derive(Debug, Clone, Serialize)]
struct Skip {
    device: String,
    case: String,
    strategy: String,
    reason: String,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct PeerPoint {
    #[serde(default)]
    lib: String,
    /// The clreduce case this peer stands beside (absent in older peer output: derived from
    /// `op`, see [`peer_case`]).
    #[serde(default)]
    case: Option<String>,
    #[serde(default)]
    op: Option<String>,
    device: String,
    n: u64,
    gbps: f64,
    device_time_us: f64,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct LadderPoint {
    device: String,
    step: u32,
    kernel: String,
    n: u64,
    gbps: Option<f64>,
    device_time_us: Option<f64>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    command: String,
    reps: usize,
    warmup: usize,
    threads_native: usize,
    devices: Vec<DevInfo>,
    points: Vec<Point>,
    skipped: Vec<Skip>,
    peers: Vec<PeerPoint>,
    peers_note: Vec<String>,
    ladder: Vec<LadderPoint>,
}

// --- tables ------------------------------------------------------------------------------------

/// Prints a table; columns whose header starts with '>' are right-aligned.
fn print_table(headers: &[&str], rows: &[Vec<String>]) {
    let right: Vec<bool> = headers.iter().map(|h| h.starts_with('>')).collect();
    let names: Vec<&str> = headers.iter().map(|h| h.trim_start_matches('>')).collect();
    let mut w: Vec<usize> = names.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if right[i] {
                s.push_str(&format!("{c:>w$}", w = w[i]));
            } else {
                s.push_str(&format!("{c:<w$}", w = w[i]));
            }
        }
        println!("{}", s.trim_end());
    };
    line(names.clone());
    line(
        w.iter()
            .map(|&x| "-".repeat(x))
            .collect::<Vec<_>>()
            .iter()
            .map(|s| s.as_str())
            .collect(),
    );
    for r in rows {
        line(r.iter().map(|s| s.as_str()).collect());
    }
}

fn opt_f(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "-".into())
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:^,+".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// --- python peers ------------------------------------------------------------------------------

/// The repository root: the current directory when it has benches/, else the build's.
fn repo_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if cwd.join("benches").is_dir() {
        cwd
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }
}

/// python3, with the project-local .pydeps (pip install --target .pydeps pyopencl mako) on the
/// path when it exists.
fn python(root: &Path) -> Command {
    let mut c = Command::new("python3");
    // The peers enumerate OpenCL themselves: give them the loader's list as this process saw it.
    c.envs(clreduce::device::env_for_children());
    let deps = root.join(".pydeps");
    if deps.is_dir() {
        let mut p = deps.to_string_lossy().into_owned();
        if let Ok(old) = std::env::var("PYTHONPATH") {
            if !old.is_empty() {
                p = format!("{p}:{old}");
            }
        }
        c.env("PYTHONPATH", p);
    }
    c
}

/// Ok when `python3 -c 'import pyopencl'` works, else why not.
fn pyopencl_available(root: &Path) -> std::result::Result<(), String> {
    match python(root).args(["-c", "import pyopencl"]).output() {
        Err(e) => Err(format!("python3 could not be started: {e}")),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            Err(format!(
                "`python3 -c 'import pyopencl'` failed: {} (pip install --target .pydeps pyopencl mako)",
                err.lines().last().unwrap_or("").trim()
            ))
        }
    }
}

/// Runs a Python script and parses the JSON lines it prints on stdout; its stderr goes through.
fn run_jsonl<T: serde::de::DeserializeOwned>(
    root: &Path,
    script: &str,
    args: &[String],
) -> std::result::Result<Vec<T>, String> {
    let path = root.join(script);
    if !path.is_file() {
        return Err(format!("{} not found", path.display()));
    }
    let out = python(root)
        .arg(&path)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("python3 {script}: {e}"))?;
    if !out.status.success() {
        return Err(format!("python3 {script} exited with {}", out.status));
    }
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim();
        if line.starts_with('{') {
            match serde_json::from_str(line) {
                Ok(p) => v.push(p),
                Err(e) => eprintln!("bench: ignoring a line of {script}: {e}: {line}"),
            }
        }
    }
    Ok(v)
}

/// The clreduce case a peer result belongs to.
fn peer_case(x: &PeerPoint) -> String {
    if let Some(c) = &x.case {
        return c.clone();
    }
    match x.op.as_deref() {
        None | Some("sum") => "f32-sum",
        Some("argmin") => "f32-argmin",
        Some("bincount" | "histc") => "u32-hist256",
        Some(_) => "f32-sum-min-max",
    }
    .into()
}

/// Whether benches/peers/torch_cupy_sum.py has a peer for the case.
fn has_gpu_peer(c: &Case) -> bool {
    matches!(
        c.name.as_str(),
        "f32-sum" | "f32-sum-min-max" | "f32-argmin"
    ) || matches!(c.shape, Shape::Span(_))
}

fn same_device(a: &str, b: &str) -> bool {
    a.trim() == b.trim()
}

// --- the command -------------------------------------------------------------------------------

struct Dev {
    device: Device,
    /// A profiling queue: device times, the streaming reference.
    queue: Queue,
    /// The default queue, without profiling (as a user gets it): wall times.
    wall_queue: Queue,
    info: DevInfo,
    /// Strategies that plan, per case name.
    strategies: BTreeMap<String, Vec<Strategy>>,
}

fn pick(spec: Option<&str>) -> Result<Vec<Device>> {
    match spec {
        None | Some("all") => Ok(devices()?
            .iter()
            .filter(|d| !d.is_simulator())
            .cloned()
            .collect()),
        Some(s) => {
            let d = clreduce::device::select(Some(s))?;
            if d.is_simulator() {
                eprintln!(
                    "bench: warning: {} is a simulator; its timings say nothing about hardware",
                    d.label()
                );
            }
            Ok(vec![d])
        }
    }
}

/// The first line of an error, without the "X cannot run on DEVICE: " preamble that every line
/// of a per-device listing would repeat.
fn short_reason(e: &clreduce::Error, device: &str) -> String {
    let full = e.to_string();
    let line = full.lines().next().unwrap_or("");
    let tail = match line.split_once(&format!("cannot run on {device}: ")) {
        Some((_, t)) => t,
        None => line,
    };
    tail.strip_prefix("the device ").unwrap_or(tail).to_string()
}

fn bad_arg(msg: String) -> Result<bool> {
    eprintln!("clreduce bench: {msg}");
    Ok(false)
}

/// `clreduce bench`.
pub fn run(a: BenchArgs) -> Result<bool> {
    // The peers' and the header's count; points use reps_for (more for small inputs).
    let reps = reps_for(a.reps, a.quick, u64::MAX);
    let cache_mode = match a.cache.as_str() {
        "auto" => CacheMode::Auto,
        "cold" => CacheMode::Cold,
        other => return bad_arg(format!("--cache {other:?}: expected auto or cold")),
    };
    let max_n = match a.max_n.as_deref().map(parse_n).transpose() {
        Ok(m) => m,
        Err(e) => return bad_arg(e),
    };
    let sizes = match (&a.sizes, a.quick, a.ladder) {
        (Some(s), _, _) => parse_sizes(s),
        (None, _, true) => Ok(vec![1 << 22, 1 << 26]),
        (None, true, _) => Ok(vec![1 << 12, 1 << 16, 1 << 20, 1 << 24]),
        (None, false, _) => parse_sizes("2^10..2^28"),
    };
    let sizes = match sizes {
        Ok(s) => s,
        Err(e) => return bad_arg(e),
    };
    let cases: std::result::Result<Vec<Case>, String> = if a.ladder {
        Ok(vec![parse_case("f32-sum").expect("built-in case")])
    } else {
        a.cases
            .as_deref()
            .unwrap_or(DEFAULT_CASES)
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(parse_case)
            .collect()
    };
    let cases = match cases {
        Ok(c) if !c.is_empty() => c,
        Ok(_) => return bad_arg("no cases".into()),
        Err(e) => return bad_arg(e),
    };
    // None: auto plus every forced strategy that plans.
    let wanted: Option<Vec<Strategy>> = match a.strategies.as_deref() {
        _ if a.ladder => Some(vec![Strategy::AUTO]),
        None | Some("all") => None,
        Some(s) => Some(
            s.split(',')
                .filter(|x| !x.trim().is_empty())
                .map(Strategy::parse)
                .collect::<Result<Vec<_>>>()?,
        ),
    };
    let mask = match &a.mask {
        Some(m) => Mask::parse(m)?,
        None => Mask::from_env()?,
    };
    let determinism = if a.relaxed {
        Determinism::Relaxed
    } else {
        Determinism::Deterministic
    };
    let llc_override = match a.llc.as_deref().map(parse_bytes).transpose() {
        Ok(x) => x,
        Err(e) => return bad_arg(e),
    };
    let command = command_line();
    let root = repo_root();

    // Devices, their caches, sizes, and which strategies plan for each case.
    let mut devs = Vec::new();
    let mut skipped = Vec::new();
    for d in pick(a.device.as_deref())? {
        let wall_queue = Queue::with_mask(&d, mask)?;
        let queue = wall_queue.with_profiling()?;
        let caps = queue.caps().clone();
        let (llc, llc_source) = match &llc_override {
            Some(b) => (*b, "--llc".to_string()),
            None => llc_of(&d, &caps),
        };
        let cap = (caps.max_alloc / 4).max(1);
        let dsizes: Vec<u64> = sizes
            .iter()
            .copied()
            .filter(|&n| n <= cap && max_n.is_none_or(|m| n <= m))
            .collect();
        let dropped = sizes.len() - dsizes.len();
        if dropped > 0 {
            eprintln!(
                "bench: {}: {dropped} size(s) above max_alloc/4 = {} or --max-n left out",
                d.label(),
                fmt_n(cap)
            );
        }
        let mut strategies = BTreeMap::new();
        let probe_n = dsizes.first().copied().unwrap_or(1024);
        for case in &cases {
            let list = match &wanted {
                Some(w) => w.clone(),
                None => std::iter::once(Strategy::AUTO)
                    .chain(Strategy::all_forced())
                    .collect(),
            };
            let mut ok = Vec::new();
            for s in list {
                let r = case.outs(&queue).and_then(|outs| {
                    queue.explain(
                        Range::new(probe_n),
                        case.reductions(&outs),
                        Options {
                            strategy: s,
                            determinism,
                            ..Options::default()
                        },
                    )
                });
                match r {
                    Ok(_) => ok.push(s),
                    Err(e) => skipped.push(Skip {
                        device: d.label(),
                        case: case.name.clone(),
                        strategy: s.to_string(),
                        reason: short_reason(&e, &caps.label()),
                    }),
                }
            }
            strategies.insert(case.name.clone(), ok);
        }
        devs.push(Dev {
            info: DevInfo {
                index: d.index(),
                label: d.label(),
                kind: format!("{:?}", caps.kind).to_lowercase(),
                nvidia: caps.is_nvidia(),
                driver: caps.driver.clone(),
                compute_units: caps.compute_units,
                max_alloc: caps.max_alloc,
                llc_bytes: llc,
                llc_source,
                sizes: dsizes,
                stream: None,
            },
            device: d,
            queue,
            wall_queue,
            strategies,
        });
    }
    if devs.is_empty() {
        return bad_arg("no device to bench (simulators are left out)".into());
    }

    let any_cpu = devs.iter().any(|d| d.info.kind == "cpu");
    let native_on = !a.no_native && any_cpu && !a.ladder;
    let total: u64 = devs
        .iter()
        .map(|d| {
            cases
                .iter()
                .map(|c| {
                    (d.strategies.get(&c.name).map_or(0, |s| s.len()) * d.info.sizes.len()) as u64
                })
                .sum::<u64>()
                + u64::from(!a.ladder && !d.info.sizes.is_empty())
        })
        .sum();
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let note = |m: String| {
        if pb.is_hidden() {
            eprintln!("bench: {m}");
        }
    };

    // The streaming-read reference per device: u32 bit_or over the largest size, the fastest
    // single repetition of every strategy that plans.
    if !a.ladder {
        let sref = parse_case("u32-or").expect("built-in case");
        // The best (shortest) time of at least 10: the reference is what the device can do.
        let stream_reps = reps.max(10);
        for d in &mut devs {
            let Some(&n) = d.info.sizes.last() else {
                continue;
            };
            pb.set_message(format!("{}: streaming reference", d.device.name()));
            note(format!(
                "{}: streaming reference at {}",
                d.info.label,
                fmt_n(n)
            ));
            let data = reference::random_input(Op::BitOr, ElemType::U32, n as usize, 7);
            let CachePlan {
                copies: k,
                state: cache,
                ..
            } = rotation(n * 4, d.info.llc_bytes, CacheMode::Auto);
            let r = (|| -> Result<StreamRef> {
                let inputs = (0..k)
                    .map(|_| DynBuffer::upload(&d.queue, &data))
                    .collect::<Result<Vec<_>>>()?;
                let res = sref.outs(&d.queue)?;
                prime(&d.queue, &sref, n, &inputs, &res)?;
                let mut best: Option<Measured> = None;
                let mut tried = 0;
                for s in std::iter::once(Strategy::AUTO).chain(Strategy::all_forced()) {
                    let opts = Options {
                        strategy: s,
                        ..Options::default()
                    };
                    // Strategies that do not plan for u32 bit_or are simply not candidates.
                    let Ok(m) = measure(
                        &d.queue,
                        &sref,
                        n,
                        &inputs,
                        &res,
                        opts,
                        a.warmup,
                        stream_reps,
                        &mut Between::default(),
                    ) else {
                        continue;
                    };
                    tried += 1;
                    if best
                        .as_ref()
                        .is_none_or(|b| m.device_ns.min < b.device_ns.min)
                    {
                        best = Some(m);
                    }
                }
                let m = best.ok_or_else(|| clreduce::Error::InvalidRange {
                    reason: "no strategy plans a u32 bit_or reduction".into(),
                })?;
                Ok(StreamRef {
                    what: format!(
                        "clreduce u32 bit_or reduction (`sum |= x[i];`), fastest of {stream_reps} repetitions x {tried} strategies"
                    ),
                    n,
                    plan: m.plan.summary(),
                    cache,
                    gbps: (n * 4) as f64 / m.device_ns.min.max(1) as f64,
                    device_ns: m.device_ns,
                })
            })();
            match r {
                Ok(s) => d.info.stream = Some(s),
                Err(e) => pb.suspend(|| {
                    eprintln!(
                        "bench: {}: streaming reference failed: {}",
                        d.info.label,
                        e.to_string().lines().next().unwrap_or("")
                    )
                }),
            }
            pb.inc(1);
        }
    }

    // The sweep: case, size (host data and references shared by the devices), device, strategy.
    let mut points: Vec<Point> = Vec::new();
    let all_sizes: Vec<u64> = {
        let mut v: Vec<u64> = devs.iter().flat_map(|d| d.info.sizes.clone()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for case in &cases {
        let esz = case.ty.size() as u64;
        for &n in &all_sizes {
            let users: Vec<usize> = (0..devs.len())
                .filter(|&i| {
                    devs[i].info.sizes.contains(&n)
                        && n * esz <= devs[i].info.max_alloc
                        && devs[i]
                            .strategies
                            .get(&case.name)
                            .is_some_and(|s| !s.is_empty())
                })
                .collect();
            if users.is_empty() {
                continue;
            }
            note(format!("{} at {}", case.name, fmt_n(n)));
            pb.set_message(format!("{} {}: input", case.name, fmt_n(n)));
            let data = reference::random_input(case.data_op, case.ty, n as usize, 1);
            let want = expect(case, &data);
            let bytes = n * esz;
            let reps = reps_for(a.reps, a.quick, bytes);
            // The native peer reads host memory, the CPU's LLC decides its rotation (and, under
            // --cache cold, its flush: a read of 2x LLC of host memory before each call).
            let host_llc = sysfs_llc().unwrap_or(32 << 20);
            let host_cache = rotation(bytes, host_llc, cache_mode);
            let datas: Vec<HostVec> = if native_on {
                (0..host_cache.copies).map(|_| data.clone()).collect()
            } else {
                Vec::new()
            };
            let host_flush: Vec<u64> = if native_on && host_cache.flush {
                vec![1; (2 * host_llc / 8) as usize]
            } else {
                Vec::new()
            };
            let mut native_rep = 0usize;
            // One native call: flush (untimed) where asked, then the timed call.
            let mut native_call = || -> Option<u64> {
                if !host_flush.is_empty() {
                    std::hint::black_box(host_flush.iter().sum::<u64>());
                }
                let d = &datas[native_rep % datas.len()];
                native_rep += 1;
                let t0 = Instant::now();
                let r = native(case, d)?;
                let e = t0.elapsed().as_nanos() as u64;
                std::hint::black_box(r);
                Some(e)
            };
            for &i in &users {
                let d = &devs[i];
                let CachePlan {
                    copies: k,
                    flush,
                    state: cache,
                } = rotation(bytes, d.info.llc_bytes, cache_mode);
                // Buffers belong to their queue: one set on the profiling queue (device
                // time), one on the default queue (wall time).
                let flush_words = flush.then_some((2 * d.info.llc_bytes / 4) as usize);
                let bufs = point_buffers(&d.queue, case, n, &data, k, flush_words).and_then(|p| {
                    Ok((
                        p,
                        point_buffers(&d.wall_queue, case, n, &data, k, flush_words)?,
                    ))
                });
                let strategies = &d.strategies[&case.name];
                let ((inputs, res, flush_buf), (w_inputs, w_res, w_flush)) = match bufs {
                    Ok(b) => b,
                    Err(e) => {
                        pb.suspend(|| {
                            eprintln!(
                                "bench: {}: {} at {}: {}",
                                d.info.label,
                                case.name,
                                fmt_n(n),
                                e.to_string().lines().next().unwrap_or("")
                            )
                        });
                        pb.inc(strategies.len() as u64);
                        continue;
                    }
                };
                let mut dev_native: Option<Spread> = None;
                for &s in strategies {
                    let opts = Options {
                        strategy: s,
                        determinism,
                        ..Options::default()
                    };
                    // On a CPU device the native peer runs interleaved with the auto plan's
                    // repetitions (or the first strategy's, if auto is not benched), and every
                    // strategy of the point is compared with that measurement.
                    let cpu = d.info.kind == "cpu" && native_on;
                    let interleave = cpu && dev_native.is_none();
                    pb.set_message(format!(
                        "{}: {} {} {}{}",
                        d.device.name(),
                        case.name,
                        fmt_n(n),
                        s,
                        if interleave { " + native peer" } else { "" }
                    ));
                    // Device time on the profiling queue, then wall time on the default
                    // queue (a profiling queue's enqueue costs more: decisions.md), each
                    // repetition checked.
                    let measured = measure(
                        &d.queue,
                        case,
                        n,
                        &inputs,
                        &res,
                        opts,
                        a.warmup,
                        reps,
                        &mut Between {
                            flush: flush_buf.as_ref(),
                            native: None,
                        },
                    )
                    .and_then(|m| {
                        let mut between = Between {
                            flush: w_flush.as_ref(),
                            native: if interleave {
                                Some(&mut native_call)
                            } else {
                                None
                            },
                        };
                        let w = measure(
                            &d.wall_queue,
                            case,
                            n,
                            &w_inputs,
                            &w_res,
                            opts,
                            a.warmup,
                            reps,
                            &mut between,
                        )?;
                        Ok((m, w))
                    });
                    match measured {
                        Ok((m, w)) => {
                            if interleave {
                                dev_native = w.native_ns;
                            }
                            let check =
                                match (check_all(case, &m, &want), check_all(case, &w, &want)) {
                                    (a, b) if a == b => a,
                                    (a, b) => format!("{a} (profiling queue); {b} (default queue)"),
                                };
                            let m = Measured {
                                wall_ns: w.wall_ns,
                                ..m
                            };
                            let gbps = bytes as f64 / m.device_ns.median.max(1) as f64;
                            let wall_gbps = bytes as f64 / m.wall_ns.median.max(1) as f64;
                            let native_for_dev = dev_native.filter(|_| cpu);
                            let native_gbps =
                                native_for_dev.map(|t| bytes as f64 / t.median.max(1) as f64);
                            points.push(Point {
                                device: d.info.label.clone(),
                                device_index: d.info.index,
                                case: case.name.clone(),
                                strategy: s.to_string(),
                                plan: plan_label(&m.plan),
                                n,
                                bytes,
                                cache: cache.clone(),
                                reps,
                                check,
                                device_ns: m.device_ns,
                                wall_ns: m.wall_ns,
                                gbps,
                                pct_stream: d.info.stream.as_ref().map(|r| 100.0 * gbps / r.gbps),
                                native_ns: native_for_dev.map(|t| t.median),
                                native_gbps,
                                native_ratio: native_gbps.map(|g| wall_gbps / g),
                                peer: None,
                                peer_gbps: None,
                                peer_ratio: None,
                            });
                        }
                        Err(e) => {
                            let reason = short_reason(&e, &d.queue.caps().label());
                            pb.suspend(|| {
                                eprintln!(
                                    "bench: {}: {} {} {}: {reason}",
                                    d.info.label,
                                    case.name,
                                    fmt_n(n),
                                    s
                                )
                            });
                            skipped.push(Skip {
                                device: d.info.label.clone(),
                                case: format!("{} at {}", case.name, fmt_n(n)),
                                strategy: s.to_string(),
                                reason,
                            });
                        }
                    }
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();

    // Peers: PyOpenCL's ReductionKernel (f32 sum) on the CPU devices; torch and cupy on an
    // NVIDIA GPU.
    let mut peers: Vec<PeerPoint> = Vec::new();
    let mut peers_note = Vec::new();
    if a.peers && !a.ladder {
        let sizes_of = |case: &str, pick: &dyn Fn(&DevInfo) -> bool| -> Vec<u64> {
            all_sizes
                .iter()
                .copied()
                .filter(|n| {
                    points.iter().any(|p| {
                        p.case == case
                            && p.n == *n
                            && devs
                                .iter()
                                .any(|d| d.info.index == p.device_index && pick(&d.info))
                    })
                })
                .collect()
        };
        let size_arg = |v: &[u64]| {
            v.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let cpu_sizes = sizes_of("f32-sum", &|d| d.kind == "cpu");
        let why = if cpu_sizes.is_empty() {
            Err("no f32-sum point on a CPU device".to_string())
        } else {
            pyopencl_available(&root)
        };
        match why {
            Err(w) => {
                println!("peers: PyOpenCL skipped: {w}");
                peers_note.push(format!("pyopencl: {w}"));
            }
            Ok(()) => {
                let mut args = vec![
                    "--sizes".to_string(),
                    size_arg(&cpu_sizes),
                    "--reps".into(),
                    reps.to_string(),
                    "--warmup".into(),
                    a.warmup.to_string(),
                ];
                for d in devs.iter().filter(|d| d.info.kind == "cpu") {
                    args.push("--device".into());
                    args.push(d.info.label.clone());
                }
                eprintln!("bench: running benches/peers/pyopencl_reduction.py");
                match run_jsonl::<PeerPoint>(&root, "benches/peers/pyopencl_reduction.py", &args) {
                    Ok(v) => peers.extend(v),
                    Err(e) => {
                        println!("peers: PyOpenCL failed: {e}");
                        peers_note.push(format!("pyopencl: {e}"));
                    }
                }
            }
        }
        let mut gpu_sizes = Vec::new();
        let mut gpu_cases = Vec::new();
        for c in cases.iter().filter(|c| has_gpu_peer(c)) {
            let s = sizes_of(&c.name, &|d| d.nvidia);
            if !s.is_empty() {
                gpu_sizes.extend(s);
                gpu_cases.push(c.name.clone());
            }
        }
        gpu_sizes.sort_unstable();
        gpu_sizes.dedup();
        if !gpu_sizes.is_empty() {
            let args = vec![
                "--sizes".to_string(),
                size_arg(&gpu_sizes),
                "--cases".into(),
                gpu_cases.join(","),
                "--reps".into(),
                reps.to_string(),
                "--warmup".into(),
                a.warmup.to_string(),
            ];
            eprintln!("bench: running benches/peers/torch_cupy_sum.py");
            match run_jsonl::<PeerPoint>(&root, "benches/peers/torch_cupy_sum.py", &args) {
                Ok(v) if v.is_empty() => {
                    println!("peers: torch/cupy gave no result (see the notes above)");
                    peers_note.push("torch/cupy: no result".into());
                }
                Ok(v) => peers.extend(v),
                Err(e) => {
                    println!("peers: torch/cupy failed: {e}");
                    peers_note.push(format!("torch/cupy: {e}"));
                }
            }
        }
        for p in points.iter_mut() {
            let info = &devs
                .iter()
                .find(|d| d.info.index == p.device_index)
                .expect("a point's device")
                .info;
            let want: Option<(&str, &str)> = match (p.case.as_str(), info.kind.as_str()) {
                ("f32-sum", "cpu") => Some(("pyopencl", "")),
                ("f32-sum", _) if info.nvidia => Some(("torch", "sum")),
                ("f32-sum-min-max", _) if info.nvidia => Some(("torch", "sum,min,max")),
                ("f32-argmin", _) if info.nvidia => Some(("torch", "argmin")),
                (c, _) if info.nvidia && c.starts_with("u32-hist") => Some(("torch", "bincount")),
                _ => None,
            };
            let Some((lib, op)) = want else { continue };
            let found = peers.iter().find(|x| {
                x.lib == lib
                    && x.n == p.n
                    && peer_case(x) == p.case
                    && (op.is_empty() || x.op.as_deref() == Some(op))
                    && (same_device(&x.device, &p.device)
                        || (info.nvidia && p.device.ends_with(x.device.trim())))
            });
            if let Some(peer) = found {
                p.peer = Some(if op.is_empty() {
                    lib.to_string()
                } else {
                    format!("{lib} {op}")
                });
                p.peer_gbps = Some(peer.gbps);
                p.peer_ratio = Some(p.gbps / peer.gbps.max(1e-12));
            }
        }
    }

    // The ladder: PyOpenCL runs the tutorial kernels; clreduce's auto plan beside them.
    let mut ladder = Vec::new();
    if a.ladder {
        match pyopencl_available(&root) {
            Err(w) => println!("ladder: skipped: {w}"),
            Ok(()) => {
                let mut args = vec![
                    "--sizes".to_string(),
                    all_sizes
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    "--reps".into(),
                    reps.to_string(),
                    "--jsonl".into(),
                ];
                if a.device.is_some() {
                    for d in &devs {
                        args.push("--device".into());
                        args.push(d.info.label.clone());
                    }
                }
                eprintln!("bench: running benches/ladder/ladder.py");
                match run_jsonl::<LadderPoint>(&root, "benches/ladder/ladder.py", &args) {
                    Ok(v) => ladder = v,
                    Err(e) => println!("ladder: failed: {e}"),
                }
            }
        }
    }

    // Report.
    println!();
    println!("clreduce bench");
    println!("command: {command}");
    println!(
        "reps: {} timed after {} warm-up (median; device time = ReduceEvent::device_time_ns on a profiling queue; wall = launch call to result read on the host, on the default queue without profiling, in separate repetitions); cache: {}",
        match a.reps {
            Some(r) => r.to_string(),
            None if a.quick => "5".to_string(),
            None => "100 for inputs up to 16 MiB, 20 above".to_string(),
        },
        a.warmup,
        match cache_mode {
            CacheMode::Auto => "auto (warm up to LLC/4, cold above)",
            CacheMode::Cold => "cold (small inputs after an LLC flush)",
        }
    );
    if !mask.is_empty() {
        println!("mask: {}", mask.names().join(","));
    }
    if native_on {
        println!(
            "native peer: Rust, rayon on {} threads, 8 independent accumulators per chunk in the element type (histograms: per-thread private histograms, merged; argmin: 8-accumulator minimum per 4096-element block, first index searched only in a block that improves); wall time, timed right after each repetition of the auto plan (interleaved, same machine state); `x native` = clreduce wall GB/s / native wall GB/s",
            rayon::current_num_threads()
        );
    }
    for d in &devs {
        println!();
        println!("== device {}: {}", d.info.index, d.info.label);
        println!(
            "   driver {}; {}; {} compute units; max alloc {}; LLC {} ({})",
            d.info.driver,
            d.info.kind,
            d.info.compute_units,
            fmt_bytes(d.info.max_alloc),
            fmt_bytes(d.info.llc_bytes),
            d.info.llc_source
        );
        println!("   command: {command}");
        match &d.info.stream {
            Some(s) => println!(
                "   streaming-read reference: {} over {} x u32 ({}, {}): {:.2} GB/s, plan {} (this is clreduce itself, not an independent roofline)",
                s.what,
                fmt_n(s.n),
                fmt_bytes(s.n * 4),
                s.cache,
                s.gbps,
                s.plan
            ),
            None if !a.ladder => println!("   streaming-read reference: none"),
            None => {}
        }
        let rows: Vec<Vec<String>> = points
            .iter()
            .filter(|p| p.device_index == d.info.index)
            .map(|p| {
                vec![
                    p.case.clone(),
                    p.strategy.clone(),
                    if p.strategy == "auto" {
                        p.plan.clone()
                    } else {
                        String::new()
                    },
                    fmt_n(p.n),
                    fmt_bytes(p.bytes),
                    p.cache.clone(),
                    us(p.device_ns.median),
                    format!("{}..{}", us(p.device_ns.min), us(p.device_ns.max)),
                    us(p.wall_ns.median),
                    format!("{:.2}", p.gbps),
                    opt_f(p.pct_stream, 0),
                    opt_f(p.native_gbps, 2),
                    opt_f(p.native_ratio, 2),
                    p.peer.clone().unwrap_or_else(|| "-".into()),
                    opt_f(p.peer_gbps, 2),
                    opt_f(p.peer_ratio, 2),
                    p.check.clone(),
                ]
            })
            .collect();
        if !a.ladder {
            print_table(
                &[
                    "case",
                    "strategy",
                    "auto plan",
                    ">n",
                    ">input",
                    "cache",
                    ">dev us",
                    ">dev min..max",
                    ">wall us",
                    ">GB/s",
                    ">%stream",
                    ">native GB/s",
                    ">x native",
                    "peer",
                    ">peer GB/s",
                    ">x peer",
                    "check",
                ],
                &rows,
            );
            print_summary(d, &points);
        }
        print_skipped(&d.info.label, &skipped);
    }
    if !peers.is_empty() {
        print_peers(&devs, &points, &peers);
    }
    if a.ladder {
        print_ladder(&devs, &points, &ladder);
    }
    let ok = points.iter().all(|p| p.check == "ok");
    if !ok {
        println!("\nsome results did not match the host reference (see the check column)");
    }

    let report = Report {
        command,
        reps,
        warmup: a.warmup,
        threads_native: rayon::current_num_threads(),
        devices: devs.iter().map(|d| d.info.clone()).collect(),
        points,
        skipped,
        peers,
        peers_note,
        ladder,
    };
    let mut io_ok = true;
    if let Some(path) = &a.json {
        match serde_json::to_string_pretty(&report)
            .map_err(|e| e.to_string())
            .and_then(|s| std::fs::write(path, s).map_err(|e| e.to_string()))
        {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => {
                eprintln!("clreduce bench: writing {}: {e}", path.display());
                io_ok = false;
            }
        }
    }
    if let Some(path) = &a.svg {
        match plot(path, &report) {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => {
                eprintln!("clreduce bench: writing {}: {e}", path.display());
                io_ok = false;
            }
        }
    }
    Ok(ok && io_ok)
}

/// Strategies that did not plan (or failed) on a device: one line per reason and set of cases,
/// with the strategies it applies to.
fn print_skipped(device: &str, skipped: &[Skip]) {
    let mut by: Vec<(String, String, Vec<String>)> = Vec::new();
    for s in skipped.iter().filter(|s| s.device == device) {
        match by
            .iter_mut()
            .find(|(st, r, _)| *st == s.strategy && *r == s.reason)
        {
            Some((_, _, cases)) => cases.push(s.case.clone()),
            None => by.push((s.strategy.clone(), s.reason.clone(), vec![s.case.clone()])),
        }
    }
    if by.is_empty() {
        return;
    }
    // Strategies refused for the same cases with the same reason share a line.
    let mut lines: Vec<(Vec<String>, String, Vec<String>)> = Vec::new();
    for (st, reason, cases) in by {
        match lines
            .iter_mut()
            .find(|(_, r, c)| *r == reason && *c == cases)
        {
            Some((sts, _, _)) => sts.push(st),
            None => lines.push((vec![st], reason, cases)),
        }
    }
    println!("   not run here (the planner refuses them on this device, or the launch failed):");
    for (sts, reason, cases) in lines {
        println!("     {} [{}]: {reason}", sts.join(", "), cases.join(", "));
    }
}

/// Every peer result beside clreduce's auto plan for the same device, case and size.
fn print_peers(devs: &[Dev], points: &[Point], peers: &[PeerPoint]) {
    println!();
    println!("peers (device time: PyOpenCL from its first kernel's start to its last kernel's end, torch/cupy between CUDA events; GB/s = input bytes once / median time; x = clreduce auto GB/s / peer GB/s)");
    let mut rows = Vec::new();
    for x in peers {
        let op = x.op.clone().unwrap_or_else(|| "sum".into());
        let case = peer_case(x);
        let dev = devs.iter().find(|d| {
            same_device(&d.info.label, &x.device)
                || (d.info.nvidia && d.info.label.ends_with(x.device.trim()))
        });
        let mine = dev.and_then(|d| {
            points.iter().find(|p| {
                p.device_index == d.info.index
                    && p.case == case
                    && p.n == x.n
                    && p.strategy == "auto"
            })
        });
        rows.push(vec![
            x.lib.clone(),
            case,
            op,
            x.device.clone(),
            fmt_n(x.n),
            format!("{:.1}", x.device_time_us),
            format!("{:.2}", x.gbps),
            opt_f(mine.map(|p| p.gbps), 2),
            opt_f(mine.map(|p| p.gbps / x.gbps.max(1e-12)), 2),
        ]);
    }
    print_table(
        &[
            "peer",
            "case",
            "op",
            "device",
            ">n",
            ">dev us",
            ">GB/s",
            ">clreduce GB/s",
            ">x",
        ],
        &rows,
    );
}

/// Per case and size: the auto plan, the best strategy, and the peers.
fn print_summary(d: &Dev, points: &[Point]) {
    let mut rows = Vec::new();
    let mine: Vec<&Point> = points
        .iter()
        .filter(|p| p.device_index == d.info.index)
        .collect();
    let mut keys: Vec<(String, u64)> = Vec::new();
    for p in &mine {
        let k = (p.case.clone(), p.n);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (case, n) in keys {
        let at: Vec<&&Point> = mine.iter().filter(|p| p.case == case && p.n == n).collect();
        let auto = at.iter().find(|p| p.strategy == "auto");
        let best = at
            .iter()
            .filter(|p| p.strategy != "auto")
            .max_by(|a, b| a.gbps.total_cmp(&b.gbps));
        let any = auto.or(best).expect("at least one point");
        rows.push(vec![
            case.clone(),
            fmt_n(n),
            auto.map(|p| p.plan.clone()).unwrap_or_else(|| "-".into()),
            opt_f(auto.map(|p| p.gbps), 2),
            opt_f(auto.and_then(|p| p.pct_stream), 0),
            best.map(|p| p.strategy.clone())
                .unwrap_or_else(|| "-".into()),
            opt_f(best.map(|p| p.gbps), 2),
            opt_f(any.native_gbps, 2),
            opt_f(auto.and_then(|p| p.native_ratio), 2),
            any.peer.clone().unwrap_or_else(|| "-".into()),
            opt_f(any.peer_gbps, 2),
            opt_f(auto.and_then(|p| p.peer_ratio), 2),
        ]);
    }
    println!();
    println!("   summary: GB/s = input bytes / median device time; x native on wall time, x peer on device time, both for the auto plan");
    print_table(
        &[
            "case",
            ">n",
            "auto plan",
            ">auto GB/s",
            ">%stream",
            "best forced",
            ">GB/s",
            ">native GB/s",
            ">x native",
            "peer",
            ">peer GB/s",
            ">x peer",
        ],
        &rows,
    );
}

fn print_ladder(devs: &[Dev], points: &[Point], ladder: &[LadderPoint]) {
    println!();
    println!("reduction ladder (benches/ladder/ladder.py, PyOpenCL, f32 sum, device time of all passes) and clreduce's auto plan (device time)");
    let mut rows = Vec::new();
    let mut labels: Vec<String> = devs.iter().map(|d| d.info.label.clone()).collect();
    for l in ladder {
        if !labels.iter().any(|x| same_device(x, &l.device)) {
            labels.push(l.device.clone());
        }
    }
    let mut sizes: Vec<u64> = ladder
        .iter()
        .map(|l| l.n)
        .chain(points.iter().map(|p| p.n))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    for label in &labels {
        for &n in &sizes {
            for l in ladder
                .iter()
                .filter(|l| l.n == n && same_device(&l.device, label))
            {
                rows.push(vec![
                    label.clone(),
                    fmt_n(n),
                    l.step.to_string(),
                    l.kernel.clone(),
                    opt_f(l.device_time_us, 1),
                    opt_f(l.gbps, 2),
                    l.note.clone().unwrap_or_default(),
                ]);
            }
            for p in points
                .iter()
                .filter(|p| p.n == n && same_device(&p.device, label))
            {
                rows.push(vec![
                    label.clone(),
                    fmt_n(n),
                    "-".into(),
                    format!("clreduce auto ({})", p.plan),
                    us(p.device_ns.median),
                    format!("{:.2}", p.gbps),
                    format!("check {}", p.check),
                ]);
            }
        }
    }
    print_table(
        &[
            "device", ">n", ">step", "kernel", ">dev us", ">GB/s", "note",
        ],
        &rows,
    );
}

// --- SVG ---------------------------------------------------------------------------------------

fn plot(path: &Path, r: &Report) -> std::result::Result<(), String> {
    use plotters::prelude::*;
    let mut panels: Vec<(String, String)> = Vec::new();
    for p in &r.points {
        let key = (p.device.clone(), p.case.clone());
        if !panels.contains(&key) {
            panels.push(key);
        }
    }
    if panels.is_empty() {
        return Err("no points to plot".into());
    }
    let cols = 2usize.min(panels.len());
    let rows = panels.len().div_ceil(cols);
    let root = SVGBackend::new(path, (700 * cols as u32, 420 * rows as u32)).into_drawing_area();
    let e = |x: &dyn std::fmt::Display| x.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let areas = root.split_evenly((rows, cols));
    for ((dev, case), area) in panels.iter().zip(areas.iter()) {
        let pts: Vec<&Point> = r
            .points
            .iter()
            .filter(|p| &p.device == dev && &p.case == case)
            .collect();
        let xs: Vec<f64> = pts.iter().map(|p| (p.n as f64).log2()).collect();
        let (mut x0, mut x1) = (
            xs.iter().cloned().fold(f64::INFINITY, f64::min),
            xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        );
        if x1 - x0 < 1.0 {
            x0 -= 0.5;
            x1 += 0.5;
        }
        let ymax = pts.iter().map(|p| p.gbps).fold(0.0, f64::max) * 1.1 + 1e-3;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{case} on {dev}"), ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0f64..ymax)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("n (elements)")
            .y_desc("GB/s (input bytes / device time)")
            .x_labels(((x1 - x0) as usize + 1).min(20))
            .x_label_formatter(&|x| format!("2^{}", x.round() as i64))
            .draw()
            .map_err(|x| e(&x))?;
        let mut strategies: Vec<&str> = Vec::new();
        for p in &pts {
            if !strategies.contains(&p.strategy.as_str()) {
                strategies.push(&p.strategy);
            }
        }
        for (k, s) in strategies.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let mut line: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.strategy == *s)
                .map(|p| ((p.n as f64).log2(), p.gbps))
                .collect();
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            let width = if *s == "auto" { 3 } else { 1 };
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(width)))
                .map_err(|x| e(&x))?
                .label(s.to_string())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(width))
                });
            chart
                .draw_series(
                    line.iter()
                        .map(|&(x, y)| Circle::new((x, y), 2, color.filled())),
                )
                .map_err(|x| e(&x))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 11))
            .draw()
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_sizes("2^10..2^12").unwrap(), vec![1024, 2048, 4096]);
        assert_eq!(parse_sizes("1000,2^4,1000").unwrap(), vec![16, 1000]);
        assert!(parse_sizes("2^12..2^10").is_err());
        assert!(parse_sizes("x").is_err());
        assert_eq!(parse_n("2^22").unwrap(), 1 << 22);
        assert_eq!(parse_bytes("50M").unwrap(), 50 << 20);
        assert_eq!(parse_bytes("32MiB").unwrap(), 32 << 20);
        assert_eq!(parse_bytes("2^20").unwrap(), 1 << 20);
    }

    #[test]
    fn cases_parse() {
        let c = parse_case("f32-sum-min-max").unwrap();
        assert_eq!(c.vars.len(), 3);
        assert_eq!(parse_case("f64-max").unwrap().vars[0].0, Op::Maximum);
        assert!(parse_case("f32").is_err());
        let h = parse_case("u32-hist256").unwrap();
        assert_eq!(h.shape, Shape::Span(256));
        assert_eq!(h.body, "hist[(uint)x[i] & 255u] += 1u;");
        assert!(parse_case("u32-hist100").is_err());
        assert!(parse_case("u32-hist131072").is_err());
        let a = parse_case("f32-argmin").unwrap();
        assert_eq!((a.shape, a.ty), (Shape::ArgMin, ElemType::F32));
        for c in DEFAULT_CASES.split(',') {
            assert_eq!(parse_case(c).unwrap().name, c);
        }
    }

    #[test]
    fn peer_cases() {
        let p = |case: Option<&str>, op: Option<&str>| PeerPoint {
            lib: "torch".into(),
            case: case.map(String::from),
            op: op.map(String::from),
            device: "X".into(),
            n: 1,
            gbps: 1.0,
            device_time_us: 1.0,
        };
        assert_eq!(peer_case(&p(None, None)), "f32-sum");
        assert_eq!(peer_case(&p(None, Some("sum+aminmax"))), "f32-sum-min-max");
        assert_eq!(peer_case(&p(None, Some("argmin"))), "f32-argmin");
        assert_eq!(
            peer_case(&p(Some("u32-hist1024"), Some("bincount"))),
            "u32-hist1024"
        );
        assert!(has_gpu_peer(&parse_case("u32-hist256").unwrap()));
        assert!(!has_gpu_peer(&parse_case("f64-sum").unwrap()));
    }

    #[test]
    fn native_hist_and_argmin_match_the_host() {
        for n in [0usize, 5, 4099, 300_001] {
            for bins in [1usize, 256, 65536] {
                let case = parse_case(&format!("u32-hist{bins}")).unwrap();
                let data = reference::random_input(case.data_op, case.ty, n, 5);
                let Expect::Span(want) = expect(&case, &data) else {
                    panic!("span")
                };
                let HostVec::U32(v) = &data else {
                    panic!("u32")
                };
                assert_eq!(native_hist(v, bins), want, "n {n} bins {bins}");
                assert_eq!(want.iter().map(|&c| c as usize).sum::<usize>(), n);
            }
            let case = parse_case("f32-argmin").unwrap();
            let data = reference::random_input(case.data_op, case.ty, n, 5);
            let Expect::ArgMin(v, at) = expect(&case, &data) else {
                panic!("argmin")
            };
            let HostVec::F32(x) = &data else {
                panic!("f32")
            };
            let got = native_argmin(x);
            assert_eq!(got.map(|(v, _)| Value::F32(v)), v, "n {n}");
            assert_eq!(got.map_or(u64::MAX, |(_, i)| i as u64), at, "n {n}");
        }
        // Ties across blocks and chunks: the lowest index wins.
        let mut x = vec![1.0f32; 1 << 20];
        for i in [900_000, 70_000, 5000, 4097] {
            x[i] = -3.0;
        }
        assert_eq!(native_argmin(&x), Some((-3.0, 4097)));
    }

    #[test]
    fn rotation_states() {
        let r = rotation(100 << 20, 32 << 20, CacheMode::Auto);
        assert_eq!((r.copies, r.flush), (1, false));
        // Above LLC/4: copies that together exceed 2x LLC.
        let r = rotation(16 << 20, 32 << 20, CacheMode::Auto);
        assert_eq!(r.copies, 5);
        assert!(r.copies as u64 * (16 << 20) > 2 * (32 << 20));
        assert!(r.state.starts_with("cold: rotating 5"));
        // Up to LLC/4: copies that together fit in half the LLC.
        let r = rotation(4 << 20, 50 << 20, CacheMode::Auto);
        assert_eq!(r.copies, 6);
        assert!(r.copies as u64 * (4 << 20) <= 25 << 20);
        assert!(r.state.starts_with("warm"));
        assert_eq!(rotation(4096, 32 << 20, CacheMode::Auto).copies, 16);
        // --cache cold flushes instead.
        let r = rotation(4 << 20, 50 << 20, CacheMode::Cold);
        assert_eq!((r.copies, r.flush), (1, true));
        assert_eq!(reps_for(None, false, 4 << 20), 100);
        assert_eq!(reps_for(None, false, 1 << 30), 20);
        assert_eq!(reps_for(Some(7), false, 4 << 20), 7);
    }

    #[test]
    fn native_matches_reference() {
        let data = reference::random_input(Op::Plus, ElemType::F64, 100_003, 3);
        let case = parse_case("f64-sum").unwrap();
        let r = reference::reference(Op::Plus, &data, None);
        assert!((native(&case, &data).unwrap() - r.value).abs() < 1e-6 * r.sum_abs);
        let data = reference::random_input(Op::Plus, ElemType::I32, 100_003, 3);
        let case = parse_case("i32-sum").unwrap();
        let r = reference::reference(Op::Plus, &data, None);
        assert_eq!(native(&case, &data).unwrap() as i128, r.exact.unwrap());
    }
}
