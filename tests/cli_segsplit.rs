//! The command line's segmented reductions across devices and from 2-D files (issue 26):
//! `reduce --split` with `--rows/--cols/--axis` and `--ragged` (measured split and `--shares`
//! that cut rows and segments), and `reduce --input FILE.npy --axis 1|0` with 2-D arrays of
//! every dtype the 1-D input takes, C and Fortran order, and 1-D files read as R x C. Every
//! run checks its results on the host (exit 0 only when all match); the files' results are
//! also compared with values computed here. The refusals (3-D, no columns, flags that
//! contradict the file) are in tests/hostile/corpus.txt.
//!
//! A run takes a seeded sample (tests/common/sample.rs: `SAMPLE ...` prints the seed,
//! `CLREDUCE_SAMPLE_SEED` replays it, `CLREDUCE_FULL_MATRIX=1` runs everything): of the
//! `--split` cases one of the three rows cases, the columns case and one of the two ragged
//! cases, chosen so that both the measured split and `--shares` run; of the 2-D files one
//! dtype of each family (i4/u4, i8/>u8, f2/f4/f8) in one order (C or Fortran, alternating with
//! the family, so both orders run). Every case runs over repeated runs; each CLI call is a
//! process that builds its kernels per dtype, which is what a cold PoCL kernel cache makes slow.

#[path = "common/cli.rs"]
mod cli_run;
#[path = "common/files.rs"]
mod files;
#[path = "common/sample.rs"]
mod sample;

use cli_run::cli;
use files::{f16_bits, npy, scratch};
use sample::{announce_sample, full_matrix, sample_hash};

/// The JSON array of a run that passed.
fn passed(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = cli(args);
    assert_eq!(code, 0, "{args:?}: {out}\n{err}");
    let j: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    for e in j.as_array().expect("an array") {
        assert_eq!(e["pass"], true, "{args:?}: {e}");
    }
    j
}

/// Whether PoCL and Intel's CPU runtime are both here (the `--shares W,W` cases name two).
fn two_devices() -> bool {
    let (code, out, _) = cli(&["devices"]);
    assert_eq!(code, 0);
    out.contains("Intel(R) OpenCL") && out.contains("Portable")
}

#[test]
fn split_rows_columns_and_ragged() {
    if !two_devices() {
        println!("SKIP reduce --split with segments: PoCL and Intel's runtime are not both here");
        return;
    }
    let cases: &[&[&str]] = &[
        &[
            "--rows",
            "97",
            "--cols",
            "31",
            "--op",
            "sum,argmax,min",
            "--type",
            "i32",
        ],
        &[
            "--rows",
            "1",
            "--cols",
            "4099",
            "--op",
            "sum,argmin",
            "--type",
            "i64",
            "--shares",
            "1,1",
        ],
        &[
            "--rows", "1009", "--cols", "1", "--op", "max,xor", "--type", "u32", "--shares", "2,3",
        ],
        &[
            "--rows",
            "89",
            "--cols",
            "13",
            "--axis",
            "0",
            "--op",
            "sum,argmin",
            "--type",
            "f32",
            "--shares",
            "1,3",
        ],
        &[
            "--ragged",
            "50",
            "--n",
            "10007",
            "--op",
            "sum,max,argmax",
            "--type",
            "f64",
            "--shares",
            "3,2",
        ],
        &[
            "--ragged",
            "7",
            "--n",
            "5003",
            "--op",
            "prod,and",
            "--type",
            "i32",
            "--init-identity",
        ],
    ];
    // Sampled: one rows case (0-2), the columns case (3), one ragged case (4 with --shares, 5
    // with the measured split), ragged 5 whenever the rows case has shares (1, 2).
    let test = "cli_segsplit::split_rows_columns_and_ragged";
    announce_sample(test);
    let h = (sample_hash(test) % 1_000_000) as usize;
    let rows = h % 3;
    let ragged = if rows == 0 { 4 + h / 3 % 2 } else { 5 };
    let taken = |k: usize| full_matrix() || k == rows || k == 3 || k == ragged;
    for (k, c) in cases.iter().enumerate() {
        if !taken(k) {
            continue;
        }
        let mut args = vec!["reduce", "--split", "--json"];
        args.extend_from_slice(c);
        let j = passed(&args);
        assert_eq!(j.as_array().unwrap().len(), 1, "{args:?}");
        assert!(
            j[0]["device"].as_str().unwrap().starts_with("split:"),
            "{j}"
        );
        println!("PASS reduce --split {c:?}: split {}", j[0]["split"]);
    }
}

