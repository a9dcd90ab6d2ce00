//! Running the study of a job file ([`crate::job`]): the job in repeats,
//! then each variant once, through the binary's run function; the
//! document it gives (`job-study.json`, with the job file's text and its
//! SHA-256 so that a later study of the same file can be matched) and its
//! words.

use crate::job::{self, RunFigures, Variant, VariantResult};
use crate::job_levers::Planned;
use crate::job_trials::{self, Host, HostSection};
use crate::real::{Judge, Kind, Points};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use ssdready_core::options::Section;
use ssdready_diagnosis::limit::job::best::{self as job_best, Best};
use ssdready_diagnosis::limit::job::gain as job_gain;
use ssdready_diagnosis::limit::point::{held_words, Held};
use ssdready_diagnosis::trials::{Trial, Untested};
use ssdready_run::RunFn;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// The document's schema name and version.
pub const SCHEMA: &str = "ssdready-job-study";
pub const SCHEMA_VERSION: u32 = 1;

/// Repeats of the job as written.
pub const REPEATS: usize = 3;

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
    /// What can cap the study's I/O on this host, read before its runs.
    pub limits: Vec<String>,
    /// What holds the job, each with its evidence (or "not identified"),
    /// in lines: [`JobDoc::held`]'s words.
    pub holds: Vec<String>,
    /// What holds the job as the device study's causes judge it, the
    /// job's reads and writes apart where it does both.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Held>,
    /// The job's runs as the device study keeps its points (their figures
    /// and what was read around them, the results left out): what
    /// [`JobDoc::held`] was judged from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<ssdready_measured::record::RunRecord>,
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

/// The host's levers of the job: the hands and setting, the levers
/// planned and those not tried ([`crate::job_levers::plan`]).
pub struct HostPlan<'a> {
    pub host: Host<'a>,
    pub planned: Vec<Planned>,
    pub untested: Vec<Untested>,
}

impl<'a> HostPlan<'a> {
    /// The host's levers of the job `sections` (as the study runs them):
    /// the setting read here ([`crate::job_levers::setting`]) and the plan.
    /// `command` is the one that would try what is not asked.
    pub fn new(
        sections: &[Section],
        limits: Option<ssdready_measured::limits::Inventory>,
        asked: bool,
        hands: &'a mut dyn crate::trials::Hands,
        command: String,
    ) -> HostPlan<'a> {
        let setting = crate::job_levers::setting(sections, limits, asked, hands, command);
        let table = ssdready_diagnosis::levers::shipped();
        let (planned, untested) = crate::job_levers::plan(&table, sections, &setting);
        HostPlan {
            host: Host { setting, hands },
            planned,
            untested,
        }
    }

    /// The runs its trials take, and the set's extra pairs with them.
    pub fn runs(&self) -> usize {
        let extra = job_best::pairs(true) - job_best::PAIRS;
        match self.planned.is_empty() {
            true => 0,
            false => job_trials::runs(&self.planned) + 2 * extra,
        }
    }
}

/// The job's repeats then its variants, then the host's changes, into
/// `doc` (its figures, the variants and the changes judged against the
/// job, what holds the job). `tell` hears each step.
pub fn execute(
    doc: &mut JobDoc,
    sections: &[Section],
    judge: &Judge,
    (run, host): (&mut RunFn, &mut HostPlan),
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) {
    let mut points = Points::new(&mut *run, sections, judge, stop);
    let measured = measure(doc, sections, &mut points, stop, tell);
    doc.points = std::mem::take(&mut points.records);
    drop(points);
    doc.held = judge.judge(&doc.points, sections);
    doc.holds = held_words(&doc.held);
    if !measured {
        return;
    }
    if !stop.load(Relaxed) {
        let (planned, untested) = (
            std::mem::take(&mut host.planned),
            std::mem::take(&mut host.untested),
        );
        let h = &mut host.host;
        let s = job_trials::run(sections, h, planned, untested, run, stop, tell);
        doc.host = (!s.trials.is_empty() || !s.untested.is_empty()).then_some(s);
    }
    doc.best = best(doc, sections, (run, &mut host.host), stop, tell);
    capacity(doc, sections, run, stop, tell);
    match crate::capacity::job_ceiling(sections, doc.median_iops) {
        Ok(c) => doc.ceiling = c,
        Err(e) => doc
            .notes
            .push(format!("the device's ceiling for the job's mix: {e}")),
    }
}

