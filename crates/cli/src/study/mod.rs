//! `ssdready study [TARGET] [--quick] [--output DIR] [--budget TIME]`: how
//! much of the device's speed this platform delivers to applications,
//! where the rest goes, and what to change — in one command.
//!
//! The command checks what it is asked (`ssdready_study::ask`), detects the
//! target (`ssdready_study::detect`), plans sweeps to fit the budget
//! (`ssdready_study::ask`, `ssdready_study::plan`) and keeps it by the
//! clock from its start (`ssdready_study::clock`: what does not fit is
//! dropped and said), prints the plan and its ETA,
//! runs each point through `run`'s own path (`ssdready_study::real`, handed
//! this binary's run function) with a progress bar, derives
//! the figures and judges them with the verdict rules
//! (`ssdready_study::judge`), writes `DIR/study.json` and its HTML report
//! `DIR/report.html` atomically and prints the findings (`print`), and
//! records the study in the history database (`--db`; a failure to record
//! is a warning). With `--baseline` it then compares the study with an
//! earlier one and exits 3 when a key figure got worse beyond the noise.
//! Bad input gets one line and exit code 2 with nothing written; Ctrl-C
//! stops after the current run, still writes what ran, and exits 130.

mod fleet;
mod job;
mod print;
mod trials;

