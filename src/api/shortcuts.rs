//! Shortcuts on the queue that take reductions directly (seed 003 missing feature 1), in the
//! style of the main call: `parallel_for` is SYCL's spelling of `parallel_for_reduce`, and the
//! whole-buffer reductions (`sum`, `min`, `max`, `argmin`, `argmax`, `reduce`, `sum_exact`)
//! need no body.
//!
//! They cost what the general path costs (issue 29): the result lands in an 8-byte buffer taken
//! from the queue's pool (`DeviceQueue::results`) and given back afterwards, so a call allocates
//! nothing and enqueues no fill; the launch initializes it to the identity; one blocking read
//! (two for argmin/argmax: value and index) returns it. Measured with
//! `examples/shortcut_latency.rs` (design/bench/2026-11-24-cpu-shortcut-latency.txt).
//! Where the queue's read path has host mailboxes (NVIDIA, design/decisions.md section 56), the
//! launch posts the result into one and no read command is enqueued (`take_result`).

use super::event::ReduceEvent;
use super::kernel::Kernel;
use super::options::Options;
use super::queue::Queue;
use super::range::{Form, Range};
use super::reduction::Reduction;
use super::reduction::{reduction, reduction_argmax, reduction_argmin, Reductions};
use crate::error::{Error, Result};
use crate::ops::{Op, Operator};
use crate::runtime::buffer::{as_bytes, as_bytes_mut, Buffer};
use crate::runtime::launch;
use crate::types::Element;
use std::sync::Arc;
use std::time::Duration;

/// How many result buffers a queue keeps for its shortcuts (one per concurrent call; more are
/// freed when given back).
const RESULTS_MAX: usize = 16;

/// A one-element result buffer from the queue's pool, given back when dropped.
struct Pooled<'q, T: Element> {
    queue: &'q Queue,
    buf: Buffer<T>,
}

impl<T: Element> Drop for Pooled<'_, T> {
    fn drop(&mut self) {
        let mut pool = self
            .queue
            .inner
            .results
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if pool.len() < RESULTS_MAX {
            pool.push(self.buf.mem.clone());
        }
    }
}

