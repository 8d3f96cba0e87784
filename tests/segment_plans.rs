//! The segmented plans of decisions 48 and 68 (`staged`, `lanes`, `stripes`, `blocks`) forced
//! on every device, beside the automatic plan and the plans they replace: uniform rows (`Axis::Last`) and
//! columns (`Axis::First`) of odd shapes (one row or column, primes, lengths that are no
//! multiple of a vector width or of the work-group, rows longer than a stage's default),
//! several variables in one launch (a sum, a max that keeps its initial values, argmin with
//! global indices and argmax with indices within the segment, ties in most segments) and the
//! same plan twice giving the same bits. Sums of small integers in f32 are exact in any order,
//! so every result is compared exactly with the host's. Fresh seeded inputs per case.
//!
//! A run takes, per device and (shape, axis), the automatic plan and one forced plan that
//! rotates with the shape and the seed (tests/common/sample.rs: `SAMPLE ...` prints the seed,
//! `CLREDUCE_SAMPLE_SEED` replays it, `CLREDUCE_FULL_MATRIX=1` runs every plan on every shape),
//! so each device is given every forced plan on at least three shapes per run (10 or 15 shapes,
//! at most three forced plans per axis) and every (shape, plan) pair over runs.

use crate::common;

use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Axis, Kernel, Op, Options, Queue, Range,
    SegmentAlgo,
};
use common::rng::Rng;
use common::{announce_sample, full_matrix, queues, sample_hash, short, sim_lock, Tally};

/// What the host expects of one segment: sum, max from `start`, argmin (global index) and
/// argmax (index within the segment); the lowest index wins a tie.
fn expect(xs: &[f32], idx: &[usize], start: f32) -> (f32, f32, (f32, u64), (f32, u64)) {
    let mut sum = 0.0f32;
    let mut mx = start;
    let (mut lo, mut hi) = ((f32::INFINITY, u64::MAX), (f32::NEG_INFINITY, u64::MAX));
    for (j, &i) in idx.iter().enumerate() {
        let v = xs[i];
        sum += v;
        mx = mx.max(v);
        if v < lo.0 {
            lo = (v, i as u64);
        }
        if v > hi.0 {
            hi = (v, j as u64);
        }
    }
    (sum, mx, lo, hi)
}

/// One launch of `rows x cols` reduced along `axis` under `algo`, checked against the host and
/// run twice for the same bits. `Err` with "cannot run on" is a plan the shape cannot take.
fn run(
    q: &Queue,
    rows: u64,
    cols: u64,
    axis: Axis,
    algo: Option<SegmentAlgo>,
    rng: &mut Rng,
) -> Result<(), String> {
    let n = (rows * cols) as usize;
    // Small integers (exact f32 sums in any order), few distinct values (ties).
    let xs: Vec<f32> = (0..n).map(|_| rng.below(9) as f32 - 4.0).collect();
    let (results, len) = match axis {
        Axis::Last => (rows as usize, cols as usize),
        Axis::First => (cols as usize, rows as usize),
    };
    let starts: Vec<f32> = (0..results).map(|_| rng.below(7) as f32 - 3.0).collect();
    let x = q.buffer_from(&xs).unwrap();
    let sum = q.buffer_from(&vec![0.0f32; results]).unwrap();
    let mx = q.buffer_from(&starts).unwrap();
    let (vmin, imin) = (
        q.buffer_from(&vec![0.0f32; results]).unwrap(),
        q.buffer_from(&vec![0u64; results]).unwrap(),
    );
    let (vmax, imax) = (
        q.buffer_from(&vec![0.0f32; results]).unwrap(),
        q.buffer_from(&vec![0u64; results]).unwrap(),
    );
    let launch = || {
        q.parallel_for_reduce_with(
            Range::new_2d(rows, cols),
            vec![
                reduction(&sum, Op::Plus)
                    .axis(axis)
                    .initialize_to_identity(),
                reduction(&mx, Op::Maximum).name("mx").axis(axis),
                reduction_argmin(&vmin, &imin)
                    .name("lo")
                    .axis(axis)
                    .initialize_to_identity(),
                reduction_argmax(&vmax, &imax)
                    .name("hi")
                    .axis(axis)
                    .index_in_segment()
                    .initialize_to_identity(),
            ],
            Kernel::new(
                "sum += x[i]; combine(mx, x[i]); combine(lo, x[i], i); combine(hi, x[i], i);",
            )
            .arg("x", &x),
            Options {
                segment: algo,
                ..Options::default()
            },
        )
    };
    let ev = launch().map_err(|e| e.to_string())?;
    let plan = ev.plan().and_then(|p| p.segment.clone()).ok_or("no plan")?;
    if algo.is_some_and(|a| a != plan.algo) {
        return Err(format!("forced {algo:?}, planned {}", plan.algo));
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
    for (k, &start) in starts.iter().enumerate() {
        let idx: Vec<usize> = (0..len)
            .map(|j| match axis {
                Axis::Last => k * len + j,
                Axis::First => j * results + k,
            })
            .collect();
        let (s, m, lo, hi) = expect(&xs, &idx, start);
        let g = (
            got.0[k],
            got.1[k],
            (got.2[k], got.3[k]),
            (got.4[k], got.5[k]),
        );
        if g != (s, m, lo, hi) {
            bad.push(format!("result {k}: {g:?} want {:?}", (s, m, lo, hi)));
        }
    }
    // The same plan again (max is idempotent, the rest start from the identity): same bits.
    launch().map_err(|e| format!("second launch: {e}"))?;
    if sum.to_vec().unwrap() != got.0 || imax.to_vec().unwrap() != got.5 {
        bad.push("a second run of the same plan gave other results".into());
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "under {}: {}",
            plan.algo,
            bad[..bad.len().min(4)].join("; ")
        ))
    }
}

