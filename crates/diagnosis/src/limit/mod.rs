//! What holds the I/O back at the peak of the queue-depth curve, judged
//! as evidence for and against each candidate cause ([`Cause`]): a cgroup
//! I/O throttle, a CPU quota, the CPUs the study may use, other work on
//! them, the device against its basis, the device's request queue, the
//! size of its requests, the I/O scheduler, the file system, a lock, the
//! submitting thread, completions, the submission path, a rate limit
//! below the host — and ssdready's own apparatus, the emulated drive's
//! daemon; and, for a job's buffered writes, the page cache, where the
//! rate measured it rather than the device.
//!
//! Each repeat of the peak's depth is judged on its own: the first cause
//! in [`Cause::ALL`]'s order whose test holds is that repeat's. A test
//! holds only on positive evidence from the run (the rate at a throttle's
//! value, the group stopped by its quota, the device at its model's
//! limit…), never on a setting alone or by elimination; when none holds
//! the answer is [`Cause::NotIdentified`], with what was ruled out and why.
//! The study's answer is the cause most repeats gave; when they disagree it
//! says so ([`Saturation::repeats_agree`]), and no verdict resting on it
//! can be of high confidence.

pub mod cache;
pub mod caps;
pub mod cause;
pub mod configured;
pub mod found;
pub mod group;
pub mod job;
pub mod mix;
pub mod others;
pub mod path;
pub mod point;
pub mod scheduler;
pub mod stacked;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_apparatus;
#[cfg(test)]
mod tests_group;
#[cfg(test)]
mod tests_others;
#[cfg(test)]
mod tests_point;
#[cfg(test)]
mod tests_request;
#[cfg(test)]
mod tests_scheduler;
#[cfg(test)]
mod tests_stacked;
#[cfg(test)]
mod tests_submission;
pub mod view;

pub use cause::{Cause, Layer};
pub use found::{core_part, cpu_list, pct, top_layers, Found, Test};

use crate::figures::curve::{profiled, runs_of};
use caps::{Caps, Setting};
use serde::{Deserialize, Serialize};
use ssdready_measured::record::{Machine, RunRecord, TargetKind, TargetProfile};
use view::{Shared, View, Weighed};

/// A cause ruled out, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RuledOut {
    pub cause: Cause,
    pub why: String,
}

/// Another cause that also held, weighed after the answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AlsoHeld {
    pub cause: Cause,
    /// Which part of it, in words (the repeat that speaks for the answer).
    pub part: String,
    /// What it costs the rate where that was measured (a comparison in
    /// turns), percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_pct: Option<f64>,
    /// In how many of the repeats it held.
    pub repeats: usize,
}

impl AlsoHeld {
    /// `other work (other processes took 60 % …)`, with its cost.
    pub fn words(&self) -> String {
        match self.cost_pct {
            Some(c) => format!("{}, costing {} ({})", self.cause, pct(c), self.part),
            None => format!("{} ({})", self.cause, self.part),
        }
    }
}

/// One repeat's own answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Repeat {
    pub run: String,
    pub limit: Cause,
    pub iops: f64,
}

