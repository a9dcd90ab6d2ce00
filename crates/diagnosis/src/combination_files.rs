//! The files that make the configuration last ([`crate::combination`]),
//! written by the binary into the study's directory, each only where the
//! configuration has something for it: [`UDEV`], one rule line per queue
//! setting per device (the scheduler first: a switch resets
//! `nr_requests`); [`SYSTEMD`], a drop-in that lifts the control-group
//! limits the study measured without, for the unit that owns the study's
//! group (what the inventory read of them, and what to fill in where it
//! was not read; where no unit owns the group, the cgroupfs writes
//! instead); [`FIO`], the job the
//! configuration was measured with, the application's own choices in it.
//! Each starts with the same header: the study's date, the changes, what
//! they bought as measured, and how to apply the file.

use crate::combination::{Combination, Member};
use crate::levers::{self, LeverKind};
use crate::permanent;
use crate::trials::fmt_gain;
use ssdready_measured::group_limits::{self, GroupLimit};
use ssdready_measured::limits::{CgroupVersion, Inventory, WeightKind};

/// The udev rules of the queue settings.
pub const UDEV: &str = "99-ssdready.rules";
/// The systemd drop-in of the control group's properties.
pub const SYSTEMD: &str = "ssdready.conf";
/// The fio job of the application's own choices.
pub const FIO: &str = "job.fio";

/// A file to write: its name in the study's directory and its text.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub name: &'static str,
    pub text: String,
}

fn kept(c: &Combination) -> Vec<&Member> {
    c.members_of(&c.kept).collect()
}

/// The names of the files the configuration gets: none without a
/// measured gain, else the job, and the rules and the drop-in where it
/// has queue settings or the study's own group.
pub fn names(c: &Combination) -> Vec<&'static str> {
    if c.kept_gain().is_none() || c.kept.change_options.is_empty() {
        return Vec::new();
    }
    let has = |k: &dyn Fn(&dyn LeverKind) -> bool| kept(c).iter().any(|m| k(m.kind.ops()));
    let mut out = Vec::new();
    if has(&|k| k.on_queue()) {
        out.push(UDEV);
    }
    if has(&|k| k.lifts_group()) {
        out.push(SYSTEMD);
    }
    out.push(FIO);
    out
}

