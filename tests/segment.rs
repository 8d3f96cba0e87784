//! Segmented and axis reductions on every device: every plan (forced and automatic) x a sample
//! of (op, type) pairs x odd shapes (one segment, primes, length 1, empty segments, one segment
//! of all n, offsets that do not start at 0), initialize_to_identity per segment, several
//! variables, argmin/argmax with both index kinds, custom ops with and without identity, axis
//! reductions of 2-D and 3-D ranges, and the errors (with nothing written). Integers exactly;
//! floats within |err| <= (len + 40)·u·Σ|x| + 2u·|ref| of a float64 reference (a summation tree
//! of depth d errs by at most d·u·Σ|x| to first order; a segment's depth is at most its length
//! plus the tree and the finishing pass). Fresh seeded inputs per case.

#[path = "common/cli.rs"]
mod cli_run;
use crate::common;

use clreduce::check::reference::{check, random_input, reference, reference_arg};
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Axis, CustomOp, DynBuffer, ElemType, Error,
    HostVec, Kernel, Op, Options, Queue, Range, SegmentAlgo, Segments, Value,
};
use common::rng::Rng;
use common::{initial, queues, short, sim_lock, valid_pairs, Tally};

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

/// Heavy-tailed segment lengths of mean about `mean` (a third empty), as offsets from `lo`.
fn ragged(rng: &mut Rng, segments: usize, mean: u64, lo: u64) -> Vec<u64> {
    let mut off = vec![lo];
    for _ in 0..segments {
        let len = match rng.below(12) {
            0..=3 => 0,
            4..=9 => rng.below(mean.max(1)),
            10 => rng.below(4 * mean + 1),
            _ => rng.below(24 * mean + 1),
        };
        off.push(off.last().unwrap() + len);
    }
    off
}

/// One segmentation under test: CSR offsets over `n` elements (uniform ones have k*c).
struct Layout {
    n: u64,
    off: Vec<u64>,
    uniform: Option<u64>,
}

fn layouts(sim: bool, seed: u64) -> Vec<Layout> {
    let scale = if sim { 1 } else { 8 };
    let uni = |r: u64, c: u64| Layout {
        n: r * c,
        off: (0..=r).map(|k| k * c).collect(),
        uniform: Some(c),
    };
    let mut rng = Rng(seed);
    let mut v = vec![
        uni(1, 1),
        uni(7, 13),
        uni(1, 503 * scale + 6),
        uni(61 * scale, 1),
        uni(3, 257 * scale),
        uni(40 * scale, 24),
    ];
    for mean in [3, 40 * scale] {
        let off = ragged(
            &mut rng,
            (300 * scale / mean.min(300)) as usize + 5,
            mean,
            0,
        );
        let n = *off.last().unwrap();
        v.push(Layout {
            n,
            off,
            uniform: None,
        });
    }
    // Offsets that skip the first and last indices, with empty segments at both ends.
    let mut off = vec![5, 5];
    off.extend(ragged(&mut rng, 20, 30, 5).into_iter().skip(1));
    let last = *off.last().unwrap();
    off.push(last);
    v.push(Layout {
        n: last + 9,
        off,
        uniform: None,
    });
    // One segment of all n.
    v.push(Layout {
        n: 700 * scale + 3,
        off: vec![0, 700 * scale + 3],
        uniform: None,
    });
    v
}

fn read(buf: &DynBuffer, len: usize) -> Vec<Value> {
    (0..len).map(|k| buf.value(k).expect("read")).collect()
}

fn upload_u64(q: &Queue, v: &[u64]) -> clreduce::Buffer<u64> {
    q.buffer_from(v).expect("offsets")
}

/// Float bound of a segment of `len` elements (see the file's comment).
fn depth(len: usize) -> f64 {
    len as f64 + 40.0
}

