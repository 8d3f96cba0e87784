//! The tuning table (issue 19), the planner's measured input: per launch class and size, the
//! fastest strategy and geometry a device's measurements found, with the times that justify it
//! ([`TuneTable`], [`TuneEntry`]), keyed by device ([`DeviceKey`]), and its lookup. The planner
//! follows it through a soft hint (`hint.rs`) in [`plan_tuned`] (the precedence is
//! `planned`'s, in `mod.rs`).
//!
//! Pure data: no device and no file. The tuner and the per-user cache that fill and keep it
//! live in `crate::tune` (`tune/mod.rs`, `tune/cache.rs`).

use super::model::{IndexOrder, Plan};
use super::request::{FormRequest, HotLoop, Request, Tuning};
use super::segment_model::{SegmentAlgo, SegmentLayout};
use super::strategy::Strategy;
use crate::caps::DeviceCaps;
use crate::error::Result;
use crate::ops::{Op, Operator};
use crate::types::ElemType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Version of the table's layout: a cache file of another version is stale.
pub const TABLE_FORMAT: u32 = 1;

/// What one variable combines with, as far as speed goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpClass {
    /// plus.
    Sum,
    /// multiplies.
    Prod,
    /// minimum and maximum.
    MinMax,
    /// bit_and, bit_or, bit_xor.
    Bitwise,
    /// logical_and, logical_or.
    Logical,
    /// argmin and argmax.
    Arg,
    /// A custom combiner.
    Custom,
}

impl OpClass {
    /// The class of an operator.
    pub fn of(op: &Operator) -> OpClass {
        match op {
            Operator::Builtin(Op::Plus) => OpClass::Sum,
            Operator::Builtin(Op::Multiplies) => OpClass::Prod,
            Operator::Builtin(Op::Minimum | Op::Maximum) => OpClass::MinMax,
            Operator::Builtin(Op::BitAnd | Op::BitOr | Op::BitXor) => OpClass::Bitwise,
            Operator::Builtin(Op::LogicalAnd | Op::LogicalOr) => OpClass::Logical,
            Operator::ArgMin | Operator::ArgMax => OpClass::Arg,
            Operator::Custom(_) => OpClass::Custom,
        }
    }
    /// The class's name in tables and reports.
    pub fn name(self) -> &'static str {
        match self {
            OpClass::Sum => "sum",
            OpClass::Prod => "prod",
            OpClass::MinMax => "minmax",
            OpClass::Bitwise => "bitwise",
            OpClass::Logical => "logical",
            OpClass::Arg => "arg",
            OpClass::Custom => "custom",
        }
    }
}

/// The kind of launch a table entry was measured for: the variables' op classes in order, their
/// element type (one for all), and for a span the length rounded up to a power of two (log2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LaunchClass {
    /// Each variable's op class, in order.
    pub ops: Vec<OpClass>,
    /// The element type of every variable.
    pub ty: ElemType,
    #[serde(default)]
    /// For a span, its length rounded up to a power of two (log2); `None` for scalars.
    pub span_log2: Option<u32>,
    /// Whether the launch holds an exact sum (`Determinism::Exact` with a float sum): its
    /// loops are not the deterministic launch's, so it is measured and looked up apart (a
    /// table of earlier tuners has no exact classes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
}

impl LaunchClass {
    /// The class of a request: `None` for a launch the table cannot describe (variables of
    /// different types, a span beside other variables, no variables).
    pub fn of(req: &Request) -> Option<LaunchClass> {
        let first = req.vars.first()?;
        if req.vars.iter().any(|v| v.ty != first.ty) {
            return None;
        }
        let span_log2 = match (req.vars.len(), first.span) {
            (_, None) if req.vars.iter().all(|v| v.span.is_none()) => None,
            (1, Some(len)) => Some(len.max(1).next_power_of_two().trailing_zeros()),
            _ => return None,
        };
        Some(LaunchClass {
            ops: req.vars.iter().map(|v| OpClass::of(&v.op)).collect(),
            ty: first.ty,
            span_log2,
            exact: req
                .vars
                .iter()
                .any(|v| super::exact_sum(&v.op, v.ty, req.determinism)),
        })
    }
}

impl fmt::Display for LaunchClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ops: Vec<&str> = self.ops.iter().map(|o| o.name()).collect();
        let exact = if self.exact { " exact" } else { "" };
        match self.span_log2 {
            Some(l) => write!(f, "{} {}{exact} span 2^{l}", self.ty.name(), ops.join("+")),
            None => write!(f, "{} {}{exact}", self.ty.name(), ops.join("+")),
        }
    }
}

