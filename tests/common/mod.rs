//! Helpers shared by the integration tests: one queue per device, a pass/fail/skip tally that
//! reports every skip with its reason, and `run_case`, which runs one reduction on a device and
//! checks it against the host reference.
#![allow(dead_code)]

use clreduce::caps::{DeviceCaps, Space};
use clreduce::check::reference::{
    self, combination_depth, random_initial, random_input, Reference,
};
use clreduce::plan::{CrossAlgo, GroupAlgo, Plan, Strategy};
use clreduce::DynBuffer;
use clreduce::{
    devices, reduction, Device, ElemType, Error, Form, Kernel, Mask, NdRange, Op, Options, Queue,
    Range, Value,
};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

#[macro_use]
pub mod feat;
pub mod columns;
pub mod rng;
pub mod sample;
pub use feat::Feature;
#[allow(unused_imports)]
pub use sample::{announce_sample, full_matrix, sample_hash};

/// One queue per device found, without a mask (the `CLREDUCE_MASK` environment is ignored so
/// the matrix means the same thing everywhere). Created once per test binary and shared by
/// every test in it: queues are `Send + Sync`, and launches from several threads serialize.
pub fn queues() -> &'static [Queue] {
    static Q: OnceLock<Vec<Queue>> = OnceLock::new();
    Q.get_or_init(|| {
        devices()
            .expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`")
            .iter()
            .map(|d| {
                Queue::with_mask(d, Mask::default())
                    .unwrap_or_else(|e| panic!("queue on {}: {e}", d.label()))
            })
            .collect()
    })
}

/// Oclgrind aborts the process (`Context::notifyKernelBegin: Assertion m_kernelInvocation ==
/// NULL`) when two threads run kernels on it at once, even through different queues; tests
/// hold this lock around all their work on a simulator.
pub fn sim_lock(d: &Device) -> Option<MutexGuard<'static, ()>> {
    d.is_simulator().then(sim_serial)
}

/// The simulator lock, taken unconditionally: for tests that touch the simulator's objects
/// (queues, buffers) outside a per-device loop. Oclgrind also crashes on concurrent buffer
/// commands (`oclgrind::Memory::store` in `executeFillBuffer` racing `deallocateBuffer`).
pub fn sim_serial() -> MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

/// A short name for a device in reports: `0:PoCL`, `1:Oclgrind`, `2:Intel`, or the label.
pub fn short(d: &Device) -> String {
    let p = d.platform();
    let s = if p.contains("Portable Computing Language") {
        "PoCL".to_string()
    } else if p.contains("Oclgrind") {
        "Oclgrind".to_string()
    } else if p.contains("Intel") {
        "Intel".to_string()
    } else {
        d.label()
    };
    format!("{}:{s}", d.index())
}

/// Counts per device of passed, failed and skipped cases; every skip and failure is printed
/// with its reason (visible with `--nocapture`).
pub struct Tally {
    test: String,
    per_device: BTreeMap<String, [usize; 3]>,
    secs: BTreeMap<String, f64>,
    failures: Vec<String>,
    started: Instant,
    /// Skips recorded with `skip_device`: the device lacks what the case needs.
    device_skips: usize,
}

impl Tally {
    pub fn new(test: &str) -> Tally {
        Tally {
            test: test.to_string(),
            per_device: BTreeMap::new(),
            secs: BTreeMap::new(),
            failures: Vec::new(),
            started: Instant::now(),
            device_skips: 0,
        }
    }
    /// Adds wall time spent on a device (for the summary).
    pub fn time(&mut self, dev: &str, secs: f64) {
        *self.secs.entry(dev.to_string()).or_default() += secs;
    }
    fn slot(&mut self, dev: &str) -> &mut [usize; 3] {
        self.per_device.entry(dev.to_string()).or_default()
    }
    pub fn pass(&mut self, dev: &str) {
        self.slot(dev)[0] += 1;
    }
    pub fn fail(&mut self, dev: &str, case: &str, msg: &str) {
        self.slot(dev)[1] += 1;
        let line = format!("FAIL {dev} {case}: {msg}");
        eprintln!("{line}");
        self.failures.push(line);
    }
    pub fn skip(&mut self, dev: &str, case: &str, reason: &str) {
        self.slot(dev)[2] += 1;
        eprintln!(
            "SKIP {dev} {case}: {}",
            reason.lines().next().unwrap_or(reason)
        );
    }
    /// A skip because the device lacks a capability the case needs (or behaves as the case
    /// cannot test): a test whose every skip is of this kind passes with nothing run.
    pub fn skip_device(&mut self, dev: &str, case: &str, reason: &str) {
        self.device_skips += 1;
        self.skip(dev, case, reason);
    }
    /// Records an outcome.
    pub fn record(&mut self, dev: &str, case: &str, o: Outcome) {
        match o {
            Outcome::Pass => self.pass(dev),
            Outcome::Fail(m) => self.fail(dev, case, &m),
            Outcome::Skip(r) => self.skip(dev, case, &r),
        }
    }
    pub fn totals(&self) -> [usize; 3] {
        let mut t = [0; 3];
        for v in self.per_device.values() {
            for k in 0..3 {
                t[k] += v[k];
            }
        }
        t
    }
    /// Prints `passed/failed/skipped` per device and in total, then asserts that nothing failed
    /// and that something passed.
    pub fn finish(self) {
        for (dev, [p, f, s]) in &self.per_device {
            eprintln!(
                "SUMMARY {} [{dev}]: {p} passed/{f} failed/{s} skipped ({:.1} s)",
                self.test,
                self.secs.get(dev).copied().unwrap_or(0.0)
            );
        }
        let [p, f, s] = self.totals();
        eprintln!(
            "SUMMARY {} [total]: {p} passed/{f} failed/{s} skipped ({:.1} s)",
            self.test,
            self.started.elapsed().as_secs_f64()
        );
        assert!(
            f == 0,
            "{}: {f} case(s) failed:\n{}",
            self.test,
            self.failures
                .iter()
                .take(40)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
        if p == 0 && s > 0 && s == self.device_skips {
            eprintln!(
                "SKIP {}: every device lacks what it needs ({s} skipped)",
                self.test
            );
            return;
        }
        assert!(
            p > 0,
            "{}: nothing passed ({s} skipped): no device could run any case",
            self.test
        );
    }
}

/// What one case came to.
#[derive(Debug)]
pub enum Outcome {
    Pass,
    Fail(String),
    Skip(String),
}

/// One reduction to run and check.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub op: Op,
    pub ty: ElemType,
    pub form: Form,
    pub init_to_identity: bool,
    pub strategy: Strategy,
    /// Relaxed determinism: needed to force order-dependent float atomics.
    pub relaxed: bool,
    pub seed: u64,
    /// A row beyond one built-in op (`feat`): `op` and `ty` then name its first variable's
    /// built-in equivalent and its element type.
    pub feature: Option<Feature>,
}

impl Case {
    pub fn size(&self) -> u64 {
        feat::form_size(self.form)
    }
    pub fn describe(&self) -> String {
        let form = match self.form {
            Form::Range(r) => format!("range n={}", r.n),
            Form::NdRange(r) => format!("nd_range global={} local={}", r.global, r.local),
        };
        let op = match self.feature {
            Some(f) => f.name(),
            None => self.op.to_string(),
        };
        format!(
            "{} {op} {} {form}{}{}",
            self.strategy,
            self.ty,
            if self.init_to_identity {
                " init_to_identity"
            } else {
                ""
            },
            if self.relaxed { " relaxed" } else { "" }
        )
    }
}

pub fn range(n: u64) -> Form {
    Form::Range(Range::new(n))
}
pub fn nd(global: u64, local: usize) -> Form {
    Form::NdRange(NdRange::new(global, local))
}

pub fn op_index(op: Op) -> usize {
    Op::ALL.iter().position(|&o| o == op).unwrap()
}
pub fn ty_index(ty: ElemType) -> usize {
    ElemType::REDUCIBLE.iter().position(|&t| t == ty).unwrap()
}

/// Every (op, type) pair SYCL defines (bitwise ops are integer-only).
pub fn valid_pairs() -> Vec<(Op, ElemType)> {
    let mut v = Vec::new();
    for op in Op::ALL {
        for ty in ElemType::REDUCIBLE {
            if op.valid_for(ty) {
                v.push((op, ty));
            }
        }
    }
    v
}

/// A value of type `ty` from an integer (floats get k/4, exactly representable).
pub fn val(ty: ElemType, i: i64) -> Value {
    clreduce::check::reference::value_of(ty, i)
}

fn same(a: Value, b: Value) -> bool {
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => x == y,
        _ => a.to_f64() == b.to_f64() || (a.to_f64().is_nan() && b.to_f64().is_nan()),
    }
}

