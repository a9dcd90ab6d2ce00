//! The split of each I/O's latency along its path: the app's issue and
//! completion joined with the kernel's record of the same I/O (block layer
//! and driver tracepoints).

use crate::hist::Histogram;

/// Each I/O joined with the kernel's record of it (`block_io_start`,
/// `block_rq_issue`, `block_rq_complete` times): the split of every I/O's
/// latency along its path, with ssdready's own histogram precision.
///
/// The completion side starts at `block_rq_complete`, not `block_io_done`:
/// the kernel ends a request's bios (direct-I/O completion, posting the
/// io_uring CQE, waking the submitter) *before* it accounts `io_done`, so
/// the app can see an I/O complete before io_done; rq_complete is the last
/// kernel point that always precedes it.
#[derive(Clone, Debug, Default)]
pub struct IoSplit {
    /// App issue → block_io_start: system call, io_uring/VFS/file system,
    /// bio and request set-up.
    pub submit: Histogram,
    /// block_io_start → block_rq_issue: block layer and I/O scheduler.
    pub block: Histogram,
    /// block_rq_insert → block_rq_issue, for requests that were queued in an
    /// I/O scheduler (or a software queue) rather than issued directly: the
    /// part of `block` spent waiting there.
    pub queued: Histogram,
    /// block_rq_issue → block_rq_complete: driver and device.
    pub device: Histogram,
    /// block_rq_complete → the app sees the completion: ending the bios,
    /// completion delivery, wake-up, reaping.
    pub complete: Histogram,
    /// App-observed latency of the same I/Os (the sum of the four, I/O by I/O).
    pub total: Histogram,
    /// I/Os found in the join table.
    pub matched: u64,
    /// I/Os not found (merged into another request, split, their entry
    /// overwritten by a colliding I/O before the worker looked, or times
    /// that do not nest inside the app's).
    pub unmatched: u64,
}

/// One I/O's kernel record: CLOCK_MONOTONIC ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelTimes {
    pub io_start: u64,
    /// 0 when the request went straight to the driver.
    pub rq_insert: u64,
    pub rq_issue: u64,
    pub rq_complete: u64,
}

impl IoSplit {
    /// Add another worker's figures.
    pub fn merge(&mut self, o: &IoSplit) {
        self.submit.merge(&o.submit);
        self.block.merge(&o.block);
        self.queued.merge(&o.queued);
        self.device.merge(&o.device);
        self.complete.merge(&o.complete);
        self.total.merge(&o.total);
        self.matched += o.matched;
        self.unmatched += o.unmatched;
    }

    /// Record one I/O: the app's issue and the moment it saw the completion,
    /// and the kernel's record found for it, all CLOCK_MONOTONIC ns. A
    /// record whose times do not nest inside the app's was another I/O's.
    #[inline]
    pub fn record(&mut self, issue: u64, seen: u64, k: Option<KernelTimes>) {
        match k {
            Some(k)
                if issue <= k.io_start
                    && k.io_start <= k.rq_issue
                    && k.rq_issue <= k.rq_complete
                    && k.rq_complete <= seen =>
            {
                self.matched += 1;
                self.submit.record(k.io_start - issue);
                self.block.record(k.rq_issue - k.io_start);
                if k.rq_insert >= k.io_start && k.rq_insert <= k.rq_issue {
                    self.queued.record(k.rq_issue - k.rq_insert);
                }
                self.device.record(k.rq_complete - k.rq_issue);
                self.complete.record(seen - k.rq_complete);
                self.total.record(seen - issue);
            }
            _ => self.unmatched += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(io_start: u64, rq_issue: u64, rq_complete: u64) -> Option<KernelTimes> {
        Some(KernelTimes {
            io_start,
            rq_insert: 0,
            rq_issue,
            rq_complete,
        })
    }

    #[test]
    fn io_split_parts_add_up_to_each_ios_latency() {
        let mut s = IoSplit::default();
        s.record(1000, 1100, k(1010, 1015, 1090));
        s.record(2000, 2400, k(2100, 2150, 2300));
        assert_eq!((s.matched, s.unmatched), (2, 0));
        let sum = s.submit.sum() + s.block.sum() + s.device.sum() + s.complete.sum();
        assert_eq!(sum, s.total.sum());
        assert_eq!(s.total.sum(), 100 + 400);
        assert_eq!(s.device.max(), 150);
        assert_eq!(s.queued.count(), 0);
        s.record(
            3000,
            3100,
            Some(KernelTimes {
                io_start: 3010,
                rq_insert: 3012,
                rq_issue: 3042,
                rq_complete: 3090,
            }),
        );
        assert_eq!((s.queued.count(), s.queued.max()), (1, 30));
    }

    /// An entry left by an earlier I/O to the same sector starts before this
    /// I/O was issued; one of a later I/O completes after the app saw this
    /// one: both are another I/O's record, not this one's.
    #[test]
    fn io_split_refuses_records_that_do_not_nest() {
        let mut s = IoSplit::default();
        s.record(1000, 1100, k(900, 950, 990));
        s.record(1000, 1100, k(1010, 1020, 1200));
        s.record(1000, 1100, k(1050, 1040, 1060));
        s.record(1000, 1100, None);
        assert_eq!((s.matched, s.unmatched), (0, 4));
        assert_eq!(s.total.count(), 0);
    }
}
