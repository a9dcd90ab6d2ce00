//! Real time: the emulator as a target that brings its own engine.
//!
//! A [`SharedDevice`] is one emulated SSD: the model behind a lock and its
//! data (RAM, allocated lazily by the OS as it is written: a written page
//! costs its size, an unwritten one nothing) in stripes with their own
//! locks ([`crate::data`]). Each worker gets an [`EmuEngine`] on one of the
//! device's I/O queue pairs ([`crate::queues`]: its own while there are
//! enough, `queues`). A DRAM-mode device without injected faults is served
//! without the model's lock: its units are reserved with atomics
//! ([`crate::dram`]), so workers on their own queue pairs share no lock
//! and no written cache line per I/O. A flash device without faults serves
//! reads with the model held shared (through the worker's queue pair's
//! shard of the model's lock, [`crate::model_lock`], so readers on
//! different queue pairs write no common lock word), each locking only
//! the die, channel and link it reserves and taking a controller core
//! with one compare-and-swap ([`crate::device::shared_reads`]);
//! its writes, and every command with injected faults, hold the model
//! alone (docs/strategies.md, "Multi-queue scaling", on what remains). `queue` submits a
//! command to the model at the current time (copying the data in or out, as
//! a DMA would, unless `nocopy`) and files its completion time in the
//! worker's completion queue. On such a flash device a read waits in the
//! worker's own submission queue, with its submission time, until the
//! worker rings the doorbell — when it next looks for completions, or
//! submits anything but a read — and the device then fetches the whole
//! queue at once, as an NVMe controller fetches the entries a doorbell
//! announces. The batch goes on the worker's own lanes of the link, the
//! controller's cores, the channels and the dies (a die's own schedule
//! only where program or erase work may meet the read,
//! [`crate::device::die_lanes`]), which book the device's capacity
//! frame by frame in its ledgers, a chunk at a time ([`crate::ledger`],
//! [`crate::device::Device::read_lanes_batch`]): workers take no
//! device-wide lock and write no common cache line per read, and together
//! they never put more work in a frame than the device can do. Each read
//! is still modelled at its own submission time and the resources are
//! reserved in the same order, so a worker alone gets the same times as
//! before; with several, they share the resources' capacity frame by
//! frame (within a frame their transfers may overlap). A
//! read cannot complete before the worker looks for it, so nothing it can
//! see is late. `getevents` hands back the completions whose
//! time has come, waiting as the device's completion mode says — sleeping
//! like an interrupt-driven thread (`irq`), spinning (`poll`), or sleeping
//! for long waits and spinning the last 50 µs (`hybrid`) — with optional
//! interrupt coalescing. The job's options `completion` and `coalesce_n`,
//! `coalesce_us` override the device's keys for its own queue pair. An idle
//! device costs nothing: there is no device thread; time is the model's.
//!
//! Coalescing works as NVMe's aggregation threshold and time: completions
//! that are due wait in the queue until `coalesce_n` of them are there, or
//! until the oldest has waited `coalesce_us`, whichever comes first; then
//! all that are due are delivered at once (one "interrupt"). A completion
//! alone is held the whole `coalesce_us`, as on a device: that is the
//! latency coalescing costs small, sparse requests. With `coalesce_us=0`
//! there is no timer, and a batch short of `coalesce_n` is delivered when
//! nothing else is outstanding (it would otherwise wait forever).
//!
//! A device with a limited interface (`iface_depth`, [`crate::iface`])
//! takes at most that many commands outstanding: a command is submitted
//! once it has a permit, and `getevents` gives the permit back when it
//! hands the completion out — when the host has seen it. A request that
//! finds no permit free waits in the engine's own queue (a driver's
//! software queue) and is submitted by `getevents` when one is, at that
//! time; `getevents` waits for a permit as for a completion (spinning with
//! `completion=poll`, sleeping otherwise), at most its slice. A job with
//! `temporal_merge` gets a [`crate::merge`] engine instead.
//!
//! A failure of the model (an error from
//! [`Device::submit`](crate::device::Device::submit), or a panic, which
//! would be a bug) fails the command that met it and every later command
//! on the device with the same message: the lock is never left poisoned
//! for the other workers, and no one goes on with a model whose state is
//! not trusted.
//!
//! No wait is unbounded: `getevents` waits at most [`WAIT_SLICE_NS`] per
//! call and then returns, with fewer completions than asked if none came
//! due, so the worker looks at its stop flag and deadline at least that
//! often however far away a modelled completion is (seconds, behind a deep
//! queue on a slow device). An I/O still in flight when the worker stops is
//! simply dropped from the queue: its data was copied when it was
//! submitted, and nothing else holds it.

