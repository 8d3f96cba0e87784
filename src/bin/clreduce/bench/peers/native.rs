//! The native peer of `clreduce bench` on CPU devices: a multi-threaded Rust reduction of each
//! case with rayon (8 independent accumulators per chunk in the element type; per-thread
//! histograms for a span; block minima for argmin), timed right after each repetition of the
//! auto plan.

use clreduce::cases::{Case, Shape};
use clreduce::exact::{accumulate_f32, accumulate_f64, Superacc};
use clreduce::{HostVec, Op};
use rayon::prelude::*;

/// `f` over a chunk with 8 independent accumulators.
#[inline(always)]
fn chunk8<T: Copy>(c: &[T], id: T, f: impl Fn(T, T) -> T + Copy) -> T {
    let mut a = [id; 8];
    let mut it = c.chunks_exact(8);
    for ch in &mut it {
        for k in 0..8 {
            a[k] = f(a[k], ch[k]);
        }
    }
    let mut s = id;
    for x in a {
        s = f(s, x);
    }
    for &x in it.remainder() {
        s = f(s, x);
    }
    s
}

/// The chunk each rayon job reduces: about 4 per thread, at least 2^14 elements.
fn par_chunk(n: usize) -> usize {
    (n / (rayon::current_num_threads() * 4)).max(1 << 14)
}

/// `f` over `v` in parallel chunks, 8 accumulators each.
fn par8<T: Copy + Send + Sync>(v: &[T], id: T, f: impl Fn(T, T) -> T + Copy + Send + Sync) -> T {
    v.par_chunks(par_chunk(v.len()))
        .map(|c| chunk8(c, id, f))
        .reduce(|| id, f)
}

/// Sum, minimum and maximum of a chunk with 8 independent accumulators each.
fn sum_min_max8(c: &[f32]) -> (f32, f32, f32) {
    let mut s = [0f32; 8];
    let mut lo = [f32::INFINITY; 8];
    let mut hi = [f32::NEG_INFINITY; 8];
    let mut it = c.chunks_exact(8);
    for ch in &mut it {
        for k in 0..8 {
            s[k] += ch[k];
            lo[k] = lo[k].min(ch[k]);
            hi[k] = hi[k].max(ch[k]);
        }
    }
    let (mut a, mut b, mut d) = (s.iter().sum::<f32>(), f32::INFINITY, f32::NEG_INFINITY);
    for k in 0..8 {
        b = b.min(lo[k]);
        d = d.max(hi[k]);
    }
    for &x in it.remainder() {
        a += x;
        b = b.min(x);
        d = d.max(x);
    }
    (a, b, d)
}

/// Histogram of `x & (len - 1)` (len a power of two): per rayon job (about one per thread) a
/// private histogram, then merged. Up to 4096 bins it is kept as 4 interleaved copies, so that
/// runs of equal bins do not serialize on one counter; larger ones have a single copy.
fn native_hist(v: &[u32], len: usize) -> Vec<u32> {
    let mask = len - 1;
    let copies = if len <= 4096 { 4 } else { 1 };
    let merge = |mut a: Vec<u32>, b: Vec<u32>| {
        for (x, y) in a.iter_mut().zip(&b) {
            *x = x.wrapping_add(*y);
        }
        a
    };
    let all = v
        .par_chunks(par_chunk(v.len()))
        .fold(
            || vec![0u32; copies * len],
            |mut h, c| {
                if copies == 4 {
                    let (h0, rest) = h.split_at_mut(len);
                    let (h1, rest) = rest.split_at_mut(len);
                    let (h2, h3) = rest.split_at_mut(len);
                    let mut it = c.chunks_exact(4);
                    for q in &mut it {
                        h0[q[0] as usize & mask] += 1;
                        h1[q[1] as usize & mask] += 1;
                        h2[q[2] as usize & mask] += 1;
                        h3[q[3] as usize & mask] += 1;
                    }
                    for &x in it.remainder() {
                        h0[x as usize & mask] += 1;
                    }
                } else {
                    for &x in c {
                        h[x as usize & mask] += 1;
                    }
                }
                h
            },
        )
        .reduce(|| vec![0u32; copies * len], merge);
    all.chunks_exact(len)
        .fold(vec![0u32; len], |a, b| merge(a, b.to_vec()))
}

/// Block size of the native argmin: the block's minimum is found with 8 independent
/// accumulators (vectorizable), and only a block that beats the best so far is searched for
/// its first index.
const ARGMIN_BLOCK: usize = 4096;

/// The smallest value and the lowest index holding it (`None` for no input); ties between
/// chunks go to the lower index.
fn native_argmin(v: &[f32]) -> Option<(f32, usize)> {
    let chunk = par_chunk(v.len()).div_ceil(ARGMIN_BLOCK) * ARGMIN_BLOCK;
    v.par_chunks(chunk)
        .enumerate()
        .map(|(k, c)| {
            let mut best: Option<(f32, usize)> = None;
            for (b, blk) in c.chunks(ARGMIN_BLOCK).enumerate() {
                let m = chunk8(blk, f32::INFINITY, f32::min);
                if best.is_none_or(|(bv, _)| m < bv) {
                    if let Some(j) = blk.iter().position(|&x| x == m) {
                        best = Some((m, k * chunk + b * ARGMIN_BLOCK + j));
                    }
                }
            }
            best
        })
        .reduce(
            || None,
            |a, b| match (a, b) {
                (Some(x), Some(y)) => Some(if y.0 < x.0 || (y.0 == x.0 && y.1 < x.1) {
                    y
                } else {
                    x
                }),
                (x, None) => x,
                (None, y) => y,
            },
        )
}

