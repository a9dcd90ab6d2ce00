//! Each workload's own directory, `DIR/ssdready-NAME`.
//!
//! It carries a marker file; a directory of that name without the marker is
//! someone else's and is refused, never emptied. Nothing outside it is
//! written.

use crate::config::Workload;
use crate::error::Error;
use std::path::{Path, PathBuf};

const MARKER: &str = ".ssdready-app";

/// Where `workload` keeps its files under `dir`.
pub fn workdir_of(dir: &Path, workload: Workload) -> PathBuf {
    dir.join(format!("ssdready-{}", workload.name()))
}

/// Check `dir` is a directory to run in.
pub(crate) fn check_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::FileTypeExt;
    let m = std::fs::metadata(dir)
        .map_err(|e| Error::BadInput(format!("option '--directory': {}: {e}", dir.display())))?;
    if m.file_type().is_block_device() {
        return Err(Error::BadInput(format!(
            "option '--directory': {} is a block device; application workloads run in a directory of a mounted file system (name its mount point)",
            dir.display()
        )));
    }
    if !m.is_dir() {
        return Err(Error::BadInput(format!(
            "option '--directory': {} is not a directory",
            dir.display()
        )));
    }
    Ok(())
}

/// Make (or empty, when it is ssdready's from an earlier run) the
/// workload's directory under `dir`.
pub(crate) fn prepare(dir: &Path, workload: Workload) -> Result<PathBuf, Error> {
    check_dir(dir)?;
    let wd = workdir_of(dir, workload);
    if wd.exists() {
        remove_marked(&wd)?;
    }
    std::fs::create_dir(&wd).map_err(|e| {
        let denied = e.kind() == std::io::ErrorKind::PermissionDenied
            || e.raw_os_error() == Some(nix::libc::EROFS);
        // A directory this user may not write: bad input, nothing made.
        match denied {
            true => Error::BadInput(format!(
                "option '--directory': {}: cannot create files in it ({e}); name a directory you may write",
                dir.display()
            )),
            false => Error::io("making", &wd, e),
        }
    })?;
    std::fs::write(
        wd.join(MARKER),
        format!("files of ssdready's {} workload; `ssdready app {} --directory DIR --clean` removes them\n", workload.name(), workload.name()),
    )
    .map_err(|e| Error::io("writing in", &wd, e))?;
    Ok(wd)
}

fn remove_marked(wd: &Path) -> Result<(), Error> {
    if !wd.join(MARKER).exists() {
        return Err(Error::BadInput(format!(
            "{} exists and is not ssdready's (no {MARKER} in it); move it away or name another directory",
            wd.display()
        )));
    }
    std::fs::remove_dir_all(wd).map_err(|e| Error::io("removing", wd, e))
}

/// Write back everything dirty on the file system holding `dir`
/// (`sync -f`, i.e. syncfs(2)), so that the device's counters around a
/// phase hold that phase's writes and no earlier ones.
pub(crate) fn sync_fs(dir: &Path) -> Result<(), Error> {
    let out = std::process::Command::new("sync")
        .arg("-f")
        .arg(dir)
        .output()
        .map_err(|e| Error::Runtime(format!("running 'sync -f {}': {e}", dir.display())))?;
    if !out.status.success() {
        return Err(Error::Runtime(format!(
            "'sync -f {}' failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// `--clean`: remove the workload's directory under `dir`; false when there
/// was none.
pub fn clean(dir: &Path, workload: Workload) -> Result<bool, Error> {
    check_dir(dir)?;
    let wd = workdir_of(dir, workload);
    if !wd.exists() {
        return Ok(false);
    }
    remove_marked(&wd)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_not_ssdreadys_is_never_emptied() {
        let t = tempfile::tempdir().unwrap();
        let wd = workdir_of(t.path(), Workload::Sqlite);
        std::fs::create_dir(&wd).unwrap();
        std::fs::write(wd.join("precious"), "x").unwrap();
        let e = prepare(t.path(), Workload::Sqlite).unwrap_err();
        assert!(matches!(e, Error::BadInput(_)), "{e}");
        assert!(clean(t.path(), Workload::Sqlite).is_err());
        assert!(wd.join("precious").exists());
        // Its own directory is remade, then removed by clean.
        let t2 = tempfile::tempdir().unwrap();
        let wd2 = prepare(t2.path(), Workload::Sqlite).unwrap();
        std::fs::write(wd2.join("old"), "x").unwrap();
        let wd2 = prepare(t2.path(), Workload::Sqlite).unwrap();
        assert!(!wd2.join("old").exists());
        assert!(clean(t2.path(), Workload::Sqlite).unwrap());
        assert!(!wd2.exists());
        assert!(!clean(t2.path(), Workload::Sqlite).unwrap());
    }
}
