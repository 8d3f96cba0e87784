//! What `explain` and `reduce` share on the command line: the `--device`, `--mask`,
//! `--strategy`, `--relaxed` and `--determinism` flags (`Common`), and turning them into devices, a queue and
//! `Options`.

use crate::error::{CliError, CliResult};
use clreduce::plan::{Determinism, Strategy};
use clreduce::{devices, Device, ElemType, Error, Mask, Op, Options, Queue, Result, Value};

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
    /// Whether `--device all` was given (each device's outcome is then reported, see
    /// [`AllDevices`]).
    pub fn all_devices(&self) -> bool {
        self.device.as_deref() == Some("all")
    }
    /// Parses every flag and variable that does not depend on the device (`--strategy`,
    /// `--determinism`, `--mask` and their `CLREDUCE_*` variables, `CLREDUCE_TUNE`), so that
    /// a mistake in them is the command's error before any device runs.
    pub fn validate(&self) -> Result<()> {
        options(self)?;
        mask(self)?;
        Ok(())
    }
}

/// What `--device all` made of each device: it ran, it was skipped (the device lacks what the
/// run needs: a capability of a forced strategy, the memory, the work-group or local memory
/// size), or it failed (any other error). Flags the device does not change are checked
/// before any device runs ([`Common::validate`]); see design/errors.md, "--device all".
#[derive(Default)]
pub struct AllDevices {
    ran: Vec<String>,
    skipped: usize,
    failed: Vec<(String, String)>,
}

/// How a device's error counts under `--device all`.
pub enum Refusal {
    /// The device cannot run this: reported, the other devices decide the exit status.
    Skipped(String),
    /// A failure: reported, and the command exits 2 after the other devices ran.
    Failed(String),
}

impl AllDevices {
    /// A device that ran.
    pub fn ran(&mut self, d: &Device) {
        self.ran.push(d.label());
    }
    /// Classifies a device's error and records it.
    pub fn refused(&mut self, d: &Device, e: &CliError) -> Refusal {
        let msg = e.to_string();
        let device_limit = matches!(
            e,
            CliError::TooLarge(_)
                | CliError::Lib(
                    Error::Unsupported { .. }
                        | Error::AllocTooLarge { .. }
                        | Error::WorkGroupTooLarge { .. }
                        | Error::LocalMemory { .. }
                )
        );
        if device_limit {
            self.skipped += 1;
            Refusal::Skipped(msg)
        } else {
            let first = msg.lines().next().unwrap_or("").to_string();
            self.failed.push((d.label(), first));
            Refusal::Failed(msg)
        }
    }
    /// The command's result once every device had its turn: an error when a device failed or
    /// none ran, naming the devices that ran; else `ok` (whether every check passed).
    pub fn finish(self, ok: bool) -> CliResult<bool> {
        let ran = if self.ran.is_empty() {
            "none".to_string()
        } else {
            self.ran.join("; ")
        };
        let total = self.ran.len() + self.skipped + self.failed.len();
        if let Some((dev, why)) = self.failed.first() {
            return Err(CliError::Usage(format!(
                "--device all: {} of {total} device(s) failed, the first {dev}: {why} (ran: {ran})",
                self.failed.len()
            )));
        }
        if self.ran.is_empty() {
            return Err(CliError::Usage(format!(
                "--device all: none of the {total} device(s) can run this (each one's reason is above)"
            )));
        }
        Ok(ok)
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
        // A forced segment plan, as Options::from_env reads it.
        segment: clreduce::plan::SegmentAlgo::from_env()?,
        strategy,
        determinism: match (&c.determinism, c.relaxed) {
            (Some(d), _) => Determinism::parse(d)?,
            (None, true) => Determinism::Relaxed,
            (None, false) => Determinism::Deterministic,
        },
        ..Options::default()
    })
}

/// `--mask`, or CLREDUCE_MASK.
fn mask(c: &Common) -> Result<Mask> {
    match &c.mask {
        Some(m) => Mask::parse(m),
        None => Mask::from_env(),
    }
}

/// A profiling queue on `d` with `--mask` (or CLREDUCE_MASK) applied.
pub fn queue_on(d: &Device, c: &Common) -> Result<Queue> {
    let mask = mask(c)?;
    // `clreduce reduce` and `explain` print device times: a profiling queue.
    Queue::with_mask(d, mask)?.with_profiling()
}

/// The op's identity in `ty`, or a placeholder 0 where it has none (the plan does not read it).
pub fn op_identity(op: Op, ty: ElemType) -> Value {
    op.identity(ty).unwrap_or(Value::I32(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device that lacks a capability is skipped; any other error fails the command after
    /// the other devices ran, naming the devices that did; nothing run at all is an error.
    #[test]
    fn device_all_outcomes() {
        let devs = clreduce::devices().expect("an OpenCL device");
        let d = &devs[0];
        let lacks = CliError::Lib(Error::Unsupported {
            what: "x".into(),
            missing: "y".into(),
            device: d.label(),
        });
        let broke = CliError::Lib(Error::Build {
            device: d.label(),
            options: String::new(),
            log: "boom".into(),
            generated: String::new(),
        });
        let mut all = AllDevices::default();
        all.ran(d);
        assert!(matches!(all.refused(d, &lacks), Refusal::Skipped(_)));
        assert!(matches!(all.finish(true), Ok(true)), "one ran, one skipped");
        let mut all = AllDevices::default();
        all.ran(d);
        assert!(
            matches!(all.finish(false), Ok(false)),
            "a mismatch is Ok(false)"
        );
        let mut all = AllDevices::default();
        all.ran(d);
        assert!(matches!(all.refused(d, &broke), Refusal::Failed(_)));
        let e = match all.finish(true) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a failed device is an error"),
        };
        assert!(e.contains("1 of 2 device(s) failed"), "{e}");
        assert!(e.contains(&format!("(ran: {})", d.label())), "{e}");
        let mut all = AllDevices::default();
        all.refused(d, &lacks);
        let e = match all.finish(true) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("nothing ran is an error"),
        };
        assert!(e.contains("none of the 1 device(s)"), "{e}");
    }
}