/// The verdict on what holds the peak, and what it rests on
/// (`figures.saturation` in study.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Saturation {
    /// The cause most repeats gave.
    pub limit: Cause,
    pub layer: Layer,
    /// Which part of it, in words.
    pub part: String,
    /// The setting that holds it, where one does: what to change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<Setting>,
    pub qd: u32,
    pub iops: f64,
    /// The evidence for it.
    pub evidence: Vec<String>,
    /// Every other candidate, and why it was ruled out.
    #[serde(default)]
    pub ruled_out: Vec<RuledOut>,
    /// Each repeat of the peak's depth, judged on its own.
    #[serde(default)]
    pub repeats: Vec<Repeat>,
    /// Whether every repeat gave the same cause.
    #[serde(default)]
    pub repeats_agree: bool,
    /// Other causes with positive evidence in the repeats that gave the
    /// answer, weighed after it: those whose cost was measured first,
    /// largest first, then in the order weighed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_held: Vec<AlsoHeld>,
    pub delivered_pct: Option<f64>,
    /// Emulator: IOPS against the model alone at the same depth, percent.
    pub of_device_at_point_pct: Option<f64>,
    pub thread_busy_pct: Option<f64>,
    pub system_busy_pct: Option<f64>,
    /// The CPUs the study may use: how busy, and how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_busy_pct: Option<f64>,
    #[serde(default)]
    pub cpus: u32,
    /// CPUs' worth of time ssdready's process used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_cpus: Option<f64>,
    /// CPUs' worth of time the kernel's threads used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cpus: Option<f64>,
    /// Of the time the I/O's threads were ready to run, the share they
    /// waited for a CPU, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_pct: Option<f64>,
    /// Of the run, the share the study's own thread on the I/O's path
    /// that waited most (a submitting thread, or the drive's daemon's)
    /// spent on a run queue waiting for a CPU, percent: what other work is
    /// named on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_wait_pct: Option<f64>,
    /// When the CPUs the study may use were busy (≥ 90 %) and the I/O's
    /// threads waited for them: the share of that busy time other
    /// processes took, percent (whatever the cause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_busy_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_spin_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_threads: Option<u64>,
    /// The device's own counters: busy share of the window, and requests
    /// held on average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_util_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_in_flight: Option<f64>,
    /// The CPU group: share of its periods its quota stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_pct: Option<f64>,
    pub device_share_pct: Option<f64>,
    pub completion_share_pct: Option<f64>,
    pub submission_share_pct: Option<f64>,
    pub lock_share_pct: Option<f64>,
    /// How far the deciding figure was past its threshold, percent of the
    /// threshold (None when nothing held).
    pub margin_pct: Option<f64>,
    pub runs: Vec<String>,
}

type TestFn = fn(&Shared, &View) -> Test;

/// Each cause's test, in the order weighed.
fn test_of(c: Cause) -> Option<TestFn> {
    Some(match c {
        Cause::Apparatus => path::apparatus,
        Cause::PageCache => cache::page_cache,
        Cause::IoThrottle => configured::io_throttle,
        Cause::CpuQuota => configured::cpu_quota,
        Cause::CpusAllowed => configured::cpus_allowed,
        Cause::OtherWork => others::other_work,
        Cause::Device => path::device,
        Cause::DeviceQueue => configured::device_queue,
        Cause::RequestSize => configured::request_size,
        Cause::Scheduler => scheduler::scheduler,
        Cause::FileSystem => path::file_system,
        Cause::Lock => path::lock,
        Cause::OneCore => path::one_core,
        Cause::IoPathCpu => others::io_path_cpu,
        Cause::Completions => path::completions,
        Cause::SubmissionPath => path::submission,
        Cause::BelowHost => path::below_host,
        Cause::NotIdentified => return None,
    })
}

/// What a measured cost of cause `c` is, percent of the rate (a
/// comparison made in turns): the scheduler's against `none`, the file
/// system's against the raw device. The other causes' costs are not
/// measured.
fn measured_cost(sh: &Shared, c: Cause) -> Option<f64> {
    match c {
        Cause::Scheduler => scheduler::scheduler_cost(sh),
        Cause::FileSystem => path::file_system_cost(sh),
        _ => None,
    }
}

/// One repeat's judgement: its cause, what was found for it, the causes
/// ruled out, and the others that also held.
struct Judged {
    cause: Cause,
    found: Option<Found>,
    ruled: Vec<RuledOut>,
    also: Vec<(Cause, Found)>,
}

