//! The report of a single run (`ssdready run --report DIR`): its key
//! figures (throughput, latency, CPU per I/O, the platform's share of the
//! latency where measured), the latency percentiles of each job, the split
//! of the latency along the I/O path, CPU per I/O, the run over time with
//! its heat map, every job's figures and the platform with its lab
//! conditions. A single run has one queue depth: the curves, the knee and
//! the verdicts are the study's.

use super::bars::{AltAxis, StackedBars};
use super::charts::{Axis, Series, Style, XyChart};
use super::figure::{Body, Figure, Table};
use super::page::{header, kpis, kv_table, page, platform_rows, section, utc, Kpi};
use super::svg::{esc, Unit};
use super::timeline;
use ssdready_core::result::RunResult;
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
use ssdready_measured::summary::PointSummary;
use std::fmt::Write as _;

/// The whole page.
pub fn render(r: &RunResult) -> String {
    let s = PointSummary::from_result(r);
    let jobs: Vec<String> = r.jobs.iter().map(|j| j.name.clone()).collect();
    let mut body = run_header(r, &s, &jobs);
    body.push_str(&answer(r, &s));
    let tl = timeline::of_run(r, jobs.first().map_or("run", |j| j.as_str()));
    let note = timeline::window_note(&tl);
    body.push_str(&section(
        "s-latency",
        "Latency and where it goes",
        "",
        &[
            percentiles(r).html(),
            decomposition(&s).html(),
            cpu(r, &s).html(),
        ],
    ));
    if let Some(e) = super::exactcpu::section(r) {
        body.push_str(&e);
    }
    body.push_str(&section(
        "s-over-time",
        "Over time",
        "",
        &[
            timeline::timeline_figure(&tl, "timeline", &note).html(),
            timeline::heatmap_figure(&tl, "heatmap").html(),
        ],
    ));
    body.push_str(&platform_section(r));
    page(&format!("ssdready run: {}", jobs.join(", ")), &body)
}

/// The page's header (jobs, targets, when, where) and its banners.
fn run_header(r: &RunResult, s: &PointSummary, jobs: &[String]) -> String {
    let targets: Vec<String> = r
        .jobs
        .iter()
        .flat_map(|j| j.targets.iter().map(|t| t.path.clone()))
        .fold(Vec::new(), |mut v, t| {
            if !v.contains(&t) {
                v.push(t);
            }
            v
        });
    let virtual_time = r.emulator.as_ref().is_some_and(|e| e.clock == "virtual");
    let meta = vec![
        format!(
            "{} · measured window {:.1} s{}",
            utc(r.started_unix_ms),
            s.window_s,
            if virtual_time {
                " of virtual time (the emulator model alone)"
            } else {
                ""
            }
        ),
        format!(
            "{} × {} · kernel {}",
            r.platform.cpus_online, r.platform.cpu_model, r.platform.kernel
        ),
    ];
    let mut body = header(
        &format!("ssdready run: {}", jobs.join(", ")),
        &targets.join(", "),
        &meta,
    );
    if r.interrupted {
        body.push_str(
            "<div class=\"banner\"><b>Interrupted.</b> The figures cover what ran.</div>",
        );
    }
    if let Some(f) = &r.failure {
        let _ = write!(
            body,
            "<div class=\"banner\"><b>Incomplete.</b> {}</div>",
            esc(f)
        );
    }
    body
}

/// The key figures, the jobs and the notes on them.
fn answer(r: &RunResult, s: &PointSummary) -> String {
    let mut notes = String::from("<li>A single run has one queue depth: the device's limit, the knee and verdicts come from <code>ssdready study</code>.</li>");
    for w in r.warnings.iter().chain(&s.checks_disagree) {
        let _ = write!(notes, "<li>{}</li>", esc(w));
    }
    format!(
        "<div class=\"answer\"><div class=\"kpis\">{}</div><div class=\"verdicts\"><h2>Jobs</h2>{}<ul class=\"plain\">{notes}</ul></div></div>",
        kpis(&key_figures(r, s)),
        jobs_table(r).html()
    )
}

