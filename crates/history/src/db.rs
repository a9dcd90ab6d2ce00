//! The history database: open (migrating), record, list, look up. The
//! schema is in the crate docs and [`crate::schema`].

use crate::error::Error;
use crate::figures::{Fingerprint, KeyFigures, Kind, Side};
use crate::schema;
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;
use ssdready_written::{vet, Allow};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a write waits for another ssdready holding the database.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open history database, at the current schema version.
pub struct History {
    conn: Connection,
    path: PathBuf,
    /// The version it had when opened (older ones were migrated).
    pub opened_at_version: u32,
}

/// A row to record.
#[derive(Clone, Debug)]
pub struct NewEntry {
    pub kind: Kind,
    pub unix_ms: i64,
    pub target: String,
    pub command: String,
    pub workload: String,
    pub platform: Fingerprint,
    pub key: KeyFigures,
    pub figures: BTreeMap<String, f64>,
    pub json_path: Option<PathBuf>,
    /// Stopped before its end (Ctrl-C, SIGTERM): its figures are partial.
    pub interrupted: bool,
}

impl NewEntry {
    /// The row of a reduced result, run as `command`.
    pub fn from_side(side: &Side, command: String, json_path: Option<PathBuf>) -> NewEntry {
        NewEntry {
            kind: side.kind,
            unix_ms: side.started_unix_ms as i64,
            target: side.target.clone(),
            command,
            workload: side.workload.clone(),
            platform: side.platform.clone(),
            key: side.key_figures.clone(),
            figures: side.figure_map(),
            json_path,
            interrupted: side.interrupted,
        }
    }
}

/// A recorded row. Columns an older schema lacked read back empty.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Entry {
    pub id: i64,
    pub kind: Kind,
    pub unix_ms: i64,
    /// `unix_ms` as `2026-11-22T09:15:30Z`.
    pub time: String,
    pub target: String,
    pub command: String,
    pub workload: String,
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus: Option<u32>,
    pub vm: Option<bool>,
    #[serde(flatten)]
    pub key: KeyFigures,
    pub figures: BTreeMap<String, f64>,
    pub json_path: Option<PathBuf>,
    /// Stopped before its end: its figures are partial.
    pub interrupted: bool,
}

/// Which rows to list (all given conditions hold).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// The target contains this text.
    pub target: Option<String>,
    /// Started at or after, ms since 1970.
    pub since_ms: Option<i64>,
    /// Started at or before, ms since 1970.
    pub until_ms: Option<i64>,
    pub kind: Option<Kind>,
}

const COLUMNS: &str =
    "id, kind, unix_ms, target, command, iops, lat_mean_ns, lat_p99_ns, json_path, \
     kernel, cpu_model, cpus, vm, workload, cpu_ns_per_io, delivered_pct, knee_qd, figures, interrupted";

impl History {
    /// Open the database at `path`, creating it (its directory must exist)
    /// and migrating it to the current schema.
    pub fn open(path: &Path) -> Result<History, Error> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                what: format!("directory {}", dir.display()),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        // Only ever a regular file: SQLite would write its pages over a
        // block device (which reports size 0, so it looks new), and fail
        // on a FIFO or /dev/null with a bare "disk I/O error".
        vet(path, Allow::File).map_err(|why| Error::Unusable {
            path: path.to_path_buf(),
            why: why.to_string(),
        })?;
        let mut conn = Connection::open(path).map_err(|e| Error::sqlite(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| Error::sqlite(path, e))?;
        let opened_at_version = schema::migrate(&mut conn, path)?;
        Ok(History {
            conn,
            path: path.to_path_buf(),
            opened_at_version,
        })
    }

    /// Open an existing database; None when there is no file (nothing is created).
    pub fn open_existing(path: &Path) -> Result<Option<History>, Error> {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            _ => History::open(path).map(Some),
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        Error::sqlite(&self.path, e)
    }

    /// Record a row; returns its id.
    pub fn insert(&mut self, e: &NewEntry) -> Result<i64, Error> {
        let tx = self
            .conn
            .transaction()
            .map_err(|x| Error::sqlite(&self.path, x))?;
        let id = insert_row(&tx, e).map_err(|x| Error::sqlite(&self.path, x))?;
        tx.commit().map_err(|x| Error::sqlite(&self.path, x))?;
        Ok(id)
    }

