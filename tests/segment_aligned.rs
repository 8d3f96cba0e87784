//! `aligned` (decision 77): chunks of elements aligned to whole segments on CPUs, each segment
//! walked by one work-item, its first elements by masked steps below mean 16, with 4 or 16
//! accumulators above. Forced and automatic, on every device: CSR offsets of heavy-tailed
//! lengths around the masked steps (0, 1, 3, 4, 5, 8, 9), a quarter or more empty, empty
//! segments at the start and at the end (a segment beginning at the range's end), offsets that
//! do not start at 0, every segment empty over a non-empty range, one segment of all n, a long
//! segment among short ones, means 40 and 150 (4 and 16 accumulators), uniform rows of 1, 3,
//! 16, 37 and 128, under a seeded sample of the (op, type) pairs, initial values kept or
//! `initialize_to_identity`, the same bits twice, and the plan's accumulators, work-group size
//! and single pass (tests/segment_stream.rs `run_case`). Integers exactly; floats within
//! (len + 40)·u·Σ|x| + 2u·|ref| of a float64 reference. Fresh seeded inputs per case. Since
//! decision 87 the CPUs run CSR below mean 16 by the scan walk (tests/segment_ascan.rs, which
//! also runs the masked walk on CSR through the CLI with `scan=0`); the masked steps run here on
//! Oclgrind (forced) and on Intel's rows of 1 and 3.

use crate::common;
use crate::segment_stream::{offsets, tally_case, trailing, Shape};

use clreduce::SegmentAlgo;
use common::rng::Rng;
use common::{queues, short, sim_lock, valid_pairs, Tally};

fn shapes(sim: bool, rng: &mut Rng) -> Vec<Shape> {
    let uni = Shape::uniform;
    let csr = Shape::csr;
    let tail = if sim { 24 } else { 3000 };
    let mut v = vec![
        csr(
            trailing(offsets(rng, 0, &[0, 0, 1, 3, 4, 5, 8, 9, 0], tail, 4), 3),
            0,
        ),
        csr(offsets(rng, 5, &[4, 0, 4, 3], tail / 2, 3), 3),
        csr(vec![3, 3, 3, 3], 7),
        csr(vec![0, 997], 0),
        uni(40, 3),
        uni(7, 16),
    ];
    if !sim {
        v.extend([
            csr(offsets(rng, 0, &[0, 2048, 1, 0], 2000, 40), 0),
            csr(trailing(offsets(rng, 11, &[17, 0, 129], 500, 150), 5), 2),
            uni(1000, 1),
            uni(333, 3),
            uni(300, 16),
            uni(50, 37),
            uni(40, 128),
        ]);
    }
    v
}

#[test]
fn aligned_short_segments() {
    let mut t = Tally::new("segment_aligned::aligned_short_segments");
    let pairs = valid_pairs();
    for q in queues() {
        let d = q.device();
        let _g = sim_lock(d);
        let dev = short(d);
        let started = std::time::Instant::now();
        let mut rng = Rng(0xA119 + d.index() as u64);
        let sh = shapes(d.is_simulator(), &mut rng);
        for (ai, algo) in [None, Some(SegmentAlgo::Aligned)].into_iter().enumerate() {
            for (si, s) in sh.iter().enumerate() {
                let pair = pairs[(ai * 7 + si * 5 + rng.below(5) as usize) % pairs.len()];
                let init = (si + ai) % 2 == 1;
                let seed = rng.below(1 << 30);
                tally_case(&mut t, &dev, q, pair, algo, s, init, seed);
            }
        }
        t.time(&dev, started.elapsed().as_secs_f64());
    }
    t.finish();
}
