//! Segmented and axis reductions split across devices (`MultiQueue`, issue 26): PoCL + Intel's
//! CPU runtime here, and the same plus a second queue on the first device (three shares). Each
//! case runs the same launch on one device and across the devices, with uneven explicit splits
//! (a share boundary inside a segment, a share inside one segment, empty shares) and with the
//! split `MultiQueue::split_segments` moves onto segment boundaries: integer results and
//! argmin/argmax (value and index, global and within the segment) equal one device's exactly;
//! f32 sums are within (len + shares + 40)·u·Σ|x| + 2u·|ref| of a float64 reference. Shapes:
//! rows and columns of R x C (R or C = 1, primes), uniform segments, CSR offsets with empty
//! segments and offsets that do not start at 0, one segment of all n; several variables per
//! launch; initial values kept (and empty segments left as they were) or
//! `initialize_to_identity` (empty segments get the identity); and the errors.
//!
//! The integer cases take a seeded sample per run (tests/common/sample.rs: `SAMPLE ...` prints
//! the seed, `CLREDUCE_SAMPLE_SEED` replays it, `CLREDUCE_FULL_MATRIX=1` runs them all, as
//! scripts/gpu.sh does): per configuration and shape one of the three variable sets (the op
//! families: sum/max, xor/argmin/argmax, min/product/argmax) and two of its four splits (the
//! three explicit ones and `split_segments`'s), rotating with the shape, the configuration and
//! the seed. So every run covers both configurations, every shape (and the segment plans the
//! shapes lead to), every variable set on at least three shapes and every split on five; each
//! (shape, set, split) runs over repeated runs. The f32 sums, the boundary moves and the errors
//! run whole.

#[path = "common/multi.rs"]
mod multi_common;
#[path = "common/rng.rs"]
mod rng;
#[path = "common/sample.rs"]
mod sample;

use clreduce::check::reference::unit_roundoff;
use clreduce::multi::{MultiKernel, MultiQueue, Split, Throughput};
use clreduce::plan::Determinism;
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Axis, Buffer, CustomOp, ElemType, Error, Kernel,
    Op, Options, Queue, Range, Reduction, Segments,
};
use multi_common::{configs, device_queues, splits};
use rng::Rng;
use sample::{announce_sample, full_matrix, sample_hash};

/// The segments of a case.
#[derive(Clone, Debug)]
enum Shape {
    Rows(u64, u64),
    Cols(u64, u64),
    Uniform(u64, u64),
    Offsets(u64, Vec<u64>),
}

impl Shape {
    fn range(&self) -> Range {
        match self {
            Shape::Rows(r, c) | Shape::Cols(r, c) => Range::new_2d(*r, *c),
            Shape::Uniform(n, _) | Shape::Offsets(n, _) => Range::new(*n),
        }
    }
    fn n(&self) -> u64 {
        self.range().extents().iter().product()
    }
    /// (units, indices per unit) of the split.
    fn units(&self) -> (u64, u64) {
        match self {
            Shape::Rows(r, c) | Shape::Cols(r, c) => (*r, *c),
            _ => (self.n(), 1),
        }
    }
    fn segments(&self) -> usize {
        match self {
            Shape::Rows(r, _) => *r as usize,
            Shape::Cols(_, c) => *c as usize,
            Shape::Uniform(n, len) => (n / len) as usize,
            Shape::Offsets(_, off) => off.len() - 1,
        }
    }
    /// The members of segment k (for the host reference).
    fn members(&self, k: usize) -> Vec<usize> {
        match self {
            Shape::Rows(_, c) | Shape::Uniform(_, c) => {
                (k * *c as usize..(k + 1) * *c as usize).collect()
            }
            Shape::Cols(r, c) => (0..*r as usize).map(|i| i * *c as usize + k).collect(),
            Shape::Offsets(_, off) => (off[k] as usize..off[k + 1] as usize).collect(),
        }
    }
    fn attach(&self, r: Reduction, off: Option<&Buffer<u64>>) -> Reduction {
        match self {
            Shape::Rows(..) => r.axis(Axis::Last),
            Shape::Cols(..) => r.axis(Axis::First),
            Shape::Uniform(_, len) => r.segments(Segments::uniform(*len)),
            Shape::Offsets(..) => r.segments(Segments::offsets(off.expect("offsets"))),
        }
    }
}

