//! Planning tests on the capability fixtures: no device needed.

use super::cross::PTX_STRUCT_LAST_MAX;
use super::*;
use crate::caps::{fixtures, Mask};
use crate::error::Error;
use crate::ops::Op;

pub(super) fn req(form: FormRequest, op: Op, ty: ElemType) -> Request {
    Request {
        form,
        shape: Shape::default(),
        vars: vec![VarRequest::new(op, ty)],
        strategy: Strategy::AUTO,
        determinism: Determinism::Deterministic,
        tuning: None,
        pure_body: true,
        narrow_reads: false,
    }
}
pub(super) const N: FormRequest = FormRequest::Range { n: 1 << 24 };

#[test]
fn nvidia_f32_sum_is_warp_shuffle_last_group_grid_stride() {
    let p = plan(&fixtures::nvidia_h200(), &req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::SgReduce, "PTX warp shuffles");
    assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
    assert_eq!(p.order, IndexOrder::GridStride);
    assert_eq!(p.local, 256);
    assert_eq!(p.groups, 132 * 8);
    assert_eq!(p.passes, 1);
    assert!(p.deterministic);
}

#[test]
fn nvidia_i32_sum_uses_atomics_both_levels_without_shuffles() {
    let p = plan(&fixtures::nvidia_h200(), &req(N, Op::Plus, ElemType::I32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::SgReduce);
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
    let caps = Mask::parse("no-subgroups")
        .unwrap()
        .apply(&fixtures::nvidia_h200());
    let p = plan(&caps, &req(N, Op::Plus, ElemType::I32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::LocalAtomic, "seed variant B");
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
    let p = plan(&caps, &req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
}

#[test]
fn ptx_shuffles_need_whole_warps() {
    let r = req(
        FormRequest::NdRange {
            global: 96 * 5,
            local: 96,
        },
        Op::Multiplies,
        ElemType::F64,
    );
    assert_eq!(
        plan(&fixtures::nvidia_h200(), &r).unwrap().vars[0].group,
        GroupAlgo::SgReduce
    );
    let r = req(
        FormRequest::NdRange {
            global: 1000,
            local: 1000,
        },
        Op::Plus,
        ElemType::F32,
    );
    assert_eq!(
        plan(&fixtures::nvidia_h200(), &r).unwrap().vars[0].group,
        GroupAlgo::Tree
    );
    let mut r = req(
        FormRequest::NdRange {
            global: 9,
            local: 3,
        },
        Op::Plus,
        ElemType::F32,
    );
    r.strategy = Strategy::new(GroupAlgo::SgReduce, CrossAlgo::LastGroup);
    assert!(matches!(
        plan(&fixtures::nvidia_h200(), &r),
        Err(Error::Unsupported { .. })
    ));
}

#[test]
fn intel_prefers_work_group_collectives_and_blocked_order() {
    let p = plan(&fixtures::intel_cpu(), &req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::WgReduce);
    assert_eq!(
        p.vars[0].cross,
        CrossAlgo::LastGroup,
        "float atomics stay off in deterministic mode"
    );
    assert_eq!(p.order, IndexOrder::Contiguous);
    let mut r = req(N, Op::Plus, ElemType::F32);
    r.determinism = Determinism::Relaxed;
    let p = plan(&fixtures::intel_cpu(), &r).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
    assert!(!p.deterministic);
}

#[test]
fn float_max_atomics_are_deterministic() {
    let p = plan(&fixtures::intel_cpu(), &req(N, Op::Maximum, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic);
    assert!(p.deterministic);
}

#[test]
fn multiplies_falls_back_to_sub_groups_or_tree() {
    let p = plan(
        &fixtures::intel_cpu(),
        &req(N, Op::Multiplies, ElemType::I32),
    )
    .unwrap();
    // The capability rules give sg-reduce; on a CPU the first-use rule replaces it with the
    // tree (plan/rules.rs: 10-14x on Intel's CPU runtime).
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    assert!(p.vars[0].group_reason.contains("not sg-reduce"));
    assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
    let p = plan(&fixtures::amd_gpu(), &req(N, Op::Multiplies, ElemType::I32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
}

#[test]
fn masks_drive_every_path() {
    let caps = Mask::parse("no-atomics")
        .unwrap()
        .apply(&fixtures::pocl_cpu());
    let p = plan(&caps, &req(N, Op::Plus, ElemType::I32)).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
    assert_eq!(p.passes, 2);
    let caps = Mask::parse("no-group-reduce")
        .unwrap()
        .apply(&fixtures::intel_cpu());
    // Sub-groups after collectives, then the first-use rule's tree on a CPU.
    let v = &plan(&caps, &req(N, Op::Plus, ElemType::F32)).unwrap().vars[0];
    assert_eq!(v.group, GroupAlgo::Tree);
    assert!(
        v.group_reason.contains("not sg-reduce"),
        "{}",
        v.group_reason
    );
}

#[test]
fn forcing_what_the_device_lacks_names_it() {
    let mut r = req(N, Op::Plus, ElemType::F32);
    r.strategy = Strategy::new(GroupAlgo::WgReduce, CrossAlgo::LastGroup);
    match plan(&fixtures::nvidia_h200(), &r) {
        Err(Error::Unsupported { missing, .. }) => {
            assert!(missing.contains("work-group collective"), "{missing}")
        }
        other => panic!("{other:?}"),
    }
    r.strategy = Strategy::new(GroupAlgo::Tree, CrossAlgo::Atomic);
    match plan(&fixtures::nvidia_h200(), &r) {
        Err(Error::Unsupported { missing, .. }) => {
            assert!(missing.contains("global atomics"), "{missing}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nd_range_errors() {
    let c = fixtures::nvidia_h200();
    let r = req(
        FormRequest::NdRange {
            global: 1000,
            local: 96,
        },
        Op::Plus,
        ElemType::F32,
    );
    assert!(matches!(
        plan(&c, &r),
        Err(Error::NdRangeNotDivisible { .. })
    ));
    let r = req(
        FormRequest::NdRange {
            global: 2048,
            local: 2048,
        },
        Op::Plus,
        ElemType::F32,
    );
    assert!(matches!(plan(&c, &r), Err(Error::WorkGroupTooLarge { .. })));
    let mut small = Mask::parse("no-subgroups").unwrap().apply(&c);
    small.local_mem_size = 1024;
    let r = req(
        FormRequest::NdRange {
            global: 1024,
            local: 1024,
        },
        Op::Plus,
        ElemType::F64,
    );
    assert!(matches!(plan(&small, &r), Err(Error::LocalMemory { .. })));
    // The range form shrinks the work-group instead.
    let p = plan(&small, &req(N, Op::Plus, ElemType::F64)).unwrap();
    assert!(p.local_bytes <= 1024);
}

#[test]
fn wide_indices_past_2_pow_32() {
    let p = plan(
        &fixtures::nvidia_h200(),
        &req(FormRequest::Range { n: 5 << 30 }, Op::Plus, ElemType::F32),
    )
    .unwrap();
    assert!(p.wide_index);
    let p = plan(
        &fixtures::nvidia_h200(),
        &req(FormRequest::Range { n: 1 << 20 }, Op::Plus, ElemType::F32),
    )
    .unwrap();
    assert!(!p.wide_index);
}

#[test]
fn bitwise_on_float_is_refused() {
    assert!(matches!(
        plan(&fixtures::pocl_cpu(), &req(N, Op::BitAnd, ElemType::F32)),
        Err(Error::Unsupported { .. })
    ));
}

/// Every device fixture plans every op and type in both forms (a case per fixture, so
/// `cargo test every_fixture_plans -- nvidia` runs one).
#[rstest::rstest]
#[case::pocl_cpu(fixtures::pocl_cpu())]
#[case::intel_cpu(fixtures::intel_cpu())]
#[case::oclgrind(fixtures::oclgrind())]
#[case::nvidia_h200(fixtures::nvidia_h200())]
#[case::amd_gpu(fixtures::amd_gpu())]
#[case::pocl_new_cpu(fixtures::pocl_new_cpu())]
fn every_fixture_plans_every_op_and_type(#[case] caps: DeviceCaps) {
    for op in Op::ALL {
        for ty in ElemType::REDUCIBLE {
            if !op.valid_for(ty) {
                continue;
            }
            for form in [
                N,
                FormRequest::NdRange {
                    global: 96 * 7,
                    local: 96,
                },
            ] {
                let p = plan(&caps, &req(form, op, ty))
                    .unwrap_or_else(|e| panic!("{} {op} {ty}: {e}", caps.name));
                assert!(p.local_bytes <= caps.local_mem_size);
                assert!(!p.to_string().is_empty());
            }
        }
    }
}

#[test]
fn the_fixture_cases_cover_every_fixture() {
    // The rstest cases above name the fixtures one by one: a new fixture must get a case.
    assert_eq!(fixtures::all().len(), 6);
}

fn span_req(form: FormRequest, op: Op, ty: ElemType, len: usize) -> Request {
    let mut r = req(form, op, ty);
    r.vars[0].span = Some(len);
    r
}

#[test]
fn span_stores_follow_the_device() {
    let nv = fixtures::nvidia_h200();
    let p = plan(&nv, &span_req(N, Op::Plus, ElemType::U32, 256)).unwrap();
    let v = &p.vars[0];
    assert_eq!(
        v.span.unwrap().store,
        SpanStore::LocalShared,
        "GPU histogram"
    );
    assert_eq!(v.cross, CrossAlgo::Atomic);
    assert_eq!(p.local, 256);
    // No float atomics (deterministic anyway): private copies, a smaller work-group.
    let p = plan(&nv, &span_req(N, Op::Plus, ElemType::F32, 256)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::LocalPrivate);
    assert!(p.local_bytes <= nv.local_mem_size && p.local >= 32, "{p}");
    // Too large for local memory.
    // Integers: atomics on copies in scratch below 2^20 elements (collisions), straight on the
    // result from there; ops whose identity is not zero bits straight on the result.
    let p = plan(&nv, &span_req(N, Op::Plus, ElemType::U32, 65536)).unwrap();
    let sp = p.vars[0].span.unwrap();
    assert_eq!((sp.store, sp.copies), (SpanStore::GlobalCopies, 16));
    assert_eq!((p.vars[0].cross, p.passes), (CrossAlgo::ExtraPass, 2));
    let p = plan(&nv, &span_req(N, Op::Plus, ElemType::U32, 1 << 20)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalAtomic);
    let p = plan(&nv, &span_req(N, Op::Minimum, ElemType::U32, 65536)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalAtomic);
    // Deterministic f32 sums too large for private copies: exact digits in global memory, the
    // full launch (decision 59), rounded by an extra pass.
    let full = plan(&nv, &req(N, Op::Plus, ElemType::F32)).unwrap();
    for len in [4096, 65536, 1 << 20, 1 << 24] {
        let p = plan(&nv, &span_req(N, Op::Plus, ElemType::F32, len)).unwrap();
        let v = &p.vars[0];
        assert_eq!(v.span.unwrap().store, SpanStore::GlobalDigits, "{p}");
        assert!(v.exact.is_some() && v.deterministic, "{p}");
        assert_eq!((v.cross, p.passes), (CrossAlgo::ExtraPass, 2));
        assert_eq!(p.groups * p.local as u64, full.groups * full.local as u64);
    }
    // ... and so do exact ones (one atomic per update instead of the 14-limb deposits).
    let mut ex = span_req(N, Op::Plus, ElemType::F32, 65536);
    ex.determinism = Determinism::Exact;
    assert_eq!(
        plan(&nv, &ex).unwrap().vars[0].span.unwrap().store,
        SpanStore::GlobalDigits
    );
    // Without 64-bit atomics: per-work-item copies.
    let no64 = Mask::parse("no-int64-atomics").unwrap().apply(&nv);
    let p = plan(&no64, &span_req(N, Op::Plus, ElemType::F32, 65536)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalPrivate);
    assert!(p.groups * p.local as u64 * 65536 * 4 <= 256 << 20);
    let p = plan(&no64, &span_req(N, Op::Plus, ElemType::F64, 65536)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalPrivate);
    // f64, or f32 past 2^30 work-items (no digits): the exact kit's superaccumulators in global
    // memory, the full launch, rounded by the span pass (decision 79).
    let huge = FormRequest::Range { n: (1 << 30) + 1 };
    for (form, ty) in [(N, ElemType::F64), (huge, ElemType::F32)] {
        for len in [65536, 1 << 20] {
            let p = plan(&nv, &span_req(form, Op::Plus, ty, len)).unwrap();
            let v = &p.vars[0];
            assert_eq!(v.span.unwrap().store, SpanStore::GlobalAtomic, "{p}");
            assert!(v.exact.is_some() && v.deterministic, "{p}");
            assert_eq!((v.cross, p.passes), (CrossAlgo::ExtraPass, 2), "{p}");
            let full = plan(&nv, &req(form, Op::Plus, ty)).unwrap();
            assert!(
                p.groups * p.local as u64 >= full.groups * full.local as u64 / 2,
                "{p}"
            );
        }
    }
    // A small span whose copies only fail to fit an nd_range's work-group keeps them (the launch
    // is not cut): 7 f64 in work-groups of 1024.
    let nd7 = FormRequest::NdRange {
        global: 2048,
        local: 1024,
    };
    let p = plan(&nv, &span_req(nd7, Op::Plus, ElemType::F64, 7)).unwrap();
    assert_eq!(
        p.vars[0].span.unwrap().store,
        SpanStore::GlobalPrivate,
        "{p}"
    );
    assert!(p.vars[0].exact.is_none(), "{p}");
    // ... as exact spans beyond local memory are on every device (no longer rounded by the
    // last work-group alone); a forced atomic cross step keeps that last work-group.
    let pocl = fixtures::pocl_cpu();
    let mut ex = span_req(N, Op::Plus, ElemType::F64, 1 << 20);
    ex.determinism = Determinism::Exact;
    for caps in [&nv, &pocl] {
        let p = plan(caps, &ex).unwrap();
        let v = &p.vars[0];
        assert_eq!(v.span.unwrap().store, SpanStore::GlobalAtomic, "{p}");
        assert_eq!((v.cross, p.passes), (CrossAlgo::ExtraPass, 2), "{p}");
    }
    ex.strategy.cross = Some(CrossAlgo::Atomic);
    let p = plan(&nv, &ex).unwrap();
    assert_eq!((p.vars[0].cross, p.passes), (CrossAlgo::Atomic, 1), "{p}");
    // CPUs keep per-work-item copies for deterministic f64 spans.
    let big = (pocl.local_mem_size as usize / 8 + 1).next_power_of_two();
    let p = plan(&pocl, &span_req(N, Op::Plus, ElemType::F64, big)).unwrap();
    assert_eq!(
        p.vars[0].span.unwrap().store,
        SpanStore::GlobalPrivate,
        "{p}"
    );
    // CPUs: digits once a private copy no longer fits one work-item's local memory.
    let pocl = fixtures::pocl_cpu();
    let big = (pocl.local_mem_size as usize / 4 + 1).next_power_of_two();
    let p = plan(&pocl, &span_req(N, Op::Plus, ElemType::F32, big)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalDigits);
    // CPUs keep a private copy per work-item.
    let p = plan(
        &fixtures::pocl_cpu(),
        &span_req(N, Op::Plus, ElemType::U32, 256),
    )
    .unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::LocalPrivate);
    // nd_range with a fixed work-group that cannot hold private copies.
    let nd = FormRequest::NdRange {
        global: 1024 * 4,
        local: 1024,
    };
    let p = plan(&nv, &span_req(nd, Op::Maximum, ElemType::F64, 4096)).unwrap();
    assert_eq!(p.vars[0].span.unwrap().store, SpanStore::GlobalPrivate);
}

#[test]
fn ptx_acquire_release_publishes_structures_on_nvidia() {
    // NVIDIA's OpenCL without OpenCL C 2.0 acquire/release: the PTX path carries the
    // last-group protocol, so a (value, index) pair still finishes in one launch.
    let nv = fixtures::nvidia_h200();
    assert!(!nv.c11_atomics() && nv.acq_rel());
    let mut r = req(
        FormRequest::Range { n: 1 << 20 },
        Op::Minimum,
        ElemType::F32,
    );
    r.vars[0].op = Operator::ArgMin;
    let p = plan(&nv, &r).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
    assert!(p.ptx_acq_rel && !p.c11_atomics);
    // Above PTX_STRUCT_LAST_MAX the extra pass keeps the main kernel's registers down.
    r.form = FormRequest::Range {
        n: PTX_STRUCT_LAST_MAX + 1,
    };
    let p = plan(&nv, &r).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
    assert!(p.vars[0].cross_reason.contains("registers"));
    r.form = FormRequest::Range { n: 1 << 20 };
    assert!(plan(&nv, &r)
        .unwrap()
        .to_string()
        .contains("NVIDIA PTX acquire/release"));
    // A plain partial keeps the OpenCL 1.2 atomic publish: no PTX ticket for a sum.
    let p = plan(&nv, &req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::LastGroup);
    assert!(!p.ptx_acq_rel);
    // The mask that removes OpenCL C 2.0 atomics removes the PTX path too.
    let masked = Mask::parse("no-c11-atomics").unwrap().apply(&nv);
    let p = plan(&masked, &r).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::ExtraPass);
    assert!(!p.ptx_acq_rel);
    // Never outside NVIDIA, and never beside C11 atomics.
    for c in [
        fixtures::amd_gpu(),
        fixtures::oclgrind(),
        fixtures::intel_cpu(),
    ] {
        assert!(!plan(&c, &r).unwrap().ptx_acq_rel);
    }
    let mut both = fixtures::nvidia_h200();
    both.atomics.order_acq_rel = true;
    both.atomics.scope_device = true;
    assert!(both.c11_atomics());
    assert!(!plan(&both, &r).unwrap().ptx_acq_rel);
}

#[test]
fn argmin_and_custom_ops_plan_without_atomics_unless_declared() {
    let nv = fixtures::nvidia_h200();
    let p = plan(&nv, &req(N, Op::Plus, ElemType::F32)).unwrap();
    assert_eq!(p.vars[0].shape, AccShape::Plain);
    let mut r = req(N, Op::Minimum, ElemType::F32);
    r.vars[0].op = Operator::ArgMin;
    let p = plan(&nv, &r).unwrap();
    assert_eq!(p.vars[0].shape, AccShape::Pair);
    assert_eq!(
        p.vars[0].group,
        GroupAlgo::SgReduce,
        "PTX shuffles move pairs"
    );
    assert_eq!(
        p.vars[0].cross,
        CrossAlgo::ExtraPass,
        "2^24 > PTX_STRUCT_LAST_MAX"
    );
    assert_eq!(p.vars[0].acc_bytes, 16);
    let p = plan(&fixtures::oclgrind(), &r).unwrap();
    assert_eq!(p.vars[0].group, GroupAlgo::Tree);
    assert_eq!(
        p.vars[0].cross,
        CrossAlgo::ExtraPass,
        "no OpenCL C 2.0 atomics to publish a pair"
    );
    let custom = crate::ops::CustomOp::new("a + b").identity(0i32);
    r = req(N, Op::Plus, ElemType::I32);
    r.vars[0].op = custom.clone().into();
    let p = plan(&nv, &r).unwrap();
    assert_eq!(
        p.vars[0].cross,
        CrossAlgo::LastGroup,
        "undeclared: no atomics"
    );
    r.vars[0].op = custom.atomic(Op::Plus).into();
    let p = plan(&nv, &r).unwrap();
    assert_eq!(p.vars[0].cross, CrossAlgo::Atomic, "declared plus");
    r.vars[0].op = crate::ops::CustomOp::new("max(a, b)").into();
    let p = plan(&nv, &r).unwrap();
    assert_eq!(p.vars[0].shape, AccShape::Flagged);
    assert_eq!(p.vars[0].identity, None);
    r.vars[0].init_to_identity = true;
    assert!(matches!(plan(&nv, &r), Err(Error::NoIdentity { .. })));
    r.vars[0].init_to_identity = false;
    r.vars[0].op = crate::ops::CustomOp::new("a + b").identity(0.0f32).into();
    assert!(matches!(plan(&nv, &r), Err(Error::TypeMismatch { .. })));
}

#[test]
fn strategy_parse_round_trips() {
    for s in Strategy::all_forced() {
        assert_eq!(Strategy::parse(&s.to_string()).unwrap(), s);
    }
    assert_eq!(
        Strategy::parse("tree+last").unwrap(),
        Strategy::new(GroupAlgo::Tree, CrossAlgo::LastGroup)
    );
    assert_eq!(Strategy::parse("auto").unwrap(), Strategy::AUTO);
    assert!(Strategy::parse("bogus+x").is_err());
}

/// The vector step (design/decisions.md section 49): GPUs take `DeviceCaps::narrow_vec`
/// consecutive indices per step where the body reads a 16-bit buffer at `[i]`; CPUs (their
/// contiguous chunks), nd_ranges, exact sums and bodies without such reads keep one; the
/// override applies where the step does, and its out-of-range values are refused.
#[test]
fn sixteen_bit_reads_at_i_take_the_vector_step_on_gpus() {
    let h200 = fixtures::nvidia_h200();
    let narrow = |mut r: Request| {
        r.narrow_reads = true;
        r
    };
    let p = plan(&h200, &narrow(req(N, Op::Plus, ElemType::F32))).unwrap();
    assert_eq!((p.vec, p.order), (h200.narrow_vec, IndexOrder::GridStride));
    assert!(h200.narrow_vec > 1);
    assert!(
        p.geometry_reason.contains("consecutive indices per step"),
        "{}",
        p.geometry_reason
    );
    assert!(p.to_string().contains("consecutive indices per step"));
    assert_eq!(
        plan(&h200, &req(N, Op::Plus, ElemType::F32)).unwrap().vec,
        1
    );
    for cpu in [fixtures::pocl_cpu(), fixtures::intel_cpu()] {
        assert_eq!(
            plan(&cpu, &narrow(req(N, Op::Plus, ElemType::F32)))
                .unwrap()
                .vec,
            1
        );
    }
    let nd = FormRequest::NdRange {
        global: 1 << 20,
        local: 256,
    };
    assert_eq!(
        plan(&h200, &narrow(req(nd, Op::Plus, ElemType::F32)))
            .unwrap()
            .vec,
        1
    );
    let mut exact = narrow(req(N, Op::Plus, ElemType::F32));
    exact.determinism = Determinism::Exact;
    assert_eq!(plan(&h200, &exact).unwrap().vec, 1);
    for w in [1usize, 2, 4, 8] {
        let mut r = narrow(req(N, Op::Minimum, ElemType::F32));
        r.tuning = Some(Tuning {
            vec: Some(w),
            ..Tuning::default()
        });
        let p = plan(&h200, &r).unwrap();
        assert_eq!(p.vec, w);
        // 32-bit indices keep room for the vector look-ahead.
        let far = (p.unroll as u64 + 1) * p.groups * p.local as u64 * w as u64;
        assert_eq!(p.wide_index, (1u64 << 24) + far > u32::MAX as u64);
        // On a CPU the override needs the grid-stride order it is built for.
        r.tuning = Some(Tuning {
            vec: Some(w),
            ..Tuning::default()
        });
        assert_eq!(plan(&fixtures::pocl_cpu(), &r).unwrap().vec, 1);
        r.tuning = Some(Tuning {
            vec: Some(w),
            order: Some(IndexOrder::GridStride),
            ..Tuning::default()
        });
        assert_eq!(plan(&fixtures::pocl_cpu(), &r).unwrap().vec, w);
    }
    let mut bad = narrow(req(N, Op::Plus, ElemType::F32));
    bad.tuning = Some(Tuning {
        vec: Some(3),
        ..Tuning::default()
    });
    assert!(matches!(plan(&h200, &bad), Err(Error::InvalidRange { .. })));
    assert!(matches!(
        Tuning::parse("vec=16"),
        Err(Error::UnknownName { .. })
    ));
    assert_eq!(Tuning::parse("vec=4").unwrap().vec, Some(4));
}
