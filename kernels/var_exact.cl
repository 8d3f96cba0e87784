// clreduce: the functions of one exact-sum variable (Determinism::Exact, AccShape::Exact),
// included instead of var.cl for that variable, with CLR_V set to its index; every name it
// defines ends in _<CLR_V>, with the same signatures as var.cl's so kernels/reduce.cl calls both
// alike. The arithmetic is kernels/exact.cl's (included once per result format before the
// variables); design/exact.md explains the algorithm and why it is exact.
//
// Per variable k, besides var.cl's defines: Rk_XF (32 or 64: the result format), Rk_XE
// (CLR_XE_E2D: two doubles, CLR_XE_E3F: three floats), Rk_XST (CLR_XST_LA: one local
// superaccumulator per work-group, 64-bit local atomics; CLR_XST_ROWS: one row per work-item, no
// atomics), Rk_XL (limbs of a superaccumulator) and Rk_XLS (longs of ls, the local memory of
// the work-group's superaccumulator(s)).
//
// A scalar exact sum: each work-item keeps CLR_UNROLL expansions (the accumulators); an element
// goes through clr_x_push_* (fast path: TwoSums in registers; residues and out-of-window
// elements are deposited into the work-group's superaccumulator). The work-group merges the
// expansions (tree or PTX warp shuffles; merges are exact, their residues deposited too), work-item
// 0 flushes the merged expansion into the superaccumulator, the superaccumulator is normalized
// and published: added to the global one with 64-bit atomics (CLR_XS_ATOMIC) or written as a row
// (CLR_XS_LAST: atomically onto zero slots; CLR_XS_PASS: plain). The last work-group (or the
// extra pass) sums what was published, adds the variable's initial value and rounds once.
//
// An exact span: every update is deposited into its element's superaccumulator, in local memory
// (CLR_SS_LSHARED, 64-bit local atomics; each work-group then adds its normalized copies to the
// global ones) or global memory (CLR_SS_GATOMIC); the last work-group rounds every element.

// Rk_XTAIL (the plan's ExactPlan::tail, design/exact.md "The tail"): 0, work-item 0 of the
// last work-group (or the extra pass) sums the published limbs into private arrays and rounds
// them there; 1, the limbs are summed into local memory, one limb per work-item, and rounded in
// place by work-item 0, or for f64 results by the whole work-group (CLR_XPROUND, decision 85;
// no private arrays in the kernel), and warp 0 merges the warps'
// expansions in as many shuffle levels as there are warps; 2, also each work-group publishes
// its superaccumulator without normalizing it (the planner's bound: every deposit of the launch
// together within the 2^30 contributions of the superaccumulator the limbs are summed into).
// 3, lazy (decision 74; design/exact.md "The lazy finish"): also each work-group publishes
// its merged expansion (two doubles) into its own slot after the global superaccumulator and
// adds only what its superaccumulator holds (residues, elements outside the window), raising a
// flag word when it adds anything; the last work-group merges the expansions exactly and, when
// the flag is down and its merges left nothing either, rounds the merged expansion directly
// (clr_x_round_e2d): the limbs are never flushed, published or rounded on ordinary data. Only
// for two-double expansions, the global atomic cross step, a local atomic superaccumulator,
// outside raw mode and spans (VX_LAZY); the planner takes it only within the expansion's cap
// for the whole launch (f64 data: 2^30 elements). Elsewhere 3 runs as 2.
#ifndef VXTAIL
#define VXTAIL CLR_CAT3(R, CLR_V, _XTAIL)
#endif
#undef VX_LAZY
#if VXTAIL == 3 && VXE == CLR_XE_E2D && VXS == CLR_XS_ATOMIC && VXST == CLR_XST_LA && !VXRAW && !VSPAN
#define VX_LAZY 1
#else
#define VX_LAZY 0
#endif
#undef VX_SUF
#undef VX_FL
#undef VX_PTR
#undef VX_BLOCKS
// f32 data in doubles, outside the speculative loop: blocks (below).
#if VXF == 32 && VXE == CLR_XE_E2D && !VXSPEC
#define VX_BLOCKS 1
#else
#define VX_BLOCKS 0
#endif
#if VXF == 32
#define VX_SUF _32
#else
#define VX_SUF _64
#endif
#if VXST == CLR_XST_LA
#define VX_FL _la
#define VX_PTR volatile __local long*
#else
#define VX_FL _l
#define VX_PTR __local long*
#endif
// The kit's function `base` in this variable's flavor and format (clr_x_push_f32d_la_32, ...),
// in the private flavor, and in the plain local flavor.
#define VX_F(base) CLR_CAT3(base, VX_FL, VX_SUF)
#define VX_P(base) CLR_CAT3(base, _p, VX_SUF)
#define VX_L(base) CLR_CAT3(base, _l, VX_SUF)

