//! Planning: a pure function from (device capabilities, request) to a [`Plan`]. No device is
//! touched here, so every choice is unit-tested with capability fixtures.
//!
//! The choices follow seed 003 (DPC++'s reduction notes) and improve on it:
//! - work-group step per variable (TODO #3): work-group collectives where the device has them
//!   for the op and type, else sub-group reduce, else local atomics where fast local atomics
//!   exist (seed variant B, TODO #2) and the result stays deterministic, else the local tree;
//! - cross-group step per variable: global atomics where fast and deterministic (integers,
//!   and float min/max), else last-work-group detection (one launch), else one extra pass
//!   (TODO #1: a single pass, never a chain);
//! - range form: the number and size of work-groups from the device, many indices per
//!   work-item, grid-stride on GPUs and one contiguous chunk per work-group on CPUs (TODO #4).

use crate::caps::{ClStd, DeviceCaps, DeviceKind, Space};
use crate::error::{Error, Result};
use crate::ops::{Op, Operator};
use crate::types::{ElemType, Value};
use serde::Serialize;
use std::fmt;

/// The work-group step: how the values of one work-group's work-items are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupAlgo {
    /// Local-memory tree with sequential addressing.
    Tree,
    /// `work_group_reduce_*` (work-group collective functions).
    WgReduce,
    /// `sub_group_reduce_*` plus local memory across sub-groups.
    SgReduce,
    /// Local atomics into one local scalar.
    LocalAtomic,
}

/// The cross-group step: how the work-groups' values reach the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrossAlgo {
    /// Global atomic combine into the result.
    Atomic,
    /// Partials plus last-work-group detection: one launch.
    LastGroup,
    /// Partials plus one extra pass by a single work-group.
    ExtraPass,
}

impl GroupAlgo {
    pub const ALL: [GroupAlgo; 4] = [
        GroupAlgo::Tree,
        GroupAlgo::WgReduce,
        GroupAlgo::SgReduce,
        GroupAlgo::LocalAtomic,
    ];
    pub fn name(self) -> &'static str {
        match self {
            GroupAlgo::Tree => "tree",
            GroupAlgo::WgReduce => "wg-reduce",
            GroupAlgo::SgReduce => "sg-reduce",
            GroupAlgo::LocalAtomic => "local-atomic",
        }
    }
    pub(crate) fn cl_id(self) -> &'static str {
        match self {
            GroupAlgo::Tree => "CLR_GS_TREE",
            GroupAlgo::WgReduce => "CLR_GS_WG",
            GroupAlgo::SgReduce => "CLR_GS_SG",
            GroupAlgo::LocalAtomic => "CLR_GS_LATOMIC",
        }
    }
}

impl CrossAlgo {
    pub const ALL: [CrossAlgo; 3] = [
        CrossAlgo::Atomic,
        CrossAlgo::LastGroup,
        CrossAlgo::ExtraPass,
    ];
    pub fn name(self) -> &'static str {
        match self {
            CrossAlgo::Atomic => "atomic",
            CrossAlgo::LastGroup => "last-group",
            CrossAlgo::ExtraPass => "extra-pass",
        }
    }
    pub(crate) fn cl_id(self) -> &'static str {
        match self {
            CrossAlgo::Atomic => "CLR_XS_ATOMIC",
            CrossAlgo::LastGroup => "CLR_XS_LAST",
            CrossAlgo::ExtraPass => "CLR_XS_PASS",
        }
    }
}

impl fmt::Display for GroupAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
impl fmt::Display for CrossAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A forced strategy; `None` parts are chosen automatically.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Strategy {
    pub group: Option<GroupAlgo>,
    pub cross: Option<CrossAlgo>,
}

impl Strategy {
    pub const AUTO: Strategy = Strategy {
        group: None,
        cross: None,
    };

    pub fn new(group: GroupAlgo, cross: CrossAlgo) -> Strategy {
        Strategy {
            group: Some(group),
            cross: Some(cross),
        }
    }

    /// Parses `auto`, `GROUP+CROSS`, `GROUP` or `+CROSS` (e.g. `tree+last-group`, `sg-reduce`,
    /// `+atomic`; `last` and `pass` abbreviate the cross steps).
    pub fn parse(s: &str) -> Result<Strategy> {
        let s = s.trim();
        let err = || Error::UnknownStrategy {
            name: s.to_string(),
            groups: GroupAlgo::ALL.iter().map(|g| g.name()).collect(),
            crosses: CrossAlgo::ALL.iter().map(|c| c.name()).collect(),
        };
        if s.is_empty() || s == "auto" {
            return Ok(Strategy::AUTO);
        }
        let (g, c) = match s.split_once('+') {
            Some((g, c)) => (g.trim(), c.trim()),
            None => (s, ""),
        };
        let group = match g {
            "" | "auto" => None,
            g => Some(
                GroupAlgo::ALL
                    .into_iter()
                    .find(|x| x.name() == g)
                    .ok_or_else(err)?,
            ),
        };
        let cross = match c {
            "" | "auto" => None,
            "last" => Some(CrossAlgo::LastGroup),
            "pass" => Some(CrossAlgo::ExtraPass),
            c => Some(
                CrossAlgo::ALL
                    .into_iter()
                    .find(|x| x.name() == c)
                    .ok_or_else(err)?,
            ),
        };
        Ok(Strategy { group, cross })
    }

    /// `CLREDUCE_STRATEGY`, or auto.
    pub fn from_env() -> Result<Strategy> {
        match std::env::var("CLREDUCE_STRATEGY") {
            Ok(s) => Strategy::parse(&s),
            Err(_) => Ok(Strategy::AUTO),
        }
    }

    /// Every forced combination, for test matrices and benches.
    pub fn all_forced() -> Vec<Strategy> {
        GroupAlgo::ALL
            .iter()
            .flat_map(|&g| CrossAlgo::ALL.iter().map(move |&c| Strategy::new(g, c)))
            .collect()
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.group, self.cross) {
            (None, None) => f.write_str("auto"),
            (g, c) => write!(
                f,
                "{}+{}",
                g.map(|g| g.name()).unwrap_or("auto"),
                c.map(|c| c.name()).unwrap_or("auto")
            ),
        }
    }
}

/// Whether floating-point results must be run-to-run reproducible (the default) or may use
/// float atomics whose order varies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Determinism {
    #[default]
    Deterministic,
    Relaxed,
}

/// The iteration space as the planner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormRequest {
    /// `Range`: n work-items, geometry chosen by clreduce.
    Range { n: u64 },
    /// `NdRange`: the user's global and local size (1-D, linearized).
    NdRange { global: u64, local: usize },
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
    pub op: Operator,
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
    pub form: FormRequest,
    /// The 1-, 2- or 3-D shape; `rank == 1` for linear launches.
    pub shape: Shape,
    pub vars: Vec<VarRequest>,
    pub strategy: Strategy,
    pub determinism: Determinism,
    /// Expert override of the range form's geometry (`CLREDUCE_TUNE`); `None` is automatic.
    pub tuning: Option<Tuning>,
}

/// Geometry override for the range form, for tuning experiments:
/// `CLREDUCE_TUNE=local=512,groups_per_cu=4,unroll=16` (any subset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Tuning {
    pub local: Option<usize>,
    pub groups_per_cu: Option<u64>,
    pub unroll: Option<usize>,
    pub order: Option<IndexOrder>,
}

