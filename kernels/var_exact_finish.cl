// clreduce: the second half of one exact-sum variable's functions (kernels/var_exact.cl, which
// codegen/mod.rs puts right before this file, so the two read as one): a scalar exact sum's
// work-group and cross-group steps and its tail (private, local, lean or lazy: Rk_XTAIL, the
// defines VXTAIL and VX_LAZY set at the top of var_exact.cl), and an exact span's.

#if !VSPAN
// ---- a scalar exact sum ------------------------------------------------------------------
// CLR_XMTRY (decisions 85 and 88): NVIDIA's warp merge of two-double expansions tried without
// deposits first (clr_xwarp_try below), 1 by default; 0 (through CLREDUCE_EXTRA_OPTIONS) merges
// with deposits at once (clr_xwarp).
#ifndef CLR_XMTRY
#define CLR_XMTRY 1
#endif
CLR_X_INLINE void VAR(clr_pre)(__local VA* lm, __local long* ls, __global VT* res, __global long* part) {
    for (uint j = (uint)get_local_id(0); j < VXLS; j += CLR_WG) ls[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
}

#if VGS == CLR_GS_SG && CLR_SG_PTX
// NVIDIA: a warp of 32 merges its expansions with shfl.sync.down; lane 0 holds the warp's.
// Only the lanes whose partner is in range merge (and deposit residues): the others would merge
// a copy of their own value.
// `first`: the first offset (16, or for warp 0's merge of the warps' expansions with VXTAIL >= 1
// half the warps rounded up to a power of two: only as many levels as there are warps).
CLR_X_INLINE VA VAR(clr_xwarp)(VA v, VX_PTR s, uint first) {
    const uint lane = (uint)get_local_id(0) & 31u;
    for (uint off = first; off > 0; off >>= 1) {
        union { VA v; uint u[sizeof(VA) / 4]; } a, b;
        a.v = v;
        for (uint w = 0; w < sizeof(VA) / 4; ++w)
            asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(b.u[w]) : "r"(a.u[w]), "r"(off));
        if (lane < off) v = VAR(clr_xmerge)(v, b.v, s);
    }
    return v;
}
#endif

#undef VX_XWARP
#if VGS == CLR_GS_SG && CLR_SG_PTX && CLR_XMTRY && VXE == CLR_XE_E2D && !VX_BLOCKS
// CLR_XMTRY 1 (the default since decision 88; 0 through CLREDUCE_EXTRA_OPTIONS): the warp's merge
// first without deposits (the TwoSums of clr_x_merge_e2d, every residue ORed into a flag), then
// a warp vote; a warp where some merge left a residue merges again from the same expansions
// with clr_xwarp (exact, residues deposited). Without a residue the try's sums are the exact
// merges, so the result is clr_xwarp's.
CLR_X_INLINE VA VAR(clr_xwarp_try)(VA v, VX_PTR s, uint first) {
    const uint lane = (uint)get_local_id(0) & 31u;
    VA m = v;
    uint bad = 0u;
    for (uint off = first; off > 0; off >>= 1) {
        union { VA v; uint u[sizeof(VA) / 4]; } a, b;
        a.v = m;
        for (uint w = 0; w < sizeof(VA) / 4; ++w)
            asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(b.u[w]) : "r"(a.u[w]), "r"(off));
        if (lane < off) {
            double t, u, r;
            m.s = clr_x_two_sum_d(m.s, b.v.s, &t);
            m.c = clr_x_two_sum_d(m.c, b.v.c, &u);
            m.c = clr_x_two_sum_d(m.c, t, &r);
            bad |= (uint)(u != 0.0) | (uint)(r != 0.0);
        }
    }
    uint any;
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.any.pred p, p, 0xffffffff; selp.u32 %0, 1, 0, p; }" : "=r"(any) : "r"(bad));
    return any ? VAR(clr_xwarp)(v, s, first) : m;
}
#define VX_XWARP(v, s, first) VAR(clr_xwarp_try)(v, s, first)
#elif VGS == CLR_GS_SG && CLR_SG_PTX
#define VX_XWARP(v, s, first) VAR(clr_xwarp)(v, s, first)
#endif

