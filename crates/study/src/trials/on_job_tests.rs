//! The host's changes on the job, with hands that record what they do and
//! a run function whose rate the change sets: each change in turns, made
//! before its run and put back after it, the order alternating; a change
//! that cannot be put back stops the trials; the changes that helped are
//! made together, the scheduler first, put back in reverse.

use super::*;
use crate::trials::on_job::Planned;
use ssdready_core::result::{DirResult, JobResult, RunResult};
use ssdready_diagnosis::levers::{Candidate, Kind};
use ssdready_measured::group_limits::Lift;
use ssdready_run::Failure;
use std::cell::RefCell;
use std::rc::Rc;

type Log = Rc<RefCell<Vec<String>>>;

struct Fake {
    log: Log,
    /// The change whose revert fails.
    stuck: Option<String>,
}

struct FakeChange {
    name: String,
    log: Log,
    stuck: bool,
}

impl Change for FakeChange {
    fn apply(&mut self) -> Result<(), String> {
        self.log.borrow_mut().push(format!("set {}", self.name));
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        if self.stuck {
            return Err(format!("{} was changed by another process", self.name));
        }
        self.log.borrow_mut().push(format!("back {}", self.name));
        Ok(())
    }
}

impl Hands for Fake {
    fn queue_unavailable(&self) -> Option<String> {
        None
    }
    fn escape_unavailable(&self) -> Option<String> {
        None
    }
    fn queue(&mut self, disks: &[String], attr: &str, v: &str) -> Result<Box<dyn Change>, String> {
        let name = format!("{}/{attr}={v}", disks.join(","));
        Ok(Box::new(FakeChange {
            stuck: self.stuck.as_deref() == Some(attr),
            name,
            log: self.log.clone(),
        }))
    }
    fn escape(&mut self, lift: &Lift) -> Result<Box<dyn Change>, String> {
        Ok(Box::new(FakeChange {
            // A lift of several limits at once names every v2 controller.
            name: match lift.v2.len() {
                0 | 1 => format!("escape {:?}", lift.limit),
                _ => format!("escape {:?} {}", lift.limit, lift.v2.join("+")),
            },
            log: self.log.clone(),
            stuck: false,
        }))
    }
}

fn planned(id: &str, value: &str) -> Planned {
    Planned {
        lever: levers::shipped().into_iter().find(|l| l.id == id).unwrap(),
        point: crate::trials::on_job::job_point(&sections()),
        candidates: vec![Candidate {
            value: value.into(),
            options: vec![],
        }],
        pointed: false,
        estimate: None,
        held: false,
        behind: None,
    }
}

