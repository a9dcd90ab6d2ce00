//! A run's figures, as the study uses them: throughput, latency
//! percentiles, CPU per I/O with its source and the submitting threads'
//! own busy share, the latency decomposition, the kernel profile by layer,
//! page-cache hits and the emulator's die utilisation — taken from the
//! measured jobs of a `RunResult` (every job but the emulator's `fill`).

use serde::{Deserialize, Serialize};
use ssdready_core::hist::Histogram;
use ssdready_core::result::RunResult;

/// The name of the fill job a run on an emulator starts with.
pub const FILL_JOB: &str = "fill";

/// The measured part of one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PointSummary {
    pub ios: u64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    pub lat_p999_ns: u64,
    pub window_s: f64,
    pub cpu: Option<CpuSummary>,
    pub decomposition: Option<DecompSummary>,
    pub profile: Option<ProfileSummary>,
    pub disk: Option<DiskSummary>,
    /// Emulator: the busiest die's (or DRAM unit's) busy share, percent
    /// (the window includes the fill).
    pub die_util_max_pct: Option<f64>,
    /// Cross-checks of the run whose sources disagreed (their figures are
    /// not to be trusted).
    pub checks_disagree: Vec<String>,
    pub warnings: Vec<String>,
    pub interrupted: bool,
    /// The emulated drive's daemon over this run (kernel drive only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
}

/// CPU cost per I/O.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuSummary {
    pub process_ns_per_io: f64,
    pub system_ns_per_io: f64,
    pub process_clocks_per_io: Option<f64>,
    pub system_clocks_per_io: Option<f64>,
    /// Busy share of all CPUs, percent.
    pub system_busy_pct: f64,
    /// How the system figure was measured (`cpu.sources.system`).
    pub source: String,
    /// The busiest submitting thread's own CPU time over the window,
    /// percent of one core (getrusage per thread).
    pub thread_busy_max_pct: Option<f64>,
    pub thread_busy_mean_pct: Option<f64>,
    pub ctx_switches_per_io: f64,
    pub interrupts_per_io: f64,
    /// Busy share of each CPU over the window, percent (CPU, busy).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu_busy_pct: Vec<(u32, f64)>,
    /// Of each CPU's window, the share the hypervisor took (steal),
    /// percent: part of its busy share, nobody's work on this machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu_steal_pct: Vec<(u32, f64)>,
    /// The submitting thread that waited most on a run queue for a CPU:
    /// its wait, percent of the time it was ready to run (running or
    /// waiting; `/proc/thread-self/schedstat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_wait_max_pct: Option<f64>,
    /// The submitting threads' run-queue wait as a share of the run: each
    /// thread's wait over its measured window (the second field of
    /// `/proc/thread-self/schedstat`, read as the window opens and
    /// closes), summed, over the windows summed, percent — how much of
    /// the run a submitting thread spent ready to run with no CPU to run
    /// on. Absent where no thread waited at all (a kernel without
    /// schedstat: a thread that runs for a whole window always waits a
    /// few µs on a wake-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_wait_run_pct: Option<f64>,
    /// The kernel's threads (the loop device's worker and other work done
    /// for the I/O on a quiet machine): their run time, and their wait on
    /// a run queue, ns per I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_threads_ns_per_io: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_threads_wait_ns_per_io: Option<f64>,
    /// Other processes' threads' run time, ns per I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_processes_ns_per_io: Option<f64>,
    /// The busiest threads outside ssdready.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busiest_threads: Vec<ssdready_core::result::ThreadUse>,
    /// The kernel's threads by the work they do (md's, device-mapper's,
    /// the loop devices'), busiest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_work: Vec<ssdready_core::result::KernelWork>,
}

impl CpuSummary {
    /// The busiest share among `cpus` (all CPUs when empty or when the run
    /// has no per-CPU figures: then the whole system's), percent.
    pub fn busy_of(&self, cpus: &[u32]) -> f64 {
        mean_of(&self.per_cpu_busy_pct, cpus).unwrap_or(self.system_busy_pct)
    }

    /// The mean share the hypervisor took (steal) of `cpus` (all CPUs when
    /// empty), percent; 0 where no CPU had any.
    pub fn steal_of(&self, cpus: &[u32]) -> f64 {
        mean_of(&self.per_cpu_steal_pct, cpus).unwrap_or(0.0)
    }
}

