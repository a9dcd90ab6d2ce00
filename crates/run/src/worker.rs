//! One worker thread: owns its engine, plan, buffers (inside the engine) and
//! statistics; shares nothing on the hot path except a few relaxed atomic
//! stores per reaped batch for the live progress display.
//!
//! The loop follows fio's: fill the queue up to iodepth (committing every
//! `iodepth_batch_submit` I/Os), then reap at least
//! `iodepth_batch_complete_min` completions when the queue is full or the work
//! is done. One timestamp is taken per batch of submissions and one per batch
//! of completions, as fio does.
//!
//! The loop is a sequence of named steps ([`steps`]): check the phase (stop,
//! deadline, end of ramp), *issue* (fill the queue, with the rate limit's and
//! think time's waits from [`wait`]), *commit* a batch, *reap* completions,
//! *account* each finished I/O, publish the live counters.
//!
//! Every wait ends by the job's deadline or a stop request: sleeps are cut
//! into slices of at most [`WAIT_SLICE`](wait::WAIT_SLICE), and the emulator's `getevents`
//! waits at most its own slice. When time is up or a stop is asked, I/Os
//! in flight on the emulator are reaped for one more slice (so
//! ordinary ones, due within microseconds, are counted as in fio) and those
//! still not due then are abandoned — the model's completion may lie
//! seconds ahead, and nothing else holds them — and reported
//! ([`abandoned_warnings`]). Kernel I/O is always waited for.

use ssdready_core::spec::JobSpec;
use ssdready_core::stats::WorkerStats;
use ssdready_core::strategy::{SqThreadCpu, StrategyReport};
use ssdready_io::engine::EngineSetup;
use ssdready_io::{open_engine, Engine, EngineError};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

pub(crate) mod access;
mod arrivals;
mod complete;
mod contents;
mod ctx;
mod files;
mod hooks;
mod lattarget;
mod prio;
mod replay;
mod steps;
#[cfg(test)]
mod tests;
mod tokens;
mod verify;
mod wait;

pub use complete::Wait;
pub use ctx::WorkerCtx;
pub use tokens::FlowShared;

pub use crate::live::Live;

/// What a worker hands back.
pub struct WorkerOutcome {
    pub stats: WorkerStats,
    pub completion_mode: &'static str,
    /// How a memory-mapping engine made its writes durable (`dax`, `msync`).
    pub persistence: Option<&'static str>,
    /// The completion strategy as planned (None when the engine did not open).
    pub strategy: Option<ssdready_core::strategy::StrategyReport>,
    /// Whether the job asked for an SQPOLL thread, and the one found.
    pub sq_thread_asked: bool,
    pub sq_thread: Option<(u32, String)>,
    /// Engine setup or run failure (not per-I/O errors, which are in stats).
    pub error: Option<String>,
    /// True when the error is "this cannot work here" rather than a failure.
    pub unsupported: bool,
    /// True when the error is a wait that Ctrl-C, SIGTERM or SIGHUP ended
    /// (a FIFO with nothing on its other end).
    pub interrupted: bool,
    /// True when the error is a panic (a bug), caught in this worker.
    pub panicked: bool,
    /// 1-based number of the worker in the run (fio's job number in log names).
    pub number: u32,
    /// I/Os still in flight on the emulator when the worker stopped, dropped
    /// rather than waited for (not counted in the statistics).
    pub abandoned: u64,
}

impl WorkerOutcome {
    /// Nothing done yet, for the worker numbered `number`.
    pub fn empty(number: u32) -> Self {
        WorkerOutcome {
            stats: WorkerStats::default(),
            completion_mode: "",
            persistence: None,
            strategy: None,
            sq_thread_asked: false,
            sq_thread: None,
            error: None,
            unsupported: false,
            interrupted: false,
            panicked: false,
            number,
            abandoned: 0,
        }
    }
}

