//! The cache effect for PostgreSQL: pgbench with its tables held by the
//! page cache and not.
//!
//! Samsung's "System-wide Issues for Efficient Use of E-SSD" found, under
//! TPC-C on a database server, an SSD no faster than a disk while the data
//! fit in the server's cache, and the gap growing as the data outgrew it.
//! Here the throwaway cluster of [`crate::pgbench`] runs with
//! `shared_buffers` small ([`SHARED_BUFFERS`]), so that the operating
//! system's page cache is what holds the tables, and its postmaster — with
//! every backend it forks — runs in a memory cgroup ([`crate::cgroup`]) of
//! each limit in turn.
//!
//! Each point: the server is stopped (a clean shutdown, so its files are
//! whole), every file of the cluster is dropped from the page cache, the
//! group is made and joined, pgbench's tables and indexes are read once
//! from inside it (a steady state, not a cold start), the server is
//! started there (its processes inherit the group), this process leaves
//! it, and each client runs one transaction (reading the catalogs, whose
//! first reads are not the workload's); pgbench's clients run outside, so only the server's memory is
//! charged. The device's reads per transaction (`/sys/block/X/stat`) are
//! set beside the share of the tables the group's page cache held
//! (`memory.stat`, less the server's shared memory). The server is stopped
//! and the group removed after each point — on success, failure, Ctrl-C
//! and panic (`Server`'s `Drop`).

use crate::cache_effect::{self, CacheEffect};
use crate::cgroup::{self, MemoryCgroup, Place, Usage};
use crate::config::Config;
use crate::error::Error;
use crate::pgbench::{self, Cluster};
use crate::result::AppResult;
use crate::workdir;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// PostgreSQL's own buffer pool during the sweep: small, so that the page
/// cache holds the tables.
pub const SHARED_BUFFERS: &str = "1MB";
/// Random pages of the tables a pgbench transaction reads: the account's
/// heap page and its index leaf (tellers and branches are a few hot pages).
pub const PAGES_PER_TX: f64 = 2.0;
/// The server's options for the sweep: small shared buffers, and no
/// autovacuum (its scans would read the tables in the timed phase).
const SERVER_OPTS: &str = "-c shared_buffers=1MB -c autovacuum=off";
/// Room above the server's own memory (measured at the first point) for
/// catalogs, WAL and buffers when the limits are chosen automatically.
const MARGIN: u64 = 8 << 20;

/// The cluster and the group it runs in; dropping it stops the server
/// first, then removes the group.
struct Server {
    cl: Cluster,
    group: Option<MemoryCgroup>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.cl.halt();
        if let Some(g) = self.group.take() {
            g.kill_members();
        }
    }
}

/// The files of pgbench's tables and indexes (all forks and segments),
/// from the catalog.
fn relation_files(cl: &Cluster) -> Result<Vec<PathBuf>, Error> {
    let out = cl.psql(
        "SELECT pg_relation_filepath(oid) FROM pg_class WHERE relname LIKE 'pgbench\\_%' AND relkind IN ('r', 'i') ORDER BY 1",
    )?;
    let mut files = Vec::new();
    for rel in out.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let p = cl.data.join(rel);
        let (Some(dir), Some(base)) = (p.parent(), p.file_name()) else {
            continue;
        };
        let base = base.to_string_lossy().into_owned();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let fork = n
                .strip_prefix(&base)
                .is_some_and(|r| r.is_empty() || r.starts_with('.') || r.starts_with('_'));
            if fork {
                files.push(e.path());
            }
        }
    }
    if files.is_empty() {
        return Err(Error::Runtime(format!(
            "PostgreSQL named no files for pgbench's tables (psql said: {out})"
        )));
    }
    files.sort();
    Ok(files)
}

/// Every file under `dir`.
fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => all_files(&e.path(), out),
            Ok(t) if t.is_file() => out.push(e.path()),
            _ => {}
        }
    }
}

fn bytes(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum()
}

