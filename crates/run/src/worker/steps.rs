//! The worker's loop as named steps over one state, [`Loop`]:
//!
//! * [`Loop::check_phase`]: a stop request, another job's `exitall` or the
//!   deadline end issuing; the end of `ramp_time` starts measuring.
//! * [`Loop::issue`]: fill the queue up to iodepth, waiting for the rate
//!   limit and think time; each request goes to the engine
//!   ([`Loop::issue_one`]), and every `iodepth_batch_submit` of them are
//!   handed to the kernel at once ([`Loop::commit`]).
//! * [`Loop::reap`]: collect completions, waiting for at least
//!   `iodepth_batch_complete_min` when nothing more can be issued, the way
//!   the job's completion strategy says ([`super::complete`]), and taking
//!   at most `iodepth_batch_complete_max` per reap (the rest wait for the
//!   next); give up the emulator's I/Os that are not due one
//!   [`WAIT_SLICE`] after the end.
//! * [`Loop::account`]: one finished I/O into the statistics (latencies,
//!   bytes, per-second samples, logs, the kernel's split of its time).
//! * [`Loop::publish_live`]: the progress display's counters.
//!
//! The loop's life (its start, [`Loop`] made from the job's resolved
//! configuration, its end) is in `lifecycle`; what it does between I/Os
//! (rate, flow share, think time, overlaps, the flow's other steps) in
//! `pauses`; its limits in `limits`; accounting in `account`.

mod account;
mod features;
pub(super) mod lifecycle;
mod limits;
mod pauses;
mod plain;

use super::access::{Access, FileLocks};
use super::complete::{Wait, Waiter};
use super::contents::WriteBuffers;
use super::ctx::WorkerCtx;
use super::lattarget::LatSearch;
use super::prio::Prios;
use super::tokens::FlowToken;
use super::verify;
use super::wait::{Pacing, WAIT_SLICE};
use crate::zbd::{Placed, WorkerZbd};
use features::Features;
use ssdready_core::stats::{batch_bucket, depth_bucket, ThreadCpu, WorkerStats};
use ssdready_core::{Completion, Ddir, IoReq};
use ssdready_io::bpf::{monotonic_ns, JoinTable};
use ssdready_io::{Engine, EngineError, Queued};
use ssdready_workload::jobflow::{FlowIo, JobFlow, Step, Tag};
use std::sync::atomic::Ordering::Relaxed;

mod sched;

/// What the worker remembers about one I/O in flight (32 bytes, four
/// words to copy; what only some jobs need is in side tables:
/// `Loop::special`, `Loop::kernel`, `Loop::offsets`).
#[derive(Clone, Copy)]
struct Slot {
    issue_ns: u64,
    submit_ns: u64,
    /// A read's, write's or trim's direction (a sync's is not used).
    ddir: Ddir,
    len: u32,
    /// A sync (fsync, fdatasync, sync_file_range): no direction, no range.
    sync: bool,
    /// A sync, or a read or write with verification: the request is in
    /// `Loop::special` (kept apart so the common slot stays small).
    special: bool,
    /// Submitted and not yet reaped.
    in_flight: bool,
    /// The index of its I/O priority ([`Prios`]; 0: the thread's).
    prio: u8,
    /// Its file (the target index).
    file: u32,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            issue_ns: 0,
            submit_ns: 0,
            ddir: Ddir::Read,
            len: 0,
            sync: false,
            special: false,
            in_flight: false,
            prio: 0,
            file: 0,
        }
    }
}

fn thread_cpu() -> ThreadCpu {
    ssdready_probe::cpu::thread_now()
}

/// What the loop needs to know of the job's strategy.
pub(super) struct StrategyParts {
    /// How to wait for completions.
    pub wait: Wait,
    /// The worker's SQPOLL kernel thread, whose CPU time is counted.
    pub sq_thread: Option<u32>,
}

