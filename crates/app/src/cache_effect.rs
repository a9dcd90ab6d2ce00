//! The cache effect's figures, below the runs that make them
//! ([`crate::cache`] for SQLite, [`crate::pgcache`] for pgbench): a
//! point's figures at one memory limit ([`CachePoint`]), a sweep's
//! ([`CacheEffect`]) with what they show and where the device's counters
//! and the group's page cache disagree, and the dropping and reading back
//! of files that starts each point.

use crate::cgroup;
use crate::error::Error;
use crate::result::AppResult;
use serde::Serialize;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Drop these files' (clean) pages from the page cache.
pub(crate) fn drop_files(files: &[PathBuf]) -> Result<(), Error> {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    for f in files {
        let file = std::fs::File::open(f).map_err(|e| Error::io("opening", f, e))?;
        posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).map_err(|e| {
            Error::Runtime(format!("posix_fadvise(DONTNEED) on {}: {e}", f.display()))
        })?;
    }
    Ok(())
}

/// Read these files once, front to back; the bytes read.
pub(crate) fn read_files(files: &[PathBuf], stop: &AtomicBool) -> Result<u64, Error> {
    let mut buf = vec![0u8; 256 << 10];
    let mut total = 0;
    for f in files {
        let mut file = std::fs::File::open(f).map_err(|e| Error::io("opening", f, e))?;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => total += n as u64,
                Err(e) => return Err(Error::io("reading", f, e)),
            }
        }
    }
    Ok(total)
}

/// One memory limit of a sweep.
#[derive(Clone, Debug, Serialize)]
pub struct CachePoint {
    /// The group's memory limit, bytes.
    pub memory_max: u64,
    /// The group's page cache after the timed phase (`memory.stat`).
    pub cache_bytes: u64,
    pub anon_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_bytes: Option<u64>,
    /// cache_bytes / the database's bytes before the point.
    pub cached_share: f64,
    /// Bytes read to warm the cache before the timed phase.
    pub warm_read_bytes: u64,
    pub transactions: u64,
    pub ops_per_s: f64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    /// The device's reads per transaction (None: no block device).
    pub reads_per_tx: Option<f64>,
    pub read_bytes_per_tx: Option<f64>,
    pub writes_per_tx: Option<f64>,
    /// What the cached share predicts: the random account's page missed
    /// `1 − min(1, cached_share)` of the time.
    pub expected_reads_per_tx: f64,
    pub interrupted: bool,
    /// The group's shared memory (pgbench: the server's buffers), which
    /// `memory.stat` counts as cache and `cached_share` leaves out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shmem_bytes: Option<u64>,
    /// The point's figures against independent sources.
    pub checks: Vec<crate::checks::Check>,
}

/// A sweep of memory limits over one database.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CacheEffect {
    pub name: String,
    pub op: String,
    pub directory: String,
    pub jobs: u32,
    pub scale: u32,
    pub seed: u64,
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// The database's files before the first point, bytes.
    pub data_bytes: u64,
    /// The disk whose counters were read (None: see `device_note`).
    pub device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_note: Option<String>,
    pub points: Vec<CachePoint>,
    pub interrupted: bool,
    pub notes: Vec<String>,
}

/// A point whose data had `cached` bytes in the page cache, each
/// transaction reading `pages_per_tx` random pages of it.
pub(crate) fn point_of(
    limit: u64,
    data: u64,
    cached: u64,
    pages_per_tx: f64,
    warm: u64,
    u: &cgroup::Usage,
    r: &AppResult,
) -> CachePoint {
    let share = if data > 0 {
        cached as f64 / data as f64
    } else {
        0.0
    };
    let per = r.device.as_ref().map(|d| &d.per_op);
    CachePoint {
        memory_max: limit,
        cache_bytes: u.file_bytes,
        anon_bytes: u.anon_bytes,
        peak_bytes: u.peak_bytes,
        cached_share: share,
        warm_read_bytes: warm,
        transactions: r.ops,
        ops_per_s: r.ops_per_s,
        lat_p50_ns: r.lat_ns.p50,
        lat_p99_ns: r.lat_ns.p99,
        reads_per_tx: per.map(|p| p.reads),
        read_bytes_per_tx: per.map(|p| p.read_bytes),
        writes_per_tx: per.map(|p| p.writes),
        expected_reads_per_tx: pages_per_tx * (1.0 - share.min(1.0)),
        interrupted: r.interrupted,
        shmem_bytes: None,
        checks: r.checks.clone(),
    }
}

/// Device reads a point whose data the cache held may show however few
/// transactions it ran: the file system's metadata and the application's
/// small files read back once. On a loaded machine a point runs few
/// transactions (about 100 in a second), and a handful of such reads
/// would pass 0.05 per transaction.
const STRAY_READS: f64 = 16.0;

