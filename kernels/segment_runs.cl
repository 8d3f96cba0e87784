// clreduce: the `runs` segmented plan over CSR offsets (design/algorithms.md, "runs"; decision
// 62). Appended after segment.cl (whose kernels it replaces when CLR_SEG_ALGO is CLR_SEG_RUNS)
// and uses its macros: CLR_SDECL, CLR_SRESET, CLR_SSTORE, CLR_SEMPTY, CLR_SGROUP, CLR_SPART,
// CLR_SFOLD, CLR_CUT_SERIAL, CLR_CUT_GROUP and clr_seg_lower.
//
// Tiles of clr_tile = CLR_WG * CLR_SEG_E consecutive elements from clr_lo; work-group g takes
// the consecutive tiles g*m .. g*m + m - 1, and finds the segment bounds of a batch of CLR_WG
// tiles at once (one binary search per work-item). Per tile [ts, te):
// 1. marks: the segments ka..kb that begin in the tile (work-items strided over them): an
//    empty one is stored at once, a non-empty one sets the bit of its first element in a
//    local mask and its number (relative to ka) in clr_rs;
// 2. walk: work-item lid combines its run of CLR_SEG_E consecutive elements lid*E .. in index
//    order, CLR_VEC at a time where the body's reads at [i] allow (CLR_CALL_V, one vector load
//    per buffer; CLR_CALL_VH where a segment starts among them), the run's mask bits saying
//    where segments start: a segment that starts and ends in the run is stored; the piece
//    before the run's first start (its head) goes to local memory, the last piece stays;
// 3. joins: the work-item holding a segment's start, where the segment goes on past its run,
//    folds the heads of the following runs up to the one where it ends (its end read from
//    the offsets) and stores it, or writes partial slot 2t+1 if it goes on past the tile; the
//    tile's own head (the part of a segment begun before it) goes to slot 2t, folded by
//    work-item 0 up to the first start, or by the work-group's tree when none starts in it.
// clr_finish gives each tile whose tail goes on a work-item that folds the heads of the
// following tiles up to the one where its segment ends (the whole work-group for a segment
// over more than CLR_RUNS_SERIAL tiles), as merge's does.
// Every combination order is fixed by CLR_WG and CLR_SEG_E: deterministic.

