//! The public reduction API: ranges, reductions, kernel bodies, `parallel_for_reduce`, and the
//! launch sequence that runs a plan.

use crate::buffer::AnyBuffer;
use crate::codegen::{self, ParamKind};
use crate::error::{Error, Result};
use crate::launch::{self, Arg, Mem};
use crate::ops::Op;
use crate::plan::{self, CrossAlgo, Determinism, FormRequest, Plan, Request, Strategy, VarRequest};
use crate::program;
use crate::queue::{Queue, QueueInner};
use crate::types::{ElemType, Value};
use opencl3::event::Event;
use std::sync::Arc;

/// A SYCL `range`: `n` work-items, each with an id `i` in `0..n`; clreduce picks the geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub n: u64,
}

impl Range {
    pub fn new(n: u64) -> Range {
        Range { n }
    }
}

/// A SYCL `nd_range`: a global size and a work-group (local) size, 1-D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdRange {
    pub global: u64,
    pub local: usize,
}

impl NdRange {
    pub fn new(global: u64, local: usize) -> NdRange {
        NdRange { global, local }
    }
}

/// Either form of iteration space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Range(Range),
    NdRange(NdRange),
}

impl From<Range> for Form {
    fn from(r: Range) -> Form {
        Form::Range(r)
    }
}
impl From<NdRange> for Form {
    fn from(r: NdRange) -> Form {
        Form::NdRange(r)
    }
}

impl Form {
    fn request(&self) -> FormRequest {
        match *self {
            Form::Range(r) => FormRequest::Range { n: r.n },
            Form::NdRange(r) => FormRequest::NdRange {
                global: r.global,
                local: r.local,
            },
        }
    }
    fn size(&self) -> u64 {
        match *self {
            Form::Range(r) => r.n,
            Form::NdRange(r) => r.global,
        }
    }
}

/// One reduction variable: a device buffer whose first element is the result, an op, and the
/// reducer's name in the kernel body (default `sum` for the first variable, `sum1`, `sum2`, ...
/// for later ones).
#[derive(Clone)]
pub struct Reduction {
    mem: Arc<Mem>,
    ty: ElemType,
    len: usize,
    device: usize,
    device_label: String,
    queue: usize,
    op: Op,
    name: Option<String>,
    init_to_identity: bool,
}

/// Creates a reduction of `buf[0]` with `op` (SYCL's `sycl::reduction(buf, op)`).
pub fn reduction<B: AnyBuffer>(buf: &B, op: Op) -> Reduction {
    Reduction {
        mem: buf.mem(),
        ty: buf.elem_type(),
        len: buf.len(),
        device: buf.device_index(),
        device_label: buf.device_label(),
        queue: buf.queue_id(),
        op,
        name: None,
        init_to_identity: false,
    }
}

impl Reduction {
    /// The reducer's name in the kernel body.
    pub fn name(mut self, name: &str) -> Reduction {
        self.name = Some(name.to_string());
        self
    }
    /// SYCL's `property::reduction::initialize_to_identity`: the variable's initial value is
    /// not part of the result.
    pub fn initialize_to_identity(mut self) -> Reduction {
        self.init_to_identity = true;
        self
    }
    pub fn op(&self) -> Op {
        self.op
    }
    pub fn elem_type(&self) -> ElemType {
        self.ty
    }
}

/// One or more reductions for one launch.
pub struct Reductions(pub Vec<Reduction>);

impl From<Reduction> for Reductions {
    fn from(r: Reduction) -> Self {
        Reductions(vec![r])
    }
}
impl From<Vec<Reduction>> for Reductions {
    fn from(v: Vec<Reduction>) -> Self {
        Reductions(v)
    }
}
impl From<(Reduction, Reduction)> for Reductions {
    fn from(v: (Reduction, Reduction)) -> Self {
        Reductions(vec![v.0, v.1])
    }
}
impl From<(Reduction, Reduction, Reduction)> for Reductions {
    fn from(v: (Reduction, Reduction, Reduction)) -> Self {
        Reductions(vec![v.0, v.1, v.2])
    }
}

#[derive(Clone)]
enum ArgKind {
    Buffer {
        mem: Arc<Mem>,
        ty: ElemType,
        writable: bool,
        device: usize,
        queue: usize,
        label: String,
    },
    Scalar(Value),
}

