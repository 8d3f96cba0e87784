use super::*;

#[test]
fn cases_parse() {
    let c = Case::parse("f32-sum-min-max").unwrap();
    assert_eq!(c.vars.len(), 3);
    assert_eq!(Case::parse("f64-max").unwrap().vars[0].0, Op::Maximum);
    assert!(Case::parse("f32").is_err());
    let h = Case::parse("u32-hist256").unwrap();
    assert_eq!(h.shape, Shape::Span(256));
    assert_eq!(h.body, "hist[(uint)x[i] & 255u] += 1u;");
    let h = Case::parse("f64-hist65536").unwrap();
    assert_eq!((h.shape, h.ty), (Shape::Span(65536), ElemType::F64));
    assert_eq!(h.body, "hist[(uint)(as_ulong(x[i]) & 65535ul)] += x[i];");
    let HostVec::F64(v) = h.input(4096, 7) else { panic!("f64 input") };
    // Keys spread over the bins, values multiples of 2^-54 of magnitude 2^-2 to below 2^2.
    let bins: std::collections::BTreeSet<u64> = v.iter().map(|x| x.to_bits() & 65535).collect();
    assert!(bins.len() > 3900, "{}", bins.len());
    assert!(v.iter().all(|x| (0.25..4.0).contains(&x.abs()) && (x * 2f64.powi(54)).fract() == 0.0));
    assert!(v.iter().any(|x| *x < 0.0) && v.iter().any(|x| *x > 0.0));
    for bad in ["u32-hist100", "u32-hist33554432", "f32-hist3", "f64-hist5", "f32-and", "sum"] {
        assert!(Case::parse(bad).is_err(), "{bad}");
    }
    // One body per op, whoever asks: u32-or is `|=` for the bench and the tuner alike.
    assert_eq!(Case::parse("u32-or").unwrap().body, "sum |= x[i];");
    assert_eq!(Case::parse("i64-max").unwrap().body, "combine(sum, x[i]);");
    let a = Case::parse("f32-argmin").unwrap();
    assert_eq!((a.shape, a.ty), (Shape::ArgMin, ElemType::F32));
    for (name, stored) in [("f16-sum", ElemType::F16), ("bf16-argmin", ElemType::BF16)] {
        let c = Case::parse(name).unwrap();
        assert_eq!(
            (c.name.as_str(), c.ty, c.stored),
            (name, ElemType::F32, stored)
        );
    }
    assert!(Case::parse("bf16-sum-exact").unwrap().exact);
    let h = Case::parse("f16-sum").unwrap().input(1000, 3);
    let HostVec::F32(v) = &h else { panic!("{h:?}") };
    assert!(v.iter().all(|&x| crate::Half::from_f32(x).to_f32() == x));
    assert!(v.iter().any(|&x| x != 0.0));
    for c in DEFAULT_CASES.split(',').chain(FULL_CASES.split(',')) {
        assert_eq!(Case::parse(c).unwrap().name, c);
    }
    for c in QUICK_SEGMENT_CASES.split(',').chain(FULL_SEGMENT_CASES.split(',')) {
        let s = Case::parse(c).unwrap();
        assert_eq!(s.name, c);
        assert!(s.layout.is_segmented() && s.class().is_ok(), "{c}");
    }
}

#[test]
fn exact_cases_parse() {
    let e = Case::parse("f32-sum-min-max-exact").unwrap();
    assert!(e.exact && e.vars.len() == 3 && e.name == "f32-sum-min-max-exact");
    assert!(Case::parse("f64-sum-exact").unwrap().exact);
    for bad in [
        "f32-max-exact",
        "i32-sum-exact",
        "u32-hist16-exact",
        "f32-argmin-exact",
    ] {
        assert!(Case::parse(bad).is_err(), "{bad}");
    }
    // Exact sums are a launch class of their own (decision 75); 16-bit input has none.
    let c = e.class().unwrap();
    assert!(c.exact && c.to_string() == "f32 sum+minmax+minmax exact", "{c}");
    assert!(!Case::parse("f32-sum-min-max").unwrap().class().unwrap().exact);
    assert!(Case::parse("f16-sum").unwrap().class().is_err());
}

