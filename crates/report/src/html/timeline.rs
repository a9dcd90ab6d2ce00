//! Throughput and latency over time, and the latency heat map, from the
//! per-second series of a run's result (`jobs[].read|write|trim.series`:
//! completions, mean and p99 latency, and a log-linear latency histogram
//! per second). A run's measured jobs are merged second by second (the
//! emulator's `fill` job is left out); phases follow one another. A study
//! whose runs are too short for a curve of their own is shown as one
//! timeline of its runs in the order made.
//!
//! The steady-state window is found the way fio's `steadystate=iops:10%`
//! judges one: the longest stretch of whole seconds, ending at the last,
//! in which every second's IOPS stays within ±10 % of the stretch's mean
//! (at least three seconds).

use super::charts::{Axis, Mark, Series, Style, XyChart};
use super::figure::{Body, Figure, Table};
use super::heatmap::HeatMap;
use super::svg::Unit;
use ssdready_core::result::RunResult;
use ssdready_core::stats::{sec_lat_bucket_low, SecSample, SEC_LAT_BUCKETS};
use ssdready_core::units::{fmt_count, fmt_ns};
use std::collections::BTreeMap;

/// A last second shorter than this joins the one before.
const SLIVER_S: f64 = 0.25;
/// Most columns a heat map draws (longer timelines merge seconds).
const MAX_COLUMNS: usize = 150;
/// How far from its mean a steady second's IOPS may be.
pub const STEADY_TOLERANCE: f64 = 0.10;
/// Fewest whole seconds a steady window spans.
pub const STEADY_MIN_SECONDS: usize = 3;

/// One second of a timeline.
#[derive(Clone, Debug)]
pub struct Second {
    /// Start on the timeline, seconds.
    pub t0: f64,
    /// How much of the second was measured (the last may be partial).
    pub dur: f64,
    /// Merged over the run's measured jobs and directions.
    pub sample: SecSample,
    /// The run (or job) it belongs to.
    pub run: String,
}

impl Second {
    pub fn iops(&self) -> f64 {
        if self.dur > 0.0 {
            self.sample.ios as f64 / self.dur
        } else {
            0.0
        }
    }
}

/// Seconds on one time axis.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub seconds: Vec<Second>,
    /// Where each run starts (several runs only), with its id.
    pub segments: Vec<(f64, String)>,
    /// The ramp before the measured window (one run only), seconds.
    pub ramp_s: f64,
    /// The steady window, (start, end) seconds (one run only).
    pub steady: Option<(f64, f64)>,
    /// Several runs, one after another.
    pub several: bool,
}

/// The measured seconds of `r`, from `t0` on, labelled `label`; and the
/// ramp before them.
pub fn run_seconds(r: &RunResult, label: &str, t0: f64) -> (Vec<Second>, f64) {
    let fill = ssdready_measured::summary::FILL_JOB;
    let measured: Vec<_> = if r.jobs.iter().any(|j| j.name != fill) {
        r.jobs.iter().filter(|j| j.name != fill).collect()
    } else {
        r.jobs.iter().collect()
    };
    let mut phases: BTreeMap<usize, Vec<_>> = BTreeMap::new();
    for j in measured {
        phases.entry(j.phase).or_default().push(j);
    }
    let ramp = phases.values().next().map_or(0.0, |js| {
        js.iter().map(|j| j.spec.ramp_time_ns).max().unwrap_or(0) as f64 / 1e9
    });
    let mut out = Vec::new();
    let mut t = t0;
    for jobs in phases.values() {
        let window = jobs.iter().map(|j| j.measured_ns).max().unwrap_or(0) as f64 / 1e9;
        let mut merged: Vec<SecSample> = Vec::new();
        for (_, d) in jobs.iter().flat_map(|j| j.dirs()) {
            if d.series.len() > merged.len() {
                merged.resize(d.series.len(), SecSample::default());
            }
            for (a, b) in merged.iter_mut().zip(&d.series) {
                a.merge(b);
            }
        }
        if window <= 0.0 || merged.is_empty() {
            continue;
        }
        // Completions of I/Os in flight at the window's end land past it:
        // they belong to its last second.
        let last = ((window.ceil() as usize).max(1) - 1).min(merged.len() - 1);
        let tail: Vec<SecSample> = merged.drain(last + 1..).collect();
        for s in &tail {
            merged[last].merge(s);
        }
        let first = out.len();
        for (i, s) in merged.into_iter().enumerate() {
            out.push(Second {
                t0: t + i as f64,
                dur: (window - i as f64).clamp(0.001, 1.0),
                sample: s,
                run: label.to_string(),
            });
        }
        // A sliver of a last second (a window of 1.004 s) is too few I/Os
        // to plot: it joins the second before.
        if out.len() >= first + 2 && out[out.len() - 1].dur < SLIVER_S {
            let last = out.pop().expect("two or more");
            let prev = out.last_mut().expect("two or more");
            prev.dur += last.dur;
            prev.sample.merge(&last.sample);
        }
        t += window;
    }
    (out, ramp)
}

