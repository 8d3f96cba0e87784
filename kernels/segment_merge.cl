// clreduce: the `merge` segmented plan over CSR offsets (design/algorithms.md, "merge";
// decision 54). Appended after segment.cl (whose kernels it replaces when CLR_SEG_ALGO is
// CLR_SEG_MERGE) and uses its macros: CLR_SDECL, CLR_SSTORE, CLR_SEMPTY, CLR_STDECL, CLR_STPUT,
// CLR_STFOLD, CLR_SGROUP, CLR_SPART, CLR_SFOLD, CLR_CUT_SERIAL, CLR_CUT_GROUP and CLR_SKEW.
//
// Merge path (Merrill & Garland 2016): the items are the elements begin[0]..begin[nseg] and the
// segment ends, merged so that the end of segment k comes after its last element and before
// the next segment's first. End k is item begin[k+1] - begin[0] + k, so the items form a
// list of (hi - lo) + nseg entries that is cut into tiles of clr_tile = CLR_WG * CLR_SEG_E
// items. A tile costs the same whatever the lengths: an empty segment is one item, a long one
// many tiles. Per tile (a work-group takes consecutive tiles):
// 1. the tile's values go to the stage (read coalesced, as in staged) and the offsets of the
//    segments that end in it to clr_mo (relative to the tile's first element);
// 2. work-item lid walks the items lid*E .. lid*E+E-1 in order: an element is folded into its
//    accumulator, an end stores the segment that began in the walk, or keeps the piece before
//    the first end (the head, whose segment began in an earlier work-item) for step 3;
// 3. a segmented inclusive scan of the work-items' last pieces (local memory, log2(CLR_WG)
//    steps) gives each work-item the part of its head's segment in earlier work-items, so the
//    work-item where a segment ends stores it; the segment that began before the tile leaves
//    its piece in partial slot 2t (head), the one that goes on past the tile in 2t+1 (tail).
// clr_finish gives each tile whose tail goes on its segment: a work-item folds the heads of
// the following tiles up to the one where the segment ends; a segment over more than
// CLR_MERGE_SERIAL tiles is folded by the whole work-group (strided, then the tree).
// Every combination order is fixed by CLR_WG and CLR_SEG_E: deterministic.

#define CLR_MERGE_SERIAL 32

