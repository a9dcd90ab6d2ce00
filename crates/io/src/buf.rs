//! Page-aligned I/O buffers, as O_DIRECT and registered io_uring buffers need.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any logical block size
/// up to 4 KiB and is what the kernel pins for registered buffers.
pub const ALIGN: usize = 4096;

/// An owned, zero-initialised, page-aligned byte buffer: on the heap, or
/// where the job's `mem` says ([`crate::mem`]).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// The heap allocation's alignment; unused for mapped memory.
    align: usize,
    /// Memory from the kernel (`mem=shm`, `mmap`, ...); None: the heap.
    mapped: Option<crate::mem::Mapped>,
}

// SAFETY: AlignedBuf uniquely owns its allocation, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len` bytes (rounded up to a whole page, at least one).
    pub fn new(len: usize) -> Self {
        let len = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(len, ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf {
            ptr,
            len,
            align: ALIGN,
            mapped: None,
        }
    }

    /// Buffer `index` of a job, of `len` bytes, where `mem` says: rounded up
    /// to a page (a huge page for the huge kinds), starting at a multiple of
    /// `iomem_align` (at least a page).
    pub fn for_job(
        len: usize,
        mem: &ssdready_core::spec_run::MemSpec,
        index: usize,
    ) -> Result<Self, crate::engine::error::EngineError> {
        use ssdready_core::spec_run::MemKind;
        let align = (mem.align as usize).max(ALIGN);
        if mem.kind == MemKind::Malloc {
            let len = len.max(1).div_ceil(ALIGN) * ALIGN;
            let layout = Layout::from_size_align(len, align).map_err(|_| {
                crate::engine::error::EngineError::Unsupported(format!(
                    "iomem_align={align}: no buffer of {len} bytes can have that alignment"
                ))
            })?;
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc_zeroed(layout) };
            let ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
            return Ok(AlignedBuf {
                ptr,
                len,
                align,
                mapped: None,
            });
        }
        // Mappings are page (or huge page) aligned; iomem_align beyond that
        // is had by mapping more and starting further in.
        let unit = if mem.kind.huge() {
            mem.huge_page() as usize
        } else {
            ALIGN
        };
        let usable = len.max(1).div_ceil(ALIGN) * ALIGN;
        let extra = align.saturating_sub(unit);
        let map_len = (usable + extra).div_ceil(unit) * unit;
        let mapped = crate::mem::Mapped::new(mem, map_len, index)?;
        let base = mapped.addr() as usize;
        let start = base.div_ceil(align) * align;
        let ptr = NonNull::new(start as *mut u8).expect("a mapping is never at address 0");
        Ok(AlignedBuf {
            ptr,
            len: usable,
            align,
            mapped: Some(mapped),
        })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Never true: buffers have at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Raw pointer for the kernel.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for our lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len initialised bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
    /// Fill with pseudo-random bytes (so writes are not trivially compressible).
    pub fn fill_random(&mut self, seed: u64) {
        fill_random(self.as_mut_slice(), seed);
    }
}

/// Fill `buf` with pseudo-random bytes (xorshift64 from `seed`).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

