//! Kernel bodies as Rust closures (`kernel!`), on every device found: each op family (sum,
//! product, min/max, bitwise, logical, argmin/argmax, a custom op with an identity and an
//! identity-less one), both forms (range and nd_range), 1-D to 3-D ids (`usize`, `Item`,
//! `NdItem`), several reductions in one launch, spans, bodies that use the whole subset
//! (locals, loops, casts, math, writes to a captured buffer), and the errors a closure can meet
//! at run time. Every device result is checked against the closure's host form
//! (`Closure::run_on_host`) and against the existing host references (`clreduce::check::reference`)
//! or an independent Rust computation: integers and min/max exactly, float sums within the
//! plan's combination-depth bound (plus the stated slack of OpenCL's built-ins where a body
//! calls them). Results start from a non-identity value, so an unwritten result is caught. A
//! combination a device cannot run is a SKIP with the reason.

use crate::common;

use clreduce::__private::{ClosureElem, HostEnv};
use clreduce::check::reference::{
    self, combination_depth, random_input, random_input_ties, reference_arg, reference_span,
    reference_with, unit_roundoff, HostOp, HostVec, Reference,
};
use clreduce::closure::{Args, Closure, HostBody, HostResult, HostRun};
use clreduce::plan::Plan;
use clreduce::{
    kernel, reduction, reduction_argmax, reduction_argmin, reduction_span, CustomOp, ElemType,
    Error, Form, Kernel, NdRange, Op, Options, Queue, Range, Reduction, Reductions, Value,
};
use common::*;

/// Element types the tests build buffers of from host vectors.
trait El: ClosureElem {
    fn of(v: Value) -> Self;
    fn all(h: &HostVec) -> Vec<Self> {
        (0..h.len()).map(|j| Self::of(h.value(j))).collect()
    }
}
macro_rules! el {
    ($t:ty, $v:ident) => {
        impl El for $t {
            fn of(v: Value) -> Self {
                match v {
                    Value::$v(x) => x,
                    other => panic!("{other:?} is not a {}", stringify!($t)),
                }
            }
        }
    };
}
el!(i32, I32);
el!(u32, U32);
el!(i64, I64);
el!(u64, U64);
el!(f32, F32);
el!(f64, F64);

fn value_int(v: Value) -> Option<i128> {
    v.as_int()
}

/// The sizes a device runs: smaller on the simulator.
fn size(q: &Queue, big: u64, small: u64) -> u64 {
    if q.device().is_simulator() {
        small
    } else {
        big
    }
}

/// Runs `k`'s host form, then launches it, with the same reductions (the host form reads the
/// reductions' initial values first). A refusal the device explains is a skip.
fn both<F, B, A>(
    q: &Queue,
    form: Form,
    reds: &[Reduction],
    k: &Closure<'_, F, B, A>,
) -> Result<(Option<Plan>, HostRun), Outcome>
where
    F: Fn(&HostEnv) -> clreduce::Result<B>,
    B: HostBody<A>,
    A: Args,
{
    let host = k
        .run_on_host(q, form, Reductions(reds.to_vec()))
        .map_err(|e| Outcome::Fail(format!("host form: {e}")))?;
    let ev =
        match q.parallel_for_reduce_with(form, Reductions(reds.to_vec()), k, Options::default()) {
            Ok(ev) => ev,
            Err(e) if is_device_limit(&e) => return Err(Outcome::Skip(e.to_string())),
            Err(e) => return Err(Outcome::Fail(format!("launch: {e}"))),
        };
    ev.wait().map_err(|e| Outcome::Fail(format!("wait: {e}")))?;
    Ok((ev.plan().cloned(), host))
}

/// A launch of some closure with the given reductions (`both`).
type Launch<'a> = dyn Fn(&[Reduction]) -> Result<(Option<Plan>, HostRun), Outcome> + 'a;
/// Records one case's outcome under its name.
type Record<'a> = dyn FnMut(&str, Outcome) + 'a;

