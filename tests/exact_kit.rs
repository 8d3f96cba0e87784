//! Device tests of the exact-sum kit (kernels/exact.cl) on every OpenCL device found: small
//! standalone kernels, built with opencl3 directly, push adversarial and random arrays through
//! every deposit flavor (global and local atomics; plain global, local and private rows),
//! through the three expansions (f32 data in two doubles, f32 data in three floats, f64 data in
//! two doubles) with work-group trees and a cross-group merge, and through normalization and
//! rounding; every result is compared bit for bit with the host `Superacc` (src/exact).
//! A flavor a device cannot run (no fp64, no 64-bit atomics) is reported as SKIP with the reason;
//! the float expansion runs on every device, fp64 or not.

use clreduce::check::adversarial::{f32s, f64s, Pattern};
use clreduce::check::reference::Rng;
use clreduce::exact::{self, ExpansionKind, Format, Superacc, MAX_CONTRIBUTIONS};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device as ClDevice;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_double, cl_float, cl_long, cl_uint, cl_ulong, CL_BLOCKING};
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

#[path = "exact_kit/bench.rs"]
mod bench;
#[allow(dead_code)]
#[path = "common/sample.rs"]
mod sample;

const EXACT_CL: &str = include_str!("../kernels/exact.cl");
const FLAVORS: [&str; 5] = ["ga", "la", "g", "l", "p"];
const GROUPS: usize = 4;

/// Oclgrind crashes when two threads run kernels at once: every test holds this lock.
fn lock() -> MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

/// One device with its own context and queue (with profiling), and what the kit needs from it.
struct Dev {
    cr: clreduce::Device,
    label: String,
    sim: bool,
    fp64: bool,
    i64a: bool,
    ctx: Context,
    queue: CommandQueue,
    id: opencl3::types::cl_device_id,
}

