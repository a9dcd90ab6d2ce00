//! # ssdready-probe
//!
//! What is measured *around* a run rather than per I/O:
//!
//! * [`cpu`] — whole-system CPU time from `/proc/stat` (user, nice, system,
//!   irq, softirq, steal, plus context switches and interrupts) and the
//!   process's own CPU and context switches from `getrusage(RUSAGE_SELF)`,
//!   which, unlike fio's per-job figure, includes every thread of the process.
//!   Snapshots are taken at the start and the end of the measured window; the
//!   deltas divided by the I/O count are the CPU cost per I/O.
//! * [`disk`] — `/sys/block/X/stat` deltas: I/Os, merges, and the time the
//!   block layer accounted from `block_io_start` to `block_io_done`, whose mean
//!   per I/O, subtracted from the app-observed latency, is the time spent
//!   above the block layer.
//! * [`platform`] — kernel, CPU, and each device's queue settings;
//!   [`blockdev`] — a block device's transport, mount and queue, for the
//!   study's target detection. The queue directory (`/sys/block/X/queue`)
//!   is read in one place, `queue_dir`, for these two and [`limits_dev`].
//! * [`lab`], [`lab_irq`] — lab conditions (frequency scaling, idle states,
//!   SMT, virtualisation, the device's interrupts…) with a warning for each
//!   that makes results noisy or unrepresentative; [`irqcount`] — the
//!   device's own queue interrupts over a run, from `/proc/interrupts`.
//! * [`limits`], [`limits_dev`] — everything that can cap a process's
//!   I/O (its cgroups' I/O throttles, CPU quota, cpuset and memory limit,
//!   its affinity, the target's devices and their queues), and the
//!   cgroups' counters around a run, as `ssdready_measured::limits` data.
//! * [`stack`] — the block-device stack under a device (md, device-mapper,
//!   loop, partitions) and every device's counters around a run.
//! * [`hwcount`] — cycles and instructions per I/O from hardware counters,
//!   where the machine has them.
//!
//! Nothing here needs root, except system-wide hardware counting.

#![forbid(unsafe_code)]

pub mod blockdev;
pub mod btf;
pub mod cpu;
pub mod disk;
pub mod exesyms;
#[cfg(test)]
mod fake_tree;
pub mod hwcount;
pub mod hwqueues;
pub mod irqcount;
pub mod lab;
pub mod lab_irq;
pub mod limits;
pub mod limits_dev;
pub mod platform;
pub mod profile;
mod queue_dir;
pub mod sched_group;
pub mod stack;
pub mod sys;
pub mod threads;
