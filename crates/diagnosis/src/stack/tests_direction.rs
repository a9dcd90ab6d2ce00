//! The stack's judging where a member adds little time or is slow one
//! way only: a linear target's few microseconds over members that count
//! none, and a member slow only for writes.

use super::tests::{c, raid, run};
use super::*;

#[test]
fn a_few_microseconds_over_members_that_count_none_are_not_a_slow_member() {
    // dm-0 (a linear target) counts 6 µs per I/O where null_blk counts 0:
    // more than twice, but a tenth of the 60 µs the I/O took.
    let mut r = run(
        "qd-1",
        "randread",
        4096,
        vec![
            c("nullb0", 5000, 0, 0, 0, 100),
            c("dm-0", 5000, 30, 0, 0, 150),
            c("dm-1", 5000, 0, 0, 0, 100),
        ],
    );
    r.summary.lat_mean_ns = 60_000.0;
    let j = judge(&raid("raid0"), std::slice::from_ref(&r)).unwrap();
    assert!(
        j.findings.iter().all(|f| f.disk().is_none()),
        "{:?}",
        j.findings
    );
    // At 20 µs of latency the same 6 µs is what the I/O waits for.
    r.summary.lat_mean_ns = 20_000.0;
    let j = judge(&raid("raid0"), &[r]).unwrap();
    assert!(
        j.findings.iter().any(|f| f.disk() == Some("dm-0")),
        "{:?}",
        j.findings
    );
}

#[test]
fn a_member_slow_only_for_writes_is_named_for_writes_from_the_runs_that_wrote() {
    // dm-0 holds writes 10 ms and reads not at all: fast on three read
    // runs, slow on the two that write.
    let read = |id: &str| {
        let m = |d: &str, t| c(d, 1000, t, 0, 0, 20);
        let ms = vec![m("nullb0", 0), m("dm-0", 20), m("dm-1", 0), m("nullb1", 0)];
        let mut r = run(id, "randread", 4096, ms);
        r.summary.lat_mean_ns = 100_000.0;
        r
    };
    let write = |id: &str| {
        let m = |d: &str, t| c(d, 10, 0, 1000, t, 990);
        let ms = vec![
            m("nullb0", 20),
            m("dm-0", 10_000),
            m("dm-1", 20),
            m("nullb1", 20),
        ];
        let mut r = run(id, "randwrite", 4096, ms);
        r.summary.lat_mean_ns = 10e6;
        r
    };
    let runs = [
        read("qd-1"),
        read("qd-8"),
        read("qd-32"),
        write("fill"),
        write("rw-w"),
    ];
    let j = judge(&raid("raid0"), &runs).unwrap();
    let slow: Vec<_> = j
        .findings
        .iter()
        .filter(|f| matches!(f, StackFinding::SlowMember { .. }))
        .collect();
    match slow[..] {
        [StackFinding::SlowMember {
            disk,
            direction,
            mean_ms_per_io,
            runs,
            judged,
            ..
        }] => {
            assert_eq!(
                (disk.as_str(), direction.as_deref()),
                ("dm-0", Some("writes"))
            );
            assert!((mean_ms_per_io - 10.0).abs() < 1e-9, "{mean_ms_per_io}");
            assert_eq!((runs.len(), *judged), (2, 2));
        }
        _ => panic!("{:?}", j.findings),
    }
    assert!(slow[0].words().0.contains("for writes"));
    // Its own time, on the writes; nothing is named on the reads.
    assert!(j.findings.iter().any(|f| matches!(f,
        StackFinding::SlowLayer { disk, direction: Some(d), .. } if disk == "dm-0" && d == "writes")));
}

#[test]
fn a_member_busy_far_longer_than_its_peers_is_named_whatever_its_time_per_io() {
    // dm-0 keeps its I/O in flight 90 % of the run against 20 %, at the
    // same time per I/O: the latency's test is the time's alone.
    let mut r = run(
        "qd-32",
        "randread",
        4096,
        vec![
            c("nullb0", 1000, 100, 0, 0, 200),
            c("dm-0", 1000, 100, 0, 0, 900),
            c("dm-1", 1000, 100, 0, 0, 200),
        ],
    );
    r.summary.lat_mean_ns = 1e6;
    let j = judge(&raid("raid0"), &[r]).unwrap();
    assert!(
        j.findings.iter().any(
            |f| matches!(f, StackFinding::SlowMember { disk, direction: None, .. } if disk == "dm-0")
        ),
        "{:?}",
        j.findings
    );
}
