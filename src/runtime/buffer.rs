//! Typed device buffers.

use super::launch::{self, Mem};
use super::queue::DeviceQueue;
use crate::error::{Error, Result};
use crate::types::{ElemType, Element};
use std::marker::PhantomData;
use std::sync::Arc;

/// A device buffer of `len` elements of `T`, created by a [`crate::Queue`]. It belongs to the
/// queue's device, not to the queue: every queue on the device shares the device's context (as
/// SYCL's default context), so a launch, a shortcut, a read or a write on any queue of that device
/// may use it. A buffer of another device is [`Error::ForeignBuffer`](crate::Error::ForeignBuffer).
/// `Send + Sync`; cheap to clone (clones share the device memory).
///
/// Ordering: the buffer remembers the queue of its last command. Reads and writes go through
/// that queue, in order after everything enqueued there before them; a command on another
/// queue first waits for that queue to finish (`clFinish`), so a buffer written on one queue and
/// reduced on another sees the write, and the other way round. Switching queues costs that wait;
/// staying on one queue costs nothing. Two threads that use one buffer at the same moment
/// through two queues are ordered by whoever enqueues first: reading it from both is safe,
/// writing it while the other thread uses it is a race, as it is on one queue.
///
/// Made by [`Queue::buffer_from`](crate::Queue::buffer_from) (a copy of host data) or
/// [`Queue::buffer`](crate::Queue::buffer) (zero-filled). A read or write outside the buffer is
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch).
///
/// ```
/// use clreduce::{Error, Queue};
/// # fn main() -> clreduce::Result<()> {
/// let queue = Queue::default()?;
/// let b = queue.buffer_from(&[1i32, 2, 3])?;
/// assert_eq!(b.get(1)?, 2);
/// b.write(0, &[10])?;
/// assert_eq!(b.to_vec()?, [10, 2, 3]);
/// assert!(matches!(b.get(3), Err(Error::LengthMismatch { buffer: 3, host: 4 })));
/// # Ok(()) }
/// ```
pub struct Buffer<T: Element> {
    pub(crate) mem: Arc<Mem>,
    len: usize,
    pub(crate) queue: Arc<DeviceQueue>,
    _t: PhantomData<T>,
}

impl<T: Element> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        Buffer {
            mem: self.mem.clone(),
            len: self.len,
            queue: self.queue.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Element> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Buffer<{}>[{}] on {}",
            T::TYPE,
            self.len,
            self.queue.device.label()
        )
    }
}

pub(crate) fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: Element is sealed and implemented only for plain integer/float types (and the
    // transparent Half), which have no padding and no invalid bit patterns.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

pub(crate) fn as_bytes_mut<T: Element>(data: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; every bit pattern is a valid value of these types.
    unsafe {
        std::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut u8, std::mem::size_of_val(data))
    }
}

impl<T: Element> Buffer<T> {
    pub(crate) fn create(queue: &Arc<DeviceQueue>, data: Option<&[T]>, len: usize) -> Result<Self> {
        if let Err(missing) = queue.caps.supports_type(T::TYPE) {
            return Err(Error::Unsupported {
                what: format!("a buffer of {}", T::TYPE),
                missing: format!("the device lacks {missing}"),
                device: queue.device.label(),
            });
        }
        let Some(bytes) = len.checked_mul(std::mem::size_of::<T>()) else {
            let memory = queue.device.memory()?;
            return Err(Error::AllocTooLarge {
                bytes: u64::MAX,
                limit: memory.max_alloc,
                limit_name: "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                in_use: memory.in_use(),
                device: queue.device.label(),
            });
        };
        let mem = launch::create_mem(
            &queue.context,
            bytes,
            data.map(as_bytes),
            &queue.device.label(),
        )?;
        Ok(Buffer {
            mem: Arc::new(mem),
            len,
            queue: queue.clone(),
            _t: PhantomData,
        })
    }

    /// A buffer of `len` elements over existing memory of this queue's device (at least
    /// `len * size_of::<T>()` bytes; its contents are whatever they were).
    pub(crate) fn over(queue: &Arc<DeviceQueue>, mem: Arc<Mem>, len: usize) -> Self {
        debug_assert!(mem.bytes >= len * std::mem::size_of::<T>());
        Buffer {
            mem,
            len,
            queue: queue.clone(),
            _t: PhantomData,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Its element type (`T::TYPE`).
    pub fn elem_type(&self) -> ElemType {
        T::TYPE
    }

    /// Reads the whole buffer back to the host (after every earlier command on the buffer).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = vec![T::default(); self.len];
        self.read_into(0, &mut v)?;
        Ok(v)
    }

    /// Reads `out.len()` elements starting at element `offset`.
    pub fn read_into(&self, offset: usize, out: &mut [T]) -> Result<()> {
        if offset + out.len() > self.len {
            return Err(Error::LengthMismatch {
                buffer: self.len,
                host: offset + out.len(),
            });
        }
        launch::read_bytes(
            &self.io_queue(),
            &self.mem,
            offset * std::mem::size_of::<T>(),
            as_bytes_mut(out),
        )
    }

    /// Reads one element.
    pub fn get(&self, index: usize) -> Result<T> {
        let mut v = [T::default()];
        self.read_into(index, &mut v)?;
        Ok(v[0])
    }

    /// Writes `data` starting at element `offset`.
    pub fn write(&self, offset: usize, data: &[T]) -> Result<()> {
        if offset + data.len() > self.len {
            return Err(Error::LengthMismatch {
                buffer: self.len,
                host: offset + data.len(),
            });
        }
        launch::write_bytes(
            &self.io_queue(),
            &self.mem,
            offset * std::mem::size_of::<T>(),
            as_bytes(data),
        )
    }

    /// The device this buffer lives on.
    pub fn device_label(&self) -> String {
        self.queue.device.label()
    }

    /// The queue reads and writes go through: the queue of the buffer's last command (no wait
    /// needed), else the queue that made it.
    fn io_queue(&self) -> Arc<launch::ClQueue> {
        self.mem
            .last_queue()
            .unwrap_or_else(|| self.queue.queue.clone())
    }
}

/// What a reduction or kernel argument needs to know about a buffer, whatever its type.
pub trait AnyBuffer: Send + Sync {
    /// The element type.
    fn elem_type(&self) -> ElemType;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[doc(hidden)]
    fn mem(&self) -> Arc<Mem>;
    #[doc(hidden)]
    fn device_index(&self) -> usize;
    #[doc(hidden)]
    fn device_label(&self) -> String;
}

impl<T: Element> AnyBuffer for Buffer<T> {
    fn elem_type(&self) -> ElemType {
        T::TYPE
    }
    fn len(&self) -> usize {
        self.len
    }
    fn mem(&self) -> Arc<Mem> {
        self.mem.clone()
    }
    fn device_index(&self) -> usize {
        self.queue.device.index()
    }
    fn device_label(&self) -> String {
        self.queue.device.label()
    }
}
