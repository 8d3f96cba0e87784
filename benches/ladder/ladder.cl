// The classic reduction optimization ladder (Harris, "Optimizing Parallel Reduction in CUDA"),
// in OpenCL C, f32 sum. Bench-only: run by benches/ladder/ladder.py, never by the library.
//
// Each kernel reduces `n` floats of `in` to one partial per work-group in `out`; the host runs
// the same kernel again over the partials until one value is left.
//
//   WG          work-group size (compile-time, a power of two >= 64)
//   LADDER_SG   build step 5 (needs sub-groups: cl_khr_subgroups or __opencl_c_subgroups)
//
// Step 5 differs from the CUDA original: warp-synchronous code ("unroll the last warp" through
// volatile shared memory without barriers) is not valid OpenCL, so the last 64 partials are
// combined with sub_group_reduce_add instead, and where the device has no sub-groups the step is
// not applicable.

#ifndef WG
#define WG 256
#endif

#if defined(LADDER_SG) && defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif

#define LOCAL_BARRIER barrier(CLK_LOCAL_MEM_FENCE)

// 1: interleaved addressing with divergent branching (tid % (2s) == 0).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
r1_interleaved_divergent(__global const float *in, __global float *out, uint n) {
    __local float s[WG];
    uint tid = get_local_id(0);
    uint i = get_global_id(0);
    s[tid] = i < n ? in[i] : 0.0f;
    LOCAL_BARRIER;
    for (uint st = 1; st < WG; st *= 2) {
        if (tid % (2 * st) == 0)
            s[tid] += s[tid + st];
        LOCAL_BARRIER;
    }
    if (tid == 0)
        out[get_group_id(0)] = s[0];
}

// 2: interleaved addressing, strided index: no divergence, but local-memory bank conflicts.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
r2_interleaved_strided(__global const float *in, __global float *out, uint n) {
    __local float s[WG];
    uint tid = get_local_id(0);
    uint i = get_global_id(0);
    s[tid] = i < n ? in[i] : 0.0f;
    LOCAL_BARRIER;
    for (uint st = 1; st < WG; st *= 2) {
        uint idx = 2 * st * tid;
        if (idx < WG)
            s[idx] += s[idx + st];
        LOCAL_BARRIER;
    }
    if (tid == 0)
        out[get_group_id(0)] = s[0];
}

// 3: sequential addressing: contiguous active work-items, no bank conflicts.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
r3_sequential(__global const float *in, __global float *out, uint n) {
    __local float s[WG];
    uint tid = get_local_id(0);
    uint i = get_global_id(0);
    s[tid] = i < n ? in[i] : 0.0f;
    LOCAL_BARRIER;
    for (uint st = WG / 2; st > 0; st >>= 1) {
        if (tid < st)
            s[tid] += s[tid + st];
        LOCAL_BARRIER;
    }
    if (tid == 0)
        out[get_group_id(0)] = s[0];
}

// Loads two elements WG apart and adds them (steps 4 to 6: 2*WG elements per work-group).
inline float load2(__global const float *in, uint n) {
    uint tid = get_local_id(0);
    uint i = get_group_id(0) * (WG * 2) + tid;
    float v = i < n ? in[i] : 0.0f;
    if (i + WG < n)
        v += in[i + WG];
    return v;
}

// 4: first add during load: half the work-groups, no idle work-items in the first step.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
r4_first_add_during_load(__global const float *in, __global float *out, uint n) {
    __local float s[WG];
    uint tid = get_local_id(0);
    s[tid] = load2(in, n);
    LOCAL_BARRIER;
    for (uint st = WG / 2; st > 0; st >>= 1) {
        if (tid < st)
            s[tid] += s[tid + st];
        LOCAL_BARRIER;
    }
    if (tid == 0)
        out[get_group_id(0)] = s[0];
}

#ifdef LADDER_SG
// 5: as 4, with the last 64 partials combined by sub_group_reduce_add instead of more
// barrier-separated tree levels (the OpenCL form of "unroll the last warp").
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
r5_last_steps_subgroup(__global const float *in, __global float *out, uint n) {
    __local float s[WG];
    __local float sg[WG];
    uint tid = get_local_id(0);
    s[tid] = load2(in, n);
    LOCAL_BARRIER;
    for (uint st = WG / 2; st >= 64; st >>= 1) {
        if (tid < st)
            s[tid] += s[tid + st];
        LOCAL_BARRIER;
    }
    // Every work-item takes part (uniform control flow); those past 64 bring zeros.
    float r = sub_group_reduce_add(tid < 64 ? s[tid] : 0.0f);
    if (get_sub_group_local_id() == 0)
        sg[get_sub_group_id()] = r;
    LOCAL_BARRIER;
    if (tid == 0) {
        float t = 0.0f;
        for (uint k = 0; k < get_num_sub_groups(); k++)
            t += sg[k];
        out[get_group_id(0)] = t;
    }
}
#endif

// The tree with every level unrolled for the compile-time work-group size.
#define LEVEL(S)                                                                              \
    if (WG >= 2 * (S)) {                                                                      \
        if (tid < (S))                                                                        \
            s[tid] += s[tid + (S)];                                                           \
        LOCAL_BARRIER;                                                                        \
    }
#define UNROLLED_TREE                                                                         \
    LEVEL(512) LEVEL(256) LEVEL(128) LEVEL(64) LEVEL(32) LEVEL(16) LEVEL(8) LEVEL(4) LEVEL(2)  \
    LEVEL(1)

// 6: as 4, completely unrolled for the work-group size (the template<blockSize> step).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
r6_complete_unroll(__global const float *in, __global float *out, uint n) {
    __local float s[WG];
    uint tid = get_local_id(0);
    s[tid] = load2(in, n);
    LOCAL_BARRIER;
    UNROLLED_TREE
    if (tid == 0)
        out[get_group_id(0)] = s[0];
}

// 7: many elements per work-item: a fixed number of work-groups strides over the input
// (2*WG*groups per step), each work-item adding into a private accumulator; then as 6.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
r7_many_per_item(__global const float *in, __global float *out, uint n) {
    __local float s[WG];
    uint tid = get_local_id(0);
    uint i = get_group_id(0) * (WG * 2) + tid;
    uint grid = WG * 2 * get_num_groups(0);
    float v = 0.0f;
    while (i < n) {
        v += in[i];
        if (i + WG < n)
            v += in[i + WG];
        i += grid;
    }
    s[tid] = v;
    LOCAL_BARRIER;
    UNROLLED_TREE
    if (tid == 0)
        out[get_group_id(0)] = s[0];
}
