//! The sweep of `clreduce bench`: per case and size (host data and references shared by the
//! devices), per device (input copies by the cache rule, on both queues), per strategy: the
//! device time on the profiling queue, then the wall time on the default queue with the native
//! peer interleaved on CPU devices, both checked against the host; one `Point` each. A
//! segmented case (`f32-rows-RxC`, ...) runs at its own R x C or over each size (ragged), with
//! the plain sum of the same input buffers timed once per device beside its points.

use super::cache::{rotation, sysfs_llc, CachePlan};
use super::config::Config;
use super::devices::{short_reason, Dev};
use super::measure::{measure, point_buffers, reps_for, Between, Measured, Spread};
use super::peers::native::native;
use super::progress::Progress;
use super::results::{Point, Skip};
use super::units::fmt_n;
use clreduce::cases::{Case, Expected, Force, Outs};
use clreduce::plan::Determinism;
use clreduce::{Buffer, DynBuffer, HostVec, Result};
use std::time::Instant;

/// Every size benched on any device, ascending.
pub fn all_sizes(devs: &[Dev]) -> Vec<u64> {
    let mut v: Vec<u64> = devs.iter().flat_map(|d| d.info.sizes.clone()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// What the sweep shares: the configuration, the bar, whether the native peer runs, and
/// where skipped strategies go.
pub struct Sweep<'a> {
    pub cfg: &'a Config,
    pub pb: &'a Progress,
    pub native_on: bool,
    pub skipped: &'a mut Vec<Skip>,
    pub points: Vec<Point>,
}

/// One case at one size: its host data and what the host expects of it.
struct At<'a> {
    case: &'a Case,
    n: u64,
    data: &'a HostVec,
    want: &'a [Expected],
    bytes: u64,
    reps: usize,
}

/// The native peer of one point: its own copies of the input (rotated as the host's LLC
/// decides) and, under `--cache cold`, a flush of 2x the LLC of host memory before each call.
struct NativePeer {
    datas: Vec<HostVec>,
    host_flush: Vec<u64>,
    rep: usize,
}

impl NativePeer {
    fn new(data: &HostVec, bytes: u64, cfg: &Config, on: bool) -> NativePeer {
        // The native peer reads host memory, the CPU's LLC decides its rotation (and, under
        // --cache cold, its flush: a read of 2x LLC of host memory before each call).
        let host_llc = sysfs_llc().unwrap_or(32 << 20);
        let host_cache = rotation(bytes, host_llc, cfg.cache_mode);
        NativePeer {
            datas: if on {
                (0..host_cache.copies).map(|_| data.clone()).collect()
            } else {
                Vec::new()
            },
            host_flush: if on && host_cache.flush {
                vec![1; (2 * host_llc / 8) as usize]
            } else {
                Vec::new()
            },
            rep: 0,
        }
    }

    /// One native call: flush (untimed) where asked, then the timed call; its wall time in ns.
    fn call(&mut self, case: &Case) -> Option<u64> {
        if !self.host_flush.is_empty() {
            std::hint::black_box(self.host_flush.iter().sum::<u64>());
        }
        let d = &self.datas[self.rep % self.datas.len()];
        self.rep += 1;
        let t0 = Instant::now();
        let r = native(case, d)?;
        let e = t0.elapsed().as_nanos() as u64;
        std::hint::black_box(r);
        Some(e)
    }
}

/// A point's buffers on one queue: the input copies, the results and the flush buffer.
type Bufs = (Vec<DynBuffer>, Outs, Option<Buffer<u32>>);

