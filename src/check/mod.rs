//! Test oracles and inputs: exact and float64 references (`reference`), folded with the ops' own
//! host combine (`ops::host`), the bounds a float result must meet (`bounds`, `overflow`),
//! seeded inputs (`inputs`), ragged segment offsets (`ragged`) and adversarial inputs for exact
//! sums (`adversarial`). Used by the CLI, the benchmarks and the tests to check device results,
//! and by the case model (`cases`) with which the tuner checks every candidate's; the launch
//! path (`api`, `multi`, `closure`, `mpi`) never imports it. `adversarial` only exists with
//! `testkit` (or in the crate's unit tests). Imports only the vocabulary layers (`ops`, `types`, `plan`, `exact`),
//! never the runtime.

#[cfg(any(test, feature = "testkit"))]
pub mod adversarial;
pub mod bounds;
pub mod inputs;
#[cfg(test)]
mod nan_tests;
pub mod overflow;
pub mod ragged;
pub mod reference;
