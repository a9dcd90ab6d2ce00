//! fio's posixaio engine (engines/posixaio.c): POSIX asynchronous I/O
//! (`aio_read`, `aio_write`, `aio_fsync`), reaped with `aio_error` /
//! `aio_return` and waited for with `aio_suspend`.
//!
//! glibc implements POSIX AIO in user space: a pool of helper threads
//! (at most 20 by default) runs each request as `pread`/`pwrite`, and the
//! requests of one file descriptor run one after another, in one thread.
//! That is what fio measures with this engine, so it is what runs here:
//! `iodepth` requests are in flight at once from the job's point of view,
//! but a single file sees them one at a time.
//!
//! * `queue` submits at once (fio's queue does too; `commit` has nothing
//!   left to do). When glibc has no room (EAGAIN), the engine waits for
//!   one of its requests to finish and tries again (fio answers busy).
//! * `getevents` looks at every request in flight with `aio_error`, and
//!   sleeps in `aio_suspend` on all of them until at least `min` are done
//!   (fio suspends on the first 8 only).
//! * A sync is `aio_fsync(O_SYNC)` for fsync and fdatasync alike, as fio.
//! * A trim waits for everything in flight, then runs at once (fio's
//!   `FIO_ASYNCIO_SYNC_TRIM`), as ssdready's psync does it.
//! * Requests still in flight when the engine closes are cancelled
//!   (`aio_cancel`) and waited for before their buffers are freed.

use crate::buf::AlignedBuf;
use crate::engine::{open_files, Engine, EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::engines::psync::trim;
use crate::target::TargetKind;
use ssdready_core::{Completion, Ddir, IoReq};
use std::fs::File;
use std::os::unix::io::AsRawFd;

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&ssdready_core::engines::POSIXAIO],
    open: |setup| Ok(AnyEngine::dynamic(PosixAioEngine::new(setup)?)),
};

/// See the module docs. The control blocks stay where they are (a boxed
/// slice, never resized) while glibc holds pointers to them.
pub struct PosixAioEngine {
    cbs: Box<[libc::aiocb]>,
    /// Per slot: whether its request is in flight (submitted, not reaped).
    in_flight: Vec<bool>,
    /// Completions found while waiting for room or before a trim, handed
    /// out by the next `getevents`.
    ready: Vec<Completion>,
    bufs: Vec<AlignedBuf>,
    files: Vec<File>,
    kinds: Vec<TargetKind>,
}

// SAFETY: the raw pointers in the control blocks point into `bufs`, owned
// by the engine, which moves between threads only as a whole; glibc's
// helper threads only touch a block while it is in flight, and the engine
// waits for those before it is dropped.
unsafe impl Send for PosixAioEngine {}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

impl PosixAioEngine {
    /// One control block and one buffer per slot of `iodepth`.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let depth = spec.depth().get() as usize;
        let mut bufs: Vec<AlignedBuf> = (0..depth)
            .map(|i| AlignedBuf::for_job(spec.bs.max() as usize, &spec.run.mem, i))
            .collect::<Result<_, _>>()?;
        for (i, b) in bufs.iter_mut().enumerate() {
            b.fill_random(setup.seed.wrapping_add(i as u64));
        }
        // SAFETY: an all-zero aiocb is a valid value (integers, null
        // pointers); every field used is set before submission.
        let cbs = (0..depth)
            .map(|_| unsafe { std::mem::zeroed::<libc::aiocb>() })
            .collect();
        Ok(PosixAioEngine {
            cbs,
            in_flight: vec![false; depth],
            ready: Vec::new(),
            bufs,
            files: open_files(setup)?,
            kinds: setup.targets.iter().map(|t| t.kind).collect(),
        })
    }

    /// Fill slot `slot`'s control block for `len` bytes at `offset` of
    /// descriptor `fd`.
    fn prep(&mut self, slot: usize, fd: i32, offset: u64, len: u32) {
        let cb = &mut self.cbs[slot];
        // SAFETY: as in `new`, zero is a valid aiocb.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = fd;
        cb.aio_buf = self.bufs[slot].as_mut_ptr().cast();
        cb.aio_nbytes = len as usize;
        cb.aio_offset = offset as libc::off_t;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
    }

    /// Submit slot `slot` with `submit`, waiting for room while glibc
    /// answers EAGAIN: Ok, or the errno of a refused request.
    fn submit(
        &mut self,
        slot: usize,
        submit: &dyn Fn(*mut libc::aiocb) -> libc::c_int,
    ) -> Result<(), i32> {
        loop {
            if submit(&mut self.cbs[slot]) == 0 {
                self.in_flight[slot] = true;
                return Ok(());
            }
            let e = errno();
            if e != libc::EAGAIN || !self.in_flight.contains(&true) {
                return Err(e);
            }
            let mut found = std::mem::take(&mut self.ready);
            self.reap(1, &mut found);
            self.ready = found;
        }
    }

    /// Move every finished request to `out`; true when some were found.
    fn scan(&mut self, out: &mut Vec<Completion>) -> bool {
        let mut any = false;
        for slot in 0..self.cbs.len() {
            if !self.in_flight[slot] {
                continue;
            }
            // SAFETY: the block was submitted and not yet reaped.
            let err = unsafe { libc::aio_error(&self.cbs[slot]) };
            if err == libc::EINPROGRESS {
                continue;
            }
            let result = match err {
                // SAFETY: the request is done; aio_return reaps it, once.
                0 => (unsafe { libc::aio_return(&mut self.cbs[slot]) }) as i64,
                // fio: a cancelled request moved nothing.
                libc::ECANCELED => 0,
                e => {
                    // SAFETY: reaping the failed request frees glibc's record.
                    unsafe { libc::aio_return(&mut self.cbs[slot]) };
                    -i64::from(e)
                }
            };
            self.in_flight[slot] = false;
            out.push(Completion {
                slot: slot as u32,
                result,
            });
            any = true;
        }
        any
    }

    /// Reap until `min` completions were added to `out`, sleeping in
    /// `aio_suspend` on the requests in flight.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) {
        let start = out.len();
        let mut list: Vec<*const libc::aiocb> = Vec::with_capacity(self.cbs.len());
        loop {
            self.scan(out);
            if out.len() - start >= min || !self.in_flight.contains(&true) {
                return;
            }
            list.clear();
            list.extend(
                (0..self.cbs.len())
                    .filter(|&s| self.in_flight[s])
                    .map(|s| &self.cbs[s] as *const libc::aiocb),
            );
            // SAFETY: every pointer is a submitted block that stays in
            // place; a null timeout waits until one of them finishes (or a
            // signal interrupts: scanned again either way).
            unsafe {
                libc::aio_suspend(list.as_ptr(), list.len() as libc::c_int, std::ptr::null())
            };
        }
    }
}

