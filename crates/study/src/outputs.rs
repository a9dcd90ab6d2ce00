//! What a study leaves: its closing ([`Closing`]: the findings' text, the
//! exit code and the line that says why it is not 0), and the files in its
//! directory, in the order they are written: each one's name, its text,
//! what it holds (said when it is written), and what its loss means. The
//! caller prints the closing, writes the files atomically, one by one, and
//! renders the HTML report ([`Body::Report`]) from the JSON written just
//! before it, as `ssdready report` re-renders it.
//!
//! - a study of this machine: `study.json`, `report.html`, then the
//!   configuration's udev rules, systemd drop-in and fio job when the
//!   trials kept a configuration;
//! - a fleet's study: `study.json`, then its report (its loss a warning);
//! - a job's study: `job-study.json`, then `job-best.fio` with its host
//!   changes' files when the best configuration gained.

use crate::model::StudyDoc;
use crate::progress::{compared, fleet_end, job_end, study_end};
use crate::session::JobStudied;
use crate::session::{Of, Studied};
use crate::session_parts::JobDoc;
use ssdready_diagnosis::trials::files::{self as files, File, FIO, SYSTEMD, UDEV};

/// How a study ends, once its files are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closing {
    /// The findings (stdout).
    pub text: String,
    /// The exit code: 0; 3 for a job worse than its baseline; 1 when no
    /// run succeeded, a fleet's host did not finish, or the job did not
    /// run; 130 when interrupted.
    pub code: i32,
    /// Why (or the job against its baseline), said last.
    pub line: Option<String>,
}

/// A study's closing (of this machine or of a fleet) after `wall_s`.
pub fn closing(s: &Studied, wall_s: f64) -> Closing {
    let (text, (code, line)) = match s.of {
        Of::Fleet { partial } => (
            crate::fleet_run::block(&s.doc, wall_s),
            fleet_end(&s.doc, partial),
        ),
        Of::Machine => (
            ssdready_diagnosis::text::findings(&s.doc, wall_s),
            study_end(&s.doc),
        ),
    };
    Closing { text, code, line }
}

/// A job study's closing: how the job ended, else how it compares with
/// its baseline (3 when worse beyond the noise).
pub fn job_closing(s: &JobStudied) -> Closing {
    let text = job_text(&s.doc);
    let (code, line) = match (job_end(&s.doc), s.compared.as_ref().map(compared)) {
        ((0, _), Some((line, worse))) => (if worse { 3 } else { 0 }, Some(line)),
        (end, _) => end,
    };
    Closing { text, code, line }
}

/// What a file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// This text.
    Text(String),
    /// The HTML report of the JSON written just before it.
    Report,
}

/// What the loss of a file means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The study failed (exit 1); nothing after it is written.
    Kept,
    /// Said on its line; the rest is written and the exit code stands.
    Extra,
}

/// One file of a study's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub name: &'static str,
    pub body: Body,
    /// What it holds, said when it is written ("" for nothing).
    pub what: String,
    pub need: Need,
}

impl Output {
    fn text(name: &'static str, text: String, what: &str, need: Need) -> Output {
        let (body, what) = (Body::Text(text), what.to_string());
        Output {
            name,
            body,
            what,
            need,
        }
    }
}

/// The JSON text of a document, as its file holds it.
fn json<T: serde::Serialize>(doc: &T) -> Result<String, serde_json::Error> {
    Ok(serde_json::to_string_pretty(doc)? + "\n")
}

/// A study's files (of this machine or of a fleet).
pub fn of_study(s: &Studied) -> Result<Vec<Output>, serde_json::Error> {
    let what = match s.of {
        Of::Machine => format!("{} runs", s.doc.runs.len()),
        Of::Fleet { .. } => String::new(),
    };
    let mut out = vec![Output::text("study.json", json(&s.doc)?, &what, Need::Kept)];
    let report_need = match s.of {
        Of::Machine => Need::Kept,
        Of::Fleet { .. } => Need::Extra,
    };
    out.push(Output {
        name: "report.html",
        body: Body::Report,
        what: String::new(),
        need: report_need,
    });
    if s.of == Of::Machine {
        for (f, what) in config_files(&s.doc) {
            out.push(Output::text(f.name, f.text, what, Need::Extra));
        }
    }
    Ok(out)
}

/// A job study's files.
pub fn of_job(s: &JobStudied) -> Result<Vec<Output>, serde_json::Error> {
    let mut out = vec![Output::text(
        "job-study.json",
        json(&s.doc)?,
        "",
        Need::Kept,
    )];
    let Some(best) = &s.best else {
        return Ok(out);
    };
    let what = "the job with the best configuration";
    out.push(Output::text("job-best.fio", best.clone(), what, Need::Kept));
    for f in &s.host_files {
        let what = "the best configuration's host changes";
        out.push(Output::text(f.name, f.text.clone(), what, Need::Extra));
    }
    Ok(out)
}