// ---- the accumulator: an expansion ---------------------------------------------------------
#if VX_BLOCKS && !defined(CLR_XB_ONCE)
#define CLR_XB_ONCE
// f32 data with fp64: a block of f32 elements is summed in a plain double d, exactly, and only
// the block's sum goes through the expansion's TwoSums. A block holds at most CLR_XB_N elements
// whose exponent fields lie within CLR_XB_W of the block's base. Why d is exact: a normal f32
// with exponent field e is a multiple of 2^(e-150) below 2^(e-126) in magnitude, so the block's
// partial sums are multiples of 2^(emin-150) below 16 * 2^(emax-126): integers (in that unit)
// below 2^(emax-emin+28) <= 2^(2*12+28) = 2^52, every one a double. (double)v is exact for a
// normal float on every IEEE device (flushing touches subnormals only, which never get here).
// Zeros, subnormals, inf and NaN are deposited as they come. design/exact.md, "Blocks".
#define CLR_XB_W 12
#define CLR_XB_N 16
// Experiment switches (-D through CLREDUCE_EXTRA_OPTIONS; the defaults are the measured best):
// CLR_XB_BLOCKS 0 pushes every f32 element through the expansion's TwoSums instead;
// CLR_X_COLD_NOINLINE 1 keeps the rarely taken paths (deposits, block flushes) out of line.
#ifndef CLR_XB_BLOCKS
#define CLR_XB_BLOCKS 1
#endif
#ifndef CLR_X_COLD_NOINLINE
#define CLR_X_COLD_NOINLINE 0
#endif
#if CLR_X_COLD_NOINLINE
#define CLR_X_COLD static __attribute__((noinline))
#else
#define CLR_X_COLD CLR_X_INLINE
#endif
typedef struct {
    clr_x_e2d e;
    double d;
    int base;
    int cnt;
} clr_xb;
#endif

CLR_X_INLINE VA VAR(clr_identity)(void) {
#if VX_BLOCKS
    VA a;
    a.e = clr_x_e2d_zero();
    a.d = 0.0;
    a.base = 0;
    a.cnt = 0;
    return a;
#elif VXE == CLR_XE_E2D
    return clr_x_e2d_zero();
#else
    return clr_x_e3f_zero();
#endif
}

// The superaccumulator this work-item deposits into: the work-group's, or its own row.
CLR_X_INLINE VX_PTR VAR(clr_xmine)(__local long* ls) {
#if VXST == CLR_XST_ROWS
    return ls + get_local_id(0) * (size_t)VXL;
#else
    return (VX_PTR)ls;
#endif
}

#if VX_BLOCKS
// The slow path of an element: deposited as it is.
CLR_X_COLD void VAR(clr_xslow32)(VX_PTR s, uint b) { VX_F(clr_x_add_f32)(s, b); }

// The block's sum into the expansion (TwoSum cascade, residue deposited), and a new block.
CLR_X_COLD VA VAR(clr_xblock)(VA a, VX_PTR s) {
    if (a.d != 0.0) {
        double t, r;
        a.e.s = clr_x_two_sum_d(a.e.s, a.d, &t);
        if (t != 0.0) {
            a.e.c = clr_x_two_sum_d(a.e.c, t, &r);
            if (r != 0.0) VX_F(clr_x_dep_d)(s, r);
        }
    }
    a.d = 0.0;
    a.cnt = 0;
    return a;
}
#endif