/// One repeat's answer: the first cause that holds — or, where two that
/// hold both have a measured cost, the costlier — and every other cause's
/// reason for not holding.
fn judge_one(sh: &Shared, v: &View) -> Judged {
    let mut ruled = Vec::new();
    let mut held: Vec<(Cause, Found)> = Vec::new();
    for c in Cause::ALL {
        let Some(test) = test_of(c) else { continue };
        match test(sh, v) {
            Test::Holds(f) => held.push((c, f)),
            Test::No(why) => ruled.push(RuledOut { cause: c, why }),
        }
    }
    // Ranked by what each costs where both were measured.
    if let Some(first_cost) = held.first().and_then(|h| measured_cost(sh, h.0)) {
        if let Some(i) = (1..held.len())
            .filter(|&i| measured_cost(sh, held[i].0).is_some_and(|c| c > first_cost))
            .max_by(|&a, &b| {
                measured_cost(sh, held[a].0)
                    .unwrap_or(0.0)
                    .total_cmp(&measured_cost(sh, held[b].0).unwrap_or(0.0))
            })
        {
            let h = held.remove(i);
            held.insert(0, h);
        }
    }
    let mut it = held.into_iter();
    let Some((cause, found)) = it.next() else {
        return Judged {
            cause: Cause::NotIdentified,
            found: None,
            ruled,
            also: Vec::new(),
        };
    };
    let also: Vec<(Cause, Found)> = it.collect();
    // Past the answer: a later cause that also holds is said as evidence
    // weighed after it, not ruled out.
    for (c, f) in &also {
        ruled.push(RuledOut {
            cause: *c,
            why: format!("also held ({}), weighed after", f.part),
        });
    }
    Judged {
        cause,
        found: Some(found),
        ruled,
        also,
    }
}

/// The other causes that held in the repeats that gave `limit`, from the
/// repeat that speaks for it (`speaker`), ranked: measured costs first,
/// largest first, then in the order weighed.
fn also_held(sh: &Shared, judged: &[Judged], limit: Cause, speaker: &Judged) -> Vec<AlsoHeld> {
    let mut out: Vec<AlsoHeld> = speaker
        .also
        .iter()
        .map(|(c, f)| AlsoHeld {
            cause: *c,
            part: f.part.clone(),
            cost_pct: measured_cost(sh, *c),
            repeats: judged
                .iter()
                .filter(|j| j.cause == limit && j.also.iter().any(|a| a.0 == *c))
                .count(),
        })
        .collect();
    let order = |c: Cause| Cause::ALL.iter().position(|x| *x == c).unwrap_or(0);
    out.sort_by(|a, b| match (a.cost_pct, b.cost_pct) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => order(a.cause).cmp(&order(b.cause)),
    });
    out
}

/// What holds the peak of the queue-depth curve.
pub fn classify<'a>(
    t: &TargetProfile,
    runs: &[RunRecord],
    f: impl Into<Weighed<'a>>,
    machine: &Machine,
    caps: &Caps,
) -> Saturation {
    classify_points(t, runs, f, machine, caps, "qd")
}

