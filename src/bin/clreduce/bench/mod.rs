//! `clreduce bench`: device time, wall time and GB/s of clreduce reductions per device, case,
//! strategy and size, against a streaming-read reference measured in the same run, a native
//! multi-threaded Rust peer (CPU devices), and optionally PyOpenCL and torch/cupy (`--peers`)
//! and the classic reduction optimization ladder (`--ladder`, benches/ladder/ladder.py).
//!
//! Cases (`clreduce::cases`, the model the tuner shares): scalar reductions TYPE-OP
//! (`sum += x[i];`, `combine(sum, x[i]);`), three variables in one launch (f32-sum-min-max), a
//! span histogram u32-histN (`hist[(uint)x[i] & (N-1)] += 1u;` into `reduction_span` of N u32
//! counters), TYPE-argmin (`combine(best, x[i], i);` into `reduction_argmin`), exact sums, and
//! one result per segment (TYPE-rows-RxC, TYPE-cols-RxC, TYPE-ragged-MEAN: every segment plan
//! forced in turn, the plain sum of the same bytes beside them). Every result is checked
//! against a serial host reference: integers, histograms and argmin exactly (argmin: the
//! lowest index of the minimum), float sums within the plan's combination-depth bound (per
//! segment: the segment's length + 40).
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

//!
//! Files: config.rs (the command line and what it resolves to), units.rs (sizes and bytes),
//! cache.rs (LLC and the rotation rule),
//! devices.rs (devices, queues, planning strategies), measure.rs (timed repetitions),
//! stream.rs (the streaming reference), sweep.rs (the points), peers/ (native rayon, PyOpenCL,
//! torch/cupy), ladder.rs, results.rs (the records), report.rs (tables), plot.rs (SVG),
//! progress.rs (the bar). This file runs them as named steps.

mod cache;
mod config;
mod devices;
mod ladder;
mod measure;
mod peers;
mod plot;
mod progress;
mod report;
mod results;
mod scale;
mod stream;
mod sweep;
mod units;

pub use config::BenchArgs;

use crate::error::{CliError, CliResult};
use config::Config;
use devices::Dev;
use progress::Progress;
use results::{Report, Skip};

/// `clreduce bench`: Ok(false) for a result that does not match the host reference (exit 1);
/// a malformed argument (checked before anything runs) or an output file that could not be
/// written is the command's error (exit 2).
pub fn run(a: BenchArgs) -> CliResult<bool> {
    config::check_outputs(&a)?;
    if a.mpi {
        return scale::run_mpi_bench(&a);
    }
    if a.split {
        return scale::run_split_bench(&a);
    }
    let cfg = Config::parse(a)?;
    let command = report::command_line();
    let root = peers::python::repo_root();
    // The peer scripts are looked for before the sweep: a missing folder is reported at once.
    let peers_dir = if cfg.a.peers && !cfg.a.ladder {
        match peers::locate::find_here(cfg.a.peers_dir.as_deref()) {
            Ok(d) => Some(d),
            Err(msg) => return Err(CliError::Usage(msg)),
        }
    } else {
        None
    };

    // Devices, their caches, sizes, and which strategies plan for each case.
    let mut skipped: Vec<Skip> = Vec::new();
    let mut devs = devices::setup(&cfg, &mut skipped)?;
    if devs.is_empty() {
        return Err(CliError::Usage(
            "no device to bench (simulators are left out; name one with --device)".into(),
        ));
    }
    let ladder = cfg.a.ladder;
    let any_cpu = devs.iter().any(|d| d.info.kind == "cpu");
    let native_on = !cfg.a.no_native && any_cpu && !ladder;
    let pb = Progress::new(steps(&cfg, &devs));

    if !ladder {
        stream::measure_all(&mut devs, cfg.reps, cfg.a.warmup, &pb);
    }
    let all_sizes = sweep::all_sizes(&devs);
    let mut sweep = sweep::Sweep {
        cfg: &cfg,
        pb: &pb,
        native_on,
        skipped: &mut skipped,
        points: Vec::new(),
    };
    sweep.run(&devs, &all_sizes);
    let mut points = sweep.points;
    pb.finish();

    let infos: Vec<results::DevInfo> = devs.iter().map(|d| d.info.clone()).collect();
    let (mut peer_points, mut peers_note) = (Vec::new(), Vec::new());
    if let Some(dir) = &peers_dir {
        let s = peers::Sweep {
            devs: &infos,
            cases: &cfg.cases,
            all_sizes: &all_sizes,
            points: &points,
            reps: cfg.reps,
            warmup: cfg.a.warmup,
        };
        (peer_points, peers_note) = peers::run(&root, dir, &s);
        peers::attach(&mut points, &infos, &peer_points);
    }
    let ladder_points = if ladder {
        ladder::run(&root, &infos, cfg.a.device.is_some(), &all_sizes, cfg.reps)
    } else {
        Vec::new()
    };

    let header = report::Header {
        command: &command,
        reps: cfg.a.reps,
        quick: cfg.a.quick,
        warmup: cfg.a.warmup,
        cache_mode: cfg.cache_mode,
        mask: if cfg.mask.is_empty() {
            Vec::new()
        } else {
            cfg.mask.names()
        },
        native_on,
        ladder,
    };
    report::print(
        &header,
        &infos,
        &points,
        &skipped,
        &peer_points,
        &ladder_points,
    );
    let ok = points.iter().all(|p| p.check == "ok");
    let report = Report {
        command,
        reps: cfg.reps,
        warmup: cfg.a.warmup,
        threads_native: rayon::current_num_threads(),
        devices: infos,
        points,
        skipped,
        peers: peer_points,
        peers_note,
        ladder: ladder_points,
    };
    write_outputs(&cfg, &report)?;
    Ok(ok)
}

