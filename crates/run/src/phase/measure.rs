//! What a phase measures beside its workers: snapshots of the clock, the
//! whole system's CPU and the devices' counters at both ends of the
//! measured window, the devices' split between the application's view and
//! the kernel's, and the window's length as the jobs set it.

use super::{Outcomes, PhaseInputs};
use ssdready_core::result::DiskResult;
use ssdready_io::clock::Clock;
use ssdready_probe::{cpu, disk};

/// The clock, the CPU counters and each device's counters at one moment.
pub(crate) type Snapshot = (u64, cpu::CpuSnapshot, Vec<Option<disk::DiskStat>>);

/// The block devices the phase's jobs reach, each once.
pub(crate) fn devices(run: &PhaseInputs, members: &[usize]) -> Vec<String> {
    let mut d: Vec<String> = members
        .iter()
        .flat_map(|&i| run.jobs[i].targets.iter().filter_map(|t| t.device.clone()))
        .collect();
    d.sort();
    d.dedup();
    d
}

pub(crate) fn snapshot(clock: &Clock, devices: &[String]) -> Snapshot {
    (
        clock.now(),
        cpu::CpuSnapshot::now(),
        devices.iter().map(|d| disk::read(d)).collect(),
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
    devices: &[String],
    (from, to): (&Snapshot, &Snapshot),
    outcomes: &Outcomes,
) -> Vec<DiskResult> {
    let window_ns = to.0.saturating_sub(from.0);
    let mut out = Vec::new();
    for (di, dname) in devices.iter().enumerate() {
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
        out.push(disk::split(dname, a, b, app, window_ns));
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
