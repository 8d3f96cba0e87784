//! `item` and `chunks` streaming long segments with 16 accumulators on CPUs (decision 73),
//! forced and automatic, on every device: uniform rows and CSR offsets whose lengths sit around
//! the 16-element steps (15, 16, 17, 128, 129, 191, 192, 256, 257, 271, primes), segments shorter than a step
//! (only the remainder loop), empty segments, offsets that do not start at 0, one segment of
//! all n and a few long rows (chunk-crossing pieces), under a seeded sample of the (op, type)
//! pairs (every pair over the shapes), initial values kept or `initialize_to_identity`, plus
//! argmin (global indices) and argmax (indices within the segment) with ties, and the same
//! plan twice giving the same bits. The plan must stream with 16 accumulators and 64-bit
//! indices on CPU devices at mean length 192 and up (Intel: work-groups of one), with one
//! accumulator on GPUs and for exact sums. Integers exactly; floats within (len + 40)·u·Σ|x|
//! + 2u·|ref| of a float64 reference (tests/segment.rs). Fresh seeded inputs per case.

use crate::common;

use clreduce::caps::DeviceKind;
use clreduce::check::reference::{check, random_input, reference};
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, DynBuffer, ElemType, HostVec, Kernel, Op,
    Options, Queue, Range, SegmentAlgo, Segments, Value,
};
use common::rng::Rng;
use common::{initial, queues, short, sim_lock, valid_pairs, Tally};

/// Offsets from `lo`: `segments` lengths drawn from `lens` (0 = empty), then `tail` more of
/// heavy-tailed length around `mean`.
pub(crate) fn offsets(rng: &mut Rng, lo: u64, lens: &[u64], tail: usize, mean: u64) -> Vec<u64> {
    let mut off = vec![lo];
    let mut push = |len: u64| off.push(off.last().unwrap() + len);
    for &l in lens {
        push(l);
    }
    for _ in 0..tail {
        push(match rng.below(8) {
            0 => 0,
            1 | 2 => rng.below(16),
            3..=6 => rng.below(2 * mean),
            _ => rng.below(8 * mean),
        });
    }
    off
}

/// A shape: CSR offsets (uniform ones k*c with `Some(c)`) over `n` elements.
pub(crate) struct Shape {
    pub(crate) n: u64,
    pub(crate) off: Vec<u64>,
    pub(crate) uniform: Option<u64>,
}

impl Shape {
    /// `r` uniform rows of `c`.
    pub(crate) fn uniform(r: u64, c: u64) -> Shape {
        Shape {
            n: r * c,
            off: (0..=r).map(|k| k * c).collect(),
            uniform: Some(c),
        }
    }

    /// CSR offsets over a range `pad` elements longer than their last offset.
    pub(crate) fn csr(off: Vec<u64>, pad: u64) -> Shape {
        Shape {
            n: off.last().unwrap() + pad,
            off,
            uniform: None,
        }
    }
}

/// `off` with `k` empty segments after its last offset: they begin at the range's end.
pub(crate) fn trailing(mut off: Vec<u64>, k: usize) -> Vec<u64> {
    let last = *off.last().unwrap();
    off.extend(std::iter::repeat_n(last, k));
    off
}

fn shapes(sim: bool, rng: &mut Rng) -> Vec<Shape> {
    let uni = Shape::uniform;
    let csr = Shape::csr;
    let mut v = vec![
        uni(9, 256),
        uni(5, 271),
        uni(1, 1031),
        csr(offsets(rng, 3, &[0, 15, 16, 17, 129, 0, 1, 300], 6, 300), 5),
        csr(vec![0, 997], 0),
    ];
    if !sim {
        v.extend([
            uni(37, 257),
            uni(29, 191),
            uni(23, 192),
            uni(3, 4099),
            uni(1, 70001),
            csr(offsets(rng, 0, &[0, 0, 2048, 15, 16], 300, 200), 0),
            csr(offsets(rng, 11, &[], 40, 5000), 7),
        ]);
    }
    v
}

