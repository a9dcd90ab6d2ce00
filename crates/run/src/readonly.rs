//! fio's `--readonly`: no job may write, create, extend, trim or remove a
//! file. One per process, set by the command line before the run; the
//! layout refuses a file that would be created or extended, the run a job
//! that removes its files (as fio does).

use std::sync::atomic::{AtomicBool, Ordering};

static READONLY: AtomicBool = AtomicBool::new(false);

/// Refuse every change to a target from now on in this process.
pub fn set() {
    READONLY.store(true, Ordering::Relaxed);
}

/// Whether `--readonly` was given.
pub fn on() -> bool {
    READONLY.load(Ordering::Relaxed)
}