impl Sweep<'_> {
    /// The whole sweep: case, size, device, strategy.
    pub fn run(&mut self, devs: &[Dev], all_sizes: &[u64]) {
        for case in &self.cfg.cases {
            let esz = case.stored.size() as u64;
            // Rows and columns run at their own R x C (where the device takes it).
            let fixed = case.layout.fixed_n();
            let sizes = fixed.map_or_else(|| all_sizes.to_vec(), |n| vec![n]);
            for n in sizes {
                let users: Vec<&Dev> = devs
                    .iter()
                    .filter(|d| {
                        (d.info.sizes.contains(&n)
                            || fixed.is_some() && self.cfg.max_n.is_none_or(|m| n <= m))
                            && n * esz <= d.info.max_alloc
                            && d.strategies.get(&case.name).is_some_and(|s| !s.is_empty())
                    })
                    .collect();
                if !users.is_empty() {
                    self.point(case, n, &users);
                }
            }
        }
    }

    /// One case at one size on every device that runs it.
    fn point(&mut self, case: &Case, n: u64, users: &[&Dev]) {
        self.pb.note(format!("{} at {}", case.name, fmt_n(n)));
        self.pb
            .set_message(format!("{} {}: input", case.name, fmt_n(n)));
        let data = case.input(n as usize, 1);
        let want = case.expect(&data);
        let bytes = n * case.stored.size() as u64;
        let at = At {
            case,
            n,
            data: &data,
            want: &want,
            bytes,
            reps: reps_for(self.cfg.a.reps, self.cfg.a.quick, bytes),
        };
        let mut peer = NativePeer::new(&data, bytes, self.cfg, self.native_on);
        for d in users {
            self.on_device(d, &at, &mut peer);
        }
    }

    /// One case at one size on one device: every strategy that plans there.
    fn on_device(&mut self, d: &Dev, at: &At, peer: &mut NativePeer) {
        let CachePlan {
            copies: k,
            flush,
            state: cache,
        } = rotation(at.bytes, d.info.llc_bytes, self.cfg.cache_mode);
        // Buffers belong to their queue: one set on the profiling queue (device time), one on
        // the default queue (wall time).
        let flush_words = flush.then_some((2 * d.info.llc_bytes / 4) as usize);
        let bufs = point_buffers(&d.queue, at.case, at.n, at.data, k, flush_words).and_then(|p| {
            Ok((
                p,
                point_buffers(&d.wall_queue, at.case, at.n, at.data, k, flush_words)?,
            ))
        });
        let strategies = &d.strategies[&at.case.name];
        let (prof, wall) = match bufs {
            Ok(b) => b,
            Err(e) => {
                self.pb.warn(format!(
                    "bench: {}: {} at {}: {}",
                    d.info.label,
                    at.case.name,
                    fmt_n(at.n),
                    e.to_string().lines().next().unwrap_or("")
                ));
                self.pb.inc(strategies.len() as u64);
                return;
            }
        };
        let mut dev_native: Option<Spread> = None;
        let plain = self.plain_sum(d, at, &prof);
        for &s in strategies {
            // On a CPU device the native peer runs interleaved with the auto plan's
            // repetitions (or the first strategy's, if auto is not benched), and every strategy
            // of the point is compared with that measurement.
            let cpu = d.info.kind == "cpu" && self.native_on;
            let interleave = cpu && dev_native.is_none();
            self.pb.set_message(format!(
                "{}: {} {} {}{}",
                d.device.name(),
                at.case.name,
                fmt_n(at.n),
                s,
                if interleave { " + native peer" } else { "" }
            ));
            let measured =
                self.both_queues(d, at, s, &prof, &wall, interleave.then_some(&mut *peer));
            match measured {
                Ok((m, w)) => {
                    if interleave {
                        dev_native = w.native_ns;
                    }
                    let native_for_dev = dev_native.filter(|_| cpu);
                    let mut p = point(d, at, s, &cache, m, w, native_for_dev);
                    if let Some(t) = plain {
                        p.plain_ns = Some(t.median);
                        p.x_plain = Some(p.device_ns.median as f64 / t.median.max(1) as f64);
                    }
                    self.points.push(p);
                }
                Err(e) => {
                    let reason = short_reason(&e, &d.queue.caps().label());
                    self.pb.warn(format!(
                        "bench: {}: {} {} {}: {reason}",
                        d.info.label,
                        at.case.name,
                        fmt_n(at.n),
                        s
                    ));
                    self.skipped.push(Skip {
                        device: d.info.label.clone(),
                        case: format!("{} at {}", at.case.name, fmt_n(at.n)),
                        strategy: s.to_string(),
                        reason,
                    });
                }
            }
            self.pb.inc(1);
        }
    }

    /// A segmented case's plain sum over the same input buffers (auto plan, the same
    /// repetitions), on the profiling queue: `None` for the other cases or where it failed
    /// (warned). Its result is checked like any point's.
    fn plain_sum(&self, d: &Dev, at: &At, prof: &Bufs) -> Option<Spread> {
        if !at.case.layout.is_segmented() {
            return None;
        }
        let plain = at.case.plain_sum();
        let r = (|| -> Result<(Spread, String)> {
            let outs = plain.outs(&d.queue, at.n)?;
            let opts = clreduce::Options {
                tuning: self.cfg.tuning,
                ..plain.options(Determinism::Deterministic, Force::Auto)
            };
            let (warmup, reps) = (self.cfg.a.warmup, at.reps);
            let m = measure(
                &d.queue,
                &plain,
                at.n,
                &prof.0,
                &outs,
                opts,
                warmup,
                reps,
                &mut Between::default(),
            )?;
            let want = plain.expect(at.data);
            Ok((m.device_ns, plain.check(&m.plan, &m.got, &want)))
        })();
        match r {
            Ok((t, check)) if check == "ok" => Some(t),
            Ok((_, check)) => {
                self.pb.warn(format!(
                    "bench: {}: {} at {}: the plain sum beside it: {check}",
                    d.info.label,
                    at.case.name,
                    fmt_n(at.n)
                ));
                None
            }
            Err(e) => {
                self.pb.warn(format!(
                    "bench: {}: {} at {}: the plain sum beside it failed: {}",
                    d.info.label,
                    at.case.name,
                    fmt_n(at.n),
                    e.to_string().lines().next().unwrap_or("")
                ));
                None
            }
        }
    }

    /// Device time on the profiling queue, then wall time on the default queue (a profiling
    /// queue's enqueue costs more: decisions.md), each repetition checked; the native peer
    /// timed after each wall-time repetition when given.
    fn both_queues(
        &self,
        d: &Dev,
        at: &At,
        s: Force,
        prof: &Bufs,
        wall: &Bufs,
        peer: Option<&mut NativePeer>,
    ) -> Result<(Measured, Measured)> {
        let opts = clreduce::Options {
            tuning: self.cfg.tuning,
            ..at.case.options(self.cfg.determinism, s)
        };
        let (warmup, reps) = (self.cfg.a.warmup, at.reps);
        let m = measure(
            &d.queue,
            at.case,
            at.n,
            &prof.0,
            &prof.1,
            opts,
            warmup,
            reps,
            &mut Between {
                flush: prof.2.as_ref(),
                native: None,
            },
        )?;
        let mut call;
        let native: Option<&mut dyn FnMut() -> Option<u64>> = match peer {
            Some(p) => {
                call = || p.call(at.case);
                Some(&mut call)
            }
            None => None,
        };
        let mut between = Between {
            flush: wall.2.as_ref(),
            native,
        };
        let w = measure(
            &d.wall_queue,
            at.case,
            at.n,
            &wall.0,
            &wall.1,
            opts,
            warmup,
            reps,
            &mut between,
        )?;
        Ok((m, w))
    }
}

