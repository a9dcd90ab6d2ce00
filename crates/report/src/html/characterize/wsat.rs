//! Write saturation on the characterization's page: the write cliff in
//! words, and WSAT's IOPS against time or the capacity written, with the
//! cliff marked and the samples as a table.

use super::super::charts::{Axis, Mark, Series, Style, XyChart};
use super::super::figure::{Body, Figure, Table};
use super::super::svg::Unit;
use super::{missing, MAX_TABLE_ROWS};
use ssdready_characterize_judge::model::{CharacterizeDoc, WriteCliff, WsatResult};
use ssdready_core::units::{fmt_bytes, fmt_count};
use std::fmt::Write as _;

/// The write cliff in words (the section's introduction).
pub(super) fn cliff_text(d: &CharacterizeDoc) -> String {
    let Some(c) = &d.write_cliff else {
        return d
            .write_cliff_note
            .clone()
            .unwrap_or_else(|| "No write cliff was found.".into());
    };
    let mut s = format!(
        "4 KiB random writes from fresh: {} IOPS until {} had been written ({:.2}× the capacity, {:.1} s), then the cliff; {} IOPS from {:.1} s ({}), {:.1}× below the fresh level.",
        fmt_count(c.fresh_iops),
        fmt_bytes(c.cliff_at_bytes as f64),
        c.cliff_at_capacity,
        c.cliff_at_s,
        fmt_count(c.steady_iops),
        c.steady_from_s,
        if c.settled { "settled by the PTS rule" } else { "NOT settled by the PTS rule" },
        c.ratio
    );
    if let Some(wa) = c.wa_seen {
        let _ = write!(
            s,
            " Write amplification {wa:.2} seen by the emulator's counters"
        );
        if let (Some(p), Some(e)) = (c.wa_predicted, c.wa_error_pct) {
            let _ = write!(s, ", {p:.2} predicted by Desnoyers' model ({e:+.1} %)");
        }
        s.push('.');
    } else {
        let _ = write!(
            s,
            " Write amplification inferred from the cliff's depth: {:.2}.",
            c.wa_inferred
        );
    }
    s
}

/// WSAT IOPS against time, or against the capacity written (`by_capacity`).
pub(super) fn wsat_over(d: &CharacterizeDoc, w: &WsatResult, by_capacity: bool) -> Figure {
    let cap = d.target.capacity_bytes.max(1) as f64;
    let (id, title, x) = if by_capacity {
        (
            "c-wsat-capacity",
            format!(
                "Write saturation: {} IOPS against capacity written",
                w.label
            ),
            Axis::linear("capacity written (× capacity)", Unit::Plain),
        )
    } else {
        (
            "c-wsat-time",
            format!("Write saturation: {} IOPS over time", w.label),
            Axis::linear("time", Unit::Seconds),
        )
    };
    if w.samples.is_empty() {
        let why = w
            .failure
            .clone()
            .unwrap_or_else(|| "no sample was taken".into());
        return missing(id, &title, &why);
    }
    let xof = |s: &ssdready_characterize_judge::model::WsatSample| {
        if by_capacity {
            s.bytes_written as f64 / cap
        } else {
            s.t_s
        }
    };
    let mut c = XyChart::new(&title, x, Axis::linear("IOPS", Unit::Count));
    c.series.push(Series::new(
        "IOPS",
        0,
        Style::Thin,
        w.samples.iter().map(|s| (xof(s), s.iops)).collect(),
    ));
    if let Some(cl) = &d.write_cliff {
        let end = w.samples.last().map(xof);
        mark_cliff(&mut c, cl, by_capacity, cap, end);
    }
    let note = format!(
        "QD {}: {} written ({:.1}× the capacity) in {:.1} s, stopped by {}; {} samples.",
        w.iodepth,
        fmt_bytes(w.bytes_written as f64),
        w.capacity_multiple_written,
        w.seconds,
        w.stopped_by,
        w.samples.len()
    );
    let table = wsat_table(w, cap);
    Figure {
        id: id.into(),
        title,
        note,
        body: Body::Chart(c.svg()),
        table: Some(table),
    }
}

/// The write cliff on a WSAT plot: where it falls, the fresh and steady
/// levels, and the steady stretch shaded up to `end` (the last sample).
fn mark_cliff(c: &mut XyChart, cl: &WriteCliff, by_capacity: bool, cap: f64, end: Option<f64>) {
    let (at, steady_from) = if by_capacity {
        (cl.cliff_at_capacity, cl.steady_from_bytes as f64 / cap)
    } else {
        (cl.cliff_at_s, cl.steady_from_s)
    };
    let end = end.unwrap_or(steady_from);
    c.marks.push(Mark::VLine {
        x: at,
        label: "cliff".into(),
    });
    c.marks.push(Mark::HLine {
        y: cl.fresh_iops,
        label: "fresh".into(),
    });
    c.marks.push(Mark::HLine {
        y: cl.steady_iops,
        label: "steady".into(),
    });
    c.marks.push(Mark::Band {
        x0: steady_from,
        x1: end,
        label: "steady".into(),
        fill: "#9cf".into(),
    });
}

/// WSAT's samples as a table, thinned to at most `MAX_TABLE_ROWS` rows.
fn wsat_table(w: &WsatResult, cap: f64) -> Table {
    let mut table = Table::new(&[
        "time",
        "written",
        "× capacity",
        "IOPS",
        "write amplification",
    ]);
    let every = w.samples.len().div_ceil(MAX_TABLE_ROWS).max(1);
    for s in w.samples.iter().step_by(every) {
        table.row(vec![
            format!("{:.3} s", s.t_s),
            fmt_bytes(s.bytes_written as f64),
            format!("{:.3}", s.bytes_written as f64 / cap),
            fmt_count(s.iops),
            s.wa().map_or("-".into(), |v| format!("{v:.2}")),
        ]);
    }
    table
}
