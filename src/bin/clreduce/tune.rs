//! `clreduce tune`: measures each device's fastest plans (`clreduce::tune`) under a progress
//! bar, stores them in the per-user tuning cache (`clreduce::tune_cache`) and prints the table;
//! `--show` prints what the cache holds for each device instead.

use clreduce::cases::Case;
use clreduce::tune::{self, TuneConfig};
use clreduce::{devices, tune_cache, Device, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Options of `clreduce tune`.
#[derive(clap::Args)]
pub struct TuneArgs {
    /// Device index or name substring, or `all` (default: every device that is not a
    /// simulator).
    #[arg(long)]
    device: Option<String>,
    /// The quick subset: the bench's default cases at 2^10, 2^14, 2^18, 2^20, 2^22 and 2^24,
    /// 7 rounds, one geometry pass (a few minutes per CPU device).
    #[arg(long)]
    quick: bool,
    /// Print each device's tuning status and cached table instead of measuring.
    #[arg(long)]
    show: bool,
    /// Cases instead of the set's: a comma list as `clreduce bench` names them (f32-sum,
    /// i64-max, u32-or, f32-sum-min-max, u32-hist256, f32-argmin, and segmented
    /// f32-rows-RxC, f32-cols-RxC, f32-ragged-MEAN: rows and columns at their R x C, ragged
    /// cases at the largest size).
    #[arg(long)]
    cases: Option<String>,
    /// Sizes instead of the set's: a comma list of 2^K (or K).
    #[arg(long)]
    sizes: Option<String>,
    /// Timed rounds per phase instead of the set's.
    #[arg(long)]
    rounds: Option<usize>,
    /// Measure and print, but leave the cache as it is.
    #[arg(long)]
    no_save: bool,
    /// Also print every candidate's median at every point.
    #[arg(long)]
    verbose: bool,
}

fn bad(msg: String) -> clreduce::Error {
    clreduce::Error::BadArgument {
        name: "clreduce tune".into(),
        problem: msg,
    }
}

/// The configuration the flags ask for.
fn config(a: &TuneArgs) -> Result<TuneConfig> {
    let mut cfg = if a.quick {
        TuneConfig::quick()
    } else {
        TuneConfig::full()
    };
    let mut cmd = vec![cfg.command.clone()];
    if let Some(c) = &a.cases {
        cfg.cases = Case::parse_list(c).map_err(bad)?;
        for case in &cfg.cases {
            case.class().map_err(bad)?;
        }
        cmd.push(format!("--cases {c}"));
    }
    if let Some(s) = &a.sizes {
        cfg.sizes = s
            .split(',')
            .filter(|x| !x.trim().is_empty())
            .map(|x| {
                let t = x.trim();
                t.strip_prefix("2^")
                    .unwrap_or(t)
                    .parse::<u32>()
                    .ok()
                    .filter(|&k| k <= 40)
                    .ok_or_else(|| bad(format!("--sizes: {t:?} is not 2^K or K (K <= 40)")))
            })
            .collect::<Result<Vec<u32>>>()?;
        cmd.push(format!("--sizes {s}"));
    }
    if let Some(r) = a.rounds {
        cfg.rounds = r.max(1);
        cfg.prune_after = cfg.prune_after.min(cfg.rounds);
        cmd.push(format!("--rounds {r}"));
    }
    if cfg.cases.is_empty() || cfg.sizes.is_empty() {
        return Err(bad("no cases or no sizes to measure".into()));
    }
    cfg.command = cmd.join(" ");
    Ok(cfg)
}

fn pick(spec: Option<&str>, show: bool) -> Result<Vec<Device>> {
    match spec {
        Some("all") => Ok(devices()?.to_vec()),
        Some(s) => Ok(vec![clreduce::device::select(Some(s))?]),
        None if show => Ok(devices()?.to_vec()),
        None => Ok(devices()?
            .iter()
            .filter(|d| !d.is_simulator())
            .cloned()
            .collect()),
    }
}

/// `clreduce tune`.
pub fn run(a: &TuneArgs) -> Result<bool> {
    if a.show {
        return show(a);
    }
    let cfg = config(a)?;
    let devs = pick(a.device.as_deref(), false)?;
    if devs.is_empty() {
        return Err(bad(
            "no device to tune (simulators are left out unless named)".into(),
        ));
    }
    for d in devs {
        let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        let name = d.name().to_string();
        let mut last = String::new();
        let r = tune::tune(&d, &cfg, &mut |p| {
            pb.set_length(p.total);
            pb.set_position(p.done);
            pb.set_message(format!("{name}: {}", p.what));
            if pb.is_hidden() && p.what != last {
                errln!("tune: {name}: {}", p.what);
                last = p.what.clone();
            }
        });
        pb.finish_and_clear();
        let r = r?;
        let changed = r
            .table
            .entries
            .iter()
            .filter(|e| e.changes_rule_plan())
            .count();
        let seg_changed = r
            .table
            .segments
            .iter()
            .filter(|e| e.algo != e.rule_algo)
            .count();
        outln!(
            "tuned {} in {:.0} s: {} points, {changed} of them change the rules' plan; {} segmented points, {seg_changed} of them change the rules' segment plan",
            d.label(),
            r.seconds,
            r.table.entries.len(),
            r.table.segments.len()
        );
        out!("{}", r.table);
        for s in &r.skipped {
            outln!("left out: {s}");
        }
        for x in &r.dropped {
            outln!("candidate dropped: {x}");
        }
        if a.verbose {
            for l in &r.details {
                outln!("  {l}");
            }
        }
        if a.no_save {
            outln!("not saved (--no-save)\n");
        } else {
            let p = tune_cache::save(&r.table)?;
            outln!("saved to {}\n", p.display());
        }
    }
    Ok(true)
}

/// `clreduce tune --show`.
fn show(a: &TuneArgs) -> Result<bool> {
    match tune_cache::path() {
        Some(p) => outln!("tuning cache: {}", p.display()),
        None => outln!("tuning cache: none (set CLREDUCE_TUNE_CACHE, XDG_CACHE_HOME or HOME)"),
    }
    for d in pick(a.device.as_deref(), true)? {
        let caps = d.caps()?;
        let st = tune_cache::status(&caps);
        outln!("\n{}: {}", d.label(), st.describe());
        if let tune_cache::Status::Tuned(t) = st {
            out!("{t}");
        }
    }
    Ok(true)
}