/// The loop's state between steps.
struct Loop<'a> {
    ctx: &'a WorkerCtx,
    stats: &'a mut WorkerStats,
    join: Option<&'a JoinTable>,
    flow: JobFlow,
    /// The flow asked to let the queue empty before it goes on.
    draining: bool,
    /// Per slot, the request of a `special` slot.
    special: Vec<FlowIo>,
    /// Per slot, its I/O's offset in its file; written only on the full
    /// path (logs, `max_latency`'s message, `serialize_overlap`,
    /// `sync_file_range`).
    offsets: Vec<u64>,
    /// Per slot, where the block layer will see its I/O (device 0: not
    /// joinable); written only when the kernel's times are joined.
    kernel: Vec<(u32, u64)>,
    depth: usize,
    /// `iodepth_low`: a full queue drains to this depth before refilling.
    refill_at: usize,
    /// Draining to `refill_at`.
    holding: bool,
    batch_submit: usize,
    complete_min: usize,
    complete_max: usize,
    waiter: Waiter,
    slots: Vec<Slot>,
    /// The slots not in flight, as a stack: `free[..depth - inflight]`
    /// (its height is the number of free slots, so it keeps no length of
    /// its own; allocated once).
    free: Box<[u32]>,
    /// Queued, not yet committed.
    to_commit: Vec<u32>,
    /// Reaped, not yet accounted (kept to reuse its allocation).
    comps: Vec<Completion>,
    inflight: usize,
    /// I/Os and bytes completed outside the stats (the ramp, a window of
    /// `latency_target` cleared), per direction: with the stats', what the
    /// job has done ([`Loop::live`]).
    unmeasured_ios: [u64; 3],
    unmeasured_bytes: [u64; 3],
    /// CLOCK_MONOTONIC at the completion timestamp (read only when joining).
    mono_now: u64,
    start: u64,
    ramp_end: u64,
    deadline: Option<u64>,
    measuring: bool,
    measure_start: u64,
    /// The second of the measured window the last completion fell in, and
    /// when it ends ([`Loop::second`]).
    sec: usize,
    sec_end: u64,
    cpu_start: ThreadCpu,
    /// The SQPOLL thread and its run time when measuring started.
    sq_thread: Option<(u32, u64)>,
    pacing: Pacing,
    /// `lat_from=schedule`: each slot's intended issue time.
    open_loop: Option<Box<super::arrivals::OpenLoop>>,
    done_issuing: bool,
    /// When the emulator's I/Os still in flight at the end are given up.
    give_up_at: Option<u64>,
    /// The job's place in its `flow_id` (fio's flow control).
    tokens: Option<FlowToken>,
    /// `rate_min` / `rate_iops_min`: per direction, the bytes, I/Os and
    /// time of the last check (None: not checked yet).
    min_rate: Option<[Option<(u64, u64, u64)>; 3]>,
    /// The engine's I/Os are fake (fio's file-operation engines): counted
    /// without latency; the file operation's time is the sample.
    fake_io: bool,
    /// The file operation's time the last fake I/O brought, not yet counted.
    op_lat: Option<u64>,
    /// What write buffers hold (refilled or scrambled before each write);
    /// None: they keep the random bytes filled once.
    filler: Option<WriteBuffers>,
    /// zonemode=zbd: where the zones put each I/O.
    zbd: Option<WorkerZbd>,
    /// I/O priorities, when the job sets any (fio's cmdprio, prio).
    prio: Option<Box<Prios>>,
    /// `latency_target`'s search for a queue depth.
    lat: Option<Box<LatSearch>>,
    /// The most I/Os in flight now: `depth`, or the search's depth (0
    /// while the queue empties after a ramp down).
    depth_cap: usize,
    /// `serialize_overlap`, `sync_file_range` ([`super::access`]).
    access: Option<Box<Access>>,
    /// `lockfile`.
    locks: Option<std::sync::Arc<FileLocks>>,
}

impl<'a> Loop<'a> {
    /// `t` capped at the deadline: waits end there.
    #[inline]
    fn until(&self, t: u64) -> u64 {
        self.deadline.map_or(t, |d| t.min(d))
    }

