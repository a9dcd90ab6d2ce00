//! The request and completion types exchanged between the worker loop and an
//! engine. They are small `Copy` values: the worker keeps per-slot bookkeeping
//! (issue time, size) in its own arrays and the engine echoes the slot back.

use serde::{Deserialize, Serialize};

/// Data direction, in fio's order (read 0, write 1, trim 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ddir {
    /// Read from the target into a buffer.
    Read = 0,
    /// Write a buffer to the target.
    Write = 1,
    /// Discard a range (TRIM / punch hole).
    Trim = 2,
}

impl Ddir {
    /// All directions, in index order.
    pub const ALL: [Ddir; 3] = [Ddir::Read, Ddir::Write, Ddir::Trim];
    /// Index into per-direction arrays.
    #[inline]
    pub fn idx(self) -> usize {
        self as usize
    }
    /// Lower-case name as used in results (`read`, `write`, `trim`).
    pub fn name(self) -> &'static str {
        match self {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
        }
    }
}

/// One I/O to issue. `slot` names the buffer and bookkeeping entry the worker
/// reserved for it (0 ≤ slot < iodepth); `file` indexes the job's targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoReq {
    /// Buffer / bookkeeping slot, echoed back in the completion.
    pub slot: u32,
    /// Index of the target file within the job.
    pub file: u32,
    /// Direction.
    pub ddir: Ddir,
    /// Byte offset within the target.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
}

/// A finished I/O: the slot it used and the result, bytes transferred or a
/// negative errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The slot of the request.
    pub slot: u32,
    /// Bytes transferred (≥ 0) or `-errno`.
    pub result: i64,
}