fn depth(plan: &Option<Plan>, k: usize) -> f64 {
    plan.as_ref().map_or(1.0, |p| combination_depth(p, k))
}

/// A plain reduction's device result against the host form (which must equal `expect`, the
/// existing reference, exactly: both fold in index order).
fn check_plain(
    op: Op,
    got: Value,
    host: &HostResult,
    expect: &Reference,
    depth: f64,
) -> Result<(), String> {
    let HostResult::Value { ty, reference: h } = host else {
        return Err(format!("host form gave {host:?}"));
    };
    if h != expect {
        return Err(format!(
            "host form {h:?} differs from the reference {expect:?}"
        ));
    }
    reference::check(op, *ty, got.to_f64(), value_int(got), h, depth)
}

fn outcome(r: Result<(), String>, what: &str) -> Outcome {
    match r {
        Ok(()) => Outcome::Pass,
        Err(m) => Outcome::Fail(format!("{what}: {m}")),
    }
}

/// One op over type `T`: `r.combine(x[i])`, and the op's shorthand (`*r += x[i]`, ...) where it
/// has one, from a non-identity initial value or under initialize_to_identity.
fn op_family<T: El>(q: &Queue, op: Op, form: Form, init_to_identity: bool, seed: u64) -> Outcome {
    let ty = T::TYPE;
    let n = feat_size(form);
    let data = random_input(op, ty, n, seed);
    let x = dev!(q.buffer_from(&T::all(&data)));
    let init = initial(op, ty, seed);
    let res = dev!(q.buffer_from(&[T::of(init)]));
    let mut red = reduction(&res, op);
    if init_to_identity {
        red = red.initialize_to_identity();
    }
    let expect = reference::reference(op, &data, (!init_to_identity).then_some(init));
    let run = |label: &str, k: &Launch| {
        dev!(res.write(0, &[T::of(init)]));
        let (plan, host) = tri!(k(std::slice::from_ref(&red)));
        let got = dev!(res.get(0)).value();
        outcome(
            check_plain(op, got, &host.results[0], &expect, depth(&plan, 0)),
            label,
        )
    };
    let combine = kernel!(|i, r| r.combine(x[i]));
    let o = run("r.combine(x[i])", &|reds| both(q, form, reds, &combine));
    if !matches!(o, Outcome::Pass) {
        return o;
    }
    match op {
        Op::Plus => run("*r += x[i]", &|reds| {
            both(q, form, reds, &kernel!(|i, r| *r += x[i]))
        }),
        Op::Multiplies => run("*r *= x[i]", &|reds| {
            both(q, form, reds, &kernel!(|i, r| *r *= x[i]))
        }),
        Op::BitAnd => run("*r &= x[i]", &|reds| {
            both(q, form, reds, &kernel!(|i, r| *r &= x[i]))
        }),
        Op::BitOr => run("*r |= x[i]", &|reds| {
            both(q, form, reds, &kernel!(|i, r| *r |= x[i]))
        }),
        Op::BitXor => run("*r ^= x[i]", &|reds| {
            both(q, form, reds, &kernel!(|i, r| *r ^= x[i]))
        }),
        _ => Outcome::Pass,
    }
}

fn feat_size(f: Form) -> usize {
    common::feat::form_size(f) as usize
}

fn forms(q: &Queue) -> Vec<Form> {
    let n = size(q, 100_003, 1_001);
    vec![
        Form::Range(Range::new(n)),
        Form::NdRange(NdRange::new(96 * size(q, 40, 3), 96)),
    ]
}

fn describe(f: Form) -> String {
    match f {
        Form::Range(r) => format!("range {:?}", r.extents()),
        Form::NdRange(r) => format!("nd_range {:?}/{:?}", r.global_extents(), r.local_extents()),
    }
}

