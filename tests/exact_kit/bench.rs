//! The fast path's cost, measured (ignored by default; `cargo test --release --test exact_kit --
//! --ignored bench --nocapture`): device time of a plain grid-stride sum (4 accumulators per
//! work-item), of the same loop through the kit's expansions (residues and flushes into a local
//! sacc with atomics), and of clreduce's own fast sum, on uniform data (the common case) and on
//! exponents spread over the whole range (the adversarial case). Every exact result is checked
//! bit for bit against the host. Environment: EXACT_KIT_BENCH_LOG2N (default 24),
//! EXACT_KIT_BENCH_GPB (work-groups per compute unit, default 8 on GPUs, 2 on CPUs),
//! EXACT_KIT_BENCH_OUT (a file the result lines are appended to).

use super::*;
use clreduce::{reduction, Kernel as ClrKernel, Op, Queue, Range};

const BENCH_CL: &str = r#"
#define UNROLL_LOOP(STEP)                                                       \
    ulong i = get_global_id(0);                                                 \
    const ulong st = get_global_size(0);                                        \
    for (; i + 3 * st < n; i += 4 * st) { STEP(0, i) STEP(1, i + st) STEP(2, i + 2 * st) STEP(3, i + 3 * st) } \
    for (; i < n; i += st) { STEP(0, i) }

#define ACC_INIT(L)                                                             \
    __local long acc[L];                                                        \
    for (uint j = get_local_id(0); j < L; j += WG) acc[j] = 0;                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                               \
    volatile __local long* A = acc;

