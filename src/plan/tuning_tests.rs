//! Measured planning on synthetic tuning tables and the first-use rules: no device needed.

use super::*;
use crate::caps::{fixtures, Mask};
use crate::ops::Op;

fn req(n: u64, ops: &[Op], ty: ElemType) -> Request {
    Request {
        form: FormRequest::Range { n },
        shape: Shape::default(),
        vars: ops.iter().map(|&op| VarRequest::new(op, ty)).collect(),
        strategy: Strategy::AUTO,
        determinism: Determinism::Deterministic,
        tuning: None,
        pure_body: true,
        narrow_reads: false,
    }
}

fn span(n: u64, len: usize) -> Request {
    let mut r = req(n, &[Op::Plus], ElemType::U32);
    r.vars[0].span = Some(len);
    r
}

fn geo(local: usize, groups_per_cu: u64, unroll: usize) -> TunedGeometry {
    TunedGeometry {
        local,
        groups_per_cu,
        unroll,
        order: IndexOrder::Contiguous,
        hot: None,
    }
}

/// An entry: `strategy` measured at 2^log2_n in `best_ns`, against the rule plan `rule`.
#[allow(clippy::too_many_arguments)]
fn entry(
    ops: &[OpClass],
    ty: ElemType,
    log2_n: u32,
    strategy: &str,
    g: TunedGeometry,
    best_ns: u64,
    rule: &str,
    rule_ns: u64,
) -> TuneEntry {
    let s = Strategy::parse(strategy).unwrap();
    TuneEntry {
        class: LaunchClass {
            ops: ops.to_vec(),
            ty,
            span_log2: None,
            exact: false,
        },
        log2_n,
        strategy: s,
        geometry: g,
        plan: if s == Strategy::AUTO {
            rule.to_string()
        } else {
            s.to_string()
        },
        best_ns,
        rule_plan: rule.to_string(),
        rule_geometry: geo(64, 4, 8),
        rule_ns,
        runner_up: Some(("tree+extra-pass".into(), best_ns * 3 / 2)),
        tried: 7,
    }
}

fn table(caps: &DeviceCaps, entries: Vec<TuneEntry>) -> TuneTable {
    TuneTable {
        key: DeviceKey::new(caps, "test"),
        measured: "synthetic".into(),
        entries,
        segments: Vec::new(),
    }
}

/// PoCL: i32 sum measured at 2^14 (local-atomic+atomic, the rule plan) and at 2^20
/// (tree+last-group, 1.9x the rule plan, with its own geometry).
fn pocl_i32_table() -> (DeviceCaps, TuneTable) {
    let caps = fixtures::pocl_cpu();
    let t = table(
        &caps,
        vec![
            entry(
                &[OpClass::Sum],
                ElemType::I32,
                14,
                "local-atomic+atomic",
                geo(64, 4, 8),
                7_000,
                "local-atomic+atomic",
                7_000,
            ),
            entry(
                &[OpClass::Sum],
                ElemType::I32,
                20,
                "tree+last-group",
                geo(32, 8, 4),
                100_000,
                "local-atomic+atomic",
                190_000,
            ),
        ],
    );
    (caps, t)
}

