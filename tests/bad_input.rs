//! Bad input of every kind returns its `Error` and leaves the user's result unchanged (read back
//! from the device after each error), and the queue still works afterwards; the CLI turns errors
//! into exit code 2 and one `clreduce: error:` line (plus indented detail). Split from
//! tests/reliability.rs (which keeps concurrency, long runs and huge sizes); runs on every device
//! but the simulator.

#[path = "common/cli.rs"]
mod cli_run;
#[path = "rel/helpers.rs"]
mod helpers;
use cli_run::{assert_refused_cleanly, cli};
use clreduce::plan::{CrossAlgo, GroupAlgo, Strategy};
use clreduce::{
    reduction, Buffer, DynBuffer, ElemType, Error, Kernel, Mask, NdRange, Op, Options, Queue,
    Range, Reduction, Reductions, Value,
};
use helpers::*;

// ---------------------------------------------------------------------------------------------
// Bad input leaves user data unchanged

const START: i32 = 424_242;

/// Runs a launch that must fail; returns its error after checking that the result buffer still
/// holds `START` (read back from the device).
fn must_fail(
    q: &Queue,
    case: &str,
    res: &Buffer<i32>,
    r: clreduce::Result<clreduce::ReduceEvent>,
) -> Error {
    let e = match r {
        Ok(ev) => {
            ev.wait().ok();
            panic!(
                "{} {case}: launch succeeded ({:?}); result now {:?}",
                short(q.device()),
                ev.plan().map(|p| p.summary()),
                res.get(0)
            )
        }
        Err(e) => e,
    };
    assert_eq!(
        res.get(0).unwrap(),
        START,
        "{} {case}: result changed after error {e}",
        short(q.device())
    );
    e
}

/// A fresh `[START]` result and an input buffer on `q`.
fn bufs(q: &Queue) -> (Buffer<i32>, Buffer<i32>) {
    (
        q.buffer_from(&[START]).unwrap(),
        q.buffer_from(&vec![3i32; 4096]).unwrap(),
    )
}

