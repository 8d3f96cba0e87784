//! `clreduce reduce --split` and `--mpi` with `--rows/--cols/--axis`, `--ragged` or a 2-D
//! `--input`: one segmented launch across the selected devices (`MultiQueue`, the split moved
//! onto segment boundaries unless `--shares`) or, under `mpirun -np K`, across ranks (rank r
//! reduces rows, or elements for `--ragged`, `units·r/K .. units·(r+1)/K`; rank 0 checks and
//! prints). Every result is checked on the host as on one device, the float bound's depth
//! grown by the host combinations.

use super::args::ReduceArgs;
use super::scale::devices_label;
use super::segments::{check_vars, make_vars, report, Layout, SegRun};
use crate::args::options;
use crate::error::CliResult;
use clreduce::check::reference::HostVec;
use clreduce::multi::{MultiKernel, MultiQueue, ShareReport, Split};
use clreduce::Result;

/// The body's kernel with `x` scattered by `split` (`per` elements per unit); `explain
/// --split` plans with it too.
pub fn kernel(
    mq: &MultiQueue,
    body: &str,
    data: &HostVec,
    split: &Split,
    per: u64,
) -> Result<MultiKernel> {
    let k = MultiKernel::new(body);
    Ok(match data {
        HostVec::I32(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::U32(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::I64(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::U64(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::F32(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::F64(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
    })
}

/// The shares' plans, one per share, as one text.
fn plans(shares: &[ShareReport]) -> String {
    shares
        .iter()
        .map(|s| format!("{}: {}", s.device, s.plan.as_deref().unwrap_or("-")))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn print_shares(a: &ReduceArgs, shares: &[ShareReport]) {
    if a.json {
        return;
    }
    for s in shares {
        println!(
            "  share: {}: {} unit(s) ({} indices from {}), {:.1} us",
            s.device,
            s.units,
            s.indices,
            s.first,
            s.wall_ns as f64 / 1e3
        );
    }
}

/// `clreduce reduce --split` of a segmented layout.
pub fn run_split(a: &ReduceArgs, s: &SegRun) -> CliResult<bool> {
    let mq = super::scale::multi_queue(a)?;
    let q0 = mq.queue(0);
    let offsets = match &s.l {
        Layout::Ragged(off) => Some(q0.buffer_from(off)?),
        _ => None,
    };
    let m = make_vars(q0, a, s, offsets.as_ref())?;
    let (units, per) = s.l.units();
    let range = s.l.range(units);
    let opts = options(&a.common)?;
    let split = match &a.shares {
        Some(_) => {
            super::scale::split_of(&mq, &range.into(), a.shares.as_deref(), opts.determinism)?
        }
        None => mq.split_segments(range, m.reds.clone(), opts.determinism)?,
    };
    let k = kernel(&mq, &m.body, &s.data, &split, per)?;
    let rep = mq.parallel_for_reduce_with(range, m.reds, k, opts)?;
    let (lines, ok) = check_vars(s, &m.outs, rep.shares.len() as f64)?;
    let label = format!(
        "split: {} (shares {:?}, combine {:.1} us)",
        devices_label(&mq),
        split.counts(),
        rep.combine_ns as f64 / 1e3
    );
    let mut js = Vec::new();
    report(a, s, &label, &plans(&rep.shares), &lines, &mut js);
    print_shares(a, &rep.shares);
    if a.json {
        js[0]["shares"] = serde_json::to_value(&rep.shares).expect("plain data");
        js[0]["split"] = split.counts().to_vec().into();
        println!("{}", serde_json::to_string_pretty(&js).expect("JSON"));
    }
    Ok(ok)
}

/// `mpirun -np K clreduce reduce --mpi` of a segmented layout.
#[cfg(feature = "mpi")]
pub fn run_mpi(a: &ReduceArgs, s: &SegRun) -> CliResult<bool> {
    use crate::args::queue_on;
    use crate::error::CliError;
    use clreduce::mpi::rsmpi::topology::Communicator;
    use clreduce::mpi::{parallel_for_reduce, Deliver};
    let universe = clreduce::mpi::rsmpi::initialize().ok_or_else(|| {
        CliError::Usage("--mpi: MPI could not be initialized (run under mpirun)".into())
    })?;
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    let opts = options(&a.common)?;
    // Everything that can fail on one rank only comes before one agreement (mpi::agree).
    let setup = (|| -> CliResult<_> {
        let mq = if a.split {
            super::scale::multi_queue(a)?
        } else {
            let d = crate::args::rank_device(a.common.device.as_deref(), rank as usize)?;
            MultiQueue::new(&[queue_on(&d, &a.common)?])?
        };
        let q0 = mq.queue(0);
        let offsets = match &s.l {
            Layout::Ragged(off) => Some(q0.buffer_from(off)?),
            _ => None,
        };
        let m = make_vars(q0, a, s, offsets.as_ref())?;
        let (units, per) = s.l.units();
        let (lo, hi) = (units * rank / size, units * (rank + 1) / size);
        let range = s.l.range(hi - lo);
        let block = super::scale::slice(&s.data, (lo * per) as usize, (hi * per) as usize);
        let split =
            super::scale::split_of(&mq, &range.into(), a.shares.as_deref(), opts.determinism)?;
        let k = kernel(&mq, &m.body, &block, &split, per)?;
        Ok((mq, m, range, k, offsets))
    })();
    let failure = setup.as_ref().err().map(|e| e.to_string());
    let agreed = clreduce::mpi::agree(&world, failure.as_deref());
    let (mq, m, range, k, _offsets) = setup?;
    agreed?;
    let rep = parallel_for_reduce(&world, &mq, range, m.reds, k, opts, Deliver::All)?;
    let shares = rep.local.as_ref().map_or(Vec::new(), |l| l.shares.clone());
    let (lines, ok) = check_vars(s, &m.outs, (size + shares.len() as u64) as f64)?;
    if rank != 0 {
        return Ok(true);
    }
    let label = format!(
        "mpi: {size} rank(s), rank 0 on {} (local {:.1} us, combine {:.1} us)",
        devices_label(&mq),
        rep.local_ns as f64 / 1e3,
        rep.combine_ns as f64 / 1e3
    );
    let mut js = Vec::new();
    report(a, s, &label, &plans(&shares), &lines, &mut js);
    if a.json {
        js[0]["ranks"] = size.into();
        println!("{}", serde_json::to_string_pretty(&js).expect("JSON"));
    }
    Ok(ok)
}

/// Without the `mpi` feature, `--mpi` is refused.
#[cfg(not(feature = "mpi"))]
pub fn run_mpi(_a: &ReduceArgs, _s: &SegRun) -> CliResult<bool> {
    Err(crate::error::CliError::Usage(
        "--mpi needs a clreduce built with `--features mpi` (OpenMPI: scripts/setup.sh)".into(),
    ))
}
