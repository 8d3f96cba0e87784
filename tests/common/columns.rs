//! One case of a forced column plan (`Axis::First`): an R x C array of the op's seeded random
//! input, one variable per column with its own initial value (or `initialize_to_identity`),
//! the plan forced, every column checked against the host's reference of that column
//! (integers exactly, floats within (rows + 40)·u·Σ|x| + 2u·|ref|); and the matrix that runs
//! it on every device. Shared by the `blocks` (segment_plans.rs) and `panels`
//! (segment_cols.rs) tests.

use super::{
    announce_sample, full_matrix, queues, sample_hash, short, sim_lock, valid_pairs, Outcome, Tally,
};
use clreduce::check::reference::{check, random_input, reference};
use clreduce::{
    reduction, Axis, Device, DynBuffer, ElemType, HostVec, Kernel, Op, Options, Queue, Range,
    SegmentAlgo, Value,
};

/// `algo` forced on every device over `shapes(device)`: a seeded sample of the (op, type)
/// pairs, two per shape (every pair over runs; all of them on every shape with
/// CLREDUCE_FULL_MATRIX=1), initial values kept or `initialize_to_identity` alternately; the
/// case's seed `seed + 100·shape + pair`.
pub fn forced_columns_matrix(
    test: &str,
    shapes: impl Fn(&Device) -> Vec<(u64, u64)>,
    seed: u64,
    algo: SegmentAlgo,
) {
    announce_sample(test);
    let start = (sample_hash(test) % 1_000_000) as usize;
    let pairs = valid_pairs();
    let mut t = Tally::new(test);
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        for (j, &(rows, cols)) in shapes(d).iter().enumerate() {
            let taken: Vec<usize> = if full_matrix() {
                (0..pairs.len()).collect()
            } else {
                (0..2).map(|m| (start + 2 * j + m) % pairs.len()).collect()
            };
            for (m, p) in taken.into_iter().enumerate() {
                let (op, ty) = pairs[p];
                let init = (j + m) % 2 == 1;
                let case = format!("{rows}x{cols} {op} {ty}{}", if init { " init" } else { "" });
                let seed = seed + (j * 100 + p) as u64;
                match forced_columns(q, (rows, cols), (op, ty, init), seed, algo) {
                    Outcome::Pass => t.pass(&dev),
                    Outcome::Skip(why) => t.skip_device(&dev, &case, &why),
                    Outcome::Fail(m) => t.fail(&dev, &case, &m),
                }
            }
        }
    }
    t.finish();
}

/// Runs the case on `q`: `Skip` where the device cannot run the plan, `Fail` with up to four
/// columns' messages.
pub fn forced_columns(
    q: &Queue,
    (rows, cols): (u64, u64),
    (op, ty, init): (Op, ElemType, bool),
    seed: u64,
    algo: SegmentAlgo,
) -> Outcome {
    let n = (rows * cols) as usize;
    let data = random_input(op, ty, n, seed);
    let inits: Vec<Value> = (0..cols)
        .map(|k| super::initial(op, ty, seed + k))
        .collect();
    let (x, out) = (
        DynBuffer::upload(q, &data).unwrap(),
        DynBuffer::upload(q, &HostVec::from_values(ty, &inits).unwrap()).unwrap(),
    );
    let mut red = reduction(&out, op).axis(Axis::First);
    if init {
        red = red.initialize_to_identity();
    }
    let res = q.parallel_for_reduce_with(
        Range::new_2d(rows, cols),
        red,
        Kernel::new(super::body(op, ty)).arg("x", &x),
        Options {
            segment: Some(algo),
            ..Options::default()
        },
    );
    let ev = match res {
        Ok(ev) => ev,
        Err(e) if e.to_string().contains("cannot run on") => return Outcome::Skip(e.to_string()),
        Err(e) => return Outcome::Fail(format!("launch: {e}")),
    };
    let planned = ev.plan().and_then(|p| p.segment.as_ref()).map(|s| s.algo);
    if planned != Some(algo) {
        return Outcome::Fail(format!("forced {algo}, planned {planned:?}"));
    }
    let mut bad = Vec::new();
    for (k, &start) in inits.iter().enumerate() {
        let col: Vec<Value> = (0..rows as usize)
            .map(|r| data.value(r * cols as usize + k))
            .collect();
        let col = HostVec::from_values(ty, &col).unwrap();
        let rf = reference(op, &col, (!init).then_some(start));
        let g = out.value(k).unwrap();
        if let Err(m) = check(op, ty, g.to_f64(), g.as_int(), &rf, rows as f64 + 40.0) {
            if bad.len() < 4 {
                bad.push(format!("column {k}: {m}"));
            }
        }
    }
    match bad.is_empty() {
        true => Outcome::Pass,
        false => Outcome::Fail(bad.join("; ")),
    }
}
