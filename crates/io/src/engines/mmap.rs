//! fio's mmap engine (engines/mmap.c): reads and writes are `memcpy` out
//! of and into a shared mapping of the file, so the data moves by page
//! faults and the page cache's write-back, never by read or write calls.
//!
//! * A file is mapped whole at its first I/O (`mmap(MAP_SHARED)` of its
//!   current length, or of the device's size); an I/O outside that mapping
//!   maps the file again, and when the whole file cannot be mapped, a
//!   window of the I/O alone (fio's "limited" mapping).
//! * The mapping's protection follows the job, as in fio: read and write
//!   for mixed jobs, write (plus read with `verify`) for writes, read
//!   otherwise. `thp=1` maps privately with `MADV_HUGEPAGE` (fio's
//!   `MAP_PRIVATE` then: the writes stay in this process's memory and never
//!   reach the file).
//! * `fadvise_hint` becomes `posix_madvise`: `MADV_RANDOM` for random jobs,
//!   `MADV_SEQUENTIAL` otherwise (or as named).
//! * A sync (`fsync=`, `fdatasync=`) is `msync(MS_SYNC)` of the whole
//!   mapping, as fio does for every sync direction.
//! * `direct=1` opens the file with `O_DIRECT`, which a mapping ignores;
//!   as fio does, each read or write is then followed by `msync(MS_SYNC)`
//!   of its pages ("not really direct"; fio's `posix_madvise(DONTNEED)`
//!   after it is a no-op in glibc, so it is not repeated here).
//! * Trims are not memory operations: as ssdready's other engines do them
//!   (`BLKDISCARD` on a block device, a punched hole in a file). fio 3.33's
//!   mmap tries `BLKDISCARD` on files too and fails with ENOTTY.
//! * The mapping cannot grow a file (fio's `FIO_NOEXTEND`): files a job
//!   writes are laid out whole first, as fio lays them out; an I/O past
//!   the end of a file fails with EIO instead of faulting (fio's would die
//!   of SIGBUS). A file shortened by another program while mapped faults
//!   all the same: the copy is guarded ([`crate::fault`]) and the job fails
//!   naming the offset, with its results so far.

use crate::buf::AlignedBuf;
use crate::engine::{open_files, EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::engines::psync::trim;
use crate::mem::page_size;
use crate::sync_engine::SyncEngine;
use crate::target::TargetKind;
use ssdready_core::engines::{Caps, EngineFacts};
use ssdready_core::spec::{JobSpec, RwMode};
use ssdready_core::spec_io::Fadvise;
use ssdready_core::{Ddir, IoReq};
use std::fs::File;
use std::os::unix::io::AsRawFd;

/// One file's current mapping.
struct Mapping {
    ptr: *mut u8,
    /// Bytes mapped.
    len: usize,
    /// The file offset of the mapping's first byte.
    off: u64,
}

/// memcpy through a mapping of the file.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static MMAP: EngineFacts = EngineFacts::own(
    "mmap",
    Caps {
        cannot_extend: true,
        ..Caps::SYNC
    },
    "each I/O is a memcpy through the file's mapping",
);

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&MMAP],
    open: |setup| Ok(AnyEngine::dynamic(MmapEngine::new(setup)?)),
};

/// See the module docs. Mappings are unmapped before the files close
/// (`Drop`, `reopen`).
pub struct MmapEngine {
    files: Vec<File>,
    kinds: Vec<TargetKind>,
    /// Per target, its size when it is a block device (fstat says 0).
    dev_sizes: Vec<u64>,
    maps: Vec<Option<Mapping>>,
    buf: AlignedBuf,
    prot: libc::c_int,
    /// `MAP_SHARED`, or `MAP_PRIVATE` with `thp`.
    share: libc::c_int,
    thp: bool,
    /// The `posix_madvise` access hint (None: `fadvise_hint=0`).
    advice: Option<libc::c_int>,
    direct: bool,
    page: usize,
    /// Why an I/O failed, beyond its errno ([`Engine::take_error_detail`]).
    detail: Option<String>,
}

// SAFETY: the raw pointers are mappings owned by the engine, which moves
// between threads only as a whole.
unsafe impl Send for MmapEngine {}

/// A block size `ioengine=mmap` refuses, with the option that makes it
/// need whole pages (`direct`, `fsync` or `fdatasync`).
#[derive(Debug, thiserror::Error)]
#[error(
    "option 'bs': ioengine=mmap with {why} needs block sizes that are multiples of the \
     page size ({page} bytes); {min} is not (fio refuses it alike)"
)]
pub struct MmapBlockSize {
    pub why: &'static str,
    pub page: u32,
    pub min: u32,
}

