//! Unit tests of the closure translation that need no device: what `kernel!` bodies become
//! (scalar captures and annotated reducers; buffer captures need a device and are in
//! tests/closures.rs), and the emitter on IR written by hand for buffer captures. Every
//! `kernel!` here also type-checks as Rust, which is part of the test.

use super::emit::emit;
use super::infer::{infer, CapTy};
use super::ir::{parse, Ty};
use super::{ArgReducer, Item, NdItem, RedKind, Reducer, SpanReducer};
use crate::kernel;

/// The statements of a body, without the guard lines.
fn stmts(body: &str) -> String {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The body generated from a hand-written IR.
fn from_ir(ir: &str, caps: &[CapTy], reds: &[(RedKind, Ty)]) -> Result<String, String> {
    let ir = parse(ir)?;
    let tys: Vec<Ty> = reds.iter().map(|r| r.1).collect();
    let t = infer(&ir, caps, &tys)?;
    Ok(stmts(&emit(&ir, &t, caps, reds)?.body))
}

macro_rules! source {
    ($k:expr) => {
        stmts(&$k.source().unwrap())
    };
}

#[test]
fn literals_take_the_type_of_their_context() {
    let (a, b, c, d) = (2.5f32, 7u32, 9i64, 3.0f64);
    let s = source!(kernel!(|_, r: &mut Reducer<f32>| *r += a * 2.0 + 1.0));
    assert_eq!(s, "r += a * 2.0f + 1.0f;");
    let s = source!(kernel!(|_, r: &mut Reducer<u32>| *r += b * 3 + 1));
    assert_eq!(s, "r += b * 3u + 1u;");
    let s = source!(kernel!(|_, r: &mut Reducer<i64>| *r += c - 1 - -2));
    assert_eq!(s, "r += c - 1L - -2L;");
    let s = source!(kernel!(|_, r: &mut Reducer<f64>| *r += d * 0.1));
    assert_eq!(s, "r += d * 0.1;");
    // Unconstrained literals default as in Rust: i32 and f64.
    let s = source!(kernel!(|_, r: &mut Reducer<f32>| {
        let k = 3;
        let h = 0.5;
        *r += (k as f32) * (h as f32);
    }));
    assert_eq!(s, "int k = 3;\ndouble h = 0.5;\nr += (float)k * (float)h;");
    // Backwards: the later use types the earlier literal.
    let s = source!(kernel!(|_, r: &mut Reducer<u64>| {
        let mut acc = 0;
        acc += 5;
        *r += acc;
    }));
    assert_eq!(s, "ulong acc = 0UL;\nacc += 5UL;\nr += acc;");
    let s = source!(kernel!(|_, r: &mut Reducer<i32>| *r += i32::MIN + i32::MAX));
    assert_eq!(s, "r += INT_MIN + 2147483647;");
    let s = source!(kernel!(
        |_, r: &mut Reducer<f32>| *r += f32::MAX.min(f32::INFINITY) + std::f32::consts::PI
    ));
    assert_eq!(s, "r += fmin(3.4028235e38f, INFINITY) + 3.1415927f;");
}

#[test]
#[allow(clippy::cast_nan_to_int)]
fn casts_follow_rust() {
    let (x, y) = (2.75f32, -3i32);
    let s = source!(kernel!(
        |_, r: &mut Reducer<i32>| *r += x as i32 + (y as f32) as i32
    ));
    assert_eq!(s, "r += convert_int_sat(x) + convert_int_sat((float)y);");
    // Constants fold with Rust's `as`: truncation, saturation, wrapping.
    let s = source!(kernel!(|_, r: &mut Reducer<i64>| *r += 2.9f32 as i64
        + (-1i32) as u32 as i64
        + 1e20f64 as i32 as i64
        + (-7.5f64) as u64 as i64
        + f64::NAN as i64));
    assert_eq!(s, "r += 2L + 4294967295L + 2147483647L + 0L + 0L;");
}

#[test]
fn the_id_is_widened_where_c_would_compute_in_32_bits() {
    let s = source!(kernel!(
        |i, r: &mut Reducer<u64>| *r += (i * i + (i << 33) + i * 2) as u64
    ));
    assert_eq!(s, "r += (ulong)i * i + ((ulong)i << 33) + i * 2UL;");
    let m = 5usize;
    let s = source!(kernel!(
        |i, r: &mut Reducer<u64>| *r += i.min(m) as u64 + i as u64
    ));
    assert_eq!(s, "r += min((ulong)i, m) + (ulong)i;");
}

#[test]
#[allow(clippy::nonminimal_bool)]
fn precedence_and_parentheses() {
    let (a, b, c) = (1u32, 2u32, 3u32);
    let s = source!(kernel!(
        |_, r: &mut Reducer<u32>| *r += (a + b) * c + a * (b - c)
    ));
    assert_eq!(s, "r += (a + b) * c + a * (b - c);");
    // Rust's `&` binds tighter than `==`; C's does not.
    let s = source!(kernel!(|_, r: &mut Reducer<u32>| if a & b == c {
        *r += a - (b - c);
    }));
    assert_eq!(s, "if ((a & b) == c) {\n    r += a - (b - c);\n}");
    let s = source!(kernel!(
        |_, r: &mut Reducer<u32>| *r += (a << 2 | b >> 1) ^ !c
    ));
    assert_eq!(s, "r += ((a << 2) | (b >> 1)) ^ ~c;");
    let s = source!(kernel!(|_, r: &mut Reducer<u32>| {
        let t = a < c;
        if t && a > b || !t {
            *r += 1;
        }
    }));
    assert_eq!(
        s,
        "bool t = a < c;\nif ((t && a > b) || !t) {\n    r += 1u;\n}"
    );
}

#[test]
fn names_are_mapped_and_shadowing_is_renamed() {
    let n = 4u32;
    let float = 1.5f32;
    let s = source!(kernel!(|idx, sum: &mut Reducer<f32>| {
        let x = float * 2.0;
        let x = x + n as f32;
        *sum += x + idx as f32;
    }));
    assert_eq!(
        s,
        "float x = float_1 * 2.0f;\nfloat x_1 = x + (float)n_1;\nsum += x_1 + (float)i;"
    );
}

#[test]
fn control_flow() {
    let (m, k) = (10u32, 3i32);
    let s = source!(kernel!(|i, r: &mut Reducer<i32>| {
        let mut acc = 0;
        for j in 0..m {
            if j % 2 == 0 {
                continue;
            } else if j > 7 {
                break;
            }
            acc += k;
        }
        let mut w = 0;
        while w < 3 {
            w += 1;
        }
        loop {
            if w > 5 {
                break;
            }
            w += 2;
        }
        if i > 100 {
            return;
        }
        *r += acc + w;
    }));
    let want = "int acc = 0;
for (uint j = 0u; j < m; ++j) {
    if (j % 2u == 0u) {
        continue;
    } else if (j > 7u) {
        break;
    }
    acc += k;
}
int w = 0;
while (w < 3) {
    w += 1;
}
for (;;) {
    if (w > 5) {
        break;
    }
    w += 2;
}
if (i > 100UL) {
    return;
}
r += acc + w;";
    assert_eq!(s, want);
}

#[test]
fn loops_hoist_a_bound_that_can_change() {
    let s = source!(kernel!(|_, r: &mut Reducer<u64>| {
        let mut m = 4u64;
        for j in (0..m).step_by(2) {
            m += 1;
            *r += j;
        }
        for j in 1..=m {
            *r += j;
        }
    }));
    let want = "ulong m = 4UL;
{
    const ulong j_end = m;
    for (ulong j = 0UL; j < j_end; j += 2UL) {
        m += 1UL;
        r += j;
    }
}
{
    const ulong j_1_end = m;
    for (ulong j_1 = 1UL; j_1 <= j_1_end; ++j_1) {
        r += j_1;
    }
}";
    assert_eq!(s, want);
}

#[test]
fn if_as_a_value() {
    let (a, b) = (1.5f32, 2.5f32);
    let s = source!(kernel!(
        |_, r: &mut Reducer<f32>| *r += if a > b { a } else { b * 2.0 }
    ));
    assert_eq!(s, "r += a > b ? a : b * 2.0f;");
    let s = source!(kernel!(|_, r: &mut Reducer<f32>| {
        let v = if a > b {
            let t = a * a;
            t + 1.0
        } else if a < 0.0 {
            0.0
        } else {
            b
        };
        *r += v;
    }));
    let want = "float v;
if (a > b) {
    float t = a * a;
    v = t + 1.0f;
} else if (a < 0.0f) {
    v = 0.0f;
} else {
    v = b;
}
r += v;";
    assert_eq!(s, want);
}

#[test]
fn math_maps_to_opencl_builtins() {
    let (x, y) = (2.0f32, 0.5f64);
    let k = -7i32;
    let s = source!(kernel!(|_, r: &mut Reducer<f32>| *r += x.sqrt()
        + x.ln()
        + f32::exp(x)
        + x.powf(x)
        + x.powi(3)
        + x.abs().max(x.floor())
        + x.mul_add(x, 1.0)
        + (x % 2.0)
        + x.recip()
        + (y.sin() as f32)
        + (k.abs() as f32)
        + (k.count_ones() as f32)
        + x.clamp(0.0, 1.0)));
    let want = "r += sqrt(x) + log(x) + exp(x) + pow(x, x) + pown(x, 3) + fmax(fabs(x), floor(x)) + fma(x, x, 1.0f) + fmod(x, 2.0f) + 1.0f / x + (float)sin(y) + (float)(int)abs(k) + (float)(uint)popcount(k) + clamp(x, 0.0f, 1.0f);";
    assert_eq!(s, want);
    let s = source!(kernel!(|_, r: &mut Reducer<i32>| *r +=
        std::cmp::max(k, 3).min(k) + k.rotate_left(3) + (x.is_nan() as i32)));
    assert_eq!(
        s,
        "r += min(max(k, 3), k) + rotate(k, (int)3u) + (int)isnan(x);"
    );
}

#[test]
fn reducer_forms() {
    let v = 2.0f32;
    let s = source!(kernel!(|i, best: &mut ArgReducer<f32>| best.combine(v, i)));
    assert_eq!(s, "best_combine(v, i);");
    let s = source!(kernel!(|i, hist: &mut SpanReducer<u32>| {
        hist[i % 8] += 1;
        hist[3].combine(2);
    }));
    assert_eq!(s, "hist[i % 8UL] += 1u;\nhist_combine(3UL, 2u);");
    let s = source!(kernel!(|_, p: &mut Reducer<f32>, lo: &mut Reducer<f32>| {
        *p *= v;
        lo.combine(v);
    }));
    assert_eq!(s, "p *= v;\nlo_combine(v);");
}

#[test]
fn items_and_nd_items() {
    let s = source!(kernel!(|item: Item, r: &mut Reducer<u64>| *r +=
        (item.id[0] * item.range[1] + item.linear_id) as u64));
    assert_eq!(s, "r += item.id[0UL] * item.range[1UL] + item.linear_id;");
    let s = source!(kernel!(
        |it: NdItem, r: &mut Reducer<u64>| *r +=
            (it.local_id(0) + it.group_id(1) * it.local_range(0) + it.global_linear_id()) as u64
    ));
    assert_eq!(
        s,
        "r += get_local_id(0UL) + get_group_id(1UL) * get_local_size(0UL) + (ulong)i;"
    );
}

#[test]
fn guards_check_kind_type_and_form() {
    let v = 1.0f64;
    let k =
        kernel!(|it: NdItem, best: &mut ArgReducer<f64>| best.combine(v, it.global_linear_id()));
    let s = k.source().unwrap();
    assert!(s.contains("#if clr_kty(R0_T) != 6 || R0_SHAPE != CLR_SHAPE_PAIR\n#error kernel_closure_reducer_0_needs_a_argmin_or_argmax_reduction_of_f64\n#endif"), "{s}");
    assert!(s.contains("#if CLR_FORM != CLR_FORM_ND"), "{s}");
    // The guard lines never name a reducer (the launch scans the body for the names).
    assert!(
        !s.lines()
            .filter(|l| l.starts_with('#'))
            .any(|l| l.contains("best")),
        "{s}"
    );
}

#[test]
fn buffers_from_hand_written_ir() {
    // y[i] = x[i] * 2.0; sum += y[i];  over f32 buffers.
    let ir = "(closure (id usize) (reds (sum plain)) (caps (x read) (y write)) (locals) \
              (do (set (idx 1 (id)) (bin * (idx 0 (id)) (float 2.0 _))) (red 0 + (idx 1 (id)))))";
    let s = from_ir(
        ir,
        &[CapTy::Buffer(Ty::F32), CapTy::Buffer(Ty::F32)],
        &[(RedKind::Plain, Ty::F32)],
    );
    assert_eq!(s.unwrap(), "y[i] = x[i] * 2.0f;\nsum += y[i];");
    // The same IR over f64 buffers: the literal follows.
    let s = from_ir(
        ir,
        &[CapTy::Buffer(Ty::F64), CapTy::Buffer(Ty::F64)],
        &[(RedKind::Plain, Ty::F64)],
    );
    assert_eq!(s.unwrap(), "y[i] = x[i] * 2.0;\nsum += y[i];");
    // A conflict the host form would not have allowed is an error, not a guess.
    let s = from_ir(
        ir,
        &[CapTy::Buffer(Ty::I32), CapTy::Buffer(Ty::F32)],
        &[(RedKind::Plain, Ty::F32)],
    );
    assert!(s.is_err());
    // A buffer used as a scalar.
    let bad =
        "(closure (id usize) (reds (sum plain)) (caps (x scalar)) (locals) (do (red 0 + (cap 0))))";
    assert!(from_ir(bad, &[CapTy::Buffer(Ty::F32)], &[(RedKind::Plain, Ty::F32)]).is_err());
}

#[test]
fn reducer_names_that_clash_are_renamed_and_handed_to_the_kernel() {
    let v = 1.0f32;
    let k = kernel!(|idx, n: &mut Reducer<f32>, float: &mut Reducer<f32>| {
        *n += v + idx as f32;
        float.combine(v);
    });
    assert_eq!(source!(k), "n_1 += v + (float)i;\nfloat_1_combine(v);");
    // The kernel binds the capture and names the reducers as the body does.
    let kern = k.kernel().unwrap();
    assert_eq!(kern.body(), k.source().unwrap());
}