// One element (the body's `sum += v`) into the accumulator.
CLR_X_INLINE VA VAR(clr_xpush)(VA e, VT v, VX_PTR s) {
#if VX_BLOCKS && !CLR_XB_BLOCKS
    e.e = VX_F(clr_x_push_f32d)(e.e, as_uint(v), s);
    return e;
#elif VX_BLOCKS
    const uint b = as_uint(v);
    const int ex = (int)((b >> 23) & 0xffu);
    if (ex == 0 || ex == 255) {
        VAR(clr_xslow32)(s, b);
        return e;
    }
    if (e.cnt == CLR_XB_N || (uint)(ex - e.base + CLR_XB_W) > 2u * CLR_XB_W) {
        e = VAR(clr_xblock)(e, s);
        e.base = ex;
    }
    e.d += (double)v;
    e.cnt += 1;
    return e;
#elif VXF == 32 && VXE == CLR_XE_E2D
    return VX_F(clr_x_push_f32d)(e, as_uint(v), s);
#elif VXF == 32
    return VX_F(clr_x_push_f32f)(e, as_uint(v), s);
#else
    return VX_F(clr_x_push_f64d)(e, v, s);
#endif
}

// Two accumulators into one, exactly (residues deposited into s).
CLR_X_INLINE VA VAR(clr_xmerge)(VA a, VA b, VX_PTR s) {
#if VX_BLOCKS
    a = VAR(clr_xblock)(a, s);
    b = VAR(clr_xblock)(b, s);
    a.e = VX_F(clr_x_merge_e2d)(a.e, b.e, s);
    return a;
#elif VXE == CLR_XE_E2D
    return VX_F(clr_x_merge_e2d)(a, b, s);
#else
    return VX_F(clr_x_merge_e3f)(a, b, s);
#endif
}

CLR_X_INLINE void VAR(clr_xflush)(VA e, VX_PTR s) {
#if VX_BLOCKS
    e = VAR(clr_xblock)(e, s);
    VX_F(clr_x_flush_e2d)(e.e, s);
#elif VXE == CLR_XE_E2D
    VX_F(clr_x_flush_e2d)(e, s);
#else
    VX_F(clr_x_flush_e3f)(e, s);
#endif
}

