//! The one case model of `clreduce bench`, `clreduce tune` and `clreduce reduce`'s checks
//! (issue 27): a [`Case`] is what one launch reduces, named as the bench and the tuner spell it
//! (`f32-sum`, `u32-or`, `f32-sum-min-max`, `u32-hist256`, `f32-hist1048576`, `f32-argmin`,
//! `f32-sum-exact`, and
//! per segment `f32-rows-RxC`, `f32-cols-RxC`, `f32-ragged-MEAN`): element types, variables,
//! body, result shape and segment layout (`layout.rs`); its seeded input, its result buffers,
//! the launch itself ([`Case::launch`]: what the bench reports is what the tuner times), what
//! the host expects of every variable and the verdict (`verdict.rs`, also `reduce`'s).
//!
//! Imports the public API (queues, buffers, reductions), `plan` (strategies, launch classes)
//! and `check` (references, seeded inputs); `tune` and the CLI import it.

mod layout;
mod verdict;

pub use layout::{gather, Layout, RAGGED_SEED};
pub use verdict::{check_var, Expected, Got, Verdict};

use crate::check::reference;
use crate::plan::{Determinism, LaunchClass, OpClass, Plan, SegmentAlgo, Strategy};
use crate::types::HostVec;
use crate::{
    reduction, reduction_argmin, reduction_span, Axis, Buffer, DynBuffer, ElemType, Kernel, Op,
    Options, Queue, Range, ReduceEvent, Reduction, Result, Segments, Value,
};
use std::fmt;

/// How a case's result variables are shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One result per entry of `vars` (per segment under a segment layout).
    Scalars,
    /// One span variable (`vars[0]`, op plus) of this many bins of the case's type: u32 counters
    /// (`u32-histN`) or f32 and f64 sums (`f32-histN`, `f64-histN`: weighted histograms).
    Span(usize),
    /// One argmin variable (`vars[0]`, op minimum): the value in the element type and the
    /// lowest index holding it in a u64 buffer.
    ArgMin,
}

/// One case: an element type, one or more reduction variables, the body and where the results
/// go.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The name, as `--cases` spells it (sizes in decimal).
    pub name: String,
    /// The type the variables reduce in (f32 for f16 and bf16 input).
    pub ty: ElemType,
    /// The input's element type: `ty`, or f16 / bf16 (read as f32 in the body; GB/s counts
    /// these 2-byte elements).
    pub stored: ElemType,
    /// The op the input data is generated for (`reference::random_input`).
    pub data_op: Op,
    /// The variables: op and name in the body.
    pub vars: Vec<(Op, &'static str)>,
    /// The result shape.
    pub shape: Shape,
    /// The kernel body (OpenCL C over `x[i]`).
    pub body: String,
    /// An exact sum (`TYPE-sum-exact`, `f32-sum-min-max-exact`): launched with
    /// `Determinism::Exact`, the sum checked bit for bit against the correctly rounded sum.
    pub exact: bool,
    /// One result per variable, or per segment.
    pub layout: Layout,
}

/// The cases `clreduce bench` runs when `--cases` is not given, and `clreduce tune --quick`'s.
pub const DEFAULT_CASES: &str =
    "f32-sum,f64-sum,i32-sum,f32-max,f32-sum-min-max,u32-hist256,f32-argmin";
/// `clreduce tune`'s: the default cases, the other integer widths, min/max on every width, a
/// bitwise op, f64 argmin and two more histogram sizes.
pub const FULL_CASES: &str = "f32-sum,f64-sum,i32-sum,u32-sum,i64-sum,f32-max,f64-max,i32-max,i64-max,u32-or,f32-sum-min-max,u32-hist16,u32-hist256,u32-hist4096,f32-argmin,f64-argmin";

