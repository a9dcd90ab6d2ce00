//! Limits shared with the other processes of the study's groups, more
//! than one cause holding at once, and a throttle's own accounting — each
//! on runs made up to show it.

use super::caps::{Caps, CpuQuota, IoCap, IoKind};
use super::tests::{curve, judge, ruled, run, setting, target, with_threads};
use super::*;
use ssdready_measured::limits::counters::{CounterDelta, CpuDelta, IoCount, IoDelta, ProcessDelta};
use ssdready_measured::limits::CgroupVersion;
use ssdready_measured::record::RunContext;
use ssdready_measured::summary::DecompSummary;

fn throttle_20k() -> Caps {
    Caps {
        io: vec![IoCap {
            kind: IoKind::ReadIops,
            value: 20_000.0,
            device: "loop3".into(),
            setting: setting("blkio.throttle.read_iops_device", "7:3 20000"),
        }],
        ..Default::default()
    }
}

fn process(pid: u32, comm: &str, shares: &[&str], read_bytes: u64, cpu_ns: u64) -> ProcessDelta {
    ProcessDelta {
        pid,
        comm: comm.into(),
        shares: shares.iter().map(|s| s.to_string()).collect(),
        read_bytes: Some(read_bytes),
        cpu_ns: Some(cpu_ns),
        policy: Some("SCHED_OTHER".into()),
        nice: Some(0),
        ..Default::default()
    }
}

/// The group's counters over 2 s: `group_reads` reads on loop3, and the
/// processes read in it.
fn group_io(group_reads: u64, processes: Vec<ProcessDelta>) -> CounterDelta {
    CounterDelta {
        seconds: 2.0,
        io: vec![IoDelta {
            version: CgroupVersion::V1,
            cgroup: "/planted".into(),
            device: "7:3".into(),
            disk: Some("loop3".into()),
            count: IoCount {
                reads: group_reads,
                read_bytes: group_reads * 4096,
                ..Default::default()
            },
        }],
        pid: Some(42),
        processes,
        ..Default::default()
    }
}

/// The run: 10.4K IOPS at QD 64 under a 20,000 read IOPS throttle,
/// the device holding 4.6 of the 64 I/Os and busy 7 % of the time, the
/// latency decomposition giving the driver and device most of each I/O.
fn beside_a_neighbour(cg: Option<CounterDelta>) -> Vec<RunRecord> {
    let mut r = run("qd-64", 64, 10_400.0, 20.0, 30.0, 4.6);
    r.summary.disk.as_mut().unwrap().util_pct = 7.0;
    r.context = cg.map(|c| RunContext {
        cgroups: Some(c),
        ..Default::default()
    });
    let mut inst = r.clone();
    inst.id = "qd-64-profiled".into();
    inst.sweep = "instrumented".into();
    inst.summary.decomposition = Some(DecompSummary {
        parts: vec![("driver and device".into(), 5e6, 80.0)],
        joined_pct: Some(99.0),
        ..Default::default()
    });
    vec![r, inst]
}

#[test]
fn a_throttle_shared_with_a_neighbour_in_the_group_names_the_group_and_the_neighbour() {
    let cg = group_io(
        40_000,
        vec![
            process(42, "ssdready", &["blkio"], 20_800 * 4096, 0),
            process(812, "fio", &["blkio"], 19_200 * 4096, 0),
        ],
    );
    let runs = beside_a_neighbour(Some(cg));
    let s = judge(&target(TargetKind::RamDevice), &runs, &throttle_20k(), true);
    assert_eq!(s.limit, Cause::IoThrottle, "{s:?}");
    assert!(
        s.part.contains("for the whole group") && s.part.contains("fio (pid 812)"),
        "{}",
        s.part
    );
    assert!(
        s.evidence.iter().any(|e| e
            .contains("the group /planted's 20.0K read IOPS: the study 10.4K, fio (pid 812) 9.6K")),
        "{:?}",
        s.evidence
    );
    // The I/Os waited above the device: in the throttle, not below the host.
    let b = ruled(&s, Cause::BelowHost);
    assert!(b.why.contains("waited above it"), "{}", b.why);
}

