//! The report of a device characterization (`characterize.json`, schema
//! `ssdready.characterize`), laid out as SNIA's Performance Test
//! Specification lays out its reports: the key figures first, then for
//! every test its steady-state convergence plot (the tracked figure per
//! round, the measurement window shaded, the window's mean with the ±10 %
//! band and the least-squares line PTS judges), the IOPS matrix as a table
//! and a 2-D plot (IOPS against block size, one line per read/write mix),
//! throughput, the latency table (mean, p99.99 and maximum per mix) and
//! the write-saturation curve with the write cliff marked, against time
//! and against the capacity written.

use super::bars::StackedBars;
use super::charts::{Axis, Mark, Series, Style, XyChart};
use super::figure::{Body, Figure, Table};
use super::page::{header, kpis, kv_table, page, section, utc, Kpi};
use super::svg::{esc, Unit};
use ssdready_characterize_judge::model::{CharacterizeDoc, RoundTest, WindowPoint};
use ssdready_characterize_judge::plan::Tracked;
use ssdready_core::steady::PtsVerdict;
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
use std::fmt::Write as _;
use wsat::{cliff_text, wsat_over};

/// Rows of a data table under a dense curve, at most.
const MAX_TABLE_ROWS: usize = 400;

/// The whole page.
pub fn render(d: &CharacterizeDoc) -> String {
    let mut body = top(d);
    sections(d, &mut body);
    page(&format!("ssdready characterize {}", d.target.spec), &body)
}

/// The page's top: the target, the settings, any banner, the key figures
/// and the steady-state table.
fn top(d: &CharacterizeDoc) -> String {
    let t = &d.target;
    let meta = vec![
        format!(
            "{} · {:.1} s of wall time · {} clock",
            utc(d.started_unix_ms),
            d.wall_s,
            t.clock
        ),
        format!(
            "{}point {:.0} s · QD {} · {} · steady: last {} rounds, range ≤ {:.0} %, excursion ≤ {:.0} %",
            if d.settings.quick { "--quick · " } else { "" },
            d.settings.point_seconds,
            d.settings.iodepth,
            d.settings.engine,
            d.settings.rule.window,
            d.settings.rule.range_pct,
            d.settings.rule.excursion_pct
        ),
    ];
    let mut body = header(
        &format!("ssdready characterize: {}", t.spec),
        &format!("{} · {}", t.kind, fmt_bytes(t.capacity_bytes as f64)),
        &meta,
    );
    if d.interrupted {
        body.push_str(
            "<div class=\"banner\"><b>Interrupted.</b> The figures cover what ran.</div>",
        );
    }
    if let Some(f) = &d.failure {
        let _ = write!(
            body,
            "<div class=\"banner\"><b>Incomplete.</b> {}</div>",
            esc(f)
        );
    }
    let mut notes = String::new();
    for w in &d.warnings {
        let _ = write!(notes, "<li>{}</li>", esc(w));
    }
    let _ = write!(
        body,
        "<div class=\"answer\"><div class=\"kpis\">{}</div><div class=\"verdicts\"><h2>Steady state</h2>{}<ul class=\"plain\">{notes}</ul></div></div>",
        kpis(&key_figures(d)),
        steady_table(d).html()
    );
    body
}

/// One section per test, then the target and its preparation.
fn sections(d: &CharacterizeDoc, body: &mut String) {
    let convergence: Vec<String> = round_tests(d).map(|t| convergence(t).html()).collect();
    body.push_str(&section(
        "c-steady",
        "Steady-state convergence",
        "Each test repeats its rounds until the tracked figure is steady (PTS: over the last rounds, range and least-squares excursion within their limits of the window's mean) or the round limit is reached, which is reported, never hidden.",
        &convergence,
    ));
    body.push_str(&section(
        "c-iops",
        "IOPS",
        "Random I/O at every block size and read/write mix, the mean of the steady window's rounds.",
        &[iops_matrix(d).html()],
    ));
    body.push_str(&section(
        "c-throughput",
        "Throughput",
        "Sequential I/O with large blocks, the mean of the steady window's rounds.",
        &[throughput(d).html()],
    ));
    body.push_str(&section(
        "c-latency",
        "Latency",
        "Random 4 KiB I/O at queue depth 1, one thread: mean, p99.99 and maximum response time per read/write mix.",
        &[latency(d).html()],
    ));
    let wsat = match &d.wsat {
        Some(w) => vec![wsat_over(d, w, false).html(), wsat_over(d, w, true).html()],
        None => vec![missing(
            "c-wsat",
            "Write saturation",
            "This characterization ran no write-saturation test.",
        )
        .html()],
    };
    body.push_str(&section(
        "c-wsat",
        "Write saturation and the write cliff",
        &cliff_text(d),
        &wsat,
    ));
    body.push_str(&section(
        "c-target",
        "Target and preparation",
        "",
        &[kv_table(&target_rows(d))],
    ));
}