/// One warning per job whose workers abandoned I/Os.
pub fn abandoned_warnings<'a>(
    outcomes: impl Iterator<Item = (&'a str, &'a WorkerOutcome)>,
) -> Vec<String> {
    let mut per_job: Vec<(&str, u64)> = Vec::new();
    for (name, o) in outcomes.filter(|(_, o)| o.abandoned > 0) {
        match per_job.iter_mut().find(|(n, _)| *n == name) {
            Some((_, a)) => *a += o.abandoned,
            None => per_job.push((name, o.abandoned)),
        }
    }
    per_job
        .into_iter()
        .map(|(name, n)| {
            format!(
                "job '{name}': {n} I/O(s) still in flight on the emulated device when the job ended \
                 (runtime reached or stop requested) were abandoned, not waited for; they are not counted"
            )
        })
        .collect()
}

fn pin(cpus: &[usize]) {
    let mut set = nix::sched::CpuSet::new();
    for &c in cpus {
        let _ = set.set(c);
    }
    let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
}

/// Run one worker to completion. Always reaches both barriers, even when
/// the engine fails to open or panics, so the others are never left
/// waiting; does no I/O when any worker of the phase could not start.
pub fn run(ctx: WorkerCtx) -> WorkerOutcome {
    if let Some(c) = &ctx.cpus {
        pin(c);
    }
    let mut out = WorkerOutcome::empty(0);
    let engine = match crate::panics::catching(|| open(&ctx)) {
        Ok(Ok((e, plan))) => {
            out.strategy = Some(plan.report);
            out.sq_thread_asked = ctx.spec.sqthread_poll;
            if ctx.spec.sqthread_poll {
                out.sq_thread = crate::strategy::find_sq_thread();
            }
            Some((e, plan.wait))
        }
        Ok(Err(e)) => {
            // Opening: an unsupported job or a refusing machine (EPERM from
            // a disabled io_uring, EACCES on a target) is not a run failure.
            out.unsupported = crate::failure::engine_refused(&e);
            out.error = Some(e.to_string());
            None
        }
        Err(p) => {
            out.panic(p);
            None
        }
    };
    if engine.is_none() {
        ctx.live.failed.store(true, Relaxed);
    }
    ctx.opened.wait();
    ctx.start.wait();
    if let (Some((mut engine, wait)), false) = (engine, ctx.end_phase.load(Relaxed)) {
        out.completion_mode = engine.completion_mode();
        out.persistence = engine.persistence();
        match hooks::before_io(&ctx) {
            Ok(_held) => run_loop(&ctx, &mut engine, wait, &mut out),
            Err(e) => out.error = Some(e),
        }
        if let Err(e) = hooks::after_io(&ctx) {
            out.error.get_or_insert(e);
        }
    }
    let errored = out.error.is_some() || out.stats.first_error.is_some();
    ctx.live.errored.store(errored, Relaxed);
    ctx.live.done.store(true, Relaxed);
    out
}

/// The I/O loop, its outcome into `out`.
fn run_loop(
    ctx: &WorkerCtx,
    engine: &mut ssdready_io::AnyEngine,
    wait: Wait,
    out: &mut WorkerOutcome,
) {
    let stats = &mut out.stats;
    let strategy = steps::StrategyParts {
        wait,
        sq_thread: out.sq_thread.as_ref().map(|(tid, _)| *tid),
    };
    match crate::panics::catching(|| steps::lifecycle::hot_loop(ctx, engine, stats, strategy)) {
        Ok(Ok(abandoned)) => {
            out.abandoned = abandoned;
            // The engine's account of a failed I/O replaces its bare errno.
            if let (Some(d), Some(_)) = (engine.take_error_detail(), &stats.first_error) {
                stats.first_error = Some(d);
            }
        }
        Ok(Err(e)) => out.engine_error(e),
        Err(p) => {
            out.panic(p);
            ctx.end_phase.store(true, Relaxed);
        }
    }
}

/// The worker's engine (the emulator's, or one of `ioengine`) and its
/// completion strategy.
fn open(ctx: &WorkerCtx) -> Result<(ssdready_io::AnyEngine, crate::strategy::Plan), EngineError> {
    place(&ctx.spec)?;
    let params = ctx.emu.as_ref().map(|d| &d.params);
    let plan =
        crate::strategy::plan(&ctx.spec, &ctx.targets, params).map_err(EngineError::Unsupported)?;
    Ok((open_engine_of(ctx)?, plan))
}

