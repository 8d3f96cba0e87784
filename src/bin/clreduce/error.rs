//! The CLI's error: the library's own (`clreduce::Error`), a command-line mistake the library
//! never sees, an input file it cannot read, or a size that does not fit where it must go. All
//! print as `clreduce: error: ...` (one line, more lines indented only for the library's
//! multi-line messages) and exit with code 2 (main.rs).

use clreduce::Error;
use std::fmt;
use std::path::PathBuf;

/// An error of a command.
pub enum CliError {
    /// The library's refusal.
    Lib(Error),
    /// A command-line mistake the library never sees.
    Usage(String),
    /// `--input FILE` cannot be read as the data to reduce.
    Input { path: PathBuf, problem: String },
    /// A size refused before anything is allocated.
    TooLarge(TooLarge),
}

/// `what` needs `need` bytes of `limit_name`, which holds `limit` bytes.
pub struct TooLarge {
    /// What needs the memory, e.g. "--n 4000000000 x f64 (the input)".
    pub what: String,
    pub need: u128,
    /// The limit, e.g. "the host memory available (MemAvailable in /proc/meminfo)" or "the
    /// max_alloc (CL_DEVICE_MAX_MEM_ALLOC_SIZE) of DEVICE".
    pub limit_name: String,
    pub limit: u64,
}

impl From<Error> for CliError {
    fn from(e: Error) -> CliError {
        CliError::Lib(e)
    }
}

/// Bytes with a binary unit, for people: "29.8 GiB".
pub fn human_bytes(b: u128) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{x:.1} {}", units[u])
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Lib(e) => e.fmt(f),
            CliError::Usage(m) => f.write_str(m),
            CliError::Input { path, problem } => {
                write!(f, "--input {}: {problem}", path.display())
            }
            CliError::TooLarge(t) => write!(
                f,
                "{} needs {} bytes ({}), more than {}: {} bytes ({})",
                t.what,
                t.need,
                human_bytes(t.need),
                t.limit_name,
                t.limit,
                human_bytes(u128::from(t.limit))
            ),
        }
    }
}

pub type CliResult<T> = std::result::Result<T, CliError>;

/// A command-line mistake as an `Err`.
pub fn usage<T>(msg: impl Into<String>) -> CliResult<T> {
    Err(CliError::Usage(msg.into()))
}
