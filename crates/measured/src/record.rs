//! What a study records beside its verdicts' reasoning: the targets as
//! detected, the machine, every run with its workload and figures, and
//! the shape of a verdict with its evidence. The document that holds them
//! all is `ssdready_diagnosis::model::StudyDoc`.

pub use crate::summary::fmt_bs;

use crate::summary::PointSummary;
use serde::{Deserialize, Serialize};
use ssdready_core::result::RunResult;

/// What kind of thing a target is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// The built-in SSD emulator (`emu:PRESET[,k=v…]`).
    #[default]
    Emulator,
    /// A RAM-backed block device (loop over tmpfs, zram, null_blk, brd).
    RamDevice,
    /// A block device backed by a device (NVMe, SATA/SCSI, virtio, …).
    BlockDevice,
    /// A regular file on a file system.
    File,
}

/// A target as detected before planning.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetProfile {
    /// As given (`emu:x25e`, `/dev/nvme0n1`, `/mnt/data/f`).
    pub spec: String,
    pub kind: TargetKind,
    /// `emulator`, `nvme`, `sata`, `scsi`, `virtio`, `loop`, `zram`,
    /// `null_blk`, `brd`, `dm`, `md`, or `unknown`.
    pub transport: String,
    /// The whole-disk block device the I/O reaches (`nvme0n1`), if any.
    pub device: Option<String>,
    /// For files: the file system type (`ext4`, `tmpfs`, …) and mount point.
    pub filesystem: Option<String>,
    pub mount_point: Option<String>,
    /// For loop devices: the backing file, and the file system it lives on.
    pub backing: Option<String>,
    /// For files on a block device: the node of the device (or partition)
    /// under the file system, for the raw-against-file sweep.
    pub raw_device: Option<String>,
    pub size_bytes: u64,
    pub logical_block_size: u64,
    /// Hardware queues (`/sys/block/X/mq/*`).
    pub hw_queues: Option<u32>,
    /// Active I/O scheduler and the ones the device offers.
    pub scheduler: Option<String>,
    pub schedulers: Vec<String>,
    /// Whether the queue accepts polled I/O (`queue/io_poll`).
    pub poll_queues: Option<bool>,
    pub rotational: Option<bool>,
    /// Whether the study may write to it (the same checks as `run`), and
    /// why not when it may not.
    pub writable: bool,
    pub write_refusal: Option<String>,
    /// Whether the study created the file (it removes it at the end).
    pub created_by_study: bool,
    /// For emulators: the device's parameters as (key, value).
    pub emulator_params: Vec<(String, String)>,
    /// For a block device served by `ssdready emu attach`: the emulated
    /// drive behind it (`emu:x25e,size=1g`), whose model gives the device's
    /// own timing while every layer of the kernel is on the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
    /// What the device can do, known apart from the study's runs (the
    /// emulator's model); absent for a device the study has no basis for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<crate::basis::DeviceBasis>,
    /// Not a target of the study's questions but its reference: a RAM
    /// block device the study made (a loop device over /dev/shm) to
    /// measure this platform's own peak where the studied drive's apparatus
    /// (the emulated drive's daemon) would hold it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
    /// The block-device stack under it (md, device-mapper, loop,
    /// partitions down to the physical devices), where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<crate::stack_layers::Stack>,
}

/// The machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Machine {
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub root: bool,
    /// Busy share of all CPUs over a short sample before the study, percent:
    /// other work that competes with the study's runs.
    pub background_busy_pct: Option<f64>,
    /// TSC frequency, Hz: the clocks of clocks per I/O.
    pub tsc_hz: Option<f64>,
    /// Set when the study ran in the lab VM (`SSDREADY_LAB`, e.g.
    /// `emulated-vm`: QEMU under software emulation): every figure is then
    /// functional, never a platform's ceiling, and is labelled emulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<String>,
}

/// The environment variable the lab VM sets for what runs inside it.
pub const LAB_ENV: &str = "SSDREADY_LAB";

/// One run the study made.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunRecord {
    /// Unique within the study (`qd-16`, `qd-16#2` for a repeat).
    pub id: String,
    /// The point it measures (repeats share it).
    pub point: String,
    pub sweep: String,
    /// 1 for the first measurement of a point, 2… for repeats.
    pub repeat: u32,
    pub workload: Workload,
    /// The `ssdready run` options it ran with.
    pub options: Vec<String>,
    /// `real` (wall-clock run through the platform) or `virtual` (the
    /// emulator model alone, in virtual time).
    pub clock: String,
    /// With `--profile` (and `--decompose` on block devices).
    pub instrumented: bool,
    pub started_unix_ms: u64,
    /// Wall-clock seconds the run took, preparation included.
    pub wall_s: f64,
    /// The figures of the measured job.
    pub summary: PointSummary,
    /// For emulated targets: the same workload on the model alone (virtual
    /// time), the device's own answer at this point.
    pub device_model: Option<DeviceSide>,
    /// The device's own limit for this run's workload, IOPS, when its
    /// basis is a model (the emulator's, for this block size and mix, over
    /// this run's window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_limit_iops: Option<f64>,
    /// What the study read around the run, beside the run's own figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<RunContext>,
    /// Why the run failed, when it did (no summary then).
    pub error: Option<String>,
    /// The full result, as `ssdready run --output-format=native` writes it.
    pub result: Option<RunResult>,
}

/// What the study read around one run, beside the run's own figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunContext {
    /// The study's control groups over the run: each level's CPU (its
    /// quota's throttled periods and time), its I/O per device, and its
    /// pressure (`ssdready_probe::limits::counters` before and after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroups: Option<crate::limits::counters::CounterDelta>,
    /// Every device of the target's stack over the run: its
    /// `/sys/block/X/stat` after less before, as the kernel counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<crate::stack_layers::MemberCounters>,
}

/// The device's own answer at a point (emulator model in virtual time).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceSide {
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: f64,
}

/// A verdict: what the study found, what shows it, what to change.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Verdict {
    /// The rule that made it (`crates/diagnosis/data/verdicts.rules`).
    pub rule: String,
    pub finding: String,
    pub evidence: Evidence,
    pub recommendation: String,
    /// `high`, `medium` or `low`.
    pub confidence: String,
    /// Why that confidence: margins against the noise seen, cross-checks.
    pub confidence_why: String,
    /// Largest spread between repeats of the evidence's runs, percent.
    pub noise_pct: Option<f64>,
}

/// The figures and runs behind a verdict.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Evidence {
    /// Fact name → value as printed.
    pub figures: Vec<(String, String)>,
    /// Run ids.
    pub runs: Vec<String>,
}

/// One run's workload, resolved.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Workload {
    pub rw: String,
    pub bs: u64,
    /// Queue depth per thread.
    pub qd: u32,
    pub threads: u32,
    /// None on an emulator (it brings its own engine).
    pub engine: Option<String>,
    pub direct: bool,
    /// The I/O scheduler set for this run (scheduler sweep only).
    pub scheduler: Option<String>,
    pub rwmixread: Option<u32>,
    /// Target paths (several: one job per target, together).
    pub targets: Vec<String>,
    /// The submission/completion strategy (`strategies` sweep only; its
    /// options, `ssdready_diagnosis::strategies::STRATEGIES`, go to the measured job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
}
