//! The NaN rule of the min/max and argmin/argmax references (design/algorithms.md, "NaN in
//! min, max, argmin and argmax") and the overflow rule of float sums (`overflow`).

use super::overflow::sum_overflow;
use super::reference::{check, reference, reference_arg, HostVec};
use crate::ops::Op;
use crate::types::{ElemType, Value};

fn f32s(xs: &[f32]) -> HostVec {
    HostVec::F32(xs.to_vec())
}

/// argmin/argmax skip NaN as the device's `clr_push` does; an all-NaN input gives the
/// identity pair; ties do not count NaN.
#[test]
fn arg_references_skip_nan() {
    let nan = f32::NAN;
    let r = reference_arg(true, &f32s(&[nan, f32::NEG_INFINITY]), None);
    assert_eq!((r.value, r.index), (Value::F32(f32::NEG_INFINITY), 1));
    let r = reference_arg(false, &f32s(&[nan, 2.0, 1.0, nan, 1.0]), None);
    assert_eq!((r.value, r.index, r.ties), (Value::F32(1.0), 2, 2));
    for max in [false, true] {
        let r = reference_arg(max, &f32s(&[nan, nan, nan]), None);
        let id = if max {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        };
        assert_eq!((r.value, r.index, r.ties), (Value::F32(id), u64::MAX, 0));
    }
    // An initial pair that no element beats stays, NaN elements included.
    let r = reference_arg(false, &f32s(&[nan, 5.0]), Some((Value::F32(1.0), 7)));
    assert_eq!((r.value, r.index), (Value::F32(1.0), 7));
}

/// min/max references skip NaN too (the device's `b < a ? b : a` on its accumulator).
#[test]
fn min_max_references_skip_nan() {
    let d = f32s(&[f32::NAN, 3.0, f32::NAN, -2.0]);
    assert_eq!(reference(Op::Minimum, &d, None).value, -2.0);
    assert_eq!(reference(Op::Maximum, &d, None).value, 3.0);
    let all = f32s(&[f32::NAN, f32::NAN]);
    assert_eq!(
        reference(Op::Minimum, &all, None).value,
        f64::from(f32::INFINITY)
    );
}

/// The overflow rule: ±inf or NaN accepted only where a partial sum can round to
/// infinity, and only for sums.
#[test]
fn overflow_rule_of_float_sums() {
    let d = f32s(&[3e38, 3e38, -3e38]);
    let r = reference(Op::Plus, &d, None);
    assert!((r.value - 3e38).abs() < 1e32, "{}", r.value);
    for got in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
        assert!(sum_overflow(Some(Op::Plus), ElemType::F32, got, r.sum_abs, 0.0).is_some());
        assert!(check(Op::Plus, ElemType::F32, got, None, &r, 10.0).is_ok());
    }
    // A finite result is still held to the bound.
    assert!(sum_overflow(Some(Op::Plus), ElemType::F32, 1.0, r.sum_abs, 0.0).is_none());
    assert!(check(Op::Plus, ElemType::F32, 1.0, None, &r, 10.0).is_err());
    // Not for selecting ops, and not where no partial sum can overflow.
    assert!(sum_overflow(
        Some(Op::Maximum),
        ElemType::F32,
        f64::INFINITY,
        r.sum_abs,
        0.0
    )
    .is_none());
    let small = reference(Op::Plus, &f32s(&[1e38, 1e38, -1e38]), None);
    assert!(sum_overflow(
        Some(Op::Plus),
        ElemType::F32,
        f64::INFINITY,
        small.sum_abs,
        0.0
    )
    .is_none());
    assert!(check(Op::Plus, ElemType::F32, f64::INFINITY, None, &small, 10.0).is_err());
    // f64 data summed in f64: the same rule at f64's range.
    let big = reference(
        Op::Plus,
        &HostVec::F64(vec![f64::MAX, f64::MAX, -f64::MAX]),
        None,
    );
    assert!(sum_overflow(
        Some(Op::Plus),
        ElemType::F64,
        f64::INFINITY,
        big.sum_abs,
        0.0
    )
    .is_some());
}
