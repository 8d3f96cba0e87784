//! What the planner is asked: the iteration space ([`FormRequest`], [`Shape`]), the variables
//! ([`VarRequest`]), a forced strategy, the determinism and an expert geometry override
//! ([`Tuning`]).

use super::strategy::{Determinism, IndexOrder, Strategy};
use crate::error::{Error, Result};
use crate::ops::Operator;
use crate::types::ElemType;
use serde::{Deserialize, Serialize};

/// The iteration space as the planner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormRequest {
    /// `Range`: n work-items, geometry chosen by clreduce.
    Range {
        /// Number of work-items (the linear size; product of the extents in 2-D and 3-D).
        n: u64,
    },
    /// `NdRange`: the user's global and local size (1-D, linearized).
    NdRange {
        /// Global size: the number of work-items, linearized.
        global: u64,
        /// Work-group size in work-items, linearized.
        local: usize,
    },
}

/// The shape of the iteration space in 1, 2 or 3 dimensions (SYCL's `range<Dims>`): the planner
/// works on the linear sizes in [`FormRequest`]; the shape only changes how a linear id maps to
/// the body's `item` and, in the nd_range form, to `get_global_id(d)` and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Shape {
    /// 1, 2 or 3.
    pub rank: usize,
    /// Global extent per dimension (1 beyond the rank).
    pub global: [u64; 3],
    /// Work-group extent per dimension in the nd_range form (1 beyond the rank; all 1 in the
    /// range form).
    pub local: [usize; 3],
}

impl Shape {
    /// A 1-D shape of `n` (work-groups of `local`).
    pub fn linear(n: u64, local: usize) -> Shape {
        Shape {
            rank: 1,
            global: [n, 1, 1],
            local: [local, 1, 1],
        }
    }
}

impl Default for Shape {
    fn default() -> Shape {
        Shape::linear(0, 1)
    }
}

/// One reduction variable as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct VarRequest {
    /// The operator.
    pub op: Operator,
    /// The element type of the result buffer.
    pub ty: ElemType,
    /// `initialize_to_identity`: the variable's initial value is not included.
    pub init_to_identity: bool,
    /// A span reduction of this many independent elements (`reduction_span`); `None` for a
    /// scalar reduction.
    pub span: Option<usize>,
}

impl VarRequest {
    /// A scalar reduction with a built-in op or any other operator.
    pub fn new(op: impl Into<Operator>, ty: ElemType) -> VarRequest {
        VarRequest {
            op: op.into(),
            ty,
            init_to_identity: false,
            span: None,
        }
    }
}

/// What to plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Request {
    /// The iteration space.
    pub form: FormRequest,
    /// The 1-, 2- or 3-D shape; `rank == 1` for linear launches.
    pub shape: Shape,
    /// The reduction variables, in the launch's order (at least one).
    pub vars: Vec<VarRequest>,
    /// A forced strategy; [`Strategy::AUTO`] lets the planner choose.
    pub strategy: Strategy,
    /// What the floating-point results must be.
    pub determinism: Determinism,
    /// Expert override of the range form's geometry (`CLREDUCE_TUNE`); `None` is automatic.
    pub tuning: Option<Tuning>,
    /// Whether the body only reads memory (no `arg_mut` buffer): running a chunk of it twice
    /// then changes nothing but the reducers, which an exact sum's speculative loop relies on.
    pub pure_body: bool,
    /// Whether the body reads a 16-bit storage buffer (f16, bf16) at exactly `[i]`, and every
    /// such buffer holds at least the range's n elements: the range form may then give each
    /// work-item several consecutive indices per step and load their elements at once
    /// ([`Plan::vec`](super::Plan::vec), design/decisions.md section 49).
    pub narrow_reads: bool,
}

