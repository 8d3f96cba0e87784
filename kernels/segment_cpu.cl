// clreduce: the `aligned` segmented plan for CPUs (design/segments.md, "`aligned`"; decision
// 77). Appended after segment.cl (whose kernels it replaces when CLR_SEG_ALGO is
// CLR_SEG_ALIGNED) and uses its macros: CLR_SDECL, CLR_SRESET, CLR_STREAMU, CLR_SSTORE,
// CLR_SEMPTY, clr_seg_begin and clr_seg_lower.
//
// Chunks of clr_tile consecutive elements from clr_lo, one per work-item (grid-stride), each
// aligned to whole segments: chunk t owns the segments that begin in [ts, ts + tile) (the last
// chunk also those that begin at clr_hi: the empty segments at the end), found by two binary
// searches of the offsets, and walks them in a plain nested loop, one segment after the other:
// each segment's end is the next one's begin (one offset read per segment), its elements
// combined in index order into one accumulator (CLR_SEG_U > 1: item's loop of U accumulators
// folded pairwise), its result stored at its end. A segment is reduced whole by the work-item
// that owns its start, however long: no partials and no second pass. The order of every
// combination is the segment's own (index order, or item's fixed fold with U > 1), so the bits
// are item's for the same U: deterministic, whatever the chunks. CSR below mean 16 on CPUs:
// the scan walk below (CLR_ALIGNED_SCAN, decision 87) in place of this nested loop.

#if CLR_SEG_ALGO == CLR_SEG_ALIGNED
// CLR_ALIGNED_MASK (L, 0 for none): the first L elements of a segment are combined by L steps
// without a branch on the segment's length: step u runs the body on element sb + u into the
// spare accumulator CLR_SEG_U (on element clr_lo where u >= len: every index the body sees is
// one of the range's, which is not empty here) and keeps the result only where u < len, by a select. A short segment then
// costs no mispredicted loop exit (heavy-tailed lengths of mean 4 mispredict about once per
// segment otherwise); elements L.. of a longer one follow in the loop. The order is index
// order either way: the bits of item's one-accumulator loop.
#ifndef CLR_ALIGNED_MASK
#define CLR_ALIGNED_MASK 0
#endif
#define CLR_ADECL(k) R##k##_A clr_a##k[CLR_SEG_U + 1];
#define CLR_ATMP(k) clr_a##k[CLR_SEG_U] = clr_a##k[0];
#define CLR_AKEEP(k) clr_a##k[0] = clr_m ? clr_a##k[CLR_SEG_U] : clr_a##k[0];
// Whether some variable combines its result with the element's initial value (Rk_INIT): an
// empty segment then leaves it as it was, where the others store the identity, which is what
// the masked steps leave for an empty segment: without such a variable they need no branch
// for empty segments either.
#define CLR_AINIT(k) || R##k##_INIT
#if CLR_ALIGNED_MASK > 0 && CLR_SEG_U == 1
#define CLR_AEMPTY (0 CLR_FOR_VARS(CLR_AINIT))
#else
#define CLR_AEMPTY 1
#endif

