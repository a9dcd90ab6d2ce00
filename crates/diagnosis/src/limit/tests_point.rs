//! The user's job judged by the device study's causes: its repeats and
//! its variants made up as the runs of a real job would record them.

use super::caps::Caps;
use super::job::{Dir, JobFigures};
use super::point::{classify_job, directions, per_job, words};
use super::tests::{machine, queue_of, ruled, run, target};
use super::Cause;
use ssdready_measured::record::{RunRecord, TargetKind};

/// The job's repeats at its depth (`qd-N`, `qd-N#2`, …), each a run of
/// `run`'s shape at the IOPS given.
fn repeats(qd: u32, iops: &[f64], thread: f64, cpus: f64, held: f64) -> Vec<RunRecord> {
    iops.iter()
        .enumerate()
        .map(|(i, x)| {
            let id = match i {
                0 => format!("qd-{qd}"),
                n => format!("qd-{qd}#{}", n + 1),
            };
            let mut r = run(&id, qd, *x, thread, cpus, held);
            r.repeat = i as u32 + 1;
            r
        })
        .collect()
}

/// The job with twice its jobs: the same depth, two threads.
fn two_jobs(qd: u32, iops: f64, thread: f64, cpus: f64, held: f64) -> RunRecord {
    let mut r = run("numjobs-x2", qd, iops, thread, cpus, held);
    (r.point, r.sweep, r.workload.threads) = ("numjobs-x2".into(), "job".into(), 2);
    r
}

#[test]
fn a_job_that_wants_32_ios_behind_a_4_request_queue_is_held_by_the_devices_queue() {
    // kbench's random reads at QD 32 on a loop device with nr_requests 4:
    // the device held about 4, and neither depth nor a second job moved
    // the rate.
    let mut runs = repeats(32, &[61_000.0, 60_000.0, 59_500.0], 30.0, 40.0, 3.9);
    runs.push(run("qd-16", 16, 59_000.0, 30.0, 40.0, 3.9));
    runs.push(run("qd-64", 64, 60_500.0, 30.0, 40.0, 3.9));
    runs.push(run("qd-128", 128, 60_800.0, 30.0, 40.0, 3.9));
    runs.push(two_jobs(32, 61_200.0, 30.0, 45.0, 3.9));
    let caps = queue_of(4, "loop3");
    let t = target(TargetKind::RamDevice);
    let s = classify_job(&t, &runs, 32, &machine(), &caps);
    assert_eq!(s.limit, Cause::DeviceQueue, "{s:?}");
    let set = s.setting.as_ref().expect("the queue's setting");
    assert_eq!(set.value, "4");
    assert_eq!(set.path, "/sys/block/loop3/queue/nr_requests");
    assert_eq!(s.repeats.len(), 3);
    assert!(s.repeats_agree, "{:?}", s.repeats);
    let lines = words(&s, "");
    assert!(lines[0].starts_with("the device's queue: "), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("/sys/block/loop3/queue/nr_requests")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("more I/Os in flight bought nothing")),
        "{lines:?}"
    );
    // A shallower variant that ran faster than the job (the jobs of a
    // file sharing one device differently) is said beside the deeper.
    let mut faster = runs.clone();
    let shallow = faster.iter_mut().find(|r| r.id == "qd-16").unwrap();
    shallow.summary.iops = 62_000.0;
    let s = classify_job(&t, &faster, 32, &machine(), &caps);
    let said = "with 32 as written, and 62.0K IOPS with 16 in flight (qd-16)";
    assert!(
        s.evidence.iter().any(|l| l.ends_with(said)),
        "{:?}",
        s.evidence
    );
    // The same runs under a queue of 64 requests: the queue is not it.
    let s = classify_job(&t, &runs, 32, &machine(), &queue_of(64, "loop3"));
    assert_ne!(s.limit, Cause::DeviceQueue, "{s:?}");
}

/// A job of 4 KiB random reads at QD 64 on a virtio disk answering at its
/// own rate: the disk holding about 60 of 64, busy 99 %, the submitting
/// thread a quarter busy; `deeper` is what iodepth ×2 and ×4 gave.
fn virtio_job(deeper: [f64; 2]) -> Vec<RunRecord> {
    let mut runs = repeats(64, &[98_200.0, 91_000.0, 99_700.0], 24.0, 30.0, 60.0);
    runs.push(run("qd-32", 32, 86_000.0, 22.0, 28.0, 30.0));
    runs.push(run("qd-128", 128, deeper[0], 25.0, 30.0, 120.0));
    runs.push(run("qd-256", 256, deeper[1], 25.0, 30.0, 240.0));
    runs.push(two_jobs(64, 94_300.0, 20.0, 35.0, 120.0));
    for r in &mut runs {
        r.summary.disk.as_mut().unwrap().name = "vda".into();
        r.summary.disk.as_mut().unwrap().util_pct = 99.0;
    }
    runs
}

