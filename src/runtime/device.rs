//! OpenCL platforms and devices: enumeration, selection, one shared context per device, the
//! capabilities (raw answers from `query.rs` handed to [`caps::translate`], then the probe
//! kernels of `probe.rs`), and each device's command lock (`launch::Serial`).

use super::launch::Serial;
use super::probe::probe;
use super::query::query;
use crate::caps::{self, DeviceCaps};
use crate::error::{Error, Result};
use opencl3::context::Context;
use opencl3::device::Device as ClDevice;
use opencl3::platform::get_platforms;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, OnceLock};

/// One OpenCL device, as found at enumeration. Cheap to clone.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

pub(crate) struct DeviceInner {
    pub index: usize,
    pub cl: ClDevice,
    pub platform: String,
    pub name: String,
    context: OnceLock<Result<Arc<Context>>>,
    caps: OnceLock<Result<DeviceCaps>>,
    /// The process-wide command lock, used only when the device's capabilities carry
    /// `Workarounds::serialize_device` (see [`Device::serial`]).
    serial: Arc<Mutex<()>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Device({}: {} / {})",
            self.inner.index, self.inner.name, self.inner.platform
        )
    }
}

static DEVICES: OnceLock<Result<Vec<Device>>> = OnceLock::new();

/// Platforms whose device query failed during enumeration, as "name: error" lines (shown with
/// `Error::DeviceNotFound` and `Error::NoDevices`, and logged at warn).
static PLATFORM_ERRORS: OnceLock<Vec<String>> = OnceLock::new();

/// The platforms whose device query failed while devices were enumerated ("name: error").
pub fn platform_errors() -> &'static [String] {
    PLATFORM_ERRORS.get().map(Vec::as_slice).unwrap_or(&[])
}

/// `OCL_ICD_FILENAMES` as it was before the process's first OpenCL call, kept only when the
/// ICD loader changed it during enumeration (see [`env_for_children`]).
static ICD_FILENAMES_LOST: OnceLock<Option<OsString>> = OnceLock::new();

/// Environment variables to give a child process so that it finds the devices this process
/// found; empty unless the ICD loader altered the environment.
///
/// ocl-icd 2.3.2 (Ubuntu 24.04) cuts `OCL_ICD_FILENAMES` in place at its first `:` while it
/// loads the vendors (`libpocl.so.2:libnvidia-opencl.so.1` becomes `libpocl.so.2`), so every
/// process started after the first OpenCL call inherits a shorter list and sees fewer devices.
/// clreduce does not write the process environment; it remembers the value it saw before it
/// enumerated and hands it back here: `Command::new(..).envs(clreduce::device::env_for_children())`.
/// `clreduce bench` does so for its Python peers.
pub fn env_for_children() -> Vec<(&'static str, OsString)> {
    match ICD_FILENAMES_LOST.get() {
        Some(Some(v)) => vec![("OCL_ICD_FILENAMES", v.clone())],
        _ => Vec::new(),
    }
}

/// Every OpenCL device on every platform, in a stable order (platform order, then device order).
/// Enumerated once per process.
pub fn devices() -> Result<&'static [Device]> {
    DEVICES
        .get_or_init(|| {
            let icd_before = std::env::var_os("OCL_ICD_FILENAMES");
            let platforms = get_platforms();
            let icd_after = std::env::var_os("OCL_ICD_FILENAMES");
            let lost = if icd_after != icd_before { icd_before } else { None };
            if let Some(v) = &lost {
                tracing::debug!(
                    before = ?v,
                    after = ?icd_after,
                    "the ICD loader changed OCL_ICD_FILENAMES; child processes get the original (device::env_for_children)"
                );
            }
            let _ = ICD_FILENAMES_LOST.set(lost);
            let platforms = platforms.map_err(|e| Error::NoDevices {
                detail: format!(
                    "clGetPlatformIDs failed with {} ({})",
                    e.0,
                    crate::error::cl_error_name(e.0)
                ),
            })?;
            let mut out = Vec::new();
            let mut failed = Vec::new();
            for p in platforms {
                let pname = p.name().unwrap_or_default();
                // CL_DEVICE_TYPE_ALL
                let ids = match p.get_devices(0xFFFF_FFFF) {
                    Ok(ids) => ids,
                    Err(e) => {
                        let line = format!(
                            "{pname}: clGetDeviceIDs failed with {} ({})",
                            e.0,
                            crate::error::cl_error_name(e.0)
                        );
                        tracing::warn!(platform = %pname, error = e.0, "platform skipped: its device query failed");
                        failed.push(line);
                        continue;
                    }
                };
                for id in ids {
                    let cl = ClDevice::new(id);
                    let name = cl.name().unwrap_or_default().trim().to_string();
                    out.push(Device {
                        inner: Arc::new(DeviceInner {
                            index: out.len(),
                            cl,
                            platform: pname.clone(),
                            name,
                            context: OnceLock::new(),
                            caps: OnceLock::new(),
                            serial: Arc::new(Mutex::new(())),
                        }),
                    });
                }
            }
            let _ = PLATFORM_ERRORS.set(failed.clone());
            if out.is_empty() {
                let mut detail = "the ICD loader found no platform with a device".to_string();
                for f in &failed {
                    detail.push_str(&format!("; platform {f}"));
                }
                return Err(Error::NoDevices { detail });
            }
            Ok(out)
        })
        .as_ref()
        .map(|v| v.as_slice())
        .map_err(Clone::clone)
}

