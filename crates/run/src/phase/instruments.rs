//! A phase's optional instruments, each opened only when asked and read
//! over the measured window (after the ramp): the block-tracepoint timer
//! (`--decompose`), the per-CPU state programs (`--profile=exact`), the
//! sampling profiler (`--profile`), and the hardware counters (always
//! tried; absent without a PMU).
//!
//! [`Instruments::open`] loads them (the eBPF programs first, so the
//! profiler's symbol table names them), [`Instruments::start`] opens the
//! window, [`Instruments::stop`] closes it and detaches the programs, and
//! [`Closed`] turns the readings into the phase's figures.

use super::inputs::Outcomes;
use crate::observer::RunObserver;
use crate::profiler::Profiler;
use ssdready_core::result::{Decomposition, HwCounts, ProfileReport};
use ssdready_io::bpf::cpustate::{CpuStates, STATES};
use ssdready_io::bpf::{BlockTimer, JoinTable, PartHist};
use ssdready_probe::hwcount::Window;
use std::sync::Arc;

type Parts = (PartHist, PartHist, PartHist);
/// A reading of the CPU states: its moment (ns) and each CPU's states.
type States = (u64, Vec<[u64; STATES.len()]>);

/// The instruments while the phase runs.
pub(crate) struct Instruments {
    timer: Option<BlockTimer>,
    timer_start: Option<Parts>,
    states: Option<CpuStates>,
    states_start: Option<States>,
    sampler: Option<Profiler>,
    hw: Window,
}

/// The state programs' readings: the tracepoints attached and missing,
/// the states at both ends of the window.
struct StateReadings {
    attached: Vec<String>,
    missing: Vec<String>,
    from: Option<States>,
    to: Option<States>,
}

/// The instruments once the window closed: their readings.
pub(crate) struct Closed {
    sampler: Option<Profiler>,
    states: Option<StateReadings>,
    /// The timer's flavour and its histograms at both ends.
    timer: Option<(&'static str, Option<Parts>, Option<Parts>)>,
    hw: Window,
}

impl Instruments {
    /// Load what is asked; what cannot be loaded says why in `warnings`.
    pub fn open(profile: bool, exact: bool, decompose: bool, warnings: &mut Vec<String>) -> Self {
        let timer = decompose
            .then(|| crate::decompose::start(warnings))
            .flatten();
        let states = (profile && exact)
            .then(|| crate::exactcpu::start(warnings))
            .flatten();
        let sampler = profile.then(|| crate::profiler::open(warnings)).flatten();
        Instruments {
            timer,
            timer_start: None,
            states,
            states_start: None,
            sampler,
            hw: Window::open(),
        }
    }

    /// The table through which the workers join their I/Os to the
    /// kernel's (`--decompose` with BTF).
    pub fn join_table(&self) -> Option<Arc<JoinTable>> {
        self.timer.as_ref().and_then(|t| t.join_table())
    }

    /// Open the measured window: every counter's first reading.
    pub fn start(&mut self) {
        self.states_start = self.states.as_ref().and_then(|s| s.snapshot().ok());
        if let Some((s, _, _)) = &self.sampler {
            s.enable();
        }
        self.hw.start();
        self.timer_start = self.timer.as_ref().and_then(|t| t.read_parts().ok());
    }

    /// Move the samples taken so far out of the kernel's buffers.
    pub fn drain(&mut self) {
        if let Some((s, _, raw)) = &mut self.sampler {
            s.drain(&mut |x| raw.push(x.user, x.pid, x.ip, &x.callchain, x.weight_ns, x.timing));
        }
    }

    /// Close the window: the last readings, then the programs detached
    /// (they cost every system call and interrupt) and sampling stopped.
    pub fn stop(mut self) -> Closed {
        let states = self.states.take().map(|s| StateReadings {
            to: s.snapshot().ok(),
            attached: s.attached.clone(),
            missing: s.missing.clone(),
            from: self.states_start.take(),
        });
        self.hw.stop();
        let timer = self.timer.take().map(|t| {
            let end = t.read_parts().ok();
            (t.flavour, self.timer_start.take(), end)
        });
        if let Some((s, _, _)) = &self.sampler {
            s.disable();
        }
        self.drain();
        Closed {
            sampler: self.sampler,
            states,
            timer,
            hw: self.hw,
        }
    }
}

impl Closed {
    /// The sampled profile (with the exact states beside it when loaded).
    pub fn profile(
        &mut self,
        window_ns: u64,
        ios: u64,
        tsc_hz: Option<f64>,
        obs: &mut dyn RunObserver,
    ) -> Option<ProfileReport> {
        let (s, mut c, raw) = self.sampler.take()?;
        raw.classify_into(&mut c);
        if s.throttled > 0 {
            obs.note(&format!(
                "--profile: the kernel throttled sampling {} times",
                s.throttled
            ));
        }
        let mut r = c.report(s.period_ns(), ios, tsc_hz, s.lost, s.weigher.late_ns);
        r.unsampled_ns = s.weigher.unsampled_ns(window_ns);
        if let Some(StateReadings {
            attached,
            missing,
            from: Some(a),
            to: Some(b),
        }) = self.states.take()
        {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
            let (d, per_cpu) = crate::exactcpu::delta(&a.1, &b.1);
            // The states cover the time between their own two readings,
            // which are not the window's (under load the reading after
            // the window can come a scheduler slice later).
            let read_ns = b.0.saturating_sub(a.0);
            r.exact = Some(crate::exactcpu::build(
                &d, read_ns, cpus, ios, tsc_hz, &r, attached, missing, &per_cpu,
            ));
        }
        Some(r)
    }

    /// The block layer's split of the workers' latency (`--decompose`).
    pub fn decomposition(&mut self, outcomes: &Outcomes, pcts: &[f64]) -> Option<Decomposition> {
        let (flavour, Some(a), Some(b)) = self.timer.take()? else {
            return None;
        };
        let (mut app_ios, mut app_sum) = (0u64, 0f64);
        let mut joined: Option<ssdready_core::stats::IoSplit> = None;
        for (_, o) in outcomes {
            for d in o.stats.dirs.iter().flatten() {
                app_ios += d.lat.count();
                app_sum += d.lat.sum() as f64;
            }
            if let Some(j) = &o.stats.io_split {
                joined.get_or_insert_with(Default::default).merge(j);
            }
        }
        Some(crate::decompose::split(
            flavour,
            a,
            b,
            app_ios,
            app_sum,
            joined.as_ref(),
            pcts,
        ))
    }

    /// The hardware counters per I/O, where the machine has them.
    pub fn hw_counts(&self, ios: u64) -> Option<HwCounts> {
        self.hw.report(ios)
    }
}
