//! Developer tool: what a `kernel!` closure costs against the same body as an OpenCL C string,
//! in one run on one device. Interleaved launches of `kernel!(|i, sum| *sum += x[i])` and
//! `Kernel::new("sum += x[i];").arg("x", &x)` over an f32 sum of 2^`log2n` elements: the
//! profiled device time and the wall time from launch to the host result (medians), and the host
//! cost of turning each into a `Kernel` alone. The generated programs are identical
//! (tests/closures.rs::same_program_as_the_string_form), so the device times should agree to
//! within run-to-run noise; the host side adds a lock and a short comparison per launch.
//!
//! `cargo run --release --example closure_vs_string -- DEVICE [log2n] [reps]`

use clreduce::{kernel, reduction, Kernel, Op, Options, Queue, Range};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dev = args.get(1).map(String::as_str).unwrap_or("0");
    let log2n: u32 = args.get(2).map_or(Ok(24), |s| s.parse())?;
    let reps: usize = args.get(3).map_or(Ok(30), |s| s.parse())?;
    let q = Queue::with_device(dev)?.with_profiling()?;
    let n = 1usize << log2n;
    let data: Vec<f32> = (0..n).map(|k| ((k % 1000) as f32 - 500.0) / 64.0).collect();
    let x = q.buffer_from(&data)?;
    let sum = q.buffer_from(&[0.0f32])?;
    let k = kernel!(|i, sum| *sum += x[i]);
    let string = || Kernel::new("sum += x[i];").arg("x", &x);
    let form = Range::new(n as u64);
    let run = |kern: Kernel| -> clreduce::Result<(f64, f64, f32)> {
        sum.write(0, &[0.0])?;
        let t = Instant::now();
        let ev =
            q.parallel_for_reduce_with(form, reduction(&sum, Op::Plus), kern, Options::default())?;
        let v = sum.get(0)?;
        let wall = t.elapsed().as_nanos() as f64 / 1e3;
        Ok((ev.device_time_ns()? as f64 / 1e3, wall, v))
    };
    // Warm-up: both programs built, caches filled.
    for _ in 0..3 {
        run(Kernel::from(&k))?;
        run(string())?;
    }
    let (mut cd, mut cw, mut sd, mut sw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut same = true;
    for _ in 0..reps {
        let (d, w, a) = run(Kernel::from(&k))?;
        cd.push(d);
        cw.push(w);
        let (d, w, b) = run(string())?;
        sd.push(d);
        sw.push(w);
        same &= a.to_bits() == b.to_bits();
    }
    // The host cost of making the Kernel alone.
    let m = 100_000;
    let t = Instant::now();
    for _ in 0..m {
        std::hint::black_box(Kernel::from(&k));
    }
    let conv = t.elapsed().as_nanos() as f64 / m as f64;
    let t = Instant::now();
    for _ in 0..m {
        std::hint::black_box(string());
    }
    let newk = t.elapsed().as_nanos() as f64 / m as f64;
    println!("device: {}", q.device().label());
    println!("f32 sum of 2^{log2n}, {reps} interleaved repetitions, medians:");
    println!(
        "  closure: device {:9.1} us, launch to result {:9.1} us",
        median(cd.clone()),
        median(cw.clone())
    );
    println!(
        "  string:  device {:9.1} us, launch to result {:9.1} us",
        median(sd.clone()),
        median(sw.clone())
    );
    println!(
        "  closure/string: device {:.3}x, wall {:.3}x; results bit-identical: {same}",
        median(cd) / median(sd),
        median(cw) / median(sw)
    );
    println!("  making the Kernel: closure {conv:.0} ns, Kernel::new(..).arg(..) {newk:.0} ns");
    Ok(())
}
