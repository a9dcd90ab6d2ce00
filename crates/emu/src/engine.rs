//! Real time: the emulator as a target that brings its own engine.
//!
//! A [`SharedDevice`] is one emulated SSD: the model and its data (RAM,
//! allocated lazily by the OS as it is written) behind a mutex. Each worker
//! gets an [`EmuEngine`], its own NVMe-like queue pair: `queue` submits a
//! command to the model at the current time (copying the data in or out, as
//! a DMA would, unless `nocopy`) and files its completion time in the
//! worker's completion queue; `getevents` hands back the completions whose
//! time has come, waiting as the device's completion mode says — sleeping
//! like an interrupt-driven thread (`irq`), spinning (`poll`), or sleeping
//! for long waits and spinning the last 50 µs (`hybrid`) — with optional
//! interrupt coalescing (deliver after `coalesce_n` completions or
//! `coalesce_us` µs). An idle device costs nothing: there is no device
//! thread; time is the model's.
//!
//! A failure of the model (an error from [`Device::submit`], or a panic,
//! which would be a bug) fails the command that met it and every later
//! command on the device with the same message: the lock is never left
//! poisoned for the other workers, and no one goes on with a model whose
//! state is not trusted.

use crate::config::{CompletionMode, Params};
use crate::device::{Device, Extent, Op};
use ssdready_core::spec::JobSpec;
use ssdready_core::{Completion, Ddir, IoReq};
use ssdready_io::buf::AlignedBuf;
use ssdready_io::clock::Clock;
use ssdready_io::{Engine, EngineError, Queued};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// One emulated SSD shared by the workers that use it.
pub struct SharedDevice {
    /// The model.
    pub device: Mutex<Device>,
    data: Mutex<Vec<u8>>,
    /// The clock all its times are in.
    pub clock: Clock,
    /// Its parameters.
    pub params: Params,
    capacity: u64,
    /// Why the model failed, once it has.
    failure: OnceLock<String>,
}

impl SharedDevice {
    /// A fresh device; its data is zero until written.
    pub fn new(params: Params, clock: Clock) -> Arc<SharedDevice> {
        let dev = Device::new(&params);
        let data = if params.nocopy {
            Vec::new()
        } else {
            vec![0u8; dev.capacity() as usize]
        };
        Arc::new(SharedDevice {
            capacity: dev.capacity(),
            device: Mutex::new(dev),
            data: Mutex::new(data),
            clock,
            params,
            failure: OnceLock::new(),
        })
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Submit a command to the model at `t` (module docs on failures).
    pub fn submit(&self, t: u64, op: Op, extents: &[Extent]) -> Result<u64, EngineError> {
        if let Some(why) = self.failure.get() {
            return Err(failed(why));
        }
        let mut dev = match self.device.lock() {
            Ok(d) => d,
            Err(_) => return Err(self.fail("its lock was poisoned by a panic".into())),
        };
        match catch_unwind(AssertUnwindSafe(|| dev.submit(t, op, extents))) {
            Ok(Ok(done)) => Ok(done),
            Ok(Err(e)) => Err(self.fail(e.to_string())),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(self.fail(format!(
                    "the model panicked ({what}): a bug, please report it"
                )))
            }
        }
    }

    fn fail(&self, why: String) -> EngineError {
        failed(self.failure.get_or_init(|| why))
    }

    fn data(&self) -> Result<MutexGuard<'_, Vec<u8>>, EngineError> {
        self.data
            .lock()
            .map_err(|_| self.fail("its data lock was poisoned by a panic".into()))
    }
}

fn failed(why: &str) -> EngineError {
    EngineError::Sys {
        what: "emulated device".into(),
        source: std::io::Error::other(why.to_string()),
    }
}

/// A worker's queue pair on a [`SharedDevice`].
pub struct EmuEngine {
    dev: Arc<SharedDevice>,
    bufs: Vec<AlignedBuf>,
    pending: BinaryHeap<Reverse<(u64, u32, i64)>>,
    mode: CompletionMode,
    coalesce_n: usize,
    coalesce_ns: u64,
}

impl EmuEngine {
    /// An engine for one worker of `spec`.
    pub fn new(dev: Arc<SharedDevice>, spec: &JobSpec, seed: u64) -> Self {
        let depth = spec.iodepth.max(1) as usize;
        let mut bufs: Vec<AlignedBuf> = (0..depth)
            .map(|_| AlignedBuf::new(spec.bs.max() as usize))
            .collect();
        for (i, b) in bufs.iter_mut().enumerate() {
            b.fill_random(seed.wrapping_add(i as u64));
        }
        EmuEngine {
            mode: dev.params.completion,
            coalesce_n: dev.params.coalesce_n as usize,
            coalesce_ns: dev.params.coalesce_us * 1000,
            dev,
            bufs,
            pending: BinaryHeap::new(),
        }
    }

