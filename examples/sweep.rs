//! Developer tool: steady-state timing of f32 sum (and a 3-variable sum/min/max) over sizes on
//! one device. `cargo run --release --example sweep -- DEVICE [reps] [log2 sizes...]`.
//! The full benchmark is `clreduce bench`; this is the quick loop used while tuning.
use clreduce::{reduction, Kernel, Op, Queue, Range};
use std::time::Instant;

fn main() -> clreduce::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let q = Queue::with_device(args.get(1).map(String::as_str).unwrap_or("0"))?.with_profiling()?;
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let sizes: Vec<u32> = if args.len() > 3 {
        args[3..].iter().filter_map(|s| s.parse().ok()).collect()
    } else {
        vec![20, 24, 28]
    };
    println!("device: {} driver {}", q.device().label(), q.caps().driver);
    for &lg in &sizes {
        let n = 1usize << lg;
        let data: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1024) as f32 / 64.0 - 8.0)
            .collect();
        let x = q.buffer_from(&data)?;
        let s = q.buffer_from(&[0.0f32])?;
        let lo = q.buffer_from(&[0.0f32])?;
        let hi = q.buffer_from(&[0.0f32])?;
        for three in [false, true] {
            let mut dev = Vec::new();
            let mut wall = Vec::new();
            let mut call = Vec::new();
            let mut plan = String::new();
            for r in 0..reps + 3 {
                let t0 = Instant::now();
                let ev = if three {
                    q.parallel_for_reduce(
                        Range::new(n as u64),
                        vec![
                            reduction(&s, Op::Plus).initialize_to_identity(),
                            reduction(&lo, Op::Minimum)
                                .name("lo")
                                .initialize_to_identity(),
                            reduction(&hi, Op::Maximum)
                                .name("hi")
                                .initialize_to_identity(),
                        ],
                        Kernel::new("float v = x[i]; sum += v; combine(lo, v); combine(hi, v);")
                            .arg("x", &x),
                    )?
                } else {
                    q.parallel_for_reduce(
                        Range::new(n as u64),
                        reduction(&s, Op::Plus).initialize_to_identity(),
                        Kernel::new("sum += x[i];").arg("x", &x),
                    )?
                };
                let t_call = t0.elapsed().as_nanos() as f64 / 1e3;
                let _v = s.get(0)?;
                let w = t0.elapsed().as_nanos() as f64 / 1e3;
                if r >= 3 {
                    dev.push(ev.device_time_ns()? as f64 / 1e3);
                    wall.push(w);
                    call.push(t_call);
                }
                plan = ev
                    .plan()
                    .map(|p| {
                        format!(
                            "{} groups={} local={} unroll={}",
                            p.summary(),
                            p.groups,
                            p.local,
                            p.unroll
                        )
                    })
                    .unwrap_or_default();
            }
            dev.sort_by(f64::total_cmp);
            wall.sort_by(f64::total_cmp);
            call.sort_by(f64::total_cmp);
            let med = dev[dev.len() / 2];
            println!(
                "2^{lg} {}: device {:.2} us (min {:.2}) = {:.0} GB/s, wall {:.1} us (launch call {:.1} us)  [{plan}]",
                if three { "sum+min+max" } else { "sum" },
                med,
                dev[0],
                n as f64 * 4.0 / med / 1e3,
                wall[wall.len() / 2],
                call[call.len() / 2]
            );
        }
    }
    Ok(())
}
