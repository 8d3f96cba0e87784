//! Exact sums per segment through the speculative loop (decision 90: kernels/segment.cl
//! `CLR_XSTRIDED`, kernels/var_segexact.cl `clr_xstry`) in `group` and `lanes`, asked for on
//! every device (`Tuning::spec`) and left off, on segments whose chunks mostly pass the try and
//! now and then must be redone: each result bit for bit against the host's correctly rounded
//! sum and the same bits with the loop on and off, under every plan and device
//! (tests/segment_exact.rs `run_with`). The segments: f32 or f64 elements of random signs
//! within a few exponent fields of the segment's base (the try sums them exactly), with now
//! and then an element that flags its chunk: one 40 fields above the base (a span the block's
//! double cannot hold, or a residue in the expansion), a subnormal, a zero of either sign, a
//! small element with its last bit set after the sum grew (a residue), and in some segments an
//! infinity or a NaN. A chunk that flags and is not redone loses its elements: with the redo
//! removed (`CLREDUCE_EXTRA_OPTIONS=-DCLR_SEGX_REDO=`) this test failed on PoCL (decision 90).

use crate::common;
use crate::segment_exact::{run_with, Kind, Layout, Ty};

use clreduce::SegmentAlgo;
use common::rng::Rng;
use common::{queues, sample_hash, short, sim_lock, Tally};

/// An f32 of exponent field `field` (clamped to 1..=254), a random fraction with its last bit
/// set, a random sign.
fn f32_near(field: i64, rng: &mut Rng) -> f32 {
    let e = field.clamp(1, 254) as u32;
    let frac = rng.below(1 << 23) as u32 | 1;
    f32::from_bits(((rng.below(2) as u32) << 31) | (e << 23) | frac)
}

/// The same for f64 (fields clamped to 1..=2046).
fn f64_near(field: i64, rng: &mut Rng) -> f64 {
    let e = field.clamp(1, 2046) as u64;
    let frac = rng.below(1 << 52) | 1;
    f64::from_bits((rng.below(2) << 63) | (e << 52) | frac)
}

/// Segment data of `len` elements around exponent field `base`: ordinary elements within 3
/// fields, and about one in `every` an element that flags its chunk.
fn segment(ty: Ty, len: usize, base: i64, every: u64, rng: &mut Rng) -> Vec<f64> {
    let mut v = Vec::with_capacity(len);
    let special = rng.below(3) == 0;
    for i in 0..len {
        let odd = rng.below(every) == 0;
        let field = if odd {
            match rng.below(5) {
                0 => base + 40,
                1 => 0, // a subnormal (field 0 below)
                2 => -1,
                _ => base - 45,
            }
        } else {
            base + rng.below(7) as i64 - 3
        };
        let x = match (ty, field) {
            (Ty::F64, -1) => -0.0,
            (_, -1) => 0.0,
            (Ty::F64, 0) => f64::from_bits(rng.below(1 << 52) | 1),
            (_, 0) => f32::from_bits(rng.below(1 << 23) as u32 | 1) as f64,
            (Ty::F64, f) => f64_near(f, rng),
            (_, f) => f32_near(f, rng) as f64,
        };
        v.push(if i == len / 2 && special && len > 2 {
            if rng.below(2) == 0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        } else {
            x
        });
    }
    v
}

/// The layouts (smaller on the simulator): long rows and one row (`group`), rows of 256
/// (`lanes`), CSR.
fn layouts(sim: bool, seed: u64) -> Vec<Layout> {
    let mut rng = Rng(seed ^ 0x5BEC);
    let mut off = vec![2u64];
    for _ in 0..(if sim { 12 } else { 120 }) {
        let len = match rng.below(3) {
            0 => rng.below(30),
            1 => rng.below(900),
            _ => rng.below(if sim { 2000 } else { 9000 }),
        };
        off.push(off.last().unwrap() + len);
    }
    let n = off.last().unwrap() + 3;
    vec![
        Layout {
            name: "spec-rows",
            kind: Kind::Rows {
                r: if sim { 4 } else { 24 },
                c: if sim { 1500 } else { 20011 },
            },
        },
        Layout {
            name: "spec-rows-256",
            kind: Kind::Rows {
                r: if sim { 8 } else { 200 },
                c: 256,
            },
        },
        Layout {
            name: "spec-one",
            kind: Kind::Rows {
                r: 1,
                c: if sim { 6000 } else { 300_007 },
            },
        },
        Layout {
            name: "spec-csr",
            kind: Kind::Csr { n, off },
        },
    ]
}

/// The data of every segment of `l` (one in `every` elements flags), and the initial values.
fn data(l: &Layout, ty: Ty, every: u64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng(seed);
    let mut xs: Vec<f64> = (0..l.n()).map(|i| (i % 5) as f64 * 1e30).collect();
    let top = if ty == Ty::F64 { 1900 } else { 200 };
    for k in 0..l.results() {
        let m = l.members(k);
        let base = 50 + rng.below(top - 100) as i64;
        for (i, x) in m.iter().zip(segment(ty, m.len(), base, every, &mut rng)) {
            xs[*i] = x;
        }
    }
    let inits = (0..l.results())
        .map(|_| (rng.below(2001) as f64 - 1000.0) / 4.0)
        .collect();
    (xs, inits)
}

/// Every layout under `group`, `lanes` and the planner's choice, f32 and f64, flags rare and
/// frequent, with the speculative loop asked for and left off (the same bits), on every
/// device; the loop must run where asked for under `group` and `lanes`.
#[test]
fn flagged_chunks_redone_exactly() {
    let mut t = Tally::new("segment_exact_spec::flagged_chunks_redone_exactly");
    let seed = 0x5E + sample_hash("segment_exact_spec::seed") % 1000;
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let sim = d.is_simulator();
        // Without fp64 the three-float expansions keep the push (the rule declines).
        let fp64 = q.caps().fp64;
        let started = std::time::Instant::now();
        for (li, l) in layouts(sim, seed).into_iter().enumerate() {
            for (ti, ty) in [Ty::F32, Ty::F64].into_iter().enumerate() {
                let every = if (li + ti) % 2 == 0 { 3000 } else { 300 };
                let (xs, inits) = data(&l, ty, every, seed + 7 * li as u64 + ti as u64);
                let plans = [Some(SegmentAlgo::Group), Some(SegmentAlgo::Lanes), None];
                for (pi, algo) in plans.into_iter().enumerate() {
                    let init = (li + pi) % 2 == 0;
                    let key = format!("{} n={} {ty:?} seed {seed} init {init}", l.name, l.n());
                    for spec in [true, false] {
                        let case = format!(
                            "{} {ty:?} {} init {init} spec {spec}",
                            l.name,
                            algo.map_or("auto".into(), |a| a.to_string())
                        );
                        let r = run_with(
                            q,
                            &l,
                            ty,
                            (&xs, &inits),
                            (algo, init, Some(spec)),
                            &key,
                            &dev,
                        );
                        match r {
                            Ok(ran) if algo.is_some() && ran != (spec && fp64) => t.fail(
                                &dev,
                                &case,
                                &format!("the speculative loop ran: {ran}, asked: {spec}"),
                            ),
                            Ok(_) => t.pass(&dev),
                            Err(Ok(why)) => t.skip(&dev, &case, &why),
                            Err(Err(m)) => t.fail(&dev, &case, &m),
                        }
                    }
                }
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}
