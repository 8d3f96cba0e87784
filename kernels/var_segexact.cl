// clreduce: one exact-sum variable of a segmented launch (Determinism::Exact per segment,
// SaccStore::Carried), included instead of var.cl and var_exact.cl with CLR_V set to its index.
// It defines the part of var.cl's interface that kernels/segment.cl uses (clr_identity, clr_op,
// clr_group, clr_store) for an accumulator that carries its own superaccumulator, so every
// segment plan that combines accumulators (item, group, tiles, chunks, lanes, columns, stripes,
// their partial slots and second passes) runs an exact sum unchanged. design/exact.md,
// "Exact sums per segment"; the arithmetic is kernels/exact.cl's.
//
// The accumulator (the generated struct clr_xs_k, src/codegen): an expansion `e` (two doubles,
// or three floats without fp64), a state word `t` and a private superaccumulator `l` of VXL
// limbs in carry-save form. An element goes through the expansion's TwoSums; a residue, or an
// element outside the window, is deposited into `l`. The limbs are lazy (decision 67): t == 0
// means untouched (the limbs hold nothing and are never read or written: the value is the
// expansion's); the first deposit zeroes them; t >= 1 bounds the contributions the limbs took
// since they were zeroed or normalized (each deposit is one contribution per limb, below 2^32 in
// magnitude; zeroed or normalized limbs count as one): a combine whose sum would pass
// VXS_CMAX (2^28) normalizes both sides first, a merge's or flush's deposit that would pass
// VXS_MAXC (2^30, design/exact.md) too, and the pushes' own deposits (at most one per element,
// 2^29 per segment) stay within the rest, so every limb stays within +-2^62 whatever the number
// of combines. Two accumulators combine exactly: the
// expansions merged (their TwoSum residues deposited), the limbs added when either side has any.
// The store adds the variable's initial value (VINIT) and rounds once: the correctly rounded sum
// of the segment, whatever plan, work-group size or order combined it. An untouched two-double
// accumulator rounds its expansion directly (clr_xsround), the limbs otherwise. Raw mode
// (VXRAW): the normalized limbs go to aux[e * VXL ..] instead, for the host to merge exactly.
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
// The contributions the limbs take between normalizations (CLR_X_MAX_CONTRIB), and the most a
// combine leaves: pushes deposit without a check (the hot loop's cold path stays small), which
// the planner's cap allows: a segment has at most 2^29 elements, each deposits at most once, so
// an accumulator that left a combine with at most 2^28 + 3 contributions stays below 2^30.
#ifndef VXS_MAXC
#define VXS_MAXC (1u << 30)
#define VXS_CMAX (1u << 28)
// The push's cold paths (a residue, an element outside the window): inlined.
#define VXS_COLD CLR_X_INLINE
#endif

CLR_X_INLINE VA VAR(clr_identity)(void) {
    VA a;
#if VXE == CLR_XE_E2D
    a.e = clr_x_e2d_zero();
#else
    a.e = clr_x_e3f_zero();
#endif
    a.t = 0;  // untouched: the limbs are not written
    return a;
}

// The limbs of *a ready for `more` contributions: zeroed on the first touch, normalized when
// the count would pass VXS_MAXC.
CLR_X_INLINE void VAR(clr_xstouch)(__private VA* a, uint more) {
    if (a->t == 0) {
        for (int j = 0; j < VXL; ++j) a->l[j] = 0;
        a->t = 1;
    } else if (a->t + more > VXS_MAXC) {
        VXS_P(clr_x_normalize)(a->l);
        a->t = 1;
    }
    a->t += more;
}

// The push's deposit: the limbs zeroed on the first touch, one contribution more (no
// normalization: VXS_CMAX).
CLR_X_INLINE void VAR(clr_xsfirst)(__private VA* a) {
    if (a->t == 0)
        for (int j = 0; j < VXL; ++j) a->l[j] = 0;
    a->t += 1;
}

