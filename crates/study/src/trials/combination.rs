//! The configuration measured as a whole, after the single trials: every
//! change that helped beyond the noise, and behind them the host's limits
//! that bought nothing alone (each may bind only once a limit in front of
//! it is lifted), applied together at the best single change's point and
//! run in turns against the baseline like each one was — the order alternating pair by pair, as many pairs as the
//! single trials took where the budget still has them. The host's changes
//! (queue settings, the scheduler first; the study's own group) are all
//! made before each changed run and put back after it in the reverse
//! order; the application's choices are merged into the changed run's
//! options. Which changes go together, why at that point, and the search
//! for a subset where the whole set buys less than its best change are
//! judged purely by `ssdready_diagnosis::trials::combination`; this runs them.

use super::{changed, in_turns, queue_disks, Options, Runs, Together, Trials};
use crate::plan::{Plan, Workload};
use ssdready_diagnosis::levers::{Candidate, Lever, Metric};
use ssdready_diagnosis::trials::combination::{
    self as model, Combination, Hidden, LeftOut, Member, Set,
};
use ssdready_diagnosis::trials::plan::{self as trials_plan, Planned};
use ssdready_diagnosis::trials::section::Section;
use ssdready_diagnosis::trials::{self, Outcome, Trial};
use ssdready_measured::group_limits::Lift;
use ssdready_measured::record::TargetProfile;
use std::time::Instant;

/// A candidate tried alone: its lever, the candidate, and the workload
/// of its point.
pub(super) struct Tried {
    pub lever: Lever,
    pub candidate: Candidate,
    pub workload: Workload,
    /// What a cgroup lever lifted ([`super::lift_of`]).
    pub lift: Lift,
    /// Not tried alone: its limit is hidden behind another's.
    pub behind: Option<Hidden>,
}

/// The trials' clock: the time spent, by the clock or by the runs'
/// planned length where more (a run's start-up is part of it).
pub(super) struct Clock {
    pub started: Instant,
    pub runs_done: usize,
    pub per_run: f64,
    pub budget_s: f64,
    /// The pairs a trial takes, time allowing.
    pub want: usize,
}

impl Tried {
    pub(super) fn of(p: &Planned, c: &Candidate, w: &Workload, lift: Lift) -> Tried {
        Tried {
            lever: p.lever.clone(),
            candidate: c.clone(),
            workload: w.clone(),
            lift,
            behind: None,
        }
    }
}

impl Clock {
    /// The trials' clock, started now: as many pairs as a quick or a full
    /// study's trials take, runs of the plan's length.
    pub(super) fn new(plan: &Plan, o: &Options) -> Clock {
        Clock {
            started: Instant::now(),
            runs_done: 0,
            per_run: plan.settings.runtime_s + plan.settings.ramp_s + plan.overhead_s,
            budget_s: o.budget_s,
            want: match o.quick {
                true => trials::MIN_PAIRS,
                false => trials::FULL_PAIRS,
            },
        }
    }

    /// The pairs that still fit in the budget (none under the least), each
    /// run taking the plan's length or, where longer, what the trials'
    /// runs so far took.
    pub(super) fn pairs(&self) -> usize {
        let clock = self.started.elapsed().as_secs_f64();
        let spent = clock.max(self.runs_done as f64 * self.per_run);
        let pace = match self.runs_done {
            0 => self.per_run,
            n => self.per_run.max(clock / n as f64),
        };
        trials_plan::pairs_that_fit(self.want, self.budget_s - spent, pace)
    }
}