/// After a failure the queue still runs a reduction correctly.
fn queue_still_works(q: &Queue, case: &str) {
    let x = q.buffer_from(&vec![2i32; 1000]).unwrap();
    let res = q.buffer_from(&[5i32]).unwrap();
    q.parallel_for_reduce_with(
        Range::new(1000),
        reduction(&res, Op::Plus),
        Kernel::new("sum += x[i];").arg("x", &x),
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{} after {case}: {e}", short(q.device())));
    assert_eq!(
        res.get(0).unwrap(),
        2005,
        "{} after {case}",
        short(q.device())
    );
}

#[test]
fn type_mismatch() {
    let _g = shared();
    for d in fast_devices("type_mismatch") {
        let q = queue_on(&d);
        let dev = short(&d);
        // An f32 argument where the i32 reducer's `^=` needs an integer: a build error in the body.
        for init in [false, true] {
            let res = q.buffer_from(&[START]).unwrap();
            let xf = q.buffer_from(&vec![1.5f32; 64]).unwrap();
            let mut r = reduction(&res, Op::BitXor);
            if init {
                r = r.initialize_to_identity();
            }
            let e = must_fail(
                q,
                "f32 argument into i32 ^=",
                &res,
                q.parallel_for_reduce_with(
                    Range::new(64),
                    r,
                    Kernel::new("sum ^= x[i];").arg("x", &xf),
                    Options::default(),
                ),
            );
            match &e {
                Error::BodyBuild { log, .. } => {
                    assert!(log.contains("body:1"), "{dev}: {log}")
                }
                other => panic!("{dev}: expected BodyBuild, got {other:?}"),
            }
        }
        // DynBuffer::set with a value of another type.
        let b = DynBuffer::scalar(q, Value::I32(START)).unwrap();
        match b.set(0, Value::F64(1.0)) {
            Err(Error::TypeMismatch {
                expected, found, ..
            }) => {
                assert_eq!((expected, found), (ElemType::I32, ElemType::F64), "{dev}");
            }
            other => panic!("{dev}: DynBuffer::set with f64 into i32: {other:?}"),
        }
        assert_eq!(b.value(0).unwrap(), Value::I32(START), "{dev}");
        queue_still_works(q, "type mismatch");
    }
}

#[test]
fn nd_range_not_divisible_and_too_large() {
    let _g = shared();
    for d in fast_devices("nd_range_not_divisible_and_too_large") {
        let q = queue_on(&d);
        let dev = short(&d);
        for init in [false, true] {
            let (res, x) = bufs(q);
            let mut r = reduction(&res, Op::Plus);
            if init {
                r = r.initialize_to_identity();
            }
            let e = must_fail(
                q,
                "nd_range 1000/96",
                &res,
                q.parallel_for_reduce_with(
                    NdRange::new(1000, 96),
                    r.clone(),
                    Kernel::new("sum += x[i];").arg("x", &x),
                    Options::default(),
                ),
            );
            assert!(
                matches!(&e, Error::NdRangeNotDivisible { global, local } if global == &vec![1000] && local == &vec![96]),
                "{dev}: {e:?}"
            );
            let max = q.caps().max_work_group_size;
            let e = must_fail(
                q,
                "local above max",
                &res,
                q.parallel_for_reduce_with(
                    NdRange::new(2 * (max as u64 + 1), max + 1),
                    r,
                    Kernel::new("sum += x[i];").arg("x", &x),
                    Options::default(),
                ),
            );
            assert!(
                matches!(&e, Error::WorkGroupTooLarge { local, limit, .. } if *local == max + 1 && *limit == max),
                "{dev}: {e:?}"
            );
        }
        queue_still_works(q, "nd_range errors");
    }
}

/// Forces the local-memory tree with a work-group (and as many 8-byte variables) whose local
/// memory need exceeds `caps().local_mem_size`.
#[test]
fn local_memory_over_budget() {
    let _g = shared();
    for d in fast_devices("local_memory_over_budget") {
        let q = queue_on(&d);
        let dev = short(&d);
        let caps = q.caps();
        let local = caps.max_local_1d();
        let per_var = local as u64 * 8;
        let vars = (caps.local_mem_size + 1).div_ceil(per_var).max(1) as usize;
        if vars > 64 {
            eprintln!(
                "SKIP {dev}: local_memory_over_budget: {} bytes of local memory need {vars} i64 tree variables of {local} work-items",
                caps.local_mem_size
            );
            continue;
        }
        let results: Vec<Buffer<i64>> = (0..vars)
            .map(|k| q.buffer_from(&[k as i64 * 1000 + 7]).unwrap())
            .collect();
        let reds: Vec<Reduction> = results
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let r = reduction(b, Op::Plus).name(&format!("s{k}"));
                if k % 2 == 0 {
                    r.initialize_to_identity()
                } else {
                    r
                }
            })
            .collect();
        let x = q.buffer_from(&vec![1i64; 2 * local]).unwrap();
        let body: String = (0..vars).map(|k| format!("s{k} += x[i];\n")).collect();
        let r = q.parallel_for_reduce_with(
            NdRange::new(2 * local as u64, local),
            Reductions(reds),
            Kernel::new(&body).arg("x", &x),
            Options::default().strategy(Strategy {
                group: Some(GroupAlgo::Tree),
                cross: None,
            }),
        );
        match r {
            Err(Error::LocalMemory { need, have, .. }) => {
                assert!(need > have && have == caps.local_mem_size, "{dev}");
                eprintln!(
                    "{dev}: {vars} i64 tree variables x {local} work-items need {need} bytes of local memory, the device has {have}: LocalMemory"
                );
            }
            Err(e) => panic!("{dev}: expected LocalMemory, got {e}"),
            Ok(_) => panic!("{dev}: {vars} tree variables x {local} work-items launched"),
        }
        for (k, b) in results.iter().enumerate() {
            assert_eq!(
                b.get(0).unwrap(),
                k as i64 * 1000 + 7,
                "{dev}: variable {k}"
            );
        }
        queue_still_works(q, "local memory");
    }
}