/// The segmented cases of `clreduce tune --quick` (2^20 elements): a few shapes per layout.
pub const QUICK_SEGMENT_CASES: &str = "f32-rows-65536x16,f32-rows-4096x256,f32-rows-64x16384,f32-cols-4096x256,f32-cols-64x16384,f32-ragged-16,f32-ragged-256";
/// The segmented cases of `clreduce tune` (2^22 elements): more shapes, one row shape of i32.
pub const FULL_SEGMENT_CASES: &str = "f32-rows-262144x16,f32-rows-16384x256,f32-rows-256x16384,f32-rows-1x4194304,f32-cols-262144x16,f32-cols-16384x256,f32-cols-256x16384,f32-ragged-16,f32-ragged-256,f32-ragged-65536,i32-rows-16384x256";

/// Most bins a `u32-histN`, `f32-histN` or `f64-histN` case may have (issue 26: large spans of 2^16 to 2^24
/// bins with arbitrary keys).
const MAX_BINS: usize = 1 << 24;

/// The bins of a histogram case `PREFIX-histN` (N a power of two up to [`MAX_BINS`]).
fn hist_bins(s: &str, prefix: &str) -> Option<std::result::Result<usize, String>> {
    let bins = s.strip_prefix(prefix)?;
    Some(
        bins.parse()
            .ok()
            .filter(|b: &usize| b.is_power_of_two() && *b <= MAX_BINS)
            .ok_or_else(|| {
                format!("bad case {s:?} (expected {prefix}N, N a power of two up to {MAX_BINS})")
            }),
    )
}

/// What a launch of a case is forced to: nothing (`auto`), a strategy (the ordinary
/// reductions) or a segment plan (segmented cases), as the bench runs them in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Force {
    /// The planner's choice.
    Auto,
    /// A forced work-group and cross-group strategy.
    Strategy(Strategy),
    /// A forced segment plan.
    Segment(SegmentAlgo),
}

impl fmt::Display for Force {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Force::Auto => f.write_str("auto"),
            Force::Strategy(s) => write!(f, "{s}"),
            Force::Segment(a) => write!(f, "{a}"),
        }
    }
}

impl Force {
    /// `auto`, a strategy (`tree+last-group`) or a segment plan (`item`, `group`, `tiles`,
    /// `chunks`, `columns`).
    pub fn parse(s: &str) -> std::result::Result<Force, String> {
        if let Ok(Some(a)) = SegmentAlgo::parse(s) {
            return Ok(Force::Segment(a));
        }
        match Strategy::parse(s) {
            Ok(st) if st == Strategy::AUTO => Ok(Force::Auto),
            Ok(st) => Ok(Force::Strategy(st)),
            Err(e) => Err(format!(
                "{e} (or a segment plan: item, group, tiles, chunks, columns)"
            )),
        }
    }
}