#if VXE == CLR_XE_E2D
// A finite double (a residue or an expansion's part) into the limbs.
CLR_X_INLINE void VAR(clr_xsdep)(__private VA* a, double v) {
    VAR(clr_xstouch)(a, 1u);
    VXS_P(clr_x_dep_d)(a->l, v);
}
VXS_COLD void VAR(clr_xspdep)(__private VA* a, double v) {
    VAR(clr_xsfirst)(a);
    VXS_P(clr_x_dep_d)(a->l, v);
}
// The push's element inside the window, as a double, through the expansion's two TwoSums; a
// residue into the limbs.
CLR_X_INLINE void VAR(clr_xsp2d)(__private VA* a, double x) {
    double t;
    a->e.s = clr_x_two_sum_d(a->e.s, x, &t);
    if (t != 0.0) {
        double r;
        a->e.c = clr_x_two_sum_d(a->e.c, t, &r);
        if (r != 0.0) VAR(clr_xspdep)(a, r);
    }
}
#else
CLR_X_INLINE void VAR(clr_xsdep)(__private VA* a, float v) {
    VAR(clr_xstouch)(a, 1u);
    VXS_P(clr_x_dep_f)(a->l, v);
}
VXS_COLD void VAR(clr_xspdep)(__private VA* a, float v) {
    VAR(clr_xsfirst)(a);
    VXS_P(clr_x_dep_f)(a->l, v);
}
#endif

// The push's element outside the window (a subnormal, an infinity, a NaN, or one too large or
// small for the expansion), as it is, into the limbs.
#if VXF == 32
VXS_COLD void VAR(clr_xspout)(__private VA* a, uint b) {
    VAR(clr_xsfirst)(a);
    VXS_P(clr_x_add_f32)(a->l, b);
}
#else
VXS_COLD void VAR(clr_xspout)(__private VA* a, ulong b) {
    VAR(clr_xsfirst)(a);
    VXS_P(clr_x_add_f64)(a->l, b);
}
#endif

// One element (the body's `sum += v`) into the accumulator *a: exact.cl's push
// (clr_x_push_f32d / f32f / f64d: the same window and cascade) with lazy limbs.
CLR_X_INLINE void VAR(clr_xspush)(__private VA* a, VT v) {
#if VXF == 32
    const uint b = as_uint(v);
    const uint ex = (b >> 23) & 0xffu;
#if VXE == CLR_XE_E2D
    if (ex - CLR_X_W32D_LO <= CLR_X_W32D_HI - CLR_X_W32D_LO) {
        VAR(clr_xsp2d)(a, clr_x_f32_to_d(b));
        return;
    }
#else
    if (ex - CLR_X_W32F_LO <= CLR_X_W32F_HI - CLR_X_W32F_LO) {
        float t;
        a->e.s = clr_x_two_sum_f(a->e.s, v, &t);
        if (t != 0.0f) {
            float u;
            a->e.c = clr_x_two_sum_f(a->e.c, t, &u);
            if (u != 0.0f) {
                float r;
                a->e.d = clr_x_two_sum_f(a->e.d, u, &r);
                if (r != 0.0f) VAR(clr_xspdep)(a, r);
            }
        }
        return;
    }
#endif
    if ((b << 1) != 0u) VAR(clr_xspout)(a, b);  // a zero adds nothing: no limb touched
#else
    const ulong b = as_ulong(v);
    const uint ex = (uint)(b >> 52) & 0x7ffu;
    if (ex - CLR_X_W64D_LO <= CLR_X_W64D_HI - CLR_X_W64D_LO) {
        VAR(clr_xsp2d)(a, v);
        return;
    }
    if ((b << 1) != 0UL) VAR(clr_xspout)(a, b);  // a zero adds nothing: no limb touched
#endif
}

