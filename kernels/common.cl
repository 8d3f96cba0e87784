// clreduce: definitions shared by every reduction kernel.
// The kernels are specialized by -D defines produced in src/codegen.rs:
//   CLR_WG           work-group size (reqd_work_group_size), CLR_WG_POW2 the largest power of two <= CLR_WG
//   CLR_IDX          index type (uint or ulong: 64-bit indexing where the range exceeds 2^32)
//   CLR_FORM         CLR_FORM_RANGE or CLR_FORM_ND
//   CLR_ORDER        CLR_ORDER_GRID (grid-stride, coalesced: GPUs), CLR_ORDER_BLOCKED (a contiguous chunk
//                    per work-group) or CLR_ORDER_CONTIG (a contiguous chunk per work-item: CPUs)
//   CLR_UNROLL       independent accumulators (loads in flight) per work-item in the range form
//   CLR_VEC          consecutive indices per work-item and step in grid-stride order (1, 2, 4, 8): >1 where
//                    the body reads a 16-bit buffer at [i], loaded CLR_VEC elements at once (CLR_CALL_V)
//   CLR_C11          1: OpenCL C 2.0 atomics and scoped fences; 0: OpenCL 1.2 atomics + mem_fence
//   CLR_PTX_ACQREL   1 (only with CLR_C11=0, where a structured partial finishes by last-group detection):
//                    the ticket and the last group's fence are NVIDIA inline PTX acquire/release
//                    (atom.acq_rel.gpu, fence.acq_rel.gpu); structured partials are plain stores
//   CLR_HAS_LAST     1 if some variable finishes by last-work-group detection
//   CLR_I64_ATOMICS  1 where cl_khr_int64_base_atomics is available (64-bit partials published atomically)
//   CLR_SG_PTX       1: the sub-group step uses NVIDIA inline-PTX warp shuffles (32 lanes)
//   CLR_SERIAL_FINISH 1 under the serial_last_group_tree workaround (src/caps.rs Workarounds)
// and, per reduction variable k:
//   Rk_T (element type), Rk_A (accumulator type: Rk_T, or a generated struct for identity-less
//   and argmin/argmax reductions), Rk_SHAPE (CLR_SHAPE_*), Rk_KIND (CLR_KIND_*), Rk_OPID
//   (CLR_OP_*), Rk_AOPID (the built-in op whose atomics implement it), Rk_ID (identity literal of
//   the element; 0 for identity-less), Rk_GS (work-group step, CLR_GS_*), Rk_XS (cross-group
//   step, CLR_XS_*), Rk_INIT (1: combine with the variable's initial value), Rk_LSLOTS (local
//   memory accumulators of its group step), Rk_SPAN (0, or the element count of a span
//   reduction) and Rk_SSTORE (CLR_SS_*: where a span's work-group copies live); Rk_XLS (longs of
//   local memory for an exact sum's superaccumulators, 1 for other variables) and, for an exact
//   sum, Rk_XF, Rk_XE, Rk_XST, Rk_XL and Rk_XSPEC (kernels/var_exact.cl); CLR_SPEC 1 when the main
//   loop is the speculative one of a launch whose only variable is an exact sum; Rk_XRAW 1 in
//   raw mode (multi-device shares, src/multi/): the last work-group writes the raw partial to
//   clr_aux_k instead of combining it into the variable (an exact sum's normalized limbs without
//   the initial value; an identity-less accumulator's value into the variable and its has flag).
// A custom combiner comes as a generated macro Rk_CUSTOM(a, b); Rk_PAD (generated) is 1 when
// the accumulator struct has an explicit pad word.

#define CLR_OP_PLUS 1
#define CLR_OP_MUL 2
#define CLR_OP_MIN 3
#define CLR_OP_MAX 4
#define CLR_OP_AND 5
#define CLR_OP_OR 6
#define CLR_OP_XOR 7
#define CLR_OP_LAND 8
#define CLR_OP_LOR 9
#define CLR_OP_ARGMIN 10
#define CLR_OP_ARGMAX 11
#define CLR_OP_CUSTOM 12

