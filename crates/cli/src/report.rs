//! The HTML report on disk: `DIR/report.html`, written beside the JSON it
//! is rendered from — by every `ssdready study` (beside `study.json`), by
//! `ssdready run --report DIR` (beside the run's native JSON,
//! `result.json`), by every `ssdready characterize` (beside
//! `characterize.json`) — and re-rendered from that JSON alone by
//! `ssdready report DIR`. Every file is written atomically (a temporary
//! file, fsync, rename); the page is rendered from the JSON text itself,
//! so a re-render gives the same bytes. `ssdready report --rejudge DIR`
//! judges a recorded study again with this build's rules
//! ([`ssdready_diagnosis::rejudged`]) and rewrites its JSON and report;
//! a job study's (`job-study.json`, [`ssdready_study::rejudge_job`]), what
//! holds the job, in its JSON. A study's files, the report among them, are
//! written by [`write_outputs`] in the order the study gives.

use crate::fail;
use crate::stdout::outln;
use ssdready_report::html;
use ssdready_study::outputs::{Body, Need, Output};
use std::path::{Path, PathBuf};

/// The report's file name.
pub const REPORT: &str = "report.html";
/// The JSON a study writes.
pub const STUDY_JSON: &str = "study.json";
/// The JSON `run --report` writes beside its report.
pub const RUN_JSON: &str = "result.json";
/// The JSON `characterize` writes beside its report.
pub const CHARACTERIZE_JSON: &str = "characterize.json";
/// The JSON `study --job` writes.
pub const JOB_JSON: &str = "job-study.json";

/// The largest JSON document read (a study of hours is a few MiB).
const MAX_JSON_BYTES: u64 = 1 << 30;

/// Check that `dir` can take the report's files: it is a directory, or a
/// new one whose parent exists, and files can be created where they go.
/// `what` names the option (`option '--output'`).
pub fn check_dir(dir: &Path, what: &str, file: &str) -> Result<(), String> {
    ssdready_written::vet(dir, ssdready_written::Allow::Dir)
        .map_err(|why| format!("{what}: {}: {why}", dir.display()))?;
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() && !parent.is_dir() {
        return Err(format!(
            "{what}: directory {} does not exist",
            parent.display()
        ));
    }
    // Checked now rather than after the work (the directory itself is made
    // only when there is something to write).
    let probe = if dir.is_dir() {
        dir.join(file)
    } else {
        parent.join(".ssdready-report-probe")
    };
    crate::output::check(&probe, what)?;
    Ok(())
}

/// Write `text` to `dir/name` atomically.
fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    let path = dir.join(name);
    crate::output::write(&crate::output::Sink::File(path.clone()), text)?;
    Ok(path)
}

/// Render the report of the JSON document `json` (as written to disk) and
/// write it to `dir/report.html`.
pub fn write_report(dir: &Path, json: &str) -> Result<PathBuf, String> {
    let doc = html::load(json).map_err(|e| format!("rendering {REPORT}: {e}"))?;
    write(dir, REPORT, &html::render(&doc))
}

/// Write a study's files in `dir` (made when missing), in order, each said on its line when
/// written (a report rendered from the JSON written before it); a lost
/// file is said, and a kept one ends the writing with exit code 1.
/// Returns the exit code so far and the first file's path, when written.
pub fn write_outputs(dir: &Path, outputs: Vec<Output>) -> (i32, Option<PathBuf>) {
    // Made now, with its files: the study checked before its runs that
    // it can be, and left none behind had it been killed.
    if let Err(e) = std::fs::create_dir_all(dir) {
        crate::say(&format!("creating {}: {e}", dir.display()));
        return (1, None);
    }
    let (mut json, mut first) = (String::new(), None);
    for o in outputs {
        let written = match o.body {
            Body::Text(text) => {
                let w = write(dir, o.name, &text);
                json = text;
                w
            }
            Body::Report => write_report(dir, &json),
        };
        match (written, o.need) {
            (Ok(p), _) => {
                eprintln!("ssdready: {}", ssdready_study::progress::wrote(&p, &o.what));
                first.get_or_insert(p);
            }
            (Err(e), Need::Kept) => {
                crate::say(&e);
                return (1, first);
            }
            (Err(e), Need::Extra) => crate::say(&format!("{} was not written: {e}", o.name)),
        }
    }
    (0, first)
}

/// `run --report DIR`: the run's native JSON and its report, in `dir`
/// (made when missing: its parent was checked before the run).
pub fn write_run(dir: &Path, result: &ssdready_core::result::RunResult) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let json = ssdready_report::json::render(result);
    write(dir, RUN_JSON, &json)?;
    write_report(dir, &json)
}

/// The JSON to render for `path`: a directory's `study.json` (else its
/// `result.json`), or a JSON file itself; and the directory the report
/// goes to.
fn source(path: &Path) -> Result<(PathBuf, PathBuf), String> {
    let allowed = "allowed: a directory written by ssdready study, characterize or run --report, or a study, characterize or run JSON file";
    match std::fs::metadata(path) {
        Err(e) => Err(format!("report: {}: {e} ({allowed})", path.display())),
        Ok(md) if md.is_dir() => [STUDY_JSON, RUN_JSON, CHARACTERIZE_JSON]
            .iter()
            .map(|n| path.join(n))
            .find(|p| p.is_file())
            .map(|p| (p, path.to_path_buf()))
            .ok_or_else(|| {
                format!(
                    "report: {} has no {STUDY_JSON}, {RUN_JSON} or {CHARACTERIZE_JSON} ({allowed})",
                    path.display()
                )
            }),
        Ok(md) if md.is_file() => {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Ok((path.to_path_buf(), dir.to_path_buf()))
        }
        Ok(_) => Err(format!(
            "report: {} is neither a directory nor a file ({allowed})",
            path.display()
        )),
    }
}

