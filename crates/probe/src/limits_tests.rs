//! The live readers on fake trees: a v1 host like the project's machines,
//! a v2 host like systemd's, a container, nested groups, broken files.

use super::*;
use crate::fake_tree::Fake;
use ssdready_measured::limits::counters::Resource;
use ssdready_measured::limits::CpuAllowance;

impl Fake {
    /// A whole disk `name` (`maj:min`) with a queue, and its partitions.
    fn disk(&self, class: &str, name: &str, devno: &str, parts: &[(&str, &str)]) -> &Fake {
        let dir = format!("/sys/devices/{class}/block/{name}");
        self.file(&format!("{dir}/dev"), &format!("{devno}\n"))
            .file(&format!("{dir}/queue/scheduler"), "[none] mq-deadline\n")
            .file(&format!("{dir}/queue/nr_requests"), "256\n")
            .file(&format!("{dir}/queue/max_sectors_kb"), "1280\n")
            .file(&format!("{dir}/queue/rq_affinity"), "1\n")
            .file(&format!("{dir}/queue/wbt_lat_usec"), "0\n")
            .file(&format!("{dir}/mq/0/cpu_list"), "0\n")
            .link(
                &format!("/sys/block/{name}"),
                &format!("../devices/{class}/block/{name}"),
            )
            .link(
                &format!("/sys/dev/block/{devno}"),
                &format!("../../devices/{class}/block/{name}"),
            )
            .link(
                &format!("/sys/class/block/{name}"),
                &format!("../../devices/{class}/block/{name}"),
            );
        for (p, pdev) in parts {
            self.file(&format!("{dir}/{p}/dev"), &format!("{pdev}\n"))
                .file(&format!("{dir}/{p}/partition"), "1\n")
                .link(
                    &format!("/sys/dev/block/{pdev}"),
                    &format!("../../devices/{class}/block/{name}/{p}"),
                )
                .link(
                    &format!("/sys/class/block/{p}"),
                    &format!("../../devices/{class}/block/{name}/{p}"),
                );
        }
        self
    }
    fn cpus(&self, online: &str, allowed: &str) -> &Fake {
        self.file("/sys/devices/system/cpu/online", &format!("{online}\n"))
            .file(
                "/proc/42/status",
                &format!("Name:\tstudy\nCpus_allowed_list:\t{allowed}\n"),
            )
    }
}

const V1_MOUNTS: &str = "\
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

/// A v1 host like the project's machines: the process in `/job` of the
/// blkio, cpu and cpuset hierarchies, a loop device 7:0.
fn v1_host() -> Fake {
    let f = Fake::new();
    f.file(
        "/proc/42/cgroup",
        "7:blkio:/job\n4:memory:/\n3:cpuset:/job\n2:cpuacct:/\n1:cpu:/job\n0::/\n",
    )
    .file("/proc/self/mountinfo", V1_MOUNTS)
    .link("/proc/self/ns/cgroup", INITIAL_CGROUP_NS)
    .file(
        "/sys/fs/cgroup/blkio/job/blkio.throttle.read_iops_device",
        "7:0 5000\n",
    )
    .file(
        "/sys/fs/cgroup/blkio/job/blkio.throttle.write_bps_device",
        "",
    )
    .file("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device", "")
    .file("/sys/fs/cgroup/cpu/job/cpu.cfs_quota_us", "20000\n")
    .file("/sys/fs/cgroup/cpu/job/cpu.cfs_period_us", "100000\n")
    .file("/sys/fs/cgroup/cpu/job/cpu.cfs_burst_us", "0\n")
    .file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n")
    .file("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n")
    .file("/sys/fs/cgroup/cpuset/job/cpuset.effective_cpus", "1\n")
    .file(
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        "9223372036854771712\n",
    )
    .disk("virtual", "loop0", "7:0", &[])
    .cpus("0-1", "1");
    f
}

