//! What the worker loop does with a failed I/O or a failed verification
//! (`continue_on_error`, `ignore_error`, `fill_device`, `verify_fatal`,
//! `verify_dump`), and the write buffers' contents with their dedupe
//! working set (`dedupe_mode=working_set`).

use crate::spec::JobSpec;
use crate::spec_buffers::BufferSpec;
use crate::spec_types::{ContinueOn, ErrorKind, IgnoreErrors};

/// Linux's ENOSPC and EDQUOT.
const ENOSPC: i32 = 28;
const EDQUOT: i32 = 122;

/// How a job treats its failures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorPolicy {
    /// `continue_on_error`.
    pub continue_on: ContinueOn,
    /// `ignore_error`.
    pub ignore: IgnoreErrors,
    /// `fill_device`: a full device (ENOSPC, EDQUOT) ends the job without
    /// an error.
    pub fill_device: bool,
    /// `verify_fatal`: the first failed check ends the job.
    pub verify_fatal: bool,
    /// `verify_dump`: a failed block is written beside the run.
    pub verify_dump: bool,
    /// The name a failure reports when the worker has no target of its
    /// own: the job's first `filename`.
    pub first_file: String,
}

impl ErrorPolicy {
    /// The failure handling of `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        ErrorPolicy {
            continue_on: spec.continue_on_error,
            ignore: spec.ignore_error.clone(),
            fill_device: spec.fill_device,
            verify_fatal: spec.verify.fatal,
            verify_dump: spec.verify.dump,
            first_file: spec.filename.first().cloned().unwrap_or_default(),
        }
    }

    /// Whether an error of `kind` with `errno` is counted and gone past
    /// rather than ending the job (fio's `td_non_fatal_error`).
    pub fn goes_past(&self, kind: ErrorKind, errno: i32) -> bool {
        self.continue_on.goes_past(&self.ignore, kind, errno)
    }

    /// Whether `errno` is the end of a `fill_device` job: its device or
    /// file system is full.
    pub fn is_full(&self, errno: i32) -> bool {
        self.fill_device && matches!(errno, ENOSPC | EDQUOT)
    }
}

/// What the write-buffer filler of a job's workers needs.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferConfig {
    /// The buffer options (`buffer_pattern`, `zero_buffers`,
    /// `compress_percentage`, `dedupe_percentage`, `dedupe_mode`, ...).
    pub options: BufferSpec,
    /// `randseed`; each worker mixes in its number.
    pub randseed: u64,
    /// `dedupe_mode=working_set`: the job's `size` (None: the worker's
    /// regions together), the percentage of it in the set (default 5) and
    /// the smallest write; None in other modes.
    pub working_set: Option<WorkingSet>,
}

/// `dedupe_mode=working_set`'s size (fio's `num_unique_pages`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkingSet {
    /// `size`, when given.
    pub size: Option<u64>,
    /// `dedupe_working_set_percentage` (default 5).
    pub percent: u64,
    /// The smallest write, at least 1 byte.
    pub min_write: u64,
}

impl WorkingSet {
    /// The set's pages when the job covers `covered` bytes without a
    /// `size`: size × percent ÷ 100 ÷ the smallest write.
    pub fn pages(&self, covered: u64) -> u64 {
        self.size.unwrap_or(covered) * self.percent / 100 / self.min_write
    }
}

impl BufferConfig {
    /// The write buffers of `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        BufferConfig {
            options: spec.buffers.clone(),
            randseed: spec.randseed,
            working_set: spec.buffers.working_set.then(|| WorkingSet {
                size: spec.size,
                percent: u64::from(spec.buffers.working_set_percentage.unwrap_or(5)),
                min_write: u64::from(spec.bs.for_dir(1).min().max(1)),
            }),
        }
    }

    /// The seed of worker `number`'s buffers.
    pub fn seed_of(&self, number: u32) -> u64 {
        self.randseed ^ u64::from(number).rotate_left(32)
    }
}
