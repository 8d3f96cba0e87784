//! The public reduction API: ranges, reductions, kernel bodies, `parallel_for_reduce`, and the
//! launch sequence that runs a plan.

use crate::buffer::{AnyBuffer, Buffer};
use crate::codegen::{self, ParamKind};
use crate::error::{Error, Result};
use crate::launch::{self, Arg, Mem};
use crate::ops::Op;
use crate::ops::Operator;
use crate::plan::{
    self, CrossAlgo, Determinism, FormRequest, Plan, Request, Shape, SpanStore, Strategy,
    VarRequest,
};
use crate::program;
use crate::queue::{Queue, QueueInner};
use crate::types::{ElemType, Element, Value};
use opencl3::event::Event;
use std::sync::Arc;

/// A SYCL `range` in 1, 2 or 3 dimensions: `n` work-items (the product of the extents), each
/// with a linear id `i` in `0..n` and, through `item`, its id per dimension (row-major: the
/// last dimension varies fastest, as in SYCL); clreduce picks the geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Total work-items (read-only: build ranges with the constructors).
    pub n: u64,
    shape: Shape,
}

impl Range {
    pub fn new(n: u64) -> Range {
        Range {
            n,
            shape: Shape::linear(n, 1),
        }
    }
    /// `range<2>(a, b)`.
    pub fn new_2d(a: u64, b: u64) -> Range {
        Range::dims(&[a, b])
    }
    /// `range<3>(a, b, c)`.
    pub fn new_3d(a: u64, b: u64, c: u64) -> Range {
        Range::dims(&[a, b, c])
    }
    fn dims(e: &[u64]) -> Range {
        let mut global = [1u64; 3];
        global[..e.len()].copy_from_slice(e);
        Range {
            n: e.iter().product(),
            shape: Shape {
                rank: e.len(),
                global,
                local: [1; 3],
            },
        }
    }
    /// The extents, one per dimension.
    pub fn extents(&self) -> &[u64] {
        &self.shape.global[..self.shape.rank]
    }
}

impl From<u64> for Range {
    fn from(n: u64) -> Range {
        Range::new(n)
    }
}
impl From<[u64; 2]> for Range {
    fn from(e: [u64; 2]) -> Range {
        Range::dims(&e)
    }
}
impl From<[u64; 3]> for Range {
    fn from(e: [u64; 3]) -> Range {
        Range::dims(&e)
    }
}

/// A SYCL `nd_range` in 1, 2 or 3 dimensions: a global and a work-group (local) extent per
/// dimension. The body sees OpenCL's `get_global_id(d)`, `get_local_id(d)`, `get_group_id(d)`,
/// `get_global_size(d)`, `get_local_size(d)`, `get_num_groups(d)` with the user's dimensions
/// (clreduce launches the equivalent 1-D geometry and maps the ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdRange {
    /// Total work-items.
    pub global: u64,
    /// Work-items per work-group.
    pub local: usize,
    shape: Shape,
}

