//! The reductions beyond one built-in scalar, as rows of the capability matrix: argmin,
//! argmax, a custom operator with an identity (plain, and declared as plus so atomics may
//! implement it), an identity-less operator, three variables in one launch, and a span. Each
//! runs through `run` (called by `run_case` for a `Case` with a `feature`), which checks the
//! result against a host reference, checks that a refusal is one the capability rules here
//! explain and leaves the results untouched, and that the plan honours the forced steps.
//!
//! The rules (`allowed`) are an independent statement of what each operator needs, not a copy
//! of the planner's code: a mismatch either way fails the case.

use super::*;
use clreduce::check::reference::{unit_roundoff, Rng};
use clreduce::{
    reduction_argmax, reduction_argmin, reduction_span, Buffer, CustomOp, Element, ReduceEvent,
    Reductions,
};

/// A matrix row that is not one built-in op on one scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    ArgMin,
    ArgMax,
    /// `CustomOp::new("a + b").identity(0)`: no atomic may implement it.
    Custom,
    /// `CustomOp::new("a + b").identity(0).atomic(Op::Plus)`.
    CustomAtomic,
    /// `CustomOp::new("a > b ? a : b")` without an identity; only the second half of the
    /// work-items contributes, so whole work-groups combine nothing.
    IdentityLess,
    /// Three variables in one launch: plus, minimum and maximum over the same input.
    SumMinMax,
    /// A span of this many elements with plus: a histogram (integers, `hist[b] += 1`) or a
    /// per-bin sum (floats, `combine(hist[b], x[i])`).
    Span(usize),
}

impl Feature {
    /// Every feature row (the span in two lengths: one small, one 256-bin histogram).
    pub const ALL: [Feature; 8] = [
        Feature::ArgMin,
        Feature::ArgMax,
        Feature::Custom,
        Feature::CustomAtomic,
        Feature::IdentityLess,
        Feature::SumMinMax,
        Feature::Span(7),
        Feature::Span(256),
    ];

    pub fn name(self) -> String {
        match self {
            Feature::ArgMin => "argmin".into(),
            Feature::ArgMax => "argmax".into(),
            Feature::Custom => "custom(a+b)".into(),
            Feature::CustomAtomic => "custom(a+b)-atomic-plus".into(),
            Feature::IdentityLess => "custom(max)-no-identity".into(),
            Feature::SumMinMax => "sum+min+max".into(),
            Feature::Span(len) => format!("span{len}"),
        }
    }

    /// The built-in op that stands for the feature's (first) variable in the shared rules and
    /// in `forces_order_dependence`.
    pub fn op(self) -> Op {
        match self {
            Feature::ArgMin => Op::Minimum,
            Feature::ArgMax | Feature::IdentityLess => Op::Maximum,
            _ => Op::Plus,
        }
    }

    /// Whether initialize_to_identity exists for it (an identity-less op has none).
    pub fn has_identity(self) -> bool {
        self != Feature::IdentityLess
    }
}

/// The built-in op that atomics may implement, for each variable of the feature (`None`: no
/// atomic; a custom op has one only when declared with `CustomOp::atomic`).
fn atomic_ops(f: Feature) -> Vec<Option<Op>> {
    match f {
        Feature::SumMinMax => vec![Some(Op::Plus), Some(Op::Minimum), Some(Op::Maximum)],
        Feature::CustomAtomic | Feature::Span(_) => vec![Some(Op::Plus)],
        Feature::ArgMin | Feature::ArgMax | Feature::Custom | Feature::IdentityLess => vec![None],
    }
}

/// The built-in op whose work-group or sub-group collective may implement each variable
/// (`None`: none; the collectives know the built-in ops only, so a custom op declared as plus
/// still has none, and a span is never reduced by one).
fn collective_ops(f: Feature) -> Vec<Option<Op>> {
    match f {
        Feature::SumMinMax => atomic_ops(f),
        _ => vec![None],
    }
}

/// What the forced steps of `c` need for feature `f` on `caps`: `Err(missing)` names it.
/// - Work-group collectives (`work_group_reduce_*`) exist for built-in ops only; sub-group
///   reduces too, except that NVIDIA's PTX shuffles move any accumulator (whole warps only).
/// - Atomics implement a built-in op (or a custom op declared as one) on a plain value; argmin,
///   argmax and custom ops without a declared atomic have none.
/// - Last-group detection publishes partials to the last work-group: a structure (argmin's
///   pair, the identity-less flag) needs OpenCL C 2.0 acquire/release for that.
/// - A span is combined element by element: its work-group step is a tree (private copies) or
///   local atomics (one shared copy), never a collective. Private copies that do not fit local
///   memory go to global scratch, which only an extra pass folds.
pub fn allowed(caps: &DeviceCaps, c: &Case, f: Feature) -> Result<(), String> {
    rule(caps, c, f, &atomic_ops(f), &collective_ops(f))
}

