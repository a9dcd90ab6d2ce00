//! Which levers a study tries, purely, at either kind of point: the
//! device study's own ([`plan`]) or a job file as written
//! (`study --job FILE --try-changes`: [`for_job`], [`where_named`]). One
//! planner: each lever is offered by its kind ([`crate::levers::LeverKind`]),
//! gated by what the user asked and what this machine can do ([`Consent`]),
//! assessed at its point (its candidates, whether its limit can bind there
//! ([`crate::levers::binding`]), what it may buy: `estimate`) and, where a
//! limit of the study's groups binds only once another is lifted, planned
//! behind that one. Every lever that applies but is not tried is listed
//! with its reason.
//!
//! The device study tries the levers that apply here ([`crate::levers`]'s
//! conditions on the facts), ranked by what each can buy and by the
//! findings that point at them; a quick study tries every large estimate,
//! every limit of the study's own groups that holds (each lifted on its
//! own) and one or two more, each at a point where its limit can bind.
//!
//! A job's point is the job as written ([`job_point`]); its levers are the
//! host's (the queue settings of its target device and each limit of the
//! study's own groups the inventory shows set, lifted alone), the first
//! candidate of each (the job's runs are long). The job's own options are
//! its variants (the study's `job` module), not levers here, but for the
//! levers of its options that are no workload (its threads' priority),
//! tried where the job's judgement names their cause ([`where_named`]).
//! What is not tried is listed with why, and, where a command lifts the
//! reason, the command that would try it.

use crate::lever_values::lift;
use crate::levers::estimate::Estimate;
use crate::levers::{self, Candidate, Context, Lever, Point};
use crate::limit::job;
use crate::limit::Cause;
use crate::trials::{Reason, Untested};
use ssdready_core::options::Section;
use ssdready_measured::group_limits;
use ssdready_measured::limits::Inventory;
use std::collections::BTreeMap;

pub use crate::levers::Consent;

/// A lever to try, with its candidate values at its point.
#[derive(Clone, Debug)]
pub struct Planned {
    pub lever: Lever,
    pub point: Point,
    pub candidates: Vec<Candidate>,
    /// The findings point at it.
    pub pointed: bool,
    /// What its first candidate may buy, where a measurement says.
    pub estimate: Option<Estimate>,
    /// A limit of the study's own groups that holds, which it lifts: tried
    /// after the large estimates, before the rest, in a quick study too.
    pub held: bool,
    /// Its limit binds only once another limit of the study's groups is
    /// lifted ([`crate::levers::binding::hidden_by`]): that limit's lever, and why
    /// it cannot bind alone. Tried behind that lever's change, the two
    /// together against the baseline, never alone.
    pub behind: Option<(String, String)>,
}

impl Planned {
    /// The value tried first (a job tries only this one).
    pub fn candidate(&self) -> &Candidate {
        // A lever is planned only with a candidate ([`assess`]).
        assert!(
            !self.candidates.is_empty(),
            "{} planned with no candidate",
            self.lever.id
        );
        &self.candidates[0]
    }

    /// The lever and the value tried, in words.
    pub fn what(&self) -> String {
        format!("{} → {}", self.lever.what, self.candidate().value)
    }
}

/// Levers the findings point at that a quick study tries.
pub const QUICK_LEVERS: usize = 2;

/// Whether a lever may be tried; why not otherwise: its kind's gate
/// ([`crate::levers::LeverKind::gate`]).
pub fn gate(l: &Lever, cause: Cause, c: &Consent) -> Result<(), (Reason, String)> {
    l.ops().gate(cause, c)
}

fn untested(l: &Lever, reason: Reason, why: String) -> Untested {
    Untested {
        lever: l.id.clone(),
        what: l.what.clone(),
        reason,
        why,
        estimate: None,
        command: None,
    }
}

/// Where a lever is assessed: the device study's points, or a job as
/// written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum On {
    Device,
    Job,
}

impl On {
    fn place(self) -> &'static str {
        match self {
            On::Device => "on this device",
            On::Job => "on the job's device",
        }
    }

    fn where_bound(self) -> &'static str {
        match self {
            On::Device => "at any point this study runs",
            On::Job => "for this job",
        }
    }
}

