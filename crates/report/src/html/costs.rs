//! Where the time goes: the split of each I/O's latency along its path at
//! every queue depth (from `--decompose`, the block layer's statistics or,
//! on an emulator, the model alone), CPU per I/O by kernel layer for the
//! profiled runs and by process against the rest of the system at every
//! depth (nanoseconds and TSC clocks), and what limits saturation.

use super::bars::{AltAxis, StackedBars};
use super::charts::Axis;
use super::curves::{run, skipped_why};
use super::figure::{Body, Figure, Table};
use super::svg::{esc, Unit};
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_diagnosis::model::StudyDoc;
use ssdready_measured::curve::CurvePoint;
use ssdready_measured::record::RunRecord;
use std::fmt::Write as _;

/// The parts of one depth's latency and where they come from.
fn split_at(d: &StudyDoc, p: &CurvePoint) -> Option<(Vec<(String, f64)>, &'static str)> {
    let inst = d
        .runs
        .iter()
        .filter(|r| {
            r.instrumented && r.error.is_none() && r.workload.qd == p.qd && r.workload.threads == 1
        })
        .find_map(|r| {
            r.summary
                .decomposition
                .as_ref()
                .filter(|x| !x.parts.is_empty())
        });
    if let Some(x) = inst {
        return Some((
            x.parts.iter().map(|(n, v, _)| (n.clone(), *v)).collect(),
            "eBPF decomposition (--decompose)",
        ));
    }
    let first = p.runs.first().and_then(|id| run(d, id));
    if let Some(b) = first.and_then(|r| r.summary.disk.as_ref()?.own_block_mean_ns()) {
        let above = (p.lat_mean_ns - b).max(0.0);
        return Some((
            vec![
                (
                    "above the block layer: system call, file system, completion".into(),
                    above,
                ),
                ("block layer, driver and device".into(), b),
            ],
            "/sys/block statistics (the part above the block layer is a lower bound)",
        ));
    }
    if let Some(dev) = p.device_lat_mean_ns {
        return Some((
            vec![
                (
                    "platform: ssdready and the emulator front".into(),
                    (p.lat_mean_ns - dev).max(0.0),
                ),
                (
                    "device: the model alone, virtual time".into(),
                    dev.min(p.lat_mean_ns),
                ),
            ],
            "emulator model: the same I/Os on the model alone",
        ));
    }
    None
}

/// One depth's split: depth, (part, mean ns) along the path, source, mean.
type DepthSplit<'a> = (u32, Vec<(String, f64)>, &'a str, f64);

/// Stacked bars of each depth's mean latency split along the I/O path.
pub fn decomposition(d: &StudyDoc) -> Figure {
    let (cats, names, rows) = depth_splits(d);
    let parts: Vec<(String, Vec<f64>)> = names
        .iter()
        .map(|n| {
            let v = rows
                .iter()
                .map(|r| r.1.iter().find(|x| &x.0 == n).map_or(0.0, |x| x.1))
                .collect();
            (n.clone(), v)
        })
        .collect();
    let (t, sources) = decomposition_table(&rows);
    let chart = StackedBars {
        title: "Mean latency per queue depth, split along the I/O path".into(),
        category_title: "queue depth (I/Os in flight)".into(),
        categories: cats,
        parts,
        value: Axis::linear("mean latency", Unit::Ns),
        alt: None,
        horizontal: false,
    };
    let body = if rows.is_empty() {
        Body::Missing(format!(
            "{} The split needs --decompose (as root, on a block device), or the block layer's statistics of a block device, or an emulated drive's model.",
            skipped_why(d, "decompos", "No run of this study measured the split.")
        ))
    } else {
        Body::Chart(chart.svg())
    };
    let share = d
        .figures
        .platform_share_qd1
        .as_ref()
        .map_or(String::new(), |s| {
            format!(
                " At QD 1 the platform holds {:.0} % ({} of {}).",
                s.pct,
                fmt_ns(s.platform_ns),
                fmt_ns(s.total_ns)
            )
        });
    Figure {
        id: "decomposition".into(),
        title: chart.title.clone(),
        note: format!(
            "Source: {}.{share}",
            if sources.is_empty() {
                "none".into()
            } else {
                sources.join("; ")
            }
        ),
        body,
        table: Some(t),
    }
}

