// clreduce: exact (correctly rounded) float sums on the device. This file owns the device half
// of the superaccumulator kit (the host half is src/exact/; design/exact.md explains both):
// deposits of values into a superaccumulator ("sacc") in every address space with and without
// 64-bit atomics, the per-work-item fast path (a floating-point expansion updated by error-free
// TwoSums), exact merges of expansions and of saccs, normalization, and the single rounding to
// float or double bits (integer operations only, identical to src/exact/round.rs).
//
// Include it once per result format, after the extension pragmas the defines below call for:
//   #define CLR_X_F 32   (f32 results: f32 and f16 data)   or   #define CLR_X_F 64 (f64 results)
//   CLR_X_FP64  1: the double expansions and double deposits (cl_khr_fp64 enabled by the includer)
//   CLR_X_I64A  1: the atomic flavors (cl_khr_int64_base_atomics enabled by the includer)
//   CLR_X_CVT_HW 1: f32 -> double by the hardware conversion on the fast path (exact for the
//               normal floats it takes); 0 (default): integer operations on the bits
// Both formats may be included in one program (one include each). Every name ends in _32 or
// _64 (the format); CLR_X_D, CLR_X_B and CLR_X_L are the current format's layout (redefined by
// each include); CLR_X32_* and CLR_X64_* stay defined for both.
//
// Layout (src/exact/mod.rs Format): L = D + 3 signed 64-bit limbs; digit j weighs 2^(B + 32 j),
// carry-save (any value within +-2^62 between normalizations); limbs D, D+1, D+2 count NaN,
// +inf and -inf. f32: B = -149, D = 11; f64: B = -1074, D = 68.
//
// Flavors of the destination sacc (FL in the names):
//   ga  volatile __global long*, atom_add       la  volatile __local long*, atom_add
//   g   __global long*, plain                   l   __local long*, plain      p  __private long*
// A plain flavor needs one writer at a time (a row per work-item, or one work-item).
//
// Per flavor FL and format F (F = 32 or 64):
//   clr_x_dep_FL_F(acc, m, o, neg)       adds (neg ? -1 : 1) * m * 2^(B + o), m < 2^53 (3 chunks)
//   clr_x_add_f32_FL_F(acc, uint bits)   one f32 element, specials to the counters
//   clr_x_add_f64_FL_F(acc, ulong bits)  one f64 element (F = 32: only values on the 2^-149 grid
//                                        below 2^191, as every f32-data expansion value is)
//   clr_x_dep_f_FL_F(acc, float v)       a finite float (an expansion residue)
//   clr_x_dep_d_FL_F(acc, double v)      a finite double (CLR_X_FP64)
//   F = 32:  clr_x_push_f32d_FL_32(e, bits, acc)  f32 element into a 2-double expansion (FP64)
//            clr_x_push_f32f_FL_32(e, bits, acc)  f32 element into a 3-float expansion
//            clr_x_merge_e3f_FL_32(a, b, acc), clr_x_flush_e3f_FL_32(e, acc)
//   F = 64:  clr_x_push_f64d_FL_64(e, double x, acc)  f64 element into a 2-double expansion
//   both (FP64): clr_x_merge_e2d_FL_F(a, b, acc), clr_x_flush_e2d_FL_F(e, acc)
//   clr_x_absorb_FL_from_S_F(dst, src)   dst += src limb by limb (S = p, l, g: src's space)
// Plain flavors only (one work-item): clr_x_zero_FL_F(acc), clr_x_normalize_FL_F(acc).
// The speculative fast path (no format, no sacc): clr_x_try_f32d(e, bits, &bad),
// clr_x_blk_add(d, bits, &emax, &emin, &bad) + clr_x_try_blk_f32d(e, d, emax, emin, lb, &bad)
// (a block of f32 elements pre-summed exactly in a double),
// clr_x_try_f32f(e, bits, &bad), clr_x_try_f64d(e, x, &bad), clr_x_renorm_e2d/e3f(e).
// Rounding (private copy, normalized or not): clr_x_round32_F(acc) -> uint bits of the float,
// clr_x_round64_F(acc) -> ulong bits of the double. Neither needs fp64. In place (acc becomes
// scratch; local only): clr_x_round32_in_l_F(acc), clr_x_round64_in_l_F(acc).
//
// The fast path's windows and caps (design/exact.md, src/exact/mod.rs ExpansionKind::spec):
// an element whose biased exponent is in [LO, HI] goes through the expansion, any other is
// deposited; one expansion, counting the expansions merged into it, absorbs at most CAP elements
// before it is flushed. A sacc takes at most CLR_X_MAX_CONTRIB contributions (deposits, or
// merged normalized saccs) between normalizations. The caller (planner) enforces the caps.
//
// Never compile this with -cl-fast-relaxed-math, -cl-unsafe-math-optimizations or
// -cl-finite-math-only: TwoSum needs IEEE round-to-nearest additions evaluated as written.

