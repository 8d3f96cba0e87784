//! The bytes one rank contributes to the MPI exchange, and the MPI operation that combines two
//! of them. A *record* is a self-describing array of little-endian 64-bit words, the same length
//! on every rank of a launch:
//!
//! ```text
//! word 0   status: 0, or set by the operation (1: the ranks' headers differ, 2: a combine failed)
//! word 1   V, the number of variables
//! V words  per variable: kind (bits 0-7), element type (8-15), op (16-23), elements (32-63);
//!          the type is its position in `ElemType::REDUCIBLE`, the op its position in
//!          `Op::ALL` (then argmin, argmax, custom), so both lists only grow at the end
//! custom   per custom variable: its combiner's length in bytes, then the bytes in words
//! data     per variable and element: Value 1 word (the value's bits), Arg 2 (bits, global
//!          index), Flagged 2 (has, bits), Exact L (the superaccumulator's limbs, i64)
//! ```
//!
//! The operation is one `extern "C"` function with no context of its own (it reads the layout
//! from the header, so it is thread-safe and needs no libffi closure); it runs the host combine
//! of `multi::combine` on every element. The whole record is one element of a contiguous MPI
//! datatype, so an allreduce never cuts it into segments.

use crate::error::{Error, Result};
use crate::exact::{Format, Superacc};
use crate::multi::combine::{Combiner, Partial, PartialKind};
use crate::ops::{CustomOp, Op, Operator};
use crate::plan::Determinism;
use crate::types::{ElemType, Value};

const KINDS: [PartialKind; 4] = [
    PartialKind::Value,
    PartialKind::Arg,
    PartialKind::Flagged,
    PartialKind::Exact,
];
/// The element types by wire id, and the built-in ops (the ops' own lists: one definition).
const TYPES: [ElemType; 6] = ElemType::REDUCIBLE;
const OPS: [Op; 9] = Op::ALL;
const OP_ARGMIN: u64 = OPS.len() as u64;
const OP_ARGMAX: u64 = OP_ARGMIN + 1;
const OP_CUSTOM: u64 = OP_ARGMIN + 2;

/// One variable of a record: its combiner and element count.
pub(crate) struct VarLayout {
    pub combiner: Combiner,
    pub elems: usize,
}

fn words_of(c: &Combiner) -> usize {
    match c.kind() {
        PartialKind::Value => 1,
        PartialKind::Arg | PartialKind::Flagged => 2,
        PartialKind::Exact => Format::for_type(c.ty()).map_or(0, |f| f.limbs()),
    }
}

fn bits_of(v: Value) -> u64 {
    let b = v.to_bytes();
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(&b);
    u64::from_le_bytes(w)
}

fn value_of(ty: ElemType, w: u64) -> Value {
    match ty {
        ElemType::I32 => Value::I32(w as u32 as i32),
        ElemType::U32 => Value::U32(w as u32),
        ElemType::I64 => Value::I64(w as i64),
        ElemType::U64 => Value::U64(w),
        ElemType::F64 => Value::F64(f64::from_bits(w)),
        _ => Value::F32(f32::from_bits(w as u32)),
    }
}

/// The header words of a launch's variables.
pub(crate) fn header(vars: &[VarLayout]) -> Vec<u64> {
    let mut h = vec![0, vars.len() as u64];
    let mut custom = Vec::new();
    for v in vars {
        let c = &v.combiner;
        let kind = KINDS.iter().position(|&k| k == c.kind()).unwrap_or(0) as u64;
        let ty = TYPES.iter().position(|&t| t == c.ty()).unwrap_or(0) as u64;
        let op = match c.op() {
            Operator::Builtin(o) => OPS.iter().position(|x| x == o).unwrap_or(0) as u64,
            Operator::ArgMin => OP_ARGMIN,
            Operator::ArgMax => OP_ARGMAX,
            Operator::Custom(cu) => {
                let b = cu.expr().as_bytes();
                custom.push(b.len() as u64);
                for chunk in b.chunks(8) {
                    let mut w = [0u8; 8];
                    w[..chunk.len()].copy_from_slice(chunk);
                    custom.push(u64::from_le_bytes(w));
                }
                OP_CUSTOM
            }
        };
        h.push(kind | ty << 8 | op << 16 | (v.elems as u64) << 32);
    }
    h.extend(custom);
    h
}

