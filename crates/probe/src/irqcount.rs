//! A device's own interrupts over a measured window: its MSI/MSI-X queue
//! vectors (found by [`crate::lab_irq::irqs`] above `/sys/block/X/device`)
//! counted in `/proc/interrupts` at both ends of the window, summed over
//! CPUs, after less before. A polled I/O (io_uring IOPOLL on an NVMe poll
//! queue) takes no interrupt; an interrupt-driven one takes about one
//! (fewer with interrupt coalescing), so the count per I/O says whether a
//! run that asked to poll did.
//!
//! Read twice per phase, never per I/O, and only for devices that have
//! such vectors (loop, device-mapper, md and null_blk have none).

use crate::lab_irq;
use crate::sys::Sys;
use ssdready_core::result::{DeviceInterrupts, IrqCount};
use std::collections::BTreeMap;
use std::path::Path;

/// Each numbered interrupt's count summed over CPUs, by IRQ number.
pub type Counts = BTreeMap<u32, u64>;

/// Where the counts come from, as results say it.
pub const SOURCE: &str = "/proc/interrupts at both ends of the measured window, summed over CPUs, for the device's MSI/MSI-X queue vectors (/sys/block/X/device/…/msi_irqs)";

/// One queue vector of a device: its IRQ number and handler name.
#[derive(Clone, Debug, PartialEq)]
pub struct Vector {
    pub irq: u32,
    pub name: String,
}

/// The queue vectors of `disk` (not a virtio config-change vector); for
/// a stacked device with none of its own (md, device-mapper), those of the
/// devices under it (`slaves/`, down to the physical ones), each once;
/// empty when none is found (a software device).
pub fn vectors(s: Sys, disk: &str) -> Vec<Vector> {
    let mut out: Vec<Vector> = Vec::new();
    let mut todo = vec![disk.to_string()];
    let mut seen: Vec<String> = Vec::new();
    // A stack is a few levels deep; the bound stops a loop of links.
    while let Some(d) = todo.pop().filter(|_| seen.len() < 256) {
        if seen.contains(&d) {
            continue;
        }
        seen.push(d.clone());
        let own: Vec<Vector> = lab_irq::irqs(s, &d)
            .unwrap_or_default()
            .into_iter()
            .filter(|i| i.is_queue())
            .map(|i| Vector {
                irq: i.number,
                name: i.name,
            })
            .collect();
        if own.is_empty() {
            todo.extend(s.list(&format!("/sys/block/{d}/slaves")));
        }
        for v in own {
            if !out.iter().any(|o| o.irq == v.irq) {
                out.push(v);
            }
        }
    }
    out
}

/// The queue vectors of `disk` on this machine.
pub fn vectors_here(disk: &str) -> Vec<Vector> {
    vectors(Sys::new(Path::new("/")), disk)
}

/// Parse the text of /proc/interrupts: the numbered lines' counts, summed
/// over the CPU columns the header names (the architecture's named lines,
/// `NMI:`, `LOC:`, …, are not a device's and are left out).
pub fn parse(text: &str) -> Counts {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| {
        h.split_whitespace()
            .filter(|t| t.starts_with("CPU"))
            .count()
    });
    let mut out = Counts::new();
    for line in lines {
        let mut t = line.split_whitespace();
        let Some(n) = t
            .next()
            .and_then(|f| f.strip_suffix(':')?.parse::<u32>().ok())
        else {
            continue;
        };
        let sum = t
            .take(cpus)
            .map_while(|c| c.parse::<u64>().ok())
            .fold(0u64, u64::saturating_add);
        out.insert(n, sum);
    }
    out
}

/// /proc/interrupts now; None when it cannot be read.
pub fn read() -> Option<Counts> {
    std::fs::read_to_string("/proc/interrupts")
        .ok()
        .map(|t| parse(&t))
}

