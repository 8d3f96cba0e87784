//! Developer tool: device time of segmented and axis sums against the plain sum of the same
//! elements, on one device, every segment plan (automatic and forced), every result checked
//! against a float64 host reference (floats) or exactly (integers). `clreduce bench --cases f32-rows-RxC,f32-cols-RxC,
//! f32-ragged-MEAN` now measures the same (with the host check, the plain sum beside it and the
//! torch/cupy peers); this stays as the standalone tool:
//!
//! `cargo run --release --example segment_bench -- DEVICE LOG2N REPS [CASE...]`
//!
//! CASE is `rows-RxC` (R x C row sums, `Axis::Last`), `cols-RxC` (column sums, `Axis::First`)
//! or `ragged-MEAN` (CSR offsets of seeded heavy-tailed lengths of that mean, a quarter of them
//! empty); R or C may be written `2^K`. Without cases: the shapes for 2^LOG2N elements.
//! `SEGBENCH_PLANS=auto,staged,...` limits the plans run per case (default: auto and every
//! plan the case's layout runs); `CLREDUCE_SEGMENT_TUNE` sets their geometry. Each line ends
//! with the bytes read and written (input plus results) per microsecond and the count of wrong
//! results. `SEGBENCH_EXACT=1` runs every plan a second time with `Determinism::Exact` (exact
//! sums per segment, decision 55): its line gives the ratio to the plain sum and to the same
//! plan's deterministic run just before, and checks up to 256 results (spread over all) bit for
//! bit against the host's correctly rounded sum (`bits-off`).
//! `SEGBENCH_TYPE=f32|f64|i32` (default f32) picks the element type (the issue's
//! "f64 and i32 the same in bytes": 2^27 f64 elements are the bytes of 2^28 f32).
use clreduce::check::reference::unit_roundoff;
use clreduce::{
    reduction, Axis, Element, Kernel, Op, Options, Queue, Range, Reduction, SegmentAlgo, Segments,
};

fn parse_num(s: &str) -> u64 {
    match s.split_once('^') {
        Some((b, e)) => b.parse::<u64>().unwrap().pow(e.parse().unwrap()),
        None => s.parse().unwrap(),
    }
}

/// How many results are wrong: floats outside (len + 40)·u·Σ|x| of the float64 sum of their
/// elements, integers unequal to the exact sum (wrapped to the type, as the device adds).
fn wrong<T: Element>(kind: &str, data: &[T], got: &[T], off: &[u64], c: u64, n: u64) -> usize {
    let int = !T::TYPE.is_float();
    let u = if int { 0.0 } else { unit_roundoff(T::TYPE) };
    let out = |k: usize, len: usize, (want, abs): (f64, f64)| {
        if int {
            return got[k].to_f64() != (want as i64) as i32 as f64;
        }
        let bound = (len as f64 + 40.0) * u * abs + 1e-30;
        (got[k].to_f64() - want).abs() > bound
    };
    let add = |(s, a): (f64, f64), v: &T| (s + v.to_f64(), a + v.to_f64().abs());
    if kind == "cols" {
        let mut acc = vec![(0.0f64, 0.0f64); got.len()];
        for row in data[..n as usize].chunks_exact(c as usize) {
            for (a, v) in acc.iter_mut().zip(row) {
                *a = add(*a, v);
            }
        }
        let rows = (n / c) as usize;
        return (0..got.len()).filter(|&k| out(k, rows, acc[k])).count();
    }
    (0..got.len())
        .filter(|&k| {
            let seg = &data[off[k] as usize..off[k + 1] as usize];
            out(k, seg.len(), seg.iter().fold((0.0, 0.0), add))
        })
        .count()
}

/// The CSR lengths' profile (host side, from the generated offsets): segments, empty ones,
/// the longest, and per length class the segments and their share of the elements.
fn profile(case: &str, off: &[u64]) {
    let lens: Vec<u64> = off.windows(2).map(|w| w[1] - w[0]).collect();
    let n: u64 = lens.iter().sum::<u64>().max(1);
    let mut line = format!(
        "{case:<24} profile: {} segments, {} empty, longest {}",
        lens.len(),
        lens.iter().filter(|&&l| l == 0).count(),
        lens.iter().max().copied().unwrap_or(0)
    );
    for (lo, hi) in [
        (1, 16),
        (17, 256),
        (257, 4096),
        (4097, 65536),
        (65537, u64::MAX),
    ] {
        let (mut c, mut e) = (0u64, 0u64);
        for &l in lens.iter().filter(|&&l| l >= lo && l <= hi) {
            c += 1;
            e += l;
        }
        line += &format!(
            "; {lo}..{}: {c} ({:.1}% of elements)",
            if hi == u64::MAX {
                "".into()
            } else {
                hi.to_string()
            },
            100.0 * e as f64 / n as f64
        );
    }
    println!("{line}");
}