/// The odd shapes: R or C = 1, primes, one segment of all n, uniform segments, CSR offsets with
/// empty segments (and a start past 0, an end before n).
fn shapes(rng: &mut Rng) -> Vec<Shape> {
    let mut off = vec![3u64];
    for k in 0..60 {
        let len = match k % 4 {
            0 => 0,
            1 => rng.below(5),
            2 => rng.below(60),
            _ => rng.below(400),
        };
        off.push(off[off.len() - 1] + len);
    }
    let n = off[off.len() - 1] + 5;
    vec![
        Shape::Rows(97, 31),
        Shape::Rows(1, 2003),
        Shape::Rows(1009, 1),
        Shape::Cols(89, 13),
        Shape::Cols(1, 17),
        Shape::Cols(211, 1),
        Shape::Uniform(3 * 1013, 1013),
        Shape::Uniform(4096, 1),
        Shape::Offsets(n, off),
        Shape::Offsets(2000, vec![0, 2000]),
    ]
}

/// What one launch gives: per variable the values (as i64 bits or f64) and indices.
type Results = Vec<(Vec<f64>, Vec<u64>)>;

/// Variables: (op or argmin/argmax, initialize_to_identity, index_in_segment).
#[derive(Clone, Copy, Debug)]
enum V {
    Op(Op, bool),
    Arg(bool, bool, bool),
}

fn make_var(
    q: &Queue,
    shape: &Shape,
    v: V,
    k: usize,
    off: Option<&Buffer<u64>>,
    seed: u64,
) -> (Reduction, Buffer<i32>, Buffer<u64>) {
    let segs = shape.segments();
    let inits: Vec<i32> = (0..segs as u64)
        .map(|j| ((seed + j * 31 + k as u64 * 7) % 19) as i32 - 9)
        .collect();
    let b = q.buffer_from(&inits).unwrap();
    let ix = q.buffer_from(&vec![7u64; segs]).unwrap();
    let name = format!("v{k}");
    let r = match v {
        V::Op(op, id) => {
            let r = reduction(&b, op);
            if id {
                r.initialize_to_identity()
            } else {
                r
            }
        }
        V::Arg(max, id, inseg) => {
            let r = if max {
                reduction_argmax(&b, &ix)
            } else {
                reduction_argmin(&b, &ix)
            };
            let r = if id { r.initialize_to_identity() } else { r };
            if inseg {
                r.index_in_segment()
            } else {
                r
            }
        }
    };
    (shape.attach(r.name(&name), off), b, ix)
}

fn body(vars: &[V]) -> String {
    vars.iter()
        .enumerate()
        .map(|(k, v)| match v {
            V::Op(..) => format!("combine(v{k}, x[i]); "),
            V::Arg(..) => format!("combine(v{k}, x[i], i); "),
        })
        .collect()
}

fn read(outs: &[(Buffer<i32>, Buffer<u64>)]) -> Results {
    outs.iter()
        .map(|(b, ix)| {
            (
                b.to_vec().unwrap().iter().map(|&v| v as f64).collect(),
                ix.to_vec().unwrap(),
            )
        })
        .collect()
}

/// The launch on one device.
fn single(q: &Queue, shape: &Shape, data: &[i32], vars: &[V], seed: u64) -> Results {
    let x = q.buffer_from(data).unwrap();
    let off = match shape {
        Shape::Offsets(_, o) => Some(q.buffer_from(o).unwrap()),
        _ => None,
    };
    let mut reds = Vec::new();
    let mut outs = Vec::new();
    for (k, v) in vars.iter().enumerate() {
        let (r, b, ix) = make_var(q, shape, *v, k, off.as_ref(), seed);
        reds.push(r);
        outs.push((b, ix));
    }
    let ev = q
        .parallel_for_reduce_with(
            shape.range(),
            reds,
            Kernel::new(&body(vars)).arg("x", &x),
            Options::default(),
        )
        .unwrap();
    ev.wait().unwrap();
    read(&outs)
}

/// The launch across `mq` with `split` (`None`: the launch's own split).
fn split_run(
    mq: &MultiQueue,
    shape: &Shape,
    data: &[i32],
    vars: &[V],
    split: Option<&Split>,
    seed: u64,
) -> Results {
    let q0 = mq.queue(0);
    let off = match shape {
        Shape::Offsets(_, o) => Some(q0.buffer_from(o).unwrap()),
        _ => None,
    };
    let mut reds = Vec::new();
    let mut outs = Vec::new();
    for (k, v) in vars.iter().enumerate() {
        let (r, b, ix) = make_var(q0, shape, *v, k, off.as_ref(), seed);
        reds.push(r);
        outs.push((b, ix));
    }
    let (_, per) = shape.units();
    let split = match split {
        Some(s) => s.clone(),
        None => mq
            .split_segments(shape.range(), reds.clone(), Determinism::Deterministic)
            .unwrap(),
    };
    let x = mq.scatter_with(data, &split, per).unwrap();
    let report = mq
        .parallel_for_reduce_with(
            shape.range(),
            reds,
            MultiKernel::new(&body(vars)).arg("x", &x),
            Options::default(),
        )
        .unwrap();
    // Each share names the segment plan it ran (`segment item`), not a work-group step that
    // a segmented launch does not take.
    for s in &report.shares {
        let plan = s.plan.as_deref().unwrap_or("-");
        assert!(plan.starts_with("segment "), "{}: plan {plan}", s.device);
    }
    read(&outs)
}

