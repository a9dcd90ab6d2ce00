//! Other processes' work, named by what it costs the I/O's own threads —
//! their run-queue wait as a share of the run — at any priority, never by
//! its share of the CPUs alone: each on runs made up to show it.

use super::caps::Caps;
use super::tests::{judge, ruled, run, target, with_threads};
use super::*;

#[test]
fn busy_cpus_taken_by_other_processes_are_other_work_only_where_the_ios_threads_waited() {
    // Both CPUs 97 % busy, ssdready's threads 0.3 CPUs of it: other
    // processes' share alone, with no run-queue wait read, names nothing.
    let mut r = run("qd-8", 8, 20_000.0, 30.0, 97.0, 0.5);
    r.summary.cpu.as_mut().unwrap().process_ns_per_io = 0.3 * 1e9 / 20_000.0;
    let s = judge(
        &target(TargetKind::RamDevice),
        &[r.clone()],
        &Caps::default(),
        true,
    );
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(o.why.contains("no run-queue wait was read"), "{}", o.why);
    // The submitting thread waited 15 % of the run for a CPU: other work.
    r.summary.cpu.as_mut().unwrap().thread_wait_run_pct = Some(15.0);
    let s = judge(&target(TargetKind::RamDevice), &[r], &Caps::default(), true);
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    assert_eq!(s.io_wait_pct, Some(15.0));
}

#[test]
fn busy_cpus_filled_by_work_that_gives_way_are_not_other_work() {
    // Both CPUs busy, most of it other processes' (a build at a lower
    // priority), but the submitting thread hardly waited for a CPU: 3 %
    // of its ready time, 30 % busy — 0.9 % of the run (a record without
    // the run's share: estimated from those two).
    let r = with_threads(run("qd-8", 8, 20_000.0, 30.0, 100.0, 0.5), 0.2, 1.4, 3.0);
    let s = judge(
        &target(TargetKind::RamDevice),
        &[r],
        &Caps::default(),
        false,
    );
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(
        o.why.contains(
            "but the I/O's threads waited 1 % of the run for a CPU: their CPU time is not a limit here"
        ),
        "{}",
        o.why
    );
    assert_eq!(s.others_pct, Some(0.0));
    // Nor are the CPUs called scarce for the late reaps.
    let c = ruled(&s, Cause::Completions);
    assert!(!c.why.contains("scarce"), "{}", c.why);
}

#[test]
fn other_work_that_keeps_the_submitting_thread_waiting_is_named_with_the_wait() {
    // The submitting thread waited 45 % of its ready time, 24 % of the run.
    let mut r = with_threads(run("qd-8", 8, 20_000.0, 30.0, 100.0, 0.5), 0.2, 1.4, 45.0);
    r.summary.cpu.as_mut().unwrap().thread_wait_run_pct = Some(24.0);
    let s = judge(
        &target(TargetKind::RamDevice),
        &[r.clone()],
        &Caps::default(),
        true,
    );
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    assert!(
        s.part
            .contains("other processes kept the I/O's threads waiting for a CPU 24 % of the run"),
        "{}",
        s.part
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e
                .contains("the submitting thread waited 24 % of the run on a run queue for a CPU")),
        "{:?}",
        s.evidence
    );
    assert_eq!((s.cpu_wait_pct, s.io_wait_pct), (Some(45.0), Some(24.0)));
    assert!(s.others_pct.unwrap() > 60.0);
    // A record made before the run's share was read: estimated from the
    // ready time's share and the thread's run time, 30 × 45 / 55.
    r.summary.cpu.as_mut().unwrap().thread_wait_run_pct = None;
    let s = judge(&target(TargetKind::RamDevice), &[r], &Caps::default(), true);
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    let estimated = "waited 25 % of the run on a run queue for a CPU (estimated from its share of its ready time; /proc";
    assert!(says(&s.evidence, estimated), "{:?}", s.evidence);
}

#[test]
fn other_work_larger_than_the_ios_own_that_keeps_it_waiting_is_other_work() {
    // The built-in drive on 2 CPUs beside a build: ssdready's threads 0.59
    // CPUs, other processes 0.92 (46 %, under half but more than the I/O's
    // own 30 %), the rest interrupts; the submitting thread waited 41 %.
    let r = with_threads(
        run("qd-128", 128, 590_000.0, 59.0, 100.0, 0.0),
        0.01,
        0.92,
        41.0,
    );
    let s = judge(&target(TargetKind::RamDevice), &[r], &Caps::default(), true);
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    let p = ruled(&s, Cause::IoPathCpu);
    assert!(p.why.contains("46 %"), "{}", p.why);
}

