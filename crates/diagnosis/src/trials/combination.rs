//! The configuration to deploy: every change that helped beyond the noise
//! in its own trial ([`crate::trials`]), applied together and measured as
//! a whole, in turns against the baseline like each single change, with
//! the same number of pairs. This module is its judgement, purely (the
//! model, as data, is [`crate::trials::record`], re-exported here); the
//! running is `ssdready-study`'s (`trials`), the files that
//! make the configuration last are [`crate::trials::files`]; its lines in
//! the terminal, [`crate::trials::text::combination_lines`].
//!
//! What goes together, at what point:
//! * one candidate per lever: the best of its trials that was better
//!   beyond the noise ([`helped`]);
//! * the point is the best single change's: its gain is the one the set
//!   must beat, and a set measured elsewhere could not be compared with
//!   it. The host's changes (queue settings, the study's own group) hold
//!   whatever runs, so each joins wherever its own trial ran; an
//!   application's choices are options made for their point's workload
//!   (`iodepth={quad_qd}` of large reads is not a change of 4 KiB random
//!   reads), so one joins only when its trial ran at that same point, and
//!   not when it sets an option an earlier (better) change sets otherwise
//!   (libaio against io_uring's registered files). What stays out is
//!   listed with why ([`LeftOut`]);
//! * the host's changes are made in one order, the scheduler first (a
//!   switch resets `nr_requests`), all before each changed run and put
//!   back after it in the reverse order;
//! * the set is judged on what the best single change is judged on.
//!
//! Changes interact: two that each lift a different limit add up, two that
//! lift the same one do not, and one may cancel another. Where the whole
//! set buys less than its best single change, the study says so and
//! measures the set without one change — the one that helped least alone
//! first, then the next — up to [`MAX_SUBSETS`] sets ([`next_subset`]);
//! it keeps the first set that buys at least the best single change, else
//! the best single change alone, as its own trial measured it
//! ([`choose`]). A set that holds a cap that bought nothing alone
//! ([`Member::behind`]) is measured once more without it: the cap earns
//! its place only where the set with it buys more beyond the noise. With
//! one change that helped, the configuration is that change as its trial
//! measured it, and nothing more is run; with none, there is no
//! configuration.

use crate::levers::{Kind, Metric};
use crate::trials::{self, Gain, Outcome, Trial};

pub use crate::trials::record::{Combination, LeftOut, Member, Set};

/// Sets the search measures beyond the whole one, at most.
pub const MAX_SUBSETS: usize = 2;

/// Fill a set's gains and outcome from its turns, judged on `measure` as
/// a trial is ([`trials::judge_trial`]).
pub fn judge_set(s: &mut Set, measure: Metric) {
    let mut t = Trial {
        measure,
        turns: s.turns.clone(),
        outcome: s.outcome,
        ..Default::default()
    };
    trials::judge_trial(&mut t);
    s.gains = t.gains;
    s.outcome = t.outcome;
}

/// The trials that helped beyond the noise, one per lever (its best),
/// best first: the candidates of the set. `trials` ranked best first. A
/// trial that moved another setting it could not put back
/// ([`Trial::moved`]) is not one: its gain is not its change's alone.
pub fn helped(trials: &[Trial]) -> Vec<&Trial> {
    let mut out: Vec<&Trial> = Vec::new();
    // A change that moved another setting the kernel would not take back
    // is credited with it: made for good, it moves it again.
    let credited = |t: &&Trial| t.outcome == Outcome::Better;
    for t in trials.iter().filter(credited) {
        if !out.iter().any(|o| o.lever == t.lever) {
            out.push(t);
        }
    }
    out
}

/// Where a change of a set is made among the others, as its kind says
/// ([`crate::levers::LeverKind::order`]): the scheduler first (switching
/// it resets `nr_requests` and the other settings it owns), then the
/// queue's other settings, then the study's own group, then the
/// application's choices (nothing to make). The one order of the trials'
/// sets, the job's best configuration and the udev file.
pub fn order(kind: Kind, attr: Option<&str>) -> u8 {
    kind.ops().order(attr)
}

