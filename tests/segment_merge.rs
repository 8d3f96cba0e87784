//! The `merge` plan over CSR offsets (decision 54) forced on every device, beside `tiles` (one
//! element at a time, and with vector loads, decision 65) and `runs` (decision 62), on
//! the shapes that cut its tiles of items (elements and segment ends) in odd places: one
//! segment of all n (a segment over many tiles, the work-group finish), segments of 1, prime
//! lengths, heavy tails, runs of empty segments longer than a tile (tiles with no element),
//! empty segments at both ends, offsets that start after 0 and end before n. Several variables
//! in one launch: a sum under initialize_to_identity, a max without it (an empty segment keeps
//! its initial value), argmin with global indices and argmax with indices within the segment
//! (ties in most segments). Sums of small integers in f32 are exact in any order, so every
//! result is compared exactly with the host's; the same plan twice gives the same bits. Fresh
//! seeded inputs per case.

#[path = "common/cli.rs"]
mod cli_run;
use crate::common;

use clreduce::plan::{SegmentPlan, Tuning};
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Kernel, Op, Options, Queue, Range, SegmentAlgo,
    Segments,
};
use common::rng::Rng;
use common::{queues, short, sim_lock, Tally};

/// Offsets from lengths, starting at `lo`.
fn from_lens(lo: u64, lens: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut off = vec![lo];
    for l in lens {
        off.push(off.last().unwrap() + l);
    }
    off
}

/// (name, n, offsets): the shapes under test; `big` on devices that are not simulators.
fn shapes(rng: &mut Rng, big: bool) -> Vec<(String, u64, Vec<u64>)> {
    let s = if big { 8 } else { 1 };
    let mut v = Vec::new();
    let all = 3000 * s + 7;
    v.push(("one segment of all n".into(), all, vec![0, all]));
    v.push(("segments of 1".into(), 700 * s, (0..=700 * s).collect()));
    let primes = [2u64, 3, 5, 7, 11, 13, 17, 31, 61, 127, 257, 509];
    let lens: Vec<u64> = (0..120 * s)
        .map(|k| primes[(k as usize * 7) % primes.len()])
        .collect();
    let off = from_lens(0, lens);
    v.push(("prime lengths".into(), *off.last().unwrap(), off));
    // Heavy tails: mostly short, a few 50-400 times the mean, a quarter empty.
    let lens: Vec<u64> = (0..300 * s)
        .map(|_| match rng.below(40) {
            0..=9 => 0,
            10..=37 => rng.below(12),
            38 => 300 + rng.below(500),
            _ => 2000 + rng.below(2000 * s),
        })
        .collect();
    let off = from_lens(0, lens);
    v.push(("heavy tail".into(), *off.last().unwrap(), off));
    // Runs of empty segments longer than a tile (a tile with no element), between and
    // around short segments, offsets starting at 3 and ending before n.
    let mut lens = vec![0u64; 1100];
    for k in 0..40 * s {
        lens.push(1 + rng.below(9));
        if k % 7 == 3 {
            lens.extend(std::iter::repeat_n(0, 600 + rng.below(2000) as usize));
        }
    }
    lens.extend(std::iter::repeat_n(0, 900));
    let off = from_lens(3, lens);
    v.push((
        "runs of empty segments".into(),
        *off.last().unwrap() + 5,
        off,
    ));
    // Lengths around the tiles' sizes (runs: 64 x 16 on CPUs; merge and tiles: thousands), so
    // that segments are cut at tile boundaries everywhere, by one element or many.
    let lens: Vec<u64> = (0..24 * s)
        .map(|k| [1023u64, 1025, 1, 2047, 1024, 4097, 0, 511][k as usize % 8])
        .collect();
    let off = from_lens(0, lens);
    v.push(("lengths around tiles".into(), *off.last().unwrap(), off));
    // Every segment empty.
    v.push(("all empty".into(), 10, vec![4; 300]));
    v
}

