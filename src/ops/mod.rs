//! Reduction operations: SYCL 2020's built-in function objects, their known identities per type
//! (SYCL 2020 §4.9.2, `known_identity`), which reducer shorthands they allow, and how they map to
//! OpenCL C atomics and group functions.

pub mod expr;

use crate::types::{ElemType, Value};
use std::fmt;

/// A built-in binary operation (SYCL 2020 `sycl::plus`, `sycl::minimum`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Sum (`sycl::plus`); identity 0. Named `sum`.
    Plus,
    /// Product (`sycl::multiplies`); identity 1. Named `prod`.
    Multiplies,
    /// Smallest value (`sycl::minimum`); identity the type's largest value (+inf for floats).
    /// Named `min`.
    Minimum,
    /// Largest value (`sycl::maximum`); identity the type's smallest value (-inf for floats).
    /// Named `max`.
    Maximum,
    /// Bitwise and (`sycl::bit_and`), integers only; identity all ones. Named `and`.
    BitAnd,
    /// Bitwise or (`sycl::bit_or`), integers only; identity 0. Named `or`.
    BitOr,
    /// Bitwise xor (`sycl::bit_xor`), integers only; identity 0. Named `xor`.
    BitXor,
    /// Logical and (`sycl::logical_and`): 1 when both are non-zero, else 0; identity 1.
    /// Named `land`.
    LogicalAnd,
    /// Logical or (`sycl::logical_or`): 1 when either is non-zero, else 0; identity 0.
    /// Named `lor`.
    LogicalOr,
}

pub use Op::*;

impl Op {
    /// Every built-in op, in declaration order.
    pub const ALL: [Op; 9] = [
        Plus, Multiplies, Minimum, Maximum, BitAnd, BitOr, BitXor, LogicalAnd, LogicalOr,
    ];