/// A range-form geometry as the tuner measured it (every part explicit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TunedGeometry {
    /// Work-items per group.
    pub local: usize,
    /// Work-groups per compute unit.
    pub groups_per_cu: u64,
    /// Elements each work-item loads per loop step.
    pub unroll: usize,
    #[serde(with = "order_text")]
    /// How work-items walk the input (strided or chunked).
    pub order: IndexOrder,
    /// An exact sum's hot form (`CLREDUCE_TUNE=hot=N`), where the launch runs the speculative
    /// loop; `None` elsewhere (and in tables of earlier tuners).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot: Option<HotLoop>,
}

impl TunedGeometry {
    /// The same geometry as the planner's expert override.
    pub fn tuning(self) -> Tuning {
        Tuning {
            local: Some(self.local),
            groups_per_cu: Some(self.groups_per_cu),
            unroll: Some(self.unroll),
            order: Some(self.order),
            spec: None,
            hot: self.hot,
            tail: None,
            steps: None,
            others_one: None,
            vec: None,
        }
    }
    /// The geometry a plan runs with, given the compute units it was planned for.
    pub fn of_plan(p: &Plan, compute_units: u32) -> TunedGeometry {
        TunedGeometry {
            local: p.local,
            groups_per_cu: p.groups.div_ceil(compute_units.max(1) as u64).max(1),
            unroll: p.unroll,
            order: p.order,
            hot: p
                .vars
                .iter()
                .find_map(|v| v.exact.filter(|e| e.speculative).map(|e| e.hot)),
        }
    }
}

impl fmt::Display for TunedGeometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "local {}, {}/CU, unroll {}, {}",
            self.local,
            self.groups_per_cu,
            self.unroll,
            order_text::name(self.order)
        )?;
        match self.hot {
            Some(h) => write!(f, ", hot {}", h.name()),
            None => Ok(()),
        }
    }
}

/// One measured point: the fastest plan for a launch class at one size, and what it beat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneEntry {
    /// The launch class measured.
    pub class: LaunchClass,
    /// log2 of the size measured.
    pub log2_n: u32,
    /// The fastest plan's strategy (both parts forced when it is followed).
    #[serde(with = "strategy_text")]
    pub strategy: Strategy,
    /// The fastest plan's geometry.
    pub geometry: TunedGeometry,
    /// The fastest plan's summary (`tree+atomic (local-private)`).
    pub plan: String,
    /// Its median device time, nanoseconds.
    pub best_ns: u64,
    /// The plan the rules choose without a table, its geometry and its median device time in
    /// the same (interleaved) measurement.
    pub rule_plan: String,
    /// The rules' plan's geometry.
    pub rule_geometry: TunedGeometry,
    /// The rules' plan's median device time, nanoseconds.
    pub rule_ns: u64,
    /// The fastest plan with another strategy than the winner's, and its median.
    #[serde(default)]
    pub runner_up: Option<(String, u64)>,
    /// How many plans (strategies and geometries) were compared.
    pub tried: u32,
}

impl TuneEntry {
    /// Whether the measurement changed the rule plan (strategy or geometry).
    pub fn changes_rule_plan(&self) -> bool {
        self.plan != self.rule_plan || self.geometry != self.rule_geometry
    }
    /// The reason a plan that follows this entry gives, with the figures.
    pub fn reason(&self, n: u64) -> String {
        let at = if n.is_power_of_two() && n.trailing_zeros() == self.log2_n {
            format!("at 2^{}", self.log2_n)
        } else {
            format!(
                "at 2^{} (the nearest size measured to n = {n})",
                self.log2_n
            )
        };
        let us = |ns: u64| format!("{:.1} us", ns as f64 / 1e3);
        let ratio = |a: u64, b: u64| b as f64 / a.max(1) as f64;
        if self.plan != self.rule_plan {
            format!(
                "measured: {} {:.2}x {} (the capability rules' plan) {at} on this device ({} vs {}, medians of device time)",
                self.plan,
                ratio(self.best_ns, self.rule_ns),
                self.rule_plan,
                us(self.best_ns),
                us(self.rule_ns)
            )
        } else {
            let next = match &self.runner_up {
                Some((p, ns)) => format!(
                    ", {:.2}x the next strategy {p} ({})",
                    ratio(self.best_ns, *ns),
                    us(*ns)
                ),
                None => String::new(),
            };
            format!(
                "measured: {} is the fastest of {} plans {at} on this device ({}{next})",
                self.plan,
                self.tried,
                us(self.best_ns)
            )
        }
    }
}

