//! CPU accounting: whole system and this process, each with its source.
//!
//! - **Process**: `getrusage(RUSAGE_SELF)`. Its user+system total is the
//!   scheduler's run time of every thread (`sum_exec_runtime`, ns), exact on
//!   every kernel; only its split between user and system is tick-sampled.
//! - **System**: wall time × CPUs − idle − iowait − steal, with idle and
//!   iowait from /proc/stat's per-CPU lines. On a NO_HZ kernel (nearly all
//!   today, and this project's machines: `/proc/timer_list` says `.nohz : 1`)
//!   idle and iowait are *measured* from timestamps when a CPU enters and
//!   leaves idle, so the figure is exact to /proc/stat's resolution: 1
//!   USER_HZ tick per field and CPU at each end of the window. The busy
//!   fields (user, system, softirq…) are instead sampled at ticks with
//!   `CONFIG_TICK_CPU_ACCOUNTING`, and miss bursts shorter than a tick: at
//!   QD 1 they can come out below the process's own exact figure. They are
//!   kept as `system_ticks_ns` for comparison.
//! - **Threads**: the run time of every live thread (`/proc/*/task/*/schedstat`,
//!   ns, `CONFIG_SCHED_INFO`), kernel threads included: a lower bound of the
//!   system's busy time, used as a cross-check; split between the kernel's
//!   threads and other processes', with their run-queue waits
//!   ([`crate::threads`]).

use crate::threads::{kernel_work, named, split, thread_times, Split, ThreadTimes};
use ssdready_core::result::{CpuCost, CpuSources, PerIo, ProcessCpu, SystemCpu};
use std::sync::OnceLock;
use std::time::Instant;

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

/// (cpu, idle, iowait, steal) ticks of each online CPU.
pub type IdleTicks = Vec<(u32, u64, u64, u64)>;

/// (cpu, idle, iowait, steal) ticks of each `cpuN` line of a /proc/stat
/// text (steal 0 where the line stops before it).
pub fn parse_per_cpu_idle(text: &str) -> IdleTicks {
    text.lines()
        .filter_map(|line| {
            let mut it = line.split_whitespace();
            let cpu = it.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = it.take(8).map_while(|x| x.parse().ok()).collect();
            (v.len() >= 5).then(|| (cpu, v[3], v[4], v.get(7).copied().unwrap_or(0)))
        })
        .collect()
}

/// Whether a `/proc/timer_list` text shows every CPU's tick stopped in idle
/// (NO_HZ active: idle time measured, not sampled). None when it says
/// nothing either way.
pub fn parse_nohz_active(timer_list: &str) -> Option<bool> {
    let mut seen = None;
    for line in timer_list.lines() {
        let t = line.trim();
        let v = if let Some(r) = t.strip_prefix(".nohz_mode") {
            r.trim_start_matches([' ', ':']).trim() != "0"
        } else if let Some(r) = t.strip_prefix(".nohz ") {
            r.trim_start_matches([' ', ':']).trim() != "0"
        } else {
            continue;
        };
        seen = Some(seen.unwrap_or(true) && v);
    }
    seen
}

/// Whether this kernel measures idle time (NO_HZ), read once from
/// /proc/timer_list (root only). None: unknown.
pub fn idle_is_measured() -> Option<bool> {
    static NOHZ: OnceLock<Option<bool>> = OnceLock::new();
    *NOHZ.get_or_init(|| {
        std::fs::read_to_string("/proc/timer_list")
            .ok()
            .and_then(|t| parse_nohz_active(&t))
    })
}

/// Read /proc/stat now: the aggregate and the per-CPU idle ticks.
pub fn system_now() -> Option<(SystemCpu, IdleTicks)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    Some((
        parse_proc_stat(&text, user_hz())?,
        parse_per_cpu_idle(&text),
    ))
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
            wait_ns: crate::threads::own_wait_ns().unwrap_or(0),
        },
        None => Default::default(),
    }
}

