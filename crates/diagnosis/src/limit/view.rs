//! One run as the candidates weigh it: its rate, what it kept in flight,
//! how busy its thread, its CPUs and its CPU group were, where its I/Os
//! waited (the device's own counters), and the drive's daemon where there
//! is one (its CPU, and its threads' wait for one); beside it, what the
//! whole study shares (the target, the figures, the caps, the instrumented
//! run's profile and decomposition).

use super::caps::Caps;
use crate::figures::curve::CurveFigures;
use crate::figures::sweeps::Comparisons;
use ssdready_measured::limits::counters::CpuDelta;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile};
use ssdready_measured::summary::{DecompSummary, DiskSummary, ProfileSummary};

/// What the causes weigh of a study's figures: its curve, and the sweeps'
/// comparisons in turns.
#[derive(Clone, Copy)]
pub struct Weighed<'a> {
    pub curve: CurveFigures<'a>,
    pub comparisons: &'a Comparisons,
}

/// What every run of the study shares.
pub struct Shared<'a> {
    pub target: &'a TargetProfile,
    pub figures: CurveFigures<'a>,
    pub comparisons: &'a Comparisons,
    pub caps: &'a Caps,
    pub machine: &'a Machine,
    /// The instrumented run at the peak's depth: its profile and its
    /// latency decomposition (one run: not judged per repeat).
    pub profile: Option<&'a ProfileSummary>,
    pub decomposition: Option<&'a DecompSummary>,
    pub instrumented: Option<&'a RunRecord>,
    /// A run of the deepest point of the curve, where it is deeper than the
    /// peak: what the device held once the rate had stopped growing.
    pub deepest: Option<&'a RunRecord>,
    /// Where the target is a loop device over a file: the disk under it
    /// giving within its runs what it gives read directly, as evidence
    /// ([`super::stacked`]).
    pub loop_disk_full: Option<String>,
}

/// One run at the peak's depth.
pub struct View<'a> {
    pub run: &'a RunRecord,
    pub iops: f64,
    pub bw: f64,
    /// I/Os the study kept in flight (depth × threads).
    pub in_flight: u32,
    /// The busiest submitting thread's own CPU, percent of one core.
    pub thread_busy: Option<f64>,
    /// The CPUs the study may use: how busy, percent (all CPUs when it
    /// may use them all).
    pub cpus_busy: Option<f64>,
    /// Of those CPUs' time, the share the hypervisor took (steal),
    /// percent: in their busy share, but nobody's work on this machine.
    pub cpus_steal: f64,
    /// How many CPUs those are.
    pub cpus_n: u32,
    /// CPUs' worth of time ssdready's process used.
    pub process_cpus: Option<f64>,
    /// The drive's daemon's serving threads: busy with work and spinning,
    /// percent of their time, and how many (behind the kernel).
    pub daemon_busy: Option<f64>,
    pub daemon_spin: Option<f64>,
    pub daemon_threads: Option<u64>,
    /// Of the time the daemon's serving threads were ready to run, the
    /// share they waited on a run queue, percent: on the I/O's path too.
    pub daemon_wait: Option<f64>,
    pub disk: Option<&'a DiskSummary>,
    /// The CPU group whose quota is the smallest, over the run.
    pub group: Option<&'a CpuDelta>,
    /// CPUs' worth of time the kernel's threads used (on a quiet machine,
    /// work done for the study's I/O: the loop device's worker…).
    pub kernel_cpus: Option<f64>,
    /// CPUs' worth of time other processes used (the drive's daemon, part
    /// of the apparatus, not among them).
    pub others_cpus: Option<f64>,
    /// Of the time the I/O's threads were ready to run, the share they
    /// waited on a run queue, percent: the submitting thread that waited
    /// most, and the kernel's threads together.
    pub thread_wait: Option<f64>,
    pub kernel_wait: Option<f64>,
    /// Of the run, the share the study's own threads on the I/O's path
    /// spent ready to run with no CPU to run on, percent per thread: the
    /// submitting threads' (`run_wait`) and the drive's daemon's serving
    /// threads' (their run-queue wait per I/O, times the rate, over their
    /// number). The kernel's threads are not among them: on a machine
    /// with few CPUs they wait for each other and for the submitting
    /// thread as much without other work as with it.
    pub thread_wait_run: Option<f64>,
    pub daemon_wait_run: Option<f64>,
    /// The busiest threads outside ssdready.
    pub busiest: &'a [ssdready_core::result::ThreadUse],
}

