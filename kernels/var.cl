// clreduce: the functions of one reduction variable. Included once per variable with CLR_V set
// to its index; every name it defines ends in _<CLR_V>.

// ---- the operation on elements ------------------------------------------------------------
#if VOPID != CLR_OP_ARGMIN && VOPID != CLR_OP_ARGMAX
static inline VT VAR(clr_eop)(VT a, VT b) {
#if VOPID == CLR_OP_PLUS
    return a + b;
#elif VOPID == CLR_OP_MUL
    return a * b;
#elif VOPID == CLR_OP_MIN
    return b < a ? b : a;
#elif VOPID == CLR_OP_MAX
    return a < b ? b : a;
#elif VOPID == CLR_OP_AND
    return a & b;
#elif VOPID == CLR_OP_OR
    return a | b;
#elif VOPID == CLR_OP_XOR
    return a ^ b;
#elif VOPID == CLR_OP_LAND
    return (VT)(a != (VT)0 && b != (VT)0);
#elif VOPID == CLR_OP_LOR
    return (VT)(a != (VT)0 || b != (VT)0);
#elif VOPID == CLR_OP_CUSTOM
    return (VT)(VCUSTOM(a, b));
#else
#error "clreduce: unknown op"
#endif
}
#endif

// ---- the accumulator: identity, constructor and combine ------------------------------------
#if VSHAPE == CLR_SHAPE_PLAIN
static inline VA VAR(clr_identity)(void) { return VID; }
static inline VA VAR(clr_op)(VA a, VA b) { return VAR(clr_eop)(a, b); }
#elif VSHAPE == CLR_SHAPE_FLAGGED
// Identity-less: `has` says whether any value was combined; an empty accumulator is neutral.
static inline VA VAR(clr_identity)(void) {
    VA r;
    r.v = (VT)0;
    r.has = 0u;
    return r;
}
static inline VA VAR(clr_mk)(VT x) {
    VA r;
    r.v = x;
    r.has = 1u;
    return r;
}
static inline VA VAR(clr_op)(VA a, VA b) {
    if (!a.has) return b;
    if (!b.has) return a;
    VA r;
    r.v = VAR(clr_eop)(a.v, b.v);
    r.has = 1u;
    return r;
}
#else
// (value, index): ties go to the lower index, so the result does not depend on the order.
static inline VA VAR(clr_identity)(void) {
    VA r;
    r.v = VID;
    r.i = ULONG_MAX;
#if VPAD
    r.pad = 0u;
#endif
    return r;
}
static inline VA VAR(clr_mk)(VT x, ulong i) {
    VA r;
    r.v = x;
    r.i = i;
#if VPAD
    r.pad = 0u;
#endif
    return r;
}
static inline VA VAR(clr_op)(VA a, VA b) {
#if VOPID == CLR_OP_ARGMIN
    return (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a;
#else
    return (a.v < b.v || (b.v == a.v && b.i < a.i)) ? b : a;
#endif
}
// One element into an accumulator (the body's `combine(r, x, j)`): clr_op(a, clr_mk(x, j)),
// written as a rarely taken branch. On a stream the running extreme is seldom beaten, so the
// common path is one compare; the select form above costs three compares and a 16-byte select
// per element, which made argmin on CPU runtimes instruction-bound (decision 27). Same result
// for every input, NaN included (every comparison with NaN is false: the accumulator stays).
static inline VA VAR(clr_push)(VA a, VT x, ulong j) {
#if VOPID == CLR_OP_ARGMIN
    if (x <= a.v) {
        if (x < a.v || j < a.i) return VAR(clr_mk)(x, j);
    }
#else
    if (x >= a.v) {
        if (a.v < x || j < a.i) return VAR(clr_mk)(x, j);
    }
#endif
    return a;
}
#endif

// Folding a work-item's accumulators (kernels/reduce.cl CLR_FOLD): the combine itself (an
// exact sum's fold, in var_exact.cl, also deposits into its superaccumulator ls).
static inline VA VAR(clr_fold)(VA a, VA b, __local long* ls) { return VAR(clr_op)(a, b); }

// ---- atomics (only compiled where the plan uses them) ---------------------------------------
#if VGS == CLR_GS_LATOMIC || VXS == CLR_XS_ATOMIC
#if VKIND == CLR_KIND_INT32 || VKIND == CLR_KIND_INT64
// 32-bit: OpenCL 1.1 core atomic_*; 64-bit: cl_khr_int64_{base,extended}_atomics atom_*.
#if VKIND == CLR_KIND_INT32
#define CLR_A_(f) atomic_##f
#else
#define CLR_A_(f) atom_##f
#endif
#define CLR_ATOMIC_APPLY_(space)                                                   \
    static inline void VAR(clr_atomic_##space)(volatile __##space VT * p, VT v) {  \
        CLR_ATOMIC_BODY_                                                           \
    }
#if VAOPID == CLR_OP_PLUS
#define CLR_ATOMIC_BODY_ CLR_A_(add)(p, v);
#elif VAOPID == CLR_OP_MIN
#define CLR_ATOMIC_BODY_ CLR_A_(min)(p, v);
#elif VAOPID == CLR_OP_MAX
#define CLR_ATOMIC_BODY_ CLR_A_(max)(p, v);
#elif VAOPID == CLR_OP_AND
#define CLR_ATOMIC_BODY_ CLR_A_(and)(p, v);
#elif VAOPID == CLR_OP_OR
#define CLR_ATOMIC_BODY_ CLR_A_(or)(p, v);
#elif VAOPID == CLR_OP_XOR
#define CLR_ATOMIC_BODY_ CLR_A_(xor)(p, v);
#elif VAOPID == CLR_OP_LAND
#define CLR_ATOMIC_BODY_ CLR_A_(and)(p, (VT)(v != (VT)0));
#elif VAOPID == CLR_OP_LOR
#define CLR_ATOMIC_BODY_ CLR_A_(or)(p, (VT)(v != (VT)0));
#else
#error "clreduce: no integer atomic for this op"
#endif
#else
// Floating point: cl_ext_float_atomics through OpenCL C 2.0 atomics (relaxed order).
#if VKIND == CLR_KIND_F32
#define CLR_AT_ atomic_float
#else
#define CLR_AT_ atomic_double
#endif
#if VAOPID == CLR_OP_PLUS
#define CLR_AF_ atomic_fetch_add_explicit
#elif VAOPID == CLR_OP_MIN
#define CLR_AF_ atomic_fetch_min_explicit
#elif VAOPID == CLR_OP_MAX
#define CLR_AF_ atomic_fetch_max_explicit
#else
#error "clreduce: no float atomic for this op"
#endif
#define CLR_ATOMIC_APPLY_(space)                                                                      \
    static inline void VAR(clr_atomic_##space)(volatile __##space VT * p, VT v) {                     \
        CLR_AF_((volatile __##space CLR_AT_*)p, v, memory_order_relaxed, CLR_SCOPE_##space);          \
    }
#define CLR_SCOPE_local memory_scope_work_group
#define CLR_SCOPE_global memory_scope_device
#endif
CLR_ATOMIC_APPLY_(local)
CLR_ATOMIC_APPLY_(global)
#undef CLR_ATOMIC_APPLY_
#undef CLR_ATOMIC_BODY_
#undef CLR_A_
#undef CLR_AT_
#undef CLR_AF_
#undef CLR_SCOPE_local
#undef CLR_SCOPE_global
#endif

// ---- sub-group reduce ---------------------------------------------------------------------
#if VGS == CLR_GS_SG && CLR_SG_PTX
// NVIDIA: a warp of 32 reduces with shfl.sync.down (any op: the shuffle moves bits, clr_op
// combines). Lane 0 holds the warp's result. The work-group size is a multiple of 32.
static inline VA VAR(clr_warp_reduce)(VA v) {
    for (uint off = 16; off > 0; off >>= 1) {
        union { VA v; uint u[sizeof(VA) / 4]; } a, b;
        a.v = v;
        for (uint w = 0; w < sizeof(VA) / 4; ++w)
            asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(b.u[w]) : "r"(a.u[w]), "r"(off));
        v = VAR(clr_op)(v, b.v);
    }
    return v;
}
#elif VGS == CLR_GS_SG
static inline VT VAR(clr_sg_reduce)(VT v) {
#if VOPID == CLR_OP_PLUS
    return sub_group_reduce_add(v);
#elif VOPID == CLR_OP_MIN
    return sub_group_reduce_min(v);
#elif VOPID == CLR_OP_MAX
    return sub_group_reduce_max(v);
#elif VOPID == CLR_OP_LAND
    return (VT)sub_group_reduce_min((int)(v != (VT)0));
#elif VOPID == CLR_OP_LOR
    return (VT)sub_group_reduce_max((int)(v != (VT)0));
#elif VOPID == CLR_OP_MUL
    return sub_group_non_uniform_reduce_mul(v);
#elif VOPID == CLR_OP_AND
    return sub_group_non_uniform_reduce_and(v);
#elif VOPID == CLR_OP_OR
    return sub_group_non_uniform_reduce_or(v);
#elif VOPID == CLR_OP_XOR
    return sub_group_non_uniform_reduce_xor(v);
#endif
}
#endif

// ---- the work-group step: every work-item passes its value; every work-item gets the result.
// Callers that use `lm` again put a barrier between the two uses.
static inline VA VAR(clr_group)(VA v, __local VA* lm) {
#if VGS == CLR_GS_TREE
    // Sequential addressing: work-item l combines l and l + s, so active work-items are
    // contiguous (no divergence inside a warp until s < warp size) and consecutive work-items
    // touch consecutive banks (no bank conflicts). A work-group that is not a power of two first
    // folds its top CLR_WG - CLR_WG_POW2 values into the bottom ones.
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
#pragma unroll
    for (uint s = CLR_WG_POW2 / 2; s > 0; s >>= 1) {
        if (lid < s) {
            acc = VAR(clr_op)(acc, lm[lid + s]);
            lm[lid] = acc;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return lm[0];
#elif VGS == CLR_GS_WG
#if VOPID == CLR_OP_PLUS
    return work_group_reduce_add(v);
#elif VOPID == CLR_OP_MIN
    return work_group_reduce_min(v);
#elif VOPID == CLR_OP_MAX
    return work_group_reduce_max(v);
#elif VOPID == CLR_OP_LAND
    return (VT)work_group_all(v != (VT)0);
#elif VOPID == CLR_OP_LOR
    return (VT)work_group_any(v != (VT)0);
#else
#error "clreduce: no work-group collective for this op"
#endif
#elif VGS == CLR_GS_SG && CLR_SG_PTX
    const uint lid = (uint)get_local_id(0);
    const uint lane = lid & 31u, warp = lid >> 5;
    VA s = VAR(clr_warp_reduce)(v);
    if (lane == 0) lm[warp] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp == 0) {
        VA t = lane < CLR_WG / 32 ? lm[lane] : VAID;
        t = VAR(clr_warp_reduce)(t);
        if (lane == 0) lm[VLSLOTS - 1] = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return lm[VLSLOTS - 1];
#elif VGS == CLR_GS_SG
    // Each sub-group reduces in registers; sub-group leaders meet in local memory; the first
    // sub-group reduces the leaders' values. Non-uniform last sub-groups are handled by the
    // sub-group functions themselves.
    VT s = VAR(clr_sg_reduce)(v);
    const uint sg = (uint)get_sub_group_id();
    const uint sl = (uint)get_sub_group_local_id();
    if (sl == 0) lm[sg] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (sg == 0) {
        const uint nsg = (uint)get_num_sub_groups();
        const uint sgs = (uint)get_sub_group_size();
        VT t = VID;
        for (uint j = sl; j < nsg; j += sgs) t = VAR(clr_op)(t, lm[j]);
        t = VAR(clr_sg_reduce)(t);
        if (sl == 0) lm[VLSLOTS - 1] = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return lm[VLSLOTS - 1];
#elif VGS == CLR_GS_LATOMIC
    if (get_local_id(0) == 0) *lm = VID;
    barrier(CLK_LOCAL_MEM_FENCE);
    VAR(clr_atomic_local)(lm, v);
    barrier(CLK_LOCAL_MEM_FENCE);
    return *lm;
#else
#error "clreduce: unknown work-group step"
#endif
}

// ---- publishing partials -------------------------------------------------------------------
// Invariant: between launches every partial slot holds 0 (zeroed at allocation, and every
// reader clears what it read). OpenCL 1.2 has no acquire/release, so last-group detection
// publishes a partial with an atomic add onto its zero slot and the last group takes it with an
// atomic exchange against 0: race-free under the 1.2 memory model, and neither Oclgrind's race
// nor its uninitialised-value checker objects. Floats travel as their bit patterns
// (0 + bits = bits). 64-bit values need
// cl_khr_int64_base_atomics (CLR_I64_ATOMICS); without it a plain store and a volatile load
// after mem_fence and atomic_inc remain.
#if !CLR_C11 && VSHAPE == CLR_SHAPE_PLAIN && (VKIND == CLR_KIND_INT32 || VKIND == CLR_KIND_F32 || CLR_I64_ATOMICS)
#define VAR_ATOMIC_PARTIALS 1
static inline void VAR(clr_publish)(__global VA* p, VA v) {
#if VKIND == CLR_KIND_INT32
    atomic_add((volatile __global VT*)p, v);
#elif VKIND == CLR_KIND_F32
    atomic_add((volatile __global int*)p, as_int(v));
#elif VKIND == CLR_KIND_INT64
    atom_add((volatile __global VT*)p, v);
#else
    atom_add((volatile __global long*)p, as_long(v));
#endif
}
static inline VA VAR(clr_take)(__global VA* p) {
#if VKIND == CLR_KIND_INT32
    return atomic_xchg((volatile __global VT*)p, (VT)0);
#elif VKIND == CLR_KIND_F32
    return as_float(atomic_xchg((volatile __global int*)p, 0));
#elif VKIND == CLR_KIND_INT64
    return atom_xchg((volatile __global VT*)p, (VT)0);
#else
    return as_double(atom_xchg((volatile __global long*)p, 0L));
#endif
}
#else
// Structured partials (identity-less, argmin/argmax) take this path only with acquire/release
// on the counter (OpenCL C 2.0, or NVIDIA PTX: CLR_PTX_ACQREL, where plain partials of the
// same kernel stay atomic above), or in the extra pass (src/plan.rs cross_supported).
static inline void VAR(clr_publish)(__global VA* p, VA v) { *p = v; }
static inline VA VAR(clr_take)(__global VA* p) {
    VA v = *(volatile __global VA*)p;
    // Leave the slot at 0, padding included: a later launch may publish a plain value onto
    // it atomically.
    for (uint w = 0; w < sizeof(VA) / 4; ++w) ((__global uint*)p)[w] = 0u;
    return v;
}
#endif

// ---- writing the result ---------------------------------------------------------------------
// Element e of the variable becomes g combined with its initial value (Rk_INIT) or g alone
// (initialize_to_identity). An identity-less accumulator that saw nothing leaves it unchanged.
static inline void VAR(clr_store)(__global VT* res, __global ulong* aux, size_t e, VA g) {
#if VSHAPE == CLR_SHAPE_PLAIN
#if VINIT
    res[e] = VAR(clr_op)(res[e], g);
#else
    res[e] = g;
#endif
#elif VSHAPE == CLR_SHAPE_FLAGGED
    if (g.has) res[e] = VINIT ? VAR(clr_eop)(res[e], g.v) : g.v;
#else
#if VINIT
    g = VAR(clr_op)(VAR(clr_mk)(res[e], aux[e]), g);
#endif
    res[e] = g.v;
    aux[e] = g.i;
#endif
}

#if !VSPAN
// The variable's initial value as an accumulator (the identity under initialize_to_identity),
// for the plain and (value, index) shapes; an identity-less variable's value is read directly
// in VAR(clr_reduce_partials) (a struct-returning wrapper around clr_mk there left an
// intrinsic Oclgrind 21.10 cannot run, llvm.experimental.noalias.scope.decl). The finishing
// work-group loads it before it takes the partials, so the two latencies overlap instead of
// adding up at the end of the launch.
#if VSHAPE != CLR_SHAPE_FLAGGED
static inline VA VAR(clr_initial)(__global VT* res, __global ulong* aux) {
#if !VINIT
    return VAID;
#elif VSHAPE == CLR_SHAPE_PLAIN
    return res[0];
#else
    return VAR(clr_mk)(res[0], aux[0]);
#endif
}

// Writes the total t (initial value already combined in).
static inline void VAR(clr_store_total)(__global VT* res, __global ulong* aux, VA t) {
#if VSHAPE == CLR_SHAPE_PLAIN
    res[0] = t;
#else
    res[0] = t.v;
    aux[0] = t.i;
#endif
}
#endif

// ---- the cross-group step -----------------------------------------------------------------
// Called by every work-item with the work-group's value g.
static inline void VAR(clr_cross)(VA g, __global VT* res, __global VA* part) {
#if VXS == CLR_XS_ATOMIC
    if (get_local_id(0) == 0) VAR(clr_atomic_global)(res, g);
#elif VXS == CLR_XS_LAST
    if (get_local_id(0) == 0) VAR(clr_publish)(&part[get_group_id(0)], g);
#else
    if (get_local_id(0) == 0) part[get_group_id(0)] = g;
#endif
}

static inline void VAR(clr_pre)(__local VA* lm, __local long* ls, __global VT* res, __global VA* part) {}

// After the work-items' loop: the work-group step, then the cross-group step.
static inline void VAR(clr_group_cross)(VA acc, __local VA* lm, __local long* ls, __global VT* res, __global VA* part) {
    VAR(clr_cross)(VAR(clr_group)(acc, lm), res, part);
}

// Reduces partials[0..count) with one work-group and writes the variable.
static inline void VAR(clr_reduce_partials)(__global VT* res, __global ulong* aux, __global VA* part, uint count, __local VA* lm, int serial) {
    const uint lid = (uint)get_local_id(0);
    // Every work-item loads it (one address: a broadcast), only work-item 0 uses it. A value
    // set by work-item 0 alone and kept across the barriers below came out wrong on PoCL 3.1
    // with three variables in the tail (tests/cli.rs custom_max_without_identity).
#if VSHAPE == CLR_SHAPE_FLAGGED
    const VT init = VINIT ? res[0] : (VT)0;
#else
    const VA init = VAR(clr_initial)(res, aux);
#endif
    VA acc = VAID;
    // Each slot is read once (and left at 0 for the next launch on the atomic-publish path).
    for (uint j = lid; j < count; j += CLR_WG) acc = VAR(clr_op)(acc, VAR(clr_take)(&part[j]));
    // The global fence orders every work-item's load of the variable above before work-item
    // 0's store below (Oclgrind reports the pair as a race under a local fence alone).
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    VA g;
#if VGS == CLR_GS_TREE
    if (serial) {
        // Workaround serial_last_group_tree (PoCL 3.x): one barrier, then work-item 0 combines.
        lm[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        g = lm[0];
        if (lid == 0)
            for (uint j = 1; j < CLR_WG; ++j) g = VAR(clr_op)(g, lm[j]);
    } else
#endif
    {
        g = VAR(clr_group)(acc, lm);
    }
#if VSHAPE == CLR_SHAPE_FLAGGED && VXRAW
    // Raw mode (a multi-device share): the share's value alone, and whether it saw any value;
    // the host combines the shares that did with the variable's initial value.
    if (lid == 0) {
        if (g.has) res[0] = g.v;
        aux[0] = g.has ? 1UL : 0UL;
    }
#elif VSHAPE == CLR_SHAPE_FLAGGED
    // An identity-less accumulator that saw nothing leaves the variable unchanged.
    if (lid == 0 && g.has) res[0] = VINIT ? VAR(clr_eop)(init, g.v) : g.v;
#else
    if (lid == 0) VAR(clr_store_total)(res, aux, VAR(clr_op)(init, g));
#endif
}

#else
// ---- span reductions: VSPAN independent elements ------------------------------------------
// The body updates element e of its copy through VAR(clr_supd); the copy is local (shared or
// one per work-item), the result itself (global atomics) or a row of global scratch.
#if VSSTORE == CLR_SS_LSHARED
static inline void VAR(clr_supd)(__local VT* p, size_t e, VT x) { VAR(clr_atomic_local)(&p[e], x); }
#elif VSSTORE == CLR_SS_LPRIVATE
static inline void VAR(clr_supd)(__local VT* p, size_t e, VT x) { p[e] = VAR(clr_eop)(p[e], x); }
#elif VSSTORE == CLR_SS_GATOMIC
static inline void VAR(clr_supd)(__global VT* p, size_t e, VT x) { VAR(clr_atomic_global)(&p[e], x); }
#elif VSSTORE == CLR_SS_GCOPIES
// VSCOPIES copies in the partials (zeroed: the op's identity is all-zero bits); work-group g
// updates copy g mod VSCOPIES, so fewer updates collide on one address.
static inline void VAR(clr_supd)(__global VT* p, size_t e, VT x) {
    VAR(clr_atomic_global)(&p[(size_t)(get_group_id(0) % VSCOPIES) * VSPAN + e], x);
}
#else
static inline void VAR(clr_supd)(__global VT* p, size_t e, VT x) { p[e] = VAR(clr_eop)(p[e], x); }
#endif

// Before the work-items' loop: the copies start at the identity.
static inline void VAR(clr_pre)(__local VA* lm, __local long* ls, __global VT* res, __global VA* part) {
#if VSSTORE == CLR_SS_LSHARED || VSSTORE == CLR_SS_LPRIVATE
    for (uint j = (uint)get_local_id(0); j < VLSLOTS; j += CLR_WG) lm[j] = VID;
    barrier(CLK_LOCAL_MEM_FENCE);
#elif VSSTORE == CLR_SS_GPRIVATE
    __global VT* row = part + get_global_id(0) * (size_t)VSPAN;
    for (uint j = 0; j < VSPAN; ++j) row[j] = VID;
#endif
}

// After the loop: fold the work-group's copies element by element and pass each element on.
static inline void VAR(clr_group_cross)(VA acc, __local VA* lm, __local long* ls, __global VT* res, __global VA* part) {
#if VSSTORE == CLR_SS_LSHARED || VSSTORE == CLR_SS_LPRIVATE
    barrier(CLK_LOCAL_MEM_FENCE);
    const size_t base = get_group_id(0) * (size_t)VSPAN;
    for (uint e = (uint)get_local_id(0); e < VSPAN; e += CLR_WG) {
        VT g = lm[e];
#if VSSTORE == CLR_SS_LPRIVATE
        for (uint c = 1; c < CLR_WG; ++c) g = VAR(clr_eop)(g, lm[c * VSPAN + e]);
#endif
#if VXS == CLR_XS_ATOMIC
        VAR(clr_atomic_global)(&res[e], g);
#elif VXS == CLR_XS_LAST
        VAR(clr_publish)(&part[base + e], g);
#else
        part[base + e] = g;
#endif
    }
#if VXS == CLR_XS_LAST
    // Every work-item published elements: all of them must be visible before work-item 0
    // takes the work-group's ticket (kernels/reduce.cl), or the last work-group can read a
    // slot before it is published (and the late value stays in the slot for the next launch).
#if CLR_C11
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
#else
    barrier(CLK_GLOBAL_MEM_FENCE);
#endif
#endif
#endif
}

#if VSSTORE == CLR_SS_GCOPIES
// The span pass (clr_finish_spans, one work-item per element, as many work-groups as it takes):
// the element's copies, each zeroed for the next launch, then the variable's initial value.
static inline void VAR(clr_spass)(__global VT* res, __global ulong* aux, __global VA* part) {
    const size_t e = get_global_id(0);
    if (e >= VSPAN) return;
    VT acc = VID;
    for (uint r = 0; r < VSCOPIES; ++r) {
        acc = VAR(clr_eop)(acc, part[(size_t)r * VSPAN + e]);
        part[(size_t)r * VSPAN + e] = 0;
    }
    VAR(clr_store)(res, aux, e, acc);
}
#else
// One work-group folds `rows` copies of the span, element by element, into the variable.
static inline void VAR(clr_reduce_partials)(__global VT* res, __global ulong* aux, __global VA* part, uint count, __local VA* lm, int serial) {
#if VSSTORE == CLR_SS_GPRIVATE
    const size_t rows = (size_t)count * CLR_WG;
#else
    const size_t rows = count;
#endif
    for (uint e = (uint)get_local_id(0); e < VSPAN; e += CLR_WG) {
        VT acc = VID;
        for (size_t r = 0; r < rows; ++r) acc = VAR(clr_eop)(acc, VAR(clr_take)(&part[r * VSPAN + e]));
        VAR(clr_store)(res, aux, e, acc);
    }
}
#endif
#endif

static inline void VAR(clr_last)(__global VT* res, __global ulong* aux, __global VA* part, uint count, __local VA* lm, __local long* ls) {
#if VXS == CLR_XS_LAST
    VAR(clr_reduce_partials)(res, aux, part, count, lm, CLR_SERIAL_FINISH);
#endif
}

static inline void VAR(clr_pass)(__global VT* res, __global ulong* aux, __global VA* part, uint count, __local VA* lm, __local long* ls) {
#if VXS == CLR_XS_PASS && VSSTORE != CLR_SS_GCOPIES
    VAR(clr_reduce_partials)(res, aux, part, count, lm, 0);
#endif
}

#if VSSTORE != CLR_SS_GCOPIES
// Only a global-copies span has a span pass (kernels/reduce.cl clr_finish_spans).
static inline void VAR(clr_spass)(__global VT* res, __global ulong* aux, __global VA* part) {}
#endif