/// Runs one (op, type, plan, layout) case and checks every segment.
#[allow(clippy::too_many_arguments)]
fn run_case(
    q: &Queue,
    op: Op,
    ty: ElemType,
    algo: Option<SegmentAlgo>,
    l: &Layout,
    init_to_identity: bool,
    seed: u64,
) -> Result<(), String> {
    let r = l.off.len() - 1;
    let data = random_input(op, ty, l.n as usize, seed);
    let x = DynBuffer::upload(q, &data).map_err(|e| e.to_string())?;
    let inits: Vec<Value> = (0..r).map(|k| initial(op, ty, seed + k as u64)).collect();
    let out = DynBuffer::upload(q, &HostVec::from_values(ty, &inits).unwrap())
        .map_err(|e| e.to_string())?;
    let offsets = upload_u64(q, &l.off);
    let segs = match l.uniform {
        Some(c) => Segments::uniform(c),
        None => Segments::offsets(&offsets),
    };
    let mut red = reduction(&out, op).segments(segs);
    if init_to_identity {
        red = red.initialize_to_identity();
    }
    let options = Options {
        segment: algo,
        ..Options::default()
    };
    let ev = q
        .parallel_for_reduce_with(
            Range::new(l.n),
            red,
            Kernel::new(common::body(op, ty)).arg("x", &x),
            options,
        )
        .map_err(|e| format!("launch: {e}"))?;
    let plan = ev.plan().expect("plan").clone();
    let sp = plan.segment.as_ref().ok_or("no segment plan")?;
    if let Some(a) = algo {
        if sp.algo != a {
            return Err(format!("forced {a}, plan has {}", sp.algo));
        }
    }
    let got = read(&out, r);
    for k in 0..r {
        let (b, e) = (l.off[k] as usize, l.off[k + 1] as usize);
        let init = (!init_to_identity).then_some(inits[k]);
        let rf = reference(op, &sub(&data, b..e), init);
        let g = got[k];
        check(op, ty, g.to_f64(), g.as_int(), &rf, depth(e - b))
            .map_err(|m| format!("segment {k} ({b}..{e}) under {}: {m}", sp.algo))?;
    }
    Ok(())
}

