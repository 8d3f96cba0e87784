//! The reduction variables of one `explain` or `reduce` launch: what each combines with
//! (`VarOp`, parsed from the `--op` list), its initial value (`Init`), its result buffers on the
//! device (`Target`) and its `Reduction`, named `r0`, `r1`, ... as the kernel body calls them.

use clreduce::check::reference::{HostOp, HostVec};
use clreduce::expr::Expr;
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, reduction_span, AnyBuffer, Buffer, CustomOp,
    DynBuffer, ElemType, Error, Op, Queue, Result, Value,
};

/// What one variable of `clreduce reduce` combines with.
pub enum VarOp {
    Builtin(Op),
    Arg {
        max: bool,
    },
    Custom {
        op: CustomOp,
        expr: Expr,
        /// The built-in op the expression computes on sample pairs (data, float bound).
        behaves_as: Option<Op>,
    },
}

impl VarOp {
    pub fn label(&self) -> String {
        match self {
            VarOp::Builtin(op) => op.name().to_string(),
            VarOp::Arg { max: true } => "argmax".into(),
            VarOp::Arg { max: false } => "argmin".into(),
            VarOp::Custom { op, .. } => clreduce::Operator::from(op.clone()).name(),
        }
    }
    /// The op whose random data and initial value suit this variable (`None`: argmin/argmax).
    pub fn data_op(&self) -> Option<Op> {
        match self {
            VarOp::Builtin(op) => Some(*op),
            VarOp::Arg { .. } => None,
            VarOp::Custom { behaves_as, .. } => Some(behaves_as.unwrap_or(Op::Plus)),
        }
    }
    /// The host reference's op (`None`: argmin/argmax, which have their own reference).
    pub fn host(&self) -> Option<HostOp<'_>> {
        match self {
            VarOp::Builtin(op) => Some(HostOp::Builtin(*op)),
            VarOp::Arg { .. } => None,
            VarOp::Custom { op, expr, .. } => Some(HostOp::Custom {
                expr,
                identity: op.identity_value(),
            }),
        }
    }
    /// Whether the variable's op has an identity (all but a custom combiner without one).
    pub fn has_identity(&self) -> bool {
        match self {
            VarOp::Custom { op, .. } => op.identity_value().is_some(),
            _ => true,
        }
    }
    /// What the float bound is based on: the op itself, or what a custom combiner behaves as.
    pub fn bound_class(&self) -> Option<Op> {
        match self {
            VarOp::Builtin(op) => Some(*op),
            VarOp::Arg { .. } => Some(Op::Minimum),
            VarOp::Custom { behaves_as, .. } => *behaves_as,
        }
    }
}

/// A comma-separated `--op` list: built-in ops, `argmin` and `argmax`, one variable each.
pub fn parse_op_list(list: &str) -> Result<Vec<VarOp>> {
    list.split(',')
        .map(str::trim)
        .map(|name| {
            Ok(match name {
                "argmin" => VarOp::Arg { max: false },
                "argmax" => VarOp::Arg { max: true },
                _ => VarOp::Builtin(Op::parse(name).map_err(|_| {
                    Error::UnknownName {
                        kind: "op",
                        name: name.to_string(),
                        known: Op::ALL
                            .iter()
                            .map(|o| o.name())
                            .chain(["argmin", "argmax"])
                            .collect(),
                    }
                })?),
            })
        })
        .collect()
}

/// Refuses an op the element type cannot take (bitwise ops on floats), before any device is
/// asked: the same on every device, so the command's error, not a device's.
pub fn check_types(vars: &[VarOp], ty: ElemType) -> crate::error::CliResult<()> {
    for v in vars {
        if let VarOp::Builtin(op) = v {
            if !op.valid_for(ty) {
                return crate::error::usage(format!(
                    "--op {} is not defined on {ty} ({})",
                    op.name(),
                    if ty.is_float() && ty != ElemType::F16 {
                        "SYCL defines bitwise ops for integer types only"
                    } else {
                        "f16 is a storage type: reduce it as f32"
                    }
                ));
            }
        }
    }
    Ok(())
}

/// A variable's initial value (`reduce` poisons it: not the identity, so an unwritten result
/// shows; `explain` uses the identity).
#[derive(Clone)]
pub enum Init {
    Scalar(Value),
    Arg(Value, u64),
    Span(Vec<Value>),
}

/// A variable's result buffers on the device.
pub enum Target {
    Scalar(DynBuffer),
    Arg(DynBuffer, Buffer<u64>),
    Span(DynBuffer),
}

/// The result buffers of the variables on `q`, holding their initial values.
pub fn make_targets(q: &Queue, ty: ElemType, inits: &[Init]) -> Result<Vec<Target>> {
    inits
        .iter()
        .map(|init| {
            Ok(match init {
                Init::Scalar(v) => Target::Scalar(DynBuffer::scalar(q, *v)?),
                Init::Arg(v, i) => Target::Arg(DynBuffer::scalar(q, *v)?, q.buffer_from(&[*i])?),
                Init::Span(vs) => Target::Span(DynBuffer::upload(
                    q,
                    &HostVec::from_values(ty, vs).expect("initial values of the type"),
                )?),
            })
        })
        .collect()
}

/// One reduction per variable into its target, named `r0`, `r1`, ... (the body's names).
pub fn make_reductions(
    vars: &[VarOp],
    targets: &[Target],
    init_identity: bool,
) -> Vec<clreduce::Reduction> {
    vars.iter()
        .zip(targets)
        .enumerate()
        .map(|(k, (v, t))| {
            let r = match (v, t) {
                (VarOp::Arg { max: false }, Target::Arg(b, i)) => reduction_argmin(b, i),
                (VarOp::Arg { max: true }, Target::Arg(b, i)) => reduction_argmax(b, i),
                (VarOp::Builtin(op), Target::Scalar(b)) => reduction(b, *op),
                (VarOp::Builtin(op), Target::Span(b)) => reduction_span(b, b.len(), *op),
                (VarOp::Custom { op, .. }, Target::Scalar(b)) => reduction(b, op.clone()),
                (VarOp::Custom { op, .. }, Target::Span(b)) => {
                    reduction_span(b, b.len(), op.clone())
                }
                _ => unreachable!("targets follow the variables"),
            };
            let r = r.name(&format!("r{k}"));
            if init_identity {
                r.initialize_to_identity()
            } else {
                r
            }
        })
        .collect()
}
