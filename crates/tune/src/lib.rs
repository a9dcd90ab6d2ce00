//! What ssdready changes on the host to try its own advice, and how every
//! change is put back.
//!
//! - [`Tuner`] (one per process) changes a device's queue settings in
//!   sysfs (`/sys/block/DEV/queue/ATTR`, the settings of [`ATTRS`] only,
//!   on the devices its caller allowed only: the target's own device and
//!   its stack's members). Before any write it records the original in a
//!   journal under [`JOURNAL_DIR`] (root's alone, written atomically and
//!   synced with its directory). [`Tuner::restore`], [`Tuner::restore_all`]
//!   and its `Drop` (so a panic's unwinding too) put each original back —
//!   unless another process changed the setting since ssdready did: that
//!   one is left as it is and reported ([`Restored::ChangedByOther`]).
//! - [`escape::Escape`] moves this process into cgroups of its own at the
//!   root of each hierarchy that can hold its I/O or CPU, so a run is
//!   measured without the throttle, quota or cpuset of the user's group —
//!   all of them, or one alone with the others kept ([`escape_only`]);
//!   the user's groups are never changed. Journaled likewise; leaving
//!   moves the process back and removes the groups.
//! - [`lock`]: one process at a time changes a device (an advisory
//!   lock under `/run/ssdready/locks`, released by the kernel when the
//!   process ends): a study holds it for its whole length, a [`Tuner`]
//!   takes it before a device's first change.
//! - [`recover`] (at the start of every command that runs as root) finds
//!   the journals whose owner has ended — a SIGKILL, a power loss — and
//!   puts back what they hold, each with a line to print ([`Recovered`]).
//!   A live owner's journal is never touched ([`held`]).
//! - [`put_back_own`]: for a process about to exit without unwinding (a
//!   panic hook, an exit on an error), this process's own journals put
//!   back at once.
//!
//! Every function has a form over other roots (`*_at`, [`Tuner::with_roots`])
//! so that the journal's whole life is tested without root on a fake sysfs.

#![forbid(unsafe_code)]

pub mod escape;
mod escape_error;
pub mod escape_only;
pub mod journal;
pub mod lock;
pub mod owner;
mod recover;
mod registry;
pub mod store;
pub mod sysfs;
mod tuner;
mod undo;

pub use recover::{
    held, held_at, recover, recover_at, restore_now, restore_now_at, Held, Recovered, Report,
};
pub use registry::put_back_own;
pub use sysfs::ATTRS;
pub use tuner::Tuner;
pub use undo::Undone;

use std::fmt;

/// Where the journals are kept.
pub const JOURNAL_DIR: &str = "/run/ssdready/settings";

/// What putting one setting back did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restored {
    /// The original value was written back.
    PutBack {
        device: String,
        attr: String,
        value: String,
        /// What the switch back reset and was written back with it
        /// (`nr_requests to 4`).
        also: Vec<String>,
    },
    /// The setting already held its original value: nothing written but
    /// `also`, what a switch had reset.
    AlreadyOriginal {
        device: String,
        attr: String,
        value: String,
        also: Vec<String>,
    },
    /// Another process changed the setting after ssdready did: it is left
    /// as that process set it.
    ChangedByOther {
        device: String,
        attr: String,
        /// The value now.
        now: String,
        /// The value ssdready left.
        ours: String,
        /// The value before ssdready changed it.
        original: String,
    },
    /// The original could not be written back (its journal keeps it, and
    /// the next command tries again once this process has ended).
    Failed {
        device: String,
        attr: String,
        original: String,
        error: String,
    },
}

impl Restored {
    /// The device and the setting.
    pub fn setting(&self) -> (&str, &str) {
        match self {
            Restored::PutBack { device, attr, .. }
            | Restored::AlreadyOriginal { device, attr, .. }
            | Restored::ChangedByOther { device, attr, .. }
            | Restored::Failed { device, attr, .. } => (device, attr),
        }
    }

    /// Whether the setting holds its original value now.
    pub fn is_original(&self) -> bool {
        matches!(
            self,
            Restored::PutBack { .. } | Restored::AlreadyOriginal { .. }
        )
    }
}

/// `/sys/block/DEV/queue/ATTR`, as a user would look for it.
fn shown(device: &str, attr: &str) -> String {
    format!("/sys/block/{device}/queue/{attr}")
}

impl fmt::Display for Restored {
    /// One line, without the `ssdready: ` the binary puts before it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Restored::PutBack {
                device,
                attr,
                value,
                also,
            } => write!(
                f,
                "put back {} to {value}{}",
                shown(device, attr),
                also_words(also)
            ),
            Restored::AlreadyOriginal {
                device,
                attr,
                value,
                also,
            } => write!(
                f,
                "{} is back at {value}{}",
                shown(device, attr),
                also_words(also)
            ),
            Restored::ChangedByOther {
                device,
                attr,
                now,
                ours,
                original,
            } => write!(
                f,
                "left {} at {now}: another process changed it after ssdready set {ours} \
                 (it was {original} before)",
                shown(device, attr)
            ),
            Restored::Failed {
                device,
                attr,
                original,
                error,
            } => write!(
                f,
                "could not put back {} to {original}: {error}",
                shown(device, attr)
            ),
        }
    }
}

/// What a scheduler switch reset and was put back with it, in words:
/// ` (and nr_requests to 4, which the switch resets)`.
fn also_words(also: &[String]) -> String {
    match also.is_empty() {
        true => String::new(),
        false => format!(" (and {}, which the switch resets)", also.join(", ")),
    }
}

/// Why a setting was not changed.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("changing a device's queue settings needs root")]
    NotRoot,
    #[error(
        "device '{device}' is not the target's or in its stack (allowed: {})",
        list(allowed)
    )]
    NotAllowed {
        device: String,
        allowed: Vec<String>,
    },
    #[error("'{attr}' is not a queue setting ssdready changes (allowed: {})", allowed.join(", "))]
    UnknownAttr { attr: String, allowed: Vec<String> },
    #[error(
        "'{value}' is not a value for {attr} (allowed: one word of letters, digits, '-' or '_')"
    )]
    BadValue { attr: String, value: String },
    #[error("no block device '{device}' (no /sys/block/{device}/queue)")]
    NoDevice { device: String },
    #[error("the kernel offers no {} here", shown(device, attr))]
    NotOffered { device: String, attr: String },
    #[error(
        "{} is held by ssdready (pid {pid}), still running: left to it",
        shown(device, attr)
    )]
    HeldByOther {
        device: String,
        attr: String,
        pid: u32,
    },
    #[error("reading {path}: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("setting {path} to {value}: {err}")]
    Write {
        path: String,
        value: String,
        err: std::io::Error,
    },
    #[error("writing the journal {path}: {why}; nothing was changed")]
    Journal { path: String, why: String },
    /// The journal on disk did not hold the setting's original at the
    /// moment of its write: the write is not made.
    #[error(
        "{} was left as it is: the journal {path} did not hold its original when it was to be written",
        shown(device, attr)
    )]
    NotJournaled {
        device: String,
        attr: String,
        path: String,
    },
    #[error("this process already has a journal at {path} (one Tuner per process)")]
    AlreadyOpen { path: String },
    /// Another process is changing the device (it holds its lock).
    #[error(transparent)]
    Locked(#[from] crate::lock::LockError),
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
