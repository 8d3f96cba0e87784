//! Reductions across MPI ranks (cargo feature `mpi`, rsmpi on OpenMPI): each rank reduces its
//! own block of the data on its device(s) (a [`MultiQueue`]; one device is a `MultiQueue` of
//! one), then the ranks' partials combine through MPI and every rank ([`Deliver::All`],
//! `MPI_Allreduce`) or one ([`Deliver::Root`], `MPI_Reduce`) gets the result in its reduction
//! variables. design/scaleout.md, "MPI", explains the decisions; in short:
//!
//! - **Status first.** Before any data moves, one `MPI_Allgather` of a fixed-size status per
//!   rank (failed or not with the first line of its error, its record length and a hash of its
//!   variables' layout, its number of indices). A rank whose local reduction failed (bad input,
//!   a build error) makes every rank return an error ([`Error::Mpi`] naming it; the failing
//!   rank its own error) and nobody waits in a collective the failing rank never enters.
//!   The same gather gives each rank its first global index (the sum over lower ranks), which
//!   maps argmin/argmax indices to global ones.
//! - **One exchange.** The partials travel as one record per rank (`record.rs`) through one
//!   collective with one user-defined MPI operation (an `extern "C"` function reading the
//!   layout from the record itself: argmin/argmax with the lowest index, custom combiners by
//!   the host evaluator, identity-less ops skipping empty ranks, exact superaccumulators merged
//!   limb by limb). A launch whose variables are all exact sums uses the built-in `MPI_SUM` on
//!   the `i64` limbs instead: each rank's limbs are normalized (digits in `[0, 2^32)`, the
//!   counters non-negative counts), so adding them across fewer than 2^31 ranks cannot
//!   overflow, and integer addition is exact in any order; the merged limbs are carry-save,
//!   which `Superacc::from_limbs` takes as they are.
//! - **Segmented launches** (`segments.rs`): a first status gather gives each rank its block's
//!   place in the whole index space before it runs; each rank's record holds one partial per
//!   segment, a segment cut by a rank boundary combining like any other partial.
//! - **The initial value** of the delivering rank (rank 0 for `All`, the root for `Root`) is
//!   combined once; other ranks' initial values are not used (under `initialize_to_identity`
//!   none is).

mod record;
mod segments;

use crate::api::{Form, Options, Reductions};
use crate::error::{Error, Result};
use crate::exact::{Format, Superacc};
use crate::multi::combine::{Combiner, Partial, PartialKind};
use crate::multi::{self, MultiKernel, MultiQueue, MultiReport, ShareReport, Split};
use ::mpi::collective::{CommunicatorCollectives, Root, SystemOperation, UnsafeUserOperation};
use ::mpi::datatype::{Equivalence, MutView, UserDatatype, View};
use ::mpi::topology::Communicator;
use record::VarLayout;

/// The rsmpi crate clreduce is built with (`rsmpi::initialize()`, communicators).
pub use ::mpi as rsmpi;
use std::time::Instant;

/// Which ranks get the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deliver {
    /// Every rank (`MPI_Allreduce`); rank 0's initial values are used.
    All,
    /// Only this rank (`MPI_Reduce`); its initial values are used, the others' variables are
    /// left unchanged.
    Root(i32),
}

/// What one rank did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MpiReport {
    /// This rank.
    pub rank: i32,
    /// The number of ranks.
    pub size: i32,
    /// This rank's first global index, and the indices of all ranks.
    pub offset: u64,
    /// The indices of all ranks together.
    pub total: u64,
    /// The local multi-device launch (`None`: this rank had no indices).
    pub local: Option<MultiReport>,
    /// Host time of the local reduction (launch to partials on the host).
    pub local_ns: u64,
    /// Host time of everything after it: the status gather, the exchange, writing the result.
    pub combine_ns: u64,
    /// Of which the data exchange alone (the one collective).
    pub exchange_ns: u64,
    /// Whether the exchange used the built-in `MPI_SUM` (all variables exact sums).
    pub builtin_sum: bool,
}

/// Words of the status each rank contributes: failed, record words, layout hash, indices,
/// then the first line of the error as bytes.
const STATUS_WORDS: usize = 32;

/// The local phase of a rank: partials (this rank's indices only) or the error.
struct Local {
    partials: Vec<Vec<Partial>>,
    initial: Vec<Vec<(crate::types::Value, u64)>>,
    vars: Vec<VarLayout>,
    report: Option<MultiReport>,
}

