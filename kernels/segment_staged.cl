// clreduce: the `staged` segmented plan (CSR offsets, uniform rows) (design/segments.md). Appended after segment.cl,
// whose macros it uses; src/codegen/segment.rs appends the file of the plan's CLR_SEG_ALGO.

#if CLR_SEG_ALGO == CLR_SEG_STAGED
#if CLR_SEG_OFFSETS
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
    // CSR offsets through stages of clr_tile = CLR_WG * CLR_SEG_E elements; work-group g takes
    // the consecutive tiles g*m .. g*m + m - 1, so a tile's first segment is the previous
    // tile's end (one binary search per work-group). Per tile:
    // 1. values: each element's accumulator into the stage, read coalesced; segments starting
    //    in the tile (clr_ka + lid, + CLR_WG, ...): an empty one is stored, a non-empty one
    //    marks its start (clr_sat[p] = its number relative to clr_ka, plus 1); the first one
    //    starting at or past the tile's end gives clr_kb (a local atomic_min of integers).
    // 2. walk: work-item lid combines its chunk lid*E .. lid*E+E-1 from the stage in index
    //    order, storing the segments that start and end in it; the piece before its chunk's
    //    first start (a head piece) goes to clr_lm[lid], clr_hend[lid] saying whether that
    //    segment ends in the chunk.
    // 3. owners: the work-item where a segment starts folds the head pieces of the following
    //    chunks up to the one where it ends and stores; a segment that goes on past the tile
    //    is the tile's tail (slot 2t+1), and work-item 0 folds the tile's own head piece (the
    //    segment that began before it) into slot 2t. clr_finish combines them as for tiles.
    CLR_FOR_VARS(CLR_STDECL)
    __local uint clr_sat[CLR_WG * CLR_SEG_E];
    __local uint clr_hend[CLR_WG];
    __local uint clr_kbd;
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    const ulong clr_m = (clr_ntiles + get_num_groups(0) - 1) / get_num_groups(0);
    const ulong clr_t0 = get_group_id(0) * clr_m;
    const ulong clr_tend = clr_t0 + clr_m < clr_ntiles ? clr_t0 + clr_m : clr_ntiles;
    ulong clr_ka = clr_t0 < clr_tend ? clr_seg_lower(clr_lo + clr_t0 * clr_tile, clr_nseg, clr_c, clr_off) : 0;
    for (uint clr_q = 0; clr_q < CLR_SEG_E; ++clr_q) clr_sat[clr_q * CLR_WG + clr_lid] = 0u;
    for (ulong clr_t = clr_t0; clr_t < clr_tend; ++clr_t) {
        const ulong clr_ts = clr_lo + clr_t * clr_tile;
        const ulong clr_te = clr_hi - clr_ts < clr_tile ? clr_hi : clr_ts + clr_tile;
        const uint clr_cnt = (uint)(clr_te - clr_ts);
        if (clr_lid == 0) clr_kbd = UINT_MAX;
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (uint clr_q = 0; clr_q < CLR_SEG_E; ++clr_q) {
            const uint clr_p = clr_q * CLR_WG + clr_lid;
            if (clr_p < clr_cnt) {
                CLR_FOR_VARS(CLR_SRESET)
                CLR_CALL((CLR_IDX)(clr_ts + clr_p), 0);
                CLR_FOR_VARS(CLR_STPUT)
            }
        }
        ulong clr_kb = clr_nseg;
        for (ulong clr_r = clr_ka;; clr_r += CLR_WG) {
            const ulong clr_e = clr_r + clr_lid;
            if (clr_e < clr_nseg) {
                const ulong clr_b = clr_off[clr_e];
                // The last tile also owns the empty segments that begin at its end.
                if (clr_b < clr_te || clr_te == clr_hi) {
                    if (clr_off[clr_e + 1] == clr_b) {
                        CLR_FOR_VARS(CLR_SEMPTY)
                    } else {
                        clr_sat[clr_b - clr_ts] = (uint)(clr_e - clr_ka) + 1u;
                    }
                } else {
                    atomic_min(&clr_kbd, (uint)(clr_e - clr_ka));
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint clr_d = clr_kbd;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (clr_d != UINT_MAX) {
                clr_kb = clr_ka + clr_d;
                break;
            }
            if (clr_r + CLR_WG >= clr_nseg) break;
        }
        // Whether the tile's end closes a segment (none goes on past it).
        const int clr_closes = clr_te == clr_hi || clr_off[clr_kb] == clr_te;
        // 2. walk
        const uint clr_p0 = clr_lid * CLR_SEG_E;
        ulong clr_cur = 0;
        uint clr_cs = 0;
        int clr_hset = 0;
        CLR_FOR_VARS(CLR_SRESET)
        for (uint clr_q = 0; clr_q < CLR_SEG_E; ++clr_q) {
            const uint clr_p = clr_p0 + clr_q;
            if (clr_p >= clr_cnt) break;
            const uint clr_s = clr_sat[clr_p];
            if (clr_s != 0u) {
                if (clr_q > 0) {
                    CLR_SPIECE_END
                }
                clr_cur = clr_s;
                clr_cs = clr_p;
                CLR_FOR_VARS(CLR_SRESET)
            }
            CLR_FOR_VARS(CLR_STFOLD)
        }
        // The chunk's last piece: ends at the chunk's end, or goes on (open).
        const uint clr_pe = clr_p0 + CLR_SEG_E;
        const int clr_ends = clr_p0 >= clr_cnt || (clr_pe < clr_cnt ? clr_sat[clr_pe] != 0u : clr_closes);
        int clr_open = 0;
        if (clr_ends) {
            if (clr_p0 < clr_cnt) {
                CLR_SPIECE_END
            }
        } else if (clr_cur == 0) {
            CLR_FOR_VARS(CLR_SHEAD)
            clr_hend[clr_lid] = 0u;
            clr_hset = 1;
        } else {
            clr_open = 1;
        }
        if (!clr_hset) {
            // No head piece in this chunk (it starts a segment, or lies past the tile's end).
            CLR_FOR_VARS(CLR_SHEAD0)
            clr_hend[clr_lid] = 1u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // 3. owners
        uint clr_j;
        if (clr_open) {
            CLR_SSCAN
            if (clr_j == CLR_WG) {
                const ulong clr_slot = 2 * clr_t + 1;
                CLR_FOR_VARS(CLR_SPART)
            } else {
                const ulong clr_e = clr_ka + clr_cur - 1;
                const ulong clr_sb = clr_ts + clr_cs;
                CLR_FOR_VARS(CLR_SSTORE)
            }
        }
        if (clr_lid == 0 && clr_sat[0] == 0u && clr_cnt > 0) {
            // The tile's head piece: chunk 0's, then the following chunks' up to its end.
            CLR_FOR_VARS(CLR_SHEADGET)
            if (!clr_hend[0]) {
                CLR_SSCAN
            }
            const ulong clr_slot = 2 * clr_t;
            CLR_FOR_VARS(CLR_SPART)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint clr_q = 0; clr_q < CLR_SEG_E; ++clr_q) clr_sat[clr_q * CLR_WG + clr_lid] = 0u;
        clr_ka = clr_kb;
    }
}

// The finishing pass (the first pass's partials).
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    CLR_SEG_FINISH_PROLOGUE
    // A work-item per tile whose tail segment goes on: the tail (slot 2t+1), then the heads
    // (slots 2u) of the tiles u = t+1..t1 the segment covers, in tile order.
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    for (ulong clr_t = get_global_id(0); clr_t < clr_ntiles; clr_t += get_global_size(0)) {
        const ulong clr_ts = clr_lo + clr_t * clr_tile;
        const ulong clr_te = clr_hi - clr_ts < clr_tile ? clr_hi : clr_ts + clr_tile;
        if (clr_te == clr_hi) continue;
        const ulong clr_kb = clr_seg_lower(clr_te, clr_nseg, clr_c, clr_off);
        if (clr_kb == 0) continue;
        const ulong clr_e = clr_kb - 1;
        const ulong clr_sb = clr_off[clr_e];
        const ulong clr_end = clr_off[clr_kb];
        if (clr_sb < clr_ts || clr_end <= clr_te) continue;
        const ulong clr_t1 = (clr_end - 1 - clr_lo) / clr_tile;
        CLR_CUT_SERIAL(clr_t, clr_t1)
    }
}
#else
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
    // Uniform rows of clr_c, clr_tile whole rows per stage (clr_tile * clr_c <= CLR_WG *
    // CLR_SEG_E): the work-group reads the stage with consecutive work-items on consecutive
    // indices, one accumulator per element into local memory, then a work-item per row
    // combines the row's accumulators in index order and stores (consecutive rows from
    // consecutive work-items).
    CLR_FOR_VARS(CLR_STDECL)
    const ulong clr_nst = (clr_nseg + clr_tile - 1) / clr_tile;
    for (ulong clr_t = get_group_id(0); clr_t < clr_nst; clr_t += get_num_groups(0)) {
        const ulong clr_r0 = clr_t * clr_tile;
        const uint clr_rows = (uint)(clr_nseg - clr_r0 < clr_tile ? clr_nseg - clr_r0 : clr_tile);
        const uint clr_cnt = clr_rows * (uint)clr_c;
        const ulong clr_base = clr_r0 * clr_c;
#pragma unroll
        for (uint clr_q = 0; clr_q < CLR_SEG_E; ++clr_q) {
            const uint clr_p = clr_q * CLR_WG + clr_lid;
            if (clr_p < clr_cnt) {
                CLR_FOR_VARS(CLR_SRESET)
                CLR_CALL((CLR_IDX)(clr_base + clr_p), 0);
                CLR_FOR_VARS(CLR_STPUT)
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint clr_r = clr_lid; clr_r < clr_rows; clr_r += CLR_WG) {
            const uint clr_p0 = clr_r * (uint)clr_c;
            {
                const uint clr_p = clr_p0;
                CLR_FOR_VARS(CLR_STGET)
            }
            for (uint clr_p = clr_p0 + 1; clr_p < clr_p0 + (uint)clr_c; ++clr_p) {
                CLR_FOR_VARS(CLR_STFOLD)
            }
            const ulong clr_e = clr_r0 + clr_r;
            const ulong clr_sb = clr_base + clr_p0;
            CLR_FOR_VARS(CLR_SSTORE)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif
#endif  // CLR_SEG_STAGED
