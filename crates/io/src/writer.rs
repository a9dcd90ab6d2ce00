//! The one writer of files ssdready makes that are not a job's target:
//! results, logs, histories, man pages, drive records, the output of
//! `exec_prerun` / `exec_postrun`.
//!
//! Every function here refuses a block device, a symbolic link to one, and
//! anything but a regular file where a regular file is expected (see
//! [`ssdready_written::vet`]), and never writes through a link that appears
//! after the check:
//!
//! - [`replace`] replaces a file atomically and durably: the bytes go to a
//!   temporary file created with `O_CREAT | O_EXCL | O_NOFOLLOW` in the same
//!   directory, which is synced and renamed over the old name (a rename
//!   replaces a directory entry; it never writes through a link), and the
//!   directory is synced. The old file stays whole until the new one is.
//! - [`create_new`] does the same for a file that must not exist yet.
//! - [`create_regular`] opens a file to be written in place (a command's
//!   output as it runs): `O_NOFOLLOW`, and the opened file must be regular.
//! - [`remove_regular`] takes away a regular file ssdready made, and
//!   nothing else.
//!
//! Errors never name the path: the caller names it once.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ssdready_written::{vet, Allow, Found};

/// A refusal; like every error here it does not name the path (the caller
/// does, once).
fn refused(_path: &Path, why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, why)
}

/// The directory a file is (to be) in.
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Where a replace lands: an existing regular file through its links (the
/// links stay), else `path` itself.
fn landing(path: &Path) -> std::io::Result<PathBuf> {
    match vet(path, Allow::File).map_err(|why| refused(path, why.to_string()))? {
        Found::File => std::fs::canonicalize(path),
        _ => Ok(path.to_path_buf()),
    }
}

/// Create `.NAME.ssdready-PID-N.tmp` in `dir` (mode 0666 less the umask),
/// never through a link and never over anything that exists.
pub fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let p = dir.join(format!(".{name}.ssdready-{pid}-{n}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

fn file_name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into())
}

/// Replace the regular file `path` (or create it) with `bytes`, atomically
/// and durably; a block device, a link to one or any other non-regular
/// file at `path` is refused and nothing is written.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let path = &landing(path)?;
    let dir = parent_of(path);
    let (tmp, mut f) = create_temp(dir, &file_name_of(path))?;
    let written = f
        .write_all(bytes)
        .and_then(|_| keep_owner_and_mode(&f, path))
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    File::open(dir)?.sync_all()
}

/// Replace the entry `path` with a new regular file holding `bytes`,
/// atomically and durably, without following a link: a symbolic link at
/// `path` is refused and kept (never written through, never removed), as
/// is anything but a regular file. A pid file is written so, in a
/// directory other users may write to.
pub fn replace_entry(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Ok(l) = std::fs::symlink_metadata(path) {
        if l.file_type().is_symlink() {
            return Err(refused(
                path,
                "is a symbolic link (name the file itself)".into(),
            ));
        }
        if !l.file_type().is_file() {
            return Err(refused(path, not_regular(&l)));
        }
    }
    let dir = parent_of(path);
    let (tmp, mut f) = create_temp(dir, &file_name_of(path))?;
    let written = f
        .write_all(bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    File::open(dir)?.sync_all()
}

/// Write `bytes` to the new file `path`, atomically and durably, never over
/// anything that exists (`AlreadyExists` then, even for a dangling link):
/// the bytes go to a synced temporary file that is then linked to `path`.
pub fn create_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_of(path);
    let (tmp, mut f) = create_temp(dir, &file_name_of(path))?;
    let linked = f
        .write_all(bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    linked?;
    File::open(dir)?.sync_all()
}

/// Remove `path` where it is a regular file (never a link, a device or a
/// directory): a file ssdready made that nothing asked it to keep.
/// Whether it removed one.
pub fn remove_regular(path: &Path) -> bool {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    regular && std::fs::remove_file(path).is_ok()
}

/// Open the regular file `path` for writing from its start (created, or
/// emptied): a symbolic link, a block or character device, a FIFO or a
/// directory there is refused before anything is written.
pub fn create_regular(path: &Path) -> std::io::Result<File> {
    if let Ok(l) = std::fs::symlink_metadata(path) {
        let ft = l.file_type();
        if ft.is_symlink() {
            // Say what the link leads to (a block device, most to the point).
            let why = vet(path, Allow::File)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "is a symbolic link (name the file itself)".into());
            return Err(refused(path, why));
        }
        if !ft.is_file() {
            return Err(refused(path, not_regular(&l)));
        }
    }
    // O_NONBLOCK: a FIFO put there since the check is not waited on.
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused(path, "is a symbolic link (name the file itself)".into()),
            _ => e,
        })?;
    let md = f.metadata()?;
    if !md.file_type().is_file() {
        return Err(refused(path, not_regular(&md)));
    }
    f.set_len(0)?;
    crate::written::set_blocking(&f)?;
    Ok(f)
}

/// Why `md` is not a file ssdready writes.
fn not_regular(md: &std::fs::Metadata) -> String {
    let ft = md.file_type();
    if ft.is_block_device() {
        let (maj, min) = crate::target::sysfs::major_minor(md.rdev());
        format!(
            "is a block device ({maj}:{min}); ssdready writes a block device only as a job's target (name a regular file)"
        )
    } else if ft.is_char_device() {
        "is a character device (name a regular file)".into()
    } else if ft.is_fifo() {
        "is a FIFO (name a regular file)".into()
    } else if ft.is_dir() {
        "is a directory (name a file)".into()
    } else {
        "is not a regular file (name a regular file)".into()
    }
}

/// Give the new file the old one's permissions (and owner, as root).
fn keep_owner_and_mode(f: &File, old: &Path) -> std::io::Result<()> {
    let Ok(md) = std::fs::symlink_metadata(old) else {
        return Ok(());
    };
    if !md.is_file() {
        return Ok(());
    }
    f.set_permissions(std::fs::Permissions::from_mode(md.permissions().mode()))?;
    // Only root may give a file away; anyone else keeps their own.
    let _ = std::os::unix::fs::fchown(f, Some(md.uid()), Some(md.gid()));
    Ok(())
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