use crate::config::CompletionMode;
use crate::device::queue_reads::Lanes;
use crate::device::shared_reads::SharedRead;
use crate::device::Extent;
use crate::fault::Outcome as Fault;
use ssdready_core::spec::JobSpec;
use ssdready_core::{Completion, Ddir, IoReq};
use ssdready_io::clock::Clock;
use ssdready_io::{Engine, EngineError, Queued};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// The longest one `getevents` call waits, ns (20 ms).
pub const WAIT_SLICE_NS: u64 = 20_000_000;

pub use crate::shared::SharedDevice;
use crate::shared::{failed, op_of};

pub(crate) mod bufs;
use bufs::SlotBufs;
#[cfg(test)]
mod lanes_tests;

/// A worker's buffers for `spec` on `dev`: none on a `nocopy` device.
pub(crate) fn slot_bufs(
    dev: &SharedDevice,
    spec: &JobSpec,
    seed: u64,
) -> Result<SlotBufs, EngineError> {
    let depth = spec.depth().get() as usize;
    let bs = if dev.params.nocopy {
        0
    } else {
        spec.bs.max() as usize
    };
    SlotBufs::new(depth, bs, seed)
}

/// A worker's queue pair on a [`SharedDevice`].
pub struct EmuEngine {
    dev: Arc<SharedDevice>,
    /// Its queue pair on the device, and its counts there.
    queue: (usize, Arc<crate::queues::Counts>),
    bufs: SlotBufs,
    pending: BinaryHeap<Reverse<(u64, u32, i64)>>,
    mode: CompletionMode,
    coalesce_n: usize,
    coalesce_ns: u64,
    /// Interface permits held: one per pending command when the device's
    /// interface is limited.
    held: usize,
    /// Requests waiting for an interface permit, oldest first.
    parked: VecDeque<IoReq>,
    /// Scratch for the coalescing decision (due times of the pending).
    times: Vec<u64>,
    /// With the power-cut model: each slot's command's number in the undo
    /// log (0: none), and whether its writes are FUA (`sync=1`, `dsync`).
    seqs: Vec<u64>,
    fua: bool,
    /// Its submission queue: reads waiting for the doorbell (module docs),
    /// with their submission times, and scratch for their completions.
    sq: Vec<IoReq>,
    sq_reads: Vec<SharedRead>,
    sq_done: Vec<u64>,
    /// Its own lanes of the device's link and controller, for the reads
    /// of its submission queue ([`crate::ledger`]): owned, not shared.
    lanes: Lanes,
}

impl EmuEngine {
    /// An engine for one worker of `spec` (with no buffers on a `nocopy`
    /// device: nothing is copied).
    pub fn new(dev: Arc<SharedDevice>, spec: &JobSpec, seed: u64) -> Result<Self, EngineError> {
        let (coalesce_n, coalesce_us) = match spec.coalesce {
            Some(c) => (c.n, c.us),
            None => (dev.params.coalesce_n, dev.params.coalesce_us),
        };
        let seqs = match dev.power {
            Some(_) => vec![0; spec.depth().get() as usize],
            None => Vec::new(),
        };
        Ok(EmuEngine {
            lanes: dev.lanes(),
            seqs,
            bufs: slot_bufs(&dev, spec, seed)?,
            mode: match spec.completion {
                None => dev.params.completion,
                // The worker spins itself for the others: the engine's own
                // wait is then never asked for.
                Some(_) => CompletionMode::Irq,
            },
            coalesce_n: coalesce_n as usize,
            coalesce_ns: coalesce_us * 1000,
            times: Vec::with_capacity(spec.depth().get() as usize),
            queue: dev.queues.attach(),
            dev,
            pending: BinaryHeap::new(),
            held: 0,
            parked: VecDeque::new(),
            fua: spec.files.sync_io != ssdready_core::spec_io::SyncIo::None,
            sq: Vec::new(),
            sq_reads: Vec::new(),
            sq_done: Vec::new(),
        })
    }

    /// How many times its lanes wrote the device's ledgers (each a write
    /// of a cache line other workers may write; [`crate::ledger`]).
    pub fn ledger_visits(&self) -> u64 {
        self.lanes.visits()
    }

