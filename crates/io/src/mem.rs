//! Where a job's I/O buffers live (fio's `mem`/`iomem`, `iomem_align`,
//! `hugepage-size`) and the memory a job pins (`lockmem`), as fio's
//! memory.c: the heap, System V shared memory (`shm`, `shmhuge`), or a
//! mapping (`mmap`, `mmaphuge`, `mmapshared`), anonymous or of a file
//! (`mmap:FILE`; each buffer maps its own stretch of the file, which is
//! removed afterwards unless it existed before, as fio).
//!
//! Huge pages must be reserved beforehand (`/proc/sys/vm/nr_hugepages`);
//! without them the allocation fails and the error says what is missing.

use crate::engine::error::EngineError;
use ssdready_core::spec_run::{MemKind, MemSpec};
use std::os::fd::AsRawFd;

/// The system's page size (4096 if it cannot be read).
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf takes a plain integer and has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// A fresh private anonymous read-write mapping of `len` bytes, with
/// `extra` mmap flags (`MAP_NORESERVE`, `MAP_POPULATE`, or 0). The caller
/// unmaps it, once.
pub(crate) fn map_anon(len: usize, extra: libc::c_int) -> std::io::Result<*mut u8> {
    // SAFETY: a fresh private anonymous mapping; no pointer is passed in.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

/// Memory obtained from the kernel rather than the heap.
pub(crate) enum Mapped {
    /// `mmap`: the mapping (address, length), and the file it maps when
    /// this buffer created it (removed with the buffer, as fio).
    Map {
        addr: *mut u8,
        len: usize,
        created: Option<String>,
    },
    /// `shmat`: the attached segment.
    Shm { addr: *mut u8 },
}

impl Mapped {
    /// `len` bytes (already rounded as the kind needs) of memory `mem`;
    /// `index` is the buffer's place among the job's (its stretch of a
    /// mapped file).
    pub(crate) fn new(mem: &MemSpec, len: usize, index: usize) -> Result<Mapped, EngineError> {
        match mem.kind {
            MemKind::Malloc => unreachable!("the heap is not mapped"),
            MemKind::Shm | MemKind::ShmHuge => shm(mem, len),
            _ => map(mem, len, index),
        }
    }

    pub(crate) fn addr(&self) -> *mut u8 {
        match self {
            Mapped::Map { addr, .. } | Mapped::Shm { addr } => *addr,
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        match *self {
            // SAFETY: the mapping was made by mmap with this length and is
            // unmapped once, here.
            Mapped::Map { addr, len, .. } => unsafe {
                libc::munmap(addr.cast(), len);
            },
            // SAFETY: the segment was attached by shmat at this address and
            // is detached once, here.
            Mapped::Shm { addr } => unsafe {
                libc::shmdt(addr.cast());
            },
        }
        if let Mapped::Map {
            created: Some(path),
            ..
        } = self
        {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What is missing when huge pages of `mem`'s size cannot be had.
fn huge_pages_missing(mem: &MemSpec) -> String {
    let kb = mem.huge_page() / 1024;
    let dir = format!("/sys/kernel/mm/hugepages/hugepages-{kb}kB");
    match std::fs::read_to_string(format!("{dir}/free_hugepages")) {
        Ok(free) => format!(
            "mem={}: no free huge pages of {kb} KiB ({dir}/free_hugepages is {}; reserve some, \
             e.g. echo 64 > /proc/sys/vm/nr_hugepages)",
            mem.kind.name(),
            free.trim()
        ),
        Err(_) => format!(
            "mem={}: this kernel has no huge pages of {kb} KiB ({dir} is missing; set hugepage-size \
             to a size listed in /sys/kernel/mm/hugepages)",
            mem.kind.name()
        ),
    }
}

fn sys(what: String) -> EngineError {
    EngineError::Sys {
        what,
        source: std::io::Error::last_os_error(),
    }
}

fn shm(mem: &MemSpec, len: usize) -> Result<Mapped, EngineError> {
    let mut flags = libc::IPC_CREAT | 0o600;
    if mem.kind.huge() {
        flags |= libc::SHM_HUGETLB;
    }
    // SAFETY: shmget takes no pointers.
    let id = unsafe { libc::shmget(libc::IPC_PRIVATE, len, flags) };
    if id < 0 {
        let e = std::io::Error::last_os_error();
        if mem.kind.huge()
            && matches!(
                e.raw_os_error(),
                Some(libc::ENOMEM | libc::EINVAL | libc::EPERM)
            )
        {
            return Err(EngineError::Unsupported(huge_pages_missing(mem)));
        }
        return Err(EngineError::Sys {
            what: format!(
                "shmget of {len} bytes (mem={}; see /proc/sys/kernel/shmmax)",
                mem.kind.name()
            ),
            source: e,
        });
    }
    // SAFETY: `id` is a segment just created; a null address lets the
    // kernel choose where it goes.
    let addr = unsafe { libc::shmat(id, std::ptr::null(), 0) };
    // SAFETY: marking the segment for removal takes no buffer; it is freed
    // once detached (in Drop), so none is left behind.
    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    if addr as isize == -1 {
        return Err(sys(format!("shmat (mem={})", mem.kind.name())));
    }
    Ok(Mapped::Shm { addr: addr.cast() })
}

fn map(mem: &MemSpec, len: usize, index: usize) -> Result<Mapped, EngineError> {
    // fio: a file is mapped shared for mmaphuge (hugetlbfs) and mmapshared.
    let shared = mem.kind == MemKind::MmapShared || mem.kind.huge() && mem.file.is_some();
    let mut flags = if shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    let created = match &mem.file {
        Some(path) if index == 0 && !std::path::Path::new(path).exists() => Some(path.clone()),
        _ => None,
    };
    let file = match &mem.file {
        Some(path) => Some(open_backing(path, len, index)?),
        None => {
            flags |= libc::MAP_ANONYMOUS;
            None
        }
    };
    if mem.kind.huge() && file.is_none() {
        flags |=
            libc::MAP_HUGETLB | (mem.huge_page().trailing_zeros() as i32) << libc::MAP_HUGE_SHIFT;
    }
    let fd = file.as_ref().map_or(-1, |f| f.as_raw_fd());
    let offset = (index * len) as libc::off_t;
    // SAFETY: a fresh mapping (null hint) of `len` bytes; `fd` is open (or
    // -1 for an anonymous mapping) for the duration of the call.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            offset,
        )
    };
    if addr == libc::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        if mem.kind.huge() && matches!(e.raw_os_error(), Some(libc::ENOMEM | libc::EINVAL)) {
            return Err(EngineError::Unsupported(huge_pages_missing(mem)));
        }
        return Err(EngineError::Sys {
            what: format!("mmap of {len} bytes (mem={})", mem.kind.name()),
            source: e,
        });
    }
    Ok(Mapped::Map {
        addr: addr.cast(),
        len,
        created,
    })
}

/// The file of `mmap:FILE`, long enough for buffer `index` of `len` bytes.
fn open_backing(path: &str, len: usize, index: usize) -> Result<std::fs::File, EngineError> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| EngineError::Sys {
            what: format!("opening the buffer file {path} (mem=mmap:{path})"),
            source: e,
        })?;
    let need = ((index + 1) * len) as u64;
    let have = f.metadata().map(|m| m.len()).unwrap_or(0);
    if have < need {
        f.set_len(need).map_err(|e| EngineError::Sys {
            what: format!("sizing the buffer file {path}"),
            source: e,
        })?;
    }
    Ok(f)
}

