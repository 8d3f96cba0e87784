// CSR offsets checked on the device (src/api/segment_check.rs, design/segments.md "Offsets
// checked on the device"): one pass over off[0..r] that finds what a segmented launch needs
// of them without reading them to the host: the first entry k whose successor is smaller
// (off[k + 1] < off[k], the offsets descend there), the longest segment, and the first and
// last offsets. Work-group g takes entries [g * per, min(r, (g + 1) * per)), its work-items
// stride by CLR_WG through them (consecutive work-items read consecutive entries), and the
// group's minimum and maximum go to res[2g], res[2g + 1]; group 0 also writes off[0] and
// off[r] to res[2G], res[2G + 1]. The host folds the G groups (a few KiB).
//
// Defines: CLR_WG, the work-group size (a power of two).

__kernel __attribute__((reqd_work_group_size(CLR_WG, 1, 1)))
void clr_main(__global const ulong* restrict off, const ulong r, const ulong per,
              __global ulong* restrict res) {
    __local ulong lbad[CLR_WG];
    __local ulong llong[CLR_WG];
    const uint lid = (uint)get_local_id(0);
    const ulong g = get_group_id(0), groups = get_num_groups(0);
    const ulong begin = g * per;
    const ulong end = min(r, begin + per);
    ulong bad = ~(ulong)0, longest = 0;
    for (ulong k = begin + lid; k < end; k += CLR_WG) {
        const ulong a = off[k], b = off[k + 1];
        if (b < a) {
            bad = min(bad, k);
        } else {
            longest = max(longest, b - a);
        }
    }
    lbad[lid] = bad;
    llong[lid] = longest;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLR_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lbad[lid] = min(lbad[lid], lbad[lid + s]);
            llong[lid] = max(llong[lid], llong[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        res[2 * g] = lbad[0];
        res[2 * g + 1] = llong[0];
        if (g == 0) {
            res[2 * groups] = off[0];
            res[2 * groups + 1] = off[r];
        }
    }
}
