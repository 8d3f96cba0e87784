//! f16 and bf16 input (issue 29): buffers of [`Half`] and [`Bf16`] on every device (PoCL and
//! Oclgrind have no `cl_khr_fp16`; loads use core `vload_half` and a 16-bit shift), read as f32
//! in a body (`x[i]`), reduced in f32 by the shortcuts and the general path, and exactly with
//! `sum_exact`. Inputs are fresh random values rounded to the storage type; sums are checked
//! against a float64 reference of exactly those values within the recursive-summation bound
//! `n * 2^-24 * sum|x|` (f32 accumulation in any order), min/max/argmin/argmax exactly, exact
//! sums bit for bit.

use crate::common;

use clreduce::{
    devices, reduction, Bf16, Device, Error, Half, Kernel, Mask, Op, Options, Queue, Range,
};
use common::{short, sim_lock, Tally};
use std::time::{SystemTime, UNIX_EPOCH};

fn seed() -> u64 {
    let s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    eprintln!("seed {s:#x}");
    s
}

/// Uniform in [-1, 1) times `scale` (xorshift64*).
fn uniform(n: usize, scale: f32, s: &mut u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *s ^= *s >> 12;
            *s ^= *s << 25;
            *s ^= *s >> 27;
            let r = (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * r - 1.0) * scale
        })
        .collect()
}

fn queue(d: &Device) -> Queue {
    Queue::with_mask(d, Mask::default()).unwrap()
}

/// The 16-bit trap: 2^24 ones summed in f16 stop at 2048, in bf16 at 256; clreduce reads them
/// as f32 and gives 16777216 (exact in f32). The simulator runs 2^16 ones (2^24 would take
/// minutes there; the skip is reported).
#[test]
fn sums_of_2_24_ones_are_16777216() {
    let mut t = Tally::new("sums_of_2_24_ones_are_16777216");
    for d in devices().unwrap() {
        let _g = sim_lock(d);
        let dev = short(d);
        let q = queue(d);
        let n = if d.is_simulator() {
            t.skip(
                &dev,
                "2^24",
                "2^24 elements take minutes on Oclgrind: 2^16 instead",
            );
            1usize << 16
        } else {
            1usize << 24
        };
        let run = || -> clreduce::Result<Vec<String>> {
            let h = q.buffer_from(&vec![Half::from_f32(1.0); n])?;
            let b = q.buffer_from(&vec![Bf16::from_f32(1.0); n])?;
            let mut bad = Vec::new();
            for (what, got) in [
                ("f16 sum", q.sum(&h)?),
                ("bf16 sum", q.sum(&b)?),
                ("f16 sum_exact", q.sum_exact(&h)?),
                ("bf16 sum_exact", q.sum_exact(&b)?),
            ] {
                if got != n as f32 {
                    bad.push(format!("{what}: {got}, want {n}"));
                }
            }
            // Rounded back on request: 2^24 is a finite f16 only as infinity (above 65504).
            let back = Half::from_f32(q.sum(&h)?);
            if n == 1 << 24 && !back.to_f32().is_infinite() {
                bad.push(format!("rounded back to f16: {back:?}"));
            }
            Ok(bad)
        };
        match run() {
            Ok(bad) if bad.is_empty() => t.pass(&dev),
            Ok(bad) => t.fail(&dev, "ones", &bad.join("; ")),
            Err(e) => t.fail(&dev, "ones", &e.to_string()),
        }
    }
    t.finish();
}

