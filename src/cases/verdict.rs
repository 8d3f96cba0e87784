//! Per variable: what the host expects (`Expected`), what the device gave (`Got`) and the
//! verdict (`Verdict`, `check_var`): integers, argmin/argmax and min/max exactly, float sums and
//! products within a stated bound, per bin for spans, bit for bit for exact sums, per segment
//! for segmented reductions. `clreduce reduce`, `clreduce bench` and `clreduce tune` check
//! every result through these.

use crate::check::reference::{self, combination_depth, Reference};
use crate::plan::{CrossAlgo, Plan, SpanStore};
use crate::types::HostVec;
use crate::{ElemType, Op, Value};

/// The host's answer for one variable.
#[derive(Debug, Clone)]
pub enum Expected {
    /// A scalar's reference.
    Scalar(Reference),
    /// argmin/argmax: the value and the lowest index holding it.
    Arg(reference::ArgReference),
    /// A span: each bin's reference.
    Span(Vec<Reference>),
    /// An exact sum (`--determinism exact`): the correctly rounded value, bit for bit.
    Exact(Value),
    /// An exact span: each bin's correctly rounded value.
    ExactSpan(Vec<Value>),
    /// A segmented reduction: each segment's reference (bound: the segment's length + 40).
    Segments(Vec<Reference>),
    /// A segmented argmin/argmax: each segment's value and global index (`u64::MAX` and the
    /// identity for an empty segment).
    ArgSegments(Vec<reference::ArgReference>),
}

/// A variable's result as read back.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// A scalar.
    Scalar(Value),
    /// argmin/argmax: value and index.
    Arg(Value, u64),
    /// A span's bins.
    Span(Vec<Value>),
    /// A segmented variable's results, as read (one per segment).
    Segments(HostVec),
    /// A segmented argmin/argmax: the values and the indices.
    ArgSegments(HostVec, Vec<u64>),
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

/// One variable's verdict: whether it passed, and what the `result:`, `reference:` and
/// `check:` lines after its header say.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Whether the result passed.
    pub ok: bool,
    /// The result as read.
    pub result: String,
    /// The host's reference.
    pub reference: String,
    /// "OK (...)" or "MISMATCH: ...".
    pub check: String,
}

impl Verdict {
    /// The lines printed after the variable's header.
    pub fn lines(&self) -> [String; 3] {
        [
            format!("result:    {}", self.result),
            format!("reference: {}", self.reference),
            format!("check:     {}", self.check),
        ]
    }
}

/// Checks variable `k`; `class` is the op the float bound follows (`None`: a custom combiner
/// that matches no built-in op; argmin/argmax pass `Some(Op::Minimum)`).
pub fn check_var(
    class: Option<Op>,
    k: usize,
    plan: &Plan,
    want: &Expected,
    got: &Got,
    ty: ElemType,
) -> Verdict {
    match (want, got) {
        (Expected::Arg(w), Got::Arg(val, idx)) => check_arg(w, *val, *idx),
        (Expected::Scalar(r), Got::Scalar(g)) => check_scalar(class, k, plan, r, *g, ty),
        (Expected::Span(rs), Got::Span(gs)) => check_span(class, k, plan, rs, gs, ty),
        (Expected::Segments(rs), Got::Segments(gs)) => check_segments(class, rs, gs, ty),
        (Expected::ArgSegments(ws), Got::ArgSegments(vs, ix)) => check_arg_segments(ws, vs, ix),
        (Expected::Exact(w), Got::Scalar(g)) => {
            check_exact(std::slice::from_ref(w), std::slice::from_ref(g))
        }
        (Expected::ExactSpan(ws), Got::Span(gs)) => check_exact(ws, gs),
        _ => Verdict {
            ok: false,
            result: format!("{got:?}"),
            reference: String::new(),
            check: "MISMATCH: a result of the wrong shape".into(),
        },
    }
}

