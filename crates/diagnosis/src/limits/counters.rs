//! A cgroup's counters, read before and after a run, and what they say
//! over it: the CPU the group used against its quota, the periods in which
//! the quota throttled it and the time it stood throttled, its I/O per
//! device, and (v2) the time its tasks stalled on I/O, CPU and memory.
//!
//! The counters are the group's, not the process's: every task in the
//! group (and, where the file is recursive, its descendants) adds to them.

use super::{CgroupVersion, Unread};
use serde::{Deserialize, Serialize};

/// I/Os and bytes, reads and writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCount {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// One level's CPU counters: its usage, and its quota's periods.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuCounters {
    pub version: CgroupVersion,
    pub cgroup: String,
    /// The level's quota when read, in CPUs (quota / period).
    pub quota_cpus: Option<f64>,
    /// CPU time the group used, ns (v1 `cpuacct.usage` of the same path,
    /// v2 `cpu.stat` `usage_usec`).
    pub usage_ns: Option<u64>,
    /// Quota periods that had runnable tasks (`nr_periods`).
    pub nr_periods: Option<u64>,
    /// Periods in which the group used its quota and was stopped.
    pub nr_throttled: Option<u64>,
    /// Time the group's tasks stood throttled, ns (v1 `throttled_time`,
    /// v2 `throttled_usec`).
    pub throttled_ns: Option<u64>,
    /// The files read.
    pub source: String,
}

/// The group's I/O on one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoCounters {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub device: String,
    pub disk: Option<String>,
    pub count: IoCount,
    pub source: String,
}

/// What a pressure file is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Io,
    Cpu,
    Memory,
}

/// A v2 group's pressure stall totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub resource: Resource,
    /// Time at least one task stalled on the resource, µs.
    pub some_us: u64,
    /// Time all non-idle tasks stalled at once, µs.
    pub full_us: Option<u64>,
    pub source: String,
}

/// The counters of one process's groups at one moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CgroupCounters {
    pub pid: u32,
    /// When they were read: the monotonic clock, ns.
    pub at_ns: u64,
    /// The process's own group, then each level above it with a quota.
    pub cpu: Vec<CpuCounters>,
    /// The own group's I/O per device.
    pub io: Vec<IoCounters>,
    pub pressure: Vec<Pressure>,
    pub unread: Vec<Unread>,
}

/// One level's CPU over an interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuDelta {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub quota_cpus: Option<f64>,
    /// The interval, s.
    pub seconds: f64,
    pub used_ns: Option<u64>,
    pub periods: Option<u64>,
    pub throttled_periods: Option<u64>,
    pub throttled_ns: Option<u64>,
}

impl CpuDelta {
    /// The share of the quota's periods in which the group was throttled.
    pub fn throttled_share(&self) -> Option<f64> {
        let p = self.periods.filter(|&p| p > 0)?;
        Some(self.throttled_periods? as f64 / p as f64)
    }
    /// Seconds stood throttled per second of the interval (summed over the
    /// group's throttled threads' CPUs, so it can pass 1).
    pub fn throttled_per_second(&self) -> Option<f64> {
        let ns = self.throttled_ns? as f64;
        (self.seconds > 0.0).then(|| ns / 1e9 / self.seconds)
    }
    /// CPUs' worth of time used over the interval.
    pub fn used_cpus(&self) -> Option<f64> {
        let ns = self.used_ns? as f64;
        (self.seconds > 0.0).then(|| ns / 1e9 / self.seconds)
    }
    /// CPU used as a share of the quota (1: all of it).
    pub fn quota_used(&self) -> Option<f64> {
        let q = self.quota_cpus.filter(|&q| q > 0.0)?;
        Some(self.used_cpus()? / q)
    }
}

/// The group's I/O on one device over an interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoDelta {
    pub version: CgroupVersion,
    pub cgroup: String,
    pub device: String,
    pub disk: Option<String>,
    pub count: IoCount,
}

/// Stall time over an interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PressureDelta {
    pub cgroup: String,
    pub resource: Resource,
    pub seconds: f64,
    pub some_us: u64,
    pub full_us: Option<u64>,
}

impl PressureDelta {
    /// The share of the interval in which some task stalled.
    pub fn some_share(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.some_us as f64 / 1e6 / self.seconds)
    }
}

/// The counters' differences over an interval: what is in both readings
/// and did not go backwards (a group made anew between them is left out).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterDelta {
    pub seconds: f64,
    pub cpu: Vec<CpuDelta>,
    pub io: Vec<IoDelta>,
    pub pressure: Vec<PressureDelta>,
}

fn diff(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    b?.checked_sub(a?)
}

impl CgroupCounters {
    /// From this reading to `after`.
    pub fn delta(&self, after: &CgroupCounters) -> CounterDelta {
        let seconds = after.at_ns.saturating_sub(self.at_ns) as f64 / 1e9;
        let cpu = self
            .cpu
            .iter()
            .filter_map(|a| {
                let b = after
                    .cpu
                    .iter()
                    .find(|b| b.version == a.version && b.cgroup == a.cgroup)?;
                Some(CpuDelta {
                    version: a.version,
                    cgroup: a.cgroup.clone(),
                    quota_cpus: b.quota_cpus,
                    seconds,
                    used_ns: diff(a.usage_ns, b.usage_ns),
                    periods: diff(a.nr_periods, b.nr_periods),
                    throttled_periods: diff(a.nr_throttled, b.nr_throttled),
                    throttled_ns: diff(a.throttled_ns, b.throttled_ns),
                })
            })
            .collect();
        let io = self
            .io
            .iter()
            .filter_map(|a| {
                let b = after.io.iter().find(|b| {
                    b.version == a.version && b.cgroup == a.cgroup && b.device == a.device
                })?;
                let (x, y) = (a.count, b.count);
                Some(IoDelta {
                    version: a.version,
                    cgroup: a.cgroup.clone(),
                    device: a.device.clone(),
                    disk: b.disk.clone(),
                    count: IoCount {
                        reads: y.reads.checked_sub(x.reads)?,
                        writes: y.writes.checked_sub(x.writes)?,
                        read_bytes: y.read_bytes.checked_sub(x.read_bytes)?,
                        write_bytes: y.write_bytes.checked_sub(x.write_bytes)?,
                    },
                })
            })
            .collect();
        let pressure = self
            .pressure
            .iter()
            .filter_map(|a| {
                let b = after
                    .pressure
                    .iter()
                    .find(|b| b.cgroup == a.cgroup && b.resource == a.resource)?;
                Some(PressureDelta {
                    cgroup: a.cgroup.clone(),
                    resource: a.resource,
                    seconds,
                    some_us: b.some_us.checked_sub(a.some_us)?,
                    full_us: diff(a.full_us, b.full_us),
                })
            })
            .collect();
        CounterDelta {
            seconds,
            cpu,
            io,
            pressure,
        }
    }
}

impl CounterDelta {
    /// The level whose quota is the smallest, where one is set.
    pub fn quota_level(&self) -> Option<&CpuDelta> {
        self.cpu
            .iter()
            .filter(|c| c.quota_cpus.is_some())
            .min_by(|a, b| {
                a.quota_cpus
                    .unwrap_or(0.0)
                    .total_cmp(&b.quota_cpus.unwrap_or(0.0))
            })
    }
}
