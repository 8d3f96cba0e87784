//! Devices: capability translation from every real device present (cross-checked with
//! `clinfo --raw` and with what each platform is known to have), the process-wide program
//! cache, and thread-safety of the public handles. Device selection is in tests/select.rs.
//!
//! Checks keyed by platform run only when that platform is present; otherwise they print
//! `SKIP <device> <check>: <reason>`.

mod common;

use clreduce::caps::{DeviceKind, Space};
use clreduce::check::reference::{check, combination_depth, random_input, reference};
use clreduce::plan::Strategy;
use clreduce::DynBuffer;
use clreduce::{
    devices, reduction, Buffer, Device, ElemType, Error, Kernel, Mask, NdRange, Op, Options, Queue,
    Range,
};
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::{Arc, Barrier, Mutex, MutexGuard};

// ---- Send + Sync --------------------------------------------------------------------------

const fn assert_send_sync<T: Send + Sync>() {}
const _: () = {
    assert_send_sync::<Queue>();
    assert_send_sync::<Buffer<f32>>();
    assert_send_sync::<Buffer<i64>>();
    assert_send_sync::<Buffer<clreduce::Half>>();
    assert_send_sync::<DynBuffer>();
    assert_send_sync::<Device>();
    assert_send_sync::<Error>();
};