#if VXSPEC && VXE == CLR_XE_E2D
// ---- the speculative loop per segment (kernels/segment.cl CLR_XSTRIDED, decision 90) ------
// A work-item's strided loads run in chunks of CLR_SEGX_CHUNK steps of CLR_SEGX_STEP loads
// through clr_body_try, whose `sum += v` is VAR(clr_xstry): no branch, no deposit, the
// accumulator's limbs and state word untouched. f32 data: the step's elements summed in the
// block state's plain double (the block pre-sum of kernels/var_exact.cl's hot form: 2^lb >= the
// step's loads, exact while the chunk's exponent fields span at most 29 - lb), the double then
// through the expansion's TwoSums at the step's end (VAR(clr_xsblkend)), a residue flagging
// the chunk. f64 data: each element through the expansion's TwoSums, a residue flagging. Both
// track the chunk's largest and smallest exponent fields, checked once per chunk
// (VAR(clr_xschkend)): an element outside the window (a subnormal, an infinity, a NaN, an f64
// outside [2^-970, 2^990)) flags it. A flagged chunk's expansion is restored (the try changed
// nothing else) and the chunk redone from memory through the push (exact, with deposits).
#ifndef CLR_SEGX_STEP
#define CLR_SEGX_STEP 8
#endif
#ifndef CLR_SEGX_CHUNK
#define CLR_SEGX_CHUNK 16
#endif
#if CLR_SEGX_STEP == 1
#define CLR_SEGX_LB 0u
#elif CLR_SEGX_STEP == 2
#define CLR_SEGX_LB 1u
#elif CLR_SEGX_STEP == 4
#define CLR_SEGX_LB 2u
#elif CLR_SEGX_STEP == 8
#define CLR_SEGX_LB 3u
#elif CLR_SEGX_STEP == 16
#define CLR_SEGX_LB 4u
#else
#error "clreduce: CLR_SEGX_STEP must be 1, 2, 4, 8 or 16"
#endif
#if VXF == 32
typedef struct {
    double d;  // the step's elements (exact: the chunk's span check)
    uint mx;   // the largest element's bits shifted left once (sign dropped)
    uint mn;   // the smallest nonzero's, minus 1 (a zero's 0 - 1 never counts)
} VAR(clr_xbs_t);
#else
typedef struct {
    uint mx;  // the high word shifted left once, a nonzero low word as bit 0
    uint mn;
} VAR(clr_xbs_t);
#endif
// One block state per accumulator (the generated CLR_CALL_TRY indexes by clr_xnbs_k).
enum { VAR(clr_xnbs) = 1 };
CLR_X_INLINE VAR(clr_xbs_t) VAR(clr_xbs_zero)(void) {
    VAR(clr_xbs_t) b;
#if VXF == 32
    b.d = 0.0;
#endif
    b.mx = 0u;
    b.mn = 0xffffffffu;
    return b;
}
// The try's `sum += v`.
CLR_X_INLINE void VAR(clr_xstry)(__private VA* a, __private VAR(clr_xbs_t)* blk, VT v,
                                 __private uint* bad) {
#if VXF == 32
    const uint s = as_uint(v) << 1;
    blk->mx = max(blk->mx, s);
    blk->mn = min(blk->mn, s - 1u);
    blk->d += (double)v;
#else
    const ulong b = as_ulong(v);
    const uint s = ((uint)(b >> 32) << 1) | (uint)((uint)b != 0u);
    blk->mx = max(blk->mx, s);
    blk->mn = min(blk->mn, s - 1u);
    double t, r;
    a->e.s = clr_x_two_sum_d(a->e.s, v, &t);
    a->e.c = clr_x_two_sum_d(a->e.c, t, &r);
    *bad |= (uint)(r != 0.0);
#endif
}
// After each step: f32 data, the block's double through the expansion's TwoSums.
CLR_X_INLINE void VAR(clr_xsblkend)(__private VA* a, __private VAR(clr_xbs_t)* blk,
                                    __private uint* bad) {
#if VXF == 32
    double t, r;
    a->e.s = clr_x_two_sum_d(a->e.s, blk->d, &t);
    a->e.c = clr_x_two_sum_d(a->e.c, t, &r);
    *bad |= (uint)(r != 0.0);
    blk->d = 0.0;
#endif
}
// After each chunk (before its flag is read): the window and span checks.
CLR_X_INLINE void VAR(clr_xschkend)(__private VAR(clr_xbs_t)* blk, __private uint* bad) {
#if VXF == 32
    // inf or NaN; a subnormal (or the smallest normal); a span wider than 29 - lb.
    *bad |= (uint)(blk->mx >= 0xff000000u) | (uint)(blk->mn < 0x01000000u) |
            (uint)((blk->mx >> 24) > (blk->mn >> 24) + 29u - CLR_SEGX_LB);
#else
    *bad |= (uint)((blk->mx >> 21) > CLR_X_W64D_HI) | (uint)((blk->mn >> 21) < CLR_X_W64D_LO);
#endif
}
#endif

