//! Exact sums per segment (`Determinism::Exact` on segmented and axis reductions, decision 55)
//! on every device: every segment's result bit for bit against the host's correctly rounded
//! sum (`clreduce::exact`) of that segment and its initial value, on the adversarial inputs of
//! tests/exact.rs (cancellation, wide exponents, subnormals, inf/NaN, alternating signs, ties,
//! overflow, signed zeros), per segment; rows, columns, CSR offsets with empty segments (left as
//! they were, or +0.0 under initialize_to_identity) and one segment of all n; f32, f64 and f16
//! data; every segment plan that runs it, and the same bits across plans and devices (checked
//! directly, not only through the host). Also: an exact sum beside min, max, argmax and an
//! integer count in one launch, the fallback without fp64 (three-float expansions), and what is
//! refused. A seeded sample by default (`CLREDUCE_FULL_MATRIX=1`: every pattern under every
//! plan, layout and type, with or without initial values alternating).

use crate::common;

use clreduce::check::adversarial::{f32s, f64s, Pattern};
use clreduce::exact::{sum_f32, sum_f64};
use clreduce::plan::{Strategy, Tuning};
use clreduce::{
    reduction, reduction_argmax, Axis, Buffer, Error, Half, Kernel, Mask, Op, Options, Queue,
    Range, Reduction, SegmentAlgo, Segments,
};
use common::rng::Rng;
use common::{announce_sample, full_matrix, queues, sample_hash, short, sim_lock, Tally};
use std::collections::HashMap;
use std::sync::Mutex;

/// How the segments are given.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// `Segments::uniform(c)` over `Range::new(r * c)`.
    Rows { r: u64, c: u64 },
    /// `Axis::First` of `Range::new_2d(r, c)`: one result per column.
    Cols { r: u64, c: u64 },
    /// CSR offsets over `n` elements (empty segments, indices outside every segment).
    Csr { n: u64, off: Vec<u64> },
}

/// One segmentation under test.
pub(crate) struct Layout {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
}

impl Layout {
    pub(crate) fn n(&self) -> u64 {
        match &self.kind {
            Kind::Rows { r, c } | Kind::Cols { r, c } => r * c,
            Kind::Csr { n, .. } => *n,
        }
    }
    pub(crate) fn results(&self) -> usize {
        match &self.kind {
            Kind::Rows { r, .. } => *r as usize,
            Kind::Cols { c, .. } => *c as usize,
            Kind::Csr { off, .. } => off.len() - 1,
        }
    }
    /// The indices of result `k`.
    pub(crate) fn members(&self, k: usize) -> Vec<usize> {
        match &self.kind {
            Kind::Rows { c, .. } => (k * *c as usize..(k + 1) * *c as usize).collect(),
            Kind::Cols { r, c } => (0..*r as usize).map(|row| row * *c as usize + k).collect(),
            Kind::Csr { off, .. } => (off[k] as usize..off[k + 1] as usize).collect(),
        }
    }
    /// The plans this layout can run (None: the planner's choice).
    pub(crate) fn plans(&self) -> Vec<Option<SegmentAlgo>> {
        match self.kind {
            Kind::Cols { .. } => vec![
                None,
                Some(SegmentAlgo::Columns),
                Some(SegmentAlgo::Stripes),
                Some(SegmentAlgo::Blocks),
            ],
            _ => vec![
                None,
                Some(SegmentAlgo::Item),
                Some(SegmentAlgo::Group),
                Some(SegmentAlgo::Tiles),
                Some(SegmentAlgo::Chunks),
                Some(SegmentAlgo::Lanes),
                Some(SegmentAlgo::Aligned),
            ],
        }
    }
    fn range(&self) -> Range {
        match &self.kind {
            Kind::Cols { r, c } => Range::new_2d(*r, *c),
            _ => Range::new(self.n()),
        }
    }
    fn segment(&self, r: Reduction, offsets: &Buffer<u64>) -> Reduction {
        match &self.kind {
            Kind::Rows { c, .. } => r.segments(Segments::uniform(*c)),
            Kind::Cols { .. } => r.axis(Axis::First),
            Kind::Csr { .. } => r.segments(Segments::offsets(offsets)),
        }
    }
    fn offsets(&self) -> Vec<u64> {
        match &self.kind {
            Kind::Csr { off, .. } => off.clone(),
            _ => vec![0, 0],
        }
    }
}

/// Heavy-tailed lengths of mean about `mean`, a third of them empty, as offsets from `lo`.
fn ragged(rng: &mut Rng, segments: usize, mean: u64, lo: u64) -> Vec<u64> {
    let mut off = vec![lo];
    for _ in 0..segments {
        let len = match rng.below(3) {
            0 => 0,
            1 => rng.below(mean),
            _ => rng.below(3 * mean) + mean / 2,
        };
        off.push(off.last().unwrap() + len);
    }
    off
}

