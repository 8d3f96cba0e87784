//! The exact sums' vector form (`HotLoop::Vector`, `CLREDUCE_TUNE=hot=3`, decision 69,
//! design/exact.md "The vector form"): forced on every device here (PoCL, Intel's CPU runtime,
//! Oclgrind at small n), bit for bit against the host's correctly rounded sum: every
//! adversarial pattern and blocks at the edge of the exponent span a lane may hold (through
//! `exact_spec::speculative_loop_in`), and bodies that update the sum other than once per index, so
//! that a step's stage is left part full at a chunk's end.

use crate::common;

use clreduce::check::adversarial::{f32s, f64s, Pattern};
use clreduce::exact::{sum_f32, sum_f64};
use clreduce::plan::{HotLoop, IndexOrder, Tuning};
use clreduce::{reduction, Element, Kernel, Op, Options, Queue, Range};
use common::*;

/// Every adversarial pattern, f32 and f64 data with an initial value, and f32 blocks at the
/// edge of their span, in the CPUs' contiguous order.
#[test]
fn vector_loop_is_exact() {
    crate::exact_spec::speculative_loop_in(IndexOrder::Contiguous, HotLoop::Vector);
}

/// One exact sum whose body adds each element once and each negative one once more (`sum +=
/// x[i]; if (x[i] < 0) sum += x[i];`): the tries of a step are no longer a multiple of the
/// unroll, so chunks end with elements still staged. The device's bits equal the host's
/// correctly rounded sum of that multiset; with `initialize_to_identity` and without.
fn uneven<T: Element + Copy + PartialOrd + Default>(
    q: &Queue,
    data: &[T],
    init: T,
    identity: bool,
    opts: Options,
    host: impl Fn(&[T]) -> u64,
    bits: impl Fn(T) -> u64,
) -> Result<(u64, u64, Option<clreduce::Plan>), clreduce::Error> {
    let x = q.buffer_from(data)?;
    let sum = q.buffer_from(&[init])?;
    let r = reduction(&sum, Op::Plus);
    let r = if identity {
        r.initialize_to_identity()
    } else {
        r
    };
    let ev = q.parallel_for_reduce_with(
        Range::new(data.len() as u64),
        r,
        Kernel::new("sum += x[i]; if (x[i] < 0) sum += x[i];").arg("x", &x),
        opts,
    )?;
    let mut all = if identity { vec![] } else { vec![init] };
    for &v in data {
        all.push(v);
        if v < T::default() {
            all.push(v);
        }
    }
    Ok((bits(sum.get(0)?), host(&all), ev.plan().cloned()))
}

#[test]
fn vector_loop_with_uneven_bodies() {
    let mut tally = Tally::new("exact_vector::vector_loop_with_uneven_bodies");
    for q in queues() {
        let _serial = sim_lock(q.device());
        let dev = short(q.device());
        let n = if q.device().is_simulator() {
            2999
        } else {
            100_003
        };
        if !q.caps().fp64 {
            tally.skip(&dev, "all", "no fp64 on the device (no vector form)");
            continue;
        }
        for (unroll, order) in [
            (4usize, IndexOrder::Contiguous),
            (8, IndexOrder::GridStride),
        ] {
            let opts = Options {
                tuning: Some(Tuning {
                    spec: Some(true),
                    hot: Some(HotLoop::Vector),
                    order: Some(order),
                    unroll: Some(unroll),
                    ..Tuning::default()
                }),
                ..Options::default()
            }
            .exact();
            for (p, identity) in [
                (Pattern::Random, false),
                (Pattern::Cancel, true),
                (Pattern::Spread, false),
                (Pattern::NaNs, false),
                (Pattern::Ties, true),
            ] {
                let case = format!("{} unroll {unroll} {order:?} identity {identity}", p.name());
                let seed = 0x7ec + unroll as u64;
                let f = uneven(
                    q,
                    &f32s(p, n, seed),
                    0.5f32,
                    identity,
                    opts,
                    |v| sum_f32(v).to_bits() as u64,
                    |v| v.to_bits() as u64,
                );
                let d = uneven(
                    q,
                    &f64s(p, n, seed),
                    -0.25f64,
                    identity,
                    opts,
                    |v| sum_f64(v).to_bits(),
                    |v| v.to_bits(),
                );
                for (ty, r) in [("f32", f), ("f64", d)] {
                    let o = match r {
                        Err(e) => Outcome::Fail(format!("launch: {e}")),
                        Ok((_, _, plan))
                            if !plan
                                .as_ref()
                                .and_then(|p| p.vars[0].exact)
                                .is_some_and(|e| e.speculative && e.hot == HotLoop::Vector) =>
                        {
                            Outcome::Fail("the plan did not take the vector form".into())
                        }
                        Ok((got, want, _)) if got != want => Outcome::Fail(format!(
                            "got bits {got:#x}, the exact sum rounds to {want:#x}"
                        )),
                        Ok(_) => Outcome::Pass,
                    };
                    tally.record(&dev, &format!("{case} {ty}"), o);
                }
            }
        }
    }
    tally.finish();
}
