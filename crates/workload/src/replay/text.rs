//! fio's text iologs, versions 2 and 3 (fio's `read_iolog`): a header line
//! (`fio version 2 iolog` or `fio version 3 iolog`), then one entry a line:
//!
//! ```text
//! [TIME] FILE read|write|trim|sync|datasync OFFSET LENGTH    (version 3: TIME in µs)
//! [TIME] FILE add|open|close
//! FILE wait MS 0                                             (version 2 only)
//! ```
//!
//! fio logs a line it cannot read and goes on; here such a line stops the
//! replay before it starts, naming the file and the line (a trace that does
//! not say what it means is not replayed half). Version 1 logs (no header)
//! are refused as fio refuses them. Blank lines are skipped; version 3's
//! `wait`, which fio ignores, is skipped too.

use super::{Action, Entry, FileKey, TraceError};
use ssdready_core::req::Ddir;
use std::io::BufRead;

const V2: &str = "fio version 2 iolog";
/// The longest line a valid log has (a file name of PATH_MAX and the
/// fields): a longer one is read no further (an endless input such as
/// `/dev/zero` has no line end at all).
pub const MAX_LINE: u64 = 8192;
/// The latest time a version 3 entry may have: a year after the job began
/// (a trace spans seconds to days; later is a damaged number).
pub const MAX_TIME_US: u64 = 365 * 86_400 * 1_000_000;
const V3: &str = "fio version 3 iolog";

/// A text iolog being read, entry by entry.
pub struct TextLog<R> {
    reader: R,
    name: String,
    version: u8,
    line_no: u64,
    line: String,
    failed: bool,
}

impl<R: BufRead> TextLog<R> {
    /// Read the header of the log `name` (for messages) from `reader`.
    pub fn open(mut reader: R, name: &str) -> Result<Self, TraceError> {
        let mut first = String::new();
        let err = |why: String| TraceError {
            what: format!("{name} line 1"),
            why,
        };
        read_line_capped(&mut reader, &mut first)
            .map_err(|e| err(format!("cannot be read: {e}")))?;
        if first.len() as u64 > MAX_LINE {
            return Err(err(format!(
                "longer than {MAX_LINE} bytes with no line end: not an iolog header"
            )));
        }
        let version = if first.starts_with(V2) {
            2
        } else if first.starts_with(V3) {
            3
        } else {
            let shown: String = first
                .trim_end()
                .chars()
                .take(60)
                .flat_map(char::escape_debug)
                .collect();
            return Err(err(format!(
                "'{shown}' is not an iolog header (allowed: '{V2}', '{V3}', or a blktrace binary; fio no longer reads version 1 logs)"
            )));
        };
        Ok(TextLog {
            reader,
            name: name.to_string(),
            version,
            line_no: 1,
            line: String::new(),
            failed: false,
        })
    }

    /// 2 or 3.
    pub fn version(&self) -> u8 {
        self.version
    }

    fn bad(&self, why: String) -> TraceError {
        TraceError {
            what: format!("{} line {}", self.name, self.line_no),
            why,
        }
    }

    /// The entry on the current line; None for a line to skip.
    fn parse_line(&self) -> Result<Option<Entry>, TraceError> {
        let mut words = self.line.split_whitespace();
        let mut time_ns = None;
        if self.version == 3 {
            let Some(t) = words.next() else {
                return Ok(None);
            };
            time_ns = Some(self.parse_time(t)?);
        }
        let rest: Vec<&str> = words.collect();
        if rest.is_empty() {
            return match time_ns {
                None => Ok(None),
                Some(_) => Err(self.bad("a time and nothing else".into())),
            };
        }
        let file = FileKey::Name(rest[0].to_string());
        let Some(&act) = rest.get(1) else {
            return Err(self.bad(format!("'{}' has no action", rest[0])));
        };
        let Some(action) = self.parse_action(act, &rest)? else {
            return Ok(None);
        };
        Ok(Some(Entry {
            time_ns,
            file,
            action,
        }))
    }

