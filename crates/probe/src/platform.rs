//! The platform inventory that goes with every result: kernel, CPU, and each
//! block device's queue settings (scheduler, nr_requests, block sizes,
//! rotational, write cache, read-ahead, polling, loop backing), and the
//! lab conditions ([`crate::lab`]) with the hardware-counter probe.

use crate::sys::Sys;
use ssdready_core::result::{DeviceInfo, LabCondition, Platform};
use std::path::Path;

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Queue settings of whole disk `name`.
pub fn device(name: &str) -> DeviceInfo {
    device_in(Sys::new(Path::new("/")), name)
}

/// [`device`] below another root (tests: a fake tree): its queue from the
/// one reader of the queue directory ([`crate::queue_dir`]).
fn device_in(s: Sys, name: &str) -> DeviceInfo {
    let base = format!("/sys/block/{name}");
    let num = |f: &str| {
        s.read(&format!("{base}/{f}"))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let q = crate::queue_dir::read(s, name).settings;
    DeviceInfo {
        name: name.to_string(),
        size_bytes: num("size").unwrap_or(0) * 512,
        scheduler: q.scheduler,
        nr_requests: q.nr_requests,
        logical_block_size: q.logical_block_size,
        physical_block_size: q.physical_block_size,
        rotational: q.rotational,
        write_cache: q.write_cache,
        read_ahead_kb: q.read_ahead_kb,
        io_poll: q.io_poll,
        max_sectors_kb: q.max_sectors_kb,
        loop_backing_file: s.read(&format!("{base}/loop/backing_file")),
        loop_direct_io: num("loop/dio").map(|v| v != 0),
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
    fn a_devices_inventory_is_its_queue_directory_and_its_size() {
        let f = crate::fake_tree::Fake::new();
        let q = "/sys/block/loop3/queue";
        f.file("/sys/block/loop3/size", "2048\n")
            .file("/sys/block/loop3/loop/backing_file", "/dev/shm/x\n")
            .file("/sys/block/loop3/loop/dio", "1\n")
            .file(&format!("{q}/scheduler"), "none [mq-deadline]\n")
            .file(&format!("{q}/nr_requests"), "64\n")
            .file(&format!("{q}/rotational"), "1\n")
            .file(&format!("{q}/io_poll"), "0\n")
            .file(&format!("{q}/write_cache"), "write through\n");
        let d = device_in(f.sys(), "loop3");
        assert_eq!((d.name.as_str(), d.size_bytes), ("loop3", 2048 * 512));
        assert_eq!(d.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(d.nr_requests, Some(64));
        assert_eq!((d.rotational, d.io_poll), (Some(true), Some(false)));
        assert_eq!(d.write_cache.as_deref(), Some("write through"));
        assert_eq!(d.loop_backing_file.as_deref(), Some("/dev/shm/x"));
        assert_eq!(d.loop_direct_io, Some(true));
        assert_eq!((d.logical_block_size, d.max_sectors_kb), (None, None));
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
