//! The terminal summary.

use ssdready_core::hist::LatSummary;
use ssdready_core::result::{
    CpuCost, DirResult, DiskResult, EmuReport, JobResult, PhaseResult, RunResult,
};
use ssdready_core::spec::BlockSizes;
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
use std::fmt::Write;

mod decomposition;
mod schedule;

use decomposition::decomposition_block;

fn bs_text(b: &BlockSizes) -> String {
    match b {
        BlockSizes::Fixed(x) => fmt_bytes(*x as f64),
        BlockSizes::Range { min, max } => {
            format!("{}–{}", fmt_bytes(*min as f64), fmt_bytes(*max as f64))
        }
        BlockSizes::Split(v) => v
            .iter()
            .map(|(b, w)| format!("{}/{w}%", fmt_bytes(*b as f64)))
            .collect::<Vec<_>>()
            .join(":"),
        BlockSizes::PerDir(d) => format!(
            "{} read, {} write, {} trim",
            bs_text(&d[0]),
            bs_text(&d[1]),
            bs_text(&d[2])
        ),
    }
}

fn pct_label(p: f64) -> String {
    let s = format!("{p}");
    format!("p{s}")
}

fn lat_line(out: &mut String, label: &str, l: &LatSummary) {
    let _ = writeln!(
        out,
        "    {label:>4}: min {:>9}  mean {:>9}  max {:>9}  stddev {:>9}",
        fmt_ns(l.min_ns as f64),
        fmt_ns(l.mean_ns),
        fmt_ns(l.max_ns as f64),
        fmt_ns(l.stddev_ns)
    );
}

/// What a report says where per-I/O figures would be when there are none.
const NO_IO: &str = "no I/O completed";

