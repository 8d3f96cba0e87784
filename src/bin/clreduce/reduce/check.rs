//! The host's side of `clreduce reduce`: what each variable should hold (`Expected`, from the
//! host reference, its initial value and `initialize_to_identity`). The model (`Expected`,
//! `Got`, `Verdict`, `check_var`: exact for integers, argmin/argmax and min/max, within a
//! stated bound for float sums and products, per bin for spans) is `clreduce::cases`', the one
//! the bench and the tuner check with.

use crate::error::{CliError, CliResult};
use crate::vars::{Init, VarOp};
pub use clreduce::cases::{Expected, Got, Verdict};
use clreduce::check::reference::{self, HostVec};
use clreduce::plan::Plan;
use clreduce::{ElemType, Op};

/// The host reference of every variable over `data`, from its initial value unless
/// `initialize_to_identity`.
pub fn expected(
    vars: &[VarOp],
    inits: &[Init],
    data: &HostVec,
    init_identity: bool,
    exact: bool,
) -> CliResult<Vec<Expected>> {
    let host_err = |v: &VarOp, e: String| {
        CliError::Usage(format!(
            "the host reference of {} cannot be computed: {e}",
            v.label()
        ))
    };
    vars.iter()
        .zip(inits)
        .map(|(v, init)| {
            let exact_sum = exact && matches!(v, VarOp::Builtin(Op::Plus)) && data.ty().is_float();
            Ok(match (v, init) {
                (_, Init::Scalar(x)) if exact_sum => Expected::Exact(
                    reference::reference_exact(data, (!init_identity).then_some(*x))
                        .expect("float data"),
                ),
                (_, Init::Span(xs)) if exact_sum => Expected::ExactSpan(
                    reference::reference_exact_span(
                        data,
                        xs.len(),
                        (!init_identity).then_some(xs.as_slice()),
                    )
                    .expect("float data"),
                ),
                (VarOp::Arg { max }, Init::Arg(val, idx)) => Expected::Arg(
                    reference::reference_arg(*max, data, (!init_identity).then_some((*val, *idx))),
                ),
                (_, Init::Scalar(x)) => Expected::Scalar(
                    reference::reference_with(
                        v.host().expect("not argmin/argmax"),
                        data,
                        (!init_identity).then_some(*x),
                    )
                    .map_err(|e| host_err(v, e))?,
                ),
                (_, Init::Span(xs)) => Expected::Span(
                    reference::reference_span(
                        v.host().expect("not argmin/argmax"),
                        data,
                        xs.len(),
                        (!init_identity).then_some(xs.as_slice()),
                    )
                    .map_err(|e| host_err(v, e))?,
                ),
                (_, Init::Arg(..)) => unreachable!("argmin/argmax get pair initial values"),
            })
        })
        .collect()
}

/// Checks variable `k` (`v`'s bound class).
pub fn check_var(
    v: &VarOp,
    k: usize,
    plan: &Plan,
    want: &Expected,
    got: &Got,
    ty: ElemType,
) -> Verdict {
    clreduce::cases::check_var(v.bound_class(), k, plan, want, got, ty)
}