// The work-group's expansions merged into work-item 0's (the others return partial merges).
CLR_X_INLINE VA VAR(clr_xgroup)(VA v, __local VA* lm, VX_PTR s) {
    const uint lid = (uint)get_local_id(0);
#if VGS == CLR_GS_TREE
    VA acc = v;
    lm[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
#if CLR_WG != CLR_WG_POW2
    if (lid < CLR_WG - CLR_WG_POW2) {
        acc = VAR(clr_xmerge)(acc, lm[lid + CLR_WG_POW2], s);
        lm[lid] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (uint st = CLR_WG_POW2 / 2; st > 0; st >>= 1) {
        if (lid < st) {
            acc = VAR(clr_xmerge)(acc, lm[lid + st], s);
            lm[lid] = acc;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return acc;
#elif VGS == CLR_GS_SG && CLR_SG_PTX
    const uint lane = lid & 31u, warp = lid >> 5;
    VA w = VX_XWARP(v, s, 16u);
    if (lane == 0) lm[warp] = w;
    barrier(CLK_LOCAL_MEM_FENCE);
    VA t = VAR(clr_identity)();
    if (warp == 0) {
        if (lane < CLR_WG / 32) t = lm[lane];
#if VXTAIL == 0 || CLR_WG > 512
        t = VX_XWARP(t, s, 16u);
#elif CLR_WG > 256
        t = VX_XWARP(t, s, 8u);
#elif CLR_WG > 128
        t = VX_XWARP(t, s, 4u);
#elif CLR_WG > 64
        t = VX_XWARP(t, s, 2u);
#elif CLR_WG > 32
        t = VX_XWARP(t, s, 1u);
#endif
    }
    return t;
#else
#error "clreduce: an exact sum's work-group step is tree or PTX sg-reduce"
#endif
}

// ---- the rounding by the whole work-group (CLR_XPROUND, decision 85) ------------------------
// The serial rounding (clr_x_round_in_l_F, kernels/exact.cl) walks the D limbs twice in local
// memory (carry pass, borrow pass) and again for the top digit and the sticky bit: one
// work-item, about 3 local-memory round trips per limb (f64: D = 68). Here every work-item takes
// the limbs j = lid, lid + CLR_WG, ... and the walk becomes a few steps separated by barriers:
//  1. w_j = lo32(a_j) + (a_{j-1} >> 32) (the top limb keeps its high part): w_j in
//     [-2^30, 2^32 + 2^30) for limbs within +-2^62 (the carry-save bound).
//  2. x_j = lo32(w_j) + (w_{j-1} >> 32): the carry is -1, 0 or 1, x_j in [-1, 2^32].
//  3. The carries left: c_j into digit j, c_0 = 0, c_{j+1} = floor((x_j + c_j) / 2^32), again
//     -1, 0 or 1. Only a digit x = -1 or 2^32 starts one (the others pass one on at most: 0 a
//     -1, 2^32 - 1 a +1): where no digit does (a vote), every c_j is 0. Otherwise a scan of
//     the digits' carry maps (c -> floor((x + c) / 2^32) on {-1, 0, 1}, three bytes: composable)
//     in ceil(log2(D - 1)) Hillis-Steele levels gives every c_j.
//  4. The digits m_j = lo32(x_j + c_j), the top T = x_{D-1} + c_{D-1} (signed): the value is
//     T * 2^(32 (D-1)) + sum m_j 2^(32 j), the same digits as the serial carry pass.
//  5. A negative value's magnitude: k the lowest nonzero digit (a local atomic min), m_j for
//     j < k stay 0, m_k becomes 2^32 - m_k, the digits above 2^32 - 1 - m_j, and T becomes
//     -T - 1 (-T where no digit is nonzero): the serial borrow pass's digits.
//  6. The top nonzero digit t (a local atomic max); work-item 0 rounds from digits t, t - 1,
//     t - 2 and the sticky bit (k below the round bit's digit) exactly as the serial code does.
// The counters (specials) are read first by every work-item. Every work-item must call it (it
// has barriers), after a barrier that made ls's limbs visible; work-item 0 gets the bits.
#ifndef CLR_XPR_ONCE
#define CLR_XPR_ONCE
// x's carry map: byte i (i = 0, 1, 2 for c = -1, 0, 1) is floor((x + c) / 2^32) + 1.
CLR_X_INLINE uint clr_xpr_map(long x) {
    return (uint)(((x - 1) >> 32) + 1) | ((uint)((x >> 32) + 1) << 8) |
           ((uint)(((x + 1) >> 32) + 1) << 16);
}
// f first, then g.
CLR_X_INLINE uint clr_xpr_then(uint f, uint g) {
    return ((g >> (8u * (f & 0xffu))) & 0xffu) | (((g >> (8u * ((f >> 8) & 0xffu))) & 0xffu) << 8) |
           (((g >> (8u * ((f >> 16) & 0xffu))) & 0xffu) << 16);
}
#endif

#if !VXRAW
// The digits D, and per work-item.
#if VXF == 32
#define VXPR_D CLR_X32_D
#define VXPR_B CLR_X32_B
#else
#define VXPR_D CLR_X64_D
#define VXPR_B CLR_X64_B
#endif
#define VXPR_N ((VXPR_D + CLR_WG - 1) / CLR_WG)
CLR_X_INLINE ulong VAR(clr_xround_par)(__local long* ls, int P, int emin, int emax, ulong nan,
                                       ulong inf, ulong sgn) {
    const uint lid = (uint)get_local_id(0);
    const long M = 0xffffffffL;
    const long cn = ls[VXPR_D], cp = ls[VXPR_D + 1], cm = ls[VXPR_D + 2];
    long x[VXPR_N];
    // 1: w (ls[VXPR_D] becomes the vote, ls[VXPR_D + 1] the two indices k and t).
    for (uint i = 0; i < VXPR_N; ++i) {
        const uint j = lid + i * CLR_WG;
        if (j < VXPR_D) {
            const long a = ls[j], b = j ? ls[j - 1] : 0;
            x[i] = (j < VXPR_D - 1 ? (a & M) : a) + (b >> 32);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __local int* kt = (__local int*)(ls + VXPR_D + 1);
    for (uint i = 0; i < VXPR_N; ++i) {
        const uint j = lid + i * CLR_WG;
        if (j < VXPR_D) ls[j] = x[i];
    }
    if (lid == 0) {
        ls[VXPR_D] = 0;
        kt[0] = 0x7fffffff;
        kt[1] = -1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // 2: x, and the vote for a carry left.
    __local int* vote = (__local int*)(ls + VXPR_D);
    for (uint i = 0; i < VXPR_N; ++i) {
        const uint j = lid + i * CLR_WG;
        if (j < VXPR_D) {
            const long w = x[i], b = j ? ls[j - 1] : 0;
            x[i] = (j < VXPR_D - 1 ? (w & M) : w) + (b >> 32);
            if (j < VXPR_D - 1 && (x[i] < 0 || x[i] > M)) atomic_or(vote, 1);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (cn > 0 || (cp > 0 && cm > 0)) return nan;
    if (cp > 0) return inf;
    if (cm > 0) return sgn | inf;
    long c[VXPR_N];
    for (uint i = 0; i < VXPR_N; ++i) c[i] = 0;
    if (*vote != 0)
    {
        // 3: the scan of the carry maps of digits 0 .. D-2 in ls (as uints in the longs).
        uint f[VXPR_N];
        for (uint i = 0; i < VXPR_N; ++i) {
            const uint j = lid + i * CLR_WG;
            f[i] = j < VXPR_D - 1 ? clr_xpr_map(x[i]) : 0u;
            if (j < VXPR_D - 1) ls[j] = f[i];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint off = 1; off < VXPR_D - 1; off <<= 1) {
            for (uint i = 0; i < VXPR_N; ++i) {
                const uint j = lid + i * CLR_WG;
                if (j < VXPR_D - 1 && j >= off) f[i] = clr_xpr_then((uint)ls[j - off], f[i]);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint i = 0; i < VXPR_N; ++i) {
                const uint j = lid + i * CLR_WG;
                if (j < VXPR_D - 1) ls[j] = f[i];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        // c_j = (the maps of digits 0 .. j-1)(0).
        for (uint i = 0; i < VXPR_N; ++i) {
            const uint j = lid + i * CLR_WG;
            if (j >= 1 && j < VXPR_D) c[i] = (long)(((uint)ls[j - 1] >> 8) & 0xffu) - 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // 4: the digits and the top; k, the lowest nonzero digit below the top.
    for (uint i = 0; i < VXPR_N; ++i) {
        const uint j = lid + i * CLR_WG;
        if (j < VXPR_D - 1) {
            x[i] = (x[i] + c[i]) & M;
            ls[j] = x[i];
            if (x[i] != 0) atomic_min(kt, (int)j);
        } else if (j == VXPR_D - 1) {
            x[i] += c[i];
            ls[VXPR_D + 2] = x[i];  // the top for every work-item (digit D-1 changes in 5)
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int neg = ls[VXPR_D + 2] < 0;
    const int k = kt[0];
    // 5: the magnitude; t, the top nonzero digit.
    for (uint i = 0; i < VXPR_N; ++i) {
        const uint j = lid + i * CLR_WG;
        if (j < VXPR_D - 1) {
            if (neg && (int)j >= k) {
                x[i] = ((int)j == k ? 0x100000000L : M) - x[i];
                ls[j] = x[i];
            }
            if (x[i] != 0) atomic_max(kt + 1, (int)j);
        } else if (j == VXPR_D - 1) {
            const ulong tm = neg ? (0UL - (ulong)x[i]) - (ulong)(k < VXPR_D - 1) : (ulong)x[i];
            ls[j] = (long)(tm & 0xffffffffUL);
            ls[j + 1] = (long)(tm >> 32);
            if (tm >> 32) {
                atomic_max(kt + 1, (int)j + 1);
            } else if (tm) {
                atomic_max(kt + 1, (int)j);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid != 0) return 0;
    // 6: work-item 0 rounds (kernels/exact.cl CLR_X_ROUND_STEPS from its search for the top).
    const int t = kt[1];
    ls[VXPR_D + 1] = 0;
    ls[VXPR_D + 2] = 0;
    if (t < 0) return 0;  // an exact zero is +0
    __local ulong* m = (__local ulong*)ls;
    int p = 32 * t + 63 - (int)clz(m[t]);
    int s = max(p - (P - 1), emin - P + 1 - VXPR_B);
    ulong mant;
    if (s <= 0) {
        mant = CLR_CAT(clr_x_bits_l, VX_SUF)(m, 0, p + 1) << (-s);
    } else {
        mant = CLR_CAT(clr_x_bits_l, VX_SUF)(m, s, p - s + 1);
        const ulong rbit = CLR_CAT(clr_x_bits_l, VX_SUF)(m, s - 1, 1);
        const int jb = (s - 1) >> 5, rb = (s - 1) & 31;
        int sticky = rb ? ((m[jb] & ((1UL << rb) - 1UL)) != 0) : 0;
        // Digits below jb: k, or (k is only below the top digit) digit D-1 where jb is D.
        sticky |= k < jb;
        if (jb > VXPR_D - 1) sticky |= m[VXPR_D - 1] != 0;
        if (rbit && (sticky || (mant & 1UL))) {
            ++mant;
            if (mant == (1UL << P)) {
                mant >>= 1;
                ++s;
            }
        }
    }
    const ulong sign = neg ? sgn : 0UL;
    if (mant >= (1UL << (P - 1)) && VXPR_B + s + P - 1 > emax) return sign | inf;
    return sign | (((ulong)(VXPR_B + s - (emin - P + 1)) << (P - 1)) + mant);
}
#undef VXPR_N
#undef VXPR_D
#undef VXPR_B
#endif

// A scalar's clr_xround_into for the whole work-group (VXTAIL >= 1): work-item j sums limb j of
// the `rows` published superaccumulators into ls (each slot read once and left at 0), then
// work-item 0 adds the initial value and rounds ls in place into res[0] (raw mode: normalizes it
// and writes the limbs); with VX_PR (CLR_XPROUND's formats) every work-item rounds
// (clr_xround_par) and work-item 0 stores the result. No private arrays; the limbs are read in parallel, or by work-item 0
// alone where `serial` (the last work-group under CLR_SERIAL_FINISH: PoCL 3.x lost results of
// a barrier in that region, src/caps/mod.rs Workarounds, and did here too: an exact f32 sum
// beside an exact f64 sum came back as its initial value).
#ifndef CLR_XTAIL_NOINLINE
#define CLR_XTAIL_NOINLINE 0
#endif
// CLR_XPROUND (an A/B switch through CLREDUCE_EXTRA_OPTIONS), a mask of the result formats
// whose work-group form rounds with every work-item (clr_xround_par above): 1 f32, 2 f64; the
// others round by work-item 0 alone (clr_x_round_in_l_F). Never under CLR_SERIAL_FINISH (PoCL
// 3.x lost the result of such a region's barriers in the extra pass too: an exact f32 sum
// beside an exact f64 sum came back as its initial value) nor in raw mode (no rounding).
#ifndef CLR_XPROUND
#define CLR_XPROUND 2
#endif
#undef VX_PR
#if ((VXF == 32 && (CLR_XPROUND & 1)) || (VXF == 64 && (CLR_XPROUND & 2))) && !VXRAW && \
    !VSPAN && !CLR_SERIAL_FINISH
#define VX_PR 1
#else
#define VX_PR 0
#endif
// CLR_XTAIL_NOINLINE 1 (a -D switch for A/B runs): the last step out of line, so that its code
// cannot change how the compiler treats the loop.
#if CLR_XTAIL_NOINLINE
static __attribute__((noinline)) void VAR(clr_xround_group)(
#else
CLR_X_INLINE void VAR(clr_xround_group)(
#endif
__global VT* res, __global ulong* raw, __global long* part, uint rows, int atomic_take, __local long* ls, int serial, int with_init) {
    const uint lid = (uint)get_local_id(0);
    for (uint j = serial ? (lid == 0 ? 0u : VXL) : lid; j < VXL; j += serial ? 1u : CLR_WG) {
        long t = 0;
        for (uint r = 0; r < rows; ++r) {
            __global long* slot = part + (size_t)r * VXL + j;
            if (atomic_take) {
                t += atom_xchg((volatile __global long*)slot, 0L);
            } else {
                t += *slot;
                *slot = 0;
            }
        }
        ls[j] = t;
    }
    if (!serial) barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
#if VXRAW
        VX_L(clr_x_normalize)(ls);
        __global long* out = (__global long*)raw;
        for (uint j = 0; j < VXL; ++j) out[j] = ls[j];
#else
#if VINIT
        if (with_init) VAR(clr_xadd_local)(ls, res[0]);
#endif
#if VX_PR
        if (serial)
#endif
            res[0] = VAR(clr_xround_in_local)(ls);
#endif
    }
#if VX_PR
    if (serial) return;
    barrier(CLK_LOCAL_MEM_FENCE);
#if VXF == 32
    const uint bits = (uint)VAR(clr_xround_par)(ls, 24, -126, 127, 0x7fc00000UL, 0x7f800000UL,
                                                0x80000000UL);
    if (lid == 0) res[0] = as_float(bits);
#else
    const ulong bits = VAR(clr_xround_par)(ls, 53, -1022, 1023, 0x7ff8000000000000UL,
                                           0x7ff0000000000000UL, 0x8000000000000000UL);
    if (lid == 0) res[0] = as_double(bits);
#endif
#endif
}

#if VX_LAZY
// ---- the lazy finish (VXTAIL 3) ----------------------------------------------------------
// part: the global superaccumulator (VXL limbs), the flag word part[VXL] (nonzero once any
// work-group added to the limbs; the last work-group takes it back to 0), then two longs per
// work-group: the bits of its merged expansion's s and c (the last work-group leaves them at 0).
// src/api/run.rs partial_bytes sizes it.
#define VX_LAZY_FLAG(part) ((volatile __global long*)(part) + VXL)
CLR_X_INLINE void VAR(clr_xlazy_put)(__global long* part, size_t grp, clr_x_e2d e) {
    __global long* x = part + VXL + 1 + 2 * grp;
    x[0] = as_long(e.s);
    x[1] = as_long(e.c);
}
// Work-group grp's expansion, its slot left at 0 (the scratch buffer's slots are all 0 between
// launches: a later launch may use it for rows).
CLR_X_INLINE clr_x_e2d VAR(clr_xlazy_take)(__global long* part, size_t grp) {
    // Volatile: another work-group's plain stores, published by its ticket (release), read after
    // this one's (acquire); no cache line of them can be this compute unit's from before.
    volatile __global long* x = (volatile __global long*)part + VXL + 1 + 2 * grp;
    clr_x_e2d e;
    e.s = as_double(x[0]);
    e.c = as_double(x[1]);
    x[0] = 0;
    x[1] = 0;
    return e;
}
// The work-group's superaccumulator ls (after a barrier) onto the global one: each nonzero limb
// added with a 64-bit atomic, which also raises the flag, and left at 0 (the last work-group
// deposits into ls again). Work-item 0 alone where `serial`.
CLR_X_INLINE void VAR(clr_xlazy_pub)(__local long* ls, __global long* part, int serial) {
    const uint lid = (uint)get_local_id(0);
    for (uint j = serial ? (lid == 0 ? 0u : VXL) : lid; j < VXL; j += serial ? 1u : CLR_WG) {
        const long t = ls[j];
        if (t != 0) {
            atom_add((volatile __global long*)&part[j], t);
            atom_xchg(VX_LAZY_FLAG(part), 1L);
            ls[j] = 0;
        }
    }
}
// The last work-group (or work-item 0 alone where `serial`: PoCL 3.x, CLR_SERIAL_FINISH): the
// `count` published expansions and the initial value merged exactly into work-item 0's
// expansion (residues into ls, then published as every work-group's); with the flag down the
// limbs hold nothing, and the merged expansion, the exact sum, is rounded directly; otherwise it
// is flushed into the global superaccumulator, which is then summed and rounded as under Lean.
CLR_X_INLINE void VAR(clr_xlazy_last)(__global VT* res, __global long* part, uint count, __local VA* lm, __local long* ls, int serial) {
    const uint lid = (uint)get_local_id(0);
    VX_PTR s = (VX_PTR)ls;
    clr_x_e2d e = clr_x_e2d_zero();
    for (uint g = serial ? (lid == 0 ? 0u : count) : lid; g < count; g += serial ? 1u : CLR_WG)
        e = VX_F(clr_x_merge_e2d)(e, VAR(clr_xlazy_take)(part, g), s);
#if VINIT
    if (lid == 0) {
#if VXF == 32
        e = VX_F(clr_x_push_f32d)(e, as_uint(res[0]), s);
#else
        e = VX_F(clr_x_push_f64d)(e, res[0], s);
#endif
    }
#endif
    if (!serial) {
#if VX_BLOCKS
        VA a = VAR(clr_identity)();
        a.e = e;
        e = VAR(clr_xgroup)(a, lm, s).e;
#else
        e = VAR(clr_xgroup)(e, lm, s);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    VAR(clr_xlazy_pub)(ls, part, serial);
    if (!serial) barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    long touched = 0;
    if (lid == 0) {
        touched = atom_xchg(VX_LAZY_FLAG(part), 0L);
        if (touched == 0) {
#if VXF == 32
            res[0] = as_float((uint)CLR_CAT(clr_x_round_e2d, VX_SUF)(e));
#else
            res[0] = as_double(CLR_CAT(clr_x_round_e2d, VX_SUF)(e));
#endif
        } else {
            CLR_CAT3(clr_x_flush_e2d, _ga, VX_SUF)(e, (volatile __global long*)part);
        }
    }
    if (serial) {
        if (lid == 0 && touched != 0) VAR(clr_xround_group)(res, 0, part, 1, 1, ls, 1, 0);
        return;
    }
    // Work-item 0's answer to every work-item (ls is all zero here), then the limbs' way.
    if (lid == 0) ls[0] = touched;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    touched = ls[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (touched != 0) VAR(clr_xround_group)(res, 0, part, 1, 1, ls, 0, 0);
}
#endif

// After the work-items' loop: merge, flush, normalize and publish the work-group's
// superaccumulator.
CLR_X_INLINE void VAR(clr_group_cross)(VA acc, __local VA* lm, __local long* ls, __global VT* res, __global long* part) {
    const uint lid = (uint)get_local_id(0);
    VX_PTR s = VAR(clr_xmine)(ls);
#if CLR_XDIAG & 1
    VA g = acc;
#else
    VA g = VAR(clr_xgroup)(acc, lm, s);
#endif
#if VX_LAZY
    // The merged expansion into this work-group's slot (f32 data outside the speculative loop:
    // its block first), then only the superaccumulator's nonzero limbs.
    if (lid == 0) {
#if VX_BLOCKS
        VAR(clr_xlazy_put)(part, get_group_id(0), VAR(clr_xblock)(g, s).e);
#else
        VAR(clr_xlazy_put)(part, get_group_id(0), g);
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    VAR(clr_xlazy_pub)(ls, part, 0);
#else
#if !(CLR_XDIAG & 2)
    if (lid == 0) VAR(clr_xflush)(g, s);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#if VXST == CLR_XST_ROWS
    // The rows, limb by limb, into row 0.
    for (uint j = lid; j < VXL; j += CLR_WG) {
        long t = ls[j];
        for (uint r = 1; r < CLR_WG; ++r) t += ls[r * VXL + j];
        ls[j] = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if VXTAIL < 2
    if (lid == 0) VX_L(clr_x_normalize)(ls);
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const size_t row = (size_t)get_group_id(0) * VXL;
    for (uint j = lid; j < ((CLR_XDIAG & 4) ? 0u : VXL); j += CLR_WG) {
        const long t = ls[j];
#if VXS == CLR_XS_ATOMIC
        if (t != 0) atom_add((volatile __global long*)&part[j], t);
#elif VXS == CLR_XS_LAST
        if (t != 0) atom_add((volatile __global long*)&part[row + j], t);
#else
        part[row + j] = t;
#endif
    }
#endif
#if VXS != CLR_XS_PASS
    // Every publishing work-item's atomics before work-item 0 takes the ticket (reduce.cl).
#if CLR_C11
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
#else
    barrier(CLK_GLOBAL_MEM_FENCE);
#endif
#endif
}

CLR_X_INLINE void VAR(clr_last)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {
#if CLR_XDIAG & 8
#elif VX_LAZY
    VAR(clr_xlazy_last)(res, part, count, lm, ls, CLR_SERIAL_FINISH);
#elif VXS == CLR_XS_ATOMIC && VXTAIL
    VAR(clr_xround_group)(res, aux, part, 1, 1, ls, CLR_SERIAL_FINISH, 1);
#elif VXS == CLR_XS_LAST && VXTAIL
    VAR(clr_xround_group)(res, aux, part, count, 1, ls, CLR_SERIAL_FINISH, 1);
#elif VXS == CLR_XS_ATOMIC
    if (get_local_id(0) == 0) VAR(clr_xround_into)(res, aux, 0, part, 1, 1);
#elif VXS == CLR_XS_LAST
    if (get_local_id(0) == 0) VAR(clr_xround_into)(res, aux, 0, part, count, 1);
#endif
}

CLR_X_INLINE void VAR(clr_pass)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {
#if CLR_XDIAG & 8
#elif VXS == CLR_XS_PASS && VXTAIL
    VAR(clr_xround_group)(res, aux, part, count, 0, ls, 0, 1);
#elif VXS == CLR_XS_PASS
    if (get_local_id(0) == 0) VAR(clr_xround_into)(res, aux, 0, part, count, 0);
#endif
}

// Only a global-digits span has a span pass (kernels/reduce.cl clr_finish_spans).
CLR_X_INLINE void VAR(clr_spass)(__global VT* res, __global ulong* aux, __global long* part) {}

#else
// ---- an exact span: one superaccumulator per element --------------------------------------
#if VSSTORE == CLR_SS_LSHARED
CLR_X_INLINE void VAR(clr_supd)(__local long* p, size_t e, VT x) {
#if VXF == 32
    CLR_CAT3(clr_x_add_f32, _la, VX_SUF)((volatile __local long*)(p + e * VXL), as_uint(x));
#else
    CLR_CAT3(clr_x_add_f64, _la, VX_SUF)((volatile __local long*)(p + e * VXL), as_ulong(x));
#endif
}
#elif VSSTORE == CLR_SS_GDIGITS
// global-digits (f32 only, decision 59): narrow-digit superaccumulators in global memory, digit
// j of element e at part[j * VSPAN + e] (digit-major: the elements' same digit share cache
// lines, and the rounding pass reads them coalesced). Digit j < 32 sums the significands m of the
// values whose offset o = (biased exponent - 1, or 0 for subnormals and zeros) has o / 8 == j, as
// m << (o % 8): a value is m * 2^(o - 149), so digit j weighs 2^(8 j - 149). A deposit is below
// 2^31 in magnitude and a digit a signed 64-bit carry-save limb: 2^32 deposits to one element
// stay exact (the planner caps the work-items at 2^30). Digits 32, 33, 34 count NaN, +inf, -inf.
// One 64-bit atomic add per update (none for a zero). On GPUs VSCOPIES copies of all this
// (work-group g deposits into copy g mod VSCOPIES: fewer collisions on one address), summed by
// the rounding pass.
#define CLR_XDG_L 35
CLR_X_INLINE void VAR(clr_supd)(__global long* p, size_t e, VT x) {
    p += (size_t)(get_group_id(0) % VSCOPIES) * (CLR_XDG_L * (size_t)VSPAN);
    const uint b = as_uint(x);
    const uint ex = (b >> 23) & 0xffu, f = b & 0x7fffffu;
    if (ex == 0xffu) {
        atom_add((volatile __global long*)&p[(size_t)(32u + (f ? 0u : ((b >> 31) ? 2u : 1u))) * VSPAN + e], 1L);
        return;
    }
    const uint o = ex ? ex - 1u : 0u;
    const long m = (long)((ex ? (f | 0x800000u) : f) << (o & 7u));
    if (m != 0) atom_add((volatile __global long*)&p[(size_t)(o >> 3) * VSPAN + e], (b >> 31) ? -m : m);
}
#elif VXS == CLR_XS_PASS
// Superaccumulators in global memory rounded by the span pass (decision 79) are limb-major
// (decision 82): limb j of element e at p[j * VSPAN + e]. Updates of similar magnitude then hit
// the same two or three limb planes, which stay in the L2 cache where element-major rows of
// 8 L bytes each spread a large span's atomics over all of its memory, and the span pass reads
// every plane coalesced. The kit's deposits (kernels/exact.cl CLR_X_DEPOSITS) instantiated for
// this variable's format with a strided atomic add.
#undef CLR_X_N
#undef CLR_X_D
#undef CLR_X_B
#undef CLR_X_L
#define CLR_X_N(name) VAR(name)
#if VXF == 32
#define CLR_X_D CLR_X32_D
#define CLR_X_B CLR_X32_B
#define CLR_X_L CLR_X32_L
#else
#define CLR_X_D CLR_X64_D
#define CLR_X_B CLR_X64_B
#define CLR_X_L CLR_X64_L
#endif
#define VX_ADD_LM(p, j, v) atom_add((p) + (size_t)(j) * VSPAN, (v))
CLR_X_DEPOSITS(lm, volatile __global long*, VX_ADD_LM)
#undef VX_ADD_LM
CLR_X_INLINE void VAR(clr_supd)(__global long* p, size_t e, VT x) {
#if VXF == 32
    VAR(clr_x_add_f32_lm)((volatile __global long*)(p + e), as_uint(x));
#else
    VAR(clr_x_add_f64_lm)((volatile __global long*)(p + e), as_ulong(x));
#endif
}
#else
CLR_X_INLINE void VAR(clr_supd)(__global long* p, size_t e, VT x) {
#if VXF == 32
    CLR_CAT3(clr_x_add_f32, _ga, VX_SUF)((volatile __global long*)(p + e * VXL), as_uint(x));
#else
    CLR_CAT3(clr_x_add_f64, _ga, VX_SUF)((volatile __global long*)(p + e * VXL), as_ulong(x));
#endif
}
#endif

CLR_X_INLINE void VAR(clr_pre)(__local VA* lm, __local long* ls, __global VT* res, __global long* part) {
#if VSSTORE == CLR_SS_LSHARED
    for (uint j = (uint)get_local_id(0); j < VXLS; j += CLR_WG) ls[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
}

// After the loop: each element's local superaccumulator, normalized, onto its global one.
CLR_X_INLINE void VAR(clr_group_cross)(VA acc, __local VA* lm, __local long* ls, __global VT* res, __global long* part) {
#if VSSTORE == CLR_SS_LSHARED
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint e = (uint)get_local_id(0); e < VSPAN; e += CLR_WG) {
        __local long* s = ls + (size_t)e * VXL;
        VX_L(clr_x_normalize)(s);
        for (uint j = 0; j < VXL; ++j)
            if (s[j] != 0) atom_add((volatile __global long*)&part[(size_t)e * VXL + j], s[j]);
    }
#endif
    // Every work-item's deposits before work-item 0 takes the ticket (reduce.cl).
#if CLR_C11
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
#else
    barrier(CLK_GLOBAL_MEM_FENCE);
#endif
}

#if VSSTORE == CLR_SS_GDIGITS
CLR_X_INLINE void VAR(clr_last)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {}

CLR_X_INLINE void VAR(clr_pass)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {}

// The span pass (clr_finish_spans: one work-item per element, as many work-groups as it takes): element e's
// digits into a private superaccumulator of the kit's format (digit j is a signed m < 2^63 at
// bit offset 8 j), zeroed for the next launch, then kernels/exact.cl's single rounding (or, in
// raw mode, the normalized limbs), as VAR(clr_xround_into) does.
CLR_X_INLINE void VAR(clr_spass)(__global VT* res, __global ulong* aux, __global long* part) {
    const size_t e = get_global_id(0);
    if (e >= VSPAN) return;
    long p[VXL];
    for (uint j = 0; j < VXL; ++j) p[j] = 0;
    for (uint j = 0; j < 32u * VSCOPIES; ++j) {
        // Digit j % 32 of copy j / 32.
        const size_t at = ((size_t)(j >> 5) * CLR_XDG_L + (j & 31u)) * VSPAN + e;
        const long d = part[at];
        if (d != 0) {
            part[at] = 0;
            // d * 2^s at 32-bit digit q, as carry-save chunks without its magnitude (an abs
            // becomes llvm.abs.i64, which Oclgrind 21.10 cannot run): d = hi * 2^32 + lo with
            // lo in [0, 2^32), then lo * 2^s over digits q, q+1 and hi * 2^s (signed, below
            // 2^55) over q+1, q+2.
            const uint q = (j & 31u) >> 2, sh = 8u * (j & 3u);
            const ulong lo = ((ulong)d & 0xffffffffUL) << sh;
            const long hs = (d >> 32) * (1L << sh);
            p[q] += (long)(lo & 0xffffffffUL);
            p[q + 1] += (long)(lo >> 32) + (hs & 0xffffffffL);
            p[q + 2] += hs >> 32;
        }
    }
    for (uint c = 0; c < VSCOPIES; ++c) {
        for (uint j = 0; j < 3u; ++j) {
            const size_t at = ((size_t)c * CLR_XDG_L + 32u + j) * VSPAN + e;
            p[CLR_X32_D + j] += part[at];
            part[at] = 0;
        }
    }
    VAR(clr_xput)(res, aux, e, p);
}
#elif VXS == CLR_XS_PASS
// Superaccumulators in global memory finished by the span pass (decision 79: large exact spans
// and deterministic f64 sum spans on GPUs): one work-item per element rounds it once and zeroes
// it for the next launch, over as many work-groups as the span takes (the last work-group alone
// took 86 ms for 2^20 f64 elements on the H200).
CLR_X_INLINE void VAR(clr_last)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {}

CLR_X_INLINE void VAR(clr_pass)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {}

CLR_X_INLINE void VAR(clr_spass)(__global VT* res, __global ulong* aux, __global long* part) {
    const size_t e = get_global_id(0);
    if (e >= VSPAN) return;
#if VSSTORE == CLR_SS_LSHARED
    VAR(clr_xround_into)(res, aux, e, part, 1, 0);
#else
    // Limb-major: the pass's work-items read each plane coalesced.
    long p[VXL];
    for (uint j = 0; j < VXL; ++j) {
        const size_t at = (size_t)j * VSPAN + e;
        p[j] = part[at];
        if (p[j] != 0) part[at] = 0;
    }
    VAR(clr_xput)(res, aux, e, p);
#endif
}
#else
CLR_X_INLINE void VAR(clr_last)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {
    for (uint e = (uint)get_local_id(0); e < VSPAN; e += CLR_WG) VAR(clr_xround_into)(res, aux, e, part, 1, 1);
}

CLR_X_INLINE void VAR(clr_pass)(__global VT* res, __global ulong* aux, __global long* part, uint count, __local VA* lm, __local long* ls) {}

CLR_X_INLINE void VAR(clr_spass)(__global VT* res, __global ulong* aux, __global long* part) {}
#endif
#endif