fn dir_block(out: &mut String, name: &str, d: &DirResult, window_ns: u64) {
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

fn job_block(out: &mut String, j: &JobResult) {
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
fn job_heading(out: &mut String, j: &JobResult) {
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

fn persistence_line(out: &mut String, persistence: Option<&str>) {
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

fn sync_block(out: &mut String, sy: &ssdready_core::result::SyncResult) {
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
fn error_lines(out: &mut String, j: &JobResult) {
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
fn steady_line(out: &mut String, ss: &ssdready_core::steady::FioSteadyReport, who: &str) {
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
fn merge_block(out: &mut String, m: &ssdready_core::result::MergeReport) {
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
fn verify_block(out: &mut String, v: &ssdready_core::result::VerifyResult) {
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
fn strategy_lines(out: &mut String, st: &ssdready_core::strategy::StrategyReport, window_ns: u64) {
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

/// Where the two CPU figures come from, and the other sources beside them.
fn cpu_sources(out: &mut String, c: &CpuCost) {
    let s = &c.sources;
    let _ = writeln!(out, "    process source: {}", s.process);
    let _ = writeln!(out, "    system source:  {}", s.system);
    let mut also = format!(
        "    beside it: /proc/stat busy ticks {}",
        fmt_ns(s.system_ticks_ns)
    );
    if let Some(t) = s.threads_ns {
        also.push_str(&format!(
            ", run time of all {} threads {}",
            s.threads_seen,
            fmt_ns(t)
        ));
    }
    if s.steal_ns > 0.0 {
        also.push_str(&format!(", steal {} (not counted)", fmt_ns(s.steal_ns)));
    }
    let _ = writeln!(out, "{also}");
}

fn phase_block(out: &mut String, r: &RunResult, phase: &PhaseResult) {
    if let Some(d) = &phase.decomposition {
        decomposition_block(out, d);
    }
    let ios = phase.cpu.as_ref().map(|c| c.ios);
    if let Some(p) = &phase.profile {
        profile_block(out, p, ios);
        if let Some(e) = &p.exact {
            exact_block(out, e, ios);
        }
    }
    cpu_per_io_block(out, phase);
    for k in phase.checks.iter().filter(|k| !k.agree) {
        let _ = writeln!(out, "  check: {}", k.describe());
    }
    if phase.cpu.is_some() {
        hw_counters_line(out, r, phase);
    }
    for d in &phase.disks {
        device_block(out, r, d);
    }
}

/// The phase's CPU per I/O: the process's and the whole system's, with
/// their sources.
fn cpu_per_io_block(out: &mut String, phase: &PhaseResult) {
    if let Some(c) = phase.cpu.as_ref().filter(|c| c.ios == 0) {
        let _ = writeln!(
            out,
            "cpu per I/O: {NO_IO} (process user {:.2} s, sys {:.2} s; all CPUs {:.1}% busy)",
            c.process.user_ns as f64 / 1e9,
            c.process.sys_ns as f64 / 1e9,
            c.system_busy_pct
        );
    }
    if let Some(c) = phase.cpu.as_ref().filter(|c| c.ios > 0) {
        let clocks = |v: Option<f64>| {
            v.map(|c| format!(" = {} clocks", fmt_count(c)))
                .unwrap_or_default()
        };
        let _ = writeln!(out, "cpu per I/O ({} I/Os):", fmt_count(c.ios as f64));
        let _ = writeln!(
            out,
            "  process: {}{} (user {:.2} s, sys {:.2} s), {:.3} context switches",
            fmt_ns(c.per_io.process_ns),
            clocks(c.per_io.process_clocks),
            c.process.user_ns as f64 / 1e9,
            c.process.sys_ns as f64 / 1e9,
            c.per_io.process_ctx_switches
        );
        let _ = writeln!(
            out,
            "  system:  {} ± {}{} (all CPUs {:.1}% busy), {:.3} context switches, {:.3} interrupts, {:.3} softirqs",
            fmt_ns(c.per_io.system_ns),
            fmt_ns(c.sources.system_error_ns),
            clocks(c.per_io.system_clocks),
            c.system_busy_pct,
            c.per_io.system_ctx_switches,
            c.per_io.system_interrupts,
            c.per_io.system_softirqs
        );
        cpu_sources(out, c);
    }
}

/// One device's figures over the phase: I/Os, merges, utilisation, its
/// queue settings and the latency split at the block layer.
fn device_block(out: &mut String, r: &RunResult, d: &DiskResult) {
    let dev_ios = d.read_ios + d.write_ios + d.discard_ios;
    let info = r.platform.devices.iter().find(|x| x.name == d.name);
    let _ = writeln!(
        out,
        "device {}: {} I/Os ({} merged), util {:.0}%{}",
        d.name,
        fmt_count(dev_ios as f64),
        d.read_merges + d.write_merges,
        d.util_pct,
        info.map(|i| format!(
            ", scheduler {}, nr_requests {}, lbs {}",
            i.scheduler.as_deref().unwrap_or("?"),
            i.nr_requests.map(|v| v.to_string()).unwrap_or("?".into()),
            i.logical_block_size
                .map(|v| v.to_string())
                .unwrap_or("?".into())
        ))
        .unwrap_or_default()
    );
    if let Some(b) = d.block_mean_ns {
        match d.above_block_mean_ns {
            Some(a) => {
                let share = if d.app_mean_ns > 0.0 {
                    100.0 * a / d.app_mean_ns
                } else {
                    0.0
                };
                let _ = writeln!(
                    out,
                    "  latency split: app mean {} = above block layer {} ({share:.0}%) + block layer and below {}",
                    fmt_ns(d.app_mean_ns),
                    fmt_ns(a),
                    fmt_ns(b)
                );
            }
            None => {
                let _ = writeln!(out, "  block layer and below: mean {}", fmt_ns(b));
            }
        }
    }
    if let Some(n) = &d.note {
        let _ = writeln!(out, "  note: {n}");
    }
}

/// Cycles and instructions per I/O, or why the machine has no counters.
fn hw_counters_line(out: &mut String, r: &RunResult, phase: &PhaseResult) {
    if let Some(h) = &phase.hw_counters {
        let _ = writeln!(
            out,
            "  hardware counters (all CPUs): {} cycles, {} instructions per I/O, IPC {:.2}{}",
            fmt_count(h.cycles_per_io),
            fmt_count(h.instructions_per_io),
            h.ipc,
            if h.running_share < 1.0 {
                format!(
                    " (multiplexed: counted {:.0}% of the window, scaled up)",
                    100.0 * h.running_share
                )
            } else {
                String::new()
            }
        );
        return;
    }
    let lab = r.platform.lab.iter().find(|c| c.name == "hw_counters");
    if let Some(w) = lab.and_then(|c| c.warning.as_deref()) {
        let _ = writeln!(out, "  {w}");
    }
}

/// The lab conditions in one line, then one line per warning.
fn lab_block(out: &mut String, lab: &[ssdready_core::result::LabCondition]) {
    if lab.is_empty() {
        return;
    }
    let all: Vec<String> = lab
        .iter()
        .map(|c| format!("{} {}", c.name.replace('_', " "), c.value))
        .collect();
    let _ = writeln!(out, "  lab: {}", all.join("; "));
    for w in lab.iter().filter_map(|c| c.warning.as_deref()) {
        let _ = writeln!(out, "  lab warning: {w}");
    }
}

/// ", each CPU 99.8–100.1%", or nothing when not known.
fn per_cpu_range(v: &[f64]) -> String {
    let lo = v.iter().copied().reduce(f64::min);
    let hi = v.iter().copied().reduce(f64::max);
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!(", each CPU {lo:.1}–{hi:.1}%"),
        _ => String::new(),
    }
}

/// `--profile=exact`: the bracketed states, the sampled and exact figures
/// side by side, and the layers scaled to the exact time.
fn exact_block(out: &mut String, e: &ssdready_core::result::ExactCpu, ios: Option<u64>) {
    if ios == Some(0) {
        let _ = writeln!(out, "exact CPU by state: {NO_IO}");
        return;
    }
    let _ = writeln!(
        out,
        "exact CPU by state (tracepoints, {:.1}% of the window × CPUs accounted for{}): busy {} per I/O",
        e.covered_pct,
        per_cpu_range(&e.covered_pct_per_cpu),
        fmt_ns(e.busy_ns_per_io)
    );
    for s in e.states.iter().filter(|s| s.cpu_ns > 0) {
        let _ = writeln!(
            out,
            "  {:<30} {:>5.1}% {:>12} per I/O{}",
            s.state,
            s.share_of_busy_pct,
            fmt_ns(s.ns_per_io),
            if s.busy { "" } else { " (idle)" }
        );
    }
    let side: Vec<String> = e
        .sampled_vs_exact
        .iter()
        .map(|g| {
            format!(
                "{} {} / {}",
                g.group,
                fmt_ns(g.sampled_ns_per_io),
                fmt_ns(g.exact_ns_per_io)
            )
        })
        .collect();
    let _ = writeln!(out, "  sampled / exact per I/O: {}", side.join("; "));
    let _ = writeln!(
        out,
        "  layers, sampled split scaled to the exact time of their group:"
    );
    for l in e.layers.iter().filter(|l| l.layer != "idle") {
        let _ = writeln!(
            out,
            "  {:<36} {:>5.1}% {:>12} per I/O",
            l.layer,
            l.share_of_busy_pct,
            fmt_ns(l.ns_per_io)
        );
    }
    let irq: Vec<&str> = e
        .missing_tracepoints
        .iter()
        .filter(|t| !t.starts_with("block_") && !t.starts_with("io_uring"))
        .map(|t| t.as_str())
        .collect();
    if !irq.is_empty() {
        let _ = writeln!(
            out,
            "  (no tracepoint {} here: that time is charged to the state it interrupts)",
            irq.join(", ")
        );
    }
    for l in &e.limits {
        let _ = writeln!(out, "  limit: {l}");
    }
}

fn profile_block(out: &mut String, p: &ssdready_core::result::ProfileReport, ios: Option<u64>) {
    let none = ios == Some(0);
    let per_io = |ns: f64| {
        if none {
            NO_IO.to_string()
        } else {
            format!("{} per I/O", fmt_ns(ns))
        }
    };
    let _ = writeln!(
        out,
        "kernel profile ({} samples of {} CPU each, {} lost): busy {}, {:.1}% of busy samples in named layers (± each share's 95% sampling error)",
        fmt_count(p.samples as f64),
        fmt_ns(p.period_ns as f64),
        p.lost,
        per_io(p.busy_ns_per_io),
        p.named_share_of_busy_pct
    );
    if p.chain_every > 1 {
        let _ = writeln!(
            out,
            "  (call chains on 1 sample in {}; {:.1}% of samples took their layer from the callers learned there, {:.1}% found none)",
            p.chain_every,
            100.0 * p.inferred_samples as f64 / p.samples.max(1) as f64,
            100.0 * p.unlearned_samples as f64 / p.samples.max(1) as f64
        );
    }
    for l in p.layers.iter().filter(|l| l.layer != "idle") {
        let _ = writeln!(
            out,
            "  {:<26} {:>5.1}% ±{:<4.1} {:>17}{}",
            l.layer,
            l.share_of_busy_pct,
            l.share_error_pct,
            per_io(l.ns_per_io),
            l.clocks_per_io
                .map(|c| format!(" = {} clocks", fmt_count(c)))
                .unwrap_or_default()
        );
    }
    let top: Vec<String> = p
        .top_functions
        .iter()
        .take(8)
        .map(|(f, l, c)| format!("{f} ({l}) {c}"))
        .collect();
    if !top.is_empty() {
        let _ = writeln!(out, "  top functions: {}", top.join(", "));
    }
    let own: Vec<String> = p
        .top_functions
        .iter()
        .filter(|(_, l, _)| l == "ssdready (user)")
        .take(5)
        .map(|(f, _, c)| format!("{f} {c}"))
        .collect();
    if !own.is_empty() {
        let _ = writeln!(out, "  ssdready's own time by function: {}", own.join(", "));
    }
    let un: Vec<String> = p
        .unmatched_symbols
        .iter()
        .take(6)
        .map(|(f, c)| format!("{f} {c}"))
        .collect();
    if !un.is_empty() {
        let _ = writeln!(
            out,
            "  unmatched (add rules in crates/probe/data/layers.rules): {}",
            un.join(", ")
        );
    }
}

/// The emulator's report: its preset and size, wear and GC, then what the
/// device did.
fn emulator_block(out: &mut String, e: &EmuReport) {
    let preset = e
        .params
        .iter()
        .find(|(k, _)| k == "preset")
        .map(|(_, v)| v.as_str())
        .unwrap_or("?");
    let size = e
        .params
        .iter()
        .find(|(k, _)| k == "size")
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    let _ = writeln!(
        out,
        "emulator {preset} ({} time, {}):",
        e.clock,
        fmt_bytes(size)
    );
    if e.host_pages_written > 0 || e.gc_runs > 0 {
        let _ = writeln!(
            out,
            "  write amplification {:.2} ({} host pages, {} NAND pages); greedy model at spare {:.3}: {:.2}",
            e.write_amplification,
            fmt_count(e.host_pages_written as f64),
            fmt_count(e.nand_pages_written as f64),
            e.alpha_effective,
            e.wa_greedy_predicted
        );
        let _ = writeln!(
            out,
            "  GC: {} runs, {} pages moved, {} trimmed; erase counts min {} mean {:.2} max {}",
            e.gc_runs,
            e.gc_pages_moved,
            e.trimmed_pages,
            e.erase_count_min,
            e.erase_count_mean,
            e.erase_count_max
        );
    }
    emulator_activity(out, e);
}

/// What the emulated device did: zones, SLC cache, free blocks, dies,
/// vectored commands and simulated time.
fn emulator_activity(out: &mut String, e: &EmuReport) {
    if let Some(z) = &e.zones {
        let (zones, open, active, z) = (z.zones, z.open, z.active, &z.counters);
        let _ = writeln!(
            out,
            "  zones: {} ({} open, {} active at the end); {} writes refused, {} reads refused; {} resets ({} blocks erased), {} finishes, {} implicit closes",
            zones, open, active, z.writes_refused, z.reads_refused, z.resets, z.erased_blocks, z.finishes, z.implicit_closes
        );
    }
    if e.slc_pages_written > 0 || e.pe_suspensions > 0 || e.reads_ahead_of_pe > 0 {
        // Whole counts: fmt_count shows small ones with decimals.
        let n = |v: u64| {
            if v < 10_000 {
                v.to_string()
            } else {
                fmt_count(v as f64)
            }
        };
        let _ = writeln!(
            out,
            "  SLC cache: {} pages written, {} folded; reads ahead of program/erase: {} ({} suspensions)",
            n(e.slc_pages_written),
            n(e.slc_pages_folded),
            n(e.reads_ahead_of_pe),
            n(e.pe_suspensions)
        );
    }
    if let (Some(first), Some(last)) = (e.free_blocks_series.first(), e.free_blocks_series.last()) {
        let _ = writeln!(
            out,
            "  free blocks: {first} at the first second, {last} at the end"
        );
    }
    if !e.die_utilisation_pct.is_empty() {
        let n = e.die_utilisation_pct.len() as f64;
        let mean = e.die_utilisation_pct.iter().sum::<f64>() / n;
        let max = e.die_utilisation_pct.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "  die utilisation: mean {mean:.0}%, max {max:.0}% over {} units",
            n as usize
        );
    }
    if e.extents > e.commands {
        let _ = writeln!(
            out,
            "  vectored commands: {} extents in {} commands",
            fmt_count(e.extents as f64),
            fmt_count(e.commands as f64)
        );
    }
    if e.simulated_ns > 0 {
        let _ = writeln!(
            out,
            "  simulated {:.2} s in {:.2} s of wall-clock time",
            e.simulated_ns as f64 / 1e9,
            e.wall_ns as f64 / 1e9
        );
    }
}

/// Render the whole result for a terminal.
pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    let window = r.jobs.iter().map(|j| j.measured_ns).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "{}: {} job{}, {:.2} s measured{}",
        r.tool,
        r.jobs.len(),
        if r.jobs.len() == 1 { "" } else { "s" },
        window as f64 / 1e9,
        if r.interrupted {
            " — INTERRUPTED: figures cover what ran"
        } else {
            ""
        }
    );
    if let Some(f) = &r.failure {
        let _ = writeln!(out, "FAILED: {f}");
    }
    for (pi, phase) in r.phases.iter().enumerate() {
        if r.phases.len() > 1 {
            let _ = writeln!(
                out,
                "— phase {} of {} (stonewall) —",
                pi + 1,
                r.phases.len()
            );
        }
        for &ji in &phase.jobs {
            if let Some(j) = r.jobs.get(ji) {
                job_block(&mut out, j);
            }
        }
        phase_block(&mut out, r, phase);
    }
    if let Some(e) = &r.emulator {
        emulator_block(&mut out, e);
    }
    let p = &r.platform;
    let _ = writeln!(
        out,
        "platform: Linux {}, {} × {}; clock {}{}, {:.1} ns per timestamp",
        p.kernel,
        p.cpus_online,
        p.cpu_model,
        r.clock.source,
        r.clock
            .tsc_hz
            .map(|h| format!(" {:.3} GHz", h / 1e9))
            .unwrap_or_default(),
        r.clock.ns_per_timestamp
    );
    if !p.mitigations.is_empty() {
        let names: Vec<&str> = p.mitigations.iter().map(|(k, _)| k.as_str()).collect();
        let _ = writeln!(
            out,
            "  clocksource {}; CPU-vulnerability mitigations on: {}",
            p.clocksource.as_deref().unwrap_or("?"),
            names.join(", ")
        );
    }
    lab_block(&mut out, &p.lab);
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::{CpuCost, HwCounts, LabCondition, ProcessCpu};

    fn zero_io_run() -> RunResult {
        RunResult {
            tool: "ssdready test".into(),
            jobs: vec![JobResult {
                name: "j".into(),
                read: Some(DirResult::default()),
                ..JobResult::default()
            }],
            phases: vec![PhaseResult {
                jobs: vec![0],
                window_ns: 1_000_000_000,
                cpu: Some(CpuCost {
                    ios: 0,
                    window_ns: 1_000_000_000,
                    process: ProcessCpu {
                        user_ns: 2_000_000,
                        ..ProcessCpu::default()
                    },
                    ..CpuCost::default()
                }),
                ..PhaseResult::default()
            }],
            ..RunResult::default()
        }
    }

    #[test]
    fn per_io_figures_are_not_printed_for_zero_ios() {
        let text = render(&zero_io_run());
        assert!(text.contains("read: no I/O completed"), "{text}");
        assert!(text.contains("cpu per I/O: no I/O completed"), "{text}");
        assert!(!text.contains("I/Os):"), "no per-I/O block: {text}");
        assert!(!text.contains("clat"), "no latency of nothing: {text}");
        assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
        let mut r = zero_io_run();
        r.jobs[0].read = None;
        let text = render(&r);
        assert!(text.contains("  no I/O completed"), "{text}");
    }

    fn condition(name: &str, value: &str, warning: Option<&str>) -> LabCondition {
        LabCondition {
            name: name.into(),
            value: value.into(),
            source: "/sys/x".into(),
            warning: warning.map(String::from),
        }
    }

    fn result(hw: Option<HwCounts>) -> RunResult {
        let mut r = RunResult::default();
        r.platform.lab = vec![
            condition("smt", "off (control notsupported)", None),
            condition(
                "virtualization",
                "virtual machine (KVM)",
                Some("virtual machine (KVM): interrupts and timers go through the hypervisor"),
            ),
            condition(
                "hw_counters",
                "none",
                Some("no hardware counters: ENOENT: no PMU exposed"),
            ),
        ];
        r.phases.push(PhaseResult {
            cpu: Some(CpuCost::default()),
            hw_counters: hw,
            ..PhaseResult::default()
        });
        r
    }

    #[test]
    fn lab_conditions_take_one_line_and_each_warning_its_own() {
        let text = render(&result(None));
        assert!(text.contains(
            "  lab: smt off (control notsupported); virtualization virtual machine (KVM); hw counters none\n"
        ));
        assert!(text.contains("  lab warning: virtual machine (KVM): interrupts and timers"));
        assert!(text.contains("  lab warning: no hardware counters: ENOENT: no PMU exposed\n"));
    }

    #[test]
    fn cpu_block_says_there_are_no_hardware_counters_and_why() {
        let text = render(&result(None));
        let cpu = text.find("cpu per I/O").expect("cpu block");
        let line = text[cpu..].find("\n  no hardware counters: ENOENT: no PMU exposed\n");
        assert!(line.is_some(), "{text}");
    }

    #[test]
    fn cpu_block_gives_cycles_instructions_and_ipc_per_io() {
        let hw = HwCounts {
            ios: 1000,
            cycles: 12_000_000,
            instructions: 6_000_000,
            cycles_per_io: 12_000.0,
            instructions_per_io: 6_000.0,
            ipc: 0.5,
            running_share: 0.5,
        };
        let text = render(&result(Some(hw)));
        assert!(text.contains(
            "  hardware counters (all CPUs): 12.0K cycles, 6000 instructions per I/O, IPC 0.50 (multiplexed: counted 50% of the window, scaled up)\n"
        ), "{text}");
        assert!(!text.contains("\n  no hardware counters"));
    }
}
