//! `Queue::parallel_for_reduce`: the launch sequence of one call. Prepare (check the buffers,
//! names and body, build the request, consult the queue's launch cache, plan), compile (or find
//! the program), then run (scratch, backup, arguments, enqueue, restore on failure).
//! architecture.md, "Data flow of one call", walks through it.

use super::event::ReduceEvent;
use super::kernel::{ArgKind, Kernel};
use super::options::Options;
use super::range::Form;
use super::reduction::{Reduction, Reductions};
use super::run::{fill_identity, result_regions};
use crate::check::expr::Expr;
use crate::check::reference::{identity_counterexample, identity_samples};
use crate::codegen::names::{check_shorthands, is_ident, rewrite_exact, rewrite_spans};
use crate::codegen::{self, ParamKind};
use crate::error::{Error, Result};
use crate::ops::Operator;
use crate::plan::{self, Determinism, Plan, Request, VarRequest};
use crate::runtime::launch::{Compiled, Mem};
use crate::runtime::queue::{LaunchKey, Queue};
use crate::types::ElemType;
use std::sync::Arc;

/// Names the body may not bind: clreduce's own.
const RESERVED: [&str; 3] = ["i", "n", "item"];

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

    /// The plan a launch would use, without running anything.
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
        if super::segment::is_segmented(&reds) {
            return self.explain_source_segments(&form, &reds, &kernel, options);
        }
        if let Some((reds, kernel)) = super::span_idiom::span_idiom(&form, &reds, &kernel, &options)
        {
            return self.explain_source_segments(&form, &reds, &kernel, options);
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
        let form = range.into();
        let reds = reductions.into();
        let kernel = kernel.into();
        if super::segment::is_segmented(&reds) {
            return self.parallel_for_segments(&form, &reds, &kernel, options);
        }
        if let Some((reds, kernel)) = super::span_idiom::span_idiom(&form, &reds, &kernel, &options)
        {
            return self.parallel_for_segments(&form, &reds, &kernel, options);
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
            return Ok(ReduceEvent::new(q, events, Some(plan), keep));
        }
        let compiled = match prep.compiled {
            Ok(c) => c,
            Err(body) => self.compile(&plan, &prep.key, &body)?,
        };
        self.run(&plan, &reds, &kernel, &compiled, form)
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
        if let Some(hit) = q
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
            .then(|| crate::tune_cache::table_for(q.device.index(), &q.caps))
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

    /// A reduction's result (and index) buffer must live on this queue's device and be long
    /// enough.
    pub(super) fn check_targets(&self, name: &str, r: &Reduction) -> Result<()> {
        let q = &self.inner;
        let targets = std::iter::once((name.to_string(), &r.target, r.elems()))
            .chain(
                r.index
                    .iter()
                    .map(|t| (format!("{name} (index buffer)"), t, 1)),
            )
            .chain(
                r.raw
                    .iter()
                    .map(|t| (format!("{name} (raw partial buffer)"), t, r.elems())),
            );
        for (label, t, need) in targets {
            if t.device != q.device.index() {
                return Err(Error::ForeignBuffer {
                    name: label,
                    buffer_device: t.device_label.clone(),
                    queue_device: q.device.label(),
                });
            }
            if t.len < need {
                return Err(Error::BufferTooShort {
                    name: label,
                    len: t.len,
                    need,
                });
            }
        }
        if r.op.is_arg() && r.index.is_none() && r.span.is_none() {
            return Err(Error::BadArgument {
                name: name.to_string(),
                problem: format!(
                    "{} needs an index buffer: use reduction_{}(&values, &indices)",
                    r.op, r.op
                ),
            });
        }
        Ok(())
    }

    /// The kernel's parameters as the generated signature declares them; every buffer must
    /// belong to this queue.
    pub(super) fn kernel_params(&self, kernel: &Kernel) -> Result<Vec<(String, ParamKind)>> {
        let q = &self.inner;
        let mut params = Vec::new();
        for (name, a) in &kernel.args {
            match a {
                ArgKind::Buffer {
                    ty,
                    writable,
                    device,
                    label,
                    ..
                } => {
                    if *device != q.device.index() {
                        return Err(Error::ForeignBuffer {
                            name: name.clone(),
                            buffer_device: label.clone(),
                            queue_device: q.device.label(),
                        });
                    }
                    params.push((
                        name.clone(),
                        ParamKind::Buffer {
                            ty: *ty,
                            writable: *writable,
                        },
                    ));
                }
                ArgKind::Scalar(v) => params.push((name.clone(), ParamKind::Scalar { ty: v.ty() })),
            }
        }
        Ok(params)
    }
}

/// Each reducer's name in the body: the kernel's own list (`Kernel::reducers`), else the
/// reduction's name, else `sum`, `sum1`, `sum2`, ... by position.
pub(super) fn reducer_names(reds: &Reductions, kernel: &Kernel) -> Result<Vec<String>> {
    if let Some(given) = &kernel.reducers {
        if given.len() != reds.0.len() {
            return Err(Error::BadArgument {
                name: given.join(", "),
                problem: format!(
                    "the kernel names {} reducer(s) but the launch has {} reduction(s)",
                    given.len(),
                    reds.0.len()
                ),
            });
        }
    }
    Ok(reds
        .0
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let kernel_name = kernel.reducers.as_ref().map(|g| g[k].clone());
            kernel_name.or_else(|| r.name.clone()).unwrap_or_else(|| {
                if k == 0 {
                    "sum".into()
                } else {
                    format!("sum{k}")
                }
            })
        })
        .collect())
}

