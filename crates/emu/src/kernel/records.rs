//! What the drive's daemons record under [`RUN_DIR`], below the daemon
//! ([`super::daemon`]) and the drive that both read it: each attachment's
//! record ([`Record`]) and stats file, the mount points, the attachments
//! found from them, and the kernel's switch for FUSE over io_uring put back
//! once no live attachment uses it ([`put_back_uring`]).

use super::stamps::Summary;
use super::state::{self, alive, RUN_DIR};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The transports' names in records: FUSE over `/dev/fuse`, and FUSE over
/// io_uring, each with a loop device on the file.
pub const FUSE: &str = "fuse+loop";
pub const FUSE_URING: &str = "fuse-uring+loop";

/// One live attachment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub name: String,
    pub pid: u32,
    pub device: String,
    pub loop_index: u32,
    pub mountpoint: String,
    pub spec: String,
    pub preset: String,
    pub transport: String,
    pub block_size: u32,
    pub queue_depth: u16,
    pub started_unix: u64,
    /// The ublk device number (transport ublk).
    #[serde(default)]
    pub ublk_id: Option<u32>,
}

/// The record of attachment `name`.
pub fn record_path(name: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{name}.json"))
}

/// The stats file of attachment `name`.
pub fn stats_path(name: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{name}.stats.json"))
}

/// Write `text` to `path` atomically, mode 0644 whatever the umask
/// ([`state::write`]: a temporary file made with
/// `O_EXCL | O_NOFOLLOW`, synced and renamed over it).
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    state::write(path, text.as_bytes())
}

/// Every recorded attachment (live or not); a record another user could
/// have written is ignored (one line on stderr).
pub fn records() -> Vec<Record> {
    records_in(Path::new(RUN_DIR))
}

pub(super) fn records_in(run_dir: &Path) -> Vec<Record> {
    let Ok(dir) = std::fs::read_dir(run_dir) else {
        return Vec::new();
    };
    let mut v: Vec<Record> = dir
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.ends_with(".json") && !n.ends_with(".stats.json")
        })
        .filter_map(|e| serde_json::from_str(&state::read(&e.path())?).ok())
        .collect();
    v.sort_by_key(|r| r.loop_index);
    v
}

/// The mount point of attachment `name` (`emu-PID`).
pub fn mount_dir(name: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{name}.mnt"))
}

/// Make attachment `name`'s mount point (mode 0755 whatever the umask, in
/// a checked [`RUN_DIR`]); the error is one line.
pub fn make_mount_dir(name: &str) -> Result<PathBuf, String> {
    state::ensure_dir(Path::new(RUN_DIR))?;
    let mnt = mount_dir(name);
    state::ensure_dir(&mnt).map_err(|e| format!("creating {}: {e}", mnt.display()))?;
    Ok(mnt)
}

/// The pids of the attachments whose mount point is in `run_dir`
/// (`emu-PID.mnt`: made before the drive is attached, so an attachment
/// under way is found before its record is written).
pub(super) fn mount_dir_pids(run_dir: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(d) = std::fs::read_dir(run_dir) else {
        return Vec::new();
    };
    d.flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let pid = n.strip_prefix("emu-")?.strip_suffix(".mnt")?.parse().ok()?;
            Some((pid, e.path()))
        })
        .collect()
}

/// The attachment serving block device `dev` (`/dev/loopN`), if any.
pub fn record_of(dev: &str) -> Option<Record> {
    let canon = std::fs::canonicalize(dev).ok();
    records().into_iter().find(|r| {
        r.device == dev || canon.as_deref() == Some(Path::new(&r.device)) || r.name == dev
    })
}

/// The daemon's latest figures for attachment `name`.
pub fn stats(name: &str) -> Option<Summary> {
    serde_json::from_str(&state::read(&stats_path(name))?).ok()
}

/// Put the kernel's switch for FUSE over io_uring back as it was before
/// an attachment turned it on, once no live attachment other than
/// `except` (a pid; 0 for none) uses it. The line saying so, if it did.
pub fn put_back_uring(except: u32) -> Option<String> {
    let run_dir = Path::new(RUN_DIR);
    super::fuse_uring::put_back(run_dir, uring_in_use(run_dir, except, alive))
}

/// Whether a live attachment other than `except` and this process may use
/// FUSE over io_uring: one recorded with it, or one under way (its mount
/// point made, its record not yet written), which may have turned the
/// switch on.
pub(super) fn uring_in_use(run_dir: &Path, except: u32, alive: fn(u32) -> bool) -> bool {
    let recs = records_in(run_dir);
    let recorded = recs
        .iter()
        .any(|r| r.pid != except && r.transport == FUSE_URING && alive(r.pid));
    recorded
        || mount_dir_pids(run_dir).iter().any(|(pid, _)| {
            ![except, std::process::id()].contains(pid)
                && !recs.iter().any(|r| r.pid == *pid)
                && alive(*pid)
        })
}
