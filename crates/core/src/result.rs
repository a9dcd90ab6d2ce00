//! The result model: what a run measured, as the reports render it and as the
//! native JSON (`--output-format=json`) serialises it. The schema is versioned
//! ([`SCHEMA_VERSION`]) and documented field by field in
//! `docs/result-schema.md`; a change that renames or removes a field bumps the
//! version.

use crate::hist::LatSummary;
use crate::spec::JobSpec;
use crate::stats::{SecSample, WorkerStats};
use serde::{Deserialize, Serialize};

/// Name of the native schema.
pub const SCHEMA: &str = "ssdready.run";
/// Version of the native schema.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub schema_version: u32,
    pub tool: String,
    pub started_unix_ms: u64,
    /// True when Ctrl-C, SIGTERM or SIGHUP stopped the run: figures cover
    /// what ran.
    pub interrupted: bool,
    /// Why the run did not complete although it has results: a phase that
    /// failed to start or run (the phases before it are reported), or a log
    /// file that could not be written. None when it ran to the end.
    #[serde(default)]
    pub failure: Option<String>,
    pub clock: ClockInfo,
    pub platform: Platform,
    /// Global options as written (fio's `global options`).
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobResult>,
    /// Jobs run in phases separated by `stonewall`; CPU and device figures
    /// belong to a phase's measured window.
    pub phases: Vec<PhaseResult>,
    /// The SSD emulator's own counters, when the run used it.
    pub emulator: Option<EmuReport>,
    pub warnings: Vec<String>,
}

/// What the SSD emulator counted (its parameters and its inside view).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EmuReport {
    /// `real` (commands complete at modelled wall-clock times) or `virtual`.
    pub clock: String,
    /// The device's parameters as (key, value).
    pub params: Vec<(String, String)>,
    pub host_pages_written: u64,
    pub nand_pages_written: u64,
    /// NAND page programs per host page program.
    pub write_amplification: f64,
    /// Spare factor after the GC reserve, and the WA greedy GC should reach
    /// under uniform random writes at that spare (analytic model).
    pub alpha_effective: f64,
    pub wa_greedy_predicted: f64,
    pub gc_runs: u64,
    pub gc_pages_moved: u64,
    pub trimmed_pages: u64,
    pub erase_count_min: u32,
    pub erase_count_mean: f64,
    pub erase_count_max: u32,
    /// Free erase blocks at the end of each (simulated or real) second.
    pub free_blocks_series: Vec<u64>,
    /// Busy share of each die (or DRAM unit) over the window, percent.
    pub die_utilisation_pct: Vec<f64>,
    /// Host pages programmed into the SLC cache, and pages folded from it
    /// to TLC in idle time.
    #[serde(default)]
    pub slc_pages_written: u64,
    #[serde(default)]
    pub slc_pages_folded: u64,
    /// Program/erase operations suspended for a read, and reads that went
    /// ahead of a queued or suspended operation.
    #[serde(default)]
    pub pe_suspensions: u64,
    #[serde(default)]
    pub reads_ahead_of_pe: u64,
    /// Commands the device served, and the extents they carried (more
    /// than commands when some were vectored: temporal merge).
    #[serde(default)]
    pub commands: u64,
    #[serde(default)]
    pub extents: u64,
    /// Faults the device injected (`fault_` keys), when any was asked for.
    #[serde(default)]
    pub faults: Option<EmuFaults>,
    /// Zoned mode (`zoned=1`): what the zones saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<EmuZones>,
    /// Simulated time covered (virtual clock), ns.
    pub simulated_ns: u64,
    /// Wall-clock time the simulation took, ns.
    pub wall_ns: u64,
}

