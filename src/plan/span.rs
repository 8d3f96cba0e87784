//! Span reductions (`reduction_span`): where a span's work-group copies live ([`SpanStore`]).

use super::cross::cross_supported;
use super::group::atomic_capable;
use super::model::{shape_of, AccShape, SpanStore};
use super::request::{FormRequest, VarRequest};
use super::strategy::{CrossAlgo, Determinism, GroupAlgo, Strategy};
use crate::caps::{DeviceCaps, DeviceKind, Space};
use crate::error::{Error, Result};
use crate::ops::{Op, Operator};
use crate::types::ElemType;

/// Most work-items (or indices) a `GlobalDigits` span may have: a digit of 64 bits holds 2^32
/// deposits below 2^31 in magnitude, so up to 4 updates of one element per index stay exact.
pub(super) const DIGITS_MAX_ITEMS: u64 = 1 << 30;

/// Longs of one element's digits in a `GlobalDigits` span: 32 digits of 8 bits (an f32 with
/// biased exponent ex has its 24-bit significand at bit ex - 1 above 2^-149) and the NaN, +inf and
/// -inf counters (kernels/var_exact.cl).
pub(crate) const DIGITS_LONGS: usize = 35;

/// Whether a span of `v` can keep narrow-digit superaccumulators in global memory: f32 sums on
/// a device with 64-bit global atomics, over at most [`DIGITS_MAX_ITEMS`] work-items, the digits
/// within one allocation.
pub(super) fn digits_ok(caps: &DeviceCaps, v: &VarRequest, len: usize, form: FormRequest) -> bool {
    let items = match form {
        FormRequest::Range { n } => n,
        FormRequest::NdRange { global, .. } => global,
    };
    v.ty == ElemType::F32
        && v.op == Operator::Builtin(Op::Plus)
        && caps.atomics.int64_base
        && caps.atomics.int32_global_base
        && items <= DIGITS_MAX_ITEMS
        && (len * DIGITS_LONGS * 8) as u64 <= caps.max_alloc
}

/// Slots (copies x elements) that `global-copies` and `global-digits` spread a GPU span's
/// updates over. Measured on the H200 (2^28 random u32 keys, one global atomic add each,
/// design/bench/2026-11-24-h200-session11-span.txt): 2^14 bins 5726 us, 2^16 3224 us, 2^20 2654
/// us, 2^24 8589 us: fewer addresses collide, more leave L2. Below 2^20 elements a span gets
/// that many slots in copies.
const COPY_SLOTS: usize = 1 << 20;
/// Most copies.
const MAX_COPIES: usize = 64;

/// Copies of a span of `ty` in global scratch (see [`SpanStore::GlobalCopies`]): on GPUs enough
/// to spread the updates over [`COPY_SLOTS`] slots (at most [`MAX_COPIES`], a power of two, and
/// within the scratch cap); 1 for every other store and on CPUs (few threads collide).
pub(super) fn copies(caps: &DeviceCaps, store: SpanStore, len: usize, ty: ElemType) -> usize {
    let bytes = match store {
        SpanStore::GlobalDigits => DIGITS_LONGS * 8,
        SpanStore::GlobalCopies => ty.size(),
        _ => return 1,
    };
    if caps.kind != DeviceKind::Gpu {
        return 1;
    }
    let by_mem = (private_rows_cap(caps) / (len.max(1) * bytes) as u64) as usize;
    let want = (COPY_SLOTS / len.max(1)).min(MAX_COPIES).min(by_mem).max(1);
    1 << want.ilog2()
}

/// Whether the op's identity is all-zero bits in `v`'s type (plus, or, xor on integers,
/// maximum on unsigned ones), so that zeroed scratch starts every copy at it.
fn zero_identity(v: &VarRequest) -> bool {
    !v.ty.is_float()
        && v.op
            .identity(v.ty)
            .is_some_and(|id| id.to_bytes().iter().all(|&b| b == 0))
}

/// The reason of a `GlobalDigits` span.
const DIGITS_WHY: &str = "f32 sums too large for private local copies: one narrow-digit superaccumulator per element in global memory, each update one 64-bit atomic add (exact, so the same bits on every run), an extra pass rounds every element once";

/// The reason of a deterministic float sum span kept as exact superaccumulators in global
/// memory (decision 79).
const GLOBAL_EXACT_WHY: &str = "float sums too large for private local copies and not for narrow digits (f64, or more than 2^30 work-items): one exact superaccumulator per element in global memory, 64-bit atomic deposits (exact, so the same bits on every run), an extra pass rounds every element once";

