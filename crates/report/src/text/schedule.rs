//! The open loop's lines (`lat_from=schedule`, [`ssdready_core::arrivals`]):
//! the offered load, the arrivals issued late and the worst lateness, and
//! per direction the latency from the actual issue (fio's), beside the
//! direction's `lat` above, which is from the schedule.

use super::{lat_line, pct_label};
use ssdready_core::arrivals::ScheduleResult;
use ssdready_core::hist::LatSummary;
use ssdready_core::units::{fmt_count, fmt_ns};
use std::fmt::Write;

/// The block of a job with `lat_from=schedule`.
pub(super) fn schedule_block(out: &mut String, s: &ScheduleResult) {
    let late_share = if s.arrivals > 0 {
        format!(" ({:.3} %)", 100.0 * s.late as f64 / s.arrivals as f64)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  open loop (lat_from=schedule, rate_process={}): offered {} IOPS; lat above is from each I/O's intended issue time",
        s.process,
        fmt_count(s.offered_iops),
    );
    let _ = writeln!(
        out,
        "    arrivals: {}, late {}{late_share} (more than {} behind schedule: the iodepth cap was full or the host busy), worst {} late",
        count(s.arrivals),
        count(s.late),
        fmt_ns(s.late_threshold_ns as f64),
        fmt_ns(s.worst_late_ns as f64),
    );
    for (name, l) in [
        ("read", &s.read_from_issue),
        ("write", &s.write_from_issue),
        ("trim", &s.trim_from_issue),
    ] {
        if let Some(l) = l {
            let _ = writeln!(out, "    {name}, from issue (fio's lat):");
            lat_line(out, "lat", l);
            percentiles(out, l);
        }
    }
}

/// A count: exact below 10,000, then as the rest of the report.
fn count(n: u64) -> String {
    if n < 10_000 {
        n.to_string()
    } else {
        fmt_count(n as f64)
    }
}

fn percentiles(out: &mut String, l: &LatSummary) {
    let p: Vec<String> = l
        .percentiles
        .iter()
        .map(|(p, v)| format!("{} {}", pct_label(*p), fmt_ns(*v as f64)))
        .collect();
    for chunk in p.chunks(5) {
        let _ = writeln!(out, "          {}", chunk.join(" | "));
    }
}
