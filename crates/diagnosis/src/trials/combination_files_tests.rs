//! The configuration's files: the rules with the scheduler first, one line
//! per device; the job as the configuration ran; the drop-in for the unit
//! whose group held the I/O; each headed by the gain measured together.

use super::*;
use crate::levers::{Kind, Metric, Point};
use crate::trials::combination::{judge_set, Set};
use crate::trials::{Measured, Turn};
use ssdready_measured::limits::{CgroupVersion, IoLimitKind, IoThrottle};

fn turns(ratio: f64) -> Vec<Turn> {
    let run = |iops: f64| Measured {
        iops,
        bw_bytes_per_s: iops * 4096.0,
        lat_mean_ns: 32e9 / iops,
        lat_p99_ns: 64e9 / iops,
        cpu_ns_per_io: None,
        directions: None,
    };
    (0..3)
        .map(|i| Turn {
            baseline: run(100_000.0),
            change: run(100_000.0 * ratio * (1.0 + 0.004 * f64::from(i))),
        })
        .collect()
}

fn queue(lever: &str, attr: &str, value: &str, devices: &[&str]) -> Member {
    Member {
        lever: lever.into(),
        kind: Kind::Queue,
        change: format!("{lever} x → {value}"),
        attr: Some(attr.into()),
        devices: devices.iter().map(|d| d.to_string()).collect(),
        value: value.into(),
        ..Default::default()
    }
}

fn app(lever: &str, change: &str) -> Member {
    Member {
        lever: lever.into(),
        kind: Kind::Application,
        change: change.into(),
        ..Default::default()
    }
}

/// Lever `lever` lifting the `limit` of the study's groups.
fn cgroup(lever: &str, limit: &str) -> Member {
    Member {
        lever: lever.into(),
        kind: Kind::Cgroup,
        change: format!("{lever} in the study's group → without the {limit}"),
        ..Default::default()
    }
}

const CHANGED: &[&str] = &[
    "--quiet",
    "--name=m",
    "--filename=/dev/loop7",
    "--rw=randread",
    "--bs=4k",
    "--iodepth=32",
    "--numjobs=1",
    "--size=1073741824",
    "--runtime=1000ms",
    "--time_based",
    "--ioengine=io_uring",
    "--direct=1",
    "--registerfiles=1",
];

/// A configuration of `changes` kept together at +60 %, applied in
/// `order`.
fn configuration(changes: Vec<Member>, order: &[&str]) -> Combination {
    let mut kept = Set {
        levers: order.iter().map(|l| l.to_string()).collect(),
        turns: turns(1.6),
        baseline_options: vec!["--quiet".into(), "--name=m".into()],
        change_options: CHANGED.iter().map(|o| o.to_string()).collect(),
        ..Default::default()
    };
    judge_set(&mut kept, Metric::Iops);
    Combination {
        at: "4 KiB random reads at QD 32 × 1 thread".into(),
        point: Point::default(),
        measure: Metric::Iops,
        changes,
        sets: vec![kept.clone()],
        kept,
        ..Default::default()
    }
}

#[test]
fn the_rules_set_the_scheduler_first_one_line_per_device_under_the_gain() {
    // nr-requests helped most alone, but the scheduler's switch would
    // reset it: its line comes first in the file whatever the order.
    let c = configuration(
        vec![
            queue("nr-requests", "nr_requests", "64", &["sda", "sdb"]),
            queue("scheduler", "scheduler", "none", &["sda", "sdb"]),
        ],
        &["nr-requests", "scheduler"],
    );
    assert_eq!(names(&c), [UDEV, FIO]);
    let f = files(&c, "2026-11-26", None);
    let rules = &f[0].text;
    let head = rules.lines().next().unwrap();
    assert!(
        head.starts_with("# ssdready study 2026-11-26: nr-requests x → 64 + scheduler x → none, measured together: IOPS +60."),
        "{head}"
    );
    assert!(
        head.ends_with("over 3 turns at 4 KiB random reads at QD 32 × 1 thread"),
        "{head}"
    );
    assert!(rules.contains("udevadm control --reload && udevadm trigger"));
    assert!(rules.contains("# The scheduler comes first: switching it resets nr_requests.\n"));
    let lines: Vec<&str> = rules.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            r#"ACTION=="add|change", KERNEL=="sda", ATTR{queue/scheduler}="none""#,
            r#"ACTION=="add|change", KERNEL=="sdb", ATTR{queue/scheduler}="none""#,
            r#"ACTION=="add|change", KERNEL=="sda", ATTR{queue/nr_requests}="64""#,
            r#"ACTION=="add|change", KERNEL=="sdb", ATTR{queue/nr_requests}="64""#,
        ]
    );
}

