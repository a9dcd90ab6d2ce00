//! What `ssdready characterize` prints: the plan with its time, a line per
//! round as it runs, and the summary at the end (steady state of each
//! test, the IOPS matrix, throughput, the latency table, the write cliff).

use crate::model::*;
use crate::plan::tracked_label;
use crate::plan::{bs_label, mix_label, Plan, Tracked};
use ssdready_core::steady::{PtsNext, PtsVerdict};
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
use std::fmt::Write;

/// `1 h 05 min`, `12 min`, `40 s`.
pub fn fmt_duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=119 => format!("{s} s"),
        120..=3599 => format!("{} min", s.div_ceil(60)),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// The plan, before anything runs. `virtual_time`: times are simulated.
pub fn plan(p: &Plan, target: &str, what: &str, virtual_time: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "ssdready characterize {target}: {} ({what})",
        fmt_bytes(p.capacity as f64)
    );
    let _ = writeln!(
        o,
        "plan (SNIA PTS{}): each test to steady state: the last {} rounds within a {:.0} % range \
         and a {:.0} % least-squares excursion of their mean, at most {} rounds",
        if p.quick { ", --quick subset" } else { "" },
        p.rule.window,
        p.rule.range_pct,
        p.rule.excursion_pct,
        p.rule.max_rounds
    );
    let mut pre_bytes = 0u64;
    for (i, t) in p.tests.iter().enumerate() {
        let mut steps = vec!["purge".to_string()];
        if t.precondition_bytes > 0 {
            pre_bytes += t.precondition_bytes;
            steps.push(format!(
                "precondition {} (128 KiB sequential writes)",
                fmt_bytes(t.precondition_bytes as f64)
            ));
        }
        match &t.wsat {
            Some(w) => steps.push(format!(
                "{} at QD {} until {} ({}× capacity; on to {}× until IOPS settle) or {}",
                w.point.label(),
                w.point.iodepth,
                fmt_bytes(w.bytes as f64),
                w.capacity_multiple,
                w.max_bytes as f64 / p.capacity.max(1) as f64,
                fmt_duration(w.max_seconds)
            )),
            None => steps.push(format!(
                "rounds of {} point{} × {} s at QD {} (tracking {})",
                t.round.len(),
                if t.round.len() == 1 { "" } else { "s" },
                p.point_seconds,
                t.round.first().map_or(1, |x| x.iodepth),
                tracked_label(t)
            )),
        }
        let _ = writeln!(o, "  {}. {:<17} {}", i + 1, t.name, steps.join(", "));
    }
    let (lo, hi) = crate::plan::round_seconds(p);
    let wsat: u64 = p
        .tests
        .iter()
        .filter_map(|t| t.wsat.as_ref())
        .map(|w| w.bytes)
        .sum();
    let _ =
        writeln!(
        o,
        "  {}: {} to {} of rounds (5 to {} rounds a test), plus {} of preconditioning and {} of \
         WSAT writes at the device's write speed{}",
        if virtual_time { "simulated time" } else { "ETA" },
        fmt_duration(lo),
        fmt_duration(hi),
        p.rule.max_rounds,
        fmt_bytes(pre_bytes as f64),
        fmt_bytes(wsat as f64),
        if virtual_time {
            "; in virtual time this takes seconds of CPU"
        } else {
            ""
        }
    );
    o
}

/// A tracked figure in its unit (`-` when it is not a number).
pub fn tracked_text(t: Tracked, v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    match t {
        Tracked::Iops => format!("{} IOPS", fmt_count(v)),
        Tracked::Bandwidth => format!("{}/s", fmt_bytes(v)),
        Tracked::MeanLatency => fmt_ns(v),
    }
}

/// One line per round: the tracked figure and where the window stands.
pub fn round_line(
    name: &str,
    tracked: Tracked,
    round: &RoundRecord,
    next: &PtsNext,
    window: Option<&PtsVerdict>,
) -> String {
    let window = window.map_or(String::new(), |v| {
        format!(
            "; rounds {}-{}: range {:.1} %, excursion {:.1} %",
            v.window_first, v.window_last, v.range_pct, v.excursion_pct
        )
    });
    let state = match next {
        PtsNext::Continue => "",
        PtsNext::Steady(_) => ": steady state reached",
        PtsNext::NotReached(_) => ": steady state NOT reached (round limit)",
    };
    format!(
        "{name} round {}: {}{window}{state}",
        round.round,
        tracked_text(tracked, round.tracked)
    )
}

