//! Where results and logs go.
//!
//! Every destination is checked before the first I/O ([`check`]: exit code 2
//! when it cannot work), so a run never ends with nowhere to put what it
//! measured. A regular file is replaced atomically ([`write()`]): the text goes
//! to a temporary file in the same directory, which is synced and renamed
//! over the old one, and the directory is synced — a full disk, a kill or a
//! crash leaves the previous file whole. Character devices and FIFOs cannot
//! be replaced and are written in place. A failed write is always an error.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a path cannot take results: the reason alone, without the option or
/// the path ([`checked`]).
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    /// The one rule for every written path (never a block device, …).
    #[error(transparent)]
    Vet(#[from] ssdready_written::VetError),
    #[error("names a directory (name a file)")]
    NamesADirectory,
    #[error("is a directory (name a file)")]
    IsADirectory,
    /// The path could not be looked at; `err` says why.
    #[error("{err}")]
    Unreadable { err: std::io::Error },
    #[error("cannot be written: {err}")]
    NotWritable { err: std::io::Error },
    #[error("cannot be written: it has no write permission")]
    NoWritePermission,
    #[error("{} is not a directory", .dir.display())]
    NotADirectory { dir: PathBuf },
    #[error("directory {} does not exist ({err})", .dir.display())]
    NoDirectory { dir: PathBuf, err: std::io::Error },
    #[error("directory {}: {err}", .dir.display())]
    Directory { dir: PathBuf, err: std::io::Error },
    #[error("cannot create files in {}: {err}", .dir.display())]
    CannotCreate { dir: PathBuf, err: std::io::Error },
    #[error("free space of {}: {err}", .dir.display())]
    FreeSpace { dir: PathBuf, err: std::io::Error },
    #[error("the file system of {} is full ({free} bytes free; free some space)", .dir.display())]
    Full { dir: PathBuf, free: u64 },
    #[error("is a block device; results written there would overwrite its data")]
    BlockDevice,
    #[error("is a socket (name a file)")]
    Socket,
    #[error("every write to this device fails (No space left on device)")]
    DevFull,
}

/// Why results cannot go where they were asked to, or could not be
/// written there: the option, the path and the reason, in one line.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// `what` names the option (`option 'output'`).
    #[error("{what}: an empty file name")]
    EmptyName { what: String },
    #[error("{what}: {}: {why}", .path.display())]
    Unusable {
        what: String,
        path: PathBuf,
        why: Unusable,
    },
    /// A result directory (`--output`) that the one rule refuses.
    #[error("option '--output': {}: {why}", .dir.display())]
    Dir {
        dir: PathBuf,
        why: ssdready_written::VetError,
    },
    #[error("option '--output': directory {} does not exist", .parent.display())]
    NoParent { parent: PathBuf },
    /// Standard output or error (`stream` names which) failed.
    #[error("writing the results to {stream}: {err}")]
    Stream {
        stream: &'static str,
        err: std::io::Error,
    },
    #[error("writing {}: {err}", .path.display())]
    Write { path: PathBuf, err: std::io::Error },
}

impl From<Unusable> for String {
    fn from(e: Unusable) -> String {
        e.to_string()
    }
}

impl From<OutputError> for String {
    fn from(e: OutputError) -> String {
        e.to_string()
    }
}

/// Below this many free bytes a file system counts as full for results.
const MIN_FREE: u64 = 64 << 10;

/// A checked destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Standard output (no `--output`, or `/dev/stdout`).
    Stdout,
    /// Standard error (`/dev/stderr`).
    Stderr,
    /// A regular file, existing or new (symbolic links resolved): replaced
    /// atomically.
    File(PathBuf),
    /// A character device or a FIFO: written in place.
    Special(PathBuf),
}

/// `2026-11-22-091530` (UTC): the default result directories' suffix.
pub fn stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = ssdready_core::units::civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The directory a long command (study, characterize) writes its result
/// file `file` into: `given` (`--output`), or `PREFIX-DATE-TIME` here.
/// Checked now — its parent exists, it is a directory if it exists, the
/// file can be written there — rather than after the command's runs; the
/// directory itself is made only when they start.
pub fn result_dir(given: Option<&Path>, prefix: &str, file: &str) -> Result<PathBuf, OutputError> {
    let dir = given
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("{prefix}-{}", stamp())));
    ssdready_written::vet(&dir, ssdready_written::Allow::Dir).map_err(|why| OutputError::Dir {
        dir: dir.clone(),
        why,
    })?;
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(OutputError::NoParent {
            parent: parent.to_path_buf(),
        });
    }
    let probe = if dir.is_dir() {
        dir.join(file)
    } else {
        parent.join(format!(".{prefix}-probe"))
    };
    check(&probe, "option '--output'")?;
    Ok(dir)
}

/// Write `text` to `dir/name` atomically (see [`write()`]); returns the path.
pub fn write_in(dir: &Path, name: &str, text: &str) -> Result<PathBuf, OutputError> {
    let fin = dir.join(name);
    write(&Sink::File(fin.clone()), text)?;
    Ok(fin)
}

/// Check that `path` can take results; `what` names the option for the
/// message (`option 'output'`).
pub fn check(path: &Path, what: &str) -> Result<Sink, OutputError> {
    match path.to_str() {
        Some("/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1") => return Ok(Sink::Stdout),
        Some("/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") => return Ok(Sink::Stderr),
        Some("") => {
            return Err(OutputError::EmptyName {
                what: what.to_string(),
            })
        }
        _ => {}
    }
    checked(path).map_err(|why| OutputError::Unusable {
        what: what.to_string(),
        path: path.to_path_buf(),
        why,
    })
}

