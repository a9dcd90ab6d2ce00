//! The drive daemons' state under `/run/ssdready`, kept where another user
//! cannot touch it: directories made with mode 0755 and files with 0644
//! whatever the umask (set explicitly after creation), owned by the user
//! that made them (root), each file written atomically through a temporary
//! file made with `O_EXCL | O_NOFOLLOW` and synced before the rename.
//!
//! Nothing is read without being checked first: a record is opened with
//! `O_NOFOLLOW | O_NONBLOCK` and must be a regular file of at most
//! [`MAX_RECORD`] bytes, owned by root or by this process's user, and
//! writable by no one else; its directory likewise. A record that fails is
//! ignored with one line on stderr (once per file), never acted on.
//!
//! Where attachments are recorded ([`RUN_DIR`]) and whether a recorded
//! daemon still runs ([`alive`]) are here too, below the daemon and the
//! mounts that both read them.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, Permissions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::Mutex;

/// Where attachments are recorded.
pub const RUN_DIR: &str = "/run/ssdready/emu";

/// Whether daemon `pid` still runs (an exited one not yet reaped by its
/// parent is a zombie: gone).
pub fn alive(pid: u32) -> bool {
    let named = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim_end().starts_with("ssdready"));
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let zombie = state
        .rsplit_once(") ")
        .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X'));
    named && !zombie
}

/// Whether process `pid` is on its way out without being gone: one of its
/// threads exits (`PF_EXITING`) or has SIGKILL pending. [`alive`] still
/// finds such a daemon, but it will never answer again: one stuck so
/// waits on something only its end can free (its FUSE connection).
pub fn dying(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        let read = |f: &str| std::fs::read_to_string(t.path().join(f)).unwrap_or_default();
        exiting(&read("stat")) || killed(&read("status"))
    })
}

/// Whether a thread's `/proc/…/stat` line has `PF_EXITING` in its flags
/// (the ninth field).
fn exiting(stat: &str) -> bool {
    const PF_EXITING: u64 = 0x4;
    let flags = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.split(' ').nth(6));
    flags
        .and_then(|f| f.parse::<u64>().ok())
        .is_some_and(|f| f & PF_EXITING != 0)
}

/// Whether a thread's `/proc/…/status` has SIGKILL pending, for the
/// thread or its process (`SigPnd`, `ShdPnd`: masks in hex, signal N at
/// bit N-1).
fn killed(status: &str) -> bool {
    let kill = 1u64 << (libc::SIGKILL - 1);
    status.lines().any(|l| {
        let mask = l
            .strip_prefix("SigPnd:")
            .or_else(|| l.strip_prefix("ShdPnd:"));
        mask.and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & kill != 0)
    })
}

/// The largest record read (records are a few hundred bytes).
pub const MAX_RECORD: u64 = 64 * 1024;

/// A directory's mode and a record's mode.
pub const DIR_MODE: u32 = 0o755;
pub const FILE_MODE: u32 = 0o644;

/// Whether an owner's uid and mode are safe to act on: owned by root or by
/// us, and writable by no group and no other user. The reason when not.
pub fn trusted(uid: u32, mode: u32, me: u32) -> Result<(), String> {
    if uid != 0 && uid != me {
        return Err(format!("it is owned by uid {uid}, not by root"));
    }
    if mode & 0o022 != 0 {
        return Err(format!(
            "other users can write it (mode {:04o})",
            mode & 0o7777
        ));
    }
    Ok(())
}

/// Where ssdready keeps its run-time state: this directory and every one
/// in it are checked before anything in them is used.
pub const ROOT: &str = "/run/ssdready";

/// Check the directory `dir` and those above it up to [`ROOT`] (when it is
/// under [`ROOT`]): the reason, naming the directory, when one fails.
pub fn check_tree(dir: &Path) -> Result<(), String> {
    let mut d = Some(dir);
    while let Some(p) = d {
        check_dir(p).map_err(|why| format!("{}: {why}", p.display()))?;
        d = p.parent().filter(|up| up.starts_with(ROOT));
    }
    Ok(())
}

/// Check an existing directory (never followed through a link).
pub fn check_dir(dir: &Path) -> Result<(), String> {
    let md = std::fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    if !md.file_type().is_dir() {
        return Err("it is not a directory".into());
    }
    trusted(md.uid(), md.mode(), ssdready_io::kdev::euid())
}

