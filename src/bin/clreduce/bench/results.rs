//! The records of one `clreduce bench` run, as printed and written to `--json`: the points,
//! the devices with their streaming-read reference, the strategies skipped, the peers' and the
//! ladder's results, and the whole report.

use super::measure::Spread;
use serde::Serialize;

/// One measured point: a device, case, strategy and size.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub device: String,
    pub device_index: usize,
    pub case: String,
    pub strategy: String,
    pub plan: String,
    pub n: u64,
    pub bytes: u64,
    pub cache: String,
    pub reps: usize,
    pub device_ns: Spread,
    pub wall_ns: Spread,
    pub gbps: f64,
    pub pct_stream: Option<f64>,
    /// Native Rust peer, wall time (CPU devices).
    pub native_ns: Option<u64>,
    pub native_gbps: Option<f64>,
    /// clreduce wall GB/s / native wall GB/s.
    pub native_ratio: Option<f64>,
    /// The peer of this point (--peers): pyopencl on CPUs (f32-sum), torch on NVIDIA GPUs
    /// (f32-sum: torch.sum; f32-sum-min-max: torch.sum, torch.min, torch.max; u32-histN:
    /// torch.bincount; f32-argmin: torch.argmin). The other peers are in `peers`.
    pub peer: Option<String>,
    /// The peer's GB/s: input bytes (once) / its device time.
    pub peer_gbps: Option<f64>,
    /// clreduce device GB/s / peer device GB/s.
    pub peer_ratio: Option<f64>,
    /// A segmented case: the median device time of the plain sum of the same input buffers
    /// (auto plan), measured on the same device in the same run.
    pub plain_ns: Option<u64>,
    /// A segmented case: this point's median device time / `plain_ns`.
    pub x_plain: Option<f64>,
    pub check: String,
}

/// A device's streaming-read reference (the fastest u32 bit_or reduction over its largest size).
#[derive(Debug, Clone, Serialize)]
pub struct StreamRef {
    pub what: String,
    pub n: u64,
    pub plan: String,
    pub cache: String,
    pub device_ns: Spread,
    pub gbps: f64,
}

/// A benched device: what it is, its cache, the sizes run on it and its streaming reference.
#[derive(Debug, Clone, Serialize)]
pub struct DevInfo {
    pub index: usize,
    pub label: String,
    pub kind: String,
    pub nvidia: bool,
    pub driver: String,
    pub compute_units: u32,
    pub max_alloc: u64,
    pub llc_bytes: u64,
    pub llc_source: String,
    pub sizes: Vec<u64>,
    pub stream: Option<StreamRef>,
}

/// A strategy that did not plan (or failed) for a case on a device, with the reason.
#[derive(Debug, Clone, Serialize)]
pub struct Skip {
    pub device: String,
    pub case: String,
    pub strategy: String,
    pub reason: String,
}

/// One result of a Python peer (PyOpenCL, torch, cupy), read from its JSON lines.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PeerPoint {
    #[serde(default)]
    pub lib: String,
    /// The clreduce case this peer stands beside (absent in older peer output: derived from
    /// `op`, see [`peer_case`]).
    #[serde(default)]
    pub case: Option<String>,
    #[serde(default)]
    pub op: Option<String>,
    pub device: String,
    pub n: u64,
    pub gbps: f64,
    pub device_time_us: f64,
}

/// One step of the reduction ladder (benches/ladder/ladder.py) at one size.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct LadderPoint {
    pub device: String,
    pub step: u32,
    pub kernel: String,
    pub n: u64,
    pub gbps: Option<f64>,
    pub device_time_us: Option<f64>,
    #[serde(default)]
    pub note: Option<String>,
}

/// The whole run, as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct Report {
    pub command: String,
    pub reps: usize,
    pub warmup: usize,
    pub threads_native: usize,
    pub devices: Vec<DevInfo>,
    pub points: Vec<Point>,
    pub skipped: Vec<Skip>,
    pub peers: Vec<PeerPoint>,
    pub peers_note: Vec<String>,
    pub ladder: Vec<LadderPoint>,
}

/// The clreduce case a peer result belongs to.
pub fn peer_case(x: &PeerPoint) -> String {
    if let Some(c) = &x.case {
        return c.clone();
    }
    match x.op.as_deref() {
        None | Some("sum") => "f32-sum",
        Some("argmin") => "f32-argmin",
        Some("bincount" | "histc") => "u32-hist256",
        Some(_) => "f32-sum-min-max",
    }
    .into()
}

/// Whether two device labels name the same device.
pub fn same_device(a: &str, b: &str) -> bool {
    a.trim() == b.trim()
}
