//! Launch options: a forced strategy, the determinism asked for, a geometry override, and
//! whether the device's measurements (the tuning cache) are consulted.

use crate::error::Result;
use crate::plan::{self, Determinism, Strategy};

/// Launch options: a forced strategy and the determinism mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub strategy: Strategy,
    pub determinism: Determinism,
    /// Geometry override for tuning experiments (`CLREDUCE_TUNE`); `None` is automatic.
    pub tuning: Option<plan::Tuning>,
    /// Plan without the device's measurements (`clreduce tune`'s cache): the capability and
    /// first-use rules only, for A/B comparisons. The tuner itself launches this way.
    pub ignore_tune_cache: bool,
}

impl Options {
    /// Strategy from `CLREDUCE_STRATEGY`, deterministic.
    pub fn from_env() -> Result<Options> {
        Ok(Options {
            strategy: Strategy::from_env()?,
            determinism: Determinism::Deterministic,
            tuning: plan::Tuning::from_env()?,
            ignore_tune_cache: false,
        })
    }
    pub fn strategy(mut self, s: Strategy) -> Options {
        self.strategy = s;
        self
    }
    pub fn relaxed(mut self) -> Options {
        self.determinism = Determinism::Relaxed;
        self
    }
    /// Plans without the device's measurements ([`Options::ignore_tune_cache`]).
    pub fn ignore_tune_cache(mut self) -> Options {
        self.ignore_tune_cache = true;
        self
    }
}
