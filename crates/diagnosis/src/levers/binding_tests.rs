//! Each lever's binding point: declared in the table, and whether the
//! limit can bind at the point resolved, before and after the turns.

use super::*;
use crate::levers::{cannot_bind, shipped, At};
use crate::trials::{Measured, Turn};
use ssdready_measured::group_limits::fixtures::{v1_cpuset, v1_plant, v2_service};

fn lever(id: &str) -> Lever {
    shipped().into_iter().find(|l| l.id == id).unwrap()
}

fn point(rw: &str, bs: u64, qd: u32, threads: u32) -> Point {
    Point {
        rw: rw.into(),
        bs,
        qd,
        threads,
        engine: Some("io_uring".into()),
        direct: true,
        sizes: String::new(),
    }
}

fn cx(inv: Inventory) -> Context {
    Context {
        limits: Some(inv),
        ..Default::default()
    }
}

#[test]
fn each_lever_declares_the_point_where_its_limit_binds() {
    let at = |id: &str| lever(id).at;
    assert_eq!(at("io-throttle"), At::Deepest);
    assert_eq!(at("nr-requests"), At::Deepest);
    assert_eq!(at("cpu-quota"), At::Parallel);
    assert_eq!(at("cpuset"), At::Parallel);
    assert_eq!(at("max-sectors"), At::Large);
    assert_eq!(at("read-ahead"), At::Buffered);
    for (id, g) in [
        ("io-throttle", GroupLimit::IoThrottle),
        ("cpu-quota", GroupLimit::CpuQuota),
        ("cpuset", GroupLimit::Cpuset),
        ("io-latency", GroupLimit::IoLatency),
        ("io-weight", GroupLimit::IoWeight),
    ] {
        assert_eq!(lever(id).lift(), Some(g), "{id}");
    }
}

#[test]
fn a_cpuset_binds_only_where_more_threads_run_than_it_allows() {
    let c = cx(v1_cpuset());
    let l = lever("cpuset");
    // One thread on a cpuset of one CPU: nothing parallel to withhold.
    let why = cannot_bind(&l, &c, &point("randread", 4096, 32, 1)).unwrap();
    assert!(why.contains("no more than the cpuset's 1 CPU"), "{why}");
    // Two threads on two CPUs online: it can.
    assert_eq!(cannot_bind(&l, &c, &point("randread", 4096, 16, 2)), None);
    // A quota kept at a fifth of a CPU holds first: the cpuset binds once
    // it is lifted, so it is hidden behind it, not "cannot bind".
    let mut inv = v1_plant();
    inv.cpuset = v1_cpuset().cpuset;
    let p = point("randread", 4096, 16, 2);
    assert_eq!(cannot_bind(&l, &cx(inv.clone()), &p), None);
    let (front, why) = hidden_by(&l, &cx(inv), &p).unwrap();
    assert_eq!(front, GroupLimit::CpuQuota);
    assert!(why.contains("quota kept allows 0.20 CPUs"), "{why}");
}

#[test]
fn a_quota_binds_only_where_the_points_threads_can_use_more_than_it_allows() {
    let l = lever("cpu-quota");
    // A fifth of a CPU binds on one thread.
    assert_eq!(
        cannot_bind(&l, &cx(v1_plant()), &point("randread", 4096, 32, 1)),
        None
    );
    // A quota of 1.5 CPUs: one thread cannot reach it, two can, but not
    // on a cpuset of one CPU kept.
    let mut inv = v1_plant();
    inv.cpu_quotas[0].cpus = 1.5;
    assert!(cannot_bind(&l, &cx(inv.clone()), &point("randread", 4096, 32, 1)).is_some());
    assert_eq!(
        cannot_bind(&l, &cx(inv.clone()), &point("randread", 4096, 16, 2)),
        None
    );
    // Behind a cpuset of one CPU, it binds once the cpuset is lifted.
    inv.cpuset = v1_cpuset().cpuset;
    let p = point("randread", 4096, 16, 2);
    assert_eq!(cannot_bind(&l, &cx(inv.clone()), &p), None);
    let (front, why) = hidden_by(&l, &cx(inv), &p).unwrap();
    assert_eq!(front, GroupLimit::Cpuset);
    assert!(
        why.contains("can use no more than 1: 2 threads on the 1 CPU allowed"),
        "{why}"
    );
}

#[test]
fn a_throttle_of_writes_cannot_bind_on_reads() {
    let l = lever("io-throttle");
    let mut inv = v1_plant();
    assert_eq!(
        cannot_bind(&l, &cx(inv.clone()), &point("randread", 4096, 64, 1)),
        None
    );
    inv.io_throttles[0].kind = IoLimitKind::WriteIops;
    assert!(cannot_bind(&l, &cx(inv.clone()), &point("randread", 4096, 64, 1)).is_some());
    assert_eq!(
        cannot_bind(&l, &cx(inv), &point("randwrite", 4096, 64, 1)),
        None
    );
}