/// The platform and lab conditions, and the footer.
fn platform_section(r: &RunResult) -> String {
    let mut rows = platform_rows(&r.platform);
    rows.push((
        "clock".into(),
        format!(
            "{}{}; {:.1} ns per timestamp",
            r.clock.source,
            r.clock
                .tsc_hz
                .map_or(String::new(), |h| format!(", TSC {:.3} GHz", h / 1e9)),
            r.clock.ns_per_timestamp
        ),
        None,
    ));
    let warned = rows.iter().filter(|x| x.2.is_some()).count();
    format!(
        "<section class=\"sec\" id=\"platform\"><h2>Platform and lab conditions</h2><p class=\"intro\">{}</p><div class=\"card\">{}</div></section>\n<footer>{} · rendered from the run's native JSON (schema {} v{}) · re-render with <code>ssdready report DIR</code></footer>",
        if warned > 0 { format!("{warned} condition(s) can make results noisy or unrepresentative (highlighted).") } else { "No lab condition was flagged.".into() },
        kv_table(&rows),
        esc(&r.tool),
        esc(&r.schema),
        r.schema_version
    )
}

fn key_figures(r: &RunResult, s: &PointSummary) -> Vec<Kpi> {
    let mut k = vec![
        Kpi {
            label: "Throughput".into(),
            value: Some(format!("{} IOPS", fmt_count(s.iops))),
            detail: format!("{}/s over {:.1} s", fmt_bytes(s.bw_bytes_per_s), s.window_s),
            anchor: "timeline".into(),
        },
        Kpi {
            label: "Latency (mean)".into(),
            value: Some(fmt_ns(s.lat_mean_ns)),
            detail: format!(
                "p50 {}, p99 {}, p99.9 {}",
                fmt_ns(s.lat_p50_ns as f64),
                fmt_ns(s.lat_p99_ns as f64),
                fmt_ns(s.lat_p999_ns as f64)
            ),
            anchor: "percentiles".into(),
        },
    ];
    k.push(match &s.cpu {
        Some(c) => Kpi {
            label: "CPU per I/O (whole system)".into(),
            value: Some(fmt_ns(c.system_ns_per_io)),
            detail: format!(
                "{}ssdready's process {}",
                c.system_clocks_per_io
                    .map_or(String::new(), |v| format!("{} clocks; ", fmt_count(v))),
                fmt_ns(c.process_ns_per_io)
            ),
            anchor: "cpu".into(),
        },
        None => Kpi {
            label: "CPU per I/O (whole system)".into(),
            value: None,
            detail: "no CPU figures in this result".into(),
            anchor: "cpu".into(),
        },
    });
    let share = s.decomposition.as_ref().and_then(|d| {
        d.platform_share_pct
            .map(|p| (p, "eBPF decomposition".to_string()))
    });
    let share = share.or_else(|| {
        let b = s.disk.as_ref()?.own_block_mean_ns()?;
        (s.lat_mean_ns > 0.0).then(|| {
            (
                100.0 * (s.lat_mean_ns - b).max(0.0) / s.lat_mean_ns,
                "above the block layer (/sys/block, a lower bound)".to_string(),
            )
        })
    });
    k.push(match share {
        Some((p, src)) => Kpi {
            label: "Platform's share of latency".into(),
            value: Some(format!("{p:.0} %")),
            detail: src,
            anchor: "decomposition".into(),
        },
        None => Kpi {
            label: "Platform's share of latency".into(),
            value: None,
            detail: if r
                .jobs
                .iter()
                .any(|j| j.targets.iter().any(|t| t.device.is_some()))
            {
                "needs --decompose (root)".into()
            } else {
                "needs a block device (or an emulator study)".into()
            },
            anchor: "decomposition".into(),
        },
    });
    k
}

