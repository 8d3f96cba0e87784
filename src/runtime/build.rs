//! Building one OpenCL program, uncached: a failure becomes `Error::Build` with the device, the
//! options, the whole log and the source.

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
