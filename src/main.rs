//! The `clreduce` command: devices, explain, reduce, demo (and bench, see bench.rs).

use clap::{Parser, Subcommand};
use clreduce::caps::{DeviceCaps, Space};
use clreduce::check::expr::Expr;
use clreduce::check::reference::{self, combination_depth, HostOp, HostVec, Reference};
use clreduce::plan::{CrossAlgo, Determinism, Plan, SpanStore, Strategy};
use clreduce::DynBuffer;
use clreduce::{
    devices, reduction, reduction_argmax, reduction_argmin, reduction_span, AnyBuffer, Buffer,
    CustomOp, Device, ElemType, Error, Kernel, Mask, NdRange, Op, Options, Queue, Range, Result,
    Value,
};
use std::fmt;
use std::process::ExitCode;

mod bench;

#[derive(Parser)]
#[command(
    name = "clreduce",
    version,
    about = "SYCL 2020-style reductions on any OpenCL device"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct Common {
    /// Device index (from `clreduce devices`), name substring, or `all`.
    #[arg(long)]
    device: Option<String>,
    /// Capability mask, e.g. no-atomics,no-subgroups (default: CLREDUCE_MASK).
    #[arg(long)]
    mask: Option<String>,
    /// Forced strategy GROUP+CROSS, e.g. tree+last-group (default: CLREDUCE_STRATEGY or auto).
    #[arg(long)]
    strategy: Option<String>,
    /// Allow order-dependent float atomics (results not run-to-run reproducible).
    #[arg(long)]
    relaxed: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// The capability matrix: one row per OpenCL device, with the plans auto-selection picks.
    Devices {
        #[arg(long)]
        json: bool,
    },
    /// Print the plan for a reduction without running it.
    Explain {
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
        #[command(flatten)]
        common: Common,
    },
    /// Reduce seeded random data on a device and check it against the host.
    Reduce(ReduceArgs),
    /// The first-ten-minutes demo: devices found, then a checked f32 sum with its plan.
    Demo {
        #[arg(long, default_value_t = 10_000_000)]
        n: u64,
    },
    /// Benchmarks: GB/s per device, case, strategy and size, with peers (see src/bench.rs).
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CLREDUCE_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Devices { json } => cmd_devices(json).map_err(CliError::from),
        Cmd::Explain {
            op,
            ty,
            n,
            nd_range,
            local,
            init_identity,
            common,
        } => cmd_explain(&op, &ty, n, nd_range, local, init_identity, &common)
            .map_err(CliError::from),
        Cmd::Reduce(a) => cmd_reduce(&a),
        Cmd::Demo { n } => cmd_demo(n).map_err(CliError::from),
        Cmd::Bench(a) => bench::run(a).map_err(CliError::from),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            let msg = e.to_string();
            eprintln!("clreduce: error: {}", msg.lines().next().unwrap_or(""));
            for l in msg.lines().skip(1) {
                eprintln!("  {l}");
            }
            ExitCode::from(2)
        }
    }
}

fn pick_devices(spec: Option<&str>) -> Result<Vec<Device>> {
    match spec {
        Some("all") => Ok(devices()?.to_vec()),
        other => Ok(vec![clreduce::device::select(other)?]),
    }
}

fn options(c: &Common) -> Result<Options> {
    let strategy = match &c.strategy {
        Some(s) => Strategy::parse(s)?,
        None => Strategy::from_env()?,
    };
    Ok(Options {
        tuning: clreduce::plan::Tuning::from_env()?,
        strategy,
        determinism: if c.relaxed {
            Determinism::Relaxed
        } else {
            Determinism::Deterministic
        },
        ..Options::default()
    })
}

fn queue_on(d: &Device, c: &Common) -> Result<Queue> {
    let mask = match &c.mask {
        Some(m) => Mask::parse(m)?,
        None => Mask::from_env()?,
    };
    // `clreduce reduce` and `explain` print device times: a profiling queue.
    Queue::with_mask(d, mask)?.with_profiling()
}

fn yn(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "-"
    }
}

