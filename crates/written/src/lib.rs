//! # ssdready-written: the check before ssdready writes a path
//!
//! Paths ssdready writes that are not a job's target: the history
//! database and its result files, `--output` files and directories, logs,
//! iologs, verify state, report directories.
//!
//! [`vet`] is the one check every writer makes before it creates or opens
//! such a path: symbolic links are followed, a block device is always
//! refused (it holds someone's data; only a job's target may be a block
//! device, under the target safety checks of `ssdready_io::target::safety`),
//! and what else is allowed depends on what is written ([`Allow`]).
//!
//! The promise is that small: it reads a path's metadata and nothing
//! else, so that a crate which writes only files of its own (the history's
//! database) makes the check without building the I/O engines
//! (`ssdready-io`, which opens what is written: `ssdready_io::written`).

#![forbid(unsafe_code)]

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Split a Linux `dev_t` into (major, minor), glibc's encoding.
pub fn major_minor(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

/// What a written path may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allow {
    /// A regular file (new or existing): a database, a file replaced
    /// atomically, a directory's file.
    File,
    /// A regular file, or a character device or FIFO written in place
    /// (`/dev/null`, a terminal, a pipe to another program).
    FileOrStream,
    /// A directory (new or existing).
    Dir,
}

/// What is at a vetted path now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing: it will be created.
    New,
    File,
    Dir,
    CharDevice,
    Fifo,
}

/// Why a path may not be written: what is there (no path prefix: the
/// caller names the option and the path).
#[derive(Debug, thiserror::Error)]
pub enum VetError {
    #[error(
        "is a symbolic link to {to}, which does not exist (name the file itself, or create what the link points to)"
    )]
    DanglingLink { to: String },
    /// It could not be looked at.
    #[error("{0}")]
    Stat(std::io::Error),
    #[error(
        "is a block device ({major}:{minor}); ssdready writes a block device only as a job's target, \
         never its database, results or logs (name a regular file)"
    )]
    BlockDevice { major: u32, minor: u32 },
    #[error("is a socket (name a regular file)")]
    Socket,
    #[error("exists and is not a directory")]
    NotADirectory,
    #[error("is a directory (name a file)")]
    Directory,
    #[error("is a character device (name a regular file)")]
    CharDevice,
    #[error("is a FIFO (name a regular file)")]
    Fifo,
}

/// Check that ssdready may write `path` as `allow` says; the error says
/// what is there and why it is refused (no path prefix: the caller names
/// the option and the path).
pub fn vet(path: &Path, allow: Allow) -> Result<Found, VetError> {
    let md = match std::fs::metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match std::fs::symlink_metadata(path) {
                Ok(l) if l.file_type().is_symlink() => {
                    let to = std::fs::read_link(path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_else(|_| "?".into());
                    Err(VetError::DanglingLink { to })
                }
                _ => Ok(Found::New),
            };
        }
        Err(e) => return Err(VetError::Stat(e)),
    };
    let ft = md.file_type();
    if ft.is_block_device() {
        let (major, minor) = major_minor(md.rdev());
        return Err(VetError::BlockDevice { major, minor });
    }
    let found = if ft.is_file() {
        Found::File
    } else if ft.is_dir() {
        Found::Dir
    } else if ft.is_char_device() {
        Found::CharDevice
    } else if ft.is_fifo() {
        Found::Fifo
    } else {
        return Err(VetError::Socket);
    };
    match (allow, found) {
        (Allow::Dir, Found::Dir) => Ok(found),
        (Allow::Dir, _) => Err(VetError::NotADirectory),
        (_, Found::Dir) => Err(VetError::Directory),
        (Allow::File, Found::File) => Ok(found),
        (Allow::File, Found::CharDevice) => Err(VetError::CharDevice),
        (Allow::File, Found::Fifo) => Err(VetError::Fifo),
        (Allow::FileOrStream, _) => Ok(found),
        (Allow::File, Found::New) => Ok(found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_devices_are_refused_and_files_allowed() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        assert_eq!(vet(&f, Allow::File).ok(), Some(Found::New));
        std::fs::write(&f, "x").unwrap();
        assert_eq!(vet(&f, Allow::File).ok(), Some(Found::File));
        assert!(vet(&f, Allow::Dir).is_err());
        assert_eq!(vet(d.path(), Allow::Dir).ok(), Some(Found::Dir));
        assert!(vet(d.path(), Allow::File)
            .unwrap_err()
            .to_string()
            .contains("directory"));
        let null = Path::new("/dev/null");
        assert!(vet(null, Allow::File)
            .unwrap_err()
            .to_string()
            .contains("character device"));
        assert_eq!(vet(null, Allow::FileOrStream).ok(), Some(Found::CharDevice));
        // Any block device this machine has (loop devices exist even unbound).
        if let Some(b) = ["/dev/loop0", "/dev/ram0", "/dev/zram0"]
            .into_iter()
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()))
        {
            let e = vet(Path::new(b), Allow::FileOrStream)
                .unwrap_err()
                .to_string();
            assert!(e.contains("block device"), "{e}");
            let link = d.path().join("link");
            std::os::unix::fs::symlink(b, &link).unwrap();
            assert!(vet(&link, Allow::File)
                .unwrap_err()
                .to_string()
                .contains("block device"));
        } else {
            eprintln!("skipped the block-device case: no /dev/loop0, /dev/ram0 or /dev/zram0");
        }
    }

    #[test]
    fn a_dangling_link_is_named() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("out");
        std::os::unix::fs::symlink(d.path().join("gone"), &link).unwrap();
        let e = vet(&link, Allow::Dir).unwrap_err().to_string();
        assert!(e.contains("symbolic link") && e.contains("gone"), "{e}");
    }
}
