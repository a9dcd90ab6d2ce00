//! What a worker's flow (workload's `JobFlow`) needs of its job: passes,
//! budgets, syncs, think time and verification.

use super::plan::PlanConfig;
use crate::spec::{EngineKind, JobSpec, RwMode};
use crate::spec_io::ThinkBlocksType;
use crate::spec_pattern::Pattern;
use crate::spec_verify::{Method, TrimSpec};
use std::num::NonZeroU32;

/// How blocks are laid out for verification.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyConfig {
    /// The verify method.
    pub method: Method,
    /// Bytes per header (fio's `verify_interval`, resolved against the
    /// block sizes).
    pub interval: u32,
    /// Where the header sits in its interval (`verify_offset`).
    pub header_offset: u32,
    /// The data pattern (`verify_pattern`), else random data.
    pub pattern: Option<Pattern>,
}

/// Think time (fio's `thinktime*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThinkConfig {
    /// `thinktime`.
    pub ns: u64,
    /// `thinktime_spin`, at most `thinktime`.
    pub spin_ns: u64,
    /// `thinktime_blocks`, at least 1.
    pub blocks: u64,
    /// `thinktime_blocks` was given.
    pub blocks_given: bool,
    /// `thinktime_blocks_type=complete`.
    pub by_completion: bool,
    /// `thinktime_iotime`.
    pub iotime_ns: u64,
    /// Completions can come after the last issue (an asynchronous engine
    /// with a queue).
    pub late_completions: bool,
}

/// What a worker's flow needs.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    /// The plan, endless: the flow keeps the passes and budgets.
    pub plan: PlanConfig,
    /// Bytes moved per byte of the regions: 2 with `trimwrite` (each trim
    /// is followed by a write), else 1.
    pub moves: u64,
    /// `io_size`.
    pub io_size: Option<u64>,
    /// `size`.
    pub size: Option<u64>,
    /// `loops`, at least 1.
    pub loops: u32,
    /// The largest block size of any direction.
    pub max_bs: u64,
    /// `number_ios` over every loop.
    pub number_ios: Option<u64>,
    /// `time_based`.
    pub time_based: bool,
    /// The job writes (or trims), and not only to verify (`verify_only`).
    pub writes: bool,
    /// `fsync`: every N writes (0: never).
    pub fsync_every: u64,
    /// `fdatasync`: every N writes (0: never).
    pub fdatasync_every: u64,
    /// `sync_file_range=…:N`: every N writes (0: never).
    pub range_every: u64,
    /// A pass of a writing job ends with an fsync of its files
    /// (`end_fsync`, `fsync_on_close`).
    pub pass_fsync: bool,
    /// `unlink_each_loop`.
    pub unlink_each_loop: bool,
    /// `invalidate`.
    pub invalidate: bool,
    /// The cache is dropped when a time-based pass wraps (`invalidate` on
    /// buffered I/O to real files), given one file or random offsets
    /// ([`FlowConfig::wrap_invalidate`]).
    pub invalidate_on_wrap: bool,
    /// Which directions count in fio's `io_issue_bytes`.
    pub main_dirs: [bool; 3],
    /// Think time.
    pub think: ThinkConfig,
    /// How blocks are laid out for verification, when the job verifies.
    pub verify: Option<VerifyConfig>,
    /// A writing job reads its writes back (`do_verify`).
    pub verify_phase: bool,
    /// A reading job checks what it reads.
    pub check_reads: bool,
    /// Blocks may be checked against the write generation that put them
    /// there, unless the pass rewrites blocks under `experimental_verify`
    /// ([`FlowConfig::check_generation`]).
    pub generation_checkable: bool,
    /// A verifying job's writes wrap over its blocks (sequential, or random
    /// without a random map): its pass writes all of `io_size`
    /// ([`FlowConfig::pass_len`]).
    pub verify_wraps: bool,
    /// `verify_policy=fsynced`: a saved state vouches only for writes
    /// before the last completed sync.
    pub fsynced: bool,
    /// `trim_percentage` on a writing job.
    pub trims: Option<TrimSpec>,
    /// A block may be written twice in a pass.
    pub rewrites: bool,
    /// `verify_only`: the verification phase reads nothing.
    pub dry_run: bool,
    /// `experimental_verify`.
    pub experimental: bool,
    /// `verify_backlog`, when it applies.
    pub backlog: Option<u64>,
    /// `verify_batch` (else the backlog, else 1).
    pub backlog_batch: u64,
    /// The queue depth the worker keeps.
    pub depth: NonZeroU32,
    /// `randseed`; each worker mixes in its index.
    pub randseed: u64,
}