impl Tuning {
    pub fn parse(s: &str) -> Result<Tuning> {
        let mut t = Tuning::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || Error::UnknownName {
                kind: "tuning key",
                name: part.to_string(),
                known: vec![
                    "local=N",
                    "groups_per_cu=N",
                    "unroll=1|2|4|8|16",
                    "order=1 (grid-stride)|2 (blocked)|3 (contiguous)",
                ],
            };
            let (k, v) = part.split_once('=').ok_or_else(bad)?;
            let v: u64 = v.trim().parse().map_err(|_| bad())?;
            match k.trim() {
                "local" => t.local = Some(v as usize),
                "groups_per_cu" => t.groups_per_cu = Some(v),
                "order" => {
                    t.order = Some(match v {
                        1 => IndexOrder::GridStride,
                        2 => IndexOrder::Blocked,
                        3 => IndexOrder::Contiguous,
                        _ => return Err(bad()),
                    })
                }
                "unroll" if [1, 2, 4, 8, 16].contains(&v) => t.unroll = Some(v as usize),
                _ => return Err(bad()),
            }
        }
        Ok(t)
    }
    pub fn from_env() -> Result<Option<Tuning>> {
        match std::env::var("CLREDUCE_TUNE") {
            Ok(s) if !s.trim().is_empty() => Ok(Some(Tuning::parse(&s)?)),
            _ => Ok(None),
        }
    }
}

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
}

impl SpanStore {
    pub fn name(self) -> &'static str {
        match self {
            SpanStore::LocalShared => "local-shared",
            SpanStore::LocalPrivate => "local-private",
            SpanStore::GlobalAtomic => "global-atomic",
            SpanStore::GlobalPrivate => "global-private",
        }
    }
    pub(crate) fn cl_id(self) -> &'static str {
        match self {
            SpanStore::LocalShared => "CLR_SS_LSHARED",
            SpanStore::LocalPrivate => "CLR_SS_LPRIVATE",
            SpanStore::GlobalAtomic => "CLR_SS_GATOMIC",
            SpanStore::GlobalPrivate => "CLR_SS_GPRIVATE",
        }
    }
}

/// The plan of a span reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SpanPlan {
    /// Number of elements.
    pub len: usize,
    pub store: SpanStore,
    /// Why this store.
    #[serde(skip)]
    pub reason: &'static str,
}

/// The plan for one variable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarPlan {
    pub op: Operator,
    pub ty: ElemType,
    /// The identity (for argmin/argmax the value part); `None` for identity-less reductions.
    pub identity: Option<Value>,
    pub shape: AccShape,
    /// Bytes of one accumulator (partials are this size per work-group and span element).
    pub acc_bytes: usize,
    pub span: Option<SpanPlan>,
    pub init_to_identity: bool,
    pub group: GroupAlgo,
    pub cross: CrossAlgo,
    /// Why this work-group step.
    pub group_reason: String,
    /// Why this cross-group step.
    pub cross_reason: String,
    /// Local-memory elements of its group step.
    pub local_slots: usize,
    /// Whether this variable's result is run-to-run reproducible.
    pub deterministic: bool,
}

/// How the range form maps indices to work-items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexOrder {
    /// nd_range: one index per work-item, the user's geometry.
    OnePerItem,
    /// Grid-stride (GPUs): coalesced, many loads in flight.
    GridStride,
    /// One contiguous chunk per work-group, work-items interleaved inside it.
    Blocked,
    /// One contiguous chunk per work-item (CPUs, seed 003 TODO #4): each work-item streams its
    /// own range, which is what a CPU thread running the work-items one after another wants.
    Contiguous,
}

/// Everything decided about one launch. Printable with `Display` (`clreduce explain`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub device: String,
    pub form: FormRequest,
    pub shape: Shape,
    /// Work-group size.
    pub local: usize,
    /// Number of work-groups of the main kernel.
    pub groups: u64,
    /// Indices each work-item handles (at most).
    pub items_per_work_item: u64,
    pub order: IndexOrder,
    /// Independent accumulators per work-item.
    pub unroll: usize,
    /// 64-bit indices.
    pub wide_index: bool,
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
    pub cl_std: ClStdName,
    /// Local memory bytes per work-group.
    pub local_bytes: u64,
    /// Why the geometry is what it is.
    pub geometry_reason: String,
}

/// Serializable name of the OpenCL C dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ClStdName(pub &'static str);