/// The round-based tests, in the order they ran.
fn round_tests(d: &CharacterizeDoc) -> impl Iterator<Item = &RoundTest> {
    d.iops.iter().chain(&d.throughput).chain(d.latency.iter())
}

fn missing(id: &str, title: &str, why: &str) -> Figure {
    Figure {
        id: id.into(),
        title: title.into(),
        note: String::new(),
        body: Body::Missing(why.into()),
        table: None,
    }
}

/// A tracked figure as text in its unit (IOPS when the test does not say).
fn tracked_text(tracked: Option<Tracked>, v: f64) -> String {
    ssdready_characterize_judge::text::tracked_text(tracked.unwrap_or(Tracked::Iops), v)
}

fn tracked_unit(tracked: Option<Tracked>) -> Unit {
    match tracked {
        Some(Tracked::Bandwidth) => Unit::BytesPerSec,
        Some(Tracked::MeanLatency) => Unit::Ns,
        _ => Unit::Count,
    }
}

/// The window point with this read share and block size.
fn point(t: &RoundTest, read_pct: u32, bs: u32) -> Option<&WindowPoint> {
    t.window
        .iter()
        .find(|p| p.read_pct == read_pct && p.bs == bs)
}

/// The key figures at the top of the page.
fn key_figures(d: &CharacterizeDoc) -> Vec<Kpi> {
    vec![
        random_write_kpi(d),
        cliff_kpi(d),
        throughput_kpi(d),
        latency_kpi(d),
        wa_kpi(d),
    ]
}

/// Steady 4 KiB random writes, with the window judged.
fn random_write_kpi(d: &CharacterizeDoc) -> Kpi {
    let ss = &d.steady_state;
    Kpi {
        label: "Steady 4 KiB random writes".into(),
        value: ss
            .randwrite_4k_iops
            .map(|v| format!("{} IOPS", fmt_count(v))),
        detail: match ss.window {
            Some([a, b]) => format!(
                "rounds {a}–{b}, {}",
                if ss.reached {
                    "steady"
                } else {
                    "steady state NOT reached"
                }
            ),
            None => "no IOPS test".into(),
        },
        anchor: "c-conv-iops".into(),
    }
}

/// The write cliff: how far IOPS fell, and after how much writing.
fn cliff_kpi(d: &CharacterizeDoc) -> Kpi {
    Kpi {
        label: "Write cliff".into(),
        value: d
            .write_cliff
            .as_ref()
            .map(|c| format!("{:.1}× fall", c.ratio)),
        detail: d.write_cliff.as_ref().map_or_else(
            || {
                d.write_cliff_note
                    .clone()
                    .unwrap_or_else(|| "not found".into())
            },
            |c| {
                format!(
                    "{} → {} IOPS after {:.2}× the capacity",
                    fmt_count(c.fresh_iops),
                    fmt_count(c.steady_iops),
                    c.cliff_at_capacity
                )
            },
        ),
        anchor: "c-wsat-time".into(),
    }
}

/// The best sequential throughput of the window.
fn throughput_kpi(d: &CharacterizeDoc) -> Kpi {
    let seq =
        d.throughput
            .iter()
            .flat_map(|t| &t.window)
            .fold(None, |best: Option<&WindowPoint>, p| match best {
                Some(b) if b.bw_bytes >= p.bw_bytes => Some(b),
                _ => Some(p),
            });
    Kpi {
        label: "Sequential throughput".into(),
        value: seq.map(|p| format!("{}/s", fmt_bytes(p.bw_bytes))),
        detail: seq.map_or("no throughput test".into(), |p| p.label.clone()),
        anchor: "c-throughput".into(),
    }
}

