//! `clreduce explain`: the plan for a reduction of one or more variables (the `--op` list of
//! `reduce`) in the range or nd_range form, printed without running anything.

use crate::args::{
    op_identity, options, pick_devices, queue_on, split_devices, AllDevices, Common, Refusal,
};
use crate::error::{usage, CliResult};
use crate::vars::{check_types, make_reductions, make_targets, parse_op_list, Init, VarOp};
use clreduce::multi::{units_of, MultiBuffer, MultiKernel, MultiQueue, Split};
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Axis, Buffer, Device, DynBuffer, ElemType,
    Error, HostVec, Kernel, NdRange, Op, Range, Reduction, Result, Segments,
};

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
    /// The shares and plans of one launch cut across the selected devices (--device all, the
    /// default, leaves simulators out; or a comma list): the split by measured throughput
    /// (measured here once) unless --shares.
    #[arg(long)]
    split: bool,
    /// Weights of the devices' shares with --split (e.g. 1,3).
    #[arg(long, value_name = "W,W,...")]
    shares: Option<String>,
    /// Segmented: the rows of an R x C row-major array (with --cols; --n is R x C).
    #[arg(long, value_name = "R")]
    rows: Option<u64>,
    /// Segmented: the columns of the R x C array (with --rows).
    #[arg(long, value_name = "C")]
    cols: Option<u64>,
    /// With --rows/--cols: 1 (the default) one result per row, 0 one per column.
    #[arg(long, value_name = "1|0")]
    axis: Option<u8>,
    /// Segmented: CSR segments of seeded heavy-tailed lengths of this mean over --n elements.
    #[arg(long, value_name = "MEAN")]
    ragged: Option<u64>,
    #[command(flatten)]
    common: Common,
}

/// `clreduce explain`.
pub fn run(a: &ExplainArgs) -> CliResult<bool> {
    let c = &a.common;
    c.validate()?;
    let ty = ElemType::parse(&a.ty)?;
    let ops = parse_op_list(&a.op)?;
    check_types(&ops, ty)?;
    if a.split {
        return Ok(explain_split(a, ty, &ops)?);
    }
    if a.shares.is_some() {
        return usage(
            "--shares weighs the devices of --split: give --split too, or leave --shares out",
        );
    }
    let mut all = AllDevices::default();
    for d in pick_devices(c.device.as_deref())? {
        match explain_on(a, &d, ty, &ops) {
            Ok(p) => {
                all.ran(&d);
                out!("{p}");
            }
            Err(e) if c.all_devices() => match all.refused(&d, &e.into()) {
                Refusal::Skipped(m) => outln!("{}: skipped: {m}", d.label()),
                Refusal::Failed(m) => outln!("{}: error: {m}", d.label()),
            },
            Err(e) => return Err(e.into()),
        }
    }
    all.finish(true)
}

/// The plan (and with `--source` the program) on one device, as text: the launch `clreduce
/// reduce` runs with the same flags, its body over an input `x` of the range's length
/// included (the body's reads at `[i]` take part in the plan: vector loads, CSR kernels).
fn explain_on(a: &ExplainArgs, d: &Device, ty: ElemType, ops: &[VarOp]) -> Result<String> {
    let c = &a.common;
    let q = queue_on(d, c)?;
    let (form, reds, body, n): (clreduce::Form, Vec<Reduction>, String, u64) = match segmented(a)? {
        Some(seg) => {
            let (range, reds) = seg_reductions(&q, ops, ty, &seg, a.init_identity)?;
            let body = (ops.iter().enumerate())
                .map(|(k, v)| crate::reduce::seg_var_body(k, v))
                .collect();
            let n = range.extents().iter().product();
            (range.into(), reds, body, n)
        }
        None => {
            let targets = make_targets(&q, ty, &identity_inits(ops, ty))?;
            let reds = make_reductions(ops, &targets, a.init_identity);
            let form: clreduce::Form = if a.nd_range {
                NdRange::new(a.n, a.local).into()
            } else {
                Range::new(a.n).into()
            };
            (form, reds, crate::reduce::reduce_body(ops, ty, None), a.n)
        }
    };
    let (x, note) = input_of(&q, ty, n)?;
    let kernel = Kernel::new(&body).arg("x", &x);
    let plan = q.explain_launch(form, reds.clone(), kernel.clone(), options(c)?)?;
    let mut text = format!("{note}{plan}");
    if a.source {
        text.push_str(&q.explain_source(form, reds, kernel, options(c)?)?);
    }
    Ok(text)
}

/// The largest input `explain` allocates to plan with (bytes); a longer range plans with a
/// one-element stand-in, and says so.
const INPUT_CAP: u64 = 1 << 30;

