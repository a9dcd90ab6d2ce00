//! The verify options of a job (fio's `verify`, `verify_pattern`,
//! `verify_interval`, ...): the methods, with the numbers fio writes in
//! its headers, and the checks that need only the job. What a worker does
//! with them (filling and checking blocks, fio's state files) is the
//! workload crate's (`ssdready_workload::verify`).

use crate::spec_pattern::Pattern;
use serde::{Deserialize, Serialize};

/// fio's `FIO_HDR_MAGIC`.
pub const MAGIC: u16 = 0xacca;
/// Bytes of fio's `struct verify_header`.
pub const HEADER_BYTES: usize = 40;

/// A verify method (fio's `verify=`), with the number fio writes in the
/// header's type field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Header only (`meta`): offset, generation, seed and header CRC.
    Meta,
    /// MD5 of each interval's data.
    Md5,
    /// fio's CRC-64 (reflected polynomial 0x95ac9329ac4bc9b5, initial 0,
    /// no final inversion).
    Crc64,
    /// CRC32C (Castagnoli), as fio stores it (not inverted at the end).
    Crc32c,
    /// The same CRC32C, named as fio's hardware-assisted variant.
    Crc32cIntel,
    /// SHA-256 (the standard digest; see the module docs).
    Sha256,
    /// SHA-512 (the standard digest; see the module docs).
    Sha512,
    /// XXH32 with seed 1, as fio.
    Xxhash,
    /// SHA-1.
    Sha1,
    /// A header, then `verify_pattern` checked byte for byte (fio: a
    /// `verify_pattern` without `verify=`).
    PatternHeader,
    /// `verify_pattern` checked byte for byte, no header (`verify=pattern`).
    Pattern,
    /// Write and read as a verify job would, check nothing (`null`).
    Null,
}

impl Method {
    /// fio's value of `verify=` for this method.
    pub fn name(self) -> &'static str {
        match self {
            Method::Meta => "meta",
            Method::Md5 => "md5",
            Method::Crc64 => "crc64",
            Method::Crc32c => "crc32c",
            Method::Crc32cIntel => "crc32c-intel",
            Method::Sha256 => "sha256",
            Method::Sha512 => "sha512",
            Method::Xxhash => "xxhash",
            Method::Sha1 => "sha1",
            Method::PatternHeader => "pattern (with header)",
            Method::Pattern => "pattern",
            Method::Null => "null",
        }
    }

    /// fio's enum value (the header's `verify_type`).
    pub fn fio_type(self) -> u16 {
        match self {
            Method::Meta => 1,
            Method::Md5 => 2,
            Method::Crc64 => 3,
            Method::Crc32c => 5,
            Method::Crc32cIntel => 6,
            Method::Sha256 => 9,
            Method::Sha512 => 10,
            Method::Xxhash => 15,
            Method::Sha1 => 16,
            Method::PatternHeader => 17,
            Method::Pattern => 18,
            Method::Null => 19,
        }
    }

    /// The method fio numbers `t`, if ssdready has it.
    pub fn from_fio_type(t: u16) -> Option<Method> {
        ALL.iter().copied().find(|m| m.fio_type() == t)
    }

    /// Bytes of the method's checksum slot after the header.
    pub fn checksum_bytes(self) -> usize {
        match self {
            Method::Md5 => 16,
            Method::Crc64 => 8,
            Method::Crc32c | Method::Crc32cIntel | Method::Xxhash => 4,
            Method::Sha1 => 20,
            Method::Sha256 => 64,
            Method::Sha512 => 128,
            Method::Meta | Method::PatternHeader | Method::Pattern | Method::Null => 0,
        }
    }

    /// Bytes at the start of each interval that are not data: header and
    /// checksum (0 for `pattern` and `null`, which have no header).
    pub fn header_bytes(self) -> usize {
        match self {
            Method::Pattern | Method::Null => 0,
            m => HEADER_BYTES + m.checksum_bytes(),
        }
    }

    /// Parse `verify=`; fio's other methods are named as not supported yet.
    pub fn parse(v: &str) -> Result<Option<Method>, String> {
        Ok(Some(match v {
            "0" | "none" => return Ok(None),
            "md5" => Method::Md5,
            "crc64" => Method::Crc64,
            "crc32c" => Method::Crc32c,
            "crc32c-intel" => Method::Crc32cIntel,
            "sha1" => Method::Sha1,
            "sha256" => Method::Sha256,
            "sha512" => Method::Sha512,
            "xxhash" => Method::Xxhash,
            "meta" => Method::Meta,
            "pattern" => Method::Pattern,
            // newer fio: a header, then the pattern.
            "pattern_hdr" => Method::PatternHeader,
            "null" => Method::Null,
            "crc32" | "crc16" | "crc7" | "sha3-224" | "sha3-256" | "sha3-384" | "sha3-512" => {
                return Err(format!("fio's '{v}' method is not supported yet"))
            }
            _ => return Err(format!("'{v}' is not a verify method")),
        }))
    }
}

