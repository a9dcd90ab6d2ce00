//! The limits of the study's own control groups, each lifted on its own:
//! which of them hold ([`holds`]), and what a trial that lifts one alone
//! does ([`lift`]): which hierarchies it leaves for groups of ssdready's
//! own, and what a cgroup v2 group of its own is given so that the other
//! limits still hold. Pure: the inventory ([`crate::limits::Inventory`])
//! comes in, the plan goes out; `ssdready-tune` makes the groups.
//!
//! On cgroup v1 every controller is a hierarchy of its own: the throttle
//! is lifted by leaving only the `blkio` hierarchy, the quota only the
//! `cpu` one, the cpuset only the `cpuset` one, and the process keeps its
//! place in the others. On cgroup v2 one hierarchy holds them all: the
//! group of ssdready's own, at the v2 root, is given the limits that are
//! not lifted, copied from the effective ones of the user's group and its
//! ancestors (`io.max`, `cpu.max`, `cpuset.cpus`, and `io.latency` and
//! `io.weight` where they are set). The v2 root's `cgroup.subtree_control`
//! is never changed: a controller the user's groups use is enabled there
//! already (a group's limit files exist only where every level above it
//! enables the controller), and a limit that cannot be copied refuses the
//! trial with the reason.

use crate::limits::{CgroupVersion, CpuQuota, CpuSet, Inventory, WeightKind};
use std::collections::BTreeMap;

/// A limit of the study's groups that a trial lifts on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupLimit {
    /// An I/O throttle: v1 `blkio.throttle.*_device`, v2 `io.max`.
    IoThrottle,
    /// A CPU quota: v1 `cpu.cfs_quota_us`, v2 `cpu.max`.
    CpuQuota,
    /// The cpuset: `cpuset.cpus`.
    Cpuset,
    /// A v2 `io.latency` target.
    IoLatency,
    /// A v2 `io.weight` under the io.cost controller.
    IoWeight,
}

impl GroupLimit {
    pub const ALL: [GroupLimit; 5] = [
        GroupLimit::IoThrottle,
        GroupLimit::CpuQuota,
        GroupLimit::Cpuset,
        GroupLimit::IoLatency,
        GroupLimit::IoWeight,
    ];

    /// In a sentence: `the I/O throttle`.
    pub fn words(self) -> &'static str {
        match self {
            GroupLimit::IoThrottle => "the I/O throttle",
            GroupLimit::CpuQuota => "the CPU quota",
            GroupLimit::Cpuset => "the cpuset",
            GroupLimit::IoLatency => "the io.latency target",
            GroupLimit::IoWeight => "the io.weight",
        }
    }

    /// The v1 controllers whose hierarchy holds it (none: v2 only).
    pub fn v1_controllers(self) -> &'static [&'static str] {
        match self {
            GroupLimit::IoThrottle => &["blkio"],
            GroupLimit::CpuQuota => &["cpu"],
            GroupLimit::Cpuset => &["cpuset"],
            GroupLimit::IoLatency | GroupLimit::IoWeight => &[],
        }
    }

    /// The v2 controller whose files set it.
    pub fn v2_controller(self) -> &'static str {
        match self {
            GroupLimit::IoThrottle | GroupLimit::IoLatency | GroupLimit::IoWeight => "io",
            GroupLimit::CpuQuota => "cpu",
            GroupLimit::Cpuset => "cpuset",
        }
    }
}

/// The cpuset when it allows fewer CPUs than are online.
pub fn restricting_cpuset(inv: &Inventory) -> Option<&CpuSet> {
    let online = inv.cpus.online.len();
    inv.cpuset
        .as_ref()
        .filter(|s| online > 0 && !s.cpus.is_empty() && s.cpus.len() < online)
}

/// The smallest quota on the path (quota / period).
pub fn tightest_quota(inv: &Inventory) -> Option<&CpuQuota> {
    inv.cpu_quota()
}

/// Whether the io.cost controller is on for a device (io.weight counts
/// only then).
fn io_cost_on(inv: &Inventory) -> bool {
    inv.io_cost.qos.iter().any(|q| q.enabled)
}

/// Whether the limit is set on the study's groups.
pub fn holds(l: GroupLimit, inv: &Inventory) -> bool {
    match l {
        GroupLimit::IoThrottle => !inv.effective_io_throttles().is_empty(),
        GroupLimit::CpuQuota => tightest_quota(inv).is_some(),
        GroupLimit::Cpuset => restricting_cpuset(inv).is_some(),
        GroupLimit::IoLatency => inv
            .io_latency
            .iter()
            .any(|x| x.version == CgroupVersion::V2),
        GroupLimit::IoWeight => io_cost_on(inv) && !v2_weights(inv).is_empty(),
    }
}

/// The limits that hold, in the table's order.
pub fn held(inv: &Inventory) -> Vec<GroupLimit> {
    GroupLimit::ALL
        .into_iter()
        .filter(|l| holds(*l, inv))
        .collect()
}

/// What a trial that lifts limits does: the hierarchies it leaves for
/// groups of ssdready's own, and the files a v2 group of its own is given
/// to keep the limits not lifted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lift {
    /// The limit lifted (None: every limit of the study's groups at once).
    pub limit: Option<GroupLimit>,
    /// The v1 controllers whose hierarchies the process leaves.
    pub v1: Vec<String>,
    /// The v2 controllers: the process leaves its v2 group when that group
    /// has one of them.
    pub v2: Vec<String>,
    /// Each file the v2 group of its own is given before the process
    /// enters it, with its text, in order: the limits kept.
    pub keep: Vec<(String, String)>,
    /// The limits kept, in words, for the trial's text.
    pub kept: Vec<String>,
}

