//! The value types of a job's fio options that are more than a number: per
//! direction values, zoned distributions, how files are chosen, how a
//! sequence of offsets is modified (`rw=randread:8`, `rw=read:-8k`), and a
//! size that may be a share of the target (`size=50%`).
//!
//! fio writes a value per data direction as `read,write,trim`; a value
//! not followed by a comma applies to the directions after it too
//! ([`split_per_dir`]).

use serde::{Deserialize, Serialize};

/// Read, write, trim: the index of a direction in a per-direction value.
pub const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// Split a per-direction value as fio does (`handle_option` in parse.c):
/// the first piece is for reads, the second for writes, the third for
/// trims; a piece that is the last one given also applies to the
/// directions after it, unless a comma follows it (`8k,32k,` leaves trims
/// at the default). An empty piece leaves its direction unset. With
/// `other_separators`, a value without a comma may also be split at `:`
/// or `-` (fio's rule for plain numbers: `rate=1m:500k`).
pub fn split_per_dir(v: &str, other_separators: bool) -> [Option<&str>; 3] {
    let mut out: [Option<&str>; 3] = [None; 3];
    let mut rest = v;
    let mut curr = 0usize;
    loop {
        let mut sep = rest.find(',');
        let trailing = sep.is_some_and(|i| i + 1 == rest.len());
        if other_separators && sep.is_none() {
            sep = rest.find(':').or_else(|| {
                // A leading '-' is a sign, not a separator.
                rest.char_indices()
                    .skip(1)
                    .find(|&(_, c)| c == '-')
                    .map(|(i, _)| i)
            });
        }
        let piece = sep.map_or(rest, |i| &rest[..i]);
        let more = sep.is_some();
        if !piece.is_empty() && curr < 3 {
            out[curr] = Some(piece);
            if !more {
                for d in out.iter_mut().skip(curr + 1) {
                    *d = Some(piece);
                }
            }
        }
        match sep {
            Some(i) if !trailing => {
                rest = &rest[i + 1..];
                curr += 1;
            }
            _ => break,
        }
    }
    out
}

/// One zone of `random_distribution=zoned:` (or `zoned_abs:`): this share
/// of the I/Os goes to the next `span` of the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    /// Percent of the I/Os.
    pub access_pct: u32,
    /// Percent of the region (zoned) or bytes (zoned_abs).
    pub span: u64,
}

/// How the offset of a random job's I/Os between two random ones is made
/// (`rw_sequencer`, with `rw=randread:N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwSequencer {
    /// The next block after the previous I/O.
    Sequential,
    /// The previous I/O's offset again.
    Identical,
}

/// How a job with several files picks the file of its next I/O
/// (`file_service_type`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "param")]
pub enum FileService {
    /// The files in turn (fio's default).
    RoundRobin,
    /// One file until it is done, then the next.
    Sequential,
    /// A file chosen uniformly at random.
    Random,
    /// Zipf with exponent θ over the files.
    Zipf(f64),
    /// Pareto with power h over the files.
    Pareto(f64),
    /// fio's "gauss" over the files, with its deviation in percent.
    Normal(f64),
}

impl FileService {
    /// Whether the choice is skewed (fio never marks such a file done: it
    /// starts it over).
    pub fn is_skewed(self) -> bool {
        matches!(
            self,
            FileService::Zipf(_) | FileService::Pareto(_) | FileService::Normal(_)
        )
    }
}

/// A size or offset that is either bytes or a share of the target's size
/// (`size=50%`, `offset=10%`, `offset_increment=25%`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Amount {
    /// Bytes.
    Bytes(u64),
    /// Percent (1..=100) of the file's or device's size.
    Percent(u32),
}

impl Default for Amount {
    fn default() -> Self {
        Amount::Bytes(0)
    }
}

impl Amount {
    /// The bytes this amounts to on a target of `target_size` bytes;
    /// a percentage is aligned down to `align` (fio aligns percentage
    /// offsets to the minimum block size, or `offset_align`).
    pub fn resolve(self, target_size: u64, align: u64) -> u64 {
        match self {
            Amount::Bytes(b) => b,
            Amount::Percent(p) => {
                let raw = (u128::from(target_size) * u128::from(p) / 100) as u64;
                let a = align.max(1);
                raw / a * a
            }
        }
    }

    /// The bytes, when given in bytes.
    pub fn bytes(self) -> Option<u64> {
        match self {
            Amount::Bytes(b) => Some(b),
            Amount::Percent(_) => None,
        }
    }
}

/// Why a size option's value ([`parse_amount`]) could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error("'{0}' is not a percentage (allowed: 1% to 100%)")]
    NotAPercentage(String),
    #[error("{0}% is outside 1% to 100%")]
    PercentRange(u32),
    #[error(transparent)]
    Bytes(#[from] crate::units::UnitError),
}