#[test]
fn a_covered_request_follows_the_table_with_its_figures() {
    let (caps, t) = pocl_i32_table();
    let p = plan_tuned(&caps, &t, &req(1 << 20, &[Op::Plus], ElemType::I32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
    assert_eq!((p.local, p.unroll), (32, 4));
    assert_eq!(p.groups, 16, "8 groups per compute unit x 2");
    let why = &p.vars[0].group_reason;
    assert!(
        why.starts_with("measured: tree+last-group 1.90x local-atomic+atomic"),
        "{why}"
    );
    assert!(why.contains("at 2^20 on this device") && why.contains("100.0 us vs 190.0 us"));
    assert_eq!(&p.vars[0].cross_reason, why);
    assert!(
        p.geometry_reason.contains("measured"),
        "{}",
        p.geometry_reason
    );
    // Without the table: the rules (here a first-use rule).
    let p = plan(&caps, &req(1 << 20, &[Op::Plus], ElemType::I32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
    assert!(!p.vars[0].group_reason.contains("measured"));
}

#[test]
fn the_nearest_measured_size_decides_and_the_reason_names_it() {
    let (caps, t) = pocl_i32_table();
    let r = |n: u64| plan_tuned(&caps, &t, &req(n, &[Op::Plus], ElemType::I32)).unwrap();
    // 2^16 is nearer 2^14, 2^18 is halfway (the smaller wins), 2^19 and 2^28 nearer 2^20.
    for (n, g) in [
        (1u64 << 10, GroupAlgo::LocalAtomic),
        (1 << 16, GroupAlgo::LocalAtomic),
        (1 << 17, GroupAlgo::LocalAtomic),
        (1 << 19, GroupAlgo::Tree),
        (1 << 28, GroupAlgo::Tree),
        (3_000_001, GroupAlgo::Tree),
    ] {
        assert_eq!(r(n).vars[0].group, g, "n = {n}");
    }
    assert!(r(1 << 17).vars[0]
        .group_reason
        .contains("at 2^14 (the nearest size measured to n = 131072)"));
    // A measurement that confirms the rule plan says so.
    let why = &r(1 << 14).vars[0].group_reason;
    assert!(
        why.contains("local-atomic+atomic is the fastest of 7 plans at 2^14"),
        "{why}"
    );
    assert!(
        why.contains("1.50x the next strategy tree+extra-pass"),
        "{why}"
    );
}

#[test]
fn forced_strategy_and_expert_geometry_win_over_the_table() {
    let (caps, t) = pocl_i32_table();
    let mut r = req(1 << 20, &[Op::Plus], ElemType::I32);
    r.strategy = Strategy::parse("local-atomic+extra-pass").unwrap();
    let p = plan_tuned(&caps, &t, &r).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::LocalAtomic);
    assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
    assert_eq!(p.vars[0].group_reason, "forced");
    assert_eq!(
        (p.local, p.unroll),
        (64, 8),
        "the rules' geometry, not the table's"
    );
    // A forced group step alone: the cross step is the rules', not the table's.
    r.strategy = Strategy::parse("tree").unwrap();
    let p = plan_tuned(&caps, &t, &r).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
    // CLREDUCE_TUNE: the table's strategy, the expert's geometry.
    let mut r = req(1 << 20, &[Op::Plus], ElemType::I32);
    r.tuning = Some(Tuning::parse("local=16").unwrap());
    let p = plan_tuned(&caps, &t, &r).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    assert_eq!(p.local, 16);
    assert_eq!(
        p.unroll, 8,
        "the rules' accumulators: the expert's override is taken whole"
    );
    assert!(!p.geometry_reason.contains("measured"));
}

#[test]
fn uncovered_requests_and_other_devices_use_the_rules() {
    let (caps, t) = pocl_i32_table();
    let rules = |r: &Request| plan(&caps, r).unwrap();
    // Another op class, another type, several variables, an nd_range: not measured.
    for r in [
        req(1 << 20, &[Op::Maximum], ElemType::I32),
        req(1 << 20, &[Op::Plus], ElemType::I64),
        req(1 << 20, &[Op::Plus, Op::Plus], ElemType::I32),
        Request {
            form: FormRequest::NdRange {
                global: 1 << 20,
                local: 64,
            },
            ..req(0, &[Op::Plus], ElemType::I32)
        },
    ] {
        assert_eq!(plan_tuned(&caps, &t, &r).unwrap(), rules(&r));
    }
    // A table measured on another device (or driver) is not followed.
    let mut other = t.clone();
    other.key.driver = "4.0".into();
    let r = req(1 << 20, &[Op::Plus], ElemType::I32);
    assert_eq!(plan_tuned(&caps, &other, &r).unwrap(), rules(&r));
    let intel = fixtures::intel_cpu();
    assert_eq!(
        plan_tuned(&intel, &t, &r).unwrap(),
        plan(&intel, &r).unwrap()
    );
}

#[test]
fn a_table_plan_the_request_cannot_use_falls_back_to_the_rules() {
    let caps = fixtures::intel_cpu();
    // Float atomics are order-dependent: a table entry for f32 sum that says
    // local-atomic+atomic (measured in relaxed mode, say) is not followed in deterministic mode.
    let t = table(
        &caps,
        vec![entry(
            &[OpClass::Sum],
            ElemType::F32,
            20,
            "local-atomic+atomic",
            geo(1, 8, 8),
            10_000,
            "wg-reduce+last-group",
            20_000,
        )],
    );
    let r = req(1 << 20, &[Op::Plus], ElemType::F32);
    let p = plan_tuned(&caps, &t, &r).unwrap();
    assert_eq!(p, plan(&caps, &r).unwrap());
    assert_eq!(p.vars[0].group, GroupAlgo::WgReduce);
    let mut relaxed = r.clone();
    relaxed.determinism = Determinism::Relaxed;
    let p = plan_tuned(&caps, &t, &relaxed).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::LocalAtomic);
    assert!(!p.deterministic);
    // A mask that removes what the table's plan needs.
    let (pocl, t) = pocl_i32_table();
    let masked = Mask::parse("no-atomics").unwrap().apply(&pocl);
    let t = TuneTable {
        key: DeviceKey::new(&masked, "test"),
        ..t
    };
    let mut e = t.entries[1].clone();
    e.strategy = Strategy::parse("local-atomic+atomic").unwrap();
    let t = TuneTable {
        entries: vec![e],
        ..t
    };
    let r = req(1 << 20, &[Op::Plus], ElemType::I32);
    let p = plan_tuned(&masked, &t, &r).unwrap();
    assert_eq!(p, plan(&masked, &r).unwrap());
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
}

#[test]
fn a_measured_mixed_plan_keeps_the_rules_steps_with_the_measured_geometry() {
    // Intel f32 sum+min+max: the rules mix wg-reduce+last-group and wg-reduce+atomic, which no
    // single forced strategy gives; the entry is automatic with a geometry.
    let caps = fixtures::intel_cpu();
    let rule = "wg-reduce+last-group,wg-reduce+atomic,wg-reduce+atomic";
    let mut e = entry(
        &[OpClass::Sum, OpClass::MinMax, OpClass::MinMax],
        ElemType::F32,
        24,
        "auto",
        geo(1, 16, 4),
        4_000_000,
        rule,
        4_000_000,
    );
    e.rule_geometry = geo(1, 8, 4);
    let t = table(&caps, vec![e]);
    let r = req(
        1 << 24,
        &[Op::Plus, Op::Minimum, Op::Maximum],
        ElemType::F32,
    );
    let p = plan_tuned(&caps, &t, &r).unwrap();
    assert_eq!(p.summary(), rule);
    assert_eq!(p.groups, 32, "16 groups per compute unit");
    assert!(
        p.vars[0].group_reason.contains("; measured: "),
        "{}",
        p.vars[0].group_reason
    );
    assert!(p.geometry_reason.contains("measured"));
}

#[test]
fn first_use_rule_fits_span_copies_in_l1_and_shares_them_while_the_fold_dominates() {
    let pocl = fixtures::pocl_cpu();
    // u32-hist256: 64 work-items of private copies are 64 KiB; 16 fit in 16 KiB.
    // From 2^14 there are several groups: partials and the last group, not global atomics.
    for (n, store, local) in [
        (1u64 << 10, SpanStore::LocalShared, 64),
        (1 << 12, SpanStore::LocalPrivate, 16),
        (1 << 14, SpanStore::LocalPrivate, 16),
        (1 << 18, SpanStore::LocalPrivate, 16),
        (1 << 24, SpanStore::LocalPrivate, 16),
    ] {
        let p = plan(&pocl, &span(n, 256)).unwrap();
        let v = &p.vars[0];
        assert_eq!(
            (v.span.unwrap().store, p.local, v.cross),
            (store, local, CrossAlgo::LastGroup),
            "PoCL n = {n}"
        );
        if n >= 1 << 14 {
            assert!(
                v.cross_reason.contains("partials and the last work-group"),
                "{}",
                v.cross_reason
            );
        }
        match store {
            SpanStore::LocalShared => {
                assert_eq!(v.group, GroupAlgo::LocalAtomic);
                assert!(
                    v.group_reason.starts_with("first-use rule"),
                    "{}",
                    v.group_reason
                );
                assert!(v
                    .group_reason
                    .contains("fold of 1 groups x 16 work-items x 256"));
            }
            _ => {
                assert!(
                    p.geometry_reason.contains("first-use rule"),
                    "{}",
                    p.geometry_reason
                );
                assert!(
                    p.geometry_reason.contains("(16384 bytes)"),
                    "{}",
                    p.geometry_reason
                );
            }
        }
    }
    // Sixteen bins fit with 64 work-items: the rules' plan, with the small-n rule not applying
    // to spans.
    let p = plan(&pocl, &span(1 << 20, 16)).unwrap();
    assert_eq!(
        (p.vars[0].span.unwrap().store, p.local),
        (SpanStore::LocalPrivate, 64)
    );
    // Intel runs one work-item per group: 1 KiB of copies, unchanged.
    let p = plan(&fixtures::intel_cpu(), &span(1 << 10, 256)).unwrap();
    assert_eq!(
        (p.vars[0].span.unwrap().store, p.local),
        (SpanStore::LocalPrivate, 1)
    );
    let p = plan(&fixtures::intel_cpu(), &span(1 << 18, 256)).unwrap();
    let v = &p.vars[0];
    assert_eq!(
        (v.span.unwrap().store, p.local, v.cross),
        (SpanStore::LocalPrivate, 1, CrossAlgo::LastGroup)
    );
    // GPUs keep their own order; a forced strategy skips the rules.
    let p = plan(&fixtures::nvidia_h200(), &span(1 << 10, 256)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::LocalShared);
    let mut forced = span(1 << 10, 256);
    forced.strategy = Strategy::parse("tree").unwrap();
    let p = plan(&pocl, &forced).unwrap();
    assert_eq!(
        (p.vars[0].span.unwrap().store, p.local),
        (SpanStore::LocalPrivate, 64)
    );
    // Float plus has no deterministic local atomic, and a mask can remove local atomics: the
    // shared copy does not plan, the next hint (private copies that fit) does.
    let mut f = span(1 << 10, 256);
    f.vars[0].ty = ElemType::F32;
    let masked = Mask::parse("no-local-atomics").unwrap().apply(&pocl);
    for (caps, r) in [(&pocl, &f), (&masked, &span(1 << 10, 256))] {
        let p = plan(caps, r).unwrap();
        assert_eq!(
            (p.vars[0].span.unwrap().store, p.local),
            (SpanStore::LocalPrivate, 16)
        );
    }
    // An expert geometry stays.
    let mut expert = span(1 << 16, 256);
    expert.tuning = Some(Tuning::parse("local=32").unwrap());
    assert_eq!(plan(&pocl, &expert).unwrap().local, 32);
}

#[test]
fn launch_classes() {
    let c = LaunchClass::of(&req(
        8,
        &[Op::Plus, Op::Minimum, Op::Maximum],
        ElemType::F32,
    ))
    .unwrap();
    assert_eq!(c.ops, vec![OpClass::Sum, OpClass::MinMax, OpClass::MinMax]);
    assert_eq!(c.to_string(), "f32 sum+minmax+minmax");
    let mut mixed = req(8, &[Op::Plus, Op::Plus], ElemType::F32);
    mixed.vars[1].ty = ElemType::I32;
    assert_eq!(LaunchClass::of(&mixed), None);
    let s = LaunchClass::of(&span(8, 200)).unwrap();
    assert_eq!(
        (s.span_log2, s.to_string()),
        (Some(8), "u32 sum span 2^8".into())
    );
    let mut two = span(8, 256);
    two.vars.push(VarRequest::new(Op::Plus, ElemType::U32));
    assert_eq!(LaunchClass::of(&two), None);
    let mut arg = req(8, &[Op::Plus], ElemType::F32);
    arg.vars[0].op = crate::ops::Operator::ArgMin;
    assert_eq!(LaunchClass::of(&arg).unwrap().ops, vec![OpClass::Arg]);
}

#[test]
fn tables_round_trip_through_json_and_bad_fields_are_errors() {
    let (_, t) = pocl_i32_table();
    let text = serde_json::to_string(&t).unwrap();
    assert!(text.contains("\"strategy\":\"tree+last-group\""), "{text}");
    assert!(text.contains("\"order\":\"contiguous\""));
    let back: TuneTable = serde_json::from_str(&text).unwrap();
    assert_eq!(back, t);
    for (from, to) in [
        ("\"tree+last-group\"", "\"tree+sideways\""),
        ("\"contiguous\"", "\"diagonal\""),
        ("\"i32\"", "\"i33\""),
    ] {
        let bad = text.replacen(from, to, 1);
        assert!(serde_json::from_str::<TuneTable>(&bad).is_err(), "{to}");
    }
    // The printed table has a row per entry with the gain over the rule plan.
    let shown = t.to_string();
    assert!(
        shown.contains("i32 sum") && shown.contains("1.90x"),
        "{shown}"
    );
}

#[test]
fn first_use_rule_prefers_the_tree_to_local_atomics_on_a_cpu() {
    let pocl = fixtures::pocl_cpu();
    for ops in [
        &[Op::Plus][..],
        &[Op::Maximum],
        &[Op::Plus, Op::Minimum, Op::BitOr],
    ] {
        for ty in [ElemType::I32, ElemType::I64] {
            let p = plan(&pocl, &req(1 << 20, ops, ty)).unwrap();
            for v in &p.vars {
                assert_eq!(v.group, GroupAlgo::Tree, "{ops:?} {ty}");
                assert_eq!(
                    v.cross,
                    CrossAlgo::Atomic,
                    "{ops:?} {ty}: the cross step stays the rules'"
                );
                assert!(
                    v.group_reason.starts_with("first-use rule"),
                    "{}",
                    v.group_reason
                );
            }
        }
    }
    // Up to 2^16 indices the work-groups have 16 work-items, with their own reason.
    let p = plan(&pocl, &req(1 << 14, &[Op::Plus], ElemType::I32)).unwrap();
    assert_eq!((p.vars[0].group, p.local), (GroupAlgo::Tree, 16));
    assert!(p.vars[0].group_reason.starts_with("first-use rule"));
    assert!(
        p.geometry_reason
            .contains("16 work-items per group up to 2^16"),
        "{}",
        p.geometry_reason
    );
    let p = plan(
        &pocl,
        &req(1 << 16, &[Op::Plus, Op::Minimum], ElemType::F32),
    )
    .unwrap();
    assert_eq!(p.local, 16);
    assert_eq!(
        plan(&pocl, &req(1 << 17, &[Op::Plus], ElemType::F32))
            .unwrap()
            .local,
        64
    );
    assert_eq!(
        plan(
            &fixtures::intel_cpu(),
            &req(1 << 10, &[Op::Plus], ElemType::F32)
        )
        .unwrap()
        .local,
        1
    );
    // Forced local atomics still run; GPUs and devices with group functions are not touched.
    let mut forced = req(1 << 20, &[Op::Plus], ElemType::I32);
    forced.strategy = Strategy::parse("local-atomic").unwrap();
    assert_eq!(
        plan(&pocl, &forced).unwrap().vars[0].group,
        GroupAlgo::LocalAtomic
    );
    let p = plan(
        &fixtures::oclgrind(),
        &req(1 << 20, &[Op::Plus], ElemType::I32),
    )
    .unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::LocalAtomic);
    let p = plan(
        &fixtures::intel_cpu(),
        &req(1 << 20, &[Op::Plus], ElemType::I32),
    )
    .unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::WgReduce);
    // Intel's sub-group reduce (bitwise ops, products: no collective) gives way to the tree,
    // for every variable of the launch.
    let p = plan(
        &fixtures::intel_cpu(),
        &req(1 << 20, &[Op::BitOr], ElemType::U32),
    )
    .unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    assert!(p.vars[0].group_reason.contains("not sg-reduce"));
    let p = plan(
        &fixtures::intel_cpu(),
        &req(1 << 20, &[Op::Plus, Op::BitXor], ElemType::I32),
    )
    .unwrap();
    assert_eq!(p.summary(), "tree+atomic,tree+atomic");
    // Floats on PoCL already use the tree (no float atomics): the rules' reason stays.
    let p = plan(&pocl, &req(1 << 20, &[Op::Plus], ElemType::F32)).unwrap();
    assert!(
        !p.vars[0].group_reason.starts_with("first-use"),
        "{}",
        p.vars[0].group_reason
    );
}

