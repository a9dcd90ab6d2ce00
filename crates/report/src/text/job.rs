//! Per job: the heading, each direction's throughput and latency, and the
//! job's sync, error, steady-state, merge, verify and strategy lines.

use ssdready_core::result::{DirResult, JobResult};
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
use std::fmt::Write;

use super::{bs_text, lat_line, pct_label, schedule, NO_IO};

pub(super) fn dir_block(out: &mut String, name: &str, d: &DirResult, window_ns: u64) {
    if d.ios == 0 {
        let _ = writeln!(out, "  {name}: {NO_IO} in {:.2} s", window_ns as f64 / 1e9);
        return;
    }
    let _ = writeln!(
        out,
        "  {name}: {} IOPS, {}/s, {} I/Os, {} in {:.2} s{}",
        fmt_count(d.iops),
        fmt_bytes(d.bw_bytes_per_s),
        fmt_count(d.ios as f64),
        fmt_bytes(d.bytes as f64),
        window_ns as f64 / 1e9,
        if d.short_ios > 0 {
            format!(" ({} short)", d.short_ios)
        } else {
            String::new()
        }
    );
    if let Some(s) = &d.slat {
        lat_line(out, "slat", s);
    }
    lat_line(out, "clat", &d.clat);
    // fio's file-operation engines time only the file operation (clat).
    let pct = if d.lat.n == 0 && d.clat.n > 0 {
        &d.clat
    } else {
        lat_line(out, "lat", &d.lat);
        &d.lat
    };
    let p: Vec<String> = pct
        .percentiles
        .iter()
        .map(|(p, v)| format!("{} {}", pct_label(*p), fmt_ns(*v as f64)))
        .collect();
    for chunk in p.chunks(5) {
        let _ = writeln!(out, "          {}", chunk.join(" | "));
    }
    // Per-second series: drop a partial last second from the spread.
    let full: Vec<u64> = d
        .series
        .iter()
        .take((window_ns / 1_000_000_000) as usize)
        .map(|s| s.ios)
        .collect();
    if full.len() >= 2 {
        let min = *full.iter().min().unwrap_or(&0);
        let max = *full.iter().max().unwrap_or(&0);
        let mean = full.iter().sum::<u64>() as f64 / full.len() as f64;
        let _ = writeln!(
            out,
            "    per second: IOPS min {} mean {} max {} over {} s",
            fmt_count(min as f64),
            fmt_count(mean),
            fmt_count(max as f64),
            full.len()
        );
    }
}

pub(super) fn job_block(out: &mut String, j: &JobResult) {
    job_heading(out, j);
    if let Some(st) = &j.strategy {
        strategy_lines(out, st, j.measured_ns);
    }
    persistence_line(out, j.persistence.as_deref());
    for (name, d) in j.dirs() {
        dir_block(out, name, d, j.measured_ns);
    }
    if j.dirs().next().is_none() {
        let _ = writeln!(out, "  {NO_IO}");
    }
    if let Some(sch) = &j.schedule {
        schedule::schedule_block(out, sch);
    }
    if let Some(n) = j.zone_resets {
        // fio prints it after each direction's line ("; N zone resets").
        let _ = writeln!(out, "  zonemode=zbd: {n} zone resets");
    }
    for (i, ss) in j.steadystate.iter().enumerate() {
        let who = match j.steadystate.len() {
            1 => String::new(),
            _ => format!(" (clone {i})"),
        };
        steady_line(out, ss, &who);
    }
    if let Some(m) = &j.temporal_merge {
        merge_block(out, m);
    }
    if let Some(sy) = &j.sync {
        sync_block(out, sy);
    }
    if let Some(v) = &j.verify {
        verify_block(out, v);
    }
    error_lines(out, j);
}

/// A job's first line: its workload, engine, workers and targets.
pub(super) fn job_heading(out: &mut String, j: &JobResult) {
    let s = &j.spec;
    let targets: Vec<String> = j
        .targets
        .iter()
        .map(|t| match &t.device {
            Some(d) => format!("{} [{} on {d}]", t.path, t.kind),
            None => format!("{} [{}]", t.path, t.kind),
        })
        .collect();
    let _ = writeln!(
        out,
        "job '{}': {} bs={} iodepth={} {}{} ×{} worker{} on {}",
        j.name,
        s.rw.name(),
        bs_text(&s.bs),
        s.effective_iodepth(),
        if s.engine().caps.own_name {
            s.engine().name
        } else {
            s.ioengine.name()
        },
        match (s.ioengine, s.direct) {
            (ssdready_core::spec::EngineKind::Emu | ssdready_core::spec::EngineKind::Null, _) => "",
            (_, true) => " direct",
            (_, false) => " buffered",
        },
        j.workers,
        if j.workers == 1 { "" } else { "s" },
        if targets.is_empty() {
            "nothing (null engine)".to_string()
        } else {
            targets.join(", ")
        }
    );
}

pub(super) fn persistence_line(out: &mut String, persistence: Option<&str>) {
    match persistence {
        Some("dax") => {
            let _ = writeln!(out, "  persistence: dax (persistent memory: non-temporal stores or cache-line write-back, sfence)");
        }
        Some(p) => {
            let _ = writeln!(
                out,
                "  persistence: {p} (not persistent memory: page cache, msync)"
            );
        }
        None => {}
    }
}

pub(super) fn sync_block(out: &mut String, sy: &ssdready_core::result::SyncResult) {
    let ranges = match sy.sync_ranges {
        0 => String::new(),
        n => format!(", {n} sync_file_range"),
    };
    let _ = writeln!(
        out,
        "  sync: {} fsync, {} fdatasync{ranges}",
        sy.fsyncs, sy.fdatasyncs
    );
    lat_line(out, "lat", &sy.lat);
}