/// Checks one storage type's shortcuts on `vals` (already exactly representable).
fn shortcuts<T: clreduce::Element<Acc = f32>>(
    q: &Queue,
    vals: &[f32],
    to: impl Fn(f32) -> T,
) -> clreduce::Result<Vec<String>> {
    let mut bad = Vec::new();
    let x = q.buffer_from(&vals.iter().map(|&v| to(v)).collect::<Vec<T>>())?;
    let n = vals.len();
    let sum64: f64 = vals.iter().map(|&v| v as f64).sum();
    let abs64: f64 = vals.iter().map(|&v| v.abs() as f64).sum();
    let bound = n as f64 * 2f64.powi(-24) * abs64;
    let got = q.sum(&x)? as f64;
    if (got - sum64).abs() > bound {
        bad.push(format!(
            "sum {got} vs {sum64}: |error| {:e} > bound {bound:e}",
            (got - sum64).abs()
        ));
    }
    let lo = vals.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = vals.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let first = |v: f32| vals.iter().position(|&e| e == v).unwrap() as u64;
    let checks = [
        ("min", Some((q.min(&x)?, 0)), Some((lo, 0))),
        ("max", Some((q.max(&x)?, 0)), Some((hi, 0))),
        ("argmin", q.argmin(&x)?, Some((lo, first(lo)))),
        ("argmax", q.argmax(&x)?, Some((hi, first(hi)))),
    ];
    for (what, got, want) in checks {
        if got != want {
            bad.push(format!("{what}: {got:?}, want {want:?}"));
        }
    }
    // Exact: every value is a multiple of 2^-24 (f16) or of 2^-6 (the bf16 data here), so the
    // exact sum is an integer count of that unit, rounded once to f32.
    let unit = if T::TYPE == clreduce::ElemType::F16 {
        24
    } else {
        6
    };
    let units: i128 = vals
        .iter()
        .map(|&v| (v as f64 * 2f64.powi(unit)) as i128)
        .sum();
    let want = units as f32 * 2f32.powi(-unit);
    let got = q.sum_exact(&x)?;
    if got.to_bits() != want.to_bits() {
        bad.push(format!("sum_exact {got:e}, want {want:e}"));
    }
    Ok(bad)
}

/// sum, min, max, argmin, argmax and sum_exact over random f16 and bf16 data.
#[test]
fn shortcuts_over_f16_and_bf16() {
    let mut t = Tally::new("shortcuts_over_f16_and_bf16");
    let mut s = seed();
    for d in devices().unwrap() {
        let _g = sim_lock(d);
        let dev = short(d);
        let q = queue(d);
        let n = if d.is_simulator() {
            3001
        } else {
            (1 << 20) + 17
        };
        // f16: values in [-1000, 1000) at f16 precision; bf16: multiples of 1/64 in [-64, 64)
        // at bf16 precision (a multiple of 2^-6 still).
        let h: Vec<f32> = uniform(n, 1000.0, &mut s)
            .into_iter()
            .map(|v| Half::from_f32(v).to_f32())
            .collect();
        let b: Vec<f32> = uniform(n, 64.0, &mut s)
            .into_iter()
            .map(|v| Bf16::from_f32((v * 64.0).round() / 64.0).to_f32())
            .collect();
        for (what, r) in [
            ("f16", shortcuts(&q, &h, Half::from_f32)),
            ("bf16", shortcuts(&q, &b, Bf16::from_f32)),
        ] {
            match r {
                Ok(bad) if bad.is_empty() => t.pass(&dev),
                Ok(bad) => t.fail(&dev, what, &bad.join("; ")),
                Err(e) => t.fail(&dev, what, &e.to_string()),
            }
        }
    }
    t.finish();
}

