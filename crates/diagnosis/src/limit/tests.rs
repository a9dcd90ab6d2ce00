//! The candidates against runs made up to show one cause each.

use super::caps::{Caps, CpuQuota, CpusAllowed, IoCap, IoKind, QueueCap, Setting};
use super::*;
use crate::figures::Figures;
use ssdready_measured::curve::CurvePoint;
use ssdready_measured::limits::counters::{CounterDelta, CpuDelta};
use ssdready_measured::limits::CgroupVersion;
use ssdready_measured::record::{RunContext, Workload};
use ssdready_measured::summary::{CpuSummary, DiskSummary, PointSummary};

pub(super) fn target(kind: TargetKind) -> TargetProfile {
    TargetProfile {
        spec: "/dev/loop3".into(),
        kind,
        transport: "loop".into(),
        device: Some("loop3".into()),
        ..Default::default()
    }
}

/// A run at QD `qd` of 4 KiB random reads: its rate, its thread's and the
/// CPUs' busy share, and the device's requests held on average.
pub(super) fn run(
    id: &str,
    qd: u32,
    iops: f64,
    thread: f64,
    cpus: f64,
    at_device: f64,
) -> RunRecord {
    RunRecord {
        id: id.into(),
        point: format!("qd-{qd}"),
        sweep: "qd".into(),
        repeat: 1,
        workload: Workload {
            rw: "randread".into(),
            bs: 4096,
            qd,
            threads: 1,
            direct: true,
            targets: vec!["/dev/loop3".into()],
            ..Default::default()
        },
        summary: PointSummary {
            iops,
            bw_bytes_per_s: iops * 4096.0,
            lat_mean_ns: qd as f64 / iops * 1e9,
            window_s: 1.0,
            cpu: Some(CpuSummary {
                thread_busy_max_pct: Some(thread),
                system_busy_pct: cpus,
                per_cpu_busy_pct: vec![(0, cpus), (1, cpus)],
                process_ns_per_io: thread / 100.0 * 1e9 / iops,
                ..Default::default()
            }),
            disk: Some(DiskSummary {
                name: "loop3".into(),
                util_pct: (at_device * 100.0).min(100.0),
                in_flight: Some(at_device),
                ios: iops as u64,
                app_ios: iops as u64,
                bytes: iops as u64 * 4096,
                app_bytes: iops as u64 * 4096,
                ..Default::default()
            }),
            ..Default::default()
        },
        clock: "real".into(),
        ..Default::default()
    }
}

pub(super) fn figures(peak: &RunRecord, saturated: bool) -> Figures {
    Figures {
        peak: Some(CurvePoint {
            qd: peak.workload.qd,
            iops: peak.summary.iops,
            runs: vec![peak.id.clone()],
            ..Default::default()
        }),
        saturated,
        device_limit: crate::figures::DeviceLimit {
            basis: ssdready_measured::basis::HIGHEST_MEASURED.into(),
            iops: Some(peak.summary.iops),
            ..Default::default()
        },
        ..Default::default()
    }
}

pub(super) fn machine() -> Machine {
    Machine {
        cpus: 2,
        ..Default::default()
    }
}

pub(super) fn setting(name: &str, value: &str) -> Setting {
    Setting {
        name: name.into(),
        value: value.into(),
        path: format!("/sys/fs/cgroup/blkio/planted/{name}"),
    }
}

pub(super) fn judge(
    t: &TargetProfile,
    runs: &[RunRecord],
    caps: &Caps,
    saturated: bool,
) -> Saturation {
    let f = figures(&runs[0], saturated);
    classify(t, runs, &f, &machine(), caps)
}

/// [`judge`], with the threads' scaling `scaling` among the figures.
pub(super) fn classify_with(
    t: &TargetProfile,
    runs: &[RunRecord],
    caps: &Caps,
    saturated: bool,
    scaling: &[crate::figures::curve::Scaling],
) -> Saturation {
    let mut f = figures(&runs[0], saturated);
    f.scaling_efficiency = scaling.to_vec();
    classify(t, runs, &f, &machine(), caps)
}

#[test]
fn a_throttle_at_the_rate_reached_holds_it_and_names_its_setting() {
    let caps = Caps {
        io: vec![IoCap {
            kind: IoKind::ReadIops,
            value: 5_000.0,
            device: "loop3".into(),
            setting: setting("blkio.throttle.read_iops_device", "7:3 5000"),
        }],
        ..Default::default()
    };
    // 4,990 IOPS at QD 32 with the thread and CPUs idle and the device
    // holding one request of 32: the I/Os waited above the device.
    let r = run("qd-32", 32, 4_990.0, 8.0, 10.0, 0.1);
    let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
    assert_eq!(s.limit, Cause::IoThrottle);
    assert_eq!(s.layer, Layer::Cgroup);
    assert_eq!(s.setting.as_ref().unwrap().value, "7:3 5000");
    assert!(
        s.evidence.iter().any(|e| e.contains("waited above it")),
        "{:?}",
        s.evidence
    );
    // The device is not named: it has no basis, and the host's limit
    // below it needs the I/Os waiting at the device.
    let below = ruled(&s, Cause::BelowHost);
    assert!(
        below.why.contains("also held") || below.why.contains("above it"),
        "{}",
        below.why
    );
}

