//! What an op computes on the host: the one definition of each built-in op's arithmetic
//! ([`Op::combine`], generic over the element types, as kernels/var.cl's `clr_eop` computes it),
//! the argmin/argmax rule ([`arg_wins`]), custom combiners through [`Expr`] ([`HostOp`],
//! [`ParsedOp`]) and a left fold ([`Fold`], giving a [`Reference`]). Multi's and MPI's combine of
//! partials (`multi::combine`), the closures' host form (`closure::reducers`) and the test
//! references (`check::reference`) all use these; none writes an op's arithmetic itself.
//!
//! Two precisions, one definition: [`Op::combine`] runs in the values' own type (integers wrap,
//! f32 rounds to f32: the device's result, bit for bit), [`Op::combine_int`] and
//! [`Op::combine_f64`] run the same arithmetic on exact integers (wrapped to the type after each
//! step, so the same result) and in float64 (the references' more precise fold).

use super::expr::Expr;
use super::{Op, Operator};
use crate::error::{Error, Result};
use crate::types::{ElemType, Value};
use std::cmp::Ordering;

/// An element type the built-in ops combine, with the device's arithmetic: integers wrap,
/// floats round in their own width; bitwise ops exist for integers only.
trait Arith: Copy + PartialOrd {
    const ZERO: Self;
    const ONE: Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// `op` (one of and, or, xor) on the bits; `None` for floats.
    fn bits(op: Op, a: Self, b: Self) -> Option<Self>;
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn bits(op: Op, a: Self, b: Self) -> Option<Self> {
                match op {
                    Op::BitAnd => Some(a & b),
                    Op::BitOr => Some(a | b),
                    Op::BitXor => Some(a ^ b),
                    _ => None,
                }
            }
        }
    )*};
}
int_arith!(i32, u32, i64, u64);

macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn bits(_: Op, _: Self, _: Self) -> Option<Self> {
                None
            }
        }
    )*};
}
float_arith!(f32, f64);

/// `op` on `a` and `b`, as kernels/var.cl's `clr_eop`: min/max select with `<` (a NaN operand
/// compares false, so `min(a, NaN)` is `a` and `min(NaN, b)` is NaN), logical ops give 0 or 1
/// (NaN counts as true). `None`: a bitwise op on a float.
fn apply<T: Arith>(op: Op, a: T, b: T) -> Option<T> {
    let truth = |x: T| x != T::ZERO;
    let of = |t: bool| if t { T::ONE } else { T::ZERO };
    Some(match op {
        Op::Plus => a.add(b),
        Op::Multiplies => a.mul(b),
        Op::Minimum => {
            if b < a {
                b
            } else {
                a
            }
        }
        Op::Maximum => {
            if a < b {
                b
            } else {
                a
            }
        }
        Op::BitAnd | Op::BitOr | Op::BitXor => T::bits(op, a, b)?,
        Op::LogicalAnd => of(truth(a) && truth(b)),
        Op::LogicalOr => of(truth(a) || truth(b)),
    })
}

impl Op {
    /// `a` combined with `b` in their own type, with the device's semantics (integers wrap,
    /// f32 rounds to f32): what multi and MPI combine partials with. Errors: a bitwise op on
    /// floats (`Unsupported`), operands of different types (`TypeMismatch`).
    pub fn combine(self, a: Value, b: Value) -> Result<Value> {
        let r = match (a, b) {
            (Value::I32(x), Value::I32(y)) => apply(self, x, y).map(Value::I32),
            (Value::U32(x), Value::U32(y)) => apply(self, x, y).map(Value::U32),
            (Value::I64(x), Value::I64(y)) => apply(self, x, y).map(Value::I64),
            (Value::U64(x), Value::U64(y)) => apply(self, x, y).map(Value::U64),
            (Value::F32(x), Value::F32(y)) => apply(self, x, y).map(Value::F32),
            (Value::F64(x), Value::F64(y)) => apply(self, x, y).map(Value::F64),
            (a, b) => {
                return Err(Error::TypeMismatch {
                    name: format!("{self:?} of two values"),
                    expected: a.ty(),
                    found: b.ty(),
                })
            }
        };
        r.ok_or_else(|| Error::Unsupported {
            what: format!("{self:?} on {}", a.ty()),
            missing: "SYCL defines bitwise ops for integer types only".into(),
            device: "host".into(),
        })
    }

    /// [`Op::combine`] in float64 (the references fold floats in float64). Panics for the
    /// bitwise ops, which are integer-only.
    pub fn combine_f64(self, a: f64, b: f64) -> f64 {
        apply(self, a, b).expect("bitwise ops are integer-only")
    }