/// The general path: a body reading f16, bf16 and f32 buffers together (`x[i] * w[i] + y[i]`),
/// an f32 variable; writing an f16 element by subscript and an f16 variable are refused.
#[test]
fn bodies_read_f16_and_bf16_as_float() {
    let mut t = Tally::new("bodies_read_f16_and_bf16_as_float");
    let mut s = seed();
    for d in devices().unwrap() {
        let _g = sim_lock(d);
        let dev = short(d);
        let q = queue(d);
        let n = if d.is_simulator() { 777 } else { 300_007 };
        let xs: Vec<Half> = uniform(n, 4.0, &mut s)
            .into_iter()
            .map(Half::from_f32)
            .collect();
        let ws: Vec<Bf16> = uniform(n, 4.0, &mut s)
            .into_iter()
            .map(Bf16::from_f32)
            .collect();
        let ys = uniform(n, 1.0, &mut s);
        let run = || -> clreduce::Result<Vec<String>> {
            let mut bad = Vec::new();
            let (x, w, y) = (
                q.buffer_from(&xs)?,
                q.buffer_from(&ws)?,
                q.buffer_from(&ys)?,
            );
            let res = q.buffer_from(&[0.0f32])?;
            q.parallel_for_reduce(
                Range::new(n as u64),
                reduction(&res, Op::Plus).initialize_to_identity(),
                Kernel::new("sum += x[i] * w[ i ] + y[i];")
                    .arg("x", &x)
                    .arg("w", &w)
                    .arg("y", &y),
            )?;
            let terms: Vec<f64> = (0..n)
                .map(|i| xs[i].to_f32() as f64 * ws[i].to_f32() as f64 + ys[i] as f64)
                .collect();
            let want: f64 = terms.iter().sum();
            // Each term rounds once to f32 (the product of an 11- and an 8-bit significand is
            // exact; the addition rounds), then n-term f32 summation.
            let abs: f64 = terms.iter().map(|v| v.abs()).sum();
            let bound = (n as f64 + 1.0) * 2f64.powi(-24) * abs;
            let got = res.get(0)? as f64;
            if (got - want).abs() > bound {
                bad.push(format!("dot {got} vs {want}: bound {bound:e}"));
            }
            match q.parallel_for_reduce(
                Range::new(n as u64),
                reduction(&res, Op::Plus),
                Kernel::new("x[i] = 1.0f; sum += 1.0f;").arg_mut("x", &x),
            ) {
                Err(Error::BadArgument { name, .. }) if name == "x" => {}
                other => bad.push(format!("write by subscript: {:?}", other.err())),
            }
            let hv = q.buffer_from(&[Half::default()])?;
            match q.parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&hv, Op::Plus),
                Kernel::new("sum += x[i];").arg("x", &x),
                Options::default(),
            ) {
                Err(Error::Unsupported { .. }) => {}
                other => bad.push(format!("f16 variable: {:?}", other.err())),
            }
            if res.get(0)? as f64 != got {
                bad.push("a refused launch changed the result".into());
            }
            Ok(bad)
        };
        match run() {
            Ok(bad) if bad.is_empty() => t.pass(&dev),
            Ok(bad) => t.fail(&dev, "bodies", &bad.join("; ")),
            Err(e) => t.fail(&dev, "bodies", &e.to_string()),
        }
    }
    t.finish();
}

/// One launch with the vector step forced (`Plan::vec`, design/decisions.md section 49):
/// grid-stride order and `vec` consecutive indices per step, whatever the device would pick.
fn forced(vec: usize) -> Options {
    Options {
        tuning: Some(clreduce::plan::Tuning {
            order: Some(clreduce::plan::IndexOrder::GridStride),
            vec: Some(vec),
            ..Default::default()
        }),
        ..Options::default()
    }
}

