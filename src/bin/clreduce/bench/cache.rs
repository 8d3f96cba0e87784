//! Cache state of `clreduce bench`: the last-level cache of each device (sysfs for the host
//! CPU, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, or `--llc`) and the rule that decides, per input size,
//! how many input copies a point rotates among or whether it flushes the LLC (`--cache`).

use super::units::fmt_bytes;
use clreduce::caps::{DeviceCaps, DeviceKind};
use clreduce::Device;

/// `--cache`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    Auto,
    Cold,
}

/// The last-level cache of the host CPU from sysfs (largest data or unified cache of cpu0).
pub fn sysfs_llc() -> Option<u64> {
    let mut best: Option<(u32, u64)> = None;
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    for e in dir.flatten() {
        let p = e.path();
        if !p
            .file_name()
            .is_some_and(|f| f.to_string_lossy().starts_with("index"))
        {
            continue;
        }
        let rd = |f: &str| std::fs::read_to_string(p.join(f)).ok();
        let (Some(level), Some(size), Some(ty)) = (rd("level"), rd("size"), rd("type")) else {
            continue;
        };
        if ty.trim() == "Instruction" {
            continue;
        }
        let Ok(level) = level.trim().parse::<u32>() else {
            continue;
        };
        let size = size.trim();
        let bytes = if let Some(k) = size.strip_suffix('K') {
            k.parse::<u64>().ok().map(|x| x << 10)
        } else if let Some(m) = size.strip_suffix('M') {
            m.parse::<u64>().ok().map(|x| x << 20)
        } else {
            size.parse::<u64>().ok()
        };
        if let Some(b) = bytes {
            if best.is_none_or(|(l, _)| level > l) {
                best = Some((level, b));
            }
        }
    }
    best.map(|(_, b)| b)
}

/// CL_DEVICE_GLOBAL_MEM_CACHE_SIZE of clreduce's device `index` (same enumeration order: platform
/// order, then device order; the name is checked).
fn cl_cache_size(index: usize, name: &str) -> Option<u64> {
    let mut k = 0;
    for p in opencl3::platform::get_platforms().ok()? {
        let Ok(ids) = p.get_devices(0xFFFF_FFFF) else {
            continue;
        };
        for id in ids {
            if k == index {
                let d = opencl3::device::Device::new(id);
                if d.name().ok()?.trim() != name {
                    return None;
                }
                return d.global_mem_cache_size().ok().filter(|&b| b > 0);
            }
            k += 1;
        }
    }
    None
}

const GPU_MIN_LLC: u64 = 64 << 20;

/// The device's last-level cache in bytes and where the number comes from.
pub fn llc_of(d: &Device, caps: &DeviceCaps) -> (u64, String) {
    let cl = cl_cache_size(d.index(), d.name());
    match caps.kind {
        DeviceKind::Cpu => match (sysfs_llc(), cl) {
            (Some(s), Some(c)) if c > s => (c, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".into()),
            (Some(s), _) => (s, "host CPU's last-level cache (sysfs)".into()),
            (None, Some(c)) => (c, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".into()),
            (None, None) => (32 << 20, "assumed (no cache size found)".into()),
        },
        // Drivers report less than the L2 here (NVIDIA's OpenCL reports 4.1 MiB on an H200,
        // whose L2 is 50 MB): assume at least 64 MiB, so mid sizes rotate rather than
        // pass for cold.
        _ => match cl {
            Some(c) if c >= GPU_MIN_LLC => (c, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".into()),
            Some(c) => (
                GPU_MIN_LLC,
                format!(
                    "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE says {}; at least {} assumed for a GPU's L2, --llc to set",
                    fmt_bytes(c),
                    fmt_bytes(GPU_MIN_LLC)
                ),
            ),
            None => (GPU_MIN_LLC, "assumed (no cache size found), --llc to set".into()),
        },
    }
}

/// How the inputs of a point meet the cache: how many copies to rotate among, whether to flush
/// the LLC before each repetition, and the state to print.
pub struct CachePlan {
    pub copies: usize,
    pub flush: bool,
    pub state: String,
}

/// The cache plan of an input of `bytes` against an LLC of `llc` bytes.
pub fn rotation(bytes: u64, llc: u64, mode: CacheMode) -> CachePlan {
    let bytes = bytes.max(1);
    if bytes > 2 * llc {
        CachePlan {
            copies: 1,
            flush: false,
            state: "cold (> 2x LLC)".into(),
        }
    } else if bytes * 4 > llc {
        let k = (2 * llc / bytes + 1) as usize;
        CachePlan {
            copies: k,
            flush: false,
            state: format!("cold: rotating {k} buffers (together > 2x LLC)"),
        }
    } else if mode == CacheMode::Cold {
        CachePlan {
            copies: 1,
            flush: true,
            state: "cold: LLC flushed before each repetition".into(),
        }
    } else {
        let k = (llc / (2 * bytes)).clamp(1, 16) as usize;
        CachePlan {
            copies: k,
            flush: false,
            state: format!("warm: rotating {k} buffers (together <= LLC/2)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_states() {
        let r = rotation(100 << 20, 32 << 20, CacheMode::Auto);
        assert_eq!((r.copies, r.flush), (1, false));
        // Above LLC/4: copies that together exceed 2x LLC.
        let r = rotation(16 << 20, 32 << 20, CacheMode::Auto);
        assert_eq!(r.copies, 5);
        assert!(r.copies as u64 * (16 << 20) > 2 * (32 << 20));
        assert!(r.state.starts_with("cold: rotating 5"));
        // Up to LLC/4: copies that together fit in half the LLC.
        let r = rotation(4 << 20, 50 << 20, CacheMode::Auto);
        assert_eq!(r.copies, 6);
        assert!(r.copies as u64 * (4 << 20) <= 25 << 20);
        assert!(r.state.starts_with("warm"));
        assert_eq!(rotation(4096, 32 << 20, CacheMode::Auto).copies, 16);
        // --cache cold flushes instead.
        let r = rotation(4 << 20, 50 << 20, CacheMode::Cold);
        assert_eq!((r.copies, r.flush), (1, true));
    }
}