impl Plan {
    /// Whether any variable uses the given cross step.
    pub fn uses(&self, c: CrossAlgo) -> bool {
        self.vars.iter().any(|v| v.cross == c)
    }
    /// A one-line summary (`tree+last-group`, per variable).
    pub fn summary(&self) -> String {
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

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let form = match self.form {
            FormRequest::Range { n } => format!("range n={n}"),
            FormRequest::NdRange { global, local } => {
                format!("nd_range global={global} local={local}")
            }
        };
        let form = if self.shape.rank > 1 {
            let r = self.shape.rank;
            format!(
                "{form} (shape {:?}{})",
                &self.shape.global[..r],
                if matches!(self.form, FormRequest::NdRange { .. }) {
                    format!(" local {:?}", &self.shape.local[..r])
                } else {
                    String::new()
                }
            )
        } else {
            form
        };
        writeln!(f, "plan on {}: {form}", self.device)?;
        writeln!(
            f,
            "  geometry: {} work-groups x {} work-items, <= {} indices each, order {:?}, {} accumulators, {}-bit indices",
            self.groups,
            self.local,
            self.items_per_work_item,
            self.order,
            self.unroll,
            if self.wide_index { 64 } else { 32 }
        )?;
        writeln!(f, "    because {}", self.geometry_reason)?;
        for (k, v) in self.vars.iter().enumerate() {
            writeln!(
                f,
                "  var {k}: {} {} -> {} + {}{}",
                v.op,
                v.ty,
                v.group,
                v.cross,
                if v.init_to_identity {
                    " (initialize_to_identity)"
                } else {
                    ""
                }
            )?;
            if let Some(sp) = v.span {
                writeln!(f, "    span of {} elements, {}", sp.len, sp.store.name())?;
            }
            writeln!(f, "    work-group step: {}", v.group_reason)?;
            writeln!(f, "    cross-group step: {}", v.cross_reason)?;
        }
        writeln!(
            f,
            "  {} launch(es), {}, {} bytes of local memory per work-group, {} with {} last-group atomics",
            self.passes,
            if self.deterministic { "deterministic" } else { "not run-to-run deterministic (relaxed)" },
            self.local_bytes,
            self.cl_std.0,
            if self.c11_atomics {
                "OpenCL C 2.0"
            } else if self.ptx_acq_rel {
                "NVIDIA PTX acquire/release"
            } else {
                "OpenCL 1.2"
            }
        )
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
/// layout (aligned to their largest member).
pub(crate) fn acc_bytes(shape: AccShape, ty: ElemType) -> usize {
    match shape {
        AccShape::Plain => ty.size(),
        AccShape::Flagged => 2 * ty.size(),
        AccShape::Pair => 16,
    }
}

/// Whether the device's sub-group functions (or NVIDIA's PTX shuffles) can reduce this operator.
fn sg_capable(caps: &DeviceCaps, v: &VarRequest) -> bool {
    match v.op.builtin() {
        Some(op) => caps.sg_reduce(op, v.ty),
        // Shuffles move bits, so any combiner works; sub_group_reduce_* only knows built-ins.
        None => caps.sg_via_ptx() && v.ty != ElemType::F16,
    }
}

fn wg_capable(caps: &DeviceCaps, v: &VarRequest) -> bool {
    v.op.builtin().is_some_and(|op| caps.wg_reduce(op, v.ty))
}

fn atomic_capable(caps: &DeviceCaps, v: &VarRequest, space: Space) -> bool {
    v.op.atomic_op()
        .is_some_and(|op| caps.fast_atomic(op, v.ty, space))
}

fn group_supported(
    caps: &DeviceCaps,
    g: GroupAlgo,
    v: &VarRequest,
) -> std::result::Result<(), String> {
    match g {
        GroupAlgo::Tree => Ok(()),
        GroupAlgo::WgReduce => {
            if !caps.work_group_collectives {
                Err(
                    "work-group collective functions (__opencl_c_work_group_collective_functions)"
                        .into(),
                )
            } else if !wg_capable(caps, v) {
                Err(format!(
                    "a work-group collective for {} (only add, min, max, all, any exist)",
                    v.op
                ))
            } else {
                Ok(())
            }
        }
        GroupAlgo::SgReduce => {
            if caps.sub_groups.is_none() && !caps.warp_shuffle_ptx {
                Err("sub-groups (cl_khr_subgroups / __opencl_c_subgroups)".into())
            } else if !sg_capable(caps, v) {
                Err(format!(
                    "a sub-group reduce for {} on {} (cl_khr_subgroup_non_uniform_arithmetic; custom operators and argmin/argmax need NVIDIA's PTX shuffles)",
                    v.op, v.ty
                ))
            } else {
                Ok(())
            }
        }
        GroupAlgo::LocalAtomic => {
            if v.op.atomic_op().is_none() {
                Err(format!(
                    "an atomic for {} (custom operators use atomics only when declared with CustomOp::atomic)",
                    v.op
                ))
            } else if !atomic_capable(caps, v, Space::Local) {
                Err(format!("fast local atomics for {} on {}", v.op, v.ty))
            } else {
                Ok(())
            }
        }
    }
}

fn cross_supported(
    caps: &DeviceCaps,
    c: CrossAlgo,
    v: &VarRequest,
) -> std::result::Result<(), String> {
    match c {
        CrossAlgo::Atomic => {
            if v.op.atomic_op().is_none() {
                Err(format!(
                    "an atomic for {} (custom operators use atomics only when declared with CustomOp::atomic)",
                    v.op
                ))
            } else if !atomic_capable(caps, v, Space::Global) {
                Err(format!("fast global atomics for {} on {}", v.op, v.ty))
            } else if matches!(v.op.atomic_op(), Some(Op::LogicalAnd | Op::LogicalOr))
                && !v.init_to_identity
            {
                Err(format!(
                    "an atomic for {} that normalises the variable's initial value (use initialize_to_identity)",
                    v.op
                ))
            } else {
                Ok(())
            }
        }
        CrossAlgo::LastGroup => {
            if !caps.atomics.int32_global_base {
                Err("32-bit global atomics for the work-group counter (cl_khr_global_int32_base_atomics)".into())
            } else if shape_of(&v.op) != AccShape::Plain && !caps.acq_rel() {
                Err(format!(
                    "acquire/release atomics (OpenCL C 2.0, or NVIDIA inline PTX), to publish {} partials (structures) to the last work-group",
                    v.op
                ))
            } else {
                Ok(())
            }
        }
        CrossAlgo::ExtraPass => Ok(()),
    }
}

fn var_deterministic(g: GroupAlgo, c: CrossAlgo, v: &VarRequest) -> bool {
    !(v.op.order_sensitive(v.ty) && (g == GroupAlgo::LocalAtomic || c == CrossAlgo::Atomic))
}

/// Forcing an order-dependent float atomic in deterministic mode is refused, not run silently.
fn nondeterministic(caps: &DeviceCaps, what: &str) -> Error {
    Error::Unsupported {
        what: what.to_string(),
        missing: "run-to-run determinism: float atomics combine in a varying order; ask for relaxed determinism (Options::relaxed, --relaxed) to force it".into(),
        device: caps.label(),
    }
}

fn choose_group(
    caps: &DeviceCaps,
    v: &VarRequest,
    det: Determinism,
    forced: Option<GroupAlgo>,
) -> Result<(GroupAlgo, String)> {
    if let Some(g) = forced {
        group_supported(caps, g, v).map_err(|missing| Error::Unsupported {
            what: format!("work-group step {g} for {} on {}", v.op, v.ty),
            missing: format!("the device lacks {missing}"),
            device: caps.label(),
        })?;
        if g == GroupAlgo::LocalAtomic
            && v.op.order_sensitive(v.ty)
            && det == Determinism::Deterministic
        {
            return Err(nondeterministic(
                caps,
                &format!("work-group step {g} for {} on {}", v.op, v.ty),
            ));
        }
        return Ok((g, "forced".into()));
    }
    if wg_capable(caps, v) {
        return Ok((
            GroupAlgo::WgReduce,
            format!(
                "the device has work-group collectives for {} on {} (seed variants A/C)",
                v.op, v.ty
            ),
        ));
    }
    if sg_capable(caps, v) {
        return Ok((
            GroupAlgo::SgReduce,
            format!(
                "no work-group collective for {}; {} reduce in registers",
                v.op,
                if caps.sg_via_ptx() {
                    "warps (PTX shfl.sync, NVIDIA)"
                } else {
                    "sub-groups"
                }
            ),
        ));
    }
    let relaxed_ok = det == Determinism::Relaxed || !v.op.order_sensitive(v.ty);
    if atomic_capable(caps, v, Space::Local) && relaxed_ok {
        return Ok((
            GroupAlgo::LocalAtomic,
            format!(
                "no group reduce; fast local atomics for {} on {} (seed variant B, TODO #2)",
                v.op, v.ty
            ),
        ));
    }
    let why = if atomic_capable(caps, v, Space::Local) {
        "local float atomics would make the result order-dependent (deterministic mode)"
    } else if v.op.builtin().is_none() {
        "a custom or (value, index) combiner: no group function or atomic computes it"
    } else {
        "no group reduce and no fast local atomic for this op and type"
    };
    Ok((
        GroupAlgo::Tree,
        format!("{why}: local-memory tree (seed variant D)"),
    ))
}

/// Above this many indices, structured partials (argmin/argmax, identity-less) on NVIDIA's PTX
/// acquire/release path finish with an extra pass instead of last-group detection. Measured on
/// the H200 (f32 argmin, device time, design/bench/): last-group 17.7 us vs extra pass 22.6 us
/// at 2^22, 34.1 vs 31.4 at 2^24, 94.4 vs 77.4 at 2^26, 344 vs 267 at 2^28. The kernel with the
/// last-group tail uses 40 registers per work-item instead of 32 (`-cl-nv-verbose`), so 6
/// instead of 8 work-groups of 256 fit an SM; `-cl-nv-maxrregcount=32` did not lower it.
const PTX_STRUCT_LAST_MAX: u64 = 1 << 23;

fn choose_cross(
    caps: &DeviceCaps,
    v: &VarRequest,
    det: Determinism,
    forced: Option<CrossAlgo>,
    groups: u64,
    total: u64,
) -> Result<(CrossAlgo, String)> {
    if let Some(c) = forced {
        cross_supported(caps, c, v).map_err(|missing| Error::Unsupported {
            what: format!("cross-group step {c} for {} on {}", v.op, v.ty),
            missing: format!("the device lacks {missing}"),
            device: caps.label(),
        })?;
        if c == CrossAlgo::Atomic && v.op.order_sensitive(v.ty) && det == Determinism::Deterministic
        {
            return Err(nondeterministic(
                caps,
                &format!("cross-group step {c} for {} on {}", v.op, v.ty),
            ));
        }
        return Ok((c, "forced".into()));
    }
    let relaxed_ok = det == Determinism::Relaxed || !v.op.order_sensitive(v.ty);
    if groups > 1 && relaxed_ok && cross_supported(caps, CrossAlgo::Atomic, v).is_ok() {
        return Ok((
            CrossAlgo::Atomic,
            format!(
                "fast global atomics for {} on {}{}",
                v.op,
                v.ty,
                if v.op.order_sensitive(v.ty) {
                    " (relaxed mode: the order of float additions varies)"
                } else {
                    ", exact in any order"
                }
            ),
        ));
    }
    if groups > 1
        && total > PTX_STRUCT_LAST_MAX
        && shape_of(&v.op) != AccShape::Plain
        && caps.acq_rel_ptx_path()
    {
        return Ok((
            CrossAlgo::ExtraPass,
            format!(
                "{} partials are structures: on NVIDIA's PTX path their last-group tail costs registers (40 vs 32 per work-item on the H200) and with them occupancy, which outweighs the extra launch above {} elements: partials + one extra pass by one work-group",
                v.op, PTX_STRUCT_LAST_MAX
            ),
        ));
    }
    if cross_supported(caps, CrossAlgo::LastGroup, v).is_ok() {
        let why = if groups == 1 {
            "a single work-group: its ticket is the last, so it finishes in the same launch"
                .to_string()
        } else if atomic_capable(caps, v, Space::Global) && !relaxed_ok {
            "float atomics would be order-dependent (deterministic mode): partials + last-work-group detection, one launch".to_string()
        } else {
            format!("no usable global atomic for {} on {}: partials + last-work-group detection, one launch", v.op, v.ty)
        };
        return Ok((CrossAlgo::LastGroup, why));
    }
    Ok((
        CrossAlgo::ExtraPass,
        if caps.atomics.int32_global_base {
            "no OpenCL C 2.0 atomics to publish structured partials: partials + one extra pass by one work-group"
        } else {
            "no global atomics at all: partials + one extra pass by one work-group"
        }
        .into(),
    ))
}

fn pow2_floor(x: usize) -> usize {
    if x == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - x.leading_zeros())
    }
}

