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

const MARK: &str = "kernel void mark(global volatile int *out, int seq) { if (get_global_id(0) == 0) out[0] = seq; }";

/// Ways to see a kernel's 4-byte result on the host without a read command, for the wall-time
/// target: the kernel writes a sequence number into host-visible memory and the host either
/// waits on the kernel's event and reads the memory, or spins on the memory itself. Each way
/// reports its median time and how many repetitions saw the fresh value (a way that is not
/// coherent shows stale values). Also the enqueue call and enqueue + blocking read on a queue
/// without profiling.
fn zero_copy(label: &str, reps: usize) -> Result<(), Box<dyn std::error::Error>> {
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
    let svm_caps = dev.svm_capabilities().unwrap_or(0);
    println!("zero-copy probe on {}: CL_DEVICE_SVM_CAPABILITIES = {svm_caps:#x} (1 coarse buffer, 2 fine buffer, 4 fine system, 8 atomics)", dev.name()?);
    let prog = Program::create_and_build_from_source(&ctx, MARK, "")?;
    for profiling in [false, true] {
        // A fresh kernel object per queue: no argument of the previous round (an SVM pointer
        // since freed) stays set on it.
        let k = ClKernel::create(&prog, "mark")?;
        #[allow(deprecated)]
        let q = CommandQueue::create_default(
            &ctx,
            if profiling {
                CL_QUEUE_PROFILING_ENABLE
            } else {
                0
            },
        )?;
        let qname = if profiling {
            "profiling queue"
        } else {
            "queue without profiling"
        };
        device_buffer_probe(&ctx, &q, &k, reps, qname)?;
        host_visible_probe(&ctx, &q, &k, reps, qname, svm_caps)?;
    }
    Ok(())
}

/// The plain device buffer: the enqueue call, waiting on the kernel's event, a blocking read.
fn device_buffer_probe(
    ctx: &Context,
    q: &CommandQueue,
    k: &ClKernel,
    reps: usize,
    qname: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    // Plain device buffer: enqueue call, wait on the kernel event, blocking read.
    let buf = unsafe { Buffer::<i32>::create(ctx, CL_MEM_READ_WRITE, 1, std::ptr::null_mut())? };
    for (global, local) in [(1usize, 1usize), (1 << 20, 256)] {
        let (mut enq, mut waited, mut read_wall, mut wait_read) = (vec![], vec![], vec![], vec![]);
        for r in 0..reps + 10 {
            let mut out = [0i32];
            let t0 = Instant::now();
            let ev = unsafe {
                ExecuteKernel::new(k)
                    .set_arg(&buf)
                    .set_arg(&(r as i32))
                    .set_global_work_size(global)
                    .set_local_work_size(local)
                    .enqueue_nd_range(q)?
            };
            let e = us(t0);
            ev.wait()?;
            let w = us(t0);
            let t1 = Instant::now();
            unsafe {
                ExecuteKernel::new(k)
                    .set_arg(&buf)
                    .set_arg(&(r as i32))
                    .set_global_work_size(global)
                    .set_local_work_size(local)
                    .enqueue_nd_range(q)?;
                q.enqueue_read_buffer(&buf, CL_BLOCKING, 0, &mut out, &[])?
            };
            let rw = us(t1);
            // The same, waiting for the kernel's event before the read
            // (Workarounds::wait_before_read's choice on a queue without profiling).
            let t2 = Instant::now();
            unsafe {
                let ev = ExecuteKernel::new(k)
                    .set_arg(&buf)
                    .set_arg(&(r as i32))
                    .set_global_work_size(global)
                    .set_local_work_size(local)
                    .enqueue_nd_range(q)?;
                ev.wait()?;
                q.enqueue_read_buffer(&buf, CL_BLOCKING, 0, &mut out, &[])?
            };
            let wr = us(t2);
            if r >= 10 {
                enq.push(e);
                waited.push(w);
                read_wall.push(rw);
                wait_read.push(wr);
            }
        }
        println!("  {qname}, device buffer, {global} x {local}: enqueue call {:.2} us, enqueue + event wait {:.2} us, enqueue + blocking read {:.2} us, enqueue + event wait + blocking read {:.2} us", median(enq), median(waited), median(read_wall), median(wait_read));
    }
    Ok(())
}