/// Every method.
pub const ALL: [Method; 12] = [
    Method::Meta,
    Method::Md5,
    Method::Crc64,
    Method::Crc32c,
    Method::Crc32cIntel,
    Method::Sha256,
    Method::Sha512,
    Method::Xxhash,
    Method::Sha1,
    Method::PatternHeader,
    Method::Pattern,
    Method::Null,
];

/// The verify options of a job (fio's names in the docs of each field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifySpec {
    /// `verify`: None when off.
    pub method: Option<Method>,
    /// Whether `verify` was given (a `verify_pattern` alone turns on
    /// [`Method::PatternHeader`], as in fio).
    pub method_given: bool,
    /// `verify_pattern`, parsed.
    pub pattern: Option<Pattern>,
    /// `verify_interval`: bytes per header (None: the gcd of the job's
    /// write block sizes, as fio).
    pub interval: Option<u32>,
    /// `verify_offset`: the header sits this far into each interval.
    pub offset: u32,
    /// `verify_backlog`: verify after every N blocks written.
    pub backlog: Option<u64>,
    /// `verify_backlog_batch`: how many to verify then (default N).
    pub backlog_batch: Option<u64>,
    /// `verify_fatal`: stop the job at the first failure.
    pub fatal: bool,
    /// `verify_dump`: write the bad block and the expected one to files.
    pub dump: bool,
    /// `do_verify`: read back after writing (default 1).
    pub do_verify: bool,
    /// `verify_only`: do not write; read back what the job would write.
    pub only: bool,
    /// `verify_state_save`: record what was written when the job ends (default 1).
    pub state_save: bool,
    /// `verify_state_load`: verify only what a saved state says was written.
    pub state_load: bool,
    /// `experimental_verify`: replay the job's offsets rather than log them.
    pub experimental: bool,
    /// `verify_write_sequence` (newer fio; default 1): check each header's
    /// write number against the last write of the block.
    pub write_sequence: bool,
    /// `verify_policy=fsynced` (newer fio): a saved state vouches only for
    /// the writes issued before the last fsync that completed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fsynced: bool,
    /// `trim_percentage`, `trim_backlog`, `trim_backlog_batch`,
    /// `trim_verify_zero`: trim some written blocks while writing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<TrimSpec>,
}

/// fio's verify trims: of the blocks written with verification,
/// `percentage` percent are trimmed (discarded), a batch after every
/// `backlog` blocks written; with `zero`, reading one back must give zeroes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrimSpec {
    /// `trim_percentage` (0–100).
    pub percentage: u32,
    /// `trim_backlog`: trim after this many blocks written (0: never).
    pub backlog: u64,
    /// `trim_backlog_batch`: trims per batch (0: `backlog`).
    pub batch: u64,
    /// `trim_verify_zero` (default 1).
    pub zero: bool,
}

impl Default for TrimSpec {
    fn default() -> Self {
        TrimSpec {
            percentage: 0,
            backlog: 0,
            batch: 0,
            zero: true,
        }
    }
}

impl VerifySpec {
    /// The trims of a job that writes with verification, when it asks for
    /// any (fio trims only with `verify`, `trim_percentage` and
    /// `trim_backlog` all given).
    pub fn trims(&self) -> Option<TrimSpec> {
        self.trim
            .filter(|t| self.on() && t.percentage > 0 && t.backlog > 0)
    }

    /// The trim options, created on first use.
    pub fn trim_mut(&mut self) -> &mut TrimSpec {
        self.trim.get_or_insert_with(TrimSpec::default)
    }
}

