//! The study's curves: IOPS against queue depth (with the device's limit
//! and the knee), latency against IOPS (the "hockey stick"), latency
//! percentiles against queue depth, and scaling with threads (with the
//! ideal line). Each takes one study or several (a comparison overlays
//! them: the first solid, the next dashed).

use super::charts::{Axis, Mark, Series, Style, XyChart};
use super::figure::{Body, Figure, Table};
use super::svg::{color, Unit};
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_diagnosis::figures::Scaling;
use ssdready_diagnosis::model::StudyDoc;
use ssdready_measured::curve::{median, CurvePoint};
use ssdready_measured::record::RunRecord;

/// A study and the name it goes by in a comparison ("" alone).
pub type Named<'a> = (&'a str, &'a StudyDoc);

/// A run of the study by id.
pub fn run<'a>(d: &'a StudyDoc, id: &str) -> Option<&'a RunRecord> {
    d.runs.iter().find(|r| r.id == id)
}

/// `name: what`, or `what` alone.
fn label(name: &str, what: &str) -> String {
    if name.is_empty() {
        what.to_string()
    } else {
        format!("{name}: {what}")
    }
}

/// The reason a sweep was not studied, from `skipped[]`, or `fallback`.
pub fn skipped_why(d: &StudyDoc, key: &str, fallback: &str) -> String {
    d.skipped
        .iter()
        .find(|s| s.what.contains(key))
        .map_or(fallback.to_string(), |s| format!("{}: {}.", s.what, s.why))
}

fn style_of(i: usize, solid: Style) -> Style {
    if i == 0 {
        solid
    } else {
        Style::Dashed
    }
}

fn curve(d: &StudyDoc) -> &[CurvePoint] {
    &d.figures.qd_curve
}

/// IOPS against queue depth, with the device's limit and the knee.
pub fn qd_iops(docs: &[Named]) -> Figure {
    let mut c = XyChart::new(
        "IOPS against queue depth, 4 KiB random reads, one thread",
        Axis::log2("queue depth (I/Os in flight)", Unit::Plain),
        Axis::linear("IOPS", Unit::Count),
    );
    let mut t = Table::new(&[
        "study",
        "QD",
        "IOPS",
        "mean latency",
        "p99 latency",
        "of device limit",
        "device alone (model)",
        "runs",
    ]);
    for (i, &(name, d)) in docs.iter().enumerate() {
        qd_lines(&mut c, i, name, d);
        // The device limit once, unless the studies' limits differ.
        let lim = d.figures.device_limit.iops;
        let first = lim.filter(|_| i == 0 || docs[0].1.figures.device_limit.iops != lim);
        qd_marks(&mut c, name, d, first);
        for p in curve(d) {
            t.row(vec![
                name.to_string(),
                p.qd.to_string(),
                fmt_count(p.iops),
                fmt_ns(p.lat_mean_ns),
                fmt_ns(p.lat_p99_ns as f64),
                lim.map_or("-".into(), |l| format!("{:.0} %", 100.0 * p.iops / l)),
                p.device_iops.map_or("-".into(), fmt_count),
                p.runs.join(" "),
            ]);
        }
    }
    drop_study_column(&mut t, docs);
    let body = qd_body(&c, docs);
    Figure {
        id: "qd".into(),
        title: c.title.clone(),
        note: "Each depth's best run (interference only lowers throughput); dots are every repeat. The knee is the smallest depth reaching 90 % of the peak.".into(),
        body,
        table: Some(t),
    }
}

/// A study's IOPS against depth: the best of each depth's repeats, every
/// repeat as dots, and the device alone where a model gives it.
fn qd_lines(c: &mut XyChart, i: usize, name: &str, d: &StudyDoc) {
    let cv = curve(d);
    let mut s = Series::new(
        &label(name, "measured (best of repeats)"),
        2 * i,
        style_of(i, Style::Line),
        cv.iter().map(|p| (p.qd as f64, p.iops)).collect(),
    );
    s.tips = cv
        .iter()
        .map(|p| format!("QD {}: {} IOPS", p.qd, fmt_count(p.iops)))
        .collect();
    c.series.push(s);
    let reps: Vec<(f64, f64, String)> = cv
        .iter()
        .flat_map(|p| {
            p.runs
                .iter()
                .filter_map(|id| run(d, id))
                .map(move |r| (p.qd as f64, r.summary.iops, r.id.clone()))
        })
        .collect();
    if reps.len() > cv.len() {
        let mut s = Series::new(
            &label(name, "each repeat"),
            2 * i,
            Style::Points,
            reps.iter().map(|r| (r.0, r.1)).collect(),
        );
        s.tips = reps
            .iter()
            .map(|r| format!("{}: {} IOPS", r.2, fmt_count(r.1)))
            .collect();
        s.color = format!("{}99", color(2 * i));
        c.series.push(s);
    }
    if cv.iter().any(|p| p.device_iops.is_some()) {
        let pts = cv
            .iter()
            .filter_map(|p| p.device_iops.map(|v| (p.qd as f64, v)))
            .collect();
        c.series.push(Series::new(
            &label(name, "device alone (model, virtual time)"),
            2 * i + 1,
            Style::Dashed,
            pts,
        ));
    }
}

