//! The study's other workloads and its noise: bandwidth against block
//! size, read/write mixes against their limits, the optional sweeps'
//! comparisons (schedulers, engines, buffered, raw device against file,
//! several devices) with a card for what was not studied, and the spread
//! between repeats of each repeated point.

use super::bars::StackedBars;
use super::charts::{Axis, Mark, Series, Style, XyChart};
use super::curves::skipped_why;
use super::figure::{Body, Figure, Table};
use super::svg::{esc, Unit};
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
use ssdready_diagnosis::figures::sweeps::Comparisons;
use ssdready_diagnosis::model::StudyDoc;
use std::fmt::Write as _;

/// Bandwidth against block size, with the device's bandwidth limit.
pub fn block_sizes(d: &StudyDoc) -> Figure {
    let b = &d.figures.comparisons.block_sizes;
    let mut c = XyChart::new(
        "Bandwidth against block size (sequential reads)",
        Axis::log2("block size", Unit::Bytes),
        Axis::linear("bandwidth", Unit::BytesPerSec),
    );
    let mut rws: Vec<&str> = b.iter().map(|p| p.rw.as_str()).collect();
    rws.dedup();
    for (i, rw) in rws.iter().enumerate() {
        let pts: Vec<_> = b.iter().filter(|p| p.rw == *rw).collect();
        let mut s = Series::new(
            rw,
            i,
            Style::Line,
            pts.iter()
                .map(|p| (p.bs as f64, p.bw_bytes_per_s))
                .collect(),
        );
        s.labels = pts
            .iter()
            .map(|p| format!("{}/s", fmt_bytes(p.bw_bytes_per_s)))
            .collect();
        c.series.push(s);
    }
    let lim = match d.facts.get("bw_limit").map(|f| &f.value) {
        Some(ssdready_diagnosis::facts::Value::Num(v)) => Some(*v),
        _ => None,
    };
    if let Some(l) = lim {
        c.marks.push(Mark::HLine {
            y: l,
            label: format!("device limit {}/s", fmt_bytes(l)),
        });
    }
    let mut t = Table::new(&[
        "rw",
        "block size",
        "IOPS",
        "bandwidth",
        "mean latency",
        "runs",
    ]);
    for p in b {
        t.row(vec![
            p.rw.clone(),
            fmt_bytes(p.bs as f64),
            fmt_count(p.iops),
            format!("{}/s", fmt_bytes(p.bw_bytes_per_s)),
            fmt_ns(p.lat_mean_ns),
            p.runs.join(" "),
        ]);
    }
    Figure {
        id: "bs".into(),
        title: c.title.clone(),
        note:
            "Large blocks show the device's (or the link's) bandwidth; small ones its command rate."
                .into(),
        body: if b.is_empty() {
            Body::Missing(skipped_why(
                d,
                "block size",
                "the block-size sweep did not run.",
            ))
        } else {
            Body::Chart(c.svg())
        },
        table: Some(t),
    }
}

/// Read/write mixes: IOPS by direction, against their limits.
pub fn mixes(d: &StudyDoc) -> Figure {
    let m = &d.figures.comparisons.rw;
    let mut t = Table::new(&[
        "rw",
        "QD",
        "IOPS",
        "read IOPS",
        "write IOPS",
        "limit (its workload)",
        "delivered",
        "mean latency",
        "p99 latency",
        "runs",
    ]);
    for p in m {
        let del = p
            .runs
            .first()
            .and_then(|id| d.figures.delivered_pct.iter().find(|x| &x.run == id));
        t.row(vec![
            p.rw.clone(),
            p.qd.to_string(),
            fmt_count(p.iops),
            fmt_count(p.read_iops),
            fmt_count(p.write_iops),
            del.and_then(|x| x.limit_iops).map_or("-".into(), fmt_count),
            del.and_then(|x| x.pct)
                .map_or("-".into(), |v| format!("{v:.0} %")),
            fmt_ns(p.lat_mean_ns),
            fmt_ns(p.lat_p99_ns as f64),
            p.runs.join(" "),
        ]);
    }
    let chart = StackedBars {
        title: "IOPS of read/write mixes by direction (4 KiB random)".into(),
        category_title: "workload".into(),
        categories: m.iter().map(|p| format!("{} QD {}", p.rw, p.qd)).collect(),
        parts: vec![
            ("reads".into(), m.iter().map(|p| p.read_iops).collect()),
            ("writes".into(), m.iter().map(|p| p.write_iops).collect()),
        ],
        value: Axis::linear("IOPS", Unit::Count),
        alt: None,
        horizontal: true,
    };
    Figure {
        id: "rw".into(),
        title: chart.title.clone(),
        note: "The table gives each mix's limit: the device's, for that mix (an emulator's model weights reads and writes by time).".into(),
        body: if m.is_empty() { Body::Missing(skipped_why(d, "write", "the read/write sweep did not run.")) } else { Body::Chart(chart.svg()) },
        table: Some(t),
    }
}