fn layouts(sim: bool, seed: u64) -> Vec<Layout> {
    let s = if sim { 1 } else { 8 };
    let mut rng = Rng(seed);
    // CSR: starts at 5, empty segments at both ends, 9 indices past the last one.
    let mut off = vec![5, 5];
    off.extend(ragged(&mut rng, 24 * s as usize, 40, 5).into_iter().skip(1));
    let last = *off.last().unwrap();
    off.push(last);
    vec![
        Layout {
            name: "rows",
            kind: Kind::Rows { r: 13 * s, c: 97 },
        },
        Layout {
            name: "short rows",
            kind: Kind::Rows { r: 70 * s, c: 5 },
        },
        Layout {
            name: "columns",
            kind: Kind::Cols {
                r: 45 * s + 2,
                c: 7,
            },
        },
        Layout {
            name: "csr",
            kind: Kind::Csr { n: last + 9, off },
        },
        Layout {
            name: "one segment",
            kind: Kind::Rows {
                r: 1,
                c: 900 * s + 1,
            },
        },
    ]
}

/// The data's type and values (f16 data reduces into an f32 variable).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Ty {
    F32,
    F64,
    F16,
}

const TYPES: [Ty; 3] = [Ty::F32, Ty::F64, Ty::F16];

/// Data of one pattern per segment (each segment its own adversarial sequence) over `n`
/// indices, as f64 values exactly representable in the data's type, and the initial values.
fn data(l: &Layout, ty: Ty, p: Pattern, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut xs = vec![0.0f64; l.n() as usize];
    // Indices of no segment still hold data (the kernels must not read them into anything).
    let filler = f32s(Pattern::Random, xs.len(), seed ^ 0xF1);
    for (x, f) in xs.iter_mut().zip(&filler) {
        *x = *f as f64 * 1e30;
    }
    for k in 0..l.results() {
        let m = l.members(k);
        let vals: Vec<f64> = match ty {
            Ty::F64 => f64s(p, m.len(), seed + k as u64),
            Ty::F32 => f32s(p, m.len(), seed + k as u64)
                .into_iter()
                .map(f64::from)
                .collect(),
            Ty::F16 => f32s(p, m.len(), seed + k as u64)
                .into_iter()
                .map(|v| Half::from_f32(v).to_f32() as f64)
                .collect(),
        };
        for (i, v) in m.into_iter().zip(vals) {
            xs[i] = v;
        }
    }
    let mut rng = Rng(seed ^ 0x1417);
    let inits = (0..l.results())
        .map(|_| (rng.below(2001) as f64 - 1000.0) / 8.0)
        .collect();
    (xs, inits)
}

/// The host's correctly rounded sum of segment `k` and its initial value, as result bits; an
/// empty segment is left as it was (its initial value) or, under initialize_to_identity, +0.0.
fn host_bits(l: &Layout, ty: Ty, xs: &[f64], init: Option<f64>, k: usize) -> u64 {
    let m = l.members(k);
    if m.is_empty() {
        return match (ty, init) {
            (Ty::F64, v) => v.unwrap_or(0.0).to_bits(),
            (_, v) => (v.unwrap_or(0.0) as f32).to_bits() as u64,
        };
    }
    let vals = m.iter().map(|&i| xs[i]).chain(init);
    match ty {
        Ty::F64 => sum_f64(&vals.collect::<Vec<_>>()).to_bits(),
        _ => sum_f32(&vals.map(|v| v as f32).collect::<Vec<_>>()).to_bits() as u64,
    }
}

/// The input buffer and the (f32 or f64) result buffer with the initial values.
enum Bufs {
    F32(Buffer<f32>, Buffer<f32>),
    F64(Buffer<f64>, Buffer<f64>),
    F16(Buffer<Half>, Buffer<f32>),
}

