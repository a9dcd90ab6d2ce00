//! `ssdready history`: the studies and saved runs recorded in the history
//! database (`ssdready_history`), newest first; and how `study` and
//! `run --save` record themselves there.
//!
//! The database is `--db PATH`, or by default
//! `$XDG_DATA_HOME/ssdready/history.db` (`~/.local/share/...`), whose
//! directory is made when a first entry is recorded. A saved run's native
//! JSON is kept beside the database (`STEM-results/ID.json`, written
//! atomically, never over another file). Recording never touches the
//! run's or study's own output, which is written first.

use crate::stdout::{out, outln};
use crate::{fail, say};
use ssdready_core::result::RunResult;
use ssdready_diagnosis::model::StudyDoc;
use ssdready_history::figures::{from_run, from_study, join_command, StudyView};
use ssdready_history::{dates, db_path, text, Error, Filter, History, Kind, NewEntry, Side};
use std::path::{Path, PathBuf};

/// The `history` command line.
#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// Only entries whose target contains this text.
    #[arg(long, value_name = "T")]
    pub target: Option<String>,
    /// Only entries started on or after: `YYYY-MM-DD[ HH:MM[:SS]]`, UTC.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only entries started on or before (a date includes its whole day).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only studies or only runs.
    #[arg(long, value_parser = ["study", "run"])]
    pub kind: Option<String>,
    /// The history database (default: $XDG_DATA_HOME/ssdready/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// The entries as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The exit code of a database error ([`Error::exit_code`]).
pub fn error_code(e: &Error) -> i32 {
    e.exit_code()
}

/// The database a study or saved run will be recorded in, checked before
/// it starts: an existing file is opened (and migrated) at once, so a file
/// that is not a history or is from a newer ssdready stops the command
/// before anything runs; a new file is only created when there is
/// something to record (bad input leaves nothing behind).
pub enum Recorder {
    Open(History),
    /// Not there yet: its directory (checked) and path.
    New(PathBuf),
}

impl Recorder {
    /// Check the database `--db` names, or the default one.
    pub fn prepare(given: Option<&Path>) -> Result<Recorder, Error> {
        let path = db_path(given)?;
        let unusable = |why: String| Error::Unusable {
            path: path.clone(),
            why,
        };
        let exists = std::fs::symlink_metadata(&path).is_ok();
        if exists {
            // A regular file only (a block device, FIFO or /dev/null is
            // refused before SQLite touches it).
            ssdready_written::vet(&path, ssdready_written::Allow::File)
                .map_err(|e| unusable(e.to_string()))?;
        }
        if given.is_some() || exists {
            // Writable now, not found read-only after the run.
            crate::output::checked(&path).map_err(|e| unusable(e.to_string()))?;
        }
        if let Some(h) = History::open_existing(&path)? {
            return Ok(Recorder::Open(h));
        }
        Ok(Recorder::New(path))
    }

    /// The database, created now if new (the default location's directory
    /// is made; a `--db` directory was checked).
    pub fn open(&mut self) -> Result<&mut History, Error> {
        if let Recorder::New(path) = self {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| Error::Io {
                    path: path.clone(),
                    what: format!("creating {}", dir.display()),
                    source: e,
                })?;
            }
            *self = Recorder::Open(History::open(path)?);
        }
        match self {
            Recorder::Open(h) => Ok(h),
            Recorder::New(_) => unreachable!("opened above"),
        }
    }
}

/// A study reduced to the history's figures, read as its study.json
/// gives it: the history reads its own view of the schema, the fields it
/// compares. An error is a document that would not read back (a figure
/// that is not a number).
pub fn study_side(doc: &StudyDoc) -> Result<Side, serde_json::Error> {
    let v = serde_json::to_value(doc)?;
    let view: StudyView = serde_json::from_value(v)?;
    Ok(from_study(&view))
}

/// Record a study (reduced: `side`) whose document was written to
/// `json`; returns its id and the database's path. A copy of the document is kept beside the
/// database (`STEM-results/ID.json`, as a saved run's), so that the id
/// always means what was recorded, whatever later happens to `json`'s
/// directory.
pub fn record_study(r: &mut Recorder, side: &Side, json: &Path) -> Result<(i64, PathBuf), Error> {
    let h = r.open()?;
    let text = std::fs::read_to_string(json).map_err(|e| Error::Io {
        path: h.path().to_path_buf(),
        what: format!("reading {}", json.display()),
        source: e,
    })?;
    let entry = NewEntry::from_side(side, side.command.clone(), None);
    let (id, _) = keep_with_id(h, &entry, &text)?;
    Ok((id, h.path().to_path_buf()))
}

/// Where `study` records itself, and the baseline it is checked against
/// (`--db`, `--baseline`), both checked before it starts.
pub struct StudyRecord {
    db: Option<Recorder>,
    base: Option<crate::compare::Baseline>,
}

