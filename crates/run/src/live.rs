//! What a running worker shows the rest of the run while it runs: its
//! completed I/Os and bytes and its end, read by the progress display,
//! `write_bw_log`'s aggregate log and the steady-state check. A leaf.

use std::sync::atomic::{AtomicBool, AtomicU64};

/// Counters the progress display reads; written by one worker only.
#[repr(align(128))]
#[derive(Default)]
pub struct Live {
    /// Completed I/Os per direction since start (ramp included).
    pub ios: [AtomicU64; 3],
    /// Completed bytes per direction since start.
    pub bytes: [AtomicU64; 3],
    /// Set when the worker has finished.
    pub done: AtomicBool,
    /// Set, before `done`, when the worker ended with an error
    /// (`exitall_on_error`).
    pub errored: AtomicBool,
    /// Set before the `opened` barrier when the engine could not be set up:
    /// then no worker of the phase starts I/O.
    pub failed: AtomicBool,
}
