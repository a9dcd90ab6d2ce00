//! Per phase: the CPU cost per I/O and where it comes from, the exact CPU
//! by state, the profile, the hardware counters, the device's own figures
//! and the lab conditions.

use ssdready_core::result::{CpuCost, DeviceInterrupts, DiskResult, PhaseResult, RunResult};
use ssdready_core::units::{fmt_count, fmt_ns};
use std::fmt::Write;

use super::decomposition_block;
use super::NO_IO;

/// Where the two CPU figures come from, and the other sources beside them.
pub(super) fn cpu_sources(out: &mut String, c: &CpuCost) {
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

pub(super) fn phase_block(out: &mut String, r: &RunResult, phase: &PhaseResult) {
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
pub(super) fn cpu_per_io_block(out: &mut String, phase: &PhaseResult) {
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
pub(super) fn device_block(out: &mut String, r: &RunResult, d: &DiskResult) {
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
    if let Some(i) = &d.interrupts {
        let _ = writeln!(out, "  {}", interrupts_line(i));
    }
    if let Some(n) = &d.note {
        let _ = writeln!(out, "  note: {n}");
    }
}

/// The device's own queue interrupts over the window: a polled I/O takes
/// none, an interrupt-driven one about one.
fn interrupts_line(i: &DeviceInterrupts) -> String {
    let per = i
        .per_io
        .map_or(String::new(), |p| format!(" ({p:.2} per I/O)"));
    let busy: Vec<String> = i
        .vectors
        .iter()
        .filter(|v| v.count > 0)
        .map(|v| format!("{} {}", v.name, v.count))
        .collect();
    let on = if busy.is_empty() {
        String::new()
    } else {
        format!(": {}", busy.join(", "))
    };
    let n = i.vectors.len();
    let plural = if n == 1 { "" } else { "s" };
    format!(
        "queue interrupts: {}{per} on {n} vector{plural}{on}",
        i.total
    )
}

/// Cycles and instructions per I/O, or why the machine has no counters.
pub(super) fn hw_counters_line(out: &mut String, r: &RunResult, phase: &PhaseResult) {
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
pub(super) fn lab_block(out: &mut String, lab: &[ssdready_core::result::LabCondition]) {
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
pub(super) fn per_cpu_range(v: &[f64]) -> String {
    let lo = v.iter().copied().reduce(f64::min);
    let hi = v.iter().copied().reduce(f64::max);
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!(", each CPU {lo:.1}–{hi:.1}%"),
        _ => String::new(),
    }
}

/// `--profile=exact`: the bracketed states, the sampled and exact figures
/// side by side, and the layers scaled to the exact time.
pub(super) fn exact_block(out: &mut String, e: &ssdready_core::result::ExactCpu, ios: Option<u64>) {
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

pub(super) fn profile_block(
    out: &mut String,
    p: &ssdready_core::result::ProfileReport,
    ios: Option<u64>,
) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::IrqCount;

    fn vector(name: &str, count: u64) -> IrqCount {
        IrqCount {
            irq: 0,
            name: name.into(),
            count,
        }
    }

    #[test]
    fn a_device_s_queue_interrupts_are_shown_per_io_with_the_vectors_that_fired() {
        let i = DeviceInterrupts {
            total: 1500,
            per_io: Some(0.75),
            vectors: vec![
                vector("nvme0q0", 0),
                vector("nvme0q1", 1000),
                vector("nvme0q2", 500),
            ],
            source: String::new(),
        };
        assert_eq!(
            interrupts_line(&i),
            "queue interrupts: 1500 (0.75 per I/O) on 3 vectors: nvme0q1 1000, nvme0q2 500"
        );
        let polled = DeviceInterrupts {
            total: 0,
            per_io: Some(0.0),
            vectors: vec![vector("nvme0q1", 0)],
            source: String::new(),
        };
        assert_eq!(
            interrupts_line(&polled),
            "queue interrupts: 0 (0.00 per I/O) on 1 vector"
        );
    }
}
