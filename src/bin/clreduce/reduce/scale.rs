//! `clreduce reduce --split` (one launch cut across every selected device, `clreduce::multi`)
//! and `clreduce reduce --mpi` (under `mpirun -np K`: each rank reduces a block of the same
//! input, `clreduce::mpi`, rank 0 prints). The input, initial values, host reference and checks
//! are `reduce`'s own; the report is the same, with the shares, and `--json` the same objects
//! with a `shares` list.

use super::check::{check_var, expected, Got, Verdict};
use super::{json, Prepared};
use crate::args::{options, queue_on, split_devices};
use crate::error::{CliError, CliResult};
use crate::vars::{make_reductions, make_targets, Target};
use clreduce::check::reference::HostVec;
use clreduce::multi::{units_of, MultiKernel, MultiQueue, MultiReport, ShareReport, Split};
use clreduce::plan::{Determinism, Plan};
use clreduce::{devices, Device, Form, NdRange, Options, Range, Result};

use serde_json::json;

/// `--shares W,W,...`: explicit weights per device, else by measured throughput.
pub(crate) fn split_of(
    mq: &MultiQueue,
    form: &Form,
    shares: Option<&str>,
    det: Determinism,
) -> CliResult<Split> {
    let (units, per) = units_of(form)?;
    match shares {
        None => Ok(mq.split_with(units, per, det)?),
        Some(s) => {
            let w: Vec<f64> = s
                .split(',')
                .map(|x| x.trim().parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| CliError::Usage(format!("--shares {s:?}: {e}")))?;
            if w.len() != mq.len() {
                return Err(CliError::Usage(format!(
                    "--shares {s:?}: {} weights for {} devices",
                    w.len(),
                    mq.len()
                )));
            }
            Ok(Split::proportional(units, &w)?)
        }
    }
}

/// Elements `lo..hi` of a host vector.
#[cfg(feature = "mpi")]
pub(super) fn slice(v: &HostVec, lo: usize, hi: usize) -> HostVec {
    match v {
        HostVec::I32(d) => HostVec::I32(d[lo..hi].to_vec()),
        HostVec::U32(d) => HostVec::U32(d[lo..hi].to_vec()),
        HostVec::I64(d) => HostVec::I64(d[lo..hi].to_vec()),
        HostVec::U64(d) => HostVec::U64(d[lo..hi].to_vec()),
        HostVec::F32(d) => HostVec::F32(d[lo..hi].to_vec()),
        HostVec::F64(d) => HostVec::F64(d[lo..hi].to_vec()),
    }
}

