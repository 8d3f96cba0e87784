//! `aligned`'s scan walk (decision 87): CSR offsets below mean length 16 on CPUs, several
//! chunks per work-item walked in lock step by a segmented scan over their elements, each
//! segment's value gathered at its end. In process, automatic and forced `aligned`, on every
//! device (the CPUs take the scan by the rule and `run_case` checks the plan's scan, chains,
//! work-group and single pass; GPUs and Oclgrind, planned as one, run the walk): heavy-tailed
//! lengths of mean 2 to 6 with a quarter or more empty, empty segments at both ends (segments
//! beginning at the range's end), every segment empty over a non-empty range, offsets that do
//! not start at 0, a long segment among short ones (across several sub-tiles and chunks), a
//! prime element count, under sum f32, sum f64, min i32 and a sampled (op, type) pair on every
//! shape, initial values kept or `initialize_to_identity`, the same bits twice
//! (tests/segment_stream.rs `run_case`). Then through the CLI with the scan forced
//! (`CLREDUCE_SEGMENT_TUNE=scan=1`, its own process) on every device, Oclgrind included: ragged
//! CSR over a prime n (sum, min, max, argmax, argmin), one segment of all n (uniform), chains
//! 1, 4 and 8, an exact sum beside (which keeps the walk), and decision 77's masked walk
//! (`scan=0`) on CSR of mean 3. Integers exactly; floats within (len + 40)·u·Σ|x| + 2u·|ref| of
//! a float64 reference.

#[path = "common/cli.rs"]
mod cli_run;

use crate::common;
use crate::segment_stream::{offsets, tally_case, trailing, Shape};

use cli_run::cli_with;
use clreduce::{ElemType, Op, SegmentAlgo};
use common::rng::Rng;
use common::{queues, short, sim_lock, valid_pairs, Tally};

fn shapes(sim: bool, rng: &mut Rng) -> Vec<Shape> {
    let csr = Shape::csr;
    let tail = if sim { 40 } else { 5000 };
    let mut v = vec![
        // Empty segments first and last, lengths around the sub-tile's steps.
        csr(
            trailing(offsets(rng, 0, &[0, 0, 1, 2, 3, 0, 7, 1], tail, 3), 4),
            0,
        ),
        // Offsets not at 0, padding after the last segment.
        csr(offsets(rng, 7, &[3, 0, 2], tail / 2, 2), 5),
        // Every segment empty over a non-empty range.
        csr(vec![3, 3, 3, 3, 3], 11),
        // A long segment among short ones: across sub-tiles (and chunks off the simulator).
        csr(
            offsets(
                rng,
                0,
                &[1, 0, if sim { 300 } else { 20011 }, 2, 0],
                tail,
                2,
            ),
            0,
        ),
    ];
    // A prime element count (the last segment takes the rest).
    let mut off = offsets(rng, 0, &[0, 5], tail, 4);
    let p = if sim { 211 } else { 24001 };
    off.retain(|&o| o < p);
    off.push(p);
    v.push(csr(off, 0));
    v
}

/// The pairs every shape runs (sum f32 and f64, min i32) and one sampled more; argmax and
/// argmin run in the CLI test below and in `segment_stream::several_variables_with_ties`.
fn pairs_for(rng: &mut Rng, all: &[(Op, ElemType)]) -> Vec<(Op, ElemType)> {
    let mut v = vec![
        (Op::Plus, ElemType::F32),
        (Op::Plus, ElemType::F64),
        (Op::Minimum, ElemType::I32),
    ];
    v.push(all[rng.below(all.len() as u64) as usize]);
    v
}

#[test]
fn scan_walk_short_csr() {
    let mut t = Tally::new("segment_ascan::scan_walk_short_csr");
    let all = valid_pairs();
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let started = std::time::Instant::now();
        let mut rng = Rng(0xA5CA + d.index() as u64);
        let sh = shapes(d.is_simulator(), &mut rng);
        for (ai, algo) in [None, Some(SegmentAlgo::Aligned)].into_iter().enumerate() {
            for (si, s) in sh.iter().enumerate() {
                for (pi, pair) in pairs_for(&mut rng, &all).into_iter().enumerate() {
                    let init = (si + ai + pi) % 2 == 1;
                    let seed = rng.below(1 << 30);
                    tally_case(&mut t, &dev, q, pair, algo, s, init, seed);
                }
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}

/// The scan forced on every device through the CLI (its own process, so that the environment
/// reaches no other test): `clreduce reduce` checks every segment against the host.
#[test]
fn scan_walk_forced_through_cli() {
    let mut t = Tally::new("segment_ascan::scan_walk_forced_through_cli");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let started = std::time::Instant::now();
        let idx = d.index().to_string();
        // Primes: 3001 elements on the simulator, 200003 elsewhere.
        let n = if d.is_simulator() { "3001" } else { "200003" };
        let runs: &[(&[&str], &str)] = &[
            (
                &["--ragged", "3", "--op", "sum,min,argmax", "--type", "f32"],
                "scan=1",
            ),
            (
                &["--ragged", "5", "--op", "sum", "--type", "f64"],
                "scan=1,unroll=4",
            ),
            (
                &[
                    "--ragged",
                    "2",
                    "--op",
                    "min,max",
                    "--type",
                    "i32",
                    "--init-identity",
                ],
                "scan=1,unroll=1",
            ),
            (
                &["--ragged", "40", "--op", "sum,argmin", "--type", "f32"],
                "scan=1,unroll=8",
            ),
            (
                &["--rows", "1", "--cols", n, "--op", "sum", "--type", "f32"],
                "scan=1",
            ),
            (
                &[
                    "--ragged",
                    "3",
                    "--op",
                    "sum",
                    "--type",
                    "f32",
                    "--determinism",
                    "exact",
                ],
                "scan=1",
            ),
            // Decision 77's masked walk on CSR, which the rules no longer give CPUs.
            (
                &[
                    "--ragged",
                    "3",
                    "--op",
                    "sum,min",
                    "--type",
                    "f64",
                    "--init-identity",
                ],
                "scan=0",
            ),
        ];
        for (extra, tune) in runs {
            let mut args = vec!["reduce", "--device", &idx];
            if !extra.contains(&"--rows") {
                args.extend(["--n", n]);
            }
            args.extend(extra.iter().copied());
            let case = format!("{} ({tune})", args.join(" "));
            let (code, out, err) = cli_with(
                &args,
                &[
                    ("CLREDUCE_SEGMENT", "aligned"),
                    ("CLREDUCE_SEGMENT_TUNE", tune),
                ],
            );
            let ops = extra[extra.iter().position(|a| *a == "--op").unwrap() + 1];
            let oks = out.matches(", ok (").count();
            if err.contains("fp64") || out.contains("fp64") {
                t.skip_device(&dev, &case, "no fp64");
            } else if code != 0 || oks != ops.split(',').count() || !out.contains("plan aligned") {
                t.fail(
                    &dev,
                    &case,
                    &format!("exit {code}, {oks} ok lines\n{out}\n{err}"),
                );
            } else {
                t.pass(&dev);
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}