impl Bufs {
    fn new(q: &Queue, ty: Ty, xs: &[f64], inits: &[f64]) -> clreduce::Result<Bufs> {
        let i32s: Vec<f32> = inits.iter().map(|&v| v as f32).collect();
        Ok(match ty {
            Ty::F32 => Bufs::F32(
                q.buffer_from(&xs.iter().map(|&v| v as f32).collect::<Vec<_>>())?,
                q.buffer_from(&i32s)?,
            ),
            Ty::F64 => Bufs::F64(q.buffer_from(xs)?, q.buffer_from(inits)?),
            Ty::F16 => Bufs::F16(
                q.buffer_from(
                    &xs.iter()
                        .map(|&v| Half::from_f32(v as f32))
                        .collect::<Vec<_>>(),
                )?,
                q.buffer_from(&i32s)?,
            ),
        })
    }
    fn reduction(&self) -> Reduction {
        match self {
            Bufs::F32(_, r) | Bufs::F16(_, r) => reduction(r, Op::Plus),
            Bufs::F64(_, r) => reduction(r, Op::Plus),
        }
    }
    fn kernel(&self, body: &str) -> Kernel {
        match self {
            Bufs::F32(x, _) => Kernel::new(body).arg("x", x),
            Bufs::F64(x, _) => Kernel::new(body).arg("x", x),
            Bufs::F16(x, _) => Kernel::new(body).arg("x", x),
        }
    }
    fn bits(&self) -> Vec<u64> {
        match self {
            Bufs::F32(_, r) | Bufs::F16(_, r) => r
                .to_vec()
                .unwrap()
                .iter()
                .map(|v| v.to_bits() as u64)
                .collect(),
            Bufs::F64(_, r) => r.to_vec().unwrap().iter().map(|v| v.to_bits()).collect(),
        }
    }
}

/// A refusal the plan explains (missing capability, local memory): a skip.
fn skip_reason(e: &Error) -> Option<String> {
    match e {
        Error::Unsupported { .. } | Error::LocalMemory { .. } | Error::WorkGroupTooLarge { .. } => {
            Some(e.to_string())
        }
        _ => None,
    }
}

/// The bits each case gave first (plan and device), to hold every other plan and device to.
/// Per case: who gave its bits first, and the bits.
type Seen = HashMap<String, (String, Vec<u64>)>;
static SEEN: Mutex<Option<Seen>> = Mutex::new(None);

fn same_everywhere(key: &str, who: &str, bits: &[u64]) -> Result<(), String> {
    let mut g = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let map = g.get_or_insert_with(HashMap::new);
    match map.get(key) {
        Some((other, b)) if b != bits => {
            let k = b.iter().zip(bits).position(|(x, y)| x != y).unwrap_or(0);
            Err(format!(
                "{key}: {who} differs from {other} at result {k}: {:#x} against {:#x}",
                bits.get(k).copied().unwrap_or(0),
                b.get(k).copied().unwrap_or(0)
            ))
        }
        Some(_) => Ok(()),
        None => {
            map.insert(key.to_string(), (who.to_string(), bits.to_vec()));
            Ok(())
        }
    }
}

/// One exact launch of pattern `p` per segment and its check; `Err(Ok(reason))` is a skip.
#[allow(clippy::too_many_arguments)]
fn run_case(
    q: &Queue,
    l: &Layout,
    ty: Ty,
    p: Pattern,
    algo: Option<SegmentAlgo>,
    init: bool,
    seed: u64,
    who: &str,
) -> Result<(), Result<String, String>> {
    let (xs, inits) = data(l, ty, p, seed);
    // Devices may get layouts of different sizes (smaller on the simulator): the key holds n.
    let key = format!(
        "{} n={} {ty:?} {} seed {seed} init {init}",
        l.name,
        l.n(),
        p.name()
    );
    run_on(q, l, ty, (&xs, &inits), (algo, init), &key, who)
}

/// One exact launch over `xs` (initial values `inits` unless `init` is false: then
/// initialize_to_identity) under plan `algo`: every result against the host, and the bits
/// against those `key` gave first elsewhere.
pub(crate) fn run_on(
    q: &Queue,
    l: &Layout,
    ty: Ty,
    data: (&[f64], &[f64]),
    (algo, init): (Option<SegmentAlgo>, bool),
    key: &str,
    who: &str,
) -> Result<(), Result<String, String>> {
    run_with(q, l, ty, data, (algo, init, None), key, who).map(|_| ())
}

