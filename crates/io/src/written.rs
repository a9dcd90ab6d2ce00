//! Paths ssdready writes that are not a job's target, opened and read:
//! the check before writing one is `ssdready_written::vet`.
//!
//! [`open_waiting`] opens a FIFO or device without hanging: a FIFO with no
//! peer is polled, and the wait ends within [`POLL_MS`] of a stop request
//! (Ctrl-C, SIGTERM, SIGHUP). [`read_capped`] reads a user-named input up
//! to a number of bytes actually read, not the size `stat` reports (procfs
//! and devices report 0, or nothing at all for an endless input).

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// How often a blocking wait looks at the stop flag, in ms.
pub const POLL_MS: i32 = 50;

/// Open `path` (a file, FIFO or character device) for reading or writing
/// without hanging on a FIFO that has no peer: the open is non-blocking
/// and, for a FIFO, retried every [`POLL_MS`] until a peer comes or `stop`
/// is set (then `Interrupted`). The file returned is blocking again.
pub fn open_waiting(path: &Path, write: bool, stop: &AtomicBool) -> std::io::Result<File> {
    let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    loop {
        let mut o = OpenOptions::new();
        if write {
            o.write(true);
        } else {
            o.read(true);
        }
        match o.custom_flags(libc::O_NONBLOCK).open(path) {
            Ok(f) => {
                if fifo && !write {
                    // A reader opens at once even without a writer: wait
                    // for data or a writer's close with poll.
                    wait_readable(&f, stop)?;
                }
                set_blocking(&f)?;
                return Ok(f);
            }
            // A FIFO opened for writing with no reader: ENXIO until one comes.
            Err(e) if fifo && write && e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        if stop.load(Ordering::Relaxed) {
            return Err(interrupted(path));
        }
        std::thread::sleep(std::time::Duration::from_millis(POLL_MS as u64));
    }
}

fn interrupted(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        format!(
            "stopped while waiting for {} (a FIFO with nothing on its other end)",
            path.display()
        ),
    )
}

/// Wait until the FIFO `f` has data or its writer came and went.
fn wait_readable(f: &File, stop: &AtomicBool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        let mut p = libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the duration of the call.
        let rc = unsafe { libc::poll(&mut p, 1, POLL_MS) };
        if rc > 0 && (p.revents & libc::POLLIN) != 0 {
            return Ok(());
        }
        if stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "stopped while waiting for a FIFO's writer",
            ));
        }
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        // POLLHUP with no writer yet (none has opened it): wait on.
        if rc > 0 && (p.revents & libc::POLLHUP) != 0 {
            std::thread::sleep(std::time::Duration::from_millis(POLL_MS as u64));
        }
    }
}

/// Clear `O_NONBLOCK` on `f` (opened so to not wait for a FIFO's peer).
pub(crate) fn set_blocking(f: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above; only O_NONBLOCK changes.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether standard output is a pipe whose reader has gone away (`| true`,
/// `| head -1` after its line): the next write would fail with EPIPE. A
/// file, a terminal or a pipe still read answers false.
pub fn stdout_reader_gone() -> bool {
    let is_pipe = std::fs::metadata("/proc/self/fd/1").is_ok_and(|m| m.file_type().is_fifo());
    if !is_pipe {
        return false;
    }
    let mut p = libc::pollfd {
        fd: 1,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the call; a zero timeout never blocks.
    let rc = unsafe { libc::poll(&mut p, 1, 0) };
    rc > 0 && (p.revents & libc::POLLERR) != 0
}

/// The soft limit on open files (`ulimit -n`), if it can be read.
pub fn open_files_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return None;
    }
    (r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// Read all of `r` up to `limit` bytes actually read; more is an error
/// naming `what` and the limit.
pub fn read_capped(mut r: impl Read, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    // Whole 64 KiB reads (some procfs files refuse odd sizes), stopping
    // at the first past the limit.
    const CHUNK: usize = 64 << 10;
    let mut out = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    while out.len() as u64 <= limit {
        match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if out.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{what} holds more than {limit} bytes (read stopped there)"),
        ));
    }
    Ok(out)
}

/// Read the file `path` whole, up to `limit` bytes actually read (see
/// [`read_capped`]); a FIFO is waited for as [`open_waiting`] does.
pub fn read_file_capped(path: &Path, limit: u64, stop: &AtomicBool) -> std::io::Result<Vec<u8>> {
    let f = open_waiting(path, false, stop)?;
    read_capped(f, limit, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_cap_by_bytes_read() {
        let zero = File::open("/dev/zero").unwrap();
        let e = read_capped(zero, 1 << 16, "/dev/zero").unwrap_err();
        assert!(e.to_string().contains("more than 65536 bytes"), "{e}");
        assert_eq!(read_capped(&b"abc"[..], 3, "x").unwrap(), b"abc");
    }

    #[test]
    fn a_fifo_wait_ends_on_the_stop_flag() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fifo");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for write in [false, true] {
            let stop = std::sync::Arc::new(AtomicBool::new(false));
            let s = stop.clone();
            let t = std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                s.store(true, Ordering::Relaxed);
                std::time::Instant::now()
            });
            let e = open_waiting(&p, write, &stop).unwrap_err();
            let asked = t.join().unwrap();
            assert_eq!(e.kind(), std::io::ErrorKind::Interrupted);
            // The wait looks at the flag every few tens of ms; 2 s is a loaded
            // machine's margin for the waiting thread to be run again (a
            // wait that never looked would never end).
            assert!(asked.elapsed().as_millis() < 2000, "{:?}", asked.elapsed());
        }
    }
}
