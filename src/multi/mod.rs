//! One reduction across several devices of one host: [`MultiQueue`]. Its
//! `parallel_for_reduce` cuts the iteration space into one contiguous share per device
//! ([`Split`]: elements of a range, work-groups of an nd_range), runs each share on its device
//! with that device's own plan (one thread per device), and combines the shares' partial
//! results on the host ([`combine`]): integers, min/max, bitwise and logical ops exactly;
//! argmin/argmax with the lowest global index; custom ops through the host evaluator;
//! identity-less ops skipping empty shares; exact sums by merging the shares'
//! superaccumulators (raw mode, `kernels/var_exact.cl` `Rk_XRAW`), so the result is
//! bit-identical to one device's. design/scaleout.md is the design.
//!
//! Files: `split.rs` (the cut), `calibrate.rs` (measured throughput and the split it gives),
//! `buffer.rs` ([`MultiBuffer`]), `kernel.rs` ([`MultiKernel`]), `share.rs` (one share on its
//! device), `combine.rs` (partials), `segments.rs` (segmented reductions: the split on segment
//! boundaries, each share's segments, one partial per segment), this file (the queue and the
//! launch).

mod buffer;
mod calibrate;
testkit! { mod combine; }
mod kernel;
mod segments;
mod share;
mod split;

pub use buffer::{Layout, MultiBuffer};
pub use calibrate::{DeviceRate, Throughput};
testkit! { use combine::{Combiner, Partial, PartialKind}; }
pub use kernel::MultiKernel;
pub use share::ShareReport;
pub use split::Split;
testkit! { use split::{share_form, units_of}; }

use crate::api::queue::Queue;
use crate::api::{Form, Options, Reduction, Reductions};
use crate::error::{Error, Result};
use crate::plan::{Determinism, Plan};
use crate::types::{Element, Value};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The combined partials of one variable (one per span element); `None`: no share ran.
pub(crate) type Totals = Option<Vec<Partial>>;

/// Several devices of one host as one queue (device order is the order given).
///
/// ```no_run
/// use clreduce::multi::{MultiKernel, MultiQueue};
/// use clreduce::{reduction, Op, Options, Range};
/// # fn main() -> clreduce::Result<()> {
/// let mq = MultiQueue::all()?;                       // every device found
/// let data: Vec<f32> = (0..1_000_000).map(|i| (i % 7) as f32).collect();
/// let x = mq.scatter(&data)?;                        // one share per device, by throughput
/// let sum = mq.queue(0).buffer_from(&[0.0f32])?;     // the variable lives on one device
/// mq.parallel_for_reduce_with(
///     Range::new(data.len() as u64),
///     reduction(&sum, Op::Plus),
///     MultiKernel::new("sum += x[i];").arg("x", &x), // `i` is the index in the share
///     Options::default().exact(),                    // bit-identical to one device
/// )?;
/// assert_eq!(sum.get(0)?, 2_999_997.0);
/// # Ok(()) }
/// ```
///
/// What the body sees in a share: `i` in `0..n` with `n` the share's size, a scattered
/// buffer's part holding exactly the share, `item` and the nd_range ids of the share (a 2-D
/// or 3-D form is cut along its first dimension). Visible global indices are mapped: an
/// argmin/argmax index the body gives as the share's `i` (or any index relative to the share's
/// first) is reported as the global index; [`MultiKernel::offset`] binds the share's first
/// global index for bodies that need it.
#[derive(Clone)]
pub struct MultiQueue {
    queues: Vec<Queue>,
    /// The measured models: plain sums, exact sums (`Determinism::Exact`).
    throughput: Arc<Mutex<[Option<Throughput>; 2]>>,
}

impl std::fmt::Debug for MultiQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.queues).finish()
    }
}

/// A finished multi-device launch: the shares and what the combine cost.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MultiReport {
    /// The split, in units (elements, work-groups or slices).
    pub split: Split,
    /// What each device that ran a share did, in device order.
    pub shares: Vec<ShareReport>,
    /// Host time of combining the partials and writing the variables.
    pub combine_ns: u64,
    /// Host wall time of the whole call.
    pub wall_ns: u64,
}

