//! Cycles and instructions per I/O from hardware counters, where the
//! machine has them: unhalted core cycles and retired instructions counted
//! system-wide on every online CPU over a phase's measured window (enabled
//! and disabled at its edges), divided by the phase's I/Os, and their ratio
//! (IPC). Studies of the storage stack report these per I/O (a few thousand
//! instructions for user-space drivers, ~11 K for the kernel path).
//!
//! Idle time in HLT or a C-state counts no cycles; an idle CPU that polls
//! (the POLL state, guest halt polling) counts its polling.
//!
//! Most virtual machines expose no PMU: the probe then says why (the
//! errno, in words), the lab section of the platform records it, and the
//! phases carry no counts.

use ssdready_core::result::{HwCounts, LabCondition};
use ssdready_io::hwperf::{CpuReading, HwCounters, Reading};

/// The online CPUs (`/sys/devices/system/cpu/online`), or CPU 0.
fn online_cpus() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| ssdready_core::units::parse_cpu_list(t.trim()).ok())
        .map(|v| v.into_iter().map(|c| c as u32).collect())
        .unwrap_or_else(|| vec![0])
}

/// Why `perf_event_open` refused the hardware events, in words.
pub fn refusal_reason(e: &std::io::Error, paranoid: Option<i32>) -> String {
    use nix::errno::Errno;
    let code = e.raw_os_error().unwrap_or(0);
    let name = Errno::from_raw(code);
    let why = match name {
        Errno::ENOENT => "the kernel has no hardware cycles/instructions events (no PMU exposed; typical of a VM without a virtual PMU)".to_string(),
        Errno::EOPNOTSUPP => "the PMU does not support these events in this mode (typical of a VM's partial PMU)".to_string(),
        Errno::ENODEV => "no PMU on this CPU".to_string(),
        Errno::EACCES | Errno::EPERM => format!(
            "system-wide counting needs root, CAP_PERFMON or kernel.perf_event_paranoid ≤ 0 (now {})",
            paranoid.map_or("unknown".to_string(), |p| p.to_string())
        ),
        Errno::EBUSY => "another user holds the PMU exclusively".to_string(),
        Errno::EINVAL => "the kernel rejected the event attributes".to_string(),
        _ => e.to_string(),
    };
    format!("{name:?}: {why}")
}

fn paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `perf_event_open` refused the hardware events: its error and the
/// `kernel.perf_event_paranoid` setting then (the message says why in
/// words, [`refusal_reason`]).
#[derive(Debug, thiserror::Error)]
#[error("{}", refusal_reason(.err, *.paranoid))]
pub struct NoCounters {
    pub err: std::io::Error,
    pub paranoid: Option<i32>,
}

/// Whether cycles and instructions can be counted system-wide here: Ok, or
/// the reason why not.
pub fn probe() -> Result<(), NoCounters> {
    let first = online_cpus()[0];
    HwCounters::open(&[first])
        .map(|_| ())
        .map_err(|err| NoCounters {
            err,
            paranoid: paranoid(),
        })
}

/// The lab condition recording the probe's answer.
pub fn condition(probe: &Result<(), NoCounters>) -> LabCondition {
    let (value, warning) = match probe {
        Ok(()) => (
            "cycles, instructions (system-wide, counting)".to_string(),
            None,
        ),
        Err(why) => (
            "none".to_string(),
            Some(format!(
                "no hardware counters: {why}; no cycles or instructions per I/O"
            )),
        ),
    };
    LabCondition {
        name: "hw_counters".into(),
        value,
        source: "perf_event_open(PERF_TYPE_HARDWARE: CPU_CYCLES, INSTRUCTIONS)".into(),
        warning,
    }
}

/// A count scaled for the time its event was off the PMU (multiplexing),
/// and the share of the enabled time it ran.
fn scaled(r: &Reading) -> (f64, f64) {
    if r.running_ns == 0 || r.enabled_ns == 0 {
        return (0.0, 0.0);
    }
    let share = r.running_ns as f64 / r.enabled_ns as f64;
    (r.value as f64 / share.min(1.0), share.min(1.0))
}

/// Sum the CPUs' counts and divide by `ios`.
pub fn per_io(readings: &[CpuReading], ios: u64) -> HwCounts {
    let (mut cycles, mut instructions, mut share) = (0f64, 0f64, 1f64);
    for r in readings {
        let (c, cs) = scaled(&r.cycles);
        let (i, is) = scaled(&r.instructions);
        cycles += c;
        instructions += i;
        share = share.min(cs).min(is);
    }
    let per = |x: f64| if ios > 0 { x / ios as f64 } else { 0.0 };
    HwCounts {
        ios,
        cycles: cycles.round() as u64,
        instructions: instructions.round() as u64,
        cycles_per_io: per(cycles),
        instructions_per_io: per(instructions),
        ipc: if cycles > 0.0 {
            instructions / cycles
        } else {
            0.0
        },
        running_share: if readings.is_empty() { 0.0 } else { share },
    }
}

