//! Probe for issue 21: does a driver allocate device memory when a buffer is created, or at
//! its first use (lazily)? And when memory runs out at first use, which call reports it, with
//! which code, and what happens to the other commands of the same queue and of another queue?
//!
//! Raw OpenCL (opencl3) below clreduce, since clreduce now refuses what the device cannot hold:
//!
//! 1. the device's limits; the GPU memory this process uses (`nvidia-smi`, where there is one)
//!    before anything, after creating a 1 GiB buffer, after a 4-byte write into it;
//! 2. buffers of `CL_DEVICE_MAX_MEM_ALLOC_SIZE` created until they total twice
//!    `CL_DEVICE_GLOBAL_MEM_SIZE` (without touching them): how many creations succeed;
//! 3. each touched by a 4-byte fill and `clFinish`: which call fails first, with which code;
//! 4. a 4-byte read of a small buffer on the same queue (the failed read), on a second
//!    queue, and again after the big buffers are released;
//! 5. clreduce on the same device: twice the device memory is `Error::AllocTooLarge`, and a
//!    small reduction is exact.
//!
//! Run: `cargo run --release --example lazy_alloc -- [DEVICE]` (DEVICE: a part of "platform /
//! name", default NVIDIA); on the GPU machine `bash scripts/gpu.sh run cmd .gpu/lazy_alloc`.
//! It fills the device's memory: run it alone.

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::types::cl_mem;
use std::ffi::c_void;
use std::process::Command;

const CL_MEM_READ_WRITE: u64 = 1;