/// Which device (and which clreduce) a table was measured on. A table whose key differs from
/// the device's is stale.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceKey {
    /// The OpenCL platform's name.
    pub platform: String,
    /// The device's name.
    pub device: String,
    /// The driver version.
    pub driver: String,
    /// clreduce's version and a fingerprint of its kernels (`crate::tune` fills these in).
    pub clreduce: String,
    /// The table layout's version ([`TABLE_FORMAT`]).
    pub format: u32,
}

impl DeviceKey {
    /// The key of `caps`'s device for this clreduce (`clreduce`: version and kernel fingerprint).
    pub fn new(caps: &DeviceCaps, clreduce: &str) -> DeviceKey {
        DeviceKey {
            platform: caps.platform.clone(),
            device: caps.name.clone(),
            driver: caps.driver.clone(),
            clreduce: clreduce.to_string(),
            format: TABLE_FORMAT,
        }
    }
    /// Whether the key names this device (platform, name, driver).
    pub fn is_for(&self, caps: &DeviceCaps) -> bool {
        self.platform == caps.platform && self.device == caps.name && self.driver == caps.driver
    }
}

/// A device's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneTable {
    /// The device (and clreduce) measured.
    pub key: DeviceKey,
    /// When and how it was measured (the command, the date), shown by `clreduce tune --show`.
    pub measured: String,
    /// The measured points.
    pub entries: Vec<TuneEntry>,
    /// The measured segmented points (issue 26; absent in tables of earlier tuners).
    #[serde(default)]
    pub segments: Vec<SegmentEntry>,
}

/// One measured segmented point: for a class of variables, a layout and a mean segment length,
/// the fastest segment plan against the rules' own, timed interleaved (`clreduce tune`). The
/// segmented planner follows it (`plan_segments`'s `measured`) unless a plan is forced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentEntry {
    /// The variables' class (ops and type; never a span).
    pub class: LaunchClass,
    /// The layout: `rows`, `cols` or `offsets` ([`segment_layout_key`]).
    pub layout: String,
    /// log2 of the mean segment length measured (rounded).
    pub log2_mean: u32,
    /// The shape measured, as the case names it (`f32-rows-1024x256`).
    pub shape: String,
    /// The fastest segment plan (`item`, `group`, `tiles`, `chunks`, `columns`).
    pub algo: String,
    /// Its median device time, nanoseconds.
    pub best_ns: u64,
    /// The plan the rules choose, and its median device time in the same measurement.
    pub rule_algo: String,
    /// The rules' plan's median, nanoseconds.
    pub rule_ns: u64,
    /// How many plans were compared.
    pub tried: u32,
}

impl SegmentEntry {
    /// The reason a plan that follows this entry gives.
    pub fn reason(&self) -> String {
        format!(
            "measured on this device ({}): {} {:.1} us against the rules' {} {:.1} us",
            self.shape,
            self.algo,
            self.best_ns as f64 / 1e3,
            self.rule_algo,
            self.rule_ns as f64 / 1e3
        )
    }
}

/// The layout's key in [`SegmentEntry::layout`].
pub fn segment_layout_key(l: &SegmentLayout) -> &'static str {
    match l {
        SegmentLayout::Uniform { .. } => "rows",
        SegmentLayout::Columns { .. } => "cols",
        SegmentLayout::Offsets => "offsets",
    }
}

impl TuneTable {
    /// The entry that covers `req`: range form, a class with entries, the nearest size measured
    /// (in log2; the smaller one on a tie).
    pub fn lookup(&self, req: &Request) -> Option<&TuneEntry> {
        let FormRequest::Range { n } = req.form else {
            return None;
        };
        if n == 0 {
            return None;
        }
        let class = LaunchClass::of(req)?;
        let l = (n as f64).log2();
        self.entries
            .iter()
            .filter(|e| e.class == class)
            .min_by(|a, b| {
                let da = (a.log2_n as f64 - l).abs();
                let db = (b.log2_n as f64 - l).abs();
                da.total_cmp(&db).then(a.log2_n.cmp(&b.log2_n))
            })
    }
    /// The segmented entry that covers a launch of `class` over `layout` with segments of
    /// mean length `mean`: the nearest mean measured (in log2; the smaller on a tie), and the
    /// segment plan it found fastest.
    pub fn segment_lookup(
        &self,
        class: &LaunchClass,
        layout: &SegmentLayout,
        mean: u64,
    ) -> Option<(SegmentAlgo, &SegmentEntry)> {
        let key = segment_layout_key(layout);
        let l = (mean.max(1) as f64).log2();
        let e = self
            .segments
            .iter()
            .filter(|e| e.class == *class && e.layout == key)
            .min_by(|a, b| {
                let da = (a.log2_mean as f64 - l).abs();
                let db = (b.log2_mean as f64 - l).abs();
                da.total_cmp(&db).then(a.log2_mean.cmp(&b.log2_mean))
            })?;
        Some((SegmentAlgo::parse(&e.algo).ok()??, e))
    }
    /// The launch classes measured, in order of first appearance.
    pub fn classes(&self) -> Vec<&LaunchClass> {
        let mut out: Vec<&LaunchClass> = Vec::new();
        for e in &self.entries {
            if !out.contains(&&e.class) {
                out.push(&e.class);
            }
        }
        out
    }
}