/// The levers to try and those not tried, from the table, the lever
/// context, the findings (the named cause and the rules that fired), the
/// consent and the points resolved for each `at` (None: not measured).
/// Ranked by what each can buy (`estimate`): every large
/// estimate first, best first; then the ones the cause points at, then
/// those a finding points at, each in the table's order. A quick study
/// tries every large one and fills up to [`QUICK_LEVERS`] with the rest.
pub fn plan(
    table: &[Lever],
    cx: &Context,
    fired: &[String],
    consent: &Consent,
    quick: bool,
    point: &dyn Fn(levers::At) -> Option<Point>,
) -> (Vec<Planned>, Vec<Untested>) {
    let mut todo = Vec::new();
    let mut not = Vec::new();
    for l in table.iter().filter(|l| levers::applies(l, cx)) {
        let pointed = levers::pointed(l, cx.cause, fired);
        let held = held_limit(l, cx);
        let wanted = wanted(l, cx, pointed, held);
        let assessed = assess_at(l, cx, point);
        let estimate = assessed.as_ref().ok().and_then(|a| a.2.clone());
        let large = estimate.as_ref().is_some_and(Estimate::large);
        if quick && !wanted && !large {
            // A cap of the device's queue that can bind here is a limit
            // the inventory shows: said untested, never passed over.
            if let (true, Ok((p, ..))) = (l.ops().on_queue() && l.raises_cap(), &assessed) {
                let why = format!(
                    "its limit can bind at {}, but a quick study tries the changes with a large estimate and the first the findings point at",
                    p.describe()
                );
                not.push(untested(l, Reason::Quick, why).with(estimate));
            }
            continue;
        }
        if let Err((r, why)) = gate(l, cx.cause, consent) {
            // A cgroup lever needs a limit to lift: said only when the
            // findings point at it or its limit holds.
            if !l.ops().lifts_group() || wanted {
                not.push(untested(l, r, why).with(estimate));
            }
            continue;
        }
        if l.ops().lifts_group() && !wanted {
            continue;
        }
        match assessed {
            Ok((point, mut candidates, estimate)) => {
                if quick {
                    candidates.truncate(1);
                }
                let behind = crate::levers::binding::hidden_by(l, cx, &point)
                    .map(|(front, why)| (lift::word(front).to_string(), why));
                todo.push(Planned {
                    lever: l.clone(),
                    point,
                    candidates,
                    pointed,
                    estimate,
                    held,
                    behind,
                });
            }
            Err((r, why)) => not.push(untested(l, r, why)),
        }
    }
    rank(&mut todo, cx.cause);
    if quick {
        let (kept, left) = quick_share(todo, cx.cause);
        todo = kept;
        for p in left {
            not.push(
                untested(
                    &p.lever,
                    Reason::Quick,
                    "a quick study tries the changes with a large estimate and the first the findings point at".into(),
                )
                .with(p.estimate),
            );
        }
    }
    (todo, not)
}

/// A quick study's share of the ranked levers, in their order: every
/// large estimate and every limit of the study's groups that holds; the
/// first lever of the named cause's own (or else the first the findings
/// point at), whatever its estimate, so that the cause named is tried;
/// then the rest up to [`QUICK_LEVERS`]. The others are left.
fn quick_share(todo: Vec<Planned>, cause: Cause) -> (Vec<Planned>, Vec<Planned>) {
    let must = |p: &Planned| p.held || p.estimate.as_ref().is_some_and(Estimate::large);
    let first_of = |f: &dyn Fn(&Planned) -> bool| todo.iter().position(f);
    let named = first_of(&|p| p.lever.causes.contains(&cause)).or(first_of(&|p| p.pointed));
    let mut keep: Vec<bool> = todo
        .iter()
        .enumerate()
        .map(|(i, p)| must(p) || Some(i) == named)
        .collect();
    let mut room = QUICK_LEVERS.saturating_sub(keep.iter().filter(|k| **k).count());
    for k in keep.iter_mut().filter(|k| !**k) {
        if room == 0 {
            break;
        }
        *k = true;
        room -= 1;
    }
    let (mut kept, mut left) = (Vec::new(), Vec::new());
    for (p, k) in todo.into_iter().zip(keep) {
        match k {
            true => kept.push(p),
            false => left.push(p),
        }
    }
    (kept, left)
}

/// Whether a cgroup lever's limit holds on the study's groups, as the
/// inventory shows.
fn held_limit(l: &Lever, cx: &Context) -> bool {
    match (l.lift(), &cx.limits) {
        (Some(g), Some(inv)) => group_limits::holds(g, inv),
        _ => false,
    }
}

