//! Every `unsafe` OpenCL call lives here (the only other `unsafe` is the byte view of element
//! slices in `buffer.rs`): every OpenCL call that takes raw pointers or sets kernel
//! arguments goes through here, behind safe functions that check sizes first.
//!
//! On a device with `Workarounds::serialize_device` (Oclgrind) every call here that reaches the
//! device runs under that device's process-wide lock ([`Serial`]), and each enqueued command is
//! finished before the lock is released; see design/errors.md, "Oclgrind and threads".

use super::health::{Fault, QueueHealth};
use super::memory::DeviceMemory;
use super::readpath::{Poll, ReadPath, PINNED_BYTES};
use crate::error::{Error, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use opencl3::types::{cl_event, cl_mem};
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// The process-wide command lock of a device with `Workarounds::serialize_device`, or nothing
/// (every other device: no lock is taken, the cost is one `Option` check per call).
///
/// Oclgrind keeps its runtime state (simulated global memory, command bookkeeping, reference
/// counts) without locks and runs queued commands inside whichever thread finishes or waits, so
/// on such a device every command runs under this lock and is finished before the lock is
/// released: afterwards nothing is queued, and `clWaitForEvents` on the returned (complete)
/// event or a blocking read elsewhere never runs a command outside the lock.
#[derive(Clone, Default)]
pub(crate) struct Serial(Option<Arc<Mutex<()>>>);

impl Serial {
    /// `lock` is the device's lock when the device needs serializing, else `None`.
    pub(crate) fn new(lock: Option<Arc<Mutex<()>>>) -> Serial {
        Serial(lock)
    }

    /// Holds the lock (when there is one) until the guard is dropped. Poisoning is ignored:
    /// the lock protects no data of its own.
    pub(crate) fn hold(&self) -> Option<MutexGuard<'_, ()>> {
        self.0
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn is_on(&self) -> bool {
        self.0.is_some()
    }
}

/// A device's shared context, with the device's [`Serial`] lock and its memory account
/// (limits and bytes held, `memory.rs`). Derefs to the `Context`.
pub(crate) struct DeviceContext {
    context: Arc<Context>,
    serial: Serial,
    memory: Arc<DeviceMemory>,
}

impl DeviceContext {
    /// Whether the device runs one command at a time under its lock (`Workarounds::
    /// serialize_device`): a command held back by a user event would never finish there.
    pub(crate) fn serialized(&self) -> bool {
        self.serial.is_on()
    }
    pub(crate) fn new(
        context: Arc<Context>,
        serial: Serial,
        memory: Arc<DeviceMemory>,
    ) -> DeviceContext {
        DeviceContext {
            context,
            serial,
            memory,
        }
    }
}

impl std::ops::Deref for DeviceContext {
    type Target = Context;
    fn deref(&self) -> &Context {
        &self.context
    }
}

/// An in-order command queue with its device's [`Serial`] lock; released under that lock.
pub(crate) struct ClQueue {
    queue: ManuallyDrop<CommandQueue>,
    serial: Serial,
    /// `Workarounds::wait_before_read` on a queue without profiling: the last kernel enqueued,
    /// waited on before the next blocking read.
    last_kernel: Option<Mutex<Option<Event>>>,
    /// How results come back (`readpath.rs`): polling, a flush after each kernel, pinned
    /// staging for small reads.
    path: ReadPath,
    /// `ReadPath::pinned`: the queue's pinned staging buffer, made at its first small read.
    staging: Mutex<Option<Staging>>,
    /// `ReadPath::mailbox`: the queue's host mailboxes, made at the first shortcut.
    mailbox: Mutex<MailboxState>,
    /// What this queue knows of its failures, its device's memory account, and the fault
    /// injection of tests (`health.rs`).
    pub(crate) health: Arc<QueueHealth>,
    /// This queue itself, for [`claim`] to record it as a buffer's queue.
    me: Weak<ClQueue>,
}

impl ClQueue {
    /// `clFinish`, under the device lock where there is one.
    pub(crate) fn finish(&self) -> Result<()> {
        let _g = self.serial.hold();
        self.queue
            .finish()
            .map_err(|e| self.failed("clFinish", e.0))
    }

    /// `clFlush`: submits what was enqueued without waiting for it (a multi-device launch
    /// starts every device's share before it blocks on any of them).
    pub(crate) fn flush(&self) -> Result<()> {
        let _g = self.serial.hold();
        self.queue.flush().map_err(|e| self.failed("clFlush", e.0))
    }

    /// The error of a call of this queue that failed with `code` (`Error::OutOfDeviceMemory`
    /// when the code means memory, else `Error::Cl`); records the failure, so that the
    /// scratch memory is rebuilt before the next launch.
    pub(crate) fn failed(&self, call: &'static str, code: i32) -> Error {
        self.health.mark_failed();
        self.health.memory.error(call, code)
    }

    /// How this queue polls before it blocks, if it polls (`Workarounds::poll_read`,
    /// `ReadPath::poll`).
    pub(crate) fn poll_read(&self) -> Option<Poll> {
        self.path.poll
    }

    /// On a serialized device, finishes what the caller just enqueued while it still holds the
    /// lock (a no-op elsewhere).
    fn settle(&self) -> Result<()> {
        if self.serial.is_on() {
            self.queue
                .finish()
                .map_err(|e| self.failed("clFinish", e.0))?;
        }
        Ok(())
    }
}

impl Drop for ClQueue {
    fn drop(&mut self) {
        let _g = self.serial.hold();
        if let Some(st) = self
            .staging
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            // SAFETY: `st.ptr` is the mapping of `st.raw` made on this queue, unmapped once
            // here; the queue is finished before the buffer is released.
            unsafe {
                if let Ok(ev) = opencl3::command_queue::enqueue_unmap_mem_object(
                    self.queue.get(),
                    st.raw,
                    st.ptr,
                    0,
                    std::ptr::null(),
                ) {
                    drop(Event::new(ev));
                }
                let _ = self.queue.finish();
                let _ = opencl3::memory::release_mem_object(st.raw);
            }
        }
        let mailbox = std::mem::take(self.mailbox.get_mut().unwrap_or_else(|p| p.into_inner()));
        if let MailboxState::Ready { page, .. } = mailbox {
            // SAFETY: as for the staging buffer: the page is the queue's own mapping, unmapped
            // once after every kernel that may post into it has finished.
            unsafe {
                let _ = self.queue.finish();
                if let Ok(ev) = opencl3::command_queue::enqueue_unmap_mem_object(
                    self.queue.get(),
                    page.raw,
                    page.ptr,
                    0,
                    std::ptr::null(),
                ) {
                    drop(Event::new(ev));
                }
                let _ = self.queue.finish();
                let _ = opencl3::memory::release_mem_object(page.raw);
            }
        }
        // SAFETY: `queue` is dropped exactly once, here, and never used afterwards.
        unsafe { ManuallyDrop::drop(&mut self.queue) };
    }
}