impl FlowConfig {
    /// The flow of `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        let v = &spec.verify;
        let modifies = spec.rw.modifies();
        let verify = layout(spec);
        let verify_phase = verify.is_some() && modifies && v.do_verify;
        let rewrites = rewrites(spec);
        let loops = spec.loops.max(1);
        FlowConfig {
            plan: PlanConfig::new(spec).endless(),
            // fio's trimwrite writes each block it trims: twice the bytes.
            moves: if spec.trim_then_write { 2 } else { 1 },
            io_size: spec.io_size,
            size: spec.size,
            loops,
            max_bs: u64::from(spec.bs.max()),
            number_ios: spec.number_ios.map(|n| n.saturating_mul(u64::from(loops))),
            time_based: spec.time_based,
            writes: modifies && !v.only,
            fsync_every: u64::from(spec.files.fsync_every),
            fdatasync_every: u64::from(spec.files.fdatasync_every),
            range_every: spec
                .access
                .sync_file_range
                .map_or(0, |r| u64::from(r.every)),
            pass_fsync: modifies && (spec.files.end_fsync || spec.files.fsync_on_close),
            unlink_each_loop: spec.files.unlink_each_loop,
            invalidate: spec.invalidate,
            invalidate_on_wrap: spec.invalidate
                && !spec.direct
                && !spec.on_emulator()
                && spec.ioengine != EngineKind::Null
                && spec.time_based,
            main_dirs: main_dirs(spec.rw),
            think: think(spec),
            check_reads: verify.is_some() && !modifies,
            generation_checkable: check_generation(spec, false),
            verify_wraps: modifies
                && !spec.time_based
                && (!spec.rw.is_random() || spec.norandommap),
            fsynced: verify.is_some() && modifies && v.fsynced,
            trims: v.trims().filter(|_| modifies),
            rewrites,
            dry_run: verify_phase && v.only,
            experimental: v.experimental && !v.only,
            backlog: v.backlog.filter(|_| verify_phase && !v.only),
            backlog_batch: v.backlog_batch.or(v.backlog).unwrap_or(1),
            verify,
            verify_phase,
            depth: NonZeroU32::new(spec.effective_iodepth()).unwrap_or(NonZeroU32::MIN),
            randseed: spec.randseed,
        }
    }

    /// The bytes a pass moves over regions of `region_bytes` in all:
    /// io_size, else size — at most what the regions hold (filesize=32m
    /// with size=8m moves 8 MiB, as fio) — counting trimwrite's writes.
    /// With `sprandom`, the device's physical capacity behind the logical
    /// bytes (fio sets io_size so).
    pub fn limit(&self, region_bytes: u64) -> u64 {
        let size = region_bytes * self.moves;
        if let Some((_, op, _)) = self.plan.sprandom {
            let logical = self.size.map_or(size, |s| s.min(size));
            return crate::spec_sprandom::physical_size(op, logical, self.plan.unit);
        }
        self.io_size
            .map(|s| s * self.moves)
            .unwrap_or_else(|| self.size.map_or(size, |s| (s * self.moves).min(size)))
    }

    /// The bytes of a pass of `size` (the regions' bytes, with trimwrite's)
    /// whose budget is `limit`: all of `io_size` when a verifying job's
    /// writes wrap (newer fio's `do_io`; the newest write of each block is
    /// then what is verified), else `size`.
    pub fn pass_len(&self, size: u64, limit: u64) -> u64 {
        match self.verify_phase && self.verify_wraps {
            true => size.max(limit),
            false => size,
        }
    }

    /// Whether each block read back is checked against the write
    /// generation that put it there, given whether the pass `rewrites`
    /// blocks (a replay of the writes cannot tell which was last).
    pub fn check_generation(&self, rewrites: bool) -> bool {
        self.generation_checkable && !(self.experimental && rewrites)
    }

    /// Whether the cache is dropped each time a time-based pass over
    /// `files` targets wraps.
    pub fn wrap_invalidate(&self, files: usize) -> bool {
        self.invalidate_on_wrap && (self.plan.rw.is_random() || files == 1)
    }
}

/// Whether each block read back is checked against the write generation
/// that put it there (`verify_write_sequence`, fixed block sizes, a
/// bounded job; not where a replay cannot tell the last write).
fn check_generation(spec: &JobSpec, rewrites: bool) -> bool {
    let v = &spec.verify;
    let fixed_bs = spec.bs.min() == spec.bs.max();
    spec.rw.modifies()
        && v.write_sequence
        && fixed_bs
        && !spec.time_based
        && !v.only
        && !(v.experimental && rewrites)
}

/// Think time as the job states it (fio's `thinktime*`).
fn think(spec: &JobSpec) -> ThinkConfig {
    ThinkConfig {
        ns: spec.thinktime_ns,
        spin_ns: spec.thinktime_spin_ns.min(spec.thinktime_ns),
        blocks: u64::from(spec.thinktime_blocks.max(1)),
        blocks_given: spec.thinktime_blocks_given,
        by_completion: spec.thinktime_blocks_type == ThinkBlocksType::Complete,
        iotime_ns: spec.thinktime_iotime_ns,
        late_completions: spec.iodepth > 1 && spec.ioengine != EngineKind::Psync,
    }
}

/// How blocks are laid out for verification, when the job verifies.
fn layout(spec: &JobSpec) -> Option<VerifyConfig> {
    let v = &spec.verify;
    v.method.map(|method| VerifyConfig {
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
fn rewrites(spec: &JobSpec) -> bool {
    // Offsets that visit each block once per pass (the plan's random map
    // or fio's LFSR); `blockalign` other than the block size draws with
    // repeats.
    let aligned = spec.ba.iter().all(|&b| b == 0 || b == spec.bs.min());
    let random_map =
        spec.rw.is_random() && aligned && (!spec.norandommap || (spec.lfsr && spec.bs.is_fixed()));
    (spec.rw.is_random() && !random_map) || spec.rw_seq_add != 0
}

/// The directions the main phase moves (read, write, trim).
fn main_dirs(rw: RwMode) -> [bool; 3] {
    match rw {
        RwMode::Write | RwMode::RandWrite => [false, true, false],
        RwMode::Trim | RwMode::RandTrim => [false, false, true],
        RwMode::Read | RwMode::RandRead => [true, false, false],
        RwMode::ReadWrite | RwMode::RandRw => [true, true, false],
    }
}