/// No buffer is written twice in one launch, and a buffer bound read-only (declared
/// `restrict`) is not also written.
pub(super) fn check_writers(names: &[String], reds: &Reductions, kernel: &Kernel) -> Result<()> {
    let written: Vec<(&str, *const Mem)> = names
        .iter()
        .map(String::as_str)
        .zip(reds.0.iter().map(|r| Arc::as_ptr(&r.target.mem)))
        .chain(
            names
                .iter()
                .zip(&reds.0)
                .filter_map(|(n, r)| r.index.as_ref().map(|t| (n.as_str(), Arc::as_ptr(&t.mem)))),
        )
        .chain(kernel.args.iter().filter_map(|(n, a)| match a {
            ArgKind::Buffer {
                mem,
                writable: true,
                ..
            } => Some((n.as_str(), Arc::as_ptr(mem))),
            _ => None,
        }))
        .collect();
    for (idx, (n, m)) in written.iter().enumerate() {
        if let Some((other, _)) = written[..idx].iter().find(|(_, o)| o == m) {
            return Err(Error::BadArgument {
                name: n.to_string(),
                problem: format!(
                    "the same buffer as {other}: two writers of one buffer in one launch"
                ),
            });
        }
    }
    for (n, a) in &kernel.args {
        if let ArgKind::Buffer {
            mem,
            writable: false,
            ..
        } = a
        {
            if let Some((other, _)) = written.iter().find(|(_, o)| *o == Arc::as_ptr(mem)) {
                return Err(Error::BadArgument {
                    name: n.clone(),
                    problem: format!("bound read-only (restrict) but the same buffer is written as {other}; bind it with arg_mut"),
                });
            }
        }
    }
    Ok(())
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

/// The planner's view of the launch.
pub(super) fn request(
    form: &Form,
    reds: &Reductions,
    options: Options,
    pure_body: bool,
    narrow_reads: bool,
) -> Request {
    Request {
        form: form.request(),
        shape: form.shape(),
        vars: reds
            .0
            .iter()
            .map(|r| VarRequest {
                op: r.op.clone(),
                ty: r.target.ty,
                init_to_identity: r.init_to_identity,
                span: r.span,
            })
            .collect(),
        strategy: options.strategy,
        determinism: options.determinism,
        tuning: options.tuning,
        pure_body,
        narrow_reads,
    }
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

/// Reducer and argument names are valid C identifiers, not clreduce's, and unique.
pub(super) fn check_names(names: &[String], params: &[(String, ParamKind)]) -> Result<()> {
    let all: Vec<&String> = names.iter().chain(params.iter().map(|(n, _)| n)).collect();
    for (idx, n) in all.iter().enumerate() {
        let problem = if !is_ident(n) {
            Some("not an OpenCL C identifier".to_string())
        } else if RESERVED.contains(&n.as_str())
            || n.starts_with("clr_")
            || n.starts_with("CLR_")
            || n.as_str() == "combine"
        {
            Some("reserved (i, n, item, combine and clr_* are clreduce's)".to_string())
        } else if all[..idx].contains(n) {
            Some("bound twice (argument and reducer names must be unique)".to_string())
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(Error::BadArgument {
                name: n.to_string(),
                problem,
            });
        }
    }
    Ok(())
}

/// Every declared identity of a custom combiner is neutral on sample values of its type
/// (`check::reference::identity_samples`, evaluated on the host by `check::expr`, the
/// evaluator the CLI's `--identity` check uses): a value that is not would be combined into
/// every partial result. A combiner outside the evaluator's subset of OpenCL C is not
/// checked, nor are the samples the evaluator cannot compute (a division by zero).
pub(super) fn check_identities(reds: &Reductions) -> Result<()> {
    for r in &reds.0 {
        let Operator::Custom(c) = &r.op else { continue };
        let Some(identity) = c.identity_value() else {
            continue;
        };
        let Ok(expr) = Expr::parse(c.expr()) else {
            tracing::debug!(
                expr = c.expr(),
                "identity not checked: the host evaluator cannot parse the combiner"
            );
            continue;
        };
        for x in identity_samples(identity.ty()) {
            if let Ok(Some(bad)) = identity_counterexample(&expr, identity, &[x]) {
                return Err(Error::NotAnIdentity {
                    expr: c.expr().to_string(),
                    ty: identity.ty(),
                    identity,
                    a: bad.a,
                    b: bad.b,
                    got: bad.got,
                    want: bad.want,
                });
            }
        }
    }
    Ok(())
}

/// Reducer shorthands the ops allow, span subscripts, exact reducers and reads of f16/bf16
/// buffers rewritten; returns the body to compile.
pub(super) fn check_body(
    names: &[String],
    reds: &Reductions,
    body: &str,
    params: &[(String, ParamKind)],
    det: Determinism,
) -> Result<String> {
    for (name, r) in names.iter().zip(&reds.0) {
        if r.span.is_none() {
            check_shorthands(body, name, &r.op)?;
        }
    }
    let spans: Vec<(&str, &Operator)> = names
        .iter()
        .zip(&reds.0)
        .filter(|(_, r)| r.span.is_some())
        .map(|(n, r)| (n.as_str(), &r.op))
        .collect();
    let body = rewrite_spans(body, &spans)?;
    let exact: Vec<&str> = names
        .iter()
        .zip(&reds.0)
        .filter(|(_, r)| r.span.is_none() && plan::exact_sum(&r.op, r.target.ty, det))
        .map(|(n, _)| n.as_str())
        .collect();
    let body = rewrite_exact(&body, &exact)?;
    let storage: Vec<(&str, ElemType)> = params
        .iter()
        .filter_map(|(n, p)| match p {
            ParamKind::Buffer { ty, .. } if ty.is_storage() => Some((n.as_str(), *ty)),
            _ => None,
        })
        .collect();
    crate::codegen::rewrite_loads(&body, &storage)
}
