//! The multi-device queue (`clreduce::multi`, issue 17): one reduction split across the devices
//! of this host (PoCL + Intel's CPU runtime here; PoCL + NVIDIA on the GPU machine), and across
//! three queues (a device taking two shares), with uneven and empty shares, equal to one
//! device's result: integers, min/max, bitwise and logical ops and argmin/argmax exactly
//! (argmin: the lowest global index), exact sums bit for bit (against the host's correctly
//! rounded sum and one device's exact plan), other float sums within a stated bound; custom and
//! identity-less ops, spans, several variables, nd_range and 2-D forms, and the errors.
//! Oclgrind is left out (`MultiQueue::all` excludes simulators).

#[path = "common/multi.rs"]
mod multi_common;

use clreduce::check::adversarial::{f32s, f64s, Pattern};
use clreduce::check::reference::{combination_depth, unit_roundoff};
use clreduce::exact::{sum_f32, sum_f64};
use clreduce::multi::{MultiBuffer, MultiKernel, MultiQueue, Split};
use clreduce::{
    reduction, reduction_argmax, reduction_argmin, reduction_span, CustomOp, Error, Kernel,
    NdRange, Op, Options, Queue, Range,
};
use multi_common::{configs, device_queues, splits};

#[test]
fn integer_ops_equal_one_device() {
    let n = 100_003usize;
    let data: Vec<i32> = (0..n as i64)
        .map(|i| ((i * 7919 + 13) % 2001 - 1000) as i32 | if i % 97 == 0 { 1 << 20 } else { 0 })
        .collect();
    let ops = [
        Op::Plus,
        Op::Multiplies,
        Op::Minimum,
        Op::Maximum,
        Op::BitAnd,
        Op::BitOr,
        Op::BitXor,
        Op::LogicalAnd,
        Op::LogicalOr,
    ];
    let init = 5i32;
    let single = |q: &Queue, op: Op| -> i32 {
        let x = q.buffer_from(&data).unwrap();
        let v = q.buffer_from(&[init]).unwrap();
        let body = if op == Op::Plus {
            "sum += x[i];"
        } else {
            "combine(sum, x[i]);"
        };
        q.parallel_for_reduce_with(
            Range::new(n as u64),
            reduction(&v, op),
            Kernel::new(body).arg("x", &x),
            Options::default(),
        )
        .unwrap();
        v.get(0).unwrap()
    };
    for (name, mq) in configs("multi") {
        for split in splits(n as u64, mq.len(), false) {
            let x = mq.scatter_with(&data, &split, 1).unwrap();
            for op in ops {
                let want = single(mq.queue(0), op);
                let v = mq.queue(0).buffer_from(&[init]).unwrap();
                mq.parallel_for_reduce_with(
                    Range::new(n as u64),
                    reduction(&v, op),
                    MultiKernel::new("combine(sum, x[i]);").arg("x", &x),
                    Options::default(),
                )
                .unwrap();
                assert_eq!(
                    v.get(0).unwrap(),
                    want,
                    "{name} {op:?} {:?}",
                    split.counts()
                );
            }
        }
        println!("PASS {name}: 9 integer ops x 2 splits equal one device");
    }
}

