//! The cases of `clreduce bench`: what each reduces (`Case`: element type, variables, body and
//! result shape, parsed from names such as f32-sum, f32-sum-min-max, u32-hist256, f32-argmin),
//! its result buffers on a queue, and the serial host reference every result is checked
//! against (exactly for integers, histograms and argmin; float sums within the plan's
//! combination-depth bound).

use clreduce::check::reference::{self, combination_depth, HostVec, Reference};
use clreduce::plan::{Determinism, Plan, Strategy};
use clreduce::{
    reduction, reduction_argmin, reduction_span, Buffer, DynBuffer, ElemType, Op, Options, Queue,
    Reduction, Result, Value,
};

/// How a case's result variables are shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One scalar result per entry of `vars`.
    Scalars,
    /// One span variable (`vars[0]`, op plus) of this many u32 counters: a histogram.
    Span(usize),
    /// One argmin variable (`vars[0]`, op minimum): the value in the element type and the
    /// lowest index holding it in a u64 buffer.
    ArgMin,
}

/// One benchmark case: an element type, one or more reduction variables and the body.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    /// The type the variables reduce in (f32 for f16 and bf16 input).
    pub ty: ElemType,
    /// The input's element type: `ty`, or f16 / bf16 (read as f32 in the body; GB/s counts
    /// these 2-byte elements).
    pub stored: ElemType,
    /// The op the input data is generated for (reference::random_input).
    pub data_op: Op,
    pub vars: Vec<(Op, &'static str)>,
    pub shape: Shape,
    pub body: String,
    /// An exact sum (`TYPE-sum-exact`, `f32-sum-min-max-exact`): launched with
    /// `Determinism::Exact`, the sum checked bit for bit against the correctly rounded sum.
    pub exact: bool,
}

impl Case {
    /// The launch options of this case under the bench's determinism and strategy `s`.
    pub fn options(&self, det: Determinism, s: Strategy) -> Options {
        Options {
            strategy: s,
            determinism: if self.exact { Determinism::Exact } else { det },
            ..Options::default()
        }
    }
}

/// The cases run when `--cases` is not given.
pub const DEFAULT_CASES: &str =
    "f32-sum,f64-sum,i32-sum,f32-max,f32-sum-min-max,u32-hist256,f32-argmin";

/// Most bins a `u32-histN` case may have.
const MAX_BINS: usize = 1 << 16;

/// A case by name: TYPE-OP, f32-sum-min-max, u32-histN, TYPE-argmin, TYPE-sum-exact (f32,
/// f64, f16, bf16) or f32-sum-min-max-exact. TYPE may be f16 or bf16 (`f16-sum`, `bf16-max`,
/// `f16-argmin`): the input is stored in 16 bits and reduced in f32.
pub fn parse_case(s: &str) -> std::result::Result<Case, String> {
    let s = s.trim();
    if let Some(plain) = s.strip_suffix("-exact") {
        let mut c = parse_case(plain)?;
        if !(c.vars[0].0 == Op::Plus && c.ty.is_float() && c.shape == Shape::Scalars) {
            return Err(format!(
                "bad case {s:?} (exact cases are f32-sum-exact, f64-sum-exact, f16-sum-exact, bf16-sum-exact and f32-sum-min-max-exact)"
            ));
        }
        c.name = format!("{}-exact", c.name);
        c.exact = true;
        return Ok(c);
    }
    if s == "f32-sum-min-max" {
        return Ok(Case {
            name: s.into(),
            ty: ElemType::F32,
            stored: ElemType::F32,
            data_op: Op::Plus,
            vars: vec![(Op::Plus, "sum"), (Op::Minimum, "lo"), (Op::Maximum, "hi")],
            shape: Shape::Scalars,
            body: "sum += x[i]; combine(lo, x[i]); combine(hi, x[i]);".into(),
            exact: false,
        });
    }
    if let Some(bins) = s.strip_prefix("u32-hist") {
        let bins: usize = bins
            .parse()
            .ok()
            .filter(|b: &usize| b.is_power_of_two() && *b <= MAX_BINS)
            .ok_or_else(|| {
                format!("bad case {s:?} (expected u32-histN, N a power of two up to {MAX_BINS})")
            })?;
        return Ok(Case {
            name: s.into(),
            ty: ElemType::U32,
            stored: ElemType::U32,
            // Full-range random u32: the low bits are uniform over the bins.
            data_op: Op::BitOr,
            vars: vec![(Op::Plus, "hist")],
            shape: Shape::Span(bins),
            body: format!("hist[(uint)x[i] & {}u] += 1u;", bins - 1),
            exact: false,
        });
    }
    if let Some(t) = s.strip_suffix("-argmin") {
        let stored = ElemType::parse(t).map_err(|e| e.to_string())?;
        return Ok(Case {
            name: format!("{stored}-argmin"),
            ty: stored.acc(),
            stored,
            // Values on a grid of 1/64 in [-64, 64): large inputs hold the minimum many times,
            // so the lowest-index rule is exercised.
            data_op: Op::Minimum,
            vars: vec![(Op::Minimum, "best")],
            shape: Shape::ArgMin,
            body: "combine(best, x[i], i);".into(),
            exact: false,
        });
    }
    let (t, o) = s
        .split_once('-')
        .ok_or_else(|| format!("bad case {s:?} (expected TYPE-OP such as f32-sum)"))?;
    let stored = ElemType::parse(t).map_err(|e| e.to_string())?;
    let op = Op::parse(o).map_err(|e| e.to_string())?;
    let body = match op {
        Op::Plus => "sum += x[i];",
        Op::BitOr => "sum |= x[i];",
        _ => "combine(sum, x[i]);",
    };
    Ok(Case {
        name: format!("{stored}-{op}"),
        ty: stored.acc(),
        stored,
        data_op: op,
        vars: vec![(op, "sum")],
        shape: Shape::Scalars,
        body: body.into(),
        exact: false,
    })
}

