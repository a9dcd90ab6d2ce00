//! The replay options of a job (`read_iolog`, `write_iolog`,
//! `replay_*`, `merge_blktrace_*`): part of the job language. What a
//! replay does with them is `ssdready_workload::replay`'s.

use serde::{Deserialize, Serialize};

/// A job's replay and recording options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IologSpec {
    /// `read_iolog`: the trace(s), one per clone in turn (`:`-separated).
    pub read: Vec<String>,
    /// `write_iolog`: where the issued requests are recorded.
    pub write: Option<String>,
    /// `read_iolog_chunked`: read the trace as the replay goes, not first.
    pub chunked: bool,
    /// `replay_no_stall`: ignore the trace's timing.
    pub no_stall: bool,
    /// `replay_time_scale`: percent of the trace's I/O rate (100: as recorded).
    pub time_scale: u32,
    /// `replay_redirect`: every request goes to this one target.
    pub redirect: Option<String>,
    /// `replay_align`: offsets rounded down to a multiple of this (a power of two).
    pub align: u64,
    /// `replay_scale`: offsets divided by this.
    pub scale: u64,
    /// `replay_skip`: leave out reads, writes, trims, syncs.
    pub skip: Skip,
    /// `merge_blktrace_file`: merge the blktraces of `read` into this file and replay it.
    pub merge_file: Option<String>,
    /// `merge_blktrace_scalars`: per trace, percent of its time (100: as recorded).
    pub merge_scalars: Vec<f64>,
    /// `merge_blktrace_iters`: per trace, how many times it is merged in.
    pub merge_iters: Vec<u32>,
    /// The trace's files in the order of the job's targets (set when the
    /// trace was read before the run; empty with `replay_redirect`).
    pub files: Vec<FileKey>,
}

impl Default for IologSpec {
    fn default() -> Self {
        IologSpec {
            read: Vec::new(),
            write: None,
            chunked: false,
            no_stall: false,
            time_scale: 100,
            redirect: None,
            align: 0,
            scale: 0,
            skip: Skip::default(),
            merge_file: None,
            merge_scalars: Vec::new(),
            merge_iters: Vec::new(),
            files: Vec::new(),
        }
    }
}

impl IologSpec {
    /// The trace clone `clone` (0-based) replays, as fio assigns them.
    pub fn trace_for(&self, clone: u32) -> Option<&str> {
        if self.read.is_empty() {
            return None;
        }
        Some(&self.read[clone as usize % self.read.len()])
    }
}

/// `replay_skip`: which kinds of request are left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skip {
    /// Reads.
    pub read: bool,
    /// Writes.
    pub write: bool,
    /// Trims (discards).
    pub trim: bool,
    /// Syncs (fsync; blktrace flushes).
    pub sync: bool,
}

impl Skip {
    /// fio's list: `read`, `write`, `trim`, `sync`, comma-separated.
    pub fn parse(v: &str) -> Result<Skip, crate::spec_types::NotOneOf> {
        let mut s = Skip::default();
        for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "read" => s.read = true,
                "write" => s.write = true,
                "trim" => s.trim = true,
                "sync" => s.sync = true,
                _ => {
                    return Err(crate::spec_types::NotOneOf::new(
                        part,
                        "read, write, trim or sync",
                    ))
                }
            }
        }
        Ok(s)
    }
}

/// Which file an entry of a trace is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FileKey {
    /// A text log's file name.
    Name(String),
    /// A blktrace's device, as the kernel numbers it (major << 20 | minor).
    Dev(u32),
}

impl FileKey {
    /// The device's (major, minor) for a blktrace's file.
    pub fn major_minor(&self) -> Option<(u32, u32)> {
        match self {
            FileKey::Dev(d) => Some((d >> 20, d & 0xf_ffff)),
            FileKey::Name(_) => None,
        }
    }
}

impl std::fmt::Display for FileKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileKey::Name(n) => f.write_str(n),
            FileKey::Dev(_) => {
                let (maj, min) = self.major_minor().unwrap_or_default();
                write!(f, "device {maj}:{min}")
            }
        }
    }
}
