//! One application workload's figures at one concurrency level
//! ([`AppFigure`]), set against the device's raw limit; judged in
//! [`crate::applications`].

use serde::{Deserialize, Serialize};

/// The name prefix of the cache effect's points (`sqlite-cache-90m`: the
/// SQLite workload under a 90 MiB memory limit).
pub const CACHE_PREFIX: &str = "sqlite-cache-";

/// One workload at one concurrency.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AppFigure {
    /// `small-files`, `sqlite`, `fdatasync`, `pgbench`.
    pub name: String,
    pub jobs: u32,
    /// What one operation is (`transaction`, `fdatasync`).
    pub op: String,
    pub ops_per_s: f64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    /// The disk the counters are of (None: no block device; see `note`).
    pub device: Option<String>,
    pub reads_per_op: Option<f64>,
    pub writes_per_op: Option<f64>,
    pub read_bytes_per_op: Option<f64>,
    pub write_bytes_per_op: Option<f64>,
    pub flushes_per_op: Option<f64>,
    /// Device bytes written / application bytes written.
    pub write_amplification: Option<f64>,
    /// Device I/Os per second the workload caused (reads and writes).
    pub device_iops: Option<f64>,
    /// The device's raw limit in this study (4 KiB random reads), IOPS.
    pub raw_iops: Option<f64>,
    /// `device_iops` against `raw_iops`, percent.
    pub share_of_raw_pct: Option<f64>,
    /// The run's own result file, relative to the study's directory.
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The cache effect's points: the memory cgroup's limit, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<u64>,
    /// The cache effect's points: the page cache the group held, against
    /// the database's size (memory.stat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_share: Option<f64>,
}

impl AppFigure {
    /// Fill `device_iops` and `share_of_raw_pct` from the per-operation
    /// counters and the study's raw limit.
    pub fn set_raw(&mut self, raw_iops: Option<f64>) {
        self.raw_iops = raw_iops;
        self.device_iops = match (self.reads_per_op, self.writes_per_op) {
            (Some(r), Some(w)) => Some(self.ops_per_s * (r + w)),
            _ => None,
        };
        self.share_of_raw_pct = match (self.device_iops, raw_iops) {
            (Some(d), Some(r)) if r > 0.0 => Some(100.0 * d / r),
            _ => None,
        };
    }
}