/// What one variable needs in local memory.
#[derive(Debug, Clone, Copy)]
struct Need {
    group: GroupAlgo,
    acc: usize,
    span: Option<(usize, SpanStore)>,
}

fn local_slots(caps: &DeviceCaps, n: &Need, local: usize) -> usize {
    match n.span {
        Some((len, SpanStore::LocalShared)) => len,
        Some((len, SpanStore::LocalPrivate)) => len * local,
        Some((_, _)) => 1,
        None => match n.group {
            GroupAlgo::Tree => local,
            GroupAlgo::WgReduce => 1,
            GroupAlgo::SgReduce => local.div_ceil(caps.min_sub_group_size()) + 1,
            GroupAlgo::LocalAtomic => 1,
        },
    }
}

fn local_bytes(caps: &DeviceCaps, vars: &[Need], local: usize) -> u64 {
    vars.iter()
        .map(|n| (local_slots(caps, n, local) * n.acc) as u64)
        .sum::<u64>()
        + 4
}

/// Global scratch a `GlobalPrivate` span may take (one copy per work-item).
fn private_rows_cap(caps: &DeviceCaps) -> u64 {
    (caps.max_alloc / 2).min(256 << 20)
}

/// Chooses where a span reduction keeps its copies (see [`SpanStore`]).
fn choose_span(
    caps: &DeviceCaps,
    v: &VarRequest,
    len: usize,
    det: Determinism,
    strategy: Strategy,
    form: FormRequest,
) -> Result<(SpanStore, GroupAlgo, &'static str)> {
    let unsupported = |missing: String| Error::Unsupported {
        what: format!("a span reduction of {len} x {} with {}", v.ty, v.op),
        missing,
        device: caps.label(),
    };
    if len == 0 {
        return Err(Error::InvalidRange {
            reason: "a span reduction needs at least one element".into(),
        });
    }
    if shape_of(&v.op) == AccShape::Pair {
        return Err(unsupported(
            "argmin/argmax spans: use one argmin variable per element".into(),
        ));
    }
    if v.op.identity(v.ty).is_none() {
        return Err(Error::NoIdentity {
            op: v.op.to_string(),
            ty: v.ty,
            needed_for: "a span reduction starts its work-group copies at the identity",
        });
    }
    let relaxed_ok = det == Determinism::Relaxed || !v.op.order_sensitive(v.ty);
    let shared_ok = atomic_capable(caps, v, Space::Local) && relaxed_ok;
    let global_ok = relaxed_ok
        && cross_supported(caps, CrossAlgo::Atomic, v).is_ok()
        && strategy.cross.is_none_or(|c| c == CrossAlgo::Atomic);
    let bytes = (len * v.ty.size()) as u64;
    let budget = caps.local_mem_size.saturating_sub(64);
    let gpu = caps.kind == DeviceKind::Gpu;
    // Work-items sharing the work-group: fixed in nd_range, shrinkable in range.
    let private_fits = |min_local: usize| match form {
        FormRequest::NdRange { local, .. } => local as u64 * bytes <= budget,
        FormRequest::Range { .. } => min_local as u64 * bytes <= budget,
    };
    match strategy.group {
        Some(GroupAlgo::LocalAtomic) => {
            if !shared_ok {
                return Err(unsupported(if atomic_capable(caps, v, Space::Local) {
                    "run-to-run determinism with float atomics (ask for relaxed determinism)".into()
                } else {
                    format!("fast local atomics for {} on {}", v.op, v.ty)
                }));
            }
            if bytes > budget && global_ok {
                return Ok((SpanStore::GlobalAtomic, GroupAlgo::LocalAtomic, "forced local-atomic, span too large for local memory: every update is a global atomic on the result"));
            }
            return Ok((SpanStore::LocalShared, GroupAlgo::LocalAtomic, "forced local-atomic: one shared copy per work-group"));
        }
        Some(GroupAlgo::Tree) => {
            if !private_fits(1) && bytes <= private_rows_cap(caps) {
                return Ok((SpanStore::GlobalPrivate, GroupAlgo::Tree, "forced tree, span too large for local memory: one private copy per work-item in global scratch"));
            }
            return Ok((SpanStore::LocalPrivate, GroupAlgo::Tree, "forced tree: one private copy per work-item, folded element by element"));
        }
        Some(g) => {
            return Err(unsupported(format!(
                "a span is combined element by element: its work-group step is tree (private copies) or local-atomic (a shared copy), not {g}"
            )))
        }
        None => {}
    }
    if gpu && shared_ok && bytes <= budget / 2 {
        return Ok((
            SpanStore::LocalShared,
            GroupAlgo::LocalAtomic,
            "GPU with fast local atomics: one shared copy per work-group in local memory",
        ));
    }
    if (!gpu && private_fits(1)) || (gpu && private_fits(32)) {
        return Ok((
            SpanStore::LocalPrivate,
            GroupAlgo::Tree,
            if gpu {
                "no usable local atomic: one private copy per work-item in local memory"
            } else {
                "CPU: one private copy per work-item in local memory (plain stores, no atomics)"
            },
        ));
    }
    if shared_ok && bytes <= budget {
        return Ok((
            SpanStore::LocalShared,
            GroupAlgo::LocalAtomic,
            "one shared copy per work-group in local memory, local atomics",
        ));
    }
    if global_ok {
        return Ok((
            SpanStore::GlobalAtomic,
            GroupAlgo::LocalAtomic,
            "too large for private local copies: every update is a global atomic on the result",
        ));
    }
    if private_fits(1) {
        return Ok((
            SpanStore::LocalPrivate,
            GroupAlgo::Tree,
            "one private copy per work-item in local memory",
        ));
    }
    if bytes <= private_rows_cap(caps) {
        return Ok((SpanStore::GlobalPrivate, GroupAlgo::Tree, "too large for local memory and no usable global atomic: one private copy per work-item in global scratch, folded by an extra pass"));
    }
    Err(Error::LocalMemory {
        local: 1,
        need: bytes,
        have: caps.local_mem_size,
        detail: format!("a span of {len} x {} fits neither local memory nor the scratch limit, and the device has no usable global atomic", v.ty),
        device: caps.label(),
    })
}