/// Whether a line of `evidence` says `text`.
fn says(evidence: &[String], text: &str) -> bool {
    evidence.iter().any(|e| e.contains(text))
}

/// Both CPUs busy; the I/O's own work 1.2 CPUs, one `yes` loop per CPU
/// at `policy` and `nice` taking 0.76; the kernel's threads waited 53 % of
/// their ready time (as they do on 2 CPUs with no other work at all), the
/// submitting thread `wait` % of the run.
fn loops(policy: &str, nice: i64, wait: f64) -> RunRecord {
    let mut r = with_threads(
        run("qd-32", 32, 160_000.0, 50.0, 100.0, 20.0),
        0.7,
        0.76,
        12.0,
    );
    let c = r.summary.cpu.as_mut().unwrap();
    // wait / (run + wait) of the kernel's threads.
    let run_ns = c.kernel_threads_ns_per_io.unwrap();
    c.kernel_threads_wait_ns_per_io = Some(run_ns * 53.0 / (100.0 - 53.0));
    c.thread_wait_run_pct = Some(wait);
    c.busiest_threads = busy_loops("yes", &[(301, 0.39), (302, 0.37)], policy, nice);
    r
}

/// Busy loops `name` (each its pid and CPUs) at `policy` and `nice`.
fn busy_loops(
    name: &str,
    each: &[(u32, f64)],
    policy: &str,
    nice: i64,
) -> Vec<ssdready_core::result::ThreadUse> {
    each.iter()
        .map(|&(pid, cpus)| ssdready_core::result::ThreadUse {
            name: name.into(),
            pid,
            cpus,
            policy: Some(policy.into()),
            nice: Some(nice),
            ..Default::default()
        })
        .collect()
}

/// The same loops at the lowest priority, the submitting thread waiting
/// 2 % of the run.
fn idle_priority_loops() -> RunRecord {
    loops("SCHED_IDLE", 19, 2.0)
}

#[test]
fn idle_priority_loops_that_keep_only_the_kernels_threads_waiting_are_not_other_work() {
    // Two SCHED_IDLE loops beside fio on a RAM loop device raised it from
    // 194K to 215K IOPS: the submitting thread hardly waited, and the
    // kernel's threads' wait is no evidence. Their CPU time is said as not
    // a limit, with who they are; the I/O path's own CPU is named.
    let s = judge(
        &target(TargetKind::RamDevice),
        &[idle_priority_loops()],
        &Caps::default(),
        false,
    );
    assert_eq!(s.limit, Cause::IoPathCpu, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(
        o.why.contains("other processes took 38 % of the busy CPUs (yes (pid 301, SCHED_IDLE, nice 19), yes (pid 302, SCHED_IDLE, nice 19)), but the I/O's threads waited 2 % of the run for a CPU: their CPU time is not a limit here"),
        "{}",
        o.why
    );
    assert_eq!(s.others_pct, Some(0.0));
    assert_eq!(s.io_wait_pct, Some(2.0));
}

#[test]
fn nice_10_loops_that_keep_the_submitting_thread_waiting_are_other_work_said_with_their_policy() {
    // The same two loops at nice 10 cost fio 41 %: the submitting thread
    // waited 30 % of the run for a CPU they held.
    let s = judge(
        &target(TargetKind::RamDevice),
        &[loops("SCHED_OTHER", 10, 30.0)],
        &Caps::default(),
        false,
    );
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    assert!(
        s.part.contains(
            "other processes kept the I/O's threads waiting for a CPU 30 % of the run, on CPUs 100 % busy, 38 % of it their work (yes (pid 301, nice 10), yes (pid 302, nice 10))"
        ),
        "{}",
        s.part
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("busiest other processes: yes (pid 301, nice 10) 0.39 CPUs")),
        "{:?}",
        s.evidence
    );
    assert!(
        s.evidence.iter().any(|e| e.contains("lower priority")),
        "{:?}",
        s.evidence
    );
    // The I/O path's CPU also held: said after it, not ruled out.
    assert_eq!(
        s.also_held.iter().map(|a| a.cause).collect::<Vec<_>>(),
        [Cause::IoPathCpu]
    );
    assert!(s.others_pct.is_some_and(|o| o > 30.0), "{s:?}");
    // Just under the line, the same loops are not a limit.
    let s = judge(
        &target(TargetKind::RamDevice),
        &[loops("SCHED_OTHER", 10, 9.0)],
        &Caps::default(),
        false,
    );
    assert_eq!(s.limit, Cause::IoPathCpu, "{s:?}");
}

