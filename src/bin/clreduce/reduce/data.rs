//! The data of one `clreduce reduce` run: the seeded random input every variable reduces, the
//! variables' (poisoned) initial values, the check that a custom identity is neutral on that
//! input, and the kernel body.

use crate::error::{CliError, CliResult};
use crate::vars::{Init, VarOp};
use clreduce::check::reference::{self, HostVec};
use clreduce::{ElemType, Op, Value};

/// The input every variable reduces: generated for a product when a variable is one (sums,
/// min/max and argmin/argmax stay meaningful on it: small values, many ties), else with ties
/// for argmin/argmax, else for the first variable's op (`reference::random_input`).
pub fn input_for(vars: &[VarOp], ty: ElemType, n: usize, seed: u64) -> (HostVec, String) {
    if vars.iter().any(|v| v.data_op() == Some(Op::Multiplies)) {
        let d = reference::random_input(Op::Multiplies, ty, n, seed);
        return (d, "generated for prod".into());
    }
    if vars.iter().any(|v| matches!(v, VarOp::Arg { .. })) {
        let d = reference::random_input_ties(ty, n, seed);
        return (d, "small values with many ties, for argmin/argmax".into());
    }
    let op = vars[0].data_op().unwrap_or(Op::Plus);
    (
        reference::random_input(op, ty, n, seed),
        format!("generated for {op}"),
    )
}

/// Generated f32 input rounded to a 16-bit storage type (nearest even), as its bits; `None`
/// for any other type.
pub fn round_to(stored: ElemType, data: &HostVec) -> Option<Vec<u16>> {
    let HostVec::F32(v) = data else { return None };
    match stored {
        ElemType::F16 => Some(v.iter().map(|&x| clreduce::Half::from_f32(x).0).collect()),
        ElemType::BF16 => Some(v.iter().map(|&x| clreduce::Bf16::from_f32(x).0).collect()),
        _ => None,
    }
}

/// A variable's initial value (poisoned: not the identity, so an unwritten result shows).
pub fn initial(v: &VarOp, ty: ElemType, seed: u64, span: Option<usize>) -> Init {
    let Some(op) = v.data_op() else {
        // A mid value at index 5: it wins when nothing beats it, and loses ties to lower indices.
        return Init::Arg(reference::value_of(ty, 3), 5);
    };
    match span {
        None => Init::Scalar(reference::random_initial(op, ty, seed)),
        Some(len) => Init::Span(
            (0..len as u64)
                .map(|e| reference::random_initial(op, ty, seed.wrapping_add(e << 20)))
                .collect(),
        ),
    }
}

/// A custom identity must be neutral, or every partial result the device combines it into is
/// off: refuse it up front (on the input's first values and a sample value) rather than report
/// a mismatch. A combiner without an identity must at least evaluate on them.
pub fn check_custom_identities(vars: &[VarOp], ty: ElemType, data: &HostVec) -> CliResult<()> {
    for v in vars {
        if let VarOp::Custom { op, expr, .. } = v {
            let mut samples: Vec<Value> = (0..data.len().min(64)).map(|j| data.value(j)).collect();
            samples.push(reference::value_of(ty, 3));
            let probe = match op.identity_value() {
                Some(id) => reference::check_custom_identity(expr, id, &samples),
                None => samples
                    .iter()
                    .try_for_each(|&x| expr.eval(ty, x, x).map(drop)),
            };
            probe.map_err(|e| CliError::Usage(format!("--custom {:?}: {e}", op.expr())))?;
        }
    }
    Ok(())
}

/// The kernel body: with a span, the bin first, then one combine per variable.
pub fn reduce_body(vars: &[VarOp], ty: ElemType, span: Option<usize>) -> String {
    let mut parts = Vec::new();
    if let Some(len) = span {
        parts.push(format!(
            "const ulong bin = {};",
            reference::span_bin_cl(ty, "x[i]", len)
        ));
    }
    for (k, v) in vars.iter().enumerate() {
        let name = format!("r{k}");
        let target = match span {
            Some(_) => format!("{name}[bin]"),
            None => name.clone(),
        };
        parts.push(match v {
            VarOp::Builtin(Op::Plus) => format!("{target} += x[i];"),
            VarOp::Arg { .. } => format!("combine({name}, x[i], i);"),
            _ => format!("combine({target}, x[i]);"),
        });
    }
    parts.join(" ")
}
