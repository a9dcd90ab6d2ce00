//! What a worker counts while it runs: per direction, I/O and byte counts,
//! submission / completion / total latency histograms and a per-second series
//! (completions, bytes and a coarse histogram of their total latency, for
//! latency over time and heat maps).
//! A worker owns its [`WorkerStats`]; the run merges them at the end.

use crate::hist::{bucket_of, Histogram};
use crate::req::Ddir;

pub use crate::stats_iosplit::{IoSplit, KernelTimes};
pub use crate::stats_merge::MergeStats;
pub use crate::stats_prio::*;
pub use crate::stats_series::{
    sec_lat_bucket, sec_lat_bucket_low, SecSample, SecondMark, SEC_LAT_BUCKETS,
};
pub use crate::stats_verify::*;

/// Counters of one direction.
///
/// In the order written (`repr(C)`), the counts apart from each other: the
/// compiler would otherwise pack neighbouring counts of each completion
/// into vector additions that cost more instructions than they save.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct DirStats {
    /// Completed I/Os (including short ones).
    pub ios: u64,
    /// Submission latency: I/O created → submit call returned (async engines).
    pub slat: Histogram,
    /// Bytes transferred.
    pub bytes: u64,
    /// Completion latency: submitted → completion seen.
    pub clat: Histogram,
    /// I/Os that moved fewer bytes than asked.
    pub short_ios: u64,
    /// Total latency: created → completion seen.
    pub lat: Histogram,
    /// Completions and their latencies per second since the measured start.
    pub series: Vec<SecSample>,
    /// Latency per I/O priority, when cmdprio gives I/Os their own.
    pub prios: Option<Box<crate::stats_prio::PrioLat>>,
    /// The largest total latency of the second under way, when the series
    /// is kept by closing seconds ([`DirStats::close_second`]).
    pub sec_lat_max_ns: u64,
    /// Where the counters stood when the last second closed.
    pub mark: SecondMark,
}

impl DirStats {
    /// Count a completion of `bytes` at second `sec` of the measured window,
    /// straight into the series (for a caller that knows each I/O's second,
    /// as the virtual-time simulation; a worker closes seconds instead,
    /// [`DirStats::count`]).
    #[inline]
    pub fn account(&mut self, sec: usize, bytes: u64, short: bool) {
        self.second(sec, bytes, short);
    }

    /// Count a completion of `bytes` (the series gets it when its second
    /// closes, [`DirStats::close_second`]).
    #[inline(always)]
    pub fn count(&mut self, bytes: u64, short: bool) {
        self.ios += 1;
        self.bytes += bytes;
        self.short_ios += u64::from(short);
    }

    /// [`DirStats::count`] with the I/O's total latency. The total latency
    /// histogram's maximum is the seconds' (one comparison, not two): it is
    /// brought up to date as each second closes.
    #[inline(always)]
    pub fn count_lat(&mut self, bytes: u64, short: bool, lat: u64) {
        self.count(bytes, short);
        self.sec_max(lat);
        self.lat.record_in_below_max(bucket_of(lat), lat);
    }

    /// [`DirStats::count_lat`] of a synchronous I/O, whose completion
    /// latency is its total latency: both histograms, one bucket.
    #[inline(always)]
    pub fn count_sync(&mut self, bytes: u64, short: bool, lat: u64) {
        self.count(bytes, short);
        self.sec_max(lat);
        let b = bucket_of(lat);
        self.lat.record_in_below_max(b, lat);
        self.clat.record_in(b, lat);
    }

    /// The second's largest latency so far.
    #[inline(always)]
    fn sec_max(&mut self, lat: u64) {
        if lat > self.sec_lat_max_ns {
            self.sec_lat_max_ns = lat;
        }
    }

    /// Count an I/O in the totals but not in the series (fio's
    /// `fill_device`: the I/O that found the device full).
    pub fn count_outside_series(&mut self) {
        self.ios += 1;
        self.mark.skip_io();
    }

