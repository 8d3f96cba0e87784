//! The command line's contract under hostile input (issue 30; design/errors.md, "The command
//! line's contract"): every run ends (a timeout catches a hang) with exit status 0, 1 or 2;
//! on 2 stderr holds exactly one `clreduce: error:` line (further lines only indented under
//! it, besides `tracing` warnings), on 0 and 1 none; nothing panics; stderr carries no ANSI
//! colour when it is not a terminal; the user's input files are unchanged.
//!
//! - `corpus`: the inputs that once broke the contract (tests/hostile/corpus.txt), each with
//!   the status it must now give.
//! - proptest over generated arguments, environment values, input files (`.npy` and raw),
//!   `--custom` expressions and tuning-cache files, bounded to a few dozen runs each.
//!
//! New surfaces (segment offsets, `--rows/--cols/--axis`, f16/bf16 data) get the same checks by
//! adding their flags to `FLAGS` below and their broken inputs to the corpus.

#[path = "common/cli.rs"]
mod cli_run;

use clreduce::plan::{LaunchClass, OpClass, TuneEntry, TuneTable, TunedGeometry};
use proptest::prelude::*;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Seconds one run may take before it counts as a hang.
const TIMEOUT_S: &str = "60";

/// Where the run's stdout goes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Out {
    /// A pipe this test reads to the end.
    Pipe,
    /// A pipe whose reader closed before the run wrote (EPIPE).
    Closed,
    /// /dev/full (ENOSPC).
    Full,
}

/// What a run did.
#[derive(Debug)]
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

fn exe() -> String {
    std::env::var("CLREDUCE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_clreduce").to_string())
}