/// `allowed` for variables whose atomics implement `ops` and whose collectives `coll`.
fn rule(
    caps: &DeviceCaps,
    c: &Case,
    f: Feature,
    ops: &[Option<Op>],
    coll: &[Option<Op>],
) -> Result<(), String> {
    let structured = matches!(f, Feature::ArgMin | Feature::ArgMax | Feature::IdentityLess);
    let name = f.name();
    if let Some(g) = c.strategy.group {
        match (g, f) {
            (GroupAlgo::WgReduce | GroupAlgo::SgReduce, Feature::Span(_)) => {
                return Err(format!("{g} for a span (element by element only)"))
            }
            (GroupAlgo::WgReduce, _) => {
                for op in coll {
                    match op {
                        Some(op) if group_allowed(caps, g, *op, c.ty) => {}
                        _ => return Err(format!("{g} for {name} on {}", c.ty)),
                    }
                }
            }
            (GroupAlgo::SgReduce, _) => {
                let ptx = caps.sub_groups.is_none() && caps.warp_shuffle_ptx;
                for op in coll {
                    let ok = match op {
                        Some(op) => group_allowed(caps, g, *op, c.ty),
                        None => ptx,
                    };
                    if !ok {
                        return Err(format!("{g} for {name} on {}", c.ty));
                    }
                }
                if let (true, Form::NdRange(r)) = (ptx, c.form) {
                    if r.local % 32 != 0 {
                        return Err(format!(
                            "warp shuffles with {} work-items per group",
                            r.local
                        ));
                    }
                }
            }
            (GroupAlgo::LocalAtomic, _) => {
                for op in ops {
                    match op {
                        Some(op) if caps.fast_atomic(*op, c.ty, Space::Local) => {}
                        _ => return Err(format!("{g} for {name} on {}", c.ty)),
                    }
                }
            }
            (GroupAlgo::Tree, _) => {}
        }
    }
    if let Some(x) = c.strategy.cross {
        match x {
            CrossAlgo::Atomic => {
                for op in ops {
                    match op {
                        Some(op) if cross_allowed(caps, x, *op, c.ty, c.init_to_identity) => {}
                        _ => return Err(format!("{x} for {name} on {}", c.ty)),
                    }
                }
            }
            CrossAlgo::LastGroup => {
                if !caps.atomics.int32_global_base {
                    return Err(format!("{x}: 32-bit global atomics"));
                }
                if structured && !caps.c11_atomics() && !caps.acq_rel_ptx {
                    return Err(format!(
                        "{x} for {name}: acquire/release (OpenCL C 2.0 or NVIDIA PTX) to publish a structure"
                    ));
                }
            }
            CrossAlgo::ExtraPass => {}
        }
        if let (Feature::Span(len), Some(GroupAlgo::Tree), Form::NdRange(r)) =
            (f, c.strategy.group, c.form)
        {
            let copies = (r.local * len * c.ty.size()) as u64;
            if copies + 64 > caps.local_mem_size && x != CrossAlgo::ExtraPass {
                return Err(format!(
                    "{x} for a span whose private copies ({copies} bytes) exceed local memory"
                ));
            }
        }
    }
    let atomic_step = c.strategy.group == Some(GroupAlgo::LocalAtomic)
        || c.strategy.cross == Some(CrossAlgo::Atomic);
    let order_sensitive = ops.iter().flatten().any(|op| op.order_sensitive(c.ty));
    if !c.relaxed && atomic_step && order_sensitive {
        return Err(format!(
            "deterministic mode with order-dependent float atomics ({name} on {})",
            c.ty
        ));
    }
    Ok(())
}

