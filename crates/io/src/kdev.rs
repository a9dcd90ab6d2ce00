//! Kernel plumbing for an emulated drive behind the block layer: the FUSE
//! device (`/dev/fuse`, its `FUSE_DEV_IOC_CLONE`), `mount(2)`/`umount2(2)`
//! of a FUSE file system, loop devices configured in one ioctl
//! (`LOOP_CONFIGURE`: backing file, logical block size, direct I/O) and
//! removed (`LOOP_CLR_FD`) — also bound from a short-lived child process
//! that holds the backing file instead of the caller — the FUSE control
//! file system (`fusectl`), a thread's timer slack and CPU time, and an
//! epoll instance with a timer of its own ([`Poller`]: a daemon's one
//! wait for its next request or completion). Each raw call is
//! behind a safe function; the structures are written by hand from
//! `include/uapi/linux/loop.h` and `fuse.h`.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// `FUSE_DEV_IOC_CLONE`: `_IOR(229, 0, uint32_t)`.
pub const FUSE_DEV_IOC_CLONE: u32 = (2 << 30) | (4 << 16) | (229 << 8);
/// `LOOP_SET_FD`, `LOOP_CLR_FD`, `LOOP_SET_DIRECT_IO`, `LOOP_SET_BLOCK_SIZE`,
/// `LOOP_CONFIGURE`, `LOOP_CTL_GET_FREE` from linux/loop.h.
pub const LOOP_CLR_FD: u32 = 0x4C01;
pub const LOOP_CONFIGURE: u32 = 0x4C0A;
pub const LOOP_CTL_GET_FREE: u32 = 0x4C82;
/// `LO_FLAGS_DIRECT_IO`.
pub const LO_FLAGS_DIRECT_IO: u32 = 16;
/// `LO_FLAGS_AUTOCLEAR`: the kernel unbinds the loop device when its
/// last opener closes it.
pub const LO_FLAGS_AUTOCLEAR: u32 = 4;

/// `struct loop_info64`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LoopInfo64 {
    pub lo_device: u64,
    pub lo_inode: u64,
    pub lo_rdevice: u64,
    pub lo_offset: u64,
    pub lo_sizelimit: u64,
    pub lo_number: u32,
    pub lo_encrypt_type: u32,
    pub lo_encrypt_key_size: u32,
    pub lo_flags: u32,
    pub lo_file_name: [u8; 64],
    pub lo_crypt_name: [u8; 64],
    pub lo_encrypt_key: [u8; 32],
    pub lo_init: [u64; 2],
}

/// `struct loop_config`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LoopConfig {
    pub fd: u32,
    pub block_size: u32,
    pub info: LoopInfo64,
    pub reserved: [u64; 8],
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn cpath(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

/// Open `/dev/fuse` read-write (close-on-exec).
pub fn open_fuse() -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open("/dev/fuse")
}

/// A second `/dev/fuse` file attached to `session`'s connection
/// (`FUSE_DEV_IOC_CLONE`): a thread reading it gets requests of its own.
pub fn clone_fuse(session: &File) -> io::Result<File> {
    let f = open_fuse()?;
    let mut fd: u32 = session.as_raw_fd() as u32;
    // SAFETY: FUSE_DEV_IOC_CLONE reads one u32 (the session's fd) through a
    // pointer to a live local.
    cvt(unsafe { libc::ioctl(f.as_raw_fd(), FUSE_DEV_IOC_CLONE as _, &mut fd) })?;
    Ok(f)
}

/// Mount a FUSE file system served through `dev` on directory `dir`
/// (root only): `fd=…,rootmode=40000,user_id=0,group_id=0`, named `source`.
pub fn mount_fuse(dev: &File, dir: &Path, source: &str) -> io::Result<()> {
    let opts = format!(
        "fd={},rootmode=40000,user_id=0,group_id=0,max_read=1048576",
        dev.as_raw_fd()
    );
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOATIME;
    mount(source, dir, "fuse", flags, Some(&opts))
}