#[test]
fn staged_lanes_stripes_on_odd_shapes() {
    let test = "segment_plans::staged_lanes_stripes_on_odd_shapes";
    announce_sample(test);
    let start = (sample_hash(test) % 1_000_000) as usize;
    // Sampled: the automatic plan and one forced plan per (shape, axis), rotating with the
    // shape and the seed; every plan with CLREDUCE_FULL_MATRIX=1.
    let taken = |k: usize, j: usize, len: usize| {
        full_matrix() || k == 0 || k == 1 + (j + start) % (len - 1)
    };
    let mut t = Tally::new(test);
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let sim = d.is_simulator();
        let mut rng = Rng(0x48 + d.index() as u64);
        // (rows, cols): one row or column, primes, widths around 4, 16, 32 and a work-group.
        let mut shapes = vec![
            (1, 1),
            (1, 37),
            (53, 1),
            (97, 3),
            (211, 4),
            (64, 7),
            (129, 16),
            (31, 33),
            (7, 64),
            (5, 131),
        ];
        if !sim {
            shapes.extend([(4099, 4), (1031, 16), (2053, 17), (300, 256), (3, 4999)]);
        }
        let rows_plans = [
            None,
            Some(SegmentAlgo::Staged),
            Some(SegmentAlgo::Lanes),
            Some(SegmentAlgo::Item),
        ];
        let cols_plans = [
            None,
            Some(SegmentAlgo::Stripes),
            Some(SegmentAlgo::Columns),
            Some(SegmentAlgo::Blocks),
        ];
        for (j, (rows, cols)) in shapes.into_iter().enumerate() {
            for axis in [Axis::Last, Axis::First] {
                let plans: &[Option<SegmentAlgo>] = match axis {
                    Axis::Last => &rows_plans,
                    Axis::First => &cols_plans,
                };
                for (k, &algo) in plans.iter().enumerate() {
                    if !taken(k, j, plans.len()) {
                        continue;
                    }
                    let case = format!(
                        "{axis:?} {rows}x{cols} {}",
                        algo.map_or("auto".into(), |a| a.to_string())
                    );
                    match run(q, rows, cols, axis, algo, &mut rng) {
                        Ok(()) => t.pass(&dev),
                        // stripes takes at most a work-group of columns, staged rows that
                        // fit a stage: the plan refuses the shape (not the device).
                        Err(m) if m.contains("cannot run on") => t.skip(&dev, &case, &m),
                        Err(m) => t.fail(&dev, &case, &m),
                    }
                }
            }
        }
    }
    t.finish();
}