/// A limit that binds only once the limit in front of it is lifted
/// ([`crate::levers::binding::hidden_by`]): never tried alone, but behind that
/// limit's change, in the set, when it helped; else listed untested.
#[derive(Clone, Debug, PartialEq)]
pub struct Hidden {
    /// The lever of the limit in front.
    pub front: String,
    /// Why it cannot bind alone.
    pub why: String,
    /// Its member of the set behind the front's change.
    pub member: Member,
}

impl Hidden {
    /// Lever `l`'s candidate `c` (replacing `from`) behind `front`.
    pub fn of(
        l: &crate::levers::Lever,
        from: &str,
        c: &crate::levers::Candidate,
        (front, why): (&str, &str),
    ) -> Hidden {
        Hidden {
            front: front.into(),
            why: why.into(),
            member: Member {
                lever: l.id.clone(),
                kind: l.kind,
                change: format!("{} {from} → {}", l.id, c.value),
                attr: l.attr.clone(),
                value: c.value.clone(),
                options: c.options.clone(),
                permanent: crate::levers::permanent(l, &[], c),
                alone_at: format!("not tried alone: {why}"),
                behind: true,
                ..Default::default()
            },
        }
    }
}

/// Each hidden limit that no set measured in `s`, listed untested with
/// why: the change in front of it did not help alone, or the changes
/// together were not measured.
pub fn untried_behind(s: &mut crate::trials::section::Section, hidden: &[&Hidden]) {
    let measured = |id: &str| {
        s.combination
            .iter()
            .flat_map(|c| &c.sets)
            .any(|set| set.turns.len() >= 2 && set.levers.iter().any(|l| l == id))
    };
    let helped: Vec<String> = helped(&s.trials).iter().map(|t| t.lever.clone()).collect();
    let mut out = Vec::new();
    for h in hidden.iter().filter(|h| !measured(&h.member.lever)) {
        let then = match helped.contains(&h.front) {
            true => "the two together were not measured",
            false => "that change did not help alone, so the two were not tried together",
        };
        out.push(trials::Untested {
            lever: h.member.lever.clone(),
            what: h.member.change.clone(),
            reason: trials::Reason::Behind,
            why: format!(
                "its limit binds only once {} is lifted ({}); {then}",
                h.front, h.why
            ),
            estimate: None,
            command: None,
        });
    }
    s.untested.extend(out);
}

/// Limits of the host tried behind the changes that helped, at most.
pub const MAX_BEHIND: usize = 2;

/// The trials of the host's caps (`raises_cap`: a request queue's size, a
/// request's, the study's group's limit) that bought nothing alone — no
/// gain, or too noisy to say, or worse where their limit did not bind at
/// their point — and are not among `helped`: each may bind
/// only once a change that helped lifts the limit in front of it (a CPU
/// quota behind a request queue of four), so the search measures them
/// behind those changes. One per lever, at most [`MAX_BEHIND`], in the
/// trials' order.
pub fn behind<'a>(
    trials: &'a [Trial],
    helped: &[&Trial],
    raises_cap: &dyn Fn(&str) -> bool,
) -> Vec<&'a Trial> {
    let mut out: Vec<&Trial> = Vec::new();
    for t in trials {
        let host = t.kind.ops().of_host() && raises_cap(&t.lever);
        // Measured worse where its limit did not bind at its point: the
        // loss is the move's or the noise's, not the limit's, which may
        // bind once the change in front of it is made (a throttle behind
        // a request size that split each read in 64).
        let unbound_worse = t.outcome == Outcome::Worse && t.unbound.is_some();
        let nothing = matches!(t.outcome, Outcome::NoGain | Outcome::TooNoisy) || unbound_worse;
        let known = helped.iter().chain(out.iter()).any(|h| h.lever == t.lever);
        if host && nothing && !known && out.len() < MAX_BEHIND {
            out.push(t);
        }
    }
    out
}

/// [`trials::MIN_SPREAD_PCT`] as a log ratio.
fn log_floor() -> f64 {
    (trials::MIN_SPREAD_PCT / 100.0).ln_1p()
}

/// A gain's log ratio, signed for the better.
fn score(g: &Gain) -> f64 {
    match g.metric.higher_is_better() {
        true => g.log_mean,
        false => -g.log_mean,
    }
}