/// The plans run on a case of `kind`: automatic, then every forced plan its layout runs
/// (`merge` and `runs` only on CSR offsets), limited to `SEGBENCH_PLANS` where set.
fn plans(kind: &str) -> Vec<Option<SegmentAlgo>> {
    let mut forced: Vec<Option<SegmentAlgo>> = vec![None];
    forced.extend(if kind == "cols" {
        vec![Some(SegmentAlgo::Columns), Some(SegmentAlgo::Stripes)]
    } else {
        vec![
            Some(SegmentAlgo::Item),
            Some(SegmentAlgo::Group),
            Some(SegmentAlgo::Tiles),
            Some(SegmentAlgo::Chunks),
            Some(SegmentAlgo::Staged),
            Some(SegmentAlgo::Lanes),
            Some(SegmentAlgo::Merge),
            Some(SegmentAlgo::Runs),
        ]
    });
    forced
        .retain(|f| kind == "ragged" || !matches!(f, Some(SegmentAlgo::Merge | SegmentAlgo::Runs)));
    if let Ok(only) = std::env::var("SEGBENCH_PLANS") {
        let only: Vec<Option<SegmentAlgo>> = only
            .split(',')
            .map(|s| SegmentAlgo::parse(s).expect("SEGBENCH_PLANS"))
            .collect();
        forced.retain(|f| only.contains(f));
    }
    forced
}

