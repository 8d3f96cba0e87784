// clreduce: the `panels` segmented plan (Axis::First on CPUs, decision 91; design/segments.md).
// Appended after segment.cl, whose macros it uses; src/codegen/segment.rs appends it for
// CLR_SEG_ALGO == CLR_SEG_PANELS. Defines beside segment.cl's:
//   CLR_PANEL   elements per panel row: the private partial column sums of a work-item
//   CLR_SEG_U   rows per step of the walk (1, 2, 4, 8 or 16)

#if CLR_SEG_ALGO == CLR_SEG_PANELS
// A panel's partial column sums, one per element of a panel row, in private memory.
#define CLR_PDECL(k) R##k##_A clr_a##k[CLR_PANEL];
#define CLR_PRESET(k) clr_a##k[clr_u] = clr_identity_##k();
#define CLR_PGET(k) clr_a##k[clr_u] = clr_part_##k[clr_slot + clr_u];
#define CLR_PFOLD(k) clr_a##k[clr_u] = clr_op_##k(clr_a##k[clr_u], clr_part_##k[clr_slot + clr_u]);
#define CLR_PPART(k) clr_part_##k[clr_slot + clr_u] = clr_a##k[clr_u];
// A narrow array's partial of column clr_u from its slots clr_u + m cols, m = 1 .. kk - 1.
#define CLR_PNARROW(k) clr_a##k[clr_u] = clr_op_##k(clr_a##k[clr_u], clr_a##k[clr_m]);
#define CLR_PSTORE(k)                                                   \
    {                                                                   \
        R##k##_A clr_g = clr_a##k[clr_u];                               \
        CLR_INSEG_##k(clr_g)                                            \
        clr_store_##k(clr_res_##k, clr_aux_##k, clr_e, clr_g);          \
    }
