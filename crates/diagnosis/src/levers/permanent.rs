//! How a user makes a lifted cgroup limit last, one line per setting that
//! holds it: the systemd property of the unit whose group sets it — read
//! from the group's path, whose last part is a unit (`app.service`,
//! `session-3.scope`, `system.slice`) — with the device as `/dev/NAME`,
//! to remove the limit or to raise it to what the trial reached; and the
//! cgroupfs write, for hosts without systemd and for groups systemd does
//! not manage (`/plant`, `/docker/…`). Pure: the inventory's settings
//! come in, the lines go out.
//!
//! The property names are systemd's modern ones (`IOReadIOPSMax=`,
//! `IOReadBandwidthMax=`, `CPUQuota=`, `AllowedCPUs=`,
//! `IODeviceLatencyTargetSec=`, `IOWeight=`): systemd applies the `IO…`
//! ones to the blkio controller on cgroup v1 too (the `BlockIO…` names are
//! the old ones, with no IOPS limit); `AllowedCPUs=` acts on cgroup v2
//! only, so a v1 cpuset gets only its cgroupfs write.

use ssdready_measured::group_limits::{self, GroupLimit};
use ssdready_measured::limits::{CgroupVersion, Inventory, IoLimitKind, WeightKind};
use std::path::Path;

/// What the trial's changed runs reached, for a line that raises a limit
/// rather than removing it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reached {
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    /// The threads the point ran.
    pub threads: u32,
    /// The point read and wrote: its rates are both directions' together,
    /// no figure to raise a throttle of one direction to.
    pub mixed: bool,
}

/// The systemd unit whose group is `cgroup` (its path as
/// `/proc/PID/cgroup` names it): its last part, where that is a unit.
pub fn unit_of(cgroup: &str) -> Option<String> {
    let last = cgroup.trim_end_matches('/').rsplit('/').next()?;
    [".service", ".scope", ".slice"]
        .iter()
        .any(|s| last.len() > s.len() && last.ends_with(s))
        .then(|| last.to_string())
}

/// The directory of a setting, from its source (`DIR/FILE`, or several
/// files comma-separated: the first one's).
fn dir_of(source: &str) -> String {
    let first = source.split(", ").next().unwrap_or(source);
    Path::new(first)
        .parent()
        .map_or_else(String::new, |d| d.display().to_string())
}

/// The device's node: `/dev/NAME` where sysfs named it, else systemd's
/// `/dev/block/MAJ:MIN`.
fn node(disk: Option<&str>, majmin: &str) -> String {
    match disk {
        Some(d) => format!("/dev/{d}"),
        None => format!("/dev/block/{majmin}"),
    }
}

/// One setting's lines: systemd's (removing it, then raising it where a
/// value is given) where a unit holds it, and the cgroupfs writes.
struct Lines<'a> {
    cgroup: &'a str,
    property: &'a str,
    /// The property's value raising the limit (None: only removed).
    raised: Option<String>,
    /// (text, file) written to remove it, and to raise it.
    write: (String, String),
    write_raised: Option<String>,
    /// systemd cannot set it on this version (said instead of its line).
    no_systemd: Option<&'a str>,
}

impl Lines<'_> {
    fn out(self, reach_words: &str) -> Vec<String> {
        let mut v = Vec::new();
        let unit = unit_of(self.cgroup);
        let (text, file) = &self.write;
        match (&unit, self.no_systemd) {
            (Some(u), None) => {
                v.push(format!(
                    "systemctl set-property {u} {}=  # no limit",
                    self.property
                ));
                if let Some(r) = &self.raised {
                    v.push(format!(
                        "systemctl set-property {u} {}={r}  # or {reach_words}",
                        self.property
                    ));
                }
                v.push(format!(
                    "echo \"{text}\" > {file}  # the same without systemd"
                ));
            }
            _ => {
                let why = match (unit, self.no_systemd) {
                    (Some(_), Some(w)) => w.to_string(),
                    _ => format!("the group {} is not a systemd unit's", self.cgroup),
                };
                v.push(format!("echo \"{text}\" > {file}  # no limit ({why})"));
                if let Some(r) = &self.write_raised {
                    v.push(format!("echo \"{r}\" > {file}  # or {reach_words}"));
                }
            }
        }
        v
    }
}

/// The systemd property of an I/O throttle.
pub fn io_property(k: IoLimitKind) -> &'static str {
    match k {
        IoLimitKind::ReadIops => "IOReadIOPSMax",
        IoLimitKind::WriteIops => "IOWriteIOPSMax",
        IoLimitKind::ReadBps => "IOReadBandwidthMax",
        IoLimitKind::WriteBps => "IOWriteBandwidthMax",
    }
}

/// How a user lifts `limit` for good: the lines for each setting that
/// holds it, raising it to what the trial reached where given.
pub fn lines(limit: GroupLimit, inv: &Inventory, reached: Option<&Reached>) -> Vec<String> {
    match limit {
        GroupLimit::IoThrottle => throttle_lines(inv, reached),
        GroupLimit::CpuQuota => quota_lines(inv, reached),
        GroupLimit::Cpuset => cpuset_lines(inv),
        GroupLimit::IoLatency => latency_lines(inv),
        GroupLimit::IoWeight => weight_lines(inv),
    }
}