/// Plans auto-selection picks for the standard requests, as "group+cross" strings.
fn auto_plans(q: &Queue) -> Vec<(String, String)> {
    let n = 1u64 << 24;
    let one = |op, ty| -> String {
        let b = match DynBuffer::scalar(q, op_identity(op, ty)) {
            Ok(b) => b,
            Err(e) => return format!("({e})"),
        };
        match q.explain(Range::new(n), reduction(&b, op), Options::default()) {
            Ok(p) => p.summary(),
            Err(e) => format!(
                "unsupported: {}",
                e.to_string().lines().next().unwrap_or("")
            ),
        }
    };
    let three = || -> String {
        let bs: Result<Vec<DynBuffer>> = [Op::Plus, Op::Minimum, Op::Maximum]
            .iter()
            .map(|&op| DynBuffer::scalar(q, op_identity(op, ElemType::F32)))
            .collect();
        match bs {
            Ok(bs) => {
                let reds = vec![
                    reduction(&bs[0], Op::Plus),
                    reduction(&bs[1], Op::Minimum),
                    reduction(&bs[2], Op::Maximum),
                ];
                match q.explain(Range::new(n), reds, Options::default()) {
                    Ok(p) => p.summary(),
                    Err(e) => format!("unsupported: {e}"),
                }
            }
            Err(e) => format!("({e})"),
        }
    };
    vec![
        ("f32 sum".into(), one(Op::Plus, ElemType::F32)),
        ("i32 sum".into(), one(Op::Plus, ElemType::I32)),
        ("f64 max".into(), one(Op::Maximum, ElemType::F64)),
        ("f32 sum,min,max".into(), three()),
    ]
}

fn op_identity(op: Op, ty: ElemType) -> clreduce::Value {
    op.identity(ty).unwrap_or(clreduce::Value::I32(0))
}

fn caps_row(c: &DeviceCaps) -> Vec<(String, String)> {
    let a = &c.atomics;
    let at = |op, ty| {
        let g = c.fast_atomic(op, ty, Space::Global);
        let l = c.fast_atomic(op, ty, Space::Local);
        match (g, l) {
            (true, true) => "g+l",
            (true, false) => "g",
            (false, true) => "l",
            _ => "-",
        }
        .to_string()
    };
    vec![
        ("type".into(), format!("{:?}", c.kind).to_lowercase()),
        (
            "OpenCL".into(),
            format!(
                "{}.{} / C {}.{}",
                c.opencl_version.0, c.opencl_version.1, c.opencl_c_version.0, c.opencl_c_version.1
            ),
        ),
        ("CUs".into(), c.compute_units.to_string()),
        ("max WG".into(), c.max_work_group_size.to_string()),
        (
            "local mem".into(),
            format!("{} KiB", c.local_mem_size / 1024),
        ),
        ("WG multiple".into(), c.preferred_wg_multiple.to_string()),
        ("i32 add".into(), at(Op::Plus, ElemType::I32)),
        ("i32 min/max".into(), at(Op::Minimum, ElemType::I32)),
        ("i64 add".into(), at(Op::Plus, ElemType::I64)),
        ("i64 min/max".into(), at(Op::Minimum, ElemType::I64)),
        ("f32 add".into(), at(Op::Plus, ElemType::F32)),
        ("f32 min/max".into(), at(Op::Minimum, ElemType::F32)),
        ("f64 add".into(), at(Op::Plus, ElemType::F64)),
        (
            "acq_rel+device".into(),
            yn(a.order_acq_rel && a.scope_device).into(),
        ),
        ("PTX acq_rel (NV)".into(), yn(c.acq_rel_ptx).into()),
        ("wg collectives".into(), yn(c.work_group_collectives).into()),
        ("PTX shuffles (NV)".into(), yn(c.warp_shuffle_ptx).into()),
        (
            "sub-groups".into(),
            match &c.sub_groups {
                Some(s) if s.sizes.is_empty() => "yes".into(),
                Some(s) => s
                    .sizes
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                None => "-".into(),
            },
        ),
        ("fp64".into(), yn(c.fp64).into()),
        ("fp16".into(), yn(c.fp16).into()),
    ]
}

