//! `ssdready study [TARGET] [--quick] [--output DIR] [--budget TIME]`: how
//! much of the device's speed this platform delivers to applications,
//! where the rest goes, and what to change — in one command.
//!
//! The study is one call, `ssdready_study::session::study`: it checks what
//! it is asked, detects the target (the built-in drive behind the kernel
//! when there is none), plans sweeps to fit the budget and keeps it by the
//! clock from its start, runs each point through this binary's run
//! function, judges the runs, tries the changes the findings point at
//! through the host's hands, and returns the document; a fleet's study
//! (`--client`) goes through the same call. This command turns its
//! arguments into the study's options, prints the study's progress
//! through its observer (`print`), writes `DIR/study.json`, its HTML
//! report `DIR/report.html` and the configuration's files atomically,
//! prints the findings, and records the study in the history database
//! (`--db`; a failure to record is a warning). With `--baseline` it then
//! compares the study with an earlier one and exits 3 when a key figure
//! got worse beyond the noise. Bad input gets one line and exit code 2
//! with nothing written; Ctrl-C stops after the current run, still writes
//! what ran, and exits 130. `--job` is the study of a job file (`job`).

mod fleet;
mod job;
mod print;

use crate::{fail, say};
use ssdready_diagnosis::model::StudyDoc;
use ssdready_study::session;
use std::path::{Path, PathBuf};

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
    /// turns and put back after (journaled under /run/ssdready); with
    /// --job, those whose limit can bind for the job, and each limit of
    /// the study's control groups lifted alone, on the job as written.
    #[arg(long)]
    pub try_changes: bool,
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
    let started = std::time::Instant::now();
    // A fleet's study refuses --baseline and --db (its checks say so).
    let (base, mut history) = match a.client.is_empty() {
        true => (baseline_of(&a)?, open_history(&a)?),
        false => (None, None),
    };
    let o = session::Options {
        ask: a.ask(),
        try_changes: a.try_changes,
        stop: stop.clone(),
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect(),
    };
    let allow = a.allow_destructive;
    let run = |r: &ssdready_run::RunRequest| crate::progress::run_request(r, stop.clone(), allow);
    let mut shown = print::Shown::new(a.quiet);
    let s = session::study(&o, &run, &session::host_hands, &mut shown)
        .map_err(|e| fail(e.exit_code(), &e.to_string()))?;
    let wall_s = started.elapsed().as_secs_f64();
    if let session::Of::Fleet { partial } = s.of {
        return fleet::finish(&s.doc, &s.dir, partial, wall_s);
    }
    let (code, json) = finish(&s.doc, &s.dir, wall_s);
    let code = remember(&a, history.as_mut(), base.as_ref(), &s.doc, json, code);
    crate::done(code)
}

/// The baseline `--baseline` names, looked up in the history.
fn baseline_of(a: &StudyArgs) -> Result<Option<crate::compare::Baseline>, crate::Exit> {
    a.baseline
        .as_deref()
        .map(|b| crate::compare::baseline(b, a.db.as_deref(), ssdready_history::Kind::Study))
        .transpose()
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

/// The study as the history reduces it, or why its document does not
/// read back.
type Reduced = Result<ssdready_history::Side, serde_json::Error>;

/// Record the study in the history database (a failure is a warning).
fn record(h: &mut crate::history::Recorder, side: &Reduced, json: &Path, quiet: bool) {
    let side = match side {
        Ok(s) => s,
        Err(e) => {
            return say(&format!(
                "warning: the study was not recorded in the history: its document does not read back: {e}"
            ))
        }
    };
    match crate::history::record_study(h, side, json) {
        Ok((id, db)) if !quiet => say(&format!("recorded as history #{id} in {}", db.display())),
        Ok(_) => {}
        Err(e) => say(&format!(
            "warning: the study was not recorded in the history: {e}"
        )),
    }
}

/// The exit code after the check against `--baseline` (3 when a key figure
/// got worse beyond the noise); a study that did not complete keeps its
/// `code` and is not checked.
fn regression_check(b: &crate::compare::Baseline, side: &Reduced, code: i32) -> i32 {
    if code != 0 {
        say("no regression check: the study did not complete");
        return code;
    }
    match side {
        Ok(s) => crate::compare::regression_check(b, s),
        Err(e) => {
            say(&format!(
                "no regression check: the study's document does not read back: {e}"
            ));
            1
        }
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
    let side = crate::history::study_side(doc);
    if let (Some(h), Some(json), true) = (history, &json, code != 1) {
        record(h, &side, json, a.quiet);
    }
    match base {
        Some(b) => regression_check(b, &side, code),
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
    write_files(doc, dir);
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

/// Write the configuration's files (udev rules, a systemd drop-in, the
/// fio job) into the study's directory, each atomically, saying on
/// stderr which; nothing where the trials kept no configuration. A file
/// that cannot be written is said, and the study goes on.
fn write_files(doc: &ssdready_diagnosis::model::StudyDoc, dir: &Path) {
    use ssdready_diagnosis::combination_files::{self as files, FIO, SYSTEMD, UDEV};
    let Some(c) = doc.trials.as_ref().and_then(|t| t.combination.as_ref()) else {
        return;
    };
    let date = files::date_of(doc.started_unix_ms);
    for f in files::files(c, &date, doc.limits.as_ref()) {
        let what = match f.name {
            UDEV => "the configuration's queue settings, as udev rules",
            SYSTEMD => "the configuration's control-group properties, as a systemd drop-in",
            FIO => "the configuration's job",
            _ => "",
        };
        match crate::output::write_in(dir, f.name, &f.text) {
            Ok(p) => eprintln!("ssdready: wrote {} ({what})", p.display()),
            Err(e) => say(&format!("{} was not written: {e}", f.name)),
        }
    }
}
