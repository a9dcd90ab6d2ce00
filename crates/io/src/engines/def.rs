//! The engines as the worker opens them: an engine as its file declares it
//! ([`EngineDef`]) and an open engine of any kind ([`AnyEngine`]), with the
//! definitions of the four engines that have a variant of their own (null,
//! psync, io_uring, libaio). Their files stay below this one: a file that
//! named its own variant would reach back to it.

use super::libaio::LibaioEngine;
use super::null::NullEngine;
use super::psync::{self, PsyncEngine};
use super::uring::UringEngine;
use crate::engine::{Engine, EngineError, EngineSetup, Queued};
use ssdready_core::engines::EngineFacts;
use ssdready_core::Completion;
use ssdready_core::IoReq;

/// An engine as its file declares it (`pub static DEF: EngineDef`; the four
/// with a variant of [`AnyEngine`] are declared here), listed once in
/// [`crate::engines::ALL`]: the names it serves (their facts, which
/// the same file declares, or `core` for a family's own engine; see
/// [`ssdready_core::engines`]) and how to open it.
pub struct EngineDef {
    /// The engines of this file: one, or a family of fio's names that one
    /// implementation serves (filecreate, filestat, ...).
    pub serves: &'static [&'static EngineFacts],
    /// Open the engine for a job on the worker thread that will use it.
    pub open: fn(&EngineSetup<'_>) -> Result<AnyEngine, EngineError>,
}

/// An open engine. The worker loop's plain path has a loop of its own for
/// each engine with a variant here (the ones whose cost per I/O it
/// measures); every other engine is [`AnyEngine::Dyn`], called through
/// its vtable.
pub enum AnyEngine {
    /// [`NullEngine`].
    Null(NullEngine),
    /// [`PsyncEngine`].
    Psync(PsyncEngine),
    /// [`UringEngine`].
    Uring(Box<UringEngine>),
    /// [`LibaioEngine`].
    Libaio(Box<LibaioEngine>),
    /// Any other engine: the other files of [`crate::engines`], the
    /// submitter threads of `io_submit_mode=offload`, or an engine a target
    /// brings with it (the SSD emulator's queue pair).
    Dyn(Box<dyn Engine + Send>),
}

impl AnyEngine {
    /// `engine`, called through its vtable.
    pub fn dynamic(engine: impl Engine + Send + 'static) -> AnyEngine {
        AnyEngine::Dyn(Box::new(engine))
    }
}

macro_rules! dispatch {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyEngine::Null($e) => $body,
            AnyEngine::Psync($e) => $body,
            AnyEngine::Uring($e) => $body,
            AnyEngine::Libaio($e) => $body,
            AnyEngine::Dyn($e) => $body,
        }
    };
}

impl Engine for AnyEngine {
    fn name(&self) -> &'static str {
        dispatch!(self, e => e.name())
    }
    #[inline]
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        dispatch!(self, e => e.queue(req))
    }
    #[inline]
    fn commit(&mut self) -> Result<usize, EngineError> {
        dispatch!(self, e => e.commit())
    }
    #[inline]
    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        dispatch!(self, e => e.getevents(min, out))
    }
    fn completion_mode(&self) -> &'static str {
        dispatch!(self, e => e.completion_mode())
    }
    fn take_merge_stats(&mut self) -> Option<ssdready_core::stats::MergeStats> {
        dispatch!(self, e => e.take_merge_stats())
    }
    fn sync(&mut self, slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        dispatch!(self, e => e.sync(slot, file, data_only))
    }
    fn sync_range(
        &mut self,
        slot: u32,
        file: u32,
        range: (u64, u64),
        flags: u32,
    ) -> Result<Queued, EngineError> {
        dispatch!(self, e => e.sync_range(slot, file, range, flags))
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        dispatch!(self, e => e.buffer(slot))
    }
    fn reopen(&mut self, files: Vec<std::fs::File>) -> Result<(), EngineError> {
        dispatch!(self, e => e.reopen(files))
    }
    fn fake_io(&self) -> bool {
        dispatch!(self, e => e.fake_io())
    }
    #[inline]
    fn take_op_latency(&mut self) -> Option<u64> {
        dispatch!(self, e => e.take_op_latency())
    }
    #[inline]
    fn set_prio(&mut self, slot: u32, prio: u16) -> Result<(), EngineError> {
        dispatch!(self, e => e.set_prio(slot, prio))
    }
    fn persistence(&self) -> Option<&'static str> {
        dispatch!(self, e => e.persistence())
    }
    fn take_error_detail(&mut self) -> Option<String> {
        dispatch!(self, e => e.take_error_detail())
    }
}

/// The null engine's definition: its facts are `core`'s
/// (`ssdready_core::engines::NULL`: name, family, capabilities, completion
/// note). The null engine is one the worker loop's plain path specialises,
/// hence a variant of its own; any other engine returns
/// `AnyEngine::dynamic(..)` (docs/architecture.md has the recipe for a new
/// one).
pub static NULL: EngineDef = EngineDef {
    serves: &[&ssdready_core::engines::NULL],
    open: |setup| Ok(AnyEngine::Null(NullEngine::new(setup.spec))),
};

/// psync's definition: its own facts are in `core`, as the family's.
pub static PSYNC: EngineDef = EngineDef {
    serves: &[
        &ssdready_core::engines::PSYNC,
        &psync::FALLOC,
        &psync::FTRUNCATE,
    ],
    open: |setup| Ok(AnyEngine::Psync(PsyncEngine::new(setup)?)),
};

/// io_uring's definition.
pub static URING: EngineDef = EngineDef {
    serves: &[&ssdready_core::engines::IO_URING],
    open: |setup| Ok(AnyEngine::Uring(Box::new(UringEngine::new(setup)?))),
};

/// libaio's definition.
pub static LIBAIO: EngineDef = EngineDef {
    serves: &[&ssdready_core::engines::LIBAIO],
    open: |setup| Ok(AnyEngine::Libaio(Box::new(LibaioEngine::new(setup)?))),
};
