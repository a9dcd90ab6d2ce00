//! fio's pattern syntax (`verify_pattern`, and fio's `buffer_pattern`): a
//! value is a sequence of pieces, concatenated, of at most 128 MiB (fio's
//! current limit; fio 3.33 took 512 bytes):
//!
//! * `0x` followed by hex digits: those bytes, in the order written
//!   (`0xdeadbeef` → `de ad be ef`; an odd count gives a leading nibble:
//!   `0xfff` → `0f ff`); `0xff0x14` is two pieces;
//! * a decimal number in the range of a C `int`: its bytes, little-endian,
//!   as few as it needs (`66` → `42`, `-1024` → `00 fc ff ff`, `0` → `00`);
//! * `"text"`: the bytes between the quotes (no escapes, as in fio);
//! * `'path'`: the contents of a file (at most what still fits);
//! * `%o`: eight bytes replaced, in every block, by the block's offset
//!   (little-endian).
//!
//! The pattern repeats over a block from its first byte (filling and
//! checking blocks with it is the workload crate's `verify::pattern`).

use serde::{Deserialize, Serialize};

/// fio's MAX_PATTERN_SIZE (128 MiB since fio took patterns of any length;
/// 512 bytes in fio 3.33), so that a `'file'` pattern of a whole block
/// fills the block.
pub const MAX_PATTERN_BYTES: usize = 128 << 20;

/// Why a pattern could not be read. The text is the reason the user reads
/// after the option's name.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    #[error("empty pattern")]
    Empty,
    #[error("the pattern has more than {MAX_PATTERN_BYTES} bytes (fio's limit)")]
    TooLong,
    #[error("unterminated string in '{0}'")]
    UnterminatedString(String),
    #[error("empty string \"\"")]
    EmptyString,
    #[error("unterminated file name in '{0}'")]
    UnterminatedFile(String),
    /// The file could not be read; `err` is why.
    #[error("pattern file '{path}': {err}")]
    File { path: String, err: std::io::Error },
    #[error("pattern file '{0}' is empty")]
    EmptyFile(String),
    /// `%` followed by anything but `o`; the two characters.
    #[error("'{0}' is not a format (the one format is %o, the block offset)")]
    NotAFormat(String),
    #[error("'{0}' is not a pattern (allowed: 0x.., a number, \"text\", 'file', %o)")]
    NotAPattern(String),
    #[error("{0} is outside a C int")]
    NotAnInt(i64),
}

impl From<PatternError> for String {
    fn from(e: PatternError) -> String {
        e.to_string()
    }
}

/// A parsed pattern.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pattern {
    /// The bytes, with zeroes where `%o` goes.
    pub bytes: Vec<u8>,
    /// Where each `%o` starts within `bytes`.
    pub offsets_at: Vec<usize>,
}

