//! `clreduce bench --ladder`: the classic reduction optimization ladder
//! (benches/ladder/ladder.py, PyOpenCL) at the benched sizes, printed beside clreduce's auto
//! plan by report.rs.

use super::peers::python;
use super::results::{DevInfo, LadderPoint};
use std::path::Path;

/// Runs the ladder on `devs` (all of PyOpenCL's devices unless `--device` named some); prints
/// why not where it cannot run.
pub fn run(
    root: &Path,
    devs: &[DevInfo],
    device_given: bool,
    sizes: &[u64],
    reps: usize,
) -> Vec<LadderPoint> {
    if let Err(w) = python::pyopencl_available(root) {
        outln!("ladder: skipped: {w}");
        return Vec::new();
    }
    let mut args = vec![
        "--sizes".to_string(),
        sizes
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(","),
        "--reps".into(),
        reps.to_string(),
        "--jsonl".into(),
    ];
    if device_given {
        for d in devs {
            args.push("--device".into());
            args.push(d.label.clone());
        }
    }
    errln!("bench: running benches/ladder/ladder.py");
    match python::run_jsonl::<LadderPoint>(root, "benches/ladder/ladder.py", &args) {
        Ok(v) => v,
        Err(e) => {
            outln!("ladder: failed: {e}");
            Vec::new()
        }
    }
}
