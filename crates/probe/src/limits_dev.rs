//! The devices in a target's path, for the inventory of limits: the whole
//! disk of each device number, the devices under it (device-mapper and md
//! members, the disk that holds a loop device's backing file), each one's
//! queue settings, and what kind of disk it is — with what a virtual
//! disk's host cannot see. Read through [`Sys`], so tests use a fake tree.

use crate::sys::Sys;
use ssdready_io::target::sysfs::major_minor;
use ssdready_measured::limits::{Device, DeviceRole, QueueSettings};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// The whole disk of device number `maj:min`: (its `MAJ:MIN`, its name).
pub fn whole_disk(s: Sys, maj: u32, min: u32) -> Option<(String, String)> {
    let dir = std::fs::canonicalize(s.path(&format!("/sys/dev/block/{maj}:{min}"))).ok()?;
    let disk_dir = match dir.join("partition").exists() {
        true => dir.parent()?.to_path_buf(),
        false => dir,
    };
    let name = disk_dir.file_name()?.to_string_lossy().into_owned();
    let devno = std::fs::read_to_string(disk_dir.join("dev")).ok()?;
    Some((devno.trim().to_string(), name))
}

/// The whole disks a change of the target's queue is set on: the whole
/// disk of device number `devno`, and for md and device-mapper the whole
/// disks under it, down to the physical ones — never the disk a loop
/// device's backing file is on (not the target's stack to tune).
pub fn stack_disks(s: Sys, (maj, min): (u32, u32)) -> Vec<String> {
    let mut out: Vec<String> = whole_disk(s, maj, min).map(|w| w.1).into_iter().collect();
    // A stack is a few levels deep; the bound stops a loop of links.
    let mut i = 0;
    while i < out.len() && i < 64 {
        let d = out[i].clone();
        i += 1;
        if !(d.starts_with("md") || d.starts_with("dm-")) {
            continue;
        }
        for n in s.list(&format!("/sys/block/{d}/slaves")) {
            let dev = s.read(&format!("/sys/class/block/{n}/dev"));
            let Some((a, b)) = dev.and_then(|d| ssdready_measured::limits::parse::devno(&d).ok())
            else {
                continue;
            };
            if let Some((_, w)) = whole_disk(s, a, b).filter(|w| !out.contains(&w.1)) {
                out.push(w);
            }
        }
    }
    out
}

/// The queue of whole disk `disk`: its queue directory
/// ([`crate::queue_dir`]), the driver's depth of a SCSI device and the
/// poll queues among its hardware queues.
pub fn queue(s: Sys, disk: &str) -> QueueSettings {
    let d = crate::queue_dir::read(s, disk);
    let polled = crate::hwqueues::poll_queues(s, disk, d.mq_entries.unwrap_or(0));
    QueueSettings {
        queue_depth: s
            .read(&format!("/sys/block/{disk}/device/queue_depth"))
            .and_then(|v| v.parse().ok()),
        poll_queues: polled.as_ref().map(|(n, _)| *n),
        poll_queues_source: polled.map(|(_, src)| src),
        ..d.settings
    }
}

/// Disks that a hypervisor or a cloud provides, by the model or vendor
/// they report: (text to find, what they are).
const VIRTUAL_MODELS: [(&str, &str); 9] = [
    ("Amazon Elastic Block Store", "an Amazon EBS volume"),
    (
        "Amazon EC2 NVMe Instance Storage",
        "Amazon EC2 instance storage",
    ),
    ("nvme_card-pd", "a Google persistent disk"),
    ("PersistentDisk", "a Google persistent disk"),
    ("Google EphemeralDisk", "Google local storage"),
    ("Virtual Disk", "a Hyper-V or Azure virtual disk"),
    ("VMware", "a VMware virtual disk"),
    ("QEMU", "a QEMU emulated disk"),
    ("VBOX", "a VirtualBox virtual disk"),
];

