//! Two rules of the loop kept apart from its steps: fio's refill
//! watermark (`iodepth_low`: once the queue is full it drains to that depth
//! before it is filled again) and `max_latency` (an I/O slower than it ends
//! the job with ETIMEDOUT, as fio's lat_fatal).

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
        let max = self.ctx.spec.run.max_latency_ns[ddir.idx()];
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
}
