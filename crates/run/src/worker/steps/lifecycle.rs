//! The loop's life: the job's start (its delay, the jobs it waits for,
//! its flow share), the [`Loop`] made from the job's resolved
//! configuration, driven to the end, and its measurement closed.

use super::{sq_run_ns, thread_cpu, Loop, Slot, StrategyParts};
use crate::worker::access::Access;
use crate::worker::complete::Waiter;
use crate::worker::contents::WriteBuffers;
use crate::worker::ctx::WorkerCtx;
use crate::worker::lattarget::LatSearch;
use crate::worker::prio::Prios;
use crate::worker::tokens::FlowToken;
use crate::worker::wait::{wait_until, Pacing};
use crate::worker::{files, verify};
use ssdready_core::stats::{ThreadCpu, WorkerStats};
use ssdready_io::{Engine, EngineError};
use ssdready_workload::jobflow::{FlowIo, JobFlow};
use std::sync::atomic::Ordering::Relaxed;

/// Run the loop to the end of the job; returns how many I/Os were abandoned
/// in flight.
pub(in crate::worker) fn hot_loop(
    ctx: &WorkerCtx,
    engine: &mut ssdready_io::AnyEngine,
    stats: &mut WorkerStats,
    strategy: StrategyParts,
) -> Result<u64, EngineError> {
    // fio starts a job once its start delay is over and the job it waits
    // for (wait_for) has ended, whichever is later.
    let cfg = &ctx.job.run_loop;
    let until = ctx.clock.now().saturating_add(cfg.startdelay_ns);
    for waitee in &ctx.waitees {
        while !waitee.done.load(Relaxed) && !ctx.stop.load(Relaxed) && !ctx.end_phase.load(Relaxed)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    if cfg.startdelay_ns > 0 {
        wait_until(&ctx.clock, until, &ctx.stop);
    }
    let tokens = ctx
        .flow
        .clone()
        .map(|f| FlowToken::join(f, cfg.flow_weight, cfg.flow_sleep_us));
    let mut flow = JobFlow::new(&ctx.job.flow, &ctx.regions, ctx.index);
    if cfg.state_load {
        flow = flow.with_state(verify::load_state(&ctx.spec.name, ctx.number)?);
    }
    let flow = crate::worker::replay::attach(ctx, flow)?;
    if cfg.create_only {
        // fio's create_only: the files are laid out; the job ends there.
        return Ok(0);
    }
    let mut w = Loop::new(ctx, stats, flow, strategy);
    w.tokens = tokens;
    w.fake_io = engine.fake_io();
    if let Some(f) = &w.filler {
        f.prefill(engine, w.depth);
    }
    let abandoned = w.drive_any(engine);
    w.close_series();
    w.flow.settle(); // the I/Os of the plan's last run counted
    let abandoned = abandoned?;
    if w.flow.final_fsync() {
        files::fsync_all(ctx)?;
    }
    if cfg.state_save {
        verify::save_state(&w.flow, &ctx.spec.name, ctx.number);
    }
    if let Some(v) = w.stats.verify.as_deref_mut() {
        v.skipped_by_state = w.flow.skipped_by_state();
    }
    if w.measuring {
        verify::count_dry_run(&mut w.flow, w.stats);
    }
    let merge_stats = engine.take_merge_stats().filter(|_| w.measuring);
    let replayed = crate::worker::replay::finish(ctx, &mut w.flow, w.stats);
    w.finish();
    stats.temporal_merge = merge_stats.map(Box::new);
    replayed.map(|_| abandoned)
}

/// A slot's special request before it has one.
const NO_SPECIAL: FlowIo = FlowIo::Sync {
    file: 0,
    data_only: false,
};

/// SSDREADY_INJECT_PANIC=worker: the job's first worker panics, on the
/// emulator while holding its lock (the other workers then meet a
/// poisoned lock, as they would after a real bug there).
fn inject_panic(ctx: &WorkerCtx) {
    if ctx.index == 0 && crate::panics::injected_in_job("worker", &ctx.spec.name) {
        let _held = ctx.emu.as_ref().map(|d| d.device.write());
        panic!("injected by SSDREADY_INJECT_PANIC");
    }
}

impl<'a> Loop<'a> {
    pub(super) fn new(
        ctx: &'a WorkerCtx,
        stats: &'a mut WorkerStats,
        flow: JobFlow,
        strategy: StrategyParts,
    ) -> Self {
        let cfg = &ctx.job.run_loop;
        stats.log = crate::logs::worker_log(&ctx.job.logs).map(Box::new);
        if cfg.verifies {
            // A verifying job reports its verification, even of nothing.
            stats.verify.get_or_insert_with(Box::default);
        }
        let depth = cfg.depth.get() as usize;
        let start = ctx.clock.now();
        inject_panic(ctx);
        let ramp_end = start.saturating_add(cfg.ramp_time_ns);
        let pacing = Pacing::new(cfg, start);
        let open_loop = crate::worker::arrivals::OpenLoop::new(cfg, depth, pacing.paced(), stats);
        Loop {
            ctx,
            stats,
            join: ctx.join.as_deref(),
            flow,
            draining: false,
            special: vec![NO_SPECIAL; depth],
            offsets: vec![0; depth],
            kernel: match ctx.join {
                Some(_) => vec![(0, 0); depth],
                None => Vec::new(),
            },
            depth,
            refill_at: cfg.refill_at as usize,
            holding: false,
            batch_submit: cfg.batch_submit as usize,
            complete_min: cfg.complete_min as usize,
            complete_max: cfg.complete_max as usize,
            waiter: Waiter::new(strategy.wait),
            slots: vec![Slot::default(); depth],
            free: (0..depth as u32).rev().collect(),
            to_commit: Vec::with_capacity(depth),
            comps: Vec::with_capacity(depth * 2),
            inflight: 0,
            unmeasured_ios: [0; 3],
            unmeasured_bytes: [0; 3],
            mono_now: 0,
            start,
            ramp_end,
            deadline: cfg.runtime_ns.map(|r| ramp_end.saturating_add(r)),
            measuring: cfg.ramp_time_ns == 0,
            measure_start: start,
            sec: 0,
            sec_end: start.saturating_add(1_000_000_000),
            cpu_start: thread_cpu(),
            sq_thread: strategy.sq_thread.map(|t| (t, sq_run_ns(t))),
            pacing,
            open_loop,
            filler: WriteBuffers::new(cfg.before_write, super::sched::filler(ctx)),
            prio: cfg
                .prios
                .as_ref()
                .map(|p| Prios::new(p, cfg.randseed ^ u64::from(ctx.number))),
            lat: cfg
                .latency
                .map(|t| Box::new(LatSearch::new(t, depth as u32, start))),
            // latency_target's search starts at depth 1.
            depth_cap: if cfg.latency.is_some() { 1 } else { depth },
            done_issuing: false,
            give_up_at: None,
            tokens: None,
            min_rate: cfg.has_min_rate.then_some([None; 3]),
            fake_io: false,
            op_lat: None,
            zbd: ctx.zbd.clone(),
            access: Access::new(cfg, ctx.targets.len()),
            locks: ctx.file_locks.clone(),
        }
    }

    /// The per-second series' last second closed (nothing more is counted).
    pub(super) fn close_series(&mut self) {
        if self.measuring {
            self.stats.close_series(self.sec);
        }
    }

    /// The measured time and the thread's CPU time over it.
    pub(super) fn finish(self) {
        self.stats.zone_resets = self.zbd.as_ref().map(|z| z.job.resets);
        self.stats.overlaps_waited = self.access.as_ref().and_then(|a| a.overlaps_waited());
        if !self.measuring {
            self.stats.measured_ns = 0;
            return;
        }
        // The window ends at the deadline: nothing is issued after it (what
        // completes in the drain is counted), so a job asked to run 10 s
        // reports 10 s, as fio does, however late a loaded machine let the
        // thread see its deadline.
        let end = self.ctx.clock.now();
        let end = self.deadline.map_or(end, |d| end.min(d));
        self.stats.measured_ns = end.saturating_sub(self.measure_start);
        if let Some(log) = &mut self.stats.log {
            log.set_end(end.saturating_sub(self.start));
        }
        let c = thread_cpu();
        self.stats.thread_cpu = ThreadCpu {
            user_ns: c.user_ns.saturating_sub(self.cpu_start.user_ns),
            sys_ns: c.sys_ns.saturating_sub(self.cpu_start.sys_ns),
            ctx: c.ctx.saturating_sub(self.cpu_start.ctx),
            wait_ns: c.wait_ns.saturating_sub(self.cpu_start.wait_ns),
        };
        if let Some((tid, at)) = self.sq_thread {
            self.stats.sq_thread_ns = sq_run_ns(tid).saturating_sub(at);
        }
    }
}