/// Read a JSON document as text (bounded, UTF-8).
fn read(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(MAX_JSON_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_JSON_BYTES {
        return Err(format!("larger than {} MiB", MAX_JSON_BYTES >> 20));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {} is invalid)",
            e.utf8_error().valid_up_to()
        )
    })
}

/// `ssdready report PATH`: re-render `report.html` from the JSON alone.
/// Bad input (no such path, no JSON, not a study or run of a version this
/// ssdready reads) is one line and exit code 2, with nothing written.
pub fn command(path: &Path) -> crate::Done {
    let (json_path, dir) = source(path).map_err(|e| fail(2, &e))?;
    let text =
        read(&json_path).map_err(|e| fail(2, &format!("report: {}: {e}", json_path.display())))?;
    let doc =
        html::load(&text).map_err(|e| fail(2, &format!("report: {}: {e}", json_path.display())))?;
    if let Err(e) = check_dir(&dir, "report", REPORT) {
        return Err(fail(2, &e));
    }
    let page = html::render(&doc);
    match write(&dir, REPORT, &page) {
        Ok(p) => eprintln!(
            "ssdready: wrote {} ({} KiB) from {}",
            p.display(),
            page.len().div_ceil(1024),
            json_path.display()
        ),
        Err(e) => return Err(fail(1, &format!("report: {e}"))),
    }
    Ok(())
}

/// `ssdready report --rejudge DIR`: judge the study recorded in
/// `DIR/study.json` again from its measurements with this build's rules,
/// rewrite `study.json` and `report.html` (both made before either is
/// written, each written atomically), print the findings and which of
/// them changed; a job study's likewise ([`rejudge_job`]). Bad input (no
/// such directory, no study.json or job-study.json, not a study of this
/// machine) is one line and exit code 2, with nothing written.
pub fn rejudge(dir: &Path) -> crate::Done {
    let bad = |why: String| fail(2, &format!("report --rejudge: {why}"));
    let json_path = dir.join(STUDY_JSON);
    match std::fs::metadata(dir) {
        Err(e) => return Err(bad(format!("{}: {e}", dir.display()))),
        Ok(md) if !md.is_dir() => {
            return Err(bad(format!(
            "{} is not a directory (allowed: a directory written by ssdready study or study --job)",
            dir.display()
        )))
        }
        Ok(_) if !json_path.is_file() && dir.join(JOB_JSON).is_file() => return rejudge_job(dir),
        Ok(_) if !json_path.is_file() => {
            return Err(bad(format!(
                "{} has no {STUDY_JSON} or {JOB_JSON}",
                dir.display()
            )))
        }
        Ok(_) => {}
    }
    let at = |e: String| bad(format!("{}: {e}", json_path.display()));
    let text = read(&json_path).map_err(at)?;
    let old = match html::load(&text).map_err(|e| at(e.to_string()))? {
        html::ReportDoc::Study(d) => d,
        _ => return Err(at("not a study's document".into())),
    };
    check_dir(dir, "report --rejudge", STUDY_JSON).map_err(|e| fail(2, &e))?;
    let (new, changes) =
        ssdready_diagnosis::rejudged::rejudged(&old).map_err(|e| at(e.to_string()))?;
    let json = serde_json::to_string_pretty(&new)
        .map_err(|e| fail(1, &format!("report --rejudge: the study's JSON: {e}")))?
        + "\n";
    let page = html::load(&json)
        .map(|d| html::render(&d))
        .map_err(|e| fail(1, &format!("report --rejudge: rendering {REPORT}: {e}")))?;
    for (name, body) in [(STUDY_JSON, &json), (REPORT, &page)] {
        let p = write(dir, name, body).map_err(|e| fail(1, &format!("report --rejudge: {e}")))?;
        eprintln!("ssdready: wrote {}", p.display());
    }
    let wall_s = new.finished_unix_ms.saturating_sub(new.started_unix_ms) as f64 / 1e3;
    crate::stdout::print(&ssdready_diagnosis::text::findings(&new, wall_s))?;
    outln!("\njudged again with this build's rules:")?;
    for l in changes.lines() {
        outln!("  {l}")?;
    }
    Ok(())
}

/// `report --rejudge DIR` of a job study: what holds the job judged again
/// from the runs and what it was judged from, both recorded in
/// `DIR/job-study.json`, which is rewritten (atomically) with the new
/// verdict; the job's findings printed, then what changed. A document
/// recorded without what the rules judge a job from is one line and exit
/// code 2, with nothing written: the study of the job must run again.
fn rejudge_job(dir: &Path) -> crate::Done {
    use ssdready_study::rejudge_job::{parse, rejudged};
    let path = dir.join(JOB_JSON);
    let at = |e: String| fail(2, &format!("report --rejudge: {}: {e}", path.display()));
    let old = parse(&read(&path).map_err(at)?).map_err(at)?;
    check_dir(dir, "report --rejudge", JOB_JSON).map_err(|e| fail(2, &e))?;
    let (new, changes) = rejudged(&old).map_err(|e| at(e.to_string()))?;
    let json = serde_json::to_string_pretty(&new)
        .map_err(|e| fail(1, &format!("report --rejudge: the job study's JSON: {e}")))?
        + "\n";
    let p = write(dir, JOB_JSON, &json).map_err(|e| fail(1, &format!("report --rejudge: {e}")))?;
    eprintln!("ssdready: wrote {}", p.display());
    crate::stdout::print(&ssdready_study::outputs::job_text(&new))?;
    outln!("\njudged again with this build's rules:")?;
    for l in changes.lines() {
        outln!("  {l}")?;
    }
    Ok(())
}
