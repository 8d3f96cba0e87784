//! MPI reductions (`clreduce::mpi`, feature `mpi`), run as this test binary under
//! `mpirun --allow-run-as-root --oversubscribe -np 2` and `-np 3` (the test `under_mpirun`
//! launches them; each rank runs `rank_worker` with CLREDUCE_MPI_WORKER=1). Every rank takes an
//! uneven block of the same seeded data (rank r gets a share in proportion to r + 1; with 2
//! elements and 3 ranks one rank is empty) on one device (ranks alternate between the
//! non-simulator devices: PoCL and Intel here), and every op family is checked on every rank
//! against the host: integers exactly, exact sums bit for bit, argmin/argmax with the lowest
//! global index, custom and identity-less ops, spans, the root-only delivery, and a rank with
//! bad input making every rank return an error without a hang.

#![cfg(feature = "mpi")]

use clreduce::exact::{sum_f32, sum_f64};
use clreduce::mpi::rsmpi::topology::Communicator;
use clreduce::mpi::{parallel_for_reduce, Deliver};
use clreduce::multi::{MultiKernel, MultiQueue};
use clreduce::{
    devices, reduction, reduction_argmax, reduction_argmin, reduction_span, Axis, CustomOp, Error,
    Op, Options, Queue, Range, Segments,
};
use std::process::Command;

/// Runs this binary's `rank_worker` under mpirun with `np` ranks; the worker asserts on every
/// rank, so a failure anywhere fails mpirun.
fn mpirun(np: usize) {
    let Ok(out) = Command::new("mpirun").arg("--version").output() else {
        println!("SKIP mpi -np {np}: mpirun not found (scripts/setup.sh installs OpenMPI)");
        return;
    };
    assert!(out.status.success());
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("timeout")
        .args([
            "600",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
        ])
        .arg(np.to_string())
        .arg(&exe)
        .args([
            "rank_worker",
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("CLREDUCE_MPI_WORKER", "1")
        .envs(clreduce::device::env_for_children())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "mpirun -np {np} failed: {text}");
    let oks = text.matches("RANK-OK").count();
    assert_eq!(oks, np, "every rank reports RANK-OK once:\n{text}");
}

#[test]
fn under_mpirun() {
    mpirun(2);
    mpirun(3);
}

/// `mpirun -np K clreduce reduce --mpi --json`: rank 0 prints one object, checked against the
/// host reference by the command (every op family, uneven blocks, more ranks than elements).
#[test]
fn cli_reduce_mpi() {
    if Command::new("mpirun").arg("--version").output().is_err() {
        println!("SKIP cli --mpi: mpirun not found");
        return;
    }
    // CLREDUCE_BIN (scripts/gpu.sh sets it where the binary travels), else cargo's.
    let exe = std::env::var("CLREDUCE_BIN").unwrap_or(env!("CARGO_BIN_EXE_clreduce").into());
    let exe = exe.as_str();
    let runs: [(usize, &[&str]); 7] = [
        (
            2,
            &["--op", "sum,min,argmax", "--type", "f32", "--n", "100003"],
        ),
        (
            3,
            &["--op", "sum,xor,lor", "--type", "i32", "--n", "100003"],
        ),
        (
            3,
            &[
                "--op",
                "sum",
                "--type",
                "f64",
                "--determinism",
                "exact",
                "--n",
                "2",
            ],
        ),
        (
            2,
            &[
                "--custom",
                "max(a,b)",
                "--no-identity",
                "--type",
                "i64",
                "--n",
                "5001",
            ],
        ),
        (
            3,
            &[
                "--op", "sum", "--type", "u32", "--span", "16", "--n", "70001",
            ],
        ),
        // Segmented (issue 26): rows cut into the ranks' blocks, and CSR segments cut by them.
        (
            3,
            &[
                "--rows",
                "101",
                "--cols",
                "7",
                "--op",
                "sum,argmax",
                "--type",
                "i64",
            ],
        ),
        (
            2,
            &[
                "--ragged", "30", "--n", "5003", "--op", "sum,min", "--type", "f32",
            ],
        ),
    ];
    for (np, args) in runs {
        let out = Command::new("timeout")
            .args([
                "300",
                "mpirun",
                "--allow-run-as-root",
                "--oversubscribe",
                "-np",
            ])
            .arg(np.to_string())
            .args([exe, "reduce", "--mpi", "--json"])
            .args(args)
            .envs(clreduce::device::env_for_children())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "-np {np} {args:?}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: serde_json::Value =
            serde_json::from_str(&text).expect("one JSON array, from rank 0");
        assert_eq!(j[0]["pass"], true, "-np {np} {args:?}: {text}");
        assert_eq!(j[0]["ranks"], np);
        println!("PASS cli reduce --mpi -np {np} {args:?}");
    }
}

/// Rank r's block of n indices: proportional to r + 1.
fn block(rank: usize, size: usize, n: u64) -> (u64, u64) {
    let w: u64 = (1..=size as u64).sum();
    let lo = n * (rank as u64 * (rank as u64 + 1) / 2) / w;
    let hi = n * ((rank as u64 + 1) * (rank as u64 + 2) / 2) / w;
    (lo, hi)
}

/// One rank's view of the test: its communicator, queue, block of the shared data.
struct Ctx<'a> {
    world: &'a clreduce::mpi::rsmpi::topology::SimpleCommunicator,
    q: &'a Queue,
    mq: &'a MultiQueue,
    rank: usize,
    size: usize,
    n: u64,
    lo: u64,
    m: u64,
    global: Vec<i32>,
}