/// The variable's initial value when it takes part (no initialize_to_identity): never the
/// identity. `random_initial` gives 1 for logical_and, which is its identity, so 5 (true, but
/// not 0/1, which the result must normalise) is used there instead.
pub fn initial(op: Op, ty: ElemType, seed: u64) -> Value {
    let v = random_initial(op, ty, seed);
    if Some(v) == op.identity(ty) {
        val(ty, 5 * if ty.is_float() { 4 } else { 1 })
    } else {
        v
    }
}

/// A poison value for a result under initialize_to_identity: neither the identity nor the
/// expected result, so a result the launch never wrote is caught.
pub fn poison(op: Op, ty: ElemType, seed: u64, expect: &Reference) -> Value {
    let id = op.identity(ty).expect("valid pairs have identities");
    let mut cands = vec![random_initial(op, ty, seed)];
    cands.extend([7, -5, 12345, 3].map(|i| val(ty, i)));
    for c in cands {
        let is_expected = match (expect.exact, c.as_int()) {
            (Some(e), Some(x)) => e == x,
            _ => c.to_f64() == expect.value,
        };
        if !same(c, id) && !is_expected {
            return c;
        }
    }
    unreachable!("one of five distinct candidates differs from both identity and result")
}

/// The kernel body for (op, type): one fixed body per pair (the body is part of the program
/// cache key), varying between the reducer shorthand, `combine(sum, v)` and `sum_combine(v)`.
pub fn body(op: Op, ty: ElemType) -> &'static str {
    let style = (op_index(op) + ty_index(ty)) % 3;
    let shorthand = match op {
        Op::Plus => Some("sum += x[i];"),
        Op::Multiplies => Some("sum *= x[i];"),
        Op::BitAnd => Some("sum &= x[i];"),
        Op::BitOr => Some("sum |= x[i];"),
        Op::BitXor => Some("sum ^= x[i];"),
        _ => None,
    };
    match (style, shorthand) {
        (0, Some(s)) => s,
        (2, _) => "sum_combine(x[i]);",
        _ => "combine(sum, x[i]);",
    }
}

