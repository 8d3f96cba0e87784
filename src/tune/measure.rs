//! Interleaved timing of candidate plans at one point (case, size): every candidate is warmed up
//! (the first launch compiles), its result checked against the host, then timed once per round,
//! round after round, in a rotating order, so that a slow period of a shared machine falls on
//! all of them. Device time from profiling events (`ReduceEvent::device_time_ns`), medians.

use crate::cases::{Case, Expected, Outs};
use crate::plan::{Plan, Strategy, TunedGeometry};
use crate::{DynBuffer, Options, Queue, Result};

/// One plan under test.
pub(super) struct Candidate {
    /// The options that launch it (always `ignore_tune_cache`).
    pub opts: Options,
    /// The strategy a table entry records for it: the forced one, or automatic for the rules'
    /// own plan and its geometry variants.
    pub strategy: Strategy,
    /// Its geometry, as asked for (variants) or as the planner chose it (defaults).
    pub geometry: TunedGeometry,
    pub plan: Plan,
    /// Device times of this phase, nanoseconds.
    pub times: Vec<u64>,
    /// Why it left the measurement (a failed launch or a wrong result), if it did.
    pub dropped: Option<String>,
    /// Left the measurement for being much slower than the best.
    pub pruned: bool,
}

impl Candidate {
    pub fn new(
        opts: Options,
        strategy: Strategy,
        geometry: TunedGeometry,
        plan: Plan,
    ) -> Candidate {
        Candidate {
            opts,
            strategy,
            geometry,
            plan,
            times: Vec::new(),
            dropped: None,
            pruned: false,
        }
    }
    pub fn alive(&self) -> bool {
        self.dropped.is_none() && !self.pruned
    }
    /// The median of the times so far (`u64::MAX` with none).
    pub fn median(&self) -> u64 {
        if self.times.is_empty() {
            return u64::MAX;
        }
        let mut t = self.times.clone();
        t.sort_unstable();
        let m = t.len() / 2;
        if t.len() % 2 == 1 {
            t[m]
        } else {
            (t[m - 1] + t[m]) / 2
        }
    }
    /// `plan summary @ geometry` (`segment PLAN @ geometry` for a segmented launch), for
    /// messages and `clreduce tune --verbose`.
    pub fn label(&self) -> String {
        format!("{} @ {}", self.plan.summary(), self.geometry)
    }
    /// Whether two candidates launch the same kernel over the same geometry.
    pub fn same_launch(&self, p: &Plan) -> bool {
        let a = &self.plan;
        let exact = |p: &Plan| p.vars.iter().map(|v| v.exact).collect::<Vec<_>>();
        a.summary() == p.summary()
            && (a.local, a.groups, a.unroll, a.order) == (p.local, p.groups, p.unroll, p.order)
            && exact(a) == exact(p)
    }
}

/// What a [`Point`] borrows: the case's seeded input on the device (in the type the case
/// stores), its output buffers and the host's expected results. One constructor for the
/// tuner's ordinary and segmented points and for `candidate_sources`.
pub(super) struct PointData {
    x: DynBuffer,
    outs: Outs,
    want: Vec<Expected>,
}

impl PointData {
    pub fn new(q: &Queue, case: &Case, n: u64) -> Result<PointData> {
        let data = case.input(n as usize, 0x7e57);
        let want = case.expect(&data);
        let x = DynBuffer::upload_as(q, &data, case.stored)?;
        drop(data);
        let outs = case.outs(q, n)?;
        Ok(PointData { x, outs, want })
    }
    pub fn point<'a>(&'a self, q: &'a Queue, case: &'a Case, n: u64) -> Point<'a> {
        Point {
            q,
            case,
            n,
            x: &self.x,
            outs: &self.outs,
            want: &self.want,
        }
    }
}

/// The point's input, results and expected values.
pub(super) struct Point<'a> {
    pub q: &'a Queue,
    pub case: &'a Case,
    pub n: u64,
    pub x: &'a DynBuffer,
    pub outs: &'a Outs,
    pub want: &'a [Expected],
}