fn sub(h: &HostVec, r: std::ops::Range<usize>) -> HostVec {
    match h {
        HostVec::I32(v) => HostVec::I32(v[r].to_vec()),
        HostVec::U32(v) => HostVec::U32(v[r].to_vec()),
        HostVec::I64(v) => HostVec::I64(v[r].to_vec()),
        HostVec::U64(v) => HostVec::U64(v[r].to_vec()),
        HostVec::F32(v) => HostVec::F32(v[r].to_vec()),
        HostVec::F64(v) => HostVec::F64(v[r].to_vec()),
        #[allow(unreachable_patterns)]
        _ => unreachable!("types of the matrix"),
    }
}

/// The accumulators, index width and work-group size (0: any) the rules give a streaming plan.
fn expect_stream(kind: DeviceKind, intel: bool, mean: u64) -> (u64, bool, usize) {
    if kind != DeviceKind::Gpu && mean >= 192 {
        (16, true, if intel { 1 } else { 64 })
    } else {
        (1, false, 0)
    }
}

/// The accumulators and work-group size (0: any) the rules give `aligned` (decision 77): one
/// below mean 16 (with the masked first elements), 4 from 16, 16 from 128 on CPUs, work-groups
/// of one where work-items are SIMD lanes (Intel); one accumulator on GPUs.
fn expect_aligned(kind: DeviceKind, intel: bool, mean: u64, csr: bool) -> (u64, usize, bool) {
    // CSR below mean 16 on CPUs: the scan walk's chains (4 on Intel, 8 on PoCL), work-groups of
    // one (decision 87).
    if kind != DeviceKind::Gpu && csr && mean < 16 {
        return (if intel { 4 } else { 8 }, 1, true);
    }
    let u = match mean {
        _ if kind == DeviceKind::Gpu => 1,
        0..16 => 1,
        16..128 => 4,
        _ => 16,
    };
    (
        u,
        if kind != DeviceKind::Gpu && intel {
            1
        } else {
            0
        },
        false,
    )
}

/// [`run_case`] recorded in `t` under a label of the plan, op, type, shape and `init`: a pass, a
/// skip where the device cannot run it (the plan refused, no fp64), else a failure.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tally_case(
    t: &mut Tally,
    dev: &str,
    q: &Queue,
    pair: (Op, ElemType),
    algo: Option<SegmentAlgo>,
    s: &Shape,
    init: bool,
    seed: u64,
) {
    let case = format!(
        "{} {} {} n={} r={}{}",
        algo.map_or("auto".into(), |a| a.to_string()),
        pair.0,
        pair.1,
        s.n,
        s.off.len() - 1,
        if init { " init" } else { "" }
    );
    match run_case(q, pair, algo, s, init, seed) {
        Ok(()) => t.pass(dev),
        Err(m) if m.contains("cannot run on") || m.contains("fp64") => {
            t.skip_device(dev, &case, &m)
        }
        Err(m) => t.fail(dev, &case, &m),
    }
}