/// `CLREDUCE_TUNE` values out of range are refused, never clamped; the device's own limit on
/// an explicit work-group is a planning error, not a quiet cap.
#[test]
fn out_of_range_geometry_overrides_are_refused() {
    for bad in [
        "local=0",
        "local=99999999",
        "groups_per_cu=0",
        "groups_per_cu=18446744073709551615",
        "unroll=0",
        "unroll=3",
        "unroll=32",
        "order=4",
        "spec=2",
    ] {
        match Tuning::parse(bad) {
            Err(crate::Error::UnknownName { name, .. }) => assert_eq!(name, bad),
            r => panic!("{bad}: {r:?}"),
        }
    }
    let ok = Tuning::parse("local=1,groups_per_cu=65536,unroll=16,order=3,spec=1").unwrap();
    assert_eq!(ok.problem(), None);
    let caps = fixtures::pocl_cpu();
    let mut r = req(1 << 20, &[Op::Plus], ElemType::F32);
    let too_big = caps.max_local_1d() + 1;
    r.tuning = Some(Tuning::parse(&format!("local={too_big}")).unwrap());
    match plan(&caps, &r) {
        Err(crate::Error::WorkGroupTooLarge { local, .. }) => assert_eq!(local, too_big),
        p => panic!("{p:?}"),
    }
    r.tuning = Some(Tuning {
        unroll: Some(3),
        ..Tuning::default()
    });
    assert!(matches!(
        plan(&caps, &r),
        Err(crate::Error::InvalidRange { .. })
    ));
}