/// Random 4 KiB reads at QD 1: mean, p99.99 and maximum.
fn latency_kpi(d: &CharacterizeDoc) -> Kpi {
    let read = d.latency.as_ref().and_then(|t| point(t, 100, 4096));
    Kpi {
        label: "QD 1 random read latency".into(),
        value: read.map(|p| fmt_ns(p.lat_mean_ns)),
        detail: read.map_or("no latency test".into(), |p| {
            format!(
                "p99.99 {}, max {}",
                fmt_ns(p.lat_p99_99_ns as f64),
                fmt_ns(p.lat_max_ns as f64)
            )
        }),
        anchor: "c-latency".into(),
    }
}

/// Write amplification, seen or inferred, with the model's.
fn wa_kpi(d: &CharacterizeDoc) -> Kpi {
    let wa = d
        .write_cliff
        .as_ref()
        .map(|c| (c.wa_seen, c.wa_inferred, c.wa_predicted));
    Kpi {
        label: "Write amplification".into(),
        value: wa.map(|(seen, inferred, _)| format!("{:.2}", seen.unwrap_or(inferred))),
        detail: wa.map_or("no write cliff".into(), |(seen, _, predicted)| {
            let how = if seen.is_some() {
                "seen (emulator counters)"
            } else {
                "inferred from the cliff's depth"
            };
            match predicted {
                Some(p) => format!("{how}; model {p:.2}"),
                None => how.into(),
            }
        }),
        anchor: "c-wsat-time".into(),
    }
}

fn steady_table(d: &CharacterizeDoc) -> Table {
    let mut t = Table::new(&["test", "tracked", "rounds", "steady", "value"]);
    for s in &d.steady_state.tests {
        let tracked = round_tests(d)
            .find(|r| r.name == s.test)
            .and_then(|r| r.tracked);
        t.row(vec![
            s.test.clone(),
            s.tracked.clone(),
            s.rounds.to_string(),
            if s.reached {
                "yes".into()
            } else {
                "NOT reached".into()
            },
            s.value.map_or("-".into(), |v| tracked_text(tracked, v)),
        ]);
    }
    t
}

/// One test's convergence plot: the tracked figure per round, the window
/// shaded, its mean with the ±10 % band, and the least-squares line.
fn convergence(t: &RoundTest) -> Figure {
    let id = format!("c-conv-{}", t.name);
    let title = format!("{}: {} per round", t.name, t.tracked_label);
    if t.tracked_values.is_empty() {
        let why = t
            .failure
            .clone()
            .unwrap_or_else(|| "no round completed".into());
        return missing(&id, &title, &why);
    }
    let unit = tracked_unit(t.tracked);
    let mut c = XyChart::new(
        &title,
        Axis::linear("round", Unit::Plain),
        Axis::linear(&t.tracked_label, unit),
    );
    let pts: Vec<(f64, f64)> = t
        .tracked_values
        .iter()
        .enumerate()
        .map(|(i, &v)| (i as f64 + 1.0, v))
        .collect();
    c.series
        .push(Series::new(&t.tracked_label, 0, Style::Line, pts));
    let mut note = String::new();
    if let Some(v) = &t.verdict {
        mark_window(&mut c, v, &mut note);
    }
    if let Some(p) = &t.precondition {
        let _ = write!(
            note,
            " Preconditioned with {} of {} writes ({:.1} s, {}/s).",
            fmt_bytes(p.bytes as f64),
            fmt_bytes(p.bs as f64),
            p.seconds,
            fmt_bytes(p.bw_bytes)
        );
    }
    if let Some(f) = &t.failure {
        let _ = write!(note, " Failed: {f}.");
    }
    let mut table = Table::new(&["round", "tracked", "points"]);
    for r in &t.rounds {
        table.row(vec![
            r.round.to_string(),
            tracked_text(t.tracked, r.tracked),
            r.points.len().to_string(),
        ]);
    }
    Figure {
        id,
        title,
        note,
        body: Body::Chart(c.svg()),
        table: Some(table),
    }
}

/// The steady window on a convergence plot: shaded, its mean with the
/// ±10 % band and the least-squares line, and the verdict in words.
fn mark_window(c: &mut XyChart, v: &PtsVerdict, note: &mut String) {
    let (a, b) = (v.window_first as f64, v.window_last as f64);
    let mean = v.stats.mean;
    c.marks.push(Mark::Band {
        x0: a,
        x1: b,
        label: "window".into(),
        fill: "#9cf".into(),
    });
    c.marks.push(Mark::HLine {
        y: mean,
        label: "mean".into(),
    });
    c.marks.push(Mark::HLine {
        y: 1.1 * mean,
        label: "+10 %".into(),
    });
    c.marks.push(Mark::HLine {
        y: 0.9 * mean,
        label: "−10 %".into(),
    });
    let line = |x: f64| v.stats.intercept + v.stats.slope * (x - a);
    c.series.push(Series::new(
        "least-squares line",
        1,
        Style::Dashed,
        vec![(a, line(a)), (b, line(b))],
    ));
    let _ = write!(
        note,
        "{} after {} rounds: over rounds {}–{} the range is {:.1} % of the mean ({}) and the least-squares line moves {:.1} %.",
        if v.reached { "Steady" } else { "Steady state NOT reached" },
        v.rounds,
        v.window_first,
        v.window_last,
        v.range_pct,
        if v.range_ok { "within the limit" } else { "over the limit" },
        v.excursion_pct
    );
}

