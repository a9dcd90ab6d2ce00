//! What a block device is, read from sysfs and `/proc/self/mountinfo`
//! without changing anything: its transport by the kernel's name for the
//! disk (and whether it is memory), the file system and mount point of a
//! device number, and its queue (schedulers, logical block size, hardware
//! queues, polling, rotational). The study's target detection
//! (`ssdready_study::detect`) is built on it.

use crate::sys::Sys;
use std::path::Path;

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The transport of whole disk `name` (`nvme`, `virtio`, `sata`, `scsi`,
/// `loop`, `ublk`, `zram`, …) and whether it is held in memory.
pub fn transport(name: &str) -> (&'static str, bool) {
    let p = |x: &str| name.starts_with(x);
    match () {
        _ if p("nvme") => ("nvme", false),
        _ if p("vd") => ("virtio", false),
        _ if p("sd") => {
            let vendor = read(format!("/sys/block/{name}/device/vendor")).unwrap_or_default();
            (if vendor == "ATA" { "sata" } else { "scsi" }, false)
        }
        _ if p("loop") => ("loop", false),
        _ if p("ublkb") => ("ublk", false),
        _ if p("zram") => ("zram", true),
        _ if p("nullb") => ("null_blk", true),
        _ if p("ram") => ("brd", true),
        _ if p("dm-") => ("dm", false),
        _ if p("md") => ("md", false),
        _ if p("mmcblk") => ("mmc", false),
        _ => ("unknown", false),
    }
}

/// (file system type, mount point) of device number `maj:min` in a
/// mountinfo text.
pub fn mount_in(mountinfo: &str, maj: u32, min: u32) -> Option<(String, String)> {
    let devno = format!("{maj}:{min}");
    mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        let dash = f.iter().position(|x| *x == "-")?;
        if f.get(2) != Some(&devno.as_str()) {
            return None;
        }
        Some((f.get(dash + 1)?.to_string(), f.get(4)?.to_string()))
    })
}

/// (file system type, mount point) of device number `maj:min`.
pub fn mount_of(maj: u32, min: u32) -> Option<(String, String)> {
    mount_in(&read("/proc/self/mountinfo")?, maj, min)
}

/// The backing file of loop device `disk`, if it is one that is bound.
pub fn loop_backing(disk: &str) -> Option<String> {
    read(format!("/sys/block/{disk}/loop/backing_file"))
}

/// A disk's queue, as the study describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Queue {
    /// The I/O schedulers offered, and the active one.
    pub schedulers: Vec<String>,
    pub scheduler: Option<String>,
    /// 512 when sysfs does not say.
    pub logical_block_size: u64,
    pub poll_queues: Option<bool>,
    pub rotational: Option<bool>,
    /// Hardware queues (`mq/` entries).
    pub hw_queues: Option<u32>,
}

/// The queue of whole disk `disk` (from [`crate::queue_dir`], the one
/// reader of its directory).
pub fn queue(disk: &str) -> Queue {
    queue_of(crate::queue_dir::read(Sys::new(Path::new("/")), disk))
}

/// The most requests whole disk `disk`'s driver takes at once, where it
/// says ([`crate::queue_dir::driver_depth`]).
pub fn driver_depth(disk: &str) -> Option<u64> {
    crate::queue_dir::driver_depth(Sys::new(Path::new("/")), disk)
}

/// The files `names` of whole disk `disk`'s queue directory as read
/// (absent files left out: the kernel does not offer them).
pub fn queue_files(disk: &str, names: &[String]) -> std::collections::BTreeMap<String, String> {
    crate::queue_dir::files(Sys::new(Path::new("/")), disk, names)
}

/// The study's view of a queue directory read.
fn queue_of(d: crate::queue_dir::QueueDir) -> Queue {
    Queue {
        schedulers: d.offered,
        scheduler: d.settings.scheduler,
        logical_block_size: d.settings.logical_block_size.unwrap_or(512),
        poll_queues: d.settings.io_poll,
        rotational: d.settings.rotational,
        hw_queues: d.mq_entries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transport_follows_the_kernels_name_for_the_disk() {
        assert_eq!(transport("nvme0n1"), ("nvme", false));
        assert_eq!(transport("vda"), ("virtio", false));
        assert_eq!(transport("zram0"), ("zram", true));
        assert_eq!(transport("nullb0"), ("null_blk", true));
        assert_eq!(transport("ram0"), ("brd", true));
        assert_eq!(transport("ublkb3"), ("ublk", false));
        assert_eq!(transport("xyz"), ("unknown", false));
    }

    #[test]
    fn a_device_number_finds_its_file_system_and_mount_point() {
        let info = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                    29 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n\
                    40 29 7:0 / /mnt/x rw - xfs /dev/loop0 rw\n";
        assert_eq!(mount_in(info, 253, 1), Some(("ext4".into(), "/".into())));
        assert_eq!(mount_in(info, 7, 0), Some(("xfs".into(), "/mnt/x".into())));
        assert_eq!(mount_in(info, 8, 0), None);
    }

    #[test]
    fn a_disk_that_does_not_exist_has_the_default_queue() {
        let q = queue("no-such-disk");
        assert_eq!(q.logical_block_size, 512);
        assert!(q.schedulers.is_empty() && q.hw_queues.is_none());
    }
}
