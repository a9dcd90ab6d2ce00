//! Why a run did not produce a result ([`Failure`], with its exit code),
//! and which operating-system errors are the request's fault rather than a
//! failure while running. A leaf: it names no other module of the crate.

use nix::errno::Errno;
use ssdready_io::engine::EngineError;

/// Why a run did not produce a result.
#[derive(Debug)]
pub enum Failure {
    /// The request is wrong or unsafe: exit code 2, nothing written.
    BadInput(String),
    /// Something failed while running: exit code 1.
    Runtime(String),
    /// A signal stopped the run before it measured anything: exit code 130.
    Interrupted(String),
    /// A bug (a panic in a worker): exit code 70.
    Internal(String),
    /// The caller's own limit (a study's budget) refused the run before it
    /// started: exit code 1.
    NotStarted(String),
}

impl Failure {
    /// The message, whatever the kind.
    pub fn message(&self) -> &str {
        match self {
            Failure::BadInput(m)
            | Failure::Runtime(m)
            | Failure::Interrupted(m)
            | Failure::Internal(m)
            | Failure::NotStarted(m) => m,
        }
    }

    /// The process exit code this failure ends with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::BadInput(_) => 2,
            Failure::Runtime(_) | Failure::NotStarted(_) => 1,
            Failure::Interrupted(_) => 130,
            Failure::Internal(_) => 70,
        }
    }
}

pub fn bad(e: impl ToString) -> Failure {
    Failure::BadInput(e.to_string())
}

/// Errors that say the request cannot be met here (permissions, a missing
/// path or device, a read-only file system, an unsupported open mode),
/// rather than that something failed while running.
pub fn environmental(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error().map(Errno::from_raw),
        Some(
            Errno::EACCES
                | Errno::EPERM
                | Errno::EROFS
                | Errno::ENOENT
                | Errno::ENOTDIR
                | Errno::ENODEV
                | Errno::ENXIO
                | Errno::ENAMETOOLONG
                | Errno::ELOOP
                | Errno::EISDIR
                | Errno::EINVAL
                | Errno::EBUSY
                | Errno::ETXTBSY
                | Errno::ENOMEDIUM
        )
    )
}

/// Whether an engine that failed to open was refused by the job or the
/// machine (bad input, exit code 2) rather than failing while running.
pub fn engine_refused(e: &EngineError) -> bool {
    match e {
        EngineError::Unsupported(_) => true,
        EngineError::Sys { source, .. } => {
            environmental(source) || source.raw_os_error() == Some(Errno::ENOSYS as i32)
        }
    }
}
