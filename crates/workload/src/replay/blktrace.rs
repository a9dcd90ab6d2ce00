//! blktrace binaries as fio replays them (`blktrace.c`): a sequence of
//! the kernel's 48-byte `struct blk_io_trace` records
//!
//! ```text
//! u32 magic (0x65617400 | version 7)  u32 sequence  u64 time (ns)
//! u64 sector (512 bytes)  u32 bytes  u32 action  u32 pid  u32 device
//! u32 cpu  u16 error  u16 pdu_len (bytes of data after the record)
//! ```
//!
//! in the byte order of the machine that traced (either is read; the magic
//! tells). Only *queue* events are requests: a discard is a trim, a flush
//! a sync, anything else a read or a write by its write bit; zero-byte
//! reads and writes and notify records are passed over. The deepest queue
//! the trace reached (queue events less merges, up to each completion, at
//! most 1024) is the replay's default iodepth, as in fio.
//!
//! [`merge`] interleaves several traces by time into one
//! (`merge_blktrace_file`), each scaled in time (`merge_blktrace_scalars`)
//! and repeated (`merge_blktrace_iters`).

use super::{Action, Entry, FileKey, TraceError};
use ssdready_core::req::Ddir;
use std::io::Read;

/// The magic number, less its version byte.
pub const MAGIC: u32 = 0x6561_7400;
/// The record version fio reads.
pub const VERSION: u32 = 7;
/// Bytes of one record.
pub const RECORD: usize = 48;

const TC_SHIFT: u32 = 16;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
const TC_READ: u32 = 1 << 0;
const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_COMPLETE: u32 = 8;

/// One record, in the host's terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Magic and version.
    pub magic: u32,
    /// Event number.
    pub sequence: u32,
    /// ns.
    pub time: u64,
    /// 512-byte sector.
    pub sector: u64,
    /// Bytes.
    pub bytes: u32,
    /// Category bits << 16 | action.
    pub action: u32,
    /// Process.
    pub pid: u32,
    /// Device (major << 20 | minor).
    pub device: u32,
    /// CPU.
    pub cpu: u32,
    /// Completion error.
    pub error: u16,
    /// Bytes of data after the record.
    pub pdu_len: u16,
}

