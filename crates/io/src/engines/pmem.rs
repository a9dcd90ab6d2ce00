//! What fio's `libpmem` and `dev-dax` engines share: a shared mapping of
//! the target, and libpmem's copies into it (PMDK's `pmem_memcpy`), done
//! here without linking libpmem.
//!
//! Persistent memory is reached by loads and stores. A store is durable
//! once its cache line has left the CPU's caches: either it bypassed them
//! (a *non-temporal* store, `movnt`), or the line was written back
//! (`clwb`, `clflushopt` or `clflush`); an `sfence` then waits for those
//! to finish (libpmem's *drain*). That is the [`Persistence::Dax`] path:
//! it is only meaningful when the mapping *is* the medium — a file on a
//! DAX-mounted file system mapped with `MAP_SYNC` (which the kernel
//! accepts only there, so that a successful `MAP_SYNC` mapping is how
//! libpmem's `pmem_is_pmem` tells pmem on Linux), or a device-DAX
//! character device.
//!
//! Any other mapping is of the page cache: stores reach the medium only
//! through `msync(2)`, the [`Persistence::Msync`] path (libpmem's
//! `pmem_msync`). fio 3.33's libpmem engine refuses such a file ("file_name
//! does not point to persistent memory", error 95, unless
//! `PMEM_IS_PMEM_FORCE=1`); ssdready runs it and says which path it took.
//!
//! fio's mapping of the options: `direct=1` asks for non-temporal stores
//! (`PMEM_F_MEM_NONTEMPORAL`), else stores then write-back
//! (`PMEM_F_MEM_TEMPORAL`); `sync=1` drains after every write, else
//! (`PMEM_F_MEM_NODRAIN`) only at an fsync of the job. On the msync path
//! the store kind is the same and a drain is an `msync(MS_SYNC)`.
//!
//! On other architectures than x86_64 there is no portable cache-line
//! write-back: the DAX path falls back to msync (said in the result).

use ssdready_core::spec::JobSpec;
use std::fs::File;
use std::os::unix::io::AsRawFd;

/// What a run refuses of a job of either mapped engine (its
/// `EngineFacts::refusals`): trims (fio fails each with EINVAL), and with
/// fsync or fdatasync a block size that is not a whole number of pages
/// (fio's init of both refuses it).
pub fn refusals(spec: &JobSpec) -> Vec<String> {
    let mut why = Vec::new();
    let engine = spec.engine_name();
    if spec.rw.trims() {
        why.push(format!(
            "rw={}: ioengine={engine} cannot trim (fio fails every trim of it with EINVAL)",
            spec.rw.name()
        ));
    }
    let page = 4096;
    if !u64::from(spec.bs.min()).is_multiple_of(page)
        && (spec.files.fsync_every > 0 || spec.files.fdatasync_every > 0)
    {
        why.push(format!(
            "bs={}: ioengine={engine} maps its files, so with fsync or fdatasync every block size must be a \
             multiple of the {page}-byte page (fio refuses it too)",
            spec.bs.min()
        ));
    }
    why
}

/// How the engine's writes are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// Non-temporal stores or cache-line write-back, then `sfence`: the
    /// mapping is persistent memory (`MAP_SYNC` held, or device-DAX).
    Dax,
    /// `msync(2)`: the mapping is of the page cache.
    Msync,
}

impl Persistence {
    /// The name in the result.
    pub fn name(self) -> &'static str {
        match self {
            Persistence::Dax => "dax",
            Persistence::Msync => "msync",
        }
    }
}

/// How a write's bytes are stored (fio: `direct=1` → non-temporal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stores {
    /// `movnt`: around the caches.
    NonTemporal,
    /// Plain stores (then written back on the DAX path).
    Temporal,
}

/// `MAP_SYNC` on x86_64 and most Linux ports (libc names it for Linux).
const MAP_SYNC: libc::c_int = libc::MAP_SYNC;

/// A shared mapping of `[0, len)` of a file or device.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
    persistence: Persistence,
}

// SAFETY: the mapping is owned by one engine, used by one thread at a time;
// the pointer is not shared with anything else in this process.
unsafe impl Send for Mapping {}

fn mmap(
    file: &File,
    len: usize,
    prot: libc::c_int,
    flags: libc::c_int,
) -> std::io::Result<*mut u8> {
    // SAFETY: a new mapping at an address the kernel picks; fd is open for
    // the duration of the call; the result is checked against MAP_FAILED.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, file.as_raw_fd(), 0) };
    if p == libc::MAP_FAILED {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(p.cast())
    }
}

