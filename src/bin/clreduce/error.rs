//! The CLI's error: the library's own (`clreduce::Error`) or a command-line mistake the library
//! never sees. Both print as `clreduce: error: ...` and exit with code 2 (main.rs).

use clreduce::Error;
use std::fmt;

/// An error of a command: the library's, or a command-line mistake the library never sees.
pub enum CliError {
    Lib(Error),
    Usage(String),
}

impl From<Error> for CliError {
    fn from(e: Error) -> CliError {
        CliError::Lib(e)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Lib(e) => e.fmt(f),
            CliError::Usage(m) => f.write_str(m),
        }
    }
}

pub type CliResult<T> = std::result::Result<T, CliError>;

/// A command-line mistake as an `Err`.
pub fn usage<T>(msg: impl Into<String>) -> CliResult<T> {
    Err(CliError::Usage(msg.into()))
}
