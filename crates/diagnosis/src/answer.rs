//! The study's answer in words, shared by its renderings (the terminal
//! findings and the HTML report): what the target is, the device's limit,
//! the knee, what limits saturation and the strategies against interrupts.

use crate::figures::Figures;
use ssdready_core::units::fmt_count;
use ssdready_measured::record::{TargetKind, TargetProfile};
use std::fmt::Write as _;

/// One line about a target: what it is, and its queue where it has one.
pub fn describe(t: &TargetProfile) -> String {
    let mut s = match t.kind {
        TargetKind::Emulator => {
            let preset = t
                .emulator_params
                .iter()
                .find(|p| p.0 == "preset")
                .map_or("", |p| p.1.as_str());
            let shown = if t.spec == "emu:" || t.spec == "emu" {
                format!("emu:{preset} (the default drive)")
            } else {
                t.spec.clone()
            };
            format!("{shown}: the built-in SSD emulator, preset {preset}, inside ssdready's own process (no kernel on its path)")
        }
        TargetKind::RamDevice => format!("{}: a RAM block device ({})", t.spec, t.transport),
        TargetKind::BlockDevice => match &t.emulated {
            Some(e) => format!(
                "{}: the built-in SSD emulator ({e}) behind the kernel, a {} block device",
                t.spec, t.transport
            ),
            None => format!("{}: a {} block device", t.spec, t.transport),
        },
        TargetKind::File => format!(
            "{}: a file on {} ({})",
            t.spec,
            t.filesystem.as_deref().unwrap_or("?"),
            t.mount_point.as_deref().unwrap_or("?")
        ),
    };
    if let Some(b) = &t.backing {
        let _ = write!(s, ", backed by {b}");
    }
    if let Some(d) = &t.device {
        let _ = write!(
            s,
            "; device {d}, logical blocks of {} B",
            t.logical_block_size
        );
        if let Some(q) = t.hw_queues {
            let _ = write!(s, ", {q} hardware queue(s)");
        }
        if let Some(sc) = &t.scheduler {
            let _ = write!(s, ", scheduler {sc} (of {})", t.schedulers.join(", "));
        }
        if let Some(p) = t.poll_queues {
            let _ = write!(s, ", polling {}", if p { "on" } else { "off" });
        }
    }
    s
}

/// `device limit: 580.6K IOPS for 4 KiB random reads (analytic model: the
/// dies (…))`, or that the device has none.
pub fn device_limit_line(f: &Figures) -> String {
    let l = &f.device_limit;
    if l.basis == ssdready_measured::basis::HIGHEST_MEASURED {
        return match l.iops {
            Some(i) => format!(
                "highest rate measured: {} IOPS for 4 KiB random reads; the device's own limit is not known here (no model of it, no raw measurement, no specification)",
                fmt_count(i)
            ),
            None => "highest rate measured: none (no run of 4 KiB random reads completed)".into(),
        };
    }
    match (l.iops, &l.bound_by) {
        (Some(i), Some(b)) => format!(
            "device limit: {} IOPS for 4 KiB random reads ({}: {b})",
            fmt_count(i),
            l.basis
        ),
        _ => "device limit: none (the device has zero latency)".into(),
    }
}

/// `knee (90 % of peak IOPS) at QD 128; saturation: device (the dies …)`,
/// when the curve has a knee.
pub fn knee_line(f: &Figures) -> Option<String> {
    f.knee_qd.map(|k| {
        format!(
            "knee (90 % of peak IOPS) at QD {k}; saturation: {} ({})",
            f.saturation.limit, f.saturation.part
        )
    })
}

