//! Recording what a worker issues as fio's version 3 iolog (fio's
//! `log_io_u` and `log_file`): the header, an `add` and an `open` line for
//! each of the job's targets when the job starts, one line per request as
//! it is issued (`TIME FILE read|write|trim OFFSET LENGTH`, or
//! `sync|datasync OFFSET 0`), and a `close` line per target at the end;
//! TIME is in µs since the job began. fio writes a sync's offset as
//! whatever its request held last; here it is the offset after the file's
//! last request, which no reader uses.
//!
//! The text is kept in memory (about 40 bytes a request) and written by
//! the caller when the job ends.

use crate::jobflow::step::FlowIo;
use ssdready_core::req::Ddir;
use std::fmt::Write;

/// One worker's log being recorded.
#[derive(Clone, Debug)]
pub struct Recorder {
    names: Vec<String>,
    start: Option<u64>,
    last: u64,
    next_offset: Vec<u64>,
    text: String,
}

impl Recorder {
    /// A log of the requests to the targets `names` (index = target).
    pub fn new(names: Vec<String>) -> Self {
        let mut text = String::from("fio version 3 iolog\n");
        for n in &names {
            let _ = writeln!(text, "0 {n} add");
        }
        Recorder {
            next_offset: vec![0; names.len()],
            names,
            start: None,
            last: 0,
            text,
        }
    }

    fn us(&mut self, now: u64) -> u64 {
        let start = *self.start.get_or_insert(now);
        self.last = now.max(self.last);
        (self.last - start) / 1000
    }

    fn name(names: &[String], file: u32) -> &str {
        names.get(file as usize).map_or("?", String::as_str)
    }

    /// The job starts issuing at `now` (ns on any steady clock): its
    /// targets are open.
    pub fn open(&mut self, now: u64) {
        if self.start.is_some() {
            return;
        }
        let t = self.us(now);
        for i in 0..self.names.len() {
            let _ = writeln!(self.text, "{t} {} open", self.names[i]);
        }
    }

    /// `io` is issued at `now`.
    pub fn issued(&mut self, now: u64, io: &FlowIo) {
        self.open(now);
        let t = self.us(now);
        match *io {
            FlowIo::Rw {
                file,
                ddir,
                offset,
                len,
                ..
            } => {
                let act = match ddir {
                    Ddir::Read => "read",
                    Ddir::Write => "write",
                    Ddir::Trim => "trim",
                };
                if let Some(n) = self.next_offset.get_mut(file as usize) {
                    *n = offset + u64::from(len);
                }
                let name = Self::name(&self.names, file);
                let _ = writeln!(self.text, "{t} {name} {act} {offset} {len}");
            }
            FlowIo::Sync { file, .. } | FlowIo::SyncRange { file } => {
                let act = match *io {
                    FlowIo::Sync {
                        data_only: true, ..
                    } => "datasync",
                    FlowIo::Sync { .. } => "sync",
                    _ => "sync_file_range",
                };
                let off = self.next_offset.get(file as usize).copied().unwrap_or(0);
                let name = Self::name(&self.names, file);
                let _ = writeln!(self.text, "{t} {name} {act} {off} 0");
            }
        }
    }

    /// The log's text, with the targets closed at `now` (None: at the
    /// last request).
    pub fn finish(mut self, now: Option<u64>) -> String {
        let t = match now {
            Some(n) if self.start.is_some() => self.us(n),
            _ => self.us(self.last),
        };
        for i in 0..self.names.len() {
            let _ = writeln!(self.text, "{t} {} close", self.names[i]);
        }
        self.text
    }
}
