// clreduce: the `item` segmented plan (design/segments.md). Appended after segment.cl,
// whose macros it uses; src/codegen/segment.rs appends the file of the plan's CLR_SEG_ALGO.

#if CLR_SEG_ALGO == CLR_SEG_ITEM
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
#if CLR_VEC > 1
    // Uniform rows of clr_c, a multiple of CLR_VEC: a work-item per row, CLR_SEG_U rows per
    // step (rows e, e + G, ..., G the launch's work-items, into accumulators 0..U-1, so that a
    // warp's loads of each row cover consecutive rows), each row read CLR_VEC elements at a
    // time (CLR_CALL_V: one vector load per buffer the body reads at [i]) in index order.
    const ulong clr_gs = get_global_size(0);
    ulong clr_e = get_global_id(0);
    for (; clr_e + (CLR_SEG_U - 1) * clr_gs < clr_nseg; clr_e += CLR_SEG_U * clr_gs) {
        CLR_FOR_VARS(CLR_SRESETU)
        for (ulong clr_j = 0; clr_j < clr_c; clr_j += CLR_VEC) {
            CLR_CROWS(CLR_VROW)
        }
        CLR_VSTORES
    }
    for (; clr_e < clr_nseg; clr_e += clr_gs) {
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_j = 0; clr_j < clr_c; clr_j += CLR_VEC)
            CLR_CALL_V((CLR_IDX)(clr_e * clr_c + clr_j), 0);
        const ulong clr_sb = clr_e * clr_c;
        CLR_FOR_VARS(CLR_SSTORE)
    }
#else
    // A work-item per segment: each loops its own segment. With CLR_SEG_U > 1 (CPUs, decision
    // 73) element j + u of each step of CLR_SEG_U goes to accumulator u (written out, so that
    // the compiler loads a step as one vector and keeps U independent chains), the last
    // fewer than U into accumulator 0, then the accumulators folded pairwise (u and u + h for
    // h = U/2, U/4, ..., 1): a fixed order, so deterministic.
    for (ulong clr_e = get_global_id(0); clr_e < clr_nseg; clr_e += get_global_size(0)) {
        const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
        const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
        if (clr_sb == clr_se) {
            CLR_FOR_VARS(CLR_SEMPTY)
            continue;
        }
#if CLR_SEG_U > 1
        CLR_STREAMU(clr_sb, clr_se)
#else
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_j = clr_sb; clr_j < clr_se; ++clr_j) CLR_CALL((CLR_IDX)clr_j, 0);
#endif
        CLR_FOR_VARS(CLR_SSTORE)
    }
#endif
}
#endif  // CLR_SEG_ITEM