#ifndef CLR_X_ONCE
#define CLR_X_ONCE

#define CLR_X32_D 11
#define CLR_X32_B (-149)
#define CLR_X32_L 14
#define CLR_X64_D 68
#define CLR_X64_B (-1074)
#define CLR_X64_L 71
#define CLR_X_MAX_CONTRIB (1UL << 30)
// f32 data in two doubles: every finite normal f32.
#define CLR_X_W32D_LO 1u
#define CLR_X_W32D_HI 254u
#define CLR_X_CAP32D (1UL << 62)
// f32 data in three floats: |x| in [2^-103, 2^101).
#define CLR_X_W32F_LO 24u
#define CLR_X_W32F_HI 227u
#define CLR_X_CAP32F (1UL << 24)
// f64 data in two doubles: |x| in [2^-970, 2^990).
#define CLR_X_W64D_LO 53u
#define CLR_X_W64D_HI 2012u
#define CLR_X_CAP64D (1UL << 30)

// Every helper is forced inline: PoCL 5 (LLVM 15) crashes in the inliner's cost analysis
// (llvm::getInlineCost) on a push loop followed by a flush into a local sacc with atomics
// (t_exp_f32d_la in tests/exact_kit.rs); forced inlining skips that analysis. The inlined
// code is what every compiler produced anyway on the fast path.
#define CLR_X_INLINE static inline __attribute__((always_inline))

#define CLR_X_CAT_(a, b) a##b
#define CLR_X_CAT(a, b) CLR_X_CAT_(a, b)

#ifndef CLR_X_FP64
#define CLR_X_FP64 0
#endif
#ifndef CLR_X_I64A
#define CLR_X_I64A 0
#endif
#ifndef CLR_X_CVT_HW
#define CLR_X_CVT_HW 0
#endif

// TwoSum (Knuth): s = fl(a + b) and *e = (a + b) - s exactly, for any a, b whose sum and
// intermediates do not overflow (the windows and caps guarantee it).
CLR_X_INLINE float clr_x_two_sum_f(float a, float b, __private float* e) {
    float s = a + b;
    float bb = s - a;
    *e = (a - (s - bb)) + (b - bb);
    return s;
}

// A 3-float expansion: the value is s + c + d (exactly, with the sacc's deposits).
typedef struct {
    float s, c, d;
} clr_x_e3f;

CLR_X_INLINE clr_x_e3f clr_x_e3f_zero(void) {
    clr_x_e3f e;
    e.s = 0.0f;
    e.c = 0.0f;
    e.d = 0.0f;
    return e;
}

#if CLR_X_FP64
CLR_X_INLINE double clr_x_two_sum_d(double a, double b, __private double* e) {
    double s = a + b;
    double bb = s - a;
    *e = (a - (s - bb)) + (b - bb);
    return s;
}

// A 2-double expansion: the value is s + c (exactly, with the sacc's deposits).
typedef struct {
    double s, c;
} clr_x_e2d;

CLR_X_INLINE clr_x_e2d clr_x_e2d_zero(void) {
    clr_x_e2d e;
    e.s = 0.0;
    e.c = 0.0;
    return e;
}

// A finite normal f32 (by its bits) as the double of the same value, with integer operations
// only (no float conversion that a flushing device could touch): the exponent field moves from
// 8 to 11 bits (bias +896), the fraction from 23 to 52 bits.
CLR_X_INLINE double clr_x_f32_to_d(uint b) {
#if CLR_X_CVT_HW
    // CLR_X_CVT_HW = 1: the hardware conversion, exact for the normal floats the fast path
    // takes (flushing touches only subnormals, which never get here).
    return (double)as_float(b);
#else
    uint hi = (b & 0x80000000u) | (((b & 0x7fffffffu) >> 3) + 0x38000000u);
    return as_double(upsample(hi, b << 29));
#endif
}

// ---- the speculative fast path (no branch, no memory traffic) ----------------------------
// clr_x_try_*: the element into the expansion with every TwoSum of the cascade, and no
// deposit; *bad becomes nonzero if the element is outside the window (zeros are inside: adding
// 0 is exact) or the last TwoSum leaves a residue. The caller runs a chunk of elements through
// clr_x_try_* from a saved expansion; if bad is then nonzero it restores the saved expansion and
// runs the chunk again through clr_x_push_* (exact, with deposits). Without bad, every TwoSum
// was error-free and in range, so the expansion holds the chunk's sum exactly. design/exact.md.
CLR_X_INLINE clr_x_e2d clr_x_try_f32d(clr_x_e2d e, uint b, __private uint* bad) {
    uint ex = (b >> 23) & 0xffu;
    uint nz = (b << 1) != 0u;
    *bad |= (ex - CLR_X_W32D_LO > CLR_X_W32D_HI - CLR_X_W32D_LO) & nz;
    // clr_x_f32_to_d is for normal floats: a zero is selected as 0.0 (any sign: exact).
    double x = nz ? clr_x_f32_to_d(b) : 0.0;
    double t, r;
    e.s = clr_x_two_sum_d(e.s, x, &t);
    e.c = clr_x_two_sum_d(e.c, t, &r);
    *bad |= r != 0.0;
    return e;
}