#undef VXS_E
#if VXE == CLR_XE_E2D
#define VXS_E clr_x_e2d
#else
#define VXS_E clr_x_e3f
#endif

// The expansion b merged into a's (kit's clr_x_merge_e2d / e3f), the residues deposited into a.
CLR_X_INLINE void VAR(clr_xsmerge)(__private VA* a, VXS_E b) {
#if VXE == CLR_XE_E2D
    double t, u, v;
    a->e.s = clr_x_two_sum_d(a->e.s, b.s, &t);
    a->e.c = clr_x_two_sum_d(a->e.c, b.c, &u);
    a->e.c = clr_x_two_sum_d(a->e.c, t, &v);
    if (u != 0.0) VAR(clr_xsdep)(a, u);
    if (v != 0.0) VAR(clr_xsdep)(a, v);
#else
    float t1, t2, t3, t4, t5, t6;
    a->e.s = clr_x_two_sum_f(a->e.s, b.s, &t1);
    a->e.c = clr_x_two_sum_f(a->e.c, b.c, &t2);
    a->e.d = clr_x_two_sum_f(a->e.d, b.d, &t3);
    a->e.c = clr_x_two_sum_f(a->e.c, t1, &t4);
    a->e.d = clr_x_two_sum_f(a->e.d, t2, &t5);
    a->e.d = clr_x_two_sum_f(a->e.d, t4, &t6);
    if (t3 != 0.0f) VAR(clr_xsdep)(a, t3);
    if (t5 != 0.0f) VAR(clr_xsdep)(a, t5);
    if (t6 != 0.0f) VAR(clr_xsdep)(a, t6);
#endif
}

// The expansion of *a into its limbs (touched; a zero expansion left).
CLR_X_INLINE void VAR(clr_xsflush)(__private VA* a) {
#if VXE == CLR_XE_E2D
    VAR(clr_xstouch)(a, 2u);
    VXS_P(clr_x_flush_e2d)(a->e, a->l);
    a->e = clr_x_e2d_zero();
#else
    VAR(clr_xstouch)(a, 3u);
    VXS_P(clr_x_flush_e3f)(a->e, a->l);
    a->e = clr_x_e3f_zero();
#endif
}

// The accumulator B (an lvalue in any address space: a private value or a local slot, read,
// never written) added into the private accumulator A, exactly: the limbs added (integer
// additions: any order, any tree gives the same value) when B's were touched, the expansions
// merged. B's limbs are read only when touched: two untouched accumulators (ordinary data: the
// expansions absorb everything) move and touch no limb.
#undef VXS_ADD
#define VXS_ADD(A, B)                                                       \
    {                                                                       \
        const ulong bt_ = (B).t;                                            \
        if (bt_ != 0) {                                                     \
            if ((A).t == 0) {                                               \
                for (int j = 0; j < VXL; ++j) (A).l[j] = (B).l[j];          \
                (A).t = bt_;                                                \
            } else if ((A).t + bt_ <= VXS_CMAX) {                           \
                for (int j = 0; j < VXL; ++j) (A).l[j] += (B).l[j];         \
                (A).t += bt_;                                               \
            } else {                                                        \
                long n_[VXL];                                               \
                for (int j = 0; j < VXL; ++j) n_[j] = (B).l[j];             \
                VXS_P(clr_x_normalize)(n_);                                 \
                VXS_P(clr_x_normalize)((A).l);                              \
                for (int j = 0; j < VXL; ++j) (A).l[j] += n_[j];            \
                (A).t = 2;                                                  \
            }                                                               \
        }                                                                   \
        VAR(clr_xsmerge)(&(A), (B).e);                                      \
    }

