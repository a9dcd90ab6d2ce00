//! The study's applications section (`figures.applications`): each
//! application workload at each concurrency as the share of the device's
//! raw I/O rate (measured by the same study) that it made the device do,
//! with its own rate, latency and the device's I/O per operation in the
//! table beside.

use super::bars::StackedBars;
use super::charts::Axis;
use super::figure::{Body, Figure, Table};
use super::svg::Unit;
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_diagnosis::model::StudyDoc;

fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn table(d: &StudyDoc) -> Table {
    let mut t = Table::new(&[
        "workload",
        "jobs",
        "operations/s",
        "operation",
        "p50",
        "p99",
        "device reads/op",
        "device writes/op",
        "device bytes written/op",
        "flushes/op",
        "write amplification",
        "device I/Os/s",
        "% of raw IOPS",
        "result",
    ]);
    for p in &d.figures.applications {
        t.row(vec![
            p.name.clone(),
            p.jobs.to_string(),
            fmt_count(p.ops_per_s),
            p.op.clone(),
            fmt_ns(p.lat_p50_ns as f64),
            fmt_ns(p.lat_p99_ns as f64),
            num(p.reads_per_op, 2),
            num(p.writes_per_op, 2),
            num(p.write_bytes_per_op, 0),
            num(p.flushes_per_op, 2),
            num(p.write_amplification, 2),
            p.device_iops.map_or("-".into(), fmt_count),
            num(p.share_of_raw_pct, 1),
            p.result
                .clone()
                .unwrap_or_else(|| p.note.clone().unwrap_or_default()),
        ]);
    }
    t
}

/// The applications figure.
pub fn applications(d: &StudyDoc) -> Figure {
    let pts = &d.figures.applications;
    let raw = pts.iter().find_map(|p| p.raw_iops);
    let categories = pts
        .iter()
        .map(|p| format!("{} ×{}", p.name, p.jobs))
        .collect();
    let parts = vec![(
        "% of raw IOPS".to_string(),
        pts.iter()
            .map(|p| p.share_of_raw_pct.unwrap_or(0.0))
            .collect(),
    )];
    let chart = StackedBars {
        title: "Applications: the device's I/O rate they use, % of its raw limit".into(),
        category_title: "workload × jobs".into(),
        categories,
        parts,
        value: Axis::linear("% of the raw 4 KiB random-read IOPS", Unit::Pct),
        alt: None,
        horizontal: true,
    };
    let note = format!(
        "Each workload's operations per second times the device's reads and writes per operation (from /sys/block/X/stat around the run), against the device's raw limit in this study{}. A small share with a flush per operation is a workload bound by sync latency, not by the device's speed (Samsung, \"System-wide Issues for Efficient Use of E-SSD\").",
        raw.map_or(String::new(), |r| format!(" ({} IOPS)", fmt_count(r)))
    );
    let drawable = raw.is_some() && pts.iter().any(|p| p.share_of_raw_pct.is_some());
    Figure {
        id: "applications".into(),
        title: chart.title.clone(),
        note,
        body: if drawable {
            Body::Chart(chart.svg())
        } else {
            Body::Missing(
                "No share of the raw limit: the study has no raw limit, or the directory is on no block device (see the table).".into(),
            )
        },
        table: Some(table(d)),
    }
}
