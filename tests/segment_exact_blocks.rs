//! Exact sums per segment at the edges of a block pre-sum (written for decision 80's block: f32
//! elements summed in a plain double while their exponent fields stay within 12 of the block's
//! base and the block holds at most 16; measured slower on the H200 and not kept, so the
//! per-segment push is the expansion's TwoSums again). The segments stay as adversarial cases
//! of the per-segment exact path and of any block to come, each result bit for bit against the
//! host's correctly rounded sum and the same bits under every plan and device
//! (tests/segment_exact.rs `run_on`):
//! - spans: full mantissas whose fields straddle a window of +-12 (base +-14);
//! - counts: runs of large elements of one sign after a small one with its last bit set, all
//!   within 24 fields, so a block of more than 16 would pass 2^53 units;
//! - past the window's edge: large and small elements 14 fields either side of an element,
//!   which a window of 14 would sum in one double of 55 bits;
//! - cancellation across blocks: 16 large values, then their negatives, the small values
//!   between them the whole sum;
//! - specials among normal elements: zeros of both signs, subnormals, and in some segments an
//!   infinity or a NaN;
//! - one element per block (fields 13 apart, alternating).
//!
//! Mutations of the block (decision 80): a combine that dropped the other side's block failed
//! here on PoCL (lanes, tiles, chunks, group over CSR); a window of 14 and blocks of 64 passed
//! the first version of these segments, so the counts and past-the-edge families were made to
//! hit them.

use crate::common;
use crate::segment_exact::{run_on, Kind, Layout, Ty};

use clreduce::SegmentAlgo;
use common::rng::Rng;
use common::{queues, sample_hash, short, sim_lock, Tally};

/// A normal f32 of exponent field `field` (clamped to 1..=254), fraction `frac`, sign `neg`.
fn f32_of(field: i64, frac: u32, neg: bool) -> f32 {
    let e = field.clamp(1, 254) as u32;
    f32::from_bits(((neg as u32) << 31) | (e << 23) | (frac & 0x7f_ffff))
}

/// A fraction with its last bit set (every bit of the element counts).
fn odd_frac(rng: &mut Rng) -> u32 {
    (rng.below(1 << 23) as u32) | 1
}

/// Family `f` (0..6) of `len` elements around exponent field `base`.
fn family(f: usize, len: usize, base: i64, rng: &mut Rng) -> Vec<f32> {
    let mut v = Vec::with_capacity(len);
    match f {
        // Spans: fields base-14 ..= base+14, full mantissas, random signs.
        0 => {
            for _ in 0..len {
                let d = rng.below(29) as i64 - 14;
                v.push(f32_of(base + d, odd_frac(rng), rng.below(2) == 1));
            }
        }
        // Counts: an element at base (a block's base), a small one (base-12, last bit set),
        // then 40 large ones (base+12, every bit set) of one sign: one block of 16 needs 52
        // bits, a longer one more than 53.
        1 => {
            while v.len() < len {
                let neg = rng.below(2) == 1;
                v.push(f32_of(base, odd_frac(rng), neg));
                v.push(f32_of(base - 12, odd_frac(rng), !neg));
                for _ in 0..40 {
                    v.push(f32_of(base + 12, 0x7f_ffff, neg));
                }
            }
            v.truncate(len);
        }
        // Cancellation across the fold: 16 large values, then their negatives (the next
        // block), small values between the groups.
        2 => {
            while v.len() < len {
                let big: Vec<f32> = (0..16)
                    .map(|_| f32_of(base + 12, odd_frac(rng), rng.below(2) == 1))
                    .collect();
                v.extend(&big);
                v.push(f32_of(base - 12, odd_frac(rng), rng.below(2) == 1));
                v.extend(big.iter().map(|x| -x));
                v.push(f32_of(base - 20, odd_frac(rng), rng.below(2) == 1));
            }
            v.truncate(len);
        }
        // Specials inside a block: zeros, subnormals, normals around base, one infinity or
        // NaN in some segments.
        3 => {
            for _ in 0..len {
                v.push(match rng.below(8) {
                    0 => 0.0,
                    1 => -0.0,
                    2 => f32::from_bits(
                        (rng.below(2) as u32) << 31 | (rng.below(1 << 23) as u32 | 1),
                    ),
                    _ => f32_of(
                        base + rng.below(9) as i64 - 4,
                        odd_frac(rng),
                        rng.below(2) == 1,
                    ),
                });
            }
            if len > 2 {
                match rng.below(4) {
                    0 => v[len / 2] = f32::INFINITY,
                    1 => v[len / 3] = f32::NAN,
                    _ => {}
                }
            }
        }
        // Past the window's edge: an element at base, then 7 large ones (base+14, every bit
        // set, one sign) and 8 small ones (base-14, last bit set): each side starts a block of
        // its own; a window of 14 would take all 16 into one block of 55 bits.
        4 => {
            while v.len() < len {
                let neg = rng.below(2) == 1;
                v.push(f32_of(base, odd_frac(rng), neg));
                for _ in 0..7 {
                    v.push(f32_of(base + 14, 0x7f_ffff, neg));
                }
                for _ in 0..8 {
                    v.push(f32_of(base - 14, odd_frac(rng), rng.below(2) == 1));
                }
            }
            v.truncate(len);
        }
        // One element per block: fields 13 apart, alternating.
        _ => {
            for i in 0..len {
                let d = if i % 2 == 0 { -13 } else { 13 };
                v.push(f32_of(base + d, odd_frac(rng), rng.below(2) == 1));
            }
        }
    }
    v
}