// 16-bit storage types (issue 29): the body's `x[e]` on an f16 or bf16 buffer is rewritten to
// these (src/codegen/loads.rs). f16 is read with core OpenCL's vload_half, which needs no
// cl_khr_fp16 (the buffer is declared `half*`, a pointer type core OpenCL C allows); bf16, the
// upper half of an f32, is declared `ushort*` and shifted into place. Both give a float.
#define clr_ld_f16(p, e) vload_half((size_t)(e), (p))
#define clr_ld_bf16(p, e) as_float((uint)((p)[(e)]) << 16)


// Accumulator layouts.
#define CLR_SHAPE_PLAIN 1    // the element type
#define CLR_SHAPE_FLAGGED 2  // { T v; uint has; }: identity-less (has == 0 is the identity)
#define CLR_SHAPE_PAIR 3     // { T v; ulong i; }: argmin / argmax
#define CLR_SHAPE_EXACT 4    // an exact sum's expansion (kernels/var_exact.cl)

// Exact sums: the expansion and where the work-group's superaccumulator lives.
#define CLR_XE_E2D 1         // two doubles
#define CLR_XE_E3F 2         // three floats (no fp64)
#define CLR_XST_LA 1         // one per work-group, 64-bit local atomics
#define CLR_XST_ROWS 2       // one row per work-item
#define CLR_XST_CARRIED 3    // carried by each accumulator (segmented, kernels/var_segexact.cl)

// Span stores.
#define CLR_SS_LSHARED 1   // one copy per work-group in local memory, local atomics
#define CLR_SS_LPRIVATE 2  // one copy per work-item in local memory
#define CLR_SS_GATOMIC 3   // global atomics straight on the result
#define CLR_SS_GPRIVATE 4  // one copy per work-item in global scratch (extra pass)
#define CLR_SS_GDIGITS 5   // f32 sums: narrow-digit superaccumulators in global scratch (extra pass)
#define CLR_SS_GCOPIES 6   // Rk_SCOPIES copies in global scratch, global atomics (extra pass)

#define CLR_KIND_INT32 1
#define CLR_KIND_INT64 2
#define CLR_KIND_F32 3
#define CLR_KIND_F64 4

// Work-group step.
#define CLR_GS_TREE 1     // local-memory tree, sequential addressing
#define CLR_GS_WG 2       // work_group_reduce_* (work-group collective functions)
#define CLR_GS_SG 3       // sub_group_reduce_* then local memory across sub-groups
#define CLR_GS_LATOMIC 4  // local atomics into one local scalar

// Cross-group step.
#define CLR_XS_ATOMIC 1   // global atomic combine into the result
#define CLR_XS_LAST 2     // partials + last-work-group detection
#define CLR_XS_PASS 3     // partials + one extra pass (clr_finish)

#define CLR_FORM_RANGE 1
#define CLR_FORM_ND 2
#define CLR_ORDER_GRID 1
#define CLR_ORDER_BLOCKED 2
#define CLR_ORDER_CONTIG 3

#define CLR_CAT3_(a, b, c) a##b##c
#define CLR_CAT3(a, b, c) CLR_CAT3_(a, b, c)

