//! `clreduce reduce --rows R --cols C [--axis 1|0]`, `--ragged MEAN` and `--input FILE.npy
//! --axis 1|0` (a 2-D array, its shape from the file): segmented and axis reductions (issue
//! 26) of seeded random data or the file's, every result checked on the host (integers
//! exactly, floats within (len + combinations + 40)·u·Σ|x| of a float64 reference), with
//! `--json` one entry per variable (the count of results, a checksum, the check). With
//! `--split` or `--mpi` the same launch runs across devices or ranks (seg_scale.rs).

use super::args::ReduceArgs;
use super::{data, input};
use crate::args::{options, pick_devices, queue_on};
use crate::error::{usage, CliResult};
use crate::vars::{parse_op_list, VarOp};
use clreduce::check::reference::{
    check, random_initial, random_input, reference, reference_arg, HostVec,
};
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Axis, Buffer, DynBuffer, ElemType, Kernel, Op,
    Queue, Range, Reduction, Segments, Value,
};

/// Whether the command line asks for a segmented reduction.
pub fn wanted(a: &ReduceArgs) -> bool {
    a.rows.is_some() || a.cols.is_some() || a.axis.is_some() || a.ragged.is_some()
}

/// The segments: `Rows`/`Cols` of an R x C array, or CSR offsets.
pub(super) enum Layout {
    Rows(u64, u64),
    Cols(u64, u64),
    Ragged(Vec<u64>),
}