#[test]
fn plans_ops_types_shapes() {
    let mut t = Tally::new("segment::plans_ops_types_shapes");
    let pairs = valid_pairs();
    let algos = [
        None,
        Some(SegmentAlgo::Item),
        Some(SegmentAlgo::Group),
        Some(SegmentAlgo::Tiles),
        Some(SegmentAlgo::Chunks),
        Some(SegmentAlgo::Staged),
        Some(SegmentAlgo::Lanes),
        Some(SegmentAlgo::Merge),
    ];
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let sim = d.is_simulator();
        let started = std::time::Instant::now();
        let ls = layouts(sim, 0x5E6 + d.index() as u64);
        for (ai, algo) in algos.iter().enumerate() {
            // A sample of the pairs per plan, rotating so every pair runs under some plan.
            let per = if sim { 2 } else { 4 };
            for p in 0..per {
                let (op, ty) = pairs[(ai * per + p) * 7 % pairs.len()];
                let init = p % 2 == 1;
                for (li, l) in ls.iter().enumerate() {
                    if sim && li % 2 == p % 2 {
                        continue;
                    }
                    let case = format!(
                        "{} {op} {ty} n={} r={}{}",
                        algo.map_or("auto".into(), |a| a.to_string()),
                        l.n,
                        l.off.len() - 1,
                        if init { " init" } else { "" }
                    );
                    let seed = 0xA11 + (ai * 100 + p * 10 + li) as u64;
                    match run_case(q, op, ty, *algo, l, init, seed) {
                        Ok(()) => t.pass(&dev),
                        Err(m) if m.contains("cannot run on") => t.skip_device(&dev, &case, &m),
                        Err(m) => t.fail(&dev, &case, &m),
                    }
                }
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}

/// Sum and max per row in one launch, argmin (global indices) and argmax (indices within the
/// segment) with ties, over CSR offsets with empty segments; the same plan twice gives the
/// same bits.
#[test]
fn several_variables_arg_and_repeat() {
    let mut t = Tally::new("segment::several_variables_arg_and_repeat");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0xB0B + d.index() as u64);
        let algos = [
            SegmentAlgo::Item,
            SegmentAlgo::Group,
            SegmentAlgo::Tiles,
            SegmentAlgo::Chunks,
            SegmentAlgo::Lanes,
            SegmentAlgo::Staged,
            SegmentAlgo::Merge,
        ];
        for algo in algos {
            let off = ragged(&mut rng, 37, 50, 0);
            let r = off.len() - 1;
            let n = *off.last().unwrap() as usize;
            // Few distinct values: ties in most segments.
            let xs: Vec<f32> = (0..n).map(|_| (rng.below(9) as f32 - 4.0) * 0.5).collect();
            let x = q.buffer_from(&xs).unwrap();
            let offsets = q.buffer_from(&off).unwrap();
            let sum = q.buffer_from(&vec![0.0f32; r]).unwrap();
            let mx = q.buffer_from(&vec![-7.0f32; r]).unwrap();
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
                    Kernel::new("sum += x[i]; combine(mx, x[i]); combine(lo, x[i], i); combine(hi, x[i], i);")
                        .arg("x", &x),
                    Options::default().segment(algo),
                )
            };
            let case = format!("{algo} r={r} n={n}");
            if let Err(e) = run() {
                t.fail(&dev, &case, &format!("launch: {e}"));
                continue;
            }
            let first = sum.to_vec().unwrap();
            let (s1, m1) = (first.clone(), mx.to_vec().unwrap());
            let (vn, inn, vx, ix) = (
                vmin.to_vec().unwrap(),
                imin.to_vec().unwrap(),
                vmax.to_vec().unwrap(),
                imax.to_vec().unwrap(),
            );
            let mut bad = Vec::new();
            for k in 0..r {
                let (b, e) = (off[k] as usize, off[k + 1] as usize);
                let seg = HostVec::F32(xs[b..e].to_vec());
                let rs = reference(Op::Plus, &seg, None);
                if let Err(m) = check(
                    Op::Plus,
                    ElemType::F32,
                    s1[k] as f64,
                    None,
                    &rs,
                    depth(e - b),
                ) {
                    bad.push(format!("sum {k}: {m}"));
                }
                let want_max = xs[b..e].iter().fold(-7.0f32, |a, &v| a.max(v));
                if m1[k] != want_max {
                    bad.push(format!("max {k}: {} != {want_max}", m1[k]));
                }
                if b == e {
                    if vn[k] != f32::INFINITY
                        || inn[k] != u64::MAX
                        || vx[k] != f32::NEG_INFINITY
                        || ix[k] != u64::MAX
                    {
                        bad.push(format!(
                            "empty {k}: ({}, {}) ({}, {})",
                            vn[k], inn[k], vx[k], ix[k]
                        ));
                    }
                    continue;
                }
                let lo = reference_arg(false, &seg, None);
                let hi = reference_arg(true, &seg, None);
                if vn[k] as f64 != lo.value.to_f64() || inn[k] != lo.index + b as u64 {
                    bad.push(format!(
                        "argmin {k}: ({}, {}) want ({:?}, {})",
                        vn[k],
                        inn[k],
                        lo.value,
                        lo.index + b as u64
                    ));
                }
                if vx[k] as f64 != hi.value.to_f64() || ix[k] != hi.index {
                    bad.push(format!(
                        "argmax in segment {k}: ({}, {}) want ({:?}, {})",
                        vx[k], ix[k], hi.value, hi.index
                    ));
                }
            }
            // The same plan again (max is idempotent; sum starts from the identity): same bits.
            if let Err(e) = run() {
                bad.push(format!("second launch: {e}"));
            } else if sum
                .to_vec()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .ne(first.iter().map(|v| v.to_bits()))
            {
                bad.push("a second run of the same plan gave other bits".into());
            }
            if bad.is_empty() {
                t.pass(&dev);
            } else {
                t.fail(&dev, &case, &bad[..bad.len().min(5)].join("; "));
            }
        }
    }
    t.finish();
}

