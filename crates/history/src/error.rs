//! What can go wrong with the history database ([`Error`]), below the
//! database, its schema and the loading of results, which all return it.

use std::path::{Path, PathBuf};

/// What can go wrong with the history database.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite refused something (locked, disk full, corrupt, read-only, …).
    #[error("history database {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The file is not an SQLite database at all.
    #[error(
        "{path} is not an SQLite database (give --db a new file or an ssdready history database)"
    )]
    NotADatabase { path: PathBuf },
    /// An SQLite database whose pages are damaged (truncated, overwritten).
    #[error("history database {path} is damaged (SQLite: {why}); give --db another file, or restore this one from a copy")]
    Damaged { path: PathBuf, why: String },
    /// Not a file the database may live in (a block device, a FIFO, a
    /// character device, a directory), or one that cannot be written.
    #[error("history database {path}: {why}")]
    Unusable { path: PathBuf, why: String },
    /// An SQLite database that holds something else.
    #[error("{path} is an SQLite database but not ssdready's history (it has tables and no schema version; give --db another file)")]
    Foreign { path: PathBuf },
    /// Written by a newer ssdready: its rows would be misread.
    #[error("history database {path} has schema version {found}, newer than this ssdready's {supported}: use a newer ssdready, or another --db")]
    TooNew {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// No directory to keep the database in.
    #[error(
        "no data directory for the history: neither XDG_DATA_HOME nor HOME is set (give --db PATH)"
    )]
    NoDataDir,
    /// The database's directory cannot be made or used.
    #[error("history database {path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// A stored row does not read back (a damaged figures column, a bad kind).
    #[error("history database {path}: entry {id}: {why}")]
    BadRow { path: PathBuf, id: i64, why: String },
}

impl Error {
    /// The exit code of a database error: 2 when the file named is wrong
    /// (not a database, someone else's, newer, nowhere to put it), 1 when
    /// SQLite failed on a good one (locked, read-only, full).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Sqlite { .. } | Error::BadRow { .. } => 1,
            _ => 2,
        }
    }

    pub(crate) fn sqlite(path: &Path, source: rusqlite::Error) -> Error {
        let not_db = matches!(
            &source,
            rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::NotADatabase
        );
        let damaged = matches!(
            &source,
            rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::DatabaseCorrupt
        );
        if not_db {
            Error::NotADatabase {
                path: path.to_path_buf(),
            }
        } else if damaged {
            Error::Damaged {
                path: path.to_path_buf(),
                why: source.to_string(),
            }
        } else {
            Error::Sqlite {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}
