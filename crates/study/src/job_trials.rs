//! The host's changes tried on the job as written
//! (`study --job FILE --try-changes`, root): each lever planned by
//! [`crate::job_levers`] in turns — the job, then the job with the change,
//! then the change first, pair by pair, so that a drift favours neither —
//! the change made before its run and put back after it, through the
//! same [`Hands`] as the device study's trials (each original journaled
//! and restored, the study's process moved to groups of its own and
//! back). Each trial is judged as the device study judges its own
//! ([`trials::judge_trial`]). A change that could not be put back stops
//! the trials. The changes that helped are made together for the job's
//! best configuration ([`together`]).

use crate::job::request;
use crate::job::RunFigures;
use crate::job_levers::{Planned, Setting};
use crate::trials::{Change, Hands};
use serde::{Deserialize, Serialize};
use ssdready_core::options::Section;
use ssdready_diagnosis::levers::{self, Apply, Kind};
use ssdready_diagnosis::trials::{self, Measured, Outcome, Reason, Trial, Turn, Untested};
use ssdready_measured::group_limits::{self, Lift};
use ssdready_run::RunFn;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

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

/// What the host's trials run with: the setting they were planned on and
/// the hands that make each change.
pub struct Host<'a> {
    pub setting: Setting,
    pub hands: &'a mut dyn Hands,
}

/// The runs the trials of `planned` take.
pub fn runs(planned: &[Planned]) -> usize {
    planned.len() * 2 * trials::MIN_PAIRS
}

/// A run's figures as a trial compares them: both directions' rates, the
/// I/Os' mean latency, the worse direction's p99.
pub fn measured(f: &RunFigures) -> Measured {
    let dirs: Vec<&crate::job::Dir> = [&f.together.read, &f.together.write]
        .into_iter()
        .flatten()
        .collect();
    let iops = f.iops();
    Measured {
        iops,
        bw_bytes_per_s: f.bandwidth(),
        lat_mean_ns: dirs.iter().map(|d| d.lat_mean_ns * d.iops).sum::<f64>() / iops.max(1e-9),
        lat_p99_ns: dirs.iter().filter_map(|d| d.lat_p99_ns).max().unwrap_or(0) as f64,
        cpu_ns_per_io: None,
    }
}

/// The change of the host a planned lever makes (a limit of the study's
/// groups lifts its own, the others kept).
fn change_of(host: &mut Host, p: &Planned) -> Result<Box<dyn Change>, String> {
    let lift = p.lever.lifted(host.setting.limits.as_ref());
    match p.lever.apply(&p.candidate, &lift) {
        Apply::Queue { attr, value } => host.hands.queue(&host.setting.disks, &attr, &value),
        Apply::Escape(lift) => host.hands.escape(&lift),
        Apply::Options(_) => Err("an option of the job is one of its variants".into()),
    }
}

/// Try each planned lever on the job as written, into the host section
/// (with the levers not tried, `untested`).
pub fn run(
    sections: &[Section],
    host: &mut Host,
    planned: Vec<Planned>,
    untested: Vec<Untested>,
    run: &mut RunFn,
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) -> HostSection {
    let mut s = HostSection {
        asked: host.setting.consent.asked,
        at: "the job as written".into(),
        untested,
        ..Default::default()
    };
    let mut fatal: Option<String> = None;
    for p in planned {
        let why = match (&fatal, stop.load(Relaxed)) {
            (Some(e), _) => Some((Reason::Unavailable, format!("the trials stopped: {e}"))),
            (None, true) => Some((Reason::Stopped, "the study was stopped first".into())),
            _ => None,
        };
        if let Some((reason, why)) = why {
            s.untested.push(Untested {
                lever: p.lever.id.clone(),
                what: format!("{} → {}", p.lever.what, p.candidate.value),
                reason,
                why,
                estimate: None,
                command: None,
            });
            continue;
        }
        tell(format!(
            "the job with {} → {}, in turns against it as written, put back after each run",
            p.lever.id, p.candidate.value
        ));
        let (trial, stopped) = one(sections, host, &p, run, stop);
        if stopped {
            fatal = trial.error.clone();
        }
        s.trials.push(trial);
    }
    trials::rank(&mut s.trials);
    s
}

/// One lever in [`trials::MIN_PAIRS`] turns. Returns the trial and whether
/// the trials must stop (its change could not be put back).
fn one(
    sections: &[Section],
    host: &mut Host,
    p: &Planned,
    run: &mut RunFn,
    stop: &Arc<AtomicBool>,
) -> (Trial, bool) {
    let l = &p.lever;
    let disks = match l.kind {
        Kind::Queue => host.setting.disks.clone(),
        _ => Vec::new(),
    };
    let cx = host.setting.context();
    let point = crate::job_levers::point(sections);
    let mut trial = Trial {
        lever: l.id.clone(),
        kind: l.kind,
        what: l.what.clone(),
        from: match l.kind {
            Kind::Queue => levers::current(l, &cx).unwrap_or_default(),
            _ => "in the study's group".into(),
        },
        to: p.candidate.value.clone(),
        devices: disks.clone(),
        at: "the job as written".into(),
        point,
        measure: l.measure,
        permanent: levers::permanent(l, &disks, &p.candidate),
        undo: l.undo.clone(),
        ..Default::default()
    };
    let mut change = match change_of(host, p) {
        Ok(c) => c,
        Err(e) => {
            trial.outcome = Outcome::Failed;
            trial.error = Some(e);
            return (trial, false);
        }
    };
    let mut fatal = false;
    for i in 0..trials::MIN_PAIRS {
        if stop.load(Relaxed) {
            trial.error = Some("the study was stopped".into());
            break;
        }
        crate::invariants::turn_order(trial.turns.len(), i % 2 == 1);
        match turn((sections, sections), change.as_mut(), run, stop, i % 2 == 1) {
            Ok(t) => trial.turns.push(t),
            Err((e, f)) => {
                trial.error = Some(e);
                fatal = f;
                break;
            }
        }
    }
    if trial.turns.is_empty() && trial.error.is_some() {
        trial.outcome = Outcome::Failed;
    }
    trials::judge_trial(&mut trial);
    trial.unbound = ssdready_diagnosis::binding::did_not_bind(l, &cx, &trial);
    crate::trials::permanent_lines(&mut trial, l, host.setting.limits.as_ref());
    (trial, fatal)
}

