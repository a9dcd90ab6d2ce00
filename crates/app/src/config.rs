//! What a run is asked to do ([`Config`]): the workload, its size, its
//! SQLite settings and its memory limits, with the checks that refuse bad
//! values before anything is written, and the least memory limits those
//! checks accept.

use crate::error::Error;
use std::path::PathBuf;

/// The least memory limit accepted for the SQLite workload: the process's
/// own memory (threads, SQLite's caches, buffers) is charged to the group
/// too.
pub const MIN_MEMORY: u64 = 4 << 20;
/// The least memory limit accepted for pgbench's server (its processes'
/// own memory and its shared memory are charged to the group too).
pub const MIN_SERVER_MEMORY: u64 = 16 << 20;

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
    /// run ([`crate::cache::run_limited`]); several, or `cache_effect`, a sweep
    /// ([`crate::cache::sweep`]).
    pub memory: Vec<u64>,
    /// sqlite, pgbench: the same workload at page caches that hold the
    /// data and that do not ([`crate::cache::sweep`]).
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
            Workload::Pgbench => (MIN_SERVER_MEMORY, "PostgreSQL's server"),
            _ => (MIN_MEMORY, "the process itself"),
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