/// The cross-group step's reason of an exact span in global memory finished by the span pass.
pub(super) const GLOBAL_EXACT_PASS: &str = "exact span in global memory: an extra pass, one work-item per element, rounds each element's superaccumulator once (and zeroes it for the next launch)";

/// Limbs of one element's superaccumulator in an exact span (kernels/exact.cl: the f32 and f64
/// formats with their three counters).
fn exact_limbs(ty: ElemType) -> usize {
    if ty == ElemType::F32 {
        14
    } else {
        71
    }
}

/// Whether float sums of `v` can be deposited into one kit superaccumulator per element in
/// global memory: 64-bit global atomics and the superaccumulators within one allocation.
fn global_exact_ok(caps: &DeviceCaps, v: &VarRequest, len: usize) -> bool {
    v.ty.is_float()
        && v.op == Operator::Builtin(Op::Plus)
        && caps.atomics.int64_base
        && caps.atomics.int32_global_base
        && (len * exact_limbs(v.ty) * 8) as u64 <= caps.max_alloc
}

/// Whether updates of `v` may be float atomics on a span's result in global memory (a relaxed
/// or order-insensitive op, and a device whose atomics cover it).
fn float_global_ok(caps: &DeviceCaps, v: &VarRequest, det: Determinism) -> bool {
    (det == Determinism::Relaxed || !v.op.order_sensitive(v.ty))
        && cross_supported(caps, CrossAlgo::Atomic, v).is_ok()
}

/// Whether `choose_span`'s `store` for `v` is an exact superaccumulator (digits, or the kit's
/// superaccumulators in global memory in place of global float atomics), which the plan rounds
/// with the exact kit.
pub(super) fn store_is_exact(
    caps: &DeviceCaps,
    store: SpanStore,
    v: &VarRequest,
    det: Determinism,
) -> bool {
    match store {
        SpanStore::GlobalDigits => true,
        SpanStore::GlobalAtomic => v.ty.is_float() && !float_global_ok(caps, v, det),
        _ => false,
    }
}

/// Global scratch a `GlobalPrivate` span may take (one copy per work-item).
pub(super) fn private_rows_cap(caps: &DeviceCaps) -> u64 {
    (caps.max_alloc / 2).min(256 << 20)
}

