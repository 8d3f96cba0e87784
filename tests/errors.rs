//! Every documented error is triggered and checked: its variant, its fields, its message, and
//! that the user's result buffer is unchanged afterwards (read back from the device).
//!
//! Errors with no public way to trigger them are listed at the end (`unreachable_errors`).
//! Tested in other files: `AllocTooLarge` (tests/memory.rs), `OutOfDeviceMemory` (through the
//! test-only fault injection, tests/faults.rs), `AmbiguousDevice` (tests/select.rs),
//! `NotAnIdentity` (tests/features.rs, with the planner's other refusals).

//!
//! This file: geometry, local memory, builds, reducer shorthands, names, forced strategies;
//! tests/errors_input.rs: types, masks, strategies and names by text, buffers, devices and
//! profiling.

use crate::common;
#[path = "errs/helpers.rs"]
mod errs;

use clreduce::plan::{CrossAlgo, GroupAlgo, Strategy};
use clreduce::DynBuffer;
use clreduce::{
    reduction, Buffer, ElemType, Error, Kernel, NdRange, Op, Options, Range, Reductions,
};
use common::*;
use errs::*;

#[test]
fn nd_range_not_divisible() {
    for q in queues() {
        let _sim = sim_lock(q.device());
        for init in [false, true] {
            let e = launch_err(
                q,
                NdRange::new(1000, 96),
                Op::Plus,
                init,
                sum_body,
                Options::default(),
            );
            match &e {
                Error::NdRangeNotDivisible { global, local } => {
                    assert_eq!(global, &vec![1000]);
                    assert_eq!(local, &vec![96]);
                }
                other => panic!("{other:?}"),
            }
            let msg = e.to_string();
            assert!(msg.contains("1000") && msg.contains("96") && msg.contains("errc::nd_range"));
        }
    }
}