    /// Close second `sec` of the measured window: its sample is what was
    /// counted since the last close (`stats_series`).
    pub fn close_second(&mut self, sec: usize) {
        self.lat.raise_max(self.sec_lat_max_ns);
        let s = self
            .mark
            .close(self.ios, self.bytes, &self.lat, self.sec_lat_max_ns);
        self.sec_lat_max_ns = 0;
        if self.series.len() <= sec {
            self.series.resize_with(sec + 1, SecSample::default);
        }
        self.series[sec] = s;
    }

    /// Close the last second, `sec`, at the end of the run: the series
    /// then ends at the last second with a completion.
    pub fn close_series(&mut self, sec: usize) {
        self.close_second(sec);
        while self.series.last().is_some_and(|s| s.ios == 0) {
            self.series.pop();
        }
    }

    /// Count a completion of `bytes` in second `sec`; returns that second.
    #[inline]
    fn second(&mut self, sec: usize, bytes: u64, short: bool) -> &mut SecSample {
        self.ios += 1;
        self.bytes += bytes;
        self.short_ios += u64::from(short);
        let s = if sec < self.series.len() {
            &mut self.series[sec]
        } else {
            self.grow_series(sec)
        };
        s.ios += 1;
        s.bytes += bytes;
        s
    }

    /// The series up to second `sec` (once a second, out of line).
    #[cold]
    #[inline(never)]
    fn grow_series(&mut self, sec: usize) -> &mut SecSample {
        self.series.resize_with(sec + 1, SecSample::default);
        &mut self.series[sec]
    }

    /// Count a completion's total latency: in the run's histogram and in
    /// second `sec`'s (counted by [`DirStats::account`] first).
    #[inline]
    pub fn record_lat(&mut self, sec: usize, lat: u64) {
        self.lat.record(lat);
        if let Some(s) = self.series.get_mut(sec) {
            s.record_lat(lat);
        }
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
            a.merge(b);
        }
        if let Some(op) = &o.prios {
            self.prios.get_or_insert_with(Box::default).merge(op);
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
        if let Some(p) = &mut self.prios {
            p.clear();
        }
        self.sec_lat_max_ns = 0;
        self.mark.clear();
    }
}

/// fio's depth buckets: `1, 2, 4, 8, 16, 32, >=64` for queue depth at issue.
#[inline]
pub fn depth_bucket(n: usize) -> usize {
    // floor(log2 n), 0 for 0 and 1, at most 6 (no chain of comparisons:
    // this is counted at every submission).
    ((usize::BITS - 1 - (n | 1).leading_zeros()) as usize).min(6)
}

/// fio's batch buckets: `0, 4, 8, 16, 32, 64, >=64` for I/Os per submit or reap call.
#[inline]
pub fn batch_bucket(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    // ceil(log2 n) - 1, between 1 and 6.
    let ceil_log2 = usize::BITS - (n - 1).leading_zeros();
    (ceil_log2.saturating_sub(1) as usize).clamp(1, 6)
}

/// CPU used by one worker thread over its measured window (getrusage
/// RUSAGE_THREAD), and the time it waited on a run queue for a CPU
/// (`/proc/thread-self/schedstat`, its second field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadCpu {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub ctx: u64,
    /// Runnable but not running, ns (0 where the kernel has no schedstat).
    pub wait_ns: u64,
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
    /// Errors gone past under `continue_on_error`, ramp included (fio's
    /// `total_err`); they are in `errors` too when measured, never in
    /// `first_error`.
    pub continued: u64,
    /// The first of them, as text and errno (fio's `first_error`).
    pub first_continued: Option<String>,
    pub first_continued_errno: i32,
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
    /// What the temporal merge layer counted (`temporal_merge`).
    pub temporal_merge: Option<Box<MergeStats>>,
    /// `lat_from=schedule`: lateness and the latency from issue
    /// ([`crate::arrivals`]).
    pub schedule: Option<Box<crate::arrivals::ScheduleStats>>,
    /// Syncs (`fsync=N`, `fdatasync=N`), when the job issued any.
    pub sync: Option<Box<SyncStats>>,
    /// `serialize_overlap`: requests that waited for an overlapping one in
    /// flight to complete (None: the job does not serialize).
    pub overlaps_waited: Option<u64>,
    /// Data verification, when the job verified.
    pub verify: Option<Box<VerifyStats>>,
    /// `write_iolog`: (path, text) of the requests the worker issued.
    pub iolog_record: Option<Box<(String, String)>>,
    /// zonemode=zbd: zone resets this worker made (fio's nr_zone_resets).
    pub zone_resets: Option<u64>,
    /// The queue depth `latency_target`'s search settled on.
    pub latency_depth: Option<u32>,
}

