//! The CPU side of the result model: the process's and the system's CPU
//! use and their cost per I/O, the hardware counters, the latency
//! decomposition and the CPU profile (sampled and exact).

use crate::hist::LatSummary;
use serde::{Deserialize, Serialize};

/// Two independent sources of one quantity, compared against their errors.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CrossCheck {
    pub quantity: String,
    pub a_source: String,
    pub a: f64,
    pub b_source: String,
    pub b: f64,
    pub unit: String,
    /// The difference the sources' stated errors allow.
    pub allowed: f64,
    pub agree: bool,
    /// The figures (JSON paths within the phase) not to trust when they
    /// disagree.
    pub marks: Vec<String>,
    /// Why they disagree, as far as the run measured it (empty when they
    /// agree, or nothing measured explains it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// Hardware performance counters over a phase's window: unhalted core
/// cycles and retired instructions, counted system-wide on every online CPU
/// (kernel and user, every process), divided by the phase's I/Os.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HwCounts {
    pub ios: u64,
    /// Sums over all CPUs, scaled up where the counters shared the PMU.
    pub cycles: u64,
    pub instructions: u64,
    pub cycles_per_io: f64,
    pub instructions_per_io: f64,
    /// Instructions per cycle (0 when no cycles were counted).
    pub ipc: f64,
    /// The smallest share of the window any CPU's counters were running
    /// (1 unless the PMU was multiplexed among more events than it has
    /// counters; counts are scaled up by its inverse).
    pub running_share: f64,
}

/// `--decompose`: where an I/O's time goes, from eBPF programs on the block
/// tracepoints (this process's I/O only). Kernel histograms are log-linear
/// with 4 buckets per power of two (±12.5 %); the per-I/O split above the
/// block layer uses ssdready's own histogram (±0.39 %); means are exact.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Decomposition {
    /// `tp_btf` (per-I/O join available) or `raw_tp` (kernel parts only).
    pub flavour: String,
    /// block_io_start → block_io_done: block layer, scheduler, driver, device.
    pub block_and_below: LatSummary,
    /// block_rq_issue → block_rq_complete: driver and device.
    pub driver_and_device: LatSummary,
    /// block_io_start → block_rq_issue: the block layer and scheduler on the
    /// submission side.
    pub block_layer: LatSummary,
    /// block-and-below mean − driver-and-device mean: the block layer on both
    /// sides (submission, and rq_complete → io_done on completion).
    pub block_layer_mean_ns: f64,
    /// I/Os ssdready completed in the window and their mean total latency.
    pub app_ios: u64,
    pub app_mean_ns: f64,
    /// app mean − block-and-below mean: system call, io_uring/VFS/file
    /// system, completion delivery; only when the counts agree.
    pub above_block_mean_ns: Option<f64>,
    /// Each I/O joined with the kernel's record of it (tp_btf, block-device
    /// targets): the time above the block layer per I/O, both sides.
    pub per_io: Option<PerIoSplit>,
    /// The parts along the I/O's path, with their means and shares of the
    /// app-observed mean.
    pub parts: Vec<PartShare>,
    pub note: Option<String>,
}

/// Every I/O's latency split along its path (`--decompose`, tp_btf, block
/// devices): the I/O joined with the kernel's record of it. For each I/O the
/// four parts add up to its latency exactly.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PerIoSplit {
    /// I/Os joined with their kernel record, and those that were not (merged
    /// into another request, split, or their entry overwritten first).
    pub matched: u64,
    pub unmatched: u64,
    /// App issue → block_io_start: above the block layer, submission side
    /// (system call, io_uring/VFS, bio and request set-up).
    pub above_block_submit: LatSummary,
    /// block_io_start → block_rq_issue: block layer and I/O scheduler.
    pub block_layer: LatSummary,
    /// block_rq_insert → block_rq_issue, for the I/Os that waited in an I/O
    /// scheduler's (or software) queue: part of `block_layer`. None when
    /// every request went straight to the driver.
    pub scheduler_queue: Option<LatSummary>,
    /// block_rq_issue → block_rq_complete: driver and device.
    pub driver_and_device: LatSummary,
    /// block_rq_complete → the app sees the completion: the block layer ends
    /// the bios (direct-I/O completion, io_uring posting, wake-up), the app
    /// is scheduled and reaps.
    pub completion: LatSummary,
    /// The app-observed latency of the same I/Os.
    pub total: LatSummary,
}

/// One part of an I/O's path.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PartShare {
    pub part: String,
    pub mean_ns: f64,
    /// Share of the app-observed mean, percent.
    pub share_pct: f64,
}

/// One layer of the CPU profile.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LayerCost {
    pub layer: String,
    pub samples: u64,
    /// Share of all non-idle samples, percent (0 for idle).
    pub share_of_busy_pct: f64,
    /// The share's sampling error: half the 95 % confidence interval of a
    /// proportion estimated from the busy samples, 1.96·√(p(1−p)/n), in
    /// percentage points (0 for idle).
    #[serde(default)]
    pub share_error_pct: f64,
    pub ns_per_io: f64,
    pub clocks_per_io: Option<f64>,
}

