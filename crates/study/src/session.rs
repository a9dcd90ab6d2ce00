//! The study of one machine as one call ([`study`]): what the command line
//! asks checked ([`crate::ask`]), the built-in drive put behind the kernel
//! when there is no target (and its reference device beside it), the
//! targets detected, the devices' locks taken when the study may change
//! their settings, the plan fitted to the budget and kept by its
//! [`Clock`] from the call's start, the limits inventory read, the sweeps
//! and the capacity at a latency target run, the drive's transport
//! measured and taken out, the runs judged, the applications section and
//! the trials (what to change) run, and the document made
//! (`session_run` holds those steps).
//!
//! The device study is the study of a built-in job, the one its plan
//! builds; [`study_job`] (`ssdready study --job`) is the study of the
//! user's own: the options it does not take refused, the command line
//! checked, the baseline read, the job file read as `run` reads it
//! (includes, globals, several jobs; the target replaces each job's
//! `filename`) and checked whole before anything is written (a parse-only
//! run through the caller's run function), the devices' locks taken as
//! for the device study, the limits inventory read, then the job run in
//! repeats, in variants and with the host's changes through the same
//! runner and causes (`session_run::run_job`), and the document made;
//! beside it each run's length from the budget and the user's job with
//! the best configuration's options.
//!
//! The caller hands in how a run is executed (its run function, with the
//! targets' safety checks as `run` makes them), the hands that change the
//! host for the trials, and an [`Observer`] that hears the study's
//! progress; it writes the files. Nothing here exits the process: bad
//! input is a [`StudyError`] (its exit code said by
//! [`StudyError::exit_code`]) and the stop flag ends the study after the
//! current run.

use crate::ask::{Ask, AskError};
use crate::clock::Clock;
use crate::clock::{now_ms, runtime_s, Clocked, RunBudget, RUN_START_S};
use crate::job;
use crate::model::StudyDoc;
use crate::session_parts::{compare, sha256, Compared, JobDoc};
pub use crate::session_parts::{host_hands, Allowed, MakeHands, Observer, Options, Run};
use crate::session_parts::{SCHEMA as JOB_SCHEMA, SCHEMA_VERSION as JOB_SCHEMA_VERSION};
use crate::session_run::{self as steps, Steps};
use crate::{detect, kdrive};
use ssdready_core::options::Section;
use ssdready_diagnosis::limit::caps::Caps;
use ssdready_diagnosis::limit::job::best as job_best;
use ssdready_diagnosis::trials::files::File;
use ssdready_measured::limits::Inventory;
use ssdready_measured::record::TargetProfile;
use ssdready_measured::schema::{SCHEMA, SCHEMA_VERSION};
use ssdready_run::{Failure, RunFn};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Why the study did not run.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error(transparent)]
    Ask(#[from] AskError),
    #[error(transparent)]
    Target(Box<detect::DetectError>),
    /// A signal came while the built-in drive was being attached.
    #[error("{0}")]
    DriveInterrupted(kdrive::StartError),
    #[error("interrupted before the study's first run (nothing written)")]
    Interrupted,
    #[error("option '--output': creating {}: {source}", dir.display())]
    Output {
        dir: PathBuf,
        source: std::io::Error,
    },
}

impl StudyError {
    /// The command's exit code: 130 after a signal, 2 for bad input.
    pub fn exit_code(&self) -> i32 {
        match self {
            StudyError::DriveInterrupted(_) | StudyError::Interrupted => 130,
            _ => 2,
        }
    }
}

/// A study done: its document and the directory its files go to.
pub struct Studied {
    pub doc: StudyDoc,
    pub dir: PathBuf,
    /// What was studied.
    pub of: Of,
}

/// What a study studied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Of {
    /// This machine.
    Machine,
    /// A fleet (`--client`); partial when a host did not finish every run.
    Fleet { partial: bool },
}

/// The command line checked, the budget's clock started, the targets
/// detected (the built-in drive's among them when there is no target).
struct Checked {
    budget_s: f64,
    targets: Vec<TargetProfile>,
    dir: PathBuf,
    drive: Option<kdrive::Drive>,
}

