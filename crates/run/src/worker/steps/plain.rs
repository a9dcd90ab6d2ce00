//! What a job pays for on the hot path: only the options it uses.
//!
//! The loop's steps are generic over [`Features`]. A job that uses none of
//! the per-I/O options (rate, flow, think time, verification, zones, file
//! locks, priorities, `latency_target`, `max_latency`, `iodepth_low`,
//! replay or logs, write-buffer refills, the kernel's per-I/O times, …)
//! runs the [`Plain`] instantiation, in which every check of those options
//! is a constant `false` the compiler removes; any other job runs [`Full`].
//! The choice is made once per job ([`Loop::plain`]), and with it the
//! engine is matched once ([`Loop::drive_any`]), so the plain loop of the
//! common engines has their `queue`, `commit` and `getevents` inlined.
//!
//! A new per-I/O option is a hook of the full path: guard it with
//! `F::FULL` and make [`Loop::plain`] refuse jobs that use it.

use super::features::{Features, Full, Plain};
use super::Loop;
use ssdready_io::{AnyEngine, Engine, EngineError};

impl Loop<'_> {
    /// Whether the job uses none of the options the plain path leaves out
    /// (decided once, before the first I/O).
    pub(super) fn plain(&self) -> bool {
        self.flow.is_lean()
            && !self.pacing.paced()
            && self.tokens.is_none()
            && self.open_loop.is_none()
            && self.access.is_none()
            && self.zbd.is_none()
            && self.locks.is_none()
            && self.join.is_none()
            && self.prio.is_none()
            && self.lat.is_none()
            && self.min_rate.is_none()
            && !self.fake_io
            && self.filler.is_none()
            && self.stats.log.is_none()
            && self.refill_at >= self.depth
            && self.ctx.job.run_loop.max_latency_ns.iter().all(|&m| m == 0)
    }

    /// Run the loop with the engine matched once: the plain path of the
    /// common engines gets their own loop.
    pub(super) fn drive_any(&mut self, engine: &mut AnyEngine) -> Result<u64, EngineError> {
        if !self.plain() {
            return self.drive::<_, Full>(engine);
        }
        match engine {
            AnyEngine::Null(e) => self.drive::<_, Plain>(e),
            AnyEngine::Psync(e) => self.drive::<_, Plain>(e),
            AnyEngine::Uring(e) => self.drive::<_, Plain>(&mut **e),
            AnyEngine::Libaio(e) => self.drive::<_, Plain>(&mut **e),
            e => self.drive::<_, Plain>(e),
        }
    }

    /// The loop to the end of the job's I/O: returns how many I/Os were
    /// abandoned in flight.
    fn drive<E: Engine, F: Features>(&mut self, engine: &mut E) -> Result<u64, EngineError> {
        loop {
            let was_measuring = self.measuring;
            let now = self.check_phase();
            if self.measuring && !was_measuring {
                engine.take_merge_stats(); // the ramp's, forgotten
            }
            self.issue::<E, F>(engine, now)?;
            if !self.to_commit.is_empty() {
                self.commit(engine)?;
            }
            if self.inflight == 0 {
                if self.done_issuing {
                    return Ok(0);
                }
            } else if let Some(abandoned) = self.reap::<E, F>(engine)? {
                return Ok(abandoned);
            }
            if F::FULL && self.min_rate.is_some() {
                self.check_min_rate();
            }
            if F::FULL && self.lat.is_some() {
                self.check_latency();
            }
            self.publish_live();
        }
    }

    /// Move to the second of the measured window `t` falls in: one
    /// comparison per I/O; at a second's boundary a division, and the
    /// seconds passed closed in the series (`ssdready_core::stats`).
    #[inline(always)]
    pub(super) fn second(&mut self, t: u64) -> usize {
        if t >= self.sec_end {
            self.stats.close_second(self.sec);
            let sec = t.saturating_sub(self.measure_start) / 1_000_000_000;
            self.sec = sec as usize;
            self.sec_end = self
                .measure_start
                .saturating_add((sec + 1).saturating_mul(1_000_000_000));
        }
        self.sec
    }
}
