//! One phase of a run: the jobs that run together (fio's stonewall ends a
//! phase). Its steps, in order:
//!
//! 1. the instruments asked for are loaded ([`instruments`]) and the
//!    workers started ([`spawn`]); no worker starts I/O until every worker
//!    of the phase has its engine;
//! 2. the measured window opens (before the workers are released, or once
//!    the longest ramp has passed: [`measure`]);
//! 3. [`watch`]: every 20 ms the workers' notices are passed on, fio's
//!    `exitall` and steady-state rules applied, and once a second the
//!    progress reported;
//! 4. the workers are joined, the window closed, and the figures built.

mod inputs;
mod instruments;
mod measure;
mod spawn;
#[cfg(test)]
mod tests;

use crate::agglog::AggBwLog;
use crate::failure::Failure;
use crate::observer::{notices, RunObserver, Totals};
use crate::prepared::PreparedJob;
use crate::steadystate::Unit;
use crate::worker::{self, Live, WorkerOutcome};
pub(crate) use inputs::{Outcomes, PhaseInputs};
use instruments::Instruments;
use ssdready_core::result::*;
use ssdready_core::spec::{EngineKind, ExitWhat, JobSpec};

use ssdready_probe::cpu;
use ssdready_probe::threads::WorkSampler;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

/// What the phases of a run carry from one to the next.
pub(crate) struct Carried {
    /// The number the next worker gets (fio numbers workers across the run).
    pub next_worker: u32,
    /// The emulated device's free blocks, sampled once a second.
    pub emu_free: Vec<u64>,
    /// `--bandwidth-log`, the run's aggregate bandwidth log.
    pub agg: Option<AggBwLog>,
}

/// The worker outcomes of one phase, with its snapshots.
pub(crate) struct PhaseRun {
    pub outcomes: Outcomes,
    pub window_ns: u64,
    pub cpu: Option<CpuCost>,
    pub disks: Vec<DiskResult>,
    pub profile: Option<ProfileReport>,
    pub decomposition: Option<Decomposition>,
    pub hw_counters: Option<HwCounts>,
    /// fio's steady-state checks of the phase's jobs.
    pub steady: Vec<Unit>,
    /// A job's `exitall` with `exit_what=all` ended the run: the later
    /// phases do not start.
    pub end_run: bool,
}

/// Whether to decompose this phase: only when asked. Off by default since
/// the kernel's price of calling any BPF program from four block
/// tracepoints (4.6–7.7 % of IOPS on this project's VMs, measured with
/// empty programs) alone exceeds the 3 % a default run may cost.
/// Asked for a phase whose I/O reaches no block device (the emulator and
/// the null engine have no block layer), it says so instead.
pub(crate) fn decompose_phase(
    asked: Option<bool>,
    jobs: &[PreparedJob],
    members: &[usize],
    warnings: &mut Vec<String>,
) -> bool {
    if asked != Some(true) {
        return false;
    }
    let block = members.iter().any(|&i| {
        jobs[i].emu.is_none()
            && jobs[i].spec.ioengine != EngineKind::Null
            && jobs[i].targets.iter().any(|t| t.device.is_some())
    });
    if !block {
        warnings.push(
            "--decompose: no job of this phase reaches a block device (the emulator and the \
             null engine have no block layer): nothing to decompose"
                .into(),
        );
    }
    block
}