/// Run the study of this machine (see the module's documentation), or of
/// a fleet when the options name its hosts ([`fleet`]).
pub fn study(
    o: &Options,
    run: &Run,
    hands: &MakeHands,
    obs: &mut dyn Observer,
) -> Result<Studied, StudyError> {
    if !o.ask.clients.is_empty() {
        return fleet(o, obs);
    }
    // The budget's clock counts from here, the drive's attach included.
    let started = std::time::Instant::now();
    let started_ms = now_ms();
    let Checked {
        budget_s,
        targets,
        dir,
        mut drive,
    } = validate(o, obs)?;
    let clock = Clock::since(started, budget_s);
    let machine = detect::machine(None);
    // Held to the end: a second study changes none of these devices.
    let (_locks, refused) = consent(o, &targets, drive.is_some(), machine.root, obs);
    let ask = Ask {
        host_changes: machine.root && (o.try_changes || drive.is_some()) && refused.is_none(),
        ..o.ask.clone()
    };
    let p = ask.plan(budget_s, &targets, &machine);
    obs.block(&crate::text::plan(&targets, &p, o.ask.quick));
    make_output(&dir, &o.stop)?;
    let limits = inventory(&targets, obs);
    let s = Steps {
        o,
        run,
        targets,
        plan: p,
        dir: &dir,
        clock: &clock,
        machine,
        refused,
        made_by_study: drive.is_some(),
        limits,
    };
    let mut doc = steps::run_all(s, hands, obs);
    doc.warnings.extend(drive.as_mut().and_then(stop_drive));
    close_stacks(&mut doc.targets, started_ms);
    let doc = header(o, started_ms, budget_s, doc);
    Ok(Studied {
        doc,
        dir,
        of: Of::Machine,
    })
}

/// The study of a fleet (`crate::fleet_run`: what is measured): its
/// command line checked and its hosts probed, its plan said, its runs on
/// every host, its document.
pub fn fleet(o: &Options, obs: &mut dyn Observer) -> Result<Studied, StudyError> {
    let started_ms = now_ms();
    let p = o.ask.fleet(&o.stop)?;
    let n_runs = p.runs();
    obs.note(&format!(
        "study of a fleet of {} hosts ({}): 4 KiB random reads at QD {:?}, each host alone for {:.1} s, then 1…{} hosts together with the same I/Os each; {n_runs} runs, about {:.0} s (up to {:.0} s if a host is slow)",
        p.hosts.len(),
        p.target.as_deref().unwrap_or("null engine"),
        p.depths,
        p.runtime_s,
        p.hosts.len(),
        n_runs as f64 * (p.runtime_s + 1.5),
        n_runs as f64 / 2.0 * (5.0 * p.runtime_s + 3.0)
    ));
    std::fs::create_dir_all(&p.dir).map_err(|source| StudyError::Output {
        dir: p.dir.clone(),
        source,
    })?;
    let obs = std::cell::RefCell::new(obs);
    let tell = |m: String| obs.borrow_mut().note(&format!("fleet: {m}"));
    let (section, interrupted) = crate::fleet_run::measure(&p, o.ask.quick, &o.stop, &tell);
    let started_by = crate::fleet_run::Started {
        unix_ms: started_ms,
        tool: o.tool.clone(),
        command: o.command.clone(),
        quick: o.ask.quick,
    };
    let machine = detect::machine(None);
    let (doc, partial) =
        crate::fleet_run::document(&p, section, interrupted, started_by, now_ms(), machine);
    Ok(Studied {
        doc,
        dir: p.dir,
        of: Of::Fleet { partial },
    })
}