/// [`run_on`] with the speculative loop per segment asked for (`spec`: `Tuning::spec`,
/// decision 90) or left to the rule; returns whether the exact sum ran it.
pub(crate) fn run_with(
    q: &Queue,
    l: &Layout,
    ty: Ty,
    (xs, inits): (&[f64], &[f64]),
    (algo, init, spec): (Option<SegmentAlgo>, bool, Option<bool>),
    key: &str,
    who: &str,
) -> Result<bool, Result<String, String>> {
    let b = Bufs::new(q, ty, xs, inits).map_err(|e| Err(e.to_string()))?;
    let offsets = q
        .buffer_from(&l.offsets())
        .map_err(|e| Err(e.to_string()))?;
    let mut red = l.segment(b.reduction(), &offsets);
    if !init {
        red = red.initialize_to_identity();
    }
    let mut opts = Options::default().exact();
    opts.segment = algo;
    if spec.is_some() {
        opts.tuning = Some(Tuning {
            spec,
            ..Tuning::default()
        });
    }
    let ev = q
        .parallel_for_reduce_with(l.range(), red, b.kernel("sum += x[i];"), opts)
        .map_err(|e| skip_reason(&e).ok_or(format!("launch: {e}")))?;
    ev.wait().map_err(|e| Err(e.to_string()))?;
    let plan = ev.plan().expect("a plan").clone();
    let sp = plan.segment.as_ref().ok_or(Err("no segment plan".into()))?;
    if algo.is_some_and(|a| a != sp.algo) {
        return Err(Err(format!("forced {algo:?}, ran {}", sp.algo)));
    }
    let got = b.bits();
    for k in 0..l.results() {
        let want = host_bits(l, ty, xs, init.then_some(inits[k]), k);
        if got[k] != want {
            return Err(Err(format!(
                "result {k} ({} elements) under {}: {:#x}, the correctly rounded sum is {want:#x}",
                l.members(k).len(),
                sp.algo,
                got[k]
            )));
        }
    }
    same_everywhere(key, &format!("{who} {}", sp.algo), &got[..l.results()]).map_err(Err)?;
    Ok(plan.vars[0].exact.is_some_and(|e| e.speculative))
}