/// One CPU state's exact time over a window, every CPU.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StateCost {
    pub state: String,
    /// Whether /proc/stat counts it as busy (not idle).
    pub busy: bool,
    pub cpu_ns: u64,
    pub ns_per_io: f64,
    /// Share of the busy states' time, percent (0 for the idle states).
    pub share_of_busy_pct: f64,
}

/// One group of CPU work measured both ways: sampled by `--profile` and
/// bracketed by tracepoints.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SampledVsExact {
    pub group: String,
    pub sampled_ns_per_io: f64,
    pub exact_ns_per_io: f64,
    /// The sampled layers summed into `sampled_ns_per_io` (empty: every
    /// busy layer no other group names; a layer's samples come from every
    /// context its functions run in, a bracketed state only from its own
    /// interval).
    #[serde(default)]
    pub sampled_layers: Vec<String>,
    /// The tracepoint-bracketed states summed into `exact_ns_per_io`.
    #[serde(default)]
    pub exact_states: Vec<String>,
}

/// `--profile=exact`: every CPU's time by state, charged between the
/// tracepoints that bracket each kind of work (system calls, interrupts,
/// softirqs, context switches, cpuidle), so nothing depends on where a
/// sampling timer happened to fire.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExactCpu {
    /// Where the figures come from, in words.
    pub source: String,
    /// The tracepoints attached, and optional ones this kernel lacks.
    pub tracepoints: Vec<String>,
    pub missing_tracepoints: Vec<String>,
    pub states: Vec<StateCost>,
    /// The busy states' CPU per I/O, ns: the figure to compare with the
    /// whole-system one.
    pub busy_ns_per_io: f64,
    /// All states over the window × CPUs, percent (100 when every CPU was
    /// accounted for the whole window).
    pub covered_pct: f64,
    /// The same for each CPU the programs saw (offline CPUs left out).
    #[serde(default)]
    pub covered_pct_per_cpu: Vec<f64>,
    /// The sampled layers scaled so that each group of them has its exact
    /// time: the samples only split a group into layers. Busy layers add
    /// up to `busy_ns_per_io`.
    pub layers: Vec<LayerCost>,
    /// The same groups, sampled and exact, side by side.
    pub sampled_vs_exact: Vec<SampledVsExact>,
    /// What the tracepoints cannot bracket exactly here, in words.
    #[serde(default)]
    pub limits: Vec<String>,
}

/// `--profile`: system-wide CPU samples classified by kernel layer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfileReport {
    /// CPU time each sample stands for, ns.
    pub period_ns: u64,
    pub samples: u64,
    /// Records the kernel dropped (buffers full).
    pub lost: u64,
    /// Samples carrying a call chain: one in `chain_every`.
    pub chain_every: u64,
    /// Timing samples whose function needed its callers to classify and got
    /// the layer mix learned from chain samples of that function; and those
    /// no chain sample had taught anything about (counted as other kernel).
    pub inferred_samples: u64,
    pub unlearned_samples: u64,
    pub busy_samples: u64,
    /// Share of busy samples in a named layer (not "other kernel").
    pub named_share_of_busy_pct: f64,
    /// All non-idle layers' CPU per I/O, ns.
    pub busy_ns_per_io: f64,
    /// Time between a sample and its predecessor beyond the weight cap (2
    /// periods), all CPUs, ns: charged to no layer. A halted vCPU's timer
    /// fires late; this is the idle gap it would otherwise have charged to
    /// the first busy function after wake-up.
    #[serde(default)]
    pub late_timer_ns: u64,
    /// CPU time of the window no sample stands for, all CPUs: CPUs that
    /// idled with their sampling timer stopped (idle vCPUs of some
    /// hypervisors give no samples), or whose sampling was throttled.
    #[serde(default)]
    pub unsampled_ns: u64,
    /// Layers, most samples first.
    pub layers: Vec<LayerCost>,
    /// `--profile=exact`: CPU time by state, bracketed by tracepoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactCpu>,
    /// (innermost symbol, layer, samples), most first.
    pub top_functions: Vec<(String, String, u64)>,
    /// Kernel symbols no rule matched (add rules for them), most first.
    pub unmatched_symbols: Vec<(String, u64)>,
}

/// The process's own CPU use.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct ProcessCpu {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}

/// Whole-system CPU from /proc/stat, in USER_HZ ticks, plus event counts.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct SystemCpu {
    pub user_hz: u64,
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub ctxt: u64,
    pub intr: u64,
    pub softirqs: u64,
}

impl SystemCpu {
    /// user+nice+system+irq+softirq+steal, ticks.
    pub fn busy_ticks(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq + self.steal
    }
    /// All ticks, idle included.
    pub fn total_ticks(&self) -> u64 {
        self.busy_ticks() + self.idle + self.iowait
    }
}

