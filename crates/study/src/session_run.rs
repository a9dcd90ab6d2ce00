//! The study's steps after its plan ([`crate::session`]): the plan's runs
//! while they fit in the sweeps' share of the budget's clock, the capacity
//! at a latency target, the scheduler restored; the files the study
//! created removed; the kernel drive's transport measured and taken out;
//! the runs judged; the applications section; the trials (the changes the
//! findings point at, tried in turns through the caller's hands and put
//! back); the document's body.
//!
//! The study of the user's job runs the same way ([`run_job`]): the job as
//! written in repeats, its instrumented run and its variants as points
//! through the device study's runner ([`crate::real::Points`]), judged
//! by the device study's causes; the host's changes in turns; the best
//! configuration together; a paced job's capacity at its latency target.

use crate::capacity::CapacityDoc;
use crate::clock::{self, Clock, Deadline};
use crate::driver::{self, Executed};
use crate::fio_beside::Beside;
use crate::job::{self, RunFigures, Variant, VariantResult, REPEATS};
use crate::model::{Skip, StudyDoc};
use crate::plan::Plan;
use crate::real::{Judge, Kind, Points};
use crate::session_parts::JobDoc;
use crate::session_parts::{Allowed, MakeHands, Observer, Options, Run};
use crate::trials::on_job::Planned;
use crate::trials::on_job::{self, Host};
use crate::trials::{self as tried, Trials};
use crate::{app_runs as apps, kdrive, real, slo, Judgement};
use ssdready_core::options::Section as JobSection;
use ssdready_diagnosis::levers::kind_priority::others_apart;
use ssdready_diagnosis::limit::caps::Caps;
use ssdready_diagnosis::limit::job::best::{self as job_best, Best};
use ssdready_diagnosis::limit::job::best_set;
use ssdready_diagnosis::limit::job::gain as job_gain;
use ssdready_diagnosis::limit::point::held_words;
use ssdready_diagnosis::trials::plan::where_named;
use ssdready_diagnosis::trials::section::Section;
use ssdready_diagnosis::trials::{Trial, Untested};
use ssdready_measured::limits::Inventory;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile};
use ssdready_run::RunFn;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

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
) -> Option<ssdready_diagnosis::transport::calibration::Calibration> {
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
    notes.append(&mut runner.notes);
    if let Err(w) = runner.restore() {
        notes.push(w.to_string());
    }
    (section, notes)
}

/// The host's levers of the job: the hands and setting, the levers
/// planned and those not tried ([`crate::trials::on_job::for_job`]).
pub struct HostPlan<'a> {
    pub host: Host<'a>,
    pub planned: Vec<Planned>,
    pub untested: Vec<Untested>,
}

impl<'a> HostPlan<'a> {
    /// The host's levers of the job `sections` (as the study runs them):
    /// the setting read here ([`crate::trials::on_job::setting`]) and the plan.
    /// `command` is the one that would try what is not asked.
    pub fn new(
        sections: &[JobSection],
        limits: Option<ssdready_measured::limits::Inventory>,
        asked: bool,
        hands: &'a mut dyn crate::trials::Hands,
        command: String,
    ) -> HostPlan<'a> {
        let setting = crate::trials::on_job::setting(sections, limits, asked, hands, command);
        let table = ssdready_diagnosis::levers::shipped();
        let (planned, untested) = crate::trials::on_job::for_job(&table, sections, &setting);
        HostPlan {
            host: Host {
                setting,
                hands,
                budget: None,
            },
            planned,
            untested,
        }
    }

    /// The runs its trials take; as root and asked, one more trial's (the
    /// job's priority, where its judgement names other work:
    /// [`where_named`]).
    pub fn runs(&self) -> usize {
        let c = &self.host.setting.consent;
        let named = usize::from(c.root && c.asked) * 2 * ssdready_diagnosis::trials::MIN_PAIRS;
        on_job::runs(&self.planned) + named
    }
}