/// A kernel body in OpenCL C and the buffers and scalars it uses by name.
///
/// The body runs once per id. It sees `i` (the id) and `n` (the range size), each reducer under
/// its name (`sum += x[i];`, `combine(lo, x[i]);`, `lo_combine(x[i]);`), the bound arguments, and
/// in the nd_range form OpenCL's own `get_local_id()` and friends.
#[derive(Clone)]
pub struct Kernel {
    body: String,
    args: Vec<(String, ArgKind)>,
}

impl Kernel {
    pub fn new(body: &str) -> Kernel {
        Kernel {
            body: body.to_string(),
            args: Vec::new(),
        }
    }
    /// Binds a read-only buffer (`__global const T* restrict name`).
    pub fn arg<B: AnyBuffer>(mut self, name: &str, buf: &B) -> Kernel {
        self.args.push((name.to_string(), Self::buf(buf, false)));
        self
    }
    /// Binds a buffer the body may write (`__global T* name`).
    pub fn arg_mut<B: AnyBuffer>(mut self, name: &str, buf: &B) -> Kernel {
        self.args.push((name.to_string(), Self::buf(buf, true)));
        self
    }
    /// Binds a scalar passed by value.
    pub fn scalar(mut self, name: &str, v: impl Into<Value>) -> Kernel {
        self.args
            .push((name.to_string(), ArgKind::Scalar(v.into())));
        self
    }
    fn buf<B: AnyBuffer>(b: &B, writable: bool) -> ArgKind {
        ArgKind::Buffer {
            mem: b.mem(),
            ty: b.elem_type(),
            writable,
            device: b.device_index(),
            queue: b.queue_id(),
            label: b.device_label(),
        }
    }
    pub fn body(&self) -> &str {
        &self.body
    }
}

/// Launch options: a forced strategy and the determinism mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub strategy: Strategy,
    pub determinism: Determinism,
    /// Geometry override for tuning experiments (`CLREDUCE_TUNE`); `None` is automatic.
    pub tuning: Option<plan::Tuning>,
}

impl Options {
    /// Strategy from `CLREDUCE_STRATEGY`, deterministic.
    pub fn from_env() -> Result<Options> {
        Ok(Options {
            strategy: Strategy::from_env()?,
            determinism: Determinism::Deterministic,
            tuning: plan::Tuning::from_env()?,
        })
    }
    pub fn strategy(mut self, s: Strategy) -> Options {
        self.strategy = s;
        self
    }
    pub fn relaxed(mut self) -> Options {
        self.determinism = Determinism::Relaxed;
        self
    }
}

/// A launched reduction: its events, its plan, and what it must keep alive. The results are on
/// the device until read (`Buffer::to_vec`, `get`), which waits for them.
pub struct ReduceEvent {
    events: Vec<Event>,
    plan: Option<Arc<Plan>>,
    _keep: Vec<Arc<Mem>>,
}

impl ReduceEvent {
    /// Blocks until the reduction has finished.
    pub fn wait(&self) -> Result<()> {
        for e in &self.events {
            e.wait().map_err(Error::cl("clWaitForEvents"))?;
        }
        Ok(())
    }
    /// The plan that ran (`None` when nothing had to run, e.g. n = 0).
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_deref()
    }
    /// Device time in nanoseconds from the first command's start to the last one's end
    /// (OpenCL profiling events). Waits first.
    pub fn device_time_ns(&self) -> Result<u64> {
        self.wait()?;
        let (Some(first), Some(last)) = (self.events.first(), self.events.last()) else {
            return Ok(0);
        };
        let start = first
            .profiling_command_start()
            .map_err(Error::cl("clGetEventProfilingInfo"))?;
        let end = last
            .profiling_command_end()
            .map_err(Error::cl("clGetEventProfilingInfo"))?;
        Ok(end.saturating_sub(start))
    }
    /// Number of device commands this reduction enqueued.
    pub fn commands(&self) -> usize {
        self.events.len()
    }
}

const RESERVED: [&str; 2] = ["i", "n"];