#if VXSPEC
// ---- the speculative loop (kernels/reduce.cl CLR_SPEC) -------------------------------------
// Each chunk runs the body through clr_body_try: an exact sum's `sum += v` is VAR(clr_xtry),
// every TwoSum with no branch and no deposit, and *bad flags an element outside the window or
// a residue (the chunk then runs again exactly, through clr_xpush). After each step of
// CLR_XBLK unrolled iterations, VAR(clr_xblkend); after each chunk, VAR(clr_xrenorm).
//
// f32 data in doubles (CLR_XSPEC_BLK 1, the default): the block pre-sum. The step's elements
// (CLR_UNROLL x CLR_XBLK of them, every accumulator's) are summed in one plain double of the
// block state VAR(clr_xbs_t), tracking the largest and smallest nonzero exponent field;
// VAR(clr_xblkend) flags a span wider than 29 - lb (2^lb >= the block's elements, so each plain
// addition was exact: design/exact.md, "Try") and runs the double through accumulator 0's
// cascade. One cascade per block instead of one per element. CLR_XSPEC_BLK 0: every element
// through its accumulator's cascade (clr_x_try_f32d). Both are -D switches
// (CLREDUCE_EXTRA_OPTIONS), for A/B runs; f64 and three-float sums have no block.
#ifndef CLR_XLANES
#define CLR_XLANES 0
#endif
// CLR_XRBITS 1 (an A/B switch): the hot f64 try flags a residue by ORing its bits into the
// flag instead of comparing it with 0.0 (session 16, design/exact.md "Several variables").
#ifndef CLR_XRBITS
#define CLR_XRBITS 0
#endif
// Unrolled steps per block: 1 (the block is one step's CLR_UNROLL elements); the lanes form's
// blocks hold one element of each step, so 8 steps.
#ifndef CLR_XVEC
#define CLR_XVEC 0
#endif
#ifndef CLR_XBLK
#if CLR_XLANES
#define CLR_XBLK 8
#elif CLR_XVEC
// The vector form: one block per chunk of 64 steps (each lane sums one element per step; the
// reduce.cl chunk loop then runs one block of up to 64 steps whatever CLR_SPEC_CHUNK says).
// Chunks of 16 and 32 steps were slower on both CPUs here (decision 69).
#define CLR_XBLK 64
#else
#define CLR_XBLK 1
#endif
#endif
#ifndef CLR_XSPEC_BLK
#define CLR_XSPEC_BLK 1
#endif
#undef VX_SBLK
#if VXF == 32 && VXE == CLR_XE_E2D && CLR_XSPEC_BLK
#define VX_SBLK 1
#else
#define VX_SBLK 0
#endif
// Elements per block: a step's (CLR_UNROLL) times CLR_XBLK, or in the lanes form CLR_XBLK.
#if CLR_XLANES || CLR_XVEC
#define CLR_XBLK_N (CLR_XBLK)
#else
#define CLR_XBLK_N (CLR_UNROLL * CLR_XBLK)
#endif
#if CLR_XBLK_N <= 1
#define CLR_XBLK_LB 0u
#elif CLR_XBLK_N <= 2
#define CLR_XBLK_LB 1u
#elif CLR_XBLK_N <= 4
#define CLR_XBLK_LB 2u
#elif CLR_XBLK_N <= 8
#define CLR_XBLK_LB 3u
#elif CLR_XBLK_N <= 16
#define CLR_XBLK_LB 4u
#elif CLR_XBLK_N <= 32
#define CLR_XBLK_LB 5u
#elif CLR_XBLK_N <= 64
#define CLR_XBLK_LB 6u
#else
#error "clreduce: a block holds at most 64 elements (CLR_UNROLL * CLR_XBLK, or CLR_XBLK in the lanes and vector forms)"
#endif
// The hot form (Rk_XSPEC 2, the plan's ExactPlan::hot; design/exact.md "The hot loop"): the
// range checks leave the element and move to the chunk. Each element only updates two 32-bit
// bounds of its exponent field (mx, the largest of its bits shifted left once, sign dropped;
// mn, the smallest of those minus 1, so that zeros, 0 - 1 = 0xffffffff, never count), and
// after the chunk VAR(clr_xchkend) flags a chunk whose bounds leave the window. mn's field is
// the element's or one less (a zero fraction), which only flags more.
// f32 data (with blocks): the block's double takes each element by the hardware conversion
// (exact for a normal float; subnormals, inf and NaN flag the chunk), one expansion per
// work-item (the redo pushes into accumulator 0 as well, so the others stay zero and hold no
// registers), and the block's elements share the chunk's span check: every element of the
// chunk within 29 - lb exponent fields of the largest, 2^lb >= the block's elements.
// f64 data: every element through its accumulator's cascade as before, without the
// per-element window test (the chunk's bounds: fields 53..2012, a subnormal's low word counted
// so that it never passes for a zero).
// The lanes form (Rk_XSPEC 3, HotLoop::Lanes): one block state per accumulator, each block of
// CLR_XBLK steps (one element per step) into its own accumulator: every step does the same
// operations on each accumulator, which a CPU compiler can run as one vector operation.
#undef VX_HOT32
#undef VX_HOT64
#undef VX_LANES
#undef VX_VEC
#if VXSPEC == 3
#define VX_LANES 1
#else
#define VX_LANES 0
#endif
#if VXSPEC == 4 && VXE == CLR_XE_E2D
#define VX_VEC 1
#else
#define VX_VEC 0
#endif
#if VXSPEC >= 2 && VXSPEC <= 3 && VX_SBLK
#define VX_HOT32 1
#else
#define VX_HOT32 0
#endif
#if VXSPEC >= 2 && VXSPEC <= 3 && VXF == 64 && VXE == CLR_XE_E2D
#define VX_HOT64 1
#else
#define VX_HOT64 0
#endif
#if VX_VEC
// The vector form (Rk_XSPEC 4, HotLoop::Vector; design/exact.md "The vector form"), for CPUs:
// every range check and TwoSum of a step runs on CLR_UNROLL lanes at once in OpenCL vector
// types, which a CPU compiler maps to its SIMD instructions without having to prove anything
// (the loop vectorizers here refuse a TwoSum recurrence, the kernel vectorizers the redo). The
// step's elements are staged: each try puts its value into lane n of the stage vector (a
// select: no memory index, no branch on the data) and the CLR_UNROLL-th try of a step runs the step on the whole vector
// (a count that the compiler folds: every step makes CLR_UNROLL tries). Lane u keeps, for the
// chunk, f32 data: the plain double sum of its elements (the block pre-sum, one element per
// step: CLR_XBLK = 64 elements, lb = 6) and its exponent bounds (as VX_HOT32); f64 data: its own
// two-double expansion from zero and its exponent bounds (the 64-bit bits shifted left once:
// the fields 53..2012 of the window, a subnormal's 0), each TwoSum's residue
// ORed into a flag vector. At the chunk's end (VAR(clr_xblkend), once per CLR_XBLK steps) the
// stage is run once more (a body that calls the sum other than once per index leaves values
// there; zeros add nothing), the lanes are checked and merged into accumulator 0 by TwoSums
// that flag any residue, and the state is zeroed. A flagged chunk is redone exactly into
// accumulator 0 (clr_xone), as in the shared hot loop.
#if CLR_UNROLL == 1
#define VXV(t) t
#define VXV_ST(v, p) ((p)[0] = (v))
#define VXV_CVT(t, x) ((t)(x))
#define VXV_AS(t, x) CLR_X_CAT(as_, t)(x)
#define VXV_PUT(st, n, v) (v)
#else
#define VXV(t) CLR_X_CAT(t, CLR_UNROLL)
#define VXV_ST(v, p) CLR_X_CAT(vstore, CLR_UNROLL)((v), 0, (p))
#define VXV_CVT(t, x) CLR_X_CAT(convert_, VXV(t))(x)
#define VXV_AS(t, x) CLR_X_CAT(as_, VXV(t))(x)
// The stage's lane numbers in the integer type of VT's width (select's mask).
#undef VXV_M
#if VXF == 32
#define VXV_M int
#else
#define VXV_M long
#endif
#if CLR_UNROLL == 2
#define VXV_IOTA ((VXV(VXV_M))(0, 1))
#elif CLR_UNROLL == 4
#define VXV_IOTA ((VXV(VXV_M))(0, 1, 2, 3))
#elif CLR_UNROLL == 8
#define VXV_IOTA ((VXV(VXV_M))(0, 1, 2, 3, 4, 5, 6, 7))
#else
#define VXV_IOTA ((VXV(VXV_M))(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif
// Lane n of the stage becomes v: a select on the lane numbers, no memory and no index (with
// the count folded, an insert at a constant lane; a step's inserts then read as one vector of
// consecutive elements).
#define VXV_PUT(st, n, v) select((st), (VXV(VT))(v), VXV_IOTA == (VXV(VXV_M))((VXV_M)(n)))
#endif
// The exponent bounds (mx, mn) are VT's bits shifted left once (the sign dropped), in VT's
// width: the largest, and the smallest minus 1 (a zero's 0 - 1 never counts).
#undef VXV_B
#if VXF == 32
#define VXV_B uint
#else
#define VXV_B ulong
#endif
typedef struct {
    VXV(VT) st;  // the step's staged elements (zeros where none is pending)
    uint n;      // tries since the last step
    VXV(VXV_B) mx, mn;
#if VXF == 32
    VXV(double) d;
#else
    VXV(double) s, c;
    VXV(ulong) r;  // residues' bits, sign dropped: nonzero iff some residue was
#endif
} VAR(clr_xbs_t);
CLR_X_INLINE VAR(clr_xbs_t) VAR(clr_xbs_zero)(void) {
    VAR(clr_xbs_t) b;
    b.st = (VXV(VT))(0);
    b.n = 0u;
    b.mx = (VXV(VXV_B))(0);
    b.mn = ~(VXV(VXV_B))(0);
#if VXF == 32
    b.d = (VXV(double))(0.0);
#else
    b.s = (VXV(double))(0.0);
    b.c = (VXV(double))(0.0);
    b.r = (VXV(ulong))(0UL);
#endif
    return b;
}
// One step on every lane: the stage's elements into the lanes' state, the stage zeroed.
CLR_X_INLINE void VAR(clr_xvstep)(__private VAR(clr_xbs_t)* blk) {
    const VXV(VT) x = blk->st;
#if VXF == 32
    const VXV(uint) s = VXV_AS(uint, x) << 1;
    blk->d += VXV_CVT(double, x);
#else
    const VXV(ulong) s = VXV_AS(ulong, x) << 1;
    const VXV(double) S = blk->s + x;
    VXV(double) bb = S - blk->s;
    const VXV(double) t = (blk->s - (S - bb)) + (x - bb);
    blk->s = S;
    const VXV(double) C = blk->c + t;
    bb = C - blk->c;
    const VXV(double) r = (blk->c - (C - bb)) + (t - bb);
    blk->c = C;
    blk->r |= VXV_AS(ulong, r) << 1;
#endif
    blk->mx = max(blk->mx, s);
    blk->mn = min(blk->mn, s - (VXV_B)1);
    blk->st = (VXV(VT))(0);
    blk->n = 0u;
}
#endif
#if VX_VEC
#elif VX_HOT32 || VX_HOT64
typedef struct {
    double d;
    uint mx;
    uint mn;
} VAR(clr_xbs_t);
CLR_X_INLINE VAR(clr_xbs_t) VAR(clr_xbs_zero)(void) {
    VAR(clr_xbs_t) b;
    b.d = 0.0;
    b.mx = 0u;
    b.mn = 0xffffffffu;
    return b;
}
#elif VX_SBLK
typedef struct {
    double d;
    uint emax;
    uint emin;
} VAR(clr_xbs_t);
CLR_X_INLINE VAR(clr_xbs_t) VAR(clr_xbs_zero)(void) {
    VAR(clr_xbs_t) b;
    b.d = 0.0;
    b.emax = 0u;
    b.emin = 0xffu;
    return b;
}
#else
typedef uint VAR(clr_xbs_t);
CLR_X_INLINE VAR(clr_xbs_t) VAR(clr_xbs_zero)(void) { return 0u; }
#endif

