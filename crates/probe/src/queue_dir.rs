//! A whole disk's queue directory (`/sys/block/DISK/queue`, and the count
//! of its hardware queues under `mq/`), read once into
//! `ssdready_measured`'s [`QueueSettings`] with the schedulers offered:
//! the one reader of it, for the inventory of what can cap I/O
//! ([`crate::limits_dev::queue`], which adds the driver's depth and the
//! poll queues from outside the directory), the platform inventory of a
//! result ([`crate::platform::device`]) and the study's target detection
//! ([`crate::blockdev::queue`]); the same read gives the files by name
//! ([`files`]) to the levers' table, whose rows name the files they
//! change ([`crate::blockdev::queue_files`]). Read through [`Sys`], so tests use a fake
//! tree; the scheduler's text is parsed by `ssdready_measured`'s one
//! parser of it.

use crate::sys::Sys;
use ssdready_measured::limits::parse::{active_scheduler, schedulers};
use ssdready_measured::limits::queue_files as file;
use ssdready_measured::limits::QueueSettings;
use std::collections::BTreeMap;

/// What a disk's queue directory holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueDir {
    /// The settings read from the directory (`queue_depth` and the poll
    /// queues are not in it: left unset).
    pub settings: QueueSettings,
    /// Every scheduler offered, the active one among them (empty where
    /// `scheduler` could not be read).
    pub offered: Vec<String>,
    /// The entries of `mq/` (one per hardware queue), where the directory
    /// can be read.
    pub mq_entries: Option<u32>,
}

/// The files `names` of whole disk `disk`'s queue directory as read, by
/// name (absent files left out: the kernel does not offer them): the one
/// read of the directory's files, typed by [`read`] or kept as text for
/// the levers' table, whose rows name the files they change.
pub fn files<S: AsRef<str>>(s: Sys, disk: &str, names: &[S]) -> BTreeMap<String, String> {
    let one = |n: &S| {
        let n = n.as_ref();
        Some((
            n.to_string(),
            s.read(&format!("/sys/block/{disk}/queue/{n}"))?,
        ))
    };
    names.iter().filter_map(one).collect()
}

/// The files [`read`] types.
const TYPED: [&str; 13] = [
    file::SCHEDULER,
    file::NR_REQUESTS,
    file::WBT_LAT_USEC,
    file::MAX_SECTORS_KB,
    file::MAX_HW_SECTORS_KB,
    file::NOMERGES,
    file::RQ_AFFINITY,
    file::READ_AHEAD_KB,
    file::IO_POLL,
    file::WRITE_CACHE,
    file::ROTATIONAL,
    file::LOGICAL_BLOCK_SIZE,
    file::PHYSICAL_BLOCK_SIZE,
];

/// The queue directory of whole disk `disk`: files the kernel does not
/// offer, or whose text is not a value, are left unset.
pub fn read(s: Sys, disk: &str) -> QueueDir {
    let text = files(s, disk, &TYPED);
    let q = |f: &str| text.get(f).cloned();
    let n = |f: &str| q(f).and_then(|v| v.parse::<u64>().ok());
    let small = |f: &str| q(f).and_then(|v| v.parse::<u32>().ok());
    let text = q(file::SCHEDULER);
    let offered = text.as_deref().map(|t| schedulers(t).1).unwrap_or_default();
    let mq_entries = std::fs::read_dir(s.path(&format!("/sys/block/{disk}/mq")))
        .ok()
        .map(|d| d.count() as u32);
    QueueDir {
        settings: QueueSettings {
            hw_queues: mq_entries.filter(|&m| m > 0),
            nr_requests: n(file::NR_REQUESTS),
            scheduler: text.as_deref().and_then(active_scheduler),
            wbt_lat_usec: n(file::WBT_LAT_USEC),
            max_sectors_kb: n(file::MAX_SECTORS_KB),
            max_hw_sectors_kb: n(file::MAX_HW_SECTORS_KB),
            nomerges: small(file::NOMERGES),
            rq_affinity: small(file::RQ_AFFINITY),
            read_ahead_kb: n(file::READ_AHEAD_KB),
            io_poll: n(file::IO_POLL).map(|v| v != 0),
            write_cache: q(file::WRITE_CACHE),
            rotational: n(file::ROTATIONAL).map(|v| v != 0),
            logical_block_size: n(file::LOGICAL_BLOCK_SIZE),
            physical_block_size: n(file::PHYSICAL_BLOCK_SIZE),
            ..QueueSettings::default()
        },
        offered,
        mq_entries,
    }
}