/// `2026-11-26` (UTC) of a time in ms since the epoch.
pub fn date_of(unix_ms: u64) -> String {
    let (y, m, d) = ssdready_core::units::civil_from_days((unix_ms / 86_400_000) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The files of the configuration, dated `date`, the drop-in filled from
/// the inventory of the study's limits where it was read.
pub fn files(c: &Combination, date: &str, limits: Option<&Inventory>) -> Vec<File> {
    let head = header(c, date);
    names(c)
        .into_iter()
        .map(|name| File {
            name,
            text: match name {
                UDEV => udev(c, &head),
                SYSTEMD => systemd(c, &head, limits),
                _ => fio(c, &head),
            },
        })
        .collect()
}

/// `# ssdready study DATE: CHANGES, measured together: IOPS +N % ± E %
/// over K turns at POINT`.
pub fn header(c: &Combination, date: &str) -> String {
    let how = match c.kept.single {
        true => "measured alone",
        false => "measured together",
    };
    let gain = c.kept_gain().map_or("not measured".into(), |g| {
        format!(
            "{} {} over {} turns",
            g.metric.label(),
            fmt_gain(g),
            c.kept.turns.len()
        )
    });
    format!(
        "# ssdready study {date}: {}, {how}: {gain} at {}\n",
        c.kept_words(),
        c.at
    )
}

/// The rule lines: per queue setting (the scheduler first), per device.
fn udev(c: &Combination, head: &str) -> String {
    let mut queue: Vec<&Member> = kept(c)
        .into_iter()
        .filter(|m| m.kind.ops().on_queue())
        .collect();
    format!(
        "{head}# The device queue settings of this configuration. To apply them:\n\
         #   cp {UDEV} /etc/udev/rules.d/ && udevadm control --reload && udevadm trigger --action=change --subsystem-match=block\n{}",
        levers::kind_queue::udev_lines(&mut queue)
    )
}

/// The unit a group is (its last component), and its drop-in section.
fn unit_of(group: &str) -> Option<(String, &'static str)> {
    unit_named(group.trim_end_matches('/').rsplit('/').next()?)
}

/// A path component that names a unit, and its drop-in section.
fn unit_named(component: &str) -> Option<(String, &'static str)> {
    let section = match component.rsplit_once('.')?.1 {
        "service" => "Service",
        "slice" => "Slice",
        "scope" => "Scope",
        _ => return None,
    };
    Some((component.to_string(), section))
}

/// The unit that owns a cgroup: the deepest `*.service`, `*.scope` or
/// `*.slice` component of its path (`/user.slice/user-0.slice/session-3.scope/x`:
/// `session-3.scope`), and its drop-in section.
pub fn owning_unit(path: &str) -> Option<(String, &'static str)> {
    path.trim_end_matches('/').rsplit('/').find_map(unit_named)
}

/// The unit that owns the study's own cgroup, from its paths as
/// `/proc/self/cgroup` gave them (the inventory's `cgroups`), the v2 path
/// first; None where no unit owns it.
fn study_unit(inv: &Inventory) -> Option<(String, &'static str)> {
    let mut paths: Vec<_> = inv.cgroups.iter().collect();
    paths.sort_by_key(|c| c.version != CgroupVersion::V2);
    paths.iter().find_map(|c| owning_unit(&c.path))
}

/// The limits of the set's cgroup members (each lever lifts one, as the
/// shipped table says; a lever of no single limit, all of them).
fn lifted(c: &Combination) -> Vec<GroupLimit> {
    let table = levers::shipped();
    let limit = |id: &str| table.iter().find(|l| l.id == id)?.lift();
    let mut out: Vec<GroupLimit> = Vec::new();
    for m in kept(c).into_iter().filter(|m| m.kind.ops().lifts_group()) {
        match limit(&m.lever) {
            Some(g) => out.push(g),
            None => out.extend(GroupLimit::ALL),
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The limits of `lift` that held the study, as (the group that set it,
/// a comment, the property line that lifts it).
fn limit_lines(inv: &Inventory, lift: &[GroupLimit]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let on = |g: GroupLimit| lift.contains(&g) && group_limits::holds(g, inv);
    if on(GroupLimit::IoThrottle) {
        for t in inv.effective_io_throttles() {
            let dev = t
                .disk
                .as_deref()
                .map_or(t.device.clone(), |d| format!("/dev/{d}"));
            out.push((
                t.cgroup.clone(),
                format!(
                    "{} {} on {dev}, set on {}",
                    t.kind.words(),
                    t.value,
                    t.cgroup
                ),
                format!("{}=", permanent::io_property(t.kind)),
            ));
        }
    }
    if let Some(q) = group_limits::tightest_quota(inv).filter(|_| on(GroupLimit::CpuQuota)) {
        out.push((
            q.cgroup.clone(),
            format!("a CPU quota of {:.2} CPUs, set on {}", q.cpus, q.cgroup),
            "CPUQuota=".into(),
        ));
    }
    if let Some(set) = group_limits::restricting_cpuset(inv).filter(|_| on(GroupLimit::Cpuset)) {
        out.push((
            set.cgroup.clone(),
            format!(
                "the CPUs allowed, {} of {}, set on {}",
                set.cpus.len(),
                inv.cpus.online.len(),
                set.cgroup
            ),
            "AllowedCPUs=".into(),
        ));
    }
    if on(GroupLimit::IoLatency) {
        for t in inv
            .io_latency
            .iter()
            .filter(|t| t.version == CgroupVersion::V2)
        {
            out.push((
                t.cgroup.clone(),
                format!("an io.latency target on {}, set on {}", t.device, t.cgroup),
                "IODeviceLatencyTargetSec=".into(),
            ));
        }
    }
    if on(GroupLimit::IoWeight) {
        for w in &inv.io_cost.weights {
            if w.version == CgroupVersion::V2 && w.kind == WeightKind::IoCost {
                out.push((
                    w.cgroup.clone(),
                    format!("an io.weight of {}, set on {}", w.weight, w.cgroup),
                    "IOWeight=".into(),
                ));
            }
        }
    }
    out
}

/// The drop-in: each limit that held the study lifted (an empty value is
/// no limit), for the unit that set it where its group names one.
fn systemd(c: &Combination, head: &str, limits: Option<&Inventory>) -> String {
    let lift = lifted(c);
    let lines = limits.map_or_else(Vec::new, |i| limit_lines(i, &lift));
    let unit = limits
        .and_then(study_unit)
        .or_else(|| lines.iter().find_map(|(g, _, _)| unit_of(g)));
    if let (None, Some(inv)) = (&unit, limits) {
        return cgroupfs(head, inv, &lift);
    }
    let (name, section) = unit
        .clone()
        .unwrap_or_else(|| ("UNIT".to_string(), "Service"));
    let mut s = format!(
        "{head}# The study measured from a control group of its own, without the limits of\n\
         # the group it ran in; these lines lift them. To apply them:\n\
         #   systemctl edit {name}   (and paste what follows), or\n\
         #   mkdir -p /etc/systemd/system/{name}.d && cp {SYSTEMD} /etc/systemd/system/{name}.d/ && systemctl daemon-reload\n\
         # An empty value is no limit; or raise it to what the configuration reached{}.\n",
        c.kept_gain()
            .map_or(String::new(), |g| format!(" ({:.0} {})", g.change, g.metric.label()))
    );
    if unit.is_none() {
        s.push_str(
            "# Fill in: UNIT, the unit whose group held the I/O ([Service] for a service,\n\
             # [Slice] for a slice); the study did not read which.\n",
        );
    }
    s.push_str(&format!("[{section}]\n"));
    if lines.is_empty() {
        s.push_str("# Fill in: keep the lines of the limits that hold the unit.\n");
        for p in [
            "IOReadIOPSMax=",
            "IOReadBandwidthMax=",
            "CPUQuota=",
            "AllowedCPUs=",
        ] {
            s.push_str(&format!("{p}\n"));
        }
    }
    for (g, why, line) in &lines {
        if unit.as_ref().is_some_and(|(n, _)| !g.ends_with(n.as_str())) {
            s.push_str(&format!(
                "# (set on another group: apply it to {g}'s unit)\n"
            ));
        }
        s.push_str(&format!("# {why}\n{line}\n"));
    }
    s
}

/// Where no systemd unit owns the study's group: the cgroupfs writes that
/// lift each limit of the set, in place of a drop-in.
fn cgroupfs(head: &str, inv: &Inventory, lift: &[GroupLimit]) -> String {
    let groups: Vec<&str> = inv.cgroups.iter().map(|c| c.path.as_str()).collect();
    let mut s = format!(
        "{head}# The study measured from a control group of its own, without the limits of\n\
         # the group it ran in ({}). No systemd unit owns that group, so this is no\n\
         # drop-in: run these writes as root to lift the limits (they last while the\n\
         # group does; write them again where the group is made again).\n",
        match groups.is_empty() {
            true => "not read".to_string(),
            false => groups.join(", "),
        }
    );
    for g in lift.iter().filter(|g| group_limits::holds(**g, inv)) {
        for line in permanent::lines(*g, inv, None) {
            s.push_str(&format!("{line}\n"));
        }
    }
    s
}

/// The run switches of a command line, not job options.
const SWITCHES: &[&str] = &[
    "quiet",
    "allow-destructive",
    "readonly",
    "profile",
    "decompose",
    "no-decompose",
];

/// A command line's options before its first job, and its jobs: (name,
/// options as `key=value` or `flag`).
type Jobs = (Vec<String>, Vec<(String, Vec<String>)>);

fn jobs_of(options: &[String]) -> Jobs {
    let (mut globals, mut jobs): Jobs = (Vec::new(), Vec::new());
    for o in options {
        let Some(kv) = o.strip_prefix("--") else {
            continue;
        };
        let key = kv.split_once('=').map_or(kv, |(k, _)| k);
        if SWITCHES.contains(&key) {
            continue;
        }
        match (key, kv.split_once('='), jobs.last_mut()) {
            ("name", Some((_, n)), _) => jobs.push((n.to_string(), Vec::new())),
            (_, _, Some(j)) => j.1.push(kv.to_string()),
            (_, _, None) => globals.push(kv.to_string()),
        }
    }
    (globals, jobs)
}

/// The job: every option its jobs share under `[global]` (the target's
/// file apart), then each job with its own.
fn fio(c: &Combination, head: &str) -> String {
    let (mut shared, jobs) = jobs_of(&c.kept.change_options);
    if let Some((_, first)) = jobs.first() {
        shared.extend(
            first
                .iter()
                .filter(|x| !x.starts_with("filename="))
                .filter(|x| jobs.iter().all(|(_, j)| j.contains(x)))
                .cloned(),
        );
    }
    let apps: Vec<&str> = kept(c)
        .into_iter()
        .filter(|m| !m.kind.ops().of_host())
        .map(|m| m.change.as_str())
        .collect();
    let mut s = format!(
        "{head}# The job this configuration was measured with{}. To run it:\n\
         #   ssdready run {FIO}   (or fio {FIO}, where fio knows every option)\n\
         # The baseline it was measured against: ssdready run {}\n[global]\n",
        match apps.is_empty() {
            true => String::new(),
            false => format!(
                ", the application's own choices in it ({})",
                apps.join(", ")
            ),
        },
        c.kept.baseline_options.join(" ")
    );
    for o in &shared {
        s.push_str(&format!("{o}\n"));
    }
    for (name, options) in &jobs {
        s.push_str(&format!("\n[{name}]\n"));
        for o in options.iter().filter(|o| !shared.contains(o)) {
            s.push_str(&format!("{o}\n"));
        }
    }
    s
}

#[cfg(test)]
#[path = "combination_files_tests.rs"]
mod tests;