// How many of the work-item's CLR_UNROLL expansions a chunk saves for its redo: with shared
// blocks the try changes only accumulator 0 (fewer registers held through the chunk), else
// every one. clr_xone: the redo pushes into accumulator 0 too (the shared hot f32 loop), so
// the loop changes clr_xlive expansions, and only those are renormalized. clr_xnbs: block
// states, one per accumulator in the lanes form.
enum {
    VAR(clr_xsaves) = (VX_SBLK && !VX_LANES) || VX_VEC ? 1 : CLR_UNROLL,
    VAR(clr_xone) = (VX_HOT32 && !VX_LANES) || VX_VEC,
    VAR(clr_xlive) = (VX_HOT32 && !VX_LANES) || VX_VEC ? 1 : CLR_UNROLL,
    VAR(clr_xnbs) = VX_LANES ? CLR_UNROLL : 1
};

CLR_X_INLINE VA VAR(clr_xtry)(VA e, __private VAR(clr_xbs_t)* blk, VT v, __private uint* bad) {
#if VX_VEC
    blk->st = VXV_PUT(blk->st, blk->n, v);
    blk->n += 1u;
    if (blk->n == CLR_UNROLL) VAR(clr_xvstep)(blk);
    return e;
#elif VX_HOT32
    const uint s = as_uint(v) << 1;
    blk->mx = max(blk->mx, s);
    blk->mn = min(blk->mn, s - 1u);
    blk->d += (double)v;
    return e;
#elif VX_HOT64
    const ulong b = as_ulong(v);
    const uint s = ((uint)(b >> 32) << 1) | (uint)((uint)b != 0u);
    blk->mx = max(blk->mx, s);
    blk->mn = min(blk->mn, s - 1u);
    double t, r;
    e.s = clr_x_two_sum_d(e.s, v, &t);
    e.c = clr_x_two_sum_d(e.c, t, &r);
#if CLR_XRBITS
    // The residue's bits ORed into the flag (an integer op instead of a double compare; a
    // residue of -0.0 flags too, which only redoes a chunk exactly).
    *bad |= (uint)(as_ulong(r) >> 32) | (uint)as_ulong(r);
#else
    *bad |= (uint)(r != 0.0);
#endif
    return e;
#elif VX_SBLK
    blk->d = clr_x_blk_add(blk->d, as_uint(v), &blk->emax, &blk->emin, bad);
    return e;
#elif VXF == 32 && VXE == CLR_XE_E2D
    return clr_x_try_f32d(e, as_uint(v), bad);
#elif VXF == 32
    return clr_x_try_f32f(e, as_uint(v), bad);
#else
    return clr_x_try_f64d(e, v, bad);
#endif
}
// After each step: the block's double through the cascade of accumulator e, a new block.
CLR_X_INLINE VA VAR(clr_xblkend)(VA e, __private VAR(clr_xbs_t)* blk, __private uint* bad) {
#if VX_VEC
    VAR(clr_xvstep)(blk);
    VXV_B a[CLR_UNROLL], z[CLR_UNROLL];
    VXV_ST(blk->mx, a);
    VXV_ST(blk->mn, z);
    VXV_B mx = 0, mn = ~(VXV_B)0;
    for (int u = 0; u < CLR_UNROLL; ++u) {
        mx = max(mx, a[u]);
        mn = min(mn, z[u]);
    }
#if VXF == 32
    // inf or NaN; a subnormal (or the smallest normal); a span wider than 29 - lb.
    *bad |= (uint)(mx >= 0xff000000u) | (uint)(mn < 0x01000000u) |
            (uint)((mx >> 24) > (mn >> 24) + 29u - CLR_XBLK_LB);
    double d[CLR_UNROLL];
    VXV_ST(blk->d, d);
    for (int u = 0; u < CLR_UNROLL; ++u) {
        double t, r;
        e.s = clr_x_two_sum_d(e.s, d[u], &t);
        e.c = clr_x_two_sum_d(e.c, t, &r);
        *bad |= (uint)(r != 0.0);
    }
#else
    // The biased exponent fields: the window 53..2012 (a subnormal's field is 0).
    *bad |= (uint)((mx >> 53) > CLR_X_W64D_HI) | (uint)((mn >> 53) < CLR_X_W64D_LO);
    double s[CLR_UNROLL], c[CLR_UNROLL];
    ulong r[CLR_UNROLL];
    VXV_ST(blk->s, s);
    VXV_ST(blk->c, c);
    VXV_ST(blk->r, r);
    for (int u = 0; u < CLR_UNROLL; ++u) {
        // Lane u's (s, c) into e: s + c + e.s + e.c = e.s' + e.c' + r1 + r2 exactly.
        double t, r1, r2;
        e.s = clr_x_two_sum_d(e.s, s[u], &t);
        const double c2 = clr_x_two_sum_d(e.c, t, &r1);
        e.c = clr_x_two_sum_d(c2, c[u], &r2);
        *bad |= (uint)(r[u] != 0UL) | (uint)(r1 != 0.0) | (uint)(r2 != 0.0);
    }
#endif
    *blk = VAR(clr_xbs_zero)();
#elif VX_HOT32
    double t, r;
    e.s = clr_x_two_sum_d(e.s, blk->d, &t);
    e.c = clr_x_two_sum_d(e.c, t, &r);
    *bad |= (uint)(r != 0.0);
    blk->d = 0.0;
#elif VX_SBLK
    e = clr_x_try_blk_f32d(e, blk->d, blk->emax, blk->emin, CLR_XBLK_LB, bad);
    *blk = VAR(clr_xbs_zero)();
#endif
    return e;
}
// After each chunk (before its flag is read): the hot loop's range checks.
CLR_X_INLINE void VAR(clr_xchkend)(__private VAR(clr_xbs_t)* blk, __private uint* bad) {
#if VX_HOT32
    // inf or NaN; a subnormal (or the smallest normal); a span wider than 29 - lb.
    *bad |= (uint)(blk->mx >= 0xff000000u) | (uint)(blk->mn < 0x01000000u) |
            (uint)((blk->mx >> 24) > (blk->mn >> 24) + 29u - CLR_XBLK_LB);
#elif VX_HOT64
    *bad |= (uint)((blk->mx >> 21) > CLR_X_W64D_HI) | (uint)((blk->mn >> 21) < CLR_X_W64D_LO);
#endif
}
// After each chunk: the same value with a small second component (fewer residues later).
CLR_X_INLINE VA VAR(clr_xrenorm)(VA e) {
#if VXE == CLR_XE_E2D
    return clr_x_renorm_e2d(e);
#else
    return clr_x_renorm_e3f(e);
#endif
}
#endif