/// One (op, type, plan, shape) case, checked against the host and run twice for the same bits.
pub(crate) fn run_case(
    q: &Queue,
    (op, ty): (Op, ElemType),
    algo: Option<SegmentAlgo>,
    s: &Shape,
    init: bool,
    seed: u64,
) -> Result<(), String> {
    let r = s.off.len() - 1;
    let data = random_input(op, ty, s.n as usize, seed);
    let x = DynBuffer::upload(q, &data).map_err(|e| e.to_string())?;
    let inits: Vec<Value> = (0..r).map(|k| initial(op, ty, seed + k as u64)).collect();
    let host_inits = HostVec::from_values(ty, &inits).unwrap();
    let out = DynBuffer::upload(q, &host_inits).map_err(|e| e.to_string())?;
    let offsets = q.buffer_from(&s.off).map_err(|e| e.to_string())?;
    let launch = || {
        let segs = match s.uniform {
            Some(c) => Segments::uniform(c),
            None => Segments::offsets(&offsets),
        };
        let mut red = reduction(&out, op).segments(segs);
        if init {
            red = red.initialize_to_identity();
        }
        q.parallel_for_reduce_with(
            Range::new(s.n),
            red,
            Kernel::new(common::body(op, ty)).arg("x", &x),
            Options {
                segment: algo,
                ..Options::default()
            },
        )
    };
    let ev = launch().map_err(|e| format!("launch: {e}"))?;
    let plan = ev.plan().expect("plan").clone();
    let sp = plan.segment.as_ref().ok_or("no segment plan")?;
    let mean = (s.off[r] - s.off[0]) / r as u64;
    if matches!(sp.algo, SegmentAlgo::Item | SegmentAlgo::Chunks) && sp.vec == 1 {
        let caps = q.caps();
        let (u, wide, local) = expect_stream(caps.kind, caps.sub_groups.is_some(), mean);
        if (sp.unroll, plan.wide_index) != (u, wide) || (local > 0 && plan.local != local) {
            return Err(format!(
                "{} at mean {mean}: {} accumulators, 64-bit indices {}, local {}; want {u}, {wide}, {local}",
                sp.algo, sp.unroll, plan.wide_index, plan.local
            ));
        }
    }
    if sp.algo == SegmentAlgo::Aligned {
        let caps = q.caps();
        let csr = s.uniform.is_none();
        let (u, local, scan) = expect_aligned(caps.kind, caps.sub_groups.is_some(), mean, csr);
        if sp.unroll != u
            || (local > 0 && plan.local != local)
            || plan.passes != 1
            || sp.scan != scan
        {
            return Err(format!(
                "aligned at mean {mean}: {} accumulators, local {}, {} passes, scan {}; want {u}, {local}, 1, {scan}",
                sp.unroll, plan.local, plan.passes, sp.scan
            ));
        }
    }
    let got: Vec<Value> = (0..r).map(|k| out.value(k).expect("read")).collect();
    for k in 0..r {
        let (b, e) = (s.off[k] as usize, s.off[k + 1] as usize);
        let rf = reference(op, &sub(&data, b..e), (!init).then_some(inits[k]));
        let g = got[k];
        check(op, ty, g.to_f64(), g.as_int(), &rf, (e - b) as f64 + 40.0)
            .map_err(|m| format!("segment {k} ({b}..{e}) under {}: {m}", sp.algo))?;
    }
    // Again from the same initial values: the same bits.
    for (k, &v) in inits.iter().enumerate() {
        out.set(k, v).map_err(|e| e.to_string())?;
    }
    launch().map_err(|e| format!("second launch: {e}"))?;
    for (k, g) in got.iter().enumerate() {
        let again = out.value(k).expect("read");
        if format!("{again:?}") != format!("{g:?}") {
            return Err(format!(
                "segment {k}: {again:?} on a second run, {g:?} on the first"
            ));
        }
    }
    Ok(())
}

