//! Running the Python peers and the ladder of `clreduce bench`: the repository root that holds
//! benches/, python3 with the project-local .pydeps and the ICD loader's list for children,
//! whether PyOpenCL imports, and a script's JSON lines.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root: the current directory when it has benches/, else the build's.
pub fn repo_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if cwd.join("benches").is_dir() {
        cwd
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }
}

/// python3, with the project-local .pydeps (pip install --target .pydeps pyopencl mako) on the
/// path when it exists.
fn python(root: &Path) -> Command {
    let mut c = Command::new("python3");
    // The peers enumerate OpenCL themselves: give them the loader's list as this process saw it.
    c.envs(clreduce::device::env_for_children());
    let deps = root.join(".pydeps");
    if deps.is_dir() {
        let mut p = deps.to_string_lossy().into_owned();
        if let Ok(old) = std::env::var("PYTHONPATH") {
            if !old.is_empty() {
                p = format!("{p}:{old}");
            }
        }
        c.env("PYTHONPATH", p);
    }
    c
}

/// Ok when `python3 -c 'import pyopencl'` works, else why not.
pub fn pyopencl_available(root: &Path) -> std::result::Result<(), String> {
    match python(root).args(["-c", "import pyopencl"]).output() {
        Err(e) => Err(format!("python3 could not be started: {e}")),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            Err(format!(
                "`python3 -c 'import pyopencl'` failed: {} (pip install --target .pydeps pyopencl mako)",
                err.lines().last().unwrap_or("").trim()
            ))
        }
    }
}

/// Runs a Python script and parses the JSON lines it prints on stdout; its stderr goes through.
pub fn run_jsonl<T: serde::de::DeserializeOwned>(
    root: &Path,
    script: &str,
    args: &[String],
) -> std::result::Result<Vec<T>, String> {
    let path = root.join(script);
    if !path.is_file() {
        return Err(format!("{} not found", path.display()));
    }
    let out = python(root)
        .arg(&path)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("python3 {script}: {e}"))?;
    if !out.status.success() {
        return Err(format!("python3 {script} exited with {}", out.status));
    }
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim();
        if line.starts_with('{') {
            match serde_json::from_str(line) {
                Ok(p) => v.push(p),
                Err(e) => errln!("bench: ignoring a line of {script}: {e}: {line}"),
            }
        }
    }
    Ok(v)
}
