//! Running a plan: each point through a [`Runner`] (the binary's runs
//! through the platform, or the model in virtual time), with the decisions
//! that need results — the queue-depth sweep stops once saturated, `peak`
//! depths resolve to the sweep's best, io_uring falls back to libaio when
//! it fails — and, on an emulator, each point's twin on the model alone.

use crate::figures::saturated;
use crate::model::{DeviceSide, RunRecord, Skip, TargetKind, TargetProfile};
use crate::plan::{Plan, Point, Qd, Workload};
use crate::summary::PointSummary;
use ssdready_core::result::RunResult;
use std::collections::HashMap;

/// What a run produced.
pub struct Outcome {
    pub summary: PointSummary,
    pub result: Option<RunResult>,
    /// `real` or `virtual`.
    pub clock: String,
}

/// Why a run produced nothing.
#[derive(Debug)]
pub enum Failure {
    /// The point does not apply to this target (bad input for `run`).
    NotApplicable(String),
    /// The run failed.
    Failed(String),
}

/// Runs points.
pub trait Runner {
    /// Run one workload with its options.
    fn run(&mut self, w: &Workload, options: &[String]) -> Result<Outcome, Failure>;
    /// Whether the study was asked to stop.
    fn stopped(&self) -> bool {
        false
    }
}