impl MultiQueue {
    /// A multi-device queue over `queues` (at least one).
    pub fn new(queues: &[Queue]) -> Result<MultiQueue> {
        if queues.is_empty() {
            return Err(Error::BadArgument {
                name: "queues".into(),
                problem: "a multi-device queue needs at least one queue".into(),
            });
        }
        for (k, q) in queues.iter().enumerate() {
            if queues[..k].iter().any(|p| Arc::ptr_eq(&p.inner, &q.inner)) {
                return Err(Error::BadArgument {
                    name: format!("queue {k}"),
                    problem: "the same queue twice".into(),
                });
            }
        }
        Ok(MultiQueue {
            queues: queues.to_vec(),
            throughput: Arc::new(Mutex::new([None, None])),
        })
    }

    /// Every device found (simulators excluded: Oclgrind would dominate any split), one
    /// queue each.
    pub fn all() -> Result<MultiQueue> {
        let queues = crate::devices()?
            .iter()
            .filter(|d| !d.is_simulator())
            .map(Queue::new)
            .collect::<Result<Vec<_>>>()?;
        MultiQueue::new(&queues)
    }

    /// The same devices with the throughput model given instead of measured (for example
    /// from measured-planning data).
    pub fn with_throughput(self, t: Throughput) -> Result<MultiQueue> {
        if t.devices.len() != self.queues.len() {
            return Err(Error::BadArgument {
                name: "throughput".into(),
                problem: format!(
                    "{} devices in the model, {} in the queue",
                    t.devices.len(),
                    self.queues.len()
                ),
            });
        }
        Ok(MultiQueue {
            queues: self.queues,
            throughput: Arc::new(Mutex::new([Some(t.clone()), Some(t)])),
        })
    }