// The work-group step a reduction kernel would use: the item's four expansions merged, a
// local-memory tree of merges (residues into the local sacc), one flush by item 0.
#define TREE_EPILOGUE(E, MERGE, FLUSH, L)                                       \
    e0 = MERGE(e0, e1, A);                                                      \
    e2 = MERGE(e2, e3, A);                                                      \
    e0 = MERGE(e0, e2, A);                                                      \
    __local E le[WG];                                                           \
    const uint lid = get_local_id(0);                                           \
    le[lid] = e0;                                                               \
    barrier(CLK_LOCAL_MEM_FENCE);                                               \
    for (uint s = WG / 2; s > 0; s >>= 1) {                                     \
        if (lid < s) le[lid] = MERGE(le[lid], le[lid + s], A);                  \
        barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                           \
    if (lid == 0) FLUSH(le[0], A);                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                               \
    for (uint j = lid; j < L; j += WG) out[get_group_id(0) * L + j] = acc[j];

// The speculative loop: chunks of up to CHI unrolled iterations through clr_x_try_*, again
// through clr_x_push_* when flagged, a renormalization per chunk; the tail through push.
#define SPEC_LOOP(E, TRY, PUSH, RENORM)                                          \
    ulong i = get_global_id(0);                                                 \
    const ulong st = get_global_size(0);                                        \
    while (i + 3 * st < n) {                                                    \
        const ulong i0 = i;                                                     \
        E s0 = e0, s1 = e1, s2 = e2, s3 = e3;                                   \
        uint bad = 0;                                                           \
        for (uint c = 0; c < CHI && i + 3 * st < n; ++c, i += 4 * st) {         \
            e0 = TRY(e0, x[i], &bad);                                           \
            e1 = TRY(e1, x[i + st], &bad);                                      \
            e2 = TRY(e2, x[i + 2 * st], &bad);                                  \
            e3 = TRY(e3, x[i + 3 * st], &bad);                                  \
        }                                                                       \
        if (bad) {                                                              \
            e0 = s0; e1 = s1; e2 = s2; e3 = s3;                                 \
            for (ulong j = i0; j < i; j += 4 * st) {                            \
                e0 = PUSH(e0, x[j], A);                                         \
                e1 = PUSH(e1, x[j + st], A);                                    \
                e2 = PUSH(e2, x[j + 2 * st], A);                                \
                e3 = PUSH(e3, x[j + 3 * st], A);                                \
            }                                                                   \
        }                                                                       \
        e0 = RENORM(e0); e1 = RENORM(e1); e2 = RENORM(e2); e3 = RENORM(e3);     \
    }                                                                           \
    for (; i < n; i += st) e0 = PUSH(e0, x[i], A);

#ifndef CHI
#define CHI 16u
#endif

#define PLAIN_STEP(k, j) a##k += x[j];
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_plain_f32(__global const float* x, ulong n, __global float* out) {
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    UNROLL_LOOP(PLAIN_STEP)
    out[get_global_id(0)] = (a0 + a1) + (a2 + a3);
}

#define F32F_STEP(k, j) e##k = clr_x_push_f32f_la_32(e##k, x[j], A);
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_exact_f32f(__global const uint* x, ulong n, __global long* out) {
    ACC_INIT(CLR_X32_L)
    clr_x_e3f e0 = clr_x_e3f_zero(), e1 = e0, e2 = e0, e3 = e0;
    UNROLL_LOOP(F32F_STEP)
    TREE_EPILOGUE(clr_x_e3f, clr_x_merge_e3f_la_32, clr_x_flush_e3f_la_32, CLR_X32_L)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_spec_f32f(__global const uint* x, ulong n, __global long* out) {
    ACC_INIT(CLR_X32_L)
    clr_x_e3f e0 = clr_x_e3f_zero(), e1 = e0, e2 = e0, e3 = e0;
    SPEC_LOOP(clr_x_e3f, clr_x_try_f32f, clr_x_push_f32f_la_32, clr_x_renorm_e3f)
    TREE_EPILOGUE(clr_x_e3f, clr_x_merge_e3f_la_32, clr_x_flush_e3f_la_32, CLR_X32_L)
}

// The fast path alone (no redo, no epilogue): its arithmetic cost.
#define TRY_STEP_F(k, j) e##k = clr_x_try_f32f(e##k, x[j], &bad);
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_try_f32f(__global const uint* x, ulong n, __global long* out) {
    uint bad = 0;
    clr_x_e3f e0 = clr_x_e3f_zero(), e1 = e0, e2 = e0, e3 = e0;
    UNROLL_LOOP(TRY_STEP_F)
    ((__global float*)out)[get_global_id(0)] = e0.s + e1.s + e2.s + e3.s + e0.c + e1.c + e2.c + e3.c + e0.d + (float)bad;
}

#if CLR_X_FP64
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_plain_f64(__global const double* x, ulong n, __global double* out) {
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    UNROLL_LOOP(PLAIN_STEP)
    out[get_global_id(0)] = (a0 + a1) + (a2 + a3);
}

#define F32D_STEP(k, j) e##k = clr_x_push_f32d_la_32(e##k, x[j], A);
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_exact_f32d(__global const uint* x, ulong n, __global long* out) {
    ACC_INIT(CLR_X32_L)
    clr_x_e2d e0 = clr_x_e2d_zero(), e1 = e0, e2 = e0, e3 = e0;
    UNROLL_LOOP(F32D_STEP)
    TREE_EPILOGUE(clr_x_e2d, clr_x_merge_e2d_la_32, clr_x_flush_e2d_la_32, CLR_X32_L)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_spec_f32d(__global const uint* x, ulong n, __global long* out) {
    ACC_INIT(CLR_X32_L)
    clr_x_e2d e0 = clr_x_e2d_zero(), e1 = e0, e2 = e0, e3 = e0;
    SPEC_LOOP(clr_x_e2d, clr_x_try_f32d, clr_x_push_f32d_la_32, clr_x_renorm_e2d)
    TREE_EPILOGUE(clr_x_e2d, clr_x_merge_e2d_la_32, clr_x_flush_e2d_la_32, CLR_X32_L)
}

#define TRY_STEP_D(k, j) e##k = clr_x_try_f32d(e##k, x[j], &bad);
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_try_f32d(__global const uint* x, ulong n, __global long* out) {
    uint bad = 0;
    clr_x_e2d e0 = clr_x_e2d_zero(), e1 = e0, e2 = e0, e3 = e0;
    UNROLL_LOOP(TRY_STEP_D)
    ((__global double*)out)[get_global_id(0)] = e0.s + e1.s + e2.s + e3.s + e0.c + e1.c + e2.c + e3.c + (double)bad;
}

#define F64D_STEP(k, j) e##k = clr_x_push_f64d_la_64(e##k, x[j], A);
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_exact_f64d(__global const double* x, ulong n, __global long* out) {
    ACC_INIT(CLR_X64_L)
    clr_x_e2d e0 = clr_x_e2d_zero(), e1 = e0, e2 = e0, e3 = e0;
    UNROLL_LOOP(F64D_STEP)
    TREE_EPILOGUE(clr_x_e2d, clr_x_merge_e2d_la_64, clr_x_flush_e2d_la_64, CLR_X64_L)
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_spec_f64d(__global const double* x, ulong n, __global long* out) {
    ACC_INIT(CLR_X64_L)
    clr_x_e2d e0 = clr_x_e2d_zero(), e1 = e0, e2 = e0, e3 = e0;
    SPEC_LOOP(clr_x_e2d, clr_x_try_f64d, clr_x_push_f64d_la_64, clr_x_renorm_e2d)
    TREE_EPILOGUE(clr_x_e2d, clr_x_merge_e2d_la_64, clr_x_flush_e2d_la_64, CLR_X64_L)
}

// Blocks of BLK unrolled iterations (4 * BLK elements) pre-summed in a double, one cascade per
// block, chunks of CHI iterations, one expansion per work-item. (H200, 2^28: BLK 1 388 us, BLK
// 2 445 us, BLK 4 462 us; four lanes of blocks with four expansions were slower, 495-820 us.)
#ifndef BLK
#define BLK 1u
#endif
#define BLK_LB (BLK == 1u ? 2u : BLK == 2u ? 3u : 4u)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_blk_f32d(__global const uint* x, ulong n, __global long* out) {
    ACC_INIT(CLR_X32_L)
    clr_x_e2d e0 = clr_x_e2d_zero(), e1 = e0, e2 = e0, e3 = e0;
    ulong i = get_global_id(0);
    const ulong st = get_global_size(0);
    while (i + (4 * BLK - 1) * st < n) {
        const ulong i0 = i;
        clr_x_e2d s0 = e0;
        uint bad = 0;
        for (uint c = 0; c < CHI && i + (4 * BLK - 1) * st < n; c += BLK) {
            double d = 0.0;
            uint emax = 0, emin = 255u;
            for (uint b = 0; b < BLK; ++b, i += 4 * st) {
                d = clr_x_blk_add(d, x[i], &emax, &emin, &bad);
                d = clr_x_blk_add(d, x[i + st], &emax, &emin, &bad);
                d = clr_x_blk_add(d, x[i + 2 * st], &emax, &emin, &bad);
                d = clr_x_blk_add(d, x[i + 3 * st], &emax, &emin, &bad);
            }
            e0 = clr_x_try_blk_f32d(e0, d, emax, emin, BLK_LB, &bad);
        }
        if (bad) {
            e0 = s0;
            for (ulong j = i0; j < i; j += st) e0 = clr_x_push_f32d_la_32(e0, x[j], A);
        }
        e0 = clr_x_renorm_e2d(e0);
    }
    for (; i < n; i += st) e0 = clr_x_push_f32d_la_32(e0, x[i], A);
    TREE_EPILOGUE(clr_x_e2d, clr_x_merge_e2d_la_32, clr_x_flush_e2d_la_32, CLR_X32_L)
}

#define TRY_STEP_64(k, j) e##k = clr_x_try_f64d(e##k, x[j], &bad);
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void b_try_f64d(__global const double* x, ulong n, __global long* out) {
    uint bad = 0;
    clr_x_e2d e0 = clr_x_e2d_zero(), e1 = e0, e2 = e0, e3 = e0;
    UNROLL_LOOP(TRY_STEP_64)
    ((__global double*)out)[get_global_id(0)] = e0.s + e1.s + e2.s + e3.s + e0.c + e1.c + e2.c + e3.c + (double)bad;
}
#endif
"#;

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Min and median of `reps` timed runs (after one warm-up) of `run` (device ns).
fn time(reps: usize, mut run: impl FnMut() -> u64) -> (f64, f64) {
    run();
    let mut t: Vec<u64> = (0..reps).map(|_| run()).collect();
    t.sort_unstable();
    (t[0] as f64 / 1e3, t[reps / 2] as f64 / 1e3)
}

struct Report {
    lines: Vec<String>,
}

impl Report {
    fn line(&mut self, s: String) {
        eprintln!("{s}");
        self.lines.push(s);
    }
}

#[test]
#[ignore = "benchmark: run with --ignored bench"]
fn bench_fast_path() {
    let _g = lock();
    let log2n = env_usize("EXACT_KIT_BENCH_LOG2N").unwrap_or(24);
    let n = 1usize << log2n;
    let mut rep = Report { lines: Vec::new() };
    for dev in devices() {
        if dev.sim || !dev.i64a {
            eprintln!("SKIP {} bench: simulator or no 64-bit atomics", dev.label);
            continue;
        }
        let caps = dev.cr.caps().expect("caps");
        let gpu = caps.kind == clreduce::caps::DeviceKind::Gpu;
        let wg = if gpu { 256 } else { 64 };
        let gpb = env_usize("EXACT_KIT_BENCH_GPB").unwrap_or(if gpu { 8 } else { 2 });
        let groups = caps.compute_units as usize * gpb;
        let cvt = std::env::var_os("EXACT_KIT_BENCH_CVT_HW").is_some();
        let mut src = bench_head(&dev, wg, cvt);
        src += BENCH_CL;
        let p = build_source(&dev, &src, wg);
        let q = Queue::new(&dev.cr)
            .and_then(|q| q.with_profiling())
            .expect("clreduce queue");
        let reps = if gpu { 9 } else { 3 };
        let tag = format!("{} n=2^{log2n} groups={groups} wg={wg}", dev.label);
        for pat in [Pattern::Random, Pattern::Spread] {
            let x32 = f32s(pat, n, 5);
            let xb = buf(&dev, &x32);
            let outf = buf(&dev, &vec![0f32; groups * wg]);
            let global = groups * wg;
            let plain = time(reps, || {
                launch(&dev, &p, "b_plain_f32", global, Some(wg), |k| unsafe {
                    k.set_arg(&xb).set_arg(&(n as cl_ulong)).set_arg(&outf);
                })
            });
            let clr = {
                let xq = q.buffer_from(&x32).expect("buffer");
                let sum = q.buffer_from(&[0f32]).expect("buffer");
                time(reps, || {
                    let ev = q
                        .parallel_for_reduce(
                            Range::new(n as u64),
                            reduction(&sum, Op::Plus),
                            ClrKernel::new("sum += x[i];").arg("x", &xq),
                        )
                        .expect("clreduce sum");
                    ev.device_time_ns().expect("device time")
                })
            };
            let want = exact::sum_f32(&x32).to_bits();
            let mut kinds = vec!["b_try_f32f", "b_exact_f32f", "b_spec_f32f"];
            if dev.fp64 {
                kinds.extend(["b_try_f32d", "b_exact_f32d", "b_spec_f32d", "b_blk_f32d"]);
            }
            rep.line(format!("BENCH {tag} {} f32 plain: min {:.1} us median {:.1} us ({:.0} GB/s); clreduce sum: min {:.1} us", pat.name(), plain.0, plain.1, (n * 4) as f64 / plain.0 / 1e3, clr.0));
            let xbits = buf(&dev, &bits32(&x32));
            for kname in kinds {
                let label = format!("{tag} {}", pat.name());
                let geo = (global, wg, reps);
                run_case(
                    &dev,
                    &p,
                    kname,
                    geo,
                    (&xbits, n),
                    (Format::F32, want as u64),
                    (plain.0, clr.0),
                    &label,
                    &mut rep,
                );
            }
            if dev.fp64 {
                bench_f64(&dev, &p, &q, (&tag, pat, n, groups, wg, reps), &mut rep);
            }
        }
    }
    if let Some(path) = std::env::var_os("EXACT_KIT_BENCH_OUT") {
        let mut text = rep.lines.join("\n");
        text.push('\n');
        let _ = std::fs::write(path, text);
    }
}

fn bench_f64(
    dev: &Dev,
    p: &Program,
    q: &Queue,
    (tag, pat, n, groups, wg, reps): (&str, Pattern, usize, usize, usize, usize),
    rep: &mut Report,
) {
    let x = f64s(pat, n, 6);
    let xb = buf(dev, &x);
    let outf = buf(dev, &vec![0f64; groups * wg]);
    let global = groups * wg;
    let plain = time(reps, || {
        launch(dev, p, "b_plain_f64", global, Some(wg), |k| unsafe {
            k.set_arg(&xb).set_arg(&(n as cl_ulong)).set_arg(&outf);
        })
    });
    let clr = {
        let xq = q.buffer_from(&x).expect("buffer");
        let sum = q.buffer_from(&[0f64]).expect("buffer");
        time(reps, || {
            let ev = q
                .parallel_for_reduce(
                    Range::new(n as u64),
                    reduction(&sum, Op::Plus),
                    ClrKernel::new("sum += x[i];").arg("x", &xq),
                )
                .expect("clreduce sum");
            ev.device_time_ns().expect("device time")
        })
    };
    let want = exact::sum_f64(&x).to_bits();
    rep.line(format!(
        "BENCH {tag} {} f64 plain: min {:.1} us median {:.1} us ({:.0} GB/s); clreduce sum: min {:.1} us",
        pat.name(),
        plain.0,
        plain.1,
        (n * 8) as f64 / plain.0 / 1e3,
        clr.0
    ));
    for kname in ["b_try_f64d", "b_exact_f64d", "b_spec_f64d"] {
        let label = format!("{tag} {}", pat.name());
        run_case(
            dev,
            p,
            kname,
            (global, wg, reps),
            (&xb, n),
            (Format::F64, want),
            (plain.0, clr.0),
            &label,
            rep,
        );
    }
}

/// Times kernel `kname` over `x`; an exact kernel's rows are merged, rounded and compared with
/// the host's bits `want`, a b_try_* kernel (the fast path alone) is timed only.
#[allow(clippy::too_many_arguments)]
fn run_case<T>(
    dev: &Dev,
    p: &Program,
    kname: &str,
    (global, wg, reps): (usize, usize, usize),
    (xb, n): (&Buffer<T>, usize),
    (f, want): (Format, u64),
    (plain, clr): (f64, f64),
    label: &str,
    rep: &mut Report,
) {
    let groups = global / wg;
    let rows = groups * f.limbs();
    let out = buf(dev, &vec![0i64; rows.max(global)]);
    let t = time(reps, || {
        launch(dev, p, kname, global, Some(wg), |k| unsafe {
            k.set_arg(xb).set_arg(&(n as cl_ulong)).set_arg(&out);
        })
    });
    let head = format!(
        "BENCH {label} {kname}: min {:.1} us median {:.1} us = {:.2}x plain, {:.2}x clreduce sum",
        t.0,
        t.1,
        t.0 / plain,
        t.0 / clr
    );
    if kname.starts_with("b_try_") {
        rep.line(format!(
            "{head} (fast path alone: no redo, no epilogue, no result)"
        ));
        return;
    }
    let acc = merge_rows(f, &read(dev, &out, rows));
    let got = match f {
        Format::F32 => acc.round_f32().to_bits() as u64,
        Format::F64 => acc.round_f64().to_bits(),
    };
    let verdict = if got == want { "exact" } else { "WRONG" };
    rep.line(format!(
        "{head}; result {verdict} ({got:#x} vs host {want:#x})"
    ));
    assert_eq!(got, want, "{label} {kname}");
}