/// The kernel of the run: `reduce`'s body with the span bin on the global index (`rbase`: the
/// rank's first index, `xbase`: the share's), `x` scattered by `split`.
fn kernel(
    mq: &MultiQueue,
    p: &Prepared,
    data: &HostVec,
    split: &Split,
    per: u64,
    rbase: u64,
) -> Result<MultiKernel> {
    let body = p.body.replace("(ulong)i)", "(ulong)(rbase + xbase + i))");
    let k = MultiKernel::new(&body)
        .offset("xbase")
        .scalar("rbase", rbase);
    Ok(match data {
        HostVec::I32(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::U32(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::I64(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::U64(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::F32(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
        HostVec::F64(d) => k.arg("x", &mq.scatter_with(d, split, per)?),
    })
}

/// Every variable's result.
fn results(targets: &[Target]) -> Result<Vec<Got>> {
    targets
        .iter()
        .map(|t| {
            Ok(match t {
                Target::Scalar(b) => Got::Scalar(b.value(0)?),
                Target::Arg(b, i) => Got::Arg(b.value(0)?, i.get(0)?),
                Target::Span(b) => Got::Span(b.to_values()?),
            })
        })
        .collect()
}

/// The plan the float bounds use: the share plan with the longest combination chain, each of
/// its inputs passing through `extra` more host combinations (shares, ranks).
fn bound_plan(plans: &[Plan], extra: u64) -> Plan {
    let mut p = plans
        .iter()
        .max_by(|a, b| {
            let d = |p: &Plan| clreduce::check::reference::combination_depth(p, 0);
            d(a).total_cmp(&d(b))
        })
        .expect("a launch with a share")
        .clone();
    p.items_per_work_item += extra;
    p
}

/// The multi-device queue of the selected devices (profiling queues with the mask).
pub(super) fn multi_queue(a: &super::ReduceArgs) -> CliResult<MultiQueue> {
    let devs = split_devices(a.common.device.as_deref())?;
    let queues = devs
        .iter()
        .map(|d| queue_on(d, &a.common))
        .collect::<Result<Vec<_>>>()?;
    Ok(MultiQueue::new(&queues)?)
}

/// What one run produced, for the report.
struct Outcome {
    label: String,
    plans: Vec<Plan>,
    got: Vec<Got>,
    report: Option<MultiReport>,
    /// Host combinations on top of the shares' plans.
    extra: u64,
    /// MPI: ranks, local and combine time on rank 0.
    mpi: Option<(i32, u64, u64)>,
}

/// A launch made ready to run: its form, variables, kernel, options, result buffers and the
/// plans of its shares.
struct Ready {
    form: Form,
    reds: Vec<clreduce::Reduction>,
    kernel: MultiKernel,
    opts: Options,
    targets: Vec<Target>,
    plans: Vec<Plan>,
}

/// Prepares the launch of `data` (this process's block, first index `rbase`) on `mq`:
/// everything that can fail before it runs.
fn ready(
    mq: &MultiQueue,
    a: &super::ReduceArgs,
    p: &Prepared,
    data: &HostVec,
    rbase: u64,
) -> CliResult<Ready> {
    let n = data.len() as u64;
    let form: Form = match p.spec.form {
        Form::Range(_) => Range::new(n).into(),
        Form::NdRange(r) => NdRange::new(n, r.local).into(),
    };
    let split = split_of(
        mq,
        &form,
        a.shares.as_deref(),
        options(&a.common)?.determinism,
    )?;
    let (_, per) = units_of(&form)?;
    let kernel = kernel(mq, p, data, &split, per, rbase)?;
    let targets = make_targets(mq.queue(0), p.spec.ty, &p.inits)?;
    let reds = make_reductions(&p.spec.vars, &targets, p.spec.init_identity);
    let opts = options(&a.common)?;
    // An empty block (more ranks than elements) still plans one index, for the bounds.
    let (_, plans) = if n == 0 {
        mq.explain(Range::new(1), reds.clone(), &MultiKernel::new(""), opts)?
    } else {
        mq.explain(form, reds.clone(), &kernel, opts)?
    };
    Ok(Ready {
        form,
        reds,
        kernel,
        opts,
        targets,
        plans: plans.into_iter().flatten().collect(),
    })
}

/// The devices of a split, as its report line names them: `A + B`.
pub(super) fn devices_label(mq: &MultiQueue) -> String {
    mq.queues()
        .iter()
        .map(|q| q.device().label())
        .collect::<Vec<_>>()
        .join(" + ")
}

/// `clreduce reduce --split`.
pub fn run_split(a: &super::ReduceArgs, p: &Prepared) -> CliResult<bool> {
    let mq = multi_queue(a)?;
    let label = devices_label(&mq);
    let r = ready(&mq, a, p, &p.data, 0)?;
    let report = Some(mq.parallel_for_reduce_with(r.form, r.reds, r.kernel, r.opts)?);
    let (plans, got) = (r.plans, results(&r.targets)?);
    let extra = report.as_ref().map_or(0, |r| r.shares.len() as u64);
    report_outcome(
        a,
        p,
        Outcome {
            label: format!("split: {label}"),
            plans,
            got,
            report,
            extra,
            mpi: None,
        },
    )
}

/// The checks and the report (text or JSON) of a run.
fn report_outcome(a: &super::ReduceArgs, p: &Prepared, o: Outcome) -> CliResult<bool> {
    let exact = options(&a.common)?.determinism == Determinism::Exact;
    let want = expected(&p.spec.vars, &p.inits, &p.data, p.spec.init_identity, exact)?;
    let plan = if o.plans.is_empty() {
        None
    } else {
        Some(bound_plan(&o.plans, o.extra))
    };
    let verdicts: Vec<Verdict> = match &plan {
        Some(plan) => (0..p.spec.vars.len())
            .map(|k| check_var(&p.spec.vars[k], k, plan, &want[k], &o.got[k], p.spec.ty))
            .collect(),
        None => Vec::new(),
    };
    let ok = plan.is_some() && verdicts.iter().all(|v| v.ok);
    let shares: Vec<ShareReport> = o.report.as_ref().map_or(Vec::new(), |r| r.shares.clone());
    if a.json {
        let plan = plan.as_ref().expect("a run with shares");
        let ran = json::Ran {
            device: mq_first_device(&shares),
            ty: p.spec.ty,
            n: p.spec.n,
            input: &p.data_note,
            body: &p.body,
            plan,
            device_time_ns: shares.iter().filter_map(|s| s.device_ns).max().unwrap_or(0),
        };
        let mut j = json::ran(&ran, &p.spec.vars, &o.got, &verdicts);
        j["device"] = o.label.clone().into();
        j["plan"] = o
            .plans
            .iter()
            .map(|p| p.summary())
            .collect::<Vec<_>>()
            .join(" | ")
            .into();
        j["shares"] = serde_json::to_value(&shares).expect("plain data");
        if let Some(r) = &o.report {
            j["split"] = r.split.counts().to_vec().into();
            j["combine_ns"] = r.combine_ns.into();
        }
        if let Some((ranks, local, combine)) = o.mpi {
            j["ranks"] = ranks.into();
            j["local_ns"] = local.into();
            j["combine_ns"] = combine.into();
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!([j])).expect("JSON")
        );
        return Ok(ok);
    }
    outln!("device:    {}", o.label);
    outln!(
        "input:     x = {} x {}, {}",
        p.spec.n,
        p.spec.ty,
        p.data_note
    );
    outln!("body:      {}", p.body);
    if let Some((ranks, local, combine)) = o.mpi {
        outln!(
            "mpi:       {ranks} rank(s); rank 0: local reduction {:.1} us, status + exchange + write {:.1} us",
            local as f64 / 1e3,
            combine as f64 / 1e3
        );
    }
    for s in &shares {
        outln!(
            "share:     {}: {} unit(s) ({} indices from {}), {}, {:.1} us{}",
            s.device,
            s.units,
            s.indices,
            s.first,
            s.plan.as_deref().unwrap_or("-"),
            s.wall_ns as f64 / 1e3,
            s.device_ns
                .map(|d| format!(" ({:.1} us device)", d as f64 / 1e3))
                .unwrap_or_default()
        );
    }
    if let (Some(r), None) = (&o.report, o.mpi) {
        outln!("combine:   {:.1} us on the host", r.combine_ns as f64 / 1e3);
    }
    for plan in &o.plans {
        out!("{plan}");
    }
    for (k, (v, verdict)) in p.spec.vars.iter().zip(&verdicts).enumerate() {
        outln!("var {k}:     {}", v.label());
        for l in verdict.lines() {
            outln!("{l}");
        }
    }
    let total = p.spec.vars.len();
    let passed = verdicts.iter().filter(|v| v.ok).count();
    if ok {
        outln!("PASS:      {passed} of {total} variable(s) match the host reference ({} host combination(s) added to the bound's depth)", o.extra);
    } else {
        outln!(
            "FAIL:      {} of {total} variable(s) differ from the host reference",
            total - passed
        );
    }
    Ok(ok)
}

/// The device of the first share (the JSON object's `device_index` field).
fn mq_first_device(shares: &[ShareReport]) -> &'static Device {
    let all = devices().expect("devices listed before");
    shares
        .first()
        .and_then(|s| all.iter().find(|d| d.label() == s.device))
        .unwrap_or(&all[0])
}

/// `mpirun -np K clreduce reduce --mpi`: rank r reduces elements `n r / K .. n (r+1) / K` (in
/// work-groups for an nd_range) of the same input; every rank gets the result
/// (`MPI_Allreduce`), rank 0 checks and prints it.
#[cfg(feature = "mpi")]
pub fn run_mpi(a: &super::ReduceArgs, p: &Prepared) -> CliResult<bool> {
    use clreduce::mpi::rsmpi::topology::Communicator;
    use clreduce::mpi::{parallel_for_reduce, Deliver};
    let universe = clreduce::mpi::rsmpi::initialize().ok_or_else(|| {
        CliError::Usage("--mpi: MPI could not be initialized (run under mpirun)".into())
    })?;
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    // Everything that can fail on one rank only (its device, its queue, its block's plan)
    // comes before one agreement: a rank that failed would never enter the collective, and
    // the others would wait in it forever.
    let setup = (|| -> CliResult<(MultiQueue, Ready)> {
        let mq = if a.split {
            multi_queue(a)?
        } else {
            let d = crate::args::rank_device(a.common.device.as_deref(), rank as usize)?;
            MultiQueue::new(&[queue_on(&d, &a.common)?])?
        };
        let (units, per) = units_of(&p.spec.form)?;
        let (lo, hi) = (units * rank / size * per, units * (rank + 1) / size * per);
        let block = slice(&p.data, lo as usize, hi as usize);
        let r = ready(&mq, a, p, &block, lo)?;
        Ok((mq, r))
    })();
    let failure = setup.as_ref().err().map(|e| e.to_string());
    let agreed = clreduce::mpi::agree(&world, failure.as_deref());
    let (mq, r) = setup?;
    agreed?;
    let rep = parallel_for_reduce(&world, &mq, r.form, r.reds, r.kernel, r.opts, Deliver::All)?;
    let times = (rep.local_ns, rep.combine_ns);
    let (plans, got, report) = (r.plans, results(&r.targets)?, rep.local);
    if rank != 0 {
        return Ok(true);
    }
    let label = format!("mpi: {size} rank(s), rank 0 on {}", devices_label(&mq));
    let extra = size + report.as_ref().map_or(0, |r| r.shares.len() as u64);
    report_outcome(
        a,
        p,
        Outcome {
            label,
            plans,
            got,
            report,
            extra,
            mpi: Some((size as i32, times.0, times.1)),
        },
    )
}

/// Without the `mpi` feature, `--mpi` is refused.
#[cfg(not(feature = "mpi"))]
pub fn run_mpi(_a: &super::ReduceArgs, _p: &Prepared) -> CliResult<bool> {
    Err(CliError::Usage(
        "--mpi needs a clreduce built with `--features mpi` (OpenMPI: scripts/setup.sh)".into(),
    ))
}
