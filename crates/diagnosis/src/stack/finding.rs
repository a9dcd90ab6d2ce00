//! What the judging of a stack can find ([`StackFinding`]), and how much
//! I/O a device needs in a run to be judged at all.

use serde::{Deserialize, Serialize};

/// I/Os a device needs in a run for its mean to be judged.
pub const MIN_IOS: u64 = 100;

/// What the judging found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum StackFinding {
    SlowMember {
        disk: String,
        /// What it is (`device-mapper slow (delay)`).
        layer: String,
        /// `writes` or `reads` where it was slow on that direction's I/O
        /// alone (its figures then that direction's); absent when slow on
        /// all of it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        direction: Option<String>,
        mean_ms_per_io: f64,
        peers_median_ms_per_io: f64,
        busy_pct: f64,
        peers_median_busy_pct: f64,
        ios: u64,
        /// The runs it held on, of those judged.
        runs: Vec<String>,
        judged: usize,
    },
    SlowLayer {
        disk: String,
        layer: String,
        /// As a slow member's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        direction: Option<String>,
        over: String,
        mean_ms_per_io: f64,
        under_mean_ms_per_io: f64,
        ios: u64,
        runs: Vec<String>,
        judged: usize,
    },
    UnevenSplit {
        disk: String,
        share_pct: f64,
        even_pct: f64,
        ios: u64,
        runs: Vec<String>,
        judged: usize,
    },
    ReadModifyWrite {
        level: String,
        member_reads: u64,
        member_writes: u64,
        runs: Vec<String>,
    },
    Misaligned {
        bs: u64,
        chunk_bytes: u64,
        array_ios: u64,
        member_ios: u64,
        runs: Vec<String>,
    },
    /// An md array running without some of its disks, or with a member
    /// marked faulty: what every figure of it was measured on.
    Degraded {
        disk: String,
        level: String,
        missing: u32,
        faulty: Vec<String>,
    },
    /// A layer one of whose kernel threads ran a whole CPU at the stack's
    /// best runs: every I/O waits on that thread.
    LayerThread {
        disk: String,
        layer: String,
        /// The workload whose best runs it held (`4k randwrite`).
        workload: String,
        /// The work its threads did (`md0_raid5`, `kcryptd/253:0`).
        works: Vec<String>,
        /// Its busiest thread's CPUs.
        thread_cpus: f64,
        /// All its threads' CPUs.
        cpus: f64,
        /// The machine's busy CPUs in that run, where every CPU was busy.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        busy_cpus: Option<f64>,
        ns_per_io: f64,
        runs: Vec<String>,
        judged: usize,
        /// What to change, for this kind of layer.
        advice: String,
    },
    /// A member whose own request queue was full while the stack had
    /// more to give it ([`super::queue`]).
    QueueFull {
        disk: String,
        layer: String,
        nr_requests: u32,
        /// Its mean requests in flight in the deepest run where it was full.
        mean_in_flight: f64,
        /// The stack's I/Os in flight in that run.
        stack_in_flight: u32,
        runs: Vec<String>,
        judged: usize,
    },
    NotIdentified {
        why: String,
    },
}