/// The mean of the per-CPU figures of `cpus` (every CPU when empty); None
/// when there are none.
fn mean_of(per_cpu: &[(u32, f64)], cpus: &[u32]) -> Option<f64> {
    let of: Vec<f64> = per_cpu
        .iter()
        .filter(|(c, _)| cpus.is_empty() || cpus.contains(c))
        .map(|x| x.1)
        .collect();
    (!of.is_empty()).then(|| of.iter().sum::<f64>() / of.len() as f64)
}

/// The latency split along the I/O path (`--decompose`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DecompSummary {
    /// (part, mean ns, share of the app-observed mean %).
    pub parts: Vec<(String, f64, f64)>,
    /// Everything but the driver and device, percent.
    pub platform_share_pct: Option<f64>,
    pub device_ns: Option<f64>,
    pub completion_share_pct: Option<f64>,
    /// Mean time queued in the I/O scheduler, for the I/Os that queued.
    pub scheduler_queue_ns: Option<f64>,
    /// I/Os joined with the kernel's record, percent.
    pub joined_pct: Option<f64>,
    pub note: Option<String>,
}

/// The kernel profile by layer (`--profile`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileSummary {
    /// (layer, share of busy %, ns per I/O, clocks per I/O), busiest first.
    pub layers: Vec<(String, f64, f64, Option<f64>)>,
    pub busy_ns_per_io: f64,
    /// Samples in lock functions (spinlocks, mutexes, futexes), percent of
    /// busy samples: the locks' callers' layers hold this time too.
    pub lock_share_pct: f64,
    pub lock_functions: Vec<String>,
}

/// What the block layer saw of the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskSummary {
    pub name: String,
    pub util_pct: f64,
    pub read_bytes: u64,
    /// Reads the application made that never reached the device, percent.
    pub cache_hit_pct: Option<f64>,
    pub block_mean_ns: Option<f64>,
    /// Requests the device completed (reads and writes) and their bytes,
    /// from its own counters (`/sys/block/X/stat`).
    #[serde(default)]
    pub ios: u64,
    #[serde(default)]
    pub bytes: u64,
    /// I/Os and bytes the application completed on it.
    #[serde(default)]
    pub app_ios: u64,
    #[serde(default)]
    pub app_bytes: u64,
    /// Requests in the block layer and below on average (time in queue
    /// over the window: Little's law at the device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<f64>,
    /// Bytes the study's process read through the block layer in the
    /// window (`/proc/self/io`), where it reached this device alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_read_bytes: Option<u64>,
}

impl DiskSummary {
    /// Device requests per application I/O (None without either count).
    pub fn ios_per_app_io(&self) -> Option<f64> {
        (self.app_ios > 0 && self.ios > 0).then(|| self.ios as f64 / self.app_ios as f64)
    }
    /// The mean time per request in the block layer and below, only where
    /// the device counted the study's I/Os (within 2 %: no other I/O on
    /// it, no split or merged requests): a device time is never taken from
    /// requests the study did not issue.
    pub fn own_block_mean_ns(&self) -> Option<f64> {
        let (a, b) = (self.ios as f64, self.app_ios as f64);
        (b > 0.0 && (a - b).abs() <= 0.02 * b)
            .then_some(self.block_mean_ns)
            .flatten()
    }
    /// The bytes the device read beyond what the study's process read
    /// through the block layer (its file system's reads for it included),
    /// where they pass a tenth of the process's and 1 MiB: other
    /// processes' reads (or the kernel's) in the window. None where the
    /// process's reads were not read.
    pub fn others_read_bytes(&self) -> Option<u64> {
        let own = self.own_read_bytes?;
        let extra = self.read_bytes.saturating_sub(own);
        (extra > (own / 10).max(1 << 20)).then_some(extra)
    }
    /// Device bytes per application byte.
    pub fn bytes_per_app_byte(&self) -> Option<f64> {
        (self.app_bytes > 0 && self.bytes > 0).then(|| self.bytes as f64 / self.app_bytes as f64)
    }
}

const LOCK_MARKS: &[&str] = &[
    "spin_lock",
    "queued_spin",
    "native_queued",
    "mutex_lock",
    "__mutex",
    "futex",
    "lock_contended",
    "rwsem",
    "osq_lock",
];

/// Whether a function name is a lock's.
pub fn is_lock(symbol: &str) -> bool {
    LOCK_MARKS.iter().any(|m| symbol.contains(m))
}

