//! Temporal merge: concurrent requests — even to unrelated places — combined
//! into one command of a device that takes vectored (multi-extent)
//! commands, so that the per-command costs (the host's submission path, the
//! device's command handling, the completion and its interrupt) are paid
//! once for many requests (Shin; Yu, Shin et al., HotStorage 2012).
//! Where per-request software cost, not the device, limits small random
//! I/O, this is what lets it approach the device's peak.
//!
//! Two forms, chosen per job with `temporal_merge`:
//!
//! * **STM** ([`stm`], synchronous): each thread issues one request and
//!   waits for it. The first thread in while no command is gathering becomes
//!   the *winner*: it keeps the command open for `merge_window_us`, takes
//!   every request that arrives meanwhile, issues them as one command and
//!   polls for its completion; the others (*losers*) sleep until the winner
//!   wakes them. A command also closes as soon as it is full (`merge_max`
//!   extents, `merge_max_bytes` bytes) or holds a request of every thread
//!   that shares the layer (no one else can come). Its merge count is
//!   limited by the number of threads.
//! * **ATM** ([`atm`], asynchronous): requests join a queue and their
//!   threads go on (up to `iodepth` each); one dispatcher thread takes the
//!   oldest request's kind (read, write, trim) from the queue once that
//!   request has waited `merge_window_us` or the queue holds a full command
//!   of it, issues them as one command, polls for it and hands each
//!   completion back to its thread.
//!
//! A command carries one kind of request. `merge_window_us=0` turns merging
//! off (one request per command) while the layer still queues and
//! dispatches. Threads of every job on one device that use the same
//! settings share one layer, as a kernel's merge layer would be per device;
//! the layer lives while any of their engines does.
//!
//! This is the one place where worker threads share state on purpose: the
//! gathering command (STM) or the queue (ATM), each behind its own lock, and
//! the device's interface gate ([`crate::iface`]), which the winner or the
//! dispatcher holds from submission until it has seen the completion.
//!
//! Data moves between a request's buffer and the emulated device when the
//! request enters the layer (its thread copies its own buffer, under the
//! data lock), so every request reads and writes exactly its own range in
//! the order the requests entered; the command's modelled time covers the
//! transfer. Each command is counted once, by the engine of its first
//! request; each request records how long it waited for its command to
//! close (the window) and then to be issued (the interface), in the job's
//! `temporal_merge` result.
//!
//! Virtual time (`ssdready_run::virtual_time`) runs the same two forms as events
//! ([`virtual_time`]), with the host costs the device's parameters give
//! (`host_cmd_ns`, `irq_ns`, `wake_ns`).

pub mod atm;
pub(crate) mod basics;
pub mod stm;
pub mod virtual_time;

pub use basics::{MergeConfig, Served};

use crate::config::CompletionMode;
use crate::device::Extent;
use crate::engine::bufs::SlotBufs;
use crate::engine::{slot_bufs, EmuEngine, WAIT_SLICE_NS};
use crate::shared::{failed, op_of, SharedDevice};
use basics::{lock, Registered};
use ssdready_core::spec::{JobSpec, TemporalMerge};
use ssdready_core::stats::MergeStats;
use ssdready_core::{Completion, IoReq};
use ssdready_io::{Engine, EngineError, Queued};
use std::any::Any;
use std::sync::{Arc, Weak};

/// One live merge layer of a device.
#[derive(Clone)]
enum Layer {
    Stm(Arc<stm::Stm>),
    Atm(Arc<atm::Atm>),
}

/// The layer of `cfg` on `dev`: the live one, or a new one.
fn layer_for(dev: &Arc<SharedDevice>, cfg: MergeConfig) -> Layer {
    let mut reg = lock(&dev.mergers);
    reg.retain(|r| r.layer.strong_count() > 0);
    for r in reg.iter().filter(|r| r.cfg == cfg) {
        if let Some(live) = r.layer.upgrade() {
            return match live.downcast::<stm::Stm>() {
                Ok(s) => Layer::Stm(s),
                Err(live) => Layer::Atm(
                    live.downcast::<atm::Atm>()
                        .expect("a merge layer is STM or ATM"),
                ),
            };
        }
    }
    let (layer, any): (Layer, Arc<dyn Any + Send + Sync>) = match cfg.mode {
        TemporalMerge::Atm => {
            let a = Arc::new(atm::Atm::new(cfg, dev.clone()));
            (Layer::Atm(a.clone()), a)
        }
        _ => {
            let s = Arc::new(stm::Stm::new(cfg, dev.clone()));
            (Layer::Stm(s.clone()), s)
        }
    };
    let layer_weak: Weak<dyn Any + Send + Sync> = Arc::downgrade(&any);
    reg.push(Registered {
        cfg,
        layer: layer_weak,
    });
    layer
}

