//! The host form's reducers: what a kernel closure's reducer parameters are when rustc
//! type-checks it and when it runs on the host. `Reducer<T>` (`*sum += v`, `sum.combine(v)`),
//! `ArgReducer<T>` (`best.combine(v, i)`) and `SpanReducer<T>` (`hist[k] += v`). They fold
//! with the ops' host combine, as the host references do (`ops::host`'s `Fold` and
//! `arg_wins`): integers exactly with wrapping, floats in float64 with the sum of magnitudes
//! kept for error bounds, custom combiners through the expression evaluator. Misuse the device would refuse (an operator the op does not allow,
//! a span index out of range) is recorded as a typed error that `run_on_host` returns.

use super::host::{ClosureElem, Num, Sink};
use super::RedKind;
use crate::api::host::HostReduction;
use crate::ops::host::{arg_wins, int_value, Fold, HostOp, ParsedOp, Reference};
use crate::{ElemType, Error, Op, Operator, Result, Value};
use std::marker::PhantomData;
use std::rc::Rc;

/// The combiner of one reduction on the host.
struct Comb {
    op: ParsedOp,
    name: String,
}

impl Comb {
    fn new(r: &HostReduction, name: &str) -> Result<Comb> {
        let op = ParsedOp::new(&r.op).map_err(|e| Error::BadArgument {
            name: name.to_string(),
            problem: match &r.op {
                Operator::Custom(c) => {
                    format!(
                        "the host cannot evaluate the custom combiner {:?}: {e}",
                        c.expr()
                    )
                }
                op => format!("the host cannot combine {op}: {e}"),
            },
        })?;
        Ok(Comb {
            op,
            name: name.to_string(),
        })
    }
    fn host(&self) -> std::result::Result<HostOp<'_>, String> {
        self.op
            .host()
            .ok_or_else(|| format!("{} is not a plain combiner", self.op.op()))
    }
    fn allows(&self, shorthand: &str) -> bool {
        self.op.op().shorthands().contains(&shorthand)
    }
}

/// A reducer of a plain (not span, not argmin/argmax) reduction, as a kernel closure's
/// parameter: `*sum += v` (and `*=`, `&=`, `|=`, `^=`, where the op allows them) or
/// `sum.combine(v)` for every op.
pub struct Reducer<T: ClosureElem> {
    comb: Rc<Comb>,
    fold: Fold,
    sink: Sink,
    _t: PhantomData<T>,
}

impl<T: ClosureElem> Reducer<T> {
    fn start(comb: Rc<Comb>, init: Option<Value>, sink: Sink) -> Reducer<T> {
        Reducer {
            comb,
            fold: Fold::start(T::TYPE, init),
            sink,
            _t: PhantomData,
        }
    }

    /// Combines `v` into the reducer with the reduction's op (SYCL's `combine`).
    pub fn combine(&mut self, v: T) {
        let pushed = self
            .comb
            .host()
            .and_then(|op| self.fold.push(op, v.value()));
        if let Err(e) = pushed {
            self.sink.fail(Error::BadArgument {
                name: self.comb.name.clone(),
                problem: format!("combining on the host: {e}"),
            });
        }
    }

    fn shorthand(&mut self, s: &str, v: T) {
        if self.comb.allows(s) {
            self.combine(v);
        } else {
            self.sink.fail(Error::ReducerOperator {
                name: self.comb.name.clone(),
                operator: s.to_string(),
                op: self.comb.op.op().to_string(),
            });
        }
    }

    fn result(&self) -> Result<Reference> {
        self.fold.finish().ok_or_else(|| Error::NoIdentity {
            op: self.comb.op.op().to_string(),
            ty: T::TYPE,
            needed_for: "a value for an identity-less reduction that combined nothing",
        })
    }
}

macro_rules! shorthand {
    ($tr:ident, $f:ident, $s:literal) => {
        impl<T: ClosureElem> std::ops::$tr<T> for Reducer<T> {
            fn $f(&mut self, v: T) {
                self.shorthand($s, v)
            }
        }
    };
}
shorthand!(AddAssign, add_assign, "+=");
shorthand!(MulAssign, mul_assign, "*=");
shorthand!(BitAndAssign, bitand_assign, "&=");
shorthand!(BitOrAssign, bitor_assign, "|=");
shorthand!(BitXorAssign, bitxor_assign, "^=");

