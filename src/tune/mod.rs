//! The tuner (`clreduce tune`, issue 19): measures, on one device, which plan is fastest for
//! each launch class (op family x element type, a case of `crate::cases`) at each size, and returns the
//! [`TuneTable`] the planner follows (`plan::plan_tuned`); `cache.rs` stores it.
//!
//! Per point (case, size), through the public launch API on a profiling queue, every launch
//! with `Options::ignore_tune_cache` (`measure.rs`):
//! 1. strategies: the rules' own plan (automatic, no table) and every forced strategy that
//!    plans, each checked against the host, timed interleaved for `rounds` rounds; after
//!    `prune_after` rounds the ones slower than `prune` x the best leave;
//! 2. geometry: the fastest one's neighbours (groups per compute unit, accumulators and
//!    work-group size halved and doubled), timed interleaved with the rules' plan and the
//!    fastest, `geometry_passes` times from the best so far;
//! 3. the decision: the fastest plan (median) of the last phase, unless the median of its
//!    round-by-round speed-up over the rules' plan is below `1 + margin` (then the rules' plan:
//!    noise does not change a plan). The entry records both medians, the next-best strategy of
//!    phase 1 and how many plans were compared.
//!
//! Segmented cases (issue 26; rows and columns at their R x C, ragged ones at the largest size)
//! have one phase: the rules' segment plan against every forced one of the layout, the
//! decision as in 3, stored as a `SegmentEntry` keyed by class, layout and mean segment length,
//! which the segmented planner follows (`segments.rs`).
//!
//! Every launch is the case's own (`Case::launch`), the one `clreduce bench` reports.
//!
//! Imports the public API (`Queue`, launches), `cases`, `plan` and `cache.rs` (for the key).
//! `cache.rs`, the per-user store of the tables, sits below the API (queues read it when they
//! plan); the table model itself is `plan/tuning.rs`, the planner's input.

testkit! { mod cache; }
mod measure;
mod segments;

use crate::cases::{
    Case, Force, Outs, DEFAULT_CASES, FULL_CASES, FULL_SEGMENT_CASES, QUICK_SEGMENT_CASES,
};

use crate::caps::Mask;
use crate::plan::{HotLoop, Plan, Strategy, TuneEntry, TuneTable, TunedGeometry, Tuning};
use crate::{Device, Options, Queue, Range, Result};
use measure::{describe, fastest, paired_gain, Candidate, Point, PointData};

/// What to measure and how hard.
#[derive(Debug, Clone)]
pub struct TuneConfig {
    /// The launch classes to measure.
    pub cases: Vec<Case>,
    /// Sizes, log2; those above a quarter of the device's largest allocation are left out.
    pub sizes: Vec<u32>,
    /// Untimed launches per candidate and phase (the first compiles).
    pub warmup: usize,
    /// Timed rounds per phase.
    pub rounds: usize,
    /// After this many rounds, candidates slower than `prune` x the best leave.
    pub prune_after: usize,
    /// The pruning factor (see `prune_after`).
    pub prune: f64,
    /// The rules' plan stays unless another is faster by more than this fraction.
    pub margin: f64,
    /// Rounds of the geometry search (each from the best geometry so far).
    pub geometry_passes: usize,
    /// How the run was asked for (recorded in the table).
    pub command: String,
}

impl TuneConfig {
    /// `clreduce tune --quick`: the bench's default cases at six sizes, 7 rounds, one geometry
    /// pass (within 3 minutes per CPU device on the 2-core development machine).
    pub fn quick() -> TuneConfig {
        TuneConfig {
            cases: Case::parse_list(&format!("{DEFAULT_CASES},{QUICK_SEGMENT_CASES}"))
                .expect("built-in cases"),
            sizes: vec![10, 14, 18, 20, 22, 24],
            warmup: 2,
            rounds: 7,
            prune_after: 3,
            prune: 1.6,
            margin: 0.05,
            geometry_passes: 1,
            command: "clreduce tune --quick".into(),
        }
    }
    /// `clreduce tune`: more cases, every second power of two from 2^10 to 2^26, 11 rounds,
    /// two geometry passes.
    pub fn full() -> TuneConfig {
        TuneConfig {
            cases: Case::parse_list(&format!("{FULL_CASES},{FULL_SEGMENT_CASES}"))
                .expect("built-in cases"),
            sizes: vec![10, 12, 14, 16, 18, 20, 22, 24, 26],
            warmup: 2,
            rounds: 11,
            prune_after: 4,
            prune: 1.6,
            margin: 0.05,
            geometry_passes: 2,
            command: "clreduce tune".into(),
        }
    }
}

