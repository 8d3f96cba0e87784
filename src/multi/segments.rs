//! Segmented and axis reductions across devices (and MPI ranks): the segments of the whole
//! index space on the host ([`Geometry`]), the split moved onto segment boundaries where that
//! costs little ([`snap`]), each share's own segmentation (whole segments, plus a partial piece
//! of a segment that a share boundary cuts: [`ShareSegs`]), the shares launched with their
//! scratch variables, and one partial per segment combined on the host in device order
//! ([`SegTotals`], written by [`MultiQueue::write_segments`]). design/scaleout.md, "Segmented
//! reductions across devices".

use super::combine::{Combiner, Partial, PartialKind};
use super::kernel::MultiKernel;
use super::share::{zeros, ShareReport};
use super::split::{share_form, units_of, Split};
use super::{value_from, MultiQueue};
use crate::api::dynbuf::DynBuffer;
use crate::api::queue::Queue;
use crate::api::reduction::{SegSpec, Target};
use crate::api::{
    reduction, reduction_argmax, reduction_argmin, Axis, Form, Options, Reduction, Reductions,
    Segments,
};
use crate::error::{Error, Result};
use crate::ops::Operator;
use crate::plan::Plan;
use crate::runtime::buffer::Buffer;
use crate::types::Value;
use std::time::Instant;

/// The segments of a launch over its whole index space (every share's, every rank's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Geometry {
    /// Segment `k` is the linear indices `k·len .. (k+1)·len` (uniform segments; the rows of
    /// `Axis::Last`; a 1-D axis reduction is one segment of all `n`).
    Uniform { len: u64, segments: u64 },
    /// CSR offsets: segment `k` is `off[k] .. off[k+1]`.
    Offsets(Vec<u64>),
    /// `Axis::First`: segment `j` holds every linear index `≡ j (mod cols)`.
    Columns { cols: u64 },
}

impl Geometry {
    /// The number of segments (results per variable).
    pub(crate) fn segments(&self) -> u64 {
        match self {
            Geometry::Uniform { segments, .. } => *segments,
            Geometry::Offsets(off) => off.len() as u64 - 1,
            Geometry::Columns { cols } => *cols,
        }
    }

    /// The index within its segment of global linear index `g` of segment `k`
    /// (`index_in_segment`): as the kernels compute it (`CLR_INSEG`).
    fn in_segment(&self, k: u64, g: u64) -> u64 {
        match self {
            Geometry::Uniform { len, .. } => g - k * len,
            Geometry::Offsets(off) => g - off[k as usize],
            Geometry::Columns { cols } => (g - k) / cols,
        }
    }

    /// The segment boundaries around linear index `x`: `(x, x)` where `x` is one (or lies
    /// outside every segment), else the start and end of the segment that holds it; `None`
    /// for columns, which every boundary cuts.
    fn around(&self, x: u64) -> Option<(u64, u64)> {
        match self {
            Geometry::Uniform { len, .. } => {
                let lo = x / len * len;
                Some(if lo == x { (x, x) } else { (lo, lo + len) })
            }
            Geometry::Offsets(off) => {
                let (first, last) = (off[0], off[off.len() - 1]);
                if x <= first || x >= last {
                    return Some((x, x));
                }
                let p = off.partition_point(|&o| o <= x);
                Some(if off[p - 1] == x {
                    (x, x)
                } else {
                    (off[p - 1], off[p])
                })
            }
            Geometry::Columns { .. } => None,
        }
    }