/// mount(2) of a `fstype` file system named `source` on directory `dir`,
/// with its `data` options when given.
fn mount(
    source: &str,
    dir: &Path,
    fstype: &str,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let (src, target, fstype) = (CString::new(source)?, cpath(dir)?, CString::new(fstype)?);
    let data = data.map(CString::new).transpose()?;
    let data_ptr = data
        .as_ref()
        .map_or(std::ptr::null(), |d| d.as_ptr().cast());
    // SAFETY: every pointer is a NUL-terminated string that outlives the
    // call, or null for no data.
    cvt(unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            flags,
            data_ptr,
        )
    })?;
    Ok(())
}

/// Unmount `dir`; `lazy` detaches it now even when it is busy (`MNT_DETACH`).
pub fn umount(dir: &Path, lazy: bool) -> io::Result<()> {
    let target = cpath(dir)?;
    let flags = if lazy { libc::MNT_DETACH } else { 0 };
    // SAFETY: a NUL-terminated path that outlives the call.
    cvt(unsafe { libc::umount2(target.as_ptr(), flags) })?;
    Ok(())
}

/// A free loop device's number (`LOOP_CTL_GET_FREE`, which creates one
/// when none is free).
pub fn loop_get_free() -> io::Result<u32> {
    let ctl = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open("/dev/loop-control")?;
    // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a number.
    let n = cvt(unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_GET_FREE as _) })?;
    Ok(n as u32)
}

/// Bind `backing` to the free loop device `/dev/loopN` with logical
/// blocks of `block_size` bytes, with direct I/O when `direct`
/// (`LOOP_CONFIGURE`). Returns the opened loop device.
pub fn loop_configure(n: u32, backing: &File, block_size: u32, direct: bool) -> io::Result<File> {
    let flags = if direct { LO_FLAGS_DIRECT_IO } else { 0 };
    loop_configure_flags(n, backing, block_size, flags)
}

/// [`loop_configure`] with `LO_FLAGS_*` `flags` (with
/// [`LO_FLAGS_AUTOCLEAR`], keep the returned file open for as long as the
/// device is needed: closing the last opener unbinds it, however the
/// process ends).
pub fn loop_configure_flags(
    n: u32,
    backing: &File,
    block_size: u32,
    flags: u32,
) -> io::Result<File> {
    let dev = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(format!("/dev/loop{n}"))?;
    // SAFETY: all-zero bytes are a valid LoopConfig (integers and arrays).
    let mut cfg: LoopConfig = unsafe { std::mem::zeroed() };
    cfg.fd = backing.as_raw_fd() as u32;
    cfg.block_size = block_size;
    cfg.info.lo_flags = flags;
    // SAFETY: LOOP_CONFIGURE reads one struct loop_config, which LoopConfig
    // matches field for field (size checked in the tests), from a local.
    cvt(unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CONFIGURE as _, &cfg) })?;
    Ok(dev)
}

/// The step of [`loop_configure_elsewhere`] that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindStep {
    /// Opening `/dev/loopN`, or the pipe and the process that bind it.
    Setup,
    /// Opening the backing file (in the short-lived process).
    Backing,
    /// `LOOP_CONFIGURE` itself.
    Configure,
}