fn cmd_devices(json: bool) -> Result<bool> {
    let devs = devices()?;
    let mut rows = Vec::new();
    let mut js = Vec::new();
    for d in devs {
        let caps = d.caps()?;
        let q = Queue::with_mask(d, Mask::default())?;
        let plans = auto_plans(&q);
        if json {
            js.push(serde_json::json!({
                "index": d.index(), "label": d.label(), "caps": caps,
                "auto_plans": plans.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            }));
        } else {
            let mut row = vec![
                ("#".to_string(), d.index().to_string()),
                ("device".into(), d.label()),
            ];
            row.extend(caps_row(&caps));
            row.extend(plans.into_iter().map(|(k, v)| (format!("plan {k}"), v)));
            rows.push((row, caps.removed.clone()));
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&js).unwrap_or_default());
        return Ok(true);
    }
    // Transposed table: one column per device keeps long names readable.
    let keys: Vec<String> = rows
        .first()
        .map(|(r, _)| r.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let kw = keys.iter().map(|k| k.len()).max().unwrap_or(0);
    let cw: Vec<usize> = rows
        .iter()
        .map(|(r, _)| r.iter().map(|(_, v)| v.len()).max().unwrap_or(0).max(8))
        .collect();
    for (i, k) in keys.iter().enumerate() {
        let mut line = format!("{k:kw$}");
        for (c, (r, _)) in rows.iter().enumerate() {
            line.push_str(&format!(" | {:w$}", r[i].1, w = cw[c]));
        }
        println!("{}", line.trim_end());
    }
    for (r, removed) in &rows {
        for note in removed {
            println!("note: {}: {note}", r[1].1);
        }
    }
    println!("atomics: g = global, l = local (hardware atomics the probe kernels compiled); plans: group step + cross-group step, range form, n = 2^24");
    for f in clreduce::device::platform_errors() {
        println!("platform skipped (its device query failed): {f}");
    }
    Ok(true)
}

fn cmd_explain(
    op: &str,
    ty: &str,
    n: u64,
    nd: bool,
    local: usize,
    init_identity: bool,
    c: &Common,
) -> Result<bool> {
    let ty = ElemType::parse(ty)?;
    let ops = parse_op_list(op)?;
    for d in pick_devices(c.device.as_deref())? {
        let q = queue_on(&d, c)?;
        // The identity as the initial value, which is what makes a plan valid without
        // `initialize_to_identity`.
        let inits: Vec<Init> = ops
            .iter()
            .map(|v| match v {
                VarOp::Builtin(op) => Init::Scalar(op_identity(*op, ty)),
                VarOp::Arg { max } => {
                    let extreme = if *max { Op::Maximum } else { Op::Minimum };
                    Init::Arg(op_identity(extreme, ty), u64::MAX)
                }
                VarOp::Custom { .. } => unreachable!("explain parses no custom ops"),
            })
            .collect();
        let targets = make_targets(&q, ty, &inits)?;
        let reds = make_reductions(&ops, &targets, init_identity);
        let form: clreduce::Form = if nd {
            NdRange::new(n, local).into()
        } else {
            Range::new(n).into()
        };
        match q.explain(form, reds, options(c)?) {
            Ok(p) => print!("{p}"),
            Err(e) => {
                if c.device.as_deref() == Some("all") {
                    println!("{}: {e}", d.label());
                } else {
                    return Err(e);
                }
            }
        }
    }
    Ok(true)
}

/// `clreduce reduce`: one launch of one or more reduction variables over one seeded random
/// input, each checked against the host reference.
#[derive(clap::Args)]
struct ReduceArgs {
    /// Comma-separated ops, one variable each, all over the same input in one launch: sum,
    /// prod, min, max, and, or, xor, land, lor, argmin, argmax [default: sum, or none when
    /// --custom is given].
    #[arg(long, value_name = "OP[,OP...]")]
    op: Option<String>,
    /// Element type: i32, u32, i64, u64, f32 or f64.
    #[arg(long = "type", value_name = "TYPE", default_value = "f32")]
    ty: String,
    #[arg(long, default_value_t = 1_000_003)]
    n: u64,
    /// range or nd-range
    #[arg(long, default_value = "range")]
    form: String,
    /// Work-group size of the nd-range form.
    #[arg(long, default_value_t = 256)]
    local: usize,
    /// Span reductions of LEN bins instead of scalars: element j goes to bin
    /// (key(x[j]) * 131 + j) mod LEN, key being the integer as ulong or a float's bits.
    #[arg(long, value_name = "LEN")]
    span: Option<usize>,
    /// One more variable, with a custom combiner: an OpenCL C expression over a and b, e.g.
    /// "a*b" or "max(a,b)". Needs --identity or --no-identity.
    #[arg(long, value_name = "EXPR")]
    custom: Option<String>,
    /// The custom combiner's identity, in --type: a number, inf, -inf, min or max.
    #[arg(long, value_name = "VALUE", allow_hyphen_values = true)]
    identity: Option<String>,
    /// The custom combiner has no identity (an identity-less reduction).
    #[arg(long)]
    no_identity: bool,
    /// Declares that the custom combiner computes this built-in op, so the plan may use its
    /// atomics. Unchecked by the library; the host reference still evaluates the expression.
    #[arg(long, value_name = "OP")]
    atomic: Option<String>,
    /// initialize_to_identity: the variables' initial values are not part of the results.
    #[arg(long)]
    init_identity: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    common: Common,
}