impl PointSummary {
    /// The measured jobs of `r` (all but the fill job).
    pub fn from_result(r: &RunResult) -> PointSummary {
        let jobs: Vec<_> = r.jobs.iter().filter(|j| j.name != FILL_JOB).collect();
        let mut s = PointSummary {
            interrupted: r.interrupted,
            warnings: r.warnings.clone(),
            ..Default::default()
        };
        let mut lat = Histogram::new();
        let mut lat_sum = 0f64;
        let mut window = 0u64;
        for j in &jobs {
            window = window.max(j.measured_ns);
            for (name, d) in j.dirs() {
                s.ios += d.ios;
                s.iops += d.iops;
                s.bw_bytes_per_s += d.bw_bytes_per_s;
                match name {
                    "read" => s.read_iops += d.iops,
                    "write" => s.write_iops += d.iops,
                    _ => {}
                }
                lat_sum += d.lat.mean_ns * d.lat.n as f64;
            }
            for d in j.raw.dirs.iter().flatten() {
                lat.merge(&d.lat);
            }
        }
        s.window_s = window as f64 / 1e9;
        if s.ios > 0 {
            s.lat_mean_ns = lat_sum / s.ios as f64;
        }
        if lat.count() > 0 {
            s.lat_p50_ns = lat.percentile(50.0);
            s.lat_p99_ns = lat.percentile(99.0);
            s.lat_p999_ns = lat.percentile(99.9);
        } else if let Some((_, d)) = jobs.first().and_then(|j| j.dirs().next()) {
            let p = |q: f64| {
                d.lat
                    .percentiles
                    .iter()
                    .find(|(x, _)| (*x - q).abs() < 1e-9)
                    .map_or(0, |(_, v)| *v)
            };
            (s.lat_p50_ns, s.lat_p99_ns, s.lat_p999_ns) = (p(50.0), p(99.0), p(99.9));
        }
        let phase = jobs.first().and_then(|j| r.phases.get(j.phase));
        if let Some(ph) = phase {
            s.cpu = ph.cpu.as_ref().map(|c| cpu_summary(c, &jobs));
            s.decomposition = ph.decomposition.as_ref().map(decomp_summary);
            s.profile = ph.profile.as_ref().map(profile_summary);
            let window_ms = s.window_s * 1e3;
            s.disk = ph.disks.first().map(|d| DiskSummary {
                name: d.name.clone(),
                util_pct: d.util_pct,
                read_bytes: d.read_sectors * 512,
                cache_hit_pct: cache_hits(d.read_sectors * 512, &jobs),
                block_mean_ns: d.block_mean_ns,
                ios: d.read_ios + d.write_ios,
                bytes: d.dev_bytes(),
                app_ios: d.app_ios,
                app_bytes: d.app_bytes,
                in_flight: (window_ms > 0.0).then(|| d.time_in_queue_ms as f64 / window_ms),
                own_read_bytes: d.own_read_bytes,
            });
            s.checks_disagree = ph
                .checks
                .iter()
                .filter(|c| !c.agree)
                .map(|c| c.describe())
                .collect();
        }
        s.die_util_max_pct = r
            .emulator
            .as_ref()
            .and_then(|e| e.die_utilisation_pct.iter().copied().reduce(f64::max));
        s
    }
}

fn cache_hits(device_bytes: u64, jobs: &[&ssdready_core::result::JobResult]) -> Option<f64> {
    let app: u64 = jobs
        .iter()
        .filter_map(|j| j.read.as_ref())
        .map(|d| d.bytes)
        .sum();
    (app > 0).then(|| (100.0 * (1.0 - device_bytes as f64 / app as f64)).clamp(0.0, 100.0))
}

