//! Inventories of planted control groups, for tests: the limits of the
//! study's groups lifted on their own here, and the diagnosis's binding,
//! permanent-line and trial tests (its dev-dependency turns on the
//! `fixtures` feature).

use crate::limits::{
    CgroupPath, CgroupVersion, CpuQuota, CpuSet, Inventory, IoCost, IoCostLine, IoLatency,
    IoLimitKind, IoThrottle, IoWeight, UsableCpus, WeightKind,
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
pub fn v1_plant() -> Inventory {
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
pub fn v1_cpuset() -> Inventory {
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
pub fn v2_service() -> Inventory {
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