impl Queue {
    /// A one-element buffer of `T` for a shortcut's result: from the pool, else made (8 bytes,
    /// so that it holds any element type and a u64 index). Its contents are stale: every use
    /// initializes it (`initialize_to_identity`, or a copy of the first element).
    fn result_buffer<T: Element>(&self) -> Result<Pooled<'_, T>> {
        let pooled = self
            .inner
            .results
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        let mem = match pooled {
            Some(m) => m,
            None => Arc::new(launch::create_mem(
                &self.inner.context,
                8,
                None,
                &self.inner.device.label(),
            )?),
        };
        Ok(Pooled {
            queue: self,
            buf: Buffer::over(&self.inner, mem, 1),
        })
    }

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
    ///
    /// The result has type `T::Acc`: `T` itself, or f32 for [`Half`](crate::Half) and
    /// [`Bf16`](crate::Bf16) input, which is read as f32 and accumulated in f32 (round it back
    /// with `Half::from_f32` where wanted):
    ///
    /// ```
    /// use clreduce::{Half, Queue};
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = Queue::default()?;
    /// let x = queue.buffer_from(&vec![Half::from_f32(1.0); 4096])?;
    /// let s: f32 = queue.sum(&x)?; // 4096: an f16 running sum would stop at 2048
    /// assert_eq!(s, 4096.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce<T: Element>(&self, input: &Buffer<T>, op: impl Into<Operator>) -> Result<T::Acc> {
        let op = op.into();
        if op.is_arg() {
            return Err(Error::BadArgument {
                name: op.to_string(),
                problem: format!("returns a (value, index) pair: use Queue::{op}"),
            });
        }
        let n = input.len() as u64;
        let out = self.result_buffer::<T::Acc>()?;
        let out = &out.buf;
        let r = reduction(out, op.clone()).name("r");
        if op.identity(<T::Acc as Element>::TYPE).is_some() {
            let (v, _) = self.take_result(
                Range::new(n),
                r.initialize_to_identity(),
                Kernel::new("combine(r, x[i]);").arg("x", input),
                out,
                None,
            )?;
            return Ok(v);
        } else {
            // No identity: the first element is the initial value, the rest are combined.
            if T::TYPE.is_storage() {
                return Err(Error::Unsupported {
                    what: format!("an identity-less reduction ({op}) of {} input", T::TYPE),
                    missing: "the first element would be copied into the f32 result unconverted: \
                              give the op an identity, or use parallel_for_reduce"
                        .into(),
                    device: self.inner.device.label(),
                });
            }
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

    /// The sum of every element of `input` (in f32 for f16 and bf16 input).
    pub fn sum<T: Element>(&self, input: &Buffer<T>) -> Result<T::Acc> {
        self.reduce(input, Op::Plus)
    }
    /// The exact sum of every element of an f32 or f64 buffer, rounded once to nearest-even
    /// (`Determinism::Exact`): the same bits on every device, plan and run. NaN in, or +inf
    /// with -inf, gives NaN; an exact sum beyond the type's range gives an infinity; an empty
    /// buffer gives +0. f16 and bf16 input is summed exactly and rounded once to f32.
    ///
    /// ```
    /// # fn main() -> clreduce::Result<()> {
    /// let queue = clreduce::Queue::default()?;
    /// let x = queue.buffer_from(&[1.0f64, 1e100, 1.0, -1e100])?;
    /// assert_eq!(queue.sum_exact(&x)?, 2.0);
    /// # Ok(()) }
    /// ```
    pub fn sum_exact<T: Element>(&self, input: &Buffer<T>) -> Result<T::Acc> {
        let out = self.result_buffer::<T::Acc>()?;
        let out = &out.buf;
        self.parallel_for_reduce_with(
            Range::new(input.len() as u64),
            reduction(out, Op::Plus).name("r").initialize_to_identity(),
            Kernel::new("r += x[i];").arg("x", input),
            Options::from_env()?.exact(),
        )?;
        out.get(0)
    }
    /// The smallest element of `input` (the type's maximum, or +inf, when empty).
    pub fn min<T: Element>(&self, input: &Buffer<T>) -> Result<T::Acc> {
        self.reduce(input, Op::Minimum)
    }
    /// The largest element of `input` (the type's minimum, or -inf, when empty).
    pub fn max<T: Element>(&self, input: &Buffer<T>) -> Result<T::Acc> {
        self.reduce(input, Op::Maximum)
    }
    /// The smallest element of `input` and its index (the lowest among equal values), or
    /// `None` when `input` is empty.
    pub fn argmin<T: Element>(&self, input: &Buffer<T>) -> Result<Option<(T::Acc, u64)>> {
        self.arg(input, false)
    }
    /// The largest element of `input` and its index (the lowest among equal values), or
    /// `None` when `input` is empty.
    pub fn argmax<T: Element>(&self, input: &Buffer<T>) -> Result<Option<(T::Acc, u64)>> {
        self.arg(input, true)
    }
    fn arg<T: Element>(&self, input: &Buffer<T>, max: bool) -> Result<Option<(T::Acc, u64)>> {
        if input.is_empty() {
            return Ok(None);
        }
        let (v, ix) = (
            self.result_buffer::<T::Acc>()?,
            self.result_buffer::<u64>()?,
        );
        let (v, ix) = (&v.buf, &ix.buf);
        let r = if max {
            reduction_argmax(v, ix)
        } else {
            reduction_argmin(v, ix)
        };
        let (v, i) = self.take_result(
            Range::new(input.len() as u64),
            r.name("r").initialize_to_identity(),
            Kernel::new("combine(r, x[i], i);").arg("x", input),
            v,
            Some(ix),
        )?;
        Ok(Some((v, i.unwrap_or(u64::MAX))))
    }

    /// Launches a shortcut's reduction into `out` (and `index`, argmin/argmax) and returns the
    /// result: from a host mailbox of the queue where its read path has them and the plan posts
    /// into one (design/decisions.md section 56), else by reading. A mailbox shows the result
    /// with no read command; until one has matched its read on this queue, or when it shows
    /// nothing within the poll budget, the result is read, and a mailbox that does not carry
    /// the read's bits once its launch has finished turns the queue's mailboxes off.
    fn take_result<T: Element>(
        &self,
        form: Range,
        r: Reduction,
        kernel: Kernel,
        out: &Buffer<T>,
        index: Option<&Buffer<u64>>,
    ) -> Result<(T, Option<u64>)> {
        let q = &self.inner.queue;
        let read = || -> Result<(T, Option<u64>)> {
            Ok((out.get(0)?, index.map(|ix| ix.get(0)).transpose()?))
        };
        let options = Options::from_env()?;
        let slot = launch::mailbox_take(q);
        let launched = self.launch(form.into(), r.into(), kernel, options, slot.as_ref());
        let (ev, posted) = match launched {
            Ok(x) => x,
            Err(e) => {
                // The slot is free again: a kernel of the failed launch that still posts does so
                // with its own sequence number, before the queue's next kernel runs.
                slot.into_iter().for_each(|s| launch::mailbox_give(q, s));
                return Err(e);
            }
        };
        let slot = match slot {
            Some(s) if posted => s,
            other => {
                other.into_iter().for_each(|s| launch::mailbox_give(q, s));
                return read();
            }
        };
        let budget = q.poll_read().map_or(
            Duration::from_micros(crate::runtime::readpath::SPIN_BUDGET_US),
            |p| p.budget,
        );
        let seen = launch::mailbox_wait(q, &slot, budget);
        if let (Some(b), true) = (seen, slot.proven) {
            // The launch's event is not waited on: the queue is in order, and the next launch
            // polls its status (the scratch's health check).
            drop(ev);
            launch::mailbox_give(q, slot);
            return Ok(decode(&b));
        }
        // Not proven on this queue yet, or nothing within the budget: read (the read ends after
        // the launch), then the mailbox must show the same bits.
        let got = read();
        if let Ok(v) = &got {
            let late = seen.or_else(|| launch::mailbox_wait(q, &slot, Duration::ZERO));
            let same = late.is_some_and(|b| {
                let m: (T, Option<u64>) = decode(&b);
                as_bytes(&[m.0]) == as_bytes(&[v.0]) && (index.is_none() || m.1 == v.1)
            });
            launch::mailbox_verdict(q, same);
            launch::mailbox_give(q, slot);
        }
        // A failed read leaves the slot taken: its launch may not have ended.
        drop(ev);
        got
    }
}

/// A mailbox's 16 bytes as the result: the value's bits first, an argmin/argmax index next.
fn decode<T: Element>(b: &[u8; 16]) -> (T, Option<u64>) {
    let mut v = [T::default()];
    let n = std::mem::size_of::<T>();
    as_bytes_mut(&mut v).copy_from_slice(&b[..n]);
    let mut ix = [0u8; 8];
    ix.copy_from_slice(&b[8..16]);
    (v[0], Some(u64::from_le_bytes(ix)))
}
