//! The per-user tuning cache: where `clreduce tune` keeps each device's measurements
//! ([`TuneTable`]), how a table is keyed (platform, device name, driver version, clreduce version
//! with a fingerprint of its kernels, table format), how it is written (a temporary file renamed
//! over the old one) and read (a missing file is "not tuned"; a corrupt file or a stale table is
//! ignored with a `tracing::warn!`, never an error), and the process-wide memo queues consult
//! when they plan.
//!
//! The file: `CLREDUCE_TUNE_CACHE` when set, else `$XDG_CACHE_HOME/clreduce/tuning.json`
//! (an absolute `XDG_CACHE_HOME`), else `~/.cache/clreduce/tuning.json`. One JSON object,
//! `{"format": 1, "tables": [TuneTable, ...]}`, one table per device.
//!
//! Imports `plan`, `caps`, `codegen` and `error` only (the API consults it; the tuner writes it).

use crate::caps::DeviceCaps;
use crate::error::{Error, Result};
use crate::plan::{DeviceKey, TuneTable, TABLE_FORMAT};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The whole cache file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheFile {
    /// The file layout's version.
    pub format: u32,
    /// One table per device.
    pub tables: Vec<TuneTable>,
}

/// What the cache holds for one device.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Measurements for this device, this driver and this clreduce.
    Tuned(TuneTable),
    /// No file, or no table for this device.
    NotTuned,
    /// A table for this device from another driver or clreduce (or table format): ignored.
    Stale(String),
    /// The file does not parse: ignored.
    Corrupt(String),
    /// Neither `CLREDUCE_TUNE_CACHE`, `XDG_CACHE_HOME` nor `HOME` is set.
    NoPath,
}

impl Status {
    /// One line for `clreduce devices` and `tune --show`.
    pub fn describe(&self) -> String {
        match self {
            Status::Tuned(t) => format!("tuned ({} points; {})", t.entries.len(), t.measured),
            Status::NotTuned => "not tuned (first-use rules)".into(),
            Status::Stale(why) => format!("stale tuning ignored: {why}"),
            Status::Corrupt(why) => format!("corrupt tuning cache ignored: {why}"),
            Status::NoPath => "no tuning cache path (set CLREDUCE_TUNE_CACHE or HOME)".into(),
        }
    }
}

/// The cache file's path (see the module comment).
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CLREDUCE_TUNE_CACHE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    Some(crate::runtime::disk_cache::user_cache_dir()?.join("tuning.json"))
}

/// This clreduce: its version and a fingerprint of the embedded kernels, so a table measured
/// with other kernels is stale even at the same version.
pub fn clreduce_id() -> String {
    // FNV-1a over the kernel sources, in a fixed order.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for src in crate::codegen::KERNEL_SOURCES {
        for b in src.bytes().chain([0u8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{}+kernels.{h:016x}", env!("CARGO_PKG_VERSION"))
}

/// The key a table for `caps`'s device must carry to be used.
pub fn key_of(caps: &DeviceCaps) -> DeviceKey {
    DeviceKey::new(caps, &clreduce_id())
}

/// Why a cache file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The file system refused (permissions, a file where a folder should be, ...).
    Io(String),
    /// The file is not a tuning cache (garbage, truncated, another layout).
    Parse(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read it: {e}"),
            ReadError::Parse(e) => write!(f, "not a clreduce tuning file: {e}"),
        }
    }
}

/// Reads the cache file: `Ok(None)` when there is none.
pub fn read(path: &Path) -> std::result::Result<Option<CacheFile>, ReadError> {
    let bytes = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReadError::Io(e.to_string())),
    };
    let file: CacheFile =
        serde_json::from_slice(&bytes).map_err(|e| ReadError::Parse(e.to_string()))?;
    Ok(Some(file))
}

/// What the cache at `path` holds for `caps`'s device. A table's entries whose geometry the
/// planner would refuse ([`checked`]) are left out.
pub fn status_at(path: &Path, caps: &DeviceCaps) -> Status {
    status_checked(path, caps).0
}

