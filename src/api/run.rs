//! Compiling and running a prepared launch: the program (from the queue's memo, the
//! process-wide cache or a new build, with build errors mapped to the body), the scratch
//! memory, the backup of the results, the kernel arguments, the enqueues, and the restore of
//! every variable when an enqueue fails.

use super::event::ReduceEvent;
use super::kernel::{ArgKind, Kernel};
use super::queue::{LaunchKey, Launchable, Queue, LAUNCH_CACHE_MAX};
use super::range::Form;
use super::reduction::{Reduction, Reductions};
use crate::codegen::{self, Generated, ParamKind};
use crate::error::{Error, Result};
use crate::plan::{CrossAlgo, ExactTail, Plan, SpanStore, VarPlan};
use crate::runtime::health::Fault;
use crate::runtime::launch::{self, Arg, Compiled, Mem};
use crate::runtime::program;
use crate::runtime::queue::DeviceQueue;
use crate::runtime::scratch::Scratch;
use opencl3::event::Event;
use std::sync::Arc;

impl Queue {
    /// Builds the program of `plan` over `body`, or finds it in the queue's memo (keyed by the
    /// options, names, parameters and body), and checks the plan's work-group size against the
    /// kernel's limit. Shared by ordinary and segmented launches.
    pub(super) fn compile_program(
        &self,
        plan: &Plan,
        names: &[String],
        params: &[(String, ParamKind)],
        body: &str,
    ) -> Result<Arc<Compiled>> {
        let q = &self.inner;
        let options = codegen::options(plan, &q.caps);
        let memo_key = format!("{options}\u{0}{names:?}\u{0}{params:?}\u{0}{body}");
        let cached = self
            .cache
            .compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&memo_key)
            .cloned();
        let compiled = match cached {
            Some(c) => c,
            None => {
                let gen = codegen::generate(plan, &q.caps, names, body, params);
                let program = program::get(&q.device, &gen.source, &gen.options)
                    .map_err(|e| body_build_error(e, &gen))?;
                let c = Arc::new(Compiled::new(program, q.device.id(), q.device.serial()?)?);
                self.cache
                    .compiled
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(memo_key, c.clone());
                c
            }
        };
        if plan.local > compiled.kernel_wg_limit && !q.caps.workarounds.kernel_wg_size_advisory {
            return Err(Error::WorkGroupTooLarge {
                local: plan.local,
                limit: compiled.kernel_wg_limit,
                limit_name: "CL_KERNEL_WORK_GROUP_SIZE of this kernel",
                device: q.device.label(),
            });
        }
        Ok(compiled)
    }

    /// Builds (or finds) the program of a plan and records the launch in the queue's cache.
    /// `source_body` is the key's body with span subscripts rewritten (`rewrite_spans`).
    pub(super) fn compile(
        &self,
        plan: &Arc<Plan>,
        key: &LaunchKey,
        source_body: &str,
    ) -> Result<Arc<Compiled>> {
        let compiled = self.compile_program(plan, &key.names, &key.params, source_body)?;
        let mut launches = self
            .cache
            .launches
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if launches.len() >= LAUNCH_CACHE_MAX {
            launches.clear();
        }
        launches.insert(
            key.clone(),
            Launchable {
                plan: plan.clone(),
                compiled: compiled.clone(),
            },
        );
        Ok(compiled)
    }

    /// Enqueues a compiled launch: scratch, backup, fills, the main kernel and the extra pass.
    /// With `mbox` (a shortcut's host mailbox), a plan that can post into it ([`posts_mailbox`])
    /// gets its address and sequence number; the flag says whether it did.
    pub(super) fn run(
        &self,
        plan: &Arc<Plan>,
        reds: &Reductions,
        kernel: &Kernel,
        program: &Compiled,
        form: Form,
        mbox: Option<&launch::MailboxSlot>,
    ) -> Result<(ReduceEvent, bool)> {
        let q: &DeviceQueue = &self.inner;
        let mut scratch = q.scratch.lock().unwrap_or_else(|p| p.into_inner());
        // After a failed command on this queue the counter and partials are made afresh.
        scratch.check(&q.queue.health, || q.device.label());
        let regions: Vec<(&Arc<Mem>, usize)> = reds.0.iter().flat_map(result_regions).collect();
        let backup_bytes: usize = regions.iter().map(|(_, b)| b.next_multiple_of(8)).sum();
        let partials: Vec<u64> = plan.vars.iter().map(|v| partial_bytes(plan, v)).collect();
        scratch.prepare(&q.context, &q.device.label(), &partials, backup_bytes)?;
        let counter = scratch
            .counter
            .as_ref()
            .expect("counter allocated by prepare");
        let backup = scratch
            .backup
            .as_ref()
            .expect("backup allocated by prepare");

        // A launch that changes a variable before a later command could still fail to enqueue
        // (initialize_to_identity filled before an atomic combine, or an extra pass after the
        // main kernel) first backs every result region up, and puts them back if anything
        // fails.
        // Test-only fault injection (`Queue::__inject_fault`); a fault after the main kernel
        // fails a launch that changed its variables, so it takes the backup too.
        let fault = q.queue.health.take_fault(|f| !matches!(f, Fault::Read(_)));
        let needs_backup = plan.passes > 1
            || matches!(fault, Some(Fault::AfterMainKernel(_)))
            || reds
                .0
                .iter()
                .zip(&plan.vars)
                .any(|(r, v)| v.cross == CrossAlgo::Atomic && r.init_to_identity);
        // The backup's copies are the launch's first commands (its device time spans them).
        let mut events = match needs_backup {
            true => copy_regions(q, &regions, backup, true)?,
            false => Vec::new(),
        };
        let mut args: Vec<Arg> = Vec::new();
        args.push(Arg::Bytes(form.size().to_le_bytes().to_vec()));
        for (k, r) in reds.0.iter().enumerate() {
            let part = scratch.partials[k]
                .as_ref()
                .expect("partials allocated by prepare");
            args.push(Arg::Mem(&r.target.mem));
            // The index buffer of argmin/argmax, or a raw share's partial buffer; other
            // variables never touch clr_aux.
            args.push(match (&r.index, &r.raw) {
                (Some(ix), _) => Arg::Mem(&ix.mem),
                (None, Some(raw)) => Arg::Mem(&raw.mem),
                (None, None) => Arg::Mem(part),
            });
            args.push(Arg::Mem(part));
        }
        args.push(Arg::Mem(counter));
        for (_, a) in &kernel.args {
            match a {
                ArgKind::Buffer { mem, .. } => args.push(Arg::Mem(mem)),
                ArgKind::Scalar(v) => args.push(Arg::Bytes(v.to_bytes())),
            }
        }
        let mbox = mbox.filter(|_| posts_mailbox(plan, reds));
        let (addr, seq) = mbox.map_or((0u64, 0u32), |m| (m.addr, m.seq));
        args.push(Arg::Bytes(addr.to_le_bytes().to_vec()));
        args.push(Arg::Bytes(seq.to_le_bytes().to_vec()));
        let enqueued = enqueue(
            q,
            plan,
            reds,
            program,
            &mut args,
            &mut events,
            fault,
            &scratch,
        );
        if let Err(e) = enqueued {
            // Some of the launch's commands may have run: the next launch rebuilds the scratch.
            q.queue.health.mark_failed();
            if needs_backup {
                restore_regions(q, &regions, backup);
            }
            return Err(e);
        }
        drop(args);
        let mut keep: Vec<Arc<Mem>> = regions.iter().map(|(m, _)| (*m).clone()).collect();
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
        // No clFlush: reading a result or waiting on the event submits the commands.
        let injected = match fault {
            Some(Fault::KernelDied(code)) => Some(code),
            _ => None,
        };
        let ev = ReduceEvent::with_status(q, events, injected, Some(plan.clone()), keep);
        if uses_scratch_state(plan) {
            scratch.track(ev.status());
        }
        Ok((ev, mbox.is_some()))
    }
}

