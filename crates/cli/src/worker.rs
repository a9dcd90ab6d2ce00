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
//! Every wait ends by the job's deadline or a stop request: sleeps are cut
//! into slices of at most [`WAIT_SLICE`], and the emulator's `getevents`
//! waits at most its own slice. When time is up or a stop is asked, I/Os
//! in flight on the emulator are reaped for one more [`WAIT_SLICE`] (so
//! ordinary ones, due within microseconds, are counted as in fio) and those
//! still not due then are abandoned — the model's completion may lie
//! seconds ahead, and nothing else holds them — and reported
//! ([`abandoned_warnings`]). Kernel I/O is always waited for.

use ssdready_core::iolog::IoLog;
use ssdready_core::plan::{IoPlan, Region};
use ssdready_core::rate::Pacer;
use ssdready_core::spec::JobSpec;
use ssdready_core::stats::{batch_bucket, depth_bucket, ThreadCpu, WorkerStats};
use ssdready_core::{Completion, Ddir, IoReq};
use ssdready_io::bpf::{monotonic_ns, JoinTable};
use ssdready_io::clock::Clock;
use ssdready_io::engine::EngineSetup;
use ssdready_io::target::Target;
use ssdready_io::{open_engine, Engine, EngineError, Queued};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};

/// Counters the progress display reads; written by one worker only.
#[repr(align(128))]
#[derive(Default)]
pub struct Live {
    /// Completed I/Os per direction since start (ramp included).
    pub ios: [AtomicU64; 3],
    /// Completed bytes per direction since start.
    pub bytes: [AtomicU64; 3],
    /// Set when the worker has finished.
    pub done: AtomicBool,
    /// Set before the `opened` barrier when the engine could not be set up:
    /// then no worker of the phase starts I/O.
    pub failed: AtomicBool,
}

/// Everything a worker needs.
pub struct WorkerCtx {
    pub spec: Arc<JobSpec>,
    pub targets: Arc<Vec<Target>>,
    pub regions: Vec<Region>,
    pub index: u32,
    pub clock: Clock,
    pub stop: Arc<AtomicBool>,
    /// Set by the run when the phase must end early (another job's exitall).
    pub end_phase: Arc<AtomicBool>,
    pub live: Arc<Live>,
    /// Passed once every worker of the phase has set up its engine (or
    /// failed to); the run then sets `end_phase` if any failed.
    pub opened: Arc<Barrier>,
    /// Passed when the phase starts its I/O.
    pub start: Arc<Barrier>,
    pub cpus: Option<Vec<usize>>,
    /// The emulated device, when the target is the SSD emulator: it brings
    /// its own engine.
    pub emu: Option<Arc<ssdready_emu::engine::SharedDevice>>,
    /// The kernel's per-I/O times (`--decompose` with tp_btf): each I/O to a
    /// block device is looked up there when reaped.
    pub join: Option<Arc<JoinTable>>,
}