/// The syncs a worker issued during its measured window (fio's `sync`
/// section; `end_fsync` and `fsync_on_close` are not counted, as in fio).
#[derive(Clone, Debug, Default)]
pub struct SyncStats {
    /// `fsync(2)` calls completed.
    pub fsyncs: u64,
    /// `fdatasync(2)` calls completed.
    pub fdatasyncs: u64,
    /// `sync_file_range(2)` calls completed (`sync_file_range`).
    pub sync_ranges: u64,
    /// Their latency: issued → completed.
    pub lat: Histogram,
}

/// A direction's stats, created (its histograms allocated) on first use:
/// kept out of line, so that [`WorkerStats::dir`] stays a check and a load.
#[cold]
#[inline(never)]
fn new_dir(slot: &mut Option<Box<DirStats>>) {
    *slot = Some(Box::default());
}

impl WorkerStats {
    /// Close second `sec` of every direction's series
    /// ([`DirStats::close_second`]).
    #[cold]
    #[inline(never)]
    pub fn close_second(&mut self, sec: usize) {
        for d in self.dirs.iter_mut().flatten() {
            d.close_second(sec);
        }
    }

    /// Close the last second, `sec`, of every direction's series at the end
    /// of the run ([`DirStats::close_series`]).
    pub fn close_series(&mut self, sec: usize) {
        for d in self.dirs.iter_mut().flatten() {
            d.close_series(sec);
        }
    }

    /// The stats of `d`, created on first use.
    #[inline]
    pub fn dir(&mut self, d: Ddir) -> &mut DirStats {
        let slot = &mut self.dirs[d.idx()];
        if slot.is_none() {
            new_dir(slot);
        }
        match slot {
            Some(stats) => stats,
            None => unreachable!("created above"),
        }
    }

    /// Count an error gone past (`continue_on_error`), keeping the first.
    pub fn go_past(&mut self, errno: i32, what: impl FnOnce() -> String) {
        self.continued += 1;
        if self.first_continued.is_none() {
            self.first_continued = Some(what());
            self.first_continued_errno = errno;
        }
    }