/// A plain case by name (no segment layout).
fn parse_flat(s: &str) -> std::result::Result<Case, String> {
    let case = |name: String, stored: ElemType, data_op, vars, shape, body: String| Case {
        name,
        ty: stored.acc(),
        stored,
        data_op,
        vars,
        shape,
        body,
        exact: false,
        layout: Layout::Flat,
    };
    if let Some(plain) = s.strip_suffix("-exact") {
        let mut c = parse_flat(plain)?;
        if !(c.vars[0].0 == Op::Plus
            && c.ty.is_float()
            && matches!(c.shape, Shape::Scalars | Shape::Span(_)))
        {
            return Err(format!(
                "bad case {s:?} (exact cases are f32-sum-exact, f64-sum-exact, f16-sum-exact, bf16-sum-exact, f32-sum-min-max-exact, f32-histN-exact and f64-histN-exact)"
            ));
        }
        c.name = format!("{}-exact", c.name);
        c.exact = true;
        return Ok(c);
    }
    if s == "f32-sum-min-max" {
        let vars = vec![(Op::Plus, "sum"), (Op::Minimum, "lo"), (Op::Maximum, "hi")];
        let body = "sum += x[i]; combine(lo, x[i]); combine(hi, x[i]);".into();
        return Ok(case(s.into(), ElemType::F32, Op::Plus, vars, Shape::Scalars, body));
    }
    if let Some(bins) = hist_bins(s, "u32-hist") {
        let bins = bins?;
        // Full-range random u32: the low bits are uniform over the bins.
        let body = format!("hist[(uint)x[i] & {}u] += 1u;", bins - 1);
        let vars = vec![(Op::Plus, "hist")];
        return Ok(case(s.into(), ElemType::U32, Op::BitOr, vars, Shape::Span(bins), body));
    }
    if let Some(bins) = hist_bins(s, "f32-hist") {
        let bins = bins?;
        // A weighted histogram with random keys: the key is the low bits of x's own bits (the
        // case model has one input; `keyed_f32` makes those bits uniform), the weight is x.
        let body = format!("hist[as_uint(x[i]) & {}u] += x[i];", bins - 1);
        let vars = vec![(Op::Plus, "hist")];
        return Ok(case(s.into(), ElemType::F32, Op::Plus, vars, Shape::Span(bins), body));
    }
    if let Some(bins) = hist_bins(s, "f64-hist") {
        let bins = bins?;
        // The same with f64 weights (`keyed_f64`: the key is the low bits of x's bits).
        let body = format!("hist[(uint)(as_ulong(x[i]) & {}ul)] += x[i];", bins - 1);
        let vars = vec![(Op::Plus, "hist")];
        return Ok(case(s.into(), ElemType::F64, Op::Plus, vars, Shape::Span(bins), body));
    }
    if let Some(t) = s.strip_suffix("-argmin") {
        let stored = ElemType::parse(t).map_err(|e| e.to_string())?;
        // Values on a grid of 1/64 in [-64, 64): large inputs hold the minimum many times, so
        // the lowest-index rule is exercised.
        let vars = vec![(Op::Minimum, "best")];
        let body = "combine(best, x[i], i);".into();
        let name = format!("{stored}-argmin");
        return Ok(case(name, stored, Op::Minimum, vars, Shape::ArgMin, body));
    }
    let (t, o) = s
        .split_once('-')
        .ok_or_else(|| format!("bad case {s:?} (expected TYPE-OP such as f32-sum)"))?;
    let stored = ElemType::parse(t).map_err(|e| e.to_string())?;
    let op = Op::parse(o).map_err(|e| e.to_string())?;
    if !op.valid_for(stored.acc()) {
        return Err(format!("bad case {s:?}: {op} on {stored} is not a reduction"));
    }
    let body = match op {
        Op::Plus => "sum += x[i];",
        Op::BitOr => "sum |= x[i];",
        _ => "combine(sum, x[i]);",
    };
    let name = format!("{stored}-{op}");
    Ok(case(name, stored, op, vec![(op, "sum")], Shape::Scalars, body.into()))
}

impl Case {
    /// A case by name: TYPE-OP, f32-sum-min-max, u32-histN, f32-histN and f64-histN (weighted histograms),
    /// TYPE-argmin, TYPE-sum-exact (f32, f64, f16, bf16), f32-sum-min-max-exact , f32-histN-exact or f64-histN-exact, and per segment PREFIX-rows-RxC,
    /// PREFIX-cols-RxC or PREFIX-ragged-MEAN where PREFIX is a TYPE (a sum: `f32-rows-4x4`),
    /// TYPE-OP, f32-sum-min-max or TYPE-argmin (R, C and MEAN as N or 2^K). TYPE may be f16 or
    /// bf16 (`f16-sum`, `bf16-max`): the input is stored in 16 bits and reduced in f32.
    pub fn parse(s: &str) -> std::result::Result<Case, String> {
        let s = s.trim();
        let Some((prefix, layout)) = Layout::split(s)? else {
            return parse_flat(s);
        };
        let plain = match ElemType::parse(prefix) {
            Ok(t) => parse_flat(&format!("{t}-sum"))?,
            Err(_) => parse_flat(prefix)?,
        };
        if plain.exact || matches!(plain.shape, Shape::Span(_)) {
            return Err(format!(
                "bad case {s:?}: segmented cases are TYPE, TYPE-OP, f32-sum-min-max or TYPE-argmin per segment (no histograms; exact sums per segment are not bench cases yet: examples/segment_bench.rs with SEGBENCH_EXACT=1 times them)"
            ));
        }
        let stem = match plain.name.strip_suffix("-sum") {
            Some(t) if plain.vars.len() == 1 => t.to_string(),
            _ => plain.name.clone(),
        };
        Ok(Case {
            name: format!("{stem}{}", layout.suffix()),
            layout,
            ..plain
        })
    }

