//! The peers of `clreduce bench --peers`: PyOpenCL's ReductionKernel (f32 sum,
//! benches/peers/pyopencl_reduction.py) on the CPU devices, torch and cupy
//! (benches/peers/torch_cupy_sum.py) on an NVIDIA GPU, and for the segmented cases
//! torch.sum(dim) / cupy.sum(axis) / segment_reduce (benches/peers/torch_cupy_segment.py), run
//! after the sweep over the sizes it measured, and attached to the points they stand beside. The native rayon peer, which runs
//! interleaved with the sweep, is in native.rs; starting Python in python.rs; where the
//! scripts are, in locate.rs.

pub mod locate;
pub mod native;
pub mod python;

use super::results::{peer_case, same_device, DevInfo, PeerPoint, Point};
use clreduce::cases::{Case, Shape};
use clreduce::Op;
use std::path::Path;

/// What the sweep measured, for the peers to run beside.
pub struct Sweep<'a> {
    pub devs: &'a [DevInfo],
    pub cases: &'a [Case],
    pub all_sizes: &'a [u64],
    pub points: &'a [Point],
    pub reps: usize,
    pub warmup: usize,
}

impl Sweep<'_> {
    /// The sizes at which `case` has a point on a device `pick` accepts.
    fn sizes_of(&self, case: &str, pick: &dyn Fn(&DevInfo) -> bool) -> Vec<u64> {
        self.all_sizes
            .iter()
            .copied()
            .filter(|n| {
                self.points.iter().any(|p| {
                    p.case == case
                        && p.n == *n
                        && self
                            .devs
                            .iter()
                            .any(|d| d.index == p.device_index && pick(d))
                })
            })
            .collect()
    }

    /// `--sizes`, `--reps` and `--warmup` for a peer script.
    fn args(&self, sizes: &[u64]) -> Vec<String> {
        vec![
            "--sizes".to_string(),
            sizes
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(","),
            "--reps".into(),
            self.reps.to_string(),
            "--warmup".into(),
            self.warmup.to_string(),
        ]
    }
}

/// Runs every peer that applies; returns their results and a note for each that was skipped
/// or failed (also printed).
/// `dir` is the peers' folder ([`locate::find_here`]).
pub fn run(root: &Path, dir: &Path, s: &Sweep) -> (Vec<PeerPoint>, Vec<String>) {
    let mut peers = Vec::new();
    let mut notes = Vec::new();
    run_pyopencl(root, dir, s, &mut peers, &mut notes);
    run_torch_cupy(root, dir, s, &mut peers, &mut notes);
    run_torch_cupy_segment(root, dir, s, &mut peers, &mut notes);
    (peers, notes)
}

/// PyOpenCL's ReductionKernel (f32 sum) on the CPU devices.
fn run_pyopencl(
    root: &Path,
    dir: &Path,
    s: &Sweep,
    peers: &mut Vec<PeerPoint>,
    notes: &mut Vec<String>,
) {
    let cpu_sizes = s.sizes_of("f32-sum", &|d| d.kind == "cpu");
    let why = if cpu_sizes.is_empty() {
        Err("no f32-sum point on a CPU device".to_string())
    } else {
        python::pyopencl_available(root)
    };
    if let Err(w) = why {
        outln!("peers: PyOpenCL skipped: {w}");
        notes.push(format!("pyopencl: {w}"));
        return;
    }
    let mut args = s.args(&cpu_sizes);
    for d in s.devs.iter().filter(|d| d.kind == "cpu") {
        args.push("--device".into());
        args.push(d.label.clone());
    }
    let script = dir.join("pyopencl_reduction.py");
    errln!("bench: running {}", script.display());
    match python::run_jsonl::<PeerPoint>(root, &script.to_string_lossy(), &args) {
        Ok(v) => peers.extend(v),
        Err(e) => {
            outln!("peers: PyOpenCL failed: {e}");
            notes.push(format!("pyopencl: {e}"));
        }
    }
}