/// Bind the file at `backing` (opened read-write with `O_DIRECT`) to the
/// free loop device `/dev/loopN`, as [`loop_configure_flags`] does, but
/// with the file opened in a short-lived child process that exits once
/// the loop device holds it: this process never has the file open. A FUSE
/// daemon binds its own mount's file this way, since every close of a file
/// on its mount by itself (its exit's included) would wait for an answer
/// only it can give. The child closes every other descriptor first (the
/// daemon's `/dev/fuse` ones above all, so that the daemon's end still
/// ends the connection) and dies with the thread that started it.
pub fn loop_configure_elsewhere(
    n: u32,
    backing: &Path,
    block_size: u32,
    flags: u32,
) -> Result<(), (BindStep, io::Error)> {
    let setup = |e| (BindStep::Setup, e);
    let path = cpath(backing).map_err(|e| (BindStep::Backing, e))?;
    let dev = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(format!("/dev/loop{n}"))
        .map_err(setup)?;
    // SAFETY: all-zero bytes are a valid LoopConfig (integers and arrays).
    let mut cfg: LoopConfig = unsafe { std::mem::zeroed() };
    cfg.block_size = block_size;
    cfg.info.lo_flags = flags;
    let mut ends = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into a live local array.
    cvt(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) }).map_err(setup)?;
    // SAFETY: each end is a descriptor just made and owned from here on.
    let (rd, wr) = unsafe {
        use std::os::fd::FromRawFd;
        (File::from_raw_fd(ends[0]), File::from_raw_fd(ends[1]))
    };
    // SAFETY: the child runs bind_in_child only, which makes raw system
    // calls on values prepared above (no allocation, no lock) and exits.
    let pid = cvt(unsafe { libc::fork() }).map_err(setup)?;
    if pid == 0 {
        bind_in_child(&path, dev.as_raw_fd(), wr.as_raw_fd(), cfg);
    }
    drop(wr);
    let mut said = [0u8; 5];
    let got = io::Read::read(&mut &rd, &mut said).unwrap_or(0);
    let mut status = 0;
    // SAFETY: waits for the child made above; `status` is a live local.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    if got == 5 {
        let errno = i32::from_le_bytes([said[1], said[2], said[3], said[4]]);
        let step = match said[0] {
            1 => BindStep::Backing,
            _ => BindStep::Configure,
        };
        return Err((step, io::Error::from_raw_os_error(errno)));
    }
    match libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        true => Ok(()),
        false => Err(setup(io::Error::other(
            "the process binding the loop device ended without binding it",
        ))),
    }
}

/// The child of [`loop_configure_elsewhere`]: open the file, bind it,
/// exit; a failure's step and errno are written to `wr` first.
fn bind_in_child(path: &CString, dev: libc::c_int, wr: libc::c_int, mut cfg: LoopConfig) -> ! {
    let (lo, hi) = (dev.min(wr), dev.max(wr));
    // SAFETY: raw system calls on integers and on `path`, a NUL-terminated
    // string made before the fork; closing ranges of descriptors that no
    // Rust object of this process will use again (it only exits).
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        for (first, last) in [(3, lo - 1), (lo + 1, hi - 1), (hi + 1, libc::c_int::MAX)] {
            if first <= last {
                libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0u32);
            }
        }
        let fd = libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_DIRECT | libc::O_CLOEXEC,
        );
        if fd < 0 {
            child_failed(wr, 1);
        }
        cfg.fd = fd as u32;
        if libc::ioctl(dev, LOOP_CONFIGURE as _, &cfg) < 0 {
            child_failed(wr, 2);
        }
        libc::_exit(0)
    }
}

/// The child's failure: `step` and errno written to `wr`, then its end.
fn child_failed(wr: libc::c_int, step: u8) -> ! {
    let e = io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO);
    let mut b = [step, 0, 0, 0, 0];
    b[1..].copy_from_slice(&e.to_le_bytes());
    // SAFETY: a write of a live local array, then the child's end.
    unsafe {
        libc::write(wr, b.as_ptr().cast(), b.len());
        libc::_exit(1)
    }
}

/// Mount the FUSE control file system (`fusectl`: one directory per
/// connection, whose `abort` ends it) on directory `dir` (root only).
pub fn mount_fusectl(dir: &Path) -> io::Result<()> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount("fusectl", dir, "fusectl", flags, None)
}

/// Unbind loop device `path` from its backing file (`LOOP_CLR_FD`; the
/// kernel finishes it once the last opener closes it).
pub fn loop_clear(path: &Path) -> io::Result<()> {
    let dev = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)?;
    // SAFETY: LOOP_CLR_FD takes no argument.
    cvt(unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CLR_FD as _, 0) })?;
    Ok(())
}

/// Set the calling thread's timer slack to `ns` (`PR_SET_TIMERSLACK`):
/// with the default 50 µs a sleep may end that much late.
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an integer; nothing is pointed to.
    cvt(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// Run the calling thread under `SCHED_FIFO` at priority `prio` (root):
/// it then runs as soon as it is woken, whatever else the CPUs run.
pub fn set_fifo(prio: i32) -> io::Result<()> {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: pid 0 is the calling thread; `p` is a live local read once.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) })?;
    Ok(())
}

