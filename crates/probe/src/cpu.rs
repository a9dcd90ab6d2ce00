//! CPU accounting: whole system (`/proc/stat`) and this process (`getrusage`).

use ssdready_core::result::{CpuCost, PerIo, ProcessCpu, SystemCpu};

/// Parse the aggregate `cpu` line and the `ctxt`, `intr`, `softirq` totals of
/// a /proc/stat text.
pub fn parse_proc_stat(text: &str, user_hz: u64) -> Option<SystemCpu> {
    let mut s = SystemCpu {
        user_hz,
        ..SystemCpu::default()
    };
    let mut saw_cpu = false;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("cpu") => {
                let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
                if v.len() < 8 {
                    return None;
                }
                (
                    s.user, s.nice, s.system, s.idle, s.iowait, s.irq, s.softirq, s.steal,
                ) = (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
                saw_cpu = true;
            }
            Some("ctxt") => s.ctxt = it.next()?.parse().ok()?,
            Some("intr") => s.intr = it.next()?.parse().ok()?,
            Some("softirq") => s.softirqs = it.next()?.parse().ok()?,
            _ => {}
        }
    }
    saw_cpu.then_some(s)
}

fn user_hz() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map(|v| v as u64)
        .unwrap_or(100)
}

/// Read /proc/stat now.
pub fn system_now() -> Option<SystemCpu> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?, user_hz())
}

fn rusage(who: nix::sys::resource::UsageWho) -> Option<nix::sys::resource::Usage> {
    nix::sys::resource::getrusage(who).ok()
}

fn tv_ns(t: nix::sys::time::TimeVal) -> u64 {
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1_000
}

/// getrusage(RUSAGE_SELF) now: every thread of the process, live or exited.
pub fn process_now() -> ProcessCpu {
    match rusage(nix::sys::resource::UsageWho::RUSAGE_SELF) {
        Some(r) => ProcessCpu {
            user_ns: tv_ns(r.user_time()),
            sys_ns: tv_ns(r.system_time()),
            ctx_voluntary: r.voluntary_context_switches() as u64,
            ctx_involuntary: r.involuntary_context_switches() as u64,
        },
        None => ProcessCpu::default(),
    }
}

/// getrusage(RUSAGE_THREAD) now: the calling thread only (fio's per-job figure).
pub fn thread_now() -> ssdready_core::stats::ThreadCpu {
    match rusage(nix::sys::resource::UsageWho::RUSAGE_THREAD) {
        Some(r) => ssdready_core::stats::ThreadCpu {
            user_ns: tv_ns(r.user_time()),
            sys_ns: tv_ns(r.system_time()),
            ctx: (r.voluntary_context_switches() + r.involuntary_context_switches()) as u64,
        },
        None => Default::default(),
    }
}

/// A snapshot of both at one moment.
#[derive(Clone, Copy, Debug)]
pub struct CpuSnapshot {
    /// Whole system (None when /proc/stat is unreadable).
    pub system: Option<SystemCpu>,
    /// This process.
    pub process: ProcessCpu,
}

impl CpuSnapshot {
    /// Take a snapshot.
    pub fn now() -> Self {
        CpuSnapshot {
            system: system_now(),
            process: process_now(),
        }
    }
}

fn sub_sys(a: &SystemCpu, b: &SystemCpu) -> SystemCpu {
    SystemCpu {
        user_hz: b.user_hz,
        user: b.user.saturating_sub(a.user),
        nice: b.nice.saturating_sub(a.nice),
        system: b.system.saturating_sub(a.system),
        idle: b.idle.saturating_sub(a.idle),
        iowait: b.iowait.saturating_sub(a.iowait),
        irq: b.irq.saturating_sub(a.irq),
        softirq: b.softirq.saturating_sub(a.softirq),
        steal: b.steal.saturating_sub(a.steal),
        ctxt: b.ctxt.saturating_sub(a.ctxt),
        intr: b.intr.saturating_sub(a.intr),
        softirqs: b.softirqs.saturating_sub(a.softirqs),
    }
}

