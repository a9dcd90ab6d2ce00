//! fio's rate limits (`rate`, `rate_iops`), per direction, as io_u.c
//! keeps them: each limited direction has the time its bytes so far are
//! due at its rate, and an I/O of a direction that is ahead of its rate
//! waits — unless the job mixes reads and writes and the other direction
//! is behind (or unlimited), in which case the I/O switches to it
//! (`rate_ddir`). A `rate_iops` limit is a byte rate of `rate_iops ×` the
//! direction's smallest block size, as in fio (a job with larger blocks
//! then does fewer I/Os per second); `rate` wins when both are given.
//!
//! With `rate_process=poisson` the gaps are not even: each I/O moves its
//! direction's due time on by an exponentially distributed interval whose
//! mean is one I/O of the smallest block size at the rate (fio's
//! `usec_for_io`), so arrivals form a Poisson process of the same mean
//! rate.
//!
//! Think time (`thinktime`) does not stop the clock: after it, a limited
//! direction is behind its rate and catches up at full speed — unless
//! `rate_ignore_thinktime` is set, when fio counts the bytes the direction
//! of the last I/O would have moved during the think time, less one block
//! (so the next I/O goes at once), as issued ([`Pacer::thought`]).

use crate::plan::IoPlan;
use ssdready_core::req::Ddir;
use ssdready_core::resolved::RateConfig;
use ssdready_core::spec::JobSpec;

/// The rate state of one worker.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Nanoseconds per byte of each direction (None: not limited).
    ns_per_byte: [Option<f64>; 3],
    /// When each direction's bytes so far are due.
    due: [f64; 3],
    /// Whether the job mixes reads and writes (and both have a share).
    mixed: bool,
    /// `rate_process=poisson`: per direction, the mean gap between I/Os
    /// (ns), and the draws' state.
    poisson: Option<([f64; 3], u64)>,
    /// Each direction's smallest block size (fio's `min_bs`).
    min_bs: [u64; 3],
}

impl Pacer {
    /// The pacer of a worker starting at `start_ns`, for the rate limits
    /// resolved as `cfg`.
    pub fn new(cfg: &RateConfig, start_ns: f64) -> Pacer {
        Pacer {
            ns_per_byte: cfg.ns_per_byte,
            due: [start_ns; 3],
            mixed: cfg.mixed,
            min_bs: cfg.min_bs,
            poisson: cfg.poisson,
        }
    }

    /// The pacer of a worker of `spec` starting at `start_ns`; None when
    /// no direction is limited.
    pub fn of_job(spec: &JobSpec, start_ns: f64) -> Option<Pacer> {
        RateConfig::new(spec).map(|r| Pacer::new(&r, start_ns))
    }

    /// Decide the direction of `plan`'s next I/O as fio's `rate_ddir`
    /// does (setting it in the plan), and return when that I/O may start.
    #[inline]
    pub fn next_due(&self, plan: &mut IoPlan, now: f64) -> f64 {
        let d = plan.next_ddir();
        let due = |d: Ddir| match self.ns_per_byte[d.idx()] {
            Some(_) => self.due[d.idx()],
            None => f64::NEG_INFINITY,
        };
        if due(d) <= now {
            return due(d);
        }
        if self.mixed && d != Ddir::Trim {
            let other = if d == Ddir::Read {
                Ddir::Write
            } else {
                Ddir::Read
            };
            if due(other) <= now || due(other) < due(d) {
                plan.set_next_ddir(other);
                return due(other);
            }
        }
        due(d)
    }

    /// `rate_ignore_thinktime`: the worker thought for `total_ns` after an
    /// I/O of direction `d`; count what the direction would have issued
    /// meanwhile, as fio's `handle_thinktime` does (in whole µs, as fio).
    #[inline]
    pub fn thought(&mut self, d: Ddir, total_ns: u64) {
        let Some(ns) = self.ns_per_byte[d.idx()] else {
            return;
        };
        let total_us = total_ns / 1000;
        if total_us == 0 {
            return;
        }
        if self.poisson.is_some() {
            // fio moves the direction's last issue time on (`last_usec`).
            self.due[d.idx()] += (total_us * 1000) as f64;
            return;
        }
        let bps = (1e9 / ns).round() as u64;
        let missed = bps * total_us / 1_000_000;
        let bs = self.min_bs[d.idx()];
        let us_per_op = bs * 1_000_000 / bps.max(1);
        // fio: one block less when a whole I/O fits in the think time
        // (its other branch computes 0 in integer arithmetic).
        let over = if us_per_op <= total_us { bs } else { 0 };
        self.due[d.idx()] += ns * missed.saturating_sub(over) as f64;
    }

