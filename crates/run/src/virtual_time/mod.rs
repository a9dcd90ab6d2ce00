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
use ssdready_emu::device::Device;

mod events;
mod iolog;
mod outcome;
mod refusals;
mod region;
#[cfg(test)]
mod steady_tests;
#[cfg(test)]
mod tests;

pub use outcome::{SimError, SimOutcome, MAX_SERIES_SECONDS, STALL_EVENTS, STOP_POLL_EVENTS};
pub use refusals::unservable_rate;
pub use region::{clone_region, region};

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
