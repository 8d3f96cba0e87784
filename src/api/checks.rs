//! The checks every launch makes before it plans, shared by the ordinary launch
//! (`parallel_for.rs`) and the segmented one (`segment.rs`): reducer names, result and argument
//! buffers on this queue's device, one writer per buffer, valid and unique names, declared
//! identities that are neutral, the body's reducer shorthands; and the planner's view of a
//! launch (`request`) and the body as it is compiled (`check_body`).

use super::kernel::{ArgKind, Kernel};
use super::options::Options;
use super::queue::Queue;
use super::range::Form;
use super::reduction::{Reduction, Reductions, Target};
use crate::codegen::names::{check_shorthands, is_ident, rewrite_exact, rewrite_spans};
use crate::codegen::ParamKind;
use crate::error::{Error, Result};
use crate::ops::expr::Expr;
use crate::ops::Operator;
use crate::ops::{identity_counterexample, identity_samples};
use crate::plan::{self, Determinism, Request, VarRequest};
use crate::runtime::launch::Mem;
use crate::runtime::queue::DeviceQueue;
use crate::types::ElemType;
use std::sync::Arc;

/// Names the body may not bind: clreduce's own.
const RESERVED: [&str; 3] = ["i", "n", "item"];

impl Queue {
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
            check_target(q, label, t, need)?;
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
/// (`ops::identity_samples`, evaluated on the host by `ops::expr`, the
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

/// One result buffer of a launch (`label` names it in the error) must live on the queue's
/// device and hold at least `need` elements.
pub(super) fn check_target(q: &DeviceQueue, label: String, t: &Target, need: usize) -> Result<()> {
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
    Ok(())
}
