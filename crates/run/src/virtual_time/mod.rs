//! Virtual time: a deterministic discrete-event run of jobs against the
//! device model. Each worker follows the same
//! [`IoPlan`](ssdready_workload::plan::IoPlan) a real worker would, keeps
//! `iodepth` commands in flight, and issues the next one at the simulated
//! time the previous one completes (plus `host_ns` of host cost per I/O).
//! Writing a device ten times over takes seconds; the same seed gives the
//! same counters.
//!
//! Virtual time must advance: on a device that serves some command in 0 ns
//! (the `null` preset; trims on a DRAM device without command latency;
//! all-zero timings) with `host_ns=0`, a time-based job would never reach its
//! runtime and a sized one would report I/Os per zero seconds. Such a run is
//! refused rather than reported: when more than [`STALL_EVENTS`] (or four per
//! slot, if more) completions in a row happen at one instant, or when a
//! job's measured I/Os took no simulated time at all. `stop` is polled every
//! [`STOP_POLL_EVENTS`] events.
//!
//! Between a worker and the device sits the host's command path
//! ([`ssdready_emu::merge::virtual_time`]): the interface depth (`iface_depth`),
//! the host's cost per command (`host_cmd_ns`), the delay before a
//! completion is seen (`irq_ns` with `completion=irq`), and, for jobs with
//! `temporal_merge`, the merge layer (one per setting, shared by the jobs
//! that use it), whose window ends and dispatches are events here. An STM
//! worker is synchronous: it keeps one request in flight whatever its
//! `iodepth`, as in real time.
//!
//! This is a mode of `run`: the emulator crate keeps the device model and
//! its fronts, and this module drives the model with the workload's plan
//! (`IoPlan`, `Pacer`, the regions of `workload::fileset`). The loop itself is
//! `events` (workers, slots, the event queue); what a run cannot do in
//! virtual time is refused by `refusals`.
//!
//! Why an event loop beside the real worker loop rather than that loop on
//! a virtual clock: both take every step from the same [`JobFlow`]
//! (passes, budgets, ramp, deadlines, steady state, iolog replay), but the
//! real loop is one thread per worker blocking in `getevents`. Driving it
//! from a shared virtual clock would need every worker thread to stop at
//! each event until all the others had (a barrier per I/O), and the order
//! in which threads reach it would change counters from run to run. Here
//! all workers are one queue of events in one thread, ordered by time
//! and then by worker and slot, so the same seed gives the same result:
//! the hashes the tests hold.
//!
//! [`JobFlow`]: ssdready_workload::jobflow::JobFlow

use ssdready_core::spec::JobSpec;
use ssdready_core::stats::WorkerStats;
use ssdready_emu::device::Device;
use ssdready_workload::plan::Region;

mod events;
mod iolog;
mod refusals;
#[cfg(test)]
mod steady_tests;
#[cfg(test)]
mod tests;

pub use refusals::unservable_rate;

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

/// The region a job covers on the device.
pub fn region(spec: &JobSpec, capacity: u64) -> Result<Region, String> {
    clone_region(spec, 0, capacity)
}

/// The region clone `clone` of `spec` covers (`offset_increment` moves
/// each clone further).
pub fn clone_region(spec: &JobSpec, clone: u32, capacity: u64) -> Result<Region, String> {
    let (offset, len) =
        ssdready_workload::fileset::region_on(spec, clone, capacity).map_err(|e| e.to_string())?;
    Ok(Region {
        file: 0,
        offset,
        len,
    })
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

/// Run `jobs` together against `dev` in virtual time, starting where the
/// device's clock stands (so consecutive simulations continue one
/// history). `stop` is polled so a long simulation can be interrupted.
pub fn simulate(
    dev: &mut Device,
    jobs: &[JobSpec],
    stop: &dyn Fn() -> bool,
) -> Result<SimOutcome, SimError> {
    let (_, groups) = crate::phases::phases_and_groups(jobs);
    simulate_in_groups(dev, jobs, &groups, stop)
}

/// [`simulate`] with the jobs' reporting groups given (those of the whole
/// run they are part of), which steady state judges by with
/// `group_reporting`.
pub fn simulate_in_groups(
    dev: &mut Device,
    jobs: &[JobSpec],
    groups: &[u32],
    stop: &dyn Fn() -> bool,
) -> Result<SimOutcome, SimError> {
    if let Some(why) = jobs.iter().find_map(|j| unservable_rate(j, &dev.p)) {
        return Err(SimError::Refused(why));
    }
    let mut sim = events::Sim::new(dev, jobs, groups)?;
    sim.start()?;
    sim.run(stop)?;
    sim.finish()
}
