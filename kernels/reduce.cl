// clreduce: the reduction kernels. Included after common.cl, one copy of var.cl per variable,
// and the generated user body (clr_body) with these generated macros:
//   CLR_FOR_VARS(X)      X(0) X(1) ... one per reduction variable
//   CLR_CALL(ci, cu)     calls clr_body for index ci with the cu-th accumulator of every variable
//                        (its parameters and clr_main's locals are clr_-prefixed, so a user argument
//                        of any other name is passed as itself)
//   CLR_VAR_PARAMS       __global R0_T* clr_res_0, __global ulong* clr_aux_0, __global R0_A* clr_part_0, ...
//                        (an exact sum's partials are __global long*: its superaccumulator(s))
//   CLR_USER_PARAMS      the user's buffer and scalar parameters, each preceded by a comma
// and the define CLR_MBOX_PTX (1: NVIDIA, the mailbox's fence is PTX membar.sys).

// Every variable also gets ls_k, R{k}_XLS longs of local memory: an exact sum's
// superaccumulator(s) (kernels/var_exact.cl); one unused long for the others.
#define CLR_DECL(k)                                                             \
    R##k##_A clr_a##k[CLR_UNROLL];                                               \
    for (int clr_u = 0; clr_u < CLR_UNROLL; ++clr_u) clr_a##k[clr_u] = clr_identity_##k();   \
    __local R##k##_A clr_lm##k[R##k##_LSLOTS];                                     \
    __local long clr_ls##k[R##k##_XLS];
#define CLR_PRE(k) clr_pre_##k(clr_lm##k, clr_ls##k, clr_res_##k, clr_part_##k);
#define CLR_FOLD(k) \
    for (int clr_u = 1; clr_u < CLR_UNROLL; ++clr_u) clr_a##k[0] = clr_fold_##k(clr_a##k[0], clr_a##k[clr_u], clr_ls##k);
#define CLR_GROUP_CROSS(k) clr_group_cross_##k(clr_a##k[0], clr_lm##k, clr_ls##k, clr_res_##k, clr_part_##k);
#define CLR_LAST(k) clr_last_##k(clr_res_##k, clr_aux_##k, clr_part_##k, clr_ngroups, clr_lm##k, clr_ls##k);
#define CLR_PASS(k) clr_pass_##k(clr_res_##k, clr_aux_##k, clr_part_##k, (uint)clr_n_arg, clr_lm##k, clr_ls##k);
#define CLR_SPASS(k) clr_spass_##k(clr_res_##k, clr_aux_##k, clr_part_##k);
#define CLR_DECL_LM(k) __local R##k##_A clr_lm##k[R##k##_LSLOTS]; __local long clr_ls##k[R##k##_XLS];

#if CLR_UNROLL == 1
#define CLR_UNROLLED_X(C, i, s) C((i), 0);
#elif CLR_UNROLL == 2
#define CLR_UNROLLED_X(C, i, s) C((i), 0); C((i) + (s), 1);
#elif CLR_UNROLL == 4
#define CLR_UNROLLED_X(C, i, s) C((i), 0); C((i) + (s), 1); C((i) + 2 * (s), 2); C((i) + 3 * (s), 3);
#elif CLR_UNROLL == 8
#define CLR_UNROLLED_X(C, i, s)                                                                      \
    C((i), 0); C((i) + (s), 1); C((i) + 2 * (s), 2); C((i) + 3 * (s), 3); \
    C((i) + 4 * (s), 4); C((i) + 5 * (s), 5); C((i) + 6 * (s), 6); C((i) + 7 * (s), 7);
#elif CLR_UNROLL == 16
#define CLR_UNROLLED_X(C, i, s)                                                                         \
    C((i), 0); C((i) + (s), 1); C((i) + 2 * (s), 2); C((i) + 3 * (s), 3);       \
    C((i) + 4 * (s), 4); C((i) + 5 * (s), 5); C((i) + 6 * (s), 6); C((i) + 7 * (s), 7);   \
    C((i) + 8 * (s), 8); C((i) + 9 * (s), 9); C((i) + 10 * (s), 10); C((i) + 11 * (s), 11); \
    C((i) + 12 * (s), 12); C((i) + 13 * (s), 13); C((i) + 14 * (s), 14); C((i) + 15 * (s), 15);
