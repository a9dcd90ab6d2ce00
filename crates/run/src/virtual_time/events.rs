//! The loop of virtual time: each worker's slots, depth, pacing, ramp and
//! deadline, and the event queue of completions, wake-ups and the host
//! path's events, taken in time order. What a worker does next is its
//! [`JobFlow`]'s, as in the real worker loop: passes and budgets (`size`,
//! `io_size`, `loops`, `number_ios`), the drains between passes, think
//! time (a wake-up after the pause), verification reads (issued and
//! timed; the model keeps no data to check) and `read_iolog`'s and
//! `write_iolog`'s traces (`iolog`). Syncs, cache drops and new
//! passes take no time on the model. fio's steady-state check samples the
//! workers' counters at every simulated second, as a real run's loop does
//! at every second of its clock ([`crate::steadystate`]); a unit whose
//! criterion holds ends its workers there, as their runtime would.

use super::outcome::{SimError, SimOutcome, MAX_SERIES_SECONDS, STALL_EVENTS, STOP_POLL_EVENTS};
use super::refusals::no_time;
use super::region::clone_region;
use crate::steadystate::{self, Counts, Unit};
use ssdready_core::arrivals::ScheduleStats;
use ssdready_core::resolved::ResolvedJob;
use ssdready_core::spec::{JobSpec, TemporalMerge};
use ssdready_core::stats::WorkerStats;
use ssdready_core::Ddir;
use ssdready_emu::device::{Device, Extent};
use ssdready_emu::merge::virtual_time::{Out, Request, VirtualHost};
use ssdready_emu::merge::{MergeConfig, Served};
use ssdready_emu::shared::op_of;
use ssdready_workload::jobflow::{FlowIo, JobFlow, Step};
use ssdready_workload::rate::Pacer;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const WAKE: u32 = u32::MAX;
/// The "worker" of the host path's events (merge windows, dispatches).
const HOST_EVENT: u32 = u32::MAX;

#[derive(Clone, Copy, Default)]
struct Slot {
    issue: u64,
    /// `lat_from=schedule`: the I/O's intended issue time.
    intended: u64,
    ddir: Option<Ddir>,
    len: u32,
    /// The request, for its flow when it completes.
    io: Option<FlowIo>,
}

struct Worker {
    job: usize,
    /// Its clone number in the job.
    clone: u32,
    /// The merge layer its requests go to.
    layer: Option<usize>,
    /// What it does next (fio's job flow over the job's plan).
    flow: JobFlow,
    depth: usize,
    inflight: usize,
    done: bool,
    slots: Vec<Slot>,
    free: Vec<u32>,
    stats: WorkerStats,
    /// fio's rate limits, per direction.
    pacer: Option<Pacer>,
    next_issue: f64,
    ramp_end: u64,
    deadline: Option<u64>,
    /// Whether it stopped at the deadline (not at the end of its I/O).
    hit_deadline: bool,
    measuring: bool,
    last_completion: u64,
    /// `lat_from=schedule` on a paced job ([`ssdready_core::arrivals`]).
    open_loop: bool,
    /// The time of the latest wake-up asked for (one per due time: every
    /// completion of a paced worker looks again, and a wake-up pushed for
    /// each would pile up).
    wake_at: u64,
    /// Completed I/Os and bytes since its start (ramp included), for the
    /// steady-state samples.
    ios: u64,
    bytes: u64,
    /// Where its sample logs' times count from: its start, after
    /// `startdelay`, as a real worker's.
    log_start: u64,
}

/// The event queue: (time, worker, slot); a worker's [`WAKE`] or the
/// [`HOST_EVENT`] worker's events.
type Events = BinaryHeap<Reverse<(u64, u32, u32)>>;

/// A simulation between two events.
pub(super) struct Sim<'a> {
    dev: &'a mut Device,
    jobs: &'a [JobSpec],
    host: VirtualHost,
    ws: Vec<Worker>,
    heap: Events,
    /// What the host path produced since the last flush.
    out: Out,
    /// How each request in flight was merged, per worker and slot.
    served: Vec<Vec<Option<Served>>>,
    free_blocks: Vec<u64>,
    next_sample: u64,
    end_ns: u64,
    /// Directions whose I/Os completed at the instant they were issued.
    instant: [bool; 3],
    /// fio's steady-state units, and when they are next sampled
    /// (`u64::MAX`: no more).
    steady: Vec<Unit>,
    next_steady: u64,
}

