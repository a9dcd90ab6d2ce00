//! A lever of the table as plain data, below its kinds' units and the
//! trials alike: what kind of thing it changes ([`Kind`]), what a trial of
//! it is judged on ([`Metric`]), the point it is tried at ([`At`]), the row
//! itself ([`Lever`], with its place among the kinds, [`Unit`]), the typed
//! change the study makes ([`Apply`]) and what the study may change
//! ([`Consent`]), with the words a row may use beyond the verdict rules'.
//! What a kind does with a lever is its unit's (`kind`, `kind_*`); the
//! table of kinds and the reading of the table are the levers' own
//! (`crate::levers`).

use crate::lever_values::Values;
use crate::limit::Cause;
use crate::rules::Cond;
use serde::{Deserialize, Serialize};
use ssdready_measured::group_limits::{self, GroupLimit, Lift};
use ssdready_measured::limits::Inventory;

/// Facts a lever's `when` may test beyond the study's own
/// ([`crate::facts::KNOWN`]): what the study reads of the device for the
/// trials.
pub const EXTRA_FACTS: &[&str] = &["poll_queues", "large_read_split", "priority_raisable"];

/// What the study's own runs found that points at a lever as a verdict
/// rule that fired does (a lever's `rules` may name it): the kernel split
/// each of its large reads into [`SPLIT_AT_LEAST`] requests or more.
pub const SPLIT_FINDING: &str = "large-reads-split";
/// Requests per large read from which the split is a finding.
pub const SPLIT_AT_LEAST: f64 = 2.0;
/// The findings beside the verdict rules ([`crate::levers::fired`]).
pub const FINDINGS: &[&str] = &[SPLIT_FINDING];

/// What kind of thing a lever changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A setting of the device's queue (`/sys/block/DEV/queue/ATTR`), on
    /// the target's device and its stack's members: a setting of the host.
    Queue,
    /// The study's own runs from a control group of ssdready's own,
    /// without the user's throttle, quota or cpuset; no setting changes.
    Cgroup,
    /// The application's own choice: the job's options.
    #[default]
    Application,
    /// The CPUs' idle states, held by a PM QoS request while the runs go:
    /// a setting of the host while it lasts.
    Cpu,
}

/// What a trial is judged on first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    #[default]
    Iops,
    Bandwidth,
    /// Mean latency.
    Mean,
    /// 99th percentile latency.
    P99,
    /// CPU per I/O.
    Cpu,
}

impl Metric {
    /// Every metric a trial reports, in the order shown.
    pub const ALL: [Metric; 5] = [
        Metric::Iops,
        Metric::Bandwidth,
        Metric::Mean,
        Metric::P99,
        Metric::Cpu,
    ];

    pub(crate) fn of(word: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.word() == word)
    }

    /// The table's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bandwidth => "bandwidth",
            Metric::Mean => "mean",
            Metric::P99 => "p99",
            Metric::Cpu => "cpu",
        }
    }

    /// What a trial on a job is judged on: a rate is the job's own
    /// (bandwidth for a streaming job, IOPS else); latency and CPU stay.
    pub fn on_job(self, by_bandwidth: bool) -> Metric {
        match (self, by_bandwidth) {
            (Metric::Iops | Metric::Bandwidth, true) => Metric::Bandwidth,
            (Metric::Iops | Metric::Bandwidth, false) => Metric::Iops,
            (m, _) => m,
        }
    }

    /// Its name in a sentence.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Bandwidth => "bandwidth",
            Metric::Mean => "mean latency",
            Metric::P99 => "p99 latency",
            Metric::Cpu => "CPU per I/O",
        }
    }

    /// Whether more of it is better (IOPS, bandwidth) or less (latency, CPU).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::Bandwidth)
    }
}

/// The point a lever is tried at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum At {
    /// 4 KiB random reads at the peak's depth.
    #[default]
    Peak,
    /// 4 KiB random reads at the deepest depth the queue-depth sweep ran:
    /// where a limit on what is in flight (the device's request queue)
    /// binds, as its finding says.
    Deepest,
    /// 4 KiB random reads at QD 1.
    Qd1,
    /// 1 MiB sequential reads at QD 8.
    Large,
    /// 4 KiB sequential reads through the page cache.
    Buffered,
    /// 4 KiB random reads from as many threads as the CPUs online (or the
    /// peak's threads, where more), the peak's I/Os in flight shared among
    /// them: where a cpuset or a CPU quota binds, parallel work taking
    /// the CPUs it withholds.
    Parallel,
}

