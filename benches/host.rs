//! Host-side costs (criterion): planning, a pure function of capabilities and request, on the
//! H200 fixture; and, on every CPU OpenCL device (not the simulator), a small reduction
//! (n = 1024, f32 sum) with its program already in the process-wide cache: launched and read
//! back (the fixed cost of a small reduction), the launch call alone (launch-cache hit and
//! enqueue), and `Queue::explain` (validation and planning through the launch cache). The
//! launch benches are skipped, with a note, when no CPU device is found (`source
//! scripts/env.sh` first).
//!
//!   cargo bench --bench host

use clreduce::caps::{fixtures, DeviceKind};
use clreduce::plan::{self, Determinism, FormRequest, Request, Shape, Strategy, VarRequest};
use clreduce::{devices, reduction, ElemType, Kernel, Mask, Op, Options, Queue, Range};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn request(vars: &[Op], n: u64) -> Request {
    Request {
        form: FormRequest::Range { n },
        shape: Shape::linear(n, 1),
        vars: vars
            .iter()
            .map(|&op| VarRequest::new(op, ElemType::F32))
            .collect(),
        strategy: Strategy::AUTO,
        determinism: Determinism::Deterministic,
        tuning: None,
        pure_body: true,
        narrow_reads: false,
    }
}

fn planning(c: &mut Criterion) {
    let caps = fixtures::nvidia_h200();
    let one = request(&[Op::Plus], 1 << 24);
    let three = request(&[Op::Plus, Op::Minimum, Op::Maximum], 1 << 24);
    c.bench_function("plan/nvidia_h200/f32-sum/2^24", |b| {
        b.iter(|| plan::plan(black_box(&caps), black_box(&one)).expect("plans"))
    });
    c.bench_function("plan/nvidia_h200/f32-sum-min-max/2^24", |b| {
        b.iter(|| plan::plan(black_box(&caps), black_box(&three)).expect("plans"))
    });
}

fn cached_launch(c: &mut Criterion) {
    let cpus: Vec<_> = devices()
        .map(|ds| {
            ds.iter()
                .filter(|d| {
                    !d.is_simulator()
                        && d.caps().map(|c| c.kind == DeviceKind::Cpu).unwrap_or(false)
                })
                .collect()
        })
        .unwrap_or_default();
    if cpus.is_empty() {
        eprintln!("host bench: no CPU OpenCL device found (source scripts/env.sh); launch benches skipped");
        return;
    }
    for dev in cpus {
        let q = Queue::with_mask(dev, Mask::default()).expect("queue");
        let n = 1024usize;
        let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let expect: f32 = data.iter().sum();
        let x = q.buffer_from(&data).expect("input");
        let sum = q.buffer_from(&[0f32]).expect("result");
        let launch = || {
            q.parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&sum, Op::Plus).initialize_to_identity(),
                Kernel::new("sum += x[i];").arg("x", &x),
                Options::default(),
            )
            .expect("launch")
        };
        let run = || {
            let _ev = launch();
            sum.get(0).expect("read")
        };
        assert_eq!(run(), expect, "the warm-up result");
        let compiled = clreduce::compiled_programs();
        let name = dev.label();
        eprintln!("host bench: device {}: {name}", dev.index());
        // The whole small reduction: launch call, kernel, blocking read of the result.
        c.bench_function(
            &format!("launch+read/f32-sum/n=1024/device{}", dev.index()),
            |b| b.iter(|| black_box(run())),
        );
        // The launch call alone (launch-cache hit, argument setting, enqueue); the wait for
        // the kernel is outside the timed part.
        c.bench_function(
            &format!("enqueue/f32-sum/n=1024/device{}", dev.index()),
            |b| {
                b.iter_custom(|iters| {
                    let mut total = std::time::Duration::ZERO;
                    for _ in 0..iters {
                        let t = std::time::Instant::now();
                        let ev = launch();
                        total += t.elapsed();
                        ev.wait().expect("wait");
                    }
                    total
                })
            },
        );
        // Planning through the queue (validation, the launch cache, no enqueue).
        c.bench_function(
            &format!("explain/f32-sum/n=1024/device{}", dev.index()),
            |b| {
                b.iter(|| {
                    q.explain(
                        Range::new(n as u64),
                        reduction(&sum, Op::Plus).initialize_to_identity(),
                        Options::default(),
                    )
                    .expect("explain")
                })
            },
        );
        assert_eq!(
            clreduce::compiled_programs(),
            compiled,
            "every timed launch hit the program cache"
        );
    }
}

criterion_group!(benches, planning, cached_launch);
criterion_main!(benches);