/// Each depth's split along the I/O path where one was measured: the
/// categories, the parts' names in order of appearance, and the rows.
fn depth_splits(d: &StudyDoc) -> (Vec<String>, Vec<String>, Vec<DepthSplit<'_>>) {
    let mut cats = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut rows: Vec<DepthSplit> = Vec::new();
    for p in &d.figures.qd_curve {
        if let Some((parts, src)) = split_at(d, p) {
            for (n, _) in &parts {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            cats.push(format!("{}", p.qd));
            rows.push((p.qd, parts, src, p.lat_mean_ns));
        }
    }
    (cats, names, rows)
}

/// The splits as a table, with the sources they came from.
fn decomposition_table<'a>(rows: &[DepthSplit<'a>]) -> (Table, Vec<&'a str>) {
    let mut t = Table::new(&["QD", "part", "mean", "share of the mean", "source"]);
    let mut sources: Vec<&str> = Vec::new();
    for (qd, ps, src, total) in rows {
        for (n, v) in ps {
            let share = if *total > 0.0 { 100.0 * v / total } else { 0.0 };
            t.row(vec![
                qd.to_string(),
                n.clone(),
                fmt_ns(*v),
                format!("{share:.1} %"),
                src.to_string(),
            ]);
        }
        if !sources.contains(src) {
            sources.push(src);
        }
    }
    (t, sources)
}

/// TSC clocks per nanosecond, when the machine's TSC rate is known.
fn clocks_per_ns(d: &StudyDoc) -> Option<f64> {
    d.machine.tsc_hz.filter(|h| *h > 0.0).map(|h| h / 1e9)
}

fn clocks_axis(d: &StudyDoc) -> Option<AltAxis> {
    clocks_per_ns(d).map(|f| AltAxis {
        title: "TSC clocks per I/O".into(),
        unit: Unit::Count,
        factor: f,
    })
}

/// Most layers drawn; the rest are summed as "other layers".
const MAX_LAYERS: usize = 7;

/// The runs that were profiled by kernel layer.
fn profiled_runs(d: &StudyDoc) -> Vec<&RunRecord> {
    d.runs
        .iter()
        .filter(|r| {
            r.error.is_none()
                && r.summary
                    .profile
                    .as_ref()
                    .is_some_and(|p| !p.layers.is_empty())
        })
        .collect()
}

/// Layers by their largest cost anywhere, the biggest first.
fn layers_by_cost(profiled: &[&RunRecord]) -> Vec<(String, f64)> {
    let mut names: Vec<(String, f64)> = Vec::new();
    for r in profiled {
        for l in &r.summary.profile.as_ref().expect("filtered").layers {
            match names.iter_mut().find(|n| n.0 == l.0) {
                Some(n) => n.1 = n.1.max(l.2),
                None => names.push((l.0.clone(), l.2)),
            }
        }
    }
    names.sort_by(|a, b| b.1.total_cmp(&a.1));
    names
}