/// Every adversarial pattern per segment, bit for bit, under every plan of every layout, on
/// every device; a sample of (pattern, type, initial-value mode) per (layout, plan) without
/// CLREDUCE_FULL_MATRIX=1 that still takes every pattern on every device.
#[test]
fn adversarial_per_segment_every_plan() {
    announce_sample("segment_exact::adversarial_per_segment_every_plan");
    let mut t = Tally::new("segment_exact::adversarial_per_segment_every_plan");
    let full = full_matrix();
    let seed = 0x5E6E + sample_hash("segment_exact::seed") % 1000;
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let sim = d.is_simulator();
        let started = std::time::Instant::now();
        let mut turn = sample_hash(&format!("segment_exact::{dev}")) as usize;
        for l in layouts(sim, seed) {
            // The sample: the planner's choice and one forced plan per layout, rotating (each
            // plan is a program to build, seconds each on PoCL).
            let all = l.plans();
            let plans: Vec<Option<SegmentAlgo>> = if full {
                all
            } else {
                vec![None, all[1 + turn % (all.len() - 1)]]
            };
            for algo in plans {
                let per = match (full, sim) {
                    (true, _) => Pattern::ALL.len(),
                    (false, true) => 1,
                    (false, false) => 3,
                };
                let tys: Vec<Ty> = if full {
                    TYPES.to_vec()
                } else {
                    vec![TYPES[turn % 3]]
                };
                for (ti, ty) in tys.into_iter().enumerate() {
                    // Each (type, initial-value mode) is a program of its own: one mode per
                    // type, alternating, keeps the full matrix to 81 programs per device.
                    for init in [false, true] {
                        if init != (turn + ti).is_multiple_of(2) {
                            continue;
                        }
                        for j in 0..per {
                            let p = Pattern::ALL[(turn + j) % Pattern::ALL.len()];
                            let case = format!(
                                "{} {ty:?} {} {} init {init}",
                                l.name,
                                algo.map_or("auto".into(), |a| a.to_string()),
                                p.name()
                            );
                            match run_case(q, &l, ty, p, algo, init, seed, &dev) {
                                Ok(()) => t.pass(&dev),
                                Err(Ok(why)) => t.skip(&dev, &case, &why),
                                Err(Err(m)) => t.fail(&dev, &case, &m),
                            }
                        }
                    }
                }
                turn += per;
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}

/// The hand-made segments of `expansion_decides_ties_and_single_deposits`: the layout, the data
/// and the initial values.
fn crafted(ty: Ty, sim: bool, seed: u64) -> (Layout, Vec<f64>, Vec<f64>) {
    let p = |e: i32| 2f64.powi(e);
    let (u, tiny, max) = match ty {
        Ty::F64 => (p(-53), p(-1074), f64::MAX),
        _ => (p(-24), p(-149), f32::MAX as f64),
    };
    let mut cases = vec![
        vec![1.0, u],                              // a tie, to even: down
        vec![1.0 + 2.0 * u, u],                    // a tie, to even: up
        vec![1.0, u, u * p(-46)],                  // a hair above the tie
        vec![1.0, u, -u * p(-46)],                 // a hair below it
        vec![3.0, 2.0 * u, u * p(-70)],            // above the tie of another binade
        vec![p(100), 1.0, -p(100)],                // cancellation over a wide range
        vec![p(100), p(-100), -p(100)],            //
        vec![max, max, -max],                      // partial sums beyond the type's range
        vec![0.75, -0.75],                         // an exact zero: +0.0
        vec![-0.0, -0.0],                          //
        vec![1.0],                                 //
        vec![],                                    // empty
        vec![p(120), p(60), 1.0, -p(120), -p(60)], // one TwoSum residue deposited
        vec![1.0, u, tiny],                        // one deposited element breaks the tie: up
        vec![1.0, u, -tiny],                       // down
        vec![1.0, f64::INFINITY],                  // one special
    ];
    if ty == Ty::F64 {
        // The window's lower edge (2^-970) and a result inside it; the largest in-window sum.
        cases.push(vec![1.5 * p(-969), -p(-969)]);
        cases.push(vec![p(989), p(989)]);
    } else {
        // A subnormal result from normal elements; the overflow threshold (a tie: infinity).
        cases.push(vec![1.5 * p(-126), -p(-126)]);
        cases.push(vec![max, p(103)]);
        cases.push(vec![max, p(103), -p(50)]);
    }
    if ty == Ty::F16 {
        // f16 data: only what an f16 holds (the f32 sum of f16 elements still ties).
        cases = vec![
            vec![1.0, p(-24)],
            vec![1.0, p(-24), p(-24), p(-24)],
            vec![65504.0, 65504.0, -65504.0],
            vec![p(-24), -p(-24)],
        ];
    }
    let negated: Vec<Vec<f64>> = cases
        .iter()
        .map(|c| c.iter().map(|v| -v).collect())
        .collect();
    cases.extend(negated);
    let mut rng = Rng(seed);
    let (mut xs, mut off) = (vec![0.5, -7.0], vec![2u64]);
    for c in &cases {
        let mut seg = c.clone();
        let pairs = match (rng.below(4), sim) {
            (0, false) => rng.below(1500),
            (0, true) => rng.below(200),
            _ => rng.below(20),
        };
        for _ in 0..pairs {
            let v = (1 + rng.below(16)) as f64 * 0.5;
            seg.extend([v, -v]);
        }
        for j in (1..seg.len()).rev() {
            seg.swap(j, rng.below(j as u64 + 1) as usize);
        }
        xs.extend(seg);
        off.push(xs.len() as u64);
    }
    xs.push(3.0);
    let inits = (0..cases.len())
        .map(|_| [0.0, -0.0, u, -u, 0.25, tiny][rng.below(6) as usize])
        .collect();
    let n = xs.len() as u64;
    let l = Layout {
        name: "crafted",
        kind: Kind::Csr { n, off },
    };
    (l, xs, inits)
}

/// Hand-made segments whose correctly rounded sum the two-double expansion alone decides
/// (decision 67: an accumulator whose limbs were never touched rounds its expansion directly):
/// exact ties (to even, down and up), a hair above and below a tie (the hair in the
/// expansion's second double), a subnormal result, the overflow threshold, partial sums beyond
/// the type's range, exact zeros; and the same decided by exactly one element or one residue
/// deposited into the limbs (a subnormal, an infinity, a TwoSum residue). Each case and its
/// negation is one CSR segment, its elements shuffled among cancelling pairs of heavy-tailed
/// count (so every plan cuts it somewhere else), f32 and f64 data, with initial values that
/// sometimes decide the tie themselves; bit for bit against the host under every plan (a
/// rotating sample without CLREDUCE_FULL_MATRIX=1) and across plans and devices.
#[test]
fn expansion_decides_ties_and_single_deposits() {
    let mut t = Tally::new("segment_exact::expansion_decides_ties_and_single_deposits");
    let full = full_matrix();
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let turn = sample_hash(&format!("segment_exact::crafted::{dev}")) as usize;
        for (ti, ty) in TYPES.into_iter().enumerate() {
            let (l, xs, inits) = crafted(ty, d.is_simulator(), 0xC4AF + ti as u64);
            let all = l.plans();
            let plans: Vec<Option<SegmentAlgo>> = if full {
                all
            } else {
                vec![None, all[1 + (turn + ti) % (all.len() - 1)]]
            };
            for algo in plans {
                for init in [false, true] {
                    if !full && init != (turn + ti).is_multiple_of(2) {
                        continue;
                    }
                    let case = format!(
                        "{ty:?} {} init {init}",
                        algo.map_or("auto".into(), |a| a.to_string())
                    );
                    let key = format!("crafted n={} {ty:?} init {init}", l.n());
                    match run_on(q, &l, ty, (&xs, &inits), (algo, init), &key, &dev) {
                        Ok(()) => t.pass(&dev),
                        Err(Ok(why)) => t.skip(&dev, &case, &why),
                        Err(Err(m)) => t.fail(&dev, &case, &m),
                    }
                }
            }
        }
    }
    t.finish();
}

/// An exact sum beside min, max, argmax and an integer count per segment in one launch (CSR
/// with empty segments): the sum bit for bit, the others exactly, each element counted once.
#[test]
fn beside_min_max_argmax_and_a_count() {
    let mut t = Tally::new("segment_exact::beside_min_max_argmax_and_a_count");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let l = &layouts(d.is_simulator(), 0xC0 + d.index() as u64)[3];
        let r = l.results();
        let all = l.plans();
        let plans: Vec<Option<SegmentAlgo>> = if full_matrix() {
            all
        } else {
            let k = sample_hash(&format!("segment_exact::beside::{dev}")) as usize;
            vec![None, all[1 + k % (all.len() - 1)]]
        };
        for algo in plans {
            let case = algo.map_or("auto".into(), |a| a.to_string());
            let (xs, _) = data(l, Ty::F32, Pattern::Cancel, 0xBE5 + r as u64);
            let x: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
            let xb = q.buffer_from(&x).unwrap();
            let off = q.buffer_from(&l.offsets()).unwrap();
            let sum = q.buffer_from(&vec![0.25f32; r]).unwrap();
            let lo = q.buffer_from(&vec![f32::MAX; r]).unwrap();
            let hi = q.buffer_from(&vec![-3.0f32; r]).unwrap();
            let (av, ai) = (
                q.buffer_from(&vec![0.0f32; r]).unwrap(),
                q.buffer_from(&vec![0u64; r]).unwrap(),
            );
            let cnt = q.buffer_from(&vec![0u32; r]).unwrap();
            let s = || Segments::offsets(&off);
            let mut opts = Options::default().exact();
            opts.segment = algo;
            let ran = q.parallel_for_reduce_with(
                Range::new(l.n()),
                vec![
                    reduction(&sum, Op::Plus).segments(s()),
                    reduction(&lo, Op::Minimum).name("lo").segments(s()),
                    reduction(&hi, Op::Maximum).name("hi").segments(s()),
                    reduction_argmax(&av, &ai)
                        .name("am")
                        .segments(s())
                        .initialize_to_identity(),
                    reduction(&cnt, Op::Plus)
                        .name("cnt")
                        .segments(s())
                        .initialize_to_identity(),
                ],
                Kernel::new(
                    "sum += x[i]; combine(lo, x[i]); combine(hi, x[i]); combine(am, x[i], i); cnt += 1u;",
                )
                .arg("x", &xb),
                opts,
            );
            if let Err(e) = ran.and_then(|ev| ev.wait()) {
                match skip_reason(&e) {
                    Some(why) => t.skip(&dev, &case, &why),
                    None => t.fail(&dev, &case, &format!("launch: {e}")),
                }
                continue;
            }
            let (gs, gl, gh, gav, gai, gc) = (
                sum.to_vec().unwrap(),
                lo.to_vec().unwrap(),
                hi.to_vec().unwrap(),
                av.to_vec().unwrap(),
                ai.to_vec().unwrap(),
                cnt.to_vec().unwrap(),
            );
            let mut bad = Vec::new();
            for k in 0..r {
                let m = l.members(k);
                let seg: Vec<f32> = m.iter().map(|&i| x[i]).collect();
                let want = host_bits(l, Ty::F32, &xs, Some(0.25), k);
                if gs[k].to_bits() as u64 != want {
                    bad.push(format!("sum {k}: {:#x} want {want:#x}", gs[k].to_bits()));
                }
                let wl = seg.iter().fold(f32::MAX, |a, &v| a.min(v));
                let wh = seg.iter().fold(-3.0f32, |a, &v| a.max(v));
                if gl[k] != wl || gh[k] != wh {
                    bad.push(format!("min/max {k}: {}/{} want {wl}/{wh}", gl[k], gh[k]));
                }
                let best = seg
                    .iter()
                    .enumerate()
                    .fold(None, |b: Option<(usize, f32)>, (j, &v)| match b {
                        Some((_, bv)) if bv >= v => b,
                        _ => Some((j, v)),
                    });
                let (wv, wi) = best.map_or((f32::MIN, u64::MAX), |(j, v)| (v, m[j] as u64));
                if (gav[k], gai[k]) != (wv, wi) && !(m.is_empty() && gai[k] == u64::MAX) {
                    bad.push(format!(
                        "argmax {k}: ({}, {}) want ({wv}, {wi})",
                        gav[k], gai[k]
                    ));
                }
                if gc[k] as usize != m.len() {
                    bad.push(format!("count {k}: {} want {}", gc[k], m.len()));
                }
            }
            match bad.first() {
                None => t.pass(&dev),
                Some(m) => t.fail(&dev, &case, &format!("{} wrong, first {m}", bad.len())),
            }
        }
    }
    t.finish();
}