#[test]
fn the_job_is_the_configurations_run_with_the_applications_choices() {
    let c = configuration(
        vec![
            app("registered", "registered x → y"),
            queue("scheduler", "scheduler", "none", &["loop7"]),
        ],
        &["scheduler", "registered"],
    );
    assert_eq!(names(&c), [UDEV, FIO]);
    let job = &files(&c, "2026-11-26", None)[1];
    assert_eq!(job.name, "job.fio");
    assert!(job.text.starts_with("# ssdready study 2026-11-26: scheduler x → none + registered x → y, measured together: IOPS +60."));
    assert!(job
        .text
        .contains("the application's own choices in it (registered x → y)"));
    assert!(job
        .text
        .contains("# The baseline it was measured against: ssdready run --quiet --name=m\n"));
    let body: Vec<&str> = job.text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(body[0], "[global]");
    assert!(body.contains(&"ioengine=io_uring") && body.contains(&"registerfiles=1"));
    assert!(body.contains(&"time_based"));
    assert!(!body.iter().any(|l| l.contains("quiet")));
    let at = body.iter().position(|l| *l == "[m]").unwrap();
    assert_eq!(body[at + 1], "filename=/dev/loop7");
    assert!(body[..at].iter().all(|l| !l.starts_with("filename=")));
}

/// A read throttle and a CPU quota set on `db.service`, the study's
/// group.
fn held_by_db() -> Inventory {
    Inventory {
        io_throttles: vec![IoThrottle {
            version: CgroupVersion::V2,
            cgroup: "/system.slice/db.service".into(),
            device: "7:7".into(),
            disk: Some("loop7".into()),
            kind: IoLimitKind::ReadIops,
            value: 2000,
            applies: true,
            source: "io.max".into(),
        }],
        pid: 1,
        cgroups: Vec::new(),
        io_latency: Vec::new(),
        io_cost: Default::default(),
        // A quota the trial kept: not the set's to lift.
        cpu_quotas: vec![ssdready_measured::limits::CpuQuota {
            version: CgroupVersion::V2,
            cgroup: "/system.slice/db.service".into(),
            quota_us: 50_000,
            period_us: 100_000,
            burst_us: None,
            cpus: 0.5,
            source: "/sys/fs/cgroup/system.slice/db.service/cpu.max".into(),
        }],
        cpuset: None,
        affinity: None,
        memory_limits: Vec::new(),
        cpus: ssdready_measured::limits::UsableCpus::new(vec![0, 1], None, None, None),
        devices: Vec::new(),
        hypervisor: None,
        unread: Vec::new(),
    }
}

#[test]
fn the_drop_in_lifts_the_limits_read_for_the_unit_that_set_them() {
    let c = configuration(
        vec![cgroup("io-throttle", "I/O throttle")],
        &["io-throttle"],
    );
    assert_eq!(names(&c), [SYSTEMD, FIO]);
    let inv = held_by_db();
    let text = &files(&c, "2026-11-26", Some(&inv))[0].text;
    assert!(text.starts_with("# ssdready study 2026-11-26: io-throttle"));
    assert!(text.contains("systemctl edit db.service"), "{text}");
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(body, ["[Service]", "IOReadIOPSMax="]);
    assert!(text.contains("# read IOPS 2000 on /dev/loop7, set on /system.slice/db.service"));
    // Without the inventory: what to fill in, said.
    let text = &files(&c, "2026-11-26", None)[0].text;
    assert!(text.contains("# Fill in: UNIT"), "{text}");
    assert!(text.contains("IOReadIOPSMax=\n") && text.contains("CPUQuota=\n"));
}

