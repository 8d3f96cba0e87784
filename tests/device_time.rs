//! A launch's device time spans every command it enqueues on the device: the backup copies of
//! its results (taken before a launch of two passes, so that a failed enqueue can put the
//! variables back) are its first commands, then its kernels. Before session 20 the copies ran
//! outside the launch's events, so `ReduceEvent::device_time_ns` (and `clreduce bench`) left
//! them out: on the H200 a copy of every result of a segmented launch of two passes (64 MiB
//! at 2^28 f32 in CSR segments of mean length 16). Checked through the launch's command count
//! on a profiling queue of every device: a segmented launch of one pass (`item`) is one
//! command, of two passes (`tiles`, forced) one copy per result region and two kernels; an
//! ordinary launch forced to `tree+extra-pass` one copy per variable and two kernels, and its
//! device time at least the kernels' own.

use crate::common;

use clreduce::{
    reduction, reduction_argmax, Kernel, Op, Options, Queue, Range, SegmentAlgo, Segments, Strategy,
};
use common::rng::Rng;
use common::sim_lock;

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
        let body = "combine(s, x[i]); combine(m, x[i], i);";
        let kernel = Kernel::new(body).arg("x", &x);
        let launch = |opts: Options| {
            let s = q.buffer_from(&vec![0.0f32; segs]).unwrap();
            let (mv, mi) = (
                q.buffer_from(&vec![0.0f32; segs]).unwrap(),
                q.buffer_from(&vec![0u64; segs]).unwrap(),
            );
            let reds = vec![
                reduction(&s, Op::Plus)
                    .segments(Segments::offsets(&offsets))
                    .name("s")
                    .initialize_to_identity(),
                reduction_argmax(&mv, &mi)
                    .segments(Segments::offsets(&offsets))
                    .name("m")
                    .initialize_to_identity(),
            ];
            let ev = q
                .parallel_for_reduce_with(Range::new(n as u64), reds, kernel.clone(), opts)
                .unwrap_or_else(|e| panic!("{}: {e}", d.label()));
            let plan = ev.plan().unwrap().clone();
            let sums = s.to_vec().unwrap();
            for k in 0..segs {
                let (a, b) = (begin[k] as usize, begin[k + 1] as usize);
                assert_eq!(
                    sums[k],
                    xs[a..b].iter().sum::<f32>(),
                    "{}: segment {k}",
                    d.label()
                );
            }
            (ev.commands(), plan, ev.device_time_ns().unwrap())
        };
        // Two passes: the sum's results, argmax's values and its indices backed up first.
        let (commands, plan, _) = launch(Options::default().segment(SegmentAlgo::Tiles));
        assert_eq!(plan.passes, 2, "{}: tiles runs two passes", d.label());
        assert_eq!(
            commands,
            3 + 2,
            "{}: tiles: 3 copies and 2 kernels",
            d.label()
        );
        // One pass: nothing to back up.
        let (commands, plan, _) = launch(Options::default().segment(SegmentAlgo::Item));
        assert_eq!(plan.passes, 1, "{}: item runs one pass", d.label());
        assert_eq!(commands, 1, "{}: item: its kernel", d.label());

        // An ordinary launch of two passes.
        let sum = q.buffer_from(&[1.5f32]).unwrap();
        let ev = q
            .parallel_for_reduce_with(
                Range::new(n as u64),
                reduction(&sum, Op::Plus).name("s"),
                Kernel::new("s += x[i];").arg("x", &x),
                Options::default().strategy(Strategy::parse("tree+extra-pass").unwrap()),
            )
            .unwrap();
        assert_eq!(
            ev.commands(),
            1 + 2,
            "{}: extra-pass: a copy and 2 kernels",
            d.label()
        );
        assert!(ev.device_time_ns().unwrap() > 0, "{}", d.label());
        assert_eq!(
            sum.get(0).unwrap(),
            1.5 + xs.iter().sum::<f32>(),
            "{}",
            d.label()
        );
    }
}
