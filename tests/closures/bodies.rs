//! Closure bodies over the whole subset (locals, shadowing, `if` as a value, loops with
//! `step_by`, `..=`, `while`, `loop`, `break`, `continue`, `return`, casts, shifts and bit
//! operators, math built-ins, constants, captured scalars of every type, writes to a captured
//! buffer), each on the device, in its host form and in plain Rust written out here: the host
//! form must equal the plain Rust exactly, and the device must match within the bound stated
//! per case (integers exactly).

use super::*;

type Cases = Vec<(String, Outcome)>;

/// Float sums: the device within (depth + slack)·u·Σ|t| of the reference, where `slack` (in
/// units of u per term) covers OpenCL's built-ins (sqrt and exp within 3 ulp, ...).
fn float_sum(got: f64, r: &Reference, ty: ElemType, depth: f64, slack: f64) -> Result<(), String> {
    let bound =
        (depth + slack) * unit_roundoff(ty) * r.sum_abs + 2.0 * unit_roundoff(ty) * r.value.abs();
    let err = (got - r.value).abs();
    if err <= bound {
        Ok(())
    } else {
        Err(format!(
            "got {got:e}, expected {:e} within {bound:e} (error {err:e})",
            r.value
        ))
    }
}

/// Neumaier's compensated sum: within 2u·|S| + O(n·u²)·Σ|t|.
fn neumaier(t: &[f64]) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for &x in t {
        let u = s + x;
        c += if s.abs() >= x.abs() {
            (s - u) + x
        } else {
            (x - u) + s
        };
        s = u;
    }
    s + c
}

/// The host form's plain result, which must equal `expect` exactly.
fn host_value(host: &HostRun, k: usize, expect: &Reference) -> Result<(), String> {
    match &host.results[k] {
        HostResult::Value { reference, .. } if reference == expect => Ok(()),
        other => Err(format!("host form {other:?}, plain Rust {expect:?}")),
    }
}

fn forms2(q: &Queue) -> Vec<Form> {
    vec![
        Form::Range(Range::new(size(q, 65_537, 777))),
        Form::NdRange(NdRange::new(64 * size(q, 33, 4), 64)),
    ]
}

fn float_body(q: &Queue, form: Form) -> Outcome {
    let n = feat_size(form);
    let data = f32::all(&random_input(Op::Plus, ElemType::F32, n, 31));
    let x = dev!(q.buffer_from(&data));
    let sum = dev!(q.buffer_from(&[0.75f32]));
    let scale = 0.125f32;
    let k = kernel!(|i, sum| {
        let v = x[i];
        let w = if v > 0.0 { v.sqrt() } else { -v * 0.5 };
        let w = w.clamp(0.25, 60.0).min(v.abs() + 1.0);
        *sum += w * 2.0 + scale - (i % 3) as f32;
    });
    let (plan, host) = tri!(both(q, form, &[reduction(&sum, Op::Plus)], &k));
    let terms: Vec<f32> = data
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let w = if v > 0.0 { v.sqrt() } else { -v * 0.5 };
            let w = w.clamp(0.25, 60.0).min(v.abs() + 1.0);
            w * 2.0 + scale - (i % 3) as f32
        })
        .collect();
    let expect = reference::reference(Op::Plus, &HostVec::F32(terms), Some(Value::F32(0.75)));
    let got = dev!(sum.get(0));
    let r = host_value(&host, 0, &expect)
        .and_then(|()| float_sum(got as f64, &expect, ElemType::F32, depth(&plan, 0), 8.0));
    outcome(
        r,
        "sqrt/max/min/if-value f32 sum (slack 8 u per term: sqrt is within 3 ulp)",
    )
}

fn int_body(q: &Queue, form: Form) -> Outcome {
    let n = feat_size(form);
    let data = i32::all(&random_input(Op::Plus, ElemType::I32, n, 32));
    let x = dev!(q.buffer_from(&data));
    let sum = dev!(q.buffer_from(&[11i32]));
    let k = kernel!(|i, sum| {
        let v = x[i];
        let mut bits = 0;
        for b in 0..8 {
            bits += (v >> b) & 1;
        }
        let mut w = v;
        let mut steps = 0;
        while w != 0 && steps < 5 {
            w /= 3;
            steps += 1;
        }
        let neg = v < 0;
        *sum += bits * 100 + steps + v % 7 + if neg { -1 } else { (v ^ 0x55) & 0xff };
    });
    let (_, host) = tri!(both(q, form, &[reduction(&sum, Op::Plus)], &k));
    let terms: Vec<i32> = data
        .iter()
        .map(|&v| {
            let bits: i32 = (0..8).map(|b| (v >> b) & 1).sum();
            let (mut w, mut steps) = (v, 0);
            while w != 0 && steps < 5 {
                w /= 3;
                steps += 1;
            }
            bits * 100 + steps + v % 7 + if v < 0 { -1 } else { (v ^ 0x55) & 0xff }
        })
        .collect();
    let expect = reference::reference(Op::Plus, &HostVec::I32(terms), Some(Value::I32(11)));
    let got = dev!(sum.get(0));
    let r = host_value(&host, 0, &expect)
        .and_then(|()| check_plain(Op::Plus, Value::I32(got), &host.results[0], &expect, 1.0));
    outcome(r, "loops/shifts/bit ops i32 sum")
}