/// Every job and direction: counts, throughput and latency.
fn jobs_table(r: &RunResult) -> Table {
    let mut t = Table::new(&[
        "job",
        "dir",
        "workload",
        "IOPS",
        "bandwidth",
        "mean",
        "p50",
        "p99",
        "p99.9",
        "max",
        "errors",
    ]);
    for j in &r.jobs {
        let bs = match (j.spec.bs.min(), j.spec.bs.max()) {
            (a, b) if a == b => fmt_bytes(a as f64),
            (a, b) => format!("{}–{}", fmt_bytes(a as f64), fmt_bytes(b as f64)),
        };
        let w = format!(
            "{} {bs} QD {} × {}",
            j.spec.rw.name(),
            j.spec.iodepth,
            j.workers
        );
        for (dir, d) in j.dirs() {
            let p = |q: f64| {
                d.lat
                    .percentiles
                    .iter()
                    .find(|x| (x.0 - q).abs() < 1e-9)
                    .map_or("-".into(), |x| fmt_ns(x.1 as f64))
            };
            t.row(vec![
                j.name.clone(),
                dir.into(),
                w.clone(),
                fmt_count(d.iops),
                format!("{}/s", fmt_bytes(d.bw_bytes_per_s)),
                fmt_ns(d.lat.mean_ns),
                p(50.0),
                p(99.0),
                p(99.9),
                fmt_ns(d.lat.max_ns as f64),
                j.errors.to_string(),
            ]);
        }
    }
    t
}

/// `p99.9` → 3 nines: the x position of a percentile.
fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).max(1e-9).log10()
}

/// Each job's latency percentiles, from p1 to p99.99.
fn percentiles(r: &RunResult) -> Figure {
    let mut x = Axis::linear("percentile (spaced by nines)", Unit::Plain);
    x.zero = true;
    x.ticks = [
        (10.0, "p10"),
        (50.0, "p50"),
        (90.0, "p90"),
        (99.0, "p99"),
        (99.9, "p99.9"),
        (99.99, "p99.99"),
        (99.999, "p99.999"),
    ]
    .iter()
    .map(|(p, l)| (nines(*p), l.to_string()))
    .collect();
    let mut c = XyChart::new(
        "Total latency percentiles of each job",
        x,
        Axis::log10("latency", Unit::Ns),
    );
    let mut t = Table::new(&["job", "dir", "percentile", "latency"]);
    let mut k = 0;
    for j in r.jobs.iter() {
        for (dir, d) in j.dirs() {
            let pts: Vec<(f64, f64)> = d
                .lat
                .percentiles
                .iter()
                .map(|(p, v)| (nines(*p), *v as f64))
                .collect();
            let mut s = Series::new(&format!("{} {dir}", j.name), k, Style::Line, pts);
            s.tips = d
                .lat
                .percentiles
                .iter()
                .map(|(p, v)| format!("{} {dir} p{p}: {}", j.name, fmt_ns(*v as f64)))
                .collect();
            c.series.push(s);
            for (p, v) in &d.lat.percentiles {
                t.row(vec![
                    j.name.clone(),
                    dir.into(),
                    format!("p{p}"),
                    fmt_ns(*v as f64),
                ]);
            }
            k += 1;
        }
    }
    Figure {
        id: "percentiles".into(),
        title: c.title.clone(),
        note: "Issue to completion seen, within 0.39 % (ssdready's histogram); the horizontal axis gives each nine equal room.".into(),
        body: if t.rows.is_empty() { Body::Missing("no job completed an I/O.".into()) } else { Body::Chart(c.svg()) },
        table: Some(t),
    }
}

