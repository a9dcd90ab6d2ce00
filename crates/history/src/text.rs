//! The history as `ssdready history` prints it: one line per entry,
//! newest first, its key figures, and how to compare two.

use crate::dates;
use crate::db::Entry;
use ssdready_core::units::{fmt_count, fmt_ns};
use std::fmt::Write as _;
use std::path::Path;

fn cell(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".into())
}

/// The entries of the database at `path` as a table, newest first.
pub fn table(entries: &[Entry], path: &Path) -> String {
    let mut out = String::new();
    if entries.is_empty() {
        let _ = writeln!(out, "no entries in {}", path.display());
        return out;
    }
    let tw = entries
        .iter()
        .map(|e| e.target.chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 40);
    let _ = writeln!(
        out,
        "{:>4}  {:<16}  {:<5}  {:<tw$}  {:>8}  {:>10}  {:>10}  {:>9}  {:>9}  {:>5}",
        "id",
        "started (UTC)",
        "kind",
        "target",
        "IOPS",
        "mean lat",
        "p99 lat",
        "CPU/IO",
        "delivered",
        "knee"
    );
    for e in entries {
        let k = &e.key;
        let mut target = e.target.clone();
        if target.chars().count() > tw {
            target = target.chars().take(tw - 1).collect::<String>() + "…";
        }
        let _ = writeln!(
            out,
            "{:>4}  {:<16}  {:<5}  {:<tw$}  {:>8}  {:>10}  {:>10}  {:>9}  {:>9}  {:>5}",
            e.id,
            dates::fmt_minute(e.unix_ms),
            e.kind.as_str(),
            target,
            cell(k.iops.map(fmt_count)),
            cell(k.lat_mean_ns.map(fmt_ns)),
            cell(k.lat_p99_ns.map(fmt_ns)),
            cell(k.cpu_ns_per_io.map(fmt_ns)),
            cell(k.delivered_pct.map(|p| format!("{p:.0} %"))),
            cell(k.knee_qd.map(|q| q.to_string())),
        );
        if e.interrupted {
            // The row's line ends in the mark (its figures are partial).
            out.pop();
            out.push_str("  interrupted (partial)\n");
        }
    }
    let _ = writeln!(
        out,
        "{} entr{} in {}; a study's IOPS is its peak, its latency and CPU are at QD 1; compare two with: ssdready compare ID ID",
        entries.len(),
        if entries.len() == 1 { "y" } else { "ies" },
        path.display()
    );
    out
}
