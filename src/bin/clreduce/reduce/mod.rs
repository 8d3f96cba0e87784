//! `clreduce reduce`: one launch of one or more reduction variables over one input (seeded
//! random data, or the user's file with `--input`) on each device asked for, each variable
//! checked against the host reference. The command line and its variables are in args.rs, the
//! input file in input.rs, the random input, initial values and body in data.rs, the host's
//! verdict in check.rs and the `--json` form in json.rs; this file checks sizes before
//! anything is allocated (limits.rs), prepares the run, launches it per device and prints the
//! report.

mod args;
mod check;
mod data;
mod input;
mod json;
mod scale;
mod seg_scale;
mod segments;

pub use args::ReduceArgs;
pub use data::reduce_body;
pub use seg_scale::kernel as split_kernel;
pub use segments::var_body as seg_var_body;

use crate::args::{options, pick_devices, queue_on, AllDevices, Refusal};
use crate::error::{usage, CliError, CliResult};
use crate::limits;
use crate::vars::{make_reductions, make_targets, Init, Target, VarOp};
use check::{check_var, expected, Expected, Got, Verdict};
use clreduce::check::reference::HostVec;
use clreduce::plan::{Determinism, Plan};
use clreduce::{
    Bf16, Buffer, Device, DynBuffer, ElemType, Error, Half, Kernel, NdRange, Queue, Range, Result,
};
use input::FileInput;

/// The default `--n` without `--input`.
const DEFAULT_N: u64 = 1_000_003;

/// What the command line asks for, before any data exists.
struct Spec {
    /// The type the variables reduce in (f32 for f16 and bf16 input).
    ty: ElemType,
    /// The input's element type: `ty`, or f16 / bf16 (read as f32 on the device).
    stored: ElemType,
    n: u64,
    file: Option<FileInput>,
    form: clreduce::Form,
    vars: Vec<VarOp>,
    /// initialize_to_identity: `--init-identity`, or always with `--input` (the results are
    /// of the file's data alone).
    init_identity: bool,
}

/// Everything a device's launch needs, prepared once for all devices.
struct Prepared {
    spec: Spec,
    inits: Vec<Init>,
    data: HostVec,
    /// f16 / bf16 input: its 16-bit values as stored, uploaded as they are (`data` is their
    /// exact f32 widening, for the host's reference).
    bits: Option<Vec<u16>>,
    /// Where the input comes from, for the `input:` line.
    data_note: String,
    body: String,
}

/// `clreduce reduce`: Ok(false) when a variable did not match the host reference (exit 1).
pub fn run(a: &ReduceArgs) -> CliResult<bool> {
    a.common.validate()?;
    if a.shares.is_some() && !a.split {
        return usage(
            "--shares weighs the devices of --split: give --split too, or leave --shares out",
        );
    }
    if segments::wanted(a) {
        return segments::run(a);
    }
    let spec = spec(a)?;
    if a.round && !spec.stored.is_storage() {
        return usage(format!(
            "--round: the input is {}, not f16 or bf16; nothing to round back to",
            spec.stored
        ));
    }
    if (a.split || a.mpi) && spec.stored.is_storage() {
        return usage(format!(
            "--type {} with --split or --mpi: 16-bit input runs on one device at a time here; leave --split/--mpi out",
            spec.stored
        ));
    }
    if a.split || a.mpi {
        // One launch across devices (scale.rs): the host's memory checked as for one device.
        limits::check_host(&needs(a, &spec).what, needs(a, &spec).host)?;
        let p = prepare(a, spec)?;
        return if a.mpi {
            scale::run_mpi(a, &p)
        } else {
            scale::run_split(a, &p)
        };
    }
    let devs = devices_that_fit(a, &spec)?;
    let p = prepare(a, spec)?;
    let mut want: Option<Vec<Expected>> = None;
    let mut all_ok = true;
    let mut js = Vec::new();
    let mut all = AllDevices::default();
    for (d, refusal) in devs {
        let r = match refusal {
            Some(e) => Err(e),
            None => reduce_on(&d, a, &p).map_err(CliError::from),
        };
        match r {
            Err(e) if a.common.all_devices() => match all.refused(&d, &e) {
                Refusal::Skipped(m) if a.json => js.push(json::refused(&d, "skipped", &m)),
                Refusal::Failed(m) if a.json => js.push(json::refused(&d, "error", &m)),
                Refusal::Skipped(m) => outln!("{}: skipped: {m}", d.label()),
                Refusal::Failed(m) => outln!("{}: error: {m}", d.label()),
            },
            Err(e) => return Err(e),
            Ok((plan, got, t)) => {
                all.ran(&d);
                if want.is_none() {
                    let exact = options(&a.common)?.determinism == Determinism::Exact;
                    want = Some(expected(
                        &p.spec.vars,
                        &p.inits,
                        &p.data,
                        p.spec.init_identity,
                        exact,
                    )?);
                }
                let want = want.as_ref().expect("computed above");
                let verdicts: Vec<Verdict> = (0..p.spec.vars.len())
                    .map(|k| check_var(&p.spec.vars[k], k, &plan, &want[k], &got[k], p.spec.ty))
                    .collect();
                all_ok &= verdicts.iter().all(|v| v.ok);
                if a.json {
                    let ran = json::Ran {
                        device: &d,
                        ty: p.spec.ty,
                        n: p.spec.n,
                        input: &p.data_note,
                        body: &p.body,
                        plan: &plan,
                        device_time_ns: t.warm_ns,
                    };
                    js.push(json::ran(&ran, &p.spec.vars, &got, &verdicts));
                } else {
                    print_device(&d, &p, &plan, &verdicts, &t);
                    if a.round {
                        print_rounded(&p, &got);
                    }
                }
            }
        }
    }
    if a.json {
        match serde_json::to_string_pretty(&js) {
            Ok(text) => outln!("{text}"),
            Err(e) => return usage(format!("--json: {e}")),
        }
    }
    all.finish(all_ok)
}

