//! Developer tool (issue 28): device time of exact f32 and f64 sums against the plain sum of the
//! same buffer, every launch interleaved with the others, so that a busy period of a shared
//! machine falls on all of them. `clreduce bench` measures one point after the other, which on
//! this 2-core machine moved ratios by 2-5x between runs (design/exact.md, CPU tables).
//!
//! `cargo run --release --example exact_interleave -- DEVICE [LOG2N,...] [ROUNDS]`
//!
//! DEVICE: an index or a name part, as `Queue::with_device`; LOG2N default `20,22,24`; ROUNDS
//! default 21. The exact variants: `EXACT_VARIANTS`, `;`-separated `CLREDUCE_TUNE` values
//! (`default` for the device's own plan), default `default;spec=0;spec=1,hot=1;spec=1,hot=2`
//! (the device's plan: on CPUs with fp64 the vector form, decision 69; the push loop; the
//! speculative hot loop shared and in lanes). Per type and size: 3
//! warm-up rounds, then ROUNDS rounds that launch the plain sum and every exact variant once
//! each, in an order that rotates every round; medians of device time (profiling events). Each
//! exact result is checked bit for bit against the host's correctly rounded sum
//! (`clreduce::exact`), the plain one within n·u·Σ|x|; a mismatch stops the run. The data:
//! every mantissa bit random in [-1, 1) (f32 rounded from the f64 values), or with
//! `EXACT_DATA=bench` the bench's float input (multiples of 1/64 in [-64, 64)).
use clreduce::plan::Tuning;
use clreduce::{reduction, Buffer, Element, Kernel, Op, Options, Queue, Range};

/// One launch: `sum = x[0] + ... + x[n-1]` under `opts`, its device time in us and the result.
fn launch<T: Element>(
    q: &Queue,
    x: &Buffer<T>,
    s: &Buffer<T>,
    opts: Options,
) -> clreduce::Result<(f64, T)> {
    let ev = q.parallel_for_reduce_with(
        Range::new(x.len() as u64),
        reduction(s, Op::Plus).initialize_to_identity(),
        Kernel::new("sum += x[i];").arg("x", x),
        opts,
    )?;
    let t = ev.device_time_ns()? as f64 / 1e3;
    Ok((t, s.get(0)?))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seeded values (an xorshift), never all zeros: `full` draws every mantissa bit in [-1, 1);
/// otherwise multiples of 1/64 in [-64, 64), the bench's float input (`random_input`), whose
/// sums are exact in a double.
fn data(n: usize, seed: u64, full: bool) -> Vec<f64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if full {
                (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
            } else {
                ((s >> 40) % 8192) as f64 / 64.0 - 64.0
            }
        })
        .collect()
}

/// Medians of the plain sum (index 0) and of every exact variant over `host`, whose correctly
/// rounded sum is `want`.
fn medians<T: Element + Default + std::fmt::Debug>(
    q: &Queue,
    host: &[T],
    want: T,
    variants: &[(String, Options)],
    rounds: usize,
) -> clreduce::Result<Vec<f64>> {
    let x = q.buffer_from(host)?;
    let s = q.buffer_from(&[T::default()])?;
    let abs: f64 = host.iter().map(|v| v.to_f64().abs()).sum();
    let u = clreduce::check::reference::unit_roundoff(T::TYPE);
    let k = variants.len() + 1;
    let mut times = vec![Vec::new(); k];
    for round in 0..rounds + 3 {
        for j in 0..k {
            let v = (round + j) % k;
            let opts = if v == 0 {
                Options::default()
            } else {
                variants[v - 1].1
            };
            let (t, got) = launch(q, &x, &s, opts)?;
            if v == 0 {
                let err = (got.to_f64() - want.to_f64()).abs();
                assert!(
                    err <= host.len() as f64 * u * abs,
                    "plain sum {got:?} against {want:?}"
                );
            } else {
                assert_eq!(
                    got.to_f64().to_bits(),
                    want.to_f64().to_bits(),
                    "exact sum under [{}]",
                    variants[v - 1].0
                );
            }
            if round >= 3 {
                times[v].push(t);
            }
        }
    }
    Ok(times.into_iter().map(median).collect())
}

fn main() -> clreduce::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let q = Queue::with_device(args.get(1).map(String::as_str).unwrap_or("0"))?.with_profiling()?;
    let sizes: Vec<u32> = args
        .get(2)
        .map_or("20,22,24", String::as_str)
        .split(',')
        .map(|s| s.parse().expect("LOG2N"))
        .collect();
    let rounds: usize = args.get(3).map_or(21, |s| s.parse().expect("ROUNDS"));
    let spec = std::env::var("EXACT_VARIANTS")
        .unwrap_or_else(|_| "default;spec=0;spec=1,hot=1;spec=1,hot=2".into());
    let full = std::env::var("EXACT_DATA").map_or(true, |v| v != "bench");
    let mut variants = Vec::new();
    for v in spec.split(';') {
        let mut o = Options::default().exact();
        if v != "default" {
            o.tuning = Some(Tuning::parse(v)?);
        }
        variants.push((v.to_string(), o));
    }
    let driver = q.device().caps()?.driver;
    println!(
        "device: {} (driver {driver}), {rounds} interleaved rounds, device time medians in us",
        q.device().label()
    );
    println!(
        "data: {}",
        if full {
            "random mantissas in [-1, 1)"
        } else {
            "multiples of 1/64 in [-64, 64) (the bench's)"
        }
    );
    println!("type  log2n   plain us  | exact variant: us (x plain) ...");
    for &l in &sizes {
        let vals = data(1 << l, 0x5eed ^ l as u64, full);
        let f32s: Vec<f32> = vals.iter().map(|&v| v as f32).collect();
        let m32 = medians(
            &q,
            &f32s,
            clreduce::exact::sum_f32(&f32s),
            &variants,
            rounds,
        )?;
        let m64 = medians(
            &q,
            &vals,
            clreduce::exact::sum_f64(&vals),
            &variants,
            rounds,
        )?;
        for (ty, m) in [("f32", m32), ("f64", m64)] {
            let cells: Vec<String> = variants
                .iter()
                .zip(&m[1..])
                .map(|((name, _), t)| format!("[{name}] {t:.1} ({:.2}x)", t / m[0]))
                .collect();
            println!("{ty}   2^{l:<3} {:9.1}  | {}", m[0], cells.join("  "));
        }
    }
    Ok(())
}