/// Without fp64 (a mask): three-float expansions, the same bits; f64 sums are refused.
#[test]
fn without_fp64_three_float_expansions() {
    let mut t = Tally::new("segment_exact::without_fp64_three_float_expansions");
    for base in queues() {
        let _g = sim_lock(base.device());
        let q = Queue::with_mask(base.device(), Mask::parse("no-fp64").unwrap()).unwrap();
        let dev = format!("{} no-fp64", short(q.device()));
        let ls = layouts(q.device().is_simulator(), 0xF64);
        // Columns and CSR (the three-float expansion through stripes/columns and tiles).
        let (skip, take) = if full_matrix() { (0, ls.len()) } else { (2, 2) };
        let patterns = [
            Pattern::Ties,
            Pattern::Cancel,
            Pattern::Spread,
            Pattern::Subnormal,
            Pattern::Alternating,
        ];
        for (l, p) in ls.iter().zip(patterns).skip(skip).take(take) {
            let case = format!("{} f32 {}", l.name, p.name());
            match run_case(&q, l, Ty::F32, p, None, true, 0x3F, &dev) {
                Ok(()) => t.pass(&dev),
                Err(Ok(why)) => t.skip(&dev, &case, &why),
                Err(Err(m)) => t.fail(&dev, &case, &m),
            }
        }
        let l = &ls[0];
        match run_case(&q, l, Ty::F64, Pattern::Random, None, true, 0x3F, &dev) {
            Err(Ok(why) | Err(why)) if why.contains("cl_khr_fp64") => t.pass(&dev),
            other => t.fail(&dev, "f64 refused", &format!("{other:?}")),
        }
    }
    t.finish();
}