/// The speculative loop forced in every share (exact f32 sum + min, the shares' raw
/// superaccumulators merged on the host): the same bits as the host's exact sum.
#[test]
fn exact_split_speculates() {
    use clreduce::plan::Tuning;
    let n = 20_011usize;
    let opts = Options {
        tuning: Some(Tuning {
            spec: Some(true),
            ..Tuning::default()
        }),
        ..Options::default()
    }
    .exact();
    for (name, mq) in configs("multi") {
        for p in [
            Pattern::Random,
            Pattern::Cancel,
            Pattern::Spread,
            Pattern::NaNs,
        ] {
            let d = f32s(p, n, 0x5eed ^ 3);
            let want = sum_f32(&[&[0.5f32][..], &d].concat());
            for split in splits(n as u64, mq.len(), false) {
                let x = mq.scatter_with(&d, &split, 1).unwrap();
                let s = mq.queue(0).buffer_from(&[0.5f32]).unwrap();
                let lo = mq.queue(0).buffer_from(&[0.0f32]).unwrap();
                mq.parallel_for_reduce_with(
                    Range::new(n as u64),
                    vec![
                        reduction(&s, Op::Plus),
                        reduction(&lo, Op::Minimum).initialize_to_identity(),
                    ],
                    MultiKernel::new("sum += x[i]; combine(sum1, x[i]);").arg("x", &x),
                    opts,
                )
                .unwrap();
                let got = s.get(0).unwrap();
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{name} {} {:?}: {got:e} vs {want:e}",
                    p.name(),
                    split.counts()
                );
            }
        }
        // The shares plan as a single queue does: the same options speculate on each device.
        for q in mq.queues() {
            let x = q.buffer_from(&[1.0f32; 4096]).unwrap();
            let s = q.buffer_from(&[0.0f32]).unwrap();
            let lo = q.buffer_from(&[0.0f32]).unwrap();
            let ev = q
                .parallel_for_reduce_with(
                    Range::new(4096),
                    vec![
                        reduction(&s, Op::Plus),
                        reduction(&lo, Op::Minimum).initialize_to_identity(),
                    ],
                    Kernel::new("sum += x[i]; combine(sum1, x[i]);").arg("x", &x),
                    opts,
                )
                .unwrap();
            let spec = ev
                .plan()
                .and_then(|p| p.vars[0].exact)
                .is_some_and(|e| e.speculative);
            assert!(spec, "{name}: the plan did not take the speculative loop");
        }
        println!("PASS {name}: 4 patterns x 2 splits, speculative shares bit-identical to the host's exact sum");
    }
}

#[test]
fn exact_sums_are_bit_identical() {
    let n = 20_011usize;
    for (name, mq) in configs("multi") {
        let fp64 = mq.queues().iter().all(|q| q.caps().fp64);
        for p in Pattern::ALL {
            let d32 = f32s(p, n, 0x5eed);
            let want32 = sum_f32(&[&[0.5f32][..], &d32].concat());
            let d64 = f64s(p, n, 0x5eed);
            let want64 = sum_f64(&[&[-0.25f64][..], &d64].concat());
            for split in splits(n as u64, mq.len(), false) {
                let x = mq.scatter_with(&d32, &split, 1).unwrap();
                let s = mq
                    .queue(1.min(mq.len() - 1))
                    .buffer_from(&[0.5f32])
                    .unwrap();
                let rep = mq
                    .parallel_for_reduce_with(
                        Range::new(n as u64),
                        reduction(&s, Op::Plus),
                        MultiKernel::new("sum += x[i];").arg("x", &x),
                        Options::default().exact(),
                    )
                    .unwrap();
                let got = s.get(0).unwrap();
                assert_eq!(
                    got.to_bits(),
                    want32.to_bits(),
                    "{name} {} f32 {:?}: {got:e} vs {want32:e} ({rep:?})",
                    p.name(),
                    split.counts()
                );
                if !fp64 {
                    println!("SKIP {name} {} f64: a device lacks fp64", p.name());
                    continue;
                }
                let x = mq.scatter_with(&d64, &split, 1).unwrap();
                let s = mq.queue(0).buffer_from(&[-0.25f64]).unwrap();
                mq.parallel_for_reduce_with(
                    Range::new(n as u64),
                    reduction(&s, Op::Plus),
                    MultiKernel::new("sum += x[i];").arg("x", &x),
                    Options::default().exact(),
                )
                .unwrap();
                let got = s.get(0).unwrap();
                assert_eq!(
                    got.to_bits(),
                    want64.to_bits(),
                    "{name} {} f64 {:?}: {got:e} vs {want64:e}",
                    p.name(),
                    split.counts()
                );
            }
        }
        println!(
            "PASS {name}: 14 patterns x f32/f64 x 2 splits bit-identical to the host's exact sum"
        );
    }
    // One device's exact plan gives the same bits (design: the combination stays exact).
    let q = &device_queues()[0];
    let d32 = f32s(Pattern::ALL[3], n, 7);
    let x = q.buffer_from(&d32).unwrap();
    let s = q.buffer_from(&[0.0f32]).unwrap();
    q.parallel_for_reduce_with(
        Range::new(n as u64),
        reduction(&s, Op::Plus),
        Kernel::new("sum += x[i];").arg("x", &x),
        Options::default().exact(),
    )
    .unwrap();
    assert_eq!(s.get(0).unwrap().to_bits(), sum_f32(&d32).to_bits());
}