/// Whether `caps` allow the work-group step `g` for (op, ty): an independent statement of
/// the capability rules, to check the planner's refusals and acceptances against.
pub fn group_allowed(caps: &DeviceCaps, g: GroupAlgo, op: Op, ty: ElemType) -> bool {
    match g {
        GroupAlgo::Tree => true,
        GroupAlgo::WgReduce => {
            caps.work_group_collectives
                && matches!(
                    op,
                    Op::Plus | Op::Minimum | Op::Maximum | Op::LogicalAnd | Op::LogicalOr
                )
        }
        GroupAlgo::SgReduce => match &caps.sub_groups {
            // NVIDIA: inline-PTX warp shuffles combine any op (whole warps only, see
            // `strategy_allowed`).
            None => caps.warp_shuffle_ptx && ty != ElemType::F16,
            Some(sg) => match op {
                Op::Plus | Op::Minimum | Op::Maximum | Op::LogicalAnd | Op::LogicalOr => true,
                _ => sg.non_uniform_arithmetic,
            },
        },
        GroupAlgo::LocalAtomic => caps.fast_atomic(op, ty, Space::Local),
    }
}

/// Whether `caps` allow the cross-group step `c` for (op, ty, init).
pub fn cross_allowed(caps: &DeviceCaps, c: CrossAlgo, op: Op, ty: ElemType, init: bool) -> bool {
    match c {
        CrossAlgo::Atomic => {
            caps.fast_atomic(op, ty, Space::Global)
                && (init || !matches!(op, Op::LogicalAnd | Op::LogicalOr))
        }
        CrossAlgo::LastGroup => caps.atomics.int32_global_base,
        CrossAlgo::ExtraPass => true,
    }
}

