//! The engine interface, modelled on fio's `struct ioengine_ops`:
//!
//! * [`Engine::queue`] takes one request. A synchronous engine does the I/O
//!   there and returns [`Queued::Done`]; an asynchronous engine records it and
//!   returns [`Queued::Pending`].
//! * [`Engine::commit`] hands every pending request to the kernel (one
//!   syscall for a batch).
//! * [`Engine::getevents`] appends finished requests to a caller-owned vector,
//!   waiting until at least `min` are there.
//!
//! The worker owns its engine; engines own their buffers (one per slot), so
//! registering them with the kernel is the engine's business.
//!
//! # The slot contract
//!
//! A worker of depth `d` has slots `0..d` (`d` is
//! [`ssdready_core::spec::JobSpec::depth`], or 1 for a synchronous engine).
//! Every request ([`Engine::queue`], [`Engine::sync`],
//! [`Engine::sync_range`]) names a slot, and:
//!
//! * the caller never queues into a slot that is in flight: a slot is in
//!   flight from a `queue` that returned [`Queued::Pending`] until
//!   [`Engine::getevents`] has handed back its [`Completion`]; a request
//!   that returned [`Queued::Done`] leaves its slot free;
//! * the caller touches [`Engine::buffer`]`(slot)` only while the slot is
//!   not in flight (to fill it before a write, to check it after a read is
//!   reaped); the engine's kernel may be using it in between;
//! * the engine reports each pending request exactly once, with its slot.
//!
//! An asynchronous engine's buffers and control blocks are indexed by slot
//! and handed to the kernel, which is what makes the contract a matter of
//! memory safety: an engine that lends a slot's memory to the kernel may
//! rely on it. Engines `debug_assert!` a slot in range; the worker loop
//! (`ssdready-run`'s `release`) `debug_assert!`s that every completion is
//! of a slot in flight.

pub mod error;

pub use error::EngineError;

use crate::target::Target;
use ssdready_core::spec::JobSpec;
use ssdready_core::{Completion, IoReq};

/// What `queue` did with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Finished already: bytes transferred or `-errno`.
    Done(i64),
    /// Will be submitted by `commit` and reported by `getevents`.
    Pending,
}

/// The engine interface; see the module docs, and their slot contract,
/// which every caller keeps and every engine may rely on.
pub trait Engine {
    /// fio's name of the engine.
    fn name(&self) -> &'static str;
    /// Queue one request, in `req.slot`: a slot not in flight (the slot
    /// contract, in the module docs).
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError>;
    /// Submit everything queued; returns how many were submitted.
    fn commit(&mut self) -> Result<usize, EngineError>;
    /// Append completions to `out`, waiting until at least `min` are there.
    /// An engine whose waits are its own (the emulator's) may return sooner
    /// with fewer, so that its caller's stop flag and deadline are seen;
    /// callers loop until they have what they need.
    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError>;
    /// How completions are obtained, for the result (`sync`, `interrupt`,
    /// `iopoll`, `sqpoll+interrupt`, `none`).
    fn completion_mode(&self) -> &'static str;
    /// Queue an `fsync(2)` (or `fdatasync(2)` when `data_only`) of file
    /// `file`, in slot `slot`: done at once by synchronous engines (the
    /// result is 0 or `-errno`), reported by `getevents` otherwise.
    fn sync(&mut self, slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        let _ = (slot, file, data_only);
        Err(cannot_sync(self.name()))
    }
    /// Queue a `sync_file_range(2)` of `[offset, offset + len)` of file
    /// `file` with `flags` (`SYNC_FILE_RANGE_*`), in slot `slot`, as
    /// [`Engine::sync`] does an fsync.
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
    /// The buffer slot `slot` reads into and writes from (`verify` fills it
    /// before a write and checks it after a read); None for an engine that
    /// moves no data. Only for a slot not in flight (the slot contract).
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        let _ = slot;
        None
    }
    /// Replace the engine's descriptors with newly opened ones, in target
    /// order (after `unlink_each_loop` removed the files). Call only with
    /// nothing in flight.
    fn reopen(&mut self, files: Vec<std::fs::File>) -> Result<(), EngineError> {
        let _ = files;
        Err(cannot_reopen(self.name()))
    }
    /// What a temporal merge layer in front of the target counted since the
    /// last call (the worker takes it at the end of the ramp, to forget it,
    /// and at the end); `None` for engines without one.
    fn take_merge_stats(&mut self) -> Option<ssdready_core::stats::MergeStats> {
        None
    }
    /// Whether the engine's I/Os are fake (fio's `FIO_FAKEIO | FIO_NOSTATS`):
    /// counted in I/Os and bytes, with no latency of their own; the engine's
    /// file operations are timed instead ([`Engine::take_op_latency`]).
    fn fake_io(&self) -> bool {
        false
    }
    /// The time of the file operation the last `queue` ran (fio's sample in
    /// the engine's open hook), once; None when it ran none.
    fn take_op_latency(&mut self) -> Option<u64> {
        None
    }
    /// The I/O priority the next request of `slot` carries in the request
    /// itself (`class << 13 | level`; 0: none, the thread's) — fio's
    /// cmdprio, which only io_uring and libaio can do.
    fn set_prio(&mut self, slot: u32, prio: u16) -> Result<(), EngineError> {
        let _ = (slot, prio);
        Err(EngineError::Unsupported(format!(
            "ioengine={} cannot give an I/O its own priority (cmdprio needs io_uring or libaio)",
            self.name()
        )))
    }
    /// How a memory-mapping engine makes its writes durable (`dax`:
    /// non-temporal stores or cache-line write-back on persistent memory;
    /// `msync`: the page cache and msync); None for other engines.
    fn persistence(&self) -> Option<&'static str> {
        None
    }
    /// What the last failed I/O's bare errno does not say (a mapped file
    /// shortened under the mapping: the offset and why), taken once.
    fn take_error_detail(&mut self) -> Option<String> {
        None
    }
}