    /// The queues, in device order.
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }
    /// The queue of device `k`.
    pub fn queue(&self, k: usize) -> &Queue {
        &self.queues[k]
    }
    /// The number of devices.
    pub fn len(&self) -> usize {
        self.queues.len()
    }
    /// Never true: a multi-device queue has at least one device.
    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// The throughput model of plain launches: measured once per `MultiQueue` (and its
    /// clones) on first use.
    pub fn throughput(&self) -> Result<Throughput> {
        self.throughput_for(Determinism::Deterministic)
    }

    /// The throughput model for launches of determinism `det`: exact sums have their own
    /// (measured on exact f32 sums), every other launch the plain one.
    pub fn throughput_for(&self, det: Determinism) -> Result<Throughput> {
        let k = (det == Determinism::Exact) as usize;
        let mut t = self.throughput.lock().unwrap_or_else(|p| p.into_inner());
        if t[k].is_none() {
            let d = if k == 1 {
                det
            } else {
                Determinism::Deterministic
            };
            t[k] = Some(calibrate::calibrate(&self.queues, d)?);
        }
        Ok(t[k].clone().expect("set above"))
    }

    /// The split of `units` units of `indices_per_unit` indices each, by measured throughput
    /// (of plain launches; [`split_with`](Self::split_with) for exact sums).
    pub fn split(&self, units: u64, indices_per_unit: u64) -> Result<Split> {
        self.split_with(units, indices_per_unit, Determinism::Deterministic)
    }

    /// The split for launches of determinism `det`.
    pub fn split_with(&self, units: u64, indices_per_unit: u64, det: Determinism) -> Result<Split> {
        if self.queues.len() == 1 {
            return Ok(Split::from_counts(&[units]));
        }
        let (w, _) = self
            .throughput_for(det)?
            .weights(units * indices_per_unit.max(1));
        Split::proportional(units, &w)
    }

    /// Scatters a host slice (one element per index of a 1-D range): each device gets its share
    /// of the split by throughput.
    pub fn scatter<T: Element>(&self, data: &[T]) -> Result<MultiBuffer<T>> {
        let split = self.split(data.len() as u64, 1)?;
        self.scatter_with(data, &split, 1)
    }

    /// Scatters a host slice by an explicit split of units of `per_unit` elements each.
    pub fn scatter_with<T: Element>(
        &self,
        data: &[T],
        split: &Split,
        per_unit: u64,
    ) -> Result<MultiBuffer<T>> {
        if split.devices() != self.queues.len() || split.total() * per_unit != data.len() as u64 {
            return Err(Error::BadArgument {
                name: "split".into(),
                problem: format!(
                    "shares {:?} of {per_unit} element(s) over {} device(s) for {} elements",
                    split.counts(),
                    split.devices(),
                    data.len()
                ),
            });
        }
        let mut parts = Vec::with_capacity(self.queues.len());
        for ((q, &o), &c) in self.queues.iter().zip(&split.offsets()).zip(split.counts()) {
            let (a, b) = ((o * per_unit) as usize, ((o + c) * per_unit) as usize);
            parts.push(q.buffer_from(&data[a..b])?);
        }
        MultiBuffer::from_parts(parts, split.clone(), per_unit)
    }

    /// The same host slice on every device.
    pub fn replicate<T: Element>(&self, data: &[T]) -> Result<MultiBuffer<T>> {
        let parts = self
            .queues
            .iter()
            .map(|q| q.buffer_from(data))
            .collect::<Result<Vec<_>>>()?;
        Ok(MultiBuffer::replicated(parts))
    }

    /// `parallel_for_reduce` across the devices, with the strategy from `CLREDUCE_STRATEGY`.
    pub fn parallel_for_reduce(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: MultiKernel,
    ) -> Result<MultiReport> {
        self.parallel_for_reduce_with(range, reductions, kernel, Options::from_env()?)
    }

    /// The split a launch would use: the scattered arguments', else by throughput (of launches
    /// of determinism `det`).
    pub fn split_for(&self, form: &Form, kernel: &MultiKernel, det: Determinism) -> Result<Split> {
        let (units, per_unit) = units_of(form)?;
        match kernel.split(self.queues.len())? {
            Some((s, _)) if s.total() != units => Err(Error::BadArgument {
                name: "kernel".into(),
                problem: format!(
                    "its scattered buffers hold {} units, the range has {units}",
                    s.total()
                ),
            }),
            Some((s, _)) => Ok(s),
            None => self.split_with(units, per_unit, det),
        }
    }

    /// The split of a launch: the scattered arguments', else by throughput, with a segmented
    /// launch's boundaries moved onto segment boundaries where that costs little
    /// (`segments::snap`).
    fn launch_split(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &MultiKernel,
        det: Determinism,
    ) -> Result<Split> {
        if !segments::is_segmented(&reds.0) || kernel.split(self.queues.len())?.is_some() {
            return self.split_for(form, kernel, det);
        }
        self.split_segments(*form, Reductions(reds.0.clone()), det)
    }

    /// The split of a segmented launch whose first index is global index `base` (an MPI
    /// rank's block): the scattered arguments', else by throughput moved onto segment
    /// boundaries.
    pub(crate) fn rank_split(
        &self,
        form: &Form,
        kernel: &MultiKernel,
        l: &segments::SegLaunch,
        det: Determinism,
        base: u64,
    ) -> Result<Split> {
        if kernel.split(self.queues.len())?.is_some() {
            return self.split_for(form, kernel, det);
        }
        let (units, per) = units_of(form)?;
        Ok(segments::snap(
            &self.split_with(units, per, det)?,
            per,
            base,
            &l.geo,
        ))
    }

    /// The split of a segmented launch (`reductions` with [`Segments`](crate::Segments) or an
    /// [`Axis`](crate::Axis)) by measured throughput, each boundary moved to the nearest
    /// segment boundary where that moves it by at most 1/16 of an even share: whole segments
    /// per device where segments are short; a long segment is cut, each side reducing its
    /// piece, and the pieces combine on the host. Scatter the data with it
    /// ([`scatter_with`](Self::scatter_with)) so the launch keeps it. A launch without segments
    /// gets [`split_with`](Self::split_with)'s split.
    pub fn split_segments(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        det: Determinism,
    ) -> Result<Split> {
        let (form, reds) = (range.into(), reductions.into());
        let (units, per) = units_of(&form)?;
        let split = self.split_with(units, per, det)?;
        if !segments::is_segmented(&reds.0) {
            return Ok(split);
        }
        let l = self.seg_launch(
            &reds.0,
            seg_extents(&form, &reds)?,
            form.size(),
            Options {
                determinism: det,
                ..Options::default()
            },
        )?;
        Ok(segments::snap(&split, per, 0, &l.geo))
    }

    /// Each device's plan for its share (devices without a share: `None`), nothing run; the
    /// split is the one the launch would use, and each plan takes the share's body and
    /// buffers, as the launch does (see [`explain_split_launch`](Self::explain_split_launch)).
    pub fn explain(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: &MultiKernel,
        options: Options,
    ) -> Result<(Split, Vec<Option<Plan>>)> {
        let (form, reds) = (range.into(), reductions.into());
        let split = self.launch_split(&form, &reds, kernel, options.determinism)?;
        let plans = self.explain_shares(&form, &reds, &split, Some(kernel), options)?;
        Ok((split, plans))
    }

    /// Each device's plan for its share of `split` (devices without a share: `None`), planned
    /// without a body (as [`Queue::explain`]): where the body's reads at `[i]` change a plan,
    /// [`explain_split_launch`](Self::explain_split_launch) gives the plans a launch runs.
    pub fn explain_split(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        split: &Split,
        options: Options,
    ) -> Result<Vec<Option<Plan>>> {
        let (form, reds) = (range.into(), reductions.into());
        self.explain_shares(&form, &reds, split, None, options)
    }

    /// Each device's plan for its share of `split` with the launch's body and buffers (each
    /// device's share of them, as [`parallel_for_reduce_with`](Self::parallel_for_reduce_with)
    /// binds them): the plans that launch over `split` runs, nothing run. `clreduce explain
    /// --split` plans through it with the body `clreduce reduce --split` runs.
    pub fn explain_split_launch(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: &MultiKernel,
        split: &Split,
        options: Options,
    ) -> Result<Vec<Option<Plan>>> {
        let (form, reds) = (range.into(), reductions.into());
        self.explain_shares(&form, &reds, split, Some(kernel), options)
    }

    /// The shares' plans of [`explain_split`](Self::explain_split) (`kernel` `None`: no body)
    /// and [`explain_split_launch`](Self::explain_split_launch).
    fn explain_shares(
        &self,
        form: &Form,
        reds: &Reductions,
        split: &Split,
        kernel: Option<&MultiKernel>,
        options: Options,
    ) -> Result<Vec<Option<Plan>>> {
        if segments::is_segmented(&reds.0) {
            let l = self.seg_launch(&reds.0, seg_extents(form, reds)?, form.size(), options)?;
            return self.explain_segments(form, &reds.0, (split, kernel), &l, options);
        }
        let (_, per) = units_of(form)?;
        let offsets = split.offsets();
        let mut plans = Vec::new();
        for (k, (q, &c)) in self.queues.iter().zip(split.counts()).enumerate() {
            if c == 0 {
                plans.push(None);
                continue;
            }
            let shares = share_reductions_for_explain(q, reds, options)?;
            let share = share_form(form, c);
            plans.push(Some(self.share_plan(
                k,
                share,
                shares,
                (kernel, offsets[k] * per),
                options,
            )?));
        }
        Ok(plans)
    }

    /// Device `k`'s plan for its share: with the launch's body and the share's buffers where
    /// `kernel` is given (`first`: the share's first global linear index), else without a body.
    pub(crate) fn share_plan(
        &self,
        k: usize,
        share: Form,
        reds: Reductions,
        (kernel, first): (Option<&MultiKernel>, u64),
        options: Options,
    ) -> Result<Plan> {
        let q = &self.queues[k];
        match kernel {
            Some(kernel) => q.explain_launch(share, reds, kernel.share(k, first), options),
            None => q.explain(share, reds, options),
        }
    }

    /// `parallel_for_reduce` across the devices with explicit options. The reductions'
    /// buffers (and argmin/argmax index buffers) must belong to one of this queue's devices;
    /// they receive the combined result (their initial value taken once, unless
    /// `initialize_to_identity`). Blocks until the result is written.
    pub fn parallel_for_reduce_with(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: MultiKernel,
        options: Options,
    ) -> Result<MultiReport> {
        let t0 = Instant::now();
        let (form, reds) = (range.into(), reductions.into());
        let seg = match segments::is_segmented(&reds.0) {
            true => {
                form.validate()?;
                let e = seg_extents(&form, &reds)?;
                Some(self.seg_launch(&reds.0, e, form.size(), options)?)
            }
            false => None,
        };
        let split = match &seg {
            Some(l) => self.rank_split(&form, &kernel, l, options.determinism, 0)?,
            None => self.split_for(&form, &kernel, options.determinism)?,
        };
        if let Some(report) = self.one_device(&form, &reds, &kernel, &split, options)? {
            return Ok(report);
        }
        let t1;
        let shares;
        if let Some(l) = &seg {
            let (totals, s) =
                self.run_segment_shares(&form, &reds.0, &kernel, (&split, 0), l, options)?;
            (t1, shares) = (Instant::now(), s);
            for ((r, c), t) in reds.0.iter().zip(&l.combiners).zip(totals) {
                self.write_segments(r, c, t, true)?;
            }
        } else {
            let (partials, s) = self.run_shares(&form, &reds.0, &kernel, &split, options)?;
            (t1, shares) = (Instant::now(), s);
            let combiners = combiners(&reds.0, options)?;
            for ((r, c), p) in reds.0.iter().zip(&combiners).zip(partials) {
                self.write_var(r, c, p, true)?;
            }
        }
        Ok(MultiReport {
            split,
            shares,
            combine_ns: t1.elapsed().as_nanos() as u64,
            wall_ns: t0.elapsed().as_nanos() as u64,
        })
    }

    /// The fast path of a split with one non-empty share whose device holds every variable:
    /// the launch itself on that device (the first share starts at index 0, so its indices are
    /// global), with nothing to combine. `None` where it does not apply.
    fn one_device(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &MultiKernel,
        split: &Split,
        options: Options,
    ) -> Result<Option<MultiReport>> {
        let mut live = split.counts().iter().enumerate().filter(|(_, &c)| c > 0);
        let (Some((k, &c)), None) = (live.next(), live.next()) else {
            return Ok(None);
        };
        let q = &self.queues[k];
        let id = q.device().index();
        let mine = reds
            .0
            .iter()
            .all(|r| r.target.device == id && r.index.as_ref().is_none_or(|i| i.device == id))
            && reds.0.iter().all(|r| match &r.seg {
                Some(crate::api::reduction::SegSpec::Offsets(t)) => t.device == id,
                _ => true,
            });
        if !mine {
            return Ok(None);
        }
        form.validate()?;
        let t0 = Instant::now();
        let share = share_form(form, c);
        let ev = q.parallel_for_reduce_with(share, reds.0.clone(), kernel.share(k, 0), options)?;
        ev.wait()?;
        let wall_ns = t0.elapsed().as_nanos() as u64;
        let (_, per) = units_of(form)?;
        Ok(Some(MultiReport {
            split: split.clone(),
            shares: vec![ShareReport {
                device: q.device().label(),
                units: c,
                indices: c * per,
                first: 0,
                plan: ev.plan().map(|p| p.summary()),
                wall_ns,
                device_ns: if q.is_profiling() {
                    ev.device_time_ns().ok()
                } else {
                    None
                },
            }],
            combine_ns: 0,
            wall_ns,
        }))
    }

    /// Runs every non-empty share (all enqueued, then read in device order) and combines the partials per
    /// variable element, in device order: `None` for a variable element no share ran.
    pub(crate) fn run_shares(
        &self,
        form: &Form,
        reds: &[Reduction],
        kernel: &MultiKernel,
        split: &Split,
        options: Options,
    ) -> Result<(Vec<Totals>, Vec<ShareReport>)> {
        form.validate()?;
        let (_, per_unit) = units_of(form)?;
        let combiners = combiners(reds, options)?;
        for r in reds {
            self.home(&r.target)?;
            if let Some(ix) = &r.index {
                self.home(ix)?;
            }
        }
        let offsets = split.offsets();
        // Every share is enqueued and flushed before any is waited on, all from this thread:
        // NVIDIA's OpenCL serializes a launch on one GPU behind a blocking read on the other
        // when they come from two threads (two H200s: 761 us for an even split of a 2^30 f32
        // sum that takes 985 us on one, design/bench/2026-11-23-h200x2-scaleout.txt).
        let live: Vec<usize> = (0..self.queues.len())
            .filter(|&k| split.counts()[k] > 0)
            .collect();
        let mut launched = Vec::with_capacity(live.len());
        for &k in &live {
            let (c, first) = (split.counts()[k], offsets[k] * per_unit);
            let l = share::launch_share(
                &self.queues[k],
                share_form(form, c),
                reds,
                &combiners,
                kernel.share(k, first),
                options,
                first,
            )?;
            self.queues[k].flush()?;
            launched.push((k, l));
        }
        let mut results: Vec<Option<Result<_>>> = (0..self.queues.len()).map(|_| None).collect();
        for (k, l) in launched {
            results[k] = Some(share::finish_share(&self.queues[k], l, reds, &combiners));
        }
        let mut totals: Vec<Totals> = vec![None; reds.len()];
        let mut reports = Vec::new();
        for (k, r) in results.into_iter().enumerate() {
            let Some(r) = r else { continue };
            let (parts, mut rep) = r?;
            rep.units = split.counts()[k];
            reports.push(rep);
            for ((t, p), c) in totals.iter_mut().zip(parts).zip(&combiners) {
                *t = Some(match t.take() {
                    None => p,
                    Some(acc) => acc
                        .iter()
                        .zip(&p)
                        .map(|(a, b)| c.combine(a, b))
                        .collect::<Result<_>>()?,
                });
            }
        }
        Ok((totals, reports))
    }

    /// Our queue on a buffer's device (the user's variables must live on one of our devices).
    fn home(&self, t: &crate::api::reduction::Target) -> Result<&Queue> {
        self.queues
            .iter()
            .find(|q| q.device().index() == t.device)
            .ok_or_else(|| Error::ForeignBuffer {
                name: "a reduction variable".into(),
                buffer_device: t.device_label.clone(),
                queue_device: "the multi-device queue's devices".into(),
            })
    }

    /// The initial value of each element of variable `r` (and its argmin/argmax index).
    pub(crate) fn initial(&self, r: &Reduction) -> Result<Vec<(Value, u64)>> {
        let q = self.home(&r.target)?;
        let (ty, size) = (r.target.ty, r.target.ty.size());
        let mut bytes = vec![0u8; r.elems() * size];
        q.read_bytes(&r.target.mem, 0, &mut bytes)?;
        let index0 = match &r.index {
            Some(ix) => {
                let mut b = [0u8; 8];
                self.home(ix)?.read_bytes(&ix.mem, 0, &mut b)?;
                u64::from_le_bytes(b)
            }
            None => u64::MAX,
        };
        bytes
            .chunks(size)
            .map(|b| Ok((value_from(ty, b)?, index0)))
            .collect()
    }

    /// Writes variable `r`: the combined partials with its initial value (when `use_initial`
    /// and not `initialize_to_identity`), or the identity for an empty launch under
    /// `initialize_to_identity`. An identity-less element that combined nothing stays.
    pub(crate) fn write_var(
        &self,
        r: &Reduction,
        c: &Combiner,
        total: Option<Vec<Partial>>,
        use_initial: bool,
    ) -> Result<()> {
        let q = self.home(&r.target)?;
        let size = r.target.ty.size();
        let total = match total {
            Some(t) => t,
            None if r.init_to_identity => vec![c.empty()?; r.elems()],
            None => return Ok(()),
        };
        // The initial value is read only where it takes part, or where an identity-less element
        // that combined nothing keeps it: a blocking read costs tens of microseconds on PoCL.
        let use_initial = use_initial && !r.init_to_identity;
        let initial = if use_initial || c.kind() == PartialKind::Flagged {
            self.initial(r)?
        } else {
            let id = c.empty().ok().and_then(|p| match p {
                Partial::Value(v) | Partial::Arg(v, _) => Some(v),
                _ => None,
            });
            let zero = value_from(r.target.ty, &[0u8; 8])?;
            vec![(id.unwrap_or(zero), u64::MAX); r.elems()]
        };
        let mut bytes: Vec<u8> = initial.iter().flat_map(|(v, _)| v.to_bytes()).collect();
        for (e, (t, &init)) in total.iter().zip(&initial).enumerate() {
            let init = use_initial.then_some(init);
            let Some((v, ix)) = c.finish(t, init)? else {
                continue;
            };
            bytes[e * size..(e + 1) * size].copy_from_slice(&v.to_bytes());
            if let (Some(ixb), Some(i)) = (&r.index, ix) {
                self.home(ixb)?.write_bytes(&ixb.mem, 0, &i.to_le_bytes())?;
            }
        }
        q.write_bytes(&r.target.mem, 0, &bytes)
    }
}

