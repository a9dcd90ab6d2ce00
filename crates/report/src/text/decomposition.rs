//! The latency decomposition in the text report: per I/O where eBPF
//! joined each I/O with the kernel's record, else from the block
//! tracepoints alone.

use ssdready_core::hist::LatSummary;
use ssdready_core::result::{Decomposition, PerIoSplit};
use ssdready_core::units::{fmt_count, fmt_ns};
use std::fmt::Write;

/// A percentile of a latency summary, or `-` when it was not kept.
fn pct_of(s: &LatSummary, p: f64) -> String {
    s.percentiles
        .iter()
        .find(|(q, _)| (*q - p).abs() < 1e-9)
        .map(|(_, v)| fmt_ns(*v as f64))
        .unwrap_or("-".into())
}

/// One row of the latency decomposition: mean, p50, p99, p99.9 and the
/// part's share of the total.
fn decomposition_row(out: &mut String, name: &str, s: &LatSummary, share: Option<f64>) {
    let _ = writeln!(
        out,
        "  {name:<30} mean {:>9}  p50 {:>9}  p99 {:>9}  p99.9 {:>9}{}",
        fmt_ns(s.mean_ns),
        pct_of(s, 50.0),
        pct_of(s, 99.0),
        pct_of(s, 99.9),
        share.map(|x| format!("  {x:5.1}%")).unwrap_or_default()
    );
}

/// The latency decomposition: per I/O where eBPF joined each I/O with the
/// kernel's record, else from the block tracepoints alone.
pub(super) fn decomposition_block(out: &mut String, d: &Decomposition) {
    match &d.per_io {
        Some(p) => per_io_decomposition(out, d, p),
        None => block_decomposition(out, d),
    }
    if let Some(n) = &d.note {
        let _ = writeln!(out, "  note: {n}");
    }
}

/// The share of the named part, when the decomposition has it.
fn part_share(d: &Decomposition, name: &str) -> Option<f64> {
    d.parts.iter().find(|p| p.part == name).map(|p| p.share_pct)
}

/// The decomposition of each I/O joined with the kernel's record.
fn per_io_decomposition(out: &mut String, d: &Decomposition, p: &PerIoSplit) {
    let share = |name: &str| part_share(d, name);
    let _ = writeln!(
        out,
        "latency decomposition, per I/O (eBPF {}, {} of {} I/Os joined with the kernel's record):",
        d.flavour,
        fmt_count(p.matched as f64),
        fmt_count((p.matched + p.unmatched) as f64)
    );
    decomposition_row(
        out,
        "above block, submission",
        &p.above_block_submit,
        share("above block, submission"),
    );
    decomposition_row(
        out,
        "block layer and scheduler",
        &p.block_layer,
        share("block layer and scheduler"),
    );
    if let Some(q) = &p.scheduler_queue {
        let name = format!("  queued ({} I/Os)", fmt_count(q.n as f64));
        decomposition_row(out, &name, q, None);
    }
    decomposition_row(
        out,
        "driver and device",
        &p.driver_and_device,
        share("driver and device"),
    );
    decomposition_row(
        out,
        "completion to the app",
        &p.completion,
        share("completion to the app"),
    );
    decomposition_row(out, "total (app-observed)", &p.total, None);
    let _ = writeln!(
        out,
        "  kernel's view, all I/Os: block layer and below (io_start → io_done) mean {}, p99 {} ({} I/Os)",
        fmt_ns(d.block_and_below.mean_ns),
        pct_of(&d.block_and_below, 99.0),
        fmt_count(d.block_and_below.n as f64)
    );
}

/// The decomposition from the block tracepoints alone (no per-I/O join).
fn block_decomposition(out: &mut String, d: &Decomposition) {
    let _ = writeln!(
        out,
        "latency decomposition (eBPF {} on block tracepoints, {} I/Os):",
        d.flavour,
        fmt_count(d.app_ios as f64)
    );
    decomposition_row(out, "block layer and below", &d.block_and_below, None);
    decomposition_row(
        out,
        "  block layer, submission side",
        &d.block_layer,
        part_share(d, "block layer, submission"),
    );
    decomposition_row(
        out,
        "  driver and device",
        &d.driver_and_device,
        part_share(d, "driver and device"),
    );
    if let Some(a) = d.above_block_mean_ns.filter(|_| d.app_mean_ns > 0.0) {
        let _ = writeln!(
            out,
            "  above the block layer (mean only)   {:>9}  {:5.1}% of the app mean {}",
            fmt_ns(a),
            100.0 * a / d.app_mean_ns,
            fmt_ns(d.app_mean_ns)
        );
    }
}