/// Custom ops: with an identity (initialize_to_identity gives it to empty segments) and
/// without one (its initial values take part; an empty segment is left as it was;
/// initialize_to_identity needs an identity, as for any reduction).
#[test]
fn custom_ops_and_empty_segments() {
    let mut t = Tally::new("segment::custom_ops_and_empty_segments");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0xC0 + d.index() as u64);
        for algo in [
            SegmentAlgo::Item,
            SegmentAlgo::Group,
            SegmentAlgo::Tiles,
            SegmentAlgo::Chunks,
            SegmentAlgo::Lanes,
            SegmentAlgo::Staged,
            SegmentAlgo::Merge,
        ] {
            let off = ragged(&mut rng, 29, 40, 0);
            let r = off.len() - 1;
            let n = *off.last().unwrap() as usize;
            let xs: Vec<i32> = (0..n).map(|_| rng.below(2001) as i32 - 1000).collect();
            let x = q.buffer_from(&xs).unwrap();
            let offsets = q.buffer_from(&off).unwrap();
            let start: Vec<i32> = (0..r).map(|k| 5000 + k as i32).collect();
            let with_id = q.buffer_from(&start).unwrap();
            let no_id = q.buffer_from(&start).unwrap();
            let (plus, larger) = ("a + b", "a > b ? a : b");
            let res = q.parallel_for_reduce_with(
                Range::new(n as u64),
                vec![
                    reduction(&with_id, CustomOp::new(plus).identity(0i32))
                        .name("p")
                        .segments(Segments::offsets(&offsets))
                        .initialize_to_identity(),
                    reduction(&no_id, CustomOp::new(larger))
                        .name("m")
                        .segments(Segments::offsets(&offsets)),
                ],
                Kernel::new("combine(p, x[i]); combine(m, x[i]);").arg("x", &x),
                Options::default().segment(algo),
            );
            let case = format!("{algo} r={r}");
            if let Err(e) = res {
                t.fail(&dev, &case, &format!("launch: {e}"));
                continue;
            }
            let (a, b) = (with_id.to_vec().unwrap(), no_id.to_vec().unwrap());
            let mut bad = Vec::new();
            for k in 0..r {
                let seg = &xs[off[k] as usize..off[k + 1] as usize];
                let want_a = seg.iter().fold(0i32, |acc, &v| acc.wrapping_add(v));
                let want_b = seg.iter().copied().fold(start[k], i32::max);
                if a[k] != want_a || b[k] != want_b {
                    bad.push(format!(
                        "segment {k} (len {}): {} {} want {want_a} {want_b}",
                        seg.len(),
                        a[k],
                        b[k]
                    ));
                }
            }
            if bad.is_empty() {
                t.pass(&dev);
            } else {
                t.fail(&dev, &case, &bad[..bad.len().min(5)].join("; "));
            }
        }
    }
    t.finish();
}