/// `Axis::First` of 3-D ranges `[a, b, c]` (b * c columns of a rows) under `columns`,
/// `stripes` and `blocks`, forced and automatic, with odd extents and row counts around the accumulators
/// and the row chunks (1..5, primes; decision 53): exact i64 sums (wrapping, as the device
/// adds) against the host's, starting from each result's initial value.
#[test]
fn first_axis_of_3d_ranges_under_columns_and_stripes() {
    let mut t = Tally::new("segment_plans::first_axis_of_3d_ranges_under_columns_and_stripes");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0x53 + d.index() as u64);
        let mut shapes: Vec<[u64; 3]> = vec![
            [1, 3, 5],
            [2, 3, 4],
            [3, 1, 1],
            [5, 2, 7],
            [53, 1, 3],
            [17, 9, 2],
        ];
        if !d.is_simulator() {
            shapes.extend([[211, 4, 8], [97, 16, 16], [1031, 3, 1], [9, 17, 33]]);
        }
        let plans = [
            None,
            Some(SegmentAlgo::Columns),
            Some(SegmentAlgo::Stripes),
            Some(SegmentAlgo::Blocks),
        ];
        for [a, b, c] in shapes {
            let (n, cols) = (a * b * c, b * c);
            let xs: Vec<i64> = (0..n)
                .map(|_| rng.below(1 << 40) as i64 - (1 << 39))
                .collect();
            let starts: Vec<i64> = (0..cols).map(|_| rng.below(1000) as i64 - 500).collect();
            let want: Vec<i64> = (0..cols)
                .map(|k| {
                    (0..a)
                        .map(|r| xs[(r * cols + k) as usize])
                        .fold(starts[k as usize], i64::wrapping_add)
                })
                .collect();
            let x = q.buffer_from(&xs).unwrap();
            for algo in plans {
                let case = format!(
                    "[{a}, {b}, {c}] {}",
                    algo.map_or("auto".into(), |p| p.to_string())
                );
                let out = q.buffer_from(&starts).unwrap();
                let res = q.parallel_for_reduce_with(
                    Range::new_3d(a, b, c),
                    reduction(&out, Op::Plus).axis(Axis::First),
                    Kernel::new("sum += x[item.linear_id];").arg("x", &x),
                    Options {
                        segment: algo,
                        ..Options::default()
                    },
                );
                match res {
                    Ok(_) if out.to_vec().unwrap() == want => t.pass(&dev),
                    Ok(_) => t.fail(&dev, &case, "sums differ from the host's"),
                    // stripes takes at most a work-group of columns.
                    Err(e) if e.to_string().contains("cannot run on") => {
                        t.skip(&dev, &case, &e.to_string())
                    }
                    Err(e) => t.fail(&dev, &case, &e.to_string()),
                }
            }
        }
    }
    t.finish();
}

/// Per row of `c`: the f32 sum, the max from `starts`, the wrapping i32 sum, the f64 sum (each
/// in index order from the identity) and the index within the row of the first maximum.
#[allow(clippy::type_complexity)]
fn row_folds(
    xs: &[f32],
    ys: &[i32],
    ws: &[f64],
    starts: &[f32],
    c: usize,
) -> (Vec<f32>, Vec<f32>, Vec<i32>, Vec<f64>, Vec<u64>) {
    let rows = starts.len();
    let row = |k: usize| k * c..(k + 1) * c;
    let want_sum: Vec<f32> = (0..rows)
        .map(|k| xs[row(k)].iter().fold(0.0f32, |a, &v| a + v))
        .collect();
    let want_max: Vec<f32> = (0..rows)
        .map(|k| xs[row(k)].iter().fold(starts[k], |a, &v| a.max(v)))
        .collect();
    let want_int: Vec<i32> = (0..rows)
        .map(|k| ys[row(k)].iter().fold(0i32, |a, &v| a.wrapping_add(v)))
        .collect();
    let want_w: Vec<f64> = (0..rows)
        .map(|k| ws[row(k)].iter().fold(0.0f64, |a, &v| a + v))
        .collect();
    let want_arg: Vec<u64> = (0..rows)
        .map(|k| {
            let r = &xs[row(k)];
            (0..c).fold(0, |b, j| if r[j] > r[b] { j } else { b }) as u64
        })
        .collect();
    (want_sum, want_max, want_int, want_w, want_arg)
}

