//! Which changes of the host a study of a job file tries
//! (`study --job FILE --try-changes`), purely: the queue settings of the
//! job's target device and each limit of the study's own control groups
//! lifted alone (the levers of the device study, `levers.table`), each at
//! the job as written, its point ([`plan`]). The job's own options are its
//! variants (the study's `job` module), not levers here, but for the
//! levers of its options that are no workload (its threads' priority),
//! tried where the job's judgement names their cause ([`where_named`]).
//!
//! A lever is tried only where its limit can bind for this job
//! ([`crate::levers::binding`]: a request queue that admits more than
//! the job keeps in flight cannot fill, a request size no smaller than the
//! job's blocks splits nothing, read-ahead does nothing for direct or
//! random I/O, a cpuset as large as the job's threads withholds nothing,
//! a throttle that counts none of the job's directions holds nothing;
//! writeback throttling acts only on writes). A limit of the study's
//! groups is a lever only where the inventory shows it set. The first
//! candidate of each lever is tried (the job's runs are long). What is
//! not tried is listed with why, and, where a command lifts the reason,
//! the command that would try it.

use crate::levers::{self, Candidate, Context, Lever, Point};
use crate::limit::job;
use crate::limit::Cause;
use crate::trials::plan::{self as trials_plan, Consent};
use crate::trials::{Reason, Untested};
use ssdready_core::options::Section;
use ssdready_measured::group_limits;
use ssdready_measured::limits::Inventory;
use std::collections::BTreeMap;

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
}

/// A lever to try on the job, with the value tried.
#[derive(Clone, Debug)]
pub struct Planned {
    pub lever: Lever,
    pub candidate: Candidate,
    /// Its limit binds only once another limit of the study's groups is
    /// lifted ([`levers::binding::hidden_by`]): that limit's lever, and why
    /// it cannot bind alone. Tried behind that lever's change, the two
    /// together against the job as written, never alone.
    pub behind: Option<(String, String)>,
}

impl Setting {
    /// The levers' context: the queue, its depth, the limits.
    pub fn context(&self) -> Context {
        Context {
            queue: self.queue.clone(),
            queue_depth: self.queue_depth,
            limits: self.limits.clone(),
            may_raise_priority: self.consent.root,
            ..Default::default()
        }
    }
}
/// The job as written as a lever's point: its I/O (the first job's, or
/// mixed I/O where its jobs differ), its block (the largest size of the
/// directions it does, as fio resolves `bs`, `blocksize` and their values
/// per direction), its threads (every job's `numjobs` together) and the
/// I/Os they keep in flight shared among them (one each on a synchronous
/// engine).
pub fn point(sections: &[Section]) -> Point {
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
    let (mut threads, mut in_flight) = (0u64, 0u64);
    for &j in &jobs {
        let s = spec(j);
        let n = u64::from(s.numjobs.max(1));
        let qd = match s.engine().caps.synchronous {
            true => 1,
            false => u64::from(s.iodepth.max(1)),
        };
        threads += n;
        in_flight += n * qd;
    }
    let threads = threads.max(1);
    Point {
        rw,
        bs: u64::from(job::largest_block(&own)),
        qd: in_flight.div_ceil(threads).max(1) as u32,
        threads: threads as u32,
        engine: Some(job::engine_named(&own)),
        direct: own.direct,
    }
}

fn untested(l: &Lever, what: String, reason: Reason, why: String, s: &Setting) -> Untested {
    let command = matches!(reason, Reason::NotAsked | Reason::NotRoot).then(|| s.command.clone());
    Untested {
        lever: l.id.clone(),
        what,
        reason,
        why,
        estimate: None,
        command,
    }
}