/// Axis reductions of 2-D and 3-D ranges against the host, through `item`.
#[test]
fn axis_first_and_last() {
    let mut t = Tally::new("segment::axis_first_and_last");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let sim = d.is_simulator();
        let shapes: Vec<Vec<u64>> = if sim {
            vec![
                vec![3, 5],
                vec![1, 7],
                vec![7, 1],
                vec![2, 3, 4],
                vec![37, 3],
            ]
        } else {
            vec![
                vec![3, 5],
                vec![1, 7],
                vec![7, 1],
                vec![2, 3, 4],
                vec![1031, 3],
                vec![5, 2053],
                vec![17, 9, 33],
            ]
        };
        for ext in shapes {
            let n: u64 = ext.iter().product();
            let mut rng = Rng(n ^ 0xAA);
            let xs: Vec<i64> = (0..n)
                .map(|_| rng.below(1 << 40) as i64 - (1 << 39))
                .collect();
            let a = q.buffer_from(&xs).unwrap();
            for axis in [Axis::Last, Axis::First] {
                let (outer, inner) = match axis {
                    Axis::Last => (n / ext[ext.len() - 1], ext[ext.len() - 1]),
                    Axis::First => (n / ext[0], ext[0]),
                };
                // Last: result k sums k*inner..; First: result k sums k, k+outer, ...
                let want: Vec<i64> = (0..outer)
                    .map(|k| {
                        (0..inner)
                            .map(|j| match axis {
                                Axis::Last => xs[(k * inner + j) as usize],
                                Axis::First => xs[(j * outer + k) as usize],
                            })
                            .fold(0i64, i64::wrapping_add)
                    })
                    .collect();
                let out = q.buffer_from(&vec![3i64; outer as usize]).unwrap();
                let range = if ext.len() == 2 {
                    Range::new_2d(ext[0], ext[1])
                } else {
                    Range::new_3d(ext[0], ext[1], ext[2])
                };
                let case = format!("{axis:?} {ext:?}");
                let res = q.parallel_for_reduce(
                    range,
                    reduction(&out, Op::Plus).axis(axis),
                    Kernel::new("sum += a[item.linear_id];").arg("a", &a),
                );
                match res {
                    Err(e) => t.fail(&dev, &case, &format!("launch: {e}")),
                    Ok(_) => {
                        let got = out.to_vec().unwrap();
                        let want: Vec<i64> = want.iter().map(|w| w.wrapping_add(3)).collect();
                        if got == want {
                            t.pass(&dev);
                        } else {
                            t.fail(
                                &dev,
                                &case,
                                &format!(
                                    "got {:?}.. want {:?}..",
                                    &got[..got.len().min(6)],
                                    &want[..want.len().min(6)]
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
    t.finish();
}

/// A launch that must be refused: what, its outcome, and the error it must be.
type Refusal<'a> = (
    &'a str,
    clreduce::Result<clreduce::ReduceEvent>,
    fn(&Error) -> bool,
);

/// Bad segmentations are typed errors, and nothing is written.
#[test]
fn errors_write_nothing() {
    let mut t = Tally::new("segment::errors_write_nothing");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let x = q.buffer_from(&[1i32; 12]).unwrap();
        let out = q.buffer_from(&[77i32; 4]).unwrap();
        let k = || Kernel::new("sum += x[i];").arg("x", &x);
        let off = |v: &[u64]| q.buffer_from(v).unwrap();
        let (desc, asc_bad, past, one) = (
            off(&[0, 4, 3, 12]),
            off(&[0, 4, 8]),
            off(&[0, 6, 13]),
            off(&[0]),
        );
        let cases: Vec<Refusal> = vec![
            (
                "c = 0",
                q.parallel_for_reduce(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::uniform(0)),
                    k(),
                ),
                |e| matches!(e, Error::BadSegments { .. }),
            ),
            (
                "n not a multiple of c",
                q.parallel_for_reduce(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::uniform(5)),
                    k(),
                ),
                |e| matches!(e, Error::BadSegments { .. }),
            ),
            (
                "too few results",
                q.parallel_for_reduce(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::uniform(2)),
                    k(),
                ),
                |e| matches!(e, Error::BufferTooShort { need: 6, .. }),
            ),
            (
                "descending offsets",
                q.parallel_for_reduce(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::offsets(&desc)),
                    k(),
                ),
                |e| matches!(e, Error::BadSegments { .. }),
            ),
            (
                "offsets past n",
                q.parallel_for_reduce(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::offsets(&past)),
                    k(),
                ),
                |e| matches!(e, Error::BadSegments { .. }),
            ),
            (
                "one offset",
                q.parallel_for_reduce(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::offsets(&one)),
                    k(),
                ),
                |e| matches!(e, Error::BadSegments { .. }),
            ),
            (
                "overflowing extents",
                q.parallel_for_reduce(
                    Range::new_2d(1 << 40, 1 << 40),
                    reduction(&out, Op::Plus).axis(Axis::Last),
                    k(),
                ),
                |e| matches!(e, Error::BadSegments { .. }),
            ),
            (
                "mixed segmentations",
                q.parallel_for_reduce(
                    Range::new(12),
                    vec![
                        reduction(&out, Op::Plus).segments(Segments::uniform(3)),
                        reduction(&x, Op::Plus)
                            .name("b")
                            .segments(Segments::offsets(&asc_bad)),
                    ],
                    Kernel::new("sum += 1; b += 1;"),
                ),
                |e| matches!(e, Error::BadArgument { .. }),
            ),
            (
                "scalar beside segmented",
                q.parallel_for_reduce(
                    Range::new(12),
                    vec![
                        reduction(&out, Op::Plus).segments(Segments::uniform(3)),
                        reduction(&x, Op::Plus).name("b"),
                    ],
                    Kernel::new("sum += 1; b += 1;"),
                ),
                |e| matches!(e, Error::BadArgument { .. }),
            ),
            (
                "forced columns on rows",
                q.parallel_for_reduce_with(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::uniform(3)),
                    k(),
                    Options::default().segment(SegmentAlgo::Columns),
                ),
                |e| matches!(e, Error::Unsupported { .. }),
            ),
            (
                "forced stripes on rows",
                q.parallel_for_reduce_with(
                    Range::new(12),
                    reduction(&out, Op::Plus).segments(Segments::uniform(3)),
                    k(),
                    Options::default().segment(SegmentAlgo::Stripes),
                ),
                |e| matches!(e, Error::Unsupported { .. }),
            ),
            (
                // Exact sums per segment run under every plan but staged (decision 55).
                "exact per segment under staged",
                q.parallel_for_reduce_with(
                    Range::new(12),
                    reduction(&q.buffer_from(&[0f32; 4]).unwrap(), Op::Plus)
                        .segments(Segments::uniform(3)),
                    Kernel::new("sum += 1.0f;"),
                    Options::default().exact().segment(SegmentAlgo::Staged),
                ),
                |e| matches!(e, Error::Unsupported { .. }),
            ),
        ];
        for (case, res, want) in cases {
            match res {
                Ok(_) => t.fail(&dev, case, "accepted"),
                Err(e) if !want(&e) => t.fail(&dev, case, &format!("wrong error: {e:?}")),
                Err(_) if out.to_vec().unwrap() != [77; 4] || x.to_vec().unwrap() != [1; 12] => {
                    t.fail(&dev, case, "a buffer was written")
                }
                Err(_) => t.pass(&dev),
            }
        }
    }
    t.finish();
}

