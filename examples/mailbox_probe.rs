//! Developer probe (issue 29, design/decisions.md section 56): can a small result come back
//! with no read command at all? The final work-group of a sum kernel writes the result, a
//! system-scope fence (`membar.sys` on NVIDIA), then a sequence number into host memory whose
//! address the kernel gets as a `ulong`; the host spins on the sequence number with volatile
//! reads, then reads the value. Outside the OpenCL memory model: it works only where the
//! device can store to that host address (NVIDIA's unified addressing of pinned memory, or a
//! driver with heterogeneous memory management for plain heap memory). Section 25 found that
//! the mapped pointer of a `CL_MEM_ALLOC_HOST_PTR` *buffer argument* never saw the kernel's
//! write (the kernel writes the device copy); here the kernel gets the host address itself.
//!
//! `mailbox_probe DEVICE MODE [reps] [n...]`, DEVICE a part of "platform / device", MODE where
//! the mailbox lives: `pinned` (the mapped pointer of a `CL_MEM_ALLOC_HOST_PTR` buffer, mapped
//! once), `usehost` (page-aligned heap memory behind a `CL_MEM_USE_HOST_PTR` buffer), `heap`
//! (page-aligned heap memory the driver never saw). A wrong address faults the device's
//! context, so run each mode in its own process. For every size the variants run interleaved,
//! one call each per round, on one queue without profiling, the same kernel each time:
//! - `read`: enqueue, a blocking read into pageable memory (the path before session 9);
//! - `pinned-spin`: enqueue, a non-blocking read into pinned memory, flush, spin on the read's
//!   event (clreduce's NVIDIA path since session 9, decisions section 49);
//! - `mailbox`: enqueue with the mailbox address, flush, spin on the sequence number;
//! - `mailbox-noflush`: the same without the flush.
//!
//! A mailbox that shows nothing within 2 ms is counted stale and the result read instead; the
//! kernel's event is waited on after the clock stops, so no command is left running. Each
//! line: median [quartiles] in us, fresh = calls whose mailbox showed the new value, and
//! whether every result had the read's bits.
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{
    Buffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_ONLY,
    CL_MEM_READ_WRITE, CL_MEM_USE_HOST_PTR,
};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_mem, CL_BLOCKING, CL_NON_BLOCKING};
use std::ffi::c_void;
use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const SRC: &str = r#"
#ifdef MB_NV
#define SYS_FENCE() asm volatile("membar.sys;" ::: "memory")
#else
#define SYS_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
#define WG 256
kernel void sum(global const float *x, uint n, global float *partial,
                global volatile uint *counter, global float *res, ulong mbox, uint seq) {
    local float sh[WG];
    local int last;
    uint lid = get_local_id(0), g = get_group_id(0), ng = get_num_groups(0);
    float a = 0.0f;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) a += x[i];
    sh[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) sh[lid] += sh[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (ng > 1) {
        if (lid == 0) {
            partial[g] = sh[0];
            mem_fence(CLK_GLOBAL_MEM_FENCE);
            last = atomic_inc(counter) == ng - 1;
            mem_fence(CLK_GLOBAL_MEM_FENCE);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!last) return;
        a = 0.0f;
        for (uint i = lid; i < ng; i += WG) a += ((global volatile float *)partial)[i];
        sh[lid] = a;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = WG / 2; s > 0; s >>= 1) {
            if (lid < s) sh[lid] += sh[lid + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    if (lid == 0) {
        if (ng > 1) *counter = 0;
        res[0] = sh[0];
        if (mbox != 0) {
            global volatile uint *m = (global volatile uint *)mbox;
            m[0] = as_uint(sh[0]);
            SYS_FENCE();
            m[1] = seq;
        }
    }
}
"#;

fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: usize| v[(v.len() * q / 4).min(v.len() - 1)];
    (at(2), at(1), at(3))
}

fn us(t: Instant) -> f64 {
    t.elapsed().as_nanos() as f64 / 1e3
}

/// Page-aligned host memory of `bytes` bytes inside a Vec (kept alive by the caller).
fn aligned(store: &mut Vec<u8>, bytes: usize) -> *mut c_void {
    *store = vec![0u8; bytes + 4096];
    let off = store.as_ptr().align_offset(4096);
    // SAFETY: off < 4096, so off + bytes is inside the Vec.
    unsafe { store.as_mut_ptr().add(off) as *mut c_void }
}

/// Spins on the mailbox's sequence number for up to `budget`; the value once seen.
fn spin_mailbox(mb: *mut u32, seq: u32, budget: Duration) -> Option<f32> {
    let t = Instant::now();
    while t.elapsed() < budget {
        // SAFETY: `mb` points to 2 live u32 of host memory the kernel may write.
        if unsafe { std::ptr::read_volatile(mb.add(1)) } == seq {
            fence(Ordering::Acquire);
            return Some(f32::from_bits(unsafe { std::ptr::read_volatile(mb) }));
        }
        std::hint::spin_loop();
    }
    None
}

struct Probe {
    q: CommandQueue,
    k: Kernel,
    x: Buffer<f32>,
    partial: Buffer<f32>,
    counter: Buffer<u32>,
    res: Buffer<f32>,
    n: u32,
    groups: usize,
}

impl Probe {
    fn launch(&self, mbox: u64, seq: u32) -> Res<Event> {
        // SAFETY: the arguments match the kernel's signature; the buffers outlive the launch.
        Ok(unsafe {
            ExecuteKernel::new(&self.k)
                .set_arg(&self.x)
                .set_arg(&self.n)
                .set_arg(&self.partial)
                .set_arg(&self.counter)
                .set_arg(&self.res)
                .set_arg(&mbox)
                .set_arg(&seq)
                .set_global_work_size(self.groups * 256)
                .set_local_work_size(256)
                .enqueue_nd_range(&self.q)?
        })
    }
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let want = args.first().cloned().unwrap_or_else(|| "NVIDIA".into());
    let mode = args.get(1).cloned().unwrap_or_else(|| "pinned".into());
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    let sizes: Vec<usize> = if args.len() > 3 {
        args[3..].iter().filter_map(|s| s.parse().ok()).collect()
    } else {
        vec![1 << 10, 1 << 20]
    };
    let mut found = None;
    for p in get_platforms()? {
        for d in p.get_devices(CL_DEVICE_TYPE_ALL)? {
            let label = format!("{} / {}", p.name()?, Device::new(d).name()?);
            if found.is_none() && label.contains(&want) {
                found = Some((d, label));
            }
        }
    }
    let (id, label) = found.ok_or("no OpenCL device matches")?;
    let dev = Device::new(id);
    let ctx = Context::from_device(&dev)?;
    #[allow(deprecated)]
    let q = CommandQueue::create_default(&ctx, 0)?;
    let nv = label.contains("NVIDIA");
    let prog = Program::create_and_build_from_source(&ctx, SRC, if nv { "-DMB_NV" } else { "" })?;
    println!("{label}, mailbox in {mode} memory ({reps} rounds, medians [quartiles])");

    // The mailbox: 2 u32 (value bits, sequence number) the kernel stores to by address.
    let mut store = Vec::new();
    let mut pinned_buf = None;
    let mut use_host_buf = None;
    let mb: *mut u32 = match mode.as_str() {
        "pinned" => {
            // SAFETY: a new 4 KiB buffer, mapped blocking; unmapped before it is released.
            let b = unsafe {
                Buffer::<u32>::create(
                    &ctx,
                    CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                    1024,
                    std::ptr::null_mut(),
                )?
            };
            let mut p: cl_mem = std::ptr::null_mut();
            unsafe {
                q.enqueue_map_buffer(
                    &b,
                    CL_BLOCKING,
                    CL_MAP_READ | CL_MAP_WRITE,
                    0,
                    4096,
                    &mut p,
                    &[],
                )?;
            }
            pinned_buf = Some(b);
            p as *mut u32
        }
        "usehost" => {
            let p = aligned(&mut store, 4096);
            // SAFETY: p points to 4096 bytes that outlive the buffer.
            use_host_buf = Some(unsafe {
                Buffer::<u32>::create(&ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 1024, p)?
            });
            p as *mut u32
        }
        "heap" => aligned(&mut store, 4096) as *mut u32,
        _ => return Err("MODE: pinned, usehost or heap".into()),
    };
    // SAFETY: 2 u32 inside the mailbox's 4 KiB.
    unsafe {
        std::ptr::write_volatile(mb, 0);
        std::ptr::write_volatile(mb.add(1), 0);
    }
    let mbox = mb as u64;
    // Staging for the pinned-spin variant: a second pinned buffer, mapped once.
    // SAFETY: as for the pinned mailbox.
    let staging = unsafe {
        Buffer::<f32>::create(
            &ctx,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            16,
            std::ptr::null_mut(),
        )?
    };
    let mut stage_ptr: cl_mem = std::ptr::null_mut();
    unsafe {
        q.enqueue_map_buffer(
            &staging,
            CL_BLOCKING,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            64,
            &mut stage_ptr,
            &[],
        )?;
    }
    let stage = stage_ptr as *mut f32;

    let mut seq = 0u32;
    for n in sizes {
        let mut s = 0x2545_f491_4f6c_dd1du64 ^ n as u64;
        let mut data: Vec<f32> = (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        let host: f64 = data.iter().map(|&v| v as f64).sum();
        let groups = (n / 2048).clamp(1, 512);
        // SAFETY: COPY_HOST_PTR copies n floats from `data`, which lives through the call.
        let p = unsafe {
            Probe {
                x: Buffer::<f32>::create(
                    &ctx,
                    CL_MEM_READ_ONLY | opencl3::memory::CL_MEM_COPY_HOST_PTR,
                    n,
                    data.as_mut_ptr() as *mut c_void,
                )?,
                partial: Buffer::<f32>::create(&ctx, CL_MEM_READ_WRITE, 512, std::ptr::null_mut())?,
                counter: Buffer::<u32>::create(
                    &ctx,
                    CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_COPY_HOST_PTR,
                    1,
                    [0u32].as_mut_ptr() as *mut c_void,
                )?,
                res: Buffer::<f32>::create(&ctx, CL_MEM_READ_WRITE, 1, std::ptr::null_mut())?,
                q: {
                    #[allow(deprecated)]
                    let q2 = CommandQueue::create_default(&ctx, 0)?;
                    q2
                },
                k: Kernel::create(&prog, "sum")?,
                n: n as u32,
                groups,
            }
        };
        // The probe a library would run once per queue: one launch, then is the mailbox
        // fresh (a) by spinning within 2 ms, (b) after the event completed?
        seq += 1;
        let t = Instant::now();
        let ev = p.launch(mbox, seq)?;
        p.q.flush()?;
        let spun = spin_mailbox(mb, seq, Duration::from_millis(2));
        let spun_us = us(t);
        ev.wait()?;
        let after = unsafe { std::ptr::read_volatile(mb.add(1)) } == seq;
        let mut want = [0f32];
        unsafe {
            p.q.enqueue_read_buffer(&p.res, CL_BLOCKING, 0, &mut want, &[])?
        };
        println!(
            "n={n:<8} groups={groups:<3} probe: spin saw it {} ({spun_us:.1} us), after the event {}, value {} (read {}, f64 host {host:.4})",
            spun.is_some(),
            after,
            spun.map(|v| v.to_string()).unwrap_or("-".into()),
            want[0]
        );
        let want = want[0];
        let names = ["read", "pinned-spin", "mailbox", "mailbox-noflush"];
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        let (mut fresh, mut same) = ([0usize; 4], [true; 4]);
        for r in 0..reps + 20 {
            for j in 0..names.len() {
                let v = (r + j) % names.len();
                seq += 1;
                let t0 = Instant::now();
                let (got, ev, ok) = match v {
                    0 => {
                        let ev = p.launch(0, seq)?;
                        let mut out = [0f32];
                        unsafe {
                            p.q.enqueue_read_buffer(&p.res, CL_BLOCKING, 0, &mut out, &[])?
                        };
                        (out[0], ev, true)
                    }
                    1 => {
                        let ev = p.launch(0, seq)?;
                        // SAFETY: `stage` is the 16-float mapping of `staging`, used by this read alone.
                        let out = unsafe { std::slice::from_raw_parts_mut(stage, 1) };
                        let rd = unsafe {
                            p.q.enqueue_read_buffer(&p.res, CL_NON_BLOCKING, 0, out, &[])?
                        };
                        p.q.flush()?;
                        let t = Instant::now();
                        while rd.command_execution_status()?.0 != CL_COMPLETE
                            && t.elapsed() < Duration::from_millis(2)
                        {
                            std::hint::spin_loop();
                        }
                        rd.wait()?;
                        (out[0], ev, true)
                    }
                    _ => {
                        let ev = p.launch(mbox, seq)?;
                        if v == 2 {
                            p.q.flush()?;
                        }
                        match spin_mailbox(mb, seq, Duration::from_millis(2)) {
                            Some(x) => (x, ev, true),
                            None => {
                                let mut out = [0f32];
                                unsafe {
                                    p.q.enqueue_read_buffer(&p.res, CL_BLOCKING, 0, &mut out, &[])?
                                };
                                (out[0], ev, false)
                            }
                        }
                    }
                };
                let dt = us(t0);
                ev.wait()?;
                if r >= 20 {
                    times[v].push(dt);
                    fresh[v] += ok as usize;
                    same[v] &= got.to_bits() == want.to_bits();
                }
            }
        }
        for (v, name) in names.iter().enumerate() {
            let (m, a, b) = quartiles(std::mem::take(&mut times[v]));
            println!(
                "n={n:<8} {name:<16} {m:>7.2} us [{a:>6.2} {b:>6.2}]  fresh {}/{reps}  same bits {}",
                fresh[v], same[v]
            );
        }
        p.q.finish()?;
    }
    q.finish()?;
    if let Some(b) = &pinned_buf {
        unsafe { q.enqueue_unmap_mem_object(b.get(), mb as *mut c_void, &[])? };
    }
    unsafe { q.enqueue_unmap_mem_object(staging.get(), stage_ptr, &[])? };
    q.finish()?;
    drop(use_host_buf);
    Ok(())
}