    /// A comma list of cases.
    pub fn parse_list(s: &str) -> std::result::Result<Vec<Case>, String> {
        s.split(',')
            .filter(|c| !c.trim().is_empty())
            .map(Case::parse)
            .collect()
    }

    /// The plain sum of the same input: `TYPE-sum` of the stored type, one result.
    pub fn plain_sum(&self) -> Case {
        parse_flat(&format!("{}-sum", self.stored)).expect("every stored type sums")
    }

    /// The launch options under `det` (exact cases: `Determinism::Exact`) with `force`.
    pub fn options(&self, det: Determinism, force: Force) -> Options {
        let mut o = Options {
            determinism: if self.exact { Determinism::Exact } else { det },
            ..Options::default()
        };
        match force {
            Force::Auto => {}
            Force::Strategy(s) => o.strategy = s,
            Force::Segment(a) => o.segment = Some(a),
        }
        o
    }

    /// `auto` and every forced plan of this case's kind: the strategies for the ordinary
    /// reductions, the segment plans of its layout for a segmented case.
    pub fn forces(&self) -> Vec<Force> {
        let forced: Vec<Force> = if self.layout.is_segmented() {
            self.layout.algos().into_iter().map(Force::Segment).collect()
        } else {
            Strategy::all_forced().into_iter().map(Force::Strategy).collect()
        };
        std::iter::once(Force::Auto).chain(forced).collect()
    }

    /// Whether `f` applies to this case (a strategy to an ordinary case, a segment plan to a
    /// segmented one, auto to both).
    pub fn takes(&self, f: Force) -> bool {
        match f {
            Force::Auto => true,
            Force::Strategy(_) => !self.layout.is_segmented(),
            Force::Segment(_) => self.layout.is_segmented(),
        }
    }

    /// The element count of a launch at the bench's size `n`: R x C for rows and columns.
    pub fn n_for(&self, n: u64) -> u64 {
        self.layout.fixed_n().unwrap_or(n)
    }

    /// The launch class the tuner records this case under (a segmented case's is its
    /// variables', beside the layout and mean length); `Err` says why it is not tuned.
    pub fn class(&self) -> std::result::Result<LaunchClass, String> {
        if self.stored != self.ty {
            return Err(format!(
                "{}: the tuning table has no class for 16-bit input",
                self.name
            ));
        }
        let ops = match self.shape {
            Shape::ArgMin => vec![OpClass::Arg],
            _ => self
                .vars
                .iter()
                .map(|(op, _)| OpClass::of(&(*op).into()))
                .collect(),
        };
        Ok(LaunchClass {
            ops,
            ty: self.ty,
            span_log2: match self.shape {
                Shape::Span(len) => Some(len.trailing_zeros()),
                _ => None,
            },
            exact: self.exact,
        })
    }

