//! What a lever is weighed on, below the levers and their forms of
//! values alike: the point it is tried at ([`Point`]), what the study
//! hands it of the host and its findings ([`Context`], with the names of
//! the queue files its `queue` holds that more than one file reads), and
//! one value to try ([`Candidate`]).

use crate::facts::Fact;
use crate::limit::Cause;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The queue files by the names `ssdready_measured` gives them once: the
/// I/O scheduler (switching it resets `nr_requests` and the other
/// settings it owns), the requests queued per hardware queue, the largest
/// request the device takes (`hw-max`), whether it has poll queues.
pub use ssdready_measured::limits::queue_files::{
    IO_POLL as POLL, MAX_HW_SECTORS_KB as HW_MAX, NR_REQUESTS, SCHEDULER,
};
/// The queue files the study reads beside the levers' own: the largest
/// request the device takes and whether it has poll queues.
pub const READ_ALSO: [&str; 2] = [HW_MAX, POLL];

/// The point a lever is tried at, as the study resolved it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub rw: String,
    pub bs: u64,
    /// Depth per thread.
    pub qd: u32,
    pub threads: u32,
    /// The engine (None on an emulator: it brings its own).
    pub engine: Option<String>,
    pub direct: bool,
    /// The job's block sizes in words where they vary (`512 B–64 KiB
    /// (mean 11.1 KiB)`, a `bssplit` or a range): `bs` is then the largest.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sizes: String,
}

impl Point {
    /// In words: `4 KiB random reads at QD 32 × 1 thread`, `mixed I/O of
    /// 512 B–64 KiB blocks (mean 11.1 KiB) at QD 64 × 1 thread`.
    pub fn describe(&self) -> String {
        let what = match self.rw.as_str() {
            "randread" => "random reads",
            "read" => "sequential reads",
            "randwrite" => "random writes",
            "write" => "sequential writes",
            _ => "mixed I/O",
        };
        let io = match self.sizes.is_empty() {
            true => format!("{} {what}", crate::stack::ceiling_words::bytes(self.bs)),
            false => format!("{what} of {} blocks", self.sizes),
        };
        let thr = match self.threads {
            1 => "1 thread".to_string(),
            n => format!("{n} threads"),
        };
        let cache = if self.direct {
            ""
        } else {
            " through the page cache"
        };
        format!("{io}{cache} at QD {} × {thr}", self.qd)
    }
}

/// What the study hands a lever: the facts, the named cause, the current
/// values of the target device's queue (`attr` → the file's text), and
/// the point. A job study records the one its verdict was weighed in
/// (what is empty left out), so that it can be judged again.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Context {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, Fact>,
    pub cause: Cause,
    /// The target's device's queue files as read (`scheduler` as the
    /// kernel prints it: `none [mq-deadline] kyber`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub queue: BTreeMap<String, String>,
    /// The device's own queue depth (SCSI `device/queue_depth`), a ceiling
    /// for `nr_requests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u64>,
    /// The CPUs the study may use, as a list (`0-3`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub cpu_list: String,
    /// The most requests the kernel split one of the study's large reads
    /// into (the device's counted requests against its own I/Os, their
    /// bytes agreeing), where a run showed a split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub large_read_split: Option<f64>,
    /// Whether the study may run its threads at a negative nice (root, or
    /// CAP_SYS_NICE): the counterfactual for other work that holds them.
    pub may_raise_priority: bool,
    /// What the engine sweep measured, one thread each: (engine, depth,
    /// IOPS). An engine it measured slower at the point's depth is not
    /// tried again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub engines_measured: Vec<(String, u32, f64)>,
    /// The 4 KiB random-read queue-depth curve, one thread: (depth, IOPS).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curve: Vec<(u32, f64)>,
    /// The peak of that curve, IOPS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_iops: Option<f64>,
    /// The device's own limit for 4 KiB random reads where something
    /// independent knows it (the model, a raw-device run); None where the
    /// only figure is the study's best run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_limit_iops: Option<f64>,
    /// The scheduler sweep's costs against `none`: (scheduler, depth,
    /// IOPS lost percent).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scheduler_costs: Vec<(String, u32, f64)>,
    /// The submitting thread's wait for a CPU at the peak, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_wait_pct: Option<f64>,
    /// The inventory of what can cap the study's I/O, where it was read:
    /// which limits of its control groups hold, for the levers that lift
    /// them one at a time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<ssdready_measured::limits::Inventory>,
    /// Every busy thread of other processes beside the I/O ran in another
    /// scheduling group than the I/O's threads
    /// ([`ssdready_core::result::ThreadUse::apart`]): the I/O's threads'
    /// nice value weighs nothing against it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub others_apart: bool,
}

/// One candidate: the value shown (`none`, `1024`, `io_uring`), and for
/// an application lever the job's options that make it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Candidate {
    pub value: String,
    pub options: Vec<(String, String)>,
}

impl Candidate {
    /// A value alone, no options.
    pub fn of(value: impl Into<String>) -> Candidate {
        Candidate {
            value: value.into(),
            options: Vec::new(),
        }
    }
}