#ifndef CLR_ALIGNED_SCAN
#define CLR_ALIGNED_SCAN 0
#endif
#if CLR_ALIGNED_SCAN == 0
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_ADECL)
    // An empty range: every segment is empty (work-item 0 stores them; the masked steps below
    // need an element to read).
    if (clr_hi == clr_lo) {
        if (get_global_id(0) == 0)
            for (ulong clr_e = 0; clr_e < clr_nseg; ++clr_e) {
                CLR_FOR_VARS(CLR_SEMPTY)
            }
        return;
    }
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    for (ulong clr_t = get_global_id(0); clr_t < clr_ntiles; clr_t += get_global_size(0)) {
        const ulong clr_ts = clr_lo + clr_t * clr_tile;
        const ulong clr_ka = clr_seg_lower(clr_ts, clr_nseg, clr_c, clr_off);
        const ulong clr_kb = clr_t + 1 == clr_ntiles
                                 ? clr_nseg
                                 : clr_seg_lower(clr_ts + clr_tile, clr_nseg, clr_c, clr_off);
        ulong clr_sb = clr_seg_begin(clr_ka, clr_c, clr_off);
        for (ulong clr_e = clr_ka; clr_e < clr_kb; ++clr_e) {
            const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
            if (CLR_AEMPTY && clr_sb == clr_se) {
                CLR_FOR_VARS(CLR_SEMPTY)
                continue;
            }
#if CLR_SEG_U > 1
            CLR_STREAMU(clr_sb, clr_se)
#elif CLR_ALIGNED_MASK > 0
            CLR_FOR_VARS(CLR_SRESET)
            const ulong clr_len = clr_se - clr_sb;
            for (uint clr_u = 0; clr_u < CLR_ALIGNED_MASK; ++clr_u) {
                const int clr_m = clr_u < clr_len;
                CLR_FOR_VARS(CLR_ATMP)
                CLR_CALL((CLR_IDX)(clr_m ? clr_sb + clr_u : clr_lo), CLR_SEG_U);
                CLR_FOR_VARS(CLR_AKEEP)
            }
            for (ulong clr_j = clr_sb + CLR_ALIGNED_MASK; clr_j < clr_se; ++clr_j)
                CLR_CALL((CLR_IDX)clr_j, 0);
#else
            CLR_FOR_VARS(CLR_SRESET)
            for (ulong clr_j = clr_sb; clr_j < clr_se; ++clr_j) CLR_CALL((CLR_IDX)clr_j, 0);
#endif
            CLR_FOR_VARS(CLR_SSTORE)
            clr_sb = clr_se;
        }
    }
}
#else
// The scan walk (CLR_ALIGNED_SCAN = Q > 0; decision 87): loop trip counts that do not depend
// on the segments' lengths, and no branch on them. A work-item takes Q consecutive chunks
// (streams, its chains) and walks them in lock step, sub-tile by sub-tile of CLR_ASCAN_T = T
// elements from each stream's first segment's begin. Per sub-tile: per stream a scalar loop
// over the segments that begin in it marks their starts (a byte each, clr_fl[u][q]); one loop
// over the elements runs the segmented scan, the Q streams' step u side by side (so that the
// latencies overlap, and PoCL's compiler makes one SIMD step of them): the accumulator set
// back to the identity where a segment starts by a bit blend with the identity's words (a
// select, which the compilers here turn into a branch for floats, would mispredict about once
// per segment, as a loop exit does), the body, the value kept in slot u + 1 of the stream's
// buffer (slot 0: the last value of the sub-tile before, slot T + 1: the identity); then per
// stream a loop of a known trip count over the segments that end in the sub-tile stores each
// one's value from the slot of its last element (the identity's where it is empty). A
// segment's value is its elements combined from the identity in index order, as item's and
// aligned's one-accumulator loops: the same bits. A stream past its end reads elements of the
// range (clamped to its last element at the range's end) whose values it never stores.
#ifndef CLR_ASCAN_T
#define CLR_ASCAN_T 128
#endif
#define CLR_AQ CLR_ALIGNED_SCAN
#define CLR_QID (CLR_ASCAN_T + 1)
#define CLR_QDECL(k) R##k##_A clr_a##k[CLR_AQ]; R##k##_A clr_qb##k[CLR_ASCAN_T + 2][CLR_AQ];
#define CLR_QINIT(k) clr_qb##k[CLR_QID][clr_q] = clr_a##k[clr_q] = clr_identity_##k();
#define CLR_QCARRY(k) clr_qb##k[0][clr_q] = clr_qb##k[CLR_ASCAN_T][clr_q];
// The accumulator back to the identity where clr_m (all ones) marks a segment's start: a bit
// blend of its words with the identity's, in registers.
#define CLR_QBLENDW(k, W)                                                          \
    {                                                                              \
        union { R##k##_A a; W w[(sizeof(R##k##_A) + sizeof(W) - 1) / sizeof(W)]; } clr_x, clr_y; \
        clr_x.a = clr_a##k[clr_q];                                                 \
        clr_y.a = clr_identity_##k();                                              \
        const W clr_mw = (W)(long)(int)clr_m;                                      \
        for (uint clr_t = 0; clr_t < sizeof(R##k##_A) / sizeof(W); ++clr_t)        \
            clr_x.w[clr_t] = (clr_x.w[clr_t] & ~clr_mw) | (clr_y.w[clr_t] & clr_mw); \
        clr_a##k[clr_q] = clr_x.a;                                                 \
    }
#define CLR_QLOAD(k)                                        \
    if (sizeof(R##k##_A) % 8 == 0) CLR_QBLENDW(k, ulong)    \
    else if (sizeof(R##k##_A) % 4 == 0) CLR_QBLENDW(k, uint) \
    else CLR_QBLENDW(k, uchar)

#define CLR_QKEEP(k) clr_qb##k[clr_i + 1][clr_q] = clr_a##k[clr_q];
// Segment clr_e (clr_sb..clr_se) of stream clr_q ends in the sub-tile at clr_p: its value from
// slot clr_v (a variable that keeps its initial value is left as it was where the segment is
// empty, CLR_SEMPTY).
#define CLR_QSTORE(k)                                                    \
    if (clr_se > clr_sb || !R##k##_INIT) {                               \
        R##k##_A clr_g = clr_qb##k[clr_v][clr_q];                        \
        CLR_INSEG_##k(clr_g)                                             \
        clr_store_##k(clr_res_##k, clr_aux_##k, clr_e, clr_g);           \
    }
// One step of the element loop: element clr_qa[q] + clr_s + clr_i of every stream (clamped
// by CLAMP).
#define CLR_QSTEP(CLAMP)                                       \
    _Pragma("unroll")                                          \
    for (uint clr_q = 0; clr_q < CLR_AQ; ++clr_q) {            \
        const ulong clr_j = clr_qa[clr_q] + clr_s + clr_i;     \
        const uint clr_m = 0u - (uint)clr_fl[clr_i][clr_q];    \
        CLR_FOR_VARS(CLR_QLOAD)                                \
        CLR_CALL((CLR_IDX)(CLAMP), clr_q);                     \
        CLR_FOR_VARS(CLR_QKEEP)                                \
    }

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_QDECL)
    uchar clr_fl[CLR_ASCAN_T][CLR_AQ];
    if (clr_hi == clr_lo) {
        if (get_global_id(0) == 0)
            for (ulong clr_e = 0; clr_e < clr_nseg; ++clr_e) {
                CLR_FOR_VARS(CLR_SEMPTY)
            }
        return;
    }
    for (uint clr_q = 0; clr_q < CLR_AQ; ++clr_q) {
        CLR_FOR_VARS(CLR_QINIT)
    }
    for (uint clr_i = 0; clr_i < CLR_ASCAN_T; ++clr_i)
        for (uint clr_q = 0; clr_q < CLR_AQ; ++clr_q) clr_fl[clr_i][clr_q] = 0;
    const ulong clr_ntiles = (clr_hi - clr_lo + clr_tile - 1) / clr_tile;
    const ulong clr_nw = (clr_ntiles + CLR_AQ - 1) / CLR_AQ;
    for (ulong clr_w = get_global_id(0); clr_w < clr_nw; clr_w += get_global_size(0)) {
        // Stream q: the segments clr_ke[q] .. clr_ke[q + 1] (those that begin in chunk
        // w Q + q; the last chunk's run to nseg), elements clr_qa[q] .. clr_qe[q]; clr_km[q]
        // the next segment whose start is to mark, clr_kg[q] the next to store.
        ulong clr_ke[CLR_AQ + 1], clr_qa[CLR_AQ], clr_km[CLR_AQ], clr_kg[CLR_AQ];
        for (uint clr_q = 0; clr_q <= CLR_AQ; ++clr_q) {
            const ulong clr_t = clr_w * CLR_AQ + clr_q;
            clr_ke[clr_q] = clr_t >= clr_ntiles
                                ? clr_nseg
                                : clr_seg_lower(clr_lo + clr_t * clr_tile, clr_nseg, clr_c, clr_off);
        }
        ulong clr_steps = 0;
        for (uint clr_q = 0; clr_q < CLR_AQ; ++clr_q) {
            clr_qa[clr_q] = clr_seg_begin(clr_ke[clr_q], clr_c, clr_off);
            clr_km[clr_q] = clr_kg[clr_q] = clr_ke[clr_q];
            const ulong clr_len = clr_seg_begin(clr_ke[clr_q + 1], clr_c, clr_off) - clr_qa[clr_q];
            clr_steps = max(clr_steps, (clr_len + CLR_ASCAN_T - 1) / CLR_ASCAN_T);
        }
        for (ulong clr_s = 0; clr_s < clr_steps * CLR_ASCAN_T; clr_s += CLR_ASCAN_T) {
            // The starts of the segments that begin in each stream's sub-tile (a stream's
            // first element is one: its first segment's begin).
            ulong clr_top = 0;
            for (uint clr_q = 0; clr_q < CLR_AQ; ++clr_q) {
                const ulong clr_p = clr_qa[clr_q] + clr_s;
                clr_top = max(clr_top, clr_p + CLR_ASCAN_T);
                CLR_FOR_VARS(CLR_QCARRY)
                ulong clr_k = clr_km[clr_q];
                const ulong clr_kz = clr_ke[clr_q + 1];
                for (; clr_k < clr_kz; ++clr_k) {
                    const ulong clr_b = clr_seg_begin(clr_k, clr_c, clr_off);
                    if (clr_b >= clr_p + CLR_ASCAN_T) break;
                    clr_fl[clr_b - clr_p][clr_q] = 1;
                }
                clr_km[clr_q] = clr_k;
            }
            // The segmented scan, Q chains (past the range's end only in the last sub-tiles).
            if (clr_top <= clr_hi) {
                for (uint clr_i = 0; clr_i < CLR_ASCAN_T; ++clr_i) CLR_QSTEP(clr_j)
            } else {
                for (uint clr_i = 0; clr_i < CLR_ASCAN_T; ++clr_i)
                    CLR_QSTEP(clr_j < clr_hi ? clr_j : clr_hi - 1)
            }
            for (uint clr_i = 0; clr_i < CLR_ASCAN_T; ++clr_i)
                for (uint clr_q = 0; clr_q < CLR_AQ; ++clr_q) clr_fl[clr_i][clr_q] = 0;
            // The values of the segments that end in each stream's sub-tile: those before the
            // last one that begins in it (a segment that ends at the sub-tile's end is stored
            // from the next one's slot 0), all the rest in the stream's last sub-tile: a loop
            // of a known trip count. The list of source slots restored.
            for (uint clr_q = 0; clr_q < CLR_AQ; ++clr_q) {
                const ulong clr_p = clr_qa[clr_q] + clr_s;
                const ulong clr_kz = clr_ke[clr_q + 1], clr_km1 = clr_km[clr_q];
                const ulong clr_end = clr_seg_begin(clr_kz, clr_c, clr_off);
                const ulong clr_ge = clr_end <= clr_p + CLR_ASCAN_T ? clr_kz
                                     : clr_km1 > clr_kg[clr_q] ? clr_km1 - 1 : clr_kg[clr_q];
                for (ulong clr_e = clr_kg[clr_q]; clr_e < clr_ge; ++clr_e) {
                    const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
                    const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
                    // Slot se - p (that of element se - 1), or the identity's where empty.
                    const uint clr_x = (uint)(clr_se - clr_p), clr_z = clr_se == clr_sb;
                    const uint clr_v = clr_x + clr_z * (CLR_QID - clr_x);
                    CLR_FOR_VARS(CLR_QSTORE)
                }
                clr_kg[clr_q] = clr_ge;
            }
        }
        // Streams of empty segments only, where every stream is (no sub-tile ran).
        if (clr_steps == 0)
            for (ulong clr_e = clr_ke[0]; clr_e < clr_ke[CLR_AQ]; ++clr_e) {
                CLR_FOR_VARS(CLR_SEMPTY)
            }
    }
}
#endif  // CLR_ALIGNED_SCAN
#endif  // CLR_SEG_ALGO == CLR_SEG_ALIGNED