impl Lift {
    /// Every limit at once: every hierarchy that can hold a run left,
    /// nothing kept.
    pub fn all() -> Lift {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        Lift {
            limit: None,
            v1: s(&["blkio", "cpu", "cpuacct", "cpuset"]),
            v2: s(&["io", "cpu", "cpuset"]),
            keep: Vec::new(),
            kept: Vec::new(),
        }
    }

    /// This lift and `other` at once: both limits' hierarchies left, and
    /// kept only what both keep (a file each keeps, as this one writes
    /// it).
    pub fn with(&self, other: &Lift) -> Lift {
        let union = |a: &[String], b: &[String]| {
            let mut v = a.to_vec();
            v.extend(b.iter().filter(|x| !a.contains(x)).cloned());
            v
        };
        Lift {
            limit: self.limit.or(other.limit),
            v1: union(&self.v1, &other.v1),
            v2: union(&self.v2, &other.v2),
            keep: self
                .keep
                .iter()
                .filter(|(f, _)| other.keep.iter().any(|(g, _)| g == f))
                .cloned()
                .collect(),
            kept: self
                .kept
                .iter()
                .filter(|k| other.kept.contains(k))
                .cloned()
                .collect(),
        }
    }
}

/// What lifting `limit` alone does, from the study's inventory (None:
/// nothing is known of the others, and a v2 group keeps none of them).
pub fn lift(limit: GroupLimit, inv: Option<&Inventory>) -> Lift {
    let keep = inv.map(|i| kept_v2(limit, i)).unwrap_or_default();
    let kept = inv
        .map(held)
        .unwrap_or_default()
        .into_iter()
        .filter(|l| *l != limit)
        .map(|l| l.words().to_string())
        .collect();
    Lift {
        limit: Some(limit),
        v1: limit
            .v1_controllers()
            .iter()
            .map(|c| c.to_string())
            .collect(),
        v2: vec![limit.v2_controller().into()],
        keep,
        kept,
    }
}

/// The v2 `io.weight` settings of the io.cost controller: the innermost
/// group's per device (`None`: its default).
fn v2_weights(inv: &Inventory) -> BTreeMap<Option<String>, u32> {
    let mut out = BTreeMap::new();
    // The inventory reads the process's own group first: the first seen
    // per device is the innermost.
    for w in inv
        .io_cost
        .weights
        .iter()
        .filter(|w| w.version == CgroupVersion::V2 && w.kind == WeightKind::IoCost)
    {
        out.entry(w.device.clone()).or_insert(w.weight);
    }
    out
}

/// The files a v2 group of ssdready's own is given to keep every v2
/// limit but `lifted`: the effective `io.max` per device (the smallest of
/// each key on the path), the smallest `cpu.max`, the effective cpuset,
/// the `io.latency` targets (the smallest per device) and the innermost
/// `io.weight`.
pub fn kept_v2(lifted: GroupLimit, inv: &Inventory) -> Vec<(String, String)> {
    let v2 = CgroupVersion::V2;
    let mut out = Vec::new();
    if lifted != GroupLimit::IoThrottle {
        let mut per_dev: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for t in inv
            .effective_io_throttles()
            .into_iter()
            .filter(|t| t.version == v2)
        {
            per_dev
                .entry(&t.device)
                .or_default()
                .push(format!("{}={}", t.kind.v2_key(), t.value));
        }
        for (dev, keys) in per_dev {
            out.push(("io.max".into(), format!("{dev} {}", keys.join(" "))));
        }
    }
    if lifted != GroupLimit::CpuQuota {
        let q = inv
            .cpu_quotas
            .iter()
            .filter(|q| q.version == v2)
            .min_by(|a, b| a.cpus.total_cmp(&b.cpus));
        if let Some(q) = q {
            out.push(("cpu.max".into(), format!("{} {}", q.quota_us, q.period_us)));
        }
    }
    if lifted != GroupLimit::Cpuset {
        if let Some(s) = restricting_cpuset(inv).filter(|s| s.version == v2) {
            let list = ssdready_core::units::fmt_cpu_list(s.cpus.iter().map(|c| *c as usize));
            out.push(("cpuset.cpus".into(), list));
        }
    }
    if lifted != GroupLimit::IoLatency {
        let mut per_dev: BTreeMap<&str, u64> = BTreeMap::new();
        for l in inv.io_latency.iter().filter(|l| l.version == v2) {
            let e = per_dev.entry(&l.device).or_insert(l.target_us);
            *e = (*e).min(l.target_us);
        }
        for (dev, us) in per_dev {
            out.push(("io.latency".into(), format!("{dev} target={us}")));
        }
    }
    if lifted != GroupLimit::IoWeight && io_cost_on(inv) {
        for (dev, w) in v2_weights(inv) {
            let line = match dev {
                None => format!("default {w}"),
                Some(d) => format!("{d} {w}"),
            };
            out.push(("io.weight".into(), line));
        }
    }
    out
}

#[cfg(any(test, feature = "fixtures"))]
#[path = "group_limits_fixtures.rs"]
pub mod fixtures;

#[cfg(test)]
#[path = "group_limits_tests.rs"]
mod tests;
