//! Developer tool: where the time of a small reduction goes on one device. Measures, as medians
//! over `reps` repetitions after warm-up:
//! - raw OpenCL (no clreduce): an empty kernel of 1 work-item and of 2^20 work-items, its
//!   profiled device time (start to end), the host time of the enqueue call, and the wall
//!   time of enqueue + blocking 4-byte read, plus the same with the read enqueued non-blocking
//!   right behind the kernel and waited on, and a 4-byte blocking read on an idle queue;
//! - clreduce f32 sum of 2^20 (or `n`): planning alone (`Queue::explain`), the launch call,
//!   the wait, the result read, and the profiled device time.
//!
//! `cargo run --release --example latency -- DEVICE [reps] [n]` (DEVICE: index or name part,
//! as `Queue::with_device`). The numbers explain the 2^20 targets of issue 6; `clreduce bench`
//! is the measurement of record.
use clreduce::{reduction, Kernel, Op, Options, Queue, Range};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::event::CL_COMPLETE;
use opencl3::kernel::{ExecuteKernel, Kernel as ClKernel};
use opencl3::memory::{
    Buffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE,
};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::cl_mem;
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn us(t: Instant) -> f64 {
    t.elapsed().as_nanos() as f64 / 1e3
}

const SRC: &str =
    "kernel void empty(global int *out) { if (get_global_id(0) == 0x7fffffff) out[0] = 1; }";

