//! The study of a job file as one call ([`study_job`], `ssdready study
//! --job`): the options a job's study does not take refused, the command
//! line checked, the baseline read, the job file read as `run` reads it
//! (includes, globals, several jobs; the target replaces each job's
//! `filename`) and checked whole before anything is written (a parse-only
//! run through the caller's run function: every option, and the targets'
//! safety checks), the devices' locks taken when the study may change
//! their settings, then the job run in repeats, in variants and with the
//! host's changes ([`crate::job_run::execute`]), and the document made;
//! beside it each run's length from the budget, the limits that can cap
//! the job's I/O, and the user's job with the best configuration's
//! options. The caller writes the files; nothing here exits the process.

use crate::ask::AskError;
use crate::job;
use crate::job_run::{self, Compared, HostPlan, JobDoc};
use crate::session_parts::{Allowed, MakeHands, Observer, Options, Run};
use ssdready_core::options::Section;
use ssdready_diagnosis::combination_files::File;
use ssdready_diagnosis::limit::caps::Caps;
use ssdready_diagnosis::limit::job::best as job_best;
use ssdready_measured::limits::Inventory;
use ssdready_run::{Failure, RunFn};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

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
    #[error(transparent)]
    Ask(#[from] AskError),
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
    #[error("interrupted before the study's first run (nothing written)")]
    Interrupted,
    #[error("option '--output': creating {}: {source}", dir.display())]
    Output {
        dir: PathBuf,
        source: std::io::Error,
    },
}

