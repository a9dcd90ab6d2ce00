//! Open-loop arrivals and latency measured from the schedule
//! (`lat_from=schedule`).
//!
//! A rate-limited job (`rate_iops`, `rate`, with `rate_process=linear` or
//! `poisson`) has a schedule of intended issue times fixed in advance:
//! `ssdready_workload::rate::Pacer` moves each direction's due time on by one gap per
//! I/O, whatever the completions do, and an I/O that is due while the queue
//! (`iodepth`, here only a cap on what is outstanding) is full goes as soon
//! as a slot frees — late, never dropped, and the schedule is not slowed.
//!
//! fio measures an I/O's latency from its actual issue. When the device
//! stalls, the I/Os that should have been issued during the stall wait in
//! the generator, not in the device, and that wait is charged to nobody:
//! coordinated omission (Gil Tene's term; wrk2 measures HTTP latency from
//! each request's intended start for this reason). With
//! `lat_from=schedule` the job's latency (`lat`, its percentiles, the
//! per-second series) is measured from each I/O's intended issue time, so
//! time spent waiting behind a stall counts for every I/O it delayed; the
//! latency from the actual issue is kept beside it ([`ScheduleStats`]),
//! with the arrivals issued late (the cap was full, or the host was busy)
//! and the worst lateness. `lat_from=issue`, fio's behaviour, is the
//! default.
//!
//! An arrival is late when it was issued more than a threshold after its
//! intended time: 0 in virtual time (where an on-time issue is exact), and
//! [`LATE_REAL_NS`] in real time (above a sleeping worker's wake-up
//! slack).

use crate::hist::{Histogram, LatSummary};
use crate::req::Ddir;
use crate::spec::JobSpec;
use serde::{Deserialize, Serialize};

/// Real time: lateness beyond which an arrival counts as late, ns.
pub const LATE_REAL_NS: u64 = 50_000;

/// What a worker counted about its arrivals (`lat_from=schedule`).
#[derive(Clone, Debug, Default)]
pub struct ScheduleStats {
    /// Per direction: latency from the actual issue (fio's), while the
    /// direction's `lat` holds the latency from the schedule.
    pub from_issue: [Option<Box<Histogram>>; 3],
    /// Issue time less intended time, every arrival.
    pub lateness: Histogram,
    /// Arrivals issued more than `late_threshold_ns` after their time.
    pub late: u64,
    pub late_threshold_ns: u64,
}

impl ScheduleStats {
    /// Empty stats with the given lateness threshold.
    pub fn new(late_threshold_ns: u64) -> Self {
        ScheduleStats {
            late_threshold_ns,
            ..ScheduleStats::default()
        }
    }

    /// One I/O of direction `d`: intended at `intended`, issued at
    /// `issued`, completed at `done` (ns, one clock); returns its latency
    /// from the schedule.
    #[inline]
    pub fn record(&mut self, d: Ddir, intended: u64, issued: u64, done: u64) -> u64 {
        let late = issued.saturating_sub(intended);
        self.lateness.record(late);
        if late > self.late_threshold_ns {
            self.late += 1;
        }
        self.from_issue[d.idx()]
            .get_or_insert_with(Box::default)
            .record(done.saturating_sub(issued));
        done.saturating_sub(intended.min(issued))
    }

    /// Add another worker's.
    pub fn merge(&mut self, o: &ScheduleStats) {
        for d in Ddir::ALL {
            if let Some(h) = &o.from_issue[d.idx()] {
                self.from_issue[d.idx()]
                    .get_or_insert_with(Box::default)
                    .merge(h);
            }
        }
        self.lateness.merge(&o.lateness);
        self.late += o.late;
        self.late_threshold_ns = self.late_threshold_ns.max(o.late_threshold_ns);
    }

    /// Forget the counts (end of ramp).
    pub fn clear(&mut self) {
        *self = ScheduleStats::new(self.late_threshold_ns);
    }
}

/// The schedule's part of a job's result (`lat_from=schedule`; absent
/// otherwise). docs/result-schema.md describes each field.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ScheduleResult {
    /// What the directions' `lat` is measured from: `schedule`.
    pub lat_from: String,
    /// `linear` (fixed gaps) or `poisson`.
    pub process: String,
    /// The offered load: intended arrivals per second, all workers and
    /// directions (from `rate_iops`, or `rate` over the smallest block).
    pub offered_iops: f64,
    /// Arrivals issued in the measured window.
    pub arrivals: u64,
    /// Of them, issued more than `late_threshold_ns` after their intended
    /// time (the `iodepth` cap was full, or the host was busy).
    pub late: u64,
    pub late_threshold_ns: u64,
    /// The worst lateness, ns.
    pub worst_late_ns: u64,
    /// Lateness of every arrival (issue less intended time).
    pub lateness: LatSummary,
    /// Per direction: the latency from the actual issue (fio's `lat`); the
    /// direction's own `lat` is from the schedule.
    pub read_from_issue: Option<LatSummary>,
    pub write_from_issue: Option<LatSummary>,
    pub trim_from_issue: Option<LatSummary>,
}

