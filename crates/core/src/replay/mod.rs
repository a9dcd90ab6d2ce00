//! I/O logs: recording what a job issued (`write_iolog`) and replaying a
//! recorded trace (`read_iolog`), in fio's formats, so that traces taken
//! with fio or blktrace run here and ssdready's traces run in fio.
//!
//! * **Text logs** ([`text`]): fio's iolog version 2 (`FILE ACTION
//!   [OFFSET LENGTH]`) and version 3 (the same, after a timestamp in µs
//!   since the job began), each after its header line (`fio version 3
//!   iolog`). Actions: `read`, `write`, `trim`, `sync`, `datasync`, the
//!   file actions `add`, `open`, `close`, and version 2's `wait`.
//! * **blktrace binaries** ([`blktrace`]): the kernel's `struct
//!   blk_io_trace` records (as `blkparse -d` writes them), found by their
//!   magic number in either byte order, as fio finds them. Only queue
//!   events are I/Os; files are devices (major:minor).
//! * **Replaying** ([`cursor::Replay`]): one worker goes through the trace
//!   in order, waiting between entries as long as the trace did (scaled by
//!   `replay_time_scale`, not at all with `replay_no_stall`), with offsets
//!   scaled down (`replay_scale`) and aligned (`replay_align`), and the
//!   directions of `replay_skip` left out — fio's `read_iolog_get` and
//!   `iolog_delay`.
//! * **Recording** ([`record::Recorder`]): fio's version 3 lines, one per
//!   issued request, with the file actions around them.
//!
//! As fio does, a replayed job's directions, largest block size per
//! direction and size come from the trace ([`Summary::apply`]); its
//! files are the trace's own unless `replay_redirect` names one target.
//!
//! Nothing here touches the operating system: readers and writers are
//! handed in by the caller.

pub mod blktrace;
pub mod cursor;
pub mod record;
pub mod text;

use crate::req::Ddir;
use crate::spec::{BlockSizes, JobSpec, RwMode};
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
    pub fn parse(v: &str) -> Result<Skip, String> {
        let mut s = Skip::default();
        for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "read" => s.read = true,
                "write" => s.write = true,
                "trim" => s.trim = true,
                "sync" => s.sync = true,
                _ => return Err(format!("'{part}' is not read, write, trim or sync")),
            }
        }
        Ok(s)
    }

    fn skips(&self, a: &Action) -> bool {
        match a {
            Action::Io { ddir, .. } => match ddir {
                Ddir::Read => self.read,
                Ddir::Write => self.write,
                Ddir::Trim => self.trim,
            },
            // fio's replay_skip=sync leaves fsync out, not fdatasync.
            Action::Sync { data_only } => self.sync && !data_only,
            _ => false,
        }
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

/// What an entry of a trace does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A read, write or trim.
    Io {
        /// Direction.
        ddir: Ddir,
        /// Byte offset in the file.
        offset: u64,
        /// Bytes.
        len: u32,
    },
    /// fsync (fdatasync when `data_only`).
    Sync {
        /// fdatasync.
        data_only: bool,
    },
    /// The file joins the job (nothing to do here).
    Add,
    /// The file is opened.
    Open,
    /// The file is closed.
    Close,
    /// Version 2's `wait`: issue nothing before this many ms since the
    /// job began.
    WaitUntilMs(u64),
}

/// One entry of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// When it happened in the trace, ns from the trace's origin (None:
    /// a version 2 log, which has no times).
    pub time_ns: Option<u64>,
    /// Its file.
    pub file: FileKey,
    /// What it does.
    pub action: Action,
}

/// A trace that cannot be read: which trace, where, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {why}")]
pub struct TraceError {
    /// The trace and the place in it (`FILE line N`, `FILE record N`).
    pub what: String,
    /// What is wrong there, with what is allowed.
    pub why: String,
}