#[test]
fn float_sums_within_the_bound() {
    let n = 300_007usize;
    let data: Vec<f32> = (0..n)
        .map(|i| ((i * 37 % 1001) as f32 - 500.0) * 1e-3)
        .collect();
    let exact: f64 = data.iter().map(|&v| v as f64).sum::<f64>() + 1.0;
    let abs: f64 = data.iter().map(|&v| (v as f64).abs()).sum::<f64>() + 1.0;
    let u = unit_roundoff(clreduce::ElemType::F32);
    for (name, mq) in configs("multi") {
        for split in splits(n as u64, mq.len(), false) {
            let x = mq.scatter_with(&data, &split, 1).unwrap();
            let (s, lo, hi) = (
                mq.queue(0).buffer_from(&[1.0f32]).unwrap(),
                mq.queue(0).buffer_from(&[f32::INFINITY]).unwrap(),
                mq.queue(0).buffer_from(&[f32::NEG_INFINITY]).unwrap(),
            );
            let reds = vec![
                reduction(&s, Op::Plus),
                reduction(&lo, Op::Minimum).name("lo"),
                reduction(&hi, Op::Maximum).name("hi"),
            ];
            let k =
                MultiKernel::new("sum += x[i]; combine(lo, x[i]); combine(hi, x[i]);").arg("x", &x);
            let (_, plans) = mq
                .explain(
                    Range::new(n as u64),
                    vec![
                        reduction(&s, Op::Plus),
                        reduction(&lo, Op::Minimum).name("lo"),
                        reduction(&hi, Op::Maximum).name("hi"),
                    ],
                    &k,
                    Options::default(),
                )
                .unwrap();
            let depth = plans
                .iter()
                .flatten()
                .map(|p| combination_depth(p, 0))
                .fold(0.0, f64::max);
            mq.parallel_for_reduce_with(Range::new(n as u64), reds, k, Options::default())
                .unwrap();
            // Each share within its plan's depth; the host adds one addition per share and
            // the initial value.
            let bound = (depth + mq.len() as f64 + 1.0) * u * abs + 2.0 * u * exact.abs();
            let got = s.get(0).unwrap() as f64;
            assert!(
                (got - exact).abs() <= bound,
                "{name} {:?}: {got} vs {exact} (bound {bound:e})",
                split.counts()
            );
            let (mn, mx) = data
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            assert_eq!((lo.get(0).unwrap(), hi.get(0).unwrap()), (mn, mx));
        }
        println!(
            "PASS {name}: f32 sum within (depth + shares + 1)·u·Σ|x| + 2u|ref|, min and max exact"
        );
    }
}

#[test]
fn argmin_and_argmax_take_the_lowest_global_index() {
    let n = 50_000usize;
    for (name, mq) in configs("multi") {
        for split in splits(n as u64, mq.len(), false) {
            // Ties across shares: the extremes at the end of an earlier share and at the start
            // of a later one, so the lowest global index is not the lowest share-local one.
            let mut data: Vec<f64> = (0..n).map(|i| ((i * 31) % 1000) as f64).collect();
            let offs = split.offsets();
            let live: Vec<usize> = (0..split.devices())
                .filter(|&k| split.counts()[k] > 2)
                .collect();
            for (j, &k) in live.iter().enumerate() {
                let (o, c) = (offs[k] as usize, split.counts()[k] as usize);
                let (lo, hi) = if j == 0 && live.len() > 1 {
                    (o + c - 1, o + c - 2)
                } else {
                    (o + 1, o + 2)
                };
                data[lo] = -5.0;
                data[hi] = 5000.0;
            }
            let first_min = data.iter().position(|&v| v == -5.0).unwrap() as u64;
            let first_max = data.iter().position(|&v| v == 5000.0).unwrap() as u64;
            let x = mq.scatter_with(&data, &split, 1).unwrap();
            let q = mq.queue(mq.len() - 1);
            let (v0, i0) = (
                q.buffer_from(&[0.0f64]).unwrap(),
                q.buffer_from(&[0u64]).unwrap(),
            );
            let (v1, i1) = (
                q.buffer_from(&[0.0f64]).unwrap(),
                q.buffer_from(&[0u64]).unwrap(),
            );
            mq.parallel_for_reduce_with(
                Range::new(n as u64),
                vec![
                    reduction_argmin(&v0, &i0)
                        .initialize_to_identity()
                        .name("lo"),
                    reduction_argmax(&v1, &i1)
                        .initialize_to_identity()
                        .name("hi"),
                ],
                MultiKernel::new("combine(lo, x[i], i); combine(hi, x[i], i);").arg("x", &x),
                Options::default(),
            )
            .unwrap();
            assert_eq!(
                (v0.get(0).unwrap(), i0.get(0).unwrap()),
                (-5.0, first_min),
                "{name} {:?}",
                split.counts()
            );
            assert_eq!(
                (v1.get(0).unwrap(), i1.get(0).unwrap()),
                (5000.0, first_max)
            );
        }
        println!("PASS {name}: argmin/argmax with ties across shares, lowest global index");
    }
}

