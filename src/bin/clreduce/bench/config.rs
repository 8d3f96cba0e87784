//! The command line of `clreduce bench` (`BenchArgs`) and what it resolves to before anything
//! runs (`Config`): sizes, cases, strategies, mask, determinism, cache rule and LLC override.
//! A malformed value is a `CliError::Usage` naming the flag, a name the library refuses is its
//! own error: both `clreduce: error: ...`, exit 2 (main.rs).

use super::cache::CacheMode;
use super::units::{parse_bytes, parse_n, parse_sizes};
use crate::error::{CliError, CliResult};
use clap::Args;
use clreduce::cases::{Case, Force, DEFAULT_CASES};
use clreduce::plan::Determinism;
use clreduce::Mask;
use std::path::Path;
use std::path::PathBuf;

/// Options of `clreduce bench`.
#[derive(Args, Clone, Debug)]
pub struct BenchArgs {
    /// Device index or name substring, or `all` (default: every device that is not a simulator).
    #[arg(long)]
    pub device: Option<String>,
    /// Sizes: comma list of N, 2^K, or 2^A..2^B (every power of two between). Default
    /// 2^10..2^28, capped per device at max_alloc/4 and by --max-n.
    #[arg(long)]
    pub sizes: Option<String>,
    /// Largest n to run (N or 2^K).
    #[arg(long)]
    pub max_n: Option<String>,
    /// Cases: comma list of TYPE-OP (f32-sum, u32-or, i64-min, ...), f32-sum-min-max (three
    /// variables sum, lo, hi in one launch), u32-histN (a span of N u32 bins, N a power of two
    /// up to 2^24: `hist[(uint)x[i] & (N-1)] += 1u;`), f32-histN (a weighted histogram of N f32
    /// bins: `hist[as_uint(x[i]) & (N-1)] += x[i];`), TYPE-argmin (value and lowest index,
    /// `combine(best, x[i], i);`), TYPE-sum-exact, and one result per segment:
    /// PREFIX-rows-RxC (row sums of an R x C array, n = R x C), PREFIX-cols-RxC (column sums)
    /// and PREFIX-ragged-MEAN (CSR segments of that mean length over each --sizes n), PREFIX a
    /// TYPE (a sum: f32-rows-16384x16384), TYPE-OP, f32-sum-min-max or TYPE-argmin. Default:
    /// f32-sum,f64-sum,i32-sum,f32-max,f32-sum-min-max,u32-hist256,f32-argmin.
    #[arg(long)]
    pub cases: Option<String>,
    /// Strategies: comma list of auto, GROUP+CROSS (e.g. tree+last-group) and segment plans
    /// (item, group, tiles, chunks, columns: segmented cases), or `all`. Default (all): auto
    /// plus every forced strategy (segment plan) that plans on the device; the others are
    /// listed with the reason.
    #[arg(long)]
    pub strategies: Option<String>,
    /// Timed repetitions per point (median reported). Default 20, 5 with --quick.
    #[arg(long)]
    pub reps: Option<usize>,
    /// Untimed repetitions before the timed ones (the first compiles the program).
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Write every point, the devices and the skipped strategies as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Plot GB/s against n (log2) per strategy, one panel per device and case, as SVG.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// A few sizes only (2^12, 2^16, 2^20, 2^24, capped), 5 repetitions unless --reps.
    #[arg(long)]
    pub quick: bool,
    /// Also run the peers and report clreduce/peer per size: PyOpenCL's ReductionKernel (f32 sum,
    /// benches/peers/pyopencl_reduction.py) on CPU devices; on an NVIDIA GPU
    /// (benches/peers/torch_cupy_sum.py) torch.sum and cupy.sum, torch sum+min+max,
    /// torch.bincount, torch.histc and cupy.bincount (u32-histN), torch.argmin and cupy.argmin.
    #[arg(long)]
    pub peers: bool,
    /// Where the peer scripts are (pyopencl_reduction.py, torch_cupy_sum.py). Default: peers/
    /// or benches/peers/ next to the binary, then ./benches/peers, then the source tree the
    /// binary was built from; without one, --peers says where it looked and stops.
    #[arg(long, value_name = "DIR")]
    pub peers_dir: Option<std::path::PathBuf>,
    /// Instead of the sweep: the classic reduction optimization ladder (benches/ladder/ladder.py,
    /// PyOpenCL) at 2^22 and 2^26 f32 on each device, next to clreduce's auto plan.
    #[arg(long)]
    pub ladder: bool,
    /// Allow order-dependent float atomics (strategies that need them then plan).
    #[arg(long)]
    pub relaxed: bool,
    /// Capability mask for every queue (default: CLREDUCE_MASK).
    #[arg(long)]
    pub mask: Option<String>,
    /// Last-level cache size for the cache-state rule, e.g. 50M (default: the host CPU's from
    /// sysfs for CPU devices; CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, at least 64 MiB, for GPUs).
    #[arg(long)]
    pub llc: Option<String>,
    /// Skip the native Rust peer.
    #[arg(long)]
    pub no_native: bool,
    /// Cache state of the inputs: `auto` (warm up to LLC/4, cold above) or `cold` (also the
    /// small sizes, by an untimed flush of the LLC before every repetition).
    #[arg(long, default_value = "auto")]
    pub cache: String,
    /// Instead of the sweep: each device alone against one launch split across them (f32 sum
    /// and exact f32 sum; --device all or a comma list), with the shares and the host combine
    /// time (bench/scale.rs).
    #[arg(long)]
    pub split: bool,
    /// Weights of the devices' shares with --split, beside the measured split.
    #[arg(long, value_name = "W,W,...")]
    pub shares: Option<String>,
    /// Under `mpirun -np K`, instead of the sweep: the MPI combine's overhead on top of each
    /// rank's local reduction (needs --features mpi; bench/scale.rs).
    #[arg(long)]
    pub mpi: bool,
}

