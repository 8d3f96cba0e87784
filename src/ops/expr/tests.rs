//! Tests of the expression evaluator.

use super::*;
use ElemType::*;

fn ev(src: &str, a: Value, b: Value) -> Value {
    Expr::parse(src)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .eval(a.ty(), a, b)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
}
fn i32s(src: &str, a: i32, b: i32) -> i32 {
    match ev(src, Value::I32(a), Value::I32(b)) {
        Value::I32(v) => v,
        v => panic!("{v:?}"),
    }
}
fn u32s(src: &str, a: u32, b: u32) -> u32 {
    match ev(src, Value::U32(a), Value::U32(b)) {
        Value::U32(v) => v,
        v => panic!("{v:?}"),
    }
}
fn i64s(src: &str, a: i64, b: i64) -> i64 {
    match ev(src, Value::I64(a), Value::I64(b)) {
        Value::I64(v) => v,
        v => panic!("{v:?}"),
    }
}
fn u64s(src: &str, a: u64, b: u64) -> u64 {
    match ev(src, Value::U64(a), Value::U64(b)) {
        Value::U64(v) => v,
        v => panic!("{v:?}"),
    }
}
fn f32s(src: &str, a: f32, b: f32) -> f32 {
    match ev(src, Value::F32(a), Value::F32(b)) {
        Value::F32(v) => v,
        v => panic!("{v:?}"),
    }
}
fn f64s(src: &str, a: f64, b: f64) -> f64 {
    match ev(src, Value::F64(a), Value::F64(b)) {
        Value::F64(v) => v,
        v => panic!("{v:?}"),
    }
}
/// The parse error for `src`.
fn perr(src: &str) -> String {
    match Expr::parse(src) {
        Ok(e) => panic!("{src} parsed: {e:?}"),
        Err(e) => e,
    }
}
/// The evaluation error for `src` in `ty` with a = 1, b = 0.
fn eerr(src: &str, ty: ElemType) -> String {
    let (a, b) = match ty {
        I32 => (Value::I32(1), Value::I32(0)),
        U32 => (Value::U32(1), Value::U32(0)),
        I64 => (Value::I64(1), Value::I64(0)),
        U64 => (Value::U64(1), Value::U64(0)),
        F32 => (Value::F32(1.0), Value::F32(0.0)),
        F64 => (Value::F64(1.0), Value::F64(0.0)),
        F16 | BF16 => (Value::F32(1.0), Value::F32(0.0)),
    };
    let e = Expr::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    match e.eval(ty, a, b) {
        Ok(v) => panic!("{src} in {ty} gave {v:?}"),
        Err(e) => e,
    }
}

#[test]
fn brief_examples() {
    assert_eq!(i32s("a*b", 6, 7), 42);
    assert_eq!(i32s("max(a,b)", -3, 2), 2);
    assert_eq!(i32s("a + b + 1", 1, 2), 4);
    assert_eq!(i32s("(a < b) ? a : b", 5, 3), 3);
    assert_eq!(f32s("fmax(a, b)", 1.5, -2.0), 1.5);
    assert_eq!(i64s("a > b ? a : b", -1, -9), -1);
    assert_eq!(i32s("abs(a) > abs(b) ? a : b", -7, 5), -7);
    assert_eq!(i32s("abs(a) > abs(b) ? a : b", 3, -5), -5);
    assert_eq!(u32s("a ^ b", 0b1100, 0b1010), 0b0110);
    assert_eq!(u32s("(a & b) | 1", 0b1100, 0b1010), 0b1001);
}