/// The optional sweeps' comparisons that ran, and a card naming those
/// that did not.
pub fn comparisons(d: &StudyDoc) -> Vec<String> {
    let c = &d.figures.comparisons;
    let mut out: Vec<String> = [
        schedulers_card(c),
        engines_card(c),
        buffered_card(c),
        raw_card(c),
        devices_card(c),
    ]
    .into_iter()
    .flatten()
    .collect();
    if out.is_empty() {
        out.push(not_studied(d, "comparisons"));
    } else if !d.skipped.is_empty() {
        out.push(not_studied(d, "not-studied"));
    }
    out
}

/// One comparison's card: its id, title and note.
struct Card<'a> {
    id: &'a str,
    title: &'a str,
    note: &'a str,
}

impl Card<'_> {
    /// The card as horizontal IOPS bars (one per category) and its table.
    fn bars(&self, cats: Vec<String>, vals: Vec<f64>, t: Table) -> String {
        Figure {
            id: self.id.into(),
            title: self.title.into(),
            note: self.note.into(),
            body: Body::Chart(
                StackedBars {
                    title: self.title.into(),
                    category_title: "".into(),
                    categories: cats,
                    parts: vec![("IOPS".into(), vals)],
                    value: Axis::linear("IOPS", Unit::Count),
                    alt: None,
                    horizontal: true,
                }
                .svg(),
            ),
            table: Some(t),
        }
        .html()
    }
}

fn schedulers_card(c: &Comparisons) -> Option<String> {
    if c.schedulers.is_empty() {
        return None;
    }
    let mut t = Table::new(&[
        "scheduler",
        "QD",
        "IOPS",
        "mean latency",
        "cost against none",
        "queued",
        "runs",
    ]);
    for s in &c.schedulers {
        t.row(vec![
            s.scheduler.clone(),
            s.qd.to_string(),
            fmt_count(s.iops),
            fmt_ns(s.lat_mean_ns),
            s.cost_pct.map_or("-".into(), |v| format!("{v:.1} %")),
            s.queued_ns.map_or("-".into(), fmt_ns),
            s.runs.join(" "),
        ]);
    }
    let card = Card {
        id: "comparisons",
        title: "IOPS by I/O scheduler and depth",
        note: "Cost: IOPS lost against none at the same depth.",
    };
    Some(
        card.bars(
            c.schedulers
                .iter()
                .map(|s| format!("{} QD {}", s.scheduler, s.qd))
                .collect(),
            c.schedulers.iter().map(|s| s.iops).collect(),
            t,
        ),
    )
}

fn engines_card(c: &Comparisons) -> Option<String> {
    if c.engines.is_empty() {
        return None;
    }
    let mut t = Table::new(&[
        "engine",
        "QD",
        "threads",
        "IOPS",
        "mean latency",
        "CPU per I/O",
        "runs",
    ]);
    for e in &c.engines {
        t.row(vec![
            e.engine.clone(),
            e.qd.to_string(),
            e.threads.to_string(),
            fmt_count(e.iops),
            fmt_ns(e.lat_mean_ns),
            e.cpu_ns_per_io.map_or("-".into(), fmt_ns),
            e.runs.join(" "),
        ]);
    }
    let card = Card {
        id: "engines",
        title: "IOPS by engine and depth",
        note: "The engines' latency curves are in the latency-against-IOPS chart.",
    };
    Some(
        card.bars(
            c.engines
                .iter()
                .map(|e| format!("{} QD {} × {}", e.engine, e.qd, e.threads))
                .collect(),
            c.engines.iter().map(|e| e.iops).collect(),
            t,
        ),
    )
}

fn buffered_card(c: &Comparisons) -> Option<String> {
    if c.buffered.is_empty() {
        return None;
    }
    let mut t = Table::new(&[
        "QD",
        "buffered IOPS",
        "direct IOPS",
        "page-cache hits",
        "runs",
    ]);
    for b in &c.buffered {
        t.row(vec![
            b.qd.to_string(),
            fmt_count(b.buffered_iops),
            b.direct_iops.map_or("-".into(), fmt_count),
            b.cache_hit_pct.map_or("-".into(), |v| format!("{v:.0} %")),
            b.runs.join(" "),
        ]);
    }
    let (cats, vals): (Vec<String>, Vec<f64>) = c
        .buffered
        .iter()
        .flat_map(|b| {
            [
                (format!("buffered QD {}", b.qd), b.buffered_iops),
                (format!("direct QD {}", b.qd), b.direct_iops.unwrap_or(0.0)),
            ]
        })
        .unzip();
    let card = Card {
        id: "buffered",
        title: "Buffered against direct reads",
        note: "Page-cache hits are reads that never reached the device.",
    };
    Some(card.bars(cats, vals, t))
}