/// Run the jobs `members` (indexes into `run.jobs`) together.
pub(crate) fn run_phase(
    run: &PhaseInputs,
    members: &[usize],
    decompose: bool,
    carried: &mut Carried,
    warnings: &mut Vec<String>,
    obs: &mut dyn RunObserver,
) -> Result<PhaseRun, Failure> {
    let jobs = run.jobs;
    let mut inst = Instruments::open(run.profile, run.profile_exact, decompose, warnings);
    let devices = measure::devices(run, members);
    // Interrupt coalescing of real devices, put back when the phase ends.
    let _coalescing =
        crate::strategy::nvme::apply(jobs, members).map_err(|e| Failure::Runtime(e.to_string()))?;
    // The CPUs kept awake, released when the phase ends.
    let _awake =
        crate::strategy::awake::hold(jobs, members).map_err(|e| Failure::Runtime(e.to_string()))?;
    let mut w = spawn::spawn(run, members, &mut carried.next_worker, inst.join_table())?;
    let (ramp, expected) = measure::timing(run, members, warnings);
    w.opened.wait();
    w.end_all_if_one_failed();
    // Without a ramp the window opens before the workers are released (they
    // wait at the barrier, engines open), so no I/O of the phase precedes
    // the first snapshot however late this thread is scheduled.
    let mut from = (ramp == 0).then(|| measure::snapshot(&run.clock, &devices));
    if from.is_some() {
        inst.start();
    }
    w.start.wait();
    let t0 = run.clock.now();
    w.steady = steady_units(run, &w, t0);
    obs.phase_start(expected);
    // What the kernel's workers do in the window, for its CPU by work.
    let mut workers: Option<WorkSampler> = None;
    let end_run = watch(run, members, &mut w, carried, obs, t0, |now| {
        if from.is_none() && now >= t0 + ramp {
            from = Some(measure::snapshot(&run.clock, &devices));
            inst.start();
        }
        inst.drain();
        if let Some(f) = &from {
            workers
                .get_or_insert_with(|| WorkSampler::new(f.1.threads.as_ref()))
                .tick();
        }
        from.is_some()
    });
    let outcomes = join_workers(jobs, std::mem::take(&mut w.handles), warnings)?;
    let mut to = measure::snapshot(&run.clock, &devices);
    to.1.works_seen = workers.map(WorkSampler::seen).unwrap_or_default();
    let mut closed = inst.stop();
    obs.phase_end();
    notices::current().drain_into(obs);
    let from = from.unwrap_or_else(|| to.clone());
    if let Some(f) = phase_failure(jobs, &outcomes) {
        return Err(f);
    }
    let window_ns = to.0.saturating_sub(from.0);
    let ios: u64 = outcomes.iter().map(|(_, o)| o.stats.total_ios()).sum();
    let cpu_cost = cpu::cost(&from.1, &to.1, ios, window_ns, run.clock.tsc_hz());
    if from.1.system.is_none() {
        warnings.push("/proc/stat is unreadable: no whole-system CPU figures".into());
    }
    let disks = measure::disks(run, members, &devices, (&from, &to), &outcomes);
    let profile = closed.profile(window_ns, ios, run.clock.tsc_hz(), obs);
    let decomposition = closed.decomposition(&outcomes, &percentiles(jobs, members));
    Ok(PhaseRun {
        outcomes,
        window_ns,
        cpu: Some(cpu_cost),
        disks,
        profile,
        decomposition,
        hw_counters: closed.hw_counts(ios),
        steady: w.steady,
        end_run,
    })
}

/// fio's steady-state units of the started workers, from `t0` on.
fn steady_units(run: &PhaseInputs, w: &spawn::Workers, t0: u64) -> Vec<Unit> {
    let specs: Vec<&JobSpec> = run.jobs.iter().map(|j| &*j.spec).collect();
    let worker_jobs: Vec<usize> = w.lives.iter().map(|(ji, _)| *ji).collect();
    crate::steadystate::units(&worker_jobs, &specs, run.groups, t0)
}

/// Join the phase's worker threads, numbered; warns of I/Os they abandoned.
fn join_workers(
    jobs: &[PreparedJob],
    handles: Vec<spawn::Handle>,
    warnings: &mut Vec<String>,
) -> Result<Outcomes, Failure> {
    let mut outcomes = Vec::new();
    for (ji, number, h) in handles {
        let mut o = h
            .join()
            .map_err(|_| Failure::Internal("a worker thread panicked".into()))?;
        o.number = number;
        outcomes.push((ji, o));
    }
    warnings.extend(worker::abandoned_warnings(
        outcomes
            .iter()
            .map(|(ji, o)| (jobs[*ji].spec.name.as_str(), o)),
    ));
    Ok(outcomes)
}

/// The percentiles the phase reports: its first job's list.
fn percentiles(jobs: &[PreparedJob], members: &[usize]) -> Vec<f64> {
    members
        .first()
        .map(|&i| jobs[i].spec.percentile_list.clone())
        .unwrap_or_default()
}

