//! The host combine over every op and type: integers exactly against i128 arithmetic written
//! out here, floats against the type's own arithmetic with the NaN rule, identities neutral on
//! both sides, and the argmin/argmax rule and the fold.

use super::*;
use crate::ops::CustomOp;

/// SplitMix64 (ops may not import `check`, whose `Rng` is the same generator).
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Seeded operands of `ty`: random bits, small values, and the type's extremes.
fn samples(ty: ElemType, seed: u64) -> Vec<Value> {
    let mut g = Gen(seed ^ (ty as u64) << 32);
    let mut v: Vec<Value> = (0..48)
        .map(|k| {
            let bits = g.next();
            // Every third operand small, so min/max, logical ops and products meet small values.
            let x = if k % 3 == 0 { bits % 7 } else { bits };
            match ty {
                ElemType::I32 => Value::I32(if k % 3 == 0 { x as i32 - 3 } else { x as i32 }),
                ElemType::U32 => Value::U32(x as u32),
                ElemType::I64 => Value::I64(if k % 3 == 0 { x as i64 - 3 } else { x as i64 }),
                ElemType::U64 => Value::U64(x),
                // k/64 in [-64, 64): exactly representable, sums and products exact in f64.
                ElemType::F32 => Value::F32(((x % 8192) as f32 - 4096.0) / 64.0),
                _ => Value::F64(((x % 8192) as f64 - 4096.0) / 64.0),
            }
        })
        .collect();
    let ext: &[Value] = match ty {
        ElemType::I32 => &[Value::I32(i32::MIN), Value::I32(i32::MAX), Value::I32(0)],
        ElemType::U32 => &[Value::U32(u32::MAX), Value::U32(0)],
        ElemType::I64 => &[Value::I64(i64::MIN), Value::I64(i64::MAX), Value::I64(0)],
        ElemType::U64 => &[Value::U64(u64::MAX), Value::U64(0)],
        ElemType::F32 => &[Value::F32(f32::MAX), Value::F32(-0.0), Value::F32(0.0)],
        _ => &[Value::F64(f64::MIN), Value::F64(-0.0), Value::F64(0.0)],
    };
    v.extend_from_slice(ext);
    v
}

/// The integer result of `op`, written out in i128 (products wrap in 128 bits, which is the
/// same modulo 2^64), wrapped to `ty`.
fn int_expected(op: Op, ty: ElemType, a: i128, b: i128) -> i128 {
    let r = match op {
        Op::Plus => a + b,
        Op::Multiplies => a.wrapping_mul(b),
        Op::Minimum => a.min(b),
        Op::Maximum => a.max(b),
        Op::BitAnd => a & b,
        Op::BitOr => a | b,
        Op::BitXor => a ^ b,
        Op::LogicalAnd => i128::from(a != 0 && b != 0),
        Op::LogicalOr => i128::from(a != 0 || b != 0),
    };
    wrap_to(ty, r)
}