/// Whether a set buys less than the best single change's gain `best`: a
/// set that did not help beyond the noise, or whose gain is below it.
pub fn less_than(s: &Set, best: &Gain) -> bool {
    match s.gain(best.metric) {
        Some(g) if s.outcome == Outcome::Better => score(g) < score(best),
        _ => true,
    }
}

/// Whether a set buys more than `best` beyond the noise: its gain less
/// twice its spread above the best single change's gain.
pub fn beats(s: &Set, best: &Gain) -> bool {
    match s.gain(best.metric) {
        Some(g) if s.outcome == Outcome::Better => {
            score(g) - 2.0 * g.log_spread.max(log_floor()) > score(best)
        }
        _ => false,
    }
}

/// A trial made behind another change (`t.behind`, both made in its
/// changed runs) against that change's own trial `front`: the pair is
/// credited to `t`'s limit only where it bought more than `front` alone
/// beyond the noise, as a set holding such a limit must
/// ([`Combination::keepable`]). Otherwise its limit did not bind, and the
/// trial says so and is no change that helped.
pub fn behind_front(t: &mut Trial, front: &Trial) {
    let Some(g) = t.main_gain().cloned() else {
        return;
    };
    let own = front.gains.iter().find(|f| f.metric == g.metric);
    let alone = own.map_or(0.0, score);
    if t.outcome != Outcome::Better || score(&g) - 2.0 * g.log_spread.max(log_floor()) > alone {
        return;
    }
    let front_words = match own {
        Some(f) => format!("{}'s own {:+.1} %", front.lever, f.change_pct),
        None => format!("what {} alone bought (not measured)", front.lever),
    };
    t.unbound = Some(format!(
        "behind {} lifted, the two together gained {:+.1} %, not beyond {front_words}",
        front.lever, g.change_pct
    ));
    t.outcome = Outcome::NoGain;
}

// The configuration's model is `record`'s; whether a set may be kept is
// its judgement, here.
impl Combination {
    /// Whether set `s` may be the configuration against the best single
    /// change's gain `best`: it bought more than that beyond the noise.
    /// Every change of a configuration earns its place there: one that
    /// adds nothing measurable to the best change (an idle-state hold
    /// beside a scheduler switch, or a limit that bought nothing alone,
    /// [`Member::behind`]) is not deployed for nothing.
    pub fn keepable(&self, s: &Set, best: &Gain) -> bool {
        if !beats(s, best) {
            return false;
        }
        // A cap that bought nothing alone, against the same set without it.
        match self.bare_measured(s).and_then(|b| b.gain(best.metric)) {
            Some(g) => beats(s, g),
            None => true,
        }
    }

    /// The levers of set `s` without its caps that bought nothing alone
    /// ([`Member::behind`]); None where it holds none.
    pub fn without_behind(&self, s: &Set) -> Option<Vec<String>> {
        let behind = |l: &String| self.changes.iter().any(|m| &m.lever == l && m.behind);
        let bare: Vec<String> = s.levers.iter().filter(|l| !behind(l)).cloned().collect();
        (bare.len() < s.levers.len()).then_some(bare)
    }

    /// The set measured that is `s` without its caps that bought nothing
    /// alone, if one was.
    fn bare_measured(&self, s: &Set) -> Option<&Set> {
        let bare = self.without_behind(s)?;
        self.sets.iter().find(|o| o.levers == bare)
    }
}

/// The next set the search measures: the whole set without one change,
/// the one that helped least alone first, never without the best single
/// change; None when the whole set bought at least the best single
/// change, a set measured since did, [`MAX_SUBSETS`] were measured, a
/// set failed, or a subset would be one change (that is the single
/// change's own trial). A set that bought enough but holds a cap that
/// bought nothing alone is first measured without that cap.
pub fn next_subset(c: &Combination) -> Option<Vec<String>> {
    let whole = c.sets.first()?;
    let best = c.best_gain()?;
    let failed = c.sets.iter().any(|s| s.turns.len() < 2);
    if c.sets.len() > MAX_SUBSETS || failed {
        return None;
    }
    if let Some(k) = c.sets.iter().find(|s| c.keepable(s, best)) {
        let measured = |b: &Vec<String>| c.sets.iter().any(|s| &s.levers == b);
        return c.without_behind(k).filter(|b| b.len() >= 2 && !measured(b));
    }
    if whole.levers.len() < 3 {
        return None;
    }
    let mut drop: Vec<&Member> = c
        .members_of(whole)
        .filter(|m| Some(&m.lever) != c.changes.first().map(|b| &b.lever))
        .collect();
    let alone = |m: &Member| m.alone.as_ref().map_or(f64::MIN, Gain::lower_bound);
    drop.sort_by(|a, b| alone(a).total_cmp(&alone(b)));
    let d = drop.get(c.sets.len() - 1)?;
    Some(
        whole
            .levers
            .iter()
            .filter(|l| **l != d.lever)
            .cloned()
            .collect(),
    )
}