/// Wait for the phase's workers to end, every 20 ms passing on their
/// notices, calling `tick` with the clock (the window's opening and the
/// sampler's draining; it says whether the window is open), applying `exitall` and the steady-state rules, and
/// once a second reporting progress. Returns whether the run ends after
/// this phase.
fn watch(
    run: &PhaseInputs,
    members: &[usize],
    w: &mut spawn::Workers,
    carried: &mut Carried,
    obs: &mut dyn RunObserver,
    t0: u64,
    mut tick: impl FnMut(u64) -> bool,
) -> bool {
    let live_only: Vec<Arc<Live>> = w.lives.iter().map(|(_, l)| l.clone()).collect();
    let specs: Vec<&JobSpec> = run.jobs.iter().map(|j| &*j.spec).collect();
    let emu_dev = members.iter().find_map(|&i| run.jobs[i].emu.clone());
    let said = notices::current();
    let mut next_tick = t0 + 1_000_000_000;
    let mut end_run = false;
    while !live_only.iter().all(|l| l.done.load(Relaxed)) {
        std::thread::sleep(Duration::from_millis(20));
        said.drain_into(obs);
        let now = run.clock.now();
        let measuring = tick(now);
        if let Some(a) = carried.agg.as_mut() {
            a.tick(now, measuring, &live_only);
        }
        end_run |= exitall(&specs, run.groups, &w.lives, &mut w.ends);
        w.ends.propagate();
        if now >= next_tick {
            // A worker that panicked holding the lock has poisoned it: its
            // error is reported when the phase ends.
            if let Some(Ok(d)) = emu_dev.as_ref().map(|d| d.device.read()) {
                carried.emu_free.push(d.free_blocks());
            }
            obs.progress((now - t0) as f64 / 1e9, &totals(&live_only));
            crate::steadystate::sample(&mut w.steady, now, &live_only, &mut w.ends);
            next_tick += 1_000_000_000;
        }
    }
    end_run
}

/// The workers' completed I/Os and bytes per direction.
fn totals(lives: &[Arc<Live>]) -> Totals {
    let mut now = [(0u64, 0u64); 3];
    for l in lives {
        for (d, n) in now.iter_mut().enumerate() {
            n.0 += l.ios[d].load(Relaxed);
            n.1 += l.bytes[d].load(Relaxed);
        }
    }
    now
}

/// fio's `exitall`: a finished worker of a job with it ends, as its
/// `exit_what` says, the workers of its reporting group (`group`, fio's
/// default) or every worker of the phase (`stonewall`, `all`). Returns
/// whether the run ends after this phase (`all`). `specs` and `groups`
/// are per job, `lives` per worker with its job's index.
fn exitall(
    specs: &[&JobSpec],
    groups: &[u32],
    lives: &[(usize, Arc<Live>)],
    ends: &mut crate::steadystate::EndFlags,
) -> bool {
    let mut end_run = false;
    if lives
        .iter()
        .any(|(ji, l)| specs[*ji].run.exitall_on_error && l.errored.load(Relaxed))
    {
        // fio's exitall_on_error: every job ends, and the run with them.
        ends.end_all();
        end_run = true;
    }
    for (ji, _) in lives
        .iter()
        .filter(|(ji, l)| specs[*ji].exitall && l.done.load(Relaxed))
    {
        match specs[*ji].exit_what {
            ExitWhat::Group => {
                let group: Vec<usize> = (0..lives.len())
                    .filter(|&w| groups[lives[w].0] == groups[*ji])
                    .collect();
                ends.end_steady(&group);
            }
            ExitWhat::Stonewall => ends.end_all(),
            ExitWhat::All => {
                ends.end_all();
                end_run = true;
            }
        }
    }
    end_run
}

/// The failure of a phase whose workers reported one: a panic first (the
/// errors of the others may only be the locks it poisoned), then any other.
fn phase_failure(jobs: &[PreparedJob], outcomes: &[(usize, WorkerOutcome)]) -> Option<Failure> {
    let (ji, o) = outcomes
        .iter()
        .find(|(_, o)| o.panicked)
        .or_else(|| outcomes.iter().find(|(_, o)| o.error.is_some()))?;
    let job = &jobs[*ji].spec.name;
    let error = o.error.as_deref().unwrap_or("");
    Some(if o.panicked {
        let what =
            crate::panics::first().map_or(error.to_string(), |p| format!("internal error: {p}"));
        Failure::Internal(format!(
            "job '{job}': {what} (a bug in ssdready; please report it)"
        ))
    } else if o.interrupted {
        Failure::Interrupted(format!("job '{job}': {error}"))
    } else if o.unsupported {
        Failure::BadInput(format!("job '{job}': {error}"))
    } else {
        Failure::Runtime(format!("job '{job}': {error}"))
    })
}
