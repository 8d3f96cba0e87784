//! Measured throughput of the devices of a [`MultiQueue`](super::MultiQueue), and the split it
//! gives: each device is modeled as `time(n) = latency + n / rate`, measured with a small and a
//! large f32 sum alone, then the large one on all devices at once (devices that share the
//! host's cores slow each other down, which only a concurrent run shows). A launch of `n`
//! indices is cut so that every device finishes at the same predicted time, dropping devices
//! whose latency alone exceeds it, and given to the fastest device alone when that is
//! predicted to be faster than the split. Exact sums are measured apart (exact f32 sums): they
//! are compute-bound where plain sums are memory-bound, and devices that share cores slow each
//! other down differently on them. design/scaleout.md, "The split".

use crate::api::queue::Queue;
use crate::error::Result;
use serde::Serialize;
use std::time::Instant;

/// One device's model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceRate {
    /// Seconds of fixed cost per launch (launch to result on the host).
    pub latency_s: f64,
    /// Indices per second when it runs alone.
    pub rate_alone: f64,
    /// Indices per second while every device runs its share at once.
    pub rate_together: f64,
    /// Seconds of fixed cost per launch while every device launches at once (the drivers'
    /// and the host threads' contention: NVIDIA's OpenCL measured about 1.8x its alone latency
    /// with two GPUs in one process).
    pub latency_together_s: f64,
}

/// The devices' models and where they came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    /// One model per device, in device order.
    pub devices: Vec<DeviceRate>,
    /// Seconds a launch split over several devices costs beyond its slowest share (threads,
    /// the shares' scratch variables, reading the partials, the host combine).
    pub split_overhead_s: f64,
    /// `calibrated` (measured here), or `given` (`MultiQueue::with_throughput`, e.g. from
    /// measured-planning data).
    pub source: String,
}

impl Throughput {
    /// Devices with given rates (indices per second, e.g. bytes per second divided by the
    /// element size) and launch latencies (seconds), assumed not to slow each other down.
    pub fn given(rates: &[f64], latencies_s: &[f64]) -> Throughput {
        Throughput {
            devices: rates
                .iter()
                .zip(latencies_s.iter().chain(std::iter::repeat(&0.0)))
                .map(|(&r, &l)| DeviceRate {
                    latency_s: l,
                    rate_alone: r,
                    rate_together: r,
                    latency_together_s: l,
                })
                .collect(),
            split_overhead_s: 0.0,
            source: "given".into(),
        }
    }

    /// The weight of each device for a launch of `n` indices: the share each gets so that all
    /// finish together (0 for a device left out), or only the fastest device's when that is
    /// predicted to be faster. Also returns the predicted seconds.
    pub fn weights(&self, n: u64) -> (Vec<f64>, f64) {
        let d = &self.devices;
        let n = n as f64;
        let alone = |k: usize| d[k].latency_s + n / d[k].rate_alone.max(1e-9);
        let best = (0..d.len())
            .min_by(|&a, &b| alone(a).total_cmp(&alone(b)))
            .unwrap_or(0);
        // Equal finish time T with n_k = r_k (T - L_k) over the devices in use; drop any
        // device whose latency is above T and solve again.
        let mut inuse: Vec<usize> = (0..d.len()).filter(|&k| d[k].rate_together > 0.0).collect();
        let lat = |k: usize| d[k].latency_together_s;
        let mut t = f64::INFINITY;
        while !inuse.is_empty() {
            let rsum: f64 = inuse.iter().map(|&k| d[k].rate_together).sum();
            let lsum: f64 = inuse.iter().map(|&k| d[k].rate_together * lat(k)).sum();
            t = (n + lsum) / rsum;
            let before = inuse.len();
            inuse.retain(|&k| lat(k) < t);
            if inuse.len() == before {
                break;
            }
        }
        let mut w = vec![0.0; d.len()];
        if inuse.len() < 2 || alone(best) <= t + self.split_overhead_s {
            w[best] = 1.0;
            return (w, alone(best));
        }
        for &k in &inuse {
            w[k] = d[k].rate_together * (t - lat(k));
        }
        (w, t + self.split_overhead_s)
    }
}