/// Runs `case` on every device, tallying pass/fail/skip.
fn on_devices(test: &str, case: &dyn Fn(&Queue, &mut Record)) {
    let mut t = Tally::new(test);
    for q in queues() {
        let d = q.device();
        let dev = short(d);
        let _sim = sim_lock(d);
        let started = std::time::Instant::now();
        case(q, &mut |name, o| t.record(&dev, name, o));
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}

#[test]
fn op_families() {
    on_devices("closure op families", &|q, rec| {
        let pairs = valid_pairs();
        for (k, &(op, ty)) in pairs.iter().enumerate() {
            // Every (op, type) pair in one form, the form alternating; every op's first pair in
            // both.
            let first_of_op = k == 0 || pairs[k - 1].0 != op;
            for (j, form) in forms(q).into_iter().enumerate() {
                if !first_of_op && (k + j) % 2 == 1 {
                    continue;
                }
                let init_to_identity = (k + j) % 3 == 0;
                let seed = 17 + k as u64;
                let o = match ty {
                    ElemType::I32 => op_family::<i32>(q, op, form, init_to_identity, seed),
                    ElemType::U32 => op_family::<u32>(q, op, form, init_to_identity, seed),
                    ElemType::I64 => op_family::<i64>(q, op, form, init_to_identity, seed),
                    ElemType::U64 => op_family::<u64>(q, op, form, init_to_identity, seed),
                    ElemType::F32 => op_family::<f32>(q, op, form, init_to_identity, seed),
                    _ => op_family::<f64>(q, op, form, init_to_identity, seed),
                };
                let name = format!(
                    "{op} {ty} {}{}",
                    describe(form),
                    if init_to_identity {
                        " init_to_identity"
                    } else {
                        ""
                    }
                );
                rec(&name, o);
            }
        }
    });
}

/// argmin and argmax over inputs with many ties: the value and the lowest index.
fn arg_case<T: El>(q: &Queue, max: bool, form: Form, seed: u64) -> Outcome {
    let n = feat_size(form);
    let data = random_input_ties(T::TYPE, n, seed);
    let x = dev!(q.buffer_from(&T::all(&data)));
    let v = dev!(q.buffer::<T>(1));
    let ix = dev!(q.buffer::<u64>(1));
    let red = if max {
        reduction_argmax(&v, &ix)
    } else {
        reduction_argmin(&v, &ix)
    };
    let k = kernel!(|i, best| best.combine(x[i], i));
    let (_, host) = tri!(both(q, form, &[red.initialize_to_identity()], &k));
    let expect = reference_arg(max, &data, None);
    let got = (dev!(v.get(0)).value(), dev!(ix.get(0)));
    let host = &host.results[0];
    let want = HostResult::Arg {
        value: expect.value,
        index: expect.index,
    };
    if *host != want {
        return Outcome::Fail(format!("host form {host:?}, reference {want:?}"));
    }
    if got != (expect.value, expect.index) {
        return Outcome::Fail(format!(
            "device {got:?}, reference {want:?} ({} ties)",
            expect.ties
        ));
    }
    Outcome::Pass
}

#[test]
fn argmin_argmax() {
    on_devices("closure argmin/argmax", &|q, rec| {
        for (j, form) in forms(q).into_iter().enumerate() {
            for max in [false, true] {
                let name = |ty: &str| {
                    format!(
                        "arg{} {ty} {}",
                        if max { "max" } else { "min" },
                        describe(form)
                    )
                };
                rec(&name("f32"), arg_case::<f32>(q, max, form, 3 + j as u64));
                rec(&name("i64"), arg_case::<i64>(q, max, form, 5 + j as u64));
            }
        }
    });
}

/// A custom op with an identity (a product) and an identity-less one (max).
fn custom_case(q: &Queue, form: Form) -> Outcome {
    let n = feat_size(form);
    let data = random_input(Op::Multiplies, ElemType::I64, n, 9);
    let x = dev!(q.buffer_from(&i64::all(&data)));
    let res = dev!(q.buffer_from(&[3i64]));
    let prod = CustomOp::new("a * b").identity(1i64);
    let k = kernel!(|i, p| p.combine(x[i]));
    let (_, host) = tri!(both(q, form, &[reduction(&res, prod.clone())], &k));
    let expr = clreduce::expr::Expr::parse("a * b").expect("parses");
    let op = HostOp::Custom {
        expr: &expr,
        identity: Some(Value::I64(1)),
    };
    let expect =
        dev!(
            reference_with(op, &data, Some(Value::I64(3))).map_err(|e| Error::BadArgument {
                name: "ref".into(),
                problem: e
            })
        );
    let got = dev!(res.get(0));
    if let Err(m) = check_plain(
        Op::Multiplies,
        Value::I64(got),
        &host.results[0],
        &expect,
        1.0,
    ) {
        return Outcome::Fail(format!("custom a * b: {m}"));
    }
    // Identity-less: max(a, b) over f32 values folded with a transformation in the body.
    let fdata = random_input(Op::Maximum, ElemType::F32, n, 11);
    let y = dev!(q.buffer_from(&f32::all(&fdata)));
    let m = dev!(q.buffer_from(&[-1.0e30f32]));
    let k = kernel!(|i, m| m.combine(y[i] * 0.5 - 1.0));
    let (_, host) = tri!(both(
        q,
        form,
        &[reduction(&m, CustomOp::new("max(a, b)"))],
        &k
    ));
    let want = fdata_max(&fdata, -1.0e30);
    let got = dev!(m.get(0));
    match host.results[0].value() {
        Some(Value::F32(h)) if h == want && got == want => Outcome::Pass,
        h => Outcome::Fail(format!(
            "identity-less max: device {got}, host {h:?}, expected {want}"
        )),
    }
}

/// max over y[i] * 0.5 - 1.0 (exact for these inputs) and `init`, in f32.
fn fdata_max(d: &HostVec, init: f32) -> f32 {
    f32::all(d)
        .into_iter()
        .map(|v| v * 0.5 - 1.0)
        .fold(init, f32::max)
}

#[test]
fn custom_ops() {
    on_devices("closure custom ops", &|q, rec| {
        for form in forms(q) {
            rec(&format!("custom {}", describe(form)), custom_case(q, form));
        }
    });
}

/// A span of `len` per-bin sums, bins by clreduce's span hash (`reference::span_bin`), and a
/// span of minima with `combine`.
fn span_case(q: &Queue, form: Form, len: usize) -> Outcome {
    let n = feat_size(form);
    let data = HostVec::U32((0..n).map(|j| ((j * 7919) % 100_003) as u32).collect());
    let x = dev!(q.buffer_from(&u32::all(&data)));
    let init: Vec<u32> = (0..len as u32).map(|b| b * 3 + 1).collect();
    let hist = dev!(q.buffer_from(&init));
    let k = kernel!(|i, hist| hist[((x[i] as u64 * 131 + i as u64) % len as u64) as usize] += x[i]);
    let (_, host) = tri!(both(q, form, &[reduction_span(&hist, len, Op::Plus)], &k));
    let inits: Vec<Value> = init.iter().map(|&v| Value::U32(v)).collect();
    let expect = dev!(
        reference_span(HostOp::Builtin(Op::Plus), &data, len, Some(&inits)).map_err(|e| {
            Error::BadArgument {
                name: "ref".into(),
                problem: e,
            }
        })
    );
    let got = dev!(hist.to_vec());
    let HostResult::Span { bins, .. } = &host.results[0] else {
        return Outcome::Fail(format!("host form gave {:?}", host.results[0]));
    };
    if *bins != expect {
        return Outcome::Fail("host form bins differ from reference_span".into());
    }
    for (b, (g, e)) in got.iter().zip(&expect).enumerate() {
        if Some(*g as i128) != e.exact {
            return Outcome::Fail(format!("bin {b}: device {g}, expected {:?}", e.exact));
        }
    }
    // Minima per bin of a float transform, with `combine`, from the identity.
    let f = dev!(q.buffer_from(&[0.0f32; 16]));
    let k = kernel!(|i, lo| lo[i % 16].combine((x[i] % 1000) as f32 * 0.25));
    let (_, host) = tri!(both(
        q,
        form,
        &[reduction_span(&f, 16, Op::Minimum).initialize_to_identity()],
        &k
    ));
    let mut want = [f32::INFINITY; 16];
    for (j, v) in u32::all(&data).into_iter().enumerate() {
        want[j % 16] = want[j % 16].min((v % 1000) as f32 * 0.25);
    }
    let got = dev!(f.to_vec());
    let HostResult::Span { bins, .. } = &host.results[0] else {
        return Outcome::Fail("host form: not a span".into());
    };
    let host_bins: Vec<f32> = bins.iter().map(|r| r.value as f32).collect();
    if got != want || host_bins != want {
        return Outcome::Fail(format!(
            "span minima: device {got:?}, host {host_bins:?}, expected {want:?}"
        ));
    }
    Outcome::Pass
}

#[test]
fn spans() {
    on_devices("closure spans", &|q, rec| {
        for form in forms(q) {
            for len in [7, 256] {
                rec(
                    &format!("span {len} {}", describe(form)),
                    span_case(q, form, len),
                );
            }
        }
    });
}

/// Four reductions of different types, ops and kinds in one launch.
fn several(q: &Queue, form: Form) -> Outcome {
    let n = feat_size(form);
    let fx = random_input(Op::Plus, ElemType::F32, n, 21);
    let iy = random_input(Op::Minimum, ElemType::I64, n, 22);
    let x = dev!(q.buffer_from(&f32::all(&fx)));
    let y = dev!(q.buffer_from(&i64::all(&iy)));
    let s = dev!(q.buffer_from(&[1.5f32]));
    let lo = dev!(q.buffer_from(&[5i64]));
    let hi = dev!(q.buffer_from(&[-5i64]));
    let av = dev!(q.buffer_from(&[0.0f32]));
    let ai = dev!(q.buffer_from(&[0u64]));
    let reds = [
        reduction(&s, Op::Plus),
        reduction(&lo, Op::Minimum),
        reduction(&hi, Op::Maximum),
        reduction_argmax(&av, &ai).initialize_to_identity(),
    ];
    let k = kernel!(|i, s, lo, hi, am| {
        *s += x[i];
        lo.combine(y[i]);
        hi.combine(y[i]);
        am.combine(x[i], i);
    });
    let (plan, host) = tri!(both(q, form, &reds, &k));
    let r = [
        check_plain(
            Op::Plus,
            Value::F32(dev!(s.get(0))),
            &host.results[0],
            &reference::reference(Op::Plus, &fx, Some(Value::F32(1.5))),
            depth(&plan, 0),
        ),
        check_plain(
            Op::Minimum,
            Value::I64(dev!(lo.get(0))),
            &host.results[1],
            &reference::reference(Op::Minimum, &iy, Some(Value::I64(5))),
            1.0,
        ),
        check_plain(
            Op::Maximum,
            Value::I64(dev!(hi.get(0))),
            &host.results[2],
            &reference::reference(Op::Maximum, &iy, Some(Value::I64(-5))),
            1.0,
        ),
    ];
    if let Some(Err(m)) = r.into_iter().find(|r| r.is_err()) {
        return Outcome::Fail(m);
    }
    let e = reference_arg(true, &fx, None);
    let got = (Value::F32(dev!(av.get(0))), dev!(ai.get(0)));
    let want = HostResult::Arg {
        value: e.value,
        index: e.index,
    };
    if host.results[3] != want || got != (e.value, e.index) {
        return Outcome::Fail(format!(
            "argmax: device {got:?}, host {:?}, expected {want:?}",
            host.results[3]
        ));
    }
    Outcome::Pass
}

#[test]
fn several_reductions_in_one_launch() {
    on_devices("closure several reductions", &|q, rec| {
        for form in forms(q) {
            rec(
                &format!("sum+min+max+argmax {}", describe(form)),
                several(q, form),
            );
        }
    });
}

/// Sums over 2-D and 3-D ranges with `Item`, and over nd_ranges with `NdItem` and `Item`:
/// values made of the ids, so a wrong id changes the result. Exact (u64), checked against the
/// host form and an independent loop over the ids.
fn items(q: &Queue) -> Vec<(String, Outcome)> {
    let mut out = Vec::new();
    let s = |init: u64| q.buffer_from(&[init]);
    let sim = q.device().is_simulator();
    let ranges = if sim {
        vec![Range::new_2d(7, 13), Range::new_3d(3, 5, 7)]
    } else {
        vec![Range::new_2d(301, 257), Range::new_3d(17, 19, 23)]
    };
    for r in ranges {
        let sum = match s(7) {
            Ok(b) => b,
            Err(e) => return vec![("buffers".into(), Outcome::Fail(e.to_string()))],
        };
        let k = kernel!(|item, sum| *sum += (item.id[0] * 1_000_003
            + item.id[1] * 1009
            + item.id[2] * 7
            + item.range[2]
            + item.linear_id % 3) as u64);
        let e = r.extents().to_vec();
        let (e0, e1, e2) = (e[0], e[1], *e.get(2).unwrap_or(&1));
        let mut want = 7u64;
        for a in 0..e0 {
            for b in 0..e1 {
                for c in 0..e2 {
                    let lin = (a * e1 + b) * e2 + c;
                    want += a * 1_000_003 + b * 1009 + c * 7 + e2 + lin % 3;
                }
            }
        }
        out.push((
            format!("Item {:?}", r.extents()),
            check_u64(q, Form::Range(r), &sum, &k, want),
        ));
    }
    let nds = if sim {
        vec![
            NdRange::new_2d([4, 6], [2, 3]),
            NdRange::new_3d([4, 6, 4], [2, 3, 2]),
        ]
    } else {
        vec![
            NdRange::new(96 * 7, 96),
            NdRange::new_2d([64, 48], [8, 16]),
            NdRange::new_3d([8, 12, 16], [2, 3, 8]),
        ]
    };
    for nd in nds {
        let sum = match s(3) {
            Ok(b) => b,
            Err(e) => return vec![("buffers".into(), Outcome::Fail(e.to_string()))],
        };
        let k = kernel!(|it, sum| *sum += (it.local_id(0) * 100_000
            + it.group_id(1) * 1000
            + it.local_id(2) * 10
            + it.local_linear_id() * 3
            + it.group_linear_id() * 5
            + it.global_range(0)
            + it.local_range(1)
            + it.group_range(2)) as u64);
        let g: Vec<u64> = (0..3)
            .map(|d| *nd.global_extents().get(d).unwrap_or(&1))
            .collect();
        let l: Vec<u64> = (0..3)
            .map(|d| *nd.local_extents().get(d).unwrap_or(&1) as u64)
            .collect();
        let mut want = 3u64;
        for a in 0..g[0] {
            for b in 0..g[1] {
                for c in 0..g[2] {
                    let id = [a, b, c];
                    let lid: Vec<u64> = (0..3).map(|d| id[d] % l[d]).collect();
                    let gid: Vec<u64> = (0..3).map(|d| id[d] / l[d]).collect();
                    let ng: Vec<u64> = (0..3).map(|d| g[d] / l[d]).collect();
                    let llin = (lid[0] * l[1] + lid[1]) * l[2] + lid[2];
                    let glin = (gid[0] * ng[1] + gid[1]) * ng[2] + gid[2];
                    want += lid[0] * 100_000
                        + gid[1] * 1000
                        + lid[2] * 10
                        + llin * 3
                        + glin * 5
                        + g[0]
                        + l[1]
                        + ng[2];
                }
            }
        }
        out.push((
            format!("NdItem {:?}/{:?}", nd.global_extents(), nd.local_extents()),
            check_u64(q, Form::NdRange(nd), &sum, &k, want),
        ));
        // `Item` in the nd_range form: global ids, row-major linear id.
        let sum = match s(0) {
            Ok(b) => b,
            Err(e) => return vec![("buffers".into(), Outcome::Fail(e.to_string()))],
        };
        let k = kernel!(|item, sum| *sum +=
            (item.id[0] * 7 + item.id[1] * 3 + item.id[2] + item.linear_id) as u64);
        let mut want = 0u64;
        for a in 0..g[0] {
            for b in 0..g[1] {
                for c in 0..g[2] {
                    want += a * 7 + b * 3 + c + (a * g[1] + b) * g[2] + c;
                }
            }
        }
        out.push((
            format!("Item in nd_range {:?}", nd.global_extents()),
            check_u64(q, Form::NdRange(nd), &sum, &k, want),
        ));
    }
    out
}

fn check_u64<F, B, A>(
    q: &Queue,
    form: Form,
    sum: &clreduce::Buffer<u64>,
    k: &Closure<'_, F, B, A>,
    want: u64,
) -> Outcome
where
    F: Fn(&HostEnv) -> clreduce::Result<B>,
    B: HostBody<A>,
    A: Args,
{
    let (_, host) = tri!(both(q, form, &[reduction(sum, Op::Plus)], k));
    let got = dev!(sum.get(0));
    let h = host.results[0].value();
    if got == want && h == Some(Value::U64(want)) {
        Outcome::Pass
    } else {
        Outcome::Fail(format!("device {got}, host {h:?}, expected {want}"))
    }
}

#[test]
fn ids_in_one_to_three_dimensions() {
    on_devices("closure ids", &|q, rec| {
        for (name, o) in items(q) {
            rec(&name, o);
        }
    });
}

#[path = "closures/bodies.rs"]
mod bodies;

#[test]
fn bodies_over_the_subset() {
    on_devices("closure bodies", &|q, rec| {
        for (name, o) in bodies::all(q) {
            rec(&name, o);
        }
    });
}

/// The closure's program is the string form's program: the same source once the closure's
/// guard lines (preprocessor only) are left out, and the same results.
fn same_program(q: &Queue) -> Outcome {
    let n = size(q, 1 << 20, 4096) as usize;
    let data = random_input(Op::Plus, ElemType::F32, n, 5);
    let x = dev!(q.buffer_from(&f32::all(&data)));
    let sum = dev!(q.buffer_from(&[0.0f32]));
    let k = kernel!(|i, sum| *sum += x[i]);
    let form = Form::Range(Range::new(n as u64));
    let closure = dev!(q.explain_source(form, reduction(&sum, Op::Plus), &k, Options::default()));
    let string = dev!(q.explain_source(
        form,
        reduction(&sum, Op::Plus),
        Kernel::new("sum += x[i];").arg("x", &x),
        Options::default()
    ));
    // The guard lines: `#define clr_kty...`, and `#if clr_kty...` through its `#endif`.
    let strip = |s: &str| -> String {
        let mut inside = false;
        s.lines()
            .filter(|l| {
                let drop =
                    inside || l.starts_with("#define clr_kty") || l.starts_with("#if clr_kty");
                if l.starts_with("#if clr_kty") {
                    inside = true;
                } else if inside && l.starts_with("#endif") {
                    inside = false;
                }
                !drop
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    if strip(&closure) != strip(&string) {
        return Outcome::Fail(format!(
            "the programs differ:\n--- closure\n{closure}\n--- string\n{string}"
        ));
    }
    let run = |kern: Kernel| -> clreduce::Result<f32> {
        sum.write(0, &[0.0])?;
        q.parallel_for_reduce_with(form, reduction(&sum, Op::Plus), kern, Options::default())?;
        sum.get(0)
    };
    let a = dev!(run(Kernel::from(&k)));
    let b = dev!(run(Kernel::new("sum += x[i];").arg("x", &x)));
    if a.to_bits() != b.to_bits() {
        return Outcome::Fail(format!("closure {a} vs string {b}"));
    }
    Outcome::Pass
}

#[test]
fn same_program_as_the_string_form() {
    on_devices("closure = string program", &|q, rec| {
        rec("f32 sum", same_program(q))
    });
}

#[path = "closures/errors.rs"]
mod errors;

#[test]
fn run_time_errors() {
    on_devices("closure errors", &|q, rec| {
        for (name, o) in errors::all(q) {
            rec(&name, o);
        }
    });
}
