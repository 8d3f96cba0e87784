// clreduce: segmented and axis reductions (design/algorithms.md, "Segmented reductions").
// Included after common.cl, one copy of var.cl per variable (its accumulator, combine, tree and
// store are reused as they are), item.cl and the generated user body, instead of reduce.cl.
// Generated macros (src/codegen/segment.rs): CLR_FOR_VARS, CLR_VAR_PARAMS, CLR_USER_PARAMS,
// CLR_CALL as for reduce.cl, and per variable CLR_INSEG_k(g), which turns a (value, index)
// accumulator's global index into the index within its segment (`index_in_segment`) or is
// empty. Defines:
//   CLR_SEG_ALGO     CLR_SEG_ITEM, CLR_SEG_GROUP, CLR_SEG_TILES, CLR_SEG_COLUMNS, CLR_SEG_CHUNKS,
//                    CLR_SEG_STAGED, CLR_SEG_LANES, CLR_SEG_STRIPES, CLR_SEG_MERGE, CLR_SEG_RUNS,
//                    CLR_SEG_BLOCKS or CLR_SEG_ALIGNED
//   CLR_SEG_OFFSETS  1: segment k is off[k]..off[k+1] (CSR); 0: k*c..(k+1)*c (uniform)
//   CLR_SEG_LONGS    tiles: room for the longer segments of one tile (>= tile / (short + 1))
//   CLR_SEG_E        staged: elements per work-item in a stage (1 otherwise)
//   CLR_SEG_STAGE    staged: local slots of a stage, CLR_WG * CLR_SEG_E plus the skew
//   CLR_SEG_S        lanes: work-items per segment, a power of two dividing CLR_WG (1 otherwise)
//   CLR_SEG_U        accumulators per work-item in the strided loops (group, lanes, tiles'
//                    work-group pieces, columns, stripes); blocks: columns per work-item
// Arguments after the variables: the offsets (any buffer for uniform segments), the number of
// segments (columns), the uniform length (the number of columns), the first index of the
// first segment and one past the last one's end (the number of rows), the tile (elements per
// tile; rows per chunk; group: work-groups per segment) and the longest segment one work-item
// of a tile reduces alone.
// Sizes are arguments, not defines, so one program serves every n.
// Every result is deterministic: no float atomics, and each segment's values are combined in
// an order fixed by the plan (the local atomic below only orders a list of segment numbers).

#define CLR_SEG_ITEM 1
#define CLR_SEG_GROUP 2
#define CLR_SEG_TILES 3
#define CLR_SEG_COLUMNS 4
#define CLR_SEG_CHUNKS 5
#define CLR_SEG_STAGED 6
#define CLR_SEG_LANES 7
#define CLR_SEG_STRIPES 8
#define CLR_SEG_MERGE 9  // its kernels are kernels/segment_merge.cl
#define CLR_SEG_RUNS 10  // its kernels are kernels/segment_runs.cl
#define CLR_SEG_BLOCKS 11
#define CLR_SEG_ALIGNED 12  // its kernel is kernels/segment_cpu.cl

// Staged: element p of a stage lives in slot p + p / 32, so the work-items of a warp each
// reading their own row (rows of c apart) fall on different banks.
#define CLR_SKEW(p) ((p) + ((p) >> 5))

// The first index of segment k (k == nseg: one past the last segment's end).
static inline ulong clr_seg_begin(ulong k, ulong c, __global const ulong* off) {
#if CLR_SEG_OFFSETS
    return off[k];
#else
    return k * c;
#endif
}