impl ScheduleResult {
    /// The result of `spec`'s merged schedule counters.
    pub fn of(spec: &JobSpec, s: &ScheduleStats) -> Self {
        let pcts = &spec.percentile_list;
        let dir = |d: Ddir| {
            s.from_issue[d.idx()]
                .as_deref()
                .map(|h| LatSummary::of(h, pcts))
        };
        ScheduleResult {
            lat_from: "schedule".into(),
            process: if spec.sched.poisson {
                "poisson"
            } else {
                "linear"
            }
            .into(),
            offered_iops: offered_iops(spec),
            arrivals: s.lateness.count(),
            late: s.late,
            late_threshold_ns: s.late_threshold_ns,
            worst_late_ns: s.lateness.max(),
            lateness: LatSummary::of(&s.lateness, pcts),
            read_from_issue: dir(Ddir::Read),
            write_from_issue: dir(Ddir::Write),
            trim_from_issue: dir(Ddir::Trim),
        }
    }
}

/// Intended arrivals per second of one worker in direction `d` (None: the
/// direction is not limited).
pub fn dir_rate(spec: &JobSpec, d: usize) -> Option<f64> {
    match (spec.rate_bytes[d], spec.rate_iops[d]) {
        (Some(b), _) => Some(b as f64 / f64::from(spec.bs.for_dir(d).min().max(1))),
        (None, Some(iops)) => Some(iops as f64),
        (None, None) => None,
    }
}

/// The directions the job's workload issues (by its `rw` and `rwmixread`).
fn issues(spec: &JobSpec, d: usize) -> bool {
    use crate::spec::RwMode as M;
    let mixed = spec.rw.is_mixed();
    match d {
        0 => matches!(spec.rw, M::Read | M::RandRead) || (mixed && spec.rwmixread > 0),
        1 => matches!(spec.rw, M::Write | M::RandWrite) || (mixed && spec.rwmixread < 100),
        _ => spec.rw.trims(),
    }
}

/// The offered load of the whole job: intended arrivals per second over
/// its workers and the directions it issues.
pub fn offered_iops(spec: &JobSpec) -> f64 {
    let per_worker: f64 = (0..3)
        .filter(|&d| issues(spec, d))
        .filter_map(|d| dir_rate(spec, d))
        .sum();
    per_worker * f64::from(spec.numjobs.max(1))
}

/// The spec check: `lat_from=schedule` needs a schedule (a rate). Returns
/// (option, message) for [`crate::spec::SpecError`].
pub fn check(spec: &JobSpec) -> Result<(), (&'static str, String)> {
    if !spec.sched.lat_from_schedule {
        return Ok(());
    }
    if (0..3).all(|d| !issues(spec, d) || dir_rate(spec, d).is_none()) {
        return Err((
            "lat_from",
            "lat_from=schedule measures each I/O from its intended issue time, and a job \
             without a rate has none (add rate_iops= or rate=, e.g. rate_iops=10000, or use \
             lat_from=issue)"
                .into(),
        ));
    }
    // A direction issued without a rate has no schedule to measure from.
    if let Some(d) = (0..3).find(|&d| issues(spec, d) && dir_rate(spec, d).is_none()) {
        let (name, example) = [
            ("reads", "rate_iops=100,100"),
            ("writes", "rate_iops=100,100"),
            ("trims", "rate_iops=100,100,100"),
        ][d];
        return Err((
            "lat_from",
            format!(
                "lat_from=schedule: the job issues {name} with no rate for them, so they have no \
                 schedule to measure from (give every direction it issues a rate, e.g. {example}, \
                 or use lat_from=issue)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RwMode;

    #[test]
    fn latency_from_the_schedule_counts_the_wait_before_issue() {
        let mut s = ScheduleStats::new(0);
        // Intended at 1000, issued at 1500 (the cap was full), done at 1600.
        assert_eq!(s.record(Ddir::Read, 1000, 1500, 1600), 600);
        // On time.
        assert_eq!(s.record(Ddir::Read, 2000, 2000, 2100), 100);
        assert_eq!(s.late, 1);
        assert_eq!(s.lateness.max(), 500);
        let from_issue = s.from_issue[0].as_deref().unwrap();
        assert_eq!(from_issue.max(), 100);
        assert_eq!(from_issue.count(), 2);
    }

    #[test]
    fn a_schedule_needs_a_rate_in_a_direction_the_job_issues() {
        let mut spec = JobSpec {
            rw: RwMode::RandRead,
            ..JobSpec::default()
        };
        spec.sched.lat_from_schedule = true;
        let (opt, msg) = check(&spec).unwrap_err();
        assert_eq!(opt, "lat_from");
        assert!(msg.contains("rate_iops"), "{msg}");
        // A write rate does not schedule reads.
        spec.rate_iops = [None, Some(100), None];
        assert!(check(&spec).is_err());
        spec.rate_iops = [Some(100), None, None];
        check(&spec).unwrap();
        spec.numjobs = 4;
        assert_eq!(offered_iops(&spec), 400.0);
        // Mixed: a rate for reads only leaves the writes with no schedule.
        spec.rw = RwMode::RandRw;
        let (_, msg) = check(&spec).unwrap_err();
        assert!(msg.contains("issues writes with no rate"), "{msg}");
        spec.rate_iops = [Some(100), Some(100), None];
        check(&spec).unwrap();
    }
}
