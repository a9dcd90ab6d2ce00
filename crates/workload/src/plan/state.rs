//! The state an [`super::IoPlan`] keeps, below the plan and the parts that
//! make or move it ([`super::setup`], [`super::run`]): the part of a target
//! a worker covers ([`Region`]), each file's state, where a strided job is,
//! and the shortcut's granted run.

use super::dists::Skewed;
use super::permutation::Permutation;
use super::randmap::RandMap;
use ssdready_core::req::Ddir;

/// The part of one target a worker covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Index of the target within the job.
    pub file: u32,
    /// First byte.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

#[derive(Clone)]
pub(super) struct FileState {
    pub(super) region: Region,
    /// fio's `last_pos`, relative to the region, per direction.
    pub(super) last_pos: [u64; 3],
    /// Where the direction's previous I/O started (`rw_sequencer=identical`).
    pub(super) last_start: [Option<u64>; 3],
    /// Blocks of `unit` bytes.
    pub(super) blocks: u64,
    pub(super) perm: Permutation,
    pub(super) perm_pos: u64,
    pub(super) pass: u64,
    pub(super) map: Option<RandMap>,
    pub(super) skew: Option<Skewed>,
}

/// Where a strided job is: the zone (relative to the region) and the bytes
/// moved in it (fio's `file_offset` and `zone_bytes`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Strided {
    pub(super) size: u64,
    pub(super) range: u64,
    pub(super) skip: u64,
    pub(super) start: u64,
    pub(super) bytes: u64,
}

/// A granted run of I/Os (none when `granted` is 0).
#[derive(Clone, Debug)]
pub(super) struct Run {
    /// I/Os left of it.
    pub(super) left: u64,
    /// I/Os granted when it started.
    pub(super) granted: u64,
    /// Random: the permutation's next position; sequential: the next
    /// offset relative to the region.
    pub(super) pos: u64,
    pub(super) len: u64,
    /// The region's first byte.
    pub(super) base: u64,
    pub(super) file: u32,
    pub(super) ddir: Ddir,
    pub(super) random: bool,
    /// The file's permutation of this pass (a copy: it does not change
    /// until the pass ends, which ends the run).
    pub(super) perm: Permutation,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            left: 0,
            granted: 0,
            pos: 0,
            len: 0,
            base: 0,
            file: 0,
            ddir: Ddir::Read,
            random: false,
            perm: Permutation::new(1, 0),
        }
    }
}
