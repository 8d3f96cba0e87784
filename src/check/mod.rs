//! Host-side checking: seeded inputs, exact and float64 references with their error bounds
//! (`reference`), adversarial inputs for exact sums (`adversarial`), and an evaluator of custom combiner expressions (`expr`). Used by the CLI,
//! the benchmarks and the tests to check device results; not needed to run reductions.
//! Imports only the vocabulary layers (`ops`, `types`, `plan`), never the runtime.

pub mod adversarial;
pub mod expr;
#[cfg(test)]
mod nan_tests;
pub mod overflow;
pub mod ragged;
pub mod reference;