impl Point<'_> {
    /// One launch of `c`, its device time.
    fn launch(&self, opts: Options) -> Result<u64> {
        self.case.reset(self.outs)?;
        let ev = self
            .case
            .launch(self.n, self.x, self.outs)
            .run(self.q, opts)?;
        ev.device_time_ns()
    }

    /// Warms `c` up and checks its result; drops it on an error or a wrong result.
    fn warm(&self, c: &mut Candidate, warmup: usize) {
        let r = (|| -> Result<std::result::Result<(), String>> {
            for _ in 0..warmup.max(1) {
                self.launch(c.opts)?;
            }
            let got = self.case.read(self.outs)?;
            Ok(match self.case.check(&c.plan, &got, self.want) {
                ok if ok == "ok" => Ok(()),
                wrong => Err(wrong),
            })
        })();
        match r {
            Ok(Ok(())) => {}
            Ok(Err(wrong)) => c.dropped = Some(format!("wrong result: {wrong}")),
            Err(e) => {
                c.dropped = Some(format!(
                    "failed: {}",
                    e.to_string().lines().next().unwrap_or("")
                ))
            }
        }
    }

    /// Warms every live candidate up, then times `rounds` rounds. After `prune_after` rounds,
    /// candidates slower than `prune` x the best median leave, all but the first (the rules'
    /// plan, which every decision compares with). `tick` runs after every round.
    pub fn rounds(
        &self,
        cands: &mut [Candidate],
        warmup: usize,
        rounds: usize,
        prune_after: usize,
        prune: f64,
        tick: &mut dyn FnMut(),
    ) {
        for c in cands.iter_mut().filter(|c| c.alive()) {
            self.warm(c, warmup);
        }
        for round in 0..rounds {
            let live: Vec<usize> = (0..cands.len()).filter(|&k| cands[k].alive()).collect();
            if live.is_empty() {
                return;
            }
            for j in 0..live.len() {
                let c = &mut cands[live[(j + round) % live.len()]];
                match self.launch(c.opts) {
                    Ok(t) => c.times.push(t),
                    Err(e) => {
                        c.dropped = Some(format!(
                            "failed: {}",
                            e.to_string().lines().next().unwrap_or("")
                        ))
                    }
                }
            }
            if round + 1 == prune_after {
                let best = cands
                    .iter()
                    .filter(|c| c.alive())
                    .map(Candidate::median)
                    .min()
                    .unwrap_or(u64::MAX);
                for c in cands.iter_mut().skip(1).filter(|c| c.alive()) {
                    c.pruned = c.median() as f64 > prune * best as f64;
                }
            }
            tick();
        }
    }
}

/// The median over rounds of `base`'s time / `c`'s time in the same round (candidates of one
/// phase are timed round by round, so each pair is close in time): above 1, `c` is faster.
/// 1 when they share no round.
pub(super) fn paired_gain(base: &Candidate, c: &Candidate) -> f64 {
    let mut r: Vec<f64> = base
        .times
        .iter()
        .zip(&c.times)
        .map(|(&b, &t)| b as f64 / t.max(1) as f64)
        .collect();
    if r.is_empty() {
        return 1.0;
    }
    r.sort_by(f64::total_cmp);
    let m = r.len() / 2;
    if r.len() % 2 == 1 {
        r[m]
    } else {
        (r[m - 1] + r[m]) / 2.0
    }
}

/// One line per candidate: label, median, samples, and why it left.
pub(super) fn describe(cands: &[Candidate]) -> Vec<String> {
    cands
        .iter()
        .map(|c| {
            format!(
                "{:<58} {:>10.1} us  ({} rounds{})",
                c.label(),
                c.median() as f64 / 1e3,
                c.times.len(),
                match (&c.dropped, c.pruned) {
                    (Some(why), _) => format!(", dropped: {why}"),
                    (None, true) => ", pruned".to_string(),
                    _ => String::new(),
                }
            )
        })
        .collect()
}

/// The index of the live candidate with the smallest median.
pub(super) fn fastest(cands: &[Candidate]) -> Option<usize> {
    (0..cands.len())
        .filter(|&k| cands[k].alive() && !cands[k].times.is_empty())
        .min_by_key(|&k| cands[k].median())
}