#[test]
fn integer_operators() {
    assert_eq!(i32s("a * b", -3, 4), -12);
    assert_eq!(i32s("a / b", 7, 2), 3);
    assert_eq!(i32s("a / b", -7, 2), -3, "division truncates toward zero");
    assert_eq!(
        i32s("a % b", -7, 2),
        -1,
        "remainder has the sign of the dividend"
    );
    assert_eq!(i32s("a % b", 7, -2), 1);
    assert_eq!(i32s("a + b", 3, 4), 7);
    assert_eq!(i32s("a - b", 3, 4), -1);
    assert_eq!(i32s("a << b", 3, 2), 12);
    assert_eq!(i32s("a >> b", 12, 2), 3);
    assert_eq!(i32s("a < b", 1, 2), 1);
    assert_eq!(i32s("a < b", 2, 2), 0);
    assert_eq!(i32s("a <= b", 2, 2), 1);
    assert_eq!(i32s("a <= b", 3, 2), 0);
    assert_eq!(i32s("a > b", 3, 2), 1);
    assert_eq!(i32s("a > b", 2, 2), 0);
    assert_eq!(i32s("a >= b", 2, 2), 1);
    assert_eq!(i32s("a >= b", 1, 2), 0);
    assert_eq!(i32s("a == b", 2, 2), 1);
    assert_eq!(i32s("a == b", 1, 2), 0);
    assert_eq!(i32s("a != b", 1, 2), 1);
    assert_eq!(i32s("a != b", 2, 2), 0);
    assert_eq!(i32s("a & b", 0b1100, 0b1010), 0b1000);
    assert_eq!(i32s("a ^ b", 0b1100, 0b1010), 0b0110);
    assert_eq!(i32s("a | b", 0b1100, 0b1010), 0b1110);
    assert_eq!(
        i32s("a && b", 5, 7),
        1,
        "logical ops yield 1, not an operand"
    );
    assert_eq!(i32s("a && b", 5, 0), 0);
    assert_eq!(i32s("a || b", 0, 7), 1);
    assert_eq!(i32s("a || b", 0, 0), 0);
    assert_eq!(i32s("-a", 5, 0), -5);
    assert_eq!(i32s("+a", 5, 0), 5);
    assert_eq!(i32s("!a", 5, 0), 0);
    assert_eq!(i32s("!a", 0, 0), 1);
    assert_eq!(i32s("~a", 0, 0), -1);
    assert_eq!(u32s("~a", 0, 0), u32::MAX);
    assert_eq!(i32s("- -a", 5, 0), 5);
    assert_eq!(i32s("!!a", 5, 0), 1);
    assert_eq!(i32s("-~a", 5, 0), 6);
}

#[test]
fn every_integer_type() {
    assert_eq!(u32s("a - b", 1, 2), u32::MAX);
    assert_eq!(i64s("a * b", 1 << 40, 3), 3 << 40);
    assert_eq!(u64s("a + b", u64::MAX, 2), 1);
    assert_eq!(u64s("a / b", u64::MAX, 2), u64::MAX / 2);
    assert_eq!(i64s("a % b", -(1 << 40) - 1, 1 << 20), -1);
    assert_eq!(u64s("a >> 63", 1 << 63, 0), 1);
}

#[test]
fn wrapping() {
    assert_eq!(i32s("a + 1", i32::MAX, 0), i32::MIN);
    assert_eq!(i32s("a - 1", i32::MIN, 0), i32::MAX);
    assert_eq!(i32s("a * b", 1 << 16, 1 << 16), 0);
    assert_eq!(i32s("-a", i32::MIN, 0), i32::MIN);
    assert_eq!(i32s("abs(a)", i32::MIN, 0), i32::MIN);
    assert_eq!(u32s("a + b", u32::MAX, 1), 0);
    assert_eq!(u32s("-a", 1, 0), u32::MAX);
    assert_eq!(i64s("a + 1", i64::MAX, 0), i64::MIN);
    assert_eq!(i64s("abs(a)", i64::MIN, 0), i64::MIN);
    assert_eq!(u64s("a * b", u64::MAX, u64::MAX), 1);
}