/// Whether the strategy (forced parts only) should be plannable for the case on `caps`.
pub fn strategy_allowed(caps: &DeviceCaps, c: &Case) -> Result<(), String> {
    if let Some(g) = c.strategy.group {
        if !group_allowed(caps, g, c.op, c.ty) {
            return Err(format!("{g} for {} on {}", c.op, c.ty));
        }
        if let (GroupAlgo::SgReduce, Form::NdRange(r)) = (g, c.form) {
            if caps.sub_groups.is_none() && r.local % 32 != 0 {
                return Err(format!(
                    "warp shuffles with {} work-items per group",
                    r.local
                ));
            }
        }
    }
    if let Some(x) = c.strategy.cross {
        if !cross_allowed(caps, x, c.op, c.ty, c.init_to_identity) {
            return Err(format!("{x} for {} on {}", c.op, c.ty));
        }
    }
    if !c.relaxed && forces_order_dependence(c) {
        return Err(format!(
            "deterministic mode with order-dependent float atomics ({} on {})",
            c.op, c.ty
        ));
    }
    Ok(())
}

/// Whether the forced strategy puts float atomics under an order-sensitive op (plus or
/// multiplies on floats), which only relaxed determinism allows.
pub fn forces_order_dependence(c: &Case) -> bool {
    c.op.order_sensitive(c.ty)
        && (c.strategy.group == Some(GroupAlgo::LocalAtomic)
            || c.strategy.cross == Some(CrossAlgo::Atomic))
}

/// Checks the plan against the request and the queue's capabilities (after the mask).
pub fn check_plan(caps: &DeviceCaps, c: &Case, plan: &Plan) -> Result<(), String> {
    let v = plan
        .vars
        .first()
        .ok_or_else(|| "plan without variables".to_string())?;
    if v.op != c.op.into() || v.ty != c.ty || v.init_to_identity != c.init_to_identity {
        return Err(format!("plan is for another variable: {v:?}"));
    }
    if let Some(g) = c.strategy.group {
        if v.group != g {
            return Err(format!("forced group step {g}, plan has {}", v.group));
        }
    }
    if let Some(x) = c.strategy.cross {
        if v.cross != x {
            return Err(format!("forced cross step {x}, plan has {}", v.cross));
        }
    }
    if !group_allowed(caps, v.group, c.op, c.ty) {
        return Err(format!(
            "plan uses {} which the (masked) capabilities do not allow",
            v.group
        ));
    }
    if !cross_allowed(caps, v.cross, c.op, c.ty, c.init_to_identity) {
        return Err(format!(
            "plan uses {} which the (masked) capabilities do not allow",
            v.cross
        ));
    }
    if plan.c11_atomics && !caps.c11_atomics() {
        return Err("plan uses OpenCL C 2.0 atomics the capabilities lack".into());
    }
    if plan.ptx_acq_rel && (plan.c11_atomics || !caps.acq_rel_ptx) {
        return Err("plan uses PTX acquire/release the capabilities lack (or beside C11)".into());
    }
    let order_dependent = c.op.order_sensitive(c.ty)
        && (v.group == GroupAlgo::LocalAtomic || v.cross == CrossAlgo::Atomic);
    if v.deterministic == order_dependent {
        return Err(format!(
            "plan says deterministic={} for {}+{} on {} {}",
            v.deterministic, v.group, v.cross, c.op, c.ty
        ));
    }
    if !c.relaxed && !plan.deterministic {
        return Err("plan in deterministic mode is not deterministic".into());
    }
    let want_passes = if v.cross == CrossAlgo::ExtraPass {
        2
    } else {
        1
    };
    if plan.passes != want_passes {
        return Err(format!("{} passes with {}", plan.passes, v.cross));
    }
    if plan.local_bytes > caps.local_mem_size {
        return Err(format!(
            "plan needs {} bytes of local memory, device has {}",
            plan.local_bytes, caps.local_mem_size
        ));
    }
    if let Form::NdRange(r) = c.form {
        if plan.local != r.local || plan.groups * r.local as u64 != r.global {
            return Err(format!(
                "nd_range geometry changed: {} x {}",
                plan.groups, plan.local
            ));
        }
    } else if plan.groups * plan.local as u64 * plan.items_per_work_item < c.size() {
        return Err(format!(
            "range geometry {} x {} x {} does not cover n={}",
            plan.groups,
            plan.local,
            plan.items_per_work_item,
            c.size()
        ));
    }
    Ok(())
}