    /// Account `len` bytes issued in direction `d`.
    #[inline]
    pub fn issued(&mut self, d: Ddir, len: u64) {
        let Some(ns) = self.ns_per_byte[d.idx()] else {
            return;
        };
        match &mut self.poisson {
            None => self.due[d.idx()] += ns * len as f64,
            Some((gap, state)) => {
                let mut x = *state;
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *state = x;
                // A uniform draw in (0, 1], then an exponential gap.
                let u = ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                self.due[d.idx()] += gap[d.idx()] * -u.ln();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlanConfig, Region};
    use ssdready_core::spec::RwMode;

    fn run(spec: &JobSpec, seconds: f64) -> [u64; 3] {
        // An instant device: each I/O is issued when it is due.
        let region = [Region {
            file: 0,
            offset: 0,
            len: 1 << 30,
        }];
        let mut plan = IoPlan::new(&PlanConfig::new(spec), &region, 0);
        let mut p = Pacer::of_job(spec, 0.0).unwrap();
        let mut bytes = [0u64; 3];
        let mut now = 0.0;
        while now < seconds * 1e9 {
            now = p.next_due(&mut plan, now).max(now);
            let Some((_, d, _, len)) = plan.next_io() else {
                break;
            };
            p.issued(d, u64::from(len));
            bytes[d.idx()] += u64::from(len);
        }
        bytes
    }

    #[test]
    fn each_direction_keeps_its_own_rate() {
        let spec = JobSpec {
            rw: RwMode::RandRw,
            rate_bytes: [Some(1 << 20), Some(512 << 10), None],
            time_based: true,
            ..JobSpec::default()
        };
        let b = run(&spec, 10.0);
        assert!(
            (b[0] as f64 / 10.0 - f64::from(1 << 20)).abs() < 8192.0,
            "{b:?}"
        );
        assert!(
            (b[1] as f64 / 10.0 - f64::from(512 << 10)).abs() < 8192.0,
            "{b:?}"
        );
    }

    #[test]
    fn an_unlimited_direction_takes_the_turns_of_a_limited_one() {
        let spec = JobSpec {
            rw: RwMode::RandRw,
            rate_bytes: [None, Some(400 << 10), None],
            number_ios: Some(10_000),
            time_based: true,
            ..JobSpec::default()
        };
        // On an instant device time never passes: after its first I/O the
        // write direction stays ahead of its rate, and every turn it draws
        // goes to the unlimited reads.
        let b = run(&spec, 1.0);
        assert_eq!(b[1], 4096, "{b:?}");
        assert_eq!(b[0], 9_999 * 4096, "{b:?}");
    }

    #[test]
    fn rate_iops_counts_the_smallest_block() {
        let spec = JobSpec {
            rw: RwMode::RandRead,
            bs: ssdready_core::spec::BlockSizes::Split(vec![(4096, 50), (65536, 50)]),
            rate_iops: [Some(100), None, None],
            norandommap: true,
            time_based: true,
            ..JobSpec::default()
        };
        let b = run(&spec, 10.0);
        // 100 × 4 KiB per second, as fio limits it.
        assert!((b[0] as f64 / 10.0 - 409_600.0).abs() < 70_000.0, "{b:?}");
        assert!(Pacer::of_job(&JobSpec::default(), 0.0).is_none());
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_rates_mean() {
        let mut spec = JobSpec {
            rw: RwMode::RandRead,
            rate_iops: [Some(1000), None, None],
            time_based: true,
            ..JobSpec::default()
        };
        spec.sched.poisson = true;
        let region = [Region {
            file: 0,
            offset: 0,
            len: 1 << 30,
        }];
        let mut plan = IoPlan::new(&PlanConfig::new(&spec), &region, 0);
        let mut p = Pacer::of_job(&spec, 0.0).unwrap();
        let mut gaps = Vec::new();
        let mut last = 0.0;
        for _ in 0..20_000 {
            let due = p.next_due(&mut plan, last);
            gaps.push(due - last);
            last = due;
            p.issued(Ddir::Read, 4096);
        }
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n).sqrt();
        // Mean 1 ms, and an exponential's standard deviation equals its mean
        // (an even pace would have none).
        assert!((mean - 1e6).abs() < 3e4, "{mean}");
        assert!((sd / mean - 1.0).abs() < 0.05, "{sd} {mean}");
        let short = gaps
            .iter()
            .filter(|&&g| g < 1e6 * std::f64::consts::LN_2)
            .count() as f64;
        assert!(
            (short / n - 0.5).abs() < 0.02,
            "median at ln 2 × mean: {}",
            short / n
        );
    }

    #[test]
    fn rate_ignore_thinktime_counts_the_think_time_at_the_rate() {
        let spec = JobSpec {
            rate_bytes: [Some(1 << 20), None, None],
            ..JobSpec::default()
        };
        let mut p = Pacer::of_job(&spec, 0.0).unwrap();
        p.issued(Ddir::Read, 4096);
        let before = p.due[0];
        // 100 ms at 1 MiB/s: 104857 bytes, less one 4 KiB block.
        p.thought(Ddir::Read, 100_000_000);
        let moved_bytes = (p.due[0] - before) / (1e9 / f64::from(1u32 << 20));
        assert!(
            (moved_bytes - (104_857.0 - 4096.0)).abs() < 1e-3,
            "{moved_bytes}"
        );
        // A think shorter than one I/O's time counts without the block.
        let before = p.due[0];
        p.thought(Ddir::Read, 1_000_000);
        let moved_bytes = (p.due[0] - before) / (1e9 / f64::from(1u32 << 20));
        assert!((moved_bytes - 1048.0).abs() < 1e-3, "{moved_bytes}");
        // An unlimited direction is not paced at all.
        p.thought(Ddir::Write, 100_000_000);
        assert_eq!(p.due[1], 0.0);
    }
}
