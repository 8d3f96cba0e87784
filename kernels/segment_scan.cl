// clreduce: the `runs` plan's register scan kernel (SegmentPlan::wscan, decision 84), appended
// after segment_runs.cl (whose clr_main it replaces when CLR_RUNS_WS is defined; clr_finish is
// that file's) and using its macros and segment.cl's.
//
// The warp kernel's ranges (kernels/segment_warp.cl, decision 81: warp v takes the ranges v,
// v + V, ... of clr_tile elements, in sub-tiles of CLR_WT = CLR_WS * CLR_SEG_E elements, the
// partial slots 2R / 2R+1 of a range joined by clr_finish), with each element combined once in
// registers and the runs joined by a segmented scan over the warp's work-items. Per sub-tile
// [ts, te), work-item (lane) l:
// 1. its run's E elements loaded first (whole aligned runs: vector loads into registers);
// 2. the offsets read in order from the first segment beginning at or after ts (kept from the
//    last sub-tile: one binary search per range, none per sub-tile; the first CLR_WS loaded
//    before the last sub-tile's walk, CLR_WS_PRE), CLR_WS at a time, until
//    one begins at te or later; an empty segment is stored at once, a non-empty one marks the
//    bit of its first element in a start mask and its number (relative to the sub-tile's
//    first) at that element in clr_cn;
// 3. the walk: each element added to the running piece; at a start the piece ends (the run's
//    first piece is its head, kept; a later one is a whole segment, stored at once) and a new
//    one begins;
// 4. a backward segmented scan over the lanes of (head, has a start): lane l ends with the
//    heads of l .. m combined, m the first lane at or after l with a start (the whole runs of
//    the lanes between); the lane whose last segment goes on past its run adds the scan of
//    lane l + 1 and stores it where a later lane has a start, else it is the open segment
//    carried to the next sub-tile (every lane keeps the open piece: the range's head until the
//    range's first start, then the segment carried; at the sub-tile's first start it is
//    closed: the range's head to slot 2R, a segment stored).
// At the range's end the open piece goes to slot 2R (no start in the range), or is stored
// where its segment ends with the range, or goes to slot 2R+1.
// NVIDIA (CLR_WS < CLR_WG, planned only where DeviceCaps::warp_shuffle_ptx): the scan, the
// counts and the broadcasts through PTX shfl.sync / vote.sync, the warp's local memory ordered
// by bar.warp.sync; elsewhere the work-group is the warp and they go through local memory.
// Every combination order is fixed by CLR_WS, CLR_SEG_E and the tile: deterministic.

#define CLR_WS CLR_RUNS_WS
#define CLR_WN (CLR_WG / CLR_WS)
#define CLR_WT (CLR_WS * CLR_SEG_E)
#define CLR_WMW ((CLR_WT + 31) / 32)
#if CLR_WS < CLR_WG
#define CLR_CPTX 1
#define CLR_WSYNC asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")
#else
#define CLR_CPTX 0
#define CLR_WSYNC barrier(CLK_LOCAL_MEM_FENCE)
#endif