#[test]
fn literals_convert_to_the_reduction_type() {
    assert_eq!(u32s("-1", 0, 0), u32::MAX);
    assert_eq!(i32s("a + 4294967295", 5, 0), 4, "wraps to -1 in i32");
    assert_eq!(i32s("a + 0x100000001", 5, 0), 6, "truncated to 32 bits");
    assert_eq!(i64s("a + 0x100000001", 5, 0), 0x1_0000_0006);
    assert_eq!(i32s("-2147483648", 0, 0), i32::MIN);
    assert_eq!(u64s("18446744073709551615", 0, 0), u64::MAX);
    assert_eq!(u64s("0xFFFFFFFFFFFFFFFFul", 0, 0), u64::MAX);
    assert_eq!(f32s("16777217", 0.0, 0.0), 16777216.0, "rounds to f32");
    assert_eq!(f64s("16777217", 0.0, 0.0), 16777217.0);
}

#[test]
fn literal_forms() {
    assert_eq!(i32s("0x1F", 0, 0), 31);
    assert_eq!(i32s("0XaB", 0, 0), 0xab);
    assert_eq!(i32s("010", 0, 0), 8, "a leading 0 is octal in C");
    assert_eq!(i32s("0", 0, 0), 0);
    for s in [
        "7u", "7U", "7l", "7L", "7ul", "7UL", "7lu", "7LU", "7uL", "0x7u", "07L",
    ] {
        assert_eq!(i32s(s, 0, 0), 7, "{s}");
    }
    assert_eq!(f64s("1.5", 0.0, 0.0), 1.5);
    assert_eq!(f64s("1.", 0.0, 0.0), 1.0);
    assert_eq!(f64s(".25", 0.0, 0.0), 0.25);
    assert_eq!(f64s("1e3", 0.0, 0.0), 1000.0);
    assert_eq!(f64s("1E+3", 0.0, 0.0), 1000.0);
    assert_eq!(f64s("2.5e-1", 0.0, 0.0), 0.25);
    assert_eq!(f64s("1.e2", 0.0, 0.0), 100.0);
    assert_eq!(f32s("1.5f", 0.0, 0.0), 1.5);
    assert_eq!(f32s("1e2F", 0.0, 0.0), 100.0);
    assert_eq!(f64s("1e999", 0.0, 0.0), f64::INFINITY);
    // An `f` literal has float precision even in a double combiner.
    assert_eq!(f64s("0.1f", 0.0, 0.0), 0.1f32 as f64);
    assert_eq!(f64s("0.1", 0.0, 0.0), 0.1);
    // A double literal in a float combiner is rounded to f32 (as C converts it).
    assert_eq!(f32s("0.1", 0.0, 0.0), 0.1f32);
    // f-suffixed literals are rounded once, straight from decimal to f32.
    assert_eq!(f32s("1.00000005960464477539f", 0.0, 0.0), 1.0);
}

#[test]
fn precedence_is_c() {
    assert_eq!(i32s("a + b * 2", 1, 3), 7);
    assert_eq!(i32s("(a + b) * 2", 1, 3), 8);
    assert_eq!(i32s("a - b / 2", 10, 4), 8);
    assert_eq!(i32s("a + b % 3", 10, 4), 11);
    assert_eq!(i32s("1 + 2 << 1", 0, 0), 6, "+ binds tighter than <<");
    assert_eq!(i32s("1 << 2 + 1", 0, 0), 8);
    assert_eq!(i32s("1 << 2 < 5", 0, 0), 1, "<< binds tighter than <");
    assert_eq!(i32s("1 < 2 == 1", 0, 0), 1, "< binds tighter than ==");
    assert_eq!(i32s("2 == 2 < 1", 0, 0), 0);
    assert_eq!(
        i32s("a & b == b", 6, 2),
        0,
        "== binds tighter than &: 6 & 1"
    );
    assert_eq!(i32s("(a & b) == b", 6, 2), 1);
    assert_eq!(i32s("1 | 2 ^ 3 & 1", 0, 0), 3, "& then ^ then |");
    assert_eq!(i32s("6 ^ 3 | 8", 0, 0), 13);
    assert_eq!(i32s("6 & 3 ^ 8", 0, 0), 10);
    assert_eq!(i32s("1 | 0 && 0", 0, 0), 0, "| binds tighter than &&");
    assert_eq!(i32s("1 || 0 && 0", 0, 0), 1, "&& binds tighter than ||");
    assert_eq!(i32s("0 && 0 || 1", 0, 0), 1);
    assert_eq!(i32s("0 || 1 ? 5 : 6", 0, 0), 5, "?: is looser than ||");
    assert_eq!(i32s("-a * b", 2, 3), -6);
    assert_eq!(i32s("-2 * -3", 0, 0), 6);
    assert_eq!(i32s("!a + 1", 0, 0), 2, "unary binds tighter than +");
    assert_eq!(i32s("~0 + 1", 0, 0), 0);
    assert_eq!(i32s("-a << 1", 3, 0), -6);
    assert_eq!(i32s("a < b == b < a", 1, 2), 0);
}