/// Check the command line, start the drive behind the kernel when the
/// study has no target, and detect the targets.
fn validate(o: &Options, obs: &mut dyn Observer) -> Result<Checked, StudyError> {
    let (budget_s, dir) = o.ask.check()?;
    let mut drive = default_drive(&o.ask, &o.stop, obs)?;
    let specs = match &drive {
        Some(d) => vec![d.device.clone()],
        None => detect::split_targets(o.ask.target.as_deref().unwrap_or("emu:")),
    };
    let mut targets: Vec<TargetProfile> = specs
        .iter()
        .map(|s| {
            detect::detect(s, o.ask.allow_destructive).map_err(|e| StudyError::Target(Box::new(e)))
        })
        .collect::<Result<_, _>>()?;
    if let Some(d) = drive.as_mut() {
        targets.extend(reference(d, &targets[0], obs));
    }
    Ok(Checked {
        budget_s,
        targets,
        dir,
        drive,
    })
}

/// Beside the drive behind the kernel, the study's reference: a loop
/// device over /dev/shm on the same kernel path without the drive's daemon,
/// where the platform's own peak is measured (the daemon, ssdready's
/// apparatus, would otherwise hold it on a machine with few CPUs).
fn reference(
    d: &mut kdrive::Drive,
    drive: &TargetProfile,
    obs: &mut dyn Observer,
) -> Option<TargetProfile> {
    d.make_reference(drive.logical_block_size.clamp(512, 4096) as u32);
    let Some(l) = &d.reference else {
        obs.warn(&format!(
            "no reference device for the platform's own peak ({}): the study reads the platform from the drive alone",
            d.no_reference.clone().unwrap_or_default()
        ));
        return None;
    };
    match detect::detect(&l.device, false) {
        Ok(mut t) => {
            t.reference = true;
            obs.note(&format!(
                "and beside it {}, a loop device over /dev/shm: the same kernel path without the drive's daemon, for the platform's own peak",
                l.device
            ));
            Some(t)
        }
        Err(e) => {
            obs.warn(&format!(
                "no reference device for the platform's own peak: {e}"
            ));
            None
        }
    }
}

