//! One reading of everything that can use a block device: every block
//! device and partition in sysfs (holders, slaves, loop backing files,
//! device-mapper and md names), the mount table (`/proc/self/mountinfo`)
//! and the swap table (`/proc/swaps`). The walk over it ([`super::walk`])
//! is pure, so both are tested on made-up trees.
//!
//! What a path refers to (a loop device's backing file, a mount's source, a
//! swap file) is asked of a [`Probe`], which on the real system is `stat(2)`
//! and the loop driver's `LOOP_GET_STATUS64`.

use ssdready_core::units::unescape_octal;
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A device number (major, minor).
pub type Devno = (u32, u32);

/// What a path names, by identity rather than by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileId {
    /// A block device node: the device it opens.
    Block(Devno),
    /// A regular file: its file system's device number and inode.
    File {
        /// `st_dev` of the file.
        dev: Devno,
        /// `st_ino` of the file.
        ino: u64,
    },
    /// Gone, unreachable or something else.
    Unknown,
}

/// Asks the system what paths and loop devices refer to.
pub trait Probe {
    /// What `path` is now.
    fn stat(&self, path: &str) -> FileId;
    /// What loop device `name` reads and writes; `backing_file` is sysfs's
    /// `loop/backing_file` (a path, possibly ending in " (deleted)").
    fn loop_backing(&self, name: &str, backing_file: &str) -> FileId;
}

/// A block device or partition as sysfs shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// Kernel name (`loop0`, `loop0p1`, `dm-0`).
    pub name: String,
    /// Its device number.
    pub devno: Devno,
    /// The whole disk, for a partition.
    pub parent: Option<String>,
    /// Its partitions (names), for a whole disk.
    pub partitions: Vec<String>,
    /// `holders/`: devices built on this one (dm, md, bcache).
    pub holders: Vec<String>,
    /// `slaves/`: devices this one is built on (dm, md).
    pub slaves: Vec<String>,
    /// For a configured loop device: its backing file's path and identity.
    pub backing: Option<(String, FileId)>,
    /// What the device is, where sysfs says (`device-mapper 'vg-lv'`).
    pub label: Option<String>,
}

/// One line of the mount table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// Field 3: the device number of the mounted file system.
    pub devno: Devno,
    /// Field 4: the directory of the file system mounted (not `/` for a bind
    /// mount of a subdirectory).
    pub root: String,
    /// Field 5: where it is mounted.
    pub mount_point: String,
    /// The file system type.
    pub fstype: String,
    /// The mount source (`/dev/loop3`); btrfs and others report an
    /// anonymous device number in field 3, so the source counts too.
    pub source: String,
    /// What the source is, when it is a path.
    pub source_id: FileId,
}

/// One line of the swap table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swap {
    /// The swap device or file, as the kernel names it.
    pub path: String,
    /// `partition` or `file`.
    pub kind: String,
    /// What the path is.
    pub id: FileId,
}

/// Everything read at one moment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Every block device and partition, by name.
    pub blocks: BTreeMap<String, Block>,
    /// The mount table.
    pub mounts: Vec<Mount>,
    /// The swap table.
    pub swaps: Vec<Swap>,
}

fn parse_devno(s: &str) -> Option<Devno> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Parse `/proc/self/mountinfo`; sources are identified through `probe`.
pub fn parse_mountinfo(text: &str, probe: &dyn Probe) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (head, tail) = line.split_once(" - ")?;
            let f: Vec<&str> = head.split(' ').collect();
            let t: Vec<&str> = tail.split(' ').collect();
            let source = unescape_octal(t.get(1)?);
            let source_id = if source.starts_with('/') {
                probe.stat(&source)
            } else {
                FileId::Unknown
            };
            Some(Mount {
                devno: parse_devno(f.get(2)?)?,
                root: unescape_octal(f.get(3)?),
                mount_point: unescape_octal(f.get(4)?),
                fstype: unescape_octal(t.first()?),
                source,
                source_id,
            })
        })
        .collect()
}