/// An error of a command: the library's, or a command-line mistake the library never sees.
enum CliError {
    Lib(Error),
    Usage(String),
}

impl From<Error> for CliError {
    fn from(e: Error) -> CliError {
        CliError::Lib(e)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Lib(e) => e.fmt(f),
            CliError::Usage(m) => f.write_str(m),
        }
    }
}

type CliResult<T> = std::result::Result<T, CliError>;

fn usage<T>(msg: impl Into<String>) -> CliResult<T> {
    Err(CliError::Usage(msg.into()))
}

/// What one variable of `clreduce reduce` combines with.
enum VarOp {
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
    fn label(&self) -> String {
        match self {
            VarOp::Builtin(op) => op.name().to_string(),
            VarOp::Arg { max: true } => "argmax".into(),
            VarOp::Arg { max: false } => "argmin".into(),
            VarOp::Custom { op, .. } => clreduce::Operator::from(op.clone()).name(),
        }
    }
    /// The op whose random data and initial value suit this variable (`None`: argmin/argmax).
    fn data_op(&self) -> Option<Op> {
        match self {
            VarOp::Builtin(op) => Some(*op),
            VarOp::Arg { .. } => None,
            VarOp::Custom { behaves_as, .. } => Some(behaves_as.unwrap_or(Op::Plus)),
        }
    }
    fn host(&self) -> Option<HostOp<'_>> {
        match self {
            VarOp::Builtin(op) => Some(HostOp::Builtin(*op)),
            VarOp::Arg { .. } => None,
            VarOp::Custom { op, expr, .. } => Some(HostOp::Custom {
                expr,
                identity: op.identity_value(),
            }),
        }
    }
    /// What the float bound is based on: the op itself, or what a custom combiner behaves as.
    fn bound_class(&self) -> Option<Op> {
        match self {
            VarOp::Builtin(op) => Some(*op),
            VarOp::Arg { .. } => Some(Op::Minimum),
            VarOp::Custom { behaves_as, .. } => *behaves_as,
        }
    }
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
        ElemType::F16 => return Err(bad("f16 is a storage type".into())),
    })
}

/// A comma-separated `--op` list: built-in ops, `argmin` and `argmax`, one variable each.
fn parse_op_list(list: &str) -> Result<Vec<VarOp>> {
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

/// The variables `--op` and `--custom` ask for, in order.
fn parse_vars(a: &ReduceArgs, ty: ElemType) -> CliResult<Vec<VarOp>> {
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
            eprintln!(
                "clreduce: warning: --atomic {at}: `{src}` does not compute {at} on sample {ty} pairs; atomics would give other results than the combiner"
            );
        }
        op = op.atomic(at);
    }
    vars.push(VarOp::Custom {
        op,
        expr,
        behaves_as,
    });
    Ok(vars)
}

/// The input every variable reduces: generated for a product when a variable is one (sums,
/// min/max and argmin/argmax stay meaningful on it: small values, many ties), else with ties
/// for argmin/argmax, else for the first variable's op (`reference::random_input`).
fn input_for(vars: &[VarOp], ty: ElemType, n: usize, seed: u64) -> (HostVec, String) {
    if vars.iter().any(|v| v.data_op() == Some(Op::Multiplies)) {
        let d = reference::random_input(Op::Multiplies, ty, n, seed);
        return (d, "generated for prod".into());
    }
    if vars.iter().any(|v| matches!(v, VarOp::Arg { .. })) {
        let d = reference::random_input_ties(ty, n, seed);
        return (d, "small values with many ties, for argmin/argmax".into());
    }
    let op = vars[0].data_op().unwrap_or(Op::Plus);
    (
        reference::random_input(op, ty, n, seed),
        format!("generated for {op}"),
    )
}

/// A variable's initial value (poisoned: not the identity, so an unwritten result shows).
#[derive(Clone)]
enum Init {
    Scalar(Value),
    Arg(Value, u64),
    Span(Vec<Value>),
}