impl<'a> View<'a> {
    /// The view of run `r` under the caps `caps` on a machine of
    /// `online` CPUs.
    pub fn of(r: &'a RunRecord, caps: &Caps, online: u32) -> View<'a> {
        let s = &r.summary;
        let cpu = s.cpu.as_ref();
        let allowed: &[u32] = caps.cpus.as_ref().map_or(&[], |c| c.cpus.as_slice());
        let daemon = |per_io: fn(&ssdready_measured::summary::Transport) -> f64| {
            let t = s.transport.as_ref()?;
            (t.threads > 0 && s.iops > 0.0)
                .then(|| 100.0 * per_io(t).max(0.0) * s.iops / 1e9 / t.threads as f64)
        };
        View {
            run: r,
            iops: s.iops,
            bw: s.bw_bytes_per_s,
            in_flight: r.workload.qd.max(1) * r.workload.threads.max(1),
            thread_busy: cpu.and_then(|c| c.thread_busy_max_pct),
            cpus_busy: cpu.map(|c| c.busy_of(allowed)),
            cpus_steal: cpu.map_or(0.0, |c| c.steal_of(allowed)),
            cpus_n: if allowed.is_empty() {
                online
            } else {
                allowed.len() as u32
            },
            // No process CPU at all is a run without the figure, not an idle one.
            process_cpus: cpu
                .map(|c| c.process_ns_per_io * s.iops / 1e9)
                .filter(|c| *c > 0.0),
            daemon_busy: daemon(|t| t.daemon_cpu_ns_per_io - t.spin_ns_per_io),
            daemon_spin: daemon(|t| t.spin_ns_per_io),
            daemon_threads: s.transport.as_ref().map(|t| t.threads).filter(|n| *n > 0),
            daemon_wait: s
                .transport
                .as_ref()
                .and_then(|t| t.wait_pct.or_else(|| t.ready_wait_pct())),
            disk: s.disk.as_ref(),
            group: r
                .context
                .as_ref()
                .and_then(|c| c.cgroups.as_ref())
                .and_then(|c| c.quota_level()),
            kernel_cpus: cpu
                .and_then(|c| c.kernel_threads_ns_per_io)
                .map(|ns| ns * s.iops / 1e9),
            others_cpus: cpu.and_then(|c| c.other_processes_ns_per_io).map(|ns| {
                let daemon = s.transport.as_ref().map_or(0.0, |t| t.daemon_cpu_ns_per_io);
                ((ns - daemon) * s.iops / 1e9).max(0.0)
            }),
            thread_wait: cpu.and_then(|c| c.thread_wait_max_pct),
            kernel_wait: cpu.and_then(|c| {
                let (run, wait) = (
                    c.kernel_threads_ns_per_io?,
                    c.kernel_threads_wait_ns_per_io?,
                );
                (run + wait > 0.0).then(|| 100.0 * wait / (run + wait))
            }),
            thread_wait_run: cpu.and_then(run_wait),
            daemon_wait_run: s.transport.as_ref().and_then(|t| {
                let w = t.wait_ns_per_io?;
                (t.threads > 0).then(|| 100.0 * w * s.iops / 1e9 / t.threads as f64)
            }),
            busiest: cpu.map_or(&[], |c| c.busiest_threads.as_slice()),
        }
    }

    /// Of the run, the share the study's own thread on the I/O's path that
    /// waited most (a submitting thread, or a serving thread of the
    /// drive's daemon) spent waiting on a run queue for a CPU, percent;
    /// None where neither was read.
    pub fn io_wait(&self) -> Option<f64> {
        self.thread_wait_run
            .into_iter()
            .chain(self.daemon_wait_run)
            .reduce(f64::max)
    }

    /// CPUs' worth of time the drive's daemon used (behind the kernel).
    pub fn daemon_cpus(&self) -> f64 {
        self.run
            .summary
            .transport
            .as_ref()
            .map_or(0.0, |t| t.daemon_cpu_ns_per_io * self.iops / 1e9)
    }

    /// CPUs' worth of the I/O's own work: ssdready's threads, the kernel's
    /// threads and the drive's daemon (None without ssdready's own figure).
    pub fn io_cpus(&self) -> Option<f64> {
        Some(self.process_cpus? + self.kernel_cpus.unwrap_or(0.0) + self.daemon_cpus())
    }

    /// CPUs' worth of busy time on the CPUs the study may use that this
    /// machine's work took: their busy share less the hypervisor's steal.
    pub(super) fn guest_busy_cpus(&self) -> Option<f64> {
        Some((self.cpus_busy? - self.cpus_steal).max(0.0) / 100.0 * self.cpus_n as f64)
    }

    /// Of the busy time on the CPUs the study may use, the share other
    /// processes took, percent: from their own threads' run time where it
    /// was read, else what the I/O's own work leaves.
    pub fn others_share(&self) -> Option<f64> {
        let busy = self.guest_busy_cpus()?;
        if busy <= 0.0 {
            return None;
        }
        match self.others_cpus {
            Some(o) => Some((100.0 * o / busy).min(100.0)),
            None => self.own_share().map(|o| 100.0 - o),
        }
    }

    /// The share of its ready time the submitting thread that waited most
    /// spent on a run queue, percent (None where the kernel gave no
    /// waits). The kernel's threads are left out: on a machine with fewer
    /// CPUs than the I/O's runnable threads they wait for each other, not
    /// for other work.
    /// The busiest submitting thread's CPU, percent of the time the
    /// hypervisor left the CPUs it may use: a thread that ran whenever it
    /// could is near 100 % of that, whatever the host stole.
    pub fn thread_busy_of_guest(&self) -> Option<f64> {
        let b = self.thread_busy?;
        let left = (100.0 - self.cpus_steal).max(1.0);
        Some((100.0 * b / left).min(100.0))
    }

    pub fn cpu_wait(&self) -> Option<f64> {
        self.thread_wait
    }

    /// Of the busy time on the CPUs the study may use, the share that was
    /// the I/O's own work (ssdready's, the kernel's threads', the drive's
    /// daemon's), percent (None without both figures).
    pub fn own_share(&self) -> Option<f64> {
        let busy = self.guest_busy_cpus()?;
        let own = self.io_cpus()?;
        (busy > 0.0).then(|| (100.0 * own / busy).min(100.0))
    }

    /// Of the I/Os in flight, the share the device's own counters saw in
    /// the block layer and below, percent.
    pub fn at_device_pct(&self) -> Option<f64> {
        let d = self.disk?.in_flight?;
        Some((100.0 * d / self.in_flight as f64).min(100.0))
    }
}

/// The submitting threads' run-queue wait, percent of the run: as read
/// ([`ssdready_measured::summary::CpuSummary::thread_wait_run_pct`]), or for a record
/// made before it was, from the thread that waited most — its wait's
/// share `w` of its ready time — and the busiest thread's run time `b`,
/// percent of the run: `b × w / (100 − w)`.
fn run_wait(c: &ssdready_measured::summary::CpuSummary) -> Option<f64> {
    c.thread_wait_run_pct.or_else(|| {
        let (w, b) = (c.thread_wait_max_pct?, c.thread_busy_max_pct?);
        Some(match w < 100.0 {
            true => (b * w / (100.0 - w)).min(100.0),
            false => 100.0,
        })
    })
}
