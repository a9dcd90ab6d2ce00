//! The size of the block layer's requests: a `max_sectors_kb` below the
//! job's I/O is named where the device's own counters show each I/O split
//! and the device busy with the pieces, and a latency split taken of such
//! requests speaks for no part of the I/O's latency.

use super::caps::{Caps, CpuQuota, RequestCap, Setting};
use super::tests::{judge, ruled, run, target};
use super::*;
use ssdready_measured::summary::DecompSummary;

/// `max_sectors_kb` of `kib` on loop3, whose device takes 4 MiB.
fn request_of(kib: u64) -> Caps {
    Caps {
        request: Some(RequestCap {
            kib,
            hw_kib: 4096,
            setting: Setting {
                name: "queue/max_sectors_kb".into(),
                value: kib.to_string(),
                path: "/sys/block/loop3/queue/max_sectors_kb".into(),
            },
        }),
        ..Default::default()
    }
}

/// 256 KiB sequential reads at QD 16, 9.8K a second, the thread idle,
/// each making `per_io` requests on a device busy `busy` percent; and its
/// instrumented run, 86 % of whose latency came after its device part.
fn streaming(per_io: u64, busy: f64) -> Vec<RunRecord> {
    let mut r = run("qd-16", 16, 9_805.0, 30.0, 60.0, 0.9);
    r.workload.rw = "read".into();
    r.workload.bs = 256 << 10;
    let d = r.summary.disk.as_mut().unwrap();
    (d.app_ios, d.ios, d.util_pct, d.in_flight) = (9_805, 9_805 * per_io, busy, Some(90.4));
    let mut inst = r.clone();
    inst.id = "qd-16-profiled".into();
    inst.sweep = "instrumented".into();
    inst.summary.decomposition = Some(DecompSummary {
        parts: vec![
            ("driver and device".into(), 117e3, 13.0),
            ("completion to the app".into(), 805e3, 86.0),
        ],
        joined_pct: Some(99.0),
        ..Default::default()
    });
    vec![r, inst]
}

#[test]
fn a_request_size_below_the_ios_is_named_where_the_device_was_busy_with_the_pieces() {
    let t = target(TargetKind::RamDevice);
    let s = judge(&t, &streaming(64, 95.0), &request_of(4), true);
    assert_eq!(s.limit, Cause::RequestSize, "{s:?}");
    assert_eq!(s.layer, Layer::BlockQueue);
    assert!(
        s.part.contains("splits each 256 KiB I/O into 64 requests"),
        "{}",
        s.part
    );
    assert_eq!(s.setting.as_ref().unwrap().name, "queue/max_sectors_kb");
    assert!(
        s.evidence.iter().any(|e| e.contains("64.0 each")),
        "{:?}",
        s.evidence
    );
    // The device busy with pieces the host made is no limit below it.
    assert!(ruled(&s, Cause::BelowHost).why.contains("made small"));
    // The split's parts are each request's: the I/O's wait for its last
    // request is no late reap.
    let c = ruled(&s, Cause::Completions);
    assert!(c.why.contains("64.0 requests per I/O"), "{}", c.why);
}

#[test]
fn a_request_size_is_not_named_from_the_setting_alone() {
    let t = target(TargetKind::RamDevice);
    // Each I/O fits one request.
    let s = judge(&t, &streaming(1, 95.0), &request_of(1024), true);
    assert_ne!(s.limit, Cause::RequestSize, "{s:?}");
    assert!(ruled(&s, Cause::RequestSize)
        .why
        .contains("fits one request"));
    // Split, but the device idled: something above it held the I/O.
    let s = judge(&t, &streaming(64, 40.0), &request_of(4), true);
    assert_ne!(s.limit, Cause::RequestSize, "{s:?}");
    let r = ruled(&s, Cause::RequestSize);
    assert!(r.why.contains("was busy 40 %"), "{}", r.why);
    // 4 MiB reads split in four requests of 1280 KiB, the device busy:
    // pieces that large stream at the device's bandwidth.
    let mut big = streaming(4, 95.0);
    for r in &mut big {
        r.workload.bs = 4 << 20;
    }
    let s = judge(&t, &big, &request_of(1280), true);
    assert_ne!(s.limit, Cause::RequestSize, "{s:?}");
    assert!(ruled(&s, Cause::RequestSize)
        .why
        .contains("streams at its bandwidth"));
    // No setting below what the device takes: nothing of this host to raise.
    let s = judge(&t, &streaming(64, 95.0), &Caps::default(), true);
    assert_ne!(s.limit, Cause::RequestSize, "{s:?}");
    assert_ne!(s.limit, Cause::Completions, "{s:?}");
    // One request per I/O: the latency split speaks for the I/O.
    let s = judge(&t, &streaming(1, 95.0), &Caps::default(), true);
    assert_eq!(s.limit, Cause::Completions, "{s:?}");
}

#[test]
fn split_requests_under_a_quota_they_use_up_are_the_request_size_after_the_quota() {
    // The device idled, but the group's 0.30 CPUs went to the pieces: the
    // quota holds, and the request size with it.
    let t = target(TargetKind::RamDevice);
    let caps = Caps {
        cpu_quota: Some(CpuQuota {
            cpus: 0.3,
            setting: Setting {
                name: "cpu.cfs_quota_us".into(),
                value: "30000 (period 100000 µs)".into(),
                path: "/sys/fs/cgroup/cpu/planted/cpu.cfs_quota_us".into(),
            },
        }),
        ..request_of(4)
    };
    let s = judge(&t, &streaming(64, 40.0), &caps, true);
    assert_eq!(s.limit, Cause::CpuQuota, "{s:?}");
    let also = s.also_held.iter().find(|a| a.cause == Cause::RequestSize);
    assert!(also.is_some(), "{:?}", s.also_held);
    // Without the quota the idle device clears the request size.
    let s = judge(&t, &streaming(64, 40.0), &request_of(4), true);
    assert!(ruled(&s, Cause::RequestSize).why.contains("CPU to spare"));
}

#[test]
fn requests_a_request_size_splits_an_io_into_are_not_the_file_systems() {
    // fio's examples/fio-seq-read.fio on ext4 over a loop device whose
    // max_sectors_kb is 16: each 256 KiB read made 16 requests of the
    // same bytes.
    let mut t = target(TargetKind::File);
    t.filesystem = Some("ext4".into());
    let s = judge(&t, &streaming(16, 95.0), &request_of(16), true);
    assert_eq!(s.limit, Cause::RequestSize, "{s:?}");
    assert!(
        s.also_held.iter().all(|a| a.cause != Cause::FileSystem),
        "{:?}",
        s.also_held
    );
    // Twice the requests the split explains: the file system's own.
    let s = judge(&t, &streaming(32, 95.0), &request_of(16), true);
    let fs = [s.limit]
        .into_iter()
        .chain(s.also_held.iter().map(|a| a.cause));
    assert!(fs.into_iter().any(|c| c == Cause::FileSystem), "{s:?}");
}
