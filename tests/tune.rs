//! Measured planning end to end (issue 19), through the CLI on every non-simulator device with
//! a test's own tuning cache (`CLREDUCE_TUNE_CACHE` in a temporary folder):
//! - `clreduce tune` on a tiny subset (two cases, two sizes, three rounds) writes a cache whose
//!   table is keyed for the device, `tune --show` and `devices` report it, and `explain` follows
//!   it ("measured: ...") while `reduce` still passes its host check;
//! - segmented cases fill the table's segment entries, which a segmented launch then follows;
//! - exact sums are a class of their own, measured with their hot forms;
//! - a corrupt cache, a stale table and an unwritable path: launches run as without a cache
//!   (with a warning on stderr), `devices` and `tune --show` say why, `tune` fails with exit 2
//!   and one line.

#[path = "common/cli.rs"]
mod cli_run;
use cli_run::cli_with;
use clreduce::{devices, tune_cache};
use std::path::PathBuf;

/// (index, label) of every device but the simulator.
fn fast_devices() -> Vec<(String, clreduce::Device)> {
    let all =
        devices().expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`");
    let v: Vec<_> = all
        .iter()
        .filter(|d| !d.is_simulator())
        .map(|d| (d.index().to_string(), d.clone()))
        .collect();
    assert!(!v.is_empty(), "no non-simulator OpenCL device");
    v
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("clreduce-tune-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d.join("tuning.json")
}

/// The table the cache at `cache` holds for device `d` (a test failure if it holds none).
fn tuned(cache: &std::path::Path, d: &clreduce::Device) -> clreduce::plan::TuneTable {
    match tune_cache::status_at(cache, &d.caps().unwrap()) {
        tune_cache::Status::Tuned(t) => t,
        s => panic!("{}: {s:?}", d.label()),
    }
}

#[test]
fn tune_writes_a_cache_the_planner_follows() {
    let cache = temp("tune");
    let c = cache.to_str().unwrap();
    let env = [("CLREDUCE_TUNE_CACHE", c)];
    for (dev, d) in fast_devices() {
        let t0 = std::time::Instant::now();
        let (code, out, err) = cli_with(
            &[
                "tune",
                "--device",
                &dev,
                "--cases",
                "i32-sum,u32-hist256",
                "--sizes",
                "2^10,2^16",
                "--rounds",
                "3",
            ],
            &env,
        );
        assert_eq!(code, 0, "{}: exit {code}\n{out}\n{err}", d.label());
        assert!(out.contains(&format!("saved to {c}")), "{out}");
        assert!(!err.to_lowercase().contains("panicked"), "{err}");
        eprintln!(
            "{}: tune on 2 cases x 2 sizes took {:.1} s",
            d.label(),
            t0.elapsed().as_secs_f64()
        );
        // The cache holds this device's table, keyed for this driver and clreduce, with every
        // point: two classes at two sizes, each with its figures.
        let t = tuned(&cache, &d);
        assert_eq!(t.entries.len(), 4, "{t}");
        for e in &t.entries {
            assert!(e.best_ns > 0 && e.rule_ns > 0 && e.tried >= 2, "{e:?}");
            assert!(
                e.best_ns <= e.rule_ns,
                "the fastest is at most the rules' plan: {e:?}"
            );
        }
        let (code, show, _) = cli_with(&["tune", "--show", "--device", &dev], &env);
        assert_eq!(code, 0);
        assert!(show.contains(": tuned (4 points"), "{show}");
        assert!(
            show.contains("i32 sum") && show.contains("u32 sum span 2^8"),
            "{show}"
        );
        // explain follows the table: each step's reason carries the measurement.
        let (code, plan, err) = cli_with(
            &[
                "explain", "--device", &dev, "--op", "sum", "--type", "i32", "--n", "65536",
            ],
            &env,
        );
        assert_eq!(code, 0, "{err}");
        assert!(plan.contains("measured: "), "{plan}");
        assert!(plan.contains("at 2^16 on this device"), "{plan}");
        // And a launch on that plan still checks against the host.
        let (code, out, err) = cli_with(
            &[
                "reduce", "--device", &dev, "--op", "sum", "--type", "i32", "--n", "65536",
            ],
            &env,
        );
        assert_eq!(code, 0, "{out}\n{err}");
        assert!(out.contains("measured: ") && out.contains("PASS:"), "{out}");
    }
    let (code, devs, _) = cli_with(&["devices"], &env);
    assert_eq!(code, 0);
    assert!(devs.contains("tuned (4 points)"), "{devs}");
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

/// Exact sums are their own launch class (issue 28): `tune` measures their hot forms beside
/// the strategies, an exact launch follows the entry (its bits still checked), and the
/// deterministic sum of the same type does not.
#[test]
fn tune_covers_exact_sums() {
    let cache = temp("exact");
    let c = cache.to_str().unwrap();
    let env = [("CLREDUCE_TUNE_CACHE", c)];
    for (dev, d) in fast_devices() {
        let (code, out, err) = cli_with(
            &[
                "tune",
                "--device",
                &dev,
                "--cases",
                "f32-sum-exact",
                "--sizes",
                "2^12",
                "--rounds",
                "3",
                "--verbose",
            ],
            &env,
        );
        assert_eq!(code, 0, "{}: exit {code}\n{out}\n{err}", d.label());
        let t = tuned(&cache, &d);
        let e = &t.entries[0];
        assert!(
            e.class.exact && e.class.to_string() == "f32 sum exact",
            "{t}"
        );
        // The rules' plan and at least one other hot form were timed.
        assert!(out.contains(", hot "), "{out}");
        let (code, plan, err) = cli_with(
            &[
                "explain",
                "--device",
                &dev,
                "--op",
                "sum",
                "--type",
                "f32",
                "--n",
                "4096",
                "--determinism",
                "exact",
            ],
            &env,
        );
        assert_eq!(code, 0, "{err}");
        assert!(plan.contains("at 2^12 on this device"), "{plan}");
        let (code, plain, _) = cli_with(
            &[
                "explain", "--device", &dev, "--op", "sum", "--type", "f32", "--n", "4096",
            ],
            &env,
        );
        assert_eq!(code, 0);
        assert!(!plain.contains("measured: "), "{plain}");
        let (code, out, err) = cli_with(
            &[
                "reduce",
                "--device",
                &dev,
                "--op",
                "sum",
                "--type",
                "f32",
                "--n",
                "4096",
                "--determinism",
                "exact",
            ],
            &env,
        );
        assert_eq!(code, 0, "{out}\n{err}");
        assert!(out.contains("measured: ") && out.contains("PASS:"), "{out}");
    }
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

#[test]
fn corrupt_stale_and_unwritable_caches() {
    let (dev, d) = fast_devices().remove(0);
    let caps = d.caps().unwrap();
    let cache = temp("bad");
    let c = cache.to_str().unwrap();
    let env = [("CLREDUCE_TUNE_CACHE", c)];
    let reduce = [
        "reduce", "--device", &dev, "--op", "sum", "--type", "i32", "--n", "10000",
    ];
    // Garbage: ignored with a warning, the launch passes with the rules' plan.
    std::fs::write(&cache, b"\x00\x01 not json {{{").unwrap();
    let (code, out, err) = cli_with(&reduce, &env);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("PASS:") && !out.contains("measured: "),
        "{out}"
    );
    assert!(
        err.contains("tuning cache ignored") && err.contains("not a clreduce tuning file"),
        "{err}"
    );
    let (_, show, _) = cli_with(&["tune", "--show", "--device", &dev], &env);
    assert!(show.contains("corrupt tuning cache ignored"), "{show}");
    let (_, devs, _) = cli_with(&["devices"], &env);
    assert!(devs.contains("corrupt cache (ignored)"), "{devs}");
    // A table from another driver: stale, ignored with the reason.
    let mut key = tune_cache::key_of(&caps);
    key.driver = "0.0-other".into();
    let stale = clreduce::plan::TuneTable {
        key,
        measured: "test".into(),
        entries: Vec::new(),
        segments: Vec::new(),
    };
    std::fs::remove_file(&cache).unwrap();
    tune_cache::save_at(&cache, &stale).unwrap();
    let (code, out, err) = cli_with(&reduce, &env);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("driver 0.0-other"), "{err}");
    let (_, show, _) = cli_with(&["tune", "--show", "--device", &dev], &env);
    assert!(show.contains("stale tuning ignored"), "{show}");
    // A cache path that cannot be written: tune fails with one line and exit 2.
    let blocker = cache.with_file_name("blocker");
    std::fs::write(&blocker, "a file").unwrap();
    let bad = blocker.join("tuning.json");
    let (code, out, err) = cli_with(
        &[
            "tune", "--device", &dev, "--cases", "i32-sum", "--sizes", "2^10", "--rounds", "1",
        ],
        &[("CLREDUCE_TUNE_CACHE", bad.to_str().unwrap())],
    );
    assert_eq!(code, 2, "{out}\n{err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("clreduce: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with("clreduce: error: tuning cache "),
        "{err}"
    );
    assert!(errors[0].contains("Not a directory"), "{err}");
    assert!(!err.to_lowercase().contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

/// Issue 26: `clreduce tune` measures segmented cases (rows at their R x C, ragged ones at the
/// largest size) into the table's segment entries, `tune --show` lists them, and a segmented
/// launch of the same shape follows the measured plan and still checks against the host; an
/// exact case is refused before anything runs.
#[test]
fn tune_covers_segmented_launches() {
    let cache = temp("segments");
    let c = cache.to_str().unwrap();
    let env = [("CLREDUCE_TUNE_CACHE", c)];
    for (dev, d) in fast_devices() {
        let (code, out, err) = cli_with(
            &[
                "tune",
                "--device",
                &dev,
                "--cases",
                "f32-rows-1024x16,f32-ragged-64",
                "--sizes",
                "2^14",
                "--rounds",
                "3",
            ],
            &env,
        );
        assert_eq!(code, 0, "{}: exit {code}\n{out}\n{err}", d.label());
        assert!(out.contains("2 segmented points"), "{out}");
        let t = tuned(&cache, &d);
        assert!(t.entries.is_empty(), "{t}");
        let layouts: Vec<&str> = t.segments.iter().map(|e| e.layout.as_str()).collect();
        assert_eq!(layouts, ["rows", "offsets"], "{t}");
        for e in &t.segments {
            assert!(
                e.best_ns > 0 && e.best_ns <= e.rule_ns && e.tried >= 2,
                "{e:?}"
            );
            assert!(
                clreduce::SegmentAlgo::parse(&e.algo).unwrap().is_some(),
                "{e:?}"
            );
        }
        assert_eq!(
            (t.segments[0].log2_mean, t.segments[1].log2_mean),
            (4, 6),
            "{t}"
        );
        let (_, show, _) = cli_with(&["tune", "--show", "--device", &dev], &env);
        assert!(
            show.contains("f32 sum rows") && show.contains("f32-ragged-64"),
            "{show}"
        );
        let (code, out, err) = cli_with(
            &["reduce", "--device", &dev, "--rows", "1024", "--cols", "16"],
            &env,
        );
        assert_eq!(code, 0, "{out}\n{err}");
        assert!(
            out.contains(&format!("plan {}\n", t.segments[0].algo)),
            "{}: the measured plan {}: {out}",
            d.label(),
            t.segments[0].algo
        );
        assert!(out.contains("ok (1024 results checked)"), "{out}");
        let (code, _, err) = cli_with(&["tune", "--device", &dev, "--cases", "f16-sum"], &env);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("no class for 16-bit input"), "{err}");
    }
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}