/// `item` with vector loads on uniform rows (decision 62): forced with `Tuning::vec` 1, 2, 4
/// and 8 on every device, rows whose length is or is not a multiple of the width (the width
/// halves until it divides), one row, primes, more rows than a launch step. The body reads an
/// f32, an i32 and an f64 buffer at `[i]` (float, int and double vectors) and the f32 one once
/// more elsewhere. Each row is combined in index order from the identity whatever the width,
/// so every result equals the host's sequential sum exactly (f32 and f64 included), max keeps
/// its initial values, argmax gives the index within the row (ties at the lowest).
#[test]
fn item_vector_loads_on_odd_rows() {
    use clreduce::plan::Tuning;
    let test = "segment_plans::item_vector_loads_on_odd_rows";
    let mut t = Tally::new(test);
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0x62 + d.index() as u64);
        let mut shapes: Vec<(u64, u64)> = vec![(1, 4), (3, 8), (53, 12), (97, 16), (31, 6), (7, 2)];
        shapes.extend([(64, 7), (5, 32), (2, 1)]);
        if !d.is_simulator() {
            shapes.extend([(4099, 4), (1031, 16), (2053, 8), (3001, 2), (17, 40)]);
        }
        for (rows, cols) in shapes {
            let n = (rows * cols) as usize;
            let xs: Vec<f32> = (0..n)
                .map(|_| {
                    (rng.below(1 << 20) as f32 - 524288.0) * 2f32.powi(rng.below(30) as i32 - 40)
                })
                .collect();
            let ys: Vec<i32> = (0..n).map(|_| rng.below(1 << 31) as i32).collect();
            let ws: Vec<f64> = (0..n)
                .map(|_| rng.below(1 << 40) as f64 / 3.0 - 1e11)
                .collect();
            let starts: Vec<f32> = (0..rows).map(|_| rng.below(7) as f32 - 3.0).collect();
            let (want_sum, want_max, want_int, want_w, want_arg) =
                row_folds(&xs, &ys, &ws, &starts, cols as usize);
            let (x, y, w) = (
                q.buffer_from(&xs).unwrap(),
                q.buffer_from(&ys).unwrap(),
                q.buffer_from(&ws).unwrap(),
            );
            for width in [1usize, 2, 4, 8] {
                let case = format!("{rows}x{cols} vec={width}");
                let sum = q.buffer_from(&vec![0.0f32; rows as usize]).unwrap();
                let mx = q.buffer_from(&starts).unwrap();
                let isum = q.buffer_from(&vec![0i32; rows as usize]).unwrap();
                let wsum = q.buffer_from(&vec![0.0f64; rows as usize]).unwrap();
                let (vhi, ihi) = (
                    q.buffer_from(&vec![0.0f32; rows as usize]).unwrap(),
                    q.buffer_from(&vec![0u64; rows as usize]).unwrap(),
                );
                let res = q.parallel_for_reduce_with(
                    Range::new_2d(rows, cols),
                    vec![
                        reduction(&sum, Op::Plus)
                            .axis(Axis::Last)
                            .initialize_to_identity(),
                        reduction(&mx, Op::Maximum).name("mx").axis(Axis::Last),
                        reduction(&isum, Op::Plus)
                            .name("isum")
                            .axis(Axis::Last)
                            .initialize_to_identity(),
                        reduction(&wsum, Op::Plus)
                            .name("wsum")
                            .axis(Axis::Last)
                            .initialize_to_identity(),
                        reduction_argmax(&vhi, &ihi)
                            .name("hi")
                            .axis(Axis::Last)
                            .index_in_segment()
                            .initialize_to_identity(),
                    ],
                    Kernel::new(
                        "sum += x[i]; combine(mx, x[i]); isum += y[i]; wsum += w[i]; \
                         combine(hi, x[ i ], i);",
                    )
                    .arg("x", &x)
                    .arg("y", &y)
                    .arg("w", &w),
                    Options {
                        segment: Some(SegmentAlgo::Item),
                        tuning: Some(Tuning {
                            vec: Some(width),
                            ..Tuning::default()
                        }),
                        ..Options::default()
                    },
                );
                let ev = match res {
                    Ok(ev) => ev,
                    Err(e)
                        if e.to_string().contains("fp64")
                            || e.to_string().contains("cannot run on") =>
                    {
                        t.skip(&dev, &case, &e.to_string());
                        continue;
                    }
                    Err(e) => {
                        t.fail(&dev, &case, &e.to_string());
                        continue;
                    }
                };
                let sp = ev
                    .plan()
                    .and_then(|p| p.segment.clone())
                    .expect("a segment plan");
                let mut expect_vec = width as u64;
                while expect_vec > 1 && cols % expect_vec != 0 {
                    expect_vec /= 2;
                }
                let mut bad = Vec::new();
                if sp.vec != expect_vec || sp.algo != SegmentAlgo::Item {
                    bad.push(format!(
                        "planned {} with vec {}, want item with vec {expect_vec}",
                        sp.algo, sp.vec
                    ));
                }
                let got = (
                    sum.to_vec().unwrap(),
                    mx.to_vec().unwrap(),
                    isum.to_vec().unwrap(),
                );
                let (gw, ga) = (wsum.to_vec().unwrap(), ihi.to_vec().unwrap());
                for k in 0..rows as usize {
                    let g = (
                        got.0[k].to_bits(),
                        got.1[k],
                        got.2[k],
                        gw[k].to_bits(),
                        ga[k],
                    );
                    let want = (
                        want_sum[k].to_bits(),
                        want_max[k],
                        want_int[k],
                        want_w[k].to_bits(),
                        want_arg[k],
                    );
                    if g != want && bad.len() < 4 {
                        bad.push(format!("row {k}: {g:?} want {want:?}"));
                    }
                }
                if bad.is_empty() {
                    t.pass(&dev);
                } else {
                    t.fail(&dev, &case, &bad.join("; "));
                }
            }
        }
    }
    t.finish();
}