/// With no target: the built-in drive behind the kernel where this machine
/// allows it (root, FUSE and loop devices) unless `--in-process`; None
/// means the in-process drive, and the study says what it leaves out.
fn default_drive(
    a: &Ask,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> Result<Option<kdrive::Drive>, StudyError> {
    if a.target.is_some() {
        return Ok(None);
    }
    let missing = match a.in_process {
        true => None,
        false => kdrive::unavailable(),
    };
    if a.in_process || missing.is_some() {
        obs.note(&ssdready_emu::kernel::daemon::study_note(
            missing.as_deref(),
        ));
        return Ok(None);
    }
    Ok(match kdrive::start(stop) {
        Ok(d) => {
            obs.note(&format!(
                "studying the built-in drive ({}) behind the kernel at {}: every layer from the \
                 system call to the drive's transport is on the path, and the device's timing is \
                 the model's (--in-process studies the device alone)",
                d.spec, d.device
            ));
            Some(d)
        }
        Err(e) if stop.load(Relaxed) => return Err(StudyError::DriveInterrupted(e)),
        // The main job must still run: the drive inside ssdready, saying why.
        Err(e) => {
            obs.warn(&format!(
                "could not put the built-in drive behind the kernel ({e}); studying it in-process \
                 (the device alone) instead"
            ));
            None
        }
    })
}

/// Whether the study may change the target device's settings, with the
/// locks it then holds for its whole length: as root, asked with
/// `--try-changes` or on a device the study made, and no other process
/// changing the device (else the refusal, said once).
fn consent(
    o: &Options,
    targets: &[TargetProfile],
    made_by_study: bool,
    root: bool,
    obs: &mut dyn Observer,
) -> (Vec<ssdready_tune::lock::DeviceLock>, Option<String>) {
    let wanted = root && (o.try_changes || made_by_study);
    let Some(t) = targets.first().filter(|_| wanted) else {
        return (Vec::new(), None);
    };
    hold(&crate::trials::queue_disks(t), obs)
}

/// The locks of `disks`, held while the study may change their settings;
/// another process holding one: none, and the refusal said once.
fn hold(
    disks: &[String],
    obs: &mut dyn Observer,
) -> (Vec<ssdready_tune::lock::DeviceLock>, Option<String>) {
    match crate::trials::hands::hold(disks) {
        Ok(locks) => (locks, None),
        Err(why) => {
            obs.warn(&why);
            (Vec::new(), Some(why))
        }
    }
}

/// The output directory checked before the first run: made and, where
/// the study made it, taken away again (with any parent it made), so that
/// a directory that cannot be made fails before any run starts, and a
/// study killed before it writes leaves no empty directory behind. The
/// writer makes it again with the files ([`crate::outputs`]). Nothing is
/// made when a signal came first.
fn make_output(dir: &Path, stop: &AtomicBool) -> Result<(), StudyError> {
    if stop.load(Relaxed) {
        return Err(StudyError::Interrupted);
    }
    let first_missing: Vec<&Path> = dir.ancestors().take_while(|a| !a.exists()).collect();
    std::fs::create_dir_all(dir).map_err(|source| StudyError::Output {
        dir: dir.to_path_buf(),
        source,
    })?;
    // Deepest first: each is empty, as the study just made it (another
    // process's file in one keeps it, and its parents, where they are).
    for made in first_missing {
        if std::fs::remove_dir(made).is_err() {
            break;
        }
    }
    Ok(())
}

/// What can cap the study's I/O, read before its runs: its control groups'
/// limits, the CPUs it may use and the queues of the devices its targets
/// are on; the ones that hold below the machine's own are said.
fn inventory(
    targets: &[TargetProfile],
    obs: &mut dyn Observer,
) -> ssdready_measured::limits::Inventory {
    // A file the study is to create is on the device of the directory it
    // will be made in.
    let devices: Vec<(u32, u32)> = targets
        .iter()
        .filter(|t| t.kind != ssdready_measured::record::TargetKind::Emulator)
        .filter_map(|t| device_of(&t.spec))
        .collect();
    let inv = ssdready_probe::limits::inventory(std::process::id(), &devices);
    let caps = ssdready_diagnosis::limit::caps::Caps::of(&inv);
    for line in caps.lines() {
        obs.note(&format!("a limit on this study's I/O: {line}"));
    }
    inv
}

/// The device a path is on (major, minor): a file the study is to create
/// is on the device of the directory it will be made in.
fn device_of(path: &str) -> Option<(u32, u32)> {
    let p = std::path::absolute(Path::new(path)).ok()?;
    let on = p.ancestors().find(|a| a.exists())?;
    ssdready_probe::limits_dev::device_of_path(on)
        .ok()
        .flatten()
}

/// Stop the built-in drive's daemon; its last words, if any, as a warning.
fn stop_drive(d: &mut kdrive::Drive) -> Option<String> {
    let line = d.stop();
    (!line.is_empty()).then(|| format!("the emulated drive's daemon: {line}"))
}

/// Each stacked target's counters, closed at the end of the study.
fn close_stacks(targets: &mut [TargetProfile], started_ms: u64) {
    for s in targets.iter_mut().filter_map(|t| t.stack.as_mut()) {
        let now = ssdready_probe::stack::snapshot(&s.disks());
        s.close(&now, now_ms().saturating_sub(started_ms));
    }
}

/// The document's header: what made it, when, with what budget, over the
/// study's `body`.
fn header(o: &Options, started_ms: u64, budget_s: f64, body: StudyDoc) -> StudyDoc {
    StudyDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: o.tool.clone(),
        command: o.command.clone(),
        started_unix_ms: started_ms,
        finished_unix_ms: now_ms(),
        quick: o.ask.quick,
        budget_s,
        ..body
    }
}

/// What the study of a job file is asked: the device study's options and
/// the job's.
#[derive(Clone, Debug)]
pub struct JobOptions {
    pub study: Options,
    /// `--job`: the job file.
    pub file: String,
    /// `--section`: the job file's section to study (None: all).
    pub section: Option<String>,
    /// `--baseline`: an earlier job study (a directory or its
    /// job-study.json).
    pub baseline: Option<String>,
}

