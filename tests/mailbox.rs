//! Shortcuts whose results come back through a host mailbox (design/decisions.md section 56):
//! the launch's last work-group posts the result, a fence and a sequence number into pinned
//! host memory, and the host takes it from there with no read command. NVIDIA's queues do this
//! by default (`Workarounds::host_mailbox`); here every device's queue is also opened with
//! `CLREDUCE_READ_PATH=mailbox=1`, so the CPU devices run the same code (their kernels store
//! into host memory directly). Each result is checked on the host and against a queue without
//! mailboxes, and the mailbox must be in use (proven) after the calls, except on Oclgrind, whose
//! simulated memory has no host addresses (skipped with that reason).
//!
//! One test in its own binary: it sets the environment variable before opening its queues.

mod common;

use clreduce::{devices, Queue};
use common::{short, sim_lock, Tally};

/// Seeded values (an LCG): `n` i32 in [-1000, 1000) and f32 in [-0.5, 0.5).
fn data(n: usize, seed: u64) -> (Vec<i32>, Vec<f32>) {
    let mut s = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 33
    };
    (0..n)
        .map(|_| {
            let r = next();
            (
                (r % 2000) as i32 - 1000,
                (r >> 7) as f32 / (1u64 << 24) as f32 - 0.5,
            )
        })
        .unzip()
}

/// The lowest index of the largest element.
fn argmax<T: PartialOrd + Copy>(v: &[T]) -> (T, u64) {
    let mut best = (v[0], 0u64);
    for (i, &x) in v.iter().enumerate() {
        if x > best.0 {
            best = (x, i as u64);
        }
    }
    best
}

#[test]
fn shortcuts_through_the_host_mailbox() {
    let mut t = Tally::new("shortcuts_through_the_host_mailbox");
    for d in devices().unwrap() {
        let dev = short(d);
        let _g = sim_lock(d);
        let spec = d.index().to_string();
        std::env::set_var("CLREDUCE_READ_PATH", "mailbox=1");
        let q = Queue::with_device(&spec).unwrap();
        std::env::remove_var("CLREDUCE_READ_PATH");
        let plain = Queue::with_device(&spec).unwrap();
        let sizes: &[usize] = if d.is_simulator() {
            &[1, 777]
        } else {
            &[1, 1000, 65_537, 300_007]
        };
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(7, |e| e.as_nanos() as u64);
        let mut ok = true;
        for &n in sizes {
            let (ints, floats) = data(n, seed ^ n as u64);
            let (xi, xf) = (
                q.buffer_from(&ints).unwrap(),
                q.buffer_from(&floats).unwrap(),
            );
            let (pi, pf) = (
                plain.buffer_from(&ints).unwrap(),
                plain.buffer_from(&floats).unwrap(),
            );
            let want_sum: i32 = ints.iter().sum();
            let host_f: f64 = floats.iter().map(|&v| v as f64).sum();
            // Three rounds: the first proves the mailbox against its read, the next take it.
            for round in 0..3 {
                let got = (
                    q.sum(&xi).unwrap(),
                    q.min(&xi).unwrap(),
                    q.argmax(&xi).unwrap(),
                    q.sum(&xf).unwrap(),
                    q.argmax(&xf).unwrap(),
                );
                let base = (
                    plain.sum(&pi).unwrap(),
                    plain.min(&pi).unwrap(),
                    plain.argmax(&pi).unwrap(),
                    plain.sum(&pf).unwrap(),
                    plain.argmax(&pf).unwrap(),
                );
                let case = format!("n={n} round {round}");
                let want = (
                    want_sum,
                    *ints.iter().min().unwrap(),
                    Some(argmax(&ints)),
                    base.3,
                    Some(argmax(&floats)),
                );
                // Integers exact; the f32 sum within n * 2^-24 * sum|x| of the f64 host sum
                // and bit-equal to the queue without mailboxes (deterministic plans).
                let bound = n as f64
                    * f32::EPSILON as f64
                    * floats.iter().map(|v| v.abs() as f64).sum::<f64>();
                let close = (got.3 as f64 - host_f).abs() <= bound.max(1e-6);
                if (got.0, got.1, got.2, got.3.to_bits(), got.4)
                    != (want.0, want.1, want.2, want.3.to_bits(), want.4)
                    || base.0 != want_sum
                    || !close
                {
                    t.fail(
                        &dev,
                        &case,
                        &format!("mailbox {got:?}, plain {base:?}, host sum {want_sum} / {host_f}"),
                    );
                    ok = false;
                }
            }
        }
        if !ok {
            continue;
        }
        if d.is_simulator() {
            t.skip(
                &dev,
                "mailbox in use",
                "Oclgrind's simulated memory has no host addresses: its queues read",
            );
            assert!(
                !q.__mailbox_proven(),
                "{dev}: a mailbox on a serialized device"
            );
        } else if q.__mailbox_proven() {
            t.pass(&dev);
        } else {
            t.fail(
                &dev,
                "mailbox in use",
                "the queue's mailboxes are not proven after 3 rounds of shortcuts",
            );
        }
    }
    t.finish();
}
