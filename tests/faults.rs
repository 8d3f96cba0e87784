//! Failures the devices here never produce by themselves, forced on every device (Oclgrind
//! included) through the test-only fault injection `Queue::__inject_fault` (hidden; nothing
//! else arms a fault, design/decisions.md, "A launch that died"):
//!
//! - out of device memory during a launch or a read is `Error::OutOfDeviceMemory` with its
//!   fields, the variables read back unchanged, and the queue still computes exactly;
//! - a launch that died (its next enqueue failed after the main kernel ran; or its kernel
//!   reported a failed status, seen by `wait` or only by the next launch) leaves the counter
//!   and partial slots of the queue's scratch memory stale, and the next launch on the same
//!   queue is still exact because the queue rebuilt them;
//! - the control: the same stale state left without a reported failure makes the next
//!   last-group launch wrong, so the tests above can fail.
//!
//! Each case uses its own queue (a fault belongs to one queue) and one i64 sum over an
//! nd_range of 48 work-groups of 64, checked exactly.

use crate::common;

use clreduce::plan::{CrossAlgo, GroupAlgo, Strategy};
use clreduce::{
    devices, reduction, Buffer, Device, Error, Fault, Kernel, Mask, NdRange, Op, Options, Queue,
    ReduceEvent,
};
use common::{short, sim_lock, Tally};

const START: i64 = 1_000_000_007;
const LOCAL: usize = 64;
const GROUPS: u64 = 48;
const N: u64 = GROUPS * LOCAL as u64;
const CL_MEM_OBJECT_ALLOCATION_FAILURE: i32 = -4;
const CL_OUT_OF_RESOURCES: i32 = -5;

/// x[i] = 3i + 1 and its exact sum.
fn input() -> (Vec<i64>, i64) {
    let x: Vec<i64> = (0..N as i64).map(|i| 3 * i + 1).collect();
    let s = x.iter().sum();
    (x, s)
}