/// Measure the changes that helped together, keep the configuration and
/// lead the section's answer with it. Nothing when none helped.
pub(super) fn run(
    x: &mut Trials,
    t: &TargetProfile,
    s: &mut Section,
    tried: &[Tried],
    clock: &mut Clock,
) {
    let helped = model::helped(&s.trials);
    let Some(&best) = helped.first() else {
        return;
    };
    let find = |tr: &Trial| {
        tried
            .iter()
            .find(|x| x.lever.id == tr.lever && x.candidate.value == tr.to)
    };
    let Some(point) = find(best).map(|b| b.workload.clone()) else {
        return;
    };
    let (mut parts, left_out) = gather(&helped, &find, best);
    // The host's limits that bought nothing alone, behind those that
    // helped: a limit may bind only once the one in front of it is lifted.
    let cap = |id: &str| {
        tried
            .iter()
            .any(|x| x.lever.id == id && x.lever.raises_cap())
    };
    // A limit hidden behind one that helped: tried behind it, never alone.
    for x in tried.iter().filter(|x| x.lever.ops().lifts_group()) {
        let Some(h) = &x.behind else { continue };
        if parts.iter().any(|p| p.0.lever == h.front) && conflict(&parts, &x.candidate).is_none() {
            parts.push((h.member.clone(), x));
        }
    }
    for tr in model::behind(&s.trials, &helped, &cap) {
        match find(tr) {
            Some(x) if conflict(&parts, &x.candidate).is_none() => {
                let m = Member {
                    behind: true,
                    ..member(tr, x, best.measure)
                };
                parts.push((m, x));
            }
            _ => {}
        }
    }
    let mut c = Combination {
        at: best.at.clone(),
        point: best.point.clone(),
        measure: best.measure,
        changes: parts.iter().map(|p| p.0.clone()).collect(),
        left_out,
        ..Default::default()
    };
    if parts.len() >= 2 {
        let parts: Vec<&Tried> = applied_order(parts.iter().map(|p| p.1).collect());
        measure_sets(x, t, &mut c, &parts, &point, clock);
    }
    model::choose(&mut c, best);
    s.answer = model::answer(&c, &s.answer);
    s.combination = Some(c);
}

/// A change of the set: its member, and what it was tried with.
type Part<'a> = (Member, &'a Tried);

/// The changes that go together, best first, and those left out: an
/// application's choices only where their trial ran at the best change's
/// point, and not where they set an option a better change sets
/// otherwise.
fn gather<'a>(
    helped: &[&Trial],
    find: &dyn Fn(&Trial) -> Option<&'a Tried>,
    best: &Trial,
) -> (Vec<Part<'a>>, Vec<LeftOut>) {
    let mut parts: Vec<Part<'a>> = Vec::new();
    let mut left = Vec::new();
    for &tr in helped {
        let Some(x) = find(tr) else {
            continue;
        };
        let out = |why: String| LeftOut {
            lever: tr.lever.clone(),
            change: tr.change(),
            why,
        };
        if !x.lever.ops().of_host() && tr.point != best.point {
            left.push(out(format!(
                "its options were made for {}; at {} they would be another change",
                tr.at, best.at
            )));
            continue;
        }
        if let Some(why) = conflict(&parts, &x.candidate) {
            left.push(out(why));
            continue;
        }
        parts.push((member(tr, x, best.measure), x));
    }
    (parts, left)
}

/// The option a candidate sets that a change already in the set sets
/// otherwise, in words.
fn conflict(parts: &[Part], c: &Candidate) -> Option<String> {
    for (m, x) in parts {
        for (k, v) in &c.options {
            if let Some((_, w)) = x.candidate.options.iter().find(|(j, w)| j == k && w != v) {
                return Some(format!(
                    "it sets {k}={v}, against {k}={w} of {}, which helped more",
                    m.change
                ));
            }
        }
    }
    None
}

fn member(tr: &Trial, x: &Tried, on: Metric) -> Member {
    Member {
        lever: tr.lever.clone(),
        kind: tr.kind,
        change: tr.change(),
        attr: x.lever.attr.clone(),
        devices: tr.devices.clone(),
        value: tr.to.clone(),
        options: x.candidate.options.clone(),
        permanent: tr.permanent.clone(),
        alone: tr.gain_on(on).cloned(),
        alone_at: tr.at.clone(),
        behind: false,
    }
}

