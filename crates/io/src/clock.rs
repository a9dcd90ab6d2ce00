//! The clock every latency is measured with.
//!
//! On x86-64 with `constant_tsc` and `nonstop_tsc` (this project's machines),
//! timestamps are raw `rdtsc` readings converted to nanoseconds with a
//! multiplier calibrated against `CLOCK_MONOTONIC` at start-up (20 ms). A
//! reading costs a few nanoseconds, against ~20–25 ns for `clock_gettime` via
//! the vDSO; the measured cost is reported with every run
//! ([`Clock::cost_ns`]). Elsewhere the clock falls back to
//! `std::time::Instant` (CLOCK_MONOTONIC) and says so.
//!
//! The calibrated TSC frequency is also the "clock" of clocks per I/O: on a
//! constant-TSC CPU it ticks at the nominal frequency whatever the core's
//! current speed.

use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
enum Source {
    Tsc { base: u64, mult: u64, hz: f64 },
    Monotonic,
}

/// A cheap monotonic nanosecond clock. `Copy`: each worker holds its own.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    src: Source,
    origin: Instant,
    cost_ns: f64,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no memory effects and is available on every x86-64
    // CPU; we only call it after checking /proc/cpuinfo for constant_tsc.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn rdtsc() -> u64 {
    0
}

fn tsc_is_reliable() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    if std::env::var_os("SSDREADY_CLOCK").is_some_and(|v| v == "monotonic") {
        return false;
    }
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let line = flags.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    line.split_whitespace().any(|f| f == "constant_tsc")
        && line.split_whitespace().any(|f| f == "nonstop_tsc")
}

impl Clock {
    /// Pick and calibrate the clock (takes about 20 ms with the TSC).
    pub fn calibrate() -> Clock {
        let origin = Instant::now();
        let src = if tsc_is_reliable() {
            let c0 = rdtsc();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_millis(20) {
                std::hint::spin_loop();
            }
            let c1 = rdtsc();
            let ns = t0.elapsed().as_nanos() as f64;
            let hz = (c1 - c0) as f64 / ns * 1e9;
            let mult = (1e9 / hz * (1u64 << 32) as f64) as u64;
            Source::Tsc {
                base: rdtsc(),
                mult,
                hz,
            }
        } else {
            Source::Monotonic
        };
        let mut c = Clock {
            src,
            origin,
            cost_ns: 0.0,
        };
        let n = 100_000u64;
        let t0 = Instant::now();
        let mut sink = 0u64;
        for _ in 0..n {
            sink = sink.wrapping_add(c.now());
        }
        std::hint::black_box(sink);
        c.cost_ns = t0.elapsed().as_nanos() as f64 / n as f64;
        c
    }

    /// Nanoseconds since calibration.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.src {
            Source::Tsc { base, mult, .. } => {
                ((rdtsc().wrapping_sub(base) as u128 * mult as u128) >> 32) as u64
            }
            Source::Monotonic => self.origin.elapsed().as_nanos() as u64,
        }
    }

    /// `tsc` or `clock_monotonic`.
    pub fn source(&self) -> &'static str {
        match self.src {
            Source::Tsc { .. } => "tsc",
            Source::Monotonic => "clock_monotonic",
        }
    }

    /// The calibrated TSC frequency, when the TSC is the source.
    pub fn tsc_hz(&self) -> Option<f64> {
        match self.src {
            Source::Tsc { hz, .. } => Some(hz),
            Source::Monotonic => None,
        }
    }

    /// Measured cost of one [`Clock::now`], ns.
    pub fn cost_ns(&self) -> f64 {
        self.cost_ns
    }
}

/// `clock_gettime(id)` now, ns: the one place this crate reads a POSIX clock
/// by id (`CLOCK_MONOTONIC` for `bpf_ktime_get_ns`'s time base,
/// `CLOCK_THREAD_CPUTIME_ID` for a thread's CPU time).
pub fn posix_clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; an unknown id
    // leaves it zero.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_agrees_with_monotonic_time() {
        let c = Clock::calibrate();
        let a = c.now();
        let t = Instant::now();
        std::thread::sleep(Duration::from_millis(50));
        let b = c.now();
        let real = t.elapsed().as_nanos() as f64;
        let err = ((b - a) as f64 - real).abs() / real;
        assert!(err < 0.01, "clock {} vs monotonic {real}: {err}", b - a);
        assert!(c.cost_ns() > 0.0 && c.cost_ns() < 1000.0);
    }
}
