//! Laying out a file target: creating or extending a regular file to the
//! size a job needs, with real data so that reads hit allocated blocks
//! (fio's "laying out").
//!
//! The layout stops within one chunk (1 MiB) of its stop flag being set, and
//! then puts the file back as it found it: a file it created is removed, a
//! file it extended is truncated to its old length. Data is pushed to the
//! device window by window while writing (`sync_file_range`) and dropped
//! from the page cache once written, so the cache never holds more than two
//! windows of it: neither the final sync nor a stop (removing a file whose
//! pages are cached costs ~0.1 s per GiB) waits for gigabytes to drain, and
//! the layout does not fill the page cache with the job's data.
//!
//! Before any data, the new part of the file is preallocated as the job's
//! `fallocate` says (fio's default: `fallocate(2)`, quietly skipped where
//! the file system has none). As in fio, the data itself is written only
//! when a job reads the file, or writes it with `overwrite=1`: a file that
//! jobs only write is just created and preallocated, and their writes
//! land in unwritten (or, with `fallocate=none`, unallocated) space.

use super::types::{Target, TargetError, TargetKind};
use ssdready_core::spec_io::Fallocate;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Bytes written per `write` (and between two looks at the stop flag).
const CHUNK: usize = 1 << 20;
/// Bytes handed to writeback at a time; at most two windows are dirty.
const WINDOW: u64 = 16 << 20;

/// How a layout ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutEnd {
    /// The file holds the bytes the job needs, written and synced.
    Done,
    /// The stop flag was set: the file is back as it was before.
    Stopped,
}

/// How a file is made ready (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prep {
    /// Preallocation of the new part.
    pub fallocate: Fallocate,
    /// Whether to write data into it.
    pub write_data: bool,
    /// Whether to fsync it once laid out (fio's `create_fsync`, default on).
    pub fsync: bool,
}

impl Default for Prep {
    fn default() -> Self {
        Prep {
            fallocate: Fallocate::Native,
            write_data: true,
            fsync: true,
        }
    }
}

/// Create or extend a regular file to `bytes`: preallocate as `prep` says,
/// then (with `prep.write_data`) write pseudo-random data in 1 MiB chunks;
/// `progress(done, total)` is called after each chunk. On a stop or an error
/// the file is put back as it was (see the module docs).
pub fn layout(
    t: &Target,
    bytes: u64,
    prep: Prep,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<LayoutEnd, TargetError> {
    if t.kind != TargetKind::File || t.size >= bytes {
        return Ok(LayoutEnd::Done);
    }
    let err = |e| TargetError::Io {
        path: t.path.display().to_string(),
        source: e,
    };
    let (mut f, created) = open_for_layout(&t.path).map_err(err)?;
    let start = f.metadata().map_err(err)?.len();
    if start >= bytes {
        return Ok(LayoutEnd::Done);
    }
    let written = preallocate(&f, start, bytes, prep.fallocate)
        .and_then(|()| match prep.write_data {
            true => extend(&mut f, start, bytes, stop, progress),
            false => Ok(!stop.load(Relaxed)),
        })
        .and_then(|done| {
            if done && prep.fsync {
                f.sync_all()?;
            }
            Ok(done)
        });
    match written {
        Ok(true) => Ok(LayoutEnd::Done),
        Ok(false) => {
            undo(&t.path, &f, created, start).map_err(err)?;
            Ok(LayoutEnd::Stopped)
        }
        Err(e) => {
            // The write error is the one to report; undoing is best effort.
            let _ = undo(&t.path, &f, created, start);
            Err(err(e))
        }
    }
}

/// Open the file for writing; true when this call created it.
fn open_for_layout(path: &Path) -> std::io::Result<(File, bool)> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(f) => Ok((f, true)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Ok((OpenOptions::new().write(true).open(path)?, false))
        }
        Err(e) => Err(e),
    }
}

/// Preallocate `[start, end)` of `f` as `mode` says (fio's `fallocate`).
fn preallocate(f: &File, start: u64, end: u64, mode: Fallocate) -> std::io::Result<()> {
    let fd = f.as_raw_fd();
    let (off, len) = (start as libc::off_t, (end - start) as libc::off_t);
    let rc = match mode {
        Fallocate::None => return Ok(()),
        // SAFETY: fallocate takes an fd we own and plain integers.
        Fallocate::Native => unsafe { libc::fallocate(fd, 0, off, len) },
        // SAFETY: as above.
        Fallocate::Keep => unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, len) },
        Fallocate::Posix => {
            // SAFETY: posix_fallocate takes an fd we own and plain integers;
            // it returns the error rather than setting errno.
            let e = unsafe { libc::posix_fallocate(fd, off, len) };
            return if e == 0 {
                Ok(())
            } else {
                Err(std::io::Error::from_raw_os_error(e))
            };
        }
        Fallocate::Truncate => return f.set_len(end),
    };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match (mode, e.raw_os_error()) {
        // fio: a file system without fallocate just goes without.
        (Fallocate::Native, Some(libc::EOPNOTSUPP | libc::ENOSYS)) => Ok(()),
        _ => Err(e),
    }
}

