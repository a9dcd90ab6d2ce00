//! The platform inventory that goes with every result: kernel, CPU, and each
//! block device's queue settings (scheduler, nr_requests, block sizes,
//! rotational, write cache, read-ahead, polling, loop backing), and the
//! lab conditions ([`crate::lab`]) with the hardware-counter probe.

use ssdready_core::result::{DeviceInfo, LabCondition, Platform};
use std::path::Path;

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}
fn read_u64(p: impl AsRef<Path>) -> Option<u64> {
    read(p)?.parse().ok()
}

/// The active scheduler from a `queue/scheduler` text (`mq-deadline [none]`).
/// A text without brackets (a queue with one choice) is that choice
/// ([`ssdready_measured::limits::parse::schedulers`] parses it).
pub fn active_scheduler(text: &str) -> Option<String> {
    let (active, _) = ssdready_measured::limits::parse::schedulers(text);
    active.or_else(|| {
        let t = text.trim();
        (!t.is_empty()).then(|| t.to_string())
    })
}

/// Queue settings of whole disk `name`.
pub fn device(name: &str) -> DeviceInfo {
    let q = Path::new("/sys/block").join(name).join("queue");
    let base = Path::new("/sys/block").join(name);
    DeviceInfo {
        name: name.to_string(),
        size_bytes: read_u64(base.join("size")).unwrap_or(0) * 512,
        scheduler: read(q.join("scheduler")).and_then(|s| active_scheduler(&s)),
        nr_requests: read_u64(q.join("nr_requests")),
        logical_block_size: read_u64(q.join("logical_block_size")),
        physical_block_size: read_u64(q.join("physical_block_size")),
        rotational: read_u64(q.join("rotational")).map(|v| v != 0),
        write_cache: read(q.join("write_cache")),
        read_ahead_kb: read_u64(q.join("read_ahead_kb")),
        io_poll: read_u64(q.join("io_poll")).map(|v| v != 0),
        max_sectors_kb: read_u64(q.join("max_sectors_kb")),
        loop_backing_file: read(base.join("loop/backing_file")),
        loop_direct_io: read_u64(base.join("loop/dio")).map(|v| v != 0),
    }
}

/// Collect the inventory for the given disks.
pub fn collect(disks: &[String]) -> Platform {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let flags = field("flags").unwrap_or_default();
    let interesting = [
        "constant_tsc",
        "nonstop_tsc",
        "tsc_known_freq",
        "hypervisor",
    ];
    Platform {
        kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        cpu_model: field("model name").unwrap_or_else(|| "unknown".into()),
        cpus_online: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        cpu_flags: flags
            .split_whitespace()
            .filter(|f| interesting.contains(f))
            .map(String::from)
            .collect(),
        mitigations: mitigations(),
        clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        devices: disks.iter().map(|d| device(d)).collect(),
        lab: lab_conditions(disks),
    }
}

/// The lab conditions of this machine and the disks under test, and
/// whether it has hardware counters.
pub fn lab_conditions(disks: &[String]) -> Vec<LabCondition> {
    let mut v = crate::lab::collect(Path::new("/"), disks);
    v.push(crate::hwcount::condition(&crate::hwcount::probe()));
    v
}

/// The active mitigations, by vulnerability name, sorted.
fn mitigations() -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") else {
        return Vec::new();
    };
    let mut v: Vec<(String, String)> = dir
        .flatten()
        .filter_map(|e| {
            let text = read(e.path().to_str()?)?;
            let m = text.strip_prefix("Mitigation: ")?;
            Some((e.file_name().to_string_lossy().into_owned(), m.to_string()))
        })
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn scheduler_brackets() {
        assert_eq!(
            active_scheduler("mq-deadline [none] kyber").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler(""), None);
    }
    #[test]
    fn inventory_has_a_kernel() {
        let p = collect(&[]);
        assert!(!p.kernel.is_empty());
        assert!(p.cpus_online >= 1);
    }

    #[test]
    fn mitigations_are_the_active_ones_as_sysfs_says() {
        let dir = "/sys/devices/system/cpu/vulnerabilities";
        let m = mitigations();
        for (k, v) in &m {
            let text = std::fs::read_to_string(format!("{dir}/{k}")).unwrap();
            assert_eq!(text.trim(), format!("Mitigation: {v}"));
        }
        let active = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| {
                        std::fs::read_to_string(e.path())
                            .is_ok_and(|t| t.starts_with("Mitigation: "))
                    })
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(m.len(), active);
    }
}