/// The built-in drive behind the kernel beside the loops at the I/O's own
/// priority: its daemon's one serving thread 2 µs of CPU per I/O (0.32
/// CPUs, counted among other processes' time but not as other work),
/// waiting `wait` % of its ready time for a CPU; the submitting thread
/// hardly waited.
fn daemon_beside_idle_loops(wait: f64) -> (TargetProfile, RunRecord) {
    let mut r = loops("SCHED_OTHER", 0, 2.0);
    let c = r.summary.cpu.as_mut().unwrap();
    c.other_processes_ns_per_io = Some((0.76 + 0.32) * 1e9 / 160_000.0);
    let cpu_ns = 0.32 * 1e9 / 160_000.0;
    r.summary.transport = Some(ssdready_measured::summary::Transport {
        name: "fuse+loop".into(),
        ios: 160_000,
        threads: 1,
        daemon_cpu_ns_per_io: cpu_ns,
        wait_ns_per_io: Some(cpu_ns * wait / (100.0 - wait)),
        wait_pct: Some(wait),
        ..Default::default()
    });
    let mut t = target(TargetKind::BlockDevice);
    t.transport = "fuse+loop".into();
    (t, r)
}

#[test]
fn other_work_that_keeps_only_the_drives_daemon_waiting_is_other_work_naming_the_daemon() {
    let (t, r) = daemon_beside_idle_loops(40.0);
    let v = super::view::View::of(&r, &Caps::default(), 2);
    assert_eq!(v.daemon_wait, Some(40.0));
    // 1.33 µs of wait per I/O at 160K IOPS: 21 % of the run.
    assert!((v.daemon_wait_run.unwrap() - 21.33).abs() < 0.01);
    // The daemon's own CPU is the apparatus, not other processes' work.
    assert!(
        (v.others_cpus.unwrap() - 0.76).abs() < 1e-9,
        "{:?}",
        v.others_cpus
    );
    let s = judge(&t, &[r], &Caps::default(), false);
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    assert!(
        s.part.contains("kept the drive's daemon's threads waiting"),
        "{}",
        s.part
    );
    assert!(
        s.evidence.iter().any(|e| {
            e.contains(
            "the drive's daemon's serving threads waited 21 % of the run for a CPU (40 % of their ready time, 1.3 µs per I/O; their"
        )
        }),
        "{:?}",
        s.evidence
    );
    assert!(s.others_pct.is_some_and(|o| o > 30.0), "{s:?}");
}

#[test]
fn a_drives_daemon_that_hardly_waited_is_no_evidence_of_other_work() {
    let (t, r) = daemon_beside_idle_loops(5.0);
    let s = judge(&t, &[r], &Caps::default(), false);
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    assert!(s.others_pct.is_some_and(|o| o == 0.0), "{s:?}");
    // Other processes' work larger than the I/O's own (1.4 CPUs against
    // 0.92), the kernel's threads not waiting: the submitting thread (2 %
    // of the run) and the daemon (5 % of its ready time, 2 % of the run)
    // hardly waited, so its CPU time is not a limit.
    let (t, mut r) = daemon_beside_idle_loops(5.0);
    let c = r.summary.cpu.as_mut().unwrap();
    c.kernel_threads_ns_per_io = Some(0.1e9 / 160_000.0);
    c.kernel_threads_wait_ns_per_io = Some(0.0);
    c.other_processes_ns_per_io = Some((1.4 + 0.32) * 1e9 / 160_000.0);
    let s = judge(&t, &[r.clone()], &Caps::default(), false);
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(
        o.why
            .contains("but the I/O's threads waited 2 % of the run for a CPU: their CPU time is not a limit here"),
        "{}",
        o.why
    );
    // The same run with the daemon kept waiting is other work.
    let d = r.summary.transport.as_mut().unwrap();
    (d.wait_ns_per_io, d.wait_pct) = (Some(2_000.0 * 40.0 / 60.0), Some(40.0));
    let s = judge(&t, &[r], &Caps::default(), false);
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    // Nor with no wait read at all (a daemon older than the figure).
    let (t, mut r) = daemon_beside_idle_loops(40.0);
    let d = r.summary.transport.as_mut().unwrap();
    (d.wait_ns_per_io, d.wait_pct) = (None, None);
    let s = judge(&t, &[r], &Caps::default(), false);
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
}

