//! The plan itself: [`Plan`] and its parts ([`VarPlan`], [`SpanPlan`], [`AccShape`],
//! [`SpanStore`], [`IndexOrder`]), plain serializable data.

use super::request::{ExactTail, FormRequest, HotLoop, Shape};
pub use super::strategy::IndexOrder;
use super::strategy::{CrossAlgo, GroupAlgo};
use crate::ops::Operator;
use crate::types::{ElemType, Value};
use serde::Serialize;

/// How a variable's work-item accumulator is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccShape {
    /// The element type itself (built-in ops, custom ops with an identity).
    Plain,
    /// `{ value, has }`: an identity-less reduction; `has == 0` is the identity, so every
    /// algorithm (trees, shuffles, partials, empty work-groups) works unchanged.
    Flagged,
    /// `{ value, index }`: argmin / argmax; the identity is (the op's identity, u64::MAX).
    Pair,
    /// An exact float sum (`Determinism::Exact`): a floating-point expansion per work-item
    /// whose rounding errors, and every value outside its safe window, go into a
    /// superaccumulator (`ExactPlan`).
    Exact,
}

/// The result format of an exact sum: where its superaccumulator's digits start and how many
/// there are (`clreduce::exact`, kernels/exact.cl).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExactFormat {
    /// f32 results (f32 data, f16 storage read as f32): 11 digits from 2^-149, 14 limbs.
    F32,
    /// f64 results: 68 digits from 2^-1074, 71 limbs.
    F64,
}

impl ExactFormat {
    /// Limbs of a superaccumulator: the digits and the NaN, +inf and -inf counters.
    pub fn limbs(self) -> usize {
        match self {
            ExactFormat::F32 => 14,
            ExactFormat::F64 => 71,
        }
    }
}

/// The per-work-item expansion of an exact sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expansion {
    /// Two doubles (needs fp64): f32 data (every finite normal f32 stays on the fast path) and
    /// f64 data (|x| in [2^-970, 2^990)).
    TwoDouble,
    /// Three floats, for f32 data on a device without fp64 (|x| in [2^-103, 2^101)).
    ThreeFloat,
}

impl Expansion {
    /// Bytes of one expansion.
    pub fn bytes(self) -> usize {
        match self {
            Expansion::TwoDouble => 16,
            Expansion::ThreeFloat => 12,
        }
    }
    /// The most elements one expansion may absorb (merges included) before it must be
    /// flushed into the superaccumulator (kernels/exact.cl CLR_X_CAP*), for the result format.
    pub fn cap(self, format: ExactFormat) -> u64 {
        match (self, format) {
            (Expansion::ThreeFloat, _) => 1 << 24,
            (Expansion::TwoDouble, ExactFormat::F64) => 1 << 30,
            (Expansion::TwoDouble, ExactFormat::F32) => 1 << 62,
        }
    }
}

/// Where a work-group's superaccumulator lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SaccStore {
    /// One per work-group in local memory, added to with 64-bit local atomics.
    LocalAtomic,
    /// One row per work-item in local memory (no atomics), summed limb by limb at the end.
    LocalRows,
    /// Carried by each accumulator (a private superaccumulator beside the expansion), combined
    /// exactly wherever accumulators combine: the exact sums of segmented reductions
    /// (kernels/var_segexact.cl).
    Carried,
}

/// The plan of an exact sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ExactPlan {
    /// The result format (f32 or f64 superaccumulator).
    pub format: ExactFormat,
    /// The per-work-item expansion.
    pub expansion: Expansion,
    /// Where each work-group's superaccumulator lives.
    pub store: SaccStore,
    /// The speculative loop: chunks of elements go through the expansion's TwoSums with no
    /// branch and no deposit, only a flag; a flagged chunk is run again exactly (every exact
    /// variable of a launch without spans whose body only reads, in the grid-stride or the
    /// contiguous order).
    pub speculative: bool,
    /// The speculative loop's hot form (design/exact.md "The hot loop"): range checks once per
    /// chunk instead of per element; for f32 data in doubles, the blocks' doubles into one
    /// expansion per work-item.
    pub hot: HotLoop,
    /// The fixed tail: where the published superaccumulators are summed and rounded, and
    /// whether each work-group normalizes its own (design/exact.md "The tail").
    pub tail: ExactTail,
}

