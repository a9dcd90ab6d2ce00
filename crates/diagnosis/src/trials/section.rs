//! The study's "What to change, measured" section ([`Section`]): every
//! trial, the changes not tried, and what the trials say of the findings
//! ([`cite`]): each recommendation citing its trial or why none was
//! possible, a named cause its lever did not move called a contradiction
//! that lowers its verdict's confidence (not where the trial's point could
//! not bind the limit), and the section's answer in one line ([`answer`]).
//! The trials themselves and how each is judged are [`crate::trials`]; the
//! configuration measured as a whole is [`crate::trials::combination`].

use crate::levers::Lever;
use crate::limit::Cause;
use crate::trials::record::Combination;
use crate::trials::{
    judge_trial, noise_words, rank, result_words, Citation, Contradiction, Outcome, Trial, Untested,
};
use serde::{Deserialize, Serialize};
use ssdready_measured::record::Verdict;

/// The study's `trials` section.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Section {
    /// Whether the user asked for the host's settings to be tried
    /// (`--try-changes`).
    pub asked: bool,
    /// Seconds the plan left for the trials, and what they took.
    pub budget_s: f64,
    pub spent_s: f64,
    /// Every trial run, best first.
    pub trials: Vec<Trial>,
    /// The levers that apply here but were not tried, each with why.
    pub untested: Vec<Untested>,
    /// Named causes their lever did not move.
    pub contradictions: Vec<Contradiction>,
    /// Each recommendation's trial, or why it has none.
    pub citations: Vec<Citation>,
    /// The answer in one line.
    pub answer: String,
    /// The configuration to deploy: every change that helped, measured
    /// together (absent when none helped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combination: Option<Combination>,
}

/// The cause a verdict rests on (its `saturation_limit` evidence).
fn cause_of(v: &Verdict) -> Option<Cause> {
    v.evidence
        .figures
        .iter()
        .find(|(f, _)| f == "saturation_limit")
        .and_then(|(_, val)| Cause::of_name(val))
}

/// Named causes whose lifting lever, tried where its limit could bind,
/// moved nothing beyond the noise.
pub fn contradictions(s: &Section, levers: &[Lever], cause: Cause) -> Vec<Contradiction> {
    let mut out = Vec::new();
    for l in levers.iter().filter(|l| l.lifts.contains(&cause)) {
        let tried: Vec<&Trial> = s
            .trials
            .iter()
            .filter(|t| t.lever == l.id && t.unbound.is_none() && t.moved.is_none())
            .filter(|t| {
                matches!(
                    t.outcome,
                    Outcome::NoGain | Outcome::TooNoisy | Outcome::Worse
                )
            })
            .collect();
        let helped = s
            .trials
            .iter()
            .any(|t| t.lever == l.id && t.outcome == Outcome::Better);
        if let (Some(t), false) = (tried.first(), helped) {
            out.push(Contradiction {
                cause: cause.name().into(),
                lever: l.id.clone(),
                text: format!(
                    "the study named {} as what holds the I/O, but lifting it ({}) moved {}: {}, so the trial does not confirm it",
                    cause.name(),
                    t.change(),
                    result_words(t),
                    noise_words(t)
                ),
            });
        }
    }
    out
}

/// Where the trials point when lifting the named `cause` gained nothing:
/// the best change that gained beyond the noise (ranked first among
/// those judged, its limit bound at its point) whose lever lifts another
/// cause, in words; None when no such change gained.
fn elsewhere(s: &Section, levers: &[Lever], cause: Cause) -> Option<(Cause, String)> {
    elsewhere_of(&s.trials, levers, &[cause])
}

/// [`elsewhere`] of ranked trials, lifting none of `causes`.
fn elsewhere_of(trials: &[Trial], levers: &[Lever], causes: &[Cause]) -> Option<(Cause, String)> {
    trials
        .iter()
        .filter(|t| t.outcome == Outcome::Better && t.unbound.is_none() && t.moved.is_none())
        .find_map(|t| {
            let l = levers.iter().find(|l| l.id == t.lever)?;
            let other = l.lifts.iter().find(|c| !causes.contains(c))?;
            (!l.lifts.iter().any(|c| causes.contains(c))).then(|| {
                let gained = format!(
                    "{} gained {}, {}",
                    t.change(),
                    result_words(t),
                    noise_words(t)
                );
                (*other, gained)
            })
        })
}