/// `len` zero bytes, or None when the allocator cannot provide them (instead
/// of aborting the process, as `vec![0; len]` does). The allocator may zero
/// them itself (glibc reuses freed memory for blocks under its mmap
/// threshold, which rises after each large free): for memory that must
/// cost only what is written, use [`ZeroedPages`].
pub fn try_zeroed_bytes(len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<u8>(len).ok()?;
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { alloc_zeroed(layout) };
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` was allocated by the global allocator with the layout of
    // `len` bytes at alignment 1, which is the layout of a Vec<u8> of
    // capacity `len`; all `len` bytes are initialised (zero).
    Some(unsafe { Vec::from_raw_parts(p, len, len) })
}

/// Zero bytes straight from the kernel: an anonymous private mapping, so a
/// page costs memory only once something is written to it, however often
/// such blocks are made and dropped (an emulated device's data costs what
/// has been written, at most its size). `MAP_NORESERVE`: a large device
/// that is only partly written is not refused by overcommit accounting.
pub struct ZeroedPages {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: ZeroedPages uniquely owns its mapping, like a Box<[u8]>; shared
// references only read it.
unsafe impl Send for ZeroedPages {}
// SAFETY: as above: `&ZeroedPages` gives only `&[u8]`.
unsafe impl Sync for ZeroedPages {}

impl ZeroedPages {
    /// `len` zero bytes (at least one page is mapped), or None when the
    /// kernel refuses the mapping.
    pub fn new(len: usize) -> Option<ZeroedPages> {
        let p = crate::mem::map_anon(len.max(1), libc::MAP_NORESERVE).ok()?;
        NonNull::new(p).map(|ptr| ZeroedPages { ptr, len })
    }

    /// Pages of the mapping that are in memory (`mincore`): what has been
    /// written, or read back from the zero page, so far.
    pub fn resident_pages(&self) -> usize {
        let pages = self.len.max(1).div_ceil(crate::mem::page_size());
        let mut vec = vec![0u8; pages];
        // SAFETY: the range is this mapping (page-aligned, as mmap returns
        // it); `vec` holds one byte per page of it.
        let r = unsafe {
            libc::mincore(
                self.ptr.as_ptr().cast(),
                self.len.max(1),
                vec.as_mut_ptr().cast(),
            )
        };
        if r != 0 {
            return 0;
        }
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }
}

impl std::ops::Deref for ZeroedPages {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the mapping holds `len` readable bytes (zero until
        // written) for as long as self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for ZeroedPages {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for ZeroedPages {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new(), with its length; no slice of
        // it outlives self.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len.max(1)) };
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.mapped.is_some() {
            return; // unmapped or detached by the mapping's own Drop
        }
        let layout = Layout::from_size_align(self.len, self.align).expect("buffer layout");
        // SAFETY: allocated in new() or for_job() with this exact layout.
        unsafe { dealloc(self.ptr.as_ptr(), layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn zeroed_pages_cost_only_what_is_written_however_often_they_are_made() {
        // glibc serves a calloc from freed memory (and zeroes it there)
        // once a large free raised its mmap threshold: made and dropped
        // over and over, these must still be untouched until written.
        for _ in 0..3 {
            let mut z = ZeroedPages::new(8 << 20).unwrap();
            assert_eq!(z.len(), 8 << 20);
            assert_eq!(z.resident_pages(), 0);
            z[3 * 4096 + 7] = 1;
            assert_eq!(z.resident_pages(), 1);
            assert_eq!(z.iter().map(|&b| u64::from(b)).sum::<u64>(), 1);
            drop(z);
            let v = try_zeroed_bytes(8 << 20).unwrap();
            drop(v);
        }
    }

    #[test]
    fn zeroed_bytes_are_zero_and_impossible_sizes_are_refused() {
        let v = try_zeroed_bytes(1 << 20).unwrap();
        assert_eq!(v.len(), 1 << 20);
        assert!(v.iter().all(|&b| b == 0));
        assert!(try_zeroed_bytes(0).unwrap().is_empty());
        // black_box: an allocation whose result does not escape may be
        // optimised away, and assumed to succeed.
        let huge = std::hint::black_box(try_zeroed_bytes(usize::MAX / 2));
        assert!(huge.is_none());
    }

    #[test]
    fn job_buffers_follow_mem_and_iomem_align() {
        use ssdready_core::spec_run::{MemKind, MemSpec};
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("buf");
        for (kind, path) in [
            (MemKind::Malloc, None),
            (MemKind::Shm, None),
            (MemKind::Mmap, None),
            (MemKind::MmapShared, None),
            (MemKind::MmapShared, Some(file.display().to_string())),
        ] {
            let mem = MemSpec {
                kind,
                file: path.clone(),
                align: 64 << 10,
                hugepage_size: 0,
            };
            let mut bufs: Vec<AlignedBuf> = (0..3)
                .map(|i| AlignedBuf::for_job(5000, &mem, i).unwrap())
                .collect();
            for (i, b) in bufs.iter_mut().enumerate() {
                assert_eq!(b.len(), 8192, "{kind:?}");
                assert_eq!(b.as_mut_ptr() as usize % (64 << 10), 0, "{kind:?}");
                assert!(b.as_slice().iter().all(|&x| x == 0));
                b.as_mut_slice().fill(i as u8 + 1);
            }
            if path.is_some() {
                let on_disk = std::fs::read(&file).unwrap();
                assert!(on_disk.len() >= 3 * 8192);
                drop(bufs);
                assert!(
                    !file.exists(),
                    "a buffer file it created is removed, as fio"
                );
            }
        }
    }

    #[test]
    fn huge_page_buffers_without_huge_pages_name_what_is_missing() {
        use ssdready_core::spec_run::{MemKind, MemSpec};
        let mem = MemSpec {
            kind: MemKind::MmapHuge,
            ..MemSpec::default()
        };
        // Either the machine has huge pages reserved, or the error says
        // where to reserve them.
        if let Err(e) = AlignedBuf::for_job(4096, &mem, 0) {
            let e = e.to_string();
            assert!(e.contains("huge pages") && e.contains("mmaphuge"), "{e}");
        }
    }

    #[test]
    fn buffers_are_page_aligned_and_rounded() {
        let mut b = AlignedBuf::new(5000);
        assert_eq!(b.len(), 8192);
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        b.fill_random(7);
        assert!(b.as_slice().iter().any(|&x| x != 0));
    }
}