/// Errors that mean "this device cannot run this combination" (a skip, with the message as
/// the reason); anything else is a failure.
pub fn is_device_limit(e: &Error) -> bool {
    matches!(
        e,
        Error::Unsupported { .. } | Error::WorkGroupTooLarge { .. } | Error::LocalMemory { .. }
    )
}

/// Runs one case on `q` and checks it: the plan, the result against the host reference
/// (integers exactly, floats with `check` and the plan's combination depth), and that a
/// refusal is one the capabilities explain.
pub fn run_case(q: &Queue, c: &Case) -> Outcome {
    let caps = q.caps();
    if let Err(missing) = caps.supports_type(c.ty) {
        return Outcome::Skip(format!("the device lacks {missing}"));
    }
    if let Some(f) = c.feature {
        return feat::run(q, c, f);
    }
    let n = c.size() as usize;
    let data = random_input(c.op, c.ty, n, c.seed);
    let init_val = initial(c.op, c.ty, c.seed);
    let expect = reference::reference(
        c.op,
        &data,
        if c.init_to_identity {
            None
        } else {
            Some(init_val)
        },
    );
    // Under initialize_to_identity the result starts poisoned: a result the launch does not
    // write stays poisoned and fails the check.
    let start = if c.init_to_identity {
        poison(c.op, c.ty, c.seed, &expect)
    } else {
        init_val
    };
    let setup = || -> clreduce::Result<(DynBuffer, DynBuffer)> {
        Ok((DynBuffer::upload(q, &data)?, DynBuffer::scalar(q, start)?))
    };
    let (x, res) = match setup() {
        Ok(b) => b,
        Err(e) => return Outcome::Fail(format!("setting up buffers: {e}")),
    };
    let mut red = reduction(&res, c.op);
    if c.init_to_identity {
        red = red.initialize_to_identity();
    }
    let mut opts = Options::default().strategy(c.strategy);
    if c.relaxed {
        opts = opts.relaxed();
    }
    let allowed = strategy_allowed(caps, c);
    let ev = match q.parallel_for_reduce_with(
        c.form,
        red,
        Kernel::new(body(c.op, c.ty)).arg("x", &x),
        opts,
    ) {
        Ok(ev) => ev,
        Err(e) if is_device_limit(&e) => {
            // A refusal must be one the capabilities explain.
            if let (Error::Unsupported { .. }, Ok(())) = (&e, &allowed) {
                return Outcome::Fail(format!("refused although the capabilities allow it: {e}"));
            }
            // The result must be untouched by a refused launch.
            return match res.value(0) {
                Ok(v) if same(v, start) => Outcome::Skip(e.to_string()),
                Ok(v) => Outcome::Fail(format!(
                    "refused ({e}) but the result changed from {start} to {v}"
                )),
                Err(r) => Outcome::Fail(format!("refused ({e}); reading the result: {r}")),
            };
        }
        Err(e) => return Outcome::Fail(format!("launch failed: {e}")),
    };
    if let Err(why) = &allowed {
        return Outcome::Fail(format!(
            "planned although the capabilities lack {why}: {}",
            ev.plan().map(|p| p.summary()).unwrap_or_default()
        ));
    }
    if let Err(e) = ev.wait() {
        return Outcome::Fail(format!("wait: {e}"));
    }
    let Some(plan) = ev.plan() else {
        return Outcome::Fail("no plan returned".into());
    };
    if let Err(m) = check_plan(caps, c, plan) {
        return Outcome::Fail(format!("plan {}: {m}", plan.summary()));
    }
    let got = match res.value(0) {
        Ok(v) => v,
        Err(e) => return Outcome::Fail(format!("reading the result: {e}")),
    };
    let depth = combination_depth(plan, 0);
    match reference::check(c.op, c.ty, got.to_f64(), got.as_int(), &expect, depth) {
        Ok(()) => Outcome::Pass,
        Err(m) => Outcome::Fail(format!(
            "{m} (plan {}: {} groups x {} work-items{})",
            plan.summary(),
            plan.groups,
            plan.local,
            if c.init_to_identity {
                format!(", poisoned start {start}")
            } else {
                format!(", initial {start}")
            }
        )),
    }
}

