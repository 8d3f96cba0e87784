//! Partial results of one reduction variable and their combination on the host: what a share
//! of a multi-device launch (and an MPI rank, `src/mpi/`) hands back ([`Partial`]), how two
//! partials combine ([`Combiner::combine`]) and how the total meets the variable's initial
//! value ([`Combiner::finish`]). The arithmetic is the device's, operation for operation:
//! the ops' host combine (`ops::host`: integers wrap, min/max and argmin/argmax use the kernels'
//! comparisons, custom combiners are evaluated by `ops::expr` with OpenCL C semantics), and
//! exact sums merge superaccumulators (`exact::Superacc`), so the result is bit-identical to
//! one device's.

use crate::error::{Error, Result};
use crate::exact::{Format, Superacc};
use crate::ops::host::{arg_wins, ParsedOp};
use crate::ops::Operator;
use crate::plan::{self, Determinism};
use crate::types::{ElemType, Value};

/// The partial result of one element of a variable (one per span element).
#[derive(Debug, Clone, PartialEq)]
pub enum Partial {
    /// An op with an identity (built-in or custom): the share's value, started at the
    /// identity (`initialize_to_identity`).
    Value(Value),
    /// argmin/argmax: the value and its global index (`u64::MAX`: nothing seen).
    Arg(Value, u64),
    /// An identity-less op: the share's value, or `None` if it combined nothing.
    Flagged(Option<Value>),
    /// An exact sum: the share's superaccumulator (no initial value, not rounded).
    Exact(Superacc),
}

/// What kind of partial a variable hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartialKind {
    /// [`Partial::Value`]: ops with an identity.
    Value,
    /// [`Partial::Arg`]: argmin and argmax.
    Arg,
    /// [`Partial::Flagged`]: identity-less ops.
    Flagged,
    /// [`Partial::Exact`]: exact float sums.
    Exact,
}

/// Combines the partials of one variable: its operator and type, with the custom combiner
/// parsed once.
#[derive(Debug, Clone)]
pub struct Combiner {
    op: ParsedOp,
    ty: ElemType,
    kind: PartialKind,
}

impl Combiner {
    /// The combiner of a variable with `op` on `ty` under `det`. A custom combiner must be in
    /// `ops::expr`'s subset of OpenCL C (`Unsupported` otherwise: the host could not combine
    /// the shares with the device's semantics).
    pub fn new(op: &Operator, ty: ElemType, det: Determinism) -> Result<Combiner> {
        let kind = if plan::exact_sum(op, ty, det) {
            PartialKind::Exact
        } else if op.is_arg() {
            PartialKind::Arg
        } else if op.identity(ty).is_none() {
            PartialKind::Flagged
        } else {
            PartialKind::Value
        };
        let op = ParsedOp::new(op).map_err(|e| Error::Unsupported {
            what: match op {
                Operator::Custom(c) => format!("combining the partials of custom({}) on the host", c.expr()),
                _ => format!("combining the partials of {op} on the host"),
            },
            missing: format!("a combiner in the host evaluator's subset of OpenCL C (ops::expr): {e}"),
            device: "host".into(),
        })?;
        Ok(Combiner { op, ty, kind })
    }

    /// The kind of partial the variable hands back.
    pub fn kind(&self) -> PartialKind {
        self.kind
    }
    /// The variable's element type.
    pub fn ty(&self) -> ElemType {
        self.ty
    }
    /// The variable's operator.
    pub fn op(&self) -> &Operator {
        self.op.op()
    }

    /// The partial of a share that saw nothing (an empty share, an empty rank).
    pub fn empty(&self) -> Result<Partial> {
        Ok(match self.kind {
            PartialKind::Exact => Partial::Exact(Superacc::new(Format::for_type(self.ty)?)),
            PartialKind::Flagged => Partial::Flagged(None),
            PartialKind::Arg => Partial::Arg(self.identity()?, u64::MAX),
            PartialKind::Value => Partial::Value(self.identity()?),
        })
    }