    /// The segments of the share of global linear indices `a..b` (`a < b`) and how the share
    /// runs them; `None` when the share holds no index of any segment (nothing to run).
    pub(crate) fn share(&self, spec: &SegSpec, a: u64, b: u64) -> Option<ShareSegs> {
        match self {
            Geometry::Uniform { len, .. } => {
                let (k0, k1) = (a / len, b.div_ceil(*len));
                let spec = match spec {
                    // An axis reduction keeps its axis (the plan one device would pick): a share
                    // of a 2-D or 3-D range holds whole rows, and a 1-D range's one segment is
                    // the share's one segment.
                    SegSpec::Axis(_) => spec.clone(),
                    _ if a.is_multiple_of(*len) && b.is_multiple_of(*len) => SegSpec::Uniform(*len),
                    _ => {
                        return Some(ShareSegs {
                            first: k0,
                            table: Some((k0..=k1).map(|k| (k * len).clamp(a, b) - a).collect()),
                            spec: None,
                            count: k1 - k0,
                        })
                    }
                };
                Some(ShareSegs {
                    first: k0,
                    count: k1 - k0,
                    table: None,
                    spec: Some(spec),
                })
            }
            Geometry::Offsets(off) => {
                let r = off.len() - 1;
                let k0 = off[1..].partition_point(|&o| o <= a);
                let k1 = off[..r].partition_point(|&o| o < b);
                (k1 > k0).then(|| ShareSegs {
                    first: k0 as u64,
                    count: (k1 - k0) as u64,
                    table: Some(off[k0..=k1].iter().map(|&o| o.clamp(a, b) - a).collect()),
                    spec: None,
                })
            }
            Geometry::Columns { cols } => Some(ShareSegs {
                first: 0,
                count: *cols,
                table: None,
                spec: Some(spec.clone()),
            }),
        }
    }
}

/// The segments a share runs: results `first .. first + count` of the whole launch.
#[derive(Clone)]
pub(crate) struct ShareSegs {
    pub(crate) first: u64,
    pub(crate) count: u64,
    /// The share's own CSR offsets (relative to its first index), where it cuts a segment or
    /// the launch has offsets; `None`: `spec`.
    pub(crate) table: Option<Vec<u64>>,
    pub(crate) spec: Option<SegSpec>,
}

impl ShareSegs {
    /// Whether piece `j` of the share holds no index (an empty CSR segment, or one the share
    /// only touches at its edge): its partial is not combined.
    fn empty_piece(&self, j: usize) -> bool {
        self.table.as_ref().is_some_and(|t| t[j] == t[j + 1])
    }
}

/// Whether any variable of a launch is segmented.
pub(crate) fn is_segmented(reds: &[Reduction]) -> bool {
    reds.iter().any(|r| r.seg.is_some())
}

fn bad(name: &str, problem: String) -> Error {
    Error::BadSegments {
        name: name.to_string(),
        problem,
    }
}

/// The segmentation every variable shares, checked as a segmented launch on one device checks
/// it (one segmentation for all, no scalar variable beside them), and the kinds of variable a
/// split can combine per segment.
fn common_spec(reds: &[Reduction], combiners: &[Combiner]) -> Result<SegSpec> {
    let spec = reds[0].seg.clone().ok_or_else(|| Error::BadArgument {
        name: "reductions".into(),
        problem: "a scalar variable cannot share a launch with segmented ones".into(),
    })?;
    for (k, (r, c)) in reds.iter().zip(combiners).enumerate() {
        let name = r.name.clone().unwrap_or_else(|| format!("variable {k}"));
        match &r.seg {
            Some(s) if same(s, &spec) => {}
            _ => {
                return Err(Error::BadArgument {
                    name,
                    problem: "every variable of a segmented launch needs the same segmentation"
                        .into(),
                })
            }
        }
        if c.kind() == PartialKind::Flagged {
            return Err(Error::Unsupported {
                what: format!("a segmented {} ({name}) split across devices", r.op),
                missing:
                    "a per-segment flag (identity-less ops) from each share; run it on one device"
                        .into(),
                device: "the multi-device queue".into(),
            });
        }
    }
    Ok(spec)
}

fn same(a: &SegSpec, b: &SegSpec) -> bool {
    match (a, b) {
        (SegSpec::Uniform(x), SegSpec::Uniform(y)) | (SegSpec::Span(x), SegSpec::Span(y)) => x == y,
        (SegSpec::Offsets(x), SegSpec::Offsets(y)) => std::sync::Arc::ptr_eq(&x.mem, &y.mem),
        (SegSpec::Axis(x), SegSpec::Axis(y)) => x == y,
        _ => false,
    }
}