/// Sets a reduction variable to its op's identity (initialize_to_identity).
fn fill_identity(q: &QueueInner, r: &Reduction, v: &plan::VarPlan) -> Result<Event> {
    launch::fill(&q.queue, &r.mem, &v.identity.to_bytes(), 0, r.ty.size())
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Checks the reducer shorthands in the body against what each op allows.
fn check_shorthands(body: &str, name: &str, op: Op) -> Result<()> {
    let allowed = op.shorthands();
    let b = body.as_bytes();
    let mut pos = 0;
    while let Some(off) = body[pos..].find(name) {
        let start = pos + off;
        let end = start + name.len();
        pos = end;
        let before_ok =
            start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
        let after_ok = end == b.len() || !(b[end].is_ascii_alphanumeric() || b[end] == b'_');
        if !before_ok || !after_ok {
            continue;
        }
        let rest = body[end..].trim_start();
        let pre = body[..start].trim_end();
        for opstr in [
            "+=", "-=", "*=", "/=", "&=", "|=", "^=", "%=", "<<=", ">>=", "++", "--",
        ] {
            let used =
                rest.starts_with(opstr) || (matches!(opstr, "++" | "--") && pre.ends_with(opstr));
            // A plain `r = v` would overwrite the work-item's accumulator: never allowed.
            if rest.starts_with('=') && !rest.starts_with("==") {
                return Err(Error::ReducerOperator {
                    name: name.to_string(),
                    operator: "=".into(),
                    op: op.to_string(),
                });
            }
            if used && !allowed.contains(&opstr) {
                return Err(Error::ReducerOperator {
                    name: name.to_string(),
                    operator: opstr.to_string(),
                    op: op.to_string(),
                });
            }
        }
    }
    Ok(())
}

struct Prepared {
    plan: Arc<Plan>,
    compiled: Option<Arc<launch::Compiled>>,
    key: LaunchKey,
}

/// Everything a launch's plan and program depend on.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct LaunchKey {
    req: Request,
    names: Vec<String>,
    params: Vec<(String, ParamKind)>,
    body: String,
}

/// A cached plan with its compiled program.
#[derive(Clone)]
pub(crate) struct Launchable {
    plan: Arc<Plan>,
    compiled: Arc<launch::Compiled>,
}

impl Queue {
    /// Runs `kernel` over `range` with `reductions`, with the strategy from `CLREDUCE_STRATEGY`
    /// (else automatic) and deterministic floating point.
    pub fn parallel_for_reduce(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: Kernel,
    ) -> Result<ReduceEvent> {
        self.parallel_for_reduce_with(range, reductions, kernel, Options::from_env()?)
    }

    /// The plan a launch would use, without running anything.
    pub fn explain(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        options: Options,
    ) -> Result<Plan> {
        let reds = reductions.into();
        let form = range.into();
        Ok((*self.prepare(&form, &reds, &Kernel::new(""), options)?.plan).clone())
    }