/// The job's repeats, its instrumented run (root) and its variants, each
/// a point of the study's through `points`; false where the job as
/// written did not run to the end of its repeats.
fn measure(
    doc: &mut JobDoc,
    sections: &[Section],
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
                if i == 0 {
                    doc.rates = job::rates(&r);
                }
                doc.repeats.push(RunFigures::of(&r))
            }
            Err(e) => {
                doc.error = Some(e);
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
    true
}

/// Every change that gained beyond the noise, together — the job's own
/// options and the host's changes — in turns against the job as written
/// (the order alternating pair by pair, the host's changes made before
/// each changed run and put back after it); None when none gained.
fn best(
    doc: &JobDoc,
    sections: &[Section],
    (run, host): (&mut RunFn, &mut Host),
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) -> Option<Best> {
    let chosen = job_best::chosen(&doc.variants);
    let helped: Vec<Trial> = doc
        .host
        .as_ref()
        .map(|h| job_trials::helped(h).into_iter().cloned().collect())
        .unwrap_or_default();
    if chosen.is_empty() && helped.is_empty() {
        return None;
    }
    let own = job_gain::by_bandwidth(&job_gain::baseline(&doc.repeats, sections));
    let mut b = job_best::of(&chosen, &helped, own);
    let changed = job_best::apply(sections, &b.options);
    let refs: Vec<&Trial> = helped.iter().collect();
    let mut change = match job_trials::together(host, &refs) {
        Ok(c) => c,
        Err(e) => {
            b.error = Some(e);
            return Some(b);
        }
    };
    let by_bw = b.by_bandwidth;
    let rate = |m: &ssdready_diagnosis::trials::Measured| match by_bw {
        true => m.bw_bytes_per_s,
        false => m.iops,
    };
    let pairs = job_best::pairs(!helped.is_empty());
    for i in 0..pairs {
        if stop.load(Relaxed) {
            break;
        }
        tell(format!(
            "the job with {} together, turn {} of {pairs}",
            b.changes().join(" "),
            i + 1,
        ));
        let both = (sections, changed.as_slice());
        crate::invariants::turn_order(b.turns.len(), i % 2 == 1);
        match job_trials::turn(both, change.as_mut(), run, stop, i % 2 == 1) {
            Ok(t) => b.turns.push(t),
            Err((e, _)) => {
                b.error = Some(e);
                break;
            }
        }
    }
    let rates: Vec<(f64, f64)> = b
        .turns
        .iter()
        .map(|t| (rate(&t.baseline), rate(&t.change)))
        .collect();
    job_best::judge(&mut b, &rates);
    Some(b)
}

/// The runs a rate-limited job's capacity search takes (none for another
/// job, or one without an open loop).
pub fn capacity_runs(sections: &[Section]) -> usize {
    let paced = crate::capacity::job::rate_limited(sections);
    match paced && crate::capacity::job::no_open_loop(sections).is_none() {
        true => crate::capacity::job::RUNS,
        false => 0,
    }
}

/// A rate-limited job: its capacity at its own latency target, or why not.
fn capacity(
    doc: &mut JobDoc,
    sections: &[Section],
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
) -> Vec<ssdready_diagnosis::combination_files::File> {
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
    let date = ssdready_diagnosis::combination_files::date_of(doc.started_unix_ms);
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
    match points.run(Kind::Variant(i), &v.sections, &request) {
        Ok(r) => out.figures = Some(RunFigures::of(&r)),
        Err(e) => out.error = Some(e),
    }
    job_gain::judge_variant(&mut out, base);
    out
}

fn dir_words(label: &str, d: &job::Dir) -> String {
    let ms = |ns: f64| ssdready_core::units::fmt_ns(ns);
    let p = |x: Option<u64>| x.map_or("?".into(), |n| ms(n as f64));
    format!(
        "{label} {:.0} IOPS, {:.1} MiB/s, mean {}, p99 {}, p99.9 {}",
        d.iops,
        d.bw_bytes_per_s / (1u64 << 20) as f64,
        ms(d.lat_mean_ns),
        p(d.lat_p99_ns),
        p(d.lat_p999_ns)
    )
}

fn figures_words(f: &job::JobFigures) -> String {
    let mut parts = Vec::new();
    if let Some(d) = &f.read {
        parts.push(dir_words("reads", d));
    }
    if let Some(d) = &f.write {
        parts.push(dir_words("writes", d));
    }
    match parts.is_empty() {
        true => "no I/O".into(),
        false => parts.join("; "),
    }
}

