//! The worker's waits that are not waits for completions: the start delay,
//! the rate limit's pauses between issues (`rate`, `rate_iops`) and think
//! time (`thinktime`, every `thinktime_blocks` I/Os). Every one ends at the
//! job's deadline or on a stop request.

use ssdready_core::spec::JobSpec;
use ssdready_io::clock::Clock;
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

/// The rate limit: when the next I/O may be issued, advanced by one
/// interval per I/O (`rate_iops`) and by the time its bytes take at the
/// byte rate (`rate`).
pub(super) struct Pacing {
    interval_ns: Option<f64>,
    ns_per_byte: Option<f64>,
    next_issue: f64,
}

impl Pacing {
    pub(super) fn new(spec: &JobSpec, start: u64) -> Self {
        Pacing {
            interval_ns: spec.rate_iops.map(|r| 1e9 / r as f64),
            ns_per_byte: spec.rate_bytes.map(|r| 1e9 / r as f64),
            next_issue: start as f64,
        }
    }

    /// Whether the job has a rate limit at all.
    #[inline]
    pub(super) fn paced(&self) -> bool {
        self.interval_ns.is_some() || self.ns_per_byte.is_some()
    }

    /// Whether an I/O issued at `now` would be early.
    #[inline]
    pub(super) fn early(&self, now: u64) -> bool {
        self.paced() && (now as f64) < self.next_issue
    }

    /// When the next I/O is due, ns on the worker's clock.
    pub(super) fn next_issue_ns(&self) -> u64 {
        self.next_issue as u64
    }

    /// Count one I/O of `len` bytes as issued.
    #[inline]
    pub(super) fn issued(&mut self, len: u32) {
        if let Some(i) = self.interval_ns {
            self.next_issue += i;
        }
        if let Some(b) = self.ns_per_byte {
            self.next_issue += b * len as f64;
        }
    }
}
