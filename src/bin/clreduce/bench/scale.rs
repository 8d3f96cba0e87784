//! `clreduce bench --split` and `mpirun -np K clreduce bench --mpi`: the scale-out benchmarks
//! of issue 17, outside the sweep (their points are not per device and strategy).
//!
//! `--split`: per case (f32 sum, exact f32 sum) and size, the host wall time (launch to the
//! result on the host, median of `--reps` after `--warmup`) of each selected device alone on
//! the whole input, and of one launch split across them: by measured throughput (`auto`), and
//! by the devices' alone rates (`rates`, forced, to show a real split where `auto` keeps one
//! device), or by `--shares`, and in equal shares. Reported: the shares, the host combine time, and the ratio to the
//! fastest single device (target <= 1.1 on CPUs that share the cores).
//!
//! `--mpi` (under mpirun): each rank reduces its block (n / K) on one device; per case (f32 sum
//! and f32 argmin through the user-defined MPI operation, exact f32 sum through MPI_SUM on the
//! limbs) and size, medians over the repetitions (each after a barrier) of the local reduction
//! and of everything after it (status gather, exchange, writing the result), that time net of
//! waiting for the slowest rank's local reduction (every rank's local time is gathered after
//! each repetition), and the exchange alone; next to the same local launch without MPI. Rank 0
//! prints. Target: at most 50 us on top of the local reductions at -np 2 on one host.

use super::units::{fmt_n, parse_sizes};
use super::BenchArgs;
use crate::error::{CliError, CliResult};
use clreduce::multi::{MultiKernel, MultiQueue, Split};
use clreduce::{reduction, Op, Options, Queue, Range, Result};
use serde_json::json;
use std::time::Instant;

/// The cases: name, exact or not.
const SPLIT_CASES: [(&str, bool); 2] = [("f32-sum", false), ("f32-sum-exact", true)];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

/// Seconds of `reps` timed runs of `f` after `warmup` untimed ones.
fn timed(warmup: usize, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        f()?;
    }
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f().map(|()| t.elapsed().as_secs_f64())
        })
        .collect()
}

fn data(n: u64) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 2654435761) % 2001) as f32 * 1e-3 - 1.0)
        .collect()
}

fn opts(exact: bool) -> Options {
    if exact {
        Options::default().exact()
    } else {
        Options::default()
    }
}

fn sizes(a: &BenchArgs, default: &str) -> Result<Vec<u64>> {
    parse_sizes(a.sizes.as_deref().unwrap_or(default)).map_err(|e| clreduce::Error::BadArgument {
        name: "--sizes".into(),
        problem: e,
    })
}

/// One split configuration over `mq`: median seconds, shares, median combine microseconds.
fn run_split(
    mq: &MultiQueue,
    x: &[f32],
    split: &Split,
    exact: bool,
    warmup: usize,
    reps: usize,
) -> Result<(f64, Vec<u64>, f64)> {
    let xs = mq.scatter_with(x, split, 1)?;
    // The variable on the device with the largest share: a split that keeps one device runs
    // as that device's own launch (`MultiQueue`'s one-device path), as a user would place it.
    let home = split
        .counts()
        .iter()
        .enumerate()
        .max_by_key(|(_, &c)| c)
        .map_or(0, |(k, _)| k);
    let s = mq.queue(home).buffer_from(&[0.0f32])?;
    let mut combine = Vec::new();
    let t = timed(warmup, reps, || {
        let r = mq.parallel_for_reduce_with(
            Range::new(x.len() as u64),
            reduction(&s, Op::Plus).initialize_to_identity(),
            MultiKernel::new("sum += x[i];").arg("x", &xs),
            opts(exact),
        )?;
        combine.push(r.combine_ns as f64 / 1e3);
        Ok(())
    })?;
    Ok((median(t), split.counts().to_vec(), median(combine)))
}

