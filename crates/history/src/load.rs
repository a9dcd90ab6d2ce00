//! A result read from where the user named it: a study directory (its
//! `study.json`), a JSON file (a `study.json` or a run's native JSON) or a
//! history id (the copy kept beside the database). Naming something that
//! is none of these is bad input, said in one line with what is allowed.

use crate::compare::Origin;
use crate::db::History;
use crate::error::Error;
use crate::figures::{Document, Kind, Side};
use std::path::{Path, PathBuf};

/// A result and where it came from.
pub struct Loaded {
    pub origin: Origin,
    pub doc: Document,
    /// The JSON text read: the whole document, for a reader of more than
    /// the history reads of it (a study's report).
    pub text: String,
}

/// Why a result could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// What was named is not a result (exit code 2).
    #[error("{0}")]
    BadInput(String),
    /// The history database failed ([`Error::exit_code`]).
    #[error(transparent)]
    History(#[from] Error),
}

impl LoadError {
    /// The process exit code this error ends with.
    pub fn exit_code(&self) -> i32 {
        match self {
            LoadError::BadInput(_) => 2,
            LoadError::History(e) => e.exit_code(),
        }
    }
}

/// The largest JSON file read (a long full study is tens of MB).
const MAX_JSON_BYTES: u64 = 1 << 30;

const ALLOWED: &str =
    "allowed: a study directory, a study.json or a run's native JSON, or a history id";

/// Why a result file could not be read; each message starts with its
/// path.
#[derive(Debug, thiserror::Error)]
enum JsonFileError {
    #[error("{}: {err}", .path.display())]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{} is not a regular file", .path.display())]
    NotRegular { path: PathBuf },
    #[error("{} is larger than 1 GiB", .path.display())]
    TooLarge { path: PathBuf },
    #[error("{}: {why}", .path.display())]
    Document {
        path: PathBuf,
        why: crate::figures::DocumentError,
    },
}

fn read_json(path: &Path) -> Result<(Document, String), JsonFileError> {
    let io = |err| JsonFileError::Io {
        path: path.to_path_buf(),
        err,
    };
    let md = std::fs::metadata(path).map_err(io)?;
    if !md.is_file() {
        return Err(JsonFileError::NotRegular {
            path: path.to_path_buf(),
        });
    }
    let too_large = || JsonFileError::TooLarge {
        path: path.to_path_buf(),
    };
    if md.len() > MAX_JSON_BYTES {
        return Err(too_large());
    }
    // Bounded by bytes read too: the file may grow after the check.
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| {
            use std::io::Read;
            f.take(MAX_JSON_BYTES + 1).read_to_string(&mut text)
        })
        .map_err(io)?;
    if text.len() as u64 > MAX_JSON_BYTES {
        return Err(too_large());
    }
    let doc = Document::parse(&text).map_err(|why| JsonFileError::Document {
        path: path.to_path_buf(),
        why,
    })?;
    Ok((doc, text))
}

/// Read what `given` names; ids are looked up in the database `db` (or
/// the default one).
pub fn load(given: &str, db: Option<&Path>) -> Result<Loaded, LoadError> {
    let bad = LoadError::BadInput;
    let p = Path::new(given);
    if p.exists() {
        let file = if p.is_dir() {
            let f = p.join("study.json");
            if !f.is_file() {
                return Err(bad(format!(
                    "{given} is a directory without a study.json ({ALLOWED})"
                )));
            }
            f
        } else {
            p.to_path_buf()
        };
        let (doc, text) = read_json(&file).map_err(|e| bad(e.to_string()))?;
        return Ok(Loaded {
            origin: Origin {
                given: given.into(),
                path: Some(file),
                history_id: None,
            },
            doc,
            text,
        });
    }
    let Ok(id) = given.parse::<i64>() else {
        return Err(bad(format!(
            "'{given}' is neither a file, a directory nor a history id ({ALLOWED})"
        )));
    };
    let path = crate::db_path(db).map_err(|e| bad(e.to_string()))?;
    let Some(h) = History::open_existing(&path)? else {
        return Err(bad(format!(
            "history id {id}: there is no history database at {} (give --db, or a file)",
            path.display()
        )));
    };
    let e = h.get(id)?.ok_or_else(|| {
        bad(format!(
            "history id {id}: no such entry in {} (ssdready history lists them)",
            path.display()
        ))
    })?;
    let file: PathBuf = e.json_path.ok_or_else(|| {
        bad(format!(
            "history id {id}: the entry has no saved result to compare"
        ))
    })?;
    let (doc, text) =
        read_json(&file).map_err(|m| bad(format!("history id {id}: its result {m}")))?;
    Ok(Loaded {
        origin: Origin {
            given: given.into(),
            path: Some(file),
            history_id: Some(id),
        },
        doc,
        text,
    })
}

/// A baseline for `--baseline`: a result of the same kind as what is
/// about to run.
pub struct Baseline {
    pub origin: Origin,
    pub side: Side,
}

/// Read the baseline `given` of a `kind`.
pub fn baseline(given: &str, db: Option<&Path>, kind: Kind) -> Result<Baseline, LoadError> {
    let l = load(given, db)?;
    let side = l.doc.side();
    if side.kind != kind {
        return Err(LoadError::BadInput(format!(
            "{given} is a {}; the baseline of a {} is a {}",
            side.kind.as_str(),
            kind.as_str(),
            kind.as_str()
        )));
    }
    Ok(Baseline {
        origin: l.origin,
        side,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_result_is_bad_input_naming_what_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let e = load(dir.path().to_str().unwrap(), None).err().unwrap();
        assert!(e.to_string().contains("without a study.json"), "{e}");
        assert_eq!(e.exit_code(), 2);
        let e = load("no-such-thing", None).err().unwrap();
        assert!(e.to_string().contains(ALLOWED), "{e}");
        let f = dir.path().join("x.json");
        std::fs::write(&f, "{\"schema\": \"something else\"}").unwrap();
        let e = load(f.to_str().unwrap(), None).err().unwrap();
        assert!(e.to_string().starts_with(f.to_str().unwrap()), "{e}");
        let db = dir.path().join("none.db");
        let e = load("7", Some(&db)).err().unwrap();
        assert!(e.to_string().contains("no history database"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