/// `1 min 05 s`, `42 s`.
pub fn fmt_duration(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// The strategies section in a few lines: each strategy on 4 KiB random
/// reads against async+intr (×IOPS, ×CPU per I/O, ×p99), the best one,
/// where each CPU figure comes from, and what was skipped. Empty when the
/// study ran no strategies.
pub fn strategies_lines(f: &Figures) -> Vec<String> {
    use crate::strategies::fmt_ratio;
    let Some(s) = &f.strategies else {
        return Vec::new();
    };
    let x = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{}×", fmt_ratio(v)));
    let mut out = vec![format!(
        "strategies, 4 KiB random reads from {} threads at QD 1 each, against async+intr (CPU per I/O: {}):",
        s.threads, "the process's, getrusage"
    )];
    for r in s.results.iter().filter(|r| r.pattern == "randread") {
        let peak = r
            .pct_of_peak
            .map_or(String::new(), |p| format!(", {p:.0} % of peak"));
        let ran = match r.fallback {
            Some(_) => format!(" (ran as {})", r.ran),
            None => String::new(),
        };
        let vs = r.vs_async_intr.as_ref().map_or(String::new(), |t| {
            format!(
                ": {} IOPS, {} CPU per I/O, {} p99",
                x(t.iops_ratio),
                x(t.cpu_per_io_ratio),
                x(t.p99_lat_ratio)
            )
        });
        out.push(format!(
            "  {:<11} {:>9} IOPS{peak}{ran}{vs}",
            r.strategy,
            r.iops.map_or("-".into(), fmt_count)
        ));
        if let Some(c) = &r.interrupt_check {
            out.push(format!("  {:<11} {c}", ""));
        }
    }
    // A result that ran as iopoll but took interrupts, on any pattern.
    for r in s.results.iter().filter(|r| r.pattern != "randread") {
        if let (Some(false), Some(c)) = (r.polled, &r.interrupt_check) {
            out.push(format!("  {} ({}): {c}", r.strategy, r.pattern));
        }
    }
    match &s.best {
        Some(b) => out.push(format!(
            "  best: {}{} — {} the IOPS, {} the CPU per I/O ({}), {} the p99 latency of async+intr",
            match b.iops_ratio < 1.0 {
                true => "none beat async+intr; the nearest, ",
                false => "",
            },
            b.strategy,
            x(Some(b.iops_ratio)),
            x(b.cpu_per_io_ratio),
            "process CPU, getrusage",
            x(b.p99_lat_ratio)
        )),
        None => out.push("  no best: async+intr or every other strategy did not run".into()),
    }
    for k in &s.skipped {
        out.push(format!(
            "  skipped {} ({}): {}",
            k.strategy,
            k.pattern.as_deref().unwrap_or("every pattern"),
            k.reason
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::{ResultDoc, Section};

    fn result(strategy: &str, pattern: &str, polled: Option<bool>, check: &str) -> ResultDoc {
        ResultDoc {
            strategy: strategy.into(),
            pattern: pattern.into(),
            ran: if polled.is_some() {
                "iopoll"
            } else {
                "interrupt"
            }
            .into(),
            iops: Some(10_000.0),
            device_interrupts: Some(1),
            polled,
            interrupt_check: Some(check.into()),
            ..Default::default()
        }
    }

    #[test]
    fn the_strategies_text_says_whether_an_iopoll_result_took_interrupts() {
        let f = Figures {
            strategies: Some(Section {
                results: vec![
                    result(
                        "async+intr",
                        "randread",
                        None,
                        "nvme0n1's queues took 9 interrupts",
                    ),
                    result(
                        "sync+poll",
                        "randread",
                        Some(true),
                        "no interrupt on its queues: polled",
                    ),
                    result(
                        "sync+poll",
                        "seqread",
                        Some(false),
                        "not all I/O was polled",
                    ),
                    result("sync+poll", "seqwrite", Some(true), "polled on seqwrite"),
                ],
                ..Default::default()
            }),
            ..Default::default()
        };
        let text = strategies_lines(&f).join("\n");
        assert!(
            text.contains("nvme0n1's queues took 9 interrupts"),
            "{text}"
        );
        assert!(
            text.contains("no interrupt on its queues: polled"),
            "{text}"
        );
        assert!(
            text.contains("sync+poll (seqread): not all I/O was polled"),
            "{text}"
        );
        assert!(
            !text.contains("polled on seqwrite"),
            "only the failures of other patterns: {text}"
        );
    }
}
