//! A limit set on a control group binds the whole group: the study and
//! every other process in it. The group's own counters over the run
//! (`blkio.throttle.io_serviced` and `io_service_bytes`, `io.stat`,
//! `cpuacct.usage`, `cpu.stat`) give its total against the limit, and the
//! processes read in its `cgroup.procs` (their `/proc/PID/io` and
//! `/proc/PID/stat`) say who took the rest ("the group's 20.0K read IOPS:
//! the study 10.4K, fio (pid 812) 9.6K"). Where nobody else shares the
//! group, none of this changes a verdict.

use super::caps::IoCap;
use super::view::View;
use ssdready_core::units::fmt_count;
use ssdready_measured::limits::counters::{CounterDelta, ProcessDelta};

/// Other processes' share of the group's I/O or CPU, at least, for the
/// group to count as shared (percent of the group's total).
pub const SHARED_PCT: f64 = 10.0;
/// Processes named, at most.
pub const NAMED: usize = 3;

/// The group's I/O on a throttled device over one run, in the throttle's
/// own unit (I/Os or bytes per second).
#[derive(Clone, Debug, PartialEq)]
pub struct IoShare {
    /// The group that holds the throttle (as the counters name it).
    pub cgroup: String,
    /// The group's rate: every task in it.
    pub group: f64,
    /// The study's own rate.
    pub own: f64,
    /// Each other process, with its rate (its bytes' share of what the
    /// study did not do), largest first.
    pub others: Vec<(String, f64)>,
    /// Whether the throttle counts I/Os (else bytes).
    pub iops: bool,
    /// The reads' or writes' word (`read`, `write`).
    pub dir: &'static str,
}

impl IoShare {
    /// What the other processes did together.
    pub fn others_total(&self) -> f64 {
        (self.group - self.own).max(0.0)
    }

    /// Whether others did a part of the group's I/O that counts.
    pub fn shared(&self) -> bool {
        self.group > 0.0 && 100.0 * self.others_total() / self.group >= SHARED_PCT
    }

    /// In one unit for the whole group: thousands where the group's rate
    /// is (`9.6K` beside `20.0K`, not `9600`).
    fn amount(&self, x: f64) -> String {
        match self.iops {
            true if self.group >= 1e4 && x < 1e6 => format!("{:.1}K", x / 1e3),
            true => fmt_count(x),
            false => format!("{:.1} MiB/s", x / 1048576.0),
        }
    }

    /// `the group's 20.0K read IOPS: the study 10.4K, fio (pid 812) 9.6K`.
    pub fn words(&self) -> String {
        let unit = match self.iops {
            true => format!("{} IOPS", self.dir),
            false => format!("{} bandwidth", self.dir),
        };
        let mut parts = vec![format!("the study {}", self.amount(self.own))];
        let mut named = 0.0;
        for (who, x) in self.others.iter().take(NAMED) {
            parts.push(format!("{who} {}", self.amount(*x)));
            named += x;
        }
        let rest = self.others_total() - named;
        if rest > 0.05 * self.group.max(1.0) {
            parts.push(format!(
                "{} other processes' {}",
                if self.others.is_empty() {
                    "the"
                } else {
                    "the group's"
                },
                self.amount(rest)
            ));
        }
        format!(
            "the group {}'s {} {unit}: {}",
            self.cgroup,
            self.amount(self.group),
            parts.join(", ")
        )
    }
}

/// The study's control groups' counters over a run.
pub fn counters<'a>(v: &View<'a>) -> Option<&'a CounterDelta> {
    v.run.context.as_ref()?.cgroups.as_ref()
}

/// The group's I/O on the device `cap` is set on, over run `v`, where its
/// counters were read.
pub fn io_share(v: &View, cap: &IoCap) -> Option<IoShare> {
    let c = counters(v)?;
    let d = c.io_on(&cap.device)?;
    let secs = c.seconds;
    if secs <= 0.0 {
        return None;
    }
    use super::caps::IoKind::*;
    let n = &d.count;
    let total = match cap.kind {
        ReadIops => n.reads,
        WriteIops => n.writes,
        ReadBps => n.read_bytes,
        WriteBps => n.write_bytes,
    } as f64;
    let own = if cap.kind.iops() { v.iops } else { v.bw };
    let group = total / secs;
    let bytes: fn(&ProcessDelta) -> Option<u64> = match cap.kind.reads() {
        true => |p| p.read_bytes,
        false => |p| p.write_bytes,
    };
    // The I/O the study did not do, shared out by each process's bytes.
    let others = c.others("blkio", bytes);
    let sum: u64 = others.iter().map(|x| x.1).sum();
    let rest = (group - own).max(0.0);
    Some(IoShare {
        cgroup: d.cgroup.clone(),
        group,
        own,
        others: others
            .iter()
            .map(|(p, b)| (p.label(), rest * *b as f64 / sum.max(1) as f64))
            .collect(),
        iops: cap.kind.iops(),
        dir: if cap.kind.reads() { "read" } else { "write" },
    })
}

/// The CPU of the study's group over run `v`, shared: `the group used
/// 0.20 CPUs: the study 0.11, stress (pid 9) 0.09` — where other
/// processes in it used at least [`SHARED_PCT`] of it, else None.
pub fn cpu_share(v: &View) -> Option<String> {
    let c = counters(v)?;
    let group = v.group.and_then(|g| g.used_cpus())?;
    let secs = c.seconds.max(1e-9);
    let cpus = |ns: u64| ns as f64 / 1e9 / secs;
    let others = c.others("cpu", |p| p.cpu_ns);
    let theirs: f64 = others.iter().map(|x| cpus(x.1)).sum();
    if group <= 0.0 || 100.0 * theirs / group < SHARED_PCT {
        return None;
    }
    let own = c
        .own()
        .and_then(|p| p.cpu_ns)
        .map(cpus)
        .or(v.process_cpus)
        .unwrap_or(0.0);
    let mut parts = vec![format!("the study {own:.2}")];
    parts.extend(
        others
            .iter()
            .take(NAMED)
            .map(|(p, ns)| format!("{} {:.2}", p.label(), cpus(*ns))),
    );
    Some(format!(
        "the group {} used {group:.2} CPUs: {} (/proc/PID/stat of each process in its cgroup.procs)",
        v.group.map_or("?", |g| g.cgroup.as_str()),
        parts.join(", ")
    ))
}