/// The timeline of one run, with its ramp and steady window.
pub fn of_run(r: &RunResult, label: &str) -> Timeline {
    let (seconds, ramp_s) = run_seconds(r, label, 0.0);
    let full: Vec<f64> = seconds
        .iter()
        .filter(|s| s.dur >= 0.999)
        .map(Second::iops)
        .collect();
    let steady = steady_window(&full).map(|(a, b)| (a as f64, b as f64));
    Timeline {
        seconds,
        segments: Vec::new(),
        ramp_s,
        steady,
        several: false,
    }
}

/// Several runs on one axis, in the given order.
pub fn of_runs(runs: &[(&str, &RunResult)]) -> Timeline {
    let mut tl = Timeline {
        several: true,
        ..Timeline::default()
    };
    let mut t = 0.0;
    for (id, r) in runs {
        let (secs, _) = run_seconds(r, id, t);
        let Some(end) = secs.last().map(|s| s.t0 + s.dur) else {
            continue;
        };
        tl.segments.push((t, id.to_string()));
        tl.seconds.extend(secs);
        t = end;
    }
    tl
}

/// The steady window over whole seconds' IOPS: `(first, end)` indexes of
/// the longest stretch ending at the last second whose every value is
/// within ±10 % of its mean, at least [`STEADY_MIN_SECONDS`] long.
pub fn steady_window(iops: &[f64]) -> Option<(usize, usize)> {
    let n = iops.len();
    if n < STEADY_MIN_SECONDS {
        return None;
    }
    (0..=n - STEADY_MIN_SECONDS).find_map(|a| {
        let w = &iops[a..];
        let mean = w.iter().sum::<f64>() / w.len() as f64;
        let steady = mean > 0.0
            && w.iter()
                .all(|x| (x - mean).abs() <= STEADY_TOLERANCE * mean);
        steady.then_some((a, n))
    })
}

/// What the timeline covers, for titles.
fn what(tl: &Timeline) -> String {
    if tl.several {
        format!("{} runs in the order made", tl.segments.len())
    } else {
        tl.seconds
            .first()
            .map_or("the run".into(), |s| format!("run {}", s.run))
    }
}

/// The throughput and latency over time (two charts in one figure).
pub fn timeline_figure(tl: &Timeline, id: &str, note: &str) -> Figure {
    let title = format!("IOPS and latency per second: {}", what(tl));
    if tl.seconds.is_empty() {
        return Figure {
            id: id.into(),
            title,
            note: note.into(),
            body: Body::Missing("no run kept its per-second series.".into()),
            table: None,
        };
    }
    let marks = window_marks(tl);
    let has_lat = tl.seconds.iter().any(|s| s.sample.lat_count() > 0);
    let mut body = iops_chart(tl, marks.clone()).svg();
    if has_lat {
        body.push_str(&latency_chart(tl, marks).svg());
    }
    let mut note = note.to_string();
    if !has_lat {
        note.push_str(
            " Per-second latency is not in this result (written before ssdready kept it).",
        );
    }
    Figure {
        id: id.into(),
        title,
        note,
        body: Body::Chart(body),
        table: Some(seconds_table(tl)),
    }
}

/// The time axis's title.
fn time_axis(tl: &Timeline) -> &'static str {
    if tl.several {
        "measured time, runs one after another"
    } else {
        "time since the measured window began"
    }
}

/// A second's middle, where its point goes.
fn mid(s: &Second) -> f64 {
    s.t0 + s.dur / 2.0
}

/// IOPS per second, with the run's windows marked.
fn iops_chart(tl: &Timeline, marks: Vec<Mark>) -> XyChart {
    let style = if tl.several {
        Style::Points
    } else {
        Style::Line
    };
    let mut iops = XyChart::new(
        &format!("IOPS per second, {}", what(tl)),
        Axis::linear(time_axis(tl), Unit::Seconds),
        Axis::linear("IOPS", Unit::Count),
    );
    iops.height = 220.0;
    let mut s = Series::new(
        "IOPS",
        0,
        style,
        tl.seconds.iter().map(|s| (mid(s), s.iops())).collect(),
    );
    s.tips = tl
        .seconds
        .iter()
        .map(|s| format!("{} at {:.1} s: {} IOPS", s.run, s.t0, fmt_count(s.iops())))
        .collect();
    iops.series.push(s);
    iops.marks = marks;
    iops
}