/// What holds the peak of the curve of sweep `sweep` (its points
/// `SWEEP-qdN`, the queue-depth sweep's `qd-N`), `f` being that curve's
/// figures.
pub fn classify_points<'a>(
    t: &TargetProfile,
    runs: &[RunRecord],
    f: impl Into<Weighed<'a>>,
    machine: &Machine,
    caps: &Caps,
    sweep: &str,
) -> Saturation {
    let w: Weighed = f.into();
    let f = w.curve;
    let Some(peak) = &f.peak else {
        return Saturation {
            part: "no queue-depth run completed".into(),
            ..Default::default()
        };
    };
    // The instrumented runs are the queue-depth sweep's.
    let inst = (sweep == "qd").then(|| profiled(runs, peak.qd)).flatten();
    let sh = shared(t, runs, w, machine, caps, sweep, peak.qd);
    let plain = runs_of(runs, &crate::figures::curve::point_at(sweep, peak.qd));
    let views: Vec<View> = plain
        .iter()
        .map(|r| View::of(r, caps, machine.cpus))
        .collect();
    let mut judged: Vec<Judged> = views.iter().map(|v| judge_one(&sh, v)).collect();
    let mut s = figures_of(&sh, &views, peak.qd, peak.iops);
    s.runs = peak
        .runs
        .iter()
        .cloned()
        .chain(inst.map(|r| r.id.clone()))
        .collect();
    s.repeats = views
        .iter()
        .zip(&judged)
        .map(|(v, j)| Repeat {
            run: v.run.id.clone(),
            limit: j.cause,
            iops: v.iops,
        })
        .collect();
    let Some(limit) = majority(&s.repeats) else {
        s.part = "no run at the peak's depth to judge".into();
        return s;
    };
    s.repeats_agree = s.repeats.iter().all(|r| r.limit == limit);
    // The repeat nearest the peak's rate among those that gave the answer
    // speaks for it.
    let Some(at) = speaker(&judged, &views, limit, peak.iops) else {
        s.part = "no run at the peak's depth gave the majority's cause".into();
        return s;
    };
    s.also_held = also_held(&sh, &judged, limit, &judged[at]);
    let Judged { found, ruled, .. } = judged.swap_remove(at);
    s.limit = limit;
    s.layer = limit.layer();
    s.ruled_out = ruled;
    match found {
        Some(fd) => {
            s.part = fd.part;
            s.evidence = fd.evidence;
            s.setting = fd.setting;
            s.margin_pct = fd.margin_pct;
        }
        None => s.part = not_identified(&s.ruled_out),
    }
    if !s.repeats_agree {
        s.evidence.push(disagreement(&s.repeats));
    }
    s
}

/// What every run at the peak's depth shares: the target, the figures,
/// the caps, and the instrumented and deepest runs of sweep `sweep`.
fn shared<'a>(
    t: &'a TargetProfile,
    runs: &'a [RunRecord],
    w: Weighed<'a>,
    machine: &'a Machine,
    caps: &'a Caps,
    sweep: &str,
    peak_qd: u32,
) -> Shared<'a> {
    // The instrumented runs are the queue-depth sweep's.
    let inst = (sweep == "qd").then(|| profiled(runs, peak_qd)).flatten();
    Shared {
        target: t,
        figures: w.curve,
        comparisons: w.comparisons,
        caps,
        machine,
        profile: inst.and_then(|r| r.summary.profile.as_ref()),
        decomposition: inst.and_then(|r| r.summary.decomposition.as_ref()),
        instrumented: inst,
        loop_disk_full: t
            .stack
            .as_ref()
            .filter(|_| sweep == "qd")
            .and_then(|st| stacked::loop_disk_full(st, runs)),
        deepest: w
            .curve
            .qd_curve
            .iter()
            .map(|c| c.qd)
            .max()
            .filter(|&qd| qd > peak_qd)
            .and_then(|qd| {
                runs_of(runs, &crate::figures::curve::point_at(sweep, qd))
                    .into_iter()
                    .next()
            }),
    }
}

/// Which repeat speaks for cause `limit`: of those that gave it, the one
/// nearest the peak's rate.
fn speaker(judged: &[Judged], views: &[View], limit: Cause, peak_iops: f64) -> Option<usize> {
    judged
        .iter()
        .zip(views)
        .enumerate()
        .filter(|(_, (j, _))| j.cause == limit)
        .min_by(|a, b| {
            (a.1 .1.iops - peak_iops)
                .abs()
                .total_cmp(&(b.1 .1.iops - peak_iops).abs())
        })
        .map(|(i, _)| i)
}

/// The cause most repeats gave; a tie goes to the cause weighed first.
fn majority(repeats: &[Repeat]) -> Option<Cause> {
    Cause::ALL
        .into_iter()
        .map(|c| (c, repeats.iter().filter(|r| r.limit == c).count()))
        .filter(|x| x.1 > 0)
        .fold(None, |best: Option<(Cause, usize)>, x| match best {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        })
        .map(|x| x.0)
}