/// Whether a lever is worth a trial beyond its estimate: the findings
/// point at it; for a lever that lifts one limit of the study's groups,
/// where the inventory was read, its limit holds (each held limit is
/// tried alone, named or not) or the named cause is its own.
fn wanted(l: &Lever, cx: &Context, pointed: bool, held: bool) -> bool {
    match (l.lift(), &cx.limits) {
        (Some(_), Some(_)) => held || l.causes.contains(&cx.cause),
        _ => pointed,
    }
}

/// Best first: the large estimates by size, then the levers that lift a
/// limit of the study's groups that holds, then the cause's own levers,
/// then those a finding points at (the table's order kept among equals).
fn rank(todo: &mut [Planned], cause: Cause) {
    let big = |p: &Planned| {
        p.estimate
            .as_ref()
            .filter(|e| e.large())
            .map_or(0.0, |e| e.pct)
    };
    todo.sort_by(|a, b| {
        big(b)
            .total_cmp(&big(a))
            .then_with(|| (!a.held).cmp(&!b.held))
            .then_with(|| (!a.lever.causes.contains(&cause)).cmp(&!b.lever.causes.contains(&cause)))
            .then_with(|| (!a.pointed).cmp(&!b.pointed))
    });
}

/// A lever's point, its candidates there and what the first may buy.
type Assessed = (Point, Vec<Candidate>, Option<Estimate>);

/// [`assess`] at the device study's point for the lever, where it
/// measured one.
fn assess_at(
    l: &Lever,
    cx: &Context,
    point: &dyn Fn(levers::At) -> Option<Point>,
) -> Result<Assessed, (Reason, String)> {
    match point(l.at) {
        Some(p) => assess(l, cx, p, On::Device),
        None => Err((
            Reason::Unavailable,
            "the study measured no point to try it at".into(),
        )),
    }
}

/// A lever's candidates at point `p` and what the first may buy; or why
/// it cannot be tried there: not offered, its limit idle for the job or
/// unable to bind there (said before there being nothing left to try:
/// the more telling of the two), or nothing left to try.
fn assess(l: &Lever, cx: &Context, p: Point, on: On) -> Result<Assessed, (Reason, String)> {
    l.ops().offered(l, cx, on.place())?;
    let idle = (on == On::Job)
        .then(|| l.ops().idle_for_job(l, &p))
        .flatten();
    if let Some(why) = idle {
        return Err((Reason::CannotBind, why));
    }
    if let Some(why) = levers::cannot_bind(l, cx, &p) {
        return Err((
            Reason::CannotBind,
            format!("its limit cannot bind {}: {why}", on.where_bound()),
        ));
    }
    let candidates = levers::candidates(l, cx, &p);
    let Some(first) = candidates.first() else {
        return Err((Reason::NoCandidate, levers::nothing_to_try(l, &p)));
    };
    let e = levers::estimate(l, cx, &p, first);
    Ok((p, candidates, e))
}

/// The trials' pairs that fit in `left_s` seconds at `per_run_s` each:
/// `want` pairs when they fit, at least [`crate::trials::MIN_PAIRS`],
/// else none.
pub fn pairs_that_fit(want: usize, left_s: f64, per_run_s: f64) -> usize {
    let fit = (left_s / (2.0 * per_run_s.max(0.01))).floor() as usize;
    match fit.min(want) {
        n if n >= crate::trials::MIN_PAIRS => n,
        _ => 0,
    }
}

/// What the job's levers are planned from: the job's device, its queue
/// as read, the limits of the study's groups, and what may be changed.
#[derive(Clone, Debug, Default)]
pub struct Setting {
    /// The job's target device and, for md and device-mapper, its members
    /// (never the disk a loop device's file is on).
    pub disks: Vec<String>,
    /// The first device's queue files as read.
    pub queue: BTreeMap<String, String>,
    /// The most requests its driver takes at once.
    pub queue_depth: Option<u64>,
    pub limits: Option<Inventory>,
    pub consent: Consent,
    /// The command that tries what `--try-changes` would.
    pub command: String,
    /// The other work beside the job's runs ran in another scheduling
    /// group than its threads ([`Context::others_apart`]).
    pub others_apart: bool,
}

