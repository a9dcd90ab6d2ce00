//! Mounts a command makes on a device for a while (the study's ext4 for
//! its applications section), recorded so that nothing outlives its owner.
//!
//! Each is recorded in `/run/ssdready/emu/mount-PID-N.mount` (the owner's
//! pid, the device, the mount point; written and checked as
//! [`super::state`] says) before the mount is made and removed
//! after it is undone. A record whose owner is gone (SIGKILL) is found by
//! [`clean_stale`] — run by `emu list`, by every `emu attach` (a study's
//! drive included) before it detaches its drive, and by the next study —
//! which unmounts the file system, wipes the signature the owner made and
//! removes the mount point and the record.

use super::error::KernelError;
use super::state::{alive, RUN_DIR};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One recorded mount.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct MountRecord {
    /// The process that made it.
    pub pid: u32,
    /// The device it is on.
    pub device: String,
    /// Where it is mounted.
    pub dir: String,
    /// Whether the owner made the file system (its signature is wiped
    /// when the mount is removed).
    pub made: bool,
}

/// A recorded mount; the record is removed on drop (after the owner has
/// undone the mount).
pub struct Recorded {
    path: PathBuf,
}

impl Drop for Recorded {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Record that this process mounts `device` at `dir` (call before
/// mounting); `made`: it also made the file system there.
pub fn record(device: &str, dir: &Path, made: bool) -> Result<Recorded, KernelError> {
    record_in(Path::new(RUN_DIR), device, dir, made)
}

fn record_in(
    run_dir: &Path,
    device: &str,
    dir: &Path,
    made: bool,
) -> Result<Recorded, KernelError> {
    super::state::ensure_dir(run_dir).map_err(|why| KernelError::CreateDir {
        path: run_dir.to_path_buf(),
        err: std::io::Error::other(why),
    })?;
    let r = MountRecord {
        pid: std::process::id(),
        device: device.to_string(),
        dir: dir.display().to_string(),
        made,
    };
    let text = serde_json::to_string_pretty(&r).map_err(|err| KernelError::Serialize { err })?;
    let dirname = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let path = run_dir.join(format!("mount-{}-{dirname}.mount", r.pid));
    super::state::write(&path, text.as_bytes()).map_err(|err| KernelError::RecordMount {
        path: path.clone(),
        err,
    })?;
    Ok(Recorded { path })
}

/// Every mount record in `run_dir`, with its file.
fn records_in(run_dir: &Path) -> Vec<(PathBuf, MountRecord)> {
    let Ok(d) = std::fs::read_dir(run_dir) else {
        return Vec::new();
    };
    d.flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mount"))
        .filter_map(|p| {
            let text = super::state::read(&p)?;
            Some((p, serde_json::from_str(&text).ok()?))
        })
        .collect()
}

/// Whether `dir` is a mount point now.
fn mounted(dir: &str) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(dir))
}

fn quiet(name: &str, args: &[&str]) -> bool {
    Command::new(name)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Undo one orphaned mount; what was done, in words.
fn undo(r: &MountRecord) -> Vec<String> {
    let mut done = Vec::new();
    if mounted(&r.dir) {
        // A lazy unmount when busy: the device is free once its users end.
        if ssdready_io::kdev::umount(Path::new(&r.dir), false).is_ok()
            || ssdready_io::kdev::umount(Path::new(&r.dir), true).is_ok()
        {
            done.push(format!("unmounted {}", r.dir));
            if r.made && quiet("wipefs", &["-q", "-a", &r.device]) {
                done.push(format!("wiped the file system it made on {}", r.device));
            }
        }
    }
    let _ = std::fs::remove_dir(&r.dir);
    done
}

/// Remove every recorded mount whose owner is gone (root only); one line
/// each, saying what was removed.
pub fn clean_stale() -> Vec<String> {
    if !ssdready_io::kdev::is_root() {
        return Vec::new();
    }
    clean_stale_in(Path::new(RUN_DIR), alive)
}

fn clean_stale_in(run_dir: &Path, alive: fn(u32) -> bool) -> Vec<String> {
    let mut said = Vec::new();
    for (path, r) in records_in(run_dir) {
        if alive(r.pid) {
            continue;
        }
        let done = undo(&r);
        let _ = std::fs::remove_file(&path);
        said.push(format!(
            "removed a mount left by a process that is gone (pid {}): {} on {}{}",
            r.pid,
            r.device,
            r.dir,
            if done.is_empty() {
                String::new()
            } else {
                format!(" ({})", done.join(", "))
            }
        ));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_record_lives_as_long_as_its_guard() {
        let run = tempfile::tempdir().unwrap();
        let g = record_in(run.path(), "/dev/loop9", Path::new("/tmp/fs-x"), true).unwrap();
        let v = records_in(run.path());
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].1.device, "/dev/loop9");
        assert_eq!(v[0].1.pid, std::process::id());
        drop(g);
        assert!(records_in(run.path()).is_empty());
    }

    #[test]
    fn a_record_whose_owner_is_gone_is_removed_and_a_live_one_kept() {
        let run = tempfile::tempdir().unwrap();
        let fs = tempfile::tempdir().unwrap();
        let dir = fs.path().join("mnt");
        std::fs::create_dir(&dir).unwrap();
        let g = record_in(run.path(), "/dev/loop9", &dir, false).unwrap();
        // Alive: kept.
        assert!(clean_stale_in(run.path(), |_| true).is_empty());
        assert_eq!(records_in(run.path()).len(), 1);
        // Its owner gone: the record and the (unmounted) mount point go.
        let said = clean_stale_in(run.path(), |_| false);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("/dev/loop9"), "{said:?}");
        assert!(records_in(run.path()).is_empty());
        assert!(!dir.exists());
        std::mem::forget(g);
    }
}