    /// The input of `n` elements (seeded): generated for the op in the reduction type, and for
    /// f16 / bf16 rounded to the storage type (nearest even), so that the host reference is of
    /// exactly the values the device reads. Upload it with `DynBuffer::upload_as(q, data,
    /// stored)`.
    pub fn input(&self, n: usize, seed: u64) -> HostVec {
        if matches!(self.shape, Shape::Span(_)) && self.ty == ElemType::F32 {
            return keyed_f32(n, seed);
        }
        if matches!(self.shape, Shape::Span(_)) && self.ty == ElemType::F64 {
            return keyed_f64(n, seed);
        }
        let data = reference::random_input(self.data_op, self.ty, n, seed);
        match (data, self.stored) {
            (HostVec::F32(v), ElemType::F16) => HostVec::F32(
                v.into_iter()
                    .map(|x| crate::Half::from_f32(x).to_f32())
                    .collect(),
            ),
            (HostVec::F32(v), ElemType::BF16) => HostVec::F32(
                v.into_iter()
                    .map(|x| crate::Bf16::from_f32(x).to_f32())
                    .collect(),
            ),
            (d, _) => d,
        }
    }

    /// Allocates the result buffers for a launch over `n` elements, at the identity (and a
    /// ragged case's offsets).
    pub fn outs(&self, q: &Queue, n: u64) -> Result<Outs> {
        let offsets = self.layout.offsets(n);
        let results = self.layout.results(offsets.as_deref());
        let off = offsets.as_ref().map(|o| q.buffer_from(o)).transpose()?;
        let at_len = |op: Op, len: usize| -> Result<DynBuffer> {
            let id = identity(op, self.ty);
            let host = HostVec::from_values(self.ty, &vec![id; len]).expect("values of ty");
            DynBuffer::upload(q, &host)
        };
        let at = |op: Op| at_len(op, results);
        Ok(match self.shape {
            Shape::Scalars => Outs {
                vars: self
                    .vars
                    .iter()
                    .map(|(op, _)| at(*op))
                    .collect::<Result<Vec<_>>>()?,
                index: None,
                offsets: off,
            },
            Shape::Span(len) => Outs {
                vars: vec![at_len(Op::Plus, len)?],
                index: None,
                offsets: off,
            },
            Shape::ArgMin => Outs {
                vars: vec![at(Op::Minimum)?],
                index: Some(q.buffer_from(&vec![u64::MAX; results])?),
                offsets: off,
            },
        })
    }

    /// Puts the results back at the identity (a host write, untimed). Segmented cases
    /// initialize to the identity in the launch itself.
    pub fn reset(&self, o: &Outs) -> Result<()> {
        if self.layout.is_segmented() {
            return Ok(());
        }
        match (self.shape, &o.vars[..]) {
            (Shape::Span(len), [DynBuffer::U32(b)]) => b.write(0, &vec![0u32; len]),
            (Shape::Span(len), [DynBuffer::F32(b)]) => b.write(0, &vec![0f32; len]),
            (Shape::Span(len), [DynBuffer::F64(b)]) => b.write(0, &vec![0f64; len]),
            _ => {
                for (r, (op, _)) in o.vars.iter().zip(&self.vars) {
                    r.set(0, identity(*op, self.ty))?;
                }
                if let Some(ix) = &o.index {
                    ix.write(0, &[u64::MAX])?;
                }
                Ok(())
            }
        }
    }

    /// The reductions of one launch over `o`.
    pub fn reductions(&self, o: &Outs) -> Vec<Reduction> {
        let flat: Vec<Reduction> = match (self.shape, &o.index) {
            (Shape::Span(len), _) => vec![reduction_span(&o.vars[0], len, Op::Plus).name("hist")],
            (Shape::ArgMin, Some(ix)) => {
                vec![reduction_argmin(&o.vars[0], ix).name(self.vars[0].1)]
            }
            _ => o
                .vars
                .iter()
                .zip(&self.vars)
                .map(|(r, (op, name))| reduction(r, *op).name(name))
                .collect(),
        };
        if !self.layout.is_segmented() {
            return flat;
        }
        flat.into_iter()
            .map(|r| {
                let r = r.initialize_to_identity();
                match (self.layout, &o.offsets) {
                    (Layout::Cols { .. }, _) => r.axis(Axis::First),
                    (Layout::Ragged { .. }, Some(off)) => r.segments(Segments::offsets(off)),
                    _ => r.axis(Axis::Last),
                }
            })
            .collect()
    }