/// Indices of the small calibration launch (latency-bound everywhere).
const SMALL: usize = 1 << 12;

/// Indices of the large calibration launch on `q`: past the last-level cache, where a large
/// reduction streams from memory. On an H200, 2^23 f32 (32 MiB) sat in its 50 MiB L2 and
/// measured 3238 and 2037 G indices/s on two identical GPUs against 1095 from HBM at 2^30
/// (design/bench/2026-11-23-h200x2-scaleout.txt); 2^26 (256 MiB, 60 us) streamed but two
/// identical GPUs still measured 1030 and 1132 G/s, a 5% skew in the split; 2^27 (512 MiB,
/// 120 us) is twice the signal. CPUs keep 2^23, at most a quarter of the device's largest
/// allocation.
fn large_for(q: &Queue) -> usize {
    let caps = q.caps();
    let want: usize = if caps.kind == crate::caps::DeviceKind::Gpu {
        1 << 27
    } else {
        1 << 23
    };
    want.min((caps.max_alloc / 16) as usize).max(SMALL * 4)
}

/// Seconds of the fastest of `reps` runs of `f` (after one warm-up run).
fn best_of(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Enqueues an f32 sum over the first `n` elements of `x` on `q`; returns its result buffer.
fn launch_sum(
    q: &Queue,
    x: &crate::Buffer<f32>,
    n: usize,
    o: crate::Options,
) -> Result<crate::Buffer<f32>> {
    let s = q.buffer_from(&[0.0f32])?;
    q.parallel_for_reduce_with(
        crate::Range::new(n as u64),
        crate::reduction(&s, crate::Op::Plus).initialize_to_identity(),
        crate::Kernel::new("sum += x[i];").arg("x", x),
        o,
    )?;
    Ok(s)
}

/// An f32 sum over the first `n` elements of `x` on `q`, its result read back.
fn sum(q: &Queue, x: &crate::Buffer<f32>, n: usize, o: crate::Options) -> Result<()> {
    launch_sum(q, x, n, o)?.get(0)?;
    Ok(())
}

/// The fastest of four runs, per device, of an f32 sum of `sizes[k]` indices on every device
/// at once, as a split launch runs them (`MultiQueue::run_shares`): all enqueued and flushed,
/// then read in device order; each device's time is from the first launch to its result on
/// the host.
fn together(
    queues: &[Queue],
    bufs: &[crate::Buffer<f32>],
    sizes: &[usize],
    o: crate::Options,
) -> Result<Vec<f64>> {
    let mut times = vec![f64::INFINITY; queues.len()];
    for _ in 0..4 {
        let t = Instant::now();
        let mut results = Vec::with_capacity(queues.len());
        for ((q, x), &m) in queues.iter().zip(bufs).zip(sizes) {
            let s = launch_sum(q, x, m, o)?;
            q.flush()?;
            results.push(s);
        }
        for (best, s) in times.iter_mut().zip(&results) {
            s.get(0)?;
            *best = best.min(t.elapsed().as_secs_f64());
        }
    }
    Ok(times)
}

/// Measures every device: a small and a large sum alone (latency and rate alone), then a small
/// and a large one on all of them at once, the large ones shared by the alone rates (latency
/// and rate together: contention in the drivers shows in the first, shared memory bandwidth or
/// cores in the second).
pub(crate) fn calibrate(queues: &[Queue], det: crate::Determinism) -> Result<Throughput> {
    let o = crate::Options::default().determinism(det);
    let mut bufs = Vec::with_capacity(queues.len());
    let mut devices = Vec::with_capacity(queues.len());
    let larges: Vec<usize> = queues.iter().map(large_for).collect();
    let most = larges.iter().copied().max().unwrap_or(SMALL);
    let data: Vec<f32> = (0..most).map(|i| (i % 7) as f32).collect();
    for (q, &large) in queues.iter().zip(&larges) {
        let x = q.buffer_from(&data[..large])?;
        let t_small = best_of(3, || sum(q, &x, SMALL, o))?;
        let t_large = best_of(3, || sum(q, &x, large, o))?;
        let rate = (large - SMALL) as f64 / (t_large - t_small).max(1e-9);
        let latency = (t_small - SMALL as f64 / rate).max(0.0);
        devices.push(DeviceRate {
            latency_s: latency,
            rate_alone: rate,
            rate_together: rate,
            latency_together_s: latency,
        });
        bufs.push(x);
    }
    if queues.len() > 1 {
        let total: f64 = devices.iter().map(|d| d.rate_alone).sum();
        let shares: Vec<usize> = devices
            .iter()
            .zip(&larges)
            .map(|(d, &large)| {
                let m = (large as f64 * queues.len() as f64 * d.rate_alone / total) as usize;
                m.clamp(SMALL * 2, large)
            })
            .collect();
        let small = together(queues, &bufs, &vec![SMALL; queues.len()], o)?;
        let large = together(queues, &bufs, &shares, o)?;
        for (k, d) in devices.iter_mut().enumerate() {
            let rate = (shares[k] - SMALL) as f64 / (large[k] - small[k]).max(1e-9);
            d.rate_together = rate.min(d.rate_alone);
            d.latency_together_s = (small[k] - SMALL as f64 / d.rate_together).max(d.latency_s);
        }
    }
    let mut t = Throughput {
        devices,
        split_overhead_s: 0.0,
        source: format!("calibrated ({det:?} f32 sums)"),
    };
    if queues.len() > 1 {
        t.split_overhead_s = split_overhead(queues, &t, o)?;
    }
    Ok(t)
}

/// The overhead of the multi-device path: a small launch split evenly over every device,
/// through `MultiQueue`, against the slowest share's predicted time when all run at once.
fn split_overhead(queues: &[Queue], t: &Throughput, o: crate::Options) -> Result<f64> {
    let mq = super::MultiQueue::new(queues)?.with_throughput(t.clone())?;
    let n = SMALL as u64 * queues.len() as u64;
    let split = super::Split::proportional(n, &vec![1.0; queues.len()])?;
    let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let x = mq.scatter_with(&data, &split, 1)?;
    let s = queues[0].buffer_from(&[0.0f32])?;
    let secs = best_of(3, || {
        mq.parallel_for_reduce_with(
            crate::Range::new(n),
            crate::reduction(&s, crate::Op::Plus).initialize_to_identity(),
            super::MultiKernel::new("sum += x[i];").arg("x", &x),
            o,
        )
        .map(drop)
    })?;
    let slowest = t
        .devices
        .iter()
        .zip(split.counts())
        .map(|(d, &c)| d.latency_together_s + c as f64 / d.rate_together)
        .fold(0.0, f64::max);
    Ok((secs - slowest).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(l: f64, alone: f64, together: f64) -> DeviceRate {
        DeviceRate {
            latency_s: l,
            rate_alone: alone,
            rate_together: together,
            latency_together_s: l,
        }
    }

    #[test]
    fn equal_finish_times() {
        let t = Throughput {
            devices: vec![dev(0.0, 3e9, 3e9), dev(0.0, 1e9, 1e9)],
            split_overhead_s: 0.0,
            source: "test".into(),
        };
        let (w, secs) = t.weights(4_000_000_000);
        assert!((w[0] / w[1] - 3.0).abs() < 1e-9, "{w:?}");
        assert!((secs - 1.0).abs() < 1e-9);
    }

    #[test]
    fn small_launches_go_to_the_lowest_latency() {
        let t = Throughput {
            devices: vec![dev(60e-6, 1e9, 1e9), dev(8e-6, 1e9, 1e9)],
            split_overhead_s: 20e-6,
            source: "test".into(),
        };
        let (w, _) = t.weights(1000);
        assert_eq!(w, vec![0.0, 1.0]);
        // Large launches use both.
        let (w, _) = t.weights(1 << 30);
        assert!(w[0] > 0.0 && w[1] > w[0]);
    }

    #[test]
    fn devices_that_share_cores_fall_back_to_the_fastest() {
        // Together each runs at less than half its alone rate: one device alone is faster.
        let t = Throughput {
            devices: vec![dev(0.0, 3e9, 1.2e9), dev(0.0, 2.5e9, 1.0e9)],
            split_overhead_s: 0.0,
            source: "test".into(),
        };
        let (w, _) = t.weights(1 << 28);
        assert_eq!(w, vec![1.0, 0.0]);
    }
}