fn raw(label: &str, reps: usize) -> Result<(), Box<dyn std::error::Error>> {
    // The device whose "platform / device" label is clreduce's label for the queue.
    let mut id = None;
    for p in get_platforms()? {
        for d in p.get_devices(CL_DEVICE_TYPE_ALL)? {
            if format!("{} / {}", p.name()?, Device::new(d).name()?) == label {
                id = Some(d);
            }
        }
    }
    let id = id.ok_or("no raw OpenCL device has the queue's label")?;
    let dev = Device::new(id);
    let ctx = Context::from_device(&dev)?;
    #[allow(deprecated)]
    let q = CommandQueue::create_default(&ctx, CL_QUEUE_PROFILING_ENABLE)?;
    let prog = Program::create_and_build_from_source(&ctx, SRC, "")?;
    let k = ClKernel::create(&prog, "empty")?;
    let buf = unsafe { Buffer::<i32>::create(&ctx, CL_MEM_READ_WRITE, 1, std::ptr::null_mut())? };
    // Enqueues the empty kernel over `global` work-items in groups of `local`, writing `out`.
    let launch = |out: &Buffer<i32>, global: usize, local: usize| unsafe {
        ExecuteKernel::new(&k)
            .set_arg(out)
            .set_global_work_size(global)
            .set_local_work_size(local)
            .enqueue_nd_range(&q)
    };
    println!("raw OpenCL on {}", dev.name()?);
    for (global, local) in [(1usize, 1usize), (1 << 20, 256)] {
        let (mut devt, mut enq, mut wall_blocking, mut wall_chained) =
            (vec![], vec![], vec![], vec![]);
        for r in 0..reps + 10 {
            let mut out = [0i32];
            // enqueue, then a blocking read
            let t0 = Instant::now();
            let ev = launch(&buf, global, local)?;
            let e = us(t0);
            unsafe { q.enqueue_read_buffer(&buf, CL_BLOCKING, 0, &mut out, &[])? };
            let w = us(t0);
            // enqueue, the read enqueued non-blocking behind it, wait on the read
            let t1 = Instant::now();
            launch(&buf, global, local)?;
            let rd = unsafe { q.enqueue_read_buffer(&buf, CL_NON_BLOCKING, 0, &mut out, &[])? };
            rd.wait()?;
            let c = us(t1);
            if r >= 10 {
                devt.push(
                    (ev.profiling_command_end()? - ev.profiling_command_start()?) as f64 / 1e3,
                );
                enq.push(e);
                wall_blocking.push(w);
                wall_chained.push(c);
            }
        }
        println!(
            "  empty kernel {global} x {local}: device {:.2} us, enqueue call {:.2} us, enqueue + blocking read {:.2} us, enqueue + non-blocking read + wait {:.2} us",
            median(devt),
            median(enq),
            median(wall_blocking),
            median(wall_chained)
        );
    }
    q.finish()?;
    // Other ways to get 4 bytes back after a kernel of 1 work-item: spinning on the read's
    // event status instead of a blocking call; reading into pinned host memory (a mapped
    // CL_MEM_ALLOC_HOST_PTR buffer); mapping a pinned buffer the kernel wrote.
    let pinned = unsafe {
        Buffer::<i32>::create(
            &ctx,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            1,
            std::ptr::null_mut(),
        )?
    };
    let staging = unsafe {
        Buffer::<i32>::create(
            &ctx,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            1,
            std::ptr::null_mut(),
        )?
    };
    let mut host_ptr: cl_mem = std::ptr::null_mut();
    unsafe {
        q.enqueue_map_buffer(
            &staging,
            CL_BLOCKING,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            4,
            &mut host_ptr,
            &[],
        )?;
    }
    let pinned_out: &mut [i32] = unsafe { std::slice::from_raw_parts_mut(host_ptr as *mut i32, 1) };
    let (mut spin, mut into_pinned, mut map) = (vec![], vec![], vec![]);
    for r in 0..reps + 10 {
        let mut out = [0i32];
        let t0 = Instant::now();
        launch(&buf, 1, 1)?;
        let rd = unsafe { q.enqueue_read_buffer(&buf, CL_NON_BLOCKING, 0, &mut out, &[])? };
        q.flush()?;
        while rd.command_execution_status()?.0 != CL_COMPLETE {
            std::hint::spin_loop();
        }
        let a = us(t0);
        let t1 = Instant::now();
        launch(&buf, 1, 1)?;
        unsafe {
            q.enqueue_read_buffer(&buf, CL_BLOCKING, 0, pinned_out, &[])?;
        }
        let b = us(t1);
        let t2 = Instant::now();
        let mut p: cl_mem = std::ptr::null_mut();
        launch(&pinned, 1, 1)?;
        unsafe {
            q.enqueue_map_buffer(&pinned, CL_BLOCKING, CL_MAP_READ, 0, 4, &mut p, &[])?;
            let _v = *(p as *const i32);
            q.enqueue_unmap_mem_object(pinned.get(), p, &[])?;
        }
        let c = us(t2);
        if r >= 10 {
            spin.push(a);
            into_pinned.push(b);
            map.push(c);
        }
    }
    q.finish()?;
    println!(
        "  kernel 1 x 1 then: read + spin on its event {:.2} us; blocking read into pinned host memory {:.2} us; blocking map of a pinned buffer (+ unmap) {:.2} us",
        median(spin),
        median(into_pinned),
        median(map)
    );
    let mut rd = vec![];
    for r in 0..reps + 10 {
        let mut out = [0i32];
        let t = Instant::now();
        unsafe { q.enqueue_read_buffer(&buf, CL_BLOCKING, 0, &mut out, &[])? };
        if r >= 10 {
            rd.push(us(t));
        }
    }
    println!(
        "  4-byte blocking read on an idle queue: {:.2} us",
        median(rd)
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map(String::as_str).unwrap_or("0");
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let n: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let q = Queue::with_device(spec)?;
    println!("device: {} driver {}", q.device().label(), q.caps().driver);
    if let Err(e) = raw(&q.device().label(), reps) {
        println!("raw OpenCL probe skipped: {e}");
    }
    let data: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1024) as f32 / 64.0 - 8.0)
        .collect();
    let x = q.buffer_from(&data)?;
    let s = q.buffer_from(&[0.0f32])?;
    let (mut plan_t, mut call, mut wait, mut read, mut devt, mut wall) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut summary = String::new();
    for r in 0..reps + 10 {
        let t = Instant::now();
        let p = q.explain(
            Range::new(n),
            reduction(&s, Op::Plus).initialize_to_identity(),
            Options::default(),
        )?;
        let tp = us(t);
        let t0 = Instant::now();
        let ev = q.parallel_for_reduce(
            Range::new(n),
            reduction(&s, Op::Plus).initialize_to_identity(),
            Kernel::new("sum += x[i];").arg("x", &x),
        )?;
        let tc = us(t0);
        let t1 = Instant::now();
        ev.wait()?;
        let tw = us(t1);
        let t2 = Instant::now();
        let _v = s.get(0)?;
        let tr = us(t2);
        let tall = us(t0);
        if r >= 10 {
            plan_t.push(tp);
            call.push(tc);
            wait.push(tw);
            read.push(tr);
            devt.push(ev.device_time_ns()? as f64 / 1e3);
            wall.push(tall);
        }
        summary = format!(
            "{} groups={} local={} commands={}",
            p.summary(),
            p.groups,
            p.local,
            ev.commands()
        );
    }
    println!("clreduce f32 sum n={n} [{summary}]");
    println!(
        "  planning (explain) {:.2} us; launch call {:.2} us; wait {:.2} us; result read {:.2} us; wall {:.2} us; device {:.2} us",
        median(plan_t),
        median(call),
        median(wait),
        median(read),
        median(wall),
        median(devt)
    );
    Ok(())
}
