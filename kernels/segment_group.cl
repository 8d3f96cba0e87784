// clreduce: the `group` segmented plan (design/segments.md). Appended after segment.cl,
// whose macros it uses; src/codegen/segment.rs appends the file of the plan's CLR_SEG_ALGO.

#if CLR_SEG_ALGO == CLR_SEG_GROUP
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
    // clr_tile > 1 (fewer segments than the device's work-groups): clr_tile work-groups per
    // segment, work-group w taking part w % clr_tile of segment w / clr_tile with the plain
    // sum's grid-stride loop over the segment (stride clr_tile work-groups), its partial to
    // slot w; clr_finish combines each segment's parts in order.
    if (clr_tile > 1) {
        for (ulong clr_w = get_group_id(0); clr_w < clr_nseg * clr_tile; clr_w += get_num_groups(0)) {
            const ulong clr_e = clr_w / clr_tile;
            const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
            const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
            CLR_PLAIN_STRIDED(clr_sb + (clr_w % clr_tile) * CLR_WG + clr_lid, clr_se, clr_tile * CLR_WG)
            CLR_FOR_VARS(CLR_SGROUP)
            if (clr_lid == 0) {
                const ulong clr_slot = clr_w;
                CLR_FOR_VARS(CLR_SPART)
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        return;
    }
    // A work-group per segment: coalesced strided reads, then the work-group tree. The loop
    // bounds are the same for every work-item of the group (the barriers are uniform).
    for (ulong clr_e = get_group_id(0); clr_e < clr_nseg; clr_e += get_num_groups(0)) {
        const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
        const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
        if (clr_sb == clr_se) {
            if (clr_lid == 0) {
                CLR_FOR_VARS(CLR_SEMPTY)
            }
            continue;
        }
        CLR_GROUP_RANGE(clr_sb, clr_se)
        if (clr_lid == 0) {
            CLR_FOR_VARS(CLR_SSTORE)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// The finishing pass (the first pass's partials).
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    CLR_SEG_FINISH_PROLOGUE
    // A work-group per segment combines its clr_tile parts (slots e * clr_tile ..) in order:
    // strided over the work-group, then the tree. An empty segment's parts are identities.
    for (ulong clr_e = get_group_id(0); clr_e < clr_nseg; clr_e += get_num_groups(0)) {
        const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
        const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
        if (clr_sb == clr_se) {
            if (clr_lid == 0) {
                CLR_FOR_VARS(CLR_SEMPTY)
            }
            continue;
        }
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_u = clr_lid; clr_u < clr_tile; clr_u += CLR_WG) {
            const ulong clr_slot = clr_e * clr_tile + clr_u;
            CLR_FOR_VARS(CLR_SFOLD)
        }
        CLR_FOR_VARS(CLR_SGROUP)
        if (clr_lid == 0) {
            CLR_FOR_VARS(CLR_SSTORE)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif  // CLR_SEG_GROUP
