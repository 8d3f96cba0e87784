//! What the tuner measures: one launch per class (the op families and types of `clreduce bench`'s
//! default cases, and more in the full set), its input, result buffers, reset between
//! repetitions, and the check of every candidate's result against the host.

use crate::check::reference::{self, combination_depth, Reference};
use crate::plan::{LaunchClass, Plan};
use crate::types::{HostVec, Value};
use crate::{
    reduction, reduction_argmin, reduction_span, Buffer, DynBuffer, ElemType, Op, Queue, Reduction,
    Result,
};

/// How a case's results are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One scalar per variable.
    Scalars,
    /// One span of this many u32 counters (a histogram).
    Span(usize),
    /// argmin: the value and the lowest index.
    ArgMin,
}

/// One measured launch: a name (as `clreduce bench` spells its cases), the element type, the
/// variables, the body.
#[derive(Debug, Clone)]
pub struct TuneCase {
    /// The case's name (`f32-sum`).
    pub name: String,
    /// The element type.
    pub ty: ElemType,
    /// The op the input is generated for (`reference::random_input`).
    data_op: Op,
    vars: Vec<(Op, &'static str)>,
    /// The launch shape (range form, span length).
    pub shape: Shape,
    /// The kernel body.
    pub body: String,
}

/// The cases of `clreduce tune --quick`: `clreduce bench`'s default case set.
pub const QUICK_CASES: &str =
    "f32-sum,f64-sum,i32-sum,f32-max,f32-sum-min-max,u32-hist256,f32-argmin";
/// The full set adds the other integer widths, min/max on every width, a bitwise op, f64
/// argmin and two more histogram sizes.
pub const FULL_CASES: &str = "f32-sum,f64-sum,i32-sum,u32-sum,i64-sum,f32-max,f64-max,i32-max,i64-max,u32-or,f32-sum-min-max,u32-hist16,u32-hist256,u32-hist4096,f32-argmin,f64-argmin";

impl TuneCase {
    /// Parses a case name: TYPE-OP (`f32-sum`, `i64-max`, `u32-or`), `f32-sum-min-max`,
    /// `u32-histN` (N a power of two up to 65536), TYPE-argmin.
    pub fn parse(s: &str) -> std::result::Result<TuneCase, String> {
        let s = s.trim();
        if s == "f32-sum-min-max" {
            return Ok(TuneCase {
                name: s.into(),
                ty: ElemType::F32,
                data_op: Op::Plus,
                vars: vec![(Op::Plus, "sum"), (Op::Minimum, "lo"), (Op::Maximum, "hi")],
                shape: Shape::Scalars,
                body: "sum += x[i]; combine(lo, x[i]); combine(hi, x[i]);".into(),
            });
        }
        if let Some(bins) = s.strip_prefix("u32-hist") {
            let bins: usize = bins
                .parse()
                .ok()
                .filter(|b: &usize| b.is_power_of_two() && *b <= 1 << 16)
                .ok_or_else(|| {
                    format!("bad case {s:?}: u32-histN needs N a power of two up to 65536")
                })?;
            return Ok(TuneCase {
                name: s.into(),
                ty: ElemType::U32,
                data_op: Op::BitOr,
                vars: vec![(Op::Plus, "hist")],
                shape: Shape::Span(bins),
                body: format!("hist[(uint)x[i] & {}u] += 1u;", bins - 1),
            });
        }
        let (t, o) = s
            .split_once('-')
            .ok_or_else(|| format!("bad case {s:?} (expected TYPE-OP such as f32-sum)"))?;
        let ty = ElemType::parse(t).map_err(|e| e.to_string())?;
        if o == "argmin" {
            return Ok(TuneCase {
                name: s.into(),
                ty,
                data_op: Op::Minimum,
                vars: vec![(Op::Minimum, "best")],
                shape: Shape::ArgMin,
                body: "combine(best, x[i], i);".into(),
            });
        }
        let op = Op::parse(o).map_err(|e| e.to_string())?;
        if !op.valid_for(ty) || ty.is_storage() {
            return Err(format!("bad case {s:?}: {op} on {ty} is not a reduction"));
        }
        let body = match op {
            Op::Plus => "sum += x[i];",
            _ => "combine(sum, x[i]);",
        };
        Ok(TuneCase {
            name: s.into(),
            ty,
            data_op: op,
            vars: vec![(op, "sum")],
            shape: Shape::Scalars,
            body: body.into(),
        })
    }

    /// A comma list of cases.
    pub fn parse_list(s: &str) -> std::result::Result<Vec<TuneCase>, String> {
        s.split(',')
            .filter(|c| !c.trim().is_empty())
            .map(TuneCase::parse)
            .collect()
    }