/// The bytes of one host mailbox: the result's bits (8), an argmin/argmax index (8), the
/// sequence number (4), padded.
const MAILBOX_SLOT: usize = 32;
/// Mailboxes per queue: one per concurrent shortcut; a call that finds none free reads.
const MAILBOX_SLOTS: usize = 64;

/// A queue's host mailboxes (`ReadPath::mailbox`, design/decisions.md section 56).
#[derive(Default)]
enum MailboxState {
    /// Not made yet.
    #[default]
    Unmade,
    /// The page, its free slots, the next sequence number, and whether a mailbox has been seen
    /// to carry a launch's result with the bits its read gave (`proven`).
    Ready {
        page: Staging,
        free: Vec<usize>,
        seq: u32,
        proven: bool,
        /// A mailbox did not show its finished launch's result: none is used again.
        off: bool,
    },
    /// The page could not be made: every shortcut reads.
    Off,
}

/// One mailbox taken for one launch: the address its kernel posts to, the sequence number it
/// posts, and whether the queue's mailboxes are proven yet (if not, the caller checks the
/// posted bits against a read and reports with [`mailbox_verdict`]).
#[derive(Debug)]
pub(crate) struct MailboxSlot {
    index: usize,
    pub addr: u64,
    pub seq: u32,
    pub proven: bool,
}

