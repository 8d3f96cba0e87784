//! Segmented and axis reductions: [`Segments`] (uniform lengths or CSR offsets) and [`Axis`]
//! (rows or columns of a 2-D or 3-D range) on a [`Reduction`], and the launch sequence of a
//! segmented `parallel_for_reduce`: check, find the segments (CSR offsets checked by
//! `segment_check.rs`),
//! plan (`plan::plan_segments`), compile kernels/segment.cl, run.
//! design/segments.md.

use super::checks::{
    check_body, check_identities, check_names, check_writers, reducer_names, request,
};
use super::event::ReduceEvent;
use super::kernel::{ArgKind, Kernel};
use super::options::Options;
use super::queue::Queue;
use super::range::Form;
use super::reduction::{Axis, Reduction, Reductions, SegSpec, Target};
use super::run::{copy_regions, restore_regions};
use crate::codegen::{self, ParamKind};
use crate::error::{Error, Result};
use crate::plan::{
    self, CrossAlgo, Determinism, GroupAlgo, Plan, SegmentAlgo, SegmentLayout, SegmentRequest,
    Strategy,
};
use crate::runtime::gate::Gate;
use crate::runtime::health::Fault;
use crate::runtime::launch::{self, Arg, Compiled, Mem};
use opencl3::event::Event;
use std::sync::Arc;

/// `CLREDUCE_SEGMENT_TUNE`, with the options' `Tuning::vec` as `item`'s vector width where
/// the environment leaves it unset.
fn segment_tune(options: &Options) -> Result<plan::SegmentTune> {
    let mut t = plan::SegmentTune::from_env()?;
    t.vec = t
        .vec
        .or(options.tuning.and_then(|u| u.vec).map(|v| v as u64));
    // The exact sums' speculative loop (`Tuning::spec`, CLREDUCE_TUNE=spec=0|1) for exact sums
    // per segment where CLREDUCE_SEGMENT_TUNE=xspec leaves it open (decision 90).
    t.xspec = t.xspec.or(options.tuning.and_then(|u| u.spec));
    Ok(t)
}

/// The widest element (bytes) of the read-only buffers the body reads at exactly `[i]`, where
/// each holds at least `hi` elements (`SegmentRequest::read_bytes`: such reads may be loaded
/// several at once); 0 where there is none or one is shorter (the body may read it at `[i]`
/// under a condition).
fn read_bytes(kernel: &Kernel, hi: u64) -> u64 {
    let mut widest = 0;
    for (name, a) in &kernel.args {
        if let ArgKind::Buffer {
            ty,
            writable: false,
            mem,
            ..
        } = a
        {
            if codegen::reads_at_i(kernel.body(), name) {
                if ((mem.bytes / ty.size()) as u64) < hi {
                    return 0;
                }
                widest = widest.max(ty.size() as u64);
            }
        }
    }
    widest
}

/// Whether a launch is segmented (any of its variables has a segmentation).
pub(super) fn is_segmented(reds: &Reductions) -> bool {
    reds.0.iter().any(|r| r.seg.is_some())
}

/// The segments of a launch, found on the host.
struct Found {
    layout: SegmentLayout,
    segments: u64,
    /// The first index of the first segment and one past the last segment's end (rows for
    /// columns).
    lo: u64,
    hi: u64,
    offsets: Option<Target>,
    /// The longest segment.
    longest: u64,
}

/// A prepared segmented launch.
struct Prepared {
    plan: Arc<Plan>,
    found: Found,
    names: Vec<String>,
    params: Vec<(String, ParamKind)>,
    body: String,
}

