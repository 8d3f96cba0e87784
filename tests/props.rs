//! Property tests: random n, forms, work-group sizes, masks, ops, types and values, each
//! compared with the host reference; proptest shrinks a failure to a small reproducer (the
//! failing case prints as a `clreduce reduce` command line).

use clreduce::check::reference::{
    check, combination_depth, random_initial, random_input, reference,
};
use clreduce::DynBuffer;
use clreduce::{
    devices, reduction, Device, ElemType, Error, Form, Kernel, Mask, NdRange, Op, Options, Queue,
    Range,
};
use proptest::prelude::*;
use std::sync::{Mutex, OnceLock};

/// Queues made so far, by (device index, mask).
type QueueCache = Mutex<Vec<((usize, String), Queue)>>;

/// Non-simulator devices, one queue per (device, mask) made on demand.
fn queue(device: usize, mask: &str) -> Option<Queue> {
    static QUEUES: OnceLock<QueueCache> = OnceLock::new();
    let devs: Vec<&Device> = devices()
        .ok()?
        .iter()
        .filter(|d| !d.is_simulator())
        .collect();
    let d = devs.get(device % devs.len().max(1))?;
    let mut qs = QUEUES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let key = (d.index(), mask.to_string());
    if let Some((_, q)) = qs.iter().find(|(k, _)| *k == key) {
        return Some(q.clone());
    }
    let q = Queue::with_mask(d, Mask::parse(mask).ok()?).ok()?;
    qs.push((key, q.clone()));
    Some(q)
}

const MASKS: [&str; 4] = [
    "",
    "no-atomics",
    "no-group-reduce,no-subgroups",
    "no-local-atomics,no-c11-atomics",
];
const LOCALS: [usize; 6] = [1, 2, 3, 7, 64, 96];

fn op_strategy() -> impl Strategy<Value = (Op, ElemType)> {
    (0..Op::ALL.len(), 0..ElemType::REDUCIBLE.len())
        .prop_map(|(o, t)| (Op::ALL[o], ElemType::REDUCIBLE[t]))
        .prop_filter("op defined for type", |(o, t)| o.valid_for(*t))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, max_shrink_iters: 64, .. ProptestConfig::default() })]

    #[test]
    fn random_reductions_match_the_host(
        device in 0usize..2,
        mask in 0..MASKS.len(),
        (op, ty) in op_strategy(),
        nd in any::<bool>(),
        local in 0..LOCALS.len(),
        n in 0u64..6000,
        init_identity in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let Some(q) = queue(device, MASKS[mask]) else { return Ok(()) };
        if q.caps().supports_type(ty).is_err() {
            return Ok(()); // reported by the matrix's skip list; nothing to compare here
        }
        let local = LOCALS[local];
        let form: Form = if nd { NdRange::new(n / local as u64 * local as u64, local).into() } else { Range::new(n).into() };
        let size = match form { Form::Range(r) => r.n, Form::NdRange(r) => r.global };
        let data = random_input(op, ty, size as usize, seed);
        let init = random_initial(op, ty, seed);
        let x = DynBuffer::upload(&q, &data).unwrap();
        let res = DynBuffer::scalar(&q, init).unwrap();
        let mut r = reduction(&res, op);
        if init_identity { r = r.initialize_to_identity(); }
        let repro = format!(
            "clreduce reduce --device {} --mask '{}' --op {op} --type {ty} --n {size} --form {} --local {local}{} --seed {seed}",
            q.device().index(), MASKS[mask], if nd { "nd-range" } else { "range" }, if init_identity { " --init-identity" } else { "" });
        let ev = match q.parallel_for_reduce_with(form, r, Kernel::new("combine(sum, x[i]);").arg("x", &x), Options::default()) {
            Ok(ev) => ev,
            Err(Error::WorkGroupTooLarge { .. }) | Err(Error::LocalMemory { .. }) => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("{repro}: {e}"))),
        };
        ev.wait().unwrap();
        let got = res.value(0).unwrap();
        let expect = reference(op, &data, if init_identity { None } else { Some(init) });
        let depth = ev.plan().map(|p| combination_depth(p, 0)).unwrap_or(1.0);
        if let Err(msg) = check(op, ty, got.to_f64(), got.as_int(), &expect, depth) {
            return Err(TestCaseError::fail(format!("{repro}: {msg}")));
        }
    }
}