// CLR_XDIAG (a -D switch for A/B runs only, through CLREDUCE_EXTRA_OPTIONS: the results are
// wrong, the time says what the skipped parts cost; design/exact.md "Where the fixed tail
// goes"): a mask of parts of a scalar exact sum's tail that are skipped: 1 the work-group's
// merge of expansions, 2 work-item 0's flush into the superaccumulator, 4 the publication (the
// global atomics or the row), 8 the last step (the last work-group's or the extra pass's sum of
// the published limbs and its rounding), 16 the work-item's fold of its accumulators.
#ifndef CLR_XDIAG
#define CLR_XDIAG 0
#endif

// CLR_XFOLD_LIVE 1 (the default; 0 for A/B runs): where the loop changes only accumulator 0
// (clr_xlive 1: the shared hot f32 loop, the vector form) the others are still the identity,
// and the fold keeps accumulator 0 as it is instead of merging zeros into it (the same value:
// TwoSums with 0 leave no residue).
#ifndef CLR_XFOLD_LIVE
#define CLR_XFOLD_LIVE 1
#endif
CLR_X_INLINE VA VAR(clr_fold)(VA a, VA b, __local long* ls) {
#if (CLR_XDIAG & 16) || (CLR_XFOLD_LIVE && VXSPEC && ((VX_HOT32 && !VX_LANES) || VX_VEC))
    return a;
#else
    return VAR(clr_xmerge)(a, b, VAR(clr_xmine)(ls));
#endif
}