fn open_engine_of(ctx: &WorkerCtx) -> Result<ssdready_io::AnyEngine, EngineError> {
    if ctx.index == 0 && crate::panics::injected_in_job("open", &ctx.spec.name) {
        panic!("injected by SSDREADY_INJECT_PANIC");
    }
    let setup = EngineSetup {
        spec: &ctx.spec,
        targets: &ctx.targets,
        seed: ctx.spec.randseed ^ ctx.index as u64,
    };
    match &ctx.emu {
        Some(dev) => ssdready_emu::merge::open_engine(dev.clone(), &ctx.spec, setup.seed)
            .map(ssdready_io::AnyEngine::Dyn),
        None if ctx.spec.sched.offload => open_offload(ctx, setup.seed),
        None => open_engine(&setup),
    }
}

/// Run the calling thread where the job asks (`numa_cpu_nodes`), with its
/// memory policy (`numa_mem_policy`) and I/O priority (`prioclass`,
/// `prio`), before its engine allocates buffers — as fio does for each
/// job thread.
fn place(spec: &JobSpec) -> Result<(), EngineError> {
    use ssdready_io::placement::{node_cpus, set_mem_policy};
    if let Some(nodes) = &spec.sched.numa_cpu_nodes {
        pin(&node_cpus(nodes).map_err(|e| EngineError::Unsupported(e.to_string()))?);
    }
    if let Some(policy) = &spec.sched.numa_mem_policy {
        set_mem_policy(policy).map_err(|e| EngineError::Unsupported(e.to_string()))?;
    }
    prio::set_thread_prio(spec).map_err(EngineError::Unsupported)
}

/// `io_submit_mode=offload`: `iodepth` submitter threads, each placed as
/// the worker and with an engine of the job's kind one I/O deep.
fn open_offload(ctx: &WorkerCtx, seed: u64) -> Result<ssdready_io::AnyEngine, EngineError> {
    use ssdready_io::engines::offload::{OffloadEngine, Opener};
    let mut one = (*ctx.spec).clone();
    one.iodepth = 1;
    one.iodepth_batch_submit = 1;
    one.iodepth_batch_complete_min = 1;
    one.sched.offload = false;
    let one = Arc::new(one);
    let targets = ctx.targets.clone();
    let open: Opener = Arc::new(move |i| {
        place(&one)?;
        open_engine(&EngineSetup {
            spec: &one,
            targets: &targets,
            seed: seed.wrapping_add(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        })
    });
    let depth = ctx.spec.effective_iodepth();
    OffloadEngine::new(depth, open).map(ssdready_io::AnyEngine::dynamic)
}

impl WorkerOutcome {
    fn engine_error(&mut self, e: EngineError) {
        self.unsupported = matches!(e, EngineError::Unsupported(_));
        self.interrupted = matches!(&e, EngineError::Sys { source, .. }
            if source.kind() == std::io::ErrorKind::Interrupted);
        self.error = Some(e.to_string());
    }

    fn panic(&mut self, what: String) {
        self.panicked = true;
        self.error = Some(format!("internal error: {what}"));
    }
}

/// The job's report from its workers: the first one's plan, with the
/// events and SQPOLL threads of all.
pub fn strategy_report(workers: &[&WorkerOutcome], merged: &WorkerStats) -> Option<StrategyReport> {
    let mut r = workers.iter().find_map(|o| o.strategy.clone())?;
    r.completion_events = merged.completion_events;
    let ios = merged.total_ios();
    r.completions_per_event = if merged.completion_events > 0 {
        ios as f64 / merged.completion_events as f64
    } else {
        0.0
    };
    let threads: Vec<String> = workers
        .iter()
        .filter_map(|o| o.sq_thread.as_ref().map(|(_, n)| n.clone()))
        .collect();
    let asked = workers.iter().any(|o| o.sq_thread_asked);
    if asked {
        r.sq_thread = Some(SqThreadCpu {
            source: if threads.is_empty() {
                "no iou-sqp-TID thread was found under /proc/self/task: its CPU is not counted"
                    .into()
            } else {
                "/proc/self/task/TID/schedstat of each iou-sqp-TID thread (run time, ns), over \
                 the measured window; added to the job's system CPU (it is also in the \
                 process's getrusage figure: the thread belongs to this process)"
                    .into()
            },
            threads,
            cpu_ns: merged.sq_thread_ns,
        });
    }
    Some(r)
}