    /// Keep a read in the submission queue until the doorbell, with its
    /// submission time (now).
    fn enqueue_read(&mut self, req: IoReq) -> Result<(), EngineError> {
        if let Some(why) = self.dev.failure() {
            return Err(failed(why));
        }
        let extent = Extent {
            offset: req.offset,
            len: req.len as u64,
        };
        let t = self.dev.clock.now();
        self.sq_reads.push(SharedRead { t, extent, cmd: 0 });
        self.sq.push(req);
        Ok(())
    }

    /// Ring the doorbell: the device fetches the reads of the submission
    /// queue at once, each at its own submission time; their data is
    /// copied out and their completions filed (module docs).
    fn ring(&mut self) -> Result<(), EngineError> {
        if self.sq.is_empty() {
            return Ok(());
        }
        let reqs = std::mem::take(&mut self.sq);
        self.sq_done.clear();
        self.sq_done.resize(reqs.len(), 0);
        let fetched = self.dev.read_batch(
            (self.queue.0, &self.queue.1),
            &mut self.lanes,
            &mut self.sq_reads,
            &mut self.sq_done,
        );
        self.sq_reads.clear();
        let filed = fetched.and_then(|()| {
            for (req, &done) in reqs.iter().zip(&self.sq_done) {
                self.dev.transfer(&mut self.bufs, req)?;
                self.pending.push(Reverse((done, req.slot, req.len as i64)));
            }
            Ok(())
        });
        self.sq = reqs;
        self.sq.clear();
        filed
    }

    /// Submit one request to the model now and file its completion; its
    /// interface permit, if the interface is limited, is already counted.
    fn submit_taken(&mut self, req: IoReq) -> Result<(), EngineError> {
        let now = self.dev.clock.now();
        let extent = Extent {
            offset: req.offset,
            len: req.len as u64,
        };
        let done = self
            .dev
            .submit_faulty((self.queue.0, &self.queue.1), now, op_of(req.ddir), extent)
            .and_then(|(done, fault)| self.transfer_faulty(&req, fault, done));
        match done {
            Ok((done, res)) => {
                self.pending.push(Reverse((done, req.slot, res)));
                Ok(())
            }
            Err(e) => {
                self.seen_one();
                Err(e)
            }
        }
    }

    /// Move the request's data as its fault allows; returns its completion
    /// time and result: its length, or −errno (a failed read leaves the
    /// buffer as it was, a failed write leaves the stored data as it was; a
    /// torn write stores only its first `keep_bytes`). With the power-cut
    /// model a write goes through its undo log ([`crate::powercut`]), and a
    /// FUA write waits for the model's buffer as a flush does.
    fn transfer_faulty(
        &mut self,
        req: &IoReq,
        fault: Fault,
        done: u64,
    ) -> Result<(u64, i64), EngineError> {
        if let Some(errno) = fault.errno {
            return Ok((done, -i64::from(errno)));
        }
        let len = u64::from(req.len);
        let keep = fault.keep_bytes.map_or(len, |k| k.min(len));
        if self.dev.power.is_some() && req.ddir == Ddir::Write {
            let (done, seq) =
                self.dev
                    .write_powered(&mut self.bufs, req, keep, (done, self.fua))?;
            if let Some(s) = self.seqs.get_mut(req.slot as usize) {
                *s = seq;
            }
            return Ok((done, len as i64));
        }
        let stored = IoReq {
            len: keep as u32,
            ..*req
        };
        self.dev.transfer(&mut self.bufs, &stored)?;
        if let (Some(i), Some(buf)) = (fault.corrupt_byte, self.bufs.slot_mut(req.slot)) {
            if let Some(b) = buf.get_mut(i as usize) {
                *b ^= 0x01;
            }
        }
        Ok((done, req.len as i64))
    }

    /// A completion's result: EIO for a command a power cut caught in flight.
    fn power_result(&mut self, slot: u32, res: i64) -> i64 {
        match self.seqs.get_mut(slot as usize) {
            Some(seq) if *seq > 0 => self.dev.power_result(std::mem::take(seq), res),
            _ => res,
        }
    }

    /// Submit the parked requests that permits are free for, oldest first.
    fn submit_parked(&mut self) -> Result<(), EngineError> {
        while !self.parked.is_empty() && self.dev.iface.try_acquire() {
            let req = self.parked.pop_front().expect("not empty");
            self.held += 1;
            self.submit_taken(req)?;
        }
        Ok(())
    }

