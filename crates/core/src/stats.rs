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
    /// Per-I/O or averaged log samples, when a log was asked for.
    pub log: Option<Box<crate::iolog::IoLog>>,
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
        self.measured_ns = self.measured_ns.max(o.measured_ns);
        self.thread_cpu.user_ns += o.thread_cpu.user_ns;
        self.thread_cpu.sys_ns += o.thread_cpu.sys_ns;
        self.thread_cpu.ctx += o.thread_cpu.ctx;
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
        if let Some(l) = &mut self.log {
            l.clear();
        }
    }

    /// Completed I/Os over all directions.
    pub fn total_ios(&self) -> u64 {
        self.dirs.iter().flatten().map(|d| d.ios).sum()
    }
}