/// A folder of this process's own.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("clreduce-hostile-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// Runs the binary under `timeout` with a clean clreduce environment (and a tuning cache
/// path of its own unless `env` names one) plus `env`.
fn run(args: &[String], env: &[(String, String)], out: Out) -> Ran {
    let mut c = Command::new("timeout");
    c.args(["-k", "5", TIMEOUT_S]).arg(exe()).args(args);
    c.envs(clreduce::device::env_for_children());
    for k in [
        "CLREDUCE_DEVICE",
        "CLREDUCE_MASK",
        "CLREDUCE_STRATEGY",
        "CLREDUCE_TUNE",
        "CLREDUCE_LOG",
        "CLREDUCE_KERNELS",
        "RUST_BACKTRACE",
    ] {
        c.env_remove(k);
    }
    c.env("CLREDUCE_TUNE_CACHE", scratch().join("no-such-cache.json"));
    c.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    c.stdin(Stdio::null()).stderr(Stdio::piped());
    let (child, stdout) = match out {
        Out::Pipe => {
            c.stdout(Stdio::piped());
            (c.spawn().expect("spawn timeout"), true)
        }
        Out::Closed => {
            c.stdout(Stdio::piped());
            let mut ch = c.spawn().expect("spawn timeout");
            drop(ch.stdout.take());
            (ch, false)
        }
        Out::Full => {
            let full = File::options().write(true).open("/dev/full").unwrap();
            c.stdout(full);
            (c.spawn().expect("spawn timeout"), false)
        }
    };
    let o = child.wait_with_output().expect("wait");
    Ran {
        code: o.status.code().unwrap_or(-1),
        stdout: if stdout {
            String::from_utf8_lossy(&o.stdout).into_owned()
        } else {
            String::new()
        },
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A `tracing` line (timestamp first): warnings may sit beside the error line.
fn is_log_line(l: &str) -> bool {
    l.len() > 20 && l.as_bytes()[..4].iter().all(u8::is_ascii_digit) && l.as_bytes()[4] == b'-'
}

/// The contract, or what broke it.
fn contract(r: &Ran) -> Result<(), String> {
    match r.code {
        124 | 137 => return Err("hung (killed by the timeout)".into()),
        0..=2 => {}
        c => return Err(format!("exit status {c}, not 0, 1 or 2")),
    }
    let low = r.stderr.to_lowercase();
    if low.contains("panicked") || low.contains("backtrace") {
        return Err("panicked".into());
    }
    if r.stderr.contains('\u{1b}') || r.stdout.contains('\u{1b}') {
        return Err("ANSI escape codes on a non-terminal".into());
    }
    let errors = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("clreduce: error: "))
        .count();
    if r.code == 2 && errors != 1 {
        return Err(format!("exit 2 with {errors} `clreduce: error:` lines"));
    }
    if r.code != 2 && errors != 0 {
        return Err(format!("exit {} with an error line", r.code));
    }
    // Every other stderr line: indented under the error line, or a log line.
    let mut under_error = false;
    for l in r.stderr.lines() {
        if l.starts_with("clreduce: error: ") {
            under_error = true;
        } else if !(is_log_line(l) || (under_error && l.starts_with("  "))) {
            return Err(format!("stray stderr line {l:?}"));
        }
    }
    Ok(())
}

/// Runs and checks the contract and that `files` are unchanged.
fn checked(
    what: &str,
    args: &[String],
    env: &[(String, String)],
    out: Out,
    files: &[PathBuf],
) -> Ran {
    let before: Vec<Option<Vec<u8>>> = files.iter().map(|f| std::fs::read(f).ok()).collect();
    let r = run(args, env, out);
    if let Err(why) = contract(&r) {
        panic!(
            "{what}: the contract broke: {why}\nargs {args:?}\nenv {env:?}\nexit {}\nstdout:\n{}\nstderr:\n{}",
            r.code, r.stdout, r.stderr
        );
    }
    let after: Vec<Option<Vec<u8>>> = files.iter().map(|f| std::fs::read(f).ok()).collect();
    assert_eq!(before, after, "{what}: an input file changed");
    r
}

// ---------------------------------------------------------------------------------------------
// The corpus

fn raw_f32(name: &str, xs: &[f32]) -> PathBuf {
    let p = scratch().join(name);
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A `.npy` of `n` f32 values 1..=n with `shape`, in the scratch folder.
fn npy_file(name: &str, shape: &str, n: usize) -> PathBuf {
    let p = scratch().join(name);
    let data: Vec<u8> = (1..=n).flat_map(|v| (v as f32).to_le_bytes()).collect();
    std::fs::write(&p, npy("<f4", shape, &data)).unwrap();
    p
}

/// A tuning cache with a valid key for device 0 and one entry (f32 sum at 2^10, what
/// `reduce --n 1024` looks up) whose geometry is `g`.
fn bad_cache(name: &str, g: TunedGeometry) -> PathBuf {
    let d = &clreduce::devices().unwrap()[0];
    let caps = d.caps().unwrap();
    let entry = TuneEntry {
        class: LaunchClass {
            ops: vec![OpClass::Sum],
            ty: clreduce::ElemType::F32,
            span_log2: None,
            exact: false,
        },
        log2_n: 10,
        strategy: clreduce::plan::Strategy::AUTO,
        geometry: g,
        plan: "measured".into(),
        best_ns: 1,
        rule_plan: "rules".into(),
        rule_geometry: g,
        rule_ns: 2,
        runner_up: None,
        tried: 2,
    };
    let table = TuneTable {
        key: clreduce::tune_cache::key_of(&caps),
        measured: "tests/hostile.rs".into(),
        entries: vec![entry],
        segments: Vec::new(),
    };
    let p = scratch().join(name);
    let _ = std::fs::remove_file(&p);
    clreduce::tune_cache::save_at(&p, &table).unwrap();
    p
}

/// The corpus's placeholders, made once.
fn placeholders() -> HashMap<&'static str, PathBuf> {
    let nan = f32::NAN;
    let geo = |local, groups_per_cu, unroll| TunedGeometry {
        local,
        groups_per_cu,
        unroll,
        order: clreduce::plan::IndexOrder::Contiguous,
        hot: None,
    };
    let fifo = scratch().join("fifo");
    if !fifo.exists() {
        let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(ok.success(), "mkfifo");
    }
    let dir = scratch().join("a-folder");
    std::fs::create_dir_all(&dir).unwrap();
    HashMap::from([
        ("{fifo}", fifo),
        ("{dir}", dir.clone()),
        ("{out_dir}", dir),
        (
            "{nan_neginf}",
            raw_f32("nan-neginf.bin", &[nan, f32::NEG_INFINITY]),
        ),
        ("{all_nan}", raw_f32("all-nan.bin", &[nan, nan, nan])),
        (
            "{nan_mid}",
            raw_f32("nan-mid.bin", &[2.0, nan, -1.0, nan, 7.0, -1.0]),
        ),
        ("{overflow}", raw_f32("overflow.bin", &[3e38, 3e38, -3e38])),
        // 2-D .npy files for --axis (issue 26): 3 x 4 f32, a 3-D array, no columns.
        ("{npy2d}", npy_file("m2d.npy", "(3, 4)", 12)),
        ("{npy3d}", npy_file("m3d.npy", "(2, 3, 2)", 12)),
        ("{npy_nocols}", npy_file("m0.npy", "(3, 0)", 0)),
        ("{cache_unroll3}", bad_cache("unroll3.json", geo(16, 4, 3))),
        ("{cache_unroll0}", bad_cache("unroll0.json", geo(16, 4, 0))),
        ("{cache_local0}", bad_cache("local0.json", geo(0, 4, 8))),
        (
            "{cache_hugegroups}",
            bad_cache("groups.json", geo(16, u64::MAX, 8)),
        ),
    ])
}

fn fill(word: &str, ph: &HashMap<&'static str, PathBuf>) -> String {
    let mut w = word.to_string();
    for (k, v) in ph {
        w = w.replace(k, &v.display().to_string());
    }
    w
}

#[test]
fn corpus() {
    let ph = placeholders();
    let lines: Vec<&str> = include_str!("hostile/corpus.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(lines.len() >= 35, "only {} corpus lines", lines.len());
    // Three runs at a time (each is a process that mostly waits on its device).
    std::thread::scope(|s| {
        for k in 0..3 {
            let (lines, ph) = (&lines, &ph);
            s.spawn(move || {
                for line in lines.iter().skip(k).step_by(3) {
                    corpus_line(line, ph);
                }
            });
        }
    });
    println!(
        "PASS corpus: {} hostile inputs keep the contract",
        lines.len()
    );
}

/// Runs one corpus line and checks it.
fn corpus_line(line: &str, ph: &HashMap<&'static str, PathBuf>) {
    let f: Vec<&str> = line.split(" | ").map(str::trim).collect();
    assert_eq!(f.len(), 6, "corpus line {line:?}");
    let (code, name, out, env, args, expect) = (f[0], f[1], f[2], f[3], f[4], f[5]);
    let out = match out {
        "pipe" => Out::Pipe,
        "closed" => Out::Closed,
        "full" => Out::Full,
        o => panic!("{name}: stdout {o:?}"),
    };
    let env: Vec<(String, String)> = env
        .split_whitespace()
        .filter(|w| *w != "-")
        .map(|w| {
            let (k, v) = w.split_once('=').expect("K=V");
            (k.to_string(), fill(v, ph))
        })
        .collect();
    let args: Vec<String> = args
        .split_whitespace()
        .filter(|w| *w != "-")
        .map(|w| fill(w, ph))
        .collect();
    let files: Vec<PathBuf> = ph.values().filter(|p| p.is_file()).cloned().collect();
    let r = checked(name, &args, &env, out, &files);
    let want: i32 = code.parse().unwrap();
    assert_eq!(
        r.code, want,
        "{name}: exit {} (want {want})\nstdout:\n{}\nstderr:\n{}",
        r.code, r.stdout, r.stderr
    );
    if let Some(s) = expect.strip_prefix("out~") {
        assert!(
            r.stdout.contains(s),
            "{name}: stdout lacks {s:?}:\n{}",
            r.stdout
        );
    } else if let Some(s) = expect.strip_prefix("err~") {
        assert!(
            r.stderr.contains(s),
            "{name}: stderr lacks {s:?}:\n{}",
            r.stderr
        );
    } else {
        assert_eq!(expect, "-", "{name}: text {expect:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Generated input

/// Flags and the values tried with them (valid, out of range, malformed). New flags of
/// `reduce` and `explain` belong here.
const FLAGS: &[(&str, &[&str])] = &[
    (
        "--device",
        &["0", "1", "99", "-1", "", "pocl", "all", "0,1"],
    ),
    (
        "--n",
        &[
            "0",
            "1",
            "100",
            "-1",
            "lots",
            "4096",
            "18446744073709551616",
            "1e3",
        ],
    ),
    (
        "--type",
        &["f32", "i32", "u64", "f64", "f16", "bf16", "int", ""],
    ),
    (
        "--op",
        &[
            "sum", "min,max", "argmin", "and", "xor,sum", "median", "", ",", "sum,,max",
        ],
    ),
    ("--form", &["range", "nd-range", "2d", ""]),
    ("--local", &["0", "1", "64", "100", "99999999", "-3"]),
    ("--span", &["0", "1", "16", "257", "-1"]),
    (
        "--strategy",
        &[
            "auto",
            "tree+atomic",
            "x+y",
            "tree+",
            "+",
            "wg-reduce+last-group",
        ],
    ),
    (
        "--mask",
        &["no-atomics", "no-subgroups,no-fp64", "nope", ",,", ""],
    ),
    (
        "--determinism",
        &["relaxed", "exact", "deterministic", "sloppy", ""],
    ),
    ("--seed", &["0", "18446744073709551615", "-1"]),
    ("--shares", &["1,2", "0", "-1,x", ""]),
    ("--identity", &["0", "1", "x", "nan", "1e40"]),
    // Segmented reductions (issue 26): shapes that overflow, zero, disagree with --n.
    (
        "--rows",
        &["0", "1", "7", "64", "-1", "18446744073709551615", "x"],
    ),
    ("--cols", &["0", "1", "13", "64", "4294967296", "x"]),
    ("--axis", &["0", "1", "2", "-1", ""]),
    ("--ragged", &["0", "1", "16", "100000", "-5", "x"]),
];
const SWITCHES: &[&str] = &[
    "--init-identity",
    "--json",
    "--relaxed",
    "--no-identity",
    "--nd-range",
    "--source",
    "--bogus",
    "--round",
    "-h",
];

/// A command line: a subcommand, then flags with values (or a flag without its value, or a
/// switch) in any order. `--n` stays small when it parses, so that no run takes long.
fn command_line() -> impl Strategy<Value = Vec<String>> {
    let word = prop_oneof![
        (0..FLAGS.len(), 0usize..16).prop_map(|(f, v)| {
            let (flag, vals) = FLAGS[f];
            vec![flag.to_string(), vals[v % vals.len()].to_string()]
        }),
        (0..FLAGS.len()).prop_map(|f| vec![FLAGS[f].0.to_string()]),
        (0..SWITCHES.len()).prop_map(|s| vec![SWITCHES[s].to_string()]),
    ];
    (
        prop::sample::select(vec!["reduce", "explain", "devices", "reduce", "nope"]),
        prop::collection::vec(word, 0..6),
    )
        .prop_map(|(cmd, words)| {
            let mut v = vec![cmd.to_string()];
            v.extend(words.into_iter().flatten());
            v
        })
}

/// Values for the environment variables clreduce reads.
fn env_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_=0-9,+.-]{0,24}",
        prop::sample::select(vec![
            "local=64,unroll=8".to_string(),
            "unroll=3".to_string(),
            "local=0".to_string(),
            "groups_per_cu=18446744073709551615".to_string(),
            "order=0".to_string(),
            "tree+last-group".to_string(),
            "no-atomics,no-fp64".to_string(),
            "all".to_string(),
            "99".to_string(),
        ]),
    ]
}

/// A valid `.npy` header for `descr` and `n` elements, then `data`.
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend((h.len() as u16).to_le_bytes());
    v.extend(h.as_bytes());
    v.extend(data);
    v
}

/// An input file: a `.npy` (well formed or with bytes overwritten) or raw bytes.
fn input_file() -> impl Strategy<Value = (bool, Vec<u8>)> {
    let descr = prop::sample::select(vec![
        "<f4", "<i4", ">f8", "<u8", "<f2", "|b1", "<c8", "<f4x",
    ]);
    let shape = prop::sample::select(vec![
        "(5,)",
        "(0,)",
        "(2, 3)",
        "()",
        "(99999999999,)",
        "(3,",
    ]);
    let npy_file = (
        descr,
        shape,
        prop::collection::vec(any::<u8>(), 0..64),
        prop::collection::vec((0usize..200, any::<u8>()), 0..4),
    )
        .prop_map(|(d, s, data, flips)| {
            let mut v = npy(d, s, &data);
            for (at, b) in flips {
                if !v.is_empty() {
                    let i = at % v.len();
                    v[i] = b;
                }
            }
            (true, v)
        });
    let raw = prop::collection::vec(any::<u8>(), 0..64).prop_map(|v| (false, v));
    prop_oneof![npy_file, raw]
}

/// A `--custom` expression: from the evaluator's alphabet, often near valid.
fn custom_expr() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ab+*/()&|^~<>=?:!%0-9. -]{0,24}",
        prop::sample::select(vec![
            "a+b",
            "max(a,b)",
            "min(a, b)",
            "a*b",
            "a<b?a:b",
            "a/b",
            "a%b",
            "(a",
            "a+",
            "fmax(a,b)",
            "a+b+1",
            "a^b",
            "c+d",
            "",
        ])
        .prop_map(String::from),
    ]
}