/// The strategies a case runs under on `q`: last-group and extra-pass (the two that keep state
/// in the scratch memory), and the automatic one.
fn strategies() -> [(Strategy, &'static str); 3] {
    [
        (
            Strategy::new(GroupAlgo::Tree, CrossAlgo::LastGroup),
            "tree+last-group",
        ),
        (
            Strategy::new(GroupAlgo::Tree, CrossAlgo::ExtraPass),
            "tree+extra-pass",
        ),
        (Strategy::AUTO, "auto"),
    ]
}

/// One launch: `sum += x[i]` into `res` under `strategy`.
fn launch(
    q: &Queue,
    res: &Buffer<i64>,
    x: &Buffer<i64>,
    strategy: Strategy,
    init: bool,
) -> clreduce::Result<ReduceEvent> {
    let mut r = reduction(res, Op::Plus);
    if init {
        r = r.initialize_to_identity();
    }
    q.parallel_for_reduce_with(
        NdRange::new(N, LOCAL),
        r,
        Kernel::new("sum += x[i];").arg("x", x),
        Options::default().strategy(strategy),
    )
}

/// A fresh queue on `d` with its result and input buffers.
struct Setup {
    q: Queue,
    res: Buffer<i64>,
    x: Buffer<i64>,
    sum: i64,
}

fn setup(d: &Device) -> Setup {
    let q = Queue::with_mask(d, Mask::default()).expect("queue");
    let (data, sum) = input();
    let res = q.buffer_from(&[START]).unwrap();
    let x = q.buffer_from(&data).unwrap();
    Setup { q, res, x, sum }
}

impl Setup {
    fn want(&self, init: bool) -> i64 {
        if init {
            self.sum
        } else {
            START + self.sum
        }
    }

    /// A launch that must succeed and give the exact sum; the result is set back to START.
    fn exact(&self, strategy: Strategy, init: bool) -> Result<(), String> {
        self.res.write(0, &[START]).map_err(|e| e.to_string())?;
        launch(&self.q, &self.res, &self.x, strategy, init).map_err(|e| e.to_string())?;
        let got = self.res.get(0).map_err(|e| e.to_string())?;
        self.res.write(0, &[START]).map_err(|e| e.to_string())?;
        if got == self.want(init) {
            Ok(())
        } else {
            Err(format!("got {got}, want {}", self.want(init)))
        }
    }

    /// The result still holds START.
    fn unchanged(&self, after: &str) -> Result<(), String> {
        match self.res.get(0) {
            Ok(START) => Ok(()),
            Ok(v) => Err(format!("the result changed after {after}: {v}")),
            Err(e) => Err(format!("reading the result after {after}: {e}")),
        }
    }
}

/// Runs `case` on every device for every strategy it can run and both `init` settings,
/// recording an unsupported strategy as a skip (with the planner's reason).
fn each_case(test: &str, case: impl Fn(&Setup, Strategy, bool) -> Result<(), String>) {
    let mut tally = Tally::new(test);
    for d in devices().expect("devices") {
        let _sim = sim_lock(d);
        let dev = short(d);
        let s = setup(d);
        for (strategy, name) in strategies() {
            for init in [false, true] {
                let what = format!("{name} init={init}");
                let plan = s.q.explain(
                    NdRange::new(N, LOCAL),
                    reduction(&s.res, Op::Plus),
                    Options::default().strategy(strategy),
                );
                if let Err(e) = plan {
                    tally.skip_device(&dev, &what, &e.to_string());
                    continue;
                }
                match s
                    .exact(strategy, init)
                    .and_then(|()| case(&s, strategy, init))
                {
                    Ok(()) => tally.pass(&dev),
                    Err(m) => tally.fail(&dev, &what, &m),
                }
            }
        }
    }
    tally.finish();
}

/// The failure of a launch with a fault armed: its error (a launch that succeeded is a
/// failure of the test).
fn failed_launch(s: &Setup, strategy: Strategy, init: bool, f: Fault) -> Result<Error, String> {
    s.q.__inject_fault(f);
    match launch(&s.q, &s.res, &s.x, strategy, init) {
        Ok(ev) => {
            let _ = ev.wait();
            Err(format!("{f:?}: the launch succeeded"))
        }
        Err(e) => Ok(e),
    }
}

fn check_oom(e: &Error, s: &Setup, call: &str, code: i32) -> Result<(), String> {
    let d = s.q.device();
    match e {
        Error::OutOfDeviceMemory {
            call: c,
            code: k,
            in_use,
            global_mem,
            device,
        } if *c == call && *k == code => {
            let mine = (N + 1) * 8;
            if *device != d.label() || *global_mem != d.caps().unwrap().global_mem_size {
                return Err(format!("fields of {e:?}"));
            }
            if *in_use < mine || *in_use > *global_mem {
                return Err(format!("in_use {in_use} outside [{mine}, {global_mem}]"));
            }
            let msg = e.to_string();
            if !msg.contains("out of device memory") || !msg.contains(&d.label()) {
                return Err(format!("message: {msg}"));
            }
            Ok(())
        }
        other => Err(format!(
            "want OutOfDeviceMemory from {call} {code}, got {other:?}"
        )),
    }
}

/// CL_MEM_OBJECT_ALLOCATION_FAILURE when the main kernel is enqueued, or from the enqueue after
/// it: `OutOfDeviceMemory`, the variable unchanged, the next launch exact.
#[test]
fn out_of_device_memory_during_a_launch_loses_nothing() {
    each_case(
        "out_of_device_memory_during_a_launch_loses_nothing",
        |s, strategy, init| {
            for f in [
                Fault::MainKernelEnqueue(CL_MEM_OBJECT_ALLOCATION_FAILURE),
                Fault::AfterMainKernel(CL_MEM_OBJECT_ALLOCATION_FAILURE),
            ] {
                let e = failed_launch(s, strategy, init, f)?;
                check_oom(&e, s, "clEnqueueNDRangeKernel", -4)
                    .map_err(|m| format!("{f:?}: {m}"))?;
                s.unchanged(&format!("{f:?}"))?;
                s.exact(strategy, init)
                    .map_err(|m| format!("after {f:?}: {m}"))?;
            }
            // CL_OUT_OF_RESOURCES from a kernel enqueue may not mean memory: it stays `Cl`.
            let f = Fault::MainKernelEnqueue(CL_OUT_OF_RESOURCES);
            match failed_launch(s, strategy, init, f)? {
                Error::Cl {
                    call: "clEnqueueNDRangeKernel",
                    code: -5,
                } => {}
                other => return Err(format!("{f:?}: {other:?}")),
            }
            s.unchanged("CL_OUT_OF_RESOURCES")?;
            s.exact(strategy, init)
        },
    );
}

/// A read that runs out of device memory: `OutOfDeviceMemory` (CL_OUT_OF_RESOURCES counts for a
/// transfer), the value intact when read again; another code stays `Cl`.
#[test]
fn out_of_device_memory_during_a_read() {
    let mut tally = Tally::new("out_of_device_memory_during_a_read");
    for d in devices().expect("devices") {
        let _sim = sim_lock(d);
        let dev = short(d);
        let s = setup(d);
        for code in [CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, -36] {
            s.q.__inject_fault(Fault::Read(code));
            let r = s.res.get(0);
            let verdict = match (&r, code) {
                (Err(e), -4 | -5) => check_oom(e, &s, "clEnqueueReadBuffer", code),
                (
                    Err(Error::Cl {
                        call: "clEnqueueReadBuffer",
                        code: -36,
                    }),
                    _,
                ) => Ok(()),
                _ => Err(format!("{r:?}")),
            }
            .and_then(|()| s.unchanged("a failed read"))
            .and_then(|()| s.exact(Strategy::AUTO, false));
            match verdict {
                Ok(()) => tally.pass(&dev),
                Err(m) => tally.fail(&dev, &format!("read fault {code}"), &m),
            }
        }
    }
    tally.finish();
}

/// The enqueue after the main kernel fails once the kernel has run and left the scratch as a
/// dying kernel would: the error is returned, the variable restored, and the next launch on
/// the same queue exact (stale counter and partials rebuilt).
#[test]
fn failed_enqueue_after_the_main_kernel_rebuilds_the_scratch() {
    each_case(
        "failed_enqueue_after_the_main_kernel_rebuilds_the_scratch",
        |s, strategy, init| {
            let f = Fault::AfterMainKernel(CL_OUT_OF_RESOURCES);
            match failed_launch(s, strategy, init, f)? {
                Error::Cl {
                    call: "clEnqueueNDRangeKernel",
                    code: -5,
                } => {}
                other => return Err(format!("{f:?}: {other:?}")),
            }
            s.unchanged("the failed launch")?;
            for k in 0..2 {
                s.exact(strategy, init)
                    .map_err(|m| format!("launch {k} after the failure: {m}"))?;
            }
            Ok(())
        },
    );
}

/// The kernel reports a failed status (it died on the device): `wait` returns the error; the
/// next launch is exact whether or not anyone waited (the queue polls the status itself).
#[test]
fn kernel_that_died_rebuilds_the_scratch() {
    each_case(
        "kernel_that_died_rebuilds_the_scratch",
        |s, strategy, init| {
            for waited in [false, true] {
                s.q.__inject_fault(Fault::KernelDied(CL_OUT_OF_RESOURCES));
                let ev = launch(&s.q, &s.res, &s.x, strategy, init)
                    .map_err(|e| format!("the launch itself: {e}"))?;
                if waited {
                    match ev.wait() {
                        Err(Error::Cl {
                            call: "clEnqueueNDRangeKernel",
                            code: -5,
                        }) => {}
                        other => return Err(format!("wait: {other:?}")),
                    }
                    if ev.device_time_ns().is_ok() {
                        return Err("device_time_ns of a failed launch".into());
                    }
                }
                drop(ev);
                s.exact(strategy, init)
                    .map_err(|m| format!("after a died kernel (waited {waited}): {m}"))?;
            }
            Ok(())
        },
    );
}

/// The control: the same stale scratch, but no failure reported to the queue (the test-only
/// `Fault::StaleScratch`): the next last-group launch finds no last work-group and leaves the
/// variable as it was, so the tests above would fail without the rebuild.
#[test]
fn stale_scratch_without_a_reported_failure_is_wrong() {
    let mut tally = Tally::new("stale_scratch_without_a_reported_failure_is_wrong");
    let strategy = Strategy::new(GroupAlgo::Tree, CrossAlgo::LastGroup);
    for d in devices().expect("devices") {
        let _sim = sim_lock(d);
        let dev = short(d);
        let s = setup(d);
        let verdict = s.exact(strategy, false).and_then(|()| {
            s.q.__inject_fault(Fault::StaleScratch);
            launch(&s.q, &s.res, &s.x, strategy, false)
                .and_then(|ev| ev.wait())
                .map_err(|e| format!("the stale launch itself: {e}"))?;
            s.res.write(0, &[START]).map_err(|e| e.to_string())?;
            launch(&s.q, &s.res, &s.x, strategy, false).map_err(|e| e.to_string())?;
            match s.res.get(0) {
                Ok(START) => Ok(()),
                other => Err(format!(
                    "stale counter: want the result left at {START} (no last work-group), got {other:?}"
                )),
            }
        });
        match verdict {
            Ok(()) => tally.pass(&dev),
            Err(m) => tally.fail(&dev, "tree+last-group", &m),
        }
    }
    tally.finish();
}

/// A fault strikes once and only on the queue it was armed on.
#[test]
fn a_fault_belongs_to_one_queue_and_strikes_once() {
    let mut tally = Tally::new("a_fault_belongs_to_one_queue_and_strikes_once");
    for d in devices().expect("devices") {
        let _sim = sim_lock(d);
        let dev = short(d);
        let (a, b) = (setup(d), setup(d));
        a.q.__inject_fault(Fault::MainKernelEnqueue(CL_MEM_OBJECT_ALLOCATION_FAILURE));
        let verdict = b
            .exact(Strategy::AUTO, false)
            .map_err(|m| format!("the other queue: {m}"))
            .and_then(
                |()| match launch(&a.q, &a.res, &a.x, Strategy::AUTO, false) {
                    Err(Error::OutOfDeviceMemory { .. }) => Ok(()),
                    other => Err(format!("the armed queue: {:?}", other.map(|_| "ok"))),
                },
            )
            .and_then(|()| a.exact(Strategy::AUTO, false));
        match verdict {
            Ok(()) => tally.pass(&dev),
            Err(m) => tally.fail(&dev, "two queues", &m),
        }
    }
    tally.finish();
}
