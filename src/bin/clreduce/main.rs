//! The `clreduce` command: argument parsing and dispatch only. One file per subcommand
//! (devices.rs, explain.rs, reduce/, demo.rs, bench/, tune.rs), the flags `explain` and `reduce` share
//! in args.rs, their reduction variables in vars.rs, the size checks before allocating in
//! limits.rs, the CLI's error in error.rs.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod args;
mod bench;
mod demo;
mod devices;
mod error;
mod explain;
mod limits;
mod reduce;
mod tune;
mod vars;

use error::CliError;

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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CLREDUCE_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Devices(a) => devices::run(&a).map_err(CliError::from),
        Cmd::Explain(a) => explain::run(&a).map_err(CliError::from),
        Cmd::Reduce(a) => reduce::run(&a),
        Cmd::Demo(a) => demo::run(&a),
        Cmd::Bench(a) => bench::run(a).map_err(CliError::from),
        Cmd::Tune(a) => tune::run(&a).map_err(CliError::from),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            let msg = e.to_string();
            eprintln!("clreduce: error: {}", msg.lines().next().unwrap_or(""));
            for l in msg.lines().skip(1) {
                eprintln!("  {l}");
            }
            ExitCode::from(2)
        }
    }
}
