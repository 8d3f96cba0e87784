//! The CLI's only way to stdout and stderr: `outln!`/`out!` (stdout) and `errln!` (stderr),
//! defined in main.rs, call [`stdout`] and [`stderr`] here. No write can panic (`println!`
//! panics on a closed pipe or a full disk).
//!
//! - stdout closed by its reader (`EPIPE`, `clreduce devices | head -1`): what follows is
//!   dropped quietly and the command runs to its end; its exit status is its own (0, 1 or 2).
//! - any other stdout failure (`/dev/full`, an I/O error): the rest is dropped and main.rs
//!   reports it as `clreduce: error: writing to stdout: ...`, exit 2, whatever the command's
//!   result was.
//! - stderr failures are ignored: there is nowhere left to say anything.
//!
//! design/errors.md, "The command line's contract", gives the reasons.

use std::fmt;
use std::io::{self, ErrorKind, Write};
use std::sync::Mutex;

/// The first stdout failure, once one happened.
static STDOUT_FAILED: Mutex<Option<Failure>> = Mutex::new(None);

#[derive(Clone)]
enum Failure {
    /// The reader closed the pipe.
    Closed,
    /// Anything else: the first line of the error.
    Other(String),
}

fn failed() -> std::sync::MutexGuard<'static, Option<Failure>> {
    STDOUT_FAILED.lock().unwrap_or_else(|e| e.into_inner())
}

fn note(e: &io::Error) {
    let mut f = failed();
    if f.is_none() {
        *f = Some(if e.kind() == ErrorKind::BrokenPipe {
            Failure::Closed
        } else {
            Failure::Other(e.to_string().lines().next().unwrap_or("").to_string())
        });
    }
}

/// Writes to stdout unless an earlier write failed; a failure is remembered, never raised.
pub fn stdout(args: fmt::Arguments<'_>) {
    if failed().is_some() {
        return;
    }
    let mut o = io::stdout().lock();
    if let Err(e) = o.write_fmt(args) {
        note(&e);
    }
}

/// Writes to stderr, ignoring failures.
pub fn stderr(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// Flushes stdout: `Err` with the problem when stdout failed other than by its reader closing
/// it (main.rs then exits 2).
pub fn finish() -> Result<(), String> {
    if failed().is_none() {
        if let Err(e) = io::stdout().lock().flush() {
            note(&e);
        }
    }
    match failed().clone() {
        Some(Failure::Other(m)) => Err(format!("writing to stdout: {m}")),
        Some(Failure::Closed) | None => Ok(()),
    }
}

/// The first launch's builds, for the `device time:` lines of `reduce` and `demo`: how many
/// programs it built and how many of them came from the program cache on disk.
pub fn built_text(built: u64, from_disk: u64) -> String {
    match (built, from_disk) {
        (0, _) => "no program built (already in this process)".to_string(),
        (k, 0) => format!("including building {k} program(s)"),
        (k, d) if d == k => format!("including loading {k} program(s) from the disk cache"),
        (k, d) => format!("including building {k} program(s), {d} from the disk cache"),
    }
}