#[test]
fn segmented_cases_parse() {
    let r = Case::parse("f32-rows-2^10x256").unwrap();
    assert_eq!(r.name, "f32-rows-1024x256");
    assert_eq!(r.layout, Layout::Rows { rows: 1024, cols: 256 });
    assert_eq!((r.body.as_str(), r.vars[0].0), ("sum += x[i];", Op::Plus));
    assert_eq!(r.n_for(1 << 18), 1 << 18);
    assert_eq!(r.n_for(7), 1 << 18, "rows x cols fixes n");
    let c = Case::parse("i32-max-cols-3x5").unwrap();
    assert_eq!(c.name, "i32-max-cols-3x5");
    assert_eq!(
        c.forces(),
        vec![
            Force::Auto,
            Force::Segment(SegmentAlgo::Columns),
            Force::Segment(SegmentAlgo::Stripes),
            Force::Segment(SegmentAlgo::Blocks),
            Force::Segment(SegmentAlgo::Panels)
        ]
    );
    let g = Case::parse("f64-argmin-ragged-16").unwrap();
    assert_eq!((g.shape, g.name.as_str()), (Shape::ArgMin, "f64-argmin-ragged-16"));
    assert_eq!(g.n_for(1000), 1000);
    assert_eq!(
        g.forces().len(),
        10,
        "auto and nine segment plans (merge and runs for CSR; aligned)"
    );
    assert_eq!(Case::parse("f32-sum-rows-4x4").unwrap().name, "f32-rows-4x4");
    for bad in ["u32-hist16-rows-4x4", "f32-sum-exact-ragged-16", "f32-rows-4", "f32-ragged-x"] {
        assert!(Case::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(r.class(), Case::parse("f32-sum").unwrap().class());
    assert!(r.takes(Force::Segment(SegmentAlgo::Tiles)));
    assert!(!r.takes(Force::Strategy(Strategy::all_forced()[0])));
    let plain = Case::parse("f32-sum").unwrap();
    assert!(!plain.takes(Force::Segment(SegmentAlgo::Item)));
    assert_eq!(r.plain_sum(), plain);
    assert_eq!(Case::parse("f16-cols-4x4").unwrap().plain_sum().name, "f16-sum");
}

#[test]
fn forces_parse() {
    assert_eq!(Force::parse("auto").unwrap(), Force::Auto);
    assert_eq!(Force::parse("tiles").unwrap(), Force::Segment(SegmentAlgo::Tiles));
    let s = Strategy::all_forced()[0];
    assert_eq!(Force::parse(&s.to_string()).unwrap(), Force::Strategy(s));
    assert!(Force::parse("sideways").is_err());
    for f in Case::parse("f32-sum").unwrap().forces() {
        assert_eq!(Force::parse(&f.to_string()).unwrap(), f);
    }
}

#[test]
fn segment_references() {
    let c = Case::parse("i32-rows-3x4").unwrap();
    let data = c.input(12, 5);
    let [Expected::Segments(rs)] = &c.expect(&data)[..] else {
        panic!("one segmented variable")
    };
    let HostVec::I32(v) = &data else { panic!() };
    let want: Vec<i128> = v.chunks(4).map(|r| r.iter().map(|&x| x as i128).sum()).collect();
    assert_eq!(rs.iter().map(|r| r.exact.unwrap()).collect::<Vec<_>>(), want);
    let a = Case::parse("i32-argmin-cols-3x4").unwrap();
    let [Expected::ArgSegments(ws)] = &a.expect(&data)[..] else {
        panic!("one argmin variable")
    };
    for (k, w) in ws.iter().enumerate() {
        let col: Vec<(i32, usize)> = (0..3).map(|r| (v[r * 4 + k], r * 4 + k)).collect();
        let best = col.iter().min().unwrap();
        assert_eq!((w.value, w.index), (Value::I32(best.0), best.1 as u64));
    }
}