#[test]
fn a_small_share_of_other_work_is_said_with_the_wait_either_way() {
    // The loops took 0.4 of the 2 busy CPUs (20 %), as two SCHED_IDLE
    // loops beside the study on a quiet machine did: with the submitting
    // thread waiting 3 % of the run their CPU time is said not to be a
    // limit, and a wait of 15 % is put down to the I/O's own work.
    let small = |wait: f64| {
        let mut r = loops("SCHED_IDLE", 0, wait);
        let c = r.summary.cpu.as_mut().unwrap();
        c.other_processes_ns_per_io = Some(0.4 * 1e9 / 160_000.0);
        r
    };
    let s = judge(
        &target(TargetKind::RamDevice),
        &[small(3.0)],
        &Caps::default(),
        false,
    );
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(
        o.why.contains("other processes took 20 % of the busy CPUs (yes (pid 301, SCHED_IDLE), yes (pid 302, SCHED_IDLE)), but the I/O's threads waited 3 % of the run for a CPU: their CPU time is not a limit here"),
        "{}",
        o.why
    );
    let s = judge(
        &target(TargetKind::RamDevice),
        &[small(15.0)],
        &Caps::default(),
        false,
    );
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(
        o.why.contains("the I/O's threads waited 15 % of the run for a CPU, but other processes took only 20 % of the busy CPUs: the I/O's own work kept them waiting"),
        "{}",
        o.why
    );
}

#[test]
fn sched_idle_loops_are_not_other_work_however_long_the_ios_threads_waited() {
    // Two SCHED_IDLE loops beside fio on a cloud VM (123.7K IOPS alone,
    // 126.3K with them): the submitting thread's 30 % wait is not theirs.
    let s = judge(
        &target(TargetKind::RamDevice),
        &[loops("SCHED_IDLE", 19, 30.0)],
        &Caps::default(),
        false,
    );
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(
        o.why.contains("38 % of it SCHED_IDLE work, which gives way to the I/O's threads at once; without it other processes kept 0 % of the busy CPUs"),
        "{}",
        o.why
    );
    assert_eq!(s.others_pct, Some(0.0));
}

/// A RAM loop device's job (libaio, QD 64, one thread) on a 2-vCPU
/// virtual machine beside two loops at `policy` and `nice`, as recorded:
/// the submitting thread 30 % busy and waiting 38 % of the run (57 % of
/// its ready time), the I/O's own work 0.76 CPUs, the loops 1.24.
fn loops_that_took_the_cpus(policy: &str, nice: i64) -> RunRecord {
    let at_qd64 = run("qd-64", 64, 188_000.0, 30.0, 100.0, 60.0);
    let mut r = with_threads(at_qd64, 0.46, 1.24, 57.0);
    let c = r.summary.cpu.as_mut().unwrap();
    c.process_ns_per_io = 0.3 * 1e9 / 188_000.0;
    c.thread_wait_run_pct = Some(38.0);
    c.busiest_threads = busy_loops("sh", &[(11627, 0.62), (11628, 0.62)], policy, nice);
    r
}

#[test]
fn loops_at_any_priority_are_other_work_where_the_ios_own_work_cannot_explain_its_wait() {
    // fio beside these loops: 457K IOPS alone, 213K beside SCHED_IDLE
    // ones, 191K beside nice-10 ones. Kept waiting 38 % of the run while
    // running 30 %, the thread needs the I/O's own work at 2 × 0.38 + 0.30
    // = 1.06 CPUs or more to have been kept waiting by it; it used 0.76.
    let on_ram = |r: RunRecord| {
        judge(
            &target(TargetKind::RamDevice),
            &[r],
            &Caps::default(),
            false,
        )
    };
    for (policy, nice) in [("SCHED_IDLE", 0), ("SCHED_OTHER", 10)] {
        let s = on_ram(loops_that_took_the_cpus(policy, nice));
        assert_eq!(s.limit, Cause::OtherWork, "{policy}: {s:?}");
        let short = "needs that work at 1.06 CPUs or more on 2 CPU(s), and it used 0.76: other work held the CPUs, whatever its priority";
        assert!(says(&s.evidence, short), "{policy}: {:?}", s.evidence);
    }
    // The same wait with the I/O's own work at 1.2 CPUs is within the
    // bound's margin: SCHED_IDLE loops are then given way to, as above.
    let mut r = loops_that_took_the_cpus("SCHED_IDLE", 0);
    let c = r.summary.cpu.as_mut().unwrap();
    c.kernel_threads_ns_per_io = Some(0.9 * 1e9 / 188_000.0);
    let s = on_ram(r);
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    assert!(ruled(&s, Cause::OtherWork)
        .why
        .contains("SCHED_IDLE work, which gives way"));
}

