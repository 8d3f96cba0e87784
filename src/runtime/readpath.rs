//! How a launch's result comes back to the host: the read path of a queue (issue 29,
//! design/decisions.md sections 25, 26 and 49). Plain data, filled once per queue from the
//! device's workarounds and, for measuring, from `CLREDUCE_READ_PATH` (and the older
//! `CLREDUCE_NO_WAIT_BEFORE_READ` and `CLREDUCE_POLL_READ_US`): the one place those variables
//! are read.
//!
//! `CLREDUCE_READ_PATH` is a list of `key=value` pairs over the workarounds' choice:
//! `wait=0|1` (wait for the last kernel before a read), `poll=US` (poll events for up to US
//! microseconds before blocking; 0: block at once), `spin=0|1` (poll without yielding the
//! thread), `flush=0|1` (`clFlush` after a kernel enqueue), `flush_min=N` (only after kernels
//! of at least N work-items), `pinned=0|1` (small reads land in pinned host memory, then are
//! copied out), `mailbox=0|1` (a shortcut's last work-group posts its result into a host
//! mailbox the host spins on: no read command; never on a serialized device, Oclgrind).

use crate::caps::Workarounds;
use crate::error::{Error, Result};
use std::time::Duration;

/// How to poll an event before blocking on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Poll {
    /// How long to poll before the blocking wait.
    pub budget: Duration,
    /// Spin between polls (`std::hint::spin_loop`) instead of yielding the thread: for devices
    /// whose runtime does not need the host's cores (GPUs).
    pub spin: bool,
}

/// A queue's read path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadPath {
    /// Before a blocking read, wait for the last kernel this queue enqueued
    /// (`Workarounds::wait_before_read`; only on a queue without profiling).
    pub wait_kernel: bool,
    /// Reads and waits poll their event first (`Workarounds::poll_read`); `None`: block.
    pub poll: Option<Poll>,
    /// `clFlush` right after each kernel enqueue of at least `flush_min` work-items, so the
    /// device starts it while the host enqueues the read.
    pub flush_launch: bool,
    /// The fewest work-items of a kernel `flush_launch` flushes after.
    pub flush_min: usize,
    /// Reads of at most [`PINNED_BYTES`] go into a pinned staging buffer (a mapped
    /// `CL_MEM_ALLOC_HOST_PTR` buffer of the queue) and are copied out.
    pub pinned: bool,
    /// Shortcuts take their result from a host mailbox the kernel posts into
    /// (`Workarounds::host_mailbox`, design/decisions.md section 56).
    pub mailbox: bool,
}

/// The largest read that goes through a queue's pinned staging buffer (`ReadPath::pinned`).
pub(crate) const PINNED_BYTES: usize = 64;

/// `Workarounds::flush_long_launches`: the fewest work-items of a launch flushed right after
/// its enqueue. On the H200 the flush cost 2.3-2.9 us at 2^10 (one work-group of 256) and saved
/// 2-4 us at 2^20 (512 work-groups, 131072 work-items; design/decisions.md section 49);
/// between them unmeasured, 65536 (2^19 f32 elements with the default geometry) splits them.
pub(crate) const FLUSH_MIN_ITEMS: usize = 1 << 16;

impl ReadPath {
    /// The read path the workarounds ask for on a queue with or without profiling.
    pub(crate) fn of(w: &Workarounds, profiling: bool) -> ReadPath {
        let poll = if w.spin_poll_read {
            Some(Poll {
                budget: Duration::from_micros(SPIN_BUDGET_US),
                spin: true,
            })
        } else {
            w.poll_read.then_some(Poll {
                budget: Duration::from_micros(crate::caps::POLL_READ_BUDGET_US),
                spin: false,
            })
        };
        ReadPath {
            wait_kernel: w.wait_before_read && !profiling,
            poll,
            flush_launch: w.flush_long_launches,
            flush_min: if w.flush_long_launches {
                FLUSH_MIN_ITEMS
            } else {
                0
            },
            pinned: w.pinned_reads,
            mailbox: w.host_mailbox && !w.serialize_device,
        }
    }

    /// [`ReadPath::of`] with the environment's overrides, for measuring: the older
    /// `CLREDUCE_NO_WAIT_BEFORE_READ` (set: no wait) and `CLREDUCE_POLL_READ_US` (the budget;
    /// 0: no polling; not a number: ignored), then `CLREDUCE_READ_PATH`, which is refused
    /// with [`Error::UnknownName`] when it does not parse.
    pub(crate) fn from_env(w: &Workarounds, profiling: bool) -> Result<ReadPath> {
        let mut p = ReadPath::of(w, profiling);
        if std::env::var_os("CLREDUCE_NO_WAIT_BEFORE_READ").is_some() {
            p.wait_kernel = false;
        }
        if let Some(us) = std::env::var("CLREDUCE_POLL_READ_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            p = p.with_poll_us(us);
        }
        let mut p = match std::env::var("CLREDUCE_READ_PATH") {
            Ok(s) => p.parse(&s, profiling)?,
            Err(_) => p,
        };
        // Oclgrind's simulated memory has no host addresses.
        p.mailbox &= !w.serialize_device;
        Ok(p)
    }