/// Where the trials of a job's host changes point, against the causes its
/// measurements named (`named`, the first named first; "not identified"
/// too, and each other job's or direction's of a file of several), in
/// words: none where a change of the first cause's own gained beyond the
/// noise (the trials confirm it) or no change lifting none of them did;
/// else the best such change that gained, and the cause it lifts.
pub fn trials_point(trials: &[Trial], levers: &[Lever], named: &[Cause]) -> Option<String> {
    let first = named.first().copied().unwrap_or(Cause::NotIdentified);
    let own = |t: &&Trial| {
        levers
            .iter()
            .any(|l| l.id == t.lever && l.lifts.contains(&first))
    };
    let gained = |t: &&Trial| t.outcome == Outcome::Better && t.unbound.is_none();
    if trials.iter().filter(own).any(|t| gained(&t)) {
        return None;
    }
    let (other, words) = elsewhere_of(trials, levers, named)?;
    Some(format!("the trials point at {}: {words}", other.name()))
}

/// A sentence set after a colon: its first letter lowered where it is a
/// word's capital ("The cgroup's …"), not an initialism's ("SQLite", "QD").
fn sentence_inside(s: &str) -> String {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(a), Some(b)) if a.is_uppercase() && b.is_lowercase() => {
            format!("{}{}", a.to_lowercase(), &s[a.len_utf8()..])
        }
        _ => s.to_string(),
    }
}

/// One confidence step down.
fn lower(c: &str) -> &'static str {
    match c {
        "high" => "medium",
        _ => "low",
    }
}

/// The citation of a verdict's recommendation: its levers' best trial,
/// their trials' lack of gain, or why none was tried. None for a verdict
/// no lever answers.
fn citation(v: &Verdict, s: &Section, levers: &[Lever]) -> Option<Citation> {
    let cause = cause_of(v);
    let related: Vec<&Lever> = levers
        .iter()
        .filter(|l| l.rules.contains(&v.rule) || cause.is_some_and(|c| l.causes.contains(&c)))
        .collect();
    let cite = |measured: bool, text: String| {
        Some(Citation {
            rule: v.rule.clone(),
            measured,
            against: false,
            text,
        })
    };
    if related.is_empty() {
        return beyond_the_host(cause).and_then(|why| cite(false, format!("untested: {why}")));
    }
    let trials: Vec<&Trial> = s
        .trials
        .iter()
        .filter(|t| related.iter().any(|l| l.id == t.lever))
        .filter(|t| t.outcome.judged())
        .collect();
    if let Some(t) = trials.iter().find(|t| against(v, t)) {
        let text = format!(
            "measured against it: {} ({}): what it calls slower was faster in turns",
            result_words(t),
            t.change()
        );
        return cite(true, text).map(|c| Citation { against: true, ..c });
    }
    if let Some(t) = trials.iter().find(|t| t.outcome == Outcome::Better) {
        let cost = match cause {
            Some(Cause::OtherWork) => other_work_cost(t, levers),
            _ => String::new(),
        };
        return cite(
            true,
            format!("measured: {} ({}){cost}", result_words(t), t.change()),
        );
    }
    // The best of them, by its own outcome: no change, too noisy to judge,
    // or worse (where even the best made it worse, the advice was the
    // wrong way).
    if let Some(t) = trials.first() {
        let unbound = t.unbound.as_ref().map_or(String::new(), |why| {
            format!("; at a point where its limit could not bind: {why}")
        });
        return cite(
            true,
            format!(
                "measured: {} ({}: {}{unbound})",
                noise_words(t),
                t.change(),
                result_words(t)
            ),
        );
    }
    let why = s
        .untested
        .iter()
        .find(|u| related.iter().any(|l| l.id == u.lever))
        .map(|u| format!("{} ({})", u.why, u.lever));
    let why = why.or_else(|| {
        s.trials
            .iter()
            .find(|t| related.iter().any(|l| l.id == t.lever))
            .map(|t| format!("{}: {}", t.change(), result_words(t)))
    })?;
    cite(false, format!("untested: {why}"))
}

/// Why no lever answers a cause below the host, none for another cause.
fn beyond_the_host(cause: Option<Cause>) -> Option<&'static str> {
    match cause? {
        Cause::BelowHost => Some("a limit below this host; no setting of this host moves it"),
        Cause::Device => Some("the device's own limit; no setting of this host moves it"),
        _ => None,
    }
}

/// Whether trial `t` measured, in turns and beyond the noise, that what
/// verdict `v` calls the slower choice (a figure `…_worst…`, `libaio
/// (31.9K)`) is the faster: it changed to that choice and gained.
fn against(v: &Verdict, t: &Trial) -> bool {
    let worse = |value: &str| value == t.to || value.starts_with(&format!("{} (", t.to));
    t.outcome == Outcome::Better
        && v.evidence
            .figures
            .iter()
            .any(|(name, value)| name.contains("_worst") && worse(value))
}

