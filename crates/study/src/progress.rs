//! The study's progress and closing lines as `ssdready study` prints them
//! (pure: each from what happened to its line; the caller prints them):
//! each run's line and the bar's message and position while the sweeps
//! run, the job study's plan, what each written file holds, how a study
//! ended, and a job study against its baseline. The plan's text is
//! [`crate::text::plan`], the findings' the diagnosis's.

use crate::job::REPEATS;
use crate::model::StudyDoc;
use crate::plan::Plan;
use crate::session_parts::{Compared, JobDoc};
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_measured::record::RunRecord;
use std::path::Path;

/// A run's line when it finished: its id and its figures, or why it
/// failed.
pub fn run_line(rec: &RunRecord) -> String {
    let what = match &rec.error {
        Some(e) => format!("failed: {e}"),
        None => format!(
            "{} IOPS, {} mean, {} p99",
            fmt_count(rec.summary.iops),
            fmt_ns(rec.summary.lat_mean_ns),
            fmt_ns(rec.summary.lat_p99_ns as f64)
        ),
    };
    format!("  {:<28} {what}", rec.id)
}

/// Where the sweeps' bar stands: the plan's runs done, each counted at its
/// estimated length, in milliseconds as the bar counts.
#[derive(Clone, Debug)]
pub struct Bar {
    /// The estimated seconds of one run.
    pub per_point_s: f64,
    /// The estimated seconds of the runs done.
    pub done_s: f64,
    /// The plan's runs.
    pub total: usize,
    /// The bar's length: the plan's estimated milliseconds.
    pub length_ms: u64,
}

impl Bar {
    /// The bar over `p`'s estimated seconds.
    pub fn of(p: &Plan) -> Bar {
        Bar {
            per_point_s: p.settings.runtime_s + p.settings.ramp_s + p.overhead_s,
            done_s: 0.0,
            total: p.points.len(),
            length_ms: (p.eta_s(0) * 1000.0) as u64,
        }
    }

    /// The bar's message as run `index` (from 0) starts.
    pub fn starting(&self, index: usize, id: &str) -> String {
        format!("run {}/{} {id}", index + 1, self.total)
    }

    /// The position `within_s` seconds into the current run (counted up
    /// to a run's estimated length).
    pub fn position_ms(&self, within_s: f64) -> u64 {
        ((self.done_s + within_s.min(self.per_point_s)) * 1000.0) as u64
    }

    /// A run finished: the position at its end.
    pub fn finished(&mut self) -> u64 {
        self.done_s += self.per_point_s;
        (self.done_s * 1000.0) as u64
    }

    /// `n` runs dropped: the length `length_ms` less theirs.
    pub fn dropped(&self, length_ms: u64, n: usize) -> u64 {
        length_ms.saturating_sub((n as f64 * self.per_point_s * 1000.0) as u64)
    }
}

/// The job study's plan, before its first run.
pub fn job_plan(file: &str, runs: usize, host_runs: usize, runtime_s: f64) -> String {
    format!(
        "studying the job file {file}: {REPEATS} repeats as written, then {} more runs (its variants{}), {runtime_s:.0} s each",
        runs - REPEATS,
        if host_runs > 0 { ", the host's changes" } else { "" }
    )
}

/// A file written: where, and what it holds when said.
pub fn wrote(path: &Path, what: &str) -> String {
    match what {
        "" => format!("wrote {}", path.display()),
        w => format!("wrote {} ({w})", path.display()),
    }
}

/// How a study ended, once its files are written: its exit code and the
/// line that says why when it is not 0 (130 interrupted, 1 when no run
/// succeeded).
pub fn study_end(doc: &StudyDoc) -> (i32, Option<String>) {
    if doc.interrupted {
        return (130, Some(INTERRUPTED.into()));
    }
    if doc.runs.iter().any(|r| r.error.is_none()) {
        return (0, None);
    }
    let why = doc
        .runs
        .iter()
        .find_map(|r| r.error.clone())
        .unwrap_or_default();
    (1, Some(format!("no run of the study succeeded: {why}")))
}

/// An interrupted study's last line.
pub const INTERRUPTED: &str = "interrupted; the study covers what ran";

/// How a fleet's study ended: 130 interrupted, 1 when a host did not
/// finish every run, with its line.
pub fn fleet_end(doc: &StudyDoc, partial: bool) -> (i32, Option<String>) {
    match (doc.interrupted, partial) {
        (true, _) => (130, Some(INTERRUPTED.into())),
        (_, true) => (
            1,
            Some("fleet: partial: not every host finished every run (see figures.fleet)".into()),
        ),
        _ => (0, None),
    }
}

/// How a job's study ended: 130 interrupted, 1 when the job did not run,
/// with its line.
pub fn job_end(doc: &JobDoc) -> (i32, Option<String>) {
    match (&doc.error, doc.interrupted) {
        (_, true) => (130, Some(INTERRUPTED.into())),
        (Some(e), _) => (1, Some(format!("the job did not run: {e}"))),
        _ => (0, None),
    }
}

/// A job study against its baseline: the line, and whether the job got
/// worse beyond the noise.
pub fn compared(c: &Compared) -> (String, bool) {
    match c {
        Compared::Same { change_pct, worse } => (
            format!(
                "against the baseline: the job's IOPS {change_pct:+.1} % ({})",
                match worse {
                    true => "worse beyond the noise",
                    false => "within the noise or better",
                }
            ),
            *worse,
        ),
        Compared::OtherFile { was } => (
            format!(
                "no comparison with the baseline: it studied another job file ({was}, another SHA-256)"
            ),
            false,
        ),
    }
}

#[cfg(test)]
#[path = "progress_tests.rs"]
mod tests;
