//! Running a plan: each point through a [`Runner`] (the binary's runs
//! through the platform, or the model in virtual time), with the decisions
//! that need results — the queue-depth sweep stops once saturated, `peak`
//! depths resolve to the sweep's best, io_uring falls back to libaio when
//! it fails — and, on an emulator, each point's twin on the model alone;
//! each point only when it fits before the sweeps' deadline on the
//! budget's clock (`crate::pace`).

use crate::clock::Deadline;
use crate::figures::saturated;
use crate::model::Skip;
use crate::pace::Pace;
use crate::plan::{Plan, Point, Qd, Workload};
use ssdready_core::result::RunResult;
use ssdready_measured::record::{DeviceSide, RunRecord, TargetKind, TargetProfile};
use ssdready_measured::summary::PointSummary;
use ssdready_run::RunRequest;
use std::collections::HashMap;

/// What a run produced.
pub struct Outcome {
    pub summary: PointSummary,
    pub result: Option<RunResult>,
    /// `real` or `virtual`.
    pub clock: String,
    /// What was read around the run (its control groups' counters).
    pub context: Option<ssdready_measured::record::RunContext>,
}

/// Why a run produced nothing, in its message's words.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The point does not apply to this target (bad input for `run`).
    #[error("{0}")]
    NotApplicable(String),
    /// The run failed.
    #[error("{0}")]
    Failed(String),
    /// The study's budget refused the run before it started.
    #[error("{0}")]
    NotRun(String),
}

/// Runs points.
pub trait Runner {
    /// Run one workload's request.
    fn run(&mut self, w: &Workload, request: &RunRequest) -> Result<Outcome, Failure>;
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
    /// A run's seconds as the sweeps took them (the plan's estimate where
    /// that was longer).
    pub per_run_s: f64,
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
    /// The ids of the points already run: a repeat whose depths coincide
    /// (knee = peak) runs once.
    done: Vec<String>,
    qd_stopped: bool,
    engine: Option<&'static str>,
    /// The model's answer by the twin's command line.
    twins: HashMap<Vec<String>, Option<DeviceSide>>,
    /// Strategies `run` refused for a reason that holds for every pattern.
    refused: Vec<&'static str>,
}

/// Run every point of `plan` on `targets` that fits before `deadline`
/// (`crate::pace`: repeats give way first; what was dropped is said in
/// `skipped`).
pub fn execute(
    targets: &[TargetProfile],
    plan: &Plan,
    runner: &mut dyn Runner,
    obs: &mut dyn Observer,
    deadline: &Deadline,
) -> Executed {
    let mut ex = Executed::default();
    let mut pace = Pace::new(plan);
    let mut st = State {
        peak: None,
        knee: None,
        done: Vec::new(),
        qd_stopped: false,
        engine: Some("io_uring"),
        twins: HashMap::new(),
        refused: Vec::new(),
    };
    for (i, p) in plan.points.iter().enumerate() {
        if runner.stopped() {
            ex.interrupted = true;
            break;
        }
        let Some(qd) = depth_of(p, &mut st, &mut ex, obs) else {
            continue;
        };
        if passed_over(p, qd, &mut st) {
            obs.dropped(1);
            continue;
        }
        if let Err(why) = pace.admit(plan, i, deadline) {
            pace.drop_point(p, qd, why);
            obs.dropped(1);
            continue;
        }
        let id = p.id(qd);
        obs.starting(i, &id, plan.eta_s(i));
        let t0 = deadline.clock().elapsed_s();
        let rec = run_point(targets, plan, p, qd, runner, &mut st, &mut ex);
        pace.ran(p.sweep, deadline.clock().elapsed_s() - t0);
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
        ex.skipped.push(saturated_skip(&ex.runs));
    }
    ex.skipped.extend(pace.skips());
    ex.per_run_s = pace.per_run_s();
    ex
}

/// A point's queue depth, resolved from the runs so far; None when it has
/// none (said to `obs`, and as a skip when no peak was found).
fn depth_of(p: &Point, st: &mut State, ex: &mut Executed, obs: &mut dyn Observer) -> Option<u32> {
    match p.qd {
        Qd::Fixed(q) => Some(q),
        Qd::Peak => {
            if st.peak.is_none() {
                skip_point(ex, obs, p, "no queue-depth run succeeded: no peak depth");
            }
            st.peak
        }
        Qd::Deepest => {
            let deepest =
                ssdready_diagnosis::figures::curve::deepest_qd_run(&ex.runs).map(|r| r.workload.qd);
            if deepest.is_none() {
                skip_point(ex, obs, p, "no queue-depth run succeeded: no deepest depth");
            }
            deepest
        }
        Qd::Knee | Qd::BelowKnee => {
            let (knee, below) = *st.knee.get_or_insert_with(|| knee_of(&ex.runs));
            let qd = match (p.qd, knee, below) {
                (Qd::Knee, k, _) if k > 0 => Some(k),
                (Qd::BelowKnee, _, Some(b)) => Some(b),
                _ => None,
            };
            if qd.is_none() {
                obs.dropped(1);
            }
            qd
        }
    }
}