/// Every device clreduce enumerates, matched (by platform and name) to an opencl3 device.
fn devices() -> Vec<Dev> {
    let all = clreduce::devices()
        .expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`");
    let mut cl = Vec::new();
    for p in opencl3::platform::get_platforms().unwrap_or_default() {
        let pname = p.name().unwrap_or_default();
        for id in p.get_devices(0xFFFF_FFFF).unwrap_or_default() {
            let d = ClDevice::new(id);
            cl.push((
                pname.clone(),
                d.name().unwrap_or_default().trim().to_string(),
                id,
            ));
        }
    }
    let mut out = Vec::new();
    for d in all {
        let i = cl
            .iter()
            .position(|(p, n, _)| p == d.platform() && n == d.name())
            .unwrap_or_else(|| panic!("{} not found through opencl3", d.label()));
        let (_, _, id) = cl.remove(i);
        let caps = d
            .caps()
            .unwrap_or_else(|e| panic!("caps of {}: {e}", d.label()));
        let cd = ClDevice::new(id);
        let ctx = Context::from_device(&cd).expect("context");
        // SAFETY: a valid context and device; an in-order queue with profiling.
        let queue = unsafe { CommandQueue::create(&ctx, id, 1 << 1) }.expect("queue");
        out.push(Dev {
            cr: d.clone(),
            label: d.label(),
            sim: d.is_simulator(),
            fp64: caps.fp64,
            i64a: caps.atomics.int64_base,
            ctx,
            queue,
            id,
        });
    }
    out
}

/// Pass/fail/skip counts; every failure and skip is printed with its reason.
#[derive(Default)]
struct Tally {
    pass: usize,
    fail: Vec<String>,
    skip: usize,
}

impl Tally {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if ok {
            self.pass += 1;
        } else {
            let w = what();
            eprintln!("FAIL {w}");
            self.fail.push(w);
        }
    }
    fn skip(&mut self, dev: &Dev, what: &str, why: &str) {
        self.skip += 1;
        eprintln!("SKIP {} {what}: {why}", dev.label);
    }
    fn finish(self, test: &str) {
        eprintln!(
            "SUMMARY {test}: {} passed, {} failed, {} skipped",
            self.pass,
            self.fail.len(),
            self.skip
        );
        assert!(
            self.fail.is_empty(),
            "{test}: {} failures, first: {}",
            self.fail.len(),
            self.fail[0]
        );
        assert!(self.pass > 0, "{test}: nothing ran");
    }
}

// ---- kernels --------------------------------------------------------------------------------

/// (declarations, the sacc expression the deposits go to, the epilogue) of a flavor.
fn flavor(fl: &str, f: u32) -> (String, String, String) {
    let l = format!("CLR_X{f}_L");
    match fl {
        "ga" => (String::new(), "(volatile __global long*)out".into(), String::new()),
        "la" => (
            format!("__local long acc[{l}]; for (uint j = lid; j < {l}; j += WG) acc[j] = 0; barrier(CLK_LOCAL_MEM_FENCE);"),
            "(volatile __local long*)acc".into(),
            format!("barrier(CLK_LOCAL_MEM_FENCE); if (lid == 0) for (int j = 0; j < {l}; ++j) out[grp * {l} + j] = acc[j];"),
        ),
        "l" => (
            format!("__local long rows[WG * {l}]; __local long* mine = rows + lid * {l}; clr_x_zero_l_{f}(mine);"),
            "mine".into(),
            format!(
                "barrier(CLK_LOCAL_MEM_FENCE);\n\
                 for (uint s = 1; s < WG; s *= 2) {{ if (lid % (2 * s) == 0 && lid + s < WG) clr_x_absorb_l_from_l_{f}(mine, rows + (lid + s) * {l}); barrier(CLK_LOCAL_MEM_FENCE); }}\n\
                 if (lid == 0) for (int j = 0; j < {l}; ++j) out[grp * {l} + j] = rows[j];"
            ),
        ),
        "p" => (
            format!("long acc[{l}]; clr_x_zero_p_{f}(acc);"),
            "acc".into(),
            format!("for (int j = 0; j < {l}; ++j) out[gid * {l} + j] = acc[j];"),
        ),
        "g" => (
            format!("__global long* mine = out + gid * {l}; clr_x_zero_g_{f}(mine);"),
            "mine".into(),
            String::new(),
        ),
        _ => unreachable!(),
    }
}

/// Rows a flavor's kernel writes for `wg` items per group.
fn rows(fl: &str, wg: usize) -> usize {
    match fl {
        "ga" => 1,
        "la" | "l" => GROUPS,
        _ => GROUPS * wg,
    }
}

const HEAD: &str = "uint lid = get_local_id(0), gid = get_global_id(0), grp = get_group_id(0), gs = get_global_size(0);";

/// Deposits of elements (f32 bits into the f32 format, f64 bits into the f64 format).
fn elem_kernel(f: u32, fl: &str) -> String {
    let (decl, tgt, fin) = flavor(fl, f);
    let t = if f == 32 { "uint" } else { "ulong" };
    format!(
        "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n\
         void t_elem_{fl}_{f}(__global const {t}* x, uint n, __global long* out) {{\n\
         {HEAD}\n{decl}\n\
         for (uint i = gid; i < n; i += gs) clr_x_add_f{f}_{fl}_{f}({tgt}, x[i]);\n\
         {fin}\n}}\n"
    )
}

/// (expansion type, its short name, components, data type, push name, format).
fn kind_info(
    k: ExpansionKind,
) -> (
    &'static str,
    &'static str,
    usize,
    &'static str,
    &'static str,
    u32,
) {
    match k {
        ExpansionKind::F32InDouble => ("clr_x_e2d", "e2d", 2, "uint", "f32d", 32),
        ExpansionKind::F32InFloat => ("clr_x_e3f", "e3f", 3, "uint", "f32f", 32),
        ExpansionKind::F64InDouble => ("clr_x_e2d", "e2d", 2, "double", "f64d", 64),
    }
}

fn comp_type(k: ExpansionKind) -> &'static str {
    if k == ExpansionKind::F32InFloat {
        "float"
    } else {
        "double"
    }
}

const COMPS: [&str; 3] = ["s", "c", "d"];

/// Expansions per work-item (mode bit 1: the speculative path, chunks of CH elements through
/// clr_x_try_* and again through clr_x_push_* when flagged; else clr_x_push_* per element), a
/// work-group tree of merges, then a flush (mode bit 0 clear) or the group's expansion written
/// to `parts` (mode bit 0 set, for t_final).
fn exp_kernel(k: ExpansionKind, fl: &str) -> String {
    let (et, ek, nc, dt, push, f) = kind_info(k);
    let ct = comp_type(k);
    let (decl, tgt, fin) = flavor(fl, f);
    // f32 data into doubles: mode bit 2 pre-sums each chunk (CH = 4 elements, lb = 2) in a
    // double before the cascade (clr_x_blk_add, clr_x_try_blk_f32d).
    let try_chunk = if push == "f32d" {
        "if (mode & 4u) {{ double d = 0.0; uint emax = 0, emin = 255u;\n\
           for (uint k = 0; k < CH && j < n; ++k, j += gs) d = clr_x_blk_add(d, x[j], &emax, &emin, &bad);\n\
           e = clr_x_try_blk_f32d(e, d, emax, emin, 2u, &bad); }} else\n"
            .to_string()
    } else {
        String::new()
    };
    let try_call = format!("clr_x_try_{push}(e, x[j], &bad)");
    let store: String = (0..nc)
        .map(|c| format!("parts[grp * {nc} + {c}] = le[0].{};", COMPS[c]))
        .collect();
    format!(
        "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n\
         void t_exp_{push}_{fl}(__global const {dt}* x, uint n, __global long* out, __global {ct}* parts, uint mode) {{\n\
         {HEAD}\n{decl}\n\
         {et} e = {et}_zero();\n\
         if (mode & 2u) {{\n\
           for (uint i = gid; i < n;) {{\n\
             {et} saved = e; uint bad = 0, j = i;\n\
             {try_chunk}for (uint k = 0; k < CH && j < n; ++k, j += gs) e = {try_call};\n\
             if (bad) {{ e = saved; j = i; for (uint k = 0; k < CH && j < n; ++k, j += gs) e = clr_x_push_{push}_{fl}_{f}(e, x[j], {tgt}); }}\n\
             e = clr_x_renorm_{ek}(e);\n\
             i = j;\n\
           }}\n\
         }} else {{\n\
           for (uint i = gid; i < n; i += gs) e = clr_x_push_{push}_{fl}_{f}(e, x[i], {tgt});\n\
         }}\n\
         __local {et} le[WG];\n\
         le[lid] = e;\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         for (uint s = 1; s < WG; s *= 2) {{\n\
           if (lid % (2 * s) == 0 && lid + s < WG) le[lid] = clr_x_merge_{ek}_{fl}_{f}(le[lid], le[lid + s], {tgt});\n\
           barrier(CLK_LOCAL_MEM_FENCE);\n\
         }}\n\
         if (lid == 0) {{ if ((mode & 1u) == 0) clr_x_flush_{ek}_{fl}_{f}(le[0], {tgt}); else {{ {store} }} }}\n\
         {fin}\n}}\n"
    )
}

/// One work-item: merges the groups' expansions, flushes, absorbs the rows, rounds, normalizes.
fn final_kernel(k: ExpansionKind) -> String {
    let (et, ek, nc, _, push, f) = kind_info(k);
    let ct = comp_type(k);
    let load = |g: &str| -> String {
        (0..nc)
            .map(|c| format!("q.{} = parts[{g} * {nc} + {c}];", COMPS[c]))
            .collect()
    };
    let (l0, lg) = (load("0"), load("g"));
    format!(
        "__kernel void t_final_{push}(__global const {ct}* parts, uint groups, __global const long* rows, uint nrows, __global long* norm, __global ulong* bits) {{\n\
         long acc[CLR_X{f}_L]; clr_x_zero_p_{f}(acc);\n\
         {et} q; {l0} {et} e = q;\n\
         for (uint g = 1; g < groups; ++g) {{ {lg} e = clr_x_merge_{ek}_p_{f}(e, q, acc); }}\n\
         clr_x_flush_{ek}_p_{f}(e, acc);\n\
         for (uint r = 0; r < nrows; ++r) clr_x_absorb_p_from_g_{f}(acc, rows + r * CLR_X{f}_L);\n\
         bits[0] = clr_x_round32_{f}(acc); bits[1] = clr_x_round64_{f}(acc);\n\
         clr_x_normalize_p_{f}(acc);\n\
         for (int j = 0; j < CLR_X{f}_L; ++j) norm[j] = acc[j];\n}}\n"
    )
}

/// Rounding and the three normalizations of `count` limb arrays.
fn round_kernel(f: u32) -> String {
    format!(
        "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n\
         void t_round_{f}(__global const long* in, uint count, __global long* norm_g, __global long* norm_p, __global long* norm_l, __global uint* r32, __global ulong* r64) {{\n\
         uint i = get_global_id(0), lid = get_local_id(0);\n\
         const int L = CLR_X{f}_L;\n\
         __local long tmp[WG * CLR_X{f}_L];\n\
         if (i < count) {{\n\
           long a[CLR_X{f}_L]; for (int j = 0; j < L; ++j) a[j] = in[i * L + j];\n\
           r32[i] = clr_x_round32_{f}(a); r64[i] = clr_x_round64_{f}(a);\n\
           clr_x_normalize_p_{f}(a); for (int j = 0; j < L; ++j) norm_p[i * L + j] = a[j];\n\
           for (int j = 0; j < L; ++j) norm_g[i * L + j] = in[i * L + j];\n\
           clr_x_normalize_g_{f}(norm_g + i * L);\n\
           __local long* t = tmp + lid * L;\n\
           for (int j = 0; j < L; ++j) t[j] = in[i * L + j];\n\
           clr_x_normalize_l_{f}(t);\n\
           for (int j = 0; j < L; ++j) norm_l[i * L + j] = t[j];\n\
         }}\n}}\n"
    )
}

/// The kit's constants, for comparison with src/exact.
const CONSTS_KERNEL: &str = "__kernel void t_consts(__global long* o) {\n\
    o[0] = CLR_X32_D; o[1] = CLR_X32_B; o[2] = CLR_X32_L; o[3] = CLR_X64_D; o[4] = CLR_X64_B; o[5] = CLR_X64_L;\n\
    o[6] = CLR_X_MAX_CONTRIB; o[7] = CLR_X_W32D_LO; o[8] = CLR_X_W32D_HI; o[9] = CLR_X_CAP32D;\n\
    o[10] = CLR_X_W32F_LO; o[11] = CLR_X_W32F_HI; o[12] = CLR_X_CAP32F;\n\
    o[13] = CLR_X_W64D_LO; o[14] = CLR_X_W64D_HI; o[15] = CLR_X_CAP64D; }\n";

/// Pragmas, defines and the kit for both formats.
fn bench_head(dev: &Dev, wg: usize, cvt_hw: bool) -> String {
    let mut s = String::new();
    if dev.fp64 {
        s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    }
    if dev.i64a {
        s += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
    }
    s += &format!(
        "#define WG {wg}u\n#define CH 4u\n#define CLR_X_FP64 {}\n#define CLR_X_I64A {}\n#define CLR_X_CVT_HW {}\n",
        dev.fp64 as u8, dev.i64a as u8, cvt_hw as u8
    );
    for f in [32, 64] {
        s += &format!("#define CLR_X_F {f}\n{EXACT_CL}\n#undef CLR_X_F\n");
    }
    s
}

/// The whole test program for a device and work-group size: both formats included.
/// A work-group size and CLR_X_CVT_HW.
type Geo = (usize, bool);

fn source(dev: &Dev, (wg, cvt): Geo) -> String {
    let mut s = bench_head(dev, wg, cvt);
    s += CONSTS_KERNEL;
    for fl in usable_flavors(dev) {
        s += &elem_kernel(32, fl);
        s += &elem_kernel(64, fl);
        for k in usable_kinds(dev) {
            s += &exp_kernel(k, fl);
        }
    }
    for k in usable_kinds(dev) {
        s += &final_kernel(k);
    }
    s += &round_kernel(32);
    s += &round_kernel(64);
    s
}

fn usable_flavors(dev: &Dev) -> Vec<&'static str> {
    FLAVORS
        .into_iter()
        .filter(|fl| dev.i64a || !fl.ends_with('a'))
        .collect()
}

fn usable_kinds(dev: &Dev) -> Vec<ExpansionKind> {
    let mut v = vec![ExpansionKind::F32InFloat];
    if dev.fp64 {
        v.push(ExpansionKind::F32InDouble);
        v.push(ExpansionKind::F64InDouble);
    }
    v
}

fn build(dev: &Dev, geo: Geo) -> Program {
    build_source(dev, &source(dev, geo), geo.0)
}

fn build_source(dev: &Dev, src: &str, wg: usize) -> Program {
    if let Some(path) = std::env::var_os("EXACT_KIT_DUMP") {
        let _ = std::fs::write(path, src);
    }
    let mut p = Program::create_from_source(&dev.ctx, src).expect("program");
    let opts = format!(
        "-cl-std=CL1.2 {}",
        std::env::var("EXACT_KIT_OPTS").unwrap_or_default()
    );
    let built = p.build(&[dev.id], &opts);
    if std::env::var_os("EXACT_KIT_BUILD_LOG").is_some() {
        eprintln!(
            "build log on {}:\n{}",
            dev.label,
            p.get_build_log(dev.id).unwrap_or_default()
        );
    }
    if let (Some(path), true) = (std::env::var_os("EXACT_KIT_BINARY"), built.is_ok()) {
        // The device's program binary (NVIDIA: PTX text), to read what its compiler made of the
        // kit's loops (design/exact.md "The hot loop": the library's f64 loop against the kit's).
        if let Some(b) = p.get_binaries().ok().and_then(|v| v.into_iter().next()) {
            let _ = std::fs::write(path, b);
        }
    }
    if built.is_err() {
        let log = p.get_build_log(dev.id).unwrap_or_default();
        let path = std::env::temp_dir().join("exact_kit_failed.cl");
        let _ = std::fs::write(&path, src);
        panic!(
            "build on {} (WG {wg}) failed (source in {}):\n{log}",
            dev.label,
            path.display()
        );
    }
    p
}

// ---- buffers and launches ---------------------------------------------------------------------

fn buf<T: Copy>(dev: &Dev, init: &[T]) -> Buffer<T> {
    let mut v = init.to_vec();
    if v.is_empty() {
        // A zero-sized buffer is invalid: one element that nothing reads.
        // SAFETY: T is a plain value type here (integers and floats).
        v.push(unsafe { std::mem::zeroed() });
    }
    // SAFETY: COPY_HOST_PTR copies v.len() elements from a live vector.
    unsafe {
        Buffer::<T>::create(
            &dev.ctx,
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            v.len(),
            v.as_mut_ptr() as *mut c_void,
        )
    }
    .expect("buffer")
}

fn read<T: Copy + Default>(dev: &Dev, b: &Buffer<T>, n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    // SAFETY: a blocking read of n elements into a vector of n elements.
    unsafe {
        dev.queue
            .enqueue_read_buffer(b, CL_BLOCKING, 0, &mut v, &[])
    }
    .expect("read");
    v
}

/// Runs kernel `name` with arguments set by `args` over `global` items in groups of `local`;
/// returns its device time in ns.
fn launch(
    dev: &Dev,
    p: &Program,
    name: &str,
    global: usize,
    local: Option<usize>,
    args: impl FnOnce(&mut ExecuteKernel),
) -> u64 {
    if std::env::var_os("EXACT_KIT_TRACE").is_some() {
        eprintln!(
            "launch {} {name} global {global} local {local:?}",
            dev.label
        );
    }
    let k = Kernel::create(p, name).unwrap_or_else(|e| panic!("kernel {name}: {e}"));
    let mut ek = ExecuteKernel::new(&k);
    args(&mut ek);
    ek.set_global_work_size(global);
    if let Some(l) = local {
        ek.set_local_work_size(l);
    }
    // SAFETY: every argument was set by `args` with buffers that outlive the blocking finish.
    let ev = unsafe { ek.enqueue_nd_range(&dev.queue) }.unwrap_or_else(|e| panic!("{name}: {e}"));
    ev.wait().expect("wait");
    let (a, b) = (ev.profiling_command_start(), ev.profiling_command_end());
    b.unwrap_or(0).saturating_sub(a.unwrap_or(0))
}

/// The host accumulator of device rows (`rows` concatenated limb arrays).
fn merge_rows(f: Format, rows: &[i64]) -> Superacc {
    let mut a = Superacc::new(f);
    for r in rows.chunks(f.limbs()) {
        a.merge(&Superacc::from_limbs(f, r).expect("device limbs"))
            .expect("merge");
    }
    a
}

// ---- inputs -----------------------------------------------------------------------------------

/// (pattern, n, seed) cases for a device: smaller on the simulator. A sampled run
/// (`tests/common/sample.rs`; `CLREDUCE_FULL_MATRIX=1` takes all) leaves out one size per
/// pattern off the simulator, rotating with the pattern from a seeded start, so every pattern
/// meets two sizes and every size about two thirds of the patterns.
fn cases(dev: &Dev) -> Vec<(Pattern, usize, u64)> {
    let sizes: &[usize] = if dev.sim { &[97, 300] } else { &[1, 203, 4099] };
    let start = sample::sample_hash("exact_kit::cases") as usize;
    let mut v = Vec::new();
    for (k, p) in Pattern::ALL.into_iter().enumerate() {
        for (i, &n) in sizes.iter().enumerate() {
            let left_out = !dev.sim && !sample::full_matrix() && i == (k + start) % sizes.len();
            if !left_out {
                v.push((p, n, (k * 10 + i) as u64 + 1));
            }
        }
    }
    v
}

/// The work-group geometries off the simulator: all three with `CLREDUCE_FULL_MATRIX=1`,
/// otherwise two of them, the one left out chosen by the seed (each geometry is a program
/// build per device, the larger part of the element and expansion tests' time).
fn wgs(dev: &Dev) -> Vec<Geo> {
    const ALL: [Geo; 3] = [(1, false), (3, true), (64, false)];
    if dev.sim {
        return vec![(3, false)];
    }
    if sample::full_matrix() {
        return ALL.to_vec();
    }
    let out = sample::sample_hash("exact_kit::wgs") as usize % ALL.len();
    let mut v = ALL.to_vec();
    v.remove(out);
    v
}

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

// ---- tests ------------------------------------------------------------------------------------

#[test]
fn constants_match_the_host() {
    let _g = lock();
    let mut t = Tally::default();
    for dev in devices() {
        let p = build(&dev, (1, false));
        let out = buf(&dev, &[0i64; 16]);
        launch(&dev, &p, "t_consts", 1, None, |k| unsafe {
            k.set_arg(&out);
        });
        let got = read(&dev, &out, 16);
        let (a, b, c) = (
            ExpansionKind::F32InDouble.spec(),
            ExpansionKind::F32InFloat.spec(),
            ExpansionKind::F64InDouble.spec(),
        );
        let want: Vec<i64> = [
            Format::F32.digits() as i64,
            Format::F32.base_exp() as i64,
            Format::F32.limbs() as i64,
            Format::F64.digits() as i64,
            Format::F64.base_exp() as i64,
            Format::F64.limbs() as i64,
            MAX_CONTRIBUTIONS as i64,
        ]
        .into_iter()
        .chain(
            [a, b, c]
                .iter()
                .flat_map(|s| [s.exp_lo as i64, s.exp_hi as i64, s.cap as i64]),
        )
        .collect();
        t.check(got == want, || {
            format!("{}: constants {got:?} != {want:?}", dev.label)
        });
    }
    t.finish("constants_match_the_host");
}

/// Runs `t_elem_{fl}_{f}` over `xb` (n elements) and returns the normalized merged limbs.
fn run_elem<T>(
    dev: &Dev,
    p: &Program,
    fl: &str,
    wg: usize,
    f: Format,
    xb: &Buffer<T>,
    n: usize,
) -> Vec<i64> {
    let fw = if f == Format::F32 { 32 } else { 64 };
    let nr = rows(fl, wg) * f.limbs();
    let out = buf(dev, &vec![0i64; nr]);
    launch(
        dev,
        p,
        &format!("t_elem_{fl}_{fw}"),
        GROUPS * wg,
        Some(wg),
        |k| unsafe {
            k.set_arg(xb).set_arg(&(n as cl_uint)).set_arg(&out);
        },
    );
    merge_rows(f, &read(dev, &out, nr)).limbs().unwrap()
}

/// Every element deposit flavor the device has, both formats, on `cases`.
fn elements_on(dev: &Dev, wgs: &[Geo], cases: &[(Pattern, usize, u64)], t: &mut Tally) {
    if !dev.i64a {
        t.skip(
            dev,
            "flavors ga, la",
            "no 64-bit atomics (cl_khr_int64_base_atomics)",
        );
    }
    for &(wg, cvt) in wgs {
        let p = build(dev, (wg, cvt));
        for &(pat, n, seed) in cases {
            let (x32, x64) = (f32s(pat, n, seed), f64s(pat, n, seed));
            let want32 = exact::accumulate_f32(&x32).limbs().unwrap();
            let want64 = exact::accumulate_f64(&x64).limbs().unwrap();
            let (b32, b64) = (buf(dev, &bits32(&x32)), buf(dev, &bits64(&x64)));
            for fl in usable_flavors(dev) {
                let got = run_elem(dev, &p, fl, wg, Format::F32, &b32, n);
                t.check(got == want32, || {
                    format!(
                        "{} WG {wg} t_elem_{fl}_32 {} n={n} seed={seed}: {got:?} != {want32:?}",
                        dev.label,
                        pat.name()
                    )
                });
                let got = run_elem(dev, &p, fl, wg, Format::F64, &b64, n);
                t.check(got == want64, || {
                    format!(
                        "{} WG {wg} t_elem_{fl}_64 {} n={n} seed={seed}: {got:?} != {want64:?}",
                        dev.label,
                        pat.name()
                    )
                });
            }
        }
    }
}

/// Every element deposit flavor, both formats, every pattern, on every device.
#[test]
fn element_deposits_match_the_host() {
    let _g = lock();
    sample::announce_sample("element_deposits_match_the_host");
    let mut t = Tally::default();
    for dev in devices() {
        elements_on(&dev, &wgs(&dev), &cases(&dev), &mut t);
    }
    t.finish("element_deposits_match_the_host");
}

/// The result of one expansion run: the merged rows' limbs and, in mode 1, the device's own
/// final merge (normalized limbs, rounded f32 and f64 bits).
struct ExpOut {
    rows: Vec<i64>,
    fin: Option<(Vec<i64>, u32, u64)>,
}

/// Runs `t_exp_{kind}_{fl}` over `xb` in `mode`; in mode 1 also `t_final_{kind}`.
fn run_exp<T>(
    dev: &Dev,
    p: &Program,
    (k, fl, wg): (ExpansionKind, &str, usize),
    xb: &Buffer<T>,
    n: usize,
    mode: u32,
) -> ExpOut {
    let (_, _, nc, _, push, fw) = kind_info(k);
    let f = if fw == 32 { Format::F32 } else { Format::F64 };
    let nr = rows(fl, wg);
    let out = buf(dev, &vec![0i64; nr * f.limbs()]);
    let run = |parts: &dyn Fn(&mut ExecuteKernel)| {
        launch(
            dev,
            p,
            &format!("t_exp_{push}_{fl}"),
            GROUPS * wg,
            Some(wg),
            |e| unsafe {
                e.set_arg(xb).set_arg(&(n as cl_uint)).set_arg(&out);
                parts(e);
                e.set_arg(&mode);
            },
        );
    };
    let fin = |parts_set: &dyn Fn(&mut ExecuteKernel)| {
        let norm = buf(dev, &vec![0i64; f.limbs()]);
        let bits = buf(dev, &[0u64; 2]);
        launch(dev, p, &format!("t_final_{push}"), 1, Some(1), |e| unsafe {
            parts_set(e);
            e.set_arg(&(GROUPS as cl_uint))
                .set_arg(&out)
                .set_arg(&(nr as cl_uint))
                .set_arg(&norm)
                .set_arg(&bits);
        });
        let b = read(dev, &bits, 2);
        (read(dev, &norm, f.limbs()), b[0] as u32, b[1])
    };
    let mut result = None;
    if k == ExpansionKind::F32InFloat {
        let parts = buf(dev, &vec![0 as cl_float; GROUPS * nc]);
        run(&|e| unsafe {
            e.set_arg(&parts);
        });
        if mode & 1 == 1 {
            result = Some(fin(&|e| unsafe {
                e.set_arg(&parts);
            }));
        }
    } else {
        let parts = buf(dev, &vec![0 as cl_double; GROUPS * nc]);
        run(&|e| unsafe {
            e.set_arg(&parts);
        });
        if mode & 1 == 1 {
            result = Some(fin(&|e| unsafe {
                e.set_arg(&parts);
            }));
        }
    }
    ExpOut {
        rows: read(dev, &out, nr * f.limbs()),
        fin: result,
    }
}

/// Modes of t_exp (bit 0: cross-group merge, bit 1: speculative, bit 2: block pre-sum).
fn modes(k: ExpansionKind) -> Vec<u32> {
    if k == ExpansionKind::F32InDouble {
        vec![0, 1, 2, 3, 6, 7]
    } else {
        vec![0, 1, 2, 3]
    }
}

/// Every expansion the device has, with every residue flavor it has, flushed in the group
/// (mode 0) and merged across groups by one work-item (mode 1), on `cases`.
fn expansions_on(dev: &Dev, wgs: &[Geo], cases: &[(Pattern, usize, u64)], t: &mut Tally) {
    if !dev.i64a {
        t.skip(
            dev,
            "expansions with flavors ga, la",
            "no 64-bit atomics (cl_khr_int64_base_atomics)",
        );
    }
    if !dev.fp64 {
        t.skip(
            dev,
            "expansions f32d, f64d",
            "no fp64 (cl_khr_fp64): the float expansion runs instead",
        );
    }
    for &(wg, cvt) in wgs {
        let p = build(dev, (wg, cvt));
        for &(pat, n, seed) in cases {
            let (x32, x64) = (f32s(pat, n, seed), f64s(pat, n, seed));
            let (h32, h64) = (exact::accumulate_f32(&x32), exact::accumulate_f64(&x64));
            let b32 = buf(dev, &bits32(&x32));
            let b64 = dev.fp64.then(|| buf(dev, &x64));
            for k in usable_kinds(dev) {
                let h = if k == ExpansionKind::F64InDouble {
                    &h64
                } else {
                    &h32
                };
                let f = h.format();
                let want = h.limbs().unwrap();
                let want_bits = (h.round_f32().to_bits(), h.round_f64().to_bits());
                for fl in usable_flavors(dev) {
                    for mode in modes(k) {
                        let o = match &b64 {
                            Some(b) if k == ExpansionKind::F64InDouble => {
                                run_exp(dev, &p, (k, fl, wg), b, n, mode)
                            }
                            _ => run_exp(dev, &p, (k, fl, wg), &b32, n, mode),
                        };
                        let case = || {
                            format!(
                                "{} WG {wg} cvt_hw {cvt} {k:?} {fl} mode {mode} {} n={n} seed={seed}",
                                dev.label,
                                pat.name()
                            )
                        };
                        match o.fin {
                            None => {
                                let got = merge_rows(f, &o.rows).limbs().unwrap();
                                t.check(got == want, || format!("{}: {got:?} != {want:?}", case()));
                            }
                            Some((norm, r32, r64)) => {
                                t.check(norm == want, || {
                                    format!("{}: final limbs {norm:?} != {want:?}", case())
                                });
                                t.check((r32, r64) == want_bits, || {
                                    format!(
                                        "{}: rounded {r32:#x} {r64:#x} != {:#x} {:#x}",
                                        case(),
                                        want_bits.0,
                                        want_bits.1
                                    )
                                });
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Every expansion with every residue flavor on every device: bit equality with the host's
/// accumulator and rounding.
#[test]
fn expansions_match_the_host() {
    let _g = lock();
    sample::announce_sample("expansions_match_the_host");
    let mut t = Tally::default();
    for dev in devices() {
        expansions_on(&dev, &wgs(&dev), &cases(&dev), &mut t);
    }
    t.finish("expansions_match_the_host");
}

/// The fallbacks of a device without fp64 and without 64-bit atomics, on every device: the
/// program is built without cl_khr_fp64 and cl_khr_int64_base_atomics (CLR_X_FP64 = 0,
/// CLR_X_I64A = 0), so only the float expansion and the plain flavors exist, and they must
/// still give the host's bits. The skipped flavors are reported as SKIP.
#[test]
fn fallbacks_without_fp64_and_int64_atomics() {
    let _g = lock();
    let mut t = Tally::default();
    let cases: Vec<(Pattern, usize, u64)> = Pattern::ALL
        .iter()
        .enumerate()
        .map(|(k, &p)| (p, 157, k as u64 + 500))
        .collect();
    for mut dev in devices() {
        dev.fp64 = false;
        dev.i64a = false;
        dev.label += " [masked: no fp64, no int64 atomics]";
        let w: &[Geo] = if dev.sim { &[(2, false)] } else { &[(5, true)] };
        elements_on(&dev, w, &cases, &mut t);
        expansions_on(&dev, w, &cases, &mut t);
    }
    t.finish("fallbacks_without_fp64_and_int64_atomics");
}

/// Random carry-save limb arrays (within the documented +-2^62, counters sometimes set) and the
/// normalized limbs of adversarial sums.
fn limb_arrays(f: Format, count: usize, seed: u64) -> Vec<i64> {
    let mut rng = Rng::new(seed);
    let d = f.digits();
    let mut v = Vec::with_capacity(count * f.limbs());
    for i in 0..count {
        if i % 4 == 3 {
            let pat = Pattern::ALL[i / 4 % Pattern::ALL.len()];
            let a = match f {
                Format::F32 => exact::accumulate_f32(&f32s(pat, 50, seed + i as u64)),
                Format::F64 => exact::accumulate_f64(&f64s(pat, 50, seed + i as u64)),
            };
            v.extend(a.limbs().unwrap());
            continue;
        }
        let cut = (rng.next_u64() % (d as u64 + 1)) as usize;
        for j in 0..d {
            let r = rng.next_u64();
            let x = match r % 7 {
                _ if j >= cut && i % 2 == 0 => 0,
                0 | 1 => 0,
                2..=4 => (r >> 3) as i64 >> 31,
                _ => (r >> 3) as i64 >> 1,
            };
            v.push(x);
        }
        for _ in 0..3 {
            v.push(if rng.next_u64().is_multiple_of(11) {
                1
            } else {
                0
            });
        }
    }
    v
}

#[test]
fn rounding_and_normalization_match_the_host() {
    let _g = lock();
    let mut t = Tally::default();
    for dev in devices() {
        let wg = 4;
        let p = build(&dev, (wg, false));
        let count = if dev.sim { 64 } else { 2048 };
        for (f, fw) in [(Format::F32, 32), (Format::F64, 64)] {
            let l = f.limbs();
            let input = limb_arrays(f, count, 77 + fw as u64);
            let inb = buf(&dev, &input);
            let outs: Vec<Buffer<cl_long>> =
                (0..3).map(|_| buf(&dev, &vec![0i64; count * l])).collect();
            let r32 = buf(&dev, &vec![0u32; count]);
            let r64 = buf(&dev, &vec![0u64; count]);
            launch(
                &dev,
                &p,
                &format!("t_round_{fw}"),
                count.div_ceil(wg) * wg,
                Some(wg),
                |k| unsafe {
                    k.set_arg(&inb).set_arg(&(count as cl_uint));
                    for o in &outs {
                        k.set_arg(o);
                    }
                    k.set_arg(&r32).set_arg(&r64);
                },
            );
            let norms: Vec<Vec<i64>> = outs.iter().map(|o| read(&dev, o, count * l)).collect();
            let (g32, g64): (Vec<cl_uint>, Vec<cl_ulong>) =
                (read(&dev, &r32, count), read(&dev, &r64, count));
            for i in 0..count {
                let limbs = &input[i * l..(i + 1) * l];
                let h = Superacc::from_limbs(f, limbs).unwrap();
                let want = h.limbs().unwrap();
                for (which, n) in ["g", "p", "l"].iter().zip(&norms) {
                    let got = &n[i * l..(i + 1) * l];
                    t.check(got == want.as_slice(), || format!("{} f{fw} #{i} normalize_{which}: {got:?} != {want:?} (input {limbs:?})", dev.label));
                }
                let (w32, w64) = (h.round_f32().to_bits(), h.round_f64().to_bits());
                t.check(g32[i] == w32 && g64[i] == w64, || {
                    format!(
                        "{} f{fw} #{i}: rounded {:#x} {:#x} != {w32:#x} {w64:#x} (input {limbs:?})",
                        dev.label, g32[i], g64[i]
                    )
                });
            }
        }
    }
    t.finish("rounding_and_normalization_match_the_host");
}
