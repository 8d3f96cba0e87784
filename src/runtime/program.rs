//! Program building and the process-wide program cache: each (device, source, options) is
//! built once for the life of the process, even when many threads ask at the same moment:
//! from the binary in the disk cache when there is one (`disk_cache.rs`), else compiled from
//! source (and its binary written there).

use super::build::build_cached;
use super::device::Device;
use crate::error::Result;
use opencl3::program::Program;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    device: usize,
    source: Arc<str>,
    options: String,
}

type Slot = Arc<Mutex<Option<Arc<Program>>>>;

static CACHE: OnceLock<Mutex<HashMap<Key, Slot>>> = OnceLock::new();
static BUILDS: AtomicU64 = AtomicU64::new(0);

/// How many programs this process has built through the cache, compiled from source or loaded
/// from the disk cache (for tests and the bench).
pub fn compiled_count() -> u64 {
    BUILDS.load(Ordering::Relaxed)
}

/// Returns the built program for (device, source, options), compiling it only the first time.
/// Concurrent callers with the same key wait for the one compilation. Failed builds are not
/// cached (the next call reports the same error after compiling again).
pub(crate) fn get(device: &Device, source: &str, options: &str) -> Result<Arc<Program>> {
    let key = Key {
        device: device.index(),
        source: Arc::from(source),
        options: options.to_string(),
    };
    let slot: Slot = {
        let mut map = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.entry(key).or_default().clone()
    };
    let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = guard.as_ref() {
        return Ok(p.clone());
    }
    let ctx = device.context()?;
    // Oclgrind compiles in one compiler context per device: no build while another thread's
    // command or build runs (Workarounds::serialize_device). Not in build_cached: the probes
    // call it with the lock already held.
    let serial = device.serial()?;
    let held = serial.hold();
    let (id, label) = (device.id(), device.label());
    let identity = device.disk_identity();
    let (program, from_disk) = build_cached(id, &label, identity, &ctx, source, options)?;
    let program = Arc::new(program);
    drop(held);
    BUILDS.fetch_add(1, Ordering::Relaxed);
    if from_disk {
        tracing::debug!(device = %device.label(), options, "program loaded from the disk cache");
    } else {
        tracing::debug!(device = %device.label(), options, "program compiled");
        if tracing::enabled!(tracing::Level::DEBUG) {
            // A successful build's log (register counts with CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose
            // on NVIDIA, vectorizer notes on some CPU runtimes).
            if let Ok(log) = program.get_build_log(device.id()) {
                if !log.trim().is_empty() {
                    tracing::debug!(device = %device.label(), log = %log.trim(), "build log");
                }
            }
        }
    }
    *guard = Some(program.clone());
    Ok(program)
}
