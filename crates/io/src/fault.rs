//! Faults on file mappings. A file that shrinks under a mapping (another
//! program truncates it) makes an access past its new end raise SIGBUS,
//! whose default action kills the process with no result and no message.
//!
//! [`copy_guarded`] arms a guard on this thread for the mapped range it
//! copies to or from. The SIGBUS handler, for a fault inside an armed
//! range, maps a private zero page over the faulting page (so the copy
//! completes harmlessly: the mapping is then dropped by the caller) and
//! records the address; the caller fails the I/O with the offset. A fault
//! anywhere else restores the previous action and returns, so the fault
//! repeats and ends the process as it would have.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

thread_local! {
    /// The armed range `[lo, hi)` of this thread (0, 0: none).
    static ARMED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    /// The first faulting address in the armed range (0: none).
    static FAULT: Cell<usize> = const { Cell::new(0) };
}

static INSTALL: Once = Once::new();
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// The action SIGBUS had before (a `libc::sigaction`, boxed and leaked).
static OLD: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    // Const-initialised thread locals without destructors: plain TLS
    // reads, safe in a signal handler.
    let (lo, hi) = ARMED.with(Cell::get);
    if lo != 0 && (lo..hi).contains(&addr) {
        let page = PAGE.load(Ordering::Relaxed);
        let at = addr & !(page - 1);
        // SAFETY: replaces one page of the armed file mapping, which the
        // caller drops after the copy; mmap is a plain system call.
        let p = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            if FAULT.with(Cell::get) == 0 {
                FAULT.with(|f| f.set(addr));
            }
            return;
        }
    }
    let old = OLD.load(Ordering::Relaxed) as *const libc::sigaction;
    // SAFETY: sigaction is async-signal-safe; `old` is the leaked action
    // saved at install (or null: then the default action).
    unsafe {
        if old.is_null() {
            libc::signal(libc::SIGBUS, libc::SIG_DFL);
        } else {
            libc::sigaction(libc::SIGBUS, old, std::ptr::null_mut());
        }
    }
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: zeroed sigaction structs are valid; the handler has the
        // SA_SIGINFO signature; the old action is kept for good (leaked).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            let old: &'static mut libc::sigaction = Box::leak(Box::new(std::mem::zeroed()));
            if libc::sigaction(libc::SIGBUS, &sa, old) == 0 {
                OLD.store(old as *mut libc::sigaction as usize, Ordering::Relaxed);
            }
        }
    });
}

/// Copy `len` bytes from `src` to `dst`, one of which is the mapped range
/// starting at `mapped`: Ok, or the offset (from `mapped`) of the first
/// byte whose page faulted (the file no longer reaches it).
///
/// # Safety
/// `src` and `dst` must be valid for `len` bytes and not overlap, and
/// `mapped` must be one of them, inside a file mapping the caller drops
/// when an error is returned (a faulting page has been replaced).
pub unsafe fn copy_guarded(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    mapped: *const u8,
) -> Result<(), usize> {
    install();
    let lo = mapped as usize;
    ARMED.with(|a| a.set((lo, lo + len)));
    FAULT.with(|f| f.set(0));
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
    // The copy must happen here, under the guard, even where the compiler
    // sees no later use of `dst` (it would otherwise drop or move it).
    std::hint::black_box(dst);
    ARMED.with(|a| a.set((0, 0)));
    match FAULT.with(|f| f.replace(0)) {
        0 => Ok(()),
        at => Err(at - lo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_file_shrunk_under_its_mapping_fails_the_copy_with_the_offset() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let page = PAGE.load(Ordering::Relaxed).max(4096);
        std::fs::write(&p, vec![7u8; 4 * page]).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        // SAFETY: a fresh shared mapping of our file, unmapped below.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        } as *mut u8;
        assert_ne!(m as *mut libc::c_void, libc::MAP_FAILED);
        f.set_len(page as u64).unwrap();
        let mut buf = vec![0u8; 2 * page];
        // SAFETY: both ranges are valid for 2 pages; m is the mapping.
        let first = unsafe { copy_guarded(m, buf.as_mut_ptr(), page, m) };
        assert_eq!(first, Ok(()));
        assert!(buf[..page].iter().all(|&b| b == 7));
        // SAFETY: as above, the second and third pages (now past the end).
        let r = unsafe { copy_guarded(m.add(page), buf.as_mut_ptr(), 2 * page, m.add(page)) };
        assert_eq!(r, Err(0));
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(m.cast(), 4 * page) };
    }
}