impl MultiQueue {
    /// The segments of a launch whose whole index space has `extents` (the global range: for
    /// an MPI rank, every rank's rows together) and `n` linear indices; CSR offsets are read
    /// from their device and checked (ascending, within `n`).
    pub(crate) fn geometry(
        &self,
        name: &str,
        spec: &SegSpec,
        extents: &[u64],
        n: u64,
    ) -> Result<Geometry> {
        let uniform = |len: u64| {
            if len == 0 {
                return Err(bad(name, "segment length 0".into()));
            }
            if !n.is_multiple_of(len) {
                return Err(bad(
                    name,
                    format!(
                        "n = {n} is not a multiple of the segment length {len} ({} whole segments and {} left over)",
                        n / len,
                        n % len
                    ),
                ));
            }
            Ok(Geometry::Uniform {
                len,
                segments: n / len,
            })
        };
        match spec {
            SegSpec::Uniform(c) | SegSpec::Span(c) => uniform(*c),
            SegSpec::Axis(_) if extents.len() == 1 => Ok(Geometry::Uniform {
                len: n.max(1),
                segments: 1,
            }),
            // Rows of length 0: every segment empty.
            SegSpec::Axis(Axis::Last) if extents[extents.len() - 1] == 0 => {
                Ok(Geometry::Offsets(vec![
                    0;
                    extents[..extents.len() - 1].iter().product::<u64>()
                        as usize
                        + 1
                ]))
            }
            SegSpec::Axis(Axis::Last) => uniform(extents[extents.len() - 1]),
            SegSpec::Axis(Axis::First) => Ok(Geometry::Columns {
                cols: extents[1..].iter().product(),
            }),
            SegSpec::Offsets(t) => self.read_offsets(name, t, n),
        }
    }

    fn read_offsets(&self, name: &str, t: &Target, n: u64) -> Result<Geometry> {
        let off = self.home(t)?.read_checked_offsets(name, t, n)?;
        Ok(Geometry::Offsets(off))
    }
}

/// `split` (units of `per` linear indices, the first at global index `base`) with each
/// boundary moved to the nearest segment boundary when that moves it by at most 1/16 of an
/// even share: whole segments per device where the segments are short, a segment cut (and
/// combined on the host) where it is long. Columns are cut by every boundary and stay as
/// they are.
pub(crate) fn snap(split: &Split, per: u64, base: u64, geo: &Geometry) -> Split {
    let total = split.total();
    let live = split.counts().iter().filter(|&&c| c > 0).count().max(1) as u64;
    let tol = (total / (16 * live)).max(1);
    let mut bounds: Vec<u64> = split.offsets().into_iter().skip(1).collect();
    let mut prev = 0;
    for u in bounds.iter_mut() {
        let x = base + *u * per;
        if let Some((lo, hi)) = geo.around(x) {
            let unit =
                |g: u64| (g >= base && (g - base).is_multiple_of(per)).then(|| (g - base) / per);
            let best = [unit(lo), unit(hi)]
                .into_iter()
                .flatten()
                .filter(|&c| c <= total && c.abs_diff(*u) <= tol)
                .min_by_key(|&c| c.abs_diff(*u));
            if let Some(c) = best {
                *u = c;
            }
        }
        *u = (*u).max(prev).min(total);
        prev = *u;
    }
    bounds.push(total);
    let mut counts = Vec::with_capacity(bounds.len());
    let mut at = 0;
    for b in bounds {
        counts.push(b - at);
        at = b;
    }
    Split::from_counts(&counts)
}

/// One partial per segment of a variable: `None` where no share ran any index of it.
pub(crate) type SegTotals = Vec<Option<Partial>>;

/// A share's scratch variables: results (and argmin/argmax indices) of its segments, and its
/// CSR offsets when it has its own.
struct SegScratch {
    res: DynBuffer,
    index: Option<Buffer<u64>>,
    /// An exact sum's normalized limbs per segment (raw mode, decision 55).
    limbs: Option<Buffer<i64>>,
}