/// Plans a launch. Pure: depends only on its arguments.
pub fn plan(caps: &DeviceCaps, req: &Request) -> Result<Plan> {
    if req.vars.is_empty() {
        return Err(Error::InvalidRange {
            reason: "a reduction launch needs at least one reduction variable".into(),
        });
    }
    for v in &req.vars {
        if let Err(missing) = caps.supports_type(v.ty) {
            return Err(Error::Unsupported {
                what: format!("a {} reduction on {}", v.op, v.ty),
                missing: format!("the device lacks {missing}"),
                device: caps.label(),
            });
        }
        if v.ty == ElemType::F16 {
            return Err(Error::Unsupported {
                what: format!("a {} reduction on f16", v.op),
                missing: "f16 is a storage type in clreduce: reduce it into an f32 variable".into(),
                device: caps.label(),
            });
        }
        if !v.op.valid_for(v.ty) {
            return Err(Error::Unsupported {
                what: format!("{} on {}", v.op, v.ty),
                missing: "SYCL defines bitwise ops for integer types only".into(),
                device: caps.label(),
            });
        }
        if v.init_to_identity && v.op.identity(v.ty).is_none() {
            return Err(Error::NoIdentity {
                op: v.op.to_string(),
                ty: v.ty,
                needed_for: "initialize_to_identity",
            });
        }
        if let (Operator::Custom(c), Some(id)) = (&v.op, v.op.identity(v.ty)) {
            if id.ty() != v.ty {
                return Err(Error::TypeMismatch {
                    name: format!("the identity of custom({})", c.expr()),
                    expected: v.ty,
                    found: id.ty(),
                });
            }
        }
    }
    let det = req.determinism;
    // Group steps first: they do not depend on the geometry (the local-memory budget does).
    let mut groups_algo = Vec::new();
    let mut spans = Vec::new();
    for v in &req.vars {
        match v.span {
            Some(len) => {
                let (store, g, why) = choose_span(caps, v, len, det, req.strategy, req.form)?;
                groups_algo.push((g, why.to_string()));
                spans.push(Some(SpanPlan {
                    len,
                    store,
                    reason: why,
                }));
            }
            None => {
                groups_algo.push(choose_group(caps, v, det, req.strategy.group)?);
                spans.push(None);
            }
        }
    }
    let typed: Vec<Need> = groups_algo
        .iter()
        .zip(&req.vars)
        .zip(&spans)
        .map(|(((g, _), v), sp)| Need {
            group: *g,
            acc: acc_bytes(shape_of(&v.op), v.ty),
            span: sp.map(|s| (s.len, s.store)),
        })
        .collect();
    let max_wg = caps.max_local_1d().max(1);
    let widest = typed.iter().map(|n| n.acc).max().unwrap_or(4);

    let (local, groups, per_item, order, unroll, total, geometry_reason) = match req.form {
        FormRequest::NdRange { global, local } => {
            if local == 0 {
                return Err(Error::InvalidRange {
                    reason: "local size 0".into(),
                });
            }
            if global % local as u64 != 0 {
                return Err(Error::NdRangeNotDivisible {
                    global: vec![global as usize],
                    local: vec![local],
                });
            }
            if local > caps.max_work_group_size {
                return Err(Error::WorkGroupTooLarge {
                    local,
                    limit: caps.max_work_group_size,
                    limit_name: "CL_DEVICE_MAX_WORK_GROUP_SIZE",
                    device: caps.label(),
                });
            }
            if local > max_wg {
                return Err(Error::WorkGroupTooLarge {
                    local,
                    limit: max_wg,
                    limit_name: "CL_DEVICE_MAX_WORK_ITEM_SIZES[0]",
                    device: caps.label(),
                });
            }
            let need = local_bytes(caps, &typed, local);
            if need > caps.local_mem_size {
                return Err(Error::LocalMemory {
                    local,
                    need,
                    have: caps.local_mem_size,
                    detail: describe_local(caps, &typed, local),
                    device: caps.label(),
                });
            }
            let groups = global / local as u64;
            if groups > u32::MAX as u64 {
                return Err(Error::InvalidRange {
                    reason: format!("{groups} work-groups exceed 2^32"),
                });
            }
            (
                local,
                groups,
                1,
                IndexOrder::OnePerItem,
                1,
                global,
                "nd_range: the caller's geometry".to_string(),
            )
        }
        FormRequest::Range { n } => {
            let gpu = caps.kind == DeviceKind::Gpu;
            let mult = caps.preferred_wg_multiple.max(1);
            // GPUs: 256 work-items (8 warps / 4 wavefronts) keeps occupancy high with little
            // local memory. CPUs: each work-item streams its own contiguous chunk (TODO #4). A
            // CPU compiler that vectorizes across work-items (it asks for a work-group multiple
            // of 16 or more, as Intel's asks for 128) would turn those streams into gathers, so it
            // gets one work-item per group and vectorizes the work-item's own loop instead.
            // Measured with examples/sweep at 2^22 f32 on the 2-core dev machine (loaded):
            // Intel local 128 interleaved 1 GB/s, contiguous local 1 x 8 groups/core 17 GB/s;
            // PoCL interleaved 1 GB/s, contiguous local 64 x 4 groups/core unroll 8 20 GB/s.
            let lanes_vectorized = !gpu && mult >= 16;
            let tune = req.tuning.unwrap_or_default();
            let want = tune.local.unwrap_or(if gpu {
                256
            } else if lanes_vectorized {
                1
            } else {
                64
            });
            let mut local = if tune.local.is_some() {
                want.min(max_wg).max(1)
            } else {
                pow2_floor(want.min(max_wg)).max(1)
            };
            while local > 1 && local_bytes(caps, &typed, local) > caps.local_mem_size {
                local /= 2;
            }
            if local_bytes(caps, &typed, local) > caps.local_mem_size {
                return Err(Error::LocalMemory {
                    local,
                    need: local_bytes(caps, &typed, local),
                    have: caps.local_mem_size,
                    detail: describe_local(caps, &typed, local),
                    device: caps.label(),
                });
            }
            // 8 loads in flight per work-item for one 4-byte variable; several variables (or
            // 8-byte ones) keep 4, or the extra registers cost more than they hide. Measured on
            // the H200 (examples/sweep, 2^28 f32): 1 var unroll 8 = 4351 GB/s vs unroll 4 = 4257;
            // sum+min+max unroll 8 = 2734 GB/s vs unroll 4 = 4200 (design/bench/).
            let default_unroll = if widest < 8 && req.vars.len() == 1 {
                8
            } else {
                4
            };
            let unroll = tune.unroll.unwrap_or(default_unroll);
            // Enough work-groups to fill the device: GPUs 8 per compute unit (2048 resident
            // work-items per SM / 256), CPUs 4 per core for load balance.
            let per_cu = tune
                .groups_per_cu
                .unwrap_or(if gpu || lanes_vectorized { 8 } else { 4 });
            let max_groups = caps.compute_units as u64 * per_cu;
            // CPUs: at least 4096 indices per work-group, or launching groups costs more than
            // they save.
            let per_group_min = if gpu {
                (local * unroll) as u64
            } else {
                ((local * unroll * 4) as u64).max(4096)
            };
            let mut groups = n.div_ceil(per_group_min).clamp(1, max_groups.max(1));
            // A span kept in global scratch has one copy per work-item: cap the work-items.
            for sp in spans.iter().flatten() {
                if sp.store == SpanStore::GlobalPrivate {
                    let rows = (private_rows_cap(caps) / (sp.len * 8) as u64).max(1);
                    while local > 1 && local as u64 > rows {
                        local /= 2;
                    }
                    groups = groups.min((rows / local as u64).max(1));
                }
            }
            let per_item = n.div_ceil(groups * local as u64).max(1);
            let order = tune.order.unwrap_or(if gpu {
                IndexOrder::GridStride
            } else {
                IndexOrder::Contiguous
            });
            let reason = format!(
                "{} device with {} compute units: {} work-items per group (preferred multiple {mult}), up to {max_groups} groups, {unroll} accumulators per work-item",
                if gpu { "GPU" } else { "CPU" },
                caps.compute_units,
                local
            );
            (local, groups, per_item, order, unroll, n, reason)
        }
    };

    let mut vars = Vec::new();
    let mut needs = Vec::new();
    for ((v, (mut g, mut g_reason)), sp) in req.vars.iter().zip(groups_algo).zip(spans) {
        if sp.is_none() && g == GroupAlgo::SgReduce && caps.sg_via_ptx() && local % 32 != 0 {
            // PTX shuffles with a full mask need whole warps.
            if req.strategy.group.is_some() {
                return Err(Error::Unsupported {
                    what: format!("work-group step sg-reduce with {local} work-items per group"),
                    missing:
                        "warp shuffles (inline PTX) need a work-group size that is a multiple of 32"
                            .into(),
                    device: caps.label(),
                });
            }
            g = GroupAlgo::Tree;
            g_reason = format!(
                "work-group size {local} is not a multiple of the 32-wide warp: local-memory tree"
            );
        }
        let (c, c_reason) = match sp.map(|s| s.store) {
            Some(SpanStore::GlobalAtomic) => (
                CrossAlgo::Atomic,
                "the updates themselves are global atomics on the result".to_string(),
            ),
            Some(SpanStore::GlobalPrivate) => {
                if req
                    .strategy
                    .cross
                    .is_some_and(|c| c != CrossAlgo::ExtraPass)
                {
                    return Err(Error::Unsupported {
                        what: format!("cross-group step {} for a span kept in global scratch", req.strategy.cross.unwrap_or(CrossAlgo::ExtraPass)),
                        missing: "local memory for the span's work-group copies (only an extra pass folds per-work-item copies)".into(),
                        device: caps.label(),
                    });
                }
                (
                    CrossAlgo::ExtraPass,
                    "one extra pass folds the per-work-item copies element by element".to_string(),
                )
            }
            _ => choose_cross(caps, v, det, req.strategy.cross, groups, total)?,
        };
        let shape = shape_of(&v.op);
        let need = Need {
            group: g,
            acc: acc_bytes(shape, v.ty),
            span: sp.map(|s| (s.len, s.store)),
        };
        needs.push(need);
        vars.push(VarPlan {
            op: v.op.clone(),
            ty: v.ty,
            identity: v.op.identity(v.ty),
            shape,
            acc_bytes: need.acc,
            span: sp,
            init_to_identity: v.init_to_identity,
            group: g,
            cross: c,
            group_reason: g_reason,
            cross_reason: c_reason,
            local_slots: local_slots(caps, &need, local),
            deterministic: var_deterministic(g, c, v),
        });
    }
    // A work-group step that fell back to the tree needs more local memory: check again.
    let local_need = local_bytes(caps, &needs, local);
    if local_need > caps.local_mem_size {
        return Err(Error::LocalMemory {
            local,
            need: local_need,
            have: caps.local_mem_size,
            detail: describe_local(caps, &needs, local),
            device: caps.label(),
        });
    }
    let passes = if vars.iter().any(|v| v.cross == CrossAlgo::ExtraPass) {
        2
    } else {
        1
    };
    let deterministic = vars.iter().all(|v| v.deterministic);
    // Indices stay below 2^32 with room for the unrolled look-ahead.
    let reach = total.saturating_add((unroll as u64 + 1) * groups * local as u64);
    let wide_index = reach > u32::MAX as u64;
    let std = caps.cl_std();
    // Only where a structured partial needs it: plain partials keep the OpenCL 1.2 atomic
    // publish, measured no slower on the H200 (2^20 f32 sum 7.8-7.9 us vs 8.0-8.7 us with
    // the PTX ticket, medians of 500; design/bench/).
    let ptx_acq_rel = caps.acq_rel_ptx_path()
        && vars
            .iter()
            .any(|v| v.cross == CrossAlgo::LastGroup && v.shape != AccShape::Plain);
    Ok(Plan {
        device: caps.label(),
        form: req.form,
        shape: req.shape,
        local,
        groups,
        items_per_work_item: per_item,
        order,
        unroll,
        wide_index,
        local_bytes: local_need,
        vars,
        passes,
        deterministic,
        c11_atomics: caps.c11_atomics(),
        ptx_acq_rel,
        cl_std: ClStdName(match std {
            ClStd::Cl12 => "OpenCL C 1.2",
            ClStd::Cl20 => "OpenCL C 2.0",
            ClStd::Cl30 => "OpenCL C 3.0",
        }),
        geometry_reason,
    })
}