impl From<AmountError> for String {
    fn from(e: AmountError) -> String {
        e.to_string()
    }
}

/// A size option's value: a percentage (`50%`, 1..=100, fio's form) or a
/// size in bytes parsed by `bytes`.
pub fn parse_amount(
    v: &str,
    bytes: impl Fn(&str) -> Result<u64, crate::units::UnitError>,
) -> Result<Amount, AmountError> {
    match v.trim().strip_suffix('%') {
        Some(p) => {
            let n: u32 = p
                .trim()
                .parse()
                .map_err(|_| AmountError::NotAPercentage(v.to_string()))?;
            if !(1..=100).contains(&n) {
                return Err(AmountError::PercentRange(n));
            }
            Ok(Amount::Percent(n))
        }
        None => Ok(Amount::Bytes(bytes(v)?)),
    }
}

/// The I/O engine a job uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// `pread`/`pwrite`, one I/O at a time per worker.
    Psync,
    /// Linux io_uring.
    IoUring,
    /// Linux native AIO (io_submit / io_getevents).
    Libaio,
    /// POSIX AIO (`aio_read`, `aio_write`, `aio_suspend`): glibc's helper
    /// threads doing pread/pwrite.
    #[serde(rename = "posixaio")]
    PosixAio,
    /// No I/O at all: measures the tool's own cost per I/O.
    Null,
    /// The SSD emulator's own queue pairs (set when the target is `emu:…`).
    Emu,
    /// SCSI commands through SG_IO (fio's `sg`).
    Sg,
    /// NVMe commands through io_uring passthrough (fio's `io_uring_cmd`).
    UringCmd,
}

impl EngineKind {
    /// fio's spelling.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Libaio => "libaio",
            EngineKind::PosixAio => "posixaio",
            EngineKind::Null => "null",
            EngineKind::Emu => "emu",
            EngineKind::Sg => "sg",
            EngineKind::UringCmd => "io_uring_cmd",
        }
    }
}

/// The engine options of a job.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineOptions {
    /// e4defrag `donorname`: the donor file (in `directory` when set).
    pub donorname: Option<String>,
    /// e4defrag `inplace`: allocate and free the donor's blocks per move.
    pub inplace: bool,
    /// Options of an engine that needs a library
    /// ([`crate::option_table_library`]), as written.
    #[serde(default)]
    pub library: Vec<(String, String)>,
    /// The options engines declare in their own files
    /// ([`crate::options::OPTIONS_IN_FILES`]), as written: (name, value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub of_files: Vec<(String, String)>,
}

