//! The sweeps, the capacity search and the trials against the budget's
//! clock, on a fake time that a fake device moves on by each run's length:
//! a plan that overruns is trimmed, repeats first, and says what it
//! dropped; runs slower than planned are paced by what they took; nothing
//! runs past its deadline; the trials get what is left.

use crate::clock::{self, Clock, Deadline, FakeTime, Time};
use crate::driver::{execute, Failure, Observer, Outcome, Runner};
use crate::plan::{fit_budget, plan, Plan, StudyOptions};
use ssdready_measured::record::{TargetKind, TargetProfile};
use ssdready_measured::summary::PointSummary;
use std::sync::Arc;

/// A device whose IOPS grow with what is in flight up to 100K, each run
/// taking `run_s` seconds of the fake time; the time each run ended.
struct Timed {
    time: Arc<FakeTime>,
    run_s: f64,
    ends: Vec<f64>,
}

impl Runner for Timed {
    fn run(
        &mut self,
        w: &crate::plan::Workload,
        _: &ssdready_run::RunRequest,
    ) -> Result<Outcome, Failure> {
        self.time.advance(self.run_s);
        self.ends.push(self.time.now_s());
        let iops = (f64::from(w.qd * w.threads) * 10_000.0).min(100_000.0);
        Ok(Outcome {
            summary: PointSummary {
                ios: iops as u64,
                iops,
                lat_mean_ns: 1e9 * f64::from(w.qd) / iops,
                lat_p50_ns: 50_000,
                lat_p99_ns: 100_000,
                lat_p999_ns: 200_000,
                window_s: 1.0,
                ..Default::default()
            },
            result: None,
            clock: "real".into(),
            context: None,
        })
    }
}

/// Counts the points dropped.
#[derive(Default)]
struct Dropped(usize);

impl Observer for Dropped {
    fn dropped(&mut self, n: usize) {
        self.0 += n;
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
        writable: true,
        scheduler: Some("none".into()),
        schedulers: vec!["none".into(), "mq-deadline".into()],
        ..Default::default()
    }
}

/// A full study's plan for `budget_s`, fitted, with 1 s runs.
fn full_plan(budget_s: f64) -> Plan {
    let o = StudyOptions {
        budget_s,
        root: true,
        host_changes: true,
        cpus: 2,
        strategies: true,
        ..Default::default()
    };
    let t = [target()];
    let mut p = plan(&t, &o);
    fit_budget(&mut p, &t, &o);
    p.settings.runtime_s = 1.0;
    p.settings.ramp_s = 0.0;
    p.budget_s = budget_s;
    p
}

/// A clock on a fake time, and the time (started at 1000 s).
fn fake_clock(budget_s: f64) -> (Clock, Arc<FakeTime>) {
    let time = Arc::new(FakeTime::default());
    time.advance(1000.0);
    (Clock::on(time.clone(), budget_s), time)
}

fn per_run(p: &Plan) -> f64 {
    p.settings.runtime_s + p.settings.ramp_s + p.overhead_s
}

#[test]
fn a_plan_that_overruns_drops_repeats_before_first_measurements_and_says_so() {
    let p = full_plan(600.0);
    let firsts = p.points.iter().filter(|x| x.repeat == 1).count();
    let repeats = p.points.len() - firsts;
    assert!(repeats >= 20, "{repeats} repeats");
    // Room for every first measurement and half the repeats.
    let room = (firsts + repeats / 2) as f64 * per_run(&p);
    let (c, time) = fake_clock(room + 100.0);
    let d = c.keeping(100.0);
    let mut dev = Timed {
        time: time.clone(),
        run_s: per_run(&p),
        ends: Vec::new(),
    };
    let mut obs = Dropped::default();
    let ex = execute(&[target()], &p, &mut dev, &mut obs, &d);
    let deadline = 1000.0 + room;
    assert!(
        dev.ends.iter().all(|&e| e <= deadline + 1e-9),
        "{:?} past {deadline}",
        dev.ends
    );
    let by_clock: Vec<_> = ex
        .skipped
        .iter()
        .filter(|s| s.why.starts_with("the budget's clock: "))
        .collect();
    assert!(!by_clock.is_empty(), "{:?}", ex.skipped);
    assert!(
        by_clock.iter().all(|s| s.what.contains("repeats")),
        "first measurements kept: {by_clock:?}"
    );
    let sched = by_clock
        .iter()
        .find(|s| s.what.starts_with("the scheduler sweep's repeats ("))
        .expect("the last sweeps' repeats dropped");
    assert!(sched.why.contains("still to come"), "{sched:?}");
    // Every first measurement the queue-depth sweep did not pass over ran.
    let ran_firsts = ex.runs.iter().filter(|r| r.repeat == 1).count();
    let qd_left = crate::plan::QDS.len() - ex.runs.iter().filter(|r| r.sweep == "qd").count();
    assert_eq!(ran_firsts + qd_left, firsts, "{:?}", ex.skipped);
    assert!(
        obs.0 >= repeats / 3,
        "the observer heard of {} drops",
        obs.0
    );
}

