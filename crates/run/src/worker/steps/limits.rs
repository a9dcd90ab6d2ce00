//! Three rules of the loop kept apart from its steps: fio's refill
//! watermark (`iodepth_low`: once the queue is full it drains to that depth
//! before it is filled again), `max_latency` (an I/O slower than it ends
//! the job with ETIMEDOUT, as fio's lat_fatal) and the minimum rates
//! (`rate_min`, `rate_iops_min`: a slower cycle ends the job with EIO).

use super::{Loop, Slot};

impl Loop<'_> {
    /// Whether issuing waits for the queue to drain to `iodepth_low`.
    #[inline]
    pub(super) fn holding_for_low_mark(&mut self) -> bool {
        if self.inflight >= self.depth && self.refill_at < self.depth {
            self.holding = true;
        } else if self.holding && self.inflight <= self.refill_at {
            self.holding = false;
        }
        self.holding
    }

    /// End the job when an I/O took longer than `max_latency` (issue to
    /// completion `t`), as fio: the I/O still counts; ETIMEDOUT is the
    /// job's error.
    #[inline]
    pub(super) fn check_max_latency(&mut self, s: &Slot, offset: u64, t: u64) {
        let ddir = s.ddir;
        let max = self.ctx.job.run_loop.max_latency_ns[ddir.idx()];
        let lat = t.saturating_sub(s.issue_ns);
        if max == 0 || lat <= max {
            return;
        }
        if self.stats.first_error.is_none() {
            self.stats.first_errno = libc::ETIMEDOUT;
            self.stats.first_error = Some(format!(
                "max latency exceeded: a {} of {} bytes at offset {} took {lat} ns, over max_latency ({max} ns)",
                ddir.name(),
                s.len,
                offset
            ));
        }
        self.done_issuing = true;
    }

    /// fio's check_min_rate: once the job has run 2 s and is past its ramp,
    /// each direction that moved data must keep `rate_min` bytes/s (or,
    /// without it, `rate_iops_min` IOPS) over every `rate_cycle`; a slower
    /// cycle ends the job with EIO, as in fio.
    #[cold]
    pub(super) fn check_min_rate(&mut self) {
        let cfg = &self.ctx.job.run_loop;
        let now = self.ctx.clock.now();
        let live: [(u64, u64); 3] = std::array::from_fn(|d| self.live(d));
        let Some(checked) = self.min_rate.as_mut() else {
            return;
        };
        if !self.measuring || now.saturating_sub(self.start) < 2_000_000_000 {
            return;
        }
        for (d, last) in checked.iter_mut().enumerate() {
            let (min_bytes, min_iops) = (cfg.rate_min_bytes[d], cfg.rate_iops_min[d]);
            let (ios, bytes) = live[d];
            if (min_bytes.is_none() && min_iops.is_none()) || bytes == 0 {
                continue;
            }
            if let Some((last_bytes, last_ios, at)) = *last {
                let spent_ms = now.saturating_sub(at) / 1_000_000;
                if spent_ms == 0 || spent_ms < cfg.rate_cycle_ms {
                    continue;
                }
                let (got, want, what) = match (min_bytes, min_iops) {
                    (Some(m), _) => ((bytes - last_bytes) * 1000 / spent_ms, m, "rate_min"),
                    (None, Some(m)) => ((ios - last_ios) * 1000 / spent_ms, m, "rate_iops_min"),
                    (None, None) => continue,
                };
                if got < want {
                    let unit = if what == "rate_min" { "B/s" } else { " IOPS" };
                    if self.stats.first_error.is_none() {
                        self.stats.first_errno = libc::EIO;
                        self.stats.first_error = Some(format!(
                            "{}: {what}={want}{unit} not met, got {got}{unit}",
                            ssdready_core::spec::DIRECTIONS[d]
                        ));
                    }
                    self.done_issuing = true;
                    return;
                }
            }
            *last = Some((bytes, ios, now));
        }
    }
}