/// A study's device limit (`limit`, when it is to be drawn) and knee.
fn qd_marks(c: &mut XyChart, name: &str, d: &StudyDoc, limit: Option<f64>) {
    if let Some(l) = limit {
        c.marks.push(Mark::HLine {
            y: l,
            label: format!(
                "{}device limit {} IOPS ({})",
                prefix(name),
                fmt_count(l),
                d.figures.device_limit.basis
            ),
        });
    }
    if let Some(k) = d.figures.knee_qd {
        c.marks.push(Mark::VLine {
            x: k as f64,
            label: format!("{}knee QD {k}", prefix(name)),
        });
    }
}

fn prefix(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("{name}: ")
    }
}

/// A queue-depth figure's body: its chart, or why the sweep is missing
/// when no study has a successful run in it.
fn qd_body(c: &XyChart, docs: &[Named]) -> Body {
    if docs.iter().all(|d| curve(d.1).is_empty()) {
        Body::Missing(skipped_why(
            docs[0].1,
            "qd",
            "the queue-depth sweep has no successful run.",
        ))
    } else {
        Body::Chart(c.svg())
    }
}

/// A comparison names its studies in a first column; one study does not.
fn drop_study_column(t: &mut Table, docs: &[Named]) {
    if docs.len() == 1 {
        t.head.remove(0);
        for r in &mut t.rows {
            r.remove(0);
        }
    }
}

/// Latency against IOPS across queue depths: the hockey stick.
pub fn hockey(docs: &[Named]) -> Figure {
    let mut h = Hockey::new();
    for (i, &(name, d)) in docs.iter().enumerate() {
        h.curves(i, name, d);
        if docs.len() == 1 {
            h.device_model(name, d);
        }
        h.engines(i, name, d);
        h.knee(name, d);
    }
    let Hockey { c, mut t } = h;
    drop_study_column(&mut t, docs);
    let body = qd_body(&c, docs);
    Figure {
        id: "latency".into(),
        title: c.title.clone(),
        note: "Each point is a queue depth: IOPS rise with depth until the device (or the platform) saturates; past the knee, depth adds latency, not IOPS.".into(),
        body,
        table: Some(t),
    }
}

/// The latency-against-IOPS chart and its table, as each study adds its
/// lines.
struct Hockey {
    c: XyChart,
    t: Table,
}

impl Hockey {
    fn new() -> Self {
        let mut c = XyChart::new(
            "Latency against IOPS across queue depths (4 KiB random reads)",
            Axis::linear("IOPS", Unit::Count),
            Axis::linear("latency", Unit::Ns),
        );
        c.height = 320.0;
        let t = Table::new(&[
            "study",
            "config",
            "QD",
            "IOPS",
            "mean latency",
            "p99 latency",
        ]);
        Hockey { c, t }
    }

    /// The study's mean and p99 latency across the queue-depth sweep.
    fn curves(&mut self, i: usize, name: &str, d: &StudyDoc) {
        let cv = curve(d);
        let col = 2 * i;
        let mut mean = Series::new(
            &label(name, "mean"),
            col,
            style_of(i, Style::Line),
            cv.iter().map(|p| (p.iops, p.lat_mean_ns)).collect(),
        );
        mean.labels = cv.iter().map(|p| format!("QD {}", p.qd)).collect();
        mean.tips = cv
            .iter()
            .map(|p| {
                format!(
                    "QD {}: {} IOPS, mean {}",
                    p.qd,
                    fmt_count(p.iops),
                    fmt_ns(p.lat_mean_ns)
                )
            })
            .collect();
        let mut p99 = Series::new(
            &label(name, "p99"),
            col + 1,
            Style::Dashed,
            cv.iter().map(|p| (p.iops, p.lat_p99_ns as f64)).collect(),
        );
        p99.tips = cv
            .iter()
            .map(|p| {
                format!(
                    "QD {}: {} IOPS, p99 {}",
                    p.qd,
                    fmt_count(p.iops),
                    fmt_ns(p.lat_p99_ns as f64)
                )
            })
            .collect();
        self.c.series.push(mean);
        self.c.series.push(p99);
        for p in cv {
            self.t.row(vec![
                name.to_string(),
                "this platform".into(),
                p.qd.to_string(),
                fmt_count(p.iops),
                fmt_ns(p.lat_mean_ns),
                fmt_ns(p.lat_p99_ns as f64),
            ]);
        }
    }

