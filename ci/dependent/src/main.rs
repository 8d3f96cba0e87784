//! One real reduction through clreduce used as a dependency: a `kernel!` closure summing fresh
//! pseudo-random u32 values on the first OpenCL device, checked exactly against the host sum,
//! plus the `sum` shortcut and an f32 maximum on the same buffer.

use clreduce::{kernel, reduction, Op, Queue, Range};

fn main() -> clreduce::Result<()> {
    let device = clreduce::devices()?
        .first()
        .expect("no OpenCL device found (source scripts/env.sh)");
    let queue = Queue::new(device)?;
    // A fresh seed each run (never all zeros), printed so a failure can be replayed.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let mut state = seed;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    };
    let n = 100_003usize;
    let data: Vec<u32> = (0..n).map(|_| next() % 1000).collect();
    let expected = data.iter().fold(0u32, |a, &b| a.wrapping_add(b));

    let x = queue.buffer_from(&data)?;
    let sum = queue.buffer_from(&[0u32])?;
    let ev = queue.parallel_for_reduce(
        Range::new(n as u64),
        reduction(&sum, Op::Plus),
        kernel!(|i, sum| *sum += x[i]),
    )?;
    let got = sum.get(0)?;
    println!("device: {}", device.label());
    println!("seed: {seed:#x}, n = {n}");
    println!("kernel! sum: {got} (host {expected})");
    if let Some(plan) = ev.plan() {
        println!("{plan}");
    }
    assert_eq!(got, expected, "kernel! sum differs from the host sum");
    let shortcut = queue.sum(&x)?;
    println!("queue.sum: {shortcut}");
    assert_eq!(shortcut, expected, "queue.sum differs from the host sum");

    let floats: Vec<f32> = data.iter().map(|&v| v as f32 * 0.5).collect();
    let max_host = floats.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let y = queue.buffer_from(&floats)?;
    let max = queue.reduce(&y, Op::Maximum)?;
    println!("max: {max} (host {max_host})");
    assert_eq!(max, max_host, "maximum differs from the host maximum");
    println!("ok");
    Ok(())
}
