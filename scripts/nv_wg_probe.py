"""Developer probe: which kernel feature makes NVIDIA's OpenCL report CL_KERNEL_WORK_GROUP_SIZE 256.

Builds small kernels that add one feature of clreduce's clr_main at a time (reqd_work_group_size,
a local array with barriers, a 64-bit atomic, the last-work-group ticket, -cl-std=CL3.0, 64-bit
indices) and prints each kernel's CL_KERNEL_WORK_GROUP_SIZE. Run on the GPU machine with PyOpenCL
(the .whl wheels): python3 scripts/nv_wg_probe.py [device name part, default NVIDIA]
"""
import sys
import pyopencl as cl

want = sys.argv[1] if len(sys.argv) > 1 else "NVIDIA"
dev = next(d for p in cl.get_platforms() for d in p.get_devices() if want.lower() in (p.name + " " + d.name).lower())
ctx = cl.Context([dev])
print(f"device: {dev.name}, driver {dev.driver_version}, max WG {dev.max_work_group_size}")

BODY_TREE = """
    __local float lm[WG];
    uint lid = get_local_id(0);
    lm[lid] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) lm[lid] += lm[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = lm[0];
"""
cases = {
    "empty": ("", "", ""),
    "empty+reqd": ("__attribute__((reqd_work_group_size(WG,1,1)))", "", ""),
    "tree": ("", BODY_TREE, ""),
    "tree+reqd": ("__attribute__((reqd_work_group_size(WG,1,1)))", BODY_TREE, ""),
    "tree+reqd+atom64": ("__attribute__((reqd_work_group_size(WG,1,1)))", BODY_TREE + "    if (get_local_id(0) == 0) atom_add(c64, 1UL);\n", "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"),
    "tree+reqd+ticket": ("__attribute__((reqd_work_group_size(WG,1,1)))", BODY_TREE + """    __local int last;
    if (get_local_id(0) == 0) { mem_fence(CLK_GLOBAL_MEM_FENCE); last = atomic_inc(cnt) == get_num_groups(0) - 1; }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last && get_local_id(0) == 0) out[0] = 1.0f;
""", ""),
    "tree+reqd+ulong-loop": ("__attribute__((reqd_work_group_size(WG,1,1)))", """
    float a = 0.0f;
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) a += x[i];
""" + BODY_TREE.replace("lm[lid] = x[get_global_id(0)];", "lm[lid] = a;"), ""),
}
for wg in (512, 1024):
    for name, (attr, body, pre) in cases.items():
        src = pre + f"#define WG {wg}\n__kernel {attr} void k(__global const float *x, __global float *out, __global ulong *c64, volatile __global int *cnt, ulong n) {{\n{body}}}\n"
        for opts in ("", "-cl-std=CL3.0", "-cl-std=CL3.0 -cl-nv-maxrregcount=64"):
            try:
                prg = cl.Program(ctx, src).build(options=opts)
                k = prg.k
                lim = k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev)
                # Does a launch of WG work-items per group run anyway, and compute the right thing?
                q = cl.CommandQueue(ctx)
                import numpy as np
                x = np.ones(wg * 4, dtype=np.float32)
                mf = cl.mem_flags
                xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
                ob = cl.Buffer(ctx, mf.READ_WRITE, 4 * 4)
                cb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(1, dtype=np.uint64))
                nb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(1, dtype=np.int32))
                try:
                    k(q, (wg * 4,), (wg,), xb, ob, cb, nb, np.uint64(wg * 4))
                    o = np.zeros(4, dtype=np.float32)
                    cl.enqueue_copy(q, o, ob)
                    q.finish()
                    ran = f"launch with local {wg}: ok, out={o.tolist()}"
                except Exception as e:
                    ran = f"launch with local {wg}: {str(e).splitlines()[0][:80]}"
                print(f"WG={wg:5d} {name:22s} opts={opts!r:42s} CL_KERNEL_WORK_GROUP_SIZE={lim}; {ran}")
            except Exception as e:
                print(f"WG={wg:5d} {name:22s} opts={opts!r:42s} build failed: {str(e).splitlines()[0][:120]}")
