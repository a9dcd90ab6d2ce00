//! One emulated SSD shared by the workers that use it: the model behind
//! its lock (or, in DRAM mode without faults, its units reserved with
//! atomics; on flash without faults, reads hold it shared through their
//! own queue pair's shard of its lock, [`crate::model_lock`], and lock only
//! the dies they use, [`crate::device::shared_reads`]; a queue pair's
//! waiting reads are fetched as one batch, on its own lanes of the link,
//! the controller and the channels, booked in the device's ledgers,
//! [`crate::device::queue_reads`]),
//! the data, the queue pairs, the power-cut undo log and the
//! host's side of the command interface. A failure of the model fails the
//! device for good ([`crate::engine`]'s module docs); each worker's
//! [`crate::engine::EmuEngine`] submits to it.

use crate::config::{CompletionMode, Params};
use crate::data::{Data, Way};
use crate::device::queue_reads::{Lanes, Ledgers};
use crate::device::{Device, Extent, Op};
use crate::engine::bufs::SlotBufs;
use crate::fault::Outcome as Fault;
use crate::iface::{Interface, Wait};
use crate::memory::DataNotAllocated;
use ssdready_core::{Ddir, IoReq};
use ssdready_io::clock::Clock;
use ssdready_io::EngineError;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

mod powered;

/// One emulated SSD shared by the workers that use it.
pub struct SharedDevice {
    /// The model: held alone to change it, shared by reads that may be,
    /// each through its queue pair's shard of the lock
    /// ([`crate::model_lock`]).
    pub device: crate::model_lock::ModelLock,
    /// DRAM mode without injected faults: the model's units, reserved
    /// without its lock (module docs).
    dram: Option<Arc<crate::dram::DramUnits>>,
    /// Flash without injected faults: reads hold the model shared, and
    /// a queue pair's batches go on its own lanes of the link and the
    /// controller, booked in these ledgers ([`crate::ledger`]).
    shared_reads: Option<Arc<Ledgers>>,
    /// The device's I/O queue pairs.
    pub queues: crate::queues::QueuePairs,
    /// The data, one byte per byte of capacity (empty with `nocopy`).
    pub(crate) data: Data,
    /// The power-cut model, with `fault_power_cut_after` or a silent-tear
    /// rate ([`crate::powercut`]): writes then go through its undo log.
    pub(crate) power: Option<crate::powercut::Power>,
    /// The clock all its times are in.
    pub clock: Clock,
    /// Its parameters.
    pub params: Params,
    capacity: u64,
    /// Why the model failed, once it has.
    failure: OnceLock<String>,
    /// The host's side of the command interface (`iface_depth`).
    pub iface: Interface,
    /// The temporal merge layers in front of the device, one per setting.
    pub(crate) mergers: Mutex<Vec<crate::merge::basics::Registered>>,
}

impl SharedDevice {
    /// A fresh device; its data is zero until written. Fails, rather than
    /// aborting, when the allocator cannot reserve the data (the memory
    /// check of [`crate::memory`] is meant to refuse such a device first).
    pub fn new(params: Params, clock: Clock) -> Result<Arc<SharedDevice>, DataNotAllocated> {
        let capacity = params.logical_pages() * params.page_bytes as u64;
        // The data first: reserving it is instant, building the FTL is not.
        let data = if params.nocopy {
            Data::zeroed(0)
        } else {
            Data::zeroed(capacity)
        }
        .ok_or(DataNotAllocated { bytes: capacity })?;
        let mut dev = Device::new(&params);
        let shared_reads = (dev.reads_shareable() && !params.faults.any()).then(|| {
            let ledgers = Arc::new(dev.ledgers());
            dev.book_in(ledgers.clone());
            ledgers
        });
        Ok(Arc::new(SharedDevice {
            capacity: dev.capacity(),
            dram: dev.dram_units().filter(|_| !params.faults.any()),
            shared_reads,
            power: crate::powercut::Power::of(&params),
            queues: crate::queues::QueuePairs::new(params.queues),
            device: crate::model_lock::ModelLock::new(dev, params.queues),
            data,
            clock,
            iface: Interface::new(params.iface_depth),
            params,
            failure: OnceLock::new(),
            mergers: Mutex::new(Vec::new()),
        }))
    }