    /// One launch of this case over the input `x` (of `n` elements) into `o`: the range, the
    /// reductions and the kernel, built before the clock starts. The bench and the tuner both
    /// launch through it.
    pub fn launch(&self, n: u64, x: &DynBuffer, o: &Outs) -> Launch {
        Launch {
            range: self.layout.range(n),
            reductions: self.reductions(o),
            kernel: Kernel::new(&self.body).arg("x", x),
        }
    }

    /// The plan of a launch over `n` elements into `o` (no input needed).
    pub fn explain(&self, q: &Queue, n: u64, o: &Outs, opts: Options) -> Result<Plan> {
        q.explain(self.layout.range(n), self.reductions(o), opts)
    }

    /// Reads the results (blocking), one per variable.
    pub fn read(&self, o: &Outs) -> Result<Vec<Got>> {
        if self.layout.is_segmented() {
            return match (self.shape, &o.index) {
                (Shape::ArgMin, Some(ix)) => {
                    Ok(vec![Got::ArgSegments(host_of(&o.vars[0])?, ix.to_vec()?)])
                }
                _ => o
                    .vars
                    .iter()
                    .map(|v| Ok(Got::Segments(host_of(v)?)))
                    .collect(),
            };
        }
        match (self.shape, &o.vars[..], &o.index) {
            (Shape::Span(_), [b], _) => Ok(vec![Got::Span(b.to_values()?)]),
            (Shape::ArgMin, [v], Some(ix)) => Ok(vec![Got::Arg(v.value(0)?, ix.get(0)?)]),
            _ => o.vars.iter().map(|r| Ok(Got::Scalar(r.value(0)?))).collect(),
        }
    }

    /// The host's result for each variable over `data` (of `n` elements): serial, in float64
    /// or exact integers, argmin's lowest index, an exact sum's correctly rounded value.
    pub fn expect(&self, data: &HostVec) -> Vec<Expected> {
        if self.layout.is_segmented() {
            return self.expect_segments(data);
        }
        match self.shape {
            Shape::Span(len) => vec![span_expected(data, len, self.exact)],
            Shape::ArgMin => vec![Expected::Arg(reference::reference_arg(false, data, None))],
            Shape::Scalars => self
                .vars
                .iter()
                .enumerate()
                .map(|(k, (op, _))| {
                    match (self.exact && k == 0)
                        .then(|| reference::reference_exact(data, None))
                        .flatten()
                    {
                        Some(v) => Expected::Exact(v),
                        None => Expected::Scalar(reference::reference(*op, data, None)),
                    }
                })
                .collect(),
        }
    }

    /// Per variable, each segment's reference (argmin: value and global index).
    fn expect_segments(&self, data: &HostVec) -> Vec<Expected> {
        let n = data.len() as u64;
        let offsets = self.layout.offsets(n);
        let results = self.layout.results(offsets.as_deref());
        let members: Vec<Vec<usize>> = (0..results)
            .map(|k| self.layout.members(offsets.as_deref(), k))
            .collect();
        let segs: Vec<HostVec> = members.iter().map(|m| gather(data, m)).collect();
        if self.shape == Shape::ArgMin {
            let refs = segs
                .iter()
                .zip(&members)
                .map(|(s, m)| {
                    let mut w = reference::reference_arg(false, s, None);
                    if w.index != u64::MAX {
                        w.index = m[w.index as usize] as u64;
                    }
                    w
                })
                .collect();
            return vec![Expected::ArgSegments(refs)];
        }
        self.vars
            .iter()
            .map(|(op, _)| {
                Expected::Segments(segs.iter().map(|s| reference::reference(*op, s, None)).collect())
            })
            .collect()
    }

    /// The bound class of variable `k` (argmin: minimum).
    fn class_of(&self, k: usize) -> Option<Op> {
        Some(self.vars[k].0)
    }