#[test]
fn a_thread_busy_whenever_the_hypervisor_let_it_run_is_one_core() {
    // 80 % of the wall clock, with the hypervisor taking 16 % of both
    // CPUs: 95 % of the time the thread could have run.
    let mut r = run("qd-32", 32, 200_000.0, 80.0, 60.0, 0.3);
    let cpu = r.summary.cpu.as_mut().unwrap();
    cpu.per_cpu_steal_pct = vec![(0, 16.0), (1, 16.0)];
    let s = judge(
        &target(TargetKind::RamDevice),
        &[r.clone()],
        &Caps::default(),
        true,
    );
    assert_eq!(s.limit, Cause::OneCore, "{}", s.part);
    assert!(
        s.evidence.iter().any(|e| e.contains("the hypervisor left")),
        "{:?}",
        s.evidence
    );
    // The same thread with no steal had idle time of its own.
    r.summary.cpu.as_mut().unwrap().per_cpu_steal_pct.clear();
    let s = judge(&target(TargetKind::RamDevice), &[r], &Caps::default(), true);
    assert_ne!(s.limit, Cause::OneCore, "{}", s.part);
}

#[test]
fn a_throttle_far_above_the_rate_is_ruled_out_with_its_figures() {
    let caps = Caps {
        io: vec![IoCap {
            kind: IoKind::ReadIops,
            value: 50_000.0,
            device: "loop3".into(),
            setting: setting("io.max", "7:3 riops=50000"),
        }],
        ..Default::default()
    };
    let r = run("qd-32", 32, 4_990.0, 99.0, 60.0, 0.3);
    let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
    assert_eq!(s.limit, Cause::OneCore);
    let t = ruled(&s, Cause::IoThrottle);
    assert!(t.why.contains("not what held it"), "{}", t.why);
}

