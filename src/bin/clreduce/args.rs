//! What `explain` and `reduce` share on the command line: the `--device`, `--mask`,
//! `--strategy`, `--relaxed` and `--determinism` flags (`Common`), and turning them into devices, a queue and
//! `Options`.

use clreduce::plan::{Determinism, Strategy};
use clreduce::{devices, Device, ElemType, Mask, Op, Options, Queue, Result, Value};

#[derive(clap::Args, Clone)]
pub struct Common {
    /// Device index (from `clreduce devices`), name substring, or `all`.
    #[arg(long)]
    pub device: Option<String>,
    /// Capability mask, e.g. no-atomics,no-subgroups (default: CLREDUCE_MASK).
    #[arg(long)]
    pub mask: Option<String>,
    /// Forced strategy GROUP+CROSS, e.g. tree+last-group (default: CLREDUCE_STRATEGY or auto).
    #[arg(long)]
    pub strategy: Option<String>,
    /// Allow order-dependent float atomics (results not run-to-run reproducible); the same as
    /// --determinism relaxed.
    #[arg(long, conflicts_with = "determinism")]
    pub relaxed: bool,
    /// deterministic (default: the same bits run to run), relaxed (float atomics allowed) or
    /// exact (float sums correctly rounded: the same bits on every device and plan).
    #[arg(long)]
    pub determinism: Option<String>,
}

impl Common {
    /// Whether `--device all` was given (a device's refusal is then printed, not fatal).
    pub fn all_devices(&self) -> bool {
        self.device.as_deref() == Some("all")
    }
}

/// The devices `--device` names: one, or every device for `all`.
pub fn pick_devices(spec: Option<&str>) -> Result<Vec<Device>> {
    match spec {
        Some("all") => Ok(devices()?.to_vec()),
        other => Ok(vec![clreduce::device::select(other)?]),
    }
}

/// The devices of a split (`--split`): `--device all` or none (every device but the
/// simulators), or a comma list of indices or names.
pub fn split_devices(spec: Option<&str>) -> Result<Vec<Device>> {
    match spec {
        None | Some("all") => Ok(devices()?
            .iter()
            .filter(|d| !d.is_simulator())
            .cloned()
            .collect()),
        Some(list) => list
            .split(',')
            .map(|s| clreduce::device::select(Some(s.trim())))
            .collect(),
    }
}

/// The device of MPI rank `rank`: `--device rank` takes the non-simulator devices in turn (rank
/// modulo their number: one GPU per rank on a multi-GPU node), anything else selects as usual.
#[cfg(feature = "mpi")]
pub fn rank_device(spec: Option<&str>, rank: usize) -> Result<Device> {
    if spec == Some("rank") {
        let devs = split_devices(None)?;
        if devs.is_empty() {
            return Err(clreduce::Error::NoDevices {
                detail: "--device rank: no non-simulator device".into(),
            });
        }
        return Ok(devs[rank % devs.len()].clone());
    }
    clreduce::device::select(spec)
}

/// The launch options of `--strategy` (or CLREDUCE_STRATEGY), `--relaxed` and CLREDUCE_TUNE.
pub fn options(c: &Common) -> Result<Options> {
    let strategy = match &c.strategy {
        Some(s) => Strategy::parse(s)?,
        None => Strategy::from_env()?,
    };
    Ok(Options {
        tuning: clreduce::plan::Tuning::from_env()?,
        strategy,
        determinism: match (&c.determinism, c.relaxed) {
            (Some(d), _) => Determinism::parse(d)?,
            (None, true) => Determinism::Relaxed,
            (None, false) => Determinism::Deterministic,
        },
        ..Options::default()
    })
}

/// A profiling queue on `d` with `--mask` (or CLREDUCE_MASK) applied.
pub fn queue_on(d: &Device, c: &Common) -> Result<Queue> {
    let mask = match &c.mask {
        Some(m) => Mask::parse(m)?,
        None => Mask::from_env()?,
    };
    // `clreduce reduce` and `explain` print device times: a profiling queue.
    Queue::with_mask(d, mask)?.with_profiling()
}

/// The op's identity in `ty`, or a placeholder 0 where it has none (the plan does not read it).
pub fn op_identity(op: Op, ty: ElemType) -> Value {
    op.identity(ty).unwrap_or(Value::I32(0))
}