/// `table` without the entries whose geometry the planner would refuse: out of the range
/// `CLREDUCE_TUNE` accepts (the same validator, [`crate::plan::Tuning::problem`]) or a
/// work-group larger than the device's. With the note of what was dropped, if anything.
pub fn checked(mut table: TuneTable, caps: &DeviceCaps) -> (TuneTable, Option<String>) {
    let before = table.entries.len();
    let mut first: Option<String> = None;
    table.entries.retain(|e| {
        let why = e.geometry.tuning().problem().or_else(|| {
            (e.geometry.local > caps.max_local_1d()).then(|| {
                format!(
                    "local {} is larger than the device's {}",
                    e.geometry.local,
                    caps.max_local_1d()
                )
            })
        });
        if let Some(w) = &why {
            first.get_or_insert_with(|| format!("{w} ({} at 2^{})", e.class, e.log2_n));
        }
        why.is_none()
    });
    let note = first.map(|w| {
        format!(
            "{} of {before} entries dropped, their geometry cannot be planned: {w}",
            before - table.entries.len()
        )
    });
    (table, note)
}

/// [`status_at`], with the note of the entries [`checked`] dropped.
fn status_checked(path: &Path, caps: &DeviceCaps) -> (Status, Option<String>) {
    match status_unchecked(path, caps) {
        Status::Tuned(t) => {
            let (t, note) = checked(t, caps);
            (Status::Tuned(t), note)
        }
        other => (other, None),
    }
}

fn status_unchecked(path: &Path, caps: &DeviceCaps) -> Status {
    let file = match read(path) {
        Ok(Some(f)) => f,
        Ok(None) => return Status::NotTuned,
        Err(e) => return Status::Corrupt(format!("{}: {e}", path.display())),
    };
    let want = key_of(caps);
    if file.format != TABLE_FORMAT {
        return Status::Stale(format!(
            "{}: file format {} (this clreduce reads {TABLE_FORMAT}); run clreduce tune again",
            path.display(),
            file.format
        ));
    }
    let mine: Vec<&TuneTable> = file
        .tables
        .iter()
        .filter(|t| t.key.platform == want.platform && t.key.device == want.device)
        .collect();
    if let Some(t) = mine.iter().find(|t| t.key == want) {
        return Status::Tuned((*t).clone());
    }
    match mine.first() {
        Some(t) => Status::Stale(format!(
            "{}: measured with driver {} and clreduce {} (table format {}); this is driver {} and clreduce {}; run clreduce tune again",
            path.display(),
            t.key.driver,
            t.key.clreduce,
            t.key.format,
            want.driver,
            want.clreduce
        )),
        None => Status::NotTuned,
    }
}

/// What the cache holds for `caps`'s device, at [`path`].
pub fn status(caps: &DeviceCaps) -> Status {
    match path() {
        Some(p) => status_at(&p, caps),
        None => Status::NoPath,
    }
}

/// Stores `table` in the cache at `path`, replacing the table of the same device (platform and
/// name) and keeping the others. Written to a temporary file in the same folder, then renamed
/// over the old one, so a reader sees the old file or the new one, never a part. A corrupt or
/// other-format file is replaced (with a warning).
pub fn save_at(path: &Path, table: &TuneTable) -> Result<()> {
    let fail = |problem: String| Error::TuneCache {
        path: path.display().to_string(),
        problem,
    };
    let mut file = match read(path) {
        Ok(Some(f)) if f.format == TABLE_FORMAT => f,
        Ok(None) => CacheFile::default(),
        Ok(Some(f)) => {
            tracing::warn!(path = %path.display(), format = f.format, "tuning cache of another format replaced");
            CacheFile::default()
        }
        Err(ReadError::Parse(e)) => {
            tracing::warn!(path = %path.display(), problem = %e, "corrupt tuning cache replaced");
            CacheFile::default()
        }
        Err(e @ ReadError::Io(_)) => return Err(fail(e.to_string())),
    };
    file.format = TABLE_FORMAT;
    file.tables
        .retain(|t| !(t.key.platform == table.key.platform && t.key.device == table.key.device));
    file.tables.push(table.clone());
    let text = serde_json::to_string_pretty(&file).map_err(|e| fail(e.to_string()))?;
    // A symbolic link stays one: the file it leads to is replaced.
    let path = &target_of(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create its folder: {e}")))?;
    }
    let name = path
        .file_name()
        .ok_or_else(|| fail("not a file path".into()))?
        .to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text + "\n")
        .map_err(|e| fail(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(format!("cannot rename {} over it: {e}", tmp.display()))
    })?;
    forget();
    Ok(())
}

