//! What the caller hands the study as one call ([`crate::session::study`]):
//! the options it is asked ([`Options`]), how a run is executed ([`Run`]),
//! the hands for the trials ([`MakeHands`], [`host_hands`]) and the
//! observer of its progress ([`Observer`]); and what the study of a job
//! gives back: its document ([`JobDoc`], `job-study.json`, with the job
//! file's text and its SHA-256 so that a later study of the same file can
//! be matched) and the comparison with an earlier one ([`compare`]).

use crate::ask::Ask;
use crate::driver;
use crate::plan::Plan;
use crate::trials::Hands;
use ssdready_core::result::RunResult;
use ssdready_run::{Failure, RunRequest};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::job::{RunFigures, VariantResult};
use crate::trials::on_job::HostSection;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use ssdready_diagnosis::limit::job::best::Best;
use ssdready_diagnosis::limit::point::{Held, JudgedFrom};

/// How a run is executed: the caller's run function (`run`'s path, with
/// the targets' safety checks and `--allow-destructive` as it takes it).
pub type Run<'a> = dyn Fn(&RunRequest) -> Result<RunResult, Failure> + 'a;

/// The hands for the trials, made for the devices they may change.
pub type MakeHands<'a> = dyn Fn(Allowed) -> Box<dyn Hands> + 'a;

/// What the trials' hands may change.
#[derive(Clone, Debug, Default)]
pub struct Allowed {
    /// The target's device and its stack's members.
    pub disks: Vec<String>,
    /// The study runs as root.
    pub root: bool,
    /// Why the devices' settings may not be changed (another process holds
    /// their lock), if so.
    pub refused: Option<String>,
}

/// The hands of this host ([`crate::trials::hands::HostHands`]).
pub fn host_hands(a: Allowed) -> Box<dyn Hands> {
    let mut h = crate::trials::hands::HostHands::new(a.disks, a.root);
    if let Some(why) = a.refused {
        h.refuse_queue(why);
    }
    Box::new(h)
}

/// What the study is asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// The command line's values (the target among them).
    pub ask: Ask,
    /// `--try-changes`: as root, try the device's queue settings too.
    pub try_changes: bool,
    /// Set by a signal: the study stops after the current run.
    pub stop: Arc<AtomicBool>,
    /// What made the study (`ssdready VERSION`) and its command line, for
    /// the document's header.
    pub tool: String,
    pub command: Vec<String>,
}

/// Hears the study's progress.
pub trait Observer: driver::Observer {
    /// A line of progress (a quiet study says none).
    fn note(&mut self, line: &str);
    /// A line said even in a quiet study: a warning or a refusal.
    fn warn(&mut self, line: &str);
    /// A block of progress text as it is: the plan before the first run,
    /// the capacity found.
    fn block(&mut self, text: &str);
    /// The sweeps start: the plan's runs.
    fn sweeps(&mut self, _plan: &Plan) {}
    /// The sweeps are over.
    fn sweeps_done(&mut self) {}
}

/// The document's schema name and version.
pub const SCHEMA: &str = "ssdready-job-study";
pub const SCHEMA_VERSION: u32 = 1;