/// The speculative loop's hot form (design/exact.md "The hot loop"): an exact sum's range checks
/// once per chunk instead of per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HotLoop {
    /// The per-element checks of the speculative loop.
    Off,
    /// One block state per work-item: f32 data summed in blocks of an unrolled step (or
    /// `CLR_XBLK` steps), every block into accumulator 0's expansion (GPUs).
    Shared,
    /// One block state per accumulator: accumulator u sums its own elements of `CLR_XBLK`
    /// steps (default 8) in a double, into its own expansion; every step is the same operation
    /// on each accumulator (SIMD across the accumulators on CPUs).
    Lanes,
    /// The vector form (CPUs, decision 69): each step's `CLR_UNROLL` elements staged into one
    /// OpenCL vector, its range checks and its f32 block sums (f64: TwoSums) run on every lane
    /// at once in vector types; the lanes merged into accumulator 0 once per chunk, by TwoSums
    /// that flag any residue.
    Vector,
}

impl HotLoop {
    /// Every form, in `hot=N` order (0 to 3).
    pub const ALL: [HotLoop; 4] = [
        HotLoop::Off,
        HotLoop::Shared,
        HotLoop::Lanes,
        HotLoop::Vector,
    ];
    /// The form's name in tables and reports (`off`, `shared`, `lanes`, `vector`).
    pub fn name(self) -> &'static str {
        match self {
            HotLoop::Off => "off",
            HotLoop::Shared => "shared",
            HotLoop::Lanes => "lanes",
            HotLoop::Vector => "vector",
        }
    }
}

/// How an exact sum's fixed tail runs (design/exact.md "The tail"): where the last work-group
/// (or the extra pass) sums the published superaccumulators and rounds them, and whether each
/// work-group normalizes its own before publishing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExactTail {
    /// Work-item 0 sums the published limbs into private arrays and rounds them (a stack frame,
    /// and on the H200 128 registers for an f64 sum's `clr_main`, session 11).
    Private,
    /// One limb per work-item summed into local memory, rounded there in place by work-item 0
    /// (no private arrays); warp 0 merges the warps' expansions in as many shuffle levels as
    /// there are warps.
    Local,
    /// [`ExactTail::Local`], and each work-group publishes its superaccumulator without
    /// normalizing it: planned only where every deposit of the launch together stays within the
    /// 2^30 contributions a superaccumulator takes between normalizations.
    Lean,
    /// [`ExactTail::Lean`], and the lazy finish (decision 74, design/exact.md "The lazy
    /// finish"): each work-group publishes its merged expansion and only the nonzero limbs of its
    /// superaccumulator (raising a flag); the last work-group merges the expansions exactly and,
    /// where no limb was touched, rounds the merged expansion directly. Two-double expansions
    /// with the atomic cross step only, within the expansion's cap for the whole launch. Only
    /// when asked for (`tail=3`): on the H200 it slowed f64's loop (decision 74).
    Lazy,
}