/// A snapshot of every source at one moment.
#[derive(Clone, Debug)]
pub struct CpuSnapshot {
    /// When it was taken.
    pub at: Instant,
    /// Whole system (None when /proc/stat is unreadable).
    pub system: Option<SystemCpu>,
    /// (cpu, idle, iowait, steal) ticks per online CPU.
    pub idle: IdleTicks,
    /// This process.
    pub process: ProcessCpu,
    /// Every live thread of other processes (None: not readable).
    pub threads: Option<ThreadTimes>,
    /// At a window's end: what the kernel's workers were seen doing
    /// during it ([`crate::threads::WorkSampler`]), by thread id.
    pub works_seen: std::collections::HashMap<u32, Vec<String>>,
}

impl CpuSnapshot {
    /// Take a snapshot.
    pub fn now() -> Self {
        let at = Instant::now();
        let (system, idle) = match system_now() {
            Some((s, i)) => (Some(s), i),
            None => (None, Vec::new()),
        };
        CpuSnapshot {
            at,
            system,
            idle,
            process: process_now(),
            threads: thread_times(),
            works_seen: Default::default(),
        }
    }
}

/// Busy CPU time of the window, ns, from wall time and the idle ticks of the
/// CPUs online at both ends, less steal; with its ± bound in ns, the source's
/// name and the number of CPUs.
fn busy_from_idle(
    start: &CpuSnapshot,
    end: &CpuSnapshot,
    tick_ns: f64,
    steal_ticks: u64,
    measured: Option<bool>,
) -> Option<(f64, f64, String, usize)> {
    let wall = end.at.saturating_duration_since(start.at).as_nanos() as f64;
    let mut idle_ticks = 0u64;
    let mut cpus = 0usize;
    for &(cpu, idle, iowait, _) in &end.idle {
        let Some(&(_, i0, w0, _)) = start.idle.iter().find(|x| x.0 == cpu) else {
            continue;
        };
        idle_ticks += idle.saturating_sub(i0) + iowait.saturating_sub(w0);
        cpus += 1;
    }
    if cpus == 0 || wall <= 0.0 {
        return None;
    }
    let capacity = wall * cpus as f64;
    let busy = (capacity - (idle_ticks + steal_ticks) as f64 * tick_ns).clamp(0.0, capacity);
    // Each of idle and iowait is truncated to a tick at both ends.
    let resolution = 2.0 * cpus as f64 * tick_ns;
    let (err, how) = match measured {
        Some(true) => (
            resolution,
            "wall time × CPUs − idle − iowait − steal; idle measured at idle entry/exit (NO_HZ, /proc/timer_list), read from /proc/stat",
        ),
        // Tick-sampled idle: add the sampling error (2σ of a binomial count).
        _ => (
            resolution + 2.0 * (busy / tick_ns + 1.0).sqrt() * tick_ns,
            "wall time × CPUs − idle − iowait − steal from /proc/stat; idle possibly tick-sampled (NO_HZ not confirmed), error includes sampling",
        ),
    };
    Some((busy, err, how.to_string(), cpus))
}

/// Each CPU's busy share of the wall time between two snapshots, percent,
/// from its idle and iowait ticks (CPUs online at both ends).
fn per_cpu_busy(start: &CpuSnapshot, end: &CpuSnapshot, tick_ns: f64) -> Vec<(u32, f64)> {
    per_cpu_share(start, end, tick_ns, |&(_, idle, iowait, _)| idle + iowait)
        .into_iter()
        .map(|(cpu, idle)| (cpu, 100.0 - idle))
        .collect()
}

/// The share of each online CPU's window the hypervisor ran something
/// else on it (steal), percent; empty when no CPU had any.
fn per_cpu_steal(start: &CpuSnapshot, end: &CpuSnapshot, tick_ns: f64) -> Vec<(u32, f64)> {
    let v = per_cpu_share(start, end, tick_ns, |t| t.3);
    if v.iter().all(|x| x.1 == 0.0) {
        Vec::new()
    } else {
        v
    }
}

