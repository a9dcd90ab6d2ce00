//! The terminal summary.

use ssdready_core::hist::LatSummary;
use ssdready_core::result::RunResult;
use ssdready_core::spec::BlockSizes;
use ssdready_core::units::{fmt_bytes, fmt_ns};
use std::fmt::Write;

mod decomposition;
mod emulator;
mod job;
mod phase;
mod schedule;

use decomposition::decomposition_block;
use emulator::emulator_block;
use job::job_block;
use phase::{lab_block, phase_block};

pub(super) fn bs_text(b: &BlockSizes) -> String {
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

pub(super) fn pct_label(p: f64) -> String {
    let s = format!("{p}");
    format!("p{s}")
}

pub(super) fn lat_line(out: &mut String, label: &str, l: &LatSummary) {
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
pub(super) const NO_IO: &str = "no I/O completed";

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
    use ssdready_core::result::{
        CpuCost, DirResult, HwCounts, JobResult, LabCondition, PhaseResult, ProcessCpu,
    };

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
