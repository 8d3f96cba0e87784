//! Program binaries on disk: a program one process compiled is loaded from its binary by the
//! next (`clCreateProgramWithBinary`), as PyOpenCL's and DPC++'s persistent caches do. Intel's
//! CPU runtime spends about 0.4 s compiling a reduction program and keeps nothing between
//! processes; NVIDIA's driver caches only the last step (PTX to machine code), so a first launch
//! there also pays OpenCL C to PTX. PoCL keeps its own cache; this one serves it as well.
//!
//! Where: `CLREDUCE_PROGRAM_CACHE` names the folder (`off` or `0` turns the cache off), else
//! `$XDG_CACHE_HOME/clreduce/programs` (an absolute `XDG_CACHE_HOME`), else
//! `~/.cache/clreduce/programs`; with none of them, no cache. One file per (device, driver,
//! options, source): its name is two 64-bit hashes of all that, and it starts with the whole
//! identity in text (the platform and device names and versions, the driver version, the build
//! options, the source's length and hashes), so a load compares the identity itself, not only
//! a hash, and a checksum of the binary. Anything unexpected (an unreadable, short, foreign or
//! corrupt file, a binary the driver refuses) is a miss: the program is compiled from source
//! and the file written again. Writes go to a temporary file renamed into place, so concurrent
//! processes never read half a file. The folder is kept under `CLREDUCE_PROGRAM_CACHE_MAX_MB`
//! (default 1024): a process's first write removes the least recently used files beyond it.

use opencl3::device::Device as ClDevice;
use std::hash::Hasher;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// The first line of every file; a new layout takes a new number.
const MAGIC: &str = "clreduce program binary 1";

static LOADED: AtomicU64 = AtomicU64::new(0);
static TRIMMED: AtomicBool = AtomicBool::new(false);

/// How many programs this process loaded from the disk cache instead of compiling them.
pub fn loaded_count() -> u64 {
    LOADED.load(Ordering::Relaxed)
}

pub(crate) fn note_loaded() {
    LOADED.fetch_add(1, Ordering::Relaxed);
}

/// clreduce's folder in the user's cache: `$XDG_CACHE_HOME/clreduce` (an absolute
/// `XDG_CACHE_HOME`), else `~/.cache/clreduce`; `None` without either. The program cache's
/// default lives in it, and the tuning cache's (`tune/cache.rs`).
pub(crate) fn user_cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = var("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".cache")))?;
    Some(base.join("clreduce"))
}

/// The cache folder, resolved once per process from the environment (see the module's text).
fn dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| match std::env::var_os("CLREDUCE_PROGRAM_CACHE") {
        Some(v) if v == "off" || v == "0" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => Some(user_cache_dir()?.join("programs")),
    })
    .as_deref()
}

/// FNV-1a, 64 bits (the second hash of a key beside std's SipHash).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

