//! The libaio engine: Linux native AIO (`io_setup`, `io_submit`,
//! `io_getevents`) through the raw system calls, so no libaio library is
//! needed to build. `queue` fills the slot's `iocb`, `commit` submits the
//! batch in one `io_submit`, `getevents` waits in `io_getevents` for at
//! least `min` completions and takes at most `iodepth_batch_complete_max`
//! per call (by default one, so one call per I/O, as fio's engine makes).
//! As in fio, native AIO is only asynchronous with `direct=1`; buffered
//! I/O blocks inside `io_submit`. Trims are done at once, as fio's libaio
//! engine does them (`do_io_u_trim`), after the batch queued so far is
//! submitted: `BLKDISCARD` on a block device, a punched hole on a file
//! (fio 3.33 tries `BLKDISCARD` on files too and fails with ENOTTY).

use crate::buf::AlignedBuf;
use crate::engine::{open_files, sync_file, Engine, EngineError, EngineSetup, Queued};
use crate::engines::psync::trim;
use crate::target::TargetKind;
use ssdready_core::spec::JobSpec;
use ssdready_core::{Completion, Ddir, IoReq};
use std::fs::File;
use std::os::unix::io::AsRawFd;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// `aio_flags`: `aio_reqprio` holds the request's I/O priority.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// `struct iocb` (64 bytes, little-endian layout).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// See the module docs. The context is destroyed (waiting for in-flight
/// I/O) before the buffers are freed: `Drop` runs before the fields drop.
pub struct LibaioEngine {
    ctx: libc::c_ulong,
    iocbs: Vec<Iocb>,
    queued: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    bufs: Vec<AlignedBuf>,
    fds: Vec<i32>,
    /// Per slot, the priority of its next request (cmdprio; empty when
    /// no request has one of its own).
    prios: Vec<u16>,
    /// Per target, whether it is a block device (trims are BLKDISCARD).
    kinds: Vec<TargetKind>,
    files: Vec<File>,
}

// SAFETY: the raw pointers in `queued` point into `iocbs`, owned by the
// engine, which moves between threads only as a whole.
unsafe impl Send for LibaioEngine {}

fn sys(what: &str) -> EngineError {
    EngineError::Sys {
        what: what.into(),
        source: std::io::Error::last_os_error(),
    }
}

/// Create and destroy an AIO context for `iodepth` requests, as each worker
/// of `spec` will, so that a depth the kernel refuses (`fs.aio-max-nr`) is
/// found before the first I/O of the run. The message says what to change.
pub fn check_context(spec: &JobSpec) -> Result<(), EngineError> {
    let depth = spec.depth().get();
    let mut ctx: libc::c_ulong = 0;
    // SAFETY: io_setup writes the new context id into `ctx`, a valid u64
    // we own.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_setup,
            depth as libc::c_long,
            &mut ctx as *mut libc::c_ulong,
        )
    };
    if rc == 0 {
        // SAFETY: destroying the context just created; nothing is in flight.
        unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/fs/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    Err(EngineError::Unsupported(format!(
        "option 'iodepth': native AIO refuses a context for {depth} requests ({e}); \
         /proc/sys/fs/aio-max-nr is {}, {} in use (lower iodepth, or raise fs.aio-max-nr)",
        read("aio-max-nr"),
        read("aio-nr")
    )))
}

impl LibaioEngine {
    /// Set up an AIO context for `iodepth` requests and open the targets.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let depth = spec.depth().get() as usize;
        let reap_max = spec.reap_call_max() as usize;
        // The buffers first: a failure here leaves no AIO context behind.
        let mut bufs: Vec<AlignedBuf> = (0..depth)
            .map(|i| AlignedBuf::for_job(spec.bs.max() as usize, &spec.run.mem, i))
            .collect::<Result<_, _>>()?;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context id into `ctx`, a valid
        // u64 we own.
        if unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        } < 0
        {
            return Err(sys("io_setup (raise /proc/sys/fs/aio-max-nr?)"));
        }
        let files = open_files(setup)?;
        for (i, b) in bufs.iter_mut().enumerate() {
            b.fill_random(setup.seed.wrapping_add(i as u64));
        }
        Ok(LibaioEngine {
            ctx,
            iocbs: vec![Iocb::default(); depth],
            queued: Vec::with_capacity(depth),
            // At most this many per io_getevents, as fio asks of the
            // kernel (`iodepth_batch_complete_max`, by default one).
            events: vec![IoEvent::default(); reap_max],
            bufs,
            fds: files.iter().map(|f| f.as_raw_fd()).collect(),
            kinds: setup.targets.iter().map(|t| t.kind).collect(),
            prios: Vec::new(),
            files,
        })
    }
}

