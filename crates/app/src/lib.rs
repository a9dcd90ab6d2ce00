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
pub mod cache_effect;
pub mod cgroup;
pub mod checks;
mod config;
pub mod device;
mod error;
pub mod fsync;
mod options;
pub mod pgbench;
pub mod pgcache;
mod phase;
pub mod result;
pub mod smallfiles;
pub mod sqlite;
mod workdir;

pub use config::{Config, Journal, Synchronous, Workload, MIN_MEMORY, MIN_SERVER_MEMORY};
pub use error::Error;
pub use result::{AppResult, LatNs};
pub use workdir::{clean, workdir_of};

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Run the workload `cfg` names in its own directory under
/// `cfg.directory`, stopping early (with the results so far) when `stop`
/// is set.
pub fn run(cfg: &Config, stop: Arc<AtomicBool>) -> Result<AppResult, Error> {
    cfg.check()?;
    match cfg.workload {
        Workload::SmallFiles => smallfiles::run(cfg, stop),
        Workload::Sqlite if !cfg.memory.is_empty() => cache::run_limited(cfg, stop),
        Workload::Sqlite => sqlite::run(cfg, stop),
        Workload::Fdatasync => fsync::run(cfg, stop),
        Workload::Pgbench if !cfg.memory.is_empty() || cfg.cache_effect => Err(Error::BadInput(
            "pgbench with a memory limit is a sweep: use ssdready_app::cache::sweep".into(),
        )),
        Workload::Pgbench => pgbench::run(cfg, stop),
    }
}