/// Mean and p99 latency of each second that has latency samples.
fn latency_chart(tl: &Timeline, marks: Vec<Mark>) -> XyChart {
    let style = if tl.several {
        Style::Points
    } else {
        Style::Line
    };
    let mut lat = XyChart::new(
        &format!("Latency per second, {}", what(tl)),
        Axis::linear(time_axis(tl), Unit::Seconds),
        Axis::log10("latency", Unit::Ns),
    );
    lat.height = 220.0;
    let with_lat: Vec<&Second> = tl
        .seconds
        .iter()
        .filter(|s| s.sample.lat_count() > 0)
        .collect();
    let mut mean = Series::new(
        "mean",
        0,
        style,
        with_lat
            .iter()
            .map(|s| (mid(s), s.sample.lat_mean_ns()))
            .collect(),
    );
    mean.tips = with_lat
        .iter()
        .map(|s| {
            format!(
                "{} at {:.1} s: mean {}",
                s.run,
                s.t0,
                fmt_ns(s.sample.lat_mean_ns())
            )
        })
        .collect();
    let mut p99 = Series::new(
        "p99 (±12.5 %)",
        1,
        if tl.several {
            Style::Points
        } else {
            Style::Dashed
        },
        with_lat
            .iter()
            .map(|s| (mid(s), s.sample.lat_percentile(99.0) as f64))
            .collect(),
    );
    p99.tips = with_lat
        .iter()
        .map(|s| {
            format!(
                "{} at {:.1} s: p99 {}",
                s.run,
                s.t0,
                fmt_ns(s.sample.lat_percentile(99.0) as f64)
            )
        })
        .collect();
    lat.series = vec![mean, p99];
    lat.marks = marks;
    lat
}

/// Every second's figures, as a table.
fn seconds_table(tl: &Timeline) -> Table {
    let mut t = Table::new(&[
        "t (s)",
        "run",
        "measured (s)",
        "IOPS",
        "mean latency",
        "p99 latency",
        "max latency",
    ]);
    for s in &tl.seconds {
        let lat = |v: f64| {
            if s.sample.lat_count() > 0 {
                fmt_ns(v)
            } else {
                "-".into()
            }
        };
        t.row(vec![
            format!("{:.1}", s.t0),
            s.run.clone(),
            format!("{:.3}", s.dur),
            fmt_count(s.iops()),
            lat(s.sample.lat_mean_ns()),
            lat(s.sample.lat_percentile(99.0) as f64),
            lat(s.sample.lat_max_ns as f64),
        ]);
    }
    t
}

/// The ramp and steady windows of a single run, as shaded bands.
fn window_marks(tl: &Timeline) -> Vec<Mark> {
    let mut m = Vec::new();
    if tl.ramp_s > 0.0 {
        m.push(Mark::Band {
            x0: -tl.ramp_s,
            x1: 0.0,
            label: "ramp".into(),
            fill: "#8c959f".into(),
        });
    }
    if let Some((a, b)) = tl.steady {
        m.push(Mark::Band {
            x0: a,
            x1: b,
            label: "steady ±10 %".into(),
            fill: "#1b9e77".into(),
        });
    }
    m
}

/// A sentence on the windows, for the figure's note.
pub fn window_note(tl: &Timeline) -> String {
    if tl.several {
        return "Each run's measured window in turn (ramps and the emulator's fill left out); a run's last second may be partial.".into();
    }
    let full = tl.seconds.iter().filter(|s| s.dur >= 0.999).count();
    let steady = match tl.steady {
        Some((a, b)) => format!("Steady from {a:.0} s to {b:.0} s (every second's IOPS within ±10 % of the window's mean)."),
        None if full < STEADY_MIN_SECONDS => format!("Too short to judge a steady state ({full} whole seconds; {STEADY_MIN_SECONDS} needed)."),
        None => "No steady state: IOPS never held within ±10 % to the end.".into(),
    };
    let ramp = if tl.ramp_s > 0.0 {
        format!(
            "The {:.1} s ramp before the window is not measured. ",
            tl.ramp_s
        )
    } else {
        String::new()
    };
    format!("The whole plot is the measured window. {ramp}{steady}")
}

/// Latency octaves: bucket ranges `[2^e, 2^(e+1))` as their per-second
/// bucket indexes (4 per octave).
fn octave_of(bucket: usize) -> usize {
    if bucket < 4 {
        0
    } else {
        bucket / 4
    }
}