#[test]
fn a_cpu_quota_used_up_is_named_before_the_late_reaps_it_causes() {
    let caps = Caps {
        cpu_quota: Some(CpuQuota {
            cpus: 0.2,
            setting: setting("cpu.cfs_quota_us", "20000"),
        }),
        ..Default::default()
    };
    let mut r = run("qd-8", 8, 9_000.0, 20.0, 12.0, 0.5);
    r.context = Some(RunContext {
        cgroups: Some(CounterDelta {
            seconds: 1.0,
            cpu: vec![CpuDelta {
                version: CgroupVersion::V1,
                cgroup: "/planted".into(),
                quota_cpus: Some(0.2),
                seconds: 1.0,
                used_ns: Some(200_000_000),
                periods: Some(10),
                throttled_periods: Some(9),
                throttled_ns: Some(720_000_000),
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
    assert_eq!(s.limit, Cause::CpuQuota);
    assert!(s.part.contains("0.20 CPUs"), "{}", s.part);
    assert!(s.part.contains("stopped in 90 %"), "{}", s.part);
}

/// A cpuset of CPU 0 of 2.
pub(super) fn cpuset_of_cpu0() -> Caps {
    Caps {
        cpus: Some(CpusAllowed {
            cpus: vec![0],
            online: 2,
            setting: setting("cpuset.cpus", "0"),
        }),
        ..Default::default()
    }
}

#[test]
fn one_allowed_cpu_filled_by_the_study_though_not_all_busy_is_the_cpus_allowed() {
    // A cpuset of CPU 0 on a loaded machine: CPU 0 88 % busy, ssdready's
    // process 0.77 CPUs of it, the loop device's worker on CPU 1; the rest
    // of CPU 0 is its thread waiting for completions.
    let caps = cpuset_of_cpu0();
    let mut r = with_threads(
        run("qd-128", 128, 380_000.0, 77.0, 88.0, 73.0),
        0.87,
        0.0,
        11.0,
    );
    let c = r.summary.cpu.as_mut().unwrap();
    c.per_cpu_busy_pct = vec![(0, 88.0), (1, 87.0)];
    c.process_ns_per_io = 0.77 * 1e9 / 380_000.0;
    let s = judge(
        &target(TargetKind::RamDevice),
        std::slice::from_ref(&r),
        &caps,
        true,
    );
    assert_eq!(s.limit, Cause::CpusAllowed, "{s:?}");
    // Half of CPU 0 filled is not: the set had room.
    r.summary.cpu.as_mut().unwrap().process_ns_per_io = 0.5 * 1e9 / 380_000.0;
    let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
    assert_ne!(s.limit, Cause::CpusAllowed, "{s:?}");
}

#[test]
fn the_hypervisors_steal_on_the_allowed_cpu_is_not_counted_as_other_work() {
    // A cpuset of CPU 0 on a guest whose host took 45 % of CPU 0: busy
    // 98 %, ssdready's process 0.45 CPUs of it, nothing else running. Of
    // the time the guest had, the study's own work filled most; the rest
    // was nobody's here.
    let caps = cpuset_of_cpu0();
    let mut r = run("qd-8", 8, 50_000.0, 45.0, 50.0, 0.5);
    let c = r.summary.cpu.as_mut().unwrap();
    c.per_cpu_busy_pct = vec![(0, 98.0), (1, 3.0)];
    c.process_ns_per_io = 0.45 * 1e9 / 50_000.0;
    let without_steal = judge(
        &target(TargetKind::RamDevice),
        std::slice::from_ref(&r),
        &caps,
        true,
    );
    // Read without the steal, the rest of CPU 0 is other processes'.
    let others = |e: &[String]| {
        e.iter()
            .any(|e| e.contains("other processes took the rest"))
    };
    assert!(others(&without_steal.evidence), "{without_steal:?}");
    r.summary.cpu.as_mut().unwrap().per_cpu_steal_pct = vec![(0, 45.0), (1, 0.0)];
    let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
    assert_eq!(s.limit, Cause::CpusAllowed, "{s:?}");
    assert!(!others(&s.evidence), "{:?}", s.evidence);
    assert!(
        s.part.contains("85 % of it with the study's own work"),
        "{}",
        s.part
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("the hypervisor took 45 %")),
        "{:?}",
        s.evidence
    );
}

#[test]
fn one_allowed_cpu_busy_with_the_studys_own_work_is_the_cpus_allowed() {
    let caps = cpuset_of_cpu0();
    let mut r = run("qd-8", 8, 50_000.0, 70.0, 50.0, 0.5);
    // CPU 0 (the allowed one) is busy; CPU 1 idles.
    r.summary.cpu.as_mut().unwrap().per_cpu_busy_pct = vec![(0, 98.0), (1, 3.0)];
    r.summary.cpu.as_mut().unwrap().process_ns_per_io = 0.9 * 1e9 / 50_000.0;
    let s = judge(&target(TargetKind::RamDevice), &[r], &caps, true);
    assert_eq!(s.limit, Cause::CpusAllowed);
    assert!(s.part.contains("1 of the 2 CPUs"), "{}", s.part);
    let o = ruled(&s, Cause::OtherWork);
    assert!(o.why.contains("the CPUs allowed"), "{}", o.why);
    assert!(
        s.part.contains("92 % of it with the study's own work"),
        "{}",
        s.part
    );
}

#[test]
fn an_idle_host_waiting_at_a_busy_device_is_a_limit_below_the_host() {
    let caps = Caps {
        unseen: Some("a virtio disk: its backend's limits are not visible from this host".into()),
        ..Default::default()
    };
    let r = run("qd-64", 64, 30_000.0, 20.0, 25.0, 60.0);
    let s = judge(
        &target(TargetKind::BlockDevice),
        std::slice::from_ref(&r),
        &caps,
        true,
    );
    assert_eq!(s.limit, Cause::BelowHost);
    assert!(s.part.contains("between it and this host"), "{}", s.part);
    let d = ruled(&s, Cause::Device);
    assert!(d.why.contains("no basis"), "{}", d.why);
    // Still growing with depth: not a limit at all yet.
    let s = judge(&target(TargetKind::BlockDevice), &[r], &caps, false);
    assert_eq!(s.limit, Cause::NotIdentified);
    assert!(
        s.part.contains("no candidate had positive evidence"),
        "{}",
        s.part
    );
}

#[test]
fn a_request_queue_smaller_than_the_ios_in_flight_keeps_the_limit_on_this_host() {
    // An idle host, a busy device holding 2 of the 16 I/Os in flight: as
    // below the host, unless its queue admits 4 requests, when the other
    // I/Os waited in this host for one (a quota slowing the submitter
    // beside nr_requests = 4 leaves the queue short of full).
    let r = run("qd-16", 16, 80_000.0, 20.0, 25.0, 2.1);
    let t = target(TargetKind::BlockDevice);
    let mut r = r;
    r.summary.disk.as_mut().unwrap().util_pct = 90.0;
    let s = judge(&t, std::slice::from_ref(&r), &Caps::default(), true);
    assert_eq!(s.limit, Cause::BelowHost, "{s:?}");
    let s = judge(&t, std::slice::from_ref(&r), &queue_of(4, "loop3"), true);
    assert_ne!(s.limit, Cause::BelowHost, "{s:?}");
    let b = ruled(&s, Cause::BelowHost);
    assert!(b.why.contains("admits 4 requests"), "{}", b.why);
}

#[test]
fn a_device_whose_rate_stopped_growing_within_its_queue_is_a_limit_below_the_host() {
    // A disk capped below the host (null_blk at 20 MB/s): 5.2K IOPS from
    // QD 32 to QD 256 with a queue of 64 requests, the host idle, the
    // device busy and full. The I/Os above the queue waited for a device
    // that took no more: the queue being short of 256 is no evidence
    // against the limit below.
    let t = target(TargetKind::BlockDevice);
    let caps = queue_of(64, "loop3");
    let peak = run("qd-64", 64, 5_200.0, 16.0, 16.0, 62.0);
    let deep = run("qd-256", 256, 5_150.0, 16.0, 16.0, 63.0);
    let mut f = figures(&peak, true);
    f.knee_qd = Some(32);
    f.qd_curve = curve(&[(32, 5_210.0), (64, 5_200.0), (128, 5_180.0), (256, 5_150.0)]);
    let runs = [peak, deep];
    let s = classify(&t, &runs, &f, &machine(), &caps);
    assert_eq!(s.limit, Cause::BelowHost, "{s:?}");
    // The same queue with the rate still growing as it filled: the I/Os
    // above it waited in this host, not below it.
    f.knee_qd = Some(64);
    f.qd_curve = curve(&[(32, 3_000.0), (64, 5_200.0), (128, 5_180.0), (256, 5_150.0)]);
    let s = classify(&t, &runs, &f, &machine(), &caps);
    assert_ne!(s.limit, Cause::BelowHost, "{s:?}");
    let b = ruled(&s, Cause::BelowHost);
    assert!(b.why.contains("admits 64 requests"), "{}", b.why);
}

#[test]
fn a_small_request_queue_the_device_fills_is_the_devices_queue() {
    let caps = queue_of(4, "loop3");
    let r = run("qd-32", 32, 60_000.0, 30.0, 40.0, 3.9);
    let t = target(TargetKind::RamDevice);
    let mut f = figures(&r, true);
    f.knee_qd = Some(4);
    let s = classify(&t, std::slice::from_ref(&r), &f, &machine(), &caps);
    assert_eq!(s.limit, Cause::DeviceQueue);
    assert_eq!(s.layer, Layer::BlockQueue);
    // The same queue full behind a curve flat from QD 1: not the queue.
    f.knee_qd = Some(1);
    let s = classify(&t, std::slice::from_ref(&r), &f, &machine(), &caps);
    assert_ne!(s.limit, Cause::DeviceQueue);
}

/// The instrumented run of `r`: `pct` of each I/O's latency after its
/// completion, the decomposition joined for 99 % of the I/Os.
fn completing(r: &RunRecord, pct: f64) -> RunRecord {
    let mut inst = r.clone();
    inst.id = format!("{}-profiled", r.id);
    inst.sweep = "instrumented".into();
    inst.summary.decomposition = Some(ssdready_measured::summary::DecompSummary {
        parts: vec![("completion to the app".into(), 1e4 * pct, pct)],
        joined_pct: Some(99.0),
        ..Default::default()
    });
    inst
}

#[test]
fn late_reaps_behind_a_full_small_queue_are_the_queues_not_the_completions() {
    // nr_requests = 4 under QD 32: the thread sleeps for each free
    // request, and 95 % of each I/O's latency is after its completion.
    let caps = queue_of(4, "loop3");
    let r = run("qd-32", 32, 60_000.0, 30.0, 40.0, 3.9);
    let inst = completing(&r, 95.0);
    let t = target(TargetKind::RamDevice);
    let mut f = figures(&r, true);
    f.knee_qd = Some(4);
    let s = classify(&t, &[r, inst], &f, &machine(), &caps);
    assert_eq!(s.limit, Cause::DeviceQueue, "{s:?}");
    assert!(
        s.also_held.iter().all(|a| a.cause != Cause::Completions),
        "{s:?}"
    );
    let c = ruled(&s, Cause::Completions);
    assert!(c.why.contains("sleeps for a free request"), "{}", c.why);
}

#[test]
fn a_file_system_that_reads_four_times_per_read_is_named_from_the_device_counters() {
    let mut t = target(TargetKind::File);
    t.filesystem = Some("ext4".into());
    let mut r = run("qd-16", 16, 20_000.0, 30.0, 40.0, 12.0);
    let d = r.summary.disk.as_mut().unwrap();
    d.ios = 80_000;
    d.bytes = 80_000 * 4096;
    let s = judge(&t, &[r.clone()], &Caps::default(), true);
    assert_eq!(s.limit, Cause::FileSystem);
    assert!(s.part.contains("4.0×"), "{}", s.part);
    // The study's process read all the device read (its file system's
    // reads for it are counted as its own): still the file system's.
    let d = r.summary.disk.as_mut().unwrap();
    d.read_bytes = d.bytes;
    d.own_read_bytes = Some(d.bytes - (1 << 20));
    let s = judge(&t, &[r.clone()], &Caps::default(), true);
    assert_eq!(s.limit, Cause::FileSystem);
    // Another process read three quarters of it.
    let d = r.summary.disk.as_mut().unwrap();
    d.own_read_bytes = Some(d.bytes / 4);
    let s = judge(&t, &[r], &Caps::default(), true);
    assert_ne!(s.limit, Cause::FileSystem, "{s:?}");
    let c = ruled(&s, Cause::FileSystem);
    assert!(
        c.why
            .contains("234.4 MiB more than the study's process asked"),
        "{}",
        c.why
    );
}

#[test]
fn repeats_that_disagree_are_each_kept_and_the_majority_answers() {
    let caps = Caps {
        io: vec![IoCap {
            kind: IoKind::ReadIops,
            value: 5_000.0,
            device: "loop3".into(),
            setting: setting("blkio.throttle.read_iops_device", "7:3 5000"),
        }],
        ..Default::default()
    };
    let a = run("qd-32", 32, 5_000.0, 10.0, 10.0, 0.2);
    let mut b = run("qd-32#2", 32, 4_950.0, 10.0, 10.0, 0.2);
    b.repeat = 2;
    // A third repeat far below the throttle, its thread busy: one core.
    let mut c = run("qd-32#3", 32, 2_000.0, 99.0, 60.0, 0.2);
    c.repeat = 3;
    let s = judge(&target(TargetKind::RamDevice), &[a, b, c], &caps, true);
    assert_eq!(s.limit, Cause::IoThrottle);
    assert!(!s.repeats_agree);
    assert_eq!(s.repeats.len(), 3);
    assert_eq!(s.repeats[2].limit, Cause::OneCore);
    assert!(s
        .evidence
        .iter()
        .any(|e| e.contains("the repeats disagreed")));
}

/// `r` with the I/O's kernel threads using `kernel` CPUs, other processes
/// `others` CPUs, and its submitting thread waiting `wait` percent of its
/// ready time for a CPU.
/// What the judgement `s` said of cause `c` when ruling it out.
pub(super) fn ruled(s: &Saturation, c: Cause) -> &RuledOut {
    s.ruled_out
        .iter()
        .find(|r| r.cause == c)
        .unwrap_or_else(|| panic!("{c:?} not among those ruled out: {:?}", s.ruled_out))
}

pub(super) fn with_threads(mut r: RunRecord, kernel: f64, others: f64, wait: f64) -> RunRecord {
    let iops = r.summary.iops;
    let c = r.summary.cpu.as_mut().unwrap();
    c.kernel_threads_ns_per_io = Some(kernel * 1e9 / iops);
    c.kernel_threads_wait_ns_per_io = Some(0.0);
    c.other_processes_ns_per_io = Some(others * 1e9 / iops);
    c.thread_wait_max_pct = Some(wait);
    r
}

#[test]
fn every_cpu_busy_with_the_ios_own_work_is_the_io_paths_cpu() {
    // A loop device over RAM: the thread 50 % busy, the loop device's
    // worker and softirqs 1.4 CPUs, nothing else running.
    let mut r = with_threads(
        run("qd-32", 32, 250_000.0, 50.0, 99.0, 30.0),
        1.4,
        0.02,
        8.0,
    );
    r.summary.cpu.as_mut().unwrap().busiest_threads = vec![ssdready_core::result::ThreadUse {
        name: "kworker/u8:2+loop3".into(),
        pid: 77,
        kernel: true,
        cpus: 0.9,
        wait_pct: 5.0,
        ..Default::default()
    }];
    let s = judge(&target(TargetKind::RamDevice), &[r], &Caps::default(), true);
    assert_eq!(s.limit, Cause::IoPathCpu, "{s:?}");
    assert_eq!(s.layer, Layer::Cpus);
    // 1.9 CPUs over 250K IOPS: 7.6 µs per I/O in the threads on its path.
    assert!(
        s.part.contains("7.6 µs of CPU in the threads"),
        "{}",
        s.part
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("kworker/u8:2+loop3 0.90 CPUs")),
        "{:?}",
        s.evidence
    );
    assert!(Cause::IoPathCpu.cpu_is_scarce());
}

#[test]
fn a_full_small_queue_is_the_queue_even_with_the_cpus_busy_with_the_ios_work() {
    // nr_requests = 4 on a RAM loop device: fio gave 113K IOPS with it and
    // 270K without, the CPUs busy in both (few requests at a time cost
    // more wake-ups each).
    let caps = queue_of(4, "loop3");
    let r = with_threads(
        run("qd-32", 32, 120_000.0, 40.0, 100.0, 3.9),
        1.3,
        0.1,
        10.0,
    );
    let t = target(TargetKind::RamDevice);
    let mut f = figures(&r, true);
    f.knee_qd = Some(4);
    let s = classify(&t, std::slice::from_ref(&r), &f, &machine(), &caps);
    assert_eq!(s.limit, Cause::DeviceQueue, "{s:?}");
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("each costs more of them")),
        "{:?}",
        s.evidence
    );
    let c = ruled(&s, Cause::IoPathCpu);
    assert!(c.why.starts_with("also held"), "{}", c.why);
}

#[test]
fn a_queue_full_past_the_peak_is_the_queue_when_the_peak_is_at_its_size() {
    // nr_requests = 4 on a loaded machine: the rate peaked at QD 4, and at
    // QD 64 the device still held 4 requests while the rest waited.
    let caps = queue_of(4, "loop8");
    let peak = with_threads(run("qd-4", 4, 110_000.0, 40.0, 100.0, 3.8), 0.5, 1.0, 40.0);
    let deep = with_threads(
        run("qd-64", 64, 100_000.0, 40.0, 100.0, 3.9),
        0.5,
        1.0,
        40.0,
    );
    let t = target(TargetKind::RamDevice);
    let mut f = figures(&peak, true);
    f.knee_qd = Some(4);
    f.qd_curve = curve(&[(4, 110_000.0), (64, 100_000.0)]);
    let runs = [peak, deep];
    let s = classify(&t, &runs, &f, &machine(), &caps);
    assert_eq!(s.limit, Cause::DeviceQueue, "{s:?}");
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("peaked at QD 4") && e.contains("QD 64 gave 100.0K")),
        "{:?}",
        s.evidence
    );
    // The peak's depth is said first, the deeper run's beside it.
    assert!(
        s.part.contains(
            "admits 4 requests while the study keeps 4 in flight at its peak and 64 deeper"
        ),
        "{}",
        s.part
    );
    // Without the deeper run, the queue is not shown full: not named.
    f.qd_curve.pop();
    let s = classify(&t, &runs[..1], &f, &machine(), &caps);
    assert_ne!(s.limit, Cause::DeviceQueue, "{s:?}");
}

