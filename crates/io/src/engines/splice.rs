//! fio's splice engine (engines/splice.c): data moves between the file and
//! the job's buffer through a pipe, one I/O at a time (fio's `FIO_SYNCIO`).
//!
//! * A read splices the file into the pipe (`splice(2)`, at most 64 KiB —
//!   fio's `SPLICE_DEF_SIZE` — per call, `SPLICE_F_MORE` when more
//!   follows), then copies the pipe into the buffer with `vmsplice(2)` on
//!   the pipe's read end (`SPLICE_F_MOVE`); a kernel whose vmsplice cannot
//!   write to user memory (EBADF) is answered, as in fio, by `read(2)` of
//!   the pipe from then on. (fio first tries vmsplice into an anonymous
//!   mapping, which fails with EFAULT on its first read and is never tried
//!   again; that detour is left out.)
//! * A write maps the buffer's pages into the pipe (`vmsplice`, waiting for
//!   room with `poll(POLLOUT)`), then splices the pipe into the file until
//!   it is empty.
//! * Trims and syncs are done as ssdready's psync does them (fio's
//!   `do_io_u_trim` and `do_io_u_sync`).
//!
//! A splice that reaches the end of the file ends the read short (fio
//! retries it forever).

use crate::buf::AlignedBuf;
use crate::engine::{open_files, sync_file, EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::engines::psync::trim;
use crate::sync_engine::SyncEngine;
use crate::target::TargetKind;
use ssdready_core::engines::{Caps, EngineFacts};
use ssdready_core::{Ddir, IoReq};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// fio's `SPLICE_DEF_SIZE`: the most one splice moves.
const SPLICE_DEF_SIZE: usize = 64 * 1024;

/// splice/vmsplice through a pipe.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static SPLICE: EngineFacts = EngineFacts::own(
    "splice",
    Caps::SYNC,
    "each I/O completes inside its splice/vmsplice calls",
);

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&SPLICE],
    open: |setup| Ok(AnyEngine::dynamic(SpliceEngine::new(setup)?)),
};

/// See the module docs.
pub struct SpliceEngine {
    files: Vec<File>,
    kinds: Vec<TargetKind>,
    buf: AlignedBuf,
    /// The pipe: (read end, write end).
    pipe: (OwnedFd, OwnedFd),
    /// Whether vmsplice can copy to user memory (cleared on EBADF).
    vmsplice_to_user: bool,
}

fn errno() -> i64 {
    i64::from(
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    )
}

/// Copy `dst.len()` bytes out of the pipe whose read end is `rd` into
/// `dst`, with vmsplice (`to_user`) or read: 0, or −errno (−EBADF: this
/// kernel's vmsplice cannot copy to user memory).
fn pipe_to_user(rd: i32, to_user: bool, dst: &mut [u8]) -> i64 {
    let mut done = 0;
    while done < dst.len() {
        let rest = &mut dst[done..];
        let n = if to_user {
            let iov = libc::iovec {
                iov_base: rest.as_mut_ptr().cast(),
                iov_len: rest.len(),
            };
            // SAFETY: vmsplice on the pipe's read end copies at most
            // iov_len bytes into the buffer iov describes, which we own.
            unsafe { libc::vmsplice(rd, &iov, 1, libc::SPLICE_F_MOVE) }
        } else {
            // SAFETY: read into the buffer we own, at most its length.
            unsafe { libc::read(rd, rest.as_mut_ptr().cast(), rest.len()) }
        };
        if n < 0 {
            return -errno();
        }
        if n == 0 {
            return -i64::from(libc::ENODATA);
        }
        done += n as usize;
    }
    0
}

