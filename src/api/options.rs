//! Launch options: a forced strategy, the determinism asked for, a geometry override.

use crate::error::Result;
use crate::plan::{self, Determinism, Strategy};

/// Launch options: a forced strategy and the determinism mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub strategy: Strategy,
    pub determinism: Determinism,
    /// Geometry override for tuning experiments (`CLREDUCE_TUNE`); `None` is automatic.
    pub tuning: Option<plan::Tuning>,
}

impl Options {
    /// Strategy from `CLREDUCE_STRATEGY`, deterministic.
    pub fn from_env() -> Result<Options> {
        Ok(Options {
            strategy: Strategy::from_env()?,
            determinism: Determinism::Deterministic,
            tuning: plan::Tuning::from_env()?,
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
}