/// One line of parts (`block layer 12.0 µs (10 % of the mean), …`), or
/// nothing without any.
fn parts_words(label: &str, parts: &[job::Part], of: &str) -> String {
    if parts.is_empty() {
        return String::new();
    }
    // The six largest (job-study.json keeps them all).
    let each: Vec<String> = parts
        .iter()
        .take(6)
        .map(|p| {
            format!(
                "{} {} ({:.0} % {of})",
                p.part,
                ssdready_core::units::fmt_ns(p.mean_ns),
                p.share_pct
            )
        })
        .collect();
    format!("  {label}: {}\n", each.join(", "))
}

/// The study of the job in words.
pub fn text(doc: &JobDoc) -> String {
    let mut s = format!(
        "ssdready study of the job file {}{} ({} runs of {:.0} s; sha256 {})\n",
        doc.job_file,
        doc.section
            .as_ref()
            .map_or(String::new(), |x| format!(", section [{x}]")),
        doc.repeats.len()
            + doc.variants.len()
            + doc.different_workloads.len()
            + doc.best.as_ref().map_or(0, |b| 2 * b.pairs_pct.len())
            + doc.host.as_ref().map_or(0, |h| {
                h.trials.iter().map(|t| 2 * t.turns.len()).sum::<usize>()
            })
            + usize::from(doc.instrumented.is_some()),
        doc.runtime_s,
        &doc.job_sha256[..12.min(doc.job_sha256.len())]
    );
    if let Some(e) = &doc.error {
        s.push_str(&format!("the job did not run: {e}\n"));
        return s;
    }
    let mid = doc.repeats.iter().min_by(|a, b| {
        (a.iops() - doc.median_iops)
            .abs()
            .total_cmp(&(b.iops() - doc.median_iops).abs())
    });
    if let Some(m) = mid {
        s.push_str(&format!(
            "the job as written ({} repeats, spread {:.1} %):\n",
            doc.repeats.len(),
            doc.spread_pct
        ));
        if m.jobs.len() > 1 {
            for j in &m.jobs {
                s.push_str(&format!("  [{}] {}\n", j.name, figures_words(j)));
            }
        }
        s.push_str(&format!(
            "  {}: {}\n",
            m.together.name,
            figures_words(&m.together)
        ));
    }
    if let Some(i) = &doc.instrumented {
        s.push_str(&parts_words(
            "its latency along the path",
            &i.split,
            "of the mean",
        ));
        s.push_str(&parts_words(
            "its CPU per I/O by layer",
            &i.cpu_layers,
            "of the busy CPU",
        ));
    }
    for r in &doc.rates {
        s.push_str(&format!("  {r}\n"));
    }
    if let Some(c) = &doc.ceiling {
        s.push_str(&format!(
            "  the job gets {:.1} % of what this device gives for its mix ({} IOPS: {})\n",
            c.share_pct,
            c.iops.round(),
            c.basis
        ));
    }
    if let Some(c) = &doc.capacity {
        let line = c.error.as_deref().unwrap_or(&c.sentence);
        s.push_str(&format!("  its capacity ({}): {line}\n", c.what));
    }
    if !doc.variants.is_empty() {
        s.push_str(
            "the application's I/O mechanics, one changed at a time, against the job's median:\n",
        );
    }
    for v in &doc.variants {
        s.push_str(&format!("  {}\n", job_gain::variant_line(v)));
    }
    if !doc.different_workloads.is_empty() {
        s.push_str("what a different workload would get (it changes what the application reads and writes: never in the best configuration):\n");
    }
    for v in &doc.different_workloads {
        s.push_str(&format!("  {}\n", job_gain::workload_line(v)));
    }
    if let Some(h) = &doc.host {
        s.push_str(&job_trials::words(h));
    }
    if let Some(b) = &doc.best {
        s.push_str(&format!("{}\n", job_best::words(b)));
        if !b.diff.is_empty() {
            s.push_str(&format!("  in the job file: {}\n", b.diff.join(" ")));
        }
    }
    for l in &doc.limits {
        s.push_str(&format!("a limit on this study's I/O: {l}\n"));
    }
    s.push_str("what holds this job:\n");
    for h in &doc.holds {
        s.push_str(&format!("  {h}\n"));
    }
    for n in &doc.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
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
    let noise = now.spread_pct.max(earlier.spread_pct).max(job::GAIN_PCT);
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