// Block pre-sum, for f32 data on devices with fp64: a few f32 elements (a block of at most 2^lb)
// summed into a double d with plain additions, then d through the cascade. Every nonzero
// element is a multiple of 2^(emin - 150) and below 2^(emax - 126) (exponent fields), so every
// partial sum needs at most lb + emax - emin + 24 bits: with emax - emin <= 29 - lb each plain
// addition is exact. clr_x_blk_add adds one element and tracks the fields (zeros are left out
// of emin); clr_x_try_blk_f32d flags a wider span and runs the cascade on d. The block replaces
// 12 double additions per element by 1 + 12 / 2^lb.
CLR_X_INLINE double clr_x_blk_add(double d, uint b, __private uint* emax, __private uint* emin,
                                  __private uint* bad) {
    uint ex = (b >> 23) & 0xffu;
    uint nz = (b << 1) != 0u;
    *bad |= (ex - CLR_X_W32D_LO > CLR_X_W32D_HI - CLR_X_W32D_LO) & nz;
    *emax = max(*emax, ex);
    *emin = min(*emin, nz ? ex : 0xffu);
    return d + (nz ? clr_x_f32_to_d(b) : 0.0);
}

CLR_X_INLINE clr_x_e2d clr_x_try_blk_f32d(clr_x_e2d e, double d, uint emax, uint emin, uint lb,
                                          __private uint* bad) {
    *bad |= emax > emin + 29u - lb;
    double t, r;
    e.s = clr_x_two_sum_d(e.s, d, &t);
    e.c = clr_x_two_sum_d(e.c, t, &r);
    *bad |= r != 0.0;
    return e;
}

CLR_X_INLINE clr_x_e2d clr_x_try_f64d(clr_x_e2d e, double x, __private uint* bad) {
    uint ex = (uint)(as_ulong(x) >> 52) & 0x7ffu;
    // Zero by its bits: a device that treats subnormals as zero would call one zero here.
    *bad |= (ex - CLR_X_W64D_LO > CLR_X_W64D_HI - CLR_X_W64D_LO) & ((as_ulong(x) << 1) != 0UL);
    double t, r;
    e.s = clr_x_two_sum_d(e.s, x, &t);
    e.c = clr_x_two_sum_d(e.c, t, &r);
    *bad |= r != 0.0;
    return e;
}

// (s, c) -> TwoSum(s, c): the same exact value with |c| <= ulp(s) / 2, so that the errors the
// next elements add to c start from a small c (fewer residues). No deposit, no rounding.
CLR_X_INLINE clr_x_e2d clr_x_renorm_e2d(clr_x_e2d e) {
    double c;
    e.s = clr_x_two_sum_d(e.s, e.c, &c);
    e.c = c;
    return e;
}
#endif

CLR_X_INLINE clr_x_e3f clr_x_try_f32f(clr_x_e3f e, uint b, __private uint* bad) {
    uint ex = (b >> 23) & 0xffu;
    *bad |= (ex - CLR_X_W32F_LO > CLR_X_W32F_HI - CLR_X_W32F_LO) & ((b << 1) != 0u);
    float t, u, r;
    e.s = clr_x_two_sum_f(e.s, as_float(b), &t);
    e.c = clr_x_two_sum_f(e.c, t, &u);
    e.d = clr_x_two_sum_f(e.d, u, &r);
    *bad |= r != 0.0f;
    return e;
}

CLR_X_INLINE clr_x_e3f clr_x_renorm_e3f(clr_x_e3f e) {
    float t, u;
    e.s = clr_x_two_sum_f(e.s, e.c, &t);
    e.c = clr_x_two_sum_f(t, e.d, &u);
    e.d = u;
    return e;
}

// Plain and atomic limb additions.
// ADD(acc, j, v) adds v to limb j of acc: contiguous limbs here; a span in limb-major layout
// (kernels/var_exact_finish.cl) instantiates CLR_X_DEPOSITS with a strided ADD of its own.
#define CLR_X_ADD_PLAIN(p, j, v) ((p)[j] += (v))
#define CLR_X_ADD_ATOM(p, j, v) atom_add((p) + (j), (v))