/// `app pgbench --cache-effect`: pgbench at each memory limit
/// (`cfg.memory`, or chosen from the tables' size and the server's own
/// memory), largest first, on one cluster.
pub fn sweep(cfg: &Config, stop: Arc<AtomicBool>) -> Result<CacheEffect, Error> {
    let place = cgroup::locate().map_err(|e| Error::Missing(e.to_string()))?;
    drop(MemoryCgroup::create(&place, None)?);
    let cl = pgbench::setup(cfg, &stop, SERVER_OPTS)?;
    let mut srv = Server { cl, group: None };
    let rels = relation_files(&srv.cl)?;
    srv.cl.shut_down(&stop)?;
    let data_bytes = bytes(&rels);
    let mut limits = cfg.memory.clone();
    limits.sort_unstable_by(|a, b| b.cmp(a));
    let auto = limits.is_empty();
    if auto {
        limits.push(2 * data_bytes + 64 * (1 << 20));
    }
    let mut out = CacheEffect {
        name: "pgbench".into(),
        op: "transaction".into(),
        directory: srv.cl.wd.display().to_string(),
        jobs: cfg.jobs,
        scale: cfg.scale,
        seed: cfg.seed,
        data_bytes,
        ..Default::default()
    };
    out.settings
        .insert("shared_buffers".into(), SHARED_BUFFERS.into());
    out.settings.insert("autovacuum".into(), "off".into());
    out.settings
        .insert("pages_per_tx".into(), PAGES_PER_TX.into());
    let mut i = 0;
    while i < limits.len() {
        if stop.load(Ordering::Relaxed) {
            out.interrupted = true;
            break;
        }
        let limit = limits[i];
        let (r, u, warm) = match point(&mut srv, &place, limit, &rels, cfg, &stop) {
            Err(Error::Interrupted) => {
                out.interrupted = true;
                break;
            }
            other => other?,
        };
        if i == 0 {
            out.settings.extend(r.settings.clone());
        }
        match (&r.device, &r.device_note) {
            (Some(d), _) => out.device = Some(d.name.clone()),
            (None, n) => out.device_note = n.clone(),
        }
        // The group's page cache, less the server's shared memory (its
        // buffers and tables, counted as cache too).
        let cached = u.file_bytes.saturating_sub(u.shmem_bytes);
        let mut p = cache_effect::point_of(limit, data_bytes, cached, PAGES_PER_TX, warm, &u, &r);
        p.shmem_bytes = Some(u.shmem_bytes);
        out.points.push(p);
        if auto && i == 0 {
            // Half and a quarter of the tables, above what the server
            // itself held at the first point.
            let own = u.anon_bytes + u.shmem_bytes + MARGIN;
            limits.push(data_bytes / 2 + own);
            limits.push(data_bytes / 4 + own);
        }
        if r.interrupted {
            out.interrupted = true;
            break;
        }
        i += 1;
    }
    let first = format!(
        "each point stopped the server, dropped the cluster's files from the page cache, read pgbench's tables and indexes ({:.1} MiB) once inside its group and started the server there; shared_buffers was {SHARED_BUFFERS}, autovacuum off; the cached share is the group's page cache less its shared memory (memory.stat), over the tables' bytes, and each transaction reads about {PAGES_PER_TX} random pages of them (the account's heap page and index leaf)",
        cache_effect::mib(data_bytes)
    );
    out.notes = cache_effect::judge(&out, first);
    srv.cl.keep_files = cfg.keep || !out.interrupted;
    Ok(out)
}

/// One point: the server started in a group limited to `limit`, pgbench
/// run, the group's memory read, the server stopped and the group removed.
fn point(
    srv: &mut Server,
    place: &Place,
    limit: u64,
    rels: &[PathBuf],
    cfg: &Config,
    stop: &Arc<AtomicBool>,
) -> Result<(AppResult, Usage, u64), Error> {
    workdir::sync_fs(&srv.cl.wd)?;
    let mut all = Vec::new();
    all_files(&srv.cl.data, &mut all);
    cache_effect::drop_files(&all)?;
    let mut g = MemoryCgroup::create(place, Some(limit))?;
    g.join()?;
    srv.group = Some(g);
    let warm = cache_effect::read_files(rels, stop)?;
    srv.cl.start(stop)?;
    let g = srv.group.as_mut().expect("joined above");
    g.leave()?;
    // A first transaction per client reads the catalogs its statements
    // need (dropped above), which are not the tables' reads.
    srv.cl.warm_up(cfg.jobs, stop)?;
    let measured = pgbench::measure(cfg, &srv.cl, stop.clone());
    let g = srv.group.as_ref().expect("joined above");
    let (u, ooms) = (g.usage(), g.oom_kills());
    let mut r = measured.map_err(|e| match e {
        Error::Runtime(m) if ooms > 0 => Error::Runtime(format!(
            "{m}; the kernel's OOM killer stopped {ooms} server process(es): a memory limit of {:.1} MiB is too small for PostgreSQL itself (it held {:.1} MiB of its own and shared memory)",
            cache_effect::mib(limit),
            cache_effect::mib(u.anon_bytes + u.shmem_bytes)
        )),
        e => e,
    })?;
    r.setting("cgroup", g.describe());
    if r.interrupted {
        return Ok((r, u, warm));
    }
    match srv.cl.shut_down(stop) {
        // Stopped by a signal: the server and the group are left to the
        // guard, and the sweep ends with this point.
        Err(Error::Interrupted) => return Ok((r, u, warm)),
        other => other?,
    }
    if let Some(g) = srv.group.take() {
        g.kill_members();
    }
    Ok((r, u, warm))
}