#[test]
fn binary_operators_are_left_associative() {
    assert_eq!(i32s("10 - 3 - 2", 0, 0), 5);
    assert_eq!(i32s("100 / 10 / 5", 0, 0), 2);
    assert_eq!(i32s("100 % 7 % 3", 0, 0), 2);
    assert_eq!(i32s("2 << 1 << 1", 0, 0), 8);
    assert_eq!(i32s("64 >> 2 >> 1", 0, 0), 8);
    assert_eq!(i32s("3 < 2 < 1", 0, 0), 1, "(3 < 2) < 1");
    assert_eq!(i32s("2 == 2 == 2", 0, 0), 0, "(2 == 2) == 2");
}

#[test]
fn ternary_is_right_associative() {
    assert_eq!(
        i32s("1 ? 1 : 0 ? 2 : 3", 0, 0),
        1,
        "left-assoc would give 2"
    );
    assert_eq!(i32s("0 ? 1 : 0 ? 2 : 3", 0, 0), 3);
    assert_eq!(i32s("0 ? 1 : 1 ? 2 : 3", 0, 0), 2);
    assert_eq!(i32s("a ? b ? 1 : 2 : 3", 1, 0), 2, "nested in the middle");
    assert_eq!(i32s("a ? b ? 1 : 2 : 3", 1, 1), 1);
    assert_eq!(i32s("a ? b ? 1 : 2 : 3", 0, 1), 3);
    assert_eq!(i32s("a > b ? a : b > 0 ? b : 0", -5, -3), 0);
    assert_eq!(i32s("(a ? b : 0) + 1", 1, 4), 5);
    assert_eq!(
        i32s("a ? b : 0 + 1", 0, 4),
        1,
        "the else branch takes the sum"
    );
}

#[test]
fn short_circuits_like_c() {
    assert_eq!(i32s("b != 0 ? a / b : a", 7, 0), 7);
    assert_eq!(i32s("b == 0 || a % b == 0", 7, 0), 1);
    assert_eq!(i32s("b != 0 && a / b > 1", 7, 0), 0);
    assert_eq!(i32s("b ? a / b : 0", 7, 0), 0);
}

#[test]
fn division_errors() {
    let e = eerr("a / b", I32);
    assert!(
        e.contains("column 3") && e.contains("division by zero"),
        "{e}"
    );
    assert!(e.contains("`a / b`"), "{e}");
    let e = eerr("a % b", U64);
    assert!(
        e.contains("column 3") && e.contains("division by zero"),
        "{e}"
    );
    let e = Expr::parse("a / b")
        .unwrap()
        .eval(I32, Value::I32(i32::MIN), Value::I32(-1))
        .unwrap_err();
    assert!(e.contains("overflows"), "{e}");
    let e = Expr::parse("a % b")
        .unwrap()
        .eval(I64, Value::I64(i64::MIN), Value::I64(-1))
        .unwrap_err();
    assert!(e.contains("overflows"), "{e}");
    // Floating division by zero is IEEE, not an error.
    assert_eq!(f32s("a / b", 1.0, 0.0), f32::INFINITY);
    assert!(f64s("a / b", 0.0, 0.0).is_nan());
}