/// What an exact segmented launch refuses, with nothing written: staged and merge (a
/// superaccumulator per element of a stage or tile), runs (two per work-item), a forced work-group step other than the tree, an order-sensitive
/// variable beside it.
#[test]
fn refusals_write_nothing() {
    let mut t = Tally::new("segment_exact::refusals_write_nothing");
    for q in queues() {
        let _g = sim_lock(q.device());
        let dev = short(q.device());
        let x = q.buffer_from(&[1.5f32; 64]).unwrap();
        let rows = q.buffer_from(&[7.0f32; 8]).unwrap();
        let prod = q.buffer_from(&[7.0f32; 8]).unwrap();
        let mut staged = Options::default().exact();
        staged.segment = Some(SegmentAlgo::Staged);
        let mut merge = Options::default().exact();
        merge.segment = Some(SegmentAlgo::Merge);
        let mut runs = Options::default().exact();
        runs.segment = Some(SegmentAlgo::Runs);
        let begin = q
            .buffer_from(&(0..=8u64).map(|k| k * 8).collect::<Vec<u64>>())
            .unwrap();
        let forced = Options::default()
            .exact()
            .strategy(Strategy::parse("sg-reduce+extra-pass").unwrap());
        let cases: Vec<(&str, clreduce::Result<clreduce::ReduceEvent>)> = vec![
            (
                "staged",
                q.parallel_for_reduce_with(
                    Range::new(64),
                    reduction(&rows, Op::Plus).segments(Segments::uniform(8)),
                    Kernel::new("sum += x[i];").arg("x", &x),
                    staged,
                ),
            ),
            (
                "merge",
                q.parallel_for_reduce_with(
                    Range::new(64),
                    reduction(&rows, Op::Plus).segments(Segments::offsets(&begin)),
                    Kernel::new("sum += x[i];").arg("x", &x),
                    merge,
                ),
            ),
            (
                "runs",
                q.parallel_for_reduce_with(
                    Range::new(64),
                    reduction(&rows, Op::Plus).segments(Segments::offsets(&begin)),
                    Kernel::new("sum += x[i];").arg("x", &x),
                    runs,
                ),
            ),
            (
                "sg-reduce",
                q.parallel_for_reduce_with(
                    Range::new(64),
                    reduction(&rows, Op::Plus).segments(Segments::uniform(8)),
                    Kernel::new("sum += x[i];").arg("x", &x),
                    forced,
                ),
            ),
            (
                "product beside",
                q.parallel_for_reduce_with(
                    Range::new(64),
                    vec![
                        reduction(&rows, Op::Plus).segments(Segments::uniform(8)),
                        reduction(&prod, Op::Multiplies)
                            .name("p")
                            .segments(Segments::uniform(8)),
                    ],
                    Kernel::new("sum += x[i]; p *= x[i];").arg("x", &x),
                    Options::default().exact(),
                ),
            ),
        ];
        for (case, r) in cases {
            match r {
                Err(Error::Unsupported { .. })
                    if rows.to_vec().unwrap() == [7.0; 8] && prod.to_vec().unwrap() == [7.0; 8] =>
                {
                    t.pass(&dev)
                }
                Err(e) => t.fail(&dev, case, &format!("{e} (or a result written)")),
                Ok(_) => t.fail(&dev, case, "ran"),
            }
        }
        // A forced tree is fine.
        let tree = Options::default()
            .exact()
            .strategy(Strategy::parse("tree+extra-pass").unwrap());
        match q
            .parallel_for_reduce_with(
                Range::new(64),
                reduction(&rows, Op::Plus)
                    .segments(Segments::uniform(8))
                    .initialize_to_identity(),
                Kernel::new("sum += x[i];").arg("x", &x),
                tree,
            )
            .and_then(|ev| ev.wait())
        {
            Ok(()) if rows.to_vec().unwrap() == [12.0; 8] => t.pass(&dev),
            other => t.fail(
                &dev,
                "forced tree",
                &format!("{other:?} {:?}", rows.to_vec()),
            ),
        }
    }
    t.finish();
}

