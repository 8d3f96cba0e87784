//! CSR offsets checked before a segmented launch: ascending, the last one within the range,
//! and what planning needs of them (the first and last offsets, the longest segment). Short
//! offset arrays are read to the host and checked there; long ones are checked on the device
//! by `kernels/segment_check.cl`, so a launch over millions of segments no longer reads all of
//! its offsets across the bus (8 bytes per segment, every launch) before it starts: only the
//! work-groups' findings come back. design/segments.md, "Offsets checked on the device".

use super::queue::Queue;
use super::reduction::Target;
use crate::codegen;
use crate::error::{Error, Result};
use crate::runtime::launch::{self, Arg, Compiled};
use crate::runtime::program;
use std::sync::Arc;

/// Offset arrays of more entries than this are checked on the device. Below it the host read
/// costs less than a launch and a read (on the H200 a 512 KiB read takes about as long as a
/// kernel launch and its small read; on the CPUs the host read is a copy).
pub(crate) const DEVICE_CHECK_MIN: usize = 1 << 16;

/// Work-items per work-group of the check, and entries per work-item at most before more
/// work-groups are taken (up to [`CHECK_GROUPS_MAX`]).
const CHECK_WG: usize = 64;
const CHECK_PER_ITEM: usize = 16;
const CHECK_GROUPS_MAX: usize = 4096;

/// What a segmented launch needs of valid CSR offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OffsetFacts {
    /// `off[0]` and `off[r]`: the elements the segments cover.
    pub lo: u64,
    pub hi: u64,
    /// The longest segment.
    pub longest: u64,
}

impl Queue {
    /// Checks the `r + 1` offsets of `t` against a range of `n` elements: the launch's
    /// [`Error::BadSegments`] where they descend or end past `n`, else their [`OffsetFacts`].
    /// On the device from [`DEVICE_CHECK_MIN`] entries (where it has 64 work-items per
    /// work-group), on the host below.
    /// `CLREDUCE_OFFSETS_CHECK=host|device` forces one path on every size (for A/B runs).
    pub(super) fn check_offsets(&self, name: &str, t: &Target, n: u64) -> Result<OffsetFacts> {
        let fits = self.inner.caps.max_work_group_size >= CHECK_WG;
        let device = match std::env::var("CLREDUCE_OFFSETS_CHECK").as_deref() {
            Ok("host") => false,
            Ok("device") => fits,
            Ok("") | Ok("auto") | Err(_) => t.len > DEVICE_CHECK_MIN && fits,
            Ok(other) => {
                return Err(Error::UnknownName {
                    kind: "offsets check (CLREDUCE_OFFSETS_CHECK)",
                    name: other.to_string(),
                    known: vec!["host", "device", "auto"],
                })
            }
        };
        self.check_offsets_by(name, t, n, device)
    }

    /// Test-only: [`Queue::check_offsets`] on `offsets` (of a launch over `n` elements) by the
    /// device's pass or the host's read, as `on_device` says: `(off[0], off[r], longest)`, or
    /// the launch's error. For the test that holds the two paths to the same answers; not part
    /// of the API.
    #[doc(hidden)]
    #[cfg(feature = "testkit")]
    pub fn __offset_facts(
        &self,
        offsets: &crate::Buffer<u64>,
        n: u64,
        on_device: bool,
    ) -> Result<(u64, u64, u64)> {
        let f = self.check_offsets_by("offsets", &Target::of(offsets), n, on_device)?;
        Ok((f.lo, f.hi, f.longest))
    }

    fn check_offsets_by(
        &self,
        name: &str,
        t: &Target,
        n: u64,
        device: bool,
    ) -> Result<OffsetFacts> {
        if !device {
            let off = self.read_checked_offsets(name, t, n)?;
            return Ok(OffsetFacts {
                lo: off[0],
                hi: off[off.len() - 1],
                longest: off.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
            });
        }
        enough_entries(name, t)?;
        let facts = match self.offsets_on_device(t)? {
            Ok(f) => f,
            Err(k) => {
                let mut two = [0u8; 16];
                self.read_bytes(&t.mem, k as usize * 8, &mut two)?;
                return Err(descend(name, k, le_u64(&two[..8]), le_u64(&two[8..])));
            }
        };
        within_range(name, facts.hi, n)?;
        Ok(facts)
    }

