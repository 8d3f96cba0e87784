// clreduce: ids for 1-, 2- and 3-D ranges, included between the variables and the user body.
// Specialized by CLR_RANK and, for rank > 1, CLR_E0..CLR_E2 (global extents, 1 beyond the
// rank) and CLR_L0..CLR_L2 (work-group extents in the nd_range form). Ids are row-major, as in
// SYCL: the last dimension varies fastest, and the linear id is
// (id0 * E1 + id1) * E2 + id2.
//
// A multi-dimensional nd_range runs as the equivalent 1-D launch (work-groups of
// L0 * L1 * L2 work-items); the functions below give each work-item its ids in the user's
// dimensions, and the body sees them through get_global_id(d) and friends (macros defined
// around the body in src/codegen.rs).

// The body's `item`: its id and the range per dimension, the linear id and the rank.
typedef struct {
    ulong id[3];
    ulong range[3];
    ulong linear_id;
    uint dims;
} clr_item;

#if CLR_FORM == CLR_FORM_ND && CLR_RANK > 1
#define CLR_G0 (CLR_E0 / CLR_L0)
#define CLR_G1 (CLR_E1 / CLR_L1)
#define CLR_G2 (CLR_E2 / CLR_L2)
static inline size_t clr_split(size_t x, uint d, size_t e1, size_t e2) {
    return d == 0 ? x / (e1 * e2) : d == 1 ? (x / e2) % e1 : d == 2 ? x % e2 : 0;
}
static inline size_t clr_local_id(uint d) { return clr_split(get_local_id(0), d, CLR_L1, CLR_L2); }
static inline size_t clr_group_id(uint d) { return clr_split(get_group_id(0), d, CLR_G1, CLR_G2); }
static inline size_t clr_local_size(uint d) {
    return d == 0 ? CLR_L0 : d == 1 ? CLR_L1 : d == 2 ? CLR_L2 : 1;
}
static inline size_t clr_global_size(uint d) {
    return d == 0 ? CLR_E0 : d == 1 ? CLR_E1 : d == 2 ? CLR_E2 : 1;
}
static inline size_t clr_num_groups(uint d) {
    return d == 0 ? CLR_G0 : d == 1 ? CLR_G1 : d == 2 ? CLR_G2 : 1;
}
static inline size_t clr_global_id(uint d) {
    return d < 3 ? clr_group_id(d) * clr_local_size(d) + clr_local_id(d) : 0;
}
static inline size_t clr_local_linear_id(void) { return get_local_id(0); }
static inline size_t clr_linear_id(void) {
    return (clr_global_id(0) * CLR_E1 + clr_global_id(1)) * CLR_E2 + clr_global_id(2);
}
#else
static inline size_t clr_linear_id(void) { return get_global_id(0); }
#endif

static inline clr_item clr_make_item(ulong i, ulong n) {
    clr_item it;
    it.linear_id = i;
    it.dims = CLR_RANK;
#if CLR_RANK == 1
    it.id[0] = i;
    it.id[1] = 0;
    it.id[2] = 0;
    it.range[0] = n;
    it.range[1] = 1;
    it.range[2] = 1;
#else
#if CLR_FORM == CLR_FORM_ND
    for (uint d = 0; d < 3; ++d) it.id[d] = clr_global_id(d);
#else
    it.id[0] = i / ((ulong)CLR_E1 * CLR_E2);
    it.id[1] = (i / CLR_E2) % CLR_E1;
    it.id[2] = i % CLR_E2;
#endif
    it.range[0] = CLR_E0;
    it.range[1] = CLR_E1;
    it.range[2] = CLR_E2;
#endif
    return it;
}
