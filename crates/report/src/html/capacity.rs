//! The study's capacity at a latency target (`--slo`): p50, p99 and p99.9
//! from the schedule against the offered load (open loop), the "hockey
//! stick", with the answer in the note and every run in the table.

use super::charts::{Axis, Series, Style, XyChart};
use super::figure::{Body, Figure, Table};
use super::svg::Unit;
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_diagnosis::model::StudyDoc;

/// The load curve's figure; None when the study did not search.
pub fn load_curve(d: &StudyDoc) -> Option<Figure> {
    let cap = d.capacity.as_ref()?;
    let mut c = XyChart::new(
        &format!("Latency against offered load, {} (open loop)", cap.what),
        Axis::linear("offered load (IOPS)", Unit::Count),
        Axis::log10("latency from the schedule", Unit::Ns),
    );
    let mut t = Table::new(&[
        "side", "step", "offered", "carried", "p50", "p99", "p99.9", "target",
    ]);
    let sides = [
        ("platform", &cap.platform),
        ("device alone (model)", &cap.device),
    ];
    for (si, (side, found)) in sides.iter().enumerate() {
        let Some(found) = found else { continue };
        let curve: Vec<_> = found.points.iter().filter(|p| p.step == "curve").collect();
        for (k, name) in ["p50", "p99", "p99.9"].into_iter().enumerate() {
            let pts = curve
                .iter()
                .map(|p| {
                    let v = match k {
                        0 => p.p50_ns,
                        1 => p.p99_ns,
                        _ => p.p999_ns,
                    };
                    (p.offered_iops, v as f64)
                })
                .collect();
            c.series.push(Series::new(
                &format!("{side}: {name}"),
                3 * si + k,
                if si == 0 { Style::Line } else { Style::Dashed },
                pts,
            ));
        }
        for p in &found.points {
            t.row(vec![
                side.to_string(),
                p.step.clone(),
                fmt_count(p.offered_iops),
                fmt_count(p.achieved_iops),
                fmt_ns(p.p50_ns as f64),
                fmt_ns(p.p99_ns as f64),
                fmt_ns(p.p999_ns as f64),
                if p.meets { "meets" } else { "misses" }.into(),
            ]);
        }
    }
    let body = if c.series.is_empty() {
        Body::Missing(
            cap.error
                .clone()
                .unwrap_or_else(|| "the search made no run".into()),
        )
    } else {
        Body::Chart(c.svg())
    };
    Some(Figure {
        id: "capacity".into(),
        title: c.title.clone(),
        note: format!(
            "Poisson arrivals at a fixed offered load, latency from each I/O's intended issue time (no coordinated omission); the load grows from 10 % of the closed-loop peak to beyond it, then bisection finds the highest load within the target and a repeat confirms it. {}",
            cap.sentence
        ),
        body,
        table: Some(t),
    })
}