#[test]
fn a_daemon_that_takes_most_of_the_ios_cpus_is_the_apparatus_not_the_platform() {
    // The built-in drive behind the kernel on 2 CPUs: its one serving
    // thread 82 % busy with work (under the daemon's own threshold), but
    // 0.95 of the 1.46 CPUs the I/O's work took, every CPU busy.
    let mut r = with_threads(
        run("qd-128", 128, 74_000.0, 34.0, 100.0, 115.0),
        0.13,
        1.0,
        30.0,
    );
    r.summary.cpu.as_mut().unwrap().process_ns_per_io = 0.38 * 1e9 / 74_000.0;
    r.summary.transport = Some(ssdready_measured::summary::Transport {
        threads: 1,
        daemon_cpu_ns_per_io: 12_800.0,
        spin_ns_per_io: 1_700.0,
        ..Default::default()
    });
    let mut t = target(TargetKind::BlockDevice);
    t.transport = "fuse+loop".into();
    let s = judge(&t, &[r], &Caps::default(), true);
    assert_eq!(s.limit, Cause::Apparatus, "{s:?}");
    assert!(s.part.contains("0.95 of the 1.46 CPUs"), "{}", s.part);
    let p = ruled(&s, Cause::IoPathCpu);
    assert!(p.why.starts_with("also held"), "{}", p.why);
}