impl Local {
    /// The local phase's result; `report` (the split and its shares, the wall time since
    /// `t0`) only where this rank ran shares.
    fn new(
        partials: Vec<Vec<Partial>>,
        initial: Vec<Vec<(crate::types::Value, u64)>>,
        vars: Vec<VarLayout>,
        (split, shares): (Split, Vec<ShareReport>),
        t0: Instant,
    ) -> Local {
        let report = (!shares.is_empty()).then(|| MultiReport {
            split,
            shares,
            combine_ns: 0,
            wall_ns: t0.elapsed().as_nanos() as u64,
        });
        Local {
            partials,
            initial,
            vars,
            report,
        }
    }
}

fn local_phase(
    mq: &MultiQueue,
    form: &Form,
    reds: &Reductions,
    kernel: &MultiKernel,
    options: Options,
    home: bool,
) -> Result<Local> {
    let t0 = Instant::now();
    let combiners = multi::combiners(&reds.0, options)?;
    let split = mq.split_for(form, kernel, options.determinism)?;
    let (totals, shares) = mq.run_shares(form, &reds.0, kernel, &split, options)?;
    let mut partials = Vec::with_capacity(reds.0.len());
    let mut initial = Vec::with_capacity(reds.0.len());
    let mut vars = Vec::with_capacity(reds.0.len());
    for ((r, c), t) in reds.0.iter().zip(&combiners).zip(totals) {
        partials.push(match t {
            Some(t) => t,
            None => vec![c.empty()?; r.elems()],
        });
        // Only the delivering rank combines its initial value (read here, before the status
        // exchange, so that a failing read is a local failure every rank hears of).
        initial.push(if home && !r.init_to_identity {
            mq.initial(r)?
        } else {
            Vec::new()
        });
        vars.push(VarLayout {
            combiner: c.clone(),
            elems: r.elems(),
        });
    }
    Ok(Local::new(partials, initial, vars, (split, shares), t0))
}