/// An exact sum is its own launch class: a deterministic f32 sum's entry does not steer it, an
/// exact one does (steps, geometry and the hot form, which the JSON keeps), and the
/// deterministic sum ignores the exact entry.
#[test]
fn exact_sums_have_their_own_class_and_follow_its_hot_form() {
    let caps = fixtures::intel_cpu();
    let mut exact = req(1 << 20, &[Op::Plus], ElemType::F32);
    exact.determinism = Determinism::Exact;
    let class = LaunchClass::of(&exact).unwrap();
    assert!(class.exact);
    assert_eq!(class.to_string(), "f32 sum exact");
    let plain = req(1 << 20, &[Op::Plus], ElemType::F32);
    assert!(!LaunchClass::of(&plain).unwrap().exact);
    // Beside a minimum the launch is still exact; without a float sum it is not.
    let mut smm = req(1 << 20, &[Op::Plus, Op::Minimum], ElemType::F32);
    smm.determinism = Determinism::Exact;
    assert!(LaunchClass::of(&smm).unwrap().exact);
    let mut ints = req(1 << 20, &[Op::Plus], ElemType::I32);
    ints.determinism = Determinism::Exact;
    assert!(!LaunchClass::of(&ints).unwrap().exact);

    let rules = plan(&caps, &exact).unwrap();
    let rule_hot = rules.vars[0].exact.unwrap().hot;
    let other = HotLoop::ALL
        .into_iter()
        .find(|&h| h != rule_hot && h != HotLoop::Off)
        .unwrap();
    // A deterministic entry with another geometry leaves the exact launch to the rules.
    let det = table(
        &caps,
        vec![entry(
            &[OpClass::Sum],
            ElemType::F32,
            20,
            "tree+extra-pass",
            geo(16, 2, 2),
            100,
            "tree+atomic",
            200,
        )],
    );
    let p = plan_tuned(&caps, &det, &exact).unwrap();
    assert_eq!((p.local, p.unroll), (rules.local, rules.unroll));
    assert_eq!(p.vars[0].exact.unwrap().hot, rule_hot);
    assert!(!p.vars[0].group_reason.contains("measured"));
    // An exact entry with another hot form steers it, and survives a round trip through JSON.
    let mut e = entry(
        &[OpClass::Sum],
        ElemType::F32,
        20,
        "tree+extra-pass",
        TunedGeometry {
            hot: Some(other),
            ..geo(16, 2, 2)
        },
        100,
        "tree+atomic",
        200,
    );
    e.class.exact = true;
    let t = table(&caps, vec![e]);
    let text = serde_json::to_string(&t).unwrap();
    assert!(
        text.contains(&format!("\"hot\":\"{}\"", other.name())) && text.contains("\"exact\":true"),
        "{text}"
    );
    let t: TuneTable = serde_json::from_str(&text).unwrap();
    let p = plan_tuned(&caps, &t, &exact).unwrap();
    assert_eq!(p.vars[0].exact.unwrap().hot, other);
    assert_eq!((p.local, p.unroll), (16, 2));
    assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
    assert!(p.vars[0].group_reason.contains("measured"));
    assert!(t.to_string().contains("f32 sum exact"));
    assert!(t.to_string().contains(&format!("hot {}", other.name())));
    // The deterministic sum does not follow the exact entry.
    let q = plan_tuned(&caps, &t, &plain).unwrap();
    assert!(!q.vars[0].group_reason.contains("measured"));
    // A table of an earlier tuner (no `exact`, no `hot`) still reads: deterministic classes.
    let old = serde_json::to_string(&det).unwrap();
    assert!(
        !old.contains("\"exact\"") && !old.contains("\"hot\""),
        "{old}"
    );
}
