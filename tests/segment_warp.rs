//! `runs`' warp kernel (kernels/segment_warp.cl, decision 81) forced on every device through
//! the CLI (`CLREDUCE_SEGMENT=runs`, `CLREDUCE_SEGMENT_TUNE=warp=...` in the child's
//! environment; CPUs and Oclgrind run it with the work-group's barriers, the H200 with a
//! warp's), each result checked on the host by the CLI: heavy-tailed CSR segments with empty
//! ones, so that segments are cut between sub-tiles (joined in the first pass through the
//! warp's carry), between ranges (the second pass) and run over whole ranges.

use super::segment_merge::runs_forced_through_cli;

/// The rules' geometry (one or a few sub-tiles per range) and small sub-tiles in long ranges
/// (runs of 2 of 8 work-items, one work-group per compute unit: hundreds of sub-tiles, many
/// batches of bounds, per range), one element at a time and with vector loads (float4 /
/// int4 / double2 where forced), with and without the early loads: f32 sum, max and argmin together, i32 sum and min from the
/// identity (exact), f64 sums; `explain` must name the warp kernel.
#[test]
fn runs_warp_forced_on_every_device() {
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
            &["--ragged", "3000", "--n", "100003", "--op", "sum,argmax"],
            true,
        ),
    ];
    // wscan=0: the register scan kernel (decision 84) walks these ranges where its rule runs
    // (the H200); tests/segment_scan.rs forces it.
    for tune in [
        "warp=1,wscan=0",
        "warp=2,local=8,per_item=2,groups_per_cu=1,wscan=0",
        "warp=1,local=32,per_item=4,groups_per_cu=1,vec=4,wscan=0",
        "warp=1,local=32,per_item=8,groups_per_cu=1,vec=4,pre=1,wscan=0",
    ] {
        let env = [
            ("CLREDUCE_SEGMENT", "runs"),
            ("CLREDUCE_SEGMENT_TUNE", tune),
        ];
        runs_forced_through_cli(
            &format!("segment_warp::runs_warp_forced_on_every_device ({tune})"),
            &env,
            &cases,
            "; warp kernel: barriers over ",
        );
    }
}