/// The IOPS matrix: a table (block size × mix) and IOPS against block size.
fn iops_matrix(d: &CharacterizeDoc) -> Figure {
    let title = "IOPS by block size and read/write mix".to_string();
    let Some(m) = &d.iops_matrix else {
        let why = match &d.iops {
            None => "this characterization ran no IOPS test".into(),
            Some(t) => t.failure.clone().unwrap_or_else(|| {
                "the IOPS test completed no round, so there is no matrix".into()
            }),
        };
        return missing("c-iops-matrix", &title, &why);
    };
    let mut head = vec!["block size".to_string()];
    head.extend(m.mixes.iter().map(|x| format!("{x} (r/w)")));
    let mut table = Table {
        head,
        rows: Vec::new(),
    };
    for (i, bs) in m.block_sizes.iter().enumerate() {
        let mut row = vec![fmt_bytes(*bs as f64)];
        row.extend(m.iops[i].iter().map(|v| v.map_or("-".into(), fmt_count)));
        table.row(row);
    }
    let mut c = XyChart::new(
        &title,
        Axis::log2("block size", Unit::Bytes),
        Axis::log10("IOPS", Unit::Count),
    );
    for (j, mix) in m.mixes.iter().enumerate() {
        let pts: Vec<(f64, f64)> = m
            .block_sizes
            .iter()
            .enumerate()
            .filter_map(|(i, bs)| m.iops[i].get(j).copied().flatten().map(|v| (*bs as f64, v)))
            .collect();
        let mut pts = pts;
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        c.series
            .push(Series::new(&format!("{mix} r/w"), j, Style::Line, pts));
    }
    let note = format!(
        "{} block sizes × {} mixes, random, QD {}; each cell the mean of the IOPS test's steady window.",
        m.block_sizes.len(),
        m.mixes.len(),
        d.settings.iodepth
    );
    Figure {
        id: "c-iops-matrix".into(),
        title,
        note,
        body: Body::Chart(c.svg()),
        table: Some(table),
    }
}

/// Throughput: every throughput test's window points as bars.
fn throughput(d: &CharacterizeDoc) -> Figure {
    let title = "Sequential throughput".to_string();
    let pts: Vec<&WindowPoint> = d.throughput.iter().flat_map(|t| &t.window).collect();
    if pts.is_empty() {
        let why = d
            .throughput
            .iter()
            .find_map(|t| t.failure.clone())
            .unwrap_or_else(|| "this characterization ran no throughput test".into());
        return missing("c-throughput-bars", &title, &why);
    }
    let mut table = Table::new(&[
        "point",
        "bandwidth",
        "IOPS",
        "mean latency",
        "p99.99",
        "rounds",
    ]);
    for p in &pts {
        table.row(vec![
            p.label.clone(),
            format!("{}/s", fmt_bytes(p.bw_bytes)),
            fmt_count(p.iops),
            fmt_ns(p.lat_mean_ns),
            fmt_ns(p.lat_p99_99_ns as f64),
            p.rounds.to_string(),
        ]);
    }
    let chart = StackedBars {
        title: title.clone(),
        category_title: "point".into(),
        categories: pts.iter().map(|p| p.label.clone()).collect(),
        parts: vec![("bandwidth".into(), pts.iter().map(|p| p.bw_bytes).collect())],
        value: Axis::linear("bandwidth", Unit::BytesPerSec),
        alt: None,
        horizontal: true,
    };
    let note = format!(
        "QD {}, the mean of each test's steady window.",
        d.settings.iodepth
    );
    Figure {
        id: "c-throughput-bars".into(),
        title,
        note,
        body: Body::Chart(chart.svg()),
        table: Some(table),
    }
}

