//! Each layer's CPU per I/O: the kernel threads that do a stack layer's
//! work, counted per run from the scheduler's own run time
//! (`/proc/*/task/*/schedstat`, grouped by work:
//! [`ssdready_core::result::KernelWork`]), and where the run was profiled,
//! the kernel profile's `md`, `device-mapper` and `crypto` layers. A
//! thread belongs to a layer by its name:
//!
//! * md: the array's own threads, `mdN_raid1`, `mdN_raid5`, `mdN_resync`…;
//!   the RAID 5/6 work queue `raid5wq` where the stack has one such array;
//! * device-mapper: the threads and work queues named with the device's
//!   `MAJ:MIN` (`kdmflush/253:0`, `dmcrypt_write/253:0`, the crypt queue
//!   `kcryptd-253:0-1`, `kcryptd/253:0` on older kernels); dm-delay's `kdelayd` queue and
//!   `dm-delay-flush-worker` where the stack has one delay target;
//! * loop: its work queue, `loopN`.
//!
//! A work-queue worker is known by the queue whose work it ran last as the
//! run's window closed: a worker that served several queues in the window
//! counts all its time to its last.
//!
//! A layer **holds the I/O by its CPU** where, at the stack's best runs
//! of one workload (within [`NEAR_PEAK`] of its best IOPS with that block
//! size and mix), on more than half of those
//! runs, one of its threads ran at least [`SATURATED`] of a CPU the whole
//! window — a single thread every I/O waits on (md's RAID 5 thread,
//! dm-crypt's write thread) — or every CPU was busy ([`ALL_BUSY_PCT`])
//! and its threads took at least [`LAYER_SHARE`] of them (dm-crypt's
//! ciphers filling the machine).

use super::finding::StackFinding;
use serde::{Deserialize, Serialize};
use ssdready_core::result::KernelWork;
use ssdready_measured::record::RunRecord;
use ssdready_measured::stack_layers::{short_kind, LayerKind, Stack, StackLayer};

/// A thread running this share of a CPU over a run's window is saturated.
pub const SATURATED: f64 = 0.9;
/// Runs within this share of the stack's best IOPS are its best runs.
pub const NEAR_PEAK: f64 = 0.9;

/// One layer's CPU over one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerCpu {
    pub disk: String,
    /// The work counted for it (`md0_raid5`, `kcryptd/253:0`).
    pub works: Vec<String>,
    /// CPUs' worth of time its threads ran.
    pub cpus: f64,
    /// The busiest one of its threads, CPUs.
    pub busiest_thread_cpus: f64,
    /// Its threads' run time per I/O of the run, ns.
    pub ns_per_io: f64,
}

/// The kernel profile's stack layers in one run (`--profile`): (layer,
/// share of busy %, ns per I/O).
pub type ProfileLayers = Vec<(String, f64, f64)>;

/// The profile's layers that belong to stacks.
pub const PROFILE_LAYERS: [&str; 3] = ["md", "device-mapper", "crypto"];

/// Whether work named `work` is done for `layer` of `stack`.
pub fn works_for(stack: &Stack, layer: &StackLayer, work: &str) -> bool {
    let only =
        |pred: &dyn Fn(&StackLayer) -> bool| stack.layers.iter().filter(|l| pred(l)).count() == 1;
    match &layer.kind {
        LayerKind::Md { level, .. } => {
            work.strip_prefix(layer.disk.as_str())
                .is_some_and(|rest| rest.starts_with('_'))
                || (work == "raid5wq"
                    && is_parity(level.as_deref())
                    && only(
                        &|l| matches!(&l.kind, LayerKind::Md { level, .. } if is_parity(level.as_deref())),
                    ))
        }
        LayerKind::Dm { targets, .. } => {
            let delay = |l: &StackLayer| matches!(&l.kind, LayerKind::Dm { targets, .. } if targets.iter().any(|t| t.target_type == "delay"));
            names_device(work, &layer.device)
                || (matches!(work, "kdelayd" | "dm-delay-flush-worker")
                    && targets.iter().any(|t| t.target_type == "delay")
                    && only(&delay))
        }
        LayerKind::Loop { .. } => work == layer.disk,
        _ => false,
    }
}

