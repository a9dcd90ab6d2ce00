//! The emulator behind the kernel's block layer: a real block device whose
//! requests travel the whole Linux platform — system call, file system or
//! raw device, page cache, blk-mq, scheduler, a driver — before the model
//! times them, as Accardi and Wilcox's RAM drivers did so that the kernel's
//! own cost could be measured ("Linux Storage Stack Performance", Intel
//! 2008), and as Foong et al. split a 4 KiB read between platform and SSD
//! ("Towards SSD-Ready Enterprise Platforms", ADMS 2010).
//!
//! Three transports, chosen at run time:
//!
//! * **FUSE + loop** ([`fuse_serve`]): a FUSE file served by this daemon
//!   and a loop device with direct I/O on it; the loop driver and FUSE are
//!   part of the path, and their cost shows in [`stamps`]' reply and idle
//!   gap figures. Requests are handled in [`fuse_handle`].
//! * **FUSE over io_uring + loop** ([`fuse_uring_serve`], protocol in
//!   [`fuse_uring`]): the same file system and loop device, the requests
//!   and replies carried by io_uring instead of `/dev/fuse` reads and
//!   writes, where the kernel has `CONFIG_FUSE_IO_URING`.
//! * **ublk** ([`ublk`]): where `/dev/ublk-control` exists; its kernel
//!   interface is encoded in [`ublk`] and the server is [`ublk_serve`] (tested in a
//!   throwaway virtual machine whose kernel has `ublk_drv`).
//!
//! [`KernelDrive::attach`] mounts, serves and binds the loop device;
//! [`KernelDrive::detach`] undoes it all in reverse. [`daemon`] records
//! an attachment, serves it until a stop flag and removes what a dead one
//! left; the signals and the printing are the caller's (the `ssdready emu`
//! command).

pub mod daemon;
mod drive_params;
pub mod due;
mod env;
mod error;
pub mod fuse_handle;
pub mod fuse_proto;
pub mod fuse_serve;
pub mod fuse_uring;
pub mod fuse_uring_serve;
pub mod fusectl;
pub mod mounts;
pub mod queue;
mod records;
pub mod stamps;
pub mod state;
pub mod ublk;
pub mod ublk_serve;

pub use drive_params::{block_size, queue_depth, unsupported};
pub use env::check_env;
pub use error::{KernelError, ServeError};

