//! The `clreduce` command: devices, explain, reduce, demo (and bench, see bench.rs).

use clap::{Parser, Subcommand};
use clreduce::caps::{DeviceCaps, Space};
use clreduce::dynbuf::{value_as_int, DynBuffer};
use clreduce::plan::{Determinism, Strategy};
use clreduce::reference::{self, combination_depth};
use clreduce::{
    devices, reduction, Device, ElemType, Error, Kernel, Mask, NdRange, Op, Options, Queue, Range,
    Result,
};
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
        #[arg(long, default_value = "sum")]
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
    Reduce {
        #[arg(long, default_value = "sum")]
        op: String,
        #[arg(long = "type", default_value = "f32")]
        ty: String,
        #[arg(long, default_value_t = 1_000_003)]
        n: u64,
        /// range or nd-range
        #[arg(long, default_value = "range")]
        form: String,
        #[arg(long, default_value_t = 256)]
        local: usize,
        #[arg(long)]
        init_identity: bool,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        common: Common,
    },
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
        Cmd::Devices { json } => cmd_devices(json),
        Cmd::Explain {
            op,
            ty,
            n,
            nd_range,
            local,
            init_identity,
            common,
        } => cmd_explain(&op, &ty, n, nd_range, local, init_identity, &common),
        Cmd::Reduce {
            op,
            ty,
            n,
            form,
            local,
            init_identity,
            seed,
            common,
        } => cmd_reduce(&op, &ty, n, &form, local, init_identity, seed, &common),
        Cmd::Demo { n } => cmd_demo(n),
        Cmd::Bench(a) => bench::run(a),
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
    })
}

fn queue_on(d: &Device, c: &Common) -> Result<Queue> {
    let mask = match &c.mask {
        Some(m) => Mask::parse(m)?,
        None => Mask::from_env()?,
    };
    Queue::with_mask(d, mask)
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
        ("wg collectives".into(), yn(c.work_group_collectives).into()),
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
    let op = Op::parse(op)?;
    let ty = ElemType::parse(ty)?;
    for d in pick_devices(c.device.as_deref())? {
        let q = queue_on(&d, c)?;
        let b = DynBuffer::scalar(&q, op_identity(op, ty))?;
        let mut r = reduction(&b, op);
        if init_identity {
            r = r.initialize_to_identity();
        }
        let form: clreduce::Form = if nd {
            NdRange::new(n, local).into()
        } else {
            Range::new(n).into()
        };
        match q.explain(form, r, options(c)?) {
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

#[allow(clippy::too_many_arguments)]
fn cmd_reduce(
    op: &str,
    ty: &str,
    n: u64,
    form: &str,
    local: usize,
    init_identity: bool,
    seed: u64,
    c: &Common,
) -> Result<bool> {
    let op = Op::parse(op)?;
    let ty = ElemType::parse(ty)?;
    let form: clreduce::Form = match form {
        "range" => Range::new(n).into(),
        "nd-range" | "nd_range" | "nd" => NdRange::new(n, local).into(),
        other => {
            return Err(Error::UnknownName {
                kind: "form",
                name: other.into(),
                known: vec!["range", "nd-range"],
            });
        }
    };
    let data = reference::random_input(op, ty, n as usize, seed);
    let init = reference::random_initial(op, ty, seed);
    let expect = reference::reference(op, &data, if init_identity { None } else { Some(init) });
    let mut all_ok = true;
    for d in pick_devices(c.device.as_deref())? {
        let q = queue_on(&d, c)?;
        let x = DynBuffer::upload(&q, &data)?;
        let res = DynBuffer::scalar(&q, init)?;
        let mut r = reduction(&res, op);
        if init_identity {
            r = r.initialize_to_identity();
        }
        let body = match op {
            Op::Plus => "sum += x[i];",
            _ => "combine(sum, x[i]);",
        };
        let ev = match q.parallel_for_reduce_with(
            form,
            r,
            Kernel::new(body).arg("x", &x),
            options(c)?,
        ) {
            Ok(ev) => ev,
            Err(e) if c.device.as_deref() == Some("all") => {
                println!("{}: {e}", d.label());
                continue;
            }
            Err(e) => return Err(e),
        };
        let t = ev.device_time_ns()?;
        let got = res.value(0)?;
        let plan = ev.plan().cloned();
        let depth = plan
            .as_ref()
            .map(|p| combination_depth(p, 0))
            .unwrap_or(1.0);
        let verdict = reference::check(op, ty, got.to_f64(), value_as_int(got), &expect, depth);
        println!("device:    {}", d.label());
        if let Some(p) = &plan {
            print!("{p}");
        }
        println!("result:    {got}");
        println!(
            "reference: {}",
            match expect.exact {
                Some(e) => e.to_string(),
                None => format!("{:e} (float64)", expect.value),
            }
        );
        println!("device time: {:.1} us", t as f64 / 1e3);
        match verdict {
            Ok(()) => println!("check:     OK"),
            Err(msg) => {
                println!("check:     MISMATCH: {msg}");
                all_ok = false;
            }
        }
    }
    Ok(all_ok)
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
    let q = Queue::new(&d)?;
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
            value_as_int(got),
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