/// The job's repeats then its variants, then the host's changes, into
/// `doc` (its figures, the variants and the changes judged against the
/// job, what holds the job), fio `beside` the study where it runs.
/// `tell` hears each step.
pub fn run_job(
    doc: &mut JobDoc,
    sections: &[JobSection],
    judge: &Judge,
    (run, host, beside): (&mut RunFn, &mut HostPlan, &mut Beside),
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) {
    let mut points = Points::new(&mut *run, sections, judge, stop);
    let measured = measure_job(doc, sections, &mut points, stop, tell);
    doc.points = std::mem::take(&mut points.records);
    let jobs = std::mem::take(&mut points.jobs);
    drop(points);
    let from = judge.judged_from(jobs, sections);
    doc.held = from.held(&doc.points);
    doc.holds = held_words(&doc.held);
    doc.findings = ssdready_diagnosis::job_findings(&from, &doc.points);
    doc.judged_from = Some(from);
    if !measured {
        return;
    }
    beside.as_written(doc, sections, stop, tell);
    if !stop.load(Relaxed) {
        let (mut planned, mut untested) = (
            std::mem::take(&mut host.planned),
            std::mem::take(&mut host.untested),
        );
        let h = &mut host.host;
        let table = ssdready_diagnosis::levers::shipped();
        let named = doc.held.first().map(|held| held.saturation.limit);
        if let Some(named) = named {
            h.setting.others_apart = others_apart(&doc.points);
            let (more, not) = where_named(&table, sections, &h.setting, named);
            planned.extend(more);
            untested.extend(not);
        }
        ssdready_diagnosis::trials::plan::named_first(&mut planned, &doc.held);
        let own = by_bandwidth(doc, sections);
        for p in &mut planned {
            p.lever.measure = p.lever.measure.on_job(own);
        }
        let s = on_job::run(sections, h, planned, untested, run, stop, tell);
        fio_host(&s, (&mut *h, &mut *beside), (sections, named), stop, tell);
        doc.host = (!s.trials.is_empty() || !s.untested.is_empty()).then_some(s);
        doc.trials_point = crate::rejudge_job::trials_point(doc);
    }
    beside.mechanics(doc, sections, stop, tell);
    doc.best = best_together(doc, sections, (run, &mut host.host, beside), stop, tell);
    paced_capacity(doc, sections, run, stop, tell);
    match crate::capacity::job_ceiling(sections, doc.median_iops) {
        Ok(c) => doc.ceiling = c,
        Err(e) => doc
            .notes
            .push(format!("the device's ceiling for the job's mix: {e}")),
    }
}

/// The host's change that gained most (`s` ranked best first), by fio
/// beside the study in pairs of A/B turns, made as its trial made it;
/// where none gained beyond the noise, the lift of the limit named as
/// what holds the job (`named`): under a CPU limit the gain follows each
/// engine's CPU per I/O, and fio's turns say what fio gains.
fn fio_host(
    s: &on_job::HostSection,
    (host, beside): (&mut Host, &mut Beside),
    (sections, named): (&[JobSection], Option<ssdready_diagnosis::limit::Cause>),
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) {
    let best = on_job::for_fio(s, named);
    let Some(t) = best.filter(|_| beside.found() && !stop.load(Relaxed)) else {
        return;
    };
    match on_job::change_for(host, s, t) {
        Ok(mut change) => {
            tell(format!("fio: the job with {}, in turns", t.change()));
            beside.host(t, sections, change.as_mut(), stop);
        }
        Err(e) => tell(format!("fio: {} could not be made: {e}", t.change())),
    }
}

