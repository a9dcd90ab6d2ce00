//! Why a drive could not be attached to the kernel or stopped:
//! [`KernelError`], one variant per way to fail, each carrying what its
//! one-line message names (the transport, the path, the device, the OS
//! error).

use crate::memory::DataNotAllocated;
use std::io;
use std::path::PathBuf;

/// A transport refused, a drive that could not be attached, or a daemon
/// that would not stop.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    // Whether ublk can serve here.
    #[error("no /dev/ublk-control (ublk_drv is not loaded or not built into this kernel)")]
    NoUblkControl,
    #[error(
        "kernel {release} is known to crash on the first ublk device add (6.18.4–6.18.5; \
         Ubuntu 6.17.0-24 … -40)"
    )]
    UblkCrashes { release: String },
    #[error("not root (adding a ublk device needs CAP_SYS_ADMIN)")]
    UblkNotRoot,

    // The transport asked for.
    #[error("transport ublk cannot be used here: {why}")]
    UblkUnusable { why: Box<KernelError> },
    #[error("transport fuse-uring cannot be used here: it needs {missing}")]
    FuseUringUnusable { missing: String },
    #[error("emu attach needs {missing}")]
    FuseUnusable { missing: String },
    #[error(
        "option '--transport': '{value}' is not a transport (allowed: auto, fuse, fuse-uring, ublk)"
    )]
    NotATransport { value: String },

    // Attaching.
    /// A tuning variable of the daemon set to a value it does not take.
    #[error("environment variable {name}='{value}' is refused (allowed: {allowed}, or unset)")]
    BadEnv {
        name: &'static str,
        value: String,
        allowed: &'static str,
    },
    /// What the kernel drive needs and this machine lacks (root, FUSE, …).
    #[error("the kernel drive needs {missing}")]
    Needs { missing: String },
    /// A device the kernel drive cannot present (`why` names the parameter).
    #[error("{why}")]
    Unsupported { why: String },
    #[error(transparent)]
    Data(#[from] DataNotAllocated),
    #[error("FUSE over io_uring: this kernel has no {param} (CONFIG_FUSE_IO_URING)")]
    NoUringSwitch { param: &'static str },
    #[error("keeping {param}'s value in {}: {err}", .path.display())]
    KeepSwitch {
        param: &'static str,
        path: PathBuf,
        err: io::Error,
    },
    #[error("turning on {param}: {err}")]
    TurnOn { param: &'static str, err: io::Error },
    /// A system call that failed while `doing` what it says.
    #[error("{doing}: {err}")]
    Os { doing: &'static str, err: io::Error },
    #[error("opening {}: {err}", .path.display())]
    Open { path: PathBuf, err: io::Error },
    #[error("reading {path}: {err}")]
    Read { path: String, err: io::Error },
    #[error("mounting FUSE on {}: {err}", .dir.display())]
    Mount { dir: PathBuf, err: io::Error },
    #[error("binding /dev/loop{n} to {}: {err}", .file.display())]
    BindLoop {
        n: u32,
        file: PathBuf,
        err: io::Error,
    },
    #[error("no free loop device could be bound: {last}")]
    NoFreeLoop { last: String },
    #[error("{} refused direct I/O ({knob} = {value})", .device.display())]
    NoDirectIo {
        device: PathBuf,
        knob: String,
        value: String,
    },
    /// A ring thread's reason for not registering.
    #[error("FUSE over io_uring: {why}")]
    Ring { why: ServeError },
    #[error("FUSE over io_uring: the ring threads did not register within 10 s")]
    RingsLate,
    /// A ublk queue thread that ended before serving (`why` is its reason).
    #[error("a ublk queue thread failed: {why}")]
    UblkQueue { why: String },
    #[error("the ublk queue threads did not start within 5 s")]
    UblkQueuesLate,
    #[error("deleting ublk device {dev_id}: {err}")]
    DeleteUblk { dev_id: u32, err: io::Error },
    /// A failed attach, and the line saying the kernel's switch for FUSE
    /// over io_uring was put back.
    #[error("{err}; {line}")]
    SwitchPutBack { err: Box<KernelError>, line: String },
    /// A failed attach, and what could not be undone, one clause each.
    #[error("{err}; NOT removed: {}", .left.join("; "))]
    NotRemoved {
        err: Box<KernelError>,
        left: Vec<String>,
    },

    // Recording a mount.
    #[error("creating {}: {err}", .path.display())]
    CreateDir { path: PathBuf, err: io::Error },
    #[error("{err}")]
    Serialize { err: serde_json::Error },
    #[error("recording the mount in {}: {err}", .path.display())]
    RecordMount { path: PathBuf, err: io::Error },

    // Detaching.
    #[error("emu detach: the daemon of {device} (pid {pid}) did not stop within 10 s")]
    DaemonLingers { device: String, pid: u32 },
}

/// Why a serving thread stopped serving (the line `emu list` and a failed
/// attach show).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("making a FUSE ring of {entries} entries: {err}")]
    MakeRing { entries: usize, err: io::Error },
    #[error("registering a FUSE ring entry: {err}")]
    RegisterEntry { err: io::Error },
    #[error("the kernel did not agree to FUSE over io_uring at INIT")]
    UringRefused,
    #[error("the kernel sent no INIT within 5 s")]
    NoInit,
    #[error("registering the FUSE ring: {err}")]
    RegisterRing { err: io::Error },
    #[error("the kernel refused a FUSE ring entry: {err}")]
    EntryRefused { err: io::Error },
    #[error("a malformed request on the FUSE ring")]
    Malformed,
    #[error("a request of {bytes} bytes on the FUSE ring, beyond its buffers")]
    BeyondBuffers { bytes: usize },
    #[error("committing a FUSE reply: {err}")]
    CommitReply { err: io::Error },
    /// A ublk queue's completion of request `tag`.
    #[error("committing tag {tag}: {err}")]
    CommitTag { tag: u16, err: io::Error },
    #[error("committing: {err}")]
    Commit { err: io::Error },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_failed_in_one_line() {
        let e = KernelError::UblkCrashes {
            release: "6.18.4".into(),
        };
        assert_eq!(
            e.to_string(),
            "kernel 6.18.4 is known to crash on the first ublk device add (6.18.4–6.18.5; \
             Ubuntu 6.17.0-24 … -40)"
        );
        let e = KernelError::NotRemoved {
            err: Box::new(KernelError::UblkQueuesLate),
            left: vec!["/dev/ublkb0".into(), "ublk device 0".into()],
        };
        assert_eq!(
            e.to_string(),
            "the ublk queue threads did not start within 5 s; NOT removed: /dev/ublkb0; ublk device 0"
        );
        let e = KernelError::NoDirectIo {
            device: "/dev/loop3".into(),
            knob: "/sys/block/loop3/loop/dio".into(),
            value: "0".into(),
        };
        assert_eq!(
            e.to_string(),
            "/dev/loop3 refused direct I/O (/sys/block/loop3/loop/dio = 0)"
        );
        let e = KernelError::UblkUnusable {
            why: Box::new(KernelError::UblkNotRoot),
        };
        assert_eq!(
            e.to_string(),
            "transport ublk cannot be used here: not root (adding a ublk device needs CAP_SYS_ADMIN)"
        );
    }
}
