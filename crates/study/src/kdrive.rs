//! The study's default target as root: the built-in drive behind the
//! kernel. `ssdready study` with no target starts `ssdready emu attach` as
//! a child process (its own process group, so that Ctrl-C reaches the
//! study, which stops it after the current run; and told to end with the
//! study, however the study ends), reads the block device's path from its
//! first line, studies that device — every layer from the system call to
//! the drive's transport on the path, the device's timing known from the
//! model — and stops it at the end, keeping the daemon's own figures
//! (device time, lateness, reply, its CPU) as a note.
//!
//! The daemon runs in its own process so that its threads' CPU is not
//! counted as the study's: the platform's CPU per I/O stays the platform's.

use std::io::{BufRead, BufReader, Read, Seek};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The built-in drive as the study attaches it.
pub const SPEC: &str = "nvme-tlc,size=1g";

/// How long the drive may take to appear.
const START_LIMIT: Duration = Duration::from_secs(20);

/// Why the kernel drive could not be started; one line naming what
/// failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("finding ssdready's own binary: {0}")]
    OwnBinary(std::io::Error),
    /// The daemon's log file.
    #[error("creating {}: {err}", .path.display())]
    Log {
        path: std::path::PathBuf,
        err: std::io::Error,
    },
    #[error("starting ssdready emu attach: {0}")]
    Spawn(std::io::Error),
    /// The daemon ended without a device (`why`: what it said).
    #[error("ssdready emu attach {spec} failed: {why}")]
    Failed { spec: String, why: String },
    /// A drive's record names a transport this build cannot attach over.
    #[error(
        "the drive's transport '{name}' is not one ssdready can attach over \
         (allowed: fuse+loop, fuse-uring+loop, ublk)"
    )]
    UnknownTransport { name: String },
    #[error("interrupted while attaching the emulated drive")]
    Interrupted,
    #[error("ssdready emu attach {spec} gave no device within {secs} s")]
    NoDevice { spec: String, secs: u64 },
}

/// Why a loop device over /dev/shm could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ShmLoopError {
    #[error("creating {path}: {err}")]
    Create { path: String, err: std::io::Error },
    #[error("binding a loop device to {path}: {err}")]
    Bind { path: String, err: std::io::Error },
}

/// A running `emu attach` child.
pub struct Drive {
    child: Option<Child>,
    /// The daemon's stderr (a file already unlinked).
    log: std::fs::File,
    /// The block device (`/dev/loopN`).
    pub device: String,
    /// The emulated drive it serves (`emu:nvme-tlc,size=1g`).
    pub spec: String,
    /// The study's reference beside it: a loop device over /dev/shm, the
    /// kernel's path without the drive's daemon, for the platform's own
    /// peak (None when it could not be made; the study says why).
    pub reference: Option<ShmLoop>,
    /// Why there is no reference, when there is none.
    pub no_reference: Option<String>,
}

/// The reference's size: reads only, of a sparse /dev/shm file.
pub const REFERENCE_BYTES: u64 = 1 << 30;

impl Drive {
    /// Make the reference device beside the drive, with the drive's
    /// logical block size.
    pub fn make_reference(&mut self, block: u32) {
        match ShmLoop::new(REFERENCE_BYTES, block) {
            Ok(l) => self.reference = Some(l),
            Err(e) => self.no_reference = Some(e.to_string()),
        }
    }
}

/// Why the kernel drive cannot be used here, or None when it can.
pub fn unavailable() -> Option<String> {
    if !ssdready_io::kdev::is_root() {
        return Some("root".into());
    }
    ssdready_emu::kernel::fuse_missing()
}

/// Start the drive; the error is one line naming what failed.
pub fn start(stop: &AtomicBool) -> Result<Drive, StartError> {
    start_spec(stop, SPEC, "auto")
}

/// The `emu attach --transport` value that serves a drive over the
/// transport its record names (`fuse+loop`, `fuse-uring+loop`, `ublk`);
/// None for a name this build does not know.
pub fn attach_transport(record: &str) -> Option<&'static str> {
    use ssdready_emu::kernel::daemon::{FUSE, FUSE_URING};
    match record {
        FUSE => Some("fuse"),
        FUSE_URING => Some("fuse-uring"),
        "ublk" => Some("ublk"),
        _ => None,
    }
}

/// The daemon's log: its messages go to a file of its own, not a pipe, so
/// that a study that dies does not take the daemon's stderr (and its
/// clean-up) with it. The file is unlinked at once; the study reads it
/// through the first handle, the daemon writes through the second.
fn daemon_log() -> Result<(std::fs::File, std::fs::File), StartError> {
    let log_path = std::path::Path::new(ssdready_emu::kernel::daemon::RUN_DIR)
        .join(format!("study-{}.log", std::process::id()));
    let log = std::fs::create_dir_all(ssdready_emu::kernel::daemon::RUN_DIR)
        .and_then(|_| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&log_path)
        })
        .map_err(|err| StartError::Log {
            path: log_path.clone(),
            err,
        })?;
    let _ = std::fs::remove_file(&log_path);
    let log_w = log.try_clone().map_err(|err| StartError::Log {
        path: log_path.clone(),
        err,
    })?;
    Ok((log, log_w))
}

