//! Device memory: a request the device cannot hold is refused before anything is allocated
//! (`Error::AllocTooLarge`, with its fields), on every device, whether or not the driver
//! allocates lazily:
//!
//! - one buffer above `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, twice the device's memory, a size that
//!   overflows; the queue works afterwards and nothing stays counted;
//! - buffers held together past `CL_DEVICE_GLOBAL_MEM_SIZE`, for user buffers and for a
//!   queue's scratch memory (the launch fails before it enqueues anything, its variable read
//!   back unchanged), on devices whose global memory is small enough to fill here (Oclgrind's
//!   128 MiB); elsewhere reported as skipped.
//!
//! These tests allocate, or try to allocate, the device's memory, so they run one at a time
//! (every test holds `EXCLUSIVE`) in a binary of their own: `scripts/gpu.sh run tests
//! --repeat K` runs this binary alone, never beside another run (issue 21: a buffer twice
//! the H200's memory, accepted at creation, made other tests' reads fail).

mod common;

use clreduce::{
    devices, reduction, Buffer, Device, Error, Kernel, Mask, Op, Options, Queue, Range,
};
use common::{short, sim_lock, Tally};
use std::sync::{Mutex, MutexGuard};

/// Held by every test of this binary: never two memory tests at once.
fn exclusive() -> MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

/// Global memory up to which `global_memory_counts_every_buffer_held` fills a device.
const FILL_MAX: u64 = 1 << 30;

fn queue(d: &Device) -> Queue {
    Queue::with_mask(d, Mask::default()).expect("queue")
}

/// After a failure the queue still computes exactly.
fn still_works(q: &Queue) -> Result<(), String> {
    let x = q
        .buffer_from(&vec![2i32; 1000])
        .map_err(|e| e.to_string())?;
    let res = q.buffer_from(&[5i32]).map_err(|e| e.to_string())?;
    q.parallel_for_reduce_with(
        Range::new(1000),
        reduction(&res, Op::Plus),
        Kernel::new("sum += x[i];").arg("x", &x),
        Options::default(),
    )
    .map_err(|e| e.to_string())?;
    match res.get(0) {
        Ok(2005) => Ok(()),
        other => Err(format!("after the refusal: {other:?}")),
    }
}

/// `AllocTooLarge` with the given bytes and limit, on `d`, with nothing counted in between.
fn refused(
    e: &Error,
    d: &Device,
    bytes: u64,
    limit_name: &str,
    limit: u64,
    in_use: u64,
) -> Result<(), String> {
    match e {
        Error::AllocTooLarge {
            bytes: b,
            limit: l,
            limit_name: n,
            in_use: u,
            device,
        } if *b == bytes && *l == limit && *n == limit_name && *u == in_use => {
            if *device != d.label() {
                return Err(format!("device {device}"));
            }
            let msg = e.to_string();
            if !msg.contains(limit_name) || !msg.contains(&d.label()) {
                return Err(format!("message: {msg}"));
            }
            Ok(())
        }
        other => Err(format!(
            "want AllocTooLarge {{ bytes: {bytes}, {limit_name} {limit}, in_use {in_use} }}, got {other:?}"
        )),
    }
}

/// One buffer above `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, twice the device's memory (larger of
/// max_alloc and global memory; a lazy allocator such as NVIDIA's accepted it at creation
/// before), and a length whose size overflows: refused without allocating.
#[test]
fn buffers_above_the_device_limits_are_refused() {
    let _x = exclusive();
    let mut tally = Tally::new("buffers_above_the_device_limits_are_refused");
    for d in devices().expect("devices") {
        let _sim = sim_lock(d);
        let dev = short(d);
        let q = queue(d);
        let caps = q.caps().clone();
        let before = d.memory_in_use().unwrap();
        let twice = caps.max_alloc.max(caps.global_mem_size).saturating_mul(2);
        for (what, len) in [
            ("max_alloc + 8 bytes", caps.max_alloc / 8 + 1),
            ("twice the device's memory", twice / 8),
        ] {
            let held = d.memory_in_use().unwrap();
            let r = match q.buffer::<f64>(len as usize) {
                Ok(_) => Err(format!("{} bytes were allocated", len * 8)),
                Err(e) => refused(
                    &e,
                    d,
                    len * 8,
                    "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                    caps.max_alloc,
                    held,
                ),
            };
            match r.and_then(|()| still_works(&q)) {
                Ok(()) => tally.pass(&dev),
                Err(m) => tally.fail(&dev, what, &m),
            }
        }
        let held = d.memory_in_use().unwrap();
        let r = match q.buffer::<u64>(usize::MAX / 4) {
            Ok(_) => Err("a buffer of 2^64 bytes".to_string()),
            Err(e) => refused(
                &e,
                d,
                u64::MAX,
                "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                caps.max_alloc,
                held,
            ),
        };
        match r {
            Ok(()) => tally.pass(&dev),
            Err(m) => tally.fail(&dev, "overflowing size", &m),
        }
        // The scratch of `still_works` belongs to `q`; once it is gone, nothing stays counted.
        drop(q);
        match d.memory_in_use().unwrap() {
            n if n == before => tally.pass(&dev),
            n => tally.fail(
                &dev,
                "memory counted",
                &format!("{n} bytes held, {before} before"),
            ),
        }
    }
    tally.finish();
}

