//! What holds a point that no sweep drew: the user's own job, run in
//! repeats as written, beside its variants that keep more I/Os in flight
//! (a deeper iodepth, more jobs). Its runs carry what a sweep's point
//! carries (the run's rates and latency, the CPUs' and threads' busy
//! time and run-queue waits, the device's in-flight and busy time, the
//! control groups' counters), named as the queue-depth sweep names its
//! own (`qd-N`, N the job's iodepth; the instrumented run in the sweep
//! `instrumented`), so that the same causes judge them on the same
//! evidence against the same caps ([`super::classify_points`]).
//!
//! The job's variants are evidence, not causes: where every variant that
//! kept more in flight gained less than a doubling of depth must
//! ([`MORE_IN_FLIGHT_PCT`], or the repeats' noise where that is larger)
//! over the best that kept fewer, the rate stopped growing with depth —
//! what the device study reads from its curve's last doublings. Where
//! nothing is identified but a variant with more threads gained and none
//! that kept as many in flight from the job's own threads did, that is
//! said: the rate grows with threads, not with I/Os in flight
//! ([`threads_not_depth`]).
//!
//! A job that reads and writes is judged on each direction's rate apart
//! ([`directions`]); a file of several jobs, each job in each direction
//! it does ([`per_job`]), so that each has its verdict or "not identified"
//! with what was ruled out ([`held`]); a direction with no cause of its
//! own takes the other's where the job's mix held ([`super::mix`]).

use super::caps::Caps;
use super::job::JobFigures;
use super::{classify_points, Cause, Saturation};
use crate::fact_names::{Fact, Value};
use crate::figures::curve::curve_of;
use crate::figures::{DeviceLimit, Figures};
use crate::levers::estimate::Estimate;
use crate::levers::{candidates, estimate, Context, Lever, Point};
use serde::{Deserialize, Serialize};
use ssdready_core::units::fmt_count;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile};

/// A variant keeping more I/Os in flight that gains less than this,
/// percent, bought nothing: the queue-depth sweep's stop rule.
pub const MORE_IN_FLIGHT_PCT: f64 = 5.0;

/// The I/Os a run kept in flight (depth × threads).
fn in_flight(r: &RunRecord) -> u32 {
    r.workload.qd.max(1) * r.workload.threads.max(1)
}