#[test]
fn work_group_too_large() {
    for q in queues() {
        let _sim = sim_lock(q.device());
        let max = q.caps().max_work_group_size;
        let local = max + 1;
        let e = launch_err(
            q,
            NdRange::new(2 * local as u64, local),
            Op::Plus,
            true,
            sum_body,
            Options::default(),
        );
        match &e {
            Error::WorkGroupTooLarge {
                local: l,
                limit,
                limit_name,
                device,
            } => {
                assert_eq!(*l, local);
                assert_eq!(*limit, max);
                assert_eq!(*limit_name, "CL_DEVICE_MAX_WORK_GROUP_SIZE");
                assert_eq!(device, &q.caps().label());
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains(&max.to_string()));
    }
}

#[test]
fn invalid_range_local_zero() {
    let q = fast_queue();
    let e = launch_err(
        q,
        NdRange::new(0, 0),
        Op::Plus,
        true,
        sum_body,
        Options::default(),
    );
    assert!(matches!(e, Error::InvalidRange { .. }), "{e:?}");
    let e = launch_err(
        q,
        NdRange::new(64, 0),
        Op::Plus,
        false,
        sum_body,
        Options::default(),
    );
    assert!(matches!(e, Error::InvalidRange { .. }), "{e:?}");
}

/// An f64 local-memory tree whose need exceeds the device's local memory: one variable where
/// the largest work-group is enough, else as many f64 tree variables as it takes.
#[test]
fn local_memory_over_budget() {
    let mut tally = Tally::new("local_memory_over_budget");
    for q in queues() {
        let _sim = sim_lock(q.device());
        let dev = short(q.device());
        let caps = q.caps();
        if caps.supports_type(ElemType::F64).is_err() {
            tally.skip(&dev, "f64 tree", "the device lacks fp64");
            continue;
        }
        let local = caps.max_local_1d();
        let per_var = local as u64 * 8;
        let vars = (caps.local_mem_size + 1 - 4).div_ceil(per_var).max(1) as usize;
        if vars > 64 {
            tally.skip(
                &dev,
                "f64 tree",
                &format!(
                    "{} bytes of local memory would need {vars} f64 tree variables",
                    caps.local_mem_size
                ),
            );
            continue;
        }
        let results: Vec<Buffer<f64>> = (0..vars)
            .map(|k| q.buffer_from(&[k as f64 + 0.5]).unwrap())
            .collect();
        let reds: Vec<_> = results
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
        let x = q.buffer_from(&vec![1.0f64; local * 2]).unwrap();
        let body: String = (0..vars).map(|k| format!("s{k} += x[i];\n")).collect();
        let strategy = Strategy {
            group: Some(GroupAlgo::Tree),
            cross: None,
        };
        let r = q.parallel_for_reduce_with(
            NdRange::new(2 * local as u64, local),
            Reductions(reds),
            Kernel::new(&body).arg("x", &x),
            Options::default().strategy(strategy),
        );
        match r {
            Err(Error::LocalMemory {
                local: l,
                need,
                have,
                detail,
                device,
            }) => {
                let ok = l == local
                    && need > have
                    && have == caps.local_mem_size
                    && need >= vars as u64 * per_var
                    && detail.contains("tree")
                    && device == caps.label();
                if ok {
                    tally.pass(&dev)
                } else {
                    tally.fail(
                        &dev,
                        "LocalMemory fields",
                        &format!("local {l} need {need} have {have} detail {detail}"),
                    )
                }
            }
            Err(e) => tally.fail(&dev, "f64 tree", &format!("other error: {e}")),
            Ok(ev) => tally.fail(
                &dev,
                "f64 tree",
                &format!(
                    "launched {vars} vars x {local} work-items ({:?})",
                    ev.plan().map(|p| p.local_bytes)
                ),
            ),
        }
        for (k, b) in results.iter().enumerate() {
            if b.get(0).unwrap() != k as f64 + 0.5 {
                tally.fail(&dev, "result unchanged", &format!("variable {k} changed"));
            }
        }
        // The range form shrinks its work-group instead of failing.
        let p = q
            .explain(
                Range::new(1 << 20),
                Reductions(
                    results
                        .iter()
                        .enumerate()
                        .map(|(k, b)| reduction(b, Op::Plus).name(&format!("s{k}")))
                        .collect(),
                ),
                Options::default().strategy(strategy),
            )
            .map_err(|e| e.to_string());
        match p {
            Ok(p) if p.local_bytes <= caps.local_mem_size => tally.pass(&dev),
            other => tally.fail(&dev, "range form shrinks", &format!("{other:?}")),
        }
    }
    tally.finish();
}

#[test]
fn body_that_does_not_compile() {
    for q in queues() {
        let _sim = sim_lock(q.device());
        let dev = short(q.device());
        for init in [false, true] {
            let e = launch_err(
                q,
                Range::new(100),
                Op::Plus,
                init,
                |x| {
                    Kernel::new("int a = 1;\nsum += x[i] + a + not_declared_anywhere;\n")
                        .arg("x", x)
                },
                Options::default(),
            );
            match &e {
                Error::BodyBuild {
                    device,
                    log,
                    generated,
                    ..
                } => {
                    assert_eq!(device, &q.device().label(), "{dev}");
                    assert!(
                        log.contains("body:2"),
                        "{dev}: the log should point at body line 2:\n{log}"
                    );
                    assert!(log.contains("not_declared_anywhere"), "{dev}: {log}");
                    assert!(generated.contains("not_declared_anywhere"));
                    let listing = e.source_listing().unwrap();
                    assert!(listing.contains("| sum += x[i] + a + not_declared_anywhere;"));
                    assert!(e.to_string().contains("does not compile"));
                    no_generated_body_lines(&dev, log, generated, "not_declared_anywhere");
                }
                other => panic!("{dev}: {other}"),
            }
        }
        // Issue 21: a macro argument error reported `body:1:1` but echoed the generated
        // file's line 713 (PoCL: a second location on the line; Intel: a numbered echo).
        let e = launch_err(
            q,
            Range::new(100),
            Op::Plus,
            false,
            |x| Kernel::new("combine(sum, x[i], 3);").arg("x", x),
            Options::default(),
        );
        match &e {
            Error::BodyBuild { log, generated, .. } => {
                assert!(log.contains("body:1:"), "{dev}: {log}");
                no_generated_body_lines(&dev, log, generated, "combine(sum, x[i], 3);");
            }
            other => panic!("{dev}: {other}"),
        }
    }
}

/// The mapped log shows the body line holding `marker` by its body number only: neither its
/// generated line number as a location (`:L:`) nor as an echo's gutter (`L |`).
fn no_generated_body_lines(dev: &str, log: &str, generated: &str, marker: &str) {
    let line = generated
        .lines()
        .position(|l| l.contains(marker))
        .expect("the body is in the generated source")
        + 1;
    assert!(
        !log.contains(&format!(":{line}:")) && !log.contains(&format!("{line} |")),
        "{dev}: the log still shows the generated line {line}:\n{log}"
    );
}

/// A body that breaks the generated code after it: the error is not in the body, so it is a
/// plain Build error with the whole log and source.
#[test]
fn generated_code_that_does_not_compile() {
    let q = fast_queue();
    let e = launch_err(
        q,
        Range::new(100),
        Op::Plus,
        false,
        |x| {
            Kernel::new("sum += x[i];\n#define clr_fold_0 clr_not_a_function_anywhere\n")
                .arg("x", x)
        },
        Options::default(),
    );
    match &e {
        Error::Build { log, options, .. } => {
            assert!(log.contains("clr_not_a_function_anywhere"), "{log}");
            assert!(options.contains("-cl-std="), "{options}");
            assert!(e.source_listing().is_some());
        }
        other => panic!("{other}"),
    }
}

#[test]
fn reducer_shorthand_not_allowed() {
    let q = fast_queue();
    let cases: [(Op, Option<&str>, &str, &str, &str); 6] = [
        (Op::Plus, None, "sum -= x[i];", "sum", "-="),
        (Op::Plus, None, "--sum;", "sum", "--"),
        (Op::Plus, None, "sum *= x[i];", "sum", "*="),
        (Op::Minimum, Some("lo"), "lo += x[i];", "lo", "+="),
        (Op::Maximum, Some("hi"), "hi++;", "hi", "++"),
        (Op::BitXor, None, "sum |= x[i];", "sum", "|="),
    ];
    for (op, name, body, want_name, want_op) in cases {
        let x = q.buffer_from(&[1i32, 2, 3]).unwrap();
        let res = q.buffer_from(&[START]).unwrap();
        let mut r = reduction(&res, op).initialize_to_identity();
        if let Some(n) = name {
            r = r.name(n);
        }
        match q.parallel_for_reduce_with(
            Range::new(3),
            r,
            Kernel::new(body).arg("x", &x),
            Options::default(),
        ) {
            Err(e @ Error::ReducerOperator { .. }) => {
                let Error::ReducerOperator {
                    name,
                    operator,
                    op: opname,
                } = &e
                else {
                    unreachable!()
                };
                assert_eq!(name, want_name, "{body}");
                assert_eq!(operator, want_op, "{body}");
                assert_eq!(opname, op.name(), "{body}");
                assert!(e.to_string().contains(&format!("combine({want_name}")));
            }
            Err(e) => panic!("{body}: {e}"),
            Ok(_) => panic!("{body}: accepted"),
        }
        assert_eq!(res.get(0).unwrap(), START, "{body}");
    }
    // The allowed shorthands are accepted.
    for (op, body) in [
        (Op::Plus, "sum += x[i];"),
        (Op::Plus, "if (x[i] > 1) sum++;"),
        (Op::Multiplies, "sum *= x[i];"),
        (Op::BitOr, "sum |= x[i];"),
    ] {
        let x = q.buffer_from(&[1i32, 2, 3]).unwrap();
        let res = q.buffer_from(&[0i32]).unwrap();
        q.parallel_for_reduce_with(
            Range::new(3),
            reduction(&res, op).initialize_to_identity(),
            Kernel::new(body).arg("x", &x),
            Options::default(),
        )
        .unwrap_or_else(|e| panic!("{body}: {e}"));
        let want = match body {
            "sum += x[i];" => 6,
            "if (x[i] > 1) sum++;" => 2,
            "sum *= x[i];" => 6,
            _ => 3,
        };
        assert_eq!(res.get(0).unwrap(), want, "{body}");
    }
}

#[test]
fn bad_argument_names() {
    let q = fast_queue();
    let x = q.buffer_from(&[1i32, 2, 3]).unwrap();
    let x2 = q.buffer_from(&[1i32, 2, 3]).unwrap();
    let y = q.buffer_from(&[1.0f32]).unwrap();
    type Build<'a> = Box<dyn Fn(&Buffer<i32>) -> (Option<&'a str>, Kernel) + 'a>;
    let cases: Vec<(&str, &str, Build)> = vec![
        (
            "x",
            "bound twice",
            Box::new(|_| (None, Kernel::new("sum += x[i];").arg("x", &x).arg("x", &x2))),
        ),
        (
            "x",
            "arg_mut",
            Box::new(|r| (None, Kernel::new("sum += x[i];").arg("x", r))),
        ),
        (
            "w",
            "two writers",
            Box::new(|r| (None, Kernel::new("sum += 1; w[0] = 1;").arg_mut("w", r))),
        ),
        (
            "x",
            "bound twice",
            Box::new(|_| {
                (
                    None,
                    Kernel::new("sum += x[i];").arg("x", &x).scalar("x", 2i32),
                )
            }),
        ),
        (
            "sum",
            "bound twice",
            Box::new(|_| {
                (
                    None,
                    Kernel::new("sum += x[i];").arg("x", &x).arg("sum", &y),
                )
            }),
        ),
        (
            "i",
            "reserved",
            Box::new(|_| (None, Kernel::new("sum += 1;").arg("i", &x))),
        ),
        (
            "n",
            "reserved",
            Box::new(|_| (None, Kernel::new("sum += 1;").scalar("n", 3i32))),
        ),
        (
            "combine",
            "reserved",
            Box::new(|_| (None, Kernel::new("sum += 1;").arg("combine", &x))),
        ),
        (
            "clr_x",
            "reserved",
            Box::new(|_| (None, Kernel::new("sum += 1;").arg("clr_x", &x))),
        ),
        (
            "CLR_WG",
            "reserved",
            Box::new(|_| (None, Kernel::new("sum += 1;").scalar("CLR_WG", 1u32))),
        ),
        (
            "1x",
            "identifier",
            Box::new(|_| (None, Kernel::new("sum += 1;").arg("1x", &x))),
        ),
        (
            "a-b",
            "identifier",
            Box::new(|_| (None, Kernel::new("sum += 1;").arg("a-b", &x))),
        ),
        (
            "",
            "identifier",
            Box::new(|_| (None, Kernel::new("sum += 1;").arg("", &x))),
        ),
        (
            "n",
            "reserved",
            Box::new(|_| (Some("n"), Kernel::new("n += 1;"))),
        ),
        (
            "a b",
            "identifier",
            Box::new(|_| (Some("a b"), Kernel::new("sum += 1;"))),
        ),
    ];
    for (want, problem, build) in cases {
        let res = q.buffer_from(&[START]).unwrap();
        let (rname, kernel) = build(&res);
        let mut r = reduction(&res, Op::Plus).initialize_to_identity();
        if let Some(n) = rname {
            r = r.name(n);
        }
        match q.parallel_for_reduce_with(Range::new(3), r, kernel, Options::default()) {
            Err(Error::BadArgument { name, problem: p }) => {
                assert_eq!(name, want);
                assert!(p.contains(problem), "{want}: {p}");
            }
            Err(e) => panic!("{want:?}: {e}"),
            Ok(_) => panic!("{want:?}: accepted"),
        }
        assert_eq!(res.get(0).unwrap(), START, "{want:?}");
    }
    // Two reductions with the same reducer name.
    let a = q.buffer_from(&[START]).unwrap();
    let b = q.buffer_from(&[START]).unwrap();
    let e = q
        .parallel_for_reduce_with(
            Range::new(3),
            (
                reduction(&a, Op::Plus).name("t"),
                reduction(&b, Op::Maximum).name("t"),
            ),
            Kernel::new("t += 1;"),
            Options::default(),
        )
        .expect_err("duplicate reducer names");
    assert!(
        matches!(&e, Error::BadArgument { name, .. } if name == "t"),
        "{e}"
    );
    assert_eq!((a.get(0).unwrap(), b.get(0).unwrap()), (START, START));
}

