use super::counters::{CpuCounters, IoCount, IoCounters, Pressure, Resource};
use super::*;

fn throttle(
    v: CgroupVersion,
    cgroup: &str,
    kind: IoLimitKind,
    value: u64,
    applies: bool,
) -> IoThrottle {
    IoThrottle {
        version: v,
        cgroup: cgroup.into(),
        device: "7:0".into(),
        disk: Some("loop0".into()),
        kind,
        value,
        applies,
        source: format!("/sys/fs/cgroup{cgroup}/io.max"),
    }
}

fn quota(cgroup: &str, q: u64, p: u64) -> CpuQuota {
    CpuQuota {
        version: CgroupVersion::V2,
        cgroup: cgroup.into(),
        quota_us: q,
        period_us: p,
        burst_us: None,
        cpus: q as f64 / p as f64,
        source: format!("/sys/fs/cgroup{cgroup}/cpu.max"),
    }
}

fn inventory() -> Inventory {
    Inventory {
        pid: 42,
        cgroups: vec![CgroupPath {
            version: CgroupVersion::V2,
            controllers: vec!["io".into(), "cpu".into()],
            path: "/a/b".into(),
            dir: Some("/sys/fs/cgroup/a/b".into()),
            hidden_above: false,
            source: "/proc/42/cgroup, /proc/self/mountinfo".into(),
        }],
        io_throttles: vec![
            throttle(CgroupVersion::V2, "/a/b", IoLimitKind::ReadIops, 9000, true),
            throttle(CgroupVersion::V2, "/a", IoLimitKind::ReadIops, 5000, true),
            throttle(
                CgroupVersion::V2,
                "/a",
                IoLimitKind::ReadBps,
                50 << 20,
                true,
            ),
        ],
        io_latency: vec![],
        io_cost: IoCost::default(),
        cpu_quotas: vec![quota("/a/b", 50_000, 100_000), quota("/a", 20_000, 100_000)],
        cpuset: None,
        affinity: None,
        memory_limits: vec![],
        cpus: UsableCpus::new(vec![0, 1], None, None, Some(0.2)),
        devices: vec![],
        hypervisor: None,
        unread: vec![],
    }
}

#[test]
fn the_effective_throttle_is_the_smallest_that_holds_the_process() {
    let mut inv = inventory();
    let eff = inv.effective_io_throttles();
    assert_eq!(eff.len(), 2);
    assert_eq!(
        (eff[0].kind, eff[0].value, eff[0].cgroup.as_str()),
        (IoLimitKind::ReadIops, 5000, "/a")
    );
    assert_eq!(eff[1].kind, IoLimitKind::ReadBps);
    // A v1 parent's throttle does not hold the child: the child's own does.
    inv.io_throttles = vec![
        throttle(CgroupVersion::V1, "/p/c", IoLimitKind::ReadIops, 9000, true),
        throttle(CgroupVersion::V1, "/p", IoLimitKind::ReadIops, 100, false),
    ];
    let eff = inv.effective_io_throttles();
    assert_eq!(eff.len(), 1);
    assert_eq!(eff[0].value, 9000);
    inv.io_throttles.remove(0);
    assert!(inv.effective_io_throttles().is_empty());
}

#[test]
fn the_cpu_quota_is_the_smallest_on_the_path() {
    let inv = inventory();
    let q = inv.cpu_quota().unwrap();
    assert_eq!(q.cgroup, "/a");
    assert!((q.cpus - 0.2).abs() < 1e-12);
}

#[test]
fn the_usable_cpus_name_what_holds_them() {
    let u = UsableCpus::new(vec![0, 1], Some(vec![0, 1]), Some(vec![0, 1]), None);
    assert_eq!((u.usable, u.held_by), (2.0, CpuAllowance::Online));
    // A cpuset of one CPU: the affinity inside it is the cpuset's doing.
    let u = UsableCpus::new(vec![0, 1], Some(vec![1]), Some(vec![1]), None);
    assert_eq!(
        (u.usable, u.held_by, u.set.clone()),
        (1.0, CpuAllowance::Cpuset, vec![1])
    );
    let u = UsableCpus::new(
        vec![0, 1, 2, 3],
        Some(vec![0, 1, 2, 3]),
        Some(vec![2]),
        Some(3.0),
    );
    assert_eq!((u.usable, u.held_by), (1.0, CpuAllowance::Affinity));
    let u = UsableCpus::new(vec![0, 1], Some(vec![1]), None, Some(0.2));
    assert_eq!((u.usable, u.held_by), (0.2, CpuAllowance::Quota));
    // A quota above the CPUs it may run on does not hold it.
    let u = UsableCpus::new(vec![0, 1], None, None, Some(4.0));
    assert_eq!((u.usable, u.held_by), (2.0, CpuAllowance::Online));
    // A cpuset naming CPUs that are offline counts only the online ones.
    let u = UsableCpus::new(vec![0, 1], Some(vec![1, 5]), None, None);
    assert_eq!((u.usable, u.set), (1.0, vec![1]));
}

#[test]
fn the_smallest_memory_limit_bounds_the_cache() {
    let mut inv = inventory();
    let m = |cgroup: &str, kind, bytes| MemLimit {
        version: CgroupVersion::V2,
        cgroup: cgroup.into(),
        kind,
        bytes,
        source: String::new(),
    };
    inv.memory_limits = vec![
        m("/a/b", MemLimitKind::Max, 8 << 30),
        m("/a", MemLimitKind::High, 1 << 30),
    ];
    assert_eq!(inv.memory_limit().unwrap().cgroup, "/a");
    let text = text::lines(&inv);
    let mem: Vec<&text::Line> = text.iter().filter(|l| l.topic == "memory").collect();
    assert_eq!(mem.len(), 2);
    assert!(
        mem[1].text.contains("the smallest") && !mem[0].text.contains("smallest"),
        "{mem:?}"
    );
}

