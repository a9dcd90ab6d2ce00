//! The trials through a fake runner: the application's levers run in
//! turns, within the budget; a host's change is made before each changed
//! run and put back after it; a lever that moves nothing contradicts the
//! cause it was to lift.

use super::*;
use crate::driver::{Failure, Outcome, Runner};
use crate::plan::{plan, StudyOptions};
use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::trials::Outcome as Verdict;
use ssdready_measured::summary::PointSummary;
use std::cell::RefCell;
use std::rc::Rc;

/// What happened, in order: `base`, `changed`, `apply`, `revert`.
type Log = Rc<RefCell<Vec<String>>>;

/// A device whose IOPS grow with what is in flight up to 100K, 30 % more
/// with registered files, twice as much while the host's change is made
/// (when `host_gain`), each run a little off the last.
struct Fake {
    log: Log,
    applied: Rc<RefCell<bool>>,
    host_gain: bool,
    n: u32,
    drift_runs: i32,
    /// The rate's growth per run from the trials on (a drive recovering
    /// from its garbage collection), a fraction.
    drift: f64,
}

impl Runner for Fake {
    fn run(
        &mut self,
        w: &crate::plan::Workload,
        r: &ssdready_run::RunRequest,
    ) -> Result<Outcome, Failure> {
        self.n += 1;
        let line = r.command_line().join(" ");
        let mut iops = (f64::from(w.qd * w.threads) * 10_000.0).min(100_000.0);
        if line.contains("--registerfiles=1") {
            iops *= 1.3;
        }
        let applied = *self.applied.borrow();
        if applied && self.host_gain {
            iops *= 2.0;
        }
        iops *= 1.0 + 0.004 * f64::from(self.n % 3);
        if self.drift > 0.0 {
            self.drift_runs += 1;
            iops *= (1.0 + self.drift).powi(self.drift_runs);
        }
        let changed = applied || line.contains("registerfiles") || line.contains("ioengine=libaio");
        self.log
            .borrow_mut()
            .push(if changed { "changed" } else { "base" }.into());
        Ok(Outcome {
            summary: PointSummary {
                ios: (iops * 1.0) as u64,
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

struct Flip {
    log: Log,
    applied: Rc<RefCell<bool>>,
}

impl Change for Flip {
    fn apply(&mut self) -> Result<(), String> {
        self.log.borrow_mut().push("apply".into());
        *self.applied.borrow_mut() = true;
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        self.log.borrow_mut().push("revert".into());
        *self.applied.borrow_mut() = false;
        Ok(())
    }
}

/// Hands whose queue change flips the fake device's gain.
struct FakeHands {
    log: Log,
    applied: Rc<RefCell<bool>>,
    set: Vec<String>,
}

impl Hands for FakeHands {
    fn queue_unavailable(&self) -> Option<String> {
        None
    }
    fn escape_unavailable(&self) -> Option<String> {
        Some("no cgroup v2 here".into())
    }
    fn queue(
        &mut self,
        disks: &[String],
        attr: &str,
        value: &str,
    ) -> Result<Box<dyn Change>, String> {
        self.set.push(format!("{}:{attr}={value}", disks.join(",")));
        Ok(Box::new(Flip {
            log: self.log.clone(),
            applied: self.applied.clone(),
        }))
    }
    fn escape(&mut self, _: &Lift) -> Result<Box<dyn Change>, String> {
        Err("no cgroup v2 here".into())
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
        scheduler: Some("mq-deadline".into()),
        schedulers: vec!["mq-deadline".into(), "none".into()],
        ..Default::default()
    }
}

/// A quick study's sweeps through the fake, judged, with `cause` named.
fn studied(
    fake: &mut Fake,
    cause: Cause,
) -> (
    Vec<TargetProfile>,
    crate::plan::Plan,
    Vec<RunRecord>,
    Judgement,
) {
    let targets = vec![target()];
    let o = StudyOptions {
        quick: true,
        budget_s: 60.0,
        cpus: 4,
        ..Default::default()
    };
    let mut p = plan(&targets, &o);
    crate::plan::fit_budget(&mut p, &targets, &o);
    let ex = crate::driver::execute(
        &targets,
        &p,
        fake,
        &mut crate::driver::Quiet,
        &crate::clock::Deadline::none(),
    );
    let mut j = crate::judge(&targets, &Default::default(), &ex.runs, false);
    j.figures.saturation.limit = cause;
    fake.log.borrow_mut().clear();
    (targets, p, ex.runs, j)
}

fn fake(host_gain: bool) -> Fake {
    Fake {
        log: Rc::new(RefCell::new(Vec::new())),
        applied: Rc::new(RefCell::new(false)),
        host_gain,
        n: 0,
        drift_runs: 0,
        drift: 0.0,
    }
}

#[test]
fn a_quick_studys_application_levers_run_in_turns_within_the_budget() {
    let mut f = fake(false);
    let (targets, p, runs, mut j) = studied(&mut f, Cause::OneCore);
    let log = f.log.clone();
    let mut hands = NoHands("not root".into());
    let o = Options {
        quick: true,
        budget_s: 20.0,
        ..Default::default()
    };
    let mut x = Trials {
        targets: &targets,
        plan: &p,
        runs: &runs,
        runner: &mut f,
        hands: &mut hands,
    };
    let s = run(&mut x, &mut j, &o).expect("levers apply");
    let ids: Vec<&str> = s.trials.iter().map(|t| t.lever.as_str()).collect();
    assert_eq!(ids, ["registered", "engine"], "{:?}", s.untested);
    // Each in three turns, the order alternating: baseline then change,
    // change then baseline, baseline then change.
    assert!(s.trials.iter().all(|t| t.turns.len() == trials::MIN_PAIRS));
    let log = log.borrow();
    assert_eq!(log.len(), 12);
    for (i, pair) in log.chunks(2).enumerate() {
        let want = match i % trials::MIN_PAIRS % 2 {
            0 => ["base", "changed"],
            _ => ["changed", "base"],
        };
        assert_eq!(pair, want, "pair {i}: {log:?}");
    }
    // Registered files gave 30 %, beyond the noise; libaio nothing.
    let best = &s.trials[0];
    assert_eq!(best.outcome, Verdict::Better);
    let g = best.main_gain().unwrap();
    assert!((g.change_pct - 30.0).abs() < 2.0, "{g:?}");
    assert_eq!(s.trials[1].outcome, Verdict::NoGain);
    assert!(best.change_options.iter().any(|o| o == "--registerfiles=1"));
    assert!(!best
        .baseline_options
        .iter()
        .any(|o| o.contains("registerfiles")));
    // The host's settings were not tried, and say why.
    assert!(s
        .untested
        .iter()
        .any(|u| u.lever == "nomerges" && u.reason == Reason::NotRoot));
    // Within the budget: 12 runs of the plan's length fit its 20 s.
    let per_run = p.settings.runtime_s + p.settings.ramp_s + p.overhead_s;
    assert!(12.0 * per_run <= o.budget_s);
    // The one-core finding cites its trial.
    let one_core = s.citations.iter().find(|c| c.rule == "one-core");
    if let Some(c) = one_core {
        assert!(c.measured && c.text.contains("+"), "{c:?}");
    }
}

#[test]
fn a_budget_too_short_for_the_turns_tries_nothing_and_says_so() {
    let mut f = fake(false);
    let (targets, p, runs, mut j) = studied(&mut f, Cause::OneCore);
    let mut hands = NoHands("not root".into());
    let o = Options {
        quick: true,
        budget_s: 3.0,
        ..Default::default()
    };
    let mut x = Trials {
        targets: &targets,
        plan: &p,
        runs: &runs,
        runner: &mut f,
        hands: &mut hands,
    };
    let s = run(&mut x, &mut j, &o).unwrap();
    assert!(s.trials.is_empty());
    assert!(s.untested.iter().any(|u| u.reason == Reason::NoTime));
    assert!(f.log.borrow().is_empty());
    assert_eq!(s.answer, "no change was tried (see why below)");
}

fn queue_trial(host_gain: bool) -> (Section, Vec<String>, Vec<String>, bool, Judgement) {
    queue_trial_drifting(host_gain, 0.0)
}

/// The scheduler's trial on the fake, its rate growing by `drift` a run
/// from the trials on.
fn queue_trial_drifting(
    host_gain: bool,
    drift: f64,
) -> (Section, Vec<String>, Vec<String>, bool, Judgement) {
    let mut f = fake(host_gain);
    let (targets, p, runs, mut j) = studied(&mut f, Cause::Scheduler);
    f.drift = drift;
    let mut hands = FakeHands {
        log: f.log.clone(),
        applied: f.applied.clone(),
        set: Vec::new(),
    };
    let o = Options {
        quick: true,
        root: true,
        asked: true,
        budget_s: 30.0,
        queue: [("scheduler", "[mq-deadline] none")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
        ..Default::default()
    };
    let log = f.log.clone();
    let applied = f.applied.clone();
    let mut x = Trials {
        targets: &targets,
        plan: &p,
        runs: &runs,
        runner: &mut f,
        hands: &mut hands,
    };
    let s = run(&mut x, &mut j, &o).unwrap();
    let left = *applied.borrow();
    let log = log.borrow().clone();
    (s, log, hands.set, left, j)
}

#[test]
fn a_host_change_is_made_for_each_changed_run_and_put_back_after_it() {
    let (s, log, set, left_applied, _) = queue_trial(true);
    assert_eq!(set, ["fake0:scheduler=none"]);
    let t = s.trials.iter().find(|t| t.lever == "scheduler").unwrap();
    assert_eq!((t.from.as_str(), t.to.as_str()), ("mq-deadline", "none"));
    assert_eq!(t.outcome, Verdict::Better);
    assert!(t
        .permanent
        .contains(r#"KERNEL=="fake0", ATTR{queue/scheduler}="none""#));
    for (i, w) in log[..12].chunks(4).enumerate() {
        let turn = match i % 2 {
            0 => ["base", "apply", "changed", "revert"],
            _ => ["apply", "changed", "revert", "base"],
        };
        assert_eq!(w, turn, "turn {i}: {log:?}");
    }
    assert!(!left_applied, "the change was left made");
    assert!(s.contradictions.is_empty());
}

#[test]
fn a_scheduler_named_that_its_change_does_not_move_is_a_contradiction() {
    let (s, _, _, left_applied, j) = queue_trial(false);
    assert!(!left_applied);
    assert_eq!(s.contradictions.len(), 1, "{:?}", s.trials);
    assert_eq!(s.contradictions[0].lever, "scheduler");
    assert!(
        s.answer.starts_with("no change beat the baseline"),
        "{}",
        s.answer
    );
    let _ = j;
}

/// A run of `bs` sequential reads whose device counted `per_io` requests
/// for each of its 100 I/Os (`merges` merged).
fn split_run(bs: u64, per_io: u64, merges: u64) -> RunRecord {
    let mut res = ssdready_core::result::RunResult::default();
    res.phases.push(ssdready_core::result::PhaseResult {
        disks: vec![ssdready_core::result::DiskResult {
            read_ios: 100 * per_io,
            read_merges: merges,
            read_sectors: 100 * bs / 512,
            app_ios: 100,
            app_bytes: 100 * bs,
            ..Default::default()
        }],
        ..Default::default()
    });
    RunRecord {
        id: format!("bs-{bs}"),
        sweep: "bs".into(),
        workload: Workload {
            rw: "read".into(),
            bs,
            qd: 8,
            direct: true,
            ..Default::default()
        },
        result: Some(res),
        ..Default::default()
    }
}

#[test]
fn large_reads_split_by_the_kernel_are_found_in_the_runs_counters() {
    assert_eq!(large_read_split(&[]), None);
    // 4 KiB reads split are not large reads; merged requests say nothing.
    assert_eq!(large_read_split(&[split_run(4096, 2, 0)]), None);
    assert_eq!(large_read_split(&[split_run(1 << 20, 128, 5)]), None);
    let runs = [split_run(64 << 10, 8, 0), split_run(1 << 20, 128, 0)];
    assert_eq!(large_read_split(&runs), Some(128.0));
    let mut failed = split_run(1 << 20, 128, 0);
    failed.error = Some("failed".into());
    assert_eq!(large_read_split(&[failed]), None);
}

#[test]
fn an_application_levers_options_change_the_measured_workload_or_ride_along() {
    let w = Workload {
        rw: "read".into(),
        bs: 1 << 20,
        qd: 8,
        threads: 1,
        direct: true,
        ..Default::default()
    };
    let c = |options: &[(&str, &str)]| levers::Candidate {
        value: String::new(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let (x, extra) = changed(&w, &c(&[("bs", "4096k")]));
    assert_eq!((x.bs, x.qd), (4 << 20, 8));
    assert!(extra.is_empty());
    let (x, extra) = changed(&w, &c(&[("iodepth", "32"), ("hipri", "1")]));
    assert_eq!((x.bs, x.qd), (1 << 20, 32));
    assert_eq!(extra, [("hipri".to_string(), "1".to_string())]);
}

#[test]
fn a_device_that_drifts_through_the_trial_favours_neither_side() {
    // A host change that does nothing, on a device whose rate grows 10 %
    // with every run: run baseline-first in every pair, the change would
    // gain 10 % in each, beyond the noise. Alternating the order, the
    // pairs say +10 %, −9 %, +10 %: no gain.
    let (s, _, _, left_applied, _) = queue_trial_drifting(false, 0.10);
    assert!(!left_applied);
    let t = s.trials.iter().find(|t| t.lever == "scheduler").unwrap();
    let g = t.main_gain().unwrap();
    assert_ne!(t.outcome, Verdict::Better, "{g:?}");
    assert!(g.change_pct.abs() < 5.0, "{g:?}");
    // Each pair saw the drift, one way or the other.
    for (i, tn) in t.turns.iter().enumerate() {
        let r = tn.change.iops / tn.baseline.iops;
        let want = if i % 2 == 0 { r > 1.05 } else { r < 0.95 };
        assert!(want, "pair {i}: {r}");
    }
}

#[test]
fn the_request_queue_is_tried_at_the_deepest_depth_where_it_binds() {
    // The queue's finding is read where the study kept the most in flight;
    // at the peak's depth (often shallow when a queue of 4 holds it) the
    // queue may not bind at all.
    let mut f = fake(false);
    let (_, _, runs, mut j) = studied(&mut f, Cause::DeviceQueue);
    let deepest = runs
        .iter()
        .filter(|r| r.sweep == "qd")
        .map(|r| r.workload.qd)
        .max()
        .unwrap();
    j.figures.peak.as_mut().unwrap().qd = 4;
    assert!(deepest > 4);
    assert_eq!(workload_at(At::Deepest, &j, &runs, 2).unwrap().qd, deepest);
    assert_eq!(workload_at(At::Peak, &j, &runs, 2).unwrap().qd, 4);
    let l = levers::shipped()
        .into_iter()
        .find(|l| l.id == "nr-requests")
        .unwrap();
    assert_eq!(l.at, At::Deepest);
}

#[test]
fn a_cpuset_or_a_quota_is_tried_with_as_many_threads_as_the_cpus_online() {
    // The peak's 32 in flight from one thread: on two CPUs online the
    // parallel point runs two threads of 16, whatever the cpuset allows.
    let mut f = fake(false);
    let (_, _, runs, j) = studied(&mut f, Cause::CpusAllowed);
    let peak = workload_at(At::Peak, &j, &runs, 2).unwrap();
    let w = workload_at(At::Parallel, &j, &runs, 2).unwrap();
    assert_eq!((w.threads, w.qd * w.threads), (2, peak.qd * peak.threads));
    assert_eq!((w.rw.as_str(), w.bs), ("randread", 4096));
    // A workload of more threads than CPUs keeps its own.
    let mut many = peak.clone();
    many.threads = 4;
    assert_eq!(parallel(many, 2).threads, 4);
    // The levers that lift the quota and the cpuset name that point.
    for id in ["cpu-quota", "cpuset"] {
        let l = levers::shipped().into_iter().find(|l| l.id == id).unwrap();
        assert_eq!(l.at, At::Parallel, "{id}");
    }
}

/// A queue setting the study does not know, added to the levers table as
/// one row, is one the study's Tuner changes and puts back: the hands
/// allow every queue attribute of the table, and nothing else.
#[test]
fn a_queue_setting_added_to_the_table_as_a_row_is_changed_and_put_back() {
    use ssdready_diagnosis::levers::{self, kind_queue};
    let row = "\nlever add-random\n  kind queue\n  attr add_random\n  what entropy from I/O timing\n  values set 0\n  at peak\n  measure iops\n  undo the setting it had, written back\n";
    let table = levers::parse(&format!("{}{row}", levers::TABLE)).unwrap();
    let attrs = kind_queue::attrs(&table);
    assert!(
        attrs.len() >= 6 && attrs.contains(&"add_random".to_string()),
        "{attrs:?}"
    );
    assert!(!kind_queue::attrs(&levers::shipped()).contains(&"add_random".to_string()));
    let t = tempfile::tempdir().unwrap();
    let q = t.path().join("sys/block/loop0/queue");
    std::fs::create_dir_all(&q).unwrap();
    std::fs::write(q.join("add_random"), "1\n").unwrap();
    let tuner = |extra: Vec<String>| {
        let j = t.path().join(format!("journal-{}", extra.len()));
        let made = ssdready_tune::Tuner::with_roots(t.path().join("sys"), j, vec!["loop0".into()]);
        made.unwrap().allowing(extra)
    };
    {
        let mut bare = tuner(Vec::new());
        let e = bare.set("loop0", "add_random", "0").unwrap_err();
        assert!(e.to_string().contains("not a queue setting"), "{e}");
    }
    let mut tn = tuner(attrs);
    tn.set("loop0", "add_random", "0").unwrap();
    assert_eq!(
        std::fs::read_to_string(q.join("add_random"))
            .unwrap()
            .trim(),
        "0"
    );
    tn.restore_all();
    assert_eq!(
        std::fs::read_to_string(q.join("add_random"))
            .unwrap()
            .trim(),
        "1"
    );
}

#[test]
fn the_cpus_held_awake_are_held_from_the_change_to_its_revert() {
    // The change the CPU idle lever makes: a PM QoS request of 0 µs while
    // changed, none after its revert (where this machine lets it be read).
    let read = || -> Option<i32> {
        let mut b = [0u8; 4];
        let mut f = std::fs::File::open("/dev/cpu_dma_latency").ok()?;
        (std::io::Read::read(&mut f, &mut b).ok()? == 4).then(|| i32::from_ne_bytes(b))
    };
    let Some(before) = read().filter(|&v| v != 0) else {
        eprintln!("skipped: /dev/cpu_dma_latency cannot be read here, or already holds 0");
        return;
    };
    let mut hands = NoHands("no hands".into());
    let mut change = make(&mut hands, &[], &Apply::Awake { us: 0 }).unwrap();
    change.apply().unwrap();
    assert_eq!(read(), Some(0));
    change.revert().unwrap();
    assert_eq!(read(), Some(before));
}

/// Hands whose queue change is made but cannot be put back.
struct StuckHands;

struct Stuck;

impl Change for Stuck {
    fn apply(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        Err("the queue file refused its old value".into())
    }
}

impl Hands for StuckHands {
    fn queue_unavailable(&self) -> Option<String> {
        None
    }
    fn escape_unavailable(&self) -> Option<String> {
        Some("no cgroup v2 here".into())
    }
    fn queue(&mut self, _: &[String], _: &str, _: &str) -> Result<Box<dyn Change>, String> {
        Ok(Box::new(Stuck))
    }
    fn escape(&mut self, _: &Lift) -> Result<Box<dyn Change>, String> {
        Err("no cgroup v2 here".into())
    }
}

#[test]
fn a_change_that_cannot_be_put_back_stops_the_device_studys_trials_and_says_so() {
    let mut f = fake(true);
    let (targets, p, runs, mut j) = studied(&mut f, Cause::Scheduler);
    let mut hands = StuckHands;
    let o = Options {
        quick: false,
        root: true,
        asked: true,
        budget_s: 300.0,
        queue: [("scheduler", "[mq-deadline] none"), ("nomerges", "0")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
        ..Default::default()
    };
    let mut x = Trials {
        targets: &targets,
        plan: &p,
        runs: &runs,
        runner: &mut f,
        hands: &mut hands,
    };
    let s = run(&mut x, &mut j, &o).unwrap();
    let tried: Vec<&str> = s.trials.iter().map(|t| t.lever.as_str()).collect();
    let stopped: Vec<&str> = s
        .untested
        .iter()
        .filter(|u| u.why.starts_with("the trials stopped: "))
        .map(|u| u.lever.as_str())
        .collect();
    assert_eq!(
        tried.len(),
        1,
        "no change after the one left made: {tried:?}"
    );
    assert!(s.trials[0]
        .error
        .as_deref()
        .unwrap_or_default()
        .contains("refused"));
    assert!(!stopped.is_empty(), "{:?}", s.untested);
    assert!(s.combination.is_none(), "no set is made after it");
}
