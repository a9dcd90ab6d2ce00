//! # The inventory of what can cap I/O, as the kernel shows it
//!
//! Everything on a Linux host that can hold a process's I/O below what its
//! device gives, read for one process and the devices under its target,
//! as data the diagnosis can judge. Nothing here reads a file: the live
//! readers (`ssdready_probe::limits`) hand the file texts to the parsers
//! of [`parse`] and fill these types. Every value carries its source: the
//! file it was read from and, for a cgroup's, the version of the hierarchy.
//!
//! What is read, and how each applies:
//! * the process's group in every cgroup hierarchy ([`CgroupPath`]), v1 and
//!   v2, and each level above it that the mount shows;
//! * I/O throttles per device ([`IoThrottle`]): v1 `blkio.throttle.*_device`
//!   and v2 `io.max`. In v2 a limit on any ancestor holds the whole subtree;
//!   in v1 the throttle hierarchy is flat (the kernel treats every group as
//!   if it hung from the root), so only the process's own group's limit
//!   holds it: a parent's is listed with `applies: false`;
//! * v2 latency targets (`io.latency`) and the io.cost controller
//!   (`io.cost.qos`, `io.cost.model` at the root, `io.weight` and
//!   `io.bfq.weight` where a group sets them) in [`IoCost`];
//! * CPU quotas ([`CpuQuota`], v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`,
//!   v2 `cpu.max`): hierarchical in both versions, so the allowance is the
//!   smallest quota/period on the path;
//! * the effective cpuset ([`CpuSet`]) and the affinity mask ([`Affinity`]),
//!   which with the CPUs online and the quota give the usable CPUs
//!   ([`UsableCpus`]);
//! * memory limits ([`MemLimit`]): the smallest bounds the page cache;
//! * each device's queue ([`QueueSettings`]) and kind ([`Device`]): what a
//!   virtual disk's host cannot see;
//! * per run, the cgroup's counters ([`counters`]): CPU used, throttled
//!   periods and time, I/O per device, pressure.

use serde::{Deserialize, Serialize};

pub mod counters;
pub mod parse;
pub mod queue_files;
pub mod text;

pub use counters::{CgroupCounters, CounterDelta};

/// The version of the cgroup hierarchy a value was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    /// A legacy hierarchy with its own controllers (`blkio`, `cpu`, …).
    V1,
    /// The unified hierarchy (`cgroup2`).
    V2,
}

impl std::fmt::Display for CgroupVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CgroupVersion::V1 => "cgroup v1",
            CgroupVersion::V2 => "cgroup v2",
        })
    }
}

/// The process's group in one hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CgroupPath {
    pub version: CgroupVersion,
    /// v1: the hierarchy's controllers (`blkio`, `cpu`, `name=systemd`);
    /// v2: the controllers available to the group (`cgroup.controllers`).
    pub controllers: Vec<String>,
    /// The group as `/proc/PID/cgroup` names it (`/` is the root of the
    /// reader's cgroup namespace).
    pub path: String,
    /// The group's directory on this host; None when the hierarchy is not
    /// mounted in this mount namespace, or the group is outside the mount.
    pub dir: Option<String>,
    /// Whether levels above the topmost one read are hidden: the mount
    /// shows a subtree (its root is not `/`), or the process is in a cgroup
    /// namespace of its own. Their limits hold but cannot be read here.
    pub hidden_above: bool,
    /// The files the path and directory came from.
    pub source: String,
}

/// What an I/O throttle counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoLimitKind {
    ReadIops,
    WriteIops,
    /// Bytes per second.
    ReadBps,
    /// Bytes per second.
    WriteBps,
}