/// Split across devices (`MultiQueue`: PoCL + Intel here, and a second queue on the first
/// device): each share hands back every segment's superaccumulator and the host merges them,
/// so a segment cut by a share boundary still gets its correctly rounded sum, bit for bit;
/// splits with boundaries inside segments, everything on one device, a first share of one unit.
#[test]
fn split_across_devices_bit_for_bit() {
    use clreduce::multi::{MultiKernel, MultiQueue, Split};
    let mut t = Tally::new("segment_exact::split_across_devices_bit_for_bit");
    let qs: Vec<Queue> = queues()
        .iter()
        .filter(|q| !q.device().is_simulator())
        .cloned()
        .collect();
    if qs.is_empty() {
        eprintln!("SKIP segment_exact::split_across_devices_bit_for_bit: no non-simulator device");
        return;
    }
    let mut three = qs.clone();
    three.push(Queue::new(qs[0].device()).unwrap());
    let mut configs = vec![("three shares", MultiQueue::new(&three).unwrap())];
    if qs.len() >= 2 {
        configs.push(("devices", MultiQueue::new(&qs).unwrap()));
    }
    let ls = layouts(true, 0x5A11);
    for (cname, mq) in &configs {
        let k = mq.len();
        let q0 = mq.queue(0);
        for (li, l) in ls.iter().enumerate() {
            let (units, per) = match l.kind {
                Kind::Cols { r, c } => (r, c),
                _ => (l.n(), 1),
            };
            let a = units / 5;
            let mut cut = vec![a];
            for j in 1..k {
                cut.push(if j + 1 == k {
                    units - a - cut[1..].iter().sum::<u64>()
                } else {
                    (units - a) * 2 / 3
                });
            }
            let mut last = vec![0; k];
            last[k - 1] = units;
            let mut one = vec![0; k];
            one[0] = units.min(1);
            one[k - 1] += units - one[0];
            let p = [
                Pattern::Cancel,
                Pattern::Ties,
                Pattern::Spread,
                Pattern::BothInf,
                Pattern::Alternating,
            ][li % 5];
            let init = li % 2 == 0;
            for split in [cut, last, one].map(|c| Split::from_counts(&c)) {
                let case = format!(
                    "{cname} {} {} init {init} split {:?}",
                    l.name,
                    p.name(),
                    split.counts()
                );
                let (xs, inits) = data(l, Ty::F32, p, 0x5A + li as u64);
                let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
                let x = mq.scatter_with(&x32, &split, per).unwrap();
                let res = q0
                    .buffer_from(&inits.iter().map(|&v| v as f32).collect::<Vec<_>>())
                    .unwrap();
                let offsets = q0.buffer_from(&l.offsets()).unwrap();
                let mut red = l.segment(reduction(&res, Op::Plus), &offsets);
                if !init {
                    red = red.initialize_to_identity();
                }
                let ran = mq.parallel_for_reduce_with(
                    l.range(),
                    vec![red],
                    MultiKernel::new("sum += x[i];").arg("x", &x),
                    Options::default().exact(),
                );
                if let Err(e) = ran {
                    t.fail(cname, &case, &format!("launch: {e}"));
                    continue;
                }
                let got = res.to_vec().unwrap();
                let bad: Vec<String> = (0..l.results())
                    .filter_map(|j| {
                        let want = host_bits(l, Ty::F32, &xs, init.then_some(inits[j]), j);
                        (got[j].to_bits() as u64 != want)
                            .then(|| format!("result {j}: {:#x} want {want:#x}", got[j].to_bits()))
                    })
                    .collect();
                match bad.first() {
                    None => t.pass(cname),
                    Some(m) => t.fail(cname, &case, &format!("{} wrong, first {m}", bad.len())),
                }
            }
        }
    }
    t.finish();
}