/// A reducer of an argmin or argmax reduction: `best.combine(value, index)` keeps the smallest
/// (largest) value and, among equal values, the lowest index.
pub struct ArgReducer<T: ClosureElem> {
    max: bool,
    best: (Value, u64),
    _t: PhantomData<T>,
}

impl<T: ClosureElem> ArgReducer<T> {
    /// Combines the pair (`value`, `index`).
    pub fn combine(&mut self, value: T, index: usize) {
        let (b, bi) = self.best;
        let x = value.value();
        if arg_wins(self.max, x, index as u64, b, bi) {
            self.best = (x, index as u64);
        }
    }
}

/// A reducer of a span reduction: `hist[k] += v` or `hist[k].combine(v)` combines into element
/// `k`, each element a [`Reducer`] of its own.
pub struct SpanReducer<T: ClosureElem> {
    bins: Vec<Reducer<T>>,
    /// Given out for an index out of range (the error is recorded).
    spare: Reducer<T>,
    name: String,
    sink: Sink,
}

impl<T: ClosureElem> std::ops::Index<usize> for SpanReducer<T> {
    type Output = Reducer<T>;
    fn index(&self, k: usize) -> &Reducer<T> {
        self.bins.get(k).unwrap_or(&self.spare)
    }
}

impl<T: ClosureElem> std::ops::IndexMut<usize> for SpanReducer<T> {
    fn index_mut(&mut self, k: usize) -> &mut Reducer<T> {
        let len = self.bins.len();
        match self.bins.get_mut(k) {
            Some(r) => r,
            None => {
                self.sink.fail(Error::BadArgument {
                    name: self.name.clone(),
                    problem: format!("span index {k} out of range 0..{len} (on the device it would write out of bounds)"),
                });
                &mut self.spare
            }
        }
    }
}

/// A reducer's result on the host.
#[derive(Debug, Clone, PartialEq)]
pub enum HostResult {
    /// A plain reduction: the fold of the initial value (unless initialize_to_identity) and
    /// everything combined, exact for integers and in float64 for floats.
    Value {
        /// The variable's element type.
        ty: ElemType,
        /// The fold.
        reference: Reference,
    },
    /// argmin / argmax: the value and its (lowest) index.
    Arg {
        /// The winning value.
        value: Value,
        /// Its lowest index.
        index: u64,
    },
    /// A span: one fold per element.
    Span {
        /// The span's element type.
        ty: ElemType,
        /// One fold per span element, in order.
        bins: Vec<Reference>,
    },
}

/// A reference value in its type (floats rounded from float64).
pub fn typed(ty: ElemType, r: &Reference) -> Value {
    match r.exact {
        Some(x) => int_value(ty, x),
        None if ty == ElemType::F32 => Value::F32(r.value as f32),
        None => Value::F64(r.value),
    }
}

impl HostResult {
    /// The value of a plain reduction in its type, or of an argmin/argmax.
    pub fn value(&self) -> Option<Value> {
        match self {
            HostResult::Value { ty, reference } => Some(typed(*ty, reference)),
            HostResult::Arg { value, .. } => Some(*value),
            HostResult::Span { .. } => None,
        }
    }
}

/// A reduction as a host reducer starts from it (opaque).
#[doc(hidden)]
pub struct RedInput<'x>(pub(crate) &'x HostReduction);

