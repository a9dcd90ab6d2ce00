//! # ssdready-diagnosis: what holds the I/O back, from recorded measurements
//!
//! The judging half of `ssdready study`, kept apart from the running half
//! (`ssdready-study`: the plan, the runs, the drives) so that every verdict
//! can be tested from recorded measurements, without root and without a
//! device. It holds no system calls: the measurements come in as data —
//! `ssdready-measured`: the runs and their figures (`record`, `summary`),
//! the device's basis, the inventory of what can cap I/O on the machine
//! (`limits`, `group_limits`) and the block-device stack under the target
//! (`stack_layers`) — and verdicts come out. Only this crate judges: the
//! crates that measure, change the machine or keep the history use the
//! data crate alone.
//!
//! The modules stand in layers, each using only those below it:
//!
//! 1. what was measured, beyond `ssdready-measured`: [`figures::capacity`],
//!    `zero_drive` (the transport measured with a zero-time drive),
//!    `app_figures` and `fleet_figures`;
//! 2. the figures of the curves and runs: [`figures::curve`] (`device_limit`,
//!    `delivered_pct`, `knee_qd`, scaling, the platform share of latency,
//!    clocks per I/O), [`figures::sweeps`] (the sweeps' comparisons, made in turns),
//!    `reach` (whether the device served the study's I/O at all),
//!    [`strategies`];
//! 3. the causes, weighed on those figures: [`limit`] (what holds the I/O
//!    back, as evidence for and against each candidate cause, judged on
//!    every repeat, against what can cap the I/O: [`limit::caps`]) and
//!    [`stack`] (which member or layer of the stack holds its I/O);
//! 4. [`figures`]: everything derived, gathered ([`figures::Figures`],
//!    `figures` in study.json), the causes' answers with it;
//! 5. what is weighed on the whole figures: [`transport::calibration`] (the
//!    transport taken out of them), [`apparatus`] (ssdready's own
//!    apparatus as a cause), [`transport`] (a drive faster than the host);
//! 6. `fact_names` and [`facts`], `rules`: the figures as named facts,
//!    judged by verdict rules kept as data (`data/verdicts.rules`);
//!    [`applications`] and [`fleet`] judged by their own;
//! 7. what to change, measured: [`levers`] (`data/levers.table`; each
//!    form of a lever's values one file of `lever_values`, over what a
//!    lever is weighed on, `lever_context`; the lever and what the trials
//!    record as plain data, [`levers::lever`] and [`trials::record`], below
//!    the kinds' units, and the units below the table of kinds and the
//!    trials' algorithms),
//!    the study's cgroup limits, each lifted on its own
//!    (`ssdready_measured::group_limits`), [`levers::binding`] (where each lever's limit binds), [`trials`],
//!    [`trials::plan`], [`levers::permanent`] (how a lifted limit is made to last),
//!    [`trials::combination`] (every change that helped, measured together) and
//!    [`trials::files`];
//! 8. the answer: [`model`] (`study.json`, schema `ssdready.study`,
//!    `docs/study-schema.md`), [`answer`], [`text`] and [`trials::text`],
//!    shared by the terminal and the HTML report; and here, [`judge`] and
//!    [`rejudge`], which make it ([`rejudged`]: a recorded study's whole
//!    document judged again, and what changed).

#![forbid(unsafe_code)]

pub mod answer;
mod app_figures;
pub mod apparatus;
pub mod applications;
mod fact_names;
pub mod facts;
pub mod figures;
pub mod fleet;
mod fleet_figures;
mod lever_context;
mod lever_values;
pub mod levers;
pub mod limit;
pub mod model;
mod reach;
pub mod rejudged;
mod rules;
pub mod stack;
pub mod strategies;
pub mod text;
pub mod transport;
pub mod trials;
mod zero_drive;

use ssdready_measured::record::{Machine, RunRecord, TargetProfile, Verdict};
use std::collections::BTreeMap;

/// Figures, facts and verdicts of a set of runs.
pub struct Judgement {
    pub figures: figures::Figures,
    pub facts: BTreeMap<String, facts::Fact>,
    pub verdicts: Vec<Verdict>,
}

/// What a study measured, as the diagnosis takes it.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub targets: &'a [TargetProfile],
    pub machine: &'a Machine,
    pub runs: &'a [RunRecord],
    /// Ctrl-C or SIGTERM stopped the study: it covers what ran.
    pub interrupted: bool,
    /// The capacity at a latency target, when it was searched.
    pub capacity: Option<&'a figures::capacity::CapacityDoc>,
    /// The emulated drive's transport over the study, when the target was
    /// the built-in drive behind the kernel.
    pub transport: Option<&'a ssdready_measured::summary::Transport>,
    /// The transport's calibration, taken out of the figures.
    pub calibration: Option<&'a transport::calibration::Calibration>,
    /// The strategies section, when the study ran strategies (set against
    /// the device's peaks by the study, which knows its model).
    pub strategies: Option<&'a strategies::Section>,
    /// What the machine's configuration says can cap the study's I/O.
    pub caps: Option<&'a limit::caps::Caps>,
    /// The runs are a job as written at this depth, its repeats and
    /// variants named as the queue-depth sweep names its points: what
    /// holds it is judged as a job's ([`limit::point::classify_job`]: each
    /// variant against the best run with fewer in flight), not from a
    /// sweep's curve. None for a study's sweeps.
    pub job_qd: Option<u32>,
}