/// Hears about progress.
pub trait Observer {
    /// A run is starting: its index among the points, the points left and
    /// their estimated seconds.
    fn starting(&mut self, _index: usize, _id: &str, _eta_s: f64) {}
    /// A run finished (or failed).
    fn finished(&mut self, _rec: &RunRecord) {}
    /// Points were dropped (their count).
    fn dropped(&mut self, _n: usize) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// What running a plan gave.
#[derive(Default)]
pub struct Executed {
    pub runs: Vec<RunRecord>,
    pub skipped: Vec<Skip>,
    pub interrupted: bool,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The queue-depth sweep may stop once saturated from this depth on.
pub const MIN_STOP_QD: u32 = 16;

struct State {
    peak: Option<u32>,
    /// (knee, below the knee), fixed when first needed.
    knee: Option<(u32, Option<u32>)>,
    /// (sweep, depth, repeat) already run: a repeat whose depths coincide
    /// (knee = peak) runs once.
    done: Vec<(&'static str, u32, u32, u32)>,
    qd_stopped: bool,
    engine: Option<&'static str>,
    twins: HashMap<Vec<String>, Option<DeviceSide>>,
    /// Strategies `run` refused for a reason that holds for every pattern.
    refused: Vec<&'static str>,
}

/// Run every point of `plan` on `targets`.
pub fn execute(
    targets: &[TargetProfile],
    plan: &Plan,
    runner: &mut dyn Runner,
    obs: &mut dyn Observer,
) -> Executed {
    let mut ex = Executed::default();
    let mut st = State {
        peak: None,
        knee: None,
        done: Vec::new(),
        qd_stopped: false,
        engine: Some("io_uring"),
        twins: HashMap::new(),
        refused: Vec::new(),
    };
    let emu = targets[0].kind == TargetKind::Emulator;
    for (i, p) in plan.points.iter().enumerate() {
        if runner.stopped() {
            ex.interrupted = true;
            break;
        }
        let qd = match p.qd {
            Qd::Fixed(q) => q,
            Qd::Peak => match st.peak {
                Some(q) => q,
                None => {
                    skip_point(
                        &mut ex,
                        obs,
                        p,
                        "no queue-depth run succeeded: no peak depth",
                    );
                    continue;
                }
            },
            Qd::Knee | Qd::BelowKnee => {
                let (knee, below) = *st.knee.get_or_insert_with(|| knee_of(&ex.runs));
                match (p.qd, knee, below) {
                    (Qd::Knee, k, _) if k > 0 => k,
                    (Qd::BelowKnee, _, Some(b)) => b,
                    _ => {
                        obs.dropped(1);
                        continue;
                    }
                }
            }
        };
        let key = (p.sweep, qd, p.repeat, p.threads);
        if st.done.contains(&key) && p.repeat > 1 {
            obs.dropped(1);
            continue;
        }
        st.done.push(key);
        if p.sweep == "qd" && st.qd_stopped || p.strategy.is_some_and(|s| st.refused.contains(&s)) {
            obs.dropped(1);
            continue;
        }
        let id = p.id(qd);
        obs.starting(i, &id, plan.eta_s(i));
        let rec = run_point(targets, plan, p, qd, runner, &mut st, &mut ex, emu);
        obs.finished(&rec);
        let ok = rec.error.is_none();
        if let (Some(s), Some(e)) = (p.strategy, &rec.error) {
            if crate::strategies::refused_everywhere(e) {
                st.refused.push(s);
            }
        }
        ex.runs.push(rec);
        if p.sweep == "qd" {
            update_qd(&mut ex, &mut st, ok);
        }
    }
    if st.qd_stopped {
        let done: Vec<u32> = ex
            .runs
            .iter()
            .filter(|r| r.sweep == "qd")
            .map(|r| r.workload.qd)
            .collect();
        let last = done.last().copied().unwrap_or(0);
        ex.skipped.push(Skip {
            what: format!("queue depths above {last}"),
            why: "saturated: the last two doublings added less than 5 %".into(),
        });
    }
    ex
}

/// The knee of the queue-depth sweep's first measurements, and the depth
/// below it when the sweep measured one (0: no knee).
fn knee_of(runs: &[RunRecord]) -> (u32, Option<u32>) {
    let curve: Vec<(u32, f64)> = runs
        .iter()
        .filter(|r| r.sweep == "qd" && r.error.is_none())
        .map(|r| (r.workload.qd, r.summary.iops))
        .collect();
    let peak = curve.iter().map(|c| c.1).fold(0.0, f64::max);
    let Some(i) = curve.iter().position(|c| c.1 >= 0.9 * peak) else {
        return (0, None);
    };
    (curve[i].0, i.checked_sub(1).map(|j| curve[j].0))
}

fn skip_point(ex: &mut Executed, obs: &mut dyn Observer, p: &Point, why: &str) {
    obs.dropped(1);
    ex.skipped.push(Skip {
        what: format!("{} point {}", p.sweep, p.id(0)),
        why: why.into(),
    });
}

fn update_qd(ex: &mut Executed, st: &mut State, ok: bool) {
    let curve: Vec<(u32, f64)> = ex
        .runs
        .iter()
        .filter(|r| r.sweep == "qd" && r.error.is_none())
        .map(|r| (r.workload.qd, r.summary.iops))
        .collect();
    st.peak = curve.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|c| c.0);
    let iops: Vec<f64> = curve.iter().map(|c| c.1).collect();
    // Not before QD 16: on a noisy machine two flat doublings come early.
    let deep = curve.last().is_some_and(|c| c.0 >= MIN_STOP_QD);
    if deep && saturated(&iops) || !ok && !curve.is_empty() {
        st.qd_stopped = true;
    }
}

#[allow(clippy::too_many_arguments)]
fn run_point(
    targets: &[TargetProfile],
    plan: &Plan,
    p: &Point,
    qd: u32,
    runner: &mut dyn Runner,
    st: &mut State,
    ex: &mut Executed,
    emu: bool,
) -> RunRecord {
    let started = now_ms();
    let wall = std::time::Instant::now();
    let mut w = crate::jobs::workload(p, qd, targets, st.engine);
    let opts = |w: &Workload| {
        if p.sweep == "fill" {
            crate::jobs::fill_options(w, &plan.settings)
        } else {
            crate::jobs::options(w, targets, &plan.settings, p.instrumented)
        }
    };
    let mut options = opts(&w);
    let mut res = runner.run(&w, &options);
    if let (Err(Failure::Failed(e)), Some("io_uring")) = (&res, w.engine.as_deref()) {
        if p.sweep != "engine" && p.strategy.is_none() && e.contains("io_uring") {
            ex.skipped.push(Skip {
                what: "io_uring".into(),
                why: format!("{e}: the study uses libaio instead"),
            });
            st.engine = Some("libaio");
            w = crate::jobs::workload(p, qd, targets, st.engine);
            options = opts(&w);
            res = runner.run(&w, &options);
        }
    }
    // Strategies' options (polling, merging) are not the model's business.
    let device_model = (emu && p.targets == [0] && p.strategy.is_none())
        .then(|| {
            let key: Vec<String> = options
                .iter()
                .filter(|o| *o != "--profile")
                .cloned()
                .collect();
            st.twins
                .entry(key)
                .or_insert_with(|| crate::virt::run(&options).ok().map(|x| x.1))
                .clone()
        })
        .flatten();
    let id = p.id(qd);
    let mut rec = RunRecord {
        point: p.point_id(qd),
        id,
        sweep: p.sweep.into(),
        repeat: p.repeat,
        workload: w,
        options,
        clock: "real".into(),
        instrumented: p.instrumented,
        started_unix_ms: started,
        device_model,
        ..Default::default()
    };
    match res {
        Ok(o) => {
            rec.summary = o.summary;
            rec.result = o.result;
            rec.clock = o.clock;
        }
        // A strategy's failed run says so, as `ssdready strategies` does:
        // any other reason is run's refusal of its options.
        Err(Failure::Failed(e)) if p.strategy.is_some() => {
            rec.error = Some(format!("{}: {e}", crate::strategies::RUN_FAILED))
        }
        Err(Failure::NotApplicable(e) | Failure::Failed(e)) => rec.error = Some(e),
    }
    rec.wall_s = wall.elapsed().as_secs_f64();
    rec
}