/// The calling thread's kernel id (for its `/proc/self/task/TID/schedstat`).
pub fn thread_id() -> u32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// The calling thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`), ns.
pub fn thread_cpu_ns() -> u64 {
    crate::clock::posix_clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether the process runs with effective user id 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Ask the kernel to send this process `sig` when `parent` (the process
/// that started it) ends, however it ends (SIGKILL included); false when
/// the parent is already gone (this process was re-parented) or the kernel
/// refused. A daemon started by another command uses it so that it never
/// outlives that command.
pub fn die_with_parent(parent: u32, sig: i32) -> bool {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; nothing is pointed to.
    let set = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) } == 0;
    // SAFETY: getppid has no arguments and cannot fail.
    // Checked after the request: a parent that ended before it is seen here.
    set && unsafe { libc::getppid() } as u32 == parent
}

/// Send signal `sig` to process `pid`; false when it does not exist (or
/// may not be signalled).
pub fn signal(pid: u32, sig: i32) -> bool {
    // SAFETY: kill takes two integers; nothing is pointed to.
    unsafe { libc::kill(pid as libc::pid_t, sig) == 0 }
}

/// Make `f`'s reads and writes non-blocking (`O_NONBLOCK`): a read of
/// `/dev/fuse` with no request queued then fails with `EAGAIN` at once.
pub fn set_nonblocking(f: &File) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on a descriptor `f` keeps open; integers only.
    let flags = cvt(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) })?;
    // SAFETY: as above.
    cvt(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
    Ok(())
}

/// The token [`Poller::wait`] reports for the poller's own timer.
pub const TIMER_TOKEN: u64 = u64::MAX;

/// An epoll instance with a one-shot timer of its own (a `timerfd` on
/// `CLOCK_MONOTONIC`, edge-triggered, reported as [`TIMER_TOKEN`]): a
/// daemon sleeps until its next deadline or its next request, whichever
/// comes first, in one `epoll_wait`, and re-arms the timer only when its
/// next deadline changes — a request's arrival does not touch it. With the
/// thread's timer slack at 1 ns ([`set_timer_slack`]) the timer is one
/// high-resolution timer.
pub struct Poller {
    fd: std::os::fd::OwnedFd,
    timer: std::os::fd::OwnedFd,
    events: Vec<libc::epoll_event>,
    ready: Vec<(u64, u32)>,
}

