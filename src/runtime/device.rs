//! OpenCL platforms and devices: enumeration, selection, one shared context per device, the
//! capabilities (raw answers from `query.rs` handed to [`caps::translate`], then the probe
//! kernels of `probe.rs`), and each device's command lock (`launch::Serial`).

use super::launch::Serial;
use super::memory::DeviceMemory;
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
    /// The device's memory limits and the bytes this process holds on it (`memory.rs`).
    memory: OnceLock<Arc<DeviceMemory>>,
    /// The process-wide command lock, used only when the device's capabilities carry
    /// `Workarounds::serialize_device` (see [`Device::serial`]).
    serial: Arc<Mutex<()>>,
    /// The device's part of the disk cache's identities (`disk_cache.rs`), read once.
    disk_identity: OnceLock<Option<String>>,
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
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
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
                            memory: OnceLock::new(),
                            serial: Arc::new(Mutex::new(())),
                            disk_identity: OnceLock::new(),
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

/// Picks a device: `spec` is an index from `clreduce devices`, or a name matched
/// case-insensitively by these rules in order, the first rule that matches any device deciding:
///
/// 1. the device name, the platform name or "platform / name" equals `spec`;
/// 2. the platform name contains `spec` (`intel` is Intel's runtime, not a PoCL device whose
///    name mentions an Intel CPU);
/// 3. the device name contains `spec` (`pthread` is PoCL's CPU device);
/// 4. "platform / name" contains `spec`.
///
/// When that rule matches more than one device the result is `Error::AmbiguousDevice`, which
/// lists them; nothing is picked silently (design/decisions.md, "Device names").
/// `None` picks the default: `CLREDUCE_DEVICE` if set, else the first GPU, else the first CPU
/// that is not a simulator, else the first device.
///
/// ```
/// use clreduce::{device, devices, Error};
/// # fn main() -> clreduce::Result<()> {
/// for d in devices()? {
///     println!("{}: {}", d.index(), d.label());
/// }
/// assert_eq!(device::select(Some("0"))?.index(), 0);
/// match device::select(Some("no such device")) {
///     Err(Error::DeviceNotFound { found, .. }) => {
///         // every device, then every platform whose device query failed
///         assert_eq!(found.len(), devices()?.len() + device::platform_errors().len());
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok(()) }
/// ```
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

/// The rules of [`select`], in order: a name and what it is matched against.
const RULES: [&str; 4] = [
    "exact name",
    "platform name",
    "device name",
    "platform / name",
];

/// Which devices, given as (platform, device name), a name spec matches: the rule that
/// decided and the indices it matched (empty when no rule matches any device).
pub(crate) fn match_name(all: &[(&str, &str)], spec: &str) -> (&'static str, Vec<usize>) {
    let needle = spec.trim().to_lowercase();
    for (r, rule) in RULES.iter().enumerate() {
        let hits: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, (p, n))| {
                let (p, n) = (p.to_lowercase(), n.to_lowercase());
                let label = format!("{p} / {n}");
                match r {
                    0 => [&p, &n, &label].iter().any(|s| **s == needle),
                    1 => p.contains(&needle),
                    2 => n.contains(&needle),
                    _ => label.contains(&needle),
                }
            })
            .map(|(i, _)| i)
            .collect();
        if !hits.is_empty() {
            return (rule, hits);
        }
    }
    ("", Vec::new())
}