/// A record: the header and each variable's partials.
pub(crate) fn pack(vars: &[VarLayout], partials: &[Vec<Partial>]) -> Result<Vec<u64>> {
    let mut r = header(vars);
    for ps in partials.iter().take(vars.len()) {
        for p in ps {
            match p {
                Partial::Value(x) => r.push(bits_of(*x)),
                Partial::Arg(x, i) => r.extend([bits_of(*x), *i]),
                Partial::Flagged(x) => r.extend([x.is_some() as u64, x.map_or(0, bits_of)]),
                Partial::Exact(s) => r.extend(s.limbs()?.into_iter().map(|l| l as u64)),
            }
        }
    }
    Ok(r)
}

/// Reads the variables' layout back from a header; `None` if it is malformed. Returns the
/// layout and the header's length in words.
pub(crate) fn parse_header(w: &[u64]) -> Option<(Vec<VarLayout>, usize)> {
    let nv = *w.get(1)? as usize;
    let descs = w.get(2..2 + nv)?;
    let mut at = 2 + nv;
    let mut vars = Vec::with_capacity(nv);
    for &d in descs {
        let kind = *KINDS.get((d & 0xff) as usize)?;
        let ty = *TYPES.get((d >> 8 & 0xff) as usize)?;
        let op = match d >> 16 & 0xff {
            OP_ARGMIN => Operator::ArgMin,
            OP_ARGMAX => Operator::ArgMax,
            OP_CUSTOM => {
                let len = *w.get(at)? as usize;
                let words = w.get(at + 1..at + 1 + len.div_ceil(8))?;
                at += 1 + len.div_ceil(8);
                let bytes: Vec<u8> = words
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .take(len)
                    .collect();
                let expr = String::from_utf8(bytes).ok()?;
                // Only the combiner matters here; the identity decides the kind, which the
                // header carries: a Value custom op gets a placeholder identity of its type.
                let c = CustomOp::new(&expr);
                Operator::Custom(if kind == PartialKind::Value {
                    c.identity(value_of(ty, 0))
                } else {
                    c
                })
            }
            o => Operator::Builtin(*OPS.get(o as usize)?),
        };
        let det = if kind == PartialKind::Exact {
            Determinism::Exact
        } else {
            Determinism::Deterministic
        };
        let combiner = Combiner::new(&op, ty, det).ok()?;
        if combiner.kind() != kind {
            return None;
        }
        vars.push(VarLayout {
            combiner,
            elems: (d >> 32) as usize,
        });
    }
    Some((vars, at))
}

/// The partials of a record (after its header of `hlen` words).
pub(crate) fn unpack(vars: &[VarLayout], w: &[u64], hlen: usize) -> Result<Vec<Vec<Partial>>> {
    let bad = || Error::Mpi {
        rank: -1,
        reason: "a record shorter than its header says".into(),
    };
    let mut at = hlen;
    let mut out = Vec::with_capacity(vars.len());
    for v in vars {
        let c = &v.combiner;
        let n = words_of(c);
        let mut ps = Vec::with_capacity(v.elems);
        for _ in 0..v.elems {
            let x = w.get(at..at + n).ok_or_else(bad)?;
            at += n;
            ps.push(match c.kind() {
                PartialKind::Value => Partial::Value(value_of(c.ty(), x[0])),
                PartialKind::Arg => Partial::Arg(value_of(c.ty(), x[0]), x[1]),
                PartialKind::Flagged => {
                    Partial::Flagged((x[0] != 0).then(|| value_of(c.ty(), x[1])))
                }
                PartialKind::Exact => {
                    let limbs: Vec<i64> = x.iter().map(|&l| l as i64).collect();
                    Partial::Exact(Superacc::from_limbs(Format::for_type(c.ty())?, &limbs)?)
                }
            });
        }
        out.push(ps);
    }
    Ok(out)
}

/// The record length in words of a launch's variables.
pub(crate) fn record_words(vars: &[VarLayout]) -> usize {
    header(vars).len()
        + vars
            .iter()
            .map(|v| words_of(&v.combiner) * v.elems)
            .sum::<usize>()
}

