//! The text of `ssdready strategies`: the % of peak table shaped like
//! Shin's (rows strategies, columns patterns) with Shin's published figures
//! beside it, then each strategy's trade-off against async+intr — IOPS,
//! CPU per I/O and p99 latency as ratios — and what was skipped and why.

use super::matrix::Target;
use super::{
    fmt_ratio as times, published, Peak, Row, Skip, Tradeoff, PATTERNS, STRATEGIES, THREADS,
};
use std::fmt::Write;

const HEADERS: [&str; 4] = ["seq-read", "seq-write", "rand-read", "rand-write"];

fn find<'a>(rows: &'a [Row], strategy: &str, pattern: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.strategy == strategy && r.pattern == pattern)
}

/// Everything printed after the runs.
pub fn tables(t: &Target, rows: &[Row], skips: &[Skip], peaks: &[Peak]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n{}: % of peak, {} threads × 4 KiB, real time on this machine ({} CPUs)",
        t.spec(),
        THREADS,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for p in peaks {
        let _ = writeln!(
            o,
            "  peak {:<9} {:>8.0} MB/s ({}: {})",
            p.pattern,
            p.bw_bytes_per_s / 1e6,
            p.source,
            p.detail
        );
    }
    o.push_str(&percent_of_peak(rows, peaks));
    o.push_str(&tradeoffs(rows));
    o.push_str(&interrupts(rows));
    o.push_str(&skipped(rows, skips));
    o
}

/// Rows strategies, columns patterns, with Shin's published figures beside.
fn percent_of_peak(rows: &[Row], peaks: &[Peak]) -> String {
    let mut o = String::new();
    let _ = write!(o, "\n  {:<11}", "strategy");
    for h in HEADERS {
        let _ = write!(o, " {h:>10}");
    }
    let _ = writeln!(o, "   | Shin published: Seq.R  Seq.W Rand.R Rand.W");
    for s in &STRATEGIES {
        let _ = write!(o, "  {:<11}", s.name);
        for (pattern, _) in PATTERNS {
            let peak = peaks.iter().find(|p| p.pattern == pattern);
            let cell = match (find(rows, s.name, pattern), peak) {
                (Some(r), Some(p)) if p.bw_bytes_per_s > 0.0 => {
                    format!(
                        "{:.0} %",
                        100.0 * r.summary.bw_bytes_per_s / p.bw_bytes_per_s
                    )
                }
                _ => "skipped".into(),
            };
            let _ = write!(o, " {cell:>10}");
        }
        let published: Vec<String> = PATTERNS
            .iter()
            .map(|(p, _)| published(s.name, p).map_or(String::new(), |v| format!("{v:>6.0}%")))
            .collect();
        let _ = writeln!(o, "   |{:15}{}", "", published.join(""));
    }
    o
}

/// Each result's interrupts on the device's own queues (from
/// /proc/interrupts), and whether a result that ran as iopoll was polled;
/// nothing where the device has no queue vectors to count.
fn interrupts(rows: &[Row]) -> String {
    let mut o = String::new();
    for r in rows {
        let Some(i) = &r.interrupts else { continue };
        if o.is_empty() {
            let _ = writeln!(
                o,
                "\n  interrupts on {}'s queues over each run (/proc/interrupts; a polled I/O takes none):",
                i.device
            );
        }
        let _ = writeln!(
            o,
            "  {:<11} {:<10} {}",
            r.strategy,
            r.pattern,
            i.check(r.strategy, &r.ran)
        );
    }
    o
}

/// What did not run and why, and what ran as something else.
fn skipped(rows: &[Row], skips: &[Skip]) -> String {
    let mut o = String::new();
    if !skips.is_empty() {
        let _ = writeln!(o, "\nskipped:");
        for s in skips {
            let _ = writeln!(
                o,
                "  {} {}: {}",
                s.strategy,
                s.pattern.as_deref().unwrap_or("all patterns"),
                s.reason
            );
        }
    }
    // One line per reason a strategy ran as something else.
    let mut fallbacks: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for r in rows {
        let Some(why) = r.fallback.as_deref() else {
            continue;
        };
        match fallbacks
            .iter_mut()
            .find(|(ran, w, _)| *ran == r.ran && *w == why)
        {
            Some((_, _, names)) if names.contains(&r.strategy) => {}
            Some((_, _, names)) => names.push(r.strategy),
            None => fallbacks.push((&r.ran, why, vec![r.strategy])),
        }
    }
    for (ran, why, names) in fallbacks {
        let _ = writeln!(o, "\n{} ran as {ran}: {why}", names.join(", "));
    }
    if rows.iter().any(|r| r.summary.interrupted) {
        let _ = writeln!(o, "\nthe last run was cut short by the interrupt");
    }
    o
}

/// Each strategy against async+intr on the same pattern: ×IOPS, ×CPU per
/// I/O, ×p99 latency.
fn tradeoffs(rows: &[Row]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n  against async+intr: ×IOPS / ×CPU per I/O / ×p99 latency (CPU: the process's, getrusage)"
    );
    let _ = write!(o, "  {:<11}", "strategy");
    for h in HEADERS {
        let _ = write!(o, " {h:>20}");
    }
    let _ = writeln!(o);
    for s in STRATEGIES.iter().skip(1) {
        let _ = write!(o, "  {:<11}", s.name);
        for (pattern, _) in PATTERNS {
            let t = find(rows, s.name, pattern).and_then(|r| Tradeoff::of(r, rows));
            let cell = t.map_or("—".into(), |t| {
                let cpu = t.cpu_per_io.map_or("?".into(), times);
                format!("{}/{cpu}/{}", times(t.iops), times(t.p99))
            });
            let _ = write!(o, " {cell:>20}");
        }
        let _ = writeln!(o);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::Interrupts;
    use ssdready_measured::summary::PointSummary;

    fn row(strategy: &'static str, ran: &str, irqs: Option<(u64, u64)>) -> Row {
        Row {
            strategy,
            pattern: "randread",
            summary: PointSummary::default(),
            ran: ran.into(),
            fallback: None,
            merge_mean: None,
            run: None,
            interrupts: irqs.map(|(total, ios)| Interrupts {
                device: "nvme0n1".into(),
                total,
                ios,
            }),
        }
    }

    #[test]
    fn each_result_s_queue_interrupts_are_said_with_whether_iopoll_polled() {
        let rows = [
            row("async+intr", "interrupt", Some((3000, 3000))),
            row("sync+poll", "iopoll", Some((0, 3000))),
            row("hybrid", "hybrid", None),
        ];
        let text = interrupts(&rows);
        assert!(text.contains("interrupts on nvme0n1's queues"), "{text}");
        assert!(
            text.contains("took 3000 interrupts (1.00 per I/O), completions by interrupt"),
            "{text}"
        );
        assert!(
            text.contains("no interrupt on its queues: polled"),
            "{text}"
        );
        assert!(!text.contains("hybrid"), "a result without a count: {text}");
        assert_eq!(
            interrupts(&rows[2..]),
            "",
            "nothing where nothing was counted"
        );
    }
}
