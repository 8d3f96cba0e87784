//! `clreduce demo`: the first-ten-minutes demo: the devices found, then a checked f32 sum, i32
//! sum and f64 max on the default device, each with its plan and its device time after a warm-up
//! launch (the first launch's times beside it, saying whether they include building the program;
//! sizes checked against host and device memory before anything is allocated).

use crate::args::op_identity;
use crate::error::CliResult;
use crate::limits;
use clreduce::check::reference::{self, combination_depth};
use clreduce::{devices, reduction, DynBuffer, ElemType, Kernel, Op, Options, Queue, Range};

/// Options of `clreduce demo`.
#[derive(clap::Args)]
pub struct DemoArgs {
    #[arg(long, default_value_t = 10_000_000)]
    n: u64,
}

/// `clreduce demo`.
pub fn run(a: &DemoArgs) -> CliResult<bool> {
    let n = a.n;
    outln!("OpenCL devices found:");
    for d in devices()? {
        outln!("  {}: {}", d.index(), d.label());
    }
    let d = clreduce::device::select(None)?;
    outln!(
        "\ndefault device: {} (set CLREDUCE_DEVICE to pick another)\n",
        d.label()
    );
    // The demo prints device times: a profiling queue.
    let q = Queue::new(&d)?.with_profiling()?;
    let mut ok = true;
    for (op, ty) in [
        (Op::Plus, ElemType::F32),
        (Op::Plus, ElemType::I32),
        (Op::Maximum, ElemType::F64),
    ] {
        if q.caps().supports_type(ty).is_err() {
            outln!("{op} over {ty}: skipped, the device lacks {ty}");
            continue;
        }
        let what = format!("the demo's input (--n {n} x {ty})");
        let bytes = u128::from(n) * ty.size() as u128;
        limits::check_host(&what, bytes)?;
        limits::check_device(&d, &what, bytes, bytes, bytes)?;
        ok &= one(&q, op, ty, n)?;
    }
    Ok(ok)
}

/// One checked reduction of the demo, printed; whether it matched the host reference.
fn one(q: &Queue, op: Op, ty: ElemType, n: u64) -> clreduce::Result<bool> {
    let data = reference::random_input(op, ty, n as usize, 42);
    let x = DynBuffer::upload(q, &data)?;
    let res = DynBuffer::scalar(q, op_identity(op, ty))?;
    let body = if op == Op::Plus {
        "sum += x[i];"
    } else {
        "combine(sum, x[i]);"
    };
    // A warm-up launch first: it builds the program (and on CPU runtimes pays first-touch
    // costs), so the time printed is the warm one; the first launch's times come beside it.
    let red = || reduction(&res, op).initialize_to_identity();
    let launch = || q.parallel_for_reduce(Range::new(n), red(), Kernel::new(body).arg("x", &x));
    let (built, from_disk) = (
        clreduce::compiled_programs(),
        clreduce::programs_from_disk(),
    );
    let t0 = std::time::Instant::now();
    let first = launch()?;
    first.wait()?;
    let first_wall = t0.elapsed().as_secs_f64();
    let built = clreduce::compiled_programs() - built;
    let from_disk = clreduce::programs_from_disk() - from_disk;
    let first_ns = first.device_time_ns()?;
    let ev = launch()?;
    let t = ev.device_time_ns()?;
    let got = res.value(0)?;
    let expect = reference::reference(op, &data, None);
    // A launch that ran nothing (n = 0) may come without a plan: explain it for the report.
    let plan = match ev.plan() {
        Some(p) => p.clone(),
        None => q.explain(Range::new(n), red(), Options::default())?,
    };
    let plan = &plan;
    let verdict = reference::check(
        op,
        ty,
        got.to_f64(),
        got.as_int(),
        &expect,
        combination_depth(plan, 0),
    );
    outln!("{op} over {n} x {ty}: {}", plan.summary());
    out!("{plan}");
    outln!(
        "  result {got}, host reference {}, {}; device time {:.1} us ({:.1} GB/s)",
        expect
            .exact
            .map(|e| e.to_string())
            .unwrap_or_else(|| format!("{:e}", expect.value)),
        match &verdict {
            Ok(()) => "OK".to_string(),
            Err(m) => format!("MISMATCH: {m}"),
        },
        t as f64 / 1e3,
        (n as f64 * ty.size() as f64) / t.max(1) as f64
    );
    outln!(
        "  (after a warm-up launch; the first launch: {:.1} us of device time, {:.1} ms from call to completion, {})\n",
        first_ns as f64 / 1e3,
        first_wall * 1e3,
        crate::out::built_text(built, from_disk)
    );
    Ok(verdict.is_ok())
}
