//! The plan ranked by what each change can buy: a large estimate is
//! tried first, in a quick study too, whatever the findings' order; an
//! untested large one is listed with its estimate and keeps the answer
//! from calling the host's figures final.

use super::*;
use crate::levers::{shipped, At, Kind};
use crate::trials::command_to_try;
use crate::trials::section::{answer, Section};

fn num(v: f64) -> crate::facts::Fact {
    crate::facts::Fact::of(crate::facts::Value::Num(v), "count", Vec::new())
}

/// A loop device whose findings name the submission path, with 1 MiB
/// reads split 128 ways (`max_sectors_kb` 8 of 1280).
fn split_device() -> Context {
    let mut cx = Context {
        cause: Cause::SubmissionPath,
        cpu_list: "0-1".into(),
        large_read_split: Some(128.0),
        ..Default::default()
    };
    let mut kind = num(0.0);
    kind.value = crate::facts::Value::Text("BlockDevice".into());
    cx.facts.insert("target_kind".into(), kind);
    for (k, v) in [("peak_qd", 32.0), ("cpus", 2.0)] {
        cx.facts.insert(k.into(), num(v));
    }
    for (k, v) in [
        ("scheduler", "[none] mq-deadline"),
        ("nr_requests", "128"),
        ("nomerges", "0"),
        ("iostats", "1"),
        ("rq_affinity", "1"),
        ("max_sectors_kb", "8"),
        ("max_hw_sectors_kb", "1280"),
    ] {
        cx.queue.insert(k.into(), v.into());
    }
    cx
}

fn at(a: At) -> Option<Point> {
    let large = a == At::Large;
    Some(Point {
        rw: if large { "read" } else { "randread" }.into(),
        bs: if large { 1 << 20 } else { 4096 },
        qd: if large { 8 } else { 32 },
        threads: 1,
        engine: Some("io_uring".into()),
        direct: true,
    })
}

fn asked() -> Consent {
    Consent {
        device: true,
        root: true,
        asked: true,
        ..Default::default()
    }
}

#[test]
fn a_quick_study_tries_the_change_with_a_large_estimate_first() {
    let cx = split_device();
    let fired = levers::fired(&cx, &[]);
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"max-sectors"), "{ids:?}");
    assert!(todo[0].estimate.as_ref().is_some_and(|e| e.large()));
    // The small ones the findings point at still fill the quick study's
    // share; the rest are listed as left for a full study.
    assert!(ids.len() >= 2, "{ids:?}");
    assert!(not.iter().any(|u| u.reason == Reason::Quick), "{not:?}");
}

#[test]
fn a_large_estimate_ranks_before_the_levers_the_cause_names() {
    let mut cx = split_device();
    // The findings name nothing that points at max-sectors: its estimate
    // alone brings it in, and first.
    cx.cause = Cause::OneCore;
    let (todo, _) = plan(&shipped(), &cx, &[], &asked(), false, &at);
    assert_eq!(todo[0].lever.id, "max-sectors");
    // Without the split it has no estimate and no place at the front.
    cx.large_read_split = None;
    let (todo, _) = plan(&shipped(), &cx, &[], &asked(), false, &at);
    assert!(todo.iter().all(|p| p.lever.id != "max-sectors"));
}

#[test]
fn an_untested_large_change_is_listed_with_its_estimate_and_keeps_the_answer_open() {
    let cx = split_device();
    let fired = levers::fired(&cx, &[]);
    let user = Consent {
        device: true,
        root: true,
        ..Default::default()
    };
    let (todo, not) = plan(&shipped(), &cx, &fired, &user, true, &at);
    assert!(todo.iter().all(|p| p.lever.kind != Kind::Queue));
    let mut u = not
        .iter()
        .find(|u| u.lever == "max-sectors")
        .cloned()
        .expect("max-sectors is listed");
    assert_eq!(u.reason, Reason::NotAsked);
    assert!(u.large(), "{u:?}");
    u.command = command_to_try(u.reason, "/dev/loop3");
    let s = Section {
        trials: vec![crate::trials::Trial {
            outcome: crate::trials::Outcome::NoGain,
            ..Default::default()
        }],
        untested: vec![u],
        ..Default::default()
    };
    let a = answer(&s);
    assert!(!a.contains("what this host gives"), "{a}");
    assert!(a.contains("may buy up to +1000 %"), "{a}");
    assert!(
        a.contains("sudo ssdready study /dev/loop3 --try-changes"),
        "{a}"
    );
    let text = crate::trials::text::section(&s);
    assert!(text.contains("may buy up to"), "{text}");
}

/// A loop device's study in a group with a read-IOPS throttle and a CPU
/// quota (cgroup v1), the throttle named as what holds the I/O.
fn throttle_and_quota() -> Context {
    let mut cx = split_device();
    cx.large_read_split = None;
    cx.cause = Cause::IoThrottle;
    cx.limits = Some(ssdready_measured::group_limits::fixtures::v1_plant());
    cx
}

fn parallel_at(a: At) -> Option<Point> {
    let mut p = at(a)?;
    if a == At::Parallel {
        (p.threads, p.qd) = (2, 16);
    }
    Some(p)
}

