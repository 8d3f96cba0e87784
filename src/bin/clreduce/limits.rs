//! Sizes checked before anything is allocated (issue 21): the host memory an input needs
//! against what /proc/meminfo says is available, and a device buffer against the device's
//! max_alloc (CL_DEVICE_MAX_MEM_ALLOC_SIZE) and global memory (CL_DEVICE_GLOBAL_MEM_SIZE). A
//! size that does not fit is a `CliError::TooLarge` naming the limit and the numbers, never an
//! abort in the allocator.

use crate::error::{CliError, CliResult, TooLarge};
use clreduce::caps::DeviceKind;
use clreduce::Device;

/// Host memory a process may take: MemAvailable (else MemTotal) from /proc/meminfo, with
/// where the number comes from; None where there is no such file.
pub fn host_memory() -> Option<(u64, &'static str)> {
    parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

fn parse_meminfo(text: &str) -> Option<(u64, &'static str)> {
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        kib.checked_mul(1024)
    };
    if let Some(b) = field("MemAvailable:") {
        return Some((
            b,
            "the host memory available (MemAvailable in /proc/meminfo)",
        ));
    }
    field("MemTotal:").map(|b| (b, "the host memory (MemTotal in /proc/meminfo)"))
}

/// Refuses `need` bytes of host memory for `what` when the host has less.
pub fn check_host(what: &str, need: u128) -> CliResult<()> {
    check_host_with(what, need, host_memory())
}

fn check_host_with(what: &str, need: u128, host: Option<(u64, &'static str)>) -> CliResult<()> {
    match host {
        Some((limit, name)) if need > u128::from(limit) => Err(CliError::TooLarge(TooLarge {
            what: what.to_string(),
            need,
            limit_name: name.to_string(),
            limit,
        })),
        _ => Ok(()),
    }
}

/// Refuses a buffer of `largest` bytes beyond the device's max_alloc, or `total` bytes of
/// buffers beyond its global memory. A CPU device's buffers are host memory too: there the
/// host's own `host` bytes and the buffers together must fit in the host's memory.
pub fn check_device(
    d: &Device,
    what: &str,
    largest: u128,
    total: u128,
    host: u128,
) -> CliResult<()> {
    let caps = d.caps()?;
    let refuse = |need: u128, limit: u64, name: &str| {
        Err(CliError::TooLarge(TooLarge {
            what: what.to_string(),
            need,
            limit_name: format!("the {name} of {}", d.label()),
            limit,
        }))
    };
    if largest > u128::from(caps.max_alloc) {
        return refuse(
            largest,
            caps.max_alloc,
            "max_alloc (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
        );
    }
    if total > u128::from(caps.global_mem_size) {
        return refuse(
            total,
            caps.global_mem_size,
            "global memory (CL_DEVICE_GLOBAL_MEM_SIZE)",
        );
    }
    if caps.kind == DeviceKind::Cpu {
        if let Some((limit, name)) = host_memory() {
            if host + total > u128::from(limit) {
                return Err(CliError::TooLarge(TooLarge {
                    what: format!(
                        "{what} on the host and in the buffers of {}, a CPU device,",
                        d.label()
                    ),
                    need: host + total,
                    limit_name: name.to_string(),
                    limit,
                }));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_parses() {
        let t = "MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(parse_meminfo(t).unwrap().0, 20_000_000 * 1024);
        let t = "MemTotal:       24576000 kB\n";
        let (b, name) = parse_meminfo(t).unwrap();
        assert_eq!(b, 24_576_000 * 1024);
        assert!(name.contains("MemTotal"));
        assert!(parse_meminfo("nothing here").is_none());
    }

    #[test]
    fn host_refusal_names_the_limit() {
        let host = Some((1u64 << 30, "host memory (test)"));
        assert!(check_host_with("x", 1 << 30, host).is_ok());
        let e = check_host_with("--n 4000000000 x f64 (the input)", 32_000_000_000, host)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            "--n 4000000000 x f64 (the input) needs 32000000000 bytes (29.8 GiB), more than host memory (test): 1073741824 bytes (1.0 GiB)"
        );
        assert!(check_host_with("x", u128::MAX, None).is_ok());
    }
}