/// A tuning-cache file for device 0: a valid key with a random geometry (out of range often),
/// or garbage.
fn cache_file() -> impl Strategy<Value = Vec<u8>> {
    let geometry = (
        prop::sample::select(vec![0usize, 1, 16, 64, 100, 1 << 20, usize::MAX]),
        prop::sample::select(vec![0u64, 1, 4, 1 << 40, u64::MAX]),
        prop::sample::select(vec![0usize, 1, 3, 8, 16, 17, usize::MAX]),
    )
        .prop_map(|(l, g, u)| {
            let path = bad_cache(
                &format!("gen-{l}-{g}-{u}-{:?}.json", std::thread::current().id()),
                TunedGeometry {
                    local: l,
                    groups_per_cu: g,
                    unroll: u,
                    order: clreduce::plan::IndexOrder::GridStride,
                    hot: None,
                },
            );
            std::fs::read(path).unwrap()
        });
    prop_oneof![geometry, prop::collection::vec(any::<u8>(), 0..80)]
}

/// A file of this test's own with `bytes`.
fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch().join(format!("{name}-{:?}", std::thread::current().id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, max_shrink_iters: 32, .. ProptestConfig::default() })]

    #[test]
    fn generated_arguments_keep_the_contract(args in command_line()) {
        checked("args", &args, &[], Out::Pipe, &[]);
    }

    #[test]
    fn generated_environments_keep_the_contract(
        var in prop::sample::select(vec!["CLREDUCE_TUNE", "CLREDUCE_MASK", "CLREDUCE_STRATEGY", "CLREDUCE_DEVICE"]),
        value in env_value(),
        cmd in prop::sample::select(vec!["explain", "reduce"]),
    ) {
        let args = vec![cmd.to_string(), "--n".into(), "512".into()];
        checked("env", &args, &[(var.to_string(), value)], Out::Pipe, &[]);
    }

    #[test]
    fn generated_input_files_keep_the_contract(
        (is_npy, bytes) in input_file(),
        ty in prop::sample::select(vec![None, Some("f32"), Some("i64"), Some("f16"), Some("u32")]),
    ) {
        let f = write_temp(if is_npy { "in.npy" } else { "in.bin" }, &bytes);
        let f = if is_npy { let g = f.with_extension("npy"); std::fs::rename(&f, &g).unwrap(); g } else { f };
        let mut args = vec!["reduce".to_string(), "--device".into(), "0".into(), "--input".into(), f.display().to_string()];
        if let Some(t) = ty {
            args.extend(["--type".to_string(), t.to_string()]);
        }
        checked("input", &args, &[], Out::Pipe, std::slice::from_ref(&f));
    }

    #[test]
    fn generated_custom_ops_keep_the_contract(
        expr in custom_expr(),
        ty in prop::sample::select(vec!["i32", "f32", "u64"]),
        identity in prop::sample::select(vec![Some("0"), Some("1"), None]),
    ) {
        let mut args: Vec<String> = ["reduce", "--device", "0", "--n", "64", "--type", ty, "--custom", &expr]
            .iter().map(|s| s.to_string()).collect();
        match identity {
            Some(v) => args.extend(["--identity".to_string(), v.to_string()]),
            None => args.push("--no-identity".into()),
        }
        checked("custom", &args, &[], Out::Pipe, &[]);
    }

    #[test]
    fn generated_tuning_caches_keep_the_contract(bytes in cache_file()) {
        let f = write_temp("cache.json", &bytes);
        let env = [("CLREDUCE_TUNE_CACHE".to_string(), f.display().to_string())];
        let args: Vec<String> = ["reduce", "--device", "0", "--n", "1024"].iter().map(|s| s.to_string()).collect();
        let r = checked("cache", &args, &env, Out::Pipe, std::slice::from_ref(&f));
        // A cache never makes a run fail or a result wrong: it is used, or dropped with a warning.
        prop_assert_eq!(r.code, 0, "{}", r.stderr);
    }
}