    /// The offsets of `t` read to the host and checked against a range of `n` elements (at
    /// least two entries, ascending, the last within the range): the host path of
    /// [`Queue::check_offsets`], and how a split launch (`multi/segments.rs`), which cuts on
    /// segment boundaries, reads them.
    pub(crate) fn read_checked_offsets(&self, name: &str, t: &Target, n: u64) -> Result<Vec<u64>> {
        enough_entries(name, t)?;
        let mut bytes = vec![0u8; t.len * 8];
        self.read_bytes(&t.mem, 0, &mut bytes)?;
        let off: Vec<u64> = bytes.chunks_exact(8).map(le_u64).collect();
        if let Some(k) = off.windows(2).position(|w| w[1] < w[0]) {
            return Err(descend(name, k as u64, off[k], off[k + 1]));
        }
        within_range(name, off[off.len() - 1], n)?;
        Ok(off)
    }

    /// One pass of `kernels/segment_check.cl` over the offsets: their facts, or `Err(k)`, the
    /// first entry whose successor is smaller.
    fn offsets_on_device(&self, t: &Target) -> Result<std::result::Result<OffsetFacts, u64>> {
        let q = &self.inner;
        let r = t.len - 1;
        let groups = r
            .div_ceil(CHECK_WG * CHECK_PER_ITEM)
            .clamp(1, CHECK_GROUPS_MAX);
        let per = r.div_ceil(groups);
        let compiled = self.check_program()?;
        let label = q.device.label();
        let res = launch::create_mem(&q.context, (2 * groups + 2) * 8, None, &label)?;
        let args = [
            Arg::Mem(&t.mem),
            Arg::Bytes((r as u64).to_le_bytes().to_vec()),
            Arg::Bytes((per as u64).to_le_bytes().to_vec()),
            Arg::Mem(&res),
        ];
        let global = groups * CHECK_WG;
        launch::enqueue_kernel(
            &q.queue,
            &compiled,
            "clr_main",
            &args,
            &[global],
            &[CHECK_WG],
            &[],
        )?;
        let mut bytes = vec![0u8; (2 * groups + 2) * 8];
        launch::read_bytes(&q.queue, &res, 0, &mut bytes)?;
        let v: Vec<u64> = bytes.chunks_exact(8).map(le_u64).collect();
        let first_bad = (0..groups).map(|g| v[2 * g]).min().unwrap_or(u64::MAX);
        if first_bad != u64::MAX {
            return Ok(Err(first_bad));
        }
        Ok(Ok(OffsetFacts {
            lo: v[2 * groups],
            hi: v[2 * groups + 1],
            longest: (0..groups).map(|g| v[2 * g + 1]).max().unwrap_or(0),
        }))
    }

    /// The check's program, built once per queue (the queue's memo of compiled programs).
    fn check_program(&self) -> Result<Arc<Compiled>> {
        let q = &self.inner;
        let options = format!("-D CLR_WG={CHECK_WG}");
        let key = format!("segment_check.cl\u{0}{options}");
        let memo = &self.cache.compiled;
        if let Some(c) = memo.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(c.clone());
        }
        let source = codegen::segment_check_source();
        let program = program::get(&q.device, &source, &options)?;
        let c = Arc::new(Compiled::new(program, q.device.id(), q.device.serial()?)?);
        memo.lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, c.clone());
        Ok(c)
    }
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

fn bad(name: &str, problem: String) -> Error {
    Error::BadSegments {
        name: name.to_string(),
        problem,
    }
}

/// CSR offsets need `r + 1 >= 2` entries.
fn enough_entries(name: &str, t: &Target) -> Result<()> {
    if t.len < 2 {
        return Err(bad(
            name,
            format!("{} offset(s): CSR offsets need r + 1 >= 2 entries", t.len),
        ));
    }
    Ok(())
}

/// The last offset `hi` may not pass the range's end `n`.
fn within_range(name: &str, hi: u64, n: u64) -> Result<()> {
    if hi > n {
        return Err(bad(
            name,
            format!("the last offset {hi} is past the end of the range (n = {n})"),
        ));
    }
    Ok(())
}

/// The error of offsets that descend at entry `k + 1` (`off[k] = a`, `off[k + 1] = b`).
fn descend(name: &str, k: u64, a: u64, b: u64) -> Error {
    bad(
        name,
        format!("offsets descend at entry {}: {a} then {b}", k + 1),
    )
}
