//! Runs a [`Plan`] through a [`Runner`] — the emulator in virtual time
//! ([`crate::virt`]), or `run`'s own path in real time ([`crate::real`]) —
//! test by test:
//! purge, precondition, then rounds until PTS's steady state or its
//! 25-round limit; WSAT to its data or time limit, then the write cliff.
//! Everything measured goes into the document, including rounds of a test
//! that failed or was interrupted, and "not reached" when steady state was
//! not.

use crate::model::*;
pub use crate::plan::tracked_label;
use crate::plan::{Plan, Point, TestKind, TestPlan, Tracked, WsatPlan, PRECONDITION_BS};
use ssdready_core::hist::Histogram;
use ssdready_core::steady::{pts_next, PtsNext, PtsVerdict};
use std::collections::VecDeque;

/// Why a step gave no figures.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Failure {
    /// The point cannot run on this target (e.g. 512-byte I/O on a 4 KiB
    /// sector device): it is skipped and the test goes on.
    #[error("{0}")]
    NotApplicable(String),
    /// The step failed: the test stops, the next one is tried.
    #[error("{0}")]
    Failed(String),
}

/// A point's outcome: figures, and the latency histogram of all its I/Os.
#[derive(Clone, Debug, Default)]
pub struct PointOutcome {
    pub figures: PointFigures,
    pub lat: Histogram,
}

/// What a WSAT run gave.
#[derive(Clone, Debug, Default)]
pub struct WsatRun {
    pub samples: Vec<WsatSample>,
    pub stopped_by: String,
}

/// What runs the steps.
pub trait Runner {
    /// Return the target to its fresh-out-of-box state, or say why not.
    fn purge(&mut self) -> Result<PurgeRecord, Failure>;
    /// Write `bytes` sequentially in `bs` blocks at `iodepth`.
    fn precondition(
        &mut self,
        bytes: u64,
        bs: u32,
        iodepth: u32,
    ) -> Result<PreconditionRecord, Failure>;
    /// Run one point for its time.
    fn point(&mut self, p: &Point) -> Result<PointOutcome, Failure>;
    /// Run `w.point` until `w.bytes` are written or `w.max_seconds` pass,
    /// handing each sample to `sample` as it comes.
    fn saturate(
        &mut self,
        w: &WsatPlan,
        sample: &mut dyn FnMut(&WsatSample),
    ) -> Result<WsatRun, Failure>;
    /// A stop was asked (Ctrl-C).
    fn stopped(&self) -> bool;
}

/// What the driver tells as it goes.
pub trait Progress {
    fn test_started(&mut self, test: &TestPlan, index: usize, of: usize);
    fn step(&mut self, test: &TestPlan, what: &str);
    /// `window`: the PTS verdict of the last window, once there is one.
    fn round_done(
        &mut self,
        test: &TestPlan,
        round: &RoundRecord,
        next: &PtsNext,
        window: Option<&PtsVerdict>,
    );
    fn wsat_sample(&mut self, sample: &WsatSample, plan: &WsatPlan);
    fn test_done(&mut self, test: &TestPlan);
    /// A line about the whole characterization (the simulated time).
    fn note(&mut self, line: &str) {
        let _ = line;
    }
}

/// Every test's results.
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub iops: Option<RoundTest>,
    pub throughput: Vec<RoundTest>,
    pub latency: Option<RoundTest>,
    pub wsat: Option<WsatResult>,
    pub interrupted: bool,
    /// The first failure.
    pub failure: Option<String>,
}

/// Run every test of `plan`.
pub fn execute(plan: &Plan, runner: &mut dyn Runner, progress: &mut dyn Progress) -> Results {
    let mut out = Results::default();
    let n = plan.tests.len();
    for (i, t) in plan.tests.iter().enumerate() {
        if runner.stopped() {
            out.interrupted = true;
            break;
        }
        progress.test_started(t, i, n);
        match t.kind {
            TestKind::WriteSaturation => {
                let r = wsat(t, &plan.rule, runner, progress);
                out.failure = out.failure.or(r.failure.clone());
                out.wsat = Some(r);
            }
            kind => {
                let r = round_test(plan, t, runner, progress);
                out.failure = out.failure.or(r.failure.clone());
                match kind {
                    TestKind::Iops => out.iops = Some(r),
                    TestKind::Latency => out.latency = Some(r),
                    _ => out.throughput.push(r),
                }
            }
        }
        progress.test_done(t);
    }
    out.interrupted |= runner.stopped();
    out
}

