//! What a worker records when a block read back fails verification (the
//! result model's side of fio's `verify`; the checks themselves are the
//! workload crate's `verify::block`).

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