/// What `BenchArgs` resolve to.
pub struct Config {
    /// The arguments as given.
    pub a: BenchArgs,
    /// The repetitions the header and the peers use (points use `reps_for` per size).
    pub reps: usize,
    pub cache_mode: CacheMode,
    pub max_n: Option<u64>,
    pub sizes: Vec<u64>,
    pub cases: Vec<Case>,
    /// None: auto plus every forced strategy (segment plan) that plans.
    pub wanted: Option<Vec<Force>>,
    pub mask: Mask,
    pub determinism: Determinism,
    pub llc_override: Option<u64>,
    /// `CLREDUCE_TUNE`: the geometry and loop override every timed launch plans with, as
    /// `clreduce reduce` and the library do (before session 11 the bench ignored it).
    pub tuning: Option<clreduce::plan::Tuning>,
}

impl Config {
    /// Checks the arguments in the order a user sees them refused.
    pub fn parse(a: BenchArgs) -> CliResult<Config> {
        let flag = |name: &'static str| move |m: String| CliError::Usage(format!("{name}: {m}"));
        let reps = super::measure::reps_for(a.reps, a.quick, u64::MAX);
        let cache_mode = match a.cache.as_str() {
            "auto" => CacheMode::Auto,
            "cold" => CacheMode::Cold,
            other => {
                return Err(CliError::Usage(format!(
                    "--cache {other:?}: expected auto or cold"
                )))
            }
        };
        let max_n = a
            .max_n
            .as_deref()
            .map(parse_n)
            .transpose()
            .map_err(flag("--max-n"))?;
        let sizes = match (&a.sizes, a.quick, a.ladder) {
            (Some(s), _, _) => parse_sizes(s),
            (None, _, true) => Ok(vec![1 << 22, 1 << 26]),
            (None, true, _) => Ok(vec![1 << 12, 1 << 16, 1 << 20, 1 << 24]),
            (None, false, _) => parse_sizes("2^10..2^28"),
        }
        .map_err(flag("--sizes"))?;
        let cases = parse_cases(&a)?;
        let wanted: Option<Vec<Force>> = match a.strategies.as_deref() {
            _ if a.ladder => Some(vec![Force::Auto]),
            None | Some("all") => None,
            Some(s) => Some(
                s.split(',')
                    .filter(|x| !x.trim().is_empty())
                    .map(Force::parse)
                    .collect::<Result<Vec<_>, String>>()
                    .map_err(flag("--strategies"))?,
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
        let llc_override = a
            .llc
            .as_deref()
            .map(parse_bytes)
            .transpose()
            .map_err(flag("--llc"))?;
        check_outputs(&a)?;
        let tuning = clreduce::plan::Tuning::from_env()?;
        Ok(Config {
            a,
            reps,
            cache_mode,
            max_n,
            sizes,
            cases,
            wanted,
            mask,
            determinism,
            llc_override,
            tuning,
        })
    }
}

/// `--cases` (the default list without it; f32-sum alone for the ladder).
pub fn parse_cases(a: &BenchArgs) -> CliResult<Vec<Case>> {
    let cases: Result<Vec<Case>, String> = if a.ladder {
        Ok(vec![Case::parse("f32-sum").expect("built-in case")])
    } else {
        Case::parse_list(a.cases.as_deref().unwrap_or(DEFAULT_CASES))
    };
    match cases {
        Ok(c) if !c.is_empty() => Ok(c),
        Ok(_) => Err(CliError::Usage("--cases: no cases".into())),
        Err(e) => Err(CliError::Usage(format!("--cases: {e}"))),
    }
}

/// `--json` and `--svg` where a file can be written, checked before anything runs: not a
/// folder, in a folder that exists. `--shares` only with `--split`.
pub fn check_outputs(a: &BenchArgs) -> CliResult<()> {
    for (flag, path) in [("--json", &a.json), ("--svg", &a.svg)] {
        if let Some(p) = path {
            output_path(flag, p)?;
        }
    }
    if a.shares.is_some() && !a.split {
        return Err(CliError::Usage(
            "--shares weighs the devices of --split: give --split too, or leave --shares out"
                .into(),
        ));
    }
    Ok(())
}

/// An output file's path: refused when it is a folder or its folder does not exist.
pub fn output_path(flag: &str, p: &Path) -> CliResult<()> {
    let bad = |why: &str| Err(CliError::Usage(format!("{flag} {}: {why}", p.display())));
    if p.is_dir() {
        return bad("is a folder; give a file path");
    }
    match p.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) if !d.is_dir() => bad("its folder does not exist"),
        _ => Ok(()),
    }
}