    /// Name used on the command line, in plans and in test names.
    pub fn name(self) -> &'static str {
        match self {
            Plus => "sum",
            Multiplies => "prod",
            Minimum => "min",
            Maximum => "max",
            BitAnd => "and",
            BitOr => "or",
            BitXor => "xor",
            LogicalAnd => "land",
            LogicalOr => "lor",
        }
    }

    /// Parses a command-line name (`sum`, `plus`, `min`, `minimum`, ...).
    pub fn parse(s: &str) -> crate::Result<Op> {
        let alias = match s {
            "plus" | "add" => "sum",
            "multiplies" | "mul" => "prod",
            "minimum" => "min",
            "maximum" => "max",
            "bit_and" => "and",
            "bit_or" => "or",
            "bit_xor" => "xor",
            "logical_and" => "land",
            "logical_or" => "lor",
            other => other,
        };
        Op::ALL
            .into_iter()
            .find(|o| o.name() == alias)
            .ok_or_else(|| crate::Error::UnknownName {
                kind: "op",
                name: s.to_string(),
                known: Op::ALL.iter().map(|o| o.name()).collect(),
            })
    }

    /// The id the kernels switch on (`CLR_OP_*` in kernels/common.cl).
    pub fn cl_id(self) -> &'static str {
        match self {
            Plus => "CLR_OP_PLUS",
            Multiplies => "CLR_OP_MUL",
            Minimum => "CLR_OP_MIN",
            Maximum => "CLR_OP_MAX",
            BitAnd => "CLR_OP_AND",
            BitOr => "CLR_OP_OR",
            BitXor => "CLR_OP_XOR",
            LogicalAnd => "CLR_OP_LAND",
            LogicalOr => "CLR_OP_LOR",
        }
    }

    /// Whether SYCL defines the op for this type (bitwise ops are integer-only).
    pub fn valid_for(self, ty: ElemType) -> bool {
        let bitwise_on_float = matches!(self, BitAnd | BitOr | BitXor) && ty.is_float();
        !bitwise_on_float && !ty.is_storage()
    }

    /// SYCL 2020's known identity for (op, type), or `None` when the op has none for the type.
    pub fn identity(self, ty: ElemType) -> Option<Value> {
        use ElemType::*;
        let v = match (self, ty) {
            (_, F16 | BF16) => return None,
            (BitAnd | BitOr | BitXor, F32 | F64) => return None,
            (Plus | BitOr | BitXor | LogicalOr, t) => zero(t),
            (Multiplies | LogicalAnd, t) => one(t),
            (BitAnd, I32) => Value::I32(-1),
            (BitAnd, U32) => Value::U32(u32::MAX),
            (BitAnd, I64) => Value::I64(-1),
            (BitAnd, U64) => Value::U64(u64::MAX),
            (Minimum, I32) => Value::I32(i32::MAX),
            (Minimum, U32) => Value::U32(u32::MAX),
            (Minimum, I64) => Value::I64(i64::MAX),
            (Minimum, U64) => Value::U64(u64::MAX),
            (Minimum, F32) => Value::F32(f32::INFINITY),
            (Minimum, F64) => Value::F64(f64::INFINITY),
            (Maximum, I32) => Value::I32(i32::MIN),
            (Maximum, U32) => Value::U32(0),
            (Maximum, I64) => Value::I64(i64::MIN),
            (Maximum, U64) => Value::U64(0),
            (Maximum, F32) => Value::F32(f32::NEG_INFINITY),
            (Maximum, F64) => Value::F64(f64::NEG_INFINITY),
        };
        Some(v)
    }

    /// The compound-assignment shorthands SYCL's reducer allows for this op (`++` counts for plus).
    pub fn shorthands(self) -> &'static [&'static str] {
        match self {
            Plus => &["+=", "++"],
            Multiplies => &["*="],
            BitAnd => &["&="],
            BitOr => &["|="],
            BitXor => &["^="],
            _ => &[],
        }
    }

    /// Whether floating-point results of this op depend on the order of combination.
    pub fn order_sensitive(self, ty: ElemType) -> bool {
        ty.is_float() && matches!(self, Plus | Multiplies)
    }

    /// Host-side combine, in float64 for floats (the reference uses this).
    pub fn combine_f64(self, a: f64, b: f64) -> f64 {
        match self {
            Plus => a + b,
            Multiplies => a * b,
            Minimum => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            Maximum => {
                if a < b {
                    b
                } else {
                    a
                }
            }
            LogicalAnd => ((a != 0.0) && (b != 0.0)) as i32 as f64,
            LogicalOr => ((a != 0.0) || (b != 0.0)) as i32 as f64,
            BitAnd | BitOr | BitXor => unreachable!("bitwise ops are integer-only"),
        }
    }

    /// Host-side exact integer combine with wrapping, in the type's own width.
    pub fn combine_int(self, ty: ElemType, a: i128, b: i128) -> i128 {
        let r = match self {
            Plus => a.wrapping_add(b),
            Multiplies => a.wrapping_mul(b),
            Minimum => a.min(b),
            Maximum => a.max(b),
            BitAnd => a & b,
            BitOr => a | b,
            BitXor => a ^ b,
            LogicalAnd => ((a != 0) && (b != 0)) as i128,
            LogicalOr => ((a != 0) || (b != 0)) as i128,
        };
        wrap_to(ty, r)
    }
}

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

/// What a reduction variable combines with: a built-in op, argmin/argmax over (value, index)
/// pairs, or a custom combiner. `Op` converts into it, so `reduction(&buf, Op::Plus)` works.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operator {
    /// A built-in op.
    Builtin(Op),
    /// The smallest value and, among equal values, the lowest index.
    ArgMin,
    /// The largest value and, among equal values, the lowest index.
    ArgMax,
    /// A user-defined combiner.
    Custom(CustomOp),
}

impl From<Op> for Operator {
    fn from(op: Op) -> Operator {
        Operator::Builtin(op)
    }
}
impl From<CustomOp> for Operator {
    fn from(c: CustomOp) -> Operator {
        Operator::Custom(c)
    }
}

