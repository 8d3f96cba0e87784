// clreduce: segmented and axis reductions (design/algorithms.md, "Segmented reductions").
// Included after common.cl, one copy of var.cl per variable (its accumulator, combine, tree and
// store are reused as they are), item.cl and the generated user body, instead of reduce.cl.
// Generated macros (src/codegen/segment.rs): CLR_FOR_VARS, CLR_VAR_PARAMS, CLR_USER_PARAMS,
// CLR_CALL as for reduce.cl, and per variable CLR_INSEG_k(g), which turns a (value, index)
// accumulator's global index into the index within its segment (`index_in_segment`) or is
// empty. Defines:
//   CLR_SEG_ALGO     CLR_SEG_ITEM, CLR_SEG_GROUP, CLR_SEG_TILES, CLR_SEG_COLUMNS, CLR_SEG_CHUNKS,
//                    CLR_SEG_STAGED, CLR_SEG_LANES, CLR_SEG_STRIPES, CLR_SEG_MERGE, CLR_SEG_RUNS,
//                    CLR_SEG_BLOCKS, CLR_SEG_ALIGNED or CLR_SEG_PANELS
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
#define CLR_SEG_PANELS 13  // its kernels are kernels/segment_panels.cl

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

// The speculative loop of exact sums per segment (decision 90; CLR_SEGX, by default CLR_SPEC:
// the plan's exact sums speculative, every variable of the launch an exact sum, one
// accumulator per work-item): the strided loops (CLR_STRIDED, CLR_PLAIN_STRIDED) run
// CLR_XSTRIDED instead. Chunks of up to CLR_SEGX_CHUNK steps of CLR_SEGX_STEP loads (written
// out: the loads in flight together) go through the branch-free try (CLR_CALL_TRY,
// kernels/var_segexact.cl clr_xstry), the block state folded into the expansion after each
// step, the window checked after each chunk; a flagged chunk's expansions are restored and
// the chunk redone from memory through CLR_CALL (the push: exact). Every variable is an exact
// sum whose try changes only its expansion, so a redo counts nothing twice; the body only
// reads (the plan's rule), so running it again is harmless. Fewer than a step's indices at the
// end go through the push.
#ifndef CLR_SPEC
#define CLR_SPEC 0
#endif
#ifndef CLR_SEGX
#define CLR_SEGX CLR_SPEC
#endif
#if CLR_SEGX
#if CLR_SEGX_STEP == 1
#define CLR_XROWS(C) C(0)
#elif CLR_SEGX_STEP == 2
#define CLR_XROWS(C) C(0) C(1)
#elif CLR_SEGX_STEP == 4
#define CLR_XROWS(C) C(0) C(1) C(2) C(3)
#elif CLR_SEGX_STEP == 8
#define CLR_XROWS(C) C(0) C(1) C(2) C(3) C(4) C(5) C(6) C(7)
#else
#define CLR_XROWS(C) \
    C(0) C(1) C(2) C(3) C(4) C(5) C(6) C(7) C(8) C(9) C(10) C(11) C(12) C(13) C(14) C(15)
#endif
#define CLR_XSAVE(k)                                 \
    const clr_x_e2d clr_xsv##k = clr_a##k[0].e;      \
    clr_xbs_t_##k clr_xbs##k[1];                     \
    clr_xbs##k[0] = clr_xbs_zero_##k();
