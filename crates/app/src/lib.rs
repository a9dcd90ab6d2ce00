//! Application workloads: how much of a device's speed reaches a file
//! system and a database.
//!
//! Every other figure of ssdready is of raw block I/O. The studies this
//! project follows went further: Samsung's "System-wide Issues for Efficient
//! Use of E-SSD" ran TPC-C on MySQL, Shin's "Achieving Peak Device Throughput
//! for Random IO Workload" ran Iozone and Postmark, and Foong et al.,
//! "Towards SSD-Ready Enterprise Platforms", measured what ext3 and the
//! buffered path add. This crate runs four such workloads on any directory,
//! without root:
//!
//! * [`smallfiles`] — Postmark's model: a pool of small files in a tree,
//!   transactions of create/delete and read/append;
//! * [`sqlite`] — a TPC-B-like transaction (pgbench's) on SQLite, WAL or
//!   rollback journal, `synchronous` NORMAL or FULL, N connections;
//! * [`fsync`] — log appends each followed by `fdatasync`, what etcd and
//!   every write-ahead log do;
//! * [`pgbench`] — PostgreSQL's own benchmark on a throwaway cluster in the
//!   directory, when PostgreSQL is installed.
//!
//! Around each timed phase the block device holding the directory is read
//! from `/sys/block/X/stat` ([`device`]), giving the device's reads, writes,
//! bytes and flushes per application operation and the write amplification
//! from the bytes the application wrote to the bytes the device did.
//!
//! Each workload keeps its files in its own directory, `DIR/ssdready-NAME`,
//! marked as ssdready's; nothing outside it is touched, and it stays after
//! the run for inspection until [`clean`] removes it.

#![forbid(unsafe_code)]

pub mod cache;
pub mod cgroup;
pub mod checks;
pub mod device;
pub mod fsync;
mod options;
pub mod pgbench;
pub mod pgcache;
pub mod result;
pub mod smallfiles;
pub mod sqlite;
mod workdir;

pub use result::{AppResult, LatNs};
pub use workdir::{clean, workdir_of};

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The workloads, by the names the command line uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    SmallFiles,
    Sqlite,
    Fdatasync,
    Pgbench,
}

impl Workload {
    pub const ALL: [Workload; 4] = [
        Workload::SmallFiles,
        Workload::Sqlite,
        Workload::Fdatasync,
        Workload::Pgbench,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::SmallFiles => "small-files",
            Workload::Sqlite => "sqlite",
            Workload::Fdatasync => "fdatasync",
            Workload::Pgbench => "pgbench",
        }
    }

    pub fn parse(s: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                Error::BadInput(format!(
                    "unknown application workload '{s}' (allowed: small-files, sqlite, fdatasync, pgbench)"
                ))
            })
    }
}

/// SQLite's journal mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Journal {
    Wal,
    Delete,
}

impl Journal {
    pub fn parse(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "wal" => Ok(Journal::Wal),
            "delete" => Ok(Journal::Delete),
            _ => Err(Error::BadInput(format!(
                "option '--journal': unknown journal mode '{s}' (allowed: wal, delete)"
            ))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Journal::Wal => "wal",
            Journal::Delete => "delete",
        }
    }
}

/// SQLite's `synchronous` setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synchronous {
    Normal,
    Full,
}

impl Synchronous {
    pub fn parse(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "normal" => Ok(Synchronous::Normal),
            "full" => Ok(Synchronous::Full),
            _ => Err(Error::BadInput(format!(
                "option '--synchronous': unknown setting '{s}' (allowed: normal, full)"
            ))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Synchronous::Normal => "normal",
            Synchronous::Full => "full",
        }
    }
}

/// What a run is asked to do.
#[derive(Clone, Debug)]
pub struct Config {
    pub workload: Workload,
    /// The directory the workload's own directory is made in.
    pub directory: PathBuf,
    /// Length of the timed phase, ns.
    pub runtime_ns: u64,
    /// Concurrent workers (threads, connections, pgbench clients).
    pub jobs: u32,
    /// Size of the data set: thousands of files (small-files), pgbench
    /// scale (sqlite, pgbench: 100,000 accounts each), log size in MiB
    /// (fdatasync).
    pub scale: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Append size for fdatasync; largest file size for small-files.
    pub bs: u64,
    pub journal: Journal,
    pub synchronous: Synchronous,
    /// small-files: fsync each file after a create or an append.
    pub fsync: bool,
    /// pgbench: keep the cluster's files after a failed or interrupted run.
    pub keep: bool,
    /// sqlite, pgbench: memory limits (bytes) of the cgroup the timed
    /// phase runs in (pgbench: the server); for sqlite one limit is one
    /// run ([`cache::run_limited`]); several, or `cache_effect`, a sweep
    /// ([`cache::sweep`]).
    pub memory: Vec<u64>,
    /// sqlite, pgbench: the same workload at page caches that hold the
    /// data and that do not ([`cache::sweep`]).
    pub cache_effect: bool,
}

