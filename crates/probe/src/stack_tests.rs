//! The stack read from fake sysfs trees: md RAID 0 over a null_blk disk,
//! a dm-delay and a dm-crypt over a partition; a loop device over a file;
//! a table that cannot be read; the counters around a run.

use super::*;
use crate::fake_tree::Fake;

impl Fake {
    /// A block device `name` (`maj:min`) under `/sys/devices/{path}`, its
    /// links, a stat file and the devices under it.
    fn dev(&self, path: &str, name: &str, devno: &str, slaves: &[&str]) -> &Fake {
        let dir = format!("/sys/devices/{path}");
        self.file(&format!("{dir}/dev"), &format!("{devno}\n"))
            .file(&format!("{dir}/stat"), "0 0 0 0 0 0 0 0 0 0 0\n")
            .link(
                &format!("/sys/class/block/{name}"),
                &format!("../../devices/{path}"),
            )
            .link(
                &format!("/sys/dev/block/{devno}"),
                &format!("../../devices/{path}"),
            );
        // Whole disks only: a partition is not in /sys/block.
        if path.rsplit('/').nth(1) == Some("block") {
            self.link(&format!("/sys/block/{name}"), &format!("../devices/{path}"));
        }
        std::fs::create_dir_all(self.at(&format!("{dir}/holders"))).unwrap();
        for s in slaves {
            self.file(&format!("{dir}/slaves/{s}"), "");
        }
        self
    }
}

/// md0 (RAID 0, 512k chunk) over nullb0, dm-0 (delay over nullb1) and
/// dm-1 (crypt over sda1, a partition of sda); dm-2 above md0.
fn raid() -> Fake {
    let f = Fake::new();
    f.dev(
        "virtual/block/md0",
        "md0",
        "9:0",
        &["dm-0", "dm-1", "nullb0"],
    )
    .file("/sys/devices/virtual/block/md0/md/level", "raid0\n")
    .file("/sys/devices/virtual/block/md0/md/chunk_size", "524288\n")
    .file("/sys/devices/virtual/block/md0/md/raid_disks", "3\n")
    .file("/sys/devices/virtual/block/md0/md/degraded", "1\n")
    .file(
        "/sys/devices/virtual/block/md0/md/dev-nullb0/state",
        "in_sync\n",
    )
    .file("/sys/devices/virtual/block/md0/md/dev-nullb0/slot", "0\n")
    .file(
        "/sys/devices/virtual/block/md0/md/dev-dm-0/state",
        "in_sync\n",
    )
    .file("/sys/devices/virtual/block/md0/md/dev-dm-0/slot", "1\n")
    .file(
        "/sys/devices/virtual/block/md0/md/dev-dm-1/state",
        "faulty\n",
    )
    .file("/sys/devices/virtual/block/md0/md/dev-dm-1/slot", "none\n")
    .dev("virtual/block/dm-0", "dm-0", "252:0", &["nullb1"])
    .file("/sys/devices/virtual/block/dm-0/dm/name", "slow\n")
    .dev("virtual/block/dm-1", "dm-1", "252:1", &["sda1"])
    .file("/sys/devices/virtual/block/dm-1/dm/name", "secret\n")
    .dev("virtual/block/dm-2", "dm-2", "252:2", &["md0"])
    .file("/sys/devices/virtual/block/dm-2/dm/name", "lv\n")
    .link("/sys/devices/virtual/block/md0/holders/dm-2", "../../dm-2")
    .dev("virtual/block/nullb0", "nullb0", "251:0", &[])
    .dev("virtual/block/nullb1", "nullb1", "251:1", &[])
    .dev("pci0000:00/host0/block/sda", "sda", "8:0", &[])
    .file(
        "/sys/devices/pci0000:00/host0/block/sda/device/vendor",
        "ATA\n",
    )
    .dev("pci0000:00/host0/block/sda/sda1", "sda1", "8:1", &[])
    .file(
        "/sys/devices/pci0000:00/host0/block/sda/sda1/partition",
        "1\n",
    )
    .file(
        "/sys/devices/pci0000:00/host0/block/sda/sda1/start",
        "2048\n",
    );
    f
}