/// Whether a device-mapper thread's or queue's name carries `MAJ:MIN`:
/// `kdmflush/253:0`, `dmcrypt_write/253:0`, `kcryptd/253:0` (older
/// kernels), `kcryptd-253:0-1` (the queue, with the target's number).
fn names_device(work: &str, device: &str) -> bool {
    if let Some((_, dev)) = work.rsplit_once('/') {
        return dev == device;
    }
    work.strip_prefix("kcryptd-")
        .or_else(|| work.strip_prefix("kcryptd_io-"))
        .and_then(|rest| rest.rsplit_once('-'))
        .is_some_and(|(dev, n)| dev == device && n.bytes().all(|b| b.is_ascii_digit()))
}

fn is_parity(level: Option<&str>) -> bool {
    matches!(level, Some("raid4" | "raid5" | "raid6"))
}

/// Each layer's CPU in one run, from its kernel work and IOPS; layers
/// none of whose work ran are left out.
pub fn layers_cpu(stack: &Stack, work: &[KernelWork], iops: f64) -> Vec<LayerCpu> {
    stack
        .layers
        .iter()
        .filter_map(|l| {
            let mine: Vec<&KernelWork> = work
                .iter()
                .filter(|w| works_for(stack, l, &w.work))
                .collect();
            if mine.is_empty() {
                return None;
            }
            let cpus: f64 = mine.iter().map(|w| w.cpus).sum();
            Some(LayerCpu {
                disk: l.disk.clone(),
                works: mine.iter().map(|w| w.work.clone()).collect(),
                cpus,
                busiest_thread_cpus: mine
                    .iter()
                    .map(|w| w.busiest_thread_cpus)
                    .fold(0.0, f64::max),
                ns_per_io: if iops > 0.0 { cpus * 1e9 / iops } else { 0.0 },
            })
        })
        .collect()
}

/// One run's layers' CPU, from its summary.
pub fn of_run(stack: &Stack, r: &RunRecord) -> Vec<LayerCpu> {
    r.summary.cpu.as_ref().map_or_else(Vec::new, |c| {
        layers_cpu(stack, &c.kernel_work, r.summary.iops)
    })
}

/// The profile's stack layers of one run, where it was profiled.
pub fn profile_of(r: &RunRecord) -> ProfileLayers {
    r.summary.profile.as_ref().map_or_else(Vec::new, |p| {
        p.layers
            .iter()
            .filter(|l| PROFILE_LAYERS.contains(&l.0.as_str()))
            .map(|l| (l.0.clone(), l.1, l.2))
            .collect()
    })
}

/// One run of the stack at work, for [`saturated`].
#[derive(Clone, Debug, Default)]
pub struct AtWork {
    pub run: String,
    /// Its workload, short (`4k randread`): runs are compared within one.
    pub workload: String,
    pub iops: f64,
    pub layers: Vec<LayerCpu>,
    /// The machine's busy CPUs over the run, where every CPU it may use
    /// was at least [`ALL_BUSY_PCT`] busy (None otherwise, or unread).
    pub all_busy_cpus: Option<f64>,
}

/// Every CPU this busy, percent, and the CPU is what the I/O waits for.
pub const ALL_BUSY_PCT: f64 = 90.0;
/// A layer whose threads take this share of the busy CPUs of a machine
/// whose every CPU is busy is where the CPU goes.
pub const LAYER_SHARE: f64 = 0.5;

impl AtWork {
    pub fn of(stack: &Stack, r: &RunRecord) -> AtWork {
        let cpu = r.summary.cpu.as_ref();
        AtWork {
            run: r.id.clone(),
            workload: format!(
                "{} {}",
                ssdready_measured::record::fmt_bs(r.workload.bs),
                r.workload.rw
            ),
            iops: r.summary.iops,
            layers: of_run(stack, r),
            all_busy_cpus: cpu
                .filter(|c| c.system_busy_pct >= ALL_BUSY_PCT)
                .and_then(|c| {
                    let n = c.per_cpu_busy_pct.len();
                    (n > 0).then(|| c.system_busy_pct / 100.0 * n as f64)
                }),
        }
    }