fn tracked_value(t: &TestPlan, f: &PointFigures) -> f64 {
    match t.tracked {
        Tracked::Iops => f.iops,
        Tracked::Bandwidth => f.bw_bytes,
        Tracked::MeanLatency => f.lat_mean_ns,
    }
}

fn record(p: &Point, figures: Option<PointFigures>, skipped: Option<String>) -> PointRecord {
    PointRecord {
        label: p.label(),
        access: Some(p.access),
        read_pct: p.read_pct,
        bs: p.bs,
        iodepth: p.iodepth,
        figures,
        skipped,
    }
}

/// The step of a test's preparation that failed.
#[derive(Debug, thiserror::Error)]
enum PrepareError {
    #[error("purge: {0}")]
    Purge(Failure),
    #[error("preconditioning: {0}")]
    Precondition(Failure),
}

/// Purge and precondition; a failure is the test's.
fn prepare(
    t: &TestPlan,
    iodepth: u32,
    runner: &mut dyn Runner,
    progress: &mut dyn Progress,
) -> Result<(PurgeRecord, Option<PreconditionRecord>), PrepareError> {
    progress.step(t, "purge");
    let purge = runner.purge().map_err(PrepareError::Purge)?;
    if t.precondition_bytes == 0 || runner.stopped() {
        return Ok((purge, None));
    }
    progress.step(t, "precondition");
    let pre = runner
        .precondition(t.precondition_bytes, PRECONDITION_BS, iodepth)
        .map_err(PrepareError::Precondition)?;
    Ok((purge, Some(pre)))
}

fn round_test(
    plan: &Plan,
    t: &TestPlan,
    runner: &mut dyn Runner,
    progress: &mut dyn Progress,
) -> RoundTest {
    let mut r = RoundTest {
        name: t.name.clone(),
        kind: Some(t.kind),
        tracked: Some(t.tracked),
        tracked_label: tracked_label(t),
        ..RoundTest::default()
    };
    match prepare(t, plan.iodepth, runner, progress) {
        Ok((purge, pre)) => {
            r.purge = purge;
            r.precondition = pre;
        }
        Err(e) => {
            r.failure = Some(format!("{}: {e}", t.name));
            return r;
        }
    }
    // The last window's histograms, per point, for its latency figures.
    let mut hists: VecDeque<Vec<Option<Histogram>>> = VecDeque::new();
    let keep_hists = t.kind == TestKind::Latency;
    for round in 1..=plan.rule.max_rounds {
        let (points, round_hists) = match one_round(t, round, runner, keep_hists) {
            Ok(done) => done,
            Err(failure) => {
                r.failure = failure;
                break;
            }
        };
        let tracked = points[t.tracked_point]
            .figures
            .as_ref()
            .map_or(f64::NAN, |f| tracked_value(t, f));
        r.tracked_values.push(tracked);
        r.rounds.push(RoundRecord {
            round,
            points,
            tracked,
        });
        hists.push_back(round_hists);
        if hists.len() > plan.rule.window {
            hists.pop_front();
        }
        let next = pts_next(&r.tracked_values, &plan.rule);
        let window = ssdready_core::steady::pts_check(&r.tracked_values, &plan.rule);
        progress.round_done(t, r.rounds.last().expect("a round"), &next, window.as_ref());
        match next {
            PtsNext::Continue => {}
            PtsNext::Steady(v) => {
                r.steady_state_reached = true;
                r.verdict = Some(v);
                break;
            }
            PtsNext::NotReached(v) => {
                r.verdict = v;
                break;
            }
        }
    }
    if r.verdict.is_none() {
        r.verdict = ssdready_core::steady::pts_check(&r.tracked_values, &plan.rule);
    }
    r.window = window_points(t, &r.rounds, &hists, plan.rule.window);
    r
}

/// A round's points, and each one's latency histogram when kept.
type Round = (Vec<PointRecord>, Vec<Option<Histogram>>);