/// The order the changes are made in ([`model::order`]: the scheduler
/// first, then the queue's other settings, the study's own group, the
/// application's choices).
fn applied_order(mut parts: Vec<&Tried>) -> Vec<&Tried> {
    parts.sort_by_key(|p| p.lever.ops().order(p.lever.attr.as_deref()));
    parts
}

/// The whole set, then the subsets the search asks for, each while the
/// budget has its pairs.
fn measure_sets(
    x: &mut Trials,
    t: &TargetProfile,
    c: &mut Combination,
    parts: &[&Tried],
    point: &Workload,
    clock: &mut Clock,
) {
    let mut levers: Vec<String> = parts.iter().map(|p| p.lever.id.clone()).collect();
    loop {
        let pairs = clock.pairs();
        let why = match () {
            _ if x.runner.stopped() => "the study was stopped first",
            _ if pairs == 0 => "no time left in the budget for its turns",
            _ => "",
        };
        if !why.is_empty() {
            if c.sets.is_empty() {
                c.not_measured = Some(why.into());
            }
            return;
        }
        let set: Vec<&Tried> = levers
            .iter()
            .filter_map(|l| parts.iter().find(|p| &p.lever.id == l).copied())
            .collect();
        let (measured, fatal) = measure_set(x, t, &set, point, (pairs, c.measure));
        clock.runs_done += 2 * measured.turns.len();
        c.sets.push(measured);
        match model::next_subset(c) {
            Some(next) if !fatal => levers = next,
            _ => return,
        }
    }
}

/// One set in `pairs` turns, judged on `measure`. Returns the set and
/// whether the trials must stop (a change that could not be put back).
fn measure_set(
    x: &mut Trials,
    t: &TargetProfile,
    parts: &[&Tried],
    w: &Workload,
    (pairs, measure): (usize, ssdready_diagnosis::levers::Metric),
) -> (Set, bool) {
    let mut cw = w.clone();
    let mut extra = Vec::new();
    for p in parts.iter().filter(|p| !p.lever.ops().of_host()) {
        let (next, e) = changed(&cw, &p.candidate);
        cw = next;
        extra.extend(e);
    }
    let base_req = crate::jobs::request(w, x.targets, &x.plan.settings, false);
    let mut change_req = crate::jobs::request(&cw, x.targets, &x.plan.settings, false);
    for (k, v) in &extra {
        change_req.set(k, v);
    }
    let mut set = Set {
        levers: parts.iter().map(|p| p.lever.id.clone()).collect(),
        baseline_options: base_req.command_line(),
        change_options: change_req.command_line(),
        ..Default::default()
    };
    let fatal = match together(x, t, parts) {
        Ok(mut all) => {
            let mut sides = Runs {
                runner: &mut *x.runner,
                base: (w, &base_req),
                change: (&cw, &change_req),
            };
            let done = in_turns(&mut sides, &mut all, pairs);
            (set.turns, set.error) = (done.turns, done.error);
            if done.failed {
                set.outcome = Outcome::Failed;
            }
            done.fatal
        }
        Err(e) => {
            set.outcome = Outcome::Failed;
            set.error = Some(e);
            false
        }
    };
    model::judge_set(&mut set, measure);
    (set, fatal)
}

/// The host's changes of the set, in the order they are made
/// ([`Together::made`]: the cgroup limits of the set lifted by one move
/// out of the groups, every lifted limit's hierarchy left, the rest kept).
fn together(x: &mut Trials, t: &TargetProfile, parts: &[&Tried]) -> Result<Together, String> {
    let changes = parts
        .iter()
        .map(|p| (&p.lever, p.lever.apply(&p.candidate, &p.lift)))
        .collect();
    Together::made(x.hands, &queue_disks(t), changes)
}

#[cfg(test)]
#[path = "combination_tests.rs"]
mod tests;