impl Ctx<'_> {
    /// This rank's block of `data` (the global array) on its device.
    fn scatter<T: clreduce::Element>(&self, data: &[T]) -> clreduce::multi::MultiBuffer<T> {
        let (lo, hi) = (self.lo as usize, (self.lo + self.m) as usize);
        self.mq
            .scatter_with(
                &data[lo..hi],
                &clreduce::multi::Split::from_counts(&[self.m]),
                1,
            )
            .unwrap()
    }

    /// The f64 data of the exact checks.
    fn g64(&self) -> Vec<f64> {
        self.global
            .iter()
            .map(|&v| (v as f64).exp2() - 1e300 * (v % 2) as f64)
            .collect()
    }
}

#[test]
fn rank_worker() {
    if std::env::var_os("CLREDUCE_MPI_WORKER").is_none() {
        return;
    }
    let universe = clreduce::mpi::rsmpi::initialize().expect("MPI initialized once");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let devs: Vec<_> = devices()
        .unwrap()
        .iter()
        .filter(|d| !d.is_simulator())
        .collect();
    let q = Queue::new(devs[rank % devs.len()]).unwrap();
    let mq = MultiQueue::new(std::slice::from_ref(&q)).unwrap();
    println!("rank {rank}/{size} on {}", q.device().label());

    for n in [100_003u64, 2] {
        let (lo, hi) = block(rank, size, n);
        let global: Vec<i32> = (0..n as i64)
            .map(|i| ((i * 7919 + 3) % 2001 - 1000) as i32)
            .collect();
        let c = Ctx {
            world: &world,
            q: &q,
            mq: &mq,
            rank,
            size,
            n,
            lo,
            m: hi - lo,
            global,
        };
        builtin_ops(&c);
        exact_sums(&c);
        mixed_ops(&c);
        root_delivery(&c);
        segmented(&c);
    }
    segmented_2d(&world, &q, &mq, rank, size);

    // A rank with bad input (a body that does not build) makes every rank return an error.
    let xs = mq
        .scatter_with(&[1i32, 2, 3], &clreduce::multi::Split::from_counts(&[3]), 1)
        .unwrap();
    let v = q.buffer_from(&[0i32]).unwrap();
    let body = if rank == 1 {
        "sum += x[i] + no_such_name;"
    } else {
        "sum += x[i];"
    };
    let e = parallel_for_reduce(
        &world,
        &mq,
        Range::new(3),
        reduction(&v, Op::Plus),
        MultiKernel::new(body).arg("x", &xs),
        Options::default(),
        Deliver::All,
    )
    .unwrap_err();
    if rank == 1 {
        assert!(matches!(e, Error::BodyBuild { .. }), "{e}");
    } else {
        assert!(matches!(e, Error::Mpi { rank: 1, .. }), "{e}");
    }
    assert_eq!(v.get(0).unwrap(), 0);
    // Ranks that disagree on the variables (an op differs) all return an error.
    let op = if rank == 0 { Op::Plus } else { Op::Maximum };
    let e = parallel_for_reduce(
        &world,
        &mq,
        Range::new(3),
        reduction(&v, op),
        MultiKernel::new("combine(sum, x[i]);").arg("x", &xs),
        Options::default(),
        Deliver::All,
    )
    .unwrap_err();
    assert!(matches!(e, Error::Mpi { .. }), "{e}");
    // Rank 0 segmented, the others not: every rank returns an error (the segmented launch's
    // first gather meets the plain one's status), none waits.
    let vs = q.buffer_from(&[0i32; 3]).unwrap();
    let r = if rank == 0 {
        reduction(&vs, Op::Plus).segments(Segments::uniform(1))
    } else {
        reduction(&vs, Op::Plus)
    };
    let e = parallel_for_reduce(
        &world,
        &mq,
        Range::new(3),
        r,
        MultiKernel::new("sum += x[i];").arg("x", &xs),
        Options::default(),
        Deliver::All,
    )
    .unwrap_err();
    assert!(matches!(e, Error::Mpi { .. }), "{e}");
    // And the communicator still works afterwards.
    let rep = parallel_for_reduce(
        &world,
        &mq,
        Range::new(3),
        reduction(&v, Op::Plus),
        MultiKernel::new("sum += x[i];").arg("x", &xs),
        Options::default(),
        Deliver::All,
    )
    .unwrap();
    assert_eq!(v.get(0).unwrap(), 6 * size as i32);
    assert_eq!(rep.total, 3 * size as u64);
    println!("RANK-OK {rank}");
}

