// clreduce: the `runs` plan's warp kernel (SegmentPlan::warp, decision 81), appended after
// segment_runs.cl (whose clr_main it replaces when CLR_RUNS_WS is defined; clr_finish is
// that file's) and using its macros and segment.cl's.
//
// The lean kernel's walk (decision 72) with its barriers over CLR_RUNS_WS work-items, not the
// work-group: where CLR_RUNS_WS is below CLR_WG (planned only where DeviceCaps::
// warp_shuffle_ptx, NVIDIA, warps of 32) each warp of the work-group runs on its own, its
// steps ordered by the warp's own barrier (PTX bar.warp.sync, which also orders the warp's
// local memory accesses); elsewhere CLR_RUNS_WS is CLR_WG and the barrier is the work-group's.
//
// Warp v (of all work-groups) takes the ranges v, v + V, ... (V warps in all) of clr_tile
// elements each (the plan's tile: two partial slots per range for clr_finish), in sub-tiles of
// CLR_RUNS_WS * CLR_SEG_E consecutive elements; a batch of CLR_RUNS_WS sub-tiles finds its
// segment bounds at once (one binary search per work-item). Per sub-tile [ts, te):
// 1. marks: the segments ka..kb that begin in it set the bit of their first element (an empty
//    one is stored at once);
// 2. walk: work-item l combines its run l*E .. l*E + E - 1, storing the running value of its
//    current piece to the local slot of the piece's first element (run r's slots at r*(E+1));
// 3. each segment that begins in the sub-tile is finished by the work-item that marked it: its
//    first piece, then the following runs' heads up to its end; stored, or, where it goes on
//    past the sub-tile, written to the warp's carry slot (to the range's tail slot 2R+1 at the
//    range's end). Work-item 0 keeps the open piece: the range's head (the part of a segment
//    begun before the range), or the segment carried from an earlier sub-tile (read from the
//    carry slot between the next sub-tile's barriers), folds each sub-tile's head into it and
//    closes it at the sub-tile's first segment start: the range's head to slot 2R, a carried
//    segment stored as segment ka - 1. At the range's end an open head goes to slot 2R, an
//    open segment to 2R+1 (stored where it ends with the range).
// So a segment cut between sub-tiles of one range is joined in this pass, and clr_finish only
// joins those cut between ranges (one binary search per range, not per tile). The combination
// order is fixed by CLR_WG, CLR_RUNS_WS, CLR_SEG_E and the tile: deterministic.

#define CLR_WS CLR_RUNS_WS
#define CLR_WN (CLR_WG / CLR_WS)
#define CLR_WT (CLR_WS * CLR_SEG_E)
#define CLR_WMW ((CLR_WT + 31) / 32)
#define CLR_WSTRIDE (CLR_SEG_E + 1)
#if CLR_WS < CLR_WG
#define CLR_WSYNC asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")
#else
#define CLR_WSYNC barrier(CLK_LOCAL_MEM_FENCE)
#endif

#define CLR_WDECL(k)                                       \
    __local R##k##_A clr_wv##k[CLR_WG * CLR_WSTRIDE];      \
    __local R##k##_A clr_wc##k[CLR_WN];                    \
    R##k##_A clr_o##k;
#define CLR_WPUT(k) clr_wv##k[clr_sp] = clr_a##k[0];
#define CLR_WGET(k) \
    clr_a##k[0] = clr_wv##k[clr_vb + clr_p / CLR_SEG_E * CLR_WSTRIDE + clr_p % CLR_SEG_E];
#define CLR_WFOLD(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_wv##k[clr_vb + clr_j * CLR_WSTRIDE]);
#define CLR_WCPUT(k) clr_wc##k[clr_w] = clr_a##k[0];
#define CLR_WCGET(k) clr_o##k = clr_wc##k[clr_w];
#define CLR_WOPEN(k) clr_o##k = clr_op_##k(clr_o##k, clr_a##k[0]);
#define CLR_WOTOA(k) clr_a##k[0] = clr_o##k;
#define CLR_WORESET(k) clr_o##k = clr_identity_##k();
// Before the element at run position q: the running value of the current piece stored, and
// where a segment starts there, a new piece (as the lean kernel's CLR_LFLUSH).
#define CLR_WFLUSH(clr_q)                      \
    CLR_FOR_VARS(CLR_WPUT)                     \
    if (clr_bits & (1u << (clr_q))) {          \
        clr_sp = clr_sp0 + (clr_q);            \
        CLR_FOR_VARS(CLR_SRESET)               \
    }
#define CLR_WH(l) CLR_WFLUSH(clr_qb + (l))
// With the early loads (SegmentPlan::pre): vector s of the run from its register, through
// segment_runs.cl's CLR_PWALK with this kernel's flush.
#define CLR_WPWALK(s) CLR_PWALK(s, CLR_WH)

