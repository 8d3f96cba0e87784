//! The span idiom: `reduction_span(&rows, r, op)` with a body whose every subscript of the
//! reducer is `i / C` (`rows[i / C] += x[i]`; `C` a literal or a scalar argument) and
//! `n == r * C` is a uniform segmented reduction, and runs as one (kernels/segment.cl) instead
//! of a span plan that keeps a copy of all `r` results per work-group or work-item.

use super::checks::reducer_names;
use super::kernel::{ArgKind, Kernel};
use super::options::Options;
use super::range::Form;
use super::reduction::{Reduction, Reductions, SegSpec};
use crate::codegen::names::span_divisor;
use crate::plan::{self, Strategy};

/// Runs `run` on the launch as a segmented one, where it is: its own reductions and body where
/// a variable is segmented, else the span idiom's rewrite of them ([`span_idiom`]); `None`
/// where it is not segmented. The launch and both explains take the segmented path here.
pub(super) fn segmented<T>(
    form: &Form,
    reds: &Reductions,
    kernel: &Kernel,
    options: &Options,
    run: impl FnOnce(&Reductions, &Kernel) -> T,
) -> Option<T> {
    if super::segment::is_segmented(reds) {
        return Some(run(reds, kernel));
    }
    span_idiom(form, reds, kernel, options).map(|(reds, kernel)| run(&reds, &kernel))
}

/// The launch as a uniform segmented one, when it is the span idiom; `None` otherwise (a
/// forced strategy, an exact sum, argmin/argmax spans, another subscript, or `n != r * C`).
fn span_idiom(
    form: &Form,
    reds: &Reductions,
    kernel: &Kernel,
    options: &Options,
) -> Option<(Reductions, Kernel)> {
    if options.strategy != Strategy::AUTO || !matches!(form, Form::Range(_)) {
        return None;
    }
    let plain = |r: &Reduction| {
        r.span.is_some()
            && r.seg.is_none()
            && r.raw.is_none()
            && r.index.is_none()
            && !plan::exact_sum(&r.op, r.target.ty, options.determinism)
    };
    if !reds.0.iter().all(plain) {
        return None;
    }
    let names = reducer_names(reds, kernel).ok()?;
    let mut body = kernel.body().to_string();
    let mut divisor: Option<String> = None;
    for name in &names {
        let (d, rewritten) = span_divisor(&body, name)?;
        if divisor.as_ref().is_some_and(|x| *x != d) {
            return None;
        }
        divisor = Some(d);
        body = rewritten;
    }
    let d = divisor?;
    // A `kernel!` body guards each span reducer with `#if ... || Rk_SPAN == 0 #error`
    // (src/closure/emit.rs `guards`); the converted reducer is a plain one per segment.
    for k in 0..names.len() {
        body = body.replace(
            &format!("R{k}_SPAN == 0"),
            &format!("R{k}_SHAPE == CLR_SHAPE_PAIR"),
        );
    }
    let c: u64 = match d.parse() {
        Ok(c) => c,
        Err(_) => kernel.args.iter().find_map(|(name, a)| match a {
            ArgKind::Scalar(v) if *name == d => v.as_int().and_then(|x| u64::try_from(x).ok()),
            _ => None,
        })?,
    };
    let n = form.size();
    if c == 0 || !n.is_multiple_of(c) || reds.0.iter().any(|r| r.span != Some((n / c) as usize)) {
        return None;
    }
    let converted = reds
        .0
        .iter()
        .map(|r| Reduction {
            span: None,
            seg: Some(SegSpec::Span(c)),
            ..r.clone()
        })
        .collect();
    Some((Reductions(converted), kernel.with_body(body)))
}