#[test]
fn the_inventory_survives_json() {
    let inv = inventory();
    let json = serde_json::to_string(&inv).unwrap();
    assert!(
        json.contains("\"kind\":\"read_iops\"") && json.contains("\"version\":\"v2\""),
        "{json}"
    );
    let back: Inventory = serde_json::from_str(&json).unwrap();
    assert_eq!(back, inv);
}

#[test]
fn every_limit_has_a_line_with_its_source() {
    let inv = inventory();
    let lines = text::lines(&inv);
    let thr: Vec<&text::Line> = lines.iter().filter(|l| l.topic == "I/O throttle").collect();
    assert_eq!(thr.len(), 3);
    assert!(
        thr[1]
            .text
            .contains("loop0 (7:0): 5000 read IOPS, set on /a (cgroup v2); holds this process"),
        "{thr:?}"
    );
    assert_eq!(thr[1].source, "/sys/fs/cgroup/a/io.max");
    assert!(thr[2].text.contains("50.00 MiB/s"), "{thr:?}");
    let usable = lines.iter().find(|l| l.topic == "usable CPUs").unwrap();
    assert!(
        usable.text.starts_with("0.20 of 2 online") && usable.text.contains("CPU quota"),
        "{usable:?}"
    );
    assert_eq!(lines.iter().filter(|l| l.topic == "CPU quota").count(), 2);
}

fn cpu_counters(at: u64, usage: u64, periods: u64, thr: u64, thr_ns: u64) -> CgroupCounters {
    CgroupCounters {
        pid: 42,
        at_ns: at,
        cpu: vec![CpuCounters {
            version: CgroupVersion::V1,
            cgroup: "/q".into(),
            quota_cpus: Some(0.2),
            usage_ns: Some(usage),
            nr_periods: Some(periods),
            nr_throttled: Some(thr),
            throttled_ns: Some(thr_ns),
            source: String::new(),
        }],
        io: vec![IoCounters {
            version: CgroupVersion::V1,
            cgroup: "/q".into(),
            device: "7:0".into(),
            disk: Some("loop0".into()),
            count: IoCount {
                reads: usage / 1000,
                ..Default::default()
            },
            source: String::new(),
        }],
        pressure: vec![Pressure {
            version: CgroupVersion::V2,
            cgroup: "/".into(),
            resource: Resource::Io,
            some_us: thr_ns / 1000,
            full_us: None,
            source: String::new(),
        }],
        unread: vec![],
        processes: vec![],
    }
}

#[test]
fn a_runs_counters_give_the_throttled_share_and_the_quota_used() {
    // 5 s: 50 periods, 45 throttled for 3.9 s in all, 1 CPU-second used.
    let a = cpu_counters(1_000_000_000, 10_000_000_000, 100, 10, 1_000_000_000);
    let b = cpu_counters(6_000_000_000, 11_000_000_000, 150, 55, 4_900_000_000);
    let d = a.delta(&b);
    assert!((d.seconds - 5.0).abs() < 1e-9);
    let c = d.quota_level().unwrap();
    assert!((c.throttled_share().unwrap() - 0.9).abs() < 1e-9);
    assert!((c.throttled_per_second().unwrap() - 0.78).abs() < 1e-9);
    assert!((c.used_cpus().unwrap() - 0.2).abs() < 1e-9);
    assert!((c.quota_used().unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(d.io[0].count.reads, 1_000_000);
    assert!((d.pressure[0].some_share().unwrap() - 0.78).abs() < 1e-9);
}

#[test]
fn counters_that_went_backwards_are_left_out() {
    // The group was made anew between the readings.
    let a = cpu_counters(1_000_000_000, 10_000_000_000, 100, 10, 1_000_000_000);
    let b = cpu_counters(2_000_000_000, 5_000_000, 3, 0, 0);
    let d = a.delta(&b);
    let c = &d.cpu[0];
    assert_eq!((c.used_ns, c.periods, c.throttled_ns), (None, None, None));
    assert!(c.throttled_share().is_none() && c.quota_used().is_none());
    assert!(d.io.is_empty() && d.pressure.is_empty());
    // No periods: no share (rather than a division by zero).
    let a = cpu_counters(0, 0, 5, 0, 0);
    assert!(a.delta(&a.clone()).cpu[0].throttled_share().is_none());
}

#[test]
fn an_inventory_without_limits_says_none_of_each_and_lists_the_hierarchies_read() {
    let mut inv = inventory();
    inv.io_throttles.clear();
    inv.cpu_quotas.clear();
    let v1 = |c: &str| CgroupPath {
        version: CgroupVersion::V1,
        controllers: vec![c.into()],
        path: "/".into(),
        dir: Some(format!("/sys/fs/cgroup/{c}")),
        hidden_above: false,
        source: String::new(),
    };
    inv.cgroups
        .extend([v1("freezer"), v1("blkio"), v1("name=systemd")]);
    let lines = text::lines(&inv);
    let text = |topic: &str| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.topic == topic)
            .map(|l| l.text.clone())
            .collect()
    };
    assert_eq!(text("I/O throttle"), ["none set on any device"]);
    assert_eq!(text("CPU quota"), ["none set"]);
    assert_eq!(text("memory"), ["no limit set"]);
    let groups = text("cgroup");
    assert_eq!(groups.len(), 2, "{groups:?}");
    assert!(
        groups[0].starts_with("v2 io,cpu: /a/b") && groups[1].starts_with("v1 blkio: /"),
        "{groups:?}"
    );
}