impl fmt::Display for TuneTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} / {} (driver {}, clreduce {})",
            self.key.platform, self.key.device, self.key.driver, self.key.clreduce
        )?;
        writeln!(f, "measured: {}", self.measured)?;
        writeln!(
            f,
            "{:<28} {:>5}  {:<32} {:<36} {:>10}  {:<32} {:>10} {:>6}",
            "class", "n", "fastest", "geometry", "us", "rule plan", "rule us", "gain"
        )?;
        for e in &self.entries {
            writeln!(
                f,
                "{:<28} {:>5}  {:<32} {:<36} {:>10.1}  {:<32} {:>10.1} {:>5.2}x",
                e.class.to_string(),
                format!("2^{}", e.log2_n),
                e.plan,
                e.geometry.to_string(),
                e.best_ns as f64 / 1e3,
                e.rule_plan,
                e.rule_ns as f64 / 1e3,
                e.rule_ns as f64 / e.best_ns.max(1) as f64
            )?;
        }
        for e in &self.segments {
            writeln!(
                f,
                "{:<28} {:>5}  {:<32} {:<36} {:>10.1}  {:<32} {:>10.1} {:>5.2}x",
                format!("{} {}", e.class, e.layout),
                format!("~2^{}", e.log2_mean),
                format!("segment {}", e.algo),
                e.shape,
                e.best_ns as f64 / 1e3,
                format!("segment {}", e.rule_algo),
                e.rule_ns as f64 / 1e3,
                e.rule_ns as f64 / e.best_ns.max(1) as f64
            )?;
        }
        Ok(())
    }
}

/// Plans with measured data: where `table` covers the request (and was measured on this
/// device), the plan follows it and its reasons say so with the figures; elsewhere the
/// first-use rules and the capability rules decide, as in [`plan`](super::plan). A forced strategy
/// wins over both, an expert geometry (`Request::tuning`) over the table's.
pub fn plan_tuned(caps: &DeviceCaps, table: &TuneTable, req: &Request) -> Result<Plan> {
    super::planned(caps, Some(table), req)
}

/// The strategy that gives `plan`'s steps when forced: both parts where every variable has the
/// same steps, else automatic (a mixed plan, which only the rules give).
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
pub fn strategy_of(plan: &Plan) -> Strategy {
    match plan.vars.first() {
        Some(v0)
            if plan
                .vars
                .iter()
                .all(|v| v.group == v0.group && v.cross == v0.cross) =>
        {
            Strategy::new(v0.group, v0.cross)
        }
        _ => Strategy::AUTO,
    }
}

/// `Strategy` as its command-line text (`tree+atomic`) in the cache file.
mod strategy_text {
    use super::Strategy;
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(s: &Strategy, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(&s.to_string())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Strategy, D::Error> {
        let s = String::deserialize(de)?;
        Strategy::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// `IndexOrder` as a word in the cache file.
mod order_text {
    use super::IndexOrder;
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn name(o: IndexOrder) -> &'static str {
        match o {
            IndexOrder::OnePerItem => "one-per-item",
            IndexOrder::GridStride => "grid-stride",
            IndexOrder::Blocked => "blocked",
            IndexOrder::Contiguous => "contiguous",
        }
    }
    pub fn serialize<S: Serializer>(o: &IndexOrder, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(name(*o))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<IndexOrder, D::Error> {
        let s = String::deserialize(de)?;
        [
            IndexOrder::GridStride,
            IndexOrder::Blocked,
            IndexOrder::Contiguous,
        ]
        .into_iter()
        .find(|o| name(*o) == s)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown index order {s:?}")))
    }
}