// ---- deposits, per flavor -----------------------------------------------------------------
// The chunks of m * 2^r (r = o mod 32, m < 2^53: below 2^85) go to digits j, j+1, j+2
// (j = o / 32), each below 2^32 in magnitude; the host (Superacc::add_split) adds the same.
// A special element adds 1 to its counter; an f32 subnormal or zero is m * 2^-149 (m may be 0).
#define CLR_X_DEPOSITS(FL, PTR, ADD)                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_dep_##FL)(PTR acc, ulong m, uint o, int neg) {        \
        uint j = o >> 5, r = o & 31u;                                                     \
        ulong lo = m << r;                                                                \
        ulong hi = r ? (m >> (64u - r)) : 0ul;                                            \
        long c0 = (long)(lo & 0xffffffffUL), c1 = (long)(lo >> 32), c2 = (long)hi;        \
        if (neg) {                                                                        \
            c0 = -c0;                                                                     \
            c1 = -c1;                                                                     \
            c2 = -c2;                                                                     \
        }                                                                                 \
        if (c0 != 0) ADD(acc, j, c0);                                                     \
        if (c1 != 0) ADD(acc, j + 1, c1);                                                 \
        if (c2 != 0) ADD(acc, j + 2, c2);                                                 \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_add_f32_##FL)(PTR acc, uint b) {                     \
        uint ex = (b >> 23) & 0xffu, f = b & 0x7fffffu;                                   \
        if (ex == 0xffu) {                                                                \
            ADD(acc, CLR_X_D + (f ? 0 : ((b >> 31) ? 2 : 1)), 1L);                       \
            return;                                                                       \
        }                                                                                 \
        ulong m = ex ? (ulong)(f | 0x800000u) : (ulong)f;                                 \
        int e = ex ? (int)ex - 150 : -149;                                                \
        CLR_X_N(clr_x_dep_##FL)(acc, m, (uint)(e - CLR_X_B), (int)(b >> 31));             \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_add_f64_##FL)(PTR acc, ulong b) {                    \
        uint ex = (uint)(b >> 52) & 0x7ffu;                                               \
        ulong f = b & 0xfffffffffffffUL;                                                  \
        if (ex == 0x7ffu) {                                                               \
            ADD(acc, CLR_X_D + (f ? 0 : ((b >> 63) ? 2 : 1)), 1L);                       \
            return;                                                                       \
        }                                                                                 \
        ulong m = ex ? (f | 0x10000000000000UL) : f;                                      \
        int e = ex ? (int)ex - 1075 : -1074;                                              \
        if (e < CLR_X_B) {                                                                \
            /* f32 format: the value is on the 2^-149 grid, the dropped bits are zero */  \
            m = (CLR_X_B - e) < 64 ? m >> (CLR_X_B - e) : 0ul;                            \
            e = CLR_X_B;                                                                  \
        }                                                                                 \
        CLR_X_N(clr_x_dep_##FL)(acc, m, (uint)(e - CLR_X_B), (int)(b >> 63));             \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_dep_f_##FL)(PTR acc, float v) {                      \
        CLR_X_N(clr_x_add_f32_##FL)(acc, as_uint(v));                                     \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_absorb_##FL##_from_p)(PTR dst, const __private long* src) { \
        for (int j = 0; j < CLR_X_L; ++j)                                                 \
            if (src[j] != 0) ADD(dst, j, src[j]);                                         \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_absorb_##FL##_from_l)(PTR dst, const __local long* src) { \
        for (int j = 0; j < CLR_X_L; ++j)                                                 \
            if (src[j] != 0) ADD(dst, j, src[j]);                                         \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_absorb_##FL##_from_g)(PTR dst, const __global long* src) { \
        for (int j = 0; j < CLR_X_L; ++j)                                                 \
            if (src[j] != 0) ADD(dst, j, src[j]);                                         \
    }

// The 3-float expansion (f32 results only). Fast path: one compare on the exponent field and
// one TwoSum; the second and third TwoSums run only when the error before them is nonzero, and
// the sacc is touched only when the last error is nonzero. Invariant: s + c + d + (what this
// expansion deposited) == the exact sum of the elements it absorbed.
#define CLR_X_E3F(FL, PTR)                                                                \
    CLR_X_INLINE clr_x_e3f CLR_X_N(clr_x_push_f32f_##FL)(clr_x_e3f e, uint b, PTR acc) { \
        uint ex = (b >> 23) & 0xffu;                                                      \
        if (ex - CLR_X_W32F_LO <= CLR_X_W32F_HI - CLR_X_W32F_LO) {                        \
            float t;                                                                      \
            e.s = clr_x_two_sum_f(e.s, as_float(b), &t);                                  \
            if (t != 0.0f) {                                                              \
                float u;                                                                  \
                e.c = clr_x_two_sum_f(e.c, t, &u);                                        \
                if (u != 0.0f) {                                                          \
                    float r;                                                              \
                    e.d = clr_x_two_sum_f(e.d, u, &r);                                    \
                    if (r != 0.0f) CLR_X_N(clr_x_dep_f_##FL)(acc, r);                     \
                }                                                                         \
            }                                                                             \
        } else {                                                                          \
            CLR_X_N(clr_x_add_f32_##FL)(acc, b);                                          \
        }                                                                                 \
        return e;                                                                         \
    }                                                                                     \
    CLR_X_INLINE clr_x_e3f CLR_X_N(clr_x_merge_e3f_##FL)(clr_x_e3f a, clr_x_e3f b, PTR acc) { \
        float t1, t2, t3, t4, t5, t6;                                                     \
        a.s = clr_x_two_sum_f(a.s, b.s, &t1);                                             \
        a.c = clr_x_two_sum_f(a.c, b.c, &t2);                                             \
        a.d = clr_x_two_sum_f(a.d, b.d, &t3);                                             \
        a.c = clr_x_two_sum_f(a.c, t1, &t4);                                              \
        a.d = clr_x_two_sum_f(a.d, t2, &t5);                                              \
        a.d = clr_x_two_sum_f(a.d, t4, &t6);                                              \
        if (t3 != 0.0f) CLR_X_N(clr_x_dep_f_##FL)(acc, t3);                               \
        if (t5 != 0.0f) CLR_X_N(clr_x_dep_f_##FL)(acc, t5);                               \
        if (t6 != 0.0f) CLR_X_N(clr_x_dep_f_##FL)(acc, t6);                               \
        return a;                                                                         \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_flush_e3f_##FL)(clr_x_e3f e, PTR acc) {              \
        CLR_X_N(clr_x_dep_f_##FL)(acc, e.s);                                              \
        CLR_X_N(clr_x_dep_f_##FL)(acc, e.c);                                              \
        CLR_X_N(clr_x_dep_f_##FL)(acc, e.d);                                              \
    }

// The 2-double expansion: deposits of doubles, merge and flush (both formats).
#define CLR_X_E2D(FL, PTR)                                                                \
    CLR_X_INLINE void CLR_X_N(clr_x_dep_d_##FL)(PTR acc, double v) {                     \
        CLR_X_N(clr_x_add_f64_##FL)(acc, as_ulong(v));                                    \
    }                                                                                     \
    CLR_X_INLINE clr_x_e2d CLR_X_N(clr_x_merge_e2d_##FL)(clr_x_e2d a, clr_x_e2d b, PTR acc) { \
        double t, u, v;                                                                   \
        a.s = clr_x_two_sum_d(a.s, b.s, &t);                                              \
        a.c = clr_x_two_sum_d(a.c, b.c, &u);                                              \
        a.c = clr_x_two_sum_d(a.c, t, &v);                                                \
        if (u != 0.0) CLR_X_N(clr_x_dep_d_##FL)(acc, u);                                  \
        if (v != 0.0) CLR_X_N(clr_x_dep_d_##FL)(acc, v);                                  \
        return a;                                                                         \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_flush_e2d_##FL)(clr_x_e2d e, PTR acc) {              \
        CLR_X_N(clr_x_dep_d_##FL)(acc, e.s);                                              \
        CLR_X_N(clr_x_dep_d_##FL)(acc, e.c);                                              \
    }

// The cascade of the 2-double expansions: x (finite, in the window) into e; the second TwoSum
// only when the first error is nonzero, the sacc only when the second one is.
#define CLR_X_E2D_CASCADE(FL, e, x, acc)                                                  \
    {                                                                                     \
        double t_;                                                                        \
        e.s = clr_x_two_sum_d(e.s, x, &t_);                                               \
        if (t_ != 0.0) {                                                                  \
            double r_;                                                                    \
            e.c = clr_x_two_sum_d(e.c, t_, &r_);                                          \
            if (r_ != 0.0) CLR_X_N(clr_x_dep_d_##FL)(acc, r_);                            \
        }                                                                                 \
    }

// f32 data into two doubles (f32 results): every finite normal f32 takes the fast path.
#define CLR_X_PUSH_F32D(FL, PTR)                                                          \
    CLR_X_INLINE clr_x_e2d CLR_X_N(clr_x_push_f32d_##FL)(clr_x_e2d e, uint b, PTR acc) { \
        uint ex = (b >> 23) & 0xffu;                                                      \
        if (ex - CLR_X_W32D_LO <= CLR_X_W32D_HI - CLR_X_W32D_LO) {                        \
            double x = clr_x_f32_to_d(b);                                                 \
            CLR_X_E2D_CASCADE(FL, e, x, acc)                                              \
        } else {                                                                          \
            CLR_X_N(clr_x_add_f32_##FL)(acc, b);                                          \
        }                                                                                 \
        return e;                                                                         \
    }

// f64 data into two doubles (f64 results).
#define CLR_X_PUSH_F64D(FL, PTR)                                                          \
    CLR_X_INLINE clr_x_e2d CLR_X_N(clr_x_push_f64d_##FL)(clr_x_e2d e, double x, PTR acc) { \
        ulong b = as_ulong(x);                                                            \
        uint ex = (uint)(b >> 52) & 0x7ffu;                                               \
        if (ex - CLR_X_W64D_LO <= CLR_X_W64D_HI - CLR_X_W64D_LO) {                        \
            CLR_X_E2D_CASCADE(FL, e, x, acc)                                              \
        } else {                                                                          \
            CLR_X_N(clr_x_add_f64_##FL)(acc, b);                                          \
        }                                                                                 \
        return e;                                                                         \
    }

// One writer: zero and normalize (digits 0..D-2 into [0, 2^32), the top digit keeps the sign
// and the rest; counters untouched). With limbs within +-2^62 no step overflows.
#define CLR_X_PLAIN_ONLY(FL, PTR)                                                         \
    CLR_X_INLINE void CLR_X_N(clr_x_zero_##FL)(PTR acc) {                                \
        for (int j = 0; j < CLR_X_L; ++j) acc[j] = 0;                                     \
    }                                                                                     \
    CLR_X_INLINE void CLR_X_N(clr_x_normalize_##FL)(PTR acc) {                           \
        long carry = 0;                                                                   \
        for (int j = 0; j < CLR_X_D - 1; ++j) {                                           \
            long v = acc[j] + carry;                                                      \
            carry = v >> 32;                                                              \
            acc[j] = v & 0xffffffffL;                                                     \
        }                                                                                 \
        acc[CLR_X_D - 1] += carry;                                                        \
    }

#define CLR_X_FLAVOR(FL, PTR, ADD)                                                        \
    CLR_X_DEPOSITS(FL, PTR, ADD)                                                          \
    CLR_X_FLAVOR_32(FL, PTR)                                                              \
    CLR_X_FLAVOR_FP64(FL, PTR)                                                            \
    CLR_X_FLAVOR_F64D(FL, PTR)

#endif  // CLR_X_ONCE

// ---- the current format -----------------------------------------------------------------
#undef CLR_X_D
#undef CLR_X_B
#undef CLR_X_L
#undef CLR_X_N
#if CLR_X_F == 32
#define CLR_X_D CLR_X32_D
#define CLR_X_B CLR_X32_B
#define CLR_X_L CLR_X32_L
#define CLR_X_N(name) CLR_X_CAT(name, _32)
#elif CLR_X_F == 64
#define CLR_X_D CLR_X64_D
#define CLR_X_B CLR_X64_B
#define CLR_X_L CLR_X64_L
#define CLR_X_N(name) CLR_X_CAT(name, _64)
#else
#error "clreduce: define CLR_X_F as 32 or 64 before including exact.cl"
#endif

#undef CLR_X_FLAVOR_32
#undef CLR_X_FLAVOR_FP64
#undef CLR_X_FLAVOR_F64D
#if CLR_X_F == 32
#define CLR_X_FLAVOR_32(FL, PTR) CLR_X_E3F(FL, PTR)
#else
#define CLR_X_FLAVOR_32(FL, PTR)
#endif
#if CLR_X_FP64 && CLR_X_F == 32
#define CLR_X_FLAVOR_FP64(FL, PTR) CLR_X_E2D(FL, PTR) CLR_X_PUSH_F32D(FL, PTR)
#elif CLR_X_FP64
#define CLR_X_FLAVOR_FP64(FL, PTR) CLR_X_E2D(FL, PTR)
#else
#define CLR_X_FLAVOR_FP64(FL, PTR)
#endif
#if CLR_X_FP64 && CLR_X_F == 64
#define CLR_X_FLAVOR_F64D(FL, PTR) CLR_X_PUSH_F64D(FL, PTR)
#else
#define CLR_X_FLAVOR_F64D(FL, PTR)
#endif

CLR_X_FLAVOR(p, __private long*, CLR_X_ADD_PLAIN)
CLR_X_FLAVOR(l, __local long*, CLR_X_ADD_PLAIN)
CLR_X_FLAVOR(g, __global long*, CLR_X_ADD_PLAIN)
CLR_X_PLAIN_ONLY(p, __private long*)
CLR_X_PLAIN_ONLY(l, __local long*)
CLR_X_PLAIN_ONLY(g, __global long*)
#if CLR_X_I64A
CLR_X_FLAVOR(la, volatile __local long*, CLR_X_ADD_ATOM)
CLR_X_FLAVOR(ga, volatile __global long*, CLR_X_ADD_ATOM)
#endif

// ---- rounding -------------------------------------------------------------------------------
// src/exact/round.rs round_bits, step for step: the counters; the magnitude N (the value is
// +-N * 2^B) as 32-bit digits after a carry pass and, for a negative value, a borrow pass; its
// top bit p; the quantum 2^(B + s), s = max(p - (P - 1), emin - P + 1 - B); mant = N >> s
// rounded to nearest-even; infinity above emax; bits = ((B + s - (emin - P + 1)) << (P - 1)) +
// mant (normal and subnormal encodings alike).

// The steps, written once (CLR_X_ROUND_STEPS): the private clr_x_round_F reads acc and writes
// the digits into its own private array m (session 11's code, unchanged: on NVIDIA an f64 sum's
// clr_main took 254 registers instead of 128 when the private one rounded a copy in place);
// clr_x_round_in_l_F rounds a local superaccumulator in place (m is acc: each limb is read
// before its digit is written, the counters before the top digits), which lets a work-group's
// work-item 0 round what the group summed in local memory without private arrays.
#ifndef CLR_X_ROUND_STEPS
#define CLR_X_ROUND_STEPS(BITS)                                                           \
    long carry = 0;                                                                       \
    for (int j = 0; j < CLR_X_D - 1; ++j) {                                               \
        long v = acc[j] + carry;                                                          \
        carry = v >> 32;                                                                  \
        m[j] = (ulong)(v & 0xffffffffL);                                                  \
    }                                                                                     \
    long top = acc[CLR_X_D - 1] + carry;                                                  \
    int neg = top < 0;                                                                    \
    ulong tm = (ulong)top;                                                                \
    if (neg) {                                                                            \
        long borrow = 0;                                                                  \
        for (int j = 0; j < CLR_X_D - 1; ++j) {                                           \
            long t = -(long)m[j] - borrow;                                                \
            borrow = t < 0 ? 1 : 0;                                                       \
            m[j] = (ulong)(t < 0 ? t + 0x100000000L : t);                                 \
        }                                                                                 \
        tm = (0UL - tm) - (ulong)borrow;                                                  \
    }                                                                                     \
    m[CLR_X_D - 1] = tm & 0xffffffffUL;                                                   \
    m[CLR_X_D] = tm >> 32;                                                                \
    m[CLR_X_D + 1] = 0;                                                                   \
    m[CLR_X_D + 2] = 0;                                                                   \
    int t = CLR_X_D;                                                                      \
    while (t >= 0 && m[t] == 0) --t;                                                      \
    if (t < 0) return 0; /* an exact zero is +0 */                                        \
    int p = 32 * t + 63 - (int)clz(m[t]);                                                 \
    int s = max(p - (P - 1), emin - P + 1 - CLR_X_B);                                     \
    ulong mant;                                                                           \
    if (s <= 0) {                                                                         \
        mant = BITS(m, 0, p + 1) << (-s);                                                 \
    } else {                                                                              \
        mant = BITS(m, s, p - s + 1);                                                     \
        ulong rbit = BITS(m, s - 1, 1);                                                   \
        int jb = (s - 1) >> 5, rb = (s - 1) & 31;                                         \
        int sticky = rb ? ((m[jb] & ((1UL << rb) - 1UL)) != 0) : 0;                       \
        for (int j = 0; j < jb; ++j) sticky |= m[j] != 0;                                 \
        if (rbit && (sticky || (mant & 1UL))) {                                           \
            ++mant;                                                                       \
            if (mant == (1UL << P)) {                                                     \
                mant >>= 1;                                                               \
                ++s;                                                                      \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
    ulong sign = neg ? sgn : 0UL;                                                         \
    if (mant >= (1UL << (P - 1)) && CLR_X_B + s + P - 1 > emax) return sign | inf;        \
    return sign | (((ulong)(CLR_X_B + s - (emin - P + 1)) << (P - 1)) + mant);
// The counters: NaN, or both infinities, or one.
#define CLR_X_ROUND_SPECIALS                                                              \
    long cn = acc[CLR_X_D], cp = acc[CLR_X_D + 1], cm = acc[CLR_X_D + 2];                 \
    if (cn > 0 || (cp > 0 && cm > 0)) return nan;                                         \
    if (cp > 0) return inf;                                                               \
    if (cm > 0) return sgn | inf;
#endif

// `count` (<= 63) bits of the digits m starting at bit lo (m has room for j + 2).
CLR_X_INLINE ulong CLR_X_N(clr_x_bits)(const __private ulong* m, int lo, int count) {
    int j = lo >> 5, r = lo & 31;
    ulong w = m[j] | (m[j + 1] << 32);
    if (r) w = (w >> r) | (m[j + 2] << (64 - r));
    return w & ((1UL << count) - 1UL);
}
CLR_X_INLINE ulong CLR_X_N(clr_x_bits_l)(const __local ulong* m, int lo, int count) {
    int j = lo >> 5, r = lo & 31;
    ulong w = m[j] | (m[j + 1] << 32);
    if (r) w = (w >> r) | (m[j + 2] << (64 - r));
    return w & ((1UL << count) - 1UL);
}

static ulong CLR_X_N(clr_x_round)(const __private long* acc, int P, int emin, int emax,
                                  ulong nan, ulong inf, ulong sgn) {
    CLR_X_ROUND_SPECIALS
    ulong m[CLR_X_D + 3];
    CLR_X_ROUND_STEPS(CLR_X_N(clr_x_bits))
}

static ulong CLR_X_N(clr_x_round_in_l)(__local long* acc, int P, int emin, int emax,
                                       ulong nan, ulong inf, ulong sgn) {
    CLR_X_ROUND_SPECIALS
    __local ulong* m = (__local ulong*)acc;
    CLR_X_ROUND_STEPS(CLR_X_N(clr_x_bits_l))
}

// The exact value rounded once to the nearest float (its bits): canonical NaN 0x7fc00000.
CLR_X_INLINE uint CLR_X_N(clr_x_round32)(const __private long* acc) {
    return (uint)CLR_X_N(clr_x_round)(acc, 24, -126, 127, 0x7fc00000UL, 0x7f800000UL, 0x80000000UL);
}

// The exact value rounded once to the nearest double (its bits): canonical NaN 0x7ff8...0.
CLR_X_INLINE ulong CLR_X_N(clr_x_round64)(const __private long* acc) {
    return CLR_X_N(clr_x_round)(acc, 53, -1022, 1023, 0x7ff8000000000000UL, 0x7ff0000000000000UL,
                                0x8000000000000000UL);
}

// The same in place in local memory (acc becomes the digits).
CLR_X_INLINE uint CLR_X_N(clr_x_round32_in_l)(__local long* acc) {
    return (uint)CLR_X_N(clr_x_round_in_l)(acc, 24, -126, 127, 0x7fc00000UL, 0x7f800000UL,
                                           0x80000000UL);
}
CLR_X_INLINE ulong CLR_X_N(clr_x_round64_in_l)(__local long* acc) {
    return CLR_X_N(clr_x_round_in_l)(acc, 53, -1022, 1023, 0x7ff8000000000000UL,
                                     0x7ff0000000000000UL, 0x8000000000000000UL);
}

#if CLR_X_FP64
// The value s + c of a two-double expansion rounded once to the result format (its bits: a
// float's in the low 32 for F = 32), where nothing else holds part of the sum (no limb was
// touched: design/exact.md "Rounding an untouched expansion"; the same bits as the limbs'
// rounding of the same value). It needs what every expansion of the fast path gives: s and c
// zero or multiples of the format's grid (2^-1022 in the f64 window, 2^-149 for f32 data) and
// s + c within the cap's bound (2^1020 for F = 64, 2^191 for F = 32).
// F = 64: fl(s + c), IEEE's correctly rounded addition, is the correctly rounded value (a nonzero
// sum on the 2^-1022 grid is a normal double); an exact zero is +0.
// F = 32: (h, r) = TwoSum(s, c) is s + c exactly; h rounded to odd (moved one ulp toward r when
// r != 0 and h is even) is s + c rounded to odd at 53 bits, which rounded to nearest at 24 bits
// or fewer is s + c rounded to nearest (round to odd with at least two extra bits: Boldo and
// Melquiond); that last rounding is integer operations (no float conversion a device could
// flush), overflow to infinity included.
CLR_X_INLINE ulong CLR_X_N(clr_x_round_e2d)(clr_x_e2d e) {
#if CLR_X_F == 64
    const ulong h = as_ulong(e.s + e.c);
    return (h << 1) == 0UL ? 0UL : h;
#else
    double r;
    ulong h = as_ulong(clr_x_two_sum_d(e.s, e.c, &r));
    if ((h << 1) == 0UL) return 0UL;  // s + c == 0 exactly (r is 0: no double underflows here)
    if (r != 0.0 && (h & 1UL) == 0UL) h += ((h ^ as_ulong(r)) >> 63) ? (ulong)-1L : 1UL;
    // |s + c| >= 2^-149 (every value is on the f32 grid): the double is normal, exponent E.
    const ulong sg = (h >> 32) & 0x80000000UL;
    const int E = (int)((h >> 52) & 0x7ffUL) - 1023;
    const ulong m = (h & 0xfffffffffffffUL) | 0x10000000000000UL;  // s + c = m * 2^(E - 52)
    int q = max(E - 23, -149);                                      // the float quantum's exponent
    const int sh = q - (E - 52);                                    // 29 (normal) to 52
    ulong mant = m >> sh;
    const ulong rem = m & ((1UL << sh) - 1UL), mid = 1UL << (sh - 1);
    if (rem > mid || (rem == mid && (mant & 1UL))) {
        ++mant;
        if (mant == (1UL << 24)) {
            mant >>= 1;
            ++q;
        }
    }
    if (q + 23 > 127) return sg | 0x7f800000UL;
    return sg | (((ulong)(q + 149) << 23) + mant);
#endif
}
#endif
