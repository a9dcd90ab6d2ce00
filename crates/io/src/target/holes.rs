//! Which bytes of a file hold data, by `lseek`'s `SEEK_DATA` and
//! `SEEK_HOLE`: a read of a hole (a sparse file, or a preallocated extent
//! never written) is answered by the file system with zeros and never
//! reaches the device. File systems without their own answer report the
//! whole file as data, which is the safe side: nothing is refused for it.

use std::os::fd::AsRawFd;

/// The bytes of `file` below `len` that hold data (the rest are holes).
pub fn data_bytes(file: &std::fs::File, len: u64) -> std::io::Result<u64> {
    let mut data = 0u64;
    let mut at = 0u64;
    while at < len {
        let Some(start) = seek(file, at, libc::SEEK_DATA)? else {
            break; // no data at or after `at`
        };
        if start >= len {
            break;
        }
        let end = seek(file, start, libc::SEEK_HOLE)?.unwrap_or(len).min(len);
        data += end.saturating_sub(start);
        if end <= start {
            break;
        }
        at = end;
    }
    Ok(data)
}

/// `lseek(fd, at, whence)`; None where the kernel answers ENXIO (no data
/// at or after `at`, for SEEK_DATA).
fn seek(file: &std::fs::File, at: u64, whence: libc::c_int) -> std::io::Result<Option<u64>> {
    let off = libc::off_t::try_from(at).map_err(|_| std::io::Error::other("offset too large"))?;
    // SAFETY: lseek on a descriptor the File owns; it touches no memory.
    let r = unsafe { libc::lseek(file.as_raw_fd(), off, whence) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(r as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    #[test]
    fn a_truncated_file_has_no_data_and_a_written_one_has_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut f = std::fs::File::create(&p).unwrap();
        f.set_len(64 << 20).unwrap();
        let sparse = data_bytes(&f, 64 << 20).unwrap();
        // tmpfs and ext4 answer holes; a file system that does not says
        // all data, and the test cannot tell then.
        if sparse == 64 << 20 {
            eprintln!("skipped: this file system reports no holes");
            return;
        }
        assert_eq!(sparse, 0);
        f.seek(SeekFrom::Start(1 << 20)).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let d = data_bytes(&f, 64 << 20).unwrap();
        assert!((1 << 20..=2 << 20).contains(&d), "{d}");
        assert!(data_bytes(&f, 1 << 20).unwrap() <= 4096);
    }
}
