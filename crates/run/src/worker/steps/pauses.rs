//! What the loop does between I/Os: wait for the rate limit, pause for
//! the job's flow share, think, hold an I/O that overlaps one in flight
//! (`serialize_overlap`), and the flow's steps that are not I/O (cache
//! drops, syncs of every file, a new loop).

use super::Loop;
use crate::worker::files;
use crate::worker::wait::{spin_for, wait_until};
use ssdready_io::{Engine, EngineError};
use ssdready_workload::jobflow::{FlowIo, Step};
use std::sync::atomic::Ordering::Relaxed;

impl Loop<'_> {
    /// Early for the rate: with I/Os in flight, None (issue no more now);
    /// with none, wait for the rate and return the time after, or None
    /// (done issuing) on a stop or at the deadline.
    pub(super) fn wait_for_rate_when_empty(&mut self) -> Option<u64> {
        if self.inflight > 0 {
            return None;
        }
        let now = self.wait_for_rate();
        if self.ctx.stop.load(Relaxed) || self.past_deadline(now) {
            self.done_issuing = true;
            return None;
        }
        Some(now)
    }

    /// Ahead of its flow share: as fio, empty the queue and sleep
    /// flow_sleep, or (flow_sleep=0) look again at once. None while I/Os
    /// are in flight (issue no more now), else the time after the pause.
    pub(super) fn flow_pause(&mut self, now: u64) -> Option<u64> {
        let sleep_ns = self.tokens.as_ref().map_or(0, |t| t.sleep_ns);
        if self.inflight > 0 {
            self.draining = sleep_ns > 0;
            return None;
        }
        let now = if sleep_ns > 0 {
            let until = self.until(now.saturating_add(sleep_ns));
            wait_until(&self.ctx.clock, until, &self.ctx.stop);
            self.ctx.clock.now()
        } else {
            std::thread::yield_now();
            self.ctx.clock.now()
        };
        if self.stop_asked() || self.past_deadline(now) {
            self.done_issuing = true;
        }
        Some(now)
    }

    /// `serialize_overlap`: whether `io` overlaps a request in flight.
    pub(super) fn overlaps_in_flight(&mut self, io: &FlowIo) -> bool {
        let Some(a) = self.access.as_mut() else {
            return false;
        };
        let in_flight = self
            .slots
            .iter()
            .zip(&self.offsets)
            .filter(|(s, _)| s.in_flight && !s.sync)
            .map(|(s, &offset)| (offset, s.len));
        a.waits(io, in_flight)
    }

    /// The flow's steps that are not I/O (the queue is empty for all but a
    /// cache drop); returns the time after.
    pub(super) fn between_ios<E: Engine>(
        &mut self,
        engine: &mut E,
        step: Step,
    ) -> Result<u64, EngineError> {
        let ctx = self.ctx;
        match step {
            Step::Think { spin_ns, sleep_ns } => {
                let before = ctx.clock.now();
                let after = self.think(spin_ns, sleep_ns);
                self.pacing.thought(after.saturating_sub(before));
                return Ok(after);
            }
            Step::DropCache(f) => files::drop_cache(ctx, f),
            Step::FsyncFiles => files::fsync_all(ctx)?,
            Step::SettleForVerify => {
                files::fsync_all(ctx)?;
                files::drop_caches(ctx);
            }
            Step::NewLoop { unlink, invalidate } => {
                files::new_loop(ctx, engine, unlink, invalidate)?;
            }
            Step::Io(_) | Step::Drain | Step::Done => {}
        }
        Ok(ctx.clock.now())
    }

    /// Sleep until the rate limit lets the next I/O go (or the deadline);
    /// returns the time then.
    pub(super) fn wait_for_rate(&self) -> u64 {
        let clock = &self.ctx.clock;
        wait_until(
            clock,
            self.until(self.pacing.next_issue_ns()),
            &self.ctx.stop,
        );
        clock.now()
    }

    /// Think time, with the queue empty (the flow drained it first, as fio
    /// does): spin `spin_ns` (`thinktime_spin`), sleep the rest; returns the
    /// time.
    pub(super) fn think(&self, spin_ns: u64, sleep_ns: u64) -> u64 {
        let clock = &self.ctx.clock;
        let now = clock.now();
        let spun = self.until(now.saturating_add(spin_ns));
        spin_for(clock, spun, &self.ctx.stop);
        let until = self.until(spun.saturating_add(sleep_ns));
        wait_until(clock, until, &self.ctx.stop);
        clock.now()
    }
}