/// CPU per I/O by kernel layer for each profiled configuration.
pub fn cpu_layers(d: &StudyDoc) -> Figure {
    let profiled = profiled_runs(d);
    let names = layers_by_cost(&profiled);
    let shown: Vec<String> = names.iter().take(MAX_LAYERS).map(|n| n.0.clone()).collect();
    let mut parts: Vec<(String, Vec<f64>)> =
        shown.iter().map(|n| (n.clone(), Vec::new())).collect();
    if names.len() > MAX_LAYERS {
        parts.push(("other layers".into(), Vec::new()));
    }
    let mut t = Table::new(&[
        "run",
        "workload",
        "layer",
        "share of busy CPU",
        "ns per I/O",
        "clocks per I/O",
    ]);
    let mut cats = Vec::new();
    for r in &profiled {
        let p = r.summary.profile.as_ref().expect("filtered");
        cats.push(format!(
            "QD {} × {} ({})",
            r.workload.qd, r.workload.threads, r.id
        ));
        for (k, part) in parts.iter_mut().enumerate() {
            let v: f64 = if k < shown.len() {
                p.layers
                    .iter()
                    .filter(|l| l.0 == shown[k])
                    .map(|l| l.2)
                    .sum()
            } else {
                p.layers
                    .iter()
                    .filter(|l| !shown.contains(&l.0))
                    .map(|l| l.2)
                    .sum()
            };
            part.1.push(v);
        }
        for l in &p.layers {
            t.row(vec![
                r.id.clone(),
                format!("{} {} QD {}", r.workload.rw, r.workload.bs, r.workload.qd),
                l.0.clone(),
                format!("{:.1} %", l.1),
                fmt_ns(l.2),
                l.3.map_or("-".into(), fmt_count),
            ]);
        }
    }
    let chart = StackedBars {
        title: "CPU per I/O by layer, each profiled configuration (whole system)".into(),
        category_title: String::new(),
        categories: cats,
        parts,
        value: Axis::linear("busy CPU per I/O", Unit::Ns),
        alt: clocks_axis(d),
        horizontal: true,
    };
    let body = if profiled.is_empty() {
        Body::Missing(skipped_why(
            d,
            "profil",
            "No run was profiled: the study profiles the kernel by layer (--profile) only as root, where perf events are allowed.",
        ))
    } else {
        Body::Chart(chart.svg())
    };
    Figure {
        id: "cpu".into(),
        title: chart.title.clone(),
        note: "Sampled on every CPU during the run and classified by kernel layer (--profile); bar labels give nanoseconds and TSC clocks per I/O. Lock functions count in their callers' layers.".into(),
        body,
        table: Some(t),
    }
}

/// CPU per I/O at every depth: ssdready's process and the rest of the
/// system.
pub fn cpu_by_qd(d: &StudyDoc) -> Figure {
    let mut cats = Vec::new();
    let (mut own, mut rest) = (Vec::new(), Vec::new());
    let mut t = Table::new(&[
        "QD",
        "run",
        "process ns/I/O",
        "system ns/I/O",
        "process clocks/I/O",
        "system clocks/I/O",
        "CPUs busy",
        "submitting thread busy",
        "ctx switches/I/O",
        "interrupts/I/O",
    ]);
    for p in &d.figures.qd_curve {
        let Some(r) = p.runs.first().and_then(|id| run(d, id)) else {
            continue;
        };
        let Some(c) = &r.summary.cpu else {
            continue;
        };
        cats.push(p.qd.to_string());
        own.push(c.process_ns_per_io);
        rest.push((c.system_ns_per_io - c.process_ns_per_io).max(0.0));
        t.row(vec![
            p.qd.to_string(),
            r.id.clone(),
            fmt_ns(c.process_ns_per_io),
            fmt_ns(c.system_ns_per_io),
            c.process_clocks_per_io.map_or("-".into(), fmt_count),
            c.system_clocks_per_io.map_or("-".into(), fmt_count),
            format!("{:.0} %", c.system_busy_pct),
            c.thread_busy_max_pct
                .map_or("-".into(), |v| format!("{v:.0} %")),
            format!("{:.2}", c.ctx_switches_per_io),
            format!("{:.2}", c.interrupts_per_io),
        ]);
    }
    let chart = StackedBars {
        title: "CPU per I/O against queue depth: ssdready's process and the rest of the system"
            .into(),
        category_title: "queue depth (I/Os in flight)".into(),
        categories: cats,
        parts: vec![
            ("ssdready (user and kernel)".into(), own),
            ("rest of the system".into(), rest),
        ],
        value: Axis::linear("busy CPU per I/O", Unit::Ns),
        alt: clocks_axis(d),
        horizontal: false,
    };
    let body = if t.rows.is_empty() {
        Body::Missing("No run of the queue-depth sweep measured CPU.".into())
    } else {
        Body::Chart(chart.svg())
    };
    let src = d
        .figures
        .qd_curve
        .first()
        .and_then(|p| run(d, p.runs.first()?))
        .and_then(|r| r.summary.cpu.as_ref())
        .map_or(String::new(), |c| {
            format!(" Whole-system figure: {}.", c.source)
        });
    Figure {
        id: "cpu-qd".into(),
        title: chart.title.clone(),
        note: format!("All CPUs' busy time over the measured window divided by its I/Os: the process by getrusage, the rest is every other thread, interrupt and kernel worker.{src}"),
        body,
        table: Some(t),
    }
}

