//! Call-to-result wall time of the shortcuts (`queue.sum(&x)`, `min`, `argmax`) against the
//! general path they stand for (`parallel_for_reduce` into a result buffer made once, then
//! `get(0)`), on one device, at the sizes given. The two are interleaved call by call, so
//! both see the same machine load; medians over `reps` calls after 20 warm-up calls.
//!
//! `cargo run --release --example shortcut_latency -- DEVICE [reps] [n...]`
//! (DEVICE: index or name part, as `Queue::with_device`; default reps 300, n 1024 1048576).
//! The issue-29 target: the shortcut no slower than the general path + 5% on a CPU, + 2 us on
//! a GPU. Results: design/bench/2026-11-24-cpu-shortcut-latency.txt.
use clreduce::{reduction, reduction_argmax, Buffer, Kernel, Op, Queue, Range};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `a` and `b` alternately (`a` first on even calls, `b` first on odd ones), in us.
fn pair(
    reps: usize,
    mut a: impl FnMut() -> clreduce::Result<()>,
    mut b: impl FnMut() -> clreduce::Result<()>,
) -> clreduce::Result<(f64, f64)> {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for r in 0..reps + 20 {
        for first in [r % 2 == 0, r % 2 != 0] {
            let t0 = Instant::now();
            if first {
                a()?;
            } else {
                b()?;
            }
            let dt = t0.elapsed().as_nanos() as f64 / 1e3;
            if r >= 20 {
                if first { &mut ta } else { &mut tb }.push(dt);
            }
        }
    }
    Ok((median(ta), median(tb)))
}

fn line(what: &str, n: usize, short: f64, general: f64) {
    println!(
        "{what:<7} n={n:<8} shortcut {short:>9.2} us  general {general:>9.2} us  ratio {:.3}  diff {:+.2} us",
        short / general,
        short - general
    );
}

fn main() -> clreduce::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let q = Queue::with_device(args.first().map(String::as_str).unwrap_or("0"))?;
    let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let sizes: Vec<usize> = if args.len() > 2 {
        args[2..].iter().filter_map(|s| s.parse().ok()).collect()
    } else {
        vec![1 << 10, 1 << 20]
    };
    println!("{} ({reps} calls each, medians)", q.device().label());
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
        let x: Buffer<f32> = q.buffer_from(&data)?;
        let res = q.buffer_from(&[0.0f32])?;
        let ix = q.buffer_from(&[0u64])?;
        let (a, b) = pair(
            reps,
            || q.sum(&x).map(drop),
            || {
                q.parallel_for_reduce(
                    Range::new(n as u64),
                    reduction(&res, Op::Plus).initialize_to_identity(),
                    Kernel::new("sum += x[i];").arg("x", &x),
                )?;
                res.get(0).map(drop)
            },
        )?;
        line("sum", n, a, b);
        let (a, b) = pair(
            reps,
            || q.min(&x).map(drop),
            || {
                q.parallel_for_reduce(
                    Range::new(n as u64),
                    reduction(&res, Op::Minimum).initialize_to_identity(),
                    Kernel::new("combine(sum, x[i]);").arg("x", &x),
                )?;
                res.get(0).map(drop)
            },
        )?;
        line("min", n, a, b);
        let (a, b) = pair(
            reps,
            || q.argmax(&x).map(drop),
            || {
                q.parallel_for_reduce(
                    Range::new(n as u64),
                    reduction_argmax(&res, &ix).initialize_to_identity(),
                    Kernel::new("combine(sum, x[i], i);").arg("x", &x),
                )?;
                res.get(0)?;
                ix.get(0).map(drop)
            },
        )?;
        line("argmax", n, a, b);
    }
    Ok(())
}
