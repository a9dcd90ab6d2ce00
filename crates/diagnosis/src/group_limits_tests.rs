//! Each limit of the study's groups lifted on its own: which hold, which
//! hierarchies a trial leaves, what a v2 group of ssdready's own keeps.
//! The inventories here are shared with the binding and permanent-line
//! tests.

use super::*;
use ssdready_measured::limits::{
    CgroupPath, CpuQuota, CpuSet, IoCost, IoCostLine, IoLatency, IoLimitKind, IoThrottle, IoWeight,
    UsableCpus,
};

fn empty(online: Vec<u32>) -> Inventory {
    Inventory {
        pid: 42,
        cgroups: vec![],
        io_throttles: vec![],
        io_latency: vec![],
        io_cost: IoCost::default(),
        cpu_quotas: vec![],
        cpuset: None,
        affinity: None,
        memory_limits: vec![],
        cpus: UsableCpus::new(online, None, None, None),
        devices: vec![],
        hypervisor: None,
        unread: vec![],
    }
}

/// A shell moved into `/plant` of the v1 `blkio` and `cpu,cpuacct`
/// hierarchies: a read-IOPS throttle of 3000 on loop3 (7:3) and a quota
/// of 20 % of a CPU, on a machine of two CPUs.
pub(crate) fn v1_plant() -> Inventory {
    let mut inv = empty(vec![0, 1]);
    inv.cgroups = vec![
        CgroupPath {
            version: CgroupVersion::V1,
            controllers: vec!["blkio".into()],
            path: "/plant".into(),
            dir: Some("/sys/fs/cgroup/blkio/plant".into()),
            hidden_above: false,
            source: String::new(),
        },
        CgroupPath {
            version: CgroupVersion::V1,
            controllers: vec!["cpu".into(), "cpuacct".into()],
            path: "/plant".into(),
            dir: Some("/sys/fs/cgroup/cpu,cpuacct/plant".into()),
            hidden_above: false,
            source: String::new(),
        },
    ];
    inv.io_throttles = vec![IoThrottle {
        version: CgroupVersion::V1,
        cgroup: "/plant".into(),
        device: "7:3".into(),
        disk: Some("loop3".into()),
        kind: IoLimitKind::ReadIops,
        value: 3000,
        applies: true,
        source: "/sys/fs/cgroup/blkio/plant/blkio.throttle.read_iops_device".into(),
    }];
    let d = "/sys/fs/cgroup/cpu,cpuacct/plant";
    inv.cpu_quotas = vec![CpuQuota {
        version: CgroupVersion::V1,
        cgroup: "/plant".into(),
        quota_us: 20_000,
        period_us: 100_000,
        burst_us: None,
        cpus: 0.2,
        source: format!("{d}/cpu.cfs_quota_us, {d}/cpu.cfs_period_us"),
    }];
    inv
}

/// A v1 cpuset of one CPU of two (`/plant1`), nothing else.
pub(crate) fn v1_cpuset() -> Inventory {
    let mut inv = empty(vec![0, 1]);
    inv.cpuset = Some(CpuSet {
        version: CgroupVersion::V1,
        cgroup: "/plant1".into(),
        cpus: vec![0],
        source: "/sys/fs/cgroup/cpuset/plant1/cpuset.effective_cpus".into(),
    });
    inv
}

/// A systemd service on cgroup v2: `io.max` riops=8000 on nvme0n1 set on
/// the service, a quota of half a CPU on its slice, a cpuset of one CPU
/// of four, an io.latency target and an io.weight under io.cost.
pub(crate) fn v2_service() -> Inventory {
    let mut inv = empty(vec![0, 1, 2, 3]);
    let app = "/sys/fs/cgroup/system.slice/app.service";
    inv.cgroups = vec![CgroupPath {
        version: CgroupVersion::V2,
        controllers: vec!["io".into(), "cpu".into(), "cpuset".into()],
        path: "/system.slice/app.service".into(),
        dir: Some(app.into()),
        hidden_above: false,
        source: String::new(),
    }];
    let throttle = |kind, value| IoThrottle {
        version: CgroupVersion::V2,
        cgroup: "/system.slice/app.service".into(),
        device: "259:0".into(),
        disk: Some("nvme0n1".into()),
        kind,
        value,
        applies: true,
        source: format!("{app}/io.max"),
    };
    inv.io_throttles = vec![
        throttle(IoLimitKind::ReadIops, 8000),
        throttle(IoLimitKind::ReadBps, 200 << 20),
    ];
    inv.cpu_quotas = vec![CpuQuota {
        version: CgroupVersion::V2,
        cgroup: "/system.slice".into(),
        quota_us: 50_000,
        period_us: 100_000,
        burst_us: None,
        cpus: 0.5,
        source: "/sys/fs/cgroup/system.slice/cpu.max".into(),
    }];
    inv.cpuset = Some(CpuSet {
        version: CgroupVersion::V2,
        cgroup: "/system.slice/app.service".into(),
        cpus: vec![2],
        source: format!("{app}/cpuset.cpus.effective"),
    });
    inv.io_latency = vec![IoLatency {
        version: CgroupVersion::V2,
        cgroup: "/system.slice/app.service".into(),
        device: "259:0".into(),
        disk: Some("nvme0n1".into()),
        target_us: 500,
        source: format!("{app}/io.latency"),
    }];
    inv.io_cost.qos = vec![IoCostLine {
        device: "259:0".into(),
        disk: Some("nvme0n1".into()),
        enabled: true,
        fields: vec![],
        source: "/sys/fs/cgroup/io.cost.qos".into(),
    }];
    inv.io_cost.weights = vec![IoWeight {
        version: CgroupVersion::V2,
        cgroup: "/system.slice/app.service".into(),
        kind: WeightKind::IoCost,
        device: None,
        disk: None,
        weight: 50,
        source: format!("{app}/io.weight"),
    }];
    inv
}

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

#[test]
fn the_tables_words_name_each_limit() {
    for g in GroupLimit::ALL {
        assert_eq!(GroupLimit::of(g.word()), Some(g));
    }
    assert_eq!(GroupLimit::of("outside"), None);
}
