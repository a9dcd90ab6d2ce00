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

/// Everything one worker counted.
#[derive(Clone, Debug, Default)]
pub struct WorkerStats {
    /// Per direction, allocated on first use.
    pub dirs: [Option<Box<DirStats>>; 3],
    /// Errors seen (first message kept).
    pub errors: u64,
    /// The first error, as text.
    pub first_error: Option<String>,
    /// Length of the measured window of this worker, ns.
    pub measured_ns: u64,
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
        }
        self.measured_ns = self.measured_ns.max(o.measured_ns);
    }

    /// Forget everything (end of ramp).
    pub fn clear(&mut self) {
        for d in self.dirs.iter_mut().flatten() {
            d.clear();
        }
        self.errors = 0;
        self.first_error = None;
    }

    /// Completed I/Os over all directions.
    pub fn total_ios(&self) -> u64 {
        self.dirs.iter().flatten().map(|d| d.ios).sum()
    }
}