/// The engine of one worker of `spec` on `dev`: a merge layer's when the
/// job asks for temporal merge, the plain queue pair otherwise.
pub fn open_engine(
    dev: Arc<SharedDevice>,
    spec: &JobSpec,
    seed: u64,
) -> Result<Box<dyn Engine + Send>, EngineError> {
    Ok(match MergeConfig::of(spec) {
        None => Box::new(EmuEngine::new(dev, spec, seed)?),
        Some(cfg) => Box::new(MergeEngine::new(dev, spec, seed, cfg)?),
    })
}

/// A worker's way into a merge layer.
pub struct MergeEngine {
    dev: Arc<SharedDevice>,
    bufs: SlotBufs,
    layer: Layer,
    /// ATM: this worker's completions, and how many it waits for.
    inbox: Arc<atm::Inbox>,
    in_flight: usize,
    mode: CompletionMode,
    stats: MergeStats,
}

impl MergeEngine {
    /// Join (or start) the layer of `cfg` on `dev`.
    pub fn new(
        dev: Arc<SharedDevice>,
        spec: &JobSpec,
        seed: u64,
        cfg: MergeConfig,
    ) -> Result<MergeEngine, EngineError> {
        let bufs = slot_bufs(&dev, spec, seed)?;
        let layer = layer_for(&dev, cfg);
        if let Layer::Stm(s) = &layer {
            s.join();
        }
        Ok(MergeEngine {
            mode: dev.params.completion,
            dev,
            bufs,
            layer,
            inbox: Arc::default(),
            in_flight: 0,
            stats: MergeStats::default(),
        })
    }
}

impl Drop for MergeEngine {
    fn drop(&mut self) {
        if let Layer::Stm(s) = &self.layer {
            s.leave();
        }
    }
}

impl Engine for MergeEngine {
    fn name(&self) -> &'static str {
        "emu"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        self.dev.transfer(&mut self.bufs, &req)?;
        let ext = Extent {
            offset: req.offset,
            len: u64::from(req.len),
        };
        match &self.layer {
            Layer::Stm(s) => {
                let served = s.submit(op_of(req.ddir), ext)?;
                served.record(&mut self.stats);
                Ok(Queued::Done(i64::from(req.len)))
            }
            Layer::Atm(a) => {
                a.enqueue(op_of(req.ddir), ext, req.slot, &self.inbox);
                self.in_flight += 1;
                Ok(Queued::Pending)
            }
        }
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }

    /// STM completes every request in `queue`; ATM's completions come from
    /// the dispatcher, waited for at most [`WAIT_SLICE_NS`] per call.
    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        if matches!(self.layer, Layer::Stm(_)) || self.in_flight == 0 {
            return Ok(());
        }
        let clock = self.dev.clock;
        let give_up = clock.now().saturating_add(WAIT_SLICE_NS);
        let mut got = 0;
        loop {
            for d in self.inbox.take() {
                self.in_flight -= 1;
                d.served.record(&mut self.stats);
                let result = d.result.map_err(|why| failed(&why))?;
                out.push(Completion {
                    slot: d.slot,
                    result,
                });
                got += 1;
            }
            let now = clock.now();
            if got >= min || self.in_flight == 0 || now >= give_up {
                return Ok(());
            }
            self.inbox.wait(self.mode, give_up - now);
        }
    }

    fn completion_mode(&self) -> &'static str {
        match (&self.layer, self.mode) {
            (Layer::Stm(_), _) => "emu-stm+poll",
            (Layer::Atm(_), CompletionMode::Poll) => "emu-atm+poll",
            (Layer::Atm(_), CompletionMode::Irq) => "emu-atm+irq",
            (Layer::Atm(_), CompletionMode::Hybrid) => "emu-atm+hybrid",
        }
    }

    fn take_merge_stats(&mut self) -> Option<MergeStats> {
        Some(std::mem::take(&mut self.stats))
    }
}

#[cfg(test)]
mod tests;
