//! `clreduce reduce`: one launch of one or more reduction variables over one seeded random
//! input on each device asked for, each variable checked against the host reference. The
//! command line and its variables are in args.rs, the input, initial values and body in
//! data.rs, the host's verdict in check.rs; this file prepares the run, launches it per device
//! and prints the report.

mod args;
mod check;
mod data;

pub use args::ReduceArgs;

use crate::args::{options, pick_devices, queue_on};
use crate::error::{usage, CliResult};
use crate::vars::{make_reductions, make_targets, read_all, Init, Target, VarOp};
use check::{check_var, expected, Expected, Got};
use clreduce::check::reference::HostVec;
use clreduce::plan::Plan;
use clreduce::{Device, DynBuffer, ElemType, Error, Kernel, NdRange, Range, Result};

/// Everything a device's launch needs, prepared once for all devices.
struct Prepared {
    ty: ElemType,
    form: clreduce::Form,
    vars: Vec<VarOp>,
    inits: Vec<Init>,
    data: HostVec,
    /// How the input was generated, for the `input:` line.
    data_note: String,
    body: String,
}

/// `clreduce reduce`: Ok(false) when a variable did not match the host reference (exit 1).
pub fn run(a: &ReduceArgs) -> CliResult<bool> {
    let p = prepare(a)?;
    let mut want: Option<Vec<Expected>> = None;
    let mut all_ok = true;
    for d in pick_devices(a.common.device.as_deref())? {
        match reduce_on(&d, a, &p) {
            Err(e) if a.common.all_devices() => {
                println!("{}: {e}", d.label());
                continue;
            }
            Err(e) => return Err(e.into()),
            Ok((plan, got, t)) => {
                if want.is_none() {
                    want = Some(expected(&p.vars, &p.inits, &p.data, a.init_identity)?);
                }
                let want = want.as_ref().expect("computed above");
                all_ok &= print_device(&d, a, &p, &plan, want, &got, t);
            }
        }
    }
    Ok(all_ok)
}

/// The type, form, variables, input, initial values and body, with every command-line mistake
/// refused before any device is touched.
fn prepare(a: &ReduceArgs) -> CliResult<Prepared> {
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
    let vars = args::parse_vars(a, ty)?;
    if let Some(v) = vars.iter().find(|v| matches!(v, VarOp::Arg { .. })) {
        if a.span.is_some() {
            return usage(format!(
                "--span with {}: a span reduction takes no index buffer (reduction_span); reduce one {} variable per element instead",
                v.label(),
                v.label()
            ));
        }
    }
    let (data, data_note) = data::input_for(&vars, ty, a.n as usize, a.seed);
    let inits: Vec<Init> = vars
        .iter()
        .enumerate()
        .map(|(k, v)| data::initial(v, ty, a.seed.wrapping_add(k as u64), a.span))
        .collect();
    data::check_custom_identities(&vars, ty, &data)?;
    let body = data::reduce_body(&vars, ty, a.span);
    Ok(Prepared {
        ty,
        form,
        vars,
        inits,
        data,
        data_note,
        body,
    })
}

/// The times of a device's run: the first launch (which builds the program unless this process
/// already has it) and the checked launch after it.
pub struct Times {
    /// Device time of the checked (warm) launch, ns.
    warm_ns: u64,
    /// Device time of the first launch, ns.
    first_ns: u64,
    /// From the first launch's call to its completion, ns.
    first_wall_ns: u64,
    /// Programs the first launch built.
    built: u64,
}

impl Times {
    /// The `device time:` line's text.
    pub fn describe(&self) -> String {
        format!(
            "{:.1} us (after a warm-up launch; the first launch: {:.1} us of device time, {:.1} ms from call to completion, {})",
            self.warm_ns as f64 / 1e3,
            self.first_ns as f64 / 1e3,
            self.first_wall_ns as f64 / 1e6,
            match self.built {
                0 => "no program built (already in this process)".to_string(),
                k => format!("including building {k} program(s)"),
            }
        )
    }
}

/// One checked launch on one device after a warm-up launch into copies of the variables: the
/// plan, every variable's result and the times, or the library's refusal.
fn reduce_on(d: &Device, a: &ReduceArgs, p: &Prepared) -> Result<(Plan, Vec<Got>, Times)> {
    let q = queue_on(d, &a.common)?;
    let x = DynBuffer::upload(&q, &p.data)?;
    let opts = options(&a.common)?;
    // The warm-up: same plan and program, its own result buffers (left unchecked).
    let scratch = make_targets(&q, p.ty, &p.inits)?;
    let built = clreduce::compiled_programs();
    let t0 = std::time::Instant::now();
    let first = q.parallel_for_reduce_with(
        p.form,
        make_reductions(&p.vars, &scratch, a.init_identity),
        Kernel::new(&p.body).arg("x", &x),
        opts,
    )?;
    first.wait()?;
    let first_wall_ns = t0.elapsed().as_nanos() as u64;
    let built = clreduce::compiled_programs() - built;
    let first_ns = first.device_time_ns()?;
    let targets = make_targets(&q, p.ty, &p.inits)?;
    let reds = make_reductions(&p.vars, &targets, a.init_identity);
    let ev = q.parallel_for_reduce_with(
        p.form,
        reds.clone(),
        Kernel::new(&p.body).arg("x", &x),
        opts,
    )?;
    let t = Times {
        warm_ns: ev.device_time_ns()?,
        first_ns,
        first_wall_ns,
        built,
    };
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
        None => q.explain(p.form, reds, opts)?,
    };
    Ok((plan, got, t))
}

/// The report of one device: input, body, plan, device time, each variable's check and the
/// PASS or FAIL line. Returns whether every variable passed.
fn print_device(
    d: &Device,
    a: &ReduceArgs,
    p: &Prepared,
    plan: &Plan,
    want: &[Expected],
    got: &[Got],
    t: Times,
) -> bool {
    let ty = p.ty;
    println!("device:    {}", d.label());
    println!(
        "input:     x = {} x {ty}, seed {}, {}",
        a.n, a.seed, p.data_note
    );
    println!("body:      {}", p.body);
    print!("{plan}");
    println!("device time: {}", t.describe());
    let mut passed = 0;
    for (k, v) in p.vars.iter().enumerate() {
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
        let verdict = check_var(v, k, plan, &want[k], &got[k], ty);
        for l in verdict.lines {
            println!("{l}");
        }
        passed += verdict.ok as usize;
    }
    let total = p.vars.len();
    if passed == total {
        println!(
            "PASS:      {passed} of {total} variable(s) match the host reference on {}",
            d.label()
        );
        true
    } else {
        println!(
            "FAIL:      {} of {total} variable(s) differ from the host reference on {}",
            total - passed,
            d.label()
        );
        false
    }
}