#[test]
fn queue_settings_bind_where_the_point_fills_or_splits_them() {
    let mut c = Context::default();
    c.queue.insert("nr_requests".into(), "64".into());
    c.queue.insert("max_sectors_kb".into(), "128".into());
    c.queue.insert("read_ahead_kb".into(), "128".into());
    let nr = lever("nr-requests");
    assert!(cannot_bind(&nr, &c, &point("randread", 4096, 32, 2)).is_some());
    assert_eq!(cannot_bind(&nr, &c, &point("randread", 4096, 128, 1)), None);
    let ms = lever("max-sectors");
    assert_eq!(cannot_bind(&ms, &c, &point("read", 1 << 20, 8, 1)), None);
    assert!(cannot_bind(&ms, &c, &point("read", 64 << 10, 8, 1)).is_some());
    let ra = lever("read-ahead");
    let mut buffered = point("read", 4096, 1, 1);
    buffered.direct = false;
    assert_eq!(cannot_bind(&ra, &c, &buffered), None);
    assert!(cannot_bind(&ra, &c, &point("read", 4096, 1, 1)).is_some());
}

fn trial_at(baseline_iops: f64) -> Trial {
    let m = |iops| Measured {
        iops,
        ..Default::default()
    };
    Trial {
        lever: "io-throttle".into(),
        point: point("randread", 4096, 64, 1),
        turns: vec![
            Turn {
                baseline: m(baseline_iops),
                change: m(2.0 * baseline_iops),
            };
            3
        ],
        ..Default::default()
    }
}

#[test]
fn a_throttle_whose_baseline_ran_below_it_did_not_bind_there() {
    let (l, c) = (lever("io-throttle"), cx(v1_plant()));
    // At its rate of 3000: it bound.
    assert_eq!(did_not_bind(&l, &c, &trial_at(2990.0)), None);
    // A quota held the baseline at 900: the throttle never came into play.
    let why = did_not_bind(&l, &c, &trial_at(900.0)).unwrap();
    assert!(why.contains("below the throttle's 3000"), "{why}");
    // The quota lifted while the throttle, kept, held the baseline at its
    // rate: the quota could not bind there; below it, it could.
    let q = lever("cpu-quota");
    let why = did_not_bind(&q, &c, &trial_at(2990.0)).unwrap();
    assert!(why.contains("the CPU quota could not bind"), "{why}");
    assert_eq!(did_not_bind(&q, &c, &trial_at(900.0)), None);
    // Lifting it bought beyond the noise: it bound, whatever the baseline.
    let mut gained = trial_at(2990.0);
    gained.outcome = crate::trials::Outcome::Better;
    assert_eq!(did_not_bind(&q, &c, &gained), None);
    // A throttle of the reads holds none of a mix's writes: a quota binds on them.
    let mut mix = trial_at(2990.0);
    mix.point.rw = "randrw".into();
    assert_eq!(did_not_bind(&q, &c, &mix), None);
    // Without a throttle the turns say nothing of it.
    let mut inv = v1_plant();
    inv.io_throttles.clear();
    assert_eq!(did_not_bind(&q, &cx(inv), &trial_at(2990.0)), None);
}

#[test]
fn a_v2_services_limits_each_bind_at_their_own_point() {
    let c = cx(v2_service());
    // Four CPUs online, one allowed, half a CPU of quota on the slice.
    let par = point("randread", 4096, 8, 4);
    assert_eq!(cannot_bind(&lever("cpu-quota"), &c, &par), None);
    // The cpuset of one CPU binds once the half CPU of quota is lifted:
    // hidden behind it, never "cannot bind".
    assert_eq!(cannot_bind(&lever("cpuset"), &c, &par), None);
    let (front, why) = hidden_by(&lever("cpuset"), &c, &par).unwrap();
    assert_eq!(front, GroupLimit::CpuQuota);
    assert!(why.contains("binds only once the quota is lifted"), "{why}");
    assert_eq!(hidden_by(&lever("cpu-quota"), &c, &par), None);
    assert_eq!(
        cannot_bind(&lever("io-throttle"), &c, &point("randread", 4096, 64, 1)),
        None
    );
}

#[test]
fn a_limit_hidden_by_another_is_found_behind_it_whichever_is_in_front() {
    // A cpuset of one CPU behind a quota of 0.6 CPUs on two CPUs online.
    let mut inv = v2_service();
    inv.cpus.online = vec![0, 1];
    if let Some(q) = inv.cpu_quotas.first_mut() {
        q.cpus = 0.6;
    }
    let par = point("randread", 4096, 8, 2);
    let c = cx(inv.clone());
    assert_eq!(
        hidden_by(&lever("cpuset"), &c, &par).map(|h| h.0),
        Some(GroupLimit::CpuQuota)
    );
    // A quota of 1.5 CPUs behind a cpuset of one: the quota is hidden.
    if let Some(q) = inv.cpu_quotas.first_mut() {
        q.cpus = 1.5;
    }
    let c = cx(inv.clone());
    assert_eq!(cannot_bind(&lever("cpu-quota"), &c, &par), None);
    assert_eq!(
        hidden_by(&lever("cpu-quota"), &c, &par).map(|h| h.0),
        Some(GroupLimit::Cpuset)
    );
    // One thread: neither binds, whatever is lifted; said as before.
    let one = point("randread", 4096, 8, 1);
    assert!(cannot_bind(&lever("cpu-quota"), &c, &one).is_some());
    assert_eq!(hidden_by(&lever("cpu-quota"), &c, &one), None);
}