/// A .npy of `shape` (C order unless `fortran`) with `data`.
fn write_npy(name: &str, descr: &str, shape: &str, fortran: bool, data: &[u8]) -> String {
    let mut bytes = npy(descr, shape, data);
    if fortran {
        let (from, to) = (b"'fortran_order': False", b"'fortran_order': True ");
        let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
        bytes[at..at + from.len()].copy_from_slice(to);
    }
    let p = scratch("segsplit").join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

/// The checksum (sum of the finite results) of variable `k` of one device's entry.
fn checksum(j: &serde_json::Value, k: usize) -> f64 {
    j[0]["vars"][k]["checksum"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn two_d_npy_with_axis() {
    // 3 x 4: rows [1..4], [5..8], [9..12].
    let m: Vec<f64> = (1..=12).map(f64::from).collect();
    let col_major: Vec<f64> = (0..12).map(|k| m[(k % 3) * 4 + k / 3]).collect();
    let enc = |ty: &str, v: &[f64]| -> Vec<u8> {
        v.iter()
            .flat_map(|&x| match ty {
                "<i4" => (x as i32).to_le_bytes().to_vec(),
                "<u4" => (x as u32).to_le_bytes().to_vec(),
                "<i8" => (x as i64).to_le_bytes().to_vec(),
                ">u8" => (x as u64).to_be_bytes().to_vec(),
                "<f2" => f16_bits(x as f32).to_le_bytes().to_vec(),
                "<f4" => (x as f32).to_le_bytes().to_vec(),
                _ => x.to_le_bytes().to_vec(),
            })
            .collect()
    };
    // Sampled: one dtype of each family (32-bit and 64-bit integers, floats) in one order,
    // rotating with the seed; each dtype builds its own kernels, the cost a cold cache pays.
    let test = "cli_segsplit::two_d_npy_with_axis";
    announce_sample(test);
    let h = (sample_hash(test) % 1_000_000) as usize;
    let families: [&[&str]; 3] = [&["<i4", "<u4"], &["<i8", ">u8"], &["<f2", "<f4", "<f8"]];
    for (g, (t, ty)) in families
        .iter()
        .enumerate()
        .flat_map(|(g, f)| f.iter().copied().enumerate().map(move |d| (g, d)))
    {
        if !full_matrix() && t != (h + g) % families[g].len() {
            continue;
        }
        for fortran in [false, true] {
            if !full_matrix() && usize::from(fortran) != (g + h / 6) % 2 {
                continue;
            }
            let data = enc(ty, if fortran { &col_major } else { &m });
            let name = format!("m-{}-{fortran}.npy", &ty[1..]);
            let f = write_npy(&name, ty, "(3, 4)", fortran, &data);
            // Rows: max per row 4, 8, 12 (a file read in the wrong order gives other maxima).
            let j = passed(&[
                "reduce",
                "--device",
                "0",
                "--json",
                "--input",
                &f,
                "--axis",
                "1",
                "--op",
                "max,sum,argmax",
            ]);
            assert_eq!(j[0]["results"], 3, "{ty} {fortran}");
            assert_eq!(checksum(&j, 0), 24.0, "{ty} fortran={fortran} row maxima");
            assert_eq!(checksum(&j, 1), 78.0, "{ty} fortran={fortran} row sums");
            // Columns: min per column 1, 2, 3, 4.
            let j = passed(&[
                "reduce",
                "--device",
                "0",
                "--json",
                "--input",
                &f,
                "--axis",
                "0",
                "--op",
                "min,argmin",
            ]);
            assert_eq!(j[0]["results"], 4, "{ty} {fortran}");
            assert_eq!(
                checksum(&j, 0),
                10.0,
                "{ty} fortran={fortran} column minima"
            );
        }
        println!("PASS --input 2-D {ty}, --axis 1 and 0");
    }
    // A 1-D file read as R x C (raw bf16 comes this way), and 2-D with --rows/--cols that agree.
    let bf: Vec<u8> = m
        .iter()
        .flat_map(|&x| ((x as f32).to_bits() >> 16).to_le_bytes()[..2].to_vec())
        .collect();
    let p = scratch("segsplit").join("m.bf16");
    std::fs::write(&p, bf).unwrap();
    let p = p.display().to_string();
    let j = passed(&[
        "reduce", "--device", "0", "--json", "--input", &p, "--type", "bf16", "--rows", "3",
        "--cols", "4", "--op", "max",
    ]);
    assert_eq!(checksum(&j, 0), 24.0);
    let f = write_npy("m-agree.npy", "<f4", "(3, 4)", false, &enc("<f4", &m));
    let j = passed(&[
        "reduce", "--device", "0", "--json", "--input", &f, "--rows", "3", "--cols", "4", "--axis",
        "0", "--op", "max",
    ]);
    assert_eq!(checksum(&j, 0), 9.0 + 10.0 + 11.0 + 12.0);
    // --split across devices from a 2-D file.
    if !two_devices() {
        println!("SKIP --split from a file: PoCL and Intel's runtime are not both here");
        return;
    }
    let j = passed(&[
        "reduce",
        "--split",
        "--json",
        "--input",
        &f,
        "--axis",
        "1",
        "--op",
        "sum,argmax",
        "--shares",
        "1,2",
    ]);
    assert_eq!(checksum(&j, 0), 78.0);
    println!("PASS --input 1-D as R x C (bf16), agreeing --rows/--cols, --split from a file");
}

/// `clreduce explain` plans the launch `reduce` runs with the same flags (its body and input
/// included: the body's reads at `[i]` take part in segmented plans), and `--source` prints
/// that launch's program: before, explain planned without a body and `--source` printed
/// nothing for segments.
#[test]
fn explain_plans_what_reduce_runs() {
    let all = clreduce::devices().expect("OpenCL devices");
    let cases: &[&[&str]] = &[
        &[
            "--ragged", "16", "--n", "50021", "--op", "sum", "--type", "f32",
        ],
        &[
            "--ragged",
            "300",
            "--n",
            "70001",
            "--op",
            "sum,argmax",
            "--type",
            "f64",
        ],
        &[
            "--ragged", "3", "--n", "9001", "--op", "min", "--type", "i32",
        ],
        &[
            "--rows", "1031", "--cols", "16", "--op", "sum", "--type", "f32",
        ],
        &[
            "--rows", "61", "--cols", "4099", "--op", "max,sum", "--type", "i64",
        ],
        &[
            "--rows", "257", "--cols", "96", "--axis", "0", "--op", "sum", "--type", "f32",
        ],
    ];
    for d in all.iter().filter(|d| !d.is_simulator()) {
        let dev = d.index().to_string();
        for args in cases {
            let with = |cmd: &str, more: &[&str]| -> Vec<String> {
                let head = [cmd, "--device", dev.as_str()];
                (head.iter().chain(args.iter()).chain(more))
                    .map(|s| s.to_string())
                    .collect()
            };
            let reduce = with("reduce", &["--json"]);
            let j = passed(&reduce.iter().map(String::as_str).collect::<Vec<_>>());
            let ran = j[0]["plan"].as_str().expect("a plan name").to_string();
            let explain = with("explain", &["--source"]);
            let (code, out, err) = cli(&explain.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(code, 0, "{}: explain {args:?}: {out}\n{err}", d.label());
            let line = (out.lines())
                .find(|l| l.trim_start().starts_with("segmented:"))
                .unwrap_or_else(|| panic!("{}: {args:?}: no segmented line\n{out}", d.label()));
            assert!(
                line.ends_with(&format!("plan {ran}")),
                "{}: {args:?}: reduce ran {ran}, explain says {line:?}",
                d.label()
            );
            let define = format!("CLR_SEG_ALGO=CLR_SEG_{}", ran.to_uppercase());
            assert!(
                out.contains("// build options:") && out.contains(&define),
                "{}: {args:?}: --source printed no program with {define}\n{out}",
                d.label()
            );
            assert!(
                out.contains("__kernel"),
                "{}: {args:?}: no kernel",
                d.label()
            );
        }
    }
}

/// `explain --split` plans each share as the launch runs it: with `reduce`'s body over the
/// share's input (`MultiQueue::explain_split_launch`). Its shares name the segment plans
/// `reduce --split` runs with the same flags, and a share of rows plans as `explain` on that
/// device does for a launch of those rows alone, geometry included (which the body changes:
/// planned without it, PoCL's and Intel's column blocks are 4 columns wide, not 16).
#[test]
fn explain_split_plans_what_reduce_split_runs() {
    if !two_devices() {
        println!("SKIP explain --split: PoCL and Intel's runtime are not both here");
        return;
    }
    let cases: &[(&[&str], Option<&str>)] = &[
        (
            &[
                "--rows", "257", "--cols", "96", "--axis", "0", "--op", "sum",
            ],
            Some("96"),
        ),
        (
            &["--rows", "1031", "--cols", "16", "--op", "sum,max"],
            Some("16"),
        ),
        (&["--ragged", "16", "--n", "50021", "--op", "sum"], None),
        (
            &["--ragged", "300", "--n", "70001", "--op", "sum,argmax"],
            None,
        ),
    ];
    let devices = ["pthread", "intel"];
    for (args, cols) in cases {
        let with = |cmd: &str, more: &[&str]| -> Vec<String> {
            let head = [
                cmd,
                "--split",
                "--device",
                "pthread,intel",
                "--shares",
                "1,2",
            ];
            (head.iter().chain(args.iter()).chain(more))
                .map(|s| s.to_string())
                .collect()
        };
        let reduce = with("reduce", &["--json"]);
        let j = passed(&reduce.iter().map(String::as_str).collect::<Vec<_>>());
        let ran: Vec<String> = (j[0]["shares"].as_array().expect("shares").iter())
            .map(|s| s["plan"].as_str().expect("a plan").to_string())
            .collect();
        let explain = with("explain", &[]);
        let (code, out, err) = cli(&explain.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "explain {args:?}: {out}\n{err}");
        let said: Vec<String> = (out.lines())
            .filter(|l| l.trim_start().starts_with("segmented:"))
            .map(|l| format!("segment {}", l.rsplit("plan ").next().unwrap_or("")))
            .collect();
        assert_eq!(said, ran, "{args:?}: explain --split\n{out}");
        let Some(cols) = cols else { continue };
        // Each share's plan block (from its `plan on` line to its `launch(es)` line, the
        // variables' lines left out: a share's variables are scratch initialized to the
        // identity) against `explain` of that many rows on that device.
        let units: Vec<String> = (out.lines())
            .filter_map(|l| l.strip_prefix("share: "))
            .map(|l| {
                l.rsplit(": ")
                    .next()
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let blocks = |text: &str| -> Vec<String> {
            let (mut all, mut cur, mut inside) = (Vec::new(), String::new(), false);
            for l in text.lines() {
                inside |= l.starts_with("plan on");
                let t = l.trim_start();
                let var = ["var ", "work-group step:", "cross-group step:"];
                if inside && !var.iter().any(|v| t.starts_with(v)) {
                    cur.push_str(l);
                    cur.push('\n');
                }
                if inside && l.contains("launch(es)") {
                    all.push(std::mem::take(&mut cur));
                    inside = false;
                }
            }
            all
        };
        let split_blocks = blocks(&out);
        assert_eq!(split_blocks.len(), 2, "{args:?}: two plans\n{out}");
        for ((dev, rows), b) in devices.iter().zip(&units).zip(&split_blocks) {
            let op = args[args.iter().position(|a| *a == "--op").unwrap() + 1];
            let mut one = vec!["explain", "--device", dev, "--rows", rows, "--cols", cols];
            one.extend(["--op", op]);
            if args.contains(&"--axis") {
                one.extend(["--axis", "0"]);
            }
            let (code, alone, err) = cli(&one);
            assert_eq!(code, 0, "{one:?}: {alone}\n{err}");
            assert_eq!(
                &blocks(&alone)[0],
                b,
                "{args:?}: share on {dev} against {one:?}"
            );
        }
    }
}