impl IoLimitKind {
    pub const ALL: [IoLimitKind; 4] = [
        IoLimitKind::ReadIops,
        IoLimitKind::WriteIops,
        IoLimitKind::ReadBps,
        IoLimitKind::WriteBps,
    ];
    /// The v1 file that sets it (`blkio.throttle.read_iops_device`).
    pub fn v1_file(self) -> &'static str {
        match self {
            IoLimitKind::ReadIops => "blkio.throttle.read_iops_device",
            IoLimitKind::WriteIops => "blkio.throttle.write_iops_device",
            IoLimitKind::ReadBps => "blkio.throttle.read_bps_device",
            IoLimitKind::WriteBps => "blkio.throttle.write_bps_device",
        }
    }
    /// Its key in v2's `io.max` (`riops`).
    pub fn v2_key(self) -> &'static str {
        match self {
            IoLimitKind::ReadIops => "riops",
            IoLimitKind::WriteIops => "wiops",
            IoLimitKind::ReadBps => "rbps",
            IoLimitKind::WriteBps => "wbps",
        }
    }
    /// In words: `read IOPS`, `write bytes/s`.
    pub fn words(self) -> &'static str {
        match self {
            IoLimitKind::ReadIops => "read IOPS",
            IoLimitKind::WriteIops => "write IOPS",
            IoLimitKind::ReadBps => "read bytes/s",
            IoLimitKind::WriteBps => "write bytes/s",
        }
    }
}

/// One I/O throttle set on one level of the process's hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoThrottle {
    pub version: CgroupVersion,
    /// The group that sets it, as `/proc/PID/cgroup` names groups.
    pub cgroup: String,
    /// The device number, `MAJ:MIN` (always a whole disk's).
    pub device: String,
    /// The disk's name (`sda`, `loop0`), when sysfs knows the number.
    pub disk: Option<String>,
    pub kind: IoLimitKind,
    /// I/Os per second, or bytes per second.
    pub value: u64,
    /// Whether it holds this process's I/O: every level's in v2; in v1
    /// only the process's own group's (v1 throttling is flat).
    pub applies: bool,
    /// The file it was read from.
    pub source: String,
}

/// A v2 `io.latency` target on one level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoLatency {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub device: String,
    pub disk: Option<String>,
    /// The latency target, µs: when a group with a target misses it, the
    /// kernel throttles its siblings' (lower-priority) I/O.
    pub target_us: u64,
    pub source: String,
}

/// The io.cost controller and the proportional weights.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoCost {
    /// The root's `io.cost.qos` lines (one per device configured).
    pub qos: Vec<IoCostLine>,
    /// The root's `io.cost.model` lines.
    pub model: Vec<IoCostLine>,
    /// `io.weight` and `io.bfq.weight` where a group sets other than the
    /// default (100).
    pub weights: Vec<IoWeight>,
}

/// One device's line of `io.cost.qos` or `io.cost.model`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoCostLine {
    pub device: String,
    pub disk: Option<String>,
    /// `io.cost.qos`: `enable=1` (the controller is on for the device);
    /// `io.cost.model`: always true.
    pub enabled: bool,
    /// The line's other `key=value` fields as written (`ctrl`, `rpct`,
    /// `rlat`, `min`, `max`; `model`, `rbps`, `rrandiops`, …).
    pub fields: Vec<(String, String)>,
    pub source: String,
}

/// Which proportional weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightKind {
    /// `io.weight` (the io.cost controller).
    IoCost,
    /// `io.bfq.weight` (the BFQ scheduler).
    Bfq,
}

/// A group's proportional I/O weight (1–10000; default 100).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoWeight {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub kind: WeightKind,
    /// None: the group's default for every device.
    pub device: Option<String>,
    pub disk: Option<String>,
    pub weight: u32,
    pub source: String,
}

/// A CPU quota on one level: the group's threads together run at most
/// `quota_us` in every `period_us`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuQuota {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub quota_us: u64,
    pub period_us: u64,
    /// Runtime that may be carried over from idle periods
    /// (`cpu.cfs_burst_us`, `cpu.max.burst`), when set.
    pub burst_us: Option<u64>,
    /// The allowance in CPUs: quota / period.
    pub cpus: f64,
    pub source: String,
}

/// The CPUs the process's cpuset lets it run on (the effective set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuSet {
    pub version: CgroupVersion,
    /// The group whose effective set it is (the nearest one with the file).
    pub cgroup: String,
    pub cpus: Vec<u32>,
    pub source: String,
}

/// The process's affinity mask (`sched_getaffinity`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Affinity {
    pub cpus: Vec<u32>,
    pub source: String,
}

/// Which memory limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemLimitKind {
    /// The hard limit (v1 `memory.limit_in_bytes`, v2 `memory.max`).
    Max,
    /// v2 `memory.high`: above it the group's allocations are throttled
    /// and reclaimed.
    High,
}

