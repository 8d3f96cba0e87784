//! Helpers of the reliability binaries (tests/reliability.rs, tests/bad_input.rs): the gate for
//! process-wide measurements, the non-simulator devices and one queue on each, short names.
#![allow(dead_code)]

use clreduce::{devices, Device, Mask, Queue};
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Shared by tests that may run alongside others; exclusive for tests that measure the whole
/// process (compile counter, RSS, file descriptors).
pub static GATE: RwLock<()> = RwLock::new(());

pub fn shared() -> RwLockReadGuard<'static, ()> {
    GATE.read().unwrap_or_else(|p| p.into_inner())
}

pub fn exclusive() -> RwLockWriteGuard<'static, ()> {
    GATE.write().unwrap_or_else(|p| p.into_inner())
}

/// A short device name for reports: `0:PoCL`, `2:Intel`, ...
pub fn short(d: &Device) -> String {
    let p = d.platform();
    let s = if p.contains("Portable Computing Language") {
        "PoCL"
    } else if p.contains("Oclgrind") {
        "Oclgrind"
    } else if p.contains("Intel") {
        "Intel"
    } else {
        d.name()
    };
    format!("{}:{s}", d.index())
}

/// The devices this binary runs on (all but the simulator), printing a SKIP line for the rest.
pub fn fast_devices(test: &str) -> Vec<Device> {
    let all =
        devices().expect("no OpenCL devices: run scripts/setup.sh and `source scripts/env.sh`");
    let mut out = Vec::new();
    for d in all {
        if d.is_simulator() {
            eprintln!(
                "SKIP {}: {test}: simulator (too slow here; its threads are tested in device.rs)",
                short(d)
            );
        } else {
            out.push(d.clone());
        }
    }
    assert!(!out.is_empty(), "{test}: no non-simulator device");
    out
}

/// One unmasked queue per fast device, shared by the tests of this binary.
pub fn queues() -> &'static [Queue] {
    static Q: OnceLock<Vec<Queue>> = OnceLock::new();
    Q.get_or_init(|| {
        devices()
            .expect("devices")
            .iter()
            .filter(|d| !d.is_simulator())
            .map(|d| Queue::with_mask(d, Mask::default()).expect("queue"))
            .collect()
    })
}

pub fn queue_on(d: &Device) -> &'static Queue {
    queues()
        .iter()
        .find(|q| q.device().index() == d.index())
        .expect("a queue per fast device")
}

pub fn pocl() -> Option<Device> {
    devices()
        .ok()?
        .iter()
        .find(|d| d.platform().contains("Portable Computing Language"))
        .cloned()
}

/// A token no other run of this binary has used (bodies that must not be in any cache).
pub fn unique_token() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}_{t}", std::process::id())
}