fn hash(words: &[u64]) -> u64 {
    // FNV-1a over the header words: equal layouts give equal hashes on every rank.
    words.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &w| {
        (h ^ w).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Marks `status` failed with the first line of `msg` (as much of it as the status holds).
fn failed_status(status: &mut [u64; STATUS_WORDS], msg: &str) {
    status[0] = 1;
    let first = msg.lines().next().unwrap_or("");
    for (w, chunk) in status[4..].iter_mut().zip(first.as_bytes().chunks(8)) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        *w = u64::from_le_bytes(b);
    }
}

/// Every rank learns whether every rank is ready, before a collective that a failed rank
/// would never enter (where it would leave the others waiting forever). Every rank of `comm`
/// must call it at the same point; `failure` is this rank's error message (its first line is
/// passed on), `None` when it is ready. `Err` ([`Error::Mpi`], naming the lowest failing rank
/// and quoting it) on every rank when any rank failed; a failing rank should report its own
/// error instead. One `MPI_Allgather` of a fixed-size status, as [`parallel_for_reduce`]
/// itself does for its local phase. For example the command line, whose setup (device,
/// queue, input) may fail on one rank only:
///
/// ```ignore
/// let setup = prepare_this_rank();
/// let agreed = clreduce::mpi::agree(&world, setup.as_ref().err().map(|e| e.to_string()).as_deref());
/// let ready = setup?; // this rank's own error first
/// agreed?;            // then another rank's
/// ```
pub fn agree<C: Communicator>(comm: &C, failure: Option<&str>) -> Result<()> {
    let mut status = [0u64; STATUS_WORDS];
    if let Some(m) = failure {
        failed_status(&mut status, m);
    }
    let mut all = vec![0u64; STATUS_WORDS * comm.size() as usize];
    comm.all_gather_into(&status[..], &mut all[..]);
    match first_failure(&all) {
        Some((rank, msg)) => Err(Error::Mpi {
            rank,
            reason: format!("it failed before the reduction: {msg}"),
        }),
        None => Ok(()),
    }
}

/// The lowest failed rank of gathered statuses and its message.
fn first_failure(all: &[u64]) -> Option<(i32, String)> {
    let (rank, s) = all
        .chunks(STATUS_WORDS)
        .enumerate()
        .find(|(_, s)| s[0] != 0)?;
    let bytes: Vec<u8> = s[4..].iter().flat_map(|w| w.to_le_bytes()).collect();
    let msg = String::from_utf8_lossy(&bytes)
        .trim_end_matches('\0')
        .to_string();
    Some((rank as i32, msg))
}

/// Every rank's status: `Err` with the first failing rank's message, or the indices per rank.
fn exchange_status<C: Communicator>(comm: &C, mine: [u64; STATUS_WORDS]) -> Result<Vec<u64>> {
    let mut all = vec![0u64; STATUS_WORDS * comm.size() as usize];
    comm.all_gather_into(&mine[..], &mut all[..]);
    let ranks: Vec<&[u64]> = all.chunks(STATUS_WORDS).collect();
    if let Some((rank, msg)) = first_failure(&all) {
        return Err(Error::Mpi {
            rank,
            reason: format!("its local reduction failed: {msg}"),
        });
    }
    if let Some((rank, s)) = ranks
        .iter()
        .enumerate()
        .find(|(_, s)| s[1] != ranks[0][1] || s[2] != ranks[0][2])
    {
        return Err(Error::Mpi {
            rank: rank as i32,
            reason: format!(
                "its reductions differ from rank 0's (record of {} words, layout {:#x}; rank 0: {} words, {:#x}): every rank must run the same variables, ops and types",
                s[1], s[2], ranks[0][1], ranks[0][2]
            ),
        });
    }
    Ok(ranks.iter().map(|s| s[3]).collect())
}

/// Runs one reduction across the ranks of `comm`: this rank's `range` (its own block, on its
/// devices `mq`, the body seeing its block's local `i`), combined with every other rank's.
/// Every rank must call it with the same variables (ops, types, span lengths) and options;
/// the ranges may differ (an empty one is fine). Argmin/argmax indices are global: a rank's
/// first global index is the number of indices of the ranks below it.
pub fn parallel_for_reduce<C: Communicator>(
    comm: &C,
    mq: &MultiQueue,
    range: impl Into<Form>,
    reductions: impl Into<Reductions>,
    kernel: MultiKernel,
    options: Options,
    deliver: Deliver,
) -> Result<MpiReport> {
    let (form, reds) = (range.into(), reductions.into());
    if reds.0.iter().any(|r| r.seg.is_some()) {
        return segments::parallel_for_segments(comm, mq, form, reds, kernel, options, deliver);
    }
    let t0 = Instant::now();
    let home = match deliver {
        Deliver::All => 0,
        Deliver::Root(r) => r,
    };
    let local = local_phase(mq, &form, &reds, &kernel, options, comm.rank() == home);
    let local_ns = t0.elapsed().as_nanos() as u64;
    let t1 = Instant::now();
    let n_local = multi::units_of(&form).map(|(u, per)| u * per).unwrap_or(0);
    let mut status = [0u64; STATUS_WORDS];
    match &local {
        Ok(l) => {
            status[1] = record::record_words(&l.vars) as u64;
            status[2] = hash(&record::header(&l.vars));
            status[3] = n_local;
        }
        Err(e) => failed_status(&mut status, &e.to_string()),
    }
    let gathered = exchange_status(comm, status);
    let (mut l, counts) = match (local, gathered) {
        (Err(e), _) => return Err(e),
        (Ok(_), Err(e)) => return Err(e),
        (Ok(l), Ok(c)) => (l, c),
    };
    let rank = comm.rank();
    let offset: u64 = counts[..rank as usize].iter().sum();
    let total: u64 = counts.iter().sum();
    if !(0..comm.size()).contains(&home) {
        return Err(Error::Mpi {
            rank: home,
            reason: format!("no such root in a communicator of {} ranks", comm.size()),
        });
    }
    // Global indices; the delivering rank's initial values, once.
    for ((ps, v), init) in l.partials.iter_mut().zip(&l.vars).zip(&l.initial) {
        for (e, p) in ps.iter_mut().enumerate() {
            if let Partial::Arg(_, i) = p {
                if *i != u64::MAX {
                    *i += offset;
                }
            }
            // Only the delivering rank read its initial values (none under
            // initialize_to_identity).
            if let Some(&(v0, i0)) = init.get(e) {
                *p = v
                    .combiner
                    .combine(&initial_partial(&v.combiner, v0, i0)?, p)?;
            }
        }
    }
    let builtin_sum = l
        .vars
        .iter()
        .all(|v| v.combiner.kind() == PartialKind::Exact);
    let t2 = Instant::now();
    let combined = if builtin_sum {
        exchange_exact(comm, &l, deliver)?
    } else {
        exchange_records(comm, &l, deliver)?
    };
    let exchange_ns = t2.elapsed().as_nanos() as u64;
    if let Some(totals) = combined {
        for ((r, v), t) in reds.0.iter().zip(&l.vars).zip(totals) {
            mq.write_var(r, &v.combiner, Some(t), false)?;
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
        builtin_sum,
    })
}

/// The partial of an initial value.
fn initial_partial(c: &Combiner, v0: crate::types::Value, i0: u64) -> Result<Partial> {
    Ok(match c.kind() {
        PartialKind::Value => Partial::Value(v0),
        PartialKind::Arg => Partial::Arg(v0, i0),
        PartialKind::Flagged => Partial::Flagged(Some(v0)),
        PartialKind::Exact => {
            let mut s = Superacc::new(Format::for_type(c.ty())?);
            match v0 {
                crate::types::Value::F32(x) => s.add_f32(x),
                crate::types::Value::F64(x) => s.add_f64(x)?,
                _ => {}
            }
            Partial::Exact(s)
        }
    })
}

/// All variables exact: `MPI_SUM` on the normalized `i64` limbs. `None` on a rank that does
/// not receive the result.
fn exchange_exact<C: Communicator>(
    comm: &C,
    l: &Local,
    deliver: Deliver,
) -> Result<Option<Vec<Vec<Partial>>>> {
    let mut send: Vec<i64> = Vec::new();
    for ps in &l.partials {
        for p in ps {
            if let Partial::Exact(s) = p {
                send.extend(s.limbs()?);
            }
        }
    }
    let mut recv = vec![0i64; send.len()];
    match deliver {
        Deliver::All => comm.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum()),
        Deliver::Root(r) if r == comm.rank() => comm.process_at_rank(r).reduce_into_root(
            &send[..],
            &mut recv[..],
            SystemOperation::sum(),
        ),
        Deliver::Root(r) => {
            comm.process_at_rank(r)
                .reduce_into(&send[..], SystemOperation::sum());
            return Ok(None);
        }
    }
    let mut at = 0;
    let mut out = Vec::with_capacity(l.vars.len());
    for v in &l.vars {
        let format = Format::for_type(v.combiner.ty())?;
        let mut ps = Vec::with_capacity(v.elems);
        for _ in 0..v.elems {
            ps.push(Partial::Exact(Superacc::from_limbs(
                format,
                &recv[at..at + format.limbs()],
            )?));
            at += format.limbs();
        }
        out.push(ps);
    }
    Ok(Some(out))
}