// The number of segment ends among the first d items: the first k in [0, nseg] whose end item
// begin[k+1] - lo + k is at or past d. (The search could start at d - (hi - lo), but clang
// turns that saturating difference into llvm.usub.sat, which Oclgrind cannot run.)
static inline ulong clr_merge_split(ulong d, ulong nseg, ulong lo, __global const ulong* off) {
    ulong a = 0, b = d < nseg ? d : nseg;
    while (a < b) {
        const ulong mid = a + (b - a) / 2;
        if (off[mid + 1] - lo + mid < d)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

#define CLR_MDECL(k) R##k##_A clr_mh##k; R##k##_A clr_mt##k;
#define CLR_MHEAD(k) clr_mh##k = clr_a##k[0];
// Scan: my value to local memory; the left neighbour's at distance clr_d; combined left first.
#define CLR_MPUT(k) clr_lm##k[clr_lid] = clr_a##k[0];
#define CLR_MGETL(k) clr_mt##k = clr_lm##k[clr_lid - clr_d];
#define CLR_MCOMB(k) clr_a##k[0] = clr_op_##k(clr_mt##k, clr_a##k[0]);
#define CLR_MCARRY(k) clr_mt##k = clr_lid > 0 ? clr_lm##k[clr_lid - 1] : clr_identity_##k();
#define CLR_MJOIN(k) clr_a##k[0] = clr_op_##k(clr_mt##k, clr_mh##k);

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const uint clr_lid = (uint)get_local_id(0);
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
    CLR_FOR_VARS(CLR_STDECL)
    CLR_FOR_VARS(CLR_MDECL)
    __local int clr_mo[CLR_WG * CLR_SEG_E + 1];
    __local ulong clr_msp[CLR_WG + 1];
    __local uint clr_mf[CLR_WG];
    const ulong clr_nel = clr_hi - clr_lo;
    const ulong clr_total = clr_nel + clr_nseg;
    const ulong clr_ntiles = (clr_total + clr_tile - 1) / clr_tile;
    const ulong clr_m = (clr_ntiles + get_num_groups(0) - 1) / get_num_groups(0);
    const ulong clr_t0 = get_group_id(0) * clr_m;
    const ulong clr_tend = clr_t0 + clr_m < clr_ntiles ? clr_t0 + clr_m : clr_ntiles;
    if (clr_lid == 0 && clr_t0 < clr_tend)
        clr_msp[0] = clr_merge_split(clr_t0 * clr_tile, clr_nseg, clr_lo, clr_off);
    // Batches of CLR_WG tiles: work-item lid finds the split at the end of tile tb + lid.
    for (ulong clr_tb = clr_t0; clr_tb < clr_tend; clr_tb += CLR_WG) {
        const ulong clr_tn = clr_tend - clr_tb < CLR_WG ? clr_tend - clr_tb : CLR_WG;
        if (clr_lid < clr_tn) {
            const ulong clr_d = (clr_tb + clr_lid + 1) * clr_tile;
            clr_msp[clr_lid + 1] = clr_merge_split(clr_d < clr_total ? clr_d : clr_total,
                                                   clr_nseg, clr_lo, clr_off);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint clr_i = 0; clr_i < (uint)clr_tn; ++clr_i) {
            const ulong clr_t = clr_tb + clr_i;
            const ulong clr_ks = clr_msp[clr_i], clr_ke = clr_msp[clr_i + 1];
            const ulong clr_ds = clr_t * clr_tile;
            const uint clr_items =
                (uint)(clr_total - clr_ds < clr_tile ? clr_total - clr_ds : clr_tile);
            const uint clr_nend = (uint)(clr_ke - clr_ks);
            const uint clr_cnt = clr_items - clr_nend;
            const ulong clr_is = clr_ds - clr_ks;  // elements before the tile (from lo)
            // 1. the offsets (relative to the tile's first element; -1: began before it) and
            // the values.
            for (uint clr_j = clr_lid; clr_j <= clr_nend; clr_j += CLR_WG) {
                const ulong clr_v = clr_off[clr_ks + clr_j] - clr_lo;
                clr_mo[clr_j] = clr_v < clr_is ? -1 : (int)(clr_v - clr_is);
            }
#pragma unroll
            for (uint clr_q = 0; clr_q < CLR_SEG_E; ++clr_q) {
                const uint clr_p = clr_q * CLR_WG + clr_lid;
                if (clr_p < clr_cnt) {
                    CLR_FOR_VARS(CLR_SRESET)
                    CLR_CALL((CLR_IDX)(clr_lo + clr_is + clr_p), 0);
                    CLR_FOR_VARS(CLR_STPUT)
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            // 2. walk: the split of my first item (ends before it), then CLR_SEG_E items.
            const uint clr_w0 = clr_lid * CLR_SEG_E;
            const uint clr_w1 = clr_w0 + CLR_SEG_E < clr_items ? clr_w0 + CLR_SEG_E : clr_items;
            uint clr_jj = 0;  // (no saturating lower bound: see clr_merge_split)
            {
                uint clr_hb = clr_w0 < clr_nend ? clr_w0 : clr_nend;
                while (clr_jj < clr_hb) {
                    const uint clr_mid = (clr_jj + clr_hb) / 2;
                    if ((uint)clr_mo[clr_mid + 1] + clr_mid < clr_w0)
                        clr_jj = clr_mid + 1;
                    else
                        clr_hb = clr_mid;
                }
            }
            const uint clr_hj = clr_jj;  // my first segment (relative to ks)
            uint clr_p = clr_w0 - clr_jj;
            int clr_had = 0;
            CLR_FOR_VARS(CLR_SRESET)
            for (uint clr_s = clr_w0; clr_s < clr_w1; ++clr_s) {
                if (clr_jj < clr_nend && (uint)clr_mo[clr_jj + 1] <= clr_p) {
                    if (!clr_had) {
                        CLR_FOR_VARS(CLR_MHEAD)
                        clr_had = 1;
                    } else {
                        const ulong clr_e = clr_ks + clr_jj;
                        if (clr_mo[clr_jj] == clr_mo[clr_jj + 1]) {
                            CLR_FOR_VARS(CLR_SEMPTY)
                        } else {
                            const ulong clr_sb = clr_lo + clr_is + (ulong)clr_mo[clr_jj];
                            CLR_FOR_VARS(CLR_SSTORE)
                        }
                    }
                    CLR_FOR_VARS(CLR_SRESET)
                    ++clr_jj;
                } else {
                    CLR_FOR_VARS(CLR_STFOLD)
                    ++clr_p;
                }
            }
            // 3. segmented inclusive scan of (had an end, last piece) over the work-items.
            int clr_f = clr_had;
            CLR_FOR_VARS(CLR_MPUT)
            clr_mf[clr_lid] = (uint)clr_f;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint clr_d = 1; clr_d < CLR_WG; clr_d <<= 1) {
                uint clr_lf = 0;
                if (clr_lid >= clr_d) {
                    clr_lf = clr_mf[clr_lid - clr_d];
                    CLR_FOR_VARS(CLR_MGETL)
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (clr_lid >= clr_d && !clr_f) {
                    CLR_FOR_VARS(CLR_MCOMB)
                    clr_f = (int)clr_lf;
                    CLR_FOR_VARS(CLR_MPUT)
                    clr_mf[clr_lid] = clr_lf;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            const int clr_began = clr_mo[0] < 0;
            if (clr_lid == CLR_WG - 1) {
                // The tile's last piece (the scan's value over the tile, before the join
                // below): the segment ke, begun in the tile and going on past it (tail), or the
                // whole tile of a segment that began before it (head).
                const long clr_sd = (long)clr_mo[clr_nend] + (long)clr_nend;
                if (!clr_f && clr_began) {
                    const ulong clr_slot = 2 * clr_t;
                    CLR_FOR_VARS(CLR_SPART)
                } else if (clr_ke < clr_nseg && clr_sd >= 0 && clr_sd < (long)clr_items) {
                    const ulong clr_slot = 2 * clr_t + 1;
                    CLR_FOR_VARS(CLR_SPART)
                }
            }
            if (clr_had) {
                // My head's segment: what earlier work-items hold of it, then my head.
                const uint clr_cf = clr_lid > 0 ? clr_mf[clr_lid - 1] : 0u;
                CLR_FOR_VARS(CLR_MCARRY)
                CLR_FOR_VARS(CLR_MJOIN)
                if (!clr_cf && clr_began) {
                    const ulong clr_slot = 2 * clr_t;
                    CLR_FOR_VARS(CLR_SPART)
                } else {
                    const ulong clr_e = clr_ks + clr_hj;
                    if (clr_mo[clr_hj] == clr_mo[clr_hj + 1]) {
                        CLR_FOR_VARS(CLR_SEMPTY)
                    } else {
                        const ulong clr_sb = clr_lo + clr_is + (ulong)clr_mo[clr_hj];
                        CLR_FOR_VARS(CLR_SSTORE)
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (clr_lid == 0) clr_msp[0] = clr_msp[clr_tn];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// A work-item per tile whose tail goes on (the segment ke that began in the tile): it folds
// the tail (slot 2t+1) and the heads (slots 2u) of the tiles t+1..t1 the segment covers, or
// lists a segment over more than CLR_MERGE_SERIAL tiles for the whole work-group.
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    const uint clr_lid = (uint)get_local_id(0);
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
    __local ulong clr_ml[CLR_WG];
    __local uint clr_mn;
    const ulong clr_nel = clr_hi - clr_lo;
    const ulong clr_total = clr_nel + clr_nseg;
    const ulong clr_ntiles = (clr_total + clr_tile - 1) / clr_tile;
    for (ulong clr_tb = get_group_id(0) * CLR_WG; clr_tb < clr_ntiles;
         clr_tb += get_num_groups(0) * CLR_WG) {
        if (clr_lid == 0) clr_mn = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        const ulong clr_t = clr_tb + clr_lid;
        if (clr_t + 1 < clr_ntiles) {
            const ulong clr_ke = clr_merge_split((clr_t + 1) * clr_tile, clr_nseg, clr_lo, clr_off);
            const ulong clr_sd = clr_ke < clr_nseg ? clr_off[clr_ke] - clr_lo + clr_ke : 0;
            if (clr_ke < clr_nseg && clr_sd >= clr_t * clr_tile &&
                clr_sd < (clr_t + 1) * clr_tile) {
                const ulong clr_e = clr_ke;
                const ulong clr_sb = clr_off[clr_ke];
                const ulong clr_t1 = (clr_off[clr_ke + 1] - clr_lo + clr_ke) / clr_tile;
                if (clr_t1 - clr_t > CLR_MERGE_SERIAL) {
                    clr_ml[atomic_inc(&clr_mn)] = clr_t;
                } else {
                    CLR_CUT_SERIAL(clr_t, clr_t1)
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint clr_nl = clr_mn;
        for (uint clr_q = 0; clr_q < clr_nl; ++clr_q) {
            const ulong clr_tl = clr_ml[clr_q];
            const ulong clr_e = clr_merge_split((clr_tl + 1) * clr_tile, clr_nseg, clr_lo, clr_off);
            const ulong clr_sb = clr_off[clr_e];
            const ulong clr_t1 = (clr_off[clr_e + 1] - clr_lo + clr_e) / clr_tile;
            CLR_CUT_GROUP(clr_tl, clr_t1)
        }
    }
}
