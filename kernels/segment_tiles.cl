// clreduce: the `tiles` segmented plan and its CPU form `chunks` (the same slots and
// finishing pass) (design/segments.md). Appended after segment.cl,
// whose macros it uses; src/codegen/segment.rs appends the file of the plan's CLR_SEG_ALGO.

#if CLR_SEG_ALGO == CLR_SEG_TILES || CLR_SEG_ALGO == CLR_SEG_CHUNKS
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
#if CLR_SEG_ALGO == CLR_SEG_TILES
    // Tiles of clr_tile elements, whatever the segment lengths: each work-group takes
    // tiles in turn. In a tile, segments that start and end inside it and are short go to one
    // work-item each; longer ones are listed and reduced by the whole work-group; the piece of
    // the segment that enters the tile (head, slot 2t) and of the one that leaves it (tail,
    // slot 2t+1) become partials that clr_finish combines in tile order.
    __local ulong clr_long[CLR_SEG_LONGS];
    __local uint clr_nlong;
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    for (ulong clr_t = get_group_id(0); clr_t < clr_ntiles; clr_t += get_num_groups(0)) {
        const ulong clr_ts = clr_lo + clr_t * clr_tile;
        const ulong clr_te = clr_hi - clr_ts < clr_tile ? clr_hi : clr_ts + clr_tile;
        const ulong clr_ka = clr_seg_lower(clr_ts, clr_nseg, clr_c, clr_off);
        // The last tile also owns the empty segments that begin at the end.
        const ulong clr_kb = clr_te == clr_hi ? clr_nseg : clr_seg_lower(clr_te, clr_nseg, clr_c, clr_off);
        const ulong clr_ba = clr_seg_begin(clr_ka, clr_c, clr_off);
        if (clr_lid == 0) clr_nlong = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (ulong clr_e = clr_ka + clr_lid; clr_e < clr_kb; clr_e += CLR_WG) {
            const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
            const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
            if (clr_se > clr_te) continue;  // the tail: below
            if (clr_sb == clr_se) {
                CLR_FOR_VARS(CLR_SEMPTY)
            } else if (clr_se - clr_sb > clr_short) {
                clr_long[atomic_inc(&clr_nlong)] = clr_e;
            } else {
                CLR_FOR_VARS(CLR_SRESET)
                for (ulong clr_j = clr_sb; clr_j < clr_se; ++clr_j) CLR_CALL((CLR_IDX)clr_j, 0);
                CLR_FOR_VARS(CLR_SSTORE)
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint clr_nl = clr_nlong;
        if (clr_ba > clr_ts) {
            // The head: the segment that began before the tile.
            CLR_GROUP_RANGE(clr_ts, (clr_ba < clr_te ? clr_ba : clr_te))
            if (clr_lid == 0) {
                const ulong clr_slot = 2 * clr_t;
                CLR_FOR_VARS(CLR_SPART)
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        for (uint clr_q = 0; clr_q < clr_nl; ++clr_q) {
            const ulong clr_e = clr_long[clr_q];
            const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
            const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
            CLR_GROUP_RANGE(clr_sb, clr_se)
            if (clr_lid == 0) {
                CLR_FOR_VARS(CLR_SSTORE)
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (clr_kb > clr_ka && clr_seg_begin(clr_kb, clr_c, clr_off) > clr_te) {
            // The tail: the segment that goes on past the tile.
            CLR_GROUP_RANGE(clr_seg_begin(clr_kb - 1, clr_c, clr_off), clr_te)
            if (clr_lid == 0) {
                const ulong clr_slot = 2 * clr_t + 1;
                CLR_FOR_VARS(CLR_SPART)
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
#else
    // Chunks: each work-item owns clr_tile consecutive elements and walks them in one flat
    // loop, finishing a segment whenever its end is reached (so every work-item runs the same
    // number of iterations, whatever the lengths: CPU vector lanes stay together). The pieces
    // of segments cut by chunk boundaries go to the same slots as the tiles plan's (head 2t,
    // tail 2t+1), and clr_finish is the tiles one.
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    for (ulong clr_t = get_global_id(0); clr_t < clr_ntiles; clr_t += get_global_size(0)) {
        const ulong clr_ts = clr_lo + clr_t * clr_tile;
        const ulong clr_te = clr_hi - clr_ts < clr_tile ? clr_hi : clr_ts + clr_tile;
        const ulong clr_ka = clr_seg_lower(clr_ts, clr_nseg, clr_c, clr_off);
        const ulong clr_ba = clr_seg_begin(clr_ka, clr_c, clr_off);
        // The current segment: the one holding clr_ts (it began before: a head piece), or ka.
        int clr_head = clr_ba > clr_ts;
        ulong clr_cur = clr_head ? clr_ka - 1 : clr_ka;
        ulong clr_cb = clr_head ? clr_seg_begin(clr_cur, clr_c, clr_off) : clr_ba;
        ulong clr_ce = clr_head ? clr_ba : clr_seg_begin(clr_cur + 1, clr_c, clr_off);
#if CLR_SEG_U > 1
        // CPUs (decision 73): the chunk piece by piece (a piece: the chunk's part of one
        // segment, empty for an empty segment), each as item's loop of CLR_SEG_U accumulators
        // folded pairwise; every piece but the chunk's last is finished at once.
        for (ulong clr_j = clr_ts;;) {
            const ulong clr_pe = clr_ce < clr_te ? clr_ce : clr_te;
            CLR_STREAMU(clr_j, clr_pe)
            clr_j = clr_pe;
            if (clr_j == clr_te) break;
            CLR_CHUNK_FINISH
            ++clr_cur;
            clr_cb = clr_ce;
            clr_ce = clr_seg_begin(clr_cur + 1, clr_c, clr_off);
            clr_head = 0;
        }
#else
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_j = clr_ts; clr_j < clr_te; ++clr_j) {
            while (clr_j == clr_ce) {
                CLR_CHUNK_FINISH
                ++clr_cur;
                clr_cb = clr_ce;
                clr_ce = clr_seg_begin(clr_cur + 1, clr_c, clr_off);
                clr_head = 0;
                CLR_FOR_VARS(CLR_SRESET)
            }
            CLR_CALL((CLR_IDX)clr_j, 0);
        }
#endif
        if (clr_ce == clr_te) {
            CLR_CHUNK_FINISH
            // The last chunk also owns the empty segments that begin at the end.
            if (clr_te == clr_hi) {
                for (ulong clr_e = clr_cur + 1; clr_e < clr_nseg; ++clr_e) {
                    CLR_FOR_VARS(CLR_SEMPTY)
                }
            }
        } else {
            // The segment goes on past the chunk: a head piece if it also began before it.
            const ulong clr_slot = clr_head ? 2 * clr_t : 2 * clr_t + 1;
            CLR_FOR_VARS(CLR_SPART)
        }
    }
#endif
}

// The finishing pass (the first pass's partials).
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    CLR_SEG_FINISH_PROLOGUE
    // A work-group per tile (chunk) whose tail segment goes on: it combines the tail (slot 2t) with
    // the heads of the tiles the segment covers (slots 2u, u = t+1..t1), in tile order. One
    // search: the tail is segment kb - 1 (kb the first beginning at or after the tile's end)
    // where that one begins in the tile.
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    for (ulong clr_t = get_group_id(0); clr_t < clr_ntiles; clr_t += get_num_groups(0)) {
        const ulong clr_ts = clr_lo + clr_t * clr_tile;
        const ulong clr_te = clr_hi - clr_ts < clr_tile ? clr_hi : clr_ts + clr_tile;
        if (clr_te == clr_hi) continue;
        const ulong clr_kb = clr_seg_lower(clr_te, clr_nseg, clr_c, clr_off);
        if (clr_kb == 0) continue;
        const ulong clr_e = clr_kb - 1;
        const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
        const ulong clr_end = clr_seg_begin(clr_kb, clr_c, clr_off);
        if (clr_sb < clr_ts || clr_end <= clr_te) continue;
        const ulong clr_t1 = (clr_end - 1 - clr_lo) / clr_tile;
        CLR_CUT_GROUP(clr_t, clr_t1)
    }
}
#endif  // CLR_SEG_TILES || CLR_SEG_CHUNKS
