//! What a float check accepts beyond its error bound: the overflow rule of float sums
//! (design/algorithms.md, "Float sums that overflow"). Imports `ops` and `types` only
//! (`reference` uses it).

use crate::ops::Op;
use crate::types::ElemType;

/// The threshold at which a value rounds to infinity in `ty` (round to nearest): the largest
/// finite value plus half an ulp; `None` for integer types.
fn overflow_threshold(ty: ElemType) -> Option<f64> {
    match ty {
        // 2^128 - 2^103: f32::MAX + 2^103.
        ElemType::F32 => Some(f32::MAX as f64 + 2f64.powi(103)),
        ElemType::F16 => Some(65520.0),
        ElemType::F64 => Some(f64::MAX),
        _ => None,
    }
}

/// The overflow rule of float sums (design/algorithms.md, "Float sums that overflow"): a
/// device result of +inf, -inf or NaN is accepted when some partial sum of the plan can round
/// to infinity, i.e. when `sum_abs + bound` (the largest magnitude a partial sum can reach:
/// every partial sum is at most Σ|x| exactly, the initial value included, which is the
/// reference's `sum_abs`, and its rounding at most the plan's bound beyond) reaches the
/// overflow threshold of `ty`. Beyond it IEEE addition
/// gives ±inf, and inf + -inf gives NaN, depending on the combination order, which clreduce
/// does not promise. `Some(why)` when the rule accepts `got`; `None` otherwise (then the
/// usual bound applies). Only for sums (`behaves_as == Some(Plus)`): the other built-in ops
/// select an operand and cannot overflow; products are not covered.
pub fn sum_overflow(
    behaves_as: Option<Op>,
    ty: ElemType,
    got: f64,
    sum_abs: f64,
    bound: f64,
) -> Option<String> {
    if behaves_as != Some(Op::Plus) || got.is_finite() {
        return None;
    }
    // None for integer types: they wrap, exactly.
    let limit = overflow_threshold(ty)?;
    let reach = sum_abs + bound;
    (reach >= limit || !reach.is_finite()).then(|| {
        format!(
            "overflow: partial sums can reach {reach:.3e} (sum of |x| and the bound), beyond {ty}'s range, where IEEE addition gives +-inf or NaN"
        )
    })
}