#[test]
fn shifts_mask_the_count() {
    assert_eq!(i32s("1 << 33", 0, 0), 2);
    assert_eq!(i32s("1 << 32", 0, 0), 1);
    assert_eq!(i64s("1 << 33", 0, 0), 1 << 33);
    assert_eq!(i64s("1 << 64", 0, 0), 1);
    assert_eq!(u32s("a >> 35", 64, 0), 8);
    assert_eq!(i32s("1 << -1", 0, 0), i32::MIN, "count -1 masks to 31");
    assert_eq!(i32s("a >> 1", -8, 0), -4, "signed >> is arithmetic");
    assert_eq!(
        u32s("a >> 1", 0x8000_0000, 0),
        0x4000_0000,
        "unsigned >> is logical"
    );
    assert_eq!(i64s("a >> 63", i64::MIN, 0), -1);
    assert_eq!(i32s("a << 1", i32::MAX, 0), -2);
}

#[test]
fn signed_and_unsigned_compare() {
    assert_eq!(u32s("a > b", 0xFFFF_FFFF, 1), 1);
    assert_eq!(i32s("a > b", -1, 1), 0);
    assert_eq!(u32s("max(a, b)", 0xFFFF_FFFF, 1), 0xFFFF_FFFF);
    assert_eq!(i32s("max(a, b)", -1, 1), 1);
    assert_eq!(u32s("min(a, b)", 0xFFFF_FFFF, 1), 1);
    assert_eq!(i32s("min(a, b)", -1, 1), -1);
    assert_eq!(u64s("(a < b) ? a : b", u64::MAX, 3), 3);
    assert_eq!(i64s("(a < b) ? a : b", -1, 3), -1);
    assert_eq!(u32s("a < 0", 5, 0), 0);
    assert_eq!(u32s("-1 > a", 5, 0), 1, "-1 is UINT_MAX in a u32 combiner");
}

#[test]
fn integer_functions() {
    assert_eq!(i32s("abs(a)", -5, 0), 5);
    assert_eq!(u32s("abs(a)", 0xFFFF_FFFF, 0), 0xFFFF_FFFF);
    assert_eq!(i32s("clamp(a, 0, 10)", -3, 0), 0);
    assert_eq!(i32s("clamp(a, 0, 10)", 30, 0), 10);
    assert_eq!(i32s("clamp(a, 0, 10)", 4, 0), 4);
    assert_eq!(u32s("clamp(a, 1, b)", 0xFFFF_FFFF, 9), 9);
    assert_eq!(i64s("min(max(a, b), 3)", 1, 7), 3);
    assert_eq!(i32s("max(a, -b)", -5, 2), -2);
}

#[test]
fn f32_rounds_every_operation() {
    assert_eq!(f32s("a + 1", 16777216.0, 0.0), 16777216.0);
    assert_eq!(f64s("a + 1", 16777216.0, 0.0), 16777217.0);
    assert_eq!(
        f32s("a + b + 1", 16777216.0, 1.0),
        16777216.0,
        "rounded after each +"
    );
    assert_eq!(f32s("a + (b + 1)", 16777216.0, 1.0), 16777218.0);
    assert_eq!(f32s("a * b", 0.1, 3.0), 0.1f32 * 3.0f32);
    assert_ne!(f32s("a * b", 0.1, 3.0) as f64, 0.1f32 as f64 * 3.0);
    assert_eq!(f32s("a / b", 1.0, 3.0), 1.0f32 / 3.0);
    assert_eq!(f32s("a + 0.1", 1.0, 0.0), 1.0f32 + 0.1f32);
}

