//! ssdready's memory: every study and every `run --save` recorded in an
//! embedded SQLite database, and the comparison of two results against the
//! noise seen in repeats.
//!
//! # The database
//!
//! One file, by default `$XDG_DATA_HOME/ssdready/history.db` (or
//! `~/.local/share/ssdready/history.db`; [`default_path`]), elsewhere with
//! `--db PATH`. One table, `entries`, one row per study or saved run:
//!
//! | column | type | what |
//! |---|---|---|
//! | `id` | INTEGER PRIMARY KEY AUTOINCREMENT | the history id (`ssdready compare 3 7`); never reused |
//! | `kind` | TEXT | `study` or `run` |
//! | `unix_ms` | INTEGER | when it started, ms since 1970 (UTC) |
//! | `target` | TEXT | what it measured (`emu:nvme-tlc`, `/dev/nvme0n1`, several comma-separated) |
//! | `command` | TEXT | the command line, as typed |
//! | `iops` | REAL | run: IOPS of all jobs and directions together; study: peak 4 KiB random-read IOPS |
//! | `lat_mean_ns`, `lat_p99_ns` | REAL | run: the I/O-weighted mean, the highest p99 of its jobs; study: at QD 1 |
//! | `json_path` | TEXT | the full result, a copy kept beside the database in `STEM-results/ID.json` (a study's `study.json` as it was recorded; a saved run's native JSON) |
//! | `kernel`, `cpu_model` | TEXT | the platform fingerprint (from the result's platform section) … |
//! | `cpus` | INTEGER | … CPUs online … |
//! | `vm` | INTEGER | … 1 in a virtual machine, 0 not, NULL unknown |
//! | `workload` | TEXT | the workload in words (`randread bs=4096 iodepth=1 …`; a study: its kind and targets) |
//! | `cpu_ns_per_io` | REAL | whole-system CPU per I/O (run: its first phase; study: at QD 1) |
//! | `delivered_pct` | REAL | study: the peak against the device's limit |
//! | `knee_qd` | INTEGER | study: the knee of the queue-depth curve |
//! | `interrupted` | INTEGER | 1 when the study or run was stopped before its end (its figures partial); since schema version 3 |
//! | `figures` | TEXT | JSON object: every figure the comparison knows (name → value) |
//!
//! The schema is versioned with `PRAGMA user_version` and grows by
//! migrations ([`schema::MIGRATIONS`]), each applied once in its own
//! transaction: version 1 held the key figures alone; version 2 added the
//! platform fingerprint, the workload, CPU per I/O, delivered %, the knee,
//! the figures as JSON and indexes by time and target; version 3 marks
//! interrupted entries. Opening a database
//! migrates it to the current version and keeps every row; a database from
//! a newer ssdready is refused (its rows would be misread), as is an SQLite
//! file that holds something else.
//!
//! # Comparisons
//!
//! [`figures`] reduces a result (a study's `study.json` or a run's native
//! JSON) to named figures, each with which way is better and the noise it
//! came with; [`compare`] sets two side by side and calls a difference only
//! where it exceeds that noise; [`load`] reads a result from where the
//! user named it (a directory, a file, a history id); [`outcome`] turns a
//! comparison into compare.html's table and `--baseline`'s regression
//! check; [`text`] is `ssdready history`'s table.

#![forbid(unsafe_code)]

pub mod compare;
pub mod dates;
pub mod db;
mod error;
pub mod figures;
pub mod load;
pub mod outcome;
pub mod schema;
pub mod text;

pub use db::{Entry, Filter, History, NewEntry};
pub use error::Error;
pub use figures::{Kind, Side};

use std::path::{Path, PathBuf};

/// The default database: `$XDG_DATA_HOME/ssdready/history.db` when
/// XDG_DATA_HOME is an absolute path (the XDG rule: a relative one is
/// ignored), else `$HOME/.local/share/ssdready/history.db`.
pub fn default_path() -> Result<PathBuf, Error> {
    let xdg = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let home = || {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".local/share"))
    };
    let base = xdg.or_else(home).ok_or(Error::NoDataDir)?;
    Ok(base.join("ssdready").join("history.db"))
}

/// The database path: `--db` as given, or the default.
pub fn db_path(given: Option<&Path>) -> Result<PathBuf, Error> {
    match given {
        Some(p) => Ok(p.to_path_buf()),
        None => default_path(),
    }
}

/// Where a saved run's native JSON goes: `DIR/STEM-results/` beside the
/// database `DIR/STEM.db` (so two databases in one directory never share
/// result files).
pub fn results_dir(db: &Path) -> PathBuf {
    let stem = db
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "history".into());
    db.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(format!("{stem}-results"))
}