impl EngineOptions {
    /// The value the job gave an option of an engine's file, as written.
    pub fn own(&self, name: &str) -> Option<&str> {
        self.of_files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Give an option of an engine's file its value (the last one given
    /// holds, as for every option).
    pub fn set_own(&mut self, name: &str, value: &str) {
        set_pair(&mut self.of_files, name, value);
    }
}

/// `name`'s value in a list of options kept as written: the last one
/// given holds.
pub(crate) fn set_pair(list: &mut Vec<(String, String)>, name: &str, value: &str) {
    list.retain(|(n, _)| n != name);
    list.push((name.to_string(), value.to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_direction_values_split_as_in_fio() {
        let s = |v| split_per_dir(v, false);
        assert_eq!(s("256k"), [Some("256k"); 3]);
        assert_eq!(s("8k,32k"), [Some("8k"), Some("32k"), Some("32k")]);
        assert_eq!(s("8k,32k,"), [Some("8k"), Some("32k"), None]);
        assert_eq!(s(",8k"), [None, Some("8k"), Some("8k")]);
        assert_eq!(s(",8k,"), [None, Some("8k"), None]);
        assert_eq!(s("1,2,3"), [Some("1"), Some("2"), Some("3")]);
        assert_eq!(s("500k,"), [Some("500k"), None, None]);
        assert_eq!(
            s("2k/50:4k/50,4k/90:8k/10"),
            [
                Some("2k/50:4k/50"),
                Some("4k/90:8k/10"),
                Some("4k/90:8k/10")
            ]
        );
        let n = |v| split_per_dir(v, true);
        assert_eq!(n("1m:500k"), [Some("1m"), Some("500k"), Some("500k")]);
        assert_eq!(n("4k-8k"), [Some("4k"), Some("8k"), Some("8k")]);
        assert_eq!(n("-8k"), [Some("-8k"); 3], "a sign, not a separator");
    }

    #[test]
    fn amounts_are_bytes_or_a_share() {
        let b = |v: &str| crate::units::parse_size(v, 1024);
        assert_eq!(parse_amount("1g", b), Ok(Amount::Bytes(1 << 30)));
        assert_eq!(parse_amount("50%", b), Ok(Amount::Percent(50)));
        assert!(parse_amount("0%", b).is_err());
        assert!(parse_amount("101%", b).is_err());
        assert_eq!(Amount::Percent(50).resolve(10_000, 4096), 4096);
        assert_eq!(Amount::Percent(100).resolve(10_000, 1), 10_000);
    }
}

/// A word that is none of an option's choices: `'{value}' is not
/// {expected}`, `expected` naming the choices or what they are.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{value}' is not {expected}")]
pub struct NotOneOf {
    pub value: String,
    pub expected: &'static str,
}

impl NotOneOf {
    /// `value` is not `expected`.
    pub fn new(value: &str, expected: &'static str) -> NotOneOf {
        NotOneOf {
            value: value.to_string(),
            expected,
        }
    }
}

impl From<NotOneOf> for String {
    fn from(e: NotOneOf) -> String {
        e.to_string()
    }
}

/// Why `continue_on_error` or `ignore_error` could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorListError {
    #[error("'{0}' is not an error type")]
    NotAnErrorType(String),
    #[error("'{value}' has {lists} lists; at most three (read,write,verify)")]
    TooManyLists { value: String, lists: usize },
    #[error("unknown error '{0}': give an errno name from EPERM to ERANGE (fio's list) or a number from 1 to 4095")]
    UnknownErrno(String),
}

impl From<ErrorListError> for String {
    fn from(e: ErrorListError) -> String {
        e.to_string()
    }
}

/// fio `continue_on_error`: which failed I/Os a job counts and goes past
/// instead of stopping at its first error. fio's rule (`td_error_type`):
/// a verification failure (EILSEQ) is a `verify` error, a failed read a
/// `read` error, any other failed I/O (writes, trims, syncs) a `write`
/// error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueOn {
    pub read: bool,
    pub write: bool,
    pub verify: bool,
}

impl ContinueOn {
    /// fio's values: none (0), read, write, io (read and write), verify,
    /// all (1).
    pub fn parse(v: &str) -> Result<ContinueOn, ErrorListError> {
        let (read, write, verify) = match v {
            "none" | "0" => (false, false, false),
            "read" => (true, false, false),
            "write" => (false, true, false),
            "io" => (true, true, false),
            "verify" => (false, false, true),
            "all" | "1" => (true, true, true),
            _ => return Err(ErrorListError::NotAnErrorType(v.to_string())),
        };
        Ok(ContinueOn {
            read,
            write,
            verify,
        })
    }

    /// Whether any error is gone past.
    pub fn any(&self) -> bool {
        self.read || self.write || self.verify
    }

    /// Whether a failed I/O of direction `read` (else a write, trim or
    /// sync) is gone past.
    pub fn io(&self, read: bool) -> bool {
        if read {
            self.read
        } else {
            self.write
        }
    }

    /// fio's name of the value.
    pub fn name(&self) -> &'static str {
        match (self.read, self.write, self.verify) {
            (false, false, false) => "none",
            (true, false, false) => "read",
            (false, true, false) => "write",
            (true, true, false) => "io",
            (false, false, true) => "verify",
            (true, true, true) => "all",
            // Not reachable from fio's values; named by what it covers.
            (true, false, true) => "read,verify",
            (false, true, true) => "write,verify",
        }
    }
}

/// The kind of a failed I/O, as fio's `td_error_type` sorts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Read,
    /// A failed write, trim or sync.
    Write,
    /// A verification failure (EILSEQ).
    Verify,
}

/// The errnos fio's `continue_on_error` goes past when `ignore_error` does
/// not list that kind's own: EIO and EILSEQ (fio's `__NON_FATAL_ERR`). Any
/// other error (ENOSPC, say) still stops the job.
pub const NON_FATAL_ERRNOS: &[i32] = &[5, 84];

/// fio's names for errnos in `ignore_error` (`str2error`): errno 1 to 34,
/// in order. Any other errno is given by its number.
const ERRNO_NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// fio `ignore_error=READ,WRITE,VERIFY`: per kind, the errnos (separated
/// by `:`) a job counts and goes past; a kind with a list goes past those
/// errnos even without `continue_on_error` (fio sets that kind's bit), and
/// only those. `None`: the kind keeps `continue_on_error`'s EIO and EILSEQ.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreErrors {
    pub read: Option<Vec<i32>>,
    pub write: Option<Vec<i32>>,
    pub verify: Option<Vec<i32>>,
}

