//! The host's changes tried on the user's job as written (the study's
//! `trials::on_job` runs them): what was tried and what was not, which
//! of them helped and go into the job's best configuration, which one
//! fio's turns check, and the section in words.

use crate::levers;
use crate::limit::Cause;
use crate::trials::{self, combination, Outcome, Trial, Untested};
use serde::{Deserialize, Serialize};

/// The host's changes on the job: what was tried and what was not.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostSection {
    /// `--try-changes` was given.
    pub asked: bool,
    /// The job as written as the trials' point, in words.
    pub at: String,
    /// Each change tried, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<Trial>,
    /// Each change not tried, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untested: Vec<Untested>,
}

/// The changes that helped beyond the noise, one per lever, best first;
/// with a limit that helped behind another, that other's change too (the
/// pair is what was measured).
pub fn helped(s: &HostSection) -> Vec<&Trial> {
    let mut out = combination::helped(&s.trials);
    out.retain(|t| on_host(t));
    let fronts: Vec<&Trial> = out
        .iter()
        .filter_map(|t| t.behind.as_ref())
        .filter_map(|f| s.trials.iter().find(|t| &t.lever == f))
        .collect();
    for f in fronts {
        if !out.iter().any(|t| t.lever == f.lever) {
            out.push(f);
        }
    }
    out
}

/// The host's change that fio's A/B turns check: the one that gained
/// most (`s` ranked best first); where none gained beyond the noise, the
/// lift of the limit named as what holds the job (`named`), so that fio
/// says what the named limit costs fio (fio's turns make the change as
/// the study's did, with what the kernel moves with it). Never one with
/// no turn measured.
pub fn for_fio(s: &HostSection, named: Option<Cause>) -> Option<&Trial> {
    let table = levers::shipped();
    let of_named = |t: &&Trial| {
        let lever = table.iter().find(|l| l.id == t.lever);
        named.is_some_and(|n| lever.is_some_and(|l| l.causes.contains(&n)))
    };
    let host = || {
        s.trials
            .iter()
            .filter(|t| on_host(t) && !t.turns.is_empty())
    };
    host()
        .find(|t| t.outcome == Outcome::Better)
        .or_else(|| host().find(of_named))
}

/// Whether trial `t` changed the host (not the job's own options).
pub fn on_host(t: &Trial) -> bool {
    levers::of_kind(t.kind).1.of_host()
}

/// The host's changes in words: each tried, its result and how it was put
/// back; each not tried with why, and how to ask where a command would.
pub fn words(s: &HostSection) -> String {
    let mut out = String::new();
    if !s.trials.is_empty() {
        let own = match s.trials.iter().any(|t| !on_host(t)) {
            true => ", and of the job's own threads' priority",
            false => "",
        };
        out.push_str(&format!(
            "changes of the host{own}, each in turns against the job as written and put back after each run:\n"
        ));
    }
    for t in &s.trials {
        let result = match (&t.error, t.turns.is_empty()) {
            (Some(e), true) => format!("not measured: {e}"),
            _ => format!("{}, {}", trials::result_words(t), trials::noise_words(t)),
        };
        out.push_str(&format!("  {}: {result}\n", t.change()));
        if let Some(d) = trials::direction_words(&t.turns) {
            out.push_str(&format!("    each direction: {d}\n"));
        }
        if let Some(m) = &t.moved {
            out.push_str(&format!(
                "    it also moved {m}, as the kernel does wherever the change is made: the gain is the change's with it\n"
            ));
        }
        if let Some(u) = &t.unbound {
            out.push_str(&format!("    its limit did not bind: {u}\n"));
        }
        if t.outcome == Outcome::Better && !t.permanent.is_empty() {
            out.push_str(&format!(
                "    to keep it: {}\n",
                t.permanent.replace('\n', "\n      ")
            ));
        }
    }
    if !s.untested.is_empty() {
        out.push_str("changes of the host not tried on the job:\n");
    }
    for u in &s.untested {
        out.push_str(&format!("  {}: {}\n", u.what, u.why));
    }
    let commands: Vec<&String> = s
        .untested
        .iter()
        .filter_map(|u| u.command.as_ref())
        .collect();
    if let Some(c) = commands.first() {
        out.push_str(&format!("  to try them: {c}\n"));
    }
    out
}
