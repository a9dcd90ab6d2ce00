//! The configuration through fakes whose changes interact: a device whose
//! rate follows the queue settings in effect, each a factor alone and some
//! sets a factor of their own together (two that each gain alone may add
//! less, or cancel); the hands record every change made and put back.

use super::super::*;
use crate::clock::budget_s;
use crate::driver::{Failure, Outcome as Ran, Runner};
use crate::plan::{plan, StudyOptions};
use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::trials::Outcome as Verdict;
use ssdready_measured::summary::PointSummary;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The queue settings in effect (`attr` → value; absent: as it was).
type State = Rc<RefCell<BTreeMap<String, String>>>;
/// What happened, in order: `run[settings]`, `apply ATTR`, `revert ATTR`.
type Log = Rc<RefCell<Vec<String>>>;
/// The device's rate under the settings, a factor of its own.
type Rate = Box<dyn Fn(&BTreeMap<String, String>) -> f64>;

struct Device {
    state: State,
    log: Log,
    rate: Rate,
    n: u32,
}

impl Runner for Device {
    fn run(
        &mut self,
        w: &crate::plan::Workload,
        _: &ssdready_run::RunRequest,
    ) -> Result<Ran, Failure> {
        self.n += 1;
        let state = self.state.borrow();
        // The bandwidth of 400 MB/s in blocks past 4 KiB, whatever their size.
        let blocks = (4096.0 / w.bs as f64).min(1.0);
        let iops = 100_000.0 * blocks * (self.rate)(&state) * (1.0 + 0.004 * f64::from(self.n % 3));
        let set: Vec<String> = state.iter().map(|(k, v)| format!("{k}={v}")).collect();
        self.log
            .borrow_mut()
            .push(format!("run[{}]", set.join(",")));
        Ok(Ran {
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

/// One queue setting, made and put back.
struct Setting {
    state: State,
    log: Log,
    attr: String,
    value: String,
    /// Refused while another setting is in effect (`attr=value`), as the
    /// kernel refuses a depth past the tags without a scheduler.
    refused_with: Option<String>,
}

impl Change for Setting {
    fn apply(&mut self) -> Result<(), String> {
        let mut s = self.state.borrow_mut();
        if let Some((a, v)) = self.refused_with.as_ref().and_then(|r| r.split_once('=')) {
            if s.get(a).is_some_and(|x| x == v) {
                return Err(format!("{} refused with {a}={v}", self.attr));
            }
        }
        s.insert(self.attr.clone(), self.value.clone());
        self.log.borrow_mut().push(format!("apply {}", self.attr));
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        self.state.borrow_mut().remove(&self.attr);
        self.log.borrow_mut().push(format!("revert {}", self.attr));
        Ok(())
    }
}

struct FakeHands {
    state: State,
    log: Log,
    refuse: Option<(String, String)>,
    /// It can lift the study's group's limits (cgroup v1's `cpu` and
    /// `cpuset` hierarchies left).
    groups: bool,
}

impl Hands for FakeHands {
    fn queue_unavailable(&self) -> Option<String> {
        None
    }
    fn escape_unavailable(&self) -> Option<String> {
        (!self.groups).then(|| "no cgroup v2 here".into())
    }
    fn queue(&mut self, _: &[String], attr: &str, value: &str) -> Result<Box<dyn Change>, String> {
        Ok(Box::new(Setting {
            state: self.state.clone(),
            log: self.log.clone(),
            attr: attr.into(),
            value: value.into(),
            refused_with: self
                .refuse
                .as_ref()
                .filter(|(a, _)| a == attr)
                .map(|(_, w)| w.clone()),
        }))
    }
    fn escape(
        &mut self,
        lift: &ssdready_measured::group_limits::Lift,
    ) -> Result<Box<dyn Change>, String> {
        // A group of its own without the CPU quota, the cpuset, or both:
        // each hierarchy left lifts its limit.
        let left = |c: &str| lift.v1.iter().any(|x| x == c);
        let lifted: Vec<&str> = [("cpu", "cpu.max"), ("cpuset", "cpuset.cpus")]
            .into_iter()
            .filter(|(c, _)| left(c))
            .map(|(_, f)| f)
            .collect();
        match self.groups && !lifted.is_empty() {
            true => Ok(Box::new(Group {
                state: self.state.clone(),
                lifted: lifted.into_iter().map(String::from).collect(),
            })),
            false => Err("no cgroup v2 here".into()),
        }
    }
}

/// The study's process in a group of its own: the limits lifted hold no
/// more while it is there.
struct Group {
    state: State,
    lifted: Vec<String>,
}

impl Change for Group {
    fn apply(&mut self) -> Result<(), String> {
        for f in &self.lifted {
            self.state.borrow_mut().insert(f.clone(), "lifted".into());
        }
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        for f in &self.lifted {
            self.state.borrow_mut().remove(f);
        }
        Ok(())
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

/// A factor for each setting in effect, or the set's own where `together`
/// names every setting in effect.
fn rate(
    alone: &'static [(&'static str, f64)],
    together: &'static [(&'static [&'static str], f64)],
) -> Rate {
    Box::new(move |s: &BTreeMap<String, String>| {
        let on: Vec<&str> = s.keys().map(String::as_str).collect();
        if let Some((_, f)) = together
            .iter()
            .find(|(set, _)| set.len() == on.len() && set.iter().all(|a| on.contains(a)))
        {
            return *f;
        }
        alone
            .iter()
            .filter(|(a, _)| on.contains(a))
            .map(|(_, f)| f)
            .product()
    })
}

/// What a study of the fake device measured.
struct Studied {
    section: Option<Section>,
    log: Vec<String>,
    left: BTreeMap<String, String>,
}

/// A study of the fake device whose rate is `rate`, its cause `cause`,
/// the queue files `queue` offered; `budget`: the trials' seconds (None:
/// a quick study's own).
fn study(
    rate: Rate,
    (cause, quick): (Cause, bool),
    queue: &[(&str, &str)],
    budget: Option<f64>,
    refuse: Option<(&str, &str)>,
) -> Studied {
    study_in(rate, (cause, quick), queue, budget, refuse, None)
}

/// [`study`] from a group whose limits `limits` shows (the hands can lift
/// them).
fn study_in(
    rate: Rate,
    (cause, quick): (Cause, bool),
    queue: &[(&str, &str)],
    budget: Option<f64>,
    refuse: Option<(&str, &str)>,
    limits: Option<ssdready_measured::limits::Inventory>,
) -> Studied {
    let state: State = Rc::default();
    let log: Log = Rc::default();
    let mut dev = Device {
        state: state.clone(),
        log: log.clone(),
        rate,
        n: 0,
    };
    let targets = vec![target()];
    let so = StudyOptions {
        quick: true,
        budget_s: 60.0,
        cpus: 4,
        ..Default::default()
    };
    let mut p = plan(&targets, &so);
    crate::plan::fit_budget(&mut p, &targets, &so);
    let ex = crate::driver::execute(
        &targets,
        &p,
        &mut dev,
        &mut crate::driver::Quiet,
        &crate::clock::Deadline::none(),
    );
    let mut j = crate::judge(&targets, &Default::default(), &ex.runs, false);
    j.figures.saturation.limit = cause;
    log.borrow_mut().clear();
    let mut hands = FakeHands {
        state: state.clone(),
        log: log.clone(),
        refuse: refuse.map(|(a, w)| (a.to_string(), w.to_string())),
        groups: limits.is_some(),
    };
    let o = Options {
        quick,
        root: true,
        asked: true,
        budget_s: budget.unwrap_or_else(|| budget_s(&p, true, &crate::clock::Clock::start(60.0))),
        queue: queue
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        limits,
        ..Default::default()
    };
    let mut x = Trials {
        targets: &targets,
        plan: &p,
        runs: &ex.runs,
        runner: &mut dev,
        hands: &mut hands,
    };
    let section = run(&mut x, &mut j, &o);
    let left = state.borrow().clone();
    let log = log.borrow().clone();
    Studied { section, log, left }
}

/// The scheduler, the request queue and the completions' CPU offered.
const QUEUE: &[(&str, &str)] = &[
    ("scheduler", "[mq-deadline] none"),
    ("nr_requests", "4"),
    ("rq_affinity", "1"),
];

/// A full study's trials, time enough for all.
fn full(rate: Rate) -> Studied {
    study(rate, (Cause::Scheduler, false), QUEUE, Some(1e6), None)
}

#[test]
fn the_changes_that_helped_are_measured_together_in_turns_and_lead_the_answer() {
    // +50 % and +40 % alone, +60 % together: they lift the same limit.
    let r = rate(
        &[("scheduler", 1.5), ("nr_requests", 1.4)],
        &[(&["scheduler", "nr_requests"], 1.6)],
    );
    let st = full(r);
    let s = st.section.unwrap();
    let c = s.combination.as_ref().expect("two changes helped");
    let ids: Vec<&str> = c.changes.iter().map(|m| m.lever.as_str()).collect();
    assert_eq!(ids, ["scheduler", "nr-requests"]);
    // Each member's gain alone is on what the set is judged on.
    for m in &c.changes {
        let t = s.trials.iter().find(|t| t.lever == m.lever).unwrap();
        let on = m.alone.as_ref().map(|g| (g.metric, g.change_pct));
        let trial = t.gain_on(c.measure).map(|g| (g.metric, g.change_pct));
        assert_eq!(on.map(|o| o.0), Some(c.measure), "{}", m.lever);
        assert_eq!(on, trial, "{}", m.lever);
    }
    assert_eq!(c.sets.len(), 1);
    assert_eq!(c.kept.levers, ["scheduler", "nr-requests"]);
    assert!(!c.kept.single);
    assert_eq!(c.kept.turns.len(), trials::FULL_PAIRS);
    let g = c.kept_gain().unwrap();
    assert!((g.change_pct - 60.0).abs() < 2.0, "{g:?}");
    assert!(c.beats_best, "{}", c.words);
    assert_eq!(c.at, s.trials[0].at);
    assert!(
        s.answer.starts_with(
            "the configuration to deploy: scheduler mq-deadline → none + nr-requests 4 → "
        ),
        "{}",
        s.answer
    );
    // The set's turns, the order alternating, every change made before
    // the changed run and put back after it in the reverse order.
    let n = st.log.len();
    let tail = &st.log[n - 6 * trials::FULL_PAIRS..];
    let both = format!("run[nr_requests={},scheduler=none]", c.changes[1].value);
    for (i, turn) in tail.chunks(6).enumerate() {
        let made = [
            "apply scheduler",
            "apply nr_requests",
            &both,
            "revert nr_requests",
            "revert scheduler",
        ];
        let want: Vec<&str> = match i % 2 {
            0 => [&["run[]"][..], &made[..]].concat(),
            _ => [&made[..], &["run[]"][..]].concat(),
        };
        assert_eq!(turn, want, "turn {i}");
    }
    assert!(st.left.is_empty(), "left changed: {:?}", st.left);
    // The terminal's section leads with the configuration.
    let text = ssdready_diagnosis::trials::text::section(&s);
    let second = text.lines().nth(1).unwrap();
    assert!(
        second.starts_with("  the configuration to deploy: scheduler"),
        "{text}"
    );
}

#[test]
fn a_set_that_buys_less_than_its_best_change_keeps_that_change_and_says_so() {
    // Each gains alone; together the request queue cancels the scheduler.
    let r = rate(
        &[("scheduler", 1.5), ("nr_requests", 1.3)],
        &[(&["scheduler", "nr_requests"], 1.05)],
    );
    let st = full(r);
    let s = st.section.unwrap();
    let c = s.combination.as_ref().unwrap();
    assert_eq!(c.sets.len(), 1, "two changes: no subset but the best alone");
    assert_eq!(c.sets[0].outcome, Verdict::Better);
    assert!(c.kept.single);
    assert_eq!(c.kept.levers, ["scheduler"]);
    assert_eq!(c.kept.turns, s.trials[0].turns);
    assert!(
        c.words.contains("bought less than the best single change"),
        "{}",
        c.words
    );
    assert!(
        s.answer.contains("the changes together bought less"),
        "{}",
        s.answer
    );
    assert!(st.left.is_empty());
}

#[test]
fn three_changes_that_interact_are_searched_for_the_best_subset() {
    // The request queue cancels the scheduler; the completions' CPU adds
    // to it. The search drops the change that helped least alone first
    // (rq-affinity), then the next (nr-requests), and keeps that set.
    let r = rate(
        &[
            ("scheduler", 1.5),
            ("nr_requests", 1.3),
            ("rq_affinity", 1.2),
        ],
        &[
            (&["scheduler", "nr_requests", "rq_affinity"], 1.05),
            (&["scheduler", "nr_requests"], 1.05),
            (&["scheduler", "rq_affinity"], 1.7),
        ],
    );
    let st = full(r);
    let s = st.section.unwrap();
    let c = s.combination.as_ref().unwrap();
    let sets: Vec<Vec<&str>> = c
        .sets
        .iter()
        .map(|s| s.levers.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        sets,
        [
            vec!["scheduler", "nr-requests", "rq-affinity"],
            vec!["scheduler", "nr-requests"],
            vec!["scheduler", "rq-affinity"],
        ]
    );
    assert_eq!(c.kept.levers, ["scheduler", "rq-affinity"]);
    assert!(c.beats_best);
    assert!(
        c.words
            .contains("kept the best set measured, without nr-requests"),
        "{}",
        c.words
    );
    assert!(
        s.answer
            .starts_with("the configuration to deploy: scheduler"),
        "{}",
        s.answer
    );
    assert!(st.left.is_empty());
}

#[test]
fn a_cap_that_binds_once_the_change_in_front_of_it_is_made_joins_the_configuration() {
    // The request queue buys nothing alone (the scheduler holds the rate)
    // and +50 % more once the scheduler is none: measured behind it.
    let r = rate(
        &[("scheduler", 1.5), ("nr_requests", 1.0)],
        &[(&["scheduler", "nr_requests"], 2.25)],
    );
    let s = full(r).section.unwrap();
    let c = s.combination.as_ref().unwrap();
    let behind: Vec<&str> = c
        .changes
        .iter()
        .filter(|m| m.behind)
        .map(|m| m.lever.as_str())
        .collect();
    assert_eq!(behind, ["nr-requests"]);
    assert_eq!(c.kept.levers, ["scheduler", "nr-requests"]);
    assert!(c.beats_best);
    assert!(
        c.words
            .contains("bought nothing alone, its limit binds once"),
        "{}",
        c.words
    );
    // Nothing more behind it: the set is measured, the change kept alone.
    let r = rate(&[("scheduler", 1.5), ("nr_requests", 1.0)], &[]);
    let s = full(r).section.unwrap();
    let c = s.combination.as_ref().unwrap();
    assert_eq!(c.sets.len(), 1);
    assert!(c.kept.single, "{:?}", c.kept.levers);
    assert!(
        c.words.contains("bought nothing alone, nor behind"),
        "{}",
        c.words
    );
    assert!(
        s.answer.starts_with("the best change measured: scheduler"),
        "{}",
        s.answer
    );
}

#[test]
fn one_change_that_helped_is_the_configuration_without_more_runs() {
    let r = rate(&[("scheduler", 1.5)], &[]);
    // No cap offered: nothing to try behind the change.
    let queue = &QUEUE[..1];
    let st = study(r, (Cause::Scheduler, false), queue, Some(1e6), None);
    let s = st.section.unwrap();
    let c = s.combination.as_ref().unwrap();
    assert!(c.sets.is_empty());
    assert!(c.kept.single);
    assert_eq!(c.kept.levers, ["scheduler"]);
    assert!(c.words.starts_with("one change helped beyond the noise"));
    // The last runs are the last single trial's: nothing more ran.
    let applied = st.log.iter().filter(|l| l.starts_with("apply")).count();
    let tried_queue = s.trials.iter().filter(|t| !t.devices.is_empty()).count();
    assert_eq!(applied, tried_queue * trials::FULL_PAIRS);
    assert!(
        s.answer.starts_with("the best change measured: scheduler"),
        "{}",
        s.answer
    );
}

#[test]
fn no_change_that_helped_is_no_configuration() {
    let st = full(rate(&[], &[]));
    let s = st.section.unwrap();
    assert!(!s.trials.is_empty());
    assert!(s.combination.is_none());
}

#[test]
fn a_change_refused_in_the_set_puts_back_those_made_before_it() {
    // The request queue is refused with no scheduler, as the kernel
    // refuses a depth past the tags: the set fails, the scheduler is put
    // back, and the best change alone is kept.
    let r = rate(&[("scheduler", 1.5), ("nr_requests", 1.3)], &[]);
    let st = study(
        r,
        (Cause::Scheduler, false),
        QUEUE,
        Some(1e6),
        Some(("nr_requests", "scheduler=none")),
    );
    let s = st.section.unwrap();
    let c = s.combination.as_ref().unwrap();
    assert_eq!(c.sets[0].outcome, Verdict::Failed);
    assert!(c.sets[0]
        .error
        .as_deref()
        .unwrap()
        .contains("nr-requests: nr_requests refused"));
    assert!(c.kept.single);
    assert!(
        c.words.starts_with(
            "the changes together could not be measured (could not make the change: nr-requests: nr_requests refused"
        ),
        "{}",
        c.words
    );
    assert!(
        s.answer.ends_with(
            "; the changes together could not be measured (see the configuration above)"
        ),
        "{}",
        s.answer
    );
    assert!(st.left.is_empty(), "{:?}", st.left);
    let n = st.log.len();
    assert_eq!(st.log[n - 2..], ["apply scheduler", "revert scheduler"]);
}

/// Merging off, the block layer's statistics off: a quick study's two
/// levers for the submission path.
const SUBMISSION: &[(&str, &str)] = &[("nomerges", "0"), ("iostats", "1")];

#[test]
fn a_quick_studys_budget_holds_the_combination_of_its_two_changes() {
    let r = rate(
        &[("nomerges", 1.5), ("iostats", 1.3)],
        &[(&["nomerges", "iostats"], 1.7)],
    );
    let st = study(r, (Cause::SubmissionPath, true), SUBMISSION, None, None);
    let s = st.section.unwrap();
    let ids: Vec<&str> = s.trials.iter().map(|t| t.lever.as_str()).collect();
    assert_eq!(ids, ["nomerges", "iostats"]);
    let c = s.combination.as_ref().unwrap();
    assert_eq!(c.kept.levers, ["nomerges", "iostats"]);
    assert_eq!(c.kept.turns.len(), trials::MIN_PAIRS);
    assert!(c.beats_best);
    assert!(st.left.is_empty());
}

#[test]
fn without_time_for_the_combination_the_study_says_it_was_not_measured() {
    let r = rate(&[("nomerges", 1.5), ("iostats", 1.3)], &[]);
    // The turns of the two single changes, and no more.
    let targets = vec![target()];
    let so = StudyOptions {
        quick: true,
        budget_s: 60.0,
        cpus: 4,
        ..Default::default()
    };
    let mut p = plan(&targets, &so);
    crate::plan::fit_budget(&mut p, &targets, &so);
    let per_run = p.settings.runtime_s + p.settings.ramp_s + p.overhead_s;
    let two = (2 * trials::MIN_PAIRS * 2) as f64 * per_run + 1.0;
    let st = study(
        r,
        (Cause::SubmissionPath, true),
        SUBMISSION,
        Some(two),
        None,
    );
    let s = st.section.unwrap();
    assert_eq!(s.trials.len(), 2);
    let c = s.combination.as_ref().unwrap();
    assert!(c.sets.is_empty());
    assert_eq!(
        c.not_measured.as_deref(),
        Some("no time left in the budget for its turns")
    );
    assert!(c.kept.single);
    assert!(
        c.words
            .starts_with("the changes together were not measured"),
        "{}",
        c.words
    );
}

/// A v1 group of 0.6 CPUs of quota and a cpuset of one CPU, on two CPUs
/// online.
fn quota_and_cpuset() -> ssdready_measured::limits::Inventory {
    use ssdready_measured::limits::{CgroupVersion as V, CpuQuota, CpuSet, Inventory, UsableCpus};
    Inventory {
        pid: 1,
        cgroups: vec![],
        io_throttles: vec![],
        io_latency: vec![],
        io_cost: Default::default(),
        cpu_quotas: vec![CpuQuota {
            version: V::V1,
            cgroup: "/plant".into(),
            quota_us: 60_000,
            period_us: 100_000,
            burst_us: None,
            cpus: 0.6,
            source: "/sys/fs/cgroup/cpu,cpuacct/plant/cpu.cfs_quota_us".into(),
        }],
        cpuset: Some(CpuSet {
            version: V::V1,
            cgroup: "/plant".into(),
            cpus: vec![0],
            source: "/sys/fs/cgroup/cpuset/plant/cpuset.effective_cpus".into(),
        }),
        affinity: None,
        memory_limits: vec![],
        cpus: UsableCpus::new(vec![0, 1], Some(vec![0]), None, Some(0.6)),
        devices: vec![],
        hypervisor: None,
        unread: vec![],
    }
}

/// A full study from the group of [`quota_and_cpuset`], the quota named.
fn behind_a_quota(r: Rate) -> Studied {
    let limits = Some(quota_and_cpuset());
    study_in(r, (Cause::CpuQuota, false), &[], Some(1e6), None, limits)
}

#[test]
fn a_cpuset_behind_a_quota_is_tried_behind_it_and_the_claim_is_the_pairs() {
    // The quota lifted alone: +22 % (the one CPU of the cpuset); both
    // lifted: +191 %. The cpuset alone cannot bind under the quota.
    let r = rate(
        &[("cpu.max", 1.22), ("cpuset.cpus", 1.0)],
        &[(&["cpu.max", "cpuset.cpus"], 2.91)],
    );
    let st = behind_a_quota(r);
    let s = st.section.unwrap();
    // Never "cannot bind", never tried alone.
    assert!(
        s.untested.iter().all(|u| u.lever != "cpuset"),
        "{:?}",
        s.untested
    );
    let ids: Vec<&str> = s.trials.iter().map(|t| t.lever.as_str()).collect();
    assert!(
        ids.contains(&"cpu-quota") && !ids.contains(&"cpuset"),
        "{ids:?}"
    );
    let c = s.combination.as_ref().expect("the pair measured");
    assert_eq!(c.sets[0].levers, ["cpu-quota", "cpuset"]);
    assert_eq!(c.kept.levers, ["cpu-quota", "cpuset"]);
    assert!(c.beats_best, "{}", c.words);
    let g = c.kept_gain().unwrap();
    assert!((g.change_pct - 191.0).abs() < 5.0, "{g:?}");
    assert!(c.words.contains("could not bind alone"), "{}", c.words);
    assert!(
        s.answer
            .starts_with("the configuration to deploy: cpu-quota"),
        "{}",
        s.answer
    );
    assert!(st.left.is_empty(), "left changed: {:?}", st.left);
}

#[test]
fn a_cpuset_behind_a_quota_that_bought_nothing_is_listed_untested_with_why() {
    // Neither the quota alone nor anything else helps: the pair is not
    // tried, and the cpuset says why.
    let r = rate(&[], &[]);
    let st = behind_a_quota(r);
    let s = st.section.unwrap();
    let u = s
        .untested
        .iter()
        .find(|u| u.lever == "cpuset")
        .expect("the cpuset listed untested");
    assert_eq!(u.reason, trials::Reason::Behind);
    assert!(
        u.why
            .starts_with("its limit binds only once cpu-quota is lifted"),
        "{}",
        u.why
    );
    assert!(u.why.contains("did not help alone"), "{}", u.why);
}
