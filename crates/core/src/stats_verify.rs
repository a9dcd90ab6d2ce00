//! What a worker records when a block read back fails verification (the
//! result model's side of fio's `verify`; the checks themselves are the
//! workload crate's `verify::block`), and a worker's verification counts.

use serde::{Deserialize, Serialize};

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    /// The failing interval's file offset.
    pub offset: u64,
    /// Its length.
    pub len: u32,
    /// Which check failed: `magic`, `header crc32c`, `length`, `offset`
    /// (a misdirected write), `generation` or `seed` (stale data), the
    /// method's checksum (`md5`, `crc32c`, …) or `pattern`.
    pub check: String,
    /// What was expected.
    pub expected: String,
    /// What was found.
    pub found: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} check failed at offset {} (length {}): expected {}, found {}",
            self.check, self.offset, self.len, self.expected, self.found
        )
    }
}

/// The most verify failures a worker keeps in full; the rest are counted.
pub const VERIFY_FAILURES_KEPT: usize = 100;

/// What verification found.
#[derive(Clone, Debug, Default)]
pub struct VerifyStats {
    /// Blocks read back and checked.
    pub blocks: u64,
    /// Bytes checked.
    pub bytes: u64,
    /// Failed checks (one per failing interval), all counted.
    pub failed: u64,
    /// The first [`VERIFY_FAILURES_KEPT`] failures.
    pub failures: Vec<VerifyError>,
    /// Blocks not verified because a loaded verify state could not vouch
    /// for them (`verify_state_load`).
    pub skipped_by_state: u64,
}

/// One failed check, with the file it was found in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyError {
    /// The target's path (or emulated device).
    pub file: String,
    /// What failed, where.
    #[serde(flatten)]
    pub failure: Failure,
}

impl VerifyStats {
    /// Count one failure, keeping it when there is room.
    pub fn record(&mut self, file: &str, f: Failure) {
        self.failed += 1;
        if self.failures.len() < VERIFY_FAILURES_KEPT {
            self.failures.push(VerifyError {
                file: file.to_string(),
                failure: f,
            });
        }
    }

    /// Add another worker's findings.
    pub fn merge(&mut self, o: &VerifyStats) {
        self.blocks += o.blocks;
        self.bytes += o.bytes;
        self.failed += o.failed;
        self.skipped_by_state += o.skipped_by_state;
        let room = VERIFY_FAILURES_KEPT.saturating_sub(self.failures.len());
        self.failures.extend(o.failures.iter().take(room).cloned());
    }
}