#[test]
fn a_throttle_nobody_shares_at_twice_the_rate_is_not_what_held_it_nor_is_the_host_below() {
    // The group's counters show only the study's own I/O: nothing changes,
    // and 10.4K of a 20K throttle is not the throttle.
    let alone = group_io(
        20_800,
        vec![process(42, "ssdready", &["blkio"], 20_800 * 4096, 0)],
    );
    for cg in [None, Some(alone)] {
        let runs = beside_a_neighbour(cg);
        let s = judge(&target(TargetKind::RamDevice), &runs, &throttle_20k(), true);
        assert_ne!(s.limit, Cause::IoThrottle, "{s:?}");
        // Four of 64 I/Os at the device, busy 7 %: positive evidence
        // against a limit below the host, whatever the decomposition says.
        assert_ne!(s.limit, Cause::BelowHost, "{s:?}");
        let t = ruled(&s, Cause::IoThrottle);
        assert!(
            t.why.contains("not what held it") && !t.why.contains("the group"),
            "{}",
            t.why
        );
    }
}

#[test]
fn a_cpu_quota_shared_with_a_neighbour_names_each_ones_cpu() {
    let caps = Caps {
        cpu_quota: Some(CpuQuota {
            cpus: 0.5,
            setting: setting("cpu.cfs_quota_us", "50000"),
        }),
        ..Default::default()
    };
    let mut r = run("qd-8", 8, 30_000.0, 24.0, 60.0, 0.5);
    let mut cg = group_io(0, Vec::new());
    cg.io.clear();
    cg.cpu = vec![CpuDelta {
        version: CgroupVersion::V1,
        cgroup: "/planted".into(),
        quota_cpus: Some(0.5),
        seconds: 2.0,
        used_ns: Some(1_000_000_000),
        periods: Some(20),
        throttled_periods: Some(19),
        throttled_ns: Some(1_500_000_000),
    }];
    cg.processes = vec![
        process(42, "ssdready", &["cpu", "cpuacct"], 0, 480_000_000),
        process(99, "yes", &["cpu", "cpuacct"], 0, 520_000_000),
    ];
    r.context = Some(RunContext {
        cgroups: Some(cg),
        ..Default::default()
    });
    let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
    assert_eq!(s.limit, Cause::CpuQuota, "{s:?}");
    assert!(
        s.part.contains("shared with the other processes"),
        "{}",
        s.part
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e
                .contains("the group /planted used 0.50 CPUs: the study 0.24, yes (pid 99) 0.26")),
        "{:?}",
        s.evidence
    );
}

#[test]
fn two_causes_with_measured_costs_are_ranked_by_cost_and_both_said() {
    use crate::figures::sweeps::{RawPoint, SchedulerCost};
    // A file on a device under bfq: bfq costs 30 % against none, the file
    // system 45 % against the raw device, both measured in turns; the
    // device held 12 of the 32 I/Os (bfq kept the others).
    let mut t = target(TargetKind::File);
    t.scheduler = Some("bfq".into());
    let r = run("qd-32", 32, 50_000.0, 30.0, 40.0, 12.0);
    let mut f = super::tests::figures(&r, true);
    f.comparisons.schedulers = vec![SchedulerCost {
        scheduler: "bfq".into(),
        qd: 32,
        cost_pct: Some(30.0),
        cost_err_pct: Some(3.0),
        ..Default::default()
    }];
    f.comparisons.raw_vs_file = vec![RawPoint {
        fs_cost_pct: Some(45.0),
        fs_cost_err_pct: Some(4.0),
        ..Default::default()
    }];
    let s = classify(&t, &[r], &f, &super::tests::machine(), &Caps::default());
    assert_eq!(s.limit, Cause::FileSystem, "{s:?}");
    let also: Vec<(Cause, Option<f64>)> =
        s.also_held.iter().map(|a| (a.cause, a.cost_pct)).collect();
    assert_eq!(also[0], (Cause::Scheduler, Some(30.0)), "{also:?}");
    assert!(
        s.also_held[0].words().contains("costing 30 %"),
        "{}",
        s.also_held[0].words()
    );
    assert!(s.repeats_agree);
    // Without the file system's cost measured, the scheduler (weighed
    // first) is the answer and the file system is said after it.
    f.comparisons.raw_vs_file.clear();
    let mut r2 = run("qd-32", 32, 50_000.0, 30.0, 40.0, 12.0);
    r2.summary.disk.as_mut().unwrap().ios = 200_000;
    let s = classify(
        &t,
        &[r2.clone()],
        &f,
        &super::tests::machine(),
        &Caps::default(),
    );
    assert_eq!(s.limit, Cause::Scheduler, "{s:?}");
    assert_eq!(s.also_held[0].cause, Cause::FileSystem, "{s:?}");
    // Where the device held 30 of the 32 and was busy throughout while
    // the host idled, bfq passed the I/Os on as fast as it took them: its
    // cost was paid where the device still took more, not at this point.
    let d = r2.summary.disk.as_mut().unwrap();
    (d.in_flight, d.util_pct) = (Some(30.0), 100.0);
    let s = classify(&t, &[r2], &f, &super::tests::machine(), &Caps::default());
    assert_eq!(s.limit, Cause::FileSystem, "{s:?}");
    assert!(
        ruled(&s, Cause::Scheduler).why.contains("passed them on"),
        "{s:?}"
    );
}

