//! A target's zones as the run shares them ([`ZbdShared`]: the table, how
//! its zones are reset, its name) and the table's lock, below the job that
//! holds them ([`crate::prepared`]) and the zones' setup and workers
//! ([`crate::zbd`]).

use ssdready_emu::engine::SharedDevice;
use ssdready_workload::zbd::ZbdFile;
use std::fs::File;
use std::sync::{Arc, Mutex, MutexGuard};

/// How a target's zones are reset.
pub(crate) enum Resetter {
    Emu(Arc<SharedDevice>),
    Block(File),
    /// Emulated zones: nothing on the device.
    Host,
}

/// One target's zones, shared by the jobs on it.
pub(crate) struct ZbdShared {
    pub table: Arc<Mutex<ZbdFile>>,
    pub(crate) reset: Resetter,
    pub(crate) name: String,
}

/// The table's lock (a poisoned one still holds consistent zones: every
/// change to them is made whole under it).
pub(crate) fn lock(t: &Mutex<ZbdFile>) -> MutexGuard<'_, ZbdFile> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn shared(file: ZbdFile, reset: Resetter, name: &str) -> ZbdShared {
    ZbdShared {
        table: Arc::new(Mutex::new(file)),
        reset,
        name: name.to_string(),
    }
}
