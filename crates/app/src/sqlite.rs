//! OLTP on SQLite: pgbench's TPC-B-like transaction.
//!
//! The database holds pgbench's four tables at the scale asked for
//! (`scale` branches, 10 tellers and 100,000 accounts per branch, and the
//! `history` table). A transaction updates one account's balance, reads it
//! back, updates a teller's and a branch's, and inserts a row into
//! `history` — one row per committed transaction, so the database itself
//! counts what the workload claims.
//!
//! `jobs` connections run transactions concurrently; SQLite has one writer
//! at a time, so each takes the write lock with `BEGIN IMMEDIATE` and waits
//! for it (in 20 ms steps, looking at the stop flag between). The journal
//! is WAL or the rollback journal (`delete`), and `synchronous` NORMAL or
//! FULL: with WAL and NORMAL a commit does not sync at all (only
//! checkpoints do), with FULL each commit syncs the WAL; with the rollback
//! journal each commit syncs the journal and the database.

use crate::checks::Check;
use crate::config::{Config, Workload};
use crate::error::Error;
use crate::phase::Phase;
use crate::result::AppResult;
use crate::{device, workdir};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rusqlite::{params, Connection, ErrorCode};
use ssdready_core::hist::Histogram;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Accounts per unit of scale (pgbench's `naccounts`).
pub const ACCOUNTS: u64 = 100_000;
/// Tellers per unit of scale.
pub const TELLERS: u64 = 10;
/// The database's file name in the workload's directory.
pub const DB_FILE: &str = "bench.db";

const FILLER: &str =
    "                                                                                    ";

#[derive(Default)]
struct JobOut {
    lat: Histogram,
    commit_lat: Histogram,
    transactions: u64,
    busy_waits: u64,
    /// When the first and the last transaction's history row was inserted.
    first_stamp: Option<Instant>,
    last_stamp: Option<Instant>,
    error: Option<String>,
}

fn db_err(what: &str, e: rusqlite::Error) -> Error {
    Error::Runtime(format!("SQLite, {what}: {e}"))
}

/// Run the SQLite OLTP workload, with no memory limit (under one, when
/// `cfg.memory` names limits, [`crate::run`] runs
/// [`crate::cache::run_limited`] instead).
pub fn run(cfg: &Config, stop: Arc<AtomicBool>) -> Result<AppResult, Error> {
    let (wd, init_ns) = prepare(cfg, &stop)?;
    measure(cfg, &wd, init_ns, stop)
}

/// Make the workload's directory and its database; the time it took, ns.
pub(crate) fn prepare(cfg: &Config, stop: &AtomicBool) -> Result<(PathBuf, u64), Error> {
    let wd = workdir::prepare(&cfg.directory, Workload::Sqlite)?;
    let db = wd.join(DB_FILE);
    let t_init = Instant::now();
    populate(&db, cfg, stop)?;
    let init_ns = t_init.elapsed().as_nanos() as u64;
    workdir::sync_fs(&wd)?;
    Ok((wd, init_ns))
}

/// Every job's transactions on a thread of its own until the phase ends.
fn run_workers(cfg: &Config, db: &Path, phase: &Phase) -> Vec<JobOut> {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..cfg.jobs as u64)
            .map(|j| s.spawn(move || worker(db, j, cfg, phase)))
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// The jobs' figures summed.
struct Totals {
    lat: Histogram,
    commit_lat: Histogram,
    tx: u64,
    busy: u64,
    /// How much of the window the rows' stamps leave out at its ends.
    edge_ns: u64,
}

/// The jobs' figures summed, or the first job's error.
fn totals(outs: &[JobOut], elapsed: u64) -> Result<Totals, Error> {
    let (mut lat, mut commit_lat) = (Histogram::new(), Histogram::new());
    let (mut tx, mut busy) = (0, 0);
    let first = outs.iter().filter_map(|o| o.first_stamp).min();
    let last = outs.iter().filter_map(|o| o.last_stamp).max();
    // How much of the window the rows' stamps leave out at its ends.
    let edge_ns = match (first, last) {
        (Some(a), Some(b)) => elapsed.saturating_sub((b - a).as_nanos() as u64),
        _ => elapsed,
    };
    for o in outs {
        if let Some(e) = &o.error {
            return Err(Error::Runtime(e.clone()));
        }
        lat.merge(&o.lat);
        commit_lat.merge(&o.commit_lat);
        tx += o.transactions;
        busy += o.busy_waits;
    }
    Ok(Totals {
        lat,
        commit_lat,
        tx,
        busy,
        edge_ns,
    })
}

/// The timed phase on the database in `wd`, with the device's counters
/// around it.
pub(crate) fn measure(
    cfg: &Config,
    wd: &Path,
    init_ns: u64,
    stop: Arc<AtomicBool>,
) -> Result<AppResult, Error> {
    let db = wd.join(DB_FILE);
    let data_bytes = dir_bytes(wd);
    let last_hid = history_rows(&db, 0)
        .map_err(|e| db_err("counting history", e))?
        .last_hid;
    let mut window = device::Window::new(wd);
    window.begin();
    let phase = Phase::new(cfg.runtime_ns, stop);
    let outs = run_workers(cfg, &db, &phase);
    let elapsed = phase.elapsed_ns();
    let t_sync = Instant::now();
    workdir::sync_fs(wd)?;
    let sync_ns = t_sync.elapsed().as_nanos() as u64;
    let Totals {
        lat,
        commit_lat,
        tx,
        busy,
        edge_ns,
    } = totals(&outs, elapsed)?;
    // The bytes SQLite was handed: one history row and three updated rows
    // per transaction are what the application changed; the pages SQLite
    // writes are the file system's input, counted by the device.
    let dev = window.end(tx, 0);
    let history = history_rows(&db, last_hid).map_err(|e| db_err("counting history", e))?;
    let mut r = AppResult {
        name: Workload::Sqlite.name().into(),
        op: "transaction".into(),
        directory: wd.display().to_string(),
        jobs: cfg.jobs,
        scale: cfg.scale,
        seed: cfg.seed,
        interrupted: phase.stopped(),
        ..Default::default()
    };
    r.setting("journal", cfg.journal.name());
    r.setting("synchronous", cfg.synchronous.name());
    r.setting("sqlite_version", rusqlite::version());
    if let Some(kib) = page_cache_kib(cfg) {
        r.setting("sqlite_cache_kib", kib);
    }
    r.finish(elapsed, tx, &lat, dev);
    r.count("transactions", tx);
    r.count("history_rows", history.rows);
    for c in checks(tx, elapsed, edge_ns, &history) {
        r.check(c);
    }
    r.count("accounts", ACCOUNTS * cfg.scale as u64);
    r.count("tellers", TELLERS * cfg.scale as u64);
    r.count("branches", cfg.scale);
    r.count("data_bytes", data_bytes);
    r.count("busy_waits", busy);
    r.count("populate_ns", init_ns);
    r.count("final_sync_ns", sync_ns);
    r.count(
        "commit_lat_ns",
        serde_json::to_value(crate::result::LatNs::of(&commit_lat)).expect("serialises"),
    );
    r.notes.push(format!(
        "the database's files were {:.1} MiB before the run; the device's figures include a sync of the file system after the timed phase ({:.1} ms, not in the transaction rate)",
        data_bytes as f64 / (1 << 20) as f64,
        sync_ns as f64 / 1e6
    ));
    Ok(r)
}

/// SQLite's own page cache per connection, KiB, when the page cache is
/// what is being limited: small, so that the OS's cache is what holds
/// the data (None: SQLite's default, 2,000 KiB).
pub const LIMITED_CACHE_KIB: u32 = 256;

fn page_cache_kib(cfg: &Config) -> Option<u32> {
    (!cfg.memory.is_empty() || cfg.cache_effect).then_some(LIMITED_CACHE_KIB)
}

/// Apply the journal mode and `synchronous` to a connection.
fn configure(c: &Connection, cfg: &Config) -> Result<(), Error> {
    let mode: String = c
        .query_row(
            &format!("PRAGMA journal_mode={}", cfg.journal.name()),
            [],
            |r| r.get(0),
        )
        .map_err(|e| db_err("setting the journal mode", e))?;
    if !mode.eq_ignore_ascii_case(cfg.journal.name()) {
        return Err(Error::Runtime(format!(
            "SQLite kept journal mode '{mode}' instead of '{}' (the file system may not support it)",
            cfg.journal.name()
        )));
    }
    c.execute_batch(&format!("PRAGMA synchronous={}", cfg.synchronous.name()))
        .map_err(|e| db_err("setting synchronous", e))?;
    if let Some(kib) = page_cache_kib(cfg) {
        c.execute_batch(&format!("PRAGMA cache_size=-{kib}; PRAGMA mmap_size=0"))
            .map_err(|e| db_err("setting cache_size", e))?;
    }
    c.busy_timeout(Duration::from_millis(20))
        .map_err(|e| db_err("setting the busy timeout", e))
}

/// Make pgbench's tables and fill them (one transaction, so this is quick).
fn populate(db: &Path, cfg: &Config, stop: &AtomicBool) -> Result<(), Error> {
    let mut c = Connection::open(db).map_err(|e| db_err("opening the database", e))?;
    configure(&c, cfg)?;
    c.execute_batch(
        "CREATE TABLE pgbench_branches(bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE pgbench_tellers(tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, tbalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE pgbench_accounts(aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, abalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE history(hid INTEGER PRIMARY KEY, tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TEXT, filler TEXT);",
    )
    .map_err(|e| db_err("making the tables", e))?;
    let scale = cfg.scale as u64;
    let tx = c.transaction().map_err(|e| db_err("populating", e))?;
    {
        let ins = |sql: &str, n: u64, per: u64| -> Result<(), Error> {
            let mut st = tx.prepare(sql).map_err(|e| db_err("populating", e))?;
            for id in 1..=n {
                if id % 10_000 == 0 && stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return Err(Error::Interrupted);
                }
                st.execute(params![id as i64, ((id - 1) / per + 1) as i64, FILLER])
                    .map_err(|e| db_err("populating", e))?;
            }
            Ok(())
        };
        ins("INSERT INTO pgbench_branches VALUES(?1, 0, ?3)", scale, 1)?;
        ins(
            "INSERT INTO pgbench_tellers VALUES(?1, ?2, 0, ?3)",
            TELLERS * scale,
            TELLERS,
        )?;
        ins(
            "INSERT INTO pgbench_accounts VALUES(?1, ?2, 0, ?3)",
            ACCOUNTS * scale,
            ACCOUNTS,
        )?;
    }
    tx.commit().map_err(|e| db_err("populating", e))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

fn worker(db: &Path, job: u64, cfg: &Config, phase: &Phase) -> JobOut {
    let mut out = JobOut::default();
    if let Err(e) = transactions(db, job, cfg, phase, &mut out) {
        out.error = Some(e.to_string());
    }
    out
}

fn transactions(
    db: &Path,
    job: u64,
    cfg: &Config,
    phase: &Phase,
    out: &mut JobOut,
) -> Result<(), Error> {
    let c = Connection::open(db).map_err(|e| db_err("opening the database", e))?;
    configure(&c, cfg)?;
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ (job + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let scale = cfg.scale as u64;
    while phase.running() {
        let aid = rng.random_range(1..=ACCOUNTS * scale) as i64;
        let tid = rng.random_range(1..=TELLERS * scale) as i64;
        let bid = rng.random_range(1..=scale) as i64;
        let delta: i64 = rng.random_range(-5000..=5000);
        let t0 = Instant::now();
        // Wait for the write lock, looking at the stop flag every 20 ms.
        loop {
            match c.execute_batch("BEGIN IMMEDIATE") {
                Ok(()) => break,
                Err(e) if is_busy(&e) => {
                    out.busy_waits += 1;
                    if !phase.running() {
                        return Ok(());
                    }
                }
                Err(e) => return Err(db_err("BEGIN", e)),
            }
        }
        let body = || -> rusqlite::Result<()> {
            c.prepare_cached(
                "UPDATE pgbench_accounts SET abalance = abalance + ?1 WHERE aid = ?2",
            )?
            .execute(params![delta, aid])?;
            let _bal: i64 = c
                .prepare_cached("SELECT abalance FROM pgbench_accounts WHERE aid = ?1")?
                .query_row(params![aid], |r| r.get(0))?;
            c.prepare_cached("UPDATE pgbench_tellers SET tbalance = tbalance + ?1 WHERE tid = ?2")?
                .execute(params![delta, tid])?;
            c.prepare_cached(
                "UPDATE pgbench_branches SET bbalance = bbalance + ?1 WHERE bid = ?2",
            )?
            .execute(params![delta, bid])?;
            c.prepare_cached(
                "INSERT INTO history(tid, bid, aid, delta, mtime) VALUES(?1, ?2, ?3, ?4, strftime('%Y-%m-%d %H:%M:%f', 'now'))",
            )?
            .execute(params![tid, bid, aid, delta])?;
            Ok(())
        };
        if let Err(e) = body() {
            let _ = c.execute_batch("ROLLBACK");
            return Err(db_err("a transaction", e));
        }
        let tc = Instant::now();
        out.first_stamp.get_or_insert(tc);
        out.last_stamp = Some(tc);
        if let Err(e) = c.execute_batch("COMMIT") {
            let _ = c.execute_batch("ROLLBACK");
            return Err(db_err("COMMIT", e));
        }
        let end = Instant::now();
        out.commit_lat.record((end - tc).as_nanos() as u64);
        out.lat.record((end - t0).as_nanos() as u64);
        out.transactions += 1;
    }
    Ok(())
}

/// The `history` rows added after row `after`: how many, the last row's
/// id, and the time between the first and the last (SQLite's own clock,
/// ms resolution).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct History {
    pub rows: u64,
    pub last_hid: i64,
    pub span_ns: u64,
}

fn history_rows(db: &Path, after: i64) -> rusqlite::Result<History> {
    let c = Connection::open(db)?;
    c.query_row(
        "SELECT count(*), coalesce(max(hid), ?1), \
         coalesce((julianday(max(mtime)) - julianday(min(mtime))) * 86400000.0, 0) \
         FROM history WHERE hid > ?1",
        params![after],
        |r| {
            Ok(History {
                rows: r.get::<_, i64>(0)? as u64,
                last_hid: r.get(1)?,
                span_ns: (r.get::<_, f64>(2)?.max(0.0) * 1e6) as u64,
            })
        },
    )
}

/// The transactions counted and their rate, against the rows SQLite
/// committed to `history` and the rate their timestamps give; `edge_ns`:
/// the part of the window before the first row's INSERT and after the
/// last's, by this process's clock.
pub(crate) fn checks(tx: u64, elapsed_ns: u64, edge_ns: u64, h: &History) -> Vec<Check> {
    let mut v = vec![Check::new(
        "history_rows",
        "transactions committed",
        tx as f64,
        "rows SQLite committed to history",
        h.rows as f64,
        0.0,
    )
    .with_note("a transaction counted that did not commit, or one committed that was not counted")];
    let ours = if elapsed_ns > 0 {
        tx as f64 * 1e9 / elapsed_ns as f64
    } else {
        0.0
    };
    if let Some(theirs) = crate::checks::span_rate(h.rows, h.span_ns) {
        // The rows' stamps span the window less its edges (and SQLite's
        // clock has 1 ms steps).
        let tol = crate::checks::rate_tolerance(tx, edge_ns + 2_000_000, elapsed_ns);
        v.push(
            Check::new(
                "history_rate",
                "transactions/s",
                ours,
                "history rows over their timestamps' span (SQLite's clock)",
                theirs,
                ours * tol,
            )
            .with_note("the rate counted here is not the rate at which SQLite stamped the rows"),
        );
    }
    v
}

/// Bytes of the files in `dir` (the database, its journal or WAL).
pub(crate) fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_that_contradicts_the_count_is_named() {
        // 1,000 transactions in 1 s; the rows stamped over 0.999 s.
        let h = History {
            rows: 1000,
            last_hid: 1000,
            span_ns: 999_000_000,
        };
        let c = checks(1000, 1_000_000_000, 1_000_000, &h);
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|c| c.agree), "{c:?}");
        // A row missing; the rows stamped over half the time (twice the
        // rate counted).
        let h = History {
            rows: 999,
            last_hid: 999,
            span_ns: 500_000_000,
        };
        let c = checks(1000, 1_000_000_000, 1_000_000, &h);
        assert!(c.iter().all(|c| !c.agree), "{c:?}");
    }

    #[test]
    fn history_rows_and_their_span_are_read_from_the_database() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join(DB_FILE);
        let c = Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE history(hid INTEGER PRIMARY KEY, tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TEXT, filler TEXT);
             INSERT INTO history(mtime) VALUES('2026-11-23 10:00:00.000');
             INSERT INTO history(mtime) VALUES('2026-11-23 10:00:00.250');
             INSERT INTO history(mtime) VALUES('2026-11-23 10:00:01.500');",
        )
        .unwrap();
        let h = history_rows(&db, 0).unwrap();
        assert_eq!((h.rows, h.last_hid), (3, 3));
        assert!(
            (h.span_ns as i64 - 1_500_000_000).abs() < 1_000_000,
            "{h:?}"
        );
        let h = history_rows(&db, 1).unwrap();
        assert_eq!(h.rows, 2);
        assert!(
            (h.span_ns as i64 - 1_250_000_000).abs() < 1_000_000,
            "{h:?}"
        );
        assert_eq!(history_rows(&db, 3).unwrap().last_hid, 3);
    }
}