/// (transport, virtual, unseen) of whole disk `disk` with model `model`.
pub(crate) fn kind(s: Sys, disk: &str, model: &str) -> (String, bool, Option<String>) {
    let vendor = s
        .read(&format!("/sys/block/{disk}/device/vendor"))
        .unwrap_or_default();
    let p = |x: &str| disk.starts_with(x);
    let transport = match () {
        _ if p("nvme") => "nvme",
        _ if p("vd") => "virtio",
        _ if p("xvd") => "xen",
        _ if p("sd") && vendor == "ATA" => "sata",
        _ if p("sd") => "scsi",
        _ if p("loop") => "loop",
        _ if p("zram") => "zram",
        _ if p("nullb") => "null_blk",
        _ if p("ublkb") => "ublk",
        _ if p("ram") => "brd",
        _ if p("dm-") => "dm",
        _ if p("md") => "md",
        _ if p("mmcblk") => "mmc",
        _ => "unknown",
    };
    let hidden = "its backend's limits (the hypervisor's I/O limits, a cloud volume's provisioned IOPS and throughput) are not visible from this host";
    let found = VIRTUAL_MODELS
        .iter()
        .find(|(k, _)| model.contains(k) || vendor.contains(k));
    let unseen = match (transport, found) {
        ("virtio", _) => Some(format!("a virtio disk: {hidden}")),
        ("xen", _) => Some(format!("a Xen virtual disk: {hidden}")),
        (_, Some((_, what))) => Some(format!("{what}: {hidden}")),
        _ => None,
    };
    (transport.to_string(), unseen.is_some(), unseen)
}

/// One whole disk, described.
fn describe(s: Sys, devno: &str, disk: &str, role: DeviceRole) -> Device {
    let model = s
        .read(&format!("/sys/block/{disk}/device/model"))
        .filter(|m| !m.is_empty());
    let (transport, virtual_disk, unseen) = kind(s, disk, model.as_deref().unwrap_or(""));
    Device {
        device: devno.to_string(),
        disk: disk.to_string(),
        role,
        transport,
        model,
        virtual_disk,
        unseen,
        queue: queue(s, disk),
        source: format!("/sys/block/{disk}"),
    }
}

/// The device numbers directly under whole disk `disk`: its `slaves/`
/// (device-mapper, md) and, for a loop device, the device of the file
/// system its backing file is on.
fn under(s: Sys, disk: &str) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = s
        .list(&format!("/sys/block/{disk}/slaves"))
        .iter()
        .filter_map(|n| s.read(&format!("/sys/class/block/{n}/dev")))
        .filter_map(|d| ssdready_measured::limits::parse::devno(&d).ok())
        .collect();
    if let Some(file) = s.read(&format!("/sys/block/{disk}/loop/backing_file")) {
        if let Ok(md) = std::fs::metadata(s.path(&file)) {
            let (a, b) = major_minor(md.dev());
            if a != 0 {
                out.push((a, b));
            }
        }
    }
    out
}

/// The target's devices (the whole disks of `devices`) and every device
/// under them, each once, the target's first.
pub fn devices(s: Sys, devices: &[(u32, u32)]) -> Vec<Device> {
    let mut out: Vec<Device> = Vec::new();
    let mut todo: std::collections::VecDeque<((u32, u32), DeviceRole)> =
        devices.iter().map(|&d| (d, DeviceRole::Target)).collect();
    // A stack is a few levels deep; the bound stops a loop of links.
    let mut budget = 64;
    while let Some(((maj, min), role)) = todo.pop_front() {
        budget -= 1;
        let Some((devno, disk)) = whole_disk(s, maj, min) else {
            continue;
        };
        if budget == 0 || out.iter().any(|d| d.device == devno) {
            continue;
        }
        todo.extend(under(s, &disk).into_iter().map(|d| (d, DeviceRole::Under)));
        out.push(describe(s, &devno, &disk, role));
    }
    out
}

/// The block device a path is on: a block device's own number, a file's
/// file system's (a file system without a device number of its own, as
/// btrfs, is found through its mount's source). None when it is on no
/// block device (tmpfs, a network file system).
pub fn device_of_path(path: &Path) -> std::io::Result<Option<(u32, u32)>> {
    let md = std::fs::metadata(path)?;
    if md.file_type().is_block_device() {
        return Ok(Some(major_minor(md.rdev())));
    }
    let (maj, min) = major_minor(md.dev());
    if maj != 0 {
        return Ok(Some((maj, min)));
    }
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let devno = format!("{maj}:{min}");
    let source = info.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        let dash = f.iter().position(|x| *x == "-")?;
        (f.get(2) == Some(&devno.as_str())).then(|| f.get(dash + 2).map(|s| s.to_string()))?
    });
    let rdev = source
        .filter(|s| s.starts_with("/dev/"))
        .and_then(|s| std::fs::metadata(s).ok())
        .filter(|m| m.file_type().is_block_device())
        .map(|m| major_minor(m.rdev()));
    Ok(rdev)
}
