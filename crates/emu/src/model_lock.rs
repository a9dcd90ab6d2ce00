//! The model's lock, one shard per queue pair (a "big-reader" lock): a
//! command that may hold the model shared (a flash read,
//! [`crate::device::shared_reads`]) takes only its own queue pair's
//! shard, on a cache line of its own, so workers on different queue pairs
//! write no common lock word per I/O — as an NVMe queue pair's doorbell is
//! its own. A command that changes the model (a write, a trim, anything
//! with injected faults) takes every shard, in order, and so holds the
//! model alone, as before.
//!
//! Each shard holds a handle on the one model ([`Arc`]); the writer, once
//! it holds every shard, takes the handles out so that its own is the only
//! one left and changes the model in place, then hands each shard its
//! handle back. No `unsafe` is needed, and the model's state is exactly
//! what one lock would give: readers see it whole, one writer at a time.
//!
//! A panic while the model is held alone poisons every shard, as it did
//! the single lock: later users are told, and the device fails for good
//! ([`crate::shared`]).

use crate::device::Device;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// At most this many shards: beyond it, queue pairs share them (a writer
/// takes every shard, so their number is what a write pays). Fewer where
/// the machine has fewer CPUs: more threads than CPUs never read at once.
const MAX_SHARDS: usize = 16;

/// One shard, on its own cache lines.
#[derive(Debug)]
#[repr(align(128))]
struct Shard(RwLock<Option<Arc<Device>>>);

/// The model behind one shard per queue pair (module docs).
#[derive(Debug)]
pub struct ModelLock {
    shards: Vec<Shard>,
}

/// The lock was poisoned by a panic while the model was held alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Poisoned;

/// The model held shared through one shard.
pub struct ModelRead<'a>(RwLockReadGuard<'a, Option<Arc<Device>>>);

/// The model held alone: every shard, and the model's only handle.
pub struct ModelWrite<'a> {
    shards: Vec<RwLockWriteGuard<'a, Option<Arc<Device>>>>,
    dev: Option<Arc<Device>>,
}

impl ModelLock {
    /// The model `dev` behind one shard per queue pair (`queues`, at most
    /// `MAX_SHARDS` and the machine's CPUs).
    pub fn new(dev: Device, queues: u32) -> ModelLock {
        let dev = Arc::new(dev);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = (queues as usize).min(cpus.max(2)).clamp(1, MAX_SHARDS);
        ModelLock {
            shards: (0..n)
                .map(|_| Shard(RwLock::new(Some(dev.clone()))))
                .collect(),
        }
    }

    /// The model held shared through shard 0 (reports, tests).
    pub fn read(&self) -> Result<ModelRead<'_>, Poisoned> {
        self.read_queue(0)
    }

    /// The model held shared by a command of queue pair `queue`: only that
    /// queue pair's shard is taken.
    pub fn read_queue(&self, queue: usize) -> Result<ModelRead<'_>, Poisoned> {
        let shard = &self.shards[queue % self.shards.len()];
        shard.0.read().map(ModelRead).map_err(|_| Poisoned)
    }

    /// Whether a panic while the model was held alone poisoned the lock.
    pub fn is_poisoned(&self) -> bool {
        self.shards.iter().any(|s| s.0.is_poisoned())
    }

    /// The model held alone: every shard, in order (module docs).
    pub fn write(&self) -> Result<ModelWrite<'_>, Poisoned> {
        let mut shards = Vec::with_capacity(self.shards.len());
        let mut poisoned = false;
        for s in &self.shards {
            shards.push(s.0.write().unwrap_or_else(|e| {
                poisoned = true;
                e.into_inner()
            }));
        }
        // The handles out of the shards: the last one taken is the only one.
        let mut dev = None;
        for g in shards.iter_mut() {
            dev = g.take().or(dev);
        }
        let guard = ModelWrite { shards, dev };
        if poisoned {
            return Err(Poisoned); // the guard puts the handles back
        }
        Ok(guard)
    }
}

impl Deref for ModelRead<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        // Every shard holds a handle whenever no writer holds it.
        self.0
            .as_deref()
            .expect("a shard holds the model between writes")
    }
}

impl Deref for ModelWrite<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        self.dev.as_deref().expect("the writer holds the model")
    }
}

impl DerefMut for ModelWrite<'_> {
    fn deref_mut(&mut self) -> &mut Device {
        // The only handle (every shard's was taken): in place, no copy.
        Arc::make_mut(self.dev.as_mut().expect("the writer holds the model"))
    }
}

impl Drop for ModelWrite<'_> {
    /// Each shard gets its handle back before its lock is let go.
    fn drop(&mut self) {
        if let Some(dev) = self.dev.take() {
            for g in self.shards.iter_mut() {
                **g = Some(dev.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Params;
    use crate::device::{Extent, Op};
    use std::sync::mpsc;
    use std::time::Duration;

    fn lock(queues: u32) -> ModelLock {
        let p = Params::parse("nvme-tlc,size=256m").unwrap();
        ModelLock::new(Device::new(&p), queues)
    }

    #[test]
    fn a_write_changes_the_one_model_every_shard_reads() {
        let m = lock(4);
        let e = Extent {
            offset: 0,
            len: 4096,
        };
        m.write().unwrap().submit(0, Op::Write, &[e]).unwrap();
        for q in 0..4 {
            assert_eq!(m.read_queue(q).unwrap().totals().commands, 1, "shard {q}");
        }
        let a = &**m.shards[0].0.read().unwrap().as_ref().unwrap() as *const Device;
        let b = &**m.shards.last().unwrap().0.read().unwrap().as_ref().unwrap() as *const Device;
        assert_eq!(a, b, "one model, not copies");
    }

    #[test]
    fn two_queue_pairs_read_through_shards_on_cache_lines_of_their_own() {
        let m = lock(64);
        assert!(m.shards.len() >= 2 && m.shards.len() <= MAX_SHARDS);
        let at = |q: usize| &m.shards[q % m.shards.len()] as *const Shard as usize;
        assert_ne!(at(0), at(1), "queues 0 and 1 take different shards");
        assert!(at(0).abs_diff(at(1)) >= 128, "and share no cache line");
        // Queue 1's reader holds no lock word queue 0's reader writes: a
        // writer that took shard 0 leaves queue 1 reading.
        let r0 = m.read_queue(0).unwrap();
        drop(r0);
        let w0 = m.shards[0].0.write().unwrap();
        assert!(m.shards[1].0.try_read().is_ok(), "shard 1 is free");
        drop(w0);
    }

    #[test]
    fn readers_on_two_queues_go_on_together_and_a_writer_waits_for_both() {
        let m = lock(2);
        let (r0, r1) = (m.read_queue(0).unwrap(), m.read_queue(1).unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            let m = &m;
            s.spawn(move || {
                let w = m.write().is_ok();
                tx.send(w).unwrap();
            });
            assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
            drop(r0);
            assert!(
                rx.recv_timeout(Duration::from_millis(100)).is_err(),
                "queue 1 still reads"
            );
            drop(r1);
            assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok(true));
        });
    }

    #[test]
    fn a_panic_holding_the_model_alone_poisons_every_shard() {
        let m = lock(3);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _w = m.write().unwrap();
            panic!("held alone");
        }));
        for q in 0..3 {
            assert!(m.read_queue(q).is_err(), "shard {q}");
        }
        assert!(m.write().is_err());
    }
}