/// The errors the job went past (continue_on_error), and those it stopped on.
pub(super) fn error_lines(out: &mut String, j: &JobResult) {
    if j.continued_errors > 0 {
        let _ = writeln!(
            out,
            "  errors gone past (continue_on_error={}{}): {} (first: {})",
            j.spec.continue_on_error.name(),
            if j.spec.ignore_error.any() {
                ", ignore_error"
            } else {
                ""
            },
            j.continued_errors,
            j.first_continued_error.as_deref().unwrap_or("?")
        );
    }
    if j.first_error.is_some() || j.errors > j.continued_errors {
        let _ = writeln!(
            out,
            "  errors: {} (first: {})",
            j.errors,
            j.first_error.as_deref().unwrap_or("?")
        );
    }
}

/// fio's steady-state line, in ssdready's words: whether the criterion
/// held, after how long, and the window's means.
pub(super) fn steady_line(
    out: &mut String,
    ss: &ssdready_core::steady::FioSteadyReport,
    who: &str,
) {
    let state = match ss.attained_after_s {
        Some(s) => format!("attained after {s} s of samples (the job ended there)"),
        None => format!("not attained in {} s of samples", ss.samples),
    };
    let _ = writeln!(
        out,
        "  steady state{who}: {state}; {} = {} (limit {}{}); last {} s: {} IOPS, {}/s",
        ss.ss.split(':').next().unwrap_or(""),
        ss.criterion,
        ss.limit,
        if ss.ss.ends_with('%') { "%" } else { "" },
        ss.duration,
        fmt_count(ss.data.iops_mean as f64),
        fmt_bytes(ss.data.bw_mean as f64)
    );
}

/// The temporal merge layer: merge counts and the latency it added.
pub(super) fn merge_block(out: &mut String, m: &ssdready_core::result::MergeReport) {
    let _ = writeln!(
        out,
        "  temporal merge ({}, window {}, at most {} extents{}): {} requests in {} commands, {:.2} per command",
        m.mode,
        fmt_ns(m.window_ns as f64),
        m.max_extents,
        if m.max_bytes > 0 {
            format!(" and {}", fmt_bytes(m.max_bytes as f64))
        } else {
            String::new()
        },
        fmt_count(m.requests as f64),
        fmt_count(m.commands as f64),
        m.mean_extents
    );
    let hist: Vec<String> = m
        .extents_histogram
        .iter()
        .map(|c| {
            let pct = 100.0 * c.commands as f64 / m.commands.max(1) as f64;
            format!("{}: {pct:.1}%", c.extents)
        })
        .collect();
    for chunk in hist.chunks(8) {
        let _ = writeln!(out, "    extents per command  {}", chunk.join("  "));
    }
    for (label, l) in [("window", &m.window_wait), ("device", &m.issue_wait)] {
        let p99 = l
            .percentiles
            .iter()
            .find(|(p, _)| *p == 99.0)
            .map(|(_, v)| format!("  p99 {:>9}", fmt_ns(*v as f64)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    added ({label:>6}): mean {:>9}  max {:>9}{p99}",
            fmt_ns(l.mean_ns),
            fmt_ns(l.max_ns as f64),
        );
    }
}

/// What verification checked, and every failure kept.
pub(super) fn verify_block(out: &mut String, v: &ssdready_core::result::VerifyResult) {
    let _ = writeln!(
        out,
        "  verify ({}): {} blocks ({}) checked, {} failed check{}{}",
        v.method,
        fmt_count(v.blocks as f64),
        fmt_bytes(v.bytes as f64),
        v.failed,
        if v.failed == 1 { "" } else { "s" },
        if v.skipped_by_state > 0 {
            format!(
                "; {} block(s) not checked: the loaded verify state could not vouch for them",
                v.skipped_by_state
            )
        } else {
            String::new()
        }
    );
    for e in &v.failures {
        let f = &e.failure;
        let _ = writeln!(
            out,
            "    {} at offset {} (length {}) of {}: expected {}; found {}",
            f.check, f.offset, f.len, e.file, f.expected, f.found
        );
    }
    if v.failed > v.failures.len() as u64 {
        let _ = writeln!(
            out,
            "    … and {} more (the first {} are listed)",
            v.failed - v.failures.len() as u64,
            v.failures.len()
        );
    }
}

/// The completion strategy that ran, its fallback and its costs.
pub(super) fn strategy_lines(
    out: &mut String,
    st: &ssdready_core::strategy::StrategyReport,
    window_ns: u64,
) {
    let mut line = format!("  completion: {}", st.ran);
    if let Some(r) = st.requested.as_deref().filter(|r| *r != st.ran) {
        line.push_str(&format!(" (asked: {r})"));
    }
    line.push_str(&format!(
        ", {} issue, batches: submit {}, reap {}..{}; {} completion events ({:.2} I/Os each)",
        st.issue,
        st.submit_batch,
        st.complete_min,
        st.complete_max,
        fmt_count(st.completion_events as f64),
        st.completions_per_event
    ));
    let _ = writeln!(out, "{line}");
    if let Some(why) = &st.fallback {
        let _ = writeln!(out, "    fallback: {why}");
    }
    if let Some(c) = &st.coalescing {
        let _ = writeln!(
            out,
            "    interrupt coalescing: {} completions or {} µs, by {}",
            c.n, c.us, c.by
        );
    }
    if let Some(sq) = &st.sq_thread {
        let pct = if window_ns > 0 {
            100.0 * sq.cpu_ns as f64 / window_ns as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "    SQPOLL thread {}: {:.3} s CPU ({pct:.0}% of a CPU), from {}",
            sq.threads.join(", "),
            sq.cpu_ns as f64 / 1e9,
            sq.source
        );
    }
}