fn raw_card(c: &Comparisons) -> Option<String> {
    if c.raw_vs_file.is_empty() {
        return None;
    }
    let mut t = Table::new(&[
        "QD",
        "raw device IOPS",
        "file IOPS",
        "file system cost",
        "runs",
    ]);
    for r in &c.raw_vs_file {
        t.row(vec![
            r.qd.to_string(),
            fmt_count(r.raw_iops),
            r.file_iops.map_or("-".into(), fmt_count),
            r.fs_cost_pct.map_or("-".into(), |v| format!("{v:.1} %")),
            r.runs.join(" "),
        ]);
    }
    let (cats, vals): (Vec<String>, Vec<f64>) = c
        .raw_vs_file
        .iter()
        .flat_map(|r| {
            [
                (format!("raw QD {}", r.qd), r.raw_iops),
                (format!("file QD {}", r.qd), r.file_iops.unwrap_or(0.0)),
            ]
        })
        .unzip();
    let card = Card {
        id: "raw",
        title: "The raw device against a file on it",
        note: "",
    };
    Some(card.bars(cats, vals, t))
}

fn devices_card(c: &Comparisons) -> Option<String> {
    let dv = c.devices.as_ref()?;
    let mut t = Table::new(&["what", "IOPS"]);
    let mut cats = Vec::new();
    let mut vals = Vec::new();
    for (i, a) in dv.alone_iops.iter().enumerate() {
        t.row(vec![format!("device {} alone", i + 1), fmt_count(*a)]);
        cats.push(format!("device {} alone", i + 1));
        vals.push(*a);
    }
    t.row(vec![
        format!(
            "{} together ({:.0} % of the sum)",
            dv.devices, dv.efficiency_pct
        ),
        fmt_count(dv.together_iops),
    ]);
    cats.push("together".into());
    vals.push(dv.together_iops);
    let card = Card {
        id: "devices",
        title: "Several devices together against each alone",
        note: "",
    };
    Some(card.bars(cats, vals, t))
}

/// A card listing what the study did not do, and why.
fn not_studied(d: &StudyDoc, id: &str) -> String {
    let mut s = format!("<figure class=\"fig\" id=\"{id}\"><h3>Not studied</h3>");
    if d.skipped.is_empty() {
        s.push_str("<div class=\"missing\"><b>Not measured.</b> No optional sweep (schedulers, engines, buffered, raw device, several devices) applied to this target; add them with --sweeps.</div>");
    } else {
        s.push_str("<ul class=\"plain\">");
        for k in &d.skipped {
            let _ = write!(s, "<li><b>{}</b>: {}</li>", esc(&k.what), esc(&k.why));
        }
        s.push_str("</ul>");
    }
    s.push_str("</figure>");
    s
}

/// The spread between repeats of each repeated point.
pub fn noise(d: &StudyDoc) -> Figure {
    let n = &d.figures.noise;
    let mut t = Table::new(&[
        "point",
        "IOPS of each repeat",
        "spread (max − min) / median",
        "standard deviation / mean",
        "runs",
    ]);
    for p in n {
        t.row(vec![
            p.point.clone(),
            p.iops
                .iter()
                .map(|v| fmt_count(*v))
                .collect::<Vec<_>>()
                .join(", "),
            format!("{:.1} %", p.spread_pct),
            format!("{:.1} %", p.cov_pct),
            p.runs.join(" "),
        ]);
    }
    let chart = StackedBars {
        title: "Spread of IOPS between repeats of the same point".into(),
        category_title: String::new(),
        categories: n.iter().map(|p| p.point.clone()).collect(),
        parts: vec![(
            "spread: (max − min) / median".into(),
            n.iter().map(|p| p.spread_pct).collect(),
        )],
        value: Axis::linear("spread", Unit::Pct),
        alt: None,
        horizontal: true,
    };
    Figure {
        id: "noise".into(),
        title: chart.title.clone(),
        note: d.figures.noise_pct.map_or("No point was repeated.".into(), |v| {
            format!("Typical standard deviation between repeats: {v:.1} % (above 15 % the verdicts are marked low confidence). Verdict confidence compares each margin with this noise.")
        }),
        body: if n.is_empty() { Body::Missing("no point was repeated (the study was stopped early, or every repeat failed).".into()) } else { Body::Chart(chart.svg()) },
        table: Some(t),
    }
}