/// The share's reduction of user variable `r` (segments `s`) into scratch buffers on `q`; the
/// offsets buffer `table` when the share has its own.
fn share_reduction(
    q: &Queue,
    (r, kind): (&Reduction, PartialKind),
    s: &ShareSegs,
    table: Option<&Buffer<u64>>,
) -> Result<(Reduction, SegScratch)> {
    let res = DynBuffer::upload(q, &zeros(r.target.ty, s.count as usize))?;
    let mut index = None;
    let red = match r.op {
        Operator::ArgMin | Operator::ArgMax => {
            let ix = q.buffer_from(&vec![u64::MAX; s.count as usize])?;
            let red = if r.op == Operator::ArgMin {
                reduction_argmin(&res, &ix)
            } else {
                reduction_argmax(&res, &ix)
            };
            index = Some(ix);
            red
        }
        _ => reduction(&res, r.op.clone()),
    };
    let mut red = red.initialize_to_identity();
    red.name = r.name.clone();
    // An exact sum hands back each segment's superaccumulator (its limbs, normalized), which
    // the host merges exactly across shares and rounds once.
    let mut limbs = None;
    if kind == PartialKind::Exact {
        let l = crate::exact::Format::for_type(r.target.ty)?.limbs();
        let b = q.buffer_from(&vec![0i64; l * s.count as usize])?;
        red = red.raw_into(&b);
        limbs = Some(b);
    }
    red = match (table, &s.spec) {
        (Some(t), _) => red.segments(Segments::offsets(t)),
        (None, Some(spec)) => {
            red.seg = Some(spec.clone());
            red
        }
        (None, None) => unreachable!("a share has a table or a segmentation"),
    };
    Ok((red, SegScratch { res, index, limbs }))
}

/// A share of a segmented launch, enqueued.
struct SegLaunched {
    k: usize,
    ev: crate::ReduceEvent,
    scratch: Vec<SegScratch>,
    segs: ShareSegs,
    /// Global linear index of the share's first index.
    first: u64,
    indices: u64,
    t0: Instant,
    _table: Option<Buffer<u64>>,
}

/// What a segmented launch runs: its variables' combiners, their common segmentation and the
/// segments of its whole index space.
pub(crate) struct SegLaunch {
    pub(crate) combiners: Vec<Combiner>,
    pub(crate) spec: SegSpec,
    pub(crate) geo: Geometry,
}

impl MultiQueue {
    /// Checks a segmented launch of `reds` whose whole index space (every rank's) has `extents`
    /// and `n` indices, and finds its segments.
    pub(crate) fn seg_launch(
        &self,
        reds: &[Reduction],
        extents: &[u64],
        n: u64,
        options: Options,
    ) -> Result<SegLaunch> {
        let combiners = super::combiners(reds, options)?;
        let spec = common_spec(reds, &combiners)?;
        let name = reds[0].name.clone().unwrap_or_else(|| "sum".into());
        let geo = self.geometry(&name, &spec, extents, n)?;
        for (k, r) in reds.iter().enumerate() {
            self.home(&r.target)?;
            let need = geo.segments() as usize;
            for (what, t) in std::iter::once(("", &r.target))
                .chain(r.index.iter().map(|t| (" (index buffer)", t)))
            {
                self.home(t)?;
                if t.len < need {
                    return Err(Error::BufferTooShort {
                        name: format!(
                            "{}{what}",
                            r.name.clone().unwrap_or_else(|| format!("variable {k}"))
                        ),
                        len: t.len,
                        need,
                    });
                }
            }
        }
        Ok(SegLaunch {
            combiners,
            spec,
            geo,
        })
    }