#else
#error "clreduce: CLR_UNROLL must be 1, 2, 4, 8 or 16"
#endif
#define CLR_UNROLLED(i, s) CLR_UNROLLED_X(CLR_CALL, i, s)
#define CLR_UNROLLED_TRY(i, s) CLR_UNROLLED_X(CLR_CALL_TRY, i, s)
#define CLR_UNROLLED_REDO(i, s) CLR_UNROLLED_X(CLR_CALL_REDO, i, s)
// The speculative loop's exact variable k: saved before a chunk (with a fresh block state),
// restored for its redo, a step's block into its expansion, renormalized after a chunk.
// (clr_xsaves_k of them: the expansions the try changes.)
#define CLR_SPEC_SAVE(k) \
    R##k##_A clr_save##k[clr_xsaves_##k]; \
    for (int clr_u = 0; clr_u < clr_xsaves_##k; ++clr_u) clr_save##k[clr_u] = clr_a##k[clr_u]; \
    clr_xbs_t_##k clr_xbs##k[clr_xnbs_##k]; \
    for (int clr_u = 0; clr_u < clr_xnbs_##k; ++clr_u) clr_xbs##k[clr_u] = clr_xbs_zero_##k();
#define CLR_SPEC_RESTORE(k) \
    for (int clr_u = 0; clr_u < clr_xsaves_##k; ++clr_u) clr_a##k[clr_u] = clr_save##k[clr_u];
#define CLR_SPEC_BLKEND(k) \
    for (int clr_u = 0; clr_u < clr_xnbs_##k; ++clr_u) clr_a##k[clr_u] = clr_xblkend_##k(clr_a##k[clr_u], &clr_xbs##k[clr_u], &clr_bad);
#define CLR_SPEC_CHKEND(k) \
    for (int clr_u = 0; clr_u < clr_xnbs_##k; ++clr_u) clr_xchkend_##k(&clr_xbs##k[clr_u], &clr_bad);
#define CLR_SPEC_RENORM(k) \
    for (int clr_u = 0; clr_u < clr_xlive_##k; ++clr_u) clr_a##k[clr_u] = clr_xrenorm_##k(clr_a##k[clr_u]);
// The exact sums' speculative loop over i, with s between the unrolled indices and end the
// bound (kernels/var_exact.cl): chunks of CLR_SPEC_CHUNK unrolled steps through the
// branch-free try (a block ending every CLR_XBLK steps); a flagged chunk runs again exactly,
// from the expansions saved before it (the body only reads: running it twice is harmless), the
// other variables into throwaway accumulators (the try counted them once). The hot loop's
// range checks run once per chunk (CLR_SPEC_CHKEND) before the flag is read.
// CLR_SPEC_WHOLE 1 (an A/B switch): the bound is checked once per block of CLR_XBLK steps
// (its loads in one basic block); fewer indices than a block go through the exact loop after.
#ifndef CLR_SPEC_WHOLE
#define CLR_SPEC_WHOLE 0
#endif
#if CLR_SPEC_WHOLE
#define CLR_SPEC_LAST(s) ((CLR_XBLK * CLR_UNROLL - 1) * (s))
#define CLR_SPEC_STEP_OK(s, end) 1
#else
#define CLR_SPEC_LAST(s) ((CLR_UNROLL - 1) * (s))
#define CLR_SPEC_STEP_OK(s, end) (i + (CLR_UNROLL - 1) * (s) < (end))
#endif
#define CLR_SPEC_RUN(s, end)                                                                      \
    while (i + CLR_SPEC_LAST(s) < (end)) {                                                        \
        const CLR_IDX clr_i0 = i;                                                                 \
        CLR_FOR_SPEC(CLR_SPEC_SAVE)                                                               \
        uint clr_bad = 0;                                                                         \
        for (uint clr_c = 0; clr_c < CLR_SPEC_CHUNK && i + CLR_SPEC_LAST(s) < (end); clr_c += CLR_XBLK) { \
            for (uint clr_b = 0; clr_b < CLR_XBLK && CLR_SPEC_STEP_OK(s, end); ++clr_b, i += CLR_UNROLL * (s)) { \
                CLR_UNROLLED_TRY(i, (s))                                                          \
            }                                                                                     \
            CLR_FOR_SPEC(CLR_SPEC_BLKEND)                                                         \
        }                                                                                         \
        CLR_FOR_SPEC(CLR_SPEC_CHKEND)                                                             \
        if (clr_bad) {                                                                            \
            CLR_FOR_SPEC(CLR_SPEC_RESTORE)                                                        \
            CLR_REDO_DECL                                                                         \
            for (CLR_IDX clr_j = clr_i0; clr_j < i; clr_j += CLR_UNROLL * (s)) {                  \
                CLR_UNROLLED_REDO(clr_j, (s))                                                     \
            }                                                                                     \
        }                                                                                         \
        CLR_FOR_SPEC(CLR_SPEC_RENORM)                                                             \
    }
#ifndef CLR_SPEC_CHUNK
#define CLR_SPEC_CHUNK 16u
#endif

#if CLR_C11 || CLR_PTX_ACQREL
#define CLR_RESET_COUNTER if (clr_lid == 0) *clr_counter = 0u;
#else
#define CLR_RESET_COUNTER if (clr_lid == 0) atomic_xchg(clr_counter, 0u);
#endif

// The host mailbox (design/decisions.md section 56): every clr_main and clr_finish takes
// clr_mbox (0: none) and clr_seq last. Where the host passes an address (a shortcut with one
// plain variable finishing by last-group detection in one launch), the last work-group's
// work-item 0 stores the variable's bits (and an argmin/argmax index) there, fences at system
// scope, then stores the sequence number the host spins on.
#define CLR_MBOX_PARAMS , const ulong clr_mbox, const uint clr_seq
static inline void clr_mbox_post(__global R0_T* res, __global ulong* aux, ulong mbox, uint seq) {
    __global volatile ulong* m = (__global volatile ulong*)mbox;
    union { R0_T t; ulong u; } bits;
    bits.u = 0;
    bits.t = res[0];
    m[0] = bits.u;
#if R0_SHAPE == CLR_SHAPE_PAIR
    m[1] = aux[0];
#endif
#if CLR_MBOX_PTX
    asm volatile("membar.sys;" ::: "memory");
#else
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
    ((__global volatile uint*)mbox)[4] = seq;
}

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(const ulong clr_n_arg, CLR_VAR_PARAMS __global uint* clr_counter CLR_USER_PARAMS CLR_MBOX_PARAMS) {
    const CLR_IDX clr_n = (CLR_IDX)clr_n_arg;
    const uint clr_lid = (uint)get_local_id(0);
    const uint clr_ngroups = (uint)get_num_groups(0);
    CLR_FOR_VARS(CLR_DECL)
    CLR_FOR_VARS(CLR_PRE)

#if CLR_FORM == CLR_FORM_ND
    {
        // nd_range: one call per work-item, exactly the user's geometry.
        const CLR_IDX i = (CLR_IDX)clr_linear_id();
        CLR_CALL(i, 0);
    }
#elif CLR_ORDER == CLR_ORDER_GRID
    {
        // Grid-stride: consecutive work-items read consecutive indices (coalesced); each
        // work-item keeps CLR_UNROLL independent accumulators, so as many loads are in flight.
#if CLR_VEC > 1
        // The vector step: each work-item takes CLR_VEC consecutive indices per step (a block),
        // consecutive work-items consecutive blocks, the blocks' 16-bit elements loaded at once
        // (CLR_CALL_V); then the one partial block at the end, index by index.
        const CLR_IDX clr_stride = (CLR_IDX)clr_ngroups * CLR_WG * CLR_VEC;
        CLR_IDX i = ((CLR_IDX)get_group_id(0) * CLR_WG + clr_lid) * CLR_VEC;
        for (; i + (CLR_UNROLL - 1) * clr_stride + (CLR_VEC - 1) < clr_n; i += CLR_UNROLL * clr_stride) {
            CLR_UNROLLED_X(CLR_CALL_V, i, clr_stride)
        }
        for (; i + (CLR_VEC - 1) < clr_n; i += clr_stride) CLR_CALL_V(i, 0);
        for (CLR_IDX clr_j = i; clr_j < clr_n && clr_j < i + CLR_VEC; ++clr_j) CLR_CALL(clr_j, 0);
#else
        const CLR_IDX clr_stride = (CLR_IDX)clr_ngroups * CLR_WG;
        CLR_IDX i = (CLR_IDX)get_group_id(0) * CLR_WG + clr_lid;
#if CLR_SPEC
        CLR_SPEC_RUN(clr_stride, clr_n)
#else
        for (; i + (CLR_UNROLL - 1) * clr_stride < clr_n; i += CLR_UNROLL * clr_stride) {
            CLR_UNROLLED(i, clr_stride)
        }
#endif
        for (; i < clr_n; i += clr_stride) CLR_CALL(i, 0);
#endif
    }
#elif CLR_ORDER == CLR_ORDER_CONTIG
    {
        // Contiguous: each work-item owns one contiguous chunk and streams through it with
        // CLR_UNROLL independent accumulators on consecutive indices.
        const CLR_IDX clr_items = (CLR_IDX)clr_ngroups * CLR_WG;
        const CLR_IDX clr_chunk = (clr_n + clr_items - 1) / clr_items;
        const CLR_IDX clr_start = ((CLR_IDX)get_group_id(0) * CLR_WG + clr_lid) * clr_chunk;
        const CLR_IDX clr_end = clr_start < clr_n ? (clr_n - clr_start < clr_chunk ? clr_n : clr_start + clr_chunk) : clr_start;
        CLR_IDX i = clr_start;
#if CLR_SPEC
        CLR_SPEC_RUN(1, clr_end)
#else
        for (; i + (CLR_UNROLL - 1) < clr_end; i += CLR_UNROLL) {
            CLR_UNROLLED(i, 1)
        }
#endif
        for (; i < clr_end; ++i) CLR_CALL(i, 0);
    }
#else
    {
        // Blocked: each work-group owns one contiguous chunk (locality for the CPU thread that
        // runs it), and inside it consecutive work-items read consecutive indices (vectorizable).
        CLR_IDX clr_chunk = (clr_n + clr_ngroups - 1) / clr_ngroups;
        clr_chunk = (clr_chunk + CLR_WG - 1) / CLR_WG * CLR_WG;
        const CLR_IDX clr_start = (CLR_IDX)get_group_id(0) * clr_chunk;
        const CLR_IDX clr_end = clr_start < clr_n ? (clr_n - clr_start < clr_chunk ? clr_n : clr_start + clr_chunk) : clr_start;
        CLR_IDX i = clr_start + clr_lid;
        for (; i + (CLR_UNROLL - 1) * CLR_WG < clr_end; i += CLR_UNROLL * CLR_WG) {
            CLR_UNROLLED(i, CLR_WG)
        }
        for (; i < clr_end; i += CLR_WG) CLR_CALL(i, 0);
    }
#endif

    CLR_FOR_VARS(CLR_FOLD)
    CLR_FOR_VARS(CLR_GROUP_CROSS)

#if CLR_HAS_LAST
    // Last-work-group detection: each work-group publishes its partials, then takes a ticket;
    // the work-group that takes the last ticket reduces all partials and resets the counter.
    __local uint clr_is_last;
    if (clr_lid == 0) {
#if CLR_C11
        uint prev = atomic_fetch_add_explicit((volatile __global atomic_uint*)clr_counter, 1u,
                                              memory_order_acq_rel, memory_scope_device);
#elif CLR_PTX_ACQREL
        // Release: the partial stored just before; acquire: every earlier group's release.
        uint prev;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(prev) : "l"(clr_counter) : "memory");
#else
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        uint prev = atomic_inc(clr_counter);
#endif
        clr_is_last = (prev == clr_ngroups - 1) ? 1u : 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    // clr_is_last is uniform across the work-group, so the whole group leaves or stays.
    if (!clr_is_last) return;
#if CLR_C11
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire, memory_scope_device);
#elif CLR_PTX_ACQREL
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
#else
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
    // Every other work-group has taken its ticket: the counter is reset for the next launch
    // now, so that its latency overlaps the reduction of the partials. Not on PoCL 3.x
    // (CLR_SERIAL_FINISH), whose last-group region then lost the result on the OpenCL 1.2 path
    // (tests/matrix.rs masks::no_c11_atomics): there it is reset at the end, as before.
#if !CLR_SERIAL_FINISH
    CLR_RESET_COUNTER
#endif
    CLR_FOR_VARS(CLR_LAST)
#if CLR_SERIAL_FINISH
    CLR_RESET_COUNTER
#endif
    // Work-item 0 stored the result in CLR_LAST: it reads its own store back.
    if (clr_lid == 0 && clr_mbox != 0) clr_mbox_post(clr_res_0, clr_aux_0, clr_mbox, clr_seq);
#endif
}

// The extra pass: one work-group reduces the partials of every variable whose cross-group
// step is CLR_XS_PASS. clr_n_arg is the number of partials.
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish(const ulong clr_n_arg, CLR_VAR_PARAMS __global uint* clr_counter CLR_USER_PARAMS CLR_MBOX_PARAMS) {
    CLR_FOR_VARS(CLR_DECL_LM)
    CLR_FOR_VARS(CLR_PASS)
}

// The span pass (decisions 59, 79): one work-item per element of every global-digits or
// global-copies span and of every exact span in global memory finished by an extra pass, over as many work-groups as the largest takes (the others' functions are
// empty); enqueued beside clr_finish, which stays one work-group.
__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_finish_spans(const ulong clr_n_arg, CLR_VAR_PARAMS __global uint* clr_counter CLR_USER_PARAMS CLR_MBOX_PARAMS) {
    CLR_FOR_VARS(CLR_SPASS)
}