fn throttle_lines(inv: &Inventory, reached: Option<&Reached>) -> Vec<String> {
    let mut out = Vec::new();
    for t in inv.effective_io_throttles() {
        let to = reached.filter(|r| !r.mixed).map(|r| match t.kind {
            IoLimitKind::ReadIops | IoLimitKind::WriteIops => r.iops.ceil() as u64,
            _ => r.bw_bytes_per_s.ceil() as u64,
        });
        let to = to.filter(|v| *v > t.value);
        let dev = node(t.disk.as_deref(), &t.device);
        let dir = dir_of(&t.source);
        let (remove, raise, file) = match t.version {
            CgroupVersion::V1 => (
                format!("{} 0", t.device),
                to.map(|v| format!("{} {v}", t.device)),
                format!("{dir}/{}", t.kind.v1_file()),
            ),
            CgroupVersion::V2 => (
                format!("{} {}=max", t.device, t.kind.v2_key()),
                to.map(|v| format!("{} {}={v}", t.device, t.kind.v2_key())),
                format!("{dir}/io.max"),
            ),
        };
        let l = Lines {
            cgroup: &t.cgroup,
            property: io_property(t.kind),
            raised: to.map(|v| format!("\"{dev} {v}\"")),
            write: (remove, file),
            write_raised: raise,
            no_systemd: None,
        };
        out.extend(l.out("raise it to what the trial reached"));
    }
    out
}

fn quota_lines(inv: &Inventory, reached: Option<&Reached>) -> Vec<String> {
    let Some(q) = group_limits::tightest_quota(inv) else {
        return Vec::new();
    };
    let cpus = reached
        .map(|r| r.threads.max(1))
        .filter(|c| *c as f64 > q.cpus);
    let dir = dir_of(&q.source);
    let (remove, raise, file) = match q.version {
        CgroupVersion::V1 => (
            "-1".to_string(),
            cpus.map(|c| (u64::from(c) * q.period_us).to_string()),
            format!("{dir}/cpu.cfs_quota_us"),
        ),
        CgroupVersion::V2 => (
            "max".to_string(),
            cpus.map(|c| format!("{} {}", u64::from(c) * q.period_us, q.period_us)),
            format!("{dir}/cpu.max"),
        ),
    };
    let l = Lines {
        cgroup: &q.cgroup,
        property: "CPUQuota",
        raised: cpus.map(|c| format!("{}%", 100 * c)),
        write: (remove, file),
        write_raised: raise,
        no_systemd: None,
    };
    let words = match cpus {
        Some(1) => "raise it to the 1 CPU the trial's one thread could use".into(),
        Some(c) => format!("raise it to the {c} CPUs the trial's {c} threads could use"),
        None => String::new(),
    };
    l.out(&words)
}

fn cpuset_lines(inv: &Inventory) -> Vec<String> {
    let Some(s) = group_limits::restricting_cpuset(inv) else {
        return Vec::new();
    };
    let online = ssdready_core::units::fmt_cpu_list(inv.cpus.online.iter().map(|c| *c as usize));
    let dir = dir_of(&s.source);
    let l = Lines {
        cgroup: &s.cgroup,
        property: "AllowedCPUs",
        raised: None,
        write: (online, format!("{dir}/cpuset.cpus")),
        write_raised: None,
        no_systemd: (s.version == CgroupVersion::V1)
            .then_some("systemd sets AllowedCPUs= on cgroup v2 only"),
    };
    l.out("")
}

fn latency_lines(inv: &Inventory) -> Vec<String> {
    let mut out = Vec::new();
    for t in inv
        .io_latency
        .iter()
        .filter(|t| t.version == CgroupVersion::V2)
    {
        let l = Lines {
            cgroup: &t.cgroup,
            property: "IODeviceLatencyTargetSec",
            raised: None,
            write: (
                format!("{} target=max", t.device),
                format!("{}/io.latency", dir_of(&t.source)),
            ),
            write_raised: None,
            no_systemd: None,
        };
        out.extend(l.out(""));
    }
    out
}

fn weight_lines(inv: &Inventory) -> Vec<String> {
    let mut out = Vec::new();
    for w in inv
        .io_cost
        .weights
        .iter()
        .filter(|w| w.version == CgroupVersion::V2 && w.kind == WeightKind::IoCost)
    {
        let (property, text) = match &w.device {
            None => ("IOWeight", "default 100".to_string()),
            Some(d) => ("IODeviceWeight", format!("{d} default")),
        };
        let l = Lines {
            cgroup: &w.cgroup,
            property,
            raised: None,
            write: (text, format!("{}/io.weight", dir_of(&w.source))),
            write_raised: None,
            no_systemd: None,
        };
        out.extend(l.out(""));
    }
    out
}

#[cfg(test)]
#[path = "permanent_tests.rs"]
mod tests;