/// The latency heat map: time × latency octave, each cell the share of
/// its column's I/Os.
pub fn heatmap_figure(tl: &Timeline, id: &str) -> Figure {
    let title = format!("Latency heat map: {}", what(tl));
    let lat: Vec<&Second> = tl
        .seconds
        .iter()
        .filter(|s| s.sample.lat_count() > 0)
        .collect();
    if lat.is_empty() {
        return Figure {
            id: id.into(),
            title,
            note: String::new(),
            body: Body::Missing("the results have no per-second latency histogram (written before ssdready kept one).".into()),
            table: None,
        };
    }
    // Columns: seconds, merged in groups when there are too many.
    let group = lat.len().div_ceil(MAX_COLUMNS);
    let cols = heat_columns(&lat, group);
    let used = |o: usize| cols.iter().any(|c| c.3[o] > 0);
    let lo = (0..cols[0].3.len()).find(|&o| used(o)).unwrap_or(0);
    let hi = (0..cols[0].3.len()).rev().find(|&o| used(o)).unwrap_or(lo);
    let rows: Vec<(f64, f64)> = (lo..=hi).map(octave_bounds).collect();
    let cells: Vec<Vec<f64>> = cols
        .iter()
        .map(|c| {
            let n: u64 = c.3.iter().sum();
            (lo..=hi)
                .map(|o| if n > 0 { c.3[o] as f64 / n as f64 } else { 0.0 })
                .collect()
        })
        .collect();
    let t = heat_table(&cols, &rows, lo, hi);
    let h = HeatMap {
        title: title.clone(),
        x: Axis::linear(time_axis(tl), Unit::Seconds),
        y: Axis::log10("latency", Unit::Ns),
        columns: cols.iter().map(|c| (c.0, c.1)).collect(),
        rows,
        cells,
        column_tips: cols.iter().map(|c| c.2.clone()).collect(),
        segments: tl.segments.clone(),
        legend: "share of the column's I/Os (sqrt)".into(),
    };
    let merged = if group > 1 {
        format!(" Each column merges {group} seconds.")
    } else {
        String::new()
    };
    Figure {
        id: id.into(),
        title,
        note: format!("Each column is one second; each row a doubling of latency; colour is the share of that second's I/Os (the data table has the counts).{merged}"),
        body: Body::Chart(h.svg()),
        table: Some(t),
    }
}

/// A heat map column: its start and end (s), its label, and its I/Os in
/// each latency octave.
type HeatColumn = (f64, f64, String, [u64; SEC_LAT_BUCKETS / 4 + 1]);

/// The seconds with latency, `group` to a column.
fn heat_columns(lat: &[&Second], group: usize) -> Vec<HeatColumn> {
    let mut cols = Vec::new();
    for chunk in lat.chunks(group) {
        let mut oct = [0u64; SEC_LAT_BUCKETS / 4 + 1];
        for s in chunk {
            for (b, &c) in s.sample.lat_buckets.iter().enumerate() {
                oct[octave_of(b)] += u64::from(c);
            }
        }
        let (a, z) = (
            chunk[0].t0,
            chunk[chunk.len() - 1].t0 + chunk[chunk.len() - 1].dur,
        );
        let label = if chunk[0].run == chunk[chunk.len() - 1].run {
            format!("{} {a:.0}–{z:.0} s", chunk[0].run)
        } else {
            format!(
                "{}…{} {a:.0}–{z:.0} s",
                chunk[0].run,
                chunk[chunk.len() - 1].run
            )
        };
        cols.push((a, z, label, oct));
    }
    cols
}

/// A latency octave's bounds (ns).
fn octave_bounds(o: usize) -> (f64, f64) {
    let a = if o == 0 { 1 } else { sec_lat_bucket_low(4 * o) };
    (
        a as f64,
        sec_lat_bucket_low((4 * (o + 1)).min(SEC_LAT_BUCKETS - 1)).max(a + 1) as f64,
    )
}

