//! The study document, `DIR/study.json`: what was studied, the plan, every
//! run with its measurements, the derived figures and the verdicts. The
//! schema is `ssdready.study`, versioned by
//! [`ssdready_measured::schema::SCHEMA_VERSION`] and documented field by
//! field in `docs/study-schema.md`; a change that renames or removes a
//! field bumps the version.

use ssdready_measured::record::{Machine, RunRecord, TargetProfile, Verdict};

use crate::figures::Figures;
use serde::{Deserialize, Serialize};

/// A whole study.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StudyDoc {
    pub schema: String,
    pub schema_version: u32,
    pub tool: String,
    /// The command line as given.
    pub command: Vec<String>,
    pub started_unix_ms: u64,
    pub finished_unix_ms: u64,
    /// `--quick`.
    pub quick: bool,
    /// The time budget, seconds.
    pub budget_s: f64,
    /// What was studied: one entry per comma-separated target.
    pub targets: Vec<TargetProfile>,
    /// The machine the study ran on, and how busy it was before starting.
    pub machine: Machine,
    /// What the study planned to run, and its estimate.
    pub plan: PlanDoc,
    /// Sweeps and points not run, each with its reason.
    pub skipped: Vec<Skip>,
    /// Every run, in the order made.
    pub runs: Vec<RunRecord>,
    /// Figures derived from the runs (names fixed by the issue that
    /// introduced the study: `device_limit`, `delivered_pct`, `knee_qd`, …).
    pub figures: Figures,
    /// The figures as named facts, the input of the verdict rules.
    pub facts: std::collections::BTreeMap<String, crate::facts::Fact>,
    /// The verdicts, most important first.
    pub verdicts: Vec<Verdict>,
    /// True when Ctrl-C or SIGTERM stopped the study: it covers what ran.
    pub interrupted: bool,
    pub warnings: Vec<String>,
    /// Capacity at a latency target (`--slo`; the full study's default
    /// target otherwise), absent when not searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::figures::capacity::CapacityDoc>,
    /// What can cap the study's I/O on this machine, read before its runs:
    /// its control groups' limits, the CPUs it may use, its devices' queues
    /// (`ssdready limits` prints the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ssdready_measured::limits::Inventory>,
    /// What to change, measured: the study's advice tried in turns on
    /// this machine, each change put back (absent when no trial applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<crate::trials::section::Section>,
}

/// The plan as announced.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlanDoc {
    /// Measured seconds per run, and the ramp before it.
    pub runtime_s: f64,
    pub ramp_s: f64,
    /// Bytes each run covers on the target.
    pub region_bytes: u64,
    /// Points planned (the queue-depth sweep stops early once saturated).
    pub points: usize,
    /// Estimated duration, seconds.
    pub eta_s: f64,
    /// One line per sweep: what it varies and why.
    pub sweeps: Vec<SweepDoc>,
}

/// One sweep of the plan.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SweepDoc {
    pub name: String,
    pub points: usize,
    pub what: String,
}

/// Something not done, and why.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Skip {
    pub what: String,
    pub why: String,
}
