//! What a target is, below the steps that resolve, lay out and open one
//! ([`super`]) and the page cache's handling of it ([`super::cache`]): its
//! kind ([`TargetKind`]), the resolved target ([`Target`]) with where its
//! I/O lands on a device ([`SectorMap`]), what the job wants of it
//! ([`TargetNeeds`]) and why one cannot be used ([`TargetError`]).

use super::{fiemap, sysfs};
use std::fs::File;
use std::path::PathBuf;

/// What kind of thing a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// A regular file (existing or to be created).
    File,
    /// A block device node.
    Block,
    /// A device-DAX character device (`/dev/daxX.Y`, fio's dev-dax
    /// engine: [`crate::engines::devdax::resolve`]).
    Dax,
}

impl TargetKind {
    /// `file` or `block`.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::Block => "block",
            TargetKind::Dax => "dax",
        }
    }
}

/// A resolved target.
#[derive(Clone, Debug)]
pub struct Target {
    /// The path as given.
    pub path: PathBuf,
    /// File or block device.
    pub kind: TargetKind,
    /// Current size in bytes (0 for a file that does not exist yet).
    pub size: u64,
    /// Logical block size that O_DIRECT I/O must be aligned to.
    pub logical_block_size: u64,
    /// The whole-disk block device name (`loop0`) the I/O reaches, if any.
    pub device: Option<String>,
    /// Whether the target is a block device that supports discard.
    pub discard: bool,
    /// How an offset in the target becomes a sector of a block device, for
    /// joining an I/O with the kernel's record of it (`--decompose`): set for
    /// block devices, and for files (from their extent map) after layout.
    pub sector_map: Option<SectorMap>,
    /// For a block device, its number as checked: every descriptor opened
    /// later must reach the same device.
    pub devno: Option<(u32, u32)>,
    /// Exclusive opens held for the run (a job that writes a block device):
    /// while they are open nothing can mount the device or build on it.
    pub claims: Vec<std::sync::Arc<File>>,
    /// What `--allow-destructive` overrode, to be given as a warning.
    pub overridden: Option<String>,
}

/// Offset → (device, sector): where the block layer will see an I/O.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectorMap {
    /// The device number as the kernel writes it (`MKDEV`: major << 20 |
    /// minor): the partition's when there is one, as `bio->bi_bdev` says.
    pub kernel_dev: u32,
    /// The partition's first sector on its disk (0 for a whole disk): the
    /// block layer reports whole-disk sectors.
    pub start_sector: u64,
    /// For a file, its extent map on the device; None for a block device.
    pub extents: Option<std::sync::Arc<[fiemap::Extent]>>,
}

impl SectorMap {
    /// The map of device `maj:min` (`dev` in sysfs), through a file's
    /// `extents` when given.
    pub(super) fn new(
        maj: u32,
        min: u32,
        dev: &sysfs::DevNode,
        extents: Option<Vec<fiemap::Extent>>,
    ) -> Self {
        SectorMap {
            kernel_dev: maj << 20 | min,
            start_sector: dev.start_sector(),
            extents: extents.map(Into::into),
        }
    }

    /// The sector the block layer will report for byte `offset`, if known.
    #[inline]
    pub fn sector(&self, offset: u64) -> Option<u64> {
        let byte = match &self.extents {
            None => offset,
            Some(x) => fiemap::locate(x, offset)?,
        };
        Some(self.start_sector + byte / 512)
    }
}

/// Why a target cannot be used. Every message names the path.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The request itself is wrong (bad path, size, alignment): exit code 2.
    #[error("{0}")]
    Invalid(String),
    /// Writing would destroy data and --allow-destructive was not given.
    #[error("{0}")]
    Refused(String),
    /// An operating-system error while preparing.
    #[error("{path}: {source}")]
    Io {
        /// The target.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// What the job wants of a target.
#[derive(Clone, Copy, Debug)]
pub struct TargetNeeds {
    /// Bytes the job needs from offset 0 (offset + region), if known.
    pub bytes: Option<u64>,
    /// The job's first byte on the target (its region's start).
    pub offset: u64,
    /// Whether the job writes or trims.
    pub modifies: bool,
    /// Whether --allow-destructive was given.
    pub allow_destructive: bool,
    /// Whether fio's `allow_mounted_write=1` was given: with
    /// `allow_destructive`, a target holding a mounted file system (or the
    /// backing file of a mounted loop device) may be written.
    pub allow_mounted_write: bool,
}