/// Why the study of a job file did not run; its Display is the one line
/// said, [`JobStudyError::exit_code`] the command's exit code.
#[derive(Debug, thiserror::Error)]
pub enum JobStudyError {
    /// An option a job's study does not take.
    #[error("option '{option}': not with --job ({why})")]
    NotWithJob {
        option: &'static str,
        why: &'static str,
    },
    /// What a study of the device refuses too (the command line, the
    /// output directory, a signal before the first run).
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error("option '--baseline': {0}")]
    Baseline(String),
    /// The job file cannot be parsed, or cannot be studied.
    #[error("{0}")]
    Job(String),
    #[error("option '--job': {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// The parse-only run refused the job (an option, a target's safety).
    #[error("{}", .0.message())]
    Check(Failure),
}

impl JobStudyError {
    /// The command's exit code: 130 after a signal, the run's own for a
    /// refused job, 2 for other bad input.
    pub fn exit_code(&self) -> i32 {
        match self {
            JobStudyError::Check(f) => f.exit_code(),
            JobStudyError::Study(e) => e.exit_code(),
            _ => 2,
        }
    }
}

/// A job study done: its document, the directory its files go to, the
/// user's job with the best configuration (when it gained) with the files
/// of its host changes, and the study against its baseline, if given.
pub struct JobStudied {
    pub doc: JobDoc,
    pub dir: PathBuf,
    pub best: Option<String>,
    pub host_files: Vec<File>,
    pub compared: Option<Compared>,
}

/// The options a study of a job file does not take, and why.
pub fn refuse_options(o: &Options) -> Result<(), JobStudyError> {
    let a = &o.ask;
    let not = [
        (
            "--client",
            !a.clients.is_empty(),
            "a fleet's study runs its own plan",
        ),
        (
            "--slo",
            a.slo.is_some(),
            "the job's own rate and depth set its load",
        ),
        (
            "--sweeps",
            !a.sweeps.is_empty(),
            "the job is the study's point",
        ),
        ("--in-process", a.in_process, "the job names its own target"),
    ];
    match not.iter().find(|x| x.1) {
        Some(&(option, _, why)) => Err(JobStudyError::NotWithJob { option, why }),
        None => Ok(()),
    }
}

/// The job file's sections, checked; its text.
fn read(o: &JobOptions) -> Result<(Vec<Section>, String), JobStudyError> {
    let mut args = vec![o.file.clone()];
    if let Some(s) = &o.section {
        args.push(format!("--section={s}"));
    }
    let parsed =
        ssdready_cmdline::args::parse(&args).map_err(|e| JobStudyError::Job(e.to_string()))?;
    job::check(&parsed.sections, &o.file).map_err(|e| JobStudyError::Job(e.to_string()))?;
    let text = std::fs::read_to_string(&o.file).map_err(|source| JobStudyError::Read {
        file: o.file.clone(),
        source,
    })?;
    Ok((parsed.sections, text))
}

/// An earlier job study (a directory or its job-study.json).
pub fn baseline(path: &str) -> Result<JobDoc, JobStudyError> {
    let p = Path::new(path);
    let file = match p.is_dir() {
        true => p.join("job-study.json"),
        false => p.to_path_buf(),
    };
    let f = file.display();
    let text =
        std::fs::read_to_string(&file).map_err(|e| JobStudyError::Baseline(format!("{f}: {e}")))?;
    crate::rejudge_job::parse(&text).map_err(|e| JobStudyError::Baseline(format!("{f}: {e}")))
}

/// The command that tries the host's changes on this job.
fn ask_command(o: &JobOptions) -> String {
    format!(
        "sudo ssdready study --job {}{}{} --try-changes",
        o.file,
        o.section
            .as_ref()
            .map_or(String::new(), |s| format!(" --section {s}")),
        o.study
            .ask
            .target
            .as_ref()
            .map_or(String::new(), |t| format!(" {t}"))
    )
}

