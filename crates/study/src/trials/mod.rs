//! What to change, measured: the study's own advice tried on this machine
//! after its sweeps, in turns — baseline then change, change then
//! baseline, … (a drift through the trial favours neither side) — at
//! the point its finding is about, through the same [`Runner`] as every
//! other run, within the time the budget left for them. A change of the
//! host (a queue setting, the study's own control group) goes through
//! [`Hands`], each one a [`Change`] applied before its run and reverted
//! after it; the application's own choices are the runs' options and
//! change nothing. Which levers to try and what the turns say are judged
//! purely by `ssdready_diagnosis` (`trials_plan`, `trials`). Then every
//! change that helped is measured together, the configuration to deploy
//! (`combination`).
//!
//! The same machinery serves both kinds of point: the device study's
//! sweeps (this module) and the user's job as written ([`on_job`]): one
//! A/B turn ([`turn`], [`in_turns`] over a point's [`Sides`]), one maker
//! of a lever's typed change ([`make`]) and of a set of them
//! ([`Together::made`]), one pair of hands on this host ([`hands`]).

use crate::driver::{Outcome, Runner};
use crate::plan::{Plan, Workload};
use ssdready_diagnosis::levers::{self, Apply, At, Candidate, Lever, Point};
use ssdready_diagnosis::trials::combination::Hidden;
use ssdready_diagnosis::trials::plan::{self as trials_plan, Consent, Planned};
use ssdready_diagnosis::trials::section::{self as trials_section, Section};
use ssdready_diagnosis::trials::{self, Measured, Reason, Trial, Untested};
use ssdready_diagnosis::Judgement;
use ssdready_measured::group_limits::Lift;
use ssdready_measured::record::{RunRecord, TargetKind, TargetProfile};
use std::collections::BTreeMap;