#[test]
fn item_and_chunks_stream_long_segments() {
    let mut t = Tally::new("segment_stream::item_and_chunks_stream_long_segments");
    let pairs = valid_pairs();
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let started = std::time::Instant::now();
        let mut rng = Rng(0x5EA + d.index() as u64);
        let sh = shapes(d.is_simulator(), &mut rng);
        for (ai, algo) in [None, Some(SegmentAlgo::Item), Some(SegmentAlgo::Chunks)]
            .into_iter()
            .enumerate()
        {
            for (si, s) in sh.iter().enumerate() {
                let pair = pairs[(ai * 5 + si * 3 + rng.below(3) as usize) % pairs.len()];
                let init = (si + ai) % 2 == 0;
                let seed = rng.below(1 << 30);
                tally_case(&mut t, &dev, q, pair, algo, s, init, seed);
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}

/// Sum, max (initial values kept), argmin with global indices and argmax with indices within
/// the segment, in one launch, over CSR offsets of mean about 300 with ties in most segments:
/// exact on small integers in f32, the same bits twice.
#[test]
fn several_variables_with_ties() {
    let mut t = Tally::new("segment_stream::several_variables_with_ties");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0x73 + d.index() as u64);
        let tail = if d.is_simulator() { 4 } else { 60 };
        for (algo, mean) in [
            (SegmentAlgo::Item, 300),
            (SegmentAlgo::Chunks, 300),
            (SegmentAlgo::Aligned, 300),
            (SegmentAlgo::Aligned, 40),
            (SegmentAlgo::Aligned, 4),
        ] {
            let off = offsets(&mut rng, 2, &[0, 15, 17, 256, 0, 3, 4, 5], tail, mean);
            let r = off.len() - 1;
            let n = *off.last().unwrap() as usize + 3;
            let xs: Vec<f32> = (0..n).map(|_| rng.below(9) as f32 - 4.0).collect();
            let starts: Vec<f32> = (0..r).map(|_| rng.below(7) as f32 - 3.0).collect();
            let x = q.buffer_from(&xs).unwrap();
            let offsets = q.buffer_from(&off).unwrap();
            let sum = q.buffer_from(&vec![0.0f32; r]).unwrap();
            let mx = q.buffer_from(&starts).unwrap();
            let (vmin, imin) = (
                q.buffer_from(&vec![0.0f32; r]).unwrap(),
                q.buffer_from(&vec![0u64; r]).unwrap(),
            );
            let (vmax, imax) = (
                q.buffer_from(&vec![0.0f32; r]).unwrap(),
                q.buffer_from(&vec![0u64; r]).unwrap(),
            );
            let s = || Segments::offsets(&offsets);
            let run = || {
                q.parallel_for_reduce_with(
                    Range::new(n as u64),
                    vec![
                        reduction(&sum, Op::Plus).segments(s()).initialize_to_identity(),
                        reduction(&mx, Op::Maximum).name("mx").segments(s()),
                        reduction_argmin(&vmin, &imin)
                            .name("lo")
                            .segments(s())
                            .initialize_to_identity(),
                        reduction_argmax(&vmax, &imax)
                            .name("hi")
                            .segments(s())
                            .index_in_segment()
                            .initialize_to_identity(),
                    ],
                    Kernel::new(
                        "sum += x[i]; combine(mx, x[i]); combine(lo, x[i], i); combine(hi, x[i], i);",
                    )
                    .arg("x", &x),
                    Options::default().segment(algo),
                )
            };
            let case = format!("{algo} mean {mean} r={r} n={n}");
            if let Err(e) = run() {
                t.fail(&dev, &case, &format!("launch: {e}"));
                continue;
            }
            let got = (
                sum.to_vec().unwrap(),
                mx.to_vec().unwrap(),
                vmin.to_vec().unwrap(),
                imin.to_vec().unwrap(),
                vmax.to_vec().unwrap(),
                imax.to_vec().unwrap(),
            );
            let mut bad = Vec::new();
            for k in 0..r {
                let (b, e) = (off[k] as usize, off[k + 1] as usize);
                let seg = &xs[b..e];
                let want_sum: f32 = seg.iter().sum();
                let want_mx = seg.iter().fold(starts[k], |m, &v| m.max(v));
                let lo = seg
                    .iter()
                    .enumerate()
                    .fold((f32::INFINITY, u64::MAX), |a, (j, &v)| {
                        if v < a.0 {
                            (v, (b + j) as u64)
                        } else {
                            a
                        }
                    });
                let hi =
                    seg.iter()
                        .enumerate()
                        .fold((f32::NEG_INFINITY, u64::MAX), |a, (j, &v)| {
                            if v > a.0 {
                                (v, j as u64)
                            } else {
                                a
                            }
                        });
                let g = (
                    got.0[k],
                    got.1[k],
                    (got.2[k], got.3[k]),
                    (got.4[k], got.5[k]),
                );
                if g != (want_sum, want_mx, lo, hi) && bad.len() < 4 {
                    bad.push(format!(
                        "segment {k} ({b}..{e}): {g:?} want {:?}",
                        (want_sum, want_mx, lo, hi)
                    ));
                }
            }
            sum.write(0, &vec![7.0f32; r]).unwrap();
            imax.write(0, &vec![9u64; r]).unwrap();
            if let Err(e) = run() {
                bad.push(format!("second launch: {e}"));
            } else if sum.to_vec().unwrap() != got.0 || imax.to_vec().unwrap() != got.5 {
                bad.push("a second run of the same plan gave other results".into());
            }
            if bad.is_empty() {
                t.pass(&dev);
            } else {
                t.fail(&dev, &case, &bad.join("; "));
            }
        }
    }
    t.finish();
}