/// The input of `case` at `n` elements (seeded): generated for the op in the reduction type, and
/// for f16 / bf16 rounded to the storage type (nearest even), so that the host reference is of
/// exactly the values the device reads. Upload it with `DynBuffer::upload_as(q, data, stored)`.
pub fn input(case: &Case, n: usize, seed: u64) -> HostVec {
    let data = reference::random_input(case.data_op, case.ty, n, seed);
    match (data, case.stored) {
        (HostVec::F32(v), ElemType::F16) => HostVec::F32(
            v.into_iter()
                .map(|x| clreduce::Half::from_f32(x).to_f32())
                .collect(),
        ),
        (HostVec::F32(v), ElemType::BF16) => HostVec::F32(
            v.into_iter()
                .map(|x| clreduce::Bf16::from_f32(x).to_f32())
                .collect(),
        ),
        (d, _) => d,
    }
}

/// The op's identity in `ty` (a placeholder 0 where it has none).
pub fn identity(op: Op, ty: ElemType) -> Value {
    op.identity(ty).unwrap_or(Value::I32(0))
}

/// The result buffers of one case on one queue.
pub struct Outs {
    /// One per variable: a scalar, a span of `len` counters, or argmin's value.
    vars: Vec<DynBuffer>,
    /// argmin's index.
    index: Option<Buffer<u64>>,
}

/// The results read back after a launch.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    Scalars(Vec<Value>),
    Span(Vec<u32>),
    ArgMin(Value, u64),
}

impl Case {
    /// Allocates the result buffers, at the identity.
    pub fn outs(&self, q: &Queue) -> Result<Outs> {
        match self.shape {
            Shape::Scalars => Ok(Outs {
                vars: self
                    .vars
                    .iter()
                    .map(|(op, _)| DynBuffer::scalar(q, identity(*op, self.ty)))
                    .collect::<Result<Vec<_>>>()?,
                index: None,
            }),
            Shape::Span(len) => Ok(Outs {
                vars: vec![DynBuffer::U32(q.buffer_from(&vec![0u32; len])?)],
                index: None,
            }),
            Shape::ArgMin => Ok(Outs {
                vars: vec![DynBuffer::scalar(q, identity(Op::Minimum, self.ty))?],
                index: Some(q.buffer_from(&[u64::MAX])?),
            }),
        }
    }

