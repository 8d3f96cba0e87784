//! The text report of `clreduce bench`: the header (command, repetitions, cache rule, native
//! peer), per device its streaming reference, the table of every point, the summary per case
//! and size and the strategies not run; then the peers and the ladder. Also the table printer
//! and the command line as run.

use super::cache::CacheMode;
use super::results::{peer_case, same_device, DevInfo, LadderPoint, PeerPoint, Point, Skip};
use super::units::{fmt_bytes, fmt_n};

/// What the header says about the run.
pub struct Header<'a> {
    pub command: &'a str,
    /// `--reps` as given.
    pub reps: Option<usize>,
    pub quick: bool,
    pub warmup: usize,
    pub cache_mode: CacheMode,
    /// The mask's names (empty: no mask).
    pub mask: Vec<&'static str>,
    /// Whether the native peer ran.
    pub native_on: bool,
    pub ladder: bool,
}

/// The whole text report.
pub fn print(
    h: &Header,
    devs: &[DevInfo],
    points: &[Point],
    skipped: &[Skip],
    peers: &[PeerPoint],
    ladder: &[LadderPoint],
) {
    print_header(h);
    for d in devs {
        print_device(h, d);
        if !h.ladder {
            print_points(d, points);
            print_summary(d, points);
            print_exact_ratios(d, points);
            print_segmented(d, points);
        }
        print_skipped(&d.label, skipped);
    }
    if !peers.is_empty() {
        print_peers(devs, points, peers);
    }
    if h.ladder {
        print_ladder(devs, points, ladder);
    }
    if !points.iter().all(|p| p.check == "ok") {
        outln!("\nsome results did not match the host reference (see the check column)");
    }
}

/// The run's header: command, repetitions, cache rule, mask and the native peer.
fn print_header(h: &Header) {
    outln!();
    outln!("clreduce bench");
    outln!("command: {}", h.command);
    outln!(
        "reps: {} timed after {} warm-up (median; device time = ReduceEvent::device_time_ns on a profiling queue; wall = launch call to result read on the host, on the default queue without profiling, in separate repetitions); cache: {}",
        match h.reps {
            Some(r) => r.to_string(),
            None if h.quick => "5".to_string(),
            None => "100 for inputs up to 16 MiB, 20 above".to_string(),
        },
        h.warmup,
        match h.cache_mode {
            CacheMode::Auto => "auto (warm up to LLC/4, cold above)",
            CacheMode::Cold => "cold (small inputs after an LLC flush)",
        }
    );
    if !h.mask.is_empty() {
        outln!("mask: {}", h.mask.join(","));
    }
    if h.native_on {
        outln!(
            "native peer: Rust, rayon on {} threads, 8 independent accumulators per chunk in the element type (histograms: per-thread private histograms, merged; argmin: 8-accumulator minimum per 4096-element block, first index searched only in a block that improves); wall time, timed right after each repetition of the auto plan (interleaved, same machine state); `x native` = clreduce wall GB/s / native wall GB/s",
            rayon::current_num_threads()
        );
    }
}

/// A device's heading: driver, kind, cache and its streaming-read reference.
fn print_device(h: &Header, d: &DevInfo) {
    outln!();
    outln!("== device {}: {}", d.index, d.label);
    outln!(
        "   driver {}; {}; {} compute units; max alloc {}; LLC {} ({})",
        d.driver,
        d.kind,
        d.compute_units,
        fmt_bytes(d.max_alloc),
        fmt_bytes(d.llc_bytes),
        d.llc_source
    );
    outln!("   command: {}", h.command);
    match &d.stream {
        Some(s) => outln!(
            "   streaming-read reference: {} over {} x u32 ({}, {}): {:.2} GB/s, plan {} (this is clreduce itself, not an independent roofline)",
            s.what,
            fmt_n(s.n),
            fmt_bytes(s.n * 4),
            s.cache,
            s.gbps,
            s.plan
        ),
        None if !h.ladder => outln!("   streaming-read reference: none"),
        None => {}
    }
}