fn model(e: ssdready_emu::ftl::FtlError) -> SimError {
    SimError::Model(e.to_string())
}

/// Worker `w` of job `ji` (resolved as `job`), starting at `t0`.
fn worker(
    spec: &JobSpec,
    job: &ResolvedJob,
    ji: usize,
    w: u32,
    t0: u64,
    cap: u64,
    layer: Option<usize>,
) -> Result<Worker, SimError> {
    let r = clone_region(spec, w, cap).map_err(SimError::Refused)?;
    let cfg = &job.run_loop;
    // A job on the emulator keeps its iodepth whatever its engine (the
    // device brings its queues; the loop's own depth is 1 for a
    // synchronous engine); a short-term merge layer in front of it takes
    // one at a time.
    let depth = match spec.temporal_merge {
        TemporalMerge::Stm => 1,
        _ => spec.iodepth.max(1) as usize,
    };
    let start = t0.saturating_add(cfg.startdelay_ns);
    let ramp_end = start.saturating_add(cfg.ramp_time_ns);
    let pacer = cfg.rate.as_ref().map(|r| Pacer::new(r, start as f64));
    let open_loop = cfg.lat_from_schedule && pacer.is_some();
    let mut stats = WorkerStats {
        log: crate::logs::worker_log(&job.logs).map(Box::new),
        ..WorkerStats::default()
    };
    if open_loop {
        // Virtual time issues on time exactly: any lateness is late.
        stats.schedule = Some(Box::new(ScheduleStats::new(0)));
    }
    Ok(Worker {
        job: ji,
        clone: w,
        layer,
        flow: super::iolog::attach(spec, w, JobFlow::new(&job.flow, &[r], w))?,
        depth,
        inflight: 0,
        done: false,
        slots: vec![Slot::default(); depth],
        free: (0..depth as u32).rev().collect(),
        stats,
        pacer,
        next_issue: start as f64,
        ramp_end,
        deadline: cfg.runtime_ns.map(|rt| ramp_end.saturating_add(rt)),
        hit_deadline: false,
        measuring: ramp_end == 0,
        last_completion: 0,
        open_loop,
        wake_at: u64::MAX,
        ios: 0,
        bytes: 0,
        log_start: start,
    })
}

impl<'a> Sim<'a> {
    /// The simulation of `jobs` (in reporting groups `groups`) on `dev`.
    pub(super) fn new(
        dev: &'a mut Device,
        jobs: &'a [JobSpec],
        groups: &[u32],
    ) -> Result<Self, SimError> {
        let cap = dev.capacity();
        let t0 = dev.now;
        let mut host = VirtualHost::new(&dev.p);
        let layers = merge_layers(&mut host, jobs);
        let mut ws = Vec::new();
        for (ji, spec) in jobs.iter().enumerate() {
            let job = ResolvedJob::new(spec);
            for w in 0..spec.numjobs {
                ws.push(worker(spec, &job, ji, w, t0, cap, layers[ji])?);
            }
        }
        let served = ws.iter().map(|w| vec![None; w.depth]).collect();
        let specs: Vec<&JobSpec> = jobs.iter().collect();
        let worker_jobs: Vec<usize> = ws.iter().map(|w| w.job).collect();
        let steady = steadystate::units(&worker_jobs, &specs, groups, t0);
        let next_steady = first_steady_sample(&steady, t0);
        Ok(Sim {
            dev,
            jobs,
            host,
            ws,
            heap: BinaryHeap::new(),
            out: Out::default(),
            served,
            free_blocks: Vec::new(),
            next_sample: t0 + 1_000_000_000u64,
            end_ns: t0,
            instant: [false; 3],
            steady,
            next_steady,
        })
    }

    /// Every worker issues what it may at the device's current time.
    pub(super) fn start(&mut self) -> Result<(), SimError> {
        let t0 = self.dev.now;
        for wi in 0..self.ws.len() {
            self.issue(wi as u32, t0)?;
        }
        Ok(())
    }

