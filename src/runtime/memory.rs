//! A device's memory as this process uses it: the limits the device reports
//! (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`, `CL_DEVICE_GLOBAL_MEM_SIZE`) and the bytes of every buffer
//! this process holds on it (user buffers and queues' scratch), so that a request the device
//! cannot hold is refused before anything is allocated, whether or not the driver allocates
//! lazily; and which OpenCL error codes mean that the device ran out of memory.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// The memory limits of one device and what this process holds on it. One per device per
/// process (`Device::memory`), shared by every context handle, queue and buffer on it.
#[derive(Debug)]
pub(crate) struct DeviceMemory {
    /// "platform / name", for messages.
    pub label: String,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`; 0 when the device did not say (no check).
    pub max_alloc: u64,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`; 0 when the device did not say (no check).
    pub global: u64,
    /// Bytes of the buffers this process holds on the device now.
    in_use: AtomicU64,
}

impl DeviceMemory {
    pub(crate) fn new(label: String, max_alloc: u64, global: u64) -> DeviceMemory {
        DeviceMemory {
            label,
            max_alloc,
            global,
            in_use: AtomicU64::new(0),
        }
    }

    /// Bytes of the buffers this process holds on the device.
    pub(crate) fn in_use(&self) -> u64 {
        self.in_use.load(Ordering::Relaxed)
    }

    /// Counts `bytes` as held, or refuses them with `Error::AllocTooLarge`: above
    /// `max_alloc` alone, or above `global` together with what is already held. Atomic, so
    /// two threads cannot both pass the check with memory for only one. Give the bytes back
    /// with [`DeviceMemory::release`].
    pub(crate) fn reserve(&self, bytes: u64) -> Result<()> {
        let refuse = |limit, limit_name, in_use| Error::AllocTooLarge {
            bytes,
            limit,
            limit_name,
            in_use,
            device: self.label.clone(),
        };
        if self.max_alloc > 0 && bytes > self.max_alloc {
            return Err(refuse(
                self.max_alloc,
                "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                self.in_use(),
            ));
        }
        let mut held = self.in_use();
        loop {
            let total = held.saturating_add(bytes);
            if self.global > 0 && total > self.global {
                return Err(refuse(self.global, "CL_DEVICE_GLOBAL_MEM_SIZE", held));
            }
            match self.in_use.compare_exchange_weak(
                held,
                total,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => held = now,
            }
        }
    }

    /// Gives back bytes counted by [`DeviceMemory::reserve`] (a buffer released or never made).
    pub(crate) fn release(&self, bytes: u64) {
        self.in_use.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// The error of an OpenCL call that failed with `code`: `Error::OutOfDeviceMemory` when
    /// the code means the device ran out of memory ([`means_out_of_memory`]), else `Error::Cl`.
    pub(crate) fn error(&self, call: &'static str, code: i32) -> Error {
        if means_out_of_memory(call, code) {
            Error::OutOfDeviceMemory {
                call,
                code,
                in_use: self.in_use(),
                global_mem: self.global,
                device: self.label.clone(),
            }
        } else {
            Error::Cl { call, code }
        }
    }
}

/// Whether `code` from `call` means the device ran out of memory: `CL_MEM_OBJECT_ALLOCATION_FAILURE`
/// (-4) from any call, and `CL_OUT_OF_RESOURCES` (-5) from a command that moves buffer memory
/// (read, write, fill, copy), where the only resource involved is memory. -5 from a kernel
/// enqueue or a wait stays `Error::Cl`: it can also mean registers, a kernel that crashed, or
/// a watchdog timeout (design/decisions.md, "Out of device memory").
pub(crate) fn means_out_of_memory(call: &str, code: i32) -> bool {
    const CL_MEM_OBJECT_ALLOCATION_FAILURE: i32 = -4;
    const CL_OUT_OF_RESOURCES: i32 = -5;
    match code {
        CL_MEM_OBJECT_ALLOCATION_FAILURE => true,
        CL_OUT_OF_RESOURCES => matches!(
            call,
            "clEnqueueReadBuffer"
                | "clEnqueueWriteBuffer"
                | "clEnqueueFillBuffer"
                | "clEnqueueCopyBuffer"
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_refuses_above_each_limit_and_counts_what_is_held() {
        let m = DeviceMemory::new("P / D".into(), 100, 250);
        match m.reserve(101) {
            Err(Error::AllocTooLarge {
                bytes: 101,
                limit: 100,
                limit_name: "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                in_use: 0,
                device,
            }) => assert_eq!(device, "P / D"),
            other => panic!("{other:?}"),
        }
        m.reserve(100).unwrap();
        m.reserve(100).unwrap();
        assert_eq!(m.in_use(), 200);
        match m.reserve(51) {
            Err(Error::AllocTooLarge {
                bytes: 51,
                limit: 250,
                limit_name: "CL_DEVICE_GLOBAL_MEM_SIZE",
                in_use: 200,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        m.reserve(50).unwrap();
        m.release(100);
        m.reserve(100).unwrap();
        assert_eq!(m.in_use(), 250);
        // Unknown limits (0) check nothing; an overflowing size saturates and is refused.
        let open = DeviceMemory::new("x".into(), 0, 0);
        open.reserve(u64::MAX / 2).unwrap();
        assert!(m.reserve(u64::MAX).is_err());
    }

    #[test]
    fn reserve_is_atomic_across_threads() {
        let m = DeviceMemory::new("x".into(), 10, 1000);
        let ok: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| (0..50).filter(|_| m.reserve(10).is_ok()).count()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(ok, 100);
        assert_eq!(m.in_use(), 1000);
    }

    #[test]
    fn out_of_memory_codes() {
        let m = DeviceMemory::new("P / D".into(), 0, 64);
        for call in [
            "clEnqueueNDRangeKernel",
            "clWaitForEvents",
            "clEnqueueReadBuffer",
        ] {
            assert!(matches!(
                m.error(call, -4),
                Error::OutOfDeviceMemory {
                    code: -4,
                    global_mem: 64,
                    ..
                }
            ));
        }
        for call in [
            "clEnqueueReadBuffer",
            "clEnqueueFillBuffer",
            "clEnqueueCopyBuffer",
        ] {
            assert!(means_out_of_memory(call, -5), "{call}");
        }
        for call in ["clEnqueueNDRangeKernel", "clWaitForEvents", "clFinish"] {
            assert!(
                matches!(m.error(call, -5), Error::Cl { code: -5, .. }),
                "{call}"
            );
        }
        assert!(matches!(
            m.error("clEnqueueReadBuffer", -36),
            Error::Cl { code: -36, .. }
        ));
    }
}