/// What the emulator injected, by kind: the truth a run's errors and
/// verification failures can be held against. The emulator counts into
/// this very type (`ssdready_emu::fault::FaultCounts`), so every counter it
/// keeps reaches the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmuFaults {
    /// Reads that failed with EIO after their retries.
    pub read_errors: u64,
    /// Reads that needed the retries and then succeeded (latency spikes).
    pub read_retries_recovered: u64,
    /// Writes that failed with EIO (nothing stored).
    pub write_errors: u64,
    /// Reads that returned one flipped byte and no error.
    pub corrupted_reads: u64,
    /// Commands that stalled `fault_spike_ns` (any kind).
    #[serde(default)]
    pub latency_spikes: u64,
    /// Failed programs (each retired a block, or found no spare left).
    #[serde(default)]
    pub program_failures: u64,
    /// Blocks retired for failed programs (spares used).
    #[serde(default)]
    pub blocks_retired: u64,
    /// Writes refused with EIO once the drive went read-only.
    #[serde(default)]
    pub read_only_writes: u64,
    /// Acknowledged writes that stored only a prefix of their pages.
    #[serde(default)]
    pub silently_torn_writes: u64,
    /// Power cuts.
    #[serde(default)]
    pub power_cuts: u64,
    /// Acknowledged writes not durable at a cut: their data (or its tail
    /// pages) reverted.
    #[serde(default)]
    pub writes_lost: u64,
    /// Writes at a cut that kept a prefix of their pages and lost the rest.
    #[serde(default)]
    pub writes_torn_at_cut: u64,
    /// Writes and flushes in flight at a cut: failed with EIO.
    #[serde(default)]
    pub commands_aborted: u64,
    /// Bytes reverted at cuts.
    #[serde(default)]
    pub bytes_lost: u64,
}

/// What an emulated zoned drive's zones saw (`emulator.zones`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmuZones {
    pub zones: u64,
    /// Zones open and active at the end.
    pub open: u32,
    pub active: u32,
    /// What the zones counted (the emulator keeps these very counters).
    #[serde(flatten)]
    pub counters: EmuZoneCounters,
}

/// What an emulated drive's zones have seen: the emulator's own counters
/// (`ssdready_emu::zoned::ZoneCounters` is this type), so every counter it
/// keeps reaches the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmuZoneCounters {
    /// Writes refused (not at the write pointer, past capacity, into a
    /// full zone, past the open/active limits): 0 for a host that follows
    /// the write pointers.
    pub writes_refused: u64,
    /// Reads refused (read_beyond_wp=error).
    pub reads_refused: u64,
    pub resets: u64,
    pub finishes: u64,
    pub explicit_opens: u64,
    pub closes: u64,
    /// Implicitly open zones the drive closed to open another.
    pub implicit_closes: u64,
    /// Blocks the resets erased, all dies.
    pub erased_blocks: u64,
}

/// One phase: jobs that ran together.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PhaseResult {
    /// Indexes into `jobs`.
    pub jobs: Vec<usize>,
    /// The measured window (after the longest ramp_time of the phase), ns.
    pub window_ns: u64,
    /// CPU cost of the window, process and system.
    pub cpu: Option<CpuCost>,
    /// Block-layer view of every device the phase used.
    pub disks: Vec<DiskResult>,
    /// Kernel cost by layer (`--profile`).
    pub profile: Option<ProfileReport>,
    /// Latency split from block tracepoints (`--decompose`).
    pub decomposition: Option<Decomposition>,
    /// Every pair of independent sources of one quantity, compared.
    #[serde(default)]
    pub checks: Vec<CrossCheck>,
    /// Cycles and instructions of the window from hardware counters, where
    /// the machine has them (`platform.lab` says why not otherwise).
    #[serde(default)]
    pub hw_counters: Option<HwCounts>,
}

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

/// The clock latencies were measured with.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClockInfo {
    /// `tsc` (rdtsc, calibrated) or `clock_monotonic`.
    pub source: String,
    /// TSC frequency measured against CLOCK_MONOTONIC, Hz (the nominal
    /// frequency on a constant-TSC CPU): the "clocks" of clocks per I/O.
    pub tsc_hz: Option<f64>,
    /// Measured cost of one timestamp, ns.
    pub ns_per_timestamp: f64,
}

/// The machine and its block devices.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Platform {
    pub kernel: String,
    pub cpu_model: String,
    pub cpus_online: u32,
    pub cpu_flags: Vec<String>,
    /// The kernel's active mitigations of CPU vulnerabilities
    /// (/sys/devices/system/cpu/vulnerabilities, "Mitigation: …" entries):
    /// they set what a system call, an indirect call or a return costs.
    #[serde(default)]
    pub mitigations: Vec<(String, String)>,
    /// /sys/devices/system/clocksource/clocksource0/current_clocksource.
    #[serde(default)]
    pub clocksource: Option<String>,
    pub devices: Vec<DeviceInfo>,
    /// Lab conditions: what makes results noisy or unrepresentative
    /// (frequency scaling, idle states, SMT, virtualisation, interrupts…).
    #[serde(default)]
    pub lab: Vec<LabCondition>,
}

