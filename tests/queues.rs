//! A buffer belongs to its device, not to one queue (issue 29): every queue on a device shares
//! the device's context, so buffers move between queues of one device (two plain queues, a
//! profiling queue beside a plain one, one queue per thread) with every command ordered after
//! the buffer's earlier commands; a buffer of another device is `ForeignBuffer` naming both.
//!
//! Every device found runs every case (Oclgrind with smaller sizes). Inputs are fresh random
//! integers, results compared exactly with a host sum.

#[path = "common/cli.rs"]
mod cli_run;
use crate::common;

use clreduce::{devices, reduction, Error, Kernel, Mask, Op, Queue, Range};
use common::{short, sim_lock, Tally};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh seed per run (printed, so that a failure can be replayed by hand).
fn seed() -> u64 {
    let s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    eprintln!("seed {s:#x}");
    s
}

/// Random i32 in [-1e6, 1e6] (xorshift64*).
fn random_i32(n: usize, seed: &mut u64) -> Vec<i32> {
    (0..n)
        .map(|_| {
            *seed ^= *seed >> 12;
            *seed ^= *seed << 25;
            *seed ^= *seed >> 27;
            let r = seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33;
            (r % 2_000_001) as i32 - 1_000_000
        })
        .collect()
}

fn host_sum(v: &[i32]) -> i32 {
    v.iter().fold(0i32, |a, &b| a.wrapping_add(b))
}

/// Checks `got == want`, recording a failure with `what` otherwise.
fn same<T: PartialEq + std::fmt::Debug>(bad: &mut Vec<String>, what: &str, got: T, want: T) {
    if got != want {
        bad.push(format!("{what}: got {got:?}, want {want:?}"));
    }
}

/// One device: a buffer made on queue A used by queue B and by a profiling queue, in every
/// direction (input, written argument, result variable, reads and writes), each step ordered
/// after the one before.
fn across_queues(d: &clreduce::Device, seed: &mut u64) -> clreduce::Result<Vec<String>> {
    let mut bad = Vec::new();
    let qa = Queue::with_mask(d, Mask::default())?;
    let qb = Queue::with_mask(d, Mask::default())?;
    let qp = qa.with_profiling()?;
    let n = if d.is_simulator() {
        4099
    } else {
        (1 << 20) + 3
    };
    let mut data = random_i32(n, seed);
    // Input made on A, reduced on B and on the profiling queue.
    let x = qa.buffer_from(&data)?;
    same(
        &mut bad,
        "sum on B of A's buffer",
        qb.sum(&x)?,
        host_sum(&data),
    );
    same(
        &mut bad,
        "max on the profiling queue",
        qp.max(&x)?,
        *data.iter().max().unwrap(),
    );
    // A write through A (B used the buffer last), then a reduction on B sees it.
    let fresh = random_i32(n / 2, seed);
    x.write(n / 4, &fresh)?;
    data[n / 4..n / 4 + fresh.len()].copy_from_slice(&fresh);
    same(
        &mut bad,
        "sum on B after a write",
        qb.sum(&x)?,
        host_sum(&data),
    );
    same(&mut bad, "read back after B", x.to_vec()?, data.clone());
    // A zero-fill pending on A (Queue::buffer), read by a kernel on B.
    let z = qa.buffer::<i32>(n)?;
    same(
        &mut bad,
        "sum on B of A's zero-filled buffer",
        qb.sum(&z)?,
        0,
    );
    // A result variable and a written argument made on A, a launch on B, reads after it.
    let res = qa.buffer_from(&[0i32])?;
    let y = qa.buffer::<i32>(n)?;
    qb.parallel_for_reduce(
        Range::new(n as u64),
        reduction(&res, Op::Plus),
        Kernel::new("y[i] = x[i] + 1; sum += x[i];")
            .arg("x", &x)
            .arg_mut("y", &y),
    )?;
    same(
        &mut bad,
        "result on A's buffer",
        res.get(0)?,
        host_sum(&data),
    );
    let want_y: Vec<i32> = data.iter().map(|v| v + 1).collect();
    same(&mut bad, "argument written on B, read", y.to_vec()?, want_y);
    // ... and reduced on A again, then the profiling queue writes into B's buffer.
    same(
        &mut bad,
        "sum on A of the argument B wrote",
        qa.sum(&y)?,
        host_sum(&data).wrapping_add(n as i32),
    );
    let on_b = qb.buffer_from(&[5i32, -3, 9])?;
    let ev = qp.parallel_for_reduce(
        Range::new(n as u64),
        reduction(&on_b, Op::Minimum).initialize_to_identity(),
        Kernel::new("combine(sum, x[i]);").arg("x", &x),
    )?;
    ev.wait()?;
    same(
        &mut bad,
        "min on the profiling queue into B's buffer",
        on_b.to_vec()?,
        vec![*data.iter().min().unwrap(), -3, 9],
    );
    match ev.device_time_ns() {
        Ok(t) if t > 0 => {}
        other => bad.push(format!("profiling queue's device time: {other:?}")),
    }
    same(
        &mut bad,
        "argmin on B",
        qb.argmin(&x)?.map(|(v, _)| v),
        data.iter().min().copied(),
    );
    Ok(bad)
}

