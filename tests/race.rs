//! The race tier: every kernel variant Oclgrind can run goes through the simulator with its
//! data-race, uninitialised-read and API checks on (out-of-bounds accesses and barrier
//! divergence are always checked), in a child `clreduce reduce` process whose stderr is read.
//! A case fails on any Oclgrind diagnostic or a wrong result; a variant Oclgrind cannot run is
//! reported as skipped with the missing capability.
//!
//! The tier is itself checked against broken kernels: `CLREDUCE_KERNELS` points the child at a
//! copy of `kernels/*.cl` with one barrier deleted, and the case must then fail with Oclgrind's
//! data-race report (`the_race_tier_catches_a_missing_*`).

use clreduce::plan::{CrossAlgo, GroupAlgo, Strategy};
use clreduce::{devices, ElemType, Op};
use std::path::{Path, PathBuf};
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
    /// Feature variants (argmin, custom and identity-less ops, several variables, spans):
    /// `clreduce reduce` arguments replacing `--op`, and a label for the name.
    feature: Option<(&'static str, &'static [&'static str])>,
}

impl Case {
    fn name(&self) -> String {
        format!(
            "{} {} {} {}",
            self.strategy,
            self.ty,
            self.feature.map_or(self.op.name(), |(label, _)| label),
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
    run_with_kernels(case, None)
}

/// `run`, with the child reading `common.cl`, `var.cl` and `reduce.cl` from `kernels`
/// (`CLREDUCE_KERNELS`) instead of its embedded copies when given; never from an inherited
/// `CLREDUCE_KERNELS` otherwise.
fn run_with_kernels(case: &Case, kernels: Option<&Path>) -> Result<Option<String>, String> {
    let mut cmd = Command::new(
        std::env::var("CLREDUCE_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_clreduce").to_string()),
    );
    cmd.envs(clreduce::device::env_for_children());
    cmd.args(["reduce", "--device", "Oclgrind", "--seed", "7"])
        .args(["--type", case.ty.name()])
        .args(match case.feature {
            Some((_, args)) => args.to_vec(),
            None => vec!["--op", case.op.name()],
        })
        .args(["--strategy", &case.strategy.to_string()])
        .args(["--n", &case.n.to_string()])
        .env("OCLGRIND_DATA_RACES", "1")
        .env("OCLGRIND_UNINITIALIZED", "1")
        .env("OCLGRIND_CHECK_API", "1")
        .env_remove("CLREDUCE_MASK")
        .env_remove("CLREDUCE_STRATEGY")
        .env_remove("CLREDUCE_TUNE")
        .env_remove("CLREDUCE_KERNELS");
    if let Some(dir) = kernels {
        cmd.env("CLREDUCE_KERNELS", dir);
    }
    if let Some(l) = case.local {
        cmd.args(["--form", "nd-range", "--local", &l.to_string()]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run clreduce: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if let Some(report) = diagnostics(&stderr) {
        return Err(report);
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

/// What Oclgrind reported in `stderr`, if anything: the first diagnostic line, how many lines
/// of each kind, and the first report of each kind (up to 12 lines from its first line).
fn diagnostics(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut kinds: Vec<(&str, usize, usize)> = Vec::new(); // (kind, count, first line index)
    for (i, l) in lines.iter().enumerate() {
        if let Some(kind) = DIAGNOSTICS.iter().find(|d| l.contains(*d)) {
            match kinds.iter_mut().find(|(k, _, _)| k == kind) {
                Some((_, n, _)) => *n += 1,
                None => kinds.push((kind, 1, i)),
            }
        }
    }
    let &(_, _, first) = kinds.first()?;
    let counts: Vec<String> = kinds
        .iter()
        .map(|(k, n, _)| format!("{n} x `{k}`"))
        .collect();
    let mut out = format!(
        "Oclgrind diagnostic: {}\n    (diagnostic lines: {})",
        lines[first].trim(),
        counts.join(", ")
    );
    for &(_, _, at) in &kinds {
        let end = (at + 12).min(lines.len());
        out += &format!("\n    {}", lines[at..end].join("\n    "));
    }
    Some(out)
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
                    feature: None,
                });
            }
        }
    }
    // The feature kernels: (value, index) pairs, flagged (identity-less) and custom
    // accumulators, several variables and spans, under the strategies that apply to them, in
    // one range and two nd_range shapes; the type rotates.
    const FEATURES: [(&str, &[&str]); 7] = [
        ("argmin", &["--op", "argmin"]),
        ("argmax", &["--op", "argmax"]),
        (
            "identity-less max",
            &["--custom", "max(a,b)", "--no-identity"],
        ),
        (
            "custom a+b",
            &["--custom", "a+b", "--identity", "0", "--atomic", "sum"],
        ),
        ("sum,min,max", &["--op", "sum,min,max"]),
        ("span 256 sum", &["--op", "sum", "--span", "256"]),
        ("span 7 max", &["--op", "max", "--span", "7"]),
    ];
    let types = [ElemType::I32, ElemType::F32, ElemType::I64, ElemType::F64];
    let strategies = [
        "auto",
        "tree+last-group",
        "tree+extra-pass",
        "tree+atomic",
        "local-atomic+atomic",
        "local-atomic+last-group",
    ];
    let mut rot = 0;
    for feature in FEATURES {
        for s in strategies {
            for (local, n) in [(None, 4097u64), (Some(96), 96 * 5), (Some(3), 3 * 33)] {
                rot += 1;
                v.push(Case {
                    strategy: Strategy::parse(s).expect("a strategy"),
                    ty: types[rot % types.len()],
                    op: Op::Plus,
                    local,
                    n,
                    feature: Some(feature),
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
    let report = diagnostics(&format!("noise\n{sample}\n\tKernel: clr_main\n")).unwrap();
    assert!(
        report.contains("(diagnostic lines: 1 x `data race`)"),
        "{report}"
    );
    assert!(diagnostics("device:    Oclgrind\ncheck:     OK\n").is_none());
    let _ = CrossAlgo::ALL; // every cross step is covered by Strategy::all_forced()
}

/// A copy of `kernels/*.cl` in a fresh temporary directory, removed on drop.
struct KernelCopy {
    dir: PathBuf,
}

impl KernelCopy {
    fn new(tag: &str) -> KernelCopy {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let dir = std::env::temp_dir().join(format!("clreduce-race-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary kernel directory");
        for name in ["common.cl", "var.cl", "reduce.cl"] {
            std::fs::copy(src.join(name), dir.join(name))
                .unwrap_or_else(|e| panic!("copying {}: {e}", src.join(name).display()));
        }
        KernelCopy { dir }
    }

    /// Deletes the first `barrier` statement that directly follows `after` (whitespace and
    /// closing braces aside) in the part of kernel file `file` from `from` to `to`. Panics if
    /// there is no such pair, so a change to the kernel text fails the test loudly instead of
    /// breaking something else.
    fn delete_barrier(&self, file: &str, (from, to): (&str, &str), after: &str, barrier: &str) {
        let path = self.dir.join(file);
        let text = std::fs::read_to_string(&path).expect("kernel copy");
        let start = text
            .find(from)
            .unwrap_or_else(|| panic!("{file}: `{from}` not found; update this test"));
        let end = start
            + text[start..]
                .find(to)
                .unwrap_or_else(|| panic!("{file}: `{to}` not found after `{from}`"));
        let region = &text[start..end];
        let cut = region
            .match_indices(after)
            .map(|(i, _)| i + after.len())
            .find_map(|i| {
                let rest = &region[i..];
                let skip = rest.len()
                    - rest
                        .trim_start_matches(|c: char| c.is_whitespace() || c == '}')
                        .len();
                rest[skip..]
                    .starts_with(barrier)
                    .then_some(start + i + skip)
            })
            .unwrap_or_else(|| {
                panic!("{file}: no `{after}` followed by `{barrier}` between `{from}` and `{to}`")
            });
        let edited = format!("{}{}", &text[..cut], &text[cut + barrier.len()..]);
        assert_eq!(
            edited.matches(barrier).count() + 1,
            text.matches(barrier).count(),
            "{file}: one `{barrier}` deleted"
        );
        std::fs::write(&path, edited).expect("writing the broken kernel");
    }
}

impl Drop for KernelCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `case` on an intact copy of the kernels (must pass: the copy mechanism alone breaks
/// nothing), then on a copy broken by `mutate` (must fail with an Oclgrind diagnostic that
/// contains `expect`). Returns the failure text.
fn broken_kernel_is_caught(
    tag: &str,
    case: &Case,
    mutate: impl Fn(&KernelCopy),
    expect: &str,
) -> Option<String> {
    if !oclgrind_present() {
        eprintln!("SKIP {tag}: no Oclgrind device (run scripts/setup.sh, source scripts/env.sh)");
        return None;
    }
    let intact = KernelCopy::new(&format!("{tag}-intact"));
    assert_eq!(
        run_with_kernels(case, Some(&intact.dir)),
        Ok(None),
        "{} on an intact copy of the kernels must pass",
        case.name()
    );
    let broken = KernelCopy::new(tag);
    mutate(&broken);
    let why = match run_with_kernels(case, Some(&broken.dir)) {
        Err(why) => why,
        Ok(r) => panic!(
            "{} with the broken kernel was not caught by the race tier ({r:?}); if the child \
             logged `CLREDUCE_KERNELS: using the embedded kernel`, the copy was not read",
            case.name()
        ),
    };
    eprintln!("CAUGHT {tag}: {} -> {why}", case.name());
    assert!(
        why.starts_with("Oclgrind diagnostic:") && why.contains(expect),
        "{}: expected an Oclgrind `{expect}` diagnostic, got: {why}",
        case.name()
    );
    Some(why)
}

#[test]
fn the_race_tier_catches_a_missing_barrier() {
    // The tree work-group step writes lm[lid] and then reads its neighbours' slots: without the
    // barrier between, work-item l reads lm[l + 64] (local 96) before work-item l + 64 wrote it.
    let case = Case {
        strategy: Strategy::new(GroupAlgo::Tree, CrossAlgo::ExtraPass),
        ty: ElemType::I32,
        op: Op::Plus,
        local: Some(96),
        n: 96 * 5,
        feature: None,
    };
    broken_kernel_is_caught(
        "tree-barrier",
        &case,
        |k| {
            k.delete_barrier(
                "var.cl",
                // The tree branch of the work-group step.
                ("VAR(clr_group)(", "#elif VGS == CLR_GS_WG"),
                "lm[lid] = acc;",
                "barrier(CLK_LOCAL_MEM_FENCE);",
            )
        },
        "x `data race`",
    );
}

#[test]
fn the_race_tier_catches_a_missing_last_group_barrier() {
    // Work-item 0 takes the ticket and writes the work-group's `clr_is_last` in local memory;
    // without the barrier after it, the other work-items read it unsynchronised.
    let case = Case {
        strategy: Strategy::new(GroupAlgo::Tree, CrossAlgo::LastGroup),
        ty: ElemType::I32,
        op: Op::Plus,
        local: Some(96),
        n: 96 * 5,
        feature: None,
    };
    broken_kernel_is_caught(
        "last-group-barrier",
        &case,
        |k| {
            k.delete_barrier(
                "reduce.cl",
                ("__local uint clr_is_last;", "if (!clr_is_last) return;"),
                "clr_is_last = (prev == clr_ngroups - 1) ? 1u : 0u;",
                "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
            )
        },
        "x `data race`",
    );
}