#[test]
fn body_that_does_not_compile() {
    let _g = shared();
    for d in fast_devices("body_that_does_not_compile") {
        let q = queue_on(&d);
        let dev = short(&d);
        for init in [false, true] {
            let (res, x) = bufs(q);
            let mut r = reduction(&res, Op::Plus);
            if init {
                r = r.initialize_to_identity();
            }
            let e = must_fail(
                q,
                "body does not compile",
                &res,
                q.parallel_for_reduce_with(
                    Range::new(100),
                    r,
                    Kernel::new("int a = 2;\nsum += x[i] * a + undeclared_thing_42;\n")
                        .arg("x", &x),
                    Options::default(),
                ),
            );
            let Error::BodyBuild { log, .. } = &e else {
                panic!("{dev}: expected BodyBuild, got {e:?}");
            };
            assert!(
                log.contains("body:"),
                "{dev}: log without body: location:\n{log}"
            );
            assert!(
                log.contains("body:2"),
                "{dev}: error should be on body line 2:\n{log}"
            );
            let listing = e.source_listing().expect("a listing");
            let first = listing.lines().next().unwrap_or("");
            assert!(
                first.starts_with("    1 | "),
                "{dev}: listing starts {first:?}"
            );
            assert!(
                listing
                    .lines()
                    .any(|l| l.ends_with("| sum += x[i] * a + undeclared_thing_42;")),
                "{dev}: the body is in the numbered listing"
            );
            // Numbered consecutively.
            for (k, l) in listing.lines().enumerate() {
                let num: usize = l.split('|').next().unwrap().trim().parse().unwrap();
                assert_eq!(num, k + 1, "{dev}");
            }
        }
        queue_still_works(q, "body build error");
    }
}

#[test]
fn bad_argument_names() {
    let _g = shared();
    for d in fast_devices("bad_argument_names") {
        let q = queue_on(&d);
        let dev = short(&d);
        let (res, x) = bufs(q);
        let y = q.buffer_from(&[1i32, 2]).unwrap();
        let cases: Vec<(&str, &str, Kernel)> = vec![
            (
                "x",
                "bound twice",
                Kernel::new("sum += x[i];").arg("x", &x).arg("x", &y),
            ),
            (
                "x",
                "bound twice",
                Kernel::new("sum += x[i];").arg("x", &x).scalar("x", 1i32),
            ),
            (
                "sum",
                "bound twice",
                Kernel::new("sum += 1;").arg("sum", &y),
            ),
            ("i", "reserved", Kernel::new("sum += 1;").arg("i", &x)),
            ("n", "reserved", Kernel::new("sum += 1;").scalar("n", 4u32)),
            (
                "clr_x",
                "reserved",
                Kernel::new("sum += 1;").arg("clr_x", &x),
            ),
            (
                "combine",
                "reserved",
                Kernel::new("sum += 1;").arg("combine", &x),
            ),
            ("2x", "identifier", Kernel::new("sum += 1;").arg("2x", &x)),
            (
                "res",
                "two writers",
                Kernel::new("sum += 1;").arg_mut("res", &res),
            ),
            (
                "res",
                "read-only",
                Kernel::new("sum += res[0];").arg("res", &res),
            ),
        ];
        for (want, problem, kernel) in cases {
            for init in [false, true] {
                let mut r = reduction(&res, Op::Plus);
                if init {
                    r = r.initialize_to_identity();
                }
                let case = format!("argument {want:?} ({problem})");
                let e = must_fail(
                    q,
                    &case,
                    &res,
                    q.parallel_for_reduce_with(
                        Range::new(8),
                        r,
                        kernel.clone(),
                        Options::default(),
                    ),
                );
                match &e {
                    Error::BadArgument { name, problem: p } => {
                        assert_eq!(name, want, "{dev} {case}");
                        assert!(p.contains(problem), "{dev} {case}: {p}");
                    }
                    other => panic!("{dev} {case}: {other:?}"),
                }
            }
        }
        // A reducer named like a reserved name.
        let e = must_fail(
            q,
            "reducer named i",
            &res,
            q.parallel_for_reduce_with(
                Range::new(8),
                reduction(&res, Op::Plus).name("i"),
                Kernel::new("i += 1;"),
                Options::default(),
            ),
        );
        assert!(
            matches!(&e, Error::BadArgument { name, .. } if name == "i"),
            "{dev}: {e:?}"
        );
        // A result buffer with no element.
        let empty = q.buffer::<i32>(0).unwrap();
        match q.parallel_for_reduce(
            Range::new(8),
            reduction(&empty, Op::Plus),
            Kernel::new("sum += 1;"),
        ) {
            Err(Error::BufferTooShort {
                len: 0, need: 1, ..
            }) => {}
            other => panic!("{dev}: empty result buffer: {:?}", other.err()),
        }
        queue_still_works(q, "bad arguments");
    }
}