/// One run of `sections`, measured.
fn measure(
    sections: &[Section],
    run: &mut RunFn,
    stop: &Arc<AtomicBool>,
) -> Result<Measured, String> {
    match run(&request(sections, stop)) {
        Ok(r) => Ok(measured(&RunFigures::of(&r))),
        Err(e) => Err(e.message().to_string()),
    }
}

/// One turn: the job as written (`base`) and the changed job (`changed`,
/// the host's change made before its run, put back after it), the change
/// first when `change_first`. An error, and whether the trials must stop.
pub fn turn(
    (sections, changed_job): (&[Section], &[Section]),
    change: &mut dyn Change,
    run: &mut RunFn,
    stop: &Arc<AtomicBool>,
    change_first: bool,
) -> Result<Turn, (String, bool)> {
    let changed = |run: &mut RunFn, change: &mut dyn Change| {
        crate::invariants::changed_run(change, || measure(changed_job, run, stop))
    };
    let base = |run: &mut RunFn| measure(sections, run, stop).map_err(|e| (e, false));
    let (baseline, change) = match change_first {
        true => {
            let c = changed(run, change)?;
            (base(run)?, c)
        }
        false => {
            let b = base(run)?;
            (b, changed(run, change)?)
        }
    };
    Ok(Turn { baseline, change })
}

/// The changes that helped beyond the noise, one per lever, best first.
pub fn helped(s: &HostSection) -> Vec<&Trial> {
    ssdready_diagnosis::combination::helped(&s.trials)
}

/// Several changes made as one: in order, and put back in reverse.
struct Together(Vec<Box<dyn Change>>);

impl Change for Together {
    fn apply(&mut self) -> Result<(), String> {
        for i in 0..self.0.len() {
            if let Err(e) = self.0[i].apply() {
                for c in self.0[..i].iter_mut().rev() {
                    c.revert()?;
                }
                return Err(e);
            }
        }
        Ok(())
    }

    fn revert(&mut self) -> Result<(), String> {
        let bad: Vec<String> = self
            .0
            .iter_mut()
            .rev()
            .filter_map(|c| c.revert().err())
            .collect();
        match bad.is_empty() {
            true => Ok(()),
            false => Err(bad.join("; ")),
        }
    }
}

/// No change of the host (a best configuration of the job's own options).
pub fn no_change() -> Box<dyn Change> {
    Box::new(Together(Vec::new()))
}

/// The host's changes that helped, as one change: the queue settings in
/// one order (the scheduler first: a switch resets `nr_requests`), the
/// limits of the study's groups lifted by one move.
pub fn together(host: &mut Host, helped: &[&Trial]) -> Result<Box<dyn Change>, String> {
    let mut queue: Vec<&&Trial> = helped.iter().filter(|t| t.kind == Kind::Queue).collect();
    let table = levers::shipped();
    let lever = |t: &Trial| table.iter().find(|l| l.id == t.lever);
    let attr = |t: &Trial| lever(t).and_then(|l| l.attr.clone()).unwrap_or_default();
    queue.sort_by_key(|t| attr(t) != "scheduler");
    let mut out: Vec<Box<dyn Change>> = Vec::new();
    for t in queue {
        out.push(host.hands.queue(&host.setting.disks, &attr(t), &t.to)?);
    }
    let lifts: Vec<Lift> = helped
        .iter()
        .filter(|t| t.kind == Kind::Cgroup)
        .filter_map(|t| lever(t)?.lift())
        .map(|g| group_limits::lift(g, host.setting.limits.as_ref()))
        .collect();
    if let Some(first) = lifts.first() {
        let lift = lifts[1..].iter().fold(first.clone(), |a, b| a.with(b));
        out.push(host.hands.escape(&lift)?);
    }
    Ok(Box::new(Together(out)))
}

/// The host's changes in words: each tried, its result and how it was put
/// back; each not tried with why, and how to ask where a command would.
pub fn words(s: &HostSection) -> String {
    let mut out = String::new();
    if !s.trials.is_empty() {
        out.push_str(
            "changes of the host, each in turns against the job as written and put back after each run:\n",
        );
    }
    for t in &s.trials {
        let result = match (&t.error, t.turns.is_empty()) {
            (Some(e), true) => format!("not measured: {e}"),
            _ => format!(
                "{}, {}",
                trials::result_words(t),
                ssdready_diagnosis::trials::noise_words(t)
            ),
        };
        out.push_str(&format!("  {}: {result}\n", t.change()));
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

#[cfg(test)]
#[path = "job_trials_tests.rs"]
mod tests;
