//! # ssdready-study: how much of the device's speed reaches applications
//!
//! `ssdready study` sits above `ssdready run` as a planner of runs and a
//! judge of their results. This crate holds everything that is not the run
//! itself:
//!
//! * [`plan`]: from the detected target ([`model::TargetProfile`]), the
//!   machine and the time budget, the sweeps — queue depth, threads,
//!   read/write mixes, block sizes, engines, and on request the I/O
//!   schedulers, buffered I/O, raw device against file, several devices —
//!   and each point's `run` options ([`jobs`]);
//! * [`detect`]: what a target is before anything runs (emulator, RAM or
//!   block device, file), read from sysfs, and whether `run`'s safety
//!   checks let the study write to it; [`kdrive`]: the built-in drive
//!   behind the kernel (`emu attach` as a child) for a study as root;
//! * [`driver`]: runs a plan through a [`driver::Runner`] (real runs
//!   through the binary's run function, [`real`], or the emulator model in
//!   virtual time, [`virt`]), stopping the queue-depth sweep once saturated
//!   and resolving `peak` depths; [`slo`]: the capacity at a latency
//!   target through the same runner;
//! * [`app_runs`]: the applications section (`ssdready app`'s workloads
//!   beside the raw limit; on a block device in an ext4 of its own,
//!   [`appfs`]), judged by [`applications`];
//! * [`limit`]: an emulated device's analytic limits, the ground truth;
//! * [`summary`], [`figures`], [`sweeps`], [`classify`]: the figures
//!   derived from the runs (`device_limit`, `delivered_pct`, `knee_qd`,
//!   scaling efficiency, the platform share of latency, clocks per I/O,
//!   what limits saturation);
//! * [`facts`] and [`rules`]: the figures as named facts, judged by verdict
//!   rules kept as data (`data/verdicts.rules`);
//! * [`strategies`]: submission/completion strategies (Shin's
//!   experiment), shared with `ssdready strategies`, and the study's
//!   strategies section;
//! * [`fleet`]: the study of a fleet (`study --client`): hosts alone,
//!   then 1…N together, aggregate IOPS, merged p99, efficiency; its runs,
//!   document and printed block in [`fleet_run`];
//! * [`answer`]: the answer in words, shared by the text and HTML
//!   renderings; [`text`]: the plan and the findings as printed;
//! * [`model`]: `study.json`, schema `ssdready.study`
//!   (`docs/study-schema.md`).

#![forbid(unsafe_code)]

pub mod answer;
pub mod app_runs;
pub mod appfs;
pub mod applications;
pub mod calibrate;
pub mod capacity;
pub mod classify;
pub mod detect;
pub mod driver;
pub mod facts;
pub mod figures;
pub mod fleet;
pub mod fleet_run;
pub mod jobs;
pub mod kdrive;
pub mod limit;
pub mod model;
pub mod plan;
pub mod real;
pub mod rules;
pub mod slo;
pub mod strategies;
pub mod summary;
pub mod sweeps;
pub mod text;
pub mod transport;
pub mod virt;

use model::{Machine, RunRecord, TargetProfile, Verdict};
use std::collections::BTreeMap;

/// Figures, facts and verdicts of a set of runs.
pub struct Judgement {
    pub figures: figures::Figures,
    pub facts: BTreeMap<String, facts::Fact>,
    pub verdicts: Vec<Verdict>,
}

/// Derive the figures from the runs and judge them with the shipped rules.
pub fn judge(
    targets: &[TargetProfile],
    machine: &Machine,
    runs: &[RunRecord],
    interrupted: bool,
) -> Judgement {
    judge_with(targets, machine, runs, interrupted, None, None, None)
}

/// [`judge`], with the capacity at a latency target when it was searched
/// and the emulated drive's transport when the target was one (its daemon's
/// figures, and the transport's calibration, taken out of the figures).
pub fn judge_with(
    targets: &[TargetProfile],
    machine: &Machine,
    runs: &[RunRecord],
    interrupted: bool,
    capacity: Option<&capacity::CapacityDoc>,
    transport: Option<&transport::Transport>,
    calibration: Option<&calibrate::Calibration>,
) -> Judgement {
    let mut figures = figures::derive(targets, runs, machine);
    figures.transport = transport.cloned();
    if let Some(c) = calibration {
        calibrate::take_out(&mut figures, c, runs);
    }
    let mut facts = facts::facts(&targets[0], machine, &figures);
    facts::add_checks(&mut facts, runs);
    if let Some(c) = capacity {
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
        interrupted,
    };
    let mut verdicts = rules::judge(&rules, &facts, &ctx);
    // A drive faster than this host: the headline is what the platform
    // gives, not what the apparatus does.
    if let Some(v) = transport::host_limit(&figures, runs) {
        verdicts.insert(0, v);
    }
    Judgement {
        figures,
        facts,
        verdicts,
    }
}

/// A runner that runs every point on the emulator model in virtual time:
/// the study of a device with a perfect platform (for tests, and to compare
/// against).
pub struct VirtualRunner;

impl driver::Runner for VirtualRunner {
    fn run(
        &mut self,
        _w: &plan::Workload,
        request: &ssdready_run::RunRequest,
    ) -> Result<driver::Outcome, driver::Failure> {
        let (summary, _) =
            virt::run(request).map_err(|e| driver::Failure::Failed(e.to_string()))?;
        Ok(driver::Outcome {
            summary,
            result: None,
            clock: "virtual".into(),
        })
    }
}