// The first segment k in 0..=nseg whose begin is >= p (a binary search of the offsets).
static inline ulong clr_seg_lower(ulong p, ulong nseg, ulong c, __global const ulong* off) {
#if CLR_SEG_OFFSETS
    ulong lo = 0, hi = nseg;
    while (lo < hi) {
        const ulong mid = lo + (hi - lo) / 2;
        if (off[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
#else
    const ulong k = (p + c - 1) / c;
    return k < nseg ? k : nseg;
#endif
}

#define CLR_SDECL(k)                 \
    R##k##_A clr_a##k[CLR_SEG_U];    \
    __local R##k##_A clr_lm##k[R##k##_LSLOTS];
#define CLR_SRESET(k) clr_a##k[0] = clr_identity_##k();
#define CLR_SGROUP(k) clr_a##k[0] = clr_group_##k(clr_a##k[0], clr_lm##k);
// Writes segment clr_e's value (combined with the variable's element unless
// initialize_to_identity); clr_sb and clr_ss turn a global index into the index in the segment.
#define CLR_SSTORE(k)                                                   \
    {                                                                   \
        R##k##_A clr_g = clr_a##k[0];                                   \
        CLR_INSEG_##k(clr_g)                                            \
        clr_store_##k(clr_res_##k, clr_aux_##k, clr_e, clr_g);          \
    }
// An empty segment: the identity under initialize_to_identity (an identity-less variable's
// identity leaves it as it was), else unchanged.
#define CLR_SEMPTY(k) \
    if (!R##k##_INIT) clr_store_##k(clr_res_##k, clr_aux_##k, clr_e, clr_identity_##k());
#define CLR_SPART(k) clr_part_##k[clr_slot] = clr_a##k[0];
#define CLR_SGETP(k) clr_a##k[0] = clr_part_##k[clr_slot];
#define CLR_SFOLDU(k) clr_a##k[clr_u] = clr_op_##k(clr_a##k[clr_u], clr_part_##k[clr_slot]);
#define CLR_SFOLD(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_part_##k[clr_slot]);
#define CLR_SFIRST(k) clr_a##k[0] = clr_op_##k(clr_part_##k[clr_slot], clr_a##k[0]);
// A segment cut by tile boundaries, finished by the tile clr_ct where it starts: its tail
// (slot 2 clr_ct + 1), then the heads (slots 2u) of the tiles u = clr_ct + 1 .. clr_ct1 it
// covers, in tile order, stored as segment clr_e (clr_sb its first index). The tiles, staged
// (CSR) and merge plans' second passes. CLR_CUT_SERIAL: one work-item walks the heads.
// CLR_CUT_GROUP: the whole work-group, strided over the heads, then the tree (uniform: every
// work-item of the group must reach it), work-item 0 storing.
#define CLR_CUT_SERIAL(clr_ct, clr_ct1)                               \
    {                                                                 \
        {                                                             \
            const ulong clr_slot = 2 * (clr_ct) + 1;                  \
            CLR_FOR_VARS(CLR_SGETP)                                   \
        }                                                             \
        for (ulong clr_u = (clr_ct) + 1; clr_u <= (clr_ct1); ++clr_u) { \
            const ulong clr_slot = 2 * clr_u;                         \
            CLR_FOR_VARS(CLR_SFOLD)                                   \
        }                                                             \
        CLR_FOR_VARS(CLR_SSTORE)                                      \
    }
#define CLR_CUT_GROUP(clr_ct, clr_ct1)                                                 \
    {                                                                                  \
        CLR_FOR_VARS(CLR_SRESET)                                                       \
        for (ulong clr_u = (clr_ct) + 1 + clr_lid; clr_u <= (clr_ct1); clr_u += CLR_WG) { \
            const ulong clr_slot = 2 * clr_u;                                          \
            CLR_FOR_VARS(CLR_SFOLD)                                                    \
        }                                                                              \
        CLR_FOR_VARS(CLR_SGROUP)                                                       \
        if (clr_lid == 0) {                                                            \
            const ulong clr_slot = 2 * (clr_ct) + 1;                                   \
            CLR_FOR_VARS(CLR_SFIRST)                                                   \
            CLR_FOR_VARS(CLR_SSTORE)                                                   \
        }                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                  \
    }

// Staged: the stage's slots per variable; one element's accumulator in, one row's fold.
#define CLR_STDECL(k) __local R##k##_A clr_st##k[CLR_SEG_STAGE];
#define CLR_STPUT(k) clr_st##k[CLR_SKEW(clr_p)] = clr_a##k[0];
#define CLR_STGET(k) clr_a##k[0] = clr_st##k[CLR_SKEW(clr_p)];
#define CLR_STFOLD(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_st##k[CLR_SKEW(clr_p)]);
// Lanes: the tree over the CLR_SEG_S lanes of each segment (lane 0 ends with the value).
#define CLR_SLANES(k)                                                                     \
    clr_lm##k[clr_lid] = clr_a##k[0];                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    for (uint clr_s = CLR_SEG_S / 2; clr_s > 0; clr_s >>= 1) {                            \
        if (clr_lane < clr_s)                                                             \
            clr_lm##k[clr_lid] = clr_op_##k(clr_lm##k[clr_lid], clr_lm##k[clr_lid + clr_s]); \
        barrier(CLK_LOCAL_MEM_FENCE);                                                     \
    }                                                                                     \
    clr_a##k[0] = clr_lm##k[clr_lid];
// Stripes: the work-group's partial of each column (work-items clr_col, clr_col + cols, ...
// in order) to slot group * cols + column.
#define CLR_SSTRIPE(k)                                                                 \
    clr_lm##k[clr_lid] = clr_a##k[0];                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                      \
    if (clr_lid < clr_cols) {                                                          \
        for (uint clr_j = clr_lid + (uint)clr_cols; clr_j < clr_act; clr_j += (uint)clr_cols) \
            clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_lm##k[clr_j]);                   \
        clr_part_##k[get_group_id(0) * clr_cols + clr_lid] = clr_a##k[0];              \
    }

// Staged CSR: a piece ends (clr_cur is the segment's number relative to clr_ka, 0 for the
// piece of a segment that began before the work-item's chunk): a head piece to clr_lm (its
// owner combines it), a whole segment stored.
#define CLR_SHEAD(k) clr_lm##k[clr_lid] = clr_a##k[0];
#define CLR_SHEAD0(k) clr_lm##k[clr_lid] = clr_identity_##k();
#define CLR_SHEADGET(k) clr_a##k[0] = clr_lm##k[0];
#define CLR_SPIECE_END                                   \
    if (clr_cur == 0) {                                  \
        CLR_FOR_VARS(CLR_SHEAD)                          \
        clr_hend[clr_lid] = 1u;                          \
        clr_hset = 1;                                    \
    } else {                                             \
        const ulong clr_e = clr_ka + clr_cur - 1;        \
        const ulong clr_sb = clr_ts + clr_cs;            \
        CLR_FOR_VARS(CLR_SSTORE)                         \
    }
// Folds the head pieces of the chunks after clr_lid into clr_a* up to the chunk where the
// segment ends (clr_j == CLR_WG: it goes on past the stage).
#define CLR_SFOLDH(k) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_lm##k[clr_j]);
#define CLR_SSCAN                                               \
    for (clr_j = clr_lid + 1; clr_j < CLR_WG; ++clr_j) {        \
        CLR_FOR_VARS(CLR_SFOLDH)                                \
        if (clr_hend[clr_j]) break;                             \
    }

// Chunks: the current segment (clr_cur, clr_cb..clr_ce) ends: a head piece to its slot, or
// the segment's value (an empty one's identity) to the variables.
#define CLR_CHUNK_FINISH                                   \
    if (clr_head) {                                        \
        const ulong clr_slot = 2 * clr_t;                  \
        CLR_FOR_VARS(CLR_SPART)                            \
    } else if (clr_cb == clr_ce) {                         \
        const ulong clr_e = clr_cur;                       \
        CLR_FOR_VARS(CLR_SEMPTY)                           \
    } else {                                               \
        const ulong clr_e = clr_cur;                       \
        const ulong clr_sb = clr_cb;                       \
        CLR_FOR_VARS(CLR_SSTORE)                           \
    }

// A strided loop over clr_j = b, b + s, ... < e into clr_a*[0], with CLR_SEG_U accumulators
// so that CLR_SEG_U loads are in flight (one accumulator serializes the loop on its load's
// latency); the accumulators are combined in order at the end (a fixed order: deterministic).
#define CLR_SRESETU(k) for (uint clr_u = 0; clr_u < CLR_SEG_U; ++clr_u) clr_a##k[clr_u] = clr_identity_##k();
#define CLR_SMERGEU(k) for (uint clr_u = 1; clr_u < CLR_SEG_U; ++clr_u) clr_a##k[0] = clr_op_##k(clr_a##k[0], clr_a##k[clr_u]);
#define CLR_STRIDED(clr_b, clr_e2, clr_s)                                                   \
    {                                                                                       \
        const ulong clr_se2 = (clr_e2), clr_ss2 = (clr_s);                                  \
        ulong clr_j = (clr_b);                                                              \
        CLR_FOR_VARS(CLR_SRESETU)                                                           \
        for (; clr_j + (CLR_SEG_U - 1) * clr_ss2 < clr_se2; clr_j += CLR_SEG_U * clr_ss2)   \
            for (uint clr_u = 0; clr_u < CLR_SEG_U; ++clr_u)                                \
                CLR_CALL((CLR_IDX)(clr_j + clr_u * clr_ss2), clr_u);                        \
        for (; clr_j < clr_se2; clr_j += clr_ss2) CLR_CALL((CLR_IDX)clr_j, 0);              \
        CLR_FOR_VARS(CLR_SMERGEU)                                                           \
    }

// Columns: CLR_SEG_U consecutive rows of column clr_e, row u into accumulator u, written out
// (not a loop) so that every accumulator stays in a register. C(u) runs the body for row
// clr_r + u.
#if CLR_SEG_U == 1
#define CLR_CROWS(C) C(0)
#elif CLR_SEG_U == 2
#define CLR_CROWS(C) C(0) C(1)
#elif CLR_SEG_U == 4
#define CLR_CROWS(C) C(0) C(1) C(2) C(3)
#elif CLR_SEG_U == 8
#define CLR_CROWS(C) C(0) C(1) C(2) C(3) C(4) C(5) C(6) C(7)
#elif CLR_SEG_U == 16
#define CLR_CROWS(C) \
    C(0) C(1) C(2) C(3) C(4) C(5) C(6) C(7) C(8) C(9) C(10) C(11) C(12) C(13) C(14) C(15)
#else
#error "clreduce: CLR_SEG_U must be 1, 2, 4, 8 or 16"
#endif
#define CLR_CROW(u) CLR_CALL((CLR_IDX)((clr_r + (u)) * clr_cols + clr_e), (u));
// item on CPUs (decision 73): element clr_r + u of a segment into accumulator u; the U
// accumulators then folded pairwise into accumulator 0.
#define CLR_IROW(u) CLR_CALL((CLR_IDX)(clr_r + (u)), (u));
#define CLR_SPAIRU(k)                                                         \
    for (uint clr_h = CLR_SEG_U / 2; clr_h > 0; clr_h /= 2)                  \
        for (uint clr_u = 0; clr_u < clr_h; ++clr_u)                          \
            clr_a##k[clr_u] = clr_op_##k(clr_a##k[clr_u], clr_a##k[clr_u + clr_h]);
// Elements FROM .. TO-1 of one segment (or piece) streamed into the CLR_SEG_U accumulators
// (element r + u of each step into accumulator u, the last fewer than U into accumulator 0),
// then folded pairwise into accumulator 0: item's and chunks' loop on CPUs (decision 73) and
// aligned's from mean 16 (kernels/segment_cpu.cl).
#define CLR_STREAMU(FROM, TO)                                              \
    {                                                                      \
        CLR_FOR_VARS(CLR_SRESETU)                                          \
        ulong clr_r = (FROM);                                              \
        for (; clr_r + CLR_SEG_U <= (TO); clr_r += CLR_SEG_U) {            \
            CLR_CROWS(CLR_IROW)                                            \
        }                                                                  \
        for (; clr_r < (TO); ++clr_r) CLR_CALL((CLR_IDX)clr_r, 0);         \
        CLR_FOR_VARS(CLR_SPAIRU)                                           \
    }
// The columns first pass's loop (decision 53): rows clr_r0..clr_r1 of column clr_e with a
// unit-stride row counter, CLR_SEG_U rows per step. With CLR_SEG_U == 1 it is session 8's
// loop, whose trip count the compiler knows and unrolls itself; the strided loop over the
// flat index (CLR_STRIDED) hides it, and with one accumulator waits on every load (H200,
// 16384 x 16384: 751 against 414 us in the same geometry). A running 32-bit index in place
// of the row's index measured slower (285-292 against 255-261 us).
#define CLR_COLUMN_ROWS                                                     \
    {                                                                       \
        ulong clr_r = clr_r0;                                               \
        CLR_FOR_VARS(CLR_SRESETU)                                           \
        for (; clr_r + (CLR_SEG_U - 1) < clr_r1; clr_r += CLR_SEG_U) {      \
            CLR_CROWS(CLR_CROW)                                             \
        }                                                                   \
        for (; clr_r < clr_r1; ++clr_r) CLR_CROW(0)                         \
        CLR_FOR_VARS(CLR_SMERGEU)                                           \
    }

// blocks: column clr_e0 + u of the row at clr_bi into accumulator u; then column e0 + u's
// result (accumulator u moved to 0, in order) stored, or written to its chunk's partial slot.
#define CLR_BCOL(u) CLR_CALL((CLR_IDX)(clr_bi + (u)), (u));
#define CLR_BMOVE(k) clr_a##k[0] = clr_a##k[clr_bu];
// A narrow array's accumulators of column c (c, c + cols, ...) folded into accumulator c.
#define CLR_BFOLD(k)                                                                        \
    for (uint clr_c = 0; clr_c < (uint)clr_cols; ++clr_c)                                   \
        for (uint clr_j = clr_c + (uint)clr_cols; clr_j < CLR_SEG_U; clr_j += (uint)clr_cols) \
            clr_a##k[clr_c] = clr_op_##k(clr_a##k[clr_c], clr_a##k[clr_j]);
// The narrower last block of clr_rem < CLR_SEG_U columns: bit W of clr_rem is a run of W
// columns (after those of the higher bits), each row's W elements read together.
#define CLR_BREM(W)                                                                   \
    if ((W) < CLR_SEG_U && (clr_rem & (W))) {                                         \
        const uint clr_u0 = clr_rem & ~(2u * (W) - 1);                                \
        ulong clr_bi = clr_r0 * clr_cols + clr_e0 + clr_u0;                           \
        for (ulong clr_r = clr_r0; clr_r < clr_r1; ++clr_r, clr_bi += clr_cols)       \
            for (uint clr_v = 0; clr_v < (W); ++clr_v)                                \
                CLR_CALL((CLR_IDX)(clr_bi + clr_v), clr_u0 + clr_v);                  \
    }
#define CLR_BOUT(u)                                         \
    if (clr_e0 + (u) < clr_cols) {                          \
        const uint clr_bu = (u);                            \
        if (clr_bu > 0) {                                   \
            CLR_FOR_VARS(CLR_BMOVE)                         \
        }                                                   \
        const ulong clr_e = clr_e0 + (u);                   \
        if (clr_chunks == 1) {                              \
            const ulong clr_sb = clr_e;                     \
            const ulong clr_ss = clr_cols;                  \
            CLR_FOR_VARS(CLR_SSTORE)                        \
        } else {                                            \
            const ulong clr_slot = clr_chunk * clr_cols + clr_e; \
            CLR_FOR_VARS(CLR_SPART)                         \
        }                                                   \
    }

// item with vector loads: CLR_VEC elements of row clr_e + u * clr_gs from column clr_j into
// accumulator u; then the rows' stores in order (accumulator u moved to 0 for CLR_SSTORE,
// which writes row clr_e + u * clr_gs from its first index clr_sb).
#if defined(CLR_VEC) && CLR_VEC > 1
#define CLR_VROW(u) CLR_CALL_V((CLR_IDX)((clr_e + (u) * clr_gs) * clr_c + clr_j), (u));
#define CLR_VMOVE(k) clr_a##k[0] = clr_a##k[clr_vu];
#define CLR_VSTORES                                                         \
    for (uint clr_vu = 0; clr_vu < CLR_SEG_U; ++clr_vu) {                   \
        if (clr_vu > 0) {                                                   \
            CLR_FOR_VARS(CLR_VMOVE)                                         \
        }                                                                   \
        const ulong clr_row = clr_e + clr_vu * clr_gs;                      \
        const ulong clr_sb = clr_row * clr_c;                               \
        {                                                                   \
            const ulong clr_e = clr_row;                                    \
            CLR_FOR_VARS(CLR_SSTORE)                                        \
        }                                                                   \
    }
#endif

// The plain sum's loop shape (kernels/reduce.cl, the grid-stride order): indices clr_i = b,
// b + s, ... < e as CLR_IDX with a runtime stride, CLR_SEG_U calls written out per step, row u
// into accumulator u. Used where a 64-bit look-ahead cannot wrap a 32-bit CLR_IDX; the 64-bit
// CLR_STRIDED otherwise.
#define CLR_PROW(u) CLR_CALL(clr_pi + (CLR_IDX)(u) * clr_ps, (u));
#define CLR_PLAIN_STRIDED(clr_b, clr_e2, clr_s)                                                \
    if ((ulong)(clr_e2) + (CLR_SEG_U + 1) * (ulong)(clr_s) <= (ulong)((CLR_IDX)-1)) {          \
        const CLR_IDX clr_pe = (CLR_IDX)(clr_e2), clr_ps = (CLR_IDX)(clr_s);                   \
        CLR_IDX clr_pi = (CLR_IDX)(clr_b);                                                     \
        CLR_FOR_VARS(CLR_SRESETU)                                                              \
        for (; clr_pi + (CLR_SEG_U - 1) * clr_ps < clr_pe; clr_pi += CLR_SEG_U * clr_ps) {     \
            CLR_CROWS(CLR_PROW)                                                                \
        }                                                                                      \
        for (; clr_pi < clr_pe; clr_pi += clr_ps) CLR_CALL(clr_pi, 0);                         \
        CLR_FOR_VARS(CLR_SMERGEU)                                                              \
    } else                                                                                     \
        CLR_STRIDED(clr_b, clr_e2, clr_s)

// Reduces indices [clr_b, clr_e2) with the whole work-group into clr_a*[0] of every work-item.
// (The plain sum's loop, CLR_PLAIN_STRIDED, measured slower here: decision 58.)
#if CLR_SEG_ALGO == CLR_SEG_TILES && defined(CLR_VEC) && CLR_VEC > 1
// tiles with vector loads (decision 65): the aligned middle of the range in blocks of CLR_VEC
// elements, block q to work-item q % CLR_WG (CLR_CALL_V: one vector load per buffer the body
// reads at [i]), CLR_SEG_U blocks per step into accumulators 0..U-1; the unaligned ends (fewer
// than CLR_VEC elements each) one element per work-item, into accumulator 0.
#define CLR_GVSTEP(u) CLR_CALL_V((CLR_IDX)(clr_gj + (u) * clr_gs), (u));
#define CLR_GROUP_RANGE(clr_b, clr_e2)                                                   \
    {                                                                                    \
        const ulong clr_gb = (clr_b), clr_ge = (clr_e2);                                 \
        const ulong clr_gr = (clr_gb + (CLR_VEC - 1)) / CLR_VEC * CLR_VEC;               \
        const ulong clr_ga = clr_gr < clr_ge ? clr_gr : clr_ge;                          \
        const ulong clr_gz = clr_ga + (clr_ge - clr_ga) / CLR_VEC * CLR_VEC;             \
        const ulong clr_gs = (ulong)CLR_WG * CLR_VEC;                                    \
        ulong clr_gj = clr_ga + (ulong)clr_lid * CLR_VEC;                                \
        CLR_FOR_VARS(CLR_SRESETU)                                                        \
        for (; clr_gj + (CLR_SEG_U - 1) * clr_gs < clr_gz; clr_gj += CLR_SEG_U * clr_gs) { \
            CLR_CROWS(CLR_GVSTEP)                                                        \
        }                                                                                \
        for (; clr_gj < clr_gz; clr_gj += clr_gs) CLR_CALL_V((CLR_IDX)clr_gj, 0);        \
        if (clr_gb + clr_lid < clr_ga) CLR_CALL((CLR_IDX)(clr_gb + clr_lid), 0);         \
        if (clr_gz + clr_lid < clr_ge) CLR_CALL((CLR_IDX)(clr_gz + clr_lid), 0);         \
        CLR_FOR_VARS(CLR_SMERGEU)                                                        \
    }                                                                                    \
    CLR_FOR_VARS(CLR_SGROUP)
#else
#define CLR_GROUP_RANGE(clr_b, clr_e2)                  \
    CLR_STRIDED((clr_b) + clr_lid, (clr_e2), CLR_WG)    \
    CLR_FOR_VARS(CLR_SGROUP)
#endif

#if CLR_SEG_ALGO != CLR_SEG_MERGE && CLR_SEG_ALGO != CLR_SEG_RUNS && CLR_SEG_ALGO != CLR_SEG_ALIGNED
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(const ulong clr_n_arg, CLR_VAR_PARAMS __global const ulong* clr_off,
              const ulong clr_nseg, const ulong clr_c, const ulong clr_lo, const ulong clr_hi,
              const ulong clr_tile, const ulong clr_short CLR_USER_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const uint clr_lid = (uint)get_local_id(0);
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
#if CLR_SEG_ALGO == CLR_SEG_ITEM && CLR_VEC > 1
    // Uniform rows of clr_c, a multiple of CLR_VEC: a work-item per row, CLR_SEG_U rows per
    // step (rows e, e + G, ..., G the launch's work-items, into accumulators 0..U-1, so that a
    // warp's loads of each row cover consecutive rows), each row read CLR_VEC elements at a
    // time (CLR_CALL_V: one vector load per buffer the body reads at [i]) in index order.
    const ulong clr_gs = get_global_size(0);
    ulong clr_e = get_global_id(0);
    for (; clr_e + (CLR_SEG_U - 1) * clr_gs < clr_nseg; clr_e += CLR_SEG_U * clr_gs) {
        CLR_FOR_VARS(CLR_SRESETU)
        for (ulong clr_j = 0; clr_j < clr_c; clr_j += CLR_VEC) {
            CLR_CROWS(CLR_VROW)
        }
        CLR_VSTORES
    }
    for (; clr_e < clr_nseg; clr_e += clr_gs) {
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_j = 0; clr_j < clr_c; clr_j += CLR_VEC)
            CLR_CALL_V((CLR_IDX)(clr_e * clr_c + clr_j), 0);
        const ulong clr_sb = clr_e * clr_c;
        CLR_FOR_VARS(CLR_SSTORE)
    }
#elif CLR_SEG_ALGO == CLR_SEG_ITEM
    // A work-item per segment: each loops its own segment. With CLR_SEG_U > 1 (CPUs, decision
    // 73) element j + u of each step of CLR_SEG_U goes to accumulator u (written out, so that
    // the compiler loads a step as one vector and keeps U independent chains), the last
    // fewer than U into accumulator 0, then the accumulators folded pairwise (u and u + h for
    // h = U/2, U/4, ..., 1): a fixed order, so deterministic.
    for (ulong clr_e = get_global_id(0); clr_e < clr_nseg; clr_e += get_global_size(0)) {
        const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
        const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
        if (clr_sb == clr_se) {
            CLR_FOR_VARS(CLR_SEMPTY)
            continue;
        }
#if CLR_SEG_U > 1
        CLR_STREAMU(clr_sb, clr_se)
#else
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_j = clr_sb; clr_j < clr_se; ++clr_j) CLR_CALL((CLR_IDX)clr_j, 0);
#endif
        CLR_FOR_VARS(CLR_SSTORE)
    }
#elif CLR_SEG_ALGO == CLR_SEG_GROUP
    // clr_tile > 1 (fewer segments than the device's work-groups): clr_tile work-groups per
    // segment, work-group w taking part w % clr_tile of segment w / clr_tile with the plain
    // sum's grid-stride loop over the segment (stride clr_tile work-groups), its partial to
    // slot w; clr_finish combines each segment's parts in order.
    if (clr_tile > 1) {
        for (ulong clr_w = get_group_id(0); clr_w < clr_nseg * clr_tile; clr_w += get_num_groups(0)) {
            const ulong clr_e = clr_w / clr_tile;
            const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
            const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
            CLR_PLAIN_STRIDED(clr_sb + (clr_w % clr_tile) * CLR_WG + clr_lid, clr_se, clr_tile * CLR_WG)
            CLR_FOR_VARS(CLR_SGROUP)
            if (clr_lid == 0) {
                const ulong clr_slot = clr_w;
                CLR_FOR_VARS(CLR_SPART)
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        return;
    }
    // A work-group per segment: coalesced strided reads, then the work-group tree. The loop
    // bounds are the same for every work-item of the group (the barriers are uniform).
    for (ulong clr_e = get_group_id(0); clr_e < clr_nseg; clr_e += get_num_groups(0)) {
        const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
        const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
        if (clr_sb == clr_se) {
            if (clr_lid == 0) {
                CLR_FOR_VARS(CLR_SEMPTY)
            }
            continue;
        }
        CLR_GROUP_RANGE(clr_sb, clr_se)
        if (clr_lid == 0) {
            CLR_FOR_VARS(CLR_SSTORE)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#elif CLR_SEG_ALGO == CLR_SEG_TILES
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
#elif CLR_SEG_ALGO == CLR_SEG_CHUNKS
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
#elif CLR_SEG_ALGO == CLR_SEG_STAGED && CLR_SEG_OFFSETS
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
#elif CLR_SEG_ALGO == CLR_SEG_STAGED
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
#elif CLR_SEG_ALGO == CLR_SEG_LANES
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
#elif CLR_SEG_ALGO == CLR_SEG_STRIPES
    // Axis::First with clr_nseg <= CLR_WG columns: the first clr_act = (CLR_WG / cols) * cols
    // work-items of each group take row slots group * (act / cols) + lid / cols with a stride
    // of all groups' slots, so work-item lid always reads column lid % cols and consecutive
    // work-items read consecutive indices. The group's partial of each column goes to
    // slot group * cols + column; clr_finish combines them.
    const ulong clr_cols = clr_nseg, clr_rows = clr_hi;
    const uint clr_act = (uint)((CLR_WG / clr_cols) * clr_cols);
    const ulong clr_rpg = clr_act / clr_cols;
    {
        const ulong clr_step = clr_rpg * get_num_groups(0) * clr_cols;
        // Idle work-items (lid >= act) run an empty loop and keep the identity.
        const ulong clr_end = clr_lid < clr_act ? clr_rows * clr_cols : 0;
        CLR_STRIDED(get_group_id(0) * clr_act + clr_lid, clr_end, clr_step)
    }
    CLR_FOR_VARS(CLR_SSTRIPE)
#elif CLR_SEG_ALGO == CLR_SEG_BLOCKS
    // Axis::First on CPUs (decision 68): work-item w takes the block w % blocks of CLR_SEG_U
    // contiguous columns (column e0 + u into accumulator u) over the rows of chunk w / blocks,
    // one row after another, so it reads CLR_SEG_U consecutive elements of each row; its
    // partial per column goes to slot chunk * cols + column (stored directly with one chunk).
    // A last block narrower than CLR_SEG_U takes its columns in runs of 8, 4, 2 and 1; an
    // array narrower than CLR_SEG_U columns is read CLR_SEG_U elements (several rows) a step.
    const ulong clr_cols = clr_nseg, clr_rows = clr_hi;
    const ulong clr_blocks = (clr_cols + CLR_SEG_U - 1) / CLR_SEG_U;
    const ulong clr_chunks = (clr_rows + clr_tile - 1) / clr_tile;
    for (ulong clr_w = get_global_id(0); clr_w < clr_blocks * clr_chunks; clr_w += get_global_size(0)) {
        const ulong clr_e0 = (clr_w % clr_blocks) * CLR_SEG_U;
        const ulong clr_chunk = clr_w / clr_blocks;
        const ulong clr_r0 = clr_chunk * clr_tile;
        const ulong clr_r1 = clr_rows - clr_r0 < clr_tile ? clr_rows : clr_r0 + clr_tile;
        CLR_FOR_VARS(CLR_SRESETU)
        if (clr_cols < CLR_SEG_U) {
            // A narrow array (the plan takes this where cols divides CLR_SEG_U): the chunk's
            // rows are one run of consecutive elements, read CLR_SEG_U at a time, element u
            // of a step being column u % cols; then each column folds its accumulators c,
            // c + cols, ... in order.
            ulong clr_bi = clr_r0 * clr_cols;
            const ulong clr_be = clr_r1 * clr_cols;
            for (; clr_bi + CLR_SEG_U <= clr_be; clr_bi += CLR_SEG_U) {
                CLR_CROWS(CLR_BCOL)
            }
            for (uint clr_u = 0; clr_bi + clr_u < clr_be; ++clr_u)
                CLR_CALL((CLR_IDX)(clr_bi + clr_u), clr_u);
            CLR_FOR_VARS(CLR_BFOLD)
        } else if (clr_e0 + CLR_SEG_U <= clr_cols) {
            ulong clr_bi = clr_r0 * clr_cols + clr_e0;
            for (ulong clr_r = clr_r0; clr_r < clr_r1; ++clr_r, clr_bi += clr_cols) {
                CLR_CROWS(CLR_BCOL)
            }
        } else {
            const uint clr_rem = (uint)(clr_cols - clr_e0);
            CLR_BREM(8) CLR_BREM(4) CLR_BREM(2) CLR_BREM(1)
        }
        CLR_CROWS(CLR_BOUT)
    }
#else
    // Columns (Axis::First): clr_c columns of clr_nseg... here clr_nseg is the number of
    // columns and clr_hi the number of rows; each work-item owns one column of a chunk of
    // clr_tile rows, so consecutive work-items read consecutive addresses.
    const ulong clr_cols = clr_nseg, clr_rows = clr_hi;
    const ulong clr_blocks = (clr_cols + CLR_WG - 1) / CLR_WG;
    const ulong clr_chunks = (clr_rows + clr_tile - 1) / clr_tile;
    for (ulong clr_w = get_group_id(0); clr_w < clr_blocks * clr_chunks; clr_w += get_num_groups(0)) {
        const ulong clr_e = (clr_w % clr_blocks) * CLR_WG + clr_lid;
        const ulong clr_chunk = clr_w / clr_blocks;
        if (clr_e >= clr_cols) continue;
        const ulong clr_r0 = clr_chunk * clr_tile;
        const ulong clr_r1 = clr_rows - clr_r0 < clr_tile ? clr_rows : clr_r0 + clr_tile;
        CLR_COLUMN_ROWS
        if (clr_chunks == 1) {
            const ulong clr_sb = clr_e;
            const ulong clr_ss = clr_cols;
            CLR_FOR_VARS(CLR_SSTORE)
        } else {
            const ulong clr_slot = clr_chunk * clr_cols + clr_e;
            CLR_FOR_VARS(CLR_SPART)
        }
    }
#endif
}

// The finishing pass of the plans with partials (a plan with one pass never runs it).
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(const ulong clr_n_arg, CLR_VAR_PARAMS __global const ulong* clr_off,
                const ulong clr_nseg, const ulong clr_c, const ulong clr_lo, const ulong clr_hi,
                const ulong clr_tile, const ulong clr_short CLR_USER_PARAMS) {
    const uint clr_lid = (uint)get_local_id(0);
    const ulong clr_ss = 1;
    CLR_FOR_VARS(CLR_SDECL)
#ifdef CLR_DIAG_NOFINISH
    return;  // A/B only (scripts/gpu/csr_ab.sh): the first pass's time alone, results wrong.
#endif
#if CLR_SEG_ALGO == CLR_SEG_TILES || CLR_SEG_ALGO == CLR_SEG_CHUNKS
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
#elif CLR_SEG_ALGO == CLR_SEG_STAGED && CLR_SEG_OFFSETS
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
#elif CLR_SEG_ALGO == CLR_SEG_BLOCKS
    // A work-item per column combines its chunks' partials (clr_chunks > 1) in chunk order,
    // from chunk 0's.
    const ulong clr_cols = clr_nseg, clr_rows = clr_hi;
    const ulong clr_chunks = (clr_rows + clr_tile - 1) / clr_tile;
    for (ulong clr_e = get_global_id(0); clr_e < clr_cols; clr_e += get_global_size(0)) {
        {
            const ulong clr_slot = clr_e;
            CLR_FOR_VARS(CLR_SGETP)
        }
        for (ulong clr_chunk = 1; clr_chunk < clr_chunks; ++clr_chunk) {
            const ulong clr_slot = clr_chunk * clr_cols + clr_e;
            CLR_FOR_VARS(CLR_SFOLD)
        }
        const ulong clr_sb = clr_e;
        const ulong clr_ss = clr_cols;
        CLR_FOR_VARS(CLR_SSTORE)
    }
#elif CLR_SEG_ALGO == CLR_SEG_COLUMNS
    // A work-item per column combines its chunks' partials in chunk order.
    const ulong clr_cols = clr_nseg, clr_rows = clr_hi;
    const ulong clr_chunks = (clr_rows + clr_tile - 1) / clr_tile;
    for (ulong clr_e = get_global_id(0); clr_e < clr_cols; clr_e += get_global_size(0)) {
        CLR_FOR_VARS(CLR_SRESETU)
        ulong clr_chunk = 0;
        for (; clr_chunk + CLR_SEG_U <= clr_chunks; clr_chunk += CLR_SEG_U)
            for (uint clr_u = 0; clr_u < CLR_SEG_U; ++clr_u) {
                const ulong clr_slot = (clr_chunk + clr_u) * clr_cols + clr_e;
                CLR_FOR_VARS(CLR_SFOLDU)
            }
        for (; clr_chunk < clr_chunks; ++clr_chunk) {
            const ulong clr_slot = clr_chunk * clr_cols + clr_e;
            CLR_FOR_VARS(CLR_SFOLD)
        }
        CLR_FOR_VARS(CLR_SMERGEU)
        const ulong clr_sb = clr_e;
        const ulong clr_ss = clr_cols;
        CLR_FOR_VARS(CLR_SSTORE)
    }
#elif CLR_SEG_ALGO == CLR_SEG_GROUP
    // A work-group per segment combines its clr_tile parts (slots e * clr_tile ..) in order:
    // strided over the work-group, then the tree. An empty segment's parts are identities.
    for (ulong clr_e = get_group_id(0); clr_e < clr_nseg; clr_e += get_num_groups(0)) {
        const ulong clr_sb = clr_seg_begin(clr_e, clr_c, clr_off);
        const ulong clr_se = clr_seg_begin(clr_e + 1, clr_c, clr_off);
        if (clr_sb == clr_se) {
            if (clr_lid == 0) {
                CLR_FOR_VARS(CLR_SEMPTY)
            }
            continue;
        }
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_u = clr_lid; clr_u < clr_tile; clr_u += CLR_WG) {
            const ulong clr_slot = clr_e * clr_tile + clr_u;
            CLR_FOR_VARS(CLR_SFOLD)
        }
        CLR_FOR_VARS(CLR_SGROUP)
        if (clr_lid == 0) {
            CLR_FOR_VARS(CLR_SSTORE)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#elif CLR_SEG_ALGO == CLR_SEG_STRIPES
    // A work-group per column combines the first pass's clr_tile work-groups' partials.
    const ulong clr_cols = clr_nseg;
    for (ulong clr_e = get_group_id(0); clr_e < clr_cols; clr_e += get_num_groups(0)) {
        CLR_FOR_VARS(CLR_SRESET)
        for (ulong clr_u = clr_lid; clr_u < clr_tile; clr_u += CLR_WG) {
            const ulong clr_slot = clr_u * clr_cols + clr_e;
            CLR_FOR_VARS(CLR_SFOLD)
        }
        CLR_FOR_VARS(CLR_SGROUP)
        if (clr_lid == 0) {
            const ulong clr_sb = clr_e;
            const ulong clr_ss = clr_cols;
            CLR_FOR_VARS(CLR_SSTORE)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
}
#endif  // CLR_SEG_ALGO != CLR_SEG_MERGE && CLR_SEG_ALGO != CLR_SEG_RUNS && != CLR_SEG_ALIGNED
