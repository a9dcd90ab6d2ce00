//! The study's steps after its plan ([`crate::session`]): the plan's runs
//! while they fit in the sweeps' share of the budget's clock, the capacity
//! at a latency target, the scheduler restored; the files the study
//! created removed; the kernel drive's transport measured and taken out;
//! the runs judged; the applications section; the trials (the changes the
//! findings point at, tried in turns through the caller's hands and put
//! back); the document's body.

use crate::capacity::CapacityDoc;
use crate::clock::{self, Clock, Deadline};
use crate::driver::{self, Executed};
use crate::model::{Skip, StudyDoc};
use crate::plan::Plan;
use crate::session_parts::{Allowed, MakeHands, Observer, Options, Run};
use crate::trials::{self as tried, Trials};
use crate::{app_runs as apps, kdrive, real, slo, Judgement};
use ssdready_diagnosis::limit::caps::Caps;
use ssdready_diagnosis::trials_section::Section;
use ssdready_measured::limits::Inventory;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile};
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;

/// What the steps work from.
pub(crate) struct Steps<'a> {
    pub o: &'a Options,
    pub run: &'a Run<'a>,
    pub targets: Vec<TargetProfile>,
    pub plan: Plan,
    pub dir: &'a Path,
    pub clock: &'a Clock,
    pub machine: Machine,
    /// Why the devices' settings may not be changed, if so.
    pub refused: Option<String>,
    /// The target is the drive the study put behind the kernel.
    pub made_by_study: bool,
    /// What can cap the study's I/O, read before its runs.
    pub limits: Inventory,
}

/// The sweeps, the judgement, the applications section and the trials;
/// the document's body (its header is the caller's).
pub(crate) fn run_all(mut s: Steps, hands: &MakeHands, obs: &mut dyn Observer) -> StudyDoc {
    let (quick, stop) = (s.o.ask.quick, &s.o.stop);
    let after = s
        .clock
        .keeping(clock::before_trials_s(&s.plan, s.clock.budget_s(), quick));
    let (ex, capacity, mut warnings) = run_sweeps(&s, &after, obs);
    remove_created(&s.targets, &mut warnings);
    s.machine.tsc_hz = tsc_hz(&ex.runs);
    let caps = Caps::of(&s.limits);
    let (mut j, app_skips) = judge(
        &s,
        (&caps, &after),
        &ex,
        capacity.as_ref(),
        &mut warnings,
        obs,
    );
    let (section, notes) = trials(&s, &ex.runs, &mut j, hands, obs);
    warnings.extend(notes);
    // A stop during the applications section interrupts the study too: the
    // document, the exit code (130) and the history say so.
    let interrupted = ex.interrupted || stop.load(Relaxed);
    StudyDoc {
        targets: s.targets,
        machine: s.machine,
        plan: s.plan.doc(),
        skipped: [s.plan.skipped.clone(), app_skips, ex.skipped].concat(),
        runs: ex.runs,
        figures: j.figures,
        facts: j.facts,
        verdicts: j.verdicts,
        interrupted,
        warnings,
        capacity,
        limits: Some(s.limits),
        trials: section,
        ..Default::default()
    }
}

/// A runner of real runs through the caller's run function.
fn runner<'a>(s: &Steps<'a>) -> real::RealRunner<'a> {
    let run = s.run;
    real::RealRunner::new(s.o.stop.clone(), &s.targets, Box::new(move |r| run(r)))
}

/// The plan's runs, each while it fits in the sweeps' share of the
/// budget's clock, then the search for the capacity at a latency target
/// when it fits before `after`; the scheduler restored after them. Returns
/// the runs (with what the clock dropped), the capacity and the runner's
/// notes.
fn run_sweeps(
    s: &Steps,
    after: &Deadline,
    obs: &mut dyn Observer,
) -> (Executed, Option<CapacityDoc>, Vec<String>) {
    let (p, quick, stop) = (&s.plan, s.o.ask.quick, &s.o.stop);
    let sweeps = s
        .clock
        .keeping(clock::after_sweeps_s(p, s.clock.budget_s(), quick));
    obs.sweeps(p);
    let mut runner = runner(s);
    let mut ex = driver::execute(&s.targets, p, &mut runner, obs, &sweeps);
    // Each run's start-up, as the sweeps' runs took it.
    let overhead_s = ex.per_run_s - p.settings.runtime_s - p.settings.ramp_s;
    let within = (after, overhead_s.max(p.overhead_s));
    let capacity = match s.o.ask.slo() {
        Some(_) if ex.interrupted || stop.load(Relaxed) => None,
        Some(slo) => {
            slo::capacity_within(&slo, &s.targets, p, &mut runner, within).unwrap_or_else(|skip| {
                ex.skipped.push(skip);
                None
            })
        }
        None => None,
    };
    if let Some(c) = &capacity {
        obs.block(&slo::text(c));
    }
    if let Err(w) = runner.restore() {
        obs.warn(&w.to_string());
    }
    obs.sweeps_done();
    let warnings = std::mem::take(&mut runner.notes);
    (ex, capacity, warnings)
}

/// The TSC's rate, from the first run that read it.
fn tsc_hz(runs: &[RunRecord]) -> Option<f64> {
    runs.iter()
        .find_map(|r| r.result.as_ref().and_then(|x| x.clock.tsc_hz))
}

