//! Buffers whose element type is known at run time (the CLI, tests and benches pick types from
//! strings and lists).

use super::queue::Queue;
use crate::error::Result;
use crate::runtime::buffer::{AnyBuffer, Buffer};
use crate::runtime::launch::Mem;
use crate::types::HostVec;
use crate::types::{Bf16, ElemType, Half, Value};
use std::sync::Arc;

/// A [`Buffer`] of any reducible type, or of a 16-bit storage type (f16, bf16: read as f32 by
/// a body; their values come and go as `Value::F32`).
#[derive(Clone, Debug)]
pub enum DynBuffer {
    /// A buffer of `i32`.
    I32(Buffer<i32>),
    /// A buffer of `u32`.
    U32(Buffer<u32>),
    /// A buffer of `i64`.
    I64(Buffer<i64>),
    /// A buffer of `u64`.
    U64(Buffer<u64>),
    /// A buffer of `f32`.
    F32(Buffer<f32>),
    /// A buffer of `f64`.
    F64(Buffer<f64>),
    /// A buffer of [`Half`].
    F16(Buffer<Half>),
    /// A buffer of [`Bf16`].
    BF16(Buffer<Bf16>),
}

macro_rules! each {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            DynBuffer::I32($b) => $e,
            DynBuffer::U32($b) => $e,
            DynBuffer::I64($b) => $e,
            DynBuffer::U64($b) => $e,
            DynBuffer::F32($b) => $e,
            DynBuffer::F64($b) => $e,
            DynBuffer::F16($b) => $e,
            DynBuffer::BF16($b) => $e,
        }
    };
}

impl DynBuffer {
    /// Uploads a host vector.
    pub fn upload(q: &Queue, v: &HostVec) -> Result<DynBuffer> {
        Ok(match v {
            HostVec::I32(d) => DynBuffer::I32(q.buffer_from(d)?),
            HostVec::U32(d) => DynBuffer::U32(q.buffer_from(d)?),
            HostVec::I64(d) => DynBuffer::I64(q.buffer_from(d)?),
            HostVec::U64(d) => DynBuffer::U64(q.buffer_from(d)?),
            HostVec::F32(d) => DynBuffer::F32(q.buffer_from(d)?),
            HostVec::F64(d) => DynBuffer::F64(q.buffer_from(d)?),
        })
    }

    /// Uploads a host vector as `stored`: f32 values rounded to f16 or bf16 (nearest even)
    /// for those, else as [`DynBuffer::upload`] (whose type must then be `stored`).
    pub fn upload_as(q: &Queue, v: &HostVec, stored: ElemType) -> Result<DynBuffer> {
        match (v, stored) {
            (HostVec::F32(d), ElemType::F16) => Ok(DynBuffer::F16(
                q.buffer_from(&d.iter().map(|&x| Half::from_f32(x)).collect::<Vec<_>>())?,
            )),
            (HostVec::F32(d), ElemType::BF16) => Ok(DynBuffer::BF16(
                q.buffer_from(&d.iter().map(|&x| Bf16::from_f32(x)).collect::<Vec<_>>())?,
            )),
            (v, t) if v.ty() == t => DynBuffer::upload(q, v),
            (v, t) => Err(crate::Error::TypeMismatch {
                name: "input".into(),
                expected: t,
                found: v.ty(),
            }),
        }
    }

    /// A zero-filled buffer of `len` elements of a type chosen at run time ([`Queue::buffer`]
    /// for that type).
    pub fn zeros(q: &Queue, ty: ElemType, len: usize) -> Result<DynBuffer> {
        Ok(match ty {
            ElemType::I32 => DynBuffer::I32(q.buffer(len)?),
            ElemType::U32 => DynBuffer::U32(q.buffer(len)?),
            ElemType::I64 => DynBuffer::I64(q.buffer(len)?),
            ElemType::U64 => DynBuffer::U64(q.buffer(len)?),
            ElemType::F32 => DynBuffer::F32(q.buffer(len)?),
            ElemType::F64 => DynBuffer::F64(q.buffer(len)?),
            ElemType::F16 => DynBuffer::F16(q.buffer(len)?),
            ElemType::BF16 => DynBuffer::BF16(q.buffer(len)?),
        })
    }