#[test]
fn custom_and_identity_less_ops() {
    let n = 40_000usize;
    let data: Vec<i32> = (0..n as i32).map(|i| (i * 13) % 977 - 400).collect();
    for (name, mq) in configs("multi") {
        for split in splits(n as u64, mq.len(), false) {
            let x = mq.scatter_with(&data, &split, 1).unwrap();
            let q = mq.queue(0);
            // A custom combiner with an identity (integer wrap-around as on the device).
            let p = q.buffer_from(&[3i32]).unwrap();
            mq.parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&p, CustomOp::new("a * b + a + b").identity(0i32)),
                MultiKernel::new("combine(sum, x[i] & 3);").arg("x", &x),
                Options::default(),
            )
            .unwrap();
            let want = data.iter().fold(3i32, |a, &v| {
                let b = v & 3;
                a.wrapping_mul(b).wrapping_add(a).wrapping_add(b)
            });
            assert_eq!(
                p.get(0).unwrap(),
                want,
                "{name} custom {:?}",
                split.counts()
            );
            // Identity-less, combined only for large values: most shares see nothing.
            let m = q.buffer_from(&[-7i32]).unwrap();
            mq.parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&m, CustomOp::new("max(a, b)")),
                MultiKernel::new("if (x[i] > 570 && i % 1000 == 3) combine(sum, x[i]);")
                    .arg("x", &x),
                Options::default(),
            )
            .unwrap();
            let offs = split.offsets();
            let want = (0..n)
                .filter(|&g| {
                    let k = offs.iter().rposition(|&o| o as usize <= g).unwrap();
                    data[g] > 570 && (g - offs[k] as usize) % 1000 == 3
                })
                .map(|g| data[g])
                .fold(-7, i32::max);
            assert_eq!(
                m.get(0).unwrap(),
                want,
                "{name} identity-less {:?}",
                split.counts()
            );
            // Identity-less where no share combines anything: the variable stays.
            let z = q.buffer_from(&[42i32]).unwrap();
            mq.parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&z, CustomOp::new("min(a, b)")),
                MultiKernel::new("if (x[i] > 100000) combine(sum, x[i]);").arg("x", &x),
                Options::default(),
            )
            .unwrap();
            assert_eq!(z.get(0).unwrap(), 42);
        }
        println!("PASS {name}: custom with identity, identity-less (some and no shares empty)");
    }
}