/// Forced strategies a device lacks the capabilities for: `Unsupported` naming what is
/// missing. Checked on every device for every forced step it cannot run.
#[test]
fn forced_strategy_unsupported() {
    let mut tally = Tally::new("forced_strategy_unsupported");
    for q in queues() {
        let _sim = sim_lock(q.device());
        let dev = short(q.device());
        let caps = q.caps();
        for (op, ty) in [(Op::Plus, ElemType::F32), (Op::Multiplies, ElemType::I32)] {
            for g in GroupAlgo::ALL {
                let want = match g {
                    GroupAlgo::WgReduce if !group_allowed(caps, g, op, ty) => {
                        if caps.work_group_collectives {
                            "work-group collective for"
                        } else {
                            "work-group collective functions"
                        }
                    }
                    GroupAlgo::SgReduce if caps.sub_groups.is_none() && !caps.warp_shuffle_ptx => {
                        "sub-groups"
                    }
                    GroupAlgo::LocalAtomic if !group_allowed(caps, g, op, ty) => {
                        "fast local atomics"
                    }
                    _ => continue,
                };
                let s = Strategy {
                    group: Some(g),
                    cross: Some(CrossAlgo::ExtraPass),
                };
                let case = format!("{s} {op} {ty}");
                let res = DynBuffer::scalar(q, val(ty, 9)).unwrap();
                let x =
                    DynBuffer::upload(q, &clreduce::check::reference::random_input(op, ty, 10, 1))
                        .unwrap();
                match q.parallel_for_reduce_with(
                    Range::new(10),
                    reduction(&res, op).initialize_to_identity(),
                    Kernel::new("combine(sum, x[i]);").arg("x", &x),
                    Options::default().strategy(s).relaxed(),
                ) {
                    Err(Error::Unsupported {
                        what,
                        missing,
                        device,
                    }) if missing.contains(want) && device == caps.label() => {
                        assert!(what.contains(g.name()), "{what}");
                        tally.pass(&dev);
                    }
                    Err(e) => tally.fail(
                        &dev,
                        &case,
                        &format!("expected Unsupported naming {want:?}: {e}"),
                    ),
                    Ok(_) => tally.fail(&dev, &case, "accepted"),
                }
                if res.value(0).unwrap() != val(ty, 9) {
                    tally.fail(&dev, &case, "result changed");
                }
            }
            // Global atomics for the cross step.
            if !cross_allowed(caps, CrossAlgo::Atomic, op, ty, true) {
                let res = DynBuffer::scalar(q, val(ty, 9)).unwrap();
                let s = Strategy {
                    group: Some(GroupAlgo::Tree),
                    cross: Some(CrossAlgo::Atomic),
                };
                match q.explain(
                    Range::new(1 << 20),
                    reduction(&res, op).initialize_to_identity(),
                    Options::default().strategy(s).relaxed(),
                ) {
                    Err(Error::Unsupported { missing, .. })
                        if missing.contains("global atomics") =>
                    {
                        tally.pass(&dev)
                    }
                    other => tally.fail(&dev, &format!("{s} {op} {ty}"), &format!("{other:?}")),
                }
            }
        }
        // The ask the brief names: work-group collectives on PoCL.
        if q.device()
            .platform()
            .contains("Portable Computing Language")
        {
            let e = launch_err(
                q,
                Range::new(1000),
                Op::Plus,
                true,
                sum_body,
                Options::default().strategy(Strategy::parse("wg-reduce+last-group").unwrap()),
            );
            match e {
                Error::Unsupported { missing, .. }
                    if missing.contains("__opencl_c_work_group_collective_functions") =>
                {
                    tally.pass(&dev)
                }
                other => tally.fail(&dev, "wg-reduce on PoCL", &other.to_string()),
            }
        }
        // logical_and/or atomics need initialize_to_identity to normalise the initial value.
        if caps.fast_atomic(Op::LogicalAnd, ElemType::I32, clreduce::caps::Space::Global) {
            let e = launch_err(
                q,
                Range::new(1000),
                Op::LogicalAnd,
                false,
                |x| Kernel::new("combine(sum, x[i]);").arg("x", x),
                Options::default().strategy(Strategy::parse("tree+atomic").unwrap()),
            );
            match e {
                Error::Unsupported { missing, .. }
                    if missing.contains("initialize_to_identity") =>
                {
                    tally.pass(&dev)
                }
                other => tally.fail(&dev, "tree+atomic land without init", &other.to_string()),
            }
        }
    }
    tally.finish();
}