/// Parse `/proc/swaps` (a header line, then `path type size used prio`).
pub fn parse_swaps(text: &str, probe: &dyn Probe) -> Vec<Swap> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let path = unescape_octal(f.next()?);
            let kind = f.next().unwrap_or("").to_string();
            // A deleted swap file cannot be found by its path any more (and
            // another file may have its name now).
            let id = if path.ends_with(" (deleted)") {
                FileId::Unknown
            } else {
                probe.stat(&path)
            };
            Some(Swap { path, kind, id })
        })
        .collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn read_trim(p: &Path) -> Option<String> {
    Some(std::fs::read_to_string(p).ok()?.trim().to_string())
}

/// What sysfs says a device is: a device-mapper or md name.
fn label(dir: &Path) -> Option<String> {
    if let Some(n) = read_trim(&dir.join("dm/name")) {
        return Some(format!("device-mapper '{n}'"));
    }
    read_trim(&dir.join("md/level")).map(|l| format!("md {l}"))
}

/// Read one device directory (`/sys/class/block/NAME`, followed).
fn read_block(entry: &Path, probe: &dyn Probe) -> Option<Block> {
    let dir = std::fs::canonicalize(entry).ok()?;
    let name = entry.file_name()?.to_string_lossy().into_owned();
    let parent = if dir.join("partition").exists() {
        Some(dir.parent()?.file_name()?.to_string_lossy().into_owned())
    } else {
        None
    };
    let partitions = if parent.is_none() {
        names_in(&dir)
            .into_iter()
            .filter(|n| dir.join(n).join("partition").exists())
            .collect()
    } else {
        Vec::new()
    };
    let backing = read_trim(&dir.join("loop/backing_file"))
        .filter(|b| !b.is_empty())
        .map(|b| {
            let id = probe.loop_backing(&name, &b);
            (b, id)
        });
    Some(Block {
        devno: parse_devno(&read_trim(&dir.join("dev"))?)?,
        parent,
        partitions,
        holders: names_in(&dir.join("holders")),
        slaves: names_in(&dir.join("slaves")),
        backing,
        label: label(&dir),
        name,
    })
}

impl Snapshot {
    /// Read a sysfs tree rooted at `sys` (`/sys`) plus the given mount and
    /// swap tables.
    pub fn read(sys: &Path, mountinfo: &str, swaps: &str, probe: &dyn Probe) -> Snapshot {
        let blocks = names_in(&sys.join("class/block"))
            .into_iter()
            .filter_map(|n| read_block(&sys.join("class/block").join(&n), probe))
            .map(|b| (b.name.clone(), b))
            .collect();
        Snapshot {
            blocks,
            mounts: parse_mountinfo(mountinfo, probe),
            swaps: parse_swaps(swaps, probe),
        }
    }

    /// The running system's state.
    pub fn of_system() -> Snapshot {
        let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let sw = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
        Snapshot::read(Path::new("/sys"), &mi, &sw, &SystemProbe)
    }

    /// The device with number `devno`.
    pub fn by_devno(&self, devno: Devno) -> Option<&Block> {
        self.blocks.values().find(|b| b.devno == devno)
    }
}

/// [`Probe`] on the running system.
pub struct SystemProbe;

/// Identify the file behind an open descriptor or a path's metadata.
pub fn file_id(md: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let split = crate::target::sysfs::major_minor;
    if md.file_type().is_block_device() {
        FileId::Block(split(md.rdev()))
    } else if md.is_file() {
        FileId::File {
            dev: split(md.dev()),
            ino: md.ino(),
        }
    } else {
        FileId::Unknown
    }
}

impl Probe for SystemProbe {
    fn stat(&self, path: &str) -> FileId {
        std::fs::metadata(path)
            .map(|m| file_id(&m))
            .unwrap_or(FileId::Unknown)
    }

    fn loop_backing(&self, name: &str, backing_file: &str) -> FileId {
        match loop_status(&format!("/dev/{name}")) {
            Some(id) => id,
            None if backing_file.ends_with(" (deleted)") => FileId::Unknown,
            None => self.stat(backing_file),
        }
    }
}