    /// Worker `wi` issues at `t` what its depth, pacing and plan allow,
    /// each I/O `host_ns` after the one before; then [`Sim::flush`].
    fn issue(&mut self, wi: u32, t: u64) -> Result<(), SimError> {
        let host_ns = self.dev.p.host_ns;
        let w = &mut self.ws[wi as usize];
        let mut cursor = t;
        let mut intended = t;
        while !w.done && w.inflight < w.depth {
            if w.deadline.is_some_and(|d| cursor >= d) {
                w.done = true;
                w.hit_deadline = true;
                break;
            }
            if let Some(p) = &w.pacer {
                let due = p
                    .next_due(w.flow.plan_mut(), cursor as f64)
                    .max(w.next_issue);
                if (cursor as f64) < due {
                    let at = due.ceil() as u64;
                    if w.wake_at != at {
                        self.heap.push(Reverse((at, wi, WAKE)));
                        w.wake_at = at;
                    }
                    break;
                }
                intended = (due.ceil() as u64).min(cursor);
            } else if (cursor as f64) < w.next_issue {
                cursor = w.next_issue as u64; // startdelay
            }
            let Some((io, ddir, offset, len)) = next_rw(w, wi, cursor, &mut self.heap) else {
                break;
            };
            if let Some(p) = &mut w.pacer {
                p.issued(ddir, u64::from(len));
            }
            let late = cursor - intended;
            cursor = cursor.saturating_add(host_ns);
            let Some(slot) = w.free.pop() else {
                return Err(SimError::Model(
                    "emulator simulation: no free slot below the queue depth (a bug)".into(),
                ));
            };
            w.slots[slot as usize] = Slot {
                issue: cursor,
                intended: cursor - host_ns - late,
                ddir: Some(ddir),
                len,
                io: Some(io),
            };
            w.inflight += 1;
            let req = Request {
                worker: wi,
                slot,
                op: op_of(ddir),
                ext: Extent {
                    offset,
                    len: len as u64,
                },
                at: cursor,
            };
            match w.layer {
                None => self.host.direct(self.dev, req, &mut self.out),
                Some(l) => self.host.merged(self.dev, l, req, &mut self.out),
            }
            .map_err(model)?;
        }
        self.flush();
        Ok(())
    }

    /// Hand what the host path produced to the event queue. Latency spikes
    /// (`fault_spike_rate`) delay a command's completion.
    fn flush(&mut self) {
        for s in self.out.seen.drain(..) {
            if s.served.is_some() {
                self.served[s.worker as usize][s.slot as usize] = s.served;
            }
            let at = s.at.saturating_add(self.dev.faults.next_spike());
            self.heap.push(Reverse((at, s.worker, s.slot)));
        }
        for (t, ev) in self.out.events.drain(..) {
            self.heap.push(Reverse((t, HOST_EVENT, ev)));
        }
    }

    /// Take events in time order until none is left (or `stop`), refusing
    /// a run whose virtual time stops advancing.
    pub(super) fn run(&mut self, stop: &dyn Fn() -> bool) -> Result<(), SimError> {
        let slots: u64 = self.ws.iter().map(|w| w.depth as u64 + 1).sum();
        let stall_limit = STALL_EVENTS.max(slots.saturating_mul(4));
        let mut same_instant = 0u64;
        let mut last_t = None;
        let mut n = 0u64;
        while let Some(Reverse((t, wi, slot))) = self.heap.pop() {
            n += 1;
            if n.is_multiple_of(STOP_POLL_EVENTS) && stop() {
                break;
            }
            if last_t == Some(t) {
                same_instant += 1;
                if same_instant > stall_limit {
                    return Err(SimError::Refused(no_time(
                        &self.dev.p,
                        &format!("virtual time stopped advancing at {t} ns: more than {stall_limit} I/Os in a row completed at that instant"),
                        self.instant,
                    )));
                }
            } else {
                last_t = Some(t);
                same_instant = 0;
            }
            self.sample(t);
            self.sample_steady(t);
            if wi == HOST_EVENT {
                self.host
                    .event(self.dev, t, slot, &mut self.out)
                    .map_err(model)?;
                self.flush();
                continue;
            }
            if slot != WAKE {
                self.complete(wi, slot, t);
            }
            self.issue(wi, t)?;
        }
        Ok(())
    }

