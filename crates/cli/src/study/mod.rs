//! `ssdready study [TARGET] [--quick] [--output DIR] [--budget TIME]`: how
//! much of the device's speed this platform delivers to applications,
//! where the rest goes, and what to change — in one command.
//!
//! The study is one call of the study crate: `ssdready_study::session::
//! study` (a fleet's with `--client` too) or, with `--job`,
//! `ssdready_study::session::study_job`. This command turns its
//! arguments into the study's options, prints the progress the study
//! reports (`crate::progress::study`), prints the findings, writes the
//! files the study names (`ssdready_study::outputs`) atomically, and
//! records a study of this machine in the history database (`--db`;
//! `crate::history::StudyRecord`, which also checks it against
//! `--baseline`: exit 3 when a key figure got worse beyond the noise; a
//! job's study is checked against its own `--baseline` likewise). Bad
//! input gets one line and exit code 2 with nothing written; Ctrl-C stops
//! after the current run, still writes what ran, and exits 130.

use crate::{fail, progress::study::Shown, say};
use ssdready_study::outputs::{self, Closing, Output};
use ssdready_study::session::{self, Options, Run};
use ssdready_study::session::{study_job, JobOptions};
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
        session::Options {
            ask,
            try_changes: self.try_changes,
            stop,
            tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
            command: std::env::args().collect(),
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
    let mut shown = Shown::new(a.quiet);
    if let Some(file) = a.job.clone() {
        return job(a, o, file, &run, &mut shown);
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
    let end = outputs::closing(&s, started.elapsed().as_secs_f64());
    s.doc
        .warnings
        .iter()
        .for_each(|w| eprintln!("ssdready: {w}"));
    let (code, json) = finish(end, outputs::of_study(&s), &s.dir);
    let code = match history.as_mut() {
        Some(h) => h.remember(&s.doc, json.as_deref(), code, a.quiet),
        None => code,
    };
    crate::done(code)
}

/// `ssdready study --job FILE [--section NAME] [TARGET]`: the study of the
/// user's own workload; its files and its closing (`outputs`).
fn job(a: StudyArgs, study: Options, file: String, run: &Run, shown: &mut Shown) -> crate::Done {
    let o = JobOptions {
        study,
        file,
        section: a.section,
        baseline: a.baseline,
    };
    let s = study_job(&o, run, &session::host_hands, shown)
        .map_err(|e| fail(e.exit_code(), &e.to_string()))?;
    crate::done(finish(outputs::job_closing(&s), outputs::of_job(&s), &s.dir).0)
}

/// Print the findings, write the study's files in `dir`, and say how the
/// study ended when nothing failed; the exit code, and where the study's
/// JSON went. The findings' loss is an error like any other (the JSON
/// holds them).
fn finish(
    end: Closing,
    files: Result<Vec<Output>, serde_json::Error>,
    dir: &Path,
) -> (i32, Option<PathBuf>) {
    let printed = crate::stdout::write(&end.text);
    let (code, json) = match files {
        Ok(files) => crate::report::write_outputs(dir, files),
        Err(e) => {
            say(&format!("the study's JSON was not made: {e}"));
            (1, None)
        }
    };
    if let Err(e) = printed {
        say(&format!("{e} (the findings are in {})", dir.display()));
        return (1, json);
    }
    if code != 0 {
        return (code, json);
    }
    end.line.iter().for_each(|l| say(l));
    (end.code, json)
}
