//! Everything a worker needs ([`WorkerCtx`]), below the worker
//! ([`super`]) and its steps, which all read it.

use super::access::FileLocks;
use super::tokens::FlowShared;
use crate::live::Live;
use ssdready_core::spec::JobSpec;
use ssdready_io::bpf::JoinTable;
use ssdready_io::clock::Clock;
use ssdready_io::target::Target;
use ssdready_workload::plan::Region;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};

/// Everything a worker needs.
pub struct WorkerCtx {
    pub spec: Arc<JobSpec>,
    /// The job resolved once for every worker: its flow and loop.
    pub job: Arc<ssdready_core::resolved::ResolvedJob>,
    pub targets: Arc<Vec<Target>>,
    pub regions: Vec<Region>,
    pub index: u32,
    /// 1-based number of the worker in the run (fio's thread number).
    pub number: u32,
    pub clock: Clock,
    pub stop: Arc<AtomicBool>,
    /// Set by the run when the phase must end early (another job's exitall).
    pub end_phase: Arc<AtomicBool>,
    pub live: Arc<Live>,
    /// Passed once every worker of the phase has set up its engine (or
    /// failed to); the run then sets `end_phase` if any failed.
    pub opened: Arc<Barrier>,
    /// Passed when the phase starts its I/O.
    pub start: Arc<Barrier>,
    pub cpus: Option<Vec<usize>>,
    /// The emulated device, when the target is the SSD emulator: it brings
    /// its own engine.
    pub emu: Option<Arc<ssdready_emu::engine::SharedDevice>>,
    /// The kernel's per-I/O times (`--decompose` with tp_btf): each I/O to a
    /// block device is looked up there when reaped.
    pub join: Option<Arc<JoinTable>>,
    /// The workers of the job this one waits for (`wait_for`), when that
    /// job runs in the same phase: I/O starts once all are done.
    pub waitees: Vec<Arc<Live>>,
    /// The counters of the job's `flow_id`, when it has a `flow` weight.
    pub flow: Option<Arc<FlowShared>>,
    /// zonemode=zbd: the worker's view of its target's zones.
    pub zbd: Option<crate::zbd::WorkerZbd>,
    /// How many workers the run has (fio's thread count: `dedupe_global`
    /// spreads its working set over them).
    pub run_workers: u32,
    /// `lockfile`: the job's file locks, shared by its clones.
    pub file_locks: Option<Arc<FileLocks>>,
}