#[test]
fn float_operators() {
    assert_eq!(f64s("a * b", 1.5, -2.0), -3.0);
    assert_eq!(f64s("a / b", 3.0, 2.0), 1.5);
    assert_eq!(f64s("a - b", 3.0, 2.5), 0.5);
    assert_eq!(f64s("-a", 3.0, 0.0), -3.0);
    assert!(f64s("-a", 0.0, 0.0).is_sign_negative());
    assert_eq!(f64s("+a", 3.0, 0.0), 3.0);
    assert_eq!(f64s("!a", 0.0, 0.0), 1.0);
    assert_eq!(f64s("!a", 0.5, 0.0), 0.0);
    assert_eq!(f64s("!a", f64::NAN, 0.0), 0.0, "NaN is true");
    assert_eq!(f32s("a < b", 1.0, 2.0), 1.0);
    assert_eq!(f32s("a >= b", 1.0, 2.0), 0.0);
    assert_eq!(f32s("a && b", 0.5, 2.0), 1.0);
    assert_eq!(f32s("a || b", 0.0, 0.0), 0.0);
    assert_eq!(f32s("a == a", f32::NAN, 0.0), 0.0, "NaN != NaN");
    assert_eq!(f32s("a != a", f32::NAN, 0.0), 1.0);
    assert_eq!(f32s("a < b", f32::NAN, 1.0), 0.0);
    assert_eq!(f32s("a > b ? a : b", -1.0, -0.5), -0.5);
}

#[test]
fn float_functions() {
    assert_eq!(f32s("fmin(a, b)", 1.0, -2.0), -2.0);
    assert_eq!(
        f32s("fmax(a, b)", f32::NAN, 1.0),
        1.0,
        "fmax returns the non-NaN operand"
    );
    assert_eq!(f32s("fmax(a, b)", 1.0, f32::NAN), 1.0);
    assert_eq!(f64s("fmin(a, b)", f64::NAN, 1.0), 1.0);
    assert_eq!(f64s("fmin(a, b)", 1.0, f64::NAN), 1.0);
    // min/max on floats: min is `y < x ? y : x`, max is `x < y ? y : x`.
    assert_eq!(f32s("min(a, b)", 3.0, 2.0), 2.0);
    assert_eq!(f32s("max(a, b)", 3.0, 2.0), 3.0);
    assert!(f32s("max(a, b)", f32::NAN, 1.0).is_nan());
    assert_eq!(f32s("max(a, b)", 1.0, f32::NAN), 1.0);
    assert!(f32s("min(a, b)", f32::NAN, 1.0).is_nan());
    assert_eq!(f32s("min(a, b)", 1.0, f32::NAN), 1.0);
    assert_eq!(f64s("fabs(a)", -2.5, 0.0), 2.5);
    assert_eq!(f64s("sqrt(a)", 2.0, 0.0), 2f64.sqrt());
    assert_eq!(f32s("sqrt(a)", 2.0, 0.0), 2f32.sqrt());
    assert!(f32s("sqrt(a)", -1.0, 0.0).is_nan());
    assert_eq!(f32s("hypot(a, b)", 3.0, 4.0), 5.0);
    assert_eq!(f64s("hypot(a, b)", 5.0, 12.0), 13.0);
    assert_eq!(f64s("clamp(a, 0, 1)", 1.5, 0.0), 1.0);
    assert_eq!(f64s("clamp(a, 0.0, 1.0)", -1.5, 0.0), 0.0);
    assert_eq!(f64s("clamp(a, 0, 1)", 0.25, 0.0), 0.25);
    assert_eq!(
        f32s("clamp(a, 0, 1)", f32::NAN, 0.0),
        0.0,
        "fmin(fmax(NaN, 0), 1)"
    );
    assert_eq!(f32s("fabs(a) > fabs(b) ? a : b", -3.0, 2.0), -3.0);
}

#[test]
fn type_errors_name_the_type_and_position() {
    let e = eerr("a % b", F32);
    assert!(
        e.contains("column 3") && e.contains("`%`") && e.contains("f32"),
        "{e}"
    );
    for op in ["&", "|", "^", "<<", ">>"] {
        let e = eerr(&format!("a {op} b"), F64);
        assert!(e.contains("column 3") && e.contains("integer"), "{op}: {e}");
    }
    let e = eerr("~a", F32);
    assert!(e.contains("column 1") && e.contains("`~`"), "{e}");
    let e = eerr("abs(a)", F32);
    assert!(e.contains("column 1") && e.contains("fabs"), "{e}");
    for f in [
        "fmin(a, b)",
        "fmax(a, b)",
        "fabs(a)",
        "sqrt(a)",
        "hypot(a, b)",
    ] {
        let e = eerr(f, I32);
        assert!(
            e.contains("floating-point") && e.contains("i32"),
            "{f}: {e}"
        );
    }
    let e = eerr("a + 1.5", U32);
    assert!(
        e.contains("column 5") && e.contains("floating literal"),
        "{e}"
    );
    // Errors in an untaken branch still count: the device would not compile it.
    let e = eerr("1 ? a : a % b", F32);
    assert!(e.contains("column 11"), "{e}");
    let e = eerr("a", F16);
    assert!(e.contains("f16"), "{e}");
}

