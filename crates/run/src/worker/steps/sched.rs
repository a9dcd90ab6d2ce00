//! The loop's steps for the scheduling options ([`ssdready_core::sched`]):
//! the latency-target search between reaps, and the write-buffer filler
//! with its dedupe working set.

use super::Loop;
use crate::worker::ctx::WorkerCtx;
use crate::worker::lattarget::Verdict;
use ssdready_workload::buffers::BufferFiller;

/// The job's write-buffer filler. With `dedupe_mode=working_set` its
/// working set is the job's size × `dedupe_working_set_percentage` ÷ the
/// smallest write (fio's `num_unique_pages`), from this worker's first
/// fresh writes or, with `dedupe_global`, from those of every worker of
/// the run in turn (fio rotates over its thread numbers).
pub(super) fn filler(ctx: &WorkerCtx) -> BufferFiller {
    let cfg = &ctx.job.buffers;
    let filler = BufferFiller::new(cfg.options.clone(), cfg.seed_of(ctx.number));
    let Some(set) = cfg.working_set else {
        return filler;
    };
    let pages = set.pages(ctx.regions.iter().map(|r| r.len).sum());
    let workers = ctx.run_workers.max(ctx.number);
    let members: Vec<u64> = if cfg.options.dedupe_global {
        (0..workers)
            .map(|i| cfg.seed_of((ctx.number - 1 + i) % workers + 1))
            .collect()
    } else {
        vec![cfg.seed_of(ctx.number)]
    };
    filler.with_working_set(pages, &members)
}

impl Loop<'_> {
    /// Between reaps: the search's window check, and its depth applied —
    /// after a ramp down, only once the queue has emptied (fio's quiesce).
    pub(super) fn check_latency(&mut self) {
        let now = self.ctx.clock.now();
        let Some(l) = self.lat.as_deref_mut() else {
            return;
        };
        if self.measuring && l.check(now) == Verdict::Done {
            self.done_issuing = true;
        }
        if l.quiesce {
            if self.inflight > 0 {
                self.depth_cap = 0;
                return;
            }
            l.quiesce = false;
        }
        let depth = l.depth();
        self.depth_cap = (depth as usize).clamp(1, self.depth);
        if std::mem::take(&mut l.reset_stats) {
            // Converged: fio counts only the final window, at the depth found.
            self.restart_measuring(now);
        }
        self.stats.latency_depth = Some(depth);
    }

    /// fio's `lat_fatal`: an I/O over `latency_target` at queue depth 1
    /// (with a 100 % percentile) ends the job with ETIMEDOUT.
    #[cold]
    pub(super) fn latency_missed(&mut self, lat_ns: u64) {
        let target = self.lat.as_deref().map_or(0, |l| l.target_ns());
        if self.measuring {
            self.stats.errors += 1;
        }
        if self.stats.first_error.is_none() {
            self.stats.first_errno = libc::ETIMEDOUT;
            self.stats.first_error = Some(format!(
                "latency target {} us not met even at queue depth 1: an I/O took {} us \
                 (fio: max latency exceeded, ETIMEDOUT)",
                target / 1000,
                lat_ns / 1000
            ));
        }
        self.done_issuing = true;
    }

    /// The worker's sample log reached its bound: the job stops issuing,
    /// with an error that says so (ENOMEM), as a memory bound should.
    #[cold]
    pub(super) fn log_full(&mut self) {
        if self.stats.first_error.is_none() {
            self.stats.first_errno = libc::ENOMEM;
            self.stats.first_error = Some(crate::logs::full_error(&self.ctx.job.logs));
        }
        self.done_issuing = true;
    }
}