fn u64_body(q: &Queue, form: Form) -> Outcome {
    let n = feat_size(form);
    let data: Vec<u32> = (0..n as u32)
        .map(|j| j.wrapping_mul(2_654_435_761) >> 12)
        .collect();
    let x = dev!(q.buffer_from(&data));
    let lo = dev!(q.buffer_from(&[u64::MAX - 1]));
    let hi = dev!(q.buffer_from(&[3u64]));
    let limit = 900_000u64;
    let k = kernel!(|i, lo, hi| {
        if i % 5 == 4 {
            return;
        }
        let h = x[i] as u64 * 2_654_435_761 % 1_000_003;
        lo.combine(h.min(limit) + 17);
        hi.combine(h as u32 as u64 + i as u64);
    });
    let reds = [reduction(&lo, Op::Minimum), reduction(&hi, Op::Maximum)];
    let (_, host) = tri!(both(q, form, &reds, &k));
    let (mut elo, mut ehi) = (u64::MAX - 1, 3u64);
    for (i, &v) in data.iter().enumerate() {
        if i % 5 == 4 {
            continue;
        }
        let h = v as u64 * 2_654_435_761 % 1_000_003;
        elo = elo.min(h.min(limit) + 17);
        ehi = ehi.max(h as u32 as u64 + i as u64);
    }
    let got = (dev!(lo.get(0)), dev!(hi.get(0)));
    let h = (host.results[0].value(), host.results[1].value());
    if got == (elo, ehi) && h == (Some(Value::U64(elo)), Some(Value::U64(ehi))) {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "u64 min/max with return: device {got:?}, host {h:?}, expected {:?}",
            (elo, ehi)
        ))
    }
}

fn f64_body(q: &Queue, form: Form) -> Outcome {
    let n = feat_size(form);
    let data = f64::all(&random_input(Op::Plus, ElemType::F64, n, 34));
    let x = dev!(q.buffer_from(&data));
    let sum = dev!(q.buffer_from(&[0.0f64]));
    let k = kernel!(|i, sum| {
        let v = x[i];
        *sum += (v.abs() + 1.0).ln() * 0.25
            + (v * 0.01).exp().floor()
            + v.powi(2) * 1e-3
            + f64::hypot(v, 3.0)
            + std::f64::consts::PI;
    });
    let (plan, host) = tri!(both(q, form, &[reduction(&sum, Op::Plus)], &k));
    let terms: Vec<f64> = data
        .iter()
        .map(|&v| {
            (v.abs() + 1.0).ln() * 0.25
                + (v * 0.01).exp().floor()
                + v.powi(2) * 1e-3
                + f64::hypot(v, 3.0)
                + std::f64::consts::PI
        })
        .collect();
    // The host form folds in f64 in index order, as the reference does; the device is
    // checked against the compensated sum, since an f64 reference of arbitrary f64 terms is
    // itself off by up to n·u·Σ|t|.
    let accurate = Reference {
        value: neumaier(&terms),
        ..reference::reference(Op::Plus, &HostVec::F64(terms.clone()), None)
    };
    let expect = reference::reference(Op::Plus, &HostVec::F64(terms), Some(Value::F64(0.0)));
    let got = dev!(sum.get(0));
    let r = host_value(&host, 0, &expect)
        .and_then(|()| float_sum(got, &accurate, ElemType::F64, depth(&plan, 0), 16.0));
    outcome(
        r,
        "ln/exp/floor/powi/hypot f64 sum (slack 16 u per term: log, exp, pown, hypot within 4 ulp)",
    )
}