/// torch and cupy on an NVIDIA GPU, for the cases they have a peer for.
fn run_torch_cupy(
    root: &Path,
    dir: &Path,
    s: &Sweep,
    peers: &mut Vec<PeerPoint>,
    notes: &mut Vec<String>,
) {
    let mut gpu_sizes = Vec::new();
    let mut gpu_cases = Vec::new();
    for c in s.cases.iter().filter(|c| has_gpu_peer(c)) {
        let sizes = s.sizes_of(&c.name, &|d| d.nvidia);
        if !sizes.is_empty() {
            gpu_sizes.extend(sizes);
            gpu_cases.push(c.name.clone());
        }
    }
    gpu_sizes.sort_unstable();
    gpu_sizes.dedup();
    if gpu_sizes.is_empty() {
        return;
    }
    let mut args = s.args(&gpu_sizes);
    // The script's own order: sizes, cases, reps, warmup.
    args.splice(2..2, ["--cases".to_string(), gpu_cases.join(",")]);
    let script = dir.join("torch_cupy_sum.py");
    errln!("bench: running {}", script.display());
    match python::run_jsonl::<PeerPoint>(root, &script.to_string_lossy(), &args) {
        Ok(v) if v.is_empty() => {
            outln!("peers: torch/cupy gave no result (see the notes above)");
            notes.push("torch/cupy: no result".into());
        }
        Ok(v) => peers.extend(v),
        Err(e) => {
            outln!("peers: torch/cupy failed: {e}");
            notes.push(format!("torch/cupy: {e}"));
        }
    }
}

/// torch and cupy per segment on an NVIDIA GPU: one run of the script per element count (rows
/// and columns at their R x C, ragged cases at each size), for the cases it has.
fn run_torch_cupy_segment(
    root: &Path,
    dir: &Path,
    s: &Sweep,
    peers: &mut Vec<PeerPoint>,
    notes: &mut Vec<String>,
) {
    let mut by_n: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
    for c in s.cases.iter().filter(|c| has_segment_peer(c)) {
        for p in s.points.iter().filter(|p| p.case == c.name) {
            let nvidia = s.devs.iter().any(|d| d.index == p.device_index && d.nvidia);
            let at = by_n.entry(p.n).or_default();
            if nvidia && !at.contains(&c.name) {
                at.push(c.name.clone());
            }
        }
    }
    by_n.retain(|_, cases| !cases.is_empty());
    let script = dir.join("torch_cupy_segment.py");
    for (n, cases) in by_n {
        let args = vec![
            "--n".to_string(),
            n.to_string(),
            "--cases".into(),
            cases.join(","),
            "--reps".into(),
            s.reps.to_string(),
            "--warmup".into(),
            s.warmup.to_string(),
        ];
        errln!("bench: running {} --n {n}", script.display());
        match python::run_jsonl::<PeerPoint>(root, &script.to_string_lossy(), &args) {
            Ok(v) if v.is_empty() => {
                outln!("peers: torch/cupy per segment gave no result at n = {n}");
                notes.push(format!("torch/cupy segment n={n}: no result"));
            }
            Ok(v) => peers.extend(v),
            Err(e) => {
                outln!("peers: torch/cupy per segment failed: {e}");
                notes.push(format!("torch/cupy segment: {e}"));
            }
        }
    }
}

/// Whether benches/peers/torch_cupy_segment.py has a peer for the case: sums per row, column
/// or CSR segment of f32, f64 or i32.
fn has_segment_peer(c: &Case) -> bool {
    c.layout.is_segmented()
        && c.shape == Shape::Scalars
        && c.vars.len() == 1
        && c.vars[0].0 == Op::Plus
        && c.stored == c.ty
        && matches!(c.ty.name(), "f32" | "f64" | "i32")
}

/// Whether benches/peers/torch_cupy_sum.py has a peer for the case.
fn has_gpu_peer(c: &Case) -> bool {
    matches!(
        c.name.as_str(),
        "f32-sum" | "f32-sum-min-max" | "f32-argmin"
    ) || matches!(c.shape, Shape::Span(_))
}