#[test]
fn integers_combine_exactly_for_every_op_and_type() {
    let mut checked = 0;
    for ty in ElemType::REDUCIBLE.into_iter().filter(|t| !t.is_float()) {
        let xs = samples(ty, 1);
        for op in Op::ALL {
            for &a in &xs {
                for &b in &xs {
                    let (ai, bi) = (a.as_int().unwrap(), b.as_int().unwrap());
                    let want = int_expected(op, ty, ai, bi);
                    let got = op.combine(a, b).unwrap();
                    assert_eq!(got.ty(), ty, "{op} {ty}");
                    assert_eq!(got.as_int(), Some(want), "{op} {ty}: {a} with {b}");
                    assert_eq!(op.combine_int(ty, ai, bi), want, "{op} {ty} (i128)");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 4 * 9 * 40 * 40);
}

#[test]
fn floats_combine_in_their_own_width() {
    for ty in [ElemType::F32, ElemType::F64] {
        let xs = samples(ty, 2);
        for op in Op::ALL.into_iter().filter(|o| o.valid_for(ty)) {
            for &a in &xs {
                for &b in &xs {
                    let (x, y) = (a.to_f64(), b.to_f64());
                    let want = match op {
                        Op::Plus => x + y,
                        Op::Multiplies => x * y,
                        Op::Minimum => x.min(y),
                        Op::Maximum => x.max(y),
                        Op::LogicalAnd => f64::from(u8::from(x != 0.0 && y != 0.0)),
                        Op::LogicalOr => f64::from(u8::from(x != 0.0 || y != 0.0)),
                        _ => unreachable!("filtered"),
                    };
                    // f32 rounds once from the exact result (the operands are k/64).
                    let want = match ty {
                        ElemType::F32 => Value::F32(want as f32),
                        _ => Value::F64(want),
                    };
                    let got = op.combine(a, b).unwrap();
                    let same = got == want || (got.to_f64() == 0.0 && want.to_f64() == 0.0);
                    assert!(same, "{op} {ty}: {a} with {b} gave {got}, want {want}");
                    if ty == ElemType::F64 {
                        assert_eq!(op.combine_f64(x, y).to_bits(), got.to_f64().to_bits());
                    }
                }
            }
        }
        for op in [Op::BitAnd, Op::BitOr, Op::BitXor] {
            let r = op.combine(xs[0], xs[1]);
            assert!(
                matches!(r, Err(Error::Unsupported { .. })),
                "{op} {ty}: {r:?}"
            );
        }
    }
}

#[test]
fn nan_follows_the_kernels_comparisons() {
    for (nan, one) in [
        (Value::F32(f32::NAN), Value::F32(1.5)),
        (Value::F64(f64::NAN), Value::F64(1.5)),
    ] {
        let is_nan = |v: Value| v.to_f64().is_nan();
        // `b < a ? b : a`: a NaN second operand is never taken, a NaN first one stays.
        assert_eq!(Op::Minimum.combine(one, nan).unwrap(), one);
        assert!(is_nan(Op::Minimum.combine(nan, one).unwrap()));
        assert_eq!(Op::Maximum.combine(one, nan).unwrap(), one);
        assert!(is_nan(Op::Maximum.combine(nan, one).unwrap()));
        assert!(is_nan(Op::Plus.combine(one, nan).unwrap()));
        assert!(is_nan(Op::Multiplies.combine(nan, one).unwrap()));
        // NaN is not zero: true for the logical ops.
        assert_eq!(Op::LogicalAnd.combine(nan, one).unwrap().to_f64(), 1.0);
        let zero = Op::Plus.identity(one.ty()).unwrap();
        assert_eq!(Op::LogicalAnd.combine(nan, zero).unwrap().to_f64(), 0.0);
        assert_eq!(Op::LogicalOr.combine(zero, nan).unwrap().to_f64(), 1.0);
    }
}

#[test]
fn identities_are_neutral_on_both_sides() {
    for ty in ElemType::REDUCIBLE {
        for op in Op::ALL {
            let Some(id) = op.identity(ty) else {
                assert!(!op.valid_for(ty), "{op} {ty} lacks an identity");
                continue;
            };
            assert_eq!(id.ty(), ty, "{op} {ty}");
            for x in samples(ty, 3) {
                // The logical ops give 0 or 1: their neutral element leaves a 0/1 value alone.
                let x = match op {
                    Op::LogicalAnd | Op::LogicalOr => Op::LogicalOr.combine(x, x).unwrap(),
                    _ => x,
                };
                assert_eq!(op.combine(id, x).unwrap(), x, "{op} {ty}: {id} with {x}");
                assert_eq!(op.combine(x, id).unwrap(), x, "{op} {ty}: {x} with {id}");
            }
        }
    }
}

#[test]
fn operands_of_two_types_are_refused() {
    let r = Op::Plus.combine(Value::I32(1), Value::I64(1));
    assert!(matches!(r, Err(Error::TypeMismatch { .. })), "{r:?}");
}

#[test]
fn arg_rule_prefers_the_lower_index_and_never_a_nan() {
    let (one, two) = (Value::F32(1.0), Value::F32(2.0));
    assert!(arg_wins(false, one, 9, two, 0));
    assert!(!arg_wins(true, one, 0, two, 9));
    assert!(arg_wins(true, one, 3, one, 7));
    assert!(!arg_wins(false, one, 7, one, 3));
    assert!(!arg_wins(false, Value::F32(f32::NAN), 0, two, 9));
    assert!(!arg_wins(true, Value::F32(f32::NAN), 0, two, 9));
    // A NaN best is replaced by nothing either (every comparison is false).
    assert!(!arg_wins(false, one, 0, Value::F32(f32::NAN), 9));
    // 64-bit integers compare exactly (as f64 these two would be equal).
    let (a, b) = (Value::I64((1 << 60) + 1), Value::I64(1 << 60));
    assert!(arg_wins(true, a, 5, b, 0));
    assert!(arg_wins(false, b, 5, a, 0));
}

#[test]
fn folds_wrap_keep_magnitudes_and_need_a_start() {
    let mut f = Fold::start(ElemType::U32, Some(Value::U32(u32::MAX)));
    for x in [1u32, 2, 3] {
        f.push(HostOp::Builtin(Op::Plus), Value::U32(x)).unwrap();
    }
    let r = f.finish().unwrap();
    assert_eq!((r.exact, r.n), (Some(5), 3));
    let mut f = Fold::start(ElemType::F32, None);
    assert!(
        f.finish().is_none(),
        "an identity-less fold of nothing has no value"
    );
    for x in [-1.5f32, 4.0, -0.25] {
        f.push(HostOp::Builtin(Op::Plus), Value::F32(x)).unwrap();
    }
    let r = f.finish().unwrap();
    assert_eq!((r.exact, r.value, r.sum_abs, r.n), (None, 2.25, 5.75, 3));
    assert!(f.push(HostOp::Builtin(Op::Plus), Value::I32(1)).is_err());
}

#[test]
fn custom_expressions_agree_with_the_builtin_ops() {
    let pairs = [
        ("a + b", Op::Plus),
        ("a * b", Op::Multiplies),
        ("min(a, b)", Op::Minimum),
        ("a > b ? a : b", Op::Maximum),
        ("a & b", Op::BitAnd),
        ("a | b", Op::BitOr),
        ("a ^ b", Op::BitXor),
        ("a && b", Op::LogicalAnd),
        ("a || b", Op::LogicalOr),
    ];
    for (src, op) in pairs {
        let parsed = ParsedOp::new(&CustomOp::new(src).into()).unwrap();
        let custom = parsed.host().unwrap();
        for ty in ElemType::REDUCIBLE.into_iter().filter(|t| !t.is_float()) {
            let xs = samples(ty, 4);
            for (&a, &b) in xs.iter().zip(xs.iter().rev()) {
                assert_eq!(
                    custom.combine(a, b).unwrap(),
                    op.combine(a, b).unwrap(),
                    "{src} vs {op} on {ty}: {a}, {b}"
                );
            }
        }
    }
    let arg = ParsedOp::new(&Operator::ArgMin).unwrap();
    assert!(arg.host().is_none(), "argmin combines pairs");
    let bad = ParsedOp::new(&CustomOp::new("my_fn(a, b)").into());
    assert!(bad.is_err());
}
