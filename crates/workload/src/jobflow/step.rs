//! What a flow hands the worker: the next [`Step`], the request to issue
//! ([`FlowIo`]) and what it carries for verification ([`Tag`]).

use crate::verify::Expect;
use ssdready_core::req::Ddir;

/// What a read or write carries for verification.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tag {
    /// Nothing.
    #[default]
    Plain,
    /// A write whose blocks get verify headers.
    Stamped {
        /// The write's sequence number (fio's `numberio`).
        generation: u64,
        /// The seed of its data.
        seed: u64,
    },
    /// A read whose data is checked when it completes.
    Check(Expect),
}

/// One request to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowIo {
    /// A read, write or trim.
    Rw {
        /// Target index.
        file: u32,
        /// Direction.
        ddir: Ddir,
        /// Byte offset.
        offset: u64,
        /// Length.
        len: u32,
        /// Verification.
        tag: Tag,
    },
    /// `fsync` (or `fdatasync`) of a target, counted as fio counts it.
    Sync {
        /// Target index.
        file: u32,
        /// fdatasync rather than fsync.
        data_only: bool,
    },
    /// `sync_file_range(2)` of what was written to a target since its last
    /// sync (`sync_file_range`), counted as fio counts it.
    SyncRange {
        /// Target index.
        file: u32,
    },
}

/// What the worker does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Issue this request.
    Io(FlowIo),
    /// Issue nothing until every request in flight has completed, then ask again.
    Drain,
    /// Nothing is in flight: spin `spin_ns`, then sleep `sleep_ns` (think time).
    Think {
        /// Busy-wait part.
        spin_ns: u64,
        /// Sleeping part.
        sleep_ns: u64,
    },
    /// Drop the page cache of target `file`: a time-based pass over it ended.
    DropCache(u32),
    /// Nothing is in flight: fsync every target, uncounted (`end_fsync`,
    /// `fsync_on_close`).
    FsyncFiles,
    /// Nothing is in flight: fsync every target and drop its cache, before
    /// reading the pass's writes back.
    SettleForVerify,
    /// Nothing is in flight: a new pass begins. Remove the files first when
    /// `unlink`; open them again; drop their cache when `invalidate`.
    NewLoop {
        /// `unlink_each_loop`.
        unlink: bool,
        /// `invalidate`.
        invalidate: bool,
    },
    /// The job's work is done (wait for what is in flight).
    Done,
}
