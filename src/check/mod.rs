//! Host-side checking: seeded inputs, exact and float64 references with their error bounds
//! (`reference`), adversarial inputs for exact sums (`adversarial`). Used by the CLI, the
//! benchmarks and the tests to check device results; not needed to run reductions. The
//! evaluator of custom combiner expressions lives with the ops (`ops::expr`).
//! Imports only the vocabulary layers (`ops`, `types`, `plan`), never the runtime.

pub mod adversarial;
pub mod bounds;
pub mod inputs;
#[cfg(test)]
mod nan_tests;
pub mod overflow;
pub mod ragged;
pub mod reference;