#[test]
fn a_job_on_a_virtio_disk_at_its_rate_is_a_rate_limit_below_this_host() {
    let caps = Caps {
        unseen: Some("a virtio disk: its backend's limits are not visible from this host".into()),
        ..Default::default()
    };
    let t = target(TargetKind::BlockDevice);
    // Depth ×2 −7 %, ×4 −13.5 %: depth bought nothing.
    let s = classify_job(&t, &virtio_job([91_300.0, 84_900.0]), 64, &machine(), &caps);
    assert_eq!(s.limit, Cause::BelowHost, "{s:?}");
    assert!(s.part.contains("between it and this host"), "{}", s.part);
    assert!(
        s.evidence.iter().any(|e| e.contains("24 % busy")),
        "{:?}",
        s.evidence
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("qd-128 (128 in flight)")),
        "{:?}",
        s.evidence
    );
    assert_eq!(s.iops, 99_700.0);
    // Where depth ×2 bought 40 %, the rate still grew: no limit below.
    let s = classify_job(
        &t,
        &virtio_job([140_000.0, 150_000.0]),
        64,
        &machine(),
        &caps,
    );
    assert_ne!(s.limit, Cause::BelowHost, "{s:?}");
    let b = ruled(&s, Cause::BelowHost);
    assert!(b.why.contains("still grew"), "{}", b.why);
}

#[test]
fn a_second_thread_that_gains_where_twice_the_depth_does_not_is_said_per_thread() {
    // kubestr's job on a 16-CPU virtio guest: two threads +13 % (fio's
    // A/B +11 %), twice the depth in one thread +3 %; the thread a quarter
    // busy. Not a limit of the device's: it took more from two threads.
    let caps = Caps {
        unseen: Some("a virtio disk: its backend's limits are not visible from this host".into()),
        ..Default::default()
    };
    let t = target(TargetKind::BlockDevice);
    let mut runs = virtio_job([103_000.0, 101_000.0]);
    let two = runs.iter_mut().find(|r| r.id == "numjobs-x2").unwrap();
    two.summary.iops = 113_000.0;
    let s = classify_job(&t, &runs, 64, &machine(), &caps);
    assert_eq!(s.limit, Cause::NotIdentified, "{s:?}");
    assert!(
        s.part.contains("the rate grew with threads, not with I/Os in flight: numjobs-x2 (2 threads, 128 in flight) 113.0K IOPS, +13.3 %"),
        "{}",
        s.part
    );
    assert!(
        s.part
            .contains("where qd-128 (128 in flight from 1 thread(s)) gave 103.0K IOPS"),
        "{}",
        s.part
    );
    // Where the deeper queue gained as much, the growth is with I/Os in
    // flight: nothing is said per thread.
    let mut runs = virtio_job([114_000.0, 101_000.0]);
    runs.iter_mut()
        .find(|r| r.id == "numjobs-x2")
        .unwrap()
        .summary
        .iops = 113_000.0;
    let s = classify_job(&t, &runs, 64, &machine(), &caps);
    assert!(!s.part.contains("grew with threads"), "{}", s.part);
}

#[test]
fn a_job_with_nothing_binding_is_not_identified_with_what_was_ruled_out() {
    // QD 8 on an idle host and a device half busy, depth ×2 gaining 80 %.
    let mut runs = repeats(8, &[20_000.0, 20_500.0, 19_800.0], 20.0, 25.0, 7.5);
    for r in &mut runs {
        r.summary.disk.as_mut().unwrap().util_pct = 60.0;
    }
    runs.push(run("qd-16", 16, 36_000.0, 30.0, 35.0, 15.0));
    let t = target(TargetKind::BlockDevice);
    let s = classify_job(&t, &runs, 8, &machine(), &Caps::default());
    assert_eq!(s.limit, Cause::NotIdentified, "{s:?}");
    assert!(
        s.part.contains("no candidate had positive evidence"),
        "{}",
        s.part
    );
    for c in [Cause::BelowHost, Cause::DeviceQueue, Cause::IoThrottle] {
        assert!(!ruled(&s, c).why.is_empty());
    }
    let lines = words(&s, "reads");
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("reads: not identified: "), "{lines:?}");
    assert!(
        lines[0].contains("a rate limit below this host: "),
        "{lines:?}"
    );
}

#[test]
fn a_job_whose_repeats_all_failed_says_so() {
    let mut runs = repeats(8, &[20_000.0], 20.0, 25.0, 7.5);
    runs[0].error = Some("the device went away".into());
    let t = target(TargetKind::BlockDevice);
    let s = classify_job(&t, &runs, 8, &machine(), &Caps::default());
    assert_eq!(s.limit, Cause::NotIdentified);
    assert_eq!(s.part, "no run of the job as written completed");
}