/// What the host expects of one segment: sum, max from `start`, argmin (global index) and
/// argmax (index within the segment); the lowest index wins a tie. An empty segment: the sum
/// and argmin/argmax identities, the max's initial value.
fn expect(xs: &[f32], b: usize, e: usize, start: f32) -> (f32, f32, (f32, u64), (f32, u64)) {
    let mut sum = 0.0f32;
    let mut mx = start;
    let (mut lo, mut hi) = ((f32::INFINITY, u64::MAX), (f32::NEG_INFINITY, u64::MAX));
    for (i, &v) in xs.iter().enumerate().take(e).skip(b) {
        sum += v;
        mx = mx.max(v);
        if v < lo.0 {
            lo = (v, i as u64);
        }
        if v > hi.0 {
            hi = (v, (i - b) as u64);
        }
    }
    (sum, mx, lo, hi)
}

/// One launch of the four variables over `off` under `algo` (with `vec` elements loaded at
/// once where the plan takes it), checked exactly, run twice; the segment plan it ran.
fn run(
    q: &Queue,
    n: u64,
    off: &[u64],
    (algo, vec): (SegmentAlgo, Option<usize>),
    rng: &mut Rng,
) -> Result<SegmentPlan, String> {
    let r = off.len() - 1;
    let xs: Vec<f32> = (0..n).map(|_| rng.below(9) as f32 - 4.0).collect();
    let starts: Vec<f32> = (0..r).map(|_| rng.below(7) as f32 - 3.0).collect();
    let x = q.buffer_from(&xs).unwrap();
    let offsets = q.buffer_from(off).unwrap();
    let sum = q.buffer_from(&vec![9.0f32; r]).unwrap();
    let mx = q.buffer_from(&starts).unwrap();
    let (vmin, imin) = (
        q.buffer_from(&vec![0.0f32; r]).unwrap(),
        q.buffer_from(&vec![0u64; r]).unwrap(),
    );
    let (vmax, imax) = (
        q.buffer_from(&vec![0.0f32; r]).unwrap(),
        q.buffer_from(&vec![0u64; r]).unwrap(),
    );
    let s = || Segments::offsets(&offsets);
    let launch = || {
        q.parallel_for_reduce_with(
            Range::new(n),
            vec![
                reduction(&sum, Op::Plus)
                    .segments(s())
                    .initialize_to_identity(),
                reduction(&mx, Op::Maximum).name("mx").segments(s()),
                reduction_argmin(&vmin, &imin)
                    .name("lo")
                    .segments(s())
                    .initialize_to_identity(),
                reduction_argmax(&vmax, &imax)
                    .name("hi")
                    .segments(s())
                    .index_in_segment()
                    .initialize_to_identity(),
            ],
            Kernel::new(
                "sum += x[i]; combine(mx, x[i]); combine(lo, x[i], i); combine(hi, x[i], i);",
            )
            .arg("x", &x),
            Options {
                tuning: vec.map(|v| Tuning {
                    vec: Some(v),
                    ..Tuning::default()
                }),
                ..Options::default().segment(algo)
            },
        )
    };
    let ev = launch().map_err(|e| e.to_string())?;
    let plan = ev.plan().and_then(|p| p.segment.clone()).ok_or("no plan")?;
    if plan.algo != algo {
        return Err(format!("forced {algo}, planned {}", plan.algo));
    }
    if vec.is_some_and(|v| plan.vec != v as u64) {
        return Err(format!("forced vec {vec:?}, planned {}", plan.vec));
    }
    let got = (
        sum.to_vec().unwrap(),
        mx.to_vec().unwrap(),
        vmin.to_vec().unwrap(),
        imin.to_vec().unwrap(),
        vmax.to_vec().unwrap(),
        imax.to_vec().unwrap(),
    );
    let mut bad = Vec::new();
    for (k, &start) in starts.iter().enumerate() {
        let (b, e) = (off[k] as usize, off[k + 1] as usize);
        let want = expect(&xs, b, e, start);
        let g = (
            got.0[k],
            got.1[k],
            (got.2[k], got.3[k]),
            (got.4[k], got.5[k]),
        );
        if g != want {
            bad.push(format!("segment {k} ({b}..{e}): {g:?} want {want:?}"));
        }
    }
    // The same plan again (max is idempotent, the rest start from the identity): same bits.
    launch().map_err(|e| format!("second launch: {e}"))?;
    if sum.to_vec().unwrap() != got.0 || imax.to_vec().unwrap() != got.5 {
        bad.push("a second run of the same plan gave other results".into());
    }
    if bad.is_empty() {
        Ok(plan)
    } else {
        Err(format!(
            "{} wrong: {}",
            bad.len(),
            bad[..bad.len().min(4)].join("; ")
        ))
    }
}