#[test]
fn a_throttle_that_holds_qd1_leaves_its_wait_unaccounted_and_claims_no_platform_share() {
    let caps = Caps {
        io: vec![IoCap {
            kind: IoKind::ReadIops,
            value: 2_000.0,
            device: "vda".into(),
            setting: setting("blkio.throttle.read_iops_device", "254:0 2000"),
        }],
        ..Default::default()
    };
    // Without root: the split at QD 1 is the device's own counters' (70 µs
    // in the block layer and below) against the mean (457 µs at 2,185 IOPS).
    let mut runs = vec![
        run("qd-1", 1, 2_185.0, 5.0, 10.0, 0.15),
        run("qd-16", 16, 2_215.0, 5.0, 10.0, 0.5),
    ];
    runs[0].summary.disk.as_mut().unwrap().block_mean_ns = Some(70_000.0);
    let t = target(TargetKind::File);
    let m = machine();
    let mut i = crate::Inputs::of(std::slice::from_ref(&t), &m, &runs);
    i.caps = Some(&caps);
    let j = crate::judge(&i);
    let p = j.figures.platform_share_qd1.as_ref().unwrap();
    let left = p.unaccounted_ns.unwrap();
    assert!((left - (1e9 / 2_185.0 - 70_000.0)).abs() < 1.0, "{left}");
    assert!(!j.facts.contains_key("platform_share_qd1"));
    let rules: Vec<&str> = j.verdicts.iter().map(|v| v.rule.as_str()).collect();
    assert!(rules.contains(&"qd1-parts-leave-time-out"), "{rules:?}");
    for r in [
        "platform-owns-qd1",
        "platform-shares-qd1",
        "device-owns-qd1",
    ] {
        assert!(!rules.contains(&r), "{rules:?}");
    }
    // Without the throttle the same figures give the platform its share.
    let i = crate::Inputs::of(std::slice::from_ref(&t), &m, &runs);
    let j = crate::judge(&i);
    assert!(j.facts.contains_key("platform_share_qd1"));
}