/// Memory pinned with mlock for as long as it is held (`lockmem`).
pub struct LockedMemory {
    addr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone and never read.
unsafe impl Send for LockedMemory {}
// SAFETY: as above: nothing is ever read or written through it.
unsafe impl Sync for LockedMemory {}

impl LockedMemory {
    /// Pin `len` bytes; the error names the limit in the way.
    pub fn pin(len: u64) -> Result<LockedMemory, EngineError> {
        let len = len as usize;
        let Ok(addr) = map_anon(len, 0) else {
            return Err(sys(format!("lockmem: mapping {len} bytes")));
        };
        let addr = addr as *mut libc::c_void;
        // SAFETY: `addr` is the mapping of `len` bytes just made.
        if unsafe { libc::mlock(addr, len) } < 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: unmapping the mapping just made, once.
            unsafe { libc::munmap(addr, len) };
            return Err(EngineError::Sys {
                what: format!(
                    "lockmem: mlock of {len} bytes (the memlock limit, ulimit -l, or CAP_IPC_LOCK)"
                ),
                source: e,
            });
        }
        Ok(LockedMemory {
            addr: addr.cast(),
            len,
        })
    }
}

impl Drop for LockedMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping made in pin(), unlocked and unmapped once.
        unsafe {
            libc::munlock(self.addr.cast(), self.len);
            libc::munmap(self.addr.cast(), self.len);
        }
    }
}

/// Set the calling thread's nice value (Linux keeps one per thread).
pub fn set_thread_nice(nice: i32) -> Result<(), EngineError> {
    // SAFETY: gettid takes no arguments.
    let tid = unsafe { libc::gettid() };
    // SAFETY: setpriority takes no pointers.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) } < 0 {
        return Err(sys(format!(
            "nice={nice}: setpriority (a negative nice needs CAP_SYS_NICE or RLIMIT_NICE)"
        )));
    }
    Ok(())
}