/// Chooses where a span reduction keeps its copies (see [`SpanStore`]).
pub(super) fn choose_span(
    caps: &DeviceCaps,
    v: &VarRequest,
    len: usize,
    det: Determinism,
    strategy: Strategy,
    form: FormRequest,
) -> Result<(SpanStore, GroupAlgo, &'static str)> {
    let unsupported = |missing: String| Error::Unsupported {
        what: format!("a span reduction of {len} x {} with {}", v.ty, v.op),
        missing,
        device: caps.label(),
    };
    if len == 0 {
        return Err(Error::InvalidRange {
            reason: "a span reduction needs at least one element".into(),
        });
    }
    if shape_of(&v.op) == AccShape::Pair {
        return Err(unsupported(
            "argmin/argmax spans: use one argmin variable per element".into(),
        ));
    }
    if v.op.identity(v.ty).is_none() {
        return Err(Error::NoIdentity {
            op: v.op.to_string(),
            ty: v.ty,
            needed_for: "a span reduction starts its work-group copies at the identity",
        });
    }
    let relaxed_ok = det == Determinism::Relaxed || !v.op.order_sensitive(v.ty);
    let shared_ok = atomic_capable(caps, v, Space::Local) && relaxed_ok;
    let global_ok =
        float_global_ok(caps, v, det) && strategy.cross.is_none_or(|c| c == CrossAlgo::Atomic);
    let bytes = (len * v.ty.size()) as u64;
    let budget = caps.local_mem_size.saturating_sub(64);
    let gpu = caps.kind == DeviceKind::Gpu;
    // Work-items sharing the work-group: fixed in nd_range, shrinkable in range.
    let private_fits = |min_local: usize| match form {
        FormRequest::NdRange { local, .. } => local as u64 * bytes <= budget,
        FormRequest::Range { .. } => min_local as u64 * bytes <= budget,
    };
    match strategy.group {
        Some(GroupAlgo::LocalAtomic) => {
            if !shared_ok {
                return Err(unsupported(if atomic_capable(caps, v, Space::Local) {
                    "run-to-run determinism with float atomics (ask for relaxed determinism)".into()
                } else {
                    format!("fast local atomics for {} on {}", v.op, v.ty)
                }));
            }
            if bytes > budget && global_ok {
                return Ok((SpanStore::GlobalAtomic, GroupAlgo::LocalAtomic, "forced local-atomic, span too large for local memory: every update is a global atomic on the result"));
            }
            return Ok((SpanStore::LocalShared, GroupAlgo::LocalAtomic, "forced local-atomic: one shared copy per work-group"));
        }
        Some(GroupAlgo::Tree) => {
            if !private_fits(1) && bytes <= private_rows_cap(caps) {
                return Ok((SpanStore::GlobalPrivate, GroupAlgo::Tree, "forced tree, span too large for local memory: one private copy per work-item in global scratch"));
            }
            return Ok((SpanStore::LocalPrivate, GroupAlgo::Tree, "forced tree: one private copy per work-item, folded element by element"));
        }
        Some(g) => {
            return Err(unsupported(format!(
                "a span is combined element by element: its work-group step is tree (private copies) or local-atomic (a shared copy), not {g}"
            )))
        }
        None => {}
    }
    if gpu && shared_ok && bytes <= budget / 2 {
        return Ok((
            SpanStore::LocalShared,
            GroupAlgo::LocalAtomic,
            "GPU with fast local atomics: one shared copy per work-group in local memory",
        ));
    }
    // Deterministic f32 sums (no float atomics) whose private copies would leave a GPU's
    // work-groups under a warp, or fit no CPU work-item: exact digits in global memory, with the
    // full launch (global-private would shrink it to fit its scratch).
    let private_ok = (!gpu && private_fits(1)) || (gpu && private_fits(32));
    if !private_ok && !shared_ok && !global_ok && digits_ok(caps, v, len, form) {
        // No group step (as global-private): `tree` names it, since the updates are integer
        // atomics, not float ones.
        return Ok((SpanStore::GlobalDigits, GroupAlgo::Tree, DIGITS_WHY));
    }
    // The same on GPUs where digits do not serve (f64 sums: a 53-bit significand leaves no
    // headroom in 8-bit digits): the exact kit's superaccumulator per element in global memory
    // (up to three 64-bit atomics per update), rounded by the span pass, instead of private
    // copies that shrink the launch to a work-group (decision 79).
    // Only where those copies would cut the launch (fewer of them fit the scratch than 2048
    // work-items per compute unit, a full GPU launch; an nd_range's launch is fixed): a span of
    // 7 f64 in work-groups of 1024 keeps its copies.
    let cut = matches!(form, FormRequest::Range { .. })
        && private_rows_cap(caps) / bytes.max(1) < caps.compute_units as u64 * 2048;
    if gpu
        && cut
        && !private_ok
        && !shared_ok
        && !global_ok
        && strategy == Strategy::AUTO
        && global_exact_ok(caps, v, len)
    {
        return Ok((
            SpanStore::GlobalAtomic,
            GroupAlgo::LocalAtomic,
            GLOBAL_EXACT_WHY,
        ));
    }
    if private_ok {
        return Ok((
            SpanStore::LocalPrivate,
            GroupAlgo::Tree,
            if gpu {
                "no usable local atomic: one private copy per work-item in local memory"
            } else {
                "CPU: one private copy per work-item in local memory (plain stores, no atomics)"
            },
        ));
    }
    if shared_ok && bytes <= budget {
        return Ok((
            SpanStore::LocalShared,
            GroupAlgo::LocalAtomic,
            "one shared copy per work-group in local memory, local atomics",
        ));
    }
    if global_ok
        && zero_identity(v)
        && copies(caps, SpanStore::GlobalCopies, len, v.ty) > 1
        && strategy.cross.is_none()
    {
        return Ok((
            SpanStore::GlobalCopies,
            GroupAlgo::LocalAtomic,
            "GPU, too large for local memory: global atomics on copies in global scratch (work-group g updates copy g mod copies, so fewer updates collide on one address), folded by an extra pass",
        ));
    }
    if global_ok {
        return Ok((
            SpanStore::GlobalAtomic,
            GroupAlgo::LocalAtomic,
            "too large for private local copies: every update is a global atomic on the result",
        ));
    }
    if private_fits(1) {
        return Ok((
            SpanStore::LocalPrivate,
            GroupAlgo::Tree,
            "one private copy per work-item in local memory",
        ));
    }
    if bytes <= private_rows_cap(caps) {
        return Ok((SpanStore::GlobalPrivate, GroupAlgo::Tree, "too large for local memory and no usable global atomic: one private copy per work-item in global scratch, folded by an extra pass"));
    }
    Err(Error::LocalMemory {
        local: 1,
        need: bytes,
        have: caps.local_mem_size,
        detail: format!("a span of {len} x {} fits neither local memory nor the scratch limit, and the device has no usable global atomic", v.ty),
        device: caps.label(),
    })
}