/// Checks the steps the plan chose for each variable against the same rules, as if they had
/// been forced: under a mask, the plan must use only what the masked capabilities allow.
fn chosen_steps_allowed(
    caps: &DeviceCaps,
    c: &Case,
    f: Feature,
    plan: &Plan,
) -> Result<(), String> {
    let (all, all_coll) = (atomic_ops(f), collective_ops(f));
    if plan.c11_atomics && !caps.c11_atomics() {
        return Err("the plan uses OpenCL C 2.0 atomics the capabilities lack".into());
    }
    if plan.ptx_acq_rel && (plan.c11_atomics || !caps.acq_rel_ptx) {
        return Err(
            "the plan uses PTX acquire/release the capabilities lack (or beside C11)".into(),
        );
    }
    for (k, v) in plan.vars.iter().enumerate() {
        let (ops, coll) = match f {
            Feature::SumMinMax => (vec![all[k]], vec![all_coll[k]]),
            _ => (all.clone(), all_coll.clone()),
        };
        let as_forced = Case {
            strategy: Strategy::new(v.group, v.cross),
            ..*c
        };
        rule(caps, &as_forced, f, &ops, &coll)
            .map_err(|why| format!("variable {k} chose {}+{}, but: {why}", v.group, v.cross))?;
    }
    Ok(())
}

/// Element types with host arithmetic.
pub trait Num: Element + PartialOrd + Into<Value> {
    fn from_i64(i: i64) -> Self;
    fn wadd(self, o: Self) -> Self;
    fn max_value() -> Self;
    fn min_value() -> Self;
}
macro_rules! int_num {
    ($t:ty) => {
        impl Num for $t {
            fn from_i64(i: i64) -> Self {
                i as $t
            }
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn max_value() -> Self {
                <$t>::MAX
            }
            fn min_value() -> Self {
                <$t>::MIN
            }
        }
    };
}
int_num!(i32);
int_num!(u32);
int_num!(i64);
int_num!(u64);
macro_rules! float_num {
    ($t:ty) => {
        impl Num for $t {
            fn from_i64(i: i64) -> Self {
                i as $t * 0.25
            }
            fn wadd(self, o: Self) -> Self {
                self + o
            }
            fn max_value() -> Self {
                <$t>::INFINITY
            }
            fn min_value() -> Self {
                <$t>::NEG_INFINITY
            }
        }
    };
}
float_num!(f32);
float_num!(f64);

/// Seeded random values in a small range (so argmin/argmax meet ties), never all zeros;
/// non-negative for unsigned types.
pub fn data<T: Num>(n: usize, seed: u64) -> Vec<T> {
    let mut r = Rng::new(seed);
    let unsigned = T::min_value().to_f64() == 0.0;
    (0..n)
        .map(|_| {
            let v = r.range(-40, 40);
            T::from_i64(if unsigned { v + 40 } else { v })
        })
        .collect()
}

pub fn form_size(f: Form) -> u64 {
    match f {
        Form::Range(r) => r.n,
        Form::NdRange(r) => r.global,
    }
}

/// Early return of an `Outcome` from a `Result<_, Outcome>`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(o) => return o,
        }
    };
}
/// Early return of a failure from a device call.
macro_rules! dev {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Outcome::Fail(format!("{e}")),
        }
    };
}

/// Launches `c`'s reductions and sorts the outcome: a refusal must be a device limit, one the
/// rules explain when it is `Unsupported`, and must leave the results as they were
/// (`untouched`); an accepted launch must be one the rules allow and must honour the forced
/// steps.
fn launch(
    q: &Queue,
    c: &Case,
    f: Feature,
    reds: impl Into<Reductions>,
    k: Kernel,
    untouched: &dyn Fn() -> Result<(), String>,
) -> Result<ReduceEvent, Outcome> {
    let verdict = allowed(q.caps(), c, f);
    let mut opts = Options::default().strategy(c.strategy);
    if c.relaxed {
        opts = opts.relaxed();
    }
    let caps = q.caps();
    let ev = match q.parallel_for_reduce_with(c.form, reds, k, opts) {
        Ok(ev) => ev,
        Err(e) if is_device_limit(&e) => {
            if let (Error::Unsupported { .. }, Ok(())) = (&e, &verdict) {
                return Err(Outcome::Fail(format!(
                    "refused although the capabilities allow it: {e}"
                )));
            }
            return Err(match untouched() {
                Ok(()) => Outcome::Skip(e.to_string()),
                Err(m) => Outcome::Fail(format!("refused ({e}) but {m}")),
            });
        }
        Err(e) => return Err(Outcome::Fail(format!("launch failed: {e}"))),
    };
    let summary = ev.plan().map(|p| p.summary()).unwrap_or_default();
    if let Err(why) = verdict {
        return Err(Outcome::Fail(format!(
            "planned although the capabilities lack {why}: {summary}"
        )));
    }
    if let Err(e) = ev.wait() {
        return Err(Outcome::Fail(format!("wait: {e}")));
    }
    let Some(plan) = ev.plan() else {
        return Err(Outcome::Fail("no plan returned".into()));
    };
    for v in &plan.vars {
        let forced_group = c.strategy.group.is_some_and(|g| g != v.group);
        let forced_cross = c.strategy.cross.is_some_and(|x| x != v.cross);
        if forced_group || forced_cross {
            return Err(Outcome::Fail(format!(
                "forced {} but the plan is {summary}",
                c.strategy
            )));
        }
    }
    if let Err(m) = chosen_steps_allowed(caps, c, f, plan) {
        return Err(Outcome::Fail(format!("plan {summary}: {m}")));
    }
    let want_passes = if plan.vars.iter().any(|v| v.cross == CrossAlgo::ExtraPass) {
        2
    } else {
        1
    };
    if plan.passes != want_passes {
        return Err(Outcome::Fail(format!(
            "{} passes in {summary}",
            plan.passes
        )));
    }
    Ok(ev)
}