/// The heat map's counts, a row per column and a column per octave.
fn heat_table(cols: &[HeatColumn], rows: &[(f64, f64)], lo: usize, hi: usize) -> Table {
    let mut head = vec!["t (s)".to_string(), "run".into(), "I/Os".into()];
    head.extend(
        rows.iter()
            .map(|(a, b)| format!("{}–{}", fmt_ns(*a), fmt_ns(*b))),
    );
    let mut t = Table {
        head,
        rows: Vec::new(),
    };
    for c in cols {
        let mut r = vec![
            format!("{:.1}–{:.1}", c.0, c.1),
            c.2.clone(),
            c.3.iter().sum::<u64>().to_string(),
        ];
        r.extend((lo..=hi).map(|o| c.3[o].to_string()));
        t.row(r);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::{DirResult, JobResult};

    fn sec(ios: u64, lat: u64) -> SecSample {
        let mut s = SecSample {
            ios,
            ..SecSample::default()
        };
        for _ in 0..ios {
            s.record_lat(lat);
        }
        s
    }

    fn job(name: &str, phase: usize, window_ns: u64, series: Vec<SecSample>) -> JobResult {
        JobResult {
            name: name.into(),
            phase,
            measured_ns: window_ns,
            read: Some(DirResult {
                series,
                ..DirResult::default()
            }),
            ..JobResult::default()
        }
    }

    #[test]
    fn steady_window_is_the_longest_tail_within_ten_percent() {
        assert_eq!(
            steady_window(&[50.0, 100.0, 101.0, 99.0, 100.0]),
            Some((1, 5))
        );
        assert_eq!(steady_window(&[100.0, 100.0, 100.0]), Some((0, 3)));
        assert_eq!(steady_window(&[100.0, 100.0]), None, "too short");
        assert_eq!(steady_window(&[100.0, 50.0, 100.0, 50.0]), None);
        assert_eq!(steady_window(&[0.0, 0.0, 0.0]), None);
    }

    #[test]
    fn a_run_timeline_merges_jobs_skips_the_fill_and_folds_the_drain() {
        let mut r = RunResult::default();
        r.jobs
            .push(job("fill", 0, 2_000_000_000, vec![sec(999, 1)]));
        // 2.5 s window; a completion drained after it lands in second 3.
        r.jobs.push(job(
            "a",
            1,
            2_500_000_000,
            vec![sec(10, 1000), sec(10, 1000), sec(5, 1000), sec(1, 9000)],
        ));
        r.jobs.push(job("b", 1, 2_500_000_000, vec![sec(10, 3000)]));
        let (s, _) = run_seconds(&r, "x", 0.0);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].sample.ios, 20);
        assert_eq!(s[0].sample.lat_mean_ns(), 2000.0);
        assert_eq!((s[2].sample.ios, s[2].dur), (6, 0.5));
        assert_eq!(s[2].iops(), 12.0);
        assert_eq!(s[2].sample.lat_max_ns, 9000);
    }

    #[test]
    fn a_sliver_of_a_last_second_joins_the_one_before() {
        let mut r = RunResult::default();
        r.jobs.push(job(
            "a",
            0,
            2_100_000_000,
            vec![sec(10, 1), sec(10, 1), sec(1, 1)],
        ));
        let (s, _) = run_seconds(&r, "x", 0.0);
        assert_eq!(s.len(), 2);
        assert!((s[1].dur - 1.1).abs() < 1e-9);
        assert_eq!(s[1].sample.ios, 11);
    }

    #[test]
    fn several_runs_follow_one_another_with_their_boundaries() {
        let mut a = RunResult::default();
        a.jobs.push(job("a", 0, 500_000_000, vec![sec(5, 100)]));
        let mut b = RunResult::default();
        b.jobs
            .push(job("b", 0, 1_500_000_000, vec![sec(5, 100), sec(5, 200)]));
        let tl = of_runs(&[("qd-1", &a), ("qd-2", &b)]);
        assert_eq!(
            tl.segments,
            vec![(0.0, "qd-1".to_string()), (0.5, "qd-2".to_string())]
        );
        assert_eq!(
            tl.seconds.iter().map(|s| s.t0).collect::<Vec<_>>(),
            vec![0.0, 0.5, 1.5]
        );
        let f = heatmap_figure(&tl, "h");
        let Body::Chart(svg) = &f.body else {
            panic!("a chart")
        };
        // 100 ns and 200 ns fall in neighbouring octaves: one cell per column.
        assert_eq!(svg.matches("class=\"mark cell\"").count(), 3);
    }

    #[test]
    fn results_without_per_second_latency_say_so() {
        let mut r = RunResult::default();
        let old = SecSample {
            ios: 10,
            ..SecSample::default()
        };
        r.jobs.push(job("a", 0, 1_000_000_000, vec![old]));
        let tl = of_run(&r, "old");
        assert!(matches!(heatmap_figure(&tl, "h").body, Body::Missing(_)));
        let f = timeline_figure(&tl, "t", "");
        assert!(matches!(f.body, Body::Chart(_)), "IOPS are still drawn");
        assert!(f.note.contains("not in this result"));
    }
}