    /// The free-blocks series: every second passed since the last sample
    /// (a startdelay can jump days ahead at once), up to the cap.
    fn sample(&mut self, t: u64) {
        if t < self.next_sample {
            return;
        }
        let seconds = (t - self.next_sample) / 1_000_000_000 + 1;
        let room = (MAX_SERIES_SECONDS as usize).saturating_sub(self.free_blocks.len());
        let fill = seconds.min(room as u64) as usize;
        let free = self.dev.free_blocks();
        self.free_blocks.resize(self.free_blocks.len() + fill, free);
        self.next_sample = self
            .next_sample
            .saturating_add(seconds.saturating_mul(1_000_000_000));
    }

    /// fio's steady-state samples at every simulated second up to `t` (the
    /// counters stand still between events); the workers of a unit whose
    /// criterion holds end at that second, as at their runtime.
    fn sample_steady(&mut self, t: u64) {
        while self.next_steady <= t {
            let at = self.next_steady;
            let ws = &self.ws;
            let counts = |w: usize| Counts {
                ios: ws[w].ios,
                bytes: ws[w].bytes,
                done: ws[w].done && ws[w].inflight == 0,
            };
            let mut ended = Vec::new();
            steadystate::sample_counts(&mut self.steady, at, counts, |w| {
                ended.extend_from_slice(w)
            });
            for w in ended {
                let w = &mut self.ws[w];
                w.deadline = Some(w.deadline.map_or(at, |d| d.min(at)));
            }
            let idle = |w: usize| self.ws[w].done && self.ws[w].inflight == 0;
            self.next_steady = match steadystate::all_settled(&self.steady, idle) {
                true => u64::MAX,
                false => at.saturating_add(1_000_000_000),
            };
        }
    }

    /// Worker `wi`'s I/O in `slot` completed at `t`: its latencies are
    /// recorded once the worker's ramp has passed.
    fn complete(&mut self, wi: u32, slot: u32, t: u64) {
        let host_ns = self.dev.p.host_ns;
        let w = &mut self.ws[wi as usize];
        let s = w.slots[slot as usize];
        w.inflight -= 1;
        w.free.push(slot);
        if !w.measuring && t >= w.ramp_end {
            w.stats.clear();
            w.measuring = true;
        }
        let ddir = s.ddir.unwrap_or(Ddir::Read);
        w.ios += 1;
        w.bytes += u64::from(s.len);
        if let Some(io) = &s.io {
            w.flow.completed(io, true);
        }
        self.instant[ddir.idx()] |= t == s.issue;
        if w.measuring {
            let sec = ((t - w.ramp_end) / 1_000_000_000) as usize;
            let d = w.stats.dir(ddir);
            d.account(sec, s.len as u64, false);
            let lat = t - s.issue;
            let total = match w.stats.schedule.as_deref_mut().filter(|_| w.open_loop) {
                Some(sch) => sch.record(ddir, s.intended, s.issue - host_ns, t),
                None => lat,
            };
            let d = w.stats.dir(ddir);
            d.record_lat(sec, total);
            d.clat.record(lat);
            if let (Some(log), Some(FlowIo::Rw { offset, .. })) = (&mut w.stats.log, &s.io) {
                let since = t.saturating_sub(w.log_start);
                log.record_prio(since, ddir, s.len, *offset, [0, lat, total], 0);
            }
            if let Some(m) = self.served[wi as usize][slot as usize].take() {
                m.record(w.stats.temporal_merge.get_or_insert_with(Box::default));
            }
        }
        w.last_completion = t;
        self.end_ns = self.end_ns.max(t);
    }