    fn identity(&self) -> Result<Value> {
        self.op().identity(self.ty).ok_or_else(|| Error::NoIdentity {
            op: self.op().to_string(),
            ty: self.ty,
            needed_for: "an empty share",
        })
    }

    /// `a` combined with `b` (a from the lower devices or ranks: float results may depend on
    /// the order, as on one device; everything else does not).
    pub fn combine(&self, a: &Partial, b: &Partial) -> Result<Partial> {
        Ok(match (a, b) {
            (Partial::Value(x), Partial::Value(y)) => Partial::Value(self.values(*x, *y)?),
            (Partial::Arg(x, i), Partial::Arg(y, j)) => {
                if arg_wins(*self.op() == Operator::ArgMax, *y, *j, *x, *i) {
                    b.clone()
                } else {
                    a.clone()
                }
            }
            (Partial::Flagged(x), Partial::Flagged(y)) => Partial::Flagged(match (x, y) {
                (Some(x), Some(y)) => Some(self.values(*x, *y)?),
                (x, None) => *x,
                (None, y) => *y,
            }),
            (Partial::Exact(x), Partial::Exact(y)) => {
                let mut s = x.clone();
                s.merge(y)?;
                Partial::Exact(s)
            }
            _ => {
                return Err(Error::BadArgument {
                    name: self.op().to_string(),
                    problem: "partials of different kinds cannot be combined".into(),
                })
            }
        })
    }

    /// The variable's value: the total combined with the initial value (`None` under
    /// `initialize_to_identity`), and for argmin/argmax the index. `Ok(None)`: the variable stays
    /// as it is (an identity-less variable that combined nothing).
    pub fn finish(
        &self,
        total: &Partial,
        initial: Option<(Value, u64)>,
    ) -> Result<Option<(Value, Option<u64>)>> {
        Ok(match (total, initial) {
            (Partial::Value(v), None) => Some((*v, None)),
            (Partial::Value(v), Some((v0, _))) => Some((self.values(v0, *v)?, None)),
            (Partial::Arg(v, i), None) => Some((*v, Some(*i))),
            (Partial::Arg(..), Some((v0, i0))) => {
                match self.combine(&Partial::Arg(v0, i0), total)? {
                    Partial::Arg(v, i) => Some((v, Some(i))),
                    _ => unreachable!("argmin/argmax combine to a pair"),
                }
            }
            (Partial::Flagged(None), _) => None,
            (Partial::Flagged(Some(v)), None) => Some((*v, None)),
            (Partial::Flagged(Some(v)), Some((v0, _))) => Some((self.values(v0, *v)?, None)),
            (Partial::Exact(s), init) => {
                let mut s = s.clone();
                match init.map(|(v, _)| v) {
                    Some(Value::F32(x)) => s.add_f32(x),
                    Some(Value::F64(x)) => s.add_f64(x)?,
                    Some(other) => {
                        return Err(Error::TypeMismatch {
                            name: "the initial value of an exact sum".into(),
                            expected: self.ty,
                            found: other.ty(),
                        })
                    }
                    None => {}
                }
                Some(match self.ty {
                    ElemType::F64 => (Value::F64(s.round_f64()), None),
                    _ => (Value::F32(s.round_f32()), None),
                })
            }
        })
    }

