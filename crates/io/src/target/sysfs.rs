//! Finding a block device in sysfs from a device number, and reading its
//! attributes (`/sys/dev/block/MAJ:MIN` → `/sys/devices/.../loop0`).

use std::path::{Path, PathBuf};

// Defined beside the check before a path is written, which names a
// refused block device by it.
pub use ssdready_written::major_minor;

/// A block device node as sysfs sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevNode {
    /// The device's own sysfs directory.
    pub dir: PathBuf,
    /// Its name (`loop0`, `vda1`).
    pub name: String,
    /// The whole disk it belongs to (itself unless a partition).
    pub disk: String,
    /// Whether it is a partition.
    pub is_partition: bool,
    /// "MAJ:MIN".
    pub devno: String,
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

impl DevNode {
    /// Look up `MAJ:MIN` in /sys/dev/block.
    pub fn from_major_minor(maj: u32, min: u32) -> Option<DevNode> {
        let devno = format!("{maj}:{min}");
        let dir = std::fs::canonicalize(format!("/sys/dev/block/{devno}")).ok()?;
        let name = dir.file_name()?.to_string_lossy().into_owned();
        let is_partition = dir.join("partition").exists();
        let disk = if is_partition {
            dir.parent()?.file_name()?.to_string_lossy().into_owned()
        } else {
            name.clone()
        };
        Some(DevNode {
            dir,
            name,
            disk,
            is_partition,
            devno,
        })
    }

    /// Look up a whole disk by name (`loop0`).
    pub fn from_disk_name(name: &str) -> Option<DevNode> {
        let dev = read_trim(&Path::new("/sys/block").join(name).join("dev"))?;
        let (a, b) = dev.split_once(':')?;
        DevNode::from_major_minor(a.parse().ok()?, b.parse().ok()?)
    }

    /// A partition's first sector on its disk; 0 for a whole disk.
    pub fn start_sector(&self) -> u64 {
        if !self.is_partition {
            return 0;
        }
        read_trim(&self.dir.join("start"))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    /// Size in bytes (sysfs counts 512-byte sectors).
    pub fn size_bytes(&self) -> u64 {
        read_trim(&self.dir.join("size"))
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
            * 512
    }

    /// An attribute of the whole disk, e.g. `queue/logical_block_size`.
    pub fn disk_attr(&self, rel: &str) -> Option<String> {
        read_trim(&Path::new("/sys/block").join(&self.disk).join(rel))
    }

    /// A numeric attribute of the whole disk.
    pub fn disk_attr_u64(&self, rel: &str) -> Option<u64> {
        self.disk_attr(rel)?.parse().ok()
    }

    /// The partitions of the whole disk (names).
    pub fn partitions(&self) -> Vec<String> {
        let base = Path::new("/sys/block").join(&self.disk);
        let mut v: Vec<String> = std::fs::read_dir(&base)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("partition").exists())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The devices stacked on top of this one (dm, md, …).
    pub fn holders(&self) -> Vec<String> {
        std::fs::read_dir(self.dir.join("holders"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn dev_t_split_matches_glibc() {
        assert_eq!(major_minor(0x0700), (7, 0));
        assert_eq!(major_minor(0x0703), (7, 3));
        assert_eq!(major_minor((259u64 << 8) | 1), (259, 1));
        assert_eq!(major_minor(0x0010_0300), (3, 256));
    }
}