impl Queue {
    /// `parallel_for_reduce_with` for a segmented launch.
    pub(super) fn parallel_for_segments(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &Kernel,
        options: Options,
    ) -> Result<ReduceEvent> {
        let prep = self.prepare_segments(form, reds, kernel, options)?;
        let q = &self.inner;
        if prep.found.hi == prep.found.lo || form.size() == 0 {
            // No element in any segment: every segment is empty.
            let mut events = Vec::new();
            for (r, v) in reds.0.iter().zip(&prep.plan.vars) {
                if r.init_to_identity {
                    fill_segments(self, r, v, prep.found.segments as usize, &mut events)?;
                }
            }
            let keep = reds
                .0
                .iter()
                .flat_map(|r| regions(r, 0))
                .map(|(m, _)| m.clone());
            return Ok(ReduceEvent::new(q, events, Some(prep.plan), keep.collect()));
        }
        let compiled = self.compile_segments(&prep)?;
        self.run_segments(&prep, reds, kernel, &compiled, form.size())
    }

    /// The plan of a segmented launch (`Queue::explain`).
    pub(super) fn explain_segments(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &Kernel,
        options: Options,
    ) -> Result<Plan> {
        Ok((*self.prepare_segments(form, reds, kernel, options)?.plan).clone())
    }

    /// The program of a segmented launch (`Queue::explain_source`).
    pub(super) fn explain_source_segments(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &Kernel,
        options: Options,
    ) -> Result<String> {
        let p = self.prepare_segments(form, reds, kernel, options)?;
        let gen = codegen::generate(&p.plan, &self.inner.caps, &p.names, &p.body, &p.params);
        Ok(format!("// build options: {}\n{}", gen.options, gen.source))
    }

