//! The walk over made-up sysfs trees: stacks that this kernel cannot build
//! (device-mapper, md) and the loop, partition, mount and swap cases, each
//! checked for the exact sentence a user reads.

use super::snapshot::{FileId, Probe, Snapshot};
use super::walk::{users_of_device, users_of_file};
use std::path::{Path, PathBuf};

/// Paths → identities.
pub struct FakeProbe(pub Vec<(&'static str, FileId)>);

impl Probe for FakeProbe {
    fn stat(&self, path: &str) -> FileId {
        self.0
            .iter()
            .find(|(p, _)| *p == path)
            .map(|x| x.1)
            .unwrap_or(FileId::Unknown)
    }
    fn loop_backing(&self, _name: &str, backing_file: &str) -> FileId {
        self.stat(backing_file)
    }
}

/// A sysfs tree laid out as the kernel does: devices under
/// `devices/virtual/block`, partitions inside their disk, links in
/// `class/block`.
struct FakeSys {
    dir: tempfile::TempDir,
}

impl FakeSys {
    fn new() -> FakeSys {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("class/block")).unwrap();
        FakeSys { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn node(&self, rel: &str, name: &str, devno: &str) -> PathBuf {
        let d = self.root().join("devices/virtual/block").join(rel);
        for sub in ["holders", "slaves"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        std::fs::write(d.join("dev"), format!("{devno}\n")).unwrap();
        std::os::unix::fs::symlink(&d, self.root().join("class/block").join(name)).unwrap();
        d
    }

    fn disk(&self, name: &str, devno: &str) -> &Self {
        self.node(name, name, devno);
        self
    }

    fn part(&self, disk: &str, name: &str, devno: &str) -> &Self {
        let d = self.node(&format!("{disk}/{name}"), name, devno);
        std::fs::write(d.join("partition"), "1\n").unwrap();
        self
    }

    fn dir_of(&self, name: &str) -> PathBuf {
        std::fs::canonicalize(self.root().join("class/block").join(name)).unwrap()
    }

    /// `upper` is built on `lower`: holders and slaves both say so.
    fn stack(&self, lower: &str, upper: &str) -> &Self {
        std::fs::write(self.dir_of(lower).join("holders").join(upper), "").unwrap();
        std::fs::write(self.dir_of(upper).join("slaves").join(lower), "").unwrap();
        self
    }

    fn attr(&self, name: &str, rel: &str, value: &str) -> &Self {
        let p = self.dir_of(name).join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{value}\n")).unwrap();
        self
    }

    fn backing(&self, name: &str, file: &str) -> &Self {
        self.attr(name, "loop/backing_file", file)
    }

    fn snapshot(&self, mountinfo: &str, swaps: &str, probe: &FakeProbe) -> Snapshot {
        Snapshot::read(self.root(), mountinfo, swaps, probe)
    }
}

const SWAPS_HEADER: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

fn mount_line(devno: &str, root: &str, at: &str, fstype: &str, source: &str) -> String {
    format!("100 1 {devno} {root} {at} rw,noatime shared:1 - {fstype} {source} rw\n")
}

fn found(snap: &Snapshot, name: &str) -> Vec<String> {
    users_of_device(snap, name)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn loop_over_a_loop_at_an_offset_is_found_with_its_mount() {
    let s = FakeSys::new();
    s.disk("loop0", "7:0")
        .disk("loop1", "7:1")
        .disk("loop2", "7:2");
    s.backing("loop0", "/dev/shm/a.img")
        .backing("loop1", "/dev/loop0");
    s.attr("loop1", "loop/offset", "1048576");
    let probe = FakeProbe(vec![
        ("/dev/loop0", FileId::Block((7, 0))),
        ("/dev/loop1", FileId::Block((7, 1))),
        (
            "/dev/shm/a.img",
            FileId::File {
                dev: (0, 30),
                ino: 5,
            },
        ),
    ]);
    let mi = mount_line("7:1", "/", "/mnt/x", "ext4", "/dev/loop1");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    assert_eq!(
        found(&snap, "loop0"),
        ["/dev/loop0 is the backing file of /dev/loop1 (loop), which is mounted at /mnt/x (mountinfo)"]
    );
    // The same stack unmounted: the loop device is a user by itself.
    let snap = s.snapshot("", SWAPS_HEADER, &probe);
    assert_eq!(
        found(&snap, "loop0"),
        ["/dev/loop0 is the backing file of /dev/loop1 (loop)"]
    );
    assert!(
        found(&snap, "loop2").is_empty(),
        "an unrelated device is free"
    );
}

#[test]
fn a_chain_three_deep_and_a_partitioned_top_are_followed() {
    let s = FakeSys::new();
    s.disk("loop0", "7:0")
        .disk("loop1", "7:1")
        .disk("loop2", "7:2");
    s.part("loop2", "loop2p1", "259:0")
        .part("loop2", "loop2p2", "259:1");
    s.backing("loop1", "/dev/loop0")
        .backing("loop2", "/dev/loop1");
    let probe = FakeProbe(vec![
        ("/dev/loop0", FileId::Block((7, 0))),
        ("/dev/loop1", FileId::Block((7, 1))),
        ("/dev/loop2p2", FileId::Block((259, 1))),
    ]);
    let mi = mount_line("259:1", "/", "/mnt/p2", "ext4", "/dev/loop2p2");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    assert_eq!(
        found(&snap, "loop0"),
        ["/dev/loop0 is the backing file of /dev/loop1 (loop), which is the backing file of /dev/loop2 \
          (loop), which has partition /dev/loop2p2 (partitions), which is mounted at /mnt/p2 (mountinfo)"]
    );
}

#[test]
fn device_mapper_on_a_partition_is_found_by_holders_and_slaves() {
    let s = FakeSys::new();
    s.disk("sdb", "8:16")
        .part("sdb", "sdb1", "8:17")
        .part("sdb", "sdb2", "8:18");
    s.disk("dm-0", "253:0")
        .attr("dm-0", "dm/name", "vg-data")
        .stack("sdb1", "dm-0");
    let probe = FakeProbe(vec![]);
    let mi = mount_line("253:0", "/", "/srv", "xfs", "/dev/mapper/vg-data");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    let via = "is held by /dev/dm-0 (device-mapper 'vg-data') (holders, slaves), which is mounted at /srv (mountinfo)";
    assert_eq!(found(&snap, "sdb1"), [format!("/dev/sdb1 {via}")]);
    assert_eq!(
        found(&snap, "sdb"),
        [format!(
            "/dev/sdb has partition /dev/sdb1 (partitions), which {via}"
        )]
    );
    assert!(
        found(&snap, "sdb2").is_empty(),
        "a sibling partition is free"
    );
    // Writing the dm device itself: what it is built on is checked too.
    assert_eq!(
        found(&snap, "dm-0"),
        ["/dev/dm-0 is mounted at /srv (mountinfo)"]
    );
}

#[test]
fn md_members_are_found_even_with_only_slaves_listed() {
    let s = FakeSys::new();
    s.disk("loop1", "7:1")
        .disk("loop2", "7:2")
        .disk("md0", "9:0");
    s.attr("md0", "md/level", "raid1").stack("loop1", "md0");
    // loop2's holders entry missing: md0's slaves/ still names it.
    std::fs::write(s.dir_of("md0").join("slaves/loop2"), "").unwrap();
    let snap = s.snapshot("", SWAPS_HEADER, &FakeProbe(vec![]));
    assert_eq!(
        found(&snap, "loop1"),
        ["/dev/loop1 is held by /dev/md0 (md raid1) (holders, slaves)"]
    );
    assert_eq!(
        found(&snap, "loop2"),
        ["/dev/loop2 is held by /dev/md0 (md raid1) (slaves)"]
    );
}

#[test]
fn a_holder_missing_from_class_block_is_still_a_user() {
    let s = FakeSys::new();
    s.disk("loop1", "7:1");
    std::fs::write(s.dir_of("loop1").join("holders/bcache0"), "").unwrap();
    let snap = s.snapshot("", SWAPS_HEADER, &FakeProbe(vec![]));
    assert_eq!(
        found(&snap, "loop1"),
        ["/dev/loop1 is held by /dev/bcache0 (holders)"]
    );
}

#[test]
fn a_partition_is_checked_through_its_disk_but_not_its_siblings() {
    let s = FakeSys::new();
    s.disk("loop0", "7:0")
        .part("loop0", "loop0p1", "259:0")
        .part("loop0", "loop0p2", "259:1");
    s.disk("loop5", "7:5").backing("loop5", "/dev/loop0");
    let probe = FakeProbe(vec![
        ("/dev/loop0", FileId::Block((7, 0))),
        ("/dev/loop0p1", FileId::Block((259, 0))),
    ]);
    let mi = mount_line("259:0", "/", "/mnt/p1", "ext4", "/dev/loop0p1");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    assert_eq!(
        found(&snap, "loop0p2"),
        ["/dev/loop0p2 is a partition of /dev/loop0 (partitions), which is the backing file of /dev/loop5 (loop)"]
    );
    s.attr("loop5", "loop/backing_file", "/dev/shm/other.img");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    assert!(
        found(&snap, "loop0p2").is_empty(),
        "p1's mount does not touch p2"
    );
    assert_eq!(
        found(&snap, "loop0p1"),
        ["/dev/loop0p1 is mounted at /mnt/p1 (mountinfo)"]
    );
}

#[test]
fn a_loop_over_a_busy_device_and_two_loops_over_one_file_are_found_downwards() {
    let s = FakeSys::new();
    s.disk("loop1", "7:1")
        .disk("loop3", "7:3")
        .disk("loop4", "7:4")
        .disk("loop6", "7:6");
    s.backing("loop3", "/dev/loop1");
    s.backing("loop4", "/dev/shm/f.img")
        .backing("loop6", "/dev/shm/f.img");
    let img = FileId::File {
        dev: (0, 30),
        ino: 9,
    };
    let probe = FakeProbe(vec![
        ("/dev/loop1", FileId::Block((7, 1))),
        ("/dev/loop6", FileId::Block((7, 6))),
        ("/dev/shm/f.img", img),
    ]);
    let mi = mount_line("7:1", "/", "/mnt/one", "ext4", "/dev/loop1")
        + &mount_line("7:6", "/", "/mnt/six", "ext4", "/dev/loop6");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    assert_eq!(
        found(&snap, "loop3"),
        ["/dev/loop3 is backed by /dev/loop1 (loop), which is mounted at /mnt/one (mountinfo)"]
    );
    assert_eq!(
        found(&snap, "loop4"),
        ["/dev/loop4 is backed by /dev/shm/f.img (loop), which is the backing file of /dev/loop6 (loop), \
          which is mounted at /mnt/six (mountinfo)"]
    );
    let f: Vec<String> = users_of_file(&snap, img, "/dev/shm/f.img")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        f,
        [
            "/dev/shm/f.img is the backing file of /dev/loop4 (loop)",
            "/dev/shm/f.img is the backing file of /dev/loop6 (loop), which is mounted at /mnt/six (mountinfo)"
        ]
    );
}

#[test]
fn files_on_the_devices_file_system_count_even_when_it_is_lazily_unmounted() {
    let s = FakeSys::new();
    s.disk("loop1", "7:1")
        .disk("loop3", "7:3")
        .backing("loop3", "/mnt/fs/disk.img");
    let probe = FakeProbe(vec![
        (
            "/mnt/fs/disk.img",
            FileId::File {
                dev: (7, 1),
                ino: 12,
            },
        ),
        (
            "/mnt/fs/swapfile",
            FileId::File {
                dev: (7, 1),
                ino: 13,
            },
        ),
    ]);
    let swaps = format!("{SWAPS_HEADER}/mnt/fs/swapfile  file  1020  0  -2\n");
    let snap = s.snapshot("", &swaps, &probe);
    assert_eq!(
        found(&snap, "loop1"),
        [
            "/dev/loop1 holds /mnt/fs/disk.img, the backing file of /dev/loop3 (loop)",
            "/dev/loop1 holds /mnt/fs/swapfile, which is in use as swap (swaps)"
        ]
    );
}

#[test]
fn bind_mounts_and_btrfs_style_anonymous_device_numbers_are_found() {
    let s = FakeSys::new();
    s.disk("loop1", "7:1")
        .disk("loop2", "7:2")
        .disk("loop3", "7:3");
    s.backing("loop3", "/mnt/b/img");
    let probe = FakeProbe(vec![
        ("/dev/loop2", FileId::Block((7, 2))),
        (
            "/mnt/b/img",
            FileId::File {
                dev: (0, 77),
                ino: 257,
            },
        ),
    ]);
    let mi = mount_line("7:1", "/data", "/srv/bound", "ext4", "/dev/loop1")
        + &mount_line("0:77", "/", "/mnt/b", "btrfs", "/dev/loop2");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    assert_eq!(
        found(&snap, "loop1"),
        ["/dev/loop1 is mounted at /srv/bound (bind of /data) (mountinfo)"]
    );
    assert_eq!(
        found(&snap, "loop2"),
        [
            "/dev/loop2 is mounted at /mnt/b (mountinfo)",
            "/dev/loop2 holds /mnt/b/img, the backing file of /dev/loop3 (loop)"
        ]
    );
}

#[test]
fn swap_on_a_partition_or_a_loop_over_the_device_is_found() {
    let s = FakeSys::new();
    s.disk("loop0", "7:0").part("loop0", "loop0p1", "259:0");
    s.disk("loop1", "7:1")
        .disk("loop2", "7:2")
        .backing("loop2", "/dev/loop1");
    let probe = FakeProbe(vec![
        ("/dev/loop0p1", FileId::Block((259, 0))),
        ("/dev/loop1", FileId::Block((7, 1))),
        ("/dev/loop2", FileId::Block((7, 2))),
    ]);
    let swaps = format!(
        "{SWAPS_HEADER}/dev/loop0p1  partition  1020  0  -2\n/dev/loop2  partition  1020  0  -3\n"
    );
    let snap = s.snapshot("", &swaps, &probe);
    assert_eq!(
        found(&snap, "loop0"),
        ["/dev/loop0 has partition /dev/loop0p1 (partitions), which is in use as swap (swaps)"]
    );
    assert_eq!(
        found(&snap, "loop1"),
        ["/dev/loop1 is the backing file of /dev/loop2 (loop), which is in use as swap (swaps)"]
    );
}

#[test]
fn a_mounted_file_system_or_a_mounted_loops_backing_file_is_told_from_other_users() {
    let s = FakeSys::new();
    s.disk("loop1", "7:1")
        .disk("loop4", "7:4")
        .disk("loop6", "7:6");
    s.backing("loop4", "/dev/shm/f.img")
        .backing("loop6", "/dev/shm/g.img");
    let (f, g) = (
        FileId::File {
            dev: (0, 30),
            ino: 9,
        },
        FileId::File {
            dev: (0, 30),
            ino: 10,
        },
    );
    let probe = FakeProbe(vec![
        ("/dev/loop1", FileId::Block((7, 1))),
        ("/dev/loop4", FileId::Block((7, 4))),
        ("/dev/loop6", FileId::Block((7, 6))),
        ("/dev/shm/f.img", f),
        ("/dev/shm/g.img", g),
    ]);
    let mi = mount_line("7:1", "/", "/mnt/one", "ext4", "/dev/loop1")
        + &mount_line("7:6", "/", "/mnt/six", "ext4", "/dev/loop6");
    let snap = s.snapshot(&mi, SWAPS_HEADER, &probe);
    let mounted = |v: Vec<super::walk::Finding>| v.iter().any(super::is_mount);
    // A device holding a mounted file system.
    assert!(mounted(users_of_device(&snap, "loop1")));
    // The backing file of a mounted loop device; of an unmounted one: a
    // user, but no mounted file system.
    assert!(mounted(users_of_file(&snap, g, "/dev/shm/g.img")));
    let loose = users_of_file(&snap, f, "/dev/shm/f.img");
    assert_eq!(loose.len(), 1);
    assert!(!mounted(loose));
}