/// Make `dir` and the directories above it that are missing with mode
/// 0755 whatever the umask; check every one that `dir` is in (an existing
/// one made by another user, or writable by one, is refused: one line).
pub fn ensure_dir(dir: &Path) -> Result<(), String> {
    let mut path = std::path::PathBuf::new();
    for part in dir.components() {
        path.push(part);
        if path.parent().is_none() {
            continue;
        }
        match std::fs::DirBuilder::new().mode(DIR_MODE).create(&path) {
            Ok(()) => std::fs::set_permissions(&path, Permissions::from_mode(DIR_MODE))
                .map_err(|e| format!("{}: {e}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    // Only the state's own directories must be ours: /run itself is root's.
    check_tree(dir)
}

/// Write `bytes` to `path` (mode 0644 whatever the umask), atomically and
/// durably: a temporary file made with `O_EXCL | O_NOFOLLOW` in the same
/// directory, synced, renamed over `path`, and the directory synced. The
/// directory is made (and checked) first.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    ensure_dir(dir).map_err(std::io::Error::other)?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let (tmp, mut f) = ssdready_io::writer::create_temp(dir, &name)?;
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

/// Read the record `path`, checked; Ok(None) when there is none, Err with
/// the reason when it is not to be trusted.
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
    trusted(md.uid(), md.mode(), ssdready_io::kdev::euid())?;
    if let Some(dir) = path.parent() {
        check_tree(dir).map_err(|why| format!("its directory {why}"))?;
    }
    if md.len() > MAX_RECORD {
        return Err(format!("it is larger than {MAX_RECORD} bytes"));
    }
    let mut text = String::new();
    f.take(MAX_RECORD)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    Ok(Some(text))
}

/// Read the record `path`: None when there is none or it fails the checks
/// (then one line on stderr says so, once per file).
pub fn read(path: &Path) -> Option<String> {
    match read_checked(path) {
        Ok(text) => text,
        Err(why) => {
            warn_once(path, &why);
            None
        }
    }
}

static WARNED: Mutex<Option<HashSet<std::path::PathBuf>>> = Mutex::new(None);

fn warn_once(path: &Path, why: &str) {
    let mut w = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    if w.get_or_insert_with(HashSet::new)
        .insert(path.to_path_buf())
    {
        eprintln!(
            "ssdready: ignoring {} ({why}); it is not acted on",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// The umask is process-wide, and other tests of this binary make
    /// directories beside this one: the test runs again, alone, in a
    /// process of its own started under umask 000 (as a careless start
    /// would be), and here only checks that run passed.
    #[test]
    fn state_made_under_umask_000_is_writable_by_no_other_user() {
        if !ssdready_testkit::in_a_process_under_umask_000(
            "kernel::state::tests::state_made_under_umask_000_is_writable_by_no_other_user",
        ) {
            return;
        }
        use nix::sys::stat::{umask, Mode};
        let was = umask(Mode::empty());
        assert_eq!(was.bits(), 0, "the second run's umask");
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("ssdready/emu");
        let rec = dir.join("emu-1.json");
        write(&rec, b"{}").unwrap();
        for p in [t.path().join("ssdready"), dir.clone(), rec.clone()] {
            let m = std::fs::metadata(&p).unwrap().mode() & 0o777;
            assert_eq!(m & 0o022, 0, "{} has mode {m:o}", p.display());
        }
        assert_eq!(std::fs::metadata(&rec).unwrap().mode() & 0o777, FILE_MODE);
        assert_eq!(read_checked(&rec).unwrap().as_deref(), Some("{}"));
    }

    #[test]
    fn a_record_other_users_can_write_is_ignored_not_acted_on() {
        let t = tempfile::tempdir().unwrap();
        let rec = t.path().join("emu-1.json");
        write(&rec, b"{}").unwrap();
        std::fs::set_permissions(&rec, Permissions::from_mode(0o666)).unwrap();
        let why = read_checked(&rec).unwrap_err();
        assert!(why.contains("other users can write it"), "{why}");
        assert_eq!(read(&rec), None);
    }

    #[test]
    fn a_record_in_a_directory_other_users_can_write_is_ignored() {
        let t = tempfile::tempdir().unwrap();
        let rec = t.path().join("emu-1.json");
        write(&rec, b"{}").unwrap();
        std::fs::set_permissions(t.path(), Permissions::from_mode(0o777)).unwrap();
        let why = read_checked(&rec).unwrap_err();
        assert!(why.contains("its directory"), "{why}");
        assert!(ensure_dir(t.path()).is_err());
    }

    #[test]
    fn a_record_that_is_a_link_or_a_fifo_is_not_followed_or_waited_on() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("real.json");
        write(&target, b"{}").unwrap();
        let link = t.path().join("emu-1.json");
        symlink(&target, &link).unwrap();
        assert!(read_checked(&link).unwrap_err().contains("symbolic link"));
        let fifo = t.path().join("emu-2.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(read_checked(&fifo)
            .unwrap_err()
            .contains("not a regular file"));
        assert_eq!(read_checked(&t.path().join("none.json")), Ok(None));
    }

    #[test]
    fn a_record_owned_by_another_user_is_refused() {
        assert!(trusted(1000, 0o100644, 0).unwrap_err().contains("uid 1000"));
        assert!(trusted(0, 0o100644, 1000).is_ok());
        assert!(trusted(1000, 0o100644, 1000).is_ok());
        assert!(trusted(0, 0o100664, 0).is_err());
    }

    #[test]
    fn a_killed_or_exiting_thread_is_dying() {
        let stat = |flags: u64| format!("77 (ssdready (x)) D 1 77 77 0 -1 {flags} 0 0");
        assert!(exiting(&stat(0x40_0044)));
        assert!(!exiting(&stat(0x40_0040)));
        let status =
            |sig: &str, shd: &str| format!("Name:\tssdready\nSigPnd:\t{sig}\nShdPnd:\t{shd}\n");
        assert!(killed(&status("0000000000000100", "0000000000000000")));
        assert!(killed(&status("0000000000000000", "0000000000000100")));
        assert!(!killed(&status("0000000000004000", "0000000000000002")));
        // This test's own process is neither.
        assert!(!dying(std::process::id()));
        assert!(!dying(u32::MAX - 1));
    }
}