pub(crate) fn cannot_sync(engine: &str) -> EngineError {
    EngineError::Unsupported(format!(
        "ioengine={engine} cannot sync files (fsync, fdatasync)"
    ))
}

pub(crate) fn cannot_sync_range(engine: &str) -> EngineError {
    EngineError::Unsupported(format!("ioengine={engine} cannot issue sync_file_range"))
}

pub(crate) fn cannot_reopen(engine: &str) -> EngineError {
    EngineError::Unsupported(format!(
        "ioengine={engine} cannot reopen its files (unlink_each_loop)"
    ))
}

/// What an engine needs to know to start.
pub struct EngineSetup<'a> {
    /// The job.
    pub spec: &'a JobSpec,
    /// The job's targets (already resolved and laid out).
    pub targets: &'a [Target],
    /// Seed for the write-buffer contents.
    pub seed: u64,
}

/// `fsync(2)` or `fdatasync(2)` of `file`: 0 or `-errno` (the result of a
/// synchronous engine's sync).
pub fn sync_file(file: &std::fs::File, data_only: bool) -> i64 {
    let r = if data_only {
        file.sync_data()
    } else {
        file.sync_all()
    };
    match r {
        Ok(()) => 0,
        Err(e) => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}

/// `sync_file_range(2)` of `(offset, len)` of `file` with `flags`, as
/// fio's `do_sync_file_range`: nothing written since the last sync
/// (`len` 0) is no call. Returns 0 or `-errno`.
pub fn sync_file_range(file: &std::fs::File, range: (u64, u64), flags: u32) -> i64 {
    use std::os::unix::io::AsRawFd;
    let (offset, len) = range;
    if len == 0 {
        return 0;
    }
    // SAFETY: sync_file_range takes an open descriptor and plain integers.
    let rc = unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
            flags,
        )
    };
    if rc == 0 {
        0
    } else {
        -i64::from(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        )
    }
}

/// Open every target of a job for one worker, as [`Target::open_for`]
/// does, with the job's access hint given to the kernel.
pub fn open_files(setup: &EngineSetup<'_>) -> Result<Vec<std::fs::File>, EngineError> {
    let spec = setup.spec;
    setup
        .targets
        .iter()
        .map(|t| {
            t.open_for(spec).map_err(|e| EngineError::Sys {
                what: format!(
                    "opening {}{}",
                    t.path.display(),
                    if spec.direct { " with O_DIRECT" } else { "" }
                ),
                source: e,
            })
        })
        .collect()
}
