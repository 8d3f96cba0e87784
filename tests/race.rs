//! The race tier: every kernel variant Oclgrind can run goes through the simulator with its
//! data-race, uninitialised-read and API checks on (out-of-bounds accesses and barrier
//! divergence are always checked), in a child `clreduce reduce` process whose stderr is read.
//! A case fails on any Oclgrind diagnostic or a wrong result; a variant Oclgrind cannot run is
//! reported as skipped with the missing capability.

use clreduce::plan::{CrossAlgo, GroupAlgo, Strategy};
use clreduce::{devices, ElemType, Op};
use std::process::Command;

/// Lines Oclgrind prints when a check fires.
const DIAGNOSTICS: [&str; 9] = [
    "data race",
    "Invalid read",
    "Invalid write",
    "Uninitialized",
    "uninitialized",
    "divergence",
    "Oclgrind - ",
    "out-of-bounds",
    "Unaligned",
];

struct Case {
    strategy: Strategy,
    ty: ElemType,
    op: Op,
    /// `None`: range form with n; `Some(local)`: nd_range with global = n.
    local: Option<usize>,
    n: u64,
}

impl Case {
    fn name(&self) -> String {
        format!(
            "{} {} {} {}",
            self.strategy,
            self.ty,
            self.op,
            match self.local {
                Some(l) => format!("nd_range global={} local={l}", self.n),
                None => format!("range n={}", self.n),
            }
        )
    }
}

fn oclgrind_present() -> bool {
    devices()
        .map(|d| d.iter().any(|d| d.is_simulator()))
        .unwrap_or(false)
}

/// Runs one case under Oclgrind; Ok(None) passed, Ok(Some(reason)) skipped, Err(why) failed.
fn run(case: &Case) -> Result<Option<String>, String> {
    let mut cmd = Command::new(
        std::env::var("CLREDUCE_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_clreduce").to_string()),
    );
    cmd.args(["reduce", "--device", "Oclgrind", "--seed", "7"])
        .args(["--type", case.ty.name(), "--op", case.op.name()])
        .args(["--strategy", &case.strategy.to_string()])
        .args(["--n", &case.n.to_string()])
        .env("OCLGRIND_DATA_RACES", "1")
        .env("OCLGRIND_UNINITIALIZED", "1")
        .env("OCLGRIND_CHECK_API", "1")
        .env_remove("CLREDUCE_MASK")
        .env_remove("CLREDUCE_STRATEGY")
        .env_remove("CLREDUCE_TUNE");
    if let Some(l) = case.local {
        cmd.args(["--form", "nd-range", "--local", &l.to_string()]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run clreduce: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if let Some(line) = stderr
        .lines()
        .find(|l| DIAGNOSTICS.iter().any(|d| l.contains(d)))
    {
        let excerpt: String = stderr.lines().take(12).collect::<Vec<_>>().join("\n    ");
        return Err(format!("Oclgrind diagnostic: {line}\n    {excerpt}"));
    }
    if stderr.contains("cannot run on") {
        let reason = stderr
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("clreduce: error: ");
        return Ok(Some(reason.to_string()));
    }
    if out.status.success() && stdout.contains("check:     OK") {
        Ok(None)
    } else {
        Err(format!(
            "exit {:?}\n  stdout: {stdout}\n  stderr: {stderr}",
            out.status.code()
        ))
    }
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for strategy in Strategy::all_forced() {
        for ty in [ElemType::I32, ElemType::F32, ElemType::I64, ElemType::F64] {
            for (op, local, n) in [
                (Op::Plus, None, 4097u64),
                (Op::Maximum, Some(3), 3 * 33),
                (Op::Plus, Some(96), 96 * 5),
                (Op::Minimum, Some(1), 17),
            ] {
                v.push(Case {
                    strategy,
                    ty,
                    op,
                    local,
                    n,
                });
            }
        }
    }
    v
}

#[test]
fn every_kernel_variant_is_race_free_under_oclgrind() {
    if !oclgrind_present() {
        eprintln!(
            "SKIP race tier: no Oclgrind device (run scripts/setup.sh, source scripts/env.sh)"
        );
        return;
    }
    let cases = cases();
    let (mut passed, mut failed, mut skipped) = (0, Vec::new(), 0);
    // Oclgrind serializes kernels process-wide; separate processes run side by side.
    let results: Vec<(String, Result<Option<String>, String>)> = std::thread::scope(|s| {
        let chunks: Vec<&[Case]> = cases.chunks(cases.len().div_ceil(4)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || chunk.iter().map(|c| (c.name(), run(c))).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("race worker"))
            .collect()
    });
    for (name, r) in results {
        match r {
            Ok(None) => passed += 1,
            Ok(Some(reason)) => {
                skipped += 1;
                eprintln!("SKIP Oclgrind {name}: {reason}");
            }
            Err(why) => {
                eprintln!("FAIL Oclgrind {name}: {why}");
                failed.push(name);
            }
        }
    }
    for g in [GroupAlgo::WgReduce, GroupAlgo::SgReduce] {
        eprintln!(
            "SKIP Oclgrind {g}+*: Oclgrind 21.10 is OpenCL 1.2 without work-group collectives or sub-groups; \
             these kernels run in the matrix on the Intel CPU runtime and (PTX shuffles) on NVIDIA"
        );
    }
    eprintln!(
        "race tier: {passed} passed, {} failed, {skipped} skipped",
        failed.len()
    );
    assert!(failed.is_empty(), "race tier failures: {failed:#?}");
    assert!(passed > 0, "the race tier ran nothing");
}

#[test]
fn the_diagnostic_scan_catches_a_race() {
    // The scan itself must not be a test that cannot fail: a known Oclgrind race report.
    let sample = "Read-write data race at global memory address 0x3000000000000";
    assert!(DIAGNOSTICS.iter().any(|d| sample.contains(d)));
    let _ = CrossAlgo::ALL; // every cross step is covered by Strategy::all_forced()
}