#[test]
fn a_v1_hosts_throttle_quota_and_cpuset_are_found_with_their_sources() {
    let f = v1_host();
    let inv = inventory_at(f.root(), 42, &[(7, 0)]);
    assert!(inv.unread.is_empty(), "{:?}", inv.unread);
    assert_eq!(inv.cgroups.len(), 6);
    let blkio = inv.cgroup_with("blkio").unwrap();
    assert_eq!(blkio.dir.as_deref(), Some("/sys/fs/cgroup/blkio/job"));
    assert!(!blkio.hidden_above);
    let t = &inv.io_throttles;
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(
        (t[0].kind, t[0].value, t[0].applies),
        (IoLimitKind::ReadIops, 5000, true)
    );
    assert_eq!(
        (t[0].cgroup.as_str(), t[0].disk.as_deref()),
        ("/job", Some("loop0"))
    );
    assert_eq!(
        t[0].source,
        "/sys/fs/cgroup/blkio/job/blkio.throttle.read_iops_device"
    );
    let q = inv.cpu_quota().unwrap();
    assert_eq!(
        (q.quota_us, q.period_us, q.burst_us, q.cgroup.as_str()),
        (20_000, 100_000, None, "/job")
    );
    assert_eq!(inv.cpuset.as_ref().unwrap().cpus, [1]);
    assert_eq!(inv.affinity.as_ref().unwrap().cpus, [1]);
    assert!(inv.memory_limits.is_empty());
    assert_eq!(inv.cpus.online, [0, 1]);
    assert_eq!(
        (inv.cpus.usable, inv.cpus.held_by),
        (0.2, CpuAllowance::Quota)
    );
    let d = &inv.devices[0];
    assert_eq!(
        (d.device.as_str(), d.disk.as_str(), d.transport.as_str()),
        ("7:0", "loop0", "loop")
    );
    assert_eq!(
        (d.queue.hw_queues, d.queue.nr_requests),
        (Some(1), Some(256))
    );
    assert_eq!(d.queue.scheduler.as_deref(), Some("none"));
    assert!(!d.virtual_disk && d.unseen.is_none());
}

#[test]
fn a_v1_parents_throttle_is_listed_but_does_not_hold_the_child() {
    let f = v1_host();
    f.file("/proc/42/cgroup", "7:blkio:/job/child\n0::/\n")
        .file(
            "/sys/fs/cgroup/blkio/job/child/blkio.throttle.read_iops_device",
            "",
        );
    let inv = inventory_at(f.root(), 42, &[(7, 0)]);
    assert_eq!(inv.io_throttles.len(), 1);
    assert_eq!(inv.io_throttles[0].cgroup, "/job");
    assert!(!inv.io_throttles[0].applies);
    assert!(inv.effective_io_throttles().is_empty());
}

#[test]
fn throttles_on_other_devices_are_left_out_when_a_target_is_named() {
    let f = v1_host();
    f.file(
        "/sys/fs/cgroup/blkio/job/blkio.throttle.read_bps_device",
        "8:0 1048576\n",
    )
    .disk(
        "pci0000:00/0000:00:05.0/virtio1",
        "vda",
        "253:0",
        &[("vda1", "253:1")],
    );
    let inv = inventory_at(f.root(), 42, &[(7, 0)]);
    assert_eq!(inv.io_throttles.len(), 1);
    let all = inventory_at(f.root(), 42, &[]);
    assert_eq!(all.io_throttles.len(), 2);
    assert!(all.devices.is_empty());
    // A device sysfs does not know still narrows the listing, and is said.
    let gone = inventory_at(f.root(), 42, &[(9, 9)]);
    assert!(gone.io_throttles.is_empty() && gone.devices.is_empty());
    assert_eq!(gone.unread.len(), 1, "{:?}", gone.unread);
    assert!(gone.unread[0].why.starts_with("device 9:9 is not in sysfs"));
    // A partition's number finds its whole disk: a virtio disk, whose
    // backend's limits this host cannot see.
    let inv = inventory_at(f.root(), 42, &[(253, 1)]);
    let d = &inv.devices[0];
    assert_eq!(
        (d.device.as_str(), d.disk.as_str(), d.virtual_disk),
        ("253:0", "vda", true)
    );
    assert!(d
        .unseen
        .as_deref()
        .unwrap()
        .contains("not visible from this host"));
}