fn prot(writable: bool) -> libc::c_int {
    if writable {
        libc::PROT_READ | libc::PROT_WRITE
    } else {
        libc::PROT_READ
    }
}

impl Mapping {
    /// Map a regular file as libpmem's `pmem_map_file` does: with
    /// `MAP_SYNC` first (granted only on a DAX file system: then
    /// [`Persistence::Dax`]), else a plain shared mapping
    /// ([`Persistence::Msync`]). A read-only mapping is never DAX-checked:
    /// nothing is written through it.
    pub fn map_file(file: &File, len: usize, writable: bool) -> std::io::Result<Mapping> {
        if writable {
            let flags = libc::MAP_SHARED_VALIDATE | MAP_SYNC;
            if let Ok(ptr) = mmap(file, len, prot(true), flags) {
                return Ok(Mapping::new(ptr, len, Persistence::Dax));
            }
        }
        let ptr = mmap(file, len, prot(writable), libc::MAP_SHARED)?;
        Ok(Mapping::new(ptr, len, Persistence::Msync))
    }

    /// Map a device-DAX character device: its mapping is the medium.
    pub fn map_device(file: &File, len: usize, writable: bool) -> std::io::Result<Mapping> {
        let ptr = mmap(file, len, prot(writable), libc::MAP_SHARED)?;
        Ok(Mapping::new(ptr, len, Persistence::Dax))
    }

    fn new(ptr: *mut u8, len: usize, persistence: Persistence) -> Mapping {
        // Without a way to write cache lines back, DAX falls back to msync.
        let persistence = if cfg!(target_arch = "x86_64") {
            persistence
        } else {
            Persistence::Msync
        };
        Mapping {
            ptr,
            len,
            persistence,
        }
    }

    /// The persistence path of the writes.
    pub fn persistence(&self) -> Persistence {
        self.persistence
    }

    /// The mapped bytes `[offset, offset + n)`, or None past the end.
    fn range(&self, offset: u64, n: usize) -> Option<*mut u8> {
        let end = offset.checked_add(n as u64)?;
        (end <= self.len as u64).then(|| {
            // SAFETY: offset + n ≤ len, so the pointer stays in the mapping.
            unsafe { self.ptr.add(offset as usize) }
        })
    }