/// Takes a free mailbox of `q` for one launch (making the queue's pinned page first), or
/// `None` where the queue's read path has no mailbox, they are off, or all are in use.
pub(crate) fn mailbox_take(q: &ClQueue) -> Option<MailboxSlot> {
    if !q.path.mailbox {
        return None;
    }
    let mut st = q.mailbox.lock().unwrap_or_else(|p| p.into_inner());
    if matches!(*st, MailboxState::Unmade) {
        let _g = q.serial.hold();
        *st = match Staging::map(&q.queue, MAILBOX_SLOT * MAILBOX_SLOTS) {
            Ok(page) => {
                // SAFETY: the mapping holds MAILBOX_SLOTS slots; zeroed so that no slot shows
                // a sequence number before its launch posts one.
                unsafe {
                    std::ptr::write_bytes(page.ptr as *mut u8, 0, MAILBOX_SLOT * MAILBOX_SLOTS)
                };
                MailboxState::Ready {
                    page,
                    free: (0..MAILBOX_SLOTS).rev().collect(),
                    seq: 0,
                    proven: false,
                    off: false,
                }
            }
            Err(_) => MailboxState::Off,
        };
    }
    match &mut *st {
        MailboxState::Ready {
            page,
            free,
            seq,
            proven,
            ..
        } => {
            let index = free.pop()?;
            // 0 is never posted: a fresh page reads 0 everywhere.
            *seq = seq.wrapping_add(1).max(1);
            Some(MailboxSlot {
                index,
                addr: page.ptr as u64 + (index * MAILBOX_SLOT) as u64,
                seq: *seq,
                proven: *proven,
            })
        }
        _ => None,
    }
}

/// Gives `slot` back to `q` once its launch's post can no longer land in it (it was seen,
/// or the launch has finished).
pub(crate) fn mailbox_give(q: &ClQueue, slot: MailboxSlot) {
    if let MailboxState::Ready { free, off, .. } =
        &mut *q.mailbox.lock().unwrap_or_else(|p| p.into_inner())
    {
        if !*off {
            free.push(slot.index);
        }
    }
}

/// Records whether a mailbox carried its finished launch's result with the bits of the read:
/// `true` proves the queue's mailboxes, `false` turns them off for good (the page stays mapped
/// until the queue drops).
pub(crate) fn mailbox_verdict(q: &ClQueue, ok: bool) {
    if let MailboxState::Ready {
        free, proven, off, ..
    } = &mut *q.mailbox.lock().unwrap_or_else(|p| p.into_inner())
    {
        if ok {
            *proven = true;
        } else {
            free.clear();
            *off = true;
        }
    }
}

/// Whether `q`'s mailboxes are proven and not off (tests, `Queue::__mailbox_proven`).
#[cfg(feature = "testkit")]
pub(crate) fn mailbox_proven(q: &ClQueue) -> bool {
    matches!(
        &*q.mailbox.lock().unwrap_or_else(|p| p.into_inner()),
        MailboxState::Ready {
            proven: true,
            off: false,
            ..
        }
    )
}