/// GPU memory in use, by `nvidia-smi`: this process's (`--query-compute-apps`; a container's
/// PID namespace may hide it) and the whole GPU's (`--query-gpu=memory.used`).
fn used_mib() -> String {
    let smi = |args: &[&str]| {
        Command::new("nvidia-smi")
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let Some(apps) = smi(&[
        "--query-compute-apps=pid,used_memory",
        "--format=csv,noheader,nounits",
    ]) else {
        return "n/a (no nvidia-smi)".into();
    };
    let me = std::process::id().to_string();
    let mine = apps
        .lines()
        .find_map(|l| {
            let (pid, mib) = l.split_once(',')?;
            (pid.trim() == me).then(|| format!("{} MiB", mib.trim()))
        })
        .unwrap_or_else(|| "not listed".into());
    let gpu = smi(&["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
        .and_then(|s| s.lines().next().map(|l| format!("{} MiB", l.trim())))
        .unwrap_or_default();
    format!("process {mine}, GPU {gpu}")
}

fn code_name(r: Result<(), i32>) -> String {
    let name = |c| match c {
        -4 => "CL_MEM_OBJECT_ALLOCATION_FAILURE",
        -5 => "CL_OUT_OF_RESOURCES",
        -6 => "CL_OUT_OF_HOST_MEMORY",
        -14 => "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
        -36 => "CL_INVALID_COMMAND_QUEUE",
        -61 => "CL_INVALID_BUFFER_SIZE",
        _ => "see cl.h",
    };
    match r {
        Ok(()) => "ok".into(),
        Err(c) => format!("{c} ({})", name(c)),
    }
}

fn create(ctx: &Context, bytes: usize) -> Result<cl_mem, i32> {
    // SAFETY: no host pointer; the size is the caller's.
    unsafe {
        opencl3::memory::create_buffer(ctx.get(), CL_MEM_READ_WRITE, bytes, std::ptr::null_mut())
    }
}

fn fill4(q: &CommandQueue, m: cl_mem) -> Result<(), i32> {
    let pat = 0u32;
    // SAFETY: 4 bytes at offset 0 of a buffer of at least 4 bytes; the pattern is copied.
    let ev = unsafe {
        opencl3::command_queue::enqueue_fill_buffer(
            q.get(),
            m,
            &pat as *const u32 as *const c_void,
            4,
            0,
            4,
            0,
            std::ptr::null(),
        )
    }?;
    drop(opencl3::event::Event::new(ev));
    Ok(())
}

fn read4(q: &CommandQueue, m: cl_mem) -> Result<u32, i32> {
    let mut v = 0u32;
    // SAFETY: blocking read of 4 bytes into `v`, which outlives the call.
    let ev = unsafe {
        opencl3::command_queue::enqueue_read_buffer(
            q.get(),
            m,
            1,
            0,
            4,
            &mut v as *mut u32 as *mut c_void,
            0,
            std::ptr::null(),
        )
    }?;
    drop(opencl3::event::Event::new(ev));
    Ok(v)
}

fn write4(q: &CommandQueue, m: cl_mem, v: u32) -> Result<(), i32> {
    // SAFETY: blocking write of 4 bytes from `v`.
    let ev = unsafe {
        opencl3::command_queue::enqueue_write_buffer(
            q.get(),
            m,
            1,
            0,
            4,
            &v as *const u32 as *const c_void,
            0,
            std::ptr::null(),
        )
    }?;
    drop(opencl3::event::Event::new(ev));
    Ok(())
}

fn release(m: cl_mem) {
    // SAFETY: `m` is a buffer this probe created and releases once.
    unsafe {
        let _ = opencl3::memory::release_mem_object(m);
    }
}

fn pick(spec: &str) -> Option<(String, Device)> {
    for p in opencl3::platform::get_platforms().ok()? {
        let pname = p.name().unwrap_or_default();
        for id in p.get_devices(0xFFFF_FFFF).unwrap_or_default() {
            let d = Device::new(id);
            let label = format!("{pname} / {}", d.name().unwrap_or_default());
            if label.to_lowercase().contains(&spec.to_lowercase()) {
                return Some((label, d));
            }
        }
    }
    None
}

fn main() {
    let spec = std::env::args().nth(1).unwrap_or_else(|| "NVIDIA".into());
    let Some((label, dev)) = pick(&spec) else {
        eprintln!("lazy_alloc: no device matches {spec:?}");
        std::process::exit(2);
    };
    let global = dev.global_mem_size().unwrap_or(0);
    let max_alloc = dev.max_mem_alloc_size().unwrap_or(0);
    println!("device: {label}");
    println!("CL_DEVICE_GLOBAL_MEM_SIZE {global} ({:.1} GiB), CL_DEVICE_MAX_MEM_ALLOC_SIZE {max_alloc} ({:.1} GiB)",
        global as f64 / 2f64.powi(30), max_alloc as f64 / 2f64.powi(30));
    let ctx = Context::from_device(&dev).expect("context");
    // SAFETY: valid context and device; an in-order queue without properties.
    let q = unsafe { CommandQueue::create(&ctx, dev.id(), 0) }.expect("queue");
    let q2 = unsafe { CommandQueue::create(&ctx, dev.id(), 0) }.expect("second queue");
    println!("\n1. lazy or not");
    println!("   baseline (context, 2 queues):        {}", used_mib());
    let small = create(&ctx, 4).expect("4-byte buffer");
    write4(&q, small, 42).expect("write small");
    println!("   + 4-byte buffer written:              {}", used_mib());
    let gib = create(&ctx, 1 << 30);
    println!(
        "   create 1 GiB: {}; used {}",
        code_name(gib.map(drop)),
        used_mib()
    );
    if let Ok(m) = gib {
        println!(
            "   4-byte write into it: {}; used {}",
            code_name(write4(&q, m, 7)),
            used_mib()
        );
        release(m);
        let _ = q.finish();
        println!("   released: used {}", used_mib());
    }

    println!("\n2. buffers of max_alloc, untouched, up to twice global memory");
    let mut big = Vec::new();
    let want = if max_alloc > 0 {
        (2 * global).div_ceil(max_alloc)
    } else {
        0
    };
    for k in 0..want {
        match create(&ctx, max_alloc as usize) {
            Ok(m) => big.push(m),
            Err(c) => {
                println!("   create #{k} failed: {}", code_name(Err(c)));
                break;
            }
        }
    }
    println!(
        "   {} of {want} created ({:.1} GiB in all); used {}",
        big.len(),
        big.len() as f64 * max_alloc as f64 / 2f64.powi(30),
        used_mib()
    );

    println!("\n3. touch each (4-byte fill, then clFinish)");
    for (k, &m) in big.iter().enumerate() {
        let e = fill4(&q, m);
        let f = q.finish().map_err(|e| e.0);
        println!(
            "   #{k}: fill {}, finish {}; used {}",
            code_name(e),
            code_name(f),
            used_mib()
        );
        if e.is_err() || f.is_err() {
            break;
        }
    }

    println!("\n4. the small buffer (holds 42) after that");
    println!("   read on the same queue:   {:?}", read4(&q, small));
    println!("   read on a second queue:   {:?}", read4(&q2, small));
    let fresh = create(&ctx, 4);
    println!("   new 4-byte buffer: {}", code_name(fresh.map(drop)));
    if let Ok(m) = fresh {
        println!(
            "   write+read on the second queue: {:?}",
            write4(&q2, m, 9).and_then(|()| read4(&q2, m))
        );
        release(m);
    }
    for m in big.drain(..) {
        release(m);
    }
    println!(
        "   big buffers released: finish {}; used {}",
        code_name(q.finish().map_err(|e| e.0)),
        used_mib()
    );
    println!("   read on the same queue:   {:?}", read4(&q, small));
    println!("   read on a second queue:   {:?}", read4(&q2, small));
    release(small);

    println!("\n5. clreduce on {label}");
    match clreduce::Queue::with_device(&spec) {
        Ok(cq) => {
            let len = (2 * global.max(max_alloc) / 8) as usize;
            match cq.buffer::<f64>(len) {
                Ok(_) => println!("   buffer::<f64>({len}): accepted (unexpected)"),
                Err(e) => println!("   buffer::<f64>({len}): {e}"),
            }
            let x = cq.buffer_from(&vec![1u32; 1 << 20]).expect("input");
            let s = cq.buffer_from(&[0u64]).expect("result");
            let r = cq.parallel_for_reduce(
                clreduce::Range::new(1 << 20),
                clreduce::reduction(&s, clreduce::Op::Plus),
                clreduce::Kernel::new("sum += x[i];").arg("x", &x),
            );
            println!(
                "   2^20 ones into u64: {:?} (launch {})",
                s.get(0),
                if r.is_ok() { "ok" } else { "failed" }
            );
        }
        Err(e) => println!("   Queue::with_device({spec:?}): {e}"),
    }
}
