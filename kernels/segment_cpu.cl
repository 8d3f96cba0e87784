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
// are item's for the same U: deterministic, whatever the chunks.

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
#endif  // CLR_SEG_ALGO == CLR_SEG_ALIGNED
