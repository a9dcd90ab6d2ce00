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
    /// The requests queued and not yet reaped, in order: a ring of at
    /// least `depth` entries, a power of two (a position's place is a
    /// mask away). `reaped..committed` are complete (committed),
    /// `committed..queued` wait for the next commit (positions wrap).
    ring: Box<[Completion]>,
    /// `ring.len() - 1`.
    mask: usize,
    reaped: usize,
    committed: usize,
    queued: usize,
}

impl NullEngine {
    /// A null engine for `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        let depth = spec.effective_iodepth() as usize;
        let len = depth.max(1).next_power_of_two();
        NullEngine {
            sync: depth == 1,
            ring: vec![Completion { slot: 0, result: 0 }; len].into_boxed_slice(),
            mask: len - 1,
            reaped: 0,
            committed: 0,
            queued: 0,
        }
    }

    /// Queue a completion (the worker never has more than `depth` in
    /// flight).
    #[inline]
    fn push(&mut self, slot: u32, result: i64) {
        if let Some(c) = self.ring.get_mut(self.queued & self.mask) {
            *c = Completion { slot, result };
        }
        self.queued = self.queued.wrapping_add(1);
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
        self.push(req.slot, req.len as i64);
        Ok(Queued::Pending)
    }
    #[inline]
    fn commit(&mut self) -> Result<usize, EngineError> {
        let n = self.queued.wrapping_sub(self.committed);
        self.committed = self.queued;
        Ok(n)
    }
    #[inline]
    fn getevents(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let n = self.ring.len();
        let (from, count) = (
            self.reaped & self.mask,
            self.committed.wrapping_sub(self.reaped),
        );
        let first = count.min(n - from);
        out.extend_from_slice(&self.ring[from..from + first]);
        out.extend_from_slice(&self.ring[..count - first]);
        self.reaped = self.committed;
        Ok(())
    }
    fn sync(&mut self, slot: u32, _file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        // No I/O: a sync has nothing to wait for (fio's null engine alike).
        if self.sync {
            return Ok(Queued::Done(0));
        }
        self.push(slot, 0);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::Ddir;

    #[test]
    fn queued_requests_complete_at_commit_in_order_across_the_ring_end() {
        let spec = JobSpec {
            ioengine: ssdready_core::spec::EngineKind::Null,
            iodepth: 4,
            ..JobSpec::default()
        };
        let mut e = NullEngine::new(&spec);
        let req = |slot| IoReq {
            slot,
            file: 0,
            ddir: Ddir::Read,
            offset: 0,
            len: 512 + slot,
        };
        let mut out = Vec::new();
        let mut next = 0;
        for batch in [3u32, 2, 4, 1, 3] {
            for _ in 0..batch {
                assert_eq!(e.queue(req(next)).unwrap(), Queued::Pending);
                next += 1;
            }
            e.getevents(0, &mut out).unwrap();
            assert!(out.is_empty(), "nothing completes before the commit");
            assert_eq!(e.commit().unwrap(), batch as usize);
            e.getevents(batch as usize, &mut out).unwrap();
            let got: Vec<(u32, i64)> = out.drain(..).map(|c| (c.slot, c.result)).collect();
            let want: Vec<(u32, i64)> = (next - batch..next)
                .map(|s| (s, 512 + i64::from(s)))
                .collect();
            assert_eq!(got, want);
        }
    }
}