/// Start the drive `spec` (a preset with its keys, as `emu attach` takes)
/// over `transport` (as `emu attach --transport` takes: `auto`, `fuse`,
/// `fuse-uring`, `ublk`).
pub fn start_spec(stop: &AtomicBool, spec: &str, transport: &str) -> Result<Drive, StartError> {
    let exe = std::env::current_exe().map_err(StartError::OwnBinary)?;
    let (log, log_w) = daemon_log()?;
    let mut child = Command::new(exe)
        .args(["emu", "attach", spec])
        .arg(format!("--transport={transport}"))
        .env(
            ssdready_emu::kernel::daemon::PARENT_ENV,
            std::process::id().to_string(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_w))
        .process_group(0)
        .spawn()
        .map_err(StartError::Spawn)?;
    let out = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let mut r = BufReader::new(out);
        let _ = r.read_line(&mut line);
        let _ = tx.send(line.trim().to_string());
        // Keep reading: the daemon detaches its drive when its standard
        // output's reader goes away.
        let _ = std::io::copy(&mut r, &mut std::io::sink());
    });
    let t0 = Instant::now();
    let mut drive = Drive {
        child: Some(child),
        log,
        device: String::new(),
        spec: format!("emu:{spec}"),
        reference: None,
        no_reference: None,
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(dev) if dev.starts_with("/dev/") => {
                drive.device = dev;
                return Ok(drive);
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                let why = drive.stop();
                return Err(StartError::Failed {
                    spec: spec.into(),
                    why,
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) if stop.load(Relaxed) => {
                drive.stop();
                return Err(StartError::Interrupted);
            }
            Err(mpsc::RecvTimeoutError::Timeout) if t0.elapsed() > START_LIMIT => {
                drive.stop();
                return Err(StartError::NoDevice {
                    spec: spec.into(),
                    secs: START_LIMIT.as_secs(),
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// The figures so far of the daemon serving `device` when it is an
/// emulated drive attached by `ssdready emu attach` (its stats file,
/// rewritten every half second).
pub fn transport_of(device: &str) -> Option<ssdready_measured::summary::Transport> {
    let r = ssdready_emu::kernel::daemon::record_of(device)?;
    let s = ssdready_emu::kernel::daemon::stats(&r.name)?;
    Some(crate::transport::of(r.transport, &s))
}

/// A loop device over a file in /dev/shm (the file unlinked once bound):
/// the kernel's path less FUSE and the daemon, to measure the transport
/// against. It is bound with autoclear and held open: dropping it, or the
/// process ending however it ends, unbinds it.
pub struct ShmLoop {
    /// `/dev/loopN`.
    pub device: String,
    index: u32,
    /// The device held open (its last close unbinds it).
    held: Option<std::fs::File>,
}

impl ShmLoop {
    /// A loop device of `bytes` over a new sparse /dev/shm file, with
    /// `block` -byte logical blocks.
    pub fn new(bytes: u64, block: u32) -> Result<ShmLoop, ShmLoopError> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = format!("/dev/shm/ssdready-transport-{}", std::process::id());
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|err| ShmLoopError::Create {
                path: path.clone(),
                err,
            })?;
        let bound = file.set_len(bytes).and_then(|_| {
            let mut last = std::io::Error::from_raw_os_error(libc::EBUSY);
            for _ in 0..20 {
                let n = ssdready_io::kdev::loop_get_free()?;
                let autoclear = ssdready_io::kdev::LO_FLAGS_AUTOCLEAR;
                match ssdready_io::kdev::loop_configure_flags(n, &file, block, autoclear) {
                    Ok(held) => return Ok((n, held)),
                    // Another process took it meanwhile.
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => last = e,
                    Err(e) => return Err(e),
                }
            }
            Err(last)
        });
        let _ = std::fs::remove_file(&path);
        let (index, held) = bound.map_err(|err| ShmLoopError::Bind { path, err })?;
        Ok(ShmLoop {
            device: format!("/dev/loop{index}"),
            index,
            held: Some(held),
        })
    }
}

impl Drop for ShmLoop {
    /// Close it (autoclear unbinds it then), unbind it should anything
    /// else still hold it, and wait until the kernel has.
    fn drop(&mut self) {
        drop(self.held.take());
        let _ = ssdready_io::kdev::loop_clear(std::path::Path::new(&self.device));
        ssdready_emu::kernel::wait_unbound(self.index);
    }
}

impl Drive {
    /// Stop the daemon (it removes its loop device and mount) and return
    /// its last line: the daemon's figures, or why it failed.
    pub fn stop(&mut self) -> String {
        let Some(mut child) = self.child.take() else {
            return String::new();
        };
        ssdready_io::kdev::signal(child.id(), libc::SIGTERM);
        let t0 = Instant::now();
        let exited = loop {
            match child.try_wait() {
                Ok(Some(_)) => break true,
                Ok(None) if t0.elapsed() < Duration::from_secs(15) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => break false,
            }
        };
        if !exited {
            let _ = child.kill();
            let _ = child.wait();
            return "its daemon did not stop within 15 s and was killed; \
                    `ssdready emu list` removes what it left"
                .into();
        }
        let mut err = String::new();
        let _ = self.log.seek(std::io::SeekFrom::Start(0));
        let _ = self.log.read_to_string(&mut err);
        err.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim_start_matches("ssdready: ")
            .to_string()
    }
}

impl Drop for Drive {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calibration's zero-time drive is attached over the transport
    /// the measured drive's record names, never `auto`.
    #[test]
    fn each_recorded_transport_is_attached_over_itself() {
        assert_eq!(attach_transport("fuse+loop"), Some("fuse"));
        assert_eq!(attach_transport("fuse-uring+loop"), Some("fuse-uring"));
        assert_eq!(attach_transport("ublk"), Some("ublk"));
        assert_eq!(attach_transport("nbd"), None);
        assert_eq!(attach_transport(""), None);
    }
}
