//! Studies that share a device: one process at a time changes a device's
//! queue settings. Before the first change to a device (and, in a study,
//! before its first run) the process takes an advisory lock on that device:
//! `flock(LOCK_EX | LOCK_NB)` on `LOCK_DIR/DEVICE` (root's alone, mode
//! 0600 in a 0700 directory), which the kernel releases when the process
//! ends however it ends, a SIGKILL included. The file holds the holder's
//! pid, for the message another process gets ([`LockError::Busy`]).
//!
//! Why a whole device rather than one setting: settings of one device
//! interact. Switching the elevator resets `nr_requests` and the
//! scheduler's own tunables, so a second process that switched it while
//! the first held `nr_requests` at a trial value would read that value as
//! the original and "put back" the first process's trial.
//!
//! A lock is held per process, counted ([`DeviceLock`] guards): the study
//! takes it for its whole length and its [`Tuner`](crate::Tuner)s take
//! it again on the way, on the same open file (a second `flock` on a new
//! open file of the same process would refuse itself).

use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where the locks are kept.
pub const LOCK_DIR: &str = "/run/ssdready/locks";

/// Why a device's lock was not had.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("{}", busy_words(device, *pid))]
    Busy { device: String, pid: Option<u32> },
    /// The lock's file could not be made or opened.
    #[error("the lock of {device} ({path}): {why}")]
    Io {
        device: String,
        path: String,
        why: String,
    },
}

fn busy_words(device: &str, pid: Option<u32>) -> String {
    let who = match pid {
        Some(p) => format!("another ssdready (pid {p})"),
        None => "another ssdready".into(),
    };
    format!("{who} is changing {device}'s settings (it holds the device's lock)")
}

/// A lock held by this process: its file and how many guards hold it.
struct Held {
    path: PathBuf,
    /// Held open: closing it releases the lock.
    _lock: Flock<File>,
    count: usize,
}

static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<Held>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// This process's hold on one device's lock; the last guard dropped
/// releases it.
#[derive(Debug)]
pub struct DeviceLock {
    path: PathBuf,
    device: String,
}

impl DeviceLock {
    /// The device locked.
    pub fn device(&self) -> &str {
        &self.device
    }
}

impl Drop for DeviceLock {
    fn drop(&mut self) {
        let mut h = held();
        if let Some(i) = h.iter().position(|x| x.path == self.path) {
            h[i].count -= 1;
            if h[i].count == 0 {
                // Closing the file releases the lock; the file stays (removing
                // it would race with a process about to lock it).
                drop(h.remove(i));
            }
        }
    }
}

/// The lock of `device` (a whole-disk name, `loop0`), taken now or
/// already held by this process; never waits.
pub fn acquire(device: &str) -> Result<DeviceLock, LockError> {
    acquire_at(Path::new(LOCK_DIR), device)
}

/// [`acquire`] with the locks kept in `dir` (tests: a temporary directory).
pub fn acquire_at(dir: &Path, device: &str) -> Result<DeviceLock, LockError> {
    let path = dir.join(device);
    let io = |why: String| LockError::Io {
        device: device.into(),
        path: path.display().to_string(),
        why,
    };
    if !crate::sysfs::plain_name(device) {
        return Err(io("not a plain device name".into()));
    }
    let mut h = held();
    if let Some(x) = h.iter_mut().find(|x| x.path == path) {
        x.count += 1;
        return Ok(DeviceLock {
            path,
            device: device.into(),
        });
    }
    crate::store::ensure_dir(dir).map_err(io)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(crate::store::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| io(e.to_string()))?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(l) => l,
        Err((mut f, nix::errno::Errno::EWOULDBLOCK)) => {
            return Err(LockError::Busy {
                device: device.into(),
                pid: holder(&mut f),
            })
        }
        Err((_, e)) => return Err(io(e.to_string())),
    };
    // Who holds it, for the message of the next one to try.
    let _ = lock
        .set_len(0)
        .and_then(|_| lock.rewind())
        .and_then(|_| writeln!(lock, "{}", std::process::id()));
    h.push(Held {
        path: path.clone(),
        _lock: lock,
        count: 1,
    });
    Ok(DeviceLock {
        path,
        device: device.into(),
    })
}

/// The pid a lock's file names.
fn holder(f: &mut File) -> Option<u32> {
    let mut s = String::new();
    f.take(32).read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}

/// Whether this process holds the lock of `device` in `dir`.
pub fn holds_at(dir: &Path, device: &str) -> bool {
    let path = dir.join(device);
    held().iter().any(|x| x.path == path)
}

/// Whether this process holds a lock of `device`, in whichever lock
/// directory ([`LOCK_DIR`], or a test's).
pub fn holds(device: &str) -> bool {
    held()
        .iter()
        .any(|x| x.path.file_name().is_some_and(|n| n == device))
}

/// The locks of every device in `devices`, or the first refusal (the
/// locks taken before it are released).
pub fn acquire_all_at(dir: &Path, devices: &[String]) -> Result<Vec<DeviceLock>, LockError> {
    devices.iter().map(|d| acquire_at(dir, d)).collect()
}

/// [`acquire_all_at`] in [`LOCK_DIR`].
pub fn acquire_all(devices: &[String]) -> Result<Vec<DeviceLock>, LockError> {
    acquire_all_at(Path::new(LOCK_DIR), devices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_device_locked_by_another_process_is_refused_with_its_pid() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("locks");
        crate::store::ensure_dir(&dir).unwrap();
        // Another process: flock(1) holds the lock while it sleeps.
        let path = dir.join("loop7");
        std::fs::write(&path, "4242\n").unwrap();
        let mut child = std::process::Command::new("flock")
            .arg("-x")
            .arg(&path)
            .args(["sh", "-c"])
            .arg(format!("echo 4242 >{}; exec sleep 30", path.display()))
            .process_group(0)
            .spawn()
            .expect("flock(1) from util-linux");
        // Wait until it holds the lock and has said so.
        let mut refused = None;
        for _ in 0..500 {
            match acquire_at(&dir, "loop7") {
                Err(
                    e @ LockError::Busy {
                        pid: Some(4242), ..
                    },
                ) => {
                    refused = Some(e);
                    break;
                }
                Ok(l) => drop(l),
                Err(LockError::Busy { .. }) => {}
                Err(e) => panic!("{e}"),
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // The whole group: flock(1) and the shell it runs hold the lock.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status();
        let _ = child.wait();
        let e = refused.expect("the other process's lock was never seen");
        assert!(e.to_string().contains("pid 4242"), "{e}");
        // Its end released the lock: this process takes it. The sleeping
        // child holds it until the kernel has torn it down, which can come
        // a moment after flock(1) itself was reaped.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let l = loop {
            match acquire_at(&dir, "loop7") {
                Ok(l) => break l,
                Err(LockError::Busy { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                Err(e) => panic!("the lock was not released when its holder ended: {e}"),
            }
        };
        assert!(holds_at(&dir, "loop7"));
        let pid: u32 = std::fs::read_to_string(&path)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(pid, std::process::id());
        drop(l);
        assert!(!holds_at(&dir, "loop7"));
    }

    #[test]
    fn the_lock_is_counted_within_a_process_and_released_with_the_last_guard() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("locks");
        let a = acquire_at(&dir, "sdz").unwrap();
        let b = acquire_at(&dir, "sdz").unwrap();
        drop(a);
        assert!(holds_at(&dir, "sdz") && holds("sdz"));
        drop(b);
        assert!(!holds_at(&dir, "sdz") && !holds("sdz"));
        assert!(acquire_at(&dir, "../etc").is_err());
    }
}