/// A buffer of another queue (same device) as a reduction variable is used (buffers belong to
/// their device); buffers of another device as a variable or an argument: `ForeignBuffer`,
/// nothing written.
#[test]
fn foreign_buffers() {
    let _g = shared();
    let fast = fast_devices("foreign_buffers");
    for d in &fast {
        let q = queue_on(d);
        let dev = short(d);
        let other_q = Queue::with_mask(d, Mask::default()).unwrap();
        let (res_other, _) = bufs(&other_q);
        let x = q.buffer_from(&vec![1i32; 64]).unwrap();
        for init in [false, true] {
            let mut r = reduction(&res_other, Op::Plus);
            if init {
                r = r.initialize_to_identity();
            }
            let before = res_other.get(0).unwrap();
            q.parallel_for_reduce_with(
                Range::new(64),
                r,
                Kernel::new("sum += x[i];").arg("x", &x),
                Options::default(),
            )
            .unwrap_or_else(|e| panic!("{dev}: result from another queue: {e}"));
            let want = if init { 64 } else { before + 64 };
            assert_eq!(res_other.get(0).unwrap(), want, "{dev}: init {init}");
        }
        // Another device.
        for od in fast.iter().filter(|o| o.index() != d.index()) {
            let oq = queue_on(od);
            let (res_far, x_far) = bufs(oq);
            let e = must_fail(
                q,
                "result from another device",
                &res_far,
                q.parallel_for_reduce(
                    Range::new(64),
                    reduction(&res_far, Op::Plus).initialize_to_identity(),
                    Kernel::new("sum += x[i];").arg("x", &x),
                ),
            );
            assert!(matches!(e, Error::ForeignBuffer { .. }), "{dev}: {e:?}");
            let (res, _) = bufs(q);
            let e = must_fail(
                q,
                "argument from another device",
                &res,
                q.parallel_for_reduce(
                    Range::new(64),
                    reduction(&res, Op::Plus).initialize_to_identity(),
                    Kernel::new("sum += x[i];").arg("x", &x_far),
                ),
            );
            assert!(
                matches!(&e, Error::ForeignBuffer { name, .. } if name == "x"),
                "{dev}: {e:?}"
            );
            assert_eq!(x_far.get(0).unwrap(), 3);
        }
        queue_still_works(q, "foreign buffers");
    }
}

#[test]
fn initialize_to_identity_without_identity() {
    // Every built-in op has a known identity for every reducible type, and clreduce has no
    // user-defined ops: Error::NoIdentity cannot be triggered yet.
    let _g = shared();
    for op in Op::ALL {
        for ty in ElemType::REDUCIBLE {
            if op.valid_for(ty) {
                assert!(op.identity(ty).is_some(), "{op} {ty}");
            }
        }
    }
    eprintln!("SKIP all devices: initialize_to_identity without an identity: identity-less ops do not exist yet");
}