impl SpliceEngine {
    /// Open the job's targets and the pipe.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let mut buf = AlignedBuf::for_job(setup.spec.bs.max() as usize, &setup.spec.run.mem, 0)?;
        buf.fill_random(setup.seed);
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two new descriptors into the array we own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(EngineError::Sys {
                what: "creating the splice engine's pipe".into(),
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: both descriptors were just created and are owned by
        // nothing else.
        let pipe = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(SpliceEngine {
            files: open_files(setup)?,
            kinds: setup.targets.iter().map(|t| t.kind).collect(),
            buf,
            pipe,
            vmsplice_to_user: true,
        })
    }

    /// Splice up to `len` bytes of the file at `*off` into the pipe: bytes
    /// moved (0 at the end of the file) or −errno.
    fn file_to_pipe(&self, fd: i32, off: &mut i64, len: usize, more: bool) -> i64 {
        loop {
            let flags = if more { libc::SPLICE_F_MORE } else { 0 };
            // SAFETY: splice between two descriptors we own; `off` is a
            // valid in/out offset.
            let n = unsafe {
                libc::splice(
                    fd,
                    off,
                    self.pipe.1.as_raw_fd(),
                    std::ptr::null_mut(),
                    len,
                    flags,
                )
            };
            if n >= 0 {
                return n as i64;
            }
            let e = errno();
            // fio retries ENODATA and EAGAIN.
            if e != i64::from(libc::ENODATA) && e != i64::from(libc::EAGAIN) {
                return -e;
            }
        }
    }

    /// fio's `fio_splice_read`: bytes read or −errno.
    fn read(&mut self, fd: i32, offset: u64, len: usize) -> i64 {
        let mut off = offset as i64;
        let mut done = 0;
        while done < len {
            let chunk = (len - done).min(SPLICE_DEF_SIZE);
            let n = self.file_to_pipe(fd, &mut off, chunk, len - done > SPLICE_DEF_SIZE);
            if n <= 0 {
                return if n == 0 { done as i64 } else { n };
            }
            let n = n as usize;
            let rd = self.pipe.0.as_raw_fd();
            let dst = &mut self.buf.as_mut_slice()[done..done + n];
            let mut r = pipe_to_user(rd, self.vmsplice_to_user, dst);
            if r == -i64::from(libc::EBADF) && self.vmsplice_to_user {
                // An old kernel: read(2) the pipe from now on.
                self.vmsplice_to_user = false;
                r = pipe_to_user(rd, false, dst);
            }
            if r < 0 {
                return r;
            }
            done += n;
        }
        len as i64
    }

    /// fio's `fio_splice_write`: bytes written or −errno.
    fn write(&mut self, fd: i32, offset: u64, len: usize) -> i64 {
        let mut off = offset as i64;
        let mut done = 0;
        while done < len {
            let mut pfd = libc::pollfd {
                fd: self.pipe.1.as_raw_fd(),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: poll on one pollfd we own, no timeout.
            if unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {
                return -errno();
            }
            let rest = &self.buf.as_slice()[done..len];
            let iov = libc::iovec {
                iov_base: rest.as_ptr() as *mut libc::c_void,
                iov_len: rest.len(),
            };
            // SAFETY: vmsplice on the pipe's write end maps (references)
            // the pages iov describes; they stay untouched until the splice
            // below has drained the pipe into the file.
            let n = unsafe {
                libc::vmsplice(self.pipe.1.as_raw_fd(), &iov, 1, libc::SPLICE_F_NONBLOCK)
            };
            if n < 0 {
                let e = errno();
                if e == i64::from(libc::EAGAIN) {
                    continue;
                }
                return -e;
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: splice from the pipe we own into our descriptor;
                // `off` is a valid in/out offset.
                let m = unsafe {
                    libc::splice(
                        self.pipe.0.as_raw_fd(),
                        std::ptr::null_mut(),
                        fd,
                        &mut off,
                        left,
                        0,
                    )
                };
                if m < 0 {
                    return -errno();
                }
                if m == 0 {
                    return -i64::from(libc::EIO);
                }
                left -= m as usize;
            }
            done += n as usize;
        }
        len as i64
    }
}

impl SyncEngine for SpliceEngine {
    fn name(&self) -> &'static str {
        "splice"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let i = req.file as usize;
        let fd = self.files[i].as_raw_fd();
        let len = req.len as usize;
        let r = match req.ddir {
            Ddir::Read => self.read(fd, req.offset, len),
            Ddir::Write => self.write(fd, req.offset, len),
            Ddir::Trim => trim(&self.files[i], self.kinds[i], req.offset, req.len),
        };
        if r < 0 {
            // Whatever a failed transfer left in the pipe must not end up
            // in the next I/O.
            self.drain_pipe();
        }
        Ok(Queued::Done(r))
    }

    fn sync(&mut self, _slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        Ok(Queued::Done(sync_file(
            &self.files[file as usize],
            data_only,
        )))
    }

    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(self.buf.as_mut_slice())
    }

    fn reopen(&mut self, files: Vec<File>) -> Result<(), EngineError> {
        self.files = files;
        Ok(())
    }
}

impl SpliceEngine {
    /// Empty the pipe (after a failed transfer), without blocking.
    fn drain_pipe(&mut self) {
        let mut scratch = [0u8; 4096];
        loop {
            let mut pfd = libc::pollfd {
                fd: self.pipe.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one pollfd we own, returning at once.
            if unsafe { libc::poll(&mut pfd, 1, 0) } <= 0 {
                return;
            }
            // SAFETY: read into a stack buffer we own, at most its length.
            let n = unsafe {
                libc::read(
                    self.pipe.0.as_raw_fd(),
                    scratch.as_mut_ptr().cast(),
                    scratch.len(),
                )
            };
            if n <= 0 {
                return;
            }
        }
    }
}
