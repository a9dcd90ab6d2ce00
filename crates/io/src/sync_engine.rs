//! Synchronous engines ([`SyncEngine`]): every request completes inside
//! `queue`, so they have nothing to commit or reap; implementing this trait
//! implements [`Engine`] with those parts written once. (A module of its
//! own, so that the two traits' methods of the same names are never both
//! in scope where engines are dispatched.)

use crate::engine::{cannot_reopen, cannot_sync, cannot_sync_range, Engine, EngineError, Queued};
use ssdready_core::{Completion, IoReq};

/// An engine whose every request completes inside `queue` (fio's
/// synchronous engines: psync, mmap, splice, sg, libpmem, dev-dax, the
/// file operations, e4defrag): nothing to commit or reap, and `sync` as its
/// completion mode. Implementing it implements [`Engine`]; its other
/// methods are [`Engine`]'s, with the same defaults.
pub trait SyncEngine {
    /// See [`Engine::name`].
    fn name(&self) -> &'static str;
    /// Do one request; its result is [`Queued::Done`].
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError>;
    /// See [`Engine::sync`].
    fn sync(&mut self, slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        let _ = (slot, file, data_only);
        Err(cannot_sync(self.name()))
    }
    /// See [`Engine::sync_range`].
    fn sync_range(
        &mut self,
        slot: u32,
        file: u32,
        range: (u64, u64),
        flags: u32,
    ) -> Result<Queued, EngineError> {
        let _ = (slot, file, range, flags);
        Err(cannot_sync_range(self.name()))
    }
    /// See [`Engine::buffer`].
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        let _ = slot;
        None
    }
    /// See [`Engine::reopen`].
    fn reopen(&mut self, files: Vec<std::fs::File>) -> Result<(), EngineError> {
        let _ = files;
        Err(cannot_reopen(self.name()))
    }
    /// See [`Engine::fake_io`].
    fn fake_io(&self) -> bool {
        false
    }
    /// See [`Engine::take_op_latency`].
    fn take_op_latency(&mut self) -> Option<u64> {
        None
    }
    /// See [`Engine::persistence`].
    /// What the last failed I/O's bare errno does not say, taken once
    /// ([`Engine::take_error_detail`]).
    fn take_error_detail(&mut self) -> Option<String> {
        None
    }
    fn persistence(&self) -> Option<&'static str> {
        None
    }
}

impl<T: SyncEngine> Engine for T {
    fn name(&self) -> &'static str {
        SyncEngine::name(self)
    }
    #[inline]
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        SyncEngine::queue(self, req)
    }
    #[inline]
    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }
    #[inline]
    fn getevents(&mut self, _min: usize, _out: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }
    fn completion_mode(&self) -> &'static str {
        "sync"
    }
    fn sync(&mut self, slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        SyncEngine::sync(self, slot, file, data_only)
    }
    fn sync_range(
        &mut self,
        slot: u32,
        file: u32,
        range: (u64, u64),
        flags: u32,
    ) -> Result<Queued, EngineError> {
        SyncEngine::sync_range(self, slot, file, range, flags)
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        SyncEngine::buffer(self, slot)
    }
    fn reopen(&mut self, files: Vec<std::fs::File>) -> Result<(), EngineError> {
        SyncEngine::reopen(self, files)
    }
    fn fake_io(&self) -> bool {
        SyncEngine::fake_io(self)
    }
    #[inline]
    fn take_op_latency(&mut self) -> Option<u64> {
        SyncEngine::take_op_latency(self)
    }
    fn persistence(&self) -> Option<&'static str> {
        SyncEngine::persistence(self)
    }
    fn take_error_detail(&mut self) -> Option<String> {
        SyncEngine::take_error_detail(self)
    }
}
