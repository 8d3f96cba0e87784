//! The SYCL 2020 reduction features that the capability matrix (tests/matrix.rs, whose
//! feature rows are in tests/common/feat.rs) does not cover: four variables of different types,
//! ops and plans in one launch (a float sum, an integer min and max, and an argmax), a
//! 65536-element span, the planner's refusals (and a declared identity that is not neutral),
//! 2-D and 3-D ranges with `item`, and the queue shortcuts. Each case is checked against a
//! host reference (integers and min/max exactly,
//! float sums within the plan's combination-depth bound); results are poisoned (a non-identity
//! initial value) so an unwritten result is caught; a combination a device cannot run is
//! printed as a SKIP with the reason.

use crate::common;

use clreduce::check::reference::{combination_depth, unit_roundoff};
use clreduce::plan::{GroupAlgo, Strategy};
use clreduce::{
    reduction, reduction_argmax, reduction_span, CustomOp, ElemType, Error, Form, Kernel, NdRange,
    Op, Options, Queue, Range, Reductions,
};
use common::feat::{data, form_size};
use common::*;

fn opts(s: Strategy) -> Options {
    Options::default().strategy(s)
}

/// Runs a launch; maps refusals the device explains to a skip.
fn launch(
    q: &Queue,
    form: Form,
    reds: impl Into<Reductions>,
    k: Kernel,
    s: Strategy,
) -> Result<clreduce::ReduceEvent, Outcome> {
    match q.parallel_for_reduce_with(form, reds, k, opts(s)) {
        Ok(ev) => Ok(ev),
        Err(e) if is_device_limit(&e) => Err(Outcome::Skip(e.to_string())),
        Err(e) => Err(Outcome::Fail(format!("launch: {e}"))),
    }
}

/// Four variables of different types, ops and plans in one launch: a float sum, an integer
/// min and max, and an argmax.
fn multi(q: &Queue, form: Form, s: Strategy) -> Outcome {
    let n = form_size(form) as usize;
    let x = data::<f32>(n, n as u64 ^ 31);
    let y = data::<i64>(n, n as u64 ^ 37);
    let xb = dev!(q.buffer_from(&x));
    let yb = dev!(q.buffer_from(&y));
    let sb = dev!(q.buffer_from(&[1.5f32]));
    let lo = dev!(q.buffer_from(&[5i64]));
    let hi = dev!(q.buffer_from(&[-5i64]));
    let av = dev!(q.buffer_from(&[0f32]));
    let ai = dev!(q.buffer_from(&[0u64]));
    let reds = vec![
        reduction(&sb, Op::Plus).name("s"),
        reduction(&lo, Op::Minimum).name("lo"),
        reduction(&hi, Op::Maximum).name("hi"),
        reduction_argmax(&av, &ai)
            .name("am")
            .initialize_to_identity(),
    ];
    let k = Kernel::new("s += x[i]; combine(lo, y[i]); hi_combine(y[i]); combine(am, x[i], i);")
        .arg("x", &xb)
        .arg("y", &yb);
    let ev = tri!(launch(q, form, reds, k, s));
    let plan = ev.plan().expect("a plan ran").clone();
    let es: f64 = x.iter().map(|&v| v as f64).sum::<f64>() + 1.5;
    let sum_abs: f64 = x.iter().map(|&v| (v as f64).abs()).sum::<f64>() + 1.5;
    let bound = combination_depth(&plan, 0) * unit_roundoff(ElemType::F32) * sum_abs;
    let elo = y.iter().copied().fold(5i64, i64::min);
    let ehi = y.iter().copied().fold(-5i64, i64::max);
    let mut eam = (f32::NEG_INFINITY, u64::MAX);
    for (j, &v) in x.iter().enumerate() {
        if v > eam.0 {
            eam = (v, j as u64);
        }
    }
    let got = (
        dev!(sb.get(0)),
        dev!(lo.get(0)),
        dev!(hi.get(0)),
        dev!(av.get(0)),
        dev!(ai.get(0)),
    );
    let ok = (got.0 as f64 - es).abs() <= bound + 2.0 * f32::EPSILON as f64 * es.abs()
        && got.1 == elo
        && got.2 == ehi
        && (got.3, got.4) == eam;
    if ok {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "got {got:?}, expected sum {es} (within {bound:e}), min {elo}, max {ehi}, argmax {eam:?} [{}]",
            plan.summary()
        ))
    }
}