impl At {
    pub(crate) fn of(word: &str) -> Option<At> {
        match word {
            "peak" => Some(At::Peak),
            "deepest" => Some(At::Deepest),
            "qd1" => Some(At::Qd1),
            "large" => Some(At::Large),
            "buffered" => Some(At::Buffered),
            "parallel" => Some(At::Parallel),
            _ => None,
        }
    }
}

/// One lever of the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lever {
    pub id: String,
    /// What a trial of it records ([`Unit::kind`]).
    pub kind: Kind,
    /// Its kind's unit ([`crate::levers::KINDS`]).
    pub unit: Unit,
    /// Queue levers: the file under `/sys/block/DEV/queue/`.
    pub attr: Option<String>,
    pub what: String,
    /// How its candidate values follow from the current one
    /// (`lever_values`: one form each).
    pub values: Option<Values>,
    pub when: Vec<Cond>,
    pub causes: Vec<Cause>,
    pub lifts: Vec<Cause>,
    pub rules: Vec<String>,
    pub at: At,
    pub measure: Metric,
    pub undo: String,
    pub permanent: Option<String>,
}

impl Lever {
    /// Whether it raises a cap ([`crate::lever_values::Form`]'s
    /// `raises_cap`): a request queue's size, a request's, a group's limit.
    pub fn raises_cap(&self) -> bool {
        self.values.as_ref().is_some_and(|v| v.raises_cap())
    }

    /// The limit of the study's groups it lifts on its own, if it does.
    pub fn lift(&self) -> Option<GroupLimit> {
        self.values.as_ref()?.limit()
    }

    /// What it lifts of the study's groups: its limit alone, the others
    /// kept, as the inventory shows them (every limit at once for a lever
    /// that lifts no one limit).
    pub fn lifted(&self, limits: Option<&Inventory>) -> Lift {
        match self.lift() {
            Some(g) => group_limits::lift(g, limits),
            None => Lift::all(),
        }
    }
}

/// A lever's unit: its place in the table of kinds
/// ([`crate::levers::KINDS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit(pub(super) usize);

/// How the study makes a lever's candidate, what it executes: nothing
/// outside the diagnosis reads a lever's kind of values to know.
#[derive(Clone, Debug, PartialEq)]
pub enum Apply {
    /// `value` written to `queue/ATTR` of each of the target's disks.
    Queue { attr: String, value: String },
    /// The runs from a control group of ssdready's own, these limits of
    /// the study's groups lifted.
    Escape(Lift),
    /// The job's own options; nothing of the host changes.
    Options(Vec<(String, String)>),
    /// Every CPU kept out of idle states slower than `us` to leave, by a
    /// PM QoS request held while the runs go (dropped by the kernel when
    /// its file closes).
    Awake { us: u32 },
}

impl Apply {
    /// Whether it moves the study's process to a group of its own.
    pub fn moves_process(&self) -> bool {
        matches!(self, Apply::Escape(_))
    }
}

/// What may be changed, and what this machine can do.
#[derive(Clone, Debug, Default)]
pub struct Consent {
    pub root: bool,
    /// The user asked for the host's settings to be tried (`--try-changes`).
    pub asked: bool,
    /// The target is a device ssdready made itself (the built-in drive
    /// behind the kernel): its queue is the apparatus's, set up as a new
    /// drive of its model, and no setting of it is a change to make.
    pub made_by_study: bool,
    /// The target has a block device with a queue of its own.
    pub device: bool,
    /// Why queue settings cannot be changed by this build or machine, if so.
    pub queue_unavailable: Option<String>,
    /// Why the study cannot move its own process to a group of its own.
    pub escape_unavailable: Option<String>,
    /// The kernel offers a PM QoS request on the CPUs' wake-up latency
    /// (`/dev/cpu_dma_latency` is there).
    pub pm_qos: bool,
}
