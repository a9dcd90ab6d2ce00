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
pub mod stm;
pub mod virtual_time;

use crate::config::CompletionMode;
use crate::device::{Extent, Op};
use crate::engine::{op_of, slot_bufs, EmuEngine, SharedDevice, SlotBufs, WAIT_SLICE_NS};
use ssdready_core::spec::{JobSpec, TemporalMerge};
use ssdready_core::stats::MergeStats;
use ssdready_core::{Completion, IoReq};
use ssdready_io::{Engine, EngineError, Queued};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// A merge layer's settings (from the job's options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeConfig {
    /// `Stm` or `Atm`.
    pub mode: TemporalMerge,
    /// How long a command gathers requests after its first, ns.
    pub window_ns: u64,
    /// Most requests (extents) per command.
    pub max_extents: u32,
    /// Most bytes per command (0: no limit).
    pub max_bytes: u64,
}

impl MergeConfig {
    /// The settings of `spec`, or `None` when it does not merge.
    pub fn of(spec: &JobSpec) -> Option<MergeConfig> {
        (spec.temporal_merge != TemporalMerge::Off).then_some(MergeConfig {
            mode: spec.temporal_merge,
            window_ns: spec.merge_window_ns,
            max_extents: spec.merge_max.max(1),
            max_bytes: spec.merge_max_bytes,
        })
    }

    /// Whether commands gather more than one request at all.
    pub fn merging(&self) -> bool {
        self.window_ns > 0 && self.max_extents > 1
    }

    /// Whether a command of `n` requests and `bytes` bytes can take one more
    /// of `len` bytes.
    pub fn fits(&self, n: usize, bytes: u64, len: u64) -> bool {
        self.merging()
            && n < self.max_extents as usize
            && (self.max_bytes == 0 || bytes.saturating_add(len) <= self.max_bytes)
    }

    /// Whether a command of `n` requests and `bytes` bytes takes no more.
    pub fn full(&self, n: usize, bytes: u64) -> bool {
        !self.merging()
            || n >= self.max_extents as usize
            || (self.max_bytes != 0 && bytes >= self.max_bytes)
    }
}

/// When a request of a merged command entered the layer, when its command
/// closed, was issued (took the device's interface; in virtual time the
/// host's `host_cmd_ns` follows, as it does for a command without merging)
/// and completed (clock ns), and — for the request that opened the command —
/// how many requests it carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Served {
    pub entered: u64,
    pub closed: u64,
    pub issued: u64,
    pub done: u64,
    pub leader_of: Option<usize>,
}

impl Served {
    /// Count this request (and its command, when it led it) in `stats`.
    pub fn record(&self, stats: &mut MergeStats) {
        stats
            .window_wait
            .record(self.closed.saturating_sub(self.entered));
        stats
            .issue_wait
            .record(self.issued.saturating_sub(self.closed));
        if let Some(n) = self.leader_of {
            stats.record_command(n);
        }
    }
}

/// Index of an operation in per-kind arrays.
pub(crate) fn kind(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
        Op::Flush => 3,
    }
}

/// Lock, ignoring poisoning: the layer's state is consistent between
/// statements, and a panic elsewhere must not wedge the other threads.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One live merge layer of a device.
#[derive(Clone)]
enum Layer {
    Stm(Arc<stm::Stm>),
    Atm(Arc<atm::Atm>),
}

/// A device's registry entry: a layer's settings and a weak handle (the
/// engines hold it alive).
pub(crate) struct Registered {
    cfg: MergeConfig,
    stm: Weak<stm::Stm>,
    atm: Weak<atm::Atm>,
}

/// The layer of `cfg` on `dev`: the live one, or a new one.
fn layer_for(dev: &Arc<SharedDevice>, cfg: MergeConfig) -> Layer {
    let mut reg = lock(&dev.mergers);
    reg.retain(|r| r.stm.strong_count() + r.atm.strong_count() > 0);
    for r in reg.iter().filter(|r| r.cfg == cfg) {
        if let Some(s) = r.stm.upgrade() {
            return Layer::Stm(s);
        }
        if let Some(a) = r.atm.upgrade() {
            return Layer::Atm(a);
        }
    }
    let (layer, stm, atm) = match cfg.mode {
        TemporalMerge::Atm => {
            let a = Arc::new(atm::Atm::new(cfg, dev.clone()));
            (Layer::Atm(a.clone()), Weak::new(), Arc::downgrade(&a))
        }
        _ => {
            let s = Arc::new(stm::Stm::new(cfg, dev.clone()));
            (Layer::Stm(s.clone()), Arc::downgrade(&s), Weak::new())
        }
    };
    reg.push(Registered { cfg, stm, atm });
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
                let result = d.result.map_err(|why| crate::engine::failed(&why))?;
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