    /// Add another worker's stats.
    pub fn merge(&mut self, o: &WorkerStats) {
        for d in Ddir::ALL {
            if let Some(od) = &o.dirs[d.idx()] {
                self.dir(d).merge(od);
            }
        }
        self.errors += o.errors;
        self.continued += o.continued;
        if self.first_continued.is_none() {
            self.first_continued.clone_from(&o.first_continued);
            self.first_continued_errno = o.first_continued_errno;
        }
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
            self.first_errno = o.first_errno;
        }
        if let Some(oa) = &o.io_split {
            self.io_split.get_or_insert_with(Box::default).merge(oa);
        }
        if let Some(om) = &o.temporal_merge {
            self.temporal_merge
                .get_or_insert_with(Box::default)
                .merge(om);
        }
        if let Some(os) = &o.schedule {
            self.schedule
                .get_or_insert_with(|| Box::new(crate::arrivals::ScheduleStats::new(0)))
                .merge(os);
        }
        if let Some(n) = o.overlaps_waited {
            *self.overlaps_waited.get_or_insert(0) += n;
        }
        if let Some(os) = &o.sync {
            let s = self.sync.get_or_insert_with(Box::default);
            s.fsyncs += os.fsyncs;
            s.fdatasyncs += os.fdatasyncs;
            s.sync_ranges += os.sync_ranges;
            s.lat.merge(&os.lat);
        }
        if let Some(ov) = &o.verify {
            self.verify.get_or_insert_with(Box::default).merge(ov);
        }
        if let Some(z) = o.zone_resets {
            *self.zone_resets.get_or_insert(0) += z;
        }
        self.measured_ns = self.measured_ns.max(o.measured_ns);
        self.latency_depth = self.latency_depth.or(o.latency_depth);
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
        // A failed verification during the ramp stays a failure.
        let verify_failures = self.verify.as_ref().map_or(0, |v| v.failed);
        self.errors = verify_failures;
        if verify_failures == 0 {
            self.first_error = None;
            self.first_errno = 0;
        }
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
        if let Some(m) = &mut self.temporal_merge {
            **m = MergeStats::default();
        }
        if let Some(s) = &mut self.schedule {
            s.clear();
        }
        // Syncs restart with the measured window; verify findings are kept:
        // a failure during the ramp is still a failure.
        if let Some(s) = &mut self.sync {
            **s = SyncStats::default();
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
    use crate::hist::{bucket_bounds, NUM_BUCKETS};
    use crate::stats_series::SEC_OF_BUCKET;

    #[test]
    fn depth_and_batch_buckets_are_fios() {
        // fio's tables, as ranges.
        let depth = |n: usize| match n {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        let batch = |n: usize| match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        for n in (0..5000).chain([usize::MAX / 2, usize::MAX - 1, usize::MAX]) {
            assert_eq!(depth_bucket(n), depth(n), "depth {n}");
            assert_eq!(batch_bucket(n), batch(n), "batch {n}");
        }
    }

    #[test]
    fn sec_lat_buckets_are_contiguous_and_within_an_eighth() {
        assert_eq!((0..4).map(sec_lat_bucket).collect::<Vec<_>>(), [0, 1, 2, 3]);
        for b in 0..SEC_LAT_BUCKETS - 1 {
            let (lo, hi) = (sec_lat_bucket_low(b), sec_lat_bucket_low(b + 1));
            assert!(lo < hi, "bucket {b}");
            assert_eq!(sec_lat_bucket(lo), b);
            assert_eq!(sec_lat_bucket(hi - 1), b);
            // The midpoint represents every value of the bucket within 12.5 %.
            let mid = (lo + hi) as f64 / 2.0;
            assert!(
                (mid - lo as f64) <= 0.125 * lo.max(1) as f64 + 0.5,
                "bucket {b}"
            );
        }
        assert_eq!(sec_lat_bucket(u64::MAX), SEC_LAT_BUCKETS - 1);
        assert_eq!(sec_lat_bucket(1 << 40), SEC_LAT_BUCKETS - 1);
    }

    #[test]
    fn a_latencys_second_bucket_follows_from_its_run_bucket() {
        // Every run bucket's first and last value, and values around each
        // per-second boundary and the clamps.
        let mut values = vec![0, u64::MAX, (1 << 40) - 1, 1 << 40, 1 << 44, (1 << 44) - 1];
        for i in 0..NUM_BUCKETS {
            let (lo, width) = bucket_bounds(i);
            values.extend([lo, lo + width - 1]);
        }
        for b in 0..SEC_LAT_BUCKETS {
            let lo = sec_lat_bucket_low(b);
            values.extend([lo.saturating_sub(1), lo, lo + 1]);
        }
        for v in values {
            let via_run = usize::from(SEC_OF_BUCKET[bucket_of(v)]);
            assert_eq!(via_run, sec_lat_bucket(v), "{v} ns");
        }
    }

    #[test]
    fn per_second_latency_keeps_mean_p99_and_max_per_second() {
        let mut d = DirStats::default();
        for i in 0..99 {
            d.account(0, 4096, false);
            d.record_lat(0, 10_000 + i);
        }
        d.account(0, 4096, false);
        d.record_lat(0, 1_000_000);
        d.account(2, 4096, false);
        d.record_lat(2, 50_000);
        assert_eq!(d.series.len(), 3);
        let s0 = &d.series[0];
        assert_eq!(
            (s0.ios, s0.lat_count(), s0.lat_max_ns),
            (100, 100, 1_000_000)
        );
        let mean = (99 * 10_000 + (0..99).sum::<u64>() + 1_000_000) as f64 / 100.0;
        assert!((s0.lat_mean_ns() - mean).abs() < 1e-6);
        let p99 = s0.lat_percentile(99.0) as f64;
        assert!((p99 - 10_049.0).abs() / 10_049.0 <= 0.125, "{p99}");
        let top = s0.lat_percentile(100.0);
        assert!((875_000..=1_000_000).contains(&top), "{top}");
        assert_eq!(d.series[1].lat_count(), 0);
        assert_eq!(d.series[1].lat_percentile(99.0), 0);
        assert_eq!(d.lat.count(), 101, "the run's histogram counts them too");
    }

    #[test]
    fn closing_seconds_gives_the_series_counting_each_io_gives() {
        // Completions in non-decreasing seconds, some seconds without any,
        // some without a latency (fio's FIO_NOSTATS), one outside the
        // series (fill_device), latencies over the whole range.
        let (mut each, mut closed) = (DirStats::default(), DirStats::default());
        let (mut sec, mut x) = (0usize, 0x9e37_79b9_7f4a_7c15u64);
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 500 == 0 {
                let next = sec + 1 + (x / 500 % 3) as usize;
                closed.close_second(sec);
                sec = next;
            }
            let lat = (x >> 20) >> (x % 41);
            let bytes = 512 * (1 + x % 8);
            let short = x % 97 == 0;
            match i % 211 {
                0 => {
                    each.account(sec, bytes, short);
                    closed.count(bytes, short);
                }
                1 => {
                    each.ios += 1;
                    closed.count_outside_series();
                }
                _ => {
                    each.account(sec, bytes, short);
                    each.record_lat(sec, lat);
                    closed.count_lat(bytes, short, lat);
                }
            }
        }
        closed.close_series(sec);
        assert!(each.series.len() > 40, "{} seconds", each.series.len());
        assert_eq!(closed.series, each.series);
        assert_eq!((closed.ios, closed.bytes), (each.ios, each.bytes));
        assert_eq!(closed.lat, each.lat);
        // Cleared (the end of the ramp), it starts again from nothing.
        closed.clear();
        closed.count_lat(4096, false, 7_000);
        closed.close_series(2);
        assert_eq!(closed.series.len(), 3);
        assert_eq!(
            (closed.series[2].ios, closed.series[2].lat_max_ns),
            (1, 7_000)
        );
        assert_eq!(closed.series[0], SecSample::default());
    }

    #[test]
    fn per_second_latency_merges_across_workers() {
        let (mut a, mut b) = (DirStats::default(), DirStats::default());
        a.account(0, 1, false);
        a.record_lat(0, 100);
        b.account(1, 1, false);
        b.record_lat(1, 300);
        b.account(0, 1, false);
        b.record_lat(0, 500);
        a.merge(&b);
        assert_eq!(a.series.len(), 2);
        assert_eq!((a.series[0].ios, a.series[0].lat_count()), (2, 2));
        assert_eq!(a.series[0].lat_mean_ns(), 300.0);
        assert_eq!(a.series[0].lat_max_ns, 500);
        assert_eq!(a.series[1].lat_mean_ns(), 300.0);
    }

    #[test]
    fn per_second_json_round_trips_and_reads_old_results() {
        let mut s = SecSample {
            ios: 3,
            bytes: 12_288,
            ..SecSample::default()
        };
        for v in [1_000, 2_000, 40_000] {
            s.record_lat(v);
        }
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["lat_max_ns"], 40_000);
        assert_eq!(v["lat_buckets"]["first"], sec_lat_bucket(1_000));
        let n: u64 = v["lat_buckets"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(n, 3);
        let back: SecSample = serde_json::from_value(v).unwrap();
        assert_eq!(back, s);
        let old: SecSample = serde_json::from_str(r#"{"ios": 7, "bytes": 28672}"#).unwrap();
        assert_eq!((old.ios, old.lat_count(), old.lat_mean_ns()), (7, 0, 0.0));
    }
}