/// Runs feature case `c` on `q` and checks it.
pub fn run(q: &Queue, c: &Case, f: Feature) -> Outcome {
    macro_rules! by_type {
        ($fun:ident $(, $a:expr)*) => {
            match c.ty {
                ElemType::I32 => $fun::<i32>(q, c, f $(, $a)*),
                ElemType::U32 => $fun::<u32>(q, c, f $(, $a)*),
                ElemType::I64 => $fun::<i64>(q, c, f $(, $a)*),
                ElemType::U64 => $fun::<u64>(q, c, f $(, $a)*),
                ElemType::F32 => $fun::<f32>(q, c, f $(, $a)*),
                ElemType::F64 => $fun::<f64>(q, c, f $(, $a)*),
                other => Outcome::Fail(format!("no feature runner for {other}")),
            }
        };
    }
    match f {
        Feature::ArgMin => by_type!(argminmax, false),
        Feature::ArgMax => by_type!(argminmax, true),
        Feature::Custom | Feature::CustomAtomic | Feature::IdentityLess => by_type!(custom),
        Feature::SumMinMax => by_type!(sum_min_max),
        Feature::Span(len) => by_type!(span, len),
    }
}

/// A float result within `depth` roundings of the float64 reference over `sum_abs`.
fn close(got: f64, expect: f64, depth: f64, ty: ElemType, sum_abs: f64) -> Result<(), String> {
    let bound = depth * unit_roundoff(ty) * sum_abs + 1e-300;
    if (got - expect).abs() <= bound {
        Ok(())
    } else {
        Err(format!("got {got}, expected {expect} within {bound:e}"))
    }
}

/// A plus result over `x` that started at `first`: integers exactly (wrapping), floats within
/// the plan's combination depth of the float64 sum.
fn check_sum<T: Num>(got: T, x: &[T], first: T, plan: &Plan) -> Result<(), String> {
    if T::TYPE.is_float() {
        let e64: f64 = x.iter().map(|v| v.to_f64()).sum::<f64>() + first.to_f64();
        let abs: f64 = x.iter().map(|v| v.to_f64().abs()).sum::<f64>() + first.to_f64().abs();
        return close(got.to_f64(), e64, combination_depth(plan, 0), T::TYPE, abs);
    }
    let e = x.iter().fold(first, |a, &b| a.wadd(b));
    if got == e {
        Ok(())
    } else {
        Err(format!("got {got:?}, expected {e:?}"))
    }
}

/// argmin or argmax. Without initialize_to_identity the initial pair (3 at index 5) takes
/// part; with it, the result starts poisoned at a value outside the data (1000 at index 12345).
fn argminmax<T: Num>(q: &Queue, c: &Case, f: Feature, max: bool) -> Outcome {
    let n = c.size() as usize;
    let x = data::<T>(n, c.seed);
    let xb = dev!(q.buffer_from(&x));
    let init = c.init_to_identity;
    let (v0, i0) = if init {
        (T::from_i64(1000), 12345u64)
    } else {
        (T::from_i64(3), 5u64)
    };
    let vb = dev!(q.buffer_from(&[v0]));
    let ib = dev!(q.buffer_from(&[i0]));
    let mut r = if max {
        reduction_argmax(&vb, &ib)
    } else {
        reduction_argmin(&vb, &ib)
    }
    .name("best");
    if init {
        r = r.initialize_to_identity();
    }
    let k = Kernel::new("combine(best, x[i], i);").arg("x", &xb);
    let untouched = || match (vb.get(0), ib.get(0)) {
        (Ok(v), Ok(i)) if v == v0 && i == i0 => Ok(()),
        (v, i) => Err(format!("the result changed to {v:?}, {i:?}")),
    };
    let _ev = tri!(launch(q, c, f, r, k, &untouched));
    let mut best: (T, u64) = if init {
        (if max { T::min_value() } else { T::max_value() }, u64::MAX)
    } else {
        (v0, i0)
    };
    for (j, &v) in x.iter().enumerate() {
        let better = if max { v > best.0 } else { v < best.0 };
        if better || (v == best.0 && (j as u64) < best.1) {
            best = (v, j as u64);
        }
    }
    let got = (dev!(vb.get(0)), dev!(ib.get(0)));
    if got.0 == best.0 && got.1 == best.1 {
        Outcome::Pass
    } else {
        Outcome::Fail(format!("got {got:?}, expected {best:?}"))
    }
}