impl Config {
    /// The defaults of each workload, for `directory`.
    pub fn new(workload: Workload, directory: PathBuf) -> Self {
        Config {
            workload,
            directory,
            runtime_ns: 10_000_000_000,
            jobs: 1,
            scale: 1,
            seed: 0x55d_4ead,
            bs: match workload {
                Workload::Fdatasync => 4096,
                _ => 16384,
            },
            journal: Journal::Wal,
            synchronous: Synchronous::Full,
            fsync: false,
            keep: false,
            memory: Vec::new(),
            cache_effect: false,
        }
    }

    /// Bad values are refused before anything is written.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::BadInput(m));
        if self.scale == 0 || self.scale > 100_000 {
            return bad(format!(
                "option '--scale': {} is out of range (allowed: 1 to 100000)",
                self.scale
            ));
        }
        if self.jobs == 0 || self.jobs > 1024 {
            return bad(format!(
                "option '--jobs': {} is out of range (allowed: 1 to 1024)",
                self.jobs
            ));
        }
        if self.runtime_ns < 1_000_000 {
            return bad("option '--runtime': at least 1ms".into());
        }
        if self.bs == 0 || self.bs > 64 << 20 {
            return bad(format!(
                "option '--bs': {} is out of range (allowed: 1 byte to 64m)",
                self.bs
            ));
        }
        if self.workload == Workload::Fdatasync && (self.scale as u64) << 20 < self.bs {
            return bad(format!(
                "option '--bs': {} bytes do not fit in a log of --scale={} MiB",
                self.bs, self.scale
            ));
        }
        let limited = self.cache_effect || !self.memory.is_empty();
        if limited && !matches!(self.workload, Workload::Sqlite | Workload::Pgbench) {
            return bad(format!(
                "options '--memory' and '--cache-effect' apply to the sqlite and pgbench workloads, not {}",
                self.workload.name()
            ));
        }
        let (least, who) = match self.workload {
            Workload::Pgbench => (pgcache::MIN_MEMORY, "PostgreSQL's server"),
            _ => (cache::MIN_MEMORY, "the process itself"),
        };
        if let Some(m) = self.memory.iter().find(|&&m| m < least) {
            return bad(format!(
                "option '--memory': {m} bytes is too little for {who} (allowed: {} MiB or more)",
                least >> 20
            ));
        }
        Ok(())
    }
}

/// Why a workload did not give a result.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request cannot be run as given (exit code 2, nothing written).
    #[error("{0}")]
    BadInput(String),
    /// Something this machine lacks (e.g. PostgreSQL not installed).
    #[error("{0}")]
    Missing(String),
    /// A failure while running.
    #[error("{0}")]
    Runtime(String),
    /// Stopped by a signal before anything could be measured.
    #[error("interrupted before the timed phase")]
    Interrupted,
}

impl Error {
    pub(crate) fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        Error::Runtime(format!("{what} {}: {e}", path.display()))
    }
}

/// Run the workload `cfg` names in its own directory under
/// `cfg.directory`, stopping early (with the results so far) when `stop`
/// is set.
pub fn run(cfg: &Config, stop: Arc<AtomicBool>) -> Result<AppResult, Error> {
    cfg.check()?;
    match cfg.workload {
        Workload::SmallFiles => smallfiles::run(cfg, stop),
        Workload::Sqlite => sqlite::run(cfg, stop),
        Workload::Fdatasync => fsync::run(cfg, stop),
        Workload::Pgbench if !cfg.memory.is_empty() || cfg.cache_effect => Err(Error::BadInput(
            "pgbench with a memory limit is a sweep: use ssdready_app::cache::sweep".into(),
        )),
        Workload::Pgbench => pgbench::run(cfg, stop),
    }
}

/// The timed phase: workers loop while [`Phase::running`].
pub(crate) struct Phase {
    pub start: std::time::Instant,
    deadline: std::time::Instant,
    stop: Arc<AtomicBool>,
}

impl Phase {
    pub fn new(runtime_ns: u64, stop: Arc<AtomicBool>) -> Self {
        let start = std::time::Instant::now();
        Phase {
            start,
            deadline: start + std::time::Duration::from_nanos(runtime_ns),
            stop,
        }
    }
    pub fn running(&self) -> bool {
        !self.stopped() && std::time::Instant::now() < self.deadline
    }
    pub fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn elapsed_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

/// Deterministic bytes for job `job` of a run seeded with `seed`.
pub(crate) fn random_bytes(seed: u64, job: u64, len: usize) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    let mut rng =
        rand::rngs::SmallRng::seed_from_u64(seed ^ job.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}
