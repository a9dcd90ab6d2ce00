//! What a phase measures beside its workers: snapshots of the clock, the
//! whole system's CPU and the devices' counters at both ends of the
//! measured window, the devices' split between the application's view and
//! the kernel's, the interrupts of the devices' own queue vectors (read
//! from /proc/interrupts only when a device has such vectors), and the
//! window's length as the jobs set it.

use super::inputs::{Outcomes, PhaseInputs};
use ssdready_core::result::DiskResult;
use ssdready_io::clock::Clock;
use ssdready_probe::irqcount::{self, Counts, Vector};
use ssdready_probe::{cpu, disk};

/// The clock, the CPU counters, each device's counters, where a device
/// has queue vectors /proc/interrupts, and this process's block-layer
/// reads (/proc/self/io) at one moment.
pub(crate) type Snapshot = (
    u64,
    cpu::CpuSnapshot,
    Vec<Option<disk::DiskStat>>,
    Option<Counts>,
    Option<u64>,
);

/// A block device the phase's jobs reach, with its queue vectors (empty
/// for a software device).
pub(crate) struct Device {
    pub name: String,
    pub vectors: Vec<Vector>,
}

/// The block devices the phase's jobs reach, each once.
pub(crate) fn devices(run: &PhaseInputs, members: &[usize]) -> Vec<Device> {
    let mut d: Vec<String> = members
        .iter()
        .flat_map(|&i| run.jobs[i].targets.iter().filter_map(|t| t.device.clone()))
        .collect();
    d.sort();
    d.dedup();
    d.into_iter()
        .map(|name| Device {
            vectors: irqcount::vectors_here(&name),
            name,
        })
        .collect()
}

pub(crate) fn snapshot(clock: &Clock, devices: &[Device]) -> Snapshot {
    let irqs = devices.iter().any(|d| !d.vectors.is_empty());
    (
        clock.now(),
        cpu::CpuSnapshot::now(),
        devices.iter().map(|d| disk::read(&d.name)).collect(),
        irqs.then(irqcount::read).flatten(),
        (!devices.is_empty()).then(disk::own_read_bytes).flatten(),
    )
}

/// The longest ramp of the phase's jobs (the window opens after it), and
/// how long the phase should take in seconds when every job is timed.
pub(crate) fn timing(
    run: &PhaseInputs,
    members: &[usize],
    warnings: &mut Vec<String>,
) -> (u64, Option<f64>) {
    let spec = |i: usize| &run.jobs[i].spec;
    let ramp = members
        .iter()
        .map(|&i| spec(i).ramp_time_ns)
        .max()
        .unwrap_or(0);
    if members.iter().any(|&i| spec(i).ramp_time_ns != ramp) {
        warnings.push(
            "jobs of one phase have different ramp_time: CPU and device figures start after the longest"
                .into(),
        );
    }
    let all_timed = members.iter().all(|&i| spec(i).time_based);
    let expected = members
        .iter()
        .filter_map(|&i| {
            let s = spec(i);
            s.runtime_ns.map(|r| r + s.ramp_time_ns + s.startdelay_ns)
        })
        .max()
        .filter(|_| all_timed)
        .map(|ns| ns as f64 / 1e9);
    (ramp, expected)
}

/// Each device's counters over the window, split against the I/O of the
/// jobs whose every target is that device.
pub(crate) fn disks(
    run: &PhaseInputs,
    members: &[usize],
    devices: &[Device],
    (from, to): (&Snapshot, &Snapshot),
    outcomes: &Outcomes,
) -> Vec<DiskResult> {
    let window_ns = to.0.saturating_sub(from.0);
    let mut out = Vec::new();
    for (di, dev) in devices.iter().enumerate() {
        let dname = dev.name.as_str();
        let (Some(a), Some(b)) = (&from.2[di], &to.2[di]) else {
            continue;
        };
        let mut app = disk::AppView::default();
        for &ji in members.iter().filter(|&&ji| counted(run, ji, dname)) {
            for (_, o) in outcomes.iter().filter(|(i, _)| *i == ji) {
                for d in o.stats.dirs.iter().flatten() {
                    app.ios += d.lat.count();
                    app.lat_sum_ns += d.lat.sum() as f64;
                    app.bytes += d.bytes;
                }
            }
        }
        let mut r = disk::split(dname, a, b, app, window_ns);
        if let (Some(x), Some(y), 1) = (from.4, to.4, devices.len()) {
            r.own_read_bytes = y.checked_sub(x);
        }
        if let (Some(x), Some(y)) = (&from.3, &to.3) {
            let ios = r.read_ios + r.write_ios + r.discard_ios;
            r.interrupts = irqcount::between(&dev.vectors, x, y, ios);
        }
        out.push(r);
    }
    out
}

/// Whether job `ji`'s I/O is counted against device `dname`'s own count.
/// Buffered I/O reaches the device as the page cache decides (merged, read
/// ahead, written back later), and fio's file-operation engines move no
/// data (the device sees only the file system's own I/O), nor do the
/// mapping engines (stores to memory) and e4defrag (extent moves): only
/// direct data I/O to that device alone is counted.
fn counted(run: &PhaseInputs, ji: usize, dname: &str) -> bool {
    let j = &run.jobs[ji];
    j.spec.direct
        && !j.spec.fake_io()
        && !matches!(
            j.spec.engine_named.as_deref(),
            Some("libpmem" | "dev-dax" | "e4defrag")
        )
        && !j.targets.is_empty()
        && j.targets.iter().all(|t| t.device.as_deref() == Some(dname))
}
