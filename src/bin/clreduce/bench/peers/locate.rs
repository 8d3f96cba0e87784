//! Where `clreduce bench --peers` finds its Python peer scripts (issue 29): `--peers-dir DIR`
//! when given (and nowhere else), else the first of `peers/` and `benches/peers/` next to the
//! binary (`scripts/gpu.sh build` puts them in `.gpu/peers/` beside `.gpu/clreduce`), the working
//! directory's `benches/peers/`, and the source tree the binary was built from (`cargo run`).
//! A folder counts when it holds at least one peer script; when none does, the error lists every
//! folder looked in and why it did not count.

use std::path::{Path, PathBuf};

/// The peer scripts: PyOpenCL on CPUs, torch/cupy on NVIDIA GPUs.
pub const SCRIPTS: [&str; 2] = ["pyopencl_reduction.py", "torch_cupy_sum.py"];

/// The folders tried, in order: only `explicit` when given.
pub fn candidates(
    explicit: Option<&Path>,
    exe: Option<&Path>,
    cwd: &Path,
    build: &Path,
) -> Vec<PathBuf> {
    if let Some(d) = explicit {
        return vec![d.to_path_buf()];
    }
    let mut v = Vec::new();
    if let Some(dir) = exe.and_then(Path::parent) {
        v.push(dir.join("peers"));
        v.push(dir.join("benches").join("peers"));
    }
    v.push(cwd.join("benches").join("peers"));
    v.push(build.join("benches").join("peers"));
    v.dedup();
    v
}

/// The first candidate holding a peer script, or a message naming every folder looked in.
pub fn find(
    explicit: Option<&Path>,
    exe: Option<&Path>,
    cwd: &Path,
    build: &Path,
) -> Result<PathBuf, String> {
    let mut looked = Vec::new();
    for d in candidates(explicit, exe, cwd, build) {
        if !d.is_dir() {
            looked.push(format!("{} (no such folder)", d.display()));
        } else if SCRIPTS.iter().any(|s| d.join(s).is_file()) {
            return Ok(d);
        } else {
            looked.push(format!("{} (no peer script in it)", d.display()));
        }
    }
    Err(format!(
        "--peers: no peer scripts ({}) found; looked in: {}; copy benches/peers/ next to the binary or give --peers-dir DIR",
        SCRIPTS.join(", "),
        looked.join("; ")
    ))
}

/// [`find`] for this process: `--peers-dir`, the running binary, the working directory and
/// the build's source tree.
pub fn find_here(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().ok();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    find(
        explicit,
        exe.as_deref(),
        &cwd,
        Path::new(env!("CARGO_MANIFEST_DIR")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the temp dir for one case.
    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("clreduce-peers-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn next_to_the_binary_then_the_working_directory_then_the_build() {
        let root = tmp("order");
        let (bin, cwd, build) = (root.join("bin"), root.join("cwd"), root.join("build"));
        for d in [&bin, &cwd, &build] {
            std::fs::create_dir_all(d).unwrap();
        }
        let exe = bin.join("clreduce");
        let none = find(None, Some(&exe), &cwd, &build).unwrap_err();
        for d in [
            bin.join("peers"),
            cwd.join("benches/peers"),
            build.join("benches/peers"),
        ] {
            assert!(none.contains(&d.display().to_string()), "{none}");
        }
        assert!(none.contains("no such folder"), "{none}");
        // The build's tree holds them: found there.
        std::fs::create_dir_all(build.join("benches/peers")).unwrap();
        std::fs::write(build.join("benches/peers/torch_cupy_sum.py"), "").unwrap();
        assert_eq!(
            find(None, Some(&exe), &cwd, &build),
            Ok(build.join("benches/peers"))
        );
        // The working directory comes before the build; an empty folder does not count.
        std::fs::create_dir_all(cwd.join("benches/peers")).unwrap();
        assert_eq!(
            find(None, Some(&exe), &cwd, &build),
            Ok(build.join("benches/peers"))
        );
        std::fs::write(cwd.join("benches/peers/pyopencl_reduction.py"), "").unwrap();
        assert_eq!(
            find(None, Some(&exe), &cwd, &build),
            Ok(cwd.join("benches/peers"))
        );
        // Next to the binary comes first.
        std::fs::create_dir_all(bin.join("peers")).unwrap();
        std::fs::write(bin.join("peers/torch_cupy_sum.py"), "").unwrap();
        assert_eq!(find(None, Some(&exe), &cwd, &build), Ok(bin.join("peers")));
        // --peers-dir wins, and is the only place looked in when given.
        let given = root.join("given");
        let e = find(Some(&given), Some(&exe), &cwd, &build).unwrap_err();
        assert!(
            e.contains(&given.display().to_string()) && !e.contains("cwd"),
            "{e}"
        );
        std::fs::create_dir_all(&given).unwrap();
        let e = find(Some(&given), Some(&exe), &cwd, &build).unwrap_err();
        assert!(e.contains("no peer script in it"), "{e}");
        std::fs::write(given.join("pyopencl_reduction.py"), "").unwrap();
        assert_eq!(
            find(Some(&given), Some(&exe), &cwd, &build),
            Ok(given.clone())
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