#[test]
fn operand_types_must_match() {
    let x = Expr::parse("a + b").unwrap();
    let e = x.eval(I32, Value::U32(1), Value::I32(2)).unwrap_err();
    assert!(e.contains("`a` is u32") && e.contains("i32"), "{e}");
    let e = x.eval(F64, Value::F64(1.0), Value::F32(2.0)).unwrap_err();
    assert!(e.contains("`b` is f32"), "{e}");
}

#[test]
fn parse_errors_name_position_and_expectation() {
    let e = perr("a + c");
    assert_eq!(
        e,
        "column 5: unknown name `c`; the host reference knows a, b, min, max, abs, fmin, \
         fmax, fabs, sqrt, hypot, clamp"
    );
    let e = perr("a +");
    assert!(e.starts_with("column 4: expected an operand"), "{e}");
    assert!(e.contains("end of input"), "{e}");
    let e = perr("a + * b");
    assert!(
        e.starts_with("column 5: expected an operand") && e.contains("`*`"),
        "{e}"
    );
    let e = perr("(a + b");
    assert!(
        e.starts_with("column 7: expected `)`") && e.contains("column 1"),
        "{e}"
    );
    let e = perr("a b");
    assert!(
        e.starts_with("column 3: expected an operator") && e.contains("`b`"),
        "{e}"
    );
    let e = perr("a ? b");
    assert!(
        e.starts_with("column 6: expected `:`") && e.contains("column 3"),
        "{e}"
    );
    let e = perr("max(a)");
    assert!(e.starts_with("column 1: `max` takes 2 arguments"), "{e}");
    let e = perr("clamp(a, b)");
    assert!(e.contains("clamp(x, lo, hi)"), "{e}");
    let e = perr("abs()");
    assert!(
        e.contains("takes 1 argument ") && e.contains("found 0"),
        "{e}"
    );
    let e = perr("max(a b)");
    assert!(e.starts_with("column 7: expected `,` or `)`"), "{e}");
    assert!(e.contains("call of `max` at column 1"), "{e}");
    let e = perr("max + 1");
    assert!(e.starts_with("column 1: `max` is a function"), "{e}");
    let e = perr("a(1)");
    assert!(e.starts_with("column 2: `a` is an operand"), "{e}");
    let e = perr("");
    assert!(e.contains("empty"), "{e}");
    let e = perr("   ");
    assert!(e.contains("empty"), "{e}");
    let e = perr("()");
    assert!(e.starts_with("column 2: expected an operand"), "{e}");
    let e = perr("a + b)");
    assert!(
        e.starts_with("column 6: expected an operator") && e.contains("`)`"),
        "{e}"
    );
    // Columns count characters, not bytes.
    let e = perr("é");
    assert!(e.starts_with("column 1: unexpected character `é`"), "{e}");
    let e = perr("/* c */ a");
    assert!(
        e.starts_with("column 1: expected an operand"),
        "no comments: {e}"
    );
    let e = perr("a + é");
    assert!(e.starts_with("column 5"), "{e}");
    let e = perr("a @ b");
    assert!(e.starts_with("column 3: unexpected character `@`"), "{e}");
}

