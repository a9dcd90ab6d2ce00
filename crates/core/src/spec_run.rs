//! How a job's worker runs, beyond its I/O pattern (fio's options of the
//! same names):
//!
//! * `iodepth_low`: once the queue is full, let it drain to this depth
//!   before filling it again (fio's refill watermark; default: iodepth);
//! * `max_latency`: a read, write or trim whose latency (issue to
//!   completion) exceeds it ends the job with ETIMEDOUT, as fio;
//! * `exitall_on_error`: a job that ends with an error ends every job;
//! * `nice`: the worker thread's nice value (Linux sets it per thread);
//! * `exec_prerun` / `exec_postrun`: a shell command run by each worker
//!   before its first and after its last I/O, its output in
//!   `jobname.prerun.txt` / `jobname.postrun.txt` (as fio);
//! * `mem` (`iomem`), `iomem_align`, `hugepage-size`: where I/O buffers
//!   are allocated ([`MemKind`]);
//! * `create_fsync`: whether a file laid out is fsynced (default: yes);
//! * `lockmem`: memory pinned with mlock for the job's run, so that the
//!   page cache and the job see that much less memory.

use serde::{Deserialize, Serialize};

/// fio's `mem` types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemKind {
    /// The heap (fio's default, `malloc`).
    #[default]
    Malloc,
    /// System V shared memory (`shmget`).
    Shm,
    /// System V shared memory in huge pages (`SHM_HUGETLB`).
    ShmHuge,
    /// A private anonymous mapping, or a mapping of `mmap:FILE`.
    Mmap,
    /// A mapping in huge pages (`MAP_HUGETLB`, or a hugetlbfs `FILE`).
    MmapHuge,
    /// A shared mapping (anonymous, or of `mmapshared:FILE`).
    MmapShared,
}

impl MemKind {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            MemKind::Malloc => "malloc",
            MemKind::Shm => "shm",
            MemKind::ShmHuge => "shmhuge",
            MemKind::Mmap => "mmap",
            MemKind::MmapHuge => "mmaphuge",
            MemKind::MmapShared => "mmapshared",
        }
    }

    /// Whether the memory comes in huge pages.
    pub fn huge(self) -> bool {
        matches!(self, MemKind::ShmHuge | MemKind::MmapHuge)
    }
}

/// Where a job's I/O buffers live.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemSpec {
    pub kind: MemKind,
    /// `mmap:FILE`: the file mapped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `iomem_align`: buffers start at a multiple of this (0: a page).
    #[serde(default)]
    pub align: u64,
    /// `hugepage-size` (0: fio's default, 2 MiB).
    #[serde(default)]
    pub hugepage_size: u64,
}

/// Why `mem` could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    #[error("'cudamalloc' needs fio's CUDA support, which ssdready does not have")]
    Cuda,
    #[error("'{0}' is not a memory type")]
    NotAType(String),
    #[error("'{0}' names no file")]
    NoFile(String),
    #[error("'{0}' takes no file (only the mmap types do)")]
    TakesNoFile(String),
}

impl From<MemError> for String {
    fn from(e: MemError) -> String {
        e.to_string()
    }
}

impl MemSpec {
    /// Parse fio's `mem=TYPE[:FILE]`.
    pub fn parse_kind(&mut self, v: &str) -> Result<(), MemError> {
        let (kind, file) = match v.split_once(':') {
            Some((k, f)) => (k, Some(f)),
            None => (v, None),
        };
        self.kind = match kind {
            "malloc" => MemKind::Malloc,
            "shm" => MemKind::Shm,
            "shmhuge" => MemKind::ShmHuge,
            "mmap" => MemKind::Mmap,
            "mmaphuge" => MemKind::MmapHuge,
            "mmapshared" => MemKind::MmapShared,
            "cudamalloc" => return Err(MemError::Cuda),
            _ => return Err(MemError::NotAType(kind.to_string())),
        };
        let mapped = matches!(
            self.kind,
            MemKind::Mmap | MemKind::MmapHuge | MemKind::MmapShared
        );
        self.file = match file {
            Some("") => return Err(MemError::NoFile(v.to_string())),
            Some(_) if !mapped => return Err(MemError::TakesNoFile(kind.to_string())),
            f => f.map(String::from),
        };
        Ok(())
    }

    /// The huge page size in use.
    pub fn huge_page(&self) -> u64 {
        if self.hugepage_size == 0 {
            2 << 20
        } else {
            self.hugepage_size
        }
    }
}

/// The options of this module.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// `iodepth_low` (0: iodepth).
    #[serde(default)]
    pub iodepth_low: u32,
    /// `max_latency` per direction (read, write, trim), ns (0: none).
    #[serde(default)]
    pub max_latency_ns: [u64; 3],
    #[serde(default)]
    pub exitall_on_error: bool,
    /// `nice` (-20..=19; 0: unchanged).
    #[serde(default)]
    pub nice: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_prerun: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_postrun: Option<String>,
    #[serde(default)]
    pub mem: MemSpec,
    /// `lockmem`: bytes pinned with mlock while the job runs.
    #[serde(default)]
    pub lockmem: u64,
    /// `create_fsync`, when written (fio's default: on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_fsync: Option<bool>,
}

impl RunSpec {
    /// Why a job with these options cannot run (`emulated`: on the
    /// built-in emulator, whose queue pairs keep their own buffers).
    pub fn refusals(&self, emulated: bool) -> Vec<String> {
        let mut why = Vec::new();
        if emulated && self.mem.kind != MemKind::Malloc {
            why.push(format!(
                "option 'mem={}': the emulated device's queue pairs keep their own buffers; \
                 mem= applies to the kernel engines (name a filename and an ioengine)",
                self.mem.kind.name()
            ));
        }
        why
    }

    /// The depth the queue drains to before it is filled again, for a
    /// queue of `depth` (fio: `iodepth_low` 0 or above iodepth is iodepth).
    pub fn refill_at(&self, depth: u32) -> u32 {
        if self.iodepth_low == 0 || self.iodepth_low > depth {
            depth
        } else {
            self.iodepth_low
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_types_parse_as_fio_with_an_optional_file() {
        let mut m = MemSpec::default();
        m.parse_kind("mmapshared:/tmp/x").unwrap();
        assert_eq!(
            (m.kind, m.file.as_deref()),
            (MemKind::MmapShared, Some("/tmp/x"))
        );
        m.parse_kind("shmhuge").unwrap();
        assert_eq!((m.kind, m.file.as_deref()), (MemKind::ShmHuge, None));
        assert!(m
            .parse_kind("shm:/tmp/x")
            .unwrap_err()
            .to_string()
            .contains("takes no file"));
        assert!(m
            .parse_kind("cudamalloc")
            .unwrap_err()
            .to_string()
            .contains("CUDA"));
        assert!(m.parse_kind("heap").is_err());
    }

    #[test]
    fn iodepth_low_above_iodepth_or_zero_is_iodepth() {
        let mut r = RunSpec::default();
        assert_eq!(r.refill_at(16), 16);
        r.iodepth_low = 4;
        assert_eq!(r.refill_at(16), 4);
        assert_eq!(r.refill_at(2), 2);
    }
}