fn int_data(n: u64, rng: &mut Rng) -> Vec<i32> {
    // Few distinct values: many ties for argmin/argmax across shares.
    (0..n).map(|_| rng.below(23) as i32 - 11).collect()
}

#[test]
fn integer_ops_and_argmin_equal_one_device() {
    let mut rng = Rng(0x5e65_0001);
    let sets: [&[V]; 3] = [
        &[V::Op(Op::Plus, false), V::Op(Op::Maximum, true)],
        &[
            V::Op(Op::BitXor, true),
            V::Arg(false, true, false),
            V::Arg(true, false, true),
        ],
        &[
            V::Op(Op::Minimum, false),
            V::Op(Op::Multiplies, true),
            V::Arg(true, true, false),
        ],
    ];
    let test = "multi_segments::integer_ops_and_argmin_equal_one_device";
    announce_sample(test);
    let start = (sample_hash(test) % 1_000_000) as usize;
    for (c, (name, mq)) in configs("multi_segments").into_iter().enumerate() {
        let mut cases = 0;
        for (j, shape) in shapes(&mut rng).into_iter().enumerate() {
            let data = int_data(shape.n(), &mut rng);
            let (units, _) = shape.units();
            // Sampled: one set per shape, rotating with the shape, the configuration and the
            // seed, so every shape runs and every set meets several shapes.
            let taken = |s: usize| full_matrix() || s == (j + c + start) % sets.len();
            for (s, vars) in sets.iter().enumerate() {
                // Drawn for every set, so the sample does not change the others' inputs.
                let seed = rng.next() % 1000;
                if !taken(s) {
                    continue;
                }
                let want = single(mq.queue(0), &shape, &data, vars, seed);
                let mut runs: Vec<Option<Split>> = splits(units, mq.len(), true)
                    .into_iter()
                    .map(Some)
                    .collect();
                // The split `split_segments` picks: for the first set taken.
                if (0..sets.len()).find(|&k| taken(k)) == Some(s) {
                    runs.push(None);
                }
                // Sampled: two of the four splits (three explicit, `split_segments`'s),
                // alternating with the shape, the configuration and the seed.
                for (i, split) in runs.into_iter().enumerate() {
                    if !full_matrix() && !(i + j + c + start).is_multiple_of(2) {
                        continue;
                    }
                    let got = split_run(&mq, &shape, &data, vars, split.as_ref(), seed);
                    assert_eq!(
                        got,
                        want,
                        "{name} {shape:?} {vars:?} split {:?}",
                        split.map(|s| s.counts().to_vec())
                    );
                    cases += 1;
                }
            }
        }
        println!(
            "PASS {name}: {cases} segmented launches equal one device (integers, argmin/argmax)"
        );
    }
}

#[test]
fn the_split_moves_onto_segment_boundaries() {
    let qs = device_queues();
    if qs.len() < 2 {
        println!("SKIP split_segments: fewer than two devices");
        return;
    }
    let mq = MultiQueue::new(&qs[..2])
        .unwrap()
        .with_throughput(Throughput::given(&[1e9, 1e9], &[0.0, 0.0]))
        .unwrap();
    let out = qs[0].buffer_from(&[0i32; 1024]).unwrap();
    // Rows of 1000 over 8 rows (1-D uniform): the even cut at 4000 is a boundary.
    let r = reduction(&out, Op::Plus).segments(Segments::uniform(1000));
    let s = mq
        .split_segments(Range::new(8000), r, Determinism::Deterministic)
        .unwrap();
    assert_eq!(s.counts(), &[4000, 4000]);
    // 1001 segments of 7: the even cut at 3504 moves to a multiple of 7; segments of 1001
    // are long beside 1/16 of a share, so the cut stays inside one.
    let r = reduction(&out, Op::Plus).segments(Segments::uniform(7));
    let s = mq
        .split_segments(Range::new(7007), r, Determinism::Deterministic)
        .unwrap();
    assert!(s.counts()[0].is_multiple_of(7), "{:?}", s.counts());
    let r = reduction(&out, Op::Plus).segments(Segments::uniform(1001));
    let s = mq
        .split_segments(Range::new(7007), r, Determinism::Deterministic)
        .unwrap();
    assert_eq!(s.counts(), &[3504, 3503]);
    // One segment of all n: cut in the middle.
    let r = reduction(&out, Op::Plus).segments(Segments::uniform(8000));
    let s = mq
        .split_segments(Range::new(8000), r, Determinism::Deterministic)
        .unwrap();
    assert_eq!(s.counts(), &[4000, 4000]);
    println!("PASS split_segments: short segments whole, one long segment cut");
}

