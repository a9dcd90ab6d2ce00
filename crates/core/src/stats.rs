//! What a worker counts while it runs: per direction, I/O and byte counts,
//! submission / completion / total latency histograms and a per-second series.
//! A worker owns its [`WorkerStats`]; the run merges them at the end.

use crate::hist::Histogram;
use crate::req::Ddir;
use serde::{Deserialize, Serialize};

/// One second of the per-second series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecSample {
    /// I/Os completed in that second.
    pub ios: u64,
    /// Bytes completed in that second.
    pub bytes: u64,
}

/// Counters of one direction.
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    /// Completed I/Os (including short ones).
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// I/Os that moved fewer bytes than asked.
    pub short_ios: u64,
    /// Submission latency: I/O created → submit call returned (async engines).
    pub slat: Histogram,
    /// Completion latency: submitted → completion seen.
    pub clat: Histogram,
    /// Total latency: created → completion seen.
    pub lat: Histogram,
    /// Completions per second since the measured start.
    pub series: Vec<SecSample>,
}

impl DirStats {
    /// Count a completion of `bytes` at second `sec` of the measured window.
    #[inline]
    pub fn account(&mut self, sec: usize, bytes: u64, short: bool) {
        self.ios += 1;
        self.bytes += bytes;
        self.short_ios += u64::from(short);
        if sec >= self.series.len() {
            self.series.resize(sec + 1, SecSample::default());
        }
        let s = &mut self.series[sec];
        s.ios += 1;
        s.bytes += bytes;
    }

    /// Add another worker's counters.
    pub fn merge(&mut self, o: &DirStats) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.short_ios += o.short_ios;
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.lat.merge(&o.lat);
        if o.series.len() > self.series.len() {
            self.series.resize(o.series.len(), SecSample::default());
        }
        for (a, b) in self.series.iter_mut().zip(&o.series) {
            a.ios += b.ios;
            a.bytes += b.bytes;
        }
    }

    /// Forget everything (end of ramp).
    pub fn clear(&mut self) {
        self.ios = 0;
        self.bytes = 0;
        self.short_ios = 0;
        self.slat.clear();
        self.clat.clear();
        self.lat.clear();
        self.series.clear();
    }
}

/// fio's depth buckets: `1, 2, 4, 8, 16, 32, >=64` for queue depth at issue.
#[inline]
pub fn depth_bucket(n: usize) -> usize {
    match n {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// fio's batch buckets: `0, 4, 8, 16, 32, 64, >=64` for I/Os per submit or reap call.
#[inline]
pub fn batch_bucket(n: usize) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// CPU used by one worker thread over its measured window (getrusage RUSAGE_THREAD).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadCpu {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub ctx: u64,
}

/// Everything one worker counted.
#[derive(Clone, Debug, Default)]
pub struct WorkerStats {
    /// Per direction, allocated on first use.
    pub dirs: [Option<Box<DirStats>>; 3],
    /// Errors seen (first message kept).
    pub errors: u64,
    /// The first error, as text.
    pub first_error: Option<String>,
    /// The errno of the first error (fio's `error`), 0 if none.
    pub first_errno: i32,
    /// Length of the measured window of this worker, ns.
    pub measured_ns: u64,
    /// The worker thread's own CPU over the window.
    pub thread_cpu: ThreadCpu,
    /// I/Os issued, by queue depth after issue ([`depth_bucket`]).
    pub depth_at_issue: [u64; 7],
    /// Submit calls, by I/Os submitted ([`batch_bucket`]).
    pub submit_batches: [u64; 7],
    /// Reap calls that returned I/Os, by I/Os reaped ([`batch_bucket`]).
    pub complete_batches: [u64; 7],
    /// Completion events: reaps that returned I/Os, plus synchronous
    /// completions (each its own event).
    pub completion_events: u64,
    /// Run time of the worker's SQPOLL kernel thread over the window, ns
    /// (`sqthread_poll`; 0 otherwise).
    pub sq_thread_ns: u64,
    /// Per-I/O or averaged log samples, when a log was asked for.
    pub log: Option<Box<crate::iolog::IoLog>>,
    /// The per-I/O latency split (`--decompose`, tp_btf).
    pub io_split: Option<Box<IoSplit>>,
}

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

impl WorkerStats {
    /// The stats of `d`, created on first use.
    #[inline]
    pub fn dir(&mut self, d: Ddir) -> &mut DirStats {
        self.dirs[d.idx()].get_or_insert_with(Box::default)
    }

    /// Add another worker's stats.
    pub fn merge(&mut self, o: &WorkerStats) {
        for d in Ddir::ALL {
            if let Some(od) = &o.dirs[d.idx()] {
                self.dir(d).merge(od);
            }
        }
        self.errors += o.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
            self.first_errno = o.first_errno;
        }
        if let Some(oa) = &o.io_split {
            self.io_split.get_or_insert_with(Box::default).merge(oa);
        }
        self.measured_ns = self.measured_ns.max(o.measured_ns);
        self.thread_cpu.user_ns += o.thread_cpu.user_ns;
        self.thread_cpu.sys_ns += o.thread_cpu.sys_ns;
        self.thread_cpu.ctx += o.thread_cpu.ctx;
        self.completion_events += o.completion_events;
        self.sq_thread_ns += o.sq_thread_ns;
        for i in 0..7 {
            self.depth_at_issue[i] += o.depth_at_issue[i];
            self.submit_batches[i] += o.submit_batches[i];
            self.complete_batches[i] += o.complete_batches[i];
        }
    }

    /// Forget everything (end of ramp).
    pub fn clear(&mut self) {
        for d in self.dirs.iter_mut().flatten() {
            d.clear();
        }
        self.errors = 0;
        self.first_error = None;
        self.first_errno = 0;
        self.depth_at_issue = [0; 7];
        self.submit_batches = [0; 7];
        self.complete_batches = [0; 7];
        self.completion_events = 0;
        if let Some(l) = &mut self.log {
            l.clear();
        }
        if let Some(a) = &mut self.io_split {
            **a = IoSplit::default();
        }
    }

    /// Completed I/Os over all directions.
    pub fn total_ios(&self) -> u64 {
        self.dirs.iter().flatten().map(|d| d.ios).sum()
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