/// Where the tuner is, for a progress bar: `done` of `total` steps (one per timed round).
#[derive(Debug, Clone)]
pub struct Progress {
    /// Steps done.
    pub done: u64,
    /// Steps in all.
    pub total: u64,
    /// The point being measured.
    pub what: String,
}

/// What a run measured: the table, and the candidates that failed or gave a wrong result.
#[derive(Debug, Clone)]
pub struct TuneReport {
    /// The measured table.
    pub table: TuneTable,
    /// `case 2^k: plan: why` for every candidate dropped for a failure or a wrong result.
    pub dropped: Vec<String>,
    /// Sizes left out (above a quarter of the largest allocation).
    pub skipped: Vec<String>,
    /// Every point's candidates with their medians, phase by phase (`clreduce tune --verbose`).
    pub details: Vec<String>,
    /// Wall time of the run, seconds.
    pub seconds: f64,
}

/// Measures `device` (unmasked, with profiling) as `cfg` says.
pub fn tune(
    device: &Device,
    cfg: &TuneConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<TuneReport> {
    let t0 = std::time::Instant::now();
    let q = Queue::with_mask(device, Mask::default())?.with_profiling()?;
    let caps = q.caps().clone();
    let mut dropped = Vec::new();
    let mut skipped = Vec::new();
    let mut details = Vec::new();
    let mut entries = Vec::new();
    let mut segments = Vec::new();
    let largest = cfg.sizes.iter().max().copied().unwrap_or(20);
    // Ordinary cases at every size; rows and columns at their own R x C, ragged cases once, at
    // the largest size (segmented entries are looked up by mean segment length, not by n).
    let points: Vec<(&Case, u64)> = cfg
        .cases
        .iter()
        .filter(|c| match c.class() {
            Ok(_) => true,
            Err(why) => {
                skipped.push(why);
                false
            }
        })
        .flat_map(|c| match (c.layout.is_segmented(), c.layout.fixed_n()) {
            (true, Some(n)) => vec![(c, n)],
            (true, None) => vec![(c, 1u64 << largest)],
            _ => cfg.sizes.iter().map(|&l| (c, 1u64 << l)).collect(),
        })
        .collect();
    // Steps: phase 1's rounds and each geometry pass's, per point (phase 1 only for segments).
    let steps = |c: &Case| {
        (cfg.rounds
            * if c.layout.is_segmented() {
                1
            } else {
                1 + cfg.geometry_passes
            }) as u64
    };
    let total = points.iter().map(|(c, _)| steps(c)).sum();
    let mut done = 0u64;
    for (case, n) in points {
        let want = steps(case);
        let end = done + want;
        let at = if n.is_power_of_two() {
            format!("2^{}", n.trailing_zeros())
        } else {
            n.to_string()
        };
        let bytes = n * case.stored.size() as u64;
        if bytes > caps.max_alloc / 4 {
            skipped.push(format!("{} {at}: {bytes} bytes > max_alloc/4", case.name));
            done = end;
            continue;
        }
        let what = format!("{} {at}", case.name);
        let mut tick = |phase: &str| {
            done += 1;
            progress(&Progress {
                done,
                total,
                what: format!("{what} {phase}"),
            });
        };
        let mut log = Log {
            at: what.clone(),
            dropped: &mut dropped,
            details: &mut details,
        };
        if case.layout.is_segmented() {
            segments.extend(segments::tune_point(&q, case, n, cfg, &mut log, &mut tick)?);
        } else {
            entries.extend(tune_point(&q, case, n, cfg, &mut log, &mut tick)?);
        }
        // Phases the point skipped (no geometry pass to run) still count.
        done = done.max(end);
    }
    let seconds = t0.elapsed().as_secs_f64();
    Ok(TuneReport {
        table: TuneTable {
            key: cache::key_of(&caps),
            measured: format!(
                "{} UTC, {} ({} cases, sizes 2^{}..2^{}, {:.0} s)",
                utc_now(),
                cfg.command,
                cfg.cases.len(),
                cfg.sizes.iter().min().unwrap_or(&0),
                cfg.sizes.iter().max().unwrap_or(&0),
                seconds
            ),
            entries,
            segments,
        },
        dropped,
        skipped,
        details,
        seconds,
    })
}

/// The geometry the planner chose for `opts`: the plan's work-group size, accumulators and order,
/// and its groups per compute unit as planned for a size where that cap binds.
fn default_geometry(q: &Queue, case: &Case, outs: &Outs, opts: Options, p: &Plan) -> TunedGeometry {
    let cus = q.caps().compute_units.max(1) as u64;
    let groups = q
        .explain(Range::new(1 << 40), case.reductions(outs), opts)
        .map(|big| big.groups)
        .unwrap_or(p.groups);
    TunedGeometry {
        groups_per_cu: groups.div_ceil(cus).max(1),
        ..TunedGeometry::of_plan(p, q.caps().compute_units)
    }
}

/// Geometries next to `g`: groups per compute unit, accumulators and work-group size, each
/// halved and doubled within the device's limits.
fn neighbours(g: TunedGeometry, max_local: usize) -> Vec<TunedGeometry> {
    let mut out = Vec::new();
    if g.groups_per_cu > 1 {
        out.push(TunedGeometry {
            groups_per_cu: g.groups_per_cu / 2,
            ..g
        });
    }
    if g.groups_per_cu < 64 {
        out.push(TunedGeometry {
            groups_per_cu: g.groups_per_cu * 2,
            ..g
        });
    }
    if g.unroll > 1 {
        out.push(TunedGeometry {
            unroll: g.unroll / 2,
            ..g
        });
    }
    if g.unroll < 16 {
        out.push(TunedGeometry {
            unroll: g.unroll * 2,
            ..g
        });
    }
    if g.local > 1 {
        out.push(TunedGeometry {
            local: g.local / 2,
            ..g
        });
    }
    if g.local * 2 <= max_local {
        out.push(TunedGeometry {
            local: g.local * 2,
            ..g
        });
    }
    out
}

/// Candidates for `geos` with `base`'s strategy, leaving out launches already in `have`.
fn variants(
    pt: &Point,
    base: &Candidate,
    geos: Vec<TunedGeometry>,
    have: &[Candidate],
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for g in geos {
        let opts = Options {
            tuning: Some(g.tuning()),
            ..base.opts
        };
        let Ok(p) = pt.case.launch(pt.n, pt.x, pt.outs).explain(pt.q, opts) else {
            continue;
        };
        if have.iter().chain(&out).any(|c| c.same_launch(&p)) {
            continue;
        }
        out.push(Candidate::new(opts, base.strategy, g, p));
    }
    out
}

/// A fresh copy of `c` (no times) for another phase.
fn again(c: &Candidate) -> Candidate {
    Candidate::new(c.opts, c.strategy, c.geometry, c.plan.clone())
}

/// Where a point's failures and listings go.
struct Log<'a> {
    at: String,
    dropped: &'a mut Vec<String>,
    details: &'a mut Vec<String>,
}

