//! The size of the block layer's requests: a `max_sectors_kb` below the
//! job's I/O is named where the device's own counters show each I/O split
//! and the device busy with the pieces, and a latency split taken of such
//! requests speaks for no part of the I/O's latency.

use super::caps::{Caps, RequestCap, Setting};
use super::tests::{judge, ruled, run, target};
use super::*;
use ssdready_measured::summary::DecompSummary;

/// `max_sectors_kb` of `kib` on loop3, whose device takes 1280 KiB.
fn request_of(kib: u64) -> Caps {
    Caps {
        request: Some(RequestCap {
            kib,
            hw_kib: 1280,
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
    // No setting below what the device takes: nothing of this host to raise.
    let s = judge(&t, &streaming(64, 95.0), &Caps::default(), true);
    assert_ne!(s.limit, Cause::RequestSize, "{s:?}");
    assert_ne!(s.limit, Cause::Completions, "{s:?}");
    // One request per I/O: the latency split speaks for the I/O.
    let s = judge(&t, &streaming(1, 95.0), &Caps::default(), true);
    assert_eq!(s.limit, Cause::Completions, "{s:?}");
}