impl Setting {
    /// The levers' context: the queue, its depth, the limits.
    pub fn context(&self) -> Context {
        Context {
            queue: self.queue.clone(),
            queue_depth: self.queue_depth,
            limits: self.limits.clone(),
            may_raise_priority: self.consent.root,
            others_apart: self.others_apart,
            ..Default::default()
        }
    }
}

/// The job as written as a lever's point: its I/O (the first job's, or
/// mixed I/O where its jobs differ), its block (the largest size of the
/// directions it does, as fio resolves `bs`, `blocksize` and their values
/// per direction), its threads (every job's `numjobs` together, of the
/// phase that keeps the most I/Os in flight where the jobs run in turn)
/// and the I/Os they keep in flight shared among them (one each on a
/// synchronous engine).
pub fn job_point(sections: &[Section]) -> Point {
    let jobs: Vec<usize> = (0..sections.len())
        .filter(|&i| !sections[i].global)
        .collect();
    let first = jobs.first().copied().unwrap_or(0);
    let spec = |j| job::spec(sections, j);
    let own = spec(first);
    let rw = match jobs.iter().all(|&j| spec(j).rw == own.rw) {
        true => own.rw.name().to_string(),
        false => "randrw".into(),
    };
    // Each phase's threads and the I/Os they keep in flight; the phases
    // run in turn, so the busiest is the point's.
    let phase = |p: &Vec<usize>| {
        p.iter().fold((0u64, 0u64), |(threads, in_flight), &j| {
            let s = spec(j);
            let n = u64::from(s.numjobs.max(1));
            let qd = match s.engine().caps.synchronous {
                true => 1,
                false => u64::from(s.iodepth.max(1)),
            };
            (threads + n, in_flight + n * qd)
        })
    };
    let phases = job::phases(sections);
    let busiest = phases.iter().map(phase).max_by_key(|&(t, f)| (f, t));
    let (threads, in_flight) = busiest.unwrap_or((1, 1));
    let threads = threads.max(1);
    Point {
        rw,
        bs: u64::from(job::largest_block(&own)),
        qd: in_flight.div_ceil(threads).max(1) as u32,
        threads: threads as u32,
        engine: Some(job::engine_named(&own)),
        direct: own.direct,
        sizes: sizes_words(&own),
    }
}

/// A job's block sizes in words where they vary (a `bssplit`, a range,
/// sizes per direction): `512 B–64 KiB (mean 11.1 KiB)`, the mean where
/// every direction's is the same; empty for one size.
fn sizes_words(s: &ssdready_core::spec::JobSpec) -> String {
    let dirs = job::directions(s);
    let least = dirs.iter().map(|&d| s.bs.for_dir(d).min()).min();
    let (Some(least), most) = (least, job::largest_block(s)) else {
        return String::new();
    };
    if least == most {
        return String::new();
    }
    let bytes = crate::stack::ceiling_words::bytes;
    let means: Vec<f64> = dirs.iter().map(|&d| job::mean_block(s, d)).collect();
    let mean = match means.windows(2).all(|w| w[0] == w[1]) {
        true if means[0] >= 1024.0 => format!(" (mean {:.1} KiB)", means[0] / 1024.0),
        true => format!(" (mean {:.0} B)", means[0]),
        false => String::new(),
    };
    format!(
        "{}–{}{mean}",
        bytes(u64::from(least)),
        bytes(u64::from(most))
    )
}

/// A lever planned on the job as written, `p`: its first candidate
/// only, behind the limit that hides it where one does.
fn on_job(l: &Lever, cx: &Context, p: &Point) -> Result<Planned, (Reason, String)> {
    let (point, mut candidates, estimate) = assess(l, cx, p.clone(), On::Job)?;
    candidates.truncate(1);
    let behind =
        levers::binding::hidden_by(l, cx, &point).map(|(f, why)| (lift::word(f).to_string(), why));
    Ok(Planned {
        lever: l.clone(),
        point,
        candidates,
        pointed: false,
        estimate,
        held: false,
        behind,
    })
}

/// A lever not tried on the job, with the command that would try it
/// where a command lifts the reason.
fn untested_on_job(l: &Lever, what: String, reason: Reason, why: String, s: &Setting) -> Untested {
    let command = matches!(reason, Reason::NotAsked | Reason::NotRoot).then(|| s.command.clone());
    Untested {
        what,
        command,
        ..untested(l, reason, why)
    }
}