/// The span idiom: `rows[i / C]` (a literal, a scalar argument, or a `kernel!` closure with a
/// captured `C`) is planned as uniform segments and says so; the results are the span's.
#[test]
fn span_idiom_is_planned_as_segments() {
    use clreduce::{kernel, reduction_span};
    let mut t = Tally::new("segment::span_idiom_is_planned_as_segments");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let (r, c) = (37usize, 29usize);
        let mut rng = Rng(0x5A + d.index() as u64);
        let xs: Vec<u32> = (0..r * c).map(|_| rng.below(1000) as u32).collect();
        let x = q.buffer_from(&xs).unwrap();
        let want: Vec<u32> = (0..r)
            .map(|k| 1 + xs[k * c..(k + 1) * c].iter().sum::<u32>())
            .collect();
        let cols = c;
        let kernels = [
            ("literal", Kernel::new("rows[i / 29] += x[i];").arg("x", &x)),
            (
                "scalar",
                Kernel::new("rows[i / cols] += x[i];")
                    .arg("x", &x)
                    .scalar("cols", c as u64),
            ),
            ("closure", kernel!(|i, rows| rows[i / cols] += x[i]).into()),
        ];
        for (what, k) in kernels {
            let rows = q.buffer_from(&vec![1u32; r]).unwrap();
            let res = q.parallel_for_reduce_with(
                Range::new((r * c) as u64),
                reduction_span(&rows, r, Op::Plus).name("rows"),
                k,
                Options::default(),
            );
            match res {
                Err(e) => t.fail(&dev, what, &format!("launch: {e}")),
                Ok(ev) => {
                    let sp = ev.plan().and_then(|p| p.segment.clone());
                    let got = rows.to_vec().unwrap();
                    if !sp
                        .as_ref()
                        .is_some_and(|s| s.span_idiom && s.reason.contains("span idiom"))
                    {
                        t.fail(
                            &dev,
                            what,
                            &format!("not planned as the span idiom: {sp:?}"),
                        );
                    } else if got != want {
                        t.fail(
                            &dev,
                            what,
                            &format!("got {:?}.. want {:?}..", &got[..4], &want[..4]),
                        );
                    } else {
                        t.pass(&dev);
                    }
                }
            }
        }
        // Not the idiom (n is not r * C): the span plan, same answers.
        let rows = q.buffer_from(&vec![1u32; r]).unwrap();
        let n = r * c - 5;
        let res = q.parallel_for_reduce(
            Range::new(n as u64),
            reduction_span(&rows, r, Op::Plus).name("rows"),
            Kernel::new("rows[i / 29] += x[i];").arg("x", &x),
        );
        let want: Vec<u32> = (0..r)
            .map(|k| 1 + xs[k * c..((k + 1) * c).min(n)].iter().sum::<u32>())
            .collect();
        match res {
            Err(e) => t.fail(&dev, "partial", &format!("launch: {e}")),
            Ok(ev) if ev.plan().is_some_and(|p| p.segment.is_some()) => {
                t.fail(&dev, "partial", "planned as segments with n != r * C")
            }
            Ok(_) if rows.to_vec().unwrap() != want => t.fail(&dev, "partial", "wrong span result"),
            Ok(_) => t.pass(&dev),
        }
    }
    t.finish();
}