#[test]
fn queue_and_buffer_cross_threads() {
    // The static assertions above are the real test; this one also uses a queue and a buffer
    // made on one thread from another.
    let q = queues()
        .iter()
        .find(|q| !q.device().is_simulator())
        .expect("a non-simulator device")
        .clone();
    let b = q.buffer_from(&[1i32, 2, 3]).unwrap();
    let got = std::thread::spawn(move || {
        b.write(1, &[20]).unwrap();
        let q2 = q.clone();
        q2.finish().unwrap();
        b.to_vec().unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(got, vec![1, 20, 3]);
}

// ---- capability translation ---------------------------------------------------------------

/// One device's `clinfo --raw` answers: key -> value.
type ClinfoDevice = BTreeMap<String, String>;

/// `clinfo --raw`, as (platform, device name) -> key -> value.
fn clinfo() -> Result<BTreeMap<(String, String), ClinfoDevice>, String> {
    let out = Command::new("clinfo")
        .arg("--raw")
        .output()
        .map_err(|e| format!("clinfo not runnable: {e}"))?;
    if !out.status.success() {
        return Err(format!("clinfo exited with {}", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut platforms: BTreeMap<String, String> = BTreeMap::new();
    let mut devs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((tag, rest)) = rest.split_once(']') else {
            continue;
        };
        let rest = rest.trim();
        let (key, value) = match rest.split_once(char::is_whitespace) {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (rest, ""),
        };
        let (plat, idx) = tag.split_once('/').unwrap_or((tag, ""));
        if idx == "*" {
            if key == "CL_PLATFORM_NAME" {
                platforms.insert(plat.to_string(), value.to_string());
            }
            continue;
        }
        devs.entry(tag.to_string())
            .or_default()
            .insert(key.to_string(), value.to_string());
    }
    let mut out = BTreeMap::new();
    for (tag, kv) in devs {
        let plat = tag.split('/').next().unwrap_or("");
        let (Some(pname), Some(dname)) = (platforms.get(plat), kv.get("CL_DEVICE_NAME")) else {
            continue;
        };
        out.insert((pname.clone(), dname.trim().to_string()), kv);
    }
    Ok(out)
}

#[test]
fn caps_agree_with_clinfo() {
    let mut tally = Tally::new("caps_agree_with_clinfo");
    let info = match clinfo() {
        Ok(i) => i,
        Err(why) => {
            for d in devices().unwrap() {
                tally.skip(&short(d), "clinfo comparison", &why);
            }
            // Nothing to compare with: the remaining checks of this file still run.
            eprintln!("SUMMARY caps_agree_with_clinfo: skipped ({why})");
            return;
        }
    };
    for d in devices().unwrap() {
        let dev = short(d);
        let caps = d.caps().unwrap();
        let Some(kv) = info.get(&(d.platform().to_string(), d.name().to_string())) else {
            tally.skip(
                &dev,
                "clinfo comparison",
                "clinfo does not list this device",
            );
            continue;
        };
        let mut cmp =
            |what: &str, ours: String, key: &str, map: &dyn Fn(&str) -> String| match kv.get(key) {
                None => tally.skip(&dev, what, &format!("clinfo has no {key}")),
                Some(v) if map(v) == ours => tally.pass(&dev),
                Some(v) => tally.fail(
                    &dev,
                    what,
                    &format!("clreduce {ours:?}, clinfo {key} = {v:?}"),
                ),
            };
        let first = |v: &str| v.split_whitespace().next().unwrap_or("").to_string();
        cmp(
            "compute units",
            caps.compute_units.to_string(),
            "CL_DEVICE_MAX_COMPUTE_UNITS",
            &first,
        );
        cmp(
            "max work-group size",
            caps.max_work_group_size.to_string(),
            "CL_DEVICE_MAX_WORK_GROUP_SIZE",
            &first,
        );
        cmp(
            "local memory",
            caps.local_mem_size.to_string(),
            "CL_DEVICE_LOCAL_MEM_SIZE",
            &first,
        );
        cmp(
            "max allocation",
            caps.max_alloc.to_string(),
            "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
            &first,
        );
        let set = |v: &str| {
            v.split_whitespace()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(" ")
        };
        cmp(
            "extensions",
            set(&caps.extensions.join(" ")),
            "CL_DEVICE_EXTENSIONS",
            &set,
        );
        let kind = match caps.kind {
            DeviceKind::Gpu => "CL_DEVICE_TYPE_GPU",
            DeviceKind::Cpu => "CL_DEVICE_TYPE_CPU",
            DeviceKind::Accelerator => "CL_DEVICE_TYPE_ACCELERATOR",
            DeviceKind::Other => "other",
        };
        cmp(
            "device type",
            "true".into(),
            "CL_DEVICE_TYPE",
            &|v: &str| v.contains(kind).to_string(),
        );
        let probed_away = |what: &str| caps.removed.iter().any(|r| r.contains(what));
        if !probed_away("work-group collective") {
            cmp(
                "work-group collectives",
                caps.work_group_collectives.to_string(),
                "CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT",
                &|v: &str| (v == "CL_TRUE").to_string(),
            );
        }
        if let Some(sg) = &caps.sub_groups {
            cmp(
                "max sub-groups",
                sg.max_sub_groups.to_string(),
                "CL_DEVICE_MAX_NUM_SUB_GROUPS",
                &first,
            );
            if !sg.sizes.is_empty() {
                cmp(
                    "sub-group sizes",
                    sg.sizes
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                    "CL_DEVICE_SUB_GROUP_SIZES_INTEL",
                    &|v: &str| v.to_string(),
                );
            }
        }
        let has = |ext: &str| {
            kv.get("CL_DEVICE_EXTENSIONS")
                .is_some_and(|e| e.split_whitespace().any(|x| x == ext))
        };
        if !probed_away("int64 base") {
            if caps.atomics.int64_base == has("cl_khr_int64_base_atomics") {
                tally.pass(&dev)
            } else {
                tally.fail(
                    &dev,
                    "int64 base atomics",
                    "differs from clinfo's extensions",
                )
            }
        }
        if !probed_away("double precision") {
            let feat = kv
                .get("CL_DEVICE_OPENCL_C_FEATURES")
                .is_some_and(|f| f.contains("__opencl_c_fp64"));
            if caps.fp64 == (has("cl_khr_fp64") || feat) {
                tally.pass(&dev)
            } else {
                tally.fail(&dev, "fp64", "differs from clinfo")
            }
        }
    }
    tally.finish();
}

/// Facts each platform is known to have (as `clreduce devices` and clinfo report them here).
#[test]
fn caps_per_platform() {
    let mut tally = Tally::new("caps_per_platform");
    let mut seen = BTreeSet::new();
    for d in devices().unwrap() {
        let dev = short(d);
        let c = d.caps().unwrap();
        let mut t = |what: &str, ok: bool| {
            if ok {
                tally.pass(&dev)
            } else {
                tally.fail(&dev, what, &format!("caps: {c:?}"))
            }
        };
        // Every device.
        t("compute units > 0", c.compute_units > 0);
        t("max work-group size > 0", c.max_work_group_size > 0);
        t(
            "work-item sizes",
            c.max_work_item_sizes.first().is_some_and(|&s| s > 0),
        );
        t("local memory > 0", c.local_mem_size > 0);
        t("preferred multiple >= 1", c.preferred_wg_multiple >= 1);
        t(
            "label",
            c.label().contains(d.name()) && c.label().contains(d.platform()),
        );
        t("caps are stable", d.caps().unwrap() == c);
        t(
            "32-bit global atomics (core since OpenCL 1.1)",
            c.atomics.int32_global_base && c.atomics.int32_global_ext,
        );
        if !c.removed.is_empty() {
            eprintln!("NOTE {dev}: removed by probes: {:?}", c.removed);
        }
        let p = d.platform();
        if p.contains("Portable Computing Language") {
            seen.insert("PoCL");
            t("PoCL is a CPU", c.kind == DeviceKind::Cpu);
            t(
                "PoCL has int64 atomics",
                c.atomics.int64_base && c.atomics.int64_ext,
            );
            t(
                "PoCL 64-bit atomics usable",
                c.fast_atomic(Op::Maximum, ElemType::U64, Space::Global)
                    && c.fast_atomic(Op::Plus, ElemType::I64, Space::Local),
            );
            // The rest describes Debian 12's PoCL 3.1 (this project's CI); the GPU machine's
            // PoCL 5 has sub-groups and float atomics, a profile of its own.
            let pocl3 = c.driver.starts_with("3.");
            for ty in [ElemType::F32, ElemType::F64] {
                for sp in [Space::Global, Space::Local] {
                    t(
                        "PoCL has no float atomics",
                        !pocl3
                            || !c.fast_atomic(Op::Plus, ty, sp)
                                && !c.fast_atomic(Op::Minimum, ty, sp),
                    );
                }
            }
            t("PoCL: no work-group collectives", !c.work_group_collectives);
            t("PoCL 3: no sub-groups", !pocl3 || c.sub_groups.is_none());
            t("PoCL: fp64", c.fp64);
            t("PoCL: OpenCL C 2.0 atomics", c.c11_atomics());
            t(
                "PoCL: serial last-group workaround",
                c.workarounds.serial_last_group_tree == pocl3 && !c.workarounds.no_restrict,
            );
            t(
                "PoCL: reads poll their event",
                c.workarounds.poll_read && !c.workarounds.wait_before_read,
            );
            t(
                "PoCL: compute units = CPU threads",
                std::thread::available_parallelism()
                    .map(|n| n.get() as u32 == c.compute_units)
                    .unwrap_or(true),
            );
        } else if p.contains("Intel") {
            seen.insert("Intel");
            t("Intel is a CPU", c.kind == DeviceKind::Cpu);
            t("Intel: work-group collectives", c.work_group_collectives);
            t(
                "Intel: sub-groups with sizes",
                c.sub_groups.as_ref().is_some_and(|s| {
                    !s.sizes.is_empty() && s.max_sub_groups > 0 && s.non_uniform_arithmetic
                }),
            );
            t(
                "Intel: fp32 atomics",
                c.fast_atomic(Op::Plus, ElemType::F32, Space::Global)
                    && c.fast_atomic(Op::Maximum, ElemType::F32, Space::Local),
            );
            t(
                "Intel: int64 atomics",
                c.atomics.int64_base && c.atomics.int64_ext,
            );
            t("Intel: fp64 and fp16", c.fp64 && c.fp16);
            t("Intel: OpenCL C 3.0", c.opencl_c_version >= (3, 0));
            t("Intel: OpenCL C 2.0 atomics", c.c11_atomics());
            t(
                "Intel: wg_reduce for sum/min/max/land/lor only",
                c.wg_reduce(Op::Plus, ElemType::F64)
                    && c.wg_reduce(Op::LogicalOr, ElemType::I32)
                    && !c.wg_reduce(Op::Multiplies, ElemType::I32)
                    && !c.wg_reduce(Op::BitXor, ElemType::U32),
            );
        } else if p.contains("Oclgrind") {
            seen.insert("Oclgrind");
            t("Oclgrind is a simulator", d.is_simulator());
            t("Oclgrind: OpenCL 1.2", c.opencl_version == (1, 2));
            t("Oclgrind: no OpenCL C 2.0 atomics", !c.c11_atomics());
            t("Oclgrind: no collectives", !c.work_group_collectives);
            t("Oclgrind: no sub-groups", c.sub_groups.is_none());
            t("Oclgrind: no float atomics", !c.atomics.f32_global_add);
            t("Oclgrind: restrict workaround", c.workarounds.no_restrict);
            t("Oclgrind: one compute unit", c.compute_units == 1);
        } else {
            eprintln!("NOTE {dev}: no platform-specific expectations for {p}");
        }
    }
    for p in ["PoCL", "Intel", "Oclgrind"] {
        if !seen.contains(p) {
            tally.skip(p, "platform facts", "platform not present on this machine");
        }
    }
    tally.finish();
}

#[test]
fn masks_only_remove_on_real_devices() {
    let _sim = sim_serial();
    for d in devices().unwrap() {
        let c = d.caps().unwrap();
        for name in Mask::NAMES {
            let q = Queue::with_mask(d, Mask::parse(name).unwrap()).unwrap();
            let m = q.caps();
            assert!(m.removed.iter().any(|r| r.starts_with(name)), "{name}");
            assert!(!m.c11_atomics() || c.c11_atomics());
            for op in Op::ALL {
                for ty in ElemType::REDUCIBLE {
                    for sp in [Space::Global, Space::Local] {
                        assert!(!m.fast_atomic(op, ty, sp) || c.fast_atomic(op, ty, sp));
                    }
                    assert!(!m.wg_reduce(op, ty) || c.wg_reduce(op, ty));
                    assert!(!m.sg_reduce(op, ty) || c.sg_reduce(op, ty));
                }
            }
        }
        // The device's own caps are untouched by masked queues.
        assert_eq!(d.caps().unwrap(), c);
    }
}

// ---- the program cache --------------------------------------------------------------------

/// `compiled_count` is process-wide: the tests of this file that compile through the cache
/// hold this lock, so counts are not disturbed by each other.
fn cache_lock() -> MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `sum += x[i]`-style reductions with `body` and checks the result.
fn sum_i32(q: &Queue, body: &str, form: clreduce::Form, data: &[i32]) -> Result<(), String> {
    let x = q.buffer_from(data).map_err(|e| e.to_string())?;
    let res = q.buffer_from(&[0i32]).map_err(|e| e.to_string())?;
    let ev = q
        .parallel_for_reduce_with(
            form,
            reduction(&res, Op::Plus).initialize_to_identity(),
            Kernel::new(body).arg("x", &x),
            Options::default().strategy(Strategy::AUTO),
        )
        .map_err(|e| e.to_string())?;
    ev.wait().map_err(|e| e.to_string())?;
    let got = res.get(0).map_err(|e| e.to_string())?;
    let want = data.iter().fold(0i32, |a, &b| a.wrapping_add(b));
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got}, want {want}"))
    }
}

#[test]
fn second_identical_launch_does_not_compile() {
    let _g = cache_lock();
    for q in queues() {
        let _s = sim_lock(q.device());
        let dev = short(q.device());
        let body = "/* tests/device.rs second_identical_launch */ sum += x[i];";
        let data: Vec<i32> = (0..1000).map(|i| i * 7 - 3000).collect();
        let c0 = clreduce::compiled_programs();
        sum_i32(q, body, Range::new(1000).into(), &data).unwrap_or_else(|e| panic!("{dev}: {e}"));
        let c1 = clreduce::compiled_programs();
        assert_eq!(c1, c0 + 1, "{dev}: the first launch compiles once");
        sum_i32(q, body, Range::new(1000).into(), &data).unwrap_or_else(|e| panic!("{dev}: {e}"));
        // Another size of the same range form reuses the program too.
        sum_i32(q, body, Range::new(999).into(), &data[..999]).unwrap();
        assert_eq!(
            clreduce::compiled_programs(),
            c1,
            "{dev}: identical launches reuse it"
        );
        // A second queue on the same device shares the cache.
        let q2 = Queue::with_mask(q.device(), Mask::default()).unwrap();
        sum_i32(&q2, body, Range::new(1000).into(), &data).unwrap();
        assert_eq!(
            clreduce::compiled_programs(),
            c1,
            "{dev}: other queues reuse it"
        );
        // A different work-group size is a different program.
        sum_i32(q, body, NdRange::new(1000, 8).into(), &data).unwrap();
        assert_eq!(
            clreduce::compiled_programs(),
            c1 + 1,
            "{dev}: new geometry compiles"
        );
        sum_i32(q, body, NdRange::new(1000, 8).into(), &data).unwrap();
        assert_eq!(clreduce::compiled_programs(), c1 + 1, "{dev}");
        eprintln!("{dev}: program cache ok");
    }
}

#[test]
fn concurrent_identical_first_launches_compile_once() {
    let _g = cache_lock();
    let mut tally = Tally::new("concurrent_identical_first_launches_compile_once");
    for base in queues() {
        let dev = short(base.device());
        if base.device().is_simulator() {
            // Oclgrind aborts when two threads run kernels at once (see tests/common).
            tally.skip(
                &dev,
                "8 concurrent first launches",
                "Oclgrind cannot run kernels from several threads at once",
            );
            continue;
        }
        // Unique per device so the cache starts cold for each.
        let body = format!(
            "/* tests/device.rs concurrent first launch on device {} */ sum += x[i];",
            base.device().index()
        );
        let data: Arc<Vec<i32>> = Arc::new((0..100_003).map(|i| (i % 1013) - 500).collect());
        let threads = 8;
        let barrier = Arc::new(Barrier::new(threads));
        let c0 = clreduce::compiled_programs();
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                // Half share the test's queue, half make their own on the same device.
                let q = if k % 2 == 0 {
                    base.clone()
                } else {
                    Queue::with_mask(base.device(), Mask::default()).unwrap()
                };
                let body = body.clone();
                let data = data.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    sum_i32(&q, &body, Range::new(data.len() as u64).into(), &data)
                })
            })
            .collect();
        for h in handles {
            match h.join().unwrap() {
                Ok(()) => tally.pass(&dev),
                Err(e) => tally.fail(&dev, "concurrent launch", &e),
            }
        }
        let compiled = clreduce::compiled_programs() - c0;
        if compiled == 1 {
            tally.pass(&dev);
        } else {
            tally.fail(
                &dev,
                "compile once",
                &format!("{threads} identical first launches compiled {compiled} programs"),
            );
        }
    }
    tally.finish();
}