fn cpu_summary(
    c: &ssdready_core::result::CpuCost,
    jobs: &[&ssdready_core::result::JobResult],
) -> CpuSummary {
    let workers = || {
        jobs.iter()
            .flat_map(|j| j.raw_workers.iter())
            .filter(|w| w.measured_ns > 0)
    };
    let busy: Vec<f64> = workers()
        .map(|w| 100.0 * (w.thread_cpu.user_ns + w.thread_cpu.sys_ns) as f64 / w.measured_ns as f64)
        .collect();
    let wait = workers()
        .map(|w| {
            let t = &w.thread_cpu;
            let ready = (t.user_ns + t.sys_ns + t.wait_ns).max(1);
            100.0 * t.wait_ns as f64 / ready as f64
        })
        .reduce(f64::max);
    let (waited, window) = workers().fold((0u64, 0u64), |(w, m), x| {
        (w + x.thread_cpu.wait_ns, m + x.measured_ns)
    });
    CpuSummary {
        process_ns_per_io: c.per_io.process_ns,
        system_ns_per_io: c.per_io.system_ns,
        process_clocks_per_io: c.per_io.process_clocks,
        system_clocks_per_io: c.per_io.system_clocks,
        system_busy_pct: c.system_busy_pct,
        source: c.sources.system.clone(),
        thread_busy_max_pct: busy.iter().copied().reduce(f64::max),
        thread_busy_mean_pct: (!busy.is_empty())
            .then(|| busy.iter().sum::<f64>() / busy.len() as f64),
        ctx_switches_per_io: c.per_io.system_ctx_switches,
        interrupts_per_io: c.per_io.system_interrupts,
        per_cpu_busy_pct: c.per_cpu_busy_pct.clone(),
        per_cpu_steal_pct: c.per_cpu_steal_pct.clone(),
        thread_wait_max_pct: wait,
        thread_wait_run_pct: (waited > 0).then(|| 100.0 * waited as f64 / window.max(1) as f64),
        kernel_threads_ns_per_io: c.sources.kernel_threads_ns,
        kernel_threads_wait_ns_per_io: c.sources.kernel_threads_wait_ns,
        other_processes_ns_per_io: c.sources.other_processes_ns,
        busiest_threads: c.sources.busiest_threads.clone(),
        kernel_work: c.sources.kernel_work.clone(),
    }
}

fn decomp_summary(d: &ssdready_core::result::Decomposition) -> DecompSummary {
    let share = |name: &str| d.parts.iter().find(|p| p.part == name);
    let device = share("driver and device");
    DecompSummary {
        parts: d
            .parts
            .iter()
            .map(|p| (p.part.clone(), p.mean_ns, p.share_pct))
            .collect(),
        platform_share_pct: device.map(|p| 100.0 - p.share_pct),
        device_ns: device.map(|p| p.mean_ns),
        completion_share_pct: share("completion to the app").map(|p| p.share_pct),
        scheduler_queue_ns: d
            .per_io
            .as_ref()
            .and_then(|p| p.scheduler_queue.as_ref())
            .map(|q| q.mean_ns),
        joined_pct: d.per_io.as_ref().and_then(|p| {
            let n = p.matched + p.unmatched;
            (n > 0).then(|| 100.0 * p.matched as f64 / n as f64)
        }),
        note: d.note.clone(),
    }
}

fn profile_summary(p: &ssdready_core::result::ProfileReport) -> ProfileSummary {
    let mut layers: Vec<_> = p
        .layers
        .iter()
        .filter(|l| l.layer != "idle")
        .map(|l| {
            (
                l.layer.clone(),
                l.share_of_busy_pct,
                l.ns_per_io,
                l.clocks_per_io,
            )
        })
        .collect();
    layers.sort_by(|a, b| b.1.total_cmp(&a.1));
    let locks: Vec<_> = p
        .top_functions
        .iter()
        .filter(|(sym, _, _)| is_lock(sym))
        .collect();
    let lock_samples: u64 = locks.iter().map(|(_, _, n)| n).sum();
    ProfileSummary {
        layers,
        busy_ns_per_io: p.busy_ns_per_io,
        lock_share_pct: if p.busy_samples > 0 {
            100.0 * lock_samples as f64 / p.busy_samples as f64
        } else {
            0.0
        },
        lock_functions: locks.iter().map(|(s, _, _)| s.clone()).collect(),
    }
}

/// Lateness, percent of device time, above which the transport is named.
pub const BOUND_PCT: f64 = 3.0;