/// Whether a lever of this kind may be tried on the job: the device
/// study's [`gate`], and the job's own rule that a
/// limit of the study's groups is lifted only when asked too.
fn gate_on_job(l: &Lever, s: &Setting) -> Result<(), (Reason, String)> {
    if !s.consent.asked && s.consent.root && l.ops().lifts_group() {
        return Err((
            Reason::NotAsked,
            "a limit of the study's control group: run with --try-changes to measure the job \
             without it (from a group of ssdready's own; the user's groups unchanged)"
                .into(),
        ));
    }
    gate(l, Default::default(), &s.consent)
}

/// The levers to try on the job as written and those not tried, from
/// `table` (the shipped levers).
pub fn for_job(
    table: &[Lever],
    sections: &[Section],
    s: &Setting,
) -> (Vec<Planned>, Vec<Untested>) {
    let cx = s.context();
    let p = job_point(sections);
    let (mut todo, mut not) = (Vec::new(), Vec::new());
    for l in table {
        if !l.ops().of_host() {
            continue;
        }
        // A limit the groups do not set is nothing to lift.
        let held = held_limit(l, &cx);
        if l.ops().lifts_group() && !held {
            continue;
        }
        if l.ops().on_queue() && !s.consent.device {
            let why = "the job's target has no device queue of its own".to_string();
            not.push(untested_on_job(l, l.what.clone(), Reason::NoDevice, why, s));
            continue;
        }
        let planned = match on_job(l, &cx, &p) {
            Ok(planned) => planned,
            Err((r, why)) => {
                not.push(untested_on_job(l, l.what.clone(), r, why, s));
                continue;
            }
        };
        match gate_on_job(l, s) {
            Ok(()) => todo.push(Planned { held, ..planned }),
            Err((r, why)) => not.push(untested_on_job(l, planned.what(), r, why, s)),
        }
    }
    // A limit hidden behind another is tried after the one in front.
    todo.sort_by_key(|p| p.behind.is_some());
    (todo, not)
}

/// The job's changes in the order they are tried once its judgement has
/// named what holds it (`held`: each job's and direction's answer, with
/// what else held it): those of a limit it names first (`pointed`), then
/// the lifts of the other limits the study's groups set (`held`), those
/// tried behind them, and the rest, each in the table's order.
pub fn named_first(planned: &mut [Planned], held: &[crate::limit::point::Held]) {
    let named = |c: &Cause| {
        let also =
            |h: &crate::limit::point::Held| h.saturation.also_held.iter().any(|a| a.cause == *c);
        held.iter().any(|h| h.saturation.limit == *c || also(h))
    };
    for p in planned.iter_mut() {
        p.pointed = p.lever.causes.iter().any(named);
    }
    planned.sort_by_key(|p| match (p.behind.is_some(), p.pointed, p.held) {
        (false, true, _) => 0,
        (false, false, true) => 1,
        (true, _, _) => 2,
        (false, false, false) => 3,
    });
}

/// The levers of the job's own options that are no workload of the job's
/// (the I/O's threads ahead of other work, or each on a CPU of its own:
/// [`crate::levers::LeverKind::on_job_where_named`]) whose cause is the
/// one the job's judgement named, `named`: tried on the job as written
/// where the user asked for trials, as root; listed untested otherwise.
pub fn where_named(
    table: &[Lever],
    sections: &[Section],
    s: &Setting,
    named: Cause,
) -> (Vec<Planned>, Vec<Untested>) {
    let (cx, p) = (s.context(), job_point(sections));
    let (mut todo, mut not) = (Vec::new(), Vec::new());
    let of_named = |l: &&Lever| l.ops().on_job_where_named() && l.causes.contains(&named);
    for l in table.iter().filter(of_named) {
        let planned = match on_job(l, &cx, &p) {
            Ok(p) if p.candidate().options.iter().any(|o| o.1.is_empty()) => continue,
            Ok(p) => Planned { behind: None, ..p },
            Err((r, why)) => {
                not.push(untested_on_job(l, l.what.clone(), r, why, s));
                continue;
            }
        };
        let what = planned.what();
        match (s.consent.root, s.consent.asked) {
            (true, true) => todo.push(planned),
            (false, _) => not.push(untested_on_job(
                l,
                what,
                Reason::NotRoot,
                "as root only".into(),
                s,
            )),
            (true, false) => not.push(untested_on_job(
                l,
                what,
                Reason::NotAsked,
                "the job's judgement names its cause: run with --try-changes to measure it".into(),
                s,
            )),
        }
    }
    (todo, not)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