/// One lab condition of the machine, as read from the kernel.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LabCondition {
    /// Short name (`cpufreq_governor`, `smt`, `virtualization`, …).
    pub name: String,
    /// What the machine has, in words.
    pub value: String,
    /// Where it was read (a sysfs or procfs path, or a system call).
    pub source: String,
    /// Why this makes results noisy or unrepresentative, and what to do.
    pub warning: Option<String>,
}

/// Queue settings of one block device.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    pub name: String,
    pub size_bytes: u64,
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub rotational: Option<bool>,
    pub write_cache: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub io_poll: Option<bool>,
    pub max_sectors_kb: Option<u64>,
    /// For loop devices: the backing file and whether it uses direct I/O.
    pub loop_backing_file: Option<String>,
    pub loop_direct_io: Option<bool>,
}

/// One target of a job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: String,
    /// `file`, `block` or `none` (null engine).
    pub kind: String,
    pub size_bytes: u64,
    /// The block device the I/O lands on, when known (`loop0`).
    pub device: Option<String>,
}

/// One job (all its clones together).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    /// Reporting group (fio's groupid).
    pub group: u32,
    /// Index of the phase the job ran in.
    pub phase: usize,
    /// How completions were obtained (`sync`, `interrupt`, `iopoll`, …).
    pub completion_mode: String,
    /// fio's libpmem and dev-dax engines: how writes were made durable
    /// (`dax`: non-temporal stores or cache-line write-back on persistent
    /// memory; `msync`: a mapping of the page cache, msync).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistence: Option<String>,
    /// The completion and submission strategy as it ran (real time only).
    #[serde(default)]
    pub strategy: Option<crate::strategy::StrategyReport>,
    /// The resolved spec, seed included.
    pub spec: JobSpec,
    pub workers: u32,
    pub targets: Vec<TargetInfo>,
    /// Length of the measured window, ns.
    pub measured_ns: u64,
    pub read: Option<DirResult>,
    pub write: Option<DirResult>,
    pub trim: Option<DirResult>,
    pub errors: u64,
    pub first_error: Option<String>,
    /// Errors gone past under `continue_on_error`, ramp included (fio's
    /// `total_err`), and the first of them.
    #[serde(default)]
    pub continued_errors: u64,
    #[serde(default)]
    pub first_continued_error: Option<String>,
    /// Syncs issued during the job (`fsync=N`, `fdatasync=N`).
    #[serde(default)]
    pub sync: Option<SyncResult>,
    /// `serialize_overlap`: requests that waited for an overlapping one in
    /// flight to complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlaps_waited: Option<u64>,
    /// What verification checked and found (`verify`).
    #[serde(default)]
    pub verify: Option<VerifyResult>,
    /// fio's steady-state check (`steadystate_duration` set): one report
    /// per clone (worker) of a job without `group_reporting`, in clone
    /// order; with it, the reporting group's one report, on each member
    /// job. Empty without steady-state detection.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steadystate: Vec<crate::steady::FioSteadyReport>,
    /// The temporal merge layer's counts (`temporal_merge=stm|atm`).
    #[serde(default)]
    pub temporal_merge: Option<MergeReport>,
    /// `lat_from=schedule`: the offered load, late arrivals and the
    /// latency from issue beside the directions' latency from the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::arrivals::ScheduleResult>,
    /// The merged raw counters (histograms), for reports that need bins.
    /// zonemode=zbd, a job that writes or trims: the zone resets it made
    /// (fio's `zone_resets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_resets: Option<u64>,
    #[serde(skip)]
    pub raw: WorkerStats,
    /// Each worker's raw counters, for per-clone reports.
    #[serde(skip)]
    pub raw_workers: Vec<WorkerStats>,
}

/// What the temporal merge layer did for one job (all its clones).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MergeReport {
    /// `stm` or `atm`.
    pub mode: String,
    pub window_ns: u64,
    /// Limits of one command: extents, and bytes (0: none).
    pub max_extents: u32,
    pub max_bytes: u64,
    /// Commands issued, and the requests they carried.
    pub commands: u64,
    pub requests: u64,
    /// Requests per command (the merge count), mean.
    pub mean_extents: f64,
    /// Commands by the number of requests they carried, ascending.
    pub extents_histogram: Vec<MergeCount>,
    /// Per request: entering the layer → its command closed (the window).
    pub window_wait: LatSummary,
    /// Per request: its command closed → issued (took the device's interface).
    pub issue_wait: LatSummary,
}

