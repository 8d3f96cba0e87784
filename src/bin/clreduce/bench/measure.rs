//! Measuring one point of `clreduce bench`: its buffers (input copies, primed; results; the
//! LLC flush buffer), the timed repetitions of one strategy on one queue (device time on a
//! profiling queue, wall time from the launch call to the result read on the host), the untimed
//! work between repetitions (flush, the interleaved native peer) and the spread of the times.

use clreduce::cases::{Case, Force, Got, Outs};
use clreduce::plan::{Determinism, Plan};
use clreduce::{Buffer, DynBuffer, HostVec, Options, Queue, Result};
use serde::Serialize;
use std::time::Instant;

/// Repetitions for a point of `bytes` input: `--reps` when given, else 20 (100 up to 16 MiB).
pub fn reps_for(given: Option<usize>, quick: bool, bytes: u64) -> usize {
    match given {
        Some(r) => r.max(1),
        None if quick => 5,
        None if bytes <= 16 << 20 => 100,
        None => 20,
    }
}

/// Median, minimum and maximum of a point's times, in ns.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spread {
    pub median: u64,
    pub min: u64,
    pub max: u64,
}

/// The spread of `v` (sorted in place); zeros for no times.
pub fn spread(v: &mut [u64]) -> Spread {
    v.sort_unstable();
    Spread {
        median: if v.is_empty() {
            0
        } else if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2
        },
        min: v.first().copied().unwrap_or(0),
        max: v.last().copied().unwrap_or(0),
    }
}

/// What the repetitions of one strategy at one point gave.
pub struct Measured {
    pub device_ns: Spread,
    pub wall_ns: Spread,
    pub plan: Plan,
    pub got: Vec<Got>,
    /// The interleaved peer's times (`Between::native`), when one ran.
    pub native_ns: Option<Spread>,
}

/// Untimed work between the repetitions of a point.
#[derive(Default)]
pub struct Between<'a> {
    /// Read before every repetition to evict the input from the LLC (`--cache cold`).
    pub flush: Option<&'a Buffer<u32>>,
    /// A peer timed right after every repetition (the native Rust sum on CPU devices), so that
    /// both see the same state of a noisy machine; returns its wall time in ns.
    pub native: Option<&'a mut dyn FnMut() -> Option<u64>>,
}

/// Runs `case` over inputs[rep % K], `warmup` untimed then `reps` timed repetitions. Each
/// repetition resets the results to the identity first (untimed).
#[allow(clippy::too_many_arguments)]
pub fn measure(
    q: &Queue,
    case: &Case,
    n: u64,
    inputs: &[DynBuffer],
    outs: &Outs,
    opts: Options,
    warmup: usize,
    reps: usize,
    between: &mut Between,
) -> Result<Measured> {
    let mut dev = Vec::with_capacity(reps);
    let mut wall = Vec::with_capacity(reps);
    let mut native = Vec::new();
    let mut plan = None;
    let mut got = None;
    for rep in 0..warmup + reps {
        if let Some(f) = between.flush {
            q.sum(f)?;
        }
        case.reset(outs)?;
        let launch = case.launch(n, &inputs[rep % inputs.len()], outs);
        let t0 = Instant::now();
        let ev = launch.run(q, opts)?;
        let g = case.read(outs)?;
        let w = t0.elapsed().as_nanos() as u64;
        if rep >= warmup {
            if q.is_profiling() {
                dev.push(ev.device_time_ns()?);
            }
            wall.push(w);
        }
        if let Some(peer) = between.native.as_mut() {
            if let Some(t) = peer() {
                if rep >= warmup {
                    native.push(t);
                }
            }
        }
        if plan.is_none() {
            plan = ev.plan().cloned();
        }
        got = Some(g);
    }
    Ok(Measured {
        device_ns: spread(&mut dev),
        wall_ns: spread(&mut wall),
        plan: plan.expect("n > 0 runs a plan"),
        got: got.expect("at least one repetition"),
        native_ns: (!native.is_empty()).then(|| spread(&mut native)),
    })
}

/// A point's buffers on one queue: `copies` uploads of the input (primed), the results, and the
/// flush buffer of `flush_words` u32 (`--cache cold`).
pub fn point_buffers(
    q: &Queue,
    case: &Case,
    n: u64,
    data: &HostVec,
    copies: usize,
    flush_words: Option<usize>,
) -> Result<(Vec<DynBuffer>, Outs, Option<Buffer<u32>>)> {
    let inputs = (0..copies)
        .map(|_| DynBuffer::upload_as(q, data, case.stored))
        .collect::<Result<Vec<_>>>()?;
    let res = case.outs(q, n)?;
    prime(q, case, n, &inputs, &res)?;
    let flush = match flush_words {
        Some(w) => Some(q.buffer_from(&vec![1u32; w])?),
        None => None,
    };
    Ok((inputs, res, flush))
}

/// One untimed launch over every input copy: drivers that allocate or copy a buffer's storage
/// on its first use by a kernel would otherwise charge that to the first strategy timed.
pub fn prime(q: &Queue, case: &Case, n: u64, inputs: &[DynBuffer], outs: &Outs) -> Result<()> {
    for x in inputs {
        case.launch(n, x, outs)
            .run(q, case.options(Determinism::Deterministic, Force::Auto))?
            .wait()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reps_and_spread() {
        assert_eq!(reps_for(None, false, 4 << 20), 100);
        assert_eq!(reps_for(None, false, 1 << 30), 20);
        assert_eq!(reps_for(Some(7), false, 4 << 20), 7);
        assert_eq!(reps_for(None, true, 4 << 20), 5);
        let s = spread(&mut [5, 1, 9, 3]);
        assert_eq!((s.median, s.min, s.max), (4, 1, 9));
        let s = spread(&mut [5, 1, 9]);
        assert_eq!((s.median, s.min, s.max), (5, 1, 9));
        assert_eq!(spread(&mut []).median, 0);
    }
}