    /// The device alone, as the emulator's model has it (one study only).
    fn device_model(&mut self, name: &str, d: &StudyDoc) {
        let cv = curve(d);
        if !cv.iter().any(|p| p.device_iops.is_some()) {
            return;
        }
        let dev: Vec<_> = cv
            .iter()
            .filter_map(|p| Some((p.device_iops?, p.device_lat_mean_ns?, p.qd)))
            .collect();
        self.c.series.push(Series::new(
            "device alone: mean (model)",
            2,
            Style::Dashed,
            dev.iter().map(|d| (d.0, d.1)).collect(),
        ));
        for p in &dev {
            self.t.row(vec![
                name.to_string(),
                "device alone (model)".into(),
                p.2.to_string(),
                fmt_count(p.0),
                fmt_ns(p.1),
                "-".into(),
            ]);
        }
    }

    /// One line per engine (engine sweep on real targets).
    fn engines(&mut self, i: usize, name: &str, d: &StudyDoc) {
        let all = &d.figures.comparisons.engines;
        let mut engines: Vec<&str> = all.iter().map(|e| e.engine.as_str()).collect();
        engines.dedup();
        for (k, e) in engines.iter().enumerate() {
            let mut pts: Vec<_> = all
                .iter()
                .filter(|p| p.engine == *e && p.threads <= 1)
                .collect();
            pts.sort_by_key(|p| p.qd);
            let mut s = Series::new(
                &label(name, &format!("{e}: mean")),
                3 + k + 2 * i,
                style_of(i, Style::Line),
                pts.iter().map(|p| (p.iops, p.lat_mean_ns)).collect(),
            );
            s.labels = pts.iter().map(|p| format!("QD {}", p.qd)).collect();
            self.c.series.push(s);
            for p in pts {
                self.t.row(vec![
                    name.to_string(),
                    format!("engine {e}"),
                    p.qd.to_string(),
                    fmt_count(p.iops),
                    fmt_ns(p.lat_mean_ns),
                    "-".into(),
                ]);
            }
        }
    }

    /// A vertical line at the knee's IOPS.
    fn knee(&mut self, name: &str, d: &StudyDoc) {
        let cv = curve(d);
        if let Some(k) = d
            .figures
            .knee_qd
            .and_then(|k| cv.iter().find(|p| p.qd == k))
        {
            self.c.marks.push(Mark::VLine {
                x: k.iops,
                label: format!("{}knee QD {}", prefix(name), k.qd),
            });
        }
    }
}

/// The median of `f` over a curve point's runs.
fn med_of(d: &StudyDoc, p: &CurvePoint, f: impl Fn(&RunRecord) -> f64) -> Option<f64> {
    median(
        &p.runs
            .iter()
            .filter_map(|id| run(d, id))
            .map(f)
            .collect::<Vec<_>>(),
    )
}

/// Latency percentiles against queue depth.
pub fn percentiles(docs: &[Named]) -> Figure {
    let mut c = XyChart::new(
        "Latency percentiles against queue depth (4 KiB random reads)",
        Axis::log2("queue depth (I/Os in flight)", Unit::Plain),
        Axis::log10("latency", Unit::Ns),
    );
    let mut t = Table::new(&["study", "QD", "p50", "mean", "p99", "p99.9", "runs"]);
    type Pick = fn(&RunRecord) -> f64;
    let picks: [(&str, Pick); 3] = [
        ("p50", |r| r.summary.lat_p50_ns as f64),
        ("p99", |r| r.summary.lat_p99_ns as f64),
        ("p99.9", |r| r.summary.lat_p999_ns as f64),
    ];
    for (i, (name, d)) in docs.iter().enumerate() {
        let cv = curve(d);
        let rows: Vec<[Option<f64>; 3]> = cv
            .iter()
            .map(|p| picks.map(|(_, f)| med_of(d, p, f)))
            .collect();
        let styles = [Style::Line, Style::Line, Style::Line];
        for (k, (pname, _)) in picks.iter().enumerate() {
            let pts = cv
                .iter()
                .zip(&rows)
                .filter_map(|(p, r)| r[k].map(|v| (p.qd as f64, v)))
                .collect();
            let st = if i == 0 { styles[k] } else { Style::Dashed };
            let mut s = Series::new(&label(name, pname), [0, 1, 3][k] + 4 * i, st, pts);
            s.tips = cv
                .iter()
                .zip(&rows)
                .filter(|(_, r)| r[k].is_some())
                .map(|(p, r)| format!("QD {}: {pname} {}", p.qd, fmt_ns(r[k].unwrap_or(0.0))))
                .collect();
            c.series.push(s);
        }
        let mean = Series::new(
            &label(name, "mean"),
            2 + 4 * i,
            Style::Dashed,
            cv.iter().map(|p| (p.qd as f64, p.lat_mean_ns)).collect(),
        );
        c.series.push(mean);
        if let Some(k) = d.figures.knee_qd {
            c.marks.push(Mark::VLine {
                x: k as f64,
                label: format!("{}knee QD {k}", prefix(name)),
            });
        }
        for (p, r) in cv.iter().zip(&rows) {
            let f = |v: Option<f64>| v.map_or("-".into(), fmt_ns);
            t.row(vec![
                name.to_string(),
                p.qd.to_string(),
                f(r[0]),
                fmt_ns(p.lat_mean_ns),
                f(r[1]),
                f(r[2]),
                p.runs.join(" "),
            ]);
        }
    }
    drop_study_column(&mut t, docs);
    let body = qd_body(&c, docs);
    Figure {
        id: "percentiles".into(),
        title: c.title.clone(),
        note: "Total latency (issue to completion seen) at each depth, the median over its repeats; percentiles within 0.39 %.".into(),
        body,
        table: Some(t),
    }
}

