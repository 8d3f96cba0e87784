//! `runs`' register scan kernel (kernels/segment_scan.cl, decision 84) forced on every device
//! through the CLI (`CLREDUCE_SEGMENT=runs`, `CLREDUCE_SEGMENT_TUNE=wscan=1,...` in the child's
//! environment; CPUs and Oclgrind run its portable form, the work-group as the warp and the
//! scan through local memory; the H200 its PTX shuffles), each result checked on the host by
//! the CLI: heavy-tailed CSR segments with a quarter empty, so that segments are cut between
//! runs (the scan), between sub-tiles (the open piece every lane carries), between ranges (the
//! second pass) and run over whole ranges.

#[path = "common/cli.rs"]
mod cli_run;
use super::segment_merge::runs_forced_through_cli;
use crate::common::{queues, short, Tally};

/// The tunes: the device's own geometry; the H200 rule's (64 work-items, runs of 16 with
/// float4 / int4 loads, the start checks on every load below mean 256 and only on loads that
/// hold a start from 256: the portable form here, warps of 32 with PTX shuffles there); small
/// sub-tiles in long ranges (runs of 2 of 8 work-items, one work-group per compute unit:
/// hundreds of sub-tiles per range); a warp of one work-item (no scan step: every join through
/// the carried piece); vector loads in runs of 4 with the checks only where a start lies; runs
/// of 32.
const TUNES: [&str; 7] = [
    "wscan=1",
    "wscan=1,local=64,per_item=16,vec=4,checks=1",
    "wscan=1,local=64,per_item=16,vec=4,checks=0",
    "wscan=1,local=8,per_item=2,groups_per_cu=1",
    "wscan=1,local=1,per_item=2,groups_per_cu=1",
    "wscan=1,local=32,per_item=4,groups_per_cu=1,vec=4,checks=0",
    "wscan=1,per_item=32",
];

/// Sizes that are multiples of nothing: f32 sum, max and argmin together (indices within the
/// segment), i32 sum and min (exact), f64 sum, and a few segments over many ranges (sum and
/// argmax); `explain` must name the scan kernel.
#[test]
fn runs_wscan_forced_on_every_device() {
    let cases: [(&[&str], bool); 4] = [
        (
            &["--ragged", "16", "--n", "30011", "--op", "sum,max,argmin"],
            true,
        ),
        (
            &[
                "--ragged", "300", "--n", "20011", "--type", "i32", "--op", "sum,min",
            ],
            true,
        ),
        (&["--ragged", "3", "--n", "9001", "--type", "f64"], true),
        (
            &["--ragged", "40000", "--n", "100003", "--op", "sum,argmax"],
            true,
        ),
    ];
    for tune in TUNES {
        let env = [
            ("CLREDUCE_SEGMENT", "runs"),
            ("CLREDUCE_SEGMENT_TUNE", tune),
        ];
        runs_forced_through_cli(
            &format!("segment_scan::runs_wscan_forced_on_every_device ({tune})"),
            &env,
            &cases,
            "; register scan kernel: ",
        );
    }
}

/// Without `--init-identity` each result is its variable's initial value combined with its
/// segment: a segment stored twice adds it twice (PoCL once ran the code after a barrier inside
/// a branch once per work-item, as work-item 0). i32 sums (exact), short segments and a few
/// over many sub-tiles and ranges.
#[test]
fn runs_wscan_stores_each_segment_once() {
    let mut t = Tally::new("segment_scan::runs_wscan_stores_each_segment_once");
    for q in queues() {
        let d = q.device();
        let dev = short(d);
        let index = d.index().to_string();
        for tune in &TUNES[..2] {
            for mean in ["16", "9000"] {
                let args = [
                    "reduce", "--device", &index, "--json", "--ragged", mean, "--n", "40009",
                    "--type", "i32", "--op", "sum",
                ];
                let env = [
                    ("CLREDUCE_SEGMENT", "runs"),
                    ("CLREDUCE_SEGMENT_TUNE", *tune),
                ];
                let (code, out, err) = cli_run::cli_with(&args, &env);
                let check = serde_json::from_str::<serde_json::Value>(&out)
                    .ok()
                    .and_then(|js| js[0]["vars"][0]["check"].as_str().map(str::to_string))
                    .unwrap_or_default();
                if code != 0 || !check.starts_with("ok") {
                    let case = format!("{tune} mean {mean}");
                    t.fail(&dev, &case, &format!("exit {code}, check {check:?}: {err}"));
                    continue;
                }
                t.pass(&dev);
            }
        }
    }
    t.finish();
}
