// clreduce: one exact-sum variable of a segmented launch (Determinism::Exact per segment,
// SaccStore::Carried), included instead of var.cl and var_exact.cl with CLR_V set to its index.
// It defines the part of var.cl's interface that kernels/segment.cl uses (clr_identity, clr_op,
// clr_group, clr_store) for an accumulator that carries its own superaccumulator, so every
// segment plan that combines accumulators (item, group, tiles, chunks, lanes, columns, stripes,
// their partial slots and second passes) runs an exact sum unchanged. design/exact.md,
// "Exact sums per segment"; the arithmetic is kernels/exact.cl's.
//
// The accumulator (the generated struct clr_xs_k, src/codegen): an expansion `e` (two doubles,
// or three floats and a pad word without fp64) and a private superaccumulator `l` of VXL limbs
// in carry-save form. An element goes through the expansion's TwoSums (clr_x_push_*); a residue,
// or an element outside the window, is deposited into `l`. Two accumulators combine exactly:
// both superaccumulators normalized and added limb by limb, both expansions flushed into the
// sum, the result normalized again, so a combined accumulator counts as one contribution
// whatever it absorbed (design/exact.md, "The numbers the planner must enforce": a single
// accumulator takes at most one deposit per element it pushes, and the planner caps segments
// at 2^29 elements). The store flushes the expansion, adds the variable's initial value
// (VINIT) and rounds once: the correctly rounded sum of the segment, whatever plan, work-group
// size or order combined it. Raw mode (VXRAW): the normalized limbs go to aux[e * VXL ..]
// instead, for the host to merge exactly.
//
// Per variable, besides var.cl's defines: Rk_XF (32 or 64), Rk_XE (CLR_XE_E2D or CLR_XE_E3F),
// Rk_XL (limbs).

#undef VXS_SUF
#if VXF == 32
#define VXS_SUF _32
#else
#define VXS_SUF _64
#endif
// The kit's function `base` in the private flavor and this variable's format.
#undef VXS_P
#define VXS_P(base) CLR_CAT3(base, _p, VXS_SUF)

CLR_X_INLINE VA VAR(clr_identity)(void) {
    VA a;
#if VXE == CLR_XE_E2D
    a.e = clr_x_e2d_zero();
#else
    a.e = clr_x_e3f_zero();
    a.pad = 0u;
#endif
    for (int j = 0; j < VXL; ++j) a.l[j] = 0;
    return a;
}

// One element (the body's `sum += v`) into the accumulator *a.
CLR_X_INLINE void VAR(clr_xspush)(__private VA* a, VT v) {
#if VXF == 32 && VXE == CLR_XE_E2D
    a->e = VXS_P(clr_x_push_f32d)(a->e, as_uint(v), a->l);
#elif VXF == 32
    a->e = VXS_P(clr_x_push_f32f)(a->e, as_uint(v), a->l);
#else
    a->e = VXS_P(clr_x_push_f64d)(a->e, v, a->l);
#endif
}

// The expansion of a into its own superaccumulator (a zero expansion left).
CLR_X_INLINE VA VAR(clr_xsflush)(VA a) {
#if VXE == CLR_XE_E2D
    VXS_P(clr_x_flush_e2d)(a.e, a.l);
    a.e = clr_x_e2d_zero();
#else
    VXS_P(clr_x_flush_e3f)(a.e, a.l);
    a.e = clr_x_e3f_zero();
#endif
    return a;
}

// Two accumulators into one, exactly: integer additions of normalized limbs (any order, any
// tree gives the same value) and the flushed expansions; the result is normalized.
CLR_X_INLINE VA VAR(clr_op)(VA a, VA b) {
    VXS_P(clr_x_normalize)(a.l);
    VXS_P(clr_x_normalize)(b.l);
    for (int j = 0; j < VXL; ++j) a.l[j] += b.l[j];
#if VXE == CLR_XE_E2D
    VXS_P(clr_x_flush_e2d)(b.e, a.l);
#else
    VXS_P(clr_x_flush_e3f)(b.e, a.l);
#endif
    a = VAR(clr_xsflush)(a);
    VXS_P(clr_x_normalize)(a.l);
    return a;
}

// The work-group step: the local-memory tree (var.cl's, with this clr_op); every work-item
// gets the result. Callers that use `lm` again put a barrier between the two uses.
CLR_X_INLINE VA VAR(clr_group)(VA v, __local VA* lm) {
    const uint lid = (uint)get_local_id(0);
    VA acc = v;
    lm[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
#if CLR_WG != CLR_WG_POW2
    if (lid < CLR_WG - CLR_WG_POW2) {
        acc = VAR(clr_op)(acc, lm[lid + CLR_WG_POW2]);
        lm[lid] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (uint s = CLR_WG_POW2 / 2; s > 0; s >>= 1) {
        if (lid < s) {
            acc = VAR(clr_op)(acc, lm[lid + s]);
            lm[lid] = acc;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return lm[0];
}

// Segment e's result: the accumulator with the variable's initial value (VINIT), rounded once;
// in raw mode its normalized limbs (no initial value) to aux.
CLR_X_INLINE void VAR(clr_store)(__global VT* res, __global ulong* aux, size_t e, VA g) {
    g = VAR(clr_xsflush)(g);
#if VXRAW
    VXS_P(clr_x_normalize)(g.l);
    __global long* out = (__global long*)aux + e * VXL;
    for (int j = 0; j < VXL; ++j) out[j] = g.l[j];
#else
#if VINIT
#if VXF == 32
    VXS_P(clr_x_add_f32)(g.l, as_uint(res[e]));
#else
    VXS_P(clr_x_add_f64)(g.l, as_ulong(res[e]));
#endif
#endif
#if VXF == 32
    res[e] = as_float(CLR_CAT(clr_x_round32, VXS_SUF)(g.l));
#else
    res[e] = as_double(CLR_CAT(clr_x_round64, VXS_SUF)(g.l));
#endif
#endif
}
