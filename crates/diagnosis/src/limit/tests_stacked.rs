//! A loop device over a file on a disk: the disk named below the host when
//! the `ceiling` sweep shows it giving through the loop device what its
//! file gives read directly, and not otherwise.

use super::caps::Caps;
use super::tests::{assert_vda_below, curve, judge, queue_of, ruled, run};
use super::*;
use ssdready_measured::record::{RunContext, Workload};
use ssdready_measured::stack_layers::{LayerKind, MemberCounters, Stack, StackLayer};

/// loop0 over /var/tmp/f, a file on vda.
fn loop_over_file() -> TargetProfile {
    let layer = |disk: &str, kind: LayerKind, under: &[&str]| StackLayer {
        disk: disk.into(),
        kind,
        under: under.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let mut t = super::tests::target(TargetKind::BlockDevice);
    t.spec = "/dev/loop0".into();
    t.device = Some("loop0".into());
    t.stack = Some(Stack {
        target: "loop0".into(),
        layers: vec![
            layer(
                "loop0",
                LayerKind::Loop {
                    backing_file: Some("/var/tmp/f".into()),
                },
                &["vda"],
            ),
            layer("vda", LayerKind::default(), &[]),
        ],
        physical: vec!["vda".into()],
        ..Default::default()
    });
    t
}

/// A `ceiling` run of `path` in `round` giving `iops`, with vda's own
/// count of I/Os over it.
fn ceiling_run(path: &str, round: u32, iops: f64, vda_ios: u64) -> RunRecord {
    let who = if path.starts_with("/dev/") {
        "stack"
    } else {
        "loop-file"
    };
    RunRecord {
        id: format!("ceiling-{who}-qd64#{round}"),
        sweep: crate::stack::ceiling::SWEEP.into(),
        repeat: round,
        workload: Workload {
            rw: "randread".into(),
            bs: 4096,
            qd: 64,
            targets: vec![path.into()],
            ..Default::default()
        },
        summary: ssdready_measured::summary::PointSummary {
            iops,
            ..Default::default()
        },
        context: Some(RunContext {
            members: vec![MemberCounters {
                disk: "vda".into(),
                read_ios: vda_ios,
                window_ms: 1000,
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The peak at QD 64, 20K IOPS, the CPUs half idle, loop0 holding 3.4 of
/// the 64 I/Os and busy 81 % (the I/Os waited above its counters).
fn peak() -> RunRecord {
    let mut r = run("qd-64", 64, 20_000.0, 40.0, 45.0, 3.4);
    let d = r.summary.disk.as_mut().unwrap();
    (d.name, d.util_pct) = ("loop0".into(), 81.0);
    r.workload.targets = vec!["/dev/loop0".into()];
    r
}

/// Two rounds of the loop device against its file read directly.
fn rounds(file_iops: [f64; 2]) -> Vec<RunRecord> {
    let mut v = Vec::new();
    for (round, file) in (1..).zip(file_iops) {
        v.push(ceiling_run("/dev/loop0", round, 20_000.0, 20_000));
        v.push(ceiling_run("/var/tmp/f", round, file, file as u64));
    }
    v
}

#[test]
fn a_loop_devices_disk_giving_what_its_file_gives_directly_is_below_the_host() {
    let t = loop_over_file();
    // Without the file read directly: the loop device's counters say the
    // I/Os waited above it.
    let s = judge(&t, &[peak()], &Caps::default(), true);
    assert_ne!(s.limit, Cause::BelowHost, "{s:?}");
    // The file read directly gives 22–24K; through loop0 vda gave 20K.
    let mut runs = vec![peak()];
    runs.extend(rounds([22_000.0, 24_000.0]));
    let s = judge(&t, &runs, &Caps::default(), true);
    assert_vda_below(
        &s,
        "loop0",
        "read directly, /var/tmp/f (on vda) gave 23000 IOPS; within loop0's runs vda gave 20000",
    );
    let submission = ruled(&s, Cause::SubmissionPath);
    assert!(
        submission.why.ends_with("the queue for it"),
        "{submission:?}"
    );
}

#[test]
fn a_loop_device_well_below_what_its_file_gives_directly_is_not_its_disk() {
    // The file read directly gives 56K: the loop device's own path holds
    // it, not the disk.
    let t = loop_over_file();
    let mut runs = vec![peak()];
    runs.extend(rounds([55_000.0, 57_000.0]));
    let s = judge(&t, &runs, &Caps::default(), true);
    assert_ne!(s.limit, Cause::BelowHost, "{s:?}");
    let c = crate::stack::ceiling::ceiling(t.stack.as_ref().unwrap(), &runs[1..]).unwrap();
    assert!(c.held_back, "{c:?}");
    let (words, todo) = c.words();
    assert!(
        words.starts_with("loop0 (loop device over /var/tmp/f, on vda) delivers 20.0K IOPS")
            && words.contains("of its backing file's (/var/tmp/f, on vda, read directly) 56.0K")
            && words.ends_with("the loop device's own path holds it back, not the disk under it"),
        "{words}"
    );
    assert!(todo.contains("without loop0"), "{todo}");
    assert!(c
        .figures()
        .iter()
        .any(|f| f.0 == "/var/tmp/f (on vda) read directly"));
}

#[test]
fn a_queue_full_because_its_device_saturates_as_it_fills_is_not_the_queue() {
    // loop0's nr_requests of 128 over a file on a disk that saturates
    // near QD 128: the queue full at QD 128 and 256, the rate 77.9K at
    // QD 64, 85.3K at 128 and 78.4K at 256.
    let caps = queue_of(128, "loop0");
    let peak = run("qd-128", 128, 85_300.0, 20.0, 30.0, 115.0);
    let deep = run("qd-256", 256, 78_400.0, 20.0, 30.0, 123.0);
    let t = loop_over_file();
    let judge_with = |at_64: f64| {
        let mut f = super::tests::figures(&peak, true);
        f.knee_qd = Some(64);
        f.qd_curve = curve(&[(64, at_64), (128, 85_300.0), (256, 78_400.0)]);
        classify(
            &t,
            &[peak.clone(), deep.clone()],
            &f,
            &super::tests::machine(),
            &caps,
        )
    };
    let s = judge_with(77_900.0);
    assert_ne!(s.limit, Cause::DeviceQueue, "{s:?}");
    let q = ruled(&s, Cause::DeviceQueue);
    assert!(
        q.why.contains("from QD 64 to QD 128 added 9 %")
            && q.why.ends_with("saturates as its queue fills"),
        "{q:?}"
    );
    // The rate still climbing steeply into the queue's size: the queue.
    let s = judge_with(52_000.0);
    assert_eq!(s.limit, Cause::DeviceQueue, "{s:?}");
}