// Work-item 0's part of a sub-tile, after its walk: the carried segment taken up where the
// last sub-tile left one (read earlier, clr_pend), the sub-tile's head folded into the open
// piece, the open piece closed at the first start.
#define CLR_WHEAD                                                                           \
    {                                                                                       \
        const ulong clr_fb = clr_ka < clr_kb ? clr_off[clr_ka] : clr_te;                    \
        if (clr_fb > clr_ts) {                                                              \
            const uint clr_p = 0;                                                           \
            CLR_FOR_VARS(CLR_WGET)                                                          \
            for (uint clr_j = 1; clr_j < CLR_WS && clr_ts + (ulong)clr_j * CLR_SEG_E < clr_fb; \
                 ++clr_j) {                                                                 \
                CLR_FOR_VARS(CLR_WFOLD)                                                     \
            }                                                                               \
            CLR_FOR_VARS(CLR_WOPEN)                                                         \
        }                                                                                   \
        if (clr_ka < clr_kb) {                                                              \
            if (clr_ok == 0 && (clr_s > 0 || clr_fb > clr_ts)) {                            \
                CLR_FOR_VARS(CLR_WOTOA)                                                     \
                const ulong clr_slot = 2 * clr_r;                                           \
                CLR_FOR_VARS(CLR_SPART)                                                     \
            } else if (clr_ok == 1) {                                                       \
                const ulong clr_e = clr_ka - 1;                                             \
                const ulong clr_sb = clr_off[clr_e];                                        \
                CLR_FOR_VARS(CLR_WOTOA)                                                     \
                CLR_FOR_VARS(CLR_SSTORE)                                                    \
            }                                                                               \
            CLR_FOR_VARS(CLR_WORESET)                                                       \
            clr_ok = 2;                                                                     \
            clr_pend = clr_te < clr_re && clr_off[clr_kb] > clr_te;                         \
        }                                                                                   \
    }

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const uint clr_lid = (uint)get_local_id(0);
    const uint clr_w = clr_lid / CLR_WS, clr_wl = clr_lid % CLR_WS;
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
    CLR_FOR_VARS(CLR_WDECL)
    __local uint clr_wm[CLR_WN * 2 * CLR_WMW];
    __local ulong clr_wsp[CLR_WN * (CLR_WS + 1)];
    __local uint* clr_rm = clr_wm + clr_w * 2 * CLR_WMW;
    __local ulong* clr_rsp = clr_wsp + clr_w * (CLR_WS + 1);
    const uint clr_vb = clr_w * CLR_WS * CLR_WSTRIDE;
    const ulong clr_nr = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    const ulong clr_nv = get_num_groups(0) * CLR_WN;
    for (uint clr_j = clr_wl; clr_j < 2 * CLR_WMW; clr_j += CLR_WS) clr_rm[clr_j] = 0u;
    for (ulong clr_r = get_group_id(0) * CLR_WN + clr_w; clr_r < clr_nr; clr_r += clr_nv) {
        const ulong clr_rs = clr_lo + clr_r * clr_tile;
        const ulong clr_re = clr_hi - clr_rs < clr_tile ? clr_hi : clr_rs + clr_tile;
        const ulong clr_ns = (clr_re - clr_rs + CLR_WT - 1) / CLR_WT;
        // Work-item 0: the open piece is the range's head (0), a segment begun in the range
        // (1, its value in clr_o), or none (2); clr_pend: the carry slot holds the next one.
        int clr_ok = 0, clr_pend = 0;
        CLR_FOR_VARS(CLR_WORESET)
        if (clr_wl == 0) clr_rsp[0] = clr_seg_lower(clr_rs, clr_nseg, clr_c, clr_off);
        for (ulong clr_qs = 0; clr_qs < clr_ns; clr_qs += CLR_WS) {
            const ulong clr_tn = clr_ns - clr_qs < CLR_WS ? clr_ns - clr_qs : CLR_WS;
            if (clr_wl < clr_tn) {
                const ulong clr_tq = clr_rs + (clr_qs + clr_wl + 1) * CLR_WT;
                const ulong clr_te = clr_tq < clr_re ? clr_tq : clr_re;
                clr_rsp[clr_wl + 1] =
                    clr_te >= clr_hi ? clr_nseg : clr_seg_lower(clr_te, clr_nseg, clr_c, clr_off);
            }
            CLR_WSYNC;
            for (uint clr_ti = 0; clr_ti < (uint)clr_tn; ++clr_ti) {
                const ulong clr_s = clr_qs + clr_ti;
                const ulong clr_ka = clr_rsp[clr_ti], clr_kb = clr_rsp[clr_ti + 1];
                __local uint* clr_rmb = clr_rm + (clr_s & 1) * CLR_WMW;
                const ulong clr_ts = clr_rs + clr_s * CLR_WT;
                const ulong clr_te = clr_re - clr_ts < CLR_WT ? clr_re : clr_ts + CLR_WT;
                const uint clr_cnt = (uint)(clr_te - clr_ts);
                const uint clr_p0 = clr_wl * CLR_SEG_E;
                const ulong clr_i0 = clr_ts + clr_p0;
                const uint clr_rl = clr_p0 >= clr_cnt ? 0u
                                    : (clr_cnt - clr_p0 < CLR_SEG_E ? clr_cnt - clr_p0 : CLR_SEG_E);
#if CLR_VEC > 1 && CLR_RUNS_PRE
                // The early loads: the whole aligned run's vectors issued before the marks.
                const int clr_whole = clr_rl == CLR_SEG_E && clr_i0 % CLR_VEC == 0;
                CLR_RSLOTS(CLR_RPDECL)
                if (clr_whole) {
                    CLR_RSLOTS(CLR_RPLOAD)
                }
#endif
                // 1. marks (an empty segment stored at once)
                for (ulong clr_e = clr_ka + clr_wl; clr_e < clr_kb; clr_e += CLR_WS) {
                    const ulong clr_b = clr_off[clr_e];
                    if (clr_off[clr_e + 1] == clr_b) {
                        CLR_FOR_VARS(CLR_SEMPTY)
                    } else {
                        const uint clr_p = (uint)(clr_b - clr_ts);
                        atomic_or(&clr_rmb[clr_p / 32], 1u << (clr_p % 32));
                    }
                }
                CLR_WSYNC;
                // The segment the last sub-tile's marker carried (written before this barrier,
                // the carry slot's next write after the next one).
                if (clr_wl == 0 && clr_pend) {
                    CLR_FOR_VARS(CLR_WCGET)
                    clr_ok = 1;
                    clr_pend = 0;
                }
                // 2. walk: the pieces to the warp's slots
                const uint clr_bits = (clr_rmb[clr_p0 / 32] >> (clr_p0 % 32)) & CLR_RUN_BITS;
                const uint clr_sp0 = clr_vb + clr_wl * CLR_WSTRIDE;
                uint clr_sp = clr_sp0;
                CLR_FOR_VARS(CLR_SRESET)
#if CLR_VEC > 1 && CLR_RUNS_PRE
                if (clr_whole) {
                    CLR_RSLOTS(CLR_WPWALK)
                } else
#elif CLR_VEC > 1
                if (clr_rl == CLR_SEG_E && clr_i0 % CLR_VEC == 0) {
                    CLR_RVWALK(CLR_WH)
                } else
#endif
                {
                    CLR_RSWALK(CLR_WFLUSH)
                }
                CLR_FOR_VARS(CLR_WPUT)
                CLR_WSYNC;
                // This sub-tile's mask cleared for the sub-tile after next.
                for (uint clr_j = clr_wl; clr_j < CLR_WMW; clr_j += CLR_WS) clr_rmb[clr_j] = 0u;
                // 3. each segment begun in the sub-tile, by the work-item that marked it
                for (ulong clr_e = clr_ka + clr_wl; clr_e < clr_kb; clr_e += CLR_WS) {
                    const ulong clr_b = clr_off[clr_e], clr_bn = clr_off[clr_e + 1];
                    if (clr_bn == clr_b) continue;
                    const uint clr_p = (uint)(clr_b - clr_ts);
                    const ulong clr_sb = clr_b;
                    CLR_FOR_VARS(CLR_WGET)
                    for (uint clr_j = clr_p / CLR_SEG_E + 1;
                         clr_j < CLR_WS && clr_ts + (ulong)clr_j * CLR_SEG_E < clr_bn; ++clr_j) {
                        CLR_FOR_VARS(CLR_WFOLD)
                    }
                    if (clr_bn <= clr_te) {
                        CLR_FOR_VARS(CLR_SSTORE)
                    } else if (clr_te == clr_re) {
                        const ulong clr_slot = 2 * clr_r + 1;
                        CLR_FOR_VARS(CLR_SPART)
                    } else {
                        CLR_FOR_VARS(CLR_WCPUT)
                    }
                }
                if (clr_wl == 0) CLR_WHEAD
            }
            if (clr_wl == 0) clr_rsp[0] = clr_rsp[clr_tn];
            CLR_WSYNC;
        }
        // The range's end: an open head to slot 2R; an open segment stored where it ends here,
        // else to slot 2R+1 (clr_finish joins it).
        if (clr_wl == 0 && clr_ok != 2) {
            CLR_FOR_VARS(CLR_WOTOA)
            const ulong clr_e = clr_rsp[0] - 1;
            if (clr_ok == 1 && clr_off[clr_rsp[0]] == clr_re) {
                const ulong clr_sb = clr_off[clr_e];
                CLR_FOR_VARS(CLR_SSTORE)
            } else {
                const ulong clr_slot = 2 * clr_r + (clr_ok == 1);
                CLR_FOR_VARS(CLR_SPART)
            }
        }
    }
}