/// The cross-group step of a span whose store fixes it: updates that are already global
/// atomics on the result, or per-work-item copies in global scratch that only an extra pass
/// can fold.
pub(super) fn fixed_cross(
    caps: &DeviceCaps,
    strategy: Strategy,
    store: SpanStore,
) -> Result<(CrossAlgo, String)> {
    if store == SpanStore::GlobalAtomic {
        return Ok((
            CrossAlgo::Atomic,
            "the updates themselves are global atomics on the result".to_string(),
        ));
    }
    if store == SpanStore::GlobalCopies {
        return Ok((
            CrossAlgo::ExtraPass,
            "an extra pass, one work-item per element, folds the copies (and zeroes them for the next launch)".to_string(),
        ));
    }
    if store == SpanStore::GlobalDigits {
        return Ok((
            CrossAlgo::ExtraPass,
            "an extra pass, one work-item per element, rounds each element's digits once (and zeroes them for the next launch)".to_string(),
        ));
    }
    if strategy.cross.is_some_and(|c| c != CrossAlgo::ExtraPass) {
        return Err(Error::Unsupported {
            what: format!(
                "cross-group step {} for a span kept in global scratch",
                strategy.cross.unwrap_or(CrossAlgo::ExtraPass)
            ),
            missing: "local memory for the span's work-group copies (only an extra pass folds per-work-item copies)".into(),
            device: caps.label(),
        });
    }
    Ok((
        CrossAlgo::ExtraPass,
        "one extra pass folds the per-work-item copies element by element".to_string(),
    ))
}

/// Where an exact span (`Determinism::Exact`, a span of float sums) keeps its
/// superaccumulators, one per element: in local memory when they fit (updates are 64-bit local
/// atomics, each work-group adds its normalized copies to the global ones), else in global
/// memory (updates are 64-bit global atomics). Either way the last work-group rounds every
/// element once. Without 64-bit atomics an exact span is refused.
pub(super) fn choose_exact_span(
    caps: &DeviceCaps,
    v: &VarRequest,
    len: usize,
    strategy: Strategy,
    form: FormRequest,
) -> Result<(SpanStore, &'static str)> {
    let unsupported = |missing: String| Error::Unsupported {
        what: format!("an exact span of {len} x {}", v.ty),
        missing,
        device: caps.label(),
    };
    if len == 0 {
        return Err(Error::InvalidRange {
            reason: "a span reduction needs at least one element".into(),
        });
    }
    let a = &caps.atomics;
    if !(a.int64_base && a.int32_global_base) {
        return Err(unsupported(
            "64-bit global atomics (cl_khr_int64_base_atomics): an exact span deposits every update into its element's superaccumulator".into(),
        ));
    }
    if strategy.group.is_some_and(|g| g != GroupAlgo::LocalAtomic)
        || strategy.cross.is_some_and(|c| c != CrossAlgo::Atomic)
    {
        return Err(unsupported(format!(
            "an exact span runs as local-atomic+atomic (updates are 64-bit atomic deposits), not {strategy}"
        )));
    }
    let bytes = (len * exact_limbs(v.ty) * 8) as u64;
    if a.int32_local_base && bytes <= caps.local_mem_size.saturating_sub(64) / 2 {
        return Ok((
            SpanStore::LocalShared,
            "exact span: one superaccumulator per element in local memory (64-bit local atomic deposits), added to the global ones at the end of each work-group",
        ));
    }
    if strategy == Strategy::AUTO && digits_ok(caps, v, len, form) {
        return Ok((
            SpanStore::GlobalDigits,
            "exact f32 span too large for local memory: one narrow-digit superaccumulator per element in global memory, each update one 64-bit atomic add; an extra pass rounds every element once",
        ));
    }
    Ok((
        SpanStore::GlobalAtomic,
        "exact span: one superaccumulator per element in global memory, every update a 64-bit global atomic deposit",
    ))
}
