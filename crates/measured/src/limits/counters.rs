//! A cgroup's counters, read before and after a run, and what they say
//! over it: the CPU the group used against its quota, the periods in which
//! the quota throttled it and the time it stood throttled, its I/O per
//! device, and (v2) the time its tasks stalled on I/O, CPU and memory.
//!
//! The counters are the group's, not the process's: every task in the
//! group (and, where the file is recursive, its descendants) adds to them.
//! So each reading also lists the processes in the study's own groups
//! ([`GroupProcess`]: their I/O and CPU so far), and the difference says
//! what each of them did over the run ([`ProcessDelta`]): a limit set on
//! the group is shared by all of them.

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
    /// The processes in the study's own groups (the study's included),
    /// where a group other than the root holds it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<GroupProcess>,
}

/// A process in one of the study's own groups, at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupProcess {
    pub pid: u32,
    /// Its name (`/proc/PID/stat`).
    pub comm: String,
    /// The controllers of the groups it shares with the study (`blkio`,
    /// `cpu`, `cpuacct`, `cpuset`; `v2` for the unified group).
    pub shares: Vec<String>,
    /// Bytes its tasks had read and written through the block layer
    /// (`/proc/PID/io` `read_bytes`, `write_bytes`; None: not readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
    /// CPU its threads had used (`/proc/PID/stat` utime + stime), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    /// Its scheduling policy (`SCHED_OTHER`, `SCHED_IDLE`, …) and nice
    /// value (`/proc/PID/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i64>,
}

impl GroupProcess {
    /// Whether it shares a group of `controller` with the study (the
    /// unified group shares every controller).
    pub fn shares(&self, controller: &str) -> bool {
        self.shares.iter().any(|c| c == controller || c == "v2")
    }
}

/// What one process of the study's groups did over an interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessDelta {
    pub pid: u32,
    pub comm: String,
    pub shares: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i64>,
    /// Not in the group at the interval's start: counted from its start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub joined: bool,
}

impl ProcessDelta {
    /// `fio (pid 812)`, with its policy and nice value where they are not
    /// the default's (`yes (pid 9, SCHED_IDLE, nice 19)`).
    pub fn label(&self) -> String {
        let mut extra = Vec::new();
        if let Some(p) = self.policy.as_deref().filter(|p| *p != "SCHED_OTHER") {
            extra.push(p.to_string());
        }
        if let Some(n) = self.nice.filter(|n| *n != 0) {
            extra.push(format!("nice {n}"));
        }
        let extra: String = extra.iter().map(|e| format!(", {e}")).collect();
        format!("{} (pid {}{extra})", self.comm, self.pid)
    }
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
    /// The study's process (its `pid`) and every other process in its own
    /// groups at the interval's end: what each did over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessDelta>,
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
            pid: Some(after.pid),
            processes: after
                .processes
                .iter()
                .map(|b| process_delta(self.processes.iter().find(|a| a.pid == b.pid), b))
                .collect(),
        }
    }
}

/// One process's change; from zero where it was not there before (or its
/// counters went backwards: a new process with a reused pid).
fn process_delta(a: Option<&GroupProcess>, b: &GroupProcess) -> ProcessDelta {
    let a = a.filter(|a| a.comm == b.comm);
    let back = |x: Option<u64>, y: Option<u64>| matches!((x, y), (Some(x), Some(y)) if y < x);
    let a = a.filter(|a| {
        !back(a.read_bytes, b.read_bytes)
            && !back(a.write_bytes, b.write_bytes)
            && !back(a.cpu_ns, b.cpu_ns)
    });
    let d = |f: fn(&GroupProcess) -> Option<u64>| match a {
        Some(a) => diff(f(a), f(b)),
        None => f(b),
    };
    ProcessDelta {
        pid: b.pid,
        comm: b.comm.clone(),
        shares: b.shares.clone(),
        read_bytes: d(|p| p.read_bytes),
        write_bytes: d(|p| p.write_bytes),
        cpu_ns: d(|p| p.cpu_ns),
        policy: b.policy.clone(),
        nice: b.nice,
        joined: a.is_none(),
    }
}

impl CounterDelta {
    /// The group's I/O on `disk` (a name, or `MAJ:MIN`).
    pub fn io_on(&self, disk: &str) -> Option<&IoDelta> {
        self.io
            .iter()
            .find(|d| d.disk.as_deref() == Some(disk) || d.device == disk)
    }

    /// The study's own process over the interval.
    pub fn own(&self) -> Option<&ProcessDelta> {
        self.processes.iter().find(|p| Some(p.pid) == self.pid)
    }

    /// The other processes that share a group of `controller` with the
    /// study, with `f` of each (above zero), largest first.
    pub fn others(
        &self,
        controller: &str,
        f: fn(&ProcessDelta) -> Option<u64>,
    ) -> Vec<(&ProcessDelta, u64)> {
        let mut v: Vec<(&ProcessDelta, u64)> = self
            .processes
            .iter()
            .filter(|p| Some(p.pid) != self.pid)
            .filter(|p| p.shares.iter().any(|c| c == controller || c == "v2"))
            .filter_map(|p| Some((p, f(p).filter(|x| *x > 0)?)))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.pid.cmp(&b.0.pid)));
        v
    }

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