impl ExactPlan {
    /// Whether the sum runs the speculative loop in the hot form `form`.
    pub fn runs_hot(&self, form: HotLoop) -> bool {
        self.speculative && self.hot == form
    }
    /// Bytes of one work-item accumulator: the expansion, and for f32 data in doubles the
    /// block's double, base exponent and count (kernels/var_exact.cl `clr_xb`).
    pub fn acc_bytes(&self) -> usize {
        match (self.format, self.expansion, self.speculative) {
            // The expansion and the limbs' state word (two doubles and a ulong, or three floats
            // and a uint) and the superaccumulator (kernels/var_segexact.cl).
            _ if self.store == SaccStore::Carried => match self.expansion {
                Expansion::TwoDouble => 24 + 8 * self.limbs(),
                Expansion::ThreeFloat => 16 + 8 * self.limbs(),
            },
            (ExactFormat::F32, Expansion::TwoDouble, false) => 32,
            (_, e, _) => e.bytes(),
        }
    }
    /// Limbs of one superaccumulator.
    pub fn limbs(&self) -> usize {
        self.format.limbs()
    }
    /// Longs of local memory for the work-group's superaccumulator(s).
    pub fn local_longs(&self, local: usize) -> usize {
        match self.store {
            SaccStore::LocalAtomic => self.limbs(),
            SaccStore::LocalRows => self.limbs() * local,
            SaccStore::Carried => 1,
        }
    }
    /// The most indices one work-group may take: its expansion's cap, and the
    /// superaccumulator's 2^30 contributions between normalizations.
    pub fn per_group_cap(&self) -> u64 {
        self.expansion.cap(self.format).min(1 << 29)
    }
}

/// Where a span reduction's work-group copies live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpanStore {
    /// One copy per work-group in local memory, updated with local atomics.
    LocalShared,
    /// One copy per work-item in local memory (no atomics), folded element by element.
    LocalPrivate,
    /// Every update goes straight to the result with global atomics.
    GlobalAtomic,
    /// One copy per work-item in global scratch memory (no atomics), folded by an extra pass.
    GlobalPrivate,
    /// f32 sums: one narrow-digit superaccumulator per element in global scratch (32 digits of
    /// 8 bits and 3 counters), each update one 64-bit atomic add, exact in any order; an extra
    /// pass over the elements rounds each once (decision 59).
    GlobalDigits,
    /// Integer spans whose identity is all-zero bits (plus, or, xor, unsigned max): `copies`
    /// copies in global scratch, work-group g updating copy g mod copies with global atomics
    /// (fewer collisions on one address); an extra pass folds them (decision 59).
    GlobalCopies,
}

impl SpanStore {
    /// Whether the store fixes the cross-group step (global atomics, or an extra pass).
    pub(crate) fn cross_is_fixed(self) -> bool {
        matches!(
            self,
            SpanStore::GlobalAtomic
                | SpanStore::GlobalPrivate
                | SpanStore::GlobalDigits
                | SpanStore::GlobalCopies
        )
    }
    /// Its name in plans: `local-shared`, `local-private`, `global-atomic`, `global-private` or
    /// `global-digits` or `global-copies`.
    pub fn name(self) -> &'static str {
        match self {
            SpanStore::LocalShared => "local-shared",
            SpanStore::LocalPrivate => "local-private",
            SpanStore::GlobalAtomic => "global-atomic",
            SpanStore::GlobalPrivate => "global-private",
            SpanStore::GlobalDigits => "global-digits",
            SpanStore::GlobalCopies => "global-copies",
        }
    }
    pub(crate) fn cl_id(self) -> &'static str {
        match self {
            SpanStore::LocalShared => "CLR_SS_LSHARED",
            SpanStore::LocalPrivate => "CLR_SS_LPRIVATE",
            SpanStore::GlobalAtomic => "CLR_SS_GATOMIC",
            SpanStore::GlobalPrivate => "CLR_SS_GPRIVATE",
            SpanStore::GlobalDigits => "CLR_SS_GDIGITS",
            SpanStore::GlobalCopies => "CLR_SS_GCOPIES",
        }
    }
}

/// The plan of a span reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SpanPlan {
    /// Number of elements.
    pub len: usize,
    /// Where the work-group copies live.
    pub store: SpanStore,
    /// Copies of the span in global scratch that the work-groups share out (`global-copies`
    /// and `global-digits`; 1 otherwise).
    pub copies: usize,
    /// Why this store.
    #[serde(skip)]
    pub reason: &'static str,
}

/// The plan for one variable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarPlan {
    /// The operator.
    pub op: Operator,
    /// The element type.
    pub ty: ElemType,
    /// The identity (for argmin/argmax the value part); `None` for identity-less reductions.
    pub identity: Option<Value>,
    /// The work-item accumulator layout.
    pub shape: AccShape,
    /// Bytes of one accumulator (partials are this size per work-group and span element).
    pub acc_bytes: usize,
    /// The span plan; `None` for a scalar reduction.
    pub span: Option<SpanPlan>,
    /// `initialize_to_identity`: the variable's initial value is not included.
    pub init_to_identity: bool,
    /// The work-group step.
    pub group: GroupAlgo,
    /// The cross-group step.
    pub cross: CrossAlgo,
    /// Why this work-group step.
    pub group_reason: String,
    /// Why this cross-group step.
    pub cross_reason: String,
    /// Local-memory elements of its group step.
    pub local_slots: usize,
    /// Whether this variable's result is run-to-run reproducible.
    pub deterministic: bool,
    /// The exact sum's plan (`AccShape::Exact`), else `None`.
    pub exact: Option<ExactPlan>,
    /// Raw mode (set by the multi-device layer, `src/multi/`, never by the planner): the last
    /// work-group writes the share's raw partial for the host to combine instead of combining
    /// it into the variable: an exact sum's normalized superaccumulator limbs (without the
    /// initial value), an identity-less accumulator's value and `has` flag. Not serialized.
    #[serde(skip)]
    pub raw: bool,
}

