//! fio's `latency_target` search (io_u.c's `lat_target_*`): the worker
//! starts at queue depth 1 and, every `latency_window`, looks at the share
//! of I/Os whose total latency met the target. At least
//! `latency_percentile` %: the depth goes up (doubling until a window
//! fails, then bisecting between the last good and the first bad depth);
//! less: it goes down (bisecting towards the last good one), after the
//! queue has emptied. With a 100 % percentile one slow I/O is a failure at
//! once, and a failure at depth 1 ends the job with ETIMEDOUT. When a
//! success leaves the depth where it was, the search has converged: the
//! statistics restart for one more window at that depth and the job ends
//! (unless `latency_run`, which keeps adjusting until the job's end).

use ssdready_core::sched::LatencyTarget;

/// What the loop does after a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Go on at [`LatSearch::depth`].
    Go,
    /// Converged: restart the statistics and run one more window.
    FinalWindow,
    /// The final window is over: the job ends.
    Done,
}

/// The search's state (fio's `latency_qd`, `_low`, `_high`, …).
#[derive(Clone, Debug)]
pub(super) struct LatSearch {
    t: LatencyTarget,
    iodepth: u32,
    qd: u32,
    qd_low: u32,
    qd_high: u32,
    stable: u32,
    window_start: u64,
    ios: u64,
    failed: u64,
    end_run: bool,
    /// Ramped down, or converged: the queue must empty before the new
    /// depth applies.
    pub quiesce: bool,
    /// Converged: the statistics restart once the queue is empty.
    pub reset_stats: bool,
}

impl LatSearch {
    pub fn new(t: LatencyTarget, iodepth: u32, now: u64) -> LatSearch {
        let iodepth = iodepth.max(1);
        LatSearch {
            t,
            iodepth,
            qd: 1,
            qd_low: 1,
            qd_high: iodepth,
            stable: 0,
            window_start: now,
            ios: 0,
            failed: 0,
            end_run: false,
            quiesce: false,
            reset_stats: false,
        }
    }

    /// `latency_target`, ns.
    pub fn target_ns(&self) -> u64 {
        self.t.target_ns
    }

    /// The queue depth the search allows now.
    pub fn depth(&self) -> u32 {
        self.qd
    }

    /// One completed I/O of total latency `lat_ns`; Err(latency) when the
    /// target failed at depth 1 with a 100 % percentile (fio's
    /// `lat_fatal`).
    pub fn completed(&mut self, lat_ns: u64, now: u64) -> Result<(), u64> {
        self.ios += 1;
        if lat_ns <= self.t.target_ns {
            return Ok(());
        }
        if self.t.percentile < 100.0 {
            self.failed += 1;
            return Ok(());
        }
        if self.qd == 1 {
            return Err(lat_ns);
        }
        self.ramp_down(now);
        Ok(())
    }

    /// Look at the window when it is over.
    pub fn check(&mut self, now: u64) -> Verdict {
        if now.saturating_sub(self.window_start) < self.t.window_ns || self.ios == 0 {
            return Verdict::Go;
        }
        let ok = 100.0 * (self.ios - self.failed) as f64 / self.ios as f64;
        if ok >= self.t.percentile {
            return self.success(now);
        }
        if self.qd > 1 {
            self.ramp_down(now);
        }
        Verdict::Go
    }

    fn new_window(&mut self, now: u64) {
        self.window_start = now;
        self.ios = 0;
        self.failed = 0;
    }

    fn ramp_down(&mut self, now: u64) {
        self.qd_high = self.qd;
        if self.qd == self.qd_low {
            self.qd_low -= 1;
        }
        self.qd = ((self.qd + self.qd_low) / 2).max(1);
        self.stable = 0;
        self.quiesce = true;
        self.new_window(now);
    }

    fn success(&mut self, now: u64) -> Verdict {
        let was = self.qd;
        self.qd_low = self.qd;
        if self.qd + 1 == self.qd_high {
            self.stable += 1;
            if self.stable >= 3 {
                self.qd_high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.qd_high != self.iodepth {
            (self.qd + self.qd_high) / 2
        } else {
            self.qd * 2
        }
        .clamp(1, self.iodepth);
        let mut verdict = Verdict::Go;
        if !self.t.keep_running && self.qd == was {
            if self.end_run {
                verdict = Verdict::Done;
            } else {
                self.end_run = true;
                self.quiesce = true;
                self.reset_stats = true;
                verdict = Verdict::FinalWindow;
            }
        }
        self.new_window(now);
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose latency is `per_io_ns × depth`: the deepest queue
    /// meeting a target of 10 µs at 1 µs per queued I/O is 10.
    #[test]
    fn the_search_settles_on_the_deepest_queue_that_meets_the_target() {
        let t = LatencyTarget {
            target_ns: 10_000,
            window_ns: 1_000_000,
            percentile: 100.0,
            keep_running: false,
        };
        let mut s = LatSearch::new(t, 64, 0);
        let mut now = 0;
        let mut finals = 0;
        for _ in 0..10_000 {
            now += 100_000;
            let qd = u64::from(s.depth());
            s.completed(qd * 1_000, now).unwrap();
            s.quiesce = false;
            match s.check(now) {
                Verdict::Go => {}
                Verdict::FinalWindow => finals += 1,
                Verdict::Done => break,
            }
        }
        assert_eq!(s.depth(), 10);
        assert_eq!(finals, 1);
    }

    #[test]
    fn a_slow_io_at_depth_one_is_fatal_with_a_full_percentile() {
        let t = LatencyTarget {
            target_ns: 1_000,
            window_ns: 1_000_000,
            percentile: 100.0,
            keep_running: false,
        };
        let mut s = LatSearch::new(t, 8, 0);
        assert_eq!(s.completed(5_000, 1), Err(5_000));
        let lenient = LatencyTarget {
            percentile: 50.0,
            ..t
        };
        let mut s = LatSearch::new(lenient, 8, 0);
        assert_eq!(s.completed(5_000, 1), Ok(()));
    }
}
