//! The buffer options of a job (`buffer_compress_percentage`,
//! `dedupe_percentage`, `buffer_pattern`, `zero_buffers`,
//! `refill_buffers`, `scramble_buffers`, ...) and what they mean for a
//! buffer's start and for each write, as fio's flags in `init.c`. Filling
//! the buffers is the workload crate's `buffers`.

use serde::{Deserialize, Serialize};

/// The options, as the job file gives them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferSpec {
    /// `buffer_compress_percentage`: the zero-filled share of each chunk.
    pub compress_percentage: u32,
    /// `buffer_compress_chunk`: bytes per chunk (0: the whole write).
    pub compress_chunk: u64,
    /// `dedupe_percentage`: the share of writes repeating an earlier one.
    pub dedupe_percentage: u32,
    /// `buffer_pattern`: the pattern's bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Vec<u8>>,
    /// `zero_buffers`, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero: Option<bool>,
    /// `refill_buffers`, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill: Option<bool>,
    /// `scramble_buffers`, when written (fio's default: on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scramble: Option<bool>,
    /// `dedupe_mode=working_set` (false: fio's `repeat`).
    #[serde(default)]
    pub working_set: bool,
    /// `dedupe_working_set_percentage` (None: fio's default, 5).
    #[serde(default)]
    pub working_set_percentage: Option<u32>,
    /// `dedupe_global`.
    #[serde(default)]
    pub dedupe_global: bool,
}

/// What buffers start with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initial {
    /// The engine's random bytes.
    Random,
    /// Zeros (`zero_buffers`).
    Zero,
    /// The pattern repeated (`buffer_pattern`).
    Pattern,
}

/// What happens to a write's buffer before it is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeforeWrite {
    /// Nothing: the bytes already there are written.
    Keep,
    /// Refilled as fio's `fill_io_buffer`.
    Refill,
    /// fio's `small_content_scramble`.
    Scramble,
}

impl BufferSpec {
    /// What buffers start with.
    pub fn initial(&self) -> Initial {
        if self.pattern.is_some() {
            Initial::Pattern
        } else if self.zero == Some(true) || self.compress_percentage >= 100 {
            Initial::Zero
        } else {
            Initial::Random
        }
    }

    /// What a write's buffer gets before it is issued, for a job that
    /// `reads` too and `verifies` its writes (as fio's flags in init.c).
    pub fn before_write(&self, reads: bool, verifies: bool) -> BeforeWrite {
        let compress = self.compress_percentage > 0 || self.dedupe_percentage > 0;
        let refill = match (self.refill, &self.pattern) {
            // fio's buffer_pattern callback: refill when the job reads or
            // compresses, unless refill_buffers is written.
            (Some(r), _) => r,
            (None, Some(_)) => reads || compress,
            (None, None) => compress,
        };
        if compress || refill {
            return BeforeWrite::Refill;
        }
        let explicit_zero = self.zero == Some(true);
        let scramble = match self.scramble {
            Some(s) => s,
            None => self.pattern.is_none() && !explicit_zero,
        };
        if scramble && !verifies {
            BeforeWrite::Scramble
        } else {
            BeforeWrite::Keep
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_options_keep_random_buffers_and_scramble_them_as_fio() {
        let spec = BufferSpec::default();
        assert_eq!(spec.initial(), Initial::Random);
        assert_eq!(spec.before_write(false, false), BeforeWrite::Scramble);
        assert_eq!(spec.before_write(true, true), BeforeWrite::Keep, "verify");
    }

    #[test]
    fn an_explicit_zero_buffers_turns_scrambling_off_unless_scramble_is_written() {
        let mut spec = BufferSpec {
            zero: Some(true),
            ..BufferSpec::default()
        };
        assert_eq!(spec.initial(), Initial::Zero);
        assert_eq!(spec.before_write(false, false), BeforeWrite::Keep);
        spec.scramble = Some(true);
        assert_eq!(spec.before_write(false, false), BeforeWrite::Scramble);
    }
}