#[test]
fn spans_and_several_variables() {
    let n = 60_001usize;
    let keys: Vec<u32> = (0..n as u32).map(|i| (i * 2654435761u32) >> 7).collect();
    let vals: Vec<f64> = f64s(Pattern::ALL[5], n, 11);
    for (name, mq) in configs("multi") {
        let fp64 = mq.queues().iter().all(|q| q.caps().fp64);
        if !fp64 {
            println!("SKIP {name} spans/several: a device lacks fp64");
            continue;
        }
        for split in splits(n as u64, mq.len(), false) {
            let k = mq.scatter_with(&keys, &split, 1).unwrap();
            let x = mq.scatter_with(&vals, &split, 1).unwrap();
            let q = mq.queue(0);
            let hist = q.buffer_from(&[1u32; 64]).unwrap();
            let bins = q.buffer_from(&[0.0f64; 8]).unwrap();
            let total = q.buffer_from(&[0i64]).unwrap();
            let (mx, ix) = (
                q.buffer_from(&[0.0f64]).unwrap(),
                q.buffer_from(&[0u64]).unwrap(),
            );
            mq.parallel_for_reduce_with(
                Range::new(n as u64),
                vec![
                    reduction_span(&hist, 64, Op::Plus).name("hist"),
                    reduction_span(&bins, 8, Op::Plus).name("bins").initialize_to_identity(),
                    reduction(&total, Op::Plus).name("total"),
                    reduction_argmax(&mx, &ix).initialize_to_identity().name("best"),
                ],
                MultiKernel::new(
                    "hist[k[i] & 63] += 1u; bins[k[i] & 7] += x[i]; total += (long)k[i]; combine(best, x[i], i);",
                )
                .arg("k", &k)
                .arg("x", &x),
                Options::default().exact(),
            )
            .unwrap();
            let mut want_h = [1u32; 64];
            let mut want_b = vec![Vec::new(); 8];
            for (j, &kk) in keys.iter().enumerate() {
                want_h[(kk & 63) as usize] += 1;
                want_b[(kk & 7) as usize].push(vals[j]);
            }
            assert_eq!(
                hist.to_vec().unwrap(),
                want_h,
                "{name} {:?}",
                split.counts()
            );
            let got_b = bins.to_vec().unwrap();
            for e in 0..8 {
                assert_eq!(
                    got_b[e].to_bits(),
                    sum_f64(&want_b[e]).to_bits(),
                    "{name} bin {e}"
                );
            }
            let want_t: i64 = keys.iter().map(|&v| v as i64).sum();
            assert_eq!(total.get(0).unwrap(), want_t);
            let best =
                vals.iter()
                    .enumerate()
                    .fold((f64::NEG_INFINITY, u64::MAX), |(b, bi), (j, &v)| {
                        if b < v {
                            (v, j as u64)
                        } else {
                            (b, bi)
                        }
                    });
            assert_eq!((mx.get(0).unwrap(), ix.get(0).unwrap()), best);
        }
        println!("PASS {name}: a u32 span, an exact f64 span, an i64 sum and argmax in one launch");
    }
}

#[test]
fn nd_range_and_2d_forms_split_on_work_groups() {
    let local = 96usize;
    let groups = 23u64;
    let n = groups as usize * local;
    let data: Vec<i64> = (0..n as i64).map(|i| i * 3 - 1000).collect();
    let body = "sum += x[i] * (long)(get_local_id(0) + 1) + (long)get_group_id(0);";
    let q0 = &device_queues()[0];
    let want = {
        let x = q0.buffer_from(&data).unwrap();
        let s = q0.buffer_from(&[0i64]).unwrap();
        q0.parallel_for_reduce(
            NdRange::new(n as u64, local),
            reduction(&s, Op::Plus),
            Kernel::new(body).arg("x", &x),
        )
        .unwrap();
        s.get(0).unwrap()
    };
    for (name, mq) in configs("multi") {
        let split = &splits(groups, mq.len(), false)[0];
        let x = mq.scatter_with(&data, split, local as u64).unwrap();
        let s = mq.queue(0).buffer_from(&[0i64]).unwrap();
        mq.parallel_for_reduce_with(
            NdRange::new(n as u64, local),
            reduction(&s, Op::Plus),
            MultiKernel::new(body).arg("x", &x),
            Options::default(),
        )
        .unwrap();
        // Group ids restart in each share: the sum of group ids differs from one device's by
        // a known amount (each share's groups count from 0).
        let offs = split.offsets();
        let shift: i64 = offs
            .iter()
            .zip(split.counts())
            .map(|(&o, &c)| (o * c * local as u64) as i64)
            .sum();
        assert_eq!(
            s.get(0).unwrap() + shift,
            want,
            "{name} nd_range {:?}",
            split.counts()
        );
        // A 2-D range cut along its first dimension, 7 elements per row.
        let rows = 1001u64;
        let d2: Vec<i32> = (0..rows as i32 * 7).map(|v| v % 101).collect();
        let split = Split::proportional(rows, &vec![1.0; mq.len()]).unwrap();
        let x = mq.scatter_with(&d2, &split, 7).unwrap();
        let s = mq.queue(0).buffer_from(&[0i32]).unwrap();
        mq.parallel_for_reduce_with(
            Range::new_2d(rows, 7),
            reduction(&s, Op::Plus),
            MultiKernel::new("sum += x[item.linear_id] * (int)(item.id[1] + 1);").arg("x", &x),
            Options::default(),
        )
        .unwrap();
        let want2: i32 = d2
            .iter()
            .enumerate()
            .map(|(j, &v)| v * (j % 7 + 1) as i32)
            .sum();
        assert_eq!(s.get(0).unwrap(), want2, "{name} 2-D");
        println!("PASS {name}: nd_range split on work-groups, 2-D range on rows");
    }
}