/// Latency: mean, p99.99 and maximum against the read share.
fn latency(d: &CharacterizeDoc) -> Figure {
    let title = "Response time by read/write mix, QD 1".to_string();
    let Some(t) = d.latency.as_ref().filter(|t| !t.window.is_empty()) else {
        let why = d
            .latency
            .as_ref()
            .and_then(|t| t.failure.clone())
            .unwrap_or_else(|| "this characterization ran no latency test".into());
        return missing("c-latency-mix", &title, &why);
    };
    let table = latency_table(t);
    let c = latency_chart(&title, t);
    let note = match &t.verdict {
        Some(v) => format!(
            "The mean of rounds {}–{} of the latency test.",
            v.window_first, v.window_last
        ),
        None => "The mean of the latency test's last rounds.".into(),
    };
    Figure {
        id: "c-latency-mix".into(),
        title,
        note,
        body: Body::Chart(c.svg()),
        table: Some(table),
    }
}

/// The latency test's window as a table, one row per point.
fn latency_table(t: &RoundTest) -> Table {
    let mut table = Table::new(&[
        "point",
        "block size",
        "read %",
        "mean",
        "p99.99",
        "max",
        "IOPS",
    ]);
    for p in &t.window {
        table.row(vec![
            p.label.clone(),
            fmt_bytes(p.bs as f64),
            p.read_pct.to_string(),
            fmt_ns(p.lat_mean_ns),
            fmt_ns(p.lat_p99_99_ns as f64),
            fmt_ns(p.lat_max_ns as f64),
            fmt_count(p.iops),
        ]);
    }
    table
}

/// Mean, p99.99 and maximum against the read share, one line per block
/// size.
fn latency_chart(title: &str, t: &RoundTest) -> XyChart {
    let mut c = XyChart::new(
        title,
        Axis::linear("reads", Unit::Pct),
        Axis::log10("response time", Unit::Ns),
    );
    let mut bs: Vec<u32> = t.window.iter().map(|p| p.bs).collect();
    bs.sort_unstable();
    bs.dedup();
    for (k, (name, f)) in [
        (
            "mean",
            (|p: &WindowPoint| p.lat_mean_ns) as fn(&WindowPoint) -> f64,
        ),
        ("p99.99", |p| p.lat_p99_99_ns as f64),
        ("max", |p| p.lat_max_ns as f64),
    ]
    .into_iter()
    .enumerate()
    {
        for &b in &bs {
            let mut pts: Vec<(f64, f64)> = t
                .window
                .iter()
                .filter(|p| p.bs == b)
                .map(|p| (p.read_pct as f64, f(p)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let label = if bs.len() > 1 {
                format!("{name} {}", fmt_bytes(b as f64))
            } else {
                name.to_string()
            };
            c.series.push(Series::new(
                &label,
                k,
                if k == 0 { Style::Line } else { Style::Dashed },
                pts,
            ));
        }
    }
    c
}

fn target_rows(d: &CharacterizeDoc) -> Vec<(String, String, Option<String>)> {
    let t = &d.target;
    let mut rows = vec![
        ("target".to_string(), t.spec.clone(), None),
        ("kind".into(), t.kind.clone(), None),
        ("capacity".into(), fmt_bytes(t.capacity_bytes as f64), None),
        (
            "logical block".into(),
            fmt_bytes(t.logical_block_size as f64),
            None,
        ),
        ("clock".into(), t.clock.clone(), None),
        (
            "random offsets".into(),
            d.settings.random_offsets.clone(),
            None,
        ),
    ];
    if !t.emulator_params.is_empty() {
        let p: Vec<String> = t
            .emulator_params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        rows.push(("emulator".into(), p.join(", "), None));
    }
    if let Some(m) = &t.model {
        rows.push((
            "model".into(),
            format!(
                "{} dies, {} pages per block, gc {}, spare factor (effective) {:.3}, WA predicted {:.2}",
                m.dies, m.pages_per_block, m.gc, m.alpha_effective, m.wa_predicted
            ),
            None,
        ));
    }
    for test in round_tests(d) {
        let warn = (!test.purge.done && d.settings.purge_requested)
            .then(|| "purge asked for, not done".to_string());
        rows.push((
            format!("{}: purge", test.name),
            test.purge.how.clone(),
            warn,
        ));
    }
    if let Some(w) = &d.wsat {
        rows.push(("wsat: purge".into(), w.purge.how.clone(), None));
    }
    rows
}

mod wsat;

#[cfg(test)]
mod tests;