    /// Each job's workers' statistics, their windows set.
    pub(super) fn finish(mut self) -> Result<SimOutcome, SimError> {
        let mut per_job: Vec<Vec<WorkerStats>> = (0..self.jobs.len()).map(|_| Vec::new()).collect();
        for mut w in std::mem::take(&mut self.ws) {
            // A job that ended with its I/O before its runtime (`runtime`
            // without `time_based`) took only the time its I/Os took.
            w.stats.measured_ns = match w.deadline.filter(|_| w.hit_deadline) {
                // Stopped by the runtime: the runtime, plus the drain of the
                // commands in flight at its end (they are counted), as in a
                // real run.
                Some(d) => d.max(w.last_completion).saturating_sub(w.ramp_end),
                None => w.last_completion.saturating_sub(w.ramp_end),
            };
            // The job's end, as a real worker's: its runtime, or its last
            // completion when its I/O ran out first.
            if let Some(log) = &mut w.stats.log {
                let end = w
                    .deadline
                    .filter(|_| w.hit_deadline)
                    .unwrap_or(w.last_completion);
                log.set_end(end.saturating_sub(w.log_start));
            }
            let ios = w.stats.total_ios();
            if ios > 0 && w.stats.measured_ns == 0 {
                return Err(SimError::Refused(no_time(
                    &self.dev.p,
                    &format!(
                        "job '{}': its {ios} I/Os took no simulated time, so it has no rate",
                        self.jobs[w.job].name
                    ),
                    self.instant,
                )));
            }
            super::iolog::finish(&self.jobs[w.job], w.clone, &mut w.flow, &mut w.stats)?;
            per_job[w.job].push(w.stats);
        }
        self.free_blocks.push(self.dev.free_blocks());
        Ok(SimOutcome {
            steadystate: steadystate::reports(&self.steady, self.jobs.len()),
            workers: per_job,
            free_blocks: self.free_blocks,
            end_ns: self.end_ns,
        })
    }
}

/// The first simulated second worth sampling for steady state: one second
/// after the start, or the last whole second (from the start) before the
/// earliest unit's samples count: earlier samples would only be forgotten.
fn first_steady_sample(units: &[Unit], t0: u64) -> u64 {
    const S: u64 = 1_000_000_000;
    match steadystate::first_counted(units) {
        None => u64::MAX,
        Some(from) => t0.saturating_add((from.saturating_sub(t0) / S).max(1).saturating_mul(S)),
    }
}

/// Worker `w`'s next read, write or trim at `cursor` as its flow gives it
/// (the request, direction, offset, length); None when it is to wait: for
/// its requests in flight to drain, for the end of a think time (a wake-up
/// is asked for), or for good (its work is done).
fn next_rw(
    w: &mut Worker,
    wi: u32,
    cursor: u64,
    heap: &mut Events,
) -> Option<(FlowIo, Ddir, u64, u32)> {
    loop {
        match w.flow.next(w.inflight, cursor) {
            Step::Io(
                io @ FlowIo::Rw {
                    ddir, offset, len, ..
                },
            ) => return Some((io, ddir, offset, len)),
            // A sync takes no time on the model: done as it is issued.
            Step::Io(sync) => w.flow.completed(&sync, true),
            Step::Drain => return None,
            Step::Think { spin_ns, sleep_ns } => {
                let at = cursor.saturating_add(spin_ns).saturating_add(sleep_ns);
                if w.wake_at != at {
                    heap.push(Reverse((at, wi, WAKE)));
                    w.wake_at = at;
                }
                return None;
            }
            Step::Done => {
                w.done = true;
                return None;
            }
            // No page cache and no files on the model.
            Step::DropCache(_)
            | Step::FsyncFiles
            | Step::SettleForVerify
            | Step::NewLoop { .. } => {}
        }
    }
}

/// The merge layer of each job (one per setting, shared by the jobs that
/// use it; STM counts their workers as its members).
fn merge_layers(host: &mut VirtualHost, jobs: &[JobSpec]) -> Vec<Option<usize>> {
    let mut made: Vec<(MergeConfig, usize)> = Vec::new();
    jobs.iter()
        .map(|spec| {
            let cfg = MergeConfig::of(spec)?;
            if let Some((_, l)) = made.iter().find(|(c, _)| *c == cfg) {
                return Some(*l);
            }
            let members: u32 = jobs
                .iter()
                .filter(|j| MergeConfig::of(j) == Some(cfg))
                .map(|j| j.numjobs)
                .sum();
            let l = host.add_layer(cfg, members as usize);
            made.push((cfg, l));
            Some(l)
        })
        .collect()
}
