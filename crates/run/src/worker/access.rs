//! What the worker does for the options of [`ssdready_core::spec_access`]
//! between the flow's next request and the engine, as fio 3.33 does it:
//!
//! * `lockfile` ([`FileLocks`]): one lock per file, shared by the job's
//!   clones (fio copies the parent's lock into each clone's file), taken
//!   before a request is queued and dropped when the engine's queue call
//!   returns — for a synchronous engine, around the I/O itself; for an
//!   asynchronous one, around its submission only (fio's `td_io_prep` …
//!   `td_io_queue`). `exclusive` lets one clone at a time in;
//!   `readwrite` lets reads share the file and a write have it alone.
//! * `serialize_overlap` ([`Access::waits`]): a request whose byte range
//!   overlaps one in flight is held back until that one completes (fio's
//!   `in_flight_overlap`, which compares offsets only — of any file — and
//!   only when another request is in flight; read-only jobs skip it).
//! * `sync_file_range` ([`Access::range`]): the span written to each file
//!   since its last sync (fio's `first_write` … `last_write`, grown as
//!   writes complete and forgotten when any sync of the file completes).

use ssdready_core::resolved::LoopConfig;
use ssdready_core::spec::JobSpec;
use ssdready_core::spec_access::LockMode;
use ssdready_core::Ddir;
use ssdready_workload::jobflow::FlowIo;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The locks of one job's files (`lockfile`), indexed as each clone's
/// files are.
pub struct FileLocks {
    mode: LockMode,
    locks: Vec<RwLock<()>>,
}