/// An exact sum (every bin of an exact span): the same bits as the host's correctly rounded
/// sum.
fn check_exact(want: &[Value], got: &[Value]) -> Verdict {
    let bits = |v: &Value| match v {
        Value::F32(x) => format!("{:08x}", x.to_bits()),
        Value::F64(x) => format!("{:016x}", x.to_bits()),
        other => other.to_string(),
    };
    let bad: Vec<String> = want
        .iter()
        .zip(got)
        .enumerate()
        .filter(|(_, (w, g))| bits(w) != bits(g))
        .map(|(b, (w, g))| format!("bin {b}: bits {} vs {} ({g} vs {w})", bits(g), bits(w)))
        .collect();
    let show = |vs: &[Value]| {
        if vs.len() == 1 {
            vs[0].to_string()
        } else {
            preview(vs.iter().map(|v| v.to_string()).collect())
        }
    };
    let check = if bad.is_empty() {
        "OK (exact: the correctly rounded sum, bit for bit)".to_string()
    } else if want.len() == 1 {
        format!(
            "MISMATCH: bits {} vs {} of the correctly rounded sum",
            bits(&got[0]),
            bits(&want[0])
        )
    } else {
        format!("MISMATCH: {}", preview(bad))
    };
    Verdict {
        ok: check.starts_with("OK"),
        result: show(got),
        reference: format!("{} (correctly rounded)", show(want)),
        check,
    }
}

/// argmin/argmax: value and index exact.
fn check_arg(w: &reference::ArgReference, val: Value, idx: u64) -> Verdict {
    let ok = val == w.value && idx == w.index;
    let why = match w.ties {
        _ if w.index == u64::MAX => "the identity pair: nothing to combine".to_string(),
        0 => "the initial pair: no element beats it".to_string(),
        1 => "one element holds this value".to_string(),
        t => format!("{t} elements hold this value; ties go to the lowest index"),
    };
    Verdict {
        ok,
        result: format!("{val} at index {idx}"),
        reference: format!("{} at index {} ({why})", w.value, w.index),
        check: if ok {
            "OK (value and index exact)".into()
        } else {
            format!(
                "MISMATCH: got {val} at index {idx}, expected {} at index {}",
                w.value, w.index
            )
        },
    }
}

/// A scalar: exact where the reference is, else within the plan's combination-depth bound.
fn check_scalar(
    class: Option<Op>,
    k: usize,
    plan: &Plan,
    r: &Reference,
    g: Value,
    ty: ElemType,
) -> Verdict {
    let show = match r.exact {
        Some(e) => format!("{e} (exact)"),
        None => format!("{:e} (float64)", r.value),
    };
    let depth = combination_depth(plan, k);
    let bound = reference::float_bound(class, ty, r, depth);
    let verdict = reference::check_within(g, r, bound);
    let overflow = crate::check::overflow::sum_overflow(class, ty, g.to_f64(), r.sum_abs, bound);
    let exact = r.exact.is_some() || bound == 0.0;
    let note = bound_note(class, &depth.to_string());
    let check = match (verdict, overflow) {
        (Ok(()), _) if exact => "OK (exact)".to_string(),
        (Ok(()), _) if !g.to_f64().is_finite() => {
            "OK (the reference's own non-finite value: the input holds NaN or an infinity)"
                .to_string()
        }
        (Ok(()), _) => format!(
            "OK (|error| {:.2e} <= {bound:.2e}: {note})",
            (g.to_f64() - r.value).abs()
        ),
        (Err(_), Some(why)) => format!("OK ({why})"),
        (Err(m), None) if exact => format!("MISMATCH: {m}"),
        (Err(m), None) => format!("MISMATCH: {m} ({note})"),
    };
    Verdict {
        ok: check.starts_with("OK"),
        result: g.to_string(),
        reference: show,
        check,
    }
}

/// The first six entries of a list, and "..." when there are more.
fn preview(xs: Vec<String>) -> String {
    let more = if xs.len() > 6 { ", ..." } else { "" };
    format!("[{}{more}]", xs[..xs.len().min(6)].join(", "))
}

