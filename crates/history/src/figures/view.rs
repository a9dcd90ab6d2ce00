//! The history's own reading of a study document (`study.json`, schema
//! `ssdready.study`, `docs/study-schema.md`): only the fields a study is
//! reduced by, each with the type and the default the whole document
//! gives it, every other field ignored. The whole document, with its
//! judgement, is the diagnosis's model; the history reads study documents
//! back without building the judge. The data crate's types (a run's
//! record, a target, the machine, a point of the curve) are read whole.

use serde::{Deserialize, Serialize};
use ssdready_measured::curve::CurvePoint;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile};

/// What the history reads of a study document.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StudyView {
    /// The command line as given.
    pub command: Vec<String>,
    pub started_unix_ms: u64,
    /// `--quick`.
    pub quick: bool,
    /// What was studied: one entry per comma-separated target.
    pub targets: Vec<TargetProfile>,
    /// The machine the study ran on.
    pub machine: Machine,
    /// What the study planned.
    pub plan: PlanView,
    /// Every run, in the order made.
    pub runs: Vec<RunRecord>,
    /// The figures the study derived.
    pub figures: FiguresView,
    /// True when Ctrl-C or SIGTERM stopped the study: it covers what ran.
    pub interrupted: bool,
}

/// Of the plan, the length of each run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlanView {
    /// Measured seconds per run.
    pub runtime_s: f64,
}

/// Of the derived figures, the curve's and the device's.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FiguresView {
    pub device_limit: DeviceLimitView,
    /// The 4 KiB random-read queue-depth curve.
    pub qd_curve: Vec<CurvePoint>,
    pub peak: Option<CurvePoint>,
    /// Smallest QD reaching 90 % of the peak IOPS.
    pub knee_qd: Option<u32>,
    pub platform_share_qd1: Option<PlatformShareView>,
}

/// Of the device's limit (4 KiB random reads), its IOPS and their basis.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceLimitView {
    /// None: nothing in the device bounds it.
    pub iops: Option<f64>,
    /// Where the limit comes from, in words.
    pub basis: String,
}

/// Of the platform's share of QD 1 latency, the share.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlatformShareView {
    /// Everything but the driver and device, percent of the mean.
    pub pct: f64,
}
