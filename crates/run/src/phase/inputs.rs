//! What a phase starts from ([`PhaseInputs`], shared by every phase of a
//! run) and what its workers hand back ([`Outcomes`]), below the phase
//! ([`super`]) and its steps, which all use them.

use crate::prepared::PreparedJob;
use crate::worker::WorkerOutcome;
use ssdready_io::clock::Clock;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The workers' outcomes: job index and outcome.
pub(crate) type Outcomes = Vec<(usize, WorkerOutcome)>;

/// What every phase of a run shares.
pub(crate) struct PhaseInputs<'a> {
    pub jobs: &'a [PreparedJob],
    /// Each job's reporting group.
    pub groups: &'a [u32],
    pub clock: Clock,
    pub stop: &'a Arc<AtomicBool>,
    pub profile: bool,
    pub profile_exact: bool,
}