/// `clreduce bench --split`.
pub fn run_split_bench(a: &BenchArgs) -> CliResult<bool> {
    let devs = crate::args::split_devices(a.device.as_deref())?;
    let queues: Vec<Queue> = devs.iter().map(Queue::new).collect::<Result<_>>()?;
    let mq = MultiQueue::new(&queues)?;
    let (warmup, reps) = (a.warmup, a.reps.unwrap_or(10));
    let t = mq.throughput()?;
    outln!(
        "clreduce bench --split: {} device(s), reps {reps} (median), warmup {warmup}",
        mq.len()
    );
    for (q, d) in queues.iter().zip(&t.devices) {
        outln!(
            "  {}: alone {:.1} us latency, {:.2} G indices/s; with the others running {:.1} us, {:.2} G/s (calibrated)",
            q.device().label(),
            d.latency_s * 1e6,
            d.rate_alone / 1e9,
            d.latency_together_s * 1e6,
            d.rate_together / 1e9
        );
    }
    outln!(
        "  split overhead (threads, scratch, partials, combine): {:.1} us",
        t.split_overhead_s * 1e6
    );
    let mut rows = Vec::new();
    for (case, exact) in SPLIT_CASES {
        if exact {
            let te = mq.throughput_for(opts(true).determinism)?;
            for (q, d) in queues.iter().zip(&te.devices) {
                outln!(
                    "  exact sums: {}: alone {:.1} us latency, {:.3} G indices/s; with the others running {:.1} us, {:.3} G/s",
                    q.device().label(),
                    d.latency_s * 1e6,
                    d.rate_alone / 1e9,
                    d.latency_together_s * 1e6,
                    d.rate_together / 1e9
                );
            }
            outln!(
                "  exact sums: split overhead {:.1} us",
                te.split_overhead_s * 1e6
            );
        }
        for n in sizes(a, "2^20,2^24,2^26")? {
            let x = data(n);
            let mut alone = Vec::new();
            for q in &queues {
                let xb = q.buffer_from(&x)?;
                let s = q.buffer_from(&[0.0f32])?;
                let tt = timed(warmup, reps, || {
                    q.parallel_for_reduce_with(
                        Range::new(n),
                        reduction(&s, Op::Plus).initialize_to_identity(),
                        clreduce::Kernel::new("sum += x[i];").arg("x", &xb),
                        opts(exact),
                    )?;
                    s.get(0).map(drop)
                })?;
                alone.push(median(tt));
            }
            let best = alone.iter().cloned().fold(f64::INFINITY, f64::min);
            let det = opts(exact).determinism;
            let tw = mq.throughput_for(det)?;
            let mut configs = vec![("auto", mq.split_with(n, 1, det)?)];
            let w: Vec<f64> = match &a.shares {
                Some(s) => s
                    .split(',')
                    .map(|v| v.trim().parse().unwrap_or(-1.0))
                    .collect(),
                None => tw.devices.iter().map(|d| d.rate_alone).collect(),
            };
            configs.push((
                if a.shares.is_some() {
                    "shares"
                } else {
                    "rates"
                },
                Split::proportional(n, &w)?,
            ));
            if a.shares.is_none() && queues.len() > 1 {
                configs.push(("even", Split::proportional(n, &vec![1.0; queues.len()])?));
            }
            for (name, split) in configs {
                let (secs, counts, comb) = run_split(&mq, &x, &split, exact, warmup, reps)?;
                let line = format!(
                    "{case} n={} split {name} {:?}: {:.1} us; alone {}; ratio to the fastest single device {:.3}; host combine {:.1} us",
                    fmt_n(n),
                    counts,
                    secs * 1e6,
                    alone
                        .iter()
                        .map(|s| format!("{:.1} us", s * 1e6))
                        .collect::<Vec<_>>()
                        .join(" / "),
                    secs / best,
                    comb
                );
                outln!("{line}");
                rows.push(json!({
                    "case": case, "n": n, "split": name, "shares": counts,
                    "split_us": secs * 1e6,
                    "alone_us": alone.iter().map(|s| s * 1e6).collect::<Vec<_>>(),
                    "ratio_to_fastest": secs / best, "combine_us": comb,
                }));
            }
        }
    }
    write_json(
        a,
        json!({"devices": queues.iter().map(|q| q.device().label()).collect::<Vec<_>>(), "throughput": t, "rows": rows}),
    )
}

fn write_json(a: &BenchArgs, j: serde_json::Value) -> CliResult<bool> {
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&j).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text) {
            return Err(CliError::Usage(format!("writing {}: {e}", path.display())));
        }
    }
    Ok(true)
}