/// Whether a launch can post its result into a host mailbox (kernels/reduce.cl
/// `clr_mbox_post`): one launch, one whole variable (no span, no segments, no raw share),
/// not an exact sum, finished by last-work-group detection, so that one work-item stores the
/// final value.
fn posts_mailbox(plan: &Plan, reds: &Reductions) -> bool {
    plan.passes == 1
        && plan.segment.is_none()
        && matches!((&plan.vars[..], &reds.0[..]), ([v], [r])
            if v.cross == CrossAlgo::LastGroup && v.exact.is_none() && v.span.is_none()
                && !v.raw && r.raw.is_none())
}

/// A build error whose log points into the user's body becomes `BodyBuild`, with the log's
/// locations rewritten to `body:LINE:COL`.
pub(super) fn body_build_error(e: Error, gen: &Generated) -> Error {
    match e {
        Error::Build {
            device,
            options,
            log,
            generated,
        } => {
            let (mapped, in_body) = codegen::map_log(&log, gen.body_first_line, gen.body_lines);
            if in_body {
                Error::BodyBuild {
                    device,
                    options,
                    log: mapped,
                    generated,
                }
            } else {
                Error::Build {
                    device,
                    options,
                    log,
                    generated,
                }
            }
        }
        other => other,
    }
}