/// Every built-in op on i32, rank 0's initial value once.
fn builtin_ops(c: &Ctx) {
    let &Ctx {
        world,
        q,
        mq,
        rank,
        n,
        lo,
        m,
        ..
    } = c;
    let global = &c.global;
    let xi = c.scatter(global);
    // Every built-in op on i32, rank 0's initial value (5) once, the others' (1000) unused.
    for op in [
        Op::Plus,
        Op::Multiplies,
        Op::Minimum,
        Op::Maximum,
        Op::BitAnd,
        Op::BitOr,
        Op::BitXor,
        Op::LogicalAnd,
        Op::LogicalOr,
    ] {
        let v = q
            .buffer_from(&[if rank == 0 { 5i32 } else { 1000 }])
            .unwrap();
        let rep = parallel_for_reduce(
            world,
            mq,
            Range::new(m),
            reduction(&v, op),
            MultiKernel::new("combine(sum, x[i]);").arg("x", &xi),
            Options::default(),
            Deliver::All,
        )
        .unwrap();
        assert_eq!((rep.offset, rep.total), (lo, n));
        let want = global.iter().fold(5i32, |a, &x| {
            let r = clreduce::multi::combine::Combiner::new(
                &op.into(),
                clreduce::ElemType::I32,
                clreduce::Determinism::Deterministic,
            )
            .unwrap();
            match r
                .combine(
                    &clreduce::multi::Partial::Value(a.into()),
                    &clreduce::multi::Partial::Value(x.into()),
                )
                .unwrap()
            {
                clreduce::multi::Partial::Value(clreduce::Value::I32(v)) => v,
                _ => unreachable!(),
            }
        });
        assert_eq!(v.get(0).unwrap(), want, "rank {rank} n {n} {op:?}");
    }
}

/// Exact f32 and f64 sums, bit for bit.
fn exact_sums(c: &Ctx) {
    let &Ctx {
        world,
        q,
        mq,
        rank,
        n,
        m,
        ..
    } = c;
    let global = &c.global;
    // Exact sums, f32 and f64, bit for bit; an all-exact launch uses MPI_SUM on the limbs.
    let g32: Vec<f32> = global
        .iter()
        .map(|&v| v as f32 * 1.000_001e-3 + 1e7 * (v % 3) as f32)
        .collect();
    let g64 = c.g64();
    let x32 = c.scatter(&g32);
    let x64 = c.scatter(&g64);
    let (s32, s64) = (
        q.buffer_from(&[0.5f32]).unwrap(),
        q.buffer_from(&[0.25f64]).unwrap(),
    );
    let rep = parallel_for_reduce(
        world,
        mq,
        Range::new(m),
        vec![
            reduction(&s32, Op::Plus).name("a"),
            reduction(&s64, Op::Plus).name("b"),
        ],
        MultiKernel::new("a += x[i]; b += y[i];")
            .arg("x", &x32)
            .arg("y", &x64),
        Options::default().exact(),
        Deliver::All,
    )
    .unwrap();
    assert!(rep.builtin_sum);
    assert_eq!(
        s32.get(0).unwrap().to_bits(),
        sum_f32(&[&[0.5f32][..], &g32].concat()).to_bits(),
        "rank {rank} n {n} exact f32"
    );
    assert_eq!(
        s64.get(0).unwrap().to_bits(),
        sum_f64(&[&[0.25f64][..], &g64].concat()).to_bits(),
        "rank {rank} n {n} exact f64"
    );
}

