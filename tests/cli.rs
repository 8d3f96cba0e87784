//! `clreduce reduce` beyond one built-in scalar: several variables in one launch (`--op
//! sum,min,max`), span reductions (`--span 256`), argmin/argmax, custom combiners with and
//! without an identity (`--custom "a*b" --identity 1`, `--custom "max(a,b)" --no-identity`), a
//! wrong `--atomic` claim caught by the host check (exit 1), and the invalid combinations (exit
//! 2, one line on stderr). Each run is a child process of the CLI (`CLREDUCE_BIN`, else the
//! binary cargo built) on every non-simulator device: PoCL and the Intel CPU runtime here. Sizes
//! are small so the whole file runs in seconds per device.

#[path = "common/cli.rs"]
mod cli_run;
use cli_run::{assert_refused_cleanly, cli};
use clreduce::devices;

/// (index for `--device`, short name) of every device but the simulator (Oclgrind is slow and
/// has its own tier, tests/race.rs).
fn fast_devices() -> Vec<(String, String)> {
    let all =
        devices().expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`");
    let found: Vec<(String, String)> = all
        .iter()
        .filter(|d| !d.is_simulator())
        .map(|d| {
            let p = d.platform();
            let name = if p.contains("Portable Computing Language") {
                "PoCL".to_string()
            } else if p.contains("Intel") {
                "Intel".to_string()
            } else {
                d.label()
            };
            (d.index().to_string(), name)
        })
        .collect();
    for want in ["PoCL", "Intel"] {
        if !found.iter().any(|(_, n)| n == want) {
            eprintln!("SKIP {want}: not installed here");
        }
    }
    assert!(!found.is_empty(), "no non-simulator OpenCL device");
    found
}

/// Runs `clreduce reduce --device D ARGS` on every fast device and expects a pass: exit 0, one
/// `var k:` header and one `check:     OK` per variable, the plan, and the PASS line. Returns
/// the stdout of each device for further checks.
fn passes(args: &[&str], vars: usize) -> Vec<(String, String)> {
    let mut outs = Vec::new();
    for (dev, name) in fast_devices() {
        let mut full = vec!["reduce", "--device", dev.as_str()];
        full.extend_from_slice(args);
        let (code, stdout, stderr) = cli(&full);
        let cmd = format!("clreduce {}", full.join(" "));
        assert_eq!(code, 0, "{name}: {cmd}: exit {code}\n{stdout}\n{stderr}");
        assert!(
            stdout.contains("plan on "),
            "{name}: {cmd}: no plan\n{stdout}"
        );
        assert!(
            stdout.contains("body:      "),
            "{name}: {cmd}: no body\n{stdout}"
        );
        for k in 0..vars {
            assert!(
                stdout.contains(&format!("\nvar {k}:     ")),
                "{name}: {cmd}: no var {k}\n{stdout}"
            );
        }
        assert_eq!(
            stdout.matches("check:     OK").count(),
            vars,
            "{name}: {cmd}\n{stdout}"
        );
        assert!(
            stdout.contains(&format!("PASS:      {vars} of {vars} variable(s) match")),
            "{name}: {cmd}\n{stdout}"
        );
        assert!(!stdout.contains("MISMATCH"), "{name}: {cmd}\n{stdout}");
        eprintln!("{name}: {cmd}: PASS");
        outs.push((name, stdout));
    }
    outs
}

#[test]
fn three_variables_in_one_launch() {
    for (name, out) in passes(&["--op", "sum,min,max", "--type", "f32", "--n", "10007"], 3) {
        assert!(
            out.contains("body:      r0 += x[i]; combine(r1, x[i]); combine(r2, x[i]);"),
            "{name}\n{out}"
        );
        // One plan: one launch for the three variables.
        assert_eq!(out.matches("plan on ").count(), 1, "{name}\n{out}");
        for (k, op) in ["sum", "min", "max"].iter().enumerate() {
            assert!(
                out.contains(&format!("var {k}:     {op} f32 -> ")),
                "{name}\n{out}"
            );
        }
    }
    // Integers, the nd_range form and initialize_to_identity.
    passes(
        &[
            "--op",
            "sum,min,max",
            "--type",
            "i64",
            "--form",
            "nd-range",
            "--n",
            "960",
            "--local",
            "96",
            "--init-identity",
        ],
        3,
    );
}

#[test]
fn span_of_256_bins() {
    for (name, out) in passes(
        &[
            "--span", "256", "--op", "sum", "--type", "i32", "--n", "20011",
        ],
        1,
    ) {
        assert!(
            out.contains("check:     OK (256 of 256 bins; exact)"),
            "{name}\n{out}"
        );
        assert!(out.contains("span of 256 ("), "{name}\n{out}");
    }
    // Float per-bin sums are checked within a bound.
    for (name, out) in passes(
        &[
            "--span", "256", "--op", "sum", "--type", "f32", "--n", "20011",
        ],
        1,
    ) {
        assert!(
            out.contains("256 of 256 bins; largest error/bound"),
            "{name}\n{out}"
        );
    }
}

#[test]
fn argmin_and_argmax() {
    for (name, out) in passes(&["--op", "argmin", "--type", "i32", "--n", "20011"], 1) {
        // The input has ties: the lowest index must win.
        assert!(
            out.contains("ties go to the lowest index"),
            "{name}: no ties in the input\n{out}"
        );
        assert!(out.contains("value and index exact"), "{name}\n{out}");
    }
    passes(
        &[
            "--op",
            "argmax",
            "--type",
            "f64",
            "--n",
            "960",
            "--form",
            "nd-range",
            "--local",
            "96",
            "--init-identity",
        ],
        1,
    );
}

/// `clreduce explain` takes the same op list as `reduce` (argmin/argmax included) and prints one
/// plan line per variable without running anything.
#[test]
fn explain_takes_the_reduce_op_list() {
    for (dev, name) in fast_devices() {
        let args = [
            "explain",
            "--device",
            &dev,
            "--op",
            "sum,argmin,argmax",
            "--type",
            "i64",
            "--n",
            "1000",
        ];
        let (code, stdout, stderr) = cli(&args);
        assert_eq!(code, 0, "{name}: exit {code}\n{stdout}\n{stderr}");
        for want in ["var 0: sum i64", "var 1: argmin i64", "var 2: argmax i64"] {
            assert!(stdout.contains(want), "{name}: no {want:?}\n{stdout}");
        }
    }
    let (code, _, stderr) = cli(&["explain", "--op", "sum,median"]);
    assert_eq!(code, 2, "an unknown op is a usage error\n{stderr}");
    assert!(stderr.contains("unknown op \"median\""), "{stderr}");
}

#[test]
fn custom_product_with_identity() {
    for ty in ["i32", "f32"] {
        for (name, out) in passes(
            &[
                "--custom",
                "a*b",
                "--identity",
                "1",
                "--type",
                ty,
                "--n",
                "20011",
            ],
            1,
        ) {
            // Product data: mostly ones, so the product neither vanishes nor overflows.
            assert!(out.contains("generated for prod"), "{name}\n{out}");
            assert!(
                out.contains(&format!("var 0:     custom(a*b) {ty} -> ")),
                "{name}\n{out}"
            );
            if ty == "f32" {
                assert!(out.contains("bound (n+2)*u*|ref|"), "{name}\n{out}");
            } else {
                assert!(out.contains("check:     OK (exact)"), "{name}\n{out}");
            }
        }
    }
}

#[test]
fn custom_max_without_identity() {
    for (name, out) in passes(
        &[
            "--custom",
            "max(a,b)",
            "--no-identity",
            "--type",
            "i64",
            "--n",
            "20011",
        ],
        1,
    ) {
        assert!(
            out.contains("var 0:     custom(max(a,b), no identity) i64 -> "),
            "{name}\n{out}"
        );
    }
    // With built-in variables in the same launch.
    passes(
        &[
            "--op",
            "sum,argmin",
            "--custom",
            "max(a,b)",
            "--no-identity",
            "--type",
            "u32",
            "--n",
            "5003",
        ],
        3,
    );
}

/// A custom combiner falsely declared as sum (`--atomic sum`) with atomics forced: the host
/// reference evaluates the expression, so the check fails and the exit code is 1.
#[test]
fn wrong_atomic_claim_is_a_mismatch() {
    for (dev, name) in fast_devices() {
        let args = [
            "reduce",
            "--device",
            dev.as_str(),
            "--custom",
            "a*b",
            "--identity",
            "1",
            "--atomic",
            "sum",
            "--strategy",
            "tree+atomic",
            "--type",
            "i32",
            "--n",
            "5003",
        ];
        let (code, stdout, stderr) = cli(&args);
        assert_eq!(code, 1, "{name}: exit {code}\n{stdout}\n{stderr}");
        assert!(stdout.contains("check:     MISMATCH"), "{name}\n{stdout}");
        assert!(
            stdout.contains("FAIL:      1 of 1 variable(s) differ"),
            "{name}\n{stdout}"
        );
        assert!(
            stderr.contains("warning: --atomic sum: `a*b` does not compute sum"),
            "{name}\n{stderr}"
        );
    }
}

#[test]
fn invalid_combinations_are_one_line_errors() {
    let cases: &[(&[&str], &str)] = &[
        // The library's own refusals.
        (
            &["--custom", "max(a,b)", "--no-identity", "--init-identity"],
            "has no known identity for f32 and none was given; initialize_to_identity",
        ),
        (
            &["--span", "256", "--custom", "max(a,b)", "--no-identity"],
            "a span reduction starts its work-group copies at the identity",
        ),
        (
            &["--span", "0"],
            "a span reduction needs at least one element",
        ),
        (&["--op", "sum,bogus"], "unknown op \"bogus\""),
        // What the library never sees.
        (&["--span", "256", "--op", "argmin"], "--span with argmin"),
        (&["--custom", "a*b"], "--custom needs --identity"),
        (
            &["--custom", "a*b", "--identity", "1", "--no-identity"],
            "exclude each other",
        ),
        (&["--identity", "1"], "belongs to a custom combiner"),
        (&["--no-identity"], "belongs to a custom combiner"),
        (
            &["--custom", "a*b", "--identity", "0"],
            "is not an identity",
        ),
        (
            &["--custom", "a*b", "--identity", "1.5", "--type", "i32"],
            "is not a i32 value",
        ),
        (&["--custom", "a+", "--identity", "0"], "--custom \"a+\""),
        (
            &["--custom", "a%b", "--identity", "0", "--type", "f32"],
            "needs integer operands",
        ),
        (&["--type", "f16"], "f16 is a storage type"),
    ];
    for ((dev, name), (extra, want)) in fast_devices()
        .iter()
        .flat_map(|d| cases.iter().map(move |c| (d, c)))
    {
        let mut args = vec!["reduce", "--device", dev.as_str(), "--n", "1000"];
        args.extend_from_slice(extra);
        let cmd = format!("clreduce {}", args.join(" "));
        let (code, stdout, stderr) = cli(&args);
        assert_eq!(code, 2, "{name}: {cmd}: exit {code}\n{stdout}\n{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: {cmd}: not one line:\n{stderr}");
        assert!(
            lines[0].starts_with("clreduce: error: ") && lines[0].contains(want),
            "{name}: {cmd}: {:?} lacks {want:?}",
            lines[0]
        );
        assert_refused_cleanly(&format!("{name}: {cmd}"), &stdout, &stderr);
        eprintln!("{name}: {cmd} -> exit 2: {}", lines[0]);
    }
}
