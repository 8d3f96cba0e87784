//! Custom combiners: [`CustomOp`] (an OpenCL C expression over `a` and `b`, with an identity or
//! without one) and the check of a declared identity on sample values of its type, evaluated on
//! the host by [`Expr`] (the launch runs it at plan time; the CLI's `--identity` check too).

use super::expr::Expr;
use super::Op;
use crate::types::{ElemType, Value};

/// A user-defined combiner: an OpenCL C expression over the operands `a` and `b`, with an
/// identity or without one (an identity-less reduction, seed 003 missing feature 5).
///
/// Its plan never uses atomics or group functions (clreduce cannot know what the expression
/// computes) unless [`CustomOp::atomic`] declares that it equals a built-in op.
///
/// A declared identity is checked on sample values before the launch: one that is not neutral
/// is [`Error::NotAnIdentity`](crate::Error::NotAnIdentity). Without an identity,
/// `initialize_to_identity` is [`Error::NoIdentity`](crate::Error::NoIdentity).
///
/// ```
/// use clreduce::{reduction, CustomOp, Error, Kernel, Queue, Range};
/// # fn main() -> clreduce::Result<()> {
/// let queue = Queue::default()?;
/// let x = queue.buffer_from(&[3.0f32, -7.5, 2.0])?;
/// let m = queue.buffer_from(&[0.0f32])?;
/// let absmax = CustomOp::new("fabs(a) < fabs(b) ? b : a").identity(0.0f32);
/// let k = Kernel::new("combine(sum, x[i]);").arg("x", &x);
/// queue.parallel_for_reduce(Range::new(3), reduction(&m, absmax), k.clone())?;
/// assert_eq!(m.get(0)?, -7.5);
///
/// let wrong = CustomOp::new("a + b").identity(1.0f32);
/// let r = queue.parallel_for_reduce(Range::new(3), reduction(&m, wrong), k);
/// assert!(matches!(r, Err(Error::NotAnIdentity { .. })));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct CustomOp {
    expr: String,
    identity: Option<Value>,
    atomic: Option<Op>,
}

impl CustomOp {
    /// `expr` combines `a` and `b`, e.g. `a * b`, `max(a, b)`, `fabs(a) < fabs(b) ? a : b`.
    pub fn new(expr: &str) -> CustomOp {
        CustomOp {
            expr: expr.trim().to_string(),
            identity: None,
            atomic: None,
        }
    }
    /// The identity: `expr(identity, x) == x` for every x (its type must be the reduction's).
    pub fn identity(mut self, v: impl Into<Value>) -> CustomOp {
        self.identity = Some(v.into());
        self
    }
    /// Declares that the combiner computes exactly the built-in `op`, so the plan may use that
    /// op's atomics. clreduce cannot check the claim: a wrong one gives wrong results.
    pub fn atomic(mut self, op: Op) -> CustomOp {
        self.atomic = Some(op);
        self
    }
    /// The combiner expression, as given to [`CustomOp::new`] (trimmed).
    pub fn expr(&self) -> &str {
        &self.expr
    }
    /// The declared identity; `None` for an identity-less combiner.
    pub fn identity_value(&self) -> Option<Value> {
        self.identity
    }
    /// The built-in op declared with [`CustomOp::atomic`]; `None` when none was.
    pub fn declared_atomic(&self) -> Option<Op> {
        self.atomic
    }
}

impl PartialEq for CustomOp {
    fn eq(&self, o: &Self) -> bool {
        self.expr == o.expr
            && self.atomic == o.atomic
            && self.identity.map(|v| (v.ty(), v.to_bytes()))
                == o.identity.map(|v| (v.ty(), v.to_bytes()))
    }
}
impl Eq for CustomOp {}
impl std::hash::Hash for CustomOp {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.expr.hash(h);
        self.atomic.hash(h);
        self.identity.map(|v| (v.ty(), v.to_bytes())).hash(h);
    }
}

/// Operands on which a combiner does not give back the value combined with its identity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NotNeutral {
    /// The combiner's `a`.
    pub a: Value,
    /// The combiner's `b`.
    pub b: Value,
    /// What the combiner gives for (a, b).
    pub got: Value,
    /// The operand that is not the identity, which it should have given.
    pub want: Value,
}