/// The file a save replaces: `path`, or where it leads when it is a symbolic link (also one to
/// a file that does not exist yet), so that the link itself stays.
fn target_of(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    // As the kernel, give up after 40 links (a loop then fails at the write, with its error).
    for _ in 0..40 {
        let is_link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        let Some(to) = is_link.then(|| std::fs::read_link(&p).ok()).flatten() else {
            break;
        };
        p = match p.parent() {
            Some(dir) if to.is_relative() => dir.join(to),
            _ => to,
        };
    }
    p
}

/// [`save_at`] at [`path`]; returns the path written.
pub fn save(table: &TuneTable) -> Result<PathBuf> {
    let p = path().ok_or_else(|| Error::TuneCache {
        path: "(none)".into(),
        problem: "no path: set CLREDUCE_TUNE_CACHE, XDG_CACHE_HOME or HOME".into(),
    })?;
    save_at(&p, table)?;
    Ok(p)
}

type Memo = HashMap<(usize, Option<PathBuf>), Option<Arc<TuneTable>>>;

fn memo() -> &'static Mutex<Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The table queues on device `index` plan with: read once per process (and cache path), a
/// corrupt or stale cache warned about once and ignored.
pub(crate) fn table_for(index: usize, caps: &DeviceCaps) -> Option<Arc<TuneTable>> {
    let p = path();
    let mut m = memo().lock().unwrap_or_else(|e| e.into_inner());
    m.entry((index, p.clone()))
        .or_insert_with(|| {
            let (st, dropped) = match &p {
                Some(p) => status_checked(p, caps),
                None => (Status::NoPath, None),
            };
            if let (Some(why), Some(p)) = (dropped, &p) {
                tracing::warn!(device = %caps.label(), "tuning cache {}: {why}", p.display());
            }
            match st {
                Status::Tuned(t) => {
                    tracing::debug!(device = %caps.label(), points = t.entries.len(), "tuning table loaded");
                    Some(Arc::new(t))
                }
                Status::Stale(why) | Status::Corrupt(why) => {
                    tracing::warn!(device = %caps.label(), "tuning cache ignored: {why}");
                    None
                }
                Status::NotTuned | Status::NoPath => None,
            }
        })
        .clone()
}

