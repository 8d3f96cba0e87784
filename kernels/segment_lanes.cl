// clreduce: the `lanes` segmented plan (design/segments.md). Appended after segment.cl,
// whose macros it uses; src/codegen/segment.rs appends the file of the plan's CLR_SEG_ALGO.

#if CLR_SEG_ALGO == CLR_SEG_LANES
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
    // CLR_SEG_S consecutive work-items per segment, CLR_WG / CLR_SEG_S segments per work-group
    // at a time: lane j reads j, j + S, ... of its segment (consecutive lanes on consecutive
    // indices), then a tree over the lanes. Every work-item of a group runs the same rounds
    // (the barriers are uniform).
    const uint clr_lane = clr_lid % CLR_SEG_S;
    const ulong clr_per = CLR_WG / CLR_SEG_S;
    for (ulong clr_b = get_group_id(0) * clr_per; clr_b < clr_nseg; clr_b += get_num_groups(0) * clr_per) {
        const ulong clr_e = clr_b + clr_lid / CLR_SEG_S;
        ulong clr_sb = 0, clr_se = 0;
        if (clr_e < clr_nseg) {
            clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
            clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
        }
        CLR_STRIDED(clr_sb + clr_lane, clr_se, CLR_SEG_S)
        CLR_FOR_VARS(CLR_SLANES)
        if (clr_lane == 0 && clr_e < clr_nseg) {
            if (clr_sb == clr_se) {
                CLR_FOR_VARS(CLR_SEMPTY)
            } else {
                CLR_FOR_VARS(CLR_SSTORE)
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif  // CLR_SEG_LANES