    /// A completion leaves the pending queue: the host has seen it.
    fn seen_one(&mut self) {
        if self.held > 0 {
            self.held -= 1;
            self.dev.iface.release();
        }
    }

    /// How many completions may be delivered now, and when to look again
    /// if none may (None: when the next one left is due; module docs on
    /// coalescing). Without coalescing, the due ones are popped straight
    /// off the heap (no scan).
    fn due(&mut self, now: u64) -> (usize, Option<u64>) {
        if self.coalesce_n == 0 {
            return (usize::MAX, None); // pop while due
        }
        let next = self.pending.peek().map(|Reverse((t, _, _))| *t);
        let times = &mut self.times;
        times.clear();
        times.extend(self.pending.iter().map(|Reverse((t, _, _))| *t));
        let ready = times.iter().filter(|&&t| t <= now).count();
        let Some(first) = next.filter(|&t| t <= now) else {
            return (0, next);
        };
        let timer = (self.coalesce_ns > 0).then(|| first.saturating_add(self.coalesce_ns));
        let nothing_else = self.coalesce_ns == 0 && ready == self.pending.len();
        if ready >= self.coalesce_n || timer.is_some_and(|t| now >= t) || nothing_else {
            return (ready, None);
        }
        // Look again when the n-th completion is due or the timer fires.
        let nth = (times.len() >= self.coalesce_n).then(|| {
            let (_, t, _) = times.select_nth_unstable(self.coalesce_n - 1);
            *t
        });
        let at = match (nth, timer) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            // No timer, fewer than n outstanding: when all are due.
            (None, None) => times.iter().copied().max().unwrap_or(now),
        };
        (0, Some(at))
    }

    fn wait_until(&self, t: u64) {
        wait_until(self.dev.clock, self.mode, t)
    }
}

/// Wait until `clock` reads `t`, as completion mode `mode` waits: spinning
/// (`poll`), sleeping (`irq`), or sleeping then spinning the last 50 µs.
pub(crate) fn wait_until(clock: Clock, mode: CompletionMode, t: u64) {
    loop {
        let now = clock.now();
        if now >= t {
            return;
        }
        let left = t - now;
        match mode {
            CompletionMode::Poll => std::hint::spin_loop(),
            CompletionMode::Irq => std::thread::sleep(std::time::Duration::from_nanos(left)),
            CompletionMode::Hybrid => {
                if left > 100_000 {
                    std::thread::sleep(std::time::Duration::from_nanos(left - 50_000));
                } else {
                    std::hint::spin_loop();
                }
            }
        }
    }
}

impl Engine for EmuEngine {
    fn name(&self) -> &'static str {
        "emu"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        if req.ddir == Ddir::Read && self.dev.batches_reads() {
            self.enqueue_read(req)?;
            return Ok(Queued::Pending);
        }
        // What the submission queue holds goes first, in order.
        self.ring()?;
        let iface = &self.dev.iface;
        if iface.limited() && !(self.parked.is_empty() && iface.try_acquire()) {
            self.parked.push_back(req); // submitted by getevents (module docs)
        } else {
            if iface.limited() {
                self.held += 1; // the permit just taken
            }
            self.submit_taken(req)?;
        }
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }

    /// Waits until `min` completions are due, or at most [`WAIT_SLICE_NS`]
    /// (see the module docs).
    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.ring()?;
        let mut got = 0;
        let give_up = self.dev.clock.now().saturating_add(WAIT_SLICE_NS);
        loop {
            let now = self.dev.clock.now();
            let (mut n, again) = self.due(now);
            while n > 0 {
                match self.pending.peek() {
                    Some(Reverse((t, _, _))) if *t <= now => {}
                    _ => break,
                }
                let Reverse((_, slot, res)) = self.pending.pop().expect("peeked");
                let res = self.power_result(slot, res);
                self.seen_one();
                out.push(Completion { slot, result: res });
                got += 1;
                n -= 1;
            }
            self.submit_parked()?;
            let idle = self.pending.is_empty() && self.parked.is_empty();
            if got >= min || idle || now >= give_up {
                return Ok(());
            }
            if self.pending.is_empty() {
                // Only parked requests: wait for another worker's permit.
                let wait = Duration::from_nanos(give_up - now);
                let how = SharedDevice::iface_wait(self.mode);
                self.dev.iface.acquire_within(how, wait);
                continue;
            }
            let next = match again {
                Some(t) => t,
                None => self
                    .pending
                    .peek()
                    .map(|Reverse((t, _, _))| *t)
                    .unwrap_or(now),
            };
            self.wait_until(next.max(now + 1).min(give_up));
        }
    }

    /// A sync is a flush of the device's volatile write cache: with the
    /// power-cut model it goes to the model and completes when the buffer
    /// has drained (at once behind a limited interface: the worker waits);
    /// otherwise the cache is as good as non-volatile (power-loss
    /// protection) and a sync completes at once.
    fn sync(&mut self, slot: u32, _file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        self.ring()?;
        if self.dev.power.is_none() {
            return Ok(Queued::Done(0));
        }
        let (done, seq) = self.dev.flush_powered(self.dev.clock.now(), true)?;
        if self.dev.iface.limited() {
            self.wait_until(done);
            return Ok(Queued::Done(self.dev.power_result(seq, 0)));
        }
        self.seqs[slot as usize] = seq;
        self.pending.push(Reverse((done, slot, 0)));
        Ok(Queued::Pending)
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.bufs.slot_mut(slot)
    }

    fn completion_mode(&self) -> &'static str {
        match self.mode {
            CompletionMode::Irq => "emu-irq",
            CompletionMode::Poll => "emu-poll",
            CompletionMode::Hybrid => "emu-hybrid",
        }
    }
}