    fn prepare(
        &self,
        form: &Form,
        reds: &Reductions,
        kernel: &Kernel,
        options: Options,
    ) -> Result<Prepared> {
        let q = &self.inner;
        let me = q.device.index();
        let mut names = Vec::new();
        for (k, r) in reds.0.iter().enumerate() {
            let name = r.name.clone().unwrap_or_else(|| {
                if k == 0 {
                    "sum".into()
                } else {
                    format!("sum{k}")
                }
            });
            if r.device != me {
                return Err(Error::ForeignBuffer {
                    name,
                    buffer_device: r.device_label.clone(),
                    queue_device: q.device.label(),
                });
            }
            if r.queue != Arc::as_ptr(&self.inner) as usize {
                // Its reads go through the queue that made it, which would not wait for this
                // queue's kernels.
                return Err(Error::ForeignBuffer {
                    name,
                    buffer_device: format!("another queue on {}", r.device_label),
                    queue_device: "the queue of this launch".into(),
                });
            }
            if r.len == 0 {
                return Err(Error::BufferTooShort {
                    name,
                    len: 0,
                    need: 1,
                });
            }
            names.push(name);
        }
        let mut params = Vec::new();
        for (name, a) in &kernel.args {
            match a {
                ArgKind::Buffer {
                    ty,
                    writable,
                    device,
                    queue,
                    label,
                    ..
                } => {
                    if *device != me {
                        return Err(Error::ForeignBuffer {
                            name: name.clone(),
                            buffer_device: label.clone(),
                            queue_device: q.device.label(),
                        });
                    }
                    if *queue != Arc::as_ptr(&self.inner) as usize {
                        // Commands on its own queue (a pending fill or write, later reads)
                        // would not be ordered with this launch.
                        return Err(Error::ForeignBuffer {
                            name: name.clone(),
                            buffer_device: format!("another queue on {label}"),
                            queue_device: "the queue of this launch".into(),
                        });
                    }
                    params.push((
                        name.clone(),
                        ParamKind::Buffer {
                            ty: *ty,
                            writable: *writable,
                        },
                    ));
                }
                ArgKind::Scalar(v) => params.push((name.clone(), ParamKind::Scalar { ty: v.ty() })),
            }
        }
        // A read-only argument is declared `restrict`: it must not also be written.
        let written: Vec<(&str, *const Mem)> = names
            .iter()
            .map(String::as_str)
            .zip(reds.0.iter().map(|r| Arc::as_ptr(&r.mem)))
            .chain(kernel.args.iter().filter_map(|(n, a)| match a {
                ArgKind::Buffer {
                    mem,
                    writable: true,
                    ..
                } => Some((n.as_str(), Arc::as_ptr(mem))),
                _ => None,
            }))
            .collect();
        for (idx, (n, m)) in written.iter().enumerate() {
            if let Some((other, _)) = written[..idx].iter().find(|(_, o)| o == m) {
                return Err(Error::BadArgument {
                    name: n.to_string(),
                    problem: format!(
                        "the same buffer as {other}: two writers of one buffer in one launch"
                    ),
                });
            }
        }
        for (n, a) in &kernel.args {
            if let ArgKind::Buffer {
                mem,
                writable: false,
                ..
            } = a
            {
                if let Some((other, _)) = written.iter().find(|(_, o)| *o == Arc::as_ptr(mem)) {
                    return Err(Error::BadArgument {
                        name: n.clone(),
                        problem: format!("bound read-only (restrict) but the same buffer is written as {other}; bind it with arg_mut"),
                    });
                }
            }
        }
        let req = Request {
            form: form.request(),
            vars: reds
                .0
                .iter()
                .map(|r| VarRequest {
                    op: r.op,
                    ty: r.ty,
                    init_to_identity: r.init_to_identity,
                })
                .collect(),
            strategy: options.strategy,
            determinism: options.determinism,
            tuning: options.tuning,
        };
        let key = LaunchKey {
            req,
            names,
            params,
            body: kernel.body.clone(),
        };
        if let Some(hit) = q
            .launches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(Prepared {
                plan: hit.plan.clone(),
                compiled: Some(hit.compiled.clone()),
                key,
            });
        }
        let LaunchKey {
            req, names, params, ..
        } = &key;
        let all: Vec<&String> = names.iter().chain(params.iter().map(|(n, _)| n)).collect();
        for (idx, n) in all.iter().enumerate() {
            let problem = if !is_ident(n) {
                Some("not an OpenCL C identifier".to_string())
            } else if RESERVED.contains(&n.as_str())
                || n.starts_with("clr_")
                || n.starts_with("CLR_")
                || n.as_str() == "combine"
            {
                Some("reserved (i, n, combine and clr_* are clreduce's)".to_string())
            } else if all[..idx].contains(n) {
                Some("bound twice (argument and reducer names must be unique)".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(Error::BadArgument {
                    name: n.to_string(),
                    problem,
                });
            }
        }
        for (name, r) in names.iter().zip(&reds.0) {
            check_shorthands(&kernel.body, name, r.op)?;
        }
        let plan = Arc::new(plan::plan(&q.caps, req)?);
        tracing::debug!(plan = %plan.summary(), device = %q.device.label(), "planned");
        Ok(Prepared {
            plan,
            compiled: None,
            key,
        })
    }

    /// Like [`Queue::parallel_for_reduce`] with explicit options.
    pub fn parallel_for_reduce_with(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: Kernel,
        options: Options,
    ) -> Result<ReduceEvent> {
        let form = range.into();
        let reds = reductions.into();
        let prep = self.prepare(&form, &reds, &kernel, options)?;
        let q = &self.inner;
        let plan = prep.plan;
        if form.size() == 0 {
            // Nothing to combine: the variable is unchanged, or becomes the identity.
            let mut events = Vec::new();
            for (r, v) in reds.0.iter().zip(&plan.vars) {
                if r.init_to_identity {
                    events.push(fill_identity(q, r, v)?);
                }
            }
            return Ok(ReduceEvent {
                events,
                plan: Some(plan),
                _keep: reds.0.iter().map(|r| r.mem.clone()).collect(),
            });
        }
        let compiled = match prep.compiled {
            Some(c) => c,
            None => self.compile(&plan, &prep.key)?,
        };
        self.run(&plan, &reds, &kernel, &compiled, form)
    }

