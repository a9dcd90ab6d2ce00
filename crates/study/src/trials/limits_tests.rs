//! Two limits of the study's group at once, each lifted on its own: a
//! read-IOPS throttle of 3,000 and a CPU quota that holds the I/O at
//! 2,000 first. The quota's trial (the throttle kept) gains up to the
//! throttle; the throttle's (the quota kept) cannot bind — its baseline
//! runs below it — and is said so, and contradicts nothing.

use super::*;
use crate::driver::{Failure, Outcome, Runner};
use crate::plan::{plan, StudyOptions};
use ssdready_diagnosis::limit::Cause;
use ssdready_measured::group_limits::GroupLimit;
use ssdready_measured::limits::{
    CgroupVersion, CpuQuota, Inventory, IoCost, IoLimitKind, IoThrottle, UsableCpus,
};
use ssdready_measured::summary::PointSummary;
use std::cell::RefCell;
use std::rc::Rc;

/// Which of the group's limits hold now.
#[derive(Clone, Copy)]
struct Holding {
    throttle: bool,
    quota: bool,
}

/// A device of 10K IOPS per I/O in flight up to 100K, held to 3,000 by
/// the throttle and to 2,000 by the quota while they hold.
struct Held {
    now: Rc<RefCell<Holding>>,
    n: u32,
}

impl Runner for Held {
    fn run(
        &mut self,
        w: &crate::plan::Workload,
        _: &ssdready_run::RunRequest,
    ) -> Result<Outcome, Failure> {
        self.n += 1;
        let h = *self.now.borrow();
        let mut iops = (f64::from(w.qd * w.threads) * 10_000.0).min(100_000.0);
        if h.quota {
            iops = iops.min(2_000.0);
        }
        if h.throttle {
            iops = iops.min(3_000.0);
        }
        iops *= 1.0 + 0.004 * f64::from(self.n % 3);
        Ok(Outcome {
            summary: PointSummary {
                ios: iops as u64,
                iops,
                bw_bytes_per_s: iops * w.bs as f64,
                lat_mean_ns: 1e9 * f64::from(w.qd) / iops,
                lat_p99_ns: (2e9 * f64::from(w.qd) / iops) as u64,
                window_s: 1.0,
                ..Default::default()
            },
            result: None,
            clock: "real".into(),
            context: None,
        })
    }
}

/// One limit lifted for the changed run.
struct Lifted {
    now: Rc<RefCell<Holding>>,
    limit: Option<GroupLimit>,
}

impl Change for Lifted {
    fn apply(&mut self) -> Result<(), String> {
        let mut h = self.now.borrow_mut();
        match self.limit {
            Some(GroupLimit::IoThrottle) => h.throttle = false,
            Some(GroupLimit::CpuQuota) => h.quota = false,
            _ => return Err("only a throttle and a quota here".into()),
        }
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        *self.now.borrow_mut() = Holding {
            throttle: true,
            quota: true,
        };
        Ok(())
    }
}

/// Hands that lift one limit of the fake group, recording each lift.
struct GroupHands {
    now: Rc<RefCell<Holding>>,
    lifts: Vec<Lift>,
}

impl Hands for GroupHands {
    fn queue_unavailable(&self) -> Option<String> {
        Some("not in this test".into())
    }
    fn escape_unavailable(&self) -> Option<String> {
        None
    }
    fn queue(&mut self, _: &[String], _: &str, _: &str) -> Result<Box<dyn Change>, String> {
        Err("not in this test".into())
    }
    fn escape(&mut self, lift: &Lift) -> Result<Box<dyn Change>, String> {
        self.lifts.push(lift.clone());
        Ok(Box::new(Lifted {
            now: self.now.clone(),
            limit: lift.limit,
        }))
    }
}

/// `/plant` of the v1 blkio and cpu hierarchies on two CPUs.
fn plant() -> Inventory {
    let d = "/sys/fs/cgroup/cpu,cpuacct/plant";
    Inventory {
        pid: 1,
        cgroups: vec![],
        io_throttles: vec![IoThrottle {
            version: CgroupVersion::V1,
            cgroup: "/plant".into(),
            device: "7:3".into(),
            disk: Some("fake0".into()),
            kind: IoLimitKind::ReadIops,
            value: 3000,
            applies: true,
            source: "/sys/fs/cgroup/blkio/plant/blkio.throttle.read_iops_device".into(),
        }],
        io_latency: vec![],
        io_cost: IoCost::default(),
        cpu_quotas: vec![CpuQuota {
            version: CgroupVersion::V1,
            cgroup: "/plant".into(),
            quota_us: 20_000,
            period_us: 100_000,
            burst_us: None,
            cpus: 0.2,
            source: format!("{d}/cpu.cfs_quota_us, {d}/cpu.cfs_period_us"),
        }],
        cpuset: None,
        affinity: None,
        memory_limits: vec![],
        cpus: UsableCpus::new(vec![0, 1], None, None, Some(0.2)),
        devices: vec![],
        hypervisor: None,
        unread: vec![],
    }
}