/// The job's repeats, its instrumented run (root) and its variants, each
/// a point of the study's through `points`; false where the job as
/// written did not run to the end of its repeats.
fn measure_job(
    doc: &mut JobDoc,
    sections: &[JobSection],
    points: &mut Points,
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) -> bool {
    for i in 0..REPEATS {
        if stop.load(Relaxed) {
            doc.interrupted = true;
            return false;
        }
        tell(format!("the job as written, repeat {} of {REPEATS}", i + 1));
        match points.run(Kind::Repeat(i), sections, &job::request(sections, stop)) {
            Ok(r) => {
                if doc.rates.is_empty() {
                    doc.rates = job::rates(&r); // from the first repeat with I/O
                }
                doc.repeats.push(RunFigures::of(&r))
            }
            // Judged from the repeats made where the budget refused more.
            Err(crate::driver::Failure::NotRun(e)) if !doc.repeats.is_empty() => {
                doc.notes
                    .push(format!("{i} of {REPEATS} repeats as written: {e}"));
                break;
            }
            Err(e) => {
                doc.error = Some(e.to_string());
                return false;
            }
        }
    }
    if ssdready_io::kdev::is_root() && !stop.load(Relaxed) {
        tell("the job once more, its latency split and its CPU profiled by layer".into());
        let mut r = job::request(sections, stop);
        (r.decompose, r.profile) = (Some(true), true);
        match points.run(Kind::Instrumented, sections, &r) {
            Ok(res) => doc.instrumented = Some(RunFigures::of(&res)),
            Err(e) => doc.notes.push(format!("the instrumented run failed: {e}")),
        }
    }
    doc.notes.extend(job::drop_idle(&mut doc.repeats));
    let rates: Vec<f64> = doc.repeats.iter().map(RunFigures::iops).collect();
    let Some((median, spread)) = job::median_spread(&rates) else {
        return false;
    };
    (doc.median_iops, doc.spread_pct) = (median, spread);
    let base = job_gain::baseline(&doc.repeats, sections);
    for (i, v) in job::variants(sections).iter().enumerate() {
        if stop.load(Relaxed) {
            doc.interrupted = true;
            break;
        }
        tell(format!("the job with {}", v.what));
        let r = variant(v, (points, i), stop, &base);
        match v.workload {
            true => doc.different_workloads.push(r),
            false => doc.variants.push(r),
        }
    }
    doc.notes
        .extend(job::moved_note(&points.moved, points.records.len()));
    true
}

/// Whether the job's own metric is bandwidth (a streaming job), as its
/// repeats as written show it: what its changes are judged on.
fn by_bandwidth(doc: &JobDoc, sections: &[JobSection]) -> bool {
    job_gain::by_bandwidth(&job_gain::baseline(&doc.repeats, sections))
}

/// Every change that gained beyond the noise, together — the job's own
/// options and the host's changes, and behind them the host's caps that
/// bought nothing alone — in turns against the job as written, searched
/// as the device study's combination is (`best_set`: a subset where the
/// whole set buys less, else the best single change alone), then by fio
/// `beside` the study where it runs; None when none gained.
fn best_together(
    doc: &JobDoc,
    sections: &[JobSection],
    (run, host, beside): (&mut RunFn, &mut Host, &mut Beside),
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) -> Option<Best> {
    let chosen = job_best::chosen(&doc.variants);
    let trials = doc.host.as_ref().map_or(&[][..], |h| &h.trials[..]);
    let helped: Vec<Trial> = doc
        .host
        .as_ref()
        .map(|h| on_job::helped(h).into_iter().cloned().collect())
        .unwrap_or_default();
    if chosen.is_empty() && helped.is_empty() {
        return None;
    }
    let own = by_bandwidth(doc, sections);
    let mut measured = |b: &mut Best| {
        let changes = b.set_words();
        tell(format!(
            "the job with {changes} together, in turns against it as written"
        ));
        match made(b, (sections, trials), host) {
            Ok((changed, mut change)) => {
                let both = (sections, changed.as_slice());
                let pairs = job_best::PAIRS;
                (b.turns, b.error) = on_job::in_turns(both, change.as_mut(), (run, stop), pairs);
                job_best::judge(b);
            }
            Err(e) => b.error = Some(e),
        }
    };
    let found = (chosen.as_slice(), trials, helped.as_slice());
    let more = || !stop.load(Relaxed);
    let b = match best_set::search(found, own, &mut measured, &more) {
        Some(b) => b,
        None => {
            let mut b = job_best::of(&chosen, &helped, own);
            measured(&mut b);
            b
        }
    };
    Some(fio_best(b, (sections, trials), (host, beside), stop, tell))
}

/// The job with `b`'s options, and the host's changes of `b` as one
/// change (the trials of `trials` they come from).
fn made(
    b: &Best,
    (sections, trials): (&[JobSection], &[Trial]),
    host: &mut Host,
) -> Result<(Vec<JobSection>, Box<dyn crate::trials::Change>), String> {
    let of_b: Vec<&Trial> = trials
        .iter()
        .filter(|t| b.host.contains(&t.change()))
        .collect();
    Ok((
        job_best::apply(sections, &b.options),
        on_job::together(host, &of_b)?,
    ))
}