/// Everything decided about one launch. Printable with `Display` (`clreduce explain`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The device planned for ([`DeviceCaps::label`](crate::DeviceCaps::label)).
    pub device: String,
    /// The iteration space asked for (linear sizes).
    pub form: FormRequest,
    /// Its 1-, 2- or 3-D shape.
    pub shape: Shape,
    /// Work-group size.
    pub local: usize,
    /// Number of work-groups of the main kernel.
    pub groups: u64,
    /// Indices each work-item handles (at most).
    pub items_per_work_item: u64,
    /// How indices map to work-items.
    pub order: IndexOrder,
    /// Independent accumulators per work-item.
    pub unroll: usize,
    /// Consecutive indices a work-item takes per step in grid-stride order, their 16-bit
    /// elements loaded at once (1: one index per step); more than 1 only where the body reads
    /// a 16-bit buffer at `[i]` (design/decisions.md section 49).
    pub vec: usize,
    /// 64-bit indices.
    pub wide_index: bool,
    /// The exact sums' speculative loop: unrolled steps per check of its bound, run as one
    /// block with their loads together (1 outside the shared hot loop; design/exact.md "The
    /// f64 loop").
    pub spec_steps: usize,
    /// The exact sums' speculative loop: the other scalar variables take every unrolled step
    /// into their first accumulator (kernels CLR_SPEC_ONE; false outside the speculative loop;
    /// design/exact.md "Several variables").
    pub spec_one: bool,
    /// One plan per reduction variable, in the launch's order.
    pub vars: Vec<VarPlan>,
    /// Kernel launches: 1, or 2 with an extra pass.
    pub passes: usize,
    /// Whether every variable's result is run-to-run reproducible.
    pub deterministic: bool,
    /// OpenCL C 2.0 atomics for last-work-group detection (else OpenCL 1.2 atomics + fences).
    pub c11_atomics: bool,
    /// Without OpenCL C 2.0 atomics, and only where a structured partial (argmin/argmax,
    /// identity-less) finishes by last-work-group detection: the ticket and the last group's
    /// fence use NVIDIA inline PTX acquire/release (`DeviceCaps::acq_rel_ptx`), and structured
    /// partials are plain stores as on the C11 path (plain ones stay atomic).
    pub ptx_acq_rel: bool,
    /// The OpenCL C dialect the kernels are built for, e.g. "OpenCL C 3.0".
    pub cl_std: ClStdName,
    /// Local memory bytes per work-group.
    pub local_bytes: u64,
    /// Why the geometry is what it is.
    pub geometry_reason: String,
    /// A segmented or axis reduction's part of the plan (`Reduction::segments`,
    /// `Reduction::axis`): one result per segment; `None` for every other launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<super::segment_model::SegmentPlan>,
}

/// Serializable name of the OpenCL C dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ClStdName(pub &'static str);

impl Plan {
    /// Whether the work-groups take tickets to find the last one: some variable finishes by
    /// last-group detection, or is an exact sum whose last work-group rounds it.
    pub fn takes_tickets(&self) -> bool {
        self.vars.iter().any(|v| {
            v.cross == CrossAlgo::LastGroup || (v.exact.is_some() && v.cross == CrossAlgo::Atomic)
        })
    }
    /// Whether any variable uses the given cross step.
    pub fn uses(&self, c: CrossAlgo) -> bool {
        self.vars.iter().any(|v| v.cross == c)
    }
    /// A one-line summary: `tree+last-group` per variable, `segment PLAN` (`segment blocks`)
    /// for a segmented launch, whose work-group and cross steps are the segment plan's.
    pub fn summary(&self) -> String {
        if let Some(s) = &self.segment {
            return format!("segment {}", s.algo);
        }
        self.vars
            .iter()
            .map(|v| match v.span {
                Some(sp) => format!("{}+{} ({})", v.group, v.cross, sp.store.name()),
                None => format!("{}+{}", v.group, v.cross),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The accumulator layout of an operator.
pub(crate) fn shape_of(op: &Operator) -> AccShape {
    match op {
        Operator::ArgMin | Operator::ArgMax => AccShape::Pair,
        Operator::Custom(c) if c.identity_value().is_none() => AccShape::Flagged,
        _ => AccShape::Plain,
    }
}

/// Bytes of one accumulator: `{T v; uint has;}` and `{T v; ulong i;}` follow OpenCL C's struct
/// layout (aligned to their largest member); an exact sum's is its expansion.
pub(crate) fn acc_bytes(shape: AccShape, ty: ElemType, exact: Option<ExactPlan>) -> usize {
    match shape {
        AccShape::Plain => ty.size(),
        AccShape::Flagged => 2 * ty.size(),
        AccShape::Pair => 16,
        AccShape::Exact => exact.map_or(16, |e| e.acc_bytes()),
    }
}