/// Whether a point at `qd` is passed over: a repeat at depths already run,
/// the queue-depth sweep once saturated, a strategy refused everywhere.
fn passed_over(p: &Point, qd: u32, st: &mut State) -> bool {
    let key = p.id(qd);
    if st.done.contains(&key) && p.repeat > 1 {
        return true;
    }
    st.done.push(key);
    p.sweep == "qd" && st.qd_stopped || p.strategy.is_some_and(|s| st.refused.contains(&s))
}

/// The skip that says where the saturated queue-depth sweep stopped.
fn saturated_skip(runs: &[RunRecord]) -> Skip {
    let done: Vec<u32> = runs
        .iter()
        .filter(|r| r.sweep == "qd")
        .map(|r| r.workload.qd)
        .collect();
    let last = done.last().copied().unwrap_or(0);
    Skip {
        what: format!("queue depths above {last}"),
        why: "saturated: the last two doublings added less than 5 %".into(),
    }
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

/// The request of a point's twin on the model alone (virtual time), where
/// the device's timing is known: the emulator's own options, or, for the
/// emulated drive behind a kernel block device, the same workload on its
/// model (with the fill an emulator's reads start with). None for
/// strategies (polling and merging are not the model's business), several
/// targets, and runs whose I/O does not reach the device one for one
/// (buffered).
fn twin_request(
    targets: &[TargetProfile],
    plan: &Plan,
    p: &Point,
    w: &Workload,
    request: &RunRequest,
) -> Option<RunRequest> {
    let t = &targets[0];
    if p.targets != [0] || p.strategy.is_some() || p.sweep == "fill" {
        return None;
    }
    if t.kind == TargetKind::Emulator {
        let mut twin = request.clone();
        twin.profile = false;
        twin.profile_exact = false;
        return Some(twin);
    }
    let spec = t.emulated.clone()?;
    if !w.direct || w.targets != [t.spec.clone()] {
        return None;
    }
    let model = TargetProfile {
        spec: spec.clone(),
        kind: TargetKind::Emulator,
        ..Default::default()
    };
    let mut tw = w.clone();
    tw.targets = vec![spec];
    tw.engine = None;
    Some(crate::jobs::request(&tw, &[model], &plan.settings, false))
}

fn run_point(
    targets: &[TargetProfile],
    plan: &Plan,
    p: &Point,
    qd: u32,
    runner: &mut dyn Runner,
    st: &mut State,
    ex: &mut Executed,
) -> RunRecord {
    let started = now_ms();
    let wall = std::time::Instant::now();
    let mut w = crate::jobs::workload(p, qd, targets, st.engine);
    let request = |w: &Workload| {
        if p.sweep == "fill" {
            crate::jobs::fill_request(w, &plan.settings)
        } else {
            crate::jobs::request(w, targets, &plan.settings, p.instrumented)
        }
    };
    let mut req = request(&w);
    let mut res = runner.run(&w, &req);
    if let (Err(Failure::Failed(e)), Some("io_uring")) = (&res, w.engine.as_deref()) {
        if p.sweep != "engine" && p.strategy.is_none() && e.contains("io_uring") {
            ex.skipped.push(Skip {
                what: "io_uring".into(),
                why: format!("{e}: the study uses libaio instead"),
            });
            st.engine = Some("libaio");
            w = crate::jobs::workload(p, qd, targets, st.engine);
            req = request(&w);
            res = runner.run(&w, &req);
        }
    }
    let device_model = twin_request(targets, plan, p, &w, &req).and_then(|twin| {
        st.twins
            .entry(twin.command_line())
            .or_insert_with(|| crate::virt::run(&twin).ok().map(|x| x.1))
            .clone()
    });
    let id = p.id(qd);
    let mut rec = RunRecord {
        point: p.point_id(qd),
        id,
        sweep: p.sweep.into(),
        repeat: p.repeat,
        workload: w,
        options: req.command_line(),
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
            rec.context = o.context;
            rec.model_limit_iops = targets
                .iter()
                .find(|t| rec.workload.targets.first() == Some(&t.spec))
                .and_then(|t| {
                    let w = &rec.workload;
                    crate::limit::run_limit(t, (&w.rw, w.bs, w.rwmixread), rec.summary.window_s)
                });
        }
        // A strategy's failed run says so, as `ssdready strategies` does:
        // any other reason is run's refusal of its options.
        Err(Failure::Failed(e)) if p.strategy.is_some() => {
            rec.error = Some(format!("{}: {e}", crate::strategies::RUN_FAILED))
        }
        Err(e) => rec.error = Some(e.to_string()),
    }
    rec.wall_s = wall.elapsed().as_secs_f64();
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, StudyOptions};

    /// The emulated x25e drive behind a kernel loop device, as detected.
    fn kernel_drive() -> TargetProfile {
        let mut t = TargetProfile {
            spec: "/dev/loop9".into(),
            kind: TargetKind::BlockDevice,
            transport: "loop".into(),
            size_bytes: 256 << 20,
            logical_block_size: 4096,
            writable: true,
            emulated: Some("emu:x25e,size=256m".into()),
            ..Default::default()
        };
        t.basis = crate::limit::basis_of(&t);
        t
    }

    #[test]
    fn a_kernel_drives_twin_runs_the_same_reads_on_its_model_after_a_fill() {
        let t = kernel_drive();
        let o = StudyOptions {
            quick: true,
            budget_s: 60.0,
            root: true,
            cpus: 2,
            ..Default::default()
        };
        let mut p = plan(std::slice::from_ref(&t), &o);
        p.settings.runtime_s = 0.2;
        p.settings.ramp_s = 0.0;
        p.settings.region_bytes = 64 << 20;
        let qd1 = p
            .points
            .iter()
            .find(|x| x.sweep == "qd" && x.qd == crate::plan::Qd::Fixed(1))
            .expect("a QD 1 point");
        let w = crate::jobs::workload(qd1, 1, std::slice::from_ref(&t), Some("io_uring"));
        let real = crate::jobs::request(&w, std::slice::from_ref(&t), &p.settings, false);
        let line = real.command_line();
        assert!(
            line.iter().any(|o| o == "--filename=/dev/loop9"),
            "{line:?}"
        );
        let twin_req = twin_request(std::slice::from_ref(&t), &p, qd1, &w, &real).expect("a twin");
        let twin = twin_req.command_line();
        assert!(!twin.iter().any(|o| o.contains("/dev/loop9")), "{twin:?}");
        assert!(
            !twin.iter().any(|o| o.starts_with("--ioengine")),
            "{twin:?}"
        );
        // Reads on the model start with a fill, as on the in-process drive.
        assert!(twin_req
            .sections
            .iter()
            .any(|s| s.name == ssdready_measured::summary::FILL_JOB));
        let (_, dev) = crate::virt::run(&twin_req).expect("the twin runs in virtual time");
        // The x25e model's 4 KiB read: 148.8 µs of device time at QD 1.
        assert!(
            (dev.lat_mean_ns - 148_800.0).abs() < 0.05 * 148_800.0,
            "{}",
            dev.lat_mean_ns
        );
        // Buffered runs and the fill have no twin: their I/O is not the
        // device's one for one.
        let mut b = w.clone();
        b.direct = false;
        assert!(twin_request(std::slice::from_ref(&t), &p, qd1, &b, &real).is_none());
        // A block device without a model has none either.
        let plain = TargetProfile {
            emulated: None,
            ..t.clone()
        };
        assert!(twin_request(std::slice::from_ref(&plain), &p, qd1, &w, &real).is_none());
    }

    #[test]
    fn a_kernel_drives_limit_is_its_models() {
        let t = kernel_drive();
        let f = crate::figures::derive(
            std::slice::from_ref(&t),
            &[],
            &Default::default(),
            None,
            &Default::default(),
        );
        assert_eq!(f.device_limit.basis, "analytic model");
        let p = crate::limit::params_of("emu:x25e,size=256m").unwrap();
        let l = ssdready_emu::analytic::limit::model_limit(
            &p,
            ssdready_emu::analytic::limit::Access::Read,
            4096,
        );
        assert_eq!(f.device_limit.iops, l.iops);
        assert!(ssdready_diagnosis::answer::describe(&t).contains("behind the kernel"));
    }
}