/// After a failed enqueue: lets whatever was enqueued finish, then puts every variable's region
/// back from `backup` (taken by [`copy_regions`] before the launch). A failure of the restore
/// itself is logged, since the launch's own error is the one returned.
pub(super) fn restore_regions(q: &DeviceQueue, regions: &[(&Arc<Mem>, usize)], backup: &Mem) {
    let restored = q
        .queue
        .finish()
        .and_then(|()| copy_regions(q, regions, backup, false))
        .and_then(|_| q.queue.finish());
    if let Err(re) = restored {
        tracing::error!(error = %re, "could not restore the reduction variables after a failed launch");
    }
}

/// Copies every result region into the backup buffer (`save`), or back from it; the copies'
/// events, which a launch puts first among its own so that its device time
/// ([`ReduceEvent::device_time_ns`](crate::ReduceEvent::device_time_ns)) includes its backup.
pub(super) fn copy_regions(
    q: &DeviceQueue,
    regions: &[(&Arc<Mem>, usize)],
    backup: &Mem,
    save: bool,
) -> Result<Vec<Event>> {
    let mut off = 0;
    let mut events = Vec::with_capacity(regions.len());
    for (m, b) in regions {
        events.push(if save {
            launch::copy(&q.queue, m, 0, backup, off, *b)?
        } else {
            launch::copy(&q.queue, backup, off, m, 0, *b)?
        });
        off += b.next_multiple_of(8);
    }
    Ok(events)
}

/// The launch's commands in order: identity fills before an atomic combine, the main kernel,
/// and the extra pass over the partials; with a test's `fault`, the failure it asks for.
#[allow(clippy::too_many_arguments)]
fn enqueue(
    q: &DeviceQueue,
    plan: &Plan,
    reds: &Reductions,
    program: &Compiled,
    args: &mut [Arg],
    events: &mut Vec<Event>,
    fault: Option<Fault>,
    scratch: &Scratch,
) -> Result<()> {
    for (r, v) in reds.0.iter().zip(&plan.vars) {
        if v.cross == CrossAlgo::Atomic && r.init_to_identity {
            fill_identity(q, r, v, events)?;
        }
    }
    if let Some(Fault::MainKernelEnqueue(code)) = fault {
        return Err(q.queue.failed("clEnqueueNDRangeKernel", code));
    }
    let global = plan.groups as usize * plan.local;
    events.push(launch::enqueue_kernel(
        &q.queue,
        program,
        "clr_main",
        args,
        &[global],
        &[plan.local],
        &[],
    )?);
    if let Some(Fault::AfterMainKernel(code) | Fault::KernelDied(code)) = fault {
        // A kernel that died leaves stale state only in the scratch its plan uses.
        if uses_scratch_state(plan) {
            scratch.poison(&q.queue)?;
        }
        if let Some(Fault::AfterMainKernel(_)) = fault {
            return Err(q.queue.failed("clEnqueueNDRangeKernel", code));
        }
    }
    if plan.passes > 1 {
        args[0] = Arg::Bytes(plan.groups.to_le_bytes().to_vec());
        let spans = span_pass_groups(plan);
        if spans == 0 || plan.vars.len() > 1 {
            events.push(launch::enqueue_kernel(
                &q.queue,
                program,
                "clr_finish",
                args,
                &[plan.local],
                &[plan.local],
                &[],
            )?);
        }
        if spans > 0 {
            events.push(launch::enqueue_kernel(
                &q.queue,
                program,
                "clr_finish_spans",
                args,
                &[spans * plan.local],
                &[plan.local],
                &[],
            )?);
        }
    }
    if fault == Some(Fault::StaleScratch) && uses_scratch_state(plan) {
        scratch.poison(&q.queue)?;
    }
    Ok(())
}