/// Forgets the tables read so far: the next launch that plans reads the cache again (plans
/// already in a queue's launch cache stay).
pub fn forget() {
    memo().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::fixtures;

    fn table(caps: &DeviceCaps, key: DeviceKey) -> TuneTable {
        let _ = caps;
        TuneTable {
            key,
            measured: "test".into(),
            entries: Vec::new(),
            segments: Vec::new(),
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("clreduce-tune-cache-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    #[test]
    fn save_then_read_keeps_other_devices_and_replaces_its_own() {
        let p = tmp("a/b/tuning.json");
        let _ = std::fs::remove_file(&p);
        let pocl = fixtures::pocl_cpu();
        let intel = fixtures::intel_cpu();
        assert_eq!(status_at(&p, &pocl), Status::NotTuned);
        save_at(&p, &table(&pocl, key_of(&pocl))).unwrap();
        save_at(&p, &table(&intel, key_of(&intel))).unwrap();
        let mut again = table(&pocl, key_of(&pocl));
        again.measured = "second".into();
        save_at(&p, &again).unwrap();
        let f = read(&p).unwrap().unwrap();
        assert_eq!(f.tables.len(), 2);
        match status_at(&p, &pocl) {
            Status::Tuned(t) => assert_eq!(t.measured, "second"),
            s => panic!("{s:?}"),
        }
        assert!(matches!(status_at(&p, &intel), Status::Tuned(_)));
        // No temporary file is left beside it.
        let left: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn corrupt_and_stale_caches_are_ignored_not_errors() {
        let pocl = fixtures::pocl_cpu();
        let p = tmp("garbage.json");
        for garbage in [
            "",
            "{",
            "\u{0}\u{1}binary",
            "[1,2,3]",
            "{\"format\":1,\"tables\":[{\"key\":7}]}",
        ] {
            std::fs::write(&p, garbage).unwrap();
            assert!(
                matches!(status_at(&p, &pocl), Status::Corrupt(_)),
                "{garbage:?}"
            );
        }
        // Another driver, another clreduce, another format: stale, with the reason.
        let p = tmp("stale.json");
        let _ = std::fs::remove_file(&p);
        let mut k = key_of(&pocl);
        k.driver = "2.0".into();
        save_at(&p, &table(&pocl, k)).unwrap();
        match status_at(&p, &pocl) {
            Status::Stale(why) => assert!(why.contains("driver 2.0"), "{why}"),
            s => panic!("{s:?}"),
        }
        let mut k = key_of(&pocl);
        k.clreduce = "0.0.1".into();
        save_at(&p, &table(&pocl, k)).unwrap();
        assert!(matches!(status_at(&p, &pocl), Status::Stale(_)));
        std::fs::write(&p, "{\"format\": 999, \"tables\": []}").unwrap();
        assert!(matches!(status_at(&p, &pocl), Status::Stale(_)));
        // A corrupt file is replaced by the next save.
        std::fs::write(&p, "not json").unwrap();
        save_at(&p, &table(&pocl, key_of(&pocl))).unwrap();
        assert!(matches!(status_at(&p, &pocl), Status::Tuned(_)));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_cache_stays_a_link_and_its_target_is_written() {
        let pocl = fixtures::pocl_cpu();
        let target = tmp("link-target/real.json");
        let _ = std::fs::remove_file(&target);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let link = tmp("link.json");
        let _ = std::fs::remove_file(&link);
        // A link to a file that does not exist yet, with a relative target.
        std::os::unix::fs::symlink("link-target/real.json", &link).unwrap();
        save_at(&link, &table(&pocl, key_of(&pocl))).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(matches!(status_at(&target, &pocl), Status::Tuned(_)));
        // And once it exists.
        save_at(&link, &table(&pocl, key_of(&pocl))).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn entries_the_planner_would_refuse_are_dropped() {
        use crate::plan::{LaunchClass, OpClass, TuneEntry, TunedGeometry};
        let pocl = fixtures::pocl_cpu();
        let geo = |local, groups_per_cu, unroll| TunedGeometry {
            local,
            groups_per_cu,
            unroll,
            order: crate::plan::IndexOrder::Contiguous,
            hot: None,
        };
        let entry = |log2_n, g| TuneEntry {
            class: LaunchClass {
                ops: vec![OpClass::Sum],
                ty: crate::ElemType::F32,
                span_log2: None,
                exact: false,
            },
            log2_n,
            strategy: crate::plan::Strategy::AUTO,
            geometry: g,
            plan: "tree+atomic".into(),
            best_ns: 1,
            rule_plan: "tree+atomic".into(),
            rule_geometry: g,
            rule_ns: 1,
            runner_up: None,
            tried: 1,
        };
        let too_big = pocl.max_local_1d() + 1;
        let mut t = table(&pocl, key_of(&pocl));
        t.entries = vec![
            entry(10, geo(64, 4, 8)),
            entry(12, geo(64, 4, 3)),
            entry(14, geo(64, 4, 0)),
            entry(16, geo(0, 4, 8)),
            entry(18, geo(64, 0, 8)),
            entry(20, geo(too_big, 4, 8)),
        ];
        let p = tmp("bad-geometry.json");
        let _ = std::fs::remove_file(&p);
        save_at(&p, &t).unwrap();
        let (st, note) = status_checked(&p, &pocl);
        match st {
            Status::Tuned(kept) => {
                assert_eq!(kept.entries.len(), 1);
                assert_eq!(kept.entries[0].log2_n, 10);
            }
            s => panic!("{s:?}"),
        }
        let note = note.expect("a note of the dropped entries");
        assert!(note.starts_with("5 of 6 entries dropped"), "{note}");
        assert!(note.contains("unroll 3"), "{note}");
    }

    #[test]
    fn an_unwritable_path_is_a_typed_error() {
        let blocker = tmp("blocker");
        std::fs::write(&blocker, "a file, not a folder").unwrap();
        let p = blocker.join("tuning.json");
        let pocl = fixtures::pocl_cpu();
        match save_at(&p, &table(&pocl, key_of(&pocl))) {
            Err(Error::TuneCache { path, problem }) => {
                assert_eq!(path, p.display().to_string());
                assert!(problem.contains("cannot"), "{problem}");
            }
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn the_id_names_the_version_and_the_kernels() {
        let id = clreduce_id();
        assert!(id.starts_with(env!("CARGO_PKG_VERSION")), "{id}");
        assert_eq!(id, clreduce_id());
        assert_eq!(
            id.len(),
            env!("CARGO_PKG_VERSION").len() + "+kernels.".len() + 16
        );
    }
}