/// `blocks` (decision 68) forced on every device: a seeded sample of the (op, type) pairs, two
/// per shape (every pair over runs; all of them on every shape with CLREDUCE_FULL_MATRIX=1),
/// on column counts around the block widths (1, 2, 3, 4, 5, 7, 8, 16, 17, 33, and more blocks
/// than a launch has work-items; 1, 2, 4 and 8 columns several rows per block) and row counts around the row chunks (at least 16 rows each: 15, 16,
/// 17, 64, 65 rows, primes), initial values kept or `initialize_to_identity`. Integers
/// exactly; floats within (rows + 40)·u·Σ|x| + 2u·|ref| of a float64 reference of the column.
#[test]
fn blocks_ops_types_and_chunk_boundaries() {
    let shapes = |d: &clreduce::Device| {
        let mut shapes: Vec<(u64, u64)> = vec![(15, 5), (16, 3), (17, 16), (1, 37), (53, 1)];
        shapes.extend([(33, 17), (97, 2), (45, 4)]);
        if !d.is_simulator() {
            shapes.extend([
                (64, 16),
                (65, 33),
                (1031, 7),
                (4099, 2),
                (3, 65537),
                (1001, 8),
            ]);
        }
        shapes
    };
    let test = "segment_plans::blocks_ops_types_and_chunk_boundaries";
    common::columns::forced_columns_matrix(test, shapes, 0xB10C, SegmentAlgo::Blocks);
}

