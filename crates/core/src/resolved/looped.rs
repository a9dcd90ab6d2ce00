//! What the worker loop needs of its job: the queue (depth, batches, low
//! mark), its phases (start delay, ramp, runtime), the minimum rates and
//! latency target it checks, and what it does around the flow.

use crate::sched::LatencyTarget;
use crate::spec::JobSpec;
use std::num::NonZeroU32;

/// The worker loop's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopConfig {
    /// The queue depth the worker keeps: `iodepth`, or 1 for a synchronous
    /// engine (from the engine's facts; the emulator brings its queues).
    pub depth: NonZeroU32,
    /// `iodepth_low`: a full queue drains to this depth before refilling
    /// (the depth when not given or above it).
    pub refill_at: u32,
    /// `iodepth_batch_submit`, at least 1.
    pub batch_submit: u32,
    /// `iodepth_batch_complete_min`, at least 1.
    pub complete_min: u32,
    /// `iodepth_batch_complete_max` (the depth when 0), at least the
    /// minimum and 1.
    pub complete_max: u32,
    /// `startdelay`.
    pub startdelay_ns: u64,
    /// `ramp_time`.
    pub ramp_time_ns: u64,
    /// `runtime`, counted from the end of the ramp.
    pub runtime_ns: Option<u64>,
    /// `latency_target` and friends (None: no search).
    pub latency: Option<LatencyTarget>,
    /// `rate_min` per direction.
    pub rate_min_bytes: [Option<u64>; 3],
    /// `rate_iops_min` per direction.
    pub rate_iops_min: [Option<u64>; 3],
    /// `rate_cycle`.
    pub rate_cycle_ms: u64,
    /// A minimum rate (bytes or IOPS) is set in some direction.
    pub has_min_rate: bool,
    /// The job verifies (a verify method is set).
    pub verifies: bool,
    /// `verify_state_load` on a verifying job.
    pub state_load: bool,
    /// `verify_state_save` on a verifying job that writes.
    pub state_save: bool,
    /// `create_only`: the files are laid out; the job ends there.
    pub create_only: bool,
}

impl LoopConfig {
    /// The worker loop of `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        let depth = NonZeroU32::new(spec.effective_iodepth()).unwrap_or(NonZeroU32::MIN);
        let complete_max = spec
            .batch_complete_max()
            .max(spec.iodepth_batch_complete_min)
            .max(1);
        let verifies = spec.verify.on();
        LoopConfig {
            depth,
            refill_at: spec.run.refill_at(depth.get()),
            batch_submit: spec.iodepth_batch_submit.max(1),
            complete_min: spec.iodepth_batch_complete_min.max(1),
            complete_max,
            startdelay_ns: spec.startdelay_ns,
            ramp_time_ns: spec.ramp_time_ns,
            runtime_ns: spec.runtime_ns,
            latency: spec.sched.latency,
            rate_min_bytes: spec.rate_min_bytes,
            rate_iops_min: spec.rate_iops_min,
            rate_cycle_ms: spec.rate_cycle_ms,
            has_min_rate: spec
                .rate_min_bytes
                .iter()
                .chain(&spec.rate_iops_min)
                .any(Option::is_some),
            verifies,
            state_load: verifies && spec.verify.state_load,
            state_save: verifies && spec.verify.state_save && spec.rw.modifies(),
            create_only: spec.access.create_only,
        }
    }
}
