//! `clreduce reduce --rows R --cols C [--axis 1|0]` and `--ragged MEAN`: segmented and axis
//! reductions (issue 26) of seeded random data, every result checked on the host (integers
//! exactly, floats within (len + 40)·u·Σ|x| of a float64 reference), with `--json` one entry
//! per variable (the count of results, a checksum, the check).

use super::args::ReduceArgs;
use crate::args::{options, pick_devices, queue_on};
use crate::error::{usage, CliResult};
use crate::vars::{parse_op_list, VarOp};
use clreduce::check::reference::{
    check, random_initial, random_input, reference, reference_arg, HostVec,
};
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Axis, DynBuffer, ElemType, Kernel, Op, Queue,
    Range, Reduction, Segments, Value,
};

/// Whether the command line asks for a segmented reduction.
pub fn wanted(a: &ReduceArgs) -> bool {
    a.rows.is_some() || a.cols.is_some() || a.axis.is_some() || a.ragged.is_some()
}

/// The segments: `Rows`/`Cols` of an R x C array, or CSR offsets.
enum Layout {
    Rows(u64, u64),
    Cols(u64, u64),
    Ragged(Vec<u64>),
}

impl Layout {
    fn n(&self) -> u64 {
        match self {
            Layout::Rows(r, c) | Layout::Cols(r, c) => r * c,
            Layout::Ragged(off) => *off.last().expect("offsets"),
        }
    }
    fn results(&self) -> usize {
        match self {
            Layout::Rows(r, _) => *r as usize,
            Layout::Cols(_, c) => *c as usize,
            Layout::Ragged(off) => off.len() - 1,
        }
    }
    /// The indices of result `k`.
    fn members(&self, k: usize) -> Vec<usize> {
        match self {
            Layout::Rows(_, c) => (k * *c as usize..(k + 1) * *c as usize).collect(),
            Layout::Cols(r, c) => (0..*r as usize).map(|row| row * *c as usize + k).collect(),
            Layout::Ragged(off) => (off[k] as usize..off[k + 1] as usize).collect(),
        }
    }
}

fn layout(a: &ReduceArgs) -> CliResult<Layout> {
    for (flag, given) in [
        ("--input", a.input.is_some()),
        ("--split", a.split),
        ("--mpi", a.mpi),
        ("--span", a.span.is_some()),
        ("--custom", a.custom.is_some()),
    ] {
        if given {
            return usage(format!(
                "{flag} does not combine with --rows/--cols/--axis/--ragged (yet)"
            ));
        }
    }
    if a.form != "range" {
        return usage("segmented reductions take --form range");
    }
    if let Some(mean) = a.ragged {
        if a.rows.is_some() || a.cols.is_some() || a.axis.is_some() {
            return usage("--ragged MEAN takes --n, not --rows/--cols/--axis");
        }
        if mean == 0 {
            return usage("--ragged 0: the mean segment length must be at least 1");
        }
        return Ok(Layout::Ragged(clreduce::check::ragged::ragged_offsets(
            a.n.unwrap_or(1_000_003),
            mean,
            a.seed ^ 0x5E6,
        )));
    }
    let (Some(r), Some(c)) = (a.rows, a.cols) else {
        return usage("--rows R and --cols C go together (an R x C row-major array)");
    };
    if r == 0 || c == 0 {
        return usage(format!("--rows {r} --cols {c}: both must be at least 1"));
    }
    if r.checked_mul(c).is_none() {
        return usage(format!("--rows {r} x --cols {c} overflows 64 bits"));
    }
    if a.n.is_some_and(|n| n != r * c) {
        return usage(format!("--n must be R x C = {} or left out", r * c));
    }
    match a.axis.unwrap_or(1) {
        1 => Ok(Layout::Rows(r, c)),
        0 => Ok(Layout::Cols(r, c)),
        x => usage(format!(
            "--axis {x}: 1 (one result per row) or 0 (per column)"
        )),
    }
}

/// `clreduce reduce` for a segmented layout: Ok(false) when a result did not match.
pub fn run(a: &ReduceArgs) -> CliResult<bool> {
    let l = layout(a)?;
    let ty =
        a.ty.as_deref()
            .map(ElemType::parse)
            .transpose()?
            .unwrap_or(ElemType::F32);
    let vars = parse_op_list(a.op.as_deref().unwrap_or("sum"))?;
    let data_op = vars
        .iter()
        .find_map(|v| match v {
            VarOp::Builtin(op) => Some(*op),
            _ => None,
        })
        .unwrap_or(Op::Minimum);
    let n = l.n();
    let data = random_input(data_op, ty, n as usize, a.seed);
    let opts = options(&a.common)?;
    let mut all_ok = true;
    let mut js = Vec::new();
    for d in pick_devices(a.common.device.as_deref())? {
        let q = queue_on(&d, &a.common)?;
        let (plan, lines, ok) = run_on(&q, a, &l, &vars, ty, &data, opts)?;
        all_ok &= ok;
        if a.json {
            js.push(serde_json::json!({
                "device": d.label(),
                "type": ty.to_string(),
                "n": n,
                "results": l.results(),
                "plan": plan,
                "vars": lines.iter().map(|(op, count, sum, check)| serde_json::json!({
                    "op": op, "results": count, "checksum": sum, "check": check,
                })).collect::<Vec<_>>(),
            }));
        } else {
            println!(
                "{}: n {n} {ty}, {} results per variable, plan {plan}",
                d.label(),
                l.results()
            );
            for (op, _, sum, check) in &lines {
                println!("  {op}: checksum {sum}, {check}");
            }
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&js).expect("JSON"));
    }
    Ok(all_ok)
}