use crate::config::Params;
use crate::shared::SharedDevice;
use fuse_serve::{Negotiated, Shared};
use ssdready_io::clock::Clock;
use ssdready_io::kdev::{self, BindStep};
use stamps::Stamps;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the FUSE + loop transport needs that is missing here, in one
/// clause; None when it can run.
pub fn fuse_missing() -> Option<String> {
    if !kdev::is_root() {
        return Some("root (mount(2) of a FUSE file system and loop devices need it)".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse (FUSE is not built into this kernel or not loaded)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some(
            "/dev/loop-control (the loop driver is not built into this kernel or not loaded)"
                .into(),
        );
    }
    None
}

/// Whether the kernel offers FUSE over io_uring, in words (for a drive
/// served over `/dev/fuse`).
pub fn fuse_uring_state() -> String {
    let p = fuse_uring::PARAM;
    match fuse_uring::enabled() {
        Some(true) => format!(
            "offered by the kernel ({p} = Y) but not used: requests travel over /dev/fuse \
             (--transport=fuse-uring uses it)"
        ),
        Some(false) => format!(
            "off in this kernel ({p} = N; --transport=fuse-uring turns it on for the drive)"
        ),
        None => "not in this kernel".into(),
    }
}

/// What FUSE over io_uring needs that is missing here, in one clause.
pub fn fuse_uring_missing() -> Option<String> {
    if let Some(m) = fuse_missing() {
        return Some(m);
    }
    match fuse_uring::enabled() {
        None => Some(format!(
            "{} (this kernel is built without CONFIG_FUSE_IO_URING)",
            fuse_uring::PARAM
        )),
        Some(_) => None,
    }
}

/// An attached drive: served by this process until [`KernelDrive::detach`].
pub struct KernelDrive {
    pub mountpoint: PathBuf,
    pub loop_path: PathBuf,
    pub loop_index: u32,
    /// Serving threads (over io_uring: the ring threads; a `/dev/fuse`
    /// thread besides answers INIT and what stays there).
    pub threads: usize,
    pub block_size: u32,
    /// Over io_uring: the queues (one per possible CPU) and entries each.
    pub uring: Option<(usize, usize)>,
    /// The line saying that attaching turned the kernel's switch for FUSE
    /// over io_uring on, if it did.
    pub uring_switch: Option<String>,
    /// The loop device's queue as a new drive's: what binding it changed
    /// from its last user's settings, and what it could not.
    pub queue_reset: (Vec<queue::Reset>, Vec<String>),
    shared: Arc<Shared>,
    handles: Vec<std::thread::JoinHandle<String>>,
}

impl KernelDrive {
    /// Mount the FUSE file system on `mountpoint` (an empty directory),
    /// serve it, and bind a free loop device to its file.
    /// With `uring`, requests travel over io_uring (FUSE over io_uring),
    /// the kernel's switch turned on first where it is off.
    pub fn attach(
        params: Params,
        mountpoint: &Path,
        uring: bool,
    ) -> Result<KernelDrive, KernelError> {
        let missing = if uring {
            fuse_uring_missing()
        } else {
            fuse_missing()
        };
        if let Some(m) = missing {
            return Err(KernelError::Needs { missing: m });
        }
        if let Some(why) = unsupported(&params) {
            return Err(KernelError::Unsupported { why });
        }
        let uring_switch = match uring {
            true => fuse_uring::turn_on(Path::new(state::RUN_DIR))?,
            false => None,
        };
        let turned_on = uring_switch.is_some();
        Self::attach_with(params, mountpoint, uring, uring_switch).map_err(|e| {
            // A failed attach puts the kernel's switch back at once.
            match turned_on.then(|| records::put_back_uring(std::process::id())) {
                Some(Some(line)) => KernelError::SwitchPutBack {
                    err: Box::new(e),
                    line,
                },
                _ => e,
            }
        })
    }

    fn attach_with(
        params: Params,
        mountpoint: &Path,
        uring: bool,
        uring_switch: Option<String>,
    ) -> Result<KernelDrive, KernelError> {
        let bs = block_size(&params);
        let depth = queue_depth(&params);
        let dev = SharedDevice::new(params, Clock::calibrate())?;
        let shared = Arc::new(Shared {
            dev,
            stamps: Arc::new(Stamps::default()),
            negotiated: Mutex::new(None),
            stop: AtomicBool::new(false),
            max_background: depth,
            block_size: bs,
            uring,
        });
        let session = kdev::open_fuse().map_err(|err| KernelError::Os {
            doing: "opening /dev/fuse",
            err,
        })?;
        kdev::mount_fuse(&session, mountpoint, "ssdready-emu").map_err(|err| {
            KernelError::Mount {
                dir: mountpoint.to_path_buf(),
                err,
            }
        })?;
        let mut drive = KernelDrive {
            mountpoint: mountpoint.to_path_buf(),
            loop_path: PathBuf::new(),
            loop_index: 0,
            threads: fuse_serve::thread_count(depth),
            block_size: bs,
            uring: uring.then(|| (fuse_uring::possible_cpus(), depth as usize)),
            uring_switch,
            queue_reset: (Vec::new(), Vec::new()),
            shared,
            handles: Vec::new(),
        };
        match drive.start(session) {
            Ok(()) => Ok(drive),
            Err(e) => {
                drive.detach();
                Err(e)
            }
        }
    }

    fn start(&mut self, session: std::fs::File) -> Result<(), KernelError> {
        if let Some((queues, per_queue)) = self.uring {
            return self.start_uring(session, queues, per_queue);
        }
        let mut fds = Vec::with_capacity(self.threads);
        for _ in 1..self.threads {
            fds.push(kdev::clone_fuse(&session).map_err(cloning)?);
        }
        fds.push(session);
        for (i, fd) in fds.into_iter().enumerate() {
            let sh = self.shared.clone();
            let h = std::thread::Builder::new()
                .name(format!("ssdready-fuse{i}"))
                .spawn(move || fuse_serve::serve(fd, sh))
                .map_err(|err| KernelError::Os {
                    doing: "starting a daemon thread",
                    err,
                })?;
            self.handles.push(h);
        }
        // Every thread set up (priority, timer slack) before the first request.
        let t0 = Instant::now();
        while self.shared.stamps.tids.lock().map_or(0, |t| t.len()) < self.threads
            && t0.elapsed() < Duration::from_secs(2)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.bind_loop()
    }

    /// One `/dev/fuse` thread (INIT, and what the kernel keeps sending
    /// there), then the ring threads, each registering its queues' entries
    /// once INIT is done; the loop device is bound when every entry is.
    fn start_uring(
        &mut self,
        session: std::fs::File,
        queues: usize,
        per_queue: usize,
    ) -> Result<(), KernelError> {
        let ring_fd = Arc::new(kdev::clone_fuse(&session).map_err(cloning)?);
        let sh = self.shared.clone();
        let h = std::thread::Builder::new()
            .name("ssdready-fuse".into())
            .spawn(move || fuse_serve::serve(session, sh))
            .map_err(|err| KernelError::Os {
                doing: "starting a daemon thread",
                err,
            })?;
        self.handles.push(h);
        let plans = fuse_uring_serve::plans(queues, self.threads, per_queue);
        self.threads = plans.len();
        let (tx, rx) = std::sync::mpsc::channel();
        for (i, plan) in plans.into_iter().enumerate() {
            let (sh, fd, tx) = (self.shared.clone(), ring_fd.clone(), tx.clone());
            let h = std::thread::Builder::new()
                .name(format!("ssdready-ring{i}"))
                .spawn(move || fuse_uring_serve::serve(fd, sh, plan, tx))
                .map_err(|err| KernelError::Os {
                    doing: "starting a ring thread",
                    err,
                })?;
            self.handles.push(h);
        }
        for _ in 0..self.threads {
            match rx.recv_timeout(Duration::from_secs(10)) {
                Ok(Ok(())) => {}
                Ok(Err(why)) => return Err(KernelError::Ring { why }),
                Err(_) => return Err(KernelError::RingsLate),
            }
        }
        self.bind_loop()
    }

    /// Bind a free loop device to the FUSE file, with direct I/O. The file
    /// is opened by a short-lived child process and held by the loop
    /// device only: this daemon holds no file of its own mount, so that
    /// nothing it closes, exiting included, waits for its own answer.
    fn bind_loop(&mut self) -> Result<(), KernelError> {
        let file = self.mountpoint.join(fuse_proto::DISK_NAME);
        let mut last = String::new();
        for _ in 0..20 {
            let n = kdev::loop_get_free().map_err(|err| KernelError::Os {
                doing: "finding a free loop device",
                err,
            })?;
            let flags = kdev::LO_FLAGS_DIRECT_IO;
            match kdev::loop_configure_elsewhere(n, &file, self.block_size, flags) {
                Ok(()) => {
                    self.loop_index = n;
                    self.loop_path = PathBuf::from(format!("/dev/loop{n}"));
                    self.check_dio()?;
                    let depth = u32::from(self.shared.max_background);
                    self.queue_reset =
                        queue::fresh(Path::new("/sys/block"), &format!("loop{n}"), depth);
                    return Ok(());
                }
                // Another process took it meanwhile.
                Err((BindStep::Configure, e)) if e.raw_os_error() == Some(libc::EBUSY) => {
                    last = e.to_string()
                }
                Err((BindStep::Backing, err)) => return Err(KernelError::Open { path: file, err }),
                Err((BindStep::Configure, err)) => {
                    return Err(KernelError::BindLoop { n, file, err })
                }
                Err((BindStep::Setup, err)) => {
                    return Err(KernelError::Os {
                        doing: "starting the process that binds the loop device",
                        err,
                    })
                }
            }
        }
        Err(KernelError::NoFreeLoop { last })
    }

    /// The loop device must do direct I/O, or the page cache would sit
    /// between the platform and the drive.
    fn check_dio(&self) -> Result<(), KernelError> {
        let p = format!("/sys/block/loop{}/loop/dio", self.loop_index);
        match std::fs::read_to_string(&p).map(|s| s.trim().to_string()) {
            Ok(v) if v == "1" => Ok(()),
            Ok(value) => Err(KernelError::NoDirectIo {
                device: self.loop_path.clone(),
                knob: p,
                value,
            }),
            Err(err) => Err(KernelError::Read { path: p, err }),
        }
    }

    /// What INIT settled (None before the kernel sent it).
    pub fn negotiated(&self) -> Option<Negotiated> {
        *self.shared.negotiated.lock().ok()?
    }

    /// The daemon's stamps.
    pub fn stamps(&self) -> &Stamps {
        &self.shared.stamps
    }

    /// The emulated device.
    pub fn device(&self) -> &Arc<SharedDevice> {
        &self.shared.dev
    }

    /// Whether every serving thread is still running.
    pub fn serving(&self) -> bool {
        self.handles.iter().all(|h| !h.is_finished())
    }

    /// Unbind the loop device, unmount, and end the threads (at most a few
    /// seconds). Returns what could not be undone, one clause each.
    pub fn detach(mut self) -> Vec<String> {
        let mut left = Vec::new();
        if !self.loop_path.as_os_str().is_empty() {
            if let Err(e) = kdev::loop_clear(&self.loop_path) {
                left.push(format!("{}: {e}", self.loop_path.display()));
            }
            wait_unbound(self.loop_index);
        }
        self.shared.stop.store(true, Ordering::Relaxed);
        if kdev::umount(&self.mountpoint, false).is_err() {
            // Busy (the loop driver is still releasing the file): detach it.
            if let Err(e) = kdev::umount(&self.mountpoint, true) {
                left.push(format!("unmounting {}: {e}", self.mountpoint.display()));
            }
        }
        let t0 = Instant::now();
        while self.handles.iter().any(|h| !h.is_finished()) && t0.elapsed() < Duration::from_secs(3)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        for h in self.handles.drain(..) {
            if h.is_finished() {
                let _ = h.join();
            }
        }
        left
    }
}

fn cloning(err: std::io::Error) -> KernelError {
    KernelError::Os {
        doing: "cloning /dev/fuse",
        err,
    }
}

/// Wait (at most 2 s) until loop device `n` has let go of its file.
pub fn wait_unbound(n: u32) {
    let p = format!("/sys/block/loop{n}/loop/backing_file");
    let t0 = Instant::now();
    while Path::new(&p).exists() && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn a_size_that_is_not_whole_pages_is_refused_not_rounded() {
        let p = Params::parse("dram-ssd,size=4097").unwrap();
        let why = unsupported(&p).expect("refused");
        assert!(
            why.contains("size=4097") && why.contains("multiple of"),
            "{why}"
        );
        assert!(unsupported(&Params::parse("dram-ssd,size=8192").unwrap()).is_none());
    }
}
