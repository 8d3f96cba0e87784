//! Segmented and axis reductions across MPI ranks: the ranks' index counts first (one status
//! gather, marked as a segmented launch, so that each rank knows where its block starts in the
//! whole index space before it runs), then each rank's shares of its block on its devices with
//! one partial per segment (`multi::segments`), the usual status gather, and one exchange of
//! the records (one partial per segment per variable). design/scaleout.md, "Segmented
//! reductions across devices".

use super::record::{self, VarLayout};
use super::{
    exchange_records, exchange_status, failed_status, hash, initial_partial, Deliver, Local,
    MpiReport, STATUS_WORDS,
};
use crate::api::{Form, Options, Reductions};
use crate::error::{Error, Result};
use crate::multi::combine::Partial;
use crate::multi::{self, MultiKernel, MultiQueue};
use ::mpi::topology::Communicator;
use std::time::Instant;

/// Word 2 of the first status of a segmented launch, where a plain launch's status holds its
/// layout hash: a rank that runs a plain launch against segmented ones sees a different
/// "layout" in the same-sized gather, and every rank returns an error (no rank waits in a
/// collective another never enters).
const SEGMENTED: u64 = 0x5e67_e47e_d5e6_0001;

/// `parallel_for_reduce` for a launch whose variables are segmented: `form` is this rank's
/// block (a 1-D range, or rows of a 2-D or 3-D range whose inner extents every rank shares),
/// the segments those of every rank's blocks in rank order.
pub(super) fn parallel_for_segments<C: Communicator>(
    comm: &C,
    mq: &MultiQueue,
    form: Form,
    reds: Reductions,
    kernel: MultiKernel,
    options: Options,
    deliver: Deliver,
) -> Result<MpiReport> {
    let t0 = Instant::now();
    let home = match deliver {
        Deliver::All => 0,
        Deliver::Root(r) => r,
    };
    let extents = form
        .validate()
        .and_then(|_| multi::seg_extents(&form, &reds).map(<[u64]>::to_vec));
    let mut first = [0u64; STATUS_WORDS];
    match &extents {
        Ok(e) => {
            first[1] = hash(&e[1..]);
            first[2] = SEGMENTED;
            first[3] = e.iter().product();
        }
        Err(e) => failed_status(&mut first, &e.to_string()),
    }
    let counts = exchange_status(comm, first);
    let (extents, counts) = match (extents, counts) {
        (Err(e), _) | (Ok(_), Err(e)) => return Err(e),
        (Ok(e), Ok(c)) => (e, c),
    };
    let rank = comm.rank();
    let offset: u64 = counts[..rank as usize].iter().sum();
    let total: u64 = counts.iter().sum();
    let inner: u64 = extents[1..].iter().product();
    let mut global = extents.clone();
    global[0] = if extents.len() == 1 {
        total
    } else {
        total / inner.max(1)
    };
    let local = local_phase(
        mq,
        &form,
        &reds,
        &kernel,
        options,
        &global,
        total,
        offset,
        rank == home,
    );
    let local_ns = t0.elapsed().as_nanos() as u64;
    let t1 = Instant::now();
    let mut status = [0u64; STATUS_WORDS];
    match &local {
        Ok(l) => {
            status[1] = record::record_words(&l.vars) as u64;
            status[2] = hash(&record::header(&l.vars));
            status[3] = counts[rank as usize];
        }
        Err(e) => failed_status(&mut status, &e.to_string()),
    }
    let gathered = exchange_status(comm, status);
    let mut l = match (local, gathered) {
        (Err(e), _) | (Ok(_), Err(e)) => return Err(e),
        (Ok(l), Ok(_)) => l,
    };
    if !(0..comm.size()).contains(&home) {
        return Err(Error::Mpi {
            rank: home,
            reason: format!("no such root in a communicator of {} ranks", comm.size()),
        });
    }
    // The delivering rank's initial values, once (indices are already global, or within
    // their segment).
    for ((ps, v), init) in l.partials.iter_mut().zip(&l.vars).zip(&l.initial) {
        for (p, &(v0, i0)) in ps.iter_mut().zip(init) {
            *p = v
                .combiner
                .combine(&initial_partial(&v.combiner, v0, i0)?, p)?;
        }
    }
    let t2 = Instant::now();
    let combined = exchange_records(comm, &l, deliver)?;
    let exchange_ns = t2.elapsed().as_nanos() as u64;
    if let Some(totals) = combined {
        for ((r, v), t) in reds.0.iter().zip(&l.vars).zip(totals) {
            mq.write_segments(r, &v.combiner, t.into_iter().map(Some).collect(), false)?;
        }
    }
    Ok(MpiReport {
        rank,
        size: comm.size(),
        offset,
        total,
        local: l.report.take(),
        local_ns,
        combine_ns: t1.elapsed().as_nanos() as u64,
        exchange_ns,
        builtin_sum: false,
    })
}

/// This rank's shares of its block (global linear indices `offset ..`), one partial per
/// segment of the whole launch (the identity where the rank has no index of a segment).
#[allow(clippy::too_many_arguments)]
fn local_phase(
    mq: &MultiQueue,
    form: &Form,
    reds: &Reductions,
    kernel: &MultiKernel,
    options: Options,
    global: &[u64],
    total: u64,
    offset: u64,
    home: bool,
) -> Result<Local> {
    let t0 = Instant::now();
    let l = mq.seg_launch(&reds.0, global, total, options)?;
    let split = mq.rank_split(form, kernel, &l, options.determinism, offset)?;
    let (totals, shares) =
        mq.run_segment_shares(form, &reds.0, kernel, (&split, offset), &l, options)?;
    let segments = l.geo.segments() as usize;
    let mut partials = Vec::with_capacity(reds.0.len());
    let mut initial = Vec::with_capacity(reds.0.len());
    let mut vars = Vec::with_capacity(reds.0.len());
    for ((r, c), t) in reds.0.iter().zip(&l.combiners).zip(totals) {
        let empty = c.empty()?;
        partials.push(
            t.into_iter()
                .map(|p| p.unwrap_or_else(|| empty.clone()))
                .collect::<Vec<Partial>>(),
        );
        initial.push(if home && !r.init_to_identity {
            mq.seg_initial(r, segments)?
        } else {
            Vec::new()
        });
        vars.push(VarLayout {
            combiner: c.clone(),
            elems: segments,
        });
    }
    Ok(Local::new(partials, initial, vars, (split, shares), t0))
}