impl<'a> Inputs<'a> {
    /// The runs alone, nothing else measured.
    pub fn of(targets: &'a [TargetProfile], machine: &'a Machine, runs: &'a [RunRecord]) -> Self {
        Inputs {
            targets,
            machine,
            runs,
            interrupted: false,
            capacity: None,
            transport: None,
            calibration: None,
            strategies: None,
            caps: None,
            job_qd: None,
        }
    }
}

/// The device study's rules on a job's runs (`points`, judged from
/// `from`: its target, machine, limits and depth as written), through the
/// one path of a study's — figures, facts, rules — with what holds the
/// job judged as a job's: every finding but those of what holds it (the
/// verdicts that name the saturation's cause or what also held, said by
/// [`limit::point::JudgedFrom::held`] per direction). None where the job's
/// target is none the study could read.
pub fn job_findings(from: &limit::point::JudgedFrom, points: &[RunRecord]) -> Vec<Verdict> {
    let (Some(t), false) = (&from.target, points.is_empty()) else {
        return Vec::new();
    };
    let caps = from.context.limits.as_ref().map(limit::caps::Caps::of);
    let targets = std::slice::from_ref(t);
    let j = judge(&Inputs {
        caps: caps.as_ref(),
        job_qd: Some(from.point.qd),
        ..Inputs::of(targets, &from.machine, points)
    });
    let rules = rules::parse(rules::RULES).expect("the shipped rules parse (a unit test checks)");
    let names_the_cause = |id: &str| {
        rules.iter().any(|r| {
            r.id == id
                && r.when.iter().any(|c| match c.op {
                    rules::Op::Eq => c.fact == "saturation_limit",
                    rules::Op::Exists => c.fact == "saturation_also",
                    _ => false,
                })
        })
    };
    j.verdicts
        .into_iter()
        .filter(|v| !names_the_cause(&v.rule))
        .collect()
}

/// Judge a study document again from what it recorded: its targets,
/// machine, runs, limits and the sections the study computed (strategies,
/// capacity, transport and its calibration). What a study said can be
/// checked against what it measured, by the rules of this build.
pub fn rejudge(d: &model::StudyDoc) -> Judgement {
    let caps = d.limits.as_ref().map(limit::caps::Caps::of);
    judge(&Inputs {
        targets: &d.targets,
        machine: &d.machine,
        runs: &d.runs,
        interrupted: d.interrupted,
        capacity: d.capacity.as_ref(),
        transport: d.figures.transport.as_ref(),
        calibration: d.figures.calibration.as_ref(),
        strategies: d.figures.strategies.as_ref(),
        caps: caps.as_ref(),
        job_qd: None,
    })
}

/// Derive the figures from the measurements and judge them with the
/// shipped rules.
pub fn judge(i: &Inputs) -> Judgement {
    let (targets, machine, runs) = (i.targets, i.machine, i.runs);
    let no_caps = limit::caps::Caps::default();
    let caps = i.caps.unwrap_or(&no_caps);
    let mut figures = figures::derive(targets, runs, machine, i.strategies.cloned(), caps);
    if let Some(qd) = i.job_qd {
        figures.saturation = limit::point::classify_job(&targets[0], runs, qd, machine, caps);
    }
    figures.transport = i.transport.cloned();
    figures.stack = targets[0]
        .stack
        .as_ref()
        .and_then(|s| stack::judge(s, runs));
    if let Some(c) = i.calibration {
        transport::calibration::take_out(&mut figures, c, runs);
        apparatus::weigh(&mut figures);
    }
    let mut facts = facts::facts(&targets[0], machine, &figures, caps);
    facts::add_checks(&mut facts, runs);
    if let Some(c) = i.capacity {
        facts::add_capacity(&mut facts, c);
    }
    let rules = rules::parse(rules::RULES).expect("the shipped rules parse (a unit test checks)");
    let ctx = rules::Context {
        noise_pct: figures.noise_pct,
        disagreeing_runs: runs
            .iter()
            .filter(|r| facts::KEY_SWEEPS.contains(&r.sweep.as_str()))
            .filter(|r| !r.summary.checks_disagree.is_empty())
            .map(|r| r.id.clone())
            .collect(),
        interrupted: i.interrupted,
    };
    let mut verdicts = rules::judge(&rules, &facts, &ctx);
    // A drive faster than this host: what the platform gives per CPU,
    // estimated from the CPU each I/O costs less the transport's — only
    // where the study has no measured peak of the platform's own, which
    // says it directly.
    let measured = figures.platform.as_ref().is_some_and(|p| p.peak.is_some());
    if let Some(v) = transport::host_limit(&figures, runs).filter(|_| !measured) {
        verdicts.insert(apparatus::after_headline(&verdicts), v);
    }
    if let Some(j) = &figures.stack {
        stack::add_verdicts(&mut verdicts, j);
    }
    apparatus::add_verdicts(&mut verdicts, &figures, &targets[0]);
    figures.device_reach = reach::of(runs, targets[0].device.as_deref());
    if let Some(v) = figures
        .device_reach
        .as_ref()
        .and_then(|d| reach::verdict(d, &targets[0]))
    {
        verdicts.insert(0, v);
    }
    Judgement {
        figures,
        facts,
        verdicts,
    }
}