impl Log<'_> {
    fn phase(&mut self, phase: &str, cands: &[Candidate]) {
        for c in cands {
            if let Some(why) = &c.dropped {
                self.dropped
                    .push(format!("{}: {}: {why}", self.at, c.label()));
            }
        }
        let at = &self.at;
        self.details.extend(
            describe(cands)
                .into_iter()
                .map(|l| format!("{at} {phase}: {l}")),
        );
    }
}

/// Measures one point; `None` when the rules' own plan failed (nothing to compare with).
fn tune_point(
    q: &Queue,
    case: &Case,
    n: u64,
    cfg: &TuneConfig,
    log: &mut Log,
    tick: &mut dyn FnMut(&str),
) -> Result<Option<TuneEntry>> {
    let data = PointData::new(q, case, n)?;
    let pt = data.point(q, case, n);
    // Phase 1: the rules' plan and every forced strategy that plans something else.
    let mut cands = strategy_candidates(&pt)?;
    let (prune_after, prune) = (cfg.prune_after, cfg.prune);
    pt.rounds(
        &mut cands,
        cfg.warmup,
        cfg.rounds,
        prune_after,
        prune,
        &mut || tick("strategies"),
    );
    log.phase("strategies", &cands);
    let (Some(best1), true) = (fastest(&cands), cands[0].dropped.is_none()) else {
        return Ok(None);
    };
    // Phase 2: geometry around the fastest, with the rules' plan re-timed beside it.
    let mut tried = cands.len();
    let mut phase: Vec<Candidate> = Vec::new();
    let mut centre = best1;
    for pass in 0..cfg.geometry_passes {
        let from = if pass == 0 { &cands } else { &phase };
        let mut round = vec![again(&from[0])];
        if centre != 0 {
            round.push(again(&from[centre]));
        }
        let geos = neighbours(from[centre].geometry, q.caps().max_local_1d());
        let mut more = variants(&pt, &from[centre], geos, &round);
        tried += more.len();
        round.append(&mut more);
        pt.rounds(&mut round, 1, cfg.rounds, prune_after, prune, &mut || {
            tick("geometry")
        });
        log.phase("geometry", &round);
        if round[0].dropped.is_some() {
            return Ok(None);
        }
        phase = round;
        centre = fastest(&phase).unwrap_or(0);
    }
    let last = if phase.is_empty() { &cands } else { &phase };
    Ok(Some(decide(case, n, last, &cands, tried, cfg.margin)))
}

