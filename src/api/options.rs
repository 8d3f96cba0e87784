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
    /// Allows order-dependent float atomics (`Determinism::Relaxed`).
    pub fn relaxed(mut self) -> Options {
        self.determinism = Determinism::Relaxed;
        self
    }
    /// Exact float sums (`Determinism::Exact`): every `Op::Plus` on an f32 or f64 variable is
    /// the correctly rounded sum, the same bits on every device and plan.
    ///
    /// ```no_run
    /// use clreduce::{reduction, Kernel, Op, Options, Queue, Range};
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = Queue::default()?;
    /// let x = queue.buffer_from(&[1e8f32, 1.0, -1e8, 0.5])?;
    /// let sum = queue.buffer_from(&[0.0f32])?;
    /// queue.parallel_for_reduce_with(
    ///     Range::new(4),
    ///     reduction(&sum, Op::Plus),
    ///     Kernel::new("sum += x[i];").arg("x", &x),
    ///     Options::default().exact(),
    /// )?;
    /// assert_eq!(sum.get(0)?, 1.5); // a float32 sum in any order would lose the 1.0 or the 0.5
    /// # Ok(()) }
    /// ```
    pub fn exact(mut self) -> Options {
        self.determinism = Determinism::Exact;
        self
    }
    /// Sets the determinism level.
    pub fn determinism(mut self, d: Determinism) -> Options {
        self.determinism = d;
        self
    }
}