    /// The launch class a plan of this case is looked up under.
    pub fn class(&self) -> LaunchClass {
        let ops = match self.shape {
            Shape::ArgMin => vec![crate::plan::OpClass::Arg],
            _ => self
                .vars
                .iter()
                .map(|(op, _)| crate::plan::OpClass::of(&(*op).into()))
                .collect(),
        };
        LaunchClass {
            ops,
            ty: self.ty,
            span_log2: match self.shape {
                Shape::Span(len) => Some(len.trailing_zeros()),
                _ => None,
            },
        }
    }

    /// Seeded input of `n` elements.
    pub fn input(&self, n: usize) -> HostVec {
        reference::random_input(self.data_op, self.ty, n, 0x7e57)
    }

    /// The result buffers, at the identity.
    pub fn outs(&self, q: &Queue) -> Result<Outs> {
        let vars = match self.shape {
            Shape::Span(len) => vec![DynBuffer::U32(q.buffer_from(&vec![0u32; len])?)],
            Shape::ArgMin => vec![DynBuffer::scalar(q, identity(Op::Minimum, self.ty))?],
            Shape::Scalars => self
                .vars
                .iter()
                .map(|(op, _)| DynBuffer::scalar(q, identity(*op, self.ty)))
                .collect::<Result<Vec<_>>>()?,
        };
        let index = match self.shape {
            Shape::ArgMin => Some(q.buffer_from(&[u64::MAX])?),
            _ => None,
        };
        Ok(Outs { vars, index })
    }

    /// Puts the results back at the identity (a host write, not timed).
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

    /// The reductions of one launch into `o`.
    pub fn reductions(&self, o: &Outs) -> Vec<Reduction> {
        match (self.shape, &o.index) {
            (Shape::Span(len), _) => vec![reduction_span(&o.vars[0], len, Op::Plus).name("hist")],
            (Shape::ArgMin, Some(ix)) => vec![reduction_argmin(&o.vars[0], ix).name("best")],
            _ => o
                .vars
                .iter()
                .zip(&self.vars)
                .map(|(r, (op, name))| reduction(r, *op).name(name))
                .collect(),
        }
    }

    /// What the host expects over `data`.
    pub fn expect(&self, data: &HostVec) -> Expect {
        match self.shape {
            Shape::Scalars => Expect::Scalars(
                self.vars
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
                let arg = reference::reference_arg(false, data, None);
                Expect::ArgMin(arg.value, arg.index)
            }
        }
    }

    /// Reads the results and checks them; `Err` says what differs.
    pub fn check(
        &self,
        o: &Outs,
        want: &Expect,
        plan: &Plan,
    ) -> Result<std::result::Result<(), String>> {
        Ok(match (want, &o.vars[..]) {
            (Expect::Span(h), [DynBuffer::U32(b)]) => {
                let got = b.to_vec()?;
                match (0..h.len()).find(|&k| got[k] != h[k]) {
                    None => Ok(()),
                    Some(k) => Err(format!("bin {k}: got {}, expected {}", got[k], h[k])),
                }
            }
            (Expect::ArgMin(v, at), [r]) => {
                let ix = o.index.as_ref().map(|b| b.get(0)).transpose()?;
                let got = r.value(0)?;
                if *v != got || ix != Some(*at) {
                    Err(format!(
                        "got ({}, {ix:?}), expected ({}, {at})",
                        got.to_f64(),
                        v.to_f64()
                    ))
                } else {
                    Ok(())
                }
            }
            (Expect::Scalars(refs), vars) => {
                let mut out = Ok(());
                for (k, ((r, (op, name)), buf)) in refs.iter().zip(&self.vars).zip(vars).enumerate()
                {
                    let got = buf.value(0)?;
                    let depth = combination_depth(plan, k);
                    if let Err(e) =
                        reference::check(*op, self.ty, got.to_f64(), got.as_int(), r, depth)
                    {
                        out = Err(format!("{name}: {e}"));
                        break;
                    }
                }
                out
            }
            _ => Err("results of the wrong shape".into()),
        })
    }
}

/// A case's result buffers on one queue.
pub struct Outs {
    vars: Vec<DynBuffer>,
    index: Option<Buffer<u64>>,
}

/// The host's result for a case.
pub enum Expect {
    /// Each scalar variable's reference.
    Scalars(Vec<Reference>),
    /// A histogram's bins.
    Span(Vec<u32>),
    /// The minimum and its index.
    ArgMin(Value, u64),
}

fn identity(op: Op, ty: ElemType) -> Value {
    op.identity(ty).unwrap_or(Value::I32(0))
}