/// Any variables: one record per rank through the user-defined operation.
fn exchange_records<C: Communicator>(
    comm: &C,
    l: &Local,
    deliver: Deliver,
) -> Result<Option<Vec<Vec<Partial>>>> {
    let send = record::pack(&l.vars, &l.partials)?;
    let mut recv = vec![0u64; send.len()];
    let dt = UserDatatype::contiguous(send.len() as i32, &u64::equivalent_datatype());
    // SAFETY: one element of `dt` is exactly `send.len()` u64 words, the length of both
    // buffers; `record_op` reads and writes whole records of that length and never panics.
    unsafe {
        let sv = View::with_count_and_datatype(&send[..], 1, &dt);
        let mut rv = MutView::with_count_and_datatype(&mut recv[..], 1, &dt);
        let op = UnsafeUserOperation::commutative(record::record_op);
        match deliver {
            Deliver::All => comm.all_reduce_into(&sv, &mut rv, &op),
            Deliver::Root(r) if r == comm.rank() => {
                comm.process_at_rank(r).reduce_into_root(&sv, &mut rv, &op)
            }
            Deliver::Root(r) => {
                comm.process_at_rank(r).reduce_into(&sv, &op);
                return Ok(None);
            }
        }
    }
    match recv[0] {
        0 => {}
        1 => {
            return Err(Error::Mpi {
                rank: comm.rank(),
                reason: "the ranks' records differ in layout".into(),
            })
        }
        _ => {
            return Err(Error::Mpi {
                rank: comm.rank(),
                reason: "combining the ranks' partials failed (a custom combiner the host cannot evaluate on these values)".into(),
            })
        }
    }
    let (vars, hlen) = record::parse_header(&recv).ok_or_else(|| Error::Mpi {
        rank: comm.rank(),
        reason: "the combined record is malformed".into(),
    })?;
    record::unpack(&vars, &recv, hlen).map(Some)
}