/// `the repeats disagreed: qd-32 an I/O throttle, qd-32#2 device`.
fn disagreement(repeats: &[Repeat]) -> String {
    let each: Vec<String> = repeats
        .iter()
        .map(|r| {
            format!(
                "{} ({} IOPS) {}",
                r.run,
                ssdready_core::units::fmt_count(r.iops),
                r.limit
            )
        })
        .collect();
    format!("the repeats disagreed: {}", each.join("; "))
}

/// What was ruled out, when nothing held.
fn not_identified(ruled: &[RuledOut]) -> String {
    let each: Vec<String> = ruled
        .iter()
        .map(|r| format!("{}: {}", r.cause, r.why))
        .collect();
    format!("no candidate had positive evidence ({})", each.join("; "))
}

/// The figures shown beside the verdict: medians over the repeats.
fn figures_of(sh: &Shared, views: &[View], qd: u32, iops: f64) -> Saturation {
    let m = |g: &dyn Fn(&View) -> Option<f64>| {
        ssdready_measured::curve::median(&views.iter().filter_map(g).collect::<Vec<_>>())
    };
    let share = |name: &str| {
        sh.decomposition
            .and_then(|d| d.parts.iter().find(|p| p.0 == name).map(|p| p.2))
    };
    let l = &sh.figures.device_limit;
    Saturation {
        qd,
        iops,
        delivered_pct: l
            .iops
            .filter(|_| l.basis == ssdready_measured::basis::ANALYTIC_MODEL)
            .map(|i| 100.0 * iops / i),
        of_device_at_point_pct: sh
            .figures
            .peak
            .as_ref()
            .and_then(|p| p.device_iops)
            .map(|d| 100.0 * iops / d),
        thread_busy_pct: m(&|v| v.thread_busy),
        system_busy_pct: m(&|v| v.run.summary.cpu.as_ref().map(|c| c.system_busy_pct)),
        cpus_busy_pct: m(&|v| v.cpus_busy),
        cpus: views.first().map_or(sh.machine.cpus, |v| v.cpus_n),
        process_cpus: m(&|v| v.process_cpus),
        // Other work counts where it kept the I/O's threads waiting for a
        // CPU; filling idle moments at a lower priority holds no one.
        others_pct: m(&|v| {
            v.cpus_busy.filter(|b| *b >= configured::CPUS_BUSY_PCT)?;
            match others::others_held(v) {
                true => v.others_share(),
                false => Some(0.0),
            }
        }),
        cpu_wait_pct: m(&|v| v.cpu_wait()),
        io_wait_pct: m(&|v| v.io_wait()),
        kernel_cpus: m(&|v| v.kernel_cpus),
        daemon_busy_pct: m(&|v| v.daemon_busy),
        daemon_spin_pct: m(&|v| v.daemon_spin),
        daemon_threads: views.iter().find_map(|v| v.daemon_threads),
        device_util_pct: m(&|v| v.disk.map(|d| d.util_pct)),
        device_in_flight: m(&|v| v.disk.and_then(|d| d.in_flight)),
        throttled_pct: m(&|v| v.group.and_then(|g| g.throttled_share()).map(|s| 100.0 * s)),
        device_share_pct: share("driver and device"),
        completion_share_pct: share("completion to the app"),
        submission_share_pct: share("above block, submission")
            .map(|a| a + share("block layer and scheduler").unwrap_or(0.0)),
        lock_share_pct: sh.profile.map(|p| p.lock_share_pct),
        ..Default::default()
    }
}

/// Whether a target's device has no limit of its own (the emulator's
/// zero-latency drive).
pub fn unbounded(t: &TargetProfile) -> bool {
    t.kind == TargetKind::Emulator && t.basis.as_ref().is_some_and(|b| b.read_4k.iops.is_none())
}
