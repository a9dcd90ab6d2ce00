//! This process's open journals, so that a path that ends the process
//! without unwinding (the binary's panic hook, an exit on an error) can
//! still put back what they hold: [`put_back_own`]. A journal put back
//! there is marked, and its [`Tuner`](crate::Tuner) or
//! [`Escape`](crate::escape::Escape) then leaves it alone.

use crate::journal::Journal;
use crate::undo::Undone;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// An open journal.
struct Open {
    file: PathBuf,
    /// The sysfs root its settings are under (`/sys`).
    sysfs: PathBuf,
    /// Put back by [`put_back_own`].
    done: bool,
}

static OPEN: Mutex<Vec<Open>> = Mutex::new(Vec::new());

fn open() -> std::sync::MutexGuard<'static, Vec<Open>> {
    OPEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Note the journal `file` open; false when it already is.
pub(crate) fn register(file: &Path, sysfs: &Path) -> bool {
    let mut o = open();
    if o.iter().any(|x| x.file == file) {
        return false;
    }
    o.push(Open {
        file: file.to_path_buf(),
        sysfs: sysfs.to_path_buf(),
        done: false,
    });
    true
}

/// Forget the journal `file`.
pub(crate) fn unregister(file: &Path) {
    open().retain(|x| x.file != file);
}

/// Whether [`put_back_own`] already put back the journal `file`.
pub(crate) fn put_back(file: &Path) -> bool {
    open().iter().any(|x| x.file == file && x.done)
}

/// Put back everything this process's open journals hold, now, from the
/// journals on disk: each queue setting (unless another process changed
/// it since), each cgroup left (the process moved back, the group
/// removed). For a process about to end without unwinding — call it
/// before `std::process::exit` or in a panic hook; the `Tuner`s and
/// `Escape`s then have nothing left to do. Each outcome is a line to print.
pub fn put_back_own() -> Vec<Undone> {
    // Never wait here: a panic hook may run while this thread holds it.
    let mut guard = match OPEN.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return Vec::new(),
    };
    let mut out = Vec::new();
    for o in guard.iter_mut().filter(|o| !o.done) {
        o.done = true;
        let Ok(Some(mut j)) = Journal::load(&o.file) else {
            continue;
        };
        let pid = std::process::id();
        out.extend(crate::recover::undo_journal(&mut j, &o.sysfs, Some(pid)));
        let _ = j.save(&o.file);
    }
    out
}