/// The input `x` of `n` elements of `ty` (zero-filled; nothing runs), or where that is more
/// than [`INPUT_CAP`] or the device refuses it a one-element stand-in and a note that the
/// plan then takes the body for one that reads nothing at `[i]`.
fn input_of(q: &clreduce::Queue, ty: ElemType, n: u64) -> Result<(DynBuffer, String)> {
    let bytes = n.saturating_mul(ty.size() as u64);
    let why = if bytes > INPUT_CAP {
        format!("{bytes} bytes is more than explain allocates ({INPUT_CAP})")
    } else {
        match DynBuffer::zeros(q, ty, n as usize) {
            Ok(x) => return Ok((x, String::new())),
            Err(e) => e.to_string(),
        }
    };
    let x = DynBuffer::scalar(q, op_identity(Op::Plus, ty))?;
    let note = format!(
        "note: no input of {n} elements ({why}): planned as for a body that reads nothing at [i]\n"
    );
    Ok((x, note))
}

/// `clreduce explain --split`: the split and each device's plan for its share.
fn explain_split(a: &ExplainArgs, ty: ElemType, ops: &[VarOp]) -> Result<bool> {
    let c = &a.common;
    let queues = split_devices(c.device.as_deref())?
        .iter()
        .map(|d| queue_on(d, c))
        .collect::<Result<Vec<_>>>()?;
    let mq = MultiQueue::new(&queues)?;
    let targets = make_targets(mq.queue(0), ty, &identity_inits(ops, ty))?;
    let (form, reds, body): (clreduce::Form, Vec<Reduction>, String) = match segmented(a)? {
        Some(seg) => {
            let (range, reds) = seg_reductions(mq.queue(0), ops, ty, &seg, a.init_identity)?;
            let body = (ops.iter().enumerate())
                .map(|(k, v)| crate::reduce::seg_var_body(k, v))
                .collect();
            (range.into(), reds, body)
        }
        None => (
            match a.nd_range {
                true => NdRange::new(a.n, a.local).into(),
                false => Range::new(a.n).into(),
            },
            make_reductions(ops, &targets, a.init_identity),
            crate::reduce::reduce_body(ops, ty, None),
        ),
    };
    let (units, per) = units_of(&form)?;
    let split = match &a.shares {
        Some(s) => {
            let w: Vec<f64> = s
                .split(',')
                .map(|x| x.trim().parse::<f64>().unwrap_or(-1.0))
                .collect();
            if w.len() != mq.len() {
                return Err(clreduce::Error::BadArgument {
                    name: "--shares".into(),
                    problem: format!("{} weights for {} devices", w.len(), mq.len()),
                });
            }
            Split::proportional(units, &w)?
        }
        None => {
            let det = options(c)?.determinism;
            let t = mq.throughput_for(det)?;
            for (q, d) in mq.queues().iter().zip(&t.devices) {
                outln!(
                    "throughput: {}: alone {:.1} us latency, {:.2} G indices/s; with the others running {:.1} us, {:.2} G/s ({})",
                    q.device().label(),
                    d.latency_s * 1e6,
                    d.rate_alone / 1e9,
                    d.latency_together_s * 1e6,
                    d.rate_together / 1e9,
                    t.source
                );
            }
            outln!(
                "throughput: a split launch costs {:.1} us beyond its slowest share",
                t.split_overhead_s * 1e6
            );
            mq.split_segments(form, reds.clone(), det)?
        }
    };
    outln!(
        "split: {units} unit(s) of {per} index(es) ({}) over {} device(s): {:?}",
        if a.nd_range {
            "work-groups"
        } else if per > 1 {
            "rows"
        } else {
            "elements"
        },
        mq.len(),
        split.counts()
    );
    let (kernel, note) = split_kernel(&mq, &body, ty, &split, per)?;
    out!("{note}");
    let plans = mq.explain_split_launch(form, reds, &kernel, &split, options(c)?)?;
    let shares = split.counts().iter().zip(split.fractions());
    for ((q, plan), (c, f)) in mq.queues().iter().zip(plans).zip(shares) {
        outln!(
            "share: {}: {c} unit(s), {:.1}%",
            q.device().label(),
            f * 100.0
        );
        if let Some(p) = plan {
            out!("{p}");
        }
    }
    Ok(true)
}

