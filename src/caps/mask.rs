//! Capability masks: remove capabilities so that every algorithm path runs on any device.

use super::DeviceCaps;
use serde::Serialize;

/// A capability mask: names capabilities to remove so every algorithm path can run on any device.
/// A mask only removes; it never adds.
///
/// ```
/// use clreduce::caps::fixtures;
/// use clreduce::{Error, Mask};
/// # fn main() -> clreduce::Result<()> {
/// let mask = Mask::parse("no-subgroups, no-float-atomics")?;
/// assert_eq!(mask.names(), ["no-float-atomics", "no-subgroups"]);
/// let caps = mask.apply(&fixtures::intel_cpu());
/// assert!(caps.sub_groups.is_none() && !caps.atomics.f32_global_add);
/// assert!(matches!(Mask::parse("no-gpu"), Err(Error::UnknownMask { .. })));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Mask {
    /// `no-atomics`: no atomics of any kind (int or float, global or local).
    pub no_atomics: bool,
    /// `no-local-atomics`: no atomics on `__local`.
    pub no_local_atomics: bool,
    /// `no-global-atomics`: no atomics on `__global` (last-work-group detection then needs none either: it is removed too).
    pub no_global_atomics: bool,
    /// `no-int64-atomics`: no 64-bit integer atomics.
    pub no_int64_atomics: bool,
    /// `no-float-atomics`: no cl_ext_float_atomics.
    pub no_float_atomics: bool,
    /// `no-group-reduce`: no work-group collective functions.
    pub no_group_reduce: bool,
    /// `no-subgroups`: no sub-groups.
    pub no_subgroups: bool,
    /// `no-c11-atomics`: no OpenCL C 2.0 atomics/fences (forces the OpenCL 1.2 last-group path).
    pub no_c11_atomics: bool,
    /// `no-fp64`: no double precision.
    pub no_fp64: bool,
}

impl Mask {
    /// Every mask name, as [`Mask::parse`] and `CLREDUCE_MASK` take them.
    pub const NAMES: [&'static str; 9] = [
        "no-atomics",
        "no-local-atomics",
        "no-global-atomics",
        "no-int64-atomics",
        "no-float-atomics",
        "no-group-reduce",
        "no-subgroups",
        "no-c11-atomics",
        "no-fp64",
    ];