/// One change of the host, made and put back around a trial's runs.
pub trait Change {
    /// Make the change.
    fn apply(&mut self) -> Result<(), String>;
    /// Put back what was there before.
    fn revert(&mut self) -> Result<(), String>;
    /// Each device's value before the change, read one by one (a queue
    /// setting on a stack's members; empty for other changes).
    fn before(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The other settings the change moved and could not put back, each
    /// in words (a scheduler switch resets `nr_requests`): the runs
    /// measured those too.
    fn moved(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What makes the host's changes: a queue setting on devices (journaled
/// and restored), and the study's own process moved to a control group of
/// its own. `Err` of `queue_unavailable`/`escape_unavailable` says why
/// this build or machine cannot.
pub trait Hands {
    /// Why queue settings cannot be changed here (None: they can).
    fn queue_unavailable(&self) -> Option<String>;
    /// Why the study cannot run from a group of its own (None: it can).
    fn escape_unavailable(&self) -> Option<String>;
    /// The change of `attr` to `value` on each of `disks`.
    fn queue(
        &mut self,
        disks: &[String],
        attr: &str,
        value: &str,
    ) -> Result<Box<dyn Change>, String>;
    /// The study's process moved out of the groups that hold the limits
    /// `lift` lifts (the others kept) and back.
    fn escape(&mut self, lift: &Lift) -> Result<Box<dyn Change>, String>;
    /// Put back whatever is still changed, after the trials; each line
    /// that is not clean returned (none by default).
    fn finish(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// Hands that can change nothing of the host, saying why.
pub struct NoHands(pub String);

impl Hands for NoHands {
    fn queue_unavailable(&self) -> Option<String> {
        Some(self.0.clone())
    }
    fn escape_unavailable(&self) -> Option<String> {
        Some(self.0.clone())
    }
    fn queue(&mut self, _: &[String], _: &str, _: &str) -> Result<Box<dyn Change>, String> {
        Err(self.0.clone())
    }
    fn escape(&mut self, _: &Lift) -> Result<Box<dyn Change>, String> {
        Err(self.0.clone())
    }
}

/// A change that changes nothing: an application lever's is in its runs'
/// options.
pub(crate) struct NoChange;

impl Change for NoChange {
    fn apply(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// What the trials may do and how long they may take.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub quick: bool,
    pub root: bool,
    /// `--try-changes`.
    pub asked: bool,
    /// The target is a device ssdready made (the built-in drive behind the
    /// kernel, its RAM loop devices).
    pub made_by_study: bool,
    /// Seconds the trials may take.
    pub budget_s: f64,
    /// The target device's queue files as read (`queue_files`).
    pub queue: BTreeMap<String, String>,
    /// The inventory of what can cap the study's I/O, where it was read:
    /// the limits of its groups, each lifted on its own by its lever.
    pub limits: Option<ssdready_measured::limits::Inventory>,
}

/// The queue files of `disk` that the levers name, as read from sysfs
/// (absent files left out: the kernel does not offer them).
pub fn queue_files(disk: &str) -> BTreeMap<String, String> {
    let mut names: Vec<String> = levers::shipped()
        .into_iter()
        .filter_map(|l| l.attr)
        .collect();
    names.extend(levers::kind_queue::READ_ALSO.map(String::from));
    ssdready_probe::blockdev::queue_files(disk, &names)
}

/// The devices a queue lever is set on: the target's own device, and for
/// md and device-mapper targets their physical members (never the disk a
/// loop device's file is on: that is not the target's stack to tune).
pub fn queue_disks(t: &TargetProfile) -> Vec<String> {
    let mut out: Vec<String> = t.device.iter().cloned().collect();
    if matches!(t.transport.as_str(), "md" | "dm") {
        for d in t.stack.iter().flat_map(|s| &s.physical) {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
    }
    out
}

/// The workload a lever's point runs: the study's own run at the peak's
/// depth, at the deepest depth or at QD 1, or large, buffered or parallel
/// reads built on it (`online`: the CPUs online, the parallel point's
/// threads where the peak's are fewer).
fn workload_at(at: At, j: &Judgement, runs: &[RunRecord], online: u32) -> Option<Workload> {
    let qd_run = |qd: u32| {
        runs.iter()
            .find(|r| r.sweep == "qd" && r.error.is_none() && r.workload.qd == qd)
            .map(|r| r.workload.clone())
    };
    let peak = j.figures.peak.as_ref().and_then(|p| qd_run(p.qd));
    match at {
        At::Peak => peak,
        At::Deepest => {
            ssdready_diagnosis::figures::curve::deepest_qd_run(runs).map(|r| r.workload.clone())
        }
        At::Qd1 => qd_run(1),
        At::Large => peak.map(|w| Workload {
            rw: "read".into(),
            bs: 1 << 20,
            qd: 8,
            threads: 1,
            ..w
        }),
        At::Buffered => peak.map(|w| Workload {
            rw: "read".into(),
            bs: 4096,
            qd: 1,
            threads: 1,
            engine: w.engine.as_ref().map(|_| "psync".to_string()),
            direct: false,
            ..w
        }),
        At::Parallel => peak.map(|w| parallel(w, online)),
    }
}

/// The peak's workload from as many threads as the CPUs online (its own
/// where more), its I/Os in flight shared among them: where a cpuset or
/// a quota binds.
fn parallel(w: Workload, online: u32) -> Workload {
    let threads = w.threads.max(online).max(1);
    let in_flight = w.qd * w.threads.max(1);
    Workload {
        qd: in_flight.div_ceil(threads).max(1),
        threads,
        ..w
    }
}

/// The CPUs online: the inventory's (`/sys/devices/system/cpu/online`),
/// else those this process may use.
fn online_cpus(o: &Options) -> u32 {
    o.limits
        .as_ref()
        .map(|i| i.cpus.online.len() as u32)
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32))
}

fn point_of(w: &Workload) -> Point {
    Point {
        rw: w.rw.clone(),
        bs: w.bs,
        qd: w.qd,
        threads: w.threads,
        engine: w.engine.clone(),
        direct: w.direct,
        sizes: String::new(),
    }
}

/// The workload with an application lever's options, and the options the
/// workload does not hold (set on the measured job after it).
fn changed(w: &Workload, c: &Candidate) -> (Workload, Vec<(String, String)>) {
    let mut w = w.clone();
    let mut extra = Vec::new();
    for (k, v) in &c.options {
        match k.as_str() {
            "ioengine" => w.engine = Some(v.clone()),
            "direct" => w.direct = v == "1",
            "numjobs" => w.threads = v.parse().unwrap_or(w.threads),
            "iodepth" => w.qd = v.parse().unwrap_or(w.qd),
            "bs" => w.bs = ssdready_core::units::parse_size(v, 1024).unwrap_or(w.bs),
            _ => extra.push((k.clone(), v.clone())),
        }
    }
    (w, extra)
}

/// Everything the trials run with.
pub struct Trials<'a> {
    pub targets: &'a [TargetProfile],
    pub plan: &'a Plan,
    pub runs: &'a [RunRecord],
    pub runner: &'a mut dyn Runner,
    pub hands: &'a mut dyn Hands,
}

/// Try the levers that apply, each in turns, within the budget; then set
/// what they measured against the findings (`trials_section::cite`: each
/// recommendation cites its trial, a cause its lever did not move lowers
/// its verdict's confidence). None when no lever applies.
pub fn run(x: &mut Trials, j: &mut Judgement, o: &Options) -> Option<Section> {
    let t = x.targets.first()?;
    let table = levers::shipped();
    let cx = context(t, j, o, x.runs);
    let rules: Vec<String> = j.verdicts.iter().map(|v| v.rule.clone()).collect();
    let fired = levers::fired(&cx, &rules);
    let online = online_cpus(o);
    let point = |at: At| workload_at(at, j, x.runs, online).map(|w| point_of(&w));
    let consent = consent(x, t, o);
    let (todo, untested) = trials_plan::plan(&table, &cx, &fired, &consent, o.quick, &point);
    if todo.is_empty() && untested.is_empty() {
        return None;
    }
    let mut s = Section {
        asked: o.asked,
        budget_s: o.budget_s,
        untested,
        ..Default::default()
    };
    let (items, behind) = items(&todo, &cx, &|at| workload_at(at, j, x.runs, online));
    let clock = combination::Clock::new(x.plan, o);
    let mut bench = Device {
        x: &mut *x,
        t,
        cx: &cx,
        clock,
        tried: behind,
    };
    let fatal = turns::each(&mut bench, &items, &mut s.trials, &mut s.untested);
    let Device {
        mut clock, tried, ..
    } = bench;
    for u in &mut s.untested {
        u.command = trials::command_to_try(u.reason, &t.spec);
    }
    trials_section::cite(&mut s, &mut j.verdicts, &table, j.figures.saturation.limit);
    if fatal.is_none() {
        combination::run(x, t, &mut s, &tried, &mut clock);
    }
    let hidden: Vec<&Hidden> = tried.iter().filter_map(|t| t.behind.as_ref()).collect();
    ssdready_diagnosis::trials::combination::untried_behind(&mut s, &hidden);
    s.spent_s = clock.started.elapsed().as_secs_f64();
    Some(s)
}

/// A planned lever at one candidate, with its point's workload.
type Item = (Planned, Candidate, Workload);

/// What the trials' loop tries: each planned lever's candidates at its
/// point's workload (a lever whose point was not measured left out); and
/// aside, each limit hidden behind another, as its part of the
/// combination: tried only behind that one, since alone it cannot bind
/// and its turns would say nothing.
fn items(
    todo: &[Planned],
    cx: &levers::Context,
    workload: &dyn Fn(At) -> Option<Workload>,
) -> (Vec<Item>, Vec<combination::Tried>) {
    let (mut items, mut behind) = (Vec::new(), Vec::new());
    for p in todo {
        let Some(w) = workload(p.lever.at) else {
            continue;
        };
        let Some((front, why)) = &p.behind else {
            items.extend(
                p.candidates
                    .iter()
                    .map(|c| (p.clone(), c.clone(), w.clone())),
            );
            continue;
        };
        if let Some(c) = p.candidates.first() {
            let mut h = combination::Tried::of(p, c, &w, lift_of(&p.lever, cx));
            let from = from_value(p, cx, &w);
            h.behind = Some(Hidden::of(&p.lever, &from, c, (front, why)));
            behind.push(h);
        }
    }
    (items, behind)
}

/// The device study's point for the trials' one loop ([`turns::each`]):
/// its runs, its clock, its levers' context, and what each trial ran
/// with (the combination's parts).
struct Device<'x, 'a> {
    x: &'x mut Trials<'a>,
    t: &'x TargetProfile,
    cx: &'x levers::Context,
    clock: combination::Clock,
    tried: Vec<combination::Tried>,
}

impl turns::Bench for Device<'_, '_> {
    type Item = Item;

    fn stopped(&self) -> bool {
        self.x.runner.stopped()
    }
    fn pairs(&self, _: &Self::Item) -> usize {
        self.clock.pairs()
    }
    fn untested(&self, (p, c, _): &Self::Item, reason: Reason, why: String) -> Untested {
        let l = (p.lever.id.as_str(), p.lever.what.as_str());
        Untested::of(l, &c.value, reason, why).with(p.estimate.clone())
    }
    fn try_one(&mut self, (p, c, w): &Self::Item, pairs: usize, _: &[Trial]) -> (Trial, bool) {
        let from = from_value(p, self.cx, w);
        let (mut trial, stop) = one(self.x, (self.t, self.cx), p, (w, c, from), pairs);
        ssdready_diagnosis::levers::binding::after_turns(&mut trial, &p.lever, self.cx);
        self.clock.runs_done += 2 * trial.turns.len();
        let lift = lift_of(&p.lever, self.cx);
        self.tried.push(combination::Tried::of(p, c, w, lift));
        (trial, stop)
    }
}

/// What the study may change here: what the user asked, what this
/// machine and these hands can do.
fn consent(x: &Trials, t: &TargetProfile, o: &Options) -> Consent {
    Consent {
        root: o.root,
        asked: o.asked,
        made_by_study: o.made_by_study,
        device: t.kind != TargetKind::Emulator && t.device.is_some(),
        queue_unavailable: x.hands.queue_unavailable(),
        escape_unavailable: x.hands.escape_unavailable(),
        pm_qos: std::path::Path::new(ssdready_run::awake::PM_QOS).exists(),
    }
}

/// What a lever's candidate replaces, in words.
fn from_value(p: &Planned, cx: &levers::Context, w: &Workload) -> String {
    levers::replaced(&p.lever, cx, &point_of(w))
}

/// What the levers' conditions are read against: the findings' facts and
/// cause, the device's queue and depth, the CPUs, the engines measured.
fn context(t: &TargetProfile, j: &Judgement, o: &Options, runs: &[RunRecord]) -> levers::Context {
    levers::Context {
        facts: j.facts.clone(),
        cause: j.figures.saturation.limit,
        queue: o.queue.clone(),
        queue_depth: t
            .device
            .as_deref()
            .and_then(ssdready_probe::blockdev::driver_depth),
        cpu_list: cpu_list(o.limits.as_ref()),
        large_read_split: large_read_split(runs),
        may_raise_priority: o.root,
        others_apart: levers::kind_priority::others_apart(runs),
        curve: j.figures.qd_curve.iter().map(|c| (c.qd, c.iops)).collect(),
        peak_iops: j.figures.peak.as_ref().map(|p| p.iops),
        device_limit_iops: known_limit(j),
        scheduler_costs: j
            .figures
            .comparisons
            .schedulers
            .iter()
            .filter_map(|c| Some((c.scheduler.clone(), c.qd, c.cost_pct?)))
            .collect(),
        cpu_wait_pct: j.figures.saturation.cpu_wait_pct,
        limits: o.limits.clone(),
        engines_measured: j
            .figures
            .comparisons
            .engines
            .iter()
            .filter(|e| e.threads == 1)
            .map(|e| (e.engine.clone(), e.qd, e.iops))
            .collect(),
    }
}

/// The CPUs this process may use: the inventory's set (online ∩ cpuset
/// ∩ affinity), else 0 up to as many as it may use.
fn cpu_list(inv: Option<&ssdready_measured::limits::Inventory>) -> String {
    let set = inv.map(|i| i.cpus.set.clone()).filter(|s| !s.is_empty());
    let n = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let set = set.unwrap_or_else(|| (0..n).collect());
    ssdready_core::units::fmt_cpu_list(set.into_iter().map(|c| c as usize))
}

/// The device's own limit for 4 KiB random reads where something
/// independent of the study's best run knows it (the model, the raw
/// device): what an estimate's headroom is measured against.
fn known_limit(j: &Judgement) -> Option<f64> {
    let d = &j.figures.device_limit;
    d.iops
        .filter(|_| d.basis != ssdready_measured::basis::HIGHEST_MEASURED)
}

/// The most requests the kernel split one large read (64 KiB or more)
/// into over the study's runs: each run's device counters against its own
/// I/Os, where their bytes agree and nothing was merged
/// (`DiskResult::split_per_io`). None where no run showed a split.
pub fn large_read_split(runs: &[RunRecord]) -> Option<f64> {
    runs.iter()
        .filter(|r| r.error.is_none() && r.workload.bs >= 64 << 10)
        .filter(|r| r.workload.rw.contains("read") && r.workload.direct)
        .filter_map(|r| r.result.as_ref())
        .flat_map(|res| res.phases.iter().flat_map(|p| &p.disks))
        .filter_map(|d| d.split_per_io())
        .max_by(f64::total_cmp)
}

/// What a cgroup lever lifts: its limit alone, the others kept, as the
/// inventory shows them (every limit at once for a lever that lifts
/// them all).
pub(super) fn lift_of(l: &Lever, cx: &levers::Context) -> Lift {
    l.lifted(cx.limits.as_ref())
}

/// The change a lever's candidate makes on the host: for a cgroup lever,
/// `lift` ([`lift_of`]).
pub(crate) fn change_of(
    hands: &mut dyn Hands,
    (l, lift): (&Lever, &Lift),
    disks: &[String],
    c: &Candidate,
) -> Result<Box<dyn Change>, String> {
    make(hands, disks, &l.apply(c, lift))
}

/// The one place a lever's typed change is made on the host: a queue
/// file written on `disks` (its original journaled and written back), the
/// study's process moved to a group of its own and back, the CPUs held
/// awake (nothing journaled: the kernel drops the request with its file);
/// the job's own options change nothing here.
pub(crate) fn make(
    hands: &mut dyn Hands,
    disks: &[String],
    a: &Apply,
) -> Result<Box<dyn Change>, String> {
    match a {
        Apply::Options(_) => Ok(Box::new(NoChange)),
        Apply::Queue { attr, value } => hands.queue(disks, attr, value),
        Apply::Escape(lift) => hands.escape(lift),
        Apply::Awake { us } => Ok(Box::new(Awake(*us, None))),
    }
}

/// Every CPU held out of idle states slower than `.0` µs to leave, from
/// the change to its revert: a PM QoS request, dropped by the kernel when
/// its file closes (a study killed meanwhile leaves nothing held).
pub struct Awake(pub u32, pub Option<ssdready_run::awake::Held>);

impl Change for Awake {
    fn apply(&mut self) -> Result<(), String> {
        self.1 = Some(ssdready_run::awake::hold_us(self.0).map_err(|e| e.to_string())?);
        Ok(())
    }
    fn revert(&mut self) -> Result<(), String> {
        self.1 = None;
        Ok(())
    }
}

/// One run of a trial, measured.
fn measure(
    runner: &mut dyn Runner,
    w: &Workload,
    r: &ssdready_run::RunRequest,
) -> Result<Measured, String> {
    match runner.run(w, r) {
        Ok(Outcome { summary, .. }) if summary.ios > 0 || summary.iops > 0.0 => {
            Ok(Measured::of(&summary))
        }
        Ok(_) => Err("the run did no I/O".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// One lever at one value, in `pairs` turns. Returns the trial and whether
/// the trials must stop (a change that could not be put back).
fn one(
    x: &mut Trials,
    (t, cx): (&TargetProfile, &levers::Context),
    p: &Planned,
    (w, c, from): (&Workload, &Candidate, String),
    pairs: usize,
) -> (Trial, bool) {
    let l = &p.lever;
    let disks = match l.ops().on_queue() {
        true => queue_disks(t),
        false => Vec::new(),
    };
    let (cw, extra) = changed(w, c);
    let base_req = crate::jobs::request(w, x.targets, &x.plan.settings, false);
    let mut change_req = crate::jobs::request(&cw, x.targets, &x.plan.settings, false);
    for (k, v) in &extra {
        change_req.set(k, v);
    }
    let point = point_of(w);
    let at = point.describe();
    let mut trial = Trial {
        baseline_options: base_req.command_line(),
        change_options: change_req.command_line(),
        ..trial_of(l, c, (from, disks.clone()), (point, at))
    };
    let mut change = match change_of(x.hands, (l, &lift_of(l, cx)), &disks, c) {
        Ok(ch) => {
            trial.members_differed = trials::members_differed(&ch.before());
            ch
        }
        Err(e) => {
            trial.outcome = trials::Outcome::Failed;
            trial.error = Some(e);
            return (trial, false);
        }
    };
    let mut sides = Runs {
        runner: &mut *x.runner,
        base: (w, &base_req),
        change: (&cw, &change_req),
    };
    let fatal = measure_trial(&mut trial, &mut sides, change.as_mut(), pairs);
    (trial, fatal)
}

/// A run of the device study: its workload and its request.
type Run<'a> = (&'a Workload, &'a ssdready_run::RunRequest);

/// The device study's sides: the study's own run and the changed one.
struct Runs<'a> {
    runner: &'a mut dyn Runner,
    base: Run<'a>,
    change: Run<'a>,
}

impl Sides for Runs<'_> {
    fn stopped(&self) -> bool {
        self.runner.stopped()
    }
    fn measure(&mut self, changed: bool) -> Result<Measured, String> {
        let (w, r) = if changed { self.change } else { self.base };
        measure(self.runner, w, r)
    }
}

/// A trial of lever `l` at candidate `c`, before its turns: changed from
/// `from` on `devices` at `point`, said as `at` (the device study's point
/// in words, or the job as written), with the lines that keep it and how
/// it is put back. The one start of every trial, the device study's and
/// the job's.
pub(crate) fn trial_of(
    l: &Lever,
    c: &Candidate,
    (from, devices): (String, Vec<String>),
    (point, at): (Point, String),
) -> Trial {
    Trial {
        lever: l.id.clone(),
        kind: l.kind,
        what: l.what.clone(),
        from,
        to: c.value.clone(),
        permanent: levers::permanent(l, &devices, c),
        devices,
        at,
        point,
        measure: l.measure,
        undo: l.undo.clone(),
        ..Default::default()
    }
}

/// Several host changes made as one, in the order given (the scheduler
/// first: [`ssdready_diagnosis::trials::combination::order`]) and put back in the
/// reverse order; a change that cannot be made puts back those made
/// before it. The trials' sets and the job's best configuration.
pub(crate) struct Together {
    parts: Vec<(String, Box<dyn Change>)>,
    /// How many are made.
    made: usize,
}

impl Together {
    pub(crate) fn of(parts: Vec<(String, Box<dyn Change>)>) -> Together {
        Together { parts, made: 0 }
    }

    /// The one builder of a set of the host's changes, for the device
    /// study's combinations and the job's best configuration alike: each
    /// lever's typed change in the trials' one order ([`levers::together`]:
    /// the scheduler first, a switch resets `nr_requests`; the cgroup
    /// limits of the set lifted by one move out of the groups, named for
    /// the study's group and its levers), made by [`make`] on `disks`.
    pub(crate) fn made(
        hands: &mut dyn Hands,
        disks: &[String],
        changes: Vec<(&Lever, Apply)>,
    ) -> Result<Together, String> {
        let mut parts: Vec<(String, Box<dyn Change>)> = Vec::new();
        for (ids, a) in levers::together(changes) {
            let name = match a.moves_process() {
                true => format!("the study's group ({})", ids.join(" + ")),
                false => ids.join(" + "),
            };
            let ch = make(hands, disks, &a).map_err(|e| format!("{name}: {e}"))?;
            parts.push((name, ch));
        }
        Ok(Together::of(parts))
    }
}

impl Change for Together {
    fn apply(&mut self) -> Result<(), String> {
        for i in 0..self.parts.len() {
            let (id, p) = &mut self.parts[i];
            if let Err(e) = p.apply() {
                let e = format!("{id}: {e}");
                self.made = i;
                return Err(match self.revert() {
                    Ok(()) => e,
                    Err(u) => format!("{e}; putting back those made before it: {u}"),
                });
            }
        }
        self.made = self.parts.len();
        Ok(())
    }

    fn revert(&mut self) -> Result<(), String> {
        let mut bad = Vec::new();
        for (id, p) in self.parts[..self.made].iter_mut().rev() {
            if let Err(e) = p.revert() {
                bad.push(format!("{id}: {e}"));
            }
        }
        self.made = 0;
        match bad.is_empty() {
            true => Ok(()),
            false => Err(bad.join("; ")),
        }
    }

    fn moved(&self) -> Vec<String> {
        self.parts.iter().flat_map(|(_, p)| p.moved()).collect()
    }
}

mod combination;
pub mod hands;
pub mod on_job;
mod turns;

pub(crate) use turns::{in_turns, measure_trial, Sides};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod limits_tests;