/// A memory limit on one level. The page cache the group's reads fill is
/// charged to it, so the smallest bounds what stays cached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemLimit {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub kind: MemLimitKind,
    pub bytes: u64,
    pub source: String,
}

/// Which of the CPU allowances leaves the process the fewest CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuAllowance {
    /// None holds it below the CPUs online.
    Online,
    Cpuset,
    Affinity,
    Quota,
}

/// The CPUs this process can use, next to the CPUs online.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsableCpus {
    /// `/sys/devices/system/cpu/online`.
    pub online: Vec<u32>,
    /// The effective cpuset, when read.
    pub cpuset: Option<Vec<u32>>,
    /// The affinity mask, when read.
    pub affinity: Option<Vec<u32>>,
    /// The smallest quota on the path, in CPUs.
    pub quota_cpus: Option<f64>,
    /// The CPUs it may run on: online ∩ cpuset ∩ affinity.
    pub set: Vec<u32>,
    /// How many CPUs' worth of time it may use: the set's size, or the
    /// quota when smaller.
    pub usable: f64,
    /// Which allowance sets `usable`.
    pub held_by: CpuAllowance,
}

impl UsableCpus {
    /// The allowance from its parts (an unreadable part is None).
    pub fn new(
        online: Vec<u32>,
        cpuset: Option<Vec<u32>>,
        affinity: Option<Vec<u32>>,
        quota_cpus: Option<f64>,
    ) -> UsableCpus {
        let within = |v: &[u32], of: &Option<Vec<u32>>| -> Vec<u32> {
            v.iter()
                .copied()
                .filter(|c| of.as_ref().is_none_or(|o| o.contains(c)))
                .collect()
        };
        let after_cpuset = within(&online, &cpuset);
        let set = within(&after_cpuset, &affinity);
        // The kernel keeps the affinity inside the cpuset: a mask no
        // smaller than the cpuset's share of online CPUs is the cpuset's.
        let mut held_by = CpuAllowance::Online;
        if after_cpuset.len() < online.len() {
            held_by = CpuAllowance::Cpuset;
        }
        if set.len() < after_cpuset.len() {
            held_by = CpuAllowance::Affinity;
        }
        let mut usable = set.len() as f64;
        if let Some(q) = quota_cpus.filter(|&q| q < usable) {
            usable = q;
            held_by = CpuAllowance::Quota;
        }
        UsableCpus {
            online,
            cpuset,
            affinity,
            quota_cpus,
            set,
            usable,
            held_by,
        }
    }
}

/// A block device's queue, from `/sys/block/DISK/queue` (None: the file is
/// missing, as on a bio-based device, or unreadable).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueSettings {
    /// Hardware queues (entries of `/sys/block/DISK/mq`).
    pub hw_queues: Option<u32>,
    /// Requests the block layer allocates per hardware queue (per
    /// scheduler queue with a scheduler): the deepest the host queues.
    pub nr_requests: Option<u64>,
    /// The device's own queue depth (`device/queue_depth`, SCSI and SATA).
    pub queue_depth: Option<u64>,
    /// The active I/O scheduler (`none`, `mq-deadline`, `kyber`, `bfq`).
    pub scheduler: Option<String>,
    /// Writeback throttling's latency target, µs (0: off); it holds back
    /// writeback when reads see latency above it.
    pub wbt_lat_usec: Option<u64>,
    /// The largest request the block layer builds, KiB; larger I/O is split.
    pub max_sectors_kb: Option<u64>,
    /// The largest the device takes, KiB.
    pub max_hw_sectors_kb: Option<u64>,
    /// 0: merges tried; 1: only simple ones; 2: none.
    pub nomerges: Option<u32>,
    /// 0: a completion runs where the device interrupts; 1: on the
    /// submitter's CPU group; 2: on the submitting CPU itself.
    pub rq_affinity: Option<u32>,
    pub read_ahead_kb: Option<u64>,
    /// Whether polled completions are offered (poll queues).
    pub io_poll: Option<bool>,
    /// How many of the hardware queues complete by polling rather than by
    /// interrupt (the NVMe driver's `poll_queues`): the queues io_uring's
    /// IOPOLL and `hipri` use. None where it could not be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_queues: Option<u32>,
    /// Where `poll_queues` was read: the block layer's debugfs (each hardware
    /// queue's `type`), or the NVMe controller's queue interrupts in
    /// `/proc/interrupts` (the queues without one poll).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_queues_source: Option<String>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
}