/// Keep the first set that bought at least the best single change, else
/// the best single change's own trial `best`; say which, and why. Both
/// are weighed on the combination's measure: a job's metric, where the
/// best change's own trial was judged on another (the CPUs held out of
/// idle states, on its mean latency).
pub fn choose(c: &mut Combination, best: &Trial) {
    let single = Set::of_trial(best);
    let Some(bg) = best.gain_on(c.measure).cloned() else {
        c.kept = single;
        return;
    };
    let kept = c.sets.iter().position(|s| c.keepable(s, &bg));
    c.beats_best = kept.is_some_and(|i| beats(&c.sets[i], &bg));
    c.words = words(c, kept, &bg);
    c.kept = kept.map_or(single, |i| c.sets[i].clone());
}

/// What a set leaves out of the whole one, in words: `without rq-affinity`.
pub(crate) fn without(c: &Combination, s: &Set) -> String {
    let gone: Vec<&str> = c.sets.first().map_or(Vec::new(), |w| {
        w.levers
            .iter()
            .filter(|l| !s.levers.contains(l))
            .map(String::as_str)
            .collect()
    });
    format!("without {}", gone.join(", "))
}

/// What each set measured bought on `metric`: `the whole set +31.0 % ±
/// 4.0 %; without rq-affinity +40.2 % ± 3.1 %`.
fn sets_bought(c: &Combination, metric: Metric) -> String {
    let each = c.sets.iter().enumerate().map(|(i, s)| {
        let name = match i {
            0 => "the whole set".to_string(),
            _ => without(c, s),
        };
        match s.gain(metric) {
            Some(g) => format!("{name} {}", trials::fmt_gain(g)),
            None => format!("{name} not measured"),
        }
    });
    each.collect::<Vec<_>>().join("; ")
}