    /// Every variable's verdict for the results `got` of a launch that ran `plan`.
    pub fn verdicts(&self, plan: &Plan, got: &[Got], want: &[Expected]) -> Vec<Verdict> {
        (0..self.vars.len())
            .map(|k| match (want.get(k), got.get(k)) {
                (Some(w), Some(g)) => check_var(self.class_of(k), k, plan, w, g, self.ty),
                _ => Verdict {
                    ok: false,
                    result: format!("{} results", got.len()),
                    reference: format!("{} references", want.len()),
                    check: "MISMATCH: a variable has no result".into(),
                },
            })
            .collect()
    }

    /// "ok", or "MISMATCH" and what differs, naming the variables.
    pub fn check(&self, plan: &Plan, got: &[Got], want: &[Expected]) -> String {
        let problems: Vec<String> = self
            .verdicts(plan, got, want)
            .into_iter()
            .zip(&self.vars)
            .filter(|(v, _)| !v.ok)
            .map(|(v, (_, name))| {
                let why = v.check.strip_prefix("MISMATCH: ").unwrap_or(&v.check);
                format!("{name}: {why} (got {})", v.result)
            })
            .collect();
        if problems.is_empty() {
            "ok".into()
        } else {
            format!("MISMATCH {}", problems.join("; "))
        }
    }
}

/// A result buffer of a reducible type, read whole.
fn host_of(b: &DynBuffer) -> Result<HostVec> {
    Ok(match b {
        DynBuffer::I32(b) => HostVec::I32(b.to_vec()?),
        DynBuffer::U32(b) => HostVec::U32(b.to_vec()?),
        DynBuffer::I64(b) => HostVec::I64(b.to_vec()?),
        DynBuffer::U64(b) => HostVec::U64(b.to_vec()?),
        DynBuffer::F32(b) => HostVec::F32(b.to_vec()?),
        DynBuffer::F64(b) => HostVec::F64(b.to_vec()?),
        other => HostVec::from_values(ElemType::F32, &other.to_values()?).expect("f32 values"),
    })
}

/// The input of a weighted histogram (`f32-histN`): random signs, the 23 fraction bits random
/// and the exponent uniform in 2^-2 .. 2^1, so that `as_uint(x) & (N - 1)` is uniform over N
/// bins up to 2^24 (bit 23 is the exponent's lowest bit). Every value is a multiple of 2^-25,
/// so the host sums each bin exactly in integers (`span_expected`).
pub fn keyed_f32(n: usize, seed: u64) -> HostVec {
    let mut r = reference::Rng::new(seed ^ 0x6b65_7965_645f_6633);
    HostVec::F32(
        (0..n)
            .map(|_| {
                let b = r.next_u64();
                let exp = 125 + (b >> 32) as u32 % 4;
                f32::from_bits(((b >> 40) as u32 & 0x8000_0000) | (exp << 23) | (b as u32 & 0x7f_ffff))
            })
            .collect(),
    )
}

/// The input of an f64 weighted histogram (`f64-histN`): as [`keyed_f32`] with the 52
/// fraction bits random and the exponent uniform in 2^-2 .. 2^1, so `as_ulong(x) & (N - 1)` is
/// uniform over N bins; every value is a multiple of 2^-54, summed exactly in i128 by the host.
pub fn keyed_f64(n: usize, seed: u64) -> HostVec {
    let mut r = reference::Rng::new(seed ^ 0x6b65_7965_645f_6636);
    HostVec::F64(
        (0..n)
            .map(|_| {
                let b = r.next_u64();
                let c = r.next_u64();
                let exp = 1021 + c % 4;
                f64::from_bits((c & (1 << 63)) | (exp << 52) | (b & ((1 << 52) - 1)))
            })
            .collect(),
    )
}