/// A custom combiner: `a + b` with identity 0 (declared as plus for `CustomAtomic`), or an
/// identity-less max over the second half of the work-items.
fn custom<T: Num>(q: &Queue, c: &Case, f: Feature) -> Outcome {
    let n = c.size() as usize;
    let x = data::<T>(n, c.seed);
    let xb = dev!(q.buffer_from(&x));
    let start = T::from_i64(7);
    let rb = dev!(q.buffer_from(&[start]));
    let zero = T::from_i64(0);
    let (op, body) = match f {
        Feature::Custom => (CustomOp::new("a + b").identity(zero), "combine(acc, x[i]);"),
        Feature::CustomAtomic => (
            CustomOp::new("a + b").identity(zero).atomic(Op::Plus),
            "acc_combine(x[i]);",
        ),
        _ => (
            CustomOp::new("a > b ? a : b"),
            "if (i >= n / 2) combine(acc, x[i]);",
        ),
    };
    let mut r = reduction(&rb, op).name("acc");
    if c.init_to_identity {
        r = r.initialize_to_identity();
    }
    let k = Kernel::new(body).arg("x", &xb);
    let untouched = || match rb.get(0) {
        Ok(v) if v == start => Ok(()),
        other => Err(format!("the result changed to {other:?}")),
    };
    let ev = tri!(launch(q, c, f, r, k, &untouched));
    let got = dev!(rb.get(0));
    let first = if c.init_to_identity { zero } else { start };
    if f == Feature::IdentityLess {
        let expect = x[n / 2..]
            .iter()
            .fold(start, |a, &b| if a > b { a } else { b });
        return if got == expect {
            Outcome::Pass
        } else {
            Outcome::Fail(format!("got {got:?}, expected {expect:?}"))
        };
    }
    let plan = ev.plan().expect("a plan ran");
    match check_sum(got, &x, first, plan) {
        Ok(()) => Outcome::Pass,
        Err(m) => Outcome::Fail(format!("{m} [{}]", plan.summary())),
    }
}