#if CLR_CPTX
static inline uint clr_shfl_down_u(uint v, uint d) {
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
    return r;
}
static inline uint clr_shfl_idx_u(uint v, uint l) {
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(l));
    return r;
}
static inline ulong clr_shfl_idx_ul(ulong v, uint l) {
    return (ulong)clr_shfl_idx_u((uint)v, l) | ((ulong)clr_shfl_idx_u((uint)(v >> 32), l) << 32);
}
static inline uint clr_ballot(int p) {
    uint r;
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }"
                 : "=r"(r) : "r"((uint)p));
    return r;
}
// dst = src of lane (lane + d) (MODE down) or of lane d (MODE idx), any accumulator type: the
// shuffle moves its 32-bit words.
#define CLR_CSHFL(k, dst, src, MODE, d)                                                      \
    {                                                                                       \
        union { R##k##_A v; uint u[(sizeof(R##k##_A) + 3) / 4]; } clr_ua, clr_ub;           \
        clr_ua.v = (src);                                                                   \
        for (uint clr_w = 0; clr_w < (sizeof(R##k##_A) + 3) / 4; ++clr_w)                   \
            asm volatile("shfl.sync." MODE ".b32 %0, %1, %2, 0x1f, 0xffffffff;"              \
                         : "=r"(clr_ub.u[clr_w]) : "r"(clr_ua.u[clr_w]), "r"(d));           \
        dst = clr_ub.v;                                                                     \
    }
#define CLR_CDOWN(k) R##k##_A clr_t##k; CLR_CSHFL(k, clr_t##k, clr_v##k, "down", clr_d)
#define CLR_CNEXT(k) CLR_CSHFL(k, clr_hn##k, clr_v##k, "down", 1u)
#define CLR_CHEAD0(k) CLR_CSHFL(k, clr_h0##k, clr_v##k, "idx", 0u)
#define CLR_CTAILL(k) CLR_CSHFL(k, clr_tl##k, clr_a##k[0], "idx", clr_ll)
#else
#define CLR_CDECLP(k) __local R##k##_A clr_cv##k[CLR_WG + 1];
#define CLR_CPUTV(k) clr_cv##k[clr_wl] = clr_v##k;
#define CLR_CDOWN(k) R##k##_A clr_t##k = clr_identity_##k();
#define CLR_CGETD(k) clr_t##k = clr_cv##k[clr_wl + clr_d];
#define CLR_CNEXT(k) clr_hn##k = clr_cv##k[clr_wl + 1];
#define CLR_CHEAD0(k) clr_h0##k = clr_cv##k[0];
#define CLR_CPUTT(k) clr_cv##k[CLR_WG] = clr_a##k[0];
#define CLR_CTAILL(k) clr_tl##k = clr_cv##k[CLR_WG];
#endif

#define CLR_CDECL(k) R##k##_A clr_o##k, clr_h##k, clr_v##k, clr_hn##k, clr_h0##k, clr_tl##k;
#define CLR_CSTEP(k) clr_v##k = clr_op_##k(clr_v##k, clr_t##k);
#define CLR_CKEEP(k) clr_h##k = clr_a##k[0];
#define CLR_CHEADV(k) clr_v##k = clr_had ? clr_h##k : clr_a##k[0];
#define CLR_CJOIN(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_hn##k);
#define CLR_COPEN(k) clr_o##k = clr_op_##k(clr_o##k, clr_h0##k);
#define CLR_COTOA(k) clr_a##k[0] = clr_o##k;
#define CLR_CTAKE(k) clr_o##k = clr_tl##k;
#define CLR_CORESET(k) clr_o##k = clr_identity_##k();
// Before the element at run position q: where a segment starts there, the piece ends (the
// run's head kept, a segment begun in the run stored) and a new one begins.
#define CLR_CFLUSH(clr_q)                                              \
    if (clr_bits & (1u << (clr_q))) {                                  \
        if (clr_had) {                                                 \
            const ulong clr_e = clr_ce;                                \
            CLR_FOR_VARS(CLR_SSTORE)                                   \
        } else {                                                       \
            CLR_FOR_VARS(CLR_CKEEP)                                    \
            clr_had = 1;                                               \
        }                                                              \
        clr_ce = clr_ka + clr_cn[clr_p0 + (clr_q)];                    \
        clr_sb = clr_i0 + (clr_q);                                     \
        CLR_FOR_VARS(CLR_SRESET)                                       \
    }
#define CLR_CH(l) CLR_CFLUSH(clr_qb + (l))
// Vector s of the run from its register (segment_runs.cl's CLR_RSLOTS, CLR_RPDECL, CLR_RPLOAD,
// CLR_PWALK): the start checks only where one of its elements starts a segment
// (CLR_RUNS_SPLIT), else on every element.
#define CLR_CPWALK(s) CLR_PWALK(s, CLR_CH)

// The count of the lanes whose segment begins in the sub-tile (clr_nin), a scan step's
// exchange, the next and first lanes' scans, the last lane with a start's last segment
// (PTX: shuffles and a ballot; portable: local memory and barriers, no barrier in a branch:
// PoCL ran the code after one inside it once per work-item as work-item 0).
#if CLR_CPTX
#define CLR_CCOUNT                                    \
    const uint clr_nin = popcount(clr_ballot(clr_in));
#define CLR_CSTEPX                         \
    CLR_FOR_VARS(CLR_CDOWN)                \
    clr_fd = clr_shfl_down_u(clr_f, clr_d);
#define CLR_CNEIGH                      \
    CLR_FOR_VARS(CLR_CNEXT)             \
    clr_fn = clr_shfl_down_u(clr_f, 1u); \
    CLR_FOR_VARS(CLR_CHEAD0)            \
    clr_f0 = clr_shfl_idx_u(clr_f, 0u);
#define CLR_CTAILPUT
#define CLR_CTAILX                                     \
    const uint clr_ll = 31u - clz(clr_ballot(clr_had)); \
    CLR_FOR_VARS(CLR_CTAILL)                           \
    clr_ne = clr_shfl_idx_ul(clr_ce, clr_ll);          \
    clr_nsb = clr_shfl_idx_ul(clr_sb, clr_ll);
#else
#define CLR_CCOUNT                                                     \
    {                                                                  \
        const ulong clr_e1 = clr_e + 1;                                \
        const int clr_in1 = clr_wl + 1 < CLR_WS && clr_e1 < clr_nseg && \
                            (clr_off[clr_e1] < clr_te || clr_last);    \
        if (clr_in && !clr_in1) clr_ccnt[clr_cpar] = clr_wl + 1;       \
        if (clr_wl == 0 && !clr_in) clr_ccnt[clr_cpar] = 0u;           \
    }                                                                  \
    CLR_WSYNC;                                                         \
    const uint clr_nin = clr_ccnt[clr_cpar];                           \
    clr_cpar ^= 1u;
#define CLR_CSTEPX                      \
    CLR_FOR_VARS(CLR_CDOWN)             \
    CLR_FOR_VARS(CLR_CPUTV)             \
    clr_cf[clr_wl] = clr_f;             \
    CLR_WSYNC;                          \
    if (clr_wl + clr_d < CLR_WS) {      \
        CLR_FOR_VARS(CLR_CGETD)         \
        clr_fd = clr_cf[clr_wl + clr_d]; \
    }                                   \
    CLR_WSYNC;
#define CLR_CNEIGH                  \
    CLR_FOR_VARS(CLR_CPUTV)         \
    clr_cf[clr_wl] = clr_f;         \
    CLR_WSYNC;                      \
    if (clr_wl + 1 < CLR_WS) {      \
        CLR_FOR_VARS(CLR_CNEXT)     \
        clr_fn = clr_cf[clr_wl + 1]; \
    }                               \
    CLR_FOR_VARS(CLR_CHEAD0)        \
    clr_f0 = clr_cf[0];
#define CLR_CTAILPUT           \
    if (clr_had && !clr_fn) {  \
        CLR_FOR_VARS(CLR_CPUTT) \
        clr_cxe[0] = clr_ce;   \
        clr_cxe[1] = clr_sb;   \
    }                          \
    CLR_WSYNC;
#define CLR_CTAILX          \
    CLR_FOR_VARS(CLR_CTAILL) \
    clr_ne = clr_cxe[0];    \
    clr_nsb = clr_cxe[1];
#endif
// Lane 0: the open piece closed at a sub-tile's first start (the range's head to slot 2R, a
// segment stored), and at the range's end (stored where its segment ends with the range, else
// to slot 2R, the range's head, or 2R+1).
#define CLR_CCLOSE                                \
    {                                             \
        CLR_FOR_VARS(CLR_COTOA)                   \
        if (clr_ok == 0) {                        \
            const ulong clr_slot = 2 * clr_r;     \
            CLR_FOR_VARS(CLR_SPART)               \
        } else {                                  \
            const ulong clr_e = clr_oe, clr_sb = clr_osb; \
            CLR_FOR_VARS(CLR_SSTORE)              \
        }                                         \
    }
#define CLR_CEND                                                 \
    {                                                            \
        CLR_FOR_VARS(CLR_COTOA)                                  \
        if (clr_ok == 1 && clr_off[clr_oe + 1] == clr_re) {      \
            const ulong clr_e = clr_oe, clr_sb = clr_osb;        \
            CLR_FOR_VARS(CLR_SSTORE)                             \
        } else {                                                 \
            const ulong clr_slot = 2 * clr_r + (clr_ok == 1);    \
            CLR_FOR_VARS(CLR_SPART)                              \
        }                                                        \
    }
// CLR_WS_PRE 1 (decision 86; 0 the form before, -DCLR_WS_PRE=0 through CLREDUCE_EXTRA_OPTIONS
// for an A/B): each count's next offsets (clr_pb, clr_pb1: segment clr_k + lane's bounds)
// loaded as soon as clr_k moves, so that the next sub-tile's first offsets arrive during this
// one's walk and scan rather than as its first dependent step (H200 mean 16: 1% faster).
#ifndef CLR_WS_PRE
#define CLR_WS_PRE 1
#endif
#if CLR_WS_PRE
#define CLR_WPRE                                        \
    {                                                   \
        const ulong clr_e = clr_k + clr_wl;             \
        const int clr_ok1 = clr_e < clr_nseg;           \
        clr_pb = clr_ok1 ? clr_off[clr_e] : 0;          \
        clr_pb1 = clr_ok1 ? clr_off[clr_e + 1] : 0;     \
    }
#define CLR_WB clr_pb
#define CLR_WB1 clr_pb1
#else
#define CLR_WPRE
#define CLR_WB (clr_e < clr_nseg ? clr_off[clr_e] : 0)
#define CLR_WB1 clr_off[clr_e + 1]
#endif
// An offset read in order: an empty segment stored at once, a non-empty one's start marked.
#define CLR_CMARK                                                       \
    const ulong clr_e = clr_k + clr_wl;                                 \
    const ulong clr_b = CLR_WB;                                         \
    const int clr_in = clr_e < clr_nseg && (clr_b < clr_te || clr_last); \
    if (clr_in) {                                                       \
        if (CLR_WB1 == clr_b) {                                         \
            CLR_FOR_VARS(CLR_SEMPTY)                                    \
        } else {                                                        \
            const uint clr_p = (uint)(clr_b - clr_ts);                  \
            clr_cn[clr_p] = (uint)(clr_e - clr_ka);                     \
            atomic_or(&clr_rmb[clr_p / 32], 1u << (clr_p % 32));        \
        }                                                               \
    }

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const uint clr_lid = (uint)get_local_id(0);
    const uint clr_w = clr_lid / CLR_WS, clr_wl = clr_lid % CLR_WS;
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
    CLR_FOR_VARS(CLR_CDECL)
    // Per warp: three start masks used by turns (each cleared in the sub-tile after the one
    // that read it, so that a barrier lies between its clearing and its next marks) and two
    // lists of segment numbers at the starts.
    __local uint clr_wm[CLR_WN * 3 * CLR_WMW];
    __local uint clr_wn[CLR_WN * 2 * CLR_WT];
    __local uint* clr_rm = clr_wm + clr_w * 3 * CLR_WMW;
#if !CLR_CPTX
    CLR_FOR_VARS(CLR_CDECLP)
    __local uint clr_cf[CLR_WG + 1];
    __local uint clr_ccnt[2];
    __local ulong clr_cxe[2];
    uint clr_cpar = 0;
#endif
    const ulong clr_nr = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    const ulong clr_nv = get_num_groups(0) * CLR_WN;
    for (uint clr_j = clr_wl; clr_j < 3 * CLR_WMW; clr_j += CLR_WS) clr_rm[clr_j] = 0u;
    uint clr_turn = 0, clr_par = 0;
    CLR_WSYNC;
    for (ulong clr_r = get_group_id(0) * CLR_WN + clr_w; clr_r < clr_nr; clr_r += clr_nv) {
        const ulong clr_rs = clr_lo + clr_r * clr_tile;
        const ulong clr_re = clr_hi - clr_rs < clr_tile ? clr_hi : clr_rs + clr_tile;
        const ulong clr_ns = (clr_re - clr_rs + CLR_WT - 1) / CLR_WT;
        // The open piece (every lane): the range's head (clr_ok 0) or segment clr_oe from
        // clr_osb (1). clr_k: the first segment beginning at or after the sub-tile.
        int clr_ok = 0;
        ulong clr_oe = 0, clr_osb = 0;
        CLR_FOR_VARS(CLR_CORESET)
        ulong clr_k = clr_seg_lower(clr_rs, clr_nseg, clr_c, clr_off);
#if CLR_WS_PRE
        ulong clr_pb, clr_pb1;
        CLR_WPRE
#endif
        for (ulong clr_s = 0; clr_s < clr_ns; ++clr_s, clr_par ^= 1u, clr_turn = clr_turn == 2 ? 0 : clr_turn + 1) {
            __local uint* clr_rmb = clr_rm + clr_turn * CLR_WMW;
            __local uint* clr_cn = clr_wn + (clr_w * 2 + clr_par) * CLR_WT;
            const ulong clr_ts = clr_rs + clr_s * CLR_WT;
            const ulong clr_te = clr_re - clr_ts < CLR_WT ? clr_re : clr_ts + CLR_WT;
            const uint clr_cnt = (uint)(clr_te - clr_ts);
            const uint clr_p0 = clr_wl * CLR_SEG_E;
            const ulong clr_i0 = clr_ts + clr_p0;
            const uint clr_rl = clr_p0 >= clr_cnt ? 0u
                                : (clr_cnt - clr_p0 < CLR_SEG_E ? clr_cnt - clr_p0 : CLR_SEG_E);
#if CLR_VEC > 1
            // 1. the run's loads first (whole aligned runs). The portable form loads them in the
            // walk: PoCL (pthread) lost these registers across the count loop's barrier.
            const int clr_whole = clr_rl == CLR_SEG_E && clr_i0 % CLR_VEC == 0;
            CLR_RSLOTS(CLR_RPDECL)
            if (CLR_CPTX && clr_whole) {
                CLR_RSLOTS(CLR_RPLOAD)
            }
#endif
            // 2. the offsets in order, CLR_WS at a time: segments clr_ka .. clr_k - 1 begin in
            // the sub-tile (at its end, the last one's: every segment left, the empty ones at
            // the end included).
            const ulong clr_ka = clr_k;
            const int clr_last = clr_te >= clr_hi;
            for (;;) {
                CLR_CMARK
                CLR_CCOUNT
                clr_k += clr_nin;
                CLR_WPRE
                if (clr_nin < CLR_WS) break;
            }
            CLR_WSYNC;
            // The mask the last sub-tile read, cleared for its next turn.
            {
                __local uint* clr_rmo = clr_rm + (clr_turn == 0 ? 2 : clr_turn - 1) * CLR_WMW;
                for (uint clr_j = clr_wl; clr_j < CLR_WMW; clr_j += CLR_WS) clr_rmo[clr_j] = 0u;
            }
            // 3. the walk
            const uint clr_bits = (clr_rmb[clr_p0 / 32] >> (clr_p0 % 32)) & CLR_RUN_BITS;
            int clr_had = 0;
            ulong clr_ce = 0, clr_sb = 0;
            CLR_FOR_VARS(CLR_SRESET)
#if CLR_VEC > 1
            if (clr_whole) {
                if (!CLR_CPTX) {
                    CLR_RSLOTS(CLR_RPLOAD)
                }
                CLR_RSLOTS(CLR_CPWALK)
            } else
#endif
            {
                CLR_RSWALK(CLR_CFLUSH)
            }
            // 4. the scan: clr_v the run's head (all of it where no segment starts), clr_f
            // whether one starts in it; backward over the lanes, a chain stopping at a start.
            CLR_FOR_VARS(CLR_CHEADV)
            uint clr_f = (uint)clr_had;
            for (uint clr_d = 1; clr_d < CLR_WS; clr_d <<= 1) {
                uint clr_fd = 0u;
                CLR_CSTEPX
                if (!clr_f && clr_wl + clr_d < CLR_WS) {
                    CLR_FOR_VARS(CLR_CSTEP)
                    clr_f = clr_fd;
                }
            }
            // The next lane's scan (its chain: the runs after mine up to the next start), the
            // first lane's (the sub-tile's head, and whether a segment starts in it).
            uint clr_fn = 0u, clr_f0;
            CLR_CNEIGH
            if (clr_wl + 1 >= CLR_WS) clr_fn = 0u;
            // My last segment: stored where a later lane has a start; else the open one.
            if (clr_had && clr_wl + 1 < CLR_WS) {
                CLR_FOR_VARS(CLR_CJOIN)
            }
            if (clr_had && clr_fn) {
                const ulong clr_e = clr_ce;
                CLR_FOR_VARS(CLR_SSTORE)
            }
            CLR_FOR_VARS(CLR_COPEN)
            CLR_CTAILPUT
            if (clr_f0) {
                // The new open piece: the last lane with a start's last segment.
                ulong clr_ne, clr_nsb;
                CLR_CTAILX
                // The open piece ends at the sub-tile's first start (after the broadcast: lane 0's
                // accumulator may be the new piece).
                if (clr_wl == 0) CLR_CCLOSE
                CLR_FOR_VARS(CLR_CTAKE)
                clr_oe = clr_ne;
                clr_osb = clr_nsb;
                clr_ok = 1;
            }
            // (The portable form's slots read above are written again after the next sub-tile's
            // first barrier.)
        }
        // The range's end: the open piece to slot 2R (the range's head), stored where its
        // segment ends with the range, else to slot 2R+1 (clr_finish joins it).
        if (clr_wl == 0) CLR_CEND
    }
}