fn writes(q: &Queue, form: Form) -> Outcome {
    let n = feat_size(form);
    let data = f32::all(&random_input(Op::Plus, ElemType::F32, n, 35));
    let x = dev!(q.buffer_from(&data));
    let y = dev!(q.buffer_from(&vec![0.0f32; n]));
    let s = dev!(q.buffer_from(&[1.0f32]));
    let k = kernel!(|i, s| {
        y[i] = x[i] * 3.0 - 1.0;
        y[i] += 0.5;
        *s += y[i];
    });
    let (plan, host) = tri!(both(q, form, &[reduction(&s, Op::Plus)], &k));
    let want: Vec<f32> = data.iter().map(|&v| v * 3.0 - 1.0 + 0.5).collect();
    let got = dev!(y.to_vec());
    match host.outputs.as_slice() {
        [(name, HostVec::F32(h))] if name == "y" && *h == want => {}
        other => {
            return Outcome::Fail(format!(
                "host outputs {:?}",
                other.iter().map(|(n, v)| (n, v.len())).collect::<Vec<_>>()
            ))
        }
    }
    if got != want {
        return Outcome::Fail("device y differs from y[i] = x[i] * 3.0 - 1.0 + 0.5".into());
    }
    let expect = reference::reference(Op::Plus, &HostVec::F32(want), Some(Value::F32(1.0)));
    let got = dev!(s.get(0));
    let r = host_value(&host, 0, &expect).and_then(|()| {
        check_plain(
            Op::Plus,
            Value::F32(got),
            &host.results[0],
            &expect,
            depth(&plan, 0),
        )
    });
    outcome(r, "writes to a captured buffer")
}

fn scalars(q: &Queue, form: Form) -> Outcome {
    let (ci32, cu32, ci64, cu64, cf32, cf64, cusize) = (
        -7i32,
        9u32,
        -1_000_000_007i64,
        3u64,
        2.5f32,
        -0.25f64,
        5usize,
    );
    let sum = dev!(q.buffer_from(&[0i64]));
    let k = kernel!(|i, sum| {
        let a = ci32 as i64 + cu32 as i64 + ci64 + cu64 as i64;
        let b = (cf32 as f64 + cf64) as i64;
        let c = i64::MAX / 1_000_000_000_000 + i32::BITS as i64;
        *sum += a + b + c + cusize as i64 * (i as i64 % 3);
    });
    let (_, host) = tri!(both(q, form, &[reduction(&sum, Op::Plus)], &k));
    let n = feat_size(form);
    let terms: Vec<i64> = (0..n)
        .map(|i| {
            let a = ci32 as i64 + cu32 as i64 + ci64 + cu64 as i64;
            let b = (cf32 as f64 + cf64) as i64;
            a + b + i64::MAX / 1_000_000_000_000 + 32 + cusize as i64 * (i as i64 % 3)
        })
        .collect();
    let expect = reference::reference(Op::Plus, &HostVec::I64(terms), Some(Value::I64(0)));
    let got = dev!(sum.get(0));
    let r = host_value(&host, 0, &expect)
        .and_then(|()| check_plain(Op::Plus, Value::I64(got), &host.results[0], &expect, 1.0));
    outcome(r, "captured scalars of every type")
}

#[allow(clippy::manual_is_multiple_of)]
fn loops(q: &Queue, form: Form) -> Outcome {
    let sum = dev!(q.buffer_from(&[0u32]));
    let k = kernel!(|i, sum| {
        let mut m = (i % 6) as u32 + 2;
        let mut acc = 0u32;
        for j in (0..m).step_by(2) {
            if j == 2 {
                continue;
            }
            m += 1;
            acc += j;
        }
        for j in 1..=3u32 {
            acc += j * m;
        }
        loop {
            if acc > 50 {
                break;
            }
            acc += 7;
        }
        let acc = if acc % 2 == 0 { acc / 2 } else { acc * 3 + 1 };
        *sum += acc;
    });
    let (_, host) = tri!(both(q, form, &[reduction(&sum, Op::Plus)], &k));
    let terms: Vec<u32> = (0..feat_size(form))
        .map(|i| {
            let mut m = (i % 6) as u32 + 2;
            let mut acc = 0u32;
            for j in (0..m).step_by(2) {
                if j == 2 {
                    continue;
                }
                m += 1;
                acc += j;
            }
            for j in 1..=3u32 {
                acc += j * m;
            }
            while acc <= 50 {
                acc += 7;
            }
            if acc % 2 == 0 {
                acc / 2
            } else {
                acc * 3 + 1
            }
        })
        .collect();
    let expect = reference::reference(Op::Plus, &HostVec::U32(terms), Some(Value::U32(0)));
    let got = dev!(sum.get(0));
    let r = host_value(&host, 0, &expect)
        .and_then(|()| check_plain(Op::Plus, Value::U32(got), &host.results[0], &expect, 1.0));
    outcome(
        r,
        "step_by, ..=, loop/break/continue, a bound changed in the loop",
    )
}

pub fn all(q: &Queue) -> Cases {
    let mut out = Vec::new();
    for form in forms2(q) {
        let d = describe(form);
        out.push((format!("f32 math {d}"), float_body(q, form)));
        out.push((format!("i32 loops {d}"), int_body(q, form)));
        out.push((format!("u64 min/max {d}"), u64_body(q, form)));
        out.push((format!("f64 math {d}"), f64_body(q, form)));
        out.push((format!("writes {d}"), writes(q, form)));
        out.push((format!("scalars {d}"), scalars(q, form)));
        out.push((format!("loops {d}"), loops(q, form)));
    }
    out
}