/// One round's points, with their latency histograms when `keep_hists`.
/// Err: the round was cut short — by a stop (None) or a failure (what
/// failed); a point that does not apply, other than the tracked one, is
/// recorded as skipped.
fn one_round(
    t: &TestPlan,
    round: usize,
    runner: &mut dyn Runner,
    keep_hists: bool,
) -> Result<Round, Option<String>> {
    let mut points = Vec::with_capacity(t.round.len());
    let mut hists = Vec::new();
    for (i, p) in t.round.iter().enumerate() {
        if runner.stopped() {
            return Err(None);
        }
        match runner.point(p) {
            Ok(o) => {
                points.push(record(p, Some(o.figures), None));
                hists.push(keep_hists.then_some(o.lat));
            }
            Err(Failure::NotApplicable(why)) if i != t.tracked_point => {
                points.push(record(p, None, Some(why)));
                hists.push(None);
            }
            Err(e) => {
                let what = format!("{}: round {round}, {}: {e}", t.name, p.label());
                return Err(Some(what));
            }
        }
    }
    Ok((points, hists))
}

/// Each point over the last `w` rounds.
fn window_points(
    t: &TestPlan,
    rounds: &[RoundRecord],
    hists: &VecDeque<Vec<Option<Histogram>>>,
    w: usize,
) -> Vec<WindowPoint> {
    let last = &rounds[rounds.len().saturating_sub(w)..];
    t.round
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let figs: Vec<&PointFigures> = last
                .iter()
                .filter_map(|r| r.points.get(i).and_then(|x| x.figures.as_ref()))
                .collect();
            let n = figs.len().max(1) as f64;
            let mean = |f: fn(&PointFigures) -> f64| figs.iter().map(|x| f(x)).sum::<f64>() / n;
            let mut merged = Histogram::new();
            let mut have_hist = false;
            for h in hists
                .iter()
                .filter_map(|r| r.get(i).and_then(|h| h.as_ref()))
            {
                merged.merge(h);
                have_hist = true;
            }
            let (p9999, max) = if have_hist {
                (merged.percentile(99.99), merged.max())
            } else {
                (
                    figs.iter().map(|f| f.lat_p99_99_ns).max().unwrap_or(0),
                    figs.iter().map(|f| f.lat_max_ns).max().unwrap_or(0),
                )
            };
            WindowPoint {
                label: p.label(),
                access: Some(p.access),
                read_pct: p.read_pct,
                bs: p.bs,
                iodepth: p.iodepth,
                iops: mean(|f| f.iops),
                bw_bytes: mean(|f| f.bw_bytes),
                read_iops: mean(|f| f.read_iops),
                write_iops: mean(|f| f.write_iops),
                lat_mean_ns: mean(|f| f.lat_mean_ns),
                lat_p99_99_ns: p9999,
                lat_max_ns: max,
                rounds: figs.len(),
            }
        })
        .collect()
}

fn wsat(
    t: &TestPlan,
    rule: &ssdready_core::steady::PtsRule,
    runner: &mut dyn Runner,
    progress: &mut dyn Progress,
) -> WsatResult {
    let w = t.wsat.as_ref().expect("a WSAT test has its plan");
    let mut r = WsatResult {
        label: w.point.label(),
        iodepth: w.point.iodepth,
        ..WsatResult::default()
    };
    match prepare(t, w.point.iodepth, runner, progress) {
        Ok((purge, _)) => r.purge = purge,
        Err(e) => {
            r.failure = Some(format!("{}: {e}", t.name));
            r.stopped_by = "failed".into();
            return r;
        }
    }
    progress.step(t, "random writes");
    let capacity = (w.bytes as f64 / w.capacity_multiple.max(1e-9)) as u64;
    let (mut written, mut elapsed) = (0u64, 0f64);
    let mut segment = w.bytes;
    r.stopped_by = "data".into();
    loop {
        let seg = WsatPlan {
            bytes: segment,
            max_seconds: w.max_seconds - elapsed,
            ..w.clone()
        };
        let (base_t, base_bytes) = (elapsed, written);
        let mut cb = |s: &WsatSample| progress.wsat_sample(&shifted(s, base_t, base_bytes), w);
        match runner.saturate(&seg, &mut cb) {
            Ok(run) => {
                r.samples
                    .extend(run.samples.iter().map(|s| shifted(s, base_t, base_bytes)));
                r.stopped_by = run.stopped_by;
            }
            Err(e) => {
                r.failure = Some(format!("{}: {e}", t.name));
                r.stopped_by = "failed".into();
                break;
            }
        }
        let Some(last) = r.samples.last() else { break };
        (written, elapsed) = (last.bytes_written, last.t_s);
        if r.stopped_by != "data" || runner.stopped() {
            break;
        }
        if crate::cliff::settled(&r.samples, capacity, rule).is_some_and(|v| v.reached) {
            r.stopped_by = "settled".into();
            break;
        }
        if written >= w.max_bytes {
            r.stopped_by = "data limit (not settled)".into();
            break;
        }
        progress.step(
            t,
            "IOPS not settled yet: one more capacity of random writes",
        );
        segment = capacity.min(w.max_bytes - written);
    }
    r.bytes_written = written;
    r.seconds = elapsed;
    r
}