    /// Checks a segmented launch, finds its segments and plans it. Nothing is written.
    fn prepare_segments(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &Kernel,
        options: Options,
    ) -> Result<Prepared> {
        let q = &self.inner;
        let names = reducer_names(reds, kernel)?;
        let first = reds.0[0].seg.clone();
        for (name, r) in names.iter().zip(&reds.0) {
            self.check_targets(name, r)?;
            let problem = match (&r.seg, &first) {
                (None, _) => Some("a scalar variable cannot share a launch with segmented ones"),
                (Some(s), Some(f)) if !s.same(f) => {
                    Some("every segmented variable of a launch needs the same segmentation")
                }
                _ if r.span.is_some() => Some("a span reduction cannot be segmented"),
                _ if r.raw.is_some()
                    && !plan::exact_sum(&r.op, r.target.ty, options.determinism) =>
                {
                    Some("raw partials of a segmented launch are for exact sums")
                }
                _ if r.index_in_segment && r.index.is_none() => {
                    Some("index_in_segment is for argmin/argmax")
                }
                _ => None,
            };
            if let Some(p) = problem {
                return Err(bad_argument(name, p));
            }
        }
        let Form::Range(range) = *form else {
            return Err(bad_argument(
                &names[0],
                "segmented and axis reductions take a Range (clreduce picks the geometry), not an NdRange",
            ));
        };
        let spec = first.expect("is_segmented");
        let found = self.find_segments(&names[0], &spec, range.extents(), form.size())?;
        for (name, r) in names.iter().zip(&reds.0) {
            let need = found.segments as usize;
            for (label, t) in std::iter::once((name.clone(), &r.target)).chain(
                r.index
                    .iter()
                    .map(|t| (format!("{name} (index buffer)"), t)),
            ) {
                if (t.len as u64) < found.segments {
                    return Err(Error::BufferTooShort {
                        name: label,
                        len: t.len,
                        need,
                    });
                }
            }
            if let Some(off) = &found.offsets {
                let written = Arc::ptr_eq(&off.mem, &r.target.mem)
                    || r.index
                        .as_ref()
                        .is_some_and(|t| Arc::ptr_eq(&off.mem, &t.mem));
                if written {
                    return Err(bad_argument(
                        name,
                        "writes the offsets buffer of its own segments",
                    ));
                }
            }
        }
        let params = self.kernel_params(kernel)?;
        check_writers(&names, reds, kernel)?;
        if let Some(off) = &found.offsets {
            check_offsets_not_written(off, kernel)?;
        }
        check_names(&names, &params)?;
        // Exact sums per segment (decision 55): their reducers are combined into only.
        let det = match options.determinism {
            Determinism::Exact => Determinism::Exact,
            _ => Determinism::Deterministic,
        };
        let body = check_body(&names, reds, kernel.body(), &params, det)?;
        check_identities(reds)?;
        // The ordinary plan of the same variables gives their accumulators; the segment step
        // turns it into the segmented plan.
        let base_options = Options {
            // The work-group step is the local-memory tree unless one is forced: on the H200
            // the device's own step (warp shuffles) made tiles 1.28x slower on one row of 2^28
            // (342 against 267 us) and slower on 5 of the 6 other shapes, and `group` no
            // faster (design/bench/2026-11-24-h200-session8.txt); partials always finish in a
            // pass of their own.
            strategy: Strategy {
                group: options.strategy.group.or(Some(GroupAlgo::Tree)),
                cross: Some(CrossAlgo::ExtraPass),
            },
            determinism: Determinism::Deterministic,
            tuning: None,
            ..options
        };
        let base_req = request(form, reds, base_options, !kernel.writes(), false);
        let mut base = plan::plan(&q.caps, &base_req)?;
        if options.strategy.group.is_none() {
            for v in &mut base.vars {
                v.group_reason =
                    "the local-memory tree, the segmented plans' default (faster than \
                                  the device's own step on the H200)"
                        .into();
            }
        }
        // Exact sums become accumulators that carry their own superaccumulator.
        plan::segment_exact(
            &q.caps,
            &mut base,
            det,
            options.strategy.group,
            found.longest,
        )?;
        let sreq = SegmentRequest {
            layout: found.layout,
            segments: found.segments,
            elements: found.hi - found.lo,
            force: options.segment,
            // Expert geometry for tuning runs, read here like CLREDUCE_EXTRA_OPTIONS at build.
            tune: segment_tune(&options)?,
            longest: found.longest,
            read_bytes: read_bytes(kernel, found.hi),
        };
        let sreq = match found.layout {
            SegmentLayout::Columns { rows, cols } => SegmentRequest {
                elements: rows * cols,
                ..sreq
            },
            _ => sreq,
        };
        // The device's measurement (`clreduce tune`'s segmented entries), on unmasked queues
        // unless the options leave it out, as for the ordinary launch.
        let measured = (!options.ignore_tune_cache && q.mask.is_empty())
            .then(|| crate::tune_cache::table_for(q.device.index(), &q.caps))
            .flatten()
            .and_then(|t| {
                let class = plan::LaunchClass::of(&base_req)?;
                let mean = sreq.elements / sreq.segments.max(1);
                let (algo, e) = t.segment_lookup(&class, &sreq.layout, mean)?;
                Some((algo, e.reason()))
            });
        let mut plan = plan::plan_segments(&q.caps, base, &sreq, measured)?;
        // Exact sums per segment: the speculative loop where it applies (decision 90).
        plan::segment_exact::speculate(&q.caps, &mut plan, !kernel.writes(), sreq.tune.xspec);
        // Raw mode (a multi-device share, decision 55): each segment's normalized limbs.
        for (v, r) in plan.vars.iter_mut().zip(&reds.0) {
            if let (Some(raw), Some(e)) = (&r.raw, v.exact) {
                let need = found.segments as usize * e.limbs();
                if raw.len < need {
                    return Err(Error::BufferTooShort {
                        name: "raw partial buffer".into(),
                        len: raw.len,
                        need,
                    });
                }
                v.raw = true;
            }
        }
        if let Some(sp) = plan.segment.as_mut() {
            sp.index_in_segment = reds.0.iter().map(|r| r.index_in_segment).collect();
            if let SegSpec::Span(c) = &spec {
                sp.span_idiom = true;
                sp.reason = format!(
                    "span idiom: every subscript is i / {c} with n = {} x {c}, so a uniform segmented reduction; {}",
                    found.segments, sp.reason
                );
            }
        }
        tracing::debug!(plan = %plan.summary(), segment = ?plan.segment.as_ref().map(|s| s.algo), device = %q.device.label(), "planned segments");
        Ok(Prepared {
            plan: Arc::new(plan),
            found,
            names,
            params,
            body,
        })
    }

