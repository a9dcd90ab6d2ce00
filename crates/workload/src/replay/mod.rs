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

use ssdready_core::req::Ddir;
use ssdready_core::spec::{BlockSizes, JobSpec, RwMode};
pub use ssdready_core::spec::{FileKey, IologSpec, Skip};

/// Whether `replay_skip` (`skip`) leaves action `a` out.
fn skips(skip: &Skip, a: &Action) -> bool {
    match a {
        Action::Io { ddir, .. } => match ddir {
            Ddir::Read => skip.read,
            Ddir::Write => skip.write,
            Ddir::Trim => skip.trim,
        },
        // fio's replay_skip=sync leaves fsync out, not fdatasync.
        Action::Sync { data_only } => skip.sync && !data_only,
        _ => false,
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
    if skips(&spec.skip, &e.action) {
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
