//! The block device under a directory, and its counters around a run.
//!
//! The directory's `st_dev` names the device (major:minor); `/sys/dev/block/
//! MAJ:MIN` leads to it, and a partition is resolved to the disk holding it
//! (its parent in sysfs), whose `/sys/block/X/stat` gives reads, writes,
//! sectors and (Linux 5.5 and later) flushes. A file system without a block
//! device (tmpfs, overlayfs, btrfs's anonymous device numbers, NFS) has none:
//! the result says so instead of giving figures.
//!
//! The counters are the whole disk's: other processes' I/O in the window is
//! counted too, so the figures are of a quiet machine or say what shares it.

use serde::Serialize;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The counters of a stat file that matter per application operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub discards: u64,
    /// None on kernels before 5.5 (15-field stat files).
    pub flushes: Option<u64>,
}

/// Parse `/sys/block/X/stat` (11, 15 or 17 fields; Documentation/block/stat.rst).
pub fn parse_stat(text: &str) -> Option<Counters> {
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 11 {
        return None;
    }
    Some(Counters {
        reads: v[0],
        read_sectors: v[2],
        writes: v[4],
        write_sectors: v[6],
        discards: v.get(11).copied().unwrap_or(0),
        flushes: v.get(15).copied(),
    })
}

/// The disk under a directory.
#[derive(Clone, Debug)]
pub struct Disk {
    /// The disk's name in /sys/block (e.g. `loop3`, `nvme0n1`).
    pub name: String,
    /// The partition the directory is on, when it is one.
    pub partition: Option<String>,
    stat: PathBuf,
}

/// Why there is no device figure: no disk under the directory, or its
/// counters could not be read. Cloned: a window keeps it for its end.
#[derive(Clone, Debug, thiserror::Error)]
pub enum DeviceError {
    /// The directory could not be looked at.
    #[error("{}: {err}", .dir.display())]
    Stat {
        dir: PathBuf,
        err: Arc<std::io::Error>,
    },
    #[error(
        "{} is on a file system without a block device (device {major}:{minor}: tmpfs, overlayfs, btrfs, a network or FUSE file system)",
        .dir.display()
    )]
    NoBlockDevice {
        dir: PathBuf,
        major: u64,
        minor: u64,
    },
    /// sysfs has no entry for the device number.
    #[error("{}: {err} (no block device {major}:{minor})", .link.display())]
    NoSysfsEntry {
        link: PathBuf,
        major: u64,
        minor: u64,
        err: Arc<std::io::Error>,
    },
    #[error("{} does not exist", .stat.display())]
    NoStatFile { stat: PathBuf },
    #[error("/sys/block/{disk}/stat could not be read")]
    Unreadable { disk: String },
}

/// Find the disk holding `dir`, or say why there is none.
pub fn disk_of(dir: &Path) -> Result<Disk, DeviceError> {
    disk_in(Path::new("/sys"), dir)
}

fn disk_in(sys: &Path, dir: &Path) -> Result<Disk, DeviceError> {
    let dev = std::fs::metadata(dir)
        .map_err(|e| DeviceError::Stat {
            dir: dir.to_path_buf(),
            err: Arc::new(e),
        })?
        .dev();
    let (major, minor) = split_dev(dev);
    if major == 0 {
        return Err(DeviceError::NoBlockDevice {
            dir: dir.to_path_buf(),
            major,
            minor,
        });
    }
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&link).map_err(|e| DeviceError::NoSysfsEntry {
        link: link.clone(),
        major,
        minor,
        err: Arc::new(e),
    })?;
    let own = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (disk_dir, partition) = if real.join("partition").exists() {
        let parent = real.parent().unwrap_or(&real).to_path_buf();
        (parent, Some(own))
    } else {
        (real, None)
    };
    let name = disk_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stat = disk_dir.join("stat");
    if !stat.exists() {
        return Err(DeviceError::NoStatFile { stat });
    }
    Ok(Disk {
        name,
        partition,
        stat,
    })
}

/// Linux's `dev_t` encoding (glibc's `gnu_dev_major`/`gnu_dev_minor`).
pub fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000);
    let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
    (major, minor)
}

impl Disk {
    /// The counters now.
    pub fn read(&self) -> Option<Counters> {
        parse_stat(&std::fs::read_to_string(&self.stat).ok()?)
    }
}

/// The device's side of a run, per operation of the application.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DeviceIo {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub discards: u64,
    /// Flush requests (None: the kernel's stat file has no flush fields).
    pub flushes: Option<u64>,
    /// Each of the above divided by the application's operations.
    pub per_op: PerOp,
    /// Device bytes written / application bytes written (None when the
    /// application wrote nothing).
    pub write_amplification: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PerOp {
    pub reads: f64,
    pub writes: f64,
    pub read_bytes: f64,
    pub write_bytes: f64,
    pub flushes: Option<f64>,
}