/// `mpirun -np K clreduce bench --mpi`.
#[cfg(feature = "mpi")]
pub fn run_mpi_bench(a: &BenchArgs) -> CliResult<bool> {
    use clreduce::mpi::rsmpi::collective::CommunicatorCollectives;
    use clreduce::mpi::rsmpi::topology::Communicator;
    use clreduce::mpi::{parallel_for_reduce, Deliver};
    use clreduce::reduction_argmin;
    let universe = clreduce::mpi::rsmpi::initialize().ok_or_else(|| {
        CliError::Usage("--mpi: MPI could not be initialized (run under mpirun)".into())
    })?;
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    // A rank's own failure (its device, its queue) is agreed on before any collective: the
    // others would wait in it forever.
    let setup = (|| -> CliResult<_> {
        let d = crate::args::rank_device(a.device.as_deref(), rank as usize)?;
        let q = Queue::new(&d)?;
        let mq = MultiQueue::new(std::slice::from_ref(&q))?;
        Ok((d, q, mq))
    })();
    let agreed = clreduce::mpi::agree(
        &world,
        setup.as_ref().err().map(|e| e.to_string()).as_deref(),
    );
    let (d, q, mq) = setup?;
    agreed?;
    let (warmup, reps) = (a.warmup, a.reps.unwrap_or(50));
    let mut rows = Vec::new();
    if rank == 0 {
        outln!("clreduce bench --mpi: {size} rank(s), rank 0 on {}, reps {reps} (median), warmup {warmup}", d.label());
    }
    for (case, exact, argmin) in [
        ("f32-sum", false, false),
        ("f32-sum-exact", true, false),
        ("f32-argmin", false, true),
    ] {
        for n in sizes(a, "2^10,2^16,2^20,2^24")? {
            let (lo, hi) = (n * rank / size, n * (rank + 1) / size);
            let x = data(n)[lo as usize..hi as usize].to_vec();
            let m = x.len() as u64;
            let buffers = (|| -> Result<_> {
                let xs = mq.scatter_with(&x, &Split::from_counts(&[m]), 1)?;
                Ok((xs, q.buffer_from(&[0.0f32])?, q.buffer_from(&[0u64])?))
            })();
            let agreed = clreduce::mpi::agree(
                &world,
                buffers.as_ref().err().map(|e| e.to_string()).as_deref(),
            );
            let (xs, s, ix) = buffers?;
            agreed?;
            let red = || {
                if argmin {
                    reduction_argmin(&s, &ix).initialize_to_identity()
                } else {
                    reduction(&s, Op::Plus).initialize_to_identity()
                }
            };
            let body = if argmin {
                "combine(sum, x[i], i);"
            } else {
                "sum += x[i];"
            };
            let local_only = timed(warmup, reps, || {
                mq.parallel_for_reduce_with(
                    Range::new(m),
                    red(),
                    MultiKernel::new(body).arg("x", &xs),
                    opts(exact),
                )
                .map(drop)
            });
            let agreed = clreduce::mpi::agree(
                &world,
                local_only.as_ref().err().map(|e| e.to_string()).as_deref(),
            );
            let local_only = local_only?;
            agreed?;
            let (mut local, mut comb, mut exch, mut net) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for rep in 0..warmup + reps {
                world.barrier();
                let r = parallel_for_reduce(
                    &world,
                    &mq,
                    Range::new(m),
                    red(),
                    MultiKernel::new(body).arg("x", &xs),
                    opts(exact),
                    Deliver::All,
                )?;
                // Every rank's local time: the status gather also waits for the slowest rank's
                // local reduction, which is not the combine's cost.
                let mut all = vec![0u64; size as usize];
                world.all_gather_into(&r.local_ns, &mut all[..]);
                let slowest = *all.iter().max().unwrap_or(&r.local_ns);
                if rep >= warmup {
                    local.push(r.local_ns as f64 / 1e3);
                    comb.push(r.combine_ns as f64 / 1e3);
                    exch.push(r.exchange_ns as f64 / 1e3);
                    net.push((r.combine_ns as f64 - (slowest - r.local_ns) as f64) / 1e3);
                }
            }
            if rank == 0 {
                let lo_us = median(local_only) * 1e6;
                outln!(
                    "{case} n={} ({} per rank): local only {:.1} us; with MPI: local {:.1} us, then status + exchange + write {:.1} us, {:.1} us net of waiting for the slowest rank, of which the exchange {:.1} us",
                    fmt_n(n),
                    m,
                    lo_us,
                    median(local.clone()),
                    median(comb.clone()),
                    median(net.clone()),
                    median(exch.clone()),
                );
                rows.push(json!({
                    "case": case, "n": n, "ranks": size, "local_only_us": lo_us,
                    "local_us": median(local), "combine_us": median(comb),
                    "combine_net_us": median(net), "exchange_us": median(exch),
                }));
            }
        }
    }
    if rank == 0 {
        return write_json(a, json!({"ranks": size, "device": d.label(), "rows": rows}));
    }
    Ok(true)
}

/// Without the `mpi` feature, `--mpi` is refused.
#[cfg(not(feature = "mpi"))]
pub fn run_mpi_bench(_a: &BenchArgs) -> CliResult<bool> {
    Err(CliError::Usage(
        "--mpi needs a clreduce built with `--features mpi` (OpenMPI: scripts/setup.sh)".into(),
    ))
}
