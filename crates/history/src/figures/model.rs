//! The figures a result is reduced to ([`Figure`], [`KeyFigures`],
//! [`Side`]) with their kinds, units and the way that is better, and the
//! helpers that read them out of a run or a study, below the two readers
//! ([`super::run`], [`super::study`]) and the documents ([`super`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ssdready_core::result::DirResult;
use ssdready_measured::curve::{median, CurvePoint};
use ssdready_measured::record::RunRecord;
use std::collections::BTreeMap;

/// What a result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `ssdready study`.
    Study,
    /// `ssdready run` (or `emu simulate`).
    Run,
}

impl Kind {
    /// `study` or `run`, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Study => "study",
            Kind::Run => "run",
        }
    }

    /// The stored name back.
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "study" => Some(Kind::Study),
            "run" => Some(Kind::Run),
            _ => None,
        }
    }
}

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// Neither (the knee's depth, the device's limit): a change is only a change.
    Neither,
}

/// A figure's unit, for printing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Iops,
    BytesPerS,
    Ns,
    Pct,
    Qd,
}

impl Unit {
    /// The value as printed (`559.3K`, `59.62 µs`, `2.21 GiB/s`, `96 %`, `QD 128`).
    pub fn fmt(self, v: f64) -> String {
        use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
        match self {
            Unit::Iops => fmt_count(v),
            Unit::BytesPerS => format!("{}/s", fmt_bytes(v)),
            Unit::Ns => fmt_ns(v),
            Unit::Pct => format!("{v:.1} %"),
            Unit::Qd => format!("QD {v:.0}"),
        }
    }
}

/// One figure of one result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Stable name (`qd-1.lat_p99_ns`, `t.read.iops`, `peak.iops`).
    pub name: String,
    /// In words (`p99 latency @ qd-1`).
    pub label: String,
    pub unit: Unit,
    pub value: f64,
    pub better: Better,
    /// Judged by a regression check.
    pub key: bool,
    /// Relative noise, percent (None: no estimate).
    pub noise_pct: Option<f64>,
    /// Where the noise figure comes from.
    pub noise_source: String,
}

/// Where a result ran: the platform fingerprint.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: u32,
    /// In a virtual machine (None: unknown).
    pub vm: Option<bool>,
}

/// The few figures a history row keeps in columns (see the crate docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyFigures {
    pub iops: Option<f64>,
    pub lat_mean_ns: Option<f64>,
    pub lat_p99_ns: Option<f64>,
    pub cpu_ns_per_io: Option<f64>,
    pub delivered_pct: Option<f64>,
    pub knee_qd: Option<u32>,
}

/// One direction's per-second IOPS, for plotting two runs over each other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// `t read`.
    pub label: String,
    pub iops: Vec<f64>,
}

/// A result, reduced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub kind: Kind,
    /// What it measured (several targets comma-separated).
    pub target: String,
    pub started_unix_ms: u64,
    pub command: String,
    /// The workload in words.
    pub workload: String,
    /// What must be equal for two runs to be compared: per job, its name
    /// and the options that shape the I/O (empty for a study: studies are
    /// compared point by point).
    pub jobs: Vec<(String, BTreeMap<String, Value>)>,
    pub platform: Fingerprint,
    /// Measured seconds per run.
    pub runtime_s: f64,
    pub interrupted: bool,
    pub figures: Vec<Figure>,
    pub key_figures: KeyFigures,
    /// How this side's noise was estimated, in words.
    pub noise_basis: String,
    /// A study's queue-depth curve (4 KiB random reads).
    pub curve: Vec<CurvePoint>,
    /// A run's per-second IOPS.
    pub series: Vec<Series>,
}

impl Side {
    /// Every figure by name (the history's `figures` column).
    pub fn figure_map(&self) -> BTreeMap<String, f64> {
        self.figures
            .iter()
            .map(|f| (f.name.clone(), f.value))
            .collect()
    }

    /// The figure called `name`.
    pub fn figure(&self, name: &str) -> Option<&Figure> {
        self.figures.iter().find(|f| f.name == name)
    }
}

/// A command line as one string, quoting what a shell would split.
pub fn join_command(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=./:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the platform section says it is a virtual machine (the lab
/// condition `virtualization`, else the CPU's `hypervisor` flag).
pub(super) fn is_vm(p: &ssdready_core::result::Platform) -> Option<bool> {
    if let Some(c) = p.lab.iter().find(|c| c.name == "virtualization") {
        return Some(c.value.starts_with("virtual machine"));
    }
    (!p.cpu_flags.is_empty()).then(|| p.cpu_flags.iter().any(|f| f == "hypervisor"))
}

pub(super) fn fingerprint(p: &ssdready_core::result::Platform) -> Fingerprint {
    Fingerprint {
        kernel: p.kernel.clone(),
        cpu_model: p.cpu_model.clone(),
        cpus: p.cpus_online,
        vm: is_vm(p),
    }
}

/// A target as the user would name it again: the default emulated drive
/// (`emu:`) is named by its preset (`emu:nvme-tlc`), so that a study of the
/// default and one of `emu:nvme-tlc` count as the same target.
pub(super) fn named_target(spec: &str, params: &[(String, String)]) -> String {
    match params.iter().find(|(k, _)| k == "preset") {
        Some((_, preset)) if spec == "emu:" => format!("emu:{preset}"),
        _ => spec.to_string(),
    }
}

pub(super) fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// (max − min) / median of the values, percent (None for fewer than two).
pub(super) fn spread_pct(v: &[f64]) -> Option<f64> {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 2 {
        return None;
    }
    let med = median(&v)?;
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    (med > 0.0).then(|| 100.0 * (hi - lo) / med)
}

/// The p99 of a latency summary, when it was asked for.
pub(super) fn p99(d: &DirResult) -> Option<f64> {
    d.lat
        .percentiles
        .iter()
        .find(|(q, _)| (*q - 99.0).abs() < 1e-9)
        .map(|(_, v)| *v as f64)
}

/// The runs of a study grouped by point, in the order first made.
pub(super) fn points(runs: &[RunRecord]) -> Vec<(String, Vec<&RunRecord>)> {
    let mut out: Vec<(String, Vec<&RunRecord>)> = Vec::new();
    for r in runs.iter().filter(|r| r.error.is_none() && !r.instrumented) {
        match out.iter_mut().find(|(p, _)| *p == r.point) {
            Some((_, v)) => v.push(r),
            None => out.push((r.point.clone(), vec![r])),
        }
    }
    out
}