impl Default for VerifySpec {
    fn default() -> Self {
        VerifySpec {
            method: None,
            method_given: false,
            pattern: None,
            interval: None,
            offset: 0,
            backlog: None,
            backlog_batch: None,
            fatal: false,
            dump: false,
            do_verify: true,
            only: false,
            state_save: true,
            state_load: false,
            experimental: false,
            write_sequence: true,
            fsynced: false,
            trim: None,
        }
    }
}

/// Greatest common divisor.
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl VerifySpec {
    /// Whether any verification is asked for.
    pub fn on(&self) -> bool {
        self.method.is_some()
    }

    /// The interval for writes of `sizes` (fio's rule: the given interval
    /// when it divides every size, else their gcd).
    pub fn interval_for(&self, sizes: &[u32]) -> u32 {
        let g = sizes.iter().fold(0u64, |g, &s| gcd(g, u64::from(s)));
        let g = u32::try_from(g).unwrap_or(u32::MAX).max(1);
        match self.interval {
            Some(i) if i > 0 && sizes.iter().all(|&s| s % i == 0) => i,
            _ => g,
        }
    }

    /// Checks that need only the job: the header must fit each interval;
    /// returns (option, message) for the job's error.
    pub fn check(&self, write_sizes: &[u32]) -> Result<(), (&'static str, String)> {
        let Some(m) = self.method else {
            return Ok(());
        };
        if matches!(m, Method::Pattern | Method::PatternHeader) && self.pattern.is_none() {
            return Err((
                "verify",
                "verify=pattern needs verify_pattern (e.g. verify_pattern=0xdeadbeef)".into(),
            ));
        }
        let iv = self.interval_for(write_sizes) as usize;
        let hdr = m.header_bytes();
        if hdr > 0 && iv <= hdr {
            return Err((
                "verify_interval",
                format!(
                    "{iv} bytes per header leave no data after verify={}'s {hdr}-byte header \
                     (use a larger bs or verify_interval)",
                    m.name()
                ),
            ));
        }
        let off = self.offset as usize;
        if hdr > 0 && off > 0 && (off < hdr || off + hdr > iv) {
            return Err((
                "verify_offset",
                format!(
                    "{off} would make verify={}'s {hdr}-byte header overlap itself or leave                      the {iv}-byte verify interval (allowed: 0, or {hdr}..={})",
                    m.name(),
                    iv.saturating_sub(hdr)
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_round_trip_through_fios_numbers_and_names() {
        for m in ALL {
            assert_eq!(Method::from_fio_type(m.fio_type()), Some(m));
            if !matches!(m, Method::PatternHeader) {
                assert_eq!(Method::parse(m.name()).unwrap(), Some(m));
            }
        }
        assert_eq!(Method::parse("0").unwrap(), None);
        assert!(Method::parse("crc16")
            .unwrap_err()
            .contains("not supported yet"));
        assert!(Method::parse("crc33")
            .unwrap_err()
            .contains("not a verify method"));
    }

    #[test]
    fn interval_follows_fios_rule() {
        let mut v = VerifySpec::default();
        assert_eq!(v.interval_for(&[4096, 16384]), 4096);
        assert_eq!(v.interval_for(&[6144, 4096]), 2048);
        v.interval = Some(512);
        assert_eq!(v.interval_for(&[4096]), 512);
        v.interval = Some(3000);
        assert_eq!(v.interval_for(&[4096]), 4096);
    }

    #[test]
    fn a_header_that_cannot_fit_is_refused() {
        let v = VerifySpec {
            method: Some(Method::Sha512),
            ..VerifySpec::default()
        };
        assert_eq!(v.check(&[128]).unwrap_err().0, "verify_interval");
        assert!(v.check(&[4096]).is_ok());
        let v = VerifySpec {
            method: Some(Method::Md5),
            offset: 4090,
            ..VerifySpec::default()
        };
        assert_eq!(v.check(&[4096]).unwrap_err().0, "verify_offset");
        let v = VerifySpec {
            method: Some(Method::Pattern),
            ..VerifySpec::default()
        };
        assert_eq!(v.check(&[4096]).unwrap_err().0, "verify");
    }
}