    /// Builds (or finds) the program of a plan and records the launch in the queue's cache.
    fn compile(&self, plan: &Arc<Plan>, key: &LaunchKey) -> Result<Arc<launch::Compiled>> {
        let q = &self.inner;
        let (names, params, body) = (&key.names, &key.params, &key.body);
        let options = codegen::options(plan, &q.caps);
        let memo_key = format!("{options}\u{0}{names:?}\u{0}{params:?}\u{0}{body}");
        let cached = q
            .compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&memo_key)
            .cloned();
        let compiled = match cached {
            Some(c) => c,
            None => {
                let gen = codegen::generate(plan, &q.caps, names, body, params);
                let program =
                    program::get(&q.device, &gen.source, &gen.options).map_err(|e| match e {
                        Error::Build {
                            device,
                            options,
                            log,
                            generated,
                        } => {
                            let (mapped, in_body) =
                                codegen::map_log(&log, gen.body_first_line, gen.body_lines);
                            if in_body {
                                Error::BodyBuild {
                                    device,
                                    options,
                                    log: mapped,
                                    generated,
                                }
                            } else {
                                Error::Build {
                                    device,
                                    options,
                                    log,
                                    generated,
                                }
                            }
                        }
                        other => other,
                    })?;
                let c = Arc::new(launch::Compiled::new(program, q.device.id())?);
                q.compiled
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(memo_key, c.clone());
                c
            }
        };
        if plan.local > compiled.kernel_wg_limit {
            return Err(Error::WorkGroupTooLarge {
                local: plan.local,
                limit: compiled.kernel_wg_limit,
                limit_name: "CL_KERNEL_WORK_GROUP_SIZE of this kernel",
                device: q.device.label(),
            });
        }
        let mut launches = q.launches.lock().unwrap_or_else(|p| p.into_inner());
        if launches.len() >= crate::queue::LAUNCH_CACHE_MAX {
            launches.clear();
        }
        launches.insert(
            key.clone(),
            Launchable {
                plan: plan.clone(),
                compiled: compiled.clone(),
            },
        );
        Ok(compiled)
    }

    fn run(
        &self,
        plan: &Arc<Plan>,
        reds: &Reductions,
        kernel: &Kernel,
        program: &launch::Compiled,
        form: Form,
    ) -> Result<ReduceEvent> {
        let q: &QueueInner = &self.inner;
        let mut scratch = q.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let label = q.device.label();
        // Scratch: partials per variable, the counter, and a backup slot per variable.
        let need_parts = plan.uses(CrossAlgo::LastGroup) || plan.uses(CrossAlgo::ExtraPass);
        while scratch.partials.len() < plan.vars.len() {
            scratch.partials.push(None);
        }
        for (k, v) in plan.vars.iter().enumerate() {
            let bytes = if need_parts {
                plan.groups as usize * v.ty.size()
            } else {
                8
            };
            let ok = scratch.partials[k]
                .as_ref()
                .is_some_and(|m| m.bytes >= bytes);
            if !ok {
                // Zeroed once at allocation (kernels leave every slot at 0 again). Created from
                // host zeros rather than filled: Oclgrind's uninitialised-value checker does not
                // see clEnqueueFillBuffer.
                let zeros = vec![0u8; bytes.max(8)];
                scratch.partials[k] = Some(launch::create_mem(
                    &q.context,
                    zeros.len(),
                    Some(&zeros),
                    &label,
                )?);
            }
        }
        if scratch.counter.is_none() {
            scratch.counter = Some(launch::create_mem(&q.context, 4, Some(&[0u8; 4]), &label)?);
        }
        let backup_bytes = 8 * plan.vars.len();
        if scratch
            .backup
            .as_ref()
            .is_none_or(|m| m.bytes < backup_bytes)
        {
            scratch.backup = Some(launch::create_mem(&q.context, backup_bytes, None, &label)?);
        }
        let counter = scratch.counter.as_ref().expect("counter allocated above");
        let backup = scratch.backup.as_ref().expect("backup allocated above");

        let mut events = Vec::new();
        // Atomic combine into a variable under initialize_to_identity: back the value up, then
        // set it to the identity; restored if the kernel cannot be enqueued.
        // A launch that changes a variable before a later command could still fail to enqueue
        // (initialize_to_identity filled before an atomic combine, or an extra pass after the
        // main kernel) first backs every variable up, and puts them back if anything fails.
        let needs_backup = plan.passes > 1
            || reds
                .0
                .iter()
                .zip(&plan.vars)
                .any(|(r, v)| v.cross == CrossAlgo::Atomic && r.init_to_identity);
        if needs_backup {
            for (k, r) in reds.0.iter().enumerate() {
                launch::copy(&q.queue, &r.mem, 0, backup, 8 * k, r.ty.size())?;
            }
        }
        let mut args: Vec<Arg> = Vec::new();
        let n_arg = form.size();
        args.push(Arg::Bytes(n_arg.to_le_bytes().to_vec()));
        for (k, r) in reds.0.iter().enumerate() {
            args.push(Arg::Mem(&r.mem));
            args.push(Arg::Mem(
                scratch.partials[k]
                    .as_ref()
                    .expect("partials allocated above"),
            ));
        }
        args.push(Arg::Mem(counter));
        for (_, a) in &kernel.args {
            match a {
                ArgKind::Buffer { mem, .. } => args.push(Arg::Mem(mem)),
                ArgKind::Scalar(v) => args.push(Arg::Bytes(v.to_bytes())),
            }
        }
        let global = plan.groups as usize * plan.local;
        let enqueued = (|| -> Result<()> {
            for (r, v) in reds.0.iter().zip(&plan.vars) {
                if v.cross == CrossAlgo::Atomic && r.init_to_identity {
                    events.push(fill_identity(q, r, v)?);
                }
            }
            events.push(launch::enqueue_kernel(
                &q.queue,
                program,
                "clr_main",
                &args,
                &[global],
                &[plan.local],
                &[],
            )?);
            if plan.passes > 1 {
                args[0] = Arg::Bytes(plan.groups.to_le_bytes().to_vec());
                events.push(launch::enqueue_kernel(
                    &q.queue,
                    program,
                    "clr_finish",
                    &args,
                    &[plan.local],
                    &[plan.local],
                    &[],
                )?);
            }
            Ok(())
        })();
        if let Err(e) = enqueued {
            if needs_backup {
                // Let whatever was enqueued finish, then put every variable back.
                let restored = q
                    .queue
                    .finish()
                    .map_err(Error::cl("clFinish"))
                    .and_then(|()| {
                        for (k, r) in reds.0.iter().enumerate() {
                            launch::copy(&q.queue, backup, 8 * k, &r.mem, 0, r.ty.size())?;
                        }
                        q.queue.finish().map_err(Error::cl("clFinish"))
                    });
                if let Err(re) = restored {
                    tracing::error!(error = %re, "could not restore the reduction variables after a failed launch");
                }
            }
            return Err(e);
        }
        drop(args);
        let mut keep: Vec<Arc<Mem>> = reds.0.iter().map(|r| r.mem.clone()).collect();
        for (_, a) in &kernel.args {
            if let ArgKind::Buffer { mem, .. } = a {
                keep.push(mem.clone());
            }
        }
        // No clFlush: reading a result or waiting on the event submits the commands.
        Ok(ReduceEvent {
            events,
            plan: Some(plan.clone()),
            _keep: keep,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn shorthand_checks() {
        assert!(check_shorthands("sum += x[i];", "sum", Op::Plus).is_ok());
        assert!(check_shorthands("sum++;", "sum", Op::Plus).is_ok());
        assert!(check_shorthands("++sum;", "sum", Op::Plus).is_ok());
        assert!(matches!(
            check_shorthands("lo += x[i];", "lo", Op::Minimum),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(matches!(
            check_shorthands("sum -= 1;", "sum", Op::Plus),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(check_shorthands("summary += 1; combine(sum, 2);", "sum", Op::Minimum).is_ok());
        assert!(check_shorthands("p *= x[i];", "p", Op::Multiplies).is_ok());
        assert!(matches!(
            check_shorthands("lo = x[i];", "lo", Op::Minimum),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(check_shorthands("if (lo == 3) combine(lo, 1);", "lo", Op::Minimum).is_ok());
    }
    #[test]
    fn identifiers() {
        assert!(is_ident("x_1"));
        assert!(!is_ident("1x"));
        assert!(!is_ident("a-b"));
    }
}
