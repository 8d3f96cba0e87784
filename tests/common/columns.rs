//! One case of a forced column plan (`Axis::First`): an R x C array of the op's seeded random
//! input, one variable per column with its own initial value (or `initialize_to_identity`),
//! the plan forced, every column checked against the host's reference of that column
//! (integers exactly, floats within (rows + 40)·u·Σ|x| + 2u·|ref|). Shared by the `blocks`
//! (segment_plans.rs) and `panels` (segment_cols.rs) tests.

use super::Outcome;
use clreduce::check::reference::{check, random_input, reference};
use clreduce::{
    reduction, Axis, DynBuffer, ElemType, HostVec, Kernel, Op, Options, Queue, Range, SegmentAlgo,
    Value,
};

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