#define CLR_RUNS_SERIAL 32
// CLR_RUNS_SPLIT: 1 loads a vector without the start checks where none of its elements
// starts a segment, 0 always runs them (one code path for the warp; SegmentPlan::checks, the
// rule on GPUs outside the lean kernel, decision 78).
#ifndef CLR_RUNS_SPLIT
#define CLR_RUNS_SPLIT 1
#endif
// CLR_RUNS_DIAG (A/B only, scripts/gpu/csr_ab.sh; results wrong): 1 skips the joins' folds of
// the following runs' heads, 2 also the marks (no segment starts: every tile one piece), 3
// the walk's stores of the segments that end in their run, 4 the walk's segment starts (the
// marks run, the walk combines every run whole).
#ifndef CLR_RUNS_DIAG
#define CLR_RUNS_DIAG 0
#endif
#define CLR_RDIAG_NOFOLD (CLR_RUNS_DIAG == 1 || CLR_RUNS_DIAG == 2)
#ifndef CLR_RUNS_LEAN
#define CLR_RUNS_LEAN 0
#endif
#define CLR_RMW ((CLR_WG * CLR_SEG_E + 31) / 32)
// CLR_RUNS_SCAN (SegmentPlan::scan, decision 65): 1 joins the runs' heads with a segmented
// scan over the work-group (log2 CLR_WG steps, every work-item at once) instead of a serial
// fold by the work-item where a segment starts.
#ifndef CLR_RUNS_SCAN
#define CLR_RUNS_SCAN 0
#endif
// CLR_RUNS_PRE (decision 65): 1 issues a whole aligned run's vector loads before the marks
// (registers clr_px0.., CLR_VPLOAD), so their latency overlaps the offsets' reads and the
// barrier; the walk then runs the body on the registers (CLR_CALL_VP).
#ifndef CLR_RUNS_PRE
#define CLR_RUNS_PRE 0
#endif
// A run's vectors in registers (the early loads here, the warp kernel's and the register scan
// kernel's, segment_warp.cl and segment_scan.cl): CLR_RSLOTS(X) names the run's vectors,
// CLR_RPDECL / CLR_RPLOAD declare and fill vector s, CLR_PWALK(s, H) runs the body on it with
// the start checks only where one of its elements starts a segment (CLR_RUNS_SPLIT), else with
// the kernel's start handler H on every element.
#if CLR_VEC > 1
#define CLR_RNV (CLR_SEG_E / CLR_VEC)
#if CLR_RNV == 1
#define CLR_RSLOTS(X) X(0)
#elif CLR_RNV == 2
#define CLR_RSLOTS(X) X(0) X(1)
#elif CLR_RNV == 4
#define CLR_RSLOTS(X) X(0) X(1) X(2) X(3)
#elif CLR_RNV == 8
#define CLR_RSLOTS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#else
#define CLR_RSLOTS(X) \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#endif
#define CLR_RPDECL(s) CLR_VPDECL(clr_px##s)
#define CLR_RPLOAD(s) CLR_VPLOAD(clr_px##s, (CLR_IDX)(clr_i0 + (s) * CLR_VEC))
#define CLR_RNOH(l)
#define CLR_PWALK(s, H)                                                                 \
    if (CLR_RUNS_SPLIT && ((clr_bits >> ((s) * CLR_VEC)) & ((1u << CLR_VEC) - 1u)) == 0u) { \
        CLR_CALL_VP(clr_px##s, (CLR_IDX)(clr_i0 + (s) * CLR_VEC), 0, CLR_RNOH)          \
    } else {                                                                            \
        const uint clr_qb = (s) * CLR_VEC;                                              \
        CLR_CALL_VP(clr_px##s, (CLR_IDX)(clr_i0 + clr_qb), 0, H)                        \
    }
#define CLR_RPWALK(s) CLR_PWALK(s, CLR_RH)
#endif
#if CLR_SEG_E >= 32
#define CLR_RUN_BITS 0xffffffffu
#else
#define CLR_RUN_BITS ((1u << CLR_SEG_E) - 1u)
#endif

#define CLR_RDECL(k) R##k##_A clr_rh##k;
#define CLR_RKEEP(k) clr_rh##k = clr_a##k[0];
#define CLR_RPUTA(k) clr_lm##k[clr_lid] = clr_a##k[0];
#define CLR_RPUTH(k) clr_lm##k[clr_lid] = clr_rh##k;
#define CLR_RGETH(k) clr_a##k[0] = clr_lm##k[clr_j];
#define CLR_RFOLDH(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_lm##k[clr_j]);
#define CLR_ROWN(k) clr_a##k[0] = clr_lm##k[clr_lid];
// The scan's step: heads lid and lid + d combined (the chain from lid stops at a run with a
// segment start, whose head ends the segment that comes into it).
#define CLR_RSDECL(k) R##k##_A clr_sv##k = clr_lm##k[clr_lid];
#define CLR_RSREAD(k) clr_sv##k = clr_op_##k(clr_sv##k, clr_lm##k[clr_lid + clr_d]);
#define CLR_RSWRITE(k) clr_lm##k[clr_lid] = clr_sv##k;
// A run's walk in both kernels, HOOK / FLUSH the kernel's segment-start check: whole and
// aligned, `CLR_VEC` elements per load, the checks only in loads that hold a start
// (CLR_RUNS_SPLIT); else one element at a time.
#define CLR_RVWALK(HOOK)                                                                 \
    for (uint clr_qb = 0; clr_qb < CLR_SEG_E; clr_qb += CLR_VEC) {                       \
        if (CLR_RUNS_SPLIT && ((clr_bits >> clr_qb) & ((1u << CLR_VEC) - 1u)) == 0u) {   \
            CLR_CALL_V((CLR_IDX)(clr_i0 + clr_qb), 0);                                   \
        } else {                                                                         \
            CLR_CALL_VH((CLR_IDX)(clr_i0 + clr_qb), 0, HOOK);                            \
        }                                                                                \
    }
#define CLR_RSWALK(FLUSH)                                                                \
    for (uint clr_q = 0; clr_q < clr_rl; ++clr_q) {                                      \
        FLUSH(clr_q)                                                                     \
        CLR_CALL((CLR_IDX)(clr_i0 + clr_q), 0);                                          \
    }
// The backward segmented inclusive scan of the work-items' heads (both kernels): slot r ends
// as heads r .. j combined, j the first run at or after r where a segment starts (clr_rf).
#define CLR_RSCAN                                                                        \
    for (uint clr_d = 1; clr_d < CLR_WG; clr_d <<= 1) {                                 \
        const int clr_go = !clr_rf[clr_lid] && clr_lid + clr_d < CLR_WG;                \
        uint clr_nf = 0u;                                                                \
        CLR_FOR_VARS(CLR_RSDECL)                                                         \
        if (clr_go) {                                                                    \
            CLR_FOR_VARS(CLR_RSREAD)                                                     \
            clr_nf = clr_rf[clr_lid + clr_d];                                            \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        if (clr_go) {                                                                    \
            CLR_FOR_VARS(CLR_RSWRITE)                                                    \
            if (clr_nf) clr_rf[clr_lid] = 1u;                                            \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    }
#define CLR_RFOLD1(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_lm##k[clr_lid + 1]);
#define CLR_RGET0(k) clr_a##k[0] = clr_lm##k[0];

// Before the element at run position q: if a segment starts there, the current piece ends
// (the run's head is kept, a segment begun in the run is stored) and the new one begins.
#define CLR_RFLUSH(clr_q)                                       \
    if (clr_bits & (1u << (clr_q))) {                           \
        if (!clr_had) {                                         \
            CLR_FOR_VARS(CLR_RKEEP)                             \
            clr_had = 1;                                        \
        } else {                                                \
            const ulong clr_e = clr_ka + clr_cur;               \
            if (CLR_RUNS_DIAG != 3) {                           \
                CLR_FOR_VARS(CLR_SSTORE)                        \
            }                                                   \
        }                                                       \
        clr_cur = clr_rs[clr_p0 + (clr_q)];                     \
        clr_sb = clr_i0 + (clr_q);                              \
        CLR_FOR_VARS(CLR_SRESET)                                \
    }
#define CLR_RH(l) CLR_RFLUSH(clr_qb + (l))

#if defined(CLR_RUNS_WS)
// The warp kernel (SegmentPlan::warp, decision 81): its clr_main is segment_warp.cl's.
#elif CLR_RUNS_LEAN
// CLR_RUNS_LEAN (SegmentPlan::lean, decision 72): the walk writes each piece (from a segment
// start, or the run's first element, to the next start or the run's end) to local memory at its
// first element's place (clr_lv, a slot per element of the tile) and stores nothing to global
// memory; the work-item that marked a segment then finishes it: its first piece, then the heads
// of the following runs up to its end (its bounds read again from the offsets), stored
// (work-items strided over the segments: consecutive results) or written to partial slot 2t+1
// when it goes on past the tile. Two barriers a tile: two start masks used by turns, each
// cleared after the walk that read it. Run r's slots begin at r * (CLR_SEG_E + 1), so that
// work-items at the same place of their runs write different banks (plan/segment_runs.rs
// counts the slot more per run).
#define CLR_LSTRIDE (CLR_SEG_E + 1)
#define CLR_LSLOT(p) ((p) / CLR_SEG_E * CLR_LSTRIDE + (p) % CLR_SEG_E)
#define CLR_LDECL(k) __local R##k##_A clr_lv##k[CLR_WG * CLR_LSTRIDE];
#define CLR_LPUT(k) clr_lv##k[clr_sp] = clr_a##k[0];
#define CLR_LGET(k) clr_a##k[0] = clr_lv##k[CLR_LSLOT(clr_p)];
#define CLR_LFOLD(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_lv##k[clr_j * CLR_LSTRIDE]);
// With CLR_RUNS_SCAN: the run's head (none where a segment starts at its first element) to the
// scan's slot, and the scanned heads from run clr_j on folded.
#define CLR_LHEAD(k) \
    clr_lm##k[clr_lid] = (clr_bits & 1u) ? clr_identity_##k() : clr_lv##k[clr_lid * CLR_LSTRIDE];
#define CLR_LFOLDS(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_lm##k[clr_j]);
// Before the element at run position q: the running value of the current piece stored (not
// under the start's branch: the last store of a piece is its value; H200, mean 16: 489.9 us
// against 523.2 with the store under it), and where a segment starts there, a new piece.
#define CLR_LFLUSH(clr_q)                          \
    CLR_FOR_VARS(CLR_LPUT)                         \
    if (clr_bits & (1u << (clr_q))) {              \
        clr_sp = clr_lid * CLR_LSTRIDE + (clr_q);  \
        CLR_FOR_VARS(CLR_SRESET)                   \
    }
#define CLR_LH(l) CLR_LFLUSH(clr_qb + (l))
// The bounds [clr_b, clr_bn) of segment clr_e.
#define CLR_LBOUNDS                  \
    clr_b = clr_off[clr_e];          \
    clr_bn = clr_off[clr_e + 1];

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const uint clr_lid = (uint)get_local_id(0);
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
    CLR_FOR_VARS(CLR_LDECL)
    __local uint clr_rm[2 * CLR_RMW];
    __local ulong clr_rsp[CLR_WG + 1];
#if CLR_RUNS_SCAN
    __local uint clr_rf[CLR_WG];
#endif
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    const ulong clr_m = (clr_ntiles + get_num_groups(0) - 1) / get_num_groups(0);
    const ulong clr_t0 = get_group_id(0) * clr_m;
    const ulong clr_tend = clr_t0 + clr_m < clr_ntiles ? clr_t0 + clr_m : clr_ntiles;
    if (clr_lid == 0 && clr_t0 < clr_tend)
        clr_rsp[0] = clr_seg_lower(clr_lo + clr_t0 * clr_tile, clr_nseg, clr_c, clr_off);
    for (uint clr_j = clr_lid; clr_j < 2 * CLR_RMW; clr_j += CLR_WG) clr_rm[clr_j] = 0u;
    for (ulong clr_tb = clr_t0; clr_tb < clr_tend; clr_tb += CLR_WG) {
        const ulong clr_tn = clr_tend - clr_tb < CLR_WG ? clr_tend - clr_tb : CLR_WG;
        if (clr_lid < clr_tn) {
            const ulong clr_te = clr_lo + (clr_tb + clr_lid + 1) * clr_tile;
            clr_rsp[clr_lid + 1] =
                clr_te >= clr_hi ? clr_nseg : clr_seg_lower(clr_te, clr_nseg, clr_c, clr_off);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint clr_ti = 0; clr_ti < (uint)clr_tn; ++clr_ti) {
            const ulong clr_t = clr_tb + clr_ti;
            const ulong clr_ka = clr_rsp[clr_ti], clr_kb = clr_rsp[clr_ti + 1];
            __local uint* clr_rmb = clr_rm + (clr_t & 1) * CLR_RMW;
            const ulong clr_ts = clr_lo + clr_t * clr_tile;
            const ulong clr_te = clr_hi - clr_ts < clr_tile ? clr_hi : clr_ts + clr_tile;
            const uint clr_cnt = (uint)(clr_te - clr_ts);
            const uint clr_p0 = clr_lid * CLR_SEG_E;
            const ulong clr_i0 = clr_ts + clr_p0;
            const uint clr_rl = clr_p0 >= clr_cnt ? 0u
                                : (clr_cnt - clr_p0 < CLR_SEG_E ? clr_cnt - clr_p0 : CLR_SEG_E);
            // 1. marks (an empty segment stored at once)
            for (ulong clr_e = clr_ka + clr_lid; clr_e < clr_kb; clr_e += CLR_WG) {
                ulong clr_b, clr_bn;
                CLR_LBOUNDS
                if (clr_bn == clr_b) {
                    CLR_FOR_VARS(CLR_SEMPTY)
                } else {
                    const uint clr_p = (uint)(clr_b - clr_ts);
                    atomic_or(&clr_rmb[clr_p / 32], 1u << (clr_p % 32));
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            // 2. walk: the pieces to clr_lv
            const uint clr_bits = (clr_rmb[clr_p0 / 32] >> (clr_p0 % 32)) & CLR_RUN_BITS;
            uint clr_sp = clr_lid * CLR_LSTRIDE;
            CLR_FOR_VARS(CLR_SRESET)
#if CLR_VEC > 1
            if (clr_rl == CLR_SEG_E && clr_i0 % CLR_VEC == 0) {
                CLR_RVWALK(CLR_LH)
            } else
#endif
            {
                CLR_RSWALK(CLR_LFLUSH)
            }
            CLR_FOR_VARS(CLR_LPUT)
#if CLR_RUNS_SCAN
            // Uniform: a segment starts in the tile. The runs' heads combined by a backward
            // segmented scan (as the other kernel's): slot r ends as heads r .. j, j the first
            // run at or after r where a segment starts.
            const int clr_scan = clr_ka < clr_kb;
            if (clr_scan) {
                CLR_FOR_VARS(CLR_LHEAD)
                clr_rf[clr_lid] = clr_bits ? 1u : 0u;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (clr_scan) {
                CLR_RSCAN
            }
#else
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
            // This tile's mask cleared for the tile after next (the walk read it before the
            // barrier). Clearing the next tile's mask during the walk instead, as session 15
            // did, lost results on PoCL once a work-group took three tiles or more.
            for (uint clr_j = clr_lid; clr_j < CLR_RMW; clr_j += CLR_WG) clr_rmb[clr_j] = 0u;
            // 3. each segment begun in the tile, by the work-item that marked it
            for (ulong clr_e = clr_ka + clr_lid; clr_e < clr_kb; clr_e += CLR_WG) {
                ulong clr_b, clr_bn;
                CLR_LBOUNDS
                if (clr_bn == clr_b) continue;
                const uint clr_p = (uint)(clr_b - clr_ts);
                const ulong clr_sb = clr_b;
                CLR_FOR_VARS(CLR_LGET)
#if CLR_RUNS_SCAN
                {
                    const uint clr_j = clr_p / CLR_SEG_E + 1;
                    if (clr_j < CLR_WG && clr_ts + (ulong)clr_j * CLR_SEG_E < clr_bn) {
                        CLR_FOR_VARS(CLR_LFOLDS)
                    }
                }
#else
                for (uint clr_j = clr_p / CLR_SEG_E + 1;
                     clr_j < CLR_WG && clr_ts + (ulong)clr_j * CLR_SEG_E < clr_bn; ++clr_j) {
                    CLR_FOR_VARS(CLR_LFOLD)
                }
#endif
                if (clr_bn > clr_te) {
                    const ulong clr_slot = 2 * clr_t + 1;
                    CLR_FOR_VARS(CLR_SPART)
                } else {
                    CLR_FOR_VARS(CLR_SSTORE)
                }
            }
            // The tile's head: the part of the segment begun before it (none in the first).
            if (clr_ka == clr_kb) {
                // No segment begins in the tile (uniform): the walk's value is the whole run.
                CLR_FOR_VARS(CLR_SGROUP)
                if (clr_lid == 0) {
                    const ulong clr_slot = 2 * clr_t;
                    CLR_FOR_VARS(CLR_SPART)
                }
            } else if (clr_lid == 0) {
                const ulong clr_fb = clr_off[clr_ka];
                if (clr_fb > clr_ts && CLR_RUNS_SCAN) {
                    CLR_FOR_VARS(CLR_RGET0)
                    const ulong clr_slot = 2 * clr_t;
                    CLR_FOR_VARS(CLR_SPART)
                } else if (clr_fb > clr_ts) {
                    const uint clr_p = 0;
                    CLR_FOR_VARS(CLR_LGET)
                    for (uint clr_j = 1; clr_j < CLR_WG && clr_ts + (ulong)clr_j * CLR_SEG_E < clr_fb;
                         ++clr_j) {
                        CLR_FOR_VARS(CLR_LFOLD)
                    }
                    const ulong clr_slot = 2 * clr_t;
                    CLR_FOR_VARS(CLR_SPART)
                }
            }
        }
        if (clr_lid == 0) clr_rsp[0] = clr_rsp[clr_tn];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#else
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const uint clr_lid = (uint)get_local_id(0);
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
    CLR_FOR_VARS(CLR_RDECL)
    __local uint clr_rm[(CLR_WG * CLR_SEG_E + 31) / 32];
    __local uint clr_rs[CLR_WG * CLR_SEG_E];
    __local ulong clr_rsp[CLR_WG + 1];
#if CLR_RUNS_SCAN
    __local uint clr_rf[CLR_WG];
#endif
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    const ulong clr_m = (clr_ntiles + get_num_groups(0) - 1) / get_num_groups(0);
    const ulong clr_t0 = get_group_id(0) * clr_m;
    const ulong clr_tend = clr_t0 + clr_m < clr_ntiles ? clr_t0 + clr_m : clr_ntiles;
    if (clr_lid == 0 && clr_t0 < clr_tend)
        clr_rsp[0] = clr_seg_lower(clr_lo + clr_t0 * clr_tile, clr_nseg, clr_c, clr_off);
    // Batches of CLR_WG tiles: work-item lid finds the first segment beginning at or after the
    // end of tile tb + lid (the last tile: all of them, so it owns the empty ones at its end).
    for (ulong clr_tb = clr_t0; clr_tb < clr_tend; clr_tb += CLR_WG) {
        const ulong clr_tn = clr_tend - clr_tb < CLR_WG ? clr_tend - clr_tb : CLR_WG;
        if (clr_lid < clr_tn) {
            const ulong clr_te = clr_lo + (clr_tb + clr_lid + 1) * clr_tile;
            clr_rsp[clr_lid + 1] =
                clr_te >= clr_hi ? clr_nseg : clr_seg_lower(clr_te, clr_nseg, clr_c, clr_off);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint clr_ti = 0; clr_ti < (uint)clr_tn; ++clr_ti) {
            const ulong clr_t = clr_tb + clr_ti;
            const ulong clr_ka = clr_rsp[clr_ti], clr_kb = clr_rsp[clr_ti + 1];
            const ulong clr_ts = clr_lo + clr_t * clr_tile;
            const ulong clr_te = clr_hi - clr_ts < clr_tile ? clr_hi : clr_ts + clr_tile;
            const uint clr_cnt = (uint)(clr_te - clr_ts);
            const uint clr_p0 = clr_lid * CLR_SEG_E;
            const ulong clr_i0 = clr_ts + clr_p0;
            const uint clr_rl = clr_p0 >= clr_cnt ? 0u
                                : (clr_cnt - clr_p0 < CLR_SEG_E ? clr_cnt - clr_p0 : CLR_SEG_E);
#if CLR_VEC > 1 && CLR_RUNS_PRE
            const int clr_whole = clr_rl == CLR_SEG_E && clr_i0 % CLR_VEC == 0;
            CLR_RSLOTS(CLR_RPDECL)
            if (clr_whole) {
                CLR_RSLOTS(CLR_RPLOAD)
            }
#endif
            // 1. marks
            for (uint clr_j = clr_lid; clr_j < (CLR_WG * CLR_SEG_E + 31) / 32; clr_j += CLR_WG)
                clr_rm[clr_j] = 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (ulong clr_e = clr_ka + clr_lid; clr_e < clr_kb && CLR_RUNS_DIAG != 2; clr_e += CLR_WG) {
                const ulong clr_b = clr_off[clr_e];
                if (clr_off[clr_e + 1] == clr_b) {
                    CLR_FOR_VARS(CLR_SEMPTY)
                } else {
                    const uint clr_p = (uint)(clr_b - clr_ts);
                    clr_rs[clr_p] = (uint)(clr_e - clr_ka);
                    atomic_or(&clr_rm[clr_p / 32], 1u << (clr_p % 32));
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            // 2. walk
            const uint clr_bits =
                CLR_RUNS_DIAG == 4 ? 0u : (clr_rm[clr_p0 / 32] >> (clr_p0 % 32)) & CLR_RUN_BITS;
            uint clr_cur = 0;
            ulong clr_sb = 0;
            int clr_had = 0;
            CLR_FOR_VARS(CLR_SRESET)
#if CLR_RUNS_PRE
            // The end of the segment that starts last in the run (its join's bound), read
            // before the walk so that the load's latency passes under it.
            const ulong clr_lend =
                clr_bits ? clr_off[clr_ka + clr_rs[clr_p0 + 31u - clz(clr_bits)] + 1] : 0;
#define CLR_REND clr_lend
#else
#define CLR_REND clr_off[clr_e + 1]
#endif
#if CLR_VEC > 1 && CLR_RUNS_PRE
            if (clr_whole) {
                CLR_RSLOTS(CLR_RPWALK)
            } else
#elif CLR_VEC > 1
            if (clr_rl == CLR_SEG_E && clr_i0 % CLR_VEC == 0) {
                CLR_RVWALK(CLR_RH)
            } else
#endif
            {
                CLR_RSWALK(CLR_RFLUSH)
            }
            // The run's head: the piece before its first start, or the whole run.
            if (clr_had) {
                CLR_FOR_VARS(CLR_RPUTH)
            } else {
                CLR_FOR_VARS(CLR_RPUTA)
            }
            const ulong clr_fb = clr_ka < clr_kb ? clr_off[clr_ka] : clr_te;
#if CLR_RUNS_SCAN
            clr_rf[clr_lid] = clr_had ? 1u : 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            // Uniform: a segment starts in the tile.
            const int clr_scan = clr_ka < clr_kb;
            if (clr_scan) {
                CLR_RSCAN
            }
#else
            barrier(CLK_LOCAL_MEM_FENCE);
            const int clr_scan = 0;
#endif
            // 3. joins: my last piece, if a segment began in my run.
            if (clr_had && clr_scan) {
                const ulong clr_e = clr_ka + clr_cur;
                const ulong clr_end = CLR_REND;
                if (clr_lid + 1 < CLR_WG && clr_ts + (ulong)(clr_lid + 1) * CLR_SEG_E < clr_end) {
                    CLR_FOR_VARS(CLR_RFOLD1)
                }
                if (clr_end > clr_te) {
                    const ulong clr_slot = 2 * clr_t + 1;
                    CLR_FOR_VARS(CLR_SPART)
                } else {
                    CLR_FOR_VARS(CLR_SSTORE)
                }
            } else if (clr_had) {
                const ulong clr_e = clr_ka + clr_cur;
                const ulong clr_end = CLR_REND;
                uint clr_j = clr_lid + 1;
                for (; !CLR_RDIAG_NOFOLD && clr_j < CLR_WG && clr_ts + (ulong)clr_j * CLR_SEG_E < clr_end; ++clr_j) {
                    CLR_FOR_VARS(CLR_RFOLDH)
                }
                if (clr_end > clr_te) {
                    const ulong clr_slot = 2 * clr_t + 1;
                    CLR_FOR_VARS(CLR_SPART)
                } else {
                    CLR_FOR_VARS(CLR_SSTORE)
                }
            }
            // The tile's head: the part of the segment begun before it (none in the first).
            if (clr_ka == clr_kb) {
                // No segment begins in the tile: all of it is its head (uniform branch).
                CLR_FOR_VARS(CLR_ROWN)
                barrier(CLK_LOCAL_MEM_FENCE);
                CLR_FOR_VARS(CLR_SGROUP)
                if (clr_lid == 0) {
                    const ulong clr_slot = 2 * clr_t;
                    CLR_FOR_VARS(CLR_SPART)
                }
            } else if (clr_lid == 0 && clr_fb > clr_ts && clr_scan) {
                CLR_FOR_VARS(CLR_RGET0)
                const ulong clr_slot = 2 * clr_t;
                CLR_FOR_VARS(CLR_SPART)
            } else if (clr_lid == 0 && clr_fb > clr_ts) {
                uint clr_j = 0;
                CLR_FOR_VARS(CLR_RGETH)
                const uint clr_r1 = (uint)((clr_fb - clr_ts) / CLR_SEG_E);
                for (clr_j = 1; clr_j <= clr_r1 && clr_j < CLR_WG; ++clr_j) {
                    CLR_FOR_VARS(CLR_RFOLDH)
                }
                const ulong clr_slot = 2 * clr_t;
                CLR_FOR_VARS(CLR_SPART)
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (clr_lid == 0) clr_rsp[0] = clr_rsp[clr_tn];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#endif  // CLR_RUNS_LEAN

// A work-item per tile whose tail goes on (the last segment beginning in the tile ends past
// it): it folds the tail (slot 2t+1) and the heads (slots 2u) of the tiles t+1..t1 the segment
// covers, or lists a segment over more than CLR_RUNS_SERIAL tiles for the whole work-group.
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    const uint clr_lid = (uint)get_local_id(0);
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
    __local ulong clr_ml[CLR_WG];
    __local uint clr_mn;
#ifdef CLR_DIAG_NOFINISH
    return;  // A/B only (scripts/gpu/csr_ab.sh): the first pass's time alone, results wrong.
#endif
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    for (ulong clr_tb = get_group_id(0) * CLR_WG; clr_tb < clr_ntiles;
         clr_tb += get_num_groups(0) * CLR_WG) {
        if (clr_lid == 0) clr_mn = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        const ulong clr_t = clr_tb + clr_lid;
        if (clr_t + 1 < clr_ntiles) {
            const ulong clr_ts = clr_lo + clr_t * clr_tile;
            const ulong clr_te = clr_ts + clr_tile;
            const ulong clr_kb = clr_seg_lower(clr_te, clr_nseg, clr_c, clr_off);
            if (clr_kb > 0) {
                const ulong clr_e = clr_kb - 1;
                const ulong clr_sb = clr_off[clr_e];
                const ulong clr_end = clr_off[clr_kb];
                if (clr_sb >= clr_ts && clr_end > clr_te) {
                    const ulong clr_t1 = (clr_end - 1 - clr_lo) / clr_tile;
                    if (clr_t1 - clr_t > CLR_RUNS_SERIAL) {
                        clr_ml[atomic_inc(&clr_mn)] = clr_t;
                    } else {
                        CLR_CUT_SERIAL(clr_t, clr_t1)
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint clr_nl = clr_mn;
        for (uint clr_q = 0; clr_q < clr_nl; ++clr_q) {
            const ulong clr_tl = clr_ml[clr_q];
            const ulong clr_e =
                clr_seg_lower(clr_lo + (clr_tl + 1) * clr_tile, clr_nseg, clr_c, clr_off) - 1;
            const ulong clr_sb = clr_off[clr_e];
            const ulong clr_t1 = (clr_off[clr_e + 1] - 1 - clr_lo) / clr_tile;
            CLR_CUT_GROUP(clr_tl, clr_t1)
        }
    }
}
