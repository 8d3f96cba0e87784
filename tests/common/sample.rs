//! How much of the large test matrices a run takes. `CLREDUCE_FULL_MATRIX=1` runs all of them
//! (scripts/gpu.sh's `run tests` sets it; so can CI); without it a test takes a seeded sample
//! that still holds every op, type, strategy and form it names (each test says how), so the
//! README's test command stays short. The seed is fresh per process unless
//! `CLREDUCE_SAMPLE_SEED` names one; every sampled test prints it, so a failure can be replayed
//! with exactly the same cases. Included by `tests/common/mod.rs` and `tests/exact_kit.rs`.

use std::sync::OnceLock;

/// Whether this run takes the whole matrix (`CLREDUCE_FULL_MATRIX=1`).
pub fn full_matrix() -> bool {
    std::env::var("CLREDUCE_FULL_MATRIX").is_ok_and(|v| v == "1")
}

/// This process's sample seed: `CLREDUCE_SAMPLE_SEED` if set, otherwise drawn from the clock.
pub fn sample_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        std::env::var("CLREDUCE_SAMPLE_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
                    % 1_000_000_007
            })
    })
}

/// A sampled test's first line (in its captured output, shown when it fails): the seed, how
/// to replay it and how to run everything.
pub fn announce_sample(test: &str) {
    if full_matrix() {
        eprintln!("SAMPLE {test}: the full matrix (CLREDUCE_FULL_MATRIX=1)");
    } else {
        eprintln!(
            "SAMPLE {test}: seed {s} (CLREDUCE_SAMPLE_SEED={s} replays this sample, \
             CLREDUCE_FULL_MATRIX=1 runs the full matrix)",
            s = sample_seed()
        );
    }
}

/// A number from the seed and a name (FNV-1a), so that tests of one run take different slices.
pub fn sample_hash(name: &str) -> u64 {
    name.bytes()
        .fold(0xcbf2_9ce4_8422_2325 ^ sample_seed(), |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        })
}