    /// The layout and count of the segments; CSR offsets are read and checked here.
    fn find_segments(&self, name: &str, spec: &SegSpec, extents: &[u64], n: u64) -> Result<Found> {
        let bad = |problem: String| Error::BadSegments {
            name: name.to_string(),
            problem,
        };
        let product = extents.iter().try_fold(1u64, |a, &e| a.checked_mul(e));
        let n = match product {
            Some(p) => p,
            None => {
                return Err(bad(format!(
                    "the range {extents:?} has more than 2^64 elements (n = {n} after wrapping)"
                )))
            }
        };
        let uniform = |len: u64, segments: u64| Found {
            layout: SegmentLayout::Uniform { len },
            segments,
            lo: 0,
            hi: n,
            offsets: None,
            longest: len,
        };
        Ok(match spec {
            SegSpec::Uniform(0) | SegSpec::Span(0) => return Err(bad("segment length 0".into())),
            SegSpec::Uniform(c) | SegSpec::Span(c) if !n.is_multiple_of(*c) => {
                return Err(bad(format!(
                    "n = {n} is not a multiple of the segment length {c} ({} whole segments and {} left over)",
                    n / c,
                    n % c
                )))
            }
            SegSpec::Uniform(c) | SegSpec::Span(c) => uniform(*c, n / c),
            SegSpec::Axis(axis) => match (axis, extents) {
                (_, [n1]) => uniform((*n1).max(1), 1),
                (Axis::Last, [rest @ .., last]) => {
                    let segments = rest.iter().product();
                    if *last == 0 {
                        Found {
                            hi: 0,
                            ..uniform(1, segments)
                        }
                    } else {
                        uniform(*last, segments)
                    }
                }
                (Axis::First, [rows, rest @ ..]) => {
                    let cols: u64 = rest.iter().product();
                    Found {
                        layout: SegmentLayout::Columns { rows: *rows, cols },
                        segments: cols,
                        lo: 0,
                        hi: if cols == 0 { 0 } else { *rows },
                        offsets: None,
                        longest: *rows,
                    }
                }
                (_, []) => return Err(bad("a range of rank 0".into())),
            },
            SegSpec::Offsets(t) => {
                if t.device != self.inner.device.index() {
                    return Err(Error::ForeignBuffer {
                        name: format!("{name} (offsets)"),
                        buffer_device: t.device_label.clone(),
                        queue_device: self.inner.device.label(),
                    });
                }
                let f = self.check_offsets(name, t, n)?;
                Found {
                    layout: SegmentLayout::Offsets,
                    segments: (t.len - 1) as u64,
                    lo: f.lo,
                    hi: f.hi,
                    offsets: Some(t.clone()),
                    longest: f.longest,
                }
            }
        })
    }

    /// Builds (or finds in the queue's memo) the program of a segmented plan.
    fn compile_segments(&self, prep: &Prepared) -> Result<Arc<Compiled>> {
        self.compile_program(&prep.plan, &prep.names, &prep.params, &prep.body)
    }

