//! What the `MultiQueue` tests share (tests/multi.rs, tests/multi_segments.rs): the devices a
//! split runs across, the two configurations every test runs under, and the uneven splits.
//! Included with `#[path = "common/multi.rs"]`, like `common/cli.rs`.

use clreduce::multi::{MultiQueue, Split};
use clreduce::{devices, Queue};
use std::sync::OnceLock;

/// The non-simulator devices, one queue each (Oclgrind is left out, as `MultiQueue::all`
/// leaves simulators out).
pub fn device_queues() -> &'static [Queue] {
    static Q: OnceLock<Vec<Queue>> = OnceLock::new();
    Q.get_or_init(|| {
        devices()
            .expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`")
            .iter()
            .filter(|d| !d.is_simulator())
            .map(|d| Queue::new(d).expect("queue"))
            .collect()
    })
}

/// The configurations under test: every non-simulator device once (PoCL + Intel here), and
/// the same plus a second queue on the first device (three shares, one device twice). `test`
/// names the test binary in the SKIP lines.
pub fn configs(test: &str) -> Vec<(String, MultiQueue)> {
    let qs = device_queues();
    let mut out = Vec::new();
    if qs.is_empty() {
        println!("SKIP {test}: no non-simulator device");
        return out;
    }
    let names: Vec<String> = qs.iter().map(|q| q.device().name().to_string()).collect();
    if qs.len() >= 2 {
        out.push((names.join(" + "), MultiQueue::new(qs).unwrap()));
    } else {
        println!(
            "SKIP {test} across devices: {} non-simulator device(s) found; the three-queue \
             configuration still splits",
            qs.len()
        );
    }
    let mut three = qs.to_vec();
    three.push(Queue::new(qs[0].device()).unwrap());
    out.push((
        format!("{} + {} again", names.join(" + "), names[0]),
        MultiQueue::new(&three).unwrap(),
    ));
    out
}

/// Uneven splits of `n` units over `k` devices: about 1/5, then the rest weighted 2:1
/// (boundaries inside segments where units are elements), and one with only the last device's
/// share non-empty; with `one_first`, also a first share of one unit.
pub fn splits(n: u64, k: usize, one_first: bool) -> Vec<Split> {
    let a = n / 5;
    let mut counts = vec![a];
    let rest = n - a;
    for j in 1..k {
        counts.push(if j + 1 == k {
            rest - counts[1..].iter().sum::<u64>()
        } else {
            rest * 2 / 3
        });
    }
    let mut last = vec![0; k];
    last[k - 1] = n;
    let mut out = vec![Split::from_counts(&counts), Split::from_counts(&last)];
    if one_first {
        let mut one = vec![0; k];
        one[0] = n.min(1);
        one[k - 1] += n - one[0];
        out.push(Split::from_counts(&one));
    }
    out
}