    /// A version 3 line's time, µs since the job began, in ns.
    fn parse_time(&self, t: &str) -> Result<u64, TraceError> {
        let us: u64 = t
            .parse()
            .map_err(|_| self.bad(format!("'{t}' is not a time (µs since the job began)")))?;
        if us > MAX_TIME_US {
            return Err(self.bad(format!(
                "time {us} µs is more than a year after the job began (a damaged trace?)"
            )));
        }
        Ok(us * 1000)
    }

    /// Field `i` of the line (after the time) as a whole number.
    fn number(&self, rest: &[&str], i: usize, what: &str) -> Result<u64, TraceError> {
        let w = rest[i];
        w.parse()
            .map_err(|_| self.bad(format!("{what} '{w}' is not a whole number")))
    }

    /// The line's action `act` with its fields (`rest`: the file, the
    /// action, then its arguments); None for an action to skip (a version
    /// 3 `wait`: the times say when).
    fn parse_action(&self, act: &str, rest: &[&str]) -> Result<Option<Action>, TraceError> {
        let action = match (act, rest.len()) {
            ("add", 2) => Action::Add,
            ("open", 2) => Action::Open,
            ("close", 2) => Action::Close,
            ("wait", 4) if self.version == 2 => {
                Action::WaitUntilMs(self.number(rest, 2, "the wait")?)
            }
            ("wait", 4) => return Ok(None),
            ("read" | "write" | "trim", 4) => self.io_action(act, rest)?,
            ("sync" | "datasync", 4) => {
                self.number(rest, 2, "the offset")?;
                self.number(rest, 3, "the length")?;
                Action::Sync {
                    data_only: act == "datasync",
                }
            }
            ("add" | "open" | "close", n) | ("read" | "write" | "trim" | "sync" | "datasync" | "wait", n) => {
                let want = if matches!(act, "add" | "open" | "close") {
                    "FILE ACTION"
                } else {
                    "FILE ACTION OFFSET LENGTH"
                };
                let time = if self.version == 3 { "TIME " } else { "" };
                return Err(self.bad(format!(
                    "'{act}' with {n} fields (allowed: {time}{want})"
                )));
            }
            _ => {
                return Err(self.bad(format!(
                    "unknown action '{act}' (allowed: read, write, trim, sync, datasync, add, open, close{})",
                    if self.version == 2 { ", wait" } else { "" }
                )))
            }
        };
        Ok(Some(action))
    }

    /// A read, write or trim: its offset and a length of 1 to 2³² − 1
    /// bytes that does not run past any file.
    fn io_action(&self, act: &str, rest: &[&str]) -> Result<Action, TraceError> {
        let ddir = match act {
            "read" => Ddir::Read,
            "write" => Ddir::Write,
            _ => Ddir::Trim,
        };
        let offset = self.number(rest, 2, "the offset")?;
        let len = self.number(rest, 3, "the length")?;
        let len = u32::try_from(len)
            .ok()
            .filter(|&l| l > 0)
            .ok_or_else(|| self.bad(format!("length {len} is not 1 to 4294967295 bytes")))?;
        offset
            .checked_add(u64::from(len))
            .ok_or_else(|| self.bad(format!("offset {offset} is past any file")))?;
        Ok(Action::Io { ddir, offset, len })
    }
}

/// One line into `buf`, reading at most [`MAX_LINE`] + 1 bytes.
fn read_line_capped(r: &mut impl BufRead, buf: &mut String) -> std::io::Result<usize> {
    use std::io::Read;
    Read::take(&mut *r, MAX_LINE + 1).read_line(buf)
}

impl<R: BufRead> Iterator for TextLog<R> {
    type Item = Result<Entry, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            self.line.clear();
            self.line_no += 1;
            match read_line_capped(&mut self.reader, &mut self.line) {
                Ok(0) => return None,
                Ok(n) if n as u64 > MAX_LINE => {
                    self.failed = true;
                    return Some(Err(self.bad(format!(
                        "longer than {MAX_LINE} bytes (no iolog line is; is this the right file?)"
                    ))));
                }
                Ok(_) => {}
                Err(e) => {
                    self.failed = true;
                    return Some(Err(self.bad(format!("cannot be read: {e}"))));
                }
            }
            match self.parse_line() {
                Ok(Some(e)) => return Some(Ok(e)),
                Ok(None) => continue,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}