    /// The segments each share of `split` runs (`None`: no share, or nothing to run), the
    /// first share's first index at global `base`.
    fn share_segs(
        form: &Form,
        split: &Split,
        base: u64,
        l: &SegLaunch,
    ) -> Result<Vec<Option<ShareSegs>>> {
        let (_, per) = units_of(form)?;
        Ok(split
            .offsets()
            .iter()
            .zip(split.counts())
            .map(|(&o, &c)| {
                let a = base + o * per;
                (c > 0)
                    .then(|| l.geo.share(&l.spec, a, a + c * per))
                    .flatten()
            })
            .collect())
    }

    /// Each device's plan for its share of a segmented launch (`None`: no share).
    pub(crate) fn explain_segments(
        &self,
        form: &Form,
        reds: &[Reduction],
        (split, kernel): (&Split, Option<&MultiKernel>),
        l: &SegLaunch,
        options: Options,
    ) -> Result<Vec<Option<Plan>>> {
        let segs = Self::share_segs(form, split, 0, l)?;
        let (_, per) = units_of(form)?;
        let offsets = split.offsets();
        let mut plans = Vec::new();
        for (k, ((q, s), &c)) in self.queues.iter().zip(segs).zip(split.counts()).enumerate() {
            let Some(s) = s else {
                plans.push(None);
                continue;
            };
            let table = s.table.as_ref().map(|t| q.buffer_from(t)).transpose()?;
            let mut share = Vec::new();
            for (r, c) in reds.iter().zip(&l.combiners) {
                share.push(share_reduction(q, (r, c.kind()), &s, table.as_ref())?.0);
            }
            let (f, share) = (share_form(form, c), Reductions(share));
            plans.push(Some(self.share_plan(
                k,
                f,
                share,
                (kernel, offsets[k] * per),
                options,
            )?));
        }
        Ok(plans)
    }

    /// Runs the shares of a segmented launch (all enqueued and flushed, then read in device
    /// order) and combines their partials per segment, in device order. `base`: the global
    /// linear index of this launch's first index (an MPI rank's offset; 0 otherwise).
    pub(crate) fn run_segment_shares(
        &self,
        form: &Form,
        reds: &[Reduction],
        kernel: &MultiKernel,
        (split, base): (&Split, u64),
        l: &SegLaunch,
        options: Options,
    ) -> Result<(Vec<SegTotals>, Vec<ShareReport>)> {
        form.validate()?;
        let (_, per) = units_of(form)?;
        let segs = Self::share_segs(form, split, base, l)?;
        let offsets = split.offsets();
        let mut launched = Vec::new();
        for (k, s) in segs.into_iter().enumerate() {
            let Some(s) = s else { continue };
            let q = &self.queues[k];
            let t0 = Instant::now();
            let local_first = offsets[k] * per;
            let table = s.table.as_ref().map(|t| q.buffer_from(t)).transpose()?;
            let mut scratch = Vec::with_capacity(reds.len());
            let mut share = Vec::with_capacity(reds.len());
            for (r, c) in reds.iter().zip(&l.combiners) {
                let (red, sc) = share_reduction(q, (r, c.kind()), &s, table.as_ref())?;
                share.push(red);
                scratch.push(sc);
            }
            let c = split.counts()[k];
            let ev = q.parallel_for_reduce_with(
                share_form(form, c),
                Reductions(share),
                kernel.share(k, local_first),
                options,
            )?;
            q.flush()?;
            launched.push(SegLaunched {
                k,
                ev,
                scratch,
                segs: s,
                first: base + local_first,
                indices: c * per,
                t0,
                _table: table,
            });
        }
        let segments = l.geo.segments() as usize;
        let mut totals: Vec<SegTotals> = vec![vec![None; segments]; reds.len()];
        let mut reports = Vec::new();
        for s in launched {
            let q = &self.queues[s.k];
            s.ev.wait()?;
            for (((r, c), sc), t) in reds
                .iter()
                .zip(&l.combiners)
                .zip(&s.scratch)
                .zip(&mut totals)
            {
                let vals = sc.res.to_values()?;
                let ix = sc.index.as_ref().map(|b| b.to_vec()).transpose()?;
                let limbs = sc.limbs.as_ref().map(|b| b.to_vec()).transpose()?;
                let format = match &limbs {
                    Some(_) => Some(crate::exact::Format::for_type(r.target.ty)?),
                    None => None,
                };
                for (j, v) in vals.into_iter().enumerate() {
                    if s.segs.empty_piece(j) {
                        continue;
                    }
                    let seg = s.segs.first + j as u64;
                    let p = match (&ix, &limbs) {
                        (None, Some(limbs)) => {
                            let f = format.expect("the format of an exact sum");
                            let l = f.limbs();
                            Partial::Exact(crate::exact::Superacc::from_limbs(
                                f,
                                &limbs[j * l..(j + 1) * l],
                            )?)
                        }
                        (None, None) => Partial::Value(v),
                        (Some(ix), _) => Partial::Arg(
                            v,
                            match ix[j] {
                                u64::MAX => u64::MAX,
                                i if r.index_in_segment => l.geo.in_segment(seg, i + s.first),
                                i => i + s.first,
                            },
                        ),
                    };
                    let slot = &mut t[seg as usize];
                    *slot = Some(match slot.take() {
                        None => p,
                        Some(acc) => c.combine(&acc, &p)?,
                    });
                }
            }
            reports.push(ShareReport {
                device: q.device().label(),
                units: split.counts()[s.k],
                indices: s.indices,
                first: s.first,
                plan: s.ev.plan().map(|p| p.summary()),
                wall_ns: s.t0.elapsed().as_nanos() as u64,
                device_ns: if q.is_profiling() {
                    s.ev.device_time_ns().ok()
                } else {
                    None
                },
            });
        }
        Ok((totals, reports))
    }