#[test]
fn a_cpuset_is_weighed_where_the_curve_flattened_after_a_shallow_peak() {
    // A cpuset of CPU 0: the peak stood out at QD 4 (68.9K, CPU 0 53 %
    // busy, the loop device's worker on CPU 1), and at QD 32 the rate was
    // 49.4K with CPU 0 full of the study's own work.
    let caps = super::tests::cpuset_of_cpu0();
    let mut peak = run("qd-4", 4, 68_900.0, 40.0, 53.0, 2.3);
    peak.summary.cpu.as_mut().unwrap().per_cpu_busy_pct = vec![(0, 53.0), (1, 60.0)];
    let deep = |iops: f64| {
        let mut r = with_threads(run("qd-32", 32, iops, 80.0, 97.0, 10.0), 0.3, 0.0, 20.0);
        let c = r.summary.cpu.as_mut().unwrap();
        c.per_cpu_busy_pct = vec![(0, 97.0), (1, 70.0)];
        c.process_ns_per_io = 0.8 * 1e9 / iops;
        r
    };
    let judge_with = |deep_iops: f64| {
        let mut f = super::tests::figures(&peak, true);
        f.qd_curve = curve(&[(4, 68_900.0), (32, deep_iops)]);
        let runs = [peak.clone(), deep(deep_iops)];
        classify(
            &target(TargetKind::RamDevice),
            &runs,
            &f,
            &super::tests::machine(),
            &caps,
        )
    };
    let s = judge_with(49_400.0);
    assert_eq!(s.limit, Cause::CpusAllowed, "{s:?}");
    assert!(
        s.evidence[0].starts_with("at QD 32, where the rate (49.4K IOPS) stayed within 30 % of the peak's (68.9K at QD 4)"),
        "{:?}",
        s.evidence
    );
    // Deeper, the rate fell far below the peak: something else held it
    // there, and the peak's half-idle CPU rules the cpuset out.
    let s = judge_with(30_000.0);
    assert_ne!(s.limit, Cause::CpusAllowed, "{s:?}");
    assert!(
        ruled(&s, Cause::CpusAllowed).why.contains("53 % busy"),
        "{s:?}"
    );
}

#[test]
fn a_run_above_its_throttle_by_one_slices_allowance_says_so() {
    let caps = Caps {
        io: vec![IoCap {
            kind: IoKind::WriteIops,
            value: 8_000.0,
            device: "loop0".into(),
            setting: setting("blkio.throttle.write_iops_device", "7:0 8000"),
        }],
        ..Default::default()
    };
    // A second write phase right after the first: 8,800 IOPS in 1 s,
    // 800 writes more than the rate, one 100 ms slice's worth.
    let slice = |iops: f64, window_s: f64| {
        let mut r = run("qd-4", 4, iops, 8.0, 10.0, 0.1);
        (r.workload.rw, r.summary.window_s) = ("randwrite".into(), window_s);
        let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
        assert_eq!(s.limit, Cause::IoThrottle, "{}", s.part);
        s.evidence.into_iter().find(|e| e.contains("slices allows"))
    };
    let said = slice(8_800.0, 1.0).expect("one slice's allowance said");
    assert!(said.starts_with("800 I/Os more than its 8000 IOPS allow over the 1.0 s run: no more than one of the throttle's 100 ms slices allows (800 I/Os)"), "{said}");
    // 8,160 IOPS over 5 s: the same 800 writes.
    assert!(slice(8_160.0, 5.0).is_some());
    // 8,800 IOPS over 5 s is 4,000 writes more: not one slice's.
    assert_eq!(slice(8_800.0, 5.0), None);
    // At the rate, nothing to say.
    assert_eq!(slice(8_000.0, 1.0), None);
}