    #[inline]
    fn past_deadline(&self, now: u64) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }

    #[inline]
    fn stop_asked(&self) -> bool {
        self.ctx.stop.load(Relaxed) || self.ctx.end_phase.load(Relaxed)
    }

    /// End issuing on a stop request or at the deadline; start measuring
    /// at the end of the ramp. Returns the time read.
    fn check_phase(&mut self) -> u64 {
        let now = self.ctx.clock.now();
        if self.stop_asked() || self.past_deadline(now) {
            self.done_issuing = true;
        }
        if !self.measuring && now >= self.ramp_end {
            self.restart_measuring(now);
        }
        now
    }

    /// Forget what was counted and measure from `now` on (the end of the
    /// ramp; `latency_target`'s final window).
    fn restart_measuring(&mut self, now: u64) {
        for d in 0..3 {
            (self.unmeasured_ios[d], self.unmeasured_bytes[d]) = self.live(d);
        }
        self.stats.clear();
        self.measuring = true;
        self.measure_start = now;
        (self.sec, self.sec_end) = (0, now.saturating_add(1_000_000_000));
        self.cpu_start = thread_cpu();
        if let Some((tid, at)) = &mut self.sq_thread {
            *at = sq_run_ns(*tid);
        }
    }

    /// Fill the queue. Synchronous completions free their slot at once, so
    /// a burst limit brings the loop back to the stop/ramp/progress checks.
    fn issue<E: Engine, F: Features>(
        &mut self,
        engine: &mut E,
        mut now: u64,
    ) -> Result<(), EngineError> {
        let mut burst = 0usize;
        let max_burst = self.depth.max(32);
        self.draining = false;
        if F::FULL && self.holding_for_low_mark() {
            return Ok(());
        }
        while !self.done_issuing && self.inflight < self.depth_cap && burst < max_burst {
            burst += 1;
            if !F::FULL {
                if let Some(t) = self.issue_lean::<E, F>(engine, now)? {
                    now = t;
                    if self.past_deadline(now) {
                        self.done_issuing = true;
                    }
                    continue;
                }
            }
            if F::FULL && self.pacing.early(self.flow.plan_mut(), now) {
                match self.wait_for_rate_when_empty() {
                    Some(t) => now = t,
                    None => break,
                }
            }
            if F::FULL && self.tokens.as_mut().is_some_and(FlowToken::ahead) {
                match self.flow_pause(now) {
                    Some(t) => now = t,
                    None => break,
                }
                continue;
            }
            let step = match self.access.as_mut().and_then(|a| a.held.take()) {
                Some(io) => Step::Io(io),
                None => self.flow.next(self.inflight, now),
            };
            match step {
                Step::Io(io) if F::FULL && self.overlaps_in_flight(&io) => {
                    // serialize_overlap: held until what it overlaps completes.
                    if let Some(a) = self.access.as_mut() {
                        a.held = Some(io);
                    }
                    self.draining = true;
                    break;
                }
                Step::Io(io) => now = self.issue_one::<E, F>(engine, io, now)?,
                Step::Drain => {
                    self.draining = true;
                    break;
                }
                Step::Done => {
                    self.done_issuing = true;
                    break;
                }
                step => now = self.between_ios(engine, step)?,
            }
            if self.past_deadline(now) {
                self.done_issuing = true;
            }
        }
        if F::FULL {
            self.holding_for_low_mark(); // a full queue now drains to iodepth_low
        }
        Ok(())
    }

    /// The lean loop's next read or write, issued: the run's I/O and the
    /// slow half's each on their own (merged, the run's would go through
    /// memory). Returns the time after, or None when the flow has no plain
    /// I/O next.
    #[inline(always)]
    fn issue_lean<E: Engine, F: Features>(
        &mut self,
        engine: &mut E,
        now: u64,
    ) -> Result<Option<u64>, EngineError> {
        if let Some(rw) = self.flow.next_in_run() {
            return Ok(Some(self.issue_rw::<E, F>(
                engine,
                rw,
                Tag::Plain,
                false,
                now,
            )?));
        }
        if let Some(rw) = self.flow.next_plain_slow() {
            return Ok(Some(self.issue_rw::<E, F>(
                engine,
                rw,
                Tag::Plain,
                false,
                now,
            )?));
        }
        Ok(None)
    }

    /// Where the block layer will see an I/O at `offset` of `file`, when the
    /// kernel's times are joined; (0, 0) otherwise.
    #[inline]
    fn kernel_sector(&self, file: u32, offset: u64) -> (u32, u64) {
        self.join
            .and(self.ctx.targets.get(file as usize))
            .and_then(|t| t.sector_map.as_ref())
            .and_then(|m| Some((m.kernel_dev, m.sector(offset)?)))
            .unwrap_or_default()
    }

    /// Hand one I/O to the engine; a synchronous one is accounted at once.
    /// Returns the time after.
    #[inline]
    fn issue_one<E: Engine, F: Features>(
        &mut self,
        engine: &mut E,
        io: FlowIo,
        now: u64,
    ) -> Result<u64, EngineError> {
        // zonemode=zbd: placed on the zones, their table held until queued.
        let table = self.zbd.as_ref().filter(|_| F::FULL).map(|z| z.table());
        let mut held = table.as_deref().map(crate::zbd::lock);
        let (io, reset_only) = match (self.zbd.as_mut(), held.as_deref_mut()) {
            (Some(z), Some(t)) => match z.place(t, &mut self.flow, io)? {
                Placed::Issue(io) => (io, false),
                Placed::ResetDone(io) => (io, true),
                Placed::Skip => return Ok(now),
                Placed::Eof => {
                    self.done_issuing = true;
                    return Ok(now);
                }
            },
            _ => (io, false),
        };
        let (file, data_only) = match io {
            FlowIo::Rw {
                file,
                ddir,
                offset,
                len,
                tag,
            } => {
                return self.issue_rw::<E, F>(
                    engine,
                    (file, ddir, offset, len),
                    tag,
                    reset_only,
                    now,
                )
            }
            FlowIo::Sync { file, data_only } => (file, Some(data_only)),
            FlowIo::SyncRange { file } => (file, None),
        };
        let slot = self.free_slot();
        self.slots[slot as usize] = Slot {
            issue_ns: now,
            submit_ns: now,
            sync: true,
            special: true,
            in_flight: true,
            file,
            ..Slot::default()
        };
        self.special[slot as usize] = io;
        let queued = match data_only {
            Some(data_only) => engine.sync(slot, file, data_only)?,
            None => {
                let (flags, range) = match self.access.as_deref() {
                    Some(a) => (a.range_flags.unwrap_or(0), a.range(file)),
                    None => (0, (0, 0)),
                };
                engine.sync_range(slot, file, range, flags)?
            }
        };
        let s = self.slots[slot as usize];
        self.after_queue::<E, F>(engine, slot, s, queued, now, None)
    }

    /// Hand a read, write or trim (file, direction, offset, length) to the
    /// engine, with what the job does to each (priority, rate, buffer
    /// contents, file lock); `reset_only`: zbd's reset did it. Returns the
    /// time after.
    #[inline(always)]
    fn issue_rw<E: Engine, F: Features>(
        &mut self,
        engine: &mut E,
        (file, ddir, offset, len): (u32, Ddir, u64, u32),
        tag: Tag,
        reset_only: bool,
        now: u64,
    ) -> Result<u64, EngineError> {
        let slot = self.free_slot();
        let s = Slot {
            issue_ns: now,
            submit_ns: now,
            ddir,
            len,
            sync: false,
            special: tag != Tag::Plain,
            in_flight: true,
            prio: 0,
            file,
        };
        let req = IoReq {
            slot,
            file,
            ddir,
            offset,
            len,
        };
        if !F::FULL {
            // The slot is written only if the request stays pending.
            let queued = engine.queue(req)?;
            return self.after_queue::<E, F>(engine, slot, s, queued, now, None);
        }
        self.slots[slot as usize] = s;
        self.offsets[slot as usize] = offset;
        self.take_slot_full(engine, &req, tag)?;
        self.fill_buffer(engine, &req, tag, now);
        if reset_only {
            let s = self.slots[slot as usize];
            let done = Queued::Done(i64::from(len));
            return self.after_queue::<E, F>(engine, slot, s, done, now, None);
        }
        let Some(locks) = self.locks.clone() else {
            let queued = engine.queue(req)?;
            let s = self.slots[slot as usize];
            return self.after_queue::<E, F>(engine, slot, s, queued, now, None);
        };
        self.queue_locked::<E, F>(engine, req, &locks, now)
    }

    /// The full loop's records of a request taking its slot: the kernel's
    /// sector to join, its priority, a special request's own record, the
    /// open loop's and the rate's counts.
    #[inline(always)]
    fn take_slot_full<E: Engine>(
        &mut self,
        engine: &mut E,
        req: &IoReq,
        tag: Tag,
    ) -> Result<(), EngineError> {
        let IoReq {
            slot,
            file,
            ddir,
            offset,
            len,
        } = *req;
        if self.join.is_some() {
            self.kernel[slot as usize] = self.kernel_sector(file, offset);
        }
        if let Some(p) = self.prio.as_deref_mut().filter(|p| p.per_io()) {
            let (index, value) = p.pick(ddir, len);
            self.slots[slot as usize].prio = index;
            engine.set_prio(slot, value)?;
        }
        if tag != Tag::Plain {
            self.special[slot as usize] = FlowIo::Rw {
                file,
                ddir,
                offset,
                len,
                tag,
            };
        }
        if let Some(o) = self.open_loop.as_deref_mut() {
            o.issued(slot, self.pacing.next_issue_ns());
        }
        self.pacing.issued(ddir, len);
        Ok(())
    }

    /// The buffer's contents before the request goes: verify's stamp, or
    /// a write's fresh bytes (buffer_compress_percentage, refill_buffers…).
    #[inline(always)]
    fn fill_buffer<E: Engine>(&mut self, engine: &mut E, req: &IoReq, tag: Tag, now: u64) {
        let (slot, len, offset) = (req.slot, req.len as usize, req.offset);
        if let (Tag::Stamped { generation, seed }, Some(layout)) = (tag, self.flow.layout()) {
            if let Some(buf) = engine.buffer(slot) {
                let buf = &mut buf[..len];
                verify::stamp(layout, buf, offset, generation, seed, self.ctx.number);
            }
        } else if let (Ddir::Write, Some(filler)) = (req.ddir, self.filler.as_mut()) {
            if let Some(buf) = engine.buffer(slot) {
                filler.before_write(&mut buf[..len], offset, now);
            }
        }
    }

    /// lockfile: the lock held while the engine has the request (a
    /// synchronous one's until its completion time is taken). The wait for
    /// the lock is not the I/O's (as fio: its lock is taken before the
    /// issue time is).
    fn queue_locked<E: Engine, F: Features>(
        &mut self,
        engine: &mut E,
        req: IoReq,
        locks: &FileLocks,
        now: u64,
    ) -> Result<u64, EngineError> {
        let slot = req.slot;
        let held = locks.hold(req.file, req.ddir);
        let t = self.ctx.clock.now();
        let s = &mut self.slots[slot as usize];
        (s.issue_ns, s.submit_ns) = (t, t);
        let s = *s;
        let queued = engine.queue(req)?;
        self.after_queue::<E, F>(engine, slot, s, queued, now, Some(held))
    }

    /// The slot the next request takes: the last free one, left on the
    /// free list until the request turns out to be pending
    /// ([`Loop::after_queue`]); one that completes inside `queue` never
    /// leaves it.
    #[inline(always)]
    fn free_slot(&self) -> u32 {
        let top = self.depth.wrapping_sub(self.inflight + 1);
        *self
            .free
            .get(top)
            .expect("a free slot while inflight < depth")
    }

    /// A request the engine took (`s`, in slot `slot`): account it now
    /// when it completed inside `queue`, else keep it in its slot and queue
    /// it for the next commit. `held`: its file lock, released once the
    /// completion time is taken.
    #[inline(always)]
    fn after_queue<E: Engine, F: Features>(
        &mut self,
        engine: &mut E,
        slot: u32,
        s: Slot,
        queued: Queued,
        now: u64,
        held: Option<super::access::Held<'_>>,
    ) -> Result<u64, EngineError> {
        match queued {
            Queued::Done(res) => {
                let t = self.ctx.clock.now();
                drop(held);
                if F::FULL && self.fake_io {
                    self.op_lat = engine.take_op_latency();
                }
                if F::FULL && self.join.is_some() {
                    self.mono_now = monotonic_ns();
                }
                if self.measuring {
                    self.stats.depth_at_issue[0] += 1;
                    self.stats.completion_events += 1;
                }
                // The slot stays free (it was never taken).
                self.account::<E, F>(engine, slot, s, res, t, true);
                Ok(t)
            }
            Queued::Pending => {
                drop(held);
                self.inflight += 1; // off the free list
                if self.batch_submit == 1 {
                    // fio's default iodepth_batch_submit=1: committed at
                    // once, without the list (it is always empty then).
                    debug_assert!(self.to_commit.is_empty());
                    return self.commit_one(engine, slot, s);
                }
                self.slots[slot as usize] = s;
                self.to_commit.push(slot);
                if self.to_commit.len() >= self.batch_submit {
                    return self.commit(engine);
                }
                Ok(now)
            }
        }
    }

    /// Submit the queued batch; its I/Os' submission time is now. Returns
    /// the time.
    #[inline(always)]
    fn commit<E: Engine>(&mut self, engine: &mut E) -> Result<u64, EngineError> {
        engine.commit()?;
        let n = self.to_commit.len();
        if self.measuring {
            self.stats.submit_batches[batch_bucket(n)] += 1;
            // fio: a committed batch counts at the depth it brings the queue to.
            self.stats.depth_at_issue[depth_bucket(self.inflight)] += n as u64;
        }
        let t = self.ctx.clock.now();
        for &s in &self.to_commit {
            self.slots[s as usize].submit_ns = t;
        }
        self.to_commit.clear();
        Ok(t)
    }

    /// [`Loop::commit`] of a batch of one, the request `s` in slot `slot`
    /// (not on the list): the slot is written once, with its submission
    /// time. Returns the time.
    #[inline(always)]
    fn commit_one<E: Engine>(
        &mut self,
        engine: &mut E,
        slot: u32,
        s: Slot,
    ) -> Result<u64, EngineError> {
        engine.commit()?;
        if self.measuring {
            self.stats.submit_batches[batch_bucket(1)] += 1;
            self.stats.depth_at_issue[depth_bucket(self.inflight)] += 1;
        }
        let t = self.ctx.clock.now();
        self.slots[slot as usize] = Slot { submit_ns: t, ..s };
        Ok(t)
    }

    /// Collect completions: wait for some when nothing more can be issued
    /// now, otherwise just peek; completions left from the last reap (over
    /// `iodepth_batch_complete_max`) count. Returns the number abandoned
    /// when the emulator's stragglers are given up.
    fn reap<E: Engine, F: Features>(&mut self, engine: &mut E) -> Result<Option<u64>, EngineError> {
        self.arm_give_up();
        let must_wait = self.done_issuing
            || self.draining
            || self.inflight >= self.depth_cap
            || (F::FULL && (self.holding_for_low_mark() || self.pacing.paced()));
        let min = if must_wait {
            self.complete_min.min(self.inflight)
        } else {
            0
        };
        let need = min.saturating_sub(self.comps.len());
        if need > 0 || self.comps.is_empty() {
            let (clock, stop, slots) = (&self.ctx.clock, &*self.ctx.stop, &self.slots);
            let oldest = || oldest_submit(slots);
            self.waiter
                .reap(engine, need, &mut self.comps, oldest, clock, stop)?;
        }
        if !self.comps.is_empty() {
            self.account_reaped::<E, F>(engine);
        }
        let give_up = self.give_up_at.is_some_and(|g| self.ctx.clock.now() >= g);
        Ok((self.inflight > 0 && give_up).then_some(self.inflight as u64))
    }

    /// Time is up or a stop was asked: what the emulator has not completed
    /// one slice later is abandoned. Kernel I/O is always waited for.
    fn arm_give_up(&mut self) {
        if self.give_up_at.is_some() || !self.done_issuing || self.ctx.emu.is_none() {
            return;
        }
        let now = self.ctx.clock.now();
        if self.stop_asked() || self.past_deadline(now) {
            self.give_up_at = Some(self.ctx.clock.now() + WAIT_SLICE);
        }
    }

    /// Account a reaped batch of at most `iodepth_batch_complete_max`, all
    /// at one timestamp (as fio); the rest stay for the next reap.
    #[inline]
    fn account_reaped<E: Engine, F: Features>(&mut self, engine: &mut E) {
        let t = self.ctx.clock.now();
        let n = self.comps.len().min(self.complete_max);
        if let (true, Some(j)) = (F::FULL, self.join) {
            self.mono_now = monotonic_ns();
            for c in &self.comps[..n] {
                let (dev, sector) = self.kernel[c.slot as usize];
                j.prefetch(dev, sector);
            }
        }
        if self.measuring {
            self.stats.complete_batches[batch_bucket(n)] += 1;
            self.stats.completion_events += 1;
        }
        let mut comps = std::mem::take(&mut self.comps);
        let learns = self.waiter.learns();
        for c in comps.drain(..n) {
            let s = &mut self.slots[c.slot as usize];
            s.in_flight = false;
            let s = *s;
            if learns {
                self.waiter.observe(t.saturating_sub(s.submit_ns));
            }
            self.account::<E, F>(engine, c.slot, s, c.result, t, false);
            self.release(c.slot);
        }
        self.comps = comps;
    }

    /// Put `slot` back on the free list: it is no longer in flight. An
    /// engine's completion of a slot that is not in flight breaks the slot
    /// contract ([`ssdready_io::Engine`]): checked in debug builds (the
    /// slot's record was indexed already, so release builds stop there on
    /// a slot out of range).
    #[inline(always)]
    fn release(&mut self, slot: u32) {
        debug_assert!(
            (slot as usize) < self.depth && self.inflight > 0,
            "completion of slot {slot} with {} of {} slots in flight",
            self.inflight,
            self.depth
        );
        debug_assert!(
            !self.free[..self.depth - self.inflight].contains(&slot),
            "completion of slot {slot}, which is not in flight"
        );
        if let Some(top) = self.free.get_mut(self.depth - self.inflight) {
            *top = slot;
        }
        self.inflight -= 1;
    }

    /// The I/Os and bytes direction `d` has completed so far, measured or
    /// not (an I/O that found the device full with `fill_device` included).
    #[inline]
    fn live(&self, d: usize) -> (u64, u64) {
        let (ios, bytes) = self.stats.dirs[d]
            .as_deref()
            .map_or((0, 0), |s| (s.ios, s.bytes));
        (
            self.unmeasured_ios[d] + ios,
            self.unmeasured_bytes[d] + bytes,
        )
    }

    /// The progress display's counters (relaxed stores, one writer).
    #[inline]
    fn publish_live(&self) {
        for d in 0..3 {
            let (ios, bytes) = self.live(d);
            self.ctx.live.ios[d].store(ios, Relaxed);
            self.ctx.live.bytes[d].store(bytes, Relaxed);
        }
    }
}

/// The submission time of the oldest I/O in flight (the hybrid wait's
/// reference: the next completion is expected a mean latency after it).
fn oldest_submit(slots: &[Slot]) -> u64 {
    slots
        .iter()
        .filter(|s| s.in_flight)
        .map(|s| s.submit_ns)
        .min()
        .unwrap_or(0)
}

/// The SQPOLL thread's run time so far, ns (0 when it cannot be read).
fn sq_run_ns(tid: u32) -> u64 {
    crate::strategy::thread_run_ns(tid).unwrap_or(0)
}
