//! What the worker loop needs of its job: the queue (depth, batches, low
//! mark), its phases (start delay, ramp, runtime), the minimum rates,
//! latency limits and target it checks, what it does around the flow, and
//! its helpers' options: I/O priorities, write buffers, overlaps and
//! `sync_file_range`.

use super::rate::RateConfig;
use crate::sched::{CmdPrio, LatencyTarget};
use crate::spec::{JobSpec, RwMode};
use crate::spec_buffers::{BeforeWrite, Initial};
use std::num::NonZeroU32;

/// The I/O priorities of a job that sets any (fio's `prioclass`/`prio`
/// and cmdprio).
#[derive(Clone, Debug, PartialEq)]
pub struct PrioConfig {
    /// Per direction (read, write), the priority values I/Os may carry,
    /// the thread's first.
    pub values: [Vec<u16>; 2],
    /// cmdprio, when I/Os get priorities of their own.
    pub cmd: Option<CmdPrio>,
    /// Per-priority latency is total latency (`lat_percentiles`), else
    /// completion latency.
    pub total: bool,
}

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
    /// `max_latency` per direction (0: none).
    pub max_latency_ns: [u64; 3],
    /// `serialize_overlap`, when it applies (a job that writes or trims,
    /// at a depth above 1).
    pub serialize_overlap: bool,
    /// `sync_file_range`'s flags, when set.
    pub sync_range_flags: Option<u32>,
    /// I/O priorities, when the job sets any.
    pub prios: Option<PrioConfig>,
    /// What write buffers get before each write; None when writes keep
    /// the engine's random bytes untouched (or the job does not write).
    pub before_write: Option<BeforeWrite>,
    /// The rate limits, when the job has any.
    pub rate: Option<RateConfig>,
    /// `rate_ignore_thinktime`, when it applies: think time (not a
    /// replay's waits) counts as issued.
    pub rate_ignore_thinktime: bool,
    /// `lat_from=schedule`: a paced job's latencies are counted from when
    /// each I/O was due.
    pub lat_from_schedule: bool,
    /// `flow`: the job's weight in its `flow_id` (0: none).
    pub flow_weight: u32,
    /// `flow_sleep`, µs.
    pub flow_sleep_us: u64,
    /// `randseed`: each worker mixes in its number (its I/O priorities'
    /// draws).
    pub randseed: u64,
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
            max_latency_ns: spec.run.max_latency_ns,
            serialize_overlap: spec.access.serialize_overlap
                && spec.rw.modifies()
                && spec.iodepth > 1,
            sync_range_flags: spec.access.sync_file_range.map(|r| r.flags),
            prios: prios(spec),
            before_write: before_write(spec),
            rate: RateConfig::new(spec),
            // Only think time counts (not a replay's waits), as in fio.
            rate_ignore_thinktime: spec.rate_ignore_thinktime
                && spec.thinktime_ns > 0
                && spec.iolog.read.is_empty(),
            lat_from_schedule: spec.sched.lat_from_schedule,
            flow_weight: spec.flow,
            flow_sleep_us: spec.flow_sleep_us,
            randseed: spec.randseed,
        }
    }
}

/// The job's I/O priorities; None when it sets no priority at all.
fn prios(spec: &JobSpec) -> Option<PrioConfig> {
    let sched = &spec.sched;
    let thread = sched.thread_prio();
    if thread.is_none() && !sched.per_prio() {
        return None;
    }
    // fio: an I/O without a priority of its own carries the thread's
    // (0 when none was set).
    let default = thread.unwrap_or_default();
    let cmd = sched.per_prio().then(|| sched.cmdprio.clone());
    let values = std::array::from_fn(|d| match &cmd {
        Some(c) => c.values(d, default).iter().map(|p| p.value()).collect(),
        None => vec![default.value()],
    });
    Some(PrioConfig {
        values,
        cmd,
        total: spec.lat_percentiles,
    })
}

/// What the job's write buffers get before each write; None when writes
/// keep the engine's random bytes untouched (or the job does not write).
fn before_write(spec: &JobSpec) -> Option<BeforeWrite> {
    let writes = !matches!(spec.rw, RwMode::Read | RwMode::RandRead);
    let reads = !matches!(
        spec.rw,
        RwMode::Write | RwMode::RandWrite | RwMode::Trim | RwMode::RandTrim
    );
    let b = &spec.buffers;
    let before = b.before_write(reads, spec.verify.on());
    (writes && !(before == BeforeWrite::Keep && b.initial() == Initial::Random)).then_some(before)
}