#[test]
fn offsets_empty_ranges_and_replicated_tables() {
    for (name, mq) in configs("multi") {
        // The share's first global index, bound as a scalar: the global index sum.
        let n = 12_345u64;
        let split = &splits(n, mq.len(), false)[0];
        let dummy = mq
            .scatter_with(&vec![0u8 as i32; n as usize], split, 1)
            .unwrap();
        let s = mq.queue(0).buffer_from(&[0u64]).unwrap();
        mq.parallel_for_reduce_with(
            Range::new(n),
            reduction(&s, Op::Plus),
            MultiKernel::new("sum += base + i + (ulong)d[i];")
                .arg("d", &dummy)
                .offset("base"),
            Options::default(),
        )
        .unwrap();
        assert_eq!(s.get(0).unwrap(), n * (n - 1) / 2, "{name} offset");
        // A replicated table read at the global index.
        let table: Vec<u32> = (0..n as u32).map(|v| v * 3).collect();
        let t = mq.replicate(&table).unwrap();
        let s = mq.queue(0).buffer_from(&[0u32]).unwrap();
        mq.parallel_for_reduce_with(
            Range::new(n),
            reduction(&s, Op::Plus),
            MultiKernel::new("sum += t[base + i] + (uint)d[i];")
                .arg("t", &t)
                .arg("d", &dummy)
                .offset("base"),
            Options::default(),
        )
        .unwrap();
        assert_eq!(
            s.get(0).unwrap(),
            table.iter().fold(0u32, |a, &v| a.wrapping_add(v))
        );
        // An empty range: identity under initialize_to_identity, else unchanged.
        let (v, i) = (
            mq.queue(0).buffer_from(&[1.0f32]).unwrap(),
            mq.queue(0).buffer_from(&[7u64]).unwrap(),
        );
        let keep = mq.queue(0).buffer_from(&[9i32]).unwrap();
        let e = mq
            .scatter_with::<f32>(&[], &Split::from_counts(&vec![0; mq.len()]), 1)
            .unwrap();
        let rep = mq
            .parallel_for_reduce_with(
                Range::new(0),
                vec![
                    reduction_argmin(&v, &i).initialize_to_identity().name("a"),
                    reduction(&keep, Op::Plus).name("b"),
                ],
                MultiKernel::new("combine(a, x[i], i); b += 1;").arg("x", &e),
                Options::default(),
            )
            .unwrap();
        assert!(rep.shares.is_empty());
        assert_eq!(
            (v.get(0).unwrap(), i.get(0).unwrap()),
            (f32::INFINITY, u64::MAX)
        );
        assert_eq!(keep.get(0).unwrap(), 9);
        println!("PASS {name}: offsets, replicated tables, empty ranges");
    }
}