    /// A worker's own lanes of the device's link, controller, channels and
    /// dies, for the reads of its queue pair ([`Device::read_lanes_batch`]).
    pub fn lanes(&self) -> Lanes {
        match &self.shared_reads {
            Some(ledgers) => ledgers.lanes(&self.params),
            None => Lanes::new(&self.params),
        }
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Submit a command to the model at `t` (module docs on failures).
    pub fn submit(&self, t: u64, op: Op, extents: &[Extent]) -> Result<u64, EngineError> {
        self.with_model(|dev| dev.submit(t, op, extents))
    }

    /// [`SharedDevice::submit`] of a one-extent command on queue pair
    /// `queue`, and its injected fault ([`crate::fault`]), decided under the
    /// same lock. A DRAM-mode device without faults takes no lock but the
    /// queue pair's, and that only when it is shared; a flash device
    /// without faults reads with the model held shared (module docs).
    pub fn submit_faulty(
        &self,
        (queue, counts): (usize, &crate::queues::Counts),
        t: u64,
        op: Op,
        extent: Extent,
    ) -> Result<(u64, Fault), EngineError> {
        if let Some(units) = &self.dram {
            if let Some(why) = self.failure.get() {
                return Err(failed(why));
            }
            let _sq = self.queues.get(queue).enter();
            let pages = crate::device::lpn_range(&self.params, &extent).count() as u64;
            let done = units.submit(t, op, extent.len, pages, 1);
            let done = self.params.stall.delay(t, done);
            counts.count(1, done);
            return Ok((done, Fault::default()));
        }
        if self.shared_reads.is_some() && op == Op::Read {
            return self.read_shared(queue, counts, t, extent);
        }
        let faulty = self.params.faults.any() && op != Op::Trim;
        self.with_model(|dev| -> Result<_, crate::ftl::FtlError> {
            if let Some(refused) = refused(dev, t, op, extent) {
                return Ok(refused);
            }
            let done = dev.submit(t, op, &[extent])?;
            if !faulty {
                return Ok((done, Fault::default()));
            }
            let f = dev
                .faults
                .decide(op == Op::Write, extent.offset, extent.len);
            Ok((done.saturating_add(f.extra_ns), f))
        })
    }

    /// A read on queue pair `queue` with the model held shared
    /// ([`crate::device::shared_reads`]); a panic fails the device for good.
    fn read_shared(
        &self,
        queue: usize,
        counts: &crate::queues::Counts,
        t: u64,
        extent: Extent,
    ) -> Result<(u64, Fault), EngineError> {
        if let Some(why) = self.failure.get() {
            return Err(failed(why));
        }
        let pair = self.queues.get(queue);
        let _sq = pair.enter();
        let cmd = crate::device::shared_reads::shared_command(queue, pair.next_command());
        let Ok(dev) = self.device.read_queue(queue) else {
            return Err(self.fail(POISONED.into()));
        };
        match catch_unwind(AssertUnwindSafe(|| dev.read_shared_as(t, &extent, cmd))) {
            Ok(done) => {
                counts.count(1, done);
                Ok((done, Fault::default()))
            }
            Err(panic) => Err(self.panicked(panic)),
        }
    }

    /// Whether a read of a worker's may wait in its queue pair's
    /// submission queue until the worker rings the doorbell
    /// ([`crate::engine`]'s module docs): a flash device whose reads hold
    /// the model shared, behind an interface without a limit.
    pub(crate) fn batches_reads(&self) -> bool {
        self.shared_reads.is_some() && !self.iface.limited()
    }

    /// The reads of queue pair `queue`'s submission queue, fetched at once
    /// with the model held shared, on the worker's own `lanes` of the link
    /// and the controller ([`Device::read_lanes_batch`]): each one's
    /// command number is given here, its completion time goes into
    /// `done`. A panic fails the device for good.
    pub(crate) fn read_batch(
        &self,
        (queue, counts): (usize, &crate::queues::Counts),
        lanes: &mut Lanes,
        reads: &mut [crate::device::shared_reads::SharedRead],
        done: &mut [u64],
    ) -> Result<(), EngineError> {
        if let Some(why) = self.failure.get() {
            return Err(failed(why));
        }
        let pair = self.queues.get(queue);
        let _sq = pair.enter();
        let first = pair.next_commands(reads.len() as u64);
        for (r, seq) in reads.iter_mut().zip(first..) {
            r.cmd = crate::device::shared_reads::shared_command(queue, seq);
        }
        let Ok(dev) = self.device.read_queue(queue) else {
            return Err(self.fail(POISONED.into()));
        };
        let read = || match &self.shared_reads {
            Some(ledgers) => dev.read_lanes_batch((ledgers, lanes), reads, done),
            None => dev.read_shared_batch(reads, done),
        };
        match catch_unwind(AssertUnwindSafe(read)) {
            Ok(()) => {
                for &d in done.iter() {
                    counts.count(1, d);
                }
                Ok(())
            }
            Err(panic) => Err(self.panicked(panic)),
        }
    }

    /// Run `f` on the model under its lock; a model error or panic fails
    /// the device for good (module docs).
    pub(crate) fn with_model<R, E: std::fmt::Display>(
        &self,
        f: impl FnOnce(&mut Device) -> Result<R, E>,
    ) -> Result<R, EngineError> {
        if let Some(why) = self.failure.get() {
            return Err(failed(why));
        }
        let Ok(mut dev) = self.device.write() else {
            return Err(self.fail(POISONED.into()));
        };
        let held = |dev: &mut Device| {
            // What queue pairs read on their own lanes of the dies first,
            // and after, until when each die has program work queued
            // ([`crate::device::die_lanes`]).
            dev.absorb_lane_reads();
            let r = f(dev);
            dev.publish_die_ends();
            r
        };
        match catch_unwind(AssertUnwindSafe(|| held(&mut dev))) {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.fail(e.to_string())),
            Err(panic) => Err(self.panicked(panic)),
        }
    }