/// The configuration's files of a study (udev rules, a systemd drop-in,
/// the fio job), each with what it holds; none where the trials kept no
/// configuration.
pub fn config_files(doc: &StudyDoc) -> Vec<(File, &'static str)> {
    let Some(c) = doc.trials.as_ref().and_then(|t| t.combination.as_ref()) else {
        return Vec::new();
    };
    let date = files::date_of(doc.started_unix_ms);
    files::files(c, &date, doc.limits.as_ref())
        .into_iter()
        .map(|f| {
            let what = match f.name {
                UDEV => "the configuration's queue settings, as udev rules",
                SYSTEMD => "the configuration's control-group properties, as a systemd drop-in",
                FIO => "the configuration's job",
                _ => "",
            };
            (f, what)
        })
        .collect()
}

fn dir_words(label: &str, d: &crate::job::Dir) -> String {
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

fn figures_words(f: &crate::job::JobFigures) -> String {
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
fn parts_words(label: &str, parts: &[crate::job::Part], of: &str) -> String {
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
pub fn job_text(doc: &JobDoc) -> String {
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
    for j in &doc.jobs_read {
        s.push_str(&format!("  as fio runs it: {j}\n"));
    }
    if let Some(e) = &doc.error {
        s.push_str(&format!("the job did not run: {e}\n"));
        return s;
    }
    s.push_str(&as_written_words(doc));
    s.push_str(&changes_words(doc));
    s.push_str(&doc.fio.as_ref().map_or(String::new(), |f| f.words()));
    s.push_str(&holds_words(doc));
    s
}

/// The job as written, in words: its figures at the median repeat, its
/// latency split and CPU by layer, its rates, its share of the device and
/// its capacity.
fn as_written_words(doc: &JobDoc) -> String {
    let mut s = String::new();
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
        let inst = doc.points.iter().find(|p| p.instrumented);
        let disk = inst.and_then(|p| p.summary.disk.as_ref());
        if let Some(note) = disk.and_then(ssdready_diagnosis::limit::configured::split_note) {
            s.push_str(&format!("    ({note})\n"));
        }
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
    s
}

/// The changes measured on the job, in words: its mechanics, what a
/// different workload would get, the host's changes and the best
/// configuration.
fn changes_words(doc: &JobDoc) -> String {
    let mut s = String::new();
    if !doc.variants.is_empty() {
        s.push_str(
            "the application's I/O mechanics, one changed at a time, against the job's median:\n",
        );
    }
    for v in &doc.variants {
        s.push_str(&format!(
            "  {}\n",
            ssdready_diagnosis::limit::job::gain::variant_line(v)
        ));
    }
    if !doc.different_workloads.is_empty() {
        s.push_str("what a different workload would get (it changes what the application reads and writes: never in the best configuration):\n");
    }
    for v in &doc.different_workloads {
        s.push_str(&format!(
            "  {}\n",
            ssdready_diagnosis::limit::job::gain::workload_line(v)
        ));
    }
    if let Some(h) = &doc.host {
        s.push_str(&crate::trials::on_job::words(h));
    }
    if let Some(b) = &doc.best {
        s.push_str(&format!(
            "{}\n",
            ssdready_diagnosis::limit::job::best::words(b)
        ));
        if !b.diff.is_empty() {
            s.push_str(&format!("  in the job file: {}\n", b.diff.join(" ")));
        }
    }
    s
}

/// The limits on the study's I/O, what holds the job, where the trials
/// point, and the notes, in words.
fn holds_words(doc: &JobDoc) -> String {
    let mut s = String::new();
    for l in &doc.limits {
        s.push_str(&format!("a limit on this study's I/O: {l}\n"));
    }
    s.push_str("what holds this job:\n");
    for h in &doc.holds {
        s.push_str(&format!("  {h}\n"));
    }
    if let Some(t) = &doc.trials_point {
        s.push_str(&format!("  but {t}\n"));
    }
    if !doc.findings.is_empty() {
        s.push_str("what else the study's rules find in the job's runs:\n");
    }
    for v in &doc.findings {
        s.push_str(&format!(
            "  {} [confidence {}: {}]\n    → {}\n",
            v.finding.trim_end(),
            v.confidence,
            v.confidence_why,
            v.recommendation
        ));
    }
    for n in &doc.notes {
        s.push_str(&format!("note: {n}\n"));
    }

    s
}

#[cfg(test)]
#[path = "outputs_tests.rs"]
mod tests;