/// Spins (or yields, on a queue that polls without spinning) on `slot`'s sequence number for
/// up to `budget`: the 16 bytes posted (the result's bits, then an index) once it shows.
pub(crate) fn mailbox_wait(
    q: &ClQueue,
    slot: &MailboxSlot,
    budget: std::time::Duration,
) -> Option<[u8; 16]> {
    let spin = q.path.poll.is_none_or(|p| p.spin);
    let p = slot.addr as *const u8;
    let start = std::time::Instant::now();
    loop {
        // SAFETY: `p` is a slot of the queue's mapped page, alive until the queue drops (the
        // caller holds the queue); a kernel may store into it concurrently, so it is read
        // with volatile loads only, the sequence number first, then (after an acquire fence)
        // the value that the kernel stored before its system-scope fence.
        let seen = unsafe { std::ptr::read_volatile(p.add(16) as *const u32) } == slot.seq;
        if seen {
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            let mut out = [0u8; 16];
            for (i, b) in out.iter_mut().enumerate() {
                // SAFETY: as above, inside the slot.
                *b = unsafe { std::ptr::read_volatile(p.add(i)) };
            }
            return Some(out);
        }
        if start.elapsed() >= budget {
            return None;
        }
        if spin {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// A queue's pinned staging buffer (`ReadPath::pinned`): [`PINNED_BYTES`] of
/// `CL_MEM_ALLOC_HOST_PTR` memory, mapped once for the queue's life; small reads land there
/// and are copied out.
struct Staging {
    raw: cl_mem,
    ptr: *mut c_void,
}

// SAFETY: the handle and the mapped pointer are used only under the queue's `staging` lock.
unsafe impl Send for Staging {}

impl Staging {
    /// Creates and maps the staging buffer on `q` (a blocking map).
    fn new(q: &CommandQueue) -> std::result::Result<Staging, (&'static str, i32)> {
        Staging::map(q, PINNED_BYTES)
    }

    /// Creates a pinned buffer of `bytes` and maps it for reading and writing (a blocking
    /// map); mapped until its queue drops.
    fn map(q: &CommandQueue, bytes: usize) -> std::result::Result<Staging, (&'static str, i32)> {
        const CL_MEM_READ_WRITE: u64 = 1 << 0;
        const CL_MEM_ALLOC_HOST_PTR: u64 = 1 << 4;
        const CL_MAP_READ: u64 = 1 << 0;
        const CL_MAP_WRITE: u64 = 1 << 1;
        let ctx = q.context().map_err(|e| ("clGetCommandQueueInfo", e.0))?;
        // SAFETY: a new buffer of `bytes` with no host pointer; the blocking map returns a
        // pointer to `bytes` bytes valid until the unmap in ClQueue's drop.
        unsafe {
            let raw = opencl3::memory::create_buffer(
                ctx,
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                bytes,
                std::ptr::null_mut(),
            )
            .map_err(|c| ("clCreateBuffer", c))?;
            let mut ptr: cl_mem = std::ptr::null_mut();
            match opencl3::command_queue::enqueue_map_buffer(
                q.get(),
                raw,
                1,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes,
                &mut ptr,
                0,
                std::ptr::null(),
            ) {
                Ok(ev) => drop(Event::new(ev)),
                Err(c) => {
                    let _ = opencl3::memory::release_mem_object(raw);
                    return Err(("clEnqueueMapBuffer", c));
                }
            }
            Ok(Staging { raw, ptr })
        }
    }
}

/// An OpenCL buffer, type-erased: a `cl_mem` released on drop. OpenCL keeps a released buffer
/// alive until the commands that use it have finished, so dropping one while a launch is in
/// flight is safe. Its bytes count in its device's memory account until it is dropped.
///
/// It lives in its device's shared context, so every queue of the device may use it; it
/// remembers the queue of its last command (`user`), and a command on another queue first
/// finishes that one ([`claim`]): two in-order queues of one context are not ordered with
/// each other.
pub struct Mem {
    raw: cl_mem,
    pub bytes: usize,
    serial: Serial,
    memory: Arc<DeviceMemory>,
    user: Mutex<Option<Arc<ClQueue>>>,
}

// SAFETY: cl_mem handles may be used from any thread (OpenCL API calls are thread-safe, except
// clSetKernelArg on one kernel object, which this crate never shares between threads).
unsafe impl Send for Mem {}
unsafe impl Sync for Mem {}

impl Drop for Mem {
    fn drop(&mut self) {
        // Releasing the last reference frees the buffer in the device's memory.
        let _g = self.serial.hold();
        // SAFETY: `raw` is a valid mem object this value owns one reference to.
        unsafe {
            let _ = opencl3::memory::release_mem_object(self.raw);
        }
        self.memory.release(self.bytes as u64);
    }
}

impl Mem {
    pub fn raw(&self) -> cl_mem {
        self.raw
    }

    /// The queue of the last command enqueued on this buffer, if any: reads and writes go
    /// through it, so they are ordered after that command without a `clFinish`.
    pub(crate) fn last_queue(&self) -> Option<Arc<ClQueue>> {
        self.user.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Makes `q` the queue of `mem`'s next command: when `mem`'s last command went to another queue
/// of the device, that queue is finished first (`clFinish`), so the command sees every earlier
/// write and no earlier read sees its writes. A command on the same queue costs one uncontended
/// lock. Called by every function here that enqueues a command on a buffer, before the device
/// lock is taken.
///
/// Two threads that enqueue on one buffer through two queues at the same moment are ordered by
/// whichever claims first; a launch that writes a buffer another thread is using at the same
/// time is a data race in the caller, as it is on one queue.
fn claim(q: &ClQueue, mem: &Mem) -> Result<()> {
    let mut user = mem.user.lock().unwrap_or_else(|p| p.into_inner());
    match &*user {
        Some(prev) if std::ptr::eq(Arc::as_ptr(prev), q) => return Ok(()),
        Some(prev) => prev.finish()?,
        None => {}
    }
    *user = q.me.upgrade();
    Ok(())
}

/// A program for one device from a binary that device's driver gave out earlier
/// (`clCreateProgramWithBinary`; the disk cache, `disk_cache.rs`). The driver checks the
/// binary: a foreign or damaged one is an error here or at the build that must follow.
pub(crate) fn program_from_binary(
    ctx: &Context,
    id: opencl3::types::cl_device_id,
    binary: &[u8],
) -> Result<Program> {
    // SAFETY: one device and one binary slice of its length, as the call requires; the driver
    // copies the bytes before it returns.
    unsafe { Program::create_from_binary(ctx, &[id], &[binary]) }
        .map_err(Error::cl("clCreateProgramWithBinary"))
}

/// Creates a buffer of `bytes` bytes, copying `init` into it when given (its length must be
/// `bytes`). A size the device cannot hold (above `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, or above
/// `CL_DEVICE_GLOBAL_MEM_SIZE` with what this process already holds there) is refused with
/// `Error::AllocTooLarge` before OpenCL is called.
pub(crate) fn create_mem(
    ctx: &DeviceContext,
    bytes: usize,
    init: Option<&[u8]>,
    device: &str,
) -> Result<Mem> {
    const CL_MEM_READ_WRITE: u64 = 1 << 0;
    const CL_MEM_COPY_HOST_PTR: u64 = 1 << 5;
    let size = bytes.max(1);
    let (flags, ptr) = match init {
        Some(d) if !d.is_empty() => {
            assert_eq!(d.len(), bytes, "create_mem: init length");
            (
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                d.as_ptr() as *mut c_void,
            )
        }
        _ => (CL_MEM_READ_WRITE, std::ptr::null_mut()),
    };
    ctx.memory.reserve(size as u64)?;
    let guard = ctx.serial.hold();
    // SAFETY: with COPY_HOST_PTR the runtime copies `size` bytes from `ptr`, which points to
    // `bytes == size` readable bytes; otherwise ptr is null.
    let raw = unsafe { opencl3::memory::create_buffer(ctx.get(), flags, size, ptr) };
    drop(guard);
    let raw = raw.map_err(|code| {
        ctx.memory.release(size as u64);
        Error::Alloc {
            bytes: size,
            device: device.to_string(),
            code,
        }
    })?;
    Ok(Mem {
        raw,
        bytes: size,
        serial: ctx.serial.clone(),
        memory: ctx.memory.clone(),
        user: Mutex::new(None),
    })
}

/// Creates an in-order command queue, with profiling where asked, whose results come back
/// as `path` says (its kernel wait applies to a queue without profiling only).
pub(crate) fn create_queue(
    ctx: &DeviceContext,
    device: opencl3::types::cl_device_id,
    profiling: bool,
    path: ReadPath,
) -> Result<Arc<ClQueue>> {
    const CL_QUEUE_PROFILING_ENABLE: u64 = 1 << 1;
    let _g = ctx.serial.hold();
    let props = if profiling {
        CL_QUEUE_PROFILING_ENABLE
    } else {
        0
    };
    // SAFETY: ctx and device are valid; clCreateCommandQueue exists on every OpenCL version
    // (deprecated, not removed, since 2.0) and gives an in-order queue.
    let queue = unsafe { CommandQueue::create(ctx, device, props) }
        .map_err(Error::cl("clCreateCommandQueue"))?;
    Ok(Arc::new_cyclic(|me| ClQueue {
        queue: ManuallyDrop::new(queue),
        serial: ctx.serial.clone(),
        last_kernel: (path.wait_kernel && !profiling).then(|| Mutex::new(None)),
        path,
        staging: Mutex::new(None),
        mailbox: Mutex::new(MailboxState::Unmade),
        health: Arc::new(QueueHealth::new(ctx.memory.clone())),
        me: me.clone(),
    }))
}

fn wait_list(events: &[&Event]) -> Vec<cl_event> {
    events.iter().map(|e| e.get()).collect()
}

/// Reads `out.len()` bytes from `mem` at `offset`; returns once they are in `out` (a blocking
/// read, or a polled one with `Workarounds::poll_read`).
pub(crate) fn read_bytes(q: &ClQueue, mem: &Mem, offset: usize, out: &mut [u8]) -> Result<()> {
    if offset + out.len() > mem.bytes {
        return Err(Error::LengthMismatch {
            buffer: mem.bytes,
            host: offset + out.len(),
        });
    }
    if out.is_empty() {
        return Ok(());
    }
    claim(q, mem)?;
    if let Some(last) = &q.last_kernel {
        let pending = last.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(ev) = pending {
            wait_event(&ev, q.path.poll, "clEnqueueNDRangeKernel", &q.health)?;
        }
    }
    if q.path.pinned && out.len() <= PINNED_BYTES {
        let mut st = q.staging.lock().unwrap_or_else(|p| p.into_inner());
        if st.is_none() {
            let _g = q.serial.hold();
            *st = Some(Staging::new(&q.queue).map_err(|(call, code)| q.failed(call, code))?);
        }
        let staging = st.as_ref().map(|s| s.ptr).unwrap_or(std::ptr::null_mut());
        // SAFETY: the staging mapping holds PINNED_BYTES >= out.len() bytes and is used by this
        // read alone (its lock is held); the read has ended when `read_into` returns.
        let pinned = unsafe { std::slice::from_raw_parts_mut(staging as *mut u8, out.len()) };
        read_into(q, mem, offset, pinned)?;
        out.copy_from_slice(pinned);
    } else {
        read_into(q, mem, offset, out)?;
    }
    match q.health.take_fault(|f| matches!(f, Fault::Read(_))) {
        Some(Fault::Read(code)) => Err(q.failed("clEnqueueReadBuffer", code)),
        _ => Ok(()),
    }
}

/// The read command of [`read_bytes`]: returns once the bytes are in `out`.
fn read_into(q: &ClQueue, mem: &Mem, offset: usize, out: &mut [u8]) -> Result<()> {
    // Blocking, the runtime finishes the queue inside the call, under the lock. With
    // `Workarounds::poll_read` the read is non-blocking, flushed, and its event polled for up to
    // the budget, then waited on.
    let blocking = q.path.poll.is_none();
    let _g = q.serial.hold();
    // SAFETY: the range was checked against the buffer size. `out` is borrowed for the whole
    // function, and no path returns before the transfer has ended: a blocking read ends inside
    // the call; a non-blocking one completes, fails or is finished below.
    let raw = unsafe {
        opencl3::command_queue::enqueue_read_buffer(
            q.queue.get(),
            mem.raw,
            blocking as u32,
            offset,
            out.len(),
            out.as_mut_ptr() as *mut c_void,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| q.failed("clEnqueueReadBuffer", code))?;
    let ev = Event::new(raw);
    let settled = if blocking {
        Ok(())
    } else {
        q.queue
            .flush()
            .map_err(|e| q.failed("clFlush", e.0))
            .and_then(|()| wait_event(&ev, q.path.poll, "clEnqueueReadBuffer", &q.health))
    };
    if settled.is_err() {
        // The read may still be in flight: `out` must not be released before it ends.
        let _ = q.queue.finish();
    }
    settled
}

/// Waits for `ev`: with `poll`, by polling its status for up to that long first
/// (`Workarounds::poll_read`), then blocking. A command that failed is the error of `call`
/// with the status as its code (`Error::OutOfDeviceMemory` or `Error::Cl`), and is recorded
/// in `health`.
pub(crate) fn wait_event(
    ev: &Event,
    poll: Option<Poll>,
    call: &'static str,
    health: &QueueHealth,
) -> Result<()> {
    wait_event_raw(ev, poll, call).map_err(|(call, code)| {
        health.mark_failed();
        health.memory.error(call, code)
    })
}

fn wait_event_raw(
    ev: &Event,
    poll: Option<Poll>,
    call: &'static str,
) -> std::result::Result<(), (&'static str, i32)> {
    const CL_COMPLETE: i32 = 0;
    if let Some(Poll { budget, spin }) = poll {
        // Without a flush the status may never advance; the budget bounds the polling and the
        // blocking wait below flushes.
        let start = std::time::Instant::now();
        while start.elapsed() < budget {
            let status = ev
                .command_execution_status()
                .map_err(|e| ("clGetEventInfo", e.0))?
                .0;
            if status == CL_COMPLETE {
                return Ok(());
            }
            if status < 0 {
                return Err((call, status));
            }
            // Yield rather than spin on a CPU device: the runtime's worker threads need these
            // cores (PoCL on 2 cores: spinning halved the 2^20 sum's throughput).
            if spin {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
    ev.wait().map_err(|e| ("clWaitForEvents", e.0))
}

/// Blocking write of `data` into `mem` at `offset`.
pub(crate) fn write_bytes(q: &ClQueue, mem: &Mem, offset: usize, data: &[u8]) -> Result<()> {
    if offset + data.len() > mem.bytes {
        return Err(Error::LengthMismatch {
            buffer: mem.bytes,
            host: offset + data.len(),
        });
    }
    if data.is_empty() {
        return Ok(());
    }
    claim(q, mem)?;
    let _g = q.serial.hold();
    // SAFETY: range checked; blocking write, so `data` outlives the transfer.
    let ev = unsafe {
        opencl3::command_queue::enqueue_write_buffer(
            q.queue.get(),
            mem.raw,
            1,
            offset,
            data.len(),
            data.as_ptr() as *const c_void,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| q.failed("clEnqueueWriteBuffer", code))?;
    drop(Event::new(ev));
    Ok(())
}

/// Fills `size` bytes at `offset` with a repeated `pattern`.
pub(crate) fn fill(
    q: &ClQueue,
    mem: &Mem,
    pattern: &[u8],
    offset: usize,
    size: usize,
) -> Result<Event> {
    if offset + size > mem.bytes || pattern.is_empty() || !size.is_multiple_of(pattern.len()) {
        return Err(Error::LengthMismatch {
            buffer: mem.bytes,
            host: offset + size,
        });
    }
    claim(q, mem)?;
    let _g = q.serial.hold();
    // SAFETY: range and pattern size checked; the runtime copies the pattern before returning.
    let ev = unsafe {
        opencl3::command_queue::enqueue_fill_buffer(
            q.queue.get(),
            mem.raw,
            pattern.as_ptr() as *const c_void,
            pattern.len(),
            offset,
            size,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| q.failed("clEnqueueFillBuffer", code))?;
    let ev = Event::new(ev);
    q.settle()?;
    Ok(ev)
}

/// Device-side copy of `size` bytes.
pub(crate) fn copy(
    q: &ClQueue,
    src: &Mem,
    src_off: usize,
    dst: &Mem,
    dst_off: usize,
    size: usize,
) -> Result<Event> {
    if src_off + size > src.bytes || dst_off + size > dst.bytes {
        return Err(Error::LengthMismatch {
            buffer: src.bytes.min(dst.bytes),
            host: size,
        });
    }
    claim(q, src)?;
    claim(q, dst)?;
    let _g = q.serial.hold();
    // SAFETY: both ranges checked against the buffer sizes.
    let ev = unsafe {
        opencl3::command_queue::enqueue_copy_buffer(
            q.queue.get(),
            src.raw,
            dst.raw,
            src_off,
            dst_off,
            size,
            0,
            std::ptr::null(),
        )
    }
    .map_err(|code| q.failed("clEnqueueCopyBuffer", code))?;
    let ev = Event::new(ev);
    q.settle()?;
    Ok(ev)
}

/// A kernel argument, checked against nothing but its own size: the generated kernel's
/// signature and this list come from the same plan (see `codegen`).
pub(crate) enum Arg<'a> {
    Mem(&'a Mem),
    Bytes(Vec<u8>),
}

/// A built program with its kernel objects pooled: a kernel's arguments are captured at
/// enqueue, so one object serves launch after launch; the pool gives each concurrent launch
/// its own.
pub(crate) struct Compiled {
    pub program: std::sync::Arc<Program>,
    /// `CL_KERNEL_WORK_GROUP_SIZE` of `clr_main` on the device.
    pub kernel_wg_limit: usize,
    pool: std::sync::Mutex<Vec<(&'static str, Kernel)>>,
    /// The device's lock: kernel objects are created and released under it.
    serial: Serial,
}

impl Compiled {
    /// Wraps a built program; `serial` is its device's command lock (`Device::serial`).
    pub fn new(
        program: std::sync::Arc<Program>,
        device: opencl3::types::cl_device_id,
        serial: Serial,
    ) -> Result<Compiled> {
        let g = serial.hold();
        let main = Kernel::create(&program, "clr_main").map_err(Error::cl("clCreateKernel"))?;
        let kernel_wg_limit = main
            .get_work_group_size(device)
            .map_err(Error::cl("clGetKernelWorkGroupInfo"))?;
        drop(g);
        Ok(Compiled {
            program,
            kernel_wg_limit,
            pool: std::sync::Mutex::new(vec![("clr_main", main)]),
            serial,
        })
    }

    fn take(&self, name: &'static str) -> Result<Kernel> {
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pos) = pool.iter().position(|(n, _)| *n == name) {
            return Ok(pool.swap_remove(pos).1);
        }
        drop(pool);
        Kernel::create(&self.program, name).map_err(Error::cl("clCreateKernel"))
    }

    fn give(&self, name: &'static str, k: Kernel) {
        self.pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((name, k));
    }
}

impl Drop for Compiled {
    fn drop(&mut self) {
        let _g = self.serial.hold();
        self.pool
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// Sets a pooled kernel's arguments and enqueues it over `global` with work-groups of `local`.
pub(crate) fn enqueue_kernel(
    q: &ClQueue,
    compiled: &Compiled,
    name: &'static str,
    args: &[Arg<'_>],
    global: &[usize],
    local: &[usize],
    after: &[&Event],
) -> Result<Event> {
    // On a serialized device: create the kernel object if needed, set its arguments, enqueue it
    // and run it to completion, all under the device lock.
    for a in args {
        if let Arg::Mem(m) = a {
            claim(q, m)?;
        }
    }
    let _g = q.serial.hold();
    let kernel = compiled.take(name)?;
    let r = enqueue_with(&q.queue, &kernel, args, global, local, after);
    compiled.give(name, kernel);
    let ev = r.map_err(|(call, code)| q.failed(call, code))?;
    q.settle()?;
    if q.path.flush_launch && global.iter().product::<usize>() >= q.path.flush_min {
        q.queue.flush().map_err(|e| q.failed("clFlush", e.0))?;
    }
    if let Some(last) = &q.last_kernel {
        // SAFETY: `ev` holds a valid event; the retained reference is released by the Event
        // stored here.
        unsafe { opencl3::event::retain_event(ev.get()) }.map_err(|code| Error::Cl {
            call: "clRetainEvent",
            code,
        })?;
        *last.lock().unwrap_or_else(|p| p.into_inner()) = Some(Event::new(ev.get()));
    }
    Ok(ev)
}

fn enqueue_with(
    q: &CommandQueue,
    kernel: &Kernel,
    args: &[Arg<'_>],
    global: &[usize],
    local: &[usize],
    after: &[&Event],
) -> std::result::Result<Event, (&'static str, i32)> {
    for (i, a) in args.iter().enumerate() {
        // SAFETY: a mem argument passes a pointer to a valid cl_mem; a scalar passes its bytes
        // with their exact size. The kernel object was taken out of the pool for this call, so no
        // other thread sets its arguments concurrently.
        let r = unsafe {
            match a {
                Arg::Mem(m) => opencl3::kernel::set_kernel_arg(
                    kernel.get(),
                    i as u32,
                    std::mem::size_of::<cl_mem>(),
                    &m.raw as *const cl_mem as *const c_void,
                ),
                Arg::Bytes(b) => opencl3::kernel::set_kernel_arg(
                    kernel.get(),
                    i as u32,
                    b.len(),
                    b.as_ptr() as *const c_void,
                ),
            }
        };
        r.map_err(|code| ("clSetKernelArg", code))?;
    }
    let waits = wait_list(after);
    // SAFETY: global and local have the same length (1..=3), checked by the planner; the wait
    // list holds valid events that outlive this call.
    let ev = unsafe {
        opencl3::command_queue::enqueue_nd_range_kernel(
            q.get(),
            kernel.get(),
            global.len() as u32,
            std::ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            waits.len() as u32,
            if waits.is_empty() {
                std::ptr::null()
            } else {
                waits.as_ptr()
            },
        )
    }
    .map_err(|code| ("clEnqueueNDRangeKernel", code))?;
    Ok(Event::new(ev))
}