/// A reducer parameter type of the host form (implemented by [`Reducer`], [`ArgReducer`] and
/// [`SpanReducer`]).
pub trait HostRed: Sized {
    #[doc(hidden)]
    const KIND: RedKind;
    #[doc(hidden)]
    fn elem() -> ElemType;
    #[doc(hidden)]
    fn make(r: RedInput<'_>, sink: &Sink, name: &str) -> Result<Self>;
    #[doc(hidden)]
    fn finish(self) -> Result<HostResult>;
}

/// Checks that reduction `r` is what a reducer of `kind` over `T` needs.
fn check<T: ClosureElem>(r: &HostReduction, kind: RedKind, name: &str) -> Result<()> {
    if r.ty != T::TYPE {
        return Err(Error::TypeMismatch {
            name: format!("reducer {name} of the kernel closure"),
            expected: r.ty,
            found: T::TYPE,
        });
    }
    let actual = match (&r.op, r.span) {
        (_, Some(_)) => RedKind::Span,
        (op, None) if op.is_arg() => RedKind::Arg,
        _ => RedKind::Plain,
    };
    if actual != kind {
        return Err(Error::BadArgument {
            name: name.to_string(),
            problem: format!(
                "the closure uses it as {} {} but its reduction ({}) needs {} {}",
                kind.article(),
                kind.name(),
                r.op,
                actual.article(),
                actual.name()
            ),
        });
    }
    Ok(())
}

/// The start of a plain fold: the initial value, or the identity (none when identity-less).
fn start<T: ClosureElem>(r: &HostReduction, k: usize, name: &str) -> Result<Option<Value>> {
    if r.init_to_identity {
        if let (Operator::Custom(c), None) = (&r.op, r.op.identity(r.ty)) {
            return Err(Error::NoIdentity {
                op: format!("custom({})", c.expr()),
                ty: r.ty,
                needed_for: "initialize_to_identity",
            });
        }
        return Ok(r.op.identity(r.ty));
    }
    let size = T::TYPE.size();
    let b = r
        .bytes
        .get(k * size..(k + 1) * size)
        .ok_or_else(|| Error::BufferTooShort {
            name: name.to_string(),
            len: r.bytes.len() / size,
            need: k + 1,
        })?;
    Ok(Some(T::from_le(b).value()))
}

impl<T: ClosureElem> HostRed for Reducer<T> {
    const KIND: RedKind = RedKind::Plain;
    fn elem() -> ElemType {
        T::TYPE
    }
    fn make(RedInput(r): RedInput<'_>, sink: &Sink, name: &str) -> Result<Self> {
        check::<T>(r, RedKind::Plain, name)?;
        let init = start::<T>(r, 0, name)?;
        Ok(Reducer::start(
            Rc::new(Comb::new(r, name)?),
            init,
            sink.clone(),
        ))
    }
    fn finish(self) -> Result<HostResult> {
        Ok(HostResult::Value {
            ty: T::TYPE,
            reference: self.result()?,
        })
    }
}

impl<T: ClosureElem> HostRed for ArgReducer<T> {
    const KIND: RedKind = RedKind::Arg;
    fn elem() -> ElemType {
        T::TYPE
    }
    fn make(RedInput(r): RedInput<'_>, _sink: &Sink, name: &str) -> Result<Self> {
        check::<T>(r, RedKind::Arg, name)?;
        let max = matches!(r.op, Operator::ArgMax);
        let best = if r.init_to_identity {
            let op = if max { Op::Maximum } else { Op::Minimum };
            let id = op.identity(T::TYPE).ok_or_else(|| Error::NoIdentity {
                op: r.op.to_string(),
                ty: T::TYPE,
                needed_for: "initialize_to_identity",
            })?;
            (id, u64::MAX)
        } else {
            let v = start::<T>(r, 0, name)?.ok_or_else(|| Error::BadArgument {
                name: name.to_string(),
                problem: "no initial value".into(),
            })?;
            (Num::of(v).value(T::TYPE), r.index.unwrap_or(u64::MAX))
        };
        Ok(ArgReducer {
            max,
            best,
            _t: PhantomData,
        })
    }
    fn finish(self) -> Result<HostResult> {
        Ok(HostResult::Arg {
            value: self.best.0,
            index: self.best.1,
        })
    }
}

impl<T: ClosureElem> HostRed for SpanReducer<T> {
    const KIND: RedKind = RedKind::Span;
    fn elem() -> ElemType {
        T::TYPE
    }
    fn make(RedInput(r): RedInput<'_>, sink: &Sink, name: &str) -> Result<Self> {
        check::<T>(r, RedKind::Span, name)?;
        let comb = Rc::new(Comb::new(r, name)?);
        let len = r.span.unwrap_or(0);
        let bins = (0..len)
            .map(|k| {
                Ok(Reducer::start(
                    comb.clone(),
                    start::<T>(r, k, name)?,
                    sink.clone(),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SpanReducer {
            bins,
            spare: Reducer::start(comb, None, sink.clone()),
            name: name.to_string(),
            sink: sink.clone(),
        })
    }
    fn finish(self) -> Result<HostResult> {
        Ok(HostResult::Span {
            ty: T::TYPE,
            bins: self
                .bins
                .iter()
                .map(Reducer::result)
                .collect::<Result<_>>()?,
        })
    }
}