/// argmin/argmax, custom, identity-less and spans in one launch.
fn mixed_ops(c: &Ctx) {
    let &Ctx {
        world,
        q,
        mq,
        rank,
        n,
        m,
        ..
    } = c;
    let global = &c.global;
    let xi = c.scatter(global);
    let g64 = c.g64();
    let x64 = c.scatter(&g64);
    // argmin/argmax (ties across ranks: the lowest global index), custom with identity,
    // identity-less (most ranks empty), a u32 span and an exact span, through the
    // user-defined operation.
    let xd: Vec<f64> = global.iter().map(|&v| (v % 50) as f64).collect();
    let xdm = c.scatter(&xd);
    let (v0, i0) = (
        q.buffer_from(&[0.0f64]).unwrap(),
        q.buffer_from(&[0u64]).unwrap(),
    );
    let (v1, i1) = (
        q.buffer_from(&[0.0f64]).unwrap(),
        q.buffer_from(&[0u64]).unwrap(),
    );
    let cu = q.buffer_from(&[2u32]).unwrap();
    let il = q.buffer_from(&[-3i32]).unwrap();
    let hist = q.buffer_from(&[0u32; 16]).unwrap();
    let bins = q.buffer_from(&[0.0f64; 4]).unwrap();
    parallel_for_reduce(
        world,
        mq,
        Range::new(m),
        vec![
            reduction_argmin(&v0, &i0)
                .initialize_to_identity()
                .name("lo"),
            reduction_argmax(&v1, &i1)
                .initialize_to_identity()
                .name("hi"),
            reduction(&cu, CustomOp::new("a * b + a + b").identity(0u32)).name("cu"),
            reduction(&il, CustomOp::new("max(a, b)")).name("il"),
            reduction_span(&hist, 16, Op::Plus)
                .name("hist")
                .initialize_to_identity(),
            reduction_span(&bins, 4, Op::Plus)
                .name("bins")
                .initialize_to_identity(),
        ],
        MultiKernel::new(
            "combine(lo, d[i], i); combine(hi, d[i], i); combine(cu, (uint)(x[i] & 3)); \
             if (x[i] > 990) combine(il, x[i]); hist[x[i] & 15] += 1u; bins[x[i] & 3] += y[i];",
        )
        .arg("d", &xdm)
        .arg("x", &xi)
        .arg("y", &x64),
        Options::default().exact(),
        Deliver::All,
    )
    .unwrap();
    let lo_i = xd
        .iter()
        .enumerate()
        .fold((f64::INFINITY, u64::MAX), |b, (j, &v)| {
            if v < b.0 {
                (v, j as u64)
            } else {
                b
            }
        });
    let hi_i = xd
        .iter()
        .enumerate()
        .fold((f64::NEG_INFINITY, u64::MAX), |b, (j, &v)| {
            if v > b.0 {
                (v, j as u64)
            } else {
                b
            }
        });
    assert_eq!(
        (v0.get(0).unwrap(), i0.get(0).unwrap()),
        lo_i,
        "rank {rank} n {n} argmin"
    );
    assert_eq!(
        (v1.get(0).unwrap(), i1.get(0).unwrap()),
        hi_i,
        "rank {rank} n {n} argmax"
    );
    let want_cu = global.iter().fold(2u32, |a, &x| {
        let b = (x & 3) as u32;
        a.wrapping_mul(b).wrapping_add(a).wrapping_add(b)
    });
    assert_eq!(cu.get(0).unwrap(), want_cu, "rank {rank} n {n} custom");
    let want_il = global
        .iter()
        .filter(|&&x| x > 990)
        .fold(-3, |a, &x| a.max(x));
    assert_eq!(
        il.get(0).unwrap(),
        want_il,
        "rank {rank} n {n} identity-less"
    );
    let mut want_h = [0u32; 16];
    let mut want_b = vec![Vec::new(); 4];
    for (j, &x) in global.iter().enumerate() {
        want_h[(x & 15) as usize] += 1;
        want_b[(x & 3) as usize].push(g64[j]);
    }
    assert_eq!(hist.to_vec().unwrap(), want_h, "rank {rank} n {n} span");
    let got_b = bins.to_vec().unwrap();
    for e in 0..4 {
        assert_eq!(
            got_b[e].to_bits(),
            sum_f64(&want_b[e]).to_bits(),
            "rank {rank} exact bin {e}"
        );
    }
}