/// What holds the job whose repeats are the runs of point `qd-{qd}`:
/// `runs` holds them, its instrumented run if any, and the runs of its
/// variants (other depths as `qd-N`, other points under other names), each
/// a record as the device study keeps it.
pub fn classify_job(
    t: &TargetProfile,
    runs: &[RunRecord],
    qd: u32,
    machine: &Machine,
    caps: &Caps,
) -> Saturation {
    let ok = || runs.iter().filter(|r| r.error.is_none() && !r.instrumented);
    let curve = curve_of(runs, "qd", &depths(runs));
    let Some(own) = curve.iter().find(|c| c.qd == qd).cloned() else {
        return Saturation {
            part: "no run of the job as written completed".into(),
            ..Default::default()
        };
    };
    let best = curve.iter().map(|c| c.iops).fold(0.0, f64::max);
    let point = crate::figures::curve::point_at("qd", qd);
    let mine = ok().find(|r| r.point == point).map_or(0, in_flight);
    let more: Vec<&RunRecord> = ok().filter(|r| in_flight(r) > mine).collect();
    // As the sweep's stop rule reads its curve: each variant against the
    // best that kept fewer in flight (the job's best repeat, a shallower
    // variant), by more than the job's repeats differed among themselves
    // (one run of a variant against the best of the repeats).
    let spread = crate::figures::curve::noise(runs)
        .into_iter()
        .find(|n| n.point == point)
        .map_or(0.0, |n| n.spread_pct);
    let rise = 1.0 + spread.max(MORE_IN_FLIGHT_PCT) / 100.0;
    let own_iops = own.iops;
    let best_below = |n: u32| {
        ok().filter(|r| in_flight(r) < n)
            .map(|r| r.summary.iops)
            .fold(own_iops, f64::max)
    };
    let gained = |r: &&RunRecord| r.summary.iops >= rise * best_below(in_flight(r));
    let saturated = !more.is_empty() && !more.iter().any(gained);
    // A variant that kept fewer in flight and ran faster than the job
    // (the jobs of a file each taking another share of one device) is
    // what the deeper ones were weighed against: said with them.
    let shallower = ok()
        .filter(|r| r.point != point && in_flight(r) < mine && r.summary.iops > own_iops)
        .max_by(|a, b| a.summary.iops.total_cmp(&b.summary.iops));
    let bought_nothing =
        saturated.then(|| nothing_bought(&more, mine, (own.iops, rise), shallower));
    let f = Figures {
        knee_qd: curve.iter().find(|c| c.iops >= 0.9 * best).map(|c| c.qd),
        saturated,
        device_limit: DeviceLimit {
            basis: ssdready_measured::basis::HIGHEST_MEASURED.into(),
            iops: Some(best),
            ..Default::default()
        },
        peak: Some(own),
        qd_curve: curve,
        ..Default::default()
    };
    let mut s = classify_points(t, runs, &f, machine, caps, "qd");
    // Evidence for a limit on the I/O's path; the page cache's rate is
    // its own, whatever is in flight.
    let on_the_path = !matches!(s.limit, Cause::NotIdentified | Cause::PageCache);
    if let Some(line) = bought_nothing.filter(|_| on_the_path) {
        s.evidence.push(line);
    }
    if s.limit == Cause::NotIdentified {
        let threads = |r: &RunRecord| r.workload.threads.max(1);
        let own_threads = ok().find(|r| r.point == point).map_or(1, threads);
        let gained_by = |r: &RunRecord| {
            let base = best_below(in_flight(r));
            (r.summary.iops >= rise * base).then_some(100.0 * (r.summary.iops / base - 1.0))
        };
        if let Some(line) = threads_not_depth(&more, own_threads, &gained_by) {
            s.part = format!("{}; {line}", s.part);
        }
    }
    s
}