#[test]
fn a_device_that_paces_its_requests_at_qd1_holds_them_in_the_block_layer_for_itself() {
    // null_blk capped at 20 MB/s: at QD 1, 5,168 IOPS (191 µs), of which
    // 161.5 µs in the block layer before the driver took each request,
    // 7.6 µs in the driver and device, one I/O on the device at a time.
    let mut r = run("qd-1", 1, 5_168.0, 12.0, 11.0, 0.96);
    let mut inst = r.clone();
    inst.id = "qd-1-profiled".into();
    inst.sweep = "instrumented".into();
    inst.summary.decomposition = Some(ssdready_measured::summary::DecompSummary {
        parts: vec![
            ("above block, submission".into(), 10_900.0, 5.7),
            ("block layer and scheduler".into(), 161_500.0, 84.5),
            ("driver and device".into(), 7_600.0, 4.0),
            ("completion to the app".into(), 11_000.0, 5.8),
        ],
        platform_share_pct: Some(96.0),
        device_ns: Some(7_600.0),
        joined_pct: Some(99.9),
        ..Default::default()
    });
    inst.summary.lat_mean_ns = 191_000.0;
    r.summary.lat_mean_ns = 191_000.0;
    let mut t = target(TargetKind::RamDevice);
    t.scheduler = Some("none".into());
    let m = machine();
    let verdicts = |t: &TargetProfile, runs: &[RunRecord]| {
        let j = crate::judge(&crate::Inputs::of(std::slice::from_ref(t), &m, runs));
        let rules: Vec<String> = j.verdicts.iter().map(|v| v.rule.clone()).collect();
        (j, rules)
    };
    let (j, rules) = verdicts(&t, &[r.clone(), inst.clone()]);
    assert!(rules.iter().any(|r| r == "device-paces-qd1"), "{rules:?}");
    assert!(!rules.iter().any(|r| r == "platform-owns-qd1"), "{rules:?}");
    let v = j
        .verdicts
        .iter()
        .find(|v| v.rule == "device-paces-qd1")
        .unwrap();
    assert!(v.finding.contains("161.50 µs"), "{}", v.finding);
    // A scheduler could have held it there: the platform's share as before.
    t.scheduler = Some("mq-deadline".into());
    let (_, rules) = verdicts(&t, &[r.clone(), inst.clone()]);
    assert!(rules.iter().any(|r| r == "platform-owns-qd1"), "{rules:?}");
    // So could other I/O on the device (two held on average).
    t.scheduler = Some("none".into());
    inst.summary.disk.as_mut().unwrap().in_flight = Some(2.0);
    let (_, rules) = verdicts(&t, &[r, inst]);
    assert!(!rules.iter().any(|r| r == "device-paces-qd1"), "{rules:?}");
}