fn initial(v: &VarOp, ty: ElemType, seed: u64, span: Option<usize>) -> Init {
    let Some(op) = v.data_op() else {
        // A mid value at index 5: it wins when nothing beats it, and loses ties to lower indices.
        return Init::Arg(reference::value_of(ty, 3), 5);
    };
    match span {
        None => Init::Scalar(reference::random_initial(op, ty, seed)),
        Some(len) => Init::Span(
            (0..len as u64)
                .map(|e| reference::random_initial(op, ty, seed.wrapping_add(e << 20)))
                .collect(),
        ),
    }
}

/// The host's answer for one variable.
enum Expected {
    Scalar(Reference),
    Arg(reference::ArgReference),
    Span(Vec<Reference>),
}

fn expected(
    vars: &[VarOp],
    inits: &[Init],
    data: &HostVec,
    init_identity: bool,
) -> CliResult<Vec<Expected>> {
    let host_err = |v: &VarOp, e: String| {
        CliError::Usage(format!(
            "the host reference of {} cannot be computed: {e}",
            v.label()
        ))
    };
    vars.iter()
        .zip(inits)
        .map(|(v, init)| {
            Ok(match (v, init) {
                (VarOp::Arg { max }, Init::Arg(val, idx)) => Expected::Arg(
                    reference::reference_arg(*max, data, (!init_identity).then_some((*val, *idx))),
                ),
                (_, Init::Scalar(x)) => Expected::Scalar(
                    reference::reference_with(
                        v.host().expect("not argmin/argmax"),
                        data,
                        (!init_identity).then_some(*x),
                    )
                    .map_err(|e| host_err(v, e))?,
                ),
                (_, Init::Span(xs)) => Expected::Span(
                    reference::reference_span(
                        v.host().expect("not argmin/argmax"),
                        data,
                        xs.len(),
                        (!init_identity).then_some(xs.as_slice()),
                    )
                    .map_err(|e| host_err(v, e))?,
                ),
                (_, Init::Arg(..)) => unreachable!("argmin/argmax get pair initial values"),
            })
        })
        .collect()
}

/// A variable's result buffers on the device.
enum Target {
    Scalar(DynBuffer),
    Arg(DynBuffer, Buffer<u64>),
    Span(DynBuffer),
}