impl Drop for EmuEngine {
    /// Commands abandoned in flight give their interface permits back.
    fn drop(&mut self) {
        for _ in 0..self.held {
            self.dev.iface.release();
        }
        self.dev.queues.detach(self.queue.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Params;

    pub(super) fn req(slot: u32, ddir: Ddir, offset: u64) -> IoReq {
        IoReq {
            slot,
            file: 0,
            ddir,
            offset,
            len: 4096,
        }
    }

    pub(super) fn device(spec: &str) -> Arc<SharedDevice> {
        SharedDevice::new(Params::parse(spec).unwrap(), Clock::calibrate()).unwrap()
    }

    #[test]
    fn reads_return_what_was_written() {
        let spec = JobSpec {
            iodepth: 2,
            ..JobSpec::default()
        };
        let mut e = EmuEngine::new(device("null,size=1m"), &spec, 1).unwrap();
        e.queue(req(0, Ddir::Write, 8192)).unwrap();
        let written = e.bufs.get(0, true)[..4096].to_vec();
        assert!(written.iter().any(|&b| b != 0), "writes carry random data");
        let mut out = Vec::new();
        e.getevents(1, &mut out).unwrap();
        assert_eq!(
            out,
            vec![Completion {
                slot: 0,
                result: 4096
            }]
        );
        e.queue(req(1, Ddir::Read, 8192)).unwrap();
        out.clear();
        e.getevents(1, &mut out).unwrap();
        assert_eq!(&e.bufs.get(1, false)[..4096], &written[..]);
    }

    #[test]
    fn reads_wait_for_the_doorbell_and_go_before_a_later_write() {
        // A flash device: reads wait in the submission queue until the
        // worker looks for completions or submits anything else, and go
        // to the model first, in order: a read queued before a write of
        // the same page returns what was there before the write.
        let spec = JobSpec {
            iodepth: 3,
            ..JobSpec::default()
        };
        let dev = device("nvme-tlc,size=256m");
        assert!(dev.batches_reads());
        // Seed 2: slots 1 and 2 get different random data (seeds 3 and 5).
        let mut e = EmuEngine::new(dev.clone(), &spec, 2).unwrap();
        let mut out = Vec::new();
        e.queue(req(1, Ddir::Write, 0)).unwrap();
        e.getevents(1, &mut out).unwrap();
        let first = e.bufs.get(1, true)[..4096].to_vec();
        e.queue(req(0, Ddir::Read, 0)).unwrap();
        assert_eq!((e.sq.len(), e.pending.len()), (1, 0), "the read waits");
        e.queue(req(2, Ddir::Write, 0)).unwrap();
        assert_eq!((e.sq.len(), e.pending.len()), (0, 2), "fetched first");
        assert_ne!(&e.bufs.get(2, true)[..4096], &first[..]);
        out.clear();
        while out.len() < 2 {
            e.getevents(2, &mut out).unwrap();
        }
        assert_eq!(&e.bufs.get(0, false)[..4096], &first[..]);
        e.queue(req(0, Ddir::Read, 0)).unwrap();
        out.clear();
        while out.is_empty() {
            e.getevents(1, &mut out).unwrap();
        }
        assert_eq!(
            out,
            vec![Completion {
                slot: 0,
                result: 4096
            }]
        );
        let second = e.bufs.get(2, true)[..4096].to_vec();
        assert_eq!(&e.bufs.get(0, false)[..4096], &second[..]);
        assert_eq!(dev.totals(&dev.device.read().unwrap()).commands, 4);
    }

    #[test]
    fn a_failed_model_fails_every_later_command_without_poisoning_the_lock() {
        // Unchecked parameters (Params::check refuses them: one die whose 64
        // pages of data exceed the 56 GC can keep valid) make the FTL fail;
        // every later command, on any worker, gets the same error.
        let mut p = crate::config::preset("nvme-tlc").unwrap();
        p.nocopy = true;
        (p.channels, p.dies_per_channel, p.pages_per_block) = (1, 1, 4);
        (p.size, p.op, p.write_buffer) = (64 * 4096, 0.01, 0);
        assert!(p.check().is_err());
        let dev = SharedDevice::new(p, Clock::calibrate()).unwrap();
        let mut a = EmuEngine::new(dev.clone(), &JobSpec::default(), 1).unwrap();
        let mut b = EmuEngine::new(dev.clone(), &JobSpec::default(), 2).unwrap();
        let write = |lpn: u64| IoReq {
            slot: 0,
            file: 0,
            ddir: Ddir::Write,
            offset: lpn * 4096,
            len: 4096,
        };
        let failed_at = (0..64).find_map(|l| a.queue(write(l)).err().map(|e| (l, e.to_string())));
        let (lpn, why) = failed_at.expect("the model fails before all 64 pages are written");
        assert!(
            lpn >= 56 && why.contains("a bug in the model"),
            "{lpn}: {why}"
        );
        let again = b.queue(IoReq {
            ddir: Ddir::Read,
            ..write(0)
        });
        assert_eq!(again.err().map(|e| e.to_string()), Some(why));
        assert!(!dev.device.is_poisoned());
    }

    #[test]
    fn completions_arrive_at_their_modelled_time() {
        let clock = Clock::calibrate();
        // The quickest of five: a loaded machine can only delay a spinning
        // wait (one 38.7 µs outlier at load 5), never hurry it.
        let lat = (0..5)
            .map(|_| {
                let dev = device("dram-ssd,size=1m,completion=poll");
                let mut e = EmuEngine::new(dev, &JobSpec::default(), 1).unwrap();
                let t0 = clock.now();
                e.queue(req(0, Ddir::Read, 0)).unwrap();
                let mut out = Vec::new();
                e.getevents(1, &mut out).unwrap();
                clock.now() - t0
            })
            .min()
            .unwrap();
        assert!((7_600..20_000).contains(&lat), "{lat} ns");
    }

    #[test]
    fn a_long_emulated_io_does_not_hold_getevents() {
        // A 0.5 s read: each getevents call comes back within its slice,
        // empty, so the worker can look at its stop flag and deadline.
        for mode in ["irq", "poll", "hybrid"] {
            let dev = device(&format!(
                "dram-ssd,size=1m,dram_cmd_ns=500ms,completion={mode}"
            ));
            let clock = dev.clock;
            let mut e = EmuEngine::new(dev, &JobSpec::default(), 1).unwrap();
            e.queue(req(0, Ddir::Read, 0)).unwrap();
            let mut out = Vec::new();
            let t0 = clock.now();
            e.getevents(1, &mut out).unwrap();
            let waited = clock.now() - t0;
            assert!(out.is_empty(), "{mode}: nothing is due yet");
            // At least its slice; well short of the read's 0.5 s however
            // loaded the machine (a bound on returning, not a timing).
            assert!(
                (WAIT_SLICE_NS..250_000_000).contains(&waited),
                "{mode}: waited {waited} ns"
            );
        }
    }

    /// An engine with completions pending at `times` (ns) and coalescing
    /// of `n` completions or `us` µs.
    fn coalescing(n: u32, us: u64, times: &[u64]) -> EmuEngine {
        let spec = JobSpec {
            coalesce: Some(ssdready_core::strategy::Coalescing { n, us }),
            ..JobSpec::default()
        };
        let mut e = EmuEngine::new(device("null,size=1m,nocopy=1"), &spec, 1).unwrap();
        for (slot, &t) in times.iter().enumerate() {
            e.pending.push(Reverse((t, slot as u32, 4096)));
        }
        e
    }

    #[test]
    fn coalescing_delivers_a_full_batch_at_once() {
        let mut e = coalescing(4, 100, &[10, 20, 30, 40, 50]);
        assert_eq!(e.due(35), (0, Some(40)), "3 due: wait for the 4th");
        assert_eq!(e.due(40), (4, None), "4 due: deliver them");
        assert_eq!(e.due(60), (5, None), "everything due goes with the batch");
    }

    #[test]
    fn coalescing_holds_a_lone_completion_for_the_whole_time() {
        // Queue depth 1: nothing else will come, yet the device waits for
        // its aggregation time, as NVMe does: the latency coalescing costs.
        let mut e = coalescing(8, 100, &[10]);
        assert_eq!(e.due(10), (0, Some(100_010)));
        assert_eq!(e.due(100_009), (0, Some(100_010)));
        assert_eq!(e.due(100_010), (1, None));
    }

    #[test]
    fn the_coalescing_timer_starts_at_the_oldest_waiting_completion() {
        let mut e = coalescing(8, 1, &[1_000, 1_500, 9_000]);
        assert_eq!(e.due(1_600), (0, Some(2_000)));
        assert_eq!(e.due(2_000), (2, None));
        assert_eq!(
            e.due(500),
            (0, Some(1_000)),
            "nothing due: the first due time"
        );
    }

    #[test]
    fn without_a_coalescing_time_a_short_batch_goes_when_nothing_else_is_outstanding() {
        let mut e = coalescing(8, 0, &[10, 20, 30]);
        assert_eq!(e.due(25), (0, Some(30)));
        assert_eq!(e.due(30), (3, None));
    }

    #[test]
    fn a_depth_one_interface_parks_requests_and_serves_them_one_at_a_time() {
        // dram-ssd: iface_depth=1. Four reads queued at once: one goes to
        // the device, three wait in the engine; each is submitted when the
        // one before it has been seen, so completions are a command apart.
        let spec = JobSpec {
            iodepth: 4,
            ..JobSpec::default()
        };
        let dev = device("dram-ssd,size=1m,completion=poll");
        let mut e = EmuEngine::new(dev.clone(), &spec, 1).unwrap();
        for slot in 0..4 {
            e.queue(req(slot, Ddir::Read, u64::from(slot) * 4096))
                .unwrap();
        }
        assert_eq!((dev.iface.in_use(), e.parked.len()), (1, 3));
        let mut out = Vec::new();
        // The modelled completion of the latest command submitted.
        let latest = || dev.latest(&dev.device.read().unwrap());
        let mut done = vec![latest()];
        while out.len() < 4 {
            e.getevents(1, &mut out).unwrap();
            done.push(latest());
        }
        let slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
        assert_eq!(slots, vec![0, 1, 2, 3], "in order, each once");
        done.dedup();
        assert_eq!(done.len(), 4, "{done:?}");
        // Each submitted once the one before was seen: 7.6 µs apart at least.
        for w in done.windows(2) {
            assert!(w[1] - w[0] >= 7_600, "a command apart: {done:?}");
        }
        assert_eq!(dev.iface.in_use(), 0);
        assert_eq!(dev.totals(&dev.device.read().unwrap()).commands, 4);
    }

    #[test]
    fn opening_a_deep_queue_of_large_buffers_writes_none_of_them() {
        // 1024 × 1 MiB = 1 GiB of buffers: reserved, not written, until used.
        // Counted in resident memory, not timed: the other tests of this
        // process hold far less than the half of it allowed here.
        let resident = || {
            let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
            let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
            pages * 4096
        };
        let spec = JobSpec {
            iodepth: 1024,
            bs: ssdready_core::spec::BlockSizes::Fixed(1 << 20),
            ..JobSpec::default()
        };
        let before = resident();
        let e = EmuEngine::new(device("null,size=1m"), &spec, 1).unwrap();
        let grew = resident().saturating_sub(before);
        assert!(grew < 512 << 20, "{grew} bytes made resident");
        assert_eq!(e.bufs.bytes.len(), 1 << 30);
        let e = EmuEngine::new(device("null,size=1m,nocopy=1"), &spec, 1).unwrap();
        assert!(
            e.bufs.bytes.is_empty(),
            "nocopy: nothing to copy, no buffers"
        );
    }
}
