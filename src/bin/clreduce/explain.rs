//! `clreduce explain`: the plan for a reduction of one or more variables (the `--op` list of
//! `reduce`) in the range or nd_range form, printed without running anything.

use crate::args::{op_identity, options, pick_devices, queue_on, Common};
use crate::vars::{make_reductions, make_targets, parse_op_list, Init, VarOp};
use clreduce::{ElemType, Kernel, NdRange, Op, Range, Result};

/// Options of `clreduce explain`.
#[derive(clap::Args)]
pub struct ExplainArgs {
    /// Comma-separated ops, one variable each, planned as one launch: sum, prod, min, max,
    /// and, or, xor, land, lor, argmin, argmax.
    #[arg(long, value_name = "OP[,OP...]", default_value = "sum")]
    op: String,
    #[arg(long = "type", default_value = "f32")]
    ty: String,
    #[arg(long, default_value_t = 1 << 24)]
    n: u64,
    /// Use an nd_range with --local work-items per group.
    #[arg(long)]
    nd_range: bool,
    #[arg(long, default_value_t = 256)]
    local: usize,
    #[arg(long)]
    init_identity: bool,
    /// Also print the OpenCL C program the launch would build (build options first), with the
    /// body `clreduce reduce` runs for these ops over an input `x`.
    #[arg(long)]
    source: bool,
    #[command(flatten)]
    common: Common,
}

/// `clreduce explain`.
pub fn run(a: &ExplainArgs) -> Result<bool> {
    let c = &a.common;
    let ty = ElemType::parse(&a.ty)?;
    let ops = parse_op_list(&a.op)?;
    for d in pick_devices(c.device.as_deref())? {
        let q = queue_on(&d, c)?;
        let targets = make_targets(&q, ty, &identity_inits(&ops, ty))?;
        let reds = make_reductions(&ops, &targets, a.init_identity);
        let form: clreduce::Form = if a.nd_range {
            NdRange::new(a.n, a.local).into()
        } else {
            Range::new(a.n).into()
        };
        let shown = if a.source {
            input_of(&q, ty).and_then(|x| {
                let body = crate::reduce::reduce_body(&ops, ty, None);
                let kernel = Kernel::new(&body).arg("x", &x);
                let src = q.explain_source(form, reds.clone(), kernel, options(c)?)?;
                Ok(format!("{}{src}", q.explain(form, reds, options(c)?)?))
            })
        } else {
            q.explain(form, reds, options(c)?).map(|p| p.to_string())
        };
        match shown {
            Ok(p) => print!("{p}"),
            Err(e) => {
                if c.all_devices() {
                    println!("{}: {e}", d.label());
                } else {
                    return Err(e);
                }
            }
        }
    }
    Ok(true)
}

/// A one-element input of type `ty`, standing for the data the body reads.
fn input_of(q: &clreduce::Queue, ty: ElemType) -> Result<clreduce::DynBuffer> {
    clreduce::DynBuffer::scalar(q, op_identity(Op::Plus, ty))
}

/// The identity as every variable's initial value, which is what makes a plan valid without
/// `initialize_to_identity`.
fn identity_inits(ops: &[VarOp], ty: ElemType) -> Vec<Init> {
    ops.iter()
        .map(|v| match v {
            VarOp::Builtin(op) => Init::Scalar(op_identity(*op, ty)),
            VarOp::Arg { max } => {
                let extreme = if *max { Op::Maximum } else { Op::Minimum };
                Init::Arg(op_identity(extreme, ty), u64::MAX)
            }
            VarOp::Custom { .. } => unreachable!("explain parses no custom ops"),
        })
        .collect()
}