type Lines = Vec<(String, usize, String, String)>;

/// One launch on one queue and its check: (plan, per variable (op, results, checksum,
/// verdict), all correct).
fn run_on(
    q: &Queue,
    a: &ReduceArgs,
    l: &Layout,
    vars: &[VarOp],
    ty: ElemType,
    data: &HostVec,
    opts: clreduce::Options,
) -> CliResult<(String, Lines, bool)> {
    let results = l.results();
    let x = DynBuffer::upload(q, data)?;
    let offsets = match l {
        Layout::Ragged(off) => Some(q.buffer_from(off)?),
        _ => None,
    };
    let mut outs = Vec::new();
    let mut reds: Vec<Reduction> = Vec::new();
    let mut body = String::new();
    for (k, v) in vars.iter().enumerate() {
        let op = match v {
            VarOp::Builtin(op) => *op,
            VarOp::Arg { max } => {
                if *max {
                    Op::Maximum
                } else {
                    Op::Minimum
                }
            }
            VarOp::Custom { .. } => return usage("--custom does not combine with segments (yet)"),
        };
        let inits: Vec<Value> = (0..results)
            .map(|j| random_initial(op, ty, a.seed + (k * results + j) as u64))
            .collect();
        let b = DynBuffer::upload(q, &HostVec::from_values(ty, &inits).expect("values of ty"))?;
        let ix = q.buffer_from(&vec![0u64; results])?;
        let name = format!("v{k}");
        let mut r = match v {
            VarOp::Arg { max: false } => reduction_argmin(&b, &ix),
            VarOp::Arg { max: true } => reduction_argmax(&b, &ix),
            _ => reduction(&b, op),
        }
        .name(&name);
        body.push_str(&match v {
            VarOp::Arg { .. } => format!("combine({name}, x[i], i); "),
            _ => format!("combine({name}, x[i]); "),
        });
        if a.init_identity || matches!(v, VarOp::Arg { .. }) {
            r = r.initialize_to_identity();
        }
        r = match (l, &offsets) {
            (Layout::Rows(..), _) => r.axis(Axis::Last),
            (Layout::Cols(..), _) => r.axis(Axis::First),
            (Layout::Ragged(_), Some(o)) => r.segments(Segments::offsets(o)),
            _ => unreachable!("offsets made for ragged"),
        };
        reds.push(r);
        outs.push((v, op, b, ix, inits));
    }
    let range = match l {
        Layout::Rows(r, c) | Layout::Cols(r, c) => Range::new_2d(*r, *c),
        Layout::Ragged(off) => Range::new(*off.last().expect("offsets")),
    };
    let ev = q.parallel_for_reduce_with(range, reds, Kernel::new(&body).arg("x", &x), opts)?;
    ev.wait()?;
    let plan = ev
        .plan()
        .and_then(|p| p.segment.as_ref().map(|s| s.algo.to_string()))
        .unwrap_or_default();
    let mut lines = Vec::new();
    let mut all_ok = true;
    for (v, op, b, ix, inits) in outs {
        let got = b.to_values()?;
        let got_ix = ix.to_vec()?;
        let mut bad = Vec::new();
        for k in 0..results {
            let idx = l.members(k);
            let seg =
                HostVec::from_values(ty, &idx.iter().map(|&i| data.value(i)).collect::<Vec<_>>())
                    .expect("values of ty");
            let verdict = match v {
                VarOp::Arg { max } => {
                    if idx.is_empty() {
                        (got_ix[k] == u64::MAX)
                            .then_some(())
                            .ok_or("an empty segment's index is not u64::MAX".to_string())
                    } else {
                        let w = reference_arg(*max, &seg, None);
                        let want_ix = idx[w.index as usize] as u64;
                        (got[k].to_f64() == w.value.to_f64() && got_ix[k] == want_ix)
                            .then_some(())
                            .ok_or(format!(
                                "({:?}, {}) want ({:?}, {want_ix})",
                                got[k], got_ix[k], w.value
                            ))
                    }
                }
                _ => {
                    let init = (!a.init_identity).then_some(inits[k]);
                    let rf = reference(op, &seg, init);
                    check(
                        op,
                        ty,
                        got[k].to_f64(),
                        got[k].as_int(),
                        &rf,
                        idx.len() as f64 + 40.0,
                    )
                }
            };
            if let Err(m) = verdict {
                bad.push(format!("result {k}: {m}"));
            }
        }
        let sum: f64 = got
            .iter()
            .map(|g| g.to_f64())
            .filter(|g| g.is_finite())
            .sum();
        let check = if bad.is_empty() {
            format!("ok ({results} results checked)")
        } else {
            all_ok = false;
            format!("FAILED: {} of {results} wrong, first {}", bad.len(), bad[0])
        };
        let name = match v {
            VarOp::Arg { max: true } => "argmax".to_string(),
            VarOp::Arg { max: false } => "argmin".to_string(),
            _ => op.to_string(),
        };
        lines.push((name, results, format!("{sum:e}"), check));
    }
    Ok((plan, lines, all_ok))
}
