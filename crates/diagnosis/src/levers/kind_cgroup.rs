//! A limit of the study's control groups (an I/O throttle, a CPU quota, a
//! cpuset, an io.latency target, an io.weight), lifted on its own: the
//! same runs from a control group of ssdready's own without it, the
//! user's groups unchanged. Tried as root, where the inventory shows its
//! limit set or the named cause is its own; never for a limit below the
//! host; undone by moving ssdready's process back. Where it binds is the
//! limit's own (`crate::levers::binding`), and how a user lifts it for good is a
//! systemd property or a cgroupfs write (`crate::levers::permanent`): here, the
//! drop-in that lifts a configuration's limits for the unit that owns the
//! study's group (what the inventory read of them, and what to fill in
//! where it was not read; where no unit owns the group, the cgroupfs
//! writes instead).

use super::kind::{Lasting, LeverKind, NotTried};
use super::lever::{Apply, Consent, Lever};
use super::{binding, permanent};
use crate::lever_context::{Candidate, Context, Point};
use crate::limit::Cause;
use crate::trials::record::{Member, Reason};
use ssdready_measured::group_limits::{self, GroupLimit, Lift};
use ssdready_measured::limits::{CgroupVersion, Inventory, WeightKind};

/// The systemd drop-in of the control group's properties: the file that
/// makes this kind's changes last.
pub const SYSTEMD: &str = "ssdready.conf";

/// The cgroup kind's unit.
pub struct Cgroup;

/// The cgroup kind.
pub const CGROUP: Cgroup = Cgroup;