/// Why the capabilities of a device (after its mask) rule the case out, from the same
/// independent rules `run_case` checks refusals against: the element type, the forced steps
/// (`strategy_allowed`, with determinism set aside since that is a request, not a capability)
/// and the device's maximum work-group size. `None`: the device has what the case needs, so a
/// skip of it is not explained by a missing capability.
pub fn capability_gap(caps: &DeviceCaps, c: &Case) -> Option<String> {
    if let Err(missing) = caps.supports_type(c.ty) {
        return Some(format!("no {missing}"));
    }
    let relaxed = Case {
        relaxed: true,
        ..*c
    };
    let rule = match c.feature {
        Some(f) => feat::allowed(caps, &relaxed, f),
        None => strategy_allowed(caps, &relaxed),
    };
    if let Err(missing) = rule {
        return Some(format!("no {missing}"));
    }
    if let Form::NdRange(r) = c.form {
        let max = caps.max_local_1d();
        if r.local > max {
            return Some(format!(
                "work-group size {} above the device's {max}",
                r.local
            ));
        }
    }
    None
}

/// The tally of a capability-matrix test. Besides `Tally`'s counts it knows how many cases each
/// device was given and why each skip happened, so that the verdict is:
///
/// - FAIL if any case failed;
/// - FAIL if a device was given cases but recorded a different number (a case silently not
///   run), or if no device was given any case at all (no device looped over, no case
///   generated: a harness problem, never a pass);
/// - FAIL if a device passed nothing while some of its skips are not explained by a missing
///   capability (`capability_gap`): that device could have run them;
/// - otherwise PASS. A device where every case is skipped for a missing capability (NVIDIA's
///   OpenCL under `wg_reduce+*`) is fine, and so is a test that no device can run, which then
///   says so in a `SKIP <test>: ...` line.
pub struct MatrixTally {
    tally: Tally,
    /// Per device: cases it was given (`expect`).
    expected: BTreeMap<String, usize>,
    /// Per device: cases recorded through `record` (any outcome).
    recorded: BTreeMap<String, usize>,
    /// Per device: skips explained by a missing capability.
    capability_skips: BTreeMap<String, usize>,
    /// Per device: skips the capabilities do not explain ("case: reason").
    other_skips: BTreeMap<String, Vec<String>>,
}