/// The result buffers of the variables on `q`, holding their initial values.
fn make_targets(q: &Queue, ty: ElemType, inits: &[Init]) -> Result<Vec<Target>> {
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
fn make_reductions(
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

/// Every element of a buffer.
fn read_all(b: &DynBuffer) -> Result<Vec<Value>> {
    Ok(match b {
        DynBuffer::I32(b) => b.to_vec()?.into_iter().map(Value::I32).collect(),
        DynBuffer::U32(b) => b.to_vec()?.into_iter().map(Value::U32).collect(),
        DynBuffer::I64(b) => b.to_vec()?.into_iter().map(Value::I64).collect(),
        DynBuffer::U64(b) => b.to_vec()?.into_iter().map(Value::U64).collect(),
        DynBuffer::F32(b) => b.to_vec()?.into_iter().map(Value::F32).collect(),
        DynBuffer::F64(b) => b.to_vec()?.into_iter().map(Value::F64).collect(),
    })
}

/// The kernel body: with a span, the bin first, then one combine per variable.
fn reduce_body(vars: &[VarOp], ty: ElemType, span: Option<usize>) -> String {
    let mut parts = Vec::new();
    if let Some(len) = span {
        parts.push(format!(
            "const ulong bin = {};",
            reference::span_bin_cl(ty, "x[i]", len)
        ));
    }
    for (k, v) in vars.iter().enumerate() {
        let name = format!("r{k}");
        let target = match span {
            Some(_) => format!("{name}[bin]"),
            None => name.clone(),
        };
        parts.push(match v {
            VarOp::Builtin(Op::Plus) => format!("{target} += x[i];"),
            VarOp::Arg { .. } => format!("combine({name}, x[i], i);"),
            _ => format!("combine({target}, x[i]);"),
        });
    }
    parts.join(" ")
}

/// How a float check was bounded, for the report (`depth`: the combination depth used).
fn bound_note(class: Option<Op>, depth: &str) -> String {
    match class {
        Some(Op::Plus) => format!("bound depth*u*sum|x| + 2u*|ref|, depth {depth}"),
        Some(Op::Multiplies) => "bound (n+2)*u*|ref|".into(),
        Some(_) => "exact".into(),
        None => format!(
            "bound (depth*u*sum|x| + 2u*|ref|) + (n+2)*u*|ref|, depth {depth}: the combiner matches no built-in op on sample pairs, so this assumes it is associative and built of + and *"
        ),
    }
}

/// Checks one variable; returns (pass, the lines to print after the variable's header).
fn check_var(
    v: &VarOp,
    k: usize,
    plan: &Plan,
    want: &Expected,
    got: &Got,
    ty: ElemType,
) -> (bool, Vec<String>) {
    let class = v.bound_class();
    let show = |r: &Reference| match r.exact {
        Some(e) => format!("{e} (exact)"),
        None => format!("{:e} (float64)", r.value),
    };
    match (want, got) {
        (Expected::Arg(w), Got::Arg(val, idx)) => {
            let ok = *val == w.value && *idx == w.index;
            let why = match w.ties {
                _ if w.index == u64::MAX => "the identity pair: nothing to combine".to_string(),
                0 => "the initial pair: no element beats it".to_string(),
                1 => "one element holds this value".to_string(),
                t => format!("{t} elements hold this value; ties go to the lowest index"),
            };
            (
                ok,
                vec![
                    format!("result:    {val} at index {idx}"),
                    format!("reference: {} at index {} ({why})", w.value, w.index),
                    if ok {
                        "check:     OK (value and index exact)".into()
                    } else {
                        format!(
                            "check:     MISMATCH: got {val} at index {idx}, expected {} at index {}",
                            w.value, w.index
                        )
                    },
                ],
            )
        }
        (Expected::Scalar(r), Got::Scalar(g)) => {
            let depth = combination_depth(plan, k);
            let bound = reference::float_bound(class, ty, r, depth);
            let verdict = reference::check_within(*g, r, bound);
            let exact = r.exact.is_some() || bound == 0.0;
            let note = bound_note(class, &depth.to_string());
            let check = match verdict {
                Ok(()) if exact => "check:     OK (exact)".to_string(),
                Ok(()) => format!(
                    "check:     OK (|error| {:.2e} <= {bound:.2e}: {note})",
                    (g.to_f64() - r.value).abs()
                ),
                Err(m) if exact => format!("check:     MISMATCH: {m}"),
                Err(m) => format!("check:     MISMATCH: {m} ({note})"),
            };
            (
                check.starts_with("check:     OK"),
                vec![
                    format!("result:    {g}"),
                    format!("reference: {}", show(r)),
                    check,
                ],
            )
        }
        (Expected::Span(rs), Got::Span(gs)) => {
            let vp = &plan.vars[k];
            let tree = combination_depth(plan, k) + plan.local as f64;
            let atomic_store = matches!(
                vp.span.map(|s| s.store),
                Some(SpanStore::GlobalAtomic | SpanStore::LocalShared)
            ) || vp.cross == CrossAlgo::Atomic;
            let mut bad = Vec::new();
            let mut worst = 0.0f64;
            for (b, (r, g)) in rs.iter().zip(gs).enumerate() {
                // Any order of m + 1 terms is within m*u*sum|x|; the tree steps bound it
                // tighter where no atomic reorders the bin's updates.
                let m = r.n as f64 + 1.0;
                let depth = if atomic_store { m } else { m.min(tree) };
                let bound = reference::float_bound(class, ty, r, depth);
                match reference::check_within(*g, r, bound) {
                    Ok(()) if bound > 0.0 => {
                        worst = worst.max((g.to_f64() - r.value).abs() / bound)
                    }
                    Ok(()) => {}
                    Err(m) => bad.push(format!("bin {b}: {m}")),
                }
            }
            let preview = |xs: Vec<String>| {
                let more = if xs.len() > 6 { ", ..." } else { "" };
                format!("[{}{more}]", xs[..xs.len().min(6)].join(", "))
            };
            let sizes = rs.iter().map(|r| r.n);
            let (lo, hi) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
            let exact = rs.iter().all(|r| r.exact.is_some())
                || !matches!(class, Some(Op::Plus | Op::Multiplies) | None);
            let how = if exact {
                "exact".to_string()
            } else {
                let depth = if atomic_store {
                    "the bin's size + 1 (atomic updates)".to_string()
                } else {
                    format!("min(the bin's size + 1, {tree})")
                };
                format!(
                    "largest error/bound {worst:.3}; per bin {}",
                    bound_note(class, &depth)
                )
            };
            let ok = bad.is_empty();
            (
                ok,
                vec![
                    format!(
                        "result:    {} bins {}",
                        gs.len(),
                        preview(gs.iter().map(|g| g.to_string()).collect())
                    ),
                    format!(
                        "reference: {} bins of {lo}..{hi} elements {}",
                        rs.len(),
                        preview(
                            rs.iter()
                                .map(|r| match r.exact {
                                    Some(e) => e.to_string(),
                                    None => format!("{:e}", r.value),
                                })
                                .collect()
                        )
                    ),
                    if ok {
                        format!("check:     OK ({} of {} bins; {how})", rs.len(), rs.len())
                    } else {
                        format!(
                            "check:     MISMATCH: {} of {} bins differ; {}{}",
                            bad.len(),
                            rs.len(),
                            bad[..bad.len().min(4)].join("; "),
                            if bad.len() > 4 { "; ..." } else { "" }
                        )
                    },
                ],
            )
        }
        _ => unreachable!("results and references have the variable's shape"),
    }
}

/// A variable's result as read back.
enum Got {
    Scalar(Value),
    Arg(Value, u64),
    Span(Vec<Value>),
}

fn cmd_reduce(a: &ReduceArgs) -> CliResult<bool> {
    let c = &a.common;
    let ty = ElemType::parse(&a.ty)?;
    if ty == ElemType::F16 {
        return usage(
            "--type f16: f16 is a storage type in clreduce; reduce i32, u32, i64, u64, f32 or f64",
        );
    }
    let form: clreduce::Form = match a.form.as_str() {
        "range" => Range::new(a.n).into(),
        "nd-range" | "nd_range" | "nd" => NdRange::new(a.n, a.local).into(),
        other => {
            return Err(Error::UnknownName {
                kind: "form",
                name: other.into(),
                known: vec!["range", "nd-range"],
            }
            .into());
        }
    };
    let vars = parse_vars(a, ty)?;
    if let Some(v) = vars.iter().find(|v| matches!(v, VarOp::Arg { .. })) {
        if a.span.is_some() {
            return usage(format!(
                "--span with {}: a span reduction takes no index buffer (reduction_span); reduce one {} variable per element instead",
                v.label(),
                v.label()
            ));
        }
    }
    let n = a.n as usize;
    let (data, data_note) = input_for(&vars, ty, n, a.seed);
    let inits: Vec<Init> = vars
        .iter()
        .enumerate()
        .map(|(k, v)| initial(v, ty, a.seed.wrapping_add(k as u64), a.span))
        .collect();
    // A custom identity must be neutral, or every partial result the device combines it into
    // is off: refuse it up front rather than report a mismatch.
    for v in &vars {
        if let VarOp::Custom { op, expr, .. } = v {
            let mut samples: Vec<Value> = (0..n.min(64)).map(|j| data.value(j)).collect();
            samples.push(reference::value_of(ty, 3));
            let probe = match op.identity_value() {
                Some(id) => reference::check_custom_identity(expr, id, &samples),
                None => samples
                    .iter()
                    .try_for_each(|&x| expr.eval(ty, x, x).map(drop)),
            };
            probe.map_err(|e| CliError::Usage(format!("--custom {:?}: {e}", op.expr())))?;
        }
    }
    let body = reduce_body(&vars, ty, a.span);
    let mut want: Option<Vec<Expected>> = None;
    let mut all_ok = true;
    for d in pick_devices(c.device.as_deref())? {
        match reduce_on(&d, a, ty, form, &vars, &inits, &data, &body) {
            Err(e) if c.device.as_deref() == Some("all") => {
                println!("{}: {e}", d.label());
                continue;
            }
            Err(e) => return Err(e.into()),
            Ok((plan, got, t)) => {
                if want.is_none() {
                    want = Some(expected(&vars, &inits, &data, a.init_identity)?);
                }
                let want = want.as_ref().expect("computed above");
                println!("device:    {}", d.label());
                println!("input:     x = {n} x {ty}, seed {}, {data_note}", a.seed);
                println!("body:      {body}");
                print!("{plan}");
                println!("device time: {:.1} us", t as f64 / 1e3);
                let mut passed = 0;
                for (k, v) in vars.iter().enumerate() {
                    let vp = &plan.vars[k];
                    println!(
                        "var {k}:     {} {ty}{} -> {} + {}",
                        v.label(),
                        vp.span
                            .map(|s| format!(" span of {} ({})", s.len, s.store.name()))
                            .unwrap_or_default(),
                        vp.group,
                        vp.cross
                    );
                    let (ok, lines) = check_var(v, k, &plan, &want[k], &got[k], ty);
                    for l in lines {
                        println!("{l}");
                    }
                    passed += ok as usize;
                }
                let total = vars.len();
                if passed == total {
                    println!(
                        "PASS:      {passed} of {total} variable(s) match the host reference on {}",
                        d.label()
                    );
                } else {
                    println!(
                        "FAIL:      {} of {total} variable(s) differ from the host reference on {}",
                        total - passed,
                        d.label()
                    );
                    all_ok = false;
                }
            }
        }
    }
    Ok(all_ok)
}

/// One launch on one device: the plan, every variable's result and the device time, or the
/// library's refusal.
#[allow(clippy::too_many_arguments)]
fn reduce_on(
    d: &Device,
    a: &ReduceArgs,
    ty: ElemType,
    form: clreduce::Form,
    vars: &[VarOp],
    inits: &[Init],
    data: &HostVec,
    body: &str,
) -> Result<(Plan, Vec<Got>, u64)> {
    let q = queue_on(d, &a.common)?;
    let x = DynBuffer::upload(&q, data)?;
    let targets = make_targets(&q, ty, inits)?;
    let reds = make_reductions(vars, &targets, a.init_identity);
    let opts = options(&a.common)?;
    let ev =
        q.parallel_for_reduce_with(form, reds.clone(), Kernel::new(body).arg("x", &x), opts)?;
    let t = ev.device_time_ns()?;
    let mut got = Vec::new();
    for t in &targets {
        got.push(match t {
            Target::Scalar(b) => Got::Scalar(b.value(0)?),
            Target::Arg(b, i) => Got::Arg(b.value(0)?, i.get(0)?),
            Target::Span(b) => Got::Span(read_all(b)?),
        });
    }
    // A launch that ran nothing may come without a plan: explain it for the report.
    let plan = match ev.plan() {
        Some(p) => p.clone(),
        None => q.explain(form, reds, opts)?,
    };
    Ok((plan, got, t))
}
fn cmd_demo(n: u64) -> Result<bool> {
    println!("OpenCL devices found:");
    for d in devices()? {
        println!("  {}: {}", d.index(), d.label());
    }
    let d = clreduce::device::select(None)?;
    println!(
        "\ndefault device: {} (set CLREDUCE_DEVICE to pick another)\n",
        d.label()
    );
    // The demo prints device times: a profiling queue.
    let q = Queue::new(&d)?.with_profiling()?;
    let mut ok = true;
    for (op, ty) in [
        (Op::Plus, ElemType::F32),
        (Op::Plus, ElemType::I32),
        (Op::Maximum, ElemType::F64),
    ] {
        if q.caps().supports_type(ty).is_err() {
            println!("{op} over {ty}: skipped, the device lacks {ty}");
            continue;
        }
        let data = reference::random_input(op, ty, n as usize, 42);
        let x = DynBuffer::upload(&q, &data)?;
        let res = DynBuffer::scalar(&q, op_identity(op, ty))?;
        let body = if op == Op::Plus {
            "sum += x[i];"
        } else {
            "combine(sum, x[i]);"
        };
        let ev = q.parallel_for_reduce(
            Range::new(n),
            reduction(&res, op).initialize_to_identity(),
            Kernel::new(body).arg("x", &x),
        )?;
        let t = ev.device_time_ns()?;
        let got = res.value(0)?;
        let expect = reference::reference(op, &data, None);
        let plan = ev.plan().expect("n > 0 runs a plan");
        let verdict = reference::check(
            op,
            ty,
            got.to_f64(),
            got.as_int(),
            &expect,
            combination_depth(plan, 0),
        );
        println!("{op} over {n} x {ty}: {}", plan.summary());
        print!("{plan}");
        println!(
            "  result {got}, host reference {}, {}; device time {:.1} us ({:.1} GB/s)\n",
            expect
                .exact
                .map(|e| e.to_string())
                .unwrap_or_else(|| format!("{:e}", expect.value)),
            match &verdict {
                Ok(()) => "OK".to_string(),
                Err(m) => format!("MISMATCH: {m}"),
            },
            t as f64 / 1e3,
            (n as f64 * ty.size() as f64) / t.max(1) as f64
        );
        ok &= verdict.is_ok();
    }
    Ok(ok)
}