/// Each bin's reference for a histogram case over `data`: u32 counts exactly; f32 and f64 sums
/// (the data of [`keyed_f32`] and [`keyed_f64`], multiples of 2^-25 and 2^-54) exactly in
/// i128, as the float64 reference with the sum of magnitudes, or with `exact` as the correctly
/// rounded result (the i128 total rounded once to the type, then scaled by a power of two:
/// exact).
fn span_expected(data: &HostVec, len: usize, exact: bool) -> Expected {
    let mask = len - 1;
    let mut total = vec![0i128; len];
    let mut count = vec![0usize; len];
    let mut abs = vec![0f64; len];
    match data {
        HostVec::U32(v) => {
            for &x in v {
                total[x as usize & mask] += 1;
                count[x as usize & mask] += 1;
            }
        }
        HostVec::F32(v) => {
            for &x in v {
                let b = x.to_bits() as usize & mask;
                let scaled = (x as f64 * (1u64 << 25) as f64) as i128;
                debug_assert_eq!(scaled as f64, x as f64 * (1u64 << 25) as f64);
                total[b] += scaled;
                count[b] += 1;
                abs[b] += (x as f64).abs();
            }
        }
        HostVec::F64(v) => {
            for &x in v {
                let b = x.to_bits() as usize & mask;
                let scaled = (x * (1u64 << 54) as f64) as i128;
                total[b] += scaled;
                count[b] += 1;
                abs[b] += x.abs();
            }
        }
        other => unreachable!("histogram cases are u32, f32 or f64, not {}", other.ty()),
    }
    let f64_data = matches!(data, HostVec::F64(_));
    let unit = if f64_data { (-54f64).exp2() } else { (-25f64).exp2() };
    if let HostVec::F32(_) | HostVec::F64(_) = data {
        if exact {
            return Expected::ExactSpan(
                total
                    .into_iter()
                    .map(|t| {
                        if f64_data {
                            Value::F64(t as f64 * unit)
                        } else {
                            Value::F32(t as f32 * unit as f32)
                        }
                    })
                    .collect(),
            );
        }
        let bins = total
            .into_iter()
            .zip(count)
            .zip(abs)
            .map(|((t, n), a)| reference::Reference {
                exact: None,
                value: t as f64 * unit,
                sum_abs: a,
                n,
            })
            .collect();
        return Expected::Span(bins);
    }
    let bins = total
        .into_iter()
        .zip(count)
        .map(|(c, n)| reference::Reference {
            exact: Some(c),
            value: c as f64,
            sum_abs: 0.0,
            n,
        })
        .collect();
    Expected::Span(bins)
}

/// The op's identity in `ty` (a placeholder 0 where it has none).
pub fn identity(op: Op, ty: ElemType) -> Value {
    op.identity(ty).unwrap_or(Value::I32(0))
}

/// The result buffers of one case on one queue.
pub struct Outs {
    /// One per variable: a scalar, a span of `len` counters, argmin's value, or one result per
    /// segment.
    vars: Vec<DynBuffer>,
    /// argmin's index (one per segment for a segmented case).
    index: Option<Buffer<u64>>,
    /// A ragged case's CSR offsets.
    offsets: Option<Buffer<u64>>,
}

/// One launch of a case, built ([`Case::launch`]) and ready to run, explain or show.
pub struct Launch {
    /// The range (2-D for rows and columns).
    pub range: Range,
    /// The reductions.
    pub reductions: Vec<Reduction>,
    /// The body with the input bound as `x`.
    pub kernel: Kernel,
}

impl Launch {
    /// Runs it with `opts`.
    pub fn run(self, q: &Queue, opts: Options) -> Result<ReduceEvent> {
        q.parallel_for_reduce_with(self.range, self.reductions, self.kernel, opts)
    }
    /// The plan it would run.
    pub fn explain(self, q: &Queue, opts: Options) -> Result<Plan> {
        q.explain(self.range, self.reductions, opts)
    }
    /// The OpenCL C program it would build.
    pub fn source(self, q: &Queue, opts: Options) -> Result<String> {
        q.explain_source(self.range, self.reductions, self.kernel, opts)
    }
}

#[cfg(test)]
mod tests;