    /// Parses a comma-separated list (`no-atomics,no-subgroups`); empty or `none` is no mask.
    pub fn parse(s: &str) -> crate::Result<Mask> {
        let mut m = Mask::default();
        for part in s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "none")
        {
            match part {
                "no-atomics" => m.no_atomics = true,
                "no-local-atomics" => m.no_local_atomics = true,
                "no-global-atomics" => m.no_global_atomics = true,
                "no-int64-atomics" => m.no_int64_atomics = true,
                "no-float-atomics" => m.no_float_atomics = true,
                "no-group-reduce" => m.no_group_reduce = true,
                "no-subgroups" => m.no_subgroups = true,
                "no-c11-atomics" => m.no_c11_atomics = true,
                "no-fp64" => m.no_fp64 = true,
                other => {
                    return Err(crate::Error::UnknownMask {
                        name: other.to_string(),
                        known: Mask::NAMES.to_vec(),
                    })
                }
            }
        }
        Ok(m)
    }

    /// The mask named by `CLREDUCE_MASK`, or no mask.
    pub fn from_env() -> crate::Result<Mask> {
        match std::env::var("CLREDUCE_MASK") {
            Ok(s) => Mask::parse(&s),
            Err(_) => Ok(Mask::default()),
        }
    }

    /// Whether the mask removes nothing.
    pub fn is_empty(&self) -> bool {
        *self == Mask::default()
    }

    /// The names of the capabilities this mask removes, in the order of [`Mask::NAMES`].
    pub fn names(&self) -> Vec<&'static str> {
        let flags = [
            self.no_atomics,
            self.no_local_atomics,
            self.no_global_atomics,
            self.no_int64_atomics,
            self.no_float_atomics,
            self.no_group_reduce,
            self.no_subgroups,
            self.no_c11_atomics,
            self.no_fp64,
        ];
        Mask::NAMES
            .iter()
            .zip(flags)
            .filter(|(_, f)| *f)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Returns `caps` with the masked capabilities removed (and noted in `removed`).
    pub fn apply(&self, caps: &DeviceCaps) -> DeviceCaps {
        let mut c = caps.clone();
        let a = &mut c.atomics;
        let note = |removed: &mut Vec<String>, what: &str| removed.push(format!("{what}: masked"));
        if self.no_atomics || self.no_global_atomics {
            a.int32_global_base = false;
            a.int32_global_ext = false;
            a.f32_global_add = false;
            a.f32_global_minmax = false;
            a.f64_global_add = false;
            a.f64_global_minmax = false;
        }
        if self.no_atomics || self.no_local_atomics {
            a.int32_local_base = false;
            a.int32_local_ext = false;
            a.f32_local_add = false;
            a.f32_local_minmax = false;
            a.f64_local_add = false;
            a.f64_local_minmax = false;
        }
        if self.no_atomics
            || self.no_int64_atomics
            || self.no_global_atomics
            || self.no_local_atomics
        {
            // 64-bit atomics cover both spaces with one extension; removing either space removes them.
            a.int64_base = false;
            a.int64_ext = false;
        }
        if self.no_float_atomics {
            a.f32_global_add = false;
            a.f32_local_add = false;
            a.f32_global_minmax = false;
            a.f32_local_minmax = false;
            a.f64_global_add = false;
            a.f64_local_add = false;
            a.f64_global_minmax = false;
            a.f64_local_minmax = false;
        }
        if self.no_atomics || self.no_c11_atomics {
            a.order_acq_rel = false;
            a.scope_device = false;
            c.acq_rel_ptx = false;
        }
        if self.no_group_reduce {
            c.work_group_collectives = false;
        }
        if self.no_subgroups {
            c.sub_groups = None;
            c.warp_shuffle_ptx = false;
        }
        if self.no_fp64 {
            c.fp64 = false;
            c.atomics.f64_global_add = false;
            c.atomics.f64_local_add = false;
            c.atomics.f64_global_minmax = false;
            c.atomics.f64_local_minmax = false;
        }
        for name in self.names() {
            note(&mut c.removed, name);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::{fixtures, Space};
    use crate::ops::Op;
    use crate::types::ElemType;

    #[test]
    fn mask_only_removes() {
        for (_, caps) in fixtures::all() {
            for name in Mask::NAMES {
                let m = Mask::parse(name).unwrap();
                let masked = m.apply(&caps);
                for op in Op::ALL {
                    for ty in ElemType::REDUCIBLE {
                        for sp in [Space::Global, Space::Local] {
                            assert!(
                                !masked.fast_atomic(op, ty, sp) || caps.fast_atomic(op, ty, sp)
                            );
                        }
                        assert!(!masked.wg_reduce(op, ty) || caps.wg_reduce(op, ty));
                        assert!(!masked.sg_reduce(op, ty) || caps.sg_reduce(op, ty));
                    }
                }
                assert!(!masked.c11_atomics() || caps.c11_atomics());
                assert!(masked.removed.iter().any(|r| r.starts_with(name)));
            }
        }
        let m = Mask::parse("no-atomics")
            .unwrap()
            .apply(&fixtures::intel_cpu());
        assert!(!m.fast_atomic(Op::Plus, ElemType::I32, Space::Global));
        assert!(!m.fast_atomic(Op::Plus, ElemType::F32, Space::Local));
    }

    #[test]
    fn mask_parse_rejects_unknown() {
        assert!(matches!(
            Mask::parse("no-atomics,bogus"),
            Err(crate::Error::UnknownMask { .. })
        ));
        assert!(Mask::parse("").unwrap().is_empty());
        assert!(
            Mask::parse("no-subgroups, no-group-reduce")
                .unwrap()
                .no_group_reduce
        );
    }
}
