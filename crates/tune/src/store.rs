//! The journal's files on disk, kept where only their owner can reach them:
//! the journal directory is made with mode 0700 whatever the umask (set
//! explicitly once made) and each journal with 0600, written to a
//! temporary file made with `O_EXCL | O_NOFOLLOW` in the same directory,
//! synced, renamed into place, and the directory synced — so a journal is
//! either the old one or the new one, on disk, before the change it
//! records is made.
//!
//! A journal is read only once checked: opened with `O_NOFOLLOW |
//! O_NONBLOCK`, a regular file of at most [`MAX_JOURNAL`] bytes, owned by
//! this process's user (root) and readable or writable by no one else, in a
//! directory that passes the same check. The directories above it (`/run`,
//! `/run/ssdready`) must be owned by root or us and writable by no one
//! else: `/run/ssdready` is shared with the emulator's state
//! (`ssdready_emu::kernel::state`, mode 0755), which keeps the same rule.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The largest journal read (a journal is a few hundred bytes per entry).
pub const MAX_JOURNAL: u64 = 64 * 1024;

/// The journal directory's mode, and a journal's.
pub const DIR_MODE: u32 = 0o700;
pub const FILE_MODE: u32 = 0o600;

/// This process's effective user id.
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Why a directory or file is not to be trusted, if it is not: owned by
/// root or by us, and writable by no one else (`private`: nor readable).
fn trusted(uid: u32, mode: u32, private: bool) -> Result<(), String> {
    let me = euid();
    if uid != 0 && uid != me {
        return Err(format!("it is owned by uid {uid}, not by root"));
    }
    let others = if private { 0o077 } else { 0o022 };
    if mode & others != 0 {
        return Err(format!(
            "other users can {} it (mode {:04o})",
            if private { "read or write" } else { "write" },
            mode & 0o7777
        ));
    }
    Ok(())
}

/// Check an existing directory (never followed through a link).
fn check_dir(dir: &Path, private: bool) -> Result<(), String> {
    let md = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !md.file_type().is_dir() {
        return Err(format!("{}: it is not a directory", dir.display()));
    }
    trusted(md.uid(), md.mode(), private).map_err(|why| format!("{}: {why}", dir.display()))
}

/// Make the journal directory `dir` (mode 0700) and those above it that
/// are missing (mode 0755), whatever the umask; then check `dir` and its
/// parent. One that exists but another user owns or can write is refused.
pub fn ensure_dir(dir: &Path) -> Result<(), String> {
    let mut path = PathBuf::new();
    let parts: Vec<_> = dir.components().collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        if path.parent().is_none() {
            continue;
        }
        let mode = if i + 1 == parts.len() {
            DIR_MODE
        } else {
            0o755
        };
        match std::fs::DirBuilder::new().mode(mode).create(&path) {
            Ok(()) => std::fs::set_permissions(&path, Permissions::from_mode(mode))
                .map_err(|e| format!("{}: {e}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    check_tree(dir)
}

/// Check the journal directory (private) and its parent (not writable by
/// others).
pub fn check_tree(dir: &Path) -> Result<(), String> {
    check_dir(dir, true)?;
    match dir.parent() {
        Some(up) if !up.as_os_str().is_empty() => check_dir(up, false),
        _ => Ok(()),
    }
}

/// Write `bytes` to `path` (mode 0600), atomically and durably: a
/// temporary file made with `O_EXCL | O_NOFOLLOW` beside it, synced,
/// renamed over `path`, and the directory synced. The directory is made
/// (and checked) first.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    ensure_dir(dir).map_err(std::io::Error::other)?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let (tmp, mut f) = create_temp(dir, &name)?;
    let done = f
        .set_permissions(Permissions::from_mode(FILE_MODE))
        .and_then(|_| f.write_all(bytes))
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    File::open(dir)?.sync_all()
}

/// Remove the journal `path` (gone already is fine) and sync its directory.
pub fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    File::open(path.parent().unwrap_or(Path::new(".")))?.sync_all()
}

/// `.NAME.PID-N.tmp` in `dir`, new (`O_EXCL`), never through a link.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let p = dir.join(format!(".{name}.{pid}-{n}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Read the journal `path`, checked: Ok(None) when there is none, Err with
/// the reason when it is not to be trusted (then it is not acted on).
pub fn read_checked(path: &Path) -> Result<Option<String>, String> {
    let f = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err("it is a symbolic link".into())
        }
        Err(e) => return Err(e.to_string()),
    };
    let md = f.metadata().map_err(|e| e.to_string())?;
    if !md.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    trusted(md.uid(), md.mode(), true)?;
    if let Some(dir) = path.parent() {
        check_tree(dir).map_err(|why| format!("its directory {why}"))?;
    }
    if md.len() > MAX_JOURNAL {
        return Err(format!("it is larger than {MAX_JOURNAL} bytes"));
    }
    let mut text = String::new();
    f.take(MAX_JOURNAL)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    Ok(Some(text))
}

/// The journals in `dir` (files named `PREFIX-PID.json`), sorted; none
/// when the directory does not exist or cannot be read.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.') && n.ends_with(".json"))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The umask is process-wide, and other tests of this binary make
    /// directories beside this one: the test runs again, alone, in a
    /// process of its own started under umask 000, and here only checks
    /// that run passed.
    #[test]
    fn a_journal_made_under_umask_000_is_the_owners_alone() {
        if !ssdready_testkit::in_a_process_under_umask_000(
            "store::tests::a_journal_made_under_umask_000_is_the_owners_alone",
        ) {
            return;
        }
        use nix::sys::stat::{umask, Mode};
        assert_eq!(umask(Mode::empty()).bits(), 0, "the second run's umask");
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run/ssdready/settings");
        let j = dir.join("settings-1.json");
        write(&j, b"{}").unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, DIR_MODE);
        assert_eq!(std::fs::metadata(&j).unwrap().mode() & 0o777, FILE_MODE);
        let up = std::fs::metadata(dir.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(up & 0o022, 0, "mode {up:o}");
        assert_eq!(read_checked(&j).unwrap().as_deref(), Some("{}"));
        assert_eq!(list(&dir), vec![j.clone()]);
        remove(&j).unwrap();
        remove(&j).unwrap();
        assert!(list(&dir).is_empty());
    }

    #[test]
    fn a_journal_others_can_read_or_that_is_a_link_is_not_acted_on() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("settings");
        let j = dir.join("settings-1.json");
        write(&j, b"{}").unwrap();
        std::fs::set_permissions(&j, Permissions::from_mode(0o644)).unwrap();
        assert!(read_checked(&j).unwrap_err().contains("other users"));
        std::fs::set_permissions(&j, Permissions::from_mode(0o600)).unwrap();
        let link = dir.join("settings-2.json");
        std::os::unix::fs::symlink(&j, &link).unwrap();
        assert!(read_checked(&link).unwrap_err().contains("symbolic link"));
        std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        assert!(read_checked(&j).unwrap_err().contains("its directory"));
        assert!(ensure_dir(&dir).is_err());
        assert_eq!(read_checked(&dir.join("none.json")), Ok(None));
    }
}