/// Host-visible memory the kernel writes directly (pinned, USE_HOST_PTR, SVM): waiting on the
/// event then reading the memory, or spinning on the memory.
fn host_visible_probe(
    ctx: &Context,
    q: &CommandQueue,
    k: &ClKernel,
    reps: usize,
    qname: &str,
    svm_caps: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    use opencl3::memory::{svm_alloc, CL_MEM_SVM_FINE_GRAIN_BUFFER, CL_MEM_USE_HOST_PTR};
    // Host-visible memory the kernel writes directly, if the driver lets it.
    let pinned = unsafe {
        Buffer::<i32>::create(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            1,
            std::ptr::null_mut(),
        )?
    };
    let mut pinned_ptr: cl_mem = std::ptr::null_mut();
    unsafe {
        q.enqueue_map_buffer(
            &pinned,
            CL_BLOCKING,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            4,
            &mut pinned_ptr,
            &[],
        )?;
    }
    let mut host_store = vec![0u8; 8192];
    let off = host_store.as_ptr().align_offset(4096);
    let host_ptr = unsafe { host_store.as_mut_ptr().add(off) } as *mut std::ffi::c_void;
    let use_host = unsafe {
        Buffer::<i32>::create(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 1024, host_ptr)?
    };
    let mut ways: Vec<(&str, *mut i32, Option<&Buffer<i32>>)> = vec![
        (
            "ALLOC_HOST_PTR mapped once",
            pinned_ptr as *mut i32,
            Some(&pinned),
        ),
        (
            "USE_HOST_PTR page-aligned",
            host_ptr as *mut i32,
            Some(&use_host),
        ),
    ];
    let svm = if svm_caps & 2 != 0 {
        unsafe {
            svm_alloc(
                ctx.get(),
                CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
                64,
                0,
            )
            .ok()
        }
    } else if svm_caps & 1 != 0 {
        unsafe { svm_alloc(ctx.get(), CL_MEM_READ_WRITE, 64, 0).ok() }
    } else {
        None
    };
    if let Some(p) = svm {
        ways.push((
            if svm_caps & 2 != 0 {
                "SVM fine-grain buffer"
            } else {
                "SVM coarse-grain buffer (unmapped read: not legal, probed)"
            },
            p as *mut i32,
            None,
        ));
    }
    for (name, ptr, b) in ways {
        for (global, local) in [(1usize, 1usize), (1 << 20, 256)] {
            let (mut wait_t, mut spin_t, mut wait_fresh, mut spin_fresh) = (vec![], vec![], 0, 0);
            for r in 0..reps + 10 {
                let seq = 1000 + 2 * r as i32;
                let enqueue = |seq: i32| unsafe {
                    let mut ek = ExecuteKernel::new(k);
                    match b {
                        Some(b) => {
                            ek.set_arg(b);
                        }
                        None => {
                            ek.set_arg_svm(ptr as *const i32);
                        }
                    }
                    ek.set_arg(&seq)
                        .set_global_work_size(global)
                        .set_local_work_size(local)
                        .enqueue_nd_range(q)
                };
                let t0 = Instant::now();
                let ev = enqueue(seq)?;
                ev.wait()?;
                let v = unsafe { std::ptr::read_volatile(ptr) };
                let a = us(t0);
                let t1 = Instant::now();
                let ev2 = enqueue(seq + 1)?;
                q.flush()?;
                let mut seen = false;
                while t1.elapsed().as_micros() < 2000 {
                    if unsafe { std::ptr::read_volatile(ptr) } == seq + 1 {
                        seen = true;
                        break;
                    }
                    std::hint::spin_loop();
                }
                let s = us(t1);
                ev2.wait()?;
                if r >= 10 {
                    wait_t.push(a);
                    spin_t.push(s);
                    wait_fresh += (v == seq) as usize;
                    spin_fresh += seen as usize;
                }
            }
            println!("  {qname}, {name}, {global} x {local}: enqueue + event wait + host read {:.2} us (fresh {wait_fresh}/{reps}); enqueue + flush + spin on memory {:.2} us (fresh {spin_fresh}/{reps})", median(wait_t), median(spin_t));
        }
    }
    q.finish()?;
    unsafe {
        q.enqueue_unmap_mem_object(pinned.get(), pinned_ptr, &[])?;
    }
    q.finish()?;
    if let Some(p) = svm {
        unsafe {
            let _ = opencl3::memory::svm_free(ctx.get(), p);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map(String::as_str).unwrap_or("0");
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let n: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let q = Queue::with_device(spec)?;
    println!("device: {} driver {}", q.device().label(), q.caps().driver);
    if std::env::var("LATENCY_ZERO_COPY").is_ok() {
        if let Err(e) = zero_copy(&q.device().label(), reps) {
            println!("zero-copy probe failed: {e}");
        }
    }
    if let Err(e) = raw(&q.device().label(), reps) {
        println!("raw OpenCL probe skipped: {e}");
    }
    let data: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1024) as f32 / 64.0 - 8.0)
        .collect();
    // The default queue (no profiling, as a user gets it), the same without
    // Workarounds::wait_before_read (where the device has it), and a profiling one.
    let q_nowait = {
        std::env::set_var("CLREDUCE_NO_WAIT_BEFORE_READ", "1");
        let r = Queue::with_device(spec);
        std::env::remove_var("CLREDUCE_NO_WAIT_BEFORE_READ");
        r?
    };
    let wait_workaround = q.caps().workarounds.wait_before_read;
    let queues = if wait_workaround {
        vec![
            (q.clone(), ""),
            (q_nowait, " (wait_before_read off)"),
            (q.with_profiling()?, ""),
        ]
    } else {
        vec![(q.clone(), ""), (q.with_profiling()?, "")]
    };
    for (q, note) in queues {
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
            // Wall without the split: launch call straight to the result read.
            let t3 = Instant::now();
            q.parallel_for_reduce(
                Range::new(n),
                reduction(&s, Op::Plus).initialize_to_identity(),
                Kernel::new("sum += x[i];").arg("x", &x),
            )?;
            let _v = s.get(0)?;
            let direct = us(t3);
            if r >= 10 {
                plan_t.push(tp);
                call.push(tc);
                wait.push(tw);
                read.push(tr);
                if q.is_profiling() {
                    devt.push(ev.device_time_ns()? as f64 / 1e3);
                }
                wall.push((tall, direct));
            }
            summary = format!(
                "{} groups={} local={} commands={}",
                p.summary(),
                p.groups,
                p.local,
                ev.commands()
            );
        }
        let (split, direct): (Vec<f64>, Vec<f64>) = wall.into_iter().unzip();
        println!(
            "clreduce f32 sum n={n} on a queue {} profiling{note} [{summary}]",
            if q.is_profiling() { "with" } else { "without" }
        );
        println!(
            "  planning (explain) {:.2} us; launch call {:.2} us; wait {:.2} us; result read {:.2} us; wall (launch, wait, read) {:.2} us; wall (launch, read) {:.2} us; device {}",
            median(plan_t),
            median(call),
            median(wait),
            median(read),
            median(split),
            median(direct),
            if devt.is_empty() {
                "n/a (no profiling)".to_string()
            } else {
                format!("{:.2} us", median(devt))
            }
        );
    }
    Ok(())
}