#[test]
fn every_limit_that_holds_is_tried_alone_at_its_own_point_in_a_quick_study_too() {
    let cx = throttle_and_quota();
    let fired = levers::fired(&cx, &["io-throttle-limit".to_string()]);
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &parallel_at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert_eq!(ids[..2], ["io-throttle", "cpu-quota"], "{ids:?} {not:?}");
    assert_eq!(todo[1].point.threads, 2);
    assert!(todo[1].candidates[0]
        .value
        .contains("the I/O throttle kept"));
    // The cpuset holds nothing here: no lever lifts it.
    assert!(ids.iter().all(|i| *i != "cpuset"));
    assert!(not.iter().all(|u| u.lever != "cpuset"), "{not:?}");
}

#[test]
fn a_limit_that_cannot_bind_at_the_point_the_study_reaches_is_said_untested() {
    let mut cx = throttle_and_quota();
    // A quota of 4 CPUs on a machine of two: no point binds it.
    if let Some(inv) = cx.limits.as_mut() {
        inv.cpu_quotas[0].cpus = 4.0;
    }
    let (todo, not) = plan(&shipped(), &cx, &[], &asked(), false, &parallel_at);
    assert!(todo.iter().all(|p| p.lever.id != "cpu-quota"));
    let u = not.iter().find(|u| u.lever == "cpu-quota").expect("listed");
    assert_eq!(u.reason, Reason::CannotBind);
    assert!(u.why.contains("the quota allows 4.00 CPUs"), "{}", u.why);
}

/// A RAM loop device with its request queue cut to 4 (the planted case):
/// the curve still grew past QD 4 (more I/Os in flight amortise the
/// submissions), but the device held no more than its queue admits.
fn queue_of_four() -> Context {
    let mut cx = split_device();
    cx.cause = Cause::DeviceQueue;
    cx.large_read_split = None;
    cx.queue.insert("nr_requests".into(), "4".into());
    cx.queue.insert("max_sectors_kb".into(), "1280".into());
    cx.curve = vec![
        (1, 27_601.0),
        (2, 44_801.0),
        (4, 81_364.0),
        (8, 122_653.0),
        (16, 139_263.0),
        (32, 129_438.0),
        (64, 125_894.0),
    ];
    for (k, v) in [
        ("peak_qd", 16.0),
        ("device_in_flight_peak", 3.0),
        ("priority_raisable", 1.0),
    ] {
        cx.facts.insert(k.into(), num(v));
    }
    cx
}

#[test]
fn a_full_request_queue_named_as_the_cause_is_tried_first_in_a_quick_study() {
    let cx = queue_of_four();
    let rules = ["device-queue-limit", "other-work-present", "unstable-point"];
    let fired = levers::fired(&cx, &rules.map(String::from));
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    let all = plan(&shipped(), &cx, &fired, &asked(), false, &at).0;
    let all: Vec<(&str, bool)> = all.iter().map(|p| (p.lever.id.as_str(), p.held)).collect();
    assert_eq!(ids.first(), Some(&"nr-requests"), "{ids:?} {all:?} {not:?}");
    let e = todo[0].estimate.as_ref().expect("an estimate");
    assert!(e.large(), "{e:?}");
}

#[test]
fn the_named_causes_own_lever_is_kept_in_a_quick_study_beside_larger_estimates() {
    let mut cx = queue_of_four();
    // The I/O's threads waited for a CPU other work held: priority and
    // pinning may buy more by their estimate; the queue's own lever, with no estimate
    // (its curve unknown), still has its trial.
    cx.cpu_wait_pct = Some(64.5);
    cx.facts.insert("other_work_peak".into(), num(60.0));
    cx.curve.clear();
    let rules = ["device-queue-limit", "other-work-present", "unstable-point"];
    let fired = levers::fired(&cx, &rules.map(String::from));
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert!(ids.contains(&"nr-requests"), "{ids:?} {not:?}");
    let large = todo
        .iter()
        .filter(|p| p.estimate.as_ref().is_some_and(|e| e.large()))
        .count();
    assert!(large >= 1, "{ids:?}");
    assert_eq!(ids.len(), large + 1, "{ids:?}");
    assert!(not.iter().all(|u| u.lever != "nr-requests"), "{not:?}");
}

#[test]
fn a_queue_cap_a_quick_study_passes_over_is_listed_untested_with_why() {
    // A queue of four beside a quota that the findings name: the queue's
    // lever has no estimate and no finding, yet its limit can bind.
    let mut cx = queue_of_four();
    cx.cause = Cause::CpuQuota;
    cx.curve.clear();
    cx.limits = Some(ssdready_measured::group_limits::fixtures::v1_plant());
    let (todo, not) = plan(&shipped(), &cx, &[], &asked(), true, &parallel_at);
    assert!(todo.iter().all(|p| p.lever.id != "nr-requests"));
    let u = not
        .iter()
        .find(|u| u.lever == "nr-requests")
        .expect("the queue listed untested");
    assert_eq!(u.reason, Reason::Quick);
    assert!(u.why.starts_with("its limit can bind at "), "{}", u.why);
    // Where it cannot bind (no more in flight than it admits): not listed.
    cx.queue.insert("nr_requests".into(), "1024".into());
    let (_, not) = plan(&shipped(), &cx, &[], &asked(), true, &parallel_at);
    assert!(not.iter().all(|u| u.lever != "nr-requests"), "{not:?}");
}
