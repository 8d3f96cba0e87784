//! A/B of the read paths (`CLREDUCE_READ_PATH`, src/runtime/readpath.rs): call-to-result wall
//! time of `queue.sum(&x)` and of the general path it stands for (`parallel_for_reduce` into a
//! result buffer made once, then `get(0)`), one queue per read path on one device, the queues
//! interleaved call by call (the order rotating every round) so that every path sees the same
//! machine load; within a lane the shortcut goes first on even rounds, the general path on odd
//! ones. Medians (and quartiles) over `reps` rounds after 20 warm-up rounds.
//!
//! `cargo run --release --example read_path_ab -- DEVICE [reps] [n...]`
//! (DEVICE: index or name part, as `Queue::with_device`; default reps 300, n 1024 1048576).
//! The paths: `READ_PATHS` (`;`-separated `CLREDUCE_READ_PATH` values, `default` for none),
//! else the list below: the device's own path and, on NVIDIA, each of its parts turned off
//! (`wait=1,poll=0,pinned=0,flush=0,mailbox=0` is the path before session 9, `mailbox=0` the
//! one of session 9; the host mailbox serves the shortcut only, not the general path's read). Issue 29's target on the H200: the shortcut within 2 us of the
//! general path and no slower than torch's `x.sum().item()` (benches/peers/torch_item_latency.py)
//! in the same run; on CPUs within 5% of the general path.
use clreduce::{reduction, Buffer, Kernel, Op, Queue, Range};
use std::time::Instant;

const PATHS: &[&str] = &[
    "default",
    "mailbox=0",
    "wait=1,poll=0,pinned=0,flush=0,mailbox=0",
    "flush=0",
    "flush_min=0",
    "wait=1",
    "pinned=0",
    "spin=0,poll=0",
];

/// The median and the quartiles of `v`, in us.
fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: usize| v[(v.len() * q / 4).min(v.len() - 1)];
    (at(2), at(1), at(3))
}

/// One read path's queue with its own input copy and result buffer (so that no buffer moves
/// between queues, which would finish the other queue first).
struct Lane {
    path: String,
    q: Queue,
    x: Buffer<f32>,
    res: Buffer<f32>,
    short: Vec<f64>,
    general: Vec<f64>,
}

fn main() -> clreduce::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dev = args.first().map(String::as_str).unwrap_or("0").to_string();
    let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let sizes: Vec<usize> = if args.len() > 2 {
        args[2..].iter().filter_map(|s| s.parse().ok()).collect()
    } else {
        vec![1 << 10, 1 << 20]
    };
    let paths: Vec<String> = match std::env::var("READ_PATHS") {
        Ok(s) => s.split(';').map(|p| p.trim().to_string()).collect(),
        Err(_) => PATHS.iter().map(|p| p.to_string()).collect(),
    };
    let mut queues = Vec::new();
    for p in &paths {
        if p == "default" {
            std::env::remove_var("CLREDUCE_READ_PATH");
        } else {
            std::env::set_var("CLREDUCE_READ_PATH", p);
        }
        queues.push((p.clone(), Queue::with_device(&dev)?));
    }
    std::env::remove_var("CLREDUCE_READ_PATH");
    println!(
        "{} ({reps} rounds, medians [quartiles], every path each round)",
        queues[0].1.device().label()
    );
    for n in sizes {
        // Fresh random values (a simple LCG), not a constant.
        let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
        let data: Vec<f32> = (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        let mut lanes = Vec::new();
        for (path, q) in &queues {
            lanes.push(Lane {
                path: path.clone(),
                q: q.clone(),
                x: q.buffer_from(&data)?,
                res: q.buffer_from(&[0.0f32])?,
                short: Vec::new(),
                general: Vec::new(),
            });
        }
        let want = lanes[0].q.sum(&lanes[0].x)?;
        for r in 0..reps + 20 {
            let k = lanes.len();
            for j in 0..k {
                let lane = &mut lanes[(r + j) % k];
                // The shortcut first on even rounds, the general path first on odd ones: the
                // first of the two may meet a cache the other lanes' copies have cooled.
                let (mut a, mut b, mut got, mut g) = (0.0, 0.0, 0.0f32, 0.0f32);
                for general in [r % 2 == 1, r % 2 == 0] {
                    let t0 = Instant::now();
                    if !general {
                        got = lane.q.sum(&lane.x)?;
                        a = t0.elapsed().as_nanos() as f64 / 1e3;
                    } else {
                        lane.q.parallel_for_reduce(
                            Range::new(n as u64),
                            reduction(&lane.res, Op::Plus).initialize_to_identity(),
                            Kernel::new("sum += x[i];").arg("x", &lane.x),
                        )?;
                        g = lane.res.get(0)?;
                        b = t0.elapsed().as_nanos() as f64 / 1e3;
                    }
                }
                // Deterministic plans: every path gives the same bits.
                assert!(got.to_bits() == want.to_bits() && g.to_bits() == want.to_bits());
                if r >= 20 {
                    lane.short.push(a);
                    lane.general.push(b);
                }
            }
        }
        let base = quartiles(lanes[0].short.clone()).0;
        for lane in lanes {
            let (sm, s1, s3) = quartiles(lane.short);
            let (gm, g1, g3) = quartiles(lane.general);
            println!(
                "n={n:<8} {:<32} sum {sm:>7.2} us [{s1:>6.2} {s3:>6.2}]  general {gm:>7.2} us [{g1:>6.2} {g3:>6.2}]  x first {:.3}",
                lane.path,
                sm / base
            );
        }
    }
    Ok(())
}
