//! The study of a fleet (`figures.fleet`, `study --client`): each run of
//! hosts 1…N together as its efficiency against the same hosts alone, with
//! the aggregate IOPS, merged p99 and slowest host in the table beside.

use super::bars::StackedBars;
use super::charts::Axis;
use super::figure::{Body, Figure, Table};
use super::svg::Unit;
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_diagnosis::fleet::Section;

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.0} %"))
}

fn table(s: &Section) -> Table {
    let mut t = Table::new(&[
        "QD",
        "hosts",
        "IOPS",
        "p99 (summed bins)",
        "alone, summed",
        "efficiency",
        "vs N × first",
        "slowest host",
        "result",
    ]);
    for p in &s.scaling {
        let slow = p.slowest.as_ref().map_or("-".into(), |x| {
            format!(
                "{} ({:.0} % of the time, {:+.0} % on the others{})",
                x.host,
                x.share_of_fleet_time_pct,
                x.past_median_pct,
                if x.projected { ", projected" } else { "" }
            )
        });
        t.row(vec![
            p.qd.to_string(),
            format!("{}{}", p.n, if p.partial { " (partial)" } else { "" }),
            fmt_count(p.iops),
            p.p99_ns.map_or("-".into(), |v| fmt_ns(v as f64)),
            p.solo_sum_iops.map_or("-".into(), fmt_count),
            pct(p.efficiency_pct),
            pct(p.vs_first_pct),
            slow,
            p.result.clone().unwrap_or_default(),
        ]);
    }
    t
}

/// The fleet figure.
pub fn fleet(s: &Section) -> Figure {
    let pts: Vec<_> = s
        .scaling
        .iter()
        .filter(|p| p.efficiency_pct.is_some())
        .collect();
    let chart = StackedBars {
        title: "Fleet: hosts together against the same hosts alone, %".into(),
        category_title: "QD × hosts".into(),
        categories: pts
            .iter()
            .map(|p| format!("QD {} × {}", p.qd, p.n))
            .collect(),
        parts: vec![(
            "efficiency".to_string(),
            pts.iter()
                .map(|p| p.efficiency_pct.unwrap_or(0.0))
                .collect(),
        )],
        value: Axis::linear("aggregate IOPS against the hosts alone, summed", Unit::Pct),
        alt: None,
        horizontal: true,
    };
    let note = format!(
        "{} hosts, {}: each alone, then 1…N together with the same I/Os each; rates added, p99 from the hosts' histograms summed bin by bin.{}",
        s.hosts.len(),
        s.target,
        match (s.delivered_pct, s.own_limits_iops) {
            (Some(d), Some(l)) => format!(
                " The fleet delivers {d:.0} % of its hosts' own limits summed ({} IOPS).",
                fmt_count(l)
            ),
            _ => String::new(),
        }
    );
    Figure {
        id: "fleet".into(),
        title: chart.title.clone(),
        note,
        body: if pts.is_empty() {
            Body::Missing("No run of the fleet finished on every host.".into())
        } else {
            Body::Chart(chart.svg())
        },
        table: Some(table(s)),
    }
}