impl JobStudyError {
    /// The command's exit code: 130 after a signal, the run's own for a
    /// refused job, 2 for other bad input.
    pub fn exit_code(&self) -> i32 {
        match self {
            JobStudyError::Check(f) => f.exit_code(),
            JobStudyError::Interrupted => 130,
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
    let doc: JobDoc = serde_json::from_str(&text)
        .map_err(|e| JobStudyError::Baseline(format!("{f}: not a job study ({e})")))?;
    match doc.schema == job_run::SCHEMA {
        true => Ok(doc),
        false => Err(JobStudyError::Baseline(format!(
            "{f}: not a job study (allowed: a directory or job-study.json of `study --job`)"
        ))),
    }
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
    let disks = crate::job_levers::disks(sections);
    let (locks, refused) = match root && o.try_changes {
        true => match crate::trials_hands::hold(&disks) {
            Ok(locks) => (locks, None),
            Err(why) => {
                obs.warn(&why);
                (Vec::new(), Some(why))
            }
        },
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
fn header(o: &JobOptions, text: String, runtime_s: f64, limits: Vec<String>) -> JobDoc {
    JobDoc {
        schema: job_run::SCHEMA.into(),
        schema_version: job_run::SCHEMA_VERSION,
        tool: o.study.tool.clone(),
        command: o.study.command.clone(),
        started_unix_ms: crate::session::now_ms(),
        job_file: o.file.clone(),
        job_sha256: job_run::sha256(&text),
        job_text: text,
        section: o.section.clone(),
        target: o.study.ask.target.clone(),
        runtime_s,
        limits,
        ..Default::default()
    }
}

/// Every option of the job and its targets' safety checked by a
/// parse-only run, then the output directory made (nothing written when
/// a signal came first or it cannot be made).
fn check_and_make(
    sections: &[Section],
    o: &Options,
    run: &Run,
    dir: &Path,
) -> Result<(), JobStudyError> {
    let mut check = job::request(sections, &o.stop);
    check.parse_only = true;
    run(&check).map_err(JobStudyError::Check)?;
    if o.stop.load(Relaxed) {
        return Err(JobStudyError::Interrupted);
    }
    std::fs::create_dir_all(dir).map_err(|source| JobStudyError::Output {
        dir: dir.to_path_buf(),
        source,
    })
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
    let (budget_s, dir) = so.ask.check()?;
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
    let mut host = HostPlan::new(
        &as_written,
        Some(inv.clone()),
        so.try_changes,
        hands.as_mut(),
        ask_command(o),
    );
    let host_runs = host.runs();
    let runs = job_run::REPEATS
        + usize::from(root)
        + job::variants(&sections).len()
        + 2 * job_best::PAIRS
        + host_runs
        + job_run::capacity_runs(&sections);
    let runtime = runtime_s(budget_s, runs);
    let (sections, cut) = job::prepared(&sections, target, runtime);
    check_and_make(&sections, so, run, &dir)?;
    for l in &limits {
        obs.note(&format!("a limit on this study's I/O: {l}"));
    }
    let mut doc = header(o, text, runtime, limits);
    doc.notes.extend(cut);
    obs.note(&crate::progress::job_plan(
        &o.file, runs, host_runs, runtime,
    ));
    let clocked = Clocked {
        run,
        started,
        budget_s,
        longest: Cell::new(job::run_wall_s(&sections, runtime) + RUN_START_S),
        refused: Cell::new(0),
    };
    let mut each = |r: &ssdready_run::RunRequest| clocked.run(r);
    let mut tell = |m: String| obs.note(&m);
    let both = (&mut each as &mut RunFn, &mut host);
    let judge = crate::real::Judge::of(&sections, &inv);
    job_run::execute(&mut doc, &sections, &judge, both, &so.stop, &mut tell);
    drop(host);
    doc.notes.extend(clocked.note());
    doc.notes.extend(hands.finish());
    doc.finished_unix_ms = crate::session::now_ms();
    doc.interrupted |= so.stop.load(Relaxed);
    let best = best_file(&mut doc, &as_written);
    let host_files = job_run::host_files(&doc, Some(&inv));
    let compared = earlier.map(|e| job_run::compare(&doc, &e));
    Ok(JobStudied {
        doc,
        dir,
        best,
        host_files,
        compared,
    })
}

/// What starting a run and writing its result take, about, beside its
/// length (the clock's allowance before a run starts).
const RUN_START_S: f64 = 0.5;

/// The budget's clock around the caller's run function: no run starts
/// that would end past the budget, a run taking what the job's phases
/// take, or the longest run so far; the runs refused are counted.
struct Clocked<'a> {
    run: &'a Run<'a>,
    started: std::time::Instant,
    budget_s: f64,
    longest: Cell<f64>,
    refused: Cell<usize>,
}

impl Clocked<'_> {
    fn run(&self, r: &ssdready_run::RunRequest) -> Result<ssdready_run::RunResult, Failure> {
        let left = self.budget_s - self.started.elapsed().as_secs_f64();
        let run_s = self.longest.get();
        if left < run_s {
            self.refused.set(self.refused.get() + 1);
            return Err(Failure::Runtime(format!(
                "not run: {left:.0} s of the budget left, a run takes {run_s:.0} s"
            )));
        }
        let at = std::time::Instant::now();
        let result = (self.run)(r);
        self.longest.set(run_s.max(at.elapsed().as_secs_f64()));
        result
    }

    /// The note of the runs not made, where some were not.
    fn note(&self) -> Option<String> {
        let n = self.refused.get();
        (n > 0).then(|| {
            format!(
                "the budget ({:.0} s) ran out: {n} runs were not made",
                self.budget_s
            )
        })
    }
}

/// Each run's length: the budget shared by the repeats and the variants,
/// a tenth kept for starting each run; 1 to 60 s.
pub fn runtime_s(budget_s: f64, runs: usize) -> f64 {
    (0.9 * budget_s / runs.max(1) as f64)
        .clamp(1.0, 60.0)
        .floor()
}

/// The limits that can cap the job's I/O: its control groups', the CPUs
/// it may use, and the queue of the device its first target is on; with
/// the ones that hold below the machine's own, one line each, and the
/// inventory they were read from.
pub fn caps(sections: &[Section]) -> (Caps, Vec<String>, Inventory) {
    let j = sections.iter().position(|s| !s.global).unwrap_or(0);
    let devices: Vec<(u32, u32)> = job::spec(sections, j)
        .filename
        .into_iter()
        .next()
        .and_then(|f| {
            let p = std::path::absolute(Path::new(&f)).ok()?;
            let on = p.ancestors().find(|a| a.exists())?.to_path_buf();
            ssdready_probe::limits_dev::device_of_path(&on)
                .ok()
                .flatten()
        })
        .into_iter()
        .collect();
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
mod tests {
    use super::*;

    #[test]
    fn a_run_is_a_share_of_the_budget_between_one_and_sixty_seconds() {
        assert_eq!(runtime_s(100.0, 9), 10.0);
        assert_eq!(runtime_s(10.0, 20), 1.0);
        assert_eq!(runtime_s(10_000.0, 3), 60.0);
        assert_eq!(runtime_s(50.0, 0), 45.0);
    }

    fn options(ask: crate::ask::Ask, file: &str) -> JobOptions {
        JobOptions {
            study: Options {
                ask,
                try_changes: false,
                stop: Default::default(),
                tool: "ssdready test".into(),
                command: Vec::new(),
            },
            file: file.into(),
            section: None,
            baseline: None,
        }
    }

    /// The study of `o` whose run function must not be called.
    fn refused(o: &JobOptions) -> JobStudyError {
        struct Quiet;
        impl crate::driver::Observer for Quiet {
            fn starting(&mut self, _: usize, _: &str, _: f64) {}
            fn finished(&mut self, _: &ssdready_measured::record::RunRecord) {}
        }
        impl Observer for Quiet {
            fn note(&mut self, _: &str) {}
            fn warn(&mut self, _: &str) {}
            fn block(&mut self, _: &str) {}
        }
        let run = |_: &ssdready_run::RunRequest| -> Result<_, Failure> {
            panic!("refused before any run")
        };
        match study_job(o, &run, &crate::session::host_hands, &mut Quiet) {
            Err(e) => e,
            Ok(_) => panic!("the study ran"),
        }
    }

    #[test]
    fn the_options_a_job_study_does_not_take_are_refused_in_one_line() {
        let cases = [
            (
                crate::ask::Ask {
                    clients: vec!["h1".into()],
                    ..Default::default()
                },
                "option '--client': not with --job (a fleet's study runs its own plan)",
            ),
            (
                crate::ask::Ask {
                    slo: Some("p99=1ms".into()),
                    ..Default::default()
                },
                "option '--slo': not with --job (the job's own rate and depth set its load)",
            ),
            (
                crate::ask::Ask {
                    sweeps: vec!["raw".into()],
                    ..Default::default()
                },
                "option '--sweeps': not with --job (the job is the study's point)",
            ),
            (
                crate::ask::Ask {
                    in_process: true,
                    ..Default::default()
                },
                "option '--in-process': not with --job (the job names its own target)",
            ),
        ];
        for (ask, line) in cases {
            let e = refused(&options(ask, "job.fio"));
            assert!(matches!(e, JobStudyError::NotWithJob { .. }), "{e:?}");
            assert_eq!((e.exit_code(), e.to_string()), (2, line.to_string()));
        }
        assert!(refuse_options(&options(Default::default(), "job.fio").study).is_ok());
    }

    #[test]
    fn a_job_file_the_study_cannot_repeat_is_refused_before_any_run() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pre.fio");
        std::fs::write(
            &file,
            "[j]\nfilename=/dev/null\nexec_prerun=true\nrw=read\n",
        )
        .unwrap();
        let ask = crate::ask::Ask {
            output: Some(dir.path().join("out")),
            ..Default::default()
        };
        let e = refused(&options(ask, file.to_str().unwrap()));
        assert!(matches!(e, JobStudyError::Job(_)), "{e:?}");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("option 'exec_prerun'"), "{e}");
        assert!(!dir.path().join("out").exists());
    }

    #[test]
    fn a_baseline_that_is_not_a_job_study_is_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let e = baseline(dir.path().to_str().unwrap()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("option '--baseline': "), "{e}");
        let f = dir.path().join("job-study.json");
        std::fs::write(&f, "{\"schema\": \"ssdready-study\"}").unwrap();
        let e = baseline(f.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains(": not a job study ("), "{e}");
        let doc = JobDoc {
            schema: "ssdready-study".into(),
            ..Default::default()
        };
        std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
        let e = baseline(dir.path().to_str().unwrap()).unwrap_err();
        assert!(e.to_string().ends_with("of `study --job`)"), "{e}");
        let doc = JobDoc {
            schema: job_run::SCHEMA.into(),
            ..Default::default()
        };
        std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
        assert!(baseline(dir.path().to_str().unwrap()).is_ok());
    }

    #[test]
    fn the_signal_before_the_first_run_and_a_refused_job_keep_their_exit_codes() {
        assert_eq!(JobStudyError::Interrupted.exit_code(), 130);
        let f = Failure::Runtime("refused".into());
        assert_eq!(JobStudyError::Check(f).exit_code(), 1);
    }

    #[test]
    fn no_best_file_without_a_gain_beyond_the_noise() {
        let mut doc = JobDoc::default();
        assert!(best_file(&mut doc, &[]).is_none());
    }
}