/// Plus, minimum and maximum of the same input in one launch (three variables, one plan
/// each). Without initialize_to_identity they start at 7, 5 and -5 (unsigned: 3); with it, at
/// poison values outside the data.
fn sum_min_max<T: Num>(q: &Queue, c: &Case, f: Feature) -> Outcome {
    let n = c.size() as usize;
    let x = data::<T>(n, c.seed);
    let xb = dev!(q.buffer_from(&x));
    let init = c.init_to_identity;
    let unsigned = T::min_value().to_f64() == 0.0;
    let starts: [T; 3] = if init {
        [T::from_i64(999), T::from_i64(-999), T::from_i64(999)]
    } else {
        [
            T::from_i64(7),
            T::from_i64(5),
            T::from_i64(if unsigned { 3 } else { -5 }),
        ]
    };
    let bufs: Vec<Buffer<T>> = starts
        .iter()
        .map(|s| q.buffer_from(&[*s]))
        .collect::<clreduce::Result<_>>()
        .map_err(|e| e.to_string())
        .unwrap_or_default();
    if bufs.len() != 3 {
        return Outcome::Fail("setting up the three results".into());
    }
    let mut reds = vec![
        reduction(&bufs[0], Op::Plus).name("s"),
        reduction(&bufs[1], Op::Minimum).name("lo"),
        reduction(&bufs[2], Op::Maximum).name("hi"),
    ];
    if init {
        reds = reds
            .into_iter()
            .map(|r| r.initialize_to_identity())
            .collect();
    }
    let k = Kernel::new("s += x[i]; combine(lo, x[i]); hi_combine(x[i]);").arg("x", &xb);
    let untouched = || {
        for (b, s) in bufs.iter().zip(&starts) {
            match b.get(0) {
                Ok(v) if v == *s => {}
                other => return Err(format!("a result changed from {s:?} to {other:?}")),
            }
        }
        Ok(())
    };
    let ev = tri!(launch(q, c, f, reds, k, &untouched));
    let plan = ev.plan().expect("a plan ran");
    let got: Vec<T> = match bufs.iter().map(|b| b.get(0)).collect() {
        Ok(v) => v,
        Err(e) => return Outcome::Fail(format!("{e}")),
    };
    let (s0, lo0, hi0) = if init {
        (T::from_i64(0), T::max_value(), T::min_value())
    } else {
        (starts[0], starts[1], starts[2])
    };
    let lo = x.iter().fold(lo0, |a, &b| if b < a { b } else { a });
    let hi = x.iter().fold(hi0, |a, &b| if b > a { b } else { a });
    if got[1] != lo || got[2] != hi {
        return Outcome::Fail(format!(
            "min/max got {:?}/{:?}, expected {lo:?}/{hi:?} [{}]",
            got[1],
            got[2],
            plan.summary()
        ));
    }
    let sum_ok = check_sum(got[0], &x, s0, plan);
    match sum_ok {
        Ok(()) => Outcome::Pass,
        Err(m) => Outcome::Fail(format!("sum: {m} [{}]", plan.summary())),
    }
}

/// A span of `len` elements with plus. Integers count (`hist[b] += 1`), floats sum
/// (`combine(hist[b], x[i])`); bins come from the data and the index, so every bin is hit for
/// large n. Without initialize_to_identity the span starts at 1, 2, 3, 1, ...; with it, at
/// poison values (99 + e).
fn span<T: Num>(q: &Queue, c: &Case, f: Feature, len: usize) -> Outcome {
    let n = c.size() as usize;
    let x = data::<i32>(n, c.seed ^ len as u64);
    let xb = dev!(q.buffer_from(&x));
    let float = T::TYPE.is_float();
    let bin = |j: usize| ((x[j] + 40) as usize * 131 + j) % len;
    let cty = T::TYPE.cl_name();
    let body = format!(
        "const uint b = ((uint)(x[i] + 40) * 131u + (uint)i) % {len}u; {}",
        if float {
            format!("combine(hist[b], ({cty})x[i] * ({cty})0.25);")
        } else {
            "hist[b] += 1;".to_string()
        }
    );
    let start: Vec<T> = (0..len)
        .map(|e| {
            T::from_i64(if c.init_to_identity {
                99 + e as i64
            } else {
                (e % 3) as i64 + 1
            })
        })
        .collect();
    let hb = dev!(q.buffer_from(&start));
    let mut r = reduction_span(&hb, len, Op::Plus).name("hist");
    if c.init_to_identity {
        r = r.initialize_to_identity();
    }
    let k = Kernel::new(&body).arg("x", &xb);
    let untouched = || match hb.to_vec() {
        Ok(v) if v == start => Ok(()),
        Ok(_) => Err("the span changed".into()),
        Err(e) => Err(format!("reading the span: {e}")),
    };
    let ev = tri!(launch(q, c, f, r, k, &untouched));
    let got = dev!(hb.to_vec());
    let plan = ev.plan().expect("a plan ran");
    let first = |b: usize| {
        if c.init_to_identity {
            0.0
        } else {
            start[b].to_f64()
        }
    };
    let mut e: Vec<f64> = (0..len).map(first).collect();
    let mut abs: Vec<f64> = e.iter().map(|v| v.abs()).collect();
    for j in 0..n {
        let v = if float { x[j] as f64 * 0.25 } else { 1.0 };
        e[bin(j)] += v;
        abs[bin(j)] += v.abs();
    }
    let depth = combination_depth(plan, 0) + plan.local as f64;
    for b in 0..len {
        let ok = if float {
            close(got[b].to_f64(), e[b], depth, T::TYPE, abs[b]).is_ok()
        } else {
            // Counts are exact (wrapping cannot happen at these sizes).
            got[b].to_f64() == e[b]
        };
        if !ok {
            return Outcome::Fail(format!(
                "bin {b}: got {:?}, expected {} [{}]",
                got[b],
                e[b],
                plan.summary()
            ));
        }
    }
    Outcome::Pass
}
