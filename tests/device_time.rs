//! A launch's device time spans every command it enqueues on the device, and a launch of two
//! passes changes nothing when an enqueue fails. A segmented launch of two passes writes some
//! results in its first pass: its first kernel waits behind a gate (an OpenCL user event,
//! `runtime/gate.rs`) opened once both kernels are enqueued, so it is two commands; on a
//! serialized device (Oclgrind), where a held command would never finish, it backs every
//! result up first, and those copies are its first commands (before session 20 the copies
//! were outside the launch's events, so `ReduceEvent::device_time_ns` and `clreduce bench`
//! left them out, and every device paid them: 64 MiB at 2^28 f32 in CSR segments of mean
//! length 16 on the H200). Checked on a profiling queue of every device through the command
//! count (`item`, one pass: one command; `tiles`, two passes, forced: two, or three copies and
//! two; an ordinary `tree+extra-pass`: a copy and two kernels) and through a fault after the
//! first kernel (`Queue::__inject_fault`): the launch fails with the injected error, every
//! variable reads back as it was (the gate cancelled, or the backup put back), and the next
//! launch is right.

use crate::common;

use clreduce::{
    reduction, reduction_argmax, Error, Fault, Kernel, Op, Options, Queue, Range, SegmentAlgo,
    Segments, Strategy,
};
use common::rng::Rng;
use common::sim_lock;

/// What one segmented launch gave: its command count, its plan's passes.
type Ran = Option<(usize, usize)>;

#[test]
fn backups_are_the_launch_s_first_commands() {
    for d in clreduce::devices().expect("OpenCL devices") {
        let _g = sim_lock(d);
        let q = Queue::new(d).unwrap().with_profiling().unwrap();
        let mut rng = Rng(0x5e55_1020 ^ d.index() as u64);
        let n = 4099usize;
        let xs: Vec<f32> = (0..n).map(|_| (rng.below(64) as f32) - 31.0).collect();
        let x = q.buffer_from(&xs).unwrap();
        let mut begin = vec![0u64];
        while *begin.last().unwrap() < n as u64 {
            let next = begin.last().unwrap() + rng.below(40);
            begin.push(next.min(n as u64));
        }
        let segs = begin.len() - 1;
        let offsets = q.buffer_from(&begin).unwrap();
        let kernel = Kernel::new("combine(s, x[i]); combine(m, x[i], i);").arg("x", &x);
        let before: Vec<f32> = (0..segs).map(|k| k as f32 + 0.5).collect();
        let launch = |opts: Options, fault: Option<Fault>| -> Ran {
            let s = q.buffer_from(&before).unwrap();
            let mv = q.buffer_from(&before).unwrap();
            let mi = q.buffer_from(&vec![7u64; segs]).unwrap();
            let on = |r: clreduce::Reduction| r.segments(Segments::offsets(&offsets));
            let reds = vec![
                on(reduction(&s, Op::Plus))
                    .name("s")
                    .initialize_to_identity(),
                on(reduction_argmax(&mv, &mi))
                    .name("m")
                    .initialize_to_identity(),
            ];
            let range = Range::new(n as u64);
            if let Some(f) = fault {
                q.__inject_fault(f);
                match q.parallel_for_reduce_with(range, reds, kernel.clone(), opts) {
                    Err(Error::Cl { code: -5, .. }) => {}
                    Err(e) => panic!("{}: {f:?}: {e}", d.label()),
                    Ok(_) => panic!("{}: {f:?}: the launch did not fail", d.label()),
                }
                q.finish().unwrap();
                let got = (s.to_vec().unwrap(), mv.to_vec().unwrap());
                assert_eq!(
                    got,
                    (before.clone(), before.clone()),
                    "{}: {f:?}",
                    d.label()
                );
                assert_eq!(
                    mi.to_vec().unwrap(),
                    vec![7u64; segs],
                    "{}: {f:?}",
                    d.label()
                );
                return None;
            }
            let ev = q
                .parallel_for_reduce_with(range, reds, kernel.clone(), opts)
                .unwrap_or_else(|e| panic!("{}: {e}", d.label()));
            let sums = s.to_vec().unwrap();
            for k in 0..segs {
                let (a, b) = (begin[k] as usize, begin[k + 1] as usize);
                let want: f32 = xs[a..b].iter().sum();
                assert_eq!(sums[k], want, "{}: segment {k}", d.label());
            }
            assert!(ev.device_time_ns().unwrap() > 0, "{}", d.label());
            Some((ev.commands(), ev.plan().unwrap().passes))
        };
        let tiles = Options::default().segment(SegmentAlgo::Tiles);
        let item = Options::default().segment(SegmentAlgo::Item);
        // Two passes: behind a gate, or the sum's results, argmax's values and its indices
        // backed up first.
        let copies = if d.is_simulator() { 3 } else { 0 };
        let want = Some((copies + 2, 2));
        assert_eq!(
            launch(tiles, None),
            want,
            "{}: tiles (commands, passes)",
            d.label()
        );
        // One pass: nothing to back up.
        assert_eq!(launch(item, None), Some((1, 1)), "{}: item", d.label());
        // An enqueue that fails after the first kernel: nothing changed, then all is well.
        for opts in [tiles, item] {
            assert_eq!(launch(opts, Some(Fault::AfterMainKernel(-5))), None);
            assert!(launch(opts, None).is_some());
        }

        // An ordinary launch of two passes: a copy of its variable, then its two kernels.
        let sum = q.buffer_from(&[1.5f32]).unwrap();
        let ev = q
            .parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&sum, Op::Plus).name("s"),
                Kernel::new("s += x[i];").arg("x", &x),
                Options::default().strategy(Strategy::parse("tree+extra-pass").unwrap()),
            )
            .unwrap();
        assert_eq!(ev.commands(), 1 + 2, "{}: extra-pass", d.label());
        assert!(ev.device_time_ns().unwrap() > 0, "{}", d.label());
        assert_eq!(
            sum.get(0).unwrap(),
            1.5 + xs.iter().sum::<f32>(),
            "{}",
            d.label()
        );
    }
}