/// The first sample `x` (in order, `(identity, x)` before `(x, identity)`) on which `expr`
/// does not give `x` back (NaN counts as NaN), or `None` when the identity is neutral on every
/// sample. `Err`: the host evaluator cannot evaluate the combiner on a sample (the message
/// says why).
pub fn identity_counterexample(
    expr: &Expr,
    identity: Value,
    samples: &[Value],
) -> Result<Option<NotNeutral>, String> {
    let ty = identity.ty();
    for &x in samples {
        for (a, b) in [(identity, x), (x, identity)] {
            let got = expr.eval(ty, a, b)?;
            let same = got == x || (got.to_f64().is_nan() && x.to_f64().is_nan());
            if !same {
                return Ok(Some(NotNeutral { a, b, got, want: x }));
            }
        }
    }
    Ok(None)
}

/// Finite sample values of `ty` on which the library checks a declared identity: 0, small
/// values of both signs, fractions for floats, large magnitudes, and the type's extremes
/// (the largest finite values for floats; infinities and NaN are left out, so an identity
/// such as `FLT_MAX` for a minimum over finite data is accepted).
pub fn identity_samples(ty: ElemType) -> Vec<Value> {
    match ty {
        ElemType::I32 => [0, 1, -1, 2, 3, -7, 100, -12345, 1 << 20, i32::MIN, i32::MAX]
            .map(Value::I32)
            .to_vec(),
        ElemType::U32 => [0, 1, 2, 3, 7, 100, 12345, 1 << 31, u32::MAX]
            .map(Value::U32)
            .to_vec(),
        ElemType::I64 => [0, 1, -1, 2, 3, -7, 100, -12345, 1 << 40, i64::MIN, i64::MAX]
            .map(Value::I64)
            .to_vec(),
        ElemType::U64 => [0, 1, 2, 3, 7, 100, 12345, 1 << 63, u64::MAX]
            .map(Value::U64)
            .to_vec(),
        ElemType::F32 => [
            0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            -2.25,
            1e-5,
            1e20,
            -1e20,
            f32::MAX,
            f32::MIN,
        ]
        .map(Value::F32)
        .to_vec(),
        ElemType::F64 | ElemType::F16 | ElemType::BF16 => [
            0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            -2.25,
            1e-5,
            1e20,
            -1e20,
            f64::MAX,
            f64::MIN,
        ]
        .map(Value::F64)
        .to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_identities_are_checked_on_samples() {
        let mul = Expr::parse("a*b").unwrap();
        // The issue's `a + b` with 5, and the usual identities.
        let add = Expr::parse("a + b").unwrap();
        let c = identity_counterexample(&add, Value::I32(5), &identity_samples(ElemType::I32))
            .unwrap()
            .unwrap();
        assert_eq!(
            c,
            NotNeutral {
                a: Value::I32(5),
                b: Value::I32(0),
                got: Value::I32(5),
                want: Value::I32(0)
            }
        );
        let fine = [
            ("a + b", Value::I32(0)),
            ("a * b", Value::U64(1)),
            ("max(a, b)", Value::I64(i64::MIN)),
            ("min(a, b)", Value::U32(u32::MAX)),
            ("a & b", Value::I32(-1)),
            ("a ^ b", Value::U64(0)),
            ("a * b", Value::F32(1.0)),
            ("a + b", Value::F64(0.0)),
            ("fmax(a, b)", Value::F32(f32::NEG_INFINITY)),
            ("fmin(a, b)", Value::F64(f64::MAX)),
        ];
        for (src, id) in fine {
            let e = Expr::parse(src).unwrap();
            let c = identity_counterexample(&e, id, &identity_samples(id.ty()));
            assert_eq!(c, Ok(None), "{src} with {id}");
        }
        let c = identity_counterexample(&mul, Value::F64(2.0), &identity_samples(ElemType::F64));
        assert_eq!(c.unwrap().unwrap().want, Value::F64(1.0));
        // A combiner the host cannot evaluate on a sample is an Err, not a verdict.
        let div = Expr::parse("b / a").unwrap();
        assert!(identity_counterexample(&div, Value::I32(0), &[Value::I32(3)]).is_err());
    }
}