    /// [`Op::combine`] on exact integers of type `ty` (an integer type), wrapped to the type:
    /// the references' and the closures' integer fold.
    pub fn combine_int(self, ty: ElemType, a: i128, b: i128) -> i128 {
        let (a, b) = (int_value(ty, a), int_value(ty, b));
        match self.combine(a, b) {
            Ok(v) => v.as_int().expect("an integer type gives an integer"),
            Err(e) => panic!("combine_int on {ty}: {e}"),
        }
    }
}

/// Wraps an integer to the range of `ty` as two's complement arithmetic would (floats: `v`).
pub fn wrap_to(ty: ElemType, v: i128) -> i128 {
    match ty {
        ElemType::I32 => v as i32 as i128,
        ElemType::U32 => v as u32 as i128,
        ElemType::I64 => v as i64 as i128,
        ElemType::U64 => v as u64 as i128,
        _ => v,
    }
}

/// An integer as a value of type `ty` (integers wrap to the width; floats convert).
pub fn int_value(ty: ElemType, v: i128) -> Value {
    match ty {
        ElemType::I32 => Value::I32(v as i32),
        ElemType::U32 => Value::U32(v as u32),
        ElemType::I64 => Value::I64(v as i64),
        ElemType::U64 => Value::U64(v as u64),
        ElemType::F32 => Value::F32(v as f32),
        ElemType::F64 | ElemType::F16 | ElemType::BF16 => Value::F64(v as f64),
    }
}

/// How `x` compares with `y` as the kernels compare them: integers exactly, floats as floats
/// (`None` when either is NaN: every comparison with NaN is false).
pub fn compare(x: Value, y: Value) -> Option<Ordering> {
    match (x.as_int(), y.as_int()) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => x.to_f64().partial_cmp(&y.to_f64()),
    }
}

/// The argmin (`max` false) / argmax rule of `clr_push` in kernels/var.cl: the pair (`x`, `i`)
/// replaces (`best`, `best_i`) when `x` is strictly better, or equal with a lower index. A NaN
/// compares false both ways, so it never wins (design/algorithms.md, "NaN in min, max, argmin
/// and argmax").
pub fn arg_wins(max: bool, x: Value, i: u64, best: Value, best_i: u64) -> bool {
    let better = if max {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    match compare(x, best) {
        Some(o) if o == better => true,
        Some(Ordering::Equal) => i < best_i,
        _ => false,
    }
}

/// A host combiner: a built-in op, or a custom expression over `a` and `b` (evaluated by
/// [`Expr::eval`]) with its identity, if it has one.
#[derive(Debug, Clone, Copy)]
pub enum HostOp<'a> {
    /// A built-in op.
    Builtin(Op),
    /// A custom combiner.
    Custom {
        /// The combiner, parsed.
        expr: &'a Expr,
        /// Its identity; `None` for an identity-less combiner.
        identity: Option<Value>,
    },
}

impl HostOp<'_> {
    /// The identity for `ty`, if there is one.
    pub fn identity(&self, ty: ElemType) -> Option<Value> {
        match *self {
            HostOp::Builtin(op) => op.identity(ty),
            HostOp::Custom { identity, .. } => identity,
        }
    }
    /// `a` combined with `b` in their own type ([`Op::combine`]; a custom expression with
    /// OpenCL C semantics). A custom combiner the host cannot evaluate is `BadArgument`.
    pub fn combine(&self, a: Value, b: Value) -> Result<Value> {
        match *self {
            HostOp::Builtin(op) => op.combine(a, b),
            HostOp::Custom { expr, .. } => {
                expr.eval(a.ty(), a, b).map_err(|e| Error::BadArgument {
                    name: format!("custom({})", expr.src()),
                    problem: format!("the host cannot combine {a} and {b}: {e}"),
                })
            }
        }
    }
    /// Combines two integers of type `ty` exactly (wrapping to the type).
    pub fn combine_int(&self, ty: ElemType, a: i128, b: i128) -> std::result::Result<i128, String> {
        match *self {
            HostOp::Builtin(op) => Ok(op.combine_int(ty, a, b)),
            HostOp::Custom { expr, .. } => expr
                .eval(ty, int_value(ty, a), int_value(ty, b))
                .map(|v| v.as_int().unwrap_or_else(|| v.to_f64() as i128)),
        }
    }
    /// Combines two floats in float64 (custom expressions are evaluated as f64).
    pub fn combine_f64(&self, a: f64, b: f64) -> std::result::Result<f64, String> {
        match *self {
            HostOp::Builtin(op) => Ok(op.combine_f64(a, b)),
            HostOp::Custom { expr, .. } => expr
                .eval(ElemType::F64, Value::F64(a), Value::F64(b))
                .map(|v| v.to_f64()),
        }
    }
}

