//! The psync engine: `pread(2)` / `pwrite(2)` on one descriptor per target,
//! one I/O at a time; trims are `BLKDISCARD` on block devices and
//! `fallocate(PUNCH_HOLE)` on files. The baseline of the papers: the
//! synchronous path where the thread sleeps until its I/O is done.

use crate::buf::AlignedBuf;
use crate::engine::{open_files, sync_file, Engine, EngineError, EngineSetup, Queued};
use crate::target::TargetKind;
use ssdready_core::{Completion, Ddir, IoReq};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

/// See the module docs.
pub struct PsyncEngine {
    files: Vec<File>,
    kinds: Vec<TargetKind>,
    buf: AlignedBuf,
}

impl PsyncEngine {
    /// Open the job's targets.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let mut buf = AlignedBuf::new(setup.spec.bs.max() as usize);
        buf.fill_random(setup.seed);
        Ok(PsyncEngine {
            files: open_files(setup)?,
            kinds: setup.targets.iter().map(|t| t.kind).collect(),
            buf,
        })
    }
}

fn res(r: std::io::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
    }
}

/// `_IO(0x12, 119)` from <linux/fs.h> (libc does not export it).
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discard `len` bytes at `offset`: BLKDISCARD on a block device, a punched
/// hole on a file. Returns `len` or `-errno`.
pub(crate) fn trim(file: &File, kind: TargetKind, offset: u64, len: u32) -> i64 {
    let fd = file.as_raw_fd();
    let rc = match kind {
        TargetKind::Block => {
            let range: [u64; 2] = [offset, len as u64];
            // SAFETY: BLKDISCARD reads a [u64; 2] (start, length) from the
            // pointer, which is valid for the duration of the call.
            unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
        }
        TargetKind::File => {
            // SAFETY: fallocate takes plain integers; fd is open for writing.
            unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset as libc::off_t,
                    len as libc::off_t,
                )
            }
        }
    };
    if rc == 0 {
        len as i64
    } else {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    }
}

impl Engine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }
    #[inline]
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let f = &self.files[req.file as usize];
        let len = req.len as usize;
        let r = match req.ddir {
            Ddir::Read => res(f.read_at(&mut self.buf.as_mut_slice()[..len], req.offset)),
            Ddir::Write => res(f.write_at(&self.buf.as_slice()[..len], req.offset)),
            Ddir::Trim => trim(f, self.kinds[req.file as usize], req.offset, req.len),
        };
        Ok(Queued::Done(r))
    }
    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }
    fn getevents(&mut self, _min: usize, _out: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }
    fn completion_mode(&self) -> &'static str {
        "sync"
    }
    fn sync(&mut self, _slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        Ok(Queued::Done(sync_file(
            &self.files[file as usize],
            data_only,
        )))
    }
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        // One I/O at a time: every slot uses the one buffer.
        Some(self.buf.as_mut_slice())
    }
    fn reopen(&mut self, files: Vec<File>) -> Result<(), EngineError> {
        self.files = files;
        Ok(())
    }
}