#define CLR_XBLKEND(k) clr_xsblkend_##k(&clr_a##k[0], &clr_xbs##k[0], &clr_bad);
#define CLR_XCHKEND(k) clr_xschkend_##k(&clr_xbs##k[0], &clr_bad);
#define CLR_XRESTORE(k) clr_a##k[0].e = clr_xsv##k;
#define CLR_XRENORM(k) clr_a##k[0].e = clr_x_renorm_e2d(clr_a##k[0].e);
#define CLR_XTRYU(u) CLR_CALL_TRY((CLR_IDX)(clr_xj + (u) * clr_xs), 0);
// The loop with indices of type T (CLR_IDX where the last look-ahead cannot wrap it).
#define CLR_XSTRIDED_T(T, clr_b, clr_e2, clr_s)                                               \
    {                                                                                         \
        const T clr_xe = (T)(clr_e2), clr_xs = (T)(clr_s);                                    \
        T clr_xj = (T)(clr_b);                                                                \
        CLR_FOR_VARS(CLR_SRESET)                                                              \
        while (clr_xj + (T)(CLR_SEGX_STEP - 1) * clr_xs < clr_xe) {                           \
            const T clr_xj0 = clr_xj;                                                         \
            CLR_FOR_VARS(CLR_XSAVE)                                                           \
            uint clr_bad = 0;                                                                 \
            for (uint clr_xc = 0;                                                             \
                 clr_xc < CLR_SEGX_CHUNK && clr_xj + (T)(CLR_SEGX_STEP - 1) * clr_xs < clr_xe; \
                 ++clr_xc) {                                                                  \
                CLR_XROWS(CLR_XTRYU)                                                          \
                clr_xj += (T)CLR_SEGX_STEP * clr_xs;                                          \
                CLR_FOR_VARS(CLR_XBLKEND)                                                     \
            }                                                                                 \
            CLR_FOR_VARS(CLR_XCHKEND)                                                         \
            if (clr_bad) {                                                                    \
                T clr_xr = clr_xj0;                                                           \
                CLR_FOR_VARS(CLR_XRESTORE)                                                    \
                CLR_SEGX_REDO                                                                 \
            }                                                                                 \
            CLR_FOR_VARS(CLR_XRENORM)                                                         \
        }                                                                                     \
        for (; clr_xj < clr_xe; clr_xj += clr_xs) CLR_CALL((CLR_IDX)clr_xj, 0);               \
    }
// The flagged chunk's redo (CLR_SEGX_REDO defined empty: a mutation check only, results wrong).
#ifndef CLR_SEGX_REDO
#define CLR_SEGX_REDO for (; clr_xr < clr_xj; clr_xr += clr_xs) CLR_CALL((CLR_IDX)clr_xr, 0);
#endif
#define CLR_XSTRIDED(clr_b, clr_e2, clr_s)                                                   \
    if ((ulong)(clr_e2) + (CLR_SEGX_STEP + 1) * (ulong)(clr_s) <= (ulong)((CLR_IDX)-1))      \
        CLR_XSTRIDED_T(CLR_IDX, clr_b, clr_e2, clr_s)                                        \
    else                                                                                     \
        CLR_XSTRIDED_T(ulong, clr_b, clr_e2, clr_s)
#undef CLR_STRIDED
#define CLR_STRIDED(clr_b, clr_e2, clr_s) CLR_XSTRIDED(clr_b, clr_e2, clr_s)
#undef CLR_PLAIN_STRIDED
#define CLR_PLAIN_STRIDED(clr_b, clr_e2, clr_s) CLR_XSTRIDED(clr_b, clr_e2, clr_s)
#endif

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

// The parameters of every segment kernel (clr_main and clr_finish, here and in the plan files):
// see "Arguments after the variables" above.
#define CLR_SEG_PARAMS                                                                         \
    const ulong clr_n_arg, CLR_VAR_PARAMS __global const ulong *clr_off, const ulong clr_nseg, \
        const ulong clr_c, const ulong clr_lo, const ulong clr_hi, const ulong clr_tile,       \
        const ulong clr_short CLR_USER_PARAMS
#define CLR_SEG_MAIN_PROLOGUE                   \
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;   \
    const uint clr_lid = (uint)get_local_id(0); \
    const ulong clr_ss = 1;                     \
    CLR_FOR_VARS(CLR_SDECL)
// CLR_DIAG_NOFINISH: A/B only (scripts/gpu/csr_ab.sh): the first pass's time alone, results
// wrong.
#ifdef CLR_DIAG_NOFINISH
#define CLR_SEG_NOFINISH return;
#else
#define CLR_SEG_NOFINISH
#endif
#define CLR_SEG_FINISH_PROLOGUE                 \
    const uint clr_lid = (uint)get_local_id(0); \
    const ulong clr_ss = 1;                     \
    CLR_FOR_VARS(CLR_SDECL)                     \
    CLR_SEG_NOFINISH
