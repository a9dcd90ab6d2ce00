//! A target and the page cache, as fio treats them on buffered runs:
//!
//! * [`advise`] gives the kernel the job's access pattern when a file is
//!   opened (`fadvise_hint`, on by default): `POSIX_FADV_RANDOM` turns off
//!   read-ahead for random jobs. Without it, 4 KiB random reads of a file
//!   on ext4 here pulled in the whole 256 MiB file within two seconds, and
//!   from then on every read was a cache hit.
//! * [`invalidate`] drops the pages of the job's region (`invalidate`, on
//!   by default): `posix_fadvise(POSIX_FADV_DONTNEED)` for a file, and for a
//!   block device the `BLKFLSBUF` ioctl (which writes back and drops its
//!   buffers; it needs CAP_SYS_ADMIN, and without it the same fadvise is
//!   used). fio does this when it opens a file — each loop of a job — and,
//!   on time-based runs, each time a pass over the region ends.
//! * [`pre_read`] reads the region through the cache before a job starts
//!   (`pre_read`).

use super::types::TargetKind;
use ssdready_core::spec_io::Fadvise;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// `_IO(0x12, 97)` from <linux/fs.h> (libc does not export it).
const BLKFLSBUF: libc::c_ulong = 0x1261;

/// Give `spec`'s access hint for all of `f` (errors are ignored, as fio's
/// are: a hint is not a requirement).
pub fn advise(f: &File, spec: &ssdready_core::JobSpec) {
    let advice = match spec.files.fadvise {
        Fadvise::None => return,
        Fadvise::Random => libc::POSIX_FADV_RANDOM,
        Fadvise::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Fadvise::ByPattern if spec.rw.is_random() => libc::POSIX_FADV_RANDOM,
        Fadvise::ByPattern => libc::POSIX_FADV_SEQUENTIAL,
    };
    // SAFETY: posix_fadvise takes an fd we own and plain integers.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
}

fn fadvise_dontneed(f: &File, offset: u64, len: u64) -> std::io::Result<()> {
    let (off, len) = (
        i64::try_from(offset).unwrap_or(i64::MAX),
        i64::try_from(len).unwrap_or(0),
    );
    // SAFETY: posix_fadvise takes an fd we own and plain integers.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), off, len, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

/// Drop the cached pages of `[offset, offset + len)` of `f` (`len` 0: to
/// the end); see the module docs.
pub fn invalidate(f: &File, kind: TargetKind, offset: u64, len: u64) -> std::io::Result<()> {
    if kind == TargetKind::Block {
        // SAFETY: BLKFLSBUF takes no argument; fd is a block device we own.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKFLSBUF as _, 0) };
        if rc == 0 {
            return Ok(());
        }
    }
    fadvise_dontneed(f, offset, len)
}

/// Read `[offset, offset + len)` of the file at `path` through the page
/// cache, 1 MiB at a time, stopping early when `stop` is set; returns the
/// bytes read (short at the end of the file).
pub fn pre_read(
    path: &std::path::Path,
    offset: u64,
    len: u64,
    stop: &AtomicBool,
) -> std::io::Result<u64> {
    let f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0u64;
    while done < len && !stop.load(Relaxed) {
        let n = (len - done).min(buf.len() as u64) as usize;
        let got = f.read_at(&mut buf[..n], offset + done)?;
        if got == 0 {
            break;
        }
        done += got as u64;
    }
    Ok(done)
}

/// Whether `path`'s bytes `[offset, offset + len)` are all in the page
/// cache (`mincore` over a mapping of the file): how tests tell what a
/// run left cached. None when the file cannot be mapped.
pub fn resident_fraction(path: &std::path::Path, offset: u64, len: u64) -> Option<f64> {
    let f = File::open(path).ok()?;
    let size = f.metadata().ok()?.len();
    let end = (offset + len).min(size);
    if end <= offset {
        return Some(0.0);
    }
    let page = 4096u64;
    let start = offset / page * page;
    let map_len = usize::try_from(end - start).ok()?;
    // SAFETY: a read-only shared mapping of a file we opened; it is only
    // passed to mincore and unmapped before returning, never dereferenced.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            start as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let pages = map_len.div_ceil(page as usize);
    let mut vec = vec![0u8; pages];
    // SAFETY: `p` maps `map_len` bytes; `vec` has one byte per page of it.
    let rc = unsafe { libc::mincore(p, map_len, vec.as_mut_ptr()) };
    // SAFETY: unmapping exactly the mapping made above.
    unsafe { libc::munmap(p, map_len) };
    if rc != 0 {
        return None;
    }
    let resident = vec.iter().filter(|&&b| b & 1 == 1).count();
    Some(resident as f64 / pages as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalidate_drops_and_pre_read_fills_the_cache() {
        // /dev/shm is tmpfs, whose pages cannot be dropped: use the
        // temporary directory's file system.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![7u8; 4 << 20]).unwrap();
        let f = File::open(&p).unwrap();
        f.sync_all().unwrap();
        invalidate(&f, TargetKind::File, 0, 0).unwrap();
        let Some(after_drop) = resident_fraction(&p, 0, 4 << 20) else {
            eprintln!("skipped: mincore unavailable");
            return;
        };
        if after_drop > 0.0 {
            eprintln!("skipped: this file system keeps pages after DONTNEED ({after_drop})");
            return;
        }
        let n = pre_read(&p, 1 << 20, 2 << 20, &AtomicBool::new(false)).unwrap();
        assert_eq!(n, 2 << 20);
        let cached = resident_fraction(&p, 1 << 20, 2 << 20).unwrap();
        assert!(cached > 0.99, "{cached}");
        invalidate(&f, TargetKind::File, 1 << 20, 1 << 20).unwrap();
        let left = resident_fraction(&p, 1 << 20, 2 << 20).unwrap();
        assert!(
            (0.4..0.6).contains(&left),
            "half the region dropped: {left}"
        );
    }
}