/// Buffers held together past `CL_DEVICE_GLOBAL_MEM_SIZE`: the buffer that does not fit is
/// refused with the bytes already held; so is a launch whose scratch does not fit (before it
/// enqueues anything: its variable is unchanged); freeing memory lets both through.
#[test]
fn global_memory_counts_every_buffer_held() {
    let _x = exclusive();
    let mut tally = Tally::new("global_memory_counts_every_buffer_held");
    for d in devices().expect("devices") {
        let _sim = sim_lock(d);
        let dev = short(d);
        let caps = d.caps().unwrap();
        let global = caps.global_mem_size;
        if global > FILL_MAX {
            tally.skip_device(
                &dev,
                "fill",
                &format!(
                    "filling its {global} bytes of global memory would take that much memory here (tested where global memory is at most {FILL_MAX} bytes)"
                ),
            );
            continue;
        }
        match fill_and_refuse(d) {
            Ok(()) => tally.pass(&dev),
            Err(m) => tally.fail(&dev, "fill", &m),
        }
    }
    tally.finish();
}

fn fill_and_refuse(d: &Device) -> Result<(), String> {
    let q = queue(d);
    let caps = q.caps().clone();
    let global = caps.global_mem_size;
    const START: i32 = 77;
    let x = q
        .buffer_from(&vec![1i32; 4096])
        .map_err(|e| e.to_string())?;
    let res = q.buffer_from(&[START]).map_err(|e| e.to_string())?;
    let chunk = caps.max_alloc.min(global / 4) / 4 * 4;
    let mut held: Vec<Buffer<u32>> = Vec::new();
    // Whole chunks, then one buffer of what is left but 4 bytes (less than the 8 bytes of
    // the smallest partials buffer, the first scratch a launch allocates).
    while d.memory_in_use().unwrap() + chunk <= global {
        held.push(
            q.buffer::<u32>((chunk / 4) as usize)
                .map_err(|e| e.to_string())?,
        );
    }
    let rest = (global - d.memory_in_use().unwrap()).saturating_sub(4) / 4;
    held.push(q.buffer::<u32>(rest as usize).map_err(|e| e.to_string())?);
    let in_use = d.memory_in_use().unwrap();
    if global - in_use > 20 {
        return Err(format!("{in_use} of {global} bytes held, not full"));
    }
    // A buffer that does not fit.
    match q.buffer::<u32>(64) {
        Ok(_) => return Err("a buffer past global memory was allocated".into()),
        Err(e) => refused(&e, d, 256, "CL_DEVICE_GLOBAL_MEM_SIZE", global, in_use)?,
    }
    // A launch whose scratch (partials, counter, backup) does not fit: refused before any
    // command, the variable unchanged.
    let launch = || {
        q.parallel_for_reduce_with(
            Range::new(4096),
            reduction(&res, Op::Plus),
            Kernel::new("sum += x[i];").arg("x", &x),
            Options::default(),
        )
    };
    match launch() {
        Ok(_) => return Err("a launch whose scratch does not fit ran".into()),
        Err(Error::AllocTooLarge {
            limit_name: "CL_DEVICE_GLOBAL_MEM_SIZE",
            in_use: u,
            ..
        }) if u == in_use => {}
        Err(e) => return Err(format!("the launch: {e:?}")),
    }
    match res.get(0) {
        Ok(START) => {}
        other => return Err(format!("the variable after the refused launch: {other:?}")),
    }
    // Freeing one chunk lets both through.
    held.swap_remove(0);
    launch().map_err(|e| format!("after freeing: {e}"))?;
    match res.get(0) {
        Ok(v) if v == START + 4096 => {}
        other => return Err(format!("after freeing: {other:?}")),
    }
    q.buffer::<u32>(64)
        .map_err(|e| format!("after freeing: {e}"))?;
    Ok(())
}