/// For each CPU online at both ends, the share of the window its `ticks`
/// grew by, percent (0 to 100).
fn per_cpu_share(
    start: &CpuSnapshot,
    end: &CpuSnapshot,
    tick_ns: f64,
    ticks: impl Fn(&(u32, u64, u64, u64)) -> u64,
) -> Vec<(u32, f64)> {
    let wall = end.at.saturating_duration_since(start.at).as_nanos() as f64;
    if wall <= 0.0 {
        return Vec::new();
    }
    end.idle
        .iter()
        .filter_map(|e| {
            let s = start.idle.iter().find(|x| x.0 == e.0)?;
            let ns = ticks(e).saturating_sub(ticks(s)) as f64 * tick_ns;
            Some((e.0, (100.0 * ns / wall).clamp(0.0, 100.0)))
        })
        .collect()
}

/// Other threads' time during the window: the change of those alive at
/// both ends plus the whole time of those born in it, the kernel's apart.
fn thread_busy(start: &CpuSnapshot, end: &CpuSnapshot) -> Option<Split> {
    Some(split(start.threads.as_ref()?, end.threads.as_ref()?))
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

/// The process's CPU between two snapshots.
fn sub_process(a: &ProcessCpu, b: &ProcessCpu) -> ProcessCpu {
    ProcessCpu {
        user_ns: b.user_ns.saturating_sub(a.user_ns),
        sys_ns: b.sys_ns.saturating_sub(a.sys_ns),
        ctx_voluntary: b.ctx_voluntary.saturating_sub(a.ctx_voluntary),
        ctx_involuntary: b.ctx_involuntary.saturating_sub(a.ctx_involuntary),
    }
}

/// How busy all CPUs were: from the measured busy time over the window's
/// capacity, else from the ticks.
fn busy_pct(busy_ns: f64, capacity: f64, system: &SystemCpu) -> f64 {
    if capacity > 0.0 {
        100.0 * busy_ns / capacity
    } else if system.total_ticks() > 0 {
        100.0 * system.busy_ticks() as f64 / system.total_ticks() as f64
    } else {
        0.0
    }
}

/// A window without I/Os: no per-I/O cost is made up from the whole
/// window's.
fn without_per_io(cost: &mut CpuCost) {
    cost.per_io = PerIo::default();
    let s = &mut cost.sources;
    (
        s.system_error_ns,
        s.system_ticks_ns,
        s.steal_ns,
        s.threads_ns,
    ) = (0.0, 0.0, 0.0, None);
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
    let process = sub_process(&start.process, &end.process);
    let system = match (&start.system, &end.system) {
        (Some(a), Some(b)) => sub_sys(a, b),
        _ => SystemCpu::default(),
    };
    let tick_ns = if system.user_hz > 0 {
        1e9 / system.user_hz as f64
    } else {
        1e7
    };
    let n = ios.max(1) as f64;
    let ticks_busy_ns = system.busy_ticks().saturating_sub(system.steal) as f64 * tick_ns;
    let steal_ns = system.steal as f64 * tick_ns;
    let wall = end.at.saturating_duration_since(start.at).as_nanos() as f64;
    let (busy_ns, err_ns, how, cpus) =
        busy_from_idle(start, end, tick_ns, system.steal, idle_is_measured()).unwrap_or((
            ticks_busy_ns,
            2.0 * (ticks_busy_ns / tick_ns + 1.0).sqrt() * tick_ns,
            "/proc/stat tick-sampled busy fields (no per-CPU idle figures)".into(),
            0,
        ));
    let threads = thread_busy(start, end);
    let clocks = |ns: f64| tsc_hz.map(|hz| ns * hz / 1e9);
    let process_ns = (process.user_ns + process.sys_ns) as f64 / n;
    let system_ns = busy_ns / n;
    let capacity = wall * cpus as f64;
    let mut cost = CpuCost {
        ios,
        window_ns,
        process,
        system,
        system_busy_pct: busy_pct(busy_ns, capacity, &system),
        per_cpu_busy_pct: per_cpu_busy(start, end, tick_ns),
        per_cpu_steal_pct: per_cpu_steal(start, end, tick_ns),
        per_io: PerIo {
            process_ns,
            process_clocks: clocks(process_ns),
            system_ns,
            system_clocks: clocks(system_ns),
            process_ctx_switches: (process.ctx_voluntary + process.ctx_involuntary) as f64 / n,
            system_ctx_switches: system.ctxt as f64 / n,
            system_interrupts: system.intr as f64 / n,
            system_softirqs: system.softirqs as f64 / n,
        },
        sources: CpuSources {
            process: "getrusage(RUSAGE_SELF): the scheduler's run time of every thread of ssdready (exact)".into(),
            system: how,
            system_error_ns: err_ns / n,
            system_ticks_ns: ticks_busy_ns / n,
            steal_ns: steal_ns / n,
            threads_ns: threads
                .as_ref()
                .map(|t| (t.all_ns + process.user_ns + process.sys_ns) as f64 / n),
            threads_seen: threads.as_ref().map_or(0, |t| t.seen),
            kernel_threads_ns: threads.as_ref().map(|t| t.kernel_ns as f64 / n),
            kernel_threads_wait_ns: threads.as_ref().map(|t| t.kernel_wait_ns as f64 / n),
            other_processes_ns: threads.as_ref().map(|t| t.other_ns as f64 / n),
            busiest_threads: threads
                .as_ref()
                .map_or_else(Vec::new, |t| named(&t.busiest, wall)),
            kernel_work: threads
                .as_ref()
                .map_or_else(Vec::new, |t| kernel_work(&t.kernel, &end.works_seen, wall)),
        },
    };
    if ios == 0 {
        without_per_io(&mut cost);
    }
    cost
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

    fn snap(text: &str, at: Instant) -> CpuSnapshot {
        CpuSnapshot {
            at,
            system: parse_proc_stat(text, 100),
            idle: parse_per_cpu_idle(text),
            process: ProcessCpu::default(),
            threads: None,
            works_seen: Default::default(),
        }
    }

    const TWO_CPUS: &str = "cpu  100 5 50 1000 10 3 7 2 0 0\n\
        cpu0 50 2 25 500 5 1 3 1 0 0\ncpu1 50 3 25 500 5 2 4 1 0 0\n\
        intr 12345 0 0\nctxt 999\nsoftirq 4444 1 2\n";

    #[test]
    fn per_cpu_idle_is_parsed() {
        assert_eq!(
            parse_per_cpu_idle(TWO_CPUS),
            vec![(0, 500, 5, 1), (1, 500, 5, 1)]
        );
        assert_eq!(parse_per_cpu_idle("cpu3 1 2 3 4 5\n"), vec![(3, 4, 5, 0)]);
    }

    #[test]
    fn nohz_is_read_from_timer_list() {
        let on = "cpu: 0\n  .nohz           : 1\ncpu: 1\n  .nohz           : 1\n";
        assert_eq!(parse_nohz_active(on), Some(true));
        let old = "cpu: 0\n  .nohz_mode      : 2\ncpu: 1\n  .nohz_mode      : 0\n";
        assert_eq!(parse_nohz_active(old), Some(false));
        assert_eq!(parse_nohz_active("nothing here"), None);
    }

    /// The QD 1 case of a tick-accounted kernel: the busy fields saw 0.5 s of
    /// the 1 s two CPUs were not idle; the figure is the measured one.
    #[test]
    fn system_busy_comes_from_measured_idle_not_from_sampled_busy_ticks() {
        let t = Instant::now();
        let a = snap(TWO_CPUS, t);
        let mut b = snap(TWO_CPUS, t + std::time::Duration::from_secs(1));
        let sys = b.system.as_mut().unwrap();
        sys.system += 50; // the busy fields caught 0.5 s…
        sys.idle += 100;
        sys.ctxt += 2000;
        b.idle = vec![(0, 550, 5, 1), (1, 550, 5, 1)]; // …but 1 s of 2 was not idle
        b.process.sys_ns = 500_000_000;
        let c = cost(&a, &b, 1000, 1_000_000_000, Some(2e9));
        assert!(
            (c.per_io.system_ns - 1e6).abs() < 1.0,
            "{}",
            c.per_io.system_ns
        );
        assert!((c.per_io.system_clocks.unwrap() - 2e6).abs() < 1e1);
        assert!((c.sources.system_ticks_ns - 5e5).abs() < 1e-6);
        assert!((c.per_io.process_ns - 5e5).abs() < 1e-6);
        assert!((c.per_io.system_ctx_switches - 2.0).abs() < 1e-9);
        assert!((c.system_busy_pct - 50.0).abs() < 1e-6);
        assert!(c.sources.system.contains("idle"));
    }

    #[test]
    fn steal_is_not_busy_time_of_this_machine() {
        let t = Instant::now();
        let a = snap(TWO_CPUS, t);
        let mut b = snap(TWO_CPUS, t + std::time::Duration::from_secs(1));
        b.system.as_mut().unwrap().steal += 20;
        // CPU 0 had all 20 ticks of the steal.
        b.idle = vec![(0, 550, 5, 21), (1, 550, 5, 1)];
        let c = cost(&a, &b, 1000, 1_000_000_000, None);
        assert!(
            (c.per_io.system_ns - 8e5).abs() < 1.0,
            "{}",
            c.per_io.system_ns
        );
        assert!((c.sources.steal_ns - 2e5).abs() < 1e-6);
        assert_eq!(c.per_cpu_steal_pct.len(), 2);
        assert!((c.per_cpu_steal_pct[0].1 - 20.0).abs() < 1e-6);
        assert_eq!(c.per_cpu_steal_pct[1].1, 0.0);
        // Busy is what was not idle: the stolen time is in it.
        assert!((c.per_cpu_busy_pct[0].1 - 50.0).abs() < 1e-6);
    }

    #[test]
    fn no_per_io_cost_is_made_up_when_no_io_completed() {
        let t = Instant::now();
        let a = snap(TWO_CPUS, t);
        let mut b = snap(TWO_CPUS, t + std::time::Duration::from_secs(1));
        b.system.as_mut().unwrap().system += 100;
        b.process.sys_ns = 500_000_000;
        let none = cost(&a, &b, 0, 1_000_000_000, Some(2e9));
        assert_eq!(none.per_io.process_ns, 0.0, "0 I/Os: no per-I/O cost");
        assert_eq!(none.per_io.system_ns, 0.0);
        assert_eq!(none.per_io.system_clocks, None);
        assert_eq!(none.sources.system_error_ns, 0.0);
        assert_eq!(none.process.sys_ns, 500_000_000, "the totals stay");
    }

    #[test]
    fn thread_run_times_count_the_born_and_the_changed() {
        use std::collections::HashMap;
        let t = Instant::now();
        let mut a = snap(TWO_CPUS, t);
        let mut b = snap(TWO_CPUS, t);
        let t = |run_ns| crate::threads::ThreadTime {
            pid: 1,
            run_ns,
            ..Default::default()
        };
        a.threads = Some(HashMap::from([(1, t(100)), (2, t(50)), (3, t(7))]));
        b.threads = Some(HashMap::from([(1, t(300)), (2, t(50)), (4, t(40))]));
        let s = thread_busy(&a, &b).unwrap();
        assert_eq!((s.all_ns, s.seen), (240, 3));
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

    /// The complaint: whole-system CPU below the process's own. A
    /// busy loop of ~0.3 s: the system figure (with its error) covers it.
    #[test]
    fn system_busy_is_never_below_the_process_own() {
        let a = CpuSnapshot::now();
        let until = Instant::now() + std::time::Duration::from_millis(300);
        let mut x = 0u64;
        while Instant::now() < until {
            for i in 0..10_000u64 {
                x = x.wrapping_add(i * i);
            }
        }
        std::hint::black_box(x);
        let b = CpuSnapshot::now();
        let c = cost(&a, &b, 1, 0, None);
        assert!(
            c.per_io.system_ns + c.sources.system_error_ns >= c.per_io.process_ns,
            "system {} ± {} < process {} ({})",
            c.per_io.system_ns,
            c.sources.system_error_ns,
            c.per_io.process_ns,
            c.sources.system
        );
        if let Some(t) = c.sources.threads_ns {
            assert!(t >= c.per_io.process_ns * 0.95, "threads {t} < process");
        }
    }
}