impl Layout {
    pub(super) fn n(&self) -> u64 {
        match self {
            Layout::Rows(r, c) | Layout::Cols(r, c) => r * c,
            Layout::Ragged(off) => *off.last().expect("offsets"),
        }
    }
    pub(super) fn results(&self) -> usize {
        match self {
            Layout::Rows(r, _) => *r as usize,
            Layout::Cols(_, c) => *c as usize,
            Layout::Ragged(off) => off.len() - 1,
        }
    }
    /// The units a split or MPI cuts (rows, or elements) and the elements per unit.
    pub(super) fn units(&self) -> (u64, u64) {
        match self {
            Layout::Rows(r, c) | Layout::Cols(r, c) => (*r, *c),
            Layout::Ragged(_) => (self.n(), 1),
        }
    }
    /// The range of `units` units (a block of rows, or of elements).
    pub(super) fn range(&self, units: u64) -> Range {
        match self {
            Layout::Rows(_, c) | Layout::Cols(_, c) => Range::new_2d(units, *c),
            Layout::Ragged(_) => Range::new(units),
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

/// A segmented run, prepared once for every device (or the split, or the ranks).
pub(super) struct SegRun {
    pub(super) l: Layout,
    /// The type the variables reduce in (f32 for f16 and bf16 data).
    pub(super) ty: ElemType,
    /// The data's type on the device.
    pub(super) stored: ElemType,
    pub(super) vars: Vec<VarOp>,
    /// The values (f16 and bf16 widened exactly to f32).
    pub(super) data: HostVec,
    /// initialize_to_identity: `--init-identity`, or always with `--input`.
    pub(super) init_identity: bool,
    /// `--determinism exact`: float sums are checked bit for bit against the host's exact sum.
    pub(super) exact: bool,
    pub(super) note: String,
}

/// The shape of `--rows`/`--cols`/`--axis` given a file's shape `(r, c)`: flags that
/// contradict the file are errors.
fn file_shape(a: &ReduceArgs, f: &input::FileInput) -> CliResult<(u64, u64)> {
    let (r, c) = match f.shape[..] {
        [r, c] => (r, c),
        [n] => match (a.rows, a.cols) {
            (Some(r), Some(c)) if r.checked_mul(c) == Some(n) => (r, c),
            _ => {
                return usage(format!(
                    "{}: a 1-D file has no rows or columns; give --rows R --cols C with R x C = {n}, or save it as a 2-D array",
                    f.path_display()
                ))
            }
        },
        _ => unreachable!("input::open allows 1-D and 2-D files here"),
    };
    for (flag, given, have) in [("--rows", a.rows, r), ("--cols", a.cols, c)] {
        if let Some(g) = given.filter(|&g| g != have) {
            return usage(format!(
                "{flag} {g} conflicts with the file's {r} x {c} array; leave {flag} out"
            ));
        }
    }
    Ok((r, c))
}

fn layout(a: &ReduceArgs, file: Option<&input::FileInput>) -> CliResult<Layout> {
    for (flag, given) in [
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
        if a.n == Some(0) {
            return usage(format!(
                "--ragged {mean} --n 0: no elements to cut into segments (--n must be at least 1)"
            ));
        }
        return Ok(Layout::Ragged(clreduce::check::ragged::ragged_offsets(
            a.n.unwrap_or(1_000_003),
            mean,
            a.seed ^ 0x5E6,
        )));
    }
    let (r, c) = match file {
        Some(f) => file_shape(a, f)?,
        None => {
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
            (r, c)
        }
    };
    match a.axis.unwrap_or(1) {
        1 => Ok(Layout::Rows(r, c)),
        0 => Ok(Layout::Cols(r, c)),
        x => usage(format!(
            "--axis {x}: 1 (one result per row) or 0 (per column)"
        )),
    }
}

/// The layout, variables and data of a segmented run.
pub(super) fn setup(a: &ReduceArgs) -> CliResult<SegRun> {
    let given = a.ty.as_deref().map(ElemType::parse).transpose()?;
    if let Some(mean) = a.ragged.filter(|_| a.input.is_some()) {
        return usage(format!("--ragged {mean} makes its own segments over seeded data: leave --input out, or give a 2-D file with --axis"));
    }
    let file = match &a.input {
        Some(p) => Some(input::open(p, given, a.n, true)?),
        None => None,
    };
    let l = layout(a, file.as_ref())?;
    let vars = parse_op_list(a.op.as_deref().unwrap_or("sum"))?;
    let exact = options(&a.common)?.determinism == clreduce::Determinism::Exact;
    if let Some(f) = file {
        let (values, _) = f.read()?;
        let stored = f.stored;
        return Ok(SegRun {
            l,
            ty: if stored.is_storage() {
                ElemType::F32
            } else {
                stored
            },
            stored,
            vars,
            data: values,
            init_identity: true,
            exact,
            note: f.note.clone(),
        });
    }
    let stored = given.unwrap_or(ElemType::F32);
    let ty = if stored.is_storage() {
        ElemType::F32
    } else {
        stored
    };
    let data_op = vars
        .iter()
        .find_map(|v| match v {
            VarOp::Builtin(op) => Some(*op),
            _ => None,
        })
        .unwrap_or(Op::Minimum);
    let d = random_input(data_op, ty, l.n() as usize, a.seed);
    let data = match data::round_to(stored, &d) {
        Some(bits) => input::widen(stored, &bits),
        None => d,
    };
    Ok(SegRun {
        l,
        ty,
        stored,
        vars,
        data,
        init_identity: a.init_identity,
        exact,
        note: format!("seed {}", a.seed),
    })
}

/// `clreduce reduce` for a segmented layout: Ok(false) when a result did not match.
pub fn run(a: &ReduceArgs) -> CliResult<bool> {
    let s = setup(a)?;
    if (a.split || a.mpi) && s.stored.is_storage() {
        return usage(format!(
            "--type {} with --split or --mpi: 16-bit input runs on one device at a time here; leave --split/--mpi out",
            s.stored
        ));
    }
    if a.mpi {
        return super::seg_scale::run_mpi(a, &s);
    }
    if a.split {
        return super::seg_scale::run_split(a, &s);
    }
    let opts = options(&a.common)?;
    let mut all_ok = true;
    let mut js = Vec::new();
    for d in pick_devices(a.common.device.as_deref())? {
        let q = queue_on(&d, &a.common)?;
        let (plan, lines, ok) = run_on(&q, a, &s, opts)?;
        all_ok &= ok;
        report(a, &s, &d.label(), &plan, &lines, &mut js);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&js).expect("JSON"));
    }
    Ok(all_ok)
}

/// Per variable: (op, results, checksum, verdict).
pub(super) type Lines = Vec<(String, usize, String, String)>;

/// One run's report: a line per variable, or (`--json`) an entry added to `js`.
pub(super) fn report(
    a: &ReduceArgs,
    s: &SegRun,
    label: &str,
    plan: &str,
    lines: &Lines,
    js: &mut Vec<serde_json::Value>,
) {
    let n = s.l.n();
    if a.json {
        js.push(serde_json::json!({
            "device": label,
            "type": s.ty.to_string(),
            "n": n,
            "results": s.l.results(),
            "plan": plan,
            "pass": lines.iter().all(|(_, _, _, c)| c.starts_with("ok")),
            "vars": lines.iter().map(|(op, count, sum, check)| serde_json::json!({
                "op": op, "results": count, "checksum": sum, "check": check,
            })).collect::<Vec<_>>(),
        }));
        return;
    }
    println!(
        "{label}: n {n} {}{}, {} results per variable, input {}, plan {plan}",
        s.ty,
        if s.stored == s.ty {
            String::new()
        } else {
            format!(" (stored {})", s.stored)
        },
        s.l.results(),
        s.note
    );
    for (op, _, sum, check) in lines {
        println!("  {op}: checksum {sum}, {check}");
    }
}

/// A variable's result buffers and initial values.
pub(super) struct Out {
    var: usize,
    op: Op,
    b: DynBuffer,
    ix: Buffer<u64>,
    inits: Vec<Value>,
}

/// The variables of a run, on `q` (the offsets, for ragged segments, on `q` too).
pub(super) struct Made {
    pub(super) reds: Vec<Reduction>,
    pub(super) outs: Vec<Out>,
    pub(super) body: String,
}

/// The variables of `s` with their result buffers on `q`, initial values and the body.
pub(super) fn make_vars(
    q: &Queue,
    a: &ReduceArgs,
    s: &SegRun,
    offsets: Option<&Buffer<u64>>,
) -> CliResult<Made> {
    let results = s.l.results();
    let mut m = Made {
        reds: Vec::new(),
        outs: Vec::new(),
        body: String::new(),
    };
    for (k, v) in s.vars.iter().enumerate() {
        let op = match v {
            VarOp::Builtin(op) => *op,
            VarOp::Arg { max: true } => Op::Maximum,
            VarOp::Arg { max: false } => Op::Minimum,
            VarOp::Custom { .. } => return usage("--custom does not combine with segments (yet)"),
        };
        let inits: Vec<Value> = (0..results)
            .map(|j| random_initial(op, s.ty, a.seed + (k * results + j) as u64))
            .collect();
        let b = DynBuffer::upload(
            q,
            &HostVec::from_values(s.ty, &inits).expect("values of ty"),
        )?;
        let ix = q.buffer_from(&vec![0u64; results])?;
        let name = format!("v{k}");
        let mut r = match v {
            VarOp::Arg { max: false } => reduction_argmin(&b, &ix),
            VarOp::Arg { max: true } => reduction_argmax(&b, &ix),
            _ => reduction(&b, op),
        }
        .name(&name);
        m.body.push_str(&var_body(k, v));
        if s.init_identity || matches!(v, VarOp::Arg { .. }) {
            r = r.initialize_to_identity();
        }
        r = match (&s.l, offsets) {
            (Layout::Rows(..), _) => r.axis(Axis::Last),
            (Layout::Cols(..), _) => r.axis(Axis::First),
            (Layout::Ragged(_), Some(o)) => r.segments(Segments::offsets(o)),
            _ => unreachable!("offsets made for ragged"),
        };
        m.reds.push(r);
        m.outs.push(Out {
            var: k,
            op,
            b,
            ix,
            inits,
        });
    }
    Ok(m)
}

/// Variable `k`'s part of the body `reduce` runs over segments (`explain` plans the same).
pub fn var_body(k: usize, v: &VarOp) -> String {
    match v {
        VarOp::Arg { .. } => format!("combine(v{k}, x[i], i); "),
        _ => format!("combine(v{k}, x[i]); "),
    }
}

/// One launch on one queue and its check: (plan, lines, all correct).
fn run_on(
    q: &Queue,
    a: &ReduceArgs,
    s: &SegRun,
    opts: clreduce::Options,
) -> CliResult<(String, Lines, bool)> {
    let x = DynBuffer::upload_as(q, &s.data, s.stored)?;
    let offsets = match &s.l {
        Layout::Ragged(off) => Some(q.buffer_from(off)?),
        _ => None,
    };
    let m = make_vars(q, a, s, offsets.as_ref())?;
    let (units, _) = s.l.units();
    let ev = q.parallel_for_reduce_with(
        s.l.range(units),
        m.reds,
        Kernel::new(&m.body).arg("x", &x),
        opts,
    )?;
    ev.wait()?;
    let plan = ev
        .plan()
        .and_then(|p| p.segment.as_ref().map(|s| s.algo.to_string()))
        .unwrap_or_default();
    let (lines, ok) = check_vars(s, &m.outs, 0.0)?;
    Ok((plan, lines, ok))
}

/// Every result of every variable against the host: `extra` host combinations (shares,
/// ranks) added to the float bound's depth.
pub(super) fn check_vars(s: &SegRun, outs: &[Out], extra: f64) -> CliResult<(Lines, bool)> {
    let results = s.l.results();
    let (l, data, ty) = (&s.l, &s.data, s.ty);
    let mut lines = Vec::new();
    let mut all_ok = true;
    for o in outs {
        let v = &s.vars[o.var];
        let got = o.b.to_values()?;
        let got_ix = o.ix.to_vec()?;
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
                _ if s.exact && o.op == Op::Plus && ty.is_float() => {
                    let init = (!s.init_identity).then_some(o.inits[k]);
                    check_exact(got[k], &seg, init, idx.is_empty())
                }
                _ => {
                    let init = (!s.init_identity).then_some(o.inits[k]);
                    let rf = reference(o.op, &seg, init);
                    check(
                        o.op,
                        ty,
                        got[k].to_f64(),
                        got[k].as_int(),
                        &rf,
                        idx.len() as f64 + 40.0 + extra,
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
            _ => o.op.to_string(),
        };
        lines.push((name, results, format!("{sum:e}"), check));
    }
    Ok((lines, all_ok))
}

/// An exact sum per segment, bit for bit: the host's correctly rounded sum of the segment and
/// its initial value; an empty segment is left as it was (its initial value) or, under
/// initialize_to_identity, +0.0.
fn check_exact(got: Value, seg: &HostVec, init: Option<Value>, empty: bool) -> Result<(), String> {
    let want = match init {
        Some(v) if empty => v,
        _ => clreduce::check::reference::reference_exact(seg, init)
            .ok_or("an exact sum of integer data".to_string())?,
    };
    (got.to_bytes() == want.to_bytes())
        .then_some(())
        .ok_or(format!(
            "{got:?} want {want:?} (the correctly rounded sum, bit for bit)"
        ))
}