#[test]
fn a_budget_too_short_for_the_first_measurements_keeps_the_queue_depth_sweep() {
    let p = full_plan(600.0);
    // The fill and the queue-depth sweep, and a little more.
    let room = 12.5 * per_run(&p);
    let (c, time) = fake_clock(room + 10.0);
    let mut dev = Timed {
        time,
        run_s: per_run(&p),
        ends: Vec::new(),
    };
    let ex = execute(
        &[target()],
        &p,
        &mut dev,
        &mut Dropped::default(),
        &c.keeping(10.0),
    );
    assert!(dev.ends.last().is_some_and(|&e| e <= 1000.0 + room + 1e-9));
    let qd: Vec<u32> = ex
        .runs
        .iter()
        .filter(|r| r.sweep == "qd")
        .map(|r| r.workload.qd)
        .collect();
    assert!(qd.len() >= 5 && qd[0] == 1, "{qd:?}");
    let firsts = ex
        .skipped
        .iter()
        .find(|s| s.what.contains("first measurements"))
        .expect("later sweeps' first measurements dropped");
    assert!(
        firsts.why.starts_with("the budget's clock: ") && firsts.why.contains("this run takes"),
        "{firsts:?}"
    );
}

#[test]
fn runs_slower_than_planned_are_paced_by_what_they_took() {
    let p = full_plan(600.0);
    let planned = per_run(&p);
    let room = 40.0 * planned;
    let (c, time) = fake_clock(room);
    // Each run takes twice its estimate.
    let mut dev = Timed {
        time,
        run_s: 2.0 * planned,
        ends: Vec::new(),
    };
    let ex = execute(
        &[target()],
        &p,
        &mut dev,
        &mut Dropped::default(),
        &c.keeping(0.0),
    );
    assert!(
        dev.ends.iter().all(|&e| e <= 1000.0 + room + 1e-9),
        "{:?}",
        dev.ends
    );
    assert!(ex.per_run_s >= 1.9 * planned, "{} s a run", ex.per_run_s);
    assert!(ex.runs.len() >= 15, "{} runs", ex.runs.len());
}

#[test]
fn a_short_budget_is_kept_from_the_sweeps_through_the_capacity_search_to_the_trials() {
    for budget in [120.0, 180.0, 600.0] {
        let mut p = full_plan(budget);
        p.budget_s = budget;
        let (c, time) = fake_clock(budget);
        // The drive's attach.
        time.advance(0.5);
        let sweeps = c.keeping(clock::after_sweeps_s(&p, budget, false));
        let after = c.keeping(clock::before_trials_s(&p, budget, false));
        let mut dev = Timed {
            time: time.clone(),
            run_s: per_run(&p),
            ends: Vec::new(),
        };
        let t = [target()];
        let ex = execute(&t, &p, &mut dev, &mut Dropped::default(), &sweeps);
        let slo = crate::capacity::Slo::parse("p99=1ms").unwrap();
        let cap = crate::slo::capacity_within(&slo, &t, &p, &mut dev, (&after, p.overhead_s));
        assert!(cap.is_ok() || budget < 600.0, "{budget}: {:?}", cap.err());
        let trials = crate::clock::budget_s(&p, false, &c);
        let end = c.elapsed_s() + trials + clock::CLOSING_S;
        assert!(end <= budget + 1e-9, "{budget}: ends at {end}");
        assert!(
            trials >= 0.2 * budget - per_run(&p),
            "{budget}: the trials' fifth kept, {trials} s"
        );
        assert!(ex.runs.len() >= 10, "{budget}: {} runs", ex.runs.len());
    }
}

#[test]
fn the_trials_get_what_the_clock_has_left() {
    let p = full_plan(600.0);
    let (c, time) = fake_clock(120.0);
    time.advance(90.0);
    assert_eq!(
        crate::clock::budget_s(&p, false, &c),
        30.0 - clock::CLOSING_S
    );
    let quick = crate::clock::budget_s(&p, true, &c);
    assert_eq!(quick, crate::clock::quick_s(&p).min(27.0));
    time.advance(29.0);
    assert_eq!(crate::clock::budget_s(&p, false, &c), 0.0);
    assert_eq!(crate::clock::budget_s(&p, true, &c), 0.0);
    assert!(Deadline::none().left_s().is_infinite());
}