/// The vector step over every width, on every device (forced: the CPUs' own plans keep one
/// index per step): a sum against the float64 bound, argmin with the lowest index, run-to-run
/// identical bits, at sizes that are not multiples of the width (1, 3, a few blocks plus one,
/// a random odd size), a body that also reads the buffers off `[i]`, and the plan saying
/// which width ran. A buffer shorter than n read at `[i]` keeps single loads; an exact sum
/// keeps them too, and its bits.
#[test]
fn vector_step_over_widths() {
    let mut t = Tally::new("vector_step_over_widths");
    let s = seed();
    for d in devices().unwrap() {
        let _g = sim_lock(d);
        let dev = short(d);
        let q = queue(d);
        let big = if d.is_simulator() { 2001 } else { 200_001 };
        let odd = 2 * (s % (big as u64 / 2)) as usize + 1;
        let run = || -> clreduce::Result<Vec<String>> {
            let mut bad = Vec::new();
            let mut s = s;
            for n in [1usize, 3, 8 * 256 + 1, odd, big] {
                // f16 at low precision (ties for argmin), bf16 multiples of 1/64.
                let h: Vec<Half> = uniform(n, 8.0, &mut s)
                    .into_iter()
                    .map(|v| Half::from_f32((v * 4.0).round() / 4.0))
                    .collect();
                let b: Vec<Bf16> = uniform(n, 8.0, &mut s)
                    .into_iter()
                    .map(|v| Bf16::from_f32((v * 64.0).round() / 64.0))
                    .collect();
                let (x, w) = (q.buffer_from(&h)?, q.buffer_from(&b)?);
                let hf: Vec<f32> = h.iter().map(|v| v.to_f32()).collect();
                let bf: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
                // sum += x[i] + 0.5 * w[i] - w[(i + 1) % n]: two reads at [i], one off it.
                let terms: Vec<f64> = (0..n)
                    .map(|i| hf[i] as f64 + 0.5 * bf[i] as f64 - bf[(i + 1) % n] as f64)
                    .collect();
                let want: f64 = terms.iter().sum();
                let abs: f64 = terms.iter().map(|v| v.abs()).sum();
                let bound = (n as f64 + 2.0) * 2f64.powi(-23) * abs;
                let lo = hf.iter().copied().fold(f32::INFINITY, f32::min);
                let first = hf.iter().position(|&v| v == lo).unwrap() as u64;
                for vec in [1usize, 2, 4, 8] {
                    let (sum, v, ix) = (
                        q.buffer_from(&[0.0f32])?,
                        q.buffer_from(&[0.0f32])?,
                        q.buffer_from(&[0u64])?,
                    );
                    let launch = || {
                        q.parallel_for_reduce_with(
                            Range::new(n as u64),
                            vec![
                                reduction(&sum, Op::Plus).initialize_to_identity(),
                                clreduce::reduction_argmin(&v, &ix).initialize_to_identity(),
                            ],
                            Kernel::new(
                                "sum += x[i] + 0.5f * w[i] - w[(i + 1) % n]; combine(lo, x[ i ], i);",
                            )
                            .arg("x", &x)
                            .arg("w", &w)
                            .reducers(&["sum", "lo"]),
                            forced(vec),
                        )
                    };
                    let ev = launch()?;
                    let ran = ev.plan().map(|p| p.vec);
                    if ran != Some(vec) {
                        bad.push(format!("n {n} vec {vec}: the plan ran vec {ran:?}"));
                    }
                    let got = sum.get(0)?;
                    if (got as f64 - want).abs() > bound {
                        bad.push(format!(
                            "n {n} vec {vec}: sum {got} vs {want}, bound {bound:e}"
                        ));
                    }
                    if (v.get(0)?, ix.get(0)?) != (lo, first) {
                        bad.push(format!(
                            "n {n} vec {vec}: argmin ({}, {}), want ({lo}, {first})",
                            v.get(0)?,
                            ix.get(0)?
                        ));
                    }
                    launch()?;
                    if sum.get(0)?.to_bits() != got.to_bits() {
                        bad.push(format!("n {n} vec {vec}: a second run gave other bits"));
                    }
                }
            }
            // A buffer shorter than n read at [i] under a condition: single loads.
            let short_buf = q.buffer_from(&[Half::from_f32(1.0); 10])?;
            let res = q.buffer_from(&[0.0f32])?;
            let ev = q.parallel_for_reduce_with(
                Range::new(1000),
                reduction(&res, Op::Plus).initialize_to_identity(),
                Kernel::new("if (i < 10) sum += s[i];").arg("s", &short_buf),
                forced(4),
            )?;
            if (ev.plan().map(|p| p.vec), res.get(0)?) != (Some(1), 10.0) {
                bad.push(format!(
                    "short buffer: vec {:?}, sum {}",
                    ev.plan().map(|p| p.vec),
                    res.get(0)?
                ));
            }
            // An exact sum keeps single loads and its bits.
            let n = 4097;
            let h: Vec<Half> = uniform(n, 100.0, &mut s)
                .into_iter()
                .map(Half::from_f32)
                .collect();
            let x = q.buffer_from(&h)?;
            let units: i128 = h
                .iter()
                .map(|v| (v.to_f32() as f64 * 2f64.powi(24)) as i128)
                .sum();
            let want = units as f32 * 2f32.powi(-24);
            let ev = q.parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&res, Op::Plus).initialize_to_identity(),
                Kernel::new("sum += x[i];").arg("x", &x),
                forced(4).exact(),
            )?;
            if (ev.plan().map(|p| p.vec), res.get(0)?.to_bits()) != (Some(1), want.to_bits()) {
                bad.push(format!(
                    "exact: vec {:?}, sum {:e} want {want:e}",
                    ev.plan().map(|p| p.vec),
                    res.get(0)?
                ));
            }
            Ok(bad)
        };
        match run() {
            Ok(bad) if bad.is_empty() => t.pass(&dev),
            Ok(bad) => t.fail(&dev, "vector step", &bad.join("; ")),
            Err(e) => t.fail(&dev, "vector step", &e.to_string()),
        }
    }
    t.finish();
}