/// What a worker hands back.
pub struct WorkerOutcome {
    pub stats: WorkerStats,
    pub completion_mode: &'static str,
    /// Engine setup or run failure (not per-I/O errors, which are in stats).
    pub error: Option<String>,
    /// True when the error is "this cannot work here" rather than a failure.
    pub unsupported: bool,
    /// True when the error is a panic (a bug), caught in this worker.
    pub panicked: bool,
    /// 1-based number of the worker in the run (fio's job number in log names).
    pub number: u32,
    /// I/Os still in flight on the emulator when the worker stopped, dropped
    /// rather than waited for (not counted in the statistics).
    pub abandoned: u64,
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

#[derive(Clone, Copy, Default)]
struct Slot {
    issue_ns: u64,
    submit_ns: u64,
    ddir: Option<Ddir>,
    len: u32,
    /// Where the block layer will see this I/O (dev 0: not joinable).
    dev: u32,
    sector: u64,
}

fn pin(cpus: &[usize]) {
    let mut set = nix::sched::CpuSet::new();
    for &c in cpus {
        let _ = set.set(c);
    }
    let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
}

fn thread_cpu() -> ThreadCpu {
    ssdready_probe::cpu::thread_now()
}

/// The longest one sleep lasts before the stop flag is looked at again, ns.
pub const WAIT_SLICE: u64 = 20_000_000;

/// Wait until `clock` reads `until_ns`, or a stop request: sleep for the
/// bulk in slices of [`WAIT_SLICE`], spin the last 50 µs.
fn wait_until(clock: &Clock, until_ns: u64, stop: &AtomicBool) {
    loop {
        let now = clock.now();
        if now >= until_ns || stop.load(Relaxed) {
            return;
        }
        let left = until_ns - now;
        if left > 100_000 {
            std::thread::sleep(std::time::Duration::from_nanos(
                (left - 50_000).min(WAIT_SLICE),
            ));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Run one worker to completion. Always reaches both barriers, even when
/// the engine fails to open or panics, so the others are never left
/// waiting; does no I/O when any worker of the phase could not start.
pub fn run(ctx: WorkerCtx) -> WorkerOutcome {
    if let Some(c) = &ctx.cpus {
        pin(c);
    }
    let mut out = WorkerOutcome {
        stats: WorkerStats::default(),
        completion_mode: "",
        error: None,
        unsupported: false,
        panicked: false,
        number: 0,
        abandoned: 0,
    };
    let engine = match crate::panics::catching(|| open(&ctx)) {
        Ok(Ok(e)) => Some(e),
        Ok(Err(e)) => {
            // Opening: an unsupported job or a refusing machine (EPERM from
            // a disabled io_uring, EACCES on a target) is not a run failure.
            out.unsupported = crate::validate::engine_refused(&e);
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
    if let (Some(mut engine), false) = (engine, ctx.end_phase.load(Relaxed)) {
        out.completion_mode = engine.completion_mode();
        let stats = &mut out.stats;
        match crate::panics::catching(|| hot_loop(&ctx, &mut engine, stats)) {
            Ok(Ok(abandoned)) => out.abandoned = abandoned,
            Ok(Err(e)) => out.engine_error(e),
            Err(p) => {
                out.panic(p);
                ctx.end_phase.store(true, Relaxed);
            }
        }
    }
    ctx.live.done.store(true, Relaxed);
    out
}

/// The worker's engine: the emulator's, or one of `ioengine`.
fn open(ctx: &WorkerCtx) -> Result<ssdready_io::AnyEngine, EngineError> {
    if ctx.index == 0 && crate::panics::injected_in_job("open", &ctx.spec.name) {
        panic!("injected by SSDREADY_INJECT_PANIC");
    }
    let setup = EngineSetup {
        spec: &ctx.spec,
        targets: &ctx.targets,
        seed: ctx.spec.randseed ^ ctx.index as u64,
    };
    match &ctx.emu {
        Some(dev) => ssdready_emu::engine::EmuEngine::new(dev.clone(), &ctx.spec, setup.seed)
            .map(|e| ssdready_io::AnyEngine::Target(Box::new(e))),
        None => open_engine(&setup),
    }
}

impl WorkerOutcome {
    fn engine_error(&mut self, e: EngineError) {
        self.unsupported = matches!(e, EngineError::Unsupported(_));
        self.error = Some(e.to_string());
    }

    fn panic(&mut self, what: String) {
        self.panicked = true;
        self.error = Some(format!("internal error: {what}"));
    }
}

/// The loop; returns how many I/Os were abandoned in flight.
fn hot_loop<E: Engine>(
    ctx: &WorkerCtx,
    engine: &mut E,
    stats: &mut WorkerStats,
) -> Result<u64, EngineError> {
    let spec = &*ctx.spec;
    let clock = ctx.clock;
    if spec.startdelay_ns > 0 {
        wait_until(
            &clock,
            clock.now().saturating_add(spec.startdelay_ns),
            &ctx.stop,
        );
    }
    let logging = spec.write_bw_log.is_some()
        || spec.write_lat_log.is_some()
        || spec.write_iops_log.is_some();
    if logging {
        stats.log = Some(Box::new(IoLog::new(spec.log_avg_msec)));
    }
    let depth = spec.effective_iodepth() as usize;
    let batch_submit = spec.iodepth_batch_submit.max(1) as usize;
    let complete_min = (spec.iodepth_batch_complete_min as usize).max(1);
    let mut plan = IoPlan::new(spec, &ctx.regions, ctx.index);
    let mut slots = vec![Slot::default(); depth];
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut to_commit: Vec<u32> = Vec::with_capacity(depth);
    let mut comps: Vec<Completion> = Vec::with_capacity(depth * 2);
    let mut inflight = 0usize;
    let mut live_ios = [0u64; 3];
    let mut live_bytes = [0u64; 3];
    let join = ctx.join.as_deref();
    // CLOCK_MONOTONIC at the completion timestamp (read only when joining).
    let mut mono_now = 0u64;

    let start = clock.now();
    if ctx.index == 0 && crate::panics::injected_in_job("worker", &spec.name) {
        // On the emulator, while holding its lock: the other workers then
        // meet a poisoned lock, as they would after a real bug there.
        let _held = ctx.emu.as_ref().map(|d| d.device.lock());
        panic!("injected by SSDREADY_INJECT_PANIC");
    }
    let ramp_end = start.saturating_add(spec.ramp_time_ns);
    let deadline = spec.runtime_ns.map(|r| ramp_end.saturating_add(r));
    let mut measuring = spec.ramp_time_ns == 0;
    let mut measure_start = start;
    let mut cpu_start = thread_cpu();
    // fio's per-direction rate limits (rate, rate_iops).
    let mut pacer = Pacer::new(spec, start as f64);
    let paced = pacer.is_some();
    let mut issued: u64 = 0;
    let mut done_issuing = false;
    let mut abandoned = 0u64;
    // When the emulator's I/Os still in flight at the end are given up.
    let mut give_up_at: Option<u64> = None;
    // Waits end at the deadline.
    let until = |t: u64| deadline.map_or(t, |d| t.min(d));
    let past_deadline = |now: u64| deadline.is_some_and(|d| now >= d);

    // Account one finished I/O.
    macro_rules! complete {
        ($slot:expr, $res:expr, $t:expr, $sync:expr) => {{
            let s = slots[$slot as usize];
            let ddir = s.ddir.unwrap_or(Ddir::Read);
            let res: i64 = $res;
            if res < 0 {
                if measuring {
                    stats.errors += 1;
                }
                if stats.first_error.is_none() {
                    stats.first_errno = -res as i32;
                    stats.first_error = Some(format!(
                        "{} of {} bytes: {}",
                        ddir.name(),
                        s.len,
                        std::io::Error::from_raw_os_error(-res as i32)
                    ));
                }
                done_issuing = true; // fio stops a job at its first error
            } else {
                live_ios[ddir.idx()] += 1;
                live_bytes[ddir.idx()] += res as u64;
                if measuring {
                    let t: u64 = $t;
                    let sec = (t.saturating_sub(measure_start) / 1_000_000_000) as usize;
                    let d = stats.dir(ddir);
                    d.account(sec, res as u64, (res as u64) < s.len as u64);
                    let lat = t.saturating_sub(s.issue_ns);
                    d.lat.record(lat);
                    let (slat, clat) = if $sync {
                        (0, lat)
                    } else {
                        (
                            s.submit_ns.saturating_sub(s.issue_ns),
                            t.saturating_sub(s.submit_ns),
                        )
                    };
                    if $sync {
                        d.clat.record(lat);
                    } else {
                        d.slat.record(slat);
                        d.clat.record(clat);
                    }
                    if let Some(log) = &mut stats.log {
                        log.record(t.saturating_sub(start), ddir, res as u32, slat, clat, lat);
                    }
                    if let (Some(j), true) = (join, s.dev != 0) {
                        // The issue on the kernel's clock: the completion's
                        // CLOCK_MONOTONIC minus the latency.
                        let issue_mono = mono_now.saturating_sub(lat);
                        stats.io_split.get_or_insert_with(Box::default).record(
                            issue_mono,
                            mono_now,
                            j.lookup(s.dev, s.sector),
                        );
                    }
                }
            }
        }};
    }

    loop {
        let mut now = clock.now();
        if ctx.stop.load(Relaxed) || ctx.end_phase.load(Relaxed) {
            done_issuing = true;
        }
        if let Some(d) = deadline {
            if now >= d {
                done_issuing = true;
            }
        }
        if !measuring && now >= ramp_end {
            stats.clear();
            measuring = true;
            measure_start = now;
            cpu_start = thread_cpu();
        }
        // Fill the queue. Synchronous completions free their slot at once, so
        // a burst limit brings the loop back to the stop/ramp/progress checks.
        let mut burst = 0usize;
        while !done_issuing && inflight < depth && burst < depth.max(32) {
            burst += 1;
            let next_issue = match &pacer {
                Some(p) => p.next_due(&mut plan, now as f64),
                None => f64::NEG_INFINITY,
            };
            if paced && (now as f64) < next_issue {
                if inflight == 0 {
                    wait_until(&clock, until(next_issue as u64), &ctx.stop);
                    now = clock.now();
                    if ctx.stop.load(Relaxed) || past_deadline(now) {
                        done_issuing = true;
                        break;
                    }
                } else {
                    break;
                }
            }
            let Some((file, ddir, offset, len)) = plan.next_io() else {
                done_issuing = true;
                break;
            };
            let slot = free.pop().expect("a free slot while inflight < depth");
            // (0, 0): not joinable.
            let (dev, sector) = join
                .and(ctx.targets.get(file as usize))
                .and_then(|t| t.sector_map.as_ref())
                .and_then(|m| Some((m.kernel_dev, m.sector(offset)?)))
                .unwrap_or_default();
            slots[slot as usize] = Slot {
                issue_ns: now,
                submit_ns: now,
                ddir: Some(ddir),
                len,
                dev,
                sector,
            };
            issued += 1;
            if let Some(p) = &mut pacer {
                p.issued(ddir, u64::from(len));
            }
            match engine.queue(IoReq {
                slot,
                file,
                ddir,
                offset,
                len,
            })? {
                Queued::Done(res) => {
                    let t = clock.now();
                    if join.is_some() {
                        mono_now = monotonic_ns();
                    }
                    if measuring {
                        stats.depth_at_issue[0] += 1;
                    }
                    complete!(slot, res, t, true);
                    free.push(slot);
                    now = t;
                }
                Queued::Pending => {
                    inflight += 1;
                    to_commit.push(slot);
                    if to_commit.len() >= batch_submit {
                        engine.commit()?;
                        if measuring {
                            stats.submit_batches[batch_bucket(to_commit.len())] += 1;
                            // fio: a committed batch counts at the depth it brings the queue to.
                            stats.depth_at_issue[depth_bucket(inflight)] += to_commit.len() as u64;
                        }
                        now = clock.now();
                        for &s in &to_commit {
                            slots[s as usize].submit_ns = now;
                        }
                        to_commit.clear();
                    }
                }
            }
            if spec.thinktime_ns > 0 && issued.is_multiple_of(spec.thinktime_blocks as u64) {
                wait_until(
                    &clock,
                    until(now.saturating_add(spec.thinktime_ns)),
                    &ctx.stop,
                );
                now = clock.now();
            }
            if let Some(d) = deadline {
                if now >= d {
                    done_issuing = true;
                }
            }
        }
        if !to_commit.is_empty() {
            engine.commit()?;
            if measuring {
                stats.submit_batches[batch_bucket(to_commit.len())] += 1;
                // fio: a committed batch counts at the depth it brings the queue to.
                stats.depth_at_issue[depth_bucket(inflight)] += to_commit.len() as u64;
            }
            let t = clock.now();
            for &s in &to_commit {
                slots[s as usize].submit_ns = t;
            }
            to_commit.clear();
        }
        if inflight == 0 {
            if done_issuing {
                break;
            }
        } else {
            // Time is up or a stop was asked: what the emulator has not
            // completed one slice later is abandoned (below).
            if give_up_at.is_none()
                && done_issuing
                && ctx.emu.is_some()
                && (ctx.stop.load(Relaxed)
                    || ctx.end_phase.load(Relaxed)
                    || past_deadline(clock.now()))
            {
                give_up_at = Some(clock.now() + WAIT_SLICE);
            }
            // Wait when nothing more can be issued now; otherwise just peek.
            let must_wait = done_issuing || inflight >= depth || paced;
            let min = if must_wait {
                complete_min.min(inflight)
            } else {
                0
            };
            engine.getevents(min, &mut comps)?;
            if !comps.is_empty() {
                let t = clock.now();
                if let Some(j) = join {
                    mono_now = monotonic_ns();
                    for c in &comps {
                        let s = &slots[c.slot as usize];
                        j.prefetch(s.dev, s.sector);
                    }
                }
                if measuring {
                    stats.complete_batches[batch_bucket(comps.len())] += 1;
                }
                for c in comps.drain(..) {
                    complete!(c.slot, c.result, t, false);
                    free.push(c.slot);
                    inflight -= 1;
                }
            }
            if inflight > 0 && give_up_at.is_some_and(|g| clock.now() >= g) {
                abandoned = inflight as u64;
                break;
            }
        }
        for d in 0..3 {
            ctx.live.ios[d].store(live_ios[d], Relaxed);
            ctx.live.bytes[d].store(live_bytes[d], Relaxed);
        }
    }
    stats.measured_ns = if measuring {
        clock.now().saturating_sub(measure_start)
    } else {
        0
    };
    if measuring {
        let c = thread_cpu();
        stats.thread_cpu = ThreadCpu {
            user_ns: c.user_ns.saturating_sub(cpu_start.user_ns),
            sys_ns: c.sys_ns.saturating_sub(cpu_start.sys_ns),
            ctx: c.ctx.saturating_sub(cpu_start.ctx),
        };
    }
    Ok(abandoned)
}
