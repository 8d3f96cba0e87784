//! Reduction operations, each defined once: SYCL 2020's built-in function objects ([`Op`]), their
//! known identities per type (SYCL 2020 §4.9.2, `known_identity`), which reducer shorthands they
//! allow, their OpenCL C spelling (`CLR_OP_*`), and what they compute on the host (`host`: the
//! one host combine that multi, MPI, the closures' host form and the references use). Custom
//! combiners sit beside them (`custom`: [`CustomOp`] and the check of its identity; `expr`: the
//! evaluator of its OpenCL C expression). Which atomics and group functions a device has for an
//! op is the capabilities' question (`caps`). Imports only `types` and `error`.

mod custom;
pub mod expr;
pub mod host;

pub use custom::{identity_counterexample, identity_samples, CustomOp};

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

    /// The atomic that implements the op on `ty`, if one can (the kernels' `atomic_*` calls
    /// for `CLR_OP_*`): whether a device has it is the capabilities' question
    /// (`DeviceCaps::fast_atomic`). Logical and/or use the integer and/or on values normalised
    /// to 0/1; multiplies has no atomic anywhere, nor do the 16-bit storage types.
    pub(crate) fn atomic(self, ty: ElemType) -> Option<Atomic> {
        use ElemType::*;
        Some(match (self, ty) {
            (Multiplies, _) | (_, F16 | BF16) => return None,
            (Plus, I32 | U32 | I64 | U64) => Atomic::IntAdd,
            (_, I32 | U32 | I64 | U64) => Atomic::IntExtended,
            (Plus, F32 | F64) => Atomic::FloatAdd,
            (Minimum | Maximum, F32 | F64) => Atomic::FloatMinMax,
            (_, F32 | F64) => return None,
        })
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
}

/// The family of device atomics an op needs on a type ([`Op::atomic`]), each a separate
/// capability: integer add (base atomics), integer min/max/and/or/xor (extended atomics),
/// float add and float min/max (`cl_ext_float_atomics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Atomic {
    IntAdd,
    IntExtended,
    FloatAdd,
    FloatMinMax,
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
            Operator::Custom(c) => c.declared_atomic(),
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
            Operator::Custom(c) => c.identity_value(),
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
                ty.is_float() && c.declared_atomic().is_none_or(|op| op.order_sensitive(ty))
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
                c.expr(),
                if c.identity_value().is_none() {
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
    fn atomics_exist_only_where_the_op_is_defined() {
        for op in Op::ALL {
            for ty in ElemType::REDUCIBLE
                .into_iter()
                .chain([ElemType::F16, ElemType::BF16])
            {
                let a = op.atomic(ty);
                assert!(a.is_none() || op.valid_for(ty), "{op} {ty}");
                let float_family = matches!(a, Some(Atomic::FloatAdd | Atomic::FloatMinMax));
                assert!(a.is_none() || float_family == ty.is_float(), "{op} {ty}");
                if op == Multiplies || ty.is_storage() {
                    assert_eq!(a, None, "{op} {ty}");
                }
            }
        }
        assert_eq!(LogicalOr.atomic(ElemType::U64), Some(Atomic::IntExtended));
        assert_eq!(LogicalOr.atomic(ElemType::F32), None);
        assert_eq!(Maximum.atomic(ElemType::F64), Some(Atomic::FloatMinMax));
    }
    #[test]
    fn parse_names_and_aliases() {
        assert_eq!(Op::parse("sum").unwrap(), Plus);
        assert_eq!(Op::parse("minimum").unwrap(), Minimum);
        assert!(Op::parse("nope").is_err());
    }
}