#[test]
fn each_kinds_file_makes_its_own_changes_last_alone() {
    let c = configuration(
        vec![
            queue("scheduler", "scheduler", "none", &["loop7"]),
            cgroup("io-throttle", "I/O throttle"),
            app("registered", "registered x → y"),
        ],
        &["scheduler", "io-throttle", "registered"],
    );
    assert_eq!(names(&c), [UDEV, SYSTEMD, FIO]);
    let f = files(&c, "2026-11-26", Some(&held_by_db()));
    let body = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        body(&f[0].text),
        [r#"ACTION=="add|change", KERNEL=="loop7", ATTR{queue/scheduler}="none""#]
    );
    // The scheduler lifts no limit of the study's groups: the quota kept
    // is not the drop-in's to lift.
    assert_eq!(body(&f[1].text), ["[Service]", "IOReadIOPSMax="]);
}

#[test]
fn a_configuration_without_a_measured_gain_gets_no_file() {
    let mut c = configuration(
        vec![queue("scheduler", "scheduler", "none", &["sda"])],
        &["scheduler"],
    );
    c.kept.gains.clear();
    assert!(names(&c).is_empty());
    assert!(files(&c, "2026-11-26", None).is_empty());
}

#[test]
fn the_date_is_the_days_since_the_epoch_in_the_calendar() {
    assert_eq!(date_of(0), "1970-01-01");
    assert_eq!(date_of(1_764_115_200_000 + 3_600_000), "2025-11-26");
}

#[test]
fn the_unit_that_owns_a_group_is_its_deepest_units_component() {
    let unit = |p: &str| owning_unit(p).map(|(u, s)| format!("{u} [{s}]"));
    assert_eq!(
        unit("/system.slice/db.service").as_deref(),
        Some("db.service [Service]")
    );
    assert_eq!(
        unit("/user.slice/user-0.slice/session-3.scope/plant").as_deref(),
        Some("session-3.scope [Scope]")
    );
    assert_eq!(
        unit("/machine.slice/").as_deref(),
        Some("machine.slice [Slice]")
    );
    assert_eq!(unit("/plant"), None);
    assert_eq!(unit("/"), None);
}

#[test]
fn the_drop_in_names_the_unit_of_the_studys_group_or_carries_the_cgroupfs_writes() {
    use ssdready_measured::limits::{CgroupPath, CpuQuota, UsableCpus};
    let c = configuration(vec![cgroup("cpu-quota", "CPU quota")], &["cpu-quota"]);
    let group = |path: &str| CgroupPath {
        version: CgroupVersion::V2,
        controllers: vec!["cpu".into()],
        path: path.into(),
        dir: Some(format!("/sys/fs/cgroup{path}")),
        hidden_above: false,
        source: String::new(),
    };
    let inv = |path: &str| Inventory {
        pid: 1,
        cgroups: vec![group(path)],
        io_throttles: Vec::new(),
        io_latency: Vec::new(),
        io_cost: Default::default(),
        cpu_quotas: vec![CpuQuota {
            version: CgroupVersion::V2,
            cgroup: path.into(),
            quota_us: 60_000,
            period_us: 100_000,
            burst_us: None,
            cpus: 0.6,
            source: format!("/sys/fs/cgroup{path}/cpu.max"),
        }],
        cpuset: None,
        affinity: None,
        memory_limits: Vec::new(),
        cpus: UsableCpus::new(vec![0, 1], None, None, Some(0.6)),
        devices: Vec::new(),
        hypervisor: None,
        unread: Vec::new(),
    };
    // A session's scope owns the group the study ran in.
    let scoped = inv("/user.slice/user-0.slice/session-3.scope");
    let text = &files(&c, "2026-11-26", Some(&scoped))[0].text;
    assert!(text.contains("systemctl edit session-3.scope"), "{text}");
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(body, ["[Scope]", "CPUQuota="]);
    // No unit owns /plant: the writes, no unit to fill in.
    let text = &files(&c, "2026-11-26", Some(&inv("/plant")))[0].text;
    assert!(
        !text.contains("Fill in") && !text.contains("UNIT"),
        "{text}"
    );
    assert!(!text.contains("[Service]"), "{text}");
    assert!(text.contains("No systemd unit owns that group"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("echo \"max\" > /sys/fs/cgroup/plant/cpu.max")),
        "{text}"
    );
}
