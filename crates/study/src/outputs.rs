//! What a study leaves: its closing ([`Closing`]: the findings' text, the
//! exit code and the line that says why it is not 0), and the files in its
//! directory, in the order they are written: each one's name, its text,
//! what it holds (said when it is written), and what its loss means. The
//! caller prints the closing, writes the files atomically, one by one, and
//! renders the HTML report ([`Body::Report`]) from the JSON written just
//! before it, as `ssdready report` re-renders it.
//!
//! - a study of this machine: `study.json`, `report.html`, then the
//!   configuration's udev rules, systemd drop-in and fio job when the
//!   trials kept a configuration;
//! - a fleet's study: `study.json`, then its report (its loss a warning);
//! - a job's study: `job-study.json`, then `job-best.fio` with its host
//!   changes' files when the best configuration gained.

use crate::model::StudyDoc;
use crate::progress::{compared, fleet_end, job_end, study_end};
use crate::session::{Of, Studied};
use crate::session_job::JobStudied;
use ssdready_diagnosis::combination_files::{self as files, File, FIO, SYSTEMD, UDEV};

/// How a study ends, once its files are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closing {
    /// The findings (stdout).
    pub text: String,
    /// The exit code: 0; 3 for a job worse than its baseline; 1 when no
    /// run succeeded, a fleet's host did not finish, or the job did not
    /// run; 130 when interrupted.
    pub code: i32,
    /// Why (or the job against its baseline), said last.
    pub line: Option<String>,
}

/// A study's closing (of this machine or of a fleet) after `wall_s`.
pub fn closing(s: &Studied, wall_s: f64) -> Closing {
    let (text, (code, line)) = match s.of {
        Of::Fleet { partial } => (
            crate::fleet_run::block(&s.doc, wall_s),
            fleet_end(&s.doc, partial),
        ),
        Of::Machine => (
            ssdready_diagnosis::text::findings(&s.doc, wall_s),
            study_end(&s.doc),
        ),
    };
    Closing { text, code, line }
}

/// A job study's closing: how the job ended, else how it compares with
/// its baseline (3 when worse beyond the noise).
pub fn job_closing(s: &JobStudied) -> Closing {
    let text = crate::job_run::text(&s.doc);
    let (code, line) = match (job_end(&s.doc), s.compared.as_ref().map(compared)) {
        ((0, _), Some((line, worse))) => (if worse { 3 } else { 0 }, Some(line)),
        (end, _) => end,
    };
    Closing { text, code, line }
}

/// What a file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// This text.
    Text(String),
    /// The HTML report of the JSON written just before it.
    Report,
}

/// What the loss of a file means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The study failed (exit 1); nothing after it is written.
    Kept,
    /// Said on its line; the rest is written and the exit code stands.
    Extra,
}

/// One file of a study's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub name: &'static str,
    pub body: Body,
    /// What it holds, said when it is written ("" for nothing).
    pub what: String,
    pub need: Need,
}

impl Output {
    fn text(name: &'static str, text: String, what: &str, need: Need) -> Output {
        let (body, what) = (Body::Text(text), what.to_string());
        Output {
            name,
            body,
            what,
            need,
        }
    }
}

/// The JSON text of a document, as its file holds it.
fn json<T: serde::Serialize>(doc: &T) -> Result<String, serde_json::Error> {
    Ok(serde_json::to_string_pretty(doc)? + "\n")
}

/// A study's files (of this machine or of a fleet).
pub fn of_study(s: &Studied) -> Result<Vec<Output>, serde_json::Error> {
    let what = match s.of {
        Of::Machine => format!("{} runs", s.doc.runs.len()),
        Of::Fleet { .. } => String::new(),
    };
    let mut out = vec![Output::text("study.json", json(&s.doc)?, &what, Need::Kept)];
    let report_need = match s.of {
        Of::Machine => Need::Kept,
        Of::Fleet { .. } => Need::Extra,
    };
    out.push(Output {
        name: "report.html",
        body: Body::Report,
        what: String::new(),
        need: report_need,
    });
    if s.of == Of::Machine {
        for (f, what) in config_files(&s.doc) {
            out.push(Output::text(f.name, f.text, what, Need::Extra));
        }
    }
    Ok(out)
}

/// A job study's files.
pub fn of_job(s: &JobStudied) -> Result<Vec<Output>, serde_json::Error> {
    let mut out = vec![Output::text(
        "job-study.json",
        json(&s.doc)?,
        "",
        Need::Kept,
    )];
    let Some(best) = &s.best else {
        return Ok(out);
    };
    let what = "the job with the best configuration";
    out.push(Output::text("job-best.fio", best.clone(), what, Need::Kept));
    for f in &s.host_files {
        let what = "the best configuration's host changes";
        out.push(Output::text(f.name, f.text.clone(), what, Need::Extra));
    }
    Ok(out)
}

/// The configuration's files of a study (udev rules, a systemd drop-in,
/// the fio job), each with what it holds; none where the trials kept no
/// configuration.
pub fn config_files(doc: &StudyDoc) -> Vec<(File, &'static str)> {
    let Some(c) = doc.trials.as_ref().and_then(|t| t.combination.as_ref()) else {
        return Vec::new();
    };
    let date = files::date_of(doc.started_unix_ms);
    files::files(c, &date, doc.limits.as_ref())
        .into_iter()
        .map(|f| {
            let what = match f.name {
                UDEV => "the configuration's queue settings, as udev rules",
                SYSTEMD => "the configuration's control-group properties, as a systemd drop-in",
                FIO => "the configuration's job",
                _ => "",
            };
            (f, what)
        })
        .collect()
}

#[cfg(test)]
#[path = "outputs_tests.rs"]
mod tests;
