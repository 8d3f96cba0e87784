//! The command line of `clreduce reduce` (`ReduceArgs`) and the variables it asks for: the
//! `--op` list, then the `--custom` combiner with its `--identity`, `--no-identity` and
//! `--atomic` flags, checked against each other before anything runs.

use crate::args::Common;
use crate::error::{usage, CliError, CliResult};
use crate::vars::{parse_op_list, VarOp};
use clreduce::check::reference;
use clreduce::expr::Expr;
use clreduce::{CustomOp, ElemType, Op, Value};
use std::fmt;
use std::path::PathBuf;

/// `clreduce reduce`: one launch of one or more reduction variables over one seeded random
/// input, each checked against the host reference.
#[derive(clap::Args)]
pub struct ReduceArgs {
    /// Comma-separated ops, one variable each, all over the same input in one launch: sum,
    /// prod, min, max, and, or, xor, land, lor, argmin, argmax [default: sum, or none when
    /// --custom is given].
    #[arg(long, value_name = "OP[,OP...]")]
    pub op: Option<String>,
    /// Element type: i32, u32, i64, u64, f32, f64, or the 16-bit storage types f16 and bf16
    /// (read as f32 on the device and reduced in f32) [default: f32; with --input, the file's].
    #[arg(long = "type", value_name = "TYPE")]
    pub ty: Option<String>,
    /// Number of elements [default: 1000003; with --input, the file's].
    #[arg(long)]
    pub n: Option<u64>,
    /// Reduce this file instead of seeded random data: NumPy .npy (1-D; i32, u32, i64, u64,
    /// f16, f32 or f64, either byte order), or raw little-endian binary of --type (any other
    /// name; bf16 comes this way). The type and size come from the file; the results are of its data alone
    /// (--init-identity is implied).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Print the results as JSON: an array with one object per device, each with its
    /// variables (op, type, plan, result as the shortest decimal that round-trips, bits in hex,
    /// check).
    #[arg(long)]
    pub json: bool,
    /// range or nd-range
    #[arg(long, default_value = "range")]
    pub form: String,
    /// Work-group size of the nd-range form.
    #[arg(long, default_value_t = 256)]
    pub local: usize,
    /// Span reductions of LEN bins instead of scalars: element j goes to bin
    /// `(key(x[j]) * 131 + j) mod LEN`, key being the integer as ulong or a float's bits.
    #[arg(long, value_name = "LEN")]
    pub span: Option<usize>,
    /// One more variable, with a custom combiner: an OpenCL C expression over a and b, e.g.
    /// "a*b" or "max(a,b)". Needs --identity or --no-identity.
    #[arg(long, value_name = "EXPR")]
    pub custom: Option<String>,
    /// The custom combiner's identity, in --type: a number, inf, -inf, min or max.
    #[arg(long, value_name = "VALUE", allow_hyphen_values = true)]
    pub identity: Option<String>,
    /// The custom combiner has no identity (an identity-less reduction).
    #[arg(long)]
    pub no_identity: bool,
    /// Declares that the custom combiner computes this built-in op, so the plan may use its
    /// atomics. Unchecked by the library; the host reference still evaluates the expression.
    #[arg(long, value_name = "OP")]
    pub atomic: Option<String>,
    /// initialize_to_identity: the variables' initial values are not part of the results.
    #[arg(long)]
    pub init_identity: bool,
    /// With f16 or bf16 input: also print each f32 result rounded back to that type (nearest
    /// even), on a `rounded:` line (the human report; --json keeps the f32 results).
    #[arg(long)]
    pub round: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// One launch cut across every selected device (--device all, the default here, leaves
    /// simulators out; or a comma list), by measured throughput unless --shares; the partials
    /// combine on the host (clreduce::multi).
    #[arg(long)]
    pub split: bool,
    /// Weights of the devices' shares with --split (e.g. 1,3), instead of measured throughput.
    #[arg(long, value_name = "W,W,...")]
    pub shares: Option<String>,
    /// Under `mpirun -np K`: each rank reduces a block of the input (by rank) and the ranks
    /// combine through MPI; rank 0 prints (needs a build with --features mpi). With --split,
    /// each rank splits its block across its devices; `--device rank` gives rank r the r-th
    /// non-simulator device (modulo their number).
    #[arg(long)]
    pub mpi: bool,
    /// Segmented: the rows of an R x C row-major array (with --cols; --n is R x C).
    #[arg(long, value_name = "R")]
    pub rows: Option<u64>,
    /// Segmented: the columns of the R x C array (with --rows).
    #[arg(long, value_name = "C")]
    pub cols: Option<u64>,
    /// With --rows/--cols: 1 (the default) one result per row, 0 one per column.
    #[arg(long, value_name = "1|0")]
    pub axis: Option<u8>,
    /// Segmented: CSR segments of seeded heavy-tailed lengths of this mean over --n elements,
    /// a quarter of them empty.
    #[arg(long, value_name = "MEAN")]
    pub ragged: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// The variables `--op` and `--custom` ask for, in order.
pub fn parse_vars(a: &ReduceArgs, ty: ElemType) -> CliResult<Vec<VarOp>> {
    let mut vars = Vec::new();
    let list = match (&a.op, &a.custom) {
        (Some(l), _) => Some(l.as_str()),
        (None, None) => Some("sum"),
        (None, Some(_)) => None,
    };
    if let Some(l) = list {
        vars.extend(parse_op_list(l)?);
    }
    let Some(src) = &a.custom else {
        for (flag, given) in [
            ("--identity", a.identity.is_some()),
            ("--no-identity", a.no_identity),
            ("--atomic", a.atomic.is_some()),
        ] {
            if given {
                return usage(format!(
                    "{flag} belongs to a custom combiner: add --custom EXPR"
                ));
            }
        }
        return Ok(vars);
    };
    vars.push(parse_custom(a, src, ty)?);
    Ok(vars)
}

/// The `--custom` variable: its expression, identity (or none) and declared atomic.
fn parse_custom(a: &ReduceArgs, src: &str, ty: ElemType) -> CliResult<VarOp> {
    let expr = Expr::parse(src).map_err(|e| CliError::Usage(format!("--custom {src:?}: {e}")))?;
    let mut op = CustomOp::new(src);
    match (&a.identity, a.no_identity) {
        (Some(_), true) => return usage("--identity and --no-identity exclude each other"),
        (None, false) => {
            return usage("--custom needs --identity VALUE (in --type) or --no-identity")
        }
        (Some(v), false) => op = op.identity(parse_value(ty, v)?),
        (None, true) => {}
    }
    let behaves_as = reference::custom_behaves_as(&expr, ty);
    if let Some(at) = &a.atomic {
        let at = Op::parse(at)?;
        if behaves_as != Some(at) {
            errln!(
                "clreduce: warning: --atomic {at}: `{src}` does not compute {at} on sample {ty} pairs; atomics would give other results than the combiner"
            );
        }
        op = op.atomic(at);
    }
    Ok(VarOp::Custom {
        op,
        expr,
        behaves_as,
    })
}

/// A value of `ty` from the command line: a number, `inf`/`-inf`, or `min`/`max` (the type's
/// extremes).
fn parse_value(ty: ElemType, s: &str) -> CliResult<Value> {
    let t = s.trim();
    let bad = |e: String| {
        CliError::Usage(format!(
            "--identity {s:?} is not a {ty} value ({e}); write a number, inf, -inf, min or max"
        ))
    };
    let extreme = match t {
        "max" => Op::Minimum.identity(ty),
        "min" => Op::Maximum.identity(ty),
        _ => None,
    };
    if let Some(v) = extreme {
        return Ok(v);
    }
    let e = |e: &dyn fmt::Display| bad(e.to_string());
    Ok(match ty {
        ElemType::I32 => Value::I32(t.parse().map_err(|x| e(&x))?),
        ElemType::U32 => Value::U32(t.parse().map_err(|x| e(&x))?),
        ElemType::I64 => Value::I64(t.parse().map_err(|x| e(&x))?),
        ElemType::U64 => Value::U64(t.parse().map_err(|x| e(&x))?),
        ElemType::F32 => Value::F32(t.parse().map_err(|x| e(&x))?),
        ElemType::F64 => Value::F64(t.parse().map_err(|x| e(&x))?),
        ElemType::F16 | ElemType::BF16 => return Err(bad(format!("{ty} is a storage type"))),
    })
}