fn target() -> TargetProfile {
    TargetProfile {
        spec: "/dev/fake0".into(),
        kind: TargetKind::BlockDevice,
        transport: "nvme".into(),
        device: Some("fake0".into()),
        size_bytes: 1 << 30,
        logical_block_size: 4096,
        ..Default::default()
    }
}

#[test]
fn two_limits_at_once_are_each_lifted_alone_and_each_cost_is_its_own() {
    let now = Rc::new(RefCell::new(Holding {
        throttle: true,
        quota: true,
    }));
    let mut f = Held {
        now: now.clone(),
        n: 0,
    };
    let targets = vec![target()];
    let so = StudyOptions {
        quick: true,
        budget_s: 60.0,
        cpus: 2,
        ..Default::default()
    };
    let mut p = plan(&targets, &so);
    crate::plan::fit_budget(&mut p, &targets, &so);
    let ex = crate::driver::execute(
        &targets,
        &p,
        &mut f,
        &mut crate::driver::Quiet,
        &crate::clock::Deadline::none(),
    );
    let mut j = crate::judge(&targets, &Default::default(), &ex.runs, false);
    // The study named the throttle (as it might): its trial must not
    // contradict it where the quota held the I/O below it.
    j.figures.saturation.limit = Cause::IoThrottle;
    let mut hands = GroupHands {
        now: now.clone(),
        lifts: Vec::new(),
    };
    let o = Options {
        quick: true,
        root: true,
        budget_s: 60.0,
        limits: Some(plant()),
        ..Default::default()
    };
    let mut x = Trials {
        targets: &targets,
        plan: &p,
        runs: &ex.runs,
        runner: &mut f,
        hands: &mut hands,
    };
    let s = run(&mut x, &mut j, &o).unwrap();
    let trial = |id: &str| {
        s.trials
            .iter()
            .find(|t| t.lever == id)
            .unwrap_or_else(|| panic!("{id} not tried: {:?}", s.untested))
    };
    let (q, t) = (trial("cpu-quota"), trial("io-throttle"));
    // Each alone: the quota's lift kept the throttle, and the other way.
    assert_eq!(q.to, "without the CPU quota, the I/O throttle kept");
    assert_eq!(t.to, "without the I/O throttle, the CPU quota kept");
    let limits: Vec<_> = hands.lifts.iter().map(|l| l.limit).collect();
    assert!(limits.contains(&Some(GroupLimit::CpuQuota)));
    assert!(limits.contains(&Some(GroupLimit::IoThrottle)));
    // Each trial's lift keeps the other limit; a lift that keeps none is
    // the two measured together (the throttle behind the quota).
    let (alone, together): (Vec<_>, Vec<_>) = hands.lifts.iter().partition(|l| !l.kept.is_empty());
    assert!(alone.iter().all(|l| l.v1.len() == 1), "{:?}", hands.lifts);
    assert!(
        together.iter().all(|l| l.v1.len() == 2),
        "{:?}",
        hands.lifts
    );
    // The quota's at the parallel point: two threads on two CPUs online.
    assert_eq!(q.point.threads, 2);
    let g = q.main_gain().unwrap();
    assert!((g.change_pct - 50.0).abs() < 3.0, "{g:?}");
    assert_eq!(q.outcome, trials::Outcome::Better);
    assert!(q.unbound.is_none());
    // The throttle's could not bind: the quota held its baseline at 2,000.
    assert!(
        t.unbound
            .as_deref()
            .is_some_and(|w| w.contains("below the throttle's 3000")),
        "{:?}",
        t.unbound
    );
    assert!(s.contradictions.is_empty(), "{:?}", s.contradictions);
    // Each with its own permanent line.
    assert!(
        q.permanent
            .contains("echo \"-1\" > /sys/fs/cgroup/cpu,cpuacct/plant/cpu.cfs_quota_us"),
        "{}",
        q.permanent
    );
    assert!(q.permanent.contains("\"200000\""), "{}", q.permanent);
    assert!(
        t.permanent.contains(
            "echo \"7:3 0\" > /sys/fs/cgroup/blkio/plant/blkio.throttle.read_iops_device"
        ),
        "{}",
        t.permanent
    );
    assert!(!t.permanent.contains("cpu"), "{}", t.permanent);
    // Everything put back.
    let h = *now.borrow();
    assert!(h.throttle && h.quota);
}

#[test]
fn the_cpus_a_lever_pins_threads_to_are_those_this_process_may_use() {
    let mut inv = ssdready_measured::group_limits::fixtures::v1_cpuset();
    inv.cpus.set = vec![2, 3];
    assert_eq!(super::cpu_list(Some(&inv)), "2-3");
    inv.cpus.set.clear();
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all = ssdready_core::units::fmt_cpu_list(0..n);
    assert_eq!(super::cpu_list(Some(&inv)), all);
    assert_eq!(super::cpu_list(None), all);
}