    /// How many completions may be delivered now. Without coalescing, the
    /// due ones are popped straight off the heap (no scan); with it, the due
    /// ones are counted to decide whether the batch is complete.
    fn due(&self, now: u64) -> usize {
        if self.coalesce_n == 0 {
            return usize::MAX; // pop while due
        }
        let ready = self
            .pending
            .iter()
            .filter(|Reverse((t, _, _))| *t <= now)
            .count();
        if ready >= self.coalesce_n || self.pending.len() == ready {
            return ready;
        }
        let first = self
            .pending
            .peek()
            .map(|Reverse((t, _, _))| *t)
            .unwrap_or(now);
        if self.coalesce_ns > 0 && now >= first + self.coalesce_ns {
            ready
        } else {
            0
        }
    }

    fn wait_until(&self, t: u64) {
        let clock = self.dev.clock;
        loop {
            let now = clock.now();
            if now >= t {
                return;
            }
            let left = t - now;
            match self.mode {
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
}

impl Engine for EmuEngine {
    fn name(&self) -> &'static str {
        "emu"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let now = self.dev.clock.now();
        let (op, len) = match req.ddir {
            Ddir::Read => (Op::Read, req.len),
            Ddir::Write => (Op::Write, req.len),
            Ddir::Trim => (Op::Trim, req.len),
        };
        let extent = Extent {
            offset: req.offset,
            len: len as u64,
        };
        let done = self.dev.submit(now, op, &[extent])?;
        if !self.dev.params.nocopy && req.ddir != Ddir::Trim {
            let mut data = self.dev.data()?;
            let (o, l) = (req.offset as usize, len as usize);
            let (Some(buf), true) = (
                self.bufs.get_mut(req.slot as usize),
                o.checked_add(l).is_some_and(|end| end <= data.len()),
            ) else {
                return Err(failed(&format!(
                    "{l} bytes at offset {o} (slot {}) are outside its {} bytes",
                    req.slot,
                    data.len()
                )));
            };
            if req.ddir == Ddir::Write {
                data[o..o + l].copy_from_slice(&buf.as_slice()[..l]);
            } else {
                buf.as_mut_slice()[..l].copy_from_slice(&data[o..o + l]);
            }
        }
        self.pending.push(Reverse((done, req.slot, len as i64)));
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }

    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = 0;
        loop {
            let now = self.dev.clock.now();
            let mut n = self.due(now);
            while n > 0 {
                match self.pending.peek() {
                    Some(Reverse((t, _, _))) if *t <= now => {}
                    _ => break,
                }
                let Reverse((_, slot, res)) = self.pending.pop().expect("peeked");
                out.push(Completion { slot, result: res });
                got += 1;
                n -= 1;
            }
            if got >= min || self.pending.is_empty() {
                return Ok(());
            }
            let next = self
                .pending
                .peek()
                .map(|Reverse((t, _, _))| *t)
                .unwrap_or(now);
            let target = if self.coalesce_n > 0 && self.coalesce_ns > 0 {
                next.max(now + 1)
            } else {
                next
            };
            self.wait_until(target.max(now + 1));
        }
    }

    fn completion_mode(&self) -> &'static str {
        match self.mode {
            CompletionMode::Irq => "emu-irq",
            CompletionMode::Poll => "emu-poll",
            CompletionMode::Hybrid => "emu-hybrid",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_return_what_was_written() {
        let clock = Clock::calibrate();
        let dev = SharedDevice::new(Params::parse("null,size=1m").unwrap(), clock);
        let spec = JobSpec {
            iodepth: 2,
            ..JobSpec::default()
        };
        let mut e = EmuEngine::new(dev, &spec, 1);
        let written = e.bufs[0].as_slice()[..4096].to_vec();
        e.queue(IoReq {
            slot: 0,
            file: 0,
            ddir: Ddir::Write,
            offset: 8192,
            len: 4096,
        })
        .unwrap();
        let mut out = Vec::new();
        e.getevents(1, &mut out).unwrap();
        assert_eq!(
            out,
            vec![Completion {
                slot: 0,
                result: 4096
            }]
        );
        e.queue(IoReq {
            slot: 1,
            file: 0,
            ddir: Ddir::Read,
            offset: 8192,
            len: 4096,
        })
        .unwrap();
        out.clear();
        e.getevents(1, &mut out).unwrap();
        assert_eq!(&e.bufs[1].as_slice()[..4096], &written[..]);
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
        let dev = SharedDevice::new(p, Clock::calibrate());
        let mut a = EmuEngine::new(dev.clone(), &JobSpec::default(), 1);
        let mut b = EmuEngine::new(dev.clone(), &JobSpec::default(), 2);
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
        let dev = SharedDevice::new(
            Params::parse("dram-ssd,size=1m,completion=poll").unwrap(),
            clock,
        );
        let mut e = EmuEngine::new(dev, &JobSpec::default(), 1);
        let t0 = clock.now();
        e.queue(IoReq {
            slot: 0,
            file: 0,
            ddir: Ddir::Read,
            offset: 0,
            len: 4096,
        })
        .unwrap();
        let mut out = Vec::new();
        e.getevents(1, &mut out).unwrap();
        let lat = clock.now() - t0;
        assert!((7_600..20_000).contains(&lat), "{lat} ns");
    }
}