/// Up to 256 results, spread over all, that differ from the host's correctly rounded sum
/// (f32 or f64 elements).
fn bits_off<T: Element>(kind: &str, data: &[T], got: &[T], off: &[u64], c: u64) -> usize {
    let step = got.len().div_ceil(256).max(1);
    (0..got.len())
        .step_by(step)
        .filter(|&k| {
            let seg: Vec<f64> = if kind == "cols" {
                data.iter()
                    .skip(k)
                    .step_by(c as usize)
                    .map(|v| v.to_f64())
                    .collect()
            } else {
                data[off[k] as usize..off[k + 1] as usize]
                    .iter()
                    .map(|v| v.to_f64())
                    .collect()
            };
            let want = if T::TYPE == clreduce::ElemType::F32 {
                let seg: Vec<f32> = seg.iter().map(|&v| v as f32).collect();
                clreduce::exact::sum_f32(&seg) as f64
            } else {
                clreduce::exact::sum_f64(&seg)
            };
            want.to_bits() != got[k].to_f64().to_bits()
        })
        .count()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> clreduce::Result<()> {
    // CLREDUCE_LOG=debug prints the build logs (register counts with
    // CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose on NVIDIA), as the CLI does.
    #[cfg(feature = "cli")]
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("CLREDUCE_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().collect();
    let q = Queue::with_device(args.get(1).map(String::as_str).unwrap_or("0"))?.with_profiling()?;
    let lg: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(24);
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let cases: Vec<String> = if args.len() > 4 {
        args[4..].to_vec()
    } else {
        let mut v = Vec::new();
        for (r, c) in [
            (lg / 2, lg - lg / 2),
            (lg - 8, 8),
            (8, lg - 8),
            (lg - 4, 4),
            (lg - 2, 2),
            (0, lg),
        ] {
            v.push(format!("rows-2^{r}x2^{c}"));
        }
        for (r, c) in [(lg / 2, lg - lg / 2), (lg - 8, 8), (8, lg - 8), (lg - 4, 4)] {
            v.push(format!("cols-2^{r}x2^{c}"));
        }
        v.extend(["ragged-16", "ragged-256", "ragged-65536"].map(String::from));
        v
    };
    match std::env::var("SEGBENCH_TYPE").as_deref().unwrap_or("f32") {
        // Floats: multiples of 1/64 in [-8, 8); integers in [-7, 7], so that no sum of 2^28
        // of them leaves i32.
        "f32" => run(&q, lg, reps, &cases, |i| {
            ((i * 7919) % 1024) as f32 / 64.0 - 8.0
        }),
        "f64" => run(&q, lg, reps, &cases, |i| {
            ((i * 7919) % 1024) as f64 / 64.0 - 8.0
        }),
        "i32" => run(&q, lg, reps, &cases, |i| ((i * 7919) % 15) as i32 - 7),
        t => panic!("SEGBENCH_TYPE {t}: f32, f64 or i32"),
    }
}

/// Every case on `q` with elements of type `T`, element i being `make(i)`.
fn run<T: Element>(
    q: &Queue,
    lg: u32,
    reps: usize,
    cases: &[String],
    make: fn(u64) -> T,
) -> clreduce::Result<()> {
    let n = 1u64 << lg;
    let ty = T::TYPE;
    println!(
        "device: {} ({}), n = 2^{lg} {ty}, median of {reps} after 2 warm-ups",
        q.device().label(),
        q.caps().driver
    );
    let data: Vec<T> = (0..n).map(make).collect();
    let x = q.buffer_from(&data)?;
    let time = |reds: &dyn Fn() -> Reduction,
                range: Range,
                opts: Options|
     -> clreduce::Result<(f64, String)> {
        let mut t = Vec::new();
        let mut plan = String::new();
        for k in 0..reps + 2 {
            let ev = q.parallel_for_reduce_with(
                range,
                reds(),
                Kernel::new("sum += x[i];").arg("x", &x),
                opts,
            )?;
            ev.wait()?;
            if k >= 2 {
                t.push(ev.device_time_ns()? as f64 / 1e3);
            }
            plan = ev
                .plan()
                .map(|p| match &p.segment {
                    Some(s) if s.vec > 1 && s.algo == SegmentAlgo::Runs => format!(
                        "{} ({} x {}, runs of {}, vec {})",
                        s.algo, p.groups, p.local, s.per_item, s.vec
                    ),
                    Some(s) if s.vec > 1 => format!(
                        "{} ({} x {}, vec {}, {} rows per work-item)",
                        s.algo, p.groups, p.local, s.vec, s.unroll
                    ),
                    Some(s) => format!("{} ({} x {})", s.algo, p.groups, p.local),
                    None => p.summary(),
                })
                .unwrap_or_default();
        }
        Ok((median(t), plan))
    };
    let one = q.buffer_from(&[T::default()])?;
    let (plain, plan) = time(
        &|| reduction(&one, Op::Plus).initialize_to_identity(),
        Range::new(n),
        Options::default(),
    )?;
    println!(
        "{:<24} {:<10} {:>10.1} us  1.00x  plan {plan}",
        format!("{ty}-sum"),
        "plain",
        plain
    );
    for case in cases {
        let case = case.as_str();
        let (kind, shape) = case.split_once('-').expect("CASE is KIND-SHAPE");
        let (range, segs, off): (Range, Option<Segments>, Vec<u64>) = match kind {
            "rows" | "cols" => {
                let (r, c) = shape.split_once('x').expect("RxC");
                let (r, c) = (parse_num(r), parse_num(c));
                assert_eq!(r * c, n, "{case}: R x C must be 2^{lg}");
                let off = if kind == "rows" {
                    (0..=r).map(|k| k * c).collect()
                } else {
                    Vec::new()
                };
                (Range::new_2d(r, c), None, off)
            }
            "ragged" => {
                let off = clreduce::check::ragged::ragged_offsets(n, parse_num(shape), 0x5E6);
                profile(case, &off);
                let b = q.buffer_from(&off)?;
                (Range::new(n), Some(Segments::offsets(&b)), off)
            }
            _ => panic!("unknown case kind {kind}"),
        };
        let results = match (kind, range.extents()) {
            ("cols", [_, c]) => *c as usize,
            ("rows", [r, _]) => *r as usize,
            _ => off.len() - 1,
        };
        let out = q.buffer_from(&vec![T::default(); results])?;
        let red = || {
            let r = reduction(&out, Op::Plus).initialize_to_identity();
            match (kind, &segs) {
                ("rows", _) => r.axis(Axis::Last),
                ("cols", _) => r.axis(Axis::First),
                (_, Some(s)) => r.segments(s.clone()),
                _ => unreachable!(),
            }
        };
        let forced = plans(kind);
        let exact = std::env::var("SEGBENCH_EXACT").is_ok_and(|v| v == "1");
        for f in forced {
            let opts = Options {
                segment: f,
                ..Options::default()
            };
            let name = f.map_or("auto".to_string(), |a| a.to_string());
            let mut det_us = None;
            match time(&red, range, opts) {
                Err(e) => println!("{case:<24} {name:<10} error: {e}"),
                Ok((us, plan)) => {
                    det_us = Some(us);
                    let got = out.to_vec()?;
                    let c = range.extents().last().copied().unwrap_or(1);
                    let bad = wrong(kind, &data, &got, &off, c, n);
                    let bytes = ty.size() as u64 * (n + results as u64)
                        + 8 * off.len() as u64 * (kind == "ragged") as u64;
                    println!(
                        "{case:<24} {name:<10} {us:>10.1} us  {:.2}x  plan {plan}  results {results}  {:.0} GB/s in+out  wrong {bad}{}",
                        us / plain,
                        bytes as f64 / us / 1e3,
                        if bad == 0 { "" } else { "  WRONG" }
                    );
                }
            }
            if !exact || !T::TYPE.is_float() {
                continue;
            }
            match time(&red, range, opts.exact()) {
                Err(e) => println!("{case:<24} {name:<10} exact error: {e}"),
                Ok((us, plan)) => {
                    let got = out.to_vec()?;
                    let c = range.extents().last().copied().unwrap_or(1);
                    let off_bits = bits_off(kind, &data, &got, &off, c);
                    println!(
                        "{case:<24} {name:<10} {us:>10.1} us  {:.2}x  exact, {} the same plan's deterministic run  plan {plan}  results {results}  bits-off {off_bits}{}",
                        us / plain,
                        det_us.map_or("-".into(), |d| format!("{:.2}x", us / d)),
                        if off_bits == 0 { "" } else { "  WRONG" }
                    );
                }
            }
        }
    }
    Ok(())
}