/// The layouts (smaller on the simulator).
fn layouts(sim: bool, seed: u64) -> Vec<Layout> {
    let mut rng = Rng(seed ^ 0xB10C);
    let mut off = vec![3u64];
    let segs = if sim { 24 } else { 300 };
    for _ in 0..segs {
        let len = match rng.below(4) {
            0 => 0,
            1 => rng.below(20),
            2 => rng.below(200),
            _ => rng.below(if sim { 600 } else { 3000 }),
        };
        off.push(off.last().unwrap() + len);
    }
    let n = off.last().unwrap() + 5;
    let mut v = vec![
        Layout {
            name: "blocks-rows",
            kind: Kind::Rows {
                r: if sim { 10 } else { 64 },
                c: if sim { 301 } else { 2049 },
            },
        },
        Layout {
            name: "blocks-csr",
            kind: Kind::Csr { n, off },
        },
        Layout {
            name: "blocks-cols",
            kind: Kind::Cols {
                r: if sim { 300 } else { 3001 },
                c: 7,
            },
        },
    ];
    if !sim {
        v.push(Layout {
            name: "blocks-one",
            kind: Kind::Rows { r: 1, c: 100_003 },
        });
    }
    v
}

/// The data: segment k of family k % 6 around its own base field (results without members
/// keep the filler), and the initial values.
fn data(l: &Layout, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng(seed);
    let mut xs: Vec<f64> = (0..l.n()).map(|i| (i % 7) as f64 * 1e30).collect();
    for k in 0..l.results() {
        let m = l.members(k);
        let base = 40 + rng.below(170) as i64;
        let vals = family(k % 6, m.len(), base, &mut rng);
        for (i, x) in m.into_iter().zip(vals) {
            xs[i] = x as f64;
        }
    }
    let inits = (0..l.results())
        .map(|_| {
            f32_of(
                60 + rng.below(100) as i64,
                odd_frac(&mut rng),
                rng.below(2) == 1,
            ) as f64
        })
        .collect();
    (xs, inits)
}

/// Every layout under the planner's choice and every plan it can run (on the simulator a
/// rotating sample of two), with and without initial values.
#[test]
fn block_edges_every_plan() {
    let mut t = Tally::new("segment_exact_blocks::block_edges_every_plan");
    let seed = 0xB1 + sample_hash("segment_exact_blocks::seed") % 1000;
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let sim = d.is_simulator();
        let started = std::time::Instant::now();
        let turn = sample_hash(&format!("segment_exact_blocks::{dev}")) as usize;
        for (li, l) in layouts(sim, seed).into_iter().enumerate() {
            let all = l.plans();
            let plans: Vec<Option<SegmentAlgo>> = if sim {
                vec![None, all[1 + (turn + li) % (all.len() - 1)]]
            } else {
                all
            };
            let (xs, inits) = data(&l, seed + li as u64);
            for (pi, algo) in plans.into_iter().enumerate() {
                let init = (li + pi) % 2 == 0;
                let case = format!(
                    "{} {} init {init}",
                    l.name,
                    algo.map_or("auto".into(), |a| a.to_string())
                );
                let key = format!("{} n={} seed {seed} init {init}", l.name, l.n());
                match run_on(q, &l, Ty::F32, (&xs, &inits), (algo, init), &key, &dev) {
                    Ok(()) => t.pass(&dev),
                    Err(Ok(why)) => t.skip(&dev, &case, &why),
                    Err(Err(m)) => t.fail(&dev, &case, &m),
                }
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}