/// Puts each point's own peer (pyopencl for f32-sum on a CPU; torch on an NVIDIA GPU) into
/// the point: its name, GB/s and clreduce's ratio to it.
pub fn attach(points: &mut [Point], devs: &[DevInfo], peers: &[PeerPoint]) {
    for p in points.iter_mut() {
        let info = devs
            .iter()
            .find(|d| d.index == p.device_index)
            .expect("a point's device");
        let want: Option<(&str, &str)> = match (p.case.as_str(), info.kind.as_str()) {
            ("f32-sum", "cpu") => Some(("pyopencl", "")),
            ("f32-sum", _) if info.nvidia => Some(("torch", "sum")),
            ("f32-sum-min-max", _) if info.nvidia => Some(("torch", "sum,min,max")),
            ("f32-argmin", _) if info.nvidia => Some(("torch", "argmin")),
            (c, _) if info.nvidia && c.starts_with("u32-hist") => Some(("torch", "bincount")),
            (c, _) if info.nvidia && c.starts_with("f32-hist") && !c.ends_with("-exact") => {
                Some(("torch", "index_add_"))
            }
            _ => None,
        };
        let segmented = Case::parse(&p.case).is_ok_and(|c| c.layout.is_segmented());
        if segmented && info.nvidia {
            attach_fastest(p, peers);
            continue;
        }
        let Some((lib, op)) = want else { continue };
        let found = peers.iter().find(|x| {
            x.lib == lib
                && x.n == p.n
                && peer_case(x) == p.case
                && (op.is_empty() || x.op.as_deref() == Some(op))
                && (same_device(&x.device, &p.device)
                    || (info.nvidia && p.device.ends_with(x.device.trim())))
        });
        if let Some(peer) = found {
            p.peer = Some(if op.is_empty() {
                lib.to_string()
            } else {
                format!("{lib} {op}")
            });
            p.peer_gbps = Some(peer.gbps);
            p.peer_ratio = Some(p.gbps / peer.gbps.max(1e-12));
        }
    }
}

/// A segmented point's peer: the fastest torch or cupy call for its case and size.
fn attach_fastest(p: &mut Point, peers: &[PeerPoint]) {
    let best = peers
        .iter()
        .filter(|x| {
            matches!(x.lib.as_str(), "torch" | "cupy")
                && x.n == p.n
                && peer_case(x) == p.case
                && p.device.ends_with(x.device.trim())
        })
        .max_by(|a, b| a.gbps.total_cmp(&b.gbps));
    if let Some(x) = best {
        p.peer = Some(format!("{} {}", x.lib, x.op.as_deref().unwrap_or("")));
        p.peer_gbps = Some(x.gbps);
        p.peer_ratio = Some(p.gbps / x.gbps.max(1e-12));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_cases() {
        let p = |case: Option<&str>, op: Option<&str>| PeerPoint {
            lib: "torch".into(),
            case: case.map(String::from),
            op: op.map(String::from),
            device: "X".into(),
            n: 1,
            gbps: 1.0,
            device_time_us: 1.0,
        };
        assert_eq!(peer_case(&p(None, None)), "f32-sum");
        assert_eq!(peer_case(&p(None, Some("sum+aminmax"))), "f32-sum-min-max");
        assert_eq!(peer_case(&p(None, Some("argmin"))), "f32-argmin");
        assert_eq!(
            peer_case(&p(Some("u32-hist1024"), Some("bincount"))),
            "u32-hist1024"
        );
        assert!(has_gpu_peer(&Case::parse("u32-hist256").unwrap()));
        assert!(!has_gpu_peer(&Case::parse("f64-sum").unwrap()));
        for (c, want) in [
            ("f32-rows-16384x16384", true),
            ("i32-cols-4x4", true),
            ("f64-ragged-16", true),
            ("f32-max-rows-4x4", false),
            ("f16-rows-4x4", false),
            ("u32-ragged-16", false),
            ("f32-sum", false),
        ] {
            assert_eq!(has_segment_peer(&Case::parse(c).unwrap()), want, "{c}");
        }
    }
}