/// A lock held while one request is queued.
pub enum Held<'a> {
    /// A read under `readwrite`.
    Shared(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    /// Anything under `exclusive`; a write or trim under `readwrite`.
    Alone(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

impl FileLocks {
    /// The locks for a job whose clones have at most `files` files; None
    /// without `lockfile`.
    pub fn for_job(spec: &JobSpec, files: usize) -> Option<Arc<FileLocks>> {
        (spec.access.lockfile != LockMode::None).then(|| {
            Arc::new(FileLocks {
                mode: spec.access.lockfile,
                locks: (0..files.max(1)).map(|_| RwLock::new(())).collect(),
            })
        })
    }

    /// Take file `file`'s lock for a request in direction `ddir`. A lock
    /// another clone poisoned (by panicking) is taken all the same: it
    /// guards no data.
    pub fn hold(&self, file: u32, ddir: Ddir) -> Held<'_> {
        let lock = &self.locks[file as usize % self.locks.len()];
        match (self.mode, ddir) {
            (LockMode::ReadWrite, Ddir::Read) => {
                Held::Shared(lock.read().unwrap_or_else(|e| e.into_inner()))
            }
            _ => Held::Alone(lock.write().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

/// A worker's state for these options; the loop keeps none when the job
/// uses none of them.
pub(super) struct Access {
    /// `serialize_overlap`, when it applies (fio: a job that writes or trims).
    serialize: bool,
    /// A request held back by `serialize_overlap`, issued before the flow's next.
    pub held: Option<FlowIo>,
    /// `sync_file_range`'s flags, when set.
    pub range_flags: Option<u32>,
    /// Per file, `[first, end)` written since its last sync.
    spans: Vec<Option<(u64, u64)>>,
    /// Requests that waited for an overlapping one to complete.
    overlaps_waited: u64,
}

impl Access {
    /// The state the loop resolved as `cfg` needs over `files` targets;
    /// None when the job uses none of these options.
    pub fn new(cfg: &LoopConfig, files: usize) -> Option<Box<Access>> {
        let serialize = cfg.serialize_overlap;
        (serialize || cfg.sync_range_flags.is_some()).then(|| {
            Box::new(Access {
                serialize,
                held: None,
                range_flags: cfg.sync_range_flags,
                spans: vec![None; files.max(1)],
                overlaps_waited: 0,
            })
        })
    }

    /// Whether `io` must wait for one of `in_flight` (offset, length) to
    /// complete first; counts it when so.
    pub fn waits(&mut self, io: &FlowIo, in_flight: impl Iterator<Item = (u64, u32)>) -> bool {
        let FlowIo::Rw { offset, len, .. } = *io else {
            return false;
        };
        if !self.serialize {
            return false;
        }
        // fio looks only when another request is in flight (cur_depth > 1,
        // which counts this one): with none, nothing can overlap.
        let (x1, x2) = (offset, offset + u64::from(len));
        let waits = in_flight
            .into_iter()
            .any(|(o, l)| x1 < o + u64::from(l) && o < x2);
        self.overlaps_waited += u64::from(waits);
        waits
    }

    /// How many requests waited for an overlapping one (None when the job
    /// does not serialize).
    pub fn overlaps_waited(&self) -> Option<u64> {
        self.serialize.then_some(self.overlaps_waited)
    }

    /// A write of `[offset, offset + len)` to `file` completed.
    pub fn wrote(&mut self, file: u32, offset: u64, len: u64) {
        if let Some(s) = self.spans.get_mut(file as usize) {
            let end = offset + len;
            *s = Some(s.map_or((offset, end), |(a, b)| (a.min(offset), b.max(end))));
        }
    }

    /// A sync of `file` completed: what was written is forgotten.
    pub fn synced(&mut self, file: u32) {
        if let Some(s) = self.spans.get_mut(file as usize) {
            *s = None;
        }
    }

    /// The (offset, length) a `sync_file_range` of `file` covers now.
    pub fn range(&self, file: u32) -> (u64, u64) {
        match self.spans.get(file as usize).copied().flatten() {
            Some((a, b)) => (a, b - a),
            None => (0, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_workload::jobflow::Tag;

    fn write(offset: u64, len: u32) -> FlowIo {
        FlowIo::Rw {
            file: 0,
            ddir: Ddir::Write,
            offset,
            len,
            tag: Tag::Plain,
        }
    }

    fn access() -> Access {
        let mut spec = JobSpec::default();
        spec.rw = ssdready_core::spec::RwMode::RandWrite;
        spec.iodepth = 16;
        spec.access.serialize_overlap = true;
        *Access::new(&LoopConfig::new(&spec), 1).expect("serialize_overlap applies")
    }

    #[test]
    fn an_overlapping_request_waits_and_a_disjoint_one_goes() {
        let mut a = access();
        let flight = [(4096u64, 4096u32), (16384, 8192)];
        assert!(a.waits(&write(0, 8192), flight.iter().copied()));
        assert!(a.waits(&write(20480, 4096), flight.iter().copied()));
        assert!(!a.waits(&write(8192, 8192), flight.iter().copied()));
        assert!(!a.waits(&write(0, 4096), flight.iter().copied()));
        assert!(!a.waits(&write(0, 8192), std::iter::empty()));
        assert_eq!(a.overlaps_waited, 2);
    }

    #[test]
    fn read_only_jobs_and_depth_one_are_not_serialized() {
        let mut spec = JobSpec::default();
        spec.access.serialize_overlap = true;
        spec.iodepth = 16;
        assert!(Access::new(&LoopConfig::new(&spec), 1).is_none(), "rw=read");
        spec.rw = ssdready_core::spec::RwMode::Write;
        spec.iodepth = 1;
        assert!(
            Access::new(&LoopConfig::new(&spec), 1).is_none(),
            "iodepth=1"
        );
    }

    #[test]
    fn the_synced_range_spans_the_writes_since_the_last_sync() {
        let mut a = access();
        assert_eq!(a.range(0), (0, 0));
        a.wrote(0, 8192, 4096);
        a.wrote(0, 0, 4096);
        assert_eq!(a.range(0), (0, 12288));
        a.synced(0);
        assert_eq!(a.range(0), (0, 0));
        a.wrote(0, 65536, 4096);
        assert_eq!(a.range(0), (65536, 4096));
    }

    #[test]
    fn exclusive_locks_shut_out_readers_and_readwrite_lets_them_share() {
        let mut spec = JobSpec::default();
        spec.access.lockfile = LockMode::ReadWrite;
        let l = FileLocks::for_job(&spec, 1).unwrap();
        let _a = l.hold(0, Ddir::Read);
        assert!(l.locks[0].try_read().is_ok(), "readers share");
        assert!(l.locks[0].try_write().is_err(), "a writer waits");
        drop(_a);
        spec.access.lockfile = LockMode::Exclusive;
        let l = FileLocks::for_job(&spec, 1).unwrap();
        let _b = l.hold(0, Ddir::Read);
        assert!(l.locks[0].try_read().is_err(), "one at a time");
    }
}
