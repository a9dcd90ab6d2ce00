//! # ssdready-diagnosis: what holds the I/O back, from recorded measurements
//!
//! The judging half of `ssdready study`, kept apart from the running half
//! (`ssdready-study`: the plan, the runs, the drives) so that every verdict
//! can be tested from recorded measurements, without root and without a
//! device. It holds no system calls: the measurements come in as data —
//! the runs' figures ([`model::RunRecord`], [`summary`]), the device's
//! basis ([`basis`]), the inventory of what can cap I/O on the machine and
//! the block-device stack under the target — and verdicts come out.
//!
//! * [`model`]: `study.json`, schema `ssdready.study`
//!   (`docs/study-schema.md`), and each run's [`model::Workload`];
//! * [`summary`]: a run's figures as the study uses them;
//! * [`figures`] and [`sweeps`]: the figures derived from the runs
//!   (`device_limit`, `delivered_pct`, `knee_qd`, scaling, the platform
//!   share of latency, clocks per I/O) and the sweeps' comparisons, made in
//!   turns;
//! * [`limits`]: the inventory of what can cap I/O — cgroup throttles and
//!   quotas, the cpuset and affinity, memory limits, the devices' queues —
//!   with each value's source, and the cgroups' counters over a run;
//! * [`limit`]: what holds the I/O back, as evidence for and against each
//!   candidate cause, judged on every repeat, against what can cap the I/O
//!   ([`limit::caps`], made from the inventory);
//! * [`facts`] and [`rules`]: the figures as named facts, judged by verdict
//!   rules kept as data (`data/verdicts.rules`);
//! * [`transport`] and [`calibration`]: the emulated drive's transport,
//!   kept apart from the platform; [`apparatus`]: ssdready's own apparatus
//!   weighed as a cause (the transport's ceiling, the drive in its own
//!   process);
//! * [`strategies`], [`applications`], [`fleet`], [`capacity`]: the
//!   sections of a study beyond the queue-depth curve;
//! * [`stack`]: the block-device stack under a target (md, device-mapper,
//!   loop, partitions) and which member or layer holds its I/O;
//! * [`reach`]: whether the device served the study's I/O at all (its
//!   own counters against the study's completions), said first when not;
//! * [`answer`] and [`text`]: the answer in words, shared by the terminal
//!   and the HTML report;
//! * [`levers`] (`data/levers.table`), [`trials_plan`], [`trials`] and
//!   [`trials_text`]: what to change, measured — the changes the study
//!   knows how to try, which it tries, and what its trials in turns say.

#![forbid(unsafe_code)]

pub mod answer;
pub mod apparatus;
pub mod applications;
pub mod basis;
pub mod calibration;
pub mod capacity;
pub mod facts;
pub mod figures;
pub mod fleet;
pub mod levers;
pub mod limit;
pub mod limits;
pub mod model;
pub mod reach;
pub mod record;
pub mod rules;
pub mod stack;
pub mod strategies;
pub mod summary;
pub mod sweeps;
pub mod text;
pub mod transport;
pub mod trials;
pub mod trials_plan;
pub mod trials_text;

use model::{Machine, RunRecord, TargetProfile, Verdict};
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
    pub capacity: Option<&'a capacity::CapacityDoc>,
    /// The emulated drive's transport over the study, when the target was
    /// the built-in drive behind the kernel.
    pub transport: Option<&'a transport::Transport>,
    /// The transport's calibration, taken out of the figures.
    pub calibration: Option<&'a calibration::Calibration>,
    /// The strategies section, when the study ran strategies (set against
    /// the device's peaks by the study, which knows its model).
    pub strategies: Option<&'a strategies::Section>,
    /// What the machine's configuration says can cap the study's I/O.
    pub caps: Option<&'a limit::caps::Caps>,
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
        }
    }
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
    })
}

/// Derive the figures from the measurements and judge them with the
/// shipped rules.
pub fn judge(i: &Inputs) -> Judgement {
    let (targets, machine, runs) = (i.targets, i.machine, i.runs);
    let no_caps = limit::caps::Caps::default();
    let caps = i.caps.unwrap_or(&no_caps);
    let mut figures = figures::derive(targets, runs, machine, i.strategies.cloned(), caps);
    figures.transport = i.transport.cloned();
    figures.stack = targets[0]
        .stack
        .as_ref()
        .and_then(|s| stack::judge(s, runs));
    if let Some(c) = i.calibration {
        calibration::take_out(&mut figures, c, runs);
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
        let at = verdicts
            .iter()
            .position(|v| v.rule == "platform-peak-headline")
            .map_or(0, |i| i + 1);
        verdicts.insert(at, v);
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