    /// Puts the results back at the identity (a host write, untimed).
    pub fn reset(&self, o: &Outs) -> Result<()> {
        match (self.shape, &o.vars[..]) {
            (Shape::Span(len), [DynBuffer::U32(b)]) => b.write(0, &vec![0u32; len]),
            _ => {
                for (r, (op, _)) in o.vars.iter().zip(&self.vars) {
                    r.set(0, identity(*op, self.ty))?;
                }
                if let Some(ix) = &o.index {
                    ix.write(0, &[u64::MAX])?;
                }
                Ok(())
            }
        }
    }

    /// The reductions of one launch over `o`.
    pub fn reductions(&self, o: &Outs) -> Vec<Reduction> {
        match (self.shape, &o.index) {
            (Shape::Span(len), _) => vec![reduction_span(&o.vars[0], len, Op::Plus).name("hist")],
            (Shape::ArgMin, Some(ix)) => {
                vec![reduction_argmin(&o.vars[0], ix).name(self.vars[0].1)]
            }
            _ => o
                .vars
                .iter()
                .zip(&self.vars)
                .map(|(r, (op, name))| reduction(r, *op).name(name))
                .collect(),
        }
    }

    /// Reads the results (blocking).
    pub fn read(&self, o: &Outs) -> Result<Got> {
        match (self.shape, &o.vars[..], &o.index) {
            (Shape::Span(_), [DynBuffer::U32(b)], _) => Ok(Got::Span(b.to_vec()?)),
            (Shape::ArgMin, [v], Some(ix)) => Ok(Got::ArgMin(v.value(0)?, ix.get(0)?)),
            _ => Ok(Got::Scalars(
                o.vars
                    .iter()
                    .map(|r| r.value(0))
                    .collect::<Result<Vec<Value>>>()?,
            )),
        }
    }
}

/// What the host expects of a case over one input.
pub enum Expect {
    /// One reference per variable.
    Scalars(Vec<Reference>),
    /// An exact sum (the first variable): the correctly rounded value, and the other
    /// variables' references.
    Exact(Value, Vec<Reference>),
    /// The histogram.
    Span(Vec<u32>),
    /// The smallest value (None over no input) and the lowest index holding it.
    ArgMin(Option<Value>, u64),
}

/// The host's result for `case` over `data`: serial and in float64 or exact integers,
/// independent of the native peer.
pub fn expect(case: &Case, data: &HostVec) -> Expect {
    if case.exact {
        return Expect::Exact(
            reference::reference_exact(data, None).expect("exact cases are float"),
            case.vars[1..]
                .iter()
                .map(|(op, _)| reference::reference(*op, data, None))
                .collect(),
        );
    }
    match case.shape {
        Shape::Scalars => Expect::Scalars(
            case.vars
                .iter()
                .map(|(op, _)| reference::reference(*op, data, None))
                .collect(),
        ),
        Shape::Span(len) => {
            let mut h = vec![0u32; len];
            if let HostVec::U32(v) = data {
                for &x in v {
                    h[x as usize & (len - 1)] += 1;
                }
            }
            Expect::Span(h)
        }
        Shape::ArgMin => {
            let (v, at) = match data {
                HostVec::I32(v) => first_min(v),
                HostVec::U32(v) => first_min(v),
                HostVec::I64(v) => first_min(v),
                HostVec::U64(v) => first_min(v),
                HostVec::F32(v) => first_min(v),
                HostVec::F64(v) => first_min(v),
            };
            Expect::ArgMin(v, at)
        }
    }
}

/// The smallest value and the lowest index holding it, serially; (the type's identity,
/// u64::MAX) for an empty slice.
pub fn first_min<T: Copy + PartialOrd + Into<Value>>(v: &[T]) -> (Option<Value>, u64) {
    let mut best: Option<(T, usize)> = None;
    for (i, &x) in v.iter().enumerate() {
        if best.is_none_or(|(b, _)| x < b) {
            best = Some((x, i));
        }
    }
    match best {
        Some((x, i)) => (Some(x.into()), i as u64),
        None => (None, u64::MAX),
    }
}

