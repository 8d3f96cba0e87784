//! `Queue::parallel_for_reduce`: the launch sequence of one call. Prepare (check the buffers,
//! names and body, build the request, consult the queue's launch cache, plan), compile (or find
//! the program), then run (scratch, backup, arguments, enqueue, restore on failure).
//! architecture.md, "Data flow of one call", walks through it.

use super::checks::{
    check_body, check_identities, check_names, check_writers, reducer_names, request,
};
use super::event::ReduceEvent;
use super::kernel::{ArgKind, Kernel};
use super::options::Options;
use super::queue::{LaunchKey, Queue};
use super::range::Form;
use super::reduction::Reductions;
use super::run::{fill_identity, result_regions};
use super::span_idiom::segmented;
use crate::codegen;
use crate::error::{Error, Result};
use crate::plan::{self, Plan};
use crate::runtime::launch::{Compiled, MailboxSlot};
use std::sync::Arc;

/// A prepared launch: its plan, and its program on a launch-cache hit.
struct Prepared {
    plan: Arc<Plan>,
    /// The cached program (a launch-cache hit), or on a miss the body with its span
    /// subscripts rewritten, ready to compile.
    compiled: std::result::Result<Arc<Compiled>, String>,
    key: LaunchKey,
}

impl Queue {
    /// Runs `kernel` over `range` with `reductions`, with the strategy from `CLREDUCE_STRATEGY`
    /// (else automatic) and deterministic floating point.
    ///
    /// ```
    /// use clreduce::{reduction, Kernel, Op, Queue, Range};
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = Queue::default()?;
    /// let x = queue.buffer_from(&[1.0f32, 2.0, 3.5])?;
    /// let sum = queue.buffer_from(&[0.0f32])?;
    /// queue.parallel_for_reduce(
    ///     Range::new(3),
    ///     reduction(&sum, Op::Plus),
    ///     Kernel::new("sum += x[i];").arg("x", &x),
    /// )?;
    /// assert_eq!(sum.get(0)?, 6.5);
    /// # Ok(()) }
    /// ```
    pub fn parallel_for_reduce(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
    ) -> Result<ReduceEvent> {
        self.parallel_for_reduce_with(range, reductions, kernel.into(), Options::from_env()?)
    }

    /// The plan a launch would use, without running anything. Planned without a body: where the
    /// body changes the plan (its reads at `[i]`, a span subscript `i / C`),
    /// [`Queue::explain_launch`] gives the plan the launch then runs.
    pub fn explain(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        options: Options,
    ) -> Result<Plan> {
        let reds = reductions.into();
        let form = range.into();
        if super::segment::is_segmented(&reds) {
            return self.explain_segments(&form, &reds, &Kernel::new(""), options);
        }
        Ok((*self.prepare(&form, &reds, &Kernel::new(""), options)?.plan).clone())
    }

    /// The plan of this very launch, its body and buffers included, without running anything:
    /// what [`Queue::parallel_for_reduce_with`] runs with the same arguments. The body can
    /// change the plan where [`Queue::explain`] does not see it: a span subscript `i / C`
    /// (planned as a segmented reduction), the buffers it reads at `[i]` (vector loads, and on
    /// NVIDIA the register scan kernel of CSR segments). `clreduce explain` plans through it with
    /// the body `clreduce reduce` runs.
    pub fn explain_launch(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
        options: Options,
    ) -> Result<Plan> {
        let (form, reds, kernel) = (range.into(), reductions.into(), kernel.into());
        if let Some(plan) = segmented(&form, &reds, &kernel, &options, |reds, kernel| {
            self.explain_segments(&form, reds, kernel, options)
        }) {
            return plan;
        }
        Ok((*self.prepare(&form, &reds, &kernel, options)?.plan).clone())
    }

    /// The OpenCL C program a launch would build (its build options first, as a comment),
    /// without building or running it: the plan's kernels with the body as the launch
    /// rewrites it (span subscripts, exact reducers) inside. For `clreduce explain --source`
    /// and for reading what a closure becomes.
    pub fn explain_source(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
        options: Options,
    ) -> Result<String> {
        let (form, reds, kernel) = (range.into(), reductions.into(), kernel.into());
        if let Some(source) = segmented(&form, &reds, &kernel, &options, |reds, kernel| {
            self.explain_source_segments(&form, reds, kernel, options)
        }) {
            return source;
        }
        let prep = self.prepare(&form, &reds, &kernel, options)?;
        let key = &prep.key;
        let body = check_body(
            &key.names,
            &reds,
            &key.body,
            &key.params,
            options.determinism,
        )?;
        let gen = codegen::generate(&prep.plan, &self.inner.caps, &key.names, &body, &key.params);
        Ok(format!("// build options: {}\n{}", gen.options, gen.source))
    }

    /// Like [`Queue::parallel_for_reduce`] with explicit options.
    pub fn parallel_for_reduce_with(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
        options: Options,
    ) -> Result<ReduceEvent> {
        self.launch(
            range.into(),
            reductions.into(),
            kernel.into(),
            options,
            None,
        )
        .map(|(ev, _)| ev)
    }