impl Engine for PosixAioEngine {
    fn name(&self) -> &'static str {
        "posixaio"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        debug_assert!(
            (req.slot as usize) < self.bufs.len(),
            "slot {} of {} slots (see Engine's slot contract)",
            req.slot,
            self.bufs.len()
        );
        let slot = req.slot as usize;
        let i = req.file as usize;
        let submit: fn(*mut libc::aiocb) -> libc::c_int = match req.ddir {
            // SAFETY (both): the block is filled and stays in place, its
            // buffer untouched, until the request is reaped.
            Ddir::Read => |cb| unsafe { libc::aio_read(cb) },
            Ddir::Write => |cb| unsafe { libc::aio_write(cb) },
            Ddir::Trim => {
                let mut found = std::mem::take(&mut self.ready);
                self.reap(usize::MAX, &mut found);
                self.ready = found;
                return Ok(Queued::Done(trim(
                    &self.files[i],
                    self.kinds[i],
                    req.offset,
                    req.len,
                )));
            }
        };
        self.prep(slot, self.files[i].as_raw_fd(), req.offset, req.len);
        Ok(match self.submit(slot, &submit) {
            Ok(()) => Queued::Pending,
            Err(e) => Queued::Done(-i64::from(e)),
        })
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }

    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let had = self.ready.len();
        out.append(&mut self.ready);
        self.reap(min.saturating_sub(had), out);
        Ok(())
    }

    fn completion_mode(&self) -> &'static str {
        "posix-aio"
    }

    fn sync(&mut self, slot: u32, file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        let slot = slot as usize;
        self.prep(slot, self.files[file as usize].as_raw_fd(), 0, 0);
        // SAFETY: as for reads and writes; aio_fsync uses only aio_fildes.
        let r = self.submit(slot, &|cb| unsafe { libc::aio_fsync(libc::O_SYNC, cb) });
        Ok(match r {
            Ok(()) => Queued::Pending,
            Err(e) => Queued::Done(-i64::from(e)),
        })
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        debug_assert!(
            (slot as usize) < self.bufs.len(),
            "slot {slot} past the engine's slots"
        );
        self.bufs
            .get_mut(slot as usize)
            .map(AlignedBuf::as_mut_slice)
    }

    fn reopen(&mut self, files: Vec<File>) -> Result<(), EngineError> {
        self.files = files;
        Ok(())
    }
}

impl Drop for PosixAioEngine {
    fn drop(&mut self) {
        if !self.in_flight.contains(&true) {
            return;
        }
        for f in &self.files {
            // SAFETY: cancels our own requests on our descriptor; those
            // glibc cannot cancel run to completion.
            unsafe { libc::aio_cancel(f.as_raw_fd(), std::ptr::null_mut()) };
        }
        let mut sink = Vec::new();
        self.reap(usize::MAX, &mut sink);
    }
}