/// The configuration kept, by fio in turns beside the study where it
/// gained beyond the noise, and the whole set where another was kept.
fn fio_best(
    mut b: Best,
    jobs: (&[JobSection], &[Trial]),
    (host, beside): (&mut Host, &mut Beside),
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) -> Best {
    if !b.beyond_noise || stop.load(Relaxed) {
        return b;
    }
    let kept = ("the best configuration", &mut b);
    beside.doc.best_agrees = by_fio(kept, jobs, (host, beside), stop, tell);
    let Some(mut w) = b.whole.take() else {
        return b;
    };
    let whole = ("the whole set, not kept,", &mut *w);
    let measured = !stop.load(Relaxed) && by_fio(whole, jobs, (host, beside), stop, tell).is_some();
    b.whole = Some(w);
    if measured {
        let line = job_best::whole_line(&b, beside.quota.as_deref());
        beside.doc.lines.extend(line);
    }
    b
}

/// The set `b` by fio in turns beside the study: whether fio agrees.
fn by_fio(
    (what, b): (&str, &mut Best),
    (sections, trials): (&[JobSection], &[Trial]),
    (host, beside): (&mut Host, &mut Beside),
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) -> Option<bool> {
    let made = made(b, (sections, trials), host);
    let (changed, mut change) = made.map_err(|e| b.error.get_or_insert(e).clone()).ok()?;
    let set = b.set_words();
    tell(format!("fio: the job with {set} together, in turns"));
    let jobs = (sections, changed.as_slice());
    beside.best((what, b), jobs, change.as_mut(), stop)
}

/// The runs a rate-limited job's capacity search takes (none for another
/// job, or one without an open loop).
pub fn capacity_runs(sections: &[JobSection]) -> usize {
    let open = crate::capacity::job::no_open_loop(sections).is_none();
    usize::from(crate::capacity::job::rate_limited(sections) && open) * crate::capacity::job::RUNS
}

/// A rate-limited job: its capacity at its own latency target, or why not.
fn paced_capacity(
    doc: &mut JobDoc,
    sections: &[JobSection],
    run: &mut RunFn,
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) {
    if !crate::capacity::job::rate_limited(sections) || stop.load(Relaxed) {
        return;
    }
    if let Some(why) = crate::capacity::job::no_open_loop(sections) {
        doc.notes.push(why);
        return;
    }
    let p99 = crate::capacity::job::p99_at_rate(&doc.repeats, doc.median_iops);
    let Some((slo, why)) = crate::capacity::job::target(sections, p99) else {
        doc.notes
            .push("no capacity at a latency target: the job had no p99 at its rate".into());
        return;
    };
    tell(format!(
        "the job's capacity with {} ({why}), open loop, latency from each I/O's schedule",
        slo.text()
    ));
    let rate = doc.median_iops;
    doc.capacity = Some(crate::capacity::job_capacity(
        sections,
        (slo, &why, rate),
        run,
        stop,
    ));
}

/// The files that make the best configuration's host changes last
/// ([`job_best::host_files`]), dated by the study's start, the drop-in
/// filled from `limits`.
pub fn host_files(
    doc: &JobDoc,
    limits: Option<&ssdready_measured::limits::Inventory>,
) -> Vec<ssdready_diagnosis::trials::files::File> {
    let (Some(b), Some(h)) = (&doc.best, &doc.host) else {
        return Vec::new();
    };
    let at = match b.options.is_empty() {
        true => format!("the job {} as written", doc.job_file),
        false => format!(
            "the job {} with {} (job-best.fio)",
            doc.job_file,
            b.options.join(" ")
        ),
    };
    let date = ssdready_diagnosis::trials::files::date_of(doc.started_unix_ms);
    job_best::host_files(b, &h.trials, &at, &date, limits)
}

/// One variant (the `i`th), run once as a point of the study's and set
/// against the job's repeats.
fn variant(
    v: &Variant,
    (points, i): (&mut Points, usize),
    stop: &Arc<AtomicBool>,
    base: &[job_gain::DirBase],
) -> VariantResult {
    let mut out = VariantResult {
        what: v.what.clone(),
        option: v.option.clone(),
        asks: v.asks.clone(),
        ..Default::default()
    };
    let request = job::request(&v.sections, stop);
    let ran = points.run(Kind::Variant(i), &v.sections, &request);
    points.name_last(&v.option);
    match ran {
        Ok(r) => out.figures = Some(RunFigures::of(&r)),
        Err(e) => out.error = Some(e.to_string()),
    }
    job_gain::judge_variant(&mut out, base);
    out
}

#[cfg(test)]
#[path = "session_run_tests.rs"]
mod tests;