/// Forcing float atomics under plus in deterministic mode is refused; relaxed allows it.
#[test]
fn forced_float_atomics_need_relaxed() {
    let mut tally = Tally::new("forced_float_atomics_need_relaxed");
    for q in queues() {
        let _sim = sim_lock(q.device());
        let dev = short(q.device());
        let caps = q.caps();
        for s in ["local-atomic+last-group", "tree+atomic"] {
            let s = Strategy::parse(s).unwrap();
            let c = Case {
                op: Op::Plus,
                ty: ElemType::F32,
                form: range(5000),
                init_to_identity: true,
                strategy: s,
                relaxed: true,
                seed: 1,
                feature: None,
            };
            if let Err(why) = strategy_allowed(caps, &c) {
                tally.skip_device(&dev, &s.to_string(), &format!("the device lacks {why}"));
                continue;
            }
            let res = q.buffer_from(&[START as f32]).unwrap();
            let x = q.buffer_from(&vec![0.5f32; 5000]).unwrap();
            let launch = |opts: Options| {
                q.parallel_for_reduce_with(
                    Range::new(5000),
                    reduction(&res, Op::Plus).initialize_to_identity(),
                    Kernel::new("sum += x[i];").arg("x", &x),
                    opts.strategy(s),
                )
            };
            match launch(Options::default()) {
                Err(Error::Unsupported { missing, .. }) if missing.contains("determinism") => {
                    tally.pass(&dev)
                }
                Err(e) => tally.fail(&dev, &s.to_string(), &format!("{e}")),
                Ok(_) => tally.fail(
                    &dev,
                    &s.to_string(),
                    "deterministic mode accepted float atomics",
                ),
            }
            if res.get(0).unwrap() != START as f32 {
                tally.fail(&dev, &s.to_string(), "result changed");
            }
            match launch(Options::default().relaxed()) {
                Ok(ev) => {
                    let p = ev.plan().unwrap().clone();
                    let got = res.get(0).unwrap();
                    if got == 2500.0 && !p.deterministic {
                        tally.pass(&dev)
                    } else {
                        tally.fail(&dev, &s.to_string(), &format!("relaxed: {got}, {p:?}"))
                    }
                }
                Err(e) => tally.fail(&dev, &s.to_string(), &format!("relaxed: {e}")),
            }
        }
    }
    tally.finish();
}
