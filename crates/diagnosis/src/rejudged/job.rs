//! A job study judged again with this build's rules: what holds the job
//! and the rules' other findings ([`crate::job_findings`]) made again
//! from its runs (its points) and what it was judged from
//! ([`JudgedFrom`], recorded beside them), and what changed — the cause
//! of each direction, and the lines said of it and of the findings. The job's document lives
//! in the study crate; this is its pure half, over the diagnosis's types.

use super::RejudgeError;
use crate::limit::point::{held_words, Held, JudgedFrom};
use crate::limit::Cause;
use ssdready_measured::record::{RunRecord, Verdict};

/// What a job study recorded: what its verdict was judged from, its runs,
/// and the verdict with its lines.
#[derive(Clone, Copy, Debug)]
pub struct Recorded<'a> {
    pub from: Option<&'a JudgedFrom>,
    pub points: &'a [RunRecord],
    pub held: &'a [Held],
    pub holds: &'a [String],
    /// The rules' other findings on its runs (none recorded by a build
    /// that did not judge them).
    pub findings: &'a [Verdict],
}

/// The job judged again: what holds it, its lines, what changed.
#[derive(Clone, Debug)]
pub struct Rejudged {
    pub held: Vec<Held>,
    pub holds: Vec<String>,
    pub findings: Vec<Verdict>,
    pub changes: JobChanges,
}

/// What changed between the job's verdict as recorded and as judged again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobChanges {
    /// Each direction whose cause changed (`""` for the whole job, `reads`,
    /// `[fill] writes`): before and after, None where it was not judged.
    pub held: Vec<(String, Option<Cause>, Option<Cause>)>,
    /// Lines of what holds the job that the rules no longer say.
    pub removed: Vec<String>,
    /// Lines they say now and did not.
    pub added: Vec<String>,
}

impl JobChanges {
    /// Nothing changed.
    pub fn none(&self) -> bool {
        self.held.is_empty() && self.removed.is_empty() && self.added.is_empty()
    }

    /// One line each: `what holds the job's reads: OLD → NEW`, `- line`,
    /// `+ line`; or that nothing changed.
    pub fn lines(&self) -> Vec<String> {
        if self.none() {
            return vec!["no finding changed".into()];
        }
        let name = |c: &Option<Cause>| c.map_or("not judged", Cause::name);
        let mut out: Vec<String> = self
            .held
            .iter()
            .map(|(d, a, b)| format!("{}: {} → {}", what_holds(d), name(a), name(b)))
            .collect();
        out.extend(self.removed.iter().map(|l| format!("- {l}")));
        out.extend(self.added.iter().map(|l| format!("+ {l}")));
        out
    }
}

/// `what holds the job`, `what holds the job's reads`, `what holds [fill]
/// writes`.
fn what_holds(direction: &str) -> String {
    match direction {
        "" => "what holds the job".into(),
        d if d.starts_with('[') => format!("what holds {d}"),
        d => format!("what holds the job's {d}"),
    }
}

/// The job recorded in `old` judged again from its runs and what it was
/// judged from; refused where it recorded no run, or not what the rules
/// judge a job from (a study made before it was recorded).
pub fn rejudged_job(old: Recorded) -> Result<Rejudged, RejudgeError> {
    let from = old.from.ok_or(RejudgeError::NoJudgedFrom)?;
    if old.points.is_empty() {
        return Err(RejudgeError::NoRuns);
    }
    let held = from.held(old.points);
    let holds = held_words(&held);
    let findings = crate::job_findings(from, old.points);
    let said = |vs: &[Verdict]| -> Vec<String> { vs.iter().map(|v| v.finding.clone()).collect() };
    let (before, after) = (said(old.findings), said(&findings));
    let mut changes = JobChanges {
        held: causes(old.held, &held),
        removed: missing(old.holds, &holds),
        added: missing(&holds, old.holds),
    };
    changes.removed.extend(missing(&before, &after));
    changes.added.extend(missing(&after, &before));
    Ok(Rejudged {
        held,
        holds,
        findings,
        changes,
    })
}

/// Each direction of `old` or `new` whose cause differs.
fn causes(old: &[Held], new: &[Held]) -> Vec<(String, Option<Cause>, Option<Cause>)> {
    let of = |h: &[Held], d: &str| {
        h.iter()
            .find(|x| x.direction == d)
            .map(|x| x.saturation.limit)
    };
    let mut dirs: Vec<&str> = old.iter().map(|h| h.direction.as_str()).collect();
    for h in new {
        if !dirs.contains(&h.direction.as_str()) {
            dirs.push(&h.direction);
        }
    }
    dirs.into_iter()
        .map(|d| (d.to_string(), of(old, d), of(new, d)))
        .filter(|(_, a, b)| a != b)
        .collect()
}

/// The lines of `of` that `from` does not say, trimmed.
fn missing(of: &[String], from: &[String]) -> Vec<String> {
    let said: Vec<&str> = from.iter().map(|l| l.trim()).collect();
    of.iter()
        .map(|l| l.trim())
        .filter(|l| !said.contains(l))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