/// Where a variant with more threads gained beyond the noise and none
/// that kept as many in flight or more from the job's own threads (a
/// deeper iodepth) did: the rate grows with threads, not with I/Os in
/// flight, so what holds the job is per thread (each one's submission and
/// completion), not the device or its queue. In words, with both runs.
fn threads_not_depth(
    more: &[&RunRecord],
    own_threads: u32,
    gained_by: &dyn Fn(&RunRecord) -> Option<f64>,
) -> Option<String> {
    let threads = |r: &RunRecord| r.workload.threads.max(1);
    let (wider, pct) = more
        .iter()
        .filter(|r| threads(r) > own_threads)
        .filter_map(|r| Some((*r, gained_by(r)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let deeper: Vec<&&RunRecord> = more
        .iter()
        .filter(|r| threads(r) == own_threads && in_flight(r) >= in_flight(wider))
        .collect();
    if deeper.iter().any(|r| gained_by(r).is_some()) {
        return None;
    }
    let deeper = deeper.into_iter().min_by_key(|r| in_flight(r))?;
    Some(format!(
        "the rate grew with threads, not with I/Os in flight: {} ({} threads, {} in flight) {} IOPS, {pct:+.1} % over the best with fewer in flight, where {} ({} in flight from {own_threads} thread(s)) gave {} IOPS: what holds it is per thread (each one's submission and completion), not the device",
        wider.id,
        threads(wider),
        in_flight(wider),
        fmt_count(wider.summary.iops),
        deeper.id,
        in_flight(deeper),
        fmt_count(deeper.summary.iops)
    ))
}

/// `more I/Os in flight bought nothing beyond the repeats' spread (10 %):
/// qd-128 (128 in flight) 91.0K IOPS, … against 98.2K IOPS with 64 as
/// written`: each against `own`, the best with fewer in flight, times
/// `rise`, the spread (or its floor) it had to clear; and the
/// `shallower` run that kept fewer in flight and ran faster, if any.
fn nothing_bought(
    more: &[&RunRecord],
    mine: u32,
    (own, rise): (f64, f64),
    shallower: Option<&RunRecord>,
) -> String {
    let run = |r: &RunRecord| {
        let (n, iops) = (in_flight(r), fmt_count(r.summary.iops));
        (format!("{} ({n} in flight) {iops} IOPS", r.id), n, iops)
    };
    let each: Vec<String> = more.iter().map(|r| run(r).0).collect();
    let also = shallower.map_or(String::new(), |r| {
        let (_, n, iops) = run(r);
        format!(", and {iops} IOPS with {n} in flight ({})", r.id)
    });
    format!(
        "more I/Os in flight bought nothing beyond the repeats' spread ({:.0} %): {} against {} IOPS with {mine} as written{also}",
        100.0 * (rise - 1.0),
        each.join(", "),
        fmt_count(own)
    )
}

/// What lifting the cause that holds the job may buy, by the device
/// study's estimates ([`mod@crate::levers::estimate`]): the largest that any lever
/// named for the cause gives at the job's point `p`, read from the job's
/// own runs (its depths' rates, the device's requests held, the threads'
/// wait for a CPU) in the context `cx` (the device's queue as read, the
/// limits inventory). None where no measurement says.
pub fn cost(
    s: &Saturation,
    runs: &[RunRecord],
    (levers, cx, p): (&[Lever], &Context, &Point),
) -> Option<Estimate> {
    let mut cx = cx.clone();
    cx.cause = s.limit;
    cx.peak_iops = Some(s.iops);
    cx.cpu_wait_pct = s.cpu_wait_pct;
    cx.curve = curve_of(runs, "qd", &depths(runs))
        .iter()
        .map(|c| (c.qd, c.iops))
        .collect();
    if let Some(n) = s.device_in_flight {
        let at = Fact::of(Value::Num(n), "count", s.runs.clone());
        cx.facts.insert("device_in_flight_peak".into(), at);
    }
    levers
        .iter()
        .filter(|l| l.causes.contains(&s.limit))
        .flat_map(|l| {
            candidates(l, &cx, p)
                .into_iter()
                .filter_map(|c| estimate(l, &cx, p, &c))
                .collect::<Vec<_>>()
        })
        .max_by(|a, b| a.pct.total_cmp(&b.pct))
}

/// The depths of the job's runs named as the queue-depth sweep's.
fn depths(runs: &[RunRecord]) -> Vec<u32> {
    let mut qds: Vec<u32> = runs
        .iter()
        .filter(|r| r.sweep == "qd" && r.error.is_none() && !r.instrumented)
        .map(|r| r.workload.qd)
        .collect();
    qds.sort_unstable();
    qds.dedup();
    qds
}

/// A workload's `rw` in one direction: `randrw` → `randwrite`.
fn one_way(rw: &str, reads: bool) -> String {
    let rand = if rw.contains("rand") { "rand" } else { "" };
    format!("{rand}{}", if reads { "read" } else { "write" })
}

/// The runs to judge for each job of a file that runs several (fio runs
/// them together unless `stonewall`, in turn where it is), each in each
/// direction it does, labelled `[name] reads`: each run's rate the job's
/// own in that direction (none in a run it did not finish), the device's
/// and the CPUs' figures being the run's. `jobs[i]` is each job's figures
/// in `points[i]`. Empty where the runs have fewer than two jobs.
pub fn per_job(points: &[RunRecord], jobs: &[Vec<JobFigures>]) -> Vec<(String, Vec<RunRecord>)> {
    let mut names: Vec<&str> = Vec::new();
    for j in jobs.iter().flatten() {
        if !names.contains(&j.name.as_str()) {
            names.push(&j.name);
        }
    }
    if names.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for name in names {
        for (reads, label) in [(true, "reads"), (false, "writes")] {
            let pick = |i: usize| {
                let j = jobs.get(i)?.iter().find(|j| j.name == name)?;
                if reads {
                    j.read.as_ref()
                } else {
                    j.write.as_ref()
                }
            };
            if !(0..points.len()).any(|i| pick(i).is_some_and(|d| d.iops > 0.0)) {
                continue;
            }
            let runs = points
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut r = r.clone();
                    let (iops, bw) = pick(i).map_or((0.0, 0.0), |d| (d.iops, d.bw_bytes_per_s));
                    (r.summary.iops, r.summary.bw_bytes_per_s) = (iops, bw);
                    r.workload.rw = one_way(&r.workload.rw, reads);
                    r
                })
                .collect();
            out.push((format!("[{name}] {label}"), runs));
        }
    }
    out
}

/// What holds the job, in lines: the cause with its part, the setting to
/// change, its evidence and the causes that also held; or "not
/// identified" with what was ruled out. `label` names the direction
/// (`reads`) where a job's are judged apart, else empty.
pub fn words(s: &Saturation, label: &str) -> Vec<String> {
    let at = match label.is_empty() {
        true => String::new(),
        false => format!("{label}: "),
    };
    if s.limit == Cause::NotIdentified {
        return vec![format!("{at}not identified: {}", s.part)];
    }
    let mut out = vec![format!("{at}{}: {}", s.limit, s.part)];
    if let Some(set) = &s.setting {
        out.push(format!(
            "  the setting: {} = {} ({})",
            set.name, set.value, set.path
        ));
    }
    out.extend(s.evidence.iter().map(|e| format!("  evidence: {e}")));
    out.extend(
        s.also_held
            .iter()
            .map(|a| format!("  also held: {}", a.words())),
    );
    out
}

/// What holds the job (or one direction of it).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Held {
    /// `reads` or `writes` where the job's are judged apart, a job of a
    /// file of several with its direction (`[fill] writes`), else empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub direction: String,
    pub saturation: Saturation,
    /// What lifting it may buy, by the device study's estimates, where a
    /// measurement of the job's says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Estimate>,
}