impl MatrixTally {
    pub fn new(test: &str) -> MatrixTally {
        MatrixTally {
            tally: Tally::new(test),
            expected: BTreeMap::new(),
            recorded: BTreeMap::new(),
            capability_skips: BTreeMap::new(),
            other_skips: BTreeMap::new(),
        }
    }
    /// Declares that `dev` is given `cases` cases; each must then be `record`ed.
    pub fn expect(&mut self, dev: &str, cases: usize) {
        *self.expected.entry(dev.to_string()).or_default() += cases;
        self.tally.slot(dev);
    }
    /// Adds wall time spent on a device (for the summary).
    pub fn time(&mut self, dev: &str, secs: f64) {
        self.tally.time(dev, secs);
    }
    /// A failure outside the cases (a queue that could not be made, a wrong mask effect).
    pub fn fail(&mut self, dev: &str, what: &str, msg: &str) {
        self.tally.fail(dev, what, msg);
    }
    /// Records the outcome of case `c` on a device with capabilities `caps`; a skip is sorted
    /// by `capability_gap`.
    pub fn record(&mut self, dev: &str, caps: &DeviceCaps, c: &Case, o: Outcome) {
        *self.recorded.entry(dev.to_string()).or_default() += 1;
        let case = c.describe();
        match o {
            Outcome::Skip(reason) => match capability_gap(caps, c) {
                Some(_) => {
                    *self.capability_skips.entry(dev.to_string()).or_default() += 1;
                    self.tally.skip(dev, &case, &reason);
                }
                None => {
                    let first = reason.lines().next().unwrap_or("").to_string();
                    self.tally.skip(
                        dev,
                        &case,
                        &format!(
                            "{first} [the device has the capabilities: not a capability skip]"
                        ),
                    );
                    self.other_skips
                        .entry(dev.to_string())
                        .or_default()
                        .push(format!("{case}: {first}"));
                }
            },
            other => self.tally.record(dev, &case, other),
        }
    }
    /// The summary lines and the verdict: `Ok(note)` passes (the note, when not empty, says
    /// why nothing ran), `Err(problems)` fails.
    pub fn verdict(&self) -> (Vec<String>, Result<String, Vec<String>>) {
        let test = &self.tally.test;
        let mut lines = Vec::new();
        let mut problems = Vec::new();
        for (dev, &[p, f, s]) in &self.tally.per_device {
            let cap = self.capability_skips.get(dev).copied().unwrap_or(0);
            let why = match (s, cap) {
                (0, _) => String::new(),
                (s, c) if s == c => ", every skip for a missing capability".to_string(),
                (s, c) => format!(", {c} of the {s} skips for a missing capability"),
            };
            lines.push(format!(
                "SUMMARY {test} [{dev}]: {p} passed/{f} failed/{s} skipped ({:.1} s{why})",
                self.tally.secs.get(dev).copied().unwrap_or(0.0)
            ));
            let given = self.expected.get(dev).copied().unwrap_or(0);
            let ran = self.recorded.get(dev).copied().unwrap_or(0);
            if given != ran {
                problems.push(format!(
                    "harness: {dev} was given {given} case(s) but {ran} were recorded"
                ));
            }
            if p == 0 && ran > 0 {
                if let Some(other) = self.other_skips.get(dev) {
                    problems.push(format!(
                        "{dev}: nothing passed, and {} skip(s) are not explained by a missing \
                         capability (the device could have run them), first: {}",
                        other.len(),
                        other[0]
                    ));
                }
            }
        }
        let [p, f, s] = self.tally.totals();
        lines.push(format!(
            "SUMMARY {test} [total]: {p} passed/{f} failed/{s} skipped ({:.1} s)",
            self.tally.started.elapsed().as_secs_f64()
        ));
        if f > 0 {
            let listed: Vec<String> = self.tally.failures.iter().take(40).cloned().collect();
            problems.insert(0, format!("{f} case(s) failed:\n{}", listed.join("\n")));
        }
        if self.expected.values().sum::<usize>() == 0 {
            problems.push(format!(
                "harness: no case was given to any device ({} device(s) looped over): the test \
                 ran nothing",
                self.expected.len()
            ));
        }
        if !problems.is_empty() {
            return (lines, Err(problems));
        }
        let note = if p == 0 {
            format!(
                "SKIP {test}: no device found has the capabilities it needs; all {s} case(s) \
                 skipped for a missing capability"
            )
        } else {
            String::new()
        };
        (lines, Ok(note))
    }
    /// Prints the summary lines (and the note when nothing could run), then fails the test if
    /// the verdict is a failure.
    pub fn finish(self) {
        let (lines, verdict) = self.verdict();
        for l in &lines {
            eprintln!("{l}");
        }
        match verdict {
            Ok(note) if note.is_empty() => {}
            Ok(note) => eprintln!("{note}"),
            Err(problems) => panic!("{}: {}", self.tally.test, problems.join("\n")),
        }
    }
}