    /// Two values combined with the op, with the device's semantics (`ops::host`).
    fn values(&self, a: Value, b: Value) -> Result<Value> {
        match self.op.host() {
            Some(host) => host.combine(a, b),
            None => Err(Error::BadArgument {
                name: self.op().to_string(),
                problem: "argmin/argmax values combine as pairs".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{CustomOp, Op};

    fn c(op: impl Into<Operator>, ty: ElemType) -> Combiner {
        Combiner::new(&op.into(), ty, Determinism::Deterministic).unwrap()
    }

    #[test]
    fn integers_wrap_like_the_device() {
        let k = c(Op::Plus, ElemType::I32);
        let s = k
            .combine(
                &Partial::Value(Value::I32(i32::MAX)),
                &Partial::Value(Value::I32(2)),
            )
            .unwrap();
        assert_eq!(s, Partial::Value(Value::I32(i32::MIN + 1)));
        let k = c(Op::Multiplies, ElemType::U32);
        let p = k
            .combine(
                &Partial::Value(Value::U32(1 << 31)),
                &Partial::Value(Value::U32(2)),
            )
            .unwrap();
        assert_eq!(p, Partial::Value(Value::U32(0)));
    }

    #[test]
    fn argmin_takes_the_lowest_index_among_ties() {
        let k = c(Operator::ArgMin, ElemType::F32);
        let a = Partial::Arg(Value::F32(1.0), 7);
        let b = Partial::Arg(Value::F32(1.0), 3);
        assert_eq!(k.combine(&a, &b).unwrap(), b);
        assert_eq!(k.combine(&b, &a).unwrap(), b);
        let e = k.empty().unwrap();
        assert_eq!(k.combine(&e, &a).unwrap(), a);
        let k = c(Operator::ArgMax, ElemType::I64);
        let a = Partial::Arg(Value::I64(5), 9);
        let b = Partial::Arg(Value::I64(4), 1);
        assert_eq!(k.combine(&b, &a).unwrap(), a);
        // The initial value takes part, with its index.
        let r = k.finish(&a, Some((Value::I64(5), 2))).unwrap();
        assert_eq!(r, Some((Value::I64(5), Some(2))));
    }

    #[test]
    fn identity_less_partials_skip_empty_shares() {
        let k = c(CustomOp::new("max(a, b)"), ElemType::I32);
        assert_eq!(k.kind(), PartialKind::Flagged);
        let a = Partial::Flagged(Some(Value::I32(4)));
        let e = Partial::Flagged(None);
        assert_eq!(k.combine(&e, &a).unwrap(), a);
        assert_eq!(k.combine(&a, &e).unwrap(), a);
        assert_eq!(
            k.finish(&a, Some((Value::I32(9), 0))).unwrap(),
            Some((Value::I32(9), None))
        );
        assert_eq!(k.finish(&e, Some((Value::I32(9), 0))).unwrap(), None);
    }

    #[test]
    fn custom_combiners_evaluate_on_the_host() {
        let k = c(CustomOp::new("a * b + 1").identity(0i32), ElemType::I32);
        let r = k
            .combine(
                &Partial::Value(Value::I32(3)),
                &Partial::Value(Value::I32(4)),
            )
            .unwrap();
        assert_eq!(r, Partial::Value(Value::I32(13)));
        let bad = Combiner::new(
            &CustomOp::new("my_fn(a, b)").into(),
            ElemType::I32,
            Determinism::Deterministic,
        );
        assert!(matches!(bad, Err(Error::Unsupported { .. })));
    }

    #[test]
    fn exact_partials_merge_and_round_once() {
        let k = Combiner::new(&Op::Plus.into(), ElemType::F32, Determinism::Exact).unwrap();
        assert_eq!(k.kind(), PartialKind::Exact);
        let xs = [1e8f32, 1.0, -1e8, 0.5];
        let mut a = Superacc::new(Format::F32);
        a.add_f32(xs[0]);
        a.add_f32(xs[1]);
        let mut b = Superacc::new(Format::F32);
        b.add_f32(xs[2]);
        b.add_f32(xs[3]);
        let t = k.combine(&Partial::Exact(a), &Partial::Exact(b)).unwrap();
        assert_eq!(k.finish(&t, None).unwrap(), Some((Value::F32(1.5), None)));
        assert_eq!(
            k.finish(&t, Some((Value::F32(0.25), 0))).unwrap(),
            Some((Value::F32(1.75), None))
        );
    }
}
