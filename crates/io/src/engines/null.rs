//! The null engine: no I/O at all. Every request "completes" with its full
//! length. Its IOPS are the ceiling of the tool itself, and its CPU per I/O
//! is the tool's own share of every other measurement (fio's `null`).
//!
//! At iodepth 1 it completes inside `queue`, like a synchronous engine; deeper
//! it queues, and `commit` makes the batch complete, so the async path of the
//! worker loop is what gets measured.

use crate::engine::{Engine, EngineError, Queued};
use ssdready_core::spec::JobSpec;
use ssdready_core::{Completion, IoReq};

/// See the module docs.
pub struct NullEngine {
    sync: bool,
    queued: Vec<Completion>,
    done: Vec<Completion>,
}

impl NullEngine {
    /// A null engine for `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        let depth = spec.effective_iodepth() as usize;
        NullEngine {
            sync: depth == 1,
            queued: Vec::with_capacity(depth),
            done: Vec::with_capacity(depth),
        }
    }
}

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }
    #[inline]
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        if self.sync {
            return Ok(Queued::Done(req.len as i64));
        }
        self.queued.push(Completion {
            slot: req.slot,
            result: req.len as i64,
        });
        Ok(Queued::Pending)
    }
    #[inline]
    fn commit(&mut self) -> Result<usize, EngineError> {
        let n = self.queued.len();
        self.done.append(&mut self.queued);
        Ok(n)
    }
    #[inline]
    fn getevents(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
    fn sync(&mut self, slot: u32, _file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        // No I/O: a sync has nothing to wait for (fio's null engine alike).
        if self.sync {
            return Ok(Queued::Done(0));
        }
        self.queued.push(Completion { slot, result: 0 });
        Ok(Queued::Pending)
    }
    fn sync_range(
        &mut self,
        slot: u32,
        file: u32,
        _range: (u64, u64),
        _flags: u32,
    ) -> Result<Queued, EngineError> {
        self.sync(slot, file, true)
    }
    fn completion_mode(&self) -> &'static str {
        if self.sync {
            "sync"
        } else {
            "none"
        }
    }
}