/// Why a lever cannot be tried on the job (its reason and words), or its
/// candidate.
fn assess(l: &Lever, cx: &Context, p: &Point) -> Result<Candidate, (Reason, String)> {
    l.ops().offered(l, cx, "on the job's device")?;
    if let Some(why) = l.ops().idle_for_job(l, p) {
        return Err((Reason::CannotBind, why));
    }
    if let Some(why) = levers::cannot_bind(l, cx, p) {
        return Err((
            Reason::CannotBind,
            format!("its limit cannot bind for this job: {why}"),
        ));
    }
    let Some(first) = levers::candidates(l, cx, p).into_iter().next() else {
        return Err((
            Reason::NoCandidate,
            "nothing to try: it is already at the value the study would try".into(),
        ));
    };
    Ok(first)
}

/// Whether a lever of this kind may be tried on the job: the device
/// study's gate ([`trials_plan::gate`]), and the job's own rule that a
/// limit of the study's groups is lifted only when asked too.
fn gate(l: &Lever, s: &Setting) -> Result<(), (Reason, String)> {
    if !s.consent.asked && s.consent.root && l.ops().lifts_group() {
        return Err((
            Reason::NotAsked,
            "a limit of the study's control group: run with --try-changes to measure the job \
             without it (from a group of ssdready's own; the user's groups unchanged)"
                .into(),
        ));
    }
    trials_plan::gate(l, Default::default(), &s.consent)
}

/// The levers to try on the job as written and those not tried, from
/// `table` (the shipped levers).
pub fn plan(table: &[Lever], sections: &[Section], s: &Setting) -> (Vec<Planned>, Vec<Untested>) {
    let cx = s.context();
    let p = point(sections);
    let (mut todo, mut not) = (Vec::new(), Vec::new());
    for l in table {
        if !l.ops().of_host() {
            continue;
        }
        let held = match (l.ops().lifts_group(), l.lift(), &s.limits) {
            (true, Some(g), Some(inv)) => group_limits::holds(g, inv),
            (lifts, ..) => !lifts,
        };
        // A limit the groups do not set is nothing to lift.
        if !held {
            continue;
        }
        if l.ops().on_queue() && !s.consent.device {
            let why = "the job's target has no device queue of its own".to_string();
            not.push(untested(l, l.what.clone(), Reason::NoDevice, why, s));
            continue;
        }
        let c = match assess(l, &cx, &p) {
            Ok(c) => c,
            Err((r, why)) => {
                not.push(untested(l, l.what.clone(), r, why, s));
                continue;
            }
        };
        let what = format!("{} → {}", l.what, c.value);
        let behind =
            levers::binding::hidden_by(l, &cx, &p).map(|(f, why)| (f.word().to_string(), why));
        match gate(l, s) {
            Ok(()) => todo.push(Planned {
                lever: l.clone(),
                candidate: c,
                behind,
            }),
            Err((r, why)) => not.push(untested(l, what, r, why, s)),
        }
    }
    // A limit hidden behind another is tried after the one in front.
    todo.sort_by_key(|p| p.behind.is_some());
    (todo, not)
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
    let (cx, p) = (s.context(), point(sections));
    let (mut todo, mut not) = (Vec::new(), Vec::new());
    let of_named = |l: &&Lever| l.ops().on_job_where_named() && l.causes.contains(&named);
    for l in table.iter().filter(of_named) {
        let c = match assess(l, &cx, &p) {
            Ok(c) if c.options.iter().any(|o| o.1.is_empty()) => continue,
            Ok(c) => c,
            Err((r, why)) => {
                not.push(untested(l, l.what.clone(), r, why, s));
                continue;
            }
        };
        let what = format!("{} → {}", l.what, c.value);
        match (s.consent.root, s.consent.asked) {
            (true, true) => todo.push(Planned {
                lever: l.clone(),
                candidate: c,
                behind: None,
            }),
            (false, _) => not.push(untested(l, what, Reason::NotRoot, "as root only".into(), s)),
            (true, false) => not.push(untested(
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
#[path = "job_plan_tests.rs"]
mod tests;
