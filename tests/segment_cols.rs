//! Column sums (`Axis::First`) under `panels` (decision 91), forced on every device and by the
//! rules on CPUs: a work-item walks a chunk of rows for a panel of 4 KiB of contiguous columns
//! (or of several whole rows where a row is shorter), its partial column sums in private
//! memory, the chunks combined by a second pass. Shapes around the panel widths (1024 f32, 512
//! f64 and 64-bit integers, 2048 f16): one row or column, primes, a panel wider than the array,
//! several whole rows per panel row with a tail of rows, a last panel narrower than the rest,
//! row chunks with and without a second pass. Fresh seeded inputs per case.

use crate::common;

use clreduce::caps::DeviceKind;
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, Axis, Kernel, Op, Options, Queue, Range,
    SegmentAlgo,
};
use common::rng::Rng;
use common::{announce_sample, queues, sample_hash, short, sim_lock, Tally};

/// (rows, columns) for a device: small ones everywhere (Oclgrind too), larger ones elsewhere.
fn shapes(simulator: bool) -> Vec<(u64, u64)> {
    let mut v = vec![
        (1, 1),
        (17, 1),
        (1, 37),
        (33, 5),
        (97, 3),
        (40, 300),
        (5, 1500),
        (19, 1024),
        (3, 1025),
    ];
    if !simulator {
        v.extend([
            (4099, 2),
            (1031, 7),
            (10007, 13),
            (300, 2053),
            (65, 4096),
            (513, 513),
            (1000, 512),
            (2, 65537),
        ]);
    }
    v
}

/// `panels` forced on every device: a seeded sample of the (op, type) pairs, two per shape
/// (every pair over runs; all of them on every shape with CLREDUCE_FULL_MATRIX=1), initial
/// values kept or `initialize_to_identity`. Integers exactly; floats within (rows + 40)·u·Σ|x|
/// + 2u·|ref| of a float64 reference of the column.
#[test]
fn panels_ops_types_and_panel_boundaries() {
    let test = "segment_cols::panels_ops_types_and_panel_boundaries";
    let seed = 0x9A4E + sample_hash(test) % 997;
    let shapes = |d: &clreduce::Device| shapes(d.is_simulator());
    common::columns::forced_columns_matrix(test, shapes, seed, SegmentAlgo::Panels);
}

/// What the host expects of one column: sum, max from `start`, argmin (global index) and
/// argmax (row); the lowest index wins a tie.
fn expect(xs: &[f32], rows: usize, cols: usize, k: usize, start: f32) -> [f64; 6] {
    let mut sum = 0.0f32;
    let mut mx = start;
    let (mut lo, mut hi) = ((f32::INFINITY, u64::MAX), (f32::NEG_INFINITY, u64::MAX));
    for r in 0..rows {
        let i = r * cols + k;
        let v = xs[i];
        sum += v;
        mx = mx.max(v);
        if v < lo.0 {
            lo = (v, i as u64);
        }
        if v > hi.0 {
            hi = (v, r as u64);
        }
    }
    [
        sum as f64,
        mx as f64,
        lo.0 as f64,
        lo.1 as f64,
        hi.0 as f64,
        hi.1 as f64,
    ]
}

/// One launch of four variables over the columns of `rows x cols` (a sum, a max keeping its
/// initial values, argmin with global indices, argmax with the row), under `algo` or the
/// rules, checked exactly against the host (small integers: exact f32 sums in any order, few
/// distinct values: ties), run twice for the same bits. The plan that ran is returned.
fn four_variables(
    q: &Queue,
    (rows, cols): (u64, u64),
    algo: Option<SegmentAlgo>,
    rng: &mut Rng,
) -> Result<clreduce::plan::SegmentPlan, String> {
    let n = (rows * cols) as usize;
    let xs: Vec<f32> = (0..n).map(|_| rng.below(9) as f32 - 4.0).collect();
    let c = cols as usize;
    let starts: Vec<f32> = (0..c).map(|_| rng.below(7) as f32 - 3.0).collect();
    let x = q.buffer_from(&xs).unwrap();
    let sum = q.buffer_from(&vec![0.0f32; c]).unwrap();
    let mx = q.buffer_from(&starts).unwrap();
    let (vmin, imin) = (
        q.buffer_from(&vec![0.0f32; c]).unwrap(),
        q.buffer_from(&vec![0u64; c]).unwrap(),
    );
    let (vmax, imax) = (
        q.buffer_from(&vec![0.0f32; c]).unwrap(),
        q.buffer_from(&vec![0u64; c]).unwrap(),
    );
    let launch = || {
        q.parallel_for_reduce_with(
            Range::new_2d(rows, cols),
            vec![
                reduction(&sum, Op::Plus)
                    .axis(Axis::First)
                    .initialize_to_identity(),
                reduction(&mx, Op::Maximum).name("mx").axis(Axis::First),
                reduction_argmin(&vmin, &imin)
                    .name("lo")
                    .axis(Axis::First)
                    .initialize_to_identity(),
                reduction_argmax(&vmax, &imax)
                    .name("hi")
                    .axis(Axis::First)
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
        let want = expect(&xs, rows as usize, c, k, start);
        let g = [
            got.0[k] as f64,
            got.1[k] as f64,
            got.2[k] as f64,
            got.3[k] as f64,
            got.4[k] as f64,
            got.5[k] as f64,
        ];
        if g != want {
            bad.push(format!("column {k}: {g:?} want {want:?}"));
        }
    }
    launch().map_err(|e| format!("second launch: {e}"))?;
    if sum.to_vec().unwrap() != got.0 || imax.to_vec().unwrap() != got.5 {
        bad.push("a second run of the same plan gave other results".into());
    }
    if bad.is_empty() {
        Ok(plan)
    } else {
        Err(format!(
            "under {}: {}",
            plan.algo,
            bad[..bad.len().min(4)].join("; ")
        ))
    }
}

/// Four variables in one launch under `panels` forced and under the rules on every device:
/// exact results, the same bits twice; on CPUs the rules' plan is `panels` (decision 91) in
/// work-groups of one with 16 rows per step.
#[test]
fn panels_four_variables_and_the_cpu_rule() {
    let test = "segment_cols::panels_four_variables_and_the_cpu_rule";
    announce_sample(test);
    let mut rng = Rng(sample_hash(test));
    let mut t = Tally::new(test);
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let cpu = q.caps().kind != DeviceKind::Gpu;
        for (rows, cols) in shapes(d.is_simulator()) {
            for algo in [Some(SegmentAlgo::Panels), None] {
                let case = format!("{rows}x{cols} {algo:?}");
                match four_variables(q, (rows, cols), algo, &mut rng) {
                    Ok(p) if (algo.is_some() || cpu) && p.algo != SegmentAlgo::Panels => {
                        t.fail(&dev, &case, &format!("planned {}: {}", p.algo, p.reason));
                    }
                    Ok(p) if cpu && p.unroll != 16 => {
                        t.fail(&dev, &case, &format!("{} rows per step, want 16", p.unroll));
                    }
                    Ok(_) => t.pass(&dev),
                    Err(e) => t.fail(&dev, &case, &e),
                }
            }
        }
    }
    t.finish();
}
