//! Running the `clreduce` binary from tests with a clean clreduce environment. Included by path
//! (`#[path = "common/cli.rs"] mod cli_run;`) by the tests that drive the CLI.

use std::process::Command;

/// Runs the CLI (`CLREDUCE_BIN`, else the binary cargo built) with none of clreduce's
/// environment variables and no backtraces, and with the ICD loader's list as this process saw
/// it (`device::env_for_children`): (exit code, stdout, stderr).
#[allow(dead_code)]
pub fn cli(args: &[&str]) -> (i32, String, String) {
    cli_with(args, &[])
}

/// [`cli`] with some environment variables set (`CLREDUCE_TUNE_CACHE` for a test's own tuning
/// cache, for example). Without one, the tuning cache is the user's (`~/.cache/clreduce`).
#[allow(dead_code)]
pub fn cli_with(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(
        std::env::var("CLREDUCE_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_clreduce").to_string()),
    )
    .args(args)
    .envs(clreduce::device::env_for_children())
    .env_remove("CLREDUCE_DEVICE")
    .env_remove("CLREDUCE_MASK")
    .env_remove("CLREDUCE_STRATEGY")
    .env_remove("CLREDUCE_TUNE")
    .env_remove("CLREDUCE_SEGMENT")
    .env_remove("CLREDUCE_LOG")
    .env_remove("CLREDUCE_KERNELS")
    .env_remove("CLREDUCE_VEC")
    .env_remove("CLREDUCE_READ_PATH")
    .env_remove("CLREDUCE_NO_WAIT_BEFORE_READ")
    .env_remove("CLREDUCE_POLL_READ_US")
    .env_remove("RUST_BACKTRACE")
    .envs(env.iter().copied())
    .output()
    .expect("run the clreduce binary");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The tail every refused CLI run must satisfy: no panic or backtrace on stderr, and no result
/// check on stdout (the reduction did not run). `what` names the run in the messages.
#[allow(dead_code)]
pub fn assert_refused_cleanly(what: &str, stdout: &str, stderr: &str) {
    let low = stderr.to_lowercase();
    assert!(
        !low.contains("panicked") && !low.contains("backtrace"),
        "{what}: {stderr}"
    );
    assert!(!stdout.contains("check:"), "{what}: ran anyway:\n{stdout}");
}