/// The interrupts of `vectors` between two readings, per request the
/// device completed (`device_ios`, from its /sys/block/X/stat). None when
/// no vector is in both readings.
pub fn between(
    vectors: &[Vector],
    before: &Counts,
    after: &Counts,
    device_ios: u64,
) -> Option<DeviceInterrupts> {
    let counted: Vec<IrqCount> = vectors
        .iter()
        .filter_map(|v| {
            let (a, b) = (before.get(&v.irq)?, after.get(&v.irq)?);
            Some(IrqCount {
                irq: v.irq,
                name: v.name.clone(),
                count: b.saturating_sub(*a),
            })
        })
        .collect();
    if counted.is_empty() {
        return None;
    }
    let total = counted.iter().map(|c| c.count).sum::<u64>();
    Some(DeviceInterrupts {
        total,
        per_io: (device_ios > 0).then(|| total as f64 / device_ios as f64),
        vectors: counted,
        source: SOURCE.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_tree::Fake;

    const BEFORE: &str = "           CPU0       CPU1       CPU2       CPU3
  0:         36          0          0          0   IO-APIC   2-edge      timer
 24:          5          0          0          0  PCI-MSIX-0000:00:04.0   0-edge      nvme0q0
 25:        100         20          0          0  PCI-MSIX-0000:00:04.0   1-edge      nvme0q1
 26:          0          0          7          0  PCI-MSIX-0000:00:04.0   2-edge      nvme0q2
NMI:          0          0          0          0   Non-maskable interrupts
LOC:      12345      23456      34567      45678   Local timer interrupts
ERR:          0
";

    const AFTER: &str = "           CPU0       CPU1       CPU2       CPU3
  0:         36          0          0          0   IO-APIC   2-edge      timer
 24:          6          0          0          0  PCI-MSIX-0000:00:04.0   0-edge      nvme0q0
 25:        600         20          0          0  PCI-MSIX-0000:00:04.0   1-edge      nvme0q1
 26:          0          0        507          0  PCI-MSIX-0000:00:04.0   2-edge      nvme0q2
NMI:          0          0          0          0   Non-maskable interrupts
LOC:      22345      23456      34567      45678   Local timer interrupts
ERR:          0
";

    fn nvme() -> Vec<Vector> {
        [(24, "nvme0q0"), (25, "nvme0q1"), (26, "nvme0q2")]
            .into_iter()
            .map(|(irq, n)| Vector {
                irq,
                name: n.into(),
            })
            .collect()
    }

    #[test]
    fn proc_interrupts_numbered_lines_are_summed_over_the_header_cpus() {
        let c = parse(BEFORE);
        assert_eq!(c.get(&0), Some(&36));
        assert_eq!(c.get(&25), Some(&120));
        assert_eq!(c.get(&26), Some(&7));
        assert_eq!(
            c.len(),
            4,
            "named lines (NMI, LOC, ERR) are not devices': {c:?}"
        );
    }

    #[test]
    fn a_chip_name_after_the_cpu_columns_is_not_counted() {
        // A line whose chip column is a number must not add it.
        let c = parse("      CPU0 CPU1\n 40:  3  4  12345  edge  virtio1-req.0\n");
        assert_eq!(c.get(&40), Some(&7));
    }

    #[test]
    fn each_queue_vector_counts_its_interrupts_over_the_window_per_device_request() {
        let d = between(&nvme(), &parse(BEFORE), &parse(AFTER), 2000).unwrap();
        assert_eq!(d.total, 1001);
        assert_eq!(d.per_io, Some(1001.0 / 2000.0));
        let counts: Vec<(&str, u64)> = d
            .vectors
            .iter()
            .map(|v| (v.name.as_str(), v.count))
            .collect();
        assert_eq!(counts, [("nvme0q0", 1), ("nvme0q1", 500), ("nvme0q2", 500)]);
        assert_eq!(d.source, SOURCE);
    }

    #[test]
    fn a_window_without_device_requests_has_a_count_but_no_rate() {
        let d = between(&nvme(), &parse(BEFORE), &parse(BEFORE), 0).unwrap();
        assert_eq!((d.total, d.per_io), (0, None));
    }

    #[test]
    fn vectors_missing_from_proc_interrupts_give_no_count() {
        let other = vec![Vector {
            irq: 99,
            name: "nvme1q1".into(),
        }];
        assert!(between(&other, &parse(BEFORE), &parse(AFTER), 10).is_none());
        assert!(between(&[], &parse(BEFORE), &parse(AFTER), 10).is_none());
    }

    #[test]
    fn a_device_s_queue_vectors_come_from_its_pci_function_without_its_config_vector() {
        let t = Fake::new();
        t.file(
            "/sys/devices/pci0000:00/0000:00:05.0/virtio1/block/vda/stat",
            "0",
        )
        .link(
            "/sys/block/vda/device",
            &t.at("/sys/devices/pci0000:00/0000:00:05.0/virtio1")
                .to_string_lossy(),
        );
        for (n, name) in [(30, "virtio1-config"), (31, "virtio1-req.0")] {
            t.file(
                &format!("/sys/devices/pci0000:00/0000:00:05.0/msi_irqs/{n}"),
                "msix",
            )
            .file(&format!("/proc/irq/{n}/{name}/.keep"), "")
            .file(&format!("/proc/irq/{n}/smp_affinity_list"), "0-3");
        }
        let v = vectors(t.sys(), "vda");
        assert_eq!(
            v,
            [Vector {
                irq: 31,
                name: "virtio1-req.0".into()
            }]
        );
        assert!(
            vectors(t.sys(), "loop0").is_empty(),
            "a loop device has none"
        );
        // An md array over vda and a device-mapper device over vda: vda's
        // vectors, once.
        t.file("/sys/block/dm-0/slaves/vda/.keep", "")
            .file("/sys/block/md0/slaves/vda/.keep", "")
            .file("/sys/block/md0/slaves/dm-0/.keep", "");
        assert_eq!(vectors(t.sys(), "md0"), v, "the members' vectors");
        t.file("/sys/block/md1/slaves/md1/.keep", "");
        assert!(vectors(t.sys(), "md1").is_empty(), "a loop of links ends");
    }
}