    /// Enqueues a segmented launch: partials, backup, the main kernel and the finishing pass;
    /// a failed enqueue puts every result back.
    fn run_segments(
        &self,
        prep: &Prepared,
        reds: &Reductions,
        kernel: &Kernel,
        program: &Compiled,
        n: u64,
    ) -> Result<ReduceEvent> {
        let q = &self.inner;
        let plan = &prep.plan;
        let sp = plan.segment.as_ref().expect("a segmented plan");
        let f = &prep.found;
        let label = q.device.label();
        // Partial slots per variable: two per tile, or one per (row chunk, column).
        let slots = match (sp.algo, f.layout) {
            (SegmentAlgo::Tiles | SegmentAlgo::Chunks, _)
            | (SegmentAlgo::Staged | SegmentAlgo::Runs, SegmentLayout::Offsets) => {
                2 * (f.hi - f.lo).div_ceil(sp.tile)
            }
            // Two per tile of items (elements and segment ends).
            (SegmentAlgo::Merge, _) => 2 * (f.hi - f.lo + f.segments).div_ceil(sp.tile),
            (
                SegmentAlgo::Columns | SegmentAlgo::Blocks | SegmentAlgo::Panels,
                SegmentLayout::Columns { rows, cols },
            ) if plan.passes > 1 => rows.div_ceil(sp.tile) * cols,
            (SegmentAlgo::Stripes, _) => plan.groups * f.segments,
            // One per (segment, work-group of the segment).
            (SegmentAlgo::Group, _) if plan.passes > 1 => f.segments * sp.tile,
            _ => 0,
        };
        let mut partials = Vec::new();
        for v in &plan.vars {
            let bytes = (slots as usize).max(1) * v.acc_bytes;
            partials.push(Arc::new(launch::create_mem(
                &q.context, bytes, None, &label,
            )?));
        }
        let regions: Vec<(&Arc<Mem>, usize)> = reds
            .0
            .iter()
            .flat_map(|r| regions(r, f.segments as usize))
            .collect();
        // With two passes the first already writes some segments before the second is
        // enqueued: the first waits behind a gate opened once both are enqueued (nothing runs
        // if the second fails), or, where there is no gate (a serialized device), every result
        // is backed up first, the copies the launch's first commands (its device time spans
        // them). A test's fault after the main kernel (`Queue::__inject_fault`) takes that path.
        let fault = q
            .queue
            .health
            .take_fault(|f| matches!(f, Fault::AfterMainKernel(_)));
        let gate = match plan.passes > 1 || fault.is_some() {
            true => Gate::new(&q.context)?,
            false => None,
        };
        let mut events: Vec<Event> = Vec::new();
        let backup = if (plan.passes > 1 || fault.is_some()) && gate.is_none() {
            let bytes = regions.iter().map(|(_, b)| b.next_multiple_of(8)).sum();
            let b = launch::create_mem(&q.context, bytes, None, &label)?;
            events = copy_regions(q, &regions, &b, true)?;
            Some(b)
        } else {
            None
        };
        let mut args: Vec<Arg> = vec![Arg::Bytes(n.to_le_bytes().to_vec())];
        for (r, part) in reds.0.iter().zip(&partials) {
            args.push(Arg::Mem(&r.target.mem));
            // The index buffer of argmin/argmax, a raw share's limbs, or unused.
            args.push(Arg::Mem(match (&r.index, &r.raw) {
                (Some(t), _) | (None, Some(t)) => &t.mem,
                (None, None) => part,
            }));
            args.push(Arg::Mem(part));
        }
        args.push(Arg::Mem(
            f.offsets.as_ref().map_or(&*partials[0], |t| &*t.mem),
        ));
        let c = match f.layout {
            SegmentLayout::Uniform { len } => len,
            SegmentLayout::Columns { cols, .. } => cols,
            SegmentLayout::Offsets => 0,
        };
        for v in [f.segments, c, f.lo, f.hi, sp.tile.max(1), sp.short] {
            args.push(Arg::Bytes(v.to_le_bytes().to_vec()));
        }
        for (_, a) in &kernel.args {
            match a {
                ArgKind::Buffer { mem, .. } => args.push(Arg::Mem(mem)),
                ArgKind::Scalar(v) => args.push(Arg::Bytes(v.to_bytes())),
            }
        }
        let local = plan.local;
        let enqueued = (|| -> Result<()> {
            let global = plan.groups as usize * local;
            let held: Vec<&Event> = gate.iter().map(Gate::event).collect();
            events.push(launch::enqueue_kernel(
                &q.queue,
                program,
                "clr_main",
                &args,
                &[global],
                &[local],
                &held,
            )?);
            if let Some(Fault::AfterMainKernel(code)) = fault {
                return Err(q.queue.failed("clEnqueueNDRangeKernel", code));
            }
            if plan.passes > 1 {
                let groups = match sp.algo {
                    // A work-item per column.
                    SegmentAlgo::Columns | SegmentAlgo::Blocks => {
                        f.segments.div_ceil(local as u64).min(1 << 16)
                    }
                    // A work-item per panel.
                    SegmentAlgo::Panels => f
                        .segments
                        .div_ceil(sp.per_item.max(1))
                        .div_ceil(local as u64)
                        .min(1 << 16),
                    // A work-group per column or per split segment.
                    SegmentAlgo::Stripes | SegmentAlgo::Group => f.segments.min(1 << 16),
                    // A work-item per stage or tile.
                    SegmentAlgo::Staged | SegmentAlgo::Runs => (f.hi - f.lo)
                        .div_ceil(sp.tile)
                        .div_ceil(local as u64)
                        .min(1 << 16),
                    // A work-item per tile of items.
                    SegmentAlgo::Merge => (f.hi - f.lo + f.segments)
                        .div_ceil(sp.tile)
                        .div_ceil(local as u64)
                        .min(1 << 16),
                    _ => plan.groups,
                };
                let global = groups.max(1) as usize * local;
                events.push(launch::enqueue_kernel(
                    &q.queue,
                    program,
                    "clr_finish",
                    &args,
                    &[global],
                    &[local],
                    &[],
                )?);
            }
            Ok(())
        })();
        if let Err(e) = enqueued {
            q.queue.health.mark_failed();
            if let Some(g) = gate {
                // The held kernel is terminated; the queue's finish reports that status
                // (NVIDIA: the gate's own), which is this failure, not another.
                g.cancel();
                let _ = q.queue.finish();
            }
            if let Some(b) = &backup {
                restore_regions(q, &regions, b);
            }
            return Err(e);
        }
        if let Some(g) = gate {
            g.open()?;
        }
        drop(args);
        let mut keep: Vec<Arc<Mem>> = regions.iter().map(|(m, _)| (*m).clone()).collect();
        keep.extend(partials);
        keep.extend(backup.map(Arc::new));
        keep.extend(f.offsets.as_ref().map(|t| t.mem.clone()));
        keep.extend(
            reds.0
                .iter()
                .filter_map(|r| r.raw.as_ref().map(|t| t.mem.clone())),
        );
        for (_, a) in &kernel.args {
            if let ArgKind::Buffer { mem, .. } = a {
                keep.push(mem.clone());
            }
        }
        Ok(ReduceEvent::new(q, events, Some(plan.clone()), keep))
    }
}