/// The hands that change the host for the job's trials, and the locks of
/// the job's devices, taken as root when asked (another process holding
/// one: no queue setting is changed, said once).
fn hands(
    o: &Options,
    sections: &[Section],
    root: bool,
    make: &MakeHands,
    obs: &mut dyn Observer,
) -> (
    Box<dyn crate::trials::Hands>,
    Vec<ssdready_tune::lock::DeviceLock>,
) {
    let disks = crate::trials::on_job::disks(sections);
    let (locks, refused) = match root && o.try_changes {
        true => hold(&disks, obs),
        false => (Vec::new(), None),
    };
    let allowed = Allowed {
        disks,
        root,
        refused,
    };
    (make(allowed), locks)
}

/// The job study's document before its runs: its header, the job file's
/// text and hash, each run's length, the limits and what was cut.
fn job_header(o: &JobOptions, text: String, runtime_s: f64, limits: Vec<String>) -> JobDoc {
    JobDoc {
        schema: JOB_SCHEMA.into(),
        schema_version: JOB_SCHEMA_VERSION,
        tool: o.study.tool.clone(),
        command: o.study.command.clone(),
        started_unix_ms: now_ms(),
        job_file: o.file.clone(),
        job_sha256: sha256(&text),
        job_text: text,
        section: o.section.clone(),
        target: o.study.ask.target.clone(),
        runtime_s,
        limits,
        ..Default::default()
    }
}

/// Every option of the job and its targets' safety checked by a
/// parse-only run, then the output directory checked ([`make_output`]:
/// made and taken away again; nothing left when a signal came first or
/// it cannot be made).
fn check_and_make(
    sections: &[Section],
    o: &Options,
    run: &Run,
    dir: &Path,
) -> Result<(), JobStudyError> {
    let mut check = job::request(sections, &o.stop);
    check.parse_only = true;
    run(&check).map_err(JobStudyError::Check)?;
    Ok(make_output(dir, &o.stop)?)
}

/// The runs a study of the job takes at most: its repeats, fio's beside
/// them where fio runs, the instrumented run (root), its variants, the
/// best configuration's pairs, the host's trials (`host_runs`) and a
/// paced job's capacity search.
fn job_runs(sections: &[Section], fio: bool, root: bool, host_runs: usize) -> usize {
    crate::job::REPEATS
        + usize::from(fio) * crate::fio_beside::RUNS
        + usize::from(root)
        + job::variants(sections).len()
        + 2 * job_best::PAIRS
        + host_runs
        + steps::capacity_runs(sections)
}

