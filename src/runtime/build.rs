//! Building one OpenCL program, uncached: a failure becomes `Error::Build` with the device, the
//! options, the whole log and the source. Also the build of a program from a binary (the disk
//! cache's hits).

use super::disk_cache;
use crate::error::{Error, Result};
use opencl3::context::Context;
use opencl3::program::Program;
use opencl3::types::cl_device_id;

/// Compiles without the cache; a failure carries the device, the options, the whole build log
/// and the source.
pub(crate) fn build_uncached(
    id: cl_device_id,
    label: &str,
    ctx: &Context,
    source: &str,
    options: &str,
) -> Result<Program> {
    let mut program =
        Program::create_from_source(ctx, source).map_err(Error::cl("clCreateProgramWithSource"))?;
    match program.build(&[id], options) {
        Ok(()) => Ok(program),
        Err(_) => {
            let log = program
                .get_build_log(id)
                .unwrap_or_else(|e| format!("(no build log: {e})"));
            Err(Error::Build {
                device: label.to_string(),
                options: options.to_string(),
                log,
                generated: source.to_string(),
            })
        }
    }
}

/// Builds a program from a binary its device gave out earlier (`launch::program_from_binary`,
/// then `clBuildProgram` with the same options, as OpenCL requires before kernels exist).
fn build_from_binary(
    id: cl_device_id,
    ctx: &Context,
    binary: &[u8],
    options: &str,
) -> Result<Program> {
    let mut program = super::launch::program_from_binary(ctx, id, binary)?;
    program
        .build(&[id], options)
        .map_err(Error::cl("clBuildProgram (binary)"))?;
    Ok(program)
}

/// Builds (device, source, options) from the disk cache's binary when it holds one the driver
/// accepts, else compiles from source and writes the binary there (`disk_cache.rs`). Returns
/// the program and whether it came from the disk. The caller holds the device's lock where the
/// device needs one.
pub(crate) fn build_cached(
    id: cl_device_id,
    label: &str,
    identity: Option<&str>,
    ctx: &Context,
    source: &str,
    options: &str,
) -> Result<(Program, bool)> {
    let disk = disk_cache::entry(identity, source, options);
    if let Some(e) = &disk {
        if let Some(binary) = e.load() {
            match build_from_binary(id, ctx, &binary, options) {
                Ok(p) => {
                    disk_cache::note_loaded();
                    return Ok((p, true));
                }
                Err(err) => {
                    tracing::debug!(device = %label, %err, "cached binary refused");
                    e.remove();
                }
            }
        }
    }
    let p = build_uncached(id, label, ctx, source, options)?;
    if let (Some(e), Ok(binaries)) = (&disk, p.get_binaries()) {
        e.store(binaries.first().map_or(&[][..], |b| b.as_slice()));
    }
    Ok((p, false))
}