impl Engine for LibaioEngine {
    fn name(&self) -> &'static str {
        "libaio"
    }

    fn set_prio(&mut self, slot: u32, prio: u16) -> Result<(), EngineError> {
        if self.prios.is_empty() {
            self.prios = vec![0; self.iocbs.len()];
        }
        self.prios[slot as usize] = prio;
        Ok(())
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        debug_assert!(
            (req.slot as usize) < self.bufs.len(),
            "slot {} of {} slots (see Engine's slot contract)",
            req.slot,
            self.bufs.len()
        );
        let slot = req.slot as usize;
        let opcode = match req.ddir {
            Ddir::Read => IOCB_CMD_PREAD,
            Ddir::Write => IOCB_CMD_PWRITE,
            Ddir::Trim => {
                // fio: a trim waits for the queued batch, then runs at once.
                self.commit()?;
                let f = req.file as usize;
                return Ok(Queued::Done(trim(
                    &self.files[f],
                    self.kinds[f],
                    req.offset,
                    req.len,
                )));
            }
        };
        self.iocbs[slot] = Iocb {
            aio_data: req.slot as u64,
            aio_lio_opcode: opcode,
            aio_fildes: self.fds[req.file as usize] as u32,
            aio_buf: self.bufs[slot].as_mut_ptr() as u64,
            aio_nbytes: req.len as u64,
            aio_offset: req.offset as i64,
            ..Iocb::default()
        };
        if let Some(&prio) = self.prios.get(slot).filter(|&&p| p != 0) {
            self.iocbs[slot].aio_reqprio = prio as i16;
            self.iocbs[slot].aio_flags = IOCB_FLAG_IOPRIO;
        }
        let p: *mut Iocb = &mut self.iocbs[slot];
        self.queued.push(p);
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        let total = self.queued.len();
        let mut done = 0;
        while done < total {
            // SAFETY: every pointer in `queued[done..]` points at an iocb in
            // self.iocbs whose buffer stays alive and untouched until its
            // completion is reaped; the context is ours.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    (total - done) as libc::c_long,
                    self.queued.as_mut_ptr().add(done),
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EAGAIN) || e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                self.queued.clear();
                return Err(EngineError::Sys {
                    what: "io_submit".into(),
                    source: e,
                });
            }
            done += n as usize;
        }
        self.queued.clear();
        Ok(total)
    }

    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = 0;
        loop {
            // No more than a call may take (the kernel refuses a minimum
            // over the maximum): the loop asks again for the rest.
            let want = min.saturating_sub(got).min(self.events.len());
            // SAFETY: `events` has room for `events.len()` entries; a null
            // timeout waits until `want` have arrived.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    want as libc::c_long,
                    self.events.len() as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(EngineError::Sys {
                    what: "io_getevents".into(),
                    source: e,
                });
            }
            for ev in &self.events[..n as usize] {
                out.push(Completion {
                    slot: ev.data as u32,
                    result: ev.res,
                });
            }
            got += n as usize;
            if got >= min {
                return Ok(());
            }
        }
    }

    fn completion_mode(&self) -> &'static str {
        "interrupt"
    }

    /// Synchronous, after submitting what is queued (fio's libaio engine
    /// does the same: AIO has no usable fsync on most file systems).
    fn sync(&mut self, _slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        self.commit()?;
        Ok(Queued::Done(sync_file(
            &self.files[file as usize],
            data_only,
        )))
    }

    fn sync_range(
        &mut self,
        _slot: u32,
        file: u32,
        range: (u64, u64),
        flags: u32,
    ) -> Result<Queued, EngineError> {
        // As fio's libaio: a sync is done at once, after what is queued.
        self.commit()?;
        Ok(Queued::Done(crate::engine::sync_file_range(
            &self.files[file as usize],
            range,
            flags,
        )))
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
        self.fds = files.iter().map(|f| f.as_raw_fd()).collect();
        self.files = files;
        Ok(())
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        // SAFETY: destroying our own context; the kernel waits for (or
        // cancels) in-flight requests before returning, so the buffers freed
        // afterwards are no longer in use.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::test_reads::{eight_deep, queue_reads};

    #[test]
    fn abi_sizes_match_the_kernel() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
    }

    /// Eight reads of a file in flight, reaped by one `getevents(8)`:
    /// returns how many completions each `io_getevents` may take.
    fn reap_eight(batch_max: u32) -> usize {
        eight_deep(batch_max, |setup| {
            let mut e = LibaioEngine::new(setup).unwrap();
            queue_reads(&mut e, 8);
            let mut out = Vec::new();
            e.getevents(8, &mut out).unwrap();
            let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
            slots.sort_unstable();
            assert_eq!(slots, (0..8).collect::<Vec<_>>(), "every read, once");
            assert!(out.iter().all(|c| c.result == 4096));
            e.events.len()
        })
    }

    #[test]
    fn each_io_getevents_takes_one_completion_unless_the_job_allows_more() {
        assert_eq!(reap_eight(0), 1, "fio's default: the minimum, one");
        assert_eq!(reap_eight(4), 4);
        assert_eq!(reap_eight(64), 8, "never more than the depth");
    }
}
