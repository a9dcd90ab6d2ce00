//! `ssdready study [TARGET] [--quick] [--output DIR] [--budget TIME]`: how
//! much of the device's speed this platform delivers to applications,
//! where the rest goes, and what to change — in one command.
//!
//! The study is one call of the study crate: `ssdready_study::session::
//! study` (a fleet's with `--client` too) or, with `--job`,
//! `ssdready_study::session_job::study_job` (`job`). This command turns
//! its arguments into the study's options, prints the progress lines the
//! study composes (`print`, `ssdready_study::progress`), writes
//! `DIR/study.json`, its HTML report and the configuration's files
//! atomically, prints the findings, and records the study in the history
//! database (`--db`; `crate::history::StudyRecord`, which also checks it
//! against `--baseline`: exit 3 when a key figure got worse beyond the
//! noise). Bad input gets one line and exit code 2 with nothing written;
//! Ctrl-C stops after the current run, still writes what ran, and exits
//! 130.

mod job;
mod print;

use crate::{fail, say};
use ssdready_diagnosis::model::StudyDoc;
use ssdready_study::progress::{self, wrote};
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
    /// The study's options: what the command line asks.
    fn options(&self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> session::Options {
        let ask = ssdready_study::ask::Ask {
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
        };
        let (tool, command) = (
            format!("ssdready {}", env!("CARGO_PKG_VERSION")),
            std::env::args(),
        );
        let try_changes = self.try_changes;
        session::Options {
            ask,
            try_changes,
            stop,
            tool,
            command: command.collect(),
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
    let (o, allow) = (a.options(stop.clone()), a.allow_destructive);
    let run = |r: &ssdready_run::RunRequest| crate::progress::run_request(r, stop.clone(), allow);
    let mut shown = print::Shown::new(a.quiet);
    if let Some(file) = &a.job {
        return job::command(&a, o, file, &run, &mut shown);
    }
    let started = std::time::Instant::now();
    // A fleet's study refuses --baseline and --db (its checks say so).
    let mut history = match a.client.is_empty() {
        true => Some(crate::history::StudyRecord::prepare(
            a.db.as_deref(),
            a.baseline.as_deref(),
        )?),
        false => None,
    };
    let s = session::study(&o, &run, &session::host_hands, &mut shown)
        .map_err(|e| fail(e.exit_code(), &e.to_string()))?;
    let wall_s = started.elapsed().as_secs_f64();
    let (code, json) = match s.of {
        session::Of::Fleet { partial } => fleet(&s.doc, &s.dir, partial, wall_s),
        session::Of::Machine => finish(&s.doc, &s.dir, wall_s),
    };
    let code = match history.as_mut() {
        Some(h) => h.remember(&s.doc, json.as_deref(), code, a.quiet),
        None => code,
    };
    crate::done(code)
}

/// The document's text, as study.json holds it.
fn json_of(doc: &StudyDoc) -> String {
    serde_json::to_string_pretty(doc).expect("the study model always serialises") + "\n"
}

/// Write study.json and its report and print the findings (the findings'
/// loss is an error like any other: study.json holds them); returns the
/// exit code and where study.json went.
fn finish(doc: &StudyDoc, dir: &Path, wall_s: f64) -> (i32, Option<PathBuf>) {
    let text = json_of(doc);
    let written = crate::output::write_in(dir, "study.json", &text).map_err(|e| e.to_string());
    let report = written
        .clone()
        .and_then(|_| crate::report::write_report(dir, &text));
    let printed = crate::stdout::write(&print::findings(doc, wall_s));
    for w in &doc.warnings {
        eprintln!("ssdready: {w}");
    }
    let json = match written {
        Ok(p) => p,
        Err(e) => return said(&e, 1),
    };
    eprintln!(
        "ssdready: {}",
        wrote(&json, &format!("{} runs", doc.runs.len()))
    );
    if let Err(e) = report.map(|p| eprintln!("ssdready: {}", wrote(&p, ""))) {
        say(&e);
        return (1, Some(json));
    }
    for (f, what) in progress::config_files(doc) {
        match crate::output::write_in(dir, f.name, &f.text) {
            Ok(p) => eprintln!("ssdready: {}", wrote(&p, what)),
            Err(e) => say(&format!("{} was not written: {e}", f.name)),
        }
    }
    if let Err(e) = printed {
        say(&format!("{e} (the findings are in {})", json.display()));
        return (1, Some(json));
    }
    let (code, line) = progress::study_end(doc);
    line.inspect(|l| say(l));
    (code, Some(json))
}

/// A fleet's study: print its block, write study.json and its report (a
/// report not written is a warning); the exit code.
fn fleet(doc: &StudyDoc, dir: &Path, partial: bool, wall_s: f64) -> (i32, Option<PathBuf>) {
    let text = json_of(doc);
    if let Err(e) = crate::stdout::write(&ssdready_study::fleet_run::block(doc, wall_s)) {
        return said(&e, 1);
    }
    match crate::output::write_in(dir, "study.json", &text) {
        Ok(p) => eprintln!("ssdready: {}", wrote(&p, "")),
        Err(e) => return said(&e.to_string(), 1),
    }
    match crate::report::write_report(dir, &text) {
        Ok(p) => eprintln!("ssdready: {}", wrote(&p, "")),
        Err(e) => say(&format!("warning: {e}")),
    }
    let (code, line) = progress::fleet_end(doc, partial);
    line.inspect(|l| say(l));
    (code, None)
}

/// `line` said, and the exit `code` with no study.json.
fn said(line: &str, code: i32) -> (i32, Option<PathBuf>) {
    say(line);
    (code, None)
}