/// The cost of the window between two snapshots, per I/O. `tsc_hz` turns
/// nanoseconds into clocks.
pub fn cost(
    start: &CpuSnapshot,
    end: &CpuSnapshot,
    ios: u64,
    window_ns: u64,
    tsc_hz: Option<f64>,
) -> CpuCost {
    let process = ProcessCpu {
        user_ns: end.process.user_ns.saturating_sub(start.process.user_ns),
        sys_ns: end.process.sys_ns.saturating_sub(start.process.sys_ns),
        ctx_voluntary: end
            .process
            .ctx_voluntary
            .saturating_sub(start.process.ctx_voluntary),
        ctx_involuntary: end
            .process
            .ctx_involuntary
            .saturating_sub(start.process.ctx_involuntary),
    };
    let system = match (&start.system, &end.system) {
        (Some(a), Some(b)) => sub_sys(a, b),
        _ => SystemCpu::default(),
    };
    let tick_ns = if system.user_hz > 0 {
        1e9 / system.user_hz as f64
    } else {
        1e7
    };
    let busy_ns = system.busy_ticks() as f64 * tick_ns;
    CpuCost {
        ios,
        window_ns,
        process,
        system,
        system_busy_pct: if system.total_ticks() > 0 {
            100.0 * system.busy_ticks() as f64 / system.total_ticks() as f64
        } else {
            0.0
        },
        per_io: per_io(&process, &system, busy_ns, ios, tsc_hz),
    }
}

/// Costs divided by `ios`; all zero (and no clocks) when no I/O completed,
/// rather than the whole window's cost passed off as one I/O's.
fn per_io(
    process: &ProcessCpu,
    system: &SystemCpu,
    busy_ns: f64,
    ios: u64,
    tsc_hz: Option<f64>,
) -> PerIo {
    if ios == 0 {
        return PerIo::default();
    }
    let n = ios as f64;
    let clocks = |ns: f64| tsc_hz.map(|hz| ns * hz / 1e9);
    let process_ns = (process.user_ns + process.sys_ns) as f64 / n;
    let system_ns = busy_ns / n;
    PerIo {
        process_ns,
        process_clocks: clocks(process_ns),
        system_ns,
        system_clocks: clocks(system_ns),
        process_ctx_switches: (process.ctx_voluntary + process.ctx_involuntary) as f64 / n,
        system_ctx_switches: system.ctxt as f64 / n,
        system_interrupts: system.intr as f64 / n,
        system_softirqs: system.softirqs as f64 / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "cpu  100 5 50 1000 10 3 7 2 0 0\ncpu0 50 2 25 500 5 1 3 1 0 0\n\
        intr 12345 0 0\nctxt 999\nbtime 1\nprocesses 3\nsoftirq 4444 1 2\n";

    #[test]
    fn proc_stat_is_parsed() {
        let s = parse_proc_stat(SAMPLE, 100).unwrap();
        assert_eq!(
            (s.user, s.nice, s.system, s.idle, s.iowait, s.irq, s.softirq, s.steal),
            (100, 5, 50, 1000, 10, 3, 7, 2)
        );
        assert_eq!((s.ctxt, s.intr, s.softirqs), (999, 12345, 4444));
        assert_eq!(s.busy_ticks(), 167);
    }

    #[test]
    fn per_io_cost_divides_the_deltas() {
        let a = CpuSnapshot {
            system: parse_proc_stat(SAMPLE, 100),
            process: ProcessCpu::default(),
        };
        let mut b = a;
        let sys = b.system.as_mut().unwrap();
        sys.system += 100; // 1 s of busy CPU
        sys.idle += 100;
        sys.ctxt += 2000;
        b.process.sys_ns = 500_000_000;
        let c = cost(&a, &b, 1000, 1_000_000_000, Some(2e9));
        assert!((c.per_io.system_ns - 1e6).abs() < 1e-6);
        assert!((c.per_io.system_clocks.unwrap() - 2e6).abs() < 1e-3);
        assert!((c.per_io.process_ns - 5e5).abs() < 1e-6);
        assert!((c.per_io.system_ctx_switches - 2.0).abs() < 1e-9);
        assert!((c.system_busy_pct - 50.0).abs() < 1e-9);
    }

    #[test]
    fn no_per_io_cost_is_made_up_when_no_io_completed() {
        let a = CpuSnapshot {
            system: parse_proc_stat(SAMPLE, 100),
            process: ProcessCpu::default(),
        };
        let mut b = a;
        b.system.as_mut().unwrap().system += 100;
        b.process.sys_ns = 500_000_000;
        let none = cost(&a, &b, 0, 1_000_000_000, Some(2e9));
        assert_eq!(none.per_io.process_ns, 0.0, "0 I/Os: no per-I/O cost");
        assert_eq!(none.per_io.system_ns, 0.0);
        assert_eq!(none.per_io.system_clocks, None);
        assert_eq!(none.process.sys_ns, 500_000_000, "the totals stay");
    }

    #[test]
    fn live_snapshots_move_forward() {
        let a = CpuSnapshot::now();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        let b = CpuSnapshot::now();
        assert!(b.process.user_ns + b.process.sys_ns > a.process.user_ns + a.process.sys_ns);
        assert!(b.system.unwrap().total_ticks() >= a.system.unwrap().total_ticks());
    }
}