    /// [`Queue::parallel_for_reduce_with`], with a shortcut's host mailbox: the flag says
    /// whether the launch posts its result there (`run.rs` `posts_mailbox`).
    pub(super) fn launch(
        &self,
        form: Form,
        reds: Reductions,
        kernel: Kernel,
        options: Options,
        mbox: Option<&MailboxSlot>,
    ) -> Result<(ReduceEvent, bool)> {
        if let Some(ev) = segmented(&form, &reds, &kernel, &options, |reds, kernel| {
            self.parallel_for_segments(&form, reds, kernel, options)
        }) {
            return Ok((ev?, false));
        }
        let prep = self.prepare(&form, &reds, &kernel, options)?;
        let q = &self.inner;
        let plan = prep.plan;
        if form.size() == 0 {
            // Nothing to combine: the variable is unchanged, or becomes the identity.
            let mut events = Vec::new();
            for (r, v) in reds.0.iter().zip(&plan.vars) {
                if r.init_to_identity {
                    fill_identity(q, r, v, &mut events)?;
                }
            }
            let keep = reds
                .0
                .iter()
                .flat_map(|r| result_regions(r).into_iter().map(|(m, _)| m.clone()))
                .collect();
            return Ok((ReduceEvent::new(q, events, Some(plan), keep), false));
        }
        let compiled = match prep.compiled {
            Ok(c) => c,
            Err(body) => self.compile(&plan, &prep.key, &body)?,
        };
        self.run(&plan, &reds, &kernel, &compiled, form, mbox)
    }

    /// Checks the launch, builds its request and key, and plans it (or finds the plan and
    /// program in the queue's launch cache).
    fn prepare(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &Kernel,
        options: Options,
    ) -> Result<Prepared> {
        let names = reducer_names(reds, kernel)?;
        for (name, r) in names.iter().zip(&reds.0) {
            self.check_targets(name, r)?;
        }
        let params = self.kernel_params(kernel)?;
        check_writers(&names, reds, kernel)?;
        form.validate()?;
        let q = &self.inner;
        // The device's measurements, on unmasked queues (a mask is for testing paths) unless
        // the options leave them out.
        let measured = !options.ignore_tune_cache && q.mask.is_empty();
        let key = LaunchKey {
            req: request(
                form,
                reds,
                options,
                !kernel.writes(),
                narrow_reads(form, kernel),
            ),
            names,
            params,
            body: kernel.body().to_string(),
            measured,
            raw: reds.0.iter().map(|r| r.raw.is_some()).collect(),
        };
        if let Some(hit) = self
            .cache
            .launches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(Prepared {
                plan: hit.plan.clone(),
                compiled: Ok(hit.compiled.clone()),
                key,
            });
        }
        check_names(&key.names, &key.params)?;
        let body = check_body(
            &key.names,
            reds,
            kernel.body(),
            &key.params,
            options.determinism,
        )?;
        let table = measured
            .then(|| crate::tune::cache::table_for(q.device.index(), &q.caps))
            .flatten();
        let mut plan = match &table {
            Some(t) => plan::plan_tuned(&q.caps, t, &key.req)?,
            None => plan::plan(&q.caps, &key.req)?,
        };
        mark_raw(&mut plan, &key.raw, &key.names)?;
        let plan = Arc::new(plan);
        check_identities(reds)?;
        tracing::debug!(plan = %plan.summary(), device = %q.device.label(), "planned");
        Ok(Prepared {
            plan,
            compiled: Err(body),
            key,
        })
    }
}

/// Whether the body reads a read-only 16-bit buffer at exactly `[i]` and every such buffer
/// holds the range's n elements (`Request::narrow_reads`: such reads may then be loaded
/// several at once, before the body runs; a shorter buffer read at `[i]` under a condition in
/// the body keeps the launch on single loads). Only launches with a 16-bit buffer look at the
/// body.
fn narrow_reads(form: &Form, kernel: &Kernel) -> bool {
    let mut any = false;
    for (name, a) in &kernel.args {
        if let ArgKind::Buffer {
            ty,
            writable: false,
            mem,
            ..
        } = a
        {
            if ty.is_storage() && codegen::reads_at_i(kernel.body(), name) {
                if ((mem.bytes / ty.size()) as u64) < form.size() {
                    return false;
                }
                any = true;
            }
        }
    }
    any
}

/// Raw mode (multi-device shares): marks the variables that write their raw partial. Only an
/// exact sum or an identity-less variable finishing in a work-group (last-group or extra pass)
/// has one; the multi-device layer asks for nothing else.
fn mark_raw(plan: &mut Plan, raw: &[bool], names: &[String]) -> Result<()> {
    for ((v, &r), name) in plan.vars.iter_mut().zip(raw).zip(names) {
        if !r {
            continue;
        }
        let ok = match v.shape {
            plan::AccShape::Exact => true,
            plan::AccShape::Flagged => v.cross != plan::CrossAlgo::Atomic && v.span.is_none(),
            _ => false,
        };
        if !ok {
            return Err(Error::BadArgument {
                name: name.clone(),
                problem: format!(
                    "raw partials exist for exact sums and identity-less variables finishing in one work-group, not {} ({}+{})",
                    v.op, v.group, v.cross
                ),
            });
        }
        v.raw = true;
    }
    Ok(())
}