/// `clreduce reduce --rows/--cols/--axis` and `--ragged` check every result on the host (exit
/// 0, `--json` one entry per variable); bad shapes are one-line errors with exit 2.
#[test]
fn cli_rows_cols_ragged() {
    let dev = &queues()[0].device().index().to_string();
    for args in [
        vec!["--rows", "300", "--cols", "7", "--op", "sum,max,argmin"],
        vec![
            "--rows",
            "7",
            "--cols",
            "300",
            "--axis",
            "0",
            "--type",
            "i64",
            "--op",
            "sum,argmax",
        ],
        vec![
            "--ragged",
            "40",
            "--n",
            "20011",
            "--op",
            "sum,min",
            "--init-identity",
        ],
    ] {
        let mut all = vec!["reduce", "--device", dev, "--json"];
        all.extend(&args);
        let (code, out, err) = cli_run::cli(&all);
        assert_eq!(code, 0, "{args:?}: {err}{out}");
        let js: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        let vars = js[0]["vars"].as_array().expect("vars");
        assert_eq!(
            vars.len(),
            args[args.iter().position(|a| *a == "--op").unwrap() + 1]
                .split(',')
                .count()
        );
        for v in vars {
            assert!(
                v["check"].as_str().unwrap().starts_with("ok"),
                "{args:?}: {v}"
            );
            assert!(v["results"].as_u64().unwrap() > 0);
        }
    }
    for bad in [
        vec!["--rows", "0", "--cols", "3"],
        vec!["--rows", "4294967296", "--cols", "4294967296"],
        vec!["--cols", "3"],
        vec!["--rows", "3", "--cols", "3", "--axis", "2"],
        vec!["--ragged", "0"],
    ] {
        let mut all = vec!["reduce", "--device", dev];
        all.extend(&bad);
        let (code, out, err) = cli_run::cli(&all);
        assert_eq!(code, 2, "{bad:?}: {err}{out}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
        cli_run::assert_refused_cleanly(&format!("{bad:?}"), &out, &err);
    }
}