/// The source of a replay's entries: a reader of either format.
pub type Entries = Box<dyn Iterator<Item = Result<Entry, TraceError>> + Send>;

/// What a whole trace holds, after `replay_skip`, `replay_scale` and
/// `replay_align`: what the job's options come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Reads, writes, trims.
    pub ios: [u64; 3],
    /// Syncs.
    pub syncs: u64,
    /// Bytes per direction.
    pub bytes: [u64; 3],
    /// Largest request per direction.
    pub max_bs: [u32; 3],
    /// Smallest request of any direction.
    pub min_bs: u32,
    /// The trace's files in order of first mention, and the end of the
    /// furthest request in each.
    pub files: Vec<(FileKey, u64)>,
    /// A blktrace's deepest queue (None for text logs).
    pub depth: Option<u32>,
}

impl Summary {
    /// Take in one entry (already scaled and filtered).
    pub fn add(&mut self, e: &Entry) {
        let i = match self.files.iter().position(|(k, _)| *k == e.file) {
            Some(i) => i,
            None => {
                self.files.push((e.file.clone(), 0));
                self.files.len() - 1
            }
        };
        match e.action {
            Action::Io { ddir, offset, len } => {
                let d = ddir.idx();
                self.ios[d] += 1;
                self.bytes[d] += u64::from(len);
                self.max_bs[d] = self.max_bs[d].max(len);
                self.min_bs = match self.min_bs {
                    0 => len,
                    m => m.min(len),
                };
                let end = offset + u64::from(len);
                self.files[i].1 = self.files[i].1.max(end);
            }
            Action::Sync { .. } => self.syncs += 1,
            _ => {}
        }
    }

    /// Whether the trace has anything to replay.
    pub fn is_empty(&self) -> bool {
        self.ios.iter().sum::<u64>() == 0 && self.syncs == 0
    }

    /// The job's options from the trace, as fio sets them: its direction(s),
    /// the largest request of each direction as the block size, the size
    /// the files need (when the job gave none), and a blktrace's queue
    /// depth (when the job gave none). The targets are set by the caller.
    pub fn apply(&self, spec: &mut JobSpec) {
        let [r, w, t] = self.ios.map(|n| n > 0);
        spec.rw = match (r, w, t) {
            (false, false, true) => RwMode::Trim,
            (true, false, false) => RwMode::Read,
            (false, true, false) => RwMode::Write,
            // Mixed, or trims with reads or writes: a mode that modifies
            // the target, so that writes and trims are checked as such.
            _ if w || t => RwMode::ReadWrite,
            _ => RwMode::Read,
        };
        // fio raises each direction's largest block size to the trace's.
        let dirs = std::array::from_fn(|d| {
            let given = spec.bs.for_dir(d).max();
            BlockSizes::Fixed(given.max(self.max_bs[d]))
        });
        spec.bs = BlockSizes::from_dirs(dirs);
        if spec.size.is_none() && spec.size_percent.is_none() {
            let end = self.files.iter().map(|f| f.1).max().unwrap_or(0);
            let n = spec.filename.len().max(1) as u64;
            if end > 0 {
                spec.size = Some(end.saturating_mul(n));
            }
        }
        if let Some(d) = self.depth {
            if !spec.options_given.iter().any(|(k, _)| k == "iodepth") {
                spec.iodepth = d.max(1);
            }
        }
    }
}

/// One entry as replayed: offsets scaled down, then aligned (fio's
/// `replay_scale` then `replay_align`); None when `replay_skip` leaves it out.
pub fn adjust(spec: &IologSpec, mut e: Entry) -> Option<Entry> {
    if spec.skip.skips(&e.action) {
        return None;
    }
    if let Action::Io { offset, .. } = &mut e.action {
        *offset = offset.checked_div(spec.scale).unwrap_or(*offset);
        if spec.align > 0 {
            *offset &= !(spec.align - 1);
        }
    }
    Some(e)
}

#[cfg(test)]
mod tests;