/// What the sets said, `kept` the index of the set kept.
fn words(c: &Combination, kept: Option<usize>, best: &Gain) -> String {
    let best_words = format!(
        "{} ({} {})",
        c.changes.first().map_or("", |m| m.change.as_str()),
        best.metric.label(),
        trials::fmt_gain(best)
    );
    if let Some(why) = &c.not_measured {
        return format!(
            "the changes together were not measured: {why}; the configuration is the best single change, {best_words}, as its own trial measured it"
        );
    }
    if c.sets.is_empty() {
        return format!("one change helped beyond the noise: the configuration is that change, {best_words}, as its own trial measured it");
    }
    if kept.is_none() && c.sets.iter().all(|s| s.turns.len() < 2) {
        return format!(
            "the changes together could not be measured ({}); the configuration is the best single change, {best_words}, as its own trial measured it",
            c.sets[0].error.as_deref().unwrap_or("too few turns")
        );
    }
    // A limit hidden behind another was not tried alone: it could not bind.
    let alone = |m: &Member| match m.alone {
        Some(_) => format!("{} bought nothing alone", m.change),
        None => format!("{} could not bind alone", m.change),
    };
    let behind: Vec<String> = kept
        .map(|k| {
            c.members_of(&c.sets[k])
                .filter(|m| m.behind)
                .map(alone)
                .collect()
        })
        .unwrap_or_default();
    if !behind.is_empty() {
        let apart = kept
            .and_then(|k| c.bare_measured(&c.sets[k]))
            .and_then(|b| {
                Some(format!(
                    "; {} they bought {}",
                    without(c, b),
                    trials::fmt_gain(b.gain(best.metric)?)
                ))
            })
            .unwrap_or_default();
        return format!(
            "together they bought more than the best single change, {best_words}, beyond the noise: {}, its limit binds once the change in front of it is made{apart}",
            behind.join(" and ")
        );
    }
    // The whole set bought enough, but no more than without its caps.
    if let Some((k, w)) = kept.filter(|k| *k > 0).zip(c.sets.first()) {
        let bare = &c.sets[k];
        if c.bare_measured(w) == Some(bare) {
            let caps: Vec<&str> = c
                .members_of(w)
                .filter(|m| m.behind)
                .map(|m| m.change.as_str())
                .collect();
            return format!(
                "together they bought more than the best single change, {best_words}, beyond the noise, but no more than the set {}{}: {} bought nothing alone, nor behind the others; kept that set",
                without(c, bare),
                bare.gain(best.metric).map_or(String::new(), |g| format!(" ({})", trials::fmt_gain(g))),
                caps.join(" and ")
            );
        }
    }
    let extra: Vec<&Member> = c.changes.iter().skip(1).collect();
    if kept.is_none() && !extra.is_empty() && extra.iter().all(|m| m.behind) {
        let names: Vec<&str> = extra.iter().map(|m| m.change.as_str()).collect();
        return format!(
            "{} bought nothing alone, nor behind the best single change: the configuration is that change, {best_words}, as its own trial measured it",
            names.join(" and ")
        );
    }
    let matched = c.sets.iter().find(|s| !less_than(s, best));
    match kept {
        Some(0) => format!(
            "together they bought more than the best single change, {best_words}, beyond the noise"
        ),
        None if matched.is_some() => format!(
            "together they bought {}, not more than the best single change, {best_words}, beyond the noise: a change that adds nothing measurable is left out, so the configuration is that change alone, as its own trial measured it",
            matched
                .and_then(|s| s.gain(best.metric))
                .map_or("as much".into(), trials::fmt_gain)
        ),
        Some(k) => {
            let (bought, why) = match less_than(&c.sets[0], best) {
                true => ("less", ": the changes interact"),
                false => ("no more", " beyond the noise"),
            };
            format!(
                "the whole set bought {bought}{} than its best single change, {best_words}{why}; kept the best set measured, {}",
                c.sets[0]
                    .gain(best.metric)
                    .map_or(String::new(), |g| format!(" ({})", trials::fmt_gain(g))),
                without(c, &c.sets[k])
            )
        }
        None => format!(
            "the {} measured bought less than the best single change, {best_words}; {}: the changes interact; kept the best single change alone, as its own trial measured it",
            if c.sets.len() == 1 { "whole set" } else { "sets" },
            sets_bought(c, best.metric)
        ),
    }
}

/// The configuration and what it bought together, in a few words:
/// `scheduler mq-deadline → none + nr-requests 4 → 64: IOPS +61.0 % ±
/// 1.2 % over 3 turns`.
pub fn result_words(c: &Combination) -> String {
    let how = match c.kept.single {
        true => "alone",
        false => "together",
    };
    match c.kept_gain() {
        Some(g) => format!(
            "{}: {} {} {how} over {} turns",
            c.kept_words(),
            g.metric.label(),
            trials::fmt_gain(g),
            c.kept.turns.len()
        ),
        None => format!("{}: not measured", c.kept_words()),
    }
}

/// The section's answer where the configuration is more than one change
/// that helped together beyond the noise; else `answer` as it was.
pub fn answer(c: &Combination, answer: &str) -> String {
    let together = !c.kept.single && c.kept.outcome == Outcome::Better;
    match together {
        true => format!(
            "the configuration to deploy: {}, beyond the noise{}",
            result_words(c),
            match c.beats_best {
                true => ", more than its best single change",
                false => "",
            }
        ),
        false if c.changes.iter().skip(1).all(|m| m.behind) => answer.to_string(),
        false if c.sets.iter().any(|s| s.turns.len() >= 2) => {
            format!("{answer}; the changes together bought less (see the configuration above)")
        }
        false if !c.sets.is_empty() => format!(
            "{answer}; the changes together could not be measured (see the configuration above)"
        ),
        false => answer.to_string(),
    }
}

#[cfg(test)]
#[path = "combination_tests.rs"]
mod tests;
