//! Going through a trace in a worker (fio's `read_iolog_get` and
//! `iolog_delay`): each entry waits, after the previous one was issued, as
//! long as the trace waited between them — times 100 / `replay_time_scale`,
//! not at all with `replay_no_stall`; a version 2 `wait` waits until its
//! time since the replay began. While requests are in flight a request not
//! yet due waits for completions; with none in flight it sleeps. File
//! actions (`add`, `open`, `close`) only keep their time: the job's
//! targets stay open through the replay.

use super::{adjust, Action, Entries, Entry, FileKey, IologSpec, TraceError};
use crate::jobflow::step::{FlowIo, Tag};
use std::collections::HashMap;

/// What the replay asks of the worker next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Issue this request.
    Io(FlowIo),
    /// The next request is not due: wait for a completion first.
    Drain,
    /// The next request is due in this many ns (nothing is in flight).
    Sleep(u64),
    /// The trace is over.
    Done,
}

/// One worker's replay of one trace.
pub struct Replay {
    entries: Entries,
    spec: IologSpec,
    /// Trace file → target index (empty: every request to target 0).
    targets: HashMap<FileKey, u32>,
    /// The entry waiting for its time, and when it is due.
    held: Option<(FlowIoOrNot, u64)>,
    last_trace_ns: Option<u64>,
    last_issue: Option<u64>,
    start: Option<u64>,
    error: Option<TraceError>,
}

/// An entry that issues a request, or one that only keeps time.
#[derive(Clone, Copy, Debug)]
enum FlowIoOrNot {
    Io(FlowIo),
    Nothing,
}

impl Replay {
    /// A replay of `entries` with the job's options; `files` are the
    /// trace's files in the order of the job's targets (ignored with
    /// `replay_redirect`: every request goes to the one target).
    pub fn new(entries: Entries, spec: &IologSpec, files: &[FileKey]) -> Self {
        let targets = match spec.redirect {
            Some(_) => HashMap::new(),
            None => files
                .iter()
                .enumerate()
                .map(|(i, k)| (k.clone(), i as u32))
                .collect(),
        };
        Replay {
            entries,
            spec: spec.clone(),
            targets,
            held: None,
            last_trace_ns: None,
            last_issue: None,
            start: None,
            error: None,
        }
    }

    /// Why the replay ended early, if the trace could not be read to its end.
    pub fn error(&self) -> Option<&TraceError> {
        self.error.as_ref()
    }

    /// fio's `delay_since_ttime`: the entry's wait after the previous one, ns.
    fn delay_of(&mut self, e: &Entry) -> u64 {
        let Some(t) = e.time_ns else {
            return 0;
        };
        let last = self.last_trace_ns.replace(t);
        match last {
            Some(l) if !self.spec.no_stall && t >= l => {
                let d = t - l;
                match self.spec.time_scale {
                    100 => d,
                    s => (d as f64 * 100.0 / f64::from(s.max(1))) as u64,
                }
            }
            _ => 0,
        }
    }

    /// The next entry with its due time, or None at the end of the trace.
    fn take(&mut self, now: u64) -> Option<(FlowIoOrNot, u64)> {
        let start = *self.start.get_or_insert(now);
        loop {
            let e = match self.entries.next()? {
                Ok(e) => e,
                Err(err) => {
                    self.error = Some(err);
                    return None;
                }
            };
            let delay = self.delay_of(&e);
            let Some(e) = adjust(&self.spec, e) else {
                continue;
            };
            let file = if self.targets.is_empty() {
                0
            } else {
                *self.targets.get(&e.file).unwrap_or(&0)
            };
            let due = self.last_issue.unwrap_or(now).saturating_add(delay);
            let what = match e.action {
                Action::Io { ddir, offset, len } => FlowIoOrNot::Io(FlowIo::Rw {
                    file,
                    ddir,
                    offset,
                    len,
                    tag: Tag::Plain,
                }),
                Action::Sync { data_only } => FlowIoOrNot::Io(FlowIo::Sync { file, data_only }),
                Action::WaitUntilMs(ms) if !self.spec.no_stall => {
                    return Some((FlowIoOrNot::Nothing, start + ms.saturating_mul(1_000_000)));
                }
                Action::WaitUntilMs(_) => continue,
                Action::Add | Action::Open | Action::Close => FlowIoOrNot::Nothing,
            };
            return Some((what, due));
        }
    }

    /// What to do at `now` with `inflight` requests in flight.
    pub fn next(&mut self, now: u64, inflight: usize) -> Next {
        loop {
            let (what, due) = match self.held.take() {
                Some(h) => h,
                None => match self.take(now) {
                    Some(h) => h,
                    None => return Next::Done,
                },
            };
            if now < due {
                self.held = Some((what, due));
                return match inflight {
                    0 => Next::Sleep(due - now),
                    _ => Next::Drain,
                };
            }
            self.last_issue = Some(now);
            if let FlowIoOrNot::Io(io) = what {
                return Next::Io(io);
            }
        }
    }
}

/// Entries from a list (a trace read whole before the replay).
pub fn from_vec(v: Vec<Entry>) -> Entries {
    Box::new(v.into_iter().map(Ok))
}