/// Root-only delivery.
fn root_delivery(c: &Ctx) {
    let &Ctx {
        world,
        q,
        mq,
        rank,
        size,
        n,
        m,
        ..
    } = c;
    let global = &c.global;
    // Root-only delivery: the last rank gets the result with its own initial value; the
    // others' variables stay as they were.
    let root = size as i32 - 1;
    let v = q.buffer_from(&[rank as i64 * 100]).unwrap();
    let xl: Vec<i64> = global.iter().map(|&x| x as i64).collect();
    let xlm = c.scatter(&xl);
    parallel_for_reduce(
        world,
        mq,
        Range::new(m),
        reduction(&v, Op::Plus),
        MultiKernel::new("sum += x[i];").arg("x", &xlm),
        Options::default(),
        Deliver::Root(root),
    )
    .unwrap();
    let total: i64 = global.iter().map(|&x| x as i64).sum();
    let want = if rank as i32 == root {
        total + root as i64 * 100
    } else {
        rank as i64 * 100
    };
    assert_eq!(v.get(0).unwrap(), want, "rank {rank} n {n} root delivery");
}

/// One rank fails before the reduction (its device does not exist) while the other is fine:
/// every rank ends with an error (the ranks agree before the collective, `mpi::agree`)
/// instead of the healthy one waiting in it forever. MPMD mpirun gives each rank its own
/// `--device`.
#[test]
fn cli_rank_failure_ends_every_rank() {
    if Command::new("mpirun").arg("--version").output().is_err() {
        println!("SKIP cli --mpi rank failure: mpirun not found");
        return;
    }
    let exe = std::env::var("CLREDUCE_BIN").unwrap_or(env!("CARGO_BIN_EXE_clreduce").into());
    let rank = |dev: &str| -> Vec<String> {
        [
            "-np", "1", &exe, "reduce", "--mpi", "--device", dev, "--n", "1000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for (first, second) in [("0", "99"), ("99", "0")] {
        let out = Command::new("timeout")
            .args(["120", "mpirun", "--allow-run-as-root", "--oversubscribe"])
            .args(rank(first))
            .arg(":")
            .args(rank(second))
            .envs(clreduce::device::env_for_children())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert_ne!(code, Some(124), "ranks {first}/{second}: hung\n{stderr}");
        assert_ne!(code, Some(0), "ranks {first}/{second}: exit 0\n{stderr}");
        assert!(
            stderr.contains("no OpenCL device matches \"99\""),
            "ranks {first}/{second}: {stderr}"
        );
        println!("PASS cli --mpi devices {first} and {second}: every rank ended, {code:?}");
    }
}

/// CSR offsets over the ranks' uneven blocks (segments cut by rank boundaries, empty segments,
/// a gap before the first offset): a sum with rank 0's initial values, argmin with the index
/// within the segment and a max, under initialize_to_identity for the last two.
fn segmented(c: &Ctx) {
    let &Ctx {
        world,
        q,
        mq,
        rank,
        n,
        m,
        ..
    } = c;
    let global = &c.global;
    let mut off = vec![n.min(1), n / 7, n / 7, n / 3, n / 2 + 1, n - n / 9, n];
    off.sort_unstable();
    let segs = off.len() - 1;
    let ob = q.buffer_from(&off).unwrap();
    let v0 = q.buffer_from(&vec![5i32 + rank as i32; segs]).unwrap();
    let (v1, i1) = (
        q.buffer_from(&vec![0i32; segs]).unwrap(),
        q.buffer_from(&vec![0u64; segs]).unwrap(),
    );
    let v2 = q.buffer_from(&vec![0i32; segs]).unwrap();
    let x = c.scatter(global);
    parallel_for_reduce(
        world,
        mq,
        Range::new(m),
        vec![
            reduction(&v0, Op::Plus).segments(Segments::offsets(&ob)),
            reduction_argmin(&v1, &i1)
                .name("sum1")
                .segments(Segments::offsets(&ob))
                .index_in_segment()
                .initialize_to_identity(),
            reduction(&v2, Op::Maximum)
                .name("sum2")
                .segments(Segments::offsets(&ob))
                .initialize_to_identity(),
        ],
        MultiKernel::new("combine(sum, x[i]); combine(sum1, x[i], i); combine(sum2, x[i]);")
            .arg("x", &x),
        Options::default(),
        Deliver::All,
    )
    .unwrap();
    let (g0, g1, gi, g2) = (
        v0.to_vec().unwrap(),
        v1.to_vec().unwrap(),
        i1.to_vec().unwrap(),
        v2.to_vec().unwrap(),
    );
    for k in 0..segs {
        let seg = &global[off[k] as usize..off[k + 1] as usize];
        let sum = seg.iter().fold(5i32, |a, &b| a.wrapping_add(b));
        assert_eq!(g0[k], sum, "rank {rank} n {n} segment {k} sum");
        let (mut best, mut at) = (i32::MAX, u64::MAX);
        for (j, &v) in seg.iter().enumerate() {
            if v < best {
                (best, at) = (v, j as u64);
            }
        }
        assert_eq!(
            (g1[k], gi[k]),
            (best, at),
            "rank {rank} n {n} segment {k} argmin"
        );
        let max = seg.iter().copied().max().unwrap_or(i32::MIN);
        assert_eq!(g2[k], max, "rank {rank} n {n} segment {k} max");
    }
}

/// Rows and columns of a 1001 x 7 array whose rows are cut into the ranks' uneven blocks.
fn segmented_2d(
    world: &clreduce::mpi::rsmpi::topology::SimpleCommunicator,
    q: &Queue,
    mq: &MultiQueue,
    rank: usize,
    size: usize,
) {
    let (r, cols) = (1001u64, 7u64);
    let data: Vec<i64> = (0..(r * cols) as i64)
        .map(|i| (i * 7919 + 5) % 1013 - 500)
        .collect();
    let (lo, hi) = block(rank, size, r);
    let mine = &data[(lo * cols) as usize..(hi * cols) as usize];
    let x = mq
        .scatter_with(mine, &clreduce::multi::Split::from_counts(&[hi - lo]), cols)
        .unwrap();
    for axis in [Axis::Last, Axis::First] {
        let segs = if axis == Axis::Last { r } else { cols } as usize;
        let v = q.buffer_from(&vec![0i64; segs]).unwrap();
        let (a, ai) = (
            q.buffer_from(&vec![0i64; segs]).unwrap(),
            q.buffer_from(&vec![0u64; segs]).unwrap(),
        );
        parallel_for_reduce(
            world,
            mq,
            Range::new_2d(hi - lo, cols),
            vec![
                reduction(&v, Op::Plus).axis(axis).initialize_to_identity(),
                reduction_argmax(&a, &ai)
                    .name("sum1")
                    .axis(axis)
                    .initialize_to_identity(),
            ],
            MultiKernel::new("sum += x[i]; combine(sum1, x[i], i);").arg("x", &x),
            Options::default(),
            Deliver::All,
        )
        .unwrap();
        let (gv, ga, gi) = (
            v.to_vec().unwrap(),
            a.to_vec().unwrap(),
            ai.to_vec().unwrap(),
        );
        for k in 0..segs {
            let members: Vec<usize> = if axis == Axis::Last {
                (k * cols as usize..(k + 1) * cols as usize).collect()
            } else {
                (0..r as usize).map(|row| row * cols as usize + k).collect()
            };
            let sum: i64 = members.iter().map(|&i| data[i]).sum();
            assert_eq!(gv[k], sum, "rank {rank} {axis:?} segment {k}");
            let best = members
                .iter()
                .copied()
                .max_by(|&a, &b| data[a].cmp(&data[b]).then(b.cmp(&a)))
                .unwrap();
            assert_eq!(
                (ga[k], gi[k]),
                (data[best], best as u64),
                "rank {rank} {axis:?} segment {k} argmax"
            );
        }
    }
}