/// Work-groups of the span pass (`clr_finish_spans`, kernels/reduce.cl): one work-item per
/// element of the largest `global-digits` or `global-copies` span, or exact span in global
/// memory with an extra pass (decision 79), which rounds or folds it; 0 when the plan has none.
/// (`clr_finish`, one work-group, runs the other variables' passes.)
fn span_pass_groups(plan: &Plan) -> usize {
    plan.vars
        .iter()
        .filter_map(|v| {
            v.span.filter(|s| match s.store {
                SpanStore::GlobalDigits | SpanStore::GlobalCopies => true,
                SpanStore::GlobalAtomic => v.exact.is_some() && v.cross == CrossAlgo::ExtraPass,
                _ => false,
            })
        })
        .map(|s| s.len.div_ceil(plan.local))
        .max()
        .unwrap_or(0)
}

/// Sets a reduction variable (every span element; and the index of argmin/argmax, to
/// u64::MAX) to its op's identity (initialize_to_identity).
pub(super) fn fill_identity(
    q: &DeviceQueue,
    r: &Reduction,
    v: &VarPlan,
    events: &mut Vec<Event>,
) -> Result<()> {
    let id = v.identity.ok_or_else(|| Error::NoIdentity {
        op: v.op.to_string(),
        ty: v.ty,
        needed_for: "initialize_to_identity",
    })?;
    let t = &r.target;
    events.push(launch::fill(
        &q.queue,
        &t.mem,
        &id.to_bytes(),
        0,
        r.elems() * t.ty.size(),
    )?);
    if let Some(ix) = &r.index {
        events.push(launch::fill(
            &q.queue,
            &ix.mem,
            &u64::MAX.to_le_bytes(),
            0,
            8,
        )?);
    }
    Ok(())
}

/// The bytes of a variable's result that a launch may change: (buffer, bytes), the index
/// buffer included.
pub(super) fn result_regions(r: &Reduction) -> Vec<(&Arc<Mem>, usize)> {
    let mut v = vec![(&r.target.mem, r.elems() * r.target.ty.size())];
    if let Some(ix) = &r.index {
        v.push((&ix.mem, 8));
    }
    v
}

/// Whether a launch of `plan` leaves state in the counter or the partial slots between its
/// commands (last-group detection, an extra pass, per-work-item span copies).
fn uses_scratch_state(plan: &Plan) -> bool {
    plan.vars.iter().any(|v| {
        matches!(v.cross, CrossAlgo::LastGroup | CrossAlgo::ExtraPass)
            || matches!(v.span.map(|s| s.store), Some(SpanStore::GlobalPrivate))
    })
}

/// Bytes of variable `v`'s partials: per work-group (last-group, extra pass) or per work-item
/// (a span in global scratch) copies of its accumulator; an exact sum's superaccumulators (one,
/// one per element of a span, or one row per work-group).
fn partial_bytes(plan: &Plan, v: &VarPlan) -> u64 {
    let elems = v.span.map_or(1, |s| s.len) as u64;
    match v.span {
        Some(s) if s.store == SpanStore::GlobalDigits => {
            return s.copies as u64 * elems * (crate::plan::DIGITS_LONGS * 8) as u64;
        }
        Some(s) if s.store == SpanStore::GlobalCopies => {
            return s.copies as u64 * elems * v.acc_bytes as u64;
        }
        _ => {}
    }
    if let Some(e) = v.exact {
        let sacc = (e.limbs() * 8) as u64;
        return match (v.span, v.cross) {
            (Some(_), _) => elems * sacc,
            // The lazy finish (kernels/var_exact.cl VX_LAZY): a flag word and two longs per
            // work-group (its merged expansion) after the superaccumulator.
            (None, CrossAlgo::Atomic) if e.tail == ExactTail::Lazy => {
                sacc + 8 * (1 + 2 * plan.groups)
            }
            (None, CrossAlgo::Atomic) => sacc,
            (None, _) => plan.groups * sacc,
        };
    }
    let rows = match v.span.map(|s| s.store) {
        Some(SpanStore::GlobalPrivate) => plan.groups * plan.local as u64,
        _ if matches!(v.cross, CrossAlgo::LastGroup | CrossAlgo::ExtraPass) => plan.groups,
        _ => 0,
    };
    rows * elems * v.acc_bytes as u64
}