/// Geometry override for the range form, for tuning experiments:
/// `CLREDUCE_TUNE=local=512,groups_per_cu=4,unroll=16,vec=4` (any subset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Tuning {
    /// Work-group size (`local=N`); `None` is automatic.
    pub local: Option<usize>,
    /// The most work-groups per compute unit (`groups_per_cu=N`); `None` is automatic.
    pub groups_per_cu: Option<u64>,
    /// Independent accumulators per work-item, 1, 2, 4, 8 or 16 (`unroll=N`); `None` is
    /// automatic.
    pub unroll: Option<usize>,
    /// Index order (`order=1` grid-stride, `2` blocked, `3` contiguous); `None` is automatic.
    pub order: Option<IndexOrder>,
    /// Exact sums: the speculative loop on (`spec=1`) or off (`spec=0`); `None` is automatic
    /// (on for GPUs where it applies).
    pub spec: Option<bool>,
    /// Exact sums in the speculative loop: its hot form (design/exact.md "The hot loop"), `hot=1`
    /// [`HotLoop::Shared`](HotLoop::Shared), `hot=2` [`HotLoop::Lanes`](HotLoop::Lanes), `hot=3`
    /// [`HotLoop::Vector`](HotLoop::Vector), or the per-element checks
    /// (`hot=0`); `None` is automatic.
    pub hot: Option<HotLoop>,
    /// Exact sums: the fixed tail's form, `tail=0` [`ExactTail::Private`](ExactTail::Private),
    /// `tail=1` [`ExactTail::Local`](ExactTail::Local), `tail=2` [`ExactTail::Lean`](ExactTail::Lean)
    /// (where its bound holds, else local), `tail=3` [`ExactTail::Lazy`](ExactTail::Lazy) (where
    /// it applies, else as `tail=2`); `None` is automatic.
    pub tail: Option<ExactTail>,
    /// Exact sums in the shared hot loop: unrolled steps per check of the loop's bound
    /// (`steps=1|2|4`, design/exact.md "The f64 loop"): the steps of one check run as one
    /// block, their loads together; `None` is automatic (2 for f64 data, 1 for f32).
    pub steps: Option<usize>,
    /// Exact sums in the speculative loop: the launch's other scalar variables (min, max,
    /// counts) take every unrolled step into their first accumulator (`one=1`) or keep an
    /// accumulator per unrolled step (`one=0`); `None` is automatic (design/exact.md "Several
    /// variables").
    pub others_one: Option<bool>,
    /// Consecutive indices per work-item and step where the body reads a 16-bit buffer at
    /// `[i]` (`vec=1|2|4|8`, [`Request::narrow_reads`]); in a segmented launch, the elements
    /// per load of the `item` (uniform rows) and `runs` plans where the body reads any
    /// read-only buffer at `[i]` (`SegmentTune::vec`, decision 62); ignored by launches that
    /// cannot use it; `None` is automatic.
    pub vec: Option<usize>,
}

/// The largest work-group size a geometry override may name (no device has larger ones; the
/// device's own limit is checked when planning).
pub const MAX_TUNE_LOCAL: usize = 1 << 16;
/// The most work-groups per compute unit a geometry override may name.
pub const MAX_TUNE_GROUPS_PER_CU: u64 = 1 << 16;
/// The accumulators per work-item the kernels are built for.
pub const TUNE_UNROLLS: [usize; 5] = [1, 2, 4, 8, 16];
/// The unrolled steps per bound check an exact sum's hot loop is built for.
pub const TUNE_STEPS: [usize; 3] = [1, 2, 4];

