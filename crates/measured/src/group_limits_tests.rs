//! Each limit of the study's groups lifted on its own: which hold, which
//! hierarchies a trial leaves, what a v2 group of ssdready's own keeps.

use super::fixtures::{v1_cpuset, v1_plant, v2_service};
use super::*;

#[test]
fn the_limits_that_hold_are_read_from_the_inventory() {
    assert_eq!(
        held(&v1_plant()),
        [GroupLimit::IoThrottle, GroupLimit::CpuQuota]
    );
    assert_eq!(held(&v1_cpuset()), [GroupLimit::Cpuset]);
    assert_eq!(held(&v2_service()), GroupLimit::ALL);
    // A cpuset of every CPU online holds nothing; an io.weight counts only
    // under the io.cost controller.
    let mut inv = v1_cpuset();
    inv.cpuset.as_mut().unwrap().cpus = vec![0, 1];
    assert!(held(&inv).is_empty());
    let mut inv = v2_service();
    inv.io_cost.qos.clear();
    assert!(!holds(GroupLimit::IoWeight, &inv));
}

#[test]
fn on_cgroup_v1_one_limit_is_lifted_by_leaving_its_hierarchy_alone() {
    let inv = v1_plant();
    let t = lift(GroupLimit::IoThrottle, Some(&inv));
    assert_eq!(t.v1, ["blkio"]);
    assert_eq!(t.kept, ["the CPU quota"]);
    // Nothing is written on v1: the quota holds where the process stays.
    assert!(t.keep.is_empty(), "{:?}", t.keep);
    let q = lift(GroupLimit::CpuQuota, Some(&inv));
    assert_eq!(q.v1, ["cpu"]);
    assert_eq!(q.kept, ["the I/O throttle"]);
    assert_eq!(lift(GroupLimit::Cpuset, Some(&inv)).v1, ["cpuset"]);
    // Every limit at once leaves every hierarchy that can hold a run.
    assert_eq!(Lift::all().v1, ["blkio", "cpu", "cpuacct", "cpuset"]);
}

#[test]
fn on_cgroup_v2_the_group_of_its_own_is_given_every_limit_but_the_one_lifted() {
    let inv = v2_service();
    let keep = |g| lift(g, Some(&inv)).keep;
    let files = |g| -> Vec<String> { keep(g).into_iter().map(|k| k.0).collect() };
    assert_eq!(
        keep(GroupLimit::IoThrottle),
        [
            ("cpu.max".to_string(), "50000 100000".to_string()),
            ("cpuset.cpus".into(), "2".into()),
            ("io.latency".into(), "259:0 target=500".into()),
            ("io.weight".into(), "default 50".into()),
        ]
    );
    assert_eq!(
        keep(GroupLimit::CpuQuota)[0],
        (
            "io.max".to_string(),
            "259:0 riops=8000 rbps=209715200".to_string()
        )
    );
    assert_eq!(
        files(GroupLimit::CpuQuota),
        ["io.max", "cpuset.cpus", "io.latency", "io.weight"]
    );
    assert_eq!(
        files(GroupLimit::Cpuset),
        ["io.max", "cpu.max", "io.latency", "io.weight"]
    );
    assert_eq!(
        files(GroupLimit::IoLatency),
        ["io.max", "cpu.max", "cpuset.cpus", "io.weight"]
    );
    assert_eq!(
        files(GroupLimit::IoWeight),
        ["io.max", "cpu.max", "cpuset.cpus", "io.latency"]
    );
    assert_eq!(lift(GroupLimit::IoWeight, Some(&inv)).v2, ["io"]);
    assert_eq!(lift(GroupLimit::Cpuset, Some(&inv)).v2, ["cpuset"]);
    // Without an inventory nothing is known to keep.
    assert!(lift(GroupLimit::IoThrottle, None).keep.is_empty());
}

#[test]
fn two_limits_lifted_together_leave_both_and_keep_only_what_both_keep() {
    let inv = v2_service();
    let both =
        lift(GroupLimit::IoThrottle, Some(&inv)).with(&lift(GroupLimit::CpuQuota, Some(&inv)));
    let files: Vec<&str> = both.keep.iter().map(|k| k.0.as_str()).collect();
    assert_eq!(files, ["cpuset.cpus", "io.latency", "io.weight"]);
    assert_eq!(both.v2, ["io", "cpu"]);
    assert!(
        !both.kept.contains(&"the I/O throttle".to_string()),
        "{:?}",
        both.kept
    );
    assert!(
        !both.kept.contains(&"the CPU quota".to_string()),
        "{:?}",
        both.kept
    );
    let inv = v1_plant();
    let both =
        lift(GroupLimit::CpuQuota, Some(&inv)).with(&lift(GroupLimit::IoThrottle, Some(&inv)));
    assert_eq!(both.v1, ["cpu", "blkio"]);
    assert!(both.kept.is_empty(), "{:?}", both.kept);
}