/// A `BadArgument` for reducer `name`.
fn bad_argument(name: &str, problem: &str) -> Error {
    Error::BadArgument {
        name: name.to_string(),
        problem: problem.to_string(),
    }
}

/// The offsets buffer is read by the kernels: the body may not write it.
fn check_offsets_not_written(off: &Target, kernel: &Kernel) -> Result<()> {
    for (name, a) in &kernel.args {
        if let ArgKind::Buffer {
            mem,
            writable: true,
            ..
        } = a
        {
            if Arc::ptr_eq(mem, &off.mem) {
                return Err(bad_argument(
                    name,
                    "bound with arg_mut but it is the offsets buffer of the segments",
                ));
            }
        }
    }
    Ok(())
}

/// The bytes of the first `segments` results of a variable (and its index buffer).
fn regions(r: &Reduction, segments: usize) -> Vec<(&Arc<Mem>, usize)> {
    let mut v = vec![(&r.target.mem, segments * r.target.ty.size())];
    if let Some(ix) = &r.index {
        v.push((&ix.mem, segments * 8));
    }
    v
}

/// Sets the first `segments` results of a variable to the identity (and argmin/argmax
/// indices to u64::MAX): every segment is empty and the variable is initialize_to_identity.
/// An identity-less variable is left as it was.
fn fill_segments(
    queue: &Queue,
    r: &Reduction,
    v: &plan::VarPlan,
    segments: usize,
    events: &mut Vec<Event>,
) -> Result<()> {
    let Some(id) = v.identity else {
        return Ok(());
    };
    if segments == 0 {
        return Ok(());
    }
    let q = &queue.inner;
    let t = &r.target;
    events.push(launch::fill(
        &q.queue,
        &t.mem,
        &id.to_bytes(),
        0,
        segments * t.ty.size(),
    )?);
    if let Some(ix) = &r.index {
        events.push(launch::fill(
            &q.queue,
            &ix.mem,
            &u64::MAX.to_le_bytes(),
            0,
            segments * 8,
        )?);
    }
    Ok(())
}
