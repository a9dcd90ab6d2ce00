//! The psync engine: `pread(2)` / `pwrite(2)` on one descriptor per target,
//! one I/O at a time; trims are `BLKDISCARD` on block devices and
//! `fallocate(PUNCH_HOLE)` on files. The baseline of the papers: the
//! synchronous path where the thread sleeps until its I/O is done.
//!
//! It also issues fio's `falloc` and `ftruncate` engines' calls (fio's
//! engines/falloc.c and ftruncate.c): `fallocate(2)` for every I/O (a
//! write allocates, a read allocates keeping the size, a trim punches a
//! hole keeping the size), or `ftruncate(2)` to a write's offset (other
//! directions fail with EINVAL, as in fio; a run refuses them up front).

use crate::buf::AlignedBuf;
use crate::engine::{open_files, sync_file, sync_file_range, EngineError, EngineSetup, Queued};
use crate::sync_engine::SyncEngine;
use crate::target::TargetKind;
use ssdready_core::engines::{Caps, EngineFacts, IN_CALL};
use ssdready_core::{Ddir, IoReq};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

/// fallocate(2) instead of writes (a read allocates keeping the size);
/// results name it as the family, psync.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static FALLOC: EngineFacts = EngineFacts {
    caps: Caps::SYNC,
    ..EngineFacts::own("falloc", Caps::SYNC, IN_CALL)
};
/// ftruncate(2) to each write's offset.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static FTRUNCATE: EngineFacts = EngineFacts {
    name: "ftruncate",
    ..FALLOC
};

/// See the module docs.
pub struct PsyncEngine {
    files: Vec<File>,
    kinds: Vec<TargetKind>,
    buf: AlignedBuf,
    op: Op,
}

/// What a read, write or trim is turned into.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    /// pread / pwrite / discard.
    Rw,
    /// fio's falloc engine: fallocate.
    Falloc,
    /// fio's ftruncate engine: ftruncate to a write's offset.
    Ftruncate,
}

impl PsyncEngine {
    /// Open the job's targets.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let mut buf = AlignedBuf::for_job(setup.spec.bs.max() as usize, &setup.spec.run.mem, 0)?;
        buf.fill_random(setup.seed);
        Ok(PsyncEngine {
            files: open_files(setup)?,
            kinds: setup.targets.iter().map(|t| t.kind).collect(),
            buf,
            op: match setup.spec.engine_named.as_deref() {
                Some("falloc") => Op::Falloc,
                Some("ftruncate") => Op::Ftruncate,
                _ => Op::Rw,
            },
        })
    }
}

fn res(r: std::io::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
    }
}

/// A 0-or-−1 call's result as a completion: `len` done, or −errno.
fn rc(rc: libc::c_int, len: u32) -> i64 {
    if rc == 0 {
        len as i64
    } else {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    }
}

/// fio's falloc engine: `fallocate` with the direction's mode.
fn falloc(file: &File, ddir: Ddir, offset: u64, len: u32) -> i64 {
    let mode = match ddir {
        Ddir::Read => libc::FALLOC_FL_KEEP_SIZE,
        Ddir::Write => 0,
        Ddir::Trim => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
    };
    // SAFETY: fallocate takes plain integers on an open descriptor.
    let r = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            mode,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    rc(r, len)
}

/// fio's ftruncate engine: a write sets the file's size to its offset
/// (and counts its length, as fio's fake I/O does); anything else EINVAL.
fn ftruncate(file: &File, ddir: Ddir, offset: u64, len: u32) -> i64 {
    if ddir != Ddir::Write {
        return -(libc::EINVAL as i64);
    }
    // SAFETY: ftruncate takes plain integers on an open descriptor.
    rc(
        unsafe { libc::ftruncate(file.as_raw_fd(), offset as libc::off_t) },
        len,
    )
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
            let discard = || unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) };
            match discard() {
                // The kernel will not drop dirty page cache over the range
                // (buffered writes not yet written back): write it back,
                // then discard.
                -1 if std::io::Error::last_os_error().raw_os_error() == Some(libc::EBUSY) => {
                    let how = libc::SYNC_FILE_RANGE_WAIT_BEFORE
                        | libc::SYNC_FILE_RANGE_WRITE
                        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
                    // SAFETY: sync_file_range takes plain integers.
                    let rc = unsafe {
                        libc::sync_file_range(fd, offset as libc::off64_t, len.into(), how)
                    };
                    if rc < 0 {
                        rc
                    } else {
                        discard()
                    }
                }
                rc => rc,
            }
        }
        TargetKind::Dax => return -(libc::EINVAL as i64),
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
    self::rc(rc, len)
}

impl SyncEngine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }
    #[inline]
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let f = &self.files[req.file as usize];
        let len = req.len as usize;
        let r = match (self.op, req.ddir) {
            (Op::Rw, Ddir::Read) => res(f.read_at(&mut self.buf.as_mut_slice()[..len], req.offset)),
            (Op::Rw, Ddir::Write) => res(f.write_at(&self.buf.as_slice()[..len], req.offset)),
            (Op::Rw, Ddir::Trim) => trim(f, self.kinds[req.file as usize], req.offset, req.len),
            (Op::Falloc, d) => falloc(f, d, req.offset, req.len),
            (Op::Ftruncate, d) => ftruncate(f, d, req.offset, req.len),
        };
        Ok(Queued::Done(r))
    }
    fn sync(&mut self, _slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
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
        Ok(Queued::Done(sync_file_range(
            &self.files[file as usize],
            range,
            flags,
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
