//! What every workload shares while it runs: the timed phase its workers
//! loop in ([`Phase`]) and the deterministic bytes they write
//! ([`random_bytes`]).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The timed phase: workers loop while [`Phase::running`].
pub(crate) struct Phase {
    pub start: std::time::Instant,
    deadline: std::time::Instant,
    stop: Arc<AtomicBool>,
}

impl Phase {
    pub fn new(runtime_ns: u64, stop: Arc<AtomicBool>) -> Self {
        let start = std::time::Instant::now();
        Phase {
            start,
            deadline: start + std::time::Duration::from_nanos(runtime_ns),
            stop,
        }
    }
    pub fn running(&self) -> bool {
        !self.stopped() && std::time::Instant::now() < self.deadline
    }
    pub fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn elapsed_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

/// Deterministic bytes for job `job` of a run seeded with `seed`.
pub(crate) fn random_bytes(seed: u64, job: u64, len: usize) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    let mut rng =
        rand::rngs::SmallRng::seed_from_u64(seed ^ job.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}