/// The forms each feature runs in: range sizes and nd_range (local, groups) shapes.
fn forms(sim: bool) -> Vec<Form> {
    let mut v: Vec<Form> = [0u64, 1, 3, 257, 4097]
        .into_iter()
        .chain(if sim { vec![] } else { vec![65537, 1_000_003] })
        .map(|n| Form::Range(Range::new(n)))
        .collect();
    for (local, groups) in [(1usize, 7u64), (3, 5), (96, 3), (256, 2), (1000, 1)] {
        if sim && local > 256 {
            continue;
        }
        v.push(Form::NdRange(NdRange::new(local as u64 * groups, local)));
    }
    v
}

fn describe(f: Form) -> String {
    match f {
        Form::Range(r) => format!("range n={}", r.n),
        Form::NdRange(r) => format!("nd_range {}x{}", r.global / r.local as u64, r.local),
    }
}

/// Runs `f` on every device for the automatic strategy over every form, and for each forced
/// strategy over two forms.
fn run_all(test: &str, f: &dyn Fn(&Queue, Form, Strategy, usize) -> Outcome) {
    let mut t = Tally::new(test);
    for q in queues() {
        let d = q.device();
        let dev = short(d);
        let _sim = sim_lock(d);
        let sim = d.is_simulator();
        let started = std::time::Instant::now();
        for (pos, form) in forms(sim).into_iter().enumerate() {
            let case = format!("auto {}", describe(form));
            t.record(&dev, &case, f(q, form, Strategy::AUTO, pos));
        }
        let forced = Strategy::all_forced();
        for (pos, s) in forced.into_iter().enumerate() {
            for form in [
                Form::Range(Range::new(4097)),
                Form::NdRange(NdRange::new(96 * 5, 96)),
            ] {
                let case = format!("{s} {}", describe(form));
                t.record(&dev, &case, f(q, form, s, pos));
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}

#[test]
fn four_variables_in_one_launch() {
    run_all("multi", &|q, form, s, _| multi(q, form, s));
}

#[test]
fn span_65536_elements() {
    let mut t = Tally::new("span_large");
    for q in queues() {
        let d = q.device();
        let dev = short(d);
        let _sim = sim_lock(d);
        let n = if d.is_simulator() { 3000 } else { 1 << 20 };
        let sim = d.is_simulator();
        for (float, init) in [(false, false), (true, true)] {
            for form in [
                Form::Range(Range::new(n)),
                Form::NdRange(NdRange::new(64 * 13, 64)),
            ] {
                if sim && (float || matches!(form, Form::NdRange(_))) {
                    // One 65536-element copy per work-item is millions of simulated stores.
                    t.skip_device(
                        &dev,
                        "span 65536 on the simulator",
                        "too slow under Oclgrind; the u32 range case runs",
                    );
                    continue;
                }
                let case = format!(
                    "span 65536 {} {}",
                    if float { "f32 sum" } else { "u32 count" },
                    describe(form)
                );
                let c = Case {
                    op: Op::Plus,
                    ty: if float { ElemType::F32 } else { ElemType::U32 },
                    form,
                    init_to_identity: init,
                    strategy: Strategy::AUTO,
                    relaxed: false,
                    seed: 41,
                    feature: Some(Feature::Span(65536)),
                };
                let o = run_case(q, &c);
                t.record(&dev, &case, o);
            }
        }
    }
    t.finish();
}

#[test]
fn planner_refusals_name_the_reason() {
    let q = &queues()[0];
    let b = q.buffer_from(&[0i32]).unwrap();
    // initialize_to_identity with no identity.
    let e = q
        .parallel_for_reduce_with(
            Range::new(10),
            reduction(&b, CustomOp::new("max(a, b)")).initialize_to_identity(),
            Kernel::new("combine(sum, (int)i);"),
            Options::default(),
        )
        .expect_err("refused");
    assert!(matches!(e, Error::NoIdentity { .. }), "{e}");
    // A span reducer read in the body.
    let h = q.buffer_from(&[0u32; 4]).unwrap();
    let e = q
        .parallel_for_reduce_with(
            Range::new(10),
            reduction_span(&h, 4, Op::Plus).name("hist"),
            Kernel::new("uint x = hist[0]; hist[i % 4] += x;"),
            Options::default(),
        )
        .expect_err("refused");
    assert!(matches!(e, Error::BadArgument { .. }), "{e}");
    // A shorthand the op does not allow.
    let e = q
        .parallel_for_reduce_with(
            Range::new(10),
            reduction_span(&h, 4, Op::Minimum).name("hist"),
            Kernel::new("hist[i % 4] += 1;"),
            Options::default(),
        )
        .expect_err("refused");
    assert!(matches!(e, Error::ReducerOperator { .. }), "{e}");
    // A span longer than its buffer.
    let e = q
        .parallel_for_reduce_with(
            Range::new(10),
            reduction_span(&h, 5, Op::Plus).name("hist"),
            Kernel::new("hist[i % 5] += 1;"),
            Options::default(),
        )
        .expect_err("refused");
    assert!(matches!(e, Error::BufferTooShort { .. }), "{e}");
    // Forcing a group function on a span.
    let e = q
        .parallel_for_reduce_with(
            Range::new(10),
            reduction_span(&h, 4, Op::Plus).name("hist"),
            Kernel::new("hist[i % 4] += 1;"),
            Options::default().strategy(Strategy {
                group: Some(GroupAlgo::WgReduce),
                cross: None,
            }),
        )
        .expect_err("refused");
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    // Nothing was written by any refused launch.
    assert_eq!(h.to_vec().unwrap(), vec![0u32; 4]);
    assert_eq!(b.get(0).unwrap(), 0);
}

/// 2-D and 3-D ranges: `item` gives the id per dimension (row-major) and the range; the
/// linear id `i` matches; nd_range bodies see OpenCL's id functions in the user's dimensions.
#[test]
fn multi_dimensional_ranges_and_item() {
    let mut t = Tally::new("ranges");
    for q in queues() {
        let d = q.device();
        let dev = short(d);
        let _sim = sim_lock(d);
        let cases: Vec<(Form, &str)> = vec![
            (Range::new_2d(37, 53).into(), "range 37x53"),
            (Range::new_3d(5, 7, 11).into(), "range 5x7x11"),
            ([3u64, 1000].into(), "range [3, 1000]"),
            (Range::new(1001).into(), "range 1001 (1-D item)"),
            (NdRange::new_2d([12, 40], [4, 8]).into(), "nd 12x40 / 4x8"),
            (
                NdRange::new_3d([4, 6, 10], [2, 3, 5]).into(),
                "nd 4x6x10 / 2x3x5",
            ),
            (NdRange::new_2d([64, 3], [32, 1]).into(), "nd 64x3 / 32x1"),
        ];
        for (form, name) in cases {
            t.record(&dev, name, dims_case(q, form));
        }
        // Per-dimension divisibility, even when the totals divide.
        let b = q.buffer_from(&[0u64]).unwrap();
        let e = q
            .parallel_for_reduce_with(
                NdRange::new_2d([6, 4], [4, 6]),
                reduction(&b, Op::Plus),
                Kernel::new("sum += 1;"),
                Options::default(),
            )
            .err();
        match e {
            Some(Error::NdRangeNotDivisible { .. }) => t.pass(&dev),
            other => t.fail(
                &dev,
                "nd 6x4 / 4x6",
                &format!("expected NdRangeNotDivisible, got {other:?}"),
            ),
        }
    }
    t.finish();
}

fn dims_case(q: &Queue, form: Form) -> Outcome {
    let (g, l, nd): (Vec<u64>, Vec<u64>, bool) = match form {
        Form::Range(r) => (r.extents().to_vec(), vec![1; r.extents().len()], false),
        Form::NdRange(r) => (
            r.global_extents().to_vec(),
            r.local_extents().iter().map(|&x| x as u64).collect(),
            true,
        ),
    };
    let rank = g.len();
    let mut e = [1u64; 3];
    e[..rank].copy_from_slice(&g);
    // sum of a weighted id, the max of each range entry, and a count of linear-id mismatches.
    let s = dev!(q.buffer_from(&[0u64]));
    let rmax = dev!(q.buffer_from(&[0u64]));
    let bad = dev!(q.buffer_from(&[0u64]));
    let mut body = String::from(
        "sum += item.id[0] * 1000000 + item.id[1] * 1000 + item.id[2];\n\
         combine(rmax, item.range[0] * 10000 + item.range[1] * 100 + item.range[2] + item.dims * 1000000000);\n\
         bad += (item.linear_id != (ulong)i) + ((ulong)i != (item.id[0] * item.range[1] + item.id[1]) * item.range[2] + item.id[2]);\n",
    );
    if nd {
        // OpenCL's id functions in the user's dimensions agree with item and with each other.
        body.push_str(
            "for (uint d = 0; d < 3; ++d) {\n\
               bad += get_global_id(d) != item.id[d];\n\
               bad += get_global_id(d) != get_group_id(d) * get_local_size(d) + get_local_id(d);\n\
               bad += get_global_size(d) != item.range[d];\n\
               bad += get_num_groups(d) * get_local_size(d) != get_global_size(d);\n\
               bad += get_local_id(d) >= get_local_size(d);\n\
             }\n\
             bad += get_work_dim() != item.dims;\n\
             bad += get_global_linear_id() != i;\n",
        );
    }
    let reds = vec![
        reduction(&s, Op::Plus).name("sum"),
        reduction(&rmax, Op::Maximum).name("rmax"),
        reduction(&bad, Op::Plus).name("bad"),
    ];
    tri!(launch(q, form, reds, Kernel::new(&body), Strategy::AUTO));
    let mut expect = 0u64;
    for a in 0..e[0] {
        for b in 0..e[1] {
            for c in 0..e[2] {
                expect += a * 1_000_000 + b * 1000 + c;
            }
        }
    }
    let erange = e[0] * 10000 + e[1] * 100 + e[2] + rank as u64 * 1_000_000_000;
    let got = (dev!(s.get(0)), dev!(rmax.get(0)), dev!(bad.get(0)));
    let _ = l;
    if got == (expect, erange, 0) {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "got (sum, range, mismatches) {got:?}, expected ({expect}, {erange}, 0)"
        ))
    }
}

/// The queue's shortcuts: whole-buffer reductions with built-in, custom and identity-less
/// operators, argmin/argmax, and `parallel_for`.
#[test]
fn queue_shortcuts() {
    let mut t = Tally::new("shortcuts");
    for q in queues() {
        let d = q.device();
        let dev = short(d);
        let _sim = sim_lock(d);
        let x = data::<i64>(10_007, 3);
        let xb = q.buffer_from(&x).unwrap();
        let mut check = |name: &str, ok: bool, detail: String| {
            if ok {
                t.pass(&dev)
            } else {
                t.fail(&dev, name, &detail)
            }
        };
        let s = q.sum(&xb).unwrap();
        check("sum", s == x.iter().sum::<i64>(), format!("{s}"));
        let lo = q.min(&xb).unwrap();
        check("min", lo == *x.iter().min().unwrap(), format!("{lo}"));
        let hi = q.max(&xb).unwrap();
        check("max", hi == *x.iter().max().unwrap(), format!("{hi}"));
        let am = q.argmin(&xb).unwrap().unwrap();
        let first = x.iter().position(|&v| v == lo).unwrap() as u64;
        check("argmin", am == (lo, first), format!("{am:?}"));
        let am2 = q.argmax(&xb).unwrap().unwrap();
        let firstm = x.iter().position(|&v| v == hi).unwrap() as u64;
        check("argmax", am2 == (hi, firstm), format!("{am2:?}"));
        let c = q.reduce(&xb, CustomOp::new("a > b ? a : b")).unwrap();
        check("identity-less max", c == hi, format!("{c}"));
        let c = q
            .reduce(&xb, CustomOp::new("a + b").identity(0i64))
            .unwrap();
        check("custom sum", c == s, format!("{c}"));
        let empty = q.buffer::<f32>(0).unwrap();
        check("empty sum", q.sum(&empty).unwrap() == 0.0, String::new());
        check(
            "empty argmin",
            q.argmin(&empty).unwrap().is_none(),
            String::new(),
        );
        check(
            "empty identity-less",
            matches!(
                q.reduce(&empty, CustomOp::new("a > b ? a : b")),
                Err(Error::InvalidRange { .. })
            ),
            String::new(),
        );
        let out = q.buffer_from(&[0i64]).unwrap();
        q.parallel_for(
            [7u64, 11],
            reduction(&out, Op::Plus).initialize_to_identity(),
            Kernel::new("sum += item.id[0] * item.id[1];"),
        )
        .unwrap();
        let e: i64 = (0..7).map(|a| (0..11).map(|b| a * b).sum::<i64>()).sum();
        let got = out.get(0).unwrap();
        check("parallel_for 2-D", got == e, format!("{got} vs {e}"));
    }
    t.finish();
}

/// An initial value that is no identity of `a + b`, to show an unchanged result.
const START_ID: i32 = 424_242;

/// Issue 21: `a + b` declared with identity 5 over 10000 ones gave 18000 on PoCL and 10125 on
/// Intel. A declared identity that is not neutral on sample values of its type is refused at
/// plan time (launch and explain), the result unchanged; a neutral one runs.
#[test]
fn declared_identity_that_is_not_neutral() {
    use clreduce::{CustomOp, Value};
    let q = queues()
        .iter()
        .find(|q| !q.device().is_simulator())
        .expect("a non-simulator device");
    let ones = q.buffer_from(&vec![1i32; 10000]).unwrap();
    let res = q.buffer_from(&[START_ID]).unwrap();
    let bad = || reduction(&res, CustomOp::new("a + b").identity(5i32));
    let kernel = Kernel::new("combine(sum, x[i]);").arg("x", &ones);
    let want = Error::NotAnIdentity {
        expr: "a + b".into(),
        ty: ElemType::I32,
        identity: Value::I32(5),
        a: Value::I32(5),
        b: Value::I32(0),
        got: Value::I32(5),
        want: Value::I32(0),
    };
    for (what, r) in [
        (
            "launch",
            q.parallel_for_reduce_with(
                Range::new(10000),
                bad(),
                kernel.clone(),
                Options::default(),
            )
            .map(drop),
        ),
        (
            "explain",
            q.explain(Range::new(10000), bad(), Options::default())
                .map(drop),
        ),
    ] {
        let e = r.expect_err(what);
        assert_eq!(format!("{e:?}"), format!("{want:?}"), "{what}");
        assert_eq!(
            e.to_string(),
            "5 is not an identity of the combiner `a + b` on i32: with a = 5, b = 0 it gives 5, not 0"
        );
        assert_eq!(res.get(0).unwrap(), START_ID, "{what}");
    }
    // Both operand orders are checked: `b` gives x back for (identity, x), not for (x, identity).
    let e = q
        .explain(
            Range::new(10),
            reduction(&res, CustomOp::new("b").identity(0i32)),
            Options::default(),
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotAnIdentity {
                a: Value::I32(1),
                b: Value::I32(0),
                got: Value::I32(0),
                want: Value::I32(1),
                ..
            }
        ),
        "{e:?}"
    );
    // Neutral identities, and combiners the host evaluator cannot read, run.
    let good = reduction(&res, CustomOp::new("a + b").identity(0i32));
    q.parallel_for_reduce_with(Range::new(10000), good, kernel, Options::default())
        .unwrap();
    assert_eq!(res.get(0).unwrap(), START_ID + 10000);
    let opaque = reduction(&res, CustomOp::new("add_sat(a, b)").identity(0i32));
    q.explain(Range::new(10), opaque, Options::default())
        .expect("a combiner outside the host evaluator is not checked");
}