/// A loop device over a file on vda, its disk's counters over the run:
/// (vda's I/Os, its summed ms, its busy ms) in a window of 1,000 ms, the
/// loop device's 30,000 I/Os taking 3,000 ms.
fn over_vda(mut r: RunRecord, ios: u64, ticks: u64, busy: u64) -> (TargetProfile, RunRecord) {
    use ssdready_measured::stack_layers::{LayerKind, MemberCounters, Stack, StackLayer};
    let mut t = target(TargetKind::BlockDevice);
    let layer = |disk: &str, kind: LayerKind, under: &[&str]| StackLayer {
        disk: disk.into(),
        kind,
        under: under.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    t.stack = Some(Stack {
        target: "loop3".into(),
        layers: vec![
            layer(
                "loop3",
                LayerKind::Loop {
                    backing_file: Some("/var/tmp/f".into()),
                },
                &["vda"],
            ),
            layer("vda", LayerKind::default(), &[]),
        ],
        ..Default::default()
    });
    let c = |disk: &str, ios: u64, ticks: u64, busy: u64| MemberCounters {
        disk: disk.into(),
        read_ios: ios,
        read_ticks_ms: ticks,
        io_ticks_ms: busy,
        window_ms: 1000,
        ..Default::default()
    };
    r.context = Some(RunContext {
        members: vec![c("loop3", 30_000, 3_000, 1_000), c("vda", ios, ticks, busy)],
        ..Default::default()
    });
    (t, r)
}

#[test]
fn a_loop_devices_busy_disk_holding_its_time_is_below_the_host_whatever_the_cpus_did() {
    // Every CPU busy, other work's mostly, the thread kept waiting: on its
    // own, other work.
    let busy = || with_threads(run("qd-16", 16, 30_000.0, 40.0, 99.0, 3.0), 0.3, 1.3, 60.0);
    let (t, r) = over_vda(busy(), 30_000, 2_500, 980);
    let s = judge(&t, &[r], &Caps::default(), true);
    assert_vda_below(&s, "loop3", "the disk under loop3 (vda) was busy 98 %");
    // The disk half idle: the I/Os did not wait there.
    let (t, r) = over_vda(busy(), 30_000, 1_200, 450);
    assert_eq!(
        judge(&t, &[r], &Caps::default(), true).limit,
        Cause::OtherWork
    );
    // The disk busy with twice the loop device's I/Os: other work's I/O.
    let (t, r) = over_vda(busy(), 90_000, 2_500, 980);
    assert_ne!(
        judge(&t, &[r], &Caps::default(), true).limit,
        Cause::BelowHost
    );
}

/// The disk vda under loop device `top` named below the host, with
/// evidence holding `said`.
pub(super) fn assert_vda_below(s: &Saturation, top: &str, said: &str) {
    assert_eq!(s.limit, Cause::BelowHost, "{s:?}");
    let part = format!("the device vda (under {top}, whose file is on it)");
    assert!(s.part.starts_with(&part), "{}", s.part);
    assert!(
        s.evidence.iter().any(|e| e.contains(said)),
        "{:?}",
        s.evidence
    );
}

/// A request queue of `requests` on `disk`, its `nr_requests` file.
pub(super) fn queue_of(requests: u32, disk: &str) -> Caps {
    Caps {
        queue: Some(QueueCap {
            requests,
            setting: Setting {
                name: "queue/nr_requests".into(),
                value: requests.to_string(),
                path: format!("/sys/block/{disk}/queue/nr_requests"),
            },
        }),
        ..Default::default()
    }
}

/// A queue-depth curve of (QD, IOPS) points.
pub(super) fn curve(points: &[(u32, f64)]) -> Vec<CurvePoint> {
    points
        .iter()
        .map(|&(qd, iops)| CurvePoint {
            qd,
            iops,
            ..Default::default()
        })
        .collect()
}

#[test]
fn late_reaps_on_a_cpu_the_hypervisor_took_are_not_named_completions() {
    // A one-CPU cpuset whose CPU the host took 62 % of: CPU 0 87 % busy,
    // the submitting thread 14 %, 60 % of each I/O's latency after its
    // completion.
    let caps = cpuset_of_cpu0();
    let mut r = run("qd-32", 32, 20_000.0, 14.0, 50.0, 0.5);
    let c = r.summary.cpu.as_mut().unwrap();
    c.per_cpu_busy_pct = vec![(0, 87.0), (1, 5.0)];
    c.process_ns_per_io = 0.14 * 1e9 / 20_000.0;
    let inst = completing(&r, 60.0);
    let with_steal = |steal: f64| {
        let mut runs = vec![r.clone(), inst.clone()];
        for r in &mut runs {
            r.summary.cpu.as_mut().unwrap().per_cpu_steal_pct = vec![(0, steal), (1, 0.0)];
        }
        judge(&target(TargetKind::RamDevice), &runs, &caps, true)
    };
    // Without the steal, the thread's late reaps are the finding.
    assert_eq!(with_steal(0.0).limit, Cause::Completions);
    let s = with_steal(62.0);
    assert_ne!(s.limit, Cause::Completions, "{s:?}");
    let c = ruled(&s, Cause::Completions);
    assert!(c.why.contains("the hypervisor took 62 %"), "{}", c.why);
}

#[test]
fn late_reaps_are_not_named_from_a_decomposition_its_own_cross_check_distrusts() {
    // Another process's I/O on the device: its count and the study's
    // disagree, and the run says not to trust the decomposition.
    let r = run("qd-32", 32, 20_000.0, 14.0, 50.0, 0.5);
    let mut inst = completing(&r, 97.0);
    let runs = |inst: &RunRecord| vec![r.clone(), inst.clone()];
    let t = target(TargetKind::RamDevice);
    let s = judge(&t, &runs(&inst), &Caps::default(), true);
    assert_eq!(s.limit, Cause::Completions, "{s:?}");
    inst.summary.checks_disagree = vec!["phase 0: I/Os on loop0: ssdready's count vs the kernel's: ssdready 72249 I/Os vs /sys/block stat 125783 I/Os (allowed ±722 I/Os): DISAGREE; do not trust disks.above_block_mean_ns, decomposition".into()];
    let s = judge(&t, &runs(&inst), &Caps::default(), true);
    assert_ne!(s.limit, Cause::Completions, "{s:?}");
    let c = ruled(&s, Cause::Completions);
    assert!(
        c.why
            .contains("its latency decomposition speaks for nothing"),
        "{}",
        c.why
    );
}

#[test]
fn a_small_queue_its_idle_thread_waits_for_reads_under_full_and_is_still_the_queue() {
    // nr_requests = 4 under QD 32 and QD 128: the device held 2 of its 4
    // at both depths while the thread that fills it was 40 % busy (it
    // slept for each free request, and the queue drained while it woke).
    let caps = queue_of(4, "loop3");
    let judged = |busy: f64| {
        let peak = run("qd-32", 32, 65_000.0, busy, 45.0, 1.96);
        let deep = run("qd-128", 128, 62_000.0, busy, 45.0, 2.0);
        let t = target(TargetKind::RamDevice);
        let mut f = figures(&peak, true);
        f.knee_qd = Some(4);
        f.qd_curve = curve(&[(32, 65_000.0), (128, 62_000.0)]);
        classify(&t, &[peak, deep], &f, &machine(), &caps)
    };
    let s = judged(40.0);
    assert_eq!(s.limit, Cause::DeviceQueue, "{s:?}");
    // The same half-full queue beside a thread busy all the time: the
    // thread could not fill it, and the queue is not named.
    let s = judged(95.0);
    assert_ne!(s.limit, Cause::DeviceQueue, "{s:?}");
    let q = ruled(&s, Cause::DeviceQueue);
    assert!(q.why.contains("held 2.0"), "{}", q.why);
}