/// [`check`]'s verdict, the reason alone (no option, no path).
pub fn checked(path: &Path) -> Result<Sink, Unusable> {
    // One rule for every written path: never a block device.
    ssdready_written::vet(path, ssdready_written::Allow::FileOrStream)?;
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") || path.file_name().is_none() {
        return Err(Unusable::NamesADirectory);
    }
    match std::fs::metadata(path) {
        Ok(md) if md.is_dir() => Err(Unusable::IsADirectory),
        Ok(md) if md.is_file() => {
            let real = std::fs::canonicalize(path).map_err(|err| Unusable::Unreadable { err })?;
            OpenOptions::new()
                .write(true)
                .open(&real)
                .map_err(|err| Unusable::NotWritable { err })?;
            check_dir(parent_of(&real))?;
            Ok(Sink::File(real))
        }
        Ok(md) => check_special(path, &md),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_dir(parent_of(path))?;
            Ok(Sink::File(path.to_path_buf()))
        }
        Err(err) => Err(Unusable::Unreadable { err }),
    }
}

/// The directory a file is (to be) in.
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The directory exists, a file can be created in it (the temporary file
/// of an atomic replace), and its file system is not full.
fn check_dir(dir: &Path) -> Result<(), Unusable> {
    let at = || dir.to_path_buf();
    match std::fs::metadata(dir) {
        Ok(md) if md.is_dir() => {}
        Ok(_) => return Err(Unusable::NotADirectory { dir: at() }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(Unusable::NoDirectory { dir: at(), err })
        }
        Err(err) => return Err(Unusable::Directory { dir: at(), err }),
    }
    let (probe, f) =
        create_temp(dir, "probe").map_err(|err| Unusable::CannotCreate { dir: at(), err })?;
    drop(f);
    let _ = std::fs::remove_file(probe);
    let space = ssdready_io::target::space::free_space(dir)
        .map_err(|err| Unusable::FreeSpace { dir: at(), err })?;
    let usable = if crate::sys::is_root() {
        space.free
    } else {
        space.available
    };
    if usable < MIN_FREE {
        return Err(Unusable::Full {
            dir: at(),
            free: usable,
        });
    }
    Ok(())
}

/// A character device or FIFO that can be written; nothing else.
fn check_special(path: &Path, md: &std::fs::Metadata) -> Result<Sink, Unusable> {
    let ft = md.file_type();
    if ft.is_block_device() {
        return Err(Unusable::BlockDevice);
    }
    if ft.is_socket() {
        return Err(Unusable::Socket);
    }
    if ft.is_char_device() {
        if ssdready_io::target::sysfs::major_minor(md.rdev()) == (1, 7) {
            return Err(Unusable::DevFull);
        }
        // O_NONBLOCK: checking a device never waits on it.
        OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|err| Unusable::NotWritable { err })?;
    } else if md.permissions().mode() & 0o222 == 0 {
        // A FIFO is not opened here: closing it would end its reader's input.
        return Err(Unusable::NoWritePermission);
    }
    Ok(Sink::Special(path.to_path_buf()))
}

/// Write `text` to a checked destination; the error says where and why.
pub fn write(sink: &Sink, text: &str) -> Result<(), OutputError> {
    let std_stream = |w: &mut dyn Write, stream: &'static str| {
        w.write_all(text.as_bytes())
            .and_then(|_| w.flush())
            .map_err(|err| OutputError::Stream { stream, err })
    };
    match sink {
        Sink::Stdout => std_stream(&mut std::io::stdout().lock(), "standard output"),
        Sink::Stderr => std_stream(&mut std::io::stderr().lock(), "standard error"),
        // A FIFO with no reader is waited for until a stop request.
        Sink::Special(p) => ssdready_io::written::open_waiting(p, true, &crate::stop::flag())
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|err| OutputError::Write {
                path: p.clone(),
                err,
            }),
        Sink::File(p) => replace(p, text.as_bytes()).map_err(|err| OutputError::Write {
            path: p.clone(),
            err,
        }),
    }
}

/// Create `.NAME.ssdready-PID-N.tmp` in `dir`, never through a link.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    ssdready_io::writer::create_temp(dir, name)
}

/// Replace the regular file `path` with `bytes`, atomically and durably:
/// the old file stays whole until the new one is complete on disk (the one
/// writer, [`ssdready_io::writer::replace`]).
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    ssdready_io::writer::replace(path, bytes)
}

/// Write `bytes` to the new file `path`, atomically and durably, never
/// over an existing file ([`ssdready_io::writer::create_new`]).
pub fn create_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    ssdready_io::writer::create_new(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_keeps_the_old_file_until_the_new_one_is_whole() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let sink = check(&p, "option 'output'").unwrap();
        write(&sink, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!(md.permissions().mode() & 0o777, 0o640);
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_directory_a_missing_directory_and_dev_full_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = check(d.path(), "option 'output'").unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = check(&d.path().join("no/r.json"), "option 'output'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("No such file"), "{e}");
        let e = check(Path::new("/dev/full"), "option 'output'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/full"), "{e}");
        assert_eq!(check(Path::new("/dev/stdout"), "o").unwrap(), Sink::Stdout);
        assert!(matches!(
            check(Path::new("/dev/null"), "o").unwrap(),
            Sink::Special(_)
        ));
    }

    #[test]
    fn create_new_never_replaces_a_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("1.json");
        create_new(&p, b"first").unwrap();
        let e = create_new(&p, b"second").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "first");
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_symlink_is_followed_not_replaced() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        let link = d.path().join("link");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write(&check(&link, "o").unwrap(), "new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }
}
