//! The reap step's wait: how the worker waits for completions once nothing
//! more can be issued (`ssdready_core::strategy` has the domain).
//!
//! * [`Waiter::Engine`]: the engine's own wait — a sleep in the kernel
//!   (`io_uring_enter`, `io_getevents`) woken through the interrupt, the
//!   kernel's polling loop with IOPOLL, or the emulated device's mode.
//! * [`Waiter::Spin`]: look at the completion queue without waiting
//!   (`getevents` with `min` 0) again and again; never sleeps.
//! * [`Waiter::Hybrid`]: sleep until half the expected latency of the
//!   oldest I/O in flight has passed (a running mean of the completion
//!   latencies seen), then spin. The worker's timer slack is set to 1 ns so
//!   that a sleep of a few µs is not stretched by the default 50 µs.
//!
//! A spin ends after [`WAIT_SLICE`] or on a stop request with what it has,
//! like the emulator's waits, so the loop looks at its flags.

use super::wait::WAIT_SLICE;
pub use crate::strategy::Wait;
use ssdready_core::Completion;
use ssdready_io::clock::Clock;
use ssdready_io::{Engine, EngineError};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The running mean of completion latency that sets the hybrid sleep: an
/// exponentially weighted mean over about the last 16 completions.
///
/// A completion found by the first look after a sleep may have arrived
/// during the sleep: its latency as seen is only an upper bound, and
/// learning it would let an oversleep lengthen the next sleep, and so on.
/// Such a bound counts only when it lowers the mean; a completion caught
/// while spinning (after an empty look) is exact and always counts.
#[derive(Default)]
pub(super) struct ExpectedLatency {
    mean_ns: f64,
    seen: bool,
    /// Whether the completions of the last reap were caught spinning.
    exact: bool,
}

impl ExpectedLatency {
    #[inline]
    fn observe(&mut self, clat_ns: u64) {
        let v = clat_ns as f64;
        if !self.seen {
            (self.mean_ns, self.seen) = (v, true);
        } else if self.exact || v < self.mean_ns {
            self.mean_ns += (v - self.mean_ns) / 16.0;
        }
    }

    /// Sleep until half the expected latency after `oldest_submit`; no sleep
    /// before a completion has been seen, or when that time is under 2 µs
    /// away (a sleep costs about that much).
    fn sleep_half(&self, oldest_submit: u64, clock: &Clock) {
        if !self.seen {
            return;
        }
        let wake = oldest_submit.saturating_add((self.mean_ns / 2.0) as u64);
        let now = clock.now();
        if wake > now + 2_000 {
            let ns = (wake - now).min(WAIT_SLICE);
            std::thread::sleep(std::time::Duration::from_nanos(ns));
        }
    }
}

/// See the module docs.
pub(super) enum Waiter {
    Engine,
    Spin,
    Hybrid(ExpectedLatency),
}

impl Waiter {
    pub(super) fn new(wait: Wait) -> Self {
        match wait {
            Wait::Engine => Waiter::Engine,
            Wait::Spin => Waiter::Spin,
            Wait::Hybrid => {
                // A sleep of a few µs must not last the default 50 µs more.
                let _ = nix::sys::prctl::set_timerslack(1);
                Waiter::Hybrid(ExpectedLatency::default())
            }
        }
    }

    /// Whether the hybrid wait needs the completion latencies.
    #[inline]
    pub(super) fn learns(&self) -> bool {
        matches!(self, Waiter::Hybrid(_))
    }

    /// One completion's latency (submission to completion), for the mean.
    #[inline]
    pub(super) fn observe(&mut self, clat_ns: u64) {
        if let Waiter::Hybrid(e) = self {
            e.observe(clat_ns);
        }
    }

    /// Append completions to `out`, waiting for `min` of them as this
    /// waiter does (fewer when a spin reaches its slice or a stop is asked).
    /// `oldest_submit` gives the submission time of the oldest I/O in
    /// flight (only the hybrid wait asks).
    #[inline]
    pub(super) fn reap<E: Engine>(
        &mut self,
        engine: &mut E,
        min: usize,
        out: &mut Vec<Completion>,
        oldest_submit: impl FnOnce() -> u64,
        clock: &Clock,
        stop: &AtomicBool,
    ) -> Result<(), EngineError> {
        match self {
            Waiter::Engine => engine.getevents(min, out),
            Waiter::Spin => spin(engine, min, out, clock, stop).map(|_| ()),
            Waiter::Hybrid(expected) => {
                if min > 0 && out.is_empty() {
                    expected.sleep_half(oldest_submit(), clock);
                }
                expected.exact = spin(engine, min, out, clock, stop)?;
                Ok(())
            }
        }
    }
}

/// Look at the completion queue until `min` completions have come, for at
/// most [`WAIT_SLICE`] or until a stop request. Returns whether the first
/// look found nothing (what came was then caught as it arrived).
fn spin<E: Engine>(
    engine: &mut E,
    min: usize,
    out: &mut Vec<Completion>,
    clock: &Clock,
    stop: &AtomicBool,
) -> Result<bool, EngineError> {
    let before = out.len();
    engine.getevents(0, out)?;
    if out.len() - before >= min {
        return Ok(false);
    }
    let empty_first = out.len() == before;
    let give_up = clock.now().saturating_add(WAIT_SLICE);
    loop {
        std::hint::spin_loop();
        engine.getevents(0, out)?;
        if out.len() - before >= min || stop.load(Relaxed) || clock.now() >= give_up {
            return Ok(empty_first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_latency_starts_at_the_first_and_follows_a_change() {
        let mut e = ExpectedLatency::default();
        e.observe(10_000);
        assert_eq!(e.mean_ns, 10_000.0);
        e.exact = true;
        for _ in 0..200 {
            e.observe(40_000);
        }
        assert!((e.mean_ns - 40_000.0).abs() < 100.0, "{}", e.mean_ns);
    }

    #[test]
    fn an_oversleep_does_not_lengthen_the_next_sleep() {
        let mut e = ExpectedLatency::default();
        e.observe(10_000);
        e.exact = false;
        for _ in 0..100 {
            e.observe(80_000); // found at the first look after a sleep
        }
        assert_eq!(e.mean_ns, 10_000.0);
        e.observe(6_000); // a bound below the mean still counts
        assert!(e.mean_ns < 10_000.0);
    }

    #[test]
    fn a_hybrid_wait_sleeps_about_half_the_expected_latency() {
        let clock = Clock::calibrate();
        let mut e = ExpectedLatency::default();
        e.observe(4_000_000);
        let _ = nix::sys::prctl::set_timerslack(1);
        let t0 = clock.now();
        e.sleep_half(t0, &clock);
        let slept = clock.now() - t0;
        // 2 ms asked; a loaded machine may add much, never take any away.
        assert!(slept >= 2_000_000, "{slept} ns");
        let t1 = clock.now();
        ExpectedLatency::default().sleep_half(t1, &clock);
        assert!(
            clock.now() - t1 < 1_000_000,
            "no sleep before any completion"
        );
    }
}
