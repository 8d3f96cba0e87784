//! One share of a multi-device launch on its device: scratch variables started at the identity
//! (or in raw mode for exact sums and identity-less ops), the launch with the device's own
//! plan ([`launch_share`]), and the partials read back ([`finish_share`]).

use super::combine::{Combiner, Partial, PartialKind};
use crate::api::dynbuf::DynBuffer;
use crate::api::queue::Queue;
use crate::api::{
    reduction, reduction_argmax, reduction_argmin, Form, Kernel, Options, Reduction, Reductions,
};
use crate::error::Result;
use crate::exact::{Format, Superacc};
use crate::ops::Operator;
use crate::runtime::buffer::Buffer;
use crate::types::{ElemType, HostVec};
use std::time::Instant;

/// What one device did with its share, for reports (`clreduce bench --split`, `explain`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ShareReport {
    /// The device (`platform / name`).
    pub device: String,
    /// Units of the split (elements, work-groups or slices) in this share.
    pub units: u64,
    /// Linear indices of this share (units times indices per unit).
    pub indices: u64,
    /// The share's first global linear index.
    pub first: u64,
    /// The plan's one-line summary (`None`: nothing ran).
    pub plan: Option<String>,
    /// Host wall time of the share, from its launch to its partials on the host.
    pub wall_ns: u64,
    /// Device time of the share's commands (a queue with profiling only).
    pub device_ns: Option<u64>,
}

/// The partials of every variable (one per span element) of one share.
pub(crate) type SharePartials = Vec<Vec<Partial>>;

/// The user's reduction as a share runs it: the scratch buffers on the share's device.
pub(super) struct Scratch {
    res: DynBuffer,
    index: Option<Buffer<u64>>,
    raw_limbs: Option<Buffer<i64>>,
    raw_flag: Option<Buffer<u64>>,
}

/// `len` zeros of a result of type `ty` (a 16-bit type's results are f32).
pub(super) fn zeros(ty: ElemType, len: usize) -> HostVec {
    HostVec::zeros(ty, len).unwrap_or_else(|| HostVec::F32(vec![0.0; len]))
}

/// The share's reduction of user variable `r` into scratch buffers on `q`.
pub(super) fn share_reduction(
    q: &Queue,
    r: &Reduction,
    c: &Combiner,
) -> Result<(Reduction, Scratch)> {
    let elems = r.elems();
    let res = DynBuffer::upload(q, &zeros(r.target.ty, elems))?;
    let mut s = Scratch {
        res,
        index: None,
        raw_limbs: None,
        raw_flag: None,
    };
    let mut red = match r.op {
        Operator::ArgMin | Operator::ArgMax => {
            let ix = q.buffer_from(&[u64::MAX])?;
            let red = if r.op == Operator::ArgMin {
                reduction_argmin(&s.res, &ix)
            } else {
                reduction_argmax(&s.res, &ix)
            };
            s.index = Some(ix);
            red
        }
        _ => reduction(&s.res, r.op.clone()),
    };
    red.span = r.span;
    red.name = r.name.clone();
    match c.kind() {
        PartialKind::Value | PartialKind::Arg => red = red.initialize_to_identity(),
        PartialKind::Exact => {
            let limbs = Format::for_type(r.target.ty)?.limbs();
            let b = q.buffer::<i64>(limbs * elems)?;
            red = red.raw_into(&b);
            s.raw_limbs = Some(b);
        }
        PartialKind::Flagged => {
            let b = q.buffer::<u64>(1)?;
            red = red.raw_into(&b);
            s.raw_flag = Some(b);
        }
    }
    Ok((red, s))
}

/// A share whose launch is enqueued (its scratch variables alive until it is read).
pub(crate) struct Launched {
    ev: crate::ReduceEvent,
    scratch: Vec<Scratch>,
    indices: u64,
    first: u64,
    t0: Instant,
}

/// Enqueues one share: `form` on `q` with `kernel`, into scratch variables made for the user's
/// reductions `reds` (their ops, names and spans). Nothing waits: [`finish_share`] reads it.
/// `first` is the share's first global linear index.
pub(crate) fn launch_share(
    q: &Queue,
    form: Form,
    reds: &[Reduction],
    combiners: &[Combiner],
    kernel: Kernel,
    options: Options,
    first: u64,
) -> Result<Launched> {
    let t0 = Instant::now();
    let mut scratch = Vec::with_capacity(reds.len());
    let mut share = Vec::with_capacity(reds.len());
    for (r, c) in reds.iter().zip(combiners) {
        let (red, s) = share_reduction(q, r, c)?;
        share.push(red);
        scratch.push(s);
    }
    let indices = form_size(&form);
    let ev = q.parallel_for_reduce_with(form, Reductions(share), kernel, options)?;
    Ok(Launched {
        ev,
        scratch,
        indices,
        first,
        t0,
    })
}

/// Reads a launched share's partials, one list per variable: argmin/argmax indices (the
/// body's `i` in the share) are mapped to global ones by adding the share's first index.
pub(crate) fn finish_share(
    q: &Queue,
    l: Launched,
    reds: &[Reduction],
    combiners: &[Combiner],
) -> Result<(SharePartials, ShareReport)> {
    let mut partials = Vec::with_capacity(reds.len());
    for ((r, c), s) in reds.iter().zip(combiners).zip(&l.scratch) {
        partials.push(read_partials(r, c, s, l.first)?);
    }
    let wall_ns = l.t0.elapsed().as_nanos() as u64;
    let device_ns = if q.is_profiling() {
        l.ev.device_time_ns().ok()
    } else {
        None
    };
    let report = ShareReport {
        device: q.device().label(),
        units: 0,
        indices: l.indices,
        first: l.first,
        plan: l.ev.plan().map(|p| p.summary()),
        wall_ns,
        device_ns,
    };
    Ok((partials, report))
}

/// One variable's partials from its scratch buffers.
fn read_partials(r: &Reduction, c: &Combiner, s: &Scratch, first: u64) -> Result<Vec<Partial>> {
    let vals = s.res.to_values()?;
    Ok(match c.kind() {
        PartialKind::Value => vals.into_iter().map(Partial::Value).collect(),
        PartialKind::Arg => {
            let ix = s
                .index
                .as_ref()
                .expect("argmin/argmax share has an index")
                .get(0)?;
            let global = if ix == u64::MAX { ix } else { ix + first };
            vec![Partial::Arg(vals[0], global)]
        }
        PartialKind::Flagged => {
            let has = s.raw_flag.as_ref().expect("raw flag").get(0)? != 0;
            vec![Partial::Flagged(has.then_some(vals[0]))]
        }
        PartialKind::Exact => {
            let format = Format::for_type(r.target.ty)?;
            let limbs = s.raw_limbs.as_ref().expect("raw limbs").to_vec()?;
            limbs
                .chunks(format.limbs())
                .map(|l| Superacc::from_limbs(format, l).map(Partial::Exact))
                .collect::<Result<_>>()?
        }
    })
}

fn form_size(form: &Form) -> u64 {
    match form {
        Form::Range(r) => r.n,
        Form::NdRange(r) => r.global,
    }
}