#[test]
fn a_job_that_reads_and_writes_is_judged_on_each_directions_rate() {
    let r = RunRecord {
        workload: ssdready_measured::record::Workload {
            rw: "randrw".into(),
            ..Default::default()
        },
        summary: ssdready_measured::summary::PointSummary {
            iops: 1000.0,
            read_iops: 700.0,
            write_iops: 300.0,
            bw_bytes_per_s: 4_096_000.0,
            ..Default::default()
        },
        ..Default::default()
    };
    let d = directions(std::slice::from_ref(&r));
    assert_eq!(d.len(), 2);
    let (label, runs) = &d[1];
    assert_eq!(*label, "writes");
    assert_eq!(runs[0].workload.rw, "randwrite");
    assert_eq!(runs[0].summary.iops, 300.0);
    assert!((runs[0].summary.bw_bytes_per_s - 1_228_800.0).abs() < 1e-6);
    let mut reads_only = r.clone();
    reads_only.summary.write_iops = 0.0;
    let d = directions(&[reads_only]);
    assert_eq!((d.len(), d[0].0), (1, ""));
}

/// A job's figures in one run: its reads' and writes' IOPS (4 KiB each).
fn figures(name: &str, reads: f64, writes: f64) -> JobFigures {
    let dir = |iops: f64| {
        (iops > 0.0).then(|| Dir {
            iops,
            bw_bytes_per_s: iops * 4096.0,
            ..Default::default()
        })
    };
    JobFigures {
        name: name.into(),
        read: dir(reads),
        write: dir(writes),
        cpu_per_io_ns: None,
    }
}

#[test]
fn a_file_of_a_reading_job_and_a_writing_job_is_judged_job_by_job_each_on_its_own_rate() {
    let runs = vec![
        run("qd-8", 8, 30_000.0, 40.0, 20.0, 7.5),
        run("qd-8#2", 8, 31_000.0, 40.0, 20.0, 7.5),
    ];
    let jobs = vec![
        vec![
            figures("reads", 20_000.0, 0.0),
            figures("writes", 0.0, 10_000.0),
        ],
        vec![
            figures("reads", 21_000.0, 0.0),
            figures("writes", 0.0, 10_000.0),
        ],
    ];
    let each = per_job(&runs, &jobs);
    let labels: Vec<&str> = each.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(labels, ["[reads] reads", "[writes] writes"]);
    let (_, writes) = &each[1];
    assert_eq!(writes[0].workload.rw, "randwrite");
    let rates: Vec<f64> = writes.iter().map(|r| r.summary.iops).collect();
    assert_eq!(rates, [10_000.0, 10_000.0]);
    assert_eq!(writes[1].summary.bw_bytes_per_s, 10_000.0 * 4096.0);
    // A run that gave no result has no rate of the job's.
    let short = per_job(&runs, &jobs[..1]);
    assert_eq!(short[0].1[1].summary.iops, 0.0);
    // One job: nothing to judge apart.
    let one = vec![vec![figures("reads", 20_000.0, 0.0)]; 2];
    assert!(per_job(&runs, &one).is_empty());
    let t = target(TargetKind::BlockDevice);
    let s = classify_job(&t, &each[0].1, 8, &machine(), &Caps::default());
    assert!(words(&s, &each[0].0)[0].starts_with("[reads] reads: "));
}

#[test]
fn a_job_the_page_cache_served_is_not_argued_from_depth() {
    // Buffered random reads the device never saw, and a deeper queue that
    // bought nothing: the cache's rate, without the path's evidence.
    let cached = |id: &str, qd: u32, iops: f64| {
        let mut r = run(id, qd, iops, 27.0, 83.0, 0.1);
        (r.workload.rw, r.workload.direct) = ("randread".into(), false);
        r.summary.read_iops = iops;
        let d = r.summary.disk.as_mut().unwrap();
        (d.read_bytes, d.cache_hit_pct) = (0, Some(100.0));
        r
    };
    let mut runs: Vec<RunRecord> = (0..3)
        .map(|i| {
            let id = ["qd-16", "qd-16#2", "qd-16#3"][i];
            let mut r = cached(id, 16, 120_000.0 + 500.0 * i as f64);
            r.repeat = i as u32 + 1;
            r
        })
        .collect();
    runs.push(cached("qd-32", 32, 119_000.0));
    runs.push(cached("qd-64", 64, 120_400.0));
    let t = target(TargetKind::RamDevice);
    let s = classify_job(&t, &runs, 16, &machine(), &Caps::default());
    assert_eq!(s.limit, Cause::PageCache, "{s:?}");
    let lines = words(&s, "");
    assert!(
        !lines.iter().any(|l| l.contains("in flight bought nothing")),
        "{lines:?}"
    );
}