/// The most requests whole disk `disk`'s driver takes at once, where it
/// says: the tags of its hardware queues (`mq/N/nr_tags`, the least of
/// them), a SCSI device's `device/queue_depth`, else the tag depth of
/// the loop, null_blk and nvme drivers (their module parameters; NVMe
/// keeps one slot of each queue back, 1023 tags of an `io_queue_depth`
/// of 1024). Without a scheduler `nr_requests` cannot go past it (the
/// kernel refuses).
pub fn driver_depth(s: Sys, disk: &str) -> Option<u64> {
    let read = |p: &str| s.read(p)?.parse::<u64>().ok().filter(|&d| d > 0);
    let mq = format!("/sys/block/{disk}/mq");
    let tags = s
        .list(&mq)
        .iter()
        .filter_map(|q| read(&format!("{mq}/{q}/nr_tags")))
        .min();
    if tags.is_some() {
        return tags;
    }
    if let Some(d) = read(&format!("/sys/block/{disk}/device/queue_depth")) {
        return Some(d);
    }
    let param = match () {
        _ if disk.starts_with("loop") => "loop/parameters/hw_queue_depth",
        _ if disk.starts_with("nullb") => "null_blk/parameters/hw_queue_depth",
        _ if disk.starts_with("nvme") => "nvme/parameters/io_queue_depth",
        _ => return None,
    };
    read(&format!("/sys/module/{param}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_tree::Fake;

    fn nvme(f: &Fake) {
        let q = "/sys/block/nvme0n1/queue";
        f.file(&format!("{q}/scheduler"), "[none] mq-deadline kyber\n")
            .file(&format!("{q}/nr_requests"), "1023\n")
            .file(&format!("{q}/wbt_lat_usec"), "2000\n")
            .file(&format!("{q}/max_sectors_kb"), "128\n")
            .file(&format!("{q}/max_hw_sectors_kb"), "2048\n")
            .file(&format!("{q}/nomerges"), "0\n")
            .file(&format!("{q}/rq_affinity"), "1\n")
            .file(&format!("{q}/read_ahead_kb"), "128\n")
            .file(&format!("{q}/io_poll"), "1\n")
            .file(&format!("{q}/write_cache"), "write back\n")
            .file(&format!("{q}/rotational"), "0\n")
            .file(&format!("{q}/logical_block_size"), "512\n")
            .file(&format!("{q}/physical_block_size"), "4096\n")
            .file("/sys/block/nvme0n1/mq/0/nr_tags", "1023\n")
            .file("/sys/block/nvme0n1/mq/1/nr_tags", "1023\n");
    }

    #[test]
    fn every_file_of_the_directory_is_read_into_its_setting() {
        let f = Fake::new();
        nvme(&f);
        let d = read(f.sys(), "nvme0n1");
        let q = &d.settings;
        assert_eq!(q.scheduler.as_deref(), Some("none"));
        assert_eq!(d.offered, ["none", "mq-deadline", "kyber"]);
        assert_eq!((q.nr_requests, q.wbt_lat_usec), (Some(1023), Some(2000)));
        assert_eq!(
            (q.max_sectors_kb, q.max_hw_sectors_kb),
            (Some(128), Some(2048))
        );
        assert_eq!((q.nomerges, q.rq_affinity), (Some(0), Some(1)));
        assert_eq!((q.read_ahead_kb, q.io_poll), (Some(128), Some(true)));
        assert_eq!(q.write_cache.as_deref(), Some("write back"));
        assert_eq!(q.rotational, Some(false));
        assert_eq!(
            (q.logical_block_size, q.physical_block_size),
            (Some(512), Some(4096))
        );
        assert_eq!((d.mq_entries, q.hw_queues), (Some(2), Some(2)));
        // Not in the directory: the limits' reader adds them.
        assert_eq!((q.queue_depth, q.poll_queues), (None, None));
    }

    #[test]
    fn a_drivers_depth_is_its_hardware_queues_least_tags_else_what_the_driver_says() {
        let f = Fake::new();
        nvme(&f);
        f.file("/sys/block/nvme0n1/mq/2/nr_tags", "255\n")
            .file("/sys/module/nvme/parameters/io_queue_depth", "1024\n")
            .file("/sys/block/sda/device/queue_depth", "32\n")
            .file("/sys/module/loop/parameters/hw_queue_depth", "128\n")
            .file("/sys/block/dm-0/queue/nr_requests", "128\n");
        assert_eq!(driver_depth(f.sys(), "nvme0n1"), Some(255));
        assert_eq!(driver_depth(f.sys(), "sda"), Some(32));
        assert_eq!(driver_depth(f.sys(), "loop3"), Some(128));
        assert_eq!(driver_depth(f.sys(), "nvme1n1"), Some(1024));
        assert_eq!(driver_depth(f.sys(), "dm-0"), None);
        assert_eq!(driver_depth(f.sys(), "nullb0"), None);
    }

    #[test]
    fn a_queue_without_a_choice_or_files_leaves_them_unset() {
        let f = Fake::new();
        f.file("/sys/block/dm-0/queue/scheduler", "none\n")
            .file("/sys/block/dm-0/queue/nr_requests", "not a number\n");
        let d = read(f.sys(), "dm-0");
        assert_eq!(d.settings.scheduler.as_deref(), Some("none"));
        assert_eq!(d.offered, ["none"]);
        assert_eq!(d.settings.nr_requests, None);
        assert_eq!((d.mq_entries, d.settings.hw_queues), (None, None));
        let none = read(f.sys(), "sdq");
        assert_eq!(none, QueueDir::default());
    }
}