/// The combiners of a launch's variables.
pub(crate) fn combiners(reds: &[Reduction], options: Options) -> Result<Vec<Combiner>> {
    reds.iter()
        .map(|r| Combiner::new(&r.op, r.target.ty, options.determinism))
        .collect()
}

/// A value of type `ty` from its little-endian bytes.
pub(crate) fn value_from(ty: crate::ElemType, b: &[u8]) -> Result<Value> {
    use crate::ElemType as T;
    let arr = |n: usize| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(&b[..n]);
        a
    };
    Ok(match ty {
        T::I32 => Value::I32(i32::from_le_bytes(arr(4)[..4].try_into().expect("4"))),
        T::U32 => Value::U32(u32::from_le_bytes(arr(4)[..4].try_into().expect("4"))),
        T::I64 => Value::I64(i64::from_le_bytes(arr(8))),
        T::U64 => Value::U64(u64::from_le_bytes(arr(8))),
        T::F32 => Value::F32(f32::from_le_bytes(arr(4)[..4].try_into().expect("4"))),
        T::F64 => Value::F64(f64::from_le_bytes(arr(8))),
        T::F16 | T::BF16 => {
            return Err(Error::Unsupported {
                what: format!("an {ty} reduction variable"),
                missing: format!(
                    "{ty} is a storage type in clreduce: reduce it into an f32 variable"
                ),
                device: "host".into(),
            })
        }
    })
}

/// The extents of a segmented launch's range (an nd_range is refused, as on one device).
pub(crate) fn seg_extents<'a>(form: &'a Form, reds: &Reductions) -> Result<&'a [u64]> {
    match form {
        Form::Range(r) => Ok(r.extents()),
        Form::NdRange(_) => Err(Error::BadArgument {
            name: reds.0[0].name.clone().unwrap_or_else(|| "sum".into()),
            problem: "segmented and axis reductions take a Range (clreduce picks the geometry), not an NdRange".into(),
        }),
    }
}

/// The reductions of a share for `explain`: scratch variables on `q` in the share's mode.
fn share_reductions_for_explain(
    q: &Queue,
    reds: &Reductions,
    options: Options,
) -> Result<Reductions> {
    let cs = combiners(&reds.0, options)?;
    let mut out = Vec::new();
    for (r, c) in reds.0.iter().zip(&cs) {
        out.push(share::share_reduction(q, r, c)?.0);
    }
    Ok(Reductions(out))
}