    /// Record a row whose full result is written by `save` once its id is
    /// known (a saved run's `ID.json`): the row and the file's path are
    /// committed together, and nothing is recorded when `save` fails.
    pub fn insert_with_result(
        &mut self,
        e: &NewEntry,
        save: impl FnOnce(i64) -> Result<PathBuf, String>,
    ) -> Result<(i64, PathBuf), Error> {
        let path = self.path.clone();
        let sql = |x| Error::sqlite(&path, x);
        let tx = self.conn.transaction().map_err(sql)?;
        let id = insert_row(&tx, e).map_err(sql)?;
        let file = save(id).map_err(|why| Error::Io {
            path: path.clone(),
            what: format!("saving entry {id}'s result"),
            source: std::io::Error::other(why),
        })?;
        tx.execute(
            "UPDATE entries SET json_path = ?1 WHERE id = ?2",
            params![file.to_string_lossy(), id],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok((id, file))
    }

    /// The rows that pass `f`, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<Entry>, Error> {
        let sql = format!(
            "SELECT {COLUMNS} FROM entries
             WHERE (?1 IS NULL OR instr(target, ?1) > 0)
               AND (?2 IS NULL OR unix_ms >= ?2)
               AND (?3 IS NULL OR unix_ms <= ?3)
               AND (?4 IS NULL OR kind = ?4)
             ORDER BY unix_ms DESC, id DESC"
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map(
                params![f.target, f.since_ms, f.until_ms, f.kind.map(Kind::as_str)],
                raw_row,
            )
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(self.entry(r.map_err(|e| self.err(e))?)?);
        }
        Ok(out)
    }

    /// The row `id`, if there is one.
    pub fn get(&self, id: i64) -> Result<Option<Entry>, Error> {
        let sql = format!("SELECT {COLUMNS} FROM entries WHERE id = ?1");
        let raw = self
            .conn
            .query_row(&sql, [id], raw_row)
            .optional()
            .map_err(|e| self.err(e))?;
        raw.map(|r| self.entry(r)).transpose()
    }

    fn entry(&self, r: RawRow) -> Result<Entry, Error> {
        let bad = |why: String| Error::BadRow {
            path: self.path.clone(),
            id: r.id,
            why,
        };
        let kind = Kind::parse(&r.kind).ok_or_else(|| bad(format!("kind '{}'", r.kind)))?;
        let figures =
            serde_json::from_str(&r.figures).map_err(|e| bad(format!("figures column: {e}")))?;
        Ok(Entry {
            id: r.id,
            kind,
            unix_ms: r.unix_ms,
            time: crate::dates::fmt_iso(r.unix_ms),
            target: r.target,
            command: r.command,
            workload: r.workload,
            kernel: r.kernel,
            cpu_model: r.cpu_model,
            cpus: r.cpus,
            vm: r.vm,
            key: r.key,
            figures,
            json_path: r.json_path.map(PathBuf::from),
            interrupted: r.interrupted,
        })
    }
}

/// A row as stored, before its JSON and kind are checked.
struct RawRow {
    id: i64,
    kind: String,
    unix_ms: i64,
    target: String,
    command: String,
    json_path: Option<String>,
    kernel: Option<String>,
    cpu_model: Option<String>,
    cpus: Option<u32>,
    vm: Option<bool>,
    workload: String,
    key: KeyFigures,
    figures: String,
    interrupted: bool,
}

fn raw_row(r: &Row) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        unix_ms: r.get(2)?,
        target: r.get(3)?,
        command: r.get(4)?,
        key: KeyFigures {
            iops: r.get(5)?,
            lat_mean_ns: r.get(6)?,
            lat_p99_ns: r.get(7)?,
            cpu_ns_per_io: r.get(14)?,
            delivered_pct: r.get(15)?,
            knee_qd: r.get(16)?,
        },
        json_path: r.get(8)?,
        kernel: r.get(9)?,
        cpu_model: r.get(10)?,
        cpus: r.get(11)?,
        vm: r.get(12)?,
        workload: r.get(13)?,
        figures: r.get(17)?,
        interrupted: r.get::<_, i64>(18)? != 0,
    })
}

fn insert_row(tx: &rusqlite::Transaction, e: &NewEntry) -> rusqlite::Result<i64> {
    let figures = serde_json::to_string(&e.figures).unwrap_or_else(|_| "{}".into());
    tx.execute(
        "INSERT INTO entries (kind, unix_ms, target, command, iops, lat_mean_ns, lat_p99_ns, json_path,
             kernel, cpu_model, cpus, vm, workload, cpu_ns_per_io, delivered_pct, knee_qd, figures,
             interrupted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        params![
            e.kind.as_str(),
            e.unix_ms,
            e.target,
            e.command,
            e.key.iops,
            e.key.lat_mean_ns,
            e.key.lat_p99_ns,
            e.json_path.as_ref().map(|p| p.to_string_lossy().into_owned()),
            e.platform.kernel,
            e.platform.cpu_model,
            e.platform.cpus,
            e.platform.vm,
            e.workload,
            e.key.cpu_ns_per_io,
            e.key.delivered_pct,
            e.key.knee_qd,
            figures,
            e.interrupted,
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

#[cfg(test)]
#[path = "db_tests.rs"]
mod tests;
