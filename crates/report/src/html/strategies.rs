//! The study's strategies section (`figures.strategies`): each
//! submission/completion strategy's share of the device's peak as bars —
//! Shin's table drawn, its published figures in the table beside —
//! and every result's trade-off against async+intr (IOPS, CPU per I/O and
//! p99 latency as ratios, CPU from the process's getrusage), with what was
//! skipped and why.

use super::bars::StackedBars;
use super::charts::Axis;
use super::figure::{Body, Figure, Table};
use super::svg::Unit;
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_diagnosis::model::StudyDoc;
use ssdready_diagnosis::strategies::{fmt_ratio, ResultDoc, Section, BASELINE};

fn ratio(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{}×", fmt_ratio(v)))
}

fn table(results: &[ResultDoc]) -> Table {
    let mut t = Table::new(&[
        "strategy",
        "pattern",
        "ran",
        "IOPS",
        "% of peak",
        "Shin published",
        "mean latency",
        "p99 latency",
        "CPU per I/O (process)",
        "×IOPS",
        "×CPU per I/O",
        "×p99",
        "device interrupts per I/O",
        "run",
    ]);
    for r in results {
        let vs = r.vs_async_intr.clone().unwrap_or_default();
        let base = r.strategy == BASELINE;
        let or_base = |x: Option<f64>| if base { "1×".into() } else { ratio(x) };
        t.row(vec![
            r.strategy.clone(),
            r.pattern.clone(),
            r.ran.clone(),
            r.iops.map_or("-".into(), fmt_count),
            r.pct_of_peak.map_or("-".into(), |v| format!("{v:.0} %")),
            r.published_pct.map_or("".into(), |v| format!("{v:.0} %")),
            r.mean_lat_ns.map_or("-".into(), fmt_ns),
            fmt_ns(r.p99_lat_ns as f64),
            r.cpu_ns_per_io.map_or("-".into(), fmt_ns),
            or_base(vs.iops_ratio),
            or_base(vs.cpu_per_io_ratio),
            or_base(vs.p99_lat_ratio),
            interrupts(r),
            r.run.clone().unwrap_or_default(),
        ]);
    }
    t
}

/// The device's queue interrupts per I/O, with the verdict of a polled
/// result; `-` where the device has no queue vectors to count.
fn interrupts(r: &ResultDoc) -> String {
    let per = r.device_interrupts_per_io.map(fmt_ratio);
    match (per, r.polled) {
        (Some(p), Some(true)) => format!("{p}: polled"),
        (Some(p), Some(false)) => format!("{p}: not all polled"),
        (Some(p), None) => p,
        (None, _) => "-".into(),
    }
}

/// The figure's note: the peaks it is a share of, the best strategy on
/// random reads, and what was skipped.
fn strategies_note(s: &Section) -> String {
    let mut note = String::from("Each strategy's throughput as a share of the device's peak (");
    note.push_str(
        &s.peak
            .iter()
            .map(|p| format!("{} {}: {}", p.pattern, p.source, p.detail))
            .collect::<Vec<_>>()
            .join("; "),
    );
    note.push_str("). The table sets each against async+intr on the same pattern: ×IOPS, ×CPU per I/O (the process's CPU, getrusage over the measured window, every ssdready thread) and ×p99 latency.");
    if let Some(b) = &s.best {
        note.push_str(&format!(
            " Best on random reads: {} at {} async+intr's IOPS, {} its CPU per I/O, {} its p99.",
            b.strategy,
            ratio(Some(b.iops_ratio)),
            ratio(b.cpu_per_io_ratio),
            ratio(b.p99_lat_ratio)
        ));
    }
    for k in &s.skipped {
        note.push_str(&format!(
            " Skipped {} ({}): {}.",
            k.strategy,
            k.pattern.as_deref().unwrap_or("every pattern"),
            k.reason
        ));
    }
    note
}

/// The strategies figure: % of peak per strategy and pattern, the
/// trade-offs in its table.
pub fn strategies(d: &StudyDoc) -> Figure {
    let Some(s) = &d.figures.strategies else {
        return Figure {
            id: "strategies".into(),
            title: "Submission and completion strategies".into(),
            note: String::new(),
            body: Body::Missing(
                "This study ran no strategies (a study made before they were part of it).".into(),
            ),
            table: None,
        };
    };
    let mut patterns: Vec<&str> = s.results.iter().map(|r| r.pattern.as_str()).collect();
    patterns.sort_unstable();
    patterns.dedup();
    // One bar per strategy and pattern (the pattern named when several ran).
    let categories = s
        .results
        .iter()
        .map(|r| match patterns.len() {
            1 => r.strategy.clone(),
            _ => format!("{} {}", r.strategy, r.pattern),
        })
        .collect();
    let parts = vec![(
        "% of peak".to_string(),
        s.results
            .iter()
            .map(|r| r.pct_of_peak.unwrap_or(0.0))
            .collect(),
    )];
    let chart = StackedBars {
        title: format!(
            "Strategies: % of the device's peak, 4 KiB from {} threads at QD 1 each",
            s.threads
        ),
        category_title: "strategy".into(),
        categories,
        parts,
        value: Axis::linear("share of the device's peak", Unit::Pct),
        alt: None,
        horizontal: true,
    };
    let note = strategies_note(s);
    Figure {
        id: "strategies".into(),
        title: chart.title.clone(),
        note,
        body: if s.results.is_empty() {
            Body::Missing("No strategy ran on this target (see the skipped ones above).".into())
        } else {
            Body::Chart(chart.svg())
        },
        table: Some(table(&s.results)),
    }
}