/// `blocks` with f16 data (read as f32, small multiples of 1/4: every order gives the host's
/// sum exactly) beside an argmax with the row and the global index, and exact f32 sums
/// (`Determinism::Exact`: a block of one column per work-item, decision 68) bit for bit against
/// the host's correctly rounded sum of each column and its initial value, on values of wide
/// exponents; R or C = 1, primes, rows around the chunks.
#[test]
fn blocks_f16_argmax_and_exact_sums() {
    use clreduce::exact::sum_f32;
    use clreduce::{Determinism, Half};
    let mut t = Tally::new("segment_plans::blocks_f16_argmax_and_exact_sums");
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0x68 + d.index() as u64);
        let mut shapes: Vec<(u64, u64)> = vec![(1, 5), (40, 1), (17, 33), (65, 16)];
        if !d.is_simulator() {
            shapes.extend([(1031, 17), (257, 64)]);
        }
        for (rows, cols) in shapes {
            let (n, c) = ((rows * cols) as usize, cols as usize);
            let hs: Vec<f32> = (0..n)
                .map(|_| (rng.below(65) as f32 - 32.0) / 4.0)
                .collect();
            let xs: Vec<f32> = (0..n)
                .map(|_| {
                    (rng.below(1 << 20) as f32 - 524288.0) * 2f32.powi(rng.below(40) as i32 - 30)
                })
                .collect();
            let starts: Vec<f32> = (0..c).map(|_| rng.below(9) as f32 - 4.0).collect();
            let h = q
                .buffer_from(&hs.iter().map(|&v| Half::from_f32(v)).collect::<Vec<_>>())
                .unwrap();
            let x = q.buffer_from(&xs).unwrap();
            // f16 sums and an argmax (index within the column, then global).
            let case = format!("{rows}x{cols} f16 sum, argmax");
            let sum = q.buffer_from(&starts).unwrap();
            let (vhi, ihi) = (
                q.buffer_from(&vec![0.0f32; c]).unwrap(),
                q.buffer_from(&vec![0u64; c]).unwrap(),
            );
            let (vg, ig) = (
                q.buffer_from(&vec![0.0f32; c]).unwrap(),
                q.buffer_from(&vec![0u64; c]).unwrap(),
            );
            let res = q.parallel_for_reduce_with(
                Range::new_2d(rows, cols),
                vec![
                    reduction(&sum, Op::Plus).axis(Axis::First),
                    reduction_argmax(&vhi, &ihi)
                        .name("hi")
                        .axis(Axis::First)
                        .index_in_segment()
                        .initialize_to_identity(),
                    reduction_argmax(&vg, &ig)
                        .name("hg")
                        .axis(Axis::First)
                        .initialize_to_identity(),
                ],
                Kernel::new("sum += h[i]; combine(hi, x[i], i); combine(hg, x[i], i);")
                    .arg("h", &h)
                    .arg("x", &x),
                Options {
                    segment: Some(SegmentAlgo::Blocks),
                    ..Options::default()
                },
            );
            match res {
                Ok(_) => {
                    let (gs, gv, gi, gg) = (
                        sum.to_vec().unwrap(),
                        vhi.to_vec().unwrap(),
                        ihi.to_vec().unwrap(),
                        ig.to_vec().unwrap(),
                    );
                    let mut bad = Vec::new();
                    for k in 0..c {
                        let s = (0..rows as usize)
                            .fold(starts[k] as f64, |a, r| a + hs[r * c + k] as f64);
                        let (mut best, mut at) = (f32::NEG_INFINITY, u64::MAX);
                        for r in 0..rows as usize {
                            if xs[r * c + k] > best {
                                (best, at) = (xs[r * c + k], r as u64);
                            }
                        }
                        let got = (gs[k] as f64, gv[k], gi[k], gg[k]);
                        let want = (s, best, at, at * cols + k as u64);
                        if got != want && bad.len() < 4 {
                            bad.push(format!("column {k}: {got:?} want {want:?}"));
                        }
                    }
                    if bad.is_empty() {
                        t.pass(&dev);
                    } else {
                        t.fail(&dev, &case, &bad.join("; "));
                    }
                }
                Err(e) if e.to_string().contains("cannot run on") => {
                    t.skip_device(&dev, &case, &e.to_string())
                }
                Err(e) => t.fail(&dev, &case, &e.to_string()),
            }
            // Exact f32 sums, initial values kept.
            let case = format!("{rows}x{cols} exact f32 sum");
            let out = q.buffer_from(&starts).unwrap();
            let res = q.parallel_for_reduce_with(
                Range::new_2d(rows, cols),
                reduction(&out, Op::Plus).axis(Axis::First),
                Kernel::new("sum += x[i];").arg("x", &x),
                Options {
                    segment: Some(SegmentAlgo::Blocks),
                    determinism: Determinism::Exact,
                    ..Options::default()
                },
            );
            match res {
                Ok(ev) => {
                    let got = out.to_vec().unwrap();
                    let unroll = ev.plan().and_then(|p| p.segment.as_ref()).map(|s| s.unroll);
                    let mut bad = Vec::new();
                    if unroll != Some(1) {
                        bad.push(format!("exact blocks of {unroll:?} columns, want 1"));
                    }
                    for k in 0..c {
                        let mut vals: Vec<f32> =
                            (0..rows as usize).map(|r| xs[r * c + k]).collect();
                        vals.push(starts[k]);
                        let want = sum_f32(&vals);
                        if got[k].to_bits() != want.to_bits() && bad.len() < 4 {
                            bad.push(format!("column {k}: {} want {want}", got[k]));
                        }
                    }
                    if bad.is_empty() {
                        t.pass(&dev);
                    } else {
                        t.fail(&dev, &case, &bad.join("; "));
                    }
                }
                Err(e) if e.to_string().contains("cannot run on") => {
                    t.skip_device(&dev, &case, &e.to_string())
                }
                Err(e) => t.fail(&dev, &case, &e.to_string()),
            }
        }
    }
    t.finish();
}