// Element u of panel row clr_bi + v into partial u.
#define CLR_PROWV(v) CLR_CALL((CLR_IDX)(clr_bi + (v) * clr_rs + clr_u), clr_u);
// NR panel rows of W elements (a constant, or a variable) from index B, RS apart, into
// partials 0 .. W - 1, CLR_SEG_U rows a step: each element's rows in row order, the inner
// loop over the contiguous elements of a row (contiguous loads, contiguous adds into the
// partials), which the compiler vectorizes; then the last rows one at a time.
#define CLR_PWALK(W, B, RS, NR)                                                        \
    {                                                                                  \
        const ulong clr_rs = (RS), clr_nr = (NR);                                      \
        ulong clr_bi = (B), clr_r = 0;                                                 \
        for (; clr_r + CLR_SEG_U <= clr_nr; clr_r += CLR_SEG_U, clr_bi += CLR_SEG_U * clr_rs) \
            for (uint clr_u = 0; clr_u < (W); ++clr_u) {                               \
                CLR_CROWS(CLR_PROWV)                                                   \
            }                                                                          \
        for (; clr_r < clr_nr; ++clr_r, clr_bi += clr_rs)                              \
            for (uint clr_u = 0; clr_u < (W); ++clr_u) CLR_CALL((CLR_IDX)(clr_bi + clr_u), clr_u); \
    }

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    CLR_FOR_VARS(CLR_PDECL)
    // Work-item w takes the panel w % panels (columns e0 .. e0 + pw - 1) over the rows of
    // chunk w / panels; with one chunk it stores each column, otherwise it writes the
    // chunk's partials to slots chunk * cols + column. An array of at most CLR_PANEL / 2
    // columns is one panel whose rows are kk = CLR_PANEL / cols consecutive rows (a
    // contiguous run of kk cols elements, element u being column u % cols): the chunk's rows
    // in runs of kk, its last rows (fewer than kk) as rows of cols, then each column folds
    // its kk partials in order.
    const ulong clr_cols = clr_nseg, clr_rows = clr_hi;
    const ulong clr_panels = (clr_cols + CLR_PANEL - 1) / CLR_PANEL;
    const ulong clr_chunks = (clr_rows + clr_tile - 1) / clr_tile;
    const uint clr_kk = 2 * clr_cols <= CLR_PANEL ? (uint)(CLR_PANEL / clr_cols) : 1;
    for (ulong clr_w = get_global_id(0); clr_w < clr_panels * clr_chunks; clr_w += get_global_size(0)) {
        const ulong clr_e0 = (clr_w % clr_panels) * CLR_PANEL;
        const ulong clr_chunk = clr_w / clr_panels;
        const ulong clr_r0 = clr_chunk * clr_tile;
        const ulong clr_r1 = clr_rows - clr_r0 < clr_tile ? clr_rows : clr_r0 + clr_tile;
        const uint clr_pw = (uint)(clr_cols - clr_e0 < CLR_PANEL ? clr_cols - clr_e0 : CLR_PANEL);
        const uint clr_kw = clr_kk * clr_pw;
        for (uint clr_u = 0; clr_u < clr_kw; ++clr_u) {
            CLR_FOR_VARS(CLR_PRESET)
        }
        const ulong clr_b0 = clr_r0 * clr_cols + clr_e0;
        if (clr_kk > 1) {
            const ulong clr_runs = (clr_r1 - clr_r0) / clr_kk;
            if (clr_kw == CLR_PANEL)
                CLR_PWALK(CLR_PANEL, clr_b0, CLR_PANEL, clr_runs)
            else
                CLR_PWALK(clr_kw, clr_b0, clr_kw, clr_runs)
            CLR_PWALK(clr_pw, clr_b0 + clr_runs * clr_kw, clr_cols, clr_r1 - clr_r0 - clr_runs * clr_kk)
            for (uint clr_u = 0; clr_u < clr_pw; ++clr_u)
                for (uint clr_m = clr_u + clr_pw; clr_m < clr_kw; clr_m += clr_pw) {
                    CLR_FOR_VARS(CLR_PNARROW)
                }
        } else if (clr_pw == CLR_PANEL) {
            // A full panel with a constant trip count (the compiler's vector loop without a
            // remainder), a narrower one with its own.
            CLR_PWALK(CLR_PANEL, clr_b0, clr_cols, clr_r1 - clr_r0)
        } else {
            CLR_PWALK(clr_pw, clr_b0, clr_cols, clr_r1 - clr_r0)
        }
        if (clr_chunks == 1) {
            for (uint clr_u = 0; clr_u < clr_pw; ++clr_u) {
                const ulong clr_e = clr_e0 + clr_u;
                const ulong clr_sb = clr_e;
                const ulong clr_ss = clr_cols;
                CLR_FOR_VARS(CLR_PSTORE)
            }
        } else {
            const ulong clr_slot = clr_chunk * clr_cols + clr_e0;
            for (uint clr_u = 0; clr_u < clr_pw; ++clr_u) {
                CLR_FOR_VARS(CLR_PPART)
            }
        }
    }
}

// The finishing pass: a work-item per panel folds its columns' chunk partials in chunk
// order, from chunk 0's, a chunk's panel of contiguous partials at a time.
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    CLR_FOR_VARS(CLR_PDECL)
    const ulong clr_cols = clr_nseg, clr_rows = clr_hi;
    const ulong clr_panels = (clr_cols + CLR_PANEL - 1) / CLR_PANEL;
    const ulong clr_chunks = (clr_rows + clr_tile - 1) / clr_tile;
    for (ulong clr_w = get_global_id(0); clr_w < clr_panels; clr_w += get_global_size(0)) {
        const ulong clr_e0 = clr_w * CLR_PANEL;
        const uint clr_pw = (uint)(clr_cols - clr_e0 < CLR_PANEL ? clr_cols - clr_e0 : CLR_PANEL);
        {
            const ulong clr_slot = clr_e0;
            for (uint clr_u = 0; clr_u < clr_pw; ++clr_u) {
                CLR_FOR_VARS(CLR_PGET)
            }
        }
        for (ulong clr_chunk = 1; clr_chunk < clr_chunks; ++clr_chunk) {
            const ulong clr_slot = clr_chunk * clr_cols + clr_e0;
            for (uint clr_u = 0; clr_u < clr_pw; ++clr_u) {
                CLR_FOR_VARS(CLR_PFOLD)
            }
        }
        for (uint clr_u = 0; clr_u < clr_pw; ++clr_u) {
            const ulong clr_e = clr_e0 + clr_u;
            const ulong clr_sb = clr_e;
            const ulong clr_ss = clr_cols;
            CLR_FOR_VARS(CLR_PSTORE)
        }
    }
}
#endif
