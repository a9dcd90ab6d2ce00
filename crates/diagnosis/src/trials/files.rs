//! The files that make the configuration last ([`crate::trials::combination`]),
//! written by the binary into the study's directory, each only where the
//! configuration has something for it: [`UDEV`], one rule line per queue
//! setting per device (the scheduler first: a switch resets
//! `nr_requests`); [`SYSTEMD`], a drop-in that lifts the control-group
//! limits the study measured without, for the unit that owns the study's
//! group (what the inventory read of them, and what to fill in where it
//! was not read; where no unit owns the group, the cgroupfs writes
//! instead); [`FIO`], the job the
//! configuration was measured with, the application's own choices in it.
//! Each starts with the same header: the study's date, the changes, what
//! they bought as measured, and how to apply the file. The rules and the
//! drop-in, and their names, are their kinds' (`levers::kind_queue`,
//! `levers::kind_cgroup`: [`LeverKind::lasting`]), written from what this
//! file hands them ([`Lasting`]); here, the header and the job.

use crate::levers::kind::Lasting;
use crate::levers::{self, LeverKind};
use crate::trials::fmt_gain;
use crate::trials::record::{Combination, Member};
use ssdready_measured::limits::Inventory;

pub use crate::levers::kind_cgroup::{owning_unit, SYSTEMD};
pub use crate::levers::kind_queue::UDEV;

/// The fio job of the application's own choices.
pub const FIO: &str = "job.fio";

/// A file to write: its name in the study's directory and its text.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub name: &'static str,
    pub text: String,
}

/// The members of the set kept.
fn kept(c: &Combination) -> Vec<&Member> {
    c.members_of(&c.kept).collect()
}

/// The names of the files the configuration gets: none without a
/// measured gain, else the job, and the rules and the drop-in where it
/// has queue settings or the study's own group.
pub fn names(c: &Combination) -> Vec<&'static str> {
    if c.kept_gain().is_none() || c.kept.change_options.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for f in levers::KINDS.iter().filter_map(|k| k.1.lasting()) {
        let has = kept(c).iter().any(|m| m.kind.ops().lasting() == Some(f));
        if has && !out.contains(&f) {
            out.push(f);
        }
    }
    out.push(FIO);
    out
}

/// The kind whose changes file `name` makes last.
fn kind_of(name: &str) -> Option<&'static dyn LeverKind> {
    levers::KINDS
        .iter()
        .map(|k| k.1)
        .find(|k| k.lasting() == Some(name))
}

/// `2026-11-26` (UTC) of a time in ms since the epoch.
pub fn date_of(unix_ms: u64) -> String {
    let (y, m, d) = ssdready_core::units::civil_from_days((unix_ms / 86_400_000) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The files of the configuration, dated `date`, the drop-in filled from
/// the inventory of the study's limits where it was read.
pub fn files(c: &Combination, date: &str, limits: Option<&Inventory>) -> Vec<File> {
    let head = header(c, date);
    let table = levers::shipped();
    names(c)
        .into_iter()
        .map(|name| File {
            name,
            text: match kind_of(name) {
                Some(k) => k.lasting_text(&Lasting {
                    head: &head,
                    members: made_last_by(c, name),
                    gain: c.kept_gain(),
                    levers: &table,
                    limits,
                }),
                None => fio(c, &head),
            },
        })
        .collect()
}

/// The members of the set kept whose kind's changes file `name` makes
/// last.
fn made_last_by<'a>(c: &'a Combination, name: &str) -> Vec<&'a Member> {
    kept(c)
        .into_iter()
        .filter(|m| m.kind.ops().lasting() == Some(name))
        .collect()
}

/// `# ssdready study DATE: CHANGES, measured together: IOPS +N % ± E %
/// over K turns at POINT`.
pub fn header(c: &Combination, date: &str) -> String {
    let how = match c.kept.single {
        true => "measured alone",
        false => "measured together",
    };
    let gain = c.kept_gain().map_or("not measured".into(), |g| {
        format!(
            "{} {} over {} turns",
            g.metric.label(),
            fmt_gain(g),
            c.kept.turns.len()
        )
    });
    format!(
        "# ssdready study {date}: {}, {how}: {gain} at {}\n",
        c.kept_words(),
        c.at
    )
}

/// The run switches of a command line, not job options.
const SWITCHES: &[&str] = &[
    "quiet",
    "allow-destructive",
    "readonly",
    "profile",
    "decompose",
    "no-decompose",
];

/// A command line's options before its first job, and its jobs: (name,
/// options as `key=value` or `flag`).
type Jobs = (Vec<String>, Vec<(String, Vec<String>)>);

fn jobs_of(options: &[String]) -> Jobs {
    let (mut globals, mut jobs): Jobs = (Vec::new(), Vec::new());
    for o in options {
        let Some(kv) = o.strip_prefix("--") else {
            continue;
        };
        let key = kv.split_once('=').map_or(kv, |(k, _)| k);
        if SWITCHES.contains(&key) {
            continue;
        }
        match (key, kv.split_once('='), jobs.last_mut()) {
            ("name", Some((_, n)), _) => jobs.push((n.to_string(), Vec::new())),
            (_, _, Some(j)) => j.1.push(kv.to_string()),
            (_, _, None) => globals.push(kv.to_string()),
        }
    }
    (globals, jobs)
}

/// The job: every option its jobs share under `[global]` (the target's
/// file apart), then each job with its own.
fn fio(c: &Combination, head: &str) -> String {
    let (mut shared, jobs) = jobs_of(&c.kept.change_options);
    if let Some((_, first)) = jobs.first() {
        shared.extend(
            first
                .iter()
                .filter(|x| !x.starts_with("filename="))
                .filter(|x| jobs.iter().all(|(_, j)| j.contains(x)))
                .cloned(),
        );
    }
    let apps: Vec<&str> = kept(c)
        .into_iter()
        .filter(|m| !m.kind.ops().of_host())
        .map(|m| m.change.as_str())
        .collect();
    let mut s = format!(
        "{head}# The job this configuration was measured with{}. To run it:\n\
         #   ssdready run {FIO}   (or fio {FIO}, where fio knows every option)\n\
         # The baseline it was measured against: ssdready run {}\n[global]\n",
        match apps.is_empty() {
            true => String::new(),
            false => format!(
                ", the application's own choices in it ({})",
                apps.join(", ")
            ),
        },
        c.kept.baseline_options.join(" ")
    );
    for o in &shared {
        s.push_str(&format!("{o}\n"));
    }
    for (name, options) in &jobs {
        s.push_str(&format!("\n[{name}]\n"));
        for o in options.iter().filter(|o| !shared.contains(o)) {
            s.push_str(&format!("{o}\n"));
        }
    }
    s
}

#[cfg(test)]
#[path = "combination_files_tests.rs"]
mod tests;
