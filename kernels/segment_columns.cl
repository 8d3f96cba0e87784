// clreduce: the `columns`, `stripes` and `blocks` segmented plans (Axis::First) (design/segments.md). Appended after segment.cl,
// whose macros it uses; src/codegen/segment.rs appends the file of the plan's CLR_SEG_ALGO.

#if CLR_SEG_ALGO == CLR_SEG_COLUMNS
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
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
}

// The finishing pass (the first pass's partials).
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    CLR_SEG_FINISH_PROLOGUE
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
}
#elif CLR_SEG_ALGO == CLR_SEG_STRIPES
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
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
}

// The finishing pass (the first pass's partials).
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    CLR_SEG_FINISH_PROLOGUE
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
}
#elif CLR_SEG_ALGO == CLR_SEG_BLOCKS
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(CLR_SEG_PARAMS) {
    CLR_SEG_MAIN_PROLOGUE
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
}

// The finishing pass (the first pass's partials).
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(CLR_SEG_PARAMS) {
    CLR_SEG_FINISH_PROLOGUE
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
}
#endif