/// fio's init check: with `direct=1`, `fsync=` or `fdatasync=` the block
/// sizes must be multiples of the page size (fio: "mmap options dictate a
/// minimum block size of 4096 bytes"). Returns the refusal, naming the
/// option.
pub fn check_job(spec: &JobSpec) -> Result<(), MmapBlockSize> {
    let page = page_size() as u32;
    let min = spec.bs.min();
    if min.is_multiple_of(page) {
        return Ok(());
    }
    let why = if spec.direct {
        "direct"
    } else if spec.files.fsync_every > 0 {
        "fsync"
    } else if spec.files.fdatasync_every > 0 {
        "fdatasync"
    } else {
        return Ok(());
    };
    Err(MmapBlockSize { why, page, min })
}

impl MmapEngine {
    /// Open the job's targets; nothing is mapped until the first I/O.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let mut buf = AlignedBuf::for_job(spec.bs.max() as usize, &spec.run.mem, 0)?;
        buf.fill_random(setup.seed);
        let files = open_files(setup)?;
        let writes = !spec.verify.only
            && matches!(
                spec.rw,
                RwMode::Write | RwMode::RandWrite | RwMode::ReadWrite | RwMode::RandRw
            );
        let prot = if writes && spec.rw.is_mixed() {
            libc::PROT_READ | libc::PROT_WRITE
        } else if writes {
            libc::PROT_WRITE | if spec.verify.on() { libc::PROT_READ } else { 0 }
        } else {
            libc::PROT_READ
        };
        let advice = match spec.files.fadvise {
            Fadvise::None => None,
            Fadvise::Random => Some(libc::POSIX_MADV_RANDOM),
            Fadvise::Sequential => Some(libc::POSIX_MADV_SEQUENTIAL),
            Fadvise::ByPattern if spec.rw.is_random() => Some(libc::POSIX_MADV_RANDOM),
            Fadvise::ByPattern => Some(libc::POSIX_MADV_SEQUENTIAL),
        };
        Ok(MmapEngine {
            maps: files.iter().map(|_| None).collect(),
            files,
            kinds: setup.targets.iter().map(|t| t.kind).collect(),
            dev_sizes: setup.targets.iter().map(|t| t.size).collect(),
            buf,
            prot,
            share: if spec.files.thp {
                libc::MAP_PRIVATE
            } else {
                libc::MAP_SHARED
            },
            thp: spec.files.thp,
            advice,
            direct: spec.direct,
            page: page_size(),
            detail: None,
        })
    }

    /// The file's length now (a block device's size).
    fn file_len(&self, i: usize) -> Result<u64, i32> {
        if self.kinds[i] == TargetKind::Block {
            return Ok(self.dev_sizes[i]);
        }
        self.files[i]
            .metadata()
            .map(|m| m.len())
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
    }

    fn unmap(&mut self, i: usize) {
        if let Some(m) = self.maps[i].take() {
            // SAFETY: the mapping was made by `map` with this address and
            // length, and no reference into it outlives this call.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }

    /// Map `len` bytes of file `i` from `off` (page-aligned), advised as
    /// the job says: the mapping, or the errno.
    fn map(&self, i: usize, off: u64, len: usize) -> Result<Mapping, i32> {
        // SAFETY: a fresh mapping of our own descriptor at an address the
        // kernel chooses; nothing else refers to that range.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                self.prot,
                self.share,
                self.files[i].as_raw_fd(),
                off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(errno());
        }
        if self.thp {
            // SAFETY: advice on the mapping just made; errors are ignored,
            // as fio ignores them (the advice is optional).
            unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) };
        }
        if let Some(a) = self.advice {
            // SAFETY: advice on the mapping just made.
            let rc = unsafe { libc::posix_madvise(p, len, a) };
            if rc != 0 {
                // SAFETY: unmapping what was just mapped.
                unsafe { libc::munmap(p, len) };
                return Err(rc);
            }
        }
        Ok(Mapping {
            ptr: p.cast(),
            len,
            off,
        })
    }

    /// fio's prep: the address of `len` bytes at `offset` of file `i`,
    /// mapping the file (whole, else a window) when they are not mapped.
    fn address(&mut self, i: usize, offset: u64, len: u32) -> Result<*mut u8, i32> {
        let end = offset + u64::from(len);
        let inside = |m: &Mapping| offset >= m.off && end <= m.off + m.len as u64;
        if !self.maps[i].as_ref().is_some_and(inside) {
            self.unmap(i);
            let file_len = self.file_len(i)?;
            if end > file_len {
                // Past the end: the mapping would fault (SIGBUS).
                return Err(libc::EIO);
            }
            let whole = usize::try_from(file_len)
                .map_err(|_| libc::EFBIG)
                .and_then(|l| self.map(i, 0, l));
            let m = match whole {
                Ok(m) => m,
                Err(_) => {
                    let start = offset - offset % self.page as u64;
                    self.map(i, start, (end - start) as usize)?
                }
            };
            self.maps[i] = Some(m);
        }
        let m = self.maps[i].as_ref().expect("mapped above");
        // SAFETY: offset lies inside the mapping (checked or just mapped).
        Ok(unsafe { m.ptr.add((offset - m.off) as usize) })
    }

    /// `msync(MS_SYNC)` of `len` bytes at `p` (widened to pages): 0 or errno.
    fn msync(&self, p: *mut u8, len: usize) -> i32 {
        let lead = p as usize % self.page;
        // SAFETY: the page-aligned range starts at or before p, inside the
        // same mapping (mappings start on a page), and covers its len bytes.
        let rc = unsafe { libc::msync(p.sub(lead).cast(), len + lead, libc::MS_SYNC) };
        if rc == 0 {
            0
        } else {
            errno()
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

impl SyncEngine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let i = req.file as usize;
        let len = req.len as usize;
        if req.ddir == Ddir::Trim {
            return Ok(Queued::Done(trim(
                &self.files[i],
                self.kinds[i],
                req.offset,
                req.len,
            )));
        }
        let p = match self.address(i, req.offset, req.len) {
            Ok(p) => p,
            Err(e) => return Ok(Queued::Done(-i64::from(e))),
        };
        let buf = self.buf.as_mut_slice();
        // SAFETY: p addresses `len` mapped bytes of the file (within the
        // file's length when mapped; a fault from a later shrink is caught
        // and the mapping dropped), and the buffer holds at least
        // bs.max() ≥ len bytes; the two never overlap.
        // A file shrunk by someone else since it was mapped faults
        // (SIGBUS): the copy is guarded and the job fails with the offset.
        let copied = unsafe {
            match req.ddir {
                Ddir::Read => crate::fault::copy_guarded(p, buf.as_mut_ptr(), len, p),
                _ => crate::fault::copy_guarded(buf.as_ptr(), p, len, p),
            }
        };
        if let Err(at) = copied {
            self.unmap(i);
            let now = self
                .file_len(i)
                .map(|l| format!("{l} bytes now"))
                .unwrap_or_else(|e| std::io::Error::from_raw_os_error(e).to_string());
            // The I/O fails with EIO (the job ends with its results so
            // far); the detail becomes the job's error.
            self.detail.get_or_insert(format!(
                "ioengine=mmap: {} of {len} bytes at offset {}: byte {} is no longer in the file \
                 ({now}; it was shortened while mapped, and the access raised SIGBUS): {}",
                req.ddir.name(),
                req.offset,
                req.offset + at as u64,
                std::io::Error::from_raw_os_error(libc::EIO)
            ));
            return Ok(Queued::Done(-i64::from(libc::EIO)));
        }
        if self.direct {
            let e = self.msync(p, len);
            if e != 0 {
                return Ok(Queued::Done(-i64::from(e)));
            }
        }
        Ok(Queued::Done(req.len as i64))
    }

    fn take_error_detail(&mut self) -> Option<String> {
        self.detail.take()
    }

    /// `msync(MS_SYNC)` of the file's mapping (nothing mapped: nothing to
    /// write back through it), for fsync and fdatasync alike, as fio.
    fn sync(&mut self, _slot: u32, file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        let r = match &self.maps[file as usize] {
            Some(m) => self.msync(m.ptr, m.len),
            None => 0,
        };
        Ok(Queued::Done(-i64::from(r)))
    }

    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(self.buf.as_mut_slice())
    }

    fn reopen(&mut self, files: Vec<File>) -> Result<(), EngineError> {
        for i in 0..self.maps.len() {
            self.unmap(i);
        }
        self.files = files;
        Ok(())
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for i in 0..self.maps.len() {
            self.unmap(i);
        }
    }
}
