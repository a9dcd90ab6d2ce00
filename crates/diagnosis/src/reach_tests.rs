//! The device's share of the study's I/O, from recorded measurements: a
//! sparse file whose reads the device never saw, the page cache answering
//! buffered reads, and a device that served them all.

use super::*;
use ssdready_measured::record::{Machine, TargetKind, Workload};
use ssdready_measured::summary::{DiskSummary, PointSummary};

/// A run of 4 KiB random reads on `data` at `qd`: the study completed
/// `app` I/Os, the device's counters saw `dev` requests of 4 KiB, taking
/// `block_ns` each on average.
fn run(qd: u32, iops: f64, app: u64, dev: u64, block_ns: f64, direct: bool) -> RunRecord {
    RunRecord {
        id: format!("qd-{qd}"),
        point: format!("qd-{qd}"),
        sweep: "qd".into(),
        repeat: 1,
        workload: Workload {
            rw: "randread".into(),
            bs: 4096,
            qd,
            threads: 1,
            engine: Some("io_uring".into()),
            direct,
            targets: vec!["data".into()],
            ..Default::default()
        },
        clock: "real".into(),
        summary: PointSummary {
            ios: app,
            iops,
            read_iops: iops,
            bw_bytes_per_s: iops * 4096.0,
            lat_mean_ns: 1e9 / iops * qd as f64,
            window_s: 1.0,
            disk: Some(DiskSummary {
                name: "vda".into(),
                ios: dev,
                bytes: dev * 4096,
                app_ios: app,
                app_bytes: app * 4096,
                read_bytes: dev * 4096,
                block_mean_ns: (dev > 0).then_some(block_ns),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn file(created: bool) -> TargetProfile {
    TargetProfile {
        spec: "data".into(),
        kind: TargetKind::File,
        transport: "virtio".into(),
        device: Some("vda".into()),
        filesystem: Some("ext4".into()),
        mount_point: Some("/".into()),
        size_bytes: 1 << 30,
        logical_block_size: 512,
        created_by_study: created,
        ..Default::default()
    }
}

/// The sparse file as a new user studied it: 320.7K IOPS at QD 1, and a
/// stray read of another process's on the same disk during the QD 1 run.
fn sparse_runs() -> Vec<RunRecord> {
    vec![
        run(1, 320_700.0, 320_700, 1, 90_910.0, true),
        run(4, 900_000.0, 900_000, 0, 0.0, true),
        run(16, 1_100_000.0, 1_100_000, 433, 50_000.0, true),
    ]
}

#[test]
fn a_device_that_saw_none_of_the_reads_is_almost_never_asked() {
    let r = of(&sparse_runs(), Some("vda")).unwrap();
    assert_eq!(r.device, "vda");
    assert_eq!(r.study_ios, 2_320_700);
    assert_eq!(r.device_ios, 434);
    assert!(r.reached_pct < 0.1, "{r:?}");
    assert!(r.almost_none() && r.short());
    let line = r.line().unwrap();
    assert!(
        line.starts_with("THE DEVICE WAS ALMOST NEVER ASKED"),
        "{line}"
    );
    assert!(
        line.contains("434 requests") && line.contains("not vda's"),
        "{line}"
    );
}

#[test]
fn a_device_that_saw_zero_of_n_reads_is_named_first_and_lends_no_device_time() {
    let runs = sparse_runs();
    let t = [file(false)];
    let j = crate::judge(&crate::Inputs::of(&t, &Machine::default(), &runs));
    let first = &j.verdicts[0];
    assert_eq!(first.rule, "device-not-reached", "{:#?}", j.verdicts);
    assert!(
        first.finding.contains("vda served 434 requests"),
        "{}",
        first.finding
    );
    assert!(first.finding.contains("not vda's"), "{}", first.finding);
    assert!(
        first.recommendation.contains("Lay out data"),
        "{}",
        first.recommendation
    );
    assert_eq!(first.confidence, "high");
    assert_eq!(j.figures.device_reach.as_ref().unwrap().device_ios, 434);
    // The other process's stray read at QD 1 is no device time of the study's.
    assert!(
        j.figures.platform_share_qd1.is_none(),
        "{:?}",
        j.figures.platform_share_qd1
    );
    assert!(j.figures.qd_curve.iter().all(|c| c.block_ns.is_none()));
    assert!(
        j.verdicts.iter().all(|v| !v.finding.contains("90.91")),
        "{:#?}",
        j.verdicts
    );
}

#[test]
fn reads_the_page_cache_answered_are_the_caches_not_the_devices() {
    // Buffered reads of a file already in the page cache: the device saw
    // 12 of 400,000 (the file system's own).
    let runs = vec![run(1, 400_000.0, 400_000, 12, 60_000.0, false)];
    let r = of(&runs, None).unwrap();
    assert!(r.almost_none(), "{r:?}");
    let t = [file(true)];
    let v = verdict(&r, &t[0]).unwrap();
    assert!(v.finding.contains("page cache"), "{}", v.finding);
    assert!(
        v.recommendation.contains("lays out the files it creates"),
        "{}",
        v.recommendation
    );
}

#[test]
fn a_device_that_served_the_reads_says_nothing() {
    let runs = vec![
        run(1, 12_000.0, 12_000, 12_010, 70_000.0, true),
        run(16, 150_000.0, 150_000, 149_000, 90_000.0, true),
    ];
    let r = of(&runs, None).unwrap();
    assert!(r.reached_pct > 99.0, "{r:?}");
    assert!(r.line().is_none());
    assert!(verdict(&r, &file(false)).is_none());
    let t = [file(false)];
    let j = crate::judge(&crate::Inputs::of(&t, &Machine::default(), &runs));
    assert!(j.verdicts.iter().all(|v| v.rule != "device-not-reached"));
    // Its device time is the block layer's, where the counts agree.
    assert_eq!(j.figures.platform_share_qd1.unwrap().device_ns, 70_000.0);
}

#[test]
fn half_the_reads_at_the_device_is_only_part() {
    let runs = vec![run(1, 10_000.0, 10_000, 3_000, 70_000.0, true)];
    let r = of(&runs, None).unwrap();
    assert!(!r.almost_none() && r.short(), "{r:?}");
    assert!(r.line().unwrap().starts_with("THE DEVICE SERVED ONLY PART"));
    assert_eq!(verdict(&r, &file(false)).unwrap().confidence, "medium");
}

#[test]
fn direct_runs_decide_where_there_are_some() {
    // The buffered sweep's cache hits do not make a direct study's device
    // unreached.
    let runs = vec![
        run(1, 10_000.0, 10_000, 10_000, 70_000.0, true),
        run(2, 500_000.0, 500_000, 0, 0.0, false),
    ];
    let r = of(&runs, None).unwrap();
    assert_eq!(r.runs, vec!["qd-1".to_string()]);
    assert!(!r.short());
}

#[test]
fn no_device_counters_no_reach() {
    let mut r = run(1, 10_000.0, 10_000, 0, 0.0, true);
    r.summary.disk = None;
    assert!(of(&[r], None).is_none());
}