/// What holds the job whose runs are `points` on target `t`, at its point
/// `p` (its depth, block, engine), against `caps`, its reads and writes
/// judged apart where it does both ([`directions`]), and each job apart
/// in each direction it does where the file has several ([`per_job`]:
/// `jobs[i]` is each job's figures in `points[i]`), each with what
/// lifting it may buy ([`cost`], by the `levers` in the context `cx`).
pub fn held(
    t: &TargetProfile,
    (points, jobs): (&[RunRecord], &[Vec<JobFigures>]),
    (machine, caps): (&Machine, &Caps),
    (levers, cx, p): (&[Lever], &Context, &Point),
) -> Vec<Held> {
    let mut each = per_job(points, jobs);
    if each.is_empty() {
        each = directions(points)
            .into_iter()
            .map(|(d, runs)| (d.to_string(), runs))
            .collect();
    }
    let mut out: Vec<Held> = each
        .iter()
        .map(|(direction, runs)| {
            let s = classify_job(t, runs, p.qd, machine, caps);
            Held {
                cost: cost(&s, runs, (levers, cx, p)),
                saturation: s,
                direction: direction.clone(),
            }
        })
        .collect();
    mixes(&mut out, &each);
    out
}

/// The direction paired with `held[to]` (`[fill] writes` with `[fill]
/// reads`), and whether `to` is the reads.
fn pair_of(held: &[Held], to: usize) -> Option<(usize, bool)> {
    let label = &held[to].direction;
    let (base, reads) = match (label.strip_suffix("reads"), label.strip_suffix("writes")) {
        (Some(b), _) => (b, true),
        (_, Some(b)) => (b, false),
        _ => return None,
    };
    let other = format!("{base}{}", if reads { "writes" } else { "reads" });
    let from = held.iter().position(|h| h.direction == other)?;
    Some((from, reads))
}