    /// Whether layer `c` held the I/O with its CPU in this run.
    fn held_by(&self, c: &LayerCpu) -> bool {
        c.busiest_thread_cpus >= SATURATED
            || self
                .all_busy_cpus
                .is_some_and(|busy| c.cpus >= LAYER_SHARE * busy)
    }
}

/// Each layer whose one thread was saturated, or whose threads took most
/// of a machine whose every CPU was busy, at the stack's best runs of one
/// workload (reads and writes go through different threads: md's RAID 5
/// thread handles writes, not reads). One finding a layer, the workload
/// where its threads ran the most.
pub fn saturated(stack: &Stack, runs: &[AtWork]) -> Vec<StackFinding> {
    let mut workloads: Vec<&str> = runs.iter().map(|r| r.workload.as_str()).collect();
    workloads.sort_unstable();
    workloads.dedup();
    let mut out: Vec<StackFinding> = Vec::new();
    for l in &stack.layers {
        let found = workloads
            .iter()
            .filter_map(|w| held_in(stack, l, runs.iter().filter(|r| r.workload == *w).collect()))
            .max_by(|a, b| cpus_of(a).total_cmp(&cpus_of(b)));
        out.extend(found);
    }
    out.sort_by(|a, b| cpus_of(b).total_cmp(&cpus_of(a)));
    out
}

fn cpus_of(f: &StackFinding) -> f64 {
    match f {
        StackFinding::LayerThread { cpus, .. } => *cpus,
        _ => 0.0,
    }
}

/// Layer `l` holding one workload's best runs, where it did.
fn held_in(stack: &Stack, l: &StackLayer, runs: Vec<&AtWork>) -> Option<StackFinding> {
    let best = runs.iter().map(|r| r.iops).fold(0.0, f64::max);
    let top: Vec<&&AtWork> = runs
        .iter()
        .filter(|r| best > 0.0 && r.iops >= NEAR_PEAK * best)
        .collect();
    let held: Vec<(&AtWork, &LayerCpu)> = top
        .iter()
        .filter_map(|r| {
            let c = r.layers.iter().find(|c| c.disk == l.disk)?;
            r.held_by(c).then_some((**r, c))
        })
        .collect();
    if held.is_empty() || 2 * held.len() <= top.len() {
        return None;
    }
    let (r, most) = held.iter().max_by(|a, b| a.1.cpus.total_cmp(&b.1.cpus))?;
    Some(StackFinding::LayerThread {
        disk: l.disk.clone(),
        layer: short_kind(l),
        workload: r.workload.clone(),
        works: most.works.clone(),
        thread_cpus: most.busiest_thread_cpus,
        cpus: most.cpus,
        busy_cpus: r.all_busy_cpus,
        ns_per_io: most.ns_per_io,
        runs: held.iter().map(|h| h.0.run.clone()).collect(),
        judged: top.len(),
        advice: advice(stack, &l.disk),
    })
}

/// What to change for a layer whose thread is saturated.
pub fn advice(stack: &Stack, disk: &str) -> String {
    match stack.layer(disk).map(|l| &l.kind) {
        Some(LayerKind::Md { level, .. }) if is_parity(level.as_deref()) => format!(
            "give {disk} more threads (md/group_thread_cnt, e.g. 4), or use RAID 10 where small writes dominate"
        ),
        Some(LayerKind::Md { .. }) => format!(
            "{disk}'s own thread does the array's work one request at a time: spread the load over more arrays, or check what it does (resync, bitmap updates: md/sync_action, a write-intent bitmap on fast members)"
        ),
        Some(LayerKind::Dm { targets, .. }) if targets.iter().any(|t| t.target_type == "crypt") => {
            "let dm-crypt work in the submitting context (cryptsetup --perf-no_read_workqueue --perf-no_write_workqueue), and check that the cipher uses the CPU's AES instructions (aesni)".into()
        }
        _ => format!("the work of {disk} is done by one kernel thread: spread it over more devices"),
    }
}