/// Remove the target files the study created, each with a warning.
fn remove_created(targets: &[TargetProfile], warnings: &mut Vec<String>) {
    for t in targets.iter().filter(|t| t.created_by_study) {
        if std::fs::remove_file(&t.spec).is_ok() {
            warnings.push(format!("removed {}, which the study created", t.spec));
        }
    }
}

/// The kernel drive's transport, measured with a zero-time drive (or the
/// measurement kept for this kernel and boot); None, with a warning, when
/// it could not be measured or measuring it would not fit before `after`.
fn calibrate(
    s: &Steps,
    (runs, transport, after): (&[RunRecord], &str, &Deadline),
    warnings: &mut Vec<String>,
    obs: &mut dyn Observer,
) -> Option<ssdready_diagnosis::calibration::Calibration> {
    if let (_, Some(line)) = crate::calibrate::cache_base() {
        warnings.push(line);
    }
    let run = s.run;
    let mut job = move |r: &ssdready_run::RunRequest| run(r);
    let with = (&mut job as &mut ssdready_run::RunFn<'_>, &*s.o.stop);
    let runtime_s = s.plan.settings.runtime_s;
    match crate::calibrate::for_runs(runs, transport, runtime_s, with, after) {
        Ok(c) => {
            obs.note(&c.note());
            Some(c)
        }
        Err(e) => {
            warnings.push(format!("the drive's transport was not taken out: {e}"));
            None
        }
    }
}

/// The figures, facts and verdicts of the runs (the kernel drive's
/// transport measured and taken out), with the applications section's
/// points when it runs (not after an interruption); returns the judgement
/// and what the applications section skipped.
fn judge(
    s: &Steps,
    (caps, after): (&Caps, &Deadline),
    ex: &Executed,
    capacity: Option<&CapacityDoc>,
    warnings: &mut Vec<String>,
    obs: &mut dyn Observer,
) -> (Judgement, Vec<Skip>) {
    let interrupted = ex.interrupted || s.o.stop.load(Relaxed);
    let transport = kdrive::transport_of(&s.targets[0].spec);
    let calibration = match (&transport, interrupted) {
        (Some(t), false) => calibrate(s, (&ex.runs, &t.name, after), warnings, obs),
        _ => None,
    };
    let mut j = crate::judge_with(
        &s.targets,
        &s.machine,
        &ex.runs,
        interrupted,
        crate::Beside {
            capacity,
            transport: transport.as_ref(),
            calibration: calibration.as_ref(),
            caps: Some(caps),
        },
    );
    if let Some(c) = &calibration {
        crate::calibrate::forget_if_beaten(c, &j.figures);
    }
    let skipped = if interrupted {
        Vec::new()
    } else {
        applications(s, after, &mut j, obs)
    };
    (j, skipped)
}

/// The applications section, when the study runs it (a full study, or one
/// that names it): its points added to the judgement; returns what it
/// skipped.
fn applications(
    s: &Steps,
    after: &Deadline,
    j: &mut Judgement,
    obs: &mut dyn Observer,
) -> Vec<Skip> {
    let a = &s.o.ask;
    let named = a.sweeps.iter().any(|x| x == "applications");
    if a.quick && !named {
        return Vec::new();
    }
    let raw = j.figures.device_limit.iops;
    let ask = apps::Ask {
        named,
        with_pgbench: !a.quick,
        with_cache_effect: !a.quick,
        runtime_s: s.plan.settings.runtime_s,
        deadline: after.clone(),
    };
    let obs = std::cell::RefCell::new(obs);
    let tell = |m: String| obs.borrow_mut().note(&m);
    let (points, skips) = apps::run(&s.targets, &ask, s.dir, &s.o.stop, &tell, raw);
    apps::add(j, points, s.o.stop.load(Relaxed));
    skips
}

/// Try the levers through the hands made for the target's devices;
/// returns the section (None when none applies or the study was stopped)
/// and what putting the changes back said.
fn trials(
    s: &Steps,
    runs: &[RunRecord],
    j: &mut Judgement,
    make: &MakeHands,
    obs: &mut dyn Observer,
) -> (Option<Section>, Vec<String>) {
    let Some(t) = s.targets.first() else {
        return (None, Vec::new());
    };
    if s.o.stop.load(Relaxed) {
        return (None, Vec::new());
    }
    let disks = tried::queue_disks(t);
    let root = s.machine.root;
    let mut hands = make(Allowed {
        disks: disks.clone(),
        root,
        refused: s.refused.clone(),
    });
    let mut runner = runner(s);
    let o = tried::Options {
        quick: s.o.ask.quick,
        root,
        asked: s.o.try_changes,
        made_by_study: s.made_by_study,
        budget_s: crate::clock::budget_s(&s.plan, s.o.ask.quick, s.clock),
        queue: disks
            .first()
            .map(|d| tried::queue_files(d))
            .unwrap_or_default(),
        limits: Some(s.limits.clone()),
    };
    obs.note("trying the changes the findings point at, each in turns against the baseline and put back after");
    let section = tried::run(
        &mut Trials {
            targets: &s.targets,
            plan: &s.plan,
            runs,
            runner: &mut runner,
            hands: hands.as_mut(),
        },
        j,
        &o,
    );
    let mut notes = hands.finish();
    if let Err(w) = runner.restore() {
        notes.push(w.to_string());
    }
    (section, notes)
}
