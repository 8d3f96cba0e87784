//! Element type names as users type them (`--type f32`, tuning cases): the one part of the
//! vocabulary that returns the crate's error, kept apart so that `types` stays below `error`
//! (the error enum carries element types and values).

use super::ElemType;
use crate::error::{Error, Result};

impl ElemType {
    /// Parses a short name (`i32`, `f64`, `bf16`, ...) or an OpenCL C name (`int`, `double`,
    /// ...; `bfloat16` for bf16, whose storage name `ushort` is not taken);
    /// anything else is [`Error::UnknownName`].
    pub fn parse(s: &str) -> Result<ElemType> {
        let all = [
            ElemType::I32,
            ElemType::U32,
            ElemType::I64,
            ElemType::U64,
            ElemType::F32,
            ElemType::F64,
            ElemType::F16,
            ElemType::BF16,
        ];
        all.into_iter()
            .find(|t| match t {
                ElemType::BF16 => s == "bf16" || s == "bfloat16",
                t => t.name() == s || t.cl_name() == s,
            })
            .ok_or_else(|| Error::UnknownName {
                kind: "type",
                name: s.to_string(),
                known: all.iter().map(|t| t.name()).collect(),
            })
    }
}