impl Poller {
    /// A new epoll instance reporting at most `max` events a wait.
    pub fn new(max: usize) -> io::Result<Poller> {
        use std::os::fd::FromRawFd;
        // SAFETY: epoll_create1 takes a flag; the descriptor it returns is
        // new and owned here alone.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just returned by the kernel and is not owned elsewhere.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let flags = libc::TFD_CLOEXEC | libc::TFD_NONBLOCK;
        // SAFETY: timerfd_create takes a clock id and flags; the descriptor
        // it returns is new and owned here alone.
        let t = cvt(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, flags) })?;
        // SAFETY: `t` was just returned by the kernel and is not owned elsewhere.
        let timer = unsafe { std::os::fd::OwnedFd::from_raw_fd(t) };
        let p = Poller {
            fd,
            timer,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; max.max(2)],
            ready: Vec::with_capacity(max.max(2)),
        };
        p.ctl(
            p.timer.as_raw_fd(),
            TIMER_TOKEN,
            (libc::EPOLLIN | libc::EPOLLET) as u32,
        )?;
        Ok(p)
    }

    fn ctl(&self, fd: i32, token: u64, flags: u32) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: flags,
            u64: token,
        };
        // SAFETY: both descriptors are open; `ev` is a live local the
        // kernel reads once.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Watch `f` for input, reported with `token`; `exclusive`
    /// (`EPOLLEXCLUSIVE`): when several instances watch the same queue
    /// (clones of one FUSE connection), a request wakes one of them.
    pub fn add(&self, f: &impl AsRawFd, token: u64, exclusive: bool) -> io::Result<()> {
        let mut flags = libc::EPOLLIN as u32;
        if exclusive {
            flags |= libc::EPOLLEXCLUSIVE as u32;
        }
        self.ctl(f.as_raw_fd(), token, flags)
    }

    /// Arm the timer to fire `after_ns` from now (at least 1 ns), or
    /// disarm it (`None`); an earlier setting is replaced.
    pub fn arm(&self, after_ns: Option<u64>) -> io::Result<()> {
        let t = after_ns.map_or(0, |n| n.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (t / 1_000_000_000) as libc::time_t,
                tv_nsec: (t % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: the timer is open; `spec` is a live local read once; no
        // old value is asked for.
        cvt(unsafe {
            libc::timerfd_settime(self.timer.as_raw_fd(), 0, &spec, std::ptr::null_mut())
        })?;
        Ok(())
    }

    /// Wait until a watched descriptor is ready, the timer fired, or
    /// `timeout_ms` passed (`None`: no limit); the ready ones as (token,
    /// events). A signal's interruption returns no event.
    pub fn wait(&mut self, timeout_ms: Option<u32>) -> io::Result<&[(u64, u32)]> {
        let max = self.events.len() as libc::c_int;
        let ms = timeout_ms.map_or(-1, |t| t.min(i32::MAX as u32) as libc::c_int);
        // SAFETY: the pointer covers `max` writable events owned by self.
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), self.events.as_mut_ptr(), max, ms) };
        self.ready.clear();
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::Interrupted => Ok(&self.ready),
                _ => Err(e),
            };
        }
        for e in &self.events[..n as usize] {
            let (token, flags) = (e.u64, e.events);
            self.ready.push((token, flags));
        }
        Ok(&self.ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_structures_match_the_uapi() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        assert_eq!(std::mem::size_of::<LoopConfig>(), 304);
        // _IOR(229, 0, uint32_t) as the kernel computes it.
        assert_eq!(FUSE_DEV_IOC_CLONE, 0x8004_e500);
    }

    /// Whether this process has `path` open.
    fn holds(path: &Path) -> bool {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .any(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == path))
    }

    #[test]
    fn a_loop_device_bound_elsewhere_holds_the_file_and_the_caller_does_not() {
        if !is_root() || !Path::new("/dev/loop-control").exists() {
            eprintln!("skipped: binding a loop device needs root and /dev/loop-control");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("backing");
        std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
        let missing = dir.path().join("missing");
        let n = loop_get_free().unwrap();
        let e = loop_configure_elsewhere(n, &missing, 4096, 0).unwrap_err();
        assert_eq!(
            (e.0, e.1.raw_os_error()),
            (BindStep::Backing, Some(libc::ENOENT))
        );
        let mut bound = None;
        for _ in 0..20 {
            let n = loop_get_free().unwrap();
            match loop_configure_elsewhere(n, &file, 4096, 0) {
                Ok(()) => {
                    bound = Some(n);
                    break;
                }
                // Another process took it meanwhile.
                Err((BindStep::Configure, e)) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => panic!("binding loop{n}: {e:?}"),
            }
        }
        let n = bound.expect("a free loop device");
        let sys = format!("/sys/block/loop{n}/loop/backing_file");
        let backing = std::fs::read_to_string(&sys).unwrap_or_default();
        let held = holds(&file);
        loop_clear(Path::new(&format!("/dev/loop{n}"))).unwrap();
        assert_eq!(backing.trim(), file.to_str().unwrap());
        assert!(!held, "the caller holds the backing file itself");
    }

    #[test]
    fn a_poller_reports_input_and_its_timer() {
        let (r, mut w) = std::io::pipe().unwrap();
        let mut p = Poller::new(4).unwrap();
        p.add(&r, 7, false).unwrap();
        assert!(p.wait(Some(1)).unwrap().is_empty());
        let t0 = std::time::Instant::now();
        p.arm(Some(2_000_000)).unwrap();
        let ready = p.wait(Some(5_000)).unwrap().to_vec();
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].0, TIMER_TOKEN);
        assert!(t0.elapsed() >= std::time::Duration::from_millis(2));
        // Edge-triggered: the fired timer is not reported again.
        assert!(p.wait(Some(1)).unwrap().is_empty());
        p.arm(Some(50_000_000)).unwrap();
        p.arm(None).unwrap();
        std::io::Write::write_all(&mut w, b"x").unwrap();
        let ready = p.wait(Some(5_000)).unwrap();
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].0, 7);
        assert!(ready[0].1 & libc::EPOLLIN as u32 != 0);
    }
}