/// Forcing a step the device lacks: `Unsupported`, naming the missing capability.
#[test]
fn forced_strategy_unsupported() {
    let _g = shared();
    let mut checked = 0;
    for d in fast_devices("forced_strategy_unsupported") {
        let q = queue_on(&d);
        let dev = short(&d);
        let caps = q.caps().clone();
        // (strategy, op, what the message must name, applies)
        let cases: Vec<(Strategy, Op, &str, bool)> = vec![
            (
                Strategy::new(GroupAlgo::WgReduce, CrossAlgo::ExtraPass),
                Op::Plus,
                "work-group collective functions",
                !caps.work_group_collectives,
            ),
            (
                Strategy::new(GroupAlgo::WgReduce, CrossAlgo::ExtraPass),
                Op::Multiplies,
                "work-group collective for prod",
                caps.work_group_collectives,
            ),
            (
                Strategy::new(GroupAlgo::SgReduce, CrossAlgo::ExtraPass),
                Op::Plus,
                "sub-groups",
                caps.sub_groups.is_none() && !caps.warp_shuffle_ptx,
            ),
            (
                Strategy::new(GroupAlgo::LocalAtomic, CrossAlgo::ExtraPass),
                Op::Multiplies,
                "fast local atomics for prod",
                true,
            ),
            (
                Strategy::new(GroupAlgo::Tree, CrossAlgo::Atomic),
                Op::Multiplies,
                "fast global atomics for prod",
                true,
            ),
        ];
        for (s, op, want, applies) in cases {
            if !applies {
                continue;
            }
            for init in [false, true] {
                let (res, x) = bufs(q);
                let mut r = reduction(&res, op);
                if init {
                    r = r.initialize_to_identity();
                }
                let case = format!("{s} for {op}");
                let e = must_fail(
                    q,
                    &case,
                    &res,
                    q.parallel_for_reduce_with(
                        Range::new(4096),
                        r,
                        Kernel::new("combine(sum, x[i]);").arg("x", &x),
                        Options::default().strategy(s),
                    ),
                );
                match &e {
                    Error::Unsupported {
                        missing, device, ..
                    } => {
                        assert!(missing.contains(want), "{dev} {case}: {missing}");
                        assert_eq!(device, &caps.label());
                        assert!(e.to_string().contains(want));
                    }
                    other => panic!("{dev} {case}: expected Unsupported, got {other:?}"),
                }
                checked += 1;
            }
        }
        if d.platform().contains("Portable Computing Language") {
            assert!(
                !caps.work_group_collectives,
                "{dev}: PoCL now has work-group collectives; update this test"
            );
        }
        queue_still_works(q, "unsupported strategy");
    }
    assert!(checked > 0);
}