impl Record {
    /// Decode 48 bytes, little-endian or big-endian.
    pub fn decode(b: &[u8; RECORD], big_endian: bool) -> Record {
        let u32_at = |i: usize| {
            let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
            if big_endian {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        let u64_at = |i: usize| {
            let (lo, hi) = (u64::from(u32_at(i)), u64::from(u32_at(i + 4)));
            if big_endian {
                lo << 32 | hi
            } else {
                hi << 32 | lo
            }
        };
        let u16_at = |i: usize| {
            let a = [b[i], b[i + 1]];
            if big_endian {
                u16::from_be_bytes(a)
            } else {
                u16::from_le_bytes(a)
            }
        };
        Record {
            magic: u32_at(0),
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }

    /// The record's 48 bytes, little-endian.
    pub fn encode(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.magic.to_le_bytes());
        b[4..8].copy_from_slice(&self.sequence.to_le_bytes());
        b[8..16].copy_from_slice(&self.time.to_le_bytes());
        b[16..24].copy_from_slice(&self.sector.to_le_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_le_bytes());
        b[28..32].copy_from_slice(&self.action.to_le_bytes());
        b[32..36].copy_from_slice(&self.pid.to_le_bytes());
        b[36..40].copy_from_slice(&self.device.to_le_bytes());
        b[40..44].copy_from_slice(&self.cpu.to_le_bytes());
        b[44..46].copy_from_slice(&self.error.to_le_bytes());
        b[46..48].copy_from_slice(&self.pdu_len.to_le_bytes());
        b
    }

    fn has(&self, category: u32) -> bool {
        self.action & (category << TC_SHIFT) != 0
    }

    fn kind(&self) -> u32 {
        self.action & 0xffff
    }

    /// fio's `t_get_ddir`: read, write, trim, or none.
    fn ddir(&self) -> Option<Ddir> {
        if self.has(TC_READ) {
            Some(Ddir::Read)
        } else if self.has(TC_WRITE) {
            Some(Ddir::Write)
        } else if self.has(TC_DISCARD) {
            Some(Ddir::Trim)
        } else {
            None
        }
    }
}

/// Whether `head` (a file's first bytes) starts a blktrace, and if so
/// whether it is big-endian (fio's `is_blktrace`).
pub fn detect(head: &[u8]) -> Option<bool> {
    let b: &[u8; 4] = head.get(..4)?.try_into().ok()?;
    if head.len() < RECORD {
        return None;
    }
    if u32::from_le_bytes(*b) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else if u32::from_be_bytes(*b) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// A blktrace being read, request by request.
pub struct BlkTrace<R> {
    reader: R,
    name: String,
    big_endian: bool,
    record_no: u64,
    this_depth: [u32; 3],
    depth: [u32; 3],
    failed: bool,
    /// The first request's time, which later ones are checked against.
    first_time: Option<u64>,
}

/// The longest span of a trace: a year (in ns; further is a damaged time).
pub const MAX_SPAN_NS: u64 = 365 * 86_400 * 1_000_000_000;

impl<R: Read> BlkTrace<R> {
    /// A trace `name` (for messages) in the given byte order.
    pub fn new(reader: R, name: &str, big_endian: bool) -> Self {
        BlkTrace {
            reader,
            name: name.to_string(),
            big_endian,
            record_no: 0,
            this_depth: [0; 3],
            depth: [0; 3],
            failed: false,
            first_time: None,
        }
    }

    /// The deepest queue seen so far (fio's probed depth: 1 to 1024).
    pub fn depth(&self) -> u32 {
        self.depth
            .iter()
            .zip(self.this_depth)
            .map(|(&d, t)| d.max(t).min(1024))
            .max()
            .unwrap_or(0)
            .max(1)
    }

    fn bad(&self, why: String) -> TraceError {
        TraceError {
            what: format!("{} record {}", self.name, self.record_no),
            why,
        }
    }

    /// The next record; None at the end.
    fn record(&mut self) -> Result<Option<Record>, TraceError> {
        let mut b = [0u8; RECORD];
        let mut got = 0;
        while got < RECORD {
            match self.reader.read(&mut b[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.bad(format!("cannot be read: {e}"))),
            }
        }
        if got == 0 {
            return Ok(None);
        }
        self.record_no += 1;
        if got < RECORD {
            return Err(self.bad(format!(
                "cut short: {got} of the {RECORD} bytes of a record"
            )));
        }
        let t = Record::decode(&b, self.big_endian);
        if t.magic & 0xffff_ff00 != MAGIC {
            return Err(self.bad(format!(
                "bad magic {:#010x} (a blktrace record starts with {MAGIC:#010x})",
                t.magic
            )));
        }
        if t.magic & 0xff != VERSION {
            return Err(self.bad(format!(
                "blktrace version {} (allowed: {VERSION})",
                t.magic & 0xff
            )));
        }
        let mut left = u64::from(t.pdu_len);
        if left > 0 {
            let skipped = std::io::copy(&mut (&mut self.reader).take(left), &mut std::io::sink())
                .map_err(|e| self.bad(format!("cannot be read: {e}")))?;
            left -= skipped;
            if left > 0 {
                return Err(self.bad(format!("cut short: {left} bytes of its data missing")));
            }
        }
        Ok(Some(t))
    }

    fn track_depth(&mut self, t: &Record) {
        if t.has(TC_NOTIFY) {
            return;
        }
        let Some(d) = t.ddir().map(Ddir::idx) else {
            return;
        };
        match t.kind() {
            TA_QUEUE => self.this_depth[d] += 1,
            TA_BACKMERGE | TA_FRONTMERGE => {
                self.this_depth[d] = self.this_depth[d].saturating_sub(1)
            }
            TA_COMPLETE => {
                self.depth[d] = self.depth[d].max(self.this_depth[d]);
                self.this_depth[d] = 0;
            }
            _ => {}
        }
    }

    /// The request of a queue record, if it is one; a byte offset past
    /// 2^64 or a time more than a year after the first record is an error.
    fn entry(&mut self, t: &Record) -> Result<Option<Entry>, TraceError> {
        if t.kind() != TA_QUEUE || t.has(TC_NOTIFY) {
            return Ok(None);
        }
        let first = *self.first_time.get_or_insert(t.time);
        if t.time.saturating_sub(first) > MAX_SPAN_NS {
            return Err(self.bad(format!(
                "time {} ns is more than a year after the first request's {first} ns (a damaged trace?)",
                t.time
            )));
        }
        let offset = t
            .sector
            .checked_mul(512)
            .and_then(|o| o.checked_add(u64::from(t.bytes)).map(|_| o))
            .ok_or_else(|| {
                self.bad(format!(
                    "sector {} ({} bytes) ends past 2^64 bytes, beyond any device",
                    t.sector, t.bytes
                ))
            })?;
        let file = FileKey::Dev(t.device);
        let action = if t.has(TC_DISCARD) {
            Action::Io {
                ddir: Ddir::Trim,
                offset,
                len: t.bytes,
            }
        } else if t.has(TC_FLUSH) {
            Action::Sync { data_only: false }
        } else {
            if t.bytes == 0 {
                return Ok(None);
            }
            let ddir = if t.has(TC_WRITE) {
                Ddir::Write
            } else {
                Ddir::Read
            };
            Action::Io {
                ddir,
                offset,
                len: t.bytes,
            }
        };
        if matches!(action, Action::Io { len: 0, .. }) {
            return Ok(None);
        }
        Ok(Some(Entry {
            time_ns: Some(t.time),
            file,
            action,
        }))
    }
}

impl<R: Read> Iterator for BlkTrace<R> {
    type Item = Result<Entry, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            match self.record() {
                Ok(None) => return None,
                Ok(Some(t)) => {
                    self.track_depth(&t);
                    match self.entry(&t) {
                        Ok(Some(e)) => return Some(Ok(e)),
                        Ok(None) => {}
                        Err(e) => {
                            self.failed = true;
                            return Some(Err(e));
                        }
                    }
                }
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// One input of a merge: its records and how to scale and repeat them.
struct Cursor {
    records: Vec<Record>,
    next: usize,
    iter: u32,
    iters: u32,
    scalar: f64,
    length: u64,
    current: Option<Record>,
}

impl Cursor {
    /// fio's `read_trace`: the next queue record with a direction, its
    /// time moved by the iteration and scaled.
    fn advance(&mut self) {
        loop {
            let Some(t) = self.records.get(self.next).copied() else {
                if self.length == 0 {
                    self.length = self.current.map_or(0, |c| c.time);
                }
                self.iter += 1;
                if self.iter < self.iters {
                    self.next = 0;
                    continue;
                }
                self.current = None;
                return;
            };
            self.next += 1;
            if t.kind() != TA_QUEUE || t.ddir().is_none() {
                continue;
            }
            let mut t = t;
            let shifted = t
                .time
                .saturating_add(u64::from(self.iter).saturating_mul(self.length));
            t.time = (shifted as f64 * self.scalar / 100.0) as u64;
            t.pdu_len = 0;
            self.current = Some(t);
            return;
        }
    }
}

/// Merge blktraces (each given as its bytes and name) into one, earliest
/// request first, as fio's `merge_blktrace_iologs`: trace i's times are
/// scaled by `scalars[i]` percent and it is gone through `iters[i]` times
/// (each list empty, or one value per trace). Returns the merged trace.
pub fn merge(
    inputs: &[(String, Vec<u8>)],
    scalars: &[f64],
    iters: &[u32],
) -> Result<Vec<u8>, TraceError> {
    let n = inputs.len();
    for (what, len) in [
        ("merge_blktrace_scalars", scalars.len()),
        ("merge_blktrace_iters", iters.len()),
    ] {
        if len != 0 && len != n {
            return Err(TraceError {
                what: format!("option '{what}'"),
                why: format!("{len} values for {n} traces in read_iolog (allowed: one per trace)"),
            });
        }
    }
    let mut cursors = Vec::new();
    for (i, (name, bytes)) in inputs.iter().enumerate() {
        let Some(big) = detect(bytes) else {
            return Err(TraceError {
                what: name.clone(),
                why: "is not a blktrace (merge_blktrace_file merges blktrace binaries only)".into(),
            });
        };
        let mut records = Vec::new();
        let mut reader = BlkTrace::new(&bytes[..], name, big);
        while let Some(t) = reader.record()? {
            records.push(t);
        }
        let mut c = Cursor {
            records,
            next: 0,
            iter: 0,
            iters: iters.get(i).copied().unwrap_or(1).max(1),
            scalar: scalars.get(i).copied().unwrap_or(100.0),
            length: 0,
            current: None,
        };
        c.advance();
        cursors.push(c);
    }
    let mut out = Vec::new();
    while let Some(c) = cursors
        .iter_mut()
        .filter(|c| c.current.is_some())
        .min_by_key(|c| c.current.map_or(u64::MAX, |t| t.time))
    {
        let t = c.current.expect("a current record");
        out.extend_from_slice(&t.encode());
        c.advance();
    }
    Ok(out)
}