/// Kernel arguments may take any name that is not clreduce's (`i`, `n`, `item`, `combine`,
/// `clr_*`): names such as `u`, `stride`, `start`, `end`, `chunk`, `items` or `acc_0` once
/// collided with the generated call's parameter or clr_main's locals and got their values.
#[test]
fn argument_names_are_passed_as_themselves() {
    for q in queues() {
        let _serial = sim_lock(q.device());
        let u: Vec<i32> = (0..1000).map(|v| v % 13).collect();
        let bu = q.buffer_from(&u).unwrap();
        let acc = q.buffer_from(&[5i32]).unwrap();
        let want: i64 = u.iter().map(|&v| v as i64 + 3 + 4 + 5 + 6 + 7 + 5).sum();
        for form in [range(1000), nd(1000, 8)] {
            let s = q.buffer_from(&[0i64]).unwrap();
            q.parallel_for_reduce_with(
                form,
                reduction(&s, Op::Plus),
                Kernel::new("sum += u[i] + stride + start + end + chunk + items + acc_0[0];")
                    .arg("u", &bu)
                    .scalar("stride", 3i32)
                    .scalar("start", 4i32)
                    .scalar("end", 5i32)
                    .scalar("chunk", 6i32)
                    .scalar("items", 7i32)
                    .arg("acc_0", &acc),
                Options::default(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", short(q.device())));
            assert_eq!(s.get(0).unwrap(), want, "{} {form:?}", short(q.device()));
        }
    }
}
