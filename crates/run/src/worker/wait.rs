//! The worker's waits that are not waits for completions: the start delay,
//! the rate limit's pauses between issues (`rate`, `rate_iops`) and think
//! time (`thinktime`, every `thinktime_blocks` I/Os). Every one ends at the
//! job's deadline or on a stop request.

use ssdready_core::resolved::LoopConfig;
use ssdready_core::Ddir;
use ssdready_io::clock::Clock;
use ssdready_workload::plan::IoPlan;
use ssdready_workload::rate::Pacer;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The longest one sleep lasts before the stop flag is looked at again, ns.
pub const WAIT_SLICE: u64 = 20_000_000;

/// Wait until `clock` reads `until_ns`, or a stop request: sleep for the
/// bulk in slices of [`WAIT_SLICE`], spin the last 50 µs.
pub(super) fn wait_until(clock: &Clock, until_ns: u64, stop: &AtomicBool) {
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

/// Busy-wait until `clock` reads `until_ns` (`thinktime_spin`), or a stop
/// request.
pub(super) fn spin_for(clock: &Clock, until_ns: u64, stop: &AtomicBool) {
    while clock.now() < until_ns && !stop.load(Relaxed) {
        std::hint::spin_loop();
    }
}

/// The rate limit: fio's per-direction `rate` / `rate_iops`
/// ([`Pacer`]), and when the next I/O is due.
pub(super) struct Pacing {
    pacer: Option<Pacer>,
    next_issue: f64,
    /// The direction of the last I/O issued (`rate_ignore_thinktime`).
    last: Ddir,
    ignore_thinktime: bool,
}

impl Pacing {
    /// The pacing of a worker of the loop resolved as `cfg`, starting at
    /// `start`.
    pub(super) fn new(cfg: &LoopConfig, start: u64) -> Self {
        Pacing {
            pacer: cfg.rate.as_ref().map(|r| Pacer::new(r, start as f64)),
            next_issue: start as f64,
            last: Ddir::Read,
            ignore_thinktime: cfg.rate_ignore_thinktime,
        }
    }

    /// Whether the job has a rate limit at all.
    #[inline]
    pub(super) fn paced(&self) -> bool {
        self.pacer.is_some()
    }

    /// Whether the plan's next I/O, issued at `now`, would be early (its
    /// direction may switch, as fio's `rate_ddir` does).
    #[inline]
    pub(super) fn early(&mut self, plan: &mut IoPlan, now: u64) -> bool {
        let Some(p) = &self.pacer else {
            return false;
        };
        self.next_issue = p.next_due(plan, now as f64);
        (now as f64) < self.next_issue
    }

    /// When the next I/O is due, ns on the worker's clock.
    pub(super) fn next_issue_ns(&self) -> u64 {
        self.next_issue as u64
    }

    /// Count one I/O of `len` bytes in direction `ddir` as issued.
    #[inline]
    pub(super) fn issued(&mut self, ddir: Ddir, len: u32) {
        if let Some(p) = &mut self.pacer {
            p.issued(ddir, u64::from(len));
            self.last = ddir;
        }
    }

    /// The worker thought for `total_ns` (`rate_ignore_thinktime`: that
    /// time counts at the rate of the last I/O's direction).
    pub(super) fn thought(&mut self, total_ns: u64) {
        if let (Some(p), true) = (&mut self.pacer, self.ignore_thinktime) {
            p.thought(self.last, total_ns);
        }
    }
}