fn describe_local(caps: &DeviceCaps, needs: &[Need], local: usize) -> String {
    needs
        .iter()
        .enumerate()
        .map(|(k, n)| {
            format!(
                "var {k}: {} needs {} x {} bytes",
                match n.span {
                    Some((len, store)) => format!("span of {len} ({})", store.name()),
                    None => n.group.to_string(),
                },
                local_slots(caps, n, local),
                n.acc
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::{fixtures, Mask};

    fn req(form: FormRequest, op: Op, ty: ElemType) -> Request {
        Request {
            form,
            shape: Shape::default(),
            vars: vec![VarRequest::new(op, ty)],
            strategy: Strategy::AUTO,
            determinism: Determinism::Deterministic,
            tuning: None,
        }
    }
    const N: FormRequest = FormRequest::Range { n: 1 << 24 };

    #[test]
    fn nvidia_f32_sum_is_warp_shuffle_last_group_grid_stride() {
        let p = plan(&fixtures::nvidia_h200(), &req(N, Op::Plus, ElemType::F32)).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::SgReduce, "PTX warp shuffles");
        assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
        assert_eq!(p.order, IndexOrder::GridStride);
        assert_eq!(p.local, 256);
        assert_eq!(p.groups, 132 * 8);
        assert_eq!(p.passes, 1);
        assert!(p.deterministic);
    }

    #[test]
    fn nvidia_i32_sum_uses_atomics_both_levels_without_shuffles() {
        let p = plan(&fixtures::nvidia_h200(), &req(N, Op::Plus, ElemType::I32)).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::SgReduce);
        assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
        let caps = Mask::parse("no-subgroups")
            .unwrap()
            .apply(&fixtures::nvidia_h200());
        let p = plan(&caps, &req(N, Op::Plus, ElemType::I32)).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::LocalAtomic, "seed variant B");
        assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
        let p = plan(&caps, &req(N, Op::Plus, ElemType::F32)).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    }

    #[test]
    fn ptx_shuffles_need_whole_warps() {
        let r = req(
            FormRequest::NdRange {
                global: 96 * 5,
                local: 96,
            },
            Op::Multiplies,
            ElemType::F64,
        );
        assert_eq!(
            plan(&fixtures::nvidia_h200(), &r).unwrap().vars[0].group,
            GroupAlgo::SgReduce
        );
        let r = req(
            FormRequest::NdRange {
                global: 1000,
                local: 1000,
            },
            Op::Plus,
            ElemType::F32,
        );
        assert_eq!(
            plan(&fixtures::nvidia_h200(), &r).unwrap().vars[0].group,
            GroupAlgo::Tree
        );
        let mut r = req(
            FormRequest::NdRange {
                global: 9,
                local: 3,
            },
            Op::Plus,
            ElemType::F32,
        );
        r.strategy = Strategy::new(GroupAlgo::SgReduce, CrossAlgo::LastGroup);
        assert!(matches!(
            plan(&fixtures::nvidia_h200(), &r),
            Err(Error::Unsupported { .. })
        ));
    }

    #[test]
    fn intel_prefers_work_group_collectives_and_blocked_order() {
        let p = plan(&fixtures::intel_cpu(), &req(N, Op::Plus, ElemType::F32)).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::WgReduce);
        assert_eq!(
            p.vars[0].cross,
            CrossAlgo::LastGroup,
            "float atomics stay off in deterministic mode"
        );
        assert_eq!(p.order, IndexOrder::Contiguous);
        let mut r = req(N, Op::Plus, ElemType::F32);
        r.determinism = Determinism::Relaxed;
        let p = plan(&fixtures::intel_cpu(), &r).unwrap();
        assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
        assert!(!p.deterministic);
    }

    #[test]
    fn float_max_atomics_are_deterministic() {
        let p = plan(&fixtures::intel_cpu(), &req(N, Op::Maximum, ElemType::F32)).unwrap();
        assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
        assert!(p.deterministic);
    }

    #[test]
    fn multiplies_falls_back_to_sub_groups_or_tree() {
        let p = plan(
            &fixtures::intel_cpu(),
            &req(N, Op::Multiplies, ElemType::I32),
        )
        .unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::SgReduce);
        assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
        let p = plan(&fixtures::amd_gpu(), &req(N, Op::Multiplies, ElemType::I32)).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    }

    #[test]
    fn masks_drive_every_path() {
        let caps = Mask::parse("no-atomics")
            .unwrap()
            .apply(&fixtures::pocl_cpu());
        let p = plan(&caps, &req(N, Op::Plus, ElemType::I32)).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::Tree);
        assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
        assert_eq!(p.passes, 2);
        let caps = Mask::parse("no-group-reduce")
            .unwrap()
            .apply(&fixtures::intel_cpu());
        assert_eq!(
            plan(&caps, &req(N, Op::Plus, ElemType::F32)).unwrap().vars[0].group,
            GroupAlgo::SgReduce
        );
    }

    #[test]
    fn forcing_what_the_device_lacks_names_it() {
        let mut r = req(N, Op::Plus, ElemType::F32);
        r.strategy = Strategy::new(GroupAlgo::WgReduce, CrossAlgo::LastGroup);
        match plan(&fixtures::nvidia_h200(), &r) {
            Err(Error::Unsupported { missing, .. }) => {
                assert!(missing.contains("work-group collective"), "{missing}")
            }
            other => panic!("{other:?}"),
        }
        r.strategy = Strategy::new(GroupAlgo::Tree, CrossAlgo::Atomic);
        match plan(&fixtures::nvidia_h200(), &r) {
            Err(Error::Unsupported { missing, .. }) => {
                assert!(missing.contains("global atomics"), "{missing}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nd_range_errors() {
        let c = fixtures::nvidia_h200();
        let r = req(
            FormRequest::NdRange {
                global: 1000,
                local: 96,
            },
            Op::Plus,
            ElemType::F32,
        );
        assert!(matches!(
            plan(&c, &r),
            Err(Error::NdRangeNotDivisible { .. })
        ));
        let r = req(
            FormRequest::NdRange {
                global: 2048,
                local: 2048,
            },
            Op::Plus,
            ElemType::F32,
        );
        assert!(matches!(plan(&c, &r), Err(Error::WorkGroupTooLarge { .. })));
        let mut small = Mask::parse("no-subgroups").unwrap().apply(&c);
        small.local_mem_size = 1024;
        let r = req(
            FormRequest::NdRange {
                global: 1024,
                local: 1024,
            },
            Op::Plus,
            ElemType::F64,
        );
        assert!(matches!(plan(&small, &r), Err(Error::LocalMemory { .. })));
        // The range form shrinks the work-group instead.
        let p = plan(&small, &req(N, Op::Plus, ElemType::F64)).unwrap();
        assert!(p.local_bytes <= 1024);
    }

    #[test]
    fn wide_indices_past_2_pow_32() {
        let p = plan(
            &fixtures::nvidia_h200(),
            &req(FormRequest::Range { n: 5 << 30 }, Op::Plus, ElemType::F32),
        )
        .unwrap();
        assert!(p.wide_index);
        let p = plan(
            &fixtures::nvidia_h200(),
            &req(FormRequest::Range { n: 1 << 20 }, Op::Plus, ElemType::F32),
        )
        .unwrap();
        assert!(!p.wide_index);
    }

    #[test]
    fn bitwise_on_float_is_refused() {
        assert!(matches!(
            plan(&fixtures::pocl_cpu(), &req(N, Op::BitAnd, ElemType::F32)),
            Err(Error::Unsupported { .. })
        ));
    }

    #[test]
    fn every_fixture_plans_every_op_and_type() {
        for (name, caps) in fixtures::all() {
            for op in Op::ALL {
                for ty in ElemType::REDUCIBLE {
                    if !op.valid_for(ty) {
                        continue;
                    }
                    for form in [
                        N,
                        FormRequest::NdRange {
                            global: 96 * 7,
                            local: 96,
                        },
                    ] {
                        let p = plan(&caps, &req(form, op, ty))
                            .unwrap_or_else(|e| panic!("{name} {op} {ty}: {e}"));
                        assert!(p.local_bytes <= caps.local_mem_size);
                        assert!(!p.to_string().is_empty());
                    }
                }
            }
        }
    }

    fn span_req(form: FormRequest, op: Op, ty: ElemType, len: usize) -> Request {
        let mut r = req(form, op, ty);
        r.vars[0].span = Some(len);
        r
    }

    #[test]
    fn span_stores_follow_the_device() {
        let nv = fixtures::nvidia_h200();
        let p = plan(&nv, &span_req(N, Op::Plus, ElemType::U32, 256)).unwrap();
        let v = &p.vars[0];
        assert_eq!(
            v.span.unwrap().store,
            SpanStore::LocalShared,
            "GPU histogram"
        );
        assert_eq!(v.cross, CrossAlgo::Atomic);
        assert_eq!(p.local, 256);
        // No float atomics (deterministic anyway): private copies, a smaller work-group.
        let p = plan(&nv, &span_req(N, Op::Plus, ElemType::F32, 256)).unwrap();
        assert_eq!(p.vars[0].span.unwrap().store, SpanStore::LocalPrivate);
        assert!(p.local_bytes <= nv.local_mem_size && p.local >= 32, "{p}");
        // Too large for local memory.
        let p = plan(&nv, &span_req(N, Op::Plus, ElemType::U32, 65536)).unwrap();
        assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalAtomic);
        let p = plan(&nv, &span_req(N, Op::Plus, ElemType::F32, 65536)).unwrap();
        assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalPrivate);
        assert_eq!(p.passes, 2);
        assert!(p.groups * p.local as u64 * 65536 * 4 <= 256 << 20);
        // CPUs keep a private copy per work-item.
        let p = plan(
            &fixtures::pocl_cpu(),
            &span_req(N, Op::Plus, ElemType::U32, 256),
        )
        .unwrap();
        assert_eq!(p.vars[0].span.unwrap().store, SpanStore::LocalPrivate);
        // nd_range with a fixed work-group that cannot hold private copies.
        let nd = FormRequest::NdRange {
            global: 1024 * 4,
            local: 1024,
        };
        let p = plan(&nv, &span_req(nd, Op::Maximum, ElemType::F64, 4096)).unwrap();
        assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalPrivate);
    }

    #[test]
    fn ptx_acquire_release_publishes_structures_on_nvidia() {
        // NVIDIA's OpenCL without OpenCL C 2.0 acquire/release: the PTX path carries the
        // last-group protocol, so a (value, index) pair still finishes in one launch.
        let nv = fixtures::nvidia_h200();
        assert!(!nv.c11_atomics() && nv.acq_rel());
        let mut r = req(
            FormRequest::Range { n: 1 << 20 },
            Op::Minimum,
            ElemType::F32,
        );
        r.vars[0].op = Operator::ArgMin;
        let p = plan(&nv, &r).unwrap();
        assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
        assert!(p.ptx_acq_rel && !p.c11_atomics);
        // Above PTX_STRUCT_LAST_MAX the extra pass keeps the main kernel's registers down.
        r.form = FormRequest::Range {
            n: PTX_STRUCT_LAST_MAX + 1,
        };
        let p = plan(&nv, &r).unwrap();
        assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
        assert!(p.vars[0].cross_reason.contains("registers"));
        r.form = FormRequest::Range { n: 1 << 20 };
        assert!(plan(&nv, &r)
            .unwrap()
            .to_string()
            .contains("NVIDIA PTX acquire/release"));
        // A plain partial keeps the OpenCL 1.2 atomic publish: no PTX ticket for a sum.
        let p = plan(&nv, &req(N, Op::Plus, ElemType::F32)).unwrap();
        assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
        assert!(!p.ptx_acq_rel);
        // The mask that removes OpenCL C 2.0 atomics removes the PTX path too.
        let masked = Mask::parse("no-c11-atomics").unwrap().apply(&nv);
        let p = plan(&masked, &r).unwrap();
        assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
        assert!(!p.ptx_acq_rel);
        // Never outside NVIDIA, and never beside C11 atomics.
        for c in [
            fixtures::amd_gpu(),
            fixtures::oclgrind(),
            fixtures::intel_cpu(),
        ] {
            assert!(!plan(&c, &r).unwrap().ptx_acq_rel);
        }
        let mut both = fixtures::nvidia_h200();
        both.atomics.order_acq_rel = true;
        both.atomics.scope_device = true;
        assert!(both.c11_atomics());
        assert!(!plan(&both, &r).unwrap().ptx_acq_rel);
    }

    #[test]
    fn argmin_and_custom_ops_plan_without_atomics_unless_declared() {
        let nv = fixtures::nvidia_h200();
        let p = plan(&nv, &req(N, Op::Plus, ElemType::F32)).unwrap();
        assert_eq!(p.vars[0].shape, AccShape::Plain);
        let mut r = req(N, Op::Minimum, ElemType::F32);
        r.vars[0].op = Operator::ArgMin;
        let p = plan(&nv, &r).unwrap();
        assert_eq!(p.vars[0].shape, AccShape::Pair);
        assert_eq!(
            p.vars[0].group,
            GroupAlgo::SgReduce,
            "PTX shuffles move pairs"
        );
        assert_eq!(
            p.vars[0].cross,
            CrossAlgo::ExtraPass,
            "2^24 > PTX_STRUCT_LAST_MAX"
        );
        assert_eq!(p.vars[0].acc_bytes, 16);
        let p = plan(&fixtures::oclgrind(), &r).unwrap();
        assert_eq!(p.vars[0].group, GroupAlgo::Tree);
        assert_eq!(
            p.vars[0].cross,
            CrossAlgo::ExtraPass,
            "no OpenCL C 2.0 atomics to publish a pair"
        );
        let custom = crate::ops::CustomOp::new("a + b").identity(0i32);
        r = req(N, Op::Plus, ElemType::I32);
        r.vars[0].op = custom.clone().into();
        let p = plan(&nv, &r).unwrap();
        assert_eq!(
            p.vars[0].cross,
            CrossAlgo::LastGroup,
            "undeclared: no atomics"
        );
        r.vars[0].op = custom.atomic(Op::Plus).into();
        let p = plan(&nv, &r).unwrap();
        assert_eq!(p.vars[0].cross, CrossAlgo::Atomic, "declared plus");
        r.vars[0].op = crate::ops::CustomOp::new("max(a, b)").into();
        let p = plan(&nv, &r).unwrap();
        assert_eq!(p.vars[0].shape, AccShape::Flagged);
        assert_eq!(p.vars[0].identity, None);
        r.vars[0].init_to_identity = true;
        assert!(matches!(plan(&nv, &r), Err(Error::NoIdentity { .. })));
        r.vars[0].init_to_identity = false;
        r.vars[0].op = crate::ops::CustomOp::new("a + b").identity(0.0f32).into();
        assert!(matches!(plan(&nv, &r), Err(Error::TypeMismatch { .. })));
    }

    #[test]
    fn strategy_parse_round_trips() {
        for s in Strategy::all_forced() {
            assert_eq!(Strategy::parse(&s.to_string()).unwrap(), s);
        }
        assert_eq!(
            Strategy::parse("tree+last").unwrap(),
            Strategy::new(GroupAlgo::Tree, CrossAlgo::LastGroup)
        );
        assert_eq!(Strategy::parse("auto").unwrap(), Strategy::AUTO);
        assert!(Strategy::parse("bogus+x").is_err());
    }
}