/// Every point of a device, one row each.
fn print_points(d: &DevInfo, points: &[Point]) {
    let rows: Vec<Vec<String>> = points
        .iter()
        .filter(|p| p.device_index == d.index)
        .map(|p| {
            vec![
                p.case.clone(),
                p.strategy.clone(),
                if p.strategy == "auto" {
                    p.plan.clone()
                } else {
                    String::new()
                },
                fmt_n(p.n),
                fmt_bytes(p.bytes),
                p.cache.clone(),
                us(p.device_ns.median),
                format!("{}..{}", us(p.device_ns.min), us(p.device_ns.max)),
                us(p.wall_ns.median),
                format!("{:.2}", p.gbps),
                opt_f(p.pct_stream, 0),
                opt_f(p.native_gbps, 2),
                opt_f(p.native_ratio, 2),
                p.peer.clone().unwrap_or_else(|| "-".into()),
                opt_f(p.peer_gbps, 2),
                opt_f(p.peer_ratio, 2),
                p.check.clone(),
            ]
        })
        .collect();
    print_table(
        &[
            "case",
            "strategy",
            "auto plan",
            ">n",
            ">input",
            "cache",
            ">dev us",
            ">dev min..max",
            ">wall us",
            ">GB/s",
            ">%stream",
            ">native GB/s",
            ">x native",
            "peer",
            ">peer GB/s",
            ">x peer",
            "check",
        ],
        &rows,
    );
}

/// Prints a table; columns whose header starts with '>' are right-aligned.
fn print_table(headers: &[&str], rows: &[Vec<String>]) {
    let right: Vec<bool> = headers.iter().map(|h| h.starts_with('>')).collect();
    let names: Vec<&str> = headers.iter().map(|h| h.trim_start_matches('>')).collect();
    let mut w: Vec<usize> = names.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if right[i] {
                s.push_str(&format!("{c:>w$}", w = w[i]));
            } else {
                s.push_str(&format!("{c:<w$}", w = w[i]));
            }
        }
        outln!("{}", s.trim_end());
    };
    line(names.clone());
    line(
        w.iter()
            .map(|&x| "-".repeat(x))
            .collect::<Vec<_>>()
            .iter()
            .map(|s| s.as_str())
            .collect(),
    );
    for r in rows {
        line(r.iter().map(|s| s.as_str()).collect());
    }
}

/// An optional number with `prec` decimals, or "-".
fn opt_f(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "-".into())
}

/// Nanoseconds as microseconds with one decimal.
fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// The command line as run, shell-quoted where needed.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:^,+".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Strategies that did not plan (or failed) on a device: one line per reason and set of cases,
/// with the strategies it applies to.
fn print_skipped(device: &str, skipped: &[Skip]) {
    let mut by: Vec<(String, String, Vec<String>)> = Vec::new();
    for s in skipped.iter().filter(|s| s.device == device) {
        match by
            .iter_mut()
            .find(|(st, r, _)| *st == s.strategy && *r == s.reason)
        {
            Some((_, _, cases)) => cases.push(s.case.clone()),
            None => by.push((s.strategy.clone(), s.reason.clone(), vec![s.case.clone()])),
        }
    }
    if by.is_empty() {
        return;
    }
    // Strategies refused for the same cases with the same reason share a line.
    let mut lines: Vec<(Vec<String>, String, Vec<String>)> = Vec::new();
    for (st, reason, cases) in by {
        match lines
            .iter_mut()
            .find(|(_, r, c)| *r == reason && *c == cases)
        {
            Some((sts, _, _)) => sts.push(st),
            None => lines.push((vec![st], reason, cases)),
        }
    }
    outln!("   not run here (the planner refuses them on this device, or the launch failed):");
    for (sts, reason, cases) in lines {
        outln!("     {} [{}]: {reason}", sts.join(", "), cases.join(", "));
    }
}