#[test]
fn merge_on_tile_cutting_shapes() {
    let mut t = Tally::new("segment_merge::merge_on_tile_cutting_shapes");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0x54 + d.index() as u64);
        for (name, n, off) in shapes(&mut rng, !d.is_simulator()) {
            // tiles forced to vector loads in its work-group pieces (decision 65) beside.
            for (algo, vec) in [
                (SegmentAlgo::Merge, None),
                (SegmentAlgo::Tiles, None),
                (SegmentAlgo::Tiles, Some(4)),
            ] {
                let case = format!(
                    "{algo} vec {vec:?} {name} (n {n}, {} segments)",
                    off.len() - 1
                );
                match run(q, n, &off, (algo, vec), &mut rng) {
                    Ok(_) => t.pass(&dev),
                    Err(m) => t.fail(&dev, &case, &m),
                }
            }
        }
    }
    t.finish();
}

/// The `runs` plan (decision 62) on the same shapes, one element at a time and (forced with
/// `Tuning::vec`) 4 at once: offsets starting at 0 take the vector loads, those starting at 3
/// the scalar walk; segments that cross runs and tiles, tiles with no start, empty segments
/// at both ends. With vector loads the shapes of mean length 256 and more take the early
/// loads (`SegmentPlan::pre`, decisions 71 and 78): at least one case per device must have
/// run them.
#[test]
fn runs_on_tile_cutting_shapes() {
    let mut t = Tally::new("segment_merge::runs_on_tile_cutting_shapes");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0x62 + d.index() as u64);
        let mut early = 0;
        for (name, n, off) in shapes(&mut rng, !d.is_simulator()) {
            for vec in [None, Some(4)] {
                let case = format!(
                    "runs vec {vec:?} {name} (n {n}, {} segments)",
                    off.len() - 1
                );
                match run(q, n, &off, (SegmentAlgo::Runs, vec), &mut rng) {
                    Ok(p) => {
                        early += p.pre as usize;
                        t.pass(&dev)
                    }
                    Err(m) => t.fail(&dev, &case, &m),
                }
            }
        }
        if early == 0 {
            t.fail(&dev, "runs with early loads", "no shape ran them");
        }
    }
    t.finish();
}

/// `runs`' lean kernel (decision 72; the rules take it on GPUs only, at mean length 16 and
/// less) forced on every device through the CLI (`CLREDUCE_SEGMENT=runs`,
/// `CLREDUCE_SEGMENT_TUNE=lean=1` in the child's environment): heavy-tailed CSR segments with
/// empty ones, each result checked on the host by the CLI; f32 sum, max and argmin together
/// (where their pieces fit the local memory, else the other kernel), i32 sum and min from the
/// identity, f64 sums, the last three with the lean kernel on every device (`explain` says so).
/// The last case makes every work-group take many tiles (small tiles, one work-group per
/// compute unit), so each start mask is reused: PoCL lost results there when the next tile's
/// mask was cleared during the walk (fixed in session 16: each tile clears its own mask after
/// the walk's barrier).
#[test]
fn runs_lean_forced_on_every_device() {
    // warp=0: on NVIDIA the warp kernel (decision 81) or the register scan kernel over its
    // ranges (decision 84) otherwise takes these means (explain, which plans with reduce's
    // body since decision 89, says so).
    let env = [
        ("CLREDUCE_SEGMENT", "runs"),
        ("CLREDUCE_SEGMENT_TUNE", "lean=1,warp=0"),
    ];
    let cases: [(&[&str], bool); 3] = [
        (
            &["--ragged", "8", "--n", "20011", "--op", "sum,max,argmin"],
            false,
        ),
        (
            &[
                "--ragged", "3", "--n", "9001", "--type", "i32", "--op", "sum,min",
            ],
            true,
        ),
        (&["--ragged", "16", "--n", "30011", "--type", "f64"], true),
    ];
    runs_forced_through_cli(
        "segment_merge::runs_lean_forced_on_every_device",
        &env,
        &cases,
        "; lean: ",
    );
    let many_tiles = [
        ("CLREDUCE_SEGMENT", "runs"),
        (
            "CLREDUCE_SEGMENT_TUNE",
            "lean=1,local=32,per_item=4,groups_per_cu=1,warp=0",
        ),
    ];
    let cases: [(&[&str], bool); 1] = [(
        &["--ragged", "5", "--n", "100003", "--op", "sum,max,argmin"],
        true,
    )];
    runs_forced_through_cli(
        "segment_merge::runs_lean_forced_on_every_device (many tiles per work-group)",
        &many_tiles,
        &cases,
        "; lean: ",
    );
}