    /// A one-element buffer holding `v`.
    pub fn scalar(q: &Queue, v: Value) -> Result<DynBuffer> {
        Ok(match v {
            Value::I32(x) => DynBuffer::I32(q.buffer_from(&[x])?),
            Value::U32(x) => DynBuffer::U32(q.buffer_from(&[x])?),
            Value::I64(x) => DynBuffer::I64(q.buffer_from(&[x])?),
            Value::U64(x) => DynBuffer::U64(q.buffer_from(&[x])?),
            Value::F32(x) => DynBuffer::F32(q.buffer_from(&[x])?),
            Value::F64(x) => DynBuffer::F64(q.buffer_from(&[x])?),
        })
    }

    /// Every element as typed values (f16 and bf16 widened exactly to f32, as [`Self::value`]).
    pub fn to_values(&self) -> Result<Vec<Value>> {
        Ok(match self {
            DynBuffer::I32(b) => b.to_vec()?.into_iter().map(Value::I32).collect(),
            DynBuffer::U32(b) => b.to_vec()?.into_iter().map(Value::U32).collect(),
            DynBuffer::I64(b) => b.to_vec()?.into_iter().map(Value::I64).collect(),
            DynBuffer::U64(b) => b.to_vec()?.into_iter().map(Value::U64).collect(),
            DynBuffer::F32(b) => b.to_vec()?.into_iter().map(Value::F32).collect(),
            DynBuffer::F64(b) => b.to_vec()?.into_iter().map(Value::F64).collect(),
            DynBuffer::F16(b) => b
                .to_vec()?
                .into_iter()
                .map(|h| Value::F32(h.to_f32()))
                .collect(),
            DynBuffer::BF16(b) => b
                .to_vec()?
                .into_iter()
                .map(|h| Value::F32(h.to_f32()))
                .collect(),
        })
    }

    /// Element `i` as a typed value.
    pub fn value(&self, i: usize) -> Result<Value> {
        Ok(match self {
            DynBuffer::I32(b) => Value::I32(b.get(i)?),
            DynBuffer::U32(b) => Value::U32(b.get(i)?),
            DynBuffer::I64(b) => Value::I64(b.get(i)?),
            DynBuffer::U64(b) => Value::U64(b.get(i)?),
            DynBuffer::F32(b) => Value::F32(b.get(i)?),
            DynBuffer::F64(b) => Value::F64(b.get(i)?),
            DynBuffer::F16(b) => Value::F32(b.get(i)?.to_f32()),
            DynBuffer::BF16(b) => Value::F32(b.get(i)?.to_f32()),
        })
    }

    /// Overwrites element `i`.
    pub fn set(&self, i: usize, v: Value) -> Result<()> {
        match (self, v) {
            (DynBuffer::I32(b), Value::I32(x)) => b.write(i, &[x]),
            (DynBuffer::U32(b), Value::U32(x)) => b.write(i, &[x]),
            (DynBuffer::I64(b), Value::I64(x)) => b.write(i, &[x]),
            (DynBuffer::U64(b), Value::U64(x)) => b.write(i, &[x]),
            (DynBuffer::F32(b), Value::F32(x)) => b.write(i, &[x]),
            (DynBuffer::F64(b), Value::F64(x)) => b.write(i, &[x]),
            (DynBuffer::F16(b), Value::F32(x)) => b.write(i, &[Half::from_f32(x)]),
            (DynBuffer::BF16(b), Value::F32(x)) => b.write(i, &[Bf16::from_f32(x)]),
            (b, v) => Err(crate::Error::TypeMismatch {
                name: "value".into(),
                expected: b.elem_type(),
                found: v.ty(),
            }),
        }
    }
}

impl AnyBuffer for DynBuffer {
    fn elem_type(&self) -> ElemType {
        each!(self, b => b.elem_type())
    }
    fn len(&self) -> usize {
        each!(self, b => b.len())
    }
    fn mem(&self) -> Arc<Mem> {
        each!(self, b => AnyBuffer::mem(b))
    }
    fn device_index(&self) -> usize {
        each!(self, b => AnyBuffer::device_index(b))
    }
    fn device_label(&self) -> String {
        each!(self, b => AnyBuffer::device_label(b))
    }
}
