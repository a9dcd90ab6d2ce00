//! The study's runs through the platform: each point's request goes to a
//! [`RunFn`] — the binary's adapter over the run library's `execute`
//! (`run`'s option table and run path), or a fake in tests — so a study
//! writes only where `run` would, after the same checks. Around each run
//! every device of the target's stack has its counters read
//! (`/sys/block/X/stat`), kept per run as the kernel counts them. The
//! scheduler sweep switches the device's I/O scheduler through sysfs with
//! a [`Tuner`] (journaled: the next command puts it back after a kill) and
//! restores the original before any other run, at the end, and on Ctrl-C.
//!
//! The user's job is one of the study's points ([`Points`]): its repeats,
//! its instrumented run and its variants go through the same runner (the
//! control groups' counters and every stacked device's counters around
//! each run, the run's own CPU, thread and device figures) and are kept
//! as the records the device study keeps of a point, named as the
//! queue-depth sweep names its own; [`Judge`] hands them to the
//! diagnosis's causes ([`ssdready_diagnosis::limit::point`]) against the
//! caps of the limits inventory, the job's reads and writes apart where
//! it does both.

use crate::driver::{Failure, Outcome, Runner};
use crate::plan::Workload;
use ssdready_core::options::Section;
use ssdready_core::result::RunResult;
use ssdready_diagnosis::levers::kind_queue::SCHEDULER;
use ssdready_diagnosis::levers::Context;
use ssdready_diagnosis::limit::job::JobFigures;
use ssdready_diagnosis::limit::point::JudgedFrom;
use ssdready_emu::kernel::stamps::Summary;
use ssdready_measured::limits::parse::moved;
use ssdready_measured::limits::Inventory;
use ssdready_measured::record::TargetProfile;
use ssdready_measured::record::{Machine, RunRecord};
use ssdready_measured::summary::PointSummary;
use ssdready_run::{Failure as RunFailure, RunFn, RunRequest};
use ssdready_tune::{TuneError, Tuner};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// Runs points with the run library, through the caller's [`RunFn`].
pub struct RealRunner<'a> {
    stop: Arc<AtomicBool>,
    /// Runs one point's request (with `study --allow-destructive` passed
    /// on by the caller, so the writes the plan holds run).
    run_fn: Box<RunFn<'a>>,
    targets: Vec<TargetProfile>,
    /// The host's settings changed for the study (the scheduler sweep's
    /// switches), journaled; made on the first change.
    tuner: Option<Tuner>,
    /// The devices whose settings may change: the targets' own and their
    /// stacks' members.
    tunable: Vec<String>,
    /// The emulated drive's attachment when the target is one (its daemon's
    /// figures are read around each run).
    drive: Option<String>,
    /// What the runner did besides running (scheduler switches).
    pub notes: Vec<String>,
    /// The devices the study's I/O reaches (MAJ, MIN), whose I/O the
    /// control groups' counters are read for around each run.
    devices: Vec<(u32, u32)>,
    /// Every device of the targets' stacks, whose own counters are read
    /// around each run.
    stacked: Vec<String>,
    /// The first target's device and the reader of its queue (sysfs; a
    /// fake in tests), read before and after each run: a setting another
    /// process moved during a run is said in the notes.
    queue: Option<(String, QueueOf)>,
}

type QueueOf = fn(&str) -> BTreeMap<String, String>;

