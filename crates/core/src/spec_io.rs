//! How a job treats its files beyond reads and writes, as fio does: syncs
//! during and after the job (`fsync`, `fdatasync`, `end_fsync`,
//! `fsync_on_close`), the open flags that make every write synchronous
//! (`sync`), the page-cache hints (`fadvise_hint`), how a file is created
//! (`fallocate`, `create_on_open`, `overwrite`), reading it into the cache
//! first (`pre_read`) and removing it between loops (`unlink_each_loop`).
//! The think-time variants (`thinktime_spin`, `thinktime_blocks_type`,
//! `thinktime_iotime`) are described with [`ThinkBlocksType`].

use serde::{Deserialize, Serialize};

/// `sync=`: the flags every descriptor of the job is opened with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncIo {
    /// Ordinary writes (`none`, `0`).
    #[default]
    None,
    /// `O_SYNC` (`sync`, `1`): each write returns once data and metadata are stable.
    Sync,
    /// `O_DSYNC` (`dsync`): each write returns once its data is stable.
    Dsync,
}

/// `fallocate=`: how a file ssdready creates or extends is allocated
/// before anything is written to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallocate {
    /// No preallocation (`none`, `0`).
    None,
    /// `fallocate(2)` mode 0 (fio's default), quietly skipped where the
    /// file system has none.
    #[default]
    Native,
    /// `posix_fallocate(3)` (`posix`, `1`).
    Posix,
    /// `fallocate(2)` with `FALLOC_FL_KEEP_SIZE` (`keep`): blocks reserved,
    /// size unchanged.
    Keep,
    /// `ftruncate(2)` to the size (`truncate`): a sparse file.
    Truncate,
}

/// `fadvise_hint=`: the access-pattern hint given with `posix_fadvise(2)`
/// when a file is opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    /// No hint (`0`).
    None,
    /// `POSIX_FADV_RANDOM` for random jobs, `SEQUENTIAL` otherwise (`1`,
    /// fio's default): turns off the kernel's read-ahead for random reads.
    #[default]
    ByPattern,
    /// `POSIX_FADV_RANDOM`.
    Random,
    /// `POSIX_FADV_SEQUENTIAL`.
    Sequential,
}

/// `thinktime_blocks_type=`: what `thinktime_blocks` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkBlocksType {
    /// Completed I/Os (fio 3.33's default).
    #[default]
    Complete,
    /// Issued I/Os.
    Issue,
}

/// The file options of a job (fio's names in each field's docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileSpec {
    /// `fsync=N`: an `fsync(2)` after every N writes (0: never).
    pub fsync_every: u32,
    /// `fdatasync=N`: an `fdatasync(2)` after every N writes (0: never).
    pub fdatasync_every: u32,
    /// `end_fsync`: fsync every file when each pass of the job ends.
    pub end_fsync: bool,
    /// `fsync_on_close`: fsync every file when the job closes it (each pass).
    pub fsync_on_close: bool,
    /// `sync`: open flags.
    pub sync_io: SyncIo,
    /// `write_barrier=N`: mark every Nth write a barrier; only fio's libpmem
    /// engine honours it, so here (as with fio's psync, libaio and
    /// io_uring) it changes nothing.
    pub write_barrier: u32,
    /// `fallocate`.
    pub fallocate: Fallocate,
    /// `fadvise_hint`.
    pub fadvise: Fadvise,
    /// `pre_read`: read the job's region into the page cache before the
    /// job starts (and do not drop it: `invalidate` is off).
    pub pre_read: bool,
    /// `create_on_open`: do not lay files out; the job's open creates them.
    pub create_on_open: bool,
    /// `unlink_each_loop`: remove the job's files before each loop after
    /// the first (the loop's open creates them again, empty).
    pub unlink_each_loop: bool,
    /// `overwrite`: lay out (write) a new file before a job that only
    /// writes it; without it (fio's default) such a file is only allocated.
    pub overwrite: bool,
    /// `stat_type`: the call of fio's filestat engine.
    #[serde(default)]
    pub stat_type: StatType,
    /// `thp`: the mmap engine's mapping asks for transparent huge pages
    /// (`MADV_HUGEPAGE`) and is private (fio's `MAP_PRIVATE` with thp:
    /// writes then do not reach the file).
    #[serde(default)]
    pub thp: bool,
}

/// fio's `stat_type` (an option of the filestat engine).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatType {
    /// `stat(2)`, fio's default.
    #[default]
    Stat,
    /// `lstat(2)`.
    Lstat,
    /// `statx(2)` of the file's absolute path.
    Statx,
}