/// Run the study of a job file (see the module's documentation).
pub fn study_job(
    o: &JobOptions,
    run: &Run,
    make: &MakeHands,
    obs: &mut dyn Observer,
) -> Result<JobStudied, JobStudyError> {
    let started = std::time::Instant::now();
    let so = &o.study;
    refuse_options(so)?;
    let (budget_s, dir) = so.ask.check().map_err(StudyError::from)?;
    let earlier = o.baseline.as_deref().map(baseline).transpose()?;
    let budget_s = match so.ask.quick {
        true => budget_s.min(60.0),
        false => budget_s,
    };
    let (sections, text) = read(o)?;
    let target = so.ask.target.as_deref();
    let as_written = job::with_target(&sections, target);
    let (_, limits, inv) = self::caps(&as_written);
    // The host's changes only as root and asked, under the devices' locks
    // (held for the study's whole length), through the caller's hands.
    let root = ssdready_io::kdev::is_root();
    let (mut hands, _locks) = hands(so, &as_written, root, make, obs);
    let mut host = steps::HostPlan::new(
        &as_written,
        Some(inv.clone()),
        so.try_changes,
        hands.as_mut(),
        ask_command(o),
    );
    let host_runs = host.runs();
    let deadline = started + std::time::Duration::from_secs_f64(budget_s);
    let fio = crate::fio_beside::find(&as_written, deadline, &so.stop);
    let runs = job_runs(&sections, fio.is_ok(), root, host_runs);
    let runtime = runtime_s(budget_s, runs);
    let (sections, cut) = job::prepared(&sections, target, runtime);
    check_and_make(&sections, so, run, &dir)?;
    for l in &limits {
        obs.note(&format!("a limit on this study's I/O: {l}"));
    }
    let mut doc = job_header(o, text, runtime, limits);
    doc.notes.extend(cut);
    let jobs = (0..sections.len()).filter(|&j| !sections[j].global);
    doc.jobs_read = jobs.map(|j| job::described(&sections, j)).collect();
    obs.note(&crate::progress::job_plan(
        &o.file, runs, host_runs, runtime,
    ));
    let run_s = job::run_wall_s(&sections, runtime) + RUN_START_S;
    let clocked = Clocked {
        run,
        budget: RunBudget::new(deadline, run_s),
        budget_s,
        refused: Cell::new(0),
    };
    host.host.budget = Some(clocked.budget.clone());
    let mut each = |r: &ssdready_run::RunRequest| clocked.run(r);
    let mut tell = |m: String| obs.note(&m);
    let mut beside =
        crate::fio_beside::Beside::new(fio.map(|f| f.lasting(RunBudget::new(deadline, run_s))));
    let both = (&mut each as &mut RunFn, &mut host, &mut beside);
    let judge = crate::real::Judge::of(&sections, &inv);
    let made = variants_files(&sections);
    steps::run_job(&mut doc, &sections, &judge, both, &so.stop, &mut tell);
    drop(host);
    let removed = made
        .iter()
        .filter(|f| ssdready_io::writer::remove_regular(Path::new(f)));
    doc.notes
        .extend(removed.map(|f| format!("removed {f}, which a variant of the job made")));
    doc.fio = Some(beside.doc);
    doc.notes.extend(clocked.note());
    doc.notes.extend(hands.finish());
    doc.finished_unix_ms = now_ms();
    doc.interrupted |= so.stop.load(Relaxed);
    let best = best_file(&mut doc, &as_written);
    let host_files = steps::host_files(&doc, Some(&inv));
    let compared = earlier.map(|e| compare(&doc, &e));
    Ok(JobStudied {
        doc,
        dir,
        best,
        host_files,
        compared,
    })
}

/// The files the job's variants lay out that neither the job as written
/// nor anything before the study made: the study takes them away.
fn variants_files(sections: &[Section]) -> Vec<String> {
    let vs = job::variants(sections);
    let each: Vec<&[Section]> = vs.iter().map(|v| v.sections.as_slice()).collect();
    let all = ssdready_diagnosis::limit::job::variant_files(sections, &each);
    all.into_iter().filter(|f| !Path::new(f).exists()).collect()
}

/// The limits that can cap the job's I/O: its control groups', the CPUs
/// it may use, and the queue of the device its first target is on; with
/// the ones that hold below the machine's own, one line each, and the
/// inventory they were read from.
pub fn caps(sections: &[Section]) -> (Caps, Vec<String>, Inventory) {
    let j = sections.iter().position(|s| !s.global).unwrap_or(0);
    let first = ssdready_diagnosis::limit::job::first_file(sections, j);
    let devices: Vec<(u32, u32)> = first.and_then(|f| device_of(&f)).into_iter().collect();
    let inv = ssdready_probe::limits::inventory(std::process::id(), &devices);
    let caps = Caps::of(&inv);
    let lines = caps.lines();
    (caps, lines, inv)
}

/// The user's job with the best configuration's options, when the set
/// gained beyond the noise: its text (the measured gain in its header),
/// kept in the document with the lines that changed.
pub fn best_file(doc: &mut JobDoc, as_written: &[Section]) -> Option<String> {
    let b = doc.best.as_mut().filter(|b| b.beyond_noise)?;
    let header = format!(
        "{}\nssdready study of {} (sha256 {}); run it with: fio job-best.fio{}",
        job_best::words(b),
        doc.job_file,
        &doc.job_sha256[..12.min(doc.job_sha256.len())],
        job_best::host_note(b)
    );
    let before = job_best::render(as_written, "");
    let after = job_best::render(&job_best::apply(as_written, &b.options), &header);
    b.diff = job_best::diff(&before, &after);
    b.file = after.clone();
    Some(after)
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