impl Pattern {
    /// Parse fio's syntax (see the module docs); the error says what is wrong.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let mut p = Pattern {
            bytes: Vec::new(),
            offsets_at: Vec::new(),
        };
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err(PatternError::Empty);
        }
        while !rest.is_empty() {
            rest = match rest.as_bytes()[0] {
                b'"' => p.quoted(rest)?,
                b'\'' => p.file(rest)?,
                b'%' => p.format(rest)?,
                _ => p.number(rest)?,
            };
            if p.bytes.len() > MAX_PATTERN_BYTES {
                return Err(PatternError::TooLong);
            }
        }
        Ok(p)
    }

    fn quoted<'a>(&mut self, s: &'a str) -> Result<&'a str, PatternError> {
        let body = &s[1..];
        let end = body
            .find('"')
            .ok_or_else(|| PatternError::UnterminatedString(s.to_string()))?;
        if end == 0 {
            return Err(PatternError::EmptyString);
        }
        self.bytes.extend_from_slice(&body.as_bytes()[..end]);
        Ok(&body[end + 1..])
    }

    fn file<'a>(&mut self, s: &'a str) -> Result<&'a str, PatternError> {
        let body = &s[1..];
        let end = body
            .find('\'')
            .ok_or_else(|| PatternError::UnterminatedFile(s.to_string()))?;
        let path = &body[..end];
        // Only what the pattern has room for is read (`/dev/zero` included).
        let room = MAX_PATTERN_BYTES.saturating_sub(self.bytes.len());
        let mut data = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| {
                use std::io::Read;
                f.take(room.max(1) as u64).read_to_end(&mut data)
            })
            .map_err(|err| PatternError::File {
                path: path.to_string(),
                err,
            })?;
        if data.is_empty() {
            return Err(PatternError::EmptyFile(path.to_string()));
        }
        self.bytes.extend_from_slice(&data[..data.len().min(room)]);
        Ok(&body[end + 1..])
    }

    fn format<'a>(&mut self, s: &'a str) -> Result<&'a str, PatternError> {
        let Some(rest) = s.strip_prefix("%o") else {
            return Err(PatternError::NotAFormat(s.chars().take(2).collect()));
        };
        self.offsets_at.push(self.bytes.len());
        self.bytes.extend_from_slice(&[0; 8]);
        Ok(rest)
    }

    fn number<'a>(&mut self, s: &'a str) -> Result<&'a str, PatternError> {
        let b = s.as_bytes();
        if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' && b[2].is_ascii_hexdigit() {
            return Ok(self.hex(s));
        }
        // A decimal number, up to a following 0x (fio reads "-100xab" as
        // -10 then 0xab).
        let end = s
            .char_indices()
            .skip(1)
            .find(|&(i, c)| {
                !c.is_ascii_digit() || (c == '0' && matches!(b.get(i + 1), Some(b'x' | b'X')))
            })
            .map_or(s.len(), |(i, _)| i);
        let digits = &s[..end];
        let v: i64 = digits
            .parse()
            .map_err(|_| PatternError::NotAPattern(s.to_string()))?;
        let v = i32::try_from(v).map_err(|_| PatternError::NotAnInt(v))?;
        let mut u = v as u32;
        if u == 0 {
            self.bytes.push(0);
        }
        while u != 0 {
            self.bytes.push(u as u8);
            u >>= 8;
        }
        Ok(&s[end..])
    }

    fn hex<'a>(&mut self, s: &'a str) -> &'a str {
        let b = s.as_bytes();
        let mut n = b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        // "0xff0x14": the run's last '0' starts the next number.
        if n > 1 && b[2 + n - 1] == b'0' && matches!(b.get(2 + n), Some(b'x' | b'X')) {
            n -= 1;
        }
        let digits = &b[2..2 + n];
        let nib = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
        let mut i = 0;
        if n % 2 == 1 {
            self.bytes.push(nib(digits[0]));
            i = 1;
        }
        while i < n {
            self.bytes.push(nib(digits[i]) << 4 | nib(digits[i + 1]));
            i += 2;
        }
        &s[2 + n..]
    }

    /// The pattern for a block at `offset`: `%o` pasted in.
    #[inline]
    pub fn for_offset(&self, offset: u64) -> std::borrow::Cow<'_, [u8]> {
        if self.offsets_at.is_empty() {
            return std::borrow::Cow::Borrowed(&self.bytes);
        }
        let mut b = self.bytes.clone();
        let o = offset.to_le_bytes();
        for &at in &self.offsets_at {
            b[at..at + 8].copy_from_slice(&o);
        }
        std::borrow::Cow::Owned(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> Vec<u8> {
        Pattern::parse(s).unwrap().bytes
    }

    /// The examples of fio's lib/pattern.c documentation.
    #[test]
    fn fios_documented_examples_parse_to_the_same_bytes() {
        assert_eq!(bytes("\"abcd\""), b"abcd");
        assert_eq!(bytes("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(bytes("66"), [0x42]);
        assert_eq!(bytes("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(bytes("%o"), [0; 8]);
        assert_eq!(
            bytes("\"123\"0xFFeeCC"),
            [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]
        );
        let p = Pattern::parse("-100xab\"1\"%o\"2\"").unwrap();
        assert_eq!(
            p.bytes,
            [0xf6, 0xff, 0xff, 0xff, 0xab, 0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x32]
        );
        assert_eq!(p.offsets_at, [6]);
        let p = Pattern::parse("%o0xdeadbeef%o").unwrap();
        assert_eq!(p.offsets_at, [0, 12]);
        assert_eq!(&p.bytes[8..12], [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(
            bytes("0xfefefefefefefefefefefefefefefefefefefefefe"),
            [0xfe; 21]
        );
        assert_eq!(bytes("0xfff"), [0x0f, 0xff]);
        assert_eq!(bytes("0"), [0]);
        assert_eq!(bytes("256"), [0x00, 0x01]);
    }

    #[test]
    fn an_endless_pattern_file_is_read_only_as_far_as_the_pattern_goes() {
        let p = Pattern::parse("'/dev/zero'").unwrap();
        assert_eq!(p.for_offset(0).len(), MAX_PATTERN_BYTES);
        assert!(p.for_offset(0).iter().all(|&b| b == 0));
    }

    #[test]
    fn bad_patterns_say_why() {
        for (v, why) in [
            ("\"abc", "unterminated"),
            ("%x", "not a format"),
            ("zz", "not a pattern"),
            ("99999999999", "outside a C int"),
            ("'/no/such/file'", "pattern file"),
            ("", "empty"),
        ] {
            let e = Pattern::parse(v).unwrap_err().to_string();
            assert!(e.contains(why), "{v}: {e}");
        }
        // Longer than fio 3.33's 512 bytes, as fio's t0027 test uses.
        let long = format!("0x{}", "ab".repeat(16 << 10));
        assert_eq!(Pattern::parse(&long).unwrap().bytes.len(), 16 << 10);
    }
}