/// The point of one strategy: device time and plan from the profiling queue, wall time from
/// the default queue, the check of both, and the native peer's comparison on a CPU device.
fn point(
    d: &Dev,
    at: &At,
    s: Force,
    cache: &str,
    m: Measured,
    w: Measured,
    native_for_dev: Option<Spread>,
) -> Point {
    let check = match (
        at.case.check(&m.plan, &m.got, at.want),
        at.case.check(&w.plan, &w.got, at.want),
    ) {
        (a, b) if a == b => a,
        (a, b) => format!("{a} (profiling queue); {b} (default queue)"),
    };
    let m = Measured {
        wall_ns: w.wall_ns,
        ..m
    };
    let bytes = at.bytes;
    let gbps = bytes as f64 / m.device_ns.median.max(1) as f64;
    let wall_gbps = bytes as f64 / m.wall_ns.median.max(1) as f64;
    let native_gbps = native_for_dev.map(|t| bytes as f64 / t.median.max(1) as f64);
    Point {
        device: d.info.label.clone(),
        device_index: d.info.index,
        case: at.case.name.clone(),
        strategy: s.to_string(),
        plan: m.plan.summary(), // `segment tiles` for a segmented launch
        n: at.n,
        bytes,
        cache: cache.to_string(),
        reps: at.reps,
        check,
        device_ns: m.device_ns,
        wall_ns: m.wall_ns,
        gbps,
        pct_stream: d.info.stream.as_ref().map(|r| 100.0 * gbps / r.gbps),
        native_ns: native_for_dev.map(|t| t.median),
        native_gbps,
        native_ratio: native_gbps.map(|g| wall_gbps / g),
        peer: None,
        peer_gbps: None,
        peer_ratio: None,
        plain_ns: None,
        x_plain: None,
    }
}