/// The loops beside a job of two threads on the 2 CPUs.
fn two_threads_beside(policy: &str, nice: i64) -> RunRecord {
    let mut r = loops(policy, nice, 25.0);
    r.workload.threads = 2;
    r
}

#[test]
fn the_ios_own_threads_waiting_for_each_other_beside_niced_loops_are_not_other_work() {
    // Two loops at nice 10 beside a job of two threads on 2 CPUs (fio 19 %
    // faster beside them): its threads waited 25 % of the run, for each
    // other as much as for the loops.
    let s = judge(
        &target(TargetKind::RamDevice),
        &[two_threads_beside("SCHED_OTHER", 10)],
        &Caps::default(),
        false,
    );
    assert_ne!(s.limit, Cause::OtherWork, "{s:?}");
    let o = ruled(&s, Cause::OtherWork);
    assert!(
        o.why
            .contains("the I/O's own 2 threads on 2 CPU(s) keep each other waiting")
            && o.why.contains("yes (pid 301, nice 10)"),
        "{}",
        o.why
    );
    assert_eq!(s.others_pct, Some(0.0));
}

#[test]
fn loops_at_the_ios_own_priority_that_took_the_cpus_are_other_work() {
    // The same job beside the loops at nice 0: they take their share of
    // the CPUs from its threads.
    let s = judge(
        &target(TargetKind::RamDevice),
        &[two_threads_beside("SCHED_OTHER", 0)],
        &Caps::default(),
        false,
    );
    assert_eq!(s.limit, Cause::OtherWork, "{s:?}");
    assert!(
        s.part.contains("waiting for a CPU 25 % of the run"),
        "{}",
        s.part
    );
    assert!(s.others_pct.is_some_and(|o| o > 30.0), "{s:?}");
}

#[test]
fn idle_priority_loops_in_another_scheduling_group_are_weighed_as_the_ios_equals() {
    // Two SCHED_IDLE loops started in a session of their own (another
    // autogroup) took 34-61 % of fio's IOPS on a RAM loop device, as loops
    // at nice 0 did: their policy lowers them only within their group.
    let waited = |apart: bool| {
        let mut r = loops("SCHED_IDLE", 19, 30.0);
        for t in &mut r.summary.cpu.as_mut().unwrap().busiest_threads {
            t.apart = apart;
        }
        judge(
            &target(TargetKind::RamDevice),
            &[r],
            &Caps::default(),
            false,
        )
    };
    let inside = waited(false);
    assert_ne!(inside.limit, Cause::OtherWork, "{inside:?}");
    let apart = waited(true);
    assert_eq!(apart.limit, Cause::OtherWork, "{apart:?}");
    assert!(
        apart
            .part
            .contains("yes (pid 301, SCHED_IDLE, nice 19, another scheduling group)"),
        "{}",
        apart.part
    );
    assert!(
        !apart.evidence.iter().any(|e| e.contains("lower priority")),
        "{:?}",
        apart.evidence
    );
}

#[test]
fn lower_priority_work_is_named_only_where_it_shares_the_studys_group() {
    let mut loops = busy_loops("sh", &[(9604, 0.44), (9603, 0.44)], "SCHED_OTHER", 10);
    loops.extend(busy_loops("sh", &[(9604, 0.40)], "SCHED_OTHER", 10));
    loops.extend(busy_loops("make", &[(77, 0.50)], "SCHED_OTHER", 0));
    let words = others::lower_in_own_group(&loops).unwrap();
    assert_eq!(
        words,
        "sh (pid 9604, nice 10) 0.44 CPUs, sh (pid 9603, nice 10) 0.44 CPUs"
    );
    let idle = busy_loops("yes", &[(5, 0.3)], "SCHED_IDLE", 0);
    assert_eq!(
        others::lower_in_own_group(&idle).as_deref(),
        Some("yes (pid 5, SCHED_IDLE) 0.30 CPUs")
    );
    // In a group of their own, or at the study's own priority: none.
    for t in &mut loops {
        t.apart = true;
    }
    assert_eq!(others::lower_in_own_group(&loops), None);
    let even = busy_loops("sh", &[(1, 0.9)], "SCHED_OTHER", 0);
    assert_eq!(others::lower_in_own_group(&even), None);
}