/// A segment's sample on the test's time and data axes.
fn shifted(s: &WsatSample, t: f64, bytes: u64) -> WsatSample {
    WsatSample {
        t_s: s.t_s + t,
        bytes_written: s.bytes_written + bytes,
        ..s.clone()
    }
}

/// The IOPS matrix over the IOPS test's window.
pub fn matrix(t: &RoundTest) -> IopsMatrix {
    let mut sizes: Vec<u32> = t.window.iter().map(|p| p.bs).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    let mut mixes: Vec<u32> = Vec::new();
    for p in &t.window {
        if !mixes.contains(&p.read_pct) {
            mixes.push(p.read_pct);
        }
    }
    let iops = sizes
        .iter()
        .map(|&bs| {
            mixes
                .iter()
                .map(|&m| {
                    t.window
                        .iter()
                        .find(|p| p.bs == bs && p.read_pct == m && p.rounds > 0)
                        .map(|p| p.iops)
                })
                .collect()
        })
        .collect();
    IopsMatrix {
        block_sizes: sizes,
        mixes: mixes.iter().map(|&m| crate::plan::mix_label(m)).collect(),
        read_pcts: mixes,
        iops,
    }
}

/// The `steady_state` summary from the tests.
pub fn summary(r: &Results) -> SteadyStateSummary {
    let tests: Vec<TestSteadyState> = r
        .iops
        .iter()
        .chain(&r.throughput)
        .chain(&r.latency)
        .map(|t| TestSteadyState {
            test: t.name.clone(),
            tracked: t.tracked_label.clone(),
            reached: t.steady_state_reached,
            rounds: t.rounds.len(),
            value: t.verdict.as_ref().map(|v| v.stats.mean),
        })
        .collect();
    let mut s = SteadyStateSummary {
        tests,
        ..SteadyStateSummary::default()
    };
    if let Some(t) = &r.iops {
        let v: Option<&PtsVerdict> = t.verdict.as_ref();
        s.reached = t.steady_state_reached;
        s.rounds = t.rounds.len();
        s.randwrite_4k_iops = v.map(|v| v.stats.mean);
        s.window = v.map(|v| [v.window_first, v.window_last]);
        s.range_pct = v.map(|v| v.range_pct);
        s.excursion_pct = v.map(|v| v.excursion_pct);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, PlanOptions};

    /// A device whose 4 KiB write IOPS fall from 30K towards 3K as it is
    /// written (one capacity per 1e5 writes), reads at 40K; latency is
    /// 1/IOPS per queue slot.
    struct FakeDevice {
        written: f64,
        capacity_pages: f64,
        never_steady: bool,
        /// Writes keep slowing down, 30 % per capacity written.
        drifting: bool,
        purges: usize,
        points: usize,
        stop_after_points: Option<usize>,
    }

    impl FakeDevice {
        fn new() -> Self {
            FakeDevice {
                written: 0.0,
                capacity_pages: 1e5,
                never_steady: false,
                drifting: false,
                purges: 0,
                points: 0,
                stop_after_points: None,
            }
        }
        fn write_iops(&self) -> f64 {
            if self.never_steady {
                // Alternates every quick IOPS round (6 points).
                return 30_000.0 * (1.0 + (self.points / 6 % 2) as f64);
            }
            let x = self.written / self.capacity_pages;
            if self.drifting {
                return 30_000.0 * 0.7f64.powf(x);
            }
            3_000.0 + 27_000.0 * (-2.0 * x).exp()
        }
    }

    impl Runner for FakeDevice {
        fn purge(&mut self) -> Result<PurgeRecord, Failure> {
            self.written = 0.0;
            self.purges += 1;
            Ok(PurgeRecord {
                done: true,
                how: "fake".into(),
            })
        }
        fn precondition(
            &mut self,
            bytes: u64,
            bs: u32,
            _: u32,
        ) -> Result<PreconditionRecord, Failure> {
            Ok(PreconditionRecord {
                bytes,
                bs,
                seconds: 1.0,
                bw_bytes: bytes as f64,
            })
        }
        fn point(&mut self, p: &Point) -> Result<PointOutcome, Failure> {
            self.points += 1;
            if p.bs < 4096 {
                return Err(Failure::NotApplicable("512-byte blocks".into()));
            }
            let w = self.write_iops();
            let r = 40_000.0;
            let read = p.read_pct as f64 / 100.0;
            let iops = 1.0 / (read / r + (1.0 - read) / w);
            self.written += iops * (1.0 - read) * p.seconds * (p.bs / 4096) as f64;
            let lat = 1e9 * p.iodepth as f64 / iops;
            let mut h = Histogram::new();
            h.record(lat as u64);
            Ok(PointOutcome {
                figures: PointFigures {
                    iops,
                    bw_bytes: iops * p.bs as f64,
                    read_iops: iops * read,
                    write_iops: iops * (1.0 - read),
                    lat_mean_ns: lat,
                    lat_p99_99_ns: lat as u64,
                    lat_max_ns: lat as u64,
                    wa: None,
                    seconds: p.seconds,
                },
                lat: h,
            })
        }
        fn saturate(
            &mut self,
            w: &WsatPlan,
            sample: &mut dyn FnMut(&WsatSample),
        ) -> Result<WsatRun, Failure> {
            let mut run = WsatRun::default();
            let mut t = 0.0;
            let mut bytes = 0u64;
            while bytes < w.bytes {
                let iops = self.write_iops();
                self.written += iops;
                bytes += iops as u64 * 4096;
                t += 1.0;
                let s = WsatSample {
                    t_s: t,
                    dt_s: 1.0,
                    ios: iops as u64,
                    iops,
                    bytes_written: bytes,
                    host_pages: None,
                    nand_pages: None,
                };
                sample(&s);
                run.samples.push(s);
            }
            run.stopped_by = "data".into();
            Ok(run)
        }
        fn stopped(&self) -> bool {
            self.stop_after_points.is_some_and(|n| self.points >= n)
        }
    }

    struct Quiet;
    impl Progress for Quiet {
        fn test_started(&mut self, _: &TestPlan, _: usize, _: usize) {}
        fn step(&mut self, _: &TestPlan, _: &str) {}
        fn round_done(
            &mut self,
            _: &TestPlan,
            _: &RoundRecord,
            _: &PtsNext,
            _: Option<&PtsVerdict>,
        ) {
        }
        fn wsat_sample(&mut self, _: &WsatSample, _: &WsatPlan) {}
        fn test_done(&mut self, _: &TestPlan) {}
    }

    fn quick_plan() -> Plan {
        plan(&PlanOptions {
            quick: true,
            capacity: 100_000 * 4096,
            point_seconds: 2.0,
            iodepth: 32,
            wsat_max_seconds: 1e9,
            min_bs: 512,
        })
    }

    #[test]
    fn a_device_that_settles_reaches_steady_state_near_its_floor() {
        let p = quick_plan();
        let mut d = FakeDevice::new();
        let r = execute(&p, &mut d, &mut Quiet);
        let iops = r.iops.as_ref().unwrap();
        assert!(iops.steady_state_reached, "{:?}", iops.tracked_values);
        assert!(iops.rounds.len() >= 5 && iops.rounds.len() < 25);
        let s = summary(&r);
        let v = s.randwrite_4k_iops.unwrap();
        assert!(v > 3_000.0 && v < 3_600.0, "{v}");
        assert_eq!(d.purges, 5, "every test purges");
        let m = matrix(iops);
        assert_eq!(m.block_sizes, vec![128 << 10, 4096]);
        assert_eq!(m.mixes, vec!["100/0", "65/35", "0/100"]);
        assert!(m.iops[1][2].unwrap() < m.iops[1][0].unwrap());
        let lat = r.latency.as_ref().unwrap();
        assert_eq!(lat.window.len(), 3);
        assert!(lat.window.iter().all(|w| w.lat_max_ns >= w.lat_p99_99_ns));
        // WSAT from the purge: 3× the capacity, the cliff in it.
        let w = r.wsat.as_ref().unwrap();
        assert_eq!(w.stopped_by, "settled");
        let c = crate::cliff::detect(&w.samples, p.capacity, &p.rule, None).unwrap();
        assert!(c.fresh_iops > 20_000.0 && c.steady_iops < 4_000.0, "{c:?}");
    }

    #[test]
    fn a_device_that_never_settles_is_reported_not_reached_after_25_rounds() {
        let p = quick_plan();
        let mut d = FakeDevice::new();
        d.never_steady = true;
        let r = execute(&p, &mut d, &mut Quiet);
        let iops = r.iops.as_ref().unwrap();
        assert!(!iops.steady_state_reached);
        assert_eq!(iops.rounds.len(), 25);
        let v = iops.verdict.as_ref().unwrap();
        assert!(!v.reached && v.window_last == 25);
        let s = summary(&r);
        assert!(!s.reached);
        assert_eq!(s.rounds, 25);
    }

    #[test]
    fn wsat_goes_on_until_iops_settle_and_says_when_they_never_do() {
        let mut p = quick_plan();
        p.tests.retain(|t| t.kind == TestKind::WriteSaturation);
        let w = p.tests[0].wsat.clone().unwrap();
        // Settling within the planned 3×: it stops there.
        let r = execute(&p, &mut FakeDevice::new(), &mut Quiet);
        let done = r.wsat.unwrap();
        assert_eq!(done.stopped_by, "settled");
        assert!(done.bytes_written >= w.bytes && done.bytes_written < w.bytes + p.capacity);
        // Never settling: one capacity at a time up to 4× the plan.
        let mut d = FakeDevice::new();
        d.drifting = true;
        let r = execute(&p, &mut d, &mut Quiet).wsat.unwrap();
        assert_eq!(r.stopped_by, "data limit (not settled)");
        assert!(
            r.bytes_written >= w.max_bytes,
            "{} of {}",
            r.bytes_written,
            w.max_bytes
        );
        // The samples run on one time and data axis across segments.
        assert!(r
            .samples
            .windows(2)
            .all(|x| x[1].t_s > x[0].t_s && x[1].bytes_written > x[0].bytes_written));
    }

    #[test]
    fn points_that_cannot_run_are_skipped_with_the_reason() {
        let mut p = plan(&PlanOptions {
            quick: false,
            ..PlanOptions {
                quick: true,
                capacity: 100_000 * 4096,
                point_seconds: 2.0,
                iodepth: 32,
                wsat_max_seconds: 1e9,
                min_bs: 512,
            }
        });
        p.tests.truncate(1);
        let r = execute(&p, &mut FakeDevice::new(), &mut Quiet);
        let iops = r.iops.unwrap();
        let skipped: Vec<&PointRecord> = iops.rounds[0]
            .points
            .iter()
            .filter(|x| x.skipped.is_some())
            .collect();
        assert_eq!(skipped.len(), 7, "one 512-byte point per mix");
        assert!(iops.window.iter().any(|w| w.rounds == 0));
    }

    #[test]
    fn a_stop_keeps_the_rounds_that_ran() {
        let p = quick_plan();
        let mut d = FakeDevice::new();
        d.stop_after_points = Some(14);
        let r = execute(&p, &mut d, &mut Quiet);
        assert!(r.interrupted);
        let iops = r.iops.unwrap();
        assert_eq!(iops.rounds.len(), 2);
        assert!(r.latency.is_none() && r.wsat.is_none());
    }
}