impl Operator {
    /// The built-in op, if this is one.
    pub fn builtin(&self) -> Option<Op> {
        match self {
            Operator::Builtin(op) => Some(*op),
            _ => None,
        }
    }
    /// The built-in op whose atomics may implement this operator.
    pub fn atomic_op(&self) -> Option<Op> {
        match self {
            Operator::Builtin(op) => Some(*op),
            Operator::Custom(c) => c.atomic,
            _ => None,
        }
    }
    /// Whether this is argmin or argmax (a (value, index) pair per variable).
    pub fn is_arg(&self) -> bool {
        matches!(self, Operator::ArgMin | Operator::ArgMax)
    }
    /// The identity for `ty`, if there is one (for argmin/argmax: the value part; the index
    /// part is `u64::MAX`).
    pub fn identity(&self, ty: ElemType) -> Option<Value> {
        match self {
            Operator::Builtin(op) => op.identity(ty),
            Operator::ArgMin => Op::Minimum.identity(ty),
            Operator::ArgMax => Op::Maximum.identity(ty),
            Operator::Custom(c) => c.identity,
        }
    }
    /// Whether the operator is defined for `ty` (bitwise ops are integer-only; no operator
    /// reduces f16).
    pub fn valid_for(&self, ty: ElemType) -> bool {
        match self {
            Operator::Builtin(op) => op.valid_for(ty),
            _ => !ty.is_storage(),
        }
    }
    /// Reducer shorthands allowed in the body (`+=` and `++` for plus, ...); none for custom
    /// operators and argmin/argmax, which use `combine`.
    pub fn shorthands(&self) -> &'static [&'static str] {
        match self {
            Operator::Builtin(op) => op.shorthands(),
            _ => &[],
        }
    }
    /// Whether floating-point results may depend on the order of combination (custom float
    /// combiners are assumed to).
    pub fn order_sensitive(&self, ty: ElemType) -> bool {
        match self {
            Operator::Builtin(op) => op.order_sensitive(ty),
            Operator::Custom(c) => {
                ty.is_float() && c.atomic.is_none_or(|op| op.order_sensitive(ty))
            }
            _ => false,
        }
    }
    /// The id the kernels switch on (`CLR_OP_*`).
    pub fn cl_id(&self) -> &'static str {
        match self {
            Operator::Builtin(op) => op.cl_id(),
            Operator::ArgMin => "CLR_OP_ARGMIN",
            Operator::ArgMax => "CLR_OP_ARGMAX",
            Operator::Custom(_) => "CLR_OP_CUSTOM",
        }
    }
    /// A short name for plans and messages.
    pub fn name(&self) -> String {
        match self {
            Operator::Builtin(op) => op.name().to_string(),
            Operator::ArgMin => "argmin".into(),
            Operator::ArgMax => "argmax".into(),
            Operator::Custom(c) => format!(
                "custom({}{})",
                c.expr,
                if c.identity.is_none() {
                    ", no identity"
                } else {
                    ""
                }
            ),
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl serde::Serialize for Operator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// Wraps an integer to the range of `ty` as two's complement arithmetic would.
pub fn wrap_to(ty: ElemType, v: i128) -> i128 {
    match ty {
        ElemType::I32 => v as i32 as i128,
        ElemType::U32 => v as u32 as i128,
        ElemType::I64 => v as i64 as i128,
        ElemType::U64 => v as u64 as i128,
        _ => v,
    }
}

fn zero(t: ElemType) -> Value {
    match t {
        ElemType::I32 => Value::I32(0),
        ElemType::U32 => Value::U32(0),
        ElemType::I64 => Value::I64(0),
        ElemType::U64 => Value::U64(0),
        ElemType::F32 => Value::F32(0.0),
        _ => Value::F64(0.0),
    }
}
fn one(t: ElemType) -> Value {
    match t {
        ElemType::I32 => Value::I32(1),
        ElemType::U32 => Value::U32(1),
        ElemType::I64 => Value::I64(1),
        ElemType::U64 => Value::U64(1),
        ElemType::F32 => Value::F32(1.0),
        _ => Value::F64(1.0),
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn identities_are_neutral() {
        for op in Op::ALL {
            for ty in ElemType::REDUCIBLE {
                let Some(id) = op.identity(ty) else {
                    assert!(!op.valid_for(ty), "{op} {ty} lacks an identity");
                    continue;
                };
                if ty.is_float() {
                    for x in [-3.5, 0.0, 7.25] {
                        let x = if matches!(op, LogicalAnd | LogicalOr) {
                            (x != 0.0) as i32 as f64
                        } else {
                            x
                        };
                        assert_eq!(op.combine_f64(id.to_f64(), x), x, "{op} {ty}");
                    }
                } else {
                    let idv: i128 = match id {
                        Value::I32(v) => v as i128,
                        Value::U32(v) => v as i128,
                        Value::I64(v) => v as i128,
                        Value::U64(v) => v as i128,
                        _ => unreachable!(),
                    };
                    for x in [0i128, 1, 5, 77] {
                        let x = if matches!(op, LogicalAnd | LogicalOr) {
                            (x != 0) as i128
                        } else {
                            x
                        };
                        assert_eq!(op.combine_int(ty, idv, x), x, "{op} {ty}");
                    }
                }
            }
        }
    }
    #[test]
    fn parse_names_and_aliases() {
        assert_eq!(Op::parse("sum").unwrap(), Plus);
        assert_eq!(Op::parse("minimum").unwrap(), Minimum);
        assert!(Op::parse("nope").is_err());
    }
}