/// The native multi-threaded Rust reduction of `case` over `data` (rayon; 8 independent
/// accumulators per chunk in the element type; per-thread histograms for a span; block minima
/// for argmin), or None where there is none for the case. The number returned only keeps the
/// work from being optimized away.
pub fn native(case: &Case, data: &HostVec) -> Option<f64> {
    if case.layout.is_segmented() {
        return None;
    }
    let ops: Vec<Op> = case.vars.iter().map(|v| v.0).collect();
    Some(match (case.shape, data, ops.as_slice()) {
        (Shape::Span(len), HostVec::U32(v), _) => native_hist(v, len)[0] as f64,
        (Shape::ArgMin, HostVec::F32(v), _) => native_argmin(v).map_or(-1.0, |(_, i)| i as f64),
        (Shape::Span(_) | Shape::ArgMin, _, _) => return None,
        // An exact case's peer is the host's exact sum on every core (superaccumulators per
        // chunk, merged exactly, rounded once).
        (_, HostVec::F32(v), [Op::Plus]) if case.exact => {
            par_exact(v, accumulate_f32, |a| a.round_f32() as f64)
        }
        (_, HostVec::F64(v), [Op::Plus]) if case.exact => {
            par_exact(v, accumulate_f64, |a| a.round_f64())
        }
        (_, HostVec::F32(v), [Op::Plus]) => par8(v, 0f32, |a, b| a + b) as f64,
        (_, HostVec::F64(v), [Op::Plus]) => par8(v, 0f64, |a, b| a + b),
        (_, HostVec::I32(v), [Op::Plus]) => par8(v, 0i32, |a, b| a.wrapping_add(b)) as f64,
        (_, HostVec::I64(v), [Op::Plus]) => par8(v, 0i64, |a, b| a.wrapping_add(b)) as f64,
        (_, HostVec::F32(v), [Op::Maximum]) => par8(v, f32::NEG_INFINITY, f32::max) as f64,
        (_, HostVec::F32(v), [Op::Minimum]) => par8(v, f32::INFINITY, f32::min) as f64,
        (_, HostVec::F64(v), [Op::Maximum]) => par8(v, f64::NEG_INFINITY, f64::max),
        (_, HostVec::F64(v), [Op::Minimum]) => par8(v, f64::INFINITY, f64::min),
        (_, HostVec::F32(v), [Op::Plus, Op::Minimum, Op::Maximum]) => {
            let (s, _, _) = v.par_chunks(par_chunk(v.len())).map(sum_min_max8).reduce(
                || (0.0, f32::INFINITY, f32::NEG_INFINITY),
                |x, y| (x.0 + y.0, x.1.min(y.1), x.2.max(y.2)),
            );
            s as f64
        }
        _ => return None,
    })
}

/// The correctly rounded sum of `v` on every core: one superaccumulator per chunk, merged.
fn par_exact<T: Sync>(v: &[T], acc: fn(&[T]) -> Superacc, round: fn(&Superacc) -> f64) -> f64 {
    let total = v
        .par_chunks(par_chunk(v.len()).max(1))
        .map(acc)
        .reduce_with(|mut a, b| {
            a.merge(&b).expect("chunks of one type share a format");
            a
        });
    total.map_or(0.0, |a| round(&a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clreduce::cases::Expected;
    use clreduce::check::reference;
    use clreduce::{ElemType, Value};

    #[test]
    fn native_hist_and_argmin_match_the_host() {
        for n in [0usize, 5, 4099, 300_001] {
            for bins in [1usize, 256, 65536] {
                let case = Case::parse(&format!("u32-hist{bins}")).unwrap();
                let data = reference::random_input(case.data_op, case.ty, n, 5);
                let [Expected::Span(want)] = &case.expect(&data)[..] else {
                    panic!("span")
                };
                let want: Vec<u32> = want.iter().map(|r| r.exact.unwrap() as u32).collect();
                let HostVec::U32(v) = &data else {
                    panic!("u32")
                };
                assert_eq!(native_hist(v, bins), want, "n {n} bins {bins}");
                assert_eq!(want.iter().map(|&c| c as usize).sum::<usize>(), n);
            }
            let case = Case::parse("f32-argmin").unwrap();
            let data = reference::random_input(case.data_op, case.ty, n, 5);
            let [Expected::Arg(w)] = &case.expect(&data)[..] else {
                panic!("argmin")
            };
            let HostVec::F32(x) = &data else {
                panic!("f32")
            };
            let got = native_argmin(x);
            let want = (w.index != u64::MAX).then_some(w.value);
            assert_eq!(got.map(|(v, _)| Value::F32(v)), want, "n {n}");
            assert_eq!(got.map_or(u64::MAX, |(_, i)| i as u64), w.index, "n {n}");
        }
        // Ties across blocks and chunks: the lowest index wins.
        let mut x = vec![1.0f32; 1 << 20];
        for i in [900_000, 70_000, 5000, 4097] {
            x[i] = -3.0;
        }
        assert_eq!(native_argmin(&x), Some((-3.0, 4097)));
    }

    #[test]
    fn native_matches_reference() {
        let data = reference::random_input(Op::Plus, ElemType::F64, 100_003, 3);
        let case = Case::parse("f64-sum").unwrap();
        let r = reference::reference(Op::Plus, &data, None);
        assert!((native(&case, &data).unwrap() - r.value).abs() < 1e-6 * r.sum_abs);
        let data = reference::random_input(Op::Plus, ElemType::I32, 100_003, 3);
        let case = Case::parse("i32-sum").unwrap();
        let r = reference::reference(Op::Plus, &data, None);
        assert_eq!(native(&case, &data).unwrap() as i128, r.exact.unwrap());
    }
}
