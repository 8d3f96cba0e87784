//! Unit tests of the host references.

use super::*;

#[test]
fn random_is_seeded_and_not_all_zero() {
    for op in Op::ALL {
        for ty in ElemType::REDUCIBLE {
            let a = random_input(op, ty, 1000, 1);
            assert_eq!(a, random_input(op, ty, 1000, 1));
            let nz = (0..a.len()).filter(|&i| a.float(i) != 0.0).count();
            assert!(nz > 0, "{op} {ty}");
        }
    }
}
#[test]
fn reference_wraps_integers() {
    let r = reference(Op::Plus, &HostVec::I32(vec![i32::MAX, 1]), None);
    assert_eq!(r.exact, Some(i32::MIN as i128));
    let r = reference(
        Op::Minimum,
        &HostVec::U32(vec![5, 3, 9]),
        Some(Value::U32(4)),
    );
    assert_eq!(r.exact, Some(3));
}


#[test]
fn argmin_ties_go_to_the_lowest_index() {
    let d = HostVec::I32(vec![4, -2, 7, -2, 9, -2]);
    let r = reference_arg(false, &d, None);
    assert_eq!((r.value, r.index, r.ties), (Value::I32(-2), 1, 3));
    // The initial pair takes part with its own index.
    let r = reference_arg(false, &d, Some((Value::I32(-2), 0)));
    assert_eq!((r.value, r.index), (Value::I32(-2), 0));
    let r = reference_arg(true, &d, Some((Value::I32(9), 5)));
    assert_eq!((r.value, r.index), (Value::I32(9), 4));
    let r = reference_arg(true, &HostVec::F32(vec![]), None);
    assert_eq!(
        (r.value, r.index),
        (Value::F32(f32::NEG_INFINITY), u64::MAX)
    );
}

#[test]
fn ties_input_has_ties() {
    for ty in ElemType::REDUCIBLE {
        let d = random_input_ties(ty, 5000, 3);
        assert_eq!(d, random_input_ties(ty, 5000, 3));
        let lo = reference_arg(false, &d, None);
        let hi = reference_arg(true, &d, None);
        assert!(lo.ties > 1 && hi.ties > 1, "{ty}: {lo:?} {hi:?}");
        assert!(lo.value != hi.value, "{ty}");
    }
}

#[test]
fn custom_ops_are_classified_and_folded() {
    let mul = Expr::parse("a*b").unwrap();
    let max = Expr::parse("a > b ? a : b").unwrap();
    let odd = Expr::parse("a + b + 1").unwrap();
    for ty in ElemType::REDUCIBLE {
        assert_eq!(custom_behaves_as(&mul, ty), Some(Op::Multiplies), "{ty}");
        assert_eq!(custom_behaves_as(&max, ty), Some(Op::Maximum), "{ty}");
        assert_eq!(custom_behaves_as(&odd, ty), None, "{ty}");
    }
    assert_eq!(
        custom_behaves_as(&Expr::parse("max(a,b)").unwrap(), ElemType::U32),
        Some(Op::Maximum)
    );
    let d = HostVec::I32(vec![3, -1, 5, 1, 1]);
    let op = HostOp::Custom {
        expr: &mul,
        identity: Some(Value::I32(1)),
    };
    let r = reference_with(op, &d, Some(Value::I32(2))).unwrap();
    assert_eq!(r.exact, Some(-30));
    assert_eq!(reference_with(op, &d, None).unwrap().exact, Some(-15));
    // Identity-less: folded from the first element.
    let op = HostOp::Custom {
        expr: &max,
        identity: None,
    };
    assert_eq!(reference_with(op, &d, None).unwrap().exact, Some(5));
    assert!(reference_with(op, &HostVec::I32(vec![]), None).is_err());
    // Floats in float64.
    let f = HostVec::F32(vec![2.0, 0.5, -1.0, 4.0]);
    let op = HostOp::Custom {
        expr: &mul,
        identity: Some(Value::F32(1.0)),
    };
    assert_eq!(reference_with(op, &f, None).unwrap().value, -4.0);
}

#[test]
fn identities_are_checked() {
    let mul = Expr::parse("a*b").unwrap();
    let s = [Value::I32(3), Value::I32(-7)];
    assert!(check_custom_identity(&mul, Value::I32(1), &s).is_ok());
    let e = check_custom_identity(&mul, Value::I32(0), &s).unwrap_err();
    assert!(e.contains("0 is not an identity on i32"), "{e}");
}

#[test]
fn span_bins_and_references() {
    let d = HostVec::U32((0..1000).map(|j| j * 7 % 13).collect());
    let r = reference_span(HostOp::Builtin(Op::Plus), &d, 16, None).unwrap();
    let total: i128 = r.iter().map(|b| b.exact.unwrap()).sum();
    assert_eq!(
        total,
        (0..1000u32).map(|j| (j * 7 % 13) as i128).sum::<i128>()
    );
    assert_eq!(r.iter().map(|b| b.n).sum::<usize>(), 1000);
    assert!(r.iter().all(|b| b.n > 0));
    // Keys: sign extension for signed integers, bit patterns for floats.
    assert_eq!(HostVec::I32(vec![-1]).key(0), u64::MAX);
    assert_eq!(HostVec::F32(vec![1.0]).key(0), 0x3f80_0000);
    assert_eq!(
        span_bin_cl(ElemType::F32, "x[i]", 256),
        "(((ulong)as_uint(x[i]) * 131ul + (ulong)i) % 256ul)"
    );
}

#[test]
fn bounds_and_checks() {
    let r = reference(Op::Plus, &HostVec::F32(vec![1.0, 2.0]), None);
    assert!(check_within(Value::F32(3.0), &r, 0.0).is_ok());
    assert!(check_within(Value::F32(3.5), &r, 0.1).is_err());
    assert!(float_bound(Some(Op::Maximum), ElemType::F32, &r, 10.0) == 0.0);
    assert!(
        float_bound(None, ElemType::F32, &r, 10.0)
            > float_bound(Some(Op::Plus), ElemType::F32, &r, 10.0)
    );
    let r = reference(Op::Plus, &HostVec::I32(vec![1, 2]), None);
    assert!(check_within(Value::I32(3), &r, 0.0).is_ok());
    assert!(check_within(Value::I32(4), &r, 0.0).is_err());
}
