//! Page-aligned I/O buffers, as O_DIRECT and registered io_uring buffers need.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any logical block size
/// up to 4 KiB and is what the kernel pins for registered buffers.
pub const ALIGN: usize = 4096;

/// An owned, zero-initialised, page-aligned byte buffer.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
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
        AlignedBuf { ptr, len }
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
        let mut x = seed | 1;
        for chunk in self.as_mut_slice().chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = x.to_le_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, ALIGN).expect("buffer layout");
        // SAFETY: allocated in new() with this exact layout.
        unsafe { dealloc(self.ptr.as_ptr(), layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn buffers_are_page_aligned_and_rounded() {
        let mut b = AlignedBuf::new(5000);
        assert_eq!(b.len(), 8192);
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        b.fill_random(7);
        assert!(b.as_slice().iter().any(|&x| x != 0));
    }
}
