//! Where a file's bytes live on its block device: the `FS_IOC_FIEMAP`
//! extent map (ext4, XFS, btrfs, f2fs, …), so that an I/O to a file can be
//! joined with the block layer's record of it, which names device sectors.
//!
//! The map is read as the file stands, without `FIEMAP_FLAG_SYNC`: that
//! flag writes the file's dirty pages back first, from the caller's
//! context (under its cgroup's write throttle, a buffered job's run then
//! waited half a minute before its first I/O, which fio never does), and
//! changes the page cache the job then runs against.
//!
//! Only plain written extents are kept: delayed-allocation, unwritten
//! (preallocated, read as zeros without touching the device), inline,
//! encoded or unaligned extents have no sector an I/O would reach as is.

use std::os::fd::AsRawFd;

/// One extent: `len` bytes at file offset `logical` are at byte `physical`
/// of the file system's block device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub len: u64,
}

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B; // _IOWR('f', 11, struct fiemap)
const EXTENT_LAST: u32 = 0x1;
/// UNKNOWN | DELALLOC | ENCODED | DATA_ENCRYPTED | NOT_ALIGNED | DATA_INLINE
/// | DATA_TAIL | UNWRITTEN.
const EXTENT_NO_SECTOR: u32 = 0x2 | 0x4 | 0x8 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800;
const BATCH: usize = 256;
const HEADER_WORDS: usize = 4; // fm_start, fm_length, 4 × u32
const EXTENT_WORDS: usize = 7; // 56 bytes

/// The written extents of `file`, in file order.
pub fn extents(file: &std::fs::File) -> std::io::Result<Vec<Extent>> {
    let mut out = Vec::new();
    let mut start = 0u64;
    loop {
        // struct fiemap followed by BATCH struct fiemap_extent, as u64 words.
        let mut buf = vec![0u64; HEADER_WORDS + BATCH * EXTENT_WORDS];
        buf[0] = start;
        buf[1] = u64::MAX - start;
        buf[2] = 0; // fm_flags (no sync); fm_mapped_extents = 0
        buf[3] = BATCH as u64; // fm_extent_count; fm_reserved = 0

        // SAFETY: FS_IOC_FIEMAP reads the header and writes at most
        // fm_extent_count extents into the buffer, which is that large and
        // outlives the call.
        let r = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, buf.as_mut_ptr()) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mapped = (buf[2] >> 32) as usize;
        if mapped == 0 {
            return Ok(out);
        }
        let mut last = false;
        for i in 0..mapped.min(BATCH) {
            let e = &buf[HEADER_WORDS + i * EXTENT_WORDS..][..EXTENT_WORDS];
            let flags = e[5] as u32;
            if flags & EXTENT_NO_SECTOR == 0 {
                out.push(Extent {
                    logical: e[0],
                    physical: e[1],
                    len: e[2],
                });
            }
            start = e[0] + e[2];
            last = flags & EXTENT_LAST != 0;
        }
        if last {
            return Ok(out);
        }
    }
}

/// The device byte of file offset `offset`, if it lies in a kept extent.
/// `extents` is in file order.
pub fn locate(extents: &[Extent], offset: u64) -> Option<u64> {
    let i = extents.partition_point(|e| e.logical <= offset);
    let e = extents.get(i.checked_sub(1)?)?;
    (offset < e.logical + e.len).then(|| e.physical + (offset - e.logical))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_the_extent_and_refuses_holes() {
        let x = [
            Extent {
                logical: 0,
                physical: 1 << 20,
                len: 8192,
            },
            Extent {
                logical: 16384,
                physical: 4 << 20,
                len: 4096,
            },
        ];
        assert_eq!(locate(&x, 0), Some(1 << 20));
        assert_eq!(locate(&x, 4096), Some((1 << 20) + 4096));
        assert_eq!(locate(&x, 8192), None);
        assert_eq!(locate(&x, 16384 + 100), Some((4 << 20) + 100));
        assert_eq!(locate(&x, 20480), None);
    }

    /// Wherever the test's temporary directory lives: a written file either
    /// maps wholly (a block-device file system) or the ioctl is refused
    /// (tmpfs, overlay without support).
    #[test]
    fn a_written_file_maps_wholly_or_not_at_all() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        match extents(&f) {
            Ok(x) if !x.is_empty() => {
                let covered: u64 = x.iter().map(|e| e.len).sum();
                assert!(covered >= 1 << 20, "{x:?}");
                assert!(locate(&x, (1 << 20) - 1).is_some());
            }
            Ok(_) => eprintln!("skipped: the file system reports no extents"),
            Err(e) => eprintln!("skipped: FIEMAP refused here: {e}"),
        }
    }
}
