//! The cache effect: the same OLTP workload with its data held by the page
//! cache and not.
//!
//! Samsung's "System-wide Issues for Efficient Use of E-SSD" ran TPC-C on
//! an SSD and on a disk: while the data fit in the server's memory the SSD
//! was no faster, and the gap grew with the warehouses. Here the SQLite
//! workload ([`crate::sqlite`]) runs its timed phase inside a memory cgroup
//! ([`crate::cgroup`]) of a given limit, with SQLite's own page cache kept
//! small (`PRAGMA cache_size`, [`crate::sqlite::LIMITED_CACHE_KIB`] per
//! connection, no mmap), so that the operating system's page cache is what
//! holds the database — and what the limit limits.
//!
//! Before each timed phase the database's cached pages are dropped
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`, after a sync, so every page is
//! clean) and the files are read once from inside the group, so each run
//! starts with as much of the data cached as its memory holds: the figures
//! are the steady state, not a cold start. The device's reads per
//! transaction (`/sys/block/X/stat`) are set beside the group's own page
//! cache (`memory.stat`): where the cache holds the data they are near
//! zero; as it holds less, each transaction's random account misses it
//! about `1 − cached/data` of the time.

use crate::cache_effect::{drop_files, judge, mib, point_of, read_files, CacheEffect, CachePoint};
use crate::cgroup::{self, MemoryCgroup, Place};
use crate::config::{Config, Workload};
use crate::error::Error;
use crate::result::AppResult;
use crate::sqlite;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Room for the process's own memory (charged to the group too:
/// [`crate::MIN_MEMORY`]) above the page cache a point is meant to have.
pub const HEADROOM: u64 = 4 << 20;

/// A group joined, the data dropped from the cache and read back once.
struct Entered {
    group: MemoryCgroup,
    warm_read_bytes: u64,
    warm_ns: u64,
}

fn enter(place: &Place, limit: u64, wd: &Path, stop: &AtomicBool) -> Result<Entered, Error> {
    let mut group = MemoryCgroup::create(place, Some(limit))?;
    group.join()?;
    drop_cached(wd)?;
    let t = Instant::now();
    let warm_read_bytes = read_once(wd, stop)?;
    Ok(Entered {
        group,
        warm_read_bytes,
        warm_ns: t.elapsed().as_nanos() as u64,
    })
}

/// The workload's files, but for the marker.
fn data_files(wd: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(wd)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Drop the files' (clean) pages from the page cache.
fn drop_cached(wd: &Path) -> Result<(), Error> {
    drop_files(&data_files(wd))
}

/// Read the files once, front to back; the bytes read.
fn read_once(wd: &Path, stop: &AtomicBool) -> Result<u64, Error> {
    read_files(&data_files(wd), stop)
}

/// `--memory SIZE`: the SQLite workload with its timed phase in a memory
/// cgroup limited to `cfg.memory[0]`.
pub fn run_limited(cfg: &Config, stop: Arc<AtomicBool>) -> Result<AppResult, Error> {
    let place = cgroup::locate().map_err(|e| Error::Missing(e.to_string()))?;
    // Made (and removed) once before anything is written, so that a
    // machine that refuses it gets exit 2 and no files.
    drop(MemoryCgroup::create(&place, None)?);
    let (wd, init_ns) = sqlite::prepare(cfg, &stop)?;
    let limit = cfg.memory[0];
    let e = enter(&place, limit, &wd, &stop)?;
    let mut r = sqlite::measure(cfg, &wd, init_ns, stop)?;
    let u = e.group.usage();
    let data = r
        .counts
        .get("data_bytes")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    r.setting("memory_max", limit);
    r.setting("cgroup", e.group.describe());
    drop(e.group);
    r.count("cache_bytes", u.file_bytes);
    r.count("anon_bytes", u.anon_bytes);
    if let Some(p) = u.peak_bytes {
        r.count("peak_bytes", p);
    }
    r.count("warm_read_bytes", e.warm_read_bytes);
    r.count("warm_ns", e.warm_ns);
    r.notes.push(format!(
        "the timed phase ran in a memory cgroup limited to {:.1} MiB; at its end the group's page cache held {:.1} MiB against the database's {:.1} MiB (memory.stat), after the database was dropped from the cache and read once",
        mib(limit),
        mib(u.file_bytes),
        mib(data)
    ));
    Ok(r)
}

/// The limits a sweep uses when none are given: one that holds the data
/// with room for the WAL and the growing history, and two that hold half
/// and a quarter of it.
pub fn automatic_limits(data_bytes: u64) -> Vec<u64> {
    vec![
        2 * data_bytes + 4 * HEADROOM,
        data_bytes / 2 + HEADROOM,
        data_bytes / 4 + HEADROOM,
    ]
}

/// `--cache-effect`: the workload at each memory limit (`cfg.memory`, or
/// [`automatic_limits`]), largest first, on one database (pgbench:
/// [`crate::pgcache::sweep`]).
pub fn sweep(cfg: &Config, stop: Arc<AtomicBool>) -> Result<CacheEffect, Error> {
    cfg.check()?;
    if cfg.workload == Workload::Pgbench {
        return crate::pgcache::sweep(cfg, stop);
    }
    let place = cgroup::locate().map_err(|e| Error::Missing(e.to_string()))?;
    drop(MemoryCgroup::create(&place, None)?);
    let (wd, init_ns) = sqlite::prepare(cfg, &stop)?;
    let data_bytes = sqlite::dir_bytes(&wd);
    let mut limits = if cfg.memory.is_empty() {
        automatic_limits(data_bytes)
    } else {
        cfg.memory.clone()
    };
    limits.sort_unstable_by(|a, b| b.cmp(a));
    let mut out = CacheEffect {
        name: "sqlite".into(),
        op: "transaction".into(),
        directory: wd.display().to_string(),
        jobs: cfg.jobs,
        scale: cfg.scale,
        seed: cfg.seed,
        data_bytes,
        ..Default::default()
    };
    out.settings.insert("populate_ns".into(), init_ns.into());
    for limit in limits {
        if stop.load(Ordering::Relaxed) {
            out.interrupted = true;
            break;
        }
        let e = match enter(&place, limit, &wd, &stop) {
            Err(Error::Interrupted) => {
                out.interrupted = true;
                break;
            }
            other => other?,
        };
        let r = sqlite::measure(cfg, &wd, init_ns, stop.clone())?;
        let u = e.group.usage();
        if out.settings.len() == 1 {
            out.settings = r.settings.clone();
            out.settings.insert("populate_ns".into(), init_ns.into());
            out.settings
                .insert("cgroup".into(), e.group.describe().into());
        }
        drop(e.group);
        match (&r.device, &r.device_note) {
            (Some(d), _) => out.device = Some(d.name.clone()),
            (None, n) => out.device_note = n.clone(),
        }
        out.points
            .push(point(limit, data_bytes, e.warm_read_bytes, &u, &r));
        if r.interrupted {
            out.interrupted = true;
            break;
        }
    }
    let first = format!(
        "each point dropped the database ({:.1} MiB) from the page cache and read it once inside its group before the timed phase; SQLite's own cache was {} KiB per connection",
        mib(out.data_bytes),
        sqlite::LIMITED_CACHE_KIB
    );
    out.notes = judge(&out, first);
    Ok(out)
}

fn point(limit: u64, data: u64, warm: u64, u: &cgroup::Usage, r: &AppResult) -> CachePoint {
    point_of(limit, data, u.file_bytes, 1.0, warm, u, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MIN_MEMORY;

    #[test]
    fn automatic_limits_hold_the_data_then_half_then_a_quarter() {
        let l = automatic_limits(40 << 20);
        assert!(l[0] > 80 << 20);
        assert_eq!(l[1], (20 << 20) + HEADROOM);
        assert_eq!(l[2], (10 << 20) + HEADROOM);
        assert!(l.iter().all(|&m| m >= MIN_MEMORY));
    }
}