/// Every peer result beside clreduce's auto plan for the same device, case and size.
fn print_peers(devs: &[DevInfo], points: &[Point], peers: &[PeerPoint]) {
    outln!();
    outln!("peers (device time: PyOpenCL from its first kernel's start to its last kernel's end, torch/cupy between CUDA events; GB/s = input bytes once / median time; x = clreduce auto GB/s / peer GB/s)");
    let mut rows = Vec::new();
    for x in peers {
        let op = x.op.clone().unwrap_or_else(|| "sum".into());
        let case = peer_case(x);
        let dev = devs.iter().find(|d| {
            same_device(&d.label, &x.device) || (d.nvidia && d.label.ends_with(x.device.trim()))
        });
        let mine = dev.and_then(|d| {
            points.iter().find(|p| {
                p.device_index == d.index && p.case == case && p.n == x.n && p.strategy == "auto"
            })
        });
        rows.push(vec![
            x.lib.clone(),
            case,
            op,
            x.device.clone(),
            fmt_n(x.n),
            format!("{:.1}", x.device_time_us),
            format!("{:.2}", x.gbps),
            opt_f(mine.map(|p| p.gbps), 2),
            opt_f(mine.map(|p| p.gbps / x.gbps.max(1e-12)), 2),
        ]);
    }
    print_table(
        &[
            "peer",
            "case",
            "op",
            "device",
            ">n",
            ">dev us",
            ">GB/s",
            ">clreduce GB/s",
            ">x",
        ],
        &rows,
    );
}

