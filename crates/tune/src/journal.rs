//! What a journal holds: its owner, and each change made with what to put
//! back — a device's queue setting with its original value and the value
//! ssdready left there, or a cgroup ssdready made with the group to move
//! back to. One journal per process and kind: `settings-PID.json` (a
//! [`Tuner`](crate::Tuner)'s) and `cgroups-PID.json` (an
//! [`Escape`](crate::escape::Escape)'s), in the journal directory
//! ([`JOURNAL_DIR`](crate::JOURNAL_DIR)).

use crate::owner::Owner;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A journal: the owner and what it changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub owner: Owner,
    /// Queue settings changed, in the order first changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<Setting>,
    /// Cgroups made, in the order made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<TrialGroup>,
}

/// One queue setting changed: `/sys/block/DEVICE/queue/ATTR`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    pub device: String,
    pub attr: String,
    /// The value before ssdready changed it (as read: the active scheduler
    /// for `scheduler`).
    pub original: String,
    /// The value ssdready left: what it asked for until the write was made,
    /// then what the kernel showed after it.
    pub ours: String,
    /// What the kernel resets when this setting changes (a scheduler
    /// switch resets `nr_requests`, `wbt_lat_usec` and the scheduler's own
    /// tunables, `iosched/*`), as they were before: put back after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Also>,
}

impl Setting {
    /// Whether putting it back is a scheduler switch's to do: an earlier
    /// change of its device's scheduler (in `earlier`, undone after it)
    /// puts this attribute back to its value before that switch. Written
    /// first, it would only show the value the switch had reset it to.
    pub fn put_back_by_switch(&self, earlier: &[Setting]) -> bool {
        let resets = |e: &Setting| e.also.iter().any(|a| a.attr == self.attr);
        (earlier.iter()).any(|e| e.device == self.device && resets(e))
    }
}

/// A setting the kernel resets along with another, as it was before.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Also {
    /// Relative to the device's `queue/` (`nr_requests`, `iosched/NAME`).
    pub attr: String,
    pub original: String,
}

/// A cgroup made for ssdready's own process to measure from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialGroup {
    /// The hierarchy's controllers (`blkio`, `cpu,cpuacct`, `cpuset`) or
    /// `unified` for cgroup v2.
    pub hierarchy: String,
    /// The group made (an absolute path under the hierarchy's mount).
    pub dir: PathBuf,
    /// The group the process was in, to move it back to.
    pub back: PathBuf,
    /// cgroup v2: the files the group is given before the process enters
    /// it, with their text: the limits of the user's groups it keeps
    /// while one other is lifted (they go with the group).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<(String, String)>,
}

/// The two kinds of journal, by file-name prefix.
pub const SETTINGS: &str = "settings";
pub const CGROUPS: &str = "cgroups";

/// The journal file of `kind` for process `pid` in `dir`.
pub fn file(dir: &Path, kind: &str, pid: u32) -> PathBuf {
    dir.join(format!("{kind}-{pid}.json"))
}

impl Journal {
    pub fn new(owner: Owner) -> Journal {
        Journal {
            owner,
            settings: Vec::new(),
            groups: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.settings.is_empty() && self.groups.is_empty()
    }

    /// Save to `path` (atomically, synced), or remove `path` when empty.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if self.is_empty() {
            return crate::store::remove(path);
        }
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::store::write(path, format!("{text}\n").as_bytes())
    }

    /// Read `path`, checked: Ok(None) when there is none; Err with why it
    /// is not acted on.
    pub fn load(path: &Path) -> Result<Option<Journal>, String> {
        let Some(text) = crate::store::read_checked(path)? else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("it is not a journal ssdready wrote: {e}"))
    }
}
