//! The parts of a flow worked out once, when it is made from its job:
//! think time, the byte limit, the directions of the main phase, what
//! verification checks and when the cache is dropped on a wrap.

use super::Think;
use crate::plan::{IoPlan, Region};
use crate::verify::Layout;
use ssdready_core::spec::{EngineKind, JobSpec, RwMode};
use ssdready_core::spec_io::ThinkBlocksType;

/// The plan of the worker's offsets, without end: passes and budgets are
/// the flow's.
pub(super) fn endless_plan(spec: &JobSpec, regions: &[Region], worker: u32) -> IoPlan {
    let endless = JobSpec {
        time_based: true,
        number_ios: None,
        ..spec.clone()
    };
    IoPlan::new(&endless, regions, worker).with_holes_of(spec)
}

/// Whether each block read back is checked against the write generation
/// that put it there (`verify_write_sequence`, fixed block sizes, a
/// bounded job; not where a replay cannot tell the last write).
pub(super) fn check_generation(spec: &JobSpec, rewrites: bool) -> bool {
    let v = &spec.verify;
    let fixed_bs = spec.bs.min() == spec.bs.max();
    spec.rw.modifies()
        && v.write_sequence
        && fixed_bs
        && !spec.time_based
        && !v.only
        && !(v.experimental && rewrites)
}

/// The bytes a verifying job writes before it verifies: `size` (its
/// regions), or all of `io_size` when its writes wrap over the blocks
/// (sequential, or random without a random map) — newer fio's `do_io`;
/// the newest write of each block is then what is verified.
pub(super) fn verify_pass(spec: &JobSpec, size: u64, limit: u64) -> u64 {
    let wraps = !spec.rw.is_random() || spec.norandommap;
    match spec.rw.modifies() && !spec.time_based && wraps {
        true => size.max(limit),
        false => size,
    }
}

/// Think time as the job states it (fio's `thinktime*`).
pub(super) fn think(spec: &JobSpec) -> Think {
    Think {
        ns: spec.thinktime_ns,
        spin_ns: spec.thinktime_spin_ns.min(spec.thinktime_ns),
        blocks: u64::from(spec.thinktime_blocks.max(1)),
        blocks_given: spec.thinktime_blocks_given,
        by_completion: spec.thinktime_blocks_type == ThinkBlocksType::Complete,
        iotime_ns: spec.thinktime_iotime_ns,
        late_completions: spec.iodepth > 1 && spec.ioengine != EngineKind::Psync,
        ..Think::default()
    }
}

/// The bytes to move, fio's way: io_size, else size — at most what the
/// regions hold (filesize=32m with size=8m moves 8 MiB, as fio); `moves`
/// counts trimwrite's write after each trim.
pub(super) fn limit(spec: &JobSpec, size: u64, moves: u64) -> u64 {
    spec.io_size
        .map(|s| s * moves)
        .unwrap_or_else(|| spec.size.map_or(size, |s| (s * moves).min(size)))
}

/// How blocks are laid out for verification, when the job verifies.
pub(super) fn layout(spec: &JobSpec) -> Option<Layout> {
    let v = &spec.verify;
    v.method.map(|method| Layout {
        method,
        interval: v.interval_for(&spec.bs.all()),
        header_offset: v.offset,
        pattern: v.pattern.clone(),
    })
}

/// Whether a block may be written twice in a pass: random offsets drawn
/// with repeats, or sequential holes that wrap (`rw=write:4k`). The last
/// write is then what is expected there; a replay of the writes
/// (`experimental_verify`) cannot tell which was last, so it checks each
/// block against its own header only, as fio does.
pub(super) fn rewrites(spec: &JobSpec) -> bool {
    // Offsets that visit each block once per pass (the plan's random map
    // or fio's LFSR); `blockalign` other than the block size draws with
    // repeats.
    let aligned = spec.ba.iter().all(|&b| b == 0 || b == spec.bs.min());
    let random_map =
        spec.rw.is_random() && aligned && (!spec.norandommap || (spec.lfsr && spec.bs.is_fixed()));
    (spec.rw.is_random() && !random_map) || spec.rw_seq_add != 0
}

/// Whether the cache is dropped each time a time-based pass wraps
/// (`invalidate` on buffered I/O to real files).
pub(super) fn wrap_invalidate(spec: &JobSpec, regions: &[Region]) -> bool {
    spec.invalidate
        && !spec.direct
        && !spec.on_emulator()
        && spec.ioengine != EngineKind::Null
        && spec.time_based
        && (spec.rw.is_random() || regions.len() == 1)
}

/// The directions the main phase moves (read, write, trim).
pub(super) fn main_dirs(rw: RwMode) -> [bool; 3] {
    match rw {
        RwMode::Write | RwMode::RandWrite => [false, true, false],
        RwMode::Trim | RwMode::RandTrim => [false, false, true],
        RwMode::Read | RwMode::RandRead => [true, false, false],
        RwMode::ReadWrite | RwMode::RandRw => [true, true, false],
    }
}
