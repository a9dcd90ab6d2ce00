//! One limit of the study's groups lifted on its own, the others kept:
//! [`Escape::enter_lifting`](crate::escape::Escape::enter_lifting) with a
//! [`Lift`] from `ssdready_measured::group_limits::lift`.
//!
//! On cgroup v1 each controller is a hierarchy of its own, so a limit is
//! lifted alone by leaving only its hierarchy (`blkio` for the throttle,
//! `cpu` for the quota, `cpuset` for the cpuset): the process stays in
//! the user's groups of the others, whose limits go on holding it.
//!
//! On cgroup v2 one hierarchy holds every limit: the group of ssdready's
//! own at the v2 root is given the limits kept ([`keep`]: `io.max`,
//! `cpu.max`, `cpuset.cpus`, `io.latency`, `io.weight`, as the user's
//! groups have them in effect) before the process enters it. The v2
//! root's `cgroup.subtree_control` is never changed: a controller that
//! the user's groups use is enabled there already (their limit files
//! exist only below a root that enables it), and a limit file the new
//! group lacks refuses the trial with the reason instead. The files go
//! with the group when it is removed: nothing of the user's is written.

use crate::escape_error::EscapeError;
use crate::journal::TrialGroup;
pub use ssdready_measured::group_limits::Lift;

/// Give a group of ssdready's own the limits it keeps, each file written
/// with its text in order; refused, saying which, where the group has no
/// such file (its controller is not enabled at the v2 root) or the kernel
/// refuses the value.
pub fn keep(g: &TrialGroup) -> Result<(), EscapeError> {
    for (file, value) in &g.keep {
        let path = g.dir.join(file);
        let fail = |why: String| EscapeError::Keep {
            dir: g.dir.display().to_string(),
            file: file.clone(),
            value: value.clone(),
            why,
        };
        if !path.exists() {
            let controller = file.split('.').next().unwrap_or(file);
            return Err(fail(format!(
                "the v2 root does not enable the {controller} controller for its groups \
                 (ssdready never changes cgroup.subtree_control): the limit cannot be kept"
            )));
        }
        std::fs::write(&path, value).map_err(|e| fail(e.to_string()))?;
    }
    Ok(())
}

/// Whether entering `g` lifts the cpuset: a v1 cpuset hierarchy, or the
/// v2 group when the lift leaves its cpuset (it keeps no `cpuset.cpus`).
pub(crate) fn lifts_cpus(g: &TrialGroup, lift: &Lift) -> bool {
    match g.hierarchy.as_str() {
        "unified" => {
            lift.v2.iter().any(|c| c == "cpuset") && !g.keep.iter().any(|k| k.0 == "cpuset.cpus")
        }
        h => h.split(',').any(|c| c == "cpuset"),
    }
}

/// Every thread of this process allowed every CPU of the group of its
/// own that lifts the cpuset. Moving into a cpuset sets a thread's
/// affinity to it, but since Linux 6.2 only within the mask the thread
/// last asked for itself (`sched_setaffinity`): once the affinity was put
/// back after an earlier trial's run, a move alone left the threads on
/// the CPUs of the user's cpuset, and the lift lifted nothing. Threads
/// that refuse (io_uring's workers) or ended are left as they are.
pub(crate) fn widen_affinity(g: &TrialGroup) {
    let file = match g.hierarchy.as_str() {
        "unified" => "cpuset.cpus.effective",
        _ => "cpuset.cpus",
    };
    let Some(cpus) = std::fs::read_to_string(g.dir.join(file))
        .ok()
        .and_then(|t| ssdready_measured::limits::parse::cpu_list(&t).ok())
    else {
        return;
    };
    let mut set = nix::sched::CpuSet::new();
    for c in cpus {
        let _ = set.set(c as usize);
    }
    let tids = std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten();
    for tid in tids.filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()) {
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(tid), &set);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::plan_lifting;
    use ssdready_measured::group_limits::{lift, GroupLimit};
    use std::path::Path;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate
