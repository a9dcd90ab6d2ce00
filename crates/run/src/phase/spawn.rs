//! A phase's workers: one thread per worker of each job, each with its
//! context (its view of the job's targets, its CPUs, the job's shared
//! flow, locks and zone state, the jobs it waits for), held at two
//! barriers: `opened` once every engine is open, `start` to begin I/O.

use super::inputs::PhaseInputs;
use crate::failure::Failure;
use crate::observer::notices;
use crate::worker::{self, Live, WorkerCtx, WorkerOutcome};
use ssdready_core::spec::CpusPolicy;
use ssdready_io::bpf::JoinTable;
use std::collections::HashMap;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

/// One worker's job index, number and thread.
pub(crate) type Handle = (usize, u32, JoinHandle<WorkerOutcome>);

/// The phase's running workers.
pub(crate) struct Workers {
    /// Job index, worker number, thread.
    pub handles: Vec<Handle>,
    /// Job index and live counters of each worker, in start order.
    pub lives: Vec<(usize, Arc<Live>)>,
    /// One end flag per worker: a steady-state unit ends alone.
    pub ends: crate::steadystate::EndFlags,
    /// Passed once every worker has its engine.
    pub opened: Arc<Barrier>,
    /// Passed to start I/O.
    pub start: Arc<Barrier>,
    /// fio's steady-state units of the workers, once they started.
    pub steady: Vec<crate::steadystate::Unit>,
}

impl Workers {
    /// When a worker failed to open its engine, end them all: none starts I/O.
    pub fn end_all_if_one_failed(&self) {
        if self
            .lives
            .iter()
            .any(|(_, l)| l.failed.load(std::sync::atomic::Ordering::Relaxed))
        {
            self.ends.end_all();
        }
    }
}

/// Start the workers of jobs `members`, numbered from `*number` on.
pub(crate) fn spawn(
    run: &PhaseInputs,
    members: &[usize],
    number: &mut u32,
    join: Option<Arc<JoinTable>>,
) -> Result<Workers, Failure> {
    let jobs = run.jobs;
    let total: usize = members.iter().map(|&i| jobs[i].spec.numjobs as usize).sum();
    let mut w = Workers {
        handles: Vec::new(),
        lives: Vec::new(),
        ends: crate::steadystate::EndFlags::new(total),
        opened: Arc::new(Barrier::new(total + 1)),
        start: Arc::new(Barrier::new(total + 1)),
        steady: Vec::new(),
    };
    let mut flows: HashMap<u32, Arc<worker::FlowShared>> = HashMap::new();
    let run_workers = jobs.iter().map(|j| j.spec.numjobs).sum();
    for &ji in members {
        let j = &jobs[ji];
        // wait_for names an earlier job: its workers, when it runs in this
        // phase (one of an earlier phase has ended already).
        let waitees: Vec<Arc<Live>> = match &j.spec.wait_for {
            Some(name) => w
                .lives
                .iter()
                .filter(|(i, _)| jobs[*i].spec.name == *name)
                .map(|(_, l)| l.clone())
                .collect(),
            None => Vec::new(),
        };
        let flow = (j.spec.flow > 0).then(|| flows.entry(j.spec.flow_id).or_default().clone());
        let file_locks = worker::access::FileLocks::for_job(&j.spec, j.targets.len());
        for i in 0..j.spec.numjobs {
            let live = Arc::new(Live::default());
            w.lives.push((ji, live.clone()));
            let cpus = j
                .spec
                .cpus_allowed
                .as_ref()
                .map(|list| match j.spec.cpus_allowed_policy {
                    CpusPolicy::Shared => list.clone(),
                    CpusPolicy::Split => vec![list[i as usize % list.len()]],
                });
            let view = j.clone_view(i);
            let zbd = crate::zbd::for_worker(j.zbd.as_ref(), &j.spec, view.regions.first());
            let ctx = WorkerCtx {
                spec: j.spec.clone(),
                job: j.resolved.clone(),
                targets: view.targets,
                regions: view.regions,
                index: i,
                number: *number,
                clock: run.clock,
                stop: run.stop.clone(),
                end_phase: w.ends.flag(w.lives.len() - 1),
                live,
                opened: w.opened.clone(),
                start: w.start.clone(),
                cpus,
                emu: j.emu.clone(),
                join: join.clone(),
                waitees: waitees.clone(),
                flow: flow.clone(),
                zbd,
                run_workers,
                file_locks: file_locks.clone(),
            };
            let said = notices::current();
            let h = std::thread::Builder::new()
                .name(format!("{}.{i}", j.spec.name))
                .spawn(move || said.scope(|| worker::run(ctx)))
                .map_err(|e| Failure::Runtime(format!("starting a worker thread: {e}")))?;
            w.handles.push((ji, *number, h));
            *number += 1;
        }
    }
    Ok(w)
}