    /// Fail the device for a panic in the model.
    fn panicked(&self, panic: Box<dyn std::any::Any + Send>) -> EngineError {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        self.fail(format!(
            "the model panicked ({what}): a bug, please report it"
        ))
    }

    /// Why the model failed, once it has.
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    fn fail(&self, why: String) -> EngineError {
        failed(self.failure.get_or_init(|| why))
    }

    /// The model's counters with the queue pairs' added: what the device
    /// has done, however its commands reached it.
    pub fn totals(&self, dev: &Device) -> crate::device::DeviceCounters {
        let (q, mut c) = (self.queues.totals(), dev.totals());
        c.commands += q.commands;
        c.extents += q.extents;
        c
    }

    /// The latest completion time handed out (where the model's time
    /// stands), however commands reached it.
    pub fn latest(&self, dev: &Device) -> u64 {
        dev.now.max(self.queues.totals().latest)
    }

    /// Move a request's data between its slot's buffer and the device, as
    /// the command's DMA would (nothing with `nocopy`). A trimmed range
    /// reads back as zeroes, as on an SSD that reports deterministic
    /// zeroes after a deallocate.
    pub(crate) fn transfer(&self, bufs: &mut SlotBufs, req: &IoReq) -> Result<(), EngineError> {
        if self.params.nocopy {
            return Ok(());
        }
        if req.ddir == Ddir::Trim {
            let mut zeroes = vec![0u8; req.len as usize];
            self.data.copy(req.offset as usize, &mut zeroes, Way::In);
            return Ok(());
        }
        let (o, l) = (req.offset as usize, req.len as usize);
        let write = req.ddir == Ddir::Write;
        let way = if write { Way::In } else { Way::Out };
        if !bufs.holds(req.slot, l) || !self.data.copy(o, &mut bufs.get(req.slot, write)[..l], way)
        {
            return Err(failed(&format!(
                "{l} bytes at offset {o} (slot {}) are outside its {} bytes",
                req.slot,
                self.data.len()
            )));
        }
        Ok(())
    }

    /// How a host in completion mode `mode` waits for the interface.
    pub(crate) fn iface_wait(mode: CompletionMode) -> Wait {
        match mode {
            CompletionMode::Poll => Wait::Spin,
            CompletionMode::Irq | CompletionMode::Hybrid => Wait::Sleep,
        }
    }
}

const POISONED: &str = "its lock was poisoned by a panic";

/// Under the model's lock: the outcome of a command the zones refuse (its
/// completion and errno), or None when the model is to serve it (the zones
/// have taken a write into account).
fn refused(dev: &mut Device, t: u64, op: Op, e: Extent) -> Option<(u64, Fault)> {
    let zones = dev.ftl.as_mut()?.zones.as_mut()?;
    let r = match op {
        Op::Write => zones.write(e.offset, e.len),
        Op::Read => zones.read(e.offset, e.len),
        Op::Trim | Op::Flush => Ok(()),
    };
    let err = r.err()?;
    let done = dev.zone_command(t, 0);
    Some((
        done,
        Fault {
            errno: Some(err.errno()),
            ..Fault::default()
        },
    ))
}

/// The device operation of a request's direction.
pub fn op_of(ddir: Ddir) -> Op {
    match ddir {
        Ddir::Read => Op::Read,
        Ddir::Write => Op::Write,
        Ddir::Trim => Op::Trim,
    }
}

pub(crate) fn failed(why: &str) -> EngineError {
    EngineError::Sys {
        what: "emulated device".into(),
        source: std::io::Error::other(why.to_string()),
    }
}