/// The measured jobs' latency split along the I/O path.
fn decomposition(s: &PointSummary) -> Figure {
    let (parts, src): (Vec<(String, f64)>, &str) = match (
        &s.decomposition,
        s.disk.as_ref().and_then(|d| d.own_block_mean_ns()),
    ) {
        (Some(d), _) if !d.parts.is_empty() => (
            d.parts.iter().map(|p| (p.0.clone(), p.1)).collect(),
            "eBPF decomposition (--decompose)",
        ),
        (_, Some(b)) => (
            vec![
                (
                    "above the block layer: system call, file system, completion".into(),
                    (s.lat_mean_ns - b).max(0.0),
                ),
                ("block layer, driver and device".into(), b),
            ],
            "/sys/block statistics (the part above the block layer is a lower bound)",
        ),
        _ => (Vec::new(), ""),
    };
    let mut t = Table::new(&["part", "mean", "share of the mean"]);
    for (n, v) in &parts {
        t.row(vec![
            n.clone(),
            fmt_ns(*v),
            format!(
                "{:.1} %",
                if s.lat_mean_ns > 0.0 {
                    100.0 * v / s.lat_mean_ns
                } else {
                    0.0
                }
            ),
        ]);
    }
    let chart = StackedBars {
        title: "Mean latency split along the I/O path".into(),
        category_title: String::new(),
        categories: vec!["measured jobs".into()],
        parts: parts.iter().map(|(n, v)| (n.clone(), vec![*v])).collect(),
        value: Axis::linear("mean latency", Unit::Ns),
        alt: None,
        horizontal: true,
    };
    Figure {
        id: "decomposition".into(),
        title: chart.title.clone(),
        note: if src.is_empty() {
            String::new()
        } else {
            format!("Source: {src}.")
        },
        body: if parts.is_empty() {
            Body::Missing(s.decomposition.as_ref().and_then(|d| d.note.clone()).unwrap_or_else(|| "The split needs --decompose (as root, on a block device) or a block device's statistics; this run had neither.".into()))
        } else {
            Body::Chart(chart.svg())
        },
        table: Some(t),
    }
}

/// CPU per I/O: by kernel layer with --profile, else the process against
/// the rest of the system.
fn cpu(r: &RunResult, s: &PointSummary) -> Figure {
    let alt = r.clock.tsc_hz.filter(|h| *h > 0.0).map(|h| AltAxis {
        title: "TSC clocks per I/O".into(),
        unit: Unit::Count,
        factor: h / 1e9,
    });
    let mut t = Table::new(&["part", "ns per I/O", "clocks per I/O", "share of busy CPU"]);
    let (parts, title): (Vec<(String, f64)>, &str) = match (&s.profile, &s.cpu) {
        (Some(p), _) if !p.layers.is_empty() => {
            for l in &p.layers {
                t.row(vec![
                    l.0.clone(),
                    fmt_ns(l.2),
                    l.3.map_or("-".into(), fmt_count),
                    format!("{:.1} %", l.1),
                ]);
            }
            (
                p.layers.iter().map(|l| (l.0.clone(), l.2)).collect(),
                "CPU per I/O by layer (whole system, --profile)",
            )
        }
        (_, Some(c)) => {
            let rest = (c.system_ns_per_io - c.process_ns_per_io).max(0.0);
            t.row(vec![
                "ssdready (user and kernel)".into(),
                fmt_ns(c.process_ns_per_io),
                c.process_clocks_per_io.map_or("-".into(), fmt_count),
                "-".into(),
            ]);
            t.row(vec![
                "rest of the system".into(),
                fmt_ns(rest),
                "-".into(),
                "-".into(),
            ]);
            (
                vec![
                    ("ssdready (user and kernel)".into(), c.process_ns_per_io),
                    ("rest of the system".into(), rest),
                ],
                "CPU per I/O: ssdready's process and the rest of the system",
            )
        }
        _ => (Vec::new(), "CPU per I/O"),
    };
    let chart = StackedBars {
        title: title.into(),
        category_title: String::new(),
        categories: vec!["measured jobs".into()],
        parts: parts.iter().map(|(n, v)| (n.clone(), vec![*v])).collect(),
        value: Axis::linear("busy CPU per I/O", Unit::Ns),
        alt,
        horizontal: true,
    };
    Figure {
        id: "cpu".into(),
        title: title.into(),
        note: s.cpu.as_ref().map_or(String::new(), |c| {
            format!(
                "Whole-system figure: {}. Kernel layers need --profile (root).",
                c.source
            )
        }),
        body: if parts.is_empty() {
            let virtual_time = r.emulator.as_ref().is_some_and(|e| e.clock == "virtual");
            Body::Missing(if virtual_time {
                "a simulation in virtual time runs on no platform: it has no CPU figures.".into()
            } else {
                "this result has no CPU figures.".into()
            })
        } else {
            Body::Chart(chart.svg())
        },
        table: Some(t),
    }
}