#[test]
fn errors_are_typed() {
    let qs = device_queues();
    let mq = MultiQueue::new(&[qs[0].clone(), Queue::new(qs[0].device()).unwrap()]).unwrap();
    let data = vec![1.0f32; 100];
    let a = mq
        .scatter_with(&data, &Split::from_counts(&[50, 50]), 1)
        .unwrap();
    let b = mq
        .scatter_with(&data, &Split::from_counts(&[30, 70]), 1)
        .unwrap();
    let s = mq.queue(0).buffer_from(&[0.0f32]).unwrap();
    let e = mq
        .parallel_for_reduce_with(
            Range::new(100),
            reduction(&s, Op::Plus),
            MultiKernel::new("sum += a[i] + b[i];")
                .arg("a", &a)
                .arg("b", &b),
            Options::default(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::BadArgument { .. }), "{e}");
    // A range that does not match the scattered data.
    let e = mq
        .parallel_for_reduce_with(
            Range::new(99),
            reduction(&s, Op::Plus),
            MultiKernel::new("sum += a[i];").arg("a", &a),
            Options::default(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::BadArgument { .. }), "{e}");
    // A variable made by a queue outside the multi-device queue, on one of its devices: buffers
    // belong to their device, so it is used (and read back) like one of ours.
    let other = Queue::new(qs[0].device()).unwrap();
    let s2 = other.buffer_from(&[0.0f32]).unwrap();
    mq.parallel_for_reduce_with(
        Range::new(100),
        reduction(&s2, Op::Plus),
        MultiKernel::new("sum += a[i];").arg("a", &a),
        Options::default(),
    )
    .unwrap();
    assert_eq!(s2.get(0).unwrap(), data.iter().sum::<f32>());
    // A variable on a device outside the multi-device queue.
    match qs
        .iter()
        .find(|q| q.device().index() != qs[0].device().index())
    {
        Some(far) => {
            let s3 = far.buffer_from(&[0.0f32]).unwrap();
            let e = mq
                .parallel_for_reduce_with(
                    Range::new(100),
                    reduction(&s3, Op::Plus),
                    MultiKernel::new("sum += a[i];").arg("a", &a),
                    Options::default(),
                )
                .unwrap_err();
            assert!(matches!(e, Error::ForeignBuffer { .. }), "{e}");
            assert_eq!(s3.get(0).unwrap(), 0.0);
        }
        None => println!("SKIP variable on another device: only one device here"),
    }
    // A split that does not fit the data; bad weights; no queues.
    assert!(matches!(
        mq.scatter_with(&data, &Split::from_counts(&[10, 10]), 1),
        Err(Error::BadArgument { .. })
    ));
    assert!(matches!(
        Split::proportional(10, &[0.0, 0.0]),
        Err(Error::BadArgument { .. })
    ));
    assert!(matches!(
        MultiQueue::new(&[]),
        Err(Error::BadArgument { .. })
    ));
    // A body error on one share is the launch's error, and the variable is unchanged.
    let e = mq
        .parallel_for_reduce_with(
            Range::new(100),
            reduction(&s, Op::Plus),
            MultiKernel::new("sum += a[i] + undefined_name;").arg("a", &a),
            Options::default(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::BodyBuild { .. }), "{e}");
    assert_eq!(s.get(0).unwrap(), 0.0);
    // A custom combiner the host evaluator cannot read.
    let i = mq.queue(0).buffer_from(&[0i32]).unwrap();
    let e = mq
        .parallel_for_reduce_with(
            Range::new(100),
            reduction(&i, CustomOp::new("my_op(a, b)").identity(0i32)),
            MultiKernel::new("combine(sum, (int)a[i]);").arg("a", &a),
            Options::default(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
}

#[test]
fn calibrated_split_and_scatter() {
    let mq = MultiQueue::all().unwrap();
    let t = mq.throughput().unwrap();
    assert_eq!(t.devices.len(), mq.len());
    for (q, d) in mq.queues().iter().zip(&t.devices) {
        assert!(d.rate_alone > 0.0 && d.rate_together > 0.0 && d.latency_s >= 0.0);
        println!(
            "{}: latency {:.1} us, {:.2} G indices/s alone, {:.2} together",
            q.device().label(),
            d.latency_s * 1e6,
            d.rate_alone / 1e9,
            d.rate_together / 1e9
        );
    }
    for n in [0u64, 1, 1000, 1 << 20, 1 << 26] {
        let s = mq.split(n, 1).unwrap();
        assert_eq!(s.total(), n);
        println!("split of {n}: {:?}", s.counts());
    }
    // Small launches go to one device (the lowest latency): never blindly by count.
    assert_eq!(
        mq.split(1, 1)
            .unwrap()
            .counts()
            .iter()
            .filter(|&&c| c > 0)
            .count(),
        1
    );
    let data: Vec<u32> = (0..100_000).collect();
    let x = mq.scatter(&data).unwrap();
    assert_eq!(x.gather().unwrap(), data);
    let parts: Vec<_> = mq
        .queues()
        .iter()
        .map(|q| q.buffer_from(&data[..10]).unwrap())
        .collect();
    assert!(MultiBuffer::from_parts(parts, Split::from_counts(&vec![20; mq.len()]), 1).is_err());
}

/// `clreduce reduce --split --json`: every op family across the devices (explicit uneven shares
/// and the measured split), checked by the command against the host reference.
#[test]
fn cli_reduce_split() {
    // CLREDUCE_BIN (scripts/gpu.sh sets it where the binary travels), else cargo's.
    let Some(exe) = std::env::var("CLREDUCE_BIN")
        .ok()
        .or(option_env!("CARGO_BIN_EXE_clreduce").map(String::from))
    else {
        println!("SKIP cli --split: the clreduce binary is not built (feature cli)");
        return;
    };
    let runs: [&[&str]; 6] = [
        &[
            "--op",
            "sum,min,max,argmin",
            "--type",
            "f32",
            "--shares",
            "1,3",
        ],
        &[
            "--op",
            "sum,prod,and,or,xor,land,lor",
            "--type",
            "i64",
            "--shares",
            "2,1",
        ],
        &[
            "--op",
            "sum,argmax",
            "--type",
            "f64",
            "--determinism",
            "exact",
        ],
        &[
            "--op", "sum", "--type", "u32", "--span", "64", "--shares", "1,1",
        ],
        &[
            "--custom",
            "max(a,b)",
            "--no-identity",
            "--type",
            "i32",
            "--shares",
            "3,1",
        ],
        &[
            "--op", "max", "--form", "nd-range", "--local", "64", "--n", "64000", "--shares", "1,2",
        ],
    ];
    let devs = device_queues().len();
    for args in runs {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["reduce", "--split", "--json"]).args(args);
        if !args.contains(&"--n") {
            cmd.args(["--n", "100003"]);
        }
        if devs < 2 && args.contains(&"--shares") {
            println!("SKIP cli --split {args:?}: one non-simulator device");
            continue;
        }
        let out = cmd
            .envs(clreduce::device::env_for_children())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(j[0]["pass"], true, "{args:?}: {text}");
        assert!(j[0]["shares"].as_array().is_some_and(|s| !s.is_empty()));
        println!("PASS cli reduce --split {args:?}: shares {}", j[0]["split"]);
    }
}

/// A split whose only non-empty share is on the device holding the variables runs that launch
/// directly (nothing to combine), with the same results as through the shares.
#[test]
fn one_live_share_runs_directly() {
    let n = 10_007usize;
    let data: Vec<f64> = (0..n).map(|i| ((i * 13) % 101) as f64 - 50.0).collect();
    for (name, mq) in configs("multi") {
        let k = mq.len();
        for home in [0, k - 1] {
            let mut counts = vec![0u64; k];
            counts[home] = n as u64;
            let x = mq
                .scatter_with(&data, &Split::from_counts(&counts), 1)
                .unwrap();
            let q = mq.queue(home);
            let (v, i) = (
                q.buffer_from(&[0.0f64]).unwrap(),
                q.buffer_from(&[0u64]).unwrap(),
            );
            let s = q.buffer_from(&[0.5f64]).unwrap();
            let rep = mq
                .parallel_for_reduce_with(
                    Range::new(n as u64),
                    vec![
                        reduction_argmin(&v, &i).initialize_to_identity().name("lo"),
                        reduction(&s, Op::Plus).name("s"),
                    ],
                    MultiKernel::new("combine(lo, x[i], i); s += x[i];").arg("x", &x),
                    Options::default().exact(),
                )
                .unwrap();
            assert_eq!(rep.combine_ns, 0, "{name}: the direct path");
            assert_eq!(rep.shares.len(), 1);
            let first_min = data.iter().position(|&d| d == -50.0).unwrap() as u64;
            assert_eq!((v.get(0).unwrap(), i.get(0).unwrap()), (-50.0, first_min));
            let want = sum_f64(&[&[0.5][..], &data].concat());
            assert_eq!(s.get(0).unwrap().to_bits(), want.to_bits(), "{name}");
        }
        println!("PASS {name}: one live share on the variables' device runs directly");
    }
}