impl StudyRecord {
    /// The baseline `--baseline` names, looked up in the history; the
    /// database to record the study in: none, with a warning, when the
    /// default one cannot be opened; exit 2 for a `--db` given.
    pub fn prepare(db: Option<&Path>, baseline: Option<&str>) -> Result<Self, crate::Exit> {
        let base = baseline
            .map(|b| crate::compare::baseline(b, db, Kind::Study))
            .transpose()?;
        let db = match Recorder::prepare(db) {
            Ok(h) => Some(h),
            Err(e) if db.is_some() => {
                return Err(fail(error_code(&e), &format!("option '--db': {e}")))
            }
            Err(e) => {
                say(&format!(
                    "warning: this study will not be recorded in the history: {e}"
                ));
                None
            }
        };
        Ok(StudyRecord { db, base })
    }

    /// Record the study written to `json` (unless none of its runs
    /// succeeded, exit code 1: nothing to remember; a failure to record is
    /// a warning) and check it against the baseline: 3 when a key figure
    /// got worse beyond the noise; a study that did not complete keeps its
    /// `code` and is not checked. Returns the exit code.
    pub fn remember(&mut self, doc: &StudyDoc, json: Option<&Path>, code: i32, quiet: bool) -> i32 {
        let side = study_side(doc);
        if let (Some(h), Some(json), true) = (self.db.as_mut(), json, code != 1) {
            let recorded = side
                .as_ref()
                .map_err(|e| format!("its document does not read back: {e}"))
                .and_then(|s| record_study(h, s, json).map_err(|e| e.to_string()));
            match recorded {
                Ok((id, db)) if !quiet => {
                    say(&format!("recorded as history #{id} in {}", db.display()))
                }
                Ok(_) => {}
                Err(e) => say(&format!(
                    "warning: the study was not recorded in the history: {e}"
                )),
            }
        }
        match (&self.base, &side) {
            (Some(_), _) if code != 0 => {
                say("no regression check: the study did not complete");
                code
            }
            (Some(b), Ok(s)) => crate::compare::regression_check(b, s),
            (Some(_), Err(e)) => {
                say(&format!(
                    "no regression check: the study's document does not read back: {e}"
                ));
                1
            }
            (None, _) => code,
        }
    }
}

/// Record a run, keeping its native JSON beside the database; returns the
/// id and where the JSON went.
pub fn save_run(rec: &mut Recorder, r: &RunResult) -> Result<(i64, PathBuf), Error> {
    let h = rec.open()?;
    let side = from_run(r);
    let args: Vec<String> = std::env::args().collect();
    let entry = NewEntry::from_side(&side, join_command(&args), None);
    let text = ssdready_report::json::render(r);
    keep_with_id(h, &entry, &text)
}

/// Record `entry` with `text` kept as `STEM-results/ID.json` beside the
/// database (written atomically, never over another file; the row and the
/// file's path are committed together).
fn keep_with_id(h: &mut History, entry: &NewEntry, text: &str) -> Result<(i64, PathBuf), Error> {
    let dir = ssdready_history::results_dir(h.path());
    if let Err(why) = ssdready_written::vet(&dir, ssdready_written::Allow::Dir) {
        return Err(Error::Unusable {
            path: h.path().to_path_buf(),
            why: format!("{}: {why}", dir.display()),
        });
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
        path: h.path().to_path_buf(),
        what: format!("creating {}", dir.display()),
        source: e,
    })?;
    h.insert_with_result(entry, |id| {
        // Ids are never reused within a database; a file left by an older
        // database of the same name is kept, and this one goes beside it.
        for n in 0..10 {
            let name = match n {
                0 => format!("{id}.json"),
                n => format!("{id}-{n}.json"),
            };
            let p = dir.join(name);
            match crate::output::create_new(&p, text.as_bytes()) {
                Ok(()) => return Ok(std::fs::canonicalize(&p).unwrap_or(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("writing {}: {e}", p.display())),
            }
        }
        Err(format!(
            "{} holds {id}.json to {id}-9.json already",
            dir.display()
        ))
    })
}

/// Run `ssdready history`.
pub fn command(a: HistoryArgs) -> crate::Done {
    let (since_ms, until_ms) = dates::range(a.since.as_deref(), a.until.as_deref())
        .map_err(|e| fail(2, &e.to_string()))?;
    let filter = Filter {
        target: a.target.clone(),
        since_ms,
        until_ms,
        kind: a.kind.as_deref().and_then(Kind::parse),
    };
    let path = db_path(a.db.as_deref()).map_err(|e| fail(2, &e.to_string()))?;
    let entries = match History::open_existing(&path) {
        Ok(Some(h)) => h
            .list(&filter)
            .map_err(|e| fail(error_code(&e), &e.to_string()))?,
        Ok(None) if a.db.is_some() => {
            return Err(fail(
                2,
                &format!("option '--db': {} does not exist", path.display()),
            ))
        }
        Ok(None) => Vec::new(),
        Err(e) => return Err(fail(error_code(&e), &e.to_string())),
    };
    if a.json {
        let text = serde_json::to_string_pretty(&entries).expect("entries serialise");
        return outln!("{text}");
    }
    out!("{}", text::table(&entries, &path))
}