/// The study of a job file, as written to `job-study.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JobDoc {
    pub schema: String,
    pub schema_version: u32,
    pub tool: String,
    pub command: Vec<String>,
    pub started_unix_ms: u64,
    pub finished_unix_ms: u64,
    /// The job file as given, its text and the text's SHA-256.
    pub job_file: String,
    pub job_text: String,
    pub job_sha256: String,
    pub section: Option<String>,
    /// Each job as fio runs it, in words ([`crate::job::described`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs_read: Vec<String>,
    /// The target that replaced the job's `filename`, when given.
    pub target: Option<String>,
    /// Each run's length, seconds.
    pub runtime_s: f64,
    /// Each repeat of the job as written.
    pub repeats: Vec<RunFigures>,
    /// The repeats' median IOPS (both directions) and spread (max − min,
    /// percent of the median).
    pub median_iops: f64,
    pub spread_pct: f64,
    /// The changes of the application's I/O mechanics, one at a time.
    pub variants: Vec<VariantResult>,
    /// What a different workload would get: the variants that change what
    /// the application reads and writes (its block size), apart from its
    /// own, never in the best configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub different_workloads: Vec<VariantResult>,
    /// The job once more with its latency split along its path and its CPU
    /// profiled by layer (root only: the kernel's tracepoints and
    /// system-wide samples); its figures are not among the repeats', the
    /// instruments costing some of the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrumented: Option<RunFigures>,
    /// A rate-limited job: whether it reached its rate, and its p99 there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<String>,
    /// The host's changes tried on the job (`--try-changes`, root), and
    /// those not tried with why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostSection>,
    /// A rate-limited job's capacity at its own latency target, by the
    /// open-loop search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::capacity::CapacityDoc>,
    /// The device's ceiling for the job's mix, where a model of it is
    /// known (an emulated drive), and the share the job got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<crate::capacity::job::Ceiling>,
    /// Every change that gained, together, in turns against the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<Best>,
    /// fio beside the study: the same job, its mechanics and its best
    /// configuration run by fio, the study's figures set against fio's;
    /// or why fio did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<ssdready_diagnosis::limit::job::fio::FioBeside>,
    /// What can cap the study's I/O on this host, read before its runs.
    pub limits: Vec<String>,
    /// What holds the job, each with its evidence (or "not identified"),
    /// in lines: [`JobDoc::held`]'s words.
    pub holds: Vec<String>,
    /// Where the trials of the host's changes point, where not at what the
    /// measurements named ("not identified" too): the change that gained
    /// and the cause it lifts, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_point: Option<String>,
    /// What holds the job as the device study's causes judge it, the
    /// job's reads and writes apart where it does both.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Held>,
    /// The device study's rules on the job's runs, beside what holds it
    /// (`ssdready_diagnosis::job_findings`: the platform's share of the
    /// latency at QD 1, a machine too noisy to conclude, other work
    /// present, the cross-checks that disagreed, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<ssdready_measured::record::Verdict>,
    /// The job's runs as the device study keeps its points (their figures
    /// and what was read around them, the results left out): what
    /// [`JobDoc::held`] was judged from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<ssdready_measured::record::RunRecord>,
    /// What [`JobDoc::held`] was judged from besides the points (the
    /// target, the machine, the levers' context with the limits, the job's
    /// point, each job's figures in each run), so that `ssdready report
    /// --rejudge` can judge the job again; None in a study recorded before
    /// it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_from: Option<JudgedFrom>,
    pub notes: Vec<String>,
    pub interrupted: bool,
    /// Why no repeat of the job ran, when none did.
    pub error: Option<String>,
}

/// The SHA-256 of a job file's text, in hex.
pub fn sha256(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A job study set against an earlier one of the same job file.
#[derive(Clone, Debug, PartialEq)]
pub enum Compared {
    /// The same file; the change of the median IOPS, percent, and whether
    /// it is worse beyond both studies' spreads.
    Same { change_pct: f64, worse: bool },
    /// Another job file (its hash differs): nothing to compare.
    OtherFile { was: String },
}

/// This study against `earlier`: by the job file's hash, then the repeats'
/// medians, a loss counting beyond the larger of both spreads and 10 %.
pub fn compare(now: &JobDoc, earlier: &JobDoc) -> Compared {
    if now.job_sha256 != earlier.job_sha256 {
        return Compared::OtherFile {
            was: earlier.job_file.clone(),
        };
    }
    let change_pct = 100.0 * (now.median_iops / earlier.median_iops.max(1e-9) - 1.0);
    let noise = now
        .spread_pct
        .max(earlier.spread_pct)
        .max(crate::job::GAIN_PCT);
    Compared::Same {
        change_pct,
        worse: change_pct < -noise,
    }
}

#[cfg(test)]
mod compare_tests {
    use super::*;

    fn doc(sha: &str, median: f64, spread: f64) -> JobDoc {
        JobDoc {
            job_sha256: sha.into(),
            job_file: "db.fio".into(),
            median_iops: median,
            spread_pct: spread,
            ..Default::default()
        }
    }

    #[test]
    fn a_study_of_the_same_job_file_is_worse_only_beyond_both_spreads() {
        let before = doc("ab", 10_000.0, 4.0);
        let Compared::Same { change_pct, worse } = compare(&doc("ab", 8_500.0, 3.0), &before)
        else {
            panic!("the same file");
        };
        assert!((change_pct + 15.0).abs() < 1e-9 && worse, "{change_pct}");
        assert!(matches!(
            compare(&doc("ab", 8_500.0, 20.0), &before),
            Compared::Same { worse: false, .. }
        ));
        assert!(matches!(
            compare(&doc("cd", 1.0, 0.0), &before),
            Compared::OtherFile { .. }
        ));
    }
}
