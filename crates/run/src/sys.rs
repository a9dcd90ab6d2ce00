//! Facts about this process and machine that several modules ask for. A
//! leaf.

use ssdready_core::host::Host;
use ssdready_core::units::parse_cpu_list;

/// Whether this process runs as root (its real user id is 0).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// What this machine has, for the options that name its resources.
pub fn host() -> Host {
    Host {
        cpus: usable_cpus(),
        aio_requests: aio_requests(),
    }
}

/// CPUs that are online and in this process's affinity mask.
fn usable_cpus() -> Option<Vec<usize>> {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()).ok());
    let mine = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .ok()
        .map(|set| {
            (0..nix::sched::CpuSet::count())
                .filter(|&c| set.is_set(c).unwrap_or(false))
                .collect::<Vec<usize>>()
        });
    match (online, mine) {
        (Some(a), Some(b)) => Some(a.into_iter().filter(|c| b.contains(c)).collect()),
        (a, b) => a.or(b),
    }
    .filter(|v| !v.is_empty())
}

/// libaio requests the kernel still grants (aio-max-nr − aio-nr).
fn aio_requests() -> Option<u64> {
    let read = |f: &str| -> Option<u64> { std::fs::read_to_string(f).ok()?.trim().parse().ok() };
    let max = read("/proc/sys/fs/aio-max-nr")?;
    let used = read("/proc/sys/fs/aio-nr")?;
    Some(max.saturating_sub(used))
}
