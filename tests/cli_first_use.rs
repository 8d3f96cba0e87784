//! The CLI side of issue 29 ("what a first user trips on"): 16-bit input (`--type f16|bf16`,
//! an f16 `.npy` of 2^24 ones, a raw bf16 file) and where `clreduce bench --peers` looks for its
//! scripts. Each run is a child process of the CLI (`CLREDUCE_BIN`, else the binary cargo built)
//! on every non-simulator device.

#[path = "common/cli.rs"]
mod cli_run;
#[path = "common/files.rs"]
mod files;
use cli_run::cli;
use clreduce::devices;
use files::{f16_bits, npy, scratch};

/// (index for `--device`, short name) of every device but the simulator.
fn fast_devices() -> Vec<(String, String)> {
    let found: Vec<(String, String)> = devices()
        .expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`")
        .iter()
        .filter(|d| !d.is_simulator())
        .map(|d| (d.index().to_string(), d.label()))
        .collect();
    assert!(!found.is_empty(), "no non-simulator OpenCL device");
    found
}

/// Runs `clreduce reduce ARGS --json`, expects exit 0 and returns the parsed array.
fn reduce_json(args: &[&str]) -> serde_json::Value {
    let mut full = vec!["reduce", "--json"];
    full.extend_from_slice(args);
    let (code, stdout, stderr) = cli(&full);
    let cmd = format!("clreduce {}", full.join(" "));
    assert_eq!(code, 0, "{cmd}: exit {code}\n{stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{cmd}: not JSON ({e}):\n{stdout}"))
}

/// 16-bit input (issue 29): `--type f16` and `--type bf16` on generated data pass their check;
/// a raw bf16 file (`--type bf16`, NumPy has no bfloat16) gives sum, min, max and argmin
/// exactly; an f16 .npy of 2^24 ones sums to 16777216 (not 2048, where an f16 running sum
/// stops), read on the device with vload_half.
#[test]
fn sixteen_bit_input() {
    let dir = scratch("sixteen");
    let n = 3001usize;
    let vals: Vec<f32> = (0..n).map(|i| (i * 3 % 64) as f32 * 0.5 - 16.0).collect();
    let raw = dir.join("x.bf16");
    std::fs::write(
        &raw,
        vals.iter()
            .flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let ones = dir.join("ones.npy");
    std::fs::write(
        &ones,
        npy(
            "<f2",
            &format!("({},)", 1 << 24),
            &f16_bits(1.0).to_le_bytes().repeat(1 << 24),
        ),
    )
    .unwrap();
    let min = vals.iter().cloned().fold(f32::INFINITY, f32::min);
    let max = vals.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let want = [vals.iter().sum::<f32>(), min, max, min];
    for (dev, name) in fast_devices() {
        for ty in ["f16", "bf16"] {
            let (code, stdout, stderr) = cli(&[
                "reduce",
                "--device",
                &dev,
                "--type",
                ty,
                "--n",
                "100003",
                "--op",
                "sum,min,max,argmax",
            ]);
            assert_eq!(code, 0, "{name} --type {ty}: {stderr}\n{stdout}");
            assert!(
                stdout.contains(&format!("x = 100003 x {ty}")),
                "{name}: {stdout}"
            );
            assert!(
                stdout.contains("PASS:      4 of 4"),
                "{name} --type {ty}: {stdout}"
            );
        }
        let p = raw.to_str().unwrap();
        let js = reduce_json(&[
            "--device",
            &dev,
            "--input",
            p,
            "--type",
            "bf16",
            "--op",
            "sum,min,max,argmin",
        ]);
        let d = &js[0];
        assert_eq!(d["n"], n as u64, "{name}");
        assert_eq!(d["type"], "f32", "{name}");
        for (v, w) in d["vars"].as_array().unwrap().iter().zip(want) {
            assert_eq!(
                v["result"].as_str(),
                Some(format!("{w}").as_str()),
                "{name}: {v}"
            );
            assert_eq!(v["check"], "OK", "{name}: {v}");
        }
        let at = vals.iter().position(|&x| x == min).unwrap() as u64;
        assert_eq!(d["vars"][3]["index"], at, "{name}");
        let js = reduce_json(&["--device", &dev, "--input", ones.to_str().unwrap()]);
        assert_eq!(js[0]["vars"][0]["result"], "16777216", "{name}: {}", js[0]);
        // Rounded back on request: 2^24 is beyond f16's largest finite value, 65504.
        let (code, stdout, stderr) = cli(&[
            "reduce",
            "--device",
            &dev,
            "--input",
            ones.to_str().unwrap(),
            "--round",
        ]);
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(
            stdout.contains("rounded:   var 0 as f16: inf"),
            "{name}: {stdout}"
        );
        eprintln!("{name}: --type f16/bf16 generated, raw bf16 file and 2^24 f16 ones: OK");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `clreduce bench --peers` looks for its Python peer scripts before the sweep and, where none
/// is, stops at once naming every folder it looked in; `--peers-dir DIR` is then the only place
/// looked. (The search order itself is unit-tested in src/bin/clreduce/bench/peers/locate.rs.)
#[test]
fn bench_peers_say_where_they_looked() {
    let dir = scratch("peers");
    let missing = dir.join("no-such-folder");
    let (code, stdout, stderr) = cli(&[
        "bench",
        "--peers",
        "--peers-dir",
        missing.to_str().unwrap(),
        "--quick",
    ]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.starts_with("clreduce: error: ") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(
        stderr.contains("looked in: ")
            && stderr.contains(&format!("{} (no such folder)", missing.display())),
        "{stderr}"
    );
    assert!(stderr.contains("--peers-dir"), "{stderr}");
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let (code, _, stderr) = cli(&[
        "bench",
        "--peers",
        "--peers-dir",
        dir.join("empty").to_str().unwrap(),
        "--quick",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("(no peer script in it)"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