/// `explain --split`'s kernel: `reduce --split`'s body over an input `x` of zeros scattered
/// by `split` (`per` elements per unit; nothing runs), or beyond [`INPUT_CAP`] (and for the
/// 16-bit types) a one-element stand-in on every device and a note that the plans then take
/// the body for one that reads nothing at `[i]`.
fn split_kernel(
    mq: &MultiQueue,
    body: &str,
    ty: ElemType,
    split: &Split,
    per: u64,
) -> Result<(MultiKernel, String)> {
    let n = split.total().saturating_mul(per);
    let bytes = n.saturating_mul(ty.size() as u64);
    let zeros = match bytes <= INPUT_CAP {
        true => HostVec::zeros(ty, n as usize),
        false => None,
    };
    if let Some(x) = zeros {
        return Ok((
            crate::reduce::split_kernel(mq, body, &x, split, per)?,
            String::new(),
        ));
    }
    fn one<T: clreduce::Element + Default>(mq: &MultiQueue) -> Result<MultiBuffer<T>> {
        let parts = (mq.queues().iter()).map(|q| q.buffer_from(&[T::default()]));
        Ok(MultiBuffer::replicated(parts.collect::<Result<Vec<_>>>()?))
    }
    let k = MultiKernel::new(body);
    let kernel = match ty {
        ElemType::I32 => k.arg("x", &one::<i32>(mq)?),
        ElemType::U32 => k.arg("x", &one::<u32>(mq)?),
        ElemType::I64 => k.arg("x", &one::<i64>(mq)?),
        ElemType::U64 => k.arg("x", &one::<u64>(mq)?),
        ElemType::F64 => k.arg("x", &one::<f64>(mq)?),
        _ => k.arg("x", &one::<f32>(mq)?),
    };
    let note = format!(
        "note: no input of {n} {} elements ({bytes} bytes; explain allocates at most {INPUT_CAP} of 32- and 64-bit types): planned as for a body that reads nothing at [i]\n",
        ty.name()
    );
    Ok((kernel, note))
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

/// The segments `explain` was asked for.
enum Seg {
    Rows(u64, u64),
    Cols(u64, u64),
    Ragged(Vec<u64>),
}

/// `--rows/--cols/--axis` or `--ragged`, checked as `reduce` checks them.
fn segmented(a: &ExplainArgs) -> Result<Option<Seg>> {
    let bad = |problem: String| Error::BadArgument {
        name: "--rows/--cols/--axis/--ragged".into(),
        problem,
    };
    if a.rows.is_none() && a.cols.is_none() && a.axis.is_none() && a.ragged.is_none() {
        return Ok(None);
    }
    if a.nd_range {
        return Err(bad(
            "segmented reductions take a range, not --nd-range".into()
        ));
    }
    if let Some(mean) = a.ragged {
        if a.rows.is_some() || a.cols.is_some() || a.axis.is_some() || mean == 0 {
            return Err(bad(
                "--ragged MEAN (at least 1) takes --n, not --rows/--cols/--axis".into(),
            ));
        }
        let off = clreduce::check::ragged::ragged_offsets(a.n, mean, 1 ^ 0x5E6);
        return Ok(Some(Seg::Ragged(off)));
    }
    let (Some(r), Some(c)) = (a.rows, a.cols) else {
        return Err(bad("--rows R and --cols C go together".into()));
    };
    if r == 0 || c == 0 || r.checked_mul(c).is_none() {
        return Err(bad(format!(
            "--rows {r} --cols {c}: both at least 1, R x C within 64 bits"
        )));
    }
    match a.axis.unwrap_or(1) {
        1 => Ok(Some(Seg::Rows(r, c))),
        0 => Ok(Some(Seg::Cols(r, c))),
        x => Err(bad(format!("--axis {x}: 1 (rows) or 0 (columns)"))),
    }
}

/// The range and segmented variables (identity initial values, on `q`) of `seg`.
fn seg_reductions(
    q: &clreduce::Queue,
    ops: &[VarOp],
    ty: ElemType,
    seg: &Seg,
    init_identity: bool,
) -> Result<(Range, Vec<Reduction>)> {
    let (range, segments, offsets) = match seg {
        Seg::Rows(r, c) => (Range::new_2d(*r, *c), *r, None),
        Seg::Cols(r, c) => (Range::new_2d(*r, *c), *c, None),
        Seg::Ragged(off) => (
            Range::new(*off.last().expect("offsets")),
            off.len() as u64 - 1,
            Some(q.buffer_from(off)?),
        ),
    };
    let mut reds = Vec::new();
    for (k, v) in ops.iter().enumerate() {
        let (op, arg) = match v {
            VarOp::Builtin(op) => (*op, None),
            VarOp::Arg { max } => (if *max { Op::Maximum } else { Op::Minimum }, Some(*max)),
            VarOp::Custom { .. } => unreachable!("explain parses no custom ops"),
        };
        let id = vec![op_identity(op, ty); segments as usize];
        let b = DynBuffer::upload(q, &HostVec::from_values(ty, &id).expect("values of ty"))?;
        let r = match arg {
            None => reduction(&b, op),
            Some(max) => {
                let ix: Buffer<u64> = q.buffer_from(&vec![u64::MAX; segments as usize])?;
                if max {
                    reduction_argmax(&b, &ix)
                } else {
                    reduction_argmin(&b, &ix)
                }
            }
        };
        let r = r.name(&format!("v{k}"));
        let r = if init_identity {
            r.initialize_to_identity()
        } else {
            r
        };
        reds.push(match (seg, &offsets) {
            (Seg::Rows(..), _) => r.axis(Axis::Last),
            (Seg::Cols(..), _) => r.axis(Axis::First),
            (_, Some(o)) => r.segments(Segments::offsets(o)),
            _ => unreachable!("offsets made for ragged"),
        });
    }
    Ok((range, reds))
}