/// The rules' own plan first, then every forced strategy that launches something else.
fn strategy_candidates(pt: &Point) -> Result<Vec<Candidate>> {
    let (q, case, n) = (pt.q, pt.case, pt.n);
    let rule_opts = rule_options(case, Force::Auto);
    let rule_plan = case.launch(n, pt.x, pt.outs).explain(q, rule_opts)?;
    let rule_geo = default_geometry(q, case, pt.outs, rule_opts, &rule_plan);
    let mut cands = vec![Candidate::new(
        rule_opts,
        Strategy::AUTO,
        rule_geo,
        rule_plan,
    )];
    // Every forced strategy, then (an exact sum) each hot form of the speculative loop under
    // the rules' steps (`CLREDUCE_TUNE=hot=N`): the loop is most of an exact launch's time,
    // and which form is fastest is the device's compiler's doing (design/exact.md).
    let forced = Strategy::all_forced()
        .into_iter()
        .map(|s| (rule_options(case, Force::Strategy(s)), s));
    let hot = HotLoop::ALL.into_iter().filter(|_| case.exact).map(|h| {
        let tuning = Tuning {
            hot: Some(h),
            ..Tuning::default()
        };
        let opts = Options {
            tuning: Some(tuning),
            ..rule_opts
        };
        (opts, Strategy::AUTO)
    });
    for (opts, s) in forced.chain(hot) {
        let Ok(p) = case.launch(n, pt.x, pt.outs).explain(q, opts) else {
            continue;
        };
        if cands.iter().any(|c| c.same_launch(&p)) {
            continue;
        }
        let g = default_geometry(q, case, pt.outs, opts, &p);
        cands.push(Candidate::new(opts, s, g, p));
    }
    Ok(cands)
}

/// The options of the tuner's launches: the case's own, without the tuning table.
fn rule_options(case: &Case, f: Force) -> Options {
    case.options(crate::Determinism::Deterministic, f)
        .ignore_tune_cache()
}

/// The tuner's first phase at one point without timing anything: each candidate's forced plan
/// and the OpenCL C program it would launch (`Case::launch`), for the test that the bench
/// launches the same programs.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub fn candidate_sources(q: &Queue, case: &Case, n: u64) -> Result<Vec<(Force, String)>> {
    let data = PointData::new(q, case, n)?;
    let pt = data.point(q, case, n);
    let cands = if case.layout.is_segmented() {
        segments::candidates(&pt)?
    } else {
        strategy_candidates(&pt)?
    };
    cands
        .into_iter()
        .map(|c| {
            let f = match (c.opts.segment, c.opts.strategy) {
                (Some(a), _) => Force::Segment(a),
                (None, s) if s == Strategy::AUTO => Force::Auto,
                (None, s) => Force::Strategy(s),
            };
            Ok((f, case.launch(n, pt.x, pt.outs).source(q, c.opts)?))
        })
        .collect()
}