#[test]
fn f32_sums_within_the_bound() {
    let mut rng = Rng(0x5e65_0002);
    for (name, mq) in configs("multi_segments") {
        for shape in shapes(&mut rng) {
            let n = shape.n();
            let data: Vec<f32> = (0..n)
                .map(|_| (rng.below(1 << 20) as f32 - 524288.0) / 1024.0)
                .collect();
            let segs = shape.segments();
            let q0 = mq.queue(0);
            let off = match &shape {
                Shape::Offsets(_, o) => Some(q0.buffer_from(o).unwrap()),
                _ => None,
            };
            let out = q0.buffer_from(&vec![1.5f32; segs]).unwrap();
            let r = shape.attach(reduction(&out, Op::Plus), off.as_ref());
            let (units, per) = shape.units();
            let split = &splits(units, mq.len(), true)[0];
            let x = mq.scatter_with(&data, split, per).unwrap();
            mq.parallel_for_reduce_with(
                shape.range(),
                r,
                MultiKernel::new("sum += x[i];").arg("x", &x),
                Options::default(),
            )
            .unwrap();
            let got = out.to_vec().unwrap();
            let u = unit_roundoff(ElemType::F32);
            for (k, &g) in got.iter().enumerate() {
                let m = shape.members(k);
                let want: f64 = 1.5 + m.iter().map(|&i| data[i] as f64).sum::<f64>();
                let abs: f64 = 1.5 + m.iter().map(|&i| (data[i] as f64).abs()).sum::<f64>();
                let depth = m.len() as f64 + mq.len() as f64 + 40.0;
                let bound = depth * u * abs + 2.0 * u * want.abs();
                assert!(
                    (g as f64 - want).abs() <= bound,
                    "{name} {shape:?} segment {k}: {g} vs {want} (bound {bound:e})"
                );
            }
        }
        println!("PASS {name}: f32 sums per segment within the bound");
    }
}

#[test]
fn errors_are_typed() {
    for (name, mq) in configs("multi_segments") {
        let q0 = mq.queue(0);
        let data = vec![1i32; 64];
        let x = mq
            .scatter_with(&data, &splits(64, mq.len(), true)[0], 1)
            .unwrap();
        let out = q0.buffer_from(&[0i32; 8]).unwrap();
        let run = |r: Vec<Reduction>| {
            mq.parallel_for_reduce_with(
                Range::new(64),
                r,
                MultiKernel::new("combine(sum, x[i]);").arg("x", &x),
                Options::default(),
            )
        };
        // Identity-less ops cannot be split per segment (no per-segment flag yet).
        let r = reduction(&out, CustomOp::new("max(a, b)")).segments(Segments::uniform(8));
        assert!(
            matches!(run(vec![r]), Err(Error::Unsupported { .. })),
            "{name}"
        );
        // Mixed segmentations, a scalar beside a segmented variable.
        let out2 = q0.buffer_from(&[0i32; 8]).unwrap();
        let a = reduction(&out, Op::Plus).segments(Segments::uniform(8));
        let b = reduction(&out2, Op::Plus)
            .segments(Segments::uniform(16))
            .name("sum1");
        assert!(
            matches!(run(vec![a, b]), Err(Error::BadArgument { .. })),
            "{name}"
        );
        // n not a multiple of the length; a result buffer too short; descending offsets.
        let r = reduction(&out, Op::Plus).segments(Segments::uniform(7));
        assert!(
            matches!(run(vec![r]), Err(Error::BadSegments { .. })),
            "{name}"
        );
        let r = reduction(&out, Op::Plus).segments(Segments::uniform(4));
        assert!(
            matches!(run(vec![r]), Err(Error::BufferTooShort { .. })),
            "{name}"
        );
        let off = q0.buffer_from(&[0u64, 40, 30, 64]).unwrap();
        let r = reduction(&out, Op::Plus).segments(Segments::offsets(&off));
        assert!(
            matches!(run(vec![r]), Err(Error::BadSegments { .. })),
            "{name}"
        );
        assert_eq!(out.to_vec().unwrap(), vec![0; 8], "{name}: nothing written");
        println!("PASS {name}: segmented split errors typed, nothing written");
    }
}
