//! Every `unsafe` OpenCL call lives here (the only other `unsafe` is the byte view of element
//! slices in `buffer.rs`): every OpenCL call that takes raw pointers or sets kernel
//! arguments goes through here, behind safe functions that check sizes first.

use crate::error::{Error, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use opencl3::types::{cl_event, cl_mem};
use std::ffi::c_void;

/// An OpenCL buffer, type-erased: a `cl_mem` released on drop. OpenCL keeps a released buffer
/// alive until the commands that use it have finished, so dropping one while a launch is in
/// flight is safe.
pub struct Mem {
    raw: cl_mem,
    pub bytes: usize,
}

// SAFETY: cl_mem handles may be used from any thread (OpenCL API calls are thread-safe, except
// clSetKernelArg on one kernel object, which this crate never shares between threads).
unsafe impl Send for Mem {}
unsafe impl Sync for Mem {}

impl Drop for Mem {
    fn drop(&mut self) {
        // SAFETY: `raw` is a valid mem object this value owns one reference to.
        unsafe {
            let _ = opencl3::memory::release_mem_object(self.raw);
        }
    }
}

impl Mem {
    pub fn raw(&self) -> cl_mem {
        self.raw
    }
}

/// Creates a buffer of `bytes` bytes, copying `init` into it when given (its length must be `bytes`).
pub(crate) fn create_mem(
    ctx: &Context,
    bytes: usize,
    init: Option<&[u8]>,
    device: &str,
) -> Result<Mem> {
    const CL_MEM_READ_WRITE: u64 = 1 << 0;
    const CL_MEM_COPY_HOST_PTR: u64 = 1 << 5;
    let size = bytes.max(1);
    let (flags, ptr) = match init {
        Some(d) if !d.is_empty() => {
            assert_eq!(d.len(), bytes, "create_mem: init length");
            (
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                d.as_ptr() as *mut c_void,
            )
        }
        _ => (CL_MEM_READ_WRITE, std::ptr::null_mut()),
    };
    // SAFETY: with COPY_HOST_PTR the runtime copies `size` bytes from `ptr`, which points to
    // `bytes == size` readable bytes; otherwise ptr is null.
    let raw =
        unsafe { opencl3::memory::create_buffer(ctx.get(), flags, size, ptr) }.map_err(|code| {
            Error::Alloc {
                bytes: size,
                device: device.to_string(),
                code,
            }
        })?;
    Ok(Mem { raw, bytes: size })
}

/// Creates an in-order command queue with profiling enabled.
pub(crate) fn create_queue(
    ctx: &Context,
    device: opencl3::types::cl_device_id,
) -> Result<CommandQueue> {
    const CL_QUEUE_PROFILING_ENABLE: u64 = 1 << 1;
    // SAFETY: ctx and device are valid; clCreateCommandQueue exists on every OpenCL version
    // (deprecated, not removed, since 2.0) and gives an in-order queue.
    unsafe { CommandQueue::create(ctx, device, CL_QUEUE_PROFILING_ENABLE) }
        .map_err(Error::cl("clCreateCommandQueue"))
}

fn wait_list(events: &[&Event]) -> Vec<cl_event> {
    events.iter().map(|e| e.get()).collect()
}

/// Blocking read of `out.len()` bytes from `mem` at `offset`.
pub(crate) fn read_bytes(q: &CommandQueue, mem: &Mem, offset: usize, out: &mut [u8]) -> Result<()> {
    if offset + out.len() > mem.bytes {
        return Err(Error::LengthMismatch {
            buffer: mem.bytes,
            host: offset + out.len(),
        });
    }
    if out.is_empty() {
        return Ok(());
    }
    // SAFETY: the range was checked against the buffer size; the read is blocking, so `out`
    // outlives the transfer.
    let ev = unsafe {
        opencl3::command_queue::enqueue_read_buffer(
            q.get(),
            mem.raw,
            1,
            offset,
            out.len(),
            out.as_mut_ptr() as *mut c_void,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| Error::Cl {
        call: "clEnqueueReadBuffer",
        code,
    })?;
    drop(Event::new(ev));
    Ok(())
}

/// Blocking write of `data` into `mem` at `offset`.
pub(crate) fn write_bytes(q: &CommandQueue, mem: &Mem, offset: usize, data: &[u8]) -> Result<()> {
    if offset + data.len() > mem.bytes {
        return Err(Error::LengthMismatch {
            buffer: mem.bytes,
            host: offset + data.len(),
        });
    }
    if data.is_empty() {
        return Ok(());
    }
    // SAFETY: range checked; blocking write, so `data` outlives the transfer.
    let ev = unsafe {
        opencl3::command_queue::enqueue_write_buffer(
            q.get(),
            mem.raw,
            1,
            offset,
            data.len(),
            data.as_ptr() as *const c_void,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| Error::Cl {
        call: "clEnqueueWriteBuffer",
        code,
    })?;
    drop(Event::new(ev));
    Ok(())
}

/// Fills `size` bytes at `offset` with a repeated `pattern`.
pub(crate) fn fill(
    q: &CommandQueue,
    mem: &Mem,
    pattern: &[u8],
    offset: usize,
    size: usize,
) -> Result<Event> {
    if offset + size > mem.bytes || pattern.is_empty() || size % pattern.len() != 0 {
        return Err(Error::LengthMismatch {
            buffer: mem.bytes,
            host: offset + size,
        });
    }
    // SAFETY: range and pattern size checked; the runtime copies the pattern before returning.
    let ev = unsafe {
        opencl3::command_queue::enqueue_fill_buffer(
            q.get(),
            mem.raw,
            pattern.as_ptr() as *const c_void,
            pattern.len(),
            offset,
            size,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| Error::Cl {
        call: "clEnqueueFillBuffer",
        code,
    })?;
    Ok(Event::new(ev))
}

/// Device-side copy of `size` bytes.
pub(crate) fn copy(
    q: &CommandQueue,
    src: &Mem,
    src_off: usize,
    dst: &Mem,
    dst_off: usize,
    size: usize,
) -> Result<Event> {
    if src_off + size > src.bytes || dst_off + size > dst.bytes {
        return Err(Error::LengthMismatch {
            buffer: src.bytes.min(dst.bytes),
            host: size,
        });
    }
    // SAFETY: both ranges checked against the buffer sizes.
    let ev = unsafe {
        opencl3::command_queue::enqueue_copy_buffer(
            q.get(),
            src.raw,
            dst.raw,
            src_off,
            dst_off,
            size,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| Error::Cl {
        call: "clEnqueueCopyBuffer",
        code,
    })?;
    Ok(Event::new(ev))
}

/// A kernel argument, checked against nothing but its own size: the generated kernel's
/// signature and this list come from the same plan (see `codegen`).
pub(crate) enum Arg<'a> {
    Mem(&'a Mem),
    Bytes(Vec<u8>),
}

/// A built program with its kernel objects pooled: a kernel's arguments are captured at
/// enqueue, so one object serves launch after launch; the pool gives each concurrent launch
/// its own.
pub(crate) struct Compiled {
    pub program: std::sync::Arc<Program>,
    /// `CL_KERNEL_WORK_GROUP_SIZE` of `clr_main` on the device.
    pub kernel_wg_limit: usize,
    pool: std::sync::Mutex<Vec<(&'static str, Kernel)>>,
}

impl Compiled {
    pub fn new(
        program: std::sync::Arc<Program>,
        device: opencl3::types::cl_device_id,
    ) -> Result<Compiled> {
        let main = Kernel::create(&program, "clr_main").map_err(Error::cl("clCreateKernel"))?;
        let kernel_wg_limit = main
            .get_work_group_size(device)
            .map_err(Error::cl("clGetKernelWorkGroupInfo"))?;
        Ok(Compiled {
            program,
            kernel_wg_limit,
            pool: std::sync::Mutex::new(vec![("clr_main", main)]),
        })
    }

    fn take(&self, name: &'static str) -> Result<Kernel> {
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pos) = pool.iter().position(|(n, _)| *n == name) {
            return Ok(pool.swap_remove(pos).1);
        }
        drop(pool);
        Kernel::create(&self.program, name).map_err(Error::cl("clCreateKernel"))
    }

    fn give(&self, name: &'static str, k: Kernel) {
        self.pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((name, k));
    }
}

/// Sets a pooled kernel's arguments and enqueues it over `global` with work-groups of `local`.
pub(crate) fn enqueue_kernel(
    q: &CommandQueue,
    compiled: &Compiled,
    name: &'static str,
    args: &[Arg<'_>],
    global: &[usize],
    local: &[usize],
    after: &[&Event],
) -> Result<Event> {
    let kernel = compiled.take(name)?;
    let r = enqueue_with(q, &kernel, args, global, local, after);
    compiled.give(name, kernel);
    r
}

fn enqueue_with(
    q: &CommandQueue,
    kernel: &Kernel,
    args: &[Arg<'_>],
    global: &[usize],
    local: &[usize],
    after: &[&Event],
) -> Result<Event> {
    for (i, a) in args.iter().enumerate() {
        // SAFETY: a mem argument passes a pointer to a valid cl_mem; a scalar passes its bytes
        // with their exact size. The kernel object was taken out of the pool for this call, so no
        // other thread sets its arguments concurrently.
        let r = unsafe {
            match a {
                Arg::Mem(m) => opencl3::kernel::set_kernel_arg(
                    kernel.get(),
                    i as u32,
                    std::mem::size_of::<cl_mem>(),
                    &m.raw as *const cl_mem as *const c_void,
                ),
                Arg::Bytes(b) => opencl3::kernel::set_kernel_arg(
                    kernel.get(),
                    i as u32,
                    b.len(),
                    b.as_ptr() as *const c_void,
                ),
            }
        };
        r.map_err(|code| Error::Cl {
            call: "clSetKernelArg",
            code,
        })?;
    }
    let waits = wait_list(after);
    // SAFETY: global and local have the same length (1..=3), checked by the planner; the wait
    // list holds valid events that outlive this call.
    let ev = unsafe {
        opencl3::command_queue::enqueue_nd_range_kernel(
            q.get(),
            kernel.get(),
            global.len() as u32,
            std::ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            waits.len() as u32,
            if waits.is_empty() {
                std::ptr::null()
            } else {
                waits.as_ptr()
            },
        )
    }
    .map_err(|code| Error::Cl {
        call: "clEnqueueNDRangeKernel",
        code,
    })?;
    Ok(Event::new(ev))
}