/// Buffers made on one queue work on every other queue of the same device, in both directions.
#[test]
fn buffers_move_between_the_queues_of_a_device() {
    let mut t = Tally::new("buffers_move_between_the_queues_of_a_device");
    let mut s = seed();
    for d in devices().unwrap() {
        let _g = sim_lock(d);
        let dev = short(d);
        match across_queues(d, &mut s) {
            Ok(bad) if bad.is_empty() => t.pass(&dev),
            Ok(bad) => t.fail(&dev, "across queues", &bad.join("; ")),
            Err(e) => t.fail(&dev, "across queues", &e.to_string()),
        }
    }
    t.finish();
}

/// Two threads, each with its own queue on the device, reduce the same buffer over and over
/// (and each writes its own result buffer, made by the other thread's queue).
#[test]
fn two_threads_with_their_own_queues_reduce_one_buffer() {
    let mut t = Tally::new("two_threads_with_their_own_queues_reduce_one_buffer");
    let mut s = seed();
    for d in devices().unwrap() {
        let _g = sim_lock(d);
        let dev = short(d);
        let n = if d.is_simulator() {
            1031
        } else {
            (1 << 18) + 5
        };
        let rounds = if d.is_simulator() { 3 } else { 25 };
        let data = random_i32(n, &mut s);
        let want = host_sum(&data);
        let run = || -> clreduce::Result<Vec<String>> {
            let q0 = Queue::with_mask(d, Mask::default())?;
            let q1 = Queue::with_mask(d, Mask::default())?;
            let x = q0.buffer_from(&data)?;
            let outs = [q1.buffer_from(&[0i32])?, q0.buffer_from(&[0i32])?];
            let bad = std::thread::scope(|sc| {
                let hs: Vec<_> = [&q0, &q1]
                    .into_iter()
                    .zip(&outs)
                    .map(|(q, out)| {
                        let x = &x;
                        sc.spawn(move || -> clreduce::Result<Vec<String>> {
                            let mut bad = Vec::new();
                            for r in 0..rounds {
                                same(&mut bad, &format!("round {r} sum"), q.sum(x)?, want);
                                q.parallel_for_reduce(
                                    Range::new(n as u64),
                                    reduction(out, Op::Plus).initialize_to_identity(),
                                    Kernel::new("sum += x[i];").arg("x", x),
                                )?;
                                same(&mut bad, &format!("round {r} variable"), out.get(0)?, want);
                            }
                            Ok(bad)
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("thread panicked"))
                    .collect::<clreduce::Result<Vec<_>>>()
            })?;
            Ok(bad.concat())
        };
        match run() {
            Ok(bad) if bad.is_empty() => t.pass(&dev),
            Ok(bad) => t.fail(&dev, "two threads", &bad.join("; ")),
            Err(e) => t.fail(&dev, "two threads", &e.to_string()),
        }
    }
    t.finish();
}

/// A buffer of another device is still refused, naming both devices, and nothing is written.
#[test]
fn a_buffer_of_another_device_names_both_devices() {
    let mut t = Tally::new("a_buffer_of_another_device_names_both_devices");
    let all = devices().unwrap();
    if all.len() < 2 {
        t.skip_device(
            &short(&all[0]),
            "another device",
            "only one OpenCL device here: no other device to take a buffer from",
        );
    }
    let mut s = seed();
    for d in all {
        for o in all.iter().filter(|o| o.index() != d.index()) {
            let _g = (d.is_simulator() || o.is_simulator()).then(common::sim_serial);
            let dev = format!("{} <- {}", short(d), short(o));
            let run = || -> clreduce::Result<Vec<String>> {
                let mut bad = Vec::new();
                let q = Queue::with_mask(d, Mask::default())?;
                let qo = Queue::with_mask(o, Mask::default())?;
                let data = random_i32(257, &mut s.clone());
                let far = qo.buffer_from(&data)?;
                let res = q.buffer_from(&[11i32])?;
                for (what, e) in [
                    ("shortcut", q.sum(&far).err()),
                    (
                        "argument",
                        q.parallel_for_reduce(
                            Range::new(257),
                            reduction(&res, Op::Plus),
                            Kernel::new("sum += x[i];").arg("x", &far),
                        )
                        .err(),
                    ),
                ] {
                    match e {
                        Some(Error::ForeignBuffer {
                            buffer_device,
                            queue_device,
                            ..
                        }) if buffer_device == o.label() && queue_device == d.label() => {}
                        other => bad.push(format!("{what}: {other:?}")),
                    }
                }
                same(&mut bad, "result left as it was", res.get(0)?, 11);
                same(&mut bad, "input left as it was", far.to_vec()?, data);
                Ok(bad)
            };
            match run() {
                Ok(bad) if bad.is_empty() => t.pass(&dev),
                Ok(bad) => t.fail(&dev, "another device", &bad.join("; ")),
                Err(e) => t.fail(&dev, "another device", &e.to_string()),
            }
        }
        s = s.rotate_left(7);
    }
    t.finish();
}

/// The shortcuts take their results in buffers reused from the queue's pool: stale contents
/// from the last call never leak into the next (every op after every other, on fresh data),
/// and threads calling shortcuts on one queue at once each get their own result buffer.
#[test]
fn shortcuts_reuse_their_result_buffers_safely() {
    let mut t = Tally::new("shortcuts_reuse_their_result_buffers_safely");
    let mut s = seed();
    for d in devices().unwrap() {
        let _g = sim_lock(d);
        let dev = short(d);
        let n = if d.is_simulator() { 517 } else { 70_001 };
        let threads = if d.is_simulator() { 2 } else { 4 };
        let inputs: Vec<Vec<i32>> = (0..threads).map(|_| random_i32(n, &mut s)).collect();
        let run = || -> clreduce::Result<Vec<String>> {
            let q = Queue::with_mask(d, Mask::default())?;
            let mut bad = Vec::new();
            for (k, data) in inputs.iter().enumerate() {
                let x = q.buffer_from(data)?;
                let (lo, hi) = (*data.iter().min().unwrap(), *data.iter().max().unwrap());
                let first = |v: i32| data.iter().position(|&e| e == v).unwrap() as u64;
                same(&mut bad, &format!("{k} max"), q.max(&x)?, hi);
                same(&mut bad, &format!("{k} sum"), q.sum(&x)?, host_sum(data));
                same(
                    &mut bad,
                    &format!("{k} argmin"),
                    q.argmin(&x)?,
                    Some((lo, first(lo))),
                );
                same(&mut bad, &format!("{k} min"), q.min(&x)?, lo);
                same(
                    &mut bad,
                    &format!("{k} argmax"),
                    q.argmax(&x)?,
                    Some((hi, first(hi))),
                );
                let product_of_signs = data.iter().map(|v| v.signum()).product::<i32>();
                let signs = q.buffer_from(&data.iter().map(|v| v.signum()).collect::<Vec<_>>())?;
                same(
                    &mut bad,
                    &format!("{k} reduce(*)"),
                    q.reduce(&signs, Op::Multiplies)?,
                    product_of_signs,
                );
            }
            let xs = inputs
                .iter()
                .map(|v| q.buffer_from(v))
                .collect::<clreduce::Result<Vec<_>>>()?;
            let per_thread = std::thread::scope(|sc| {
                let hs: Vec<_> = xs
                    .iter()
                    .zip(&inputs)
                    .map(|(x, data)| {
                        let q = &q;
                        sc.spawn(move || -> clreduce::Result<Vec<String>> {
                            let mut bad = Vec::new();
                            let hi = *data.iter().max().unwrap();
                            for r in 0..10 {
                                same(
                                    &mut bad,
                                    &format!("thread sum {r}"),
                                    q.sum(x)?,
                                    host_sum(data),
                                );
                                same(
                                    &mut bad,
                                    &format!("thread argmax {r}"),
                                    q.argmax(x)?.map(|(v, _)| v),
                                    Some(hi),
                                );
                            }
                            Ok(bad)
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("thread panicked"))
                    .collect::<clreduce::Result<Vec<_>>>()
            })?;
            bad.extend(per_thread.concat());
            Ok(bad)
        };
        match run() {
            Ok(bad) if bad.is_empty() => t.pass(&dev),
            Ok(bad) => t.fail(&dev, "shortcuts", &bad.join("; ")),
            Err(e) => t.fail(&dev, "shortcuts", &e.to_string()),
        }
    }
    t.finish();
}

/// The read paths (`CLREDUCE_READ_PATH`, src/runtime/readpath.rs, design/decisions.md section
/// 49) return the same results: `clreduce reduce` in a child process (the variable is read when
/// a queue is made) with each path, on every device (Oclgrind with a smaller n), every variable
/// checked on the host; a value that does not parse is refused with the known settings.
#[test]
fn read_paths_return_the_same_results() {
    let mut t = Tally::new("read_paths_return_the_same_results");
    let paths = [
        "wait=0",
        "wait=1,spin=1",
        "poll=0,pinned=1",
        "wait=0,spin=1,flush=1,pinned=1",
        "poll=50,flush=1",
    ];
    for d in devices().unwrap() {
        let dev = short(d);
        let index = d.index().to_string();
        let n = if d.is_simulator() { "5003" } else { "300007" };
        for path in paths {
            let args = [
                "reduce",
                "--device",
                &index,
                "--type",
                "i32",
                "--op",
                "sum,min,argmax",
                "--n",
                n,
            ];
            let (code, out, err) = cli_run::cli_with(&args, &[("CLREDUCE_READ_PATH", path)]);
            if code == 0 && out.contains("PASS:      3 of 3") {
                t.pass(&dev);
            } else {
                t.fail(&dev, path, &format!("exit {code}\n{out}\n{err}"));
            }
        }
    }
    let (code, out, err) = cli_run::cli_with(
        &["reduce", "--n", "10"],
        &[("CLREDUCE_READ_PATH", "spin=2")],
    );
    cli_run::assert_refused_cleanly("CLREDUCE_READ_PATH=spin=2", &out, &err);
    assert!(
        code != 0 && err.contains("spin=2") && err.contains("pinned=0|1"),
        "exit {code}: {err}"
    );
    t.finish();
}
