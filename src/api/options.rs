//! Launch options: a forced strategy, the determinism asked for, a geometry override, and
//! whether the device's measurements (the tuning cache) are consulted.

use crate::error::Result;
use crate::plan::{self, Determinism, Strategy};

/// Launch options: a forced strategy and the determinism mode.
///
/// ```
/// use clreduce::{reduction, CrossAlgo, GroupAlgo, Kernel, Op, Options, Queue, Range, Strategy};
/// # fn main() -> clreduce::Result<()> {
/// let queue = Queue::default()?;
/// let x = queue.buffer_from(&[1u64, 2, 3, 4])?;
/// let sum = queue.buffer_from(&[0u64])?;
/// let options = Options::default().strategy(Strategy::new(GroupAlgo::Tree, CrossAlgo::ExtraPass));
/// let ev = queue.parallel_for_reduce_with(
///     Range::new(4),
///     reduction(&sum, Op::Plus),
///     Kernel::new("sum += x[i];").arg("x", &x),
///     options,
/// )?;
/// assert_eq!(ev.plan().unwrap().summary(), "tree+extra-pass");
/// assert_eq!(sum.get(0)?, 10);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// A forced strategy; [`Strategy::AUTO`] (the default) lets the planner choose.
    pub strategy: Strategy,
    /// What floating-point results must be; [`Determinism::Deterministic`] by default.
    pub determinism: Determinism,
    /// Geometry override for tuning experiments (`CLREDUCE_TUNE`); `None` is automatic.
    pub tuning: Option<plan::Tuning>,
    /// Plan without the device's measurements (`clreduce tune`'s cache): the capability and
    /// first-use rules only, for A/B comparisons. The tuner itself launches this way.
    pub ignore_tune_cache: bool,
    /// A forced segment plan for segmented and axis reductions (`CLREDUCE_SEGMENT`:
    /// `item`, `group`, `tiles` or `columns`); `None` chooses by segment length. A plan the
    /// launch cannot run is [`Error::Unsupported`](crate::Error::Unsupported).
    pub segment: Option<plan::SegmentAlgo>,
}

impl Options {
    /// The strategy from `CLREDUCE_STRATEGY` and the geometry override from `CLREDUCE_TUNE`
    /// (automatic where unset), deterministic: what
    /// [`Queue::parallel_for_reduce`](crate::Queue::parallel_for_reduce) uses. A value it
    /// cannot parse is [`Error::UnknownStrategy`](crate::Error::UnknownStrategy) or
    /// [`Error::UnknownName`](crate::Error::UnknownName).
    pub fn from_env() -> Result<Options> {
        Ok(Options {
            strategy: Strategy::from_env()?,
            determinism: Determinism::Deterministic,
            tuning: plan::Tuning::from_env()?,
            ignore_tune_cache: false,
            segment: plan::SegmentAlgo::from_env()?,
        })
    }
    /// Forces a strategy (a launch the device cannot run it for fails with
    /// [`Error::Unsupported`](crate::Error::Unsupported)).
    pub fn strategy(mut self, s: Strategy) -> Options {
        self.strategy = s;
        self
    }
    /// Allows order-dependent float atomics (`Determinism::Relaxed`).
    pub fn relaxed(mut self) -> Options {
        self.determinism = Determinism::Relaxed;
        self
    }
    /// Plans without the device's measurements ([`Options::ignore_tune_cache`]).
    pub fn ignore_tune_cache(mut self) -> Options {
        self.ignore_tune_cache = true;
        self
    }
    /// Exact float sums (`Determinism::Exact`): every `Op::Plus` on an f32 or f64 variable is
    /// the correctly rounded sum, the same bits on every device and plan.
    ///
    /// ```
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
    /// Forces the plan of a segmented or axis reduction ([`Options::segment`]).
    pub fn segment(mut self, algo: plan::SegmentAlgo) -> Options {
        self.segment = Some(algo);
        self
    }
    /// Sets the determinism level.
    pub fn determinism(mut self, d: Determinism) -> Options {
        self.determinism = d;
        self
    }
}
