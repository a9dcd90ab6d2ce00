//! # ssdready-study: the study's running
//!
//! `ssdready study` sits above `ssdready run` as a planner of runs; the
//! judging of their results is `ssdready-diagnosis`'s (pure, tested from
//! recorded measurements). This crate holds what runs:
//!
//! * [`ask`]: the command line's values checked before anything runs
//!   (budget, latency target, sweeps, output directory; a fleet's hosts,
//!   each probed) and the plan fitted to the budget;
//! * [`plan`]: from the detected targets, the machine and the time budget,
//!   the sweeps — queue depth, threads, read/write mixes, block sizes,
//!   engines, and on request the I/O schedulers, buffered I/O, raw device
//!   against file (those two in turns), several devices, and the
//!   platform's own peak on a reference device — and each point's `run`
//!   options ([`jobs`]);
//! * [`detect`]: what a target is before anything runs, and its basis
//!   where its device has a model ([`limit`]: the emulator's analytic
//!   limits); [`kdrive`]: the built-in drive behind the kernel (`emu
//!   attach` as a child) and the reference device beside it;
//! * [`driver`]: runs a plan through a [`driver::Runner`] (real runs
//!   through the caller's run function, [`real`], with the control groups'
//!   counters around each; or the emulator model in virtual time,
//!   [`virt`]), stopping the queue-depth sweep once saturated and dropping
//!   what no longer fits by the budget's [`clock`]; [`slo`]: the
//!   capacity at a latency target through the same runner; [`trials`]: what
//!   to change, measured (the levers tried in turns after the sweeps);
//! * [`calibrate`]: the drive's transport measured with a zero-time drive;
//!   [`transport`]: the daemon's figures;
//! * [`app_runs`] and [`appfs`]: the applications section; [`fleet`] and
//!   [`fleet_run`]: the study of a fleet; [`strategies`]: Shin's
//!   strategies' matrix and runner;
//! * [`session`]: the study of one machine as one call — the steps above
//!   in order, through the caller's run function, hands and observer,
//!   and [`session::study_job`], the study of the user's own job file
//!   likewise (its runs through the same runner, [`real::Points`]);
//!   [`outputs`]: what either leaves (its closing and the files its
//!   caller writes, in order), [`progress`]: the lines said on the way;
//!   [`rejudge_job`]: a recorded job study judged again;
//! * [`judge_with`]: the figures, facts and verdicts of what ran, from
//!   `ssdready_diagnosis::judge`; [`text`]: the plan as printed.

#![forbid(unsafe_code)]

// The judging half lives in `ssdready-diagnosis`; these names keep the
// running half's paths (`ssdready_measured::record::RunRecord`) short.
pub(crate) use ssdready_diagnosis::{applications, figures, model};

pub mod app_runs;
pub mod appfs;
pub mod ask;
pub mod calibrate;
pub mod capacity;
pub mod clock;
pub mod detect;
pub mod driver;
mod fio_beside;
pub mod fleet;
pub mod fleet_run;
mod invariants;
pub mod job;
pub mod jobs;
pub mod kdrive;
pub mod limit;
mod made;
pub mod outputs;
mod pace;
pub mod plan;
pub mod progress;
pub mod real;
pub mod rejudge_job;
pub mod session;
pub mod session_parts;
mod session_run;
pub mod slo;
pub mod strategies;
pub mod text;
pub mod transport;
pub mod trials;
pub mod virt;

pub use ssdready_diagnosis::Judgement;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile};

/// Derive the figures from the runs and judge them with the shipped rules.
pub fn judge(
    targets: &[TargetProfile],
    machine: &Machine,
    runs: &[RunRecord],
    interrupted: bool,
) -> Judgement {
    judge_with(targets, machine, runs, interrupted, Beside::default())
}

/// What a study measured beside its runs, for the judgement.
#[derive(Clone, Copy, Default)]
pub struct Beside<'a> {
    /// The capacity at a latency target, when it was searched.
    pub capacity: Option<&'a capacity::CapacityDoc>,
    /// The emulated drive's transport (its daemon's figures) when the
    /// target was one, and its calibration, taken out of the figures.
    pub transport: Option<&'a ssdready_measured::summary::Transport>,
    pub calibration: Option<&'a calibrate::Calibration>,
    /// What can cap the study's I/O on this machine.
    pub caps: Option<&'a ssdready_diagnosis::limit::caps::Caps>,
}

/// [`judge`], with what the study measured beside its runs.
pub fn judge_with(
    targets: &[TargetProfile],
    machine: &Machine,
    runs: &[RunRecord],
    interrupted: bool,
    beside: Beside,
) -> Judgement {
    let strategies = strategies_section(&targets[0], runs);
    ssdready_diagnosis::judge(&ssdready_diagnosis::Inputs {
        targets,
        machine,
        runs,
        interrupted,
        capacity: beside.capacity,
        transport: beside.transport,
        calibration: beside.calibration,
        strategies: strategies.as_ref(),
        caps: beside.caps,
        job_qd: None,
    })
}

/// The strategies section, with the model's peaks on an emulator (its
/// write peak over the runs' measured window).
fn strategies_section(t: &TargetProfile, runs: &[RunRecord]) -> Option<strategies::Section> {
    let params = limit::model_params(t);
    let window = runs
        .iter()
        .filter(|r| r.sweep == "strategies" && r.error.is_none())
        .map(|r| r.summary.window_s)
        .find(|w| *w > 0.0)
        .unwrap_or(1.0);
    strategies::section_of(params.as_ref(), runs, window)
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
            context: None,
        })
    }
}