/// CPU cost of the measured window and per I/O.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuCost {
    pub ios: u64,
    pub window_ns: u64,
    pub process: ProcessCpu,
    pub system: SystemCpu,
    /// Busy share of all CPUs over the window, percent.
    pub system_busy_pct: f64,
    /// Busy share of each online CPU over the window, percent: (CPU, busy),
    /// from its idle and iowait time (empty where /proc/stat has no
    /// per-CPU lines). What the CPUs a job may use (its cpuset) did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu_busy_pct: Vec<(u32, f64)>,
    /// Of each online CPU's window, the share the hypervisor ran something
    /// else on it (steal), percent; part of its busy share above, neither
    /// this machine's processes' nor its kernel's (empty where none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu_steal_pct: Vec<(u32, f64)>,
    pub per_io: PerIo,
    /// Where each CPU figure comes from and how far it can be off.
    #[serde(default)]
    pub sources: CpuSources,
}

/// The sources of the CPU figures, their error, and the other sources they
/// were checked against (all per I/O, ns).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuSources {
    /// How `per_io.process_ns` was measured.
    pub process: String,
    /// How `per_io.system_ns` (and `system_busy_pct`) was measured.
    pub system: String,
    /// ± bound on `per_io.system_ns` from the source's resolution, ns per I/O.
    pub system_error_ns: f64,
    /// Busy CPU from /proc/stat's tick-sampled busy fields
    /// (user+nice+system+irq+softirq), ns per I/O: misses bursts shorter than
    /// a tick on kernels with tick-based accounting.
    pub system_ticks_ns: f64,
    /// Time the hypervisor ran something else on a busy vCPU (steal), ns per
    /// I/O; not part of `system_ns`.
    pub steal_ns: f64,
    /// Run time of every thread on the machine, ns per I/O: ssdready's own
    /// (getrusage) plus every other live thread's, kernel threads included
    /// (/proc/*/task/*/schedstat). A lower bound of the system's busy time:
    /// it misses interrupts taken while a CPU idles and other processes'
    /// threads that exited during the window. None when not readable.
    pub threads_ns: Option<f64>,
    /// Threads seen by `threads_ns` at the end of the window.
    pub threads_seen: u64,
    /// Of `threads_ns`, the kernel's own threads (workers of the loop
    /// device and other work queues, softirq and I/O threads), ns per I/O:
    /// on a quiet machine, work done for ssdready's I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_threads_ns: Option<f64>,
    /// The time those kernel threads waited on a run queue for a CPU, ns
    /// per I/O (`/proc/*/task/*/schedstat`, its second field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_threads_wait_ns: Option<f64>,
    /// Of `threads_ns`, other processes' threads (not ssdready's, not the
    /// kernel's), ns per I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_processes_ns: Option<f64>,
    /// The threads of the kernel and of other processes that used the most
    /// CPU over the window, busiest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busiest_threads: Vec<ThreadUse>,
    /// The kernel's threads that ran in the window, grouped by the work
    /// they do ([`KernelWork`]), busiest first: md's array threads, the
    /// device-mapper's work queues, the loop devices' workers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_work: Vec<KernelWork>,
}

/// The CPU of the kernel's threads doing one kind of work over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelWork {
    /// The work: a kernel thread's own name without a trailing CPU number
    /// (`md0_raid5`, `kdmflush/253:0`, `ksoftirqd`), or, for a work-queue
    /// worker, the queue whose work it ran last as the window closed
    /// (`kcryptd/253:0`, `loop0`; `kworker` when it names none).
    pub work: String,
    /// Threads counted.
    pub threads: u32,
    /// CPUs' worth of time they ran (run time over the window).
    pub cpus: f64,
    /// The busiest one thread's CPUs: near 1 for a single thread that
    /// held a CPU the whole window.
    pub busiest_thread_cpus: f64,
    /// Their summed wait on a run queue, share of the window, percent.
    pub wait_pct: f64,
}

/// A thread outside ssdready and the CPU it used over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadUse {
    /// Its name: the thread's own for a kernel thread (`kworker/u8:2+loop0`),
    /// its process's otherwise (`postgres`).
    pub name: String,
    pub pid: u32,
    pub kernel: bool,
    /// CPUs' worth of time it ran (run time over the window).
    pub cpus: f64,
    /// Its share of the window spent waiting on a run queue, percent.
    pub wait_pct: f64,
    /// Its scheduling policy (`SCHED_OTHER`, `SCHED_IDLE`, …) and nice
    /// value, as read after the window (`/proc/PID/task/TID/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i64>,
    /// It competes in another scheduling group than the study's own
    /// threads (another CPU cgroup, or another session's autogroup): its
    /// policy and nice value lower it only within that group, not against
    /// the I/O's threads.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub apart: bool,
}

/// Costs divided by I/Os.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PerIo {
    /// Process user+system CPU per I/O, ns.
    pub process_ns: f64,
    /// The same in TSC clocks.
    pub process_clocks: Option<f64>,
    /// Whole-system busy CPU per I/O, ns.
    pub system_ns: f64,
    /// The same in TSC clocks: the metric of the SSD-ready platforms paper.
    pub system_clocks: Option<f64>,
    pub process_ctx_switches: f64,
    pub system_ctx_switches: f64,
    pub system_interrupts: f64,
    pub system_softirqs: f64,
}
