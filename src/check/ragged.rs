//! Seeded segment layouts for segmented reductions (issue 26): the inputs the CLI and the
//! segment bench share.

/// CSR offsets of seeded heavy-tailed (log-normal, sigma 1.5) segment lengths of mean `mean`
/// over exactly `n` elements, a quarter of the segments empty: `r + 1` ascending entries from 0
/// to `n`. The ragged shapes of `clreduce reduce --ragged` and `examples/segment_bench.rs`.
pub fn ragged_offsets(n: u64, mean: u64, seed: u64) -> Vec<u64> {
    let mut s = seed;
    let mut unif = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut off = vec![0u64];
    let mut at = 0u64;
    while at < n {
        let len = if unif() < 0.25 {
            0
        } else {
            let z = (-2.0 * unif().ln()).sqrt() * (2.0 * std::f64::consts::PI * unif()).cos();
            let sigma = 1.5f64;
            ((mean as f64 * 4.0 / 3.0) * (sigma * z - sigma * sigma / 2.0).exp()).round() as u64
        };
        at = (at + len).min(n);
        off.push(at);
    }
    off
}
