//! The limits a simulation runs under ([`STALL_EVENTS`],
//! [`STOP_POLL_EVENTS`], [`MAX_SERIES_SECONDS`]), what it produces
//! ([`SimOutcome`]) and why it may give nothing ([`SimError`]): below the
//! simulation ([`super`]) and its event loop, which both use them.

use ssdready_core::stats::WorkerStats;

/// Completions in a row at one simulated instant after which virtual time
/// is taken to have stopped (at least; four per slot in flight if more).
pub const STALL_EVENTS: u64 = 1 << 20;
/// How often (in events) the stop callback is polled.
pub const STOP_POLL_EVENTS: u64 = 1024;
/// The free-blocks series keeps at most this many simulated seconds
/// (48 days, 32 MiB); later seconds are not sampled.
pub const MAX_SERIES_SECONDS: u64 = 1 << 22;

/// What a simulation produced.
pub struct SimOutcome {
    /// Per job, per worker.
    pub workers: Vec<Vec<WorkerStats>>,
    /// Free blocks at the end of each simulated second.
    pub free_blocks: Vec<u64>,
    /// Simulated time of the last completion, ns.
    pub end_ns: u64,
    /// Per job, fio's steady-state reports (`steadystate_duration`): one
    /// per clone, or one for a reporting group; empty without it.
    pub steadystate: Vec<Vec<ssdready_core::steady::FioSteadyReport>>,
}

/// Why a simulation gave no result.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The jobs cannot be simulated as asked (a region beyond the device,
    /// virtual time that would not advance): the request's fault.
    #[error("{0}")]
    Refused(String),
    /// The model failed (or a bug): the run's fault.
    #[error("{0}")]
    Model(String),
}