/// What the sweep shows, and where the device's counters and the group's
/// cache disagree.
pub(crate) fn judge(c: &CacheEffect, first: String) -> Vec<String> {
    let mut notes = vec![first];
    let (Some(first), Some(last)) = (c.points.first(), c.points.last()) else {
        return notes;
    };
    if let (Some(r0), Some(r1), true) = (first.reads_per_tx, last.reads_per_tx, c.points.len() > 1)
    {
        let change = if first.ops_per_s > 0.0 {
            (last.ops_per_s / first.ops_per_s - 1.0) * 100.0
        } else {
            0.0
        };
        notes.push(format!(
            "with {:.0} % of the data cached the device served {r0:.2} reads per transaction at {:.0} transactions/s; with {:.0} % cached, {r1:.2} reads at {:.0}/s ({change:+.0} %)",
            first.cached_share.min(1.0) * 100.0,
            first.ops_per_s,
            last.cached_share.min(1.0) * 100.0,
            last.ops_per_s
        ));
    }
    let wal = c.settings.get("journal").and_then(|j| j.as_str()) == Some("wal");
    let mut wal_noted = false;
    for p in &c.points {
        let Some(r) = p.reads_per_tx else { continue };
        let e = p.expected_reads_per_tx;
        let stray = r * p.transactions as f64 <= STRAY_READS;
        let missing = (p.cached_share >= 1.0 && r > 0.05 && !stray) || (e >= 0.3 && r < e / 4.0);
        let extra = p.cached_share < 1.0 && r > 2.0 * e + 0.1;
        if missing || (extra && !wal) {
            notes.push(format!(
                "at {:.1} MiB the group's page cache ({:.0} % of the data, memory.stat) predicts about {e:.2} reads per transaction, the device counted {r:.2}: the two sources disagree (another process's I/O on the disk, reads served elsewhere, or file system metadata read back)",
                mib(p.memory_max),
                p.cached_share * 100.0,
            ));
        } else if extra && !wal_noted {
            wal_noted = true;
            notes.push(format!(
                "at {:.1} MiB the device counted {r:.2} reads per transaction where the cached share predicts {e:.2} for the database's pages: in WAL mode the rest is the WAL's own (after each checkpoint SQLite rewrites the WAL from its start in frames of a page and 24 bytes, which straddle the cache's pages, so writing a frame onto an evicted page reads it first; the rollback journal, --journal delete, shows the database's misses alone)",
                mib(p.memory_max)
            ));
        }
    }
    notes
}

impl CacheEffect {
    /// A table for a person.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{} cache effect ({} jobs, scale {}, database {:.1} MiB, device {}):\n",
            self.name,
            self.jobs,
            self.scale,
            mib(self.data_bytes),
            self.device.as_deref().unwrap_or("none")
        );
        s += "  memory.max  cached  cached %   tx/s    p50       p99       reads/tx  expected  writes/tx\n";
        let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
        for p in &self.points {
            s += &format!(
                "  {:>7.1} MiB {:>6.1} MiB {:>5.0} %  {:>7.0}  {:>8}  {:>8}  {:>8}  {:>8.3}  {:>8}\n",
                mib(p.memory_max),
                mib(p.cache_bytes),
                p.cached_share * 100.0,
                p.ops_per_s,
                us(p.lat_p50_ns),
                us(p.lat_p99_ns),
                f(p.reads_per_tx),
                p.expected_reads_per_tx,
                f(p.writes_per_tx)
            );
        }
        if let Some(n) = &self.device_note {
            s += &format!("  device: no figures: {n}\n");
        }
        for p in &self.points {
            for c in &p.checks {
                s += &format!("  at {:.1} MiB: {}\n", mib(p.memory_max), c.line());
            }
        }
        for n in &self.notes {
            s += &format!("  note: {n}\n");
        }
        if self.interrupted {
            s += "  interrupted: the figures cover what ran\n";
        }
        s
    }
}

pub(crate) fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}

fn us(ns: u64) -> String {
    if ns >= 10_000_000 {
        format!("{:.1}ms", ns as f64 / 1e6)
    } else {
        format!("{:.0}µs", ns as f64 / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(share: f64, reads: f64) -> CachePoint {
        CachePoint {
            memory_max: 8 << 20,
            cache_bytes: 0,
            anon_bytes: 0,
            peak_bytes: None,
            cached_share: share,
            warm_read_bytes: 0,
            transactions: 100,
            ops_per_s: 100.0,
            lat_p50_ns: 0,
            lat_p99_ns: 0,
            reads_per_tx: Some(reads),
            read_bytes_per_tx: None,
            writes_per_tx: None,
            expected_reads_per_tx: 1.0 - share.min(1.0),
            interrupted: false,
            shmem_bytes: None,
            checks: Vec::new(),
        }
    }

    #[test]
    fn counters_that_contradict_the_cache_are_named() {
        let mut c = CacheEffect {
            data_bytes: 10 << 20,
            settings: [("journal".to_string(), "delete".into())]
                .into_iter()
                .collect(),
            points: vec![pt(1.2, 0.0), pt(0.3, 0.7)],
            ..Default::default()
        };
        let n = judge(&c, String::new());
        assert!(!n.iter().any(|x| x.contains("disagree")), "{n:?}");
        // Reads where the cache held everything; none where it held
        // little; far more than the misses of the database's pages.
        c.points = vec![pt(1.2, 0.5), pt(0.3, 0.0), pt(0.5, 3.0)];
        let n = judge(&c, String::new());
        assert_eq!(
            n.iter().filter(|x| x.contains("disagree")).count(),
            3,
            "{n:?}"
        );
        // A few reads where the cache held everything are stray ones
        // (metadata) when the point ran few transactions; not when it ran
        // many.
        c.points = vec![pt(1.2, 0.06), pt(0.3, 0.7)];
        let n = judge(&c, String::new());
        assert!(!n.iter().any(|x| x.contains("disagree")), "{n:?}");
        c.points[0].transactions = 10_000;
        let n = judge(&c, String::new());
        assert_eq!(
            n.iter().filter(|x| x.contains("disagree")).count(),
            1,
            "{n:?}"
        );
        // In WAL mode the excess is the WAL's rewrites, said once.
        c.settings.insert("journal".into(), "wal".into());
        c.points = vec![pt(1.2, 0.0), pt(0.5, 3.0), pt(0.3, 3.0)];
        let n = judge(&c, String::new());
        assert!(!n.iter().any(|x| x.contains("disagree")), "{n:?}");
        assert_eq!(
            n.iter().filter(|x| x.contains("rewrites the WAL")).count(),
            1,
            "{n:?}"
        );
    }
}
