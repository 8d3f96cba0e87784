//! The streaming-read reference of `clreduce bench`, per device: the fastest single repetition
//! of a u32 bit_or reduction over the largest size benched there, over every strategy that
//! plans. It is the best this library reads memory on that device (the `%stream` column), not
//! an independent roofline.

use super::cache::{rotation, CacheMode, CachePlan};
use super::devices::Dev;
use super::measure::{measure, prime, Between, Measured};
use super::progress::Progress;
use super::results::StreamRef;
use super::units::fmt_n;
use clreduce::cases::Case;
use clreduce::check::reference;
use clreduce::plan::Strategy;
use clreduce::{DynBuffer, ElemType, Op, Options, Result};

/// Measures every device's reference (a failure is reported and leaves it without one).
pub fn measure_all(devs: &mut [Dev], reps: usize, warmup: usize, pb: &Progress) {
    let sref = Case::parse("u32-or").expect("built-in case");
    // The best (shortest) time of at least 10: the reference is what the device can do.
    let stream_reps = reps.max(10);
    for d in devs {
        let Some(&n) = d.info.sizes.last() else {
            continue;
        };
        pb.set_message(format!("{}: streaming reference", d.device.name()));
        pb.note(format!(
            "{}: streaming reference at {}",
            d.info.label,
            fmt_n(n)
        ));
        match one(d, &sref, n, warmup, stream_reps) {
            Ok(s) => d.info.stream = Some(s),
            Err(e) => pb.warn(format!(
                "bench: {}: streaming reference failed: {}",
                d.info.label,
                e.to_string().lines().next().unwrap_or("")
            )),
        }
        pb.inc(1);
    }
}

/// The reference of one device at `n`.
fn one(d: &Dev, sref: &Case, n: u64, warmup: usize, stream_reps: usize) -> Result<StreamRef> {
    let data = reference::random_input(Op::BitOr, ElemType::U32, n as usize, 7);
    let CachePlan {
        copies: k,
        state: cache,
        ..
    } = rotation(n * 4, d.info.llc_bytes, CacheMode::Auto);
    let inputs = (0..k)
        .map(|_| DynBuffer::upload(&d.queue, &data))
        .collect::<Result<Vec<_>>>()?;
    let res = sref.outs(&d.queue, n)?;
    prime(&d.queue, sref, n, &inputs, &res)?;
    let mut best: Option<Measured> = None;
    let mut tried = 0;
    for s in std::iter::once(Strategy::AUTO).chain(Strategy::all_forced()) {
        let opts = Options {
            strategy: s,
            ..Options::default()
        };
        // Strategies that do not plan for u32 bit_or are simply not candidates.
        let Ok(m) = measure(
            &d.queue,
            sref,
            n,
            &inputs,
            &res,
            opts,
            warmup,
            stream_reps,
            &mut Between::default(),
        ) else {
            continue;
        };
        tried += 1;
        if best
            .as_ref()
            .is_none_or(|b| m.device_ns.min < b.device_ns.min)
        {
            best = Some(m);
        }
    }
    let m = best.ok_or_else(|| clreduce::Error::InvalidRange {
        reason: "no strategy plans a u32 bit_or reduction".into(),
    })?;
    Ok(StreamRef {
        what: format!(
            "clreduce u32 bit_or reduction (`sum |= x[i];`), fastest of {stream_reps} repetitions x {tried} strategies"
        ),
        n,
        plan: m.plan.summary(),
        cache,
        gbps: (n * 4) as f64 / m.device_ns.min.max(1) as f64,
        device_ns: m.device_ns,
    })
}