/// Remove a file this layout created; cut one it extended back to `len`.
fn undo(path: &Path, f: &File, created: bool, len: u64) -> std::io::Result<()> {
    if created {
        std::fs::remove_file(path)
    } else {
        f.set_len(len)
    }
}

/// Write from `start` up to `end`; false when stopped first.
fn extend(
    f: &mut File,
    start: u64,
    end: u64,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> std::io::Result<bool> {
    let mut buf = crate::buf::AlignedBuf::new(CHUNK);
    buf.fill_random(0x1a70_0007);
    let total = end - start;
    let mut at = start;
    let mut window_start = start;
    f.seek(SeekFrom::Start(start))?;
    while at < end {
        if stop.load(Relaxed) {
            return Ok(false);
        }
        let n = (end - at).min(buf.len() as u64) as usize;
        f.write_all(&buf.as_slice()[..n])?;
        at += n as u64;
        if at - window_start >= WINDOW {
            write_back(f, window_start, at - window_start);
            window_start = at;
        }
        progress(at - start, total);
    }
    Ok(true)
}

/// Start writeback of `[off, off+len)`, wait for the window before it and
/// drop that from the page cache, so that at most two windows are cached.
/// Best effort: the final `fsync` reports any I/O error.
fn write_back(f: &File, off: u64, len: u64) {
    let fd = f.as_raw_fd();
    let prev = off.saturating_sub(WINDOW);
    let wait = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: sync_file_range takes an fd we own and plain integers.
    unsafe {
        libc::sync_file_range(fd, off as i64, len as i64, libc::SYNC_FILE_RANGE_WRITE);
        if prev < off {
            libc::sync_file_range(fd, prev as i64, (off - prev) as i64, wait);
            libc::posix_fadvise(
                fd,
                prev as i64,
                (off - prev) as i64,
                libc::POSIX_FADV_DONTNEED,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{resolve, TargetNeeds};
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn target(p: &Path, bytes: u64) -> Target {
        let needs = TargetNeeds {
            bytes: Some(bytes),
            offset: 0,
            modifies: true,
            allow_destructive: false,
            allow_mounted_write: false,
        };
        resolve(p, needs).unwrap()
    }

    #[test]
    fn layout_writes_exactly_the_needed_bytes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let t = target(&p, 3 << 20 | 4096);
        let mut calls = 0;
        let end = layout(
            &t,
            3 << 20 | 4096,
            Prep::default(),
            &AtomicBool::new(false),
            &mut |_, _| calls += 1,
        );
        assert_eq!(end.unwrap(), LayoutEnd::Done);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 3 << 20 | 4096);
        assert_eq!(calls, 4);
    }

    #[test]
    fn stopped_layout_removes_the_file_it_created() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let t = target(&p, 64 << 20);
        let stop = AtomicBool::new(false);
        let end = layout(&t, 64 << 20, Prep::default(), &stop, &mut |done, _| {
            if done >= 3 << 20 {
                stop.store(true, Relaxed);
            }
        });
        assert_eq!(end.unwrap(), LayoutEnd::Stopped);
        assert!(!p.exists(), "a half-laid-out file the run created must go");
    }

    #[test]
    fn stopped_layout_keeps_a_users_file_at_its_old_length() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"the user's data").unwrap();
        let ino = std::fs::metadata(&p).unwrap().ino();
        let t = target(&p, 8 << 20);
        let stop = AtomicBool::new(false);
        let end = layout(&t, 8 << 20, Prep::default(), &stop, &mut |_, _| {
            stop.store(true, Relaxed)
        });
        assert_eq!(end.unwrap(), LayoutEnd::Stopped);
        assert_eq!(std::fs::read(&p).unwrap(), b"the user's data");
        assert_eq!(std::fs::metadata(&p).unwrap().ino(), ino);
    }

    /// fio's fallocate modes, on a file only written (no data laid out).
    #[test]
    fn fallocate_modes_size_and_allocate_the_file_as_fio() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let mut sizes = Vec::new();
        for mode in [
            Fallocate::None,
            Fallocate::Native,
            Fallocate::Posix,
            Fallocate::Keep,
            Fallocate::Truncate,
        ] {
            let p = d.path().join(format!("{mode:?}"));
            let t = target(&p, 1 << 20);
            let prep = Prep {
                fallocate: mode,
                write_data: false,
                fsync: true,
            };
            assert_eq!(
                layout(&t, 1 << 20, prep, &stop, &mut |_, _| {}).unwrap(),
                LayoutEnd::Done
            );
            let md = std::fs::metadata(&p).unwrap();
            sizes.push((mode, md.len(), md.blocks() * 512));
        }
        // (mode, size, allocated)
        assert_eq!(sizes[0].1, 0, "none: an empty file");
        assert_eq!(
            sizes[4],
            (Fallocate::Truncate, 1 << 20, 0),
            "truncate: sparse"
        );
        assert_eq!(sizes[3].1, 0, "keep: size unchanged");
        assert_eq!(sizes[2].1, 1 << 20, "posix");
        assert!(sizes[2].2 >= 1 << 20, "posix allocates: {sizes:?}");
        assert_eq!(sizes[1].1, 1 << 20, "native");
    }
}