/// The summary at the end.
pub fn summary(d: &CharacterizeDoc) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nsteady state (PTS: last {} rounds, range ≤ {:.0} %, excursion ≤ {:.0} %, at most {} rounds):",
        d.settings.rule.window,
        d.settings.rule.range_pct,
        d.settings.rule.excursion_pct,
        d.settings.rule.max_rounds
    );
    let _ = writeln!(
        o,
        "  {:<17} {:<34} {:>6}  {:<12} {:>12}",
        "test", "tracked", "rounds", "reached", "value"
    );
    let tests: Vec<&RoundTest> = d
        .iops
        .iter()
        .chain(&d.throughput)
        .chain(&d.latency)
        .collect();
    for t in &tests {
        let reached = match (&t.failure, t.steady_state_reached) {
            (Some(_), _) => "failed",
            (None, true) => "yes",
            (None, false) if t.rounds.len() < d.settings.rule.max_rounds => "stopped",
            (None, false) => "NOT reached",
        };
        let value = t.verdict.as_ref().map_or(f64::NAN, |v| v.stats.mean);
        let _ = writeln!(
            o,
            "  {:<17} {:<34} {:>6}  {:<12} {:>12}",
            t.name,
            t.tracked_label,
            t.rounds.len(),
            reached,
            tracked_text(t.tracked.unwrap_or(Tracked::Iops), value)
        );
    }
    if let (Some(m), Some(t)) = (&d.iops_matrix, &d.iops) {
        if m.iops.iter().flatten().any(Option::is_some) {
            matrix(&mut o, m, t);
        }
    }
    for t in d.throughput.iter().filter(|t| !t.rounds.is_empty()) {
        let pts: Vec<String> = t
            .window
            .iter()
            .map(|w| {
                format!(
                    "{} {}/s",
                    if w.read_pct == 100 { "read" } else { "write" },
                    fmt_bytes(w.bw_bytes)
                )
            })
            .collect();
        let bs = t.window.first().map_or(0, |w| w.bs);
        let _ = writeln!(
            o,
            "throughput, {} sequential: {}",
            bs_label(bs),
            pts.join(", ")
        );
    }
    if let Some(t) = d.latency.as_ref().filter(|t| !t.rounds.is_empty()) {
        latency(&mut o, t);
    }
    wsat(&mut o, d);
    for t in tests.iter().filter_map(|t| t.failure.as_ref()) {
        let _ = writeln!(o, "failed: {t}");
    }
    o
}

fn window_text(t: &RoundTest) -> String {
    match &t.verdict {
        Some(v) => format!("rounds {}-{}", v.window_first, v.window_last),
        None => format!("last {} rounds", t.rounds.len()),
    }
}

fn matrix(o: &mut String, m: &IopsMatrix, t: &RoundTest) {
    let _ = writeln!(
        o,
        "IOPS matrix (random, QD {}, mean of {}):",
        t.window.first().map_or(0, |w| w.iodepth),
        window_text(t)
    );
    let _ = write!(o, "  {:>10}", "bs \\ r/w");
    for m in &m.mixes {
        let _ = write!(o, " {m:>9}");
    }
    let _ = writeln!(o);
    for (bs, row) in m.block_sizes.iter().zip(&m.iops) {
        let _ = write!(o, "  {:>10}", bs_label(*bs));
        for v in row {
            let _ = write!(o, " {:>9}", v.map_or("-".into(), fmt_count));
        }
        let _ = writeln!(o);
    }
}

fn latency(o: &mut String, t: &RoundTest) {
    let _ = writeln!(o, "latency (random, QD 1, {}):", window_text(t));
    let _ = writeln!(
        o,
        "  {:<10} {:>7} {:>11} {:>11} {:>11}",
        "bs", "r/w", "mean", "p99.99", "max"
    );
    for w in &t.window {
        if w.rounds == 0 {
            continue;
        }
        let _ = writeln!(
            o,
            "  {:<10} {:>7} {:>11} {:>11} {:>11}",
            bs_label(w.bs),
            mix_label(w.read_pct),
            fmt_ns(w.lat_mean_ns),
            fmt_ns(w.lat_p99_99_ns as f64),
            fmt_ns(w.lat_max_ns as f64)
        );
    }
}

fn wsat(o: &mut String, d: &CharacterizeDoc) {
    let Some(w) = &d.wsat else { return };
    let _ = writeln!(
        o,
        "write saturation ({} at QD {}): {} written ({:.1}× capacity) in {} (stopped by {}), {} samples",
        w.label,
        w.iodepth,
        fmt_bytes(w.bytes_written as f64),
        w.capacity_multiple_written,
        fmt_duration(w.seconds),
        w.stopped_by,
        w.samples.len()
    );
    match (&d.write_cliff, &d.write_cliff_note) {
        (Some(c), _) => {
            let _ = writeln!(
                o,
                "write cliff: fresh {} IOPS until {} written ({:.2}× capacity, {:.1} s); steady {} IOPS \
                 from {:.1} s{}; fresh/steady {:.1}",
                fmt_count(c.fresh_iops),
                fmt_bytes(c.cliff_at_bytes as f64),
                c.cliff_at_capacity,
                c.cliff_at_s,
                fmt_count(c.steady_iops),
                c.steady_from_s,
                if c.settled { "" } else { " (not yet settled)" },
                c.ratio
            );
            let wa = match (c.wa_seen, c.wa_predicted) {
                (Some(s), Some(p)) => format!(
                    "write amplification {s:.2} seen (emulator counters), {p:.2} predicted by \
                     Desnoyers' model ({:+.1} %); the cliff's depth is {:+.1} % from the WA",
                    c.wa_error_pct.unwrap_or(0.0),
                    c.ratio_vs_wa_pct.unwrap_or(0.0)
                ),
                (Some(s), None) => format!("write amplification {s:.2} seen"),
                _ => format!(
                    "write amplification inferred {:.1} (fresh/steady: assumes the steady rate is \
                     the fresh rate over WA)",
                    c.wa_inferred
                ),
            };
            let _ = writeln!(o, "  {wa}");
            if let (Some(b), Some(pct)) = (c.steady_die_bound_iops, c.steady_vs_die_bound_pct) {
                let _ = writeln!(
                    o,
                    "  the dies could take {} IOPS at that WA: the steady level is {pct:+.1} % from it",
                    fmt_count(b)
                );
            }
        }
        (None, Some(why)) => {
            let _ = writeln!(o, "write cliff: none found: {why}");
        }
        (None, None) => {}
    }
}