/// Picks a device: `spec` is an index from `clreduce devices` or a case-insensitive substring of
/// "platform / device name". `None` picks the default: `CLREDUCE_DEVICE` if set, else the first
/// GPU, else the first CPU that is not a simulator, else the first device.
pub fn select(spec: Option<&str>) -> Result<Device> {
    let all = devices()?;
    let env = std::env::var("CLREDUCE_DEVICE")
        .ok()
        .filter(|s| !s.is_empty());
    let spec = spec.map(str::to_string).or(env);
    match spec {
        Some(s) => find(all, &s),
        None => Ok(default_device(all)),
    }
}

fn find(all: &[Device], s: &str) -> Result<Device> {
    if let Ok(i) = s.trim().parse::<usize>() {
        if let Some(d) = all.get(i) {
            return Ok(d.clone());
        }
    } else {
        let needle = s.to_lowercase();
        if let Some(d) = all
            .iter()
            .find(|d| d.label().to_lowercase().contains(&needle))
        {
            return Ok(d.clone());
        }
    }
    Err(Error::DeviceNotFound {
        wanted: s.to_string(),
        found: all
            .iter()
            .map(|d| format!("  {}: {}", d.index(), d.label()))
            .chain(
                platform_errors()
                    .iter()
                    .map(|f| format!("  (no devices from platform {f})")),
            )
            .collect(),
    })
}

fn default_device(all: &[Device]) -> Device {
    let ty = |d: &Device| d.inner.cl.dev_type().unwrap_or(0);
    let is_sim = |d: &Device| d.inner.platform.contains("Oclgrind");
    all.iter()
        .find(|d| ty(d) & (1 << 2) != 0 && !is_sim(d))
        .or_else(|| all.iter().find(|d| ty(d) & (1 << 1) != 0 && !is_sim(d)))
        .unwrap_or(&all[0])
        .clone()
}

impl Device {
    pub fn index(&self) -> usize {
        self.inner.index
    }
    pub fn name(&self) -> &str {
        &self.inner.name
    }
    pub fn platform(&self) -> &str {
        &self.inner.platform
    }
    /// "platform / name", as listed by `clreduce devices`.
    pub fn label(&self) -> String {
        format!("{} / {}", self.inner.platform, self.inner.name)
    }
    pub fn is_simulator(&self) -> bool {
        self.inner.platform.contains("Oclgrind")
    }

    pub(crate) fn id(&self) -> opencl3::types::cl_device_id {
        self.inner.cl.id()
    }

    /// The context shared by every queue on this device (created on first use).
    pub(crate) fn context(&self) -> Result<Arc<Context>> {
        self.inner
            .context
            .get_or_init(|| {
                Context::from_device(&self.inner.cl)
                    .map(Arc::new)
                    .map_err(Error::cl("clCreateContext"))
            })
            .clone()
    }

    /// The device's capabilities, queried, translated and verified by probe kernels once per
    /// process. No mask applied.
    pub fn caps(&self) -> Result<DeviceCaps> {
        self.inner
            .caps
            .get_or_init(|| {
                let raw = query(&self.inner.cl, &self.inner.platform, &self.inner.name)?;
                let caps = caps::translate(&raw);
                // The probe builds run under the device lock too where the device needs it.
                let _g = caps
                    .workarounds
                    .serialize_device
                    .then(|| self.inner.serial.lock().unwrap_or_else(|p| p.into_inner()));
                probe(&*self.context()?, self.id(), &self.label(), caps)
            })
            .clone()
    }

    /// The device's process-wide command lock if its capabilities carry
    /// `Workarounds::serialize_device` (Oclgrind), else none: every queue, buffer and kernel
    /// object on such a device runs its OpenCL calls under this one lock (`launch::Serial`).
    pub(crate) fn serial(&self) -> Result<Serial> {
        let on = match self.inner.caps.get() {
            Some(Ok(c)) => c.workarounds.serialize_device,
            _ => self.caps()?.workarounds.serialize_device,
        };
        Ok(Serial::new(on.then(|| self.inner.serial.clone())))
    }
}