fn tables(name: &str) -> TableRead {
    match name {
        "slow" => (
            vec![DmTarget::parse("0 2097152 delay 251:1 0 20").unwrap()],
            "DM_TABLE_STATUS ioctl".into(),
        ),
        "secret" => (
            vec![DmTarget::parse("0 2097152 crypt aes-xts-plain64 0123abcd 0 8:1 0").unwrap()],
            "dmsetup table (the DM_TABLE_STATUS ioctl failed: Permission denied)".into(),
        ),
        _ => (
            Vec::new(),
            "unread: the DM_TABLE_STATUS ioctl failed (No such device)".into(),
        ),
    }
}

#[test]
fn an_md_array_is_walked_down_to_its_physical_devices_each_layer_named() {
    let f = raid();
    let s = stack_at(f.sys(), 9, 0, &tables).unwrap();
    assert_eq!(s.target, "md0");
    let names: Vec<(&str, u32)> = s
        .layers
        .iter()
        .map(|l| (l.disk.as_str(), l.depth))
        .collect();
    assert_eq!(
        names,
        [
            ("md0", 0),
            ("dm-0", 1),
            ("dm-1", 1),
            ("nullb0", 1),
            ("nullb1", 2),
            ("sda1", 2),
            ("sda", 3)
        ]
    );
    assert_eq!(s.physical, ["nullb0", "nullb1", "sda"]);
    assert_eq!(s.above, ["dm-2"]);
    assert_raid0_of_three_one_faulty(&s.layers[0].kind);
    assert_eq!(s.layers[0].under, ["dm-0", "dm-1", "nullb0"]);
    assert_eq!(s.layers[0].device, "9:0");
    assert_crypt_named_secret(&s.layers[2].kind);
    match &s.layers[5].kind {
        LayerKind::Partition { of, start_sector } => {
            assert_eq!((of.as_str(), *start_sector), ("sda", Some(2048)))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.layers[6].kind,
        LayerKind::Physical {
            transport: "sata".into()
        }
    );
    assert_eq!(
        s.layers[3].kind,
        LayerKind::Physical {
            transport: "null_blk".into()
        }
    );
    assert!(s.notes.is_empty(), "{:?}", s.notes);
    assert!(s.is_stacked());
}

/// md0's layer: raid0, 512 KiB chunks, 3 disks, one of them faulty.
fn assert_raid0_of_three_one_faulty(kind: &LayerKind) {
    match kind {
        LayerKind::Md {
            level,
            chunk_bytes,
            raid_disks,
            degraded,
            members,
        } => {
            assert_eq!(level.as_deref(), Some("raid0"));
            assert_eq!(
                (*chunk_bytes, *raid_disks, *degraded),
                (Some(524288), Some(3), Some(1))
            );
            let m: Vec<(&str, Option<&str>, Option<u32>)> = members
                .iter()
                .map(|m| (m.disk.as_str(), m.state.as_deref(), m.slot))
                .collect();
            assert_eq!(
                m,
                [
                    ("dm-0", Some("in_sync"), Some(1)),
                    ("dm-1", Some("faulty"), None),
                    ("nullb0", Some("in_sync"), Some(0))
                ]
            );
        }
        other => panic!("{other:?}"),
    }
}

/// dm-1's layer: the dm-crypt device "secret", its key hidden.
fn assert_crypt_named_secret(kind: &LayerKind) {
    match kind {
        LayerKind::Dm {
            name,
            targets,
            table_source,
            cipher,
        } => {
            assert_eq!(name.as_deref(), Some("secret"));
            assert_eq!(targets[0].params, "aes-xts-plain64 - 0 8:1 0");
            assert!(table_source.starts_with("dmsetup table"));
            assert_eq!(cipher.as_deref(), Some("aes-xts-plain64"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_a_physical_device_has_a_request_queue_size_read_from_its_queue_directory() {
    let f = raid();
    f.file(
        "/sys/devices/virtual/block/nullb0/queue/nr_requests",
        "64\n",
    )
    .file("/sys/devices/virtual/block/md0/queue/nr_requests", "128\n")
    .file(
        "/sys/devices/pci0000:00/host0/block/sda/queue/nr_requests",
        "not a number\n",
    );
    let s = stack_at(f.sys(), 9, 0, &tables).unwrap();
    let of = |name: &str| {
        s.layers
            .iter()
            .find(|l| l.disk == name)
            .unwrap()
            .nr_requests
    };
    assert_eq!(of("nullb0"), Some(64));
    // md passes bios on: its nr_requests admits nothing.
    assert_eq!(of("md0"), None);
    // A text that is not a number, or no file, is no size.
    assert_eq!(of("sda"), None);
    assert_eq!(of("nullb1"), None);
}

#[test]
fn a_table_that_cannot_be_read_is_said_with_why() {
    let f = raid();
    let s = stack_at(f.sys(), 252, 2, &tables).unwrap();
    assert_eq!(s.target, "dm-2");
    assert_eq!(s.layers[1].disk, "md0");
    assert_eq!(s.notes.len(), 1);
    assert!(
        s.notes[0].contains("dm-2's table: unread") && s.notes[0].contains("No such device"),
        "{:?}",
        s.notes
    );
}

#[test]
fn a_loop_device_leads_to_the_disk_its_backing_file_is_on_and_a_lone_disk_is_no_stack() {
    let f = raid();
    // The backing file lies on this test's own file system: its device
    // number is put in the fake tree as a disk.
    f.file("/images/a.img", "x");
    let (maj, min) = major_minor(std::fs::metadata(f.at("/images/a.img")).unwrap().dev());
    f.dev("virtual/block/vdz", "vdz", &format!("{maj}:{min}"), &[])
        .dev("virtual/block/loop0", "loop0", "7:0", &[])
        .file(
            "/sys/devices/virtual/block/loop0/loop/backing_file",
            "/images/a.img\n",
        );
    let s = stack_at(f.sys(), 7, 0, &tables).unwrap();
    assert_eq!(
        s.layers[0].kind,
        LayerKind::Loop {
            backing_file: Some("/images/a.img".into())
        }
    );
    if maj != 0 {
        assert_eq!(s.layers[0].under, ["vdz"]);
        assert_eq!(s.physical, ["vdz"]);
    }
    let lone = stack_at(f.sys(), 251, 0, &tables).unwrap();
    assert!(!lone.is_stacked());
    assert!(stack_at(f.sys(), 1, 99, &tables).is_none());
}

#[test]
fn the_counters_over_a_run_are_the_kernels_after_less_before() {
    let f = raid();
    let disks: Vec<String> = ["md0", "nullb0", "sda1", "gone"].map(String::from).into();
    f.file(
        "/sys/devices/virtual/block/md0/stat",
        "100 1 800 40 5 0 40 3 0 30 43 0 0 0 0\n",
    )
    .file(
        "/sys/devices/virtual/block/nullb0/stat",
        "50 0 400 10 0 0 0 0 0 9 10\n",
    );
    let before = counters_at(f.sys(), &disks);
    assert_eq!(before.len(), 3, "a missing device is left out");
    f.file(
        "/sys/devices/virtual/block/md0/stat",
        "1100 3 8800 540 15 0 120 13 2 530 553 0 0 0 0\n",
    )
    .file(
        "/sys/devices/pci0000:00/host0/block/sda/sda1/stat",
        "7 0 56 1 0 0 0 0 0 1 1\n",
    );
    let after = counters_at(f.sys(), &disks);
    let d = deltas(&before, &after, 1000);
    assert_eq!(d.len(), 3);
    let md = &d[0];
    assert_eq!(
        (
            md.disk.as_str(),
            md.read_ios,
            md.read_merges,
            md.read_sectors
        ),
        ("md0", 1000, 2, 8000)
    );
    assert_eq!(
        (
            md.read_ticks_ms,
            md.write_ios,
            md.write_sectors,
            md.write_ticks_ms
        ),
        (500, 10, 80, 10)
    );
    assert_eq!(
        (md.io_ticks_ms, md.time_in_queue_ms, md.window_ms),
        (500, 510, 1000)
    );
    assert_eq!(d[1].ios(), 0);
    assert_eq!((d[2].disk.as_str(), d[2].read_ios), ("sda1", 7));
}
