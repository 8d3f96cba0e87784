//! The CLI side of issue 29 ("what a first user trips on"): 16-bit input (`--type f16|bf16`,
//! an f16 `.npy` of 2^24 ones, a raw bf16 file) and where `clreduce bench --peers` looks for its
//! scripts. Each run is a child process of the CLI (`CLREDUCE_BIN`, else the binary cargo built)
//! on every non-simulator device.

#[path = "common/cli.rs"]
mod cli_run;
#[path = "common/files.rs"]
mod files;
use cli_run::{cli, cli_with};
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

/// The program cache on disk (`CLREDUCE_PROGRAM_CACHE`, src/runtime/disk_cache.rs), through
/// the CLI on every device, the simulator included (PoCL, which caches its programs itself,
/// writes nothing and compiles each time): a first run compiles and writes binaries,
/// a second loads its program from them and passes its check; files cut short or with a byte
/// changed are misses (compiled again, then written again); `off` writes nothing.
#[test]
fn program_cache_on_disk() {
    let found =
        devices().expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`");
    let all: Vec<String> = found.iter().map(|d| d.index().to_string()).collect();
    let root = scratch("program-cache");
    let bins = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir).map_or(Vec::new(), |r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "bin"))
                .collect()
        })
    };
    for (dev, d) in all.iter().zip(found) {
        let dir = root.join(format!("dev{dev}"));
        let dir_s = dir.to_string_lossy().to_string();
        let run = |cache: &str| {
            let args = [
                "reduce", "--device", dev, "--op", "max", "--type", "i32", "--n", "3001",
            ];
            let (code, stdout, stderr) = cli_with(&args, &[("CLREDUCE_PROGRAM_CACHE", cache)]);
            assert_eq!(
                code, 0,
                "device {dev} cache {cache}: exit {code}\n{stdout}\n{stderr}"
            );
            assert!(stdout.contains("PASS"), "device {dev}: {stdout}");
            stdout
        };
        let first = run(&dir_s);
        assert!(
            first.contains("including building 1 program(s))"),
            "device {dev}, empty cache: {first}"
        );
        if d.caps().unwrap().workarounds.own_program_cache {
            // PoCL: its own kernel cache serves the next process; ours writes nothing.
            let again = run(&dir_s);
            assert!(
                again.contains("including building 1 program(s))"),
                "{again}"
            );
            assert!(
                bins(&dir).is_empty(),
                "device {dev}: a binary written to {dir_s}"
            );
            eprintln!(
                "{}: the driver's own program cache, not the disk cache",
                d.label()
            );
            continue;
        }
        let files = bins(&dir);
        assert!(
            !files.is_empty(),
            "device {dev}: no binary written to {dir_s}"
        );
        let second = run(&dir_s);
        assert!(
            second.contains("including loading 1 program(s) from the disk cache"),
            "device {dev}, second run: {second}"
        );
        // Damaged files: one cut short, the others with their last byte changed.
        for (k, f) in files.iter().enumerate() {
            let mut b = std::fs::read(f).unwrap();
            if k == 0 {
                b.truncate(b.len() / 2);
            } else {
                *b.last_mut().unwrap() ^= 0x5a;
            }
            std::fs::write(f, b).unwrap();
        }
        let damaged = run(&dir_s);
        assert!(
            damaged.contains("including building 1 program(s))"),
            "device {dev}, damaged files: {damaged}"
        );
        let again = run(&dir_s);
        assert!(
            again.contains("including loading 1 program(s) from the disk cache"),
            "device {dev}, after rewriting: {again}"
        );
    }
    let off = root.join("off");
    std::fs::create_dir_all(&off).unwrap();
    let (code, stdout, stderr) = cli_with(
        &[
            "reduce", "--device", &all[0], "--op", "plus", "--type", "i32", "--n", "77",
        ],
        &[
            ("CLREDUCE_PROGRAM_CACHE", "off"),
            ("XDG_CACHE_HOME", off.to_str().unwrap()),
        ],
    );
    assert_eq!(code, 0, "off: {stdout}\n{stderr}");
    assert!(stdout.contains("including building"), "off: {stdout}");
    let default_dir = off.join("clreduce").join("programs");
    assert!(!default_dir.exists(), "off wrote into {default_dir:?}");
    std::fs::remove_dir_all(&root).unwrap();
}
