//! The integration tests in one test binary (issue 27, decision 60): each `tests/NAME.rs` below
//! is a module of this crate, so the library's generic code, `tests/common` and the CLI's test
//! helpers are compiled and linked once instead of once per file, and one process's device
//! probes and program cache (Intel's runtime and Oclgrind keep no kernel cache on disk) serve
//! many files. A test's name is `FILE::TEST` (`cargo test --release --test suite matrix::`).
//!
//! Files that need a process of their own stay separate test targets (Cargo.toml): memory.rs
//! (fills device memory), device.rs and reliability.rs (count the process's program compilations),
//! mailbox.rs (sets an environment variable), exact_kit.rs (drives Oclgrind through its own
//! OpenCL context, outside the library's per-device command lock), multi_segments.rs (inside
//! this binary one of its tests aborted in Intel's compiler in 2 of 5 runs, as its own binary in
//! none of 7: decision 60) and mpi.rs (runs under mpirun). The trybuild test of `kernel!` is
//! the macro crate's (macros/tests/ui.rs).
//!
//! `scripts/test.sh` runs this binary as several processes, each with the exact names of one
//! group of modules (`scripts/suite_jobs.py`), two at a time.

// Several files include the same helper files by path (tests/common/cli.rs, files.rs, sample.rs,
// tests/errs/helpers.rs), as each did when it was its own binary: each copy is that file's
// private module.
#![allow(clippy::duplicate_mod)]

#[macro_use]
mod common;

mod bad_input;
mod cli;
mod cli_first_use;
mod cli_segsplit;
mod closures;
mod device_time;
mod errors;
mod errors_input;
mod exact;
mod exact_spec;
mod exact_tail;
mod exact_vector;
mod faults;
mod features;
mod half;
mod hostile;
mod matrix;
mod multi;
mod props;
mod queues;
mod race;
mod segment;
mod segment_aligned;
mod segment_ascan;
mod segment_check;
mod segment_cols;
mod segment_exact;
mod segment_exact_blocks;
mod segment_exact_spec;
mod segment_merge;
mod segment_plans;
mod segment_scan;
mod segment_stream;
mod segment_warp;
mod select;
mod span_large;
mod tune;

/// With `autotests = false` a new `tests/NAME.rs` is built only if this file declares it or
/// Cargo.toml lists it as a test target: a file in neither would never run, silently.
#[test]
fn every_test_file_is_built() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = std::fs::read_to_string(root.join("tests/suite.rs")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        let (Some(stem), Some("rs")) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        let module = suite.lines().any(|l| l.trim() == format!("mod {stem};"));
        let target = manifest.contains(&format!("path = \"tests/{stem}.rs\""));
        if stem != "suite" && !module && !target {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{{{}}}.rs: neither a module of tests/suite.rs nor a [[test]] in Cargo.toml",
        missing.join(",")
    );
}