/// The counters of one measured window; inert where the machine has none.
pub struct Window(Option<HwCounters>);

impl Window {
    /// Open counters on every online CPU, disabled; inert when refused (the
    /// platform's lab section says why).
    pub fn open() -> Window {
        Window(HwCounters::open(&online_cpus()).ok())
    }
    /// The window opens.
    pub fn start(&self) {
        if let Some(c) = &self.0 {
            c.enable();
        }
    }
    /// The window closes.
    pub fn stop(&self) {
        if let Some(c) = &self.0 {
            c.disable();
        }
    }
    /// Cycles and instructions of the window per I/O; None without
    /// counters, or when they never ran (the window never opened, or other
    /// users held the PMU throughout).
    pub fn report(&self, ios: u64) -> Option<HwCounts> {
        let readings = self.0.as_ref()?.read().ok()?;
        Some(per_io(&readings, ios)).filter(|h| h.running_share > 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(value: u64, enabled_ns: u64, running_ns: u64) -> Reading {
        Reading {
            value,
            enabled_ns,
            running_ns,
        }
    }

    #[test]
    fn per_io_sums_cpus_and_divides_by_ios() {
        let r = [
            CpuReading {
                cpu: 0,
                cycles: reading(3_000_000, 10, 10),
                instructions: reading(1_500_000, 10, 10),
            },
            CpuReading {
                cpu: 1,
                cycles: reading(1_000_000, 10, 10),
                instructions: reading(500_000, 10, 10),
            },
        ];
        let h = per_io(&r, 1000);
        assert_eq!((h.cycles, h.instructions), (4_000_000, 2_000_000));
        assert_eq!(h.cycles_per_io, 4000.0);
        assert_eq!(h.instructions_per_io, 2000.0);
        assert_eq!(h.ipc, 0.5);
        assert_eq!(h.running_share, 1.0);
    }

    #[test]
    fn multiplexed_counts_are_scaled_up_by_the_time_they_missed() {
        let r = [CpuReading {
            cpu: 0,
            cycles: reading(1_000, 100, 25),
            instructions: reading(2_000, 100, 50),
        }];
        let h = per_io(&r, 2);
        assert_eq!((h.cycles, h.instructions), (4_000, 4_000));
        assert_eq!(h.ipc, 1.0);
        assert_eq!(h.running_share, 0.25);
    }

    #[test]
    fn no_ios_or_no_cycles_give_zero_ratios_not_nan() {
        let r = [CpuReading {
            cpu: 0,
            cycles: reading(0, 100, 0),
            instructions: reading(0, 100, 0),
        }];
        let h = per_io(&r, 0);
        assert_eq!(
            (h.cycles_per_io, h.instructions_per_io, h.ipc),
            (0.0, 0.0, 0.0)
        );
        assert_eq!(h.running_share, 0.0);
    }

    #[test]
    fn refusals_are_named_and_explained() {
        let e = |c| std::io::Error::from_raw_os_error(c);
        let enoent = refusal_reason(&e(nix::errno::Errno::ENOENT as i32), None);
        assert!(
            enoent.starts_with("ENOENT: ") && enoent.contains("no PMU"),
            "{enoent}"
        );
        let eacces = refusal_reason(&e(nix::errno::Errno::EACCES as i32), Some(2));
        assert!(
            eacces.starts_with("EACCES: ") && eacces.ends_with("(now 2)"),
            "{eacces}"
        );
    }

    /// The probe, the lab condition and a window agree: on a machine
    /// without counters (this project's VM) the condition says "none" with
    /// the reason and a window reports nothing; with counters it reports.
    #[test]
    fn machine_without_counters_says_so_and_reports_none() {
        let p = probe();
        let c = condition(&p);
        let w = Window::open();
        w.start();
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(5) {
            std::hint::spin_loop();
        }
        w.stop();
        match p {
            Err(why) => {
                assert_eq!(c.value, "none");
                let warning = c.warning.expect("a warning");
                assert!(warning.starts_with("no hardware counters: "), "{warning}");
                assert!(warning.contains(&why.to_string()));
                assert!(w.report(10).is_none());
            }
            Ok(()) => {
                assert!(c.warning.is_none());
                assert!(w.report(10).is_some());
            }
        }
    }
}