31 25 0:27 / /sys/fs/cgroup/blkio rw,nosuid shared:10 - cgroup cgroup rw,blkio
32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:11 - cgroup cgroup rw,cpu,cpuacct
33 25 0:29 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset
";
    const V2_ONLY: &str = "30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n";

    fn none(_: &Path) -> Option<String> {
        None
    }

    fn hierarchies(g: &[TrialGroup]) -> Vec<&str> {
        g.iter().map(|g| g.hierarchy.as_str()).collect()
    }

    #[test]
    fn on_cgroup_v1_only_the_lifted_limits_hierarchy_is_left() {
        let cg = "5:cpuset:/plant1\n4:cpu,cpuacct:/plant\n3:blkio:/plant\n0::/\n";
        let only = |l| plan_lifting(cg, MOUNTINFO, 7, &none, &lift(l, None));
        assert_eq!(hierarchies(&only(GroupLimit::IoThrottle)), ["blkio"]);
        assert_eq!(hierarchies(&only(GroupLimit::CpuQuota)), ["cpu,cpuacct"]);
        assert_eq!(hierarchies(&only(GroupLimit::Cpuset)), ["cpuset"]);
        // v2-only limits have no v1 hierarchy to leave.
        assert!(only(GroupLimit::IoLatency).is_empty());
        let all = plan_lifting(cg, MOUNTINFO, 7, &none, &Lift::all());
        assert_eq!(hierarchies(&all), ["cpuset", "cpu,cpuacct", "blkio"]);
        assert!(all.iter().all(|g| g.keep.is_empty()));
    }

    #[test]
    fn on_cgroup_v2_the_group_of_its_own_carries_the_limits_kept() {
        let cg = "0::/system.slice/app.service\n";
        let read = |p: &Path| {
            (p == Path::new("/sys/fs/cgroup/system.slice/app.service/cgroup.controllers"))
                .then(|| "cpuset cpu io memory pids".to_string())
        };
        let l = Lift {
            keep: vec![("cpu.max".into(), "20000 100000".into())],
            ..lift(GroupLimit::IoThrottle, None)
        };
        let g = plan_lifting(cg, V2_ONLY, 7, &read, &l);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].dir, Path::new("/sys/fs/cgroup/ssdready-trial-7"));
        assert_eq!(g[0].keep, l.keep);
        // A group without the lifted limit's controller is not left.
        let read_cpu = |_: &Path| Some("cpu memory".to_string());
        assert!(plan_lifting(cg, V2_ONLY, 7, &read_cpu, &l).is_empty());
    }

    #[test]
    fn only_a_move_that_lifts_the_cpuset_widens_the_threads_cpus() {
        let g = |h: &str, keep: Vec<(String, String)>| TrialGroup {
            hierarchy: h.into(),
            dir: "/x".into(),
            back: "/".into(),
            keep,
        };
        let cpuset = lift(GroupLimit::Cpuset, None);
        let quota = lift(GroupLimit::CpuQuota, None);
        assert!(lifts_cpus(&g("cpuset", vec![]), &cpuset));
        assert!(lifts_cpus(&g("unified", vec![]), &cpuset));
        assert!(!lifts_cpus(&g("cpu,cpuacct", vec![]), &quota));
        let kept = vec![("cpuset.cpus".to_string(), "0".to_string())];
        assert!(!lifts_cpus(&g("unified", kept), &quota));
        assert!(lifts_cpus(&g("unified", vec![]), &Lift::all()));
    }

    #[test]
    fn a_limit_the_new_group_cannot_hold_refuses_the_trial_saying_why() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("ssdready-trial-1");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("cpu.max"), "max 100000").unwrap();
        let mut g = TrialGroup {
            hierarchy: "unified".into(),
            dir: dir.clone(),
            back: t.path().into(),
            keep: vec![("cpu.max".into(), "20000 100000".into())],
        };
        keep(&g).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("cpu.max")).unwrap(),
            "20000 100000"
        );
        g.keep.push(("io.max".into(), "7:0 riops=3000".into()));
        let e = keep(&g).unwrap_err().to_string();
        assert!(e.contains("does not enable the io controller"), "{e}");
    }
}