// Two accumulators into one, exactly (VXS_ADD).
CLR_X_INLINE VA VAR(clr_op)(VA a, VA b) {
    VXS_ADD(a, b)
    return a;
}

// Accumulator A copied to D (a local slot): the limbs only when touched. A macro, not a
// function: the copy through an inlined function (a struct passed by value, or a partly written
// one returned) left an intrinsic (llvm.experimental.noalias.scope.decl) that Oclgrind 21.10
// cannot run. The tree's result is read back whole.
#undef VXS_PUT
#define VXS_PUT(D, A)                                          \
    {                                                          \
        (D).e = (A).e;                                         \
        (D).t = (A).t;                                         \
        if ((A).t != 0)                                        \
            for (int j = 0; j < VXL; ++j) (D).l[j] = (A).l[j]; \
    }

// The work-group step: var.cl's local-memory tree with this combine, moving limbs only where
// touched; every work-item gets the result. Callers that use `lm` again put a barrier between
// the two uses.
CLR_X_INLINE VA VAR(clr_group)(VA v, __local VA* lm) {
    const uint lid = (uint)get_local_id(0);
    VA acc = v;
    VXS_PUT(lm[lid], acc)
    barrier(CLK_LOCAL_MEM_FENCE);
#if CLR_WG != CLR_WG_POW2
    if (lid < CLR_WG - CLR_WG_POW2) {
        VXS_ADD(acc, lm[lid + CLR_WG_POW2])
        VXS_PUT(lm[lid], acc)
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (uint s = CLR_WG_POW2 / 2; s > 0; s >>= 1) {
        if (lid < s) {
            VXS_ADD(acc, lm[lid + s])
            VXS_PUT(lm[lid], acc)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return lm[0];
}

#if VXE == CLR_XE_E2D && !VXRAW
// The value s + c of an untouched two-double expansion (exact: no limb holds anything) rounded
// once, as result bits; the same bits as the limbs' rounding (clr_x_round32/64, exact.cl).
// Every element the expansion took is in the window and a segment has at most 2^29 of them,
// which is what kernels/exact.cl clr_x_round_e2d needs (fl(s + c) for f64 results; TwoSum,
// round to odd and an integer rounding for f32 results).
CLR_X_INLINE ulong VAR(clr_xsround)(clr_x_e2d e) { return CLR_CAT(clr_x_round_e2d, VXS_SUF)(e); }
#endif

// Segment e's result: the accumulator with the variable's initial value (VINIT), rounded once;
// in raw mode its normalized limbs (no initial value) to aux.
CLR_X_INLINE void VAR(clr_store)(__global VT* res, __global ulong* aux, size_t e, VA g) {
#if VXRAW
    VAR(clr_xsflush)(&g);
    VXS_P(clr_x_normalize)(g.l);
    __global long* out = (__global long*)aux + e * VXL;
    for (int j = 0; j < VXL; ++j) out[j] = g.l[j];
#else
#if VINIT
    {
        const VT v0 = res[e];
#if VXF == 32
        const int zero = (as_uint(v0) << 1) == 0u;
#else
        const int zero = (as_ulong(v0) << 1) == 0UL;
#endif
        // Adding a zero changes no value (an exact zero rounds to +0 either way).
#if VXE == CLR_XE_E2D
        if (!zero) VAR(clr_xspush)(&g, v0);
#else
        // The three-float expansion's cap (2^24 elements) leaves no room: into the limbs.
        if (!zero) {
            VAR(clr_xstouch)(&g, 1u);
            VXS_P(clr_x_add_f32)(g.l, as_uint(v0));
        }
#endif
    }
#endif
#if VXE == CLR_XE_E2D
    if (g.t == 0) {
#if VXF == 32
        res[e] = as_float((uint)VAR(clr_xsround)(g.e));
#else
        res[e] = as_double(VAR(clr_xsround)(g.e));
#endif
        return;
    }
#endif
    VAR(clr_xsflush)(&g);
#if VXF == 32
    res[e] = as_float(CLR_CAT(clr_x_round32, VXS_SUF)(g.l));
#else
    res[e] = as_double(CLR_CAT(clr_x_round64, VXS_SUF)(g.l));
#endif
#endif
}