/// The progress bar's steps: every strategy at every size of every case, per device, plus
/// each device's streaming reference.
fn steps(cfg: &Config, devs: &[Dev]) -> u64 {
    devs.iter()
        .map(|d| {
            cfg.cases
                .iter()
                .map(|c| {
                    let sizes = c.layout.fixed_n().map_or(d.info.sizes.len(), |_| 1);
                    (d.strategies.get(&c.name).map_or(0, |s| s.len()) * sizes) as u64
                })
                .sum::<u64>()
                + u64::from(!cfg.a.ladder && !d.info.sizes.is_empty())
        })
        .sum()
}

/// `--json` and `--svg` (both tried; the first failure is the command's error).
fn write_outputs(cfg: &Config, report: &Report) -> CliResult<()> {
    let mut first: Option<CliError> = None;
    let mut fail = |path: &std::path::Path, e: String| {
        first.get_or_insert(CliError::Usage(format!("writing {}: {e}", path.display())));
    };
    if let Some(path) = &cfg.a.json {
        match serde_json::to_string_pretty(report)
            .map_err(|e| e.to_string())
            .and_then(|s| std::fs::write(path, s).map_err(|e| e.to_string()))
        {
            Ok(()) => outln!("wrote {}", path.display()),
            Err(e) => fail(path, e),
        }
    }
    if let Some(path) = &cfg.a.svg {
        match plot::plot(path, report) {
            Ok(()) => outln!("wrote {}", path.display()),
            Err(e) => fail(path, e.to_string()),
        }
    }
    first.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::config::{BenchArgs, Config};
    use clap::Parser;
    use clreduce::tune::TuneConfig;
    use clreduce::DynBuffer;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        a: BenchArgs,
    }

    /// Every case the tuner measures (its full and quick sets), named on the bench's command
    /// line, launches the same OpenCL program with the same options for every strategy the
    /// tuner compares: the tuner's candidates (`tune::candidate_sources`) against the bench's
    /// launch of the same case and strategy (segment plan), as the sweep builds it (without
    /// the tuning table, as the tuner plans). Issue 27: u32-or once ran `sum |= x[i]` in the bench and
    /// `combine(sum, x[i])` in the tuner.
    #[test]
    fn the_tuner_times_the_launches_the_bench_reports() {
        let Some(dev) = clreduce::devices()
            .ok()
            .and_then(|ds| ds.iter().find(|d| !d.is_simulator()))
        else {
            eprintln!("SKIP the_tuner_times_the_launches_the_bench_reports: no OpenCL device");
            return;
        };
        let q = clreduce::Queue::with_mask(dev, clreduce::Mask::default()).unwrap();
        let mut tuned = TuneConfig::full().cases;
        tuned.extend(TuneConfig::quick().cases);
        let names: Vec<String> = tuned.iter().map(|c| c.name.clone()).collect();
        let cmd = Cmd::try_parse_from(["bench", "--cases", &names.join(",")]).unwrap();
        let Ok(cfg) = Config::parse(cmd.a) else {
            panic!("the tuner's case names are bench cases")
        };
        assert_eq!(cfg.cases.len(), tuned.len());
        let mut compared = 0;
        for (t, b) in tuned.iter().zip(&cfg.cases) {
            assert_eq!(t.name, b.name);
            let n = b.n_for(1 << 12);
            let data = b.input(n as usize, 1);
            let x = DynBuffer::upload_as(&q, &data, b.stored).unwrap();
            let outs = b.outs(&q, n).unwrap();
            for (f, theirs) in clreduce::tune::candidate_sources(&q, t, n).unwrap() {
                assert!(
                    b.forces().contains(&f),
                    "{}: the bench forces {f} too",
                    b.name
                );
                let opts = b.options(cfg.determinism, f).ignore_tune_cache();
                let mine = b.launch(n, &x, &outs).source(&q, opts).unwrap();
                assert_eq!(theirs, mine, "{} with {f}", b.name);
                compared += 1;
            }
        }
        assert!(compared >= tuned.len(), "{compared} launches compared");
    }
}
