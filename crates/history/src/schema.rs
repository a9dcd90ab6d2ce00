//! The database's schema, versioned by `PRAGMA user_version`, and its
//! migrations. A migration is applied once, in a transaction that also sets
//! the version, so a database is always at one version whole; the
//! transaction takes the write lock first (`BEGIN IMMEDIATE`) and reads the
//! version again under it, so two ssdready processes opening an old
//! database at once migrate it once. Append a migration to change the
//! schema; never edit one that shipped.

use crate::error::Error;
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;

/// One step of the schema.
pub struct Migration {
    /// The version the database has after it.
    pub to: u32,
    /// What it changes, in words.
    pub what: &'static str,
    pub sql: &'static str,
}

/// Every migration, in order: `MIGRATIONS[i]` takes version `i` to `i + 1`.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        to: 1,
        what: "the entries table: kind, time, target, command, key figures, the full result's path",
        sql: "CREATE TABLE entries (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL CHECK (kind IN ('study', 'run')),
                unix_ms INTEGER NOT NULL,
                target TEXT NOT NULL,
                command TEXT NOT NULL,
                iops REAL,
                lat_mean_ns REAL,
                lat_p99_ns REAL,
                json_path TEXT
              );",
    },
    Migration {
        to: 2,
        what: "the platform fingerprint, the workload, CPU per I/O, delivered %, the knee, every figure as JSON; indexes by time and target",
        sql: "ALTER TABLE entries ADD COLUMN kernel TEXT;
              ALTER TABLE entries ADD COLUMN cpu_model TEXT;
              ALTER TABLE entries ADD COLUMN cpus INTEGER;
              ALTER TABLE entries ADD COLUMN vm INTEGER;
              ALTER TABLE entries ADD COLUMN workload TEXT NOT NULL DEFAULT '';
              ALTER TABLE entries ADD COLUMN cpu_ns_per_io REAL;
              ALTER TABLE entries ADD COLUMN delivered_pct REAL;
              ALTER TABLE entries ADD COLUMN knee_qd INTEGER;
              ALTER TABLE entries ADD COLUMN figures TEXT NOT NULL DEFAULT '{}';
              CREATE INDEX entries_by_time ON entries (unix_ms);
              CREATE INDEX entries_by_target ON entries (target);",
    },
    Migration {
        to: 3,
        what: "whether the study or run was interrupted (its figures partial)",
        sql: "ALTER TABLE entries ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0;",
    },
];

/// The version this ssdready writes.
pub const CURRENT_VERSION: u32 = MIGRATIONS.len() as u32;

/// The database's schema version.
pub fn version(conn: &Connection, path: &Path) -> Result<u32, Error> {
    conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))
        .map(|v| v.clamp(0, u32::MAX as i64) as u32)
        .map_err(|e| Error::sqlite(path, e))
}

/// Bring the database to [`CURRENT_VERSION`]; returns the version it had.
/// A newer database is refused, and so is a version-0 database that
/// already has tables (someone else's SQLite file).
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<u32, Error> {
    let found = version(conn, path)?;
    check_version(conn, path, found)?;
    while version(conn, path)? < CURRENT_VERSION {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| Error::sqlite(path, e))?;
        // Another process may have migrated while this one waited for the lock.
        let now = version(&tx, path)?;
        check_version(&tx, path, now)?;
        if now >= CURRENT_VERSION {
            break;
        }
        let m = &MIGRATIONS[now as usize];
        tx.execute_batch(m.sql)
            .and_then(|_| tx.pragma_update(None, "user_version", m.to))
            .and_then(|_| tx.commit())
            .map_err(|e| Error::sqlite(path, e))?;
    }
    Ok(found)
}

fn check_version(conn: &Connection, path: &Path, v: u32) -> Result<(), Error> {
    if v > CURRENT_VERSION {
        return Err(Error::TooNew {
            path: path.to_path_buf(),
            found: v,
            supported: CURRENT_VERSION,
        });
    }
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| Error::sqlite(path, e))?;
    let has_entries: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'entries'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| Error::sqlite(path, e))?;
    if (v == 0 && tables > 0) || (v > 0 && has_entries == 0) {
        return Err(Error::Foreign {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_follow_the_list_and_each_step_applies_once() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.to as usize, i + 1, "{}", m.what);
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.db");
        let mut c = Connection::open(&p).unwrap();
        assert_eq!(migrate(&mut c, &p).unwrap(), 0);
        assert_eq!(version(&c, &p).unwrap(), CURRENT_VERSION);
        // Again: nothing to do (an ALTER applied twice would fail).
        assert_eq!(migrate(&mut c, &p).unwrap(), CURRENT_VERSION);
    }

    #[test]
    fn someone_elses_sqlite_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("other.db");
        let mut c = Connection::open(&p).unwrap();
        c.execute_batch("CREATE TABLE songs (title TEXT)").unwrap();
        let e = migrate(&mut c, &p).unwrap_err();
        assert!(matches!(e, Error::Foreign { .. }), "{e}");
    }
}