impl LeverKind for Cgroup {
    fn word(&self) -> &'static str {
        "cgroup"
    }

    fn needs(&self) -> &'static [&'static str] {
        &["undo"]
    }

    fn lifts_group(&self) -> bool {
        true
    }

    fn replaced(&self, _l: &Lever, _cx: &Context, _p: &Point) -> String {
        "in the study's group".into()
    }

    fn gate(&self, cause: Cause, c: &Consent) -> Result<(), NotTried> {
        match () {
            _ if !c.root => Err((
                Reason::NotRoot,
                "needs root (run the study as root to measure it)".into(),
            )),
            _ if cause == Cause::BelowHost => Err((
                Reason::BelowHost,
                "a limit below this host: no group of this host moves it".into(),
            )),
            _ => match &c.escape_unavailable {
                Some(why) => Err((Reason::Unavailable, why.clone())),
                None => Ok(()),
            },
        }
    }

    fn cannot_bind(&self, l: &Lever, cx: &Context, p: &Point) -> Option<String> {
        let g = l.lift()?;
        let inv = cx.limits.as_ref()?;
        match binding::hidden_by(l, cx, p) {
            Some(_) => None,
            None => binding::group_cannot_bind(g, inv, p),
        }
    }

    fn change(&self, _l: &Lever, _c: &Candidate, lift: &Lift) -> Apply {
        Apply::Escape(lift.clone())
    }

    fn permanent(&self, _l: &Lever, _disks: &[String], _c: &Candidate, _options: &str) -> String {
        String::new()
    }

    fn order(&self, _attr: Option<&str>) -> u8 {
        2
    }

    fn lasting(&self) -> Option<&'static str> {
        Some(SYSTEMD)
    }

    fn lasting_text(&self, f: &Lasting) -> String {
        systemd(f)
    }
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
/// table says; a lever of no single limit, all of them).
fn lifted(members: &[&Member], table: &[Lever]) -> Vec<GroupLimit> {
    let limit = |id: &str| table.iter().find(|l| l.id == id)?.lift();
    let mut out: Vec<GroupLimit> = Vec::new();
    for m in members {
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
fn systemd(f: &Lasting) -> String {
    let (head, limits) = (f.head, f.limits);
    let lift = lifted(&f.members, f.levers);
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
        f.gain
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

/// The groups the study ran in, in words: each group below a hierarchy's
/// root with its controllers (`/qqplant (cpu, cpuset)`), the root's
/// hierarchies as one; "not read" where the inventory has none.
fn group_words(inv: &Inventory) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in &inv.cgroups {
        let controllers = c.controllers.iter().map(String::as_str);
        match groups.iter_mut().find(|(p, _)| *p == c.path) {
            Some((_, cs)) => cs.extend(controllers),
            None => groups.push((&c.path, controllers.collect())),
        }
    }
    let named = |(p, cs): &(&str, Vec<&str>)| match cs.is_empty() {
        true => p.to_string(),
        false => format!("{p} ({})", cs.join(", ")),
    };
    let below: Vec<String> = groups.iter().filter(|g| g.0 != "/").map(named).collect();
    match (below.is_empty(), groups.is_empty()) {
        (_, true) => "not read".into(),
        (true, false) => "the root of each hierarchy".into(),
        (false, false) => below.join(", "),
    }
}

/// Where no systemd unit owns the study's group: the cgroupfs writes that
/// lift each limit of the set, in place of a drop-in.
fn cgroupfs(head: &str, inv: &Inventory, lift: &[GroupLimit]) -> String {
    let groups = group_words(inv);
    let mut s = format!(
        "{head}# The study measured from a control group of its own, without the limits of\n\
         # the group it ran in ({}). No systemd unit owns that group, so this is no\n\
         # drop-in: run these writes as root to lift the limits (they last while the\n\
         # group does; write them again where the group is made again).\n",
        groups
    );
    for g in lift.iter().filter(|g| group_limits::holds(**g, inv)) {
        for line in permanent::lines(*g, inv, None) {
            s.push_str(&format!("{line}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_groups_the_study_ran_in_are_named_with_their_controllers_the_roots_left_out() {
        let path = |p: &str, cs: &[&str]| ssdready_measured::limits::CgroupPath {
            version: ssdready_measured::limits::CgroupVersion::V1,
            controllers: cs.iter().map(|c| c.to_string()).collect(),
            path: p.into(),
            dir: None,
            hidden_above: false,
            source: "/proc/self/cgroup".into(),
        };
        let mut inv = ssdready_measured::group_limits::fixtures::v1_plant();
        inv.cgroups.clear();
        assert_eq!(group_words(&inv), "not read");
        inv.cgroups = vec![path("/", &["blkio"]), path("/", &["memory"])];
        assert_eq!(group_words(&inv), "the root of each hierarchy");
        inv.cgroups.extend([
            path("/qqplant", &["cpu"]),
            path("/", &["devices"]),
            path("/qqplant", &["cpuset"]),
            path("/job.slice", &[]),
        ]);
        assert_eq!(group_words(&inv), "/qqplant (cpu, cpuset), /job.slice");
    }

    #[test]
    fn a_group_limit_needs_root_and_a_limit_of_this_host_and_a_way_out() {
        let root = Consent {
            root: true,
            ..Default::default()
        };
        assert_eq!(CGROUP.gate(Cause::Device, &root), Ok(()));
        let r = |c: &Consent, cause| CGROUP.gate(cause, c).unwrap_err().0;
        assert_eq!(r(&Consent::default(), Cause::Device), Reason::NotRoot);
        assert_eq!(r(&root, Cause::BelowHost), Reason::BelowHost);
        let stuck = Consent {
            escape_unavailable: Some("no cgroup v2".into()),
            ..root
        };
        assert_eq!(r(&stuck, Cause::Device), Reason::Unavailable);
    }

    #[test]
    fn a_group_limit_is_lifted_by_moving_out_and_changes_no_file() {
        let l = crate::levers::shipped()
            .into_iter()
            .find(|l| l.lift().is_some())
            .unwrap();
        let c = Candidate::default();
        let lift = l.lifted(None);
        assert_eq!(CGROUP.change(&l, &c, &lift), Apply::Escape(lift));
        assert!(CGROUP.of_host() && !CGROUP.on_queue());
        assert!(CGROUP.order(None) > super::super::kind_queue::QUEUE.order(Some("nomerges")));
    }
}