/// Per case and size: the auto plan, the best strategy, and the peers.
fn print_summary(d: &DevInfo, points: &[Point]) {
    let mut rows = Vec::new();
    let mine: Vec<&Point> = points
        .iter()
        .filter(|p| p.device_index == d.index)
        .collect();
    let mut keys: Vec<(String, u64)> = Vec::new();
    for p in &mine {
        let k = (p.case.clone(), p.n);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (case, n) in keys {
        let at: Vec<&&Point> = mine.iter().filter(|p| p.case == case && p.n == n).collect();
        let auto = at.iter().find(|p| p.strategy == "auto");
        let best = at
            .iter()
            .filter(|p| p.strategy != "auto")
            .max_by(|a, b| a.gbps.total_cmp(&b.gbps));
        let any = auto.or(best).expect("at least one point");
        rows.push(vec![
            case.clone(),
            fmt_n(n),
            auto.map(|p| p.plan.clone()).unwrap_or_else(|| "-".into()),
            opt_f(auto.map(|p| p.gbps), 2),
            opt_f(auto.and_then(|p| p.pct_stream), 0),
            best.map(|p| p.strategy.clone())
                .unwrap_or_else(|| "-".into()),
            opt_f(best.map(|p| p.gbps), 2),
            opt_f(any.native_gbps, 2),
            opt_f(auto.and_then(|p| p.native_ratio), 2),
            any.peer.clone().unwrap_or_else(|| "-".into()),
            opt_f(any.peer_gbps, 2),
            opt_f(auto.and_then(|p| p.peer_ratio), 2),
        ]);
    }
    outln!();
    outln!("   summary: GB/s = input bytes / median device time; x native on wall time, x peer on device time, both for the auto plan");
    print_table(
        &[
            "case",
            ">n",
            "auto plan",
            ">auto GB/s",
            ">%stream",
            "best forced",
            ">GB/s",
            ">native GB/s",
            ">x native",
            "peer",
            ">peer GB/s",
            ">x peer",
        ],
        &rows,
    );
}

/// Per exact case (`NAME-exact`) and size whose plain case `NAME` ran in the same run: the auto
/// plans' median device times and their ratio (design/exact.md's targets are these ratios).
fn print_exact_ratios(d: &DevInfo, points: &[Point]) {
    let auto = |case: &str, n: u64| {
        points.iter().find(|p| {
            p.device_index == d.index && p.case == case && p.n == n && p.strategy == "auto"
        })
    };
    let mut rows = Vec::new();
    for e in points
        .iter()
        .filter(|p| p.device_index == d.index && p.strategy == "auto")
    {
        let Some(plain) = e.case.strip_suffix("-exact") else {
            continue;
        };
        let Some(p) = auto(plain, e.n) else { continue };
        let ratio = e.device_ns.median as f64 / p.device_ns.median.max(1) as f64;
        rows.push(vec![
            e.case.clone(),
            fmt_n(e.n),
            us(e.device_ns.median),
            us(p.device_ns.median),
            format!("{ratio:.2}"),
        ]);
    }
    if rows.is_empty() {
        return;
    }
    println!();
    println!(
        "   exact sums against the plain case of the same run (auto plans, median device time)"
    );
    print_table(&["case", ">n", ">exact us", ">plain us", ">x plain"], &rows);
}

/// Per segmented case and size: the auto plan and the fastest forced segment plan against the
/// plain sum of the same input (median device times, same run) and the fastest peer.
fn print_segmented(d: &DevInfo, points: &[Point]) {
    let mine: Vec<&Point> = points
        .iter()
        .filter(|p| p.device_index == d.index && p.plain_ns.is_some())
        .collect();
    let mut keys: Vec<(String, u64)> = Vec::new();
    for p in &mine {
        if !keys.contains(&(p.case.clone(), p.n)) {
            keys.push((p.case.clone(), p.n));
        }
    }
    if keys.is_empty() {
        return;
    }
    let mut rows = Vec::new();
    for (case, n) in keys {
        let at: Vec<&&Point> = mine.iter().filter(|p| p.case == case && p.n == n).collect();
        let auto = at.iter().find(|p| p.strategy == "auto");
        let best = at
            .iter()
            .filter(|p| p.strategy != "auto" && p.check == "ok")
            .min_by_key(|p| p.device_ns.median);
        let any = auto.or(best).unwrap_or(&at[0]);
        let peer_us = any.peer_gbps.map(|g| p_us(any.bytes, g));
        rows.push(vec![
            case,
            fmt_n(n),
            auto.map_or("-".into(), |p| p.plan.clone()),
            auto.map_or("-".into(), |p| us(p.device_ns.median)),
            us(any.plain_ns.unwrap_or(0)),
            opt_f(auto.and_then(|p| p.x_plain), 2),
            best.map_or("-".into(), |p| p.strategy.clone()),
            best.map_or("-".into(), |p| us(p.device_ns.median)),
            opt_f(best.and_then(|p| p.x_plain), 2),
            any.peer.clone().unwrap_or_else(|| "-".into()),
            opt_f(peer_us, 1),
            opt_f(auto.and_then(|p| p.peer_ratio), 2),
        ]);
    }
    outln!();
    outln!("   per segment: median device times against the plain sum of the same input (auto plan, same run); x peer = clreduce auto GB/s / the fastest peer's");
    print_table(
        &[
            "case",
            ">n",
            "auto plan",
            ">auto us",
            ">plain us",
            ">x plain",
            "best forced",
            ">its us",
            ">x plain",
            "peer",
            ">peer us",
            ">x peer",
        ],
        &rows,
    );
}

/// The time in microseconds of `bytes` read at `gbps`.
fn p_us(bytes: u64, gbps: f64) -> f64 {
    bytes as f64 / gbps.max(1e-12) / 1e3
}

/// The ladder's steps and clreduce's auto plan, per device and size.
fn print_ladder(devs: &[DevInfo], points: &[Point], ladder: &[LadderPoint]) {
    outln!();
    outln!("reduction ladder (benches/ladder/ladder.py, PyOpenCL, f32 sum, device time of all passes) and clreduce's auto plan (device time)");
    let mut rows = Vec::new();
    let mut labels: Vec<String> = devs.iter().map(|d| d.label.clone()).collect();
    for l in ladder {
        if !labels.iter().any(|x| same_device(x, &l.device)) {
            labels.push(l.device.clone());
        }
    }
    let mut sizes: Vec<u64> = ladder
        .iter()
        .map(|l| l.n)
        .chain(points.iter().map(|p| p.n))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    for label in &labels {
        for &n in &sizes {
            for l in ladder
                .iter()
                .filter(|l| l.n == n && same_device(&l.device, label))
            {
                rows.push(vec![
                    label.clone(),
                    fmt_n(n),
                    l.step.to_string(),
                    l.kernel.clone(),
                    opt_f(l.device_time_us, 1),
                    opt_f(l.gbps, 2),
                    l.note.clone().unwrap_or_default(),
                ]);
            }
            for p in points
                .iter()
                .filter(|p| p.n == n && same_device(&p.device, label))
            {
                rows.push(vec![
                    label.clone(),
                    fmt_n(n),
                    "-".into(),
                    format!("clreduce auto ({})", p.plan),
                    us(p.device_ns.median),
                    format!("{:.2}", p.gbps),
                    format!("check {}", p.check),
                ]);
            }
        }
    }
    print_table(
        &[
            "device", ">n", ">step", "kernel", ">dev us", ">GB/s", "note",
        ],
        &rows,
    );
}