// Per-variable accessors, resolved against CLR_V (the variable index) where they are used.
#define VT CLR_CAT3(R, CLR_V, _T)
#define VA CLR_CAT3(R, CLR_V, _A)
#define VSHAPE CLR_CAT3(R, CLR_V, _SHAPE)
#define VAOPID CLR_CAT3(R, CLR_V, _AOPID)
#define VCUSTOM CLR_CAT3(R, CLR_V, _CUSTOM)
#define VSPAN CLR_CAT3(R, CLR_V, _SPAN)
#define VSCOPIES CLR_CAT3(R, CLR_V, _SCOPIES)
#define VPAD CLR_CAT3(R, CLR_V, _PAD)
#define VSSTORE CLR_CAT3(R, CLR_V, _SSTORE)
#define VAID CLR_CAT3(clr_identity, _, CLR_V)()
#define VKIND CLR_CAT3(R, CLR_V, _KIND)
#define VOPID CLR_CAT3(R, CLR_V, _OPID)
#define VID CLR_CAT3(R, CLR_V, _ID)
#define VGS CLR_CAT3(R, CLR_V, _GS)
#define VXS CLR_CAT3(R, CLR_V, _XS)
#define VINIT CLR_CAT3(R, CLR_V, _INIT)
#define VLSLOTS CLR_CAT3(R, CLR_V, _LSLOTS)
#define VAR(name) CLR_CAT3(name, _, CLR_V)
#define VXF CLR_CAT3(R, CLR_V, _XF)
#define VXE CLR_CAT3(R, CLR_V, _XE)
#define VXST CLR_CAT3(R, CLR_V, _XST)
#define VXL CLR_CAT3(R, CLR_V, _XL)
#define VXLS CLR_CAT3(R, CLR_V, _XLS)
#define VXSPEC CLR_CAT3(R, CLR_V, _XSPEC)
#define VXRAW CLR_CAT3(R, CLR_V, _XRAW)
#define CLR_CAT_(a, b) a##b
#define CLR_CAT(a, b) CLR_CAT_(a, b)

// `combine(r, v)` works for every reducer r (`combine(r, v, index)` for argmin/argmax);
// `r_combine(...)` is defined per reducer.
#define combine(r, ...) r##_combine(__VA_ARGS__)

// The vector step (CLR_VEC > 1, src/plan/geometry.rs vec_width): CLR_VEC consecutive elements
// from index i, a multiple of CLR_VEC, in one aligned load (buffers start at least 128-byte
// aligned), as a CLR_VF (floatN). bf16: a ushortN load, widened and shifted. f16 by
// CLR_F16_LD (a -D override for A/B, CLREDUCE_EXTRA_OPTIONS): 1 vloada_halfN (core; its
// pointer is aligned to the vector); 2 a ushortN load and vload_halfN of the private copy;
// 3 (NVIDIA only) a ushortN load and PTX cvt.f32.f16 per lane.
#if defined(CLR_VEC) && CLR_VEC > 1
#define CLR_VF CLR_CAT(float, CLR_VEC)
#define CLR_VU CLR_CAT(ushort, CLR_VEC)
#ifndef CLR_F16_LD
#define CLR_F16_LD 2
#endif
#define clr_vwide(p, i) (((__global const CLR_VU*)(p))[(i) / CLR_VEC])
#define clr_vld_bf16(p, i) CLR_CAT(as_float, CLR_VEC)(CLR_CAT(convert_uint, CLR_VEC)(clr_vwide(p, i)) << 16)
#if CLR_F16_LD == 1
#define clr_vld_f16(p, i) CLR_CAT(vloada_half, CLR_VEC)((size_t)(i) / CLR_VEC, (p))
#elif CLR_F16_LD == 2
static inline CLR_VF clr_vld_f16_priv(CLR_VU u) {
    return CLR_CAT(vload_half, CLR_VEC)(0, (const __private half*)&u);
}
#define clr_vld_f16(p, i) clr_vld_f16_priv(clr_vwide(p, i))
#elif CLR_F16_LD == 3
static inline float clr_h2f(ushort h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static inline CLR_VF clr_vld_f16_ptx(CLR_VU u) {
    CLR_VF f;
#if CLR_VEC == 2
    f.s0 = clr_h2f(u.s0); f.s1 = clr_h2f(u.s1);
#elif CLR_VEC == 4
    f.s0 = clr_h2f(u.s0); f.s1 = clr_h2f(u.s1); f.s2 = clr_h2f(u.s2); f.s3 = clr_h2f(u.s3);
#else
    f.s0 = clr_h2f(u.s0); f.s1 = clr_h2f(u.s1); f.s2 = clr_h2f(u.s2); f.s3 = clr_h2f(u.s3);
    f.s4 = clr_h2f(u.s4); f.s5 = clr_h2f(u.s5); f.s6 = clr_h2f(u.s6); f.s7 = clr_h2f(u.s7);
#endif
    return f;
}
#define clr_vld_f16(p, i) clr_vld_f16_ptx(clr_vwide(p, i))
#else
#error "clreduce: CLR_F16_LD must be 1, 2 or 3"
#endif
#endif
