//! A recorded study judged again with this build's rules, as a whole
//! document: its figures, facts and verdicts made again from what it
//! measured ([`crate::rejudge`]), its applications section judged again
//! from its points, its trials cited again by the new verdicts; and what
//! changed, said finding by finding. A study recorded by an older
//! ssdready thus gains what the rules of this one know. A fleet's study is
//! judged by the fleet's own section and is refused. A job study's verdict
//! is judged again by [`job`].

use crate::limit::Cause;
use crate::model::StudyDoc;
use ssdready_measured::record::Verdict;

pub mod job;

/// Why a document cannot be judged again.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RejudgeError {
    #[error("it records no run to judge")]
    NoRuns,
    #[error("it names no target")]
    NoTarget,
    #[error("it is a fleet's study, judged host by host in its fleet section")]
    Fleet,
    #[error("it was recorded without what the rules judge a job from (its target, machine, limits, point and each job's figures): run the study of the job again")]
    NoJudgedFrom,
}

/// What changed between the study as recorded and as judged again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    /// The first finding, before and after, where it changed.
    pub headline: Option<(String, String)>,
    /// What holds the peak, before and after, where it changed.
    pub limit: Option<(Cause, Cause)>,
    /// Verdicts (rule, finding) the rules make now and did not.
    pub added: Vec<(String, String)>,
    /// Verdicts the study made that the rules no longer make.
    pub removed: Vec<(String, String)>,
}

impl Changes {
    /// Nothing changed.
    pub fn none(&self) -> bool {
        self.headline.is_none()
            && self.limit.is_none()
            && self.added.is_empty()
            && self.removed.is_empty()
    }

    /// One line each: `headline: OLD → NEW`, `limit: …`, `+ rule: …`,
    /// `- rule: …`; or that nothing changed.
    pub fn lines(&self) -> Vec<String> {
        if self.none() {
            return vec!["no finding changed".into()];
        }
        let mut out = Vec::new();
        if let Some((a, b)) = &self.headline {
            out.push(format!("headline: {a} → {b}"));
        }
        if let Some((a, b)) = &self.limit {
            out.push(format!("what holds the peak: {a} → {b}"));
        }
        out.extend(self.removed.iter().map(|(r, f)| format!("- {r}: {f}")));
        out.extend(self.added.iter().map(|(r, f)| format!("+ {r}: {f}")));
        out
    }
}

/// `old` judged again: the new document and what changed.
pub fn rejudged(old: &StudyDoc) -> Result<(StudyDoc, Changes), RejudgeError> {
    if old.figures.fleet.is_some() {
        return Err(RejudgeError::Fleet);
    }
    if old.targets.is_empty() {
        return Err(RejudgeError::NoTarget);
    }
    if old.runs.is_empty() {
        return Err(RejudgeError::NoRuns);
    }
    let mut j = crate::rejudge(old);
    let points = &old.figures.applications;
    if !points.is_empty() {
        let (facts, verdicts) = crate::applications::judge(points, old.interrupted);
        j.facts.extend(facts);
        j.verdicts.extend(verdicts);
        j.figures.applications = points.clone();
    }
    let mut new = old.clone();
    new.trials = old.trials.clone().map(|mut s| {
        let levers = crate::levers::shipped();
        crate::trials::section::cite(&mut s, &mut j.verdicts, &levers, j.figures.saturation.limit);
        s
    });
    new.figures = j.figures;
    new.facts = j.facts;
    new.verdicts = j.verdicts;
    let changes = changes(old, &new);
    Ok((new, changes))
}

/// What changed from `old` to `new`.
fn changes(old: &StudyDoc, new: &StudyDoc) -> Changes {
    let first = |d: &StudyDoc| d.verdicts.first().map(|v| v.finding.clone());
    let (a, b) = (old.figures.saturation.limit, new.figures.saturation.limit);
    Changes {
        headline: match (first(old), first(new)) {
            (x, y) if x == y => None,
            (x, y) => Some((x.unwrap_or_default(), y.unwrap_or_default())),
        },
        limit: (a != b).then_some((a, b)),
        added: missing(&new.verdicts, &old.verdicts),
        removed: missing(&old.verdicts, &new.verdicts),
    }
}

/// The verdicts of `of` whose rule `from` does not have: (rule, finding).
fn missing(of: &[Verdict], from: &[Verdict]) -> Vec<(String, String)> {
    of.iter()
        .filter(|v| !from.iter().any(|w| w.rule == v.rule))
        .map(|v| (v.rule.clone(), v.finding.clone()))
        .collect()
}

#[cfg(test)]
#[path = "rejudged_tests.rs"]
mod tests;
