//! The result model: what a run measured, as the reports render it and as the
//! native JSON (`--output-format=json`) serialises it. The schema is versioned
//! ([`SCHEMA_VERSION`]) and documented field by field in
//! `docs/result-schema.md`; a change that renames or removes a field bumps the
//! version.

use crate::hist::LatSummary;
use crate::spec::JobSpec;
use crate::stats::{SecSample, WorkerStats};
use serde::{Deserialize, Serialize};

pub use crate::result_cpu::*;
pub use crate::result_emu::*;

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
    /// Bytes those I/Os moved (0 in results written before it was kept).
    #[serde(default)]
    pub app_bytes: u64,
    /// Mean app-observed total latency of those I/Os, ns.
    pub app_mean_ns: f64,
    /// Mean time from block-layer entry to completion, ns.
    pub block_mean_ns: Option<f64>,
    /// app − block: time above the block layer, ns; only when counts agree.
    pub above_block_mean_ns: Option<f64>,
    /// Whether the device's I/O count matches ssdready's (within 1 %).
    pub counts_agree: bool,
    /// Bytes this process read through the block layer in the window
    /// (`/proc/self/io` `read_bytes`, its file system's reads for it
    /// included), where the phase reached this device alone: the device's
    /// reads beyond it are other processes' or the kernel's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_read_bytes: Option<u64>,
    pub note: Option<String>,
    /// The device's own interrupts over the window (its MSI/MSI-X queue
    /// vectors in /proc/interrupts); absent where it has none to count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<DeviceInterrupts>,
}

/// Interrupts the device's queue vectors took over a measured window:
/// /proc/interrupts read at both ends, summed over CPUs, after less before.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInterrupts {
    /// All vectors together.
    pub total: u64,
    /// `total` per request the device completed in the window
    /// (/sys/block/X/stat); None when it completed none.
    pub per_io: Option<f64>,
    /// Each vector, in IRQ number order.
    pub vectors: Vec<IrqCount>,
    /// Where the counts come from, in words.
    pub source: String,
}

/// One interrupt vector's count over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IrqCount {
    pub irq: u32,
    /// The handler's name (`nvme0q1`).
    pub name: String,
    pub count: u64,
}

impl DiskResult {
    /// Bytes the device moved in the window (reads and writes).
    pub fn dev_bytes(&self) -> u64 {
        (self.read_sectors + self.write_sectors) * 512
    }

    /// Requests per ssdready I/O when the kernel split ssdready's I/Os
    /// into several requests (a request larger than the device's
    /// `max_sectors_kb`): more requests than I/Os, none merged or
    /// discarded, and the bytes agree within 1 % (at least 4 KiB).
    /// `None` otherwise.
    pub fn split_per_io(&self) -> Option<f64> {
        let dev_ios = self.read_ios + self.write_ios;
        let plain = self.read_merges + self.write_merges + self.discard_ios == 0;
        if !plain || self.app_bytes == 0 || dev_ios <= self.app_ios || self.app_ios == 0 {
            return None;
        }
        ((self.dev_bytes() as f64 - self.app_bytes as f64).abs() <= self.bytes_allowed())
            .then(|| dev_ios as f64 / self.app_ios as f64)
    }

    /// How far the device's bytes may be from ssdready's and still agree:
    /// 1 %, at least one 4 KiB block.
    pub fn bytes_allowed(&self) -> f64 {
        (self.app_bytes as f64 * 0.01).max(4096.0)
    }
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