#[test]
fn failed_builds_are_not_cached() {
    let _g = cache_lock();
    let q = queues()
        .iter()
        .find(|q| !q.device().is_simulator())
        .unwrap();
    let data = [1i32, 2, 3];
    let c0 = clreduce::compiled_programs();
    for _ in 0..2 {
        let x = q.buffer_from(&data).unwrap();
        let res = q.buffer_from(&[5i32]).unwrap();
        let e = q
            .parallel_for_reduce_with(
                Range::new(3),
                reduction(&res, Op::Plus),
                Kernel::new("sum += x[i] + not_declared_anywhere;").arg("x", &x),
                Options::default(),
            )
            .expect_err("does not compile");
        assert!(matches!(e, Error::BodyBuild { .. }), "{e}");
        assert_eq!(res.get(0).unwrap(), 5);
    }
    assert_eq!(clreduce::compiled_programs(), c0);
}

/// A float reduction through a second queue thread-shares scratch with the first: results of
/// interleaved launches from two threads on one queue stay right.
#[test]
fn interleaved_launches_on_one_queue() {
    let _g = cache_lock();
    for q in queues().iter().filter(|q| !q.device().is_simulator()) {
        let q = q.clone();
        let data = random_input(Op::Plus, ElemType::F32, 50_001, 3);
        let expect = reference(Op::Plus, &data, None);
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                let data = data.clone();
                std::thread::spawn(move || {
                    let x = DynBuffer::upload(&q, &data).unwrap();
                    for _ in 0..5 {
                        let res = q.buffer_from(&[123.0f32]).unwrap();
                        let ev = q
                            .parallel_for_reduce_with(
                                Range::new(50_001),
                                reduction(&res, Op::Plus).initialize_to_identity(),
                                Kernel::new("/* interleaved */ sum += x[i];").arg("x", &x),
                                Options::default(),
                            )
                            .unwrap();
                        let depth = combination_depth(ev.plan().unwrap(), 0);
                        let got = res.get(0).unwrap();
                        check(Op::Plus, ElemType::F32, got as f64, None, &expect, depth).unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }
}

/// `Queue` is `Send + Sync`, and on Oclgrind two threads driving one queue (or one queue each)
/// used to crash the process: SIGSEGV in `oclgrind::Memory::store` racing
/// `Memory::allocateBuffer`/`deallocateBuffer`, or the abort `Context::notifyKernelBegin:
/// Assertion m_kernelInvocation == NULL`. Oclgrind keeps its state (global memory, command
/// bookkeeping, reference counts) without locks and runs queued commands in whichever thread
/// finishes or waits. `Workarounds::serialize_device` now makes clreduce run every command of
/// such a device, and finish it, under one process-wide lock (design/errors.md).
///
/// Here 3 threads x 20 checked reductions (sum, min, max; range and nd_range; with and without
/// `initialize_to_identity`; waiting on the event or reading straight away) run on one shared
/// queue, then on one queue per thread. The threads take no lock of their own; the test holds
/// `sim_serial` only to keep the other tests' simulator work (and their program builds, which
/// are outside the device lock) away, and `cache_lock` because it compiles.
#[test]
fn oclgrind_queue_from_two_threads() {
    let Some(q) = queues().iter().find(|q| q.device().is_simulator()) else {
        eprintln!("SKIP oclgrind_queue_from_two_threads: no simulator device");
        return;
    };
    let _g = cache_lock();
    let _s = sim_serial();
    const THREADS: usize = 3;
    const PER_THREAD: usize = 20;
    let d = q.device().clone();
    for own_queue in [false, true] {
        let what = if own_queue {
            "one queue per thread"
        } else {
            "one shared queue"
        };
        let t0 = std::time::Instant::now();
        let failures: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (d, shared) = (&d, q);
                    s.spawn(move || {
                        let q = if own_queue {
                            Queue::with_mask(d, Mask::default()).unwrap()
                        } else {
                            shared.clone()
                        };
                        (0..PER_THREAD)
                            .filter_map(|k| oclgrind_case(&q, t, k).err())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter()
                .flat_map(|h| {
                    h.join()
                        .unwrap_or_else(|_| vec!["a thread panicked".into()])
                })
                .collect()
        });
        eprintln!(
            "Oclgrind, {what}: {} reductions from {THREADS} threads in {:.1} s",
            THREADS * PER_THREAD,
            t0.elapsed().as_secs_f64()
        );
        assert!(failures.is_empty(), "{what}: {failures:#?}");
    }
}

/// One small checked i32 reduction for `oclgrind_queue_from_two_threads`.
fn oclgrind_case(q: &Queue, t: usize, k: usize) -> Result<(), String> {
    let n = 48 + (t * 37 + k * 11) % 160;
    let data: Vec<i32> = (0..n as i32)
        .map(|i| (i * 7919 + (t * 31 + k) as i32 * 104_729) % 2001 - 1000)
        .collect();
    let op = [Op::Plus, Op::Minimum, Op::Maximum][k % 3];
    let init = 5 - (k as i32);
    let to_identity = k.is_multiple_of(2);
    let x = q.buffer_from(&data).map_err(|e| e.to_string())?;
    let res = q.buffer_from(&[0i32]).map_err(|e| e.to_string())?;
    res.write(0, &[init]).map_err(|e| e.to_string())?;
    let mut r = reduction(&res, op);
    if to_identity {
        r = r.initialize_to_identity();
    }
    let body = if op == Op::Plus {
        "sum += x[i];"
    } else {
        "combine(sum, x[i]);"
    };
    let (form, used): (clreduce::Form, usize) = if k % 4 == 3 {
        (NdRange::new((n / 16 * 16) as u64, 16).into(), n / 16 * 16)
    } else {
        (Range::new(n as u64).into(), n)
    };
    let ev = q
        .parallel_for_reduce_with(form, r, Kernel::new(body).arg("x", &x), Options::default())
        .map_err(|e| format!("thread {t} launch {k}: {e}"))?;
    if k % 3 == 1 {
        ev.wait().map_err(|e| e.to_string())?;
    }
    if k % 5 == 4 {
        q.finish().map_err(|e| e.to_string())?;
    }
    let got = res.get(0).map_err(|e| e.to_string())?;
    let vals = data[..used].iter().copied();
    let want = match (op, to_identity) {
        (Op::Plus, true) => vals.fold(0i32, i32::wrapping_add),
        (Op::Plus, false) => vals.fold(init, i32::wrapping_add),
        (Op::Minimum, true) => vals.fold(i32::MAX, i32::min),
        (Op::Minimum, false) => vals.fold(init, i32::min),
        (_, true) => vals.fold(i32::MIN, i32::max),
        (_, false) => vals.fold(init, i32::max),
    };
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "thread {t} launch {k}: {op} n={used} init_to_identity={to_identity}: got {got}, want {want}"
        ))
    }
}