fn sip(bytes: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

/// One program's place in the cache: its file and the identity the file must start with.
pub(crate) struct Entry {
    path: PathBuf,
    identity: String,
}

/// The device's part of every identity (platform and device names and versions, the driver
/// version), or `None` when one of them cannot be read: that device then has no disk cache.
pub(crate) fn device_identity(cl: &ClDevice, platform: &str, name: &str) -> Option<String> {
    let version = opencl3::platform::Platform::new(cl.platform().ok()?)
        .version()
        .ok()?;
    Some(format!(
        "platform {platform}\nplatform version {version}\ndevice {name}\ndevice version {}\n\
         driver {}\n",
        cl.version().ok()?,
        cl.driver_version().ok()?,
    ))
}

/// The entry of (device, source, options), or `None` when the cache is off or the device has
/// no identity (the program is then compiled, as without a cache).
pub(crate) fn entry(device: Option<&str>, source: &str, options: &str) -> Option<Entry> {
    let dir = dir()?;
    let identity = format!(
        "{MAGIC}\n{}options {}\nsource {} {:016x} {:016x}\n",
        device?,
        options.replace('\n', " "),
        source.len(),
        fnv(source.as_bytes()),
        sip(source.as_bytes()),
    );
    let name = format!(
        "{:016x}{:016x}.bin",
        fnv(identity.as_bytes()),
        sip(identity.as_bytes())
    );
    Some(Entry {
        path: dir.join(name),
        identity,
    })
}

impl Entry {
    /// The stored binary, when the file holds this identity and its checksum matches.
    pub(crate) fn load(&self) -> Option<Vec<u8>> {
        let bytes = std::fs::read(&self.path).ok()?;
        let binary = parse(&bytes, &self.identity)?;
        // Marks the file as used, for the trimming's least-recently-used order.
        if let Ok(f) = std::fs::File::options().append(true).open(&self.path) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        Some(binary.to_vec())
    }

    /// Writes the binary (a temporary file renamed into place). Failures are ignored: the
    /// cache only saves time.
    pub(crate) fn store(&self, binary: &[u8]) {
        if binary.is_empty() {
            return;
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        if !TRIMMED.swap(true, Ordering::Relaxed) {
            trim(dir, max_bytes());
        }
        let tmp = dir.join(format!(
            ".tmp-{}-{:x}",
            std::process::id(),
            fnv(self.identity.as_bytes()) ^ sip(binary)
        ));
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(self.identity.as_bytes())?;
            f.write_all(format!("binary {} {:016x}\n", binary.len(), fnv(binary)).as_bytes())?;
            f.write_all(binary)
        });
        if written.is_err() || std::fs::rename(&tmp, &self.path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// Removes the file (a binary the driver refused).
    pub(crate) fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The binary in a file's bytes: the identity, then `binary LEN CHECKSUM`, then LEN bytes.
fn parse<'a>(bytes: &'a [u8], identity: &str) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(identity.as_bytes())?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&rest[..nl]).ok()?;
    let mut words = header.strip_prefix("binary ")?.split(' ');
    let len: usize = words.next()?.parse().ok()?;
    let sum = u64::from_str_radix(words.next()?, 16).ok()?;
    let binary = &rest[nl + 1..];
    (binary.len() == len && fnv(binary) == sum).then_some(binary)
}

fn max_bytes() -> u64 {
    std::env::var("CLREDUCE_PROGRAM_CACHE_MAX_MB")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(1024)
        .saturating_mul(1 << 20)
}

/// Removes the least recently used `.bin` files of `dir` until it holds at most three
/// quarters of `max` bytes, when it holds more than `max`.
fn trim(dir: &Path, max: u64) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = read
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "bin"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    if total <= max {
        return;
    }
    files.sort();
    for (_, len, path) in files {
        if total <= max / 4 * 3 {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(identity: &str, binary: &[u8]) -> Vec<u8> {
        let mut v = identity.as_bytes().to_vec();
        v.extend(format!("binary {} {:016x}\n", binary.len(), fnv(binary)).bytes());
        v.extend_from_slice(binary);
        v
    }

    #[test]
    fn a_file_gives_its_binary_only_to_its_own_identity() {
        let id = format!("{MAGIC}\ndevice A\nsource 3 1 2\n");
        let bin = [7u8, 0, 10, 255, 10];
        let f = file(&id, &bin);
        assert_eq!(parse(&f, &id), Some(&bin[..]));
        assert_eq!(parse(&f, &id.replace("device A", "device B")), None);
        // Truncated, one byte changed, one byte more.
        assert_eq!(parse(&f[..f.len() - 1], &id), None);
        let mut bad = f.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(parse(&bad, &id), None);
        let mut long = f.clone();
        long.push(0);
        assert_eq!(parse(&long, &id), None);
        assert_eq!(parse(b"", &id), None);
    }

    #[test]
    fn trimming_removes_the_least_recently_used_files() {
        let dir = std::env::temp_dir().join(format!("clreduce-trim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t0 = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
        for k in 0..8u64 {
            let p = dir.join(format!("{k}.bin"));
            std::fs::write(&p, vec![0u8; 1000]).unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(k))
                .unwrap();
        }
        std::fs::write(dir.join("other.txt"), vec![0u8; 5000]).unwrap();
        trim(&dir, 8000);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            9,
            "at the limit: nothing"
        );
        trim(&dir, 4000);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["5.bin", "6.bin", "7.bin", "other.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