// A finite or special value of the element type into a private superaccumulator (the
// variable's initial value), and the rounding of one.
CLR_X_INLINE void VAR(clr_xadd_private)(__private long* p, VT v) {
#if VXF == 32
    VX_P(clr_x_add_f32)(p, as_uint(v));
#else
    VX_P(clr_x_add_f64)(p, as_ulong(v));
#endif
}
CLR_X_INLINE VT VAR(clr_xround)(__private long* p) {
#if VXF == 32
    return as_float(CLR_CAT(clr_x_round32, VX_SUF)(p));
#else
    return as_double(CLR_CAT(clr_x_round64, VX_SUF)(p));
#endif
}

// The same in local memory (work-item 0's superaccumulator of the last work-group), rounded in
// place.
CLR_X_INLINE void VAR(clr_xadd_local)(__local long* p, VT v) {
#if VXF == 32
    VX_L(clr_x_add_f32)(p, as_uint(v));
#else
    VX_L(clr_x_add_f64)(p, as_ulong(v));
#endif
}
CLR_X_INLINE VT VAR(clr_xround_in_local)(__local long* p) {
#if VXF == 32
    return as_float(CLR_CAT(clr_x_round32_in_l, VX_SUF)(p));
#else
    return as_double(CLR_CAT(clr_x_round64_in_l, VX_SUF)(p));
#endif
}