/// A span: every bin, each within its own bound (exact for integers and min/max).
fn check_span(
    class: Option<Op>,
    k: usize,
    plan: &Plan,
    rs: &[Reference],
    gs: &[Value],
    ty: ElemType,
) -> Verdict {
    let vp = &plan.vars[k];
    let tree = combination_depth(plan, k) + plan.local as f64;
    let atomic_store = matches!(
        vp.span.map(|s| s.store),
        Some(SpanStore::GlobalAtomic | SpanStore::LocalShared)
    ) || vp.cross == CrossAlgo::Atomic;
    let mut bad = Vec::new();
    let mut worst = 0.0f64;
    for (b, (r, g)) in rs.iter().zip(gs).enumerate() {
        // Any order of m + 1 terms is within m*u*sum|x|; the tree steps bound it tighter
        // where no atomic reorders the bin's updates.
        let m = r.n as f64 + 1.0;
        let depth = if atomic_store { m } else { m.min(tree) };
        let bound = reference::float_bound(class, ty, r, depth);
        let overflow =
            crate::check::overflow::sum_overflow(class, ty, g.to_f64(), r.sum_abs, bound);
        match reference::check_within(*g, r, bound) {
            Ok(()) if bound > 0.0 => worst = worst.max((g.to_f64() - r.value).abs() / bound),
            Ok(()) => {}
            // A bin whose partial sums can overflow: ±inf or NaN accepted (the overflow rule).
            Err(_) if overflow.is_some() => {}
            Err(m) => bad.push(format!("bin {b}: {m}")),
        }
    }
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
    let refs = rs
        .iter()
        .map(|r| match r.exact {
            Some(e) => e.to_string(),
            None => format!("{:e}", r.value),
        })
        .collect();
    Verdict {
        ok,
        result: format!(
            "{} bins {}",
            gs.len(),
            preview(gs.iter().map(|g| g.to_string()).collect())
        ),
        reference: format!("{} bins of {lo}..{hi} elements {}", rs.len(), preview(refs)),
        check: if ok {
            format!("OK ({} of {} bins; {how})", rs.len(), rs.len())
        } else {
            format!(
                "MISMATCH: {} of {} bins differ; {}{}",
                bad.len(),
                rs.len(),
                bad[..bad.len().min(4)].join("; "),
                if bad.len() > 4 { "; ..." } else { "" }
            )
        },
    }
}

/// A segmented variable: each segment within (its length + 40)·u·Σ|x| of its float64
/// reference (exactly for integers and min/max; the bound of `clreduce reduce --rows`).
fn check_segments(class: Option<Op>, rs: &[Reference], gs: &HostVec, ty: ElemType) -> Verdict {
    let mut bad = Vec::new();
    if rs.len() != gs.len() {
        bad.push(format!("{} results for {} segments", gs.len(), rs.len()));
    }
    for (k, r) in rs.iter().enumerate().take(gs.len()) {
        let g = &gs.value(k);
        let depth = r.n as f64 + 40.0;
        let bound = reference::float_bound(class, ty, r, depth);
        let overflow = crate::check::overflow::sum_overflow(class, ty, g.to_f64(), r.sum_abs, bound);
        if let (Err(m), None) = (reference::check_within(*g, r, bound), overflow) {
            bad.push(format!("segment {k}: {m}"));
        }
    }
    let shown = (0..gs.len().min(7)).map(|k| gs.value(k).to_string()).collect();
    segments_verdict(rs.len(), gs.len(), bad, shown)
}

/// A segmented argmin/argmax: every segment's value and global index exact.
fn check_arg_segments(ws: &[reference::ArgReference], vs: &HostVec, ix: &[u64]) -> Verdict {
    let mut bad = Vec::new();
    if ws.len() != vs.len() || ws.len() != ix.len() {
        bad.push(format!("{} values and {} indices for {} segments", vs.len(), ix.len(), ws.len()));
    }
    for (k, (w, i)) in ws.iter().zip(ix).enumerate().take(vs.len()) {
        let v = vs.value(k);
        let value_ok = w.index == u64::MAX || v == w.value;
        if !value_ok || *i != w.index {
            bad.push(format!(
                "segment {k}: got {v} at {i}, expected {} at {}",
                w.value, w.index
            ));
        }
    }
    let shown = (0..vs.len().min(ix.len()).min(7))
        .map(|k| format!("{}@{}", vs.value(k), ix[k]))
        .collect();
    segments_verdict(ws.len(), vs.len(), bad, shown)
}

/// The verdict of `segments` checked results (`shown`: the first few as text).
fn segments_verdict(segments: usize, results: usize, bad: Vec<String>, shown: Vec<String>) -> Verdict {
    let ok = bad.is_empty();
    Verdict {
        ok,
        result: format!("{results} results {}", preview(shown)),
        reference: format!("{segments} segments"),
        check: if ok {
            format!("OK ({segments} of {segments} segments)")
        } else {
            format!(
                "MISMATCH: {} of {segments} segments differ; {}{}",
                bad.len(),
                bad[..bad.len().min(4)].join("; "),
                if bad.len() > 4 { "; ..." } else { "" }
            )
        },
    }
}