/// Where a device stands under the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceRole {
    /// The device the target is on (the whole disk of a partition).
    Target,
    /// A device under it: a device-mapper or md member, or the disk that
    /// holds a loop device's backing file.
    Under,
}

/// One block device in the target's path: what it is and its queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// `MAJ:MIN` of the whole disk.
    pub device: String,
    pub disk: String,
    pub role: DeviceRole,
    /// From the kernel's name for it and its model (`nvme`, `virtio`,
    /// `scsi`, `loop`, `zram`, `dm`, …).
    pub transport: String,
    /// The model the device reports (`device/model`), when it has one.
    pub model: Option<String>,
    /// Whether it is a disk a hypervisor or a cloud provides.
    pub virtual_disk: bool,
    /// In words, what this host cannot see of it (a virtual disk's
    /// backend limits), None when nothing is known to be hidden.
    pub unseen: Option<String>,
    pub queue: QueueSettings,
    /// The directory its settings were read from.
    pub source: String,
}

/// The hypervisor under this host, when it runs in a virtual machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hypervisor {
    pub name: String,
    pub source: String,
}

/// A file that could not be read or understood, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unread {
    pub source: String,
    pub why: String,
}

/// Everything that can cap one process's I/O on its target's devices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    /// The process the cgroups and the affinity are of.
    pub pid: u32,
    /// Its group in each hierarchy, v1 and v2.
    pub cgroups: Vec<CgroupPath>,
    /// Every level's throttles on the target's devices (all devices when
    /// no target was named).
    pub io_throttles: Vec<IoThrottle>,
    pub io_latency: Vec<IoLatency>,
    pub io_cost: IoCost,
    /// Each level's quota, where one is set.
    pub cpu_quotas: Vec<CpuQuota>,
    pub cpuset: Option<CpuSet>,
    pub affinity: Option<Affinity>,
    /// Each level's memory limit, where one is set.
    pub memory_limits: Vec<MemLimit>,
    pub cpus: UsableCpus,
    /// The target's devices and those under them.
    pub devices: Vec<Device>,
    pub hypervisor: Option<Hypervisor>,
    /// What could not be read: an absent controller, a file refused.
    pub unread: Vec<Unread>,
}

impl Inventory {
    /// The throttles that hold the process, the smallest of each kind on
    /// each device.
    pub fn effective_io_throttles(&self) -> Vec<&IoThrottle> {
        let mut out: Vec<&IoThrottle> = Vec::new();
        for t in self.io_throttles.iter().filter(|t| t.applies) {
            match out
                .iter_mut()
                .find(|o| o.device == t.device && o.kind == t.kind)
            {
                Some(o) if t.value < o.value => *o = t,
                Some(_) => {}
                None => out.push(t),
            }
        }
        out.sort_by(|a, b| (&a.device, a.kind).cmp(&(&b.device, b.kind)));
        out
    }

    /// The smallest quota on the path (quota / period).
    pub fn cpu_quota(&self) -> Option<&CpuQuota> {
        self.cpu_quotas
            .iter()
            .min_by(|a, b| a.cpus.total_cmp(&b.cpus))
    }

    /// The smallest memory limit on the path.
    pub fn memory_limit(&self) -> Option<&MemLimit> {
        self.memory_limits.iter().min_by_key(|m| m.bytes)
    }

    /// The process's group in the hierarchy that has `controller`
    /// (v1 first, then v2 when its group offers it).
    pub fn cgroup_with(&self, controller: &str) -> Option<&CgroupPath> {
        let has = |c: &&CgroupPath| c.controllers.iter().any(|x| x == controller);
        let v1 = self
            .cgroups
            .iter()
            .filter(|c| c.version == CgroupVersion::V1)
            .find(has);
        v1.or_else(|| {
            self.cgroups
                .iter()
                .filter(|c| c.version == CgroupVersion::V2)
                .find(has)
        })
    }
}

#[cfg(test)]
#[path = "limits/tests.rs"]
mod tests;