/// Commands that carried `extents` requests.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeCount {
    pub extents: u32,
    pub commands: u64,
}

impl MergeReport {
    /// The report of `spec`'s merge counters.
    pub fn of(spec: &JobSpec, m: &crate::stats::MergeStats) -> Self {
        let commands = m.commands();
        let requests = m.extents();
        let pcts = &spec.percentile_list;
        MergeReport {
            mode: spec.temporal_merge.name().into(),
            window_ns: spec.merge_window_ns,
            max_extents: spec.merge_max,
            max_bytes: spec.merge_max_bytes,
            commands,
            requests,
            mean_extents: if commands > 0 {
                requests as f64 / commands as f64
            } else {
                0.0
            },
            extents_histogram: m
                .commands_by_extents
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| MergeCount {
                    extents: i as u32 + 1,
                    commands: c,
                })
                .collect(),
            window_wait: LatSummary::of(&m.window_wait, pcts),
            issue_wait: LatSummary::of(&m.issue_wait, pcts),
        }
    }
}

/// The syncs of one job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SyncResult {
    pub fsyncs: u64,
    pub fdatasyncs: u64,
    /// `sync_file_range(2)` calls.
    #[serde(default)]
    pub sync_ranges: u64,
    /// Issue → completion of each sync.
    pub lat: LatSummary,
}

/// Verification of one job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct VerifyResult {
    /// The method (`verify=`).
    pub method: String,
    /// Blocks read back and checked.
    pub blocks: u64,
    pub bytes: u64,
    /// Failed checks, all counted (one per failing verify interval).
    pub failed: u64,
    /// The first failures (at most 100 per worker), each with its file,
    /// offset, length, check, expected and found.
    pub failures: Vec<crate::stats::VerifyError>,
    /// Blocks left unchecked because a loaded verify state could not vouch
    /// for them.
    pub skipped_by_state: u64,
}

/// One direction of one job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DirResult {
    pub ios: u64,
    pub bytes: u64,
    pub short_ios: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    /// Submission latency; absent for synchronous engines, which have none.
    pub slat: Option<LatSummary>,
    pub clat: LatSummary,
    pub lat: LatSummary,
    /// Completions per second of the measured window.
    pub series: Vec<SecSample>,
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

/// /sys/block/X/stat deltas over the measured window and the split of the
/// app-observed latency into above-block and block-layer-and-below.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DiskResult {
    pub name: String,
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub discard_ios: u64,
    pub discard_ticks_ms: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    /// Busy share of the window, percent (io_ticks / window).
    pub util_pct: f64,
    /// I/Os ssdready completed on this device in the window.
    pub app_ios: u64,
    /// Mean app-observed total latency of those I/Os, ns.
    pub app_mean_ns: f64,
    /// Mean time from block-layer entry to completion, ns.
    pub block_mean_ns: Option<f64>,
    /// app − block: time above the block layer, ns; only when counts agree.
    pub above_block_mean_ns: Option<f64>,
    /// Whether the device's I/O count matches ssdready's (within 1 %).
    pub counts_agree: bool,
    pub note: Option<String>,
}

impl DirResult {
    /// Summarise one direction's merged counters over a window of
    /// `window_ns`. `has_slat` is false for synchronous engines.
    pub fn from_stats(
        d: &crate::stats::DirStats,
        window_ns: u64,
        pcts: &[f64],
        has_slat: bool,
    ) -> Self {
        let secs = window_ns as f64 / 1e9;
        let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
        DirResult {
            ios: d.ios,
            bytes: d.bytes,
            short_ios: d.short_ios,
            iops: rate(d.ios),
            bw_bytes_per_s: rate(d.bytes),
            slat: has_slat.then(|| LatSummary::of(&d.slat, pcts)),
            clat: LatSummary::of(&d.clat, pcts),
            lat: LatSummary::of(&d.lat, pcts),
            series: d.series.clone(),
        }
    }
}

impl JobResult {
    /// The directions that saw I/O, with their names.
    pub fn dirs(&self) -> impl Iterator<Item = (&'static str, &DirResult)> {
        [
            ("read", &self.read),
            ("write", &self.write),
            ("trim", &self.trim),
        ]
        .into_iter()
        .filter_map(|(n, d)| d.as_ref().map(|d| (n, d)))
    }
    /// I/Os over all directions.
    pub fn total_ios(&self) -> u64 {
        self.dirs().map(|(_, d)| d.ios).sum()
    }
}
