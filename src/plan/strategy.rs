//! The names of the algorithms a plan chooses between: the work-group step ([`GroupAlgo`]), the
//! cross-group step ([`CrossAlgo`]), a forced [`Strategy`] and the [`Determinism`] asked for.

use crate::error::{Error, Result};
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
    /// Every work-group step, in declaration order.
    pub const ALL: [GroupAlgo; 4] = [
        GroupAlgo::Tree,
        GroupAlgo::WgReduce,
        GroupAlgo::SgReduce,
        GroupAlgo::LocalAtomic,
    ];
    /// Its name in plans, `CLREDUCE_STRATEGY` and `--strategy`: `tree`, `wg-reduce`,
    /// `sg-reduce` or `local-atomic`.
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
    /// Every cross-group step, in declaration order.
    pub const ALL: [CrossAlgo; 3] = [
        CrossAlgo::Atomic,
        CrossAlgo::LastGroup,
        CrossAlgo::ExtraPass,
    ];
    /// Its name in plans, `CLREDUCE_STRATEGY` and `--strategy`: `atomic`, `last-group` or
    /// `extra-pass`.
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
    /// The work-group step; `None`: the planner picks it.
    pub group: Option<GroupAlgo>,
    /// The cross-group step; `None`: the planner picks it.
    pub cross: Option<CrossAlgo>,
}

impl Strategy {
    /// Nothing forced: the planner picks both steps (the default).
    pub const AUTO: Strategy = Strategy {
        group: None,
        cross: None,
    };

    /// Both steps forced. A launch fails with [`Error::Unsupported`] when the device cannot
    /// run them.
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

/// What a floating-point result must be: run-to-run reproducible (the default), free to vary
/// with the order of float atomics (relaxed), or the exact sum rounded once (exact).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Determinism {
    /// The same bits on every run of the same plan on the same device; different plans,
    /// devices or work-group shapes may round differently.
    #[default]
    Deterministic,
    /// Float atomics allowed: the order of float additions, and so the rounding, may vary from
    /// run to run.
    Relaxed,
    /// Float sums (`Op::Plus` on f32 and f64 variables) are computed exactly and rounded once to
    /// nearest-even: the correctly rounded sum, the same bits on every device, plan, work-group
    /// shape and run. Every other variable of the launch must be order-independent (integers,
    /// min, max, argmin, argmax, ...); an order-dependent float op is an error.
    Exact,
}

impl Determinism {
    /// Every level, for the CLI.
    pub const ALL: [Determinism; 3] = [
        Determinism::Deterministic,
        Determinism::Relaxed,
        Determinism::Exact,
    ];
    /// `deterministic`, `relaxed` or `exact`.
    pub fn name(self) -> &'static str {
        match self {
            Determinism::Deterministic => "deterministic",
            Determinism::Relaxed => "relaxed",
            Determinism::Exact => "exact",
        }
    }
    /// Parses a level by its name.
    pub fn parse(s: &str) -> Result<Determinism> {
        Determinism::ALL
            .into_iter()
            .find(|d| d.name() == s.trim())
            .ok_or_else(|| Error::UnknownName {
                kind: "determinism",
                name: s.to_string(),
                known: Determinism::ALL.iter().map(|d| d.name()).collect(),
            })
    }
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