/// What other work costs, from a trial of a lever that lifts the I/O's
/// threads ahead of it (`priority`, `pinning`) and gained: the share of
/// the lifted rate it took — at least, as the kernel's threads on the
/// path stay where they were. `; other work costs at least 31 % of the
/// IOPS here`, or nothing.
fn other_work_cost(t: &Trial, levers: &[Lever]) -> String {
    let lifts = levers
        .iter()
        .any(|l| l.id == t.lever && l.causes.contains(&Cause::OtherWork));
    match t
        .main_gain()
        .filter(|g| lifts && g.better && g.change_pct > 0.0)
    {
        Some(g) => format!(
            "; other work costs at least {:.0} % of the {} here",
            100.0 * g.change_pct / (100.0 + g.change_pct),
            g.metric.label()
        ),
        None => String::new(),
    }
}

/// Rank the trials, then set what they say against the findings: each
/// recommendation cites its trial or why none was possible (marked
/// untested), a named cause its lever did not move is a contradiction
/// that lowers that verdict's confidence, and the section's answer.
pub fn cite(s: &mut Section, verdicts: &mut [Verdict], levers: &[Lever], cause: Cause) {
    for t in &mut s.trials {
        judge_trial(t);
    }
    rank(&mut s.trials);
    s.contradictions = contradictions(s, levers, cause);
    let mut elsewhere = match s.contradictions.is_empty() {
        true => None,
        false => elsewhere(s, levers, cause),
    };
    if let Some((other, gained)) = &elsewhere {
        for x in &mut s.contradictions {
            x.text = format!(
                "{}; the trials point at {} instead: {gained}",
                x.text,
                other.name()
            );
        }
    }
    s.citations.clear();
    for v in verdicts.iter_mut() {
        let Some(c) = citation(v, s, levers) else {
            continue;
        };
        v.recommendation = format!(
            "{} [{}]",
            v.recommendation.trim_end(),
            c.text.trim_end_matches('.')
        );
        if c.against {
            v.confidence = lower(&v.confidence).into();
            v.confidence_why = format!("{}; lowered: {}", v.confidence_why, c.text);
        }
        if cause_of(v) == Some(cause) {
            if let Some(x) = s.contradictions.first() {
                v.confidence = lower(&v.confidence).into();
                v.confidence_why = format!("{}; lowered: {}", v.confidence_why, x.text);
            }
            // The headline (the first verdict of the cause) opens with
            // what the trials confirmed, then what the measurements named.
            if let Some((other, gained)) = elsewhere.take() {
                v.finding = format!(
                    "The trials point at {}: {gained}. Lifting what the measurements named gained nothing beyond the noise: {}",
                    other.name(),
                    sentence_inside(v.finding.trim_end())
                );
            }
        }
        s.citations.push(c);
    }
    s.answer = answer(s);
}

/// The section's answer in one line.
pub fn answer(s: &Section) -> String {
    let done: Vec<&Trial> = s.trials.iter().filter(|t| t.outcome.judged()).collect();
    match (done.first(), done.len()) {
        (None, _) if s.untested.is_empty() => "no change applies to this target".into(),
        (None, _) => "no change was tried (see why below)".into(),
        (Some(t), _) if t.outcome == Outcome::Better => format!(
            "the best change measured: {} ({}), {}",
            t.change(),
            result_words(t),
            noise_words(t)
        ),
        (Some(_), n) => match (
            untested_large(s),
            done.iter().filter(|t| t.outcome == Outcome::TooNoisy).count(),
        ) {
            (Some(u), _) => format!(
                "no change tried beat the baseline beyond the noise ({n} tried), but {u}"
            ),
            (None, 0) => format!(
                "no change beat the baseline beyond the noise ({n} tried): what this study measured is what this host gives with these settings"
            ),
            (None, k) => format!(
                "no change beat the baseline beyond the noise ({n} tried; {k} too noisy to judge: their turns spread too wide to say either way)"
            ),
        },
    }
}

/// The untested changes with a large estimate, in words: what the answer
/// must say before it calls the host's figures final.
fn untested_large(s: &Section) -> Option<String> {
    let big: Vec<&Untested> = s.untested.iter().filter(|u| u.large()).collect();
    let first = big.first()?;
    let e = first.estimate.as_ref()?;
    let more = match big.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    let how = first
        .command
        .as_ref()
        .map_or(String::new(), |c| format!("; to try it: {c}"));
    Some(format!(
        "{} is untested and may buy {}{more} ({}){how}",
        first.what,
        e.words(),
        first.why
    ))
}