// Element e's finished private superaccumulator p: plus the initial value (VINIT), rounded into
// res[e]; in raw mode (VXRAW) normalized and its limbs written to raw[e * VXL ..] instead.
CLR_X_INLINE void VAR(clr_xput)(__global VT* res, __global ulong* raw, size_t e, __private long* p) {
#if VXRAW
    VX_P(clr_x_normalize)(p);
    __global long* out = (__global long*)raw + e * VXL;
    for (uint j = 0; j < VXL; ++j) out[j] = p[j];
#else
#if VINIT
    VAR(clr_xadd_private)(p, res[e]);
#endif
    res[e] = VAR(clr_xround)(p);
#endif
}

// The sum of `rows` published superaccumulators in global memory (each slot read once and left
// at 0), plus the variable's element e's initial value (VINIT), rounded into res[e]. One
// work-item per element; `atomic_take`: the rows were published with atomics. Raw mode
// (VXRAW, a multi-device share): the sum is normalized and its limbs written to raw[e * VXL ..]
// instead (no initial value, no rounding): the host merges the shares' limbs exactly
// (clreduce::exact::Superacc) and rounds once.
CLR_X_INLINE void VAR(clr_xround_into)(__global VT* res, __global ulong* raw, size_t e, __global long* part, uint rows, int atomic_take) {
    long p[VXL];
    for (uint j = 0; j < VXL; ++j) p[j] = 0;
    for (uint r = 0; r < rows; ++r) {
        // A scalar's rows are one per work-group (e = 0); a span has one row (r = 0) per element.
        __global long* row = part + ((size_t)r + e) * VXL;
        for (uint j = 0; j < VXL; ++j) {
            if (atomic_take) {
                p[j] += atom_xchg((volatile __global long*)&row[j], 0L);
            } else {
                p[j] += row[j];
                row[j] = 0;
            }
        }
    }
    VAR(clr_xput)(res, raw, e, p);
}
