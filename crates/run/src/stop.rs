//! The process's one stop flag: set by Ctrl-C, SIGTERM or SIGHUP once the
//! binary has installed its handlers ([`install`]), and checked by every
//! blocking wait outside a run's workers (opening a FIFO, reading one,
//! preparing many files). Before the handlers are installed the signals'
//! default action ends the process, so a fresh flag that is never set is
//! right.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The flag, made by `make` (which installs the handlers) the first time.
pub fn install(make: impl FnOnce() -> Arc<AtomicBool>) -> Arc<AtomicBool> {
    STOP.get_or_init(make).clone()
}

/// The flag once installed; a fresh, never-set one before.
pub fn flag() -> Arc<AtomicBool> {
    STOP.get().cloned().unwrap_or_default()
}