/// The table's rows of one study: one thread, then each thread count.
fn scaling_rows(t: &mut Table, name: &str, one: &CurvePoint, sc: &[Scaling]) {
    let q = sc[0].qd_per_thread;
    t.row(vec![
        name.to_string(),
        "1".into(),
        q.to_string(),
        fmt_count(one.iops),
        fmt_count(one.iops),
        "100 %".into(),
        "100 %".into(),
        one.runs.join(" "),
    ]);
    for s in sc {
        t.row(vec![
            name.to_string(),
            s.threads.to_string(),
            s.qd_per_thread.to_string(),
            fmt_count(s.iops),
            fmt_count(s.threads as f64 * one.iops),
            format!("{:.0} %", s.efficiency_pct),
            s.cpu_efficiency_pct
                .map_or("-".into(), |v| format!("{v:.0} %")),
            s.runs.join(" "),
        ]);
    }
}

/// IOPS against threads, with the ideal (one thread's IOPS times N).
pub fn scaling(docs: &[Named]) -> Figure {
    let mut c = XyChart::new(
        "IOPS against threads (4 KiB random reads), with ideal scaling",
        Axis::log2("threads", Unit::Plain),
        Axis::linear("IOPS", Unit::Count),
    );
    let mut t = Table::new(&[
        "study",
        "threads",
        "QD per thread",
        "IOPS",
        "ideal IOPS",
        "efficiency",
        "CPU efficiency",
        "runs",
    ]);
    for (i, (name, d)) in docs.iter().enumerate() {
        let sc = &d.figures.scaling_efficiency;
        let Some(q) = sc.first().map(|s| s.qd_per_thread) else {
            continue;
        };
        let Some(one) = d.figures.qd_curve.iter().find(|p| p.qd == q) else {
            continue;
        };
        let mut pts = vec![(1.0, one.iops)];
        pts.extend(sc.iter().map(|s| (s.threads as f64, s.iops)));
        let top = sc.iter().map(|s| s.threads).max().unwrap_or(1) as f64;
        let mut m = Series::new(
            &label(name, &format!("measured (QD {q} per thread)")),
            2 * i,
            style_of(i, Style::Line),
            pts,
        );
        m.labels = std::iter::once(String::new())
            .chain(sc.iter().map(|s| format!("{:.0} %", s.efficiency_pct)))
            .collect();
        c.series.push(m);
        c.series.push(Series::new(
            &label(name, "ideal: one thread × N"),
            2 * i + 1,
            Style::Dashed,
            vec![(1.0, one.iops), (top, top * one.iops)],
        ));
        scaling_rows(&mut t, name, one, sc);
    }
    drop_study_column(&mut t, docs);
    let body = if t.rows.is_empty() {
        Body::Missing(skipped_why(
            docs[0].1,
            "thread",
            "the threads sweep did not run (one CPU, or the study was stopped before it).",
        ))
    } else {
        Body::Chart(c.svg())
    };
    Figure {
        id: "scaling".into(),
        title: c.title.clone(),
        note: "Labels are the efficiency: IOPS per thread against one thread's (each thread with a core). CPU efficiency in the table: whole-system CPU per I/O at one thread against at N.".into(),
        body,
        table: Some(t),
    }
}