impl Default for FileSpec {
    fn default() -> Self {
        FileSpec {
            fsync_every: 0,
            fdatasync_every: 0,
            end_fsync: false,
            fsync_on_close: false,
            sync_io: SyncIo::None,
            write_barrier: 0,
            fallocate: Fallocate::Native,
            fadvise: Fadvise::ByPattern,
            pre_read: false,
            create_on_open: false,
            unlink_each_loop: false,
            overwrite: false,
            stat_type: StatType::Stat,
            thp: false,
        }
    }
}

use crate::spec_types::NotOneOf;

impl FileSpec {
    /// Parse `sync=`.
    pub fn parse_sync(v: &str) -> Result<SyncIo, NotOneOf> {
        match v.trim() {
            "0" | "none" => Ok(SyncIo::None),
            "1" | "sync" => Ok(SyncIo::Sync),
            "dsync" => Ok(SyncIo::Dsync),
            _ => Err(NotOneOf::new(v, "a sync mode")),
        }
    }

    /// Parse `fallocate=`.
    pub fn parse_fallocate(v: &str) -> Result<Fallocate, NotOneOf> {
        match v.trim() {
            "none" | "0" => Ok(Fallocate::None),
            "native" => Ok(Fallocate::Native),
            "posix" | "1" => Ok(Fallocate::Posix),
            "keep" => Ok(Fallocate::Keep),
            "truncate" => Ok(Fallocate::Truncate),
            _ => Err(NotOneOf::new(v, "a fallocate mode")),
        }
    }

    /// Parse `fadvise_hint=`.
    pub fn parse_fadvise(v: &str) -> Result<Fadvise, NotOneOf> {
        match v.trim() {
            "0" => Ok(Fadvise::None),
            "1" => Ok(Fadvise::ByPattern),
            "random" => Ok(Fadvise::Random),
            "sequential" => Ok(Fadvise::Sequential),
            _ => Err(NotOneOf::new(v, "an fadvise hint")),
        }
    }

    /// Whether anything syncs while or after the job writes.
    pub fn syncs(&self) -> bool {
        self.fsync_every > 0 || self.fdatasync_every > 0 || self.end_fsync || self.fsync_on_close
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_spellings_parse() {
        assert_eq!(FileSpec::parse_sync("1"), Ok(SyncIo::Sync));
        assert_eq!(FileSpec::parse_sync("dsync"), Ok(SyncIo::Dsync));
        assert_eq!(FileSpec::parse_fallocate("1"), Ok(Fallocate::Posix));
        assert_eq!(FileSpec::parse_fallocate("0"), Ok(Fallocate::None));
        assert_eq!(FileSpec::parse_fallocate("keep"), Ok(Fallocate::Keep));
        assert_eq!(
            FileSpec::parse_fadvise("sequential"),
            Ok(Fadvise::Sequential)
        );
        assert!(FileSpec::parse_fallocate("yes").is_err());
        assert!(FileSpec::parse_sync("2").is_err());
    }
}

/// fio's `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`): I/O
/// stays in one zone of `range` bytes until `size` bytes were moved there,
/// then jumps `range + skip` ahead, wrapping to the region's start at the
/// end of the target (fio's io_u.c `setup_strided_zone_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StridedZones {
    /// `zonemode=strided` asked (or implied by `zonesize` without a mode).
    pub mode: ZoneMode,
    /// `zonesize`: bytes moved in a zone before the next (0: not set).
    pub size: u64,
    /// `zonerange`: the zone's length (0: `zonesize`'s).
    pub range: u64,
    /// `zoneskip`: bytes skipped after each zone.
    pub skip: u64,
}

/// fio's `zonemode` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneMode {
    /// Not given: `zonesize` alone means strided, as in fio.
    #[default]
    Unset,
    /// `none`.
    None,
    /// `strided`.
    Strided,
    /// `zbd`: zoned block devices (`ssdready_workload::zbd`).
    Zbd,
}

impl StridedZones {
    /// The zones in effect, as fio's fixup_options settles them: (size,
    /// range, skip), or None when the job has no strided zones.
    pub fn active(&self) -> Option<(u64, u64, u64)> {
        let on = match self.mode {
            ZoneMode::Strided => true,
            ZoneMode::Unset => self.size > 0,
            ZoneMode::None | ZoneMode::Zbd => false,
        };
        (on && self.size > 0).then(|| {
            let range = if self.range == 0 {
                self.size
            } else {
                self.range
            };
            (self.size, range, self.skip)
        })
    }
}