impl Tuning {
    /// Parses `key=value` pairs separated by commas (keys above; empty is no override). A
    /// key it does not know, or a value out of range ([`Tuning::problem`]), is
    /// [`Error::UnknownName`]: refused, never clamped.
    pub fn parse(s: &str) -> Result<Tuning> {
        let mut t = Tuning::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = |out_of_range: bool| {
                Error::UnknownName {
                kind: if out_of_range {
                    "tuning value"
                } else {
                    "tuning key"
                },
                name: part.to_string(),
                known: vec![
                    "local=1..65536",
                    "groups_per_cu=1..65536",
                    "unroll=1|2|4|8|16",
                    "order=1 (grid-stride)|2 (blocked)|3 (contiguous)",
                    "spec=0|1 (exact sums: the speculative loop)",
                    "hot=0|1|2|3 (exact sums: the hot form, off, shared, lanes or vector)",
                    "tail=0|1|2|3 (exact sums: the tail, private, local, lean or lazy)",
                    "steps=1|2|4 (exact sums: the hot loop's unrolled steps per bound check)",
                    "one=0|1 (exact sums: the speculative loop's other variables in one accumulator)",
                    "vec=1|2|4|8 (16-bit reads at [i]: elements per load)",
                ],
            }
            };
            let (k, v) = part.split_once('=').ok_or_else(|| bad(false))?;
            let v: u64 = v.trim().parse().map_err(|_| bad(false))?;
            let mut one = Tuning::default();
            match k.trim() {
                "local" => one.local = Some(usize::try_from(v).unwrap_or(usize::MAX)),
                "groups_per_cu" => one.groups_per_cu = Some(v),
                "order" => {
                    one.order = Some(match v {
                        1 => IndexOrder::GridStride,
                        2 => IndexOrder::Blocked,
                        3 => IndexOrder::Contiguous,
                        _ => return Err(bad(false)),
                    })
                }
                "unroll" => one.unroll = Some(usize::try_from(v).unwrap_or(usize::MAX)),
                "spec" if v <= 1 => one.spec = Some(v == 1),
                "hot" if v <= 3 => {
                    one.hot = Some(match v {
                        0 => HotLoop::Off,
                        1 => HotLoop::Shared,
                        2 => HotLoop::Lanes,
                        _ => HotLoop::Vector,
                    })
                }
                "tail" if v <= 3 => {
                    one.tail = Some(match v {
                        0 => ExactTail::Private,
                        1 => ExactTail::Local,
                        2 => ExactTail::Lean,
                        _ => ExactTail::Lazy,
                    })
                }
                "vec" => one.vec = Some(usize::try_from(v).unwrap_or(usize::MAX)),
                "steps" => one.steps = Some(usize::try_from(v).unwrap_or(usize::MAX)),
                "one" if v <= 1 => one.others_one = Some(v == 1),
                _ => return Err(bad(false)),
            }
            if one.problem().is_some() {
                return Err(bad(true));
            }
            t = Tuning {
                local: one.local.or(t.local),
                groups_per_cu: one.groups_per_cu.or(t.groups_per_cu),
                unroll: one.unroll.or(t.unroll),
                order: one.order.or(t.order),
                spec: one.spec.or(t.spec),
                hot: one.hot.or(t.hot),
                tail: one.tail.or(t.tail),
                steps: one.steps.or(t.steps),
                others_one: one.others_one.or(t.others_one),
                vec: one.vec.or(t.vec),
            };
        }
        Ok(t)
    }
    /// Why the override cannot be planned on any device, or `None` when its values are in
    /// range: a work-group size of 1..=[`MAX_TUNE_LOCAL`], 1..=[`MAX_TUNE_GROUPS_PER_CU`]
    /// work-groups per compute unit, an unroll of [`TUNE_UNROLLS`], an order of the range form
    /// (not nd_range's one-per-item). The one validator of `CLREDUCE_TUNE` and of the tuning
    /// cache's geometries (`tune_cache`); the device's own limits are checked when planning.
    pub fn problem(&self) -> Option<String> {
        if let Some(l) = self.local.filter(|l| !(1..=MAX_TUNE_LOCAL).contains(l)) {
            return Some(format!("local {l} is not in 1..={MAX_TUNE_LOCAL}"));
        }
        if let Some(g) = self
            .groups_per_cu
            .filter(|g| !(1..=MAX_TUNE_GROUPS_PER_CU).contains(g))
        {
            return Some(format!(
                "groups_per_cu {g} is not in 1..={MAX_TUNE_GROUPS_PER_CU}"
            ));
        }
        if let Some(u) = self.unroll.filter(|u| !TUNE_UNROLLS.contains(u)) {
            return Some(format!("unroll {u} is not one of 1, 2, 4, 8, 16"));
        }
        if let Some(w) = self.vec.filter(|w| !crate::caps::NARROW_VECS.contains(w)) {
            return Some(format!("vec {w} is not one of 1, 2, 4, 8"));
        }
        if let Some(k) = self.steps.filter(|k| !TUNE_STEPS.contains(k)) {
            return Some(format!("steps {k} is not one of 1, 2, 4"));
        }
        if self.order == Some(IndexOrder::OnePerItem) {
            return Some("order one-per-item is nd_range's, not a range geometry".into());
        }
        None
    }
    /// The override in `CLREDUCE_TUNE`; `None` when it is unset or empty.
    pub fn from_env() -> Result<Option<Tuning>> {
        match std::env::var("CLREDUCE_TUNE") {
            Ok(s) if !s.trim().is_empty() => Ok(Some(Tuning::parse(&s)?)),
            _ => Ok(None),
        }
    }
}