#[test]
fn unknown_names() {
    let _g = shared();
    match Mask::parse("no-atomics,no-such") {
        Err(e @ Error::UnknownMask { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("\"no-such\"") && msg.contains("no-subgroups"),
                "{msg}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        Strategy::parse("tree+teleport"),
        Err(Error::UnknownStrategy { .. })
    ));
    assert!(matches!(
        Op::parse("bogus"),
        Err(Error::UnknownName { kind: "op", .. })
    ));
    assert!(matches!(
        ElemType::parse("i128"),
        Err(Error::UnknownName { .. })
    ));
    assert!(matches!(
        clreduce::device::select(Some("99")),
        Err(Error::DeviceNotFound { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// CLI

#[test]
fn cli_bad_input() {
    let _g = shared();
    let cases: [(&[&str], &str); 4] = [
        (&["reduce", "--device", "0", "--op", "bogus"], "unknown op"),
        (
            &["reduce", "--device", "99", "--n", "1000"],
            "no OpenCL device matches",
        ),
        (
            &[
                "reduce", "--device", "0", "--form", "nd-range", "--n", "1000", "--local", "96",
            ],
            "not a multiple",
        ),
        (
            &[
                "reduce", "--device", "0", "--n", "1000", "--mask", "no-such",
            ],
            "unknown capability mask",
        ),
    ];
    for (args, want) in cases {
        let (code, stdout, stderr) = cli(args);
        let cmd = args.join(" ");
        assert_eq!(code, 2, "clreduce {cmd}: exit code; stderr:\n{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(!lines.is_empty(), "clreduce {cmd}: empty stderr");
        assert!(
            lines[0].starts_with("clreduce: error: "),
            "clreduce {cmd}: stderr starts {:?}",
            lines[0]
        );
        assert!(lines[0].contains(want), "clreduce {cmd}: {:?}", lines[0]);
        for l in &lines[1..] {
            assert!(
                l.starts_with("  "),
                "clreduce {cmd}: detail line not indented: {l:?}"
            );
        }
        assert!(
            lines.len() <= 8,
            "clreduce {cmd}: {} stderr lines",
            lines.len()
        );
        assert_refused_cleanly(&format!("clreduce {cmd}"), &stdout, &stderr);
        eprintln!("clreduce {cmd} -> exit {code}: {}", lines[0]);
    }
    let (code, stdout, stderr) = cli(&["reduce", "--device", "0", "--n", "1000"]);
    assert_eq!(code, 0, "good run: {stderr}");
    assert!(stdout.contains("check:     OK"), "good run:\n{stdout}");
}

/// Formerly a library bug, then refused with `ForeignBuffer`, now used (issue 29: buffers belong
/// to their device, and a command on a buffer waits for the buffer's last queue): a kernel
/// argument of another queue on the same device must be ordered with the launch.
///
/// - `arg_mut` of another queue: reading the buffer right after the launch saw none of the
///   kernel's writes (0 of 2^20 elements: PoCL in every run seen, Intel in some runs).
/// - `arg` whose zero-fill (`Queue::buffer`) is still pending on its own queue: the kernel read
///   the memory before the fill (PoCL: a sum of 20971520 = 5 x 2^22 from a freed buffer's
///   contents, in about 2 tries of 10).
///
/// The results must now be correct.
#[test]
fn argument_of_another_queue() {
    let _g = shared();
    let mut problems = Vec::new();
    for d in fast_devices("argument_of_another_queue") {
        let dev = short(&d);
        let qa = Queue::with_mask(&d, Mask::default()).unwrap();
        let qb = Queue::with_mask(&d, Mask::default()).unwrap();
        // Written argument.
        let n = 1usize << 20;
        let y = qa.buffer::<i32>(n).unwrap();
        let x = qb.buffer_from(&vec![1i32; n]).unwrap();
        let res = qb.buffer_from(&[0i32]).unwrap();
        match qb.parallel_for_reduce(
            Range::new(n as u64),
            reduction(&res, Op::Plus),
            Kernel::new("y[i] = 7; sum += x[i];")
                .arg_mut("y", &y)
                .arg("x", &x),
        ) {
            Err(e) => problems.push(format!("{dev} arg_mut: unexpected error {e}")),
            Ok(_ev) => {
                let written = y.to_vec().unwrap().iter().filter(|&&v| v == 7).count();
                if written != n {
                    problems.push(format!(
                        "{dev}: arg_mut of another queue accepted; read through its own queue right after the launch: {written} of {n} elements written"
                    ));
                }
            }
        }
        // Read-only argument with a pending fill on its own queue.
        let n = 1usize << 22;
        for t in 0..10 {
            drop(qa.buffer_from(&vec![5i32; n]).unwrap());
            let z = qa.buffer::<i32>(n).unwrap();
            let res = qb.buffer_from(&[0i32]).unwrap();
            match qb.parallel_for_reduce(
                Range::new(n as u64),
                reduction(&res, Op::Plus),
                Kernel::new("sum += z[i];").arg("z", &z),
            ) {
                Err(e) => {
                    problems.push(format!("{dev} arg: unexpected error {e}"));
                    break;
                }
                Ok(_) => {
                    let got = res.get(0).unwrap();
                    if got != 0 {
                        problems.push(format!(
                            "{dev}: try {t}: the sum of a zero-filled buffer of another queue is {got}"
                        ));
                        break;
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