    /// Copy `[offset, offset + buf.len())` into `buf` (fio: `memcpy`);
    /// the length, or `-EINVAL` past the end of the mapping.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> i64 {
        let Some(src) = self.range(offset, buf.len()) else {
            return -(libc::EINVAL as i64);
        };
        // SAFETY: src is valid for buf.len() bytes (range); buf is a
        // distinct allocation of the engine.
        unsafe { std::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), buf.len()) };
        buf.len() as i64
    }

    /// Store `data` at `offset` (libpmem's `pmem_memcpy` with the stores
    /// asked for), draining when `drain`; the length, `-EINVAL` past the
    /// end, or `-errno` of msync.
    pub fn write(&mut self, offset: u64, data: &[u8], stores: Stores, drain: bool) -> i64 {
        let Some(dst) = self.range(offset, data.len()) else {
            return -(libc::EINVAL as i64);
        };
        let dax = self.persistence == Persistence::Dax;
        // SAFETY: dst is valid for data.len() bytes of a writable mapping
        // (range; a read-only engine never writes); data does not overlap it.
        unsafe { copy::store(dst, data, stores, dax) };
        if !drain {
            return data.len() as i64;
        }
        match self.drain_range(offset, data.len()) {
            0 => data.len() as i64,
            e => e,
        }
    }

    /// libpmem's `pmem_drain` of everything written: `sfence` on the DAX
    /// path, `msync` of the whole mapping otherwise. 0 or `-errno`.
    pub fn drain(&self) -> i64 {
        self.drain_range(0, self.len)
    }

    fn drain_range(&self, offset: u64, n: usize) -> i64 {
        if self.persistence == Persistence::Dax {
            copy::sfence();
            return 0;
        }
        // msync wants a page-aligned start.
        let page = 4096u64;
        let start = offset / page * page;
        let len = (offset + n as u64 - start) as usize;
        // SAFETY: [start, start + len) is inside the mapping (start ≤
        // offset, offset + n ≤ self.len) and page-aligned at the start.
        let r = unsafe { libc::msync(self.ptr.add(start as usize).cast(), len, libc::MS_SYNC) };
        if r == 0 {
            0
        } else {
            -(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as i64)
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The copies: x86_64 stores and cache-line write-back, and the portable
/// fallback.
mod copy {
    use super::Stores;

    /// Store `data` at `dst`; on the DAX path make every line durable up to
    /// the drain (non-temporal stores, or stores then write-back).
    ///
    /// # Safety
    /// `dst` is valid for writes of `data.len()` bytes, not overlapping `data`.
    pub(super) unsafe fn store(dst: *mut u8, data: &[u8], stores: Stores, dax: bool) {
        #[cfg(target_arch = "x86_64")]
        {
            match stores {
                // SAFETY: as this function's contract.
                Stores::NonTemporal => unsafe { x86::copy_nt(dst, data) },
                Stores::Temporal => {
                    // SAFETY: as this function's contract.
                    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
                    if dax {
                        // SAFETY: the lines were just written, inside the mapping.
                        unsafe { x86::write_back(dst, data.len()) };
                    }
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (stores, dax);
            // SAFETY: as this function's contract.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
        }
    }

    /// Wait for every non-temporal store and write-back of this thread.
    pub(super) fn sfence() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: sfence has no operands; SSE is part of x86_64.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
    }

    #[cfg(target_arch = "x86_64")]
    mod x86 {
        use std::arch::x86_64::{__m128i, _mm_clflush, _mm_loadu_si128, _mm_stream_si128};
        use std::sync::OnceLock;

        const LINE: usize = 64;

        /// The best write-back instruction of this CPU, as libpmem picks
        /// it: clwb (keeps the line cached), clflushopt, else clflush.
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        enum Flush {
            Clwb,
            Clflushopt,
            Clflush,
        }

        fn flush_kind() -> Flush {
            static KIND: OnceLock<Flush> = OnceLock::new();
            *KIND.get_or_init(|| {
                // CPUID leaf 7: EBX bit 24 CLWB, bit 23 CLFLUSHOPT.
                #[allow(unused_unsafe)]
                // SAFETY: cpuid is always available on x86_64.
                let ebx = unsafe { std::arch::x86_64::__cpuid_count(7, 0) }.ebx;
                if ebx & (1 << 24) != 0 {
                    Flush::Clwb
                } else if ebx & (1 << 23) != 0 {
                    Flush::Clflushopt
                } else {
                    Flush::Clflush
                }
            })
        }

        /// Write back every cache line of `[p, p + n)`.
        ///
        /// # Safety
        /// `[p, p + n)` is mapped memory of this process.
        pub(super) unsafe fn write_back(p: *const u8, n: usize) {
            if n == 0 {
                return;
            }
            let kind = flush_kind();
            let mut line = p as usize & !(LINE - 1);
            let end = p as usize + n;
            while line < end {
                let a = line as *const u8;
                match kind {
                    // SAFETY: the line holds mapped bytes (contract); the
                    // CPU has the instruction (CPUID).
                    Flush::Clwb => unsafe {
                        std::arch::asm!("clwb [{}]", in(reg) a, options(nostack, preserves_flags))
                    },
                    // SAFETY: as above.
                    Flush::Clflushopt => unsafe {
                        std::arch::asm!("clflushopt [{}]", in(reg) a, options(nostack, preserves_flags))
                    },
                    // SAFETY: as above; clflush is part of x86_64.
                    Flush::Clflush => unsafe { _mm_clflush(a) },
                }
                line += LINE;
            }
        }

        /// Copy with non-temporal stores (16-byte `movntdq`), the unaligned
        /// head and tail with plain stores written back.
        ///
        /// # Safety
        /// `dst` is valid for `data.len()` bytes, not overlapping `data`.
        pub(super) unsafe fn copy_nt(dst: *mut u8, data: &[u8]) {
            let n = data.len();
            let head = (dst.align_offset(16)).min(n);
            let body = (n - head) / 16 * 16;
            let src = data.as_ptr();
            // SAFETY: [dst, dst + head) is inside the destination.
            unsafe {
                std::ptr::copy_nonoverlapping(src, dst, head);
                write_back(dst, head);
            }
            let mut i = head;
            while i < head + body {
                // SAFETY: i + 16 ≤ n; dst + i is 16-byte aligned (head).
                unsafe {
                    let v = _mm_loadu_si128(src.add(i).cast::<__m128i>());
                    _mm_stream_si128(dst.add(i).cast::<__m128i>(), v);
                }
                i += 16;
            }
            // SAFETY: [i, n) is the rest of the destination.
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), n - i);
                write_back(dst.add(i), n - i);
            }
        }

        #[cfg(test)]
        #[test]
        fn the_flush_kind_follows_cpuid() {
            let k = flush_kind();
            let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
            let has = |w: &str| info.split_whitespace().any(|x| x == w);
            if !info.is_empty() {
                let want = if has("clwb") {
                    Flush::Clwb
                } else if has("clflushopt") {
                    Flush::Clflushopt
                } else {
                    Flush::Clflush
                };
                assert_eq!(k, want);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mapped_engines_refuse_trims_and_partial_pages_with_syncs() {
        let job = |text: &str| ssdready_core::options::job_of(text).expect("a valid job");
        assert!(job("ioengine=libpmem rw=randtrim").refusals()[0].contains("cannot trim"));
        let partial = job("ioengine=dev-dax rw=write bs=512 fsync=1").refusals();
        assert!(
            partial[0].contains("multiple of the 4096-byte page"),
            "{partial:?}"
        );
        assert!(job("ioengine=dev-dax rw=write bs=512")
            .refusals()
            .is_empty());
        assert!(job("ioengine=dev-dax").engine().caps.maps_targets);
        assert!(!job("ioengine=psync").engine().caps.maps_targets);
        assert!(job("ioengine=psync rw=randtrim").refusals().is_empty());
    }
    use super::*;
    use std::io::{Read, Seek};

    fn file_of(len: usize) -> (tempfile::TempDir, File) {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.path().join("m"))
            .unwrap();
        f.set_len(len as u64).unwrap();
        (d, f)
    }

    #[test]
    fn every_store_kind_and_alignment_lands_the_bytes_in_the_file() {
        let (_d, mut f) = file_of(1 << 16);
        let mut m = Mapping::map_file(&f, 1 << 16, true).unwrap();
        // A temp dir is not on a DAX mount here (nor anywhere in CI).
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut want = vec![0u8; 1 << 16];
        for (k, (off, len)) in [
            (0u64, 4096usize),
            (4097, 100),
            (9001, 5000),
            (20000, 15),
            (30001, 1),
        ]
        .into_iter()
        .enumerate()
        {
            let stores = if k % 2 == 0 {
                Stores::NonTemporal
            } else {
                Stores::Temporal
            };
            assert_eq!(m.write(off, &data[..len], stores, k % 3 == 0), len as i64);
            want[off as usize..off as usize + len].copy_from_slice(&data[..len]);
        }
        assert_eq!(m.drain(), 0);
        let mut back = vec![0u8; 100];
        assert_eq!(m.read(4097, &mut back), 100);
        assert_eq!(&back[..], &data[..100]);
        let mut got = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut got).unwrap();
        assert!(got == want, "the file differs from what was stored");
    }

    #[test]
    fn the_dax_path_stores_and_writes_back_every_alignment() {
        // Write-back and sfence work on any memory: the DAX path's copies
        // are checked on a heap buffer (no persistent memory here).
        let data: Vec<u8> = (0..777u32).map(|i| (i * 13 + 1) as u8).collect();
        for stores in [Stores::Temporal, Stores::NonTemporal] {
            let mut dst = vec![0u8; 2048];
            for (off, len) in [(0usize, 777usize), (1001, 63), (1300, 1), (1500, 500)] {
                // SAFETY: [off, off + len) is inside dst; data is another buffer.
                unsafe { copy::store(dst.as_mut_ptr().add(off), &data[..len], stores, true) };
                copy::sfence();
                assert_eq!(
                    &dst[off..off + len],
                    &data[..len],
                    "{stores:?} at {off}+{len}"
                );
            }
        }
    }

    #[test]
    fn past_the_end_is_einval_and_a_tmp_file_is_not_dax() {
        let (_d, f) = file_of(8192);
        let mut m = Mapping::map_file(&f, 8192, true).unwrap();
        assert_eq!(
            m.write(8000, &[0u8; 193], Stores::Temporal, false),
            -(libc::EINVAL as i64)
        );
        assert_eq!(m.read(u64::MAX, &mut [0u8; 1]), -(libc::EINVAL as i64));
        // MAP_SYNC needs a DAX file system: a temp dir has none.
        assert_eq!(m.persistence(), Persistence::Msync);
    }
}