impl IgnoreErrors {
    /// fio's syntax: up to three comma-separated lists (read, write,
    /// verify), each of errno names (EIO, ENOSPC, ...) or numbers
    /// separated by `:`; an empty list leaves that kind as it was.
    pub fn parse(v: &str) -> Result<IgnoreErrors, ErrorListError> {
        let mut out = IgnoreErrors::default();
        let lists: Vec<&str> = v.trim().split(',').collect();
        if lists.len() > 3 {
            return Err(ErrorListError::TooManyLists {
                value: v.to_string(),
                lists: lists.len(),
            });
        }
        for (i, list) in lists.iter().enumerate() {
            let mut errnos = Vec::new();
            for name in list.split(':').map(str::trim) {
                if name.is_empty() {
                    break;
                }
                errnos.push(errno_of(name)?);
            }
            if !errnos.is_empty() {
                *out.list_mut(i) = Some(errnos);
            }
        }
        Ok(out)
    }

    fn list_mut(&mut self, i: usize) -> &mut Option<Vec<i32>> {
        match i {
            0 => &mut self.read,
            1 => &mut self.write,
            _ => &mut self.verify,
        }
    }

    /// The list `ignore_error` gives for a kind, if any.
    pub fn list(&self, kind: ErrorKind) -> Option<&[i32]> {
        match kind {
            ErrorKind::Read => self.read.as_deref(),
            ErrorKind::Write => self.write.as_deref(),
            ErrorKind::Verify => self.verify.as_deref(),
        }
    }

    /// Whether any kind has a list.
    pub fn any(&self) -> bool {
        self.read.is_some() || self.write.is_some() || self.verify.is_some()
    }
}

/// An errno from fio's name for it (EIO) or its number (5, 0x5, -5).
fn errno_of(name: &str) -> Result<i32, ErrorListError> {
    let n = if name.starts_with('E') {
        ERRNO_NAMES
            .iter()
            .position(|&e| e == name)
            .map(|i| i as i64 + 1)
    } else if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()
    } else {
        name.parse::<i64>().ok().map(i64::abs)
    };
    match n {
        Some(n @ 1..=4095) => Ok(n as i32),
        _ => Err(ErrorListError::UnknownErrno(name.to_string())),
    }
}

impl ContinueOn {
    /// Whether a failed I/O of this kind with this errno is counted and
    /// gone past (fio's `td_non_fatal_error`): its kind must be covered
    /// (by `continue_on_error`, or by an `ignore_error` list) and its errno
    /// listed (by `ignore_error`, else EIO or EILSEQ).
    pub fn goes_past(&self, ignore: &IgnoreErrors, kind: ErrorKind, errno: i32) -> bool {
        let covered = match kind {
            ErrorKind::Read => self.read,
            ErrorKind::Write => self.write,
            ErrorKind::Verify => self.verify,
        };
        match ignore.list(kind) {
            Some(list) => list.contains(&errno),
            None => covered && NON_FATAL_ERRNOS.contains(&errno),
        }
    }
}

#[cfg(test)]
mod ignore_error_tests {
    use super::*;

    #[test]
    fn ignore_error_parses_fio_syntax_per_kind() {
        let i = IgnoreErrors::parse("EIO:ENOSPC,28:0x1c,-84").unwrap();
        assert_eq!(i.read, Some(vec![5, 28]));
        assert_eq!(i.write, Some(vec![28, 28]));
        assert_eq!(i.verify, Some(vec![84]));
        let w = IgnoreErrors::parse(",ENOSPC").unwrap();
        assert_eq!((w.read, w.write, w.verify), (None, Some(vec![28]), None));
        assert!(IgnoreErrors::parse("EWHAT")
            .unwrap_err()
            .to_string()
            .contains("EWHAT"));
        assert!(IgnoreErrors::parse("0").is_err());
        assert!(IgnoreErrors::parse("EIO,EIO,EIO,EIO").is_err());
    }

    #[test]
    fn continue_on_error_alone_goes_past_only_eio_and_eilseq_as_fio() {
        let all = ContinueOn::parse("all").unwrap();
        let none = IgnoreErrors::default();
        assert!(all.goes_past(&none, ErrorKind::Write, 5));
        assert!(all.goes_past(&none, ErrorKind::Verify, 84));
        assert!(!all.goes_past(&none, ErrorKind::Write, 28));
        let enospc = IgnoreErrors::parse(",ENOSPC").unwrap();
        let off = ContinueOn::default();
        assert!(off.goes_past(&enospc, ErrorKind::Write, 28));
        assert!(!off.goes_past(&enospc, ErrorKind::Write, 5));
        assert!(!off.goes_past(&enospc, ErrorKind::Read, 28));
        assert!(all.goes_past(&enospc, ErrorKind::Read, 5));
    }
}

/// Which jobs a job with `exitall` stops when it ends (fio `exit_what`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's default).
    #[default]
    Group,
    /// Every job running now; the jobs after the next stonewall still run.
    Stonewall,
    /// Every job, and the jobs after it do not start.
    All,
}

impl ExitWhat {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            ExitWhat::Group => "group",
            ExitWhat::Stonewall => "stonewall",
            ExitWhat::All => "all",
        }
    }
}