    /// The initial values of the first `segments` results of variable `r` (and its
    /// argmin/argmax indices; `u64::MAX` without).
    pub(crate) fn seg_initial(&self, r: &Reduction, segments: usize) -> Result<Vec<(Value, u64)>> {
        let (ty, size) = (r.target.ty, r.target.ty.size());
        let mut bytes = vec![0u8; segments * size];
        self.home(&r.target)?
            .read_bytes(&r.target.mem, 0, &mut bytes)?;
        let mut ix = vec![u64::MAX; segments];
        if let Some(t) = &r.index {
            let mut b = vec![0u8; segments * 8];
            self.home(t)?.read_bytes(&t.mem, 0, &mut b)?;
            for (i, c) in ix.iter_mut().zip(b.chunks_exact(8)) {
                *i = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            }
        }
        bytes
            .chunks(size)
            .zip(ix)
            .map(|(b, i)| Ok((value_from(ty, b)?, i)))
            .collect()
    }

    /// Writes the results of segmented variable `r`: per segment the combined partial with its
    /// initial value (when `use_initial` and not `initialize_to_identity`); a segment without a
    /// partial (no share ran an index of it) gets the identity under
    /// `initialize_to_identity`, else stays as it was. One write per buffer.
    pub(crate) fn write_segments(
        &self,
        r: &Reduction,
        c: &Combiner,
        totals: SegTotals,
        use_initial: bool,
    ) -> Result<()> {
        let segments = totals.len();
        if segments == 0 {
            return Ok(());
        }
        let read = !r.init_to_identity && (use_initial || totals.iter().any(Option::is_none));
        let initial = if read {
            Some(self.seg_initial(r, segments)?)
        } else {
            None
        };
        let size = r.target.ty.size();
        let mut bytes = vec![0u8; segments * size];
        let mut ix = vec![0u8; segments * 8];
        for (k, t) in totals.into_iter().enumerate() {
            let init = initial.as_ref().map(|i| i[k]);
            let (v, i) = match (t, init) {
                (Some(t), init) => {
                    let init = init.filter(|_| use_initial);
                    let (v, i) = c
                        .finish(&t, init)?
                        .expect("ops with an identity always finish");
                    (v, i.unwrap_or(u64::MAX))
                }
                (None, Some(init)) => init,
                (None, None) => {
                    let (v, i) = c
                        .finish(&c.empty()?, None)?
                        .expect("ops with an identity always finish");
                    (v, i.unwrap_or(u64::MAX))
                }
            };
            bytes[k * size..(k + 1) * size].copy_from_slice(&v.to_bytes());
            ix[k * 8..(k + 1) * 8].copy_from_slice(&i.to_le_bytes());
        }
        self.home(&r.target)?
            .write_bytes(&r.target.mem, 0, &bytes)?;
        if let Some(t) = &r.index {
            self.home(t)?.write_bytes(&t.mem, 0, &ix)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_uniform_segments() {
        let g = Geometry::Uniform {
            len: 4,
            segments: 5,
        };
        let spec = SegSpec::Uniform(4);
        // Aligned: whole segments.
        let s = g.share(&spec, 8, 20).unwrap();
        assert_eq!((s.first, s.count, s.table), (2, 3, None));
        // Cut at both ends: its own offsets, the partial pieces first and last.
        let s = g.share(&spec, 6, 13).unwrap();
        assert_eq!((s.first, s.count), (1, 3));
        assert_eq!(s.table.unwrap(), vec![0, 2, 6, 7]);
        // Inside one segment.
        let s = g.share(&spec, 9, 10).unwrap();
        assert_eq!((s.first, s.count, s.table.unwrap()), (2, 1, vec![0, 1]));
    }

    #[test]
    fn shares_of_offsets_skip_what_they_do_not_touch() {
        let g = Geometry::Offsets(vec![2, 2, 5, 5, 9, 12]);
        let spec = SegSpec::Uniform(1); // unused for offsets
        let s = g.share(&spec, 0, 4).unwrap();
        assert_eq!((s.first, s.count), (0, 2));
        assert_eq!(s.table.as_ref().unwrap(), &vec![2, 2, 4]);
        assert!(s.empty_piece(0) && !s.empty_piece(1));
        let s = g.share(&spec, 4, 10).unwrap();
        assert_eq!((s.first, s.count), (1, 4));
        assert_eq!(s.table.unwrap(), vec![0, 1, 1, 5, 6]);
        assert!(g.share(&spec, 0, 2).is_none());
        assert!(g.share(&spec, 12, 14).is_none());
    }

    #[test]
    fn snapping_moves_short_boundaries_only() {
        // Rows of 10 over 1000 elements: a boundary at 503 moves to 500.
        let g = Geometry::Uniform {
            len: 10,
            segments: 100,
        };
        let s = snap(&Split::from_counts(&[503, 497]), 1, 0, &g);
        assert_eq!(s.counts(), &[500, 500]);
        // One segment of all n: nothing within reach, the segment is cut.
        let g = Geometry::Uniform {
            len: 1000,
            segments: 1,
        };
        let s = snap(&Split::from_counts(&[503, 497]), 1, 0, &g);
        assert_eq!(s.counts(), &[503, 497]);
        // Offsets: to the nearer end of the segment holding the boundary; columns stay.
        let g = Geometry::Offsets(vec![0, 490, 507, 1000]);
        let s = snap(&Split::from_counts(&[500, 300, 200]), 1, 0, &g);
        assert_eq!(s.counts(), &[507, 293, 200]);
        let g = Geometry::Columns { cols: 7 };
        let s = snap(&Split::from_counts(&[3, 4]), 7, 0, &g);
        assert_eq!(s.counts(), &[3, 4]);
        // Units of several indices: only boundaries that are unit boundaries.
        let g = Geometry::Uniform {
            len: 6,
            segments: 100,
        };
        let s = snap(&Split::from_counts(&[101, 99]), 3, 0, &g);
        assert_eq!(s.counts(), &[100, 100]);
    }

    #[test]
    fn index_in_segment_as_the_kernels_compute_it() {
        let g = Geometry::Columns { cols: 5 };
        assert_eq!(g.in_segment(3, 23), 4);
        let g = Geometry::Offsets(vec![0, 4, 9]);
        assert_eq!(g.in_segment(1, 6), 2);
    }
}