/// A run's result: the job's reads at `iops`.
fn read_at(iops: f64) -> RunResult {
    RunResult {
        jobs: vec![JobResult {
            name: "db".into(),
            read: Some(DirResult {
                ios: 1000,
                iops,
                bw_bytes_per_s: iops * 4096.0,
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A run: 1000 IOPS, 1500 while a queue change is made.
fn run_with(log: Log) -> impl FnMut(&ssdready_run::RunRequest) -> Result<RunResult, Failure> {
    move |_| {
        let changed = log
            .borrow()
            .iter()
            .rev()
            .find(|e| e.starts_with("set") || e.starts_with("back"))
            .is_some_and(|e| e.starts_with("set"));
        log.borrow_mut()
            .push(if changed { "run changed" } else { "run job" }.into());
        let iops = if changed { 1500.0 } else { 1000.0 };
        Ok(read_at(iops))
    }
}

fn setting() -> Setting {
    Setting {
        disks: vec!["loop7".into()],
        queue: [("scheduler", "[mq-deadline] none"), ("nr_requests", "4")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

fn sections() -> Vec<Section> {
    vec![Section {
        name: "db".into(),
        global: false,
        options: vec![ssdready_core::options::RawOption::cli(
            "rw",
            Some("randread"),
        )],
    }]
}

#[test]
fn each_change_runs_in_turns_against_the_job_and_is_put_back_after_each_run() {
    let log: Log = Rc::default();
    let mut hands = Fake {
        log: log.clone(),
        stuck: None,
    };
    let mut host = Host {
        setting: setting(),
        hands: &mut hands,
        budget: None,
    };
    let mut run = run_with(log.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let s = super::run(
        &sections(),
        &mut host,
        vec![planned("nr-requests", "64")],
        vec![],
        &mut run,
        &stop,
        &mut |_| {},
    );
    let t = &s.trials[0];
    assert_eq!(t.turns.len(), trials::MIN_PAIRS);
    assert_eq!((t.from.as_str(), t.to.as_str()), ("4", "64"));
    assert_eq!(t.outcome, Outcome::Better, "{t:?}");
    let g = t.main_gain().unwrap();
    assert!((g.change_pct - 50.0).abs() < 1e-9, "{g:?}");
    let l = log.borrow();
    let first: Vec<&str> = l[..8].iter().map(String::as_str).collect();
    assert_eq!(
        first,
        [
            "run job",
            "set loop7/nr_requests=64",
            "run changed",
            "back loop7/nr_requests=64",
            "set loop7/nr_requests=64",
            "run changed",
            "back loop7/nr_requests=64",
            "run job",
        ]
    );
    let sets = l.iter().filter(|e| e.starts_with("set")).count();
    let backs = l.iter().filter(|e| e.starts_with("back")).count();
    assert_eq!((sets, backs), (trials::MIN_PAIRS, trials::MIN_PAIRS));
    assert!(
        words(&s).contains("nr-requests 4 → 64: IOPS +50.0 %"),
        "{}",
        words(&s)
    );
}

#[test]
fn a_lever_of_the_jobs_own_options_changes_the_jobs_side_and_stays_out_of_the_best_set() {
    // The job's threads at nice -10 (its judgement named other work): the
    // changed side runs the job with the option, the job as written
    // without; nothing on the host is set or put back.
    let log: Log = Rc::default();
    let mut p = planned("priority", "nice=-10");
    p.candidates[0].options = vec![("nice".into(), "-10".into())];
    let l2 = log.clone();
    let mut run = move |r: &ssdready_run::RunRequest| -> Result<RunResult, Failure> {
        let niced = r.sections.iter().any(|s| {
            let nice = |o: &&ssdready_core::options::RawOption| o.key == "nice";
            s.options
                .iter()
                .any(|o| nice(&o) && o.value.as_deref() == Some("-10"))
        });
        l2.borrow_mut()
            .push(if niced { "run niced" } else { "run job" }.into());
        Ok(read_at(if niced { 1800.0 } else { 1000.0 }))
    };
    let s = tried_with(setting(), vec![p], &log, &mut run);
    let t = &s.trials[0];
    assert_eq!(t.outcome, Outcome::Better, "{t:?}");
    assert_eq!((t.from.as_str(), t.to.as_str()), ("as written", "nice=-10"));
    let l = log.borrow();
    let niced = l.iter().filter(|e| *e == "run niced").count();
    assert_eq!(
        (niced, l.len()),
        (trials::MIN_PAIRS, 2 * trials::MIN_PAIRS),
        "{l:?}"
    );
    assert!(
        !l.iter()
            .any(|e| e.starts_with("set") || e.starts_with("back")),
        "{l:?}"
    );
    assert!(
        helped(&s).is_empty(),
        "a change of the job's own options is no host change"
    );
    let heading = "changes of the host, and of the job's own threads' priority, each in turns";
    assert!(words(&s).starts_with(heading), "{}", words(&s));
}

#[test]
fn a_change_that_cannot_be_put_back_stops_the_trials() {
    let log: Log = Rc::default();
    let mut hands = Fake {
        log: log.clone(),
        stuck: Some("nr_requests".into()),
    };
    let mut host = Host {
        setting: setting(),
        hands: &mut hands,
        budget: None,
    };
    let mut run = run_with(log.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let s = super::run(
        &sections(),
        &mut host,
        vec![planned("nr-requests", "64"), planned("scheduler", "none")],
        vec![],
        &mut run,
        &stop,
        &mut |_| {},
    );
    assert_eq!(s.trials.len(), 1);
    assert!(s.trials[0]
        .error
        .as_deref()
        .unwrap()
        .contains("could not put it back"));
    assert_eq!(s.untested[0].lever, "scheduler");
    assert!(
        s.untested[0].why.contains("the trials stopped"),
        "{:?}",
        s.untested
    );
}

#[test]
fn the_changes_that_helped_are_made_together_the_scheduler_first_and_put_back_in_reverse() {
    let log: Log = Rc::default();
    let mut hands = Fake {
        log: log.clone(),
        stuck: None,
    };
    let mut host = Host {
        setting: setting(),
        hands: &mut hands,
        budget: None,
    };
    let trial = |lever: &str, to: &str, kind: Kind| Trial {
        lever: lever.into(),
        to: to.into(),
        kind,
        ..Default::default()
    };
    let helped = [
        trial("nr-requests", "64", Kind::Queue),
        trial("cpu-quota", "without the CPU quota", Kind::Cgroup),
        trial("scheduler", "none", Kind::Queue),
    ];
    let refs: Vec<&Trial> = helped.iter().collect();
    let mut c = together(&mut host, &refs).unwrap();
    c.apply().unwrap();
    c.revert().unwrap();
    let l = log.borrow();
    assert_eq!(
        *l,
        [
            "set loop7/scheduler=none",
            "set loop7/nr_requests=64",
            "set escape Some(CpuQuota)",
            "back escape Some(CpuQuota)",
            "back loop7/nr_requests=64",
            "back loop7/scheduler=none",
        ]
    );
}

/// A queue setting the shipped table does not know, as a row of its own.
const NEW_ROW: &str = "
lever add-random
  kind queue
  attr add_random
  what whether the block layer feeds the entropy pool from its completions
  values set 0
  at peak
  measure iops
  undo the setting it had, written back
";

#[test]
fn a_queue_file_added_as_a_table_row_alone_is_tried_on_the_job_and_put_back() {
    let table = levers::parse(&format!("{}{NEW_ROW}", levers::TABLE)).unwrap();
    let mut setting = setting();
    setting.queue.insert("add_random".into(), "1".into());
    setting.consent = ssdready_diagnosis::trials::plan::Consent {
        root: true,
        asked: true,
        device: true,
        ..Default::default()
    };
    let (todo, _) = crate::trials::on_job::for_job(&table, &sections(), &setting);
    let p = todo
        .into_iter()
        .find(|p| p.lever.id == "add-random")
        .unwrap();
    let log: Log = Rc::default();
    let mut hands = Fake {
        log: log.clone(),
        stuck: None,
    };
    let mut host = Host {
        setting,
        hands: &mut hands,
        budget: None,
    };
    let mut run = run_with(log.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let s = super::run(
        &sections(),
        &mut host,
        vec![p],
        vec![],
        &mut run,
        &stop,
        &mut |_| {},
    );
    let t = &s.trials[0];
    assert_eq!((t.from.as_str(), t.to.as_str()), ("1", "0"));
    assert_eq!(t.kind, Kind::Queue);
    let l = log.borrow();
    let sets = l.iter().filter(|e| *e == "set loop7/add_random=0").count();
    let backs = l.iter().filter(|e| *e == "back loop7/add_random=0").count();
    assert_eq!(
        (sets, backs),
        (trials::MIN_PAIRS, trials::MIN_PAIRS),
        "{l:?}"
    );
    assert!(
        t.permanent.contains("ATTR{queue/add_random}=\"0\""),
        "{}",
        t.permanent
    );
}

#[test]
fn not_asked_the_study_says_what_it_did_not_try_and_how_to_ask() {
    let s = HostSection {
        asked: false,
        untested: vec![Untested {
            lever: "nr-requests".into(),
            what: "the requests the block layer queues per hardware queue → 64".into(),
            reason: Reason::NotAsked,
            why: "a setting of this host: run with --try-changes".into(),
            estimate: None,
            command: Some("sudo ssdready study --job db.fio --try-changes".into()),
        }],
        ..Default::default()
    };
    let w = words(&s);
    assert!(w.contains("not tried on the job"), "{w}");
    assert!(
        w.contains("to try them: sudo ssdready study --job db.fio --try-changes"),
        "{w}"
    );
}

/// A cpuset of one CPU behind a quota of 0.6 CPUs on two CPUs, planned
/// from the groups' inventory: the quota first, the cpuset behind it.
fn hidden_pair() -> (Setting, Vec<Planned>) {
    let mut inv = ssdready_measured::group_limits::fixtures::v2_service();
    inv.cpus.online = vec![0, 1];
    if let Some(q) = inv.cpu_quotas.first_mut() {
        q.cpus = 0.6;
    }
    let mut s = setting();
    s.limits = Some(inv);
    s.consent.root = true;
    s.consent.asked = true;
    let two = vec![Section {
        name: "db".into(),
        global: false,
        options: [("rw", "randread"), ("numjobs", "2"), ("iodepth", "8")]
            .iter()
            .map(|(k, v)| ssdready_core::options::RawOption::cli(k, Some(v)))
            .collect(),
    }];
    let (mut todo, _) = crate::trials::on_job::for_job(&levers::shipped(), &two, &s);
    // The service's I/O limits are other trials'.
    todo.retain(|p| ["cpu-quota", "cpuset"].contains(&p.lever.id.as_str()));
    (s, todo)
}

/// A run whose rate the escapes set: `alone` with the quota's group
/// change made, `both` with both limits lifted by one move, 1000 as
/// written.
fn run_lifted(
    log: Log,
    (alone, both): (f64, f64),
) -> impl FnMut(&ssdready_run::RunRequest) -> Result<RunResult, Failure> {
    move |_| {
        let last = log
            .borrow()
            .iter()
            .rev()
            .find(|e| e.starts_with("set") || e.starts_with("back"))
            .cloned()
            .unwrap_or_default();
        let iops = match (
            last.starts_with("set"),
            last.to_lowercase().contains("cpuset"),
        ) {
            (true, true) => both,
            (true, false) => alone,
            _ => 1000.0,
        };
        log.borrow_mut().push(format!("run {iops}"));
        Ok(read_at(iops))
    }
}

fn try_pair(rates: (f64, f64)) -> (HostSection, Vec<String>) {
    let (setting, planned) = hidden_pair();
    try_planned(setting, planned, rates)
}

/// `planned` tried on `setting` with [`run_lifted`]'s rates: the section
/// and what the hands and runs did.
fn try_planned(
    setting: Setting,
    planned: Vec<Planned>,
    rates: (f64, f64),
) -> (HostSection, Vec<String>) {
    let log: Log = Rc::default();
    let mut run = run_lifted(log.clone(), rates);
    let s = tried_with(setting, planned, &log, &mut run);
    let log = log.borrow().clone();
    (s, log)
}

/// `planned` tried on `setting` with hands that write into `log`, each
/// run by `run`.
fn tried_with(setting: Setting, planned: Vec<Planned>, log: &Log, run: &mut RunFn) -> HostSection {
    let mut hands = Fake {
        log: log.clone(),
        stuck: None,
    };
    let mut host = Host {
        setting,
        hands: &mut hands,
        budget: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    super::run(
        &sections(),
        &mut host,
        planned,
        Vec::new(),
        run,
        &stop,
        &mut |_| {},
    )
}

#[test]
fn a_cpuset_hidden_behind_a_quota_is_tried_behind_it_and_both_go_into_the_best_set() {
    let (_, planned) = hidden_pair();
    let order: Vec<(&str, Option<&str>)> = planned
        .iter()
        .map(|p| (p.lever.id.as_str(), p.behind.as_ref().map(|b| b.0.as_str())))
        .collect();
    assert_eq!(
        order,
        [("cpu-quota", None), ("cpuset", Some("cpu-quota"))],
        "the quota first, the cpuset behind it"
    );
    // The quota alone +20 %, both lifted +100 %.
    let (s, log) = try_pair((1200.0, 2000.0));
    let cs = s.trials.iter().find(|t| t.lever == "cpuset").unwrap();
    assert_eq!(cs.behind.as_deref(), Some("cpu-quota"));
    assert_eq!(cs.outcome, Outcome::Better, "{cs:?}");
    // The quota is lifted with it: not among the limits kept.
    let change = cs.change();
    assert!(
        change.starts_with("cpuset in the study's group → without the cpuset, the I/O throttle")
            && change.ends_with("kept behind cpu-quota lifted")
            && !change.contains("CPU quota"),
        "{change}"
    );
    // The pair was made as one move of the study's process, never the
    // cpuset alone.
    assert!(
        log.iter()
            .any(|e| e.starts_with("set escape Some(CpuQuota) ") && e.contains("cpuset")),
        "{log:?}"
    );
    assert!(
        !log.iter().any(|e| e == "set escape Some(Cpuset)"),
        "{log:?}"
    );
    let mut best: Vec<&str> = helped(&s).iter().map(|t| t.lever.as_str()).collect();
    best.sort();
    assert_eq!(best, ["cpu-quota", "cpuset"]);
    assert!(words(&s).contains("cpuset"), "{}", words(&s));
}

#[test]
fn a_hidden_limit_that_adds_nothing_beyond_the_one_in_front_did_not_bind() {
    // Both lifted buy what the quota alone does.
    let (s, _) = try_pair((1500.0, 1500.0));
    let cs = s.trials.iter().find(|t| t.lever == "cpuset").unwrap();
    assert_eq!(cs.outcome, Outcome::NoGain, "{cs:?}");
    let why = cs.unbound.as_deref().unwrap_or_default();
    assert!(why.contains("not beyond cpu-quota's own +50.0 %"), "{why}");
    let best: Vec<&str> = helped(&s).iter().map(|t| t.lever.as_str()).collect();
    assert_eq!(best, ["cpu-quota"]);
}

#[test]
fn a_limit_said_hidden_is_tried_alone_where_the_one_in_front_gained_nothing_or_was_not_tried() {
    // The quota alone gains nothing: it held nothing back, and hid
    // nothing. The cpuset alone doubles the rate.
    let (s, log) = try_pair((1000.0, 2000.0));
    let cs = s.trials.iter().find(|t| t.lever == "cpuset").unwrap();
    assert_eq!(cs.behind, None, "{cs:?}");
    assert_eq!(cs.outcome, Outcome::Better, "{cs:?}");
    assert!(
        log.iter().any(|e| e == "set escape Some(Cpuset)"),
        "{log:?}"
    );
    let best: Vec<&str> = helped(&s).iter().map(|t| t.lever.as_str()).collect();
    assert_eq!(
        best,
        ["cpuset"],
        "the quota that gained nothing is no part of it"
    );
    // The quota not tried at all: the cpuset is tried alone too.
    let (setting, mut planned) = hidden_pair();
    planned.retain(|p| p.lever.id == "cpuset");
    let (s, _) = try_planned(setting, planned, (1000.0, 2000.0));
    assert_eq!(s.trials.len(), 1);
    assert_eq!(s.trials[0].behind, None);
    assert_eq!(s.trials[0].outcome, Outcome::Better);
}

#[test]
fn fio_checks_the_change_that_gained_else_the_lift_of_the_limit_named() {
    use ssdready_diagnosis::limit::Cause;
    // The quota alone +20 %, both lifted +100 %: the pair gained most.
    let (s, _) = try_pair((1200.0, 2000.0));
    let first = s.trials.first().map(|t| t.lever.as_str());
    let checked = for_fio(&s, Some(Cause::CpuQuota)).map(|t| t.lever.as_str());
    assert_eq!(checked, first, "{:?}", s.trials);
    assert_eq!(checked.map(|_| s.trials[0].outcome), Some(Outcome::Better));
    // Nothing gained: fio checks the lift of the limit named as what holds
    // the job, and nothing where none is named or no trial lifts it.
    let (s, _) = try_pair((1000.0, 1000.0));
    assert!(s.trials.iter().all(|t| t.outcome != Outcome::Better));
    let lever = |c| for_fio(&s, c).map(|t| t.lever.as_str());
    assert_eq!(lever(Some(Cause::CpuQuota)), Some("cpu-quota"));
    assert_eq!(lever(Some(Cause::CpusAllowed)), Some("cpuset"));
    assert_eq!(lever(None), None);
    assert_eq!(lever(Some(Cause::IoThrottle)), None);
}

#[test]
fn a_change_that_moved_a_setting_the_kernel_would_not_take_back_is_credited_with_it() {
    // A switch to `none` resets nr_requests and refuses the old 256: made
    // for good, the change brings the same move, so its gain goes into the
    // best configuration and fio's turns check it, the move said beside.
    let (mut s, _) = try_pair((1200.0, 2000.0));
    let moved = "nr_requests on loop0 (256 → 128 with scheduler none, which refuses 256)";
    s.trials[0].moved = Some(moved.into());
    let first = s.trials[0].lever.clone();
    assert_eq!(s.trials[0].outcome, Outcome::Better);
    assert_eq!(
        for_fio(&s, None).map(|t| t.lever.clone()),
        Some(first.clone())
    );
    assert!(helped(&s).iter().any(|t| t.lever == first));
    let text = words(&s);
    assert!(
        text.contains(&format!(
            "it also moved {moved}, as the kernel does wherever the change is made"
        )),
        "{text}"
    );
}

#[test]
fn past_the_named_limits_a_change_is_tried_only_where_the_best_configurations_turns_still_fit() {
    let log: Log = Rc::default();
    let mut hands = Fake {
        log: log.clone(),
        stuck: None,
    };
    let mut host = Host {
        setting: setting(),
        hands: &mut hands,
        budget: None,
    };
    let named = Planned {
        pointed: true,
        ..planned("nr-requests", "64")
    };
    let mut run = run_with(log.clone());
    let stop = Arc::new(AtomicBool::new(false));
    // The budget's end `s` seconds away, a run taking `run_s`.
    let mut trials = |in_s: u64, run_s: f64, planned: Vec<Planned>| {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(in_s);
        host.budget = Some(crate::clock::RunBudget::new(end, run_s));
        super::run(
            &sections(),
            &mut host,
            planned,
            vec![],
            &mut run,
            &stop,
            &mut |_| {},
        )
    };
    // A budget already spent: nothing fits in it but what must be tried.
    let s = trials(0, 1.0, vec![named, planned("nomerges", "2")]);
    let tried: Vec<&str> = s.trials.iter().map(|t| t.lever.as_str()).collect();
    assert_eq!(tried, ["nr-requests"], "{s:?}");
    assert_eq!(s.untested.len(), 1, "{s:?}");
    assert_eq!(s.untested[0].reason, Reason::NoTime);
    assert!(s.untested[0].why.contains("no time left"), "{s:?}");
    // Time for its own turns, not for the best configuration's after them:
    // the time kept is said.
    let s = trials(900, 100.0, vec![planned("nomerges", "2")]);
    assert!(s.trials.is_empty(), "{s:?}");
    let kept = "the time kept for the best configuration's turns";
    assert!(s.untested[0].why.contains(kept), "{s:?}");
    // With time enough, both are tried.
    let s = trials(3600, 1.0, vec![planned("nomerges", "2")]);
    assert_eq!(s.trials.len(), 1, "{s:?}");
}