impl NdRange {
    pub fn new(global: u64, local: usize) -> NdRange {
        NdRange {
            global,
            local,
            shape: Shape::linear(global, local),
        }
    }
    /// `nd_range<2>(range<2>(g0, g1), range<2>(l0, l1))`.
    pub fn new_2d(global: [u64; 2], local: [usize; 2]) -> NdRange {
        NdRange::dims(&global, &local)
    }
    /// `nd_range<3>(...)`.
    pub fn new_3d(global: [u64; 3], local: [usize; 3]) -> NdRange {
        NdRange::dims(&global, &local)
    }
    fn dims(g: &[u64], l: &[usize]) -> NdRange {
        let mut shape = Shape {
            rank: g.len(),
            global: [1; 3],
            local: [1; 3],
        };
        shape.global[..g.len()].copy_from_slice(g);
        shape.local[..l.len()].copy_from_slice(l);
        NdRange {
            global: g.iter().product(),
            local: l.iter().product(),
            shape,
        }
    }
    pub fn global_extents(&self) -> &[u64] {
        &self.shape.global[..self.shape.rank]
    }
    pub fn local_extents(&self) -> &[usize] {
        &self.shape.local[..self.shape.rank]
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
impl From<u64> for Form {
    fn from(n: u64) -> Form {
        Form::Range(Range::new(n))
    }
}
impl From<[u64; 2]> for Form {
    fn from(e: [u64; 2]) -> Form {
        Form::Range(e.into())
    }
}
impl From<[u64; 3]> for Form {
    fn from(e: [u64; 3]) -> Form {
        Form::Range(e.into())
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
    fn shape(&self) -> Shape {
        match *self {
            Form::Range(r) => r.shape,
            Form::NdRange(r) => r.shape,
        }
    }
    /// Per-dimension checks of an nd_range (the planner sees only the linear sizes).
    fn validate(&self) -> Result<()> {
        let Form::NdRange(r) = *self else {
            return Ok(());
        };
        let sh = r.shape;
        if sh.rank > 1 {
            let (g, l) = (&sh.global[..sh.rank], &sh.local[..sh.rank]);
            if l.contains(&0) {
                return Err(Error::InvalidRange {
                    reason: format!("local size {l:?} has a zero extent"),
                });
            }
            if g.iter().zip(l).any(|(&g, &l)| g % l as u64 != 0) {
                return Err(Error::NdRangeNotDivisible {
                    global: g.iter().map(|&x| x as usize).collect(),
                    local: l.to_vec(),
                });
            }
        }
        Ok(())
    }
    fn size(&self) -> u64 {
        match *self {
            Form::Range(r) => r.n,
            Form::NdRange(r) => r.global,
        }
    }
}

/// The buffer a reduction writes, as the launch needs it.
#[derive(Clone)]
struct Target {
    mem: Arc<Mem>,
    ty: ElemType,
    len: usize,
    device: usize,
    device_label: String,
    queue: usize,
}

impl Target {
    fn of<B: AnyBuffer>(buf: &B) -> Target {
        Target {
            mem: buf.mem(),
            ty: buf.elem_type(),
            len: buf.len(),
            device: buf.device_index(),
            device_label: buf.device_label(),
            queue: buf.queue_id(),
        }
    }
}

/// One reduction variable: a device buffer whose first element (or first `span` elements) is
/// the result, an operator, and the reducer's name in the kernel body (default `sum` for the
/// first variable, `sum1`, `sum2`, ... for later ones).
#[derive(Clone)]
pub struct Reduction {
    target: Target,
    /// argmin/argmax: the u64 buffer that receives the index.
    index: Option<Target>,
    op: Operator,
    span: Option<usize>,
    name: Option<String>,
    init_to_identity: bool,
}

/// Creates a reduction of `buf[0]` with `op` (SYCL's `sycl::reduction(buf, op)`): a built-in
/// [`Op`] or a [`crate::ops::CustomOp`].
pub fn reduction<B: AnyBuffer>(buf: &B, op: impl Into<Operator>) -> Reduction {
    Reduction {
        target: Target::of(buf),
        index: None,
        op: op.into(),
        span: None,
        name: None,
        init_to_identity: false,
    }
}

/// A span reduction (SYCL's `reduction(span<T>(buf, len), op)`): `len` independent
/// reductions into `buf[0..len]`. The body combines element `j` with `hist[j] += v` (for ops
/// with that shorthand), `combine(hist[j], v)` or `hist_combine(j, v)`.
pub fn reduction_span<B: AnyBuffer>(buf: &B, len: usize, op: impl Into<Operator>) -> Reduction {
    Reduction {
        span: Some(len),
        ..reduction(buf, op)
    }
}

fn reduction_arg<B: AnyBuffer>(value: &B, index: &Buffer<u64>, op: Operator) -> Reduction {
    Reduction {
        index: Some(Target::of(index)),
        ..reduction(value, op)
    }
}

/// The smallest value and its index (the lowest index among equal values): the body calls
/// `combine(r, value, index)`; the value lands in `value[0]` and the index in `index[0]`. With
/// `initialize_to_identity` an empty range gives (the type's maximum or +inf, u64::MAX).
pub fn reduction_argmin<B: AnyBuffer>(value: &B, index: &Buffer<u64>) -> Reduction {
    reduction_arg(value, index, Operator::ArgMin)
}

/// The largest value and its index (the lowest index among equal values); see
/// [`reduction_argmin`].
pub fn reduction_argmax<B: AnyBuffer>(value: &B, index: &Buffer<u64>) -> Reduction {
    reduction_arg(value, index, Operator::ArgMax)
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
    pub fn op(&self) -> &Operator {
        &self.op
    }
    pub fn elem_type(&self) -> ElemType {
        self.target.ty
    }
    /// The span length, for span reductions.
    pub fn span(&self) -> Option<usize> {
        self.span
    }
    fn elems(&self) -> usize {
        self.span.unwrap_or(1)
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
    /// How the body names the reducers, by position (`Kernel::reducers`); `None`: each
    /// reduction's own name or the default.
    reducers: Option<Vec<String>>,
}

impl Kernel {
    pub fn new(body: &str) -> Kernel {
        Kernel {
            body: body.to_string(),
            args: Vec::new(),
            reducers: None,
        }
    }
    /// Names the reducers as this body refers to them, by position: reduction `k` is
    /// `names[k]` in the body, whatever its own [`Reduction::name`] or the default (`sum`,
    /// `sum1`, ...). A body written apart from its reductions (closures, generated code) uses
    /// this so that it does not depend on how the caller named them. The count must match the
    /// reductions of the launch (`Error::BadArgument` otherwise).
    pub fn reducers<S: AsRef<str>>(mut self, names: &[S]) -> Kernel {
        self.reducers = Some(names.iter().map(|s| s.as_ref().to_string()).collect());
        self
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
    /// The device label when the queue records no profiling timestamps.
    unprofiled: Option<String>,
    /// The queue's `Workarounds::poll_read` budget: `wait` polls before it blocks.
    poll: Option<std::time::Duration>,
    plan: Option<Arc<Plan>>,
    _keep: Vec<Arc<Mem>>,
}

impl ReduceEvent {
    /// Blocks until the reduction has finished.
    pub fn wait(&self) -> Result<()> {
        for e in &self.events {
            crate::launch::wait_event(e, self.poll, "clEnqueueNDRangeKernel")?;
        }
        Ok(())
    }
    /// The plan that ran (`None` when nothing had to run, e.g. n = 0).
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_deref()
    }
    /// Device time in nanoseconds from the first command's start to the last one's end
    /// (OpenCL profiling events). Waits first. Needs a queue made by
    /// [`Queue::with_profiling`](crate::Queue::with_profiling); on any other it is
    /// `Error::ProfilingDisabled`.
    pub fn device_time_ns(&self) -> Result<u64> {
        self.wait()?;
        if let Some(device) = &self.unprofiled {
            return Err(Error::ProfilingDisabled {
                device: device.clone(),
            });
        }
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

const RESERVED: [&str; 3] = ["i", "n", "item"];

/// Sets a reduction variable (every span element; and the index of argmin/argmax, to
/// u64::MAX) to its op's identity (initialize_to_identity).
fn fill_identity(
    q: &QueueInner,
    r: &Reduction,
    v: &plan::VarPlan,
    events: &mut Vec<Event>,
) -> Result<()> {
    let id = v.identity.ok_or_else(|| Error::NoIdentity {
        op: v.op.to_string(),
        ty: v.ty,
        needed_for: "initialize_to_identity",
    })?;
    let t = &r.target;
    events.push(launch::fill(
        &q.queue,
        &t.mem,
        &id.to_bytes(),
        0,
        r.elems() * t.ty.size(),
    )?);
    if let Some(ix) = &r.index {
        events.push(launch::fill(
            &q.queue,
            &ix.mem,
            &u64::MAX.to_le_bytes(),
            0,
            8,
        )?);
    }
    Ok(())
}

/// The bytes of a variable's result that a launch may change: (buffer, bytes), the index
/// buffer included.
fn result_regions(r: &Reduction) -> Vec<(&Arc<Mem>, usize)> {
    let mut v = vec![(&r.target.mem, r.elems() * r.target.ty.size())];
    if let Some(ix) = &r.index {
        v.push((&ix.mem, 8));
    }
    v
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Checks the reducer shorthands in the body against what each op allows.
fn check_shorthands(body: &str, name: &str, op: &Operator) -> Result<()> {
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

/// Skips a comment starting at `i` (if any); returns the index after it.
fn skip_comment(b: &[u8], i: usize) -> Option<usize> {
    if b[i..].starts_with(b"//") {
        Some(
            b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p),
        )
    } else if b[i..].starts_with(b"/*") {
        Some(
            b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| i + 2 + p + 2),
        )
    } else {
        None
    }
}

/// The end of a balanced expression starting at `i`: the first `;`, `,` or unmatched closing
/// bracket at depth 0 (or `close` itself when it is the matching bracket).
fn expr_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < b.len() {
        if let Some(j) = skip_comment(b, i) {
            i = j;
            continue;
        }
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            b';' | b',' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Rewrites the subscripted uses of span reducers into calls the generated code defines:
/// `hist[b] += v`, `hist[b]++`, `++hist[b]` and `combine(hist[b], v)` become
/// `hist_combine((b), ...)`; `hist_combine(b, v)` is left as it is. Line breaks are kept, so
/// build-log lines still map to the body. Any other use of a span reducer is an error: a
/// reducer is write-only.
fn rewrite_spans(body: &str, spans: &[(&str, &Operator)]) -> Result<String> {
    let mut out = body.to_string();
    for &(name, op) in spans {
        let b = out.clone().into_bytes();
        let mut res = String::with_capacity(b.len() + 32);
        let mut i = 0;
        let mut copied = 0;
        let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        while i < b.len() {
            if let Some(j) = skip_comment(&b, i) {
                i = j;
                continue;
            }
            let at_name = b[i..].starts_with(name.as_bytes())
                && (i == 0 || !is_word(b[i - 1]))
                && b.get(i + name.len()).is_none_or(|&c| !is_word(c));
            if !at_name {
                i += 1;
                continue;
            }
            let bad = |what: &str| {
                Error::BadArgument {
                name: name.to_string(),
                problem: format!(
                    "{what}: a span reducer is only combined, as {name}[i] += v (for ops with that shorthand), combine({name}[i], v) or {name}_combine(i, v)"
                ),
            }
            };
            // A shorthand the op does not allow (`--` never is).
            let allowed = |opstr: &str| {
                if op.shorthands().contains(&opstr) {
                    Ok(())
                } else {
                    Err(Error::ReducerOperator {
                        name: name.to_string(),
                        operator: opstr.to_string(),
                        op: op.to_string(),
                    })
                }
            };
            let after = i + name.len();
            let mut k = after;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if k >= b.len() || b[k] != b'[' {
                return Err(bad("used without a subscript"));
            }
            let idx_end = expr_end(&b, k + 1);
            if idx_end >= b.len() || b[idx_end] != b']' {
                return Err(bad("unbalanced subscript"));
            }
            let idx = &out[k + 1..idx_end];
            // What precedes: `combine(` or a prefix `++`.
            let pre = out[copied..i].trim_end();
            let pre_start = copied + pre.len();
            let mut m = idx_end + 1;
            while m < b.len() && b[m].is_ascii_whitespace() {
                m += 1;
            }
            if let Some(p) = pre.strip_suffix('(') {
                let p = p.trim_end();
                if p.ends_with("combine") && (p.len() == 7 || !is_word(p.as_bytes()[p.len() - 8])) {
                    if m >= b.len() || b[m] != b',' {
                        return Err(bad("combine() needs a value"));
                    }
                    let start = copied + p.len() - 7;
                    res.push_str(&out[copied..start]);
                    res.push_str(&format!("{name}_combine(({idx}),"));
                    i = m + 1;
                    copied = i;
                    continue;
                }
            }
            if pre.ends_with("++") || pre.ends_with("--") {
                allowed(&pre[pre.len() - 2..])?;
                res.push_str(&out[copied..pre_start - 2]);
                res.push_str(&format!("{name}_combine(({idx}), 1)"));
                i = idx_end + 1;
                copied = i;
                continue;
            }
            let rest = &out[m..];
            if rest.starts_with("++") || rest.starts_with("--") {
                allowed(&rest[..2])?;
                res.push_str(&out[copied..i]);
                res.push_str(&format!("{name}_combine(({idx}), 1)"));
                i = m + 2;
                copied = i;
                continue;
            }
            let Some(opstr) = ["+=", "*=", "&=", "|=", "^=", "-=", "/=", "%=", "<<=", ">>="]
                .into_iter()
                .find(|o| rest.starts_with(o))
            else {
                return Err(bad("read or assigned"));
            };
            allowed(opstr)?;
            let v_start = m + opstr.len();
            let v_end = expr_end(&b, v_start);
            res.push_str(&out[copied..i]);
            res.push_str(&format!(
                "{name}_combine(({idx}), ({}))",
                &out[v_start..v_end]
            ));
            i = v_end;
            copied = i;
        }
        res.push_str(&out[copied..]);
        out = res;
    }
    Ok(out)
}

struct Prepared {
    plan: Arc<Plan>,
    /// The cached program (a launch-cache hit), or on a miss the body with its span
    /// subscripts rewritten, ready to compile.
    compiled: std::result::Result<Arc<launch::Compiled>, String>,
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

/// Shortcuts on the queue that take reductions directly (seed 003 missing feature 1), in the
/// style of the main call: `parallel_for` is SYCL's spelling of `parallel_for_reduce`, and the
/// whole-buffer reductions need no body at all.
impl Queue {
    /// SYCL's `queue::parallel_for(range, reductions..., kernel)`: the same as
    /// [`Queue::parallel_for_reduce`].
    pub fn parallel_for(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
    ) -> Result<ReduceEvent> {
        self.parallel_for_reduce(range, reductions, kernel.into())
    }

    /// Reduces every element of `input` with `op` (a built-in [`Op`](crate::Op) or a
    /// [`CustomOp`](crate::CustomOp), identity-less ones included) and waits for the result.
    /// An empty buffer gives the identity, or an error for an identity-less op.
    pub fn reduce<T: Element>(&self, input: &Buffer<T>, op: impl Into<Operator>) -> Result<T> {
        let op = op.into();
        if op.is_arg() {
            return Err(Error::BadArgument {
                name: op.to_string(),
                problem: format!("returns a (value, index) pair: use Queue::{op}"),
            });
        }
        let n = input.len() as u64;
        let out = self.buffer::<T>(1)?;
        let r = reduction(&out, op.clone()).name("r");
        if op.identity(T::TYPE).is_some() {
            self.parallel_for_reduce(
                Range::new(n),
                r.initialize_to_identity(),
                Kernel::new("combine(r, x[i]);").arg("x", input),
            )?;
        } else {
            // No identity: the first element is the initial value, the rest are combined.
            if n == 0 {
                return Err(Error::InvalidRange {
                    reason: format!(
                        "an identity-less reduction ({op}) of an empty buffer has no value"
                    ),
                });
            }
            launch::copy(
                &self.inner.queue,
                &input.mem,
                0,
                &out.mem,
                0,
                T::TYPE.size(),
            )?;
            self.parallel_for_reduce(
                Range::new(n - 1),
                r,
                Kernel::new("combine(r, x[i + 1]);").arg("x", input),
            )?;
        }
        out.get(0)
    }

    /// The sum of every element of `input`.
    pub fn sum<T: Element>(&self, input: &Buffer<T>) -> Result<T> {
        self.reduce(input, Op::Plus)
    }
    /// The smallest element of `input` (the type's maximum, or +inf, when empty).
    pub fn min<T: Element>(&self, input: &Buffer<T>) -> Result<T> {
        self.reduce(input, Op::Minimum)
    }
    /// The largest element of `input` (the type's minimum, or -inf, when empty).
    pub fn max<T: Element>(&self, input: &Buffer<T>) -> Result<T> {
        self.reduce(input, Op::Maximum)
    }
    /// The smallest element of `input` and its index (the lowest among equal values), or
    /// `None` when `input` is empty.
    pub fn argmin<T: Element>(&self, input: &Buffer<T>) -> Result<Option<(T, u64)>> {
        self.arg(input, false)
    }
    /// The largest element of `input` and its index (the lowest among equal values), or
    /// `None` when `input` is empty.
    pub fn argmax<T: Element>(&self, input: &Buffer<T>) -> Result<Option<(T, u64)>> {
        self.arg(input, true)
    }
    fn arg<T: Element>(&self, input: &Buffer<T>, max: bool) -> Result<Option<(T, u64)>> {
        if input.is_empty() {
            return Ok(None);
        }
        let v = self.buffer::<T>(1)?;
        let ix = self.buffer::<u64>(1)?;
        let r = if max {
            reduction_argmax(&v, &ix)
        } else {
            reduction_argmin(&v, &ix)
        };
        self.parallel_for_reduce(
            Range::new(input.len() as u64),
            r.name("r").initialize_to_identity(),
            Kernel::new("combine(r, x[i], i);").arg("x", input),
        )?;
        Ok(Some((v.get(0)?, ix.get(0)?)))
    }
}

impl Queue {
    /// Runs `kernel` over `range` with `reductions`, with the strategy from `CLREDUCE_STRATEGY`
    /// (else automatic) and deterministic floating point.
    pub fn parallel_for_reduce(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
    ) -> Result<ReduceEvent> {
        self.parallel_for_reduce_with(range, reductions, kernel.into(), Options::from_env()?)
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
        if let Some(given) = &kernel.reducers {
            if given.len() != reds.0.len() {
                return Err(Error::BadArgument {
                    name: given.join(", "),
                    problem: format!(
                        "the kernel names {} reducer(s) but the launch has {} reduction(s)",
                        given.len(),
                        reds.0.len()
                    ),
                });
            }
        }
        for (k, r) in reds.0.iter().enumerate() {
            let kernel_name = kernel.reducers.as_ref().map(|g| g[k].clone());
            let name = kernel_name.or_else(|| r.name.clone()).unwrap_or_else(|| {
                if k == 0 {
                    "sum".into()
                } else {
                    format!("sum{k}")
                }
            });
            let targets = std::iter::once((name.clone(), &r.target, r.elems())).chain(
                r.index
                    .iter()
                    .map(|t| (format!("{name} (index buffer)"), t, 1)),
            );
            for (label, t, need) in targets {
                if t.device != me {
                    return Err(Error::ForeignBuffer {
                        name: label,
                        buffer_device: t.device_label.clone(),
                        queue_device: q.device.label(),
                    });
                }
                if t.queue != Arc::as_ptr(&self.inner) as usize {
                    // Its reads go through the queue that made it, which would not wait for
                    // this queue's kernels.
                    return Err(Error::ForeignBuffer {
                        name: label,
                        buffer_device: format!("another queue on {}", t.device_label),
                        queue_device: "the queue of this launch".into(),
                    });
                }
                if t.len < need {
                    return Err(Error::BufferTooShort {
                        name: label,
                        len: t.len,
                        need,
                    });
                }
            }
            if r.op.is_arg() && r.index.is_none() && r.span.is_none() {
                return Err(Error::BadArgument {
                    name,
                    problem: format!(
                        "{} needs an index buffer: use reduction_{}(&values, &indices)",
                        r.op, r.op
                    ),
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
        let written: Vec<(&str, *const Mem)> =
            names
                .iter()
                .map(String::as_str)
                .zip(reds.0.iter().map(|r| Arc::as_ptr(&r.target.mem)))
                .chain(names.iter().zip(&reds.0).filter_map(|(n, r)| {
                    r.index.as_ref().map(|t| (n.as_str(), Arc::as_ptr(&t.mem)))
                }))
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
        form.validate()?;
        let req = Request {
            form: form.request(),
            shape: form.shape(),
            vars: reds
                .0
                .iter()
                .map(|r| VarRequest {
                    op: r.op.clone(),
                    ty: r.target.ty,
                    init_to_identity: r.init_to_identity,
                    span: r.span,
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
                compiled: Ok(hit.compiled.clone()),
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
                Some("reserved (i, n, item, combine and clr_* are clreduce's)".to_string())
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
            if r.span.is_none() {
                check_shorthands(&kernel.body, name, &r.op)?;
            }
        }
        let spans: Vec<(&str, &Operator)> = names
            .iter()
            .zip(&reds.0)
            .filter(|(_, r)| r.span.is_some())
            .map(|(n, r)| (n.as_str(), &r.op))
            .collect();
        let body = rewrite_spans(&kernel.body, &spans)?;
        let plan = Arc::new(plan::plan(&q.caps, req)?);
        tracing::debug!(plan = %plan.summary(), device = %q.device.label(), "planned");
        Ok(Prepared {
            plan,
            compiled: Err(body),
            key,
        })
    }

    /// Like [`Queue::parallel_for_reduce`] with explicit options.
    pub fn parallel_for_reduce_with(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
        options: Options,
    ) -> Result<ReduceEvent> {
        let form = range.into();
        let reds = reductions.into();
        let kernel = kernel.into();
        let prep = self.prepare(&form, &reds, &kernel, options)?;
        let q = &self.inner;
        let plan = prep.plan;
        if form.size() == 0 {
            // Nothing to combine: the variable is unchanged, or becomes the identity.
            let mut events = Vec::new();
            for (r, v) in reds.0.iter().zip(&plan.vars) {
                if r.init_to_identity {
                    fill_identity(q, r, v, &mut events)?;
                }
            }
            return Ok(ReduceEvent {
                events,
                unprofiled: (!self.inner.profiling).then(|| q.device.label()),
                poll: self.inner.queue.poll_read(),
                plan: Some(plan),
                _keep: reds
                    .0
                    .iter()
                    .flat_map(|r| result_regions(r).into_iter().map(|(m, _)| m.clone()))
                    .collect(),
            });
        }
        let compiled = match prep.compiled {
            Ok(c) => c,
            Err(body) => self.compile(&plan, &prep.key, &body)?,
        };
        self.run(&plan, &reds, &kernel, &compiled, form)
    }

    /// Builds (or finds) the program of a plan and records the launch in the queue's cache.
    /// `source_body` is the key's body with span subscripts rewritten (`rewrite_spans`).
    fn compile(
        &self,
        plan: &Arc<Plan>,
        key: &LaunchKey,
        source_body: &str,
    ) -> Result<Arc<launch::Compiled>> {
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
                let gen = codegen::generate(plan, &q.caps, names, source_body, params);
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
        if plan.local > compiled.kernel_wg_limit && !q.caps.workarounds.kernel_wg_size_advisory {
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
        // Scratch: partials per variable, the counter, and a backup of every result region.
        while scratch.partials.len() < plan.vars.len() {
            scratch.partials.push(None);
        }
        for (k, v) in plan.vars.iter().enumerate() {
            let elems = v.span.map_or(1, |s| s.len) as u64;
            let rows = match v.span.map(|s| s.store) {
                Some(SpanStore::GlobalPrivate) => plan.groups * plan.local as u64,
                _ if matches!(v.cross, CrossAlgo::LastGroup | CrossAlgo::ExtraPass) => plan.groups,
                _ => 0,
            };
            let bytes = (rows * elems * v.acc_bytes as u64).max(8);
            let ok = scratch.partials[k]
                .as_ref()
                .is_some_and(|m| m.bytes as u64 >= bytes);
            if !ok {
                // Zeroed once at allocation (kernels leave every slot at 0 again). Created from
                // host zeros rather than filled: Oclgrind's uninitialised-value checker does not
                // see clEnqueueFillBuffer.
                let bytes = usize::try_from(bytes).map_err(|_| Error::InvalidRange {
                    reason: format!("{bytes} bytes of partials exceed the address space"),
                })?;
                let zeros = vec![0u8; bytes];
                scratch.partials[k] = None;
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
        let regions: Vec<(&Arc<Mem>, usize)> = reds.0.iter().flat_map(result_regions).collect();
        let backup_bytes: usize = regions.iter().map(|(_, b)| b.next_multiple_of(8)).sum();
        if scratch
            .backup
            .as_ref()
            .is_none_or(|m| m.bytes < backup_bytes)
        {
            scratch.backup = None;
            scratch.backup = Some(launch::create_mem(&q.context, backup_bytes, None, &label)?);
        }
        let counter = scratch.counter.as_ref().expect("counter allocated above");
        let backup = scratch.backup.as_ref().expect("backup allocated above");

        let mut events = Vec::new();
        // A launch that changes a variable before a later command could still fail to enqueue
        // (initialize_to_identity filled before an atomic combine, or an extra pass after the
        // main kernel) first backs every result region up, and puts them back if anything
        // fails.
        let needs_backup = plan.passes > 1
            || reds
                .0
                .iter()
                .zip(&plan.vars)
                .any(|(r, v)| v.cross == CrossAlgo::Atomic && r.init_to_identity);
        if needs_backup {
            let mut off = 0;
            for (m, b) in &regions {
                launch::copy(&q.queue, m, 0, backup, off, *b)?;
                off += b.next_multiple_of(8);
            }
        }
        let mut args: Vec<Arg> = Vec::new();
        let n_arg = form.size();
        args.push(Arg::Bytes(n_arg.to_le_bytes().to_vec()));
        for (k, r) in reds.0.iter().enumerate() {
            let part = scratch.partials[k]
                .as_ref()
                .expect("partials allocated above");
            args.push(Arg::Mem(&r.target.mem));
            // The index buffer of argmin/argmax; other variables never touch clr_aux.
            args.push(match &r.index {
                Some(ix) => Arg::Mem(&ix.mem),
                None => Arg::Mem(part),
            });
            args.push(Arg::Mem(part));
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
                    fill_identity(q, r, v, &mut events)?;
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
                        let mut off = 0;
                        for (m, b) in &regions {
                            launch::copy(&q.queue, backup, off, m, 0, *b)?;
                            off += b.next_multiple_of(8);
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
        let mut keep: Vec<Arc<Mem>> = regions.iter().map(|(m, _)| (*m).clone()).collect();
        for (_, a) in &kernel.args {
            if let ArgKind::Buffer { mem, .. } = a {
                keep.push(mem.clone());
            }
        }
        // No clFlush: reading a result or waiting on the event submits the commands.
        Ok(ReduceEvent {
            events,
            unprofiled: (!self.inner.profiling).then(|| q.device.label()),
            poll: self.inner.queue.poll_read(),
            plan: Some(plan.clone()),
            _keep: keep,
        })
    }
}

/// A reduction as the host form of a kernel closure (`crate::closure`) runs it: its op, element
/// type, span and start, with the variable's current value(s) read from the device.
pub(crate) struct HostReduction {
    pub op: Operator,
    pub ty: ElemType,
    pub span: Option<usize>,
    pub init_to_identity: bool,
    /// The current value of every element (little-endian), span elements included.
    pub bytes: Vec<u8>,
    /// argmin/argmax: the current index.
    pub index: Option<u64>,
}

impl Reduction {
    /// Reads what the host form needs through `queue`, with the checks a launch makes of the
    /// result buffers (`name` is the reducer's name in the body).
    pub(crate) fn read_for_host(&self, queue: &Queue, name: &str) -> Result<HostReduction> {
        let q = &queue.inner;
        let mine = Arc::as_ptr(q) as usize;
        let targets = std::iter::once((name.to_string(), &self.target, self.elems())).chain(
            self.index
                .iter()
                .map(|t| (format!("{name} (index buffer)"), t, 1)),
        );
        for (label, t, need) in targets {
            if t.queue != mine {
                return Err(Error::ForeignBuffer {
                    name: label,
                    buffer_device: t.device_label.clone(),
                    queue_device: "the queue of this host run".into(),
                });
            }
            if t.len < need {
                return Err(Error::BufferTooShort {
                    name: label,
                    len: t.len,
                    need,
                });
            }
        }
        if self.op.is_arg() && self.index.is_none() {
            return Err(Error::BadArgument {
                name: name.to_string(),
                problem: format!("{} needs an index buffer", self.op),
            });
        }
        let mut bytes = vec![0u8; self.elems() * self.target.ty.size()];
        launch::read_bytes(&q.queue, &self.target.mem, 0, &mut bytes)?;
        let index = match &self.index {
            Some(ix) => {
                let mut b = [0u8; 8];
                launch::read_bytes(&q.queue, &ix.mem, 0, &mut b)?;
                Some(u64::from_le_bytes(b))
            }
            None => None,
        };
        Ok(HostReduction {
            op: self.op.clone(),
            ty: self.target.ty,
            span: self.span,
            init_to_identity: self.init_to_identity,
            bytes,
            index,
        })
    }
}

impl Queue {
    /// The OpenCL C program a launch would build (its build options first, as a comment),
    /// without building or running it: the plan's kernels with the body as the launch
    /// rewrites it (span subscripts) inside. For `clreduce explain --source` and for reading
    /// what a closure becomes.
    pub fn explain_source(
        &self,
        range: impl Into<Form>,
        reductions: impl Into<Reductions>,
        kernel: impl Into<Kernel>,
        options: Options,
    ) -> Result<String> {
        let (form, reds, kernel) = (range.into(), reductions.into(), kernel.into());
        let prep = self.prepare(&form, &reds, &kernel, options)?;
        let key = &prep.key;
        let spans: Vec<(&str, &Operator)> = key
            .names
            .iter()
            .zip(&reds.0)
            .filter(|(_, r)| r.span.is_some())
            .map(|(n, r)| (n.as_str(), &r.op))
            .collect();
        let body = rewrite_spans(&key.body, &spans)?;
        let gen = codegen::generate(&prep.plan, &self.inner.caps, &key.names, &body, &key.params);
        Ok(format!("// build options: {}\n{}", gen.options, gen.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Op;
    #[test]
    fn shorthand_checks() {
        assert!(check_shorthands("sum += x[i];", "sum", &Op::Plus.into()).is_ok());
        assert!(check_shorthands("sum++;", "sum", &Op::Plus.into()).is_ok());
        assert!(check_shorthands("++sum;", "sum", &Op::Plus.into()).is_ok());
        assert!(matches!(
            check_shorthands("lo += x[i];", "lo", &Op::Minimum.into()),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(matches!(
            check_shorthands("sum -= 1;", "sum", &Op::Plus.into()),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(
            check_shorthands("summary += 1; combine(sum, 2);", "sum", &Op::Minimum.into()).is_ok()
        );
        assert!(check_shorthands("p *= x[i];", "p", &Op::Multiplies.into()).is_ok());
        assert!(matches!(
            check_shorthands("lo = x[i];", "lo", &Op::Minimum.into()),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(
            check_shorthands("if (lo == 3) combine(lo, 1);", "lo", &Op::Minimum.into()).is_ok()
        );
    }
    #[test]
    fn span_subscripts_are_rewritten() {
        let plus: Operator = Op::Plus.into();
        let min: Operator = Op::Minimum.into();
        let r = |b: &str, op: &Operator| rewrite_spans(b, &[("hist", op)]);
        assert_eq!(
            r("hist[x[i] & 255] += 1;", &plus).unwrap(),
            "hist_combine((x[i] & 255), ( 1));"
        );
        assert_eq!(r("hist[b]++;", &plus).unwrap(), "hist_combine((b), 1);");
        assert_eq!(r("++hist[b];", &plus).unwrap(), "hist_combine((b), 1);");
        assert_eq!(
            r("combine(hist[f(a, b)], g(c, d));", &min).unwrap(),
            "hist_combine((f(a, b)), g(c, d));"
        );
        assert_eq!(
            r("hist_combine(b, v); // hist[0] = 1\nhistory += 1;", &min).unwrap(),
            "hist_combine(b, v); // hist[0] = 1\nhistory += 1;"
        );
        // Line breaks inside a combined value are kept (build logs map back to the body).
        assert_eq!(
            r("hist[b] +=\n  x[i];", &plus).unwrap(),
            "hist_combine((b), (\n  x[i]));"
        );
        assert!(matches!(
            r("hist[b] += 1;", &min),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(matches!(
            r("hist[b]--;", &plus),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(matches!(
            r("y = hist[b];", &plus),
            Err(Error::BadArgument { .. })
        ));
        assert!(matches!(
            r("hist += 1;", &plus),
            Err(Error::BadArgument { .. })
        ));
        assert!(matches!(
            r("hist[b] = 1;", &plus),
            Err(Error::BadArgument { .. })
        ));
    }
    #[test]
    fn identifiers() {
        assert!(is_ident("x_1"));
        assert!(!is_ident("1x"));
        assert!(!is_ident("a-b"));
    }
}
