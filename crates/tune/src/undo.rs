//! What putting back a journal's entries did ([`Undone`]), and how one
//! cgroup of ssdready's own is undone ([`undo_group`]): the process moved
//! back to the group it was in, then the group removed — only a group
//! named as ssdready names its own ([`PREFIX`]).

use crate::journal::TrialGroup;
use crate::Restored;
use std::fmt;
use std::path::PathBuf;

/// A group of ssdready's own is named so (never another's removed).
pub const PREFIX: &str = "ssdready-trial-";

/// One thing put back (or not) of a journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undone {
    /// A queue setting.
    Setting(Restored),
    /// A cgroup ssdready made, removed (its process moved back first when
    /// it was this one).
    GroupRemoved { dir: PathBuf },
    /// A cgroup ssdready made, not removed: why (the journal keeps it).
    GroupKept { dir: PathBuf, why: String },
    /// The journal is from before the machine restarted, which reset what
    /// it held: removed.
    Rebooted { journal: PathBuf },
    /// The journal failed its checks: not acted on.
    Ignored { journal: PathBuf, why: String },
}

impl Undone {
    /// Whether nothing of it is left changed.
    pub fn is_clean(&self) -> bool {
        match self {
            Undone::Setting(r) => r.is_original(),
            Undone::GroupRemoved { .. } | Undone::Rebooted { .. } => true,
            Undone::GroupKept { .. } | Undone::Ignored { .. } => false,
        }
    }
}

impl fmt::Display for Undone {
    /// One line, without the `ssdready: ` the binary puts before it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undone::Setting(r) => write!(f, "{r}"),
            Undone::GroupRemoved { dir } => write!(f, "removed the cgroup {}", dir.display()),
            Undone::GroupKept { dir, why } => {
                write!(f, "left the cgroup {}: {why}", dir.display())
            }
            Undone::Rebooted { journal } => write!(
                f,
                "removed {}, written before the machine restarted (a restart resets what it held)",
                journal.display()
            ),
            Undone::Ignored { journal, why } => {
                write!(
                    f,
                    "ignoring {} ({why}); it is not acted on",
                    journal.display()
                )
            }
        }
    }
}

/// Undo one group: move process `move_back` (this one) back to the group
/// it was in, then remove the group. None when there was nothing to do.
pub(crate) fn undo_group(g: &TrialGroup, move_back: Option<u32>) -> Option<Undone> {
    let kept = |why: String| {
        Some(Undone::GroupKept {
            dir: g.dir.clone(),
            why,
        })
    };
    let ours = g
        .dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(PREFIX));
    if !ours {
        return kept("not a group ssdready makes: never removed".into());
    }
    if !g.dir.is_dir() {
        return None;
    }
    if let Some(pid) = move_back {
        if let Err(e) = std::fs::write(g.back.join("cgroup.procs"), pid.to_string()) {
            return kept(format!(
                "moving this process back to {}: {e}",
                g.back.display()
            ));
        }
    }
    // A group empties as its last thread finishes leaving: a few tries.
    let mut last = None;
    for _ in 0..20 {
        match std::fs::remove_dir(&g.dir) {
            Ok(()) => return Some(Undone::GroupRemoved { dir: g.dir.clone() }),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => last = Some(e),
            Err(e) => return kept(e.to_string()),
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let procs = std::fs::read_to_string(g.dir.join("cgroup.procs")).unwrap_or_default();
    let procs: Vec<&str> = procs.split_whitespace().collect();
    match procs.is_empty() {
        true => kept(last.map_or_else(String::new, |e| e.to_string())),
        false => kept(format!(
            "it still holds process {} (not ssdready's to move)",
            procs.join(", ")
        )),
    }
}