/// The difference of two snapshots, per `ops` application operations that
/// wrote `app_write_bytes`.
pub fn delta(disk: &Disk, a: &Counters, b: &Counters, ops: u64, app_write_bytes: u64) -> DeviceIo {
    let d = |x: u64, y: u64| y.saturating_sub(x);
    let flushes = match (a.flushes, b.flushes) {
        (Some(x), Some(y)) => Some(d(x, y)),
        _ => None,
    };
    let mut io = DeviceIo {
        name: disk.name.clone(),
        partition: disk.partition.clone(),
        reads: d(a.reads, b.reads),
        writes: d(a.writes, b.writes),
        read_bytes: d(a.read_sectors, b.read_sectors) * 512,
        write_bytes: d(a.write_sectors, b.write_sectors) * 512,
        discards: d(a.discards, b.discards),
        flushes,
        ..Default::default()
    };
    if ops > 0 {
        let n = ops as f64;
        io.per_op = PerOp {
            reads: io.reads as f64 / n,
            writes: io.writes as f64 / n,
            read_bytes: io.read_bytes as f64 / n,
            write_bytes: io.write_bytes as f64 / n,
            flushes: flushes.map(|f| f as f64 / n),
        };
    }
    if app_write_bytes > 0 {
        io.write_amplification = Some(io.write_bytes as f64 / app_write_bytes as f64);
    }
    io
}

/// Counters around a timed phase: `begin` before it, `end` after.
pub struct Window {
    disk: Result<Disk, DeviceError>,
    start: Option<Counters>,
}

impl Window {
    /// Find the disk under `dir` (the result says why when there is none).
    pub fn new(dir: &Path) -> Self {
        Window {
            disk: disk_of(dir),
            start: None,
        }
    }
    pub fn begin(&mut self) {
        self.start = self.disk.as_ref().ok().and_then(Disk::read);
    }
    /// The device's I/O since `begin`, or why there is no figure.
    pub fn end(&self, ops: u64, app_write_bytes: u64) -> Result<DeviceIo, DeviceError> {
        let disk = self.disk.as_ref().map_err(Clone::clone)?;
        let (Some(a), Some(b)) = (self.start, disk.read()) else {
            return Err(DeviceError::Unreadable {
                disk: disk.name.clone(),
            });
        };
        Ok(delta(disk, &a, &b, ops, app_write_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_flush_fields_is_parsed() {
        let c = parse_stat("  10 0 80 5 20 1 160 7 0 12 12 3 0 24 1 4 2\n").unwrap();
        assert_eq!(
            (c.reads, c.read_sectors, c.writes, c.write_sectors),
            (10, 80, 20, 160)
        );
        assert_eq!((c.discards, c.flushes), (3, Some(4)));
        let old = parse_stat("1 0 8 1 2 0 16 1 0 2 2").unwrap();
        assert_eq!(old.flushes, None);
        assert!(parse_stat("1 2 3").is_none());
    }

    #[test]
    fn dev_numbers_split_as_glibc() {
        // glibc's gnu_dev_makedev.
        let makedev = |ma: u64, mi: u64| {
            ((ma & 0xfff) << 8) | ((ma & !0xfff) << 32) | (mi & 0xff) | ((mi & !0xff) << 12)
        };
        assert_eq!(split_dev(0x0703), (7, 3));
        for (ma, mi) in [(259, 1), (8, 300), (4095, 1 << 19), (5000, 7)] {
            assert_eq!(split_dev(makedev(ma, mi)), (ma, mi));
        }
    }

    #[test]
    fn per_operation_figures_and_amplification() {
        let disk = Disk {
            name: "loop0".into(),
            partition: None,
            stat: PathBuf::new(),
        };
        let a = Counters {
            writes: 100,
            write_sectors: 800,
            flushes: Some(5),
            ..Default::default()
        };
        let b = Counters {
            writes: 300,
            write_sectors: 800 + 1600,
            flushes: Some(105),
            ..Default::default()
        };
        let io = delta(&disk, &a, &b, 100, 409_600);
        assert_eq!(
            (io.writes, io.write_bytes, io.flushes),
            (200, 819_200, Some(100))
        );
        assert_eq!(io.per_op.writes, 2.0);
        assert_eq!(io.per_op.flushes, Some(1.0));
        assert_eq!(io.write_amplification, Some(2.0));
    }

    #[test]
    fn a_directory_on_tmpfs_has_no_disk() {
        if let Ok(m) = std::fs::metadata("/dev/shm") {
            if split_dev(m.dev()).0 == 0 {
                let e = disk_of(Path::new("/dev/shm")).unwrap_err().to_string();
                assert!(e.contains("without a block device"), "{e}");
            }
        }
    }
}