/// `LOOP_GET_STATUS64` from linux/loop.h.
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// `struct loop_info64` from linux/loop.h.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// What the loop device at `dev_path` is backed by, as the driver knows it
/// (right even when the backing file was renamed, deleted or lies in
/// another mount namespace). None when it cannot be asked.
pub fn loop_status(dev_path: &str) -> Option<FileId> {
    use std::os::unix::io::AsRawFd;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(dev_path)
        .ok()?;
    // SAFETY: all-zero bytes are a valid LoopInfo64 (integers and arrays).
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64, which
    // LoopInfo64 matches field for field, through a pointer we own.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    if rc != 0 {
        return None;
    }
    let split = crate::target::sysfs::major_minor;
    Some(if info.lo_rdevice != 0 {
        FileId::Block(split(info.lo_rdevice))
    } else {
        FileId::File {
            dev: split(info.lo_device),
            ino: info.lo_inode,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::FakeProbe;
    use super::*;

    #[test]
    fn loop_info64_has_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
    }

    #[test]
    fn a_regular_file_has_no_loop_status() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        assert!(loop_status(p.to_str().unwrap()).is_none());
    }

    #[test]
    fn octal_escapes_are_undone() {
        assert_eq!(unescape_octal(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(unescape_octal(r"/x\134y\011z"), "/x\\y\tz");
        assert_eq!(unescape_octal(r"/trailing\04"), r"/trailing\04");
        assert_eq!(unescape_octal("/plain"), "/plain");
    }

    #[test]
    fn mountinfo_fields_and_optional_tags_are_read() {
        let text = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
61 27 7:1 / /mnt/with\\040space rw,noatime shared:30 master:2 - ext4 /dev/loop1 rw
62 27 7:1 /sub /mnt/bind rw,noatime shared:30 - ext4 /dev/loop1 rw
70 27 0:55 / /mnt/btr rw - btrfs /dev/loop2 rw,space_cache=v2
garbage line
";
        let probe = FakeProbe(vec![
            ("/dev/loop1", FileId::Block((7, 1))),
            ("/dev/loop2", FileId::Block((7, 2))),
        ]);
        let m = parse_mountinfo(text, &probe);
        assert_eq!(m.len(), 4);
        assert_eq!(m[1].devno, (7, 1));
        assert_eq!(m[1].mount_point, "/mnt/with space");
        assert_eq!(m[1].fstype, "ext4");
        assert_eq!(m[2].root, "/sub");
        assert_eq!(m[3].devno, (0, 55));
        assert_eq!(m[3].source_id, FileId::Block((7, 2)));
        assert_eq!(m[0].source_id, FileId::Unknown);
    }

    #[test]
    fn swaps_are_read_with_their_kind_and_identity() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
/dev/loop4                              partition\t32764\t\t0\t\t-2\n\
/mnt/my\\040swap                        file\t\t1020\t\t0\t\t-3\n\
/mnt/old\\040(deleted)                  file\t\t1020\t\t0\t\t-4\n";
        let probe = FakeProbe(vec![
            ("/dev/loop4", FileId::Block((7, 4))),
            (
                "/mnt/my swap",
                FileId::File {
                    dev: (7, 1),
                    ino: 12,
                },
            ),
            ("/mnt/old", FileId::Block((1, 1))),
            ("/mnt/old (deleted)", FileId::Block((1, 1))),
        ]);
        let s = parse_swaps(text, &probe);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].id, FileId::Block((7, 4)));
        assert_eq!(s[0].kind, "partition");
        assert_eq!(s[1].path, "/mnt/my swap");
        assert_eq!(
            s[1].id,
            FileId::File {
                dev: (7, 1),
                ino: 12
            }
        );
        assert_eq!(s[2].path, "/mnt/old (deleted)");
        assert_eq!(s[2].id, FileId::Unknown, "a deleted file is not looked up");
    }
}
