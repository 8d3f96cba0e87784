//! The devices of `clreduce bench`: which are benched (`--device`, simulators left out by
//! default), their two queues, cache and sizes, and which strategies plan for each case there
//! (those that do not are recorded as skipped, with the planner's reason).

use super::cache::llc_of;
use super::config::Config;
use super::results::{DevInfo, Skip};
use super::units::fmt_n;
use clreduce::cases::{Case, Force};
use clreduce::{devices, Device, Queue, Result};
use std::collections::BTreeMap;

/// A benched device.
pub struct Dev {
    pub device: Device,
    /// A profiling queue: device times, the streaming reference.
    pub queue: Queue,
    /// The default queue, without profiling (as a user gets it): wall times.
    pub wall_queue: Queue,
    pub info: DevInfo,
    /// Strategies (segment plans) that plan, per case name.
    pub strategies: BTreeMap<String, Vec<Force>>,
}

/// The devices `--device` names; by default every device that is not a simulator.
fn pick(spec: Option<&str>) -> Result<Vec<Device>> {
    match spec {
        None | Some("all") => Ok(devices()?
            .iter()
            .filter(|d| !d.is_simulator())
            .cloned()
            .collect()),
        Some(s) => {
            let d = clreduce::device::select(Some(s))?;
            if d.is_simulator() {
                errln!(
                    "bench: warning: {} is a simulator; its timings say nothing about hardware",
                    d.label()
                );
            }
            Ok(vec![d])
        }
    }
}

/// The first line of an error, without the "X cannot run on DEVICE: " preamble that every line
/// of a per-device listing would repeat.
pub fn short_reason(e: &clreduce::Error, device: &str) -> String {
    let full = e.to_string();
    let line = full.lines().next().unwrap_or("");
    let tail = match line.split_once(&format!("cannot run on {device}: ")) {
        Some((_, t)) => t,
        None => line,
    };
    tail.strip_prefix("the device ").unwrap_or(tail).to_string()
}

/// Every benched device with its queues, cache, sizes and planning strategies; the strategies
/// that do not plan go to `skipped`.
pub fn setup(cfg: &Config, skipped: &mut Vec<Skip>) -> Result<Vec<Dev>> {
    let mut devs = Vec::new();
    for d in pick(cfg.a.device.as_deref())? {
        let wall_queue = Queue::with_mask(&d, cfg.mask)?;
        let queue = wall_queue.with_profiling()?;
        let caps = queue.caps().clone();
        let (llc, llc_source) = match &cfg.llc_override {
            Some(b) => (*b, "--llc".to_string()),
            None => llc_of(&d, &caps),
        };
        let cap = (caps.max_alloc / 4).max(1);
        let dsizes: Vec<u64> = cfg
            .sizes
            .iter()
            .copied()
            .filter(|&n| n <= cap && cfg.max_n.is_none_or(|m| n <= m))
            .collect();
        let dropped = cfg.sizes.len() - dsizes.len();
        if dropped > 0 {
            errln!(
                "bench: {}: {dropped} size(s) above max_alloc/4 = {} or --max-n left out",
                d.label(),
                fmt_n(cap)
            );
        }
        let probe_n = dsizes.first().copied().unwrap_or(1024);
        let strategies = planning_strategies(cfg, &d, &queue, probe_n, skipped);
        devs.push(Dev {
            info: DevInfo {
                index: d.index(),
                label: d.label(),
                kind: format!("{:?}", caps.kind).to_lowercase(),
                nvidia: caps.is_nvidia(),
                driver: caps.driver.clone(),
                compute_units: caps.compute_units,
                max_alloc: caps.max_alloc,
                llc_bytes: llc,
                llc_source,
                sizes: dsizes,
                stream: None,
            },
            device: d,
            queue,
            wall_queue,
            strategies,
        });
    }
    Ok(devs)
}

/// Per case, the strategies asked for (`--strategies`, or auto and every forced one; for a
/// segmented case its segment plans) that plan on the device at `probe_n` (a rows or columns
/// case at its own R x C); the others go to `skipped`.
fn planning_strategies(
    cfg: &Config,
    d: &Device,
    queue: &Queue,
    probe_n: u64,
    skipped: &mut Vec<Skip>,
) -> BTreeMap<String, Vec<Force>> {
    let label = queue.caps().label();
    let mut strategies = BTreeMap::new();
    for case in &cfg.cases {
        let list: Vec<Force> = match &cfg.wanted {
            Some(w) => w.clone(),
            None => case.forces(),
        };
        let mut ok = Vec::new();
        for s in list {
            if !case.takes(s) {
                skipped.push(Skip {
                    device: d.label(),
                    case: case.name.clone(),
                    strategy: s.to_string(),
                    reason: if case.layout.is_segmented() {
                        "a strategy of the ordinary reductions (segmented cases take segment plans)"
                    } else {
                        "a segment plan (for segmented cases)"
                    }
                    .into(),
                });
                continue;
            }
            if let Err(e) = plans(queue, case, case.n_for(probe_n), s, cfg) {
                skipped.push(Skip {
                    device: d.label(),
                    case: case.name.clone(),
                    strategy: s.to_string(),
                    reason: short_reason(&e, &label),
                });
            } else {
                ok.push(s);
            }
        }
        strategies.insert(case.name.clone(), ok);
    }
    strategies
}

/// Whether `case` plans with `s` at `n` (the planner's refusal otherwise).
fn plans(queue: &Queue, case: &Case, n: u64, s: Force, cfg: &Config) -> Result<()> {
    let outs = case.outs(queue, n)?;
    let opts = clreduce::Options {
        tuning: cfg.tuning,
        ..case.options(cfg.determinism, s)
    };
    case.explain(queue, n, &outs, opts)?;
    Ok(())
}