/// What limits the peak, with its evidence.
pub fn saturation_card(d: &StudyDoc) -> String {
    let s = &d.figures.saturation;
    let mut h =
        String::from("<figure class=\"fig\" id=\"saturation\"><h3>What limits the peak</h3>");
    if s.repeats.is_empty() {
        h.push_str("<div class=\"missing\"><b>Not measured.</b> The queue-depth sweep did not reach a peak to classify.</div></figure>");
        return h;
    }
    let agree = s.repeats.iter().filter(|r| r.limit == s.limit).count();
    let _ = write!(
        h,
        "<p class=\"note\">At QD {}: {} IOPS. Each candidate weighed on its evidence by crates/diagnosis/src/limit; {agree} of {} repeats gave this answer{}.</p><p><b>{}</b> — {}</p><ul class=\"plain\">",
        s.qd,
        fmt_count(s.iops),
        s.repeats.len(),
        s.margin_pct.map_or(String::new(), |m| format!("; the deciding figure was {m:.0} % past its threshold")),
        esc(s.limit.name()),
        esc(&s.part)
    );
    for e in &s.evidence {
        let _ = write!(h, "<li>{}</li>", esc(e));
    }
    if let Some(st) = &s.setting {
        let _ = write!(h, "<li>the setting that holds it: {}</li>", esc(&st.show()));
    }
    h.push_str("</ul>");
    if !s.ruled_out.is_empty() {
        h.push_str("<details><summary>Ruled out, and why</summary><ul class=\"plain\">");
        for r in &s.ruled_out {
            let _ = write!(
                h,
                "<li><b>{}</b>: {}</li>",
                esc(r.cause.name()),
                esc(&r.why)
            );
        }
        h.push_str("</ul></details>");
    }
    let mut t = Table::new(&["figure", "value"]);
    let pct = |v: Option<f64>| v.map(|v| format!("{v:.1} %"));
    for (k, v) in [
        ("of the device's limit", pct(s.delivered_pct)),
        (
            "of the model alone at this depth",
            pct(s.of_device_at_point_pct),
        ),
        ("submitting thread busy", pct(s.thread_busy_pct)),
        ("all CPUs busy", pct(s.system_busy_pct)),
        (
            "driver and device share of latency",
            pct(s.device_share_pct),
        ),
        ("completion share of latency", pct(s.completion_share_pct)),
        ("submission share of latency", pct(s.submission_share_pct)),
        ("CPU samples in lock functions", pct(s.lock_share_pct)),
    ] {
        if let Some(v) = v {
            t.row(vec![k.into(), v]);
        }
    }
    t.row(vec!["runs".into(), s.runs.join(" ")]);
    let _ = write!(
        h,
        "<details><summary>Data ({} rows)</summary>{}</details></figure>",
        t.rows.len(),
        t.html()
    );
    h
}