/// "ok", or "MISMATCH" and what differs, for the results `got` of a launch that ran `plan`.
pub fn check_all(case: &Case, got: &Got, plan: &Plan, want: &Expect) -> String {
    let mut problems = Vec::new();
    match (got, want) {
        (Got::Scalars(values), Expect::Scalars(refs)) => {
            for (k, ((op, name), r)) in case.vars.iter().zip(refs).enumerate() {
                let got = values[k];
                if let Err(e) = reference::check(
                    *op,
                    case.ty,
                    got.to_f64(),
                    got.as_int(),
                    r,
                    combination_depth(plan, k),
                ) {
                    problems.push(format!("{name}: {e}"));
                }
            }
        }
        (Got::Scalars(values), Expect::Exact(want, refs)) => {
            for ((k, (op, name)), r) in case.vars.iter().enumerate().skip(1).zip(refs) {
                let got = values[k];
                if let Err(e) = reference::check(
                    *op,
                    case.ty,
                    got.to_f64(),
                    got.as_int(),
                    r,
                    combination_depth(plan, k),
                ) {
                    problems.push(format!("{name}: {e}"));
                }
            }
            let bits = |v: &Value| match v {
                Value::F32(x) => x.to_bits() as u64,
                Value::F64(x) => x.to_bits(),
                _ => u64::MAX,
            };
            if bits(&values[0]) != bits(want) {
                problems.push(format!(
                    "sum: {} is not the correctly rounded sum {want}",
                    values[0]
                ));
            }
        }
        (Got::Span(got), Expect::Span(want)) => {
            let bad: Vec<usize> = (0..want.len())
                .filter(|&b| got.get(b) != Some(&want[b]))
                .collect();
            if let Some(&b) = bad.first() {
                problems.push(format!(
                    "{} of {} bins differ; bin {b}: got {}, expected {}",
                    bad.len(),
                    want.len(),
                    got.get(b).map_or("nothing".into(), |v| v.to_string()),
                    want[b]
                ));
            }
        }
        (Got::ArgMin(v, at), Expect::ArgMin(wv, wat)) => {
            if wv.is_some_and(|w| w != *v) || at != wat {
                problems.push(format!(
                    "got ({}, index {at}), expected ({}, index {wat})",
                    v.to_f64(),
                    wv.map_or("identity".into(), |w| w.to_f64().to_string())
                ));
            }
        }
        (g, _) => problems.push(format!("result of the wrong shape: {g:?}")),
    }
    if problems.is_empty() {
        "ok".into()
    } else {
        format!("MISMATCH {}", problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_parse() {
        let c = parse_case("f32-sum-min-max").unwrap();
        assert_eq!(c.vars.len(), 3);
        assert_eq!(parse_case("f64-max").unwrap().vars[0].0, Op::Maximum);
        assert!(parse_case("f32").is_err());
        let h = parse_case("u32-hist256").unwrap();
        assert_eq!(h.shape, Shape::Span(256));
        assert_eq!(h.body, "hist[(uint)x[i] & 255u] += 1u;");
        assert!(parse_case("u32-hist100").is_err());
        assert!(parse_case("u32-hist131072").is_err());
        let a = parse_case("f32-argmin").unwrap();
        assert_eq!((a.shape, a.ty), (Shape::ArgMin, ElemType::F32));
        for (name, stored) in [("f16-sum", ElemType::F16), ("bf16-argmin", ElemType::BF16)] {
            let c = parse_case(name).unwrap();
            assert_eq!(
                (c.name.as_str(), c.ty, c.stored),
                (name, ElemType::F32, stored)
            );
        }
        assert!(parse_case("bf16-sum-exact").unwrap().exact);
        let h = input(&parse_case("f16-sum").unwrap(), 1000, 3);
        let HostVec::F32(v) = &h else { panic!("{h:?}") };
        assert!(v.iter().all(|&x| clreduce::Half::from_f32(x).to_f32() == x));
        assert!(v.iter().any(|&x| x != 0.0));
        for c in DEFAULT_CASES.split(',') {
            assert_eq!(parse_case(c).unwrap().name, c);
        }
    }

    #[test]
    fn exact_cases_parse() {
        let e = parse_case("f32-sum-min-max-exact").unwrap();
        assert!(e.exact && e.vars.len() == 3 && e.name == "f32-sum-min-max-exact");
        assert!(parse_case("f64-sum-exact").unwrap().exact);
        for bad in [
            "f32-max-exact",
            "i32-sum-exact",
            "u32-hist16-exact",
            "f32-argmin-exact",
        ] {
            assert!(parse_case(bad).is_err(), "{bad}");
        }
    }
}
