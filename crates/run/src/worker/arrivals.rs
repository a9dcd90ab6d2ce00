//! The worker's side of `lat_from=schedule` ([`ssdready_core::arrivals`]):
//! each I/O's intended issue time, taken from the rate's schedule when it
//! is issued and kept per slot, and at its completion the latency from
//! that time, the lateness and the latency from the actual issue.
//!
//! The schedule itself is the rate's ([`super::wait::Pacing`]): due times
//! move on by one gap per I/O whatever the completions do, and an I/O due
//! while every slot is busy goes as soon as one frees, so `iodepth` is only
//! a cap. Nothing here changes when I/Os are issued.

use ssdready_core::arrivals::{ScheduleStats, LATE_REAL_NS};
use ssdready_core::resolved::LoopConfig;
use ssdready_core::stats::WorkerStats;
use ssdready_core::Ddir;

/// Per slot, the intended issue time of the I/O in it.
pub(super) struct OpenLoop {
    intended: Vec<u64>,
}

impl OpenLoop {
    /// The open loop of a worker with `depth` slots, when the job asks for
    /// it and is paced (the spec check refuses `lat_from=schedule` without
    /// a rate); its counters go in `stats`.
    pub(super) fn new(
        cfg: &LoopConfig,
        depth: usize,
        paced: bool,
        stats: &mut WorkerStats,
    ) -> Option<Box<OpenLoop>> {
        if !(cfg.lat_from_schedule && paced) {
            return None;
        }
        stats.schedule = Some(Box::new(ScheduleStats::new(LATE_REAL_NS)));
        Some(Box::new(OpenLoop {
            intended: vec![0; depth],
        }))
    }

    /// The I/O in `slot` was due at `intended`.
    #[inline]
    pub(super) fn issued(&mut self, slot: u32, intended: u64) {
        if let Some(t) = self.intended.get_mut(slot as usize) {
            *t = intended;
        }
    }

    /// The I/O in `slot`, of direction `d`, issued at `issued`, completed at
    /// `done`: counted in `stats`; returns its latency from the schedule.
    #[inline]
    pub(super) fn completed(
        &self,
        stats: &mut WorkerStats,
        slot: u32,
        d: Ddir,
        issued: u64,
        done: u64,
    ) -> u64 {
        let intended = self.intended.get(slot as usize).copied().unwrap_or(issued);
        match stats.schedule.as_deref_mut() {
            Some(s) => s.record(d, intended, issued, done),
            None => done.saturating_sub(issued),
        }
    }
}