/// The element type, size, form and variables, from the command line and the input file's
/// header; every command-line mistake is refused here, before any data exists.
fn spec(a: &ReduceArgs) -> CliResult<Spec> {
    let given_ty = a.ty.as_deref().map(ElemType::parse).transpose()?;
    let file = match &a.input {
        Some(path) => Some(input::open(path, given_ty, a.n, false)?),
        None => None,
    };
    let (stored, n) = match &file {
        Some(f) => (f.stored, f.n),
        None => (given_ty.unwrap_or(ElemType::F32), a.n.unwrap_or(DEFAULT_N)),
    };
    // f16 and bf16 are read as f32 on the device and reduced in f32.
    let ty = stored.acc();
    let form: clreduce::Form = match a.form.as_str() {
        "range" => Range::new(n).into(),
        "nd-range" | "nd_range" | "nd" => NdRange::new(n, a.local).into(),
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
    crate::vars::check_types(&vars, ty)?;
    if let Some(v) = vars.iter().find(|v| matches!(v, VarOp::Arg { .. })) {
        if a.span.is_some() {
            return usage(format!(
                "--span with {}: a span reduction takes no index buffer (reduction_span); reduce one {} variable per element instead",
                v.label(),
                v.label()
            ));
        }
    }
    if a.input.is_some() {
        if let Some(v) = vars.iter().find(|v| !v.has_identity()) {
            return usage(format!(
                "--input with {}: the results of a file's data alone need initialize_to_identity, which a combiner without an identity cannot do; give --identity",
                v.label()
            ));
        }
    }
    Ok(Spec {
        ty,
        stored,
        n,
        file,
        form,
        vars,
        init_identity: a.init_identity || a.input.is_some(),
    })
}

/// What a run needs: what to call it, the largest device buffer, the device buffers together,
/// and the host memory (the input, and per span bin its initial value, the value read back and
/// the host reference's entry).
struct Needs {
    what: String,
    largest: u128,
    device: u128,
    host: u128,
}

fn needs(a: &ReduceArgs, s: &Spec) -> Needs {
    let esz = s.ty.size() as u128;
    let input = u128::from(s.n) * s.stored.size() as u128;
    let bins = a.span.map_or(0, |len| len as u128 * s.vars.len() as u128);
    let per_bin_host = 2 * std::mem::size_of::<clreduce::Value>()
        + std::mem::size_of::<clreduce::check::reference::Reference>();
    let what = match (&s.file, a.span) {
        (Some(f), _) => format!("the input ({}: {} x {})", f.path_display(), s.n, s.stored),
        (None, None) => format!("the input (--n {} x {})", s.n, s.stored),
        (None, Some(len)) => format!(
            "this run (--n {} x {} and {} --span {len} result(s))",
            s.n,
            s.stored,
            s.vars.len()
        ),
    };
    Needs {
        what,
        largest: input.max(a.span.map_or(0, |len| len as u128 * esz)),
        device: input + bins * esz,
        host: input + bins * (esz + per_bin_host as u128),
    }
}

/// The devices `--device` names, each with its refusal when the input or results would not
/// fit in it. A single device that refuses, or every device refusing, is the command's error
/// (nothing has been allocated yet); the host's memory is checked first.
fn devices_that_fit(a: &ReduceArgs, s: &Spec) -> CliResult<Vec<(Device, Option<CliError>)>> {
    let need = needs(a, s);
    limits::check_host(&need.what, need.host)?;
    let mut out = Vec::new();
    for d in pick_devices(a.common.device.as_deref())? {
        let refusal =
            limits::check_device(&d, &need.what, need.largest, need.device, need.host).err();
        out.push((d, refusal));
    }
    if !a.common.all_devices() || out.iter().all(|(_, r)| r.is_some()) {
        if let Some(i) = out.iter().position(|(_, r)| r.is_some()) {
            return Err(out.swap_remove(i).1.expect("a refusal"));
        }
    }
    Ok(out)
}

/// The input (read or generated), initial values and body.
fn prepare(a: &ReduceArgs, spec: Spec) -> CliResult<Prepared> {
    let seed = a.seed;
    let (data, bits, data_note) = match &spec.file {
        Some(f) => {
            let (d, bits) = f.read()?;
            (d, bits, f.note.clone())
        }
        None => {
            let (d, note) = data::input_for(&spec.vars, spec.ty, spec.n as usize, seed);
            match data::round_to(spec.stored, &d) {
                // f16 / bf16: the f32 values rounded to the storage type (nearest even), and
                // the reference of exactly those.
                Some(bits) => (
                    input::widen(spec.stored, &bits),
                    Some(bits),
                    format!("seed {seed}, {note}, rounded to {}", spec.stored),
                ),
                None => (d, None, format!("seed {seed}, {note}")),
            }
        }
    };
    let inits: Vec<Init> = spec
        .vars
        .iter()
        .enumerate()
        .map(|(k, v)| data::initial(v, spec.ty, seed.wrapping_add(k as u64), a.span))
        .collect();
    data::check_custom_identities(&spec.vars, spec.ty, &data)?;
    let body = data::reduce_body(&spec.vars, spec.ty, a.span);
    Ok(Prepared {
        spec,
        inits,
        data,
        bits,
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
    /// Of those, the ones loaded from the program cache on disk.
    from_disk: u64,
}

impl Times {
    /// The `device time:` line's text.
    pub fn describe(&self) -> String {
        format!(
            "{:.1} us (after a warm-up launch; the first launch: {:.1} us of device time, {:.1} ms from call to completion, {})",
            self.warm_ns as f64 / 1e3,
            self.first_ns as f64 / 1e3,
            self.first_wall_ns as f64 / 1e6,
            crate::out::built_text(self.built, self.from_disk)
        )
    }
}

/// One checked launch on one device after a warm-up launch into copies of the variables: the
/// plan, every variable's result and the times, or the library's refusal.
fn reduce_on(d: &Device, a: &ReduceArgs, p: &Prepared) -> Result<(Plan, Vec<Got>, Times)> {
    let q = queue_on(d, &a.common)?;
    let x = Input::upload(&q, p)?;
    let opts = options(&a.common)?;
    let form = p.spec.form;
    let (ty, vars, init_identity) = (p.spec.ty, &p.spec.vars, p.spec.init_identity);
    // The warm-up: same plan and program, its own result buffers (left unchecked).
    let scratch = make_targets(&q, ty, &p.inits)?;
    let (built, from_disk) = (
        clreduce::compiled_programs(),
        clreduce::programs_from_disk(),
    );
    let t0 = std::time::Instant::now();
    let first = q.parallel_for_reduce_with(
        form,
        make_reductions(vars, &scratch, init_identity),
        x.kernel(&p.body),
        opts,
    )?;
    first.wait()?;
    let first_wall_ns = t0.elapsed().as_nanos() as u64;
    let built = clreduce::compiled_programs() - built;
    let from_disk = clreduce::programs_from_disk() - from_disk;
    let first_ns = first.device_time_ns()?;
    let targets = make_targets(&q, ty, &p.inits)?;
    let reds = make_reductions(vars, &targets, init_identity);
    let ev = q.parallel_for_reduce_with(form, reds.clone(), x.kernel(&p.body), opts)?;
    let t = Times {
        warm_ns: ev.device_time_ns()?,
        first_ns,
        first_wall_ns,
        built,
        from_disk,
    };
    let mut got = Vec::new();
    for t in &targets {
        got.push(match t {
            Target::Scalar(b) => Got::Scalar(b.value(0)?),
            Target::Arg(b, i) => Got::Arg(b.value(0)?, i.get(0)?),
            Target::Span(b) => Got::Span(b.to_values()?),
        });
    }
    // A launch that ran nothing may come without a plan: explain it for the report.
    let plan = match ev.plan() {
        Some(p) => p.clone(),
        None => q.explain(form, reds, opts)?,
    };
    Ok((plan, got, t))
}

/// `--round`: each scalar (or argmin/argmax value) result rounded back to the f16 / bf16 input
/// type, nearest even.
fn print_rounded(p: &Prepared, got: &[Got]) {
    for (k, g) in got.iter().enumerate() {
        let v = match g {
            Got::Scalar(clreduce::Value::F32(v)) | Got::Arg(clreduce::Value::F32(v), _) => *v,
            _ => continue,
        };
        let r = match p.spec.stored {
            ElemType::F16 => Half::from_f32(v).to_f32(),
            ElemType::BF16 => Bf16::from_f32(v).to_f32(),
            _ => continue,
        };
        outln!(
            "rounded:   var {k} as {}: {r:e} (nearest even)",
            p.spec.stored
        );
    }
}

/// The input buffer `x`: any reducible type, or f16 / bf16 values as stored.
enum Input {
    Values(DynBuffer),
    F16(Buffer<Half>),
    BF16(Buffer<Bf16>),
}

impl Input {
    fn upload(q: &Queue, p: &Prepared) -> Result<Input> {
        Ok(match (&p.bits, p.spec.stored) {
            (Some(b), ElemType::F16) => {
                Input::F16(q.buffer_from(&b.iter().map(|&h| Half(h)).collect::<Vec<_>>())?)
            }
            (Some(b), _) => {
                Input::BF16(q.buffer_from(&b.iter().map(|&h| Bf16(h)).collect::<Vec<_>>())?)
            }
            (None, _) => Input::Values(DynBuffer::upload(q, &p.data)?),
        })
    }

    /// The body with `x` bound (a body reads f16 and bf16 elements as float).
    fn kernel(&self, body: &str) -> Kernel {
        let k = Kernel::new(body);
        match self {
            Input::Values(b) => k.arg("x", b),
            Input::F16(b) => k.arg("x", b),
            Input::BF16(b) => k.arg("x", b),
        }
    }
}

/// The report of one device: input, body, plan, device time, each variable's check and the
/// PASS or FAIL line.
fn print_device(d: &Device, p: &Prepared, plan: &Plan, verdicts: &[Verdict], t: &Times) {
    let ty = p.spec.ty;
    outln!("device:    {}", d.label());
    outln!(
        "input:     x = {} x {}, {}",
        p.spec.n,
        p.spec.stored,
        p.data_note
    );
    outln!("body:      {}", p.body);
    out!("{plan}");
    outln!("device time: {}", t.describe());
    for (k, (v, verdict)) in p.spec.vars.iter().zip(verdicts).enumerate() {
        let vp = &plan.vars[k];
        outln!(
            "var {k}:     {} {ty}{} -> {} + {}",
            v.label(),
            vp.span
                .map(|s| format!(" span of {} ({})", s.len, s.store.name()))
                .unwrap_or_default(),
            vp.group,
            vp.cross
        );
        for l in verdict.lines() {
            outln!("{l}");
        }
    }
    let total = p.spec.vars.len();
    let passed = verdicts.iter().filter(|v| v.ok).count();
    if passed == total {
        outln!(
            "PASS:      {passed} of {total} variable(s) match the host reference on {}",
            d.label()
        );
    } else {
        outln!(
            "FAIL:      {} of {total} variable(s) differ from the host reference on {}",
            total - passed,
            d.label()
        );
    }
}