/// `Queue::explain_launch` gives the plan the same launch then runs (`ReduceEvent::plan`),
/// the body's reads at `[i]` included: columns (whose block width follows the bytes read),
/// rows of 16 (vector loads), CSR segments of mean 16 (the register scan kernel on NVIDIA)
/// and a span idiom `i / C`, with a sum and an argmax in one launch, on every device.
#[test]
fn explain_launch_is_the_plan_that_runs() {
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let mut rng = Rng(0xE7A1 ^ d.index() as u64);
        let n = 257 * 96;
        let xs: Vec<f32> = (0..n).map(|_| rng.below(64) as f32).collect();
        let x = q.buffer_from(&xs).unwrap();
        let off = clreduce::check::ragged::ragged_offsets(n as u64, 16, rng.below(1000));
        let offsets = q.buffer_from(&off).unwrap();
        type Case<'a> = (
            &'static str,
            Range,
            u64,
            Box<dyn Fn(clreduce::Reduction) -> clreduce::Reduction + 'a>,
        );
        let cases: Vec<Case> = vec![
            (
                "columns 257 x 96",
                Range::new_2d(257, 96),
                96,
                Box::new(|r| r.axis(Axis::First)),
            ),
            (
                "rows 1542 x 16",
                Range::new_2d(1542, 16),
                1542,
                Box::new(|r| r.axis(Axis::Last)),
            ),
            (
                "CSR mean 16",
                Range::new(*off.last().unwrap()),
                off.len() as u64 - 1,
                Box::new(|r| r.segments(clreduce::Segments::offsets(&offsets))),
            ),
        ];
        for (what, range, results, seg) in &cases {
            let sum = q.buffer::<f32>(*results as usize).unwrap();
            let (mx, ix) = (
                q.buffer::<f32>(*results as usize).unwrap(),
                q.buffer::<u64>(*results as usize).unwrap(),
            );
            let reds = || {
                vec![
                    seg(reduction(&sum, Op::Plus)),
                    seg(reduction_argmax(&mx, &ix)).initialize_to_identity(),
                ]
            };
            let body = "sum += x[i]; combine(sum1, x[i], i);";
            let k = || Kernel::new(body).arg("x", &x);
            let said = q
                .explain_launch(*range, reds(), k(), Options::default())
                .unwrap();
            let ev = q
                .parallel_for_reduce_with(*range, reds(), k(), Options::default())
                .unwrap();
            ev.wait().unwrap();
            assert_eq!(Some(&said), ev.plan(), "{}: {what}", short(d));
        }
        // The span idiom: a span variable whose subscript is i / C, planned as segments.
        let bins = q.buffer::<f32>(257).unwrap();
        let k = || Kernel::new("hist[i / 96] += x[i];").arg("x", &x);
        let red = || clreduce::reduction_span(&bins, 257, Op::Plus).name("hist");
        let said = q
            .explain_launch(Range::new(n as u64), red(), k(), Options::default())
            .unwrap();
        assert!(
            said.segment.is_some(),
            "{}: the span idiom is not planned as segments",
            short(d)
        );
        let ev = q
            .parallel_for_reduce_with(Range::new(n as u64), red(), k(), Options::default())
            .unwrap();
        ev.wait().unwrap();
        assert_eq!(Some(&said), ev.plan(), "{}: span idiom", short(d));
    }
}