/// `inout = combine(in, inout)` on two records (same layout); sets the status word instead
/// when the headers differ (1) or a combine fails (2). Never panics.
pub(crate) fn combine_records(a: &[u64], inout: &mut [u64]) {
    if inout.is_empty() || a.is_empty() {
        return;
    }
    if a[0] != 0 || inout[0] != 0 {
        inout[0] = inout[0].max(a[0]);
        return;
    }
    let Some((vars, hlen)) = parse_header(inout) else {
        inout[0] = 1;
        return;
    };
    if a.get(..hlen) != inout.get(..hlen) {
        inout[0] = 1;
        return;
    }
    let combined = (|| -> Result<Vec<u64>> {
        let (pa, pb) = (unpack(&vars, a, hlen)?, unpack(&vars, inout, hlen)?);
        let mut out = Vec::with_capacity(vars.len());
        for ((v, xa), xb) in vars.iter().zip(&pa).zip(&pb) {
            out.push(
                xa.iter()
                    .zip(xb)
                    .map(|(x, y)| v.combiner.combine(x, y))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        pack(&vars, &out)
    })();
    match combined {
        Ok(r) if r.len() == inout.len() => inout.copy_from_slice(&r),
        _ => inout[0] = 2,
    }
}

/// The MPI user function over records (one element of the contiguous record datatype each).
///
/// # Safety
/// MPI passes `len` records at `invec` and `inoutvec`, each the length its header says
/// (`record_words`), 8-byte words; they do not overlap.
pub(crate) unsafe extern "C" fn record_op(
    invec: *mut std::ffi::c_void,
    inoutvec: *mut std::ffi::c_void,
    len: *mut std::os::raw::c_int,
    _dt: *mut ::mpi::ffi::MPI_Datatype,
) {
    let count = if len.is_null() { 0 } else { *len as usize };
    let (mut pa, mut pb) = (invec as *const u64, inoutvec as *mut u64);
    for _ in 0..count {
        // The header's first words give the record's length.
        let head = std::slice::from_raw_parts(pb as *const u64, 2);
        let nv = head[1] as usize;
        let probe = std::slice::from_raw_parts(pb as *const u64, 2 + nv);
        let Some(words) = header_len_from(probe, pb as *const u64) else {
            *pb = 1;
            return;
        };
        let a = std::slice::from_raw_parts(pa, words);
        let b = std::slice::from_raw_parts_mut(pb, words);
        combine_records(a, b);
        pa = pa.add(words);
        pb = pb.add(words);
    }
}

/// A record's total length from its header at `p` (`probe`: its first `2 + V` words).
///
/// # Safety
/// `p` points to a whole record.
unsafe fn header_len_from(probe: &[u64], p: *const u64) -> Option<usize> {
    let nv = probe[1] as usize;
    // Custom combiners extend the header: walk them to find its end.
    let mut at = 2 + nv;
    for &d in &probe[2..] {
        if d >> 16 & 0xff == OP_CUSTOM {
            let len = *p.add(at) as usize;
            at += 1 + len.div_ceil(8);
        }
    }
    let header = std::slice::from_raw_parts(p, at);
    let (vars, hlen) = parse_header(header)?;
    (hlen == at).then(|| record_words(&vars))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(op: impl Into<Operator>, ty: ElemType, det: Determinism, elems: usize) -> VarLayout {
        VarLayout {
            combiner: Combiner::new(&op.into(), ty, det).unwrap(),
            elems,
        }
    }

    #[test]
    fn records_round_trip_and_combine() {
        let vars = vec![
            layout(Op::Plus, ElemType::I32, Determinism::Deterministic, 2),
            layout(
                Operator::ArgMin,
                ElemType::F64,
                Determinism::Deterministic,
                1,
            ),
            layout(
                CustomOp::new("max(a, b)"),
                ElemType::I64,
                Determinism::Deterministic,
                1,
            ),
            layout(Op::Plus, ElemType::F32, Determinism::Exact, 1),
            layout(
                CustomOp::new("a * b + 1").identity(0u32),
                ElemType::U32,
                Determinism::Deterministic,
                1,
            ),
        ];
        let mut s1 = Superacc::new(Format::F32);
        s1.add_f32(1e8);
        s1.add_f32(1.0);
        let mut s2 = Superacc::new(Format::F32);
        s2.add_f32(-1e8);
        s2.add_f32(0.5);
        let p1 = vec![
            vec![
                Partial::Value(Value::I32(i32::MAX)),
                Partial::Value(Value::I32(1)),
            ],
            vec![Partial::Arg(Value::F64(2.0), 9)],
            vec![Partial::Flagged(None)],
            vec![Partial::Exact(s1)],
            vec![Partial::Value(Value::U32(3))],
        ];
        let p2 = vec![
            vec![Partial::Value(Value::I32(1)), Partial::Value(Value::I32(2))],
            vec![Partial::Arg(Value::F64(2.0), 4)],
            vec![Partial::Flagged(Some(Value::I64(-3)))],
            vec![Partial::Exact(s2)],
            vec![Partial::Value(Value::U32(4))],
        ];
        let (a, mut b) = (pack(&vars, &p1).unwrap(), pack(&vars, &p2).unwrap());
        assert_eq!(a.len(), record_words(&vars));
        let (back, hlen) = parse_header(&a).unwrap();
        assert_eq!(unpack(&back, &a, hlen).unwrap(), p1);
        combine_records(&a, &mut b);
        assert_eq!(b[0], 0);
        let got = unpack(&vars, &b, hlen).unwrap();
        assert_eq!(
            got[0],
            vec![
                Partial::Value(Value::I32(i32::MIN)),
                Partial::Value(Value::I32(3))
            ]
        );
        assert_eq!(got[1], vec![Partial::Arg(Value::F64(2.0), 4)]);
        assert_eq!(got[2], vec![Partial::Flagged(Some(Value::I64(-3)))]);
        let Partial::Exact(s) = &got[3][0] else {
            panic!()
        };
        assert_eq!(s.round_f32(), 1.5);
        assert_eq!(got[4], vec![Partial::Value(Value::U32(13))]);
        // Through the extern "C" function, as MPI calls it.
        let mut c = pack(&vars, &p2).unwrap();
        let mut a2 = a.clone();
        let mut n = 1;
        unsafe {
            record_op(
                a2.as_mut_ptr() as *mut _,
                c.as_mut_ptr() as *mut _,
                &mut n,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(c, b);
    }

    #[test]
    fn every_op_and_type_round_trips_through_the_header() {
        let mut ops: Vec<Operator> = OPS.iter().map(|&o| o.into()).collect();
        ops.extend([Operator::ArgMin, Operator::ArgMax]);
        ops.push(CustomOp::new("a + b").identity(0i32).into());
        let mut n = 0;
        for op in &ops {
            for ty in TYPES.into_iter().filter(|&t| op.valid_for(t)) {
                let op = match op {
                    // A custom op's identity is of its variable's type.
                    Operator::Custom(c) => Operator::Custom(
                        CustomOp::new(c.expr()).identity(Op::Plus.identity(ty).unwrap()),
                    ),
                    op => op.clone(),
                };
                let vars = vec![layout(op.clone(), ty, Determinism::Deterministic, 3)];
                let h = header(&vars);
                let (back, hlen) = parse_header(&h).unwrap();
                assert_eq!(hlen, h.len(), "{op} {ty}");
                assert_eq!((back[0].combiner.op(), back[0].combiner.ty()), (&op, ty));
                assert_eq!(back[0].elems, 3);
                n += 1;
            }
        }
        // 9 ops on 4 integer types and 6 on 2 float types; argmin, argmax and custom on all 6.
        assert_eq!(n, 9 * 4 + 6 * 2 + 3 * 6);
    }

    #[test]
    fn different_headers_set_the_status() {
        let v1 = vec![layout(
            Op::Plus,
            ElemType::I32,
            Determinism::Deterministic,
            1,
        )];
        let v2 = vec![layout(
            Op::Maximum,
            ElemType::I32,
            Determinism::Deterministic,
            1,
        )];
        let a = pack(&v1, &[vec![Partial::Value(Value::I32(1))]]).unwrap();
        let mut b = pack(&v2, &[vec![Partial::Value(Value::I32(1))]]).unwrap();
        combine_records(&a, &mut b);
        assert_eq!(b[0], 1);
    }
}