    fn with_poll_us(mut self, us: u64) -> ReadPath {
        let spin = self.poll.is_some_and(|p| p.spin);
        self.poll = (us > 0).then(|| Poll {
            budget: Duration::from_micros(us),
            spin,
        });
        self
    }

    /// Applies `key=value` overrides (the module's list) to this path. A wait is never added
    /// on a profiling queue (there it was measured slower, decisions section 25).
    pub(crate) fn parse(mut self, s: &str, profiling: bool) -> Result<ReadPath> {
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || Error::UnknownName {
                kind: "read path setting",
                name: part.to_string(),
                known: vec![
                    "wait=0|1",
                    "poll=US",
                    "spin=0|1",
                    "flush=0|1",
                    "flush_min=N",
                    "pinned=0|1",
                    "mailbox=0|1",
                ],
            };
            let (k, v) = part.split_once('=').ok_or_else(bad)?;
            let v: u64 = v.trim().parse().map_err(|_| bad())?;
            let on = match v {
                0 | 1 => v == 1,
                _ if matches!(k.trim(), "poll" | "flush_min") => true,
                _ => return Err(bad()),
            };
            match k.trim() {
                "wait" => self.wait_kernel = on && !profiling,
                "poll" => self = self.with_poll_us(v),
                "spin" => {
                    self.poll = match (self.poll, on) {
                        (Some(p), _) => Some(Poll { spin: on, ..p }),
                        (None, true) => Some(Poll {
                            budget: Duration::from_micros(SPIN_BUDGET_US),
                            spin: true,
                        }),
                        (None, false) => None,
                    }
                }
                "flush" => self.flush_launch = on,
                "flush_min" => self.flush_min = usize::try_from(v).map_err(|_| bad())?,
                "pinned" => self.pinned = on,
                "mailbox" => self.mailbox = on,
                _ => return Err(bad()),
            }
        }
        Ok(self)
    }
}

/// How long a spinning poll lasts before the wait blocks (`Workarounds::spin_poll_read`, and
/// `spin=1` without `poll=US`): 1 ms, longer than a 2^28 f32 sum on the H200 (250 us), so the
/// launches of a latency-bound caller never block; a longer kernel costs the waiting thread's
/// core for 1 ms.
pub(crate) const SPIN_BUDGET_US: u64 = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    fn nvidia() -> Workarounds {
        Workarounds {
            wait_before_read: true,
            ..Workarounds::default()
        }
    }

    #[test]
    fn nvidia_spins_into_pinned_memory_and_flushes_long_launches() {
        let w = Workarounds {
            spin_poll_read: true,
            pinned_reads: true,
            flush_long_launches: true,
            host_mailbox: true,
            ..Workarounds::default()
        };
        let p = ReadPath::of(&w, false);
        assert_eq!(
            p,
            ReadPath {
                wait_kernel: false,
                poll: Some(Poll {
                    budget: Duration::from_micros(SPIN_BUDGET_US),
                    spin: true
                }),
                flush_launch: true,
                flush_min: FLUSH_MIN_ITEMS,
                pinned: true,
                mailbox: true,
            }
        );
        assert!(!p.parse("mailbox=0", false).unwrap().mailbox);
        let all = p.parse("flush_min=0, wait=1", false).unwrap();
        assert_eq!((all.flush_min, all.wait_kernel), (0, true));
        assert_eq!(ReadPath::of(&Workarounds::default(), false).poll, None);
    }

    #[test]
    fn the_workarounds_then_the_overrides() {
        let pocl = Workarounds {
            poll_read: true,
            ..Workarounds::default()
        };
        let p = ReadPath::of(&pocl, false);
        assert_eq!(
            p.poll,
            Some(Poll {
                budget: Duration::from_micros(crate::caps::POLL_READ_BUDGET_US),
                spin: false
            })
        );
        assert!(!p.wait_kernel);
        assert!(ReadPath::of(&nvidia(), false).wait_kernel);
        assert!(
            !ReadPath::of(&nvidia(), true).wait_kernel,
            "not on a profiling queue"
        );

        let q = ReadPath::of(&nvidia(), false)
            .parse("wait=0, spin=1, flush=1, pinned=1", false)
            .unwrap();
        assert_eq!(
            q,
            ReadPath {
                wait_kernel: false,
                poll: Some(Poll {
                    budget: Duration::from_micros(SPIN_BUDGET_US),
                    spin: true
                }),
                flush_launch: true,
                flush_min: 0,
                pinned: true,
                mailbox: false,
            }
        );
        let r = q.parse("poll=250", false).unwrap();
        assert_eq!(
            r.poll.map(|p| (p.budget.as_micros(), p.spin)),
            Some((250, true))
        );
        assert_eq!(r.parse("poll=0", false).unwrap().poll, None);
        assert!(
            !ReadPath::of(&nvidia(), true)
                .parse("wait=1", true)
                .unwrap()
                .wait_kernel
        );
        assert_eq!(p.parse("", false).unwrap(), p);
        for bad in ["wait", "wait=2", "speed=1", "poll=soon", "pinned=yes"] {
            assert!(
                matches!(p.parse(bad, false), Err(Error::UnknownName { .. })),
                "{bad}"
            );
        }
    }
}