/// The daemon's figures over the study.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Transport {
    /// `fuse+loop` or `ublk`.
    pub name: String,
    pub ios: u64,
    /// Modelled completion − arrival: what the device took.
    pub device_ns_mean: f64,
    /// Reply start − modelled completion: the emulator's own error.
    pub late_ns_mean: f64,
    pub late_ns_max: u64,
    /// The reply's system call (on FUSE it runs the kernel's completion).
    pub reply_ns_mean: f64,
    /// The daemon threads' CPU per I/O (not counted as the platform's).
    pub daemon_cpu_ns_per_io: f64,
    /// The daemon's serving threads (0: unknown).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub threads: u64,
    /// Of `daemon_cpu_ns_per_io`, the time its threads spun for a
    /// completion due soon: CPU time, but not work.
    #[serde(default)]
    pub spin_ns_per_io: f64,
    /// Its serving threads' time ready to run but waiting on a run queue
    /// per I/O, ns, and as a percent of their ready time (their CPU and
    /// that wait): other work's hold on the daemon. Absent where the
    /// daemon did not read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ns_per_io: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_pct: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Transport {
    /// Lateness as a percent of device time (None without device time).
    pub fn late_pct(&self) -> Option<f64> {
        (self.device_ns_mean > 0.0).then(|| 100.0 * self.late_ns_mean / self.device_ns_mean)
    }

    /// Of the daemon threads' ready time, the share `wait_ns_per_io` is,
    /// percent (None without the wait or any ready time).
    pub fn ready_wait_pct(&self) -> Option<f64> {
        let (run, wait) = (self.daemon_cpu_ns_per_io.max(0.0), self.wait_ns_per_io?);
        (run + wait > 0.0).then(|| 100.0 * wait / (run + wait))
    }

    /// Whether the daemon failed to keep the model's timing.
    pub fn bound(&self) -> bool {
        self.late_pct().is_some_and(|p| p > BOUND_PCT)
    }
}

/// `4k`, `512`, `1m`.
pub fn fmt_bs(bs: u64) -> String {
    if bs >= 1 << 20 && bs.is_multiple_of(1 << 20) {
        format!("{}m", bs >> 20)
    } else if bs >= 1024 && bs.is_multiple_of(1024) {
        format!("{}k", bs >> 10)
    } else {
        bs.to_string()
    }
}

/// A thread that ran at least this many CPUs' worth of a window is busy:
/// named among the busiest, weighed for its priority and group.
pub const BUSY_CPUS: f64 = 0.05;

/// A busy thread of another process (not the kernel's): [`BUSY_CPUS`].
pub fn busy_other(t: &ssdready_core::result::ThreadUse) -> bool {
    !t.kernel && t.cpus >= BUSY_CPUS
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::*;

    #[test]
    fn the_fill_job_is_not_measured() {
        let dir = |ios: u64, iops: f64| DirResult {
            ios,
            iops,
            lat: ssdready_core::hist::LatSummary {
                n: ios,
                mean_ns: 100.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let r = RunResult {
            jobs: vec![
                JobResult {
                    name: FILL_JOB.into(),
                    write: Some(dir(10, 5.0)),
                    ..Default::default()
                },
                JobResult {
                    name: "m".into(),
                    phase: 0,
                    read: Some(dir(1000, 500.0)),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let s = PointSummary::from_result(&r);
        assert_eq!(s.ios, 1000);
        assert_eq!(s.iops, 500.0);
        assert_eq!(s.write_iops, 0.0);
        assert_eq!(s.lat_mean_ns, 100.0);
    }

    #[test]
    fn the_submitting_threads_run_queue_wait_is_a_share_of_their_run() {
        // Two workers over 1 s each: one waited 50 ms on a run queue, the
        // other 250 ms (and ran 400 ms: its share of its ready time, 38 %,
        // is not the figure).
        let worker = |wait_ms: u64, run_ms: u64| ssdready_core::stats::WorkerStats {
            measured_ns: 1_000_000_000,
            thread_cpu: ssdready_core::stats::ThreadCpu {
                user_ns: run_ms * 1_000_000,
                wait_ns: wait_ms * 1_000_000,
                ..Default::default()
            },
            ..Default::default()
        };
        let job = JobResult {
            name: "m".into(),
            raw_workers: vec![worker(50, 300), worker(250, 400)],
            ..Default::default()
        };
        let c = cpu_summary(&CpuCost::default(), &[&job]);
        assert_eq!(c.thread_wait_run_pct, Some(15.0));
        assert!((c.thread_wait_max_pct.unwrap() - 100.0 * 250.0 / 650.0).abs() < 1e-9);
        // No thread waited at all: no schedstat to read, not a quiet run.
        let job = JobResult {
            name: "m".into(),
            raw_workers: vec![worker(0, 300)],
            ..Default::default()
        };
        let c = cpu_summary(&CpuCost::default(), &[&job]);
        assert_eq!(c.thread_wait_run_pct, None);
    }

    #[test]
    fn lock_functions_are_recognised() {
        assert!(is_lock("native_queued_spin_lock_slowpath"));
        assert!(is_lock(
            "std::sys::sync::mutex::futex::Mutex::lock_contended"
        ));
        assert!(!is_lock("blk_mq_submit_bio"));
    }
}
