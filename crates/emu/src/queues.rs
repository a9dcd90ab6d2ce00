//! The device's I/O queue pairs, as NVMe has them: each CPU's driver
//! submits to its own submission queue and reaps its own completion queue,
//! so CPUs do not share a lock or a cache line to issue I/O. A device
//! offers a limited number (`queues`, NVMe's Number of I/O Queues; a
//! SATA/AHCI drive has one); with more workers than queue pairs, workers
//! share them round-robin and take the queue pair's submission lock, as a
//! driver does when several CPUs map to one hardware queue.
//!
//! What the device counts per command (commands, extents, the latest
//! completion time handed out) each attached worker counts for itself, on
//! its own cache line and with plain stores (it is the only writer), so a
//! worker writes nothing another worker reads while I/O runs, and pays no
//! atomic read-modify-write per I/O. The device's totals add every
//! worker's counts up (those of workers gone too) when a report asks.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard};

/// A lock whose holders leave nothing half-done (a list push, an empty
/// critical section), so a poisoned one is used as it is.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One queue pair (module docs).
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct QueuePair {
    /// Workers attached to it.
    sharers: AtomicUsize,
    /// The submission lock, taken only while the queue pair is shared.
    sq: Mutex<()>,
    /// Its commands so far (their identifiers, [`QueuePair::next_command`]).
    commands: AtomicU64,
}

/// One worker's counts (module docs): written by that worker only.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Counts {
    commands: AtomicU64,
    extents: AtomicU64,
    /// The latest completion time handed out to it.
    latest: AtomicU64,
}

impl Counts {
    /// Count a command of `extents` extents completing at `done`. Only the
    /// worker that owns these counts calls it (a plain load and store: a
    /// reader sees the count before or after).
    pub fn count(&self, extents: u64, done: u64) {
        let bump = |a: &AtomicU64, by: u64| a.store(a.load(Relaxed).wrapping_add(by), Relaxed);
        bump(&self.commands, 1);
        bump(&self.extents, extents);
        if done > self.latest.load(Relaxed) {
            self.latest.store(done, Relaxed);
        }
    }
}

impl QueuePair {
    /// Hold the submission queue for one command: a guard when the queue
    /// pair is shared, nothing when its worker has it alone.
    pub fn enter(&self) -> Option<MutexGuard<'_, ()>> {
        (self.sharers.load(Relaxed) > 1).then(|| lock(&self.sq))
    }

    /// The next command's number on this queue pair (on its own cache
    /// line: workers on other queue pairs never touch it).
    pub fn next_command(&self) -> u64 {
        self.next_commands(1)
    }

    /// The first of the next `n` commands' numbers on this queue pair.
    pub fn next_commands(&self, n: u64) -> u64 {
        self.commands.fetch_add(n, Relaxed)
    }
}

/// A device's queue pairs.
#[derive(Debug)]
pub struct QueuePairs {
    pairs: Vec<QueuePair>,
    attached: AtomicUsize,
    /// Every attached worker's counts, kept when it detaches.
    counts: Mutex<Vec<Arc<Counts>>>,
}

/// What the queue pairs counted, added up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueTotals {
    pub commands: u64,
    pub extents: u64,
    /// The latest completion time handed out on any of them.
    pub latest: u64,
}

impl QueuePairs {
    /// `n` queue pairs (at least one).
    pub fn new(n: u32) -> QueuePairs {
        QueuePairs {
            pairs: (0..n.max(1)).map(|_| QueuePair::default()).collect(),
            attached: AtomicUsize::new(0),
            counts: Mutex::new(Vec::new()),
        }
    }

    /// Attach a worker: the index of its queue pair, round-robin, and its
    /// counts.
    pub fn attach(&self) -> (usize, Arc<Counts>) {
        let i = self.attached.fetch_add(1, Relaxed) % self.pairs.len();
        self.pairs[i].sharers.fetch_add(1, Relaxed);
        let counts = Arc::new(Counts::default());
        lock(&self.counts).push(counts.clone());
        (i, counts)
    }

    /// Detach a worker from queue pair `i`.
    pub fn detach(&self, i: usize) {
        if let Some(q) = self.pairs.get(i) {
            let _ = q
                .sharers
                .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
        }
    }

    /// Queue pair `i`.
    pub fn get(&self, i: usize) -> &QueuePair {
        &self.pairs[i % self.pairs.len()]
    }

    /// Workers on each queue pair now.
    pub fn sharers(&self) -> Vec<usize> {
        self.pairs.iter().map(|q| q.sharers.load(Relaxed)).collect()
    }

    /// Every worker's counts, added up.
    pub fn totals(&self) -> QueueTotals {
        lock(&self.counts)
            .iter()
            .fold(QueueTotals::default(), |t, c| QueueTotals {
                commands: t.commands + c.commands.load(Relaxed),
                extents: t.extents + c.extents.load(Relaxed),
                latest: t.latest.max(c.latest.load(Relaxed)),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_beyond_the_queue_count_share_queue_pairs_round_robin() {
        let q = QueuePairs::new(2);
        let got: Vec<usize> = (0..5).map(|_| q.attach().0).collect();
        assert_eq!(got, vec![0, 1, 0, 1, 0]);
        assert_eq!(q.sharers(), vec![3, 2]);
        assert!(q.get(0).enter().is_some(), "shared: the lock is taken");
        q.detach(1);
        assert!(q.get(1).enter().is_none(), "alone: no lock");
    }

    #[test]
    fn totals_add_every_workers_counts_gone_or_not() {
        let q = QueuePairs::new(3);
        let (a, b) = (q.attach(), q.attach());
        a.1.count(1, 100);
        b.1.count(4, 50);
        b.1.count(1, 70);
        q.detach(b.0);
        drop(b);
        let t = q.totals();
        assert_eq!((t.commands, t.extents, t.latest), (3, 6, 100));
    }
}