fn find(all: &[Device], s: &str) -> Result<Device> {
    let line = |d: &Device| format!("  {}: {}", d.index(), d.label());
    if let Ok(i) = s.trim().parse::<usize>() {
        if let Some(d) = all.get(i) {
            return Ok(d.clone());
        }
    } else if !s.trim().is_empty() {
        let names: Vec<(&str, &str)> = all.iter().map(|d| (d.platform(), d.name())).collect();
        match match_name(&names, s) {
            (_, hits) if hits.len() == 1 => return Ok(all[hits[0]].clone()),
            (rule, hits) if hits.len() > 1 => {
                return Err(Error::AmbiguousDevice {
                    wanted: s.to_string(),
                    rule,
                    matches: hits.iter().map(|&i| line(&all[i])).collect(),
                })
            }
            _ => {}
        }
    }
    Err(Error::DeviceNotFound {
        wanted: s.to_string(),
        found: all
            .iter()
            .map(line)
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
    /// Its index in [`devices`], as `clreduce devices` lists it and [`select`] takes it.
    pub fn index(&self) -> usize {
        self.inner.index
    }
    /// `CL_DEVICE_NAME`, trimmed.
    pub fn name(&self) -> &str {
        &self.inner.name
    }
    /// `CL_PLATFORM_NAME` of its platform.
    pub fn platform(&self) -> &str {
        &self.inner.platform
    }
    /// "platform / name", as listed by `clreduce devices`.
    pub fn label(&self) -> String {
        format!("{} / {}", self.inner.platform, self.inner.name)
    }
    /// Whether it is Oclgrind's simulator (its platform name contains "Oclgrind").
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

    /// The device's part of the disk cache's identities (names, versions, driver), set with
    /// the capabilities, before the probes that use it. `None` (no disk cache for the device)
    /// before the capabilities are made, where `Workarounds::own_program_cache` says the
    /// driver caches programs itself, or when a version cannot be read.
    pub(crate) fn disk_identity(&self) -> Option<&str> {
        self.inner.disk_identity.get().and_then(|o| o.as_deref())
    }

    /// The device's capabilities, queried, translated and verified by probe kernels once per
    /// process. No mask applied.
    pub fn caps(&self) -> Result<DeviceCaps> {
        self.inner
            .caps
            .get_or_init(|| {
                let raw = query(&self.inner.cl, &self.inner.platform, &self.inner.name)?;
                let mut caps = caps::translate(&raw);
                let i = &self.inner;
                let _ = i.disk_identity.set(if caps.workarounds.own_program_cache {
                    None
                } else {
                    super::disk_cache::device_identity(&i.cl, &i.platform, &i.name)
                });
                if let Some(w) = caps::vec_override()? {
                    caps.narrow_vec = w;
                }
                // The probe builds run under the device lock too where the device needs it.
                let _g = caps
                    .workarounds
                    .serialize_device
                    .then(|| self.inner.serial.lock().unwrap_or_else(|p| p.into_inner()));
                probe(
                    &*self.context()?,
                    self.id(),
                    &self.label(),
                    self.disk_identity(),
                    caps,
                )
            })
            .clone()
    }

    /// The device's memory account: its limits (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`) and the bytes of every buffer this process holds on it,
    /// shared by every queue on the device.
    pub(crate) fn memory(&self) -> Result<Arc<DeviceMemory>> {
        if let Some(m) = self.inner.memory.get() {
            return Ok(m.clone());
        }
        let caps = self.caps()?;
        Ok(self
            .inner
            .memory
            .get_or_init(|| {
                Arc::new(DeviceMemory::new(
                    self.label(),
                    caps.max_alloc,
                    caps.global_mem_size,
                ))
            })
            .clone())
    }

    /// Bytes of the buffers this process holds on the device now (user buffers and every
    /// queue's scratch memory): what [`Error::AllocTooLarge`] counts against
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`.
    pub fn memory_in_use(&self) -> Result<u64> {
        Ok(self.memory()?.in_use())
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

#[cfg(test)]
mod tests {
    use super::match_name;

    /// A machine with an Intel CPU: PoCL names its CPU device after it.
    const MACHINE: [(&str, &str); 4] = [
        (
            "Portable Computing Language",
            "pthread-skylake-avx512-Intel(R) Xeon(R) Processor",
        ),
        ("Oclgrind", "Oclgrind Simulator"),
        ("Intel(R) OpenCL", "Intel(R) Xeon(R) Processor"),
        ("NVIDIA CUDA", "NVIDIA H200"),
    ];

    #[test]
    fn the_platform_name_comes_before_the_device_name() {
        for (spec, rule, want) in [
            ("intel", "platform name", vec![2]),
            ("Intel(R) OpenCL", "exact name", vec![2]),
            ("pthread", "device name", vec![0]),
            ("NVIDIA", "platform name", vec![3]),
            ("oclgrind", "exact name", vec![1]),
            ("portable computing", "platform name", vec![0]),
            ("h200", "device name", vec![3]),
            ("Intel(R) Xeon(R) Processor", "exact name", vec![2]),
            ("xeon", "device name", vec![0, 2]),
            ("opencl / intel", "platform / name", vec![2]),
            ("l", "platform name", vec![0, 1, 2]),
            ("no-such", "", vec![]),
        ] {
            assert_eq!(match_name(&MACHINE, spec), (rule, want), "{spec}");
        }
    }

    #[test]
    fn identical_devices_are_ambiguous_by_name() {
        let two = [
            ("NVIDIA CUDA", "NVIDIA H200"),
            ("NVIDIA CUDA", "NVIDIA H200"),
        ];
        assert_eq!(match_name(&two, "nvidia"), ("platform name", vec![0, 1]));
        assert_eq!(match_name(&two, "NVIDIA H200"), ("exact name", vec![0, 1]));
    }
}