/// Each direction held through the job's mix where [`super::mix`] says
/// so, with what lifting the other's cause may buy. `each` are the
/// directions' runs, in the order of `held`.
fn mixes(held: &mut [Held], each: &[(String, Vec<RunRecord>)]) {
    for to in 0..held.len() {
        let Some((from, reads)) = pair_of(held, to) else {
            continue;
        };
        let mine = (&held[to].saturation, each[to].1.as_slice());
        let theirs = (&held[from].saturation, each[from].1.as_slice());
        if let Some(s) = super::mix::through_the_mix(mine, theirs, reads) {
            (held[to].saturation, held[to].cost) = (s, held[from].cost.clone());
        }
    }
}

/// What a job study judges what holds the job from, besides its runs
/// (which it keeps as its points): the target, the machine, the levers'
/// context (the target's queue as read, the inventory of limits the caps
/// are made from), the job's point and each job's figures in each run.
/// Recorded in the job's document, so that it can be judged again with
/// another build's rules ([`crate::rejudged::job`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JudgedFrom {
    /// The job's first target as the study detected it; None where it
    /// could read none (its verdict then "not identified").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetProfile>,
    pub machine: Machine,
    pub context: Context,
    /// The job's point: its rw, block, depth, threads, engine.
    pub point: Point,
    /// `jobs[i]` is each job's figures in the job's `i`th run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<Vec<JobFigures>>,
}

impl JudgedFrom {
    /// What holds the job whose runs are `points` ([`held`]), the caps made
    /// from the context's inventory of limits, by the shipped levers; not
    /// identified where there is no target.
    /// Runs made after another process changed the target's queue
    /// ([`super::job::MOVED`]) measured other settings than those read:
    /// they are left out.
    pub fn held(&self, points: &[RunRecord]) -> Vec<Held> {
        let Some(t) = &self.target else {
            return vec![unreadable_target()];
        };
        let caps = self.context.limits.as_ref().map(Caps::of);
        let levers = crate::levers::shipped();
        let on = (&self.machine, &caps.unwrap_or_default());
        let moved = |r: &RunRecord| {
            r.summary
                .warnings
                .iter()
                .any(|w| w.ends_with(super::job::MOVED))
        };
        let kept: Vec<usize> = (0..points.len()).filter(|&i| !moved(&points[i])).collect();
        let runs: Vec<RunRecord> = kept.iter().map(|&i| points[i].clone()).collect();
        let jobs: Vec<Vec<JobFigures>> = match self.jobs.len() == points.len() {
            true => kept.iter().map(|&i| self.jobs[i].clone()).collect(),
            false => self.jobs.clone(),
        };
        held(t, (&runs, &jobs), on, (&levers, &self.context, &self.point))
    }
}

/// What holds a job whose target the study could not read: not
/// identified, and why.
pub fn unreadable_target() -> Held {
    let part = "the job's target is not one the study could read, so no device, queue or limit of it to judge its runs against";
    Held {
        saturation: Saturation {
            part: part.into(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The runs to judge, whole or one direction at a time: a job that both
/// reads and writes is judged on each direction's rate apart (the
/// device's and the CPUs' figures being the run's).
pub fn directions(points: &[RunRecord]) -> Vec<(&'static str, Vec<RunRecord>)> {
    let both = points
        .iter()
        .any(|r| r.summary.read_iops > 0.0 && r.summary.write_iops > 0.0);
    if !both {
        return vec![("", points.to_vec())];
    }
    let one = |reads: bool| {
        points
            .iter()
            .cloned()
            .map(|mut r| {
                let s = &mut r.summary;
                let mine = if reads { s.read_iops } else { s.write_iops };
                s.bw_bytes_per_s *= mine / s.iops.max(1e-9);
                s.iops = mine;
                r.workload.rw = one_way(&r.workload.rw, reads);
                r
            })
            .collect()
    };
    vec![("reads", one(true)), ("writes", one(false))]
}

/// What holds the job, in lines: each verdict's [`words`], with what
/// lifting it may buy.
pub fn held_words(held: &[Held]) -> Vec<String> {
    let mut out = Vec::new();
    for h in held {
        out.extend(words(&h.saturation, &h.direction));
        if let Some(c) = &h.cost {
            out.push(format!("  lifting it may buy {}", c.words()));
        }
    }
    out
}