/// What moved in `disk`'s queue between two readings (`loop0's
/// nr_requests 4 → 128`); None where nothing did.
fn moved_on(
    disk: &str,
    was: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Option<String> {
    Some(format!("{disk}'s {}", moved(was, now)?))
}

/// Every device of the targets' stacks, each once.
fn stacked_disks(targets: &[TargetProfile]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in targets
        .iter()
        .filter_map(|t| t.stack.as_ref())
        .flat_map(|s| &s.layers)
    {
        if !out.contains(&l.disk) {
            out.push(l.disk.clone());
        }
    }
    out
}

impl<'a> RealRunner<'a> {
    pub fn new(stop: Arc<AtomicBool>, targets: &[TargetProfile], run_fn: Box<RunFn<'a>>) -> Self {
        RealRunner {
            stop,
            run_fn,
            targets: targets.to_vec(),
            tuner: None,
            tunable: targets
                .iter()
                .filter_map(|t| t.device.clone())
                .chain(stacked_disks(targets))
                .collect(),
            drive: targets
                .first()
                .and_then(|t| ssdready_emu::kernel::daemon::record_of(&t.spec))
                .map(|r| r.name),
            notes: Vec::new(),
            devices: targets
                .iter()
                .filter_map(|t| {
                    ssdready_probe::limits_dev::device_of_path(std::path::Path::new(&t.spec))
                        .ok()
                        .flatten()
                })
                .collect(),
            stacked: stacked_disks(targets),
            queue: (targets.first().and_then(|t| t.device.clone()))
                .map(|d| (d, crate::trials::queue_files as QueueOf)),
        }
    }

    /// The study's control groups' counters now.
    fn cgroups_now(&self) -> ssdready_measured::limits::counters::CgroupCounters {
        ssdready_probe::limits::counters(std::process::id(), &self.devices)
    }

    /// The daemon's figures over one run: its stats file after the run
    /// (once the daemon has rewritten it) less the one before.
    fn transport_between(
        &self,
        before: Option<&Summary>,
    ) -> Option<ssdready_measured::summary::Transport> {
        let name = self.drive.as_deref()?;
        let before = before?;
        std::thread::sleep(std::time::Duration::from_millis(
            ssdready_emu::kernel::daemon::STATS_EVERY_MS + 50,
        ));
        let after = ssdready_emu::kernel::daemon::stats(name)?;
        let d = after.since(before);
        let r = ssdready_emu::kernel::daemon::record_of(name)?;
        Some(crate::transport::of(r.transport, &d))
    }

    /// The study's one [`Tuner`] (one per process): the scheduler sweep's,
    /// and any other change of a target's device or its stack's members.
    pub fn tuner(&mut self) -> Result<&mut Tuner, TuneError> {
        if self.tuner.is_none() {
            self.tuner = Some(Tuner::new(self.tunable.clone())?);
        }
        Ok(self.tuner.as_mut().expect("made above"))
    }

    fn set_scheduler(&mut self, w: &Workload) -> Result<(), SchedulerError> {
        let Some(want) = &w.scheduler else {
            return Ok(self.restore()?);
        };
        let dev = self
            .targets
            .iter()
            .find(|t| w.targets.contains(&t.spec))
            .and_then(|t| t.device.clone())
            .ok_or(SchedulerError::NoDevice)?;
        let t = self.tuner()?;
        let held = |t: &Tuner| {
            let mut c = t.changed().iter();
            c.find(|s| s.device == dev && s.attr == SCHEDULER)
                .map(|s| s.original.clone())
        };
        let first = held(t).is_none();
        let set = t.set(&dev, SCHEDULER, want);
        let original = held(t);
        let recovered: Vec<String> = t.take_notes().iter().map(|u| u.to_string()).collect();
        self.notes.extend(recovered);
        if let (true, Some(original)) = (first, original) {
            self.notes.push(format!(
                "switched {dev}'s I/O scheduler for the scheduler sweep; restored to {original} after it"
            ));
        }
        Ok(set?)
    }

    /// Put the original scheduler back, if it was changed (the Tuner's
    /// other changes are their owners' to put back); the error is the
    /// warning to give (a scheduler that could not be put back, or that
    /// another process changed meanwhile and was left as it set it).
    pub fn restore(&mut self) -> Result<(), RestoreError> {
        let Some(t) = self.tuner.as_mut() else {
            return Ok(());
        };
        let switched: Vec<String> = t
            .changed()
            .iter()
            .filter(|s| s.attr == SCHEDULER)
            .map(|s| s.device.clone())
            .collect();
        let left: Vec<String> = switched
            .iter()
            .filter_map(|d| t.restore(d, SCHEDULER))
            .filter(|r| !r.is_original())
            .map(|r| r.to_string())
            .collect();
        match left.is_empty() {
            true => Ok(()),
            false => Err(RestoreError(left.join("; "))),
        }
    }
}

/// Why a workload's I/O scheduler could not be set (the point is then
/// not applicable).
#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error("the target has no block device")]
    NoDevice,
    #[error(transparent)]
    Tune(#[from] TuneError),
    /// Putting the original back before a point without a scheduler.
    #[error(transparent)]
    Restore(#[from] RestoreError),
}

/// The original I/O scheduler was not put back: the warning to give.
#[derive(Debug, thiserror::Error)]
#[error("warning: {0}")]
pub struct RestoreError(pub String);

impl Drop for RealRunner<'_> {
    /// On a panic's unwinding too: the scheduler is put back (the caller
    /// restores it first and says when it could not).
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

impl Runner for RealRunner<'_> {
    fn run(&mut self, w: &Workload, request: &RunRequest) -> Result<Outcome, Failure> {
        self.set_scheduler(w)
            .map_err(|e| Failure::NotApplicable(e.to_string()))?;
        let before = self
            .drive
            .as_deref()
            .and_then(ssdready_emu::kernel::daemon::stats);
        let groups_before = self.cgroups_now();
        let members_before = ssdready_probe::stack::counters_now(&self.stacked);
        let began = std::time::Instant::now();
        let queue = (self.queue.clone()).map(|(d, read)| (read(&d), d, read));
        let ran = (self.run_fn)(request);
        if let Some(m) = queue.and_then(|(was, d, read)| moved_on(&d, &was, &read(&d))) {
            let (rw, kib, qd, n) = (&w.rw, w.bs / 1024, w.qd, w.threads);
            self.notes.push(format!("{m} during a run ({rw}, {kib} KiB, QD {qd} × {n}): another process changed it, so that run measured other settings than the study read"));
        }
        let members = ssdready_probe::stack::deltas(
            &members_before,
            &ssdready_probe::stack::counters_now(&self.stacked),
            began.elapsed().as_millis() as u64,
        );
        let groups = groups_before.delta(&self.cgroups_now());
        match ran {
            Ok(r) => {
                if let Some(j) = r.jobs.iter().find(|j| j.first_error.is_some()) {
                    return Err(Failure::Failed(format!(
                        "job '{}': {}",
                        j.name,
                        j.first_error.clone().unwrap_or_default()
                    )));
                }
                let mut summary = PointSummary::from_result(&r);
                summary.transport = self.transport_between(before.as_ref());
                Ok(Outcome {
                    summary,
                    result: Some(r),
                    clock: "real".into(),
                    context: Some(ssdready_measured::record::RunContext {
                        cgroups: (!groups.cpu.is_empty() || !groups.io.is_empty())
                            .then_some(groups),
                        members,
                    }),
                })
            }
            Err(RunFailure::BadInput(m)) => Err(Failure::NotApplicable(m)),
            Err(RunFailure::Runtime(m) | RunFailure::Internal(m)) => Err(Failure::Failed(m)),
            // The study sees the stop flag itself and keeps what ran.
            Err(RunFailure::Interrupted(m)) => Err(Failure::Failed(m)),
            Err(RunFailure::NotStarted(m)) => Err(Failure::NotRun(m)),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

// The user's job as one of the study's points: its repeats, its
// instrumented run and its variants go through the runner above and are
// kept as the records the device study keeps of a point.

/// What the job's runs are judged with: its first target as the device
/// study detects one, the machine, and the levers' context (the target's
/// queue as read, the inventory of limits the caps are made from).
pub struct Judge {
    pub target: Option<TargetProfile>,
    pub machine: Machine,
    pub context: Context,
}

impl Judge {
    /// The judge of the job `sections` (its target named in them) under
    /// the limits `inv`.
    pub fn of(sections: &[Section], inv: &Inventory) -> Judge {
        let j = sections.iter().position(|s| !s.global).unwrap_or(0);
        let first = ssdready_diagnosis::limit::job::first_file(sections, j);
        let target = first.and_then(|f| crate::detect::detect(&f, true).ok());
        let context = Context {
            queue: target
                .as_ref()
                .and_then(|t| t.device.as_deref())
                .map(crate::trials::queue_files)
                .unwrap_or_default(),
            limits: Some(inv.clone()),
            may_raise_priority: ssdready_io::kdev::is_root(),
            ..Default::default()
        };
        Judge {
            target,
            machine: crate::detect::machine(None),
            context,
        }
    }

    /// What the job's runs are judged from besides themselves, the
    /// document keeps it ([`JudgedFrom::held`] judges them: not
    /// identified where its target is none the study could read).
    /// `jobs[i]` is each job's figures in its `i`th run ([`Points::jobs`]).
    pub fn judged_from(&self, jobs: Vec<Vec<JobFigures>>, sections: &[Section]) -> JudgedFrom {
        JudgedFrom {
            target: self.target.clone(),
            machine: self.machine.clone(),
            context: self.context.clone(),
            point: crate::trials::on_job::job_point(sections),
            jobs,
        }
    }
}

/// A run of the job, as the point it is.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// The job as written, the repeat's number from 0.
    Repeat(usize),
    Instrumented,
    /// A variant, its number from 0.
    Variant(usize),
}

/// The job's point: its workload as the device study names one.
fn workload(sections: &[Section], target: Option<&TargetProfile>) -> Workload {
    let p = crate::trials::on_job::job_point(sections);
    Workload {
        rw: p.rw,
        bs: p.bs,
        qd: p.qd,
        threads: p.threads,
        engine: p.engine,
        direct: p.direct,
        targets: target.map(|t| vec![t.spec.clone()]).unwrap_or_default(),
        ..Default::default()
    }
}

/// The job's runs through the device study's runner, each kept as a
/// record (its result left out: the document keeps the job's figures).
pub struct Points<'a> {
    runner: RealRunner<'a>,
    job: Workload,
    target: Option<TargetProfile>,
    pub records: Vec<RunRecord>,
    /// Each job's figures in each record (none where a run gave no
    /// result): a file of several jobs is judged job by job.
    pub jobs: Vec<Vec<JobFigures>>,
    /// The target's disk and its queue as first read: read after each run.
    queue: Option<(String, BTreeMap<String, String>)>,
    pub moved: Vec<String>,
}

impl<'a> Points<'a> {
    pub fn new(
        run: &'a mut RunFn,
        sections: &[Section],
        judge: &Judge,
        stop: &Arc<AtomicBool>,
    ) -> Points<'a> {
        let targets: Vec<TargetProfile> = judge.target.iter().cloned().collect();
        Points {
            runner: RealRunner::new(stop.clone(), &targets, Box::new(move |r| run(r))),
            job: workload(sections, judge.target.as_ref()),
            target: judge.target.clone(),
            records: Vec::new(),
            jobs: Vec::new(),
            queue: (judge.target.as_ref().and_then(|t| t.device.clone()))
                .map(|d| (d, judge.context.queue.clone())),
            moved: Vec::new(),
        }
    }

    /// Run `request` (of the job, or of the variant `sections`) as the
    /// point `kind`; its result, or why it gave none.
    pub fn run(
        &mut self,
        kind: Kind,
        sections: &[Section],
        request: &RunRequest,
    ) -> Result<RunResult, Failure> {
        let w = workload(sections, self.target.as_ref());
        let started = crate::clock::now_ms();
        let at = std::time::Instant::now();
        let ran = self.runner.run(&w, request);
        let mut rec = self.record(kind, w);
        (rec.started_unix_ms, rec.wall_s) = (started, at.elapsed().as_secs_f64());
        let out = ran.and_then(|o| {
            (rec.summary, rec.context) = (o.summary, o.context);
            o.result
                .ok_or(Failure::Failed("the run gave no result".into()))
        });
        let now = (self.queue.as_ref()).map(|(d, was)| (d, was, crate::trials::queue_files(d)));
        if let Some(m) = now.and_then(|(d, was, now)| moved_on(d, was, &now)) {
            rec.summary
                .warnings
                .push(format!("{m}: {}", ssdready_diagnosis::limit::job::MOVED));
            self.moved.push(m);
        }
        match &out {
            Ok(r) => self.jobs.push(crate::job::RunFigures::of(r).jobs),
            Err(e) => {
                rec.error = Some(e.to_string());
                self.jobs.push(Vec::new());
            }
        }
        self.records.push(rec);
        out
    }

    /// Names the last run by the option its variant changed (`numjobs=2`)
    /// where it is a point of its own, as the evidence cites it
    /// (`numjobs=2 (128 in flight)`); a depth of the job stays the
    /// queue-depth sweep's.
    pub fn name_last(&mut self, option: &str) {
        if let Some(r) = self.records.last_mut().filter(|r| r.sweep == "job") {
            (r.id, r.point) = (option.to_string(), option.to_string());
        }
    }

    /// The record of a run of `kind` at workload `w`: the job's own depth
    /// and depths of it as the queue-depth sweep's points, any other
    /// variant a point of its own.
    fn record(&self, kind: Kind, w: Workload) -> RunRecord {
        let qd = format!("qd-{}", w.qd);
        let (id, point, sweep, repeat) = match kind {
            Kind::Repeat(0) => (qd.clone(), qd, "qd", 1),
            Kind::Repeat(i) => (format!("{qd}#{}", i + 1), qd, "qd", i as u32 + 1),
            Kind::Instrumented => (format!("instrumented-{qd}"), qd, "instrumented", 1),
            Kind::Variant(_)
                if Workload {
                    qd: w.qd,
                    ..self.job.clone()
                } == w =>
            {
                (qd.clone(), qd, "qd", 1)
            }
            Kind::Variant(i) => (format!("variant-{i}"), format!("variant-{i}"), "job", 1),
        };
        RunRecord {
            id,
            point,
            sweep: sweep.into(),
            repeat,
            instrumented: matches!(kind, Kind::Instrumented),
            workload: w,
            clock: "real".into(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
#[path = "real_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "real_job_tests.rs"]
mod job_tests;