/// The entry of a point: the fastest of the last phase (`last`, the rules' plan first) unless
/// its round-by-round speed-up over the rules' plan is below `1 + margin`; the next strategy
/// from phase 1 (`first`).
fn decide(
    case: &Case,
    n: u64,
    last: &[Candidate],
    first: &[Candidate],
    tried: usize,
    margin: f64,
) -> TuneEntry {
    let rule = &last[0];
    let mut win = fastest(last).unwrap_or(0);
    if paired_gain(rule, &last[win]) < 1.0 + margin {
        win = 0;
    }
    let w = &last[win];
    let runner_up = first
        .iter()
        .filter(|c| c.alive() && c.plan.summary() != w.plan.summary())
        .min_by_key(|c| c.median())
        .map(|c| (c.plan.summary(), c.median()));
    TuneEntry {
        class: case.class().expect("tuned cases have a class"),
        log2_n: n.trailing_zeros(),
        strategy: w.strategy,
        geometry: w.geometry,
        plan: w.plan.summary(),
        best_ns: w.median(),
        rule_plan: rule.plan.summary(),
        rule_geometry: rule.geometry,
        rule_ns: rule.median(),
        runner_up,
        tried: tried as u32,
    }
}

/// The current UTC time as `YYYY-MM-DD HH:MM`.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::IndexOrder;

    #[test]
    fn neighbours_stay_within_limits() {
        let g = TunedGeometry {
            local: 1,
            groups_per_cu: 1,
            unroll: 16,
            order: IndexOrder::Contiguous,
            hot: None,
        };
        let n = neighbours(g, 1);
        assert_eq!(
            n,
            vec![
                TunedGeometry {
                    groups_per_cu: 2,
                    ..g
                },
                TunedGeometry { unroll: 8, ..g }
            ]
        );
        let g = TunedGeometry {
            local: 64,
            groups_per_cu: 4,
            unroll: 8,
            order: IndexOrder::Contiguous,
            hot: None,
        };
        assert_eq!(neighbours(g, 4096).len(), 6);
    }

    #[test]
    fn utc_dates() {
        let s = utc_now();
        assert_eq!(s.len(), 16, "{s}");
        assert!(s.starts_with("20"), "{s}");
    }

    #[test]
    fn case_classes_match_the_planner_s() {
        use crate::cases::Shape as CaseShape;
        use crate::plan::{FormRequest, LaunchClass, Request, Shape, VarRequest};
        for c in Case::parse_list(FULL_CASES).unwrap() {
            let vars = match c.shape {
                CaseShape::ArgMin => vec![VarRequest::new(crate::Operator::ArgMin, c.ty)],
                CaseShape::Span(len) => vec![VarRequest {
                    span: Some(len),
                    ..VarRequest::new(crate::Op::Plus, c.ty)
                }],
                CaseShape::Scalars => c
                    .class()
                    .unwrap()
                    .ops
                    .iter()
                    .map(|o| {
                        let op = match o {
                            crate::plan::OpClass::Sum => crate::Op::Plus,
                            crate::plan::OpClass::MinMax => crate::Op::Maximum,
                            crate::plan::OpClass::Bitwise => crate::Op::BitOr,
                            other => panic!("{other:?}"),
                        };
                        VarRequest::new(op, c.ty)
                    })
                    .collect(),
            };
            let req = Request {
                form: FormRequest::Range { n: 1 << 20 },
                shape: Shape::default(),
                vars,
                strategy: Strategy::AUTO,
                determinism: crate::Determinism::Deterministic,
                tuning: None,
                pure_body: true,
                narrow_reads: false,
            };
            assert_eq!(LaunchClass::of(&req), c.class().ok(), "{}", c.name);
        }
    }
}
