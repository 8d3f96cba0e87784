//! The `clreduce` command: argument parsing and dispatch only. One file per subcommand
//! (devices.rs, explain.rs, reduce/, demo.rs, bench/, tune.rs), the flags `explain` and `reduce` share
//! in args.rs, their reduction variables in vars.rs, the size checks before allocating in
//! limits.rs, the CLI's error in error.rs, every write to stdout and stderr in out.rs.
//!
//! The contract (design/errors.md, "The command line's contract"): every command's error,
//! clap's included, leaves through [`exit_status`] as one `clreduce: error: ...` line and exit
//! status 2; a result that does not match the host reference is exit 1; `--help` and
//! `--version` print and exit 0. A command reports through `CliResult<bool>` and never exits
//! or prints an error itself, so a new subcommand or flag gets the contract for free.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `println!` without the panic: stdout through out.rs.
macro_rules! outln {
    () => { $crate::out::stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($t)*))) };
}
/// `print!` without the panic: stdout through out.rs.
macro_rules! out {
    ($($t:tt)*) => { $crate::out::stdout(format_args!($($t)*)) };
}
/// `eprintln!` without the panic: stderr through out.rs.
macro_rules! errln {
    ($($t:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($t)*))) };
}

mod args;
mod bench;
mod demo;
mod devices;
mod error;
mod explain;
mod limits;
mod out;
mod reduce;
mod tune;
mod vars;

use error::{CliError, CliResult};

#[derive(Parser)]
#[command(
    name = "clreduce",
    version,
    about = "SYCL 2020-style reductions on any OpenCL device"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The capability matrix: one row per OpenCL device, with the plans auto-selection picks.
    Devices(devices::DevicesArgs),
    /// Print the plan for a reduction without running it.
    Explain(explain::ExplainArgs),
    /// Reduce seeded random data on a device and check it against the host.
    Reduce(reduce::ReduceArgs),
    /// The first-ten-minutes demo: devices found, then a checked f32 sum with its plan.
    Demo(demo::DemoArgs),
    /// Benchmarks: GB/s per device, case, strategy and size, with peers (see src/bin/clreduce/bench/).
    Bench(bench::BenchArgs),
    /// Measure each device's fastest plans and store them in the per-user tuning cache
    /// (`--show` prints it); auto plans then follow the measurements.
    Tune(tune::TuneArgs),
}

fn main() -> ExitCode {
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CLREDUCE_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_exit(e),
    };
    let r = match cli.cmd {
        Cmd::Devices(a) => devices::run(&a).map_err(CliError::from),
        Cmd::Explain(a) => explain::run(&a),
        Cmd::Reduce(a) => reduce::run(&a),
        Cmd::Demo(a) => demo::run(&a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Tune(a) => tune::run(&a).map_err(CliError::from),
    };
    exit_status(r)
}

/// The one exit of every command: Ok(true) 0, Ok(false) (a result that does not match) 1, an
/// error one `clreduce: error:` line (more lines only for the library's multi-line messages,
/// indented) and 2. A failed stdout (other than a reader that closed it) is an error too.
fn exit_status(r: CliResult<bool>) -> ExitCode {
    let written = out::finish();
    let r = match (r, written) {
        (Err(e), _) => Err(e.to_string()),
        (Ok(_), Err(m)) => Err(m),
        (Ok(ok), Ok(())) => Ok(ok),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(msg) => {
            errln!("clreduce: error: {}", msg.lines().next().unwrap_or(""));
            for l in msg.lines().skip(1) {
                errln!("  {l}");
            }
            ExitCode::from(2)
        }
    }
}

/// clap's refusal: `--help` and `--version` print as clap prints them and exit 0; any other is
/// one line (clap's message and its tip) and exit 2.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    use std::io::IsTerminal;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        if std::io::stdout().is_terminal() {
            out!("{}", e.render().ansi());
        } else {
            out!("{}", e.render());
        }
        return exit_status(Ok(true));
    }
    exit_status(Err(CliError::Usage(clap_line(&e.render().to_string()))))
}

/// clap's error text as one line: its `error:` line without the prefix, with its `tip:`.
fn clap_line(text: &str) -> String {
    let line = |p: &str| {
        text.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(p))
            .map(str::trim)
    };
    let msg = line("error:")
        .unwrap_or("a subcommand is needed: devices, explain, reduce, demo, bench or tune");
    match line("tip:") {
        Some(t) => format!("{msg} ({t}; see --help)"),
        None => format!("{msg} (see --help)"),
    }
}