/// An operator with its custom combiner parsed once: what the combine of partials and the
/// closures' host reducers hold.
#[derive(Debug, Clone)]
pub struct ParsedOp {
    op: Operator,
    expr: Option<Expr>,
}

impl ParsedOp {
    /// Parses a custom operator's expression; `Err` is the evaluator's message (the combiner
    /// is outside its subset of OpenCL C).
    pub fn new(op: &Operator) -> std::result::Result<ParsedOp, String> {
        let expr = match op {
            Operator::Custom(c) => Some(Expr::parse(c.expr())?),
            _ => None,
        };
        Ok(ParsedOp {
            op: op.clone(),
            expr,
        })
    }
    /// The operator.
    pub fn op(&self) -> &Operator {
        &self.op
    }
    /// The host combiner; `None` for argmin/argmax, whose values combine as pairs
    /// ([`arg_wins`]).
    pub fn host(&self) -> Option<HostOp<'_>> {
        match (&self.op, &self.expr) {
            (Operator::Builtin(op), _) => Some(HostOp::Builtin(*op)),
            (Operator::Custom(c), Some(expr)) => Some(HostOp::Custom {
                expr,
                identity: c.identity_value(),
            }),
            _ => None,
        }
    }
}

/// The host's answer for one reduction: the result of a fold (`ops::host::Fold`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// Exact result for integer types.
    pub exact: Option<i128>,
    /// Float64 result (also set for integers, for printing).
    pub value: f64,
    /// Sum of absolute values of everything combined (for float error bounds).
    pub sum_abs: f64,
    /// Number of elements combined (the initial value not counted).
    pub n: usize,
}

/// The running value of a fold.
#[derive(Debug, Clone, Copy)]
enum Acc {
    Int(Option<i128>),
    Float { v: Option<f64>, sum_abs: f64 },
}

/// A left fold on the host: integers exactly (wrapped to the type after every step), floats in
/// float64 with the sum of magnitudes kept for error bounds. Started from the initial value or,
/// without one, from the first element pushed (an identity-less reduction).
#[derive(Debug, Clone, Copy)]
pub struct Fold {
    ty: ElemType,
    acc: Acc,
    n: usize,
}

impl Fold {
    /// A fold of type `ty` starting at `start` (`None`: at the first element).
    pub fn start(ty: ElemType, start: Option<Value>) -> Fold {
        let acc = if ty.is_float() {
            let v = start.map(|v| v.to_f64());
            Acc::Float {
                v,
                sum_abs: v.map_or(0.0, f64::abs),
            }
        } else {
            Acc::Int(start.map(|v| v.as_int().unwrap_or_else(|| v.to_f64() as i128)))
        };
        Fold { ty, acc, n: 0 }
    }

    /// Combines `x` (of the fold's kind: an integer into an integer fold, a float into a float
    /// fold) with `op`. `Err`: the host could not evaluate the combiner; the fold is unchanged.
    pub fn push(&mut self, op: HostOp, x: Value) -> std::result::Result<(), String> {
        self.acc = match (self.acc, x.as_int()) {
            (Acc::Int(a), Some(x)) => Acc::Int(Some(match a {
                Some(a) => op.combine_int(self.ty, a, x)?,
                None => x,
            })),
            (Acc::Float { v, sum_abs }, None) => {
                let x = x.to_f64();
                Acc::Float {
                    v: Some(match v {
                        Some(a) => op.combine_f64(a, x)?,
                        None => x,
                    }),
                    sum_abs: sum_abs + x.abs(),
                }
            }
            _ => return Err(format!("a {} combined into a {} fold", x.ty(), self.ty)),
        };
        self.n += 1;
        Ok(())
    }

    /// The result; `None` for an identity-less fold of nothing.
    pub fn finish(&self) -> Option<Reference> {
        Some(match self.acc {
            Acc::Int(a) => {
                let a = wrap_to(self.ty, a?);
                Reference {
                    exact: Some(a),
                    value: a as f64,
                    sum_abs: 0.0,
                    n: self.n,
                }
            }
            Acc::Float { v, sum_abs } => Reference {
                exact: None,
                value: v?,
                sum_abs,
                n: self.n,
            },
        })
    }
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;