/// A systemd host: cgroup v2 only, the process in a service.
fn v2_host() -> Fake {
    let f = Fake::new();
    let cg = "/sys/fs/cgroup";
    f.file("/proc/42/cgroup", "0::/system.slice/db.service\n")
        .file("/proc/self/mountinfo", "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
        .link("/proc/self/ns/cgroup", INITIAL_CGROUP_NS)
        .file(&format!("{cg}/cgroup.controllers"), "cpuset cpu io memory pids\n")
        .file(&format!("{cg}/cpuset.cpus.effective"), "0-3\n")
        .file(&format!("{cg}/io.cost.qos"), "8:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=0.00 wlat=0 min=50.00 max=100.00\n")
        .file(&format!("{cg}/io.cost.model"), "8:0 ctrl=auto model=linear rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6\n")
        .file(&format!("{cg}/system.slice/io.max"), "8:0 rbps=max wbps=max riops=1000 wiops=max\n")
        .file(&format!("{cg}/system.slice/cpu.max"), "max 100000\n")
        .file(&format!("{cg}/system.slice/memory.max"), "1073741824\n")
        .file(&format!("{cg}/system.slice/memory.high"), "max\n")
        .file(&format!("{cg}/system.slice/io.weight"), "default 100\n")
        .file(&format!("{cg}/system.slice/db.service/cgroup.controllers"), "cpu io memory pids\n")
        .file(&format!("{cg}/system.slice/db.service/io.max"), "8:0 rbps=max wbps=max riops=3000 wiops=max\n")
        .file(&format!("{cg}/system.slice/db.service/io.latency"), "8:0 target=2000\n")
        .file(&format!("{cg}/system.slice/db.service/io.weight"), "default 100\n8:0 300\n")
        .file(&format!("{cg}/system.slice/db.service/cpu.max"), "150000 100000\n")
        .file(&format!("{cg}/system.slice/db.service/cpu.max.burst"), "20000\n")
        .file(&format!("{cg}/system.slice/db.service/memory.max"), "max\n")
        .disk("pci0000:00/0000:00:04.0/host0/target0:0:0/0:0:0:0", "sda", "8:0", &[("sda2", "8:2")])
        .file("/sys/devices/pci0000:00/0000:00:04.0/host0/target0:0:0/0:0:0:0/block/sda/device/vendor", "Google  \n")
        .file("/sys/devices/pci0000:00/0000:00:04.0/host0/target0:0:0/0:0:0:0/block/sda/device/model", "PersistentDisk  \n")
        .file("/sys/devices/pci0000:00/0000:00:04.0/host0/target0:0:0/0:0:0:0/block/sda/device/queue_depth", "32\n")
        .cpus("0-3", "0-3");
    f
}

#[test]
fn a_v2_hosts_limits_hold_from_every_level() {
    let f = v2_host();
    let inv = inventory_at(f.root(), 42, &[(8, 2)]);
    assert!(inv.unread.is_empty(), "{:?}", inv.unread);
    let g = &inv.cgroups[0];
    assert_eq!(
        (g.version, g.path.as_str()),
        (CgroupVersion::V2, "/system.slice/db.service")
    );
    assert_eq!(g.controllers, ["cpu", "io", "memory", "pids"]);
    // Both levels' throttles hold; the parent's is the smaller.
    assert_eq!(inv.io_throttles.len(), 2);
    assert!(inv.io_throttles.iter().all(|t| t.applies));
    let eff = inv.effective_io_throttles();
    assert_eq!(
        (eff.len(), eff[0].value, eff[0].cgroup.as_str()),
        (1, 1000, "/system.slice")
    );
    assert_eq!(eff[0].source, "/sys/fs/cgroup/system.slice/io.max");
    assert_eq!(inv.io_latency[0].target_us, 2000);
    assert_eq!(inv.io_cost.qos.len(), 1);
    assert!(inv.io_cost.qos[0].enabled);
    assert_eq!(
        inv.io_cost.model[0].fields[1],
        ("model".into(), "linear".into())
    );
    // Only the weight that differs from the default.
    assert_eq!(inv.io_cost.weights.len(), 1);
    assert_eq!(
        (
            inv.io_cost.weights[0].weight,
            inv.io_cost.weights[0].device.as_deref()
        ),
        (300, Some("8:0"))
    );
    let q = inv.cpu_quota().unwrap();
    assert_eq!((q.cpus, q.burst_us), (1.5, Some(20_000)));
    assert_eq!(inv.cpuset.as_ref().unwrap().cgroup, "/");
    assert_eq!(inv.memory_limit().unwrap().bytes, 1 << 30);
    assert_eq!(
        (inv.cpus.usable, inv.cpus.held_by),
        (1.5, CpuAllowance::Quota)
    );
    let d = &inv.devices[0];
    assert_eq!(
        (
            d.transport.as_str(),
            d.model.as_deref(),
            d.queue.queue_depth
        ),
        ("scsi", Some("PersistentDisk"), Some(32))
    );
    assert!(d
        .unseen
        .as_deref()
        .unwrap()
        .starts_with("a Google persistent disk"));
}

#[test]
fn a_container_in_its_own_namespace_says_the_levels_above_are_hidden() {
    let f = Fake::new();
    f.file("/proc/42/cgroup", "0::/\n")
        .file(
            "/proc/self/mountinfo",
            "700 690 0:30 / /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
        )
        .link("/proc/self/ns/cgroup", "cgroup:[4026532601]")
        .file("/sys/fs/cgroup/cgroup.controllers", "\n")
        .cpus("0-7", "0-7");
    let inv = inventory_at(f.root(), 42, &[]);
    assert!(inv.cgroups[0].hidden_above);
    assert_eq!(inv.cgroups[0].dir.as_deref(), Some("/sys/fs/cgroup"));
    // No controller in the group: each kind of limit says it cannot be read.
    let why: Vec<&str> = inv.unread.iter().map(|u| u.why.as_str()).collect();
    assert_eq!(why.len(), 4, "{why:?}");
    assert!(
        why[0].starts_with("I/O throttles") && why[0].contains("'io' controller"),
        "{why:?}"
    );
    assert_eq!(
        (inv.cpus.usable, inv.cpus.held_by),
        (8.0, CpuAllowance::Online)
    );
    // A subtree mounted at its root (no namespace) hides the levels above too.
    f.file("/proc/42/cgroup", "0::/docker/abc\n").file(
        "/proc/self/mountinfo",
        "700 690 0:30 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
    );
    std::fs::remove_file(f.at("/proc/self/ns/cgroup")).unwrap();
    let inv = inventory_at(f.root(), 42, &[]);
    assert!(inv.cgroups[0].hidden_above);
}

#[test]
fn broken_files_and_a_gone_process_are_said_not_understood() {
    let f = v1_host();
    f.file(
        "/sys/fs/cgroup/blkio/job/blkio.throttle.read_iops_device",
        "7:0 5000\nnonsense\n",
    )
    .file("/sys/fs/cgroup/cpu/job/cpu.cfs_quota_us", "lots\n");
    let inv = inventory_at(f.root(), 42, &[(7, 0)]);
    assert_eq!(inv.io_throttles.len(), 1);
    assert_eq!(inv.unread.len(), 2, "{:?}", inv.unread);
    assert!(inv.unread[0].why.contains("'nonsense'"));
    assert!(inv.unread[1].source.ends_with("cpu.cfs_quota_us"));
    let gone = inventory_at(f.root(), 43, &[]);
    assert!(gone.cgroups.is_empty());
    assert!(
        gone.unread[0].source == "/proc/43/cgroup",
        "{:?}",
        gone.unread
    );
}

#[test]
fn counters_of_a_v1_group_over_a_run() {
    let f = v1_host();
    let stat = |p, t, ns| {
        format!(
            "nr_periods {p}\nnr_throttled {t}\nthrottled_time {ns}\nnr_bursts 0\nburst_time 0\n"
        )
    };
    // cpuacct mirrors the cpu hierarchy's group.
    f.file("/sys/fs/cgroup/cpu/job/cpu.stat", &stat(10, 2, 100_000_000))
        .file("/sys/fs/cgroup/cpu/cpu.stat", &stat(0, 0, 0))
        .file("/sys/fs/cgroup/cpuacct/job/cpuacct.usage", "1000000000\n")
        .file("/sys/fs/cgroup/blkio/job/blkio.throttle.io_serviced", "7:0 Read 100\n7:0 Write 4\n8:0 Read 9\nTotal 113\n")
        .file("/sys/fs/cgroup/blkio/job/blkio.throttle.io_service_bytes", "7:0 Read 409600\n7:0 Write 16384\nTotal 425984\n")
        .file("/sys/fs/cgroup/unified/cpu.stat", "usage_usec 5\n")
        .file("/sys/fs/cgroup/unified/io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=50\n");
    let a = counters_at(f.root(), 42, &[(7, 0)], 1_000_000_000);
    assert!(a.unread.is_empty(), "{:?}", a.unread);
    f.file("/sys/fs/cgroup/cpu/job/cpu.stat", &stat(60, 47, 2_100_000_000))
        .file("/sys/fs/cgroup/cpuacct/job/cpuacct.usage", "2000000000\n")
        .file("/sys/fs/cgroup/blkio/job/blkio.throttle.io_serviced", "7:0 Read 25100\n7:0 Write 4\nTotal 25104\n")
        .file("/sys/fs/cgroup/blkio/job/blkio.throttle.io_service_bytes", "7:0 Read 102809600\n7:0 Write 16384\nTotal 1\n")
        .file("/sys/fs/cgroup/unified/io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=2500100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=50\n");
    let b = counters_at(f.root(), 42, &[(7, 0)], 6_000_000_000);
    let d = a.delta(&b);
    let q = d.quota_level().unwrap();
    assert_eq!((q.cgroup.as_str(), q.quota_cpus), ("/job", Some(0.2)));
    assert!((q.throttled_share().unwrap() - 0.9).abs() < 1e-9);
    assert!((q.throttled_per_second().unwrap() - 0.4).abs() < 1e-9);
    assert!((q.quota_used().unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(d.io.len(), 1);
    assert_eq!(
        (d.io[0].count.reads, d.io[0].count.read_bytes),
        (25_000, 102_400_000)
    );
    let p = &d.pressure[0];
    assert!((p.some_share().unwrap() - 0.5).abs() < 1e-9);
}

#[test]
fn counters_of_a_v2_group_with_a_quota_above_it() {
    let f = v2_host();
    let cg = "/sys/fs/cgroup/system.slice";
    f.file(
        &format!("{cg}/db.service/cpu.stat"),
        "usage_usec 300\nnr_periods 4\nnr_throttled 1\nthrottled_usec 7\n",
    )
    .file(&format!("{cg}/cpu.max"), "50000 100000\n")
    .file(
        &format!("{cg}/cpu.stat"),
        "usage_usec 900\nnr_periods 8\nnr_throttled 3\nthrottled_usec 11\n",
    )
    .file(
        &format!("{cg}/db.service/io.stat"),
        "8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n",
    )
    .file(
        &format!("{cg}/db.service/cpu.pressure"),
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n",
    );
    let c = counters_at(f.root(), 42, &[(8, 2)], 0);
    assert!(c.unread.is_empty(), "{:?}", c.unread);
    let levels: Vec<(&str, Option<f64>, Option<u64>)> = c
        .cpu
        .iter()
        .map(|x| (x.cgroup.as_str(), x.quota_cpus, x.throttled_ns))
        .collect();
    assert_eq!(
        levels,
        [
            ("/system.slice/db.service", Some(1.5), Some(7000)),
            ("/system.slice", Some(0.5), Some(11_000))
        ]
    );
    assert_eq!(c.cpu[0].usage_ns, Some(300_000));
    assert_eq!(
        (c.io[0].disk.as_deref(), c.io[0].count.read_bytes),
        (Some("sda"), 4096)
    );
    assert_eq!(
        (c.pressure[0].resource, c.pressure[0].some_us),
        (Resource::Cpu, 9)
    );
}

/// A `/proc/PID/stat` line of `comm` with `ticks` of user and of system
/// time, nice `nice` and policy `policy`.
fn proc_stat(pid: u32, comm: &str, ticks: u64, nice: i64, policy: u32) -> String {
    let mut f: Vec<String> = vec!["S".into(); 50];
    f[11] = ticks.to_string();
    f[12] = ticks.to_string();
    f[16] = nice.to_string();
    f[38] = policy.to_string();
    format!("{pid} ({comm}) {}\n", f.join(" "))
}

#[test]
fn the_processes_sharing_the_studys_groups_are_read_with_their_io_and_cpu() {
    let f = v1_host();
    let put = |f: &Fake, ticks: u64, fio_bytes: u64, own_bytes: u64| {
        f.file("/sys/fs/cgroup/blkio/job/cgroup.procs", "42\n77\n")
            .file("/sys/fs/cgroup/cpu/job/cgroup.procs", "42\n77\n88\n")
            .file("/sys/fs/cgroup/cpuset/job/cgroup.procs", "42\n")
            .file("/proc/42/stat", &proc_stat(42, "ssdready", ticks, 0, 0))
            .file(
                "/proc/42/io",
                &format!("rchar: 1\nread_bytes: {own_bytes}\nwrite_bytes: 0\n"),
            )
            .file("/proc/77/stat", &proc_stat(77, "fio", ticks, 0, 0))
            .file(
                "/proc/77/io",
                &format!("read_bytes: {fio_bytes}\nwrite_bytes: 4096\n"),
            )
            .file("/proc/88/stat", &proc_stat(88, "yes", 3 * ticks, 19, 5));
    };
    put(&f, 10, 1 << 20, 2 << 20);
    let a = counters_at(f.root(), 42, &[(7, 0)], 0);
    put(&f, 60, 41 << 20, 42 << 20);
    let b = counters_at(f.root(), 42, &[(7, 0)], 2_000_000_000);
    let d = a.delta(&b);
    let own = d.own().unwrap();
    assert_eq!(
        (own.comm.as_str(), own.read_bytes),
        ("ssdready", Some(40 << 20))
    );
    let io = d.others("blkio", |p| p.read_bytes);
    assert_eq!(io.len(), 1, "{io:?}");
    assert_eq!(
        (io[0].0.label().as_str(), io[0].1),
        ("fio (pid 77)", 40 << 20)
    );
    // yes shares only the cpu group, and has no /proc/88/io to read.
    let cpu = d.others("cpu", |p| p.cpu_ns);
    let names: Vec<String> = cpu.iter().map(|(p, _)| p.label()).collect();
    assert_eq!(names, ["yes (pid 88, SCHED_IDLE, nice 19)", "fio (pid 77)"]);
    // 150 ticks of each kind over the run at 100 a second: 3 s of CPU.
    let hz = counters_impl::user_hz();
    assert_eq!(cpu[0].1, 300 * (1_000_000_000 / hz));
    assert!(d
        .others("cpu", |p| p.read_bytes)
        .iter()
        .all(|(p, _)| p.pid == 77));
}

#[test]
fn a_study_alone_in_the_root_groups_reads_no_processes() {
    let f = Fake::new();
    f.file("/proc/42/cgroup", "7:blkio:/\n1:cpu:/\n0::/\n")
        .file("/proc/self/mountinfo", V1_MOUNTS)
        .link("/proc/self/ns/cgroup", INITIAL_CGROUP_NS)
        .file("/sys/fs/cgroup/blkio/cgroup.procs", "1\n42\n77\n")
        .file("/proc/77/stat", &proc_stat(77, "fio", 1, 0, 0));
    let c = counters_at(f.root(), 42, &[], 0);
    assert!(c.processes.is_empty(), "{:?}", c.processes);
}

#[test]
fn a_queue_change_is_set_on_the_targets_disk_and_the_physical_disks_of_its_stack() {
    let f = Fake::new();
    f.disk("virtual", "dm-0", "253:0", &[])
        .disk("virtual", "md0", "9:0", &[])
        .disk("pci0000:00/0000:00:04.0/virtio2", "vdb", "254:16", &[])
        .disk(
            "pci0000:00/0000:00:05.0/virtio3",
            "vdc",
            "254:32",
            &[("vdc1", "254:33")],
        )
        .disk("virtual", "loop0", "7:0", &[])
        .file("/sys/block/dm-0/slaves/md0/.keep", "")
        .file("/sys/block/md0/slaves/vdb/.keep", "")
        .file("/sys/block/md0/slaves/vdc1/.keep", "")
        .file("/sys/block/loop0/loop/backing_file", "/dev/shm/img\n");
    let s = f.sys();
    // dm on md on a disk and a partition: each whole disk once.
    assert_eq!(
        crate::limits_dev::stack_disks(s, (253, 0)),
        ["dm-0", "md0", "vdb", "vdc"]
    );
    // A partition's whole disk; a loop device alone (its backing file's
    // disk is not its stack's).
    assert_eq!(crate::limits_dev::stack_disks(s, (254, 33)), ["vdc"]);
    assert_eq!(crate::limits_dev::stack_disks(s, (7, 0)), ["loop0"]);
    assert!(crate::limits_dev::stack_disks(s, (8, 0)).is_empty());
}
