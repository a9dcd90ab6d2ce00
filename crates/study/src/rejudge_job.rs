//! A job study judged again with this build's rules (`ssdready report
//! --rejudge DIR` on a directory `study --job` wrote): its document read
//! from `job-study.json`'s text ([`parse`]), what holds the job made again
//! and the rules' other findings, by the diagnosis
//! ([`ssdready_diagnosis::rejudged::job`]) from the runs and what it was
//! judged from, both recorded in the document, and the document with the
//! new verdict ([`rejudged`]), where the trials point against it too,
//! and whether each host trial's limit bound. Nothing else of the
//! document is judged from them, so nothing else changes.

use crate::session_parts::{JobDoc, SCHEMA};
use ssdready_diagnosis::rejudged::job::{rejudged_job, JobChanges, Recorded};
use ssdready_diagnosis::rejudged::RejudgeError;
use ssdready_diagnosis::trials::section;

/// A job study's document from its JSON text; why not, in words.
pub fn parse(text: &str) -> Result<JobDoc, String> {
    let doc: JobDoc = serde_json::from_str(text).map_err(|e| format!("not a job study ({e})"))?;
    match doc.schema == SCHEMA {
        true => Ok(doc),
        false => {
            Err("not a job study (allowed: a directory or job-study.json of `study --job`)".into())
        }
    }
}

/// `old` with what holds the job judged again, and what changed; refused
/// where it recorded no run or not what the rules judge a job from.
pub fn rejudged(old: &JobDoc) -> Result<(JobDoc, JobChanges), RejudgeError> {
    let again = rejudged_job(Recorded {
        from: old.judged_from.as_ref(),
        points: &old.points,
        held: &old.held,
        holds: &old.holds,
        findings: &old.findings,
    })?;
    let mut new = old.clone();
    (new.held, new.holds, new.findings) = (again.held, again.holds, again.findings);
    trials_again(&mut new);
    new.trials_point = trials_point(&new);
    Ok((new, again.changes))
}

/// Whether each host trial's limit bound, and how to keep it, judged
/// again from its turns ([`ssdready_diagnosis::levers::binding::after_turns`]).
fn trials_again(doc: &mut JobDoc) {
    let (Some(host), Some(from)) = (doc.host.as_mut(), doc.judged_from.as_ref()) else {
        return;
    };
    let table = ssdready_diagnosis::levers::shipped();
    for t in &mut host.trials {
        if let Some(l) = table.iter().find(|l| l.id == t.lever) {
            ssdready_diagnosis::levers::binding::after_turns(t, l, &from.context);
        }
    }
}

/// Where the job's trials point against the causes named, first the first
/// ([`section::trials_point`]).
pub(crate) fn trials_point(doc: &JobDoc) -> Option<String> {
    let named: Vec<_> = doc.held.iter().map(|h| h.saturation.limit).collect();
    if named.is_empty() {
        return None;
    }
    let table = ssdready_diagnosis::levers::shipped();
    section::trials_point(&doc.host.as_ref()?.trials, &table, &named)
}

#[cfg(test)]
#[path = "rejudge_job_tests.rs"]
mod tests;
