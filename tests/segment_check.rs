//! CSR offsets checked on the device (`kernels/segment_check.cl`, src/api/segment_check.rs):
//! the device's pass gives the host read's answers (the first and last offsets and the longest
//! segment of valid offsets; the same error, naming the first descent, for offsets that
//! descend; the same error for offsets that end past the range) on every device, over random
//! offsets with empty and long segments, descents at the first, last and other entries, and
//! several descents; and segmented launches over more than `DEVICE_CHECK_MIN` (65536) offsets,
//! which take the device's pass, give the host's results and refuse bad offsets without writing
//! anything.

use crate::common;

use clreduce::{reduction, Error, Kernel, Op, Range, Segments};
use common::rng::Rng;
use common::{queues, short, sim_lock};

/// `r + 1` ascending offsets from `lo`: lengths 0-7 with a quarter empty, and one segment of
/// `long` at a random place.
fn offsets(rng: &mut Rng, r: usize, lo: u64, long: u64) -> Vec<u64> {
    let at = rng.below(r as u64) as usize;
    let mut v = vec![lo];
    for k in 0..r {
        let len = if k == at {
            long
        } else if rng.below(4) == 0 {
            0
        } else {
            rng.below(8)
        };
        v.push(v[k] + len);
    }
    v
}

/// Makes the offsets descend at entry `a + 1` (`v[a + 1] < v[a]`) and nowhere else new.
fn descend_at(v: &mut [u64], a: usize, rng: &mut Rng) {
    if v[a] > 0 {
        v[a + 1] = v[a] - 1 - rng.below(v[a].min(3));
    } else {
        v[a] = v[a + 1] + 1;
    }
}

/// The facts as the host works them out here.
fn facts(off: &[u64]) -> (u64, u64, u64) {
    let longest = off.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    (off[0], off[off.len() - 1], longest)
}

#[test]
fn device_pass_gives_the_host_answers() {
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let mut rng = Rng(0x5E6C ^ d.index() as u64);
        let sizes: &[usize] = if d.is_simulator() {
            &[1, 2, 64, 1000, 4097]
        } else {
            &[1, 2, 64, 1000, 4097, 70_001, 300_000]
        };
        for &r in sizes {
            let long = 8 + rng.below(5000);
            let lo = rng.below(3);
            let off = offsets(&mut rng, r, lo, long);
            let want = facts(&off);
            let b = q.buffer_from(&off).unwrap();
            for n in [want.1, want.1 + 7] {
                for on_device in [false, true] {
                    let got = q.__offset_facts(&b, n, on_device);
                    assert_eq!(got.ok(), Some(want), "{dev}: r {r}, device {on_device}");
                }
            }
            // Past the range.
            let (h, g) = (
                q.__offset_facts(&b, want.1 - 1, false),
                q.__offset_facts(&b, want.1 - 1, true),
            );
            let (h, g) = (h.unwrap_err().to_string(), g.unwrap_err().to_string());
            assert!(h.contains("past the end"), "{dev}: {h}");
            assert_eq!(h, g, "{dev}: r {r}: past the range");
            // Descents: at the first entry, the last, a random one, and two (the first named).
            let mut spots = vec![0, r - 1, rng.below(r as u64) as usize];
            if r > 3 {
                spots.push(usize::MAX);
            }
            for spot in spots {
                let mut bad = off.clone();
                let first = if spot == usize::MAX {
                    let a = rng.below(r as u64 / 2) as usize;
                    let b = a + 2 + rng.below((r - a - 2) as u64) as usize;
                    descend_at(&mut bad, b, &mut rng);
                    descend_at(&mut bad, a, &mut rng);
                    a
                } else {
                    descend_at(&mut bad, spot, &mut rng);
                    spot
                };
                let bb = q.buffer_from(&bad).unwrap();
                let n = *bad.iter().max().unwrap();
                let h = q.__offset_facts(&bb, n, false).unwrap_err();
                let g = q.__offset_facts(&bb, n, true).unwrap_err();
                assert!(matches!(g, Error::BadSegments { .. }), "{dev}: {g}");
                let want = format!("offsets descend at entry {}:", first + 1);
                assert!(
                    h.to_string().contains(&want),
                    "{dev}: r {r}: {h} (want {want})"
                );
                assert_eq!(
                    h.to_string(),
                    g.to_string(),
                    "{dev}: r {r}, descent at {first}"
                );
            }
        }
        // One offset only.
        let one = q.buffer_from(&[0u64]).unwrap();
        let e = q.__offset_facts(&one, 0, true).unwrap_err();
        assert!(e.to_string().contains("r + 1 >= 2"), "{dev}: {e}");
    }
}

/// Launches over 70001 and 200003 segments take the device's check: their sums are the host's,
/// and offsets that descend far in are refused with the results left as they were.
#[test]
fn long_offsets_launch_and_refuse() {
    for q in queues() {
        let d = q.device();
        if d.is_simulator() {
            println!("SKIP {}: launches over 70001 segments on the simulator (the pass itself runs in device_pass_gives_the_host_answers)", short(d));
            continue;
        }
        let dev = short(d);
        let mut rng = Rng(0xC4EC ^ d.index() as u64);
        for r in [70_001usize, 200_003] {
            let long = 1000 + rng.below(100_000);
            let off = offsets(&mut rng, r, 0, long);
            let n = *off.last().unwrap();
            let xs: Vec<i32> = (0..n).map(|_| rng.below(1000) as i32 - 500).collect();
            let x = q.buffer_from(&xs).unwrap();
            let ob = q.buffer_from(&off).unwrap();
            let init: Vec<i32> = (0..r).map(|_| rng.below(100) as i32).collect();
            let out = q.buffer_from(&init).unwrap();
            let k = || Kernel::new("sum += x[i];").arg("x", &x);
            q.parallel_for_reduce(
                Range::new(n),
                reduction(&out, Op::Plus).segments(Segments::offsets(&ob)),
                k(),
            )
            .unwrap()
            .wait()
            .unwrap();
            let got = out.to_vec().unwrap();
            for s in 0..r {
                let (a, b) = (off[s] as usize, off[s + 1] as usize);
                let want = xs[a..b].iter().fold(init[s], |acc, &v| acc.wrapping_add(v));
                assert_eq!(got[s], want, "{dev}: r {r}, segment {s}");
            }
            // A descent far in: refused, nothing written.
            let mut bad = off.clone();
            let at = r / 2 + rng.below(r as u64 / 3) as usize;
            descend_at(&mut bad, at, &mut rng);
            let bb = q.buffer_from(&bad).unwrap();
            let before = out.to_vec().unwrap();
            let e = q
                .parallel_for_reduce(
                    Range::new(n),
                    reduction(&out, Op::Plus).segments(Segments::offsets(&bb)),
                    k(),
                )
                .err()
                .unwrap_or_else(|| panic!("{dev}: r {r}: descending offsets accepted"));
            assert!(matches!(e, Error::BadSegments { .. }), "{dev}: {e}");
            assert_eq!(
                out.to_vec().unwrap(),
                before,
                "{dev}: r {r}: a refused launch wrote"
            );
        }
    }
}
