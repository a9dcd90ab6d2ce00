//! The submission path against a rate limit below the host: the path holds
//! only with its submitting thread busy, and requests waiting in the block
//! layer for a virtual disk that takes no more count against the disk.

use super::caps::Caps;
use super::tests::{classify_with, ruled, run, target};
use super::*;
use crate::figures::curve::Scaling;
use ssdready_measured::summary::DecompSummary;

/// A run at QD `qd` with its thread `thread` % busy, the device holding
/// `held` of the I/Os and busy `util` % of the time, and its instrumented
/// twin whose decomposition puts `above` % of the latency in submission
/// and the block layer.
fn at_peak(qd: u32, thread: f64, held: f64, util: f64, above: f64) -> Vec<RunRecord> {
    let mut r = run(&format!("qd-{qd}"), qd, 110_000.0, thread, 60.0, held);
    r.summary.disk.as_mut().unwrap().util_pct = util;
    let mut inst = r.clone();
    inst.id = format!("qd-{qd}-profiled");
    inst.sweep = "instrumented".into();
    inst.summary.decomposition = Some(DecompSummary {
        parts: vec![
            ("above block, submission".into(), 1e6, above / 2.0),
            ("block layer and scheduler".into(), 1e6, above / 2.0),
            ("driver and device".into(), 1e6, 100.0 - above),
        ],
        joined_pct: Some(99.0),
        ..Default::default()
    });
    vec![r, inst]
}

fn virtio() -> Caps {
    Caps {
        unseen: Some("a virtio disk: its backend's limits are not visible from this host".into()),
        ..Default::default()
    }
}

/// 16 threads at QD 1 giving `iops`, one thread at QD 16 97K.
fn threads_gave(iops: f64) -> Vec<Scaling> {
    vec![Scaling {
        threads: 16,
        qd_per_thread: 1,
        iops,
        depth_iops: Some(97_000.0),
        ..Default::default()
    }]
}

#[test]
fn a_busy_submitting_thread_with_the_latency_above_an_idle_device_is_the_submission_path() {
    let runs = at_peak(32, 78.0, 3.0, 30.0, 65.0);
    let t = target(TargetKind::BlockDevice);
    for caps in [Caps::default(), virtio()] {
        let s = classify_with(&t, &runs, &caps, true, &[]);
        assert_eq!(s.limit, Cause::SubmissionPath, "{s:?}");
        assert!(
            s.evidence[0].contains("65 % of the latency"),
            "{:?}",
            s.evidence
        );
    }
}

#[test]
fn a_submitting_thread_mostly_idle_rules_the_submission_path_out_by_its_busy_share() {
    let runs = at_peak(32, 32.0, 3.0, 30.0, 65.0);
    let s = classify_with(
        &target(TargetKind::BlockDevice),
        &runs,
        &Caps::default(),
        true,
        &[],
    );
    assert_ne!(s.limit, Cause::SubmissionPath, "{s:?}");
    let why = &ruled(&s, Cause::SubmissionPath).why;
    assert!(
        why.starts_with("the submitting thread was 32 % busy"),
        "{why}"
    );
}

#[test]
fn a_virtio_disk_full_of_the_ios_while_threads_buy_nothing_is_below_the_host_though_the_thread_was_busy(
) {
    // Two CPUs: the thread 75 % busy (the host "busy" by the old measure),
    // the disk holding 56 of the 64 I/Os and busy 99 % of the time, the
    // rest waiting in the block layer (60 % of the latency).
    let runs = at_peak(64, 75.0, 56.0, 99.0, 60.0);
    let t = target(TargetKind::BlockDevice);
    let s = classify_with(&t, &runs, &virtio(), true, &threads_gave(99_900.0));
    assert_eq!(s.limit, Cause::BelowHost, "{s:?}");
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("16 threads at QD 1 gave 99.9K IOPS")),
        "{:?}",
        s.evidence
    );
    let why = &ruled(&s, Cause::SubmissionPath).why;
    assert!(
        why.contains("loop3 held 56.0 of the 64 I/Os") && why.contains("takes no more"),
        "{why}"
    );
    // Threads that bought 40 % more: the disk took more, so the wait was
    // not its limit, and the path that kept the thread busy holds.
    let s = classify_with(&t, &runs, &virtio(), true, &threads_gave(136_000.0));
    assert_eq!(s.limit, Cause::SubmissionPath, "{s:?}");
    assert!(
        ruled(&s, Cause::BelowHost)
            .why
            .contains("the submitting thread was 75 % busy"),
        "{s:?}"
    );
    // A disk this host sees whole (no virtual backend): as before.
    let s = classify_with(&t, &runs, &Caps::default(), true, &threads_gave(99_900.0));
    assert_eq!(s.limit, Cause::SubmissionPath, "{s:?}");
}