#[test]
fn unsupported_c_is_named() {
    let e = perr("a = b");
    assert!(
        e.starts_with("column 3: `=`") && e.contains("assignment"),
        "{e}"
    );
    let e = perr("a += b");
    assert!(e.starts_with("column 3: `+=`"), "{e}");
    let e = perr("a <<= b");
    assert!(e.starts_with("column 3: `<<=`"), "{e}");
    let e = perr("a++");
    assert!(e.starts_with("column 2: `++`"), "{e}");
    let e = perr("a--b");
    assert!(e.starts_with("column 2: `--`") && e.contains("- -"), "{e}");
    let e = perr("a + b;");
    assert!(e.starts_with("column 6: `;`"), "{e}");
    let e = perr("a[0]");
    assert!(e.starts_with("column 2: `[`"), "{e}");
    let e = perr("a.x");
    assert!(e.starts_with("column 2: `.`"), "{e}");
}

#[test]
fn bad_literals() {
    let e = perr("a + 1.5L");
    assert!(
        e.starts_with("column 5") && e.contains("long double"),
        "{e}"
    );
    let e = perr("0x1p3");
    assert!(e.contains("hex floating"), "{e}");
    let e = perr("0x1p-3");
    assert!(e.contains("hex floating"), "{e}");
    let e = perr("0x1.8p1f");
    assert!(e.contains("hex floating"), "{e}");
    let e = perr("a + 08");
    assert!(e.starts_with("column 5") && e.contains("octal"), "{e}");
    let e = perr("18446744073709551616");
    assert!(e.contains("out of range"), "{e}");
    let e = perr("0x10000000000000000");
    assert!(e.contains("out of range"), "{e}");
    let e = perr("a * 2f");
    assert!(e.starts_with("column 5") && e.contains("2.0f"), "{e}");
    let e = perr("2ull");
    assert!(e.contains("invalid suffix `ull`"), "{e}");
    let e = perr("2a");
    assert!(e.contains("invalid suffix `a`"), "{e}");
    let e = perr("1.5x");
    assert!(e.contains("invalid suffix `x`"), "{e}");
    let e = perr("1e");
    assert!(e.contains("exponent"), "{e}");
    let e = perr("1e+f");
    assert!(e.contains("exponent"), "{e}");
    let e = perr("0x");
    assert!(e.contains("no digits"), "{e}");
    let e = perr("1.2.3");
    assert!(e.contains("invalid"), "{e}");
    // `0xe+1` is one preprocessing number in C, so the device rejects it too.
    let e = perr("0xe+1");
    assert!(e.contains("single"), "{e}");
    assert_eq!(i32s("0xe + 1", 0, 0), 15);
    assert_eq!(f64s("1e+1 + a", 1.0, 0.0), 11.0, "1e+1 is ten");
}

#[test]
fn float_literal_forms_in_integer_combiners_are_errors() {
    // 1e+1 is a floating literal, so an integer combiner rejects it.
    let e = eerr("a + 1e1", I32);
    assert!(e.contains("floating literal"), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(perr(&deep).contains("nested too deeply"));
    let long = vec!["a"; 100_000].join(" + ");
    assert!(perr(&long).contains("nested too deeply"));
    let unary = "- ".repeat(100_000) + "a";
    assert!(perr(&unary).contains("nested too deeply"));
    let moderate = vec!["a"; 200].join(" + ");
    assert_eq!(i32s(&moderate, 2, 0), 400);
    let parens = format!("{}a{}", "(".repeat(200), ")".repeat(200));
    assert_eq!(i32s(&parens, 2, 0), 2);
}

#[test]
fn whitespace_and_reuse() {
    let x = Expr::parse(" \ta\n*\r\nb ").unwrap();
    let y = x.clone();
    assert_eq!(
        y.eval(I32, Value::I32(3), Value::I32(4)).unwrap(),
        Value::I32(12)
    );
    assert_eq!(
        x.eval(F64, Value::F64(0.5), Value::F64(4.0)).unwrap(),
        Value::F64(2.0)
    );
    assert_eq!(
        x.eval(U64, Value::U64(u64::MAX), Value::U64(2)).unwrap(),
        Value::U64(u64::MAX - 1)
    );
    assert!(format!("{x:?}").contains("Expr"));
}