/// `runs` with the segment-start checks on every vector load (decision 78; the rules take
/// them on GPUs only, outside the lean kernel) forced on every device through the CLI's bench
/// (its bodies read a buffer at `[i]`, so the loads are vectors: float4 / int4 / double2),
/// with 128 work-items, and with 64 and the early loads (the rule from mean length 256): f32
/// sums of mean 8, i32 sums of mean 300, f64 argmin of mean 16, each point checked on the
/// host by the bench (`"check": "ok"`). (src/plan/segment_tests.rs checks that these
/// settings plan the checks.)
#[test]
fn runs_checks_forced_on_every_device() {
    let mut t = Tally::new("segment_merge::runs_checks_forced_on_every_device");
    let cases = "f32-ragged-8,i32-ragged-300,f64-argmin-ragged-16";
    for (k, tune) in [
        "vec=4,checks=1,lean=0",
        "vec=4,checks=1,lean=0,local=64,pre=1",
    ]
    .into_iter()
    .enumerate()
    {
        let env = [("CLREDUCE_SEGMENT_TUNE", tune)];
        for q in queues() {
            let d = q.device();
            let dev = short(d);
            let index = d.index().to_string();
            let json = std::env::temp_dir().join(format!(
                "clreduce-runs-checks-{}-{}-{k}.json",
                std::process::id(),
                d.index()
            ));
            let json_arg = json.to_string_lossy().to_string();
            let args = [
                "bench",
                "--device",
                &index,
                "--sizes",
                "20011",
                "--cases",
                cases,
                "--strategies",
                "runs",
                "--reps",
                "1",
                "--warmup",
                "1",
                "--no-native",
                "--json",
                &json_arg,
            ];
            let (code, _, err) = cli_run::cli_with(&args, &env);
            let points: Vec<(String, String)> = std::fs::read_to_string(&json)
                .ok()
                .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
                .and_then(|js| js["points"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .map(|p| {
                    let f = |k: &str| p[k].as_str().unwrap_or("none").to_string();
                    (f("case"), f("check"))
                })
                .collect();
            let _ = std::fs::remove_file(&json);
            let ok = points.iter().filter(|(_, c)| c == "ok").count();
            if code != 0 || points.len() != 3 || ok != 3 {
                t.fail(
                    &dev,
                    tune,
                    &format!("exit {code}, points {points:?}: {err}"),
                );
                continue;
            }
            t.pass(&dev);
        }
    }
    t.finish();
}

/// The CLI's `reduce` of each case on every device with `env` (the child's environment), every
/// variable's host check ok; where a case's flag is set, `explain` must contain `marker`.
pub(crate) fn runs_forced_through_cli(
    name: &str,
    env: &[(&str, &str)],
    cases: &[(&[&str], bool)],
    marker: &str,
) {
    let mut t = Tally::new(name);
    for q in queues() {
        let d = q.device();
        let dev = short(d);
        let index = d.index().to_string();
        for &(args, must) in cases {
            let case = format!("{args:?}");
            let mut all = vec!["reduce", "--device", &index, "--json", "--init-identity"];
            all.extend(args);
            let (code, out, err) = cli_run::cli_with(&all, env);
            let checks: Vec<String> = serde_json::from_str::<serde_json::Value>(&out)
                .ok()
                .and_then(|js| js[0]["vars"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .map(|v| v["check"].as_str().unwrap_or("none").to_string())
                .collect();
            if code != 0 || checks.is_empty() || checks.iter().any(|c| !c.starts_with("ok")) {
                t.fail(
                    &dev,
                    &case,
                    &format!("exit {code}, checks {checks:?}: {err}"),
                );
                continue;
            }
            all[0] = "explain";
            all.retain(|a| *a != "--json" && *a != "--init-identity");
            let (_, plan, err) = cli_run::cli_with(&all, env);
            if must && !plan.contains(marker) {
                t.fail(
                    &dev,
                    &case,
                    &format!("{marker:?} not in the plan: {plan}{err}"),
                );
                continue;
            }
            t.pass(&dev);
        }
    }
    t.finish();
}