use crate::{fail, say};
use ssdready_diagnosis::model::{Skip, StudyDoc, SCHEMA, SCHEMA_VERSION};
use ssdready_measured::record::{Machine, TargetProfile};
use ssdready_study::capacity::CapacityDoc;
use ssdready_study::clock::{self, Clock, Deadline};
use ssdready_study::driver::Executed;
use ssdready_study::plan::Plan;
use ssdready_study::{app_runs as apps, detect, kdrive, real, slo, Judgement};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The `study` command line.
#[derive(clap::Args, Debug)]
pub struct StudyArgs {
    /// A file, a block device, emu:PRESET[,k=v…] (default: the built-in
    /// drive), or several, comma-separated, for multi-device scaling.
    pub target: Option<String>,
    /// Finish in about a minute (1 s runs, the main sweeps only; held to
    /// 75 s unless --budget says otherwise).
    #[arg(long)]
    pub quick: bool,
    /// Where to write study.json and report.html (default: ./ssdready-study-DATE-TIME).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// How long the study may take, e.g. 10m, 90s, from its start to its
    /// files written; what does not fit is dropped and said (default: 10m).
    #[arg(long, value_name = "TIME")]
    pub budget: Option<String>,
    /// Capacity at a latency target: the highest load of 4 KiB random
    /// reads whose percentile stays within it, e.g. p99=1ms or p99.9=5ms
    /// (the full study searches p99=1ms unless told).
    #[arg(long, value_name = "PCT=TIME")]
    pub slo: Option<String>,
    /// Optional sweeps to add to a quick study: scheduler, buffered, raw,
    /// devices, applications (a full study runs them all where they apply).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub sweeps: Vec<String>,
    /// Let writes go to a target the safety checks refuse (as `run`).
    #[arg(long)]
    pub allow_destructive: bool,
    /// With no target, study the built-in drive inside ssdready's process
    /// (the device alone) even as root, instead of behind the kernel.
    #[arg(long)]
    pub in_process: bool,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// The history database to record the study in (default:
    /// $XDG_DATA_HOME/ssdready/history.db); also where --baseline ids are.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// An earlier study (history id, directory or study.json): exit 3 when
    /// a key figure got worse beyond the noise.
    #[arg(long, value_name = "ID|PATH")]
    pub baseline: Option<String>,
    /// Study a fleet instead: fio servers or ssdready servers (a host file,
    /// or `HOST[,PORT]` separated by ';'), each alone, then 1…N together;
    /// TARGET is then what each host reads (default: fio's null engine).
    #[arg(long, value_name = "HOSTS")]
    pub client: Vec<String>,
    /// Study your own workload: a fio job file (as `run` reads it), run in
    /// repeats and one change at a time around it; TARGET, when given,
    /// replaces each job's filename.
    #[arg(long, value_name = "FILE")]
    pub job: Option<String>,
    /// With --job: the job file's section to study (default: all).
    #[arg(long, value_name = "NAME", requires = "job")]
    pub section: Option<String>,
    /// As root, also try the device's queue settings the findings point at
    /// (scheduler, nr_requests, …) on the target and its stack, each in
    /// turns and put back after (journaled under /run/ssdready).
    #[arg(long)]
    pub try_changes: bool,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl StudyArgs {
    /// What the command line asks, for the library's checks.
    fn ask(&self) -> ssdready_study::ask::Ask {
        ssdready_study::ask::Ask {
            target: self.target.clone(),
            quick: self.quick,
            output: self.output.clone(),
            budget: self.budget.clone(),
            slo: self.slo.clone(),
            sweeps: self.sweeps.clone(),
            allow_destructive: self.allow_destructive,
            in_process: self.in_process,
            baseline: self.baseline.is_some(),
            db: self.db.is_some(),
            clients: self.client.clone(),
            host_changes: false,
        }
    }
}

/// Check the command line (`ssdready_study::ask`), start the drive behind
/// the kernel when the study has no target, and detect the targets; bad
/// input is one line and exit code 2.
fn validate(a: &StudyArgs, stop: &std::sync::atomic::AtomicBool) -> Result<Checked, crate::Exit> {
    let (budget_s, dir) = a.ask().check().map_err(|e| fail(2, &e.to_string()))?;
    let mut drive = default_drive(a, stop)?;
    let specs = match &drive {
        Some(d) => vec![d.device.clone()],
        None => detect::split_targets(a.target.as_deref().unwrap_or("emu:")),
    };
    let mut targets: Vec<TargetProfile> = specs
        .iter()
        .map(|s| detect::detect(s, a.allow_destructive).map_err(|e| fail(2, &e.to_string())))
        .collect::<Result<_, _>>()?;
    if let Some(d) = drive.as_mut() {
        targets.extend(reference(d, &targets[0], a.quiet));
    }
    Ok((budget_s, targets, dir, drive))
}

/// The command line checked: the budget, the targets, the output
/// directory, and the drive behind the kernel when the study started one.
type Checked = (f64, Vec<TargetProfile>, PathBuf, Option<kdrive::Drive>);

/// Beside the drive behind the kernel, the study's reference: a loop
/// device over /dev/shm on the same kernel path without the drive's daemon,
/// where the platform's own peak is measured (the daemon, ssdready's
/// apparatus, would otherwise hold it on a machine with few CPUs).
fn reference(d: &mut kdrive::Drive, drive: &TargetProfile, quiet: bool) -> Option<TargetProfile> {
    d.make_reference(drive.logical_block_size.clamp(512, 4096) as u32);
    let Some(l) = &d.reference else {
        say(&format!(
            "no reference device for the platform's own peak ({}): the study reads the platform from the drive alone",
            d.no_reference.clone().unwrap_or_default()
        ));
        return None;
    };
    match detect::detect(&l.device, false) {
        Ok(mut t) => {
            t.reference = true;
            if !quiet {
                say(&format!(
                    "and beside it {}, a loop device over /dev/shm: the same kernel path without the drive's daemon, for the platform's own peak",
                    l.device
                ));
            }
            Some(t)
        }
        Err(e) => {
            say(&format!(
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
    a: &StudyArgs,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Option<kdrive::Drive>, crate::Exit> {
    if a.target.is_some() {
        return Ok(None);
    }
    let missing = match a.in_process {
        true => None,
        false => kdrive::unavailable(),
    };
    if a.in_process || missing.is_some() {
        if !a.quiet {
            say(&ssdready_emu::kernel::daemon::study_note(
                missing.as_deref(),
            ));
        }
        return Ok(None);
    }
    Ok(match kdrive::start(stop) {
        Ok(d) => {
            if !a.quiet {
                say(&format!(
                    "studying the built-in drive ({}) behind the kernel at {}: every layer from the \
                     system call to the drive's transport is on the path, and the device's timing is \
                     the model's (--in-process studies the device alone)",
                    d.spec, d.device
                ));
            }
            Some(d)
        }
        Err(e) if stop.load(std::sync::atomic::Ordering::Relaxed) => {
            return Err(fail(130, &e.to_string()))
        }
        // The main job must still run: the drive inside ssdready, saying why.
        Err(e) => {
            say(&format!(
                "could not put the built-in drive behind the kernel ({e}); studying it in-process \
                 (the device alone) instead"
            ));
            None
        }
    })
}

/// What can cap the study's I/O, read before its runs: its control groups'
/// limits, the CPUs it may use and the queues of the devices its targets
/// are on; the ones that hold below the machine's own are said.
fn inventory(targets: &[TargetProfile], quiet: bool) -> ssdready_measured::limits::Inventory {
    // A file the study is to create is on the device of the directory it
    // will be made in.
    let devices: Vec<(u32, u32)> = targets
        .iter()
        .filter(|t| t.kind != ssdready_measured::record::TargetKind::Emulator)
        .filter_map(|t| {
            let p = std::path::absolute(Path::new(&t.spec)).ok()?;
            let on = p.ancestors().find(|a| a.exists())?;
            ssdready_probe::limits_dev::device_of_path(on)
                .ok()
                .flatten()
        })
        .collect();
    let inv = ssdready_probe::limits::inventory(std::process::id(), &devices);
    if !quiet {
        let caps = ssdready_diagnosis::limit::caps::Caps::of(&inv);
        for line in caps.lines() {
            say(&format!("a limit on this study's I/O: {line}"));
        }
    }
    inv
}

/// The history database to record the study in: none, with a warning,
/// when the default one cannot be opened; exit 2 for a `--db` given.
fn open_history(a: &StudyArgs) -> Result<Option<crate::history::Recorder>, crate::Exit> {
    Ok(match crate::history::Recorder::prepare(a.db.as_deref()) {
        Ok(h) => Some(h),
        Err(e) if a.db.is_some() => {
            return Err(fail(
                crate::history::error_code(&e),
                &format!("option '--db': {e}"),
            ))
        }
        Err(e) => {
            say(&format!(
                "warning: this study will not be recorded in the history: {e}"
            ));
            None
        }
    })
}

/// The output directory, made before the first run (exit 130 when a
/// signal came first, 2 when it cannot be made; nothing written then).
fn make_output(dir: &Path, stop: &AtomicBool) -> crate::Done {
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(fail(
            130,
            "interrupted before the study's first run (nothing written)",
        ));
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        return Err(fail(
            2,
            &format!("option '--output': creating {}: {e}", dir.display()),
        ));
    }
    Ok(())
}

/// Where and how long the applications section runs, and what the steps
/// after the sweeps must finish before (the trials' share and the close
/// kept back).
struct AppsAt<'a> {
    targets: &'a [TargetProfile],
    dir: &'a Path,
    stop: &'a Arc<AtomicBool>,
    runtime_s: f64,
    deadline: &'a Deadline,
}

/// The applications section, when the study runs it (a full study, or one
/// that names it): its points added to the judgement; returns what it
/// skipped.
fn applications(a: &StudyArgs, at: &AppsAt, j: &mut Judgement) -> Vec<Skip> {
    let named = a.sweeps.iter().any(|s| s == "applications");
    if a.quick && !named {
        return Vec::new();
    }
    let raw = j.figures.device_limit.iops;
    let ask = apps::Ask {
        named,
        with_pgbench: !a.quick,
        with_cache_effect: !a.quick,
        runtime_s: at.runtime_s,
        deadline: at.deadline.clone(),
    };
    let tell = |m: String| {
        if !a.quiet {
            eprintln!("ssdready: {m}");
        }
    };
    let (points, skips) = apps::run(at.targets, &ask, at.dir, at.stop, &tell, raw);
    apps::add(
        j,
        points,
        at.stop.load(std::sync::atomic::Ordering::Relaxed),
    );
    skips
}

/// Record the study in the history database (a failure is a warning).
fn record(h: &mut crate::history::Recorder, doc: &StudyDoc, json: &Path, quiet: bool) {
    match crate::history::record_study(h, doc, json) {
        Ok((id, db)) if !quiet => say(&format!("recorded as history #{id} in {}", db.display())),
        Ok(_) => {}
        Err(e) => say(&format!(
            "warning: the study was not recorded in the history: {e}"
        )),
    }
}

/// The plan's runs, each while it fits in the sweeps' share of the
/// budget's clock, then the search for the capacity at a latency target
/// when it fits before `after`; the scheduler restored after them. Returns
/// the runs (with what the clock dropped), the capacity and the runner's
/// notes.
fn run_sweeps(
    a: &StudyArgs,
    (targets, p): (&[TargetProfile], &Plan),
    stop: &Arc<AtomicBool>,
    (clock, after): (&Clock, &Deadline),
) -> (Executed, Option<CapacityDoc>, Vec<String>) {
    let sweeps = clock.keeping(clock::after_sweeps_s(p, clock.budget_s(), a.quick));
    let mut progress = print::StudyProgress::new(p, a.quiet);
    let (run_stop, allow) = (stop.clone(), a.allow_destructive);
    let run_fn = move |r: &ssdready_run::RunRequest| {
        crate::progress::run_request(r, run_stop.clone(), allow)
    };
    let mut runner = real::RealRunner::new(stop.clone(), targets, Box::new(run_fn));
    let mut ex = ssdready_study::driver::execute(targets, p, &mut runner, &mut progress, &sweeps);
    // Each run's start-up, as the sweeps' runs took it.
    let overhead_s = ex.per_run_s - p.settings.runtime_s - p.settings.ramp_s;
    let within = (after, overhead_s.max(p.overhead_s));
    let capacity = match a.ask().slo() {
        Some(_) if ex.interrupted || stop.load(std::sync::atomic::Ordering::Relaxed) => None,
        Some(s) => {
            slo::capacity_within(&s, targets, p, &mut runner, within).unwrap_or_else(|skip| {
                ex.skipped.push(skip);
                None
            })
        }
        None => None,
    };
    if let (Some(c), false) = (&capacity, a.quiet) {
        eprint!("{}", slo::text(c));
    }
    if let Err(w) = runner.restore() {
        eprintln!("ssdready: {w}");
    }
    progress.finish();
    let warnings = std::mem::take(&mut runner.notes);
    (ex, capacity, warnings)
}

/// Stop the built-in drive's daemon; its last words, if any, as a warning.
fn stop_drive(d: &mut kdrive::Drive) -> Option<String> {
    let line = d.stop();
    (!line.is_empty()).then(|| format!("the emulated drive's daemon: {line}"))
}

/// The exit code after the check against `--baseline` (3 when a key figure
/// got worse beyond the noise); a study that did not complete keeps its
/// `code` and is not checked.
fn regression_check(b: &crate::compare::Baseline, doc: &StudyDoc, code: i32) -> i32 {
    if code != 0 {
        say("no regression check: the study did not complete");
        return code;
    }
    crate::compare::regression_check(b, &ssdready_history::figures::from_study(doc))
}

/// The kernel drive's transport, measured with a zero-time drive (or the
/// measurement kept for this kernel and boot); None, with a warning, when
/// it could not be measured or measuring it would not fit before the
/// deadline of `at`.
fn calibrate(
    a: &StudyArgs,
    at: &AppsAt,
    runs: &[ssdready_measured::record::RunRecord],
    transport: &str,
    warnings: &mut Vec<String>,
) -> Option<ssdready_diagnosis::calibration::Calibration> {
    if let (_, Some(line)) = ssdready_study::calibrate::cache_base() {
        warnings.push(line);
    }
    let (s, allow) = (at.stop.clone(), a.allow_destructive);
    let mut job =
        move |r: &ssdready_run::RunRequest| crate::progress::run_request(r, s.clone(), allow);
    let with = (&mut job as &mut ssdready_run::RunFn<'_>, &**at.stop);
    match ssdready_study::calibrate::for_runs(runs, transport, at.runtime_s, with, at.deadline) {
        Ok(c) => {
            if !a.quiet {
                say(&c.note());
            }
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
    a: &StudyArgs,
    at: &AppsAt,
    (machine, caps): (&Machine, &ssdready_diagnosis::limit::caps::Caps),
    ex: &Executed,
    capacity: Option<&CapacityDoc>,
    warnings: &mut Vec<String>,
) -> (Judgement, Vec<Skip>) {
    let interrupted = ex.interrupted || at.stop.load(std::sync::atomic::Ordering::Relaxed);
    let transport = kdrive::transport_of(&at.targets[0].spec);
    let calibration = match (&transport, interrupted) {
        (Some(t), false) => calibrate(a, at, &ex.runs, &t.name, warnings),
        _ => None,
    };
    let mut j = ssdready_study::judge_with(
        at.targets,
        machine,
        &ex.runs,
        interrupted,
        ssdready_study::Beside {
            capacity,
            transport: transport.as_ref(),
            calibration: calibration.as_ref(),
            caps: Some(caps),
        },
    );
    if let Some(c) = &calibration {
        ssdready_study::calibrate::forget_if_beaten(c, &j.figures);
    }
    let skipped = if interrupted {
        Vec::new()
    } else {
        applications(a, at, &mut j)
    };
    (j, skipped)
}

/// Run `ssdready study`.
pub fn command(a: StudyArgs) -> crate::Done {
    // First of all: a signal at any moment is an interruption (exit code
    // 130), never the default action's death. SIGHUP too: a closed
    // terminal must restore the scheduler and remove what the study
    // created, as Ctrl-C does.
    let stop = crate::stop_on_signals()?;
    if let Some(file) = a.job.clone() {
        return job::command(&a, &file, stop);
    }
    if !a.client.is_empty() {
        return fleet::command(&a, stop);
    }
    // The budget's clock counts from here, the drive's attach included.
    let started = std::time::Instant::now();
    let started_ms = now_ms();
    let (budget_s, mut targets, dir, mut drive) = validate(&a, &stop)?;
    let clock = Clock::since(started, budget_s);
    let base = baseline_of(&a)?;
    let mut history = open_history(&a)?;
    let mut machine = detect::machine(None);
    // Held to the end: a second study changes none of these devices.
    let (_locks, refused) = trials::consent(&a, &targets, drive.is_some(), machine.root);
    let ask = ssdready_study::ask::Ask {
        host_changes: machine.root && (a.try_changes || drive.is_some()) && refused.is_none(),
        ..a.ask()
    };
    let p = ask.plan(budget_s, &targets, &machine);
    if !a.quiet {
        eprint!("{}", print::plan(&targets, &p, a.quick));
    }
    make_output(&dir, &stop)?;
    let limits = inventory(&targets, a.quiet);
    let after = clock.keeping(clock::before_trials_s(&p, budget_s, a.quick));
    let (ex, capacity, mut warnings) = run_sweeps(&a, (&targets, &p), &stop, (&clock, &after));
    remove_created(&targets, &mut warnings);
    machine.tsc_hz = tsc_hz(&ex.runs);
    let at = AppsAt {
        targets: &targets,
        dir: &dir,
        stop: &stop,
        runtime_s: p.settings.runtime_s,
        deadline: &after,
    };
    let caps = ssdready_diagnosis::limit::caps::Caps::of(&limits);
    let (mut j, app_skips) = judge(
        &a,
        &at,
        (&machine, &caps),
        &ex,
        capacity.as_ref(),
        &mut warnings,
    );
    let ran = trials::Ran {
        targets: &targets,
        plan: &p,
        runs: &ex.runs,
        machine: &machine,
        made_by_study: drive.is_some(),
        refused,
        clock: &clock,
        limits: &limits,
    };
    let (tried, notes) = trials::run(&a, &ran, &mut j, &stop);
    warnings.extend(notes);
    // A stop during the applications section interrupts the study too: the
    // document, the exit code (130) and the history say so.
    let interrupted = ex.interrupted || stop.load(std::sync::atomic::Ordering::Relaxed);
    warnings.extend(drive.as_mut().and_then(stop_drive));
    close_stacks(&mut targets, started_ms);
    let doc = StudyDoc {
        targets,
        machine,
        plan: p.doc(),
        skipped: [p.skipped.clone(), app_skips, ex.skipped].concat(),
        runs: ex.runs,
        figures: j.figures,
        facts: j.facts,
        verdicts: j.verdicts,
        interrupted,
        warnings,
        capacity,
        limits: Some(limits),
        trials: tried,
        ..header(&a, started_ms, budget_s)
    };
    let (code, json) = finish(&doc, &dir, started.elapsed().as_secs_f64());
    let code = remember(&a, history.as_mut(), base.as_ref(), &doc, json, code);
    crate::done(code)
}

/// The baseline `--baseline` names, looked up in the history.
fn baseline_of(a: &StudyArgs) -> Result<Option<crate::compare::Baseline>, crate::Exit> {
    a.baseline
        .as_deref()
        .map(|b| crate::compare::baseline(b, a.db.as_deref(), ssdready_history::Kind::Study))
        .transpose()
}

/// The TSC's rate, from the first run that read it.
fn tsc_hz(runs: &[ssdready_measured::record::RunRecord]) -> Option<f64> {
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

/// Each stacked target's counters, closed at the end of the study.
fn close_stacks(targets: &mut [TargetProfile], started_ms: u64) {
    for s in targets.iter_mut().filter_map(|t| t.stack.as_mut()) {
        let now = ssdready_probe::stack::snapshot(&s.disks());
        s.close(&now, now_ms().saturating_sub(started_ms));
    }
}

/// The document's header: what made it, when, with what budget.
fn header(a: &StudyArgs, started_ms: u64, budget_s: f64) -> StudyDoc {
    StudyDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect(),
        started_unix_ms: started_ms,
        finished_unix_ms: now_ms(),
        quick: a.quick,
        budget_s,
        ..Default::default()
    }
}

/// Record the study in the history (unless none of its runs succeeded:
/// nothing to remember) and check it against the baseline; returns the
/// exit code.
fn remember(
    a: &StudyArgs,
    history: Option<&mut crate::history::Recorder>,
    base: Option<&crate::compare::Baseline>,
    doc: &StudyDoc,
    json: Option<PathBuf>,
    code: i32,
) -> i32 {
    if let (Some(h), Some(json), true) = (history, &json, code != 1) {
        record(h, doc, json, a.quiet);
    }
    match base {
        Some(b) => regression_check(b, doc, code),
        None => code,
    }
}

/// Write study.json and print the findings; returns the exit code (1 when
/// study.json could not be written or no run succeeded, 130 when
/// interrupted) and where study.json went.
fn finish(doc: &StudyDoc, dir: &Path, wall_s: f64) -> (i32, Option<PathBuf>) {
    let text = serde_json::to_string_pretty(doc).expect("the study model always serialises") + "\n";
    let written = crate::output::write_in(dir, "study.json", &text).map_err(|e| e.to_string());
    let report = written
        .as_ref()
        .map_err(|e| e.clone())
        .and_then(|_| crate::report::write_report(dir, &text));
    // The findings' loss is an error like any other (study.json holds them).
    let printed = crate::stdout::write(&print::findings(doc, wall_s));
    for w in &doc.warnings {
        eprintln!("ssdready: {w}");
    }
    let json = match written {
        Ok(p) => {
            eprintln!("ssdready: wrote {} ({} runs)", p.display(), doc.runs.len());
            p
        }
        Err(e) => {
            say(&e);
            return (1, None);
        }
    };
    match report {
        Ok(p) => eprintln!("ssdready: wrote {}", p.display()),
        Err(e) => {
            say(&e);
            return (1, Some(json));
        }
    }
    trials::write_files(doc, dir);
    if let Err(e) = printed {
        say(&format!("{e} (the findings are in {})", json.display()));
        return (1, Some(json));
    }
    let ok = doc.runs.iter().filter(|r| r.error.is_none()).count();
    if doc.interrupted {
        eprintln!("ssdready: interrupted; the study covers what ran");
        return (130, Some(json));
    }
    if ok == 0 {
        let why = doc
            .runs
            .iter()
            .find_map(|r| r.error.clone())
            .unwrap_or_default();
        say(&format!("no run of the study succeeded: {why}"));
        return (1, Some(json));
    }
    (0, Some(json))
}
